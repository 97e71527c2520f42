/*-------------------------------------------------------------------------
 *
 * common.h
 *	  Declarations shared by the files of ddl_notify, and the words they use.
 *
 * Words the files share:
 *	  event			one row of ddl_notify.event: one object touched by one DDL
 *					command, recorded in the DDL's own transaction
 *	  subscriber	a row of ddl_notify.subscriber: a name, a handler (a SQL
 *					function taking an event) and a slot
 *	  slot			a subscriber's bit (0..63) in event.processed: set once
 *					its handler's transaction committed
 *	  subscription point  the snapshot at a subscriber's commit: events of
 *					transactions visible in it are not its
 *	  position		a transaction's place in commit order
 *					(ddl_notify.commit_order.pos), drawn just before it commits
 *	  batch			the events one delivery transaction hands to one
 *					subscriber
 *	  round			one pass of the engine over every due subscriber, until
 *					nothing is left (DdlnDeliverRound)
 *	  floor			in memory, for the rest of a round: where a subscriber's
 *					handled events of one transaction end
 *	  sweep			the occasional delete of rows no subscriber needs
 *	  pool			the delivery workers of the whole cluster, at most
 *					ddl_notify.max_workers; a worker serves one database
 *	  pause			a database the pool keeps out of while a command (DROP
 *					DATABASE, DROP EXTENSION...) needs it alone
 *
 * Floors.  Calls run downwards only: a file calls files of its own floor or
 * below, never above, and no two files call each other.  Each .c file's
 * header names its floor.
 *
 *	entry		fmgr, the server and the hooks call in; nothing of ours calls it
 *	  ddl_notify.c	_PG_init (the settings, shared memory, the worker),
 *					the transaction callbacks, the utility hook
 *	  legacy.c		0.1.0's C entry points, each calling its successor
 *
 *	capture, API, worker: what SQL, event triggers and the pool run
 *	  capture.c		the event trigger functions (write ddl_notify.event)
 *	  lifecycle.c	the restore trigger: a row of a dump made a subscriber of
 *					this database, checked as data, not as anybody's choice
 *	  subscriber.c	the SQL API: subscribe, alter_subscriber, pause, resume,
 *					unsubscribe, skip, wait_for_delivery, and the
 *					subscription-point protocol
 *	  status.c		delivery_status(), delivery_state(), worker_pool()
 *	  replicate.c	DDL replication's hand-overs: publish_ddl(),
 *					unpublish_ddl(), apply_ddl(), stop_applying_ddl(), and
 *					the trigger that keeps a publisher's bookkeeping out of a
 *					subscriber's tables
 *	  apply.c		DDL replication on a subscriber: the outbox trigger that
 *					applies a statement and checks it, skip_ddl(), and the
 *					errors that stopped applying (its shared memory)
 *	  worker.c		the launcher and the delivery workers; they schedule,
 *					the engine delivers
 *
 *	engine: delivery, and what capture and the API ask of the catalogs
 *	  deliver.c		the delivery engine, the only code that calls handlers,
 *					sets processed bits or deletes events; used by both
 *					CALL ddl_notify.deliver() and the background worker
 *	  fetch.c		for the engine: the read of a subscriber's pending events
 *					(two index walks, no SQL) and the writes of processed
 *					bits and deletes (heap, no SQL); engine.h holds their types;
 *					the position floors a database's backends share; and
 *					wait_for_delivery()'s and subscriber_status's reads of
 *					what is pending, all by one walk from the floor
 *	  imagetexts.c	for the engine: which keys of the relation images hold
 *					texts, and details without them for a subscriber whose
 *					owner may not read event.query
 *	  progress.c	for the engine: the subscribers' delivery counters in
 *					shared memory between writes of their rows, and
 *					subscriber_status's columns from them and the queue
 *	  failure.c		for the engine: whose error a failed handler call
 *					raised, and the capped copy of it the engine keeps
 *	  binding.c		handlers and owners by OID and by name (pg_upgrade,
 *					restores), the subscriber table's version, new ids
 *	  trust.c		who may run what: the one place deciding whether a
 *					function may be a handler and who may act for an owner
 *	  querytext.c	the statement text an event stores: secrets redacted,
 *					length capped
 *	  relimage.c	relation images for capture, read from the catalogs:
 *					the relations (sequences and composite types included)
 *					a command touches, and the "after" of domains and enums
 *	  imgdiff.c		the "changes" between two images
 *	  imgcommand.c	which images a command's rows carry ("before" read at
 *					ddl_command_start)
 *	  imgdrop.c		"before" of dropped relations (the object access hook)
 *					kept for sql_drop; relimage.h is the four files' own
 *	  walmsg.c		with ddl_notify.wal_messages on, each event written by
 *					capture also as a logical decoding message (CDC)
 *	  outbox.c		DDL replication on a publisher: one outbox row per
 *					statement a publish_ddl() publication covers
 *	  statementkey.c	which statement of its transaction an event belongs
 *					to, with the search_path and role it ran under, for
 *					consumers that replay statement texts
 *
 *	ground: what every floor stands on; it calls nothing above it
 *	  common.c		the settings' variables, the subscription-point lock, the
 *					safe context, the relation OID cache, the running
 *					statement and handler call, the unpublished row insert
 *	  counter.c		event ids and commit positions from the extension's
 *					sequences, without nextval() (no lastval() sees them),
 *					and the commit_order row
 *	  pool.c		the pool's shared memory (slots, request table, pauses,
 *					ended handler calls, its LWLock; private header pool.h)
 *					and the committing backend's side: wake a worker or
 *					queue the database
 *	  compat.h		PostgreSQL version differences, one name each
 *
 * This header (common.h) holds the words above and the declarations the
 * floors share, each under the name of the file that defines it.
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef DDLN_COMMON_H
#define DDLN_COMMON_H

#include "access/transam.h"
#include "access/tupdesc.h"
#include "catalog/indexing.h"
#include "nodes/nodes.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"
#include "storage/latch.h"
#include "storage/lock.h"
#include "utils/snapshot.h"

#include "compat.h"

#define DDLN_EXTENSION_NAME		"ddl_notify"
#define DDLN_SCHEMA_NAME		"ddl_notify"

/* The hint of every refusal of the extension's tables in a shape not its own. */
#define DDLN_HINT_TABLE_SHAPE \
	"After installing a new version of ddl_notify, run ALTER EXTENSION ddl_notify UPDATE; " \
	"a table of the extension changed by hand needs the change undone, or DROP EXTENSION and CREATE EXTENSION."

/* Subscribers live in the bits of a bigint: slots 0..63. */
#define DDLN_MAX_SUBSCRIBERS	64

/*
 * The subscription-point lock: a transaction that recorded events takes it in
 * ShareLock just before it commits, subscribe() takes it in ExclusiveLock just
 * before its own commit.  Held until the end of the transaction, i.e. past the
 * moment the commit became visible.  It is a transaction-level advisory lock
 * with objsubid 3 (SQL-level advisory locks use 1 and 2), so it cannot collide
 * with an application's pg_advisory_lock() calls.
 */
#define DDLN_LOCK_KEY1			0x64646c6e	/* "ddln" */
#define DDLN_LOCK_KEY2			0x53554253	/* "SUBS" */
#define DDLN_LOCK_FIELD4		3

/* settings: defined by ddl_notify.c, their variables in common.c */
extern bool ddln_capture_temp;
extern bool ddln_capture_query;
extern bool ddln_capture_changes;
extern int	ddln_batch_size;
extern int	ddln_retry_initial_delay;
extern int	ddln_retry_max_delay;
extern int	ddln_handler_timeout;
extern int	ddln_max_workers;
extern int	ddln_poll_interval;
extern int	ddln_stream_interval;
extern bool ddln_wal_messages;
extern int	ddln_wal_message_version;
extern int	ddln_max_query_length;
extern int	ddln_batch_memory;
extern int	ddln_lock_timeout;
extern int	ddln_max_subscribers_per_role;
extern int	ddln_worker_idle_timeout;
extern int	ddln_max_workers_per_database;
extern int	ddln_max_chain_length;

/* common.c */
typedef struct DdlnSafeState
{
	Oid			save_userid;
	int			save_sec;
	int			nestlevel;
} DdlnSafeState;

extern void DdlnBeginSafe(DdlnSafeState *st);
extern void DdlnEndSafe(DdlnSafeState *st);
extern void DdlnLockSubscriptionPoint(LOCKMODE mode);
extern const char *DdlnCurrentStatementText(void);
extern bool DdlnCurrentStatementSliced(void);
extern Oid	DdlnExtensionOwner(void);
extern bool DdlnTryQuietly(void (*fn) (void *arg), void *arg);
/* common.c: building jsonb (st: a DdlnJsonbState *, compat.h) */
extern void DdlnJsonPush(DdlnJsonbState *st, JsonbValue *v);
extern void DdlnJsonKey(DdlnJsonbState *st, const char *key);
extern void DdlnJsonString(DdlnJsonbState *st, const char *s);
extern void DdlnJsonBool(DdlnJsonbState *st, bool b);
extern void DdlnJsonInt(DdlnJsonbState *st, int64 i);
extern void DdlnJsonToken(DdlnJsonbState *st, JsonbIteratorToken what);
extern void DdlnJsonPair(DdlnJsonbState *st, const char *key, const char *value);
extern Jsonb *DdlnDetailsWith(Jsonb *details, Jsonb *more);
/* common.c: the settings a statement's text is read under (by name) */
#define DDLN_TEXT_SETTINGS 4
extern const char *const ddln_text_settings[DDLN_TEXT_SETTINGS];
extern void DdlnJsonTextSettings(DdlnJsonbState *st, char *const *values);
/* common.c: a jsonb value built directly, without pushes, and written (DdlnJvToJsonb) */
extern JsonbValue *DdlnJvObject(int maxpairs);
extern JsonbValue *DdlnJvArray(int maxelems);
extern Numeric DdlnJvNumeric(int64 i);
extern JsonbValue *DdlnJvDone(JsonbValue *obj);
extern Jsonb *DdlnJvToJsonb(JsonbValue *v);

/*
 * key: value in an object, or (key NULL) value as an array's next element.
 * Inline with the next three: an image adds thousands of keys, each a
 * literal whose strlen the compiler counts (a call and a strlen for each
 * cost about 50 instructions a key: 400 a column object).
 */
static inline void
DdlnJvAdd(JsonbValue *container, const char *key, const JsonbValue *value)
{
	JsonbPair  *pair;

	if (key == NULL)
	{
		Assert(container->type == jbvArray);
		container->val.array.elems[container->val.array.nElems++] = *value;
		return;
	}
	Assert(container->type == jbvObject);
	pair = &container->val.object.pairs[container->val.object.nPairs];
	pair->key.type = jbvString;
	pair->key.val.string.val = (char *) key;
	pair->key.val.string.len = strlen(key);
	pair->value = *value;
	pair->order = container->val.object.nPairs++;
}

/* "v" set to the string "s", or to JSON null for NULL (both builders' strings) */
static inline void
DdlnJsonbStringValue(JsonbValue *v, const char *s)
{
	if (s == NULL)
		v->type = jbvNull;
	else
	{
		v->type = jbvString;
		v->val.string.val = (char *) s;
		v->val.string.len = strlen(s);
	}
}

/* key: "s" (JSON null for NULL) */
static inline void
DdlnJvString(JsonbValue *obj, const char *key, const char *s)
{
	JsonbValue	v;

	DdlnJsonbStringValue(&v, s);
	DdlnJvAdd(obj, key, &v);
}

static inline void
DdlnJvBool(JsonbValue *obj, const char *key, bool b)
{
	JsonbValue	v;

	v.type = jbvBool;
	v.val.boolean = b;
	DdlnJvAdd(obj, key, &v);
}

/* key: i, a numeric (of 0 to 2047 made once: DdlnJvNumeric) */
static inline void
DdlnJvInt(JsonbValue *obj, const char *key, int64 i)
{
	JsonbValue	v;

	v.type = jbvNumeric;
	v.val.numeric = DdlnJvNumeric(i);
	DdlnJvAdd(obj, key, &v);
}

extern void DdlnJsonPushValue(DdlnJsonbState *st, JsonbValue *v);

/* Equal strings, or both NULL (inline: an image compares thousands) */
static inline bool
DdlnStrEq(const char *a, const char *b)
{
	return (a == NULL || b == NULL) ? a == b : strcmp(a, b) == 0;
}

/* the statement the utility hook is running: its query string and slice */
typedef struct DdlnStatement
{
	const char *string;
	int			location;		/* -1: the whole string */
	int			len;			/* 0: to the end of the string */
} DdlnStatement;

extern DdlnStatement ddln_statement;
extern const char *ddln_current_origin;	/* subscriber whose handler runs */
extern Datum ddln_current_chain;	/* origin_chain (text[]) of the event it
									 * handles, 0 if none */

/* capture.c */
extern bool ddln_xact_recorded;			/* this transaction wrote events */

/* querytext.c: the statement text an event stores */
extern char *DdlnRedactSecrets(const char *query);
extern char *DdlnCapQuery(const char *query);

/* statementkey.c: the "statement" key of an event's details */
extern void DdlnStatementKeyStart(Node *parsetree);
extern void DdlnStatementKeyEnd(void);
extern Jsonb *DdlnStatementKey(bool unchanged);

/* walmsg.c: events as logical decoding messages (G15) */
#define DDLN_WAL_MESSAGE_PREFIX		"ddl_notify"
#define DDLN_WAL_MESSAGE_VERSION	2	/* the default "v" of the JSON content */
extern void DdlnWalMessage(TupleDesc desc, const Datum *values, const bool *nulls);
/* imgcommand.c: the images of a command's rows */
extern void DdlnImageCommandStart(Node *parsetree);
extern Jsonb *DdlnImageForRow(Oid classid, Oid objid, int32 objsubid, const char *tag,
							  Jsonb *details);
extern void DdlnImageForgetBefore(void);
/* imgdrop.c: "before" of dropped relations */
extern Jsonb *DdlnImageTakeDropped(Oid relid);
extern void DdlnImageForgetDropped(void);
extern void DdlnImageInstallHooks(void);
/* relimage.c: a relation's image now (DDL replication's check) */
extern Jsonb *DdlnRelationImageNow(Oid relid);

/* counter.c */
extern int64 DdlnCounterNext(Oid seqrelid);
extern int64 DdlnCounterNextAbove(Oid seqrelid, int64 floor);
extern int64 DdlnCounterNextNamed(const char *seqname, int64 floor);

/* subscriber.c */
extern bool ddln_xact_subscribed;		/* this transaction called subscribe() */
extern bool ddln_api_inserting;			/* subscribe() inserts its row */
extern void DdlnFixSubscriptionPoint(void);
extern char *DdlnSnapshotText(Snapshot snap);
extern void DdlnLockApi(void);

/* trust.c: who may run what (the one place that decides it) */
typedef enum DdlnBind
{
	DDLN_BIND_CHOSEN,			/* subscribe(), alter_subscriber(): the caller
								 * named the function */
	DDLN_BIND_BY_NAME,			/* a restored row, a name resolved again:
								 * nobody chose it; the trust rule applies */
	DDLN_BIND_CALL				/* the engine, right before the call */
} DdlnBind;

typedef struct DdlnVerdict
{
	bool		ok;
	int			sqlerrcode;
	char	   *message;
	char	   *detail;
	char	   *hint;
} DdlnVerdict;

extern bool DdlnJudgeHandler(Oid handler, Oid owner, DdlnBind how, DdlnVerdict *v);
extern void DdlnRaiseVerdict(const DdlnVerdict *v);
extern char *DdlnVerdictText(const DdlnVerdict *v);
extern bool DdlnMayActFor(Oid role, Oid owner);
extern void DdlnCheckMayActFor(const char *name, Oid owner, const char *owner_name);

/* binding.c: handlers and owners by OID and by name, subscriber ids */
extern bool DdlnSubscriberHasNames(void);
extern int32 DdlnDrawSubscriberId(int32 want);
extern Oid	DdlnHandlerByName(const char *signature);
extern bool DdlnResolveSubscriber(int32 id, const char *handler, Oid *handler_oid,
								  Oid *owner, const char *owner_name, bool resolved_here,
								  DdlnVerdict *refusal);

/* deliver.c */

/*
 * An event as the engine's statements name it: its id and its transaction,
 * so that either of event's indexes (id; xid, id) finds it in one lookup.
 */
typedef struct DdlnEventKey
{
	FullTransactionId xid;
	int64		id;
	int64		pos;			/* its transaction's commit_order.pos, 0 if
								 * not known */
} DdlnEventKey;

typedef struct DdlnRoundResult
{
	int64		delivered;		/* handler calls that committed */
	int64		handled;		/* events marked handled (incl. filtered) */
	int			failures;		/* failed attempts recorded */
	bool		more;			/* work was left for another round */
	int			busy;			/* subscribers skipped: another deliverer
								 * held them */
	TimestampTz next_retry;		/* earliest backoff expiry, 0 if none */
} DdlnRoundResult;

/*
 * The sweep at a round's end (deliver.c): none; the recent one (the rows a
 * walk from the position floor finds, a bounded cost whatever an old
 * snapshot keeps); or the full one (scans of the whole queue, which also
 * finds events whose transaction has no commit position).
 */
typedef enum DdlnSweep
{
	DDLN_SWEEP_NONE,
	DDLN_SWEEP_RECENT,
	DDLN_SWEEP_FULL
} DdlnSweep;

extern void DdlnDeliverRound(DdlnRoundResult *result, DdlnSweep sweep);
extern void DdlnFlushProgress(void);
extern bool (*ddln_round_yield_hook) (void);
extern void (*ddln_round_sweep_hook) (void);
extern void DdlnStartTransaction(void);
extern void DdlnMarkHandled(const char *subname, int32 slot,
							const DdlnEventKey *events, int n);
extern void DdlnPurge(void);

/* failure.c: whose error it is, and its capped copy (deliver.c only) */
#define DDLN_HANDLER_GRACE_MAX_MS	1000	/* cancel to end of process */
extern volatile sig_atomic_t ddln_handler_timed_out;
extern volatile sig_atomic_t ddln_handler_in_call;
extern volatile sig_atomic_t ddln_handler_killed;
extern int	DdlnHandlerGraceMs(void);
extern void DdlnHandlerTimeoutHandler(void);
extern void DdlnHandlerKillHandler(void);
extern bool DdlnErrorIsDeliverers(ErrorData *edata);
extern ErrorData *DdlnCopyErrorCapped(MemoryContext into);

/*
 * The OIDs of the extension's schema and of the relations capture and the
 * engine open without SQL, looked up once per backend (common.c).
 */
typedef struct DdlnRelids
{
	Oid			nsp;
	Oid			owner;			/* pg_extension.extowner, never the schema's owner */
	Oid			event;
	Oid			event_seq;		/* event's identity sequence */
	Oid			event_xid;		/* index event (xid, id) */
	Oid			commit_order;
	Oid			commit_order_seq;
	Oid			commit_order_pos;	/* index commit_order (pos) */
} DdlnRelids;

extern const DdlnRelids *DdlnGetRelids(bool missing_ok);

/* counter.c: a transaction's commit position, drawn now */
extern void DdlnRecordCommitPosition(void);
extern void DdlnInsertCommitPosition(const DdlnRelids *relids, FullTransactionId xid);

/* common.c: a row of the extension's tables, written unseen by logical decoding */
extern void DdlnInsertUnpublished(Relation rel, CatalogIndexState indstate, HeapTuple tup);
extern void DdlnInsertRow(Relation rel, CatalogIndexState indstate, HeapTuple tup, bool published);
extern void DdlnInsertIndexEntries(Relation rel, CatalogIndexState indstate, HeapTuple tup);

/*
 * outbox.c: DDL replication's outbox (G16).  ddln_apply_origin is set by
 * apply.c while it applies a statement that came from another cluster.
 */
typedef struct DdlnApplyOrigin
{
	bool		set;
	int64		origin;			/* system identifier where it first ran */
	int64		origin_id;		/* its event id there */
} DdlnApplyOrigin;

extern DdlnApplyOrigin ddln_apply_origin;
extern void DdlnOutboxStatementStart(Node *parsetree);
extern void DdlnOutboxNote(int64 id, const char *trigger_event, const char *command_tag,
						   const char *object_type, const char *schema_name,
						   const char *identity, bool has_address, Oid classid, Oid objid,
						   Jsonb *details);
extern void DdlnOutboxStatementEnd(const char *tag);
extern void DdlnOutboxPrune(void);

/* apply.c: the errors that stopped applying, in shared memory */
extern void DdlnApplyShmemRequest(void);

/* replicate.c: the SQL of DDL replication's bookkeeping, passed by not_replicated() */
extern bool ddln_apply_writing;
extern uint64 DdlnReplicationSql(const char *sql, int nargs, Oid *types, Datum *values);
extern Oid	DdlnReplicationSubscription(Name name);

/* pool.c */

/*
 * A handler call that ddl_notify.handler_timeout ended by ending its
 * process (failure.c): kept in shared memory until the next deliverer of
 * the database counts it as a failed attempt (deliver.c).
 */
typedef struct DdlnEndedCall
{
	Oid			dboid;
	int32		subscriber;		/* subscriber.id */
	DdlnEventKey event;			/* the event it was called for */
	int			timeout_ms;		/* ddl_notify.handler_timeout then */
	int			grace_ms;
	bool		worker;			/* a pool worker, else a session's CALL */
	TimestampTz at;				/* when the process was ended */
} DdlnEndedCall;

extern void DdlnWorkerShmemRequest(void);
/* progress.c (its other functions: engine.h) */
extern void DdlnProgressShmemRequest(void);
extern bool DdlnKeepEndedCall(const DdlnEndedCall *call);
extern bool DdlnTakeEndedCall(Oid dboid, int32 subscriber, DdlnEndedCall *call);
extern void DdlnForgetEndedCalls(Oid dboid, const int32 *subscribers, int n);
extern void DdlnWakeDatabaseWorker(Oid dboid);
extern void DdlnKeepOwnPreparedXact(void);
extern void DdlnWakeWorkerAtCommit(void);
extern void DdlnRequestRetry(Oid dboid, TimestampTz at);
extern void DdlnNotifyLauncher(void);
extern bool DdlnStopDatabaseWorker(Oid dboid);
extern bool DdlnAutomaticDelivery(void);
extern void DdlnBeforeUtility(Node *parsetree);

/* worker.c */
extern void DdlnRegisterLauncher(void);

/* fetch.c: the position floors shared by a database's backends */
extern void DdlnFloorShmemRequest(void);

/*
 * The columns of ddl_notify.event and ddl_notify.commit_order, in the order
 * of the install script (0-based: attribute number - 1).  Capture forms
 * their rows and the engine reads them without SQL, both by these numbers
 * (capture checks event's column count, the engine both tables').
 */
enum
{
	DDLN_EV_ID = 0,
	DDLN_EV_XID,
	DDLN_EV_OCCURRED_AT,
	DDLN_EV_TRIGGER_EVENT,
	DDLN_EV_COMMAND_TAG,
	DDLN_EV_OBJECT_TYPE,
	DDLN_EV_SCHEMA_NAME,
	DDLN_EV_OBJECT_IDENTITY,
	DDLN_EV_CLASSID,
	DDLN_EV_OBJID,
	DDLN_EV_OBJSUBID,
	DDLN_EV_IN_EXTENSION,
	DDLN_EV_ROLE_NAME,
	DDLN_EV_QUERY,
	DDLN_EV_DETAILS,
	DDLN_EV_ORIGIN,
	DDLN_EV_PROCESSED,
	DDLN_EV_ORIGIN_CHAIN,		/* since 0.2.0: absent before ALTER EXTENSION UPDATE */
	DDLN_EV_NATTS
};

/* event's columns in 0.1.0 (no origin_chain): read and written too */
#define DDLN_EV_NATTS_010	DDLN_EV_ORIGIN_CHAIN

enum
{
	DDLN_CO_XID = 0,
	DDLN_CO_POS,
	DDLN_CO_NATTS
};

#endif							/* DDLN_COMMON_H */
