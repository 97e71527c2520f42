/*-------------------------------------------------------------------------
 *
 * deliver.c
 *	  The delivery engine: the one code path that hands events to
 *	  subscribers, used by CALL ddl_notify.deliver() and by the background
 *	  worker alike.
 *
 * The delivery protocol (docs/guarantees.md, G3-G8, G12):
 *
 * 1. A batch is one top-level transaction, READ COMMITTED.  It first locks
 *	  the subscriber's row FOR UPDATE SKIP LOCKED: whoever holds that lock is
 *	  the only deliverer of that subscriber (G8); a deliverer that cannot get
 *	  it leaves the subscriber to the one that has it.  With the lock it
 *	  makes the handler's and owner's OIDs valid in this cluster (they are
 *	  looked up again by name after pg_upgrade, see lifecycle.c).
 * 2. It reads the subscriber's pending events: processed bit clear and
 *	  transaction not visible in the subscription snapshot (G6).  There is no
 *	  cursor and no high-water mark: whatever is visible and pending is read,
 *	  so an event whose lower id committed late is read when it appears (G4).
 *	  Order: transactions by their position in commit order (drawn just
 *	  before they committed, see ddl_notify.commit_order), then statement
 *	  order (G5).  The read walks commit_order by position and each
 *	  transaction's events by xid, and stops at the batch size: it never
 *	  scans or sorts the whole backlog, dead rows included.  The read is
 *	  fetch.c's (DdlnFetch); the engine's types are in engine.h.
 * 3. Inside a subtransaction it calls the handler for each wanted event, as
 *	  the subscriber's owner, in a security-restricted operation with a fixed
 *	  search_path (G10): the handler cannot SET ROLE, create temporary
 *	  objects, hold cursors or leave deferred triggers in the deliverer's
 *	  session, and every setting it changes is discarded after the call.
 *	  Constraints are made immediate first, since a restricted operation
 *	  cannot defer them.  ddln_current_origin names the subscriber, and
 *	  ddln_current_chain the event's chain of origins, so that DDL the
 *	  handler runs is tagged with both (G12, capture.c).  Filtered-out events
 *	  and those the chain rule keeps from the subscriber (fetch.c: its own
 *	  echo, a loop through it, its echo past ddl_notify.max_chain_length;
 *	  never an event whose chain it is not in) are handled without a call;
 *	  the latter are counted in loop_suppressed.
 *	  A subscriber whose owner may not read event.query gets neither it
 *	  nor the texts of the images in details (imagetexts.c).
 * 4. In the same subtransaction it sets the processed bits with a checked
 *	  transition (the bit must have been clear; rows locked in id order) and
 *	  deletes the rows every subscriber has now handled: written to the heap
 *	  by fetch.c (DdlnSetProcessedBits), no SQL.
 * 5. COMMIT.  Only now does anything outside the database change: counters
 *	  in the round result and in shared memory (progress.c: the subscriber's
 *	  delivered, filtered, last event, between writes of its row), the
 *	  worker's belief that work was done.  Nothing in memory describes an
 *	  event as handled before COMMIT returned (G3).
 *
 * Failures: a handler error at event k rolls the subtransaction back.  If
 * k > 0 the first k events are redelivered in a batch of their own; the
 * failing event is then first of its batch and its failure is recorded
 * (attempts, last error, next retry with capped exponential backoff) in the
 * same transaction that holds the subscriber's lock.  A failure at COMMIT
 * itself (a lock the commit path waits for past lock_timeout, a
 * serialization failure, ...) cannot be pinned on one event, so the engine
 * retries those events one per transaction until it finds the culprit,
 * records the failure on it, then goes back to full batches; what it knows
 * in memory (the floor) moves only after a COMMIT returned (G3).
 * A checked transition that finds a bit already set (step 4) is not the
 * handlers' failure: someone set it while they ran.  The engine's own
 * deliverers cannot, as they hold the subscriber's lock; a writer that does
 * not (a hand-made UPDATE of the bits) can.  The batch is rolled back, a
 * WARNING says so, and it is read again at once, without what the other
 * one handled; no failure or backoff is recorded.  A second conflict in a
 * row is no race (say, a handler that calls skip() on an event of its own
 * batch): it is taken as a handler failure at the batch's last event.
 * A subscriber with max_attempts sends an event to ddl_notify.dead_letter
 * after that many failures and goes on.  A subscriber in backoff is skipped
 * and never delays the others (G7).
 *
 * Hostile handlers and hostile DDL (issue 18):
 * - Whose error is it?  A handler's error is its failure, whatever SQLSTATE
 *	 it carries; only a cancel or shutdown raised by ProcessInterrupts() (a
 *	 real interrupt: the caller cancelled deliver(), a statement timeout, the
 *	 server stops) other than the handler timeout is re-thrown and ends the
 *	 round.  failure.c decides (DdlnErrorIsDeliverers) and states how.
 * - Every error the engine keeps is copied with each text capped
 *	 (DdlnCopyErrorCapped, failure.c): what it records in subscriber and
 *	 dead_letter and what it logs is bounded.
 * - A batch also ends once the rows it read pass ddl_notify.batch_memory;
 *	 with ddl_notify.max_query_length (querytext.c) this bounds the memory of a
 *	 batch whatever the statement texts.
 * - Every statement of a delivery round runs with lock_timeout =
 *	 ddl_notify.lock_timeout: none waits unboundedly for a row a user's
 *	 transaction locked (skip() left open).  Past it, the batch is rolled
 *	 back and the subscriber tried again later; it is not a failure.
 * - A handler gets event.query, and the texts of the relation images in
 *	 event.details, only if its owner may SELECT event.query; session-level
 *	 advisory locks a handler took are released after its call.
 * - The sweep at a round's end (rows nobody needs) comes in two kinds
 *	 (issue 38).  The full one, DdlnPurge, scans the whole queue, so it
 *	 reads every row version an old snapshot keeps: CALL deliver() and
 *	 unsubscribe() run it, the worker at most once a minute (less often
 *	 when it takes long: worker.c).  The recent
 *	 one, DdlnSweepRecent, finds the same rows by a walk from the position
 *	 floor (fetch.c, at most DDLN_SWEEP_VISIT events a time) and deletes
 *	 them by ctid, each tested again under its row lock; only an event
 *	 whose transaction has no commit position is beyond it.
 *
 * Callers: the SQL procedure below (non-atomic CALL) and worker.c.  Both
 * call DdlnDeliverRound() inside a started transaction; it commits and
 * starts transactions through SPI_commit/SPI_rollback, and leaves a fresh,
 * empty transaction for the caller to finish.  A pool worker may end a
 * round early, between two passes over the subscribers, to give its slot
 * to another database (ddln_round_yield_hook, worker.c); the round result
 * then says "more".  It learns when the deliveries of a round are over and
 * its sweep begins (ddln_round_sweep_hook): no subscriber waits on a sweep.
 *
 * Floor: engine: called by worker.c, subscriber.c and CALL deliver(); calls
 * fetch.c, failure.c, binding.c, trust.c, counter.c, pool.c, outbox.c (its
 * prune, at a sweep) and common.c,
 * never the API or the worker.
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "pgstat.h"
#include "storage/ipc.h"
#include "tcop/tcopprot.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/regproc.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timeout.h"
#include "utils/timestamp.h"
#include "utils/xid8.h"

#include "common.h"
#include "engine.h"

PG_FUNCTION_INFO_V1(ddl_notify_deliver);

static void DdlnMarkHandledAt(const char *subname, int32 slot, const DdlnEventKey *events,
							  const ItemPointerData *tids, int n);

/* set by a pool worker: true ends a round that has work left (result.more) */
bool		(*ddln_round_yield_hook) (void) = NULL;
/* set by a pool worker: called when a round's deliveries are over and its sweep begins */
void		(*ddln_round_sweep_hook) (void) = NULL;

/* How many batches one subscriber gets before the round moves on. */
#define DDLN_BATCHES_PER_TURN	4

/* How many dead letters one transaction may write before it commits. */
#define DDLN_DEAD_LETTERS_PER_XACT	100

/* The search_path handlers run with, whoever started delivery. */
#define DDLN_HANDLER_SEARCH_PATH	"\"$user\", public, pg_temp"

/* A saved plan for one of the engine's statements. */
typedef struct DdlnQuery
{
	const char *sql;
	int			nargs;
	Oid			argtypes[7];
	SPIPlanPtr	plan;
} DdlnQuery;

static DdlnQuery q_list_subscribers = {
	"SELECT id FROM ddl_notify.subscriber ORDER BY id", 0, {0}
};

/*
 * The handler and owner are read by OID and by name ($2: this cluster's
 * system identifier), see lifecycle.c; q_lock_subscriber_010 reads the
 * subscriber table of 0.1.0, until ALTER EXTENSION UPDATE.
 */
static DdlnQuery q_lock_subscriber = {
	"SELECT s.name, s.slot, s.handler_oid, s.owner, "
	"       COALESCE(s.max_attempts, 0), "
	"       (s.next_retry_at IS NULL OR s.next_retry_at <= pg_catalog.clock_timestamp()), "
	"       s.next_retry_at, "
	"       s.handler, s.owner_name, "
	"       s.start_snapshot, s.start_xid, "
	"       s.command_tags, s.object_types, s.schemas, s.echo, "
	"       s.resolved_in IS NOT DISTINCT FROM $2, "
	"       s.enabled AND s.confirmed, "
	"       (s.attempts OPERATOR(pg_catalog.<>) 0 OR s.failing_event IS NOT NULL "
	"        OR s.next_retry_at IS NOT NULL OR s.last_error IS NOT NULL "
	"        OR s.last_error_sqlstate IS NOT NULL), "
	"       s.created_at "
	"FROM ddl_notify.subscriber s WHERE s.id = $1 "
	"FOR UPDATE OF s SKIP LOCKED",
	2, {INT4OID, INT8OID}
};

static DdlnQuery q_lock_subscriber_010 = {
	"SELECT s.name, s.slot, s.handler::pg_catalog.oid, s.owner, "
	"       COALESCE(s.max_attempts, 0), "
	"       (s.next_retry_at IS NULL OR s.next_retry_at <= pg_catalog.clock_timestamp()), "
	"       s.next_retry_at, "
	"       NULL::pg_catalog.text, NULL::pg_catalog.name, "
	"       s.start_snapshot, s.start_xid, "
	"       s.command_tags, s.object_types, s.schemas, s.echo, "
	"       true, true, true, s.created_at "
	"FROM ddl_notify.subscriber s WHERE s.id = $1 "
	"FOR UPDATE OF s SKIP LOCKED",
	1, {INT4OID}
};

/*
 * Protocol step 4 is written to the heap directly (fetch.c,
 * DdlnSetProcessedBits): the events sorted by id, one event_xid lookup
 * each by (xid, id), so rows are taken in id order by every deliverer,
 * whatever the size of the table (two deliverers of different subscribers
 * never deadlock on them), and no plan, generic or not, can read the queue
 * another way.
 *
 * "need" is, per event, the mask of the slots of the subscribers for which
 * its transaction is past the subscription point: is_pending() without the
 * processed bit, computed by DdlnMarkHandled once per batch.  An event is
 * complete when every bit of its mask is set; nothing reads the subscriber
 * table per event, so the cost of a delivery does not grow with the number
 * of subscribers.
 */

/*
 * The subscription points, read once per DdlnMarkHandled(): who may still
 * need an event.  Read in the same transaction as the deletes, as the
 * is_pending() test they replace read them.
 */
static DdlnQuery q_subscription_points = {
	"SELECT s.slot, s.start_snapshot, s.start_xid FROM ddl_notify.subscriber s",
	0, {0}
};

/*
 * A transaction whose last event is gone leaves commit_order with it, found
 * by its position: commit_order's only index is on pos (one index entry per
 * DDL commit is what the DDL pays for it).
 *
 * "Has the transaction events left?" is a lookup of event_xid by xid, run
 * per row: OFFSET 0 keeps the EXISTS a subplan of its own (the planner does
 * not make it an anti join), whose only plan is that lookup.  As an anti
 * join, a plan made with the statistics of an empty queue could walk the
 * whole index, or hash it, for every batch.
 */
#define DDLN_EVENTS_OF_XACT(xid) \
	"SELECT 1 FROM ddl_notify.event e WHERE e.xid OPERATOR(pg_catalog.=) " xid " OFFSET 0"

static DdlnQuery q_delete_order = {
	"DELETE FROM ddl_notify.commit_order o "
	"WHERE o.pos OPERATOR(pg_catalog.=) ANY ($1) "
	"  AND NOT EXISTS (" DDLN_EVENTS_OF_XACT("o.xid") ")",
	1, {INT8ARRAYOID}
};

/*
 * The sweep's deletes name the rows they locked by ctid (a TID scan): a join
 * back by id or position had plans, under the statistics of an empty queue,
 * that read the queue once per row.  The rows are locked (FOR UPDATE) when
 * their ctids are read, so no other transaction moves them before the
 * delete.
 */
static DdlnQuery q_purge = {
	"DELETE FROM ddl_notify.event e WHERE e.ctid OPERATOR(pg_catalog.=) ANY (ARRAY("
	"  SELECT e2.ctid FROM ddl_notify.event e2 "
	"  WHERE NOT EXISTS (SELECT 1 FROM ddl_notify.subscriber s "
	"    WHERE ddl_notify.is_pending(e2.processed, e2.xid, s.slot, s.start_snapshot, s.start_xid)) "
	"  FOR UPDATE SKIP LOCKED))",
	0, {0}
};

/*
 * Every transaction that recorded events writes its commit position, in the
 * same transaction; a transaction without one would never be read.  The
 * sweep makes sure of it anyway: it gives each transaction this finds a
 * position, drawn as capture draws them (counter.c, not nextval(), so that
 * a CALL ddl_notify.deliver() leaves the caller's lastval() alone).
 */
static DdlnQuery q_heal_order = {
	"SELECT e.xid FROM ddl_notify.event e "
	"EXCEPT SELECT o.xid FROM ddl_notify.commit_order o",
	0, {0}
};

/* SKIP LOCKED: a row skip() deleted in a transaction still open is left */
static DdlnQuery q_purge_order = {
	"DELETE FROM ddl_notify.commit_order o WHERE o.ctid OPERATOR(pg_catalog.=) ANY (ARRAY("
	"  SELECT o2.ctid FROM ddl_notify.commit_order o2 "
	"  WHERE NOT EXISTS (" DDLN_EVENTS_OF_XACT("o2.xid") ") "
	"  FOR UPDATE SKIP LOCKED))",
	0, {0}
};

/*
 * The recent sweep's deletes (DdlnSweepRecent): the rows fetch.c's walk
 * found, by ctid (a TID scan whatever the statistics), each tested again
 * under its row lock as the full sweep's deletes test them: a row that
 * changed since the walk read it is deleted only if it is garbage still.
 */
static DdlnQuery q_sweep_events = {
	"DELETE FROM ddl_notify.event e WHERE e.ctid OPERATOR(pg_catalog.=) ANY (ARRAY("
	"  SELECT e2.ctid FROM ddl_notify.event e2 "
	"  WHERE e2.ctid OPERATOR(pg_catalog.=) ANY ($1) "
	"    AND NOT EXISTS (SELECT 1 FROM ddl_notify.subscriber s "
	"      WHERE ddl_notify.is_pending(e2.processed, e2.xid, s.slot, s.start_snapshot, s.start_xid)) "
	"  FOR UPDATE SKIP LOCKED))",
	1, {TIDARRAYOID}
};

static DdlnQuery q_sweep_orders = {
	"DELETE FROM ddl_notify.commit_order o WHERE o.ctid OPERATOR(pg_catalog.=) ANY (ARRAY("
	"  SELECT o2.ctid FROM ddl_notify.commit_order o2 "
	"  WHERE o2.ctid OPERATOR(pg_catalog.=) ANY ($1) "
	"    AND NOT EXISTS (" DDLN_EVENTS_OF_XACT("o2.xid") ") "
	"  FOR UPDATE SKIP LOCKED))",
	1, {TIDARRAYOID}
};

static DdlnQuery q_success = {
	"UPDATE ddl_notify.subscriber SET "
	"  delivered = delivered OPERATOR(pg_catalog.+) $2, "
	"  filtered = filtered OPERATOR(pg_catalog.+) $3, "
	"  last_event_id = $4, last_delivered_at = pg_catalog.clock_timestamp(), "
	"  attempts = 0, failing_event = NULL, next_retry_at = NULL, "
	"  last_error = NULL, last_error_sqlstate = NULL "
	"WHERE id = $1",
	4, {INT4OID, INT8OID, INT8OID, INT8OID}
};

/*
 * The counters shared memory held ($2-$4, $5-$6: NULL for none newer than
 * the row's) plus the batch's, moved into the row (progress.c), with the
 * reset of a failure's state that q_success makes.  0.2.0's table.
 */
static DdlnQuery q_move_progress = {
	"UPDATE ddl_notify.subscriber SET "
	"  delivered = delivered OPERATOR(pg_catalog.+) $2, "
	"  filtered = filtered OPERATOR(pg_catalog.+) $3, "
	"  loop_suppressed = loop_suppressed OPERATOR(pg_catalog.+) $4, "
	"  last_event_id = COALESCE($5, last_event_id), "
	"  last_delivered_at = COALESCE($6, last_delivered_at), "
	"  attempts = 0, failing_event = NULL, next_retry_at = NULL, "
	"  last_error = NULL, last_error_sqlstate = NULL "
	"WHERE id = $1",
	6, {INT4OID, INT8OID, INT8OID, INT8OID, INT8OID, TIMESTAMPTZOID}
};

/* events not delivered by the chain rule (G12, fetch.c), since 0.2.0 */
static DdlnQuery q_loop_suppressed = {
	"UPDATE ddl_notify.subscriber SET "
	"  loop_suppressed = loop_suppressed OPERATOR(pg_catalog.+) $2 "
	"WHERE id = $1",
	2, {INT4OID, INT8OID}
};

static DdlnQuery q_failure = {
	"UPDATE ddl_notify.subscriber SET "
	"  attempts = CASE WHEN failing_event IS NOT DISTINCT FROM $2 "
	"                  THEN attempts OPERATOR(pg_catalog.+) 1 ELSE 1 END, "
	"  failing_event = $2, last_error = $3, last_error_sqlstate = $4, "
	"  last_error_at = pg_catalog.clock_timestamp() "
	"WHERE id = $1 RETURNING attempts",
	4, {INT4OID, INT8OID, TEXTOID, TEXTOID}
};

static DdlnQuery q_backoff = {
	"UPDATE ddl_notify.subscriber SET "
	"  next_retry_at = pg_catalog.clock_timestamp() OPERATOR(pg_catalog.+) "
	"                  pg_catalog.make_interval(secs => $2::float8 OPERATOR(pg_catalog./) 1000) "
	"WHERE id = $1 RETURNING next_retry_at",
	2, {INT4OID, INT8OID}
};

static DdlnQuery q_dead_letter = {
	"INSERT INTO ddl_notify.dead_letter (subscriber, event_id, event, attempts, error, sqlstate, id) "
	"OVERRIDING SYSTEM VALUE "
	"SELECT $1, e.id, pg_catalog.to_jsonb(e), $3, $4, $5, $7 FROM ddl_notify.event e "
	"WHERE e.id = $2 AND e.xid = $6",
	7, {TEXTOID, INT8OID, INT4OID, TEXTOID, TEXTOID, XID8OID, INT8OID}
};

/* Is the event still pending for the subscriber (slot $3)? */
static DdlnQuery q_still_pending = {
	"SELECT 1 FROM ddl_notify.event e "
	"WHERE e.id OPERATOR(pg_catalog.=) $1 AND e.xid OPERATOR(pg_catalog.=) $2 "
	"  AND (e.processed OPERATOR(pg_catalog.&) (1::bigint OPERATOR(pg_catalog.<<) $3)) OPERATOR(pg_catalog.=) 0",
	3, {INT8OID, XID8OID, INT4OID}
};

static DdlnQuery q_max_dead_letter = {
	"SELECT pg_catalog.max(id) FROM ddl_notify.dead_letter", 0, {0}
};

static DdlnQuery q_after_dead_letter = {
	"UPDATE ddl_notify.subscriber SET attempts = 0, failing_event = NULL, "
	"  next_retry_at = NULL, dead_letters = dead_letters OPERATOR(pg_catalog.+) 1 "
	"WHERE id = $1",
	1, {INT4OID}
};

/* A subscriber's floor for the rest of a delivery round. */
typedef struct DdlnSubscriberFloor
{
	int32		id;
	DdlnFloor	floor;
} DdlnSubscriberFloor;

/* Batch outcome. */
typedef enum DdlnBatchStatus
{
	DDLN_BATCH_EMPTY,			/* nothing pending */
	DDLN_BATCH_DONE,			/* handled n events, ready to commit */
	DDLN_BATCH_HANDLER_FAILED,	/* handler failed at event failed_index */
	DDLN_BATCH_SKIPPED,			/* subscriber busy elsewhere, gone or in
								 * backoff */
	DDLN_BATCH_LOCKED			/* the bits' rows are locked by another
								 * transaction: try later */
} DdlnBatchStatus;

typedef struct DdlnBatch
{
	DdlnBatchStatus status;
	int			nevents;		/* events read */
	int			ncalls;			/* handler calls made */
	int64		nfiltered;		/* events its filters left out */
	int64		nsuppressed[DDLN_SUPPRESS_HOPS + 1];	/* kept back by the chain
														 * rule, by
														 * DdlnSuppressed */
	int			failed_index;
	DdlnEventKey failed;		/* the event at failed_index */
	DdlnEventKey first;			/* the first event read */
	DdlnEventKey last;			/* the last event read */
	bool		full;			/* ended by ddl_notify.batch_memory, not
								 * by the queue */
	bool		mark_conflict;	/* handlers ran, then the checked transition
								 * found a bit already set */
	ErrorData  *error;
	/* the counters, for after COMMIT (progress.c) */
	bool		add_progress;	/* add "progress" to shared memory */
	bool		moved_progress; /* "moved" went into the row */
	DdlnProgress progress;
	DdlnProgress moved;
	TransactionId moved_xid;	/* the transaction that moved it */
	TimestampTz created_at;		/* the subscriber's, the entry's key */
} DdlnBatch;

/*
 * Release the session-level advisory locks a handler took, after each call:
 * the worker would otherwise hold them until it exits.  Off for a round of
 * CALL deliver() in a session that held such locks of its own before it.
 */
static bool release_handler_locks = true;

/*
 * A delivery round runs in this backend: the engine's statements then wait
 * at most ddl_notify.lock_timeout for a lock.  skip() and unsubscribe() run
 * some of the same statements in a user's session, and wait as the user's
 * statements do.  Cleared when the round ends, by an error too.
 */
static bool in_delivery_round = false;
static bool handler_timeout_registered = false;
static TimeoutId handler_timeout_id;
static TimeoutId handler_kill_id;

/*
 * The handler call in progress, for the note the process leaves if the
 * handler timeout ends it (DdlnHandlerKilledAtExit).  Plain stores into
 * process memory around each call: the per-call cost of the rule.
 */
static DdlnEndedCall current_call;
static const char *current_call_name;	/* its subscriber's name */

static int
DdlnCompareInt64(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return (x > y) - (x < y);
}

static int
DdlnCompareEventId(const void *a, const void *b)
{
	return DdlnCompareInt64(&((const DdlnEventKey *) a)->id,
							&((const DdlnEventKey *) b)->id);
}

/* Prepare one of the engine's statements, once per backend. */
static SPIPlanPtr
DdlnPlan(DdlnQuery *q)
{
	if (q->plan == NULL)
	{
		/*
		 * A generic plan: these statements run thousands of times a second
		 * with parameters whose values do not change the best plan, and
		 * re-planning each execution cost the worker more than its work.
		 */
		SPIPlanPtr	plan = SPI_prepare_cursor(q->sql, q->nargs, q->argtypes,
											  CURSOR_OPT_GENERIC_PLAN);

		/* not reached: NULL only for bad arguments or no SPI connection; bad SQL is an ERROR */
		if (plan == NULL)
			elog(ERROR, "SPI_prepare failed for \"%s\": %s", q->sql,
				 SPI_result_code_string(SPI_result));
		/* not reached: fails only for a plan that is NULL, one-shot or kept already */
		if (SPI_keepplan(plan) != 0)
			elog(ERROR, "SPI_keepplan failed");
		q->plan = plan;
	}
	return q->plan;
}

/*
 * No write of the engine waits unboundedly for a lock another transaction
 * holds (a user's skip() left open, say): past ddl_notify.lock_timeout it
 * fails with 55P03, which the engine takes as "try this subscriber later".
 * Set at the caller's GUC nest level, and undone with it.  Only in a
 * delivery round: skip() and unsubscribe() wait as the user's statements do.
 */
static void
DdlnSetEngineLockTimeout(void)
{
	char		lock_timeout[32];

	if (!in_delivery_round)
		return;
	snprintf(lock_timeout, sizeof(lock_timeout), "%d", ddln_lock_timeout);
	(void) set_config_option("lock_timeout", lock_timeout,
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
							 true, 0, false);
}

/*
 * Run one of the engine's statements as the extension's owner, with a plan
 * prepared once per backend.
 */
static int
DdlnRun(DdlnQuery *q, Datum *values, const char *nulls, bool read_only, long count)
{
	DdlnSafeState safe;
	int			rc;
	bool		pushed = false;
	MemoryContext cxt = CurrentMemoryContext;

	DdlnBeginSafe(&safe);
	DdlnSetEngineLockTimeout();

	/*
	 * Between SPI_commit() and the next statement there is no active
	 * snapshot, and the worker has no portal to take one from: push one for
	 * this statement only, so that the snapshot stack is empty again at the
	 * next commit.
	 */
	if (!ActiveSnapshotSet())
	{
		PushActiveSnapshot(GetTransactionSnapshot());
		pushed = true;
	}
	rc = SPI_execute_plan(DdlnPlan(q), values, nulls, read_only, count);
	if (pushed)
		PopActiveSnapshot();
	DdlnEndSafe(&safe);

	/*
	 * SPI returns in its procedure context, which lives as long as the whole
	 * round: whatever the caller allocates next belongs in the caller's
	 * (batch) context, or a long round would keep every batch's memory.
	 */
	MemoryContextSwitchTo(cxt);
	/* not reached: < 0 only for bad arguments, COPY or transaction control, none of them ours */
	if (rc < 0)
		elog(ERROR, "SPI_execute_plan failed for \"%s\": %s", q->sql,
			 SPI_result_code_string(rc));
	return rc;
}

/*
 * For each event of "sorted", the mask of the slots whose subscribers must
 * see it: ddl_notify.is_pending() without its processed-bit test, for every
 * subscriber, from one read of their subscription points.  Consecutive
 * events of one transaction share it (events come sorted by id, and a
 * transaction's ids are mostly together), so the test runs about once per
 * transaction and subscriber, not per event.
 */
/* Every subscriber's subscription point, in the current memory context. */
static void
DdlnReadSubscriptionPoints(DdlnSubscriptionPoints *pts)
{
	int			nsubs;

	DdlnRun(&q_subscription_points, NULL, NULL, true, 0);
	nsubs = (int) SPI_processed;
	pts->n = nsubs;
	pts->slots = palloc(sizeof(int32) * Max(nsubs, 1));
	pts->snaps = palloc(sizeof(Datum) * Max(nsubs, 1));
	pts->start_xids = palloc(sizeof(FullTransactionId) * Max(nsubs, 1));
	for (int i = 0; i < nsubs; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;

		pts->slots[i] = DatumGetInt32(SPI_getbinval(tup, desc, 1, &isnull));
		/* copied: the tuple table goes now */
		pts->snaps[i] = datumCopy(SPI_getbinval(tup, desc, 2, &isnull), false, -1);
		pts->start_xids[i] = DatumGetFullTransactionId(SPI_getbinval(tup, desc, 3, &isnull));
	}
	SPI_freetuptable(SPI_tuptable);
}

static void
DdlnNeededMasks(const DdlnEventKey *sorted, int n, int64 *need)
{
	DdlnSubscriptionPoints pts;
	FullTransactionId last_xid = InvalidFullTransactionId;
	int64		last_need = 0;

	DdlnReadSubscriptionPoints(&pts);
	for (int i = 0; i < n; i++)
	{
		if (i == 0 || !FullTransactionIdEquals(sorted[i].xid, last_xid))
		{
			last_xid = sorted[i].xid;
			last_need = DdlnNeedOf(&pts, last_xid);
		}
		need[i] = last_need;
	}
}

/*
 * An event of "sorted" (sorted by id) was deleted: note its transaction's
 * commit position, if known.  (A position not known here, from skip() of an
 * event whose transaction has no commit_order row yet, is left to the sweep.)
 */
static void
DdlnNoteGone(const DdlnEventKey *sorted, int n, int64 id, int64 *gone_pos, int *ngone_pos)
{
	DdlnEventKey key;
	const DdlnEventKey *ev;

	key.id = id;
	ev = bsearch(&key, sorted, n, sizeof(DdlnEventKey), DdlnCompareEventId);
	if (ev != NULL && ev->pos != 0)
		gone_pos[(*ngone_pos)++] = ev->pos;
}

/*
 * Set the subscriber's processed bit on the given events, a checked
 * transition: every bit must have been clear, else another deliverer handled
 * one of them and this transaction must not commit.  Then delete the rows
 * that no subscriber needs any more.  Used by batches, skip() and dead
 * letters alike.
 */
void
DdlnMarkHandled(const char *subname, int32 slot, const DdlnEventKey *events, int n)
{
	DdlnMarkHandledAt(subname, slot, events, NULL, n);
}

/* An event and where a batch's read found its row, to sort them together. */
typedef struct DdlnEventAt
{
	DdlnEventKey key;
	ItemPointerData tid;
} DdlnEventAt;

static int
DdlnCompareEventAt(const void *a, const void *b)
{
	return DdlnCompareEventId(&((const DdlnEventAt *) a)->key,
							  &((const DdlnEventAt *) b)->key);
}

/* DdlnMarkHandled, told where the rows were read ("tids", may be NULL) */
static void
DdlnMarkHandledAt(const char *subname, int32 slot, const DdlnEventKey *events,
				  const ItemPointerData *tids, int n)
{
	int64		done;
	DdlnEventAt *at;
	DdlnEventKey *sorted;
	ItemPointerData *sorted_tids;
	int64	   *need;
	int64	   *gone;
	int			ngone = 0;
	int64	   *gone_pos;
	int			ngone_pos = 0;
	int			save_nestlevel;

	if (n == 0)
		return;
	at = palloc(sizeof(DdlnEventAt) * n);
	for (int i = 0; i < n; i++)
	{
		at[i].key = events[i];
		if (tids != NULL)
			at[i].tid = tids[i];
		else
			ItemPointerSetInvalid(&at[i].tid);
	}
	qsort(at, n, sizeof(DdlnEventAt), DdlnCompareEventAt);
	sorted = palloc(sizeof(DdlnEventKey) * n);
	sorted_tids = palloc(sizeof(ItemPointerData) * n);
	for (int i = 0; i < n; i++)
	{
		sorted[i] = at[i].key;
		sorted_tids[i] = at[i].tid;
	}
	need = palloc(sizeof(int64) * n);
	DdlnNeededMasks(sorted, n, need);

	/*
	 * The bits, and the rows nobody needs any more deleted at once (without
	 * first writing a bit nobody will read: the common case of a single
	 * subscriber), in C (fetch.c).
	 */
	gone = palloc(sizeof(int64) * n);
	save_nestlevel = NewGUCNestLevel();
	DdlnSetEngineLockTimeout();
	done = DdlnSetProcessedBits(sorted, sorted_tids, need, n, slot, gone, &ngone);
	AtEOXact_GUC(true, save_nestlevel);
	if (done != n)
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("processed bit of subscriber \"%s\" was already set on %lld of %d events",
						subname, (long long) (n - done), n),
				 errdetail("Another deliverer handled them; this transaction is rolled back so that nothing is handled twice.")));

	gone_pos = palloc(sizeof(int64) * Max(ngone, 1));
	for (int i = 0; i < ngone; i++)
		DdlnNoteGone(sorted, n, gone[i], gone_pos, &ngone_pos);

	/* transactions whose last event is gone leave commit_order, each once */
	if (ngone_pos > 0)
	{
		Datum	   *positions = palloc(sizeof(Datum) * ngone_pos);
		int			npositions = 0;
		Datum		ov[1];

		qsort(gone_pos, ngone_pos, sizeof(int64), DdlnCompareInt64);
		for (int i = 0; i < ngone_pos; i++)
		{
			if (i == 0 || gone_pos[i] != gone_pos[i - 1])
				positions[npositions++] = Int64GetDatum(gone_pos[i]);
		}
		ov[0] = PointerGetDatum(construct_array(positions, npositions, INT8OID, sizeof(int64),
												FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
		DdlnRun(&q_delete_order, ov, NULL, false, 0);
	}
}

/* Delete the events no subscriber needs (none left, or all subscribed later). */
void
DdlnPurge(void)
{
	DdlnRun(&q_purge, NULL, NULL, false, 0);
	DdlnRun(&q_purge_order, NULL, NULL, false, 0);
	DdlnRun(&q_heal_order, NULL, NULL, false, 0);
	if (SPI_processed > 0)
	{
		const DdlnRelids *relids = DdlnGetRelids(false);
		uint64		n = SPI_processed;
		FullTransactionId *xids = palloc(sizeof(FullTransactionId) * n);

		for (uint64 i = 0; i < n; i++)
		{
			bool		isnull;

			xids[i] = DatumGetFullTransactionId(SPI_getbinval(SPI_tuptable->vals[i],
															  SPI_tuptable->tupdesc, 1, &isnull));
		}
		SPI_freetuptable(SPI_tuptable);
		for (uint64 i = 0; i < n; i++)
			DdlnInsertCommitPosition(relids, xids[i]);
		pfree(xids);
	}
	else
		SPI_freetuptable(SPI_tuptable);
}

/* A tid[] of "n" ctids, for a query's parameter. */
static Datum
DdlnTidArray(const ItemPointerData *tids, int n)
{
	Datum	   *elems = palloc(sizeof(Datum) * Max(n, 1));

	for (int i = 0; i < n; i++)
		elems[i] = PointerGetDatum(&tids[i]);
	return PointerGetDatum(construct_array(elems, n, TIDOID, sizeof(ItemPointerData),
										   false, TYPALIGN_SHORT));
}

/*
 * The recent sweep (issue 38): what DdlnPurge deletes, found by a walk of
 * the queue from the position floor (fetch.c, DdlnSweepWalk) instead of
 * scans of the whole queue, which read every row version an old snapshot
 * keeps from being removed.  Its cost follows the rows still visible, at
 * most DDLN_SWEEP_VISIT events a call.  An event whose transaction has no
 * commit_order row is the full sweep's (DdlnPurge) to find.
 */
static void
DdlnSweepRecent(void)
{
	DdlnSubscriptionPoints pts;
	DdlnSweepFound found;
	Datum		v[1];

	DdlnReadSubscriptionPoints(&pts);
	DdlnSweepWalk(&pts, &found);
	if (found.nevents > 0)
	{
		v[0] = DdlnTidArray(found.events, found.nevents);
		DdlnRun(&q_sweep_events, v, NULL, false, 0);
	}
	if (found.norders > 0)
	{
		v[0] = DdlnTidArray(found.orders, found.norders);
		DdlnRun(&q_sweep_orders, v, NULL, false, 0);
	}
}

/*
 * On the way out of a process the handler timeout ended (failure.c): say so,
 * and leave the note of the call in shared memory for the next deliverer of
 * the database to count (pool.c).  A before_shmem_exit callback, so it runs
 * before a pool worker gives its slot up.
 */
static void
DdlnHandlerKilledAtExit(int code, Datum arg)
{
	bool		kept;

	if (!ddln_handler_killed)
		return;
	ddln_handler_killed = false;
	current_call.at = GetCurrentTimestamp();
	kept = DdlnKeepEndedCall(&current_call);
	ereport(LOG,
			(errcode(ERRCODE_QUERY_CANCELED),
			 errmsg("ddl_notify: handler of subscriber \"%s\" exceeded ddl_notify.handler_timeout (%d ms) and did not return within %d ms of its cancel; the %s was ended",
					current_call_name, current_call.timeout_ms,
					current_call.grace_ms, current_call.worker ? "worker" : "session"),
			 kept ? errdetail("The call on event %lld counts as a failed attempt of the subscriber.",
							  (long long) current_call.event.id) :
			 errdetail("The call on event %lld could not be counted as a failed attempt: ddl_notify is not in shared_preload_libraries.",
					   (long long) current_call.event.id)));
}

/* The handler timeout and its second stage, registered once per backend. */
static void
DdlnRegisterHandlerTimeout(void)
{
	if (handler_timeout_registered)
		return;
	handler_timeout_id = RegisterTimeout(USER_TIMEOUT, DdlnHandlerTimeoutHandler);
	handler_kill_id = RegisterTimeout(USER_TIMEOUT, DdlnHandlerKillHandler);
	before_shmem_exit(DdlnHandlerKilledAtExit, (Datum) 0);
	handler_timeout_registered = true;
}

/* Disarm the handler timeout (both stages), if armed. */
static void
DdlnDisableHandlerTimeout(void)
{
	DisableTimeoutParams t[2];

	ddln_handler_in_call = false;
	if (!handler_timeout_registered)
		return;
	t[0].id = handler_timeout_id;
	t[0].keep_indicator = false;
	t[1].id = handler_kill_id;
	t[1].keep_indicator = false;
	disable_timeouts(t, 2);
}

/*
 * Call one subscriber's handler for one event, as the subscriber's owner.
 *
 * The call is bounded by ddl_notify.handler_timeout whatever the handler
 * does (failure.c): a cancel at the timeout, the end of the process if the
 * call still runs DdlnHandlerGraceMs() later, and a call that returns after
 * its cancel (it trapped it) fails all the same.
 */
static void
DdlnCallHandler(DdlnSubscriber *sub, FmgrInfo *flinfo, Datum row,
				const DdlnEventKey *key, Datum chain)
{
	LOCAL_FCINFO(fcinfo, 1);
	Oid			save_userid;
	int			save_sec;
	int			save_nestlevel;

	GetUserIdAndSecContext(&save_userid, &save_sec);
	SetUserIdAndSecContext(sub->owner,
						   save_sec | SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	/* the search_path is the batch's (DdlnRunBatch), restored after the call */
	save_nestlevel = NewGUCNestLevel();
	/* the DDL the handler runs is caused by this subscriber, via this chain */
	ddln_current_origin = sub->name;
	ddln_current_chain = chain;
	PushActiveSnapshot(GetTransactionSnapshot());

	if (ddln_handler_timeout > 0)
	{
		EnableTimeoutParams t[2];

		DdlnRegisterHandlerTimeout();
		current_call.dboid = MyDatabaseId;
		current_call.subscriber = sub->id;
		current_call.event = *key;
		current_call.timeout_ms = ddln_handler_timeout;
		current_call.grace_ms = DdlnHandlerGraceMs();
		current_call.worker = DdlnAmBackgroundWorker();
		current_call.at = 0;
		current_call_name = sub->name;
		ddln_handler_timed_out = false;
		ddln_handler_in_call = true;
		t[0].id = handler_timeout_id;
		t[0].type = TMPARAM_AFTER;
		t[0].delay_ms = ddln_handler_timeout;
		t[1].id = handler_kill_id;
		t[1].type = TMPARAM_AFTER;
		/* no overflow: both are at most INT_MAX, and the grace the smaller */
		t[1].delay_ms = ddln_handler_timeout > INT_MAX - current_call.grace_ms ?
			INT_MAX : ddln_handler_timeout + current_call.grace_ms;
		enable_timeouts(t, 2);
	}

	InitFunctionCallInfoData(*fcinfo, flinfo, 1, InvalidOid, NULL, NULL);
	fcinfo->args[0].value = row;
	fcinfo->args[0].isnull = false;
	(void) FunctionCallInvoke(fcinfo);

	if (ddln_handler_timeout > 0)
	{
		DdlnDisableHandlerTimeout();

		/*
		 * The handler trapped the cancel and returned: the call still ran
		 * past the timeout, and fails as a cancelled one does (PG_CATCH in
		 * DdlnRunBatch words the message).
		 */
		if (ddln_handler_timed_out)
			ereport(ERROR,
					(errcode(ERRCODE_QUERY_CANCELED),
					 errmsg("canceling statement due to ddl_notify.handler_timeout"),
					 errdetail("The handler trapped the cancel and returned after the timeout.")));
	}
	if (release_handler_locks)
		LockReleaseSession(USER_LOCKMETHOD);

	PopActiveSnapshot();
	ddln_current_origin = NULL;
	ddln_current_chain = (Datum) 0;
	/* nothing the handler SET outlives the call, not even a plain SET */
	AtEOXact_GUC(false, save_nestlevel);
	SetUserIdAndSecContext(save_userid, save_sec);

	/* the next handler sees what this one did */
	CommandCounterIncrement();
}

/*
 * Make every constraint immediate for the rest of the batch: handlers run in
 * a security-restricted operation, which cannot leave deferred triggers
 * behind (they would fire at COMMIT as whoever delivers).  A deferrable
 * constraint a handler violates therefore fails the handler's statement.
 */
static void
DdlnConstraintsImmediate(void)
{
	ConstraintsSetStmt *stmt = makeNode(ConstraintsSetStmt);

	/* SET CONSTRAINTS ALL IMMEDIATE, without parsing it each batch */
	stmt->constraints = NIL;
	stmt->deferred = false;
	AfterTriggerSetState(stmt);
}

/* Lock and read the subscriber; false if another deliverer holds it. */
static bool
DdlnLockSubscriber(int32 id, DdlnSubscriber *sub)
{
	Datum		values[2];
	HeapTuple	tup;
	TupleDesc	desc;
	bool		isnull;
	Datum		d;
	bool		names = DdlnSubscriberHasNames();
	bool		resolved_here;

	values[0] = Int32GetDatum(id);
	values[1] = Int64GetDatum((int64) GetSystemIdentifier());
	DdlnRun(names ? &q_lock_subscriber : &q_lock_subscriber_010, values, NULL, false, 0);
	if (SPI_processed == 0)
	{
		SPI_freetuptable(SPI_tuptable);
		return false;
	}
	tup = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	sub->id = id;
	sub->name = SPI_getvalue(tup, desc, 1);
	sub->slot = DatumGetInt32(SPI_getbinval(tup, desc, 2, &isnull));
	sub->handler = DatumGetObjectId(SPI_getbinval(tup, desc, 3, &isnull));
	sub->owner = DatumGetObjectId(SPI_getbinval(tup, desc, 4, &isnull));
	sub->max_attempts = DatumGetInt32(SPI_getbinval(tup, desc, 5, &isnull));
	sub->due = DatumGetBool(SPI_getbinval(tup, desc, 6, &isnull));
	d = SPI_getbinval(tup, desc, 7, &isnull);
	sub->next_retry = isnull ? 0 : DatumGetTimestampTz(d);
	sub->handler_name = names ? SPI_getvalue(tup, desc, 8) : NULL;
	sub->owner_name = names ? SPI_getvalue(tup, desc, 9) : NULL;
	/* copied: the tuple table goes now, the batch reads them later */
	sub->start_snapshot = datumCopy(SPI_getbinval(tup, desc, 10, &isnull), false, -1);
	sub->start_xid = DatumGetFullTransactionId(SPI_getbinval(tup, desc, 11, &isnull));
	DdlnReadFilter(tup, desc, 12, &sub->command_tags);
	DdlnReadFilter(tup, desc, 13, &sub->object_types);
	DdlnReadFilter(tup, desc, 14, &sub->schemas);
	sub->echo = DatumGetBool(SPI_getbinval(tup, desc, 15, &isnull));
	resolved_here = DatumGetBool(SPI_getbinval(tup, desc, 16, &isnull));
	sub->enabled = DatumGetBool(SPI_getbinval(tup, desc, 17, &isnull));
	sub->needs_reset = DatumGetBool(SPI_getbinval(tup, desc, 18, &isnull));
	sub->created_at = DatumGetTimestampTz(SPI_getbinval(tup, desc, 19, &isnull));
	SPI_freetuptable(SPI_tuptable);
	sub->binding.ok = true;
	/* a handler its name found that nobody chose here: unconfirmed, skipped */
	if (names && sub->enabled &&
		!DdlnResolveSubscriber(id, sub->handler_name, &sub->handler, &sub->owner,
							   sub->owner_name, resolved_here, &sub->binding))
		sub->enabled = false;
	sub->handler_exists = OidIsValid(sub->handler) &&
		SearchSysCacheExists1(PROCOID, ObjectIdGetDatum(sub->handler));
	sub->owner_exists = OidIsValid(sub->owner) &&
		SearchSysCacheExists1(AUTHOID, ObjectIdGetDatum(sub->owner));
	return true;
}

/*
 * Has the subscriber table the counter of the chain rule (0.2.0), or is it
 * still the table of 0.1.0, before ALTER EXTENSION UPDATE?
 */
static bool
DdlnSubscriberCounts(void)
{
	Oid			rel = get_relname_relid("subscriber", DdlnGetRelids(false)->nsp);

	return OidIsValid(rel) && get_attnum(rel, "loop_suppressed") != InvalidAttrNumber;
}

/*
 * May "role" read the statement texts of events?  What docs/reference.md grants for
 * it: SELECT on ddl_notify.event, or on its query column.  A handler gets the
 * query only if its owner may read it.
 */
static bool
DdlnMayReadQuery(Oid role)
{
	const DdlnRelids *relids = DdlnGetRelids(false);

	return pg_class_aclcheck(relids->event, role, ACL_SELECT) == ACLCHECK_OK ||
		pg_attribute_aclcheck(relids->event, DDLN_EV_QUERY + 1, role, ACL_SELECT) == ACLCHECK_OK;
}

/*
 * The counters of a batch that handled its events, in the top transaction
 * that locked the subscriber's row (updating it in the subtransaction would
 * make a MultiXact of the lock).  With shared memory (progress.c) they go
 * there after COMMIT, and the row is written only to reset a failure's
 * state or now and then (DDLN_PROGRESS_FLUSH_MS); else into the row now.
 * Either way they count only if the batch commits.
 */
static void
DdlnRecordSuccess(DdlnSubscriber *sub, DdlnBatch *batch)
{
	int64		nfiltered = batch->nfiltered;
	const int64 *nsuppressed = batch->nsuppressed;
	Datum		sv[6];
	char		nulls[6] = {' ', ' ', ' ', ' ', ' ', ' '};
	int64		nloop = nsuppressed[DDLN_SUPPRESS_ECHO] +
		nsuppressed[DDLN_SUPPRESS_LOOP] + nsuppressed[DDLN_SUPPRESS_HOPS];
	bool		names = DdlnSubscriberCounts();

	if (nloop > 0)
		ereport(nsuppressed[DDLN_SUPPRESS_LOOP] + nsuppressed[DDLN_SUPPRESS_HOPS] > 0 ? LOG : DEBUG1,
				(errmsg_plural("ddl_notify: %lld event caused by handlers not delivered to subscriber \"%s\"",
							   "ddl_notify: %lld events caused by handlers not delivered to subscriber \"%s\"",
							   (unsigned long) nloop, (long long) nloop, sub->name),
				 errdetail("Its own echo: %lld; in a loop through it: %lld; past ddl_notify.max_chain_length (%d): %lld.",
						   (long long) nsuppressed[DDLN_SUPPRESS_ECHO],
						   (long long) nsuppressed[DDLN_SUPPRESS_LOOP],
						   ddln_max_chain_length,
						   (long long) nsuppressed[DDLN_SUPPRESS_HOPS])));

	batch->progress.delivered = batch->ncalls;
	batch->progress.filtered = nfiltered;
	batch->progress.loop_suppressed = nloop;
	batch->progress.last_event_id = batch->last.id;
	batch->progress.last_delivered_at = GetCurrentTimestamp();
	sv[0] = Int32GetDatum(sub->id);

	batch->created_at = sub->created_at;
	if (names && DdlnProgressReserve(sub->id, sub->created_at))
	{
		DdlnProgress *held = &batch->moved;

		if (!DdlnProgressPending(sub->id, sub->created_at, held) && !sub->needs_reset)
		{
			batch->add_progress = true;
			return;
		}
		/* what shared memory holds and this batch's, into the row */
		sv[1] = Int64GetDatum(held->delivered + batch->progress.delivered);
		sv[2] = Int64GetDatum(held->filtered + batch->progress.filtered);
		sv[3] = Int64GetDatum(held->loop_suppressed + batch->progress.loop_suppressed);
		sv[4] = Int64GetDatum(batch->progress.last_event_id);
		sv[5] = TimestampTzGetDatum(batch->progress.last_delivered_at);
		DdlnRun(&q_move_progress, sv, nulls, false, 0);
		DdlnProgressMoving(sub->id, sub->created_at, held);
		batch->moved_xid = GetTopTransactionId();
		batch->moved_progress = true;
		return;
	}

	sv[1] = Int64GetDatum(batch->ncalls);
	/* a subscriber table of 0.1.0 has no loop_suppressed: "filtered" */
	sv[2] = Int64GetDatum(nfiltered + (names ? 0 : nloop));
	sv[3] = Int64GetDatum(batch->last.id);
	DdlnRun(&q_success, sv, NULL, false, 0);
	if (nloop > 0 && names)
	{
		sv[1] = Int64GetDatum(nloop);
		DdlnRun(&q_loop_suppressed, sv, NULL, false, 0);
	}
}

/* DdlnFlushProgress: lock a subscriber's row if nobody holds it, and move. */
static DdlnQuery q_flush_lock = {
	"SELECT 1 FROM ddl_notify.subscriber "
	"WHERE id = $1 AND created_at = $2 FOR UPDATE SKIP LOCKED",
	2, {INT4OID, TIMESTAMPTZOID}
};
static DdlnQuery q_flush_progress = {
	"UPDATE ddl_notify.subscriber SET "
	"  delivered = delivered OPERATOR(pg_catalog.+) $2, "
	"  filtered = filtered OPERATOR(pg_catalog.+) $3, "
	"  loop_suppressed = loop_suppressed OPERATOR(pg_catalog.+) $4, "
	"  last_event_id = COALESCE($5, last_event_id), "
	"  last_delivered_at = COALESCE($6, last_delivered_at) "
	"WHERE id = $1",
	6, {INT4OID, INT8OID, INT8OID, INT8OID, INT8OID, TIMESTAMPTZOID}
};

/* One transaction: move what it can; "did" says which (after its COMMIT). */
static void
DdlnFlushProgressTx(int n, const int32 *ids, const TimestampTz *created,
					DdlnProgress *moved, bool *did, TransactionId *xid)
{
	char		lock_timeout[32];

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();

	/*
	 * Bounded, for a worker that is shutting down: no lock wait past
	 * ddl_notify.lock_timeout (a row a deliverer holds is skipped), and no
	 * wait for a synchronous standby (counts are statistics; a crash before
	 * the standby has them loses them as a crash does).  Both undone at the
	 * transaction's end.
	 */
	snprintf(lock_timeout, sizeof(lock_timeout), "%d", ddln_lock_timeout);
	(void) set_config_option("lock_timeout", lock_timeout,
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_LOCAL,
							 true, 0, false);
	(void) set_config_option("synchronous_commit", "local",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_LOCAL,
							 true, 0, false);
	/* not reached: in PostgreSQL 15 SPI_connect() returns SPI_OK_CONNECT or raises an ERROR */
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	for (int i = 0; i < n; i++)
	{
		Datum		v[6];
		char		nulls[6] = {' ', ' ', ' ', ' ', ' ', ' '};

		v[0] = Int32GetDatum(ids[i]);
		v[1] = TimestampTzGetDatum(created[i]);
		DdlnRun(&q_flush_lock, v, NULL, false, 0);
		if (SPI_processed == 0)
			continue;			/* a deliverer holds it: it moves them */
		/* only the holder of the row's lock adds or moves: these are final */
		(void) DdlnProgressPending(ids[i], created[i], &moved[i]);
		v[1] = Int64GetDatum(moved[i].delivered);
		v[2] = Int64GetDatum(moved[i].filtered);
		v[3] = Int64GetDatum(moved[i].loop_suppressed);
		v[4] = Int64GetDatum(moved[i].last_event_id);
		v[5] = TimestampTzGetDatum(moved[i].last_delivered_at);
		if (moved[i].last_event_id == 0)
			nulls[4] = nulls[5] = 'n';
		DdlnRun(&q_flush_progress, v, nulls, false, 0);
		DdlnProgressMoving(ids[i], created[i], &moved[i]);
		*xid = GetTopTransactionId();
		did[i] = true;
	}
	SPI_finish();
	CommitTransactionCommand();
}

/*
 * A pool worker giving its slot back, or told to stop (SIGTERM) between
 * rounds (worker.c), outside a transaction: move the counts shared memory
 * holds for this database's subscribers into their rows (progress.c's
 * rules), so that a restart after the pool went idle, or after a clean
 * shutdown, finds them there.  One transaction, bounded (see
 * DdlnFlushProgressTx).  A failure is logged and changes nothing: the
 * counts stay in shared memory for the next deliverer.
 */
void
DdlnFlushProgress(void)
{
	int32	   *ids;
	TimestampTz *created;
	DdlnProgress *moved;
	bool	   *did;
	TransactionId *xid;
	int			n = DdlnProgressHeld(&ids, &created);
	MemoryContext cxt = CurrentMemoryContext;

	if (n == 0)
		return;
	moved = palloc0(sizeof(DdlnProgress) * n);
	did = palloc0(sizeof(bool) * n);
	/* the transaction that moved them (palloc'd: set inside PG_TRY) */
	xid = palloc0(sizeof(TransactionId));
	PG_TRY();
	{
		DdlnFlushProgressTx(n, ids, created, moved, did, xid);
	}
	/* untested: the subscriber table altered by hand, say; nothing moved */
	PG_CATCH();
	{
		MemoryContextSwitchTo(cxt);
		EmitErrorReport();
		FlushErrorState();
		AbortCurrentTransaction();
		return;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(cxt);
	for (int i = 0; i < n; i++)
	{
		if (did[i])
			DdlnProgressMoved(ids[i], created[i], *xid);
	}
}

/* After a batch's COMMIT: its counters, and those moved into the row. */
static void
DdlnProgressCommitted(int32 id, const DdlnBatch *batch)
{
	if (batch->add_progress)
		DdlnProgressAdd(id, batch->created_at, &batch->progress);
	if (batch->moved_progress)
		DdlnProgressMoved(id, batch->created_at, batch->moved_xid);
}

/*
 * May the subscriber's handler be called now?  An ERROR (the batch's
 * failure, recorded on its first event) if its owner or handler is gone, or
 * the function its name found may not be bound, or the handler's shape or
 * the owner's rights no longer hold (trust.c), right before the calls.
 */
static void
DdlnCheckCallable(DdlnSubscriber *sub)
{
	DdlnVerdict verdict;

	if (!sub->owner_exists && !OidIsValid(sub->owner))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("role \"%s\" that owns subscriber \"%s\" does not exist",
						sub->owner_name ? sub->owner_name : "?", sub->name),
				 errdetail("The subscriber was restored from a dump or upgraded, and no role of that name exists here."),
				 errhint("Create the role, or let a superuser unsubscribe it.")));
	if (!sub->owner_exists)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("role %u that owns subscriber \"%s\" does not exist",
						sub->owner, sub->name),
				 errhint("A superuser can unsubscribe it.")));
	/* a function its name found, but which may not be bound by itself */
	if (!sub->binding.ok)
		DdlnRaiseVerdict(&sub->binding);
	if (!sub->handler_exists && !OidIsValid(sub->handler))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("handler function %s of subscriber \"%s\" does not exist",
						sub->handler_name ? sub->handler_name : "?", sub->name),
				 errdetail("The subscriber was restored from a dump or upgraded, and no function of that signature exists here."),
				 errhint("Create the function, or subscribe again with an existing one, or unsubscribe.")));
	if (!sub->handler_exists)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("handler function %u of subscriber \"%s\" does not exist",
						sub->handler, sub->name),
				 errhint("Subscribe again with an existing function, or unsubscribe.")));
	/* the shape and the owner's rights, again, right before the call (trust.c) */
	if (!DdlnJudgeHandler(sub->handler, sub->owner, DDLN_BIND_CALL, &verdict))
		DdlnRaiseVerdict(&verdict);
}

/*
 * Protocol step 3, in the batch's subtransaction: call the handler for each
 * wanted event, count those filtered out or kept back by the chain rule.
 * "*current" is the event being handed over, for the caller's PG_CATCH.
 */
static void
DdlnCallHandlers(DdlnSubscriber *sub, const DdlnFetched *fetched, DdlnBatch *batch,
				 volatile int *current)
{
	FmgrInfo	flinfo;
	int			batch_nestlevel;

	DdlnCheckCallable(sub);
	fmgr_info(sub->handler, &flinfo);
	DdlnConstraintsImmediate();

	/*
	 * The handlers' search_path, set once for the batch: each call restores
	 * it with every other setting the handler changed (DdlnCallHandler); a
	 * failure's subtransaction abort undoes it.
	 */
	batch_nestlevel = NewGUCNestLevel();
	(void) set_config_option("search_path", DDLN_HANDLER_SEARCH_PATH,
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
							 true, 0, false);

	for (int i = 0; i < fetched->n; i++)
	{
		*current = i;
		CHECK_FOR_INTERRUPTS();
		if (!fetched->wanted[i])
		{
			if (fetched->suppressed[i] != DDLN_DELIVER)
				batch->nsuppressed[fetched->suppressed[i]]++;
			else
				batch->nfiltered++;
			continue;
		}
		DdlnCallHandler(sub, &flinfo, fetched->rows[i], &fetched->keys[i],
						fetched->chains[i]);
		batch->ncalls++;
	}
	AtEOXact_GUC(false, batch_nestlevel);
}

/*
 * A batch's subtransaction failed at event "current" (n: while setting the
 * bits) with "edata", an error that is not the deliverer's own: how
 * (DdlnBatchStatus), and on which event.
 */
static void
DdlnBatchFailed(DdlnSubscriber *sub, DdlnBatch *batch, const DdlnFetched *fetched,
				int current, ErrorData *edata)
{
	int			n = fetched->n;

	if (current == n && edata->sqlerrcode == ERRCODE_LOCK_NOT_AVAILABLE)
	{
		/*
		 * Setting the bits waited past ddl_notify.lock_timeout for rows
		 * another transaction holds: not the handler's failure.
		 */
		batch->status = DDLN_BATCH_LOCKED;
	}
	else
	{
		if (ddln_handler_timed_out && edata->sqlerrcode == ERRCODE_QUERY_CANCELED)
			edata->message = psprintf("handler of subscriber \"%s\" exceeded ddl_notify.handler_timeout (%d ms)",
									  sub->name, ddln_handler_timeout);
		batch->status = DDLN_BATCH_HANDLER_FAILED;

		/*
		 * current == n: every handler returned, the bits were being set.
		 * DdlnMarkHandled's checked transition says 40001 when one was
		 * set already; anything else there is a failure like any other.
		 */
		batch->mark_conflict = (current == n &&
								edata->sqlerrcode == ERRCODE_T_R_SERIALIZATION_FAILURE);
		batch->failed_index = Min(current < 0 ? 0 : current, n - 1);
		batch->failed = fetched->keys[batch->failed_index];
	}
	ddln_handler_timed_out = false;
	batch->error = edata;
}

/*
 * Read up to "limit" pending events of the subscriber and hand them over in a
 * subtransaction.  The caller holds the subscriber's lock and commits.
 */
static void
DdlnRunBatch(DdlnSubscriber *sub, int limit, const DdlnFloor *floor,
			 DdlnBatch *batch)
{
	DdlnFetched fetched;
	int			n;
	volatile int current = -1;	/* the event being handed over, n: the bits */
	MemoryContext oldcxt = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;

	memset(batch, 0, sizeof(*batch));
	sub->may_read_query = sub->owner_exists && DdlnMayReadQuery(sub->owner);
	DdlnFetch(sub, limit, floor, &fetched);
	n = fetched.n;
	if (n == 0)
	{
		batch->status = DDLN_BATCH_EMPTY;
		return;
	}
	batch->nevents = n;
	batch->full = fetched.full;
	batch->first = fetched.keys[0];
	batch->last = fetched.keys[n - 1];

	pgstat_report_activity(STATE_RUNNING,
						   psprintf(n == 1 ? "ddl_notify: delivering %d event to subscriber \"%s\"" :
									"ddl_notify: delivering %d events to subscriber \"%s\"",
									n, sub->name));

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(oldcxt);
	PG_TRY();
	{
		DdlnCallHandlers(sub, &fetched, batch, &current);
		current = n;			/* past the handlers: the bits */
		DdlnMarkHandledAt(sub->name, sub->slot, fetched.keys, fetched.tids, n);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcxt);
		CurrentResourceOwner = oldowner;
		batch->status = DDLN_BATCH_DONE;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		DdlnDisableHandlerTimeout();
		ddln_current_origin = NULL;
		ddln_current_chain = (Datum) 0;

		/* in the batch's memory: one failure each, not one per event a round */
		edata = DdlnCopyErrorCapped(oldcxt);

		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcxt);
		CurrentResourceOwner = oldowner;
		/* a failed handler's session-level advisory locks too */
		if (release_handler_locks)
			LockReleaseSession(USER_LOCKMETHOD);

		if (DdlnErrorIsDeliverers(edata))
			ReThrowError(edata);

		DdlnBatchFailed(sub, batch, &fetched, current, edata);
	}
	PG_END_TRY();

	if (batch->status == DDLN_BATCH_DONE)
		DdlnRecordSuccess(sub, batch);
}

/*
 * Send the event to ddl_notify.dead_letter for the subscriber and mark it
 * handled, in a subtransaction.  If that fails (the event's row locked by
 * another transaction past ddl_notify.lock_timeout, a trigger someone put on
 * dead_letter, anything but the deliverer's own cancel or shutdown), nothing
 * of it is done and false is returned: the failure stays this subscriber's,
 * retried later like any other, and never ends the round for the others.
 */
static bool
DdlnDeadLetter(DdlnSubscriber *sub, const DdlnEventKey *event, int32 attempts,
			   const char *error, const char *sqlstate)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;
	volatile bool done = false;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(oldcxt);
	PG_TRY();
	{
		Datum		values[7];
		bool		isnull;
		Datum		d;
		int64		floor = 0;

		/* above every id in use: a restore's setval() may have set the sequence back */
		DdlnRun(&q_max_dead_letter, NULL, NULL, true, 0);
		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		if (!isnull)
			floor = DatumGetInt64(d);
		SPI_freetuptable(SPI_tuptable);

		values[0] = CStringGetTextDatum(sub->name);
		values[1] = Int64GetDatum(event->id);
		values[2] = Int32GetDatum(attempts);
		values[3] = CStringGetTextDatum(error);
		values[4] = CStringGetTextDatum(sqlstate);
		values[5] = FullTransactionIdGetDatum(event->xid);
		/* drawn by counter.c: the identity's nextval() would be a CALL deliver() caller's lastval() */
		values[6] = Int64GetDatum(DdlnCounterNextNamed("dead_letter_id_seq", floor));
		DdlnRun(&q_dead_letter, values, NULL, false, 0);
		DdlnMarkHandled(sub->name, sub->slot, event, 1);
		values[0] = Int32GetDatum(sub->id);
		DdlnRun(&q_after_dead_letter, values, NULL, false, 0);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcxt);
		CurrentResourceOwner = oldowner;
		done = true;
	}
	PG_CATCH();
	{
		ErrorData  *edata = DdlnCopyErrorCapped(oldcxt);

		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcxt);
		CurrentResourceOwner = oldowner;
		/* untested: the deliverer's own error (a cancel, a shutdown) inside the dead letter's write */
		if (DdlnErrorIsDeliverers(edata))
			ReThrowError(edata);
		ereport(LOG,
				(errmsg("ddl_notify: dead letter of event %lld for subscriber \"%s\" postponed: %s",
						(long long) event->id, sub->name, edata->message)));
	}
	PG_END_TRY();
	return done;
}

/*
 * Record a failed attempt of the subscriber on one event, in the current
 * transaction (which holds the subscriber's lock): error, attempts, next
 * retry; or, past max_attempts, a dead letter.  Returns true if the event was
 * sent to the dead-letter table (the subscriber can go on).
 */
static bool
DdlnRecordFailure(DdlnSubscriber *sub, const DdlnEventKey *event, ErrorData *edata,
				  DdlnRoundResult *result)
{
	Datum		values[7];
	char		nulls[7] = {' ', ' ', ' ', ' ', ' ', ' ', ' '};
	bool		isnull;
	int32		attempts;
	const char *message = edata->message ? edata->message : "unknown error";
	const char *sqlstate = unpack_sql_state(edata->sqlerrcode);
	StringInfoData text;

	initStringInfo(&text);
	appendStringInfoString(&text, message);
	if (edata->detail)
		appendStringInfo(&text, " (detail: %s)", edata->detail);
	if (edata->context)
		appendStringInfo(&text, " (context: %s)", edata->context);

	values[0] = Int32GetDatum(sub->id);
	values[1] = Int64GetDatum(event->id);
	values[2] = CStringGetTextDatum(text.data);
	values[3] = CStringGetTextDatum(sqlstate);
	DdlnRun(&q_failure, values, nulls, false, 0);
	if (SPI_processed == 0)
		return false;			/* unsubscribed meanwhile */
	attempts = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_freetuptable(SPI_tuptable);
	result->failures++;

	ereport(LOG,
			(errmsg("ddl_notify: subscriber \"%s\" failed on event %lld (attempt %d): %s",
					sub->name, (long long) event->id, attempts, message)));

	if (sub->max_attempts > 0 && attempts >= sub->max_attempts &&
		DdlnDeadLetter(sub, event, attempts, text.data, sqlstate))
	{
		ereport(LOG,
				(errmsg("ddl_notify: event %lld sent to ddl_notify.dead_letter for subscriber \"%s\" after %d attempts",
						(long long) event->id, sub->name, attempts)));
		return true;
	}
	else
	{
		int64		delay = ddln_retry_initial_delay;
		TimestampTz next;
		Datum		d;

		for (int i = 1; i < attempts && delay < ddln_retry_max_delay; i++)
			delay *= 2;
		delay = Min(delay, (int64) ddln_retry_max_delay);
		values[0] = Int32GetDatum(sub->id);
		values[1] = Int64GetDatum(delay);
		DdlnRun(&q_backoff, values, nulls, false, 0);
		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		next = DatumGetTimestampTz(d);
		SPI_freetuptable(SPI_tuptable);
		if (result->next_retry == 0 || next < result->next_retry)
			result->next_retry = next;
		return false;
	}
}

/* Ask the caller to come back within ddl_notify.lock_timeout. */
static void
DdlnRetryLater(DdlnRoundResult *result)
{
	TimestampTz when = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
												   ddln_lock_timeout);

	if (result->next_retry == 0 || when < result->next_retry)
		result->next_retry = when;
}

/*
 * Commit; on failure return the error, in the caller's memory (the new
 * transaction is clean).
 */
static ErrorData *
DdlnTryCommit(void)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	ErrorData  *volatile edata = NULL;

	PG_TRY();
	{
		SPI_commit();
	}
	PG_CATCH();
	{
		edata = DdlnCopyErrorCapped(oldcxt);
		if (DdlnErrorIsDeliverers(edata))
			ReThrowError(edata);
	}
	PG_END_TRY();
	DdlnStartTransaction();
	return edata;
}

static bool DdlnDeliverSubscriberLoop(int32 id, DdlnRoundResult *result,
									  MemoryContext batchcxt, DdlnFloor *floor);

/*
 * A handler call of this subscriber was ended with its process by the
 * handler timeout (failure.c): record it as a failed attempt on its event
 * (backoff, or a dead letter past max_attempts) before the handler is called
 * again, so that a handler that never returns costs one attempt per backoff,
 * never a worker per round.  The caller holds the subscriber's lock.
 * Returns 0 if there was nothing to count; else it committed: 1 if the
 * failure was recorded, -1 if that commit failed (the note is kept for the
 * next turn).
 */
static int
DdlnCountEndedCall(DdlnSubscriber *sub, DdlnRoundResult *result)
{
	DdlnEndedCall call;
	Datum		values[3];
	ErrorData  *edata;
	bool		found;

	if (!DdlnTakeEndedCall(MyDatabaseId, sub->id, &call))
		return 0;
	values[0] = Int64GetDatum(call.event.id);
	values[1] = FullTransactionIdGetDatum(call.event.xid);
	values[2] = Int32GetDatum(sub->slot);
	DdlnRun(&q_still_pending, values, NULL, true, 1);
	found = (SPI_processed > 0);
	SPI_freetuptable(SPI_tuptable);
	if (!found)
		return 0;				/* handled meanwhile (skip()): nothing to count */

	edata = palloc0(sizeof(ErrorData));
	edata->elevel = ERROR;
	edata->sqlerrcode = ERRCODE_QUERY_CANCELED;
	edata->message = psprintf("handler of subscriber \"%s\" exceeded ddl_notify.handler_timeout (%d ms) and did not return; the %s was ended",
							  sub->name, call.timeout_ms, call.worker ? "worker" : "session");
	edata->detail = psprintf("The handler went on %d ms after its cancel (it trapped it), so its process was ended.",
							 call.grace_ms);
	(void) DdlnRecordFailure(sub, &call.event, edata, result);
	if (DdlnTryCommit() == NULL)
		return 1;
	(void) DdlnKeepEndedCall(&call);
	return -1;
}

/*
 * Deliver to one subscriber for one turn: at most DDLN_BATCHES_PER_TURN
 * full batches' worth of events, then give the others a turn.  Returns true
 * if the subscriber may have more to do.  "floor" is where its committed
 * batches of this round stopped; the turn moves it on.
 */
static bool
DdlnDeliverSubscriber(int32 id, DdlnRoundResult *result, MemoryContext keep,
					  DdlnFloor *floor)
{
	MemoryContext batchcxt;
	MemoryContext oldcxt = CurrentMemoryContext;
	bool		more;

	batchcxt = AllocSetContextCreate(keep, "ddl_notify batch", ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(batchcxt);
	more = DdlnDeliverSubscriberLoop(id, result, batchcxt, floor);
	MemoryContextSwitchTo(oldcxt);
	MemoryContextDelete(batchcxt);
	return more;
}

/*
 * One subscriber's turn, across its batches (DdlnDeliverSubscriberLoop):
 * the batch size follows what the engine knows about failures.
 */
typedef struct DdlnTurn
{
	int32		id;
	DdlnRoundResult *result;
	DdlnFloor  *floorp;			/* committed: where the round's floor is */
	int			limit;			/* the next batch's size */
	int			isolating;		/* single-event batches still to run */
	int64		budget;			/* events left for this turn */
	int			ndead;			/* dead letters in the open transaction */
	DdlnFloor	here;			/* as the open transaction sees it */
	bool		reread;			/* the last batch lost a race at its bits */
} DdlnTurn;

/* What the turn does after a batch (or before one). */
typedef enum DdlnStep
{
	DDLN_STEP_GO,				/* (DdlnTurnGate) a batch may start */
	DDLN_STEP_NEXT,				/* another batch */
	DDLN_STEP_DONE,				/* nothing more for now: return false */
	DDLN_STEP_YIELD				/* the others' turn, more to do: return true */
} DdlnStep;

/*
 * Before a batch: lock and read the subscriber, count a handler call the
 * timeout ended, and say whether a batch may start: DDLN_STEP_GO, or
 * DDLN_STEP_NEXT (a failure was recorded and committed: look again), or
 * DDLN_STEP_DONE (not now: busy elsewhere, paused, in backoff).
 */
static DdlnStep
DdlnTurnGate(DdlnTurn *t, DdlnSubscriber *sub)
{
	if (!DdlnLockSubscriber(t->id, sub))
	{
		t->result->busy++;
		SPI_commit();
		DdlnStartTransaction();
		return DDLN_STEP_DONE;
	}
	switch (DdlnCountEndedCall(sub, t->result))
	{
		case 1:
			return DDLN_STEP_NEXT;	/* now in backoff, or dead-lettered */
		case -1:
			return DDLN_STEP_DONE;	/* counted at its next turn */
		default:
			break;
	}
	if (!sub->enabled)
	{
		/* paused, or a restored row waiting for confirmation */
		SPI_commit();
		DdlnStartTransaction();
		return DDLN_STEP_DONE;
	}
	if (!sub->due)
	{
		if (t->result->next_retry == 0 || sub->next_retry < t->result->next_retry)
			t->result->next_retry = sub->next_retry;
		SPI_commit();
		DdlnStartTransaction();
		return DDLN_STEP_DONE;
	}
	return DDLN_STEP_GO;
}

/*
 * A handler failed (or the checked transition found a bit set): after a
 * race lost at the bits, read again once; after a failure at event k > 0,
 * one batch of the k events before it; else record the failure on the
 * event (backoff, or a dead letter and on with the next event, alone).
 */
static DdlnStep
DdlnAfterHandlerFailure(DdlnTurn *t, DdlnSubscriber *sub, DdlnBatch *batch)
{
	if (batch->mark_conflict && !t->reread)
	{
		/*
		 * Someone else set processed bits of this batch while its handlers
		 * ran: not the handlers' failure.  Roll it back (the handlers' work
		 * too) and read again: what the other one handled is no longer
		 * pending.
		 */
		ereport(WARNING,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("ddl_notify: %s", batch->error->message),
				 errdetail("Subscriber \"%s\": the batch was rolled back and is read again; no failure is recorded.",
						   sub->name)));
		SPI_rollback();
		DdlnStartTransaction();
		t->ndead = 0;
		t->here = *t->floorp;
		t->reread = true;
		return DDLN_STEP_NEXT;
	}
	if (batch->failed_index > 0)
	{
		/* hand over the events before the failing one first */
		SPI_rollback();
		DdlnStartTransaction();
		t->ndead = 0;
		t->here = *t->floorp;
		t->limit = batch->failed_index;
		return DDLN_STEP_NEXT;
	}
	if (DdlnRecordFailure(sub, &batch->failed, batch->error, t->result))
	{
		/*
		 * Dead-lettered: go on with the next event, alone (if it fails too,
		 * nothing else was read for nothing; if not, the batch after it is a
		 * full one again), in the same transaction: a run of events that all
		 * fail costs one commit per DDLN_DEAD_LETTERS_PER_XACT, not one each.
		 */
		t->here = batch->first;
		t->limit = 1;
		t->isolating = 0;
		/* a failure costs a batch's worth of the turn */
		t->budget -= ddln_batch_size;
		if (++t->ndead >= DDLN_DEAD_LETTERS_PER_XACT || t->budget <= 0)
		{
			if (DdlnTryCommit() == NULL)
				*t->floorp = t->here;
			t->here = *t->floorp;
			t->ndead = 0;
		}
		if (t->budget <= 0)
			return DDLN_STEP_YIELD; /* the others' turn */
		return DDLN_STEP_NEXT;
	}
	(void) DdlnTryCommit();
	return DDLN_STEP_DONE;
}

/*
 * A batch handled its events: COMMIT.  Only once it returned does the floor
 * move and do the counts count (G3).  If COMMIT failed: with one event the
 * culprit is known and its failure is recorded; with more, the next ones go
 * one per transaction until it is found.
 */
static DdlnStep
DdlnAfterBatchDone(DdlnTurn *t, DdlnSubscriber *sub, DdlnBatch *batch)
{
	ErrorData  *commit_error = DdlnTryCommit();

	t->ndead = 0;
	if (commit_error == NULL)
	{
		bool		drained = (batch->nevents < t->limit && !batch->full);

		DdlnProgressCommitted(t->id, batch);
		t->reread = false;
		*t->floorp = t->here = batch->last;
		t->result->delivered += batch->ncalls;
		t->result->handled += batch->nevents;
		/* a batch that filled its memory costs a full one */
		t->budget -= batch->full ? Max(batch->nevents, ddln_batch_size) : batch->nevents;
		if (t->isolating > 0)
			t->isolating--;
		if (drained && t->isolating == 0)
			return DDLN_STEP_DONE;
		t->limit = (t->isolating > 0) ? 1 : ddln_batch_size;
		if (t->budget <= 0)
			return DDLN_STEP_YIELD; /* the others' turn */
		return DDLN_STEP_NEXT;
	}
	t->here = *t->floorp;

	/*
	 * COMMIT failed: the handlers' work and the bits are gone.  With one
	 * event the culprit is known; with more, isolate.
	 */
	if (batch->nevents > 1)
	{
		t->isolating = batch->nevents;
		t->limit = 1;
		return DDLN_STEP_NEXT;
	}
	if (DdlnLockSubscriber(t->id, sub))
	{
		bool		dead = DdlnRecordFailure(sub, &batch->first, commit_error, t->result);

		if (DdlnTryCommit() == NULL && dead)
			*t->floorp = t->here = batch->first;
		if (dead)
		{
			t->limit = ddln_batch_size;
			return DDLN_STEP_NEXT;
		}
	}
	else
	{
		SPI_commit();
		DdlnStartTransaction();
	}
	return DDLN_STEP_DONE;
}

/*
 * The batch size follows what the engine knows about failures: full batches
 * while all goes well; after a handler failed at event k, one batch of the k
 * events before it, then full batches again (the failing event now comes
 * first); after a failure at COMMIT of n events, n batches of one event, the
 * culprit being one of them, then full batches again.
 */
static bool
DdlnDeliverSubscriberLoop(int32 id, DdlnRoundResult *result,
						  MemoryContext batchcxt, DdlnFloor *floorp)
{
	DdlnTurn	t;

	t.id = id;
	t.result = result;
	t.floorp = floorp;
	t.limit = ddln_batch_size;
	t.isolating = 0;
	t.budget = (int64) DDLN_BATCHES_PER_TURN * ddln_batch_size;
	t.ndead = 0;
	t.here = *floorp;
	t.reread = false;

	for (;;)
	{
		DdlnSubscriber sub;
		DdlnBatch	batch;
		DdlnStep	step;

		CHECK_FOR_INTERRUPTS();
		MemoryContextReset(batchcxt);
		MemoryContextSwitchTo(batchcxt);

		step = DdlnTurnGate(&t, &sub);
		if (step == DDLN_STEP_NEXT)
			continue;
		if (step == DDLN_STEP_DONE)
			return false;

		DdlnRunBatch(&sub, t.limit, &t.here, &batch);

		switch (batch.status)
		{
			case DDLN_BATCH_EMPTY:
			case DDLN_BATCH_SKIPPED:
				SPI_commit();
				DdlnStartTransaction();
				return false;

			case DDLN_BATCH_LOCKED:
				/* the handlers' work is undone; this subscriber, later */
				ereport(LOG,
						(errmsg("ddl_notify: subscriber \"%s\" is tried again later: %s",
								sub.name, batch.error->message)));
				SPI_rollback();
				DdlnStartTransaction();
				DdlnRetryLater(result);
				return false;

			case DDLN_BATCH_HANDLER_FAILED:
				step = DdlnAfterHandlerFailure(&t, &sub, &batch);
				break;

			case DDLN_BATCH_DONE:
				step = DdlnAfterBatchDone(&t, &sub, &batch);
				break;
		}
		if (step == DDLN_STEP_DONE)
			return false;
		if (step == DDLN_STEP_YIELD)
			return true;
	}
}

/*
 * Every transaction of the engine runs READ COMMITTED, whatever the
 * session's default: each statement must see what committed before it.
 */
void
DdlnStartTransaction(void)
{
	if (!FirstSnapshotSet)
		XactIsoLevel = XACT_READ_COMMITTED;
	XactReadOnly = false;
}

/* Does this backend hold an advisory lock? */
static bool
DdlnHoldsAdvisoryLocks(void)
{
	LockData   *locks = GetLockStatusData();
	bool		held = false;

	for (int i = 0; i < locks->nelements && !held; i++)
	{
		LockInstanceData *l = &locks->locks[i];

		held = (l->pid == MyProcPid && l->holdMask != 0 &&
				l->locktag.locktag_type == LOCKTAG_ADVISORY);
	}
	return held;
}

/*
 * The passes of one delivery round over the subscribers, until nothing is
 * left (or the pool's time slice is over), then the sweep.  Its own function
 * so that DdlnDeliverRound() can clear in_delivery_round however it ends.
 */
static void
DdlnRoundLoop(DdlnRoundResult *result, MemoryContext keep, DdlnSweep sweep)
{
	bool		more = true;
	int			nfloors = 0;
	int			maxfloors = 16;
	DdlnSubscriberFloor *floors;

	floors = MemoryContextAlloc(keep, sizeof(DdlnSubscriberFloor) * maxfloors);

	while (more)
	{
		int32	   *ids;
		int			nsubs;

		more = false;
		DdlnRun(&q_list_subscribers, NULL, NULL, true, 0);
		nsubs = (int) SPI_processed;
		ids = MemoryContextAlloc(keep, sizeof(int32) * Max(nsubs, 1));
		for (int i = 0; i < nsubs; i++)
		{
			bool		isnull;

			ids[i] = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[i],
												 SPI_tuptable->tupdesc, 1, &isnull));
		}
		SPI_freetuptable(SPI_tuptable);
		SPI_commit();
		DdlnStartTransaction();
		/*
		 * Notes of ended handler calls of subscribers since removed.  (A
		 * subscriber missing from this list cannot have a note yet: its
		 * call would have begun a handler timeout before the list.)
		 */
		DdlnForgetEndedCalls(MyDatabaseId, ids, nsubs);
		DdlnProgressForget(ids, nsubs);

		for (int i = 0; i < nsubs; i++)
		{
			int			f = 0;

			while (f < nfloors && floors[f].id != ids[i])
				f++;
			if (f == nfloors)
			{
				if (nfloors == maxfloors)
				{
					maxfloors *= 2;
					floors = repalloc(floors, sizeof(DdlnSubscriberFloor) * maxfloors);
				}
				floors[f].id = ids[i];
				floors[f].floor.xid = InvalidFullTransactionId;
				floors[f].floor.id = 0;
				floors[f].floor.pos = 0;
				nfloors++;
			}
			if (DdlnDeliverSubscriber(ids[i], result, keep, &floors[f].floor))
				more = true;
		}
		pfree(ids);
		/* a pool worker whose time slice is over stops here (worker.c) */
		if (more && ddln_round_yield_hook != NULL && ddln_round_yield_hook())
		{
			result->more = true;
			break;
		}
	}

	/*
	 * Sweep the rows nobody needs: committed before every current
	 * subscriber subscribed, or left by one that unsubscribed.  Rows
	 * every subscriber handled are gone already (DdlnMarkHandled).  The
	 * full sweep scans the whole queue, so the worker does it only now and
	 * then; the recent one walks from the position floor (DdlnSweepRecent).
	 */
	if (sweep != DDLN_SWEEP_NONE)
	{
		/* no subscriber waits on the sweep: the pool sends no helper for it */
		if (ddln_round_sweep_hook != NULL)
			ddln_round_sweep_hook();
		if (sweep == DDLN_SWEEP_FULL)
			DdlnPurge();
		else
			DdlnSweepRecent();
		/* DDL replication's outbox, read by logical decoding only (outbox.c) */
		DdlnOutboxPrune();
		SPI_commit();
		DdlnStartTransaction();
	}
}

/*
 * One delivery round: every subscriber that is due, until nothing is left
 * or every remaining subscriber is in backoff, then (if "sweep") the sweep of
 * rows nobody needs.  Called inside a started transaction, in a memory
 * context that outlives it (the procedure's; the worker's loop context);
 * returns inside a fresh transaction, in that context.
 */
void
DdlnDeliverRound(DdlnRoundResult *result, DdlnSweep sweep)
{
	MemoryContext keep;
	MemoryContext oldcxt = CurrentMemoryContext;

	memset(result, 0, sizeof(*result));

	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot deliver DDL events during recovery"),
				 errhint("Delivery resumes on the primary, or on this server once it is promoted.")));

	/*
	 * The round's memory, across its transactions.  A child of the caller's
	 * context, which outlives them too (SPI_commit returns in it), and which
	 * the caller frees: the procedure's with its portal, the worker's at its
	 * next loop.  Not freed here on error: an error the engine re-throws
	 * (ReThrowError after CopyErrorData, as SPI_commit does too) keeps
	 * pointers into the copy's memory, its file and function names, until it
	 * is reported, after this function is gone.  Freeing it first made the
	 * report read freed memory: a crash on cancel.
	 */
	/* not reached: an invariant of both callers (deliver() and the worker's loop) */
	if (oldcxt == TopTransactionContext || oldcxt == CurTransactionContext)
		elog(ERROR, "ddl_notify delivery must start in a memory context that outlives the transaction");
	keep = AllocSetContextCreate(oldcxt, "ddl_notify delivery round",
								 ALLOCSET_DEFAULT_SIZES);

	/* not reached: in PostgreSQL 15 SPI_connect_ext() returns SPI_OK_CONNECT or raises an ERROR */
	if (SPI_connect_ext(SPI_OPT_NONATOMIC) != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect_ext failed");

	/* start from a clean READ COMMITTED transaction */
	SPI_commit();
	DdlnStartTransaction();

	/*
	 * Every advisory lock this backend holds now is a session-level one (the
	 * transaction-level ones went with the commit): the worker holds none; a
	 * session that called deliver() keeps its own, and then the handlers'.
	 */
	release_handler_locks = DdlnAmBackgroundWorker() || !DdlnHoldsAdvisoryLocks();
	/* the flag goes with the round, however it ends (a user's skip() after a failed CALL deliver() waits as usual) */
	in_delivery_round = true;
	PG_TRY();
	{
		DdlnRoundLoop(result, keep, sweep);
	}
	PG_FINALLY();
	{
		in_delivery_round = false;
	}
	PG_END_TRY();

	pgstat_report_activity(STATE_IDLE, NULL);
	SPI_finish();
	MemoryContextSwitchTo(oldcxt);
	MemoryContextDelete(keep);
}

/*
 * CALL ddl_notify.deliver(): one round in this session, one transaction per
 * batch, exactly as the worker does it.
 */
Datum
ddl_notify_deliver(PG_FUNCTION_ARGS)
{
	DdlnRoundResult result;

	if (fcinfo->context == NULL || !IsA(fcinfo->context, CallContext) ||
		((CallContext *) fcinfo->context)->atomic)
		ereport(ERROR,
				(errcode(ERRCODE_ACTIVE_SQL_TRANSACTION),
				 errmsg("ddl_notify.deliver() cannot run inside a transaction block"),
				 errdetail("Delivery commits one transaction per batch."),
				 errhint("Run CALL ddl_notify.deliver() as a statement of its own.")));

	DdlnDeliverRound(&result, DDLN_SWEEP_FULL);
	/* a subscriber left in backoff: a pool worker comes back for it */
	DdlnRequestRetry(MyDatabaseId, result.next_retry);

	if (result.failures > 0)
		ereport(NOTICE,
				(errmsg_plural("ddl_notify: %d failed attempt recorded",
							   "ddl_notify: %d failed attempts recorded",
							   result.failures, result.failures),
				 errdetail_plural("%lld event was delivered.", "%lld events were delivered.",
								  (unsigned long) result.delivered, (long long) result.delivered),
				 errhint("See ddl_notify.subscriber_status for the errors.")));
	PG_RETURN_VOID();
}
