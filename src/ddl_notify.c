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
 * The utility hook remembers the text of the statement being executed (in
 * common.c's ddln_statement), so capture can store the statement that ran
 * the DDL rather than the whole query string, and lets pool.c step aside
 * before DROP DATABASE and friends.
 *
 * This file is the entry: it wires settings and hooks and calls into the
 * other files; none of them calls into it.  The settings' variables live in
 * common.c, where every floor reads them.
 *
 * Floor: entry: nothing of ours calls it; it calls capture.c (whether the
 * transaction recorded events), subscriber.c, worker.c (registration),
 * counter.c (the commit position), pool.c, apply.c, progress.c and fetch.c
 * (their shared memory) and common.c.
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "tcop/utility.h"
#include "utils/guc.h"

#include "common.h"

PG_MODULE_MAGIC;

static ProcessUtility_hook_type prev_ProcessUtility = NULL;

void		_PG_init(void);
static void DdlnXactCallback(XactEvent event, void *arg);
static void DdlnProcessUtility(PlannedStmt *pstmt, const char *queryString,
							   bool readOnlyTree,
							   ProcessUtilityContext context,
							   ParamListInfo params, QueryEnvironment *queryEnv,
							   DestReceiver *dest, QueryCompletion *qc);

/* The settings of capture: what an event records, and its WAL messages. */
static void
DdlnDefineCaptureSettings(void)
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
	DefineCustomBoolVariable("ddl_notify.wal_messages",
							 "Also writes each recorded event to the WAL as a transactional logical decoding message with prefix \"ddl_notify\".",
							 "Change-data-capture consumers of logical decoding (pgoutput with messages, test_decoding, wal2json) then see the DDL among the row changes. Needs wal_level = logical.",
							 &ddln_wal_messages, false,
							 PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("ddl_notify.wal_message_version",
							"Sets the format version of the logical decoding messages ddl_notify.wal_messages writes.",
							"2 (the default): the event row, whose details carry the relation before and after the command and the changes. 1: the format of ddl_notify 0.1.0, with its \"table\" key, for consumers written for it.",
							&ddln_wal_message_version, DDLN_WAL_MESSAGE_VERSION, 1, 2,
							PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("ddl_notify.max_query_length",
							"Sets the longest statement text stored in ddl_notify.event.query, in bytes.",
							"A longer text is cut at a character boundary and ends with a note saying how much was cut. -1 stores texts whole.",
							&ddln_max_query_length, 65536, -1, INT_MAX / 4,
							PGC_SUSET, GUC_UNIT_BYTE, NULL, NULL, NULL);
	DefineCustomBoolVariable("ddl_notify.capture_changes",
							 "Records what a command did to a relation's shape: \"before\", \"after\" and \"changes\" in an event's details.",
							 "On by default. Off, none of it is computed: the lowest capture cost, for those who need only the command and its objects.",
							 &ddln_capture_changes, true,
							 PGC_SUSET, 0, NULL, NULL, NULL);
}

/* The settings of delivery, of subscribers and of the worker pool. */
static void
DdlnDefineDeliverySettings(void)
{
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
	DefineCustomIntVariable("ddl_notify.max_chain_length",
							"Sets how many handlers in a row may cause one another's events.",
							"An event that DDL run by handlers caused through this many subscribers is not delivered to a subscriber in that chain; subscribers outside it always get it.",
							&ddln_max_chain_length, 4, 1, DDLN_MAX_SUBSCRIBERS,
							PGC_SUSET, 0, NULL, NULL, NULL);
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
}

void
_PG_init(void)
{
	DdlnDefineCaptureSettings();
	DdlnDefineDeliverySettings();

	MarkGUCPrefixReserved("ddl_notify");

	/* "before" images of dropped relations (imgdrop.c) */
	DdlnImageInstallHooks();

	RegisterXactCallback(DdlnXactCallback, NULL);

	prev_ProcessUtility = ProcessUtility_hook;
	ProcessUtility_hook = DdlnProcessUtility;

	if (process_shared_preload_libraries_in_progress)
	{
		DdlnWorkerShmemRequest();
		DdlnProgressShmemRequest();
		DdlnFloorShmemRequest();
		DdlnApplyShmemRequest();
		/* nothing delivers while pg_upgrade runs the server (G13) */
		if (!IsBinaryUpgrade)
			DdlnRegisterLauncher();
	}
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
			{
				DdlnRecordCommitPosition();
				/* its COMMIT PREPARED runs none of its code: the pool watches it */
				DdlnKeepOwnPreparedXact();
			}
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

static void
DdlnProcessUtility(PlannedStmt *pstmt, const char *queryString,
				   bool readOnlyTree,
				   ProcessUtilityContext context,
				   ParamListInfo params, QueryEnvironment *queryEnv,
				   DestReceiver *dest, QueryCompletion *qc)
{
	DdlnStatement save = ddln_statement;

	/* Let pool.c step aside before DROP DATABASE and the like (G11). */
	DdlnBeforeUtility(pstmt->utilityStmt);

	ddln_statement.string = queryString;
	ddln_statement.location = pstmt->stmt_location;
	ddln_statement.len = pstmt->stmt_len;
	PG_TRY();
	{
		if (prev_ProcessUtility)
			prev_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);
		else
			standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
									params, queryEnv, dest, qc);
	}
	PG_FINALLY();
	{
		ddln_statement = save;
	}
	PG_END_TRY();
}
