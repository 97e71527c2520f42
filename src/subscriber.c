/*-------------------------------------------------------------------------
 *
 * subscriber.c
 *	  The SQL API: subscribe(), unsubscribe(), skip(), wait_for_delivery(),
 *	  and the subscription-point protocol.
 *
 * The subscription point (G6).  A subscriber must receive exactly the events
 * of the transactions that commit after its subscribe() commits, including
 * transactions already running when it subscribed.  PostgreSQL does not
 * record commit order, so the protocol makes it observable:
 *
 * - Every transaction that recorded events takes the subscription-point lock
 *	 in ShareLock at PRE_COMMIT (ddl_notify.c).  The lock is released only
 *	 after the commit has become visible.
 * - subscribe() inserts the subscriber with a provisional snapshot and flags
 *	 the transaction.  At PRE_COMMIT the subscribing transaction takes the
 *	 lock in ExclusiveLock, then a fresh snapshot, and stores it in the
 *	 subscriber's row (DdlnFixSubscriptionPoint).  While it holds the lock no
 *	 DDL transaction can be between PRE_COMMIT and visible: every one of them
 *	 is either visible in that snapshot (it committed before the subscriber)
 *	 or will commit after the subscriber commits.
 * - The engine treats an event as pending for a subscriber iff its xid is
 *	 not visible in that snapshot and is not the subscribing transaction's
 *	 own (ddl_notify.is_pending).  The provisional snapshot, taken earlier,
 *	 can only make more events pending, never fewer.
 *
 * The lock is taken at PRE_COMMIT, not at subscribe(), so that a subscribing
 * transaction never blocks DDL for longer than its own commit.  A prepared
 * (two-phase) DDL transaction does not take it: if it is COMMIT PREPARED in
 * the instant between a subscriber's snapshot and that subscriber's commit,
 * the subscriber receives its events although it committed a moment later.
 * subscribe() itself cannot be prepared.
 *
 * API rules: NULLs and bad values are refused with their SQLSTATE before
 * anything is written; subscribe and unsubscribe serialise on an API lock
 * and subscribe checks names and slots with the latest snapshot, so against
 * committed state whatever the caller's isolation level; the tables are
 * written as the extension owner, after the caller's rights were checked
 * (G10).  Whether a function may be a handler, and whether the caller may act
 * on a subscriber, is decided by trust.c alone: subscribe() and
 * alter_subscriber() take the same checks (shape, USAGE and EXECUTE for the
 * subscriber's owner); only the owner (or a member of it) or a superuser may
 * alter, pause, resume, unsubscribe a subscription or skip its events; a
 * role other than a superuser owns at most
 * ddl_notify.max_subscribers_per_role subscribers.  alter_subscriber(),
 * pause() and resume() lock the subscriber's row, so a batch in flight
 * commits first and the change applies from the next batch; a paused
 * subscriber keeps its position and its events wait.  subscribe() stores
 * the handler and the owner by OID and by name (lifecycle.c) and flags its
 * INSERT (ddln_api_inserting), so that the trigger subscriber_restore()
 * treats every other INSERT as a restored row; against the SQL objects of
 * 0.1.0 it writes that version's columns.  Its id is drawn by lifecycle.c,
 * above every id in use.
 *
 * Floor: API: called through fmgr, by lifecycle.c and by ddl_notify.c's
 * commit callback; calls the engine (deliver.c, binding.c, trust.c, and
 * fetch.c for what wait_for_delivery() waits for), pool.c and common.c.
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
#include "catalog/objectaddress.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "common/int.h"
#include "datatype/timestamp.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "tcop/cmdtag.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/xid8.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/regproc.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "common.h"
#include "engine.h"

PG_FUNCTION_INFO_V1(ddl_notify_subscribe);
PG_FUNCTION_INFO_V1(ddl_notify_unsubscribe);
PG_FUNCTION_INFO_V1(ddl_notify_skip);
PG_FUNCTION_INFO_V1(ddl_notify_wait_for_delivery);
PG_FUNCTION_INFO_V1(ddl_notify_alter_subscriber);
PG_FUNCTION_INFO_V1(ddl_notify_pause);
PG_FUNCTION_INFO_V1(ddl_notify_resume);

bool		ddln_xact_subscribed = false;
bool		ddln_api_inserting = false;

/* Second advisory key for the API lock (subscribe/unsubscribe). */
#define DDLN_API_LOCK_KEY2		0x41504921	/* "API!" */

#define DDLN_MAX_NAME_LEN		(NAMEDATALEN - 1)

static FullTransactionId
DdlnWidenXid(FullTransactionId next, TransactionId xid)
{
	uint32		epoch = EpochFromFullTransactionId(next);

	if (!TransactionIdIsNormal(xid))
		return FullTransactionIdFromEpochAndXid(0, xid);
	/* an xid above next's low half belongs to the previous epoch */
	if (xid > XidFromFullTransactionId(next) && epoch > 0)
		epoch--;
	return FullTransactionIdFromEpochAndXid(epoch, xid);
}

static int
DdlnCompareUint64(const void *a, const void *b)
{
	uint64		x = *(const uint64 *) a;
	uint64		y = *(const uint64 *) b;

	return (x > y) - (x < y);
}

/*
 * A snapshot in pg_snapshot's text form (xmin:xmax:xip,...), with 64-bit
 * xids, so that SQL can test pg_visible_in_snapshot() against it.
 */
char *
DdlnSnapshotText(Snapshot snap)
{
	FullTransactionId next = ReadNextFullTransactionId();
	StringInfoData buf;
	uint64	   *xip = palloc(sizeof(uint64) * Max(snap->xcnt, 1));
	uint64		xmin = U64FromFullTransactionId(DdlnWidenXid(next, snap->xmin));
	uint64		xmax = U64FromFullTransactionId(DdlnWidenXid(next, snap->xmax));
	int			n = 0;

	for (uint32 i = 0; i < snap->xcnt; i++)
	{
		uint64		x = U64FromFullTransactionId(DdlnWidenXid(next, snap->xip[i]));

		if (x >= xmin && x < xmax)
			xip[n++] = x;
	}
	qsort(xip, n, sizeof(uint64), DdlnCompareUint64);

	initStringInfo(&buf);
	appendStringInfo(&buf, UINT64_FORMAT ":" UINT64_FORMAT ":", xmin, xmax);
	for (int i = 0; i < n; i++)
	{
		if (i > 0 && xip[i] == xip[i - 1])
			continue;
		appendStringInfo(&buf, "%s" UINT64_FORMAT, i > 0 ? "," : "", xip[i]);
	}
	pfree(xip);
	return buf.data;
}

/*
 * PRE_COMMIT of a transaction that called subscribe(): fix the subscription
 * point of its subscribers under the subscription-point lock.
 */
void
DdlnFixSubscriptionPoint(void)
{
	Oid			argtypes[2] = {TEXTOID, XID8OID};
	Datum		values[2];
	DdlnSafeState safe;
	int			rc;

	if (!OidIsValid(get_namespace_oid(DDLN_SCHEMA_NAME, true)))
		return;					/* the extension went away in this transaction */

	DdlnLockSubscriptionPoint(ExclusiveLock);

	values[0] = CStringGetTextDatum(DdlnSnapshotText(GetLatestSnapshot()));
	values[1] = FullTransactionIdGetDatum(GetTopFullTransactionId());

	/* not reached: in PostgreSQL 15 SPI_connect() returns SPI_OK_CONNECT or raises an ERROR */
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DdlnBeginSafe(&safe);
	/* at PRE_COMMIT there is no portal to take a snapshot from */
	PushActiveSnapshot(GetTransactionSnapshot());
	rc = SPI_execute_with_args("UPDATE ddl_notify.subscriber "
							   "SET start_snapshot = $1::pg_catalog.pg_snapshot "
							   "WHERE start_xid OPERATOR(pg_catalog.=) $2",
							   2, argtypes, values, NULL, false, 0);
	PopActiveSnapshot();
	DdlnEndSafe(&safe);
	/* not reached: an UPDATE that runs returns SPI_OK_UPDATE; its failures are ERRORs */
	if (rc != SPI_OK_UPDATE)
		elog(ERROR, "could not fix the subscription point: %s", SPI_result_code_string(rc));
	SPI_finish();
}

void
DdlnLockApi(void)
{
	LOCKTAG		tag;

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, DDLN_LOCK_KEY1, DDLN_API_LOCK_KEY2,
						 DDLN_LOCK_FIELD4);
	(void) LockAcquire(&tag, ExclusiveLock, false, false);
}

/*
 * Run one read-only API query with the latest snapshot, whatever the
 * caller's isolation level: the checks of subscribe() must see what other
 * subscribers committed, or a REPEATABLE READ caller would pick a taken slot.
 */
static void
DdlnApiQueryLatest(const char *sql, int nargs, Oid *argtypes, Datum *values)
{
	DdlnSafeState safe;
	SPIPlanPtr	plan;
	int			rc;

	DdlnBeginSafe(&safe);
	plan = SPI_prepare(sql, nargs, argtypes);
	/* not reached: NULL only for bad arguments or no SPI connection; bad SQL is an ERROR */
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed for \"%s\": %s", sql, SPI_result_code_string(SPI_result));
	rc = SPI_execute_snapshot(plan, values, NULL, GetLatestSnapshot(), InvalidSnapshot,
							  true, false, 0);
	DdlnEndSafe(&safe);
	/* not reached: the callers' statements are SELECTs; their failures are ERRORs */
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute_snapshot failed for \"%s\": %s", sql, SPI_result_code_string(rc));
}

/* Run one API statement as the extension owner; SPI must be connected. */
static int
DdlnApiExec(const char *sql, int nargs, Oid *argtypes, Datum *values,
			const char *nulls)
{
	DdlnSafeState safe;
	int			rc;

	DdlnBeginSafe(&safe);
	rc = SPI_execute_with_args(sql, nargs, argtypes, values, nulls, false, 0);
	DdlnEndSafe(&safe);
	/* not reached: < 0 only for bad arguments, COPY or transaction control, none of them ours */
	if (rc < 0)
		elog(ERROR, "SPI_execute_with_args failed for \"%s\": %s", sql,
			 SPI_result_code_string(rc));
	return rc;
}

static char *
DdlnCheckName(FunctionCallInfo fcinfo, int argno)
{
	char	   *name;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("subscriber name must not be null")));
	name = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	if (name[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("subscriber name must not be empty")));
	if (strlen(name) > DDLN_MAX_NAME_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_NAME_TOO_LONG),
				 errmsg("subscriber name is too long"),
				 errdetail("A subscriber name has at most %d bytes; this one has %zu.",
						   DDLN_MAX_NAME_LEN, strlen(name))));
	return name;
}

/* The filters a subscriber may have, checked each its own way. */
typedef enum DdlnFilterKind
{
	DDLN_FILTER_TAGS,			/* command tags: PostgreSQL's list */
	DDLN_FILTER_OBJTYPES,		/* object types: the names PostgreSQL reports */
	DDLN_FILTER_SCHEMAS			/* schema names: any */
} DdlnFilterKind;

static const char *const ddln_filter_names[] = {"command_tags", "object_types", "schemas"};

/*
 * Is "name" an object type as PostgreSQL names it in event trigger
 * functions (getObjectTypeDescription)?  Those are the names
 * pg_get_object_address() accepts (its read_objtype_from_string() knows
 * every one, and raises an error for any other), so ask it, quietly.
 */
static void
DdlnReadObjectType(void *name)
{
	(void) read_objtype_from_string((const char *) name);
}

static bool
DdlnIsObjectType(const char *name)
{
	return DdlnTryQuietly(DdlnReadObjectType, (void *) name);
}

/*
 * A filter array: NULL means "everything"; otherwise no NULL elements, not
 * empty (alter_subscriber() takes an empty array for "everything" again:
 * *cleared).  Command tags are checked against PostgreSQL's list and spelled
 * as PostgreSQL reports them; object types against the names PostgreSQL
 * reports, folded to lower case.
 */
static Datum
DdlnCheckFilter(FunctionCallInfo fcinfo, int argno, DdlnFilterKind kind,
				bool *isnull, bool *cleared)
{
	const char *what = ddln_filter_names[kind];
	ArrayType  *arr;
	Datum	   *elems;
	bool	   *nulls;
	int			n;

	*isnull = PG_ARGISNULL(argno);
	if (cleared)
		*cleared = false;
	if (*isnull)
		return (Datum) 0;
	arr = PG_GETARG_ARRAYTYPE_P(argno);
	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("%s must be a one-dimensional array", what)));
	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	if (n == 0 && cleared)
	{
		/* the filter becomes NULL: every event */
		*cleared = true;
		*isnull = true;
		return (Datum) 0;
	}
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be empty", what),
				 errhint("Pass NULL to receive events of every kind.")));
	for (int i = 0; i < n; i++)
	{
		char	   *value;

		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s must not contain NULL", what)));
		value = TextDatumGetCString(elems[i]);
		if (kind == DDLN_FILTER_TAGS)
		{
			CommandTag	tag = GetCommandTagEnum(value);

			if (tag == CMDTAG_UNKNOWN)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("unknown command tag \"%s\" in %s", value, what),
						 errhint("Command tags are spelled as PostgreSQL reports them, such as \"CREATE TABLE\" or \"ALTER FUNCTION\".")));
			elems[i] = CStringGetTextDatum(GetCommandTagName(tag));
		}
		else if (kind == DDLN_FILTER_OBJTYPES)
		{
			char	   *folded = pstrdup(value);

			/* PostgreSQL's names are ASCII: fold only ASCII letters */
			for (char *c = folded; *c; c++)
				*c = pg_ascii_tolower((unsigned char) *c);

			if (!DdlnIsObjectType(folded))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("unknown object type \"%s\" in %s", value, what),
						 errhint("Object types are spelled as PostgreSQL reports them in ddl_notify.event.object_type, such as \"table\", \"index\", \"function\" or \"table column\".")));
			elems[i] = CStringGetTextDatum(folded);
		}
	}
	return PointerGetDatum(construct_array(elems, n, TEXTOID, -1, false, TYPALIGN_INT));
}

/*
 * One role may own at most ddl_notify.max_subscribers_per_role subscribers
 * (superusers: any number), so that no role takes every slot of the
 * database.  Called under the API lock, so the count is the committed one.
 */
static void
DdlnCheckRoleLimit(Oid caller)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1];
	bool		isnull;
	int64		owned;

	if (superuser_arg(caller))
		return;
	values[0] = ObjectIdGetDatum(caller);
	DdlnApiQueryLatest("SELECT pg_catalog.count(*) FROM ddl_notify.subscriber "
					   "WHERE owner OPERATOR(pg_catalog.=) $1",
					   1, argtypes, values);
	owned = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_freetuptable(SPI_tuptable);
	if (owned >= ddln_max_subscribers_per_role)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("role \"%s\" owns too many subscribers",
						GetUserNameFromId(caller, false)),
				 errdetail("A role may own at most %d subscribers in a database (ddl_notify.max_subscribers_per_role).",
						   ddln_max_subscribers_per_role),
				 errhint("Unsubscribe one first, or let one handler serve several purposes.")));
}

/*
 * subscribe()'s filters, max_attempts and echo (arguments 2 to 6), checked
 * in that order and stored in values[4..8] and nulls[4..8] as the INSERT of
 * DdlnSubscribeInsert takes them.
 */
static void
DdlnSubscribeOptions(FunctionCallInfo fcinfo, Datum *values, char *nulls)
{
	bool		isnull;

	values[4] = DdlnCheckFilter(fcinfo, 2, DDLN_FILTER_TAGS, &isnull, NULL);
	nulls[4] = isnull ? 'n' : ' ';
	values[5] = DdlnCheckFilter(fcinfo, 3, DDLN_FILTER_OBJTYPES, &isnull, NULL);
	nulls[5] = isnull ? 'n' : ' ';
	values[6] = DdlnCheckFilter(fcinfo, 4, DDLN_FILTER_SCHEMAS, &isnull, NULL);
	nulls[6] = isnull ? 'n' : ' ';
	if (PG_ARGISNULL(5))
		nulls[7] = 'n';
	else
	{
		int32		max_attempts = PG_GETARG_INT32(5);

		if (max_attempts < 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("max_attempts must be at least 1, or NULL to retry for ever")));
		values[7] = Int32GetDatum(max_attempts);
	}
	if (PG_ARGISNULL(6))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("echo must not be null")));
	values[8] = BoolGetDatum(PG_GETARG_BOOL(6));
}

/*
 * Under the API lock, connected to SPI: refuse a subscriber name already in
 * use (values[0], typed by argtypes[0]) and return the lowest free slot,
 * refusing when all DDLN_MAX_SUBSCRIBERS are taken.
 */
static int32
DdlnSubscribeClaimSlot(const char *name, Oid *argtypes, Datum *values)
{
	int32		slot;
	bool		slot_null;

	DdlnApiQueryLatest("SELECT 1 FROM ddl_notify.subscriber WHERE name OPERATOR(pg_catalog.=) $1",
					   1, argtypes, values);
	if (SPI_processed > 0)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("subscriber \"%s\" already exists", name)));

	DdlnApiQueryLatest("SELECT pg_catalog.min(g) FROM pg_catalog.generate_series(0, 63) g "
					   "WHERE NOT EXISTS (SELECT 1 FROM ddl_notify.subscriber s "
					   "                  WHERE s.slot OPERATOR(pg_catalog.=) g)",
					   0, NULL, NULL);
	slot = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &slot_null));
	if (slot_null)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("too many subscribers"),
				 errdetail("ddl_notify supports at most %d subscribers per database.",
						   DDLN_MAX_SUBSCRIBERS),
				 errhint("Unsubscribe one first, or let one handler serve several purposes.")));
	return slot;
}

/*
 * Under the API lock, connected to SPI: draw the new subscriber's id and
 * insert its row from values[0..10] (nulls, argtypes alike), with the
 * columns of the installed version (0.2.0's names of handler and owner, or
 * 0.1.0's columns), flagged as subscribe()'s own insert so the restore
 * trigger lets it pass.  Returns the id.
 */
static int32
DdlnSubscribeInsert(Oid handler, Oid caller, Oid *argtypes, Datum *values, char *nulls)
{
	Datum		id_datum;
	bool		isnull;

	id_datum = Int32GetDatum(DdlnDrawSubscriberId(0));

	ddln_api_inserting = true;
	PG_TRY();
	{
		if (DdlnSubscriberHasNames())
		{
			/* 0.2.0: the handler and owner by OID and by name (G13) */
			argtypes[11] = TEXTOID;
			values[11] = CStringGetTextDatum(format_procedure_qualified(handler));
			argtypes[12] = NAMEOID;
			values[12] = DirectFunctionCall1(namein,
											 CStringGetDatum(GetUserNameFromId(caller, false)));
			argtypes[13] = INT8OID;
			values[13] = Int64GetDatum((int64) GetSystemIdentifier());
			argtypes[14] = INT4OID;
			values[14] = id_datum;
			DdlnApiExec("INSERT INTO ddl_notify.subscriber (name, slot, handler_oid, owner, command_tags, "
						"object_types, schemas, max_attempts, echo, start_snapshot, start_xid, "
						"handler, owner_name, resolved_in, id) "
						"OVERRIDING SYSTEM VALUE "
						"VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, "
						"$10::pg_catalog.pg_snapshot, $11, $12, $13, $14, $15) RETURNING id",
						15, argtypes, values, nulls);
		}
		else
		{
			/* 0.1.0's columns */
			argtypes[11] = INT4OID;
			values[11] = id_datum;
			DdlnApiExec("INSERT INTO ddl_notify.subscriber (name, slot, handler, owner, command_tags, "
						"object_types, schemas, max_attempts, echo, start_snapshot, start_xid, id) "
						"OVERRIDING SYSTEM VALUE "
						"VALUES ($1, $2, $3::pg_catalog.regprocedure, $4, $5, $6, $7, $8, $9, "
						"$10::pg_catalog.pg_snapshot, $11, $12) RETURNING id",
						12, argtypes, values, nulls);
		}
	}
	PG_FINALLY();
	{
		ddln_api_inserting = false;
	}
	PG_END_TRY();
	return DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

/*
 * subscribe(name, handler, command_tags, object_types, schemas, max_attempts,
 *			 echo) returns the subscriber's id.
 */
Datum
ddl_notify_subscribe(PG_FUNCTION_ARGS)
{
	Oid			caller = GetUserId();
	char	   *name = DdlnCheckName(fcinfo, 0);
	Oid			handler;
	Datum		values[15];
	char		nulls[15];
	Oid			argtypes[15] = {TEXTOID, INT4OID, OIDOID, OIDOID, TEXTARRAYOID,
		TEXTARRAYOID, TEXTARRAYOID, INT4OID, BOOLOID, TEXTOID, XID8OID};
	int32		id;
	DdlnVerdict verdict;

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("handler must not be null")));
	handler = PG_GETARG_OID(1);
	memset(nulls, ' ', sizeof(nulls));

	values[0] = CStringGetTextDatum(name);
	values[2] = ObjectIdGetDatum(handler);
	values[3] = ObjectIdGetDatum(caller);
	DdlnSubscribeOptions(fcinfo, values, nulls);

	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot subscribe during recovery")));

	if (!DdlnJudgeHandler(handler, caller, DDLN_BIND_CHOSEN, &verdict))
		DdlnRaiseVerdict(&verdict);

	DdlnLockApi();
	/* not reached: in PostgreSQL 15 SPI_connect() returns SPI_OK_CONNECT or raises an ERROR */
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");

	values[1] = Int32GetDatum(DdlnSubscribeClaimSlot(name, argtypes, values));
	DdlnCheckRoleLimit(caller);

	/* provisional subscription point; fixed at PRE_COMMIT */
	values[9] = CStringGetTextDatum(DdlnSnapshotText(GetLatestSnapshot()));
	values[10] = FullTransactionIdGetDatum(GetTopFullTransactionId());

	id = DdlnSubscribeInsert(handler, caller, argtypes, values, nulls);
	SPI_finish();

	ddln_xact_subscribed = true;
	PG_RETURN_INT32(id);
}

/*
 * Look up a subscriber by name, lock its row (waiting for a batch in flight
 * to commit) and check the caller may act on it (trust.c).  Returns its id,
 * slot and owner.
 */
static void
DdlnLookupOwnSubscriber(const char *name, int32 *id, int32 *slot, Oid *owner)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1];
	bool		isnull;
	HeapTuple	tup;
	TupleDesc	desc;

	values[0] = CStringGetTextDatum(name);
	DdlnApiExec("SELECT id, slot, owner FROM ddl_notify.subscriber "
				"WHERE name OPERATOR(pg_catalog.=) $1 FOR UPDATE",
				1, argtypes, values, NULL);
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("subscriber \"%s\" does not exist", name)));
	tup = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	*id = DatumGetInt32(SPI_getbinval(tup, desc, 1, &isnull));
	*slot = DatumGetInt32(SPI_getbinval(tup, desc, 2, &isnull));
	*owner = DatumGetObjectId(SPI_getbinval(tup, desc, 3, &isnull));
	SPI_freetuptable(SPI_tuptable);
	DdlnCheckMayActFor(name, *owner, NULL);
}

/* unsubscribe(name): remove the subscriber and release its pending events. */
Datum
ddl_notify_unsubscribe(PG_FUNCTION_ARGS)
{
	char	   *name = DdlnCheckName(fcinfo, 0);
	Oid			argtypes[1] = {INT4OID};
	Datum		values[1];
	int32		id;
	int32		slot;
	Oid			owner;

	DdlnLockApi();
	/* not reached: in PostgreSQL 15 SPI_connect() returns SPI_OK_CONNECT or raises an ERROR */
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DdlnLookupOwnSubscriber(name, &id, &slot, &owner);
	values[0] = Int32GetDatum(id);
	DdlnApiExec("DELETE FROM ddl_notify.subscriber WHERE id OPERATOR(pg_catalog.=) $1",
				1, argtypes, values, NULL);
	DdlnPurge();
	SPI_finish();
	PG_RETURN_BOOL(true);
}

/* skip(name, event_id): handle one pending event without calling the handler. */
Datum
ddl_notify_skip(PG_FUNCTION_ARGS)
{
	char	   *name = DdlnCheckName(fcinfo, 0);
	int64		event_id;
	DdlnEventKey event;
	bool		isnull;
	int32		id;
	int32		slot;
	Oid			owner;
	Oid			argtypes[2] = {INT4OID, INT8OID};
	Datum		values[2];

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("event_id must not be null")));
	event_id = PG_GETARG_INT64(1);

	/* not reached: in PostgreSQL 15 SPI_connect() returns SPI_OK_CONNECT or raises an ERROR */
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DdlnLookupOwnSubscriber(name, &id, &slot, &owner);

	values[0] = Int32GetDatum(id);
	values[1] = Int64GetDatum(event_id);
	DdlnApiExec("SELECT e.xid, (SELECT pg_catalog.min(o.pos) FROM ddl_notify.commit_order o "
				"          WHERE o.xid OPERATOR(pg_catalog.=) e.xid) "
				"FROM ddl_notify.event e, ddl_notify.subscriber s "
				"WHERE s.id OPERATOR(pg_catalog.=) $1 AND e.id OPERATOR(pg_catalog.=) $2 "
				"AND ddl_notify.is_pending(e.processed, e.xid, s.slot, s.start_snapshot, s.start_xid)",
				2, argtypes, values, NULL);
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("event %lld is not pending for subscriber \"%s\"",
						(long long) event_id, name),
				 errdetail("It does not exist, was already handled, or committed before the subscriber subscribed.")));

	event.id = event_id;
	event.xid = DatumGetFullTransactionId(SPI_getbinval(SPI_tuptable->vals[0],
														SPI_tuptable->tupdesc, 1, &isnull));
	event.pos = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	if (isnull)
		event.pos = 0;
	SPI_freetuptable(SPI_tuptable);
	DdlnMarkHandled(name, slot, &event, 1);
	DdlnApiExec("UPDATE ddl_notify.subscriber SET skipped = skipped OPERATOR(pg_catalog.+) 1, "
				"  attempts = CASE WHEN failing_event OPERATOR(pg_catalog.=) $2 THEN 0 ELSE attempts END, "
				"  next_retry_at = CASE WHEN failing_event OPERATOR(pg_catalog.=) $2 THEN NULL ELSE next_retry_at END, "
				"  failing_event = CASE WHEN failing_event OPERATOR(pg_catalog.=) $2 THEN NULL ELSE failing_event END "
				"WHERE id OPERATOR(pg_catalog.=) $1",
				2, argtypes, values, NULL);
	SPI_finish();
	/* its later events were waiting behind this one: a worker at commit */
	DdlnWakeWorkerAtCommit();
	PG_RETURN_VOID();
}

/*
 * The handler subscriber "id" is bound to in this cluster, InvalidOid when
 * it is bound to none here (not found yet, or bound in the cluster before a
 * pg_upgrade: the engine resolves it by name) or the function is gone.
 */
static Oid
DdlnSubscriberHandler(int32 id)
{
	Oid			argtypes[2] = {INT4OID, INT8OID};
	Datum		values[2];
	bool		isnull;
	bool		here;
	Oid			handler;

	values[0] = Int32GetDatum(id);
	values[1] = Int64GetDatum((int64) GetSystemIdentifier());
	DdlnApiExec("SELECT handler_oid, resolved_in IS NOT DISTINCT FROM $2 "
				"FROM ddl_notify.subscriber WHERE id OPERATOR(pg_catalog.=) $1",
				2, argtypes, values, NULL);
	/* not reached: the caller holds the row's lock */
	if (SPI_processed != 1)
		elog(ERROR, "subscriber %d vanished", id);
	handler = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	here = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	SPI_freetuptable(SPI_tuptable);
	if (!here || !OidIsValid(handler) ||
		!SearchSysCacheExists1(PROCOID, ObjectIdGetDatum(handler)))
		return InvalidOid;
	return handler;
}

/*
 * What alter_subscriber() changes: each "set_" field says whether its value
 * is to be written; everything else is kept.
 */
typedef struct DdlnAlteration
{
	bool		set_handler;
	Oid			handler;
	bool		set_filter[3];	/* by DdlnFilterKind */
	Datum		filter[3];
	bool		filter_null[3];
	bool		set_max_attempts;
	int32		max_attempts;	/* 0: retry for ever (NULL) */
	bool		set_echo;
	bool		echo;
	bool		set_enabled;
	bool		enabled;
} DdlnAlteration;

/*
 * Apply an alteration to subscriber "name".  Its row is locked first, so a
 * batch in flight commits before (the change applies from the next batch),
 * and no batch starts until this transaction ends.  A new handler takes
 * subscribe()'s checks for the subscriber's owner (trust.c); so does the
 * current one when the subscriber is enabled, which also confirms a
 * restored subscriber that was waiting for its owner or a superuser.
 */
static void
DdlnAlter(const char *name, const DdlnAlteration *alt)
{
	Oid			argtypes[17] = {INT4OID, BOOLOID, OIDOID, TEXTOID, INT8OID,
		BOOLOID, TEXTARRAYOID, BOOLOID, TEXTARRAYOID, BOOLOID, TEXTARRAYOID,
	BOOLOID, INT4OID, BOOLOID, BOOLOID, BOOLOID, BOOLOID};
	Datum		values[17];
	char		nulls[17];
	int32		id;
	int32		slot;
	Oid			owner;
	DdlnVerdict verdict;
	bool		confirm = alt->set_handler || (alt->set_enabled && alt->enabled);

	/* untested: as subscribe()'s refusal on a standby (t/003), which this mirrors */
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot alter a subscriber during recovery")));

	/* not reached: in PostgreSQL 15 SPI_connect() returns SPI_OK_CONNECT or raises an ERROR */
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DdlnLookupOwnSubscriber(name, &id, &slot, &owner);

	if (alt->set_handler &&
		!DdlnJudgeHandler(alt->handler, owner, DDLN_BIND_CHOSEN, &verdict))
		DdlnRaiseVerdict(&verdict);
	if (confirm && !alt->set_handler)
	{
		Oid			current = DdlnSubscriberHandler(id);

		/* a handler not found yet is bound later, by its name's rules */
		if (OidIsValid(current) &&
			!DdlnJudgeHandler(current, owner, DDLN_BIND_CHOSEN, &verdict))
			DdlnRaiseVerdict(&verdict);
	}

	memset(nulls, ' ', sizeof(nulls));
	values[0] = Int32GetDatum(id);
	values[1] = BoolGetDatum(alt->set_handler);
	values[2] = ObjectIdGetDatum(alt->handler);
	values[3] = alt->set_handler ?
		CStringGetTextDatum(format_procedure_qualified(alt->handler)) : (Datum) 0;
	nulls[3] = alt->set_handler ? ' ' : 'n';
	values[4] = Int64GetDatum((int64) GetSystemIdentifier());
	for (int k = 0; k < 3; k++)
	{
		values[5 + 2 * k] = BoolGetDatum(alt->set_filter[k]);
		values[6 + 2 * k] = alt->filter[k];
		/* NULL unless given: pause() and resume() leave filter[k] 0, and an
		 * executor hook may copy every parameter (pgaudit does) */
		nulls[6 + 2 * k] = (!alt->set_filter[k] || alt->filter_null[k]) ? 'n' : ' ';
	}
	values[11] = BoolGetDatum(alt->set_max_attempts);
	values[12] = Int32GetDatum(alt->max_attempts);
	nulls[12] = alt->max_attempts == 0 ? 'n' : ' ';
	values[13] = BoolGetDatum(alt->set_echo);
	values[14] = BoolGetDatum(alt->echo);
	values[15] = BoolGetDatum(alt->set_enabled);
	values[16] = BoolGetDatum(alt->enabled);

	DdlnApiExec("UPDATE ddl_notify.subscriber SET "
				"  handler_oid = CASE WHEN $2 THEN $3 ELSE handler_oid END, "
				"  handler = CASE WHEN $2 THEN $4 ELSE handler END, "
				"  resolved_in = CASE WHEN $2 THEN $5 ELSE resolved_in END, "
				"  command_tags = CASE WHEN $6 THEN $7 ELSE command_tags END, "
				"  object_types = CASE WHEN $8 THEN $9 ELSE object_types END, "
				"  schemas = CASE WHEN $10 THEN $11 ELSE schemas END, "
				"  max_attempts = CASE WHEN $12 THEN $13 ELSE max_attempts END, "
				"  echo = CASE WHEN $14 THEN $15 ELSE echo END, "
				"  enabled = CASE WHEN $16 THEN $17 ELSE enabled END, "
				"  confirmed = CASE WHEN $2 OR ($16 AND $17) THEN true ELSE confirmed END, "
				/* a new handler, or a resume, tries the failing event at once */
				"  attempts = CASE WHEN $2 THEN 0 ELSE attempts END, "
				"  next_retry_at = CASE WHEN $2 OR ($16 AND $17) THEN NULL ELSE next_retry_at END "
				"WHERE id OPERATOR(pg_catalog.=) $1",
				17, argtypes, values, nulls);
	SPI_finish();
	if (confirm)
		DdlnWakeWorkerAtCommit();
}

/* alter_subscriber(name, enabled => ...): pause() and resume() */
static void
DdlnSetEnabled(const char *name, bool enabled)
{
	DdlnAlteration alt;

	memset(&alt, 0, sizeof(alt));
	alt.set_enabled = true;
	alt.enabled = enabled;
	DdlnAlter(name, &alt);
}

/*
 * alter_subscriber(name, handler, command_tags, object_types, schemas,
 *					max_attempts, echo, enabled): change what is given,
 * keep the rest.  An empty filter array means every event again; a
 * max_attempts of 0, retry for ever.
 */
Datum
ddl_notify_alter_subscriber(PG_FUNCTION_ARGS)
{
	char	   *name = DdlnCheckName(fcinfo, 0);
	DdlnAlteration alt;

	memset(&alt, 0, sizeof(alt));
	if (!PG_ARGISNULL(1))
	{
		alt.set_handler = true;
		alt.handler = PG_GETARG_OID(1);
	}
	for (int k = 0; k < 3; k++)
	{
		bool		cleared;

		alt.filter[k] = DdlnCheckFilter(fcinfo, 2 + k, (DdlnFilterKind) k,
										&alt.filter_null[k], &cleared);
		alt.set_filter[k] = !alt.filter_null[k] || cleared;
	}
	if (!PG_ARGISNULL(5))
	{
		alt.set_max_attempts = true;
		alt.max_attempts = PG_GETARG_INT32(5);
		if (alt.max_attempts < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("max_attempts must not be negative"),
					 errhint("Pass 0 to retry for ever, or NULL to keep the current setting.")));
	}
	if (!PG_ARGISNULL(6))
	{
		alt.set_echo = true;
		alt.echo = PG_GETARG_BOOL(6);
	}
	if (!PG_ARGISNULL(7))
	{
		alt.set_enabled = true;
		alt.enabled = PG_GETARG_BOOL(7);
	}
	DdlnAlter(name, &alt);
	PG_RETURN_VOID();
}

/*
 * pause(name): no batch starts for the subscriber until resume(); it keeps
 * its position, its events wait (visible as its lag), the others go on.  A
 * batch in flight commits first: pause() waits for it.
 */
Datum
ddl_notify_pause(PG_FUNCTION_ARGS)
{
	DdlnSetEnabled(DdlnCheckName(fcinfo, 0), false);
	PG_RETURN_VOID();
}

/*
 * resume(name): the subscriber receives what waited, in order, and what
 * comes next; for a restored subscriber that waited for confirmation, this
 * is the confirmation (its handler takes subscribe()'s checks).
 */
Datum
ddl_notify_resume(PG_FUNCTION_ARGS)
{
	DdlnSetEnabled(DdlnCheckName(fcinfo, 0), true);
	PG_RETURN_VOID();
}

/*
 * now + timeout, refused with 22023 when the timeout is negative or the sum
 * is not a valid timestamp (an interval of a million years, infinity).
 */
static TimestampTz
DdlnDeadline(TimestampTz now, const Interval *timeout)
{
	int64		usecs;
	int64		part;
	TimestampTz deadline;

	if (pg_mul_s64_overflow((int64) timeout->month * DAYS_PER_MONTH, USECS_PER_DAY, &usecs) ||
		pg_mul_s64_overflow((int64) timeout->day, USECS_PER_DAY, &part) ||
		pg_add_s64_overflow(usecs, part, &usecs) ||
		pg_add_s64_overflow(usecs, timeout->time, &usecs) ||
		pg_add_s64_overflow(now, usecs, &deadline) ||
		!IS_VALID_TIMESTAMP(deadline))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("timeout is out of range"),
				 errhint("Pass a timeout that ends before the year 294276, or call the function again when it returns false.")));
	if (usecs < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("timeout must not be negative")));
	return deadline;
}

/*
 * Every subscriber's subscription point (in the current memory context) and
 * the slots of those wait_for_delivery() waits for: neither paused nor
 * waiting for confirmation (on a subscriber table of 0.1.0: every one).
 */
static int64
DdlnWaitPoints(bool state, DdlnSubscriptionPoints *pts)
{
	MemoryContext cxt = CurrentMemoryContext;
	int64		waited = 0;

	DdlnApiExec(state ?
				"SELECT slot, start_snapshot, start_xid, enabled AND confirmed "
				"FROM ddl_notify.subscriber" :
				"SELECT slot, start_snapshot, start_xid, true FROM ddl_notify.subscriber",
				0, NULL, NULL, NULL);
	pts->n = (int) SPI_processed;
	pts->slots = MemoryContextAlloc(cxt, sizeof(int32) * Max(pts->n, 1));
	pts->snaps = MemoryContextAlloc(cxt, sizeof(Datum) * Max(pts->n, 1));
	pts->start_xids = MemoryContextAlloc(cxt, sizeof(FullTransactionId) * Max(pts->n, 1));
	for (int i = 0; i < pts->n; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		MemoryContext old;

		pts->slots[i] = DatumGetInt32(SPI_getbinval(tup, desc, 1, &isnull));
		old = MemoryContextSwitchTo(cxt);
		pts->snaps[i] = datumCopy(SPI_getbinval(tup, desc, 2, &isnull), false, -1);
		MemoryContextSwitchTo(old);
		pts->start_xids[i] = DatumGetFullTransactionId(SPI_getbinval(tup, desc, 3, &isnull));
		if (DatumGetBool(SPI_getbinval(tup, desc, 4, &isnull)) && !isnull)
			waited |= INT64CONST(1) << pts->slots[i];
	}
	SPI_freetuptable(SPI_tuptable);
	return waited;
}

/*
 * wait_for_delivery(timeout): true once every event committed before the call
 * has been handled by every subscriber that must see it; false at the timeout.
 * A paused subscriber (or one waiting for confirmation) is not waited for.
 * While it waits its database has a worker: the first time it finds work
 * left it wakes the database's worker, or queues the database for one (a
 * wake-up that never came, G14, does not make it wait in vain).
 *
 * What it waits for is fixed when the call begins (the transactions its
 * snapshot sees), so the first look lists those events that some
 * subscriber has yet to handle (fetch.c, DdlnWaitCollect: a walk from the
 * position floor), and each later look, every 10 ms, reads only them, by
 * key (DdlnWaitCheck): no look reads the dead rows an old snapshot keeps in
 * the queue (issue 38).  The subscribers are read again at each look: one
 * paused meanwhile is no longer waited for, one resumed is again.
 */
Datum
ddl_notify_wait_for_delivery(PG_FUNCTION_ARGS)
{
	Interval   *timeout;
	TimestampTz deadline;
	TimestampTz now;
	Datum		visible;
	FullTransactionId own;
	DdlnEventKey *list = NULL;
	int			nlist = 0;
	MemoryContext look;
	bool		done = false;
	bool		asked = false;
	bool		state = DdlnSubscriberHasNames();	/* 0.2.0: paused ones */

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("timeout must not be null")));
	timeout = PG_GETARG_INTERVAL_P(0);
	/* one reading of the clock: with two, a zero timeout could seem negative */
	now = GetCurrentTimestamp();
	deadline = DdlnDeadline(now, timeout);
	if (IsolationUsesXactSnapshot())
		ereport(ERROR,
				(errcode(ERRCODE_ACTIVE_SQL_TRANSACTION),
				 errmsg("ddl_notify.wait_for_delivery() cannot run in a REPEATABLE READ or SERIALIZABLE transaction"),
				 errdetail("It must see the deliverers' commits as they happen.")));

	visible = DirectFunctionCall1(pg_snapshot_in,
								  CStringGetDatum(DdlnSnapshotText(GetLatestSnapshot())));
	own = GetTopFullTransactionIdIfAny();

	look = AllocSetContextCreate(CurrentMemoryContext, "ddl_notify wait",
								 ALLOCSET_DEFAULT_SIZES);
	/* not reached: in PostgreSQL 15 SPI_connect() returns SPI_OK_CONNECT or raises an ERROR */
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	for (bool first = true;; first = false)
	{
		MemoryContext old = MemoryContextSwitchTo(look);
		DdlnSubscriptionPoints pts;
		int64		waited = DdlnWaitPoints(state, &pts);

		if (first)
		{
			/* the list lives as long as the loop: in SPI's memory of the call */
			MemoryContextSwitchTo(old);
			nlist = DdlnWaitCollect(visible, own, &pts, &list);
			MemoryContextSwitchTo(look);
		}
		done = DdlnWaitCheck(&pts, waited, list, &nlist);
		MemoryContextSwitchTo(old);
		MemoryContextReset(look);
		if (done || GetCurrentTimestamp() >= deadline)
			break;
		/* never wait on a database nobody serves: wake its worker, or get one */
		if (!asked)
		{
			DdlnWakeDatabaseWorker(MyDatabaseId);
			asked = true;
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 10L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	SPI_finish();
	MemoryContextDelete(look);
	PG_RETURN_BOOL(done);
}
