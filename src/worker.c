/*-------------------------------------------------------------------------
 *
 * worker.c
 *	  The launcher and the pool of delivery workers.  They schedule; the
 *	  engine (deliver.c) delivers.
 *
 * The pool's shared memory (slots, pauses, the request table) and the
 * committing backend's side (wake-up on commit, stepping aside) are in
 * pool.c; this file reaches them through pool.h, and pool.c calls nothing
 * here.
 *
 * The pool (G14):
 * - At most ddl_notify.max_workers delivery workers run at once, for any
 *	 number of databases, each in one shared-memory slot; a worker is a
 *	 dynamic background worker, so the pool never takes more than the
 *	 server's free background-worker slots (max_worker_processes): when
 *	 registration fails the database stays queued and the launcher tries
 *	 again within a second.
 * - A worker serves one database.  It loops: one delivery round
 *	 (DdlnDeliverRound), then sleep until woken.  A round ends with the
 *	 recent sweep (deliver.c) when nothing was delivered or a second has
 *	 passed since the last sweep, and with the full one (a scan of the
 *	 whole queue) instead once a minute: behind an old snapshot the full
 *	 one reads every row version the snapshot keeps (issue 38), so the
 *	 next one waits a hundred times the last one's duration when that is
 *	 longer (at most an hour): full sweeps take about 1% of a worker's
 *	 time however long the snapshot is held.  It exits when it has had
 *	 nothing to do (no event handled, no failure recorded) for
 *	 ddl_notify.worker_idle_timeout, or at once when it is idle and another
 *	 database waits for a slot; before it gives its slot back it writes
 *	 the subscribers' counts it holds into their rows (DdlnFlushProgress,
 *	 deliver.c).  A failing subscriber's retry due within
 *	 the idle timeout keeps it; a later one is left in shared memory as the
 *	 database's retry time, at which the launcher starts a worker again.
 *	 So is "come back after ddl_notify.poll_interval" when a subscriber was
 *	 locked by another deliverer (a CALL deliver() that might be cancelled).
 * - The exit race (the rule is in pool.c's header): a worker decides to
 *	 exit, under the lock, only while its wake flag is clear, and marks its
 *	 slot EXITING in the same critical section.  A worker clears its flag at
 *	 the start of each round, before the round's first snapshot.  The same
 *	 rule covers a worker that finds the extension missing: it rechecks
 *	 when its flag was set meanwhile.
 * - Order and fairness: the launcher starts workers for queued databases
 *	 in order of their "queued since" (a due retry counts from its time).
 *	 A worker that has served for DDLN_TIME_SLICE_MS while some database
 *	 waits ends its round early, after the engine's current pass over the
 *	 subscribers (ddln_round_yield_hook; a pass gives each subscriber a
 *	 turn of a few batches), and gives its slot up: it queues its own
 *	 database again (behind those waiting) and exits.  A worker inside
 *	 one long handler call cannot give up its slot until that call returns
 *	 or is ended (ddl_notify.handler_timeout bounds it, whatever the
 *	 handler traps: failure.c).
 * - A slow subscriber delays no other: when every worker of a database has
 *	 been in its current round for DDLN_HELP_AFTER_MS (its first round,
 *	 with cold caches, DDLN_HELP_AFTER_FIRST_MS; a timeout in the
 *	 worker wakes the launcher then) and no database waits, the launcher
 *	 starts one more worker there (again after a commit wakes a stuck
 *	 worker, once that helper is gone), in a free slot or in one that an
 *	 idle worker of another database is asked to give up; at most
 *	 ddl_notify.max_workers_per_database serve one database.  A round's
 *	 sweep (rows nobody needs, after its deliveries) is nobody's wait: a
 *	 worker sweeping is not stuck, however long the sweep (the full one
 *	 reads every row version an old snapshot keeps), and asks for no help;
 *	 nor does it for as long again after the sweep ended, while it delivers
 *	 the commits that came during the sweep (a worker that keeps up
 *	 delivers them in less time than they took to come).  The
 *	 engine locks each subscriber's row FOR UPDATE SKIP LOCKED (G8): the
 *	 new worker skips the subscriber the busy one holds and delivers to the
 *	 others.  Work is thus handed out by subscriber.
 * - The launcher: a static background worker connected to no database,
 *	 started once recovery has finished (nothing runs on a hot standby;
 *	 everything starts after promotion, G9).  It keeps no state the pool
 *	 needs across its own restart or a server restart: at start it probes
 *	 every database that accepts connections (queues it, marked "probe"),
 *	 so that every database with pending events is served, the probes
 *	 bounded by the pool like any request.  A probe worker finding no
 *	 extension says so and exits; one with nothing to do exits at once when
 *	 others wait.  CREATE DATABASE makes it probe the databases it has not
 *	 probed yet; CREATE EXTENSION queues its own database at commit.  When
 *	 the request table is full (DDLN_MAX_DBS databases queued at once) a
 *	 committer sets "overflow" and the launcher probes every database again.
 *	 Before starting a worker it checks that the database still exists and
 *	 accepts connections (DROP DATABASE while queued drops the request).
 * - A worker that dies (an ERROR, SIGTERM, a crash) is replaced: its
 *	 database is queued again after a restart delay that doubles while
 *	 workers there die young.  Not one the handler timeout ended
 *	 (failure.c, "handler_ended" in its slot): that failure is counted
 *	 against its subscriber, with that subscriber's backoff, and the
 *	 database's other subscribers get a worker after the first delay.
 * - Stepping aside (G11, pool.c): the launcher starts no worker for a
 *	 paused database; a worker asked to leave has its database queued
 *	 again, served once the pause is over if the database still exists.
 * - A launcher that starts (first start, or restart after it died) first
 *	 stops whatever workers an earlier launcher left, so that none runs
 *	 without a handle; a worker checks the generation of its slot before it
 *	 attaches, so a registration the old launcher left behind cannot take a
 *	 slot over.
 * - Shared state is pool.c's, protected by the tranche's one LWLock, never
 *	 held across anything that can block.  Latches are set outside it.
 *	 Nothing here touches ddl_notify's tables (the engine does).
 *
 * Floor: worker (under the entry): started by the postmaster; calls the
 * engine (deliver.c), pool.c and common.c.
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
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_database.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timeout.h"
#include "utils/timestamp.h"

#include "common.h"
#include "pool.h"

PGDLLEXPORT void DdlnLauncherMain(Datum arg);
PGDLLEXPORT void DdlnWorkerMain(Datum arg);

#define DDLN_RESTART_DELAY_MS	1000	/* before restarting a worker that died */
#define DDLN_MAX_RESTART_DELAY_MS 60000
#define DDLN_HEALTHY_RUN_MS		10000	/* a worker that ran this long was fine */
#define DDLN_SWEEP_INTERVAL_MS	1000	/* a delivering worker sweeps at most this often */
#define DDLN_FULL_SWEEP_INTERVAL_MS 60000	/* ... and scans the whole queue at most this often */
/*
 * ... and less often as those scans grow: the next full sweep comes no
 * sooner than this many times the last one's duration after it, so that
 * they take at most about 1% of the worker's time, however many row
 * versions an old snapshot keeps (issue 38: about 1 ms per MB of queue
 * heap), and no later than DDLN_FULL_SWEEP_MAX_INTERVAL_MS.
 */
#define DDLN_FULL_SWEEP_STRETCH	100
#define DDLN_FULL_SWEEP_MAX_INTERVAL_MS 3600000

/*
 * A worker that has served this long gives its slot up after a round that
 * left work, when another database waits.  Starting a worker costs some
 * 10-30 ms of one core; a slice of a second keeps that under a few percent
 * while no database waits for more than about (queued ahead / pool) slices.
 */
#define DDLN_TIME_SLICE_MS		1000

/*
 * When every worker of a database has been in one round this long, the
 * launcher starts another there (a free slot and no database waiting).  A
 * round of a few fast handlers takes a millisecond or two; a round this
 * long is most likely inside a slow handler or a lock wait.
 */
#define DDLN_HELP_AFTER_MS		50
/* a worker's first round is slower (cold caches, plans to prepare) */
#define DDLN_HELP_AFTER_FIRST_MS	500

#define DDLN_BGW_RETRY_MS		1000	/* max_worker_processes was full */
#define DDLN_LAUNCHER_POLL_MS	10000	/* the launcher's fallback look */

static DdlnWorkerSlot *my_slot = NULL;
/* wakes the launcher when a round has lasted DdlnHelpAfterMs (a worker's) */
static TimeoutId long_round_timeout;
/* when this worker's last sweep began (DdlnSweepBegins) */
static TimestampTz sweep_began = 0;

void
DdlnRegisterLauncher(void)
{
	BackgroundWorker worker;

	if (ddln_max_workers == 0)
		return;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = 1;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "ddl_notify");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "DdlnLauncherMain");
	snprintf(worker.bgw_name, BGW_MAXLEN, "ddl_notify launcher");
	snprintf(worker.bgw_type, BGW_MAXLEN, "ddl_notify launcher");
	RegisterBackgroundWorker(&worker);
}

/* ---------------------------------------------------------------------
 * The launcher
 * ---------------------------------------------------------------------
 */

/* launcher-local */
static BackgroundWorkerHandle **handles = NULL;	/* by slot */
static HTAB *probed = NULL;		/* databases probed since the launcher started */

typedef struct DdlnCandidate
{
	Oid			dboid;
	TimestampTz since;
} DdlnCandidate;

static int
DdlnCompareCandidates(const void *a, const void *b)
{
	const DdlnCandidate *ca = a;
	const DdlnCandidate *cb = b;

	if (ca->since != cb->since)
		return ca->since < cb->since ? -1 : 1;
	return ca->dboid < cb->dboid ? -1 : (ca->dboid > cb->dboid ? 1 : 0);
}

static void
DdlnForgetProbes(void)
{
	HASHCTL		info;

	if (probed)
		hash_destroy(probed);
	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(Oid);
	info.entrysize = sizeof(Oid);
	info.hcxt = TopMemoryContext;
	probed = hash_create("ddl_notify probed databases", 256, &info,
						 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

/* Can a worker connect to this database (it exists, and takes connections)? */
static bool
DdlnDatabaseUsable(Form_pg_database db)
{
	if (!db->datallowconn || db->datistemplate)
		return false;
	if (db->datconnlimit == -2)	/* DROP DATABASE in progress */
		return false;
	return true;
}

/*
 * The launcher is connected to no database: it reads pg_database with a
 * heap scan (no index, whose relcache entry would need pg_class), as the
 * autovacuum launcher does.
 */
static bool
DdlnDatabaseExists(Oid dboid)
{
	Relation	rel;
	TableScanDesc scan;
	ScanKeyData key;
	HeapTuple	tup;
	bool		usable = false;

	StartTransactionCommand();
	(void) GetTransactionSnapshot();
	rel = table_open(DatabaseRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_database_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(dboid));
	scan = table_beginscan_catalog(rel, 1, &key);
	tup = heap_getnext(scan, ForwardScanDirection);
	if (HeapTupleIsValid(tup))
		usable = DdlnDatabaseUsable((Form_pg_database) GETSTRUCT(tup));
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	CommitTransactionCommand();
	return usable;
}

/*
 * Queue a probe for every database that accepts connections and has not
 * been probed since the launcher started.  Returns false if the request
 * table was full (scan again later).
 */
static bool
DdlnLauncherScan(TimestampTz now)
{
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tup;
	Oid		   *oids;
	int			noids = 0;
	int			maxoids = 64;
	bool		complete = true;

	oids = palloc(sizeof(Oid) * maxoids);
	StartTransactionCommand();
	(void) GetTransactionSnapshot();
	rel = table_open(DatabaseRelationId, AccessShareLock);
	scan = table_beginscan_catalog(rel, 0, NULL);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Form_pg_database db = (Form_pg_database) GETSTRUCT(tup);

		if (!DdlnDatabaseUsable(db))
			continue;
		if (hash_search(probed, &db->oid, HASH_FIND, NULL) != NULL)
			continue;
		if (noids == maxoids)
		{
			maxoids *= 2;
			oids = repalloc(oids, sizeof(Oid) * maxoids);
		}
		oids[noids++] = db->oid;
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	CommitTransactionCommand();

	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < noids; i++)
	{
		if (DdlnDbEntryFor(oids[i]) == NULL)
		{
			/* full: not an overflow of commits, just scan again later */
			ddln_shared->overflow = false;
			complete = false;
			break;
		}
		DdlnQueueLocked(oids[i], now, true);
		(void) hash_search(probed, &oids[i], HASH_ENTER, NULL);
	}
	LWLockRelease(ddln_shared->lock);
	pfree(oids);
	return complete;
}

static int
DdlnClaimSlot(Oid dboid)
{
	int			found = -1;

	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < ddln_shared->nslots; i++)
	{
		if (ddln_shared->slots[i].state == DDLN_W_FREE && handles[i] == NULL)
		{
			DdlnWorkerSlot *s = &ddln_shared->slots[i];

			memset(s, 0, sizeof(*s));
			s->state = DDLN_W_STARTING;
			s->dboid = dboid;
			s->since = GetCurrentTimestamp();
			s->generation = ++ddln_shared->next_generation;
			found = i;
			break;
		}
	}
	LWLockRelease(ddln_shared->lock);
	return found;
}

static void
DdlnReleaseSlot(int slot)
{
	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	memset(&ddln_shared->slots[slot], 0, sizeof(DdlnWorkerSlot));
	LWLockRelease(ddln_shared->lock);
}

typedef enum DdlnStartResult
{
	DDLN_STARTED,
	DDLN_NO_SLOT,				/* the pool is full */
	DDLN_NO_BGWORKER			/* max_worker_processes is */
} DdlnStartResult;

static DdlnStartResult
DdlnStartWorker(Oid dboid)
{
	BackgroundWorker worker;
	int			slot = DdlnClaimSlot(dboid);

	if (slot < 0)
		return DDLN_NO_SLOT;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "ddl_notify");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "DdlnWorkerMain");
	snprintf(worker.bgw_name, BGW_MAXLEN, "ddl_notify worker for database %u", dboid);
	snprintf(worker.bgw_type, BGW_MAXLEN, "ddl_notify worker");
	worker.bgw_main_arg = Int32GetDatum(slot);
	worker.bgw_notify_pid = MyProcPid;
	LWLockAcquire(ddln_shared->lock, LW_SHARED);
	memcpy(worker.bgw_extra, &ddln_shared->slots[slot].generation, sizeof(uint64));
	LWLockRelease(ddln_shared->lock);

	if (!RegisterDynamicBackgroundWorker(&worker, &handles[slot]))
	{
		DdlnReleaseSlot(slot);
		handles[slot] = NULL;
		return DDLN_NO_BGWORKER;
	}
	return DDLN_STARTED;
}

/*
 * Look at the workers that exited: free their slots, and queue their
 * database again when it may still need one (the worker died, or was asked
 * to leave); one that left by itself said what it needs in the table.
 */
static void
DdlnLauncherReap(TimestampTz now)
{
	for (int i = 0; i < ddln_shared->nslots; i++)
	{
		pid_t		pid;
		DdlnWorkerSlot *s = &ddln_shared->slots[i];

		if (handles[i] == NULL)
			continue;
		if (GetBackgroundWorkerPid(handles[i], &pid) != BGWH_STOPPED)
			continue;

		LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
		if (s->state == DDLN_W_STARTING || s->state == DDLN_W_RUNNING)
		{
			DdlnDbEntry *e = DdlnDbEntryFor(s->dboid);

			if (e != NULL && s->stop)
			{
				/* asked to leave (a pause): back once the pause is over */
				if (e->queued_since == 0)
				{
					e->queued_since = now;
					e->probe = true;
				}
			}
			else if (e != NULL)
			{
				/*
				 * It died.  Again soon; less and less soon while workers
				 * there die young (an error in every round).
				 */
				if (e->queued_since == 0)
					e->queued_since = now;
				if (s->handler_ended)
				{
					/*
					 * The handler timeout ended it (deliver.c): its failure
					 * is counted, with a backoff, before the handler runs
					 * again; the other subscribers need a worker now.  The
					 * first restart delay, not doubled, in case the count
					 * failed.
					 */
					e->restart_delay_ms = DDLN_RESTART_DELAY_MS;
				}
				else if (s->state == DDLN_W_RUNNING &&
						 !TimestampDifferenceExceeds(s->since, now, DDLN_HEALTHY_RUN_MS))
					e->restart_delay_ms = Min(Max(e->restart_delay_ms * 2, DDLN_RESTART_DELAY_MS),
											  DDLN_MAX_RESTART_DELAY_MS);
				else
					e->restart_delay_ms = DDLN_RESTART_DELAY_MS;
				e->not_before = TimestampTzPlusMilliseconds(now, e->restart_delay_ms);
				e->died_at = now;
			}
		}
		memset(s, 0, sizeof(*s));
		LWLockRelease(ddln_shared->lock);
		pfree(handles[i]);
		handles[i] = NULL;
	}
}

/*
 * A launcher that starts finds the slots as an earlier launcher left them
 * (after it died, say): their workers have no handle here and would never be
 * reaped.  Stop them, wait for them, and start from empty slots.  A worker
 * registered but not started yet finds its slot's generation changed and
 * leaves by itself.
 */
static void
DdlnStopLeftoverWorkers(void)
{
	TimestampTz give_up = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), DDLN_STOP_WAIT_MS);

	for (;;)
	{
		bool		waiting = false;

		LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
		for (int i = 0; i < ddln_shared->nslots; i++)
		{
			DdlnWorkerSlot *s = &ddln_shared->slots[i];

			if (s->state == DDLN_W_FREE)
				continue;
			if (s->pid != 0 && GetCurrentTimestamp() < give_up)
			{
				s->stop = true;
				kill(s->pid, SIGTERM);
				waiting = true;
			}
			else
				memset(s, 0, sizeof(*s));
		}
		LWLockRelease(ddln_shared->lock);
		if (!waiting)
			return;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 10L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}


/* How many slots serve this database? */
static int
DdlnDatabaseWorkers(Oid dboid)
{
	int			n = 0;

	for (int i = 0; i < ddln_shared->nslots; i++)
		if (DdlnSlotServes(&ddln_shared->slots[i], dboid))
			n++;
	return n;
}

/* How long a round of this slot must last before it gets help. */
static inline int
DdlnHelpAfterMs(const DdlnWorkerSlot *s)
{
	return s->warm ? DDLN_HELP_AFTER_MS : DDLN_HELP_AFTER_FIRST_MS;
}

/*
 * When the round in progress of this slot may get help: DdlnHelpAfterMs
 * into it, and not before the slot's no_help_before (after a long sweep,
 * the commits that waited for it are being delivered: DdlnEndRound).
 */
static TimestampTz
DdlnHelpAt(const DdlnWorkerSlot *s)
{
	TimestampTz at = TimestampTzPlusMilliseconds(s->round_since, DdlnHelpAfterMs(s));

	return Max(at, s->no_help_before);
}

/* Is some slot of this database not stuck in a long round (starting, idle, sweeping)? */
static bool
DdlnDatabaseHasFreshWorker(Oid dboid, TimestampTz now)
{
	for (int i = 0; i < ddln_shared->nslots; i++)
	{
		DdlnWorkerSlot *s = &ddln_shared->slots[i];

		if (!DdlnSlotServes(s, dboid))
			continue;
		if (s->state == DDLN_W_STARTING || s->round_since == 0 || s->sweeping ||
			now < DdlnHelpAt(s))
			return true;
	}
	return false;
}

/*
 * Per-subscriber parallelism: a database all of whose workers are stuck in a
 * long round gets one more (see the header).  Called when no database
 * waits; lowers *sleep_ms to when it should look again.  Without a free
 * slot, an idle worker of another database is asked to leave, and the
 * helper starts once it has.
 */
static void
DdlnLauncherHelp(TimestampTz now, int nfree, long *sleep_ms)
{
	Oid			help[64];
	int			nhelp = 0;
	Latch	   *idle[64];
	int			nidle = 0;

	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < ddln_shared->nslots && nhelp < (int) lengthof(help); i++)
	{
		DdlnWorkerSlot *s = &ddln_shared->slots[i];
		long		secs;
		int			usecs;
		bool		dup = false;

		if (s->state != DDLN_W_RUNNING || s->stop || s->round_since == 0 || s->sweeping)
			continue;
		if (now < DdlnHelpAt(s))
		{
			TimestampDifference(now, DdlnHelpAt(s), &secs, &usecs);
			*sleep_ms = Min(*sleep_ms, secs * 1000 + usecs / 1000 + 1);
			continue;
		}
		if (s->helped && !s->wake)
			continue;
		if (DdlnDatabaseHasFreshWorker(s->dboid, now) ||
			DdlnDatabaseWorkers(s->dboid) >= ddln_max_workers_per_database)
			continue;
		for (int j = 0; j < nhelp; j++)
			dup |= (help[j] == s->dboid);
		if (dup || DdlnIsPaused(s->dboid, now))
			continue;
		help[nhelp++] = s->dboid;
	}
	if (nhelp > nfree)
	{
		/* make room: idle workers of databases that need no help leave */
		for (int i = 0; i < ddln_shared->nslots && nidle < (int) lengthof(idle); i++)
		{
			DdlnWorkerSlot *t = &ddln_shared->slots[i];
			bool		needed = false;

			for (int j = 0; j < nhelp; j++)
				needed |= (help[j] == t->dboid);
			if (t->state == DDLN_W_RUNNING && t->round_since == 0 && !needed &&
				t->latch != NULL && nidle < nhelp - nfree)
			{
				t->yield = true;
				idle[nidle++] = t->latch;
			}
		}
		nhelp = nfree;
	}
	for (int j = 0; j < nhelp; j++)
		for (int i = 0; i < ddln_shared->nslots; i++)
			if (ddln_shared->slots[i].dboid == help[j])
				ddln_shared->slots[i].helped = true;
	LWLockRelease(ddln_shared->lock);
	for (int i = 0; i < nidle; i++)
		SetLatch(idle[i]);

	for (int j = 0; j < nhelp; j++)
	{
		if (DdlnStartWorker(help[j]) != DDLN_STARTED)
			break;
		ereport(DEBUG1,
				(errmsg_internal("ddl_notify: another worker for database %u, whose workers are all in a long round",
								 help[j])));
	}
}

/* What one scheduling pass found and did. */
typedef struct DdlnSchedule
{
	TimestampTz now;
	long		sleep_ms;		/* how long the launcher may sleep */
	DdlnCandidate *cands;		/* queued databases due for a worker */
	int			ncands;
	int			nfree;			/* free slots */
	int			started;		/* candidates served (or gone) */
	bool		bgw_short;		/* the postmaster had no worker to give */
} DdlnSchedule;

/* Sleep no longer than until "at". */
static void
DdlnSleepUntil(DdlnSchedule *sc, TimestampTz at)
{
	long		secs;
	int			usecs;

	TimestampDifference(sc->now, at, &secs, &usecs);
	sc->sleep_ms = Min(sc->sleep_ms, secs * 1000 + usecs / 1000 + 1);
}

/*
 * Under the lock, walk the request table: due retries become requests, a
 * database a worker serves is no longer queued, queued databases that may
 * start now become candidates, entries nobody needs are forgotten.  Also
 * counts the free slots.
 */
static void
DdlnCollectCandidates(DdlnSchedule *sc)
{
	HASH_SEQ_STATUS seq;
	DdlnDbEntry *e;

	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	sc->cands = palloc(sizeof(DdlnCandidate) * ((int) hash_get_num_entries(ddln_dbs) + 1));
	for (int i = 0; i < ddln_shared->nslots; i++)
		if (ddln_shared->slots[i].state == DDLN_W_FREE && handles[i] == NULL)
			sc->nfree++;
	hash_seq_init(&seq, ddln_dbs);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		bool		served = false;

		for (int i = 0; i < ddln_shared->nslots; i++)
			served |= DdlnSlotServes(&ddln_shared->slots[i], e->dboid);

		if (e->retry_at != 0 && e->retry_at <= sc->now)
		{
			if (e->queued_since == 0 || e->retry_at < e->queued_since)
				e->queued_since = e->retry_at;
			e->retry_at = 0;
		}
		if (served)
		{
			/* the running worker sees the commit, or its own retries */
			e->queued_since = 0;
			e->probe = false;
		}
		if (e->queued_since != 0)
		{
			if (e->not_before > sc->now)
				DdlnSleepUntil(sc, e->not_before);
			else if (DdlnIsPaused(e->dboid, sc->now))
				sc->sleep_ms = Min(sc->sleep_ms, 500);
			else
			{
				sc->cands[sc->ncands].dboid = e->dboid;
				sc->cands[sc->ncands].since = e->queued_since;
				sc->ncands++;
			}
		}
		else if (e->retry_at != 0)
			DdlnSleepUntil(sc, e->retry_at);
		else if (!served &&
				 (e->died_at == 0 ||
				  TimestampDifferenceExceeds(e->died_at, sc->now, DDLN_MAX_RESTART_DELAY_MS + DDLN_HEALTHY_RUN_MS)))
		{
			/*
			 * Nothing asked of it: forget it (kept a while after a worker
			 * died, so that the restart delay doubles if the next dies too).
			 */
			(void) hash_search(ddln_dbs, &e->dboid, HASH_REMOVE, NULL);
		}
	}
	LWLockRelease(ddln_shared->lock);
}

/* Forget database "dboid"'s request (it was served, or it is gone). */
static void
DdlnClearRequest(Oid dboid, bool remove)
{
	DdlnDbEntry *e;

	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	if (remove)
		(void) hash_search(ddln_dbs, &dboid, HASH_REMOVE, NULL);
	else if ((e = hash_search(ddln_dbs, &dboid, HASH_FIND, NULL)) != NULL)
	{
		e->queued_since = 0;
		e->probe = false;
	}
	LWLockRelease(ddln_shared->lock);
}

/* Start workers for the candidates, longest waiting first, while slots are free. */
static void
DdlnStartCandidates(DdlnSchedule *sc)
{
	qsort(sc->cands, sc->ncands, sizeof(DdlnCandidate), DdlnCompareCandidates);
	for (int c = 0; c < sc->ncands && sc->nfree > 0 && !sc->bgw_short; c++)
	{
		DdlnStartResult r;

		if (!DdlnDatabaseExists(sc->cands[c].dboid))
		{
			/* dropped (or made a template) while queued */
			DdlnClearRequest(sc->cands[c].dboid, true);
			sc->started++;		/* not waiting any more */
			continue;
		}
		r = DdlnStartWorker(sc->cands[c].dboid);
		if (r == DDLN_NO_SLOT)
			break;
		if (r == DDLN_NO_BGWORKER)
		{
			sc->bgw_short = true;
			sc->sleep_ms = Min(sc->sleep_ms, DDLN_BGW_RETRY_MS);
			break;
		}
		sc->nfree--;
		sc->started++;
		DdlnClearRequest(sc->cands[c].dboid, false);
	}
}

/*
 * Databases still waiting: publish how many, and make the idle workers
 * leave at once to make room; say so in the log at most once a minute (with
 * many tenants a full pool is normal).
 */
static void
DdlnMakeRoom(DdlnSchedule *sc, TimestampTz *logged)
{
	Latch	   *idle[64];
	int			nidle = 0;
	int			waiting = sc->ncands - sc->started;

	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	ddln_shared->nwaiting = waiting;
	if (waiting > 0)
	{
		for (int i = 0; i < ddln_shared->nslots && nidle < (int) lengthof(idle); i++)
		{
			DdlnWorkerSlot *s = &ddln_shared->slots[i];

			if (s->state == DDLN_W_RUNNING && s->round_since == 0 && s->latch)
				idle[nidle++] = s->latch;
		}
	}
	LWLockRelease(ddln_shared->lock);
	for (int i = 0; i < nidle; i++)
		SetLatch(idle[i]);

	if (waiting > 0 &&
		(*logged == 0 || TimestampDifferenceExceeds(*logged, sc->now, 60000)))
	{
		*logged = sc->now;
		ereport(LOG,
				(sc->bgw_short ?
				 errmsg_plural("ddl_notify: no free background worker slot; delivery waits in %d database",
							   "ddl_notify: no free background worker slot; delivery waits in %d databases",
							   waiting, waiting) :
				 errmsg_plural("ddl_notify: no free worker slot; delivery waits in %d database",
							   "ddl_notify: no free worker slot; delivery waits in %d databases",
							   waiting, waiting),
				 errhint("Raise ddl_notify.max_workers (now %d) or max_worker_processes.",
						 ddln_max_workers)));
	}
}

/*
 * One scheduling pass: due retries become requests, queued databases get
 * workers in order of waiting time while slots are free, idle workers are
 * told when others wait, stuck databases get help.  Returns how long the
 * launcher may sleep.
 */
static long
DdlnLauncherSchedule(TimestampTz now, TimestampTz *logged)
{
	DdlnSchedule sc = {0};

	sc.now = now;
	sc.sleep_ms = DDLN_LAUNCHER_POLL_MS;
	DdlnCollectCandidates(&sc);
	DdlnStartCandidates(&sc);
	DdlnMakeRoom(&sc, logged);
	if (sc.ncands == sc.started)
		DdlnLauncherHelp(now, sc.nfree, &sc.sleep_ms);
	pfree(sc.cands);
	return Max(sc.sleep_ms, 1);
}

void
DdlnLauncherMain(Datum arg)
{
	TimestampTz logged = 0;
	bool		scan_again = false;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	pgstat_report_appname("ddl_notify launcher");

	handles = MemoryContextAllocZero(TopMemoryContext,
									 sizeof(BackgroundWorkerHandle *) * ddln_shared->nslots);
	DdlnForgetProbes();

	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	ddln_shared->launcher_pid = MyProcPid;
	ddln_shared->launcher_latch = MyLatch;
	ddln_shared->rescan = true;
	LWLockRelease(ddln_shared->lock);

	DdlnStopLeftoverWorkers();
	ereport(LOG, (errmsg("ddl_notify launcher started")));

	for (;;)
	{
		TimestampTz now;
		bool		rescan;
		bool		watching;
		long		sleep_ms;

		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}

		now = GetCurrentTimestamp();
		LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
		rescan = ddln_shared->rescan || ddln_shared->overflow || scan_again;
		if (ddln_shared->overflow)
		{
			ereport(LOG,
					(errmsg("ddl_notify: more than %d databases asked for a worker at once; looking at every database",
							DDLN_MAX_DBS)));
			DdlnForgetProbes();
		}
		ddln_shared->rescan = false;
		ddln_shared->overflow = false;
		LWLockRelease(ddln_shared->lock);

		pgstat_report_activity(STATE_RUNNING, "ddl_notify launcher: scheduling workers");
		DdlnLauncherReap(now);
		if (rescan)
			scan_again = !DdlnLauncherScan(now);
		/* prepared transactions that ended queue their databases */
		watching = DdlnCheckPreparedXacts() > 0;
		sleep_ms = DdlnLauncherSchedule(now, &logged);
		if (scan_again)
			sleep_ms = Min(sleep_ms, DDLN_BGW_RETRY_MS);
		if (watching)
			sleep_ms = Min(sleep_ms, ddln_poll_interval);

		pgstat_report_activity(STATE_IDLE, NULL);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 sleep_ms, PG_WAIT_EXTENSION);
	}
}

/* ---------------------------------------------------------------------
 * A pool worker
 * ---------------------------------------------------------------------
 */

static void
DdlnWorkerDetach(int code, Datum arg)
{
	if (my_slot == NULL)
		return;
	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	my_slot->pid = 0;
	my_slot->latch = NULL;
	my_slot->round_since = 0;
	my_slot->sweeping = false;
	LWLockRelease(ddln_shared->lock);
}

/*
 * Asked by the engine between two passes over the subscribers of a round
 * that has work left: is this worker's time slice over while another
 * database waits?  Then the round ends (result.more) and the worker gives
 * its slot up.
 */
static bool
DdlnSliceOver(void)
{
	bool		others_wait;

	LWLockAcquire(ddln_shared->lock, LW_SHARED);
	others_wait = ddln_shared->nwaiting > 0;
	LWLockRelease(ddln_shared->lock);
	return others_wait &&
		TimestampDifferenceExceeds(my_slot->since, GetCurrentTimestamp(), DDLN_TIME_SLICE_MS);
}

/*
 * A round has lasted DDLN_HELP_AFTER_MS: wake the launcher, which may start
 * a helper (a timeout handler: SetLatch is safe in a signal handler, and
 * the launcher's latch pointer is read as one word).
 */
static void
DdlnRoundIsLong(void)
{
	Latch	   *launcher = ddln_shared->launcher_latch;

	if (launcher != NULL)
		SetLatch(launcher);
}

/*
 * The engine says a round's deliveries are over and its sweep begins
 * (ddln_round_sweep_hook): no subscriber waits on it, so a long sweep (the
 * full one reads every row version an old snapshot keeps: issue 38) asks
 * the launcher for no helper.  The slot says "sweeping" until the round
 * ends; the rounds that deliver what was committed meanwhile get no helper
 * for as long again (DdlnEndRound: a second worker then shared the stream
 * at about twice the CPU per delivery for the rest of the run).
 */
static void
DdlnSweepBegins(void)
{
	disable_timeout(long_round_timeout, false);
	sweep_began = GetCurrentTimestamp();
	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	my_slot->sweeping = true;
	LWLockRelease(ddln_shared->lock);
	/* pg_stat_activity's query_start: when the sweep began */
	SetCurrentStatementStartTimestamp();
	pgstat_report_activity(STATE_RUNNING, "ddl_notify worker: sweep of rows nobody needs");
}

/*
 * Is the extension in this database?  The first time it is, the pool also
 * learns of the transactions prepared here (pool.c: a crash restart left
 * it none to watch).
 */
static bool
DdlnExtensionPresent(bool first)
{
	bool		present;

	StartTransactionCommand();
	present = OidIsValid(get_extension_oid(DDLN_EXTENSION_NAME, true));
	if (present && first)
		DdlnKeepDatabasePreparedXacts();
	CommitTransactionCommand();
	return present;
}

/*
 * SIGTERM of a delivery worker.  Inside a round, as any backend's (die():
 * a handler call is cancelled at once; the counts of the round's batches
 * are lost, as PostgreSQL's own statistics are).  Between rounds it is only
 * noted: the worker moves its counts into the subscriber rows first
 * (DdlnWorkerShutdown), unless the pool itself is stopping it (DROP
 * DATABASE, DROP EXTENSION: the rows may be going away, or locked by the
 * command that waits for the worker to leave).
 */
static volatile sig_atomic_t worker_in_round = false;
static volatile sig_atomic_t worker_shutdown = false;

static void
DdlnWorkerSigterm(SIGNAL_ARGS)
{
	if (worker_in_round)
		die(DDLN_SIGNAL_ARGS_PASSED);
	else
	{
		int			save_errno = errno;

		worker_shutdown = true;
		SetLatch(MyLatch);
		errno = save_errno;
	}
}

/* A SIGTERM came between rounds: counts into the rows, then exit as die() would. */
static void
DdlnWorkerShutdownIfAsked(void)
{
	bool		stop;

	if (!worker_shutdown)
		return;
	LWLockAcquire(ddln_shared->lock, LW_SHARED);
	stop = my_slot->stop;
	LWLockRelease(ddln_shared->lock);
	if (!stop)
		DdlnFlushProgress();
	ereport(FATAL,
			(errcode(ERRCODE_ADMIN_SHUTDOWN),
			 errmsg("terminating ddl_notify worker due to administrator command")));
}

/*
 * Leave the pool: move the subscribers' counts into their rows
 * (deliver.c), then mark the slot EXITING (no committer counts on it from now
 * on) unless a commit came since the last round began; with "requeue" queue
 * the database again (a worker giving its slot up with work left), else
 * leave a retry time if there is one.  Returns false, without exiting, when
 * a commit came: the caller runs a round.
 */
static bool
DdlnWorkerLeave(bool requeue, TimestampTz retry_at, const char *why)
{
	Oid			dboid;

	/* the counts it holds reach the rows before the slot is given back */
	DdlnFlushProgress();
	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	if (my_slot->wake && !my_slot->stop)
	{
		LWLockRelease(ddln_shared->lock);
		/* untested: a wake after DdlnWorkerWait() looked, a window of microseconds; 018 catches its loss once widened (exit_ignores_wake.patch) */
		return false;
	}
	dboid = my_slot->dboid;
	my_slot->state = DDLN_W_EXITING;
	if (requeue)
		DdlnQueueLocked(dboid, GetCurrentTimestamp(), false);
	else if (retry_at != 0)
	{
		DdlnDbEntry *e = DdlnDbEntryFor(dboid);

		if (e != NULL && (e->retry_at == 0 || retry_at < e->retry_at))
			e->retry_at = retry_at;
	}
	LWLockRelease(ddln_shared->lock);
	if (requeue || retry_at != 0)
	{
		Latch	   *launcher;

		LWLockAcquire(ddln_shared->lock, LW_SHARED);
		launcher = ddln_shared->launcher_latch;
		LWLockRelease(ddln_shared->lock);
		if (launcher)
			SetLatch(launcher);
	}
	ereport(DEBUG1, (errmsg_internal("ddl_notify worker for database %u exiting: %s", dboid, why)));
	proc_exit(0);
	return true;				/* not reached */
}

static long
DdlnMsUntil(TimestampTz now, TimestampTz t)
{
	long		secs;
	int			usecs;

	if (t <= now)
		return 0;
	TimestampDifference(now, t, &secs, &usecs);
	return secs * 1000 + usecs / 1000 + 1;
}

/*
 * Take slot "slot" as the launcher left it (or leave, if a launcher that is
 * gone registered us and the slot was taken back), connect to its database
 * and return the database's name (for the log).
 */
static char *
DdlnWorkerAttach(int slot)
{
	uint64		generation;
	Oid			dboid;
	char	   *dbname;

	memcpy(&generation, MyBgworkerEntry->bgw_extra, sizeof(uint64));
	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	if (ddln_shared->slots[slot].state != DDLN_W_STARTING ||
		ddln_shared->slots[slot].generation != generation)
	{
		/* registered by a launcher that is gone; its slot was taken back */
		LWLockRelease(ddln_shared->lock);
		proc_exit(0);
	}
	my_slot = &ddln_shared->slots[slot];
	dboid = my_slot->dboid;
	my_slot->pid = MyProcPid;
	my_slot->latch = MyLatch;
	LWLockRelease(ddln_shared->lock);
	before_shmem_exit(DdlnWorkerDetach, (Datum) 0);

	BackgroundWorkerInitializeConnectionByOid(dboid, InvalidOid, 0);
	pgstat_report_appname("ddl_notify worker");
	StartTransactionCommand();
	dbname = MemoryContextStrdup(TopMemoryContext, get_database_name(dboid));
	CommitTransactionCommand();
	return dbname;
}

/*
 * A round begins: clear the wake flag (commits from now on set it again),
 * say since when the round runs.  False if the worker was asked to stop.
 */
static bool
DdlnBeginRound(TimestampTz round_start, bool *was_starting)
{
	bool		stop;

	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	stop = my_slot->stop;
	my_slot->wake = false;
	my_slot->helped = false;
	my_slot->sweeping = false;
	my_slot->round_since = round_start;
	*was_starting = (my_slot->state == DDLN_W_STARTING);
	LWLockRelease(ddln_shared->lock);
	return !stop;
}

/*
 * Is the extension (still) in this database?  If not, the worker exits,
 * unless a commit came meanwhile (CREATE EXTENSION?): then false, and the
 * caller looks again.  A worker that was starting is RUNNING from here on.
 */
static bool
DdlnExtensionStillThere(bool was_starting, const char *dbname)
{
	if (!DdlnExtensionPresent(was_starting))
	{
		LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
		if (my_slot->wake && !my_slot->stop)
		{
			/* untested: a commit meanwhile (CREATE EXTENSION?): look again */
			LWLockRelease(ddln_shared->lock);
			return false;
		}
		my_slot->state = DDLN_W_NO_EXTENSION;
		LWLockRelease(ddln_shared->lock);
		if (!was_starting)
			ereport(LOG, (errmsg("ddl_notify worker exiting: the extension was dropped in database \"%s\"",
								 dbname)));
		proc_exit(0);
	}
	if (was_starting)
	{
		LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
		my_slot->state = DDLN_W_RUNNING;
		LWLockRelease(ddln_shared->lock);
		ereport(DEBUG1, (errmsg_internal("ddl_notify worker started for database \"%s\"", dbname)));
	}
	return true;
}

/* One delivery round (deliver.c), in transactions of its own. */
static void
DdlnRunRound(MemoryContext loopcxt, DdlnSweep sweep, DdlnRoundResult *result)
{
	pgstat_report_activity(STATE_RUNNING, "ddl_notify worker: delivery round");
	/* the launcher learns of a long round without polling for it */
	if (ddln_max_workers_per_database > 1)
		enable_timeout_after(long_round_timeout, DdlnHelpAfterMs(my_slot));
	SetCurrentStatementStartTimestamp();
	worker_in_round = true;
	/* a SIGTERM noted just before (die() from here on): nothing begun yet */
	if (worker_shutdown)
	{
		worker_in_round = false;
		DdlnWorkerShutdownIfAsked();
	}
	StartTransactionCommand();
	/* the round's memory must outlive its transactions (deliver.c) */
	MemoryContextSwitchTo(loopcxt);
	PortalContext = loopcxt;
	DdlnDeliverRound(result, sweep);
	CommitTransactionCommand();
	PortalContext = NULL;
	worker_in_round = false;
	disable_timeout(long_round_timeout, false);
	/* the tables' counters (n_tup_upd, n_tup_del) drive autovacuum */
	pgstat_report_stat(false);
}

/* A round ended: publish it in the slot.  True if other databases wait. */
static bool
DdlnEndRound(const DdlnRoundResult *result)
{
	bool		others_wait;
	TimestampTz now = GetCurrentTimestamp();

	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	my_slot->round_since = 0;
	my_slot->sweeping = false;
	my_slot->warm = true;
	my_slot->last_round = now;
	/*
	 * the commits that waited for this round's sweep: as long again (a short
	 * sweep in the rounds after a long one leaves its time as it is)
	 */
	if (sweep_began != 0 && now > sweep_began)
		my_slot->no_help_before = Max(my_slot->no_help_before, now + (now - sweep_began));
	my_slot->delivered += result->delivered;
	others_wait = ddln_shared->nwaiting > 0;
	LWLockRelease(ddln_shared->lock);
	return others_wait;
}

/*
 * Delivered something: commits may be coming as a stream (a migration, a
 * tool creating objects one by one).  Let them gather until
 * ddl_notify.stream_interval after the start of this round, so that one
 * round serves several commits instead of one each: each round costs the
 * worker a few transactions, and took CPU from the sessions running the
 * DDL.  A commit that comes alone, after a quiet interval, is delivered at
 * once; under a stream a handler starts at most this interval (plus a
 * round) after its event's commit.
 */
static void
DdlnGatherStream(TimestampTz round_start)
{
	long		secs;
	int			usecs;
	long		waited_ms;

	if (ddln_stream_interval <= 0)
		return;
	TimestampDifference(round_start, GetCurrentTimestamp(), &secs, &usecs);
	waited_ms = secs * 1000 + usecs / 1000;
	if (waited_ms < ddln_stream_interval)
		(void) WaitLatch(MyLatch, WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 ddln_stream_interval - waited_ms,
						 PG_WAIT_EXTENSION);
}

/*
 * Between rounds: sleep until a commit wakes this worker, a retry is due or
 * the poll interval is over (return true: run a round), or leave the pool
 * when idle for ddl_notify.worker_idle_timeout, at once if another database
 * waits (does not return).
 */
static bool
DdlnWorkerWait(TimestampTz next_retry, TimestampTz last_busy, bool others_busy)
{
	TimestampTz poll_at = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), ddln_poll_interval);

	for (;;)
	{
		TimestampTz now = GetCurrentTimestamp();
		TimestampTz idle_end = TimestampTzPlusMilliseconds(last_busy, ddln_worker_idle_timeout);
		bool		wake;
		bool		stop;
		bool		others_wait;
		long		timeout;

		LWLockAcquire(ddln_shared->lock, LW_SHARED);
		wake = my_slot->wake;
		stop = my_slot->stop;
		others_wait = ddln_shared->nwaiting > 0 || my_slot->yield;
		LWLockRelease(ddln_shared->lock);

		if (stop)
			return false;
		if (wake)
			return true;
		if (next_retry != 0 && next_retry <= now)
			return true;
		if (others_wait || now >= idle_end)
		{
			TimestampTz come_back = next_retry;

			/* a subscriber was held by another deliverer: look again later */
			if (others_busy && (come_back == 0 || come_back > poll_at))
				come_back = poll_at;
			if (!DdlnWorkerLeave(false, come_back,
								 others_wait ? "idle, and other databases wait" : "idle timeout"))
				return true;
		}
		if (now >= poll_at)
			return true;

		timeout = DdlnMsUntil(now, poll_at);
		timeout = Min(timeout, Max(DdlnMsUntil(now, idle_end), 1));
		if (next_retry != 0)
			timeout = Min(timeout, Max(DdlnMsUntil(now, next_retry), 1));
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 timeout, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		DdlnWorkerShutdownIfAsked();
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
	}
}

/*
 * When the full sweep that ended at "ended" allows the next one: a minute
 * later, or DDLN_FULL_SWEEP_STRETCH times its own duration if that is
 * longer (behind an old snapshot it reads every row version kept, about
 * 1 ms per MB of queue heap: issue 38), at most an hour later.  The
 * duration is the time since the sweep began (DdlnSweepBegins), waits on
 * locks included; none when the round ran no sweep.
 */
static TimestampTz
DdlnNextFullSweep(TimestampTz ended)
{
	int64		took_ms = 0;
	int64		wait_ms;

	if (sweep_began != 0 && ended > sweep_began)
		took_ms = (ended - sweep_began) / 1000;
	wait_ms = Max((int64) DDLN_FULL_SWEEP_INTERVAL_MS, took_ms * DDLN_FULL_SWEEP_STRETCH);
	wait_ms = Min(wait_ms, (int64) DDLN_FULL_SWEEP_MAX_INTERVAL_MS);
	ereport(DEBUG1,
			(errmsg_internal("ddl_notify worker: the full sweep took %lld ms; the next one in %lld s",
							 (long long) took_ms, (long long) (wait_ms / 1000))));
	return TimestampTzPlusMilliseconds(ended, wait_ms);
}

void
DdlnWorkerMain(Datum arg)
{
	TimestampTz last_sweep = 0;
	TimestampTz next_full_sweep = 0;
	TimestampTz last_busy;
	bool		idle_round = true;	/* the last round had nothing to deliver */
	MemoryContext loopcxt;
	char	   *dbname;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, DdlnWorkerSigterm);
	BackgroundWorkerUnblockSignals();
	dbname = DdlnWorkerAttach(DatumGetInt32(arg));

	loopcxt = AllocSetContextCreate(TopMemoryContext, "ddl_notify worker loop",
									ALLOCSET_DEFAULT_SIZES);
	long_round_timeout = RegisterTimeout(USER_TIMEOUT, DdlnRoundIsLong);
	ddln_round_yield_hook = DdlnSliceOver;
	ddln_round_sweep_hook = DdlnSweepBegins;
	last_busy = GetCurrentTimestamp();
	for (;;)
	{
		DdlnRoundResult result;
		TimestampTz round_start;
		bool		was_starting;
		DdlnSweep	sweep;

		DdlnWorkerShutdownIfAsked();
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}

		/* a round begins: commits from now on set the flag again */
		round_start = GetCurrentTimestamp();
		if (!DdlnBeginRound(round_start, &was_starting))
			break;
		MemoryContextReset(loopcxt);
		MemoryContextSwitchTo(loopcxt);
		if (!DdlnExtensionStillThere(was_starting, dbname))
			continue;

		/*
		 * Sweep at most once a second while there is work, and whenever a
		 * round comes with nothing to deliver (a poll, a wake-up after
		 * unsubscribe()): each DDL commit wakes the worker, and sweeping
		 * after every one of them cost more than delivering its events.
		 * The sweep is the recent one (deliver.c: a walk from the position
		 * floor, bounded), the full one (scans of the whole queue, every
		 * row version an old snapshot keeps included: issue 38) at most
		 * once a minute, and less often when it takes long
		 * (DdlnNextFullSweep).
		 */
		sweep = DDLN_SWEEP_NONE;
		sweep_began = 0;
		if (GetCurrentTimestamp() >= next_full_sweep)
			sweep = DDLN_SWEEP_FULL;
		else if (idle_round || TimestampDifferenceExceeds(last_sweep, GetCurrentTimestamp(),
														  DDLN_SWEEP_INTERVAL_MS))
			sweep = DDLN_SWEEP_RECENT;
		DdlnRunRound(loopcxt, sweep, &result);
		if (sweep != DDLN_SWEEP_NONE)
			last_sweep = GetCurrentTimestamp();
		if (sweep == DDLN_SWEEP_FULL)
			next_full_sweep = DdlnNextFullSweep(last_sweep);

		idle_round = (result.handled == 0);
		if (result.handled > 0 || result.failures > 0)
			last_busy = GetCurrentTimestamp();

		if (result.more)
		{
			/* fairness: served a slice while others wait: give the slot up */
			if (DdlnEndRound(&result) &&
				TimestampDifferenceExceeds(my_slot->since, GetCurrentTimestamp(), DDLN_TIME_SLICE_MS))
				(void) DdlnWorkerLeave(true, 0, "time slice over, other databases wait");
			continue;
		}
		(void) DdlnEndRound(&result);
		if (result.handled > 0)
			DdlnGatherStream(round_start);

		pgstat_report_activity(STATE_IDLE, "ddl_notify worker: idle");
		if (!DdlnWorkerWait(result.next_retry, last_busy, result.busy > 0))
			break;
	}
	proc_exit(0);
}
