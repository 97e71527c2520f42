/*-------------------------------------------------------------------------
 *
 * replicate.c
 *	  DDL replication's hand-overs (G16): publish_ddl() and unpublish_ddl()
 *	  on a publisher, apply_ddl() and stop_applying_ddl() on a subscriber,
 *	  and not_replicated(), the trigger that keeps a publisher's bookkeeping
 *	  out of a subscriber's tables.  What users are told:
 *	  docs/replication.md.
 *
 * Rules kept here:
 * - Who may: the owner of the publication or subscription (or a
 *	 superuser), besides EXECUTE on the function (PUBLIC has none).  The
 *	 role that calls apply_ddl() is recorded: DDL is applied as the role
 *	 that ran it on the publisher, and only if that recorded role has that
 *	 role's privileges (apply.c).
 * - publish_ddl() puts ddl_notify.ddl_outbox in the publication when the
 *	 publication does not already carry it (FOR ALL TABLES does; a schema
 *	 list does not, ddl_notify being no schema of the user's): through
 *	 ALTER PUBLICATION, as the extension's owner, since the outbox is not
 *	 the caller's.  A publication that does not publish inserts cannot carry
 *	 the outbox and is refused.
 * - apply_ddl() makes the subscription treat the outbox as synchronized
 *	 from the start (pg_subscription_rel state 'r' when it was 'i' or
 *	 missing): its rows are applied by the apply worker, in order with the
 *	 rows of every table, never by a table synchronization that would copy
 *	 what is already there (history) and run beside the apply worker.  A
 *	 synchronization already running is left alone: apply.c ignores the
 *	 rows it copies and applies the rest.
 * - not_replicated() drops a row that a logical replication worker writes
 *	 into the extension's bookkeeping (event, subscriber...): a FOR ALL
 *	 TABLES publication carries the publisher's, which never become the
 *	 subscriber's, so no handler of the publisher runs on the subscriber.
 *	 Rows apply.c writes itself (ddln_apply_writing) pass.
 *
 * Floor: API: called through fmgr, and by apply.c (its SQL and its
 * subscription look-up); calls common.c.
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlogdefs.h"
#include "catalog/pg_publication.h"
#include "catalog/pg_subscription.h"
#include "catalog/pg_subscription_rel.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "replication/worker_internal.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "common.h"

PG_FUNCTION_INFO_V1(ddl_notify_publish_ddl);
PG_FUNCTION_INFO_V1(ddl_notify_unpublish_ddl);
PG_FUNCTION_INFO_V1(ddl_notify_apply_ddl);
PG_FUNCTION_INFO_V1(ddl_notify_stop_applying_ddl);
PG_FUNCTION_INFO_V1(ddl_notify_not_replicated);

bool		ddln_apply_writing = false;

/*
 * One statement of the extension's own, in the safe context (as the
 * extension's owner, search_path pg_catalog); the rows it touched.  In a
 * logical replication worker (apply.c) its writes pass not_replicated().
 */
uint64
DdlnReplicationSql(const char *sql, int nargs, Oid *types, Datum *values)
{
	DdlnSafeState safe;
	int			rc;

	DdlnBeginSafe(&safe);
	ddln_apply_writing = true;
	PG_TRY();
	{
		rc = SPI_execute_with_args(sql, nargs, types, values, NULL, false, 0);
	}
	PG_FINALLY();
	{
		ddln_apply_writing = false;
	}
	PG_END_TRY();
	DdlnEndSafe(&safe);
	/* not reached: negative only for bad arguments; a statement's failure is an ERROR */
	if (rc < 0)
		elog(ERROR, "ddl_notify: \"%s\" failed: %s", sql, SPI_result_code_string(rc));
	return SPI_processed;
}

/* The publication named "name", checked for the caller. */
static Publication *
DdlnReplPublication(Name name)
{
	Publication *pub = GetPublicationByName(NameStr(*name), true);

	if (pub == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("publication \"%s\" does not exist", NameStr(*name))));
	if (!DdlnPublicationOwnerCheck(pub->oid, GetUserId()))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of publication %s", NameStr(*name))));
	return pub;
}

/* Does publication pub carry ddl_notify.ddl_outbox already? */
static bool
DdlnReplCarriesOutbox(Publication *pub, Oid outbox)
{
	return pub->alltables ||
		SearchSysCacheExists2(PUBLICATIONRELMAP, ObjectIdGetDatum(outbox),
							  ObjectIdGetDatum(pub->oid));
}

/* ALTER PUBLICATION name ADD|DROP TABLE ddl_notify.ddl_outbox, as the owner. */
static void
DdlnReplAlterPublication(Name name, const char *how)
{
	char	   *sql = psprintf("ALTER PUBLICATION %s %s TABLE ONLY ddl_notify.ddl_outbox",
							   quote_identifier(NameStr(*name)), how);

	(void) DdlnReplicationSql(sql, 0, NULL, NULL);
}

static Oid
DdlnReplOutbox(void)
{
	const DdlnRelids *relids = DdlnGetRelids(false);
	Oid			outbox = get_relname_relid("ddl_outbox", relids->nsp);

	/*
	 * Untested: only a table dropped by hand gets here (0.1.0's objects have
	 * no function that calls this).
	 */
	if (!OidIsValid(outbox))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("ddl_notify's objects are older than its library"),
				 errhint("Run ALTER EXTENSION ddl_notify UPDATE.")));
	return outbox;
}

Datum
ddl_notify_publish_ddl(PG_FUNCTION_ARGS)
{
	Name		name = PG_GETARG_NAME(0);
	Publication *pub = DdlnReplPublication(name);
	Oid			outbox = DdlnReplOutbox();
	Oid			types[1] = {NAMEOID};
	Datum		values[1] = {NameGetDatum(name)};

	if (!pub->pubactions.pubinsert)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("publication \"%s\" does not publish inserts", NameStr(*name)),
				 errdetail("DDL travels as inserts into ddl_notify.ddl_outbox."),
				 errhint("ALTER PUBLICATION %s SET (publish = 'insert, update, delete, truncate').",
						 quote_identifier(NameStr(*name)))));
	SPI_connect();
	(void) DdlnReplicationSql("INSERT INTO ddl_notify.ddl_publication (pubname) VALUES ($1) "
					   "ON CONFLICT DO NOTHING", 1, types, values);
	if (!DdlnReplCarriesOutbox(pub, outbox))
		DdlnReplAlterPublication(name, "ADD");
	SPI_finish();
	PG_RETURN_VOID();
}

Datum
ddl_notify_unpublish_ddl(PG_FUNCTION_ARGS)
{
	Name		name = PG_GETARG_NAME(0);
	Publication *pub = DdlnReplPublication(name);
	Oid			outbox = DdlnReplOutbox();
	Oid			types[1] = {NAMEOID};
	Datum		values[1] = {NameGetDatum(name)};
	bool		was;

	SPI_connect();
	was = DdlnReplicationSql("DELETE FROM ddl_notify.ddl_publication WHERE pubname OPERATOR(pg_catalog.=) $1",
					  1, types, values) > 0;
	if (!pub->alltables && DdlnReplCarriesOutbox(pub, outbox))
		DdlnReplAlterPublication(name, "DROP");
	SPI_finish();
	PG_RETURN_BOOL(was);
}

/* The subscription named "name" in this database, checked for the caller. */
Oid
DdlnReplicationSubscription(Name name)
{
	Oid			subid = get_subscription_oid(NameStr(*name), true);

	if (!OidIsValid(subid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("subscription \"%s\" does not exist", NameStr(*name))));
	if (!DdlnSubscriptionOwnerCheck(subid, GetUserId()))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of subscription %s", NameStr(*name))));
	return subid;
}

Datum
ddl_notify_apply_ddl(PG_FUNCTION_ARGS)
{
	Name		name = PG_GETARG_NAME(0);
	Oid			subid = DdlnReplicationSubscription(name);
	Oid			outbox = DdlnReplOutbox();
	Oid			types[3] = {OIDOID, NAMEOID, OIDOID};
	Datum		values[3] = {ObjectIdGetDatum(subid), NameGetDatum(name),
	ObjectIdGetDatum(GetUserId())};
	XLogRecPtr	lsn;
	char		state;

	SPI_connect();
	(void) DdlnReplicationSql("INSERT INTO ddl_notify.ddl_apply (subid, subname, applier) "
					   "VALUES ($1, $2, $3) ON CONFLICT (subid) DO UPDATE "
					   "SET subname = excluded.subname, applier = excluded.applier",
					   3, types, values);
	SPI_finish();

	/* the outbox's rows come through the apply worker, from now on */
	LockSharedObject(SubscriptionRelationId, subid, 0, AccessExclusiveLock);
	state = GetSubscriptionRelState(subid, outbox, &lsn);
	if (state == SUBREL_STATE_UNKNOWN)
		DdlnAddSubscriptionRelState(subid, outbox, SUBREL_STATE_READY, InvalidXLogRecPtr);
	else if (state == SUBREL_STATE_INIT)
		DdlnUpdateSubscriptionRelState(subid, outbox, SUBREL_STATE_READY, InvalidXLogRecPtr);
	PG_RETURN_VOID();
}

Datum
ddl_notify_stop_applying_ddl(PG_FUNCTION_ARGS)
{
	Name		name = PG_GETARG_NAME(0);
	Oid			subid = DdlnReplicationSubscription(name);
	Oid			types[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(subid)};
	bool		was;

	SPI_connect();
	was = DdlnReplicationSql("DELETE FROM ddl_notify.ddl_apply WHERE subid OPERATOR(pg_catalog.=) $1",
					  1, types, values) > 0;
	SPI_finish();
	PG_RETURN_BOOL(was);
}

/*
 * BEFORE INSERT OR UPDATE OR DELETE FOR EACH ROW on the bookkeeping tables,
 * enabled ALWAYS: a logical replication worker's row is dropped.
 */
Datum
ddl_notify_not_replicated(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;

	/* untested: only a superuser can attach the function to another trigger */
	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_FOR_ROW(td->tg_event) ||
		!TRIGGER_FIRED_BEFORE(td->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("ddl_notify.not_replicated() is a BEFORE ROW trigger")));
	if (MyLogicalRepWorker != NULL && !ddln_apply_writing)
		return PointerGetDatum(NULL);
	if (TRIGGER_FIRED_BY_UPDATE(td->tg_event))
		return PointerGetDatum(td->tg_newtuple);
	return PointerGetDatum(td->tg_trigtuple);
}
