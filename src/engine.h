/*-------------------------------------------------------------------------
 *
 * engine.h
 *	  The delivery engine's own types, private to deliver.c, fetch.c,
 *	  imagetexts.c and progress.c (and subscriber.c's wait_for_delivery(),
 *	  for fetch.c's reads of what it waits for): a
 *	  subscriber as the engine sees it while it holds the row lock, and the
 *	  events one batch read.
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef DDLN_ENGINE_H
#define DDLN_ENGINE_H

#include "access/htup.h"
#include "access/tupdesc.h"
#include "storage/itemptr.h"

#include "common.h"

/*
 * One of a subscriber's filters (command_tags, object_types, schemas): a
 * NULL array lets every event through; else the event's value must equal one
 * of the elements, as "value = ANY (array)" is true.
 */
typedef struct DdlnFilter
{
	bool		all;
	int			n;
	char	  **values;			/* NULL elements left out */
} DdlnFilter;

/* One subscriber as the engine sees it while it holds the row lock. */
typedef struct DdlnSubscriber
{
	int32		id;
	char	   *name;
	int32		slot;
	Oid			handler;
	Oid			owner;
	int32		max_attempts;	/* 0: retry for ever */
	bool		due;
	TimestampTz next_retry;
	bool		handler_exists;
	bool		owner_exists;
	char	   *handler_name;	/* qualified signature, NULL before 0.2.0 */
	char	   *owner_name;		/* NULL before 0.2.0 */
	Datum		start_snapshot; /* the subscription point (pg_snapshot) */
	FullTransactionId start_xid;
	DdlnFilter	command_tags;	/* what it wants */
	DdlnFilter	object_types;
	DdlnFilter	schemas;
	bool		echo;
	bool		may_read_query; /* its owner may SELECT event.query */
	bool		enabled;		/* neither paused nor waiting for
								 * confirmation */
	bool		needs_reset;	/* attempts, error or retry time set */
	TimestampTz created_at;		/* tells it from an earlier one of its id */
	DdlnVerdict binding;		/* ok, or why the function its handler's
								 * name finds is not bound (trust.c) */
} DdlnSubscriber;

/*
 * Where the subscriber's handled events of one transaction end: every event
 * of "xid" with an id up to "id" is handled.  A transaction's events become
 * visible together and are read in id order, so once a batch that ended at
 * (xid, id) committed, this stays true; the next read of that transaction
 * starts after it instead of stepping over the handled rows again.  Known
 * only in memory, for the rest of the delivery round.
 */
typedef DdlnEventKey DdlnFloor;

/*
 * Why an event that passed the subscriber's filters is not handed to it
 * (G12, fetch.c): its chain of origins (event.origin_chain) says its own
 * handler caused it (a subscriber not in the chain is never kept from it).
 * Such events are handled without a call and counted in
 * subscriber.loop_suppressed.
 */
typedef enum DdlnSuppressed
{
	DDLN_DELIVER = 0,			/* not suppressed */
	DDLN_SUPPRESS_ECHO,			/* its own handler's DDL, echo => false */
	DDLN_SUPPRESS_LOOP,			/* it is in the chain already, not only as
								 * the direct echo echo => true allows */
	DDLN_SUPPRESS_HOPS			/* its direct echo (echo => true), and the
								 * chain is ddl_notify.max_chain_length long */
} DdlnSuppressed;

/* The events a batch read, in delivery order, in the batch's memory. */
typedef struct DdlnFetched
{
	int			n;
	Datum	   *rows;			/* the event rows (composite datums) */
	DdlnEventKey *keys;			/* id, xid and commit position of each */
	ItemPointerData *tids;		/* where the read found each row */
	bool	   *wanted;			/* passes the filters and the chain rule */
	uint8	   *suppressed;		/* DdlnSuppressed: why not, if not wanted
								 * by the chain rule */
	Datum	   *chains;			/* its origin_chain (text[]), 0 if none */
	bool		full;			/* stopped at ddl_notify.batch_memory */
} DdlnFetched;

/*
 * A subscriber's delivery counters (progress.c): what batches added since
 * they were last moved into its row.  last_event_id 0: none.
 */
typedef struct DdlnProgress
{
	int64		delivered;
	int64		filtered;
	int64		loop_suppressed;
	int64		last_event_id;
	TimestampTz last_delivered_at;
} DdlnProgress;

/*
 * Every subscriber's subscription point, read once (deliver.c): what
 * ddl_notify.is_pending() needs besides the processed bits.
 */
typedef struct DdlnSubscriptionPoints
{
	int			n;
	int32	   *slots;
	Datum	   *snaps;			/* start_snapshot (pg_snapshot) */
	FullTransactionId *start_xids;
} DdlnSubscriptionPoints;

/*
 * What one recent sweep (DdlnSweepWalk) found: rows that may be garbage,
 * by ctid, for deliver.c's deletes to check again under their row locks.
 */
typedef struct DdlnSweepFound
{
	int			nevents;
	ItemPointerData *events;	/* events no subscriber needs */
	int			norders;
	ItemPointerData *orders;	/* commit_order rows without events */
} DdlnSweepFound;

/*
 * One subscriber's pending events as subscriber_status shows them
 * (DdlnStatusWalk): their number, the lowest id, the earliest occurred_at.
 */
typedef struct DdlnPendingCount
{
	int64		pending;
	int64		oldest_id;		/* 0: none seen */
	TimestampTz oldest_at;
	bool		oldest_at_null;
} DdlnPendingCount;

/* index entries subscriber_status's walk looks at before it estimates */
#define DDLN_STATUS_EXACT_EVENTS	20000

/* events (index entries) a recent sweep looks at, at most */
#define DDLN_SWEEP_VISIT	4096

/* how often at most the counters are moved into a subscriber's row */
#define DDLN_PROGRESS_FLUSH_MS	30000

/* progress.c */
extern bool DdlnProgressReserve(int32 id, TimestampTz created);
extern bool DdlnProgressPending(int32 id, TimestampTz created, DdlnProgress *out);
extern void DdlnProgressAdd(int32 id, TimestampTz created, const DdlnProgress *batch);
extern void DdlnProgressMoving(int32 id, TimestampTz created, const DdlnProgress *moved);
extern void DdlnProgressMoved(int32 id, TimestampTz created, TransactionId xid);
extern void DdlnProgressForget(const int32 *ids, int n);
extern int	DdlnProgressHeld(int32 **ids, TimestampTz **created);

/* fetch.c */
extern void DdlnReadFilter(HeapTuple tup, TupleDesc desc, int col, DdlnFilter *f);
extern void DdlnFetch(DdlnSubscriber *sub, int limit, const DdlnFloor *floor,
					  DdlnFetched *out);
extern int64 DdlnNeedOf(const DdlnSubscriptionPoints *pts, FullTransactionId fxid);
extern void DdlnSweepWalk(const DdlnSubscriptionPoints *pts, DdlnSweepFound *found);
extern int	DdlnWaitCollect(Datum visible, FullTransactionId own,
							const DdlnSubscriptionPoints *pts, DdlnEventKey **list);
extern bool DdlnWaitCheck(const DdlnSubscriptionPoints *pts, int64 waited,
						  DdlnEventKey *list, int *n);
extern double DdlnStatusWalk(const DdlnSubscriptionPoints *pts, Snapshot snap,
							 DdlnPendingCount *counts);
extern int	DdlnSetProcessedBits(const DdlnEventKey *sorted, const ItemPointerData *tids,
								 const int64 *need, int n, int32 slotno,
								 int64 *gone, int *ngone);

/* imagetexts.c */
extern Jsonb *DdlnDetailsWithoutTexts(Jsonb *details);

#endif							/* DDLN_ENGINE_H */
