/*-------------------------------------------------------------------------
 *
 * worker.c
 *	  The launcher and the pool of delivery workers.  They schedule; the
 *	  engine (deliver.c) delivers.
 *
 * The pool (G14):
 * - At most ddl_notify.max_workers delivery workers run at once, for any
 *	 number of databases, each in one shared-memory slot; a worker is a
 *	 dynamic background worker, so the pool never takes more than the
 *	 server's free background-worker slots (max_worker_processes): when
 *	 registration fails the database stays queued and the launcher tries
 *	 again within a second.
 * - A worker serves one database.  It loops: one delivery round
 *	 (DdlnDeliverRound), then sleep until woken.  It exits when it has had
 *	 nothing to do (no event handled, no failure recorded) for
 *	 ddl_notify.worker_idle_timeout, or at once when it is idle and another
 *	 database waits for a slot.  A failing subscriber's retry due within
 *	 the idle timeout keeps it; a later one is left in shared memory as the
 *	 database's retry time, at which the launcher starts a worker again.
 *	 So is "come back after ddl_notify.poll_interval" when a subscriber was
 *	 locked by another deliverer (a CALL deliver() that might be cancelled).
 * - Wake-up on commit: a transaction that recorded events, at COMMIT
 *	 (ddl_notify.c), looks at the slots under the lock.  If a worker is
 *	 starting or running in its database, it sets that slot's "wake" flag
 *	 and latch: a running worker starts a round within milliseconds.  Else
 *	 it queues the database (the shared request table, keyed by database
 *	 OID: "queued since") and sets the launcher's latch.  No catalog is read
 *	 and no other database is looked at.
 * - The exit race: a worker decides to exit, under the lock, only while its
 *	 wake flag is clear, and marks its slot EXITING in the same critical
 *	 section; a committer sets the flag, or queues the database if no slot
 *	 serves it (EXITING does not), in one critical section of the same lock.
 *	 So every commit either is seen by a round that starts after it or
 *	 queues the database for a new worker.  A worker clears its flag at the
 *	 start of each round, before the round's first snapshot; commits are
 *	 visible before their COMMIT callback runs.  The same rule covers a
 *	 worker that finds the extension missing (a probe racing CREATE
 *	 EXTENSION, whose commit queues the database too): it rechecks when its
 *	 flag was set meanwhile.
 * - Order and fairness: the launcher starts workers for queued databases
 *	 in order of their "queued since" (a due retry counts from its time).
 *	 A worker that has served for DDLN_TIME_SLICE_MS while some database
 *	 waits ends its round early, after the engine's current pass over the
 *	 subscribers (ddln_round_yield_hook; a pass gives each subscriber a
 *	 turn of a few batches), and gives its slot up: it queues its own
 *	 database again (behind those waiting) and exits.  A worker inside
 *	 one long handler call cannot give up its slot until that call returns
 *	 (ddl_notify.handler_timeout bounds it).
 * - A slow subscriber delays no other: when every worker of a database has
 *	 been in its current round for DDLN_HELP_AFTER_MS (its first round,
 *	 with cold caches, DDLN_HELP_AFTER_FIRST_MS; a timeout in the
 *	 worker wakes the launcher then) and no database waits, the launcher
 *	 starts one more worker there (again after a commit wakes a stuck
 *	 worker, once that helper is gone), in a free slot or in one that an
 *	 idle worker of another database is asked to give up; at most
 *	 ddl_notify.max_workers_per_database serve one database.  The
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
 *	 workers there die young.
 * - Stepping aside (G11): before DROP DATABASE, ALTER DATABASE RENAME or
 *	 SET TABLESPACE, and CREATE DATABASE ... TEMPLATE, the utility hook
 *	 pauses the database in shared memory, asks its workers to exit and
 *	 waits for them, so the command finds no other session in that database.
 *	 The launcher starts no worker for a paused database.  The pause ends
 *	 with the pausing transaction (or backend); a worker asked to leave has
 *	 its database queued again, served once the pause is over if the
 *	 database still exists.  DROP EXTENSION ddl_notify and ALTER EXTENSION
 *	 ddl_notify UPDATE pause and empty their own database the same way, so
 *	 that a worker's locks on the extension's tables never make the
 *	 deadlock detector cancel them.
 * - A launcher that starts (first start, or restart after it died) first
 *	 stops whatever workers an earlier launcher left, so that none runs
 *	 without a handle; a worker checks the generation of its slot before it
 *	 attaches, so a registration the old launcher left behind cannot take a
 *	 slot over.
 * - Shared state (slots, pauses, the request table) is protected by the
 *	 tranche's one LWLock, never held across anything that can block.
 *	 Latches are set outside it.  Nothing here touches ddl_notify's tables.
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
#include "commands/defrem.h"
#include "commands/extension.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timeout.h"
#include "utils/timestamp.h"

#include "ddl_notify.h"

PG_FUNCTION_INFO_V1(delivery_status);
PG_FUNCTION_INFO_V1(worker_pool);

PGDLLEXPORT void DdlnLauncherMain(Datum arg);
PGDLLEXPORT void DdlnWorkerMain(Datum arg);

#define DDLN_MAX_PAUSES			16
#define DDLN_PAUSE_MS			3600000	/* backstop of a pause */
#define DDLN_STOP_WAIT_MS		5000	/* how long the hook waits for a worker */
#define DDLN_RESTART_DELAY_MS	1000	/* before restarting a worker that died */
#define DDLN_MAX_RESTART_DELAY_MS 60000
#define DDLN_HEALTHY_RUN_MS		10000	/* a worker that ran this long was fine */
#define DDLN_SWEEP_INTERVAL_MS	1000	/* a delivering worker sweeps at most this often */
#define DDLN_MAX_DBS			4096	/* databases queued or awaiting a retry at once */

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
	bool		yield;			/* idle: leave, a stuck database needs the slot */
	bool		warm;			/* has finished a round */
	TimestampTz since;			/* serving its database since */
	TimestampTz round_since;	/* the round in progress began; 0 if none */
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
	int			nslots;
	DdlnWorkerSlot slots[FLEXIBLE_ARRAY_MEMBER];
} DdlnShared;

static DdlnShared *ddln_shared = NULL;
static HTAB *ddln_dbs = NULL;	/* DdlnDbEntry by dboid */
static DdlnWorkerSlot *my_slot = NULL;

#if PG_VERSION_NUM >= 150000
static shmem_request_hook_type prev_shmem_request_hook = NULL;
#endif
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* what this transaction's utility commands ask for at its end */
static bool launcher_rescan_at_commit = false;
static bool wake_worker_at_commit = false;
static bool request_worker_at_commit = false;
static Oid	paused_dbs[DDLN_MAX_PAUSES];
static int	npaused_dbs = 0;
static bool xact_callback_registered = false;

static Size
DdlnShmemSize(void)
{
	Size		size = add_size(offsetof(DdlnShared, slots),
								mul_size(sizeof(DdlnWorkerSlot), Max(ddln_max_workers, 1)));

	return add_size(size, hash_estimate_size(DDLN_MAX_DBS, sizeof(DdlnDbEntry)));
}

static void
DdlnShmemRequest(void)
{
#if PG_VERSION_NUM >= 150000
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
#endif
	RequestAddinShmemSpace(DdlnShmemSize());
	RequestNamedLWLockTranche("ddl_notify", 1);
}

static void
DdlnShmemStartup(void)
{
	bool		found;
	HASHCTL		info;
	Size		fixed = add_size(offsetof(DdlnShared, slots),
								 mul_size(sizeof(DdlnWorkerSlot), Max(ddln_max_workers, 1)));

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	ddln_shared = ShmemInitStruct("ddl_notify", fixed, &found);
	if (!found)
	{
		memset(ddln_shared, 0, fixed);
		ddln_shared->lock = &(GetNamedLWLockTranche("ddl_notify"))->lock;
		ddln_shared->nslots = Max(ddln_max_workers, 1);
	}
	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(Oid);
	info.entrysize = sizeof(DdlnDbEntry);
	ddln_dbs = ShmemInitHash("ddl_notify databases", DDLN_MAX_DBS, DDLN_MAX_DBS,
							 &info, HASH_ELEM | HASH_BLOBS);
	LWLockRelease(AddinShmemInitLock);
}

/* Called from _PG_init while preloading. */
void
DdlnWorkerShmemRequest(void)
{
#if PG_VERSION_NUM >= 150000
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = DdlnShmemRequest;
#else
	DdlnShmemRequest();
#endif
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = DdlnShmemStartup;
}

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

/* Is automatic delivery available in this cluster at all? */
bool
DdlnAutomaticDelivery(void)
{
	return ddln_shared != NULL && ddln_max_workers > 0;
}

/* Does this slot serve its database (a commit there needs no other worker)? */
static inline bool
DdlnSlotServes(const DdlnWorkerSlot *s, Oid dboid)
{
	return s->dboid == dboid && !s->stop &&
		(s->state == DDLN_W_STARTING || s->state == DDLN_W_RUNNING);
}

/*
 * The request-table entry of a database, created if need be; NULL (and the
 * launcher told to probe every database) if the table is full.  Caller holds
 * the lock exclusively.
 */
static DdlnDbEntry *
DdlnDbEntryFor(Oid dboid)
{
	DdlnDbEntry *e;
	bool		found;

	e = hash_search(ddln_dbs, &dboid, HASH_FIND, NULL);
	if (e != NULL)
		return e;
	if (hash_get_num_entries(ddln_dbs) >= DDLN_MAX_DBS)
	{
		ddln_shared->overflow = true;
		return NULL;
	}
	e = hash_search(ddln_dbs, &dboid, HASH_ENTER_NULL, &found);
	if (e == NULL)
	{
		ddln_shared->overflow = true;
		return NULL;
	}
	if (!found)
	{
		memset(e, 0, sizeof(*e));
		e->dboid = dboid;
	}
	return e;
}

/* Queue a database for a worker (caller holds the lock exclusively). */
static void
DdlnQueueLocked(Oid dboid, TimestampTz since, bool probe)
{
	DdlnDbEntry *e = DdlnDbEntryFor(dboid);

	if (e == NULL)
		return;
	if (e->queued_since == 0)
	{
		e->queued_since = since;
		e->probe = probe;
	}
	else
	{
		/* a commit makes a queued probe a real request */
		if (!probe)
			e->probe = false;
		if (since < e->queued_since)
			e->queued_since = since;
	}
}

/*
 * A commit in database "dboid" has work for a worker: wake the ones serving
 * it, or (if "request") queue it for the launcher when none does.  See the
 * header for why this and the worker's exit cannot miss each other.
 */
static void
DdlnWake(Oid dboid, bool request)
{
	Latch	   *latches[64];
	int			nlatches = 0;
	Latch	   *launcher = NULL;
	bool		served = false;
	bool		race = false;

	if (ddln_shared == NULL || ddln_max_workers == 0)
		return;
	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < ddln_shared->nslots; i++)
	{
		DdlnWorkerSlot *s = &ddln_shared->slots[i];

		if (!DdlnSlotServes(s, dboid))
			continue;
		served = true;
		s->wake = true;
		if (s->latch != NULL && nlatches < (int) lengthof(latches))
			latches[nlatches++] = s->latch;
	}
	if (!served && request)
	{
		for (int i = 0; i < ddln_shared->nslots; i++)
			if (ddln_shared->slots[i].dboid == dboid &&
				ddln_shared->slots[i].state == DDLN_W_EXITING)
				race = true;
		if (race)
			ddln_shared->exit_races++;
		DdlnQueueLocked(dboid, GetCurrentTimestamp(), false);
		launcher = ddln_shared->launcher_latch;
	}
	LWLockRelease(ddln_shared->lock);

	for (int i = 0; i < nlatches; i++)
		SetLatch(latches[i]);
	if (launcher)
		SetLatch(launcher);
	if (race)
		ereport(DEBUG1,
				(errmsg_internal("ddl_notify: a commit found the worker of database %u exiting; the database is queued for a new one",
								 dboid)));
}

/* Wake (or get) a worker for a database: at COMMIT of a DDL transaction. */
void
DdlnWakeDatabaseWorker(Oid dboid)
{
	DdlnWake(dboid, true);
}

/*
 * A deliverer that is not a pool worker (CALL ddl_notify.deliver()) left a
 * subscriber in backoff: make sure a worker comes back for it at "at",
 * unless one serves the database now (it knows).
 */
void
DdlnRequestRetry(Oid dboid, TimestampTz at)
{
	Latch	   *launcher = NULL;
	bool		served = false;
	DdlnDbEntry *e;

	if (ddln_shared == NULL || ddln_max_workers == 0 || at == 0)
		return;
	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < ddln_shared->nslots; i++)
		if (DdlnSlotServes(&ddln_shared->slots[i], dboid))
			served = true;
	if (!served && (e = DdlnDbEntryFor(dboid)) != NULL)
	{
		if (e->retry_at == 0 || at < e->retry_at)
			e->retry_at = at;
		launcher = ddln_shared->launcher_latch;
	}
	LWLockRelease(ddln_shared->lock);
	if (launcher)
		SetLatch(launcher);
}

/* Ask the launcher to look for databases it has not probed yet. */
void
DdlnNotifyLauncher(void)
{
	Latch	   *launcher;

	if (ddln_shared == NULL)
		return;
	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	ddln_shared->rescan = true;
	launcher = ddln_shared->launcher_latch;
	LWLockRelease(ddln_shared->lock);
	if (launcher)
		SetLatch(launcher);
}

static bool
DdlnIsPaused(Oid dboid, TimestampTz now)
{
	for (int i = 0; i < DDLN_MAX_PAUSES; i++)
	{
		DdlnPause  *p = &ddln_shared->pauses[i];

		if (p->dboid == dboid && p->until > now && BackendPidGetProc(p->pid) != NULL)
			return true;
	}
	return false;
}

/*
 * Pause a database until this transaction ends and make its worker exit;
 * wait until it has.  Returns false if the worker did not exit in time.
 */
bool
DdlnStopDatabaseWorker(Oid dboid)
{
	TimestampTz now = GetCurrentTimestamp();
	TimestampTz give_up = TimestampTzPlusMilliseconds(now, DDLN_STOP_WAIT_MS);
	int			victim = -1;

	if (ddln_shared == NULL || !OidIsValid(dboid))
		return true;

	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < DDLN_MAX_PAUSES && victim < 0; i++)
	{
		DdlnPause  *p = &ddln_shared->pauses[i];

		if (!OidIsValid(p->dboid) || p->until <= now || BackendPidGetProc(p->pid) == NULL ||
			(p->dboid == dboid && p->pid == MyProcPid))
			victim = i;
	}
	if (victim < 0)
		victim = 0;				/* all taken by live backends: the oldest goes */
	ddln_shared->pauses[victim].dboid = dboid;
	ddln_shared->pauses[victim].pid = MyProcPid;
	ddln_shared->pauses[victim].until = TimestampTzPlusMilliseconds(now, DDLN_PAUSE_MS);
	LWLockRelease(ddln_shared->lock);
	if (npaused_dbs < DDLN_MAX_PAUSES)
		paused_dbs[npaused_dbs++] = dboid;

	for (;;)
	{
		pid_t		pid = 0;

		LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
		for (int i = 0; i < ddln_shared->nslots; i++)
		{
			DdlnWorkerSlot *s = &ddln_shared->slots[i];

			if (s->state != DDLN_W_FREE && s->dboid == dboid && s->pid != 0)
			{
				s->stop = true;
				pid = s->pid;
			}
		}
		LWLockRelease(ddln_shared->lock);

		if (pid == 0)
			return true;
		kill(pid, SIGTERM);
		if (GetCurrentTimestamp() >= give_up)
			return false;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 10L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/* At the end of the transaction: lift this backend's pauses. */
static void
DdlnLiftPauses(void)
{
	Latch	   *launcher;

	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < DDLN_MAX_PAUSES; i++)
	{
		if (ddln_shared->pauses[i].pid == MyProcPid)
			memset(&ddln_shared->pauses[i], 0, sizeof(DdlnPause));
	}
	launcher = ddln_shared->launcher_latch;
	LWLockRelease(ddln_shared->lock);
	npaused_dbs = 0;
	if (launcher)
		SetLatch(launcher);
}

static void
DdlnWorkerXactCallback(XactEvent event, void *arg)
{
	bool		ending = (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
						  event == XACT_EVENT_PARALLEL_ABORT || event == XACT_EVENT_PREPARE);

	if (event == XACT_EVENT_COMMIT && launcher_rescan_at_commit)
		DdlnNotifyLauncher();
	if (event == XACT_EVENT_COMMIT && (wake_worker_at_commit || request_worker_at_commit))
		DdlnWake(MyDatabaseId, request_worker_at_commit);
	if (ending && npaused_dbs > 0)
		DdlnLiftPauses();
	if (ending)
	{
		launcher_rescan_at_commit = false;
		wake_worker_at_commit = false;
		request_worker_at_commit = false;
	}
}

static void
DdlnRegisterWorkerCallback(void)
{
	if (!xact_callback_registered)
	{
		RegisterXactCallback(DdlnWorkerXactCallback, NULL);
		xact_callback_registered = true;
	}
}

static void
DdlnRescanAtCommit(void)
{
	DdlnRegisterWorkerCallback();
	launcher_rescan_at_commit = true;
}

/*
 * At commit, get this database a worker (wake it, or queue the database):
 * after CREATE EXTENSION, and after skip(), which may unblock a subscriber
 * whose retry is far away.
 */
void
DdlnWakeWorkerAtCommit(void)
{
	if (ddln_shared == NULL)
		return;
	DdlnRegisterWorkerCallback();
	request_worker_at_commit = true;
}

/*
 * DROP EXTENSION ddl_notify and ALTER EXTENSION ddl_notify UPDATE take
 * AccessExclusiveLock on the extension's tables, in their own order, while
 * a worker of this database may hold locks on the same tables in another:
 * the deadlock detector could then cancel the user's command.  The command
 * wins instead: this database's workers are paused until this transaction
 * ends and stopped (their delivery rolls back: G3), as for DROP DATABASE.
 * Not from a worker itself (a handler running the command): it would stop
 * itself.
 */
static void
DdlnStepAsideForExtension(void)
{
	if (!IsBackgroundWorker)
		(void) DdlnStopDatabaseWorker(MyDatabaseId);
}

/*
 * Before a utility command runs: step aside for commands that need a
 * database without other sessions (G11): DROP DATABASE, ALTER DATABASE
 * RENAME and SET TABLESPACE, CREATE DATABASE from a template; the pause ends
 * with this transaction.  And note the commands after which the launcher
 * should look again, or the worker should wake.
 */
void
DdlnBeforeUtility(Node *parsetree)
{
	const char *dbname = NULL;

	if (ddln_shared == NULL || parsetree == NULL)
		return;

	switch (nodeTag(parsetree))
	{
		case T_DropdbStmt:
			dbname = ((DropdbStmt *) parsetree)->dbname;
			break;
		case T_RenameStmt:
			if (((RenameStmt *) parsetree)->renameType == OBJECT_DATABASE)
				dbname = ((RenameStmt *) parsetree)->subname;
			break;
		case T_AlterDatabaseStmt:
			{
				/* only SET TABLESPACE needs the database to itself */
				ListCell   *lc;

				foreach(lc, ((AlterDatabaseStmt *) parsetree)->options)
				{
					if (strcmp(((DefElem *) lfirst(lc))->defname, "tablespace") == 0)
						dbname = ((AlterDatabaseStmt *) parsetree)->dbname;
				}
				break;
			}
		case T_CreatedbStmt:
			{
				ListCell   *lc;

				foreach(lc, ((CreatedbStmt *) parsetree)->options)
				{
					DefElem    *opt = (DefElem *) lfirst(lc);

					if (strcmp(opt->defname, "template") == 0 && opt->arg)
						dbname = defGetString(opt);
				}
				if (dbname == NULL)
					dbname = "template1";
				DdlnRescanAtCommit();
				break;
			}
		case T_CreateExtensionStmt:
			if (strcmp(((CreateExtensionStmt *) parsetree)->extname, DDLN_EXTENSION_NAME) == 0)
				DdlnWakeWorkerAtCommit();
			break;
		case T_DropStmt:
			if (((DropStmt *) parsetree)->removeType == OBJECT_EXTENSION)
			{
				ListCell   *lc;

				/* the worker finds the extension gone at once, not at its next poll */
				foreach(lc, ((DropStmt *) parsetree)->objects)
				{
					if (IsA(lfirst(lc), String) &&
						strcmp(strVal(lfirst(lc)), DDLN_EXTENSION_NAME) == 0)
					{
						DdlnRegisterWorkerCallback();
						wake_worker_at_commit = true;
						DdlnStepAsideForExtension();
					}
				}
			}
			break;
		case T_AlterExtensionStmt:
			if (strcmp(((AlterExtensionStmt *) parsetree)->extname, DDLN_EXTENSION_NAME) == 0)
				DdlnStepAsideForExtension();
			break;
		default:
			break;
	}

	if (dbname != NULL)
	{
		Oid			dboid = get_database_oid(dbname, true);

		if (OidIsValid(dboid) && dboid != MyDatabaseId)
			(void) DdlnStopDatabaseWorker(dboid);
	}
}

/*
 * delivery_status(): how events reach subscribers in this database, for the
 * status view.
 */
Datum
delivery_status(PG_FUNCTION_ARGS)
{
	char	   *status = NULL;

	if (ddln_shared == NULL)
		status = "manual: ddl_notify is not in shared_preload_libraries; run CALL ddl_notify.deliver()";
	else if (ddln_max_workers == 0)
		status = "manual: ddl_notify.max_workers is 0; run CALL ddl_notify.deliver()";
	else
	{
		StringInfoData pids;
		int			nrunning = 0;
		bool		starting = false;
		TimestampTz queued = 0;
		TimestampTz retry = 0;
		bool		exhausted;
		DdlnDbEntry *e;

		initStringInfo(&pids);
		LWLockAcquire(ddln_shared->lock, LW_SHARED);
		for (int i = 0; i < ddln_shared->nslots; i++)
		{
			DdlnWorkerSlot *s = &ddln_shared->slots[i];

			if (s->dboid != MyDatabaseId || s->stop)
				continue;
			if (s->state == DDLN_W_RUNNING)
				appendStringInfo(&pids, "%s%d", nrunning++ > 0 ? ", " : "", (int) s->pid);
			else if (s->state == DDLN_W_STARTING)
				starting = true;
		}
		e = hash_search(ddln_dbs, &MyDatabaseId, HASH_FIND, NULL);
		if (e != NULL)
		{
			queued = e->queued_since;
			retry = e->retry_at;
		}
		exhausted = ddln_shared->nwaiting > 0;
		LWLockRelease(ddln_shared->lock);

		if (nrunning == 1)
			status = psprintf("automatic: worker pid %s", pids.data);
		else if (nrunning > 1)
			status = psprintf("automatic: workers pid %s", pids.data);
		else if (starting)
			status = "automatic: worker starting";
		else if (queued != 0 && exhausted)
			status = psprintf("waiting for a worker slot since %s: all %d workers are busy; raise ddl_notify.max_workers or max_worker_processes",
							  timestamptz_to_str(queued), ddln_max_workers);
		else if (queued != 0)
			status = psprintf("automatic: queued for a worker since %s",
							  timestamptz_to_str(queued));
		else if (retry != 0)
			status = psprintf("automatic: idle, no worker; one comes back at %s for a retry",
							  timestamptz_to_str(retry));
		else
			status = "automatic: idle, no worker; the next commit starts one";
	}
	PG_RETURN_TEXT_P(cstring_to_text(status));
}

/*
 * worker_pool(): the pool's slots and the queued databases, cluster-wide:
 * one row per worker (state starting, delivering, idle or exiting) and one
 * per database waiting for one (queued) or for a retry time (retry).
 */
Datum
worker_pool(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	typedef struct
	{
		Oid			dboid;
		int			pid;
		const char *state;
		TimestampTz since;
		int64		delivered;
		TimestampTz round_since;
	}			Row;
	Row		   *rows;
	int			nrows = 0;
	int			maxrows;

	InitMaterializedSRF(fcinfo, 0);
	if (ddln_shared == NULL)
		PG_RETURN_VOID();

	LWLockAcquire(ddln_shared->lock, LW_SHARED);
	maxrows = ddln_shared->nslots + (int) hash_get_num_entries(ddln_dbs) + 1;
	rows = palloc0(sizeof(Row) * maxrows);
	for (int i = 0; i < ddln_shared->nslots; i++)
	{
		DdlnWorkerSlot *s = &ddln_shared->slots[i];
		Row		   *r = &rows[nrows];

		if (s->state == DDLN_W_FREE || s->state == DDLN_W_NO_EXTENSION)
			continue;
		r->dboid = s->dboid;
		r->pid = (int) s->pid;
		r->state = s->stop || s->state == DDLN_W_EXITING ? "exiting" :
			s->state == DDLN_W_STARTING ? "starting" :
			s->round_since != 0 ? "delivering" : "idle";
		r->since = s->since;
		r->delivered = s->delivered;
		r->round_since = s->round_since;
		nrows++;
	}
	{
		HASH_SEQ_STATUS seq;
		DdlnDbEntry *e;

		hash_seq_init(&seq, ddln_dbs);
		while ((e = hash_seq_search(&seq)) != NULL)
		{
			Row		   *r = &rows[nrows];

			if (nrows >= maxrows - 1)
			{
				hash_seq_term(&seq);
				break;
			}
			if (e->queued_since != 0)
			{
				r->state = e->probe ? "queued (probe)" : "queued";
				r->since = e->queued_since;
			}
			else if (e->retry_at != 0)
			{
				r->state = "retry";
				r->since = e->retry_at;
			}
			else
				continue;
			r->dboid = e->dboid;
			nrows++;
		}
	}
	LWLockRelease(ddln_shared->lock);

	for (int i = 0; i < nrows; i++)
	{
		Datum		values[7];
		bool		nulls[7] = {0};
		char	   *name = get_database_name(rows[i].dboid);

		values[0] = ObjectIdGetDatum(rows[i].dboid);
		if (name)
			values[1] = DirectFunctionCall1(namein, CStringGetDatum(name));
		else
			nulls[1] = true;
		values[2] = Int32GetDatum(rows[i].pid);
		nulls[2] = (rows[i].pid == 0);
		values[3] = CStringGetTextDatum(rows[i].state);
		values[4] = TimestampTzGetDatum(rows[i].since);
		nulls[4] = (rows[i].since == 0);
		values[5] = Int64GetDatum(rows[i].delivered);
		nulls[5] = (rows[i].pid == 0 && strncmp(rows[i].state, "queued", 6) == 0) ||
			strcmp(rows[i].state, "retry") == 0;
		values[6] = TimestampTzGetDatum(rows[i].round_since);
		nulls[6] = (rows[i].round_since == 0);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_VOID();
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
#if PG_VERSION_NUM >= 150000
	if (db->datconnlimit == -2)	/* DROP DATABASE in progress */
		return false;
#endif
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
				if (s->state == DDLN_W_RUNNING &&
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

/* Is some slot of this database not stuck in a long round (or starting)? */
static bool
DdlnDatabaseHasFreshWorker(Oid dboid, TimestampTz now)
{
	for (int i = 0; i < ddln_shared->nslots; i++)
	{
		DdlnWorkerSlot *s = &ddln_shared->slots[i];

		if (!DdlnSlotServes(s, dboid))
			continue;
		if (s->state == DDLN_W_STARTING || s->round_since == 0 ||
			!TimestampDifferenceExceeds(s->round_since, now, DdlnHelpAfterMs(s)))
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

		if (s->state != DDLN_W_RUNNING || s->stop || s->round_since == 0)
			continue;
		if (!TimestampDifferenceExceeds(s->round_since, now, DdlnHelpAfterMs(s)))
		{
			TimestampDifference(now, TimestampTzPlusMilliseconds(s->round_since, DdlnHelpAfterMs(s)),
								&secs, &usecs);
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

/*
 * One scheduling pass: due retries become requests, queued databases get
 * workers in order of waiting time while slots are free, idle workers are
 * told when others wait, stuck databases get help.  Returns how long the
 * launcher may sleep.
 */
static long
DdlnLauncherSchedule(TimestampTz now, TimestampTz *logged)
{
	long		sleep_ms = DDLN_LAUNCHER_POLL_MS;
	DdlnCandidate *cands;
	int			ncands = 0;
	int			maxcands;
	int			nfree = 0;
	int			started = 0;
	bool		bgw_short = false;
	HASH_SEQ_STATUS seq;
	DdlnDbEntry *e;
	Latch	   *idle[64];
	int			nidle = 0;

	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	maxcands = (int) hash_get_num_entries(ddln_dbs) + 1;
	cands = palloc(sizeof(DdlnCandidate) * maxcands);
	for (int i = 0; i < ddln_shared->nslots; i++)
		if (ddln_shared->slots[i].state == DDLN_W_FREE && handles[i] == NULL)
			nfree++;
	hash_seq_init(&seq, ddln_dbs);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		bool		served = false;

		for (int i = 0; i < ddln_shared->nslots; i++)
			served |= DdlnSlotServes(&ddln_shared->slots[i], e->dboid);

		if (e->retry_at != 0 && e->retry_at <= now)
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
			long		secs;
			int			usecs;

			if (e->not_before > now)
			{
				TimestampDifference(now, e->not_before, &secs, &usecs);
				sleep_ms = Min(sleep_ms, secs * 1000 + usecs / 1000 + 1);
				continue;
			}
			if (DdlnIsPaused(e->dboid, now))
			{
				sleep_ms = Min(sleep_ms, 500);
				continue;
			}
			cands[ncands].dboid = e->dboid;
			cands[ncands].since = e->queued_since;
			ncands++;
		}
		else if (e->retry_at != 0)
		{
			long		secs;
			int			usecs;

			TimestampDifference(now, e->retry_at, &secs, &usecs);
			sleep_ms = Min(sleep_ms, secs * 1000 + usecs / 1000 + 1);
		}
		else if (!served &&
				 (e->died_at == 0 ||
				  TimestampDifferenceExceeds(e->died_at, now, DDLN_MAX_RESTART_DELAY_MS + DDLN_HEALTHY_RUN_MS)))
		{
			/*
			 * Nothing asked of it: forget it (kept a while after a worker
			 * died, so that the restart delay doubles if the next dies too).
			 */
			(void) hash_search(ddln_dbs, &e->dboid, HASH_REMOVE, NULL);
		}
	}
	LWLockRelease(ddln_shared->lock);

	qsort(cands, ncands, sizeof(DdlnCandidate), DdlnCompareCandidates);
	for (int c = 0; c < ncands && nfree > 0 && !bgw_short; c++)
	{
		DdlnStartResult r;

		if (!DdlnDatabaseExists(cands[c].dboid))
		{
			/* dropped (or made a template) while queued */
			LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
			(void) hash_search(ddln_dbs, &cands[c].dboid, HASH_REMOVE, NULL);
			LWLockRelease(ddln_shared->lock);
			started++;			/* not waiting any more */
			continue;
		}
		r = DdlnStartWorker(cands[c].dboid);
		if (r == DDLN_NO_SLOT)
			break;
		if (r == DDLN_NO_BGWORKER)
		{
			bgw_short = true;
			sleep_ms = Min(sleep_ms, DDLN_BGW_RETRY_MS);
			break;
		}
		nfree--;
		started++;
		LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
		e = hash_search(ddln_dbs, &cands[c].dboid, HASH_FIND, NULL);
		if (e != NULL)
		{
			e->queued_since = 0;
			e->probe = false;
		}
		LWLockRelease(ddln_shared->lock);
	}

	/* databases still waiting: idle workers make room at once */
	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	ddln_shared->nwaiting = ncands - started;
	if (ddln_shared->nwaiting > 0)
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

	/* said at most once a minute: with many tenants a full pool is normal */
	if (ncands > started &&
		(*logged == 0 || TimestampDifferenceExceeds(*logged, now, 60000)))
	{
		*logged = now;
		ereport(LOG,
				(bgw_short ?
				 errmsg("ddl_notify: no free background worker slot; delivery waits in %d database(s)",
						ncands - started) :
				 errmsg("ddl_notify: no free worker slot; delivery waits in %d database(s)",
						ncands - started),
				 errhint("Raise ddl_notify.max_workers (now %d) or max_worker_processes.",
						 ddln_max_workers)));
	}

	if (ncands == started)
		DdlnLauncherHelp(now, nfree, &sleep_ms);

	pfree(cands);
	return Max(sleep_ms, 1);
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
		sleep_ms = DdlnLauncherSchedule(now, &logged);
		if (scan_again)
			sleep_ms = Min(sleep_ms, DDLN_BGW_RETRY_MS);

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

static bool
DdlnExtensionPresent(void)
{
	bool		present;

	StartTransactionCommand();
	present = OidIsValid(get_extension_oid(DDLN_EXTENSION_NAME, true));
	CommitTransactionCommand();
	return present;
}

/*
 * Leave the pool: mark the slot EXITING (no committer counts on it from now
 * on) unless a commit came since the last round began; with "requeue" queue
 * the database again (a worker giving its slot up with work left), else
 * leave a retry time if there is one.  Returns false, without exiting, when
 * a commit came: the caller runs a round.
 */
static bool
DdlnWorkerLeave(bool requeue, TimestampTz retry_at, const char *why)
{
	Oid			dboid;

	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	if (my_slot->wake && !my_slot->stop)
	{
		LWLockRelease(ddln_shared->lock);
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
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
	}
}

void
DdlnWorkerMain(Datum arg)
{
	int			slot = DatumGetInt32(arg);
	uint64		generation;
	TimestampTz last_sweep = 0;
	TimestampTz last_busy;
	bool		sweep;
	TimestampTz round_start = 0;
	bool		idle_round = true;	/* the last round had nothing to deliver */
	Oid			dboid;
	MemoryContext loopcxt;
	char	   *dbname;
	TimeoutId	long_round_timeout;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

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

	loopcxt = AllocSetContextCreate(TopMemoryContext, "ddl_notify worker loop",
									ALLOCSET_DEFAULT_SIZES);
	long_round_timeout = RegisterTimeout(USER_TIMEOUT, DdlnRoundIsLong);
	ddln_round_yield_hook = DdlnSliceOver;
	last_busy = GetCurrentTimestamp();
	for (;;)
	{
		DdlnRoundResult result;
		bool		stop;
		bool		others_wait;
		bool		was_starting;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}

		/* a round begins: commits from now on set the flag again */
		round_start = GetCurrentTimestamp();
		LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
		stop = my_slot->stop;
		my_slot->wake = false;
		my_slot->helped = false;
		my_slot->round_since = round_start;
		was_starting = (my_slot->state == DDLN_W_STARTING);
		LWLockRelease(ddln_shared->lock);
		if (stop)
			break;

		MemoryContextReset(loopcxt);
		MemoryContextSwitchTo(loopcxt);

		if (!DdlnExtensionPresent())
		{
			LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
			if (my_slot->wake && !my_slot->stop)
			{
				/* a commit meanwhile (CREATE EXTENSION?): look again */
				LWLockRelease(ddln_shared->lock);
				continue;
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

		/*
		 * Sweep (a scan of the whole queue) at most once a second while
		 * there is work, and whenever a round comes with nothing to deliver
		 * (a poll, a wake-up after unsubscribe()): each DDL commit wakes the
		 * worker, and sweeping after every one of them cost more than
		 * delivering its events.
		 */
		sweep = idle_round || TimestampDifferenceExceeds(last_sweep, GetCurrentTimestamp(),
														 DDLN_SWEEP_INTERVAL_MS);
		pgstat_report_activity(STATE_RUNNING, "ddl_notify worker: delivery round");
		/* the launcher learns of a long round without polling for it */
		if (ddln_max_workers_per_database > 1)
			enable_timeout_after(long_round_timeout, DdlnHelpAfterMs(my_slot));
		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		/* the round's memory must outlive its transactions (deliver.c) */
		MemoryContextSwitchTo(loopcxt);
		PortalContext = loopcxt;
		DdlnDeliverRound(&result, sweep);
		CommitTransactionCommand();
		PortalContext = NULL;
		disable_timeout(long_round_timeout, false);
		if (sweep)
			last_sweep = GetCurrentTimestamp();
		/* the tables' counters (n_tup_upd, n_tup_del) drive autovacuum */
		pgstat_report_stat(false);

		LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
		my_slot->round_since = 0;
		my_slot->warm = true;
		my_slot->last_round = GetCurrentTimestamp();
		my_slot->delivered += result.delivered;
		others_wait = ddln_shared->nwaiting > 0;
		LWLockRelease(ddln_shared->lock);

		idle_round = (result.handled == 0);
		if (result.handled > 0 || result.failures > 0)
			last_busy = GetCurrentTimestamp();

		if (result.more)
		{
			/* fairness: served a slice while others wait: give the slot up */
			if (others_wait &&
				TimestampDifferenceExceeds(my_slot->since, GetCurrentTimestamp(), DDLN_TIME_SLICE_MS))
				(void) DdlnWorkerLeave(true, 0, "time slice over, other databases wait");
			continue;
		}

		/*
		 * Delivered something: commits may be coming as a stream (a
		 * migration, a tool creating objects one by one).  Let them gather
		 * until ddl_notify.stream_interval after the start of this round, so
		 * that one round serves several commits instead of one each: each
		 * round costs the worker a few transactions, and took CPU from the
		 * sessions running the DDL.  A commit that comes alone, after a
		 * quiet interval, is delivered at once; under a stream a handler
		 * starts at most this interval (plus a round) after its event's
		 * commit.
		 */
		if (result.handled > 0 && ddln_stream_interval > 0)
		{
			long		waited_ms = 0;
			long		secs;
			int			usecs;

			TimestampDifference(round_start, GetCurrentTimestamp(), &secs, &usecs);
			waited_ms = secs * 1000 + usecs / 1000;
			if (waited_ms < ddln_stream_interval)
				(void) WaitLatch(MyLatch, WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
								 ddln_stream_interval - waited_ms,
								 PG_WAIT_EXTENSION);
		}

		pgstat_report_activity(STATE_IDLE, "ddl_notify worker: idle");
		if (!DdlnWorkerWait(result.next_retry, last_busy, result.busy > 0))
			break;
	}
	proc_exit(0);
}
