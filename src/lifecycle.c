/*-------------------------------------------------------------------------
 *
 * lifecycle.c
 *	  What keeps subscribers working through the database's life cycle
 *	  (docs/guarantees.md, G13): pg_dump/pg_restore, pg_upgrade and
 *	  ALTER EXTENSION ddl_notify UPDATE.
 *
 * A subscriber names its handler and its owner twice: by OID (handler_oid,
 * owner), which follows renames and never calls a new function that took a
 * dropped one's name, and by name (handler, the qualified signature;
 * owner_name), which means the same thing in another database or cluster.
 * The OIDs hold in the cluster whose system identifier is in resolved_in.
 *
 * - pg_dump keeps the rows of ddl_notify.subscriber and dead_letter (they
 *	 are registered with pg_extension_config_dump); their OIDs, slots and
 *	 subscription points belong to the old database.  Every INSERT into
 *	 ddl_notify.subscriber that subscribe() did not make is such a row:
 *	 subscriber_restore() resolves its names, gives it a free slot, resets
 *	 its delivery state and a new subscription point, exactly as subscribe()
 *	 does (the point is fixed at PRE_COMMIT, DdlnFixSubscriptionPoint).  A
 *	 restored subscriber therefore receives the DDL transactions that commit
 *	 after its row was restored, and nothing from before.
 * - pg_upgrade copies the tables as they are: transaction ids (the epoch
 *	 is carried over), snapshots and role OIDs keep their meaning, function
 *	 OIDs do not.  The system identifier changes, so the engine resolves the
 *	 names again the first time it locks each subscriber
 *	 (DdlnResolveSubscriber); in the cluster of resolved_in it only
 *	 refreshes the names of renamed objects, so that the next dump carries
 *	 the current ones.
 * - A library of this version may run against the SQL objects of 0.1.0
 *	 until ALTER EXTENSION UPDATE: DdlnSubscriberHasNames() tells the API and
 *	 the engine which subscriber table they have.
 *
 * Rules: the names are resolved with search_path pg_catalog (the stored
 * signature is schema-qualified); a function found by name is bound only
 * under trust.c's rules for a binding nobody chose (its owner already has
 * the privileges of the subscriber's owner), in the restore trigger and in
 * the engine's resolution alike; the tables are written as the extension
 * owner; all of it runs in the caller's transaction, which holds the
 * subscriber's row lock (the engine) or inserts the row (the trigger).
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

#include "ddl_notify.h"

PG_FUNCTION_INFO_V1(subscriber_restore);

bool		ddln_api_inserting = false;

/* the highest subscriber id, and whether $1 is taken; in the caller's SPI */
static SPIPlanPtr
DdlnPlanIds(Oid *argtypes)
{
	SPIPlanPtr	plan = SPI_prepare("SELECT pg_catalog.max(id), pg_catalog.bool_or(id OPERATOR(pg_catalog.=) $1) "
								   "FROM ddl_notify.subscriber", 1, argtypes);

	/* not reached: NULL only for bad arguments or no SPI connection; bad SQL is an ERROR */
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	return plan;
}

/*
 * Is ddl_notify.subscriber of 0.2.0 or later (names next to the OIDs)?
 * False for the SQL objects of 0.1.0, before ALTER EXTENSION UPDATE.
 */
bool
DdlnSubscriberHasNames(void)
{
	Oid			nsp = get_namespace_oid(DDLN_SCHEMA_NAME, true);
	Oid			rel;

	if (!OidIsValid(nsp))
		return false;
	rel = get_relname_relid("subscriber", nsp);
	return OidIsValid(rel) && get_attnum(rel, "owner_name") != InvalidAttrNumber;
}

/*
 * A new subscriber's id: "want" (a restored row's own id, 0 for none) if no
 * subscriber has it, else one drawn by counter.c (the identity's nextval()
 * would become the caller's lastval(), G0) above every id in use, since a
 * restore's setval() may have set the sequence back below them.  SPI is
 * connected; the caller holds the API lock, so no other id is drawn
 * meanwhile.
 */
int32
DdlnDrawSubscriberId(int32 want)
{
	DdlnSafeState safe;
	Oid			argtypes[1] = {INT4OID};
	Datum		values[1];
	bool		isnull;
	int64		floor = 0;
	bool		taken = false;
	int64		id;
	Datum		d;
	int			rc;

	values[0] = Int32GetDatum(want);
	DdlnBeginSafe(&safe);
	rc = SPI_execute_snapshot(DdlnPlanIds(argtypes), values, NULL, GetLatestSnapshot(),
							  InvalidSnapshot, true, false, 0);
	DdlnEndSafe(&safe);
	/* not reached: a SELECT that runs returns SPI_OK_SELECT; its failures are ERRORs */
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not read the subscribers' ids: %s", SPI_result_code_string(rc));
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (!isnull)
		floor = DatumGetInt32(d);
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);
	taken = !isnull && DatumGetBool(d);
	SPI_freetuptable(SPI_tuptable);
	if (want > 0 && !taken)
		return want;
	id = DdlnCounterNextNamed("subscriber_id_seq", floor);
	if (id > PG_INT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_SEQUENCE_GENERATOR_LIMIT_EXCEEDED),
				 errmsg("no subscriber id is left"),
				 errdetail("Subscriber ids are integers; the next would be %lld.", (long long) id)));
	return (int32) id;
}

/*
 * The function a qualified signature names in this database, or InvalidOid.
 * A signature that does not parse (an argument type that does not exist
 * here, a hand-edited dump) names nothing: to_regprocedure() raises an
 * error for those in PostgreSQL 15, so it runs in a subtransaction.
 */
static Oid
DdlnHandlerByName(const char *signature)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	volatile Oid result = InvalidOid;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		LOCAL_FCINFO(fcinfo, 1);
		DdlnSafeState safe;
		Datum		d;

		/* the stored signature is qualified; nothing on a path stands in */
		DdlnBeginSafe(&safe);
		InitFunctionCallInfoData(*fcinfo, NULL, 1, InvalidOid, NULL, NULL);
		fcinfo->args[0].value = CStringGetTextDatum(signature);
		fcinfo->args[0].isnull = false;
		d = to_regprocedure(fcinfo);
		DdlnEndSafe(&safe);
		if (!fcinfo->isnull)
			result = DatumGetObjectId(d);
		ReleaseCurrentSubTransaction();
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		/* a cancel or a shutdown is not about the signature */
		if (edata->sqlerrcode == ERRCODE_QUERY_CANCELED ||
			edata->sqlerrcode == ERRCODE_ADMIN_SHUTDOWN ||
			edata->sqlerrcode == ERRCODE_CRASH_SHUTDOWN)
			/* untested: a cancel landing inside to_regprocedure(); no test can time it */
			ReThrowError(edata);
		FreeErrorData(edata);
	}
	PG_END_TRY();
	MemoryContextSwitchTo(cxt);
	CurrentResourceOwner = owner;
	return result;
}

static bool
DdlnProcExists(Oid proc)
{
	return OidIsValid(proc) && SearchSysCacheExists1(PROCOID, ObjectIdGetDatum(proc));
}

/*
 * The engine holds the lock of subscriber "id" and read its handler and
 * owner: make the OIDs valid here and the names current.  Outside the
 * cluster of resolved_in (after pg_upgrade), or after a restore that could
 * not resolve them, the OIDs come from the names; inside it, a renamed
 * handler or owner gets its new name.  What changed is written to the row
 * in the caller's transaction; *handler_oid and *owner are what to use
 * (InvalidOid: does not exist, which the engine reports).
 *
 * A function the name finds is bound by trust.c's rules for a binding
 * nobody chose: one of the wrong shape, or that the owner may not execute,
 * is not bound (*refusal, ok = false, says why, for the engine to record as
 * a failure); one that passes everything but the trust rule is bound, but
 * the subscriber becomes unconfirmed, as a restored row would (no batch
 * starts, no attempt counts, last_error says why), until its owner or a
 * superuser confirms it: the result is then false.  True otherwise.
 */
bool
DdlnResolveSubscriber(int32 id, const char *handler, Oid *handler_oid,
					  Oid *owner, const char *owner_name, bool resolved_here,
					  DdlnVerdict *refusal)
{
	Oid			h = *handler_oid;
	Oid			o = *owner;
	const char *hname = handler;
	const char *oname = owner_name;
	bool		here = resolved_here;
	bool		confirmed = true;
	DdlnVerdict trust;

	refusal->ok = true;
	trust.ok = true;
	if (!resolved_here)
	{
		h = DdlnHandlerByName(handler);
		o = get_role_oid(owner_name, true);
		if (OidIsValid(h) && OidIsValid(o))
		{
			if (!DdlnJudgeHandler(h, o, DDLN_BIND_CHOSEN, refusal))
				h = InvalidOid;
			else if (!DdlnJudgeHandler(h, o, DDLN_BIND_BY_NAME, &trust))
				confirmed = false;
		}
		/* what does not exist yet, or may not be bound, is looked up by name again next time */
		here = OidIsValid(h) && OidIsValid(o);
	}
	else
	{
		char	   *cur;

		if (DdlnProcExists(h) &&
			strcmp(cur = format_procedure_qualified(h), hname) != 0)
			hname = cur;
		if (OidIsValid(o) && (cur = GetUserNameFromId(o, true)) != NULL &&
			strcmp(cur, oname) != 0)
			oname = cur;
	}

	if (h != *handler_oid || o != *owner || here != resolved_here ||
		hname != handler || oname != owner_name)
	{
		Oid			argtypes[8] = {INT4OID, OIDOID, OIDOID, TEXTOID, NAMEOID, INT8OID,
		BOOLOID, TEXTOID};
		Datum		values[8];
		char		nulls[8] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
		DdlnSafeState safe;
		bool		pushed = false;
		int			rc;

		values[0] = Int32GetDatum(id);
		values[1] = ObjectIdGetDatum(h);
		values[2] = ObjectIdGetDatum(o);
		values[3] = CStringGetTextDatum(hname);
		values[4] = DirectFunctionCall1(namein, CStringGetDatum(oname));
		values[5] = Int64GetDatum((int64) GetSystemIdentifier());
		if (!here)
			nulls[5] = 'n';
		values[6] = BoolGetDatum(confirmed);
		if (confirmed)
			nulls[7] = 'n';
		else
			values[7] = CStringGetTextDatum(psprintf("waits for its owner or a superuser to confirm its handler: %s",
													 DdlnVerdictText(&trust)));
		DdlnBeginSafe(&safe);
		if (!ActiveSnapshotSet())
		{
			PushActiveSnapshot(GetTransactionSnapshot());
			pushed = true;
		}
		rc = SPI_execute_with_args("UPDATE ddl_notify.subscriber "
								   "SET handler_oid = $2, owner = $3, handler = $4, "
								   "    owner_name = $5, resolved_in = $6, "
								   "    confirmed = confirmed AND $7, "
								   "    last_error = CASE WHEN $7 THEN last_error ELSE $8 END, "
								   "    last_error_sqlstate = CASE WHEN $7 THEN last_error_sqlstate ELSE '42501' END, "
								   "    last_error_at = CASE WHEN $7 THEN last_error_at ELSE pg_catalog.clock_timestamp() END "
								   "WHERE id OPERATOR(pg_catalog.=) $1",
								   8, argtypes, values, nulls, false, 0);
		if (pushed)
			PopActiveSnapshot();
		DdlnEndSafe(&safe);
		/* not reached: an UPDATE that runs returns SPI_OK_UPDATE; its failures are ERRORs */
		if (rc != SPI_OK_UPDATE)
			elog(ERROR, "could not update subscriber %d: %s", id, SPI_result_code_string(rc));
		*handler_oid = h;
		*owner = o;
	}
	return confirmed;
}

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
subscriber_restore(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	TupleDesc	desc;
	HeapTuple	tup;
	bool		isnull;
	Datum		d;
	char	   *handler;
	char	   *owner_name;
	Oid			handler_oid;
	Oid			owner;
	int32		slot;
	int			cols[16];
	Datum		values[16];
	bool		nulls[16];
	int			n = 0;
	char	   *error = NULL;
	const char *sqlstate = NULL;
	bool		bound = false;
	bool		confirmed = true;
	int32		id;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_BEFORE(trigdata->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(trigdata->tg_event) || !TRIGGER_FIRED_BY_INSERT(trigdata->tg_event))
		/* untested: only a superuser attaching the function elsewhere reaches it (an internal error is right) */
		elog(ERROR, "subscriber_restore() must run as a BEFORE INSERT FOR EACH ROW trigger");
	tup = trigdata->tg_trigtuple;
	if (ddln_api_inserting)
		return PointerGetDatum(tup);

	desc = trigdata->tg_relation->rd_att;
	d = heap_getattr(tup, DdlnColumn(desc, "handler"), desc, &isnull);
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NOT_NULL_VIOLATION),
				 errmsg("a restored subscriber must name its handler")));
	handler = TextDatumGetCString(d);
	d = heap_getattr(tup, DdlnColumn(desc, "owner_name"), desc, &isnull);
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NOT_NULL_VIOLATION),
				 errmsg("a restored subscriber must name its owner")));
	owner_name = pstrdup(NameStr(*DatumGetName(d)));
	d = heap_getattr(tup, DdlnColumn(desc, "slot"), desc, &isnull);
	slot = isnull ? -1 : DatumGetInt32(d);

	/* a dump is data: the restoring role must be one that may act for the owner */
	owner = get_role_oid(owner_name, true);
	if (OidIsValid(owner) ? !DdlnMayActFor(GetUserId(), owner) : !superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to restore a subscriber of role \"%s\"", owner_name),
				 errdetail("Only a superuser, or a role with the privileges of a subscriber's owner, may restore it."),
				 errhint("Restore the subscribers as a superuser, or leave ddl_notify's data out (--exclude-table-data).")));

	DdlnLockApi();
	/* not reached: in PostgreSQL 15 SPI_connect() returns SPI_OK_CONNECT or raises an ERROR */
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	slot = DdlnRestoreSlot(slot);
	d = heap_getattr(tup, DdlnColumn(desc, "id"), desc, &isnull);
	id = DdlnDrawSubscriberId(isnull ? 0 : DatumGetInt32(d));
	SPI_finish();

	if (!OidIsValid(owner))
	{
		handler_oid = DdlnHandlerByName(handler);
		error = psprintf("role \"%s\" that owns restored subscriber does not exist", owner_name);
		sqlstate = "42704";
	}
	else
		DdlnBindRestored(handler, owner, &handler_oid, &bound, &confirmed, &error, &sqlstate);

#define DDLN_SET(name, value, isnull_) \
	(cols[n] = DdlnColumn(desc, (name)), values[n] = (value), nulls[n] = (isnull_), n++)
	DDLN_SET("slot", Int32GetDatum(slot), false);
	DDLN_SET("handler_oid", ObjectIdGetDatum(handler_oid), false);
	DDLN_SET("owner", ObjectIdGetDatum(owner), false);
	DDLN_SET("id", Int32GetDatum(id), false);
	DDLN_SET("resolved_in", Int64GetDatum((int64) GetSystemIdentifier()),
			 !(bound && OidIsValid(owner)));
	DDLN_SET("confirmed", BoolGetDatum(confirmed), false);
	/* provisional, as subscribe()'s; fixed at PRE_COMMIT */
	DDLN_SET("start_snapshot",
			 DirectFunctionCall1(pg_snapshot_in,
								 CStringGetDatum(DdlnSnapshotText(GetLatestSnapshot()))),
			 false);
	DDLN_SET("start_xid", FullTransactionIdGetDatum(GetTopFullTransactionId()), false);
	DDLN_SET("attempts", Int32GetDatum(0), false);
	DDLN_SET("failing_event", (Datum) 0, true);
	DDLN_SET("next_retry_at", (Datum) 0, true);
	DDLN_SET("last_error", error ? CStringGetTextDatum(error) : (Datum) 0, error == NULL);
	DDLN_SET("last_error_sqlstate", sqlstate ? CStringGetTextDatum(sqlstate) : (Datum) 0,
			 sqlstate == NULL);
	DDLN_SET("last_error_at", TimestampTzGetDatum(GetCurrentTransactionStartTimestamp()),
			 error == NULL);
	DDLN_SET("restored_at", TimestampTzGetDatum(GetCurrentTransactionStartTimestamp()), false);
#undef DDLN_SET

	ddln_xact_subscribed = true;
	return PointerGetDatum(heap_modify_tuple_by_cols(tup, desc, n, cols, values, nulls));
}
