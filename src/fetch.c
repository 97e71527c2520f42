/*-------------------------------------------------------------------------
 *
 * fetch.c
 *	  The delivery engine's read of a subscriber's pending events (step 2 of
 *	  the protocol in deliver.c's header): which events, in which order, and
 *	  how much of them one batch holds.
 *
 * Rules kept here:
 * - Called by deliver.c only, inside the batch's transaction, after the
 *	 subscriber's row was locked; it reads, and writes nothing.
 * - Pending means: the subscriber's processed bit clear, and the event's
 *	 transaction not visible in the subscription snapshot (nor the
 *	 subscribing transaction itself): ddl_notify.is_pending() said in C.
 * - Order: transactions by commit position, then each transaction's events
 *	 by id, after the round's floor in that transaction.  No cursor, no
 *	 high-water mark (G4): whatever is visible and pending now is read.
 * - A read stops when the batch is full (ddl_notify.batch_size events, or
 *	 ddl_notify.batch_memory bytes of rows), never after scanning or sorting
 *	 the whole backlog.
 * - Filters and the chain rule decide only whether the handler is called
 *	 ("wanted"); every pending event is read and handled either way.
 * - The chain rule (G12, DdlnChainRule): an event caused by handlers
 *	 carries the chain of subscribers whose handlers led to it
 *	 (origin_chain; origin alone for events of 0.1.0).  It is not handed to
 *	 a subscriber in that chain, except, with echo => true, the direct echo
 *	 (the subscriber is the chain's last element and appears once), nor to
 *	 anyone once the chain is ddl_notify.max_chain_length long.  So a loop
 *	 between handlers ends: a subscriber's handler runs at most once per
 *	 user DDL along any one chain (twice with echo => true).
 *
 * Floor: engine: called by deliver.c only; calls common.c.
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
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
	if (n >= ddln_max_chain_length)
		return DDLN_SUPPRESS_HOPS;
	return DDLN_DELIVER;
}

/*
 * Read up to "limit" of the subscriber's pending events in delivery order
 * (protocol step 2): transactions in commit order, then each transaction's
 * events in id order; inside transaction floor->xid only those after
 * floor->id.  The read also stops once the rows it read pass
 * ddl_notify.batch_memory (the row that passes it is kept, so a batch has
 * at least one event): a batch's memory is bounded by that setting plus one
 * row, whatever the rows' statement texts.  A subscriber whose owner may not
 * read event.query gets it NULL.
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
	const DdlnRelids *relids = DdlnGetRelids(false);
	Relation	order_rel = table_open(relids->commit_order, AccessShareLock);
	Relation	order_idx = index_open(relids->commit_order_pos, AccessShareLock);
	Relation	event_rel = table_open(relids->event, AccessShareLock);
	Relation	event_idx = index_open(relids->event_xid, AccessShareLock);
	TupleDesc	event_desc = RelationGetDescr(event_rel);
	AttrNumber	a_order_xid = DDLN_CO_XID + 1;
	AttrNumber	a_order_pos = DDLN_CO_POS + 1;
	AttrNumber	a_id = DDLN_EV_ID + 1;
	AttrNumber	a_processed = DDLN_EV_PROCESSED + 1;
	AttrNumber	a_tag = DDLN_EV_COMMAND_TAG + 1;
	AttrNumber	a_type = DDLN_EV_OBJECT_TYPE + 1;
	AttrNumber	a_schema = DDLN_EV_SCHEMA_NAME + 1;
	bool		has_chain = (event_desc->natts == DDLN_EV_NATTS);
	int64		bit = INT64CONST(1) << sub->slot;
	int64		max_bytes = (int64) ddln_batch_memory * 1024;
	int64		bytes = 0;
	int			query_col = DDLN_EV_QUERY + 1;
	Datum		null_datum = (Datum) 0;
	bool		null_flag = true;
	Snapshot	snap;
	TupleTableSlot *oslot;
	TupleTableSlot *eslot;
	IndexScanDesc walk;
	IndexScanDesc scan;

	if (IndexRelationGetNumberOfKeyAttributes(event_idx) != 2 ||
		(event_desc->natts != DDLN_EV_NATTS && event_desc->natts != DDLN_EV_NATTS_010) ||
		RelationGetDescr(order_rel)->natts != DDLN_CO_NATTS)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the tables of ddl_notify do not have the columns and indexes this version reads"),
				 errhint(DDLN_HINT_TABLE_SHAPE)));

	memset(out, 0, sizeof(*out));
	out->rows = palloc(sizeof(Datum) * limit);
	out->keys = palloc(sizeof(DdlnEventKey) * limit);
	out->wanted = palloc(sizeof(bool) * limit);
	out->suppressed = palloc0(sizeof(uint8) * limit);
	out->chains = palloc0(sizeof(Datum) * limit);

	/*
	 * READ COMMITTED: what committed before now, this batch's lock included,
	 * and what this transaction did itself (dead letters earlier in it).
	 */
	CommandCounterIncrement();
	snap = RegisterSnapshot(GetTransactionSnapshot());
	oslot = table_slot_create(order_rel, NULL);
	eslot = table_slot_create(event_rel, NULL);
	walk = DdlnIndexBeginScan(order_rel, order_idx, snap, 0, 0);
	index_rescan(walk, NULL, 0, NULL, 0);
	scan = DdlnIndexBeginScan(event_rel, event_idx, snap, 2, 0);

	while (out->n < limit && bytes < max_bytes &&
		   index_getnext_slot(walk, ForwardScanDirection, oslot))
	{
		bool		isnull;
		Datum		xid = slot_getattr(oslot, a_order_xid, &isnull);
		FullTransactionId fxid = DatumGetFullTransactionId(xid);
		int64		pos = DatumGetInt64(slot_getattr(oslot, a_order_pos, &isnull));
		ScanKeyData keys[2];

		/* the subscription point: only what committed after it */
		if (FullTransactionIdEquals(fxid, sub->start_xid) ||
			DatumGetBool(DirectFunctionCall2(pg_visible_in_snapshot, xid, sub->start_snapshot)))
			continue;

		ScanKeyInit(&keys[0], 1, BTEqualStrategyNumber, F_XID8EQ, xid);
		ScanKeyInit(&keys[1], 2, BTGreaterStrategyNumber, F_INT8GT,
					Int64GetDatum(FullTransactionIdEquals(fxid, floor->xid) ? floor->id : 0));
		index_rescan(scan, keys, 2, NULL, 0);
		while (out->n < limit && bytes < max_bytes &&
			   index_getnext_slot(scan, ForwardScanDirection, eslot))
		{
			int64		processed = DatumGetInt64(slot_getattr(eslot, a_processed, &isnull));
			bool		shouldfree;
			HeapTuple	tup;
			bool		wanted;
			Datum		chain = (Datum) 0;
			DdlnSuppressed suppressed = DDLN_DELIVER;

			if (processed & bit)
				continue;		/* handled already */

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
				/* the text is not read at all, let alone passed on */
				HeapTuple	hidden = heap_modify_tuple_by_cols(tup, event_desc, 1,
															   &query_col, &null_datum,
															   &null_flag);

				if (shouldfree)
					heap_freetuple(tup);
				tup = hidden;
				shouldfree = true;
			}
			out->rows[out->n] = heap_copy_tuple_as_datum(tup, event_desc);
			if (shouldfree)
				heap_freetuple(tup);
			/* the row as the handler gets it, its texts de-TOASTed */
			bytes += HeapTupleHeaderGetDatumLength(DatumGetHeapTupleHeader(out->rows[out->n]));
			out->keys[out->n].id = DatumGetInt64(slot_getattr(eslot, a_id, &isnull));
			out->keys[out->n].xid = fxid;
			out->keys[out->n].pos = pos;
			out->wanted[out->n] = wanted;
			out->suppressed[out->n] = (uint8) suppressed;
			out->chains[out->n] = wanted ? chain : (Datum) 0;
			out->n++;
		}
	}

	out->full = (bytes >= max_bytes);
	index_endscan(scan);
	index_endscan(walk);
	ExecDropSingleTupleTableSlot(eslot);
	ExecDropSingleTupleTableSlot(oslot);
	UnregisterSnapshot(snap);
	index_close(event_idx, AccessShareLock);
	table_close(event_rel, AccessShareLock);
	index_close(order_idx, AccessShareLock);
	table_close(order_rel, AccessShareLock);
}
