/*-------------------------------------------------------------------------
 *
 * lifecycle.c
 *	  Subscribers through pg_dump and pg_restore (docs/guarantees.md,
 *	  G13): the trigger that makes a restored row a subscriber of this
 *	  database.
 *
 * Restored subscribers.  pg_dump keeps the rows of ddl_notify.subscriber
 * and dead_letter (they are registered with pg_extension_config_dump);
 * their OIDs, slots and subscription points belong to the old database.
 * Every INSERT into ddl_notify.subscriber that subscribe() did not make
 * (ddln_api_inserting, subscriber.c) is such a row: subscriber_restore()
 * resolves its names (binding.c), gives it a free slot, resets its delivery
 * state and a new subscription point, exactly as subscribe() does (the
 * point is fixed at PRE_COMMIT, DdlnFixSubscriptionPoint).  A restored
 * subscriber therefore receives the DDL transactions that commit after its
 * row was restored, and nothing from before.  pg_upgrade and ALTER
 * EXTENSION UPDATE need nothing here: binding.c resolves the names again.
 *
 * Rules: a dump is data, not anybody's choice.  The restoring role must be
 * a superuser or have the privileges of the row's owner; the handler its
 * name finds is bound under trust.c's rules for a binding nobody chose,
 * else the row comes back unconfirmed.  The tables are written as the
 * extension owner, under the API lock, in the restoring transaction.  The
 * floor: an entry (a trigger), beside the API; calls subscriber.c (the API
 * lock, the subscription point), binding.c, trust.c and common.c.
 *
 * Floor: API: called by the restore trigger through fmgr; calls subscriber.c
 * (same floor, one way), binding.c, trust.c and common.c.
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/xid8.h"

#include "common.h"

PG_FUNCTION_INFO_V1(ddl_notify_subscriber_restore);

/*
 * The slot a restored subscriber gets: the one it had if it is free in this
 * database, else the lowest free one.  The caller holds the API lock; the
 * statement sees the rows inserted before this one by the same COPY.
 */
static int32
DdlnRestoreSlot(int32 want)
{
	bool		taken[DDLN_MAX_SUBSCRIBERS] = {false};
	DdlnSafeState safe;
	int			rc;

	DdlnBeginSafe(&safe);
	rc = SPI_execute("SELECT slot FROM ddl_notify.subscriber", false, 0);
	DdlnEndSafe(&safe);
	/* not reached: a SELECT that runs returns SPI_OK_SELECT; its failures are ERRORs */
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not read the subscribers' slots: %s", SPI_result_code_string(rc));
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		int32		s = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[i],
													SPI_tuptable->tupdesc, 1, &isnull));

		if (!isnull && s >= 0 && s < DDLN_MAX_SUBSCRIBERS)
			taken[s] = true;
	}
	if (want >= 0 && want < DDLN_MAX_SUBSCRIBERS && !taken[want])
		return want;
	for (int32 s = 0; s < DDLN_MAX_SUBSCRIBERS; s++)
		if (!taken[s])
			return s;
	ereport(ERROR,
			(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
			 errmsg("too many subscribers"),
			 errdetail("ddl_notify supports at most %d subscribers per database.",
					   DDLN_MAX_SUBSCRIBERS)));
	return -1;					/* keep the compiler quiet */
}

/* The attribute number of a column of ddl_notify.subscriber. */
static int
DdlnColumn(TupleDesc desc, const char *name)
{
	int			attnum = SPI_fnumber(desc, name);

	/* not reached: the trigger runs on ddl_notify.subscriber, whose columns the install script makes */
	if (attnum <= 0)
		elog(ERROR, "column \"%s\" of ddl_notify.subscriber does not exist", name);
	return attnum;
}

/*
 * Bind a restored row's handler by its name, with trust.c's rules: a
 * function that passes them is bound; one that would pass if its owner had
 * chosen it (the trust rule alone refuses it) is bound but the row waits
 * for its owner's or a superuser's confirmation; any other refusal leaves it
 * unbound and waiting.  *error and *sqlstate say why it waits.
 */
static void
DdlnBindRestored(const char *handler, Oid owner, Oid *handler_oid, bool *bound,
				 bool *confirmed, char **error, const char **sqlstate)
{
	DdlnVerdict verdict;

	*handler_oid = DdlnHandlerByName(handler);
	*bound = OidIsValid(*handler_oid);
	*confirmed = true;
	if (!*bound)
	{
		*error = psprintf("handler function %s of restored subscriber does not exist", handler);
		*sqlstate = "42883";
		return;
	}
	if (!DdlnJudgeHandler(*handler_oid, owner, DDLN_BIND_CHOSEN, &verdict))
	{
		*handler_oid = InvalidOid;
		*bound = false;
	}
	else if (DdlnJudgeHandler(*handler_oid, owner, DDLN_BIND_BY_NAME, &verdict))
		return;
	*confirmed = false;
	*error = psprintf("restored subscriber waits for its owner or a superuser to confirm it: %s",
					  DdlnVerdictText(&verdict));
	*sqlstate = pstrdup(unpack_sql_state(verdict.sqlerrcode));
}

/* What the restore trigger decided for a restored row: the columns it sets. */
typedef struct DdlnRestored
{
	int32		slot;			/* the row's slot in this database */
	int32		id;				/* its id, kept unless in use here */
	Oid			handler_oid;	/* the handler its name found, or InvalidOid */
	Oid			owner;			/* the owner its name found, or InvalidOid */
	bool		bound;			/* the handler is bound (resolved_in set) */
	bool		confirmed;		/* delivered to without a confirmation */
	char	   *error;			/* last_error, or NULL */
	const char *sqlstate;		/* last_error_sqlstate, or NULL */
} DdlnRestored;

/*
 * Read a restored row's handler and owner names (both required) and its
 * slot in the old database (-1 if none), and refuse the restore unless the
 * restoring role may act for the owner (a superuser only when the owner
 * does not exist here).  Returns the owner's OID, or InvalidOid.
 */
static Oid
DdlnRestoreReadRow(HeapTuple tup, TupleDesc desc, char **handler, char **owner_name,
				   int32 *slot)
{
	bool		isnull;
	Datum		d;
	Oid			owner;

	d = heap_getattr(tup, DdlnColumn(desc, "handler"), desc, &isnull);
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NOT_NULL_VIOLATION),
				 errmsg("a restored subscriber must name its handler")));
	*handler = TextDatumGetCString(d);
	d = heap_getattr(tup, DdlnColumn(desc, "owner_name"), desc, &isnull);
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NOT_NULL_VIOLATION),
				 errmsg("a restored subscriber must name its owner")));
	*owner_name = pstrdup(NameStr(*DatumGetName(d)));
	d = heap_getattr(tup, DdlnColumn(desc, "slot"), desc, &isnull);
	*slot = isnull ? -1 : DatumGetInt32(d);

	/* a dump is data: the restoring role must be one that may act for the owner */
	owner = get_role_oid(*owner_name, true);
	if (OidIsValid(owner) ? !DdlnMayActFor(GetUserId(), owner) : !superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to restore a subscriber of role \"%s\"", *owner_name),
				 errdetail("Only a superuser, or a role with the privileges of a subscriber's owner, may restore it."),
				 errhint("Restore the subscribers as a superuser, or leave ddl_notify's data out (--exclude-table-data).")));
	return owner;
}

/*
 * Fill cols, values and nulls (16 entries) with the columns the restore
 * trigger sets in a restored row, from "r": its slot, OIDs and id here, no
 * delivery state of the old database, a provisional subscription point of
 * this transaction, the error that keeps it waiting if any, and
 * restored_at.  Returns the number of columns.
 */
static int
DdlnRestoreColumns(TupleDesc desc, const DdlnRestored *r, int *cols, Datum *values,
				   bool *nulls)
{
	int			n = 0;

#define DDLN_SET(name, value, isnull_) \
	(cols[n] = DdlnColumn(desc, (name)), values[n] = (value), nulls[n] = (isnull_), n++)
	DDLN_SET("slot", Int32GetDatum(r->slot), false);
	DDLN_SET("handler_oid", ObjectIdGetDatum(r->handler_oid), false);
	DDLN_SET("owner", ObjectIdGetDatum(r->owner), false);
	DDLN_SET("id", Int32GetDatum(r->id), false);
	DDLN_SET("resolved_in", Int64GetDatum((int64) GetSystemIdentifier()),
			 !(r->bound && OidIsValid(r->owner)));
	DDLN_SET("confirmed", BoolGetDatum(r->confirmed), false);
	/* provisional, as subscribe()'s; fixed at PRE_COMMIT */
	DDLN_SET("start_snapshot",
			 DirectFunctionCall1(pg_snapshot_in,
								 CStringGetDatum(DdlnSnapshotText(GetLatestSnapshot()))),
			 false);
	DDLN_SET("start_xid", FullTransactionIdGetDatum(GetTopFullTransactionId()), false);
	DDLN_SET("attempts", Int32GetDatum(0), false);
	DDLN_SET("failing_event", (Datum) 0, true);
	DDLN_SET("next_retry_at", (Datum) 0, true);
	DDLN_SET("last_error", r->error ? CStringGetTextDatum(r->error) : (Datum) 0, r->error == NULL);
	DDLN_SET("last_error_sqlstate", r->sqlstate ? CStringGetTextDatum(r->sqlstate) : (Datum) 0,
			 r->sqlstate == NULL);
	DDLN_SET("last_error_at", TimestampTzGetDatum(GetCurrentTransactionStartTimestamp()),
			 r->error == NULL);
	DDLN_SET("restored_at", TimestampTzGetDatum(GetCurrentTransactionStartTimestamp()), false);
#undef DDLN_SET
	return n;
}

/*
 * BEFORE INSERT trigger on ddl_notify.subscriber: a row that subscribe() did
 * not insert comes from a dump (COPY or INSERT of pg_restore or psql).  It is
 * made a subscriber of this database, as subscribe() would make it: OIDs
 * from its names, a free slot, no delivery state of the old database, and
 * a subscription point of this transaction, fixed at its commit, and its id
 * unless a subscriber of this database has it (then one above every id in
 * use).  Its name, handler, owner, filters,
 * max_attempts, echo, enabled and counters are kept; restored_at says when
 * it came back.  A dump is data, not a choice anybody made: the restoring
 * role must be a superuser or have the privileges of the row's owner (else
 * the row is refused), and the handler its name finds is bound by trust.c's
 * rules (DdlnBindRestored): a row whose binding nobody chose comes back
 * unconfirmed (confirmed = false, whatever the dump says) and is delivered
 * to only once its owner or a superuser confirms it.  A handler or owner
 * that does not exist here is named in last_error at once (and again at
 * every delivery).
 */
Datum
ddl_notify_subscriber_restore(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	TupleDesc	desc;
	HeapTuple	tup;
	bool		isnull;
	Datum		d;
	char	   *handler;
	char	   *owner_name;
	DdlnRestored r = {0};
	int			cols[16];
	Datum		values[16];
	bool		nulls[16];
	int			n;

	r.error = NULL;
	r.sqlstate = NULL;
	r.bound = false;
	r.confirmed = true;
	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_BEFORE(trigdata->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(trigdata->tg_event) || !TRIGGER_FIRED_BY_INSERT(trigdata->tg_event))
		/* untested: only a superuser attaching the function elsewhere reaches it (an internal error is right) */
		elog(ERROR, "subscriber_restore() must run as a BEFORE INSERT FOR EACH ROW trigger");
	tup = trigdata->tg_trigtuple;
	if (ddln_api_inserting)
		return PointerGetDatum(tup);

	desc = trigdata->tg_relation->rd_att;
	r.owner = DdlnRestoreReadRow(tup, desc, &handler, &owner_name, &r.slot);

	DdlnLockApi();
	/* not reached: in PostgreSQL 15 SPI_connect() returns SPI_OK_CONNECT or raises an ERROR */
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	r.slot = DdlnRestoreSlot(r.slot);
	d = heap_getattr(tup, DdlnColumn(desc, "id"), desc, &isnull);
	r.id = DdlnDrawSubscriberId(isnull ? 0 : DatumGetInt32(d));
	SPI_finish();

	if (!OidIsValid(r.owner))
	{
		r.handler_oid = DdlnHandlerByName(handler);
		r.error = psprintf("role \"%s\" that owns restored subscriber does not exist", owner_name);
		r.sqlstate = "42704";
	}
	else
		DdlnBindRestored(handler, r.owner, &r.handler_oid, &r.bound, &r.confirmed,
						 &r.error, &r.sqlstate);

	n = DdlnRestoreColumns(desc, &r, cols, values, nulls);

	ddln_xact_subscribed = true;
	return PointerGetDatum(heap_modify_tuple_by_cols(tup, desc, n, cols, values, nulls));
}
