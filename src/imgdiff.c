/*-------------------------------------------------------------------------
 *
 * imgdiff.c
 *	  The changes between two relation images ("changes" in an event's
 *	  details), and the details {"before", "after", "changes"} of a row
 *	  (DdlnImageDetails).
 *
 * Rules kept here:
 * - Changes are computed between two images: columns matched by attnum,
 *	 constraints and indexes by name, a renamed one by its OID.  An index
 *	 that implements a constraint comes and goes with its constraint and
 *	 has no change of its own (ADD CONSTRAINT ... USING INDEX names the
 *	 index it took over in its change).  A constraint of the same OID
 *	 validated or made [NOT] DEFERRABLE is altered, not dropped and added:
 *	 its definition is printed again, never reused from "before"
 *	 (relimage.c).  What an index changes in place (its storage parameters,
 *	 the table's CLUSTER ON mark) is a change of its own, constraint's
 *	 index or not.
 * - A column's STORAGE and COMPRESSION that follow its new type (ALTER
 *	 COLUMN ... TYPE) are no change of their own: the consumer's ALTER
 *	 COLUMN ... TYPE does the same.
 * - ATTACH / DETACH PARTITION are written from the partition's own images,
 *	 before and after (imgcommand.c reads them): the partitioned table's
 *	 do not list its partitions.
 * - It reads no catalog: everything it compares is in the two images.
 * - "before" and "after" are left out of the details when NULL, "changes"
 *	 is there only with both.
 *
 * Floor: engine (capture's helper; relimage.h says how the image files
 * call each other): called by imgcommand.c; calls relimage.c and common.c.
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/jsonb.h"

#include "relimage.h"

/* ---------- changes ---------- */

static bool
DdlnSame(const char *a, const char *b)
{
	return (a == NULL || b == NULL) ? a == b : strcmp(a, b) == 0;
}

/* {"op": op, "column": column, [then the caller's keys]} opened */
static void
DdlnChangeBegin(DdlnJsonbState *st, const char *op, const char *column)
{
	DdlnJsonToken(st, WJB_BEGIN_OBJECT);
	DdlnJsonPair(st, "op", op);
	if (column)
		DdlnJsonPair(st, "column", column);
}

static void
DdlnChangeOldNew(DdlnJsonbState *st, const char *op, const char *column,
				 const char *old, const char *new)
{
	DdlnChangeBegin(st, op, column);
	DdlnJsonPair(st, "old", old);
	DdlnJsonPair(st, "new", new);
	DdlnJsonToken(st, WJB_END_OBJECT);
}

/* {"op": op, "column": column, "old": b, "new": a}: statistics targets, -1 null */
static void
DdlnChangeStatistics(DdlnJsonbState *st, const char *column, int b, int a)
{
	DdlnChangeBegin(st, "set statistics", column);
	DdlnJsonKey(st, "old");
	if (b < 0)
		DdlnJsonString(st, NULL);
	else
		DdlnJsonInt(st, b);
	DdlnJsonKey(st, "new");
	if (a < 0)
		DdlnJsonString(st, NULL);
	else
		DdlnJsonInt(st, a);
	DdlnJsonToken(st, WJB_END_OBJECT);
}

/*
 * A column's STORAGE, COMPRESSION and statistics target.  A new type
 * (ALTER COLUMN ... TYPE) gives the column its type's storage, and no
 * compression where it cannot be compressed: that is no change of its own.
 */
static void
DdlnDiffColumnStorage(DdlnJsonbState *st, const DdlnImgColumn *b, const DdlnImgColumn *a)
{
	bool		retyped = !DdlnSame(b->type, a->type);

	if (b->storage != a->storage && !(retyped && a->storage == a->type_storage))
		DdlnChangeOldNew(st, "set storage", a->name,
						 DdlnStorageName(b->storage), DdlnStorageName(a->storage));
	if (b->compression != a->compression && !(retyped && a->compression == '\0'))
		DdlnChangeOldNew(st, "set compression", a->name,
						 DdlnCompressionName(b->compression), DdlnCompressionName(a->compression));
	if (b->statistics != a->statistics)
		DdlnChangeStatistics(st, a->name, b->statistics, a->statistics);
}

static void
DdlnDiffColumn(DdlnJsonbState *st, const DdlnImgColumn *b, const DdlnImgColumn *a)
{
	if (!DdlnSame(b->name, a->name))
		DdlnChangeOldNew(st, "rename column", NULL, b->name, a->name);
	if (!DdlnSame(b->type, a->type))
		DdlnChangeOldNew(st, "alter column type", a->name, b->type, a->type);
	if (!DdlnSame(b->collation, a->collation))
		DdlnChangeOldNew(st, "set collation", a->name, b->collation, a->collation);
	if (b->not_null != a->not_null)
	{
		DdlnChangeBegin(st, a->not_null ? "set not null" : "drop not null", a->name);
		DdlnJsonToken(st, WJB_END_OBJECT);
	}
	else if (b->not_null_name && a->not_null_name)
	{
		if (strcmp(b->not_null_name, a->not_null_name) != 0)
			DdlnChangeOldNew(st, "rename constraint", NULL, b->not_null_name, a->not_null_name);
		/* VALIDATE CONSTRAINT of a column's NOT NULL (18) */
		if (b->not_null_not_valid && !a->not_null_not_valid)
		{
			DdlnChangeBegin(st, "validate constraint", NULL);
			DdlnJsonPair(st, "name", a->not_null_name);
			DdlnJsonToken(st, WJB_END_OBJECT);
		}
		/* ALTER CONSTRAINT ... [NO] INHERIT of a column's NOT NULL (18) */
		if (b->not_null_no_inherit != a->not_null_no_inherit)
		{
			DdlnChangeBegin(st, "set not null inherit", a->name);
			DdlnJsonPair(st, "name", a->not_null_name);
			DdlnJsonKey(st, "no_inherit");
			DdlnJsonBool(st, a->not_null_no_inherit);
			DdlnJsonToken(st, WJB_END_OBJECT);
		}
	}
	if (!DdlnSame(b->def, a->def))
	{
		if (a->def == NULL)
		{
			DdlnChangeBegin(st, "drop default", a->name);
			DdlnJsonPair(st, "old", b->def);
			DdlnJsonToken(st, WJB_END_OBJECT);
		}
		else
			DdlnChangeOldNew(st, "set default", a->name, b->def, a->def);
	}
	if (b->identity != a->identity)
	{
		if (b->identity == '\0')
		{
			DdlnChangeBegin(st, "add identity", a->name);
			DdlnJsonPair(st, "identity", DdlnIdentityName(a->identity));
			DdlnJsonToken(st, WJB_END_OBJECT);
		}
		else if (a->identity == '\0')
		{
			DdlnChangeBegin(st, "drop identity", a->name);
			DdlnJsonPair(st, "old", DdlnIdentityName(b->identity));
			DdlnJsonToken(st, WJB_END_OBJECT);
		}
		else
			DdlnChangeOldNew(st, "set identity", a->name,
							 DdlnIdentityName(b->identity), DdlnIdentityName(a->identity));
	}
	if (!DdlnSame(b->generated, a->generated))
	{
		if (a->generated == NULL)
		{
			DdlnChangeBegin(st, "drop expression", a->name);
			DdlnJsonPair(st, "old", b->generated);
			DdlnJsonToken(st, WJB_END_OBJECT);
		}
		else
			DdlnChangeOldNew(st, "set expression", a->name, b->generated, a->generated);
	}
	DdlnDiffColumnStorage(st, b, a);
}

static bool DdlnConstraintAltered(const DdlnImgPart *b, const DdlnImgPart *a);

/*
 * The part of "parts" (an image's constraints or indexes: sorted by name,
 * names unique) named "name", or with "name" NULL the one of OID "oid", or
 * NULL.  By name a binary search; by OID one through "byoid", the parts in
 * OID order (DdlnPartsByOid): a diff stays linear in the parts (n log n).
 */
typedef const DdlnImgPart *DdlnConstPartPtr;

#define ST_SORT ddln_sort_parts_by_oid
#define ST_ELEMENT_TYPE DdlnConstPartPtr
#define ST_COMPARE(a, b) (((*(a))->oid > (*(b))->oid) - ((*(a))->oid < (*(b))->oid))
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

static const DdlnImgPart **
DdlnPartsByOid(const DdlnImgPart *parts, int n)
{
	const DdlnImgPart **byoid = palloc(sizeof(DdlnImgPart *) * Max(n, 1));

	for (int i = 0; i < n; i++)
		byoid[i] = &parts[i];
	ddln_sort_parts_by_oid(byoid, n);	/* (pg_qsort's algorithm, inlined) */
	return byoid;
}

static const DdlnImgPart *
DdlnFindPart(const DdlnImgPart *parts, const DdlnImgPart **byoid, int n, const char *name,
			   Oid oid)
{
	int			lo = 0,
				hi = n - 1;

	while (lo <= hi)
	{
		int			mid = lo + (hi - lo) / 2;
		int			c;

		if (name)
			c = strcmp(parts[mid].name, name);
		else
			c = (byoid[mid]->oid > oid) - (byoid[mid]->oid < oid);
		if (c == 0)
			return name ? &parts[mid] : byoid[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

/*
 * Is a constraint or index of the same name another one now?  A constraint
 * whose definition changed, or that a child only inherited and has of its
 * own now (ADD CONSTRAINT merged it, NO INHERIT left it); an index rebuilt (another OID) with another
 * definition.  The same index keeps its OID while its definition text
 * follows a rename of its table: that is no change of the index.
 */
static bool
DdlnPartChanged(bool indexes, const DdlnImgPart *b, const DdlnImgPart *a)
{
	if (indexes)
		return b->oid != a->oid && !DdlnSame(b->definition, a->definition);
	if (DdlnConstraintAltered(b, a))
		return false;
	/* (an INHERITS child's constraint it only inherited, its own now too) */
	return !DdlnSame(b->definition, a->definition) || !DdlnSame(b->type, a->type) ||
		b->inherited != a->inherited;
}

/*
 * Was a constraint altered in place: the same one (OID) validated (VALIDATE
 * CONSTRAINT) or made [NOT] DEFERRABLE (ALTER CONSTRAINT)?
 */
static bool
DdlnConstraintAltered(const DdlnImgPart *b, const DdlnImgPart *a)
{
	return b->oid == a->oid &&
		(b->validated != a->validated || b->deferrable != a->deferrable ||
		 b->deferred != a->deferred);
}

/*
 * "validate constraint" {name} and "alter constraint" {name, deferrable,
 * deferred} of a constraint altered in place.
 */
static void
DdlnDiffConstraintFlags(DdlnJsonbState *st, const DdlnImgPart *b, const DdlnImgPart *a)
{
	if (b->deferrable != a->deferrable || b->deferred != a->deferred)
	{
		DdlnChangeBegin(st, "alter constraint", NULL);
		DdlnJsonPair(st, "name", a->name);
		DdlnJsonKey(st, "deferred");
		DdlnJsonBool(st, a->deferred);
		DdlnJsonKey(st, "deferrable");
		DdlnJsonBool(st, a->deferrable);
		DdlnJsonToken(st, WJB_END_OBJECT);
	}
	if (!b->validated && a->validated)
	{
		DdlnChangeBegin(st, "validate constraint", NULL);
		DdlnJsonPair(st, "name", a->name);
		DdlnJsonToken(st, WJB_END_OBJECT);
	}
}

/*
 * The same parts in both images, in the same order (each of the same OID
 * and name, neither changed nor altered in place): what DdlnDiffParts
 * would find no change in, without its sorts and searches (the common
 * case: an ADD COLUMN of a table with many indexes).
 */
static bool
DdlnPartsUnchanged(bool indexes, const DdlnImgPart *bp, int bn, const DdlnImgPart *ap, int an)
{
	if (bn != an)
		return false;
	for (int i = 0; i < an; i++)
	{
		if (bp[i].oid != ap[i].oid || strcmp(bp[i].name, ap[i].name) != 0 ||
			DdlnConstraintAltered(&bp[i], &ap[i]) || DdlnPartChanged(indexes, &bp[i], &ap[i]))
			return false;
	}
	return true;
}

/*
 * Constraints or indexes: renamed (same OID, other name), dropped, added,
 * or changed (same name, other definition: dropped and added again).
 * Indexes of a constraint are left out.
 */
static void
DdlnDiffParts(DdlnJsonbState *st, bool indexes,
			  const DdlnImgPart *bp, int bn, const DdlnImgPart *ap, int an,
			  const DdlnImage *b)
{
	const char *rename_op = indexes ? "rename index" : "rename constraint";
	const char *drop_op = indexes ? "drop index" : "drop constraint";
	const char *add_op = indexes ? "add index" : "add constraint";
	const DdlnImgPart **bp_oid;
	const DdlnImgPart **ap_oid;
	const DdlnImgPart **bi_oid = NULL;	/* b's indexes by OID, when needed */

	if (DdlnPartsUnchanged(indexes, bp, bn, ap, an))
		return;
	bp_oid = DdlnPartsByOid(bp, bn);
	ap_oid = DdlnPartsByOid(ap, an);

	/* renames: in the new name order */
	for (int i = 0; i < an; i++)
	{
		const DdlnImgPart *old = DdlnFindPart(bp, bp_oid, bn, NULL, ap[i].oid);

		if (indexes && ap[i].constraint)
			continue;
		if (old && strcmp(old->name, ap[i].name) != 0 &&
			DdlnFindPart(ap, ap_oid, an, old->name, InvalidOid) == NULL)
			DdlnChangeOldNew(st, rename_op, NULL, old->name, ap[i].name);
	}
	/* dropped, or changed: in name order */
	for (int i = 0; i < bn; i++)
	{
		const DdlnImgPart *now = DdlnFindPart(ap, ap_oid, an, bp[i].name, InvalidOid);
		const DdlnImgPart *renamed = DdlnFindPart(ap, ap_oid, an, NULL, bp[i].oid);

		if (indexes && (bp[i].constraint || (now && now->constraint)))
			continue;
		if (now == NULL && renamed != NULL &&
			DdlnFindPart(ap, ap_oid, an, bp[i].name, InvalidOid) == NULL)
			continue;			/* renamed, above */
		if (now == NULL || DdlnPartChanged(indexes, &bp[i], now))
		{
			DdlnChangeBegin(st, drop_op, NULL);
			DdlnJsonPair(st, "name", bp[i].name);
			DdlnJsonToken(st, WJB_END_OBJECT);
		}
	}
	/* added, or changed */
	for (int i = 0; i < an; i++)
	{
		const DdlnImgPart *was = DdlnFindPart(bp, bp_oid, bn, ap[i].name, InvalidOid);
		const DdlnImgPart *renamed = DdlnFindPart(bp, bp_oid, bn, NULL, ap[i].oid);

		if (indexes && (ap[i].constraint || (was && was->constraint)))
			continue;
		if (was == NULL && renamed != NULL)
			continue;			/* renamed, above */
		if (!indexes && was && DdlnConstraintAltered(was, &ap[i]))
			DdlnDiffConstraintFlags(st, was, &ap[i]);
		else if (was == NULL || DdlnPartChanged(indexes, was, &ap[i]))
		{
			const DdlnImgPart *taken = NULL;

			DdlnChangeBegin(st, add_op, NULL);
			DdlnJsonKey(st, indexes ? "index" : "constraint");
			if (indexes)
				DdlnImgPushIndex(st, &ap[i]);
			else
				DdlnImgPushConstraint(st, &ap[i]);

			/*
			 * ADD CONSTRAINT ... USING INDEX: the constraint took over an
			 * index the table had (and gave it its name)
			 */
			if (!indexes && OidIsValid(ap[i].indexid))
			{
				if (bi_oid == NULL)
					bi_oid = DdlnPartsByOid(b->indexes, b->nindexes);
				taken = DdlnFindPart(b->indexes, bi_oid, b->nindexes, NULL, ap[i].indexid);
			}
			if (taken && taken->constraint == NULL)
				DdlnJsonPair(st, "using_index", taken->name);
			DdlnJsonToken(st, WJB_END_OBJECT);
		}
	}
}

/* The index of "parts" marked clustered (CLUSTER ON), or NULL. */
static const DdlnImgPart *
DdlnClusteredIndex(const DdlnImgPart *parts, int n)
{
	for (int i = 0; i < n; i++)
	{
		if (parts[i].clustered)
			return &parts[i];
	}
	return NULL;
}

/*
 * What ALTER TABLE and ALTER INDEX change of an index in place (the same
 * OID), after the indexes' adds and drops: its storage parameters (ALTER
 * INDEX ... SET / RESET: "set index reloptions"), and which index the
 * table is clustered on (CLUSTER ON: "cluster on", SET WITHOUT CLUSTER:
 * "set without cluster").  An index rebuilt under another OID with the
 * same name (ALTER COLUMN ... TYPE) keeps its mark: no change; a clustered
 * index dropped takes its mark with it: no change either.
 */
static void
DdlnDiffIndexesInPlace(DdlnJsonbState *st, const DdlnImage *b, const DdlnImage *a)
{
	const DdlnImgPart **b_oid = DdlnPartsByOid(b->indexes, b->nindexes);
	const DdlnImgPart **a_oid = DdlnPartsByOid(a->indexes, a->nindexes);
	const DdlnImgPart *bc = DdlnClusteredIndex(b->indexes, b->nindexes);
	const DdlnImgPart *ac = DdlnClusteredIndex(a->indexes, a->nindexes);

	for (int i = 0; i < a->nindexes; i++)
	{
		const DdlnImgPart *was = DdlnFindPart(b->indexes, b_oid, b->nindexes, NULL,
											  a->indexes[i].oid);

		if (was == NULL || DdlnImgSameStrings(was->reloptions, a->indexes[i].reloptions))
			continue;
		DdlnChangeBegin(st, "set index reloptions", NULL);
		DdlnJsonPair(st, "name", a->indexes[i].name);
		DdlnJsonKey(st, "old");
		DdlnImgPushStrings(st, was->reloptions);
		DdlnJsonKey(st, "new");
		DdlnImgPushStrings(st, a->indexes[i].reloptions);
		DdlnJsonToken(st, WJB_END_OBJECT);
	}
	if (ac && !(bc && (bc->oid == ac->oid || strcmp(bc->name, ac->name) == 0)))
	{
		DdlnChangeBegin(st, "cluster on", NULL);
		DdlnJsonPair(st, "name", ac->name);
		DdlnJsonToken(st, WJB_END_OBJECT);
	}
	else if (ac == NULL && bc &&
			 (DdlnFindPart(a->indexes, a_oid, a->nindexes, NULL, bc->oid) ||
			  DdlnFindPart(a->indexes, a_oid, a->nindexes, bc->name, InvalidOid)))
	{
		DdlnChangeBegin(st, "set without cluster", NULL);
		DdlnJsonPair(st, "name", bc->name);
		DdlnJsonToken(st, WJB_END_OBJECT);
	}
}

/*
 * ALTER TABLE ... ATTACH PARTITION / DETACH PARTITION: a partition's
 * images ("pb" before the command, "pa" after it) say it became a
 * partition of "a", or stopped being one of "b".
 */
static void
DdlnDiffPartition(DdlnJsonbState *st, const DdlnImage *b, const DdlnImage *a,
				  const DdlnImage *pb, const DdlnImage *pa)
{
	bool		was = pb->parent_name && strcmp(pb->parent_name, b->name) == 0 &&
		strcmp(pb->parent_schema, b->schema) == 0;
	bool		is = pa->parent_name && strcmp(pa->parent_name, a->name) == 0 &&
		strcmp(pa->parent_schema, a->schema) == 0;

	if (was == is)
		return;
	DdlnChangeBegin(st, is ? "attach partition" : "detach partition", NULL);
	DdlnJsonKey(st, "partition");
	DdlnJsonToken(st, WJB_BEGIN_OBJECT);
	DdlnJsonPair(st, "name", pa->name);
	DdlnJsonPair(st, "schema", pa->schema);
	DdlnJsonToken(st, WJB_END_OBJECT);
	if (is)
		DdlnJsonPair(st, "bound", pa->partition_bound);
	DdlnJsonToken(st, WJB_END_OBJECT);
}

/* {"op": "set sequence option", "option": option, "old": b, "new": a} */
static void
DdlnChangeSeqOption(DdlnJsonbState *st, const char *option, int64 b, int64 a)
{
	if (b == a)
		return;
	DdlnChangeBegin(st, "set sequence option", NULL);
	DdlnJsonPair(st, "option", option);
	DdlnJsonKey(st, "old");
	DdlnJsonInt(st, b);
	DdlnJsonKey(st, "new");
	DdlnJsonInt(st, a);
	DdlnJsonToken(st, WJB_END_OBJECT);
}

/* A sequence's changes: each parameter, then its owner. */
static void
DdlnImgPushSequenceChanges(DdlnJsonbState *st, const DdlnImgSequence *b,
						   const DdlnImgSequence *a)
{
	if (!DdlnSame(b->type, a->type))
	{
		DdlnChangeBegin(st, "set sequence option", NULL);
		DdlnJsonPair(st, "option", "type");
		DdlnJsonPair(st, "old", b->type);
		DdlnJsonPair(st, "new", a->type);
		DdlnJsonToken(st, WJB_END_OBJECT);
	}
	DdlnChangeSeqOption(st, "start", b->start, a->start);
	DdlnChangeSeqOption(st, "increment", b->increment, a->increment);
	DdlnChangeSeqOption(st, "min", b->min, a->min);
	DdlnChangeSeqOption(st, "max", b->max, a->max);
	DdlnChangeSeqOption(st, "cache", b->cache, a->cache);
	if (b->cycle != a->cycle)
	{
		DdlnChangeBegin(st, "set sequence option", NULL);
		DdlnJsonPair(st, "option", "cycle");
		DdlnJsonKey(st, "old");
		DdlnJsonBool(st, b->cycle);
		DdlnJsonKey(st, "new");
		DdlnJsonBool(st, a->cycle);
		DdlnJsonToken(st, WJB_END_OBJECT);
	}
	if (!DdlnSame(b->owner_schema, a->owner_schema) || !DdlnSame(b->owner_name, a->owner_name) ||
		!DdlnSame(b->owner_column, a->owner_column) || b->owner_identity != a->owner_identity)
	{
		DdlnChangeBegin(st, "set owned by", NULL);
		DdlnJsonKey(st, "old");
		DdlnImgPushOwner(st, b);
		DdlnJsonKey(st, "new");
		DdlnImgPushOwner(st, a);
		DdlnJsonToken(st, WJB_END_OBJECT);
	}
}

/*
 * A table's storage parameters (SET (...), RESET (...)), INHERITS parents
 * (INHERIT, NO INHERIT) and type (OF, NOT OF).
 */
static void
DdlnDiffTableSettings(DdlnJsonbState *st, const DdlnImage *b, const DdlnImage *a)
{
	/* storage parameters: SET (...) and RESET (...) */
	if (!DdlnImgSameStrings(b->reloptions, a->reloptions))
	{
		DdlnChangeBegin(st, "set reloptions", NULL);
		DdlnJsonKey(st, "old");
		DdlnImgPushStrings(st, b->reloptions);
		DdlnJsonKey(st, "new");
		DdlnImgPushStrings(st, a->reloptions);
		DdlnJsonToken(st, WJB_END_OBJECT);
	}

	/* INHERITS parents: ALTER TABLE ... INHERIT / NO INHERIT */
	if (!DdlnImgSameStrings(b->inherits, a->inherits))
	{
		DdlnChangeBegin(st, "set inherits", NULL);
		DdlnJsonKey(st, "old");
		DdlnImgPushInherits(st, b);
		DdlnJsonKey(st, "new");
		DdlnImgPushInherits(st, a);
		DdlnJsonToken(st, WJB_END_OBJECT);
	}

	/* a typed table's type: ALTER TABLE ... OF type / NOT OF */
	if (!DdlnSame(b->oftype_schema, a->oftype_schema) || !DdlnSame(b->oftype_name, a->oftype_name))
	{
		DdlnChangeBegin(st, "set of type", NULL);
		DdlnJsonKey(st, "old");
		DdlnImgPushOfType(st, b);
		DdlnJsonKey(st, "new");
		DdlnImgPushOfType(st, a);
		DdlnJsonToken(st, WJB_END_OBJECT);
	}
}

/*
 * The changes from "b" to "a", as the next value of "st" (an array);
 * "partitions": the images of the partitions the command attached or
 * detached, each before then after (DdlnImageDetails).
 */
static void
DdlnImgPushChanges(DdlnJsonbState *st, const DdlnImage *b, const DdlnImage *a,
				   List *partitions)
{
	int			i = 0,
				j = 0;

	DdlnJsonToken(st, WJB_BEGIN_ARRAY);
	if (strcmp(b->name, a->name) != 0)
		DdlnChangeOldNew(st, "rename", NULL, b->name, a->name);
	if (strcmp(b->schema, a->schema) != 0)
		DdlnChangeOldNew(st, "set schema", NULL, b->schema, a->schema);
	if (b->unlogged != a->unlogged)
	{
		DdlnChangeBegin(st, a->unlogged ? "set unlogged" : "set logged", NULL);
		DdlnJsonToken(st, WJB_END_OBJECT);
	}
	if (b->seq && a->seq)
	{
		DdlnImgPushSequenceChanges(st, b->seq, a->seq);
		DdlnJsonToken(st, WJB_END_ARRAY);
		return;
	}

	/* columns by attnum: both lists are in attnum order */
	while (i < b->ncolumns || j < a->ncolumns)
	{
		if (j >= a->ncolumns ||
			(i < b->ncolumns && b->columns[i].attnum < a->columns[j].attnum))
		{
			DdlnChangeBegin(st, "drop column", b->columns[i].name);
			DdlnJsonToken(st, WJB_END_OBJECT);
			i++;
		}
		else if (i >= b->ncolumns || a->columns[j].attnum < b->columns[i].attnum)
		{
			DdlnChangeBegin(st, "add column", NULL);
			DdlnJsonKey(st, "column");
			DdlnImgPushColumn(st, &a->columns[j]);
			DdlnJsonToken(st, WJB_END_OBJECT);
			j++;
		}
		else
			DdlnDiffColumn(st, &b->columns[i++], &a->columns[j++]);
	}

	DdlnDiffParts(st, false, b->constraints, b->nconstraints, a->constraints, a->nconstraints, b);
	DdlnDiffParts(st, true, b->indexes, b->nindexes, a->indexes, a->nindexes, b);
	DdlnDiffIndexesInPlace(st, b, a);

	/* a view's or materialized view's query (CREATE OR REPLACE VIEW) */
	if (b->definition && a->definition && strcmp(b->definition, a->definition) != 0)
		DdlnChangeOldNew(st, "set definition", NULL, b->definition, a->definition);

	if (b->replident != a->replident || !DdlnSame(b->replident_index, a->replident_index))
	{
		DdlnChangeBegin(st, "set replica identity", NULL);
		DdlnJsonPair(st, "old", DdlnReplIdentName(b->replident));
		DdlnJsonPair(st, "new", DdlnReplIdentName(a->replident));
		DdlnJsonPair(st, "old_index", b->replident_index);
		DdlnJsonPair(st, "new_index", a->replident_index);
		DdlnJsonToken(st, WJB_END_OBJECT);
	}

	DdlnDiffTableSettings(st, b, a);

	/* partitions attached or detached */
	for (int k = 0; k + 1 < list_length(partitions); k += 2)
		DdlnDiffPartition(st, b, a, list_nth(partitions, k), list_nth(partitions, k + 1));
	DdlnJsonToken(st, WJB_END_ARRAY);
}

/* Is this pair's key "key"? */
static bool
DdlnJvKeyIs(const JsonbPair *pair, const char *key)
{
	return pair->key.val.string.len == (int) strlen(key) &&
		memcmp(pair->key.val.string.val, key, pair->key.val.string.len) == 0;
}

/*
 * {"before": ..., "after": ..., "changes": [...]}: "before" and "after"
 * left out when NULL, "changes" only with both ("partitions": images of
 * the partitions an ATTACH or DETACH PARTITION named, each before then
 * after, or NIL); after the keys of "with"
 * (an object, or NULL), as jsonb_concat(with, images) would have them,
 * without building the images twice.  The images are JsonbValue trees
 * (DdlnImgImageValue; "after" shares the values of the parts "before" has
 * unchanged) set into the object the pushes built, then serialised once
 * (DdlnJvToJsonb: a shared part written once, its bytes copied).
 */
Jsonb *
DdlnImageDetails(const DdlnImage *before, const DdlnImage *after, List *partitions,
				 Jsonb *with)
{
	DdlnJsonbState st = DDLN_JSONB_STATE_INIT;
	JsonbValue *pushed;
	JsonbValue *obj;
	JsonbValue *beforevalue = NULL;

	DdlnJsonToken(&st, WJB_BEGIN_OBJECT);
	if (with)
	{
		JsonbIterator *it = JsonbIteratorInit(&with->root);
		JsonbValue	v;
		JsonbIteratorToken tok;

		/* its top-level pairs, a container as one value (pushed whole) */
		(void) JsonbIteratorNext(&it, &v, true);	/* WJB_BEGIN_OBJECT */
		while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_END_OBJECT)
			DdlnJsonbPush(&st, tok, &v);
	}
	if (before && after)
	{
		DdlnJsonKey(&st, "changes");
		DdlnImgPushChanges(&st, before, after, partitions);
	}
	pushed = DdlnJsonbFinishValue(&st);

	/* the pushed pairs but a "before" or "after" of "with" (the images win) */
	obj = DdlnJvObject(pushed->val.object.nPairs + 2);
	for (int i = 0; i < pushed->val.object.nPairs; i++)
	{
		JsonbPair  *pair = &pushed->val.object.pairs[i];

		if ((before && DdlnJvKeyIs(pair, "before")) || (after && DdlnJvKeyIs(pair, "after")))
			continue;
		obj->val.object.pairs[obj->val.object.nPairs++] = *pair;
	}
	if (before)
	{
		beforevalue = DdlnImgImageValue(before, NULL, NULL);
		DdlnJvAdd(obj, "before", beforevalue);
	}
	if (after)
		DdlnJvAdd(obj, "after", DdlnImgImageValue(after, before, beforevalue));
	return DdlnJvToJsonb(DdlnJvDone(obj));
}
