/*-------------------------------------------------------------------------
 *
 * pool.c
 *	  The shared memory of the pool of delivery workers, and the committing
 *	  backend's side of it: wake a serving worker or queue the database.
 *	  The launcher and the workers themselves are in worker.c.
 *
 * Who may call it: ddl_notify.c (_PG_init; at PREPARE and COMMIT of a
 * transaction that recorded events; the utility hook), subscriber.c (skip(),
 * wait_for_delivery()), deliver.c (CALL
 * deliver() left a retry; the notes of ended handler calls), worker.c
 * (through pool.h), and status.c, which reads it for SQL (delivery_status(),
 * delivery_state(), worker_pool()).  It calls nothing in worker.c.
 *
 * The pool (G14):
 * - Wake-up on commit: a transaction that recorded events, at COMMIT
 *	 (ddl_notify.c), looks at the slots under the lock.  If a worker is
 *	 starting or running in its database, it sets that slot's "wake" flag
 *	 and latch: a running worker starts a round within milliseconds.  Else
 *	 it queues the database (the shared request table, keyed by database
 *	 OID: "queued since") and sets the launcher's latch.  No catalog is read
 *	 and no other database is looked at.
 * - The exit race: a worker decides to exit, under the lock, only while its
 *	 wake flag is clear, and marks its slot EXITING in the same critical
 *	 section; a committer sets the flag, or queues the database if no slot
 *	 serves it (EXITING does not), in one critical section of the same lock.
 *	 So every commit either is seen by a round that starts after it or
 *	 queues the database for a new worker.  A worker clears its flag at the
 *	 start of each round, before the round's first snapshot; commits are
 *	 visible before their COMMIT callback runs.  The same rule covers a
 *	 worker that finds the extension missing (a probe racing CREATE
 *	 EXTENSION, whose commit queues the database too): it rechecks when its
 *	 flag was set meanwhile.
 * - Prepared transactions: COMMIT PREPARED runs none of the prepared
 *	 transaction's code (it runs in any session of the same database), so
 *	 no commit callback wakes anyone for it.  The pool keeps, in shared memory, the
 *	 xids of prepared transactions that may hold events, each with its
 *	 database: the preparing backend adds its own at PREPARE; a worker
 *	 starting in a database adds every transaction prepared there (after a
 *	 crash restart the list is empty while recovered prepared transactions
 *	 wait, and the launcher probes every database then).
 *	 DdlnCheckPreparedXacts drops the ones no longer in progress and queues
 *	 the database of each that committed, as a plain commit would.  It runs
 *	 at COMMIT of a COMMIT PREPARED or ROLLBACK PREPARED (the utility hook
 *	 notes them), and in the launcher each time it wakes and at least every
 *	 ddl_notify.poll_interval while the list is not empty: a lost wake-up
 *	 costs one poll interval, whatever the number of databases.  The list
 *	 holds twice max_prepared_transactions entries; when full, the ended
 *	 ones are dropped on the spot.
 * - CREATE DATABASE makes the launcher probe the databases it has not
 *	 probed yet; CREATE EXTENSION queues its own database at commit.  When
 *	 the request table is full (DDLN_MAX_DBS databases queued at once) a
 *	 committer sets "overflow" and the launcher probes every database again.
 * - Stepping aside (G11): before DROP DATABASE, ALTER DATABASE RENAME or
 *	 SET TABLESPACE, and CREATE DATABASE ... TEMPLATE, the utility hook
 *	 pauses the database in shared memory, asks its workers to exit and
 *	 waits for them, so the command finds no other session in that database.
 *	 The launcher starts no worker for a paused database.  The pause ends
 *	 with the pausing transaction (or backend); a worker asked to leave has
 *	 its database queued again, served once the pause is over if the
 *	 database still exists.  DROP EXTENSION ddl_notify and ALTER EXTENSION
 *	 ddl_notify UPDATE pause and empty their own database the same way, so
 *	 that a worker's locks on the extension's tables never make the
 *	 deadlock detector cancel them (test/t/042_drop_extension_busy.pl).
 * - Ended handler calls (G10, failure.c): a process that
 *	 ddl_notify.handler_timeout ended inside a handler call leaves a note of
 *	 it here on its way out (DdlnKeepEndedCall, from deliver.c's exit
 *	 callback) and queues its database; the next deliverer of that
 *	 subscriber takes it (DdlnTakeEndedCall) and records the failed attempt
 *	 before it calls the handler again.  A deliverer looks at "nended"
 *	 without the lock first, so the cost per batch is one read.  At most
 *	 DDLN_MAX_ENDED_CALLS notes: a further one replaces the oldest; a round
 *	 drops those of subscribers that are gone (DdlnForgetEndedCalls).
 * - Shared state (slots, pauses, the request table) is protected by the
 *	 tranche's one LWLock, never held across anything that can block.
 *	 Latches are set outside it.  Nothing here touches ddl_notify's tables.
 *
 * Floor: ground: called by ddl_notify.c, subscriber.c, deliver.c, worker.c
 * and status.c (the last two through pool.h); calls common.c only (the
 * settings).
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/transam.h"
#include "access/twophase.h"
#include "access/xact.h"
#include "catalog/pg_database.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "commands/defrem.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "pgstat.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "common.h"
#include "pool.h"

#define DDLN_PAUSE_MS			3600000	/* backstop of a pause */

DdlnShared *ddln_shared = NULL;
HTAB	   *ddln_dbs = NULL;	/* DdlnDbEntry by dboid */

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* what this transaction's utility commands ask for at its end */
static bool launcher_rescan_at_commit = false;
static bool wake_worker_at_commit = false;
static bool request_worker_at_commit = false;
static bool check_prepared_at_commit = false;
static Oid	paused_dbs[DDLN_MAX_PAUSES];
static int	npaused_dbs = 0;
static bool xact_callback_registered = false;

/*
 * Prepared transactions that may hold events, with their databases: twice
 * as many as can be prepared at once, since an ended one stays until the
 * launcher has looked (see DdlnCheckPreparedXacts).
 */
static DdlnPreparedXact *ddln_prepared = NULL;

static int
DdlnPreparedCapacity(void)
{
	return 2 * max_prepared_xacts + 16;
}

static Size
DdlnShmemSize(void)
{
	Size		size = add_size(offsetof(DdlnShared, slots),
								mul_size(sizeof(DdlnWorkerSlot), Max(ddln_max_workers, 1)));

	size = add_size(size, mul_size(sizeof(DdlnPreparedXact), DdlnPreparedCapacity()));
	return add_size(size, hash_estimate_size(DDLN_MAX_DBS, sizeof(DdlnDbEntry)));
}

static void
DdlnShmemRequest(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(DdlnShmemSize());
	RequestNamedLWLockTranche("ddl_notify", 1);
}

static void
DdlnShmemStartup(void)
{
	bool		found;
	HASHCTL		info;
	Size		fixed = add_size(offsetof(DdlnShared, slots),
								 mul_size(sizeof(DdlnWorkerSlot), Max(ddln_max_workers, 1)));

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	ddln_shared = ShmemInitStruct("ddl_notify", fixed, &found);
	if (!found)
	{
		memset(ddln_shared, 0, fixed);
		ddln_shared->lock = &(GetNamedLWLockTranche("ddl_notify"))->lock;
		ddln_shared->nslots = Max(ddln_max_workers, 1);
	}
	ddln_prepared = ShmemInitStruct("ddl_notify prepared",
									mul_size(sizeof(DdlnPreparedXact), DdlnPreparedCapacity()),
									&found);
	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(Oid);
	info.entrysize = sizeof(DdlnDbEntry);
	ddln_dbs = DdlnShmemInitHash("ddl_notify databases", DDLN_MAX_DBS, DDLN_MAX_DBS,
							 &info, HASH_ELEM | HASH_BLOBS);
	LWLockRelease(AddinShmemInitLock);
}

/* Called from _PG_init while preloading. */
void
DdlnWorkerShmemRequest(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = DdlnShmemRequest;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = DdlnShmemStartup;
}

/* Is automatic delivery available in this cluster at all? */
bool
DdlnAutomaticDelivery(void)
{
	return ddln_shared != NULL && ddln_max_workers > 0;
}

/*
 * The request-table entry of a database, created if need be; NULL (and the
 * launcher told to probe every database) if the table is full.  Caller holds
 * the lock exclusively.
 */
DdlnDbEntry *
DdlnDbEntryFor(Oid dboid)
{
	DdlnDbEntry *e;
	bool		found;

	e = hash_search(ddln_dbs, &dboid, HASH_FIND, NULL);
	if (e != NULL)
		return e;
	if (hash_get_num_entries(ddln_dbs) >= DDLN_MAX_DBS)
	{
		ddln_shared->overflow = true;
		return NULL;
	}
	e = hash_search(ddln_dbs, &dboid, HASH_ENTER_NULL, &found);
	if (e == NULL)
	{
		ddln_shared->overflow = true;
		return NULL;
	}
	if (!found)
	{
		memset(e, 0, sizeof(*e));
		e->dboid = dboid;
	}
	return e;
}

/*
 * Keep the note of a handler call the handler timeout ended, and queue its
 * database so that a worker comes to count it (a session's CALL deliver()
 * leaves no worker behind).  Called on the way out of the process that was
 * ended; false if there is no shared memory or no room.
 */
bool
DdlnKeepEndedCall(const DdlnEndedCall *call)
{
	bool		kept = false;
	Latch	   *launcher = NULL;

	if (ddln_shared == NULL)
		return false;
	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	if (ddln_shared->nended < DDLN_MAX_ENDED_CALLS)
	{
		ddln_shared->ended[ddln_shared->nended++] = *call;
		kept = true;
	}
	else
	{
		/* full: the oldest note goes (its database has not been served since) */
		int			oldest = 0;

		for (int i = 1; i < ddln_shared->nended; i++)
		{
			if (ddln_shared->ended[i].at < ddln_shared->ended[oldest].at)
				oldest = i;
		}
		ddln_shared->ended[oldest] = *call;
		kept = true;
	}
	/* not a worker that dies young: the launcher replaces it at once */
	for (int i = 0; kept && call->worker && i < ddln_shared->nslots; i++)
	{
		if (ddln_shared->slots[i].pid == MyProcPid)
			ddln_shared->slots[i].handler_ended = true;
	}
	/* a worker's own death queues its database already (worker.c) */
	if (!call->worker && ddln_max_workers > 0)
	{
		DdlnQueueLocked(call->dboid, GetCurrentTimestamp(), false);
		launcher = ddln_shared->launcher_latch;
	}
	LWLockRelease(ddln_shared->lock);
	if (launcher)
		SetLatch(launcher);
	return kept;
}

/*
 * Take (remove) the note of an ended handler call of this subscriber, if
 * any.  The unlocked read of nended makes the common case one load: a note
 * is kept before its process is gone, so before a worker replaces it.
 */
bool
DdlnTakeEndedCall(Oid dboid, int32 subscriber, DdlnEndedCall *call)
{
	bool		found = false;

	if (ddln_shared == NULL || ddln_shared->nended == 0)
		return false;
	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < ddln_shared->nended; i++)
	{
		DdlnEndedCall *c = &ddln_shared->ended[i];

		if (c->dboid == dboid && c->subscriber == subscriber)
		{
			*call = *c;
			ddln_shared->ended[i] = ddln_shared->ended[--ddln_shared->nended];
			found = true;
			break;
		}
	}
	LWLockRelease(ddln_shared->lock);
	return found;
}

/*
 * Forget the notes of ended handler calls of this database's subscribers
 * that are gone (unsubscribed): "subscribers" lists those that exist.
 */
void
DdlnForgetEndedCalls(Oid dboid, const int32 *subscribers, int n)
{
	if (ddln_shared == NULL || ddln_shared->nended == 0)
		return;
	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < ddln_shared->nended;)
	{
		DdlnEndedCall *c = &ddln_shared->ended[i];
		bool		exists = (c->dboid != dboid);

		for (int j = 0; j < n && !exists; j++)
			exists = (subscribers[j] == c->subscriber);
		if (exists)
			i++;
		else
			*c = ddln_shared->ended[--ddln_shared->nended];
	}
	LWLockRelease(ddln_shared->lock);
}

/* Queue a database for a worker (caller holds the lock exclusively). */
void
DdlnQueueLocked(Oid dboid, TimestampTz since, bool probe)
{
	DdlnDbEntry *e = DdlnDbEntryFor(dboid);

	if (e == NULL)
		return;
	if (e->queued_since == 0)
	{
		e->queued_since = since;
		e->probe = probe;
	}
	else
	{
		/* a commit makes a queued probe a real request */
		if (!probe)
			e->probe = false;
		if (since < e->queued_since)
			e->queued_since = since;
	}
}

/*
 * A commit in database "dboid" has work for a worker: wake the ones serving
 * it, or (if "request") queue it for the launcher when none does.  See the
 * header for why this and the worker's exit cannot miss each other.
 */
static void
DdlnWake(Oid dboid, bool request)
{
	Latch	   *latches[64];
	int			nlatches = 0;
	Latch	   *launcher = NULL;
	bool		served = false;
	bool		race = false;

	if (ddln_shared == NULL || ddln_max_workers == 0)
		return;
	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < ddln_shared->nslots; i++)
	{
		DdlnWorkerSlot *s = &ddln_shared->slots[i];

		if (!DdlnSlotServes(s, dboid))
			continue;
		served = true;
		s->wake = true;
		if (s->latch != NULL && nlatches < (int) lengthof(latches))
			latches[nlatches++] = s->latch;
	}
	if (!served && request)
	{
		for (int i = 0; i < ddln_shared->nslots; i++)
			if (ddln_shared->slots[i].dboid == dboid &&
				ddln_shared->slots[i].state == DDLN_W_EXITING)
				race = true;
		if (race)
			ddln_shared->exit_races++;
		DdlnQueueLocked(dboid, GetCurrentTimestamp(), false);
		launcher = ddln_shared->launcher_latch;
	}
	LWLockRelease(ddln_shared->lock);

	for (int i = 0; i < nlatches; i++)
		SetLatch(latches[i]);
	if (launcher)
		SetLatch(launcher);
	if (race)
		ereport(DEBUG1,
				(errmsg_internal("ddl_notify: a commit found the worker of database %u exiting; the database is queued for a new one",
								 dboid)));
}

/* Wake (or get) a worker for a database: at COMMIT of a DDL transaction. */
void
DdlnWakeDatabaseWorker(Oid dboid)
{
	DdlnWake(dboid, true);
}

/*
 * A deliverer that is not a pool worker (CALL ddl_notify.deliver()) left a
 * subscriber in backoff: make sure a worker comes back for it at "at",
 * unless one serves the database now (it knows).
 */
void
DdlnRequestRetry(Oid dboid, TimestampTz at)
{
	Latch	   *launcher = NULL;
	bool		served = false;
	DdlnDbEntry *e;

	if (ddln_shared == NULL || ddln_max_workers == 0 || at == 0)
		return;
	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < ddln_shared->nslots; i++)
		if (DdlnSlotServes(&ddln_shared->slots[i], dboid))
			served = true;
	if (!served && (e = DdlnDbEntryFor(dboid)) != NULL)
	{
		if (e->retry_at == 0 || at < e->retry_at)
			e->retry_at = at;
		launcher = ddln_shared->launcher_latch;
	}
	LWLockRelease(ddln_shared->lock);
	if (launcher)
		SetLatch(launcher);
}

/* Ask the launcher to look for databases it has not probed yet. */
void
DdlnNotifyLauncher(void)
{
	Latch	   *launcher;

	if (ddln_shared == NULL)
		return;
	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	ddln_shared->rescan = true;
	launcher = ddln_shared->launcher_latch;
	LWLockRelease(ddln_shared->lock);
	if (launcher)
		SetLatch(launcher);
}

/* ---------------------------------------------------------------------
 * Prepared transactions (the rule is in the header)
 * ---------------------------------------------------------------------
 */

/* Keep one xid (caller holds the lock exclusively); false if no room. */
static bool
DdlnKeepPreparedLocked(TransactionId xid, Oid dboid)
{
	for (int i = 0; i < ddln_shared->nprepared; i++)
	{
		if (ddln_prepared[i].xid == xid)
			return true;
	}
	if (ddln_shared->nprepared >= DdlnPreparedCapacity())
		return false;
	ddln_prepared[ddln_shared->nprepared].xid = xid;
	ddln_prepared[ddln_shared->nprepared].dboid = dboid;
	ddln_shared->nprepared++;
	return true;
}

static void
DdlnKeepPrepared(TransactionId xid, Oid dboid)
{
	for (int attempt = 0; attempt < 2; attempt++)
	{
		bool		kept;

		LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
		kept = DdlnKeepPreparedLocked(xid, dboid);
		LWLockRelease(ddln_shared->lock);
		if (kept)
			return;
		/* full of ended ones nobody has looked at yet: look now */
		(void) DdlnCheckPreparedXacts();
	}
	/* not reached: at most max_prepared_transactions are in progress, the list holds twice as many */
	ereport(WARNING,
			(errmsg("ddl_notify: no room to remember prepared transaction %u", xid),
			 errdetail("Its events are delivered at the next commit in its database or the next call of ddl_notify.wait_for_delivery() there.")));
}

/*
 * PRE_PREPARE of a transaction that recorded events (ddl_notify.c): keep its
 * xid, so that its COMMIT PREPARED, which runs none of its code, is noticed.
 */
void
DdlnKeepOwnPreparedXact(void)
{
	TransactionId xid = GetTopTransactionIdIfAny();

	if (ddln_shared == NULL || ddln_max_workers == 0 || !TransactionIdIsValid(xid))
		return;
	DdlnKeepPrepared(xid, MyDatabaseId);
}

/*
 * A worker starting in its database (worker.c), in a transaction: keep every
 * transaction prepared there.  After a crash restart the list is empty while
 * the recovered prepared transactions wait, and the launcher probes every
 * database then.  A prepared transaction without events costs a round.
 */
void
DdlnKeepDatabasePreparedXacts(void)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(MyDatabaseId)};

	if (max_prepared_xacts == 0)
		return;
	/* not reached: in PostgreSQL 15 SPI_connect() returns SPI_OK_CONNECT or raises an ERROR */
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	PushActiveSnapshot(GetTransactionSnapshot());
	if (SPI_execute_with_args("SELECT p.transaction FROM pg_catalog.pg_prepared_xact() p WHERE p.dbid = $1",
							  1, argtypes, values, NULL, true, 0) != SPI_OK_SELECT)
		/* not reached: a SELECT of a built-in function */
		elog(ERROR, "could not list the prepared transactions");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Datum		xid = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);

		if (!isnull)
			DdlnKeepPrepared(DatumGetTransactionId(xid), MyDatabaseId);
	}
	SPI_finish();
	PopActiveSnapshot();
}

/*
 * Look at the list: a transaction no longer in progress leaves it and, if it
 * committed, its database gets a worker as a plain commit's does (DdlnWake).
 * Returns how many are still listed.  Called by the launcher each time it
 * wakes, and at COMMIT of COMMIT PREPARED or ROLLBACK PREPARED in any
 * database.  The status of each transaction is read outside the lock: a
 * prepared transaction is in progress until its commit (or abort) is in the
 * commit log, so "not in progress" makes "did commit" final.
 */
int
DdlnCheckPreparedXacts(void)
{
	DdlnPreparedXact *seen;
	bool	   *ended;
	Oid		   *wake;
	int			n;
	int			nwake = 0;
	int			left;

	if (ddln_shared == NULL)
		return 0;
	LWLockAcquire(ddln_shared->lock, LW_SHARED);
	n = ddln_shared->nprepared;
	seen = palloc(sizeof(DdlnPreparedXact) * Max(n, 1));
	memcpy(seen, ddln_prepared, sizeof(DdlnPreparedXact) * n);
	LWLockRelease(ddln_shared->lock);
	if (n == 0)
	{
		pfree(seen);
		return 0;
	}

	ended = palloc0(sizeof(bool) * n);
	wake = palloc(sizeof(Oid) * n);
	for (int i = 0; i < n; i++)
	{
		if (TransactionIdIsInProgress(seen[i].xid))
			continue;
		ended[i] = true;
		if (TransactionIdDidCommit(seen[i].xid))
			wake[nwake++] = seen[i].dboid;
	}

	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < n; i++)
	{
		for (int j = 0; ended[i] && j < ddln_shared->nprepared; j++)
		{
			if (ddln_prepared[j].xid == seen[i].xid)
			{
				ddln_prepared[j] = ddln_prepared[--ddln_shared->nprepared];
				break;
			}
		}
	}
	left = ddln_shared->nprepared;
	LWLockRelease(ddln_shared->lock);

	for (int i = 0; i < nwake; i++)
		DdlnWake(wake[i], true);
	pfree(seen);
	pfree(ended);
	pfree(wake);
	return left;
}

bool
DdlnIsPaused(Oid dboid, TimestampTz now)
{
	for (int i = 0; i < DDLN_MAX_PAUSES; i++)
	{
		DdlnPause  *p = &ddln_shared->pauses[i];

		if (p->dboid == dboid && p->until > now && BackendPidGetProc(p->pid) != NULL)
			return true;
	}
	return false;
}

/*
 * Pause a database until this transaction ends and make its worker exit;
 * wait until it has.  Returns false if the worker did not exit in time.
 */
bool
DdlnStopDatabaseWorker(Oid dboid)
{
	TimestampTz now = GetCurrentTimestamp();
	TimestampTz give_up = TimestampTzPlusMilliseconds(now, DDLN_STOP_WAIT_MS);
	int			victim = -1;

	if (ddln_shared == NULL || !OidIsValid(dboid))
		return true;

	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < DDLN_MAX_PAUSES && victim < 0; i++)
	{
		DdlnPause  *p = &ddln_shared->pauses[i];

		if (!OidIsValid(p->dboid) || p->until <= now || BackendPidGetProc(p->pid) == NULL ||
			(p->dboid == dboid && p->pid == MyProcPid))
			victim = i;
	}
	if (victim < 0)
		victim = 0;				/* all taken by live backends: the oldest goes */
	ddln_shared->pauses[victim].dboid = dboid;
	ddln_shared->pauses[victim].pid = MyProcPid;
	ddln_shared->pauses[victim].until = TimestampTzPlusMilliseconds(now, DDLN_PAUSE_MS);
	LWLockRelease(ddln_shared->lock);
	if (npaused_dbs < DDLN_MAX_PAUSES)
		paused_dbs[npaused_dbs++] = dboid;

	for (;;)
	{
		pid_t		pid = 0;

		LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
		for (int i = 0; i < ddln_shared->nslots; i++)
		{
			DdlnWorkerSlot *s = &ddln_shared->slots[i];

			if (s->state != DDLN_W_FREE && s->dboid == dboid && s->pid != 0)
			{
				s->stop = true;
				pid = s->pid;
			}
		}
		LWLockRelease(ddln_shared->lock);

		if (pid == 0)
			return true;
		kill(pid, SIGTERM);
		if (GetCurrentTimestamp() >= give_up)
			return false;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 10L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/* At the end of the transaction: lift this backend's pauses. */
static void
DdlnLiftPauses(void)
{
	Latch	   *launcher;

	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < DDLN_MAX_PAUSES; i++)
	{
		if (ddln_shared->pauses[i].pid == MyProcPid)
			memset(&ddln_shared->pauses[i], 0, sizeof(DdlnPause));
	}
	launcher = ddln_shared->launcher_latch;
	LWLockRelease(ddln_shared->lock);
	npaused_dbs = 0;
	if (launcher)
		SetLatch(launcher);
}

static void
DdlnWorkerXactCallback(XactEvent event, void *arg)
{
	bool		ending = (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
						  event == XACT_EVENT_PARALLEL_ABORT || event == XACT_EVENT_PREPARE);

	if (event == XACT_EVENT_COMMIT && launcher_rescan_at_commit)
		DdlnNotifyLauncher();
	if (event == XACT_EVENT_COMMIT && (wake_worker_at_commit || request_worker_at_commit))
		DdlnWake(MyDatabaseId, request_worker_at_commit);
	/* the prepared transaction's commit is in the log: look now, not at a poll */
	if (event == XACT_EVENT_COMMIT && check_prepared_at_commit)
		(void) DdlnCheckPreparedXacts();
	if (ending && npaused_dbs > 0)
		DdlnLiftPauses();
	if (ending)
	{
		launcher_rescan_at_commit = false;
		wake_worker_at_commit = false;
		request_worker_at_commit = false;
		check_prepared_at_commit = false;
	}
}

static void
DdlnRegisterWorkerCallback(void)
{
	if (!xact_callback_registered)
	{
		RegisterXactCallback(DdlnWorkerXactCallback, NULL);
		xact_callback_registered = true;
	}
}

static void
DdlnRescanAtCommit(void)
{
	DdlnRegisterWorkerCallback();
	launcher_rescan_at_commit = true;
}

/*
 * At commit, get this database a worker (wake it, or queue the database):
 * after CREATE EXTENSION, and after skip(), which may unblock a subscriber
 * whose retry is far away.
 */
void
DdlnWakeWorkerAtCommit(void)
{
	if (ddln_shared == NULL)
		return;
	DdlnRegisterWorkerCallback();
	request_worker_at_commit = true;
}

/*
 * DROP EXTENSION ddl_notify and ALTER EXTENSION ddl_notify UPDATE take
 * AccessExclusiveLock on the extension's tables, in their own order, while
 * a worker of this database may hold locks on the same tables in another:
 * the deadlock detector could then cancel the user's command.  The command
 * wins instead: this database's workers are paused until this transaction
 * ends and stopped (their delivery rolls back: G3), as for DROP DATABASE.
 * Not from a worker itself (a handler running the command): it would stop
 * itself.
 */
static void
DdlnStepAsideForExtension(void)
{
	if (!DdlnAmBackgroundWorker())
		(void) DdlnStopDatabaseWorker(MyDatabaseId);
}

/*
 * Before a utility command runs: step aside for commands that need a
 * database without other sessions (G11): DROP DATABASE, ALTER DATABASE
 * RENAME and SET TABLESPACE, CREATE DATABASE from a template; the pause ends
 * with this transaction.  And note the commands after which the launcher
 * should look again, or the worker should wake.
 */
void
DdlnBeforeUtility(Node *parsetree)
{
	const char *dbname = NULL;

	if (ddln_shared == NULL || parsetree == NULL)
		return;

	switch (nodeTag(parsetree))
	{
		case T_DropdbStmt:
			dbname = ((DropdbStmt *) parsetree)->dbname;
			break;
		case T_RenameStmt:
			if (((RenameStmt *) parsetree)->renameType == OBJECT_DATABASE)
				dbname = ((RenameStmt *) parsetree)->subname;
			break;
		case T_AlterDatabaseStmt:
			{
				/* only SET TABLESPACE needs the database to itself */
				ListCell   *lc;

				foreach(lc, ((AlterDatabaseStmt *) parsetree)->options)
				{
					if (strcmp(((DefElem *) lfirst(lc))->defname, "tablespace") == 0)
						dbname = ((AlterDatabaseStmt *) parsetree)->dbname;
				}
				break;
			}
		case T_CreatedbStmt:
			{
				ListCell   *lc;

				foreach(lc, ((CreatedbStmt *) parsetree)->options)
				{
					DefElem    *opt = (DefElem *) lfirst(lc);

					if (strcmp(opt->defname, "template") == 0 && opt->arg)
						dbname = defGetString(opt);
				}
				if (dbname == NULL)
					dbname = "template1";
				DdlnRescanAtCommit();
				break;
			}
		case T_TransactionStmt:
			if (((TransactionStmt *) parsetree)->kind == TRANS_STMT_COMMIT_PREPARED ||
				((TransactionStmt *) parsetree)->kind == TRANS_STMT_ROLLBACK_PREPARED)
			{
				DdlnRegisterWorkerCallback();
				check_prepared_at_commit = true;
			}
			break;
		case T_CreateExtensionStmt:
			if (strcmp(((CreateExtensionStmt *) parsetree)->extname, DDLN_EXTENSION_NAME) == 0)
				DdlnWakeWorkerAtCommit();
			break;
		case T_DropStmt:
			if (((DropStmt *) parsetree)->removeType == OBJECT_EXTENSION)
			{
				ListCell   *lc;

				/* the worker finds the extension gone at once, not at its next poll */
				foreach(lc, ((DropStmt *) parsetree)->objects)
				{
					if (IsA(lfirst(lc), String) &&
						strcmp(strVal(lfirst(lc)), DDLN_EXTENSION_NAME) == 0)
					{
						DdlnRegisterWorkerCallback();
						wake_worker_at_commit = true;
						DdlnStepAsideForExtension();
					}
				}
			}
			break;
		case T_AlterExtensionStmt:
			if (strcmp(((AlterExtensionStmt *) parsetree)->extname, DDLN_EXTENSION_NAME) == 0)
				DdlnStepAsideForExtension();
			break;
		default:
			break;
	}

	if (dbname != NULL)
	{
		Oid			dboid = get_database_oid(dbname, true);

		if (OidIsValid(dboid) && dboid != MyDatabaseId)
			(void) DdlnStopDatabaseWorker(dboid);
	}
}
