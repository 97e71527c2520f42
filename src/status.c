/*-------------------------------------------------------------------------
 *
 * status.c
 *	  How delivery is served, read from the pool's shared memory for SQL:
 *	  delivery_status() (words, for people), delivery_state() (columns, for
 *	  scripts) and worker_pool() (every worker and queued database of the
 *	  cluster).
 *
 * Floor: API (SQL-callable).  Reads pool.c's shared memory through pool.h,
 * under the pool's lock in shared mode, copying what it shows before it
 * builds any result; takes no lock on a table and calls nothing else of
 * ddl_notify.  Nothing calls it but fmgr.
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/lwlock.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "common.h"
#include "pool.h"

PG_FUNCTION_INFO_V1(ddl_notify_delivery_status);
PG_FUNCTION_INFO_V1(ddl_notify_delivery_state);
PG_FUNCTION_INFO_V1(ddl_notify_worker_pool);

/* At most this many worker pids in delivery_state() (max_workers_per_database is higher only by hand). */
#define DDLN_MAX_WORKERS_PER_DB_SHOWN	64

/* How this database is served now, as delivery_state() and delivery_status() show it. */
typedef enum DdlnDeliveryMode
{
	DDLN_DM_NOT_PRELOADED,		/* manual: no shared_preload_libraries */
	DDLN_DM_NO_WORKERS,			/* manual: ddl_notify.max_workers = 0 */
	DDLN_DM_DELIVERING,			/* one worker or more serves it */
	DDLN_DM_STARTING,			/* a worker is starting for it */
	DDLN_DM_WAITING_FOR_SLOT,	/* queued while every worker is busy */
	DDLN_DM_QUEUED,				/* queued for a worker */
	DDLN_DM_RETRY,				/* idle; a worker comes back for a retry */
	DDLN_DM_IDLE				/* idle; the next commit starts a worker */
} DdlnDeliveryMode;

static const char *const ddln_delivery_modes[] = {
	"manual", "manual", "delivering", "starting", "waiting for a slot",
	"queued", "idle, retry due", "idle"
};

typedef struct DdlnDeliveryState
{
	DdlnDeliveryMode mode;
	int			npids;
	int			pids[DDLN_MAX_WORKERS_PER_DB_SHOWN];
	TimestampTz queued_since;	/* 0 if not queued */
	TimestampTz retry_at;		/* 0 if none */
} DdlnDeliveryState;

/* Read this database's delivery state from the pool's shared memory. */
static void
DdlnReadDeliveryState(DdlnDeliveryState *st)
{
	bool		starting = false;
	bool		exhausted;
	DdlnDbEntry *e;

	memset(st, 0, sizeof(*st));
	if (ddln_shared == NULL)
	{
		st->mode = DDLN_DM_NOT_PRELOADED;
		return;
	}
	if (ddln_max_workers == 0)
	{
		st->mode = DDLN_DM_NO_WORKERS;
		return;
	}
	LWLockAcquire(ddln_shared->lock, LW_SHARED);
	for (int i = 0; i < ddln_shared->nslots; i++)
	{
		DdlnWorkerSlot *s = &ddln_shared->slots[i];

		if (s->dboid != MyDatabaseId || s->stop)
			continue;
		if (s->state == DDLN_W_RUNNING && st->npids < DDLN_MAX_WORKERS_PER_DB_SHOWN)
			st->pids[st->npids++] = (int) s->pid;
		else if (s->state == DDLN_W_STARTING)
			starting = true;
	}
	e = hash_search(ddln_dbs, &MyDatabaseId, HASH_FIND, NULL);
	if (e != NULL)
	{
		st->queued_since = e->queued_since;
		st->retry_at = e->retry_at;
	}
	exhausted = ddln_shared->nwaiting > 0;
	LWLockRelease(ddln_shared->lock);

	st->mode = st->npids > 0 ? DDLN_DM_DELIVERING :
		starting ? DDLN_DM_STARTING :
		(st->queued_since != 0 && exhausted) ? DDLN_DM_WAITING_FOR_SLOT :
		st->queued_since != 0 ? DDLN_DM_QUEUED :
		st->retry_at != 0 ? DDLN_DM_RETRY : DDLN_DM_IDLE;
}

/* The state in words, for people (delivery_status() and the detail column). */
static char *
DdlnDeliveryStateText(const DdlnDeliveryState *st)
{
	StringInfoData pids;

	switch (st->mode)
	{
		case DDLN_DM_NOT_PRELOADED:
			return "manual: ddl_notify is not in shared_preload_libraries; run CALL ddl_notify.deliver()";
		case DDLN_DM_NO_WORKERS:
			return "manual: ddl_notify.max_workers is 0; run CALL ddl_notify.deliver()";
		case DDLN_DM_DELIVERING:
			initStringInfo(&pids);
			for (int i = 0; i < st->npids; i++)
				appendStringInfo(&pids, "%s%d", i > 0 ? ", " : "", st->pids[i]);
			return psprintf("automatic: worker%s pid %s", st->npids > 1 ? "s" : "", pids.data);
		case DDLN_DM_STARTING:
			return "automatic: worker starting";
		case DDLN_DM_WAITING_FOR_SLOT:
			return psprintf("waiting for a worker slot since %s: all %d workers are busy; raise ddl_notify.max_workers or max_worker_processes",
							timestamptz_to_str(st->queued_since), ddln_max_workers);
		case DDLN_DM_QUEUED:
			return psprintf("automatic: queued for a worker since %s",
							timestamptz_to_str(st->queued_since));
		case DDLN_DM_RETRY:
			return psprintf("automatic: idle, no worker; one comes back at %s for a retry",
							timestamptz_to_str(st->retry_at));
		case DDLN_DM_IDLE:
			break;
	}
	return "automatic: idle, no worker; the next commit starts one";
}

/*
 * delivery_status(): how events reach subscribers in this database, in
 * words (for people; scripts read delivery_state()).
 */
Datum
ddl_notify_delivery_status(PG_FUNCTION_ARGS)
{
	DdlnDeliveryState st;

	DdlnReadDeliveryState(&st);
	PG_RETURN_TEXT_P(cstring_to_text(DdlnDeliveryStateText(&st)));
}

/*
 * delivery_state(): the same as columns: mode (manual, delivering,
 * starting, waiting for a slot, queued, idle, retry due), automatic (is
 * there a worker pool), worker_pids, queued_since, next_retry_at, and the
 * words of delivery_status() as detail.
 */
Datum
ddl_notify_delivery_state(PG_FUNCTION_ARGS)
{
	DdlnDeliveryState st;
	TupleDesc	desc;
	Datum		values[6];
	bool		nulls[6] = {false, false, false, false, false, false};
	Datum	   *pids;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		/* not reached: the SQL declaration has OUT parameters */
		elog(ERROR, "delivery_state() must return a row");
	DdlnReadDeliveryState(&st);
	pids = palloc(sizeof(Datum) * Max(st.npids, 1));
	for (int i = 0; i < st.npids; i++)
		pids[i] = Int32GetDatum(st.pids[i]);
	values[0] = CStringGetTextDatum(ddln_delivery_modes[st.mode]);
	values[1] = BoolGetDatum(st.mode != DDLN_DM_NOT_PRELOADED && st.mode != DDLN_DM_NO_WORKERS);
	values[2] = PointerGetDatum(construct_array(pids, st.npids, INT4OID, sizeof(int32), true, TYPALIGN_INT));
	values[3] = TimestampTzGetDatum(st.queued_since);
	nulls[3] = (st.queued_since == 0);
	values[4] = TimestampTzGetDatum(st.retry_at);
	nulls[4] = (st.retry_at == 0);
	values[5] = CStringGetTextDatum(DdlnDeliveryStateText(&st));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}

/* One row of worker_pool(), copied out of shared memory. */
typedef struct DdlnPoolRow
{
	Oid			dboid;
	int			pid;
	const char *state;
	TimestampTz since;
	int64		delivered;
	TimestampTz round_since;
} DdlnPoolRow;

/*
 * Copy the pool's slots, then its queued databases, out of shared memory
 * under the lock (nothing that can block while it is held); the number of
 * rows goes to *nrows_out.
 */
static DdlnPoolRow *
DdlnReadPoolRows(int *nrows_out)
{
	DdlnPoolRow *rows;
	int			nrows = 0;
	int			maxrows;

	LWLockAcquire(ddln_shared->lock, LW_SHARED);
	maxrows = ddln_shared->nslots + (int) hash_get_num_entries(ddln_dbs) + 1;
	rows = palloc0(sizeof(DdlnPoolRow) * maxrows);
	for (int i = 0; i < ddln_shared->nslots; i++)
	{
		DdlnWorkerSlot *s = &ddln_shared->slots[i];
		DdlnPoolRow *r = &rows[nrows];

		if (s->state == DDLN_W_FREE || s->state == DDLN_W_NO_EXTENSION)
			continue;
		r->dboid = s->dboid;
		r->pid = (int) s->pid;
		r->state = s->stop || s->state == DDLN_W_EXITING ? "exiting" :
			s->state == DDLN_W_STARTING ? "starting" :
			s->sweeping ? "sweeping" :
			s->round_since != 0 ? "delivering" : "idle";
		r->since = s->since;
		r->delivered = s->delivered;
		r->round_since = s->round_since;
		nrows++;
	}
	{
		HASH_SEQ_STATUS seq;
		DdlnDbEntry *e;

		hash_seq_init(&seq, ddln_dbs);
		while ((e = hash_seq_search(&seq)) != NULL)
		{
			DdlnPoolRow *r = &rows[nrows];

			if (nrows >= maxrows - 1)
			{
				hash_seq_term(&seq);
				break;
			}
			if (e->queued_since != 0)
			{
				r->state = e->probe ? "queued (probe)" : "queued";
				r->since = e->queued_since;
			}
			else if (e->retry_at != 0)
			{
				r->state = "retry";
				r->since = e->retry_at;
			}
			else
				continue;
			r->dboid = e->dboid;
			nrows++;
		}
	}
	LWLockRelease(ddln_shared->lock);
	*nrows_out = nrows;
	return rows;
}

/*
 * worker_pool(): the pool's slots and the queued databases, cluster-wide:
 * one row per worker (state starting, delivering, idle or exiting) and one
 * per database waiting for one (queued) or for a retry time (retry).
 */
Datum
ddl_notify_worker_pool(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	DdlnPoolRow *rows;
	int			nrows;

	InitMaterializedSRF(fcinfo, 0);
	if (ddln_shared == NULL)
		PG_RETURN_VOID();
	rows = DdlnReadPoolRows(&nrows);
	for (int i = 0; i < nrows; i++)
	{
		Datum		values[7];
		bool		nulls[7] = {0};
		char	   *name = get_database_name(rows[i].dboid);

		values[0] = ObjectIdGetDatum(rows[i].dboid);
		if (name)
			values[1] = DirectFunctionCall1(namein, CStringGetDatum(name));
		else
			nulls[1] = true;
		values[2] = Int32GetDatum(rows[i].pid);
		nulls[2] = (rows[i].pid == 0);
		values[3] = CStringGetTextDatum(rows[i].state);
		values[4] = TimestampTzGetDatum(rows[i].since);
		nulls[4] = (rows[i].since == 0);
		values[5] = Int64GetDatum(rows[i].delivered);
		nulls[5] = (rows[i].pid == 0 && strncmp(rows[i].state, "queued", 6) == 0) ||
			strcmp(rows[i].state, "retry") == 0;
		values[6] = TimestampTzGetDatum(rows[i].round_since);
		nulls[6] = (rows[i].round_since == 0);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_VOID();
}
