/*-------------------------------------------------------------------------
 *
 * pool.h
 *	  The pool's shared memory, private to pool.c (which owns it) and
 *	  worker.c (the launcher and the workers).  Every field is read and
 *	  written under ddln_shared->lock (but for a look at "nended" without
 *	  it); see pool.c's header for the rules.
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef DDLN_POOL_H
#define DDLN_POOL_H

#include "storage/latch.h"
#include "storage/lwlock.h"
#include "utils/hsearch.h"
#include "utils/timestamp.h"

#define DDLN_MAX_PAUSES			16
#define DDLN_STOP_WAIT_MS		5000	/* how long the hook waits for a worker */
#define DDLN_MAX_DBS			4096	/* databases queued or awaiting a retry at once */
#define DDLN_MAX_ENDED_CALLS	64		/* notes of handler calls ended, at once */

typedef enum DdlnWorkerState
{
	DDLN_W_FREE = 0,
	DDLN_W_STARTING,			/* registered, extension not seen yet */
	DDLN_W_RUNNING,				/* serving its database */
	DDLN_W_EXITING,				/* decided to exit; serves nobody */
	DDLN_W_NO_EXTENSION			/* exited: the database has no extension */
} DdlnWorkerState;

typedef struct DdlnWorkerSlot
{
	DdlnWorkerState state;
	Oid			dboid;
	uint64		generation;		/* which registration owns the slot */
	pid_t		pid;
	Latch	   *latch;
	bool		stop;			/* asked to exit */
	bool		wake;			/* a commit came since the last round began */
	bool		helped;			/* the launcher started a helper for this round */
	bool		sweeping;		/* the round's deliveries are over; it sweeps */
	bool		yield;			/* idle: leave, a stuck database needs the slot */
	bool		warm;			/* has finished a round */
	bool		handler_ended;	/* exits: the handler timeout ended it */
	TimestampTz since;			/* serving its database since */
	TimestampTz round_since;	/* the round in progress began; 0 if none */
	TimestampTz no_help_before; /* no helper before (a long sweep's backlog) */
	TimestampTz last_round;
	int64		delivered;		/* handler calls committed by this worker */
} DdlnWorkerSlot;

/*
 * A database that needs a worker (or will): the request table, in shared
 * memory, keyed by database OID.  Committers and exiting workers write it;
 * the launcher reads it and removes entries that need nothing any more.
 */
typedef struct DdlnDbEntry
{
	Oid			dboid;			/* hash key */
	TimestampTz queued_since;	/* waits for a worker since; 0 if not */
	TimestampTz retry_at;		/* needs a worker at this time; 0 if not */
	TimestampTz not_before;		/* restart delay after a worker died */
	TimestampTz died_at;		/* when its last worker died */
	int			restart_delay_ms;	/* doubles while workers die young */
	bool		probe;			/* queued by the launcher, to look */
} DdlnDbEntry;

/*
 * A database some backend's command needs without other sessions.  It lasts
 * until that backend's transaction ends (or the backend is gone), with a
 * backstop in case neither is noticed.
 */
typedef struct DdlnPause
{
	Oid			dboid;
	pid_t		pid;			/* the backend that paused it */
	TimestampTz until;			/* backstop */
} DdlnPause;

/* A prepared transaction that may hold events, and its database. */
typedef struct DdlnPreparedXact
{
	TransactionId xid;
	Oid			dboid;
} DdlnPreparedXact;

typedef struct DdlnShared
{
	LWLock	   *lock;
	pid_t		launcher_pid;
	Latch	   *launcher_latch;
	bool		rescan;			/* probe databases not probed yet */
	bool		overflow;		/* the request table was full: probe all */
	int			nwaiting;		/* queued databases the pool could not serve */
	uint64		next_generation;
	uint64		exit_races;		/* commits that found their worker exiting */
	DdlnPause	pauses[DDLN_MAX_PAUSES];
	/* handler calls whose process ended them, to count (DdlnEndedCall) */
	int			nended;			/* also read without the lock, as a hint */
	DdlnEndedCall ended[DDLN_MAX_ENDED_CALLS];
	int			nprepared;		/* entries of pool.c's list of prepared ones */
	int			nslots;
	DdlnWorkerSlot slots[FLEXIBLE_ARRAY_MEMBER];
} DdlnShared;

/* pool.c: the shared memory (NULL without shared_preload_libraries) */
extern DdlnShared *ddln_shared;
extern HTAB *ddln_dbs;			/* DdlnDbEntry by dboid */

/* Does this slot serve its database (a commit there needs no other worker)? */
static inline bool
DdlnSlotServes(const DdlnWorkerSlot *s, Oid dboid)
{
	return s->dboid == dboid && !s->stop &&
		(s->state == DDLN_W_STARTING || s->state == DDLN_W_RUNNING);
}

/* pool.c: the request table and the pauses (caller holds the lock) */
extern DdlnDbEntry *DdlnDbEntryFor(Oid dboid);
extern void DdlnQueueLocked(Oid dboid, TimestampTz since, bool probe);
extern bool DdlnIsPaused(Oid dboid, TimestampTz now);

/* pool.c: prepared transactions (without the lock) */
extern void DdlnKeepDatabasePreparedXacts(void);
extern int	DdlnCheckPreparedXacts(void);

#endif							/* DDLN_POOL_H */
