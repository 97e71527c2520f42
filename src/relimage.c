/*-------------------------------------------------------------------------
 *
 * relimage.c
 *	  Reading an object into an image: the shape of a table, partitioned
 *	  table, view, materialized view, foreign table, sequence or composite
 *	  type ("before" and "after" in an event's details; docs/reference.md,
 *	  "The payload"), and the "after" image of a domain or an enum
 *	  (DdlnTypeImageDetails: base type, collation, default, NOT NULL and
 *	  CHECK constraints; labels in order).  imgdiff.c computes the changes
 *	  between two images, imgcommand.c and imgdrop.c decide when an image
 *	  is read (relimage.h names the four).
 *
 * An image is read from the catalogs as PostgreSQL prints them: columns
 * (format_type with typmod; pg_get_expr for defaults and generated
 * expressions), constraints (pg_get_constraintdef), indexes
 * (pg_get_indexdef's text; a plain index's printed here as ruleutils
 * prints it, DdlnImageIndexDefPlain) and the replica identity, and what a kind needs to be
 * created again: a view's query (pg_get_viewdef; not in a drop's
 * pre-image), a partition key (pg_get_partkeydef), a foreign table's
 * server and options, a table's INHERITS parents (pg_inherits) and type
 * (reloftype; neither in a drop's pre-image), and which of a child's
 * columns and constraints it only inherits (attislocal, conislocal; not a
 * partition's: partition_of says it); its persistence (unlogged) and
 * storage parameters (pg_class.reloptions); a column's STORAGE when not
 * its type's, COMPRESSION and statistics target when set (pg_attribute;
 * the target through compat.h), an index's CLUSTER ON mark
 * (indisclustered) and storage parameters (its definition prints them).  A sequence's image is its parameters
 * (pg_sequence) and the column owning it (pg_depend: OWNED BY, or the
 * identity column it serves), nothing of a table's.  All with search_path set to
 * pg_catalog alone while it is read: every name not in pg_catalog comes
 * qualified, as pg_dump prints it, whatever the DDL's search_path.  The
 * columns and defaults come from the relation cache (the command that
 * touched the relation built its entry already, and a DROP builds it to
 * drop the relation), the constraints from pg_constraint, the indexes'
 * rows from one scan each of pg_index, pg_class and pg_attribute for all
 * of them (DdlnImageReadIndexes; pg_attribute only when an index's
 * operator class takes options; an "after" takes the rows of its "before"
 * that did not change).
 *
 * Rules kept here:
 * - With ddl_notify.capture_changes off nothing here runs (its callers,
 *	 imgcommand.c and imgdrop.c, check).
 * - An image is read into a DdlnImage (relimage.h) and written as jsonb
 *	 (DdlnImgImageValue, DdlnImgPushImage); the files that diff and keep images see only
 *	 those.  Names are qualified as pg_dump prints them: read with
 *	 search_path set to pg_catalog alone.
 * - An "after" tree takes from its "before" tree each column, index and
 *	 constraint equal in every field read (DdlnImgSameColumn,
 *	 DdlnImgSamePart): the same value, written once by DdlnJvToJsonb.
 * - Every text is printed with the same output settings whatever the
 *	 session's (DdlnImgOutputSettings): DateStyle ISO, IntervalStyle
 *	 postgres, TimeZone UTC, extra_float_digits above 0, bytea_output hex,
 *	 standard_conforming_strings on, quote_all_identifiers off.  A default
 *	 '2016-06-02'::date read in a session with DateStyle "Postgres, DMY"
 *	 would otherwise print as '02-06-2016', which a consumer in another
 *	 session reads as February 6th.  (lc_monetary, which prints money
 *	 constants, is left as it is: setting it calls setlocale.)
 * - The relation cache's entry is used where it has what is read (the
 *	 command that touched the relation built it already, and a DROP builds
 *	 it to drop the relation); pg_constraint is scanned for constraints,
 *	 pg_index, pg_class and pg_attribute once each for all the indexes (a
 *	 catalog cache lookup per index read each cold: 75,000 instructions),
 *	 pg_attribute (per-column options) only when the operator class of a
 *	 key column takes options (DdlnIndexMayHaveOptions: no other column
 *	 can have any).
 * - "after" reuses a definition of "before" only where nothing could have
 *	 changed it (DdlnImageMayReuse): an index nothing renamed; a constraint
 *	 of the same OID validated or made [NOT] DEFERRABLE is printed again,
 *	 and so is an index of the same OID given other storage parameters
 *	 (ALTER INDEX ... SET) or made valid.  It takes the indexes' pg_index
 *	 rows "before" read when no pg_index row changed since, and an index's
 *	 pg_class row when that row did not change (DdlnWatchChanged: the
 *	 catalog caches' invalidations, ours and other backends', noted by
 *	 hash value); a changed row is read again.  Where a column's statistics
 *	 target costs a catalog read (17 on), it takes the targets of the
 *	 columns whose pg_attribute row did not change, the same way
 *	 (DdlnImageStatTargets).
 * - A plain index's definition (key columns only, default operator
 *	 classes, no expression, predicate, storage parameter, sort option or
 *	 own collation) is printed here as ruleutils prints it; any other goes
 *	 through pg_get_indexdef.  sql/047_index_definitions compares the two.
 * - The one thing kept from one statement to the next: the default
 *	 operator class of a type and access method (DdlnDefaultOpclass), and
 *	 an operator class's access method and whether it takes options
 *	 (DdlnOpclassOf), forgotten on every invalidation of pg_opclass,
 *	 pg_cast, pg_type or pg_amproc (catalog cache callbacks: ours, at the
 *	 command's end or a rollback, and other backends', processed before
 *	 each image is read).
 *	 Everything else is read again for each statement.
 * - What PostgreSQL makes and drops by itself is left out as pg_dump leaves
 *	 it out: a foreign key's clones (conparentid set); an invalid index (a
 *	 failed CREATE INDEX CONCURRENTLY's), but for a partitioned table's.
 *	 The replica identity's index is the one pg_index marks, as pg_dump
 *	 reads it.  A partitioned
 *	 table's valid index is printed without "ON ONLY" (pg_get_indexdef
 *	 prints it always): it made its partitions' indexes.
 * - A view's query is read through DdlnTryQuietly (an error of ruleutils
 *	 never reaches the user's statement), never for a dropped view
 *	 (ruleutils runs SQL, which the object access hook must not).
 * - A domain's default and constraints, like every expression here, are
 *	 texts that imagetexts.c withholds from a subscriber whose owner may
 *	 not read statement texts (G10).
 *
 * Sections, in file order: reading an image (relations, sequences;
 * DdlnImageRead); writing it as jsonb (DdlnImgImageValue, a JsonbValue
 * tree; DdlnImgPushImage); type images (DdlnTypeImageDetails); which
 * relations have images (DdlnImageSkipped,
 * DdlnImageRelationOf); the image DDL replication checks against
 * (DdlnRelationImageNow).
 *
 * Floor: engine (capture's helper; relimage.h says how the image files
 * call each other): called by imgdiff.c, imgcommand.c, imgdrop.c and by
 * apply.c (DdlnRelationImageNow); calls common.c only.
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/amapi.h"
#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/reloptions.h"
#include "access/table.h"
#include "access/toast_compression.h"
#include "access/xact.h"
#include "catalog/catalog.h"
#include "catalog/dependency.h"
#include "catalog/index.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/partition.h"
#include "catalog/pg_am.h"
#include "catalog/pg_attrdef.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_class.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_constraint.h"
#include "catalog/pg_enum.h"
#include "catalog/pg_index.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_rewrite.h"
#include "catalog/pg_sequence.h"
#include "catalog/pg_type.h"
#include "foreign/foreign.h"
#include "commands/defrem.h"
#include "commands/event_trigger.h"
#include "commands/tablecmds.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "parser/parser.h"
#include "pgtime.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/bytea.h"
#include "utils/catcache.h"
#include "utils/float.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/rel.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "common.h"
#include "relimage.h"

/* ---------- reading an image ---------- */

/* Is this a relation kind that has images? */
bool
DdlnImageKind(char relkind)
{
	return relkind == RELKIND_RELATION || relkind == RELKIND_PARTITIONED_TABLE ||
		relkind == RELKIND_VIEW || relkind == RELKIND_MATVIEW ||
		relkind == RELKIND_FOREIGN_TABLE || relkind == RELKIND_SEQUENCE ||
		relkind == RELKIND_COMPOSITE_TYPE;
}

static const char *
DdlnImageKindName(char relkind)
{
	switch (relkind)
	{
		case RELKIND_RELATION:
			return "table";
		case RELKIND_PARTITIONED_TABLE:
			return "partitioned table";
		case RELKIND_VIEW:
			return "view";
		case RELKIND_MATVIEW:
			return "materialized view";
		case RELKIND_FOREIGN_TABLE:
			return "foreign table";
		case RELKIND_SEQUENCE:
			return "sequence";
		case RELKIND_COMPOSITE_TYPE:
			return "composite type";
	}
	return NULL;
}

/*
 * A type with its typmod, as pg_dump prints it: qualified unless it is in
 * pg_catalog (the image is read with search_path pg_catalog alone).
 */
static char *
DdlnImageTypeName(Oid typid, int32 typmod)
{
	return format_type_extended(typid, typmod, FORMAT_TYPE_TYPEMOD_GIVEN);
}

/* A collation's name, qualified unless it is in pg_catalog. */
static char *
DdlnImageCollationName(Oid collid)
{
	HeapTuple	tup = SearchSysCache1(COLLOID, ObjectIdGetDatum(collid));
	Form_pg_collation coll;
	char	   *name;

	if (!HeapTupleIsValid(tup))
		return psprintf("%u", collid);
	coll = (Form_pg_collation) GETSTRUCT(tup);
	if (coll->collnamespace == PG_CATALOG_NAMESPACE)
		name = pstrdup(quote_identifier(NameStr(coll->collname)));
	else
		name = quote_qualified_identifier(get_namespace_name_or_temp(coll->collnamespace),
										  NameStr(coll->collname));
	ReleaseSysCache(tup);
	return name;
}

static char *
DdlnTextResult(Datum d)
{
	return TextDatumGetCString(d);
}

/*
 * ddln_sort_part_ptrs: addresses of parts sorted by name, pg_qsort's
 * algorithm (lib/sort_template.h) with the comparison inlined, where
 * qsort calls a comparator through a pointer at each step.
 */
typedef DdlnImgPart *DdlnImgPartPtr;

#define ST_SORT ddln_sort_part_ptrs
#define ST_ELEMENT_TYPE DdlnImgPartPtr
#define ST_COMPARE(a, b) strcmp((*(a))->name, (*(b))->name)
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

/*
 * Sort n parts by name: their addresses, then the parts in that order
 * (qsort of the parts themselves moves 64 bytes at each swap: 50,000
 * instructions for 50 indexes, against a fifth of it here).
 */
static void
DdlnSortParts(DdlnImgPart *parts, int n)
{
	DdlnImgPart **byname;
	DdlnImgPart *sorted;

	if (n < 2)
		return;
	byname = palloc(sizeof(DdlnImgPart *) * n);
	for (int i = 0; i < n; i++)
		byname[i] = &parts[i];
	ddln_sort_part_ptrs(byname, n);
	sorted = palloc(sizeof(DdlnImgPart) * n);
	for (int i = 0; i < n; i++)
		sorted[i] = *byname[i];
	memcpy(parts, sorted, sizeof(DdlnImgPart) * n);
	pfree(sorted);
	pfree(byname);
}

static const char *
DdlnConstraintTypeName(char contype)
{
	switch (contype)
	{
		case CONSTRAINT_PRIMARY:
			return "primary key";
		case CONSTRAINT_UNIQUE:
			return "unique";
		case CONSTRAINT_CHECK:
			return "check";
		case CONSTRAINT_FOREIGN:
			return "foreign key";
		case CONSTRAINT_EXCLUSION:
			return "exclusion";
	}
	return NULL;				/* NOT NULL (18 on), constraint triggers */
}

/*
 * pg_get_viewdef() of img's view into img->definition (NULL if it says
 * NULL).  Through DdlnTryQuietly: an error here never reaches the user's
 * statement.  ruleutils reads the view's rule with SPI under the active
 * snapshot, taken before the command made the rule: a copy of it that
 * sees the command's own changes is pushed for the call.
 */
static void
DdlnImageViewDef(void *arg)
{
	DdlnImage  *img = (DdlnImage *) arg;
	LOCAL_FCINFO(fcinfo, 1);
	Datum		result;

	InitFunctionCallInfoData(*fcinfo, NULL, 1, InvalidOid, NULL, NULL);
	fcinfo->args[0].value = ObjectIdGetDatum(img->relid);
	fcinfo->args[0].isnull = false;
	PushCopiedSnapshot(GetActiveSnapshot());
	UpdateActiveSnapshotCommandId();
	result = pg_get_viewdef(fcinfo);
	PopActiveSnapshot();
	if (!fcinfo->isnull)
		img->definition = DdlnTextResult(result);
}

/*
 * What a consumer needs to create a relation of some kinds again, beyond
 * its columns: a view's or materialized view's query (pg_get_viewdef, as
 * pg_dump prints it; not for a dropped one: ruleutils runs SQL, which the
 * object access hook must not), a partitioned table's partition key
 * (pg_get_partkeydef), a foreign table's server and options, a
 * partition's partitioned table and bound (not for a dropped one either:
 * its pg_inherits row may be gone).
 */
static void DdlnImageReadInherits(DdlnImage *img);

static void
DdlnImageReadKind(DdlnImage *img, bool dropped)
{
	switch (img->relkind)
	{
		case RELKIND_VIEW:
		case RELKIND_MATVIEW:
			if (!dropped && ActiveSnapshotSet())
				(void) DdlnTryQuietly(DdlnImageViewDef, img);
			break;
		case RELKIND_PARTITIONED_TABLE:
			img->partition_key =
				DdlnTextResult(DirectFunctionCall1(pg_get_partkeydef, ObjectIdGetDatum(img->relid)));
			break;
		case RELKIND_FOREIGN_TABLE:
			{
				ForeignTable *ft = GetForeignTable(img->relid);
				ListCell   *lc;

				img->server = pstrdup(GetForeignServer(ft->serverid)->servername);
				foreach(lc, ft->options)
				{
					DefElem    *def = (DefElem *) lfirst(lc);

					img->options = lappend(img->options,
										   psprintf("%s=%s", def->defname, defGetString(def)));
				}
			}
			break;
		default:
			break;
	}

	/* a partition: its partitioned table and bound (not while it is dropped) */
	if (!dropped && get_rel_relispartition(img->relid))
	{
		Oid			parent = get_partition_parent(img->relid, true);
		HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(img->relid));

		if (HeapTupleIsValid(tup))
		{
			bool		isnull;
			Datum		bound = SysCacheGetAttr(RELOID, tup, Anum_pg_class_relpartbound, &isnull);

			if (!isnull)
				img->partition_bound =
					DdlnTextResult(DirectFunctionCall2(pg_get_expr, bound, ObjectIdGetDatum(img->relid)));
			ReleaseSysCache(tup);
		}
		img->parent_schema = get_namespace_name_or_temp(get_rel_namespace(parent));
		img->parent_name = get_rel_name(parent);
	}
	else if (!dropped && (img->relkind == RELKIND_RELATION ||
						  img->relkind == RELKIND_PARTITIONED_TABLE ||
						  img->relkind == RELKIND_FOREIGN_TABLE))
		DdlnImageReadInherits(img);
}

/*
 * A table's INHERITS parents (pg_inherits, in inhseqno order: the order of
 * CREATE TABLE ... INHERITS and ALTER TABLE ... INHERIT) and the type of a
 * typed table (pg_class.reloftype).  Not a partition's parent (that is
 * partition_of) and not for a dropped relation (its pg_inherits rows may
 * be gone already).
 */
static void
DdlnImageReadInherits(DdlnImage *img)
{
	Relation	inh = table_open(InheritsRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	Oid			oftype = InvalidOid;

	ScanKeyInit(&key, Anum_pg_inherits_inhrelid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(img->relid));
	scan = systable_beginscan(inh, InheritsRelidSeqnoIndexId, true, NULL, 1, &key);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Oid			parent = ((Form_pg_inherits) GETSTRUCT(tup))->inhparent;

		img->inherits = lappend(img->inherits,
								get_namespace_name_or_temp(get_rel_namespace(parent)));
		img->inherits = lappend(img->inherits, get_rel_name(parent));
	}
	systable_endscan(scan);
	table_close(inh, AccessShareLock);

	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(img->relid));
	if (HeapTupleIsValid(tup))
	{
		oftype = ((Form_pg_class) GETSTRUCT(tup))->reloftype;
		ReleaseSysCache(tup);
	}
	if (OidIsValid(oftype))
	{
		tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(oftype));
		if (HeapTupleIsValid(tup))
		{
			Form_pg_type typ = (Form_pg_type) GETSTRUCT(tup);

			img->oftype_schema = get_namespace_name_or_temp(typ->typnamespace);
			img->oftype_name = pstrdup(NameStr(typ->typname));
			ReleaseSysCache(tup);
		}
	}
}

/*
 * May the definitions of "like" (an image of the same relation read earlier
 * in the command) stand for those of a constraint or index with the same
 * OID and name now?  Yes while nothing they print changed: the relation's
 * name and schema and the names of its columns.  (A constraint or index
 * whose own definition changes is rebuilt under another OID.)
 */
static bool
DdlnImageMayReuse(const DdlnImage *like, const DdlnImage *img)
{
	int			j = 0;

	if (like == NULL || like->relid != img->relid ||
		strcmp(like->name, img->name) != 0 || strcmp(like->schema, img->schema) != 0)
		return false;
	for (int i = 0; i < like->ncolumns; i++)
	{
		while (j < img->ncolumns && img->columns[j].attnum < like->columns[i].attnum)
			j++;
		if (j < img->ncolumns && img->columns[j].attnum == like->columns[i].attnum &&
			strcmp(img->columns[j].name, like->columns[i].name) != 0)
			return false;
	}
	return true;
}

/*
 * The definition of "part" (its OID and name; a constraint's flags; an
 * index's validity and storage parameters) in "parts" of an earlier image,
 * or NULL.  A constraint validated or made deferrable in place keeps its
 * OID, and so does an index given storage parameters (ALTER INDEX ... SET)
 * or made valid (ALTER INDEX ... ATTACH PARTITION): its definition is
 * printed again.  Both images list their parts in the same order, so the
 * search starts where the last one ended ("*from", 0 at first) and a
 * relation's parts cost one comparison each, not one per pair; a part that
 * moved (a rename) costs one pass.
 */
static char *
DdlnReusedDefinition(const DdlnImgPart *parts, int n, const DdlnImgPart *part, int *from)
{
	for (int k = 0; k < n; k++)
	{
		int			i = (*from + k) % n;

		if (parts[i].oid == part->oid && strcmp(parts[i].name, part->name) == 0 &&
			parts[i].validated == part->validated && parts[i].deferrable == part->deferrable &&
			parts[i].deferred == part->deferred &&
			DdlnImgSameStrings(parts[i].reloptions, part->reloptions))
		{
			*from = i + 1;
			return parts[i].definition;
		}
	}
	return NULL;
}

/*
 * The types already printed for the columns of one image, by type and
 * typmod (most tables have a few types for many columns): format_type's
 * text for the same type and typmod while the catalogs do not change.
 */
#define DDLN_TYPE_MEMO 8
typedef struct DdlnTypeMemo
{
	int			n;
	int			next;			/* the entry to replace when full */
	Oid			type[DDLN_TYPE_MEMO];
	int32		typmod[DDLN_TYPE_MEMO];
	char	   *name[DDLN_TYPE_MEMO];
} DdlnTypeMemo;

static char *
DdlnImageTypeNameMemo(DdlnTypeMemo *memo, Oid typid, int32 typmod)
{
	int			i;

	for (i = 0; i < memo->n; i++)
	{
		if (memo->type[i] == typid && memo->typmod[i] == typmod)
			return memo->name[i];
	}
	if (memo->n < DDLN_TYPE_MEMO)
		i = memo->n++;
	else
	{
		i = memo->next;
		memo->next = (memo->next + 1) % DDLN_TYPE_MEMO;
	}
	memo->type[i] = typid;
	memo->typmod[i] = typmod;
	memo->name[i] = DdlnImageTypeName(typid, typmod);
	return memo->name[i];
}

/* Do two lists of strings hold the same, in the same order? */
bool
DdlnImgSameStrings(List *a, List *b)
{
	ListCell   *la,
			   *lb;

	if (list_length(a) != list_length(b))
		return false;
	forboth(la, a, lb, b)
	{
		if (strcmp((const char *) lfirst(la), (const char *) lfirst(lb)) != 0)
			return false;
	}
	return true;
}

static void DdlnImageStatTargets(DdlnImage *img, Relation rel, const DdlnImage *like,
								 int *targets);

/*
 * The columns of "rel", in attnum order, dropped ones left out ("like":
 * DdlnImageStatTargets).
 */
static void
DdlnImageReadColumns(DdlnImage *img, Relation rel, const DdlnImage *like)
{
	TupleDesc	desc = RelationGetDescr(rel);
	char	  **defaults;
	int		   *targets;
	DdlnTypeMemo types;

	/* defaults and generated expressions, by attnum (NULL: none) */
	defaults = NULL;
	if (desc->constr && desc->constr->num_defval > 0)
	{
		defaults = palloc0(sizeof(char *) * (desc->natts + 1));
		for (int i = 0; i < desc->constr->num_defval; i++)
		{
			AttrDefault *ad = &desc->constr->defval[i];

			if (ad->adnum < 1 || ad->adnum > desc->natts || ad->adbin == NULL)
				continue;
			defaults[ad->adnum] =
				DdlnTextResult(DirectFunctionCall2(pg_get_expr, CStringGetTextDatum(ad->adbin),
												   ObjectIdGetDatum(img->relid)));
		}
	}

	/* statistics targets, by attnum - 1 */
	targets = palloc(sizeof(int) * Max(desc->natts, 1));
	DdlnImageStatTargets(img, rel, like, targets);

	types.n = types.next = 0;
	/*
	 * Not palloc0: each column is zeroed as it is filled (a memset of the
	 * whole array counted 10,000 instructions at 100 columns, as many as its
	 * bytes; the compiler zeroes a column with a few stores).
	 */
	img->columns = palloc(sizeof(DdlnImgColumn) * Max(desc->natts, 1));
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		DdlnImgColumn *col;

		if (att->attisdropped)
			continue;
		col = &img->columns[img->ncolumns++];
		memset(col, 0, sizeof(DdlnImgColumn));
		col->name = pstrdup(NameStr(att->attname));
		col->attnum = att->attnum;
		col->type = DdlnImageTypeNameMemo(&types, att->atttypid, att->atttypmod);
		if (OidIsValid(att->attcollation) &&
			att->attcollation != get_typcollation(att->atttypid))
			col->collation = DdlnImageCollationName(att->attcollation);
		col->not_null = att->attnotnull;
		col->identity = att->attidentity;
		/* a partition's columns are all its parent's: partition_of says so */
		col->inherited = !att->attislocal && !rel->rd_rel->relispartition;
		/* storage, compression, statistics target: only when not the default */
		col->storage = att->attstorage;
		/* a type of fixed length is stored plain, and its columns too */
		col->type_storage = att->attlen == -1 ? get_typstorage(att->atttypid) : att->attstorage;
		col->compression = att->attcompression;
		col->statistics = targets[i];
		if (att->attgenerated != '\0')
		{
			col->generated = defaults ? defaults[att->attnum] : NULL;
			col->is_virtual = (att->attgenerated == DDLN_GENERATED_VIRTUAL);
		}
		else
			col->def = defaults ? defaults[att->attnum] : NULL;
	}
}

/*
 * PostgreSQL's own name for a NOT NULL constraint it names itself
 * (ChooseConstraintName's first choice): TABLE_COLUMN_not_null, or a
 * domain's DOMAIN_not_null (column NULL).
 */
static bool
DdlnNotNullNameIsDefault(const char *name, const char *rel, const char *column)
{
	return strcmp(name, makeObjectName(rel, column, "not_null")) == 0;
}

/*
 * The column of attnum "attnum" in an image, or NULL (a dropped one): a
 * binary search, the columns being in attnum order (one NOT NULL
 * constraint per column costs log n, not n, so a wide table's image is
 * not quadratic in its columns).
 */
static DdlnImgColumn *
DdlnImageColumnOf(DdlnImage *img, AttrNumber attnum)
{
	int			lo = 0;
	int			hi = img->ncolumns - 1;

	while (lo <= hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (img->columns[mid].attnum == attnum)
			return &img->columns[mid];
		if (img->columns[mid].attnum < attnum)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

/*
 * A column's NOT NULL constraint (18 on: pg_constraint has one per column
 * that is NOT NULL), into the column's image: its name, and whether that is
 * not the default (a constraint named by CONSTRAINT, kept through a rename
 * of its table or column, or taken from another table by LIKE or PARTITION
 * OF), which the image shows; and whether it is NO INHERIT or NOT VALID.
 */
static void
DdlnImageNotNullName(DdlnImage *img, HeapTuple contup, Form_pg_constraint con)
{
	DdlnImgColumn *col = DdlnImageColumnOf(img, DdlnNotNullAttnum(contup));

	if (col == NULL)
		return;
	col->not_null_name = pstrdup(NameStr(con->conname));
	col->not_null_named = !DdlnNotNullNameIsDefault(col->not_null_name, img->name, col->name);
	col->not_null_no_inherit = con->connoinherit;
	col->not_null_not_valid = !con->convalidated;
}

/*
 * The constraints of the relation, by name; a definition is taken from
 * "like" when "reuse" says it cannot have changed.  "partition": the
 * relation is a partition (its parent's constraints are not flagged
 * inherited: partition_of says so).
 */
static void
DdlnImageReadConstraints(DdlnImage *img, const DdlnImage *like, bool reuse, bool partition)
{
	int			allocated = 4;
	int			from = 0;		/* DdlnReusedDefinition's */
	Relation	catrel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;

	img->constraints = palloc(sizeof(DdlnImgPart) * allocated);
	catrel = table_open(ConstraintRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_constraint_conrelid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(img->relid));
	scan = systable_beginscan(catrel, ConstraintRelidTypidNameIndexId, true, NULL, 1, &key);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_constraint con = (Form_pg_constraint) GETSTRUCT(tup);
		const char *type = DdlnConstraintTypeName(con->contype);
		DdlnImgPart *part;

		if (con->contype == DDLN_CONTYPE_NOTNULL)
			DdlnImageNotNullName(img, tup, con);
		if (type == NULL)
			continue;

		/*
		 * A foreign key's clones (one per partition of the table it
		 * references, or on a partition, its parent's): PostgreSQL makes and
		 * drops them with their parent; pg_dump leaves them out too.
		 */
		if (con->contype == CONSTRAINT_FOREIGN && OidIsValid(con->conparentid))
			continue;
		if (img->nconstraints == allocated)
		{
			allocated *= 2;
			img->constraints = repalloc(img->constraints, sizeof(DdlnImgPart) * allocated);
		}
		part = &img->constraints[img->nconstraints++];
		memset(part, 0, sizeof(*part));
		part->oid = con->oid;
		part->name = pstrdup(NameStr(con->conname));
		part->type = type;
		if (con->contype != CONSTRAINT_FOREIGN)
			part->indexid = con->conindid;
		part->validated = con->convalidated;
		part->deferrable = con->condeferrable;
		part->deferred = con->condeferred;
		part->inherited = !con->conislocal && !partition;
		if (reuse)
			part->definition = DdlnReusedDefinition(like->constraints, like->nconstraints, part, &from);
		if (part->definition == NULL)
			part->definition =
				DdlnTextResult(DirectFunctionCall1(pg_get_constraintdef, ObjectIdGetDatum(con->oid)));
	}
	systable_endscan(scan);
	table_close(catrel, AccessShareLock);
	DdlnSortParts(img->constraints, img->nconstraints);
}

/*
 * pg_get_indexdef() of an index, but "ON ONLY" only for a partitioned
 * table's index that is not valid (made with ON ONLY while the table had
 * partitions, and not yet attached to an index of each): a valid one made
 * its partitions' indexes as any CREATE INDEX does, and is printed so.
 */
static char *
DdlnImageIndexDef(Oid indexid)
{
	char	   *def = DdlnTextResult(DirectFunctionCall1(pg_get_indexdef, ObjectIdGetDatum(indexid)));
	char	   *only;
	HeapTuple	tup;
	bool		valid = false;

	if (get_rel_relkind(indexid) != RELKIND_PARTITIONED_INDEX)
		return def;
	tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(indexid));
	if (HeapTupleIsValid(tup))
	{
		valid = ((Form_pg_index) GETSTRUCT(tup))->indisvalid;
		ReleaseSysCache(tup);
	}
	/* "CREATE [UNIQUE] INDEX name ON ONLY ...": after the name (quoted as it must be) */
	if (valid && (only = strstr(def, "INDEX ")) != NULL)
	{
		only += strlen("INDEX ") + strlen(quote_identifier(get_rel_name(indexid)));
		if (strncmp(only, " ON ONLY ", 9) == 0)
			memmove(only + 3, only + 8, strlen(only + 8) + 1);
	}
	return def;
}

/*
 * Default operator classes already looked up (GetDefaultOpClass scans every
 * operator class of the access method: the dearest part of an index's
 * definition, about 110,000 instructions), by column type and access
 * method, kept for the backend's life.  What the answer depends on is
 * pg_opclass (which classes are default, for which type), pg_cast (which
 * types are binary coercible) and pg_type (a domain's base type, a type's
 * category); a change to any of them, ours (at the command's end, or
 * undone by a rollback) or another backend's (before we lock anything
 * after its commit, and before each image: DdlnOpclassMemoGet), reaches
 * DdlnOpclassMemoForget through the catalog caches' invalidation, which
 * forgets every answer (sql/047_index_definitions;
 * test/mutations/images_opclass_memo_kept.patch).  An answer is kept only
 * if no invalidation came while it was looked up (GetDefaultOpClass may
 * process some).
 */
#define DDLN_OPCLASS_MEMO 16
typedef struct DdlnOpclassMemo
{
	int			n;
	Oid			type[DDLN_OPCLASS_MEMO];
	Oid			am[DDLN_OPCLASS_MEMO];
	Oid			opclass[DDLN_OPCLASS_MEMO];
	/* operator classes read (DdlnOpclassOf): method, takes options */
	int			nclass;
	Oid			classoid[DDLN_OPCLASS_MEMO];
	Oid			classam[DDLN_OPCLASS_MEMO];
	bool		classoptions[DDLN_OPCLASS_MEMO];
} DdlnOpclassMemo;

static DdlnOpclassMemo ddln_opclass_memo;
static uint64 ddln_opclass_invals = 0;
static bool ddln_opclass_callbacks = false;

static void
DdlnOpclassMemoForget(Datum arg, int cacheid, uint32 hashvalue)
{
	ddln_opclass_memo.n = 0;
	ddln_opclass_memo.nclass = 0;
	ddln_opclass_invals++;
}

/*
 * The backend's memo, its invalidation callbacks registered at first use,
 * for one image: the invalidations other backends sent so far processed
 * first (a statement whose locks its transaction holds already processes
 * none by itself, where GetDefaultOpClass's own scan would see their
 * commit).
 */
static DdlnOpclassMemo *
DdlnOpclassMemoGet(void)
{
	if (!ddln_opclass_callbacks)
	{
		CacheRegisterSyscacheCallback(CLAOID, DdlnOpclassMemoForget, (Datum) 0);
		CacheRegisterSyscacheCallback(CASTSOURCETARGET, DdlnOpclassMemoForget, (Datum) 0);
		CacheRegisterSyscacheCallback(TYPEOID, DdlnOpclassMemoForget, (Datum) 0);
		CacheRegisterSyscacheCallback(AMPROCNUM, DdlnOpclassMemoForget, (Datum) 0);
		ddln_opclass_callbacks = true;
		ddln_opclass_memo.n = 0;
		ddln_opclass_memo.nclass = 0;
	}
	AcceptInvalidationMessages();
	return &ddln_opclass_memo;
}

static Oid
DdlnDefaultOpclass(DdlnOpclassMemo *memo, Oid type, Oid am)
{
	Oid			opclass;
	uint64		invals_before = ddln_opclass_invals;

	for (int i = 0; i < memo->n; i++)
	{
		if (memo->type[i] == type && memo->am[i] == am)
			return memo->opclass[i];
	}
	opclass = GetDefaultOpClass(type, am);
	if (memo->n < DDLN_OPCLASS_MEMO && ddln_opclass_invals == invals_before)
	{
		memo->type[memo->n] = type;
		memo->am[memo->n] = am;
		memo->opclass[memo->n++] = opclass;
	}
	return opclass;
}

/*
 * Operator class "opclass": its access method (*am), and whether a column
 * of an index may give it options (*options: the method has an options
 * support procedure number and the class's family has that procedure for
 * the class's input type, as index_opclass_options looks it up; anything
 * else refuses options: "operator class ... has no options").  False when
 * there is no such class.  Kept in the memo beside the default classes,
 * forgotten with them, and on any invalidation of pg_amproc (ALTER
 * OPERATOR FAMILY ... ADD FUNCTION).
 */
static bool
DdlnOpclassOf(DdlnOpclassMemo *memo, Oid opclass, Oid *am, bool *options)
{
	uint64		invals_before = ddln_opclass_invals;
	HeapTuple	tup;
	Form_pg_opclass form;
	const IndexAmRoutine *amroutine;

	for (int i = 0; i < memo->nclass; i++)
	{
		if (memo->classoid[i] == opclass)
		{
			*am = memo->classam[i];
			*options = memo->classoptions[i];
			return true;
		}
	}
	tup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclass));
	/* not reached by a test: an index's class cannot be dropped while it is */
	if (!HeapTupleIsValid(tup))
		return false;
	form = (Form_pg_opclass) GETSTRUCT(tup);
	*am = form->opcmethod;
	amroutine = GetIndexAmRoutineByAmId(*am, true);
	*options = amroutine == NULL ||
		(amroutine->amoptsprocnum > 0 &&
		 SearchSysCacheExists4(AMPROCNUM, ObjectIdGetDatum(form->opcfamily),
							   ObjectIdGetDatum(form->opcintype),
							   ObjectIdGetDatum(form->opcintype),
							   Int16GetDatum(amroutine->amoptsprocnum)));
	ReleaseSysCache(tup);
	/* not freed: up to 18 a palloc'd copy, in the image's memory; from 19 the method's own constant */
	if (memo->nclass < DDLN_OPCLASS_MEMO && ddln_opclass_invals == invals_before)
	{
		memo->classoid[memo->nclass] = opclass;
		memo->classam[memo->nclass] = *am;
		memo->classoptions[memo->nclass++] = *options;
	}
	return true;
}

/*
 * The catalog rows an "after" image takes from its "before" (the same
 * command's image of the same relation): an index's pg_index rows when no
 * pg_index row changed since the "before" read them, and its pg_class row
 * when that row did not change.  What changed is told by the catalog
 * caches' invalidations, ours (processed at each CommandCounterIncrement:
 * ddl_command_end comes after one) and other backends' (processed before
 * each image, DdlnOpclassMemoGet, and at each lock taken): each
 * invalidation of pg_class (RELOID) or pg_index (INDEXRELID) rows is noted
 * here with its hash value and a sequence number, and an image remembers
 * the sequence number it read at.  A reset of the caches (hash value 0) or
 * a full list forgets the rows of every image read before it
 * (test/t/053_image_row_reuse.pl;
 * test/mutations/images_rows_reused_unwatched.patch).  Where a column's
 * statistics target costs a catalog read (compat.h), invalidations of
 * pg_attribute rows (ATTNUM) are noted too, in a list of their own (a
 * command that adds many columns fills it without costing the indexes
 * their rows), and an "after" takes the target of each column whose row
 * none touched (DdlnImageStatTargets).
 */
#define DDLN_WATCH_SIZE 256
typedef struct DdlnWatch
{
	uint64		lost;			/* images read before this one reuse nothing */
	int			n;
	int			cacheid[DDLN_WATCH_SIZE];
	uint32		hash[DDLN_WATCH_SIZE];
	uint64		at[DDLN_WATCH_SIZE];
} DdlnWatch;

static uint64 ddln_watch_seq;	/* invalidations noted so far, both lists */
static DdlnWatch ddln_watch_rows;	/* pg_class, pg_index */
static DdlnWatch ddln_watch_atts;	/* pg_attribute */
static bool ddln_watch_callbacks = false;

static void
DdlnWatchNote(Datum arg, int cacheid, uint32 hashvalue)
{
	DdlnWatch  *w = (DdlnWatch *) DatumGetPointer(arg);

	ddln_watch_seq++;
	if (hashvalue == 0 || w->n == DDLN_WATCH_SIZE)
	{
		w->lost = ddln_watch_seq;
		w->n = 0;
		return;
	}
	w->cacheid[w->n] = cacheid;
	w->hash[w->n] = hashvalue;
	w->at[w->n++] = ddln_watch_seq;
}

/*
 * The sequence number an image reads "w"'s rows at, the callbacks
 * registered at first use.  (Call after AcceptInvalidationMessages.)
 * Half full, the list is emptied: only an image read before now and still
 * waiting for its "after" (the same command's) loses its rows.
 */
static uint64
DdlnWatchNow(DdlnWatch *w)
{
	if (!ddln_watch_callbacks)
	{
		CacheRegisterSyscacheCallback(RELOID, DdlnWatchNote, PointerGetDatum(&ddln_watch_rows));
		CacheRegisterSyscacheCallback(INDEXRELID, DdlnWatchNote, PointerGetDatum(&ddln_watch_rows));
		if (DDLN_STATTARGETS_READ)
			CacheRegisterSyscacheCallback(ATTNUM, DdlnWatchNote, PointerGetDatum(&ddln_watch_atts));
		ddln_watch_callbacks = true;
		ddln_watch_rows.lost = ddln_watch_atts.lost = ++ddln_watch_seq;
	}
	if (w->n > DDLN_WATCH_SIZE / 2)
	{
		w->lost = ++ddln_watch_seq;
		w->n = 0;
	}
	return ddln_watch_seq;
}

/*
 * Was a row of catalog cache "cacheid" with hash value "hash" (0: any row)
 * invalidated since sequence number "since"?
 */
static bool
DdlnWatchChanged(uint64 since, int cacheid, uint32 hash)
{
	DdlnWatch  *w = (cacheid == ATTNUM) ? &ddln_watch_atts : &ddln_watch_rows;

	if (!ddln_watch_callbacks || w->lost > since)
		return true;
	for (int i = w->n - 1; i >= 0 && w->at[i] > since; i--)
	{
		if (w->cacheid[i] == cacheid && (hash == 0 || w->hash[i] == hash))
			return true;
	}
	return false;
}

/*
 * The statistics target of each column of "rel" into targets[attnum - 1]
 * (compat.h: the tuple descriptor's up to 16, a scan of the relation's
 * pg_attribute rows from 17).  Where that costs a read, an image with
 * "like" (its "before": the same command's image of the same relation)
 * takes the target "like" read of each column whose pg_attribute row no
 * invalidation touched since, and looks up the others one by one (an
 * ADD COLUMN's new column, a SET STATISTICS'); more than
 * DDLN_TARGET_LOOKUPS of them, or nothing to take, and it scans
 * (sql/050_storage_images: SET STATISTICS with and without ADD COLUMN,
 * on few columns and on many).
 */
#define DDLN_TARGET_LOOKUPS 8

static void
DdlnImageStatTargets(DdlnImage *img, Relation rel, const DdlnImage *like, int *targets)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			lookups = 0;
	int			j = 0;

	if (!DDLN_STATTARGETS_READ)
	{
		DdlnAttStatTargets(rel, targets);
		return;
	}
	if (like == NULL || like->relid != img->relid || like->targets_at == 0 ||
		ddln_watch_atts.lost > like->targets_at)
		lookups = DDLN_TARGET_LOOKUPS + 1;
	for (int i = 0; i < desc->natts && lookups <= DDLN_TARGET_LOOKUPS; i++)
	{
		AttrNumber	attnum = TupleDescAttr(desc, i)->attnum;

		targets[i] = PG_INT32_MIN;	/* to look up */
		if (TupleDescAttr(desc, i)->attisdropped)
			continue;
		while (j < like->ncolumns && like->columns[j].attnum < attnum)
			j++;
		if (j < like->ncolumns && like->columns[j].attnum == attnum &&
			!DdlnWatchChanged(like->targets_at, ATTNUM,
							  GetSysCacheHashValue2(ATTNUM, ObjectIdGetDatum(img->relid),
													Int16GetDatum(attnum))))
			targets[i] = like->columns[j].statistics;
		else
			lookups++;
	}
	img->targets_at = DdlnWatchNow(&ddln_watch_atts);
	if (lookups > DDLN_TARGET_LOOKUPS)
	{
		DdlnAttStatTargets(rel, targets);
		return;
	}
	for (int i = 0; i < desc->natts; i++)
	{
		if (targets[i] == PG_INT32_MIN)
			targets[i] = TupleDescAttr(desc, i)->attisdropped ? -1 :
				DdlnAttStatTarget(rel, TupleDescAttr(desc, i)->attnum);
	}
}

/*
 * Does key column "keyno" of an index print as its bare column name in
 * pg_get_indexdef: no sort option, no per-column option, the column's own
 * collation and the default operator class of the column's type?  (An
 * "indexid" of 0: the caller knows the index has no per-column option.)  Then
 * ruleutils adds nothing after the name (get_opclass_name prints nothing
 * when GetDefaultOpClass(type, the class's method) is the class).
 */
static bool
DdlnIndexKeyIsBare(Oid indexid, int keyno, Oid keytype, Oid keycoll, Oid indcoll,
				   Oid opclass, int16 option, DdlnOpclassMemo *memo)
{
	Oid			am;
	bool		options;

	if (option != 0 || (OidIsValid(indcoll) && indcoll != keycoll) ||
		(OidIsValid(indexid) && get_attoptions(indexid, keyno + 1) != (Datum) 0))
		return false;
	if (!DdlnOpclassOf(memo, opclass, &am, &options))
		return false;
	return DdlnDefaultOpclass(memo, keytype, am) == opclass;
}

/*
 * A live index of the table: its pg_index and pg_class rows, and the
 * vectors of its pg_index row after indkey (DdlnIndexRowVectors).
 */
typedef struct DdlnIndexRows DdlnIndexRows;
struct DdlnIndexRows
{
	Oid			oid;
	HeapTuple	itup;
	HeapTuple	ctup;			/* NULL: not found (or not read yet) */
	int			options;		/* a column with attoptions: 1, none: 0, unknown: -1 */
	oidvector  *indcoll;		/* NULL: not read yet; then point into itup */
	oidvector  *indclass;
	int2vector *indoption;
};

/*
 * Are the vectors of pg_index row "itup" from indkey to indoption laid out
 * one after the other as DdlnIndexRowVectors reads them: none null, each
 * with a 4-byte header (plain storage, never packed to a short one) at int
 * alignment?  (They are in every PostgreSQL this builds against; the check
 * costs a few instructions a column.)
 */
static bool
DdlnIndexVectorsInLine(HeapTuple itup, TupleDesc idesc)
{
	StaticAssertStmt(Anum_pg_index_indcollation == Anum_pg_index_indkey + 1 &&
					 Anum_pg_index_indclass == Anum_pg_index_indkey + 2 &&
					 Anum_pg_index_indoption == Anum_pg_index_indkey + 3,
					 "pg_index's vectors follow indkey");
	for (int attnum = Anum_pg_index_indkey; attnum <= Anum_pg_index_indoption; attnum++)
	{
		Form_pg_attribute att = TupleDescAttr(idesc, attnum - 1);

		if (att->attlen != -1 || att->attalign != TYPALIGN_INT ||
			att->attstorage != TYPSTORAGE_PLAIN || heap_attisnull(itup, attnum, idesc))
			return false;
	}
	return true;
}

/*
 * The collations, operator classes and options of an index's pg_index row
 * ("idesc": pg_index's descriptor), once: found from indkey (the row's
 * last column of a known place, Form_pg_index) by the lengths of the
 * vectors before each, where heap_deform_tuple walks every column of the
 * row (about 900 instructions: the row has null columns) and each
 * heap_getattr walks it from the start again.  heap_deform_tuple when the
 * layout is not the one expected (DdlnIndexVectorsInLine).  With
 * assertions on, checked against heap_getattr.
 */
static void
DdlnIndexRowVectors(DdlnIndexRows *row, TupleDesc idesc)
{
	Datum		values[Natts_pg_index];
	bool		nulls[Natts_pg_index];

	if (row->indclass != NULL)
		return;
	if (DdlnIndexVectorsInLine(row->itup, idesc))
	{
		char	   *p = (char *) &((Form_pg_index) GETSTRUCT(row->itup))->indkey;

		p = (char *) att_align_nominal(p + VARSIZE(p), TYPALIGN_INT);
		row->indcoll = (oidvector *) p;
		p = (char *) att_align_nominal(p + VARSIZE(p), TYPALIGN_INT);
		row->indclass = (oidvector *) p;
		p = (char *) att_align_nominal(p + VARSIZE(p), TYPALIGN_INT);
		row->indoption = (int2vector *) p;
#ifdef USE_ASSERT_CHECKING
		{
			bool		isnull;

			Assert(DatumGetPointer(heap_getattr(row->itup, Anum_pg_index_indcollation, idesc, &isnull)) == (Pointer) row->indcoll);
			Assert(DatumGetPointer(heap_getattr(row->itup, Anum_pg_index_indclass, idesc, &isnull)) == (Pointer) row->indclass);
			Assert(DatumGetPointer(heap_getattr(row->itup, Anum_pg_index_indoption, idesc, &isnull)) == (Pointer) row->indoption);
		}
#endif
		return;
	}
	/*
	 * Not reached by any test: pg_index is laid out as above in every
	 * PostgreSQL this builds against; kept for one that is not.
	 */
	heap_deform_tuple(row->itup, idesc, values, nulls);
	row->indcoll = (oidvector *) DatumGetPointer(values[Anum_pg_index_indcollation - 1]);
	row->indclass = (oidvector *) DatumGetPointer(values[Anum_pg_index_indclass - 1]);
	row->indoption = (int2vector *) DatumGetPointer(values[Anum_pg_index_indoption - 1]);
}

/*
 * What the plain definitions of one table's indexes share, each printed
 * once an image (DdlnImageIndexDefPlain): the table as
 * generate_qualified_relation_name prints it with the access method (" ON
 * schema.table USING am (", for the method last printed), and the key
 * columns' names quoted.
 */
typedef struct DdlnIndexPrinter
{
	TupleDesc	tabdesc;		/* the table's */
	const char *table;			/* the table, qualified and quoted */
	Oid			am;				/* the method "middle" names, or InvalidOid */
	char	   *middle;			/* " ON schema.table USING am (" */
	int			middlelen;
	const char **columns;		/* quoted names by attnum - 1, NULL: not yet */
	DdlnOpclassMemo *memo;
} DdlnIndexPrinter;

/* " ON schema.table USING am (" for access method "am"; false if none */
static bool
DdlnIndexPrinterMethod(DdlnIndexPrinter *pr, Oid am)
{
	HeapTuple	atup;

	if (am == pr->am)
		return true;
	atup = SearchSysCache1(AMOID, ObjectIdGetDatum(am));
	if (!HeapTupleIsValid(atup))
		return false;
	pr->middle = psprintf(" ON %s USING %s (", pr->table,
						  quote_identifier(NameStr(((Form_pg_am) GETSTRUCT(atup))->amname)));
	pr->middlelen = strlen(pr->middle);
	pr->am = am;
	ReleaseSysCache(atup);
	return true;
}

/*
 * pg_get_indexdef() of a plain index on columns, without ruleutils:
 * ruleutils builds a deparse context for every index (making each column
 * name of the table unique: quadratic in the columns) and searches the
 * default operator class of every key column.  Built here only when the
 * text is what pg_get_indexdef_worker prints, step for step, for an index
 * that has no expression, no predicate, no storage parameter, is not a
 * partitioned table's, and whose key columns are all bare
 * (DdlnIndexKeyIsBare): "CREATE [UNIQUE ]INDEX name ON schema.table USING
 * am (col, ...)[ INCLUDE (col, ...)][ NULLS NOT DISTINCT]", the table's
 * name as generate_qualified_relation_name prints it ("table", given).
 * "row" holds the index's pg_index row (of a scan: "idesc" is pg_index's
 * descriptor) and whether a column of the index has per-column options
 * (pg_attribute.attoptions; -1: look them up), "ctup" is its pg_class row;
 * the key columns' names and types are the table's descriptor's
 * (pr->tabdesc: an index on columns has no dropped or system column).
 * NULL otherwise: the caller asks pg_get_indexdef.
 */
static char *
DdlnImageIndexDefPlain(DdlnIndexRows *row, TupleDesc idesc, HeapTuple ctup, DdlnIndexPrinter *pr)
{
	HeapTuple	itup = row->itup;
	int			options = row->options;
	TupleDesc	tabdesc = pr->tabdesc;
	Form_pg_index idx = (Form_pg_index) GETSTRUCT(itup);
	Form_pg_class cls = (Form_pg_class) GETSTRUCT(ctup);
	StringInfoData buf;
	oidvector  *indcoll = NULL, *indclass = NULL;
	int2vector *indoption = NULL;
	bool		plain;

	plain = options <= 0 && heap_attisnull(itup, Anum_pg_index_indexprs, idesc) &&
		heap_attisnull(itup, Anum_pg_index_indpred, idesc) &&
		cls->relkind == RELKIND_INDEX &&
		heap_attisnull(ctup, Anum_pg_class_reloptions, NULL) &&
		DdlnIndexPrinterMethod(pr, cls->relam);
	if (plain)
	{
		DdlnIndexRowVectors(row, idesc);
		indcoll = row->indcoll;
		indclass = row->indclass;
		indoption = row->indoption;
	}
	initStringInfo(&buf);
	if (plain)
	{
		/* "CREATE [UNIQUE ]INDEX name ON table USING am (" (no format: cheaper) */
		appendStringInfoString(&buf, idx->indisunique ? "CREATE UNIQUE INDEX " : "CREATE INDEX ");
		appendStringInfoString(&buf, quote_identifier(NameStr(cls->relname)));
		appendBinaryStringInfo(&buf, pr->middle, pr->middlelen);
	}
	for (int keyno = 0; plain && keyno < idx->indnatts; keyno++)
	{
		AttrNumber	attnum = idx->indkey.values[keyno];
		Form_pg_attribute att;

		if (attnum <= 0 || attnum > tabdesc->natts ||
			TupleDescAttr(tabdesc, attnum - 1)->attisdropped)
		{
			plain = false;		/* an expression (cannot happen: no indexprs) */
			break;
		}
		att = TupleDescAttr(tabdesc, attnum - 1);
		if (keyno == idx->indnkeyatts)
			appendStringInfoString(&buf, ") INCLUDE (");
		else if (keyno > 0)
			appendStringInfoString(&buf, ", ");
		if (pr->columns[attnum - 1] == NULL)
			pr->columns[attnum - 1] = quote_identifier(NameStr(att->attname));
		appendStringInfoString(&buf, pr->columns[attnum - 1]);
		if (keyno < idx->indnkeyatts)
			plain = DdlnIndexKeyIsBare(options < 0 ? idx->indexrelid : InvalidOid, keyno,
									   att->atttypid, att->attcollation,
									   indcoll->values[keyno], indclass->values[keyno],
									   indoption->values[keyno], pr->memo);
	}
	if (plain)
		appendStringInfoString(&buf, idx->indnullsnotdistinct ? ") NULLS NOT DISTINCT" : ")");
	return plain ? buf.data : NULL;
}

/*
 * An index's definition: DdlnImageIndexDefPlain when it can print it,
 * else pg_get_indexdef (DdlnImageIndexDef).  With assertions on, every
 * plain text is checked against pg_get_indexdef's.
 */
static char *
DdlnImageIndexDefinition(DdlnIndexRows *row, TupleDesc idesc, HeapTuple ctup, DdlnIndexPrinter *pr)
{
	Oid			indexid = row->oid;
	char	   *def = DdlnImageIndexDefPlain(row, idesc, ctup, pr);

	if (def == NULL)
		return DdlnImageIndexDef(indexid);
#ifdef USE_ASSERT_CHECKING
	{
		char	   *ruleutils = DdlnImageIndexDef(indexid);

		if (strcmp(def, ruleutils) != 0)
			elog(ERROR, "index definition \"%s\" differs from pg_get_indexdef's \"%s\"",
				 def, ruleutils);
	}
#endif
	return def;
}

static int
DdlnIndexRowsCmp(const void *a, const void *b)
{
	Oid			x = ((const DdlnIndexRows *) a)->oid;
	Oid			y = ((const DdlnIndexRows *) b)->oid;

	return (x > y) - (x < y);
}

static DdlnIndexRows *
DdlnIndexRowsFind(DdlnIndexRows *rows, int n, Oid oid)
{
	DdlnIndexRows key;

	key.oid = oid;
	return bsearch(&key, rows, n, sizeof(DdlnIndexRows), DdlnIndexRowsCmp);
}

/*
 * A scan of catalog "catrel" through its index "indexid" (on "attno") for
 * the rows whose "attno" is any of the n OIDs of "rows" (sorted by OID):
 * one scan for all the indexes of a table, where a catalog cache lookup
 * each would search and copy them one at a time (an image of a table no
 * statement of the session touched reads them all cold).  When the OIDs
 * are dense (from the first to the last, fewer than DDLN_RANGE_FACTOR
 * times as many OIDs as rows: indexes made one after the other), a range
 * of them, which descends the catalog's index once, where an array of OIDs
 * descends it again for each (PostgreSQL before 17: about 5,000
 * instructions an OID); the other rows in the range are the caller's to
 * skip (the OIDs are shared by every catalog: at most DDLN_RANGE_FACTOR
 * times as many relations).  "maxattnum": with an index on (attno,
 * attnum), only the rows of attnum 1 to maxattnum (0: all).  NULL when the
 * catalog's indexes cannot be used now (the caller looks each up then).
 */
#define DDLN_RANGE_FACTOR 4

static SysScanDesc
DdlnScanIndexRows(Relation catrel, Oid indexid, AttrNumber attno, DdlnIndexRows *rows, int n,
				  int maxattnum)
{
	Datum	   *oids;
	ScanKeyData key[4];
	int			nkeys = 1;

	if (IgnoreSystemIndexes || ReindexIsProcessingIndex(indexid))
		return NULL;
	if ((uint64) rows[n - 1].oid - rows[0].oid < (uint64) DDLN_RANGE_FACTOR * n)
	{
		ScanKeyInit(&key[0], attno, BTGreaterEqualStrategyNumber, F_OIDGE,
					ObjectIdGetDatum(rows[0].oid));
		ScanKeyInit(&key[1], attno, BTLessEqualStrategyNumber, F_OIDLE,
					ObjectIdGetDatum(rows[n - 1].oid));
		nkeys = 2;
		if (maxattnum > 0)
		{
			ScanKeyInit(&key[2], Anum_pg_attribute_attnum, BTGreaterEqualStrategyNumber,
						F_INT2GE, Int16GetDatum(1));
			ScanKeyInit(&key[3], Anum_pg_attribute_attnum, BTLessEqualStrategyNumber,
						F_INT2LE, Int16GetDatum(maxattnum));
			nkeys = 4;
		}
		return systable_beginscan(catrel, indexid, true, NULL, nkeys, key);
	}
	oids = palloc(sizeof(Datum) * n);
	for (int i = 0; i < n; i++)
		oids[i] = ObjectIdGetDatum(rows[i].oid);
	ScanKeyEntryInitialize(&key[0], SK_SEARCHARRAY, attno, BTEqualStrategyNumber, InvalidOid,
						   C_COLLATION_OID, F_OIDEQ,
						   PointerGetDatum(construct_array(oids, n, OIDOID, sizeof(Oid), true,
														   TYPALIGN_INT)));
	return systable_beginscan(catrel, indexid, true, NULL, 1, key);
}

#define DDLN_FEW_ROWS 2

/*
 * Can a column of the index have per-column options?  Only a key column
 * whose operator class takes options (DdlnOpclassOf): CREATE INDEX refuses
 * them for any other, and ALTER INDEX cannot set an index column's.  (An
 * index made with options whose class loses its options function later,
 * by ALTER OPERATOR FAMILY ... DROP FUNCTION of one added with ADD
 * FUNCTION, would be printed without them; PostgreSQL then refuses to
 * read that index's options itself: "operator class ... has no options".
 * Left so.)
 */
static bool
DdlnIndexMayHaveOptions(DdlnIndexRows *row, TupleDesc idesc, DdlnOpclassMemo *memo)
{
	int			nkeys = ((Form_pg_index) GETSTRUCT(row->itup))->indnkeyatts;
	Oid			am;
	bool		options;

	DdlnIndexRowVectors(row, idesc);
	for (int keyno = 0; keyno < nkeys && keyno < row->indclass->dim1; keyno++)
	{
		if (!DdlnOpclassOf(memo, row->indclass->values[keyno], &am, &options) || options)
			return true;
	}
	return false;
}

/*
 * The pg_class rows of the table's indexes, and with "options" whether a
 * column of each has per-column options (pg_attribute.attoptions): one
 * scan of pg_class, and one of pg_attribute for all of them unless no
 * index's operator classes take options (DdlnIndexMayHaveOptions).
 * "rows" sorted by OID; "idesc" pg_index's descriptor.
 */
static void
DdlnReadIndexRows(DdlnIndexRows *rows, int n, bool options, TupleDesc idesc,
				  DdlnOpclassMemo *memo)
{
	Relation	catrel;
	SysScanDesc scan = NULL;
	HeapTuple	tup;
	int			maxattnum = 1;
	int			missing = 0;

	for (int i = 0; i < n; i++)
		missing += (rows[i].ctup == NULL);
	/* a few rows not taken from "before" are looked up one by one */
	if (missing == n || missing > DDLN_FEW_ROWS)
	{
		catrel = table_open(RelationRelationId, AccessShareLock);
		scan = DdlnScanIndexRows(catrel, ClassOidIndexId, Anum_pg_class_oid, rows, n, 0);
		while (scan && HeapTupleIsValid(tup = systable_getnext(scan)))
		{
			DdlnIndexRows *r = DdlnIndexRowsFind(rows, n, ((Form_pg_class) GETSTRUCT(tup))->oid);

			if (r && r->ctup == NULL)
				r->ctup = heap_copytuple(tup);
		}
		if (scan)
			systable_endscan(scan);
		table_close(catrel, AccessShareLock);
		if (scan == NULL)
			return;
	}
	if (!options)
		return;
	options = false;
	for (int i = 0; i < n; i++)
	{
		rows[i].options = DdlnIndexMayHaveOptions(&rows[i], idesc, memo) ? -1 : 0;
		options = options || rows[i].options != 0;
	}
	if (!options)
		return;

	/* an index's pg_attribute rows: attnum 1 to its number of columns */
	for (int i = 0; i < n; i++)
		maxattnum = Max(maxattnum, ((Form_pg_index) GETSTRUCT(rows[i].itup))->indnatts);
	catrel = table_open(AttributeRelationId, AccessShareLock);
	scan = DdlnScanIndexRows(catrel, AttributeRelidNumIndexId, Anum_pg_attribute_attrelid, rows, n,
							  maxattnum);
	if (scan == NULL)
	{
		table_close(catrel, AccessShareLock);
		return;
	}
	for (int i = 0; i < n; i++)
		rows[i].options = 0;
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		DdlnIndexRows *r = DdlnIndexRowsFind(rows, n, ((Form_pg_attribute) GETSTRUCT(tup))->attrelid);

		if (r && !heap_attisnull(tup, Anum_pg_attribute_attoptions, RelationGetDescr(catrel)))
			r->options = 1;
	}
	systable_endscan(scan);
	table_close(catrel, AccessShareLock);
}

/*
 * The storage parameters (pg_class.reloptions) of a relation's or an
 * index's pg_class row, as "name=value" strings; NIL for none.
 */
static List *
DdlnRelOptionStrings(HeapTuple classtup)
{
	bool		isnull;
	Datum		d;
	List	   *strings = NIL;
	ListCell   *lc;

	/* a bit of the null bitmap first: most have none (getattr walks the row) */
	if (heap_attisnull(classtup, Anum_pg_class_reloptions, NULL))
		return NIL;
	d = SysCacheGetAttr(RELOID, classtup, Anum_pg_class_reloptions, &isnull);
	if (isnull)
		return NIL;
	foreach(lc, untransformRelOptions(d))
	{
		DefElem    *def = (DefElem *) lfirst(lc);

		strings = lappend(strings,
						  def->arg ? psprintf("%s=%s", def->defname, defGetString(def)) :
						  pstrdup(def->defname));
	}
	return strings;
}

/*
 * The pg_index rows of the indexes an image lists, from one scan of
 * pg_index by table (catrel, open), sorted by OID; *n is their number.
 */
static DdlnIndexRows *
DdlnImageIndexList(const DdlnImage *img, Relation catrel, int *n)
{
	int			allocated = 4;
	DdlnIndexRows *rows = palloc(sizeof(DdlnIndexRows) * allocated);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	itup;

	ScanKeyInit(&key, Anum_pg_index_indrelid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(img->relid));
	scan = systable_beginscan(catrel, IndexIndrelidIndexId, true, NULL, 1, &key);
	while (HeapTupleIsValid(itup = systable_getnext(scan)))
	{
		Form_pg_index index = (Form_pg_index) GETSTRUCT(itup);

		/* an index being dropped (RelationGetIndexList leaves it out too) */
		if (!index->indislive)
			continue;

		/*
		 * An invalid index, as pg_dump leaves it out: what a failed CREATE
		 * INDEX CONCURRENTLY or REINDEX CONCURRENTLY left, whose statement
		 * recorded no event.  A partitioned table's is kept: made ON ONLY,
		 * it is invalid until each partition has one attached.
		 */
		if (!index->indisvalid && img->relkind != RELKIND_PARTITIONED_TABLE)
			continue;
		if (*n == allocated)
		{
			allocated *= 2;
			rows = repalloc(rows, sizeof(DdlnIndexRows) * allocated);
		}
		rows[*n].oid = index->indexrelid;
		rows[*n].itup = heap_copytuple(itup);
		rows[*n].ctup = NULL;
		rows[*n].indcoll = rows[*n].indclass = NULL;
		rows[*n].indoption = NULL;
		rows[(*n)++].options = -1;
	}
	systable_endscan(scan);
	qsort(rows, *n, sizeof(DdlnIndexRows), DdlnIndexRowsCmp);
	return rows;
}

/*
 * The pg_index rows "like" (an image of the same relation read earlier in
 * the command) read, when no pg_index row changed since (DdlnWatchChanged),
 * without their pg_class rows; NULL otherwise.
 */
static DdlnIndexRows *
DdlnImageReusedIndexRows(const DdlnImage *img, const DdlnImage *like, int *n)
{
	DdlnIndexRows *rows;

	if (like == NULL || like->indexrows == NULL || like->relid != img->relid ||
		like->relkind != img->relkind || DdlnWatchChanged(like->read_at, INDEXRELID, 0))
		return NULL;
	*n = like->nindexrows;
	rows = palloc(sizeof(DdlnIndexRows) * Max(*n, 1));
	memcpy(rows, like->indexrows, sizeof(DdlnIndexRows) * *n);
	for (int i = 0; i < *n; i++)
	{
		rows[i].ctup = NULL;
		rows[i].options = -1;	/* looked up if a definition is printed */
	}
	return rows;
}

/*
 * The pg_class rows "like" read of the indexes in "rows" whose row no
 * invalidation touched since (DdlnWatchChanged, by the row's hash value).
 */
static void
DdlnImageReusedClassRows(const DdlnImage *img, DdlnIndexRows *rows, int n, const DdlnImage *like)
{
	bool		some = false;

	if (like == NULL || like->indexrows == NULL || like->relid != img->relid)
		return;
	/* (no pg_class row changed at all: no hash value to compute) */
	some = DdlnWatchChanged(like->read_at, RELOID, 0);
	for (int i = 0; i < n; i++)
	{
		DdlnIndexRows *r = DdlnIndexRowsFind(like->indexrows, like->nindexrows, rows[i].oid);

		if (r == NULL || r->ctup == NULL ||
			(some && DdlnWatchChanged(like->read_at, RELOID,
									  GetSysCacheHashValue1(RELOID, ObjectIdGetDatum(rows[i].oid)))))
			continue;
		rows[i].ctup = r->ctup;
	}
}

/*
 * The indexes of "rel", by name, each with the constraint it implements
 * (read the constraints first), and the replica identity's index.  Their
 * pg_index rows come from one scan of pg_index by table (those of live
 * indexes, and valid ones as pg_dump reads them), their pg_class rows
 * from one scan too, and unless "like" stands for their definitions
 * ("reuse": an "after" whose "before" printed them) their pg_attribute
 * rows also when an operator class of theirs takes options
 * (DdlnReadIndexRows).
 */
static void
DdlnImageReadIndexes(DdlnImage *img, Relation rel, const DdlnImage *like, bool reuse)
{
	Oid			replident_index = InvalidOid;
	int			n = 0;
	int			from = 0;		/* DdlnReusedDefinition's */
	DdlnIndexRows *rows;
	Relation	catrel;
	DdlnIndexPrinter pr = {0};

	pr.tabdesc = RelationGetDescr(rel);
	pr.memo = DdlnOpclassMemoGet();
	catrel = table_open(IndexRelationId, AccessShareLock);
	/* (every invalidation processed: the memo's and the lock's) */
	img->read_at = DdlnWatchNow(&ddln_watch_rows);
	rows = DdlnImageReusedIndexRows(img, like, &n);
	if (rows == NULL)
		rows = DdlnImageIndexList(img, catrel, &n);
	DdlnImageReusedClassRows(img, rows, n, like);
	if (n > 0)
		DdlnReadIndexRows(rows, n, like == NULL || !reuse, RelationGetDescr(catrel), pr.memo);

	img->indexes = palloc(sizeof(DdlnImgPart) * Max(n, 1));
	for (int k = 0; k < n; k++)
	{
		Oid			indexid = rows[k].oid;
		DdlnImgPart *part;
		HeapTuple	ctup = rows[k].ctup;

		if (ctup == NULL)
		{
			ctup = SearchSysCache1(RELOID, ObjectIdGetDatum(indexid));
			if (!HeapTupleIsValid(ctup))
				continue;
		}
		part = &img->indexes[img->nindexes++];
		memset(part, 0, sizeof(*part));
		part->oid = indexid;
		part->name = pstrdup(NameStr(((Form_pg_class) GETSTRUCT(ctup))->relname));
		part->validated = ((Form_pg_index) GETSTRUCT(rows[k].itup))->indisvalid;
		part->clustered = ((Form_pg_index) GETSTRUCT(rows[k].itup))->indisclustered;
		/* the replica identity's, as pg_dump reads it (not the relcache's) */
		if (((Form_pg_index) GETSTRUCT(rows[k].itup))->indisreplident &&
			img->replident == REPLICA_IDENTITY_INDEX)
			replident_index = indexid;
		part->reloptions = DdlnRelOptionStrings(ctup);
		if (reuse)
			part->definition = DdlnReusedDefinition(like->indexes, like->nindexes, part, &from);
		if (part->definition == NULL)
		{
			/* the table as generate_qualified_relation_name prints it */
			if (pr.table == NULL)
			{
				pr.table = quote_qualified_identifier(img->schema, img->name);
				pr.columns = palloc0(sizeof(char *) * Max(pr.tabdesc->natts, 1));
			}
			part->definition = DdlnImageIndexDefinition(&rows[k], RelationGetDescr(catrel),
														ctup, &pr);
		}
		if (rows[k].ctup == NULL)
			ReleaseSysCache(ctup);
		for (int i = 0; i < img->nconstraints; i++)
		{
			if (img->constraints[i].indexid == indexid)
				part->constraint = img->constraints[i].name;
		}
		if (indexid == replident_index)
			img->replident_index = part->name;
	}
	table_close(catrel, AccessShareLock);
	DdlnSortParts(img->indexes, img->nindexes);
	img->indexrows = rows;
	img->nindexrows = n;
}

/*
 * A sequence's parameters from pg_sequence, and the column that owns it
 * (OWNED BY, or the identity column it serves) from pg_depend: a lookup
 * and an index scan of the sequence's own dependencies.
 */
static void
DdlnImageReadSequence(DdlnImage *img)
{
	HeapTuple	tup = SearchSysCache1(SEQRELID, ObjectIdGetDatum(img->relid));
	Form_pg_sequence form;
	DdlnImgSequence *seq;
	Oid			tableid;
	int32		colid;
	bool		owned;

	seq = palloc0(sizeof(DdlnImgSequence));
	img->seq = seq;
	if (!HeapTupleIsValid(tup))
		return;					/* cannot happen: a sequence without its row */
	form = (Form_pg_sequence) GETSTRUCT(tup);
	seq->type = DdlnImageTypeName(form->seqtypid, -1);
	seq->start = form->seqstart;
	seq->increment = form->seqincrement;
	seq->min = form->seqmin;
	seq->max = form->seqmax;
	seq->cache = form->seqcache;
	seq->cycle = form->seqcycle;
	ReleaseSysCache(tup);

	owned = sequenceIsOwned(img->relid, DEPENDENCY_AUTO, &tableid, &colid);
	if (!owned && sequenceIsOwned(img->relid, DEPENDENCY_INTERNAL, &tableid, &colid))
		owned = seq->owner_identity = true;
	if (owned)
	{
		seq->owner_name = get_rel_name(tableid);
		seq->owner_column = get_attname(tableid, colid, true);
		if (seq->owner_name == NULL || seq->owner_column == NULL)
			seq->owner_name = seq->owner_column = NULL;
		else
			seq->owner_schema = get_namespace_name_or_temp(get_rel_namespace(tableid));
	}
}

/* The relation's storage parameters (pg_class.reloptions), "name=value". */
static void
DdlnImageReadRelOptions(DdlnImage *img)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(img->relid));

	if (!HeapTupleIsValid(tup))
		return;
	img->reloptions = DdlnRelOptionStrings(tup);
	ReleaseSysCache(tup);
}

/* Set "name" to "value" in the current GUC nest level. */
static void
DdlnImgSet(const char *name, const char *value)
{
	(void) set_config_option(name, value, PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
}

/*
 * Open a GUC nest level with the settings every image is printed under
 * (the file's header), and return it for AtEOXact_GUC.  Names as pg_dump
 * prints them: qualified unless in pg_catalog, whatever the DDL's
 * search_path (ruleutils qualifies what it cannot see).  The output
 * settings are set only when the session's differ: reading a global costs
 * nothing, setting a GUC a few thousand instructions.
 */
static int
DdlnImgOutputSettings(void)
{
	int			nestlevel = NewGUCNestLevel();

	DdlnImgSet("search_path", "pg_catalog");
	if (DateStyle != USE_ISO_DATES)
		DdlnImgSet("datestyle", "ISO");
	if (IntervalStyle != INTSTYLE_POSTGRES)
		DdlnImgSet("intervalstyle", "postgres");
	if (extra_float_digits <= 0)
		DdlnImgSet("extra_float_digits", "1");
	if (bytea_output != BYTEA_OUTPUT_HEX)
		DdlnImgSet("bytea_output", "hex");
	if (!DdlnStandardConformingStrings())
		DdlnImgSet("standard_conforming_strings", "on");
	if (quote_all_identifiers)
		DdlnImgSet("quote_all_identifiers", "off");
	if (session_timezone == NULL ||
		strcmp(pg_get_timezone_name(session_timezone), "UTC") != 0)
		DdlnImgSet("timezone", "UTC");
	return nestlevel;
}

/*
 * The image of relation "relid" as the catalogs say now, or NULL when it is
 * not a relation of the kinds that have images (or does not exist).  The
 * columns and defaults come from the relation cache (the command that
 * touched the relation built its entry already), constraints from
 * pg_constraint, indexes from one scan of each of their catalogs.  "like", an image of the same relation read earlier in
 * the command, or NULL: the definitions of its unchanged constraints and
 * indexes are taken from it instead of printed again.  "dropped": read for
 * a drop's pre-image (no view query, DdlnImageReadKind).
 */
DdlnImage *
DdlnImageRead(Oid relid, const DdlnImage *like, bool dropped)
{
	Relation	rel;
	DdlnImage  *img;
	int			nestlevel;
	bool		reuse;

	if (!DdlnImageKind(get_rel_relkind(relid)))
		return NULL;
	/*
	 * Other backends' invalidations first (a lock the command holds already
	 * takes none): the relation's entry and the catalog snapshot as of now,
	 * and the lists DdlnWatchChanged reads complete.
	 */
	AcceptInvalidationMessages();
	rel = relation_open(relid, AccessShareLock);

	nestlevel = DdlnImgOutputSettings();

	img = palloc0(sizeof(DdlnImage));
	img->relid = relid;
	img->schema = get_namespace_name_or_temp(RelationGetNamespace(rel));
	img->name = pstrdup(RelationGetRelationName(rel));
	img->relkind = rel->rd_rel->relkind;
	img->replident = rel->rd_rel->relreplident;
	img->unlogged = (rel->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED);

	if (img->relkind == RELKIND_SEQUENCE)
		DdlnImageReadSequence(img);
	else
	{
		DdlnImageReadColumns(img, rel, like);
		reuse = DdlnImageMayReuse(like, img);
		DdlnImageReadConstraints(img, like, reuse, rel->rd_rel->relispartition);
		DdlnImageReadIndexes(img, rel, like, reuse);
		DdlnImageReadKind(img, dropped);
		DdlnImageReadRelOptions(img);
	}

	AtEOXact_GUC(true, nestlevel);
	relation_close(rel, AccessShareLock);
	return img;
}

const char *
DdlnIdentityName(char identity)
{
	if (identity == ATTRIBUTE_IDENTITY_ALWAYS)
		return "always";
	if (identity == ATTRIBUTE_IDENTITY_BY_DEFAULT)
		return "by default";
	return NULL;
}

const char *
DdlnReplIdentName(char ri)
{
	switch (ri)
	{
		case REPLICA_IDENTITY_NOTHING:
			return "nothing";
		case REPLICA_IDENTITY_FULL:
			return "full";
		case REPLICA_IDENTITY_INDEX:
			return "index";
	}
	return "default";
}

/*
 * An image and its parts are built as JsonbValue trees (common.c, DdlnJv*:
 * no push per key and value), an "after"'s unchanged parts its "before"'s
 * (DdlnImgImageValue); DdlnImgPush* push one into a builder's state.  The
 * keys of each object are given in the order jsonb keeps them (shorter
 * first, then bytewise), so that DdlnJvDone finds them sorted.
 */
/* A column's STORAGE (pg_attribute.attstorage), as ALTER TABLE spells it. */
const char *
DdlnStorageName(char storage)
{
	switch (storage)
	{
		case TYPSTORAGE_PLAIN:
			return "plain";
		case TYPSTORAGE_EXTERNAL:
			return "external";
		case TYPSTORAGE_EXTENDED:
			return "extended";
		case TYPSTORAGE_MAIN:
			return "main";
	}
	return NULL;
}

/* A column's COMPRESSION (pg_attribute.attcompression), or NULL: the default. */
const char *
DdlnCompressionName(char compression)
{
	return CompressionMethodIsValid(compression) ?
		GetCompressionMethodName(compression) : NULL;
}

static JsonbValue *
DdlnImgColumnValue(const DdlnImgColumn *col)
{
	JsonbValue *v = DdlnJvObject(16);

	DdlnJvString(v, "name", col->name);
	DdlnJvString(v, "type", col->type);
	DdlnJvInt(v, "attnum", col->attnum);
	DdlnJvString(v, "default", col->def);
	if (col->storage != col->type_storage)
		DdlnJvString(v, "storage", DdlnStorageName(col->storage));
	DdlnJvString(v, "identity", DdlnIdentityName(col->identity));
	DdlnJvBool(v, "not_null", col->not_null);
	if (col->not_null_named)
		DdlnJvString(v, "not_null_name", col->not_null_name);
	if (col->not_null_no_inherit)
		DdlnJvBool(v, "not_null_no_inherit", true);
	if (col->not_null_not_valid)
		DdlnJvBool(v, "not_null_not_valid", true);
	DdlnJvString(v, "collation", col->collation);
	DdlnJvString(v, "generated", col->generated);
	if (col->is_virtual)
		DdlnJvBool(v, "virtual", true);
	if (col->inherited)
		DdlnJvBool(v, "inherited", true);
	if (col->statistics >= 0)
		DdlnJvInt(v, "statistics", col->statistics);
	if (col->compression != '\0')
		DdlnJvString(v, "compression", DdlnCompressionName(col->compression));
	return DdlnJvDone(v);
}

static JsonbValue *
DdlnImgConstraintValue(const DdlnImgPart *con)
{
	JsonbValue *v = DdlnJvObject(4);

	DdlnJvString(v, "name", con->name);
	DdlnJvString(v, "type", con->type);
	if (con->inherited)
		DdlnJvBool(v, "inherited", true);
	DdlnJvString(v, "definition", con->definition);
	return DdlnJvDone(v);
}

static JsonbValue *
DdlnImgIndexValue(const DdlnImgPart *ind)
{
	JsonbValue *v = DdlnJvObject(4);

	DdlnJvString(v, "name", ind->name);
	if (ind->clustered)
		DdlnJvBool(v, "clustered", true);
	DdlnJvString(v, "constraint", ind->constraint);
	DdlnJvString(v, "definition", ind->definition);
	return DdlnJvDone(v);
}

/* The column owning a sequence, {"schema", "name", "column", "identity"}, or null. */
static JsonbValue *
DdlnImgOwnerValue(const DdlnImgSequence *seq)
{
	JsonbValue *v;

	if (seq->owner_name == NULL)
	{
		v = palloc(sizeof(JsonbValue));
		v->type = jbvNull;
		return v;
	}
	v = DdlnJvObject(4);
	DdlnJvString(v, "name", seq->owner_name);
	DdlnJvString(v, "column", seq->owner_column);
	DdlnJvString(v, "schema", seq->owner_schema);
	DdlnJvBool(v, "identity", seq->owner_identity);
	return DdlnJvDone(v);
}

/* A list of strings as an array. */
static JsonbValue *
DdlnImgStringsValue(List *strings)
{
	JsonbValue *v = DdlnJvArray(list_length(strings));
	ListCell   *lc;

	foreach(lc, strings)
	{
		JsonbValue	s;

		s.type = jbvString;
		s.val.string.val = (char *) lfirst(lc);
		s.val.string.len = strlen(s.val.string.val);
		DdlnJvAdd(v, NULL, &s);
	}
	return v;
}

/* A table's INHERITS parents, in order: [{"schema": ..., "name": ...}, ...] */
static JsonbValue *
DdlnImgInheritsValue(const DdlnImage *img)
{
	JsonbValue *v = DdlnJvArray(list_length(img->inherits) / 2);

	for (int i = 0; i + 1 < list_length(img->inherits); i += 2)
	{
		JsonbValue *p = DdlnJvObject(2);

		DdlnJvString(p, "name", list_nth(img->inherits, i + 1));
		DdlnJvString(p, "schema", list_nth(img->inherits, i));
		DdlnJvAdd(v, NULL, DdlnJvDone(p));
	}
	return v;
}

/* A typed table's type: {"schema": ..., "name": ...} */
static JsonbValue *
DdlnImgOfTypeValue(const DdlnImage *img)
{
	JsonbValue *v = DdlnJvObject(2);

	DdlnJvString(v, "name", img->oftype_name);
	DdlnJvString(v, "schema", img->oftype_schema);
	return DdlnJvDone(v);
}

/*
 * Is a column the same in both images, in every field read (not only
 * those printed)?  A field added to DdlnImgColumn is added here, or an
 * "after" would show its "before"'s column.
 */
static bool
DdlnImgSameColumn(const DdlnImgColumn *b, const DdlnImgColumn *a)
{
	return b->attnum == a->attnum && DdlnStrEq(b->name, a->name) &&
		DdlnStrEq(b->type, a->type) && DdlnStrEq(b->collation, a->collation) &&
		b->not_null == a->not_null && DdlnStrEq(b->not_null_name, a->not_null_name) &&
		b->not_null_named == a->not_null_named &&
		b->not_null_no_inherit == a->not_null_no_inherit &&
		b->not_null_not_valid == a->not_null_not_valid && DdlnStrEq(b->def, a->def) &&
		b->identity == a->identity && DdlnStrEq(b->generated, a->generated) &&
		b->is_virtual == a->is_virtual && b->inherited == a->inherited &&
		b->storage == a->storage && b->type_storage == a->type_storage &&
		b->compression == a->compression && b->statistics == a->statistics;
}

/* The same for a constraint or an index (DdlnImgPart: every field). */
static bool
DdlnImgSamePart(const DdlnImgPart *b, const DdlnImgPart *a)
{
	return b->oid == a->oid && b->indexid == a->indexid && DdlnStrEq(b->name, a->name) &&
		DdlnStrEq(b->type, a->type) && DdlnStrEq(b->definition, a->definition) &&
		DdlnStrEq(b->constraint, a->constraint) && b->validated == a->validated &&
		b->deferrable == a->deferrable && b->deferred == a->deferred &&
		b->inherited == a->inherited && b->clustered == a->clustered &&
		DdlnImgSameStrings(b->reloptions, a->reloptions);
}

/* The value of "key" in an image's tree, or NULL. */
static const JsonbValue *
DdlnImgMember(const JsonbValue *image, const char *key)
{
	for (int i = 0; image && i < image->val.object.nPairs; i++)
	{
		const JsonbPair *pair = &image->val.object.pairs[i];

		if (pair->key.val.string.len == (int) strlen(key) &&
			memcmp(pair->key.val.string.val, key, pair->key.val.string.len) == 0)
			return &pair->value;
	}
	return NULL;
}

/*
 * An image's columns: each one the same in "like" (of the same attnum, its
 * column "likecols" holds, built from "like") is that same value, not
 * built again.  Both lists are in attnum order.
 */
static JsonbValue *
DdlnImgColumnsValue(const DdlnImage *img, const DdlnImage *like,
					const JsonbValue *likecols)
{
	JsonbValue *arr = DdlnJvArray(img->ncolumns);
	int			j = 0;

	for (int i = 0; i < img->ncolumns; i++)
	{
		const DdlnImgColumn *col = &img->columns[i];

		while (likecols && j < like->ncolumns && like->columns[j].attnum < col->attnum)
			j++;
		if (likecols && j < like->ncolumns && DdlnImgSameColumn(&like->columns[j], col))
			DdlnJvAdd(arr, NULL, &likecols->val.array.elems[j]);
		else
			DdlnJvAdd(arr, NULL, DdlnImgColumnValue(col));
	}
	return arr;
}

/*
 * An image's indexes or constraints, the same way: a part the same in
 * "like" (of the same OID and name: both lists are in name order) is the
 * value of "likearr" built for it.
 */
static JsonbValue *
DdlnImgPartsValue(const DdlnImgPart *parts, int n, const DdlnImgPart *likeparts,
				  int liken, const JsonbValue *likearr,
				  JsonbValue *(*value) (const DdlnImgPart *))
{
	JsonbValue *arr = DdlnJvArray(n);
	int			j = 0;

	for (int i = 0; i < n; i++)
	{
		while (likearr && j < liken && strcmp(likeparts[j].name, parts[i].name) < 0)
			j++;
		if (likearr && j < liken && DdlnImgSamePart(&likeparts[j], &parts[i]))
			DdlnJvAdd(arr, NULL, &likearr->val.array.elems[j]);
		else
			DdlnJvAdd(arr, NULL, value(&parts[i]));
	}
	return arr;
}

/*
 * An image, as a JsonbValue tree.  "like": an image of the same relation
 * whose tree "likevalue" is (the command's "before"), or NULL: the columns,
 * indexes and constraints that did not change are its values, the same
 * pairs arrays (DdlnJvToJsonb writes each once, and copies its bytes for
 * the second).
 */
JsonbValue *
DdlnImgImageValue(const DdlnImage *img, const DdlnImage *like, const JsonbValue *likevalue)
{
	JsonbValue *v = DdlnJvObject(20);

	DdlnJvString(v, "kind", DdlnImageKindName(img->relkind));
	DdlnJvString(v, "name", img->name);
	DdlnJvString(v, "schema", img->schema);
	if (img->unlogged)
		DdlnJvBool(v, "unlogged", true);
	if (img->seq)
	{
		/* a sequence: its parameters and owner, nothing of a table's */
		DdlnJvString(v, "type", img->seq->type);
		DdlnJvInt(v, "start", img->seq->start);
		DdlnJvInt(v, "increment", img->seq->increment);
		DdlnJvInt(v, "min", img->seq->min);
		DdlnJvInt(v, "max", img->seq->max);
		DdlnJvInt(v, "cache", img->seq->cache);
		DdlnJvBool(v, "cycle", img->seq->cycle);
		DdlnJvAdd(v, "owned_by", DdlnImgOwnerValue(img->seq));
		return DdlnJvDone(v);
	}
	if (like == NULL || like->seq)
		likevalue = NULL;		/* (a sequence's tree has no columns) */
	DdlnJvAdd(v, "columns",
			  DdlnImgColumnsValue(img, like, DdlnImgMember(likevalue, "columns")));
	DdlnJvAdd(v, "indexes",
			  DdlnImgPartsValue(img->indexes, img->nindexes,
								like ? like->indexes : NULL, like ? like->nindexes : 0,
								DdlnImgMember(likevalue, "indexes"), DdlnImgIndexValue));
	DdlnJvAdd(v, "constraints",
			  DdlnImgPartsValue(img->constraints, img->nconstraints,
								like ? like->constraints : NULL, like ? like->nconstraints : 0,
								DdlnImgMember(likevalue, "constraints"),
								DdlnImgConstraintValue));
	DdlnJvString(v, "replica_identity", DdlnReplIdentName(img->replident));
	DdlnJvString(v, "replica_identity_index", img->replident_index);
	if (img->definition)
		DdlnJvString(v, "definition", img->definition);
	if (img->partition_key)
		DdlnJvString(v, "partition_key", img->partition_key);
	if (img->partition_bound && img->parent_name)
	{
		JsonbValue *of = DdlnJvObject(2);

		DdlnJvString(of, "schema", img->parent_schema);
		DdlnJvString(of, "name", img->parent_name);
		DdlnJvAdd(v, "partition_of", DdlnJvDone(of));
		DdlnJvString(v, "partition_bound", img->partition_bound);
	}
	if (img->inherits)
		DdlnJvAdd(v, "inherits", DdlnImgInheritsValue(img));
	if (img->oftype_name)
		DdlnJvAdd(v, "of_type", DdlnImgOfTypeValue(img));
	if (img->server)
	{
		DdlnJvString(v, "server", img->server);
		DdlnJvAdd(v, "options", DdlnImgStringsValue(img->options));
	}
	if (img->reloptions)
		DdlnJvAdd(v, "reloptions", DdlnImgStringsValue(img->reloptions));
	return DdlnJvDone(v);
}

void
DdlnImgPushColumn(DdlnJsonbState *st, const DdlnImgColumn *col)
{
	DdlnJsonPushValue(st, DdlnImgColumnValue(col));
}

void
DdlnImgPushConstraint(DdlnJsonbState *st, const DdlnImgPart *con)
{
	DdlnJsonPushValue(st, DdlnImgConstraintValue(con));
}

void
DdlnImgPushIndex(DdlnJsonbState *st, const DdlnImgPart *ind)
{
	DdlnJsonPushValue(st, DdlnImgIndexValue(ind));
}

void
DdlnImgPushOwner(DdlnJsonbState *st, const DdlnImgSequence *seq)
{
	DdlnJsonPushValue(st, DdlnImgOwnerValue(seq));
}

void
DdlnImgPushStrings(DdlnJsonbState *st, List *strings)
{
	DdlnJsonPushValue(st, DdlnImgStringsValue(strings));
}

/* A table's INHERITS parents as the next value of "st" (an array). */
void
DdlnImgPushInherits(DdlnJsonbState *st, const DdlnImage *img)
{
	DdlnJsonPushValue(st, DdlnImgInheritsValue(img));
}

/* A typed table's type as the next value of "st", or null. */
void
DdlnImgPushOfType(DdlnJsonbState *st, const DdlnImage *img)
{
	if (img->oftype_name == NULL)
		DdlnJsonString(st, NULL);
	else
		DdlnJsonPushValue(st, DdlnImgOfTypeValue(img));
}

/* An image as the next value of "st". */
void
DdlnImgPushImage(DdlnJsonbState *st, const DdlnImage *img)
{
	DdlnJsonPushValue(st, DdlnImgImageValue(img, NULL, NULL));
}

/* ---------- type images: domains and enums ---------- */

/* qsort: enum labels by their sort order */
static int
DdlnEnumCmp(const void *a, const void *b)
{
	float4		x = ((const Form_pg_enum) GETSTRUCT(*(const HeapTuple *) a))->enumsortorder;
	float4		y = ((const Form_pg_enum) GETSTRUCT(*(const HeapTuple *) b))->enumsortorder;

	return (x > y) - (x < y);
}

/* An enum's labels in their order, as an array. */
static void
DdlnImgPushEnumLabels(DdlnJsonbState *st, Oid typid)
{
	CatCList   *list = SearchSysCacheList1(ENUMTYPOIDNAME, ObjectIdGetDatum(typid));
	HeapTuple  *tuples = palloc(sizeof(HeapTuple) * Max(list->n_members, 1));

	for (int i = 0; i < list->n_members; i++)
		tuples[i] = &list->members[i]->tuple;
	qsort(tuples, list->n_members, sizeof(HeapTuple), DdlnEnumCmp);
	DdlnJsonToken(st, WJB_BEGIN_ARRAY);
	for (int i = 0; i < list->n_members; i++)
		DdlnJsonString(st, NameStr(((Form_pg_enum) GETSTRUCT(tuples[i]))->enumlabel));
	DdlnJsonToken(st, WJB_END_ARRAY);
	ReleaseSysCacheList(list);
	pfree(tuples);
}

/*
 * A domain's CHECK constraints (pg_constraint.contypid), by name.  Returns
 * the name of its NOT NULL constraint (17 on), or NULL.
 */
static char *
DdlnImgPushDomainConstraints(DdlnJsonbState *st, Oid typid)
{
	char	   *not_null_name = NULL;
	Relation	catrel = table_open(ConstraintRelationId, AccessShareLock);
	ScanKeyData key[2];
	SysScanDesc scan;
	HeapTuple	tup;
	DdlnImgPart *parts = NULL;
	int			n = 0;

	ScanKeyInit(&key[0], Anum_pg_constraint_conrelid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(InvalidOid));
	ScanKeyInit(&key[1], Anum_pg_constraint_contypid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(typid));
	scan = systable_beginscan(catrel, ConstraintRelidTypidNameIndexId, true, NULL, 2, key);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_constraint con = (Form_pg_constraint) GETSTRUCT(tup);
		const char *type = DdlnConstraintTypeName(con->contype);

		if (con->contype == DDLN_CONTYPE_NOTNULL)
			not_null_name = pstrdup(NameStr(con->conname));
		if (type == NULL)
			continue;			/* NOT NULL (17 on): the image's not_null */
		parts = parts ? repalloc(parts, sizeof(DdlnImgPart) * (n + 1)) : palloc(sizeof(DdlnImgPart));
		memset(&parts[n], 0, sizeof(DdlnImgPart));
		parts[n].name = pstrdup(NameStr(con->conname));
		parts[n].type = type;
		parts[n].definition =
			DdlnTextResult(DirectFunctionCall1(pg_get_constraintdef, ObjectIdGetDatum(con->oid)));
		n++;
	}
	systable_endscan(scan);
	table_close(catrel, AccessShareLock);
	if (n > 1)
		DdlnSortParts(parts, n);
	DdlnJsonToken(st, WJB_BEGIN_ARRAY);
	for (int i = 0; i < n; i++)
		DdlnImgPushConstraint(st, &parts[i]);
	DdlnJsonToken(st, WJB_END_ARRAY);
	return not_null_name;
}

/*
 * {"after": image} of a domain or an enum, read from the catalogs as
 * relation images are (search_path pg_catalog alone): a domain's base
 * type with its typmod, collation (when not its base type's), default
 * (pg_get_expr), NOT NULL and CHECK constraints; an enum's labels in their
 * order.  Every row of such a type has it, as a sequence's have theirs:
 * the consumer makes the type as "after" says, or brings it there.
 */
Jsonb *
DdlnTypeImageDetails(Oid typid, char typtype)
{
	HeapTuple	tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(typid));
	Form_pg_type typ;
	DdlnJsonbState st = DDLN_JSONB_STATE_INIT;
	int			nestlevel;
	char	   *schema;
	char	   *nnname;

	if (!HeapTupleIsValid(tup))
		return NULL;
	typ = (Form_pg_type) GETSTRUCT(tup);
	schema = get_namespace_name_or_temp(typ->typnamespace);
	if (schema == NULL || strcmp(schema, DDLN_SCHEMA_NAME) == 0)
	{
		ReleaseSysCache(tup);
		return NULL;
	}
	nestlevel = DdlnImgOutputSettings();

	DdlnJsonToken(&st, WJB_BEGIN_OBJECT);
	DdlnJsonKey(&st, "after");
	DdlnJsonToken(&st, WJB_BEGIN_OBJECT);
	DdlnJsonPair(&st, "kind", typtype == TYPTYPE_DOMAIN ? "domain" : "enum");
	DdlnJsonPair(&st, "name", NameStr(typ->typname));
	DdlnJsonPair(&st, "schema", schema);
	if (typtype == TYPTYPE_ENUM)
	{
		DdlnJsonKey(&st, "labels");
		DdlnImgPushEnumLabels(&st, typid);
	}
	else
	{
		bool		isnull;
		Datum		def = SysCacheGetAttr(TYPEOID, tup, Anum_pg_type_typdefaultbin, &isnull);

		DdlnJsonPair(&st, "type", DdlnImageTypeName(typ->typbasetype, typ->typtypmod));
		DdlnJsonPair(&st, "collation",
					OidIsValid(typ->typcollation) &&
					typ->typcollation != get_typcollation(typ->typbasetype) ?
					DdlnImageCollationName(typ->typcollation) : NULL);
		DdlnJsonPair(&st, "default", isnull ? NULL :
					DdlnTextResult(DirectFunctionCall2(pg_get_expr, def, ObjectIdGetDatum(InvalidOid))));
		DdlnJsonKey(&st, "not_null");
		DdlnJsonBool(&st, typ->typnotnull);
		DdlnJsonKey(&st, "constraints");
		nnname = DdlnImgPushDomainConstraints(&st, typid);
		/* its NOT NULL constraint's name, when not the default */
		if (nnname && !DdlnNotNullNameIsDefault(nnname, NameStr(typ->typname), NULL))
			DdlnJsonPair(&st, "not_null_name", nnname);
	}
	DdlnJsonToken(&st, WJB_END_OBJECT);
	ReleaseSysCache(tup);
	AtEOXact_GUC(true, nestlevel);
	return DdlnJsonbFinish(&st);
}

/* ---------- which relations have images ---------- */

/*
 * A relation capture leaves out: the extension's own (in its schema, as
 * capture.c judges objects), or a temporary one.
 */
bool
DdlnImageSkipped(Oid relid)
{
	char	   *nspname = get_namespace_name(get_rel_namespace(relid));

	if (nspname == NULL || strcmp(nspname, DDLN_SCHEMA_NAME) == 0)
		return true;
	return !ddln_capture_temp && get_rel_persistence(relid) == RELPERSISTENCE_TEMP;
}

/*
 * The relation of ours an object belongs to or is: a relation of the kinds
 * with images itself, or the relation of an index, a constraint, a
 * default, a rule or a row type; InvalidOid for anything else, or when
 * that relation no longer exists (a row type can be deleted after its
 * table, when the drop reached it through a function or a cast).
 */
Oid
DdlnImageRelationOf(Oid classId, Oid objectId)
{
	HeapTuple	tup;
	Oid			relid = InvalidOid;

	if (classId == RelationRelationId)
	{
		char		relkind = get_rel_relkind(objectId);

		if (relkind == RELKIND_INDEX || relkind == RELKIND_PARTITIONED_INDEX)
		{
			tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(objectId));
			if (HeapTupleIsValid(tup))
			{
				relid = ((Form_pg_index) GETSTRUCT(tup))->indrelid;
				ReleaseSysCache(tup);
			}
		}
		else
			relid = objectId;
	}
	else if (classId == ConstraintRelationId)
	{
		tup = SearchSysCache1(CONSTROID, ObjectIdGetDatum(objectId));
		if (HeapTupleIsValid(tup))
		{
			relid = ((Form_pg_constraint) GETSTRUCT(tup))->conrelid;
			ReleaseSysCache(tup);
		}
	}
	else if (classId == TypeRelationId)
	{
		tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(objectId));
		if (HeapTupleIsValid(tup))
		{
			relid = ((Form_pg_type) GETSTRUCT(tup))->typrelid;
			ReleaseSysCache(tup);
		}
	}
	else if (classId == AttrDefaultRelationId || classId == RewriteRelationId)
	{
		bool		attrdef = (classId == AttrDefaultRelationId);
		Relation	rel = table_open(classId, AccessShareLock);
		ScanKeyData key;
		SysScanDesc scan;

		ScanKeyInit(&key, attrdef ? Anum_pg_attrdef_oid : Anum_pg_rewrite_oid,
					BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(objectId));
		scan = systable_beginscan(rel, attrdef ? AttrDefaultOidIndexId : RewriteOidIndexId,
								  true, NULL, 1, &key);
		tup = systable_getnext(scan);
		if (HeapTupleIsValid(tup))
			relid = attrdef ? ((Form_pg_attrdef) GETSTRUCT(tup))->adrelid :
				((Form_pg_rewrite) GETSTRUCT(tup))->ev_class;
		systable_endscan(scan);
		table_close(rel, AccessShareLock);
	}
	/* a row type's relation may be gone already, or a composite type's */
	if (OidIsValid(relid) && !DdlnImageKind(get_rel_relkind(relid)))
		return InvalidOid;
	return relid;
}

/*
 * DDL replication's check (apply.c): the image of relation relid as it is
 * now, as {"after": image}, read exactly as capture reads "after"; NULL for
 * a relation of a kind without images.
 */
Jsonb *
DdlnRelationImageNow(Oid relid)
{
	DdlnImage  *img = DdlnImageRead(relid, NULL, false);
	DdlnJsonbState st = DDLN_JSONB_STATE_INIT;

	if (img == NULL)
		return NULL;
	DdlnJsonToken(&st, WJB_BEGIN_OBJECT);
	DdlnJsonKey(&st, "after");
	DdlnImgPushImage(&st, img);
	return DdlnJsonbFinish(&st);
}
