/*-------------------------------------------------------------------------
 *
 * ddl_notify.c
 *	  Module entry point: settings, shared memory, transaction callbacks and
 *	  the utility hook.
 *
 * The transaction callbacks implement the commit side of two protocols
 * described in full where they live:
 *
 * - The subscription point (subscriber.c).  A transaction that recorded
 *	 events takes the subscription-point lock in ShareLock at PRE_COMMIT; a
 *	 transaction that called subscribe() takes it in ExclusiveLock at
 *	 PRE_COMMIT and stores the snapshot it sees under that lock.  The lock is
 *	 released only after the commit became visible, so every DDL transaction
 *	 either is visible in that snapshot or commits after the subscriber.
 *
 * - Commit order (capture.c, deliver.c).  At PRE_COMMIT, after the lock, a
 *	 transaction that recorded events draws its position in commit order.
 *
 * - Wake-up on commit (pool.c).  Once a transaction that recorded events has
 *	 committed, the database's delivery worker is woken, or the database is
 *	 queued for one from the pool.  Nothing is believed
 *	 before COMMIT: the callback runs at XACT_EVENT_COMMIT, never earlier.
 *
 * The utility hook remembers the text of the statement being executed, so
 * capture can store the statement that ran the DDL rather than the whole
 * query string, and lets pool.c step aside before DROP DATABASE and friends.
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_namespace.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/lock.h"
#include "tcop/utility.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "ddl_notify.h"

PG_MODULE_MAGIC;

/* settings */
bool		ddln_capture_temp = false;
bool		ddln_capture_query = true;
int			ddln_batch_size = 1000;
int			ddln_retry_initial_delay = 1000;
int			ddln_retry_max_delay = 300000;
int			ddln_handler_timeout = 300000;
int			ddln_max_workers = 8;
int			ddln_poll_interval = 5000;
int			ddln_stream_interval = 2;
bool		ddln_wal_messages = false;
int			ddln_max_query_length = 65536;
int			ddln_batch_memory = 8192;
int			ddln_lock_timeout = 1000;
int			ddln_max_subscribers_per_role = 16;
int			ddln_worker_idle_timeout = 10000;
int			ddln_max_workers_per_database = 2;

/* the statement being executed, for capture.c */
static const char *ddln_stmt_string = NULL;
static int	ddln_stmt_location = -1;
static int	ddln_stmt_len = 0;

static ProcessUtility_hook_type prev_ProcessUtility = NULL;

void		_PG_init(void);
static void DdlnXactCallback(XactEvent event, void *arg);
static void DdlnProcessUtility(PlannedStmt *pstmt, const char *queryString,
#if PG_VERSION_NUM >= 140000
							   bool readOnlyTree,
#endif
							   ProcessUtilityContext context,
							   ParamListInfo params, QueryEnvironment *queryEnv,
							   DestReceiver *dest, QueryCompletion *qc);

void
_PG_init(void)
{
	DefineCustomBoolVariable("ddl_notify.capture_temp",
							 "Records DDL on temporary objects too.",
							 "Off by default: temporary objects are private to a session and rarely interest subscribers.",
							 &ddln_capture_temp, false,
							 PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("ddl_notify.capture_query",
							 "Stores the text of the statement that ran the DDL in ddl_notify.event.query.",
							 "Turn it off when statements may carry secrets that must not be kept.",
							 &ddln_capture_query, true,
							 PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("ddl_notify.batch_size",
							"Sets how many events one delivery transaction hands to a subscriber at most.",
							"After a failure the engine retries with smaller batches to isolate the failing event.",
							&ddln_batch_size, 1000, 1, 100000,
							PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("ddl_notify.retry_initial_delay",
							"Sets the wait before the first retry of a failed event.",
							"Each further failure of the same event doubles the wait, up to ddl_notify.retry_max_delay.",
							&ddln_retry_initial_delay, 1000, 0, INT_MAX,
							PGC_SUSET, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("ddl_notify.retry_max_delay",
							"Sets the longest wait between two retries of a failed event.",
							NULL,
							&ddln_retry_max_delay, 300000, 0, INT_MAX,
							PGC_SUSET, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("ddl_notify.handler_timeout",
							"Sets the longest time one handler call may run before it is cancelled.",
							"A cancelled call counts as a failed attempt. Zero disables the limit.",
							&ddln_handler_timeout, 300000, 0, INT_MAX,
							PGC_SUSET, GUC_UNIT_MS, NULL, NULL, NULL);
	/* a server-start setting can only be defined while preloading */
	if (process_shared_preload_libraries_in_progress)
		DefineCustomIntVariable("ddl_notify.max_workers",
								"Sets how many delivery workers may run at once, for all databases together.",
								"Zero turns automatic delivery off; CALL ddl_notify.deliver() still works.",
								&ddln_max_workers, 8, 0, 1024,
								PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("ddl_notify.poll_interval",
							"Sets how often an idle delivery worker looks for work without being woken.",
							"Commits wake the worker at once; this is only the fallback.",
							&ddln_poll_interval, 5000, 10, INT_MAX,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);

	DefineCustomIntVariable("ddl_notify.stream_interval",
							"Sets how often a delivery worker starts a round at most while commits keep coming.",
							"A commit after a quiet interval is delivered at once; under a stream, commits gather for up to this long. Zero starts a round for each wake-up.",
							&ddln_stream_interval, 2, 0, 1000,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);

	DefineCustomBoolVariable("ddl_notify.wal_messages",
							 "Also writes each recorded event to the WAL as a transactional logical decoding message with prefix \"ddl_notify\".",
							 "Change-data-capture consumers of logical decoding (pgoutput with messages, test_decoding, wal2json) then see the DDL among the row changes. Needs wal_level = logical.",
							 &ddln_wal_messages, false,
							 PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("ddl_notify.max_query_length",
							"Sets the longest statement text stored in ddl_notify.event.query, in bytes.",
							"A longer text is cut at a character boundary and ends with a note saying how much was cut. -1 stores texts whole.",
							&ddln_max_query_length, 65536, -1, INT_MAX / 4,
							PGC_SUSET, GUC_UNIT_BYTE, NULL, NULL, NULL);
	DefineCustomIntVariable("ddl_notify.batch_memory",
							"Sets how much event data one delivery transaction reads at most.",
							"A batch ends at ddl_notify.batch_size events or once the events it read pass this size, whichever comes first; the event that passes it is still delivered.",
							&ddln_batch_memory, 8192, 64, MAX_KILOBYTES,
							PGC_SUSET, GUC_UNIT_KB, NULL, NULL, NULL);
	DefineCustomIntVariable("ddl_notify.lock_timeout",
							"Sets how long a statement of the delivery engine waits for a row lock held by another transaction.",
							"A subscriber whose batch cannot get its locks in time is tried again later; it does not count as a failure.",
							&ddln_lock_timeout, 1000, 1, INT_MAX,
							PGC_SUSET, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("ddl_notify.max_subscribers_per_role",
							"Sets how many subscribers one role may own in a database.",
							"Superusers are not limited. The database's limit of 64 applies as well.",
							&ddln_max_subscribers_per_role, 16, 1, DDLN_MAX_SUBSCRIBERS,
							PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("ddl_notify.worker_idle_timeout",
							"Sets how long a delivery worker with nothing to do stays before it gives its slot back.",
							"A commit in a database without a worker starts one; an idle worker also leaves at once when another database waits for a slot.",
							&ddln_worker_idle_timeout, 10000, 0, INT_MAX,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);

	DefineCustomIntVariable("ddl_notify.max_workers_per_database",
							"Sets how many delivery workers may serve one database at once.",
							"A second worker serves the other subscribers of a database whose worker is busy in a slow handler; 1 turns that off.",
							&ddln_max_workers_per_database, 2, 1, 1024,
							PGC_SIGHUP, 0, NULL, NULL, NULL);

	MarkGUCPrefixReserved("ddl_notify");

	RegisterXactCallback(DdlnXactCallback, NULL);

	prev_ProcessUtility = ProcessUtility_hook;
	ProcessUtility_hook = DdlnProcessUtility;

	if (process_shared_preload_libraries_in_progress)
	{
		DdlnWorkerShmemRequest();
		/* nothing delivers while pg_upgrade runs the server (G13) */
		if (!IsBinaryUpgrade)
			DdlnRegisterLauncher();
	}
}

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
 * The OIDs, or NULL if the extension's schema or one of them is missing and
 * missing_ok (else an error).  The lookups may read the catalogs, and so
 * process invalidations, meanwhile: what they found is kept only if no
 * invalidation came while they ran (else it is used this once).
 */
const DdlnRelids *
DdlnGetRelids(bool missing_ok)
{
	DdlnRelids	r;
	HeapTuple	tup;
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
	tup = SearchSysCache1(NAMESPACEOID, ObjectIdGetDatum(r.nsp));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for namespace %u", r.nsp);
	r.owner = ((Form_pg_namespace) GETSTRUCT(tup))->nspowner;
	ReleaseSysCache(tup);

	ddln_relids = r;
	ddln_relids_valid = (ddln_relids_invals == invals_before);
	return &ddln_relids;
}

/*
 * The role that owns the extension's objects (the owner of its schema).
 * Capture and the API switch to it to write the extension's tables, which
 * no other role may write.
 */
Oid
DdlnExtensionOwner(void)
{
	return DdlnGetRelids(false)->owner;
}

static void
DdlnXactCallback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
			if (ddln_xact_subscribed)
				DdlnFixSubscriptionPoint();
			else if (ddln_xact_recorded)
				DdlnLockSubscriptionPoint(ShareLock);
			if (ddln_xact_recorded)
				DdlnRecordCommitPosition();
			break;

		case XACT_EVENT_PRE_PREPARE:
			if (ddln_xact_subscribed)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot PREPARE a transaction that has called ddl_notify.subscribe()"),
						 errdetail("A subscription point is fixed at commit; a prepared transaction has none.")));
			/* it keeps its locks until COMMIT PREPARED: its position is now */
			if (ddln_xact_recorded)
				DdlnRecordCommitPosition();
			break;

		case XACT_EVENT_COMMIT:
			if (ddln_xact_recorded)
				DdlnWakeDatabaseWorker(MyDatabaseId);
			ddln_xact_recorded = false;
			ddln_xact_subscribed = false;
			break;

		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
		case XACT_EVENT_PARALLEL_COMMIT:
			ddln_xact_recorded = false;
			ddln_xact_subscribed = false;
			break;

		default:
			break;
	}
}

/*
 * The text of the statement that is running now: the statement's own slice of
 * the query string when the utility hook saw it, else the whole query string
 * of the session (the first DDL of a session that did not preload us).
 */
const char *
DdlnCurrentStatementText(void)
{
	const char *s = ddln_stmt_string;
	int			loc = ddln_stmt_location;
	int			len = ddln_stmt_len;

	if (s == NULL)
		return debug_query_string ? pstrdup(debug_query_string) : NULL;
	if (loc < 0)
		return pstrdup(s);
	if (loc > (int) strlen(s))
		return pstrdup(s);
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

static void
DdlnProcessUtility(PlannedStmt *pstmt, const char *queryString,
#if PG_VERSION_NUM >= 140000
				   bool readOnlyTree,
#endif
				   ProcessUtilityContext context,
				   ParamListInfo params, QueryEnvironment *queryEnv,
				   DestReceiver *dest, QueryCompletion *qc)
{
	const char *save_string = ddln_stmt_string;
	int			save_location = ddln_stmt_location;
	int			save_len = ddln_stmt_len;

	/* Let pool.c step aside before DROP DATABASE and the like (G11). */
	DdlnBeforeUtility(pstmt->utilityStmt);

	ddln_stmt_string = queryString;
	ddln_stmt_location = pstmt->stmt_location;
	ddln_stmt_len = pstmt->stmt_len;
	PG_TRY();
	{
#if PG_VERSION_NUM >= 140000
		if (prev_ProcessUtility)
			prev_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);
		else
			standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
									params, queryEnv, dest, qc);
#else
		if (prev_ProcessUtility)
			prev_ProcessUtility(pstmt, queryString, context,
								params, queryEnv, dest, qc);
		else
			standard_ProcessUtility(pstmt, queryString, context,
									params, queryEnv, dest, qc);
#endif
	}
	PG_FINALLY();
	{
		ddln_stmt_string = save_string;
		ddln_stmt_location = save_location;
		ddln_stmt_len = save_len;
	}
	PG_END_TRY();
}
