/*-------------------------------------------------------------------------
 *
 * common.c
 *	  The ground every other file stands on: the subscription-point lock,
 *	  the safe context the extension runs its own SQL in, the cache of the
 *	  extension's relation OIDs, and the text of the statement running now.
 *
 * Rules kept here:
 * - It calls no other file of ddl_notify, and every other file may call it;
 *	 the entry (ddl_notify.c: settings and hooks) is at the other end, called
 *	 by none.
 * - No SQL, no shared memory.  What it keeps is per backend: the settings'
 *	 variables (ddl_notify.c defines the settings), the relation OIDs
 *	 (forgotten on any invalidation that may concern them), the statement
 *	 the utility hook is running (ddl_notify.c sets it, capture reads it
 *	 through DdlnCurrentStatementText()), the handler call running now
 *	 (deliver.c sets ddln_current_origin and ddln_current_chain, capture
 *	 reads them), the numerics of small integers the jsonb trees point
 *	 to (DdlnJvInt: values, never changed) and the size of the last jsonb
 *	 DdlnJvToJsonb wrote (the next one's first buffer size).
 * - DdlnInsertUnpublished() writes a row of the extension's tables as
 *	 PostgreSQL writes its catalogs, unseen by logical decoding (G0): capture
 *	 and counter.c's commit positions use it.  DdlnInsertRow() is the same
 *	 with a choice: DDL replication's outbox rows are for logical decoding.
 * - DdlnTryQuietly() runs a look-up in a subtransaction that swallows its
 *	 error, for the catalog functions whose only "no" is an ERROR.
 * - DdlnBeginSafe() enters the safe context; DdlnEndSafe() leaves it, or the
 *	 transaction's abort does.
 * - jsonb is built directly with PostgreSQL's builder (pushJsonbValue,
 *	 through compat.h's DdlnJsonbPush), as jsonb_in does after parsing: no
 *	 JSON text is printed, escaped and parsed again.  DdlnJsonKey() and the
 *	 scalar helpers here are the one set every builder of details uses
 *	 (capture's keys, the images).  A tree built directly (DdlnJv*) is
 *	 written by DdlnJvToJsonb: JsonbValueToJsonb's bytes, byte for byte,
 *	 but an object two places of the tree share (the same pairs array)
 *	 written once and copied; built with -DDDLN_CHECK_JSONB or assertions,
 *	 every call compares its bytes with JsonbValueToJsonb's.
 *
 * Floor: ground: every file may call it; it calls no other file of
 * ddl_notify.
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_namespace.h"
#include "common/hashfn.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "storage/lock.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/fmgroids.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/rel.h"
#include "utils/resowner.h"
#include "utils/syscache.h"

#include "common.h"

/* every jsonb DdlnJvToJsonb writes compared with PostgreSQL's (tests) */
#if defined(USE_ASSERT_CHECKING) && !defined(DDLN_CHECK_JSONB)
#define DDLN_CHECK_JSONB
#endif

/* the statement being executed (the utility hook's), for capture */
DdlnStatement ddln_statement = {NULL, -1, 0};

/*
 * The handler call running now, if any (deliver.c sets them around the call,
 * capture reads them): the subscriber whose handler runs, and the
 * origin_chain (text[]) of the event it handles, 0 if none.
 */
const char *ddln_current_origin = NULL;
Datum		ddln_current_chain = (Datum) 0;

/*
 * The settings' variables: ddl_notify.c, the entry, defines the settings
 * (_PG_init) and every floor reads them here.
 */
bool		ddln_capture_temp = false;
bool		ddln_capture_query = true;
bool		ddln_capture_changes = true;
int			ddln_batch_size = 1000;
int			ddln_retry_initial_delay = 1000;
int			ddln_retry_max_delay = 300000;
int			ddln_handler_timeout = 300000;
int			ddln_max_workers = 8;
int			ddln_poll_interval = 5000;
int			ddln_stream_interval = 2;
bool		ddln_wal_messages = false;
int			ddln_wal_message_version = DDLN_WAL_MESSAGE_VERSION;
int			ddln_max_query_length = 65536;
int			ddln_batch_memory = 8192;
int			ddln_lock_timeout = 1000;
int			ddln_max_chain_length = 4;
int			ddln_max_subscribers_per_role = 16;
int			ddln_worker_idle_timeout = 10000;
int			ddln_max_workers_per_database = 2;

/*
 * Take the subscription-point lock in the given mode until the end of the
 * transaction.
 */
void
DdlnLockSubscriptionPoint(LOCKMODE mode)
{
	LOCKTAG		tag;

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, DDLN_LOCK_KEY1, DDLN_LOCK_KEY2,
						 DDLN_LOCK_FIELD4);
	(void) LockAcquire(&tag, mode, false, false);
}

/*
 * Enter the context the extension runs its own SQL in: as the extension's
 * owner (the only role that may write its tables), with search_path
 * pg_catalog, pg_temp, so that no object or operator a caller put on its
 * search_path can stand in for a built-in one, and with index paths
 * preferred.  Leave it with DdlnEndSafe();
 * an error leaves it through transaction abort.
 */
void
DdlnBeginSafe(DdlnSafeState *st)
{
	/*
	 * search_path: nothing a caller put on its path stands in for a built-in
	 * object or operator.  enable_seqscan: our statements keep generic plans
	 * for the life of a backend, and one planned while the queue was nearly
	 * empty would scan the whole table for ever after; every statement has an
	 * index path.  jit: short statements, compiling them costs more than
	 * running them (and a disabled seq scan's cost would trigger it).
	 */
	static const struct
	{
		const char *name;
		const char *value;
	}			settings[] = {
		{"search_path", "pg_catalog, pg_temp"},
		{"enable_seqscan", "off"},
		{"jit", "off"},
	};

	GetUserIdAndSecContext(&st->save_userid, &st->save_sec);
	SetUserIdAndSecContext(DdlnExtensionOwner(), st->save_sec | SECURITY_LOCAL_USERID_CHANGE);
	st->nestlevel = NewGUCNestLevel();
	for (int i = 0; i < (int) lengthof(settings); i++)
		(void) set_config_option(settings[i].name, settings[i].value,
								 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
								 true, 0, false);
}

void
DdlnEndSafe(DdlnSafeState *st)
{
	AtEOXact_GUC(true, st->nestlevel);
	SetUserIdAndSecContext(st->save_userid, st->save_sec);
}

/*
 * The extension's relation OIDs, for capture (every DDL statement) and the
 * engine (every batch): name lookups cost a catalog cache probe each, so
 * they are made once per backend and forgotten when PostgreSQL says any of
 * these relations (or all relations) may have changed, or any schema did:
 * DROP or ALTER EXTENSION, a rename, an aborted CREATE EXTENSION.
 */
static DdlnRelids ddln_relids;
static bool ddln_relids_valid = false;
static bool ddln_relids_callbacks = false;
static uint64 ddln_relids_invals = 0;	/* invalidations seen, any */

static void
DdlnRelidsForgetRel(Datum arg, Oid relid)
{
	ddln_relids_invals++;
	if (!OidIsValid(relid) ||
		relid == ddln_relids.event || relid == ddln_relids.event_seq ||
		relid == ddln_relids.event_xid || relid == ddln_relids.commit_order ||
		relid == ddln_relids.commit_order_seq || relid == ddln_relids.commit_order_pos)
		ddln_relids_valid = false;
}

static void
DdlnRelidsForgetAll(Datum arg, int cacheid, uint32 hashvalue)
{
	ddln_relids_invals++;
	ddln_relids_valid = false;
}

static Oid
DdlnLookupRelid(const char *name, Oid nspid, bool missing_ok)
{
	Oid			relid = get_relname_relid(name, nspid);

	if (!OidIsValid(relid) && !missing_ok)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation \"%s.%s\" of extension ddl_notify does not exist",
						DDLN_SCHEMA_NAME, name),
				 errhint("Do not drop the extension's objects; DROP EXTENSION and CREATE EXTENSION ddl_notify re-create them.")));
	return relid;
}

/*
 * The owner of the extension (pg_extension.extowner), InvalidOid if it is
 * not installed in this database.  Never the owner of the schema: a role
 * could have created the schema before CREATE EXTENSION (the install script
 * refuses such a schema, see sql/ddl_notify.sql; this does not depend on
 * it).
 */
static Oid
DdlnLookupExtensionOwner(void)
{
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	Oid			owner = InvalidOid;

	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber, F_NAMEEQ,
				CStringGetDatum(DDLN_EXTENSION_NAME));
	rel = table_open(ExtensionRelationId, AccessShareLock);
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
		owner = ((Form_pg_extension) GETSTRUCT(tup))->extowner;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return owner;
}

/*
 * The OIDs, or NULL if the extension's schema or one of them is missing and
 * missing_ok (else an error).  The lookups may read the catalogs, and so
 * process invalidations, meanwhile: what they found is kept only if no
 * invalidation came while they ran (else it is used this once).
 */
const DdlnRelids *
DdlnGetRelids(bool missing_ok)
{
	DdlnRelids	r;
	uint64		invals_before;

	if (ddln_relids_valid)
		return &ddln_relids;
	if (!ddln_relids_callbacks)
	{
		CacheRegisterRelcacheCallback(DdlnRelidsForgetRel, (Datum) 0);
		CacheRegisterSyscacheCallback(NAMESPACEOID, DdlnRelidsForgetAll, (Datum) 0);
		ddln_relids_callbacks = true;
	}

	invals_before = ddln_relids_invals;
	r.nsp = get_namespace_oid(DDLN_SCHEMA_NAME, missing_ok);
	if (!OidIsValid(r.nsp) ||
		!OidIsValid(r.event = DdlnLookupRelid("event", r.nsp, missing_ok)) ||
		!OidIsValid(r.event_seq = DdlnLookupRelid("event_id_seq", r.nsp, missing_ok)) ||
		!OidIsValid(r.event_xid = DdlnLookupRelid("event_xid", r.nsp, missing_ok)) ||
		!OidIsValid(r.commit_order = DdlnLookupRelid("commit_order", r.nsp, missing_ok)) ||
		!OidIsValid(r.commit_order_seq = DdlnLookupRelid("commit_order_pos_seq", r.nsp, missing_ok)) ||
		!OidIsValid(r.commit_order_pos = DdlnLookupRelid("commit_order_pos", r.nsp, missing_ok)))
		return NULL;
	r.owner = DdlnLookupExtensionOwner();
	if (!OidIsValid(r.owner))
	{
		if (missing_ok)
			return NULL;
		/* untested: the schema and tables without the extension's row (a DROP EXTENSION in flight) */
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("extension \"%s\" does not exist", DDLN_EXTENSION_NAME)));
	}

	ddln_relids = r;
	ddln_relids_valid = (ddln_relids_invals == invals_before);
	return &ddln_relids;
}

/*
 * The extension's owner (pg_extension.extowner, a superuser: the control
 * file says superuser = true), never the owner of its schema.  Capture, the
 * API and the engine switch to it to write the extension's tables, which no
 * other role may write.
 */
Oid
DdlnExtensionOwner(void)
{
	return DdlnGetRelids(false)->owner;
}

/*
 * The text of the statement that is running now: the statement's own slice of
 * the query string when the utility hook saw it, else the whole query string
 * of the session (the first DDL of a session that did not preload us).
 */
const char *
DdlnCurrentStatementText(void)
{
	const char *s = ddln_statement.string;
	int			loc = ddln_statement.location;
	int			len = ddln_statement.len;

	if (s == NULL)
		return debug_query_string ? pstrdup(debug_query_string) : NULL;
	if (loc < 0)
		return pstrdup(s);
	/*
	 * The utility hook took string and location from one call, so loc lies
	 * within the string, as pg_stat_statements' CleanQuerytext() trusts too.
	 * No strlen() of the whole string here: an extension script is one query
	 * string (7.5 MB for PostGIS) and this runs for each of its commands.
	 */
	Assert(strnlen(s, loc) == (size_t) loc);
	s += loc;
	if (len <= 0)
		len = strlen(s);
	/* skip leading white space the grammar left in the slice */
	while (len > 0 && (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r'))
	{
		s++;
		len--;
	}
	while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\n' || s[len - 1] == '\t' || s[len - 1] == '\r'))
		len--;
	return pnstrdup(s, len);
}

/*
 * Is DdlnCurrentStatementText() the statement's own slice of its query
 * string (the utility hook saw it, with its location), rather than a whole
 * query string that may hold other statements too?
 */
bool
DdlnCurrentStatementSliced(void)
{
	return ddln_statement.string != NULL && ddln_statement.location >= 0;
}

/*
 * Run fn(arg) in a subtransaction that swallows any error it raises: true
 * if it returned, false if it raised one (the error is discarded).  A
 * cancel or a shutdown is re-thrown: it is not about what fn looked at.
 * For look-ups whose only way to say "no" is an ERROR (to_regprocedure() of
 * a signature naming a missing type, read_objtype_from_string()).
 */
bool
DdlnTryQuietly(void (*fn) (void *arg), void *arg)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	volatile bool ok = false;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		fn(arg);
		ok = true;
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
		if (edata->sqlerrcode == ERRCODE_QUERY_CANCELED ||
			edata->sqlerrcode == ERRCODE_ADMIN_SHUTDOWN ||
			edata->sqlerrcode == ERRCODE_CRASH_SHUTDOWN)
			/* untested: a cancel landing inside the look-up; no test can time it */
			ReThrowError(edata);
		FreeErrorData(edata);
	}
	PG_END_TRY();
	MemoryContextSwitchTo(cxt);
	CurrentResourceOwner = owner;
	return ok;
}

/*
 * Insert a row of one of the extension's tables (event, commit_order) and
 * its index entries, as CatalogTupleInsertWithInfo() does, but flagged
 * HEAP_INSERT_NO_LOGICAL: logical decoding skips the insert, so the
 * extension's bookkeeping rows do not reach a publication's subscribers or a
 * CDC tool (G0).  The WAL record is otherwise the same: crash recovery and
 * streaming standbys replay it as any insert.  A TOASTed value is written
 * with the same flag.
 */
void
DdlnInsertUnpublished(Relation rel, CatalogIndexState indstate, HeapTuple tup)
{
	DdlnInsertRow(rel, indstate, tup, false);
}

/*
 * The same, seen by logical decoding when "published" (DDL replication's
 * outbox, outbox.c).
 */
void
DdlnInsertRow(Relation rel, CatalogIndexState indstate, HeapTuple tup, bool published)
{
	heap_insert(rel, tup, GetCurrentCommandId(true),
				published ? 0 : HEAP_INSERT_NO_LOGICAL, NULL);
	if (indstate->ri_NumIndices > 0)
		DdlnInsertIndexEntries(rel, indstate, tup);
}

/*
 * The index entries of a row version just written (a new row, or a non-HOT
 * update's new version), as CatalogIndexInsert() makes them.
 */
void
DdlnInsertIndexEntries(Relation rel, CatalogIndexState indstate, HeapTuple tup)
{
	TupleTableSlot *slot = MakeSingleTupleTableSlot(RelationGetDescr(rel), &TTSOpsHeapTuple);
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];

	ExecStoreHeapTuple(tup, slot, false);
	for (int i = 0; i < indstate->ri_NumIndices; i++)
	{
		Relation	index = indstate->ri_IndexRelationDescs[i];
		IndexInfo  *info = indstate->ri_IndexRelationInfo[i];

		if (!info->ii_ReadyForInserts)
			continue;
		/* the extension's indexes are plain columns, neither partial nor expressions */
		/* untested: needs one of the extension's indexes replaced by hand (036 tests its siblings) */
		if (info->ii_Expressions != NIL || info->ii_Predicate != NIL)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("index \"%s\" of ddl_notify has expressions or a predicate",
							RelationGetRelationName(index)),
					 errhint(DDLN_HINT_TABLE_SHAPE)));
		FormIndexDatum(info, slot, NULL, values, isnull);
		index_insert(index, values, isnull, &tup->t_self, rel,
					 index->rd_index->indisunique ? UNIQUE_CHECK_YES : UNIQUE_CHECK_NO,
					 false, info);
	}
	ExecDropSingleTupleTableSlot(slot);
}

/* ---------- building jsonb ---------- */

/* A scalar, into the innermost open object (after its key) or array. */
void
DdlnJsonPush(DdlnJsonbState *st, JsonbValue *v)
{
	DdlnJsonbPush(st, DdlnJsonbInner(st)->contVal.type == jbvArray ? WJB_ELEM : WJB_VALUE, v);
}

void
DdlnJsonKey(DdlnJsonbState *st, const char *key)
{
	JsonbValue	v;

	v.type = jbvString;
	v.val.string.val = (char *) key;
	v.val.string.len = strlen(key);
	DdlnJsonbPush(st, WJB_KEY, &v);
}

/* A string, or JSON null for NULL. */
void
DdlnJsonString(DdlnJsonbState *st, const char *s)
{
	JsonbValue	v;

	DdlnJsonbStringValue(&v, s);
	DdlnJsonPush(st, &v);
}

void
DdlnJsonBool(DdlnJsonbState *st, bool b)
{
	JsonbValue	v;

	v.type = jbvBool;
	v.val.boolean = b;
	DdlnJsonPush(st, &v);
}

void
DdlnJsonInt(DdlnJsonbState *st, int64 i)
{
	JsonbValue	v;

	v.type = jbvNumeric;
	v.val.numeric = int64_to_numeric(i);
	DdlnJsonPush(st, &v);
}

/* Open or close an object or array. */
void
DdlnJsonToken(DdlnJsonbState *st, JsonbIteratorToken what)
{
	DdlnJsonbPush(st, what, NULL);
}

/* key: "value" (JSON null for NULL) */
void
DdlnJsonPair(DdlnJsonbState *st, const char *key, const char *value)
{
	DdlnJsonKey(st, key);
	DdlnJsonString(st, value);
}

/*
 * The settings that change what a statement's literals mean, which a
 * statement's text must be run under elsewhere to mean the same:
 * '01-02-2016'::date is January 2nd or February 1st by DateStyle, a
 * timestamp without an offset is in TimeZone, 'a\b' holds one backslash or
 * none by standard_conforming_strings.  The event's "statement" key
 * (statementkey.c) and the replicated row (outbox.c) carry them.
 */
const char *const ddln_text_settings[DDLN_TEXT_SETTINGS] = {
	"DateStyle", "IntervalStyle", "TimeZone", "standard_conforming_strings"
};

/*
 * The pairs of the text settings, into an object the caller opened: each
 * with its value from "values" (in ddln_text_settings' order), or, with
 * "values" NULL, as SHOW prints it now.
 */
void
DdlnJsonTextSettings(DdlnJsonbState *st, char *const *values)
{
	for (int i = 0; i < DDLN_TEXT_SETTINGS; i++)
		DdlnJsonPair(st, ddln_text_settings[i],
					 values ? values[i] : GetConfigOption(ddln_text_settings[i], false, false));
}

/*
 * A jsonb value built directly as the tree JsonbValueToJsonb serialises,
 * without pushJsonbValue (a push per key and value, and a sort of each
 * object's keys as it closes: most of the cost of writing a large image).
 * An object is given its size, then its pairs (keys unique: the caller's
 * constants), and DdlnJvDone puts its keys in the order jsonb keeps them
 * (shorter first, then bytewise; a pass when they come so already): the
 * same value, byte for byte, as the same pushes.  An array is given its
 * size, then its elements (DdlnJvAdd with a NULL key).
 */
JsonbValue *
DdlnJvObject(int maxpairs)
{
	/* the value and its pairs in one allocation (a palloc is 70 instructions) */
	JsonbValue *v = palloc(MAXALIGN(sizeof(JsonbValue)) +
						   sizeof(JsonbPair) * Max(maxpairs, 1));

	v->type = jbvObject;
	v->val.object.nPairs = 0;
	v->val.object.pairs = (JsonbPair *) ((char *) v + MAXALIGN(sizeof(JsonbValue)));
	return v;
}

JsonbValue *
DdlnJvArray(int maxelems)
{
	JsonbValue *v = palloc(MAXALIGN(sizeof(JsonbValue)) +
						   sizeof(JsonbValue) * Max(maxelems, 1));

	v->type = jbvArray;
	v->val.array.nElems = 0;
	v->val.array.rawScalar = false;
	v->val.array.elems = (JsonbValue *) ((char *) v + MAXALIGN(sizeof(JsonbValue)));
	return v;
}

/*
 * The numerics of 0 to DDLN_SMALL_INTS - 1 (attnums, mostly), made once per
 * backend: a numeric is a value, the same bytes whoever made it, and a tree
 * only points to it (serialising copies it).
 */
#define DDLN_SMALL_INTS 2048
static Numeric *ddln_small_ints = NULL;

Numeric
DdlnJvNumeric(int64 i)
{
	if (i < 0 || i >= DDLN_SMALL_INTS)
		return int64_to_numeric(i);
	if (ddln_small_ints == NULL)
		ddln_small_ints = MemoryContextAllocZero(TopMemoryContext,
												 sizeof(Numeric) * DDLN_SMALL_INTS);
	if (ddln_small_ints[i] == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		ddln_small_ints[i] = int64_to_numeric(i);
		MemoryContextSwitchTo(old);
	}
	return ddln_small_ints[i];
}

/* jsonb's order of keys (jsonb_util.c, lengthCompareJsonbStringValue) */
static int
DdlnJvKeyCmp(const void *a, const void *b)
{
	const JsonbValue *x = &((const JsonbPair *) a)->key;
	const JsonbValue *y = &((const JsonbPair *) b)->key;

	if (x->val.string.len != y->val.string.len)
		return x->val.string.len > y->val.string.len ? 1 : -1;
	return memcmp(x->val.string.val, y->val.string.val, x->val.string.len);
}

/* An object's keys in jsonb's order; the object. */
JsonbValue *
DdlnJvDone(JsonbValue *obj)
{
	JsonbPair  *pairs = obj->val.object.pairs;
	int			n = obj->val.object.nPairs;

	for (int i = 1; i < n; i++)
	{
		int			c = DdlnJvKeyCmp(&pairs[i - 1], &pairs[i]);

		if (c == 0)
			elog(ERROR, "jsonb key \"%s\" given twice", pairs[i].key.val.string.val);
		if (c > 0)
		{
			qsort(pairs, n, sizeof(JsonbPair), DdlnJvKeyCmp);
			break;
		}
	}
	return obj;
}

/* ---------- writing a JsonbValue tree as jsonb ---------- */

/*
 * DdlnJvToJsonb writes the bytes JsonbValueToJsonb writes (jsonb_util.c,
 * convertToJsonb: a container's header, its children's JEntries, keys'
 * before values', a length in each but an end offset at every
 * JB_OFFSET_STRIDE'th, then their data; a numeric or container padded to
 * int alignment, the padding counted in its length), but writes an object
 * met twice once: an image "after" points to the objects of its "before"
 * that did not change (relimage.c), and each is copied here as the bytes
 * it was written as.  Those do not depend on where they are: a container
 * starts int-aligned, so the padding inside it is the same anywhere.  An
 * object is known by its pairs array (a JsonbValue holds an array's
 * elements by value: only the pairs pointer is shared).
 */
typedef struct DdlnJvMemoEntry
{
	const JsonbPair *pairs;		/* the object's pairs: its identity */
	int			npairs;
	int			start;			/* its bytes in the buffer, padding left out */
	int			len;
	char		status;			/* simplehash's */
} DdlnJvMemoEntry;

#define SH_PREFIX		ddln_jvmemo
#define SH_ELEMENT_TYPE DdlnJvMemoEntry
#define SH_KEY_TYPE		const JsonbPair *
#define SH_KEY			pairs
#define SH_HASH_KEY(tb, key) murmurhash32((uint32) (uintptr_t) (key))
#define SH_EQUAL(tb, a, b) ((a) == (b))
#define SH_SCOPE		static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

typedef struct DdlnJvWriter
{
	StringInfoData buf;
	ddln_jvmemo_hash *memo;		/* the objects written, by pairs */
} DdlnJvWriter;

static JEntry DdlnJvWriteContainer(DdlnJvWriter *w, const JsonbValue *v);

/*
 * n bytes at the end of buf, left to the caller; their offset.  The buffer
 * is enlarged only when full (a call of enlargeStringInfo for each of the
 * thousands of keys and values of an image: 350,000 instructions an ADD
 * COLUMN at 500 columns), and is no string: no '\0' is kept after its end.
 */
static inline int
DdlnJvReserve(StringInfo buf, int n)
{
	int			offset = buf->len;

	if (n >= buf->maxlen - buf->len)
		enlargeStringInfo(buf, n);
	buf->len += n;
	return offset;
}

static inline void
DdlnJvAppend(StringInfo buf, const void *data, int n)
{
	int			offset = DdlnJvReserve(buf, n);	/* it may move buf->data */

	memcpy(buf->data + offset, data, n);
}

/* zeroes up to int alignment (jsonb_util.c's padBufferToInt); how many */
static int
DdlnJvPad(StringInfo buf)
{
	int			pad = INTALIGN(buf->len) - buf->len;
	int			offset = DdlnJvReserve(buf, pad);	/* it may move buf->data */

	memset(buf->data + offset, 0, pad);
	return pad;
}

/*
 * jsonb_util.c's limit on a container's data, with its message.  Not
 * reached by a test: an image past 256 MB would need column defaults or
 * definitions of that size (as JsonbValueToJsonb, which checked it before).
 */
static void
DdlnJvCheckSize(int len, bool object)
{
	if (len > JENTRY_OFFLENMASK)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("total size of jsonb %s elements exceeds the maximum of %u bytes",
						object ? "object" : "array", JENTRY_OFFLENMASK)));
}

/*
 * a scalar's data; its JEntry.  Inlined in DdlnJvWriteChild: a call for
 * each of an image's thousands of keys and values cost about 25
 * instructions each (50,000 an ADD COLUMN at 100 columns).
 */
static pg_attribute_always_inline JEntry
DdlnJvWriteScalar(StringInfo buf, const JsonbValue *v)
{
	int			pad;
	int			len;

	switch (v->type)
	{
		case jbvNull:
			return JENTRY_ISNULL;
		case jbvBool:
			return v->val.boolean ? JENTRY_ISBOOL_TRUE : JENTRY_ISBOOL_FALSE;
		case jbvString:
			DdlnJvAppend(buf, v->val.string.val, v->val.string.len);
			return v->val.string.len;
		case jbvNumeric:
			pad = DdlnJvPad(buf);
			len = VARSIZE_ANY(v->val.numeric);
			DdlnJvAppend(buf, (const char *) v->val.numeric, len);
			return JENTRY_ISNUMERIC | (pad + len);
		default:
			/* not reached: the trees built here hold no binary or datetime value */
			elog(ERROR, "unexpected jsonb value type %d", (int) v->type);
	}
	return 0;					/* keep the compiler quiet */
}

/*
 * The index'th child of a container: its data, then its JEntry at "entry"
 * (an offset in the buffer), a length or, every JB_OFFSET_STRIDE'th, the
 * end offset "total" of the children's data so far.  Inlined in the loops
 * over the children: a call for each of an image's thousands of keys and
 * values cost 100,000 instructions at 500 columns.
 */
static pg_attribute_always_inline void
DdlnJvWriteChild(DdlnJvWriter *w, const JsonbValue *v, int entry, int index,
				 int *total, bool object)
{
	JEntry		meta;

	if (v->type == jbvObject || v->type == jbvArray)
		meta = DdlnJvWriteContainer(w, v);
	else
		meta = DdlnJvWriteScalar(&w->buf, v);
	*total += JBE_OFFLENFLD(meta);
	DdlnJvCheckSize(*total, object);
	if (index % JB_OFFSET_STRIDE == 0)
		meta = (meta & JENTRY_TYPEMASK) | *total | JENTRY_HAS_OFF;
	memcpy(w->buf.data + entry, &meta, sizeof(JEntry));
}

static void
DdlnJvWriteArray(DdlnJvWriter *w, const JsonbValue *v)
{
	int			n = v->val.array.nElems;
	uint32		header = n | JB_FARRAY | (v->val.array.rawScalar ? JB_FSCALAR : 0);
	int			entries;
	int			total = 0;

	DdlnJvAppend(&w->buf, (const char *) &header, sizeof(uint32));
	entries = DdlnJvReserve(&w->buf, sizeof(JEntry) * n);
	for (int i = 0; i < n; i++)
		DdlnJvWriteChild(w, &v->val.array.elems[i], entries + sizeof(JEntry) * i, i,
						 &total, false);
}

/* An object written (from "start") remembered, to be copied if met again. */
static void
DdlnJvWriteObject(DdlnJvWriter *w, const JsonbValue *v)
{
	int			n = v->val.object.nPairs;
	const JsonbPair *pairs = v->val.object.pairs;
	uint32		header = n | JB_FOBJECT;
	int			start = w->buf.len;
	int			entries;
	int			total = 0;
	DdlnJvMemoEntry *memo;
	bool		found;

	DdlnJvAppend(&w->buf, (const char *) &header, sizeof(uint32));
	entries = DdlnJvReserve(&w->buf, sizeof(JEntry) * n * 2);
	for (int i = 0; i < n; i++)
		DdlnJvWriteChild(w, &pairs[i].key, entries + sizeof(JEntry) * i, i, &total, true);
	for (int i = 0; i < n; i++)
		DdlnJvWriteChild(w, &pairs[i].value, entries + sizeof(JEntry) * (n + i), n + i,
						 &total, true);
	memo = ddln_jvmemo_insert(w->memo, pairs, &found);
	memo->npairs = n;
	memo->start = start;
	memo->len = w->buf.len - start;
}

/* An object written before, copied again; false if it was not. */
static bool
DdlnJvCopyObject(DdlnJvWriter *w, const JsonbValue *v)
{
	DdlnJvMemoEntry *memo = ddln_jvmemo_lookup(w->memo, v->val.object.pairs);
	int			offset;

	if (memo == NULL || memo->npairs != v->val.object.nPairs)
		return false;
	/* reserve first: enlarging may move the bytes copied */
	offset = DdlnJvReserve(&w->buf, memo->len);
	memcpy(w->buf.data + offset, w->buf.data + memo->start, memo->len);
	return true;
}

/* An array or object, int-aligned; its JEntry (its length with the padding). */
static JEntry
DdlnJvWriteContainer(DdlnJvWriter *w, const JsonbValue *v)
{
	int			base = w->buf.len;
	bool		object = v->type == jbvObject;

	check_stack_depth();
	DdlnJvPad(&w->buf);
	if (!object)
		DdlnJvWriteArray(w, v);
	else if (!DdlnJvCopyObject(w, v))
		DdlnJvWriteObject(w, v);
	DdlnJvCheckSize(w->buf.len - base, object);
	return JENTRY_ISCONTAINER | (w->buf.len - base);
}

#ifdef DDLN_CHECK_JSONB
/* Built with DDLN_CHECK_JSONB (or assertions): PostgreSQL's bytes, compared. */
static void
DdlnJvCheck(JsonbValue *v, const Jsonb *ours)
{
	Jsonb	   *theirs = JsonbValueToJsonb(v);
	Size		len = Min(VARSIZE(ours), VARSIZE(theirs));
	Size		at = 0;

	while (at < len && ((const char *) ours)[at] == ((const char *) theirs)[at])
		at++;
	if (at < len || VARSIZE(ours) != VARSIZE(theirs))
		elog(ERROR, "DdlnJvToJsonb wrote other bytes than JsonbValueToJsonb (%u and %u bytes, first difference at %zu)",
			 (unsigned int) VARSIZE(ours), (unsigned int) VARSIZE(theirs), at);
	pfree(theirs);
}
#endif

/*
 * The size of the last jsonb written and the number of its objects: the
 * next one's buffer and memo are made that large at once (an image of 100
 * columns enlarged a buffer of 1 kB five times, and its memo of 64 entries
 * twice: about 20,000 instructions).  Only a first size: the bytes written
 * are the same whatever it is, and a jsonb much smaller than its buffer is
 * given one of its size (it is returned in it).
 */
#define DDLN_JV_FIRST_MAX (1024 * 1024)
static int	ddln_jv_last_len = 0;
static int	ddln_jv_last_objects = 64;

/*
 * A tree as jsonb: JsonbValueToJsonb's bytes, an object shared by two
 * places of the tree written once (above).  A scalar goes to PostgreSQL.
 */
Jsonb *
DdlnJvToJsonb(JsonbValue *v)
{
	DdlnJvWriter w;
	Jsonb	   *res;

	if (v->type != jbvObject && v->type != jbvArray)
		return JsonbValueToJsonb(v);
	initStringInfo(&w.buf);
	if (ddln_jv_last_len > w.buf.maxlen)
		enlargeStringInfo(&w.buf, ddln_jv_last_len);
	(void) DdlnJvReserve(&w.buf, VARHDRSZ);
	w.memo = ddln_jvmemo_create(CurrentMemoryContext, ddln_jv_last_objects, NULL);
	(void) DdlnJvWriteContainer(&w, v);
	ddln_jv_last_objects = Min(Max(w.memo->members, 64), 65536);
	ddln_jvmemo_destroy(w.memo);
	ddln_jv_last_len = Min(w.buf.len, DDLN_JV_FIRST_MAX);
	/* a buffer made for a larger one is not kept with a small jsonb */
	if (w.buf.maxlen > 2 * w.buf.len + 1024)
		w.buf.data = repalloc(w.buf.data, w.buf.len);
	res = (Jsonb *) w.buf.data;
	SET_VARSIZE(res, w.buf.len);
#ifdef DDLN_CHECK_JSONB
	DdlnJvCheck(v, res);
#endif
	return res;
}

/* A value built so (or any JsonbValue tree) as the next value of "st". */
void
DdlnJsonPushValue(DdlnJsonbState *st, JsonbValue *v)
{
	switch (v->type)
	{
		case jbvObject:
			DdlnJsonbPush(st, WJB_BEGIN_OBJECT, NULL);
			for (int i = 0; i < v->val.object.nPairs; i++)
			{
				DdlnJsonbPush(st, WJB_KEY, &v->val.object.pairs[i].key);
				DdlnJsonPushValue(st, &v->val.object.pairs[i].value);
			}
			DdlnJsonbPush(st, WJB_END_OBJECT, NULL);
			break;
		case jbvArray:
			DdlnJsonbPush(st, WJB_BEGIN_ARRAY, NULL);
			for (int i = 0; i < v->val.array.nElems; i++)
				DdlnJsonPushValue(st, &v->val.array.elems[i]);
			DdlnJsonbPush(st, WJB_END_ARRAY, NULL);
			break;
		default:
			DdlnJsonPush(st, v);
			break;
	}
}

/* "details" and "more" (objects, or NULL) together: jsonb_concat. */
Jsonb *
DdlnDetailsWith(Jsonb *details, Jsonb *more)
{
	if (more == NULL)
		return details;
	if (details == NULL)
		return more;
	return DatumGetJsonbP(DirectFunctionCall2(jsonb_concat, JsonbPGetDatum(details),
											  JsonbPGetDatum(more)));
}
