/*-------------------------------------------------------------------------
 *
 * imgcommand.c
 *	  Which relation images a command's rows carry: "before" of ALTER and
 *	  the other commands that change a relation, read at ddl_command_start
 *	  (DdlnImageCommandStart), and at ddl_command_end the details of each
 *	  row (DdlnImageForRow): "before", "after" and "changes".
 *
 * Rules kept here:
 * - With ddl_notify.capture_changes off nothing here runs: no image is
 *	 read, no lock taken, no key written.
 * - "before" of ALTER TABLE, ALTER SEQUENCE, RENAME, ALTER ... SET SCHEMA,
 *	 CREATE OR REPLACE VIEW, CREATE INDEX, ALTER INDEX and ALTER INDEX
 *	 RENAME is read at ddl_command_start, only for the relation the
 *	 command names (an index's: its table), after taking the lock the
 *	 command itself will take (on the index for ALTER INDEX, which locks
 *	 nothing else: its table, whose image it is, is locked in
 *	 AccessShareLock before the index and only while the image is read,
 *	 in PostgreSQL's order, a table before its indexes, which a DROP INDEX
 *	 also keeps; ALTER INDEX RENAME of a table renames the table as ALTER
 *	 TABLE does), and for the partition an ALTER TABLE ... ATTACH or
 *	 DETACH PARTITION names (not CONCURRENTLY, which commits on its way),
 *	 so that nothing changes it between the image and the command.  The
 *	 lock is taken only after the name resolved to a relation the user
 *	 owns: a user cannot make us wait on (or hold) a lock on a relation the
 *	 command would refuse to touch.  A relation that does not exist, is not
 *	 the user's, is temporary (unless ddl_notify.capture_temp) or the
 *	 extension's own is skipped: never an error of ours.  The images wait,
 *	 in a list that lives in the transaction's memory, for ddl_command_end,
 *	 which takes them by OID; the transaction's end forgets them (an xact
 *	 callback registered here at first use).
 * - A command that reports the same relation in several rows has its
 *	 images in its first row only: a consumer applies each change once.
 * - Every ddl_command_end row of a sequence has "after", even without
 *	 "before" and in a second row of the same command: PostgreSQL reports a
 *	 serial column's sequence twice in a CREATE TABLE (CREATE, then OWNED
 *	 BY), and an identity's sequence altered through ALTER TABLE under no
 *	 name of its own.  Reading one costs a syscache lookup and an index
 *	 scan of the sequence's own pg_depend rows.
 * - A domain's or an enum's row (or a domain constraint's) carries its
 *	 type's "after" (relimage.c, DdlnTypeImageDetails).
 *
 * Floor: engine (capture's helper; relimage.h says how the image files
 * call each other): called by capture.c; calls imgdiff.c, relimage.c and
 * common.c.
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/catalog.h"
#include "catalog/index.h"
#include "catalog/namespace.h"
#include "catalog/pg_constraint.h"
#include "catalog/pg_namespace.h"
#include "commands/tablecmds.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "storage/lmgr.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "relimage.h"

/* "before" images of the running command, read at ddl_command_start */
static MemoryContext pending_cxt = NULL;
static List *pending = NIL;		/* of DdlnImage * */
static List *given = NIL;		/* relations whose images a row of the
								 * command carries already */
static List *partitions = NIL;	/* "before" of the partitions an ALTER
								 * TABLE ... ATTACH / DETACH PARTITION names */

static bool xact_callback_registered = false;

/* The transaction's end forgets the images: they lived in its memory. */
static void
DdlnImageXactCallback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			/* the context goes with TopTransactionContext */
			pending_cxt = NULL;
			pending = NIL;
			given = NIL;
			partitions = NIL;
			break;
		default:
			break;
	}
}

static void
DdlnImageRegisterCallback(void)
{
	if (!xact_callback_registered)
	{
		RegisterXactCallback(DdlnImageXactCallback, NULL);
		xact_callback_registered = true;
	}
}

/* ---------- "before" at ddl_command_start ---------- */

/*
 * Lock the relation "rv" names with "lockmode" (the lock the command will
 * take), resolving the name again once locked; InvalidOid (nothing locked)
 * when it names no relation of ours to read, or none the user owns.  With
 * "index", rv names an index (ALTER INDEX): its table is locked first, in
 * AccessShareLock, as PostgreSQL locks a table before its indexes (DROP
 * INDEX, REINDEX): holding the index while waiting for its table would
 * deadlock with a DROP INDEX that holds the table.  "*table" is then the
 * table, for the caller to unlock once the image is read.
 */
static Oid
DdlnImageLockNamed(RangeVar *rv, LOCKMODE lockmode, bool index, Oid *table)
{
	Oid			relid = RangeVarGetRelid(rv, NoLock, true);

	*table = InvalidOid;
	for (int tries = 0;; tries++)
	{
		Oid			again;
		char		relkind = get_rel_relkind(relid);

		if (!OidIsValid(relid) ||
			!(index ? (relkind == RELKIND_INDEX || relkind == RELKIND_PARTITIONED_INDEX) :
			  DdlnImageKind(relkind)))
			return InvalidOid;
		/* not the user's: the command will refuse it; no lock of ours on it */
		if (!DdlnRelationOwnerCheck(relid, GetUserId()) || IsCatalogRelationOid(relid))
			return InvalidOid;
		if (index)
		{
			*table = IndexGetRelation(relid, true);
			if (!OidIsValid(*table))
				return InvalidOid;
			LockRelationOid(*table, AccessShareLock);
		}
		LockRelationOid(relid, lockmode);
		/* the name may have moved while we waited (RangeVarGetRelidExtended does the same) */
		again = RangeVarGetRelid(rv, NoLock, true);
		/* (an index that is still there is still its table's: none moves) */
		if (again == relid && SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
			return relid;
		UnlockRelationOid(relid, lockmode);
		if (index)
			UnlockRelationOid(*table, AccessShareLock);
		*table = InvalidOid;
		if (tries >= 3)
			return InvalidOid;
		relid = again;
	}
}

/*
 * Read the image of the relation "rv" names, after taking "lockmode" on it
 * (DdlnImageLockNamed), and keep it for ddl_command_end in "*into"
 * (pending, or partitions).  With "index", rv names an index (ALTER
 * INDEX): the index is locked, the image is its table's.
 */
static void
DdlnImageRemember(RangeVar *rv, LOCKMODE lockmode, bool index, List **into)
{
	Oid			relid;
	Oid			table;
	MemoryContext old;
	DdlnImage  *img;

	if (rv == NULL)
		return;
	relid = DdlnImageLockNamed(rv, lockmode, index, &table);
	/* an index: the image is its table's (the command locks the index only) */
	if (index)
		relid = table;
	if (OidIsValid(relid) && DdlnImageKind(get_rel_relkind(relid)) && !DdlnImageSkipped(relid))
	{
		DdlnImageRegisterCallback();
		if (pending_cxt == NULL)
			pending_cxt = AllocSetContextCreate(TopTransactionContext, "ddl_notify before images",
												ALLOCSET_SMALL_SIZES);
		old = MemoryContextSwitchTo(pending_cxt);
		img = DdlnImageRead(relid, NULL, false);
		if (img)
			*into = lappend(*into, img);
		MemoryContextSwitchTo(old);
	}
	/* the table's lock was ours alone: kept no longer than the reading */
	if (OidIsValid(table))
		UnlockRelationOid(table, AccessShareLock);
}

/*
 * "before" of the partition an ALTER TABLE ... ATTACH PARTITION, DETACH
 * PARTITION or DETACH PARTITION ... FINALIZE names, under the lock the
 * command takes on it (ATExecAttachPartition, ATExecDetachPartition), read
 * after the partitioned table's.  Not DETACH ... CONCURRENTLY: it commits
 * on its way, and no image survives to its end.
 */
static void
DdlnImageRememberPartitions(List *cmds)
{
	ListCell   *lc;

	foreach(lc, cmds)
	{
		AlterTableCmd *cmd = (AlterTableCmd *) lfirst(lc);
		PartitionCmd *pc;

		if (cmd->subtype != AT_AttachPartition && cmd->subtype != AT_DetachPartition &&
			cmd->subtype != AT_DetachPartitionFinalize)
			continue;
		pc = (PartitionCmd *) cmd->def;
		if (pc == NULL || !IsA(pc, PartitionCmd) || pc->concurrent)
			continue;
		DdlnImageRemember(pc->name, AccessExclusiveLock, false, &partitions);
	}
}

/* "before" of a RENAME of a relation, a column, a constraint or an index. */
static void
DdlnImageRememberRename(RenameStmt *stmt)
{
	ObjectType	type = stmt->renameType;

	/* RENAME COLUMN (ATTRIBUTE) says on what; RENAME CONSTRAINT does not */
	if (type == OBJECT_COLUMN || type == OBJECT_ATTRIBUTE)
		type = stmt->relationType;
	else if (type == OBJECT_TABCONSTRAINT)
		type = OBJECT_TABLE;
	if (type == OBJECT_TABLE || type == OBJECT_VIEW || type == OBJECT_MATVIEW ||
		type == OBJECT_FOREIGN_TABLE || type == OBJECT_SEQUENCE ||
		(type == OBJECT_TYPE && stmt->relation != NULL))
		DdlnImageRemember(stmt->relation, AccessExclusiveLock, false, &pending);
	else if (stmt->renameType == OBJECT_INDEX)
	{
		/*
		 * ALTER INDEX RENAME locks an index so (RenameRelation); named a
		 * table, it renames the table, under the lock ALTER TABLE RENAME
		 * takes
		 */
		Oid			relid = RangeVarGetRelid(stmt->relation, NoLock, true);

		if (OidIsValid(relid) && DdlnImageKind(get_rel_relkind(relid)))
			DdlnImageRemember(stmt->relation, AccessExclusiveLock, false, &pending);
		else
			DdlnImageRemember(stmt->relation, ShareUpdateExclusiveLock, true, &pending);
	}
}

/*
 * ddl_command_start: forget the images of an earlier command, then read
 * "before" for the commands that change a relation in place.
 */
void
DdlnImageCommandStart(Node *parsetree)
{
	if (pending_cxt)
		MemoryContextReset(pending_cxt);
	pending = NIL;
	given = NIL;
	partitions = NIL;
	if (!ddln_capture_changes || parsetree == NULL)
		return;

	switch (nodeTag(parsetree))
	{
		case T_AlterTableStmt:
			{
				AlterTableStmt *stmt = (AlterTableStmt *) parsetree;

				if (stmt->objtype == OBJECT_TABLE || stmt->objtype == OBJECT_VIEW ||
					stmt->objtype == OBJECT_MATVIEW || stmt->objtype == OBJECT_FOREIGN_TABLE ||
					stmt->objtype == OBJECT_SEQUENCE || stmt->objtype == OBJECT_TYPE)
					DdlnImageRemember(stmt->relation, AlterTableGetLockLevel(stmt->cmds), false,
									  &pending);
				/* ALTER INDEX (SET, RESET ...) locks the index only */
				else if (stmt->objtype == OBJECT_INDEX)
					DdlnImageRemember(stmt->relation, AlterTableGetLockLevel(stmt->cmds), true,
									  &pending);
				if (stmt->objtype == OBJECT_TABLE && pending != NIL)
					DdlnImageRememberPartitions(stmt->cmds);
				break;
			}
		case T_AlterSeqStmt:
			/* the lock AlterSequence takes */
			DdlnImageRemember(((AlterSeqStmt *) parsetree)->sequence, ShareRowExclusiveLock,
							  false, &pending);
			break;
		case T_RenameStmt:
			DdlnImageRememberRename((RenameStmt *) parsetree);
			break;
		case T_AlterObjectSchemaStmt:
			{
				AlterObjectSchemaStmt *stmt = (AlterObjectSchemaStmt *) parsetree;

				if (stmt->objectType == OBJECT_TABLE || stmt->objectType == OBJECT_VIEW ||
					stmt->objectType == OBJECT_MATVIEW ||
					stmt->objectType == OBJECT_FOREIGN_TABLE ||
					stmt->objectType == OBJECT_SEQUENCE)
					DdlnImageRemember(stmt->relation, AccessExclusiveLock, false, &pending);
				break;
			}
		case T_IndexStmt:
			{
				IndexStmt  *stmt = (IndexStmt *) parsetree;

				/*
				 * the lock DefineIndex takes on the table; not CONCURRENTLY,
				 * which commits inside: no image would survive to its end
				 */
				if (!stmt->concurrent)
					DdlnImageRemember(stmt->relation, ShareLock, false, &pending);
				break;
			}
		case T_ViewStmt:
			{
				ViewStmt   *stmt = (ViewStmt *) parsetree;

				if (stmt->replace)
					DdlnImageRemember(stmt->view, AccessExclusiveLock, false, &pending);
				break;
			}
		default:
			break;
	}
}

/*
 * The partitions an ATTACH or DETACH PARTITION named (DdlnImageCommandStart
 * read their "before"): each "before", then its image now, for the
 * partitioned table's row (imgdiff.c writes "attach partition" or "detach
 * partition" from them).  PostgreSQL reports the command as the
 * partitioned table's alone.
 */
static List *
DdlnImagePartitionsNow(void)
{
	List	   *pairs = NIL;
	ListCell   *lc;

	foreach(lc, partitions)
	{
		DdlnImage  *pb = (DdlnImage *) lfirst(lc);
		DdlnImage  *pa = DdlnImageRead(pb->relid, NULL, false);

		if (pa)
			pairs = lappend(lappend(pairs, pb), pa);
	}
	return pairs;
}

/*
 * The row's "details" (an object, or NULL) with "before", "after" and
 * "changes" of the relation a ddl_command_end row is about (an index's, a
 * constraint's: their table's), or "details" alone: "before" if
 * ddl_command_start read one, "after" then, or for a relation the command
 * created.  A command that reports the same relation in several rows (ALTER
 * TABLE with some subcommands, CREATE OR REPLACE VIEW) has them in its
 * first row only: a consumer applies each change once.  A sequence's rows
 * have "after" each: a CREATE TABLE reports its serial column's sequence
 * twice (CREATE, then the ALTER SEQUENCE ... OWNED BY PostgreSQL adds), and
 * an ALTER TABLE of an identity column reports its sequence without naming
 * it (no "before" then); "before" and "changes" go with the first row.
 */
Jsonb *
DdlnImageForRow(Oid classid, Oid objid, int32 objsubid, const char *tag, Jsonb *details)
{
	Oid			relid;
	DdlnImage  *before = NULL;
	ListCell   *lc;
	MemoryContext old;
	bool		sequence;

	/* a domain's constraint (RENAME CONSTRAINT): its domain's image */
	if (classid == ConstraintRelationId)
	{
		HeapTuple	tup = SearchSysCache1(CONSTROID, ObjectIdGetDatum(objid));

		if (HeapTupleIsValid(tup))
		{
			Oid			typid = ((Form_pg_constraint) GETSTRUCT(tup))->contypid;

			ReleaseSysCache(tup);
			if (OidIsValid(typid))
			{
				classid = TypeRelationId;
				objid = typid;
			}
		}
	}
	if (classid == TypeRelationId)
	{
		char		typtype = get_typtype(objid);

		if (typtype == TYPTYPE_DOMAIN || typtype == TYPTYPE_ENUM)
			return DdlnDetailsWith(details, DdlnTypeImageDetails(objid, typtype));
	}
	relid = DdlnImageRelationOf(classid, objid);
	if (!OidIsValid(relid))
		return details;
	sequence = (get_rel_relkind(relid) == RELKIND_SEQUENCE);
	if (list_member_oid(given, relid))
	{
		if (!sequence)
			return details;
		return DdlnImageDetails(NULL, DdlnImageRead(relid, NULL, false), NIL, details);
	}
	foreach(lc, pending)
	{
		if (((DdlnImage *) lfirst(lc))->relid == relid)
			before = (DdlnImage *) lfirst(lc);
	}
	if (before == NULL && !(sequence && relid == objid) &&
		!(classid == RelationRelationId && relid == objid && objsubid == 0 &&
		  (strncmp(tag, "CREATE ", 7) == 0 || strcmp(tag, "SELECT INTO") == 0)) &&
		!(classid == TypeRelationId && strcmp(tag, "CREATE TYPE") == 0 &&
		  get_rel_relkind(relid) == RELKIND_COMPOSITE_TYPE))
		return details;
	/* (capture left out the rows of the extension's own and temporary objects) */

	DdlnImageRegisterCallback();
	if (pending_cxt == NULL)
		pending_cxt = AllocSetContextCreate(TopTransactionContext, "ddl_notify before images",
											ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(pending_cxt);
	given = lappend_oid(given, relid);
	MemoryContextSwitchTo(old);
	return DdlnImageDetails(before, DdlnImageRead(relid, before, false),
							before ? DdlnImagePartitionsNow() : NIL, details);
}

/* ddl_command_end is done with the images of its command. */
void
DdlnImageForgetBefore(void)
{
	if (pending_cxt)
		MemoryContextReset(pending_cxt);
	pending = NIL;
	given = NIL;
	partitions = NIL;
}

