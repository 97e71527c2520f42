/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  Every difference between the PostgreSQL versions ddl_notify builds
 *	  against (15, 16, 17, 18, 19), each mapped to one name here.
 *
 * Rules kept here:
 * - This is the only file of src/ that tests PG_VERSION_NUM: the engine
 *	 uses the names below and never asks which version it runs on.
 * - Each name covers one API difference and says in its comment when and
 *	 how PostgreSQL changed; the boundaries are the versions that changed it
 *	 (160000, 170000, ...), so 16, never tested, compiles on paper.
 * - Names are macros or static inline functions that expand to the
 *	 version's own call: no behaviour of ours is decided here.  A macro
 *	 names functions the file using it includes the header of; only
 *	 headers this file's own inline code needs are included here, and an
 *	 include that exists in some versions only is guarded (deps.sh reads the
 *	 guards).
 * - The oldest version is 15: nothing for older ones.
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef DDLN_COMPAT_H
#define DDLN_COMPAT_H

#include "access/heapam.h"

/*
 * ALTER TABLE subcommand kinds (nodes/parsenodes.h, AlterTableType) that
 * exist in some versions only.  Each macro is the case labels of one kind
 * for a switch over AlterTableType (empty where the kind does not exist),
 * so that such a switch still lists every kind of every version and the
 * compiler still says when a version adds one.
 *   16 removed the AT_*Recurse kinds (recursion became a flag of the
 *	 command), 17 added AT_SetExpression (ALTER COLUMN SET EXPRESSION),
 *	 18 removed AT_CheckNotNull (NOT NULL became a catalogued constraint).
 */
#if PG_VERSION_NUM < 160000
#define DDLN_CASE_AT_ADD_COLUMN_RECURSE			case AT_AddColumnRecurse:
#define DDLN_CASE_AT_DROP_COLUMN_RECURSE		case AT_DropColumnRecurse:
#define DDLN_CASE_AT_ADD_CONSTRAINT_RECURSE		case AT_AddConstraintRecurse:
#define DDLN_CASE_AT_VALIDATE_CONSTRAINT_RECURSE case AT_ValidateConstraintRecurse:
#define DDLN_CASE_AT_DROP_CONSTRAINT_RECURSE	case AT_DropConstraintRecurse:
/* Is an AlterTableType one that adds a column (ADD COLUMN, recursing or not)? */
#define DdlnATAddsColumn(t) \
	((t) == AT_AddColumn || (t) == AT_AddColumnRecurse || (t) == AT_AddColumnToView)
#else
#define DDLN_CASE_AT_ADD_COLUMN_RECURSE
#define DDLN_CASE_AT_DROP_COLUMN_RECURSE
#define DDLN_CASE_AT_ADD_CONSTRAINT_RECURSE
#define DDLN_CASE_AT_VALIDATE_CONSTRAINT_RECURSE
#define DDLN_CASE_AT_DROP_CONSTRAINT_RECURSE
#define DdlnATAddsColumn(t) \
	((t) == AT_AddColumn || (t) == AT_AddColumnToView)
#endif
/* (a whole arm: the kind and what it returns) */
#if PG_VERSION_NUM < 170000
#define DDLN_CASE_AT_SET_EXPRESSION(result)
#else
#define DDLN_CASE_AT_SET_EXPRESSION(result)		case AT_SetExpression: return (result);
#endif
#if PG_VERSION_NUM < 180000
#define DDLN_CASE_AT_CHECK_NOT_NULL				case AT_CheckNotNull:
#else
#define DDLN_CASE_AT_CHECK_NOT_NULL
#endif

/*
 * The statistics target of each column of "rel" (ALTER TABLE ... ALTER
 * COLUMN ... SET STATISTICS), -1 for the default, into targets[attnum - 1]:
 * up to 16 pg_attribute.attstattarget is an int4 of the tuple descriptor's
 * fixed part, -1 by default; 17 made it a nullable int2 outside the fixed
 * part (NULL by default, SET STATISTICS -1 or DEFAULT stores NULL), read
 * from the relation's catalog rows then, in one scan of them: a catalog
 * cache lookup per column missed for every column of a table no statement
 * of the session had read (about 8,000 instructions each: on 18, 3 times
 * the statement's own cost for the two images of an ADD COLUMN on a table
 * of 100 columns).  DdlnAttStatTarget is one column's (17 on: its catalog
 * cache entry, for a few columns), DDLN_STATTARGETS_READ says whether
 * either costs a catalog read (1 from 17 on).
 */
#if PG_VERSION_NUM >= 170000
#include "access/genam.h"
#include "access/table.h"
#include "catalog/pg_attribute.h"
#include "utils/fmgroids.h"
#include "utils/syscache.h"

/* Do the targets cost a catalog read (1), or come with the descriptor (0)? */
#define DDLN_STATTARGETS_READ 1

static inline void
DdlnAttStatTargets(Relation rel, int *targets)
{
	int			natts = RelationGetDescr(rel)->natts;
	Relation	attrel;
	ScanKeyData key[2];
	SysScanDesc scan;
	HeapTuple	tup;

	for (int i = 0; i < natts; i++)
		targets[i] = -1;
	attrel = table_open(AttributeRelationId, AccessShareLock);
	ScanKeyInit(&key[0], Anum_pg_attribute_attrelid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(RelationGetRelid(rel)));
	ScanKeyInit(&key[1], Anum_pg_attribute_attnum, BTGreaterStrategyNumber, F_INT2GT,
				Int16GetDatum(0));
	scan = systable_beginscan(attrel, AttributeRelidNumIndexId, true, NULL, 2, key);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		AttrNumber	attnum = ((Form_pg_attribute) GETSTRUCT(tup))->attnum;
		bool		isnull;
		Datum		d;

		/*
		 * A row the relation's descriptor does not have (the scan key leaves
		 * out attnum 0 and below; a column added after the descriptor was
		 * built cannot be, the caller holding the relation's lock): never
		 * written past the array.
		 */
		if (attnum < 1 || attnum > natts)
			continue;
		d = heap_getattr(tup, Anum_pg_attribute_attstattarget, RelationGetDescr(attrel), &isnull);
		if (!isnull)
			targets[attnum - 1] = DatumGetInt16(d);
	}
	systable_endscan(scan);
	table_close(attrel, AccessShareLock);
}

/*
 * One column's, by a catalog cache lookup (its pg_attribute row; a column
 * of the descriptor always has one while the caller holds the relation's
 * lock, so the default of -1 for a missing row is never returned).
 */
static inline int
DdlnAttStatTarget(Relation rel, AttrNumber attnum)
{
	HeapTuple	tup = SearchSysCache2(ATTNUM, ObjectIdGetDatum(RelationGetRelid(rel)),
									  Int16GetDatum(attnum));
	int			target = -1;

	if (HeapTupleIsValid(tup))
	{
		bool		isnull;
		Datum		d = SysCacheGetAttr(ATTNUM, tup, Anum_pg_attribute_attstattarget, &isnull);

		if (!isnull)
			target = DatumGetInt16(d);
		ReleaseSysCache(tup);
	}
	return target;
}
#else
#define DDLN_STATTARGETS_READ 0

static inline void
DdlnAttStatTargets(Relation rel, int *targets)
{
	TupleDesc	desc = RelationGetDescr(rel);

	for (int i = 0; i < desc->natts; i++)
		targets[i] = TupleDescAttr(desc, i)->attstattarget;
}

static inline int
DdlnAttStatTarget(Relation rel, AttrNumber attnum)
{
	return TupleDescAttr(RelationGetDescr(rel), attnum - 1)->attstattarget;
}
#endif

/*
 * NOT NULL as a named constraint in pg_constraint (contype 'n'): a domain's
 * from 17 on, a table column's from 18 on.  DDLN_CONTYPE_NOTNULL is its
 * contype ('\0', which no row has, before 17); DdlnNotNullAttnum() the
 * column of a table's (InvalidAttrNumber before 18, which has no such row).
 */
#if PG_VERSION_NUM >= 170000
#define DDLN_CONTYPE_NOTNULL	CONSTRAINT_NOTNULL
#else
#define DDLN_CONTYPE_NOTNULL	'\0'
#endif
/*
 * A generated column computed when read (GENERATED ALWAYS AS (...) VIRTUAL,
 * 18 on, where it is the default kind): pg_attribute.attgenerated 'v'.
 */
#if PG_VERSION_NUM >= 180000
#define DDLN_GENERATED_VIRTUAL	ATTRIBUTE_GENERATED_VIRTUAL
#else
#define DDLN_GENERATED_VIRTUAL	'\xff'	/* no column has it */
#endif
#if PG_VERSION_NUM >= 180000
#define DdlnNotNullAttnum(contup)	extractNotNullColumn(contup)
#else
#define DdlnNotNullAttnum(contup)	((void) (contup), InvalidAttrNumber)
#endif

/*
 * Permission checks on a function and on a schema: 16 replaced
 * pg_proc_aclcheck() and pg_namespace_aclcheck() by object_aclcheck() with a
 * catalog id (utils/acl.h; the ids are in catalog/pg_proc.h and
 * catalog/pg_namespace.h).
 */
#if PG_VERSION_NUM >= 160000
#define DdlnProcAclCheck(proc, role, mode)	object_aclcheck(ProcedureRelationId, proc, role, mode)
#define DdlnSchemaAclCheck(nsp, role, mode) object_aclcheck(NamespaceRelationId, nsp, role, mode)
#else
#define DdlnProcAclCheck(proc, role, mode)	pg_proc_aclcheck(proc, role, mode)
#define DdlnSchemaAclCheck(nsp, role, mode) pg_namespace_aclcheck(nsp, role, mode)
#endif

/*
 * Does a role own a relation?  16 replaced pg_class_ownercheck() by
 * object_ownercheck() with a catalog id (utils/acl.h).
 */
#if PG_VERSION_NUM >= 160000
#define DdlnRelationOwnerCheck(rel, role)	object_ownercheck(RelationRelationId, rel, role)
#else
#define DdlnRelationOwnerCheck(rel, role)	pg_class_ownercheck(rel, role)
#endif

/*
 * Is this process a background worker?  17 replaced the variable
 * IsBackgroundWorker by AmBackgroundWorkerProcess() (miscadmin.h).
 */
#if PG_VERSION_NUM >= 170000
#define DdlnAmBackgroundWorker()	AmBackgroundWorkerProcess()
#else
#define DdlnAmBackgroundWorker()	IsBackgroundWorker
#endif

/*
 * A logical decoding message (replication/message.h): 17 added "flush"
 * (flush the WAL at once for a non-transactional message); ours are
 * transactional, flushed by their commit, so false.
 */
#if PG_VERSION_NUM >= 170000
#define DdlnLogLogicalMessage(prefix, msg, size, transactional) \
	LogLogicalMessage(prefix, msg, size, transactional, false)
#else
#define DdlnLogLogicalMessage(prefix, msg, size, transactional) \
	LogLogicalMessage(prefix, msg, size, transactional)
#endif

/*
 * standard_conforming_strings: PostgreSQL 19 has it always on, and no
 * variable for it (relimage.c prints images with it on).
 */
#if PG_VERSION_NUM >= 190000
#define DdlnStandardConformingStrings()	true
#else
#define DdlnStandardConformingStrings()	standard_conforming_strings
#endif

/*
 * An index scan (access/genam.h): 18 added the instrumentation argument
 * (NULL: none), 19 the scan's flags (access/tableam.h's ScanOptions;
 * SO_NONE: as before).
 */
#if PG_VERSION_NUM >= 190000
#define DdlnIndexBeginScan(heap, index, snap, nkeys, norderbys) \
	index_beginscan(heap, index, snap, NULL, nkeys, norderbys, SO_NONE)
#elif PG_VERSION_NUM >= 180000
#define DdlnIndexBeginScan(heap, index, snap, nkeys, norderbys) \
	index_beginscan(heap, index, snap, NULL, nkeys, norderbys)
#else
#define DdlnIndexBeginScan(heap, index, snap, nkeys, norderbys) \
	index_beginscan(heap, index, snap, nkeys, norderbys)
#endif

/*
 * Update or delete a row (access/heapam.h's heap_update, heap_delete),
 * waiting for a concurrent writer, no crosscheck snapshot; "*index" says
 * whether the new version's index entries must be inserted (not a heap-only
 * tuple).  16 returned that as TU_UpdateIndexes instead of leaving it to
 * HeapTupleIsHeapOnly(); TU_Summarizing (only summarizing indexes, such as
 * BRIN, need the entry) is taken as "none": ddl_notify's tables have none.
 * 19 added the options (TABLE_UPDATE_*, TABLE_DELETE_*; 0: as before) and
 * moved heap_delete's changingPart into them.
 */
#if PG_VERSION_NUM >= 160000
static inline TM_Result
DdlnHeapUpdate(Relation rel, ItemPointer otid, HeapTuple tup, CommandId cid,
			   TM_FailureData *tmfd, bool *index)
{
	LockTupleMode lockmode;
	TU_UpdateIndexes update_indexes = TU_None;
#if PG_VERSION_NUM >= 190000
	TM_Result	result = heap_update(rel, otid, tup, cid, 0, InvalidSnapshot, true,
									 tmfd, &lockmode, &update_indexes);
#else
	TM_Result	result = heap_update(rel, otid, tup, cid, InvalidSnapshot, true,
									 tmfd, &lockmode, &update_indexes);
#endif

	*index = (result == TM_Ok && update_indexes == TU_All);
	return result;
}
#else
static inline TM_Result
DdlnHeapUpdate(Relation rel, ItemPointer otid, HeapTuple tup, CommandId cid,
			   TM_FailureData *tmfd, bool *index)
{
	LockTupleMode lockmode;
	TM_Result	result = heap_update(rel, otid, tup, cid, InvalidSnapshot, true,
									 tmfd, &lockmode);

	*index = (result == TM_Ok && !HeapTupleIsHeapOnly(tup));
	return result;
}
#endif
#if PG_VERSION_NUM >= 190000
#define DdlnHeapDelete(rel, tid, cid, tmfd) \
	heap_delete(rel, tid, cid, 0, InvalidSnapshot, true, tmfd)
#else
#define DdlnHeapDelete(rel, tid, cid, tmfd) \
	heap_delete(rel, tid, cid, InvalidSnapshot, true, tmfd, false)
#endif

/*
 * A shared hash table (storage/shmem.h): 19 dropped the initial size (the
 * table is allocated at its maximum size, as it was in practice).
 */
#if PG_VERSION_NUM >= 190000
#define DdlnShmemInitHash(name, init_size, max_size, info, flags) \
	ShmemInitHash(name, max_size, info, flags)
#else
#define DdlnShmemInitHash(name, init_size, max_size, info, flags) \
	ShmemInitHash(name, init_size, max_size, info, flags)
#endif

/*
 * The sequence WAL record and its record type (xl_seq_rec, XLOG_SEQ_LOG):
 * in commands/sequence.h up to 18, in commands/sequence_xlog.h from 19 on.
 */
#if PG_VERSION_NUM >= 190000
#include "commands/sequence_xlog.h"
#endif

/*
 * The relation a sequence's WAL record (commands/sequence.h, xl_seq_rec)
 * names: 16 renamed its field node (RelFileNode) to locator (RelFileLocator).
 */
#if PG_VERSION_NUM >= 160000
#define DdlnSeqRecSetRelation(xlrec, rel)	((xlrec).locator = (rel)->rd_locator)
#else
#define DdlnSeqRecSetRelation(xlrec, rel)	((xlrec).node = (rel)->rd_node)
#endif

/*
 * Building a jsonb value with pushJsonbValue() (utils/jsonb.h): up to 18 the
 * builder's state is a JsonbParseState pointer, starting NULL, and each push
 * returns the value built so far (complete after the last END); 19 wraps
 * it in a JsonbInState, starting zeroed, whose "result" is the complete
 * value, and a push returns nothing.
 *	 DdlnJsonbState		the builder's state (a variable, initialised with
 *						DDLN_JSONB_STATE_INIT)
 *	 DdlnJsonbPush(st, token, value)	one push (st: DdlnJsonbState *)
 *	 DdlnJsonbInner(st)	the innermost open object or array (JsonbParseState *)
 *	 DdlnJsonbFinish(st)	push the outermost WJB_END_OBJECT: the Jsonb *
 *	 DdlnJsonbFinishValue(st)	the same, the JsonbValue * not yet serialised
 */
#if PG_VERSION_NUM >= 190000
typedef struct JsonbInState DdlnJsonbState;
#define DDLN_JSONB_STATE_INIT		{0}
#define DdlnJsonbPush(st, token, value)	pushJsonbValue(st, token, value)
#define DdlnJsonbInner(st)			((st)->parseState)
#define DdlnJsonbFinish(st) \
	(pushJsonbValue(st, WJB_END_OBJECT, NULL), JsonbValueToJsonb((st)->result))
#define DdlnJsonbFinishValue(st) \
	(pushJsonbValue(st, WJB_END_OBJECT, NULL), (st)->result)
#else
typedef struct JsonbParseState *DdlnJsonbState;
#define DDLN_JSONB_STATE_INIT		NULL
#define DdlnJsonbPush(st, token, value)	((void) pushJsonbValue(st, token, value))
#define DdlnJsonbInner(st)			(*(st))
#define DdlnJsonbFinish(st)			JsonbValueToJsonb(pushJsonbValue(st, WJB_END_OBJECT, NULL))
#define DdlnJsonbFinishValue(st)	pushJsonbValue(st, WJB_END_OBJECT, NULL)
#endif

/*
 * DDL replication (replicate.c, apply.c): ownership of publications and
 * subscriptions (16 made one function of the per-kind checks), and
 * pg_subscription_rel's writers (17 added retain_lock to the first, 18
 * already_locked to the second; false keeps 15's behaviour).
 */
#if PG_VERSION_NUM >= 160000
#define DdlnPublicationOwnerCheck(pub, role)	object_ownercheck(PublicationRelationId, pub, role)
#define DdlnSubscriptionOwnerCheck(sub, role)	object_ownercheck(SubscriptionRelationId, sub, role)
#else
#define DdlnPublicationOwnerCheck(pub, role)	pg_publication_ownercheck(pub, role)
#define DdlnSubscriptionOwnerCheck(sub, role)	pg_subscription_ownercheck(sub, role)
#endif
#if PG_VERSION_NUM >= 170000
#define DdlnAddSubscriptionRelState(sub, rel, state, lsn) \
	AddSubscriptionRelState(sub, rel, state, lsn, false)
#else
#define DdlnAddSubscriptionRelState(sub, rel, state, lsn) \
	AddSubscriptionRelState(sub, rel, state, lsn)
#endif
#if PG_VERSION_NUM >= 180000
#define DdlnUpdateSubscriptionRelState(sub, rel, state, lsn) \
	UpdateSubscriptionRelState(sub, rel, state, lsn, false)
#else
#define DdlnUpdateSubscriptionRelState(sub, rel, state, lsn) \
	UpdateSubscriptionRelState(sub, rel, state, lsn)
#endif

/*
 * A signal handler passing its signal on to another (worker.c's SIGTERM to
 * die()): 19 added the sender's information to SIGNAL_ARGS.
 */
#if PG_VERSION_NUM >= 190000
#define DDLN_SIGNAL_ARGS_PASSED		postgres_signal_arg, pg_siginfo
#else
#define DDLN_SIGNAL_ARGS_PASSED		postgres_signal_arg
#endif

/*
 * The oldest xid whose status the clog still holds (read under
 * XactTruncationLock): 17 renamed ShmemVariableCache to TransamVariables.
 */
#if PG_VERSION_NUM >= 170000
#define DdlnOldestClogXid()		(TransamVariables->oldestClogXid)
#else
#define DdlnOldestClogXid()		(ShmemVariableCache->oldestClogXid)
#endif

#endif							/* DDLN_COMPAT_H */
