/*-------------------------------------------------------------------------
 *
 * apply.c
 *	  The subscriber's half of DDL replication (G16): apply_outbox(), the
 *	  trigger on ddl_notify.ddl_outbox that the subscription's apply worker
 *	  fires when it inserts a row the publisher wrote (outbox.c); skip_ddl();
 *	  and, in shared memory, the error that stopped applying, for
 *	  ddl_apply_status.  What users are told: docs/replication.md.
 *
 * Rules kept here:
 * - The row is applied where the apply worker meets it: in the publisher's
 *	 transaction, between that transaction's rows, so a row that uses what
 *	 the statement made is applied after it.  The row itself is never
 *	 stored (the trigger returns NULL).  A row inserted by anything but a
 *	 logical replication worker is refused: only outbox.c writes the table,
 *	 without triggers.  Rows a table synchronization copies are the
 *	 publisher's history and are ignored.
 * - Applied once: a row is ignored when its subscription was not handed
 *	 to apply_ddl(), when none of its publications is the subscription's,
 *	 when it first ran in this very cluster (it came back), or when
 *	 ddl_notify.ddl_applied already has its origin and event id (another
 *	 subscription brought it, or skip_ddl() did).  Otherwise its ddl_applied
 *	 row is claimed first (INSERT ... ON CONFLICT DO NOTHING, which waits
 *	 for a concurrent claim to end), then the statement runs, in the same
 *	 transaction as the apply worker's progress: a crash before that commit
 *	 applies it again from the start, after it never.
 * - As whom: the statement runs as the role of the publisher's row
 *	 (role_name, by name), in a security-restricted operation, and only if
 *	 the role that called apply_ddl() has that role's privileges; a role
 *	 missing here stops applying.  So a role on the publisher can make the
 *	 subscriber do what the role of its name may do here, and nothing more.
 *	 The search_path is the publisher's, set for the statement alone, and
 *	 so are the settings that change what its literals mean (DateStyle,
 *	 TimeZone, ...: common.c), taken by name from the row.
 * - Checked: after the statement, each relation with an "after" image in
 *	 the row is read here with relimage.c's own reader and compared
 *	 (ddl_notify.image_difference(), in SQL: what the publisher defines must
 *	 be equal; what the subscriber added itself is not a difference); a
 *	 relation the row dropped must be gone.  Any difference, and any error,
 *	 stops applying: the error is raised in the apply worker, whose
 *	 transaction (the statement, the rows, its progress) rolls back and is
 *	 retried by PostgreSQL until it succeeds, so nothing is skipped or
 *	 applied halfway.  Before it propagates, the error is kept in shared
 *	 memory with the event's id (DDLN_APPLY_ERRORS slots, one per
 *	 subscription, the oldest reused); a later success for the subscription
 *	 clears it.
 * - A table the statement created (CREATE TABLE, CREATE TABLE AS, SELECT
 *	 INTO) is made part of the subscription as synchronized
 *	 (pg_subscription_rel state 'r') in the same transaction, so that its
 *	 rows, which follow in the stream, are applied with no REFRESH
 *	 PUBLICATION.
 * - A CREATE TABLE AS or SELECT INTO comes as two rows (outbox.c): the
 *	 statement, run here WITH NO DATA (its parse tree changed, then run
 *	 as a function's statement is) before the rows that fill it, then its
 *	 images, only checked.
 * - CONCURRENTLY (CREATE INDEX, DROP INDEX, REINDEX, DETACH PARTITION)
 *	 cannot run inside the apply worker's transaction: the keyword is left
 *	 out there, found by the parser's own reading of the statement.
 *
 * Floor: API: called through fmgr (the trigger, skip_ddl(),
 * ddl_apply_errors()) and by _PG_init (its shared memory); calls
 * replicate.c (its SQL, the subscription look-up), relimage.c (the image
 * to check) and common.c.
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_class.h"
#include "catalog/pg_subscription.h"
#include "catalog/pg_subscription_rel.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "parser/parser.h"
#include "catalog/namespace.h"
#include "tcop/tcopprot.h"
#include "tcop/utility.h"
#include "tcop/dest.h"
#include "optimizer/optimizer.h"
#include "replication/worker_internal.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "common.h"

PG_FUNCTION_INFO_V1(ddl_notify_apply_outbox);
PG_FUNCTION_INFO_V1(ddl_notify_skip_ddl);
PG_FUNCTION_INFO_V1(ddl_notify_ddl_apply_errors);

#define DDLN_APPLY_ERRORS 64
#define DDLN_APPLY_ERROR_LEN 1024

/* The error that stopped applying a subscription's DDL. */
typedef struct DdlnApplyError
{
	Oid			dboid;			/* InvalidOid: free */
	Oid			subid;
	int64		event;			/* origin_id of the row */
	int64		origin;
	TimestampTz at;
	char		message[DDLN_APPLY_ERROR_LEN];
} DdlnApplyError;

static DdlnApplyError *apply_errors = NULL;
static LWLock *apply_errors_lock = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* An outbox row, as read from the apply worker's tuple. */
typedef struct DdlnOutboxRow
{
	int64		id;
	int64		origin;
	int64		origin_id;
	ArrayType  *publications;
	char	   *role_name;
	char	   *search_path;
	char	   *command_tag;
	char	   *statement;		/* NULL: withheld on the publisher */
	Jsonb	   *objects;
	TimestampTz created_at;
	char	   *action;			/* statement, create without data, check */
	Jsonb	   *settings;		/* what its literals are read under */
} DdlnOutboxRow;

/* One element of the row's objects, for the check. */
typedef struct DdlnApplyObject
{
	char	   *type;
	char	   *tag;
	char	   *event;
	char	   *relname;		/* qualified name: the after image's, or the identity */
	Datum		before;			/* jsonb, or 0 */
	Datum		after;			/* jsonb, or 0 */
} DdlnApplyObject;

/* Shared memory. */

static void
DdlnApplyShmemRequestHook(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(sizeof(DdlnApplyError) * DDLN_APPLY_ERRORS);
	RequestNamedLWLockTranche("ddl_notify apply", 1);
}

static void
DdlnApplyShmemStartup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	apply_errors = ShmemInitStruct("ddl_notify apply errors",
								   sizeof(DdlnApplyError) * DDLN_APPLY_ERRORS, &found);
	if (!found)
		memset(apply_errors, 0, sizeof(DdlnApplyError) * DDLN_APPLY_ERRORS);
	apply_errors_lock = &(GetNamedLWLockTranche("ddl_notify apply"))->lock;
	LWLockRelease(AddinShmemInitLock);
}

void
DdlnApplyShmemRequest(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = DdlnApplyShmemRequestHook;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = DdlnApplyShmemStartup;
}

/* Keep (message != NULL) or clear the error of subscription subid. */
static void
DdlnApplyKeepError(Oid subid, int64 event, int64 origin, const char *message)
{
	DdlnApplyError *slot = NULL;

	if (apply_errors == NULL)
		return;
	LWLockAcquire(apply_errors_lock, LW_EXCLUSIVE);
	for (int i = 0; i < DDLN_APPLY_ERRORS; i++)
	{
		DdlnApplyError *e = &apply_errors[i];

		if (e->dboid == MyDatabaseId && e->subid == subid)
			slot = e;
		else if (message && slot == NULL && !OidIsValid(e->dboid))
			slot = e;
	}
	if (message == NULL)
	{
		if (slot)
			slot->dboid = InvalidOid;
		LWLockRelease(apply_errors_lock);
		return;
	}
	if (slot == NULL)
	{
		slot = &apply_errors[0];
		for (int i = 1; i < DDLN_APPLY_ERRORS; i++)
			if (apply_errors[i].at < slot->at)
				slot = &apply_errors[i];
	}
	slot->dboid = MyDatabaseId;
	slot->subid = subid;
	slot->event = event;
	slot->origin = origin;
	slot->at = GetCurrentTimestamp();
	strlcpy(slot->message, message, DDLN_APPLY_ERROR_LEN);
	LWLockRelease(apply_errors_lock);
}

/* The kept error of subscription subid, if any. */
static bool
DdlnApplyGetError(Oid subid, DdlnApplyError *out)
{
	bool		found = false;

	if (apply_errors == NULL)
		return false;
	LWLockAcquire(apply_errors_lock, LW_SHARED);
	for (int i = 0; i < DDLN_APPLY_ERRORS; i++)
	{
		if (apply_errors[i].dboid == MyDatabaseId && apply_errors[i].subid == subid)
		{
			*out = apply_errors[i];
			found = true;
			break;
		}
	}
	LWLockRelease(apply_errors_lock);
	return found;
}

/* The row's columns, from the tuple the apply worker is inserting. */
static void
DdlnApplyReadRow(HeapTuple tup, TupleDesc desc, DdlnOutboxRow *row)
{
	Datum		v[12];
	bool		n[12];

	heap_deform_tuple(tup, desc, v, n);
	row->id = DatumGetInt64(v[0]);
	row->origin = DatumGetInt64(v[1]);
	row->origin_id = DatumGetInt64(v[2]);
	row->publications = DatumGetArrayTypeP(v[3]);
	row->role_name = pstrdup(NameStr(*DatumGetName(v[4])));
	row->search_path = TextDatumGetCString(v[5]);
	row->command_tag = TextDatumGetCString(v[6]);
	row->statement = n[7] ? NULL : TextDatumGetCString(v[7]);
	row->objects = DatumGetJsonbPCopy(v[8]);
	row->created_at = DatumGetTimestampTz(v[9]);
	row->action = TextDatumGetCString(v[10]);
	row->settings = DatumGetJsonbPCopy(v[11]);
}

/*
 * Set, in the current GUC nest level, the row's settings that change what
 * its statement's literals mean (common.c's ddln_text_settings), by name:
 * any other key the publisher sent is not looked at, and a value
 * PostgreSQL refuses is an error that stops applying.
 */
static void
DdlnApplySettings(const DdlnOutboxRow *row)
{
	for (int i = 0; i < DDLN_TEXT_SETTINGS; i++)
	{
		JsonbValue	key;
		JsonbValue *v;
		char	   *value;

		key.type = jbvString;
		key.val.string.val = (char *) ddln_text_settings[i];
		key.val.string.len = strlen(ddln_text_settings[i]);
		v = findJsonbValueFromContainer(&row->settings->root, JB_FOBJECT, &key);
		if (v == NULL || v->type != jbvString)
			continue;
		value = pnstrdup(v->val.string.val, v->val.string.len);
		(void) set_config_option(ddln_text_settings[i], value, PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
	}
}

/* Is one of the row's publications one the subscription subscribes to? */
static bool
DdlnApplyForThisSubscription(const DdlnOutboxRow *row)
{
	Datum	   *names;
	bool	   *nulls;
	int			n;
	ListCell   *lc;

	deconstruct_array(row->publications, NAMEOID, NAMEDATALEN, false, TYPALIGN_CHAR,
					  &names, &nulls, &n);
	foreach(lc, MySubscription->publications)
	{
		for (int i = 0; i < n; i++)
		{
			if (!nulls[i] && strcmp(NameStr(*DatumGetName(names[i])), strVal(lfirst(lc))) == 0)
				return true;
		}
	}
	return false;
}

/*
 * The role that called apply_ddl() for this subscription, or InvalidOid
 * when it was not handed over.  If it was: claim the row's origin and
 * event id in ddl_applied; *done when another transaction has it (another
 * subscription applied it, or skip_ddl() skipped it).  ON CONFLICT DO
 * NOTHING waits for a claim still in progress: two subscriptions bringing
 * the same statement at once apply it once, the second after the first
 * committed, never both.
 */
static Oid
DdlnApplyApplier(const DdlnOutboxRow *row, bool *done)
{
	Oid			types[3] = {OIDOID, INT8OID, INT8OID};
	Datum		values[3] = {ObjectIdGetDatum(MySubscription->oid),
	Int64GetDatum(row->origin), Int64GetDatum(row->origin_id)};
	bool		isnull;
	Datum		d;

	if (DdlnReplicationSql("SELECT applier FROM ddl_notify.ddl_apply "
					 "WHERE subid OPERATOR(pg_catalog.=) $1", 1, types, values) == 0)
		return InvalidOid;
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	*done = DdlnReplicationSql("INSERT INTO ddl_notify.ddl_applied (origin, origin_id, subid, skipped) "
						 "VALUES ($2, $3, $1, false) ON CONFLICT DO NOTHING",
						 3, types, values) == 0;
	return isnull ? InvalidOid : DatumGetObjectId(d);
}

/*
 * The statement without CONCURRENTLY, when the parser says it has it (the
 * first CONCURRENTLY outside quotes and comments is the keyword: it is not
 * a name PostgreSQL accepts unquoted there); else the statement itself.
 */
static bool
DdlnApplyIsConcurrent(const char *stmt)
{
	List	   *raw = raw_parser(stmt, RAW_PARSE_DEFAULT);
	Node	   *n;

	if (list_length(raw) != 1)
		return false;
	n = ((RawStmt *) linitial(raw))->stmt;
	if (IsA(n, IndexStmt))
		return ((IndexStmt *) n)->concurrent;
	if (IsA(n, DropStmt))
		return ((DropStmt *) n)->concurrent;
	if (IsA(n, AlterTableStmt))
	{
		ListCell   *lc;

		foreach(lc, ((AlterTableStmt *) n)->cmds)
		{
			AlterTableCmd *cmd = (AlterTableCmd *) lfirst(lc);

			if (cmd->subtype == AT_DetachPartition &&
				((PartitionCmd *) cmd->def)->concurrent)
				return true;
		}
	}
	return false;
}

/* Can c be part of an unquoted name (or a $n)? */
static bool
DdlnApplyNameChar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		c == '_' || c == '$' || IS_HIGHBIT_SET(c);
}

static char *
DdlnApplyWithoutConcurrently(const char *stmt)
{
	const char *p = stmt;
	int			depth;

	if (!DdlnApplyIsConcurrent(stmt))
		return (char *) stmt;
	while (*p)
	{
		if (*p == '\'' || *p == '"')
		{
			char		q = *p++;

			while (*p && !(*p == q && p[1] != q))
				p += (*p == q) ? 2 : 1;
			if (*p)
				p++;
		}
		else if (p[0] == '-' && p[1] == '-')
			p += strcspn(p, "\n");
		else if (p[0] == '/' && p[1] == '*')
		{
			for (depth = 1, p += 2; *p && depth > 0; p++)
			{
				if (p[0] == '/' && p[1] == '*')
					depth++, p++;
				else if (p[0] == '*' && p[1] == '/')
					depth--, p++;
			}
		}
		else if (pg_strncasecmp(p, "concurrently", 12) == 0 &&
				 (p == stmt || !DdlnApplyNameChar(p[-1])) && !DdlnApplyNameChar(p[12]))
			return psprintf("%.*s%s", (int) (p - stmt), stmt, p + 12);
		else
			p++;
	}
	return (char *) stmt;
}

/*
 * CREATE TABLE AS / SELECT INTO "stmt" WITH NO DATA (its rows follow in
 * the stream), run as PostgreSQL runs a statement of a function; its table
 * becomes part of the subscription, synchronized.
 */
static void
DdlnApplyCreateWithoutData(const char *stmt)
{
	List	   *raw = raw_parser(stmt, RAW_PARSE_DEFAULT);
	RawStmt    *rs;
	IntoClause *into = NULL;
	List	   *planned;
	ListCell   *lc;
	Oid			relid;
	XLogRecPtr	lsn;

	if (list_length(raw) == 1)
	{
		rs = (RawStmt *) linitial(raw);
		if (IsA(rs->stmt, CreateTableAsStmt))
			into = ((CreateTableAsStmt *) rs->stmt)->into;
		else if (IsA(rs->stmt, SelectStmt))
			into = ((SelectStmt *) rs->stmt)->intoClause;
	}
	/* not reached: outbox.c writes this action for these statements only */
	if (into == NULL)
		elog(ERROR, "ddl_notify: \"%s\" is no CREATE TABLE AS", stmt);
	into->skipData = true;
	planned = pg_plan_queries(pg_analyze_and_rewrite_fixedparams(rs, stmt, NULL, 0, NULL),
							  stmt, CURSOR_OPT_PARALLEL_OK, NULL);
	foreach(lc, planned)
		ProcessUtility(lfirst_node(PlannedStmt, lc), stmt, false, PROCESS_UTILITY_QUERY,
					   NULL, NULL, None_Receiver, NULL);
	CommandCounterIncrement();
	relid = RangeVarGetRelid(into->rel, NoLock, false);
	if (GetSubscriptionRelState(MySubscription->oid, relid, &lsn) == SUBREL_STATE_UNKNOWN)
		DdlnAddSubscriptionRelState(MySubscription->oid, relid, SUBREL_STATE_READY,
									InvalidXLogRecPtr);
}

/* Run the row's statement as its role, with its search_path and settings. */
static void
DdlnApplyRun(const DdlnOutboxRow *row, Oid applier)
{
	Oid			role = get_role_oid(row->role_name, true);
	Oid			save_user;
	int			save_sec;
	int			nestlevel;
	int			rc;
	char	   *stmt;

	if (row->statement == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the statement of event %lld held a secret and was not replicated",
						(long long) row->origin_id),
				 errhint("Run it here by hand, then call ddl_notify.skip_ddl('%s', %lld).",
						 MySubscription->name, (long long) row->origin_id)));
	if (!OidIsValid(role))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("role \"%s\", which ran event %lld on the publisher, does not exist here",
						row->role_name, (long long) row->origin_id)));
	/*
	 * Untested: the role that called apply_ddl() owns the subscription, and
	 * only PostgreSQL 16 and later let a role that is not a superuser own
	 * one (with a password to the publisher, which the tests' clusters do
	 * not use).
	 */
	if (!has_privs_of_role(applier, role))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("role %s, which handed subscription \"%s\" to apply_ddl(), may not act as role %s",
						GetUserNameFromId(applier, false), MySubscription->name,
						row->role_name)));
	stmt = DdlnApplyWithoutConcurrently(row->statement);

	GetUserIdAndSecContext(&save_user, &save_sec);
	SetUserIdAndSecContext(role, save_sec | SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	nestlevel = NewGUCNestLevel();
	(void) set_config_option("search_path", row->search_path, PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	DdlnApplySettings(row);
	ddln_apply_origin.origin = row->origin;
	ddln_apply_origin.origin_id = row->origin_id;
	ddln_apply_origin.set = true;
	if (strcmp(row->action, "create without data") == 0)
	{
		DdlnApplyCreateWithoutData(stmt);
		rc = 0;
	}
	else
		rc = SPI_execute(stmt, false, 0);
	ddln_apply_origin.set = false;
	AtEOXact_GUC(true, nestlevel);
	SetUserIdAndSecContext(save_user, save_sec);
	/* not reached: negative only for bad arguments; a statement's failure is an ERROR */
	if (rc < 0)
		elog(ERROR, "ddl_notify: the statement of event %lld failed: %s",
			 (long long) row->origin_id, SPI_result_code_string(rc));
	CommandCounterIncrement();
}

/* The row's objects, last first (the last image of a relation is its state). */
static DdlnApplyObject *
DdlnApplyObjects(const DdlnOutboxRow *row, int *count)
{
	Oid			types[1] = {JSONBOID};
	Datum		values[1] = {JsonbPGetDatum(row->objects)};
	MemoryContext upper = CurrentMemoryContext;
	DdlnApplyObject *objs;
	uint64		n;

	n = DdlnReplicationSql("SELECT o ->> 'type', o ->> 'tag', o ->> 'event', "
					 "COALESCE(quote_ident(o -> 'after' ->> 'schema') || '.' || "
					 "quote_ident(o -> 'after' ->> 'name'), o ->> 'identity'), "
					 "o -> 'before', o -> 'after' "
					 "FROM jsonb_array_elements($1) WITH ORDINALITY AS a(o, n) "
					 "ORDER BY n DESC", 1, types, values);
	objs = MemoryContextAllocZero(upper, sizeof(DdlnApplyObject) * (n + 1));
	for (uint64 i = 0; i < n; i++)
	{
		HeapTuple	t = SPI_tuptable->vals[i];
		TupleDesc	d = SPI_tuptable->tupdesc;
		bool		isnull;
		Datum		v;
		char	   *s;

		s = SPI_getvalue(t, d, 1);
		objs[i].type = s ? MemoryContextStrdup(upper, s) : NULL;
		s = SPI_getvalue(t, d, 2);
		objs[i].tag = s ? MemoryContextStrdup(upper, s) : NULL;
		s = SPI_getvalue(t, d, 3);
		objs[i].event = s ? MemoryContextStrdup(upper, s) : "";
		s = SPI_getvalue(t, d, 4);
		objs[i].relname = s ? MemoryContextStrdup(upper, s) : NULL;
		v = SPI_getbinval(t, d, 5, &isnull);
		objs[i].before = isnull ? (Datum) 0 : SPI_datumTransfer(v, false, -1);
		v = SPI_getbinval(t, d, 6, &isnull);
		objs[i].after = isnull ? (Datum) 0 : SPI_datumTransfer(v, false, -1);
	}
	*count = (int) n;
	return objs;
}

/* The relation named "qualified" here, or InvalidOid. */
static Oid
DdlnApplyRelation(const char *qualified)
{
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(qualified)};
	bool		isnull;
	Datum		d;

	if (DdlnReplicationSql("SELECT pg_catalog.to_regclass($1)::oid", 1, types, values) != 1)
		return InvalidOid;
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	return isnull ? InvalidOid : DatumGetObjectId(d);
}

/* A table the statement created becomes part of the subscription, synchronized. */
static void
DdlnApplyNewTable(const DdlnApplyObject *o, Oid relid)
{
	XLogRecPtr	lsn;
	char		relkind = get_rel_relkind(relid);

	if (o->tag == NULL || o->type == NULL || strcmp(o->type, "table") != 0 ||
		!(strcmp(o->tag, "CREATE TABLE") == 0 || strcmp(o->tag, "CREATE TABLE AS") == 0 ||
		  strcmp(o->tag, "SELECT INTO") == 0) ||
		!(relkind == RELKIND_RELATION || relkind == RELKIND_PARTITIONED_TABLE))
		return;
	if (GetSubscriptionRelState(MySubscription->oid, relid, &lsn) != SUBREL_STATE_UNKNOWN)
		return;
	DdlnAddSubscriptionRelState(MySubscription->oid, relid, SUBREL_STATE_READY,
								InvalidXLogRecPtr);
	CommandCounterIncrement();
}

/* Compare one relation's image here with the publisher's. */
static void
DdlnApplyCheckImage(const DdlnOutboxRow *row, const DdlnApplyObject *o, Oid relid)
{
	Jsonb	   *here = DdlnRelationImageNow(relid);
	Oid			types[3] = {JSONBOID, JSONBOID, JSONBOID};
	Datum		values[3];
	char	   *diff;

	if (here == NULL)
		return;
	values[0] = o->after;
	values[1] = o->before ? o->before : DirectFunctionCall1(jsonb_in, CStringGetDatum("{}"));
	values[2] = JsonbPGetDatum(here);
	(void) DdlnReplicationSql("SELECT ddl_notify.image_difference($1, $2, $3 -> 'after')",
						3, types, values);
	diff = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	if (diff != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("after event %lld, relation %s here differs from the publisher's",
						(long long) row->origin_id, o->relname),
				 errdetail("%s", diff)));
}

/* After the statement: new tables, and every relation checked. */
static void
DdlnApplyCheck(const DdlnOutboxRow *row)
{
	int			n;
	DdlnApplyObject *objs = DdlnApplyObjects(row, &n);
	List	   *seen = NIL;

	for (int i = 0; i < n; i++)
	{
		DdlnApplyObject *o = &objs[i];
		Oid			relid;

		if (o->relname == NULL)
			continue;
		/*
		 * The next two errors are a statement that succeeded and still left
		 * a dropped relation in place, or made none of the name its image
		 * has: defensive, no statement PostgreSQL runs does so (untested).
		 */
		if (strcmp(o->event, "sql_drop") == 0)
		{
			if (o->type && (strcmp(o->type, "table") == 0 || strcmp(o->type, "view") == 0 ||
							strcmp(o->type, "materialized view") == 0 ||
							strcmp(o->type, "sequence") == 0 ||
							strcmp(o->type, "foreign table") == 0) &&
				OidIsValid(DdlnApplyRelation(o->relname)))
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("after event %lld, %s %s still exists here",
								(long long) row->origin_id, o->type, o->relname)));
			continue;
		}
		if (o->after == (Datum) 0)
			continue;
		relid = DdlnApplyRelation(o->relname);
		if (!OidIsValid(relid))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("after event %lld, relation %s does not exist here",
							(long long) row->origin_id, o->relname)));
		DdlnApplyNewTable(o, relid);
		if (list_member_oid(seen, relid))
			continue;
		seen = lappend_oid(seen, relid);
		DdlnApplyCheckImage(row, o, relid);
	}
}

/* Count the row as applied (or skipped) for subscription subid. */
static void
DdlnApplyDone(Oid subid, int64 origin, int64 origin_id, TimestampTz published, bool skipped)
{
	Oid			types[5] = {INT8OID, INT8OID, OIDOID, BOOLOID, TIMESTAMPTZOID};
	Datum		values[5] = {Int64GetDatum(origin), Int64GetDatum(origin_id),
		ObjectIdGetDatum(subid), BoolGetDatum(skipped),
	TimestampTzGetDatum(published)};

	/* an applied row was claimed before it ran (DdlnApplyApplier) */
	if (skipped &&
		DdlnReplicationSql("INSERT INTO ddl_notify.ddl_applied (origin, origin_id, subid, skipped) "
					 "VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING", 4, types, values) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("event %lld is applied already", (long long) origin_id)));
	(void) DdlnReplicationSql(skipped ?
						"UPDATE ddl_notify.ddl_apply SET skipped = skipped OPERATOR(pg_catalog.+) 1 "
						"WHERE subid OPERATOR(pg_catalog.=) $3" :
						"UPDATE ddl_notify.ddl_apply SET applied = applied OPERATOR(pg_catalog.+) 1, "
						"last_applied_event = $2, last_origin = $1, last_published_at = $5, "
						"last_applied_at = pg_catalog.clock_timestamp() "
						"WHERE subid OPERATOR(pg_catalog.=) $3", 5, types, values);
	DdlnApplyKeepError(subid, 0, 0, NULL);
}

static void
DdlnApplyErrorContext(void *arg)
{
	const DdlnOutboxRow *row = (const DdlnOutboxRow *) arg;

	errcontext("applying replicated DDL event %lld (%s) of subscription \"%s\"",
			   (long long) row->origin_id, row->command_tag, MySubscription->name);
}

/* Apply one outbox row, in the apply worker. */
static void
DdlnApplyRow(DdlnOutboxRow *row)
{
	MemoryContext cxt = CurrentMemoryContext;
	ErrorContextCallback errcb;
	Oid			applier;
	bool		done = false;

	if (row->origin == (int64) GetSystemIdentifier() || !DdlnApplyForThisSubscription(row))
		return;
	applier = DdlnApplyApplier(row, &done);
	if (!OidIsValid(applier))
		return;
	if (done)
	{
		/* applied by another path: nothing stops this subscription here */
		DdlnApplyKeepError(MySubscription->oid, 0, 0, NULL);
		return;
	}

	errcb.callback = DdlnApplyErrorContext;
	errcb.arg = row;
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;
	PG_TRY();
	{
		if (strcmp(row->action, "check") != 0)
			DdlnApplyRun(row, applier);
		DdlnApplyCheck(row);
		DdlnApplyDone(MySubscription->oid, row->origin, row->origin_id, row->created_at, false);
	}
	PG_CATCH();
	{
		ErrorData  *ed;

		ddln_apply_origin.set = false;
		MemoryContextSwitchTo(cxt);
		ed = CopyErrorData();
		DdlnApplyKeepError(MySubscription->oid, row->origin_id, row->origin,
						   ed->detail ? psprintf("%s: %s", ed->message, ed->detail) : ed->message);
		PG_RE_THROW();
	}
	PG_END_TRY();
	error_context_stack = errcb.previous;
}

/*
 * BEFORE INSERT OR UPDATE OR DELETE FOR EACH ROW on ddl_notify.ddl_outbox,
 * enabled ALWAYS.
 */
Datum
ddl_notify_apply_outbox(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	DdlnOutboxRow row;

	/* untested: only a superuser can attach the function to another trigger */
	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_FOR_ROW(td->tg_event) ||
		!TRIGGER_FIRED_BEFORE(td->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("ddl_notify.apply_outbox() is a BEFORE ROW trigger")));
	if (MyLogicalRepWorker == NULL)
	{
		if (TRIGGER_FIRED_BY_INSERT(td->tg_event))
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("rows of ddl_notify.ddl_outbox are written by ddl_notify only")));
		return PointerGetDatum(TRIGGER_FIRED_BY_UPDATE(td->tg_event) ?
							   td->tg_newtuple : td->tg_trigtuple);
	}
	if (!TRIGGER_FIRED_BY_INSERT(td->tg_event))
		return PointerGetDatum(NULL);
	/* a table synchronization's copy: the publisher's history */
	if (am_tablesync_worker() && MyLogicalRepWorker->relstate == SUBREL_STATE_DATASYNC)
		return PointerGetDatum(NULL);

	DdlnApplyReadRow(td->tg_trigtuple, RelationGetDescr(td->tg_relation), &row);
	/* not reached: SPI_connect fails only with no transaction */
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "ddl_notify: SPI_connect failed");
	DdlnApplyRow(&row);
	SPI_finish();
	return PointerGetDatum(NULL);
}

/* skip_ddl(subscription, event): the stopped event counts as applied by hand. */
Datum
ddl_notify_skip_ddl(PG_FUNCTION_ARGS)
{
	Name		name = PG_GETARG_NAME(0);
	int64		event = PG_GETARG_INT64(1);
	Oid			subid = DdlnReplicationSubscription(name);
	DdlnApplyError e;

	if (!DdlnApplyGetError(subid, &e) || e.event != event)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("applying the DDL of subscription \"%s\" is not stopped at event %lld",
						NameStr(*name), (long long) event),
				 errhint("ddl_notify.ddl_apply_status shows the event it stopped at.")));
	SPI_connect();
	DdlnApplyDone(subid, e.origin, event, 0, true);
	SPI_finish();
	PG_RETURN_VOID();
}

/* ddl_apply_errors(): the kept errors of this database's subscriptions. */
Datum
ddl_notify_ddl_apply_errors(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	DdlnApplyError *copy;
	int			n = 0;

	InitMaterializedSRF(fcinfo, 0);
	if (apply_errors == NULL)
		return (Datum) 0;
	copy = palloc(sizeof(DdlnApplyError) * DDLN_APPLY_ERRORS);
	LWLockAcquire(apply_errors_lock, LW_SHARED);
	for (int i = 0; i < DDLN_APPLY_ERRORS; i++)
		if (apply_errors[i].dboid == MyDatabaseId)
			copy[n++] = apply_errors[i];
	LWLockRelease(apply_errors_lock);
	for (int i = 0; i < n; i++)
	{
		Datum		values[5];
		bool		nulls[5] = {0};

		values[0] = ObjectIdGetDatum(copy[i].subid);
		values[1] = Int64GetDatum(copy[i].event);
		values[2] = Int64GetDatum(copy[i].origin);
		values[3] = CStringGetTextDatum(copy[i].message);
		values[4] = TimestampTzGetDatum(copy[i].at);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
