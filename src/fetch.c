/*-------------------------------------------------------------------------
 *
 * fetch.c
 *	  The delivery engine's direct access to the queue: the read of a
 *	  subscriber's pending events (step 2 of the protocol in deliver.c's
 *	  header): which events, in which order, and how much of them one batch
 *	  holds; and the writes of step 4: the processed bits, and the deletes of
 *	  rows nobody needs any more (DdlnSetProcessedBits).
 *
 *	  Also wait_for_delivery()'s reads of the events it waits for
 *	  (DdlnWaitCollect, DdlnWaitCheck) and subscriber_status's count of the
 *	  pending events (DdlnStatusWalk), which read as the fetch does.
 *
 * Its parts, in this order:
 *	  filters and the chain rule	DdlnReadFilter, DdlnFilterPasses,
 *									DdlnEventChain, DdlnChainRule
 *	  the batch's rows				DdlnFetchCheckShape, DdlnFetchAlloc,
 *									DdlnFetchTake
 *	  the position floor			DdlnFloorShmemRequest, DdlnSharedFloorGet,
 *									DdlnSharedFloorPut, DdlnOrderProbe,
 *									DdlnOrderFloorShared, DdlnOrderFloor
 *	  the reads from the floor		DdlnWalkOpen, DdlnWalkStart, DdlnWalkNext,
 *									DdlnWalkEvents, DdlnWalkEvent, DdlnWalkEnd,
 *									DdlnFetch, DdlnNeedOf, DdlnWaitCollect,
 *									DdlnWaitCheck, DdlnSweepWalk,
 *									DdlnStatusCount, DdlnStatusWalk
 *	  the writes of step 4			DdlnProcessedAt,
 *									DdlnFindEvent, DdlnWriteBit,
 *									DdlnSetProcessedBits
 *
 * Rules kept here:
 * - Called by deliver.c, inside the batch's transaction, after the
 *	 subscriber's row was locked; and by subscriber.c's wait_for_delivery()
 *	 for the two wait functions, which only read, with a snapshot of their
 *	 own.  DdlnFetch reads and writes nothing;
 *	 DdlnSetProcessedBits writes as SQL's UPDATE and DELETE would under READ
 *	 COMMITTED (each row's current version, a concurrent writer waited for
 *	 up to lock_timeout, rows taken in id order), a checked transition: a
 *	 bit already set is not counted, and the caller refuses to commit then.
 * - Pending means: the subscriber's processed bit clear, and the event's
 *	 transaction not visible in the subscription snapshot (nor the
 *	 subscribing transaction itself): ddl_notify.is_pending() said in C.
 * - Order: transactions by commit position, then each transaction's events
 *	 by id, after the round's floor in that transaction.  No cursor, no
 *	 high-water mark (G4): whatever is visible and pending now is read.
 * - The walk of commit_order starts at the position floor (DdlnOrderFloor):
 *	 a position below which no row is visible now or can ever become
 *	 visible again, so that the index entries of delivered transactions
 *	 that an old snapshot keeps from being removed are not stepped over in
 *	 every round (issue 38).  The floor passes a position only once every
 *	 transaction that could still make a row below it visible has ended
 *	 (a late commit with a lower position is still read: G4).  A floor is
 *	 true for every backend, so a database's backends share theirs in
 *	 shared memory (DdlnSharedFloorGet/Put): each starts from the highest
 *	 one published, a new session too, instead of from 0.
 * - The recent sweep's walk (DdlnSweepWalk, issue 38) reads the queue as
 *	 the fetch does, from the same floor, and only reads: deliver.c deletes
 *	 what it found, testing each row again under its row lock.  It looks
 *	 at DDLN_SWEEP_VISIT events at most and goes on from there next time.
 * - Every read of the queue from the floor (the fetch, wait_for_delivery()'s
 *	 first look, the recent sweep, subscriber_status's count) is started,
 *	 stepped and ended by the DdlnWalk functions: one place opens the
 *	 relations, checks their shape, reads the floor and begins the scans.
 * - A read stops when the batch is full (ddl_notify.batch_size events, or
 *	 ddl_notify.batch_memory bytes of rows), never after scanning or sorting
 *	 the whole backlog.
 * - Filters and the chain rule decide only whether the handler is called
 *	 ("wanted"); every pending event is read and handled either way.
 * - The chain rule (G12, DdlnChainRule): an event caused by handlers
 *	 carries the chain of subscribers whose handlers led to it
 *	 (origin_chain; origin alone for events of 0.1.0).  It is not handed to
 *	 a subscriber in that chain, except, with echo => true, the direct echo
 *	 (the subscriber is the chain's last element and appears once) while
 *	 the chain is shorter than ddl_notify.max_chain_length.  A subscriber
 *	 not in the chain gets it whatever the chain's length (issue 35: the
 *	 limit never hides DDL from an audit subscriber).  So a loop between
 *	 handlers ends: a subscriber's handler runs at most once per user DDL
 *	 along any one chain (twice with echo => true), and a chain holds each
 *	 subscriber at most twice, consecutively.
 *
 * Floor: engine: called by deliver.c, by subscriber.c (wait_for_delivery()),
 * by progress.c (subscriber_status's pending events) and by _PG_init (the
 * floors' shared memory); calls imagetexts.c and common.c.
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/indexing.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/jsonb.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/xid8.h"

#include "common.h"
#include "engine.h"

/* Read one of the subscriber's filters (a text[] column) into "f". */
void
DdlnReadFilter(HeapTuple tup, TupleDesc desc, int col, DdlnFilter *f)
{
	bool		isnull;
	Datum		d = SPI_getbinval(tup, desc, col, &isnull);
	Datum	   *elems;
	bool	   *elnulls;
	int			nelems;

	memset(f, 0, sizeof(*f));
	if (isnull)
	{
		f->all = true;
		return;
	}
	deconstruct_array(DatumGetArrayTypeP(d), TEXTOID, -1, false, TYPALIGN_INT,
					  &elems, &elnulls, &nelems);
	f->values = palloc(sizeof(char *) * Max(nelems, 1));
	for (int i = 0; i < nelems; i++)
	{
		if (!elnulls[i])
			f->values[f->n++] = TextDatumGetCString(elems[i]);
	}
}

/* Does the event's value (a text column of the row in "slot") pass "f"? */
static bool
DdlnFilterPasses(const DdlnFilter *f, TupleTableSlot *slot, AttrNumber attnum)
{
	bool		isnull;
	Datum		d;
	char	   *v;
	bool		pass = false;

	if (f->all)
		return true;
	d = slot_getattr(slot, attnum, &isnull);
	if (isnull)
		return false;
	v = TextDatumGetCString(d);
	for (int i = 0; i < f->n && !pass; i++)
		pass = (strcmp(v, f->values[i]) == 0);
	pfree(v);
	return pass;
}

/*
 * The chain of origins of the event in "slot": origin_chain, or for an
 * event written before it existed (0.1.0), {origin}; 0 if a user's DDL made
 * it.  A copy in the current (batch) memory: the handler's DDL extends it.
 */
static Datum
DdlnEventChain(TupleTableSlot *slot, bool has_chain)
{
	bool		isnull;
	Datum		d;

	if (has_chain)
	{
		d = slot_getattr(slot, DDLN_EV_ORIGIN_CHAIN + 1, &isnull);
		if (!isnull)
			return PointerGetDatum(DatumGetArrayTypePCopy(d));
	}
	d = slot_getattr(slot, DDLN_EV_ORIGIN + 1, &isnull);
	if (isnull)
		return (Datum) 0;
	d = PointerGetDatum(DatumGetTextPCopy(d));
	return PointerGetDatum(construct_array(&d, 1, TEXTOID, -1, false, TYPALIGN_INT));
}

/* The chain rule (see the header): may the subscriber get this event? */
static DdlnSuppressed
DdlnChainRule(const DdlnSubscriber *sub, Datum chain)
{
	Datum	   *elems;
	bool	   *elnulls;
	int			n;
	int			self = 0;
	bool		last = false;

	deconstruct_array(DatumGetArrayTypeP(chain), TEXTOID, -1, false, TYPALIGN_INT,
					  &elems, &elnulls, &n);
	for (int i = 0; i < n; i++)
	{
		text	   *t;

		if (elnulls[i])
			continue;
		t = DatumGetTextPP(elems[i]);
		if (VARSIZE_ANY_EXHDR(t) == strlen(sub->name) &&
			memcmp(VARDATA_ANY(t), sub->name, VARSIZE_ANY_EXHDR(t)) == 0)
		{
			self++;
			last = (i == n - 1);
		}
	}
	pfree(elems);
	pfree(elnulls);
	if (self == 1 && last && !sub->echo)
		return DDLN_SUPPRESS_ECHO;
	if (self > 1 || (self == 1 && !last))
		return DDLN_SUPPRESS_LOOP;
	/* the limit stops calls along the chain, never hides it from one outside */
	if (self == 1 && n >= ddln_max_chain_length)
		return DDLN_SUPPRESS_HOPS;
	return DDLN_DELIVER;
}

/*
 * Refuse tables of ddl_notify whose columns or indexes are not those this
 * version reads (event with 0.2.0's or 0.1.0's columns, event_xid on two
 * keys, commit_order's columns).  Not "strict" (subscriber_status's count,
 * which only reads): commit_order may have columns added after its own, as
 * long as its xid and position are where this version reads them, so that
 * an operator can still see what is pending on tables changed by hand.
 */
static void
DdlnFetchCheckShape(Relation order_rel, Relation event_rel, Relation event_idx, bool strict)
{
	TupleDesc	event_desc = RelationGetDescr(event_rel);
	TupleDesc	order_desc = RelationGetDescr(order_rel);
	bool		order_ok = strict ? order_desc->natts == DDLN_CO_NATTS :
		(order_desc->natts >= DDLN_CO_NATTS &&
		 TupleDescAttr(order_desc, DDLN_CO_XID)->atttypid == XID8OID &&
		 TupleDescAttr(order_desc, DDLN_CO_POS)->atttypid == INT8OID);

	if (IndexRelationGetNumberOfKeyAttributes(event_idx) != 2 ||
		(event_desc->natts != DDLN_EV_NATTS && event_desc->natts != DDLN_EV_NATTS_010) ||
		!order_ok)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the tables of ddl_notify do not have the columns and indexes this version reads"),
				 errhint(DDLN_HINT_TABLE_SHAPE)));
}

/*
 * Empty "out" and give it room for "limit" events.
 */
static void
DdlnFetchAlloc(DdlnFetched *out, int limit)
{
	memset(out, 0, sizeof(*out));
	out->rows = palloc(sizeof(Datum) * limit);
	out->keys = palloc(sizeof(DdlnEventKey) * limit);
	out->tids = palloc(sizeof(ItemPointerData) * limit);
	out->wanted = palloc(sizeof(bool) * limit);
	out->suppressed = palloc0(sizeof(uint8) * limit);
	out->chains = palloc0(sizeof(Datum) * limit);
}

/*
 * Add the pending event in "eslot" (of transaction "fxid" at commit position
 * "pos") to the batch "out": whether the handler wants it (the filters, then
 * the chain rule), the row as the handler gets it (event.query NULL, and
 * details without the images' texts, for a subscriber whose owner may not
 * read event.query: imagetexts.c), its key and TID.  Returns the
 * row's size, for the batch's memory bound.
 */
static int64
DdlnFetchTake(DdlnSubscriber *sub, TupleTableSlot *eslot, TupleDesc event_desc,
			  bool has_chain, FullTransactionId fxid, int64 pos, DdlnFetched *out)
{
	AttrNumber	a_id = DDLN_EV_ID + 1;
	AttrNumber	a_tag = DDLN_EV_COMMAND_TAG + 1;
	AttrNumber	a_type = DDLN_EV_OBJECT_TYPE + 1;
	AttrNumber	a_schema = DDLN_EV_SCHEMA_NAME + 1;
	bool		isnull;
	bool		shouldfree;
	HeapTuple	tup;
	bool		wanted;
	Datum		chain = (Datum) 0;
	DdlnSuppressed suppressed = DDLN_DELIVER;
	int64		bytes;

	wanted = DdlnFilterPasses(&sub->command_tags, eslot, a_tag) &&
		DdlnFilterPasses(&sub->object_types, eslot, a_type) &&
		DdlnFilterPasses(&sub->schemas, eslot, a_schema);
	if (wanted)
	{
		chain = DdlnEventChain(eslot, has_chain);
		if (chain != (Datum) 0)
			suppressed = DdlnChainRule(sub, chain);
		wanted = (suppressed == DDLN_DELIVER);
	}

	tup = ExecFetchSlotHeapTuple(eslot, false, &shouldfree);
	if (!sub->may_read_query)
	{
		/* no statement text, nor the texts of the images (imagetexts.c) */
		int			cols[2] = {DDLN_EV_QUERY + 1, DDLN_EV_DETAILS + 1};
		Datum		values[2] = {(Datum) 0, (Datum) 0};
		bool		nulls[2] = {true, true};
		Datum		details = slot_getattr(eslot, DDLN_EV_DETAILS + 1, &nulls[1]);
		Jsonb	   *stored = nulls[1] ? NULL : DatumGetJsonbP(details);
		Jsonb	   *shown = nulls[1] ? NULL : DdlnDetailsWithoutTexts(stored);
		HeapTuple	hidden;

		values[1] = PointerGetDatum(shown);
		hidden = heap_modify_tuple_by_cols(tup, event_desc, 2, cols, values, nulls);
		/* copied into "hidden": free them, a batch reads many events */
		if (shown != stored)
			pfree(shown);
		if (stored != NULL && (Pointer) stored != DatumGetPointer(details))
			pfree(stored);

		if (shouldfree)
			heap_freetuple(tup);
		tup = hidden;
		shouldfree = true;
	}
	out->rows[out->n] = heap_copy_tuple_as_datum(tup, event_desc);
	if (shouldfree)
		heap_freetuple(tup);
	/* the row as the handler gets it, its texts de-TOASTed */
	bytes = HeapTupleHeaderGetDatumLength(DatumGetHeapTupleHeader(out->rows[out->n]));
	out->keys[out->n].id = DatumGetInt64(slot_getattr(eslot, a_id, &isnull));
	out->keys[out->n].xid = fxid;
	out->keys[out->n].pos = pos;
	out->tids[out->n] = eslot->tts_tid;
	out->wanted[out->n] = wanted;
	out->suppressed[out->n] = (uint8) suppressed;
	out->chains[out->n] = wanted ? chain : (Datum) 0;
	out->n++;
	return bytes;
}

/*
 * The position floor of this backend's walks of commit_order (issue 38).
 * Positions are drawn in increasing order (counter.c) at PRE_COMMIT or
 * PREPARE, by transactions that already have an xid, and the row is
 * inserted in the same call.  So:
 * - a candidate: read the highest position in the index, whatever its
 *	 row's state (m), then the next xid (X0): every transaction that drew
 *	 a position up to m has an xid below X0.  The candidate is the lower of
 *	 m + 1 and the first row visible from the floor on.
 * - once a later snapshot's xmin is at or past X0, each of those
 *	 transactions has ended (a prepared one counts as running until its
 *	 COMMIT or ROLLBACK PREPARED): what they left below the candidate is
 *	 visible now, so the floor becomes the lower of the candidate and the
 *	 first row visible from the old floor on, and nothing below it can
 *	 become visible again.
 * Visible here means to a snapshot that does not see this transaction's
 * own changes (curcid 0): a row this transaction deleted may still come
 * back (a rollback), one it inserted is above the old floor (drawn later)
 * and is seen at the step that follows its commit.  Under REPEATABLE READ
 * or SERIALIZABLE (a CALL deliver() in such a transaction) the snapshot
 * does not move: the floor stays where it is.  The state is the backend's
 * own, for one commit_order table (a new extension starts again at 0).
 */
typedef struct DdlnOrderFloorState
{
	Oid			relid;			/* commit_order it is for */
	int64		floor;			/* no row below it now or later */
	bool		candidate;		/* cand_pos and cand_xid are set */
	int64		cand_pos;
	FullTransactionId cand_xid; /* X0 above */
} DdlnOrderFloorState;

static DdlnOrderFloorState ddln_order_floor;

/*
 * The floors the backends of each database reached, shared (issue 38): a
 * backend's own floor starts at 0 and needs two reads of commit_order, the
 * first from 0, past every index entry an old snapshot keeps, before it
 * moves; a session's wait_for_delivery() (or a new worker) would pay that
 * at its first call.  A floor is true for every backend (what is below it
 * is gone for every snapshot taken since it was reached), so a backend
 * under READ COMMITTED starts from the highest one published for its
 * database's commit_order, and publishes its own when it passes it.  A
 * published floor above the highest position in the index plus one (the
 * positions started again) is not taken.  Without shared memory, or with
 * more databases than entries, a backend has its own floor only.
 */
typedef struct DdlnSharedFloor
{
	Oid			dboid;
	Oid			relid;			/* the commit_order it is for */
	int64		floor;
} DdlnSharedFloor;

#define DDLN_SHARED_FLOORS	128

static DdlnSharedFloor *ddln_shared_floors = NULL;
static LWLock *ddln_floor_lock = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void
DdlnFloorShmemRequestHook(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(sizeof(DdlnSharedFloor) * DDLN_SHARED_FLOORS);
	RequestNamedLWLockTranche("ddl_notify floors", 1);
}

static void
DdlnFloorShmemStartup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	ddln_shared_floors = ShmemInitStruct("ddl_notify floors",
										 sizeof(DdlnSharedFloor) * DDLN_SHARED_FLOORS,
										 &found);
	if (!found)
		memset(ddln_shared_floors, 0, sizeof(DdlnSharedFloor) * DDLN_SHARED_FLOORS);
	ddln_floor_lock = &(GetNamedLWLockTranche("ddl_notify floors"))->lock;
	LWLockRelease(AddinShmemInitLock);
}

/* Called from _PG_init while preloading. */
void
DdlnFloorShmemRequest(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = DdlnFloorShmemRequestHook;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = DdlnFloorShmemStartup;
}

/* The floor published for this database's commit_order "relid"; 0 if none. */
static int64
DdlnSharedFloorGet(Oid relid)
{
	int64		floor = 0;

	if (ddln_shared_floors == NULL)
		return 0;
	LWLockAcquire(ddln_floor_lock, LW_SHARED);
	for (int i = 0; i < DDLN_SHARED_FLOORS; i++)
	{
		DdlnSharedFloor *f = &ddln_shared_floors[i];

		if (f->dboid == MyDatabaseId && f->relid == relid)
		{
			floor = f->floor;
			break;
		}
	}
	LWLockRelease(ddln_floor_lock);
	return floor;
}

/*
 * Publish "floor" for this database's commit_order "relid": it replaces a
 * lower one, or the entry of another commit_order of the database (the
 * extension was created again), or takes a free entry, else the entry
 * whose place the database's OID gives.
 */
static void
DdlnSharedFloorPut(Oid relid, int64 floor)
{
	DdlnSharedFloor *slot = NULL;

	if (ddln_shared_floors == NULL)
		return;
	LWLockAcquire(ddln_floor_lock, LW_EXCLUSIVE);
	for (int i = 0; i < DDLN_SHARED_FLOORS && slot == NULL; i++)
	{
		if (ddln_shared_floors[i].dboid == MyDatabaseId)
			slot = &ddln_shared_floors[i];
	}
	for (int i = 0; i < DDLN_SHARED_FLOORS && slot == NULL; i++)
	{
		if (ddln_shared_floors[i].dboid == InvalidOid)
			slot = &ddln_shared_floors[i];
	}
	if (slot == NULL)
		slot = &ddln_shared_floors[MyDatabaseId % DDLN_SHARED_FLOORS];
	if (slot->dboid != MyDatabaseId || slot->relid != relid || slot->floor < floor)
	{
		slot->dboid = MyDatabaseId;
		slot->relid = relid;
		slot->floor = floor;
	}
	LWLockRelease(ddln_floor_lock);
}

/*
 * First position at or above "from" whose row "snap" sees (forward), or
 * the highest position in the index (backward, SnapshotAny); -1 if none.
 */
static int64
DdlnOrderProbe(Relation rel, Relation idx, Snapshot snap, int64 from, ScanDirection dir)
{
	TupleTableSlot *slot = table_slot_create(rel, NULL);
	IndexScanDesc scan = DdlnIndexBeginScan(rel, idx, snap, 1, 0);
	ScanKeyData key;
	int64		pos = -1;
	bool		isnull;

	ScanKeyInit(&key, 1, BTGreaterEqualStrategyNumber, F_INT8GE, Int64GetDatum(from));
	index_rescan(scan, &key, 1, NULL, 0);
	if (index_getnext_slot(scan, dir, slot))
		pos = DatumGetInt64(slot_getattr(slot, DDLN_CO_POS + 1, &isnull));
	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	return pos;
}

/*
 * Take the floor another backend of the database published, if higher than
 * this one's and not above the highest position in the index plus one.
 */
static void
DdlnOrderFloorShared(Relation rel, Relation idx, DdlnOrderFloorState *st)
{
	int64		shared = DdlnSharedFloorGet(st->relid);
	int64		m;

	if (shared <= st->floor)
		return;
	m = DdlnOrderProbe(rel, idx, SnapshotAny, 0, BackwardScanDirection);
	if (m >= 0 && shared <= m + 1)
		st->floor = shared;
}

/* The floor the walk may start from now; see DdlnOrderFloorState. */
static int64
DdlnOrderFloor(Relation rel, Relation idx)
{
	DdlnOrderFloorState *st = &ddln_order_floor;
	Snapshot	snap;
	int64		first;

	if (st->relid != RelationGetRelid(rel))
	{
		memset(st, 0, sizeof(*st));
		st->relid = RelationGetRelid(rel);
	}
	if (IsolationUsesXactSnapshot())
		return st->floor;
	DdlnOrderFloorShared(rel, idx, st);
	if (!st->candidate)
	{
		int64		m = DdlnOrderProbe(rel, idx, SnapshotAny, st->floor, BackwardScanDirection);

		st->cand_xid = ReadNextFullTransactionId();
		snap = RegisterSnapshot(GetTransactionSnapshot());
		snap->curcid = FirstCommandId;
		first = DdlnOrderProbe(rel, idx, snap, st->floor, ForwardScanDirection);
		UnregisterSnapshot(snap);
		st->cand_pos = (m >= 0) ? m + 1 : st->floor;
		if (first >= 0 && first < st->cand_pos)
			st->cand_pos = first;
		st->candidate = true;
		return st->floor;
	}
	snap = RegisterSnapshot(GetTransactionSnapshot());
	if (TransactionIdFollowsOrEquals(snap->xmin, XidFromFullTransactionId(st->cand_xid)))
	{
		snap->curcid = FirstCommandId;
		first = DdlnOrderProbe(rel, idx, snap, st->floor, ForwardScanDirection);
		if (first >= 0 && first < st->cand_pos)
			st->cand_pos = first;
		if (st->cand_pos > st->floor)
		{
			st->floor = st->cand_pos;
			DdlnSharedFloorPut(st->relid, st->floor);
		}
		st->candidate = false;
	}
	else if (U64FromFullTransactionId(ReadNextFullTransactionId()) -
			 U64FromFullTransactionId(st->cand_xid) > (uint64) 1 << 30)
		st->candidate = false;	/* too old for xmin to be compared with */
	UnregisterSnapshot(snap);
	return st->floor;
}

/*
 * One walk of the queue from the position floor, as DdlnFetch,
 * DdlnWaitCollect, DdlnSweepWalk and DdlnStatusWalk read it: the four
 * relations, then commit_order by position from "from" (walk) and for each
 * transaction its events by xid (scan), under one snapshot.
 */
typedef struct DdlnWalk
{
	Relation	order_rel;
	Relation	order_idx;
	Relation	event_rel;
	Relation	event_idx;
	int64		floor;			/* DdlnOrderFloor's, when opened */
	Snapshot	snap;			/* registered by DdlnWalkStart */
	TupleTableSlot *oslot;
	TupleTableSlot *eslot;
	IndexScanDesc walk;
	IndexScanDesc scan;
} DdlnWalk;

/* Open the walk's relations, check their shape ("strict": see DdlnFetchCheckShape) and read the floor. */
static void
DdlnWalkOpen(DdlnWalk *w, bool strict)
{
	const DdlnRelids *relids = DdlnGetRelids(false);

	memset(w, 0, sizeof(*w));
	w->order_rel = table_open(relids->commit_order, AccessShareLock);
	w->order_idx = index_open(relids->commit_order_pos, AccessShareLock);
	w->event_rel = table_open(relids->event, AccessShareLock);
	w->event_idx = index_open(relids->event_xid, AccessShareLock);
	DdlnFetchCheckShape(w->order_rel, w->event_rel, w->event_idx, strict);
	w->floor = DdlnOrderFloor(w->order_rel, w->order_idx);
}

/* Start the walk at position "from" (the floor or above) with "snap". */
static void
DdlnWalkStart(DdlnWalk *w, Snapshot snap, int64 from)
{
	ScanKeyData key;

	w->snap = RegisterSnapshot(snap);
	w->oslot = table_slot_create(w->order_rel, NULL);
	w->eslot = table_slot_create(w->event_rel, NULL);
	w->walk = DdlnIndexBeginScan(w->order_rel, w->order_idx, w->snap, 1, 0);
	ScanKeyInit(&key, 1, BTGreaterEqualStrategyNumber, F_INT8GE, Int64GetDatum(from));
	index_rescan(w->walk, &key, 1, NULL, 0);
	w->scan = DdlnIndexBeginScan(w->event_rel, w->event_idx, w->snap, 2, 0);
}

/*
 * The next transaction of the walk: its xid (an xid8 Datum) and position;
 * false at the end.
 */
static bool
DdlnWalkNext(DdlnWalk *w, Datum *xid, int64 *pos)
{
	bool		isnull;

	if (!index_getnext_slot(w->walk, ForwardScanDirection, w->oslot))
		return false;
	*xid = slot_getattr(w->oslot, DDLN_CO_XID + 1, &isnull);
	*pos = DatumGetInt64(slot_getattr(w->oslot, DDLN_CO_POS + 1, &isnull));
	return true;
}

/* Read transaction "xid"'s events after id "after" next (DdlnWalkEvent). */
static void
DdlnWalkEvents(DdlnWalk *w, Datum xid, int64 after)
{
	ScanKeyData keys[2];

	ScanKeyInit(&keys[0], 1, BTEqualStrategyNumber, F_XID8EQ, xid);
	ScanKeyInit(&keys[1], 2, BTGreaterStrategyNumber, F_INT8GT, Int64GetDatum(after));
	index_rescan(w->scan, keys, 2, NULL, 0);
}

/* The transaction's next event, in w->eslot, and its processed bits. */
static bool
DdlnWalkEvent(DdlnWalk *w, int64 *processed)
{
	bool		isnull;

	if (!index_getnext_slot(w->scan, ForwardScanDirection, w->eslot))
		return false;
	*processed = DatumGetInt64(slot_getattr(w->eslot, DDLN_EV_PROCESSED + 1, &isnull));
	return true;
}

/* End the walk and close what DdlnWalkOpen and DdlnWalkStart opened. */
static void
DdlnWalkEnd(DdlnWalk *w)
{
	if (w->snap != NULL)
	{
		index_endscan(w->scan);
		index_endscan(w->walk);
		ExecDropSingleTupleTableSlot(w->eslot);
		ExecDropSingleTupleTableSlot(w->oslot);
		UnregisterSnapshot(w->snap);
	}
	index_close(w->event_idx, AccessShareLock);
	table_close(w->event_rel, AccessShareLock);
	index_close(w->order_idx, AccessShareLock);
	table_close(w->order_rel, AccessShareLock);
}

/*
 * Read up to "limit" of the subscriber's pending events in delivery order
 * (protocol step 2): transactions in commit order, then each transaction's
 * events in id order; inside transaction floor->xid only those after
 * floor->id.  The read also stops once the rows it read pass
 * ddl_notify.batch_memory (the row that passes it is kept, so a batch has
 * at least one event): a batch's memory is bounded by that setting plus one
 * row, whatever the rows' statement texts.  A subscriber whose owner may not
 * read event.query gets it NULL, and no texts in details' images.
 *
 * This is a walk of two indexes, not a query: commit_order by position
 * (commit_order_pos), and for each transaction past the subscription point,
 * its events from event_xid (xid, id), skipping those whose processed bit is
 * set.  Together the two tests are ddl_notify.is_pending().  Every step
 * stops as soon as the batch is full, whatever the size of the backlog.  A
 * query saying the same with ORDER BY pos, id had no plan that stopped
 * early: the planner sorted every pending event before the LIMIT, and with
 * the statistics of an empty queue chose to scan event's primary key for
 * each transaction, so each batch cost as much as the whole backlog.
 */
void
DdlnFetch(DdlnSubscriber *sub, int limit, const DdlnFloor *floor, DdlnFetched *out)
{
	DdlnWalk	w;
	TupleDesc	event_desc;
	bool		has_chain;
	int64		bit = INT64CONST(1) << sub->slot;
	int64		max_bytes = (int64) ddln_batch_memory * 1024;
	int64		bytes = 0;
	Datum		xid;
	int64		pos;

	DdlnWalkOpen(&w, true);
	event_desc = RelationGetDescr(w.event_rel);
	has_chain = (event_desc->natts == DDLN_EV_NATTS);
	DdlnFetchAlloc(out, limit);

	/*
	 * READ COMMITTED: what committed before now, this batch's lock included,
	 * and what this transaction did itself (dead letters earlier in it).
	 */
	CommandCounterIncrement();
	DdlnWalkStart(&w, GetTransactionSnapshot(), w.floor);

	while (out->n < limit && bytes < max_bytes && DdlnWalkNext(&w, &xid, &pos))
	{
		FullTransactionId fxid = DatumGetFullTransactionId(xid);
		int64		processed;

		/* the subscription point: only what committed after it */
		if (FullTransactionIdEquals(fxid, sub->start_xid) ||
			DatumGetBool(DirectFunctionCall2(pg_visible_in_snapshot, xid, sub->start_snapshot)))
			continue;

		DdlnWalkEvents(&w, xid, FullTransactionIdEquals(fxid, floor->xid) ? floor->id : 0);
		while (out->n < limit && bytes < max_bytes && DdlnWalkEvent(&w, &processed))
		{
			if (processed & bit)
				continue;		/* handled already */
			bytes += DdlnFetchTake(sub, w.eslot, event_desc, has_chain, fxid, pos, out);
		}
	}

	out->full = (bytes >= max_bytes);
	DdlnWalkEnd(&w);
}

/*
 * The slots whose subscribers must see the events of transaction "fxid":
 * ddl_notify.is_pending() without its processed-bit test, for every
 * subscriber.
 */
int64
DdlnNeedOf(const DdlnSubscriptionPoints *pts, FullTransactionId fxid)
{
	Datum		xid = FullTransactionIdGetDatum(fxid);
	int64		need = 0;

	for (int s = 0; s < pts->n; s++)
	{
		if (FullTransactionIdEquals(fxid, pts->start_xids[s]) ||
			DatumGetBool(DirectFunctionCall2(pg_visible_in_snapshot, xid, pts->snaps[s])))
			continue;
		need |= INT64CONST(1) << pts->slots[s];
	}
	return need;
}

/*
 * wait_for_delivery()'s first look (subscriber.c, issue 38): the events it
 * may have to wait for, in "list" (palloc'd; their number returned), in
 * delivery order.  Those are the events of the transactions that
 * "visible" (the call's snapshot, a pg_snapshot) sees, but "own", that some
 * subscriber of "pts" has not handled yet (ddl_notify.is_pending() for any
 * of them).  The set is fixed once the call began: a transaction it sees
 * had committed, so each of its events is in the queue until every
 * subscriber that needs it handled it; a subscriber made later does not
 * need it (its subscription point sees that transaction).  They are found
 * as DdlnFetch finds pending events: commit_order walked from the position
 * floor, where every row still visible is, and each transaction's events by
 * xid, never a scan of the queue and its dead rows.  The walk has no upper
 * bound: a transaction that "visible" sees drew its position, and inserted
 * its row, before it committed, so the entries inserted since the call
 * began (a few) fail the "visible" test.  A probe for the highest position
 * to stop at was one more descent of commit_order_pos a call, and an old
 * snapshot makes that index taller (issue 38, docs/performance.md).  A late
 * commit of a lower position (G4) is above the floor while it runs, and
 * read if "visible" sees it.
 */
int
DdlnWaitCollect(Datum visible, FullTransactionId own,
				const DdlnSubscriptionPoints *pts, DdlnEventKey **list)
{
	DdlnWalk	w;
	int			max = 64;
	int			n = 0;
	Datum		xid;
	int64		pos;

	DdlnWalkOpen(&w, true);
	*list = palloc(sizeof(DdlnEventKey) * max);
	DdlnWalkStart(&w, GetLatestSnapshot(), w.floor);

	while (DdlnWalkNext(&w, &xid, &pos))
	{
		FullTransactionId fxid = DatumGetFullTransactionId(xid);
		int64		need;
		int64		processed;
		bool		isnull;

		CHECK_FOR_INTERRUPTS();
		if (FullTransactionIdEquals(fxid, own) ||
			!DatumGetBool(DirectFunctionCall2(pg_visible_in_snapshot, xid, visible)))
			continue;
		need = DdlnNeedOf(pts, fxid);
		if (need == 0)
			continue;
		DdlnWalkEvents(&w, xid, 0);
		while (DdlnWalkEvent(&w, &processed))
		{
			if ((need & ~processed) == 0)
				continue;
			if (n == max)
			{
				max *= 2;
				*list = repalloc_huge(*list, sizeof(DdlnEventKey) * max);
			}
			(*list)[n].xid = fxid;
			(*list)[n].id = DatumGetInt64(slot_getattr(w.eslot, DDLN_EV_ID + 1, &isnull));
			(*list)[n].pos = pos;
			n++;
		}
	}

	DdlnWalkEnd(&w);
	return n;
}

/*
 * wait_for_delivery()'s later looks: is every event of "list" (*n of them,
 * from DdlnWaitCollect) handled by each subscriber of "pts" whose slot is in
 * "waited" and needs it?  Each event is looked up by its key in event_xid,
 * with a snapshot taken now: its row gone, or its processed bits covering
 * the need of every subscriber of "pts", it leaves the list for good; one
 * still needed only by subscribers not waited for (paused) stays, as they
 * may resume.  The look stops at the first event a waited-for subscriber
 * still needs: the deliverers go in the list's order, so a poll costs about
 * what was handled since the last one, not the length of the list, and
 * nothing of the dead rows an old snapshot keeps.
 */
bool
DdlnWaitCheck(const DdlnSubscriptionPoints *pts, int64 waited,
			  DdlnEventKey *list, int *n)
{
	const DdlnRelids *relids = DdlnGetRelids(false);
	Relation	rel = table_open(relids->event, AccessShareLock);
	Relation	idx = index_open(relids->event_xid, AccessShareLock);
	TupleTableSlot *slot = table_slot_create(rel, NULL);
	Snapshot	snap = RegisterSnapshot(GetLatestSnapshot());
	IndexScanDesc scan = DdlnIndexBeginScan(rel, idx, snap, 2, 0);
	FullTransactionId last_xid = InvalidFullTransactionId;
	int64		need = 0;
	int			keep = 0;
	bool		waiting = false;
	int			i;

	for (i = 0; i < *n && !waiting; i++)
	{
		ScanKeyData keys[2];
		bool		isnull;
		int64		processed;

		if (i == 0 || !FullTransactionIdEquals(list[i].xid, last_xid))
		{
			last_xid = list[i].xid;
			need = DdlnNeedOf(pts, last_xid);
		}
		ScanKeyInit(&keys[0], 1, BTEqualStrategyNumber, F_XID8EQ,
					FullTransactionIdGetDatum(list[i].xid));
		ScanKeyInit(&keys[1], 2, BTEqualStrategyNumber, F_INT8EQ, Int64GetDatum(list[i].id));
		index_rescan(scan, keys, 2, NULL, 0);
		if (!index_getnext_slot(scan, ForwardScanDirection, slot))
			continue;			/* gone: everyone who needed it handled it */
		processed = DatumGetInt64(slot_getattr(slot, DDLN_EV_PROCESSED + 1, &isnull));
		if ((need & ~processed) == 0)
			continue;
		/* still waited for: it and the rest are looked at next time */
		waiting = ((need & waited & ~processed) != 0);
		list[keep++] = list[i];
	}
	if (keep < i)
		memmove(&list[keep], &list[i], sizeof(DdlnEventKey) * (*n - i));
	*n = keep + (*n - i);

	index_endscan(scan);
	UnregisterSnapshot(snap);
	ExecDropSingleTupleTableSlot(slot);
	index_close(idx, AccessShareLock);
	table_close(rel, AccessShareLock);
	return !waiting;
}

/* where the next recent sweep goes on (DdlnSweepWalk); 0: at the floor */
static Oid	ddln_sweep_relid = InvalidOid;
static int64 ddln_sweep_next = 0;

/*
 * The recent sweep's walk (issue 38): the rows that may have become
 * garbage, found as DdlnFetch finds pending events, never by a scan of the
 * whole queue.  A scan of the heap (or of all of event_xid) reads every row
 * version an old snapshot keeps, so behind one it cost more each second;
 * this reads commit_order from the position floor, where every row still
 * visible is (DdlnOrderFloor), and for each transaction its events by xid.
 * Found are the events none of "pts" needs (their processed bits cover the
 * transaction's need, or it needs none: committed before every
 * subscription, or needed by slots that unsubscribed), and the commit_order
 * rows whose transaction has no event left.  At most DDLN_SWEEP_VISIT
 * events are looked at; the next call goes on from the transaction where
 * this one stopped, and from the floor again once the end is reached, so a
 * long backlog is swept over several calls at a bounded cost each.
 *
 * It reads only: deliver.c deletes what it found by ctid, under row locks,
 * testing again what this tested (a row may have changed since).  What
 * this cannot find (an event whose transaction has no commit_order row) is
 * left to the full sweep, which deliver.c runs less often.
 */
void
DdlnSweepWalk(const DdlnSubscriptionPoints *pts, DdlnSweepFound *found)
{
	DdlnWalk	w;
	int			maxevents = 64;
	int			maxorders = 64;
	int			visited = 0;
	bool		stopped = false;
	Datum		xid;
	int64		pos;

	DdlnWalkOpen(&w, true);
	memset(found, 0, sizeof(*found));
	found->events = palloc(sizeof(ItemPointerData) * maxevents);
	found->orders = palloc(sizeof(ItemPointerData) * maxorders);
	if (ddln_sweep_relid != RelationGetRelid(w.order_rel))
	{
		ddln_sweep_relid = RelationGetRelid(w.order_rel);
		ddln_sweep_next = 0;
	}

	CommandCounterIncrement();
	DdlnWalkStart(&w, GetTransactionSnapshot(), Max(w.floor, ddln_sweep_next));

	while (DdlnWalkNext(&w, &xid, &pos))
	{
		int64		need;
		int64		processed;
		bool		any = false;

		if (visited >= DDLN_SWEEP_VISIT)
		{
			/* this transaction is the next call's first */
			ddln_sweep_next = pos;
			stopped = true;
			break;
		}
		need = DdlnNeedOf(pts, DatumGetFullTransactionId(xid));
		DdlnWalkEvents(&w, xid, 0);
		while (DdlnWalkEvent(&w, &processed))
		{
			any = true;
			visited++;
			if ((need & ~processed) != 0)
				continue;
			if (found->nevents == maxevents)
			{
				maxevents *= 2;
				found->events = repalloc(found->events, sizeof(ItemPointerData) * maxevents);
			}
			found->events[found->nevents++] = w.eslot->tts_tid;
		}
		if (!any)
		{
			if (found->norders == maxorders)
			{
				maxorders *= 2;
				found->orders = repalloc(found->orders, sizeof(ItemPointerData) * maxorders);
			}
			found->orders[found->norders++] = w.oslot->tts_tid;
		}
		visited++;
	}
	if (!stopped)
		ddln_sweep_next = 0;

	DdlnWalkEnd(&w);
}

/*
 * Count event "eslot" for each subscriber of "pts" whose slot is in "bits"
 * (the ones it is pending for): pending, and the oldest by id and by time.
 */
static void
DdlnStatusCount(const DdlnSubscriptionPoints *pts, int64 bits, TupleTableSlot *eslot,
				DdlnPendingCount *counts)
{
	bool		isnull;
	int64		id = DatumGetInt64(slot_getattr(eslot, DDLN_EV_ID + 1, &isnull));
	bool		atnull;
	Datum		at = slot_getattr(eslot, DDLN_EV_OCCURRED_AT + 1, &atnull);

	for (int s = 0; s < pts->n; s++)
	{
		DdlnPendingCount *c = &counts[s];

		if ((bits & (INT64CONST(1) << pts->slots[s])) == 0)
			continue;
		c->pending++;
		if (c->oldest_id == 0 || id < c->oldest_id)
			c->oldest_id = id;
		if (!atnull && (c->oldest_at_null || DatumGetTimestampTz(at) < c->oldest_at))
		{
			c->oldest_at = DatumGetTimestampTz(at);
			c->oldest_at_null = false;
		}
	}
}

/*
 * subscriber_status's pending events (progress.c, issue 38): per subscriber
 * of "pts", in counts[] (zeroed by the caller, oldest_at_null set), the
 * events pending for it that "snap" (the view's) sees, found as DdlnFetch
 * finds them: commit_order walked from the position floor and each
 * transaction's events by xid.  A scan of the queue read every row version
 * an old snapshot keeps.  The walk looks at DDLN_STATUS_EXACT_EVENTS index
 * entries at most (and ends the transaction it is in); past them the counts
 * are scaled by the commit positions (from the first one walked, those up to
 * the highest in the index over those walked), an estimate, and the
 * oldest are those of the events read, the first in commit order.  Returns
 * the scale: 1 for a count.
 */
double
DdlnStatusWalk(const DdlnSubscriptionPoints *pts, Snapshot snap, DdlnPendingCount *counts)
{
	DdlnWalk	w;
	int64		visited = 0;
	int64		first = -1;
	int64		stop = -1;
	double		scale = 1.0;
	Datum		xid;
	int64		pos;

	DdlnWalkOpen(&w, false);
	DdlnWalkStart(&w, snap, w.floor);
	while (DdlnWalkNext(&w, &xid, &pos))
	{
		int64		need;
		int64		processed;

		CHECK_FOR_INTERRUPTS();
		if (visited >= DDLN_STATUS_EXACT_EVENTS)
		{
			stop = pos;
			break;
		}
		visited++;
		if (first < 0)
			first = pos;
		need = DdlnNeedOf(pts, DatumGetFullTransactionId(xid));
		if (need == 0)
			continue;
		DdlnWalkEvents(&w, xid, 0);
		while (DdlnWalkEvent(&w, &processed))
		{
			visited++;
			if ((need & ~processed) != 0)
				DdlnStatusCount(pts, need & ~processed, w.eslot, counts);
		}
	}
	if (stop > first)
	{
		int64		last = DdlnOrderProbe(w.order_rel, w.order_idx, SnapshotAny, stop,
										  BackwardScanDirection);

		scale = (double) (last + 1 - first) / (double) (stop - first);
	}
	DdlnWalkEnd(&w);
	return scale;
}

/*
 * Where the "processed" column (bigint NOT NULL) lies in a row of event, as
 * nocachegetattr() walks the columns before it: so that a new version is
 * the row copied with eight bytes changed, not taken apart and formed again.
 */
static char *
DdlnProcessedAt(HeapTuple tup, TupleDesc desc)
{
	HeapTupleHeader hdr = tup->t_data;
	bool		hasnulls = HeapTupleHasNulls(tup);
	char	   *tp = (char *) hdr + hdr->t_hoff;
	uint32		off = 0;

	for (int i = 0;; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (hasnulls && att_isnull(i, hdr->t_bits))
		{
			/* not reached: the column is NOT NULL (checked by the caller's shape test) */
			if (i == DDLN_EV_PROCESSED)
				elog(ERROR, "event row without processed bits");
			continue;
		}
		off = att_align_pointer(off, att->attalign, att->attlen, tp + off);
		if (i == DDLN_EV_PROCESSED)
			return tp + off;
		off = att_addlength_pointer(off, att->attlen, tp + off);
	}
}

/*
 * The row version of event "key" this transaction sees now (READ COMMITTED:
 * the scan's snapshot is a fresh one); false if there is none (deleted).
 * "tid", if valid, is where the batch's read found it: that version, if
 * still visible and still this event's, saves the index lookup; else
 * event_xid is searched by (xid, id).
 */
static bool
DdlnFindEvent(Relation rel, IndexScanDesc scan, const DdlnEventKey *key,
			  const ItemPointerData *tid, TupleTableSlot *slot)
{
	ScanKeyData keys[2];

	if (tid != NULL && ItemPointerIsValid(tid) &&
		table_tuple_fetch_row_version(rel, (ItemPointer) tid, scan->xs_snapshot, slot))
	{
		bool		isnull;

		/* the line pointer may have been pruned and used again since */
		if (DatumGetInt64(slot_getattr(slot, DDLN_EV_ID + 1, &isnull)) == key->id &&
			FullTransactionIdEquals(DatumGetFullTransactionId(slot_getattr(slot, DDLN_EV_XID + 1, &isnull)),
									key->xid))
			return true;
	}

	ScanKeyInit(&keys[0], 1, BTEqualStrategyNumber, F_XID8EQ,
				FullTransactionIdGetDatum(key->xid));
	ScanKeyInit(&keys[1], 2, BTEqualStrategyNumber, F_INT8EQ, Int64GetDatum(key->id));
	index_rescan(scan, keys, 2, NULL, 0);
	return index_getnext_slot(scan, ForwardScanDirection, slot);
}

/*
 * Write one event's new processed bits (the row version in "slot"): delete
 * the row if they cover its needed mask, else a new version with them.
 * Waits for a concurrent writer; TM_Updated or TM_Deleted if that one
 * committed (the caller reads the row again).
 */
static TM_Result
DdlnWriteBit(Relation rel, TupleTableSlot *slot, int64 processed, int64 need,
			 CommandId cid, CatalogIndexState *indstate)
{
	ItemPointerData tid = slot->tts_tid;
	TM_FailureData tmfd;
	TM_Result	result;
	bool		shouldfree;
	HeapTuple	old;
	HeapTuple	tup;
	bool		index;

	if ((processed & need) == need)
		return DdlnHeapDelete(rel, &tid, cid, &tmfd);

	/* the new version: a copy with the bits changed in place */
	old = ExecFetchSlotHeapTuple(slot, false, &shouldfree);
	tup = heap_copytuple(old);
	memcpy(DdlnProcessedAt(tup, RelationGetDescr(rel)), &processed, sizeof(int64));
	result = DdlnHeapUpdate(rel, &tid, tup, cid, &tmfd, &index);
	if (index)
	{
		if (*indstate == NULL)
			*indstate = CatalogOpenIndexes(rel);
		DdlnInsertIndexEntries(rel, *indstate, tup);
	}
	heap_freetuple(tup);
	if (shouldfree)
		heap_freetuple(old);
	return result;
}

/*
 * Set the processed bit of slot "slot" on the events "sorted" (sorted by
 * id), a checked transition, or delete the row when that bit completes its
 * needed mask need[i] (nobody else needs it): protocol step 4, written to
 * the heap directly, as SQL's UPDATE and DELETE under READ COMMITTED would
 * (each row's current version, found by event_xid; a concurrent writer is
 * waited for, up to lock_timeout, and the row read again after its commit),
 * rows taken in id order.  "tids", if not NULL, are where the batch's read
 * found the rows.  A row whose bit is set already, or which is gone, is not
 * counted.  The ids of the deleted rows go to "gone" (room for n).
 * Returns how many events were handled here.
 *
 * Why not SQL: three statements per batch, each an executor start-up and
 * one bitmap index scan per event, were four fifths of a drain's time.  The
 * writes are the same as theirs (WAL, statistics, logical decoding with the
 * tables' replica identity); no trigger on ddl_notify.event fires for them,
 * as none fires for capture's inserts.
 */
int
DdlnSetProcessedBits(const DdlnEventKey *sorted, const ItemPointerData *tids,
					 const int64 *need, int n, int32 slotno, int64 *gone, int *ngone)
{
	const DdlnRelids *relids = DdlnGetRelids(false);
	Relation	rel = table_open(relids->event, RowExclusiveLock);
	Relation	idx = index_open(relids->event_xid, RowExclusiveLock);
	TupleDesc	desc = RelationGetDescr(rel);
	CatalogIndexState indstate = NULL;
	int64		bit = INT64CONST(1) << slotno;
	int			col = DDLN_EV_PROCESSED + 1;
	CommandId	cid;
	Snapshot	snap;
	TupleTableSlot *slot;
	IndexScanDesc scan;
	int			done = 0;

	/* DdlnProcessedAt's column: a bigint, in 0.1.0's table too */
	if (IndexRelationGetNumberOfKeyAttributes(idx) != 2 ||
		(desc->natts != DDLN_EV_NATTS && desc->natts != DDLN_EV_NATTS_010) ||
		TupleDescAttr(desc, DDLN_EV_PROCESSED)->atttypid != INT8OID ||
		!TupleDescAttr(desc, DDLN_EV_PROCESSED)->attnotnull)
		/* untested: processed altered by hand (036_hand_altered alters the other columns) */
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the tables of ddl_notify do not have the columns and indexes this version reads"),
				 errhint(DDLN_HINT_TABLE_SHAPE)));

	/* what the handlers (and skip()) did in this transaction is seen */
	CommandCounterIncrement();
	cid = GetCurrentCommandId(true);
	snap = RegisterSnapshot(GetLatestSnapshot());
	slot = table_slot_create(rel, NULL);
	scan = DdlnIndexBeginScan(rel, idx, snap, 2, 0);
	*ngone = 0;

	for (int i = 0; i < n; i++)
	{
		for (;;)
		{
			bool		isnull;
			int64		processed;
			TM_Result	result;

			CHECK_FOR_INTERRUPTS();
			if (!DdlnFindEvent(rel, scan, &sorted[i], tids != NULL ? &tids[i] : NULL, slot))
				break;			/* gone: someone else handled it */
			processed = DatumGetInt64(slot_getattr(slot, col, &isnull));
			if (processed & bit)
				break;			/* set already */
			processed |= bit;
			result = DdlnWriteBit(rel, slot, processed, need[i], cid, &indstate);
			if (result == TM_Ok)
			{
				if ((processed & need[i]) == need[i])
					gone[(*ngone)++] = sorted[i].id;
				done++;
				break;
			}
			/* not reached: this transaction's own writes were made visible above */
			if (result != TM_Updated && result != TM_Deleted)
				elog(ERROR, "unexpected result %d writing event %lld", (int) result,
					 (long long) sorted[i].id);

			/* changed by a transaction that committed since: read it again */
			tids = NULL;
			UnregisterSnapshot(snap);
			snap = RegisterSnapshot(GetLatestSnapshot());
			index_endscan(scan);
			scan = DdlnIndexBeginScan(rel, idx, snap, 2, 0);
		}
	}

	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	UnregisterSnapshot(snap);
	if (indstate != NULL)
		CatalogCloseIndexes(indstate);
	/* the locks stay until the transaction ends, as a statement's do */
	index_close(idx, NoLock);
	table_close(rel, NoLock);
	/* the next statement sees these writes */
	CommandCounterIncrement();
	return done;
}
