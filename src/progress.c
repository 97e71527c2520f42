/*-------------------------------------------------------------------------
 *
 * progress.c
 *	  The subscribers' delivery counters (delivered, filtered,
 *	  loop_suppressed, last_event_id, last_delivered_at) kept in shared
 *	  memory between writes of their subscriber rows.
 *
 * Why: the engine used to update the subscriber's row once per batch for
 * them.  Behind a session holding an old snapshot none of those versions
 * can be removed, so the row bloated with the engine's own bookkeeping and
 * every batch that read it (its lock, the subscription points) walked more
 * versions: 3,000 batches behind a REPEATABLE READ snapshot left a 3.2 MB
 * subscriber table and 2.6-3.8 times the time.
 *
 * Rules kept here:
 * - A batch adds its counts after its COMMIT returned (DdlnProgressAdd):
 *	 nothing in memory says an event was handled before that (G3).
 * - The counts move into the row (the caller's UPDATE, with the amounts
 *	 DdlnProgressPending read) in a batch transaction that writes the row
 *	 anyway (the reset of a failure's attempts) or once
 *	 DDLN_PROGRESS_FLUSH_MS passed since the last move, by the deliverer
 *	 that holds the row's lock; they leave shared memory only after that
 *	 transaction committed (DdlnProgressMoved).  So the row gets one
 *	 version per subscriber per DDLN_PROGRESS_FLUSH_MS at most, whatever
 *	 the number of batches.
 * - A move is noted before its COMMIT, with its transaction and what it
 *	 takes out (DdlnProgressMoving).  The next deliverer to hold the row's
 *	 lock settles it if its mover has not yet (DdlnProgressSettle: that
 *	 transaction has ended; committed, its counts leave shared memory;
 *	 else the note is dropped), before it reads the counts: a second
 *	 deliverer of the database (two workers) that took the lock between
 *	 the mover's COMMIT and its DdlnProgressMoved moved the same counts
 *	 again, and the view's delivered went up, then down (issue 38).  The
 *	 mover's own DdlnProgressMoved does nothing for a move settled already.
 * - Only the deliverer holding a subscriber's row lock (G8) adds or moves
 *	 its counts; readers take the lock shared.
 * - subscriber_status adds the row's counts and these
 *	 (ddl_notify.subscriber_progress()), with the last move put back for a
 *	 reader whose snapshot does not see it in the row although it left
 *	 shared memory, and left out for one that sees it in the row before it
 *	 left (DdlnProgressAsSeen): a reading never counts a move twice or not
 *	 at all, and a REPEATABLE READ reader's count does not go down across
 *	 one move.  Across two moves (30 s apart at least) such a reader may
 *	 still miss the earlier one.
 * - A worker giving its slot back, or told to stop (SIGTERM) between
 *	 rounds, moves its database's counts first, in a transaction of its
 *	 own, for each subscriber whose row it can lock at once
 *	 (DdlnFlushProgress, deliver.c).  So a restart after the pool went idle,
 *	 or a clean shutdown, loses nothing.  A worker the pool itself stops
 *	 (DROP DATABASE, DROP EXTENSION) does not: its counts stay here for the
 *	 next deliverer.
 * - A crash, or a worker stopped inside a round, loses what was not moved
 *	 yet (at most DDLN_PROGRESS_FLUSH_MS worth, and only while a worker
 *	 still serves the database), as PostgreSQL's own statistics are lost.
 * - Without shared memory (ddl_notify not in shared_preload_libraries),
 *	 with the table full, or on a subscriber table of 0.1.0, the caller
 *	 updates the row per batch as before (DdlnProgressReserve says false).
 * - Entries are keyed by database and subscriber id, and hold the
 *	 subscriber's created_at: ids start again at 1 after DROP and CREATE
 *	 EXTENSION (and the schema's OID may come back too), created_at tells
 *	 the new subscriber from the old.  Those of subscribers gone are dropped
 *	 by the next round of their database (DdlnProgressForget).
 *
 * Floor: engine: called by deliver.c (the counters), by _PG_init (its
 * shared memory) and through SQL by subscriber_status
 * (subscriber_progress()); calls fetch.c (the pending events) and
 * common.c.
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"
#include "utils/xid8.h"

#include "common.h"
#include "engine.h"

PG_FUNCTION_INFO_V1(ddl_notify_subscriber_progress);

/* subscribers whose counters shared memory holds at once */
#define DDLN_PROGRESS_MAX	4096

typedef struct DdlnProgressKey
{
	Oid			dboid;
	int32		id;				/* subscriber.id */
} DdlnProgressKey;

typedef struct DdlnProgressEntry
{
	DdlnProgressKey key;
	TimestampTz created;		/* subscriber.created_at: which subscriber of
								 * that id */
	DdlnProgress counts;		/* not yet in the row */
	TimestampTz moved_at;		/* last move into the row, or creation */
	TransactionId move_xid;		/* the last move's transaction, if any */
	DdlnProgress move;			/* what it moved into the row */
	bool		move_done;		/* taken out of counts (it committed) */
} DdlnProgressEntry;

static LWLock *progress_lock = NULL;
static HTAB *progress_hash = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void
DdlnProgressShmemRequestHook(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(hash_estimate_size(DDLN_PROGRESS_MAX, sizeof(DdlnProgressEntry)));
	RequestNamedLWLockTranche("ddl_notify progress", 1);
}

static void
DdlnProgressShmemStartup(void)
{
	HASHCTL		info;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(DdlnProgressKey);
	info.entrysize = sizeof(DdlnProgressEntry);
	progress_hash = DdlnShmemInitHash("ddl_notify progress", DDLN_PROGRESS_MAX,
									  DDLN_PROGRESS_MAX, &info, HASH_ELEM | HASH_BLOBS);
	progress_lock = &(GetNamedLWLockTranche("ddl_notify progress"))->lock;
	LWLockRelease(AddinShmemInitLock);
}

/* Called from _PG_init while preloading. */
void
DdlnProgressShmemRequest(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = DdlnProgressShmemRequestHook;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = DdlnProgressShmemStartup;
}

static void
DdlnProgressKeyOf(int32 id, DdlnProgressKey *key)
{
	memset(key, 0, sizeof(*key));
	key->dboid = MyDatabaseId;
	key->id = id;
}

/* The subscriber's entry, if it has one (not one of an earlier namesake). */
static DdlnProgressEntry *
DdlnProgressFind(int32 id, TimestampTz created)
{
	DdlnProgressKey key;
	DdlnProgressEntry *e;

	DdlnProgressKeyOf(id, &key);
	e = hash_search(progress_hash, &key, HASH_FIND, NULL);
	return (e != NULL && e->created == created) ? e : NULL;
}

/*
 * May the subscriber's counts of the batch in progress go to shared memory?
 * Makes its entry, so that DdlnProgressAdd cannot fail after COMMIT.  False:
 * the caller writes them to the row in the batch's transaction.
 */
bool
DdlnProgressReserve(int32 id, TimestampTz created)
{
	DdlnProgressKey key;
	DdlnProgressEntry *e;
	bool		found;

	if (progress_hash == NULL)
		return false;
	DdlnProgressKeyOf(id, &key);
	LWLockAcquire(progress_lock, LW_EXCLUSIVE);
	e = hash_search(progress_hash, &key, HASH_ENTER_NULL, &found);
	/* new, or left by a subscriber of the same id since gone */
	if (e != NULL && (!found || e->created != created))
	{
		e->created = created;
		memset(&e->counts, 0, sizeof(e->counts));
		e->moved_at = GetCurrentTimestamp();
		e->move_xid = InvalidTransactionId;
		e->move_done = false;
	}
	LWLockRelease(progress_lock);
	return e != NULL;
}

/* Take a committed move out of the counts, once (the caller holds the lock). */
static void
DdlnProgressTakeOut(DdlnProgressEntry *e)
{
	e->counts.delivered -= e->move.delivered;
	e->counts.filtered -= e->move.filtered;
	e->counts.loop_suppressed -= e->move.loop_suppressed;
	/* the row has it now; no batch since: nothing of ours is newer */
	if (e->counts.last_event_id == e->move.last_event_id)
	{
		e->counts.last_event_id = 0;
		e->counts.last_delivered_at = 0;
	}
	e->move_done = true;
}

/*
 * Did move transaction "xid" commit?  False in "*known" for one so old that
 * the clog no longer holds it (a move whose mover ended between its COMMIT
 * and DdlnProgressMoved, with no batch of the subscriber since), rather
 * than the clog's error.
 */
static bool
DdlnMoveCommitted(TransactionId xid, bool *known)
{
	bool		committed = false;

	LWLockAcquire(XactTruncationLock, LW_SHARED);
	*known = !TransactionIdPrecedes(xid, DdlnOldestClogXid());
	if (*known)
		committed = TransactionIdDidCommit(xid);
	LWLockRelease(XactTruncationLock);
	return committed;
}

/*
 * Settle the subscriber's last move if its mover has not (it commits, then
 * calls DdlnProgressMoved; a deliverer that takes the row's lock in
 * between must not move the same counts again, which made the view's
 * delivered count jump up and then fall back).  The caller holds the
 * subscriber's row lock, so that move's transaction has ended: committed,
 * its counts leave shared memory; else (rolled back, or its process
 * ended, or too old to tell) it is forgotten.
 */
static void
DdlnProgressSettle(int32 id, TimestampTz created)
{
	DdlnProgressEntry *e;
	TransactionId xid = InvalidTransactionId;
	bool		committed;
	bool		known;

	LWLockAcquire(progress_lock, LW_SHARED);
	e = DdlnProgressFind(id, created);
	if (e != NULL && TransactionIdIsValid(e->move_xid) && !e->move_done)
		xid = e->move_xid;
	LWLockRelease(progress_lock);
	/* (this transaction's own, or one still running: not settled here) */
	if (!TransactionIdIsValid(xid) || TransactionIdIsCurrentTransactionId(xid) ||
		TransactionIdIsInProgress(xid))
		return;
	/* the clog is read without the LWLock held */
	committed = DdlnMoveCommitted(xid, &known);
	LWLockAcquire(progress_lock, LW_EXCLUSIVE);
	e = DdlnProgressFind(id, created);
	if (e != NULL && TransactionIdEquals(e->move_xid, xid) && !e->move_done)
	{
		if (committed)
		{
			DdlnProgressTakeOut(e);
			e->moved_at = GetCurrentTimestamp();
		}
		else
			e->move_xid = InvalidTransactionId;
	}
	LWLockRelease(progress_lock);
}

/*
 * The counts shared memory holds for the subscriber (zeros if none), and
 * whether it is time to move them into the row.  A move of another
 * deliverer that committed is settled first.
 */
bool
DdlnProgressPending(int32 id, TimestampTz created, DdlnProgress *out)
{
	DdlnProgressEntry *e;
	bool		due = false;

	memset(out, 0, sizeof(*out));
	if (progress_hash == NULL)
		return false;
	DdlnProgressSettle(id, created);
	LWLockAcquire(progress_lock, LW_SHARED);
	e = DdlnProgressFind(id, created);
	if (e != NULL)
	{
		*out = e->counts;
		due = TimestampDifferenceExceeds(e->moved_at, GetCurrentTimestamp(),
										 DDLN_PROGRESS_FLUSH_MS);
	}
	LWLockRelease(progress_lock);
	return due;
}

/* After a batch's COMMIT: add its counts. */
void
DdlnProgressAdd(int32 id, TimestampTz created, const DdlnProgress *batch)
{
	DdlnProgressEntry *e;

	if (progress_hash == NULL)
		return;
	LWLockAcquire(progress_lock, LW_EXCLUSIVE);
	/* made by DdlnProgressReserve; gone only if the subscriber went since */
	e = DdlnProgressFind(id, created);
	if (e != NULL)
	{
		e->counts.delivered += batch->delivered;
		e->counts.filtered += batch->filtered;
		e->counts.loop_suppressed += batch->loop_suppressed;
		if (batch->last_event_id != 0)
		{
			e->counts.last_event_id = batch->last_event_id;
			e->counts.last_delivered_at = batch->last_delivered_at;
		}
	}
	LWLockRelease(progress_lock);
}

/*
 * In the transaction that adds "moved" (what DdlnProgressPending returned)
 * to the row, after that UPDATE (the transaction has its xid), before its
 * COMMIT: note the move, so that a deliverer that takes the row's lock
 * before DdlnProgressMoved, and a reader of subscriber_status, know what
 * it moved.
 */
void
DdlnProgressMoving(int32 id, TimestampTz created, const DdlnProgress *moved)
{
	DdlnProgressEntry *e;

	if (progress_hash == NULL)
		return;
	LWLockAcquire(progress_lock, LW_EXCLUSIVE);
	e = DdlnProgressFind(id, created);
	if (e != NULL)
	{
		e->move_xid = GetTopTransactionId();
		e->move = *moved;
		e->move_done = false;
	}
	LWLockRelease(progress_lock);
}

/*
 * After the COMMIT of transaction "xid", which noted its move
 * (DdlnProgressMoving): take what it moved out of shared memory, unless
 * a deliverer settled it already.
 */
void
DdlnProgressMoved(int32 id, TimestampTz created, TransactionId xid)
{
	DdlnProgressEntry *e;

	if (progress_hash == NULL)
		return;
	LWLockAcquire(progress_lock, LW_EXCLUSIVE);
	e = DdlnProgressFind(id, created);
	if (e != NULL && TransactionIdEquals(e->move_xid, xid) && !e->move_done)
	{
		DdlnProgressTakeOut(e);
		e->moved_at = GetCurrentTimestamp();
	}
	LWLockRelease(progress_lock);
}

/*
 * The subscribers of this database whose counts shared memory holds (ids
 * and created_at, palloc'd; their number returned), for DdlnFlushProgress.
 */
int
DdlnProgressHeld(int32 **ids, TimestampTz **created)
{
	HASH_SEQ_STATUS seq;
	DdlnProgressEntry *e;
	int			n = 0;
	long		cap;

	*ids = NULL;
	*created = NULL;
	if (progress_hash == NULL)
		return 0;
	LWLockAcquire(progress_lock, LW_SHARED);
	cap = hash_get_num_entries(progress_hash);
	if (cap > 0)
	{
		*ids = palloc(sizeof(int32) * cap);
		*created = palloc(sizeof(TimestampTz) * cap);
		hash_seq_init(&seq, progress_hash);
		while ((e = hash_seq_search(&seq)) != NULL)
		{
			if (e->key.dboid != MyDatabaseId ||
				(e->counts.delivered == 0 && e->counts.filtered == 0 &&
				 e->counts.loop_suppressed == 0 && e->counts.last_event_id == 0))
				continue;
			(*ids)[n] = e->key.id;
			(*created)[n] = e->created;
			n++;
		}
	}
	LWLockRelease(progress_lock);
	return n;
}

/*
 * Drop the entries of this database's subscribers that are gone: of an id
 * below the highest of "ids" (the subscribers a round just read) and not
 * among them.  Ids are drawn in increasing order, so a higher one may be a
 * subscriber newer than the list, and is left.  (An entry left by a
 * subscriber whose id came back, after DROP and CREATE EXTENSION, is told
 * apart by its created_at.)
 */
void
DdlnProgressForget(const int32 *ids, int n)
{
	HASH_SEQ_STATUS seq;
	DdlnProgressEntry *e;
	int32		max = 0;

	if (progress_hash == NULL)
		return;
	for (int i = 0; i < n; i++)
		max = Max(max, ids[i]);
	LWLockAcquire(progress_lock, LW_EXCLUSIVE);
	hash_seq_init(&seq, progress_hash);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		bool		keep = true;

		if (e->key.dboid != MyDatabaseId)
			continue;
		if (e->key.id < max)
		{
			keep = false;
			for (int i = 0; i < n && !keep; i++)
				keep = (ids[i] == e->key.id);
		}
		if (!keep)
			(void) hash_search(progress_hash, &e->key, HASH_REMOVE, NULL);
	}
	LWLockRelease(progress_lock);
}

/*
 * subscriber_status's pending, oldest_pending_id and oldest_pending_at.
 *
 * Counting every pending event was a read of the whole queue per
 * subscriber (3.1 s with 1M events pending); then one pass over the queue's
 * heap for every subscriber, sampled past 16 MB, which behind an old
 * snapshot read every row version it keeps (issue 38).  Now fetch.c's walk
 * from the position floor (DdlnStatusWalk), for every subscriber at once:
 * it reads the transactions and events still in the queue, not the dead
 * rows, and past DDLN_STATUS_EXACT_EVENTS index entries it estimates (the
 * view's pending_estimated).
 */

/* One subscriber as subscriber_progress() reports it. */
typedef struct DdlnStatusRow
{
	int32		id;
	TimestampTz created;
} DdlnStatusRow;

/*
 * The subscribers (in "rows") and their subscription points (in "pts"),
 * read as the extension's owner; their number is returned.
 */
static int
DdlnStatusSubscribers(DdlnStatusRow **rows, DdlnSubscriptionPoints *pts)
{
	DdlnSafeState safe;
	MemoryContext cxt = CurrentMemoryContext;
	int			n;

	/* not reached: SPI_connect() returns SPI_OK_CONNECT or raises an ERROR */
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DdlnBeginSafe(&safe);
	if (SPI_execute("SELECT s.id, s.created_at, s.slot, s.start_snapshot, s.start_xid "
					"FROM ddl_notify.subscriber s", true, 0) != SPI_OK_SELECT)
		/* not reached: a plain SELECT of the extension's table */
		elog(ERROR, "SPI_execute failed reading ddl_notify.subscriber");
	DdlnEndSafe(&safe);
	n = (int) SPI_processed;
	*rows = MemoryContextAllocZero(cxt, sizeof(DdlnStatusRow) * Max(n, 1));
	pts->n = n;
	pts->slots = MemoryContextAlloc(cxt, sizeof(int32) * Max(n, 1));
	pts->snaps = MemoryContextAlloc(cxt, sizeof(Datum) * Max(n, 1));
	pts->start_xids = MemoryContextAlloc(cxt, sizeof(FullTransactionId) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		Datum		snap = SPI_getbinval(tup, desc, 4, &isnull);
		MemoryContext old;

		(*rows)[i].id = DatumGetInt32(SPI_getbinval(tup, desc, 1, &isnull));
		(*rows)[i].created = DatumGetTimestampTz(SPI_getbinval(tup, desc, 2, &isnull));
		pts->slots[i] = DatumGetInt32(SPI_getbinval(tup, desc, 3, &isnull));
		old = MemoryContextSwitchTo(cxt);
		pts->snaps[i] = datumCopy(snap, false, -1);
		MemoryContextSwitchTo(old);
		pts->start_xids[i] = DatumGetFullTransactionId(SPI_getbinval(tup, desc, 5, &isnull));
	}
	SPI_finish();
	return n;
}

/*
 * The counts of entry "e" that a reader of the row with snapshot "snap"
 * (the view's) adds to it: shared memory's, with the last move put back if
 * the row as read lacks it (the move committed after the snapshot and was
 * taken out since) and left out if the row has it (it committed, and was
 * not taken out yet).  So one reading never sees a move twice or not at
 * all, nor does a REPEATABLE READ reader across one move.  Called with the
 * progress lock held.
 */
static void
DdlnProgressAsSeen(const DdlnProgressEntry *e, Snapshot snap, DdlnProgress *out)
{
	bool		in_row;
	bool		known = true;
	int			sign = 0;

	*out = e->counts;
	if (!TransactionIdIsValid(e->move_xid))
		return;
	/* a move taken out committed; one not yet, ask the clog */
	in_row = !XidInMVCCSnapshot(e->move_xid, snap) &&
		(e->move_done || DdlnMoveCommitted(e->move_xid, &known));
	if (!known)
		return;
	if (e->move_done && !in_row)
		sign = 1;
	else if (!e->move_done && in_row)
		sign = -1;
	out->delivered += sign * e->move.delivered;
	out->filtered += sign * e->move.filtered;
	out->loop_suppressed += sign * e->move.loop_suppressed;
	if (sign == 1 && out->last_event_id == 0)
	{
		out->last_event_id = e->move.last_event_id;
		out->last_delivered_at = e->move.last_delivered_at;
	}
	else if (sign == -1 && out->last_event_id == e->move.last_event_id)
		out->last_event_id = 0;
}

/*
 * ddl_notify.subscriber_progress(): per subscriber of this database, the
 * counts not yet in its row and its pending events (exact, or estimated
 * past DDLN_STATUS_EXACT_EVENTS), for subscriber_status.  Executable by
 * PUBLIC as the view calls it with its reader's rights, it answers only a
 * role that may read subscriber_status (or the subscriber table), and says
 * only what that view says.
 */
Datum
ddl_notify_subscriber_progress(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	const DdlnRelids *relids = DdlnGetRelids(false);
	Oid			view = get_relname_relid("subscriber_status", relids->nsp);
	Oid			table = get_relname_relid("subscriber", relids->nsp);
	DdlnStatusRow *rows;
	DdlnSubscriptionPoints pts;
	DdlnPendingCount *pending;
	int			n;
	double		scale;

	if (!(OidIsValid(view) && pg_class_aclcheck(view, GetUserId(), ACL_SELECT) == ACLCHECK_OK) &&
		!(OidIsValid(table) && pg_class_aclcheck(table, GetUserId(), ACL_SELECT) == ACLCHECK_OK))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for view subscriber_status"),
				 errdetail("ddl_notify.subscriber_progress() answers only roles that may read ddl_notify.subscriber_status.")));

	InitMaterializedSRF(fcinfo, 0);
	n = DdlnStatusSubscribers(&rows, &pts);
	pending = palloc0(sizeof(DdlnPendingCount) * Max(n, 1));
	for (int i = 0; i < n; i++)
		pending[i].oldest_at_null = true;
	scale = DdlnStatusWalk(&pts, GetActiveSnapshot(), pending);

	if (progress_hash != NULL)
		LWLockAcquire(progress_lock, LW_SHARED);
	for (int i = 0; i < n; i++)
	{
		Datum		values[11];
		bool		nulls[11] = {false};
		DdlnProgressEntry *e = progress_hash != NULL ?
			DdlnProgressFind(rows[i].id, rows[i].created) : NULL;
		DdlnProgress counts = {0};
		const DdlnProgress *c = &counts;

		if (e != NULL)
			DdlnProgressAsSeen(e, GetActiveSnapshot(), &counts);

		values[0] = Int32GetDatum(rows[i].id);
		values[1] = Int64GetDatum(c->delivered);
		values[2] = Int64GetDatum(c->filtered);
		values[3] = Int64GetDatum(c->loop_suppressed);
		values[4] = Int64GetDatum(c->last_event_id);
		nulls[4] = (c->last_event_id == 0);
		values[5] = TimestampTzGetDatum(c->last_delivered_at);
		nulls[5] = (c->last_event_id == 0);
		values[6] = TimestampTzGetDatum(rows[i].created);
		values[7] = Int64GetDatum((int64) (pending[i].pending * scale + 0.5));
		values[8] = Int64GetDatum(pending[i].oldest_id);
		nulls[8] = (pending[i].oldest_id == 0);
		values[9] = TimestampTzGetDatum(pending[i].oldest_at);
		nulls[9] = pending[i].oldest_at_null;
		values[10] = BoolGetDatum(scale != 1.0);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	if (progress_hash != NULL)
		LWLockRelease(progress_lock);
	PG_RETURN_VOID();
}
