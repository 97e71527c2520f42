/*-------------------------------------------------------------------------
 *
 * worker.c
 *	  The launcher and the per-database delivery workers.  They schedule;
 *	  the engine (deliver.c) delivers.
 *
 * Design:
 * - One launcher, a static background worker connected to no database,
 *	 started once recovery has finished (so nothing runs on a hot standby and
 *	 everything starts after promotion, G9).  It lists pg_database and keeps
 *	 one delivery worker per database that has the extension.  A database it
 *	 has not seen yet is probed by starting a worker there: the worker exits
 *	 at once, saying so in shared memory, if the extension is not installed.
 *	 CREATE EXTENSION ddl_notify and CREATE DATABASE ask for a new look at
 *	 commit; DROP EXTENSION makes the worker find the extension gone and exit.
 * - A worker loops: one delivery round (DdlnDeliverRound), then sleep until
 *	 woken; under a stream of commits it starts a round at most every
 *	 ddl_notify.stream_interval, so that each round serves several of them,
 *	 while a commit after a quiet interval is delivered at once.  It sweeps
 *	 rows nobody needs at most once a second while it delivers, and in any
 *	 round that had nothing to deliver.  A transaction that recorded events
 *	 sets the worker's latch at COMMIT (ddl_notify.c), so delivery starts
 *	 within milliseconds; the poll interval and the earliest retry time of a
 *	 failing subscriber bound the sleep otherwise.
 * - Stepping aside (G11): before DROP DATABASE, ALTER DATABASE RENAME or
 *	 SET TABLESPACE, and CREATE DATABASE ... TEMPLATE, the utility hook
 *	 pauses the database in shared memory, asks its worker to exit and waits
 *	 for it, so the command finds no other session in that database.  The
 *	 pause ends with the pausing transaction (or backend); if the database is
 *	 still there, its worker comes back at once.
 * - A launcher that starts (first start, or restart after it died) first
 *	 stops whatever workers an earlier launcher left, so that no database
 *	 ever has two; a worker checks the generation of its slot before it
 *	 attaches, so a registration the old launcher left behind cannot take a
 *	 slot over.
 * - Shared state is protected by the tranche's one LWLock.  Latches are set
 *	 outside it when possible.  Nothing here touches ddl_notify's tables.
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
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "ddl_notify.h"

PG_FUNCTION_INFO_V1(delivery_status);

PGDLLEXPORT void DdlnLauncherMain(Datum arg);
PGDLLEXPORT void DdlnWorkerMain(Datum arg);

#define DDLN_MAX_PAUSES			16
#define DDLN_PAUSE_MS			3600000	/* backstop of a pause */
#define DDLN_STOP_WAIT_MS		5000	/* how long the hook waits for a worker */
#define DDLN_RESTART_DELAY_MS	1000	/* before restarting a worker that died */
#define DDLN_MAX_RESTART_DELAY_MS 60000
#define DDLN_HEALTHY_RUN_MS		10000	/* a worker that ran this long was fine */
#define DDLN_SWEEP_INTERVAL_MS	1000	/* a delivering worker sweeps at most this often */

typedef enum DdlnWorkerState
{
	DDLN_W_FREE = 0,
	DDLN_W_STARTING,			/* registered, not yet attached */
	DDLN_W_RUNNING,				/* attached, extension present */
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
	TimestampTz last_round;
	int64		delivered;		/* handler calls committed by this worker */
} DdlnWorkerSlot;

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
	bool		rescan;			/* look at every database again */
	bool		slots_exhausted;	/* a database waits for a worker slot */
	uint64		next_generation;
	DdlnPause	pauses[DDLN_MAX_PAUSES];
	int			nslots;
	DdlnWorkerSlot slots[FLEXIBLE_ARRAY_MEMBER];
} DdlnShared;

static DdlnShared *ddln_shared = NULL;
static DdlnWorkerSlot *my_slot = NULL;

#if PG_VERSION_NUM >= 150000
static shmem_request_hook_type prev_shmem_request_hook = NULL;
#endif
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* what this transaction's utility commands ask for at its end */
static bool launcher_rescan_at_commit = false;
static bool wake_worker_at_commit = false;
static Oid	paused_dbs[DDLN_MAX_PAUSES];
static int	npaused_dbs = 0;
static bool xact_callback_registered = false;

static Size
DdlnShmemSize(void)
{
	return add_size(offsetof(DdlnShared, slots),
					mul_size(sizeof(DdlnWorkerSlot), Max(ddln_max_workers, 1)));
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

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	ddln_shared = ShmemInitStruct("ddl_notify", DdlnShmemSize(), &found);
	if (!found)
	{
		memset(ddln_shared, 0, DdlnShmemSize());
		ddln_shared->lock = &(GetNamedLWLockTranche("ddl_notify"))->lock;
		ddln_shared->nslots = Max(ddln_max_workers, 1);
	}
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

/* Wake the delivery worker of a database (at COMMIT of a DDL transaction). */
void
DdlnWakeDatabaseWorker(Oid dboid)
{
	Latch	   *latch = NULL;
	Latch	   *launcher = NULL;

	if (ddln_shared == NULL)
		return;
	LWLockAcquire(ddln_shared->lock, LW_SHARED);
	for (int i = 0; i < ddln_shared->nslots; i++)
	{
		DdlnWorkerSlot *s = &ddln_shared->slots[i];

		if (s->state == DDLN_W_RUNNING && s->dboid == dboid)
		{
			latch = s->latch;
			break;
		}
	}
	if (latch == NULL)
		launcher = ddln_shared->launcher_latch;
	LWLockRelease(ddln_shared->lock);

	if (latch)
		SetLatch(latch);
	else if (launcher)
		SetLatch(launcher);
}

/* Ask the launcher to look at every database again. */
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
	if (event == XACT_EVENT_COMMIT && wake_worker_at_commit)
		DdlnWakeDatabaseWorker(MyDatabaseId);
	if (ending && npaused_dbs > 0)
		DdlnLiftPauses();
	if (ending)
	{
		launcher_rescan_at_commit = false;
		wake_worker_at_commit = false;
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
				DdlnRescanAtCommit();
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
					}
				}
			}
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
	const char *status;

	if (ddln_shared == NULL)
		status = "manual: ddl_notify is not in shared_preload_libraries; run CALL ddl_notify.deliver()";
	else if (ddln_max_workers == 0)
		status = "manual: ddl_notify.max_workers is 0; run CALL ddl_notify.deliver()";
	else
	{
		status = NULL;
		LWLockAcquire(ddln_shared->lock, LW_SHARED);
		for (int i = 0; i < ddln_shared->nslots; i++)
		{
			DdlnWorkerSlot *s = &ddln_shared->slots[i];

			if (s->dboid == MyDatabaseId && s->state == DDLN_W_RUNNING)
				status = psprintf("automatic: worker pid %d", (int) s->pid);
			else if (s->dboid == MyDatabaseId && s->state == DDLN_W_STARTING && status == NULL)
				status = "automatic: worker starting";
		}
		if (status == NULL)
			status = ddln_shared->slots_exhausted ?
				"waiting for a worker slot: raise ddl_notify.max_workers or max_worker_processes" :
				"automatic: no worker yet";
		LWLockRelease(ddln_shared->lock);
	}
	PG_RETURN_TEXT_P(cstring_to_text(status));
}

/* ---------------------------------------------------------------------
 * The launcher
 * ---------------------------------------------------------------------
 */

typedef enum DdlnDbState
{
	DDLN_DB_UNKNOWN,			/* not probed yet */
	DDLN_DB_ACTIVE,				/* has the extension: keep a worker */
	DDLN_DB_NO_EXTENSION		/* has no extension: leave alone */
} DdlnDbState;

typedef struct DdlnLauncherDb
{
	Oid			dboid;
	DdlnDbState state;
	BackgroundWorkerHandle *handle;
	int			slot;			/* index in shared slots, -1 if none */
	TimestampTz not_before;		/* restart delay after a worker died */
	TimestampTz started_at;		/* when the current worker was started */
	int			restart_delay_ms;	/* doubles while workers die young */
	bool		seen;			/* still in pg_database */
} DdlnLauncherDb;

static DdlnLauncherDb *ldbs = NULL;
static int	nldbs = 0;
static int	maxldbs = 0;

static DdlnLauncherDb *
DdlnLauncherFind(Oid dboid, bool create)
{
	for (int i = 0; i < nldbs; i++)
		if (ldbs[i].dboid == dboid)
			return &ldbs[i];
	if (!create)
		return NULL;
	if (nldbs == maxldbs)
	{
		maxldbs = Max(16, maxldbs * 2);
		ldbs = ldbs ? repalloc(ldbs, sizeof(DdlnLauncherDb) * maxldbs)
			: MemoryContextAlloc(TopMemoryContext, sizeof(DdlnLauncherDb) * maxldbs);
	}
	memset(&ldbs[nldbs], 0, sizeof(DdlnLauncherDb));
	ldbs[nldbs].dboid = dboid;
	ldbs[nldbs].state = DDLN_DB_UNKNOWN;
	ldbs[nldbs].slot = -1;
	return &ldbs[nldbs++];
}

/* Refresh the list of databases that accept connections. */
static void
DdlnLauncherScan(bool forget_no_extension)
{
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tup;

	for (int i = 0; i < nldbs; i++)
		ldbs[i].seen = false;

	StartTransactionCommand();
	(void) GetTransactionSnapshot();
	rel = table_open(DatabaseRelationId, AccessShareLock);
	scan = table_beginscan_catalog(rel, 0, NULL);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Form_pg_database db = (Form_pg_database) GETSTRUCT(tup);
		DdlnLauncherDb *ldb;

		if (!db->datallowconn || db->datistemplate)
			continue;
#if PG_VERSION_NUM >= 150000
		if (db->datconnlimit == -2)	/* DROP DATABASE in progress */
			continue;
#endif
		ldb = DdlnLauncherFind(db->oid, true);
		ldb->seen = true;
		if (forget_no_extension && ldb->state == DDLN_DB_NO_EXTENSION)
			ldb->state = DDLN_DB_UNKNOWN;
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	CommitTransactionCommand();

	/* forget databases that are gone (their workers exit by themselves) */
	for (int i = 0; i < nldbs;)
	{
		if (!ldbs[i].seen && ldbs[i].handle == NULL)
			ldbs[i] = ldbs[--nldbs];
		else
			i++;
	}
}

static int
DdlnClaimSlot(Oid dboid)
{
	int			found = -1;

	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < ddln_shared->nslots; i++)
	{
		if (ddln_shared->slots[i].state == DDLN_W_FREE)
		{
			DdlnWorkerSlot *s = &ddln_shared->slots[i];

			memset(s, 0, sizeof(*s));
			s->state = DDLN_W_STARTING;
			s->dboid = dboid;
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

static bool
DdlnStartWorker(DdlnLauncherDb *ldb)
{
	BackgroundWorker worker;
	int			slot = DdlnClaimSlot(ldb->dboid);

	if (slot < 0)
		return false;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "ddl_notify");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "DdlnWorkerMain");
	snprintf(worker.bgw_name, BGW_MAXLEN, "ddl_notify worker for database %u", ldb->dboid);
	snprintf(worker.bgw_type, BGW_MAXLEN, "ddl_notify worker");
	worker.bgw_main_arg = Int32GetDatum(slot);
	worker.bgw_notify_pid = MyProcPid;
	LWLockAcquire(ddln_shared->lock, LW_SHARED);
	memcpy(worker.bgw_extra, &ddln_shared->slots[slot].generation, sizeof(uint64));
	LWLockRelease(ddln_shared->lock);

	if (!RegisterDynamicBackgroundWorker(&worker, &ldb->handle))
	{
		DdlnReleaseSlot(slot);
		ldb->handle = NULL;
		return false;
	}
	ldb->slot = slot;
	ldb->started_at = GetCurrentTimestamp();
	return true;
}

/* Look at the workers: who exited, and why. */
static void
DdlnLauncherReap(TimestampTz now)
{
	for (int i = 0; i < nldbs; i++)
	{
		DdlnLauncherDb *ldb = &ldbs[i];
		pid_t		pid;
		DdlnWorkerState state;
		bool		stopped;

		if (ldb->handle == NULL)
			continue;
		if (GetBackgroundWorkerPid(ldb->handle, &pid) != BGWH_STOPPED)
			continue;

		LWLockAcquire(ddln_shared->lock, LW_SHARED);
		state = ddln_shared->slots[ldb->slot].state;
		stopped = ddln_shared->slots[ldb->slot].stop;
		LWLockRelease(ddln_shared->lock);

		DdlnReleaseSlot(ldb->slot);
		pfree(ldb->handle);
		ldb->handle = NULL;
		ldb->slot = -1;

		if (state == DDLN_W_NO_EXTENSION || stopped)
		{
			/* it said why it left, or we asked it to: no penalty */
			if (state == DDLN_W_NO_EXTENSION)
				ldb->state = DDLN_DB_NO_EXTENSION;
			ldb->restart_delay_ms = 0;
			ldb->not_before = 0;
			continue;
		}
		if (state == DDLN_W_RUNNING)
			ldb->state = DDLN_DB_ACTIVE;
		/* a worker that died before attaching stays UNKNOWN: probe again */

		/*
		 * A worker that keeps dying young (an error in every round) is
		 * restarted less and less often, up to once a minute.
		 */
		if (state == DDLN_W_RUNNING &&
			!TimestampDifferenceExceeds(ldb->started_at, now, DDLN_HEALTHY_RUN_MS))
			ldb->restart_delay_ms = Min(Max(ldb->restart_delay_ms * 2, DDLN_RESTART_DELAY_MS),
										DDLN_MAX_RESTART_DELAY_MS);
		else
			ldb->restart_delay_ms = DDLN_RESTART_DELAY_MS;
		ldb->not_before = TimestampTzPlusMilliseconds(now, ldb->restart_delay_ms);
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

void
DdlnLauncherMain(Datum arg)
{
	bool		exhausted_logged = false;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	pgstat_report_appname("ddl_notify launcher");

	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	ddln_shared->launcher_pid = MyProcPid;
	ddln_shared->launcher_latch = MyLatch;
	ddln_shared->rescan = true;
	LWLockRelease(ddln_shared->lock);

	DdlnStopLeftoverWorkers();
	ereport(LOG, (errmsg("ddl_notify launcher started")));

	for (;;)
	{
		TimestampTz now = GetCurrentTimestamp();
		bool		rescan;
		bool		exhausted = false;
		bool		probe_waits = false;
		long		sleep_ms = 10000;

		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}

		LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
		rescan = ddln_shared->rescan;
		ddln_shared->rescan = false;
		LWLockRelease(ddln_shared->lock);

		DdlnLauncherReap(now);
		pgstat_report_activity(STATE_RUNNING, "ddl_notify launcher: scheduling workers");
		DdlnLauncherScan(rescan);

		/* databases known to have the extension first, then the others */
		for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < nldbs; i++)
		{
			DdlnLauncherDb *ldb = &ldbs[i];
			bool		paused;

			if ((pass == 0) != (ldb->state == DDLN_DB_ACTIVE))
				continue;

			if (ldb->handle != NULL || !ldb->seen || ldb->state == DDLN_DB_NO_EXTENSION)
				continue;
			if (ldb->not_before > now)
			{
				sleep_ms = Min(sleep_ms, DDLN_RESTART_DELAY_MS);
				continue;
			}
			LWLockAcquire(ddln_shared->lock, LW_SHARED);
			paused = DdlnIsPaused(ldb->dboid, now);
			LWLockRelease(ddln_shared->lock);
			if (paused)
			{
				sleep_ms = Min(sleep_ms, 500);
				continue;
			}
			if (!DdlnStartWorker(ldb))
			{
				/*
				 * No slot.  A database known to have the extension waits
				 * for one, said in the log and the status view; so does one
				 * still to be looked at, in other words.
				 */
				if (ldb->state == DDLN_DB_ACTIVE)
					exhausted = true;
				else
					probe_waits = true;
				/* a slot frees when a worker exits, which wakes us */
			}
		}

		LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
		ddln_shared->slots_exhausted = exhausted || probe_waits;
		LWLockRelease(ddln_shared->lock);
		if ((exhausted || probe_waits) && !exhausted_logged)
			ereport(LOG,
					(exhausted ?
					 errmsg("ddl_notify: no free worker slot; delivery waits in some databases") :
					 errmsg("ddl_notify: no free worker slot to look for the extension in some databases"),
					 errhint("Raise ddl_notify.max_workers (now %d) or max_worker_processes.",
							 ddln_max_workers)));
		exhausted_logged = exhausted || probe_waits;

		pgstat_report_activity(STATE_IDLE, NULL);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 sleep_ms, PG_WAIT_EXTENSION);
	}
}

/* ---------------------------------------------------------------------
 * The per-database worker
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
	LWLockRelease(ddln_shared->lock);
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

void
DdlnWorkerMain(Datum arg)
{
	int			slot = DatumGetInt32(arg);
	uint64		generation;
	TimestampTz last_sweep = 0;
	bool		sweep;
	TimestampTz round_start = 0;
	bool		idle_round = true;	/* the last round had nothing to deliver */
	Oid			dboid;
	MemoryContext loopcxt;

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
	LWLockRelease(ddln_shared->lock);
	before_shmem_exit(DdlnWorkerDetach, (Datum) 0);

	BackgroundWorkerInitializeConnectionByOid(dboid, InvalidOid, 0);
	pgstat_report_appname("ddl_notify worker");

	if (!DdlnExtensionPresent())
	{
		LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
		my_slot->state = DDLN_W_NO_EXTENSION;
		LWLockRelease(ddln_shared->lock);
		proc_exit(0);
	}

	LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
	my_slot->state = DDLN_W_RUNNING;
	my_slot->latch = MyLatch;
	LWLockRelease(ddln_shared->lock);

	StartTransactionCommand();
	ereport(LOG, (errmsg("ddl_notify worker started for database \"%s\"",
						 get_database_name(dboid))));
	CommitTransactionCommand();

	loopcxt = AllocSetContextCreate(TopMemoryContext, "ddl_notify worker loop",
									ALLOCSET_DEFAULT_SIZES);
	for (;;)
	{
		DdlnRoundResult result;
		long		sleep_ms = ddln_poll_interval;
		bool		stop;

		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		LWLockAcquire(ddln_shared->lock, LW_SHARED);
		stop = my_slot->stop;
		LWLockRelease(ddln_shared->lock);
		if (stop)
			break;

		MemoryContextReset(loopcxt);
		MemoryContextSwitchTo(loopcxt);

		if (!DdlnExtensionPresent())
		{
			LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
			my_slot->state = DDLN_W_NO_EXTENSION;
			LWLockRelease(ddln_shared->lock);
			ereport(LOG, (errmsg("ddl_notify worker exiting: the extension was dropped")));
			proc_exit(0);
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
		round_start = GetCurrentTimestamp();
		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		/* the round's memory must outlive its transactions (deliver.c) */
		MemoryContextSwitchTo(loopcxt);
		PortalContext = loopcxt;
		DdlnDeliverRound(&result, sweep);
		CommitTransactionCommand();
		PortalContext = NULL;
		if (sweep)
			last_sweep = GetCurrentTimestamp();
		/* the tables' counters (n_tup_upd, n_tup_del) drive autovacuum */
		pgstat_report_stat(false);

		LWLockAcquire(ddln_shared->lock, LW_EXCLUSIVE);
		my_slot->last_round = GetCurrentTimestamp();
		my_slot->delivered += result.delivered;
		LWLockRelease(ddln_shared->lock);

		idle_round = (result.handled == 0);
		if (result.more)
			continue;

		if (result.next_retry != 0)
		{
			long		secs;
			int			usecs;

			TimestampDifference(GetCurrentTimestamp(), result.next_retry, &secs, &usecs);
			sleep_ms = Min(sleep_ms, secs * 1000 + usecs / 1000 + 1);
		}
		pgstat_report_activity(STATE_IDLE, NULL);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 sleep_ms, PG_WAIT_EXTENSION);

		/*
		 * Woken by a commit within ddl_notify.stream_interval of the start of
		 * a round that delivered: commits are coming as a stream (a
		 * migration, a tool creating objects one by one).  Let them gather
		 * until that interval is over, so that one round serves several
		 * commits instead of one each: each round costs the worker a few
		 * transactions, and took CPU from the sessions running the DDL.  A
		 * commit that comes alone, after a quiet interval, is delivered at
		 * once; under a stream a handler starts at most this interval (plus
		 * a round) after its event's commit.
		 */
		if (result.handled > 0 && ddln_stream_interval > 0)
		{
			long		secs;
			int			usecs;
			long		waited_ms;

			TimestampDifference(round_start, GetCurrentTimestamp(), &secs, &usecs);
			waited_ms = secs * 1000 + usecs / 1000;
			if (waited_ms < ddln_stream_interval)
				(void) WaitLatch(MyLatch, WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
								 ddln_stream_interval - waited_ms,
								 PG_WAIT_EXTENSION);
		}
	}
	proc_exit(0);
}
