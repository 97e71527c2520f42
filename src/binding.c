/*-------------------------------------------------------------------------
 *
 * binding.c
 *	  A subscriber's handler and owner, by OID and by name: which function
 *	  and role a subscriber row means in this cluster, and new subscriber
 *	  ids.
 *
 * A subscriber names its handler and its owner twice: by OID (handler_oid,
 * owner), which follows renames and never calls a new function that took a
 * dropped one's name, and by name (handler, the qualified signature;
 * owner_name), which means the same thing in another database or cluster.
 * The OIDs hold in the cluster whose system identifier is in resolved_in.
 *
 * - pg_upgrade copies the tables as they are: transaction ids (the epoch
 *	 is carried over), snapshots and role OIDs keep their meaning, function
 *	 OIDs do not.  The system identifier changes, so the engine resolves the
 *	 names again the first time it locks each subscriber
 *	 (DdlnResolveSubscriber); in the cluster of resolved_in it only
 *	 refreshes the names of renamed objects, so that the next dump carries
 *	 the current ones.  A restored row (lifecycle.c) is resolved by name
 *	 too (DdlnHandlerByName).
 * - A library of this version may run against the SQL objects of 0.1.0
 *	 until ALTER EXTENSION UPDATE: DdlnSubscriberHasNames() tells the API and
 *	 the engine which subscriber table they have.
 * - Subscriber ids are drawn above every id in use (DdlnDrawSubscriberId).
 *
 * Rules: the names are resolved with search_path pg_catalog (the stored
 * signature is schema-qualified); a function found by name is bound only
 * under trust.c's rules for a binding nobody chose (its owner already has
 * the privileges of the subscriber's owner); the tables are written as the
 * extension owner, in the caller's transaction, which holds the
 * subscriber's row lock (the engine) or the API lock (subscribe(), the
 * restore trigger).  The floor: called by the API (subscriber.c,
 * lifecycle.c) and the engine (deliver.c); calls trust.c, counter.c and
 * common.c only.
 *
 * Floor: engine: called by deliver.c, subscriber.c and lifecycle.c; calls
 * trust.c, counter.c and common.c.
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
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "common.h"

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
	/* untested: needs 2^31 subscribe() calls, or a setval() by hand */
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
/* DdlnHandlerByName's look-up, run by DdlnTryQuietly() */
typedef struct DdlnSignatureLookup
{
	const char *signature;
	Oid			result;
} DdlnSignatureLookup;

static void
DdlnLookUpSignature(void *arg)
{
	DdlnSignatureLookup *l = (DdlnSignatureLookup *) arg;
	LOCAL_FCINFO(fcinfo, 1);
	DdlnSafeState safe;
	Datum		d;

	/* the stored signature is qualified; nothing on a path stands in */
	DdlnBeginSafe(&safe);
	InitFunctionCallInfoData(*fcinfo, NULL, 1, InvalidOid, NULL, NULL);
	fcinfo->args[0].value = CStringGetTextDatum(l->signature);
	fcinfo->args[0].isnull = false;
	d = to_regprocedure(fcinfo);
	DdlnEndSafe(&safe);
	if (!fcinfo->isnull)
		l->result = DatumGetObjectId(d);
}

Oid
DdlnHandlerByName(const char *signature)
{
	DdlnSignatureLookup l = {signature, InvalidOid};

	if (!DdlnTryQuietly(DdlnLookUpSignature, &l))
		return InvalidOid;
	return l.result;
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
