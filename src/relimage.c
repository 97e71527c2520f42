/*-------------------------------------------------------------------------
 *
 * relimage.c
 *	  Relation images and the changes between two of them: what a DDL
 *	  command did to the shape of a table, partitioned table, view,
 *	  materialized view, foreign table, sequence or composite type
 *	  ("before", "after" and "changes" in an event's details;
 *	  docs/reference.md, "The payload"), and the "after" image of a domain
 *	  or an enum (DdlnTypeImageDetails: base type, collation, default, NOT
 *	  NULL and CHECK constraints; labels in order).
 *
 * An image is read from the catalogs as PostgreSQL prints them: columns
 * (format_type with typmod; pg_get_expr for defaults and generated
 * expressions), constraints (pg_get_constraintdef), indexes
 * (pg_get_indexdef's text; a plain index's printed here as ruleutils
 * prints it, DdlnImageIndexDefPlain) and the replica identity, and what a kind needs to be
 * created again: a view's query (pg_get_viewdef; not in a drop's
 * pre-image), a partition key (pg_get_partkeydef), a foreign table's
 * server and options; its persistence (unlogged) and storage parameters
 * (pg_class.reloptions).  A sequence's image is its parameters
 * (pg_sequence) and the column owning it (pg_depend: OWNED BY, or the
 * identity column it serves), nothing of a table's.  All with search_path set to
 * pg_catalog alone while it is read: every name not in pg_catalog comes
 * qualified, as pg_dump prints it, whatever the DDL's search_path.  The
 * columns, defaults and index list come from the relation cache (the
 * command that touched the relation built its entry already, and a DROP
 * builds it to drop the relation), the constraints from pg_constraint.
 *
 * Rules kept here:
 * - With ddl_notify.capture_changes off nothing here runs: no image is
 *	 read, no lock taken, no key written.
 * - "before" of ALTER TABLE, ALTER SEQUENCE, RENAME, ALTER ... SET SCHEMA,
 *	 CREATE OR REPLACE VIEW, CREATE INDEX and ALTER INDEX RENAME is read at
 *	 ddl_command_start (DdlnImageCommandStart), only for the relation the
 *	 command names (an index's: its table), after taking the lock the
 *	 command itself will take (on the index for ALTER INDEX RENAME, which
 *	 locks nothing else), so that nothing changes it between the image
 *	 and the command.  The lock is taken only after the name resolved to a
 *	 relation the user owns: a user cannot make us wait on (or hold) a lock
 *	 on a relation the command would refuse to touch.  A relation that does
 *	 not exist, is not the user's, is temporary (unless
 *	 ddl_notify.capture_temp) or the extension's own is skipped: never an
 *	 error of ours.  The images wait, in a list that lives in the
 *	 transaction's memory, for ddl_command_end, which takes them by OID.
 * - "before" of a DROP (cascaded objects included, DROP SCHEMA, DROP
 *	 OWNED, ALTER TABLE ... DROP COLUMN CASCADE) is read by the object
 *	 access hook (DdlnImageObjectAccess): PostgreSQL calls it with OAT_DROP
 *	 right before it deletes each object, and deletes what depends on a
 *	 relation (its indexes, constraints, defaults, rules, columns) before
 *	 the relation.  So at the first deletion of anything of
 *	 a relation, the relation is still whole: its image is read then.  This
 *	 is way (a) of the two ways one could do it (images read before the
 *	 deletions, kept for sql_drop), made exact: only relations that are
 *	 actually dropped (or lose a part) are read, with no guess at what a
 *	 CASCADE will take.  The other way, reading at sql_drop through a copy
 *	 of a catalog snapshot taken before the drop, would need ruleutils and
 *	 the syscache (which use the current catalog snapshot) to read through
 *	 it, on every version: not done.
 * - Dropped images are kept flattened (jsonb) in memory up to work_mem,
 *	 then in a temporary file, with a hash table of OIDs to find them:
 *	 memory per dropped relation is a hash entry, whatever the number of
 *	 relations (DROP SCHEMA of thousands of tables).  sql_drop takes them
 *	 by OID (DdlnImageTakeDropped) and forgets them all at its end
 *	 (DdlnImageForgetDropped).
 * - Everything kept lives in the transaction's memory; the transaction's
 *	 end forgets it (an xact callback registered here at first use).  The
 *	 temporary file belongs to the transaction's resource owner and is
 *	 closed by sql_drop, or at PRE_COMMIT when a command's sql_drop did not
 *	 run; a subtransaction's rollback forgets the dropped images it may
 *	 have read.
 * - Every ddl_command_end row of a sequence has "after", even without
 *	 "before" and in a second row of the same command: PostgreSQL reports a
 *	 serial column's sequence twice in a CREATE TABLE (CREATE, then OWNED
 *	 BY), and an identity's sequence altered through ALTER TABLE under no
 *	 name of its own.  Reading one costs a syscache lookup and an index
 *	 scan of the sequence's own pg_depend rows.
 * - Changes are computed between two images: columns matched by attnum,
 *	 constraints and indexes by name, a renamed one by its OID.  An index
 *	 that implements a constraint comes and goes with its constraint and
 *	 has no change of its own (ADD CONSTRAINT ... USING INDEX names the
 *	 index it took over in its change).  A constraint of the same OID
 *	 validated or made [NOT] DEFERRABLE is altered, not dropped and added:
 *	 its definition is printed again, never reused from "before".
 * - What PostgreSQL makes and drops by itself is left out as pg_dump leaves
 *	 it out: a foreign key's clones (conparentid set).  A partitioned
 *	 table's valid index is printed without "ON ONLY" (pg_get_indexdef
 *	 prints it always): it made its partitions' indexes.
 *
 * Sections, in file order: JSON building; reading an image (relations,
 * sequences; DdlnImageRead); changes (DdlnImgPushChanges); type images
 * (DdlnTypeImageDetails); the transaction's end; "before" at
 * ddl_command_start (DdlnImageCommandStart) and the images of a row
 * (DdlnImageForRow); "before" of dropped relations (the object access
 * hook, DdlnImageTakeDropped).
 *
 * Floor: engine (capture's helper): called by capture.c, by apply.c (the
 * image DDL replication checks against, DdlnRelationImageNow), and by
 * ddl_notify.c (_PG_init installs the object access hook, which the server
 * calls);
 * calls common.c only.
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/reloptions.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/catalog.h"
#include "catalog/dependency.h"
#include "catalog/index.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/objectaccess.h"
#include "catalog/partition.h"
#include "catalog/pg_am.h"
#include "catalog/pg_attrdef.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_class.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_constraint.h"
#include "catalog/pg_enum.h"
#include "catalog/pg_index.h"
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
#include "storage/buffile.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/catcache.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/rel.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "common.h"

typedef struct DdlnImgColumn
{
	char	   *name;
	int			attnum;
	char	   *type;
	char	   *collation;		/* NULL: the type's */
	bool		not_null;
	char	   *def;			/* default expression, or NULL */
	char		identity;		/* '\0', ATTRIBUTE_IDENTITY_ALWAYS or _BY_DEFAULT */
	char	   *generated;		/* generated expression, or NULL */
} DdlnImgColumn;

/* a constraint or an index */
typedef struct DdlnImgPart
{
	Oid			oid;
	Oid			indexid;		/* a constraint's index (p, u, x), else 0 */
	char	   *name;
	const char *type;			/* constraints: "primary key"... */
	char	   *definition;
	char	   *constraint;		/* indexes: the constraint it implements */
	/* constraints: what ALTER TABLE can change in place (same OID) */
	bool		validated;
	bool		deferrable;
	bool		deferred;
} DdlnImgPart;

/* a sequence's parameters (pg_sequence) and the column owning it */
typedef struct DdlnImgSequence
{
	char	   *type;
	int64		start;
	int64		increment;
	int64		min;
	int64		max;
	int64		cache;
	bool		cycle;
	char	   *owner_schema;	/* NULL: owned by no column */
	char	   *owner_name;
	char	   *owner_column;
	bool		owner_identity; /* the column's identity sequence */
} DdlnImgSequence;

typedef struct DdlnImage
{
	Oid			relid;
	char	   *schema;
	char	   *name;
	char		relkind;
	bool		unlogged;
	List	   *reloptions;		/* "name=value" strings (WITH (...)) */
	DdlnImgSequence *seq;		/* a sequence's, else NULL */
	int			ncolumns;
	DdlnImgColumn *columns;
	int			nconstraints;
	DdlnImgPart *constraints;
	int			nindexes;
	DdlnImgPart *indexes;
	char		replident;
	char	   *replident_index;
	/* what only some kinds have (DdlnImageReadKind), else NULL */
	char	   *definition;		/* a view's or materialized view's query */
	char	   *partition_key;	/* a partitioned table's PARTITION BY */
	char	   *server;			/* a foreign table's server */
	List	   *options;		/* and its options, "name=value" strings */
	char	   *parent_schema;	/* a partition's partitioned table */
	char	   *parent_name;
	char	   *partition_bound;	/* and its FOR VALUES ... or DEFAULT */
} DdlnImage;

/* "before" images of the running command, read at ddl_command_start */
static MemoryContext pending_cxt = NULL;
static List *pending = NIL;		/* of DdlnImage * */
static List *given = NIL;		/* relations whose images a row of the
								 * command carries already */

/* images of dropped relations, read by the object access hook */
typedef struct DdlnDroppedEnt
{
	Oid			relid;			/* hash key */
	int			len;			/* -1: no image (not a relation of ours) */
	Jsonb	   *mem;			/* in memory, or NULL: in the file */
	int			fileno;
	off_t		offset;
} DdlnDroppedEnt;

static MemoryContext dropped_cxt = NULL;
static HTAB *dropped = NULL;
static BufFile *dropped_file = NULL;
static Size dropped_mem = 0;
static int	dropped_end_fileno = 0;	/* where the next image goes in the file */
static off_t dropped_end_offset = 0;

static object_access_hook_type prev_object_access_hook = NULL;

static Oid	DdlnImageRelationOf(Oid classId, Oid objectId);
static bool xact_callback_registered = false;

/* ---------- JSON building (jsonb directly, as capture.c builds it) ---------- */

static void
DdlnImgPush(DdlnJsonbState *st, JsonbValue *v)
{
	DdlnJsonbPush(st, DdlnJsonbInner(st)->contVal.type == jbvArray ? WJB_ELEM : WJB_VALUE, v);
}

static void
DdlnImgKey(DdlnJsonbState *st, const char *key)
{
	JsonbValue	v;

	v.type = jbvString;
	v.val.string.val = (char *) key;
	v.val.string.len = strlen(key);
	DdlnJsonbPush(st, WJB_KEY, &v);
}

static void
DdlnImgString(DdlnJsonbState *st, const char *s)
{
	JsonbValue	v;

	if (s == NULL)
		v.type = jbvNull;
	else
	{
		v.type = jbvString;
		v.val.string.val = (char *) s;
		v.val.string.len = strlen(s);
	}
	DdlnImgPush(st, &v);
}

static void
DdlnImgBool(DdlnJsonbState *st, bool b)
{
	JsonbValue	v;

	v.type = jbvBool;
	v.val.boolean = b;
	DdlnImgPush(st, &v);
}

static void
DdlnImgInt(DdlnJsonbState *st, int64 i)
{
	JsonbValue	v;

	v.type = jbvNumeric;
	v.val.numeric = int64_to_numeric(i);
	DdlnImgPush(st, &v);
}

static void
DdlnImgToken(DdlnJsonbState *st, JsonbIteratorToken what)
{
	DdlnJsonbPush(st, what, NULL);
}

/* key: "string" */
static void
DdlnImgPair(DdlnJsonbState *st, const char *key, const char *value)
{
	DdlnImgKey(st, key);
	DdlnImgString(st, value);
}

/* ---------- reading an image ---------- */

/* Is this a relation kind that has images? */
static bool
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

static int
DdlnPartCmp(const void *a, const void *b)
{
	return strcmp(((const DdlnImgPart *) a)->name, ((const DdlnImgPart *) b)->name);
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
 * The definition of "part" (its OID and name; a constraint's flags) in
 * "parts" of an earlier image, or NULL.  A constraint validated or made
 * deferrable in place keeps its OID: its definition is printed again.
 */
static char *
DdlnReusedDefinition(const DdlnImgPart *parts, int n, const DdlnImgPart *part)
{
	for (int i = 0; i < n; i++)
	{
		if (parts[i].oid == part->oid && strcmp(parts[i].name, part->name) == 0 &&
			parts[i].validated == part->validated && parts[i].deferrable == part->deferrable &&
			parts[i].deferred == part->deferred)
			return parts[i].definition;
	}
	return NULL;
}

/* The columns of "rel", in attnum order, dropped ones left out. */
static void
DdlnImageReadColumns(DdlnImage *img, Relation rel)
{
	TupleDesc	desc = RelationGetDescr(rel);
	char	  **defaults;

	/* defaults and generated expressions, by attnum */
	defaults = palloc0(sizeof(char *) * (desc->natts + 1));
	if (desc->constr)
	{
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

	img->columns = palloc0(sizeof(DdlnImgColumn) * Max(desc->natts, 1));
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		DdlnImgColumn *col;

		if (att->attisdropped)
			continue;
		col = &img->columns[img->ncolumns++];
		col->name = pstrdup(NameStr(att->attname));
		col->attnum = att->attnum;
		col->type = DdlnImageTypeName(att->atttypid, att->atttypmod);
		if (OidIsValid(att->attcollation) &&
			att->attcollation != get_typcollation(att->atttypid))
			col->collation = DdlnImageCollationName(att->attcollation);
		col->not_null = att->attnotnull;
		col->identity = att->attidentity;
		if (att->attgenerated != '\0')
			col->generated = defaults[att->attnum];
		else
			col->def = defaults[att->attnum];
	}
}

/*
 * The constraints of the relation, by name; a definition is taken from
 * "like" when "reuse" says it cannot have changed.
 */
static void
DdlnImageReadConstraints(DdlnImage *img, const DdlnImage *like, bool reuse)
{
	int			allocated = 4;
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
		if (reuse)
			part->definition = DdlnReusedDefinition(like->constraints, like->nconstraints, part);
		if (part->definition == NULL)
			part->definition =
				DdlnTextResult(DirectFunctionCall1(pg_get_constraintdef, ObjectIdGetDatum(con->oid)));
	}
	systable_endscan(scan);
	table_close(catrel, AccessShareLock);
	qsort(img->constraints, img->nconstraints, sizeof(DdlnImgPart), DdlnPartCmp);
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
 * Default operator classes already looked up while reading one image
 * (GetDefaultOpClass scans pg_opclass: the dearest part of an index's
 * definition), by column type and access method.  The catalogs do not
 * change while an image is read, so a remembered answer is the answer.
 */
#define DDLN_OPCLASS_MEMO 8
typedef struct DdlnOpclassMemo
{
	int			n;
	Oid			type[DDLN_OPCLASS_MEMO];
	Oid			am[DDLN_OPCLASS_MEMO];
	Oid			opclass[DDLN_OPCLASS_MEMO];
} DdlnOpclassMemo;

static Oid
DdlnDefaultOpclass(DdlnOpclassMemo *memo, Oid type, Oid am)
{
	Oid			opclass;

	for (int i = 0; i < memo->n; i++)
	{
		if (memo->type[i] == type && memo->am[i] == am)
			return memo->opclass[i];
	}
	opclass = GetDefaultOpClass(type, am);
	if (memo->n < DDLN_OPCLASS_MEMO)
	{
		memo->type[memo->n] = type;
		memo->am[memo->n] = am;
		memo->opclass[memo->n++] = opclass;
	}
	return opclass;
}

/*
 * Does key column "keyno" of an index print as its bare column name in
 * pg_get_indexdef: no sort option, no per-column option, the column's own
 * collation and the default operator class of the column's type?  Then
 * ruleutils adds nothing after the name (get_opclass_name prints nothing
 * when GetDefaultOpClass(type, the class's method) is the class).
 */
static bool
DdlnIndexKeyIsBare(Oid indexid, int keyno, Oid keytype, Oid keycoll, Oid indcoll,
				   Oid opclass, int16 option, DdlnOpclassMemo *memo)
{
	HeapTuple	tup;
	Oid			am;

	if (option != 0 || (OidIsValid(indcoll) && indcoll != keycoll) ||
		get_attoptions(indexid, keyno + 1) != (Datum) 0)
		return false;
	tup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclass));
	if (!HeapTupleIsValid(tup))
		return false;
	am = ((Form_pg_opclass) GETSTRUCT(tup))->opcmethod;
	ReleaseSysCache(tup);
	return DdlnDefaultOpclass(memo, keytype, am) == opclass;
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
 * NULL otherwise: the caller asks pg_get_indexdef.
 */
static char *
DdlnImageIndexDefPlain(Oid indexid, const char *table, DdlnOpclassMemo *memo)
{
	HeapTuple	itup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(indexid));
	HeapTuple	ctup = NULL, atup = NULL;
	Form_pg_index idx;
	StringInfoData buf;
	oidvector  *indcoll, *indclass;
	int2vector *indoption;
	bool		isnull, plain;

	if (!HeapTupleIsValid(itup))
		return NULL;
	idx = (Form_pg_index) GETSTRUCT(itup);
	ctup = SearchSysCache1(RELOID, ObjectIdGetDatum(indexid));
	plain = heap_attisnull(itup, Anum_pg_index_indexprs, NULL) &&
		heap_attisnull(itup, Anum_pg_index_indpred, NULL) && HeapTupleIsValid(ctup) &&
		((Form_pg_class) GETSTRUCT(ctup))->relkind == RELKIND_INDEX &&
		heap_attisnull(ctup, Anum_pg_class_reloptions, NULL);
	if (plain)
		atup = SearchSysCache1(AMOID, ObjectIdGetDatum(((Form_pg_class) GETSTRUCT(ctup))->relam));
	plain = plain && HeapTupleIsValid(atup);
	indcoll = (oidvector *) DatumGetPointer(SysCacheGetAttr(INDEXRELID, itup, Anum_pg_index_indcollation, &isnull));
	indclass = (oidvector *) DatumGetPointer(SysCacheGetAttr(INDEXRELID, itup, Anum_pg_index_indclass, &isnull));
	indoption = (int2vector *) DatumGetPointer(SysCacheGetAttr(INDEXRELID, itup, Anum_pg_index_indoption, &isnull));
	initStringInfo(&buf);
	if (plain)
		appendStringInfo(&buf, "CREATE %sINDEX %s ON %s USING %s (",
						 idx->indisunique ? "UNIQUE " : "",
						 quote_identifier(NameStr(((Form_pg_class) GETSTRUCT(ctup))->relname)),
						 table, quote_identifier(NameStr(((Form_pg_am) GETSTRUCT(atup))->amname)));
	for (int keyno = 0; plain && keyno < idx->indnatts; keyno++)
	{
		AttrNumber	attnum = idx->indkey.values[keyno];
		Oid			keytype, keycoll;
		int32		keytypmod;

		if (attnum == 0)
		{
			plain = false;		/* an expression (cannot happen: no indexprs) */
			break;
		}
		if (keyno == idx->indnkeyatts)
			appendStringInfoString(&buf, ") INCLUDE (");
		else if (keyno > 0)
			appendStringInfoString(&buf, ", ");
		appendStringInfoString(&buf, quote_identifier(get_attname(idx->indrelid, attnum, false)));
		get_atttypetypmodcoll(idx->indrelid, attnum, &keytype, &keytypmod, &keycoll);
		if (keyno < idx->indnkeyatts)
			plain = DdlnIndexKeyIsBare(indexid, keyno, keytype, keycoll, indcoll->values[keyno],
									   indclass->values[keyno], indoption->values[keyno], memo);
	}
	if (plain)
		appendStringInfo(&buf, ")%s", idx->indnullsnotdistinct ? " NULLS NOT DISTINCT" : "");
	if (HeapTupleIsValid(atup))
		ReleaseSysCache(atup);
	if (HeapTupleIsValid(ctup))
		ReleaseSysCache(ctup);
	ReleaseSysCache(itup);
	return plain ? buf.data : NULL;
}

/*
 * An index's definition: DdlnImageIndexDefPlain when it can print it,
 * else pg_get_indexdef (DdlnImageIndexDef).  With assertions on, every
 * plain text is checked against pg_get_indexdef's.
 */
static char *
DdlnImageIndexDefinition(Oid indexid, const char *table, DdlnOpclassMemo *memo)
{
	char	   *def = DdlnImageIndexDefPlain(indexid, table, memo);

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

/*
 * The indexes of "rel", by name, each with the constraint it implements
 * (read the constraints first), and the replica identity's index.
 */
static void
DdlnImageReadIndexes(DdlnImage *img, Relation rel, const DdlnImage *like, bool reuse)
{
	Oid			replident_index = InvalidOid;
	List	   *indexes;
	ListCell   *lc;
	DdlnOpclassMemo memo;
	char	   *table = NULL;

	memo.n = 0;
	if (img->replident == REPLICA_IDENTITY_INDEX)
		replident_index = RelationGetReplicaIndex(rel);
	indexes = RelationGetIndexList(rel);
	img->indexes = palloc(sizeof(DdlnImgPart) * Max(list_length(indexes), 1));
	foreach(lc, indexes)
	{
		Oid			indexid = lfirst_oid(lc);
		DdlnImgPart *part;
		char	   *name = get_rel_name(indexid);

		if (name == NULL)
			continue;
		part = &img->indexes[img->nindexes++];
		memset(part, 0, sizeof(*part));
		part->oid = indexid;
		part->name = name;
		if (reuse)
			part->definition = DdlnReusedDefinition(like->indexes, like->nindexes, part);
		if (part->definition == NULL)
		{
			/* the table as generate_qualified_relation_name prints it */
			if (table == NULL)
				table = quote_qualified_identifier(get_namespace_name_or_temp(get_rel_namespace(img->relid)),
												   get_rel_name(img->relid));
			part->definition = DdlnImageIndexDefinition(indexid, table, &memo);
		}
		for (int i = 0; i < img->nconstraints; i++)
		{
			if (img->constraints[i].indexid == indexid)
				part->constraint = img->constraints[i].name;
		}
		if (indexid == replident_index)
			img->replident_index = name;
	}
	qsort(img->indexes, img->nindexes, sizeof(DdlnImgPart), DdlnPartCmp);
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
	bool		isnull;
	Datum		d;
	ListCell   *lc;
	List	   *defs;

	if (!HeapTupleIsValid(tup))
		return;
	d = SysCacheGetAttr(RELOID, tup, Anum_pg_class_reloptions, &isnull);
	defs = isnull ? NIL : untransformRelOptions(d);
	ReleaseSysCache(tup);
	foreach(lc, defs)
	{
		DefElem    *def = (DefElem *) lfirst(lc);

		img->reloptions = lappend(img->reloptions,
								  def->arg ? psprintf("%s=%s", def->defname, defGetString(def)) :
								  pstrdup(def->defname));
	}
}

/*
 * The image of relation "relid" as the catalogs say now, or NULL when it is
 * not a relation of the kinds that have images (or does not exist).  The
 * columns, defaults and index list come from the relation cache (the
 * command that touched the relation built its entry already), constraints
 * from pg_constraint.  "like", an image of the same relation read earlier in
 * the command, or NULL: the definitions of its unchanged constraints and
 * indexes are taken from it instead of printed again.  "dropped": read for
 * a drop's pre-image (no view query, DdlnImageReadKind).
 */
static DdlnImage *
DdlnImageRead(Oid relid, const DdlnImage *like, bool dropped)
{
	Relation	rel;
	DdlnImage  *img;
	int			nestlevel;
	bool		reuse;

	if (!DdlnImageKind(get_rel_relkind(relid)))
		return NULL;
	rel = relation_open(relid, AccessShareLock);

	/*
	 * Names as pg_dump prints them: qualified unless in pg_catalog, whatever
	 * the DDL's search_path (ruleutils qualifies what it cannot see).
	 */
	nestlevel = NewGUCNestLevel();
	(void) set_config_option("search_path", "pg_catalog", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);

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
		DdlnImageReadColumns(img, rel);
		reuse = DdlnImageMayReuse(like, img);
		DdlnImageReadConstraints(img, like, reuse);
		DdlnImageReadIndexes(img, rel, like, reuse);
		DdlnImageReadKind(img, dropped);
		DdlnImageReadRelOptions(img);
	}

	AtEOXact_GUC(true, nestlevel);
	relation_close(rel, AccessShareLock);
	return img;
}

static const char *
DdlnIdentityName(char identity)
{
	if (identity == ATTRIBUTE_IDENTITY_ALWAYS)
		return "always";
	if (identity == ATTRIBUTE_IDENTITY_BY_DEFAULT)
		return "by default";
	return NULL;
}

static const char *
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
 * The keys of each object are pushed in the order jsonb keeps them
 * (shorter first, then bytewise), so that its sort of the keys finds them
 * sorted already.
 */
static void
DdlnImgPushColumn(DdlnJsonbState *st, const DdlnImgColumn *col)
{
	DdlnImgToken(st, WJB_BEGIN_OBJECT);
	DdlnImgPair(st, "name", col->name);
	DdlnImgPair(st, "type", col->type);
	DdlnImgKey(st, "attnum");
	DdlnImgInt(st, col->attnum);
	DdlnImgPair(st, "default", col->def);
	DdlnImgPair(st, "identity", DdlnIdentityName(col->identity));
	DdlnImgKey(st, "not_null");
	DdlnImgBool(st, col->not_null);
	DdlnImgPair(st, "collation", col->collation);
	DdlnImgPair(st, "generated", col->generated);
	DdlnImgToken(st, WJB_END_OBJECT);
}

static void
DdlnImgPushConstraint(DdlnJsonbState *st, const DdlnImgPart *con)
{
	DdlnImgToken(st, WJB_BEGIN_OBJECT);
	DdlnImgPair(st, "name", con->name);
	DdlnImgPair(st, "type", con->type);
	DdlnImgPair(st, "definition", con->definition);
	DdlnImgToken(st, WJB_END_OBJECT);
}

static void
DdlnImgPushIndex(DdlnJsonbState *st, const DdlnImgPart *ind)
{
	DdlnImgToken(st, WJB_BEGIN_OBJECT);
	DdlnImgPair(st, "name", ind->name);
	DdlnImgPair(st, "constraint", ind->constraint);
	DdlnImgPair(st, "definition", ind->definition);
	DdlnImgToken(st, WJB_END_OBJECT);
}

/* The column owning a sequence, {"schema", "name", "column", "identity"}, or null. */
static void
DdlnImgPushOwner(DdlnJsonbState *st, const DdlnImgSequence *seq)
{
	if (seq->owner_name == NULL)
	{
		DdlnImgString(st, NULL);
		return;
	}
	DdlnImgToken(st, WJB_BEGIN_OBJECT);
	DdlnImgPair(st, "name", seq->owner_name);
	DdlnImgPair(st, "column", seq->owner_column);
	DdlnImgPair(st, "schema", seq->owner_schema);
	DdlnImgKey(st, "identity");
	DdlnImgBool(st, seq->owner_identity);
	DdlnImgToken(st, WJB_END_OBJECT);
}

/* A list of strings as an array. */
static void
DdlnImgPushStrings(DdlnJsonbState *st, List *strings)
{
	ListCell   *lc;

	DdlnImgToken(st, WJB_BEGIN_ARRAY);
	foreach(lc, strings)
		DdlnImgString(st, (const char *) lfirst(lc));
	DdlnImgToken(st, WJB_END_ARRAY);
}

/* An image as the next value of "st". */
static void
DdlnImgPushImage(DdlnJsonbState *st, const DdlnImage *img)
{
	DdlnImgToken(st, WJB_BEGIN_OBJECT);
	DdlnImgPair(st, "kind", DdlnImageKindName(img->relkind));
	DdlnImgPair(st, "name", img->name);
	DdlnImgPair(st, "schema", img->schema);
	if (img->unlogged)
	{
		DdlnImgKey(st, "unlogged");
		DdlnImgBool(st, true);
	}
	if (img->seq)
	{
		/* a sequence: its parameters and owner, nothing of a table's */
		DdlnImgPair(st, "type", img->seq->type);
		DdlnImgKey(st, "start");
		DdlnImgInt(st, img->seq->start);
		DdlnImgKey(st, "increment");
		DdlnImgInt(st, img->seq->increment);
		DdlnImgKey(st, "min");
		DdlnImgInt(st, img->seq->min);
		DdlnImgKey(st, "max");
		DdlnImgInt(st, img->seq->max);
		DdlnImgKey(st, "cache");
		DdlnImgInt(st, img->seq->cache);
		DdlnImgKey(st, "cycle");
		DdlnImgBool(st, img->seq->cycle);
		DdlnImgKey(st, "owned_by");
		DdlnImgPushOwner(st, img->seq);
		DdlnImgToken(st, WJB_END_OBJECT);
		return;
	}
	DdlnImgKey(st, "columns");
	DdlnImgToken(st, WJB_BEGIN_ARRAY);
	for (int i = 0; i < img->ncolumns; i++)
		DdlnImgPushColumn(st, &img->columns[i]);
	DdlnImgToken(st, WJB_END_ARRAY);
	DdlnImgKey(st, "indexes");
	DdlnImgToken(st, WJB_BEGIN_ARRAY);
	for (int i = 0; i < img->nindexes; i++)
		DdlnImgPushIndex(st, &img->indexes[i]);
	DdlnImgToken(st, WJB_END_ARRAY);
	DdlnImgKey(st, "constraints");
	DdlnImgToken(st, WJB_BEGIN_ARRAY);
	for (int i = 0; i < img->nconstraints; i++)
		DdlnImgPushConstraint(st, &img->constraints[i]);
	DdlnImgToken(st, WJB_END_ARRAY);
	DdlnImgPair(st, "replica_identity", DdlnReplIdentName(img->replident));
	DdlnImgPair(st, "replica_identity_index", img->replident_index);
	if (img->definition)
		DdlnImgPair(st, "definition", img->definition);
	if (img->partition_key)
		DdlnImgPair(st, "partition_key", img->partition_key);
	if (img->partition_bound && img->parent_name)
	{
		DdlnImgKey(st, "partition_of");
		DdlnImgToken(st, WJB_BEGIN_OBJECT);
		DdlnImgPair(st, "schema", img->parent_schema);
		DdlnImgPair(st, "name", img->parent_name);
		DdlnImgToken(st, WJB_END_OBJECT);
		DdlnImgPair(st, "partition_bound", img->partition_bound);
	}
	if (img->server)
	{
		DdlnImgPair(st, "server", img->server);
		DdlnImgKey(st, "options");
		DdlnImgPushStrings(st, img->options);
	}
	if (img->reloptions)
	{
		DdlnImgKey(st, "reloptions");
		DdlnImgPushStrings(st, img->reloptions);
	}
	DdlnImgToken(st, WJB_END_OBJECT);
}

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
	DdlnImgToken(st, WJB_BEGIN_OBJECT);
	DdlnImgPair(st, "op", op);
	if (column)
		DdlnImgPair(st, "column", column);
}

static void
DdlnChangeOldNew(DdlnJsonbState *st, const char *op, const char *column,
				 const char *old, const char *new)
{
	DdlnChangeBegin(st, op, column);
	DdlnImgPair(st, "old", old);
	DdlnImgPair(st, "new", new);
	DdlnImgToken(st, WJB_END_OBJECT);
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
		DdlnImgToken(st, WJB_END_OBJECT);
	}
	if (!DdlnSame(b->def, a->def))
	{
		if (a->def == NULL)
		{
			DdlnChangeBegin(st, "drop default", a->name);
			DdlnImgPair(st, "old", b->def);
			DdlnImgToken(st, WJB_END_OBJECT);
		}
		else
			DdlnChangeOldNew(st, "set default", a->name, b->def, a->def);
	}
	if (b->identity != a->identity)
	{
		if (b->identity == '\0')
		{
			DdlnChangeBegin(st, "add identity", a->name);
			DdlnImgPair(st, "identity", DdlnIdentityName(a->identity));
			DdlnImgToken(st, WJB_END_OBJECT);
		}
		else if (a->identity == '\0')
		{
			DdlnChangeBegin(st, "drop identity", a->name);
			DdlnImgPair(st, "old", DdlnIdentityName(b->identity));
			DdlnImgToken(st, WJB_END_OBJECT);
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
			DdlnImgPair(st, "old", b->generated);
			DdlnImgToken(st, WJB_END_OBJECT);
		}
		else
			DdlnChangeOldNew(st, "set expression", a->name, b->generated, a->generated);
	}
}

static bool DdlnConstraintAltered(const DdlnImgPart *b, const DdlnImgPart *a);

static const DdlnImgPart *
DdlnFindPart(const DdlnImgPart *parts, int n, const char *name, Oid oid)
{
	for (int i = 0; i < n; i++)
	{
		if (name ? strcmp(parts[i].name, name) == 0 : parts[i].oid == oid)
			return &parts[i];
	}
	return NULL;
}

/*
 * Is a constraint or index of the same name another one now?  A constraint
 * whose definition changed; an index rebuilt (another OID) with another
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
	return !DdlnSame(b->definition, a->definition) || !DdlnSame(b->type, a->type);
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
		DdlnImgPair(st, "name", a->name);
		DdlnImgKey(st, "deferred");
		DdlnImgBool(st, a->deferred);
		DdlnImgKey(st, "deferrable");
		DdlnImgBool(st, a->deferrable);
		DdlnImgToken(st, WJB_END_OBJECT);
	}
	if (!b->validated && a->validated)
	{
		DdlnChangeBegin(st, "validate constraint", NULL);
		DdlnImgPair(st, "name", a->name);
		DdlnImgToken(st, WJB_END_OBJECT);
	}
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

	/* renames: in the new name order */
	for (int i = 0; i < an; i++)
	{
		const DdlnImgPart *old = DdlnFindPart(bp, bn, NULL, ap[i].oid);

		if (indexes && ap[i].constraint)
			continue;
		if (old && strcmp(old->name, ap[i].name) != 0 &&
			DdlnFindPart(ap, an, old->name, InvalidOid) == NULL)
			DdlnChangeOldNew(st, rename_op, NULL, old->name, ap[i].name);
	}
	/* dropped, or changed: in name order */
	for (int i = 0; i < bn; i++)
	{
		const DdlnImgPart *now = DdlnFindPart(ap, an, bp[i].name, InvalidOid);
		const DdlnImgPart *renamed = DdlnFindPart(ap, an, NULL, bp[i].oid);

		if (indexes && (bp[i].constraint || (now && now->constraint)))
			continue;
		if (now == NULL && renamed != NULL &&
			DdlnFindPart(ap, an, bp[i].name, InvalidOid) == NULL)
			continue;			/* renamed, above */
		if (now == NULL || DdlnPartChanged(indexes, &bp[i], now))
		{
			DdlnChangeBegin(st, drop_op, NULL);
			DdlnImgPair(st, "name", bp[i].name);
			DdlnImgToken(st, WJB_END_OBJECT);
		}
	}
	/* added, or changed */
	for (int i = 0; i < an; i++)
	{
		const DdlnImgPart *was = DdlnFindPart(bp, bn, ap[i].name, InvalidOid);
		const DdlnImgPart *renamed = DdlnFindPart(bp, bn, NULL, ap[i].oid);

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
			DdlnImgKey(st, indexes ? "index" : "constraint");
			if (indexes)
				DdlnImgPushIndex(st, &ap[i]);
			else
				DdlnImgPushConstraint(st, &ap[i]);

			/*
			 * ADD CONSTRAINT ... USING INDEX: the constraint took over an
			 * index the table had (and gave it its name)
			 */
			if (!indexes && OidIsValid(ap[i].indexid))
				taken = DdlnFindPart(b->indexes, b->nindexes, NULL, ap[i].indexid);
			if (taken && taken->constraint == NULL)
				DdlnImgPair(st, "using_index", taken->name);
			DdlnImgToken(st, WJB_END_OBJECT);
		}
	}
}

/* Do two lists of strings hold the same, in the same order? */
static bool
DdlnSameStrings(List *a, List *b)
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

/* {"op": "set sequence option", "option": option, "old": b, "new": a} */
static void
DdlnChangeSeqOption(DdlnJsonbState *st, const char *option, int64 b, int64 a)
{
	if (b == a)
		return;
	DdlnChangeBegin(st, "set sequence option", NULL);
	DdlnImgPair(st, "option", option);
	DdlnImgKey(st, "old");
	DdlnImgInt(st, b);
	DdlnImgKey(st, "new");
	DdlnImgInt(st, a);
	DdlnImgToken(st, WJB_END_OBJECT);
}

/* A sequence's changes: each parameter, then its owner. */
static void
DdlnImgPushSequenceChanges(DdlnJsonbState *st, const DdlnImgSequence *b,
						   const DdlnImgSequence *a)
{
	if (!DdlnSame(b->type, a->type))
	{
		DdlnChangeBegin(st, "set sequence option", NULL);
		DdlnImgPair(st, "option", "type");
		DdlnImgPair(st, "old", b->type);
		DdlnImgPair(st, "new", a->type);
		DdlnImgToken(st, WJB_END_OBJECT);
	}
	DdlnChangeSeqOption(st, "start", b->start, a->start);
	DdlnChangeSeqOption(st, "increment", b->increment, a->increment);
	DdlnChangeSeqOption(st, "min", b->min, a->min);
	DdlnChangeSeqOption(st, "max", b->max, a->max);
	DdlnChangeSeqOption(st, "cache", b->cache, a->cache);
	if (b->cycle != a->cycle)
	{
		DdlnChangeBegin(st, "set sequence option", NULL);
		DdlnImgPair(st, "option", "cycle");
		DdlnImgKey(st, "old");
		DdlnImgBool(st, b->cycle);
		DdlnImgKey(st, "new");
		DdlnImgBool(st, a->cycle);
		DdlnImgToken(st, WJB_END_OBJECT);
	}
	if (!DdlnSame(b->owner_schema, a->owner_schema) || !DdlnSame(b->owner_name, a->owner_name) ||
		!DdlnSame(b->owner_column, a->owner_column) || b->owner_identity != a->owner_identity)
	{
		DdlnChangeBegin(st, "set owned by", NULL);
		DdlnImgKey(st, "old");
		DdlnImgPushOwner(st, b);
		DdlnImgKey(st, "new");
		DdlnImgPushOwner(st, a);
		DdlnImgToken(st, WJB_END_OBJECT);
	}
}

/* The changes from "b" to "a", as the next value of "st" (an array). */
static void
DdlnImgPushChanges(DdlnJsonbState *st, const DdlnImage *b, const DdlnImage *a)
{
	int			i = 0,
				j = 0;

	DdlnImgToken(st, WJB_BEGIN_ARRAY);
	if (strcmp(b->name, a->name) != 0)
		DdlnChangeOldNew(st, "rename", NULL, b->name, a->name);
	if (strcmp(b->schema, a->schema) != 0)
		DdlnChangeOldNew(st, "set schema", NULL, b->schema, a->schema);
	if (b->unlogged != a->unlogged)
	{
		DdlnChangeBegin(st, a->unlogged ? "set unlogged" : "set logged", NULL);
		DdlnImgToken(st, WJB_END_OBJECT);
	}
	if (b->seq && a->seq)
	{
		DdlnImgPushSequenceChanges(st, b->seq, a->seq);
		DdlnImgToken(st, WJB_END_ARRAY);
		return;
	}

	/* columns by attnum: both lists are in attnum order */
	while (i < b->ncolumns || j < a->ncolumns)
	{
		if (j >= a->ncolumns ||
			(i < b->ncolumns && b->columns[i].attnum < a->columns[j].attnum))
		{
			DdlnChangeBegin(st, "drop column", b->columns[i].name);
			DdlnImgToken(st, WJB_END_OBJECT);
			i++;
		}
		else if (i >= b->ncolumns || a->columns[j].attnum < b->columns[i].attnum)
		{
			DdlnChangeBegin(st, "add column", NULL);
			DdlnImgKey(st, "column");
			DdlnImgPushColumn(st, &a->columns[j]);
			DdlnImgToken(st, WJB_END_OBJECT);
			j++;
		}
		else
			DdlnDiffColumn(st, &b->columns[i++], &a->columns[j++]);
	}

	DdlnDiffParts(st, false, b->constraints, b->nconstraints, a->constraints, a->nconstraints, b);
	DdlnDiffParts(st, true, b->indexes, b->nindexes, a->indexes, a->nindexes, b);

	/* a view's or materialized view's query (CREATE OR REPLACE VIEW) */
	if (b->definition && a->definition && strcmp(b->definition, a->definition) != 0)
		DdlnChangeOldNew(st, "set definition", NULL, b->definition, a->definition);

	if (b->replident != a->replident || !DdlnSame(b->replident_index, a->replident_index))
	{
		DdlnChangeBegin(st, "set replica identity", NULL);
		DdlnImgPair(st, "old", DdlnReplIdentName(b->replident));
		DdlnImgPair(st, "new", DdlnReplIdentName(a->replident));
		DdlnImgPair(st, "old_index", b->replident_index);
		DdlnImgPair(st, "new_index", a->replident_index);
		DdlnImgToken(st, WJB_END_OBJECT);
	}

	/* storage parameters: SET (...) and RESET (...) */
	if (!DdlnSameStrings(b->reloptions, a->reloptions))
	{
		DdlnChangeBegin(st, "set reloptions", NULL);
		DdlnImgKey(st, "old");
		DdlnImgPushStrings(st, b->reloptions);
		DdlnImgKey(st, "new");
		DdlnImgPushStrings(st, a->reloptions);
		DdlnImgToken(st, WJB_END_OBJECT);
	}
	DdlnImgToken(st, WJB_END_ARRAY);
}

/*
 * {"before": ..., "after": ..., "changes": [...]}: "before" and "after"
 * left out when NULL, "changes" only with both.
 */
static Jsonb *
DdlnImageDetails(const DdlnImage *before, const DdlnImage *after)
{
	DdlnJsonbState st = DDLN_JSONB_STATE_INIT;

	DdlnImgToken(&st, WJB_BEGIN_OBJECT);
	if (before)
	{
		DdlnImgKey(&st, "before");
		DdlnImgPushImage(&st, before);
	}
	if (after)
	{
		DdlnImgKey(&st, "after");
		DdlnImgPushImage(&st, after);
	}
	if (before && after)
	{
		DdlnImgKey(&st, "changes");
		DdlnImgPushChanges(&st, before, after);
	}
	return DdlnJsonbFinish(&st);
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
	DdlnImgToken(st, WJB_BEGIN_ARRAY);
	for (int i = 0; i < list->n_members; i++)
		DdlnImgString(st, NameStr(((Form_pg_enum) GETSTRUCT(tuples[i]))->enumlabel));
	DdlnImgToken(st, WJB_END_ARRAY);
	ReleaseSysCacheList(list);
	pfree(tuples);
}

/* A domain's CHECK constraints (pg_constraint.contypid), by name. */
static void
DdlnImgPushDomainConstraints(DdlnJsonbState *st, Oid typid)
{
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
		qsort(parts, n, sizeof(DdlnImgPart), DdlnPartCmp);
	DdlnImgToken(st, WJB_BEGIN_ARRAY);
	for (int i = 0; i < n; i++)
		DdlnImgPushConstraint(st, &parts[i]);
	DdlnImgToken(st, WJB_END_ARRAY);
}

/*
 * {"after": image} of a domain or an enum, read from the catalogs as
 * relation images are (search_path pg_catalog alone): a domain's base
 * type with its typmod, collation (when not its base type's), default
 * (pg_get_expr), NOT NULL and CHECK constraints; an enum's labels in their
 * order.  Every row of such a type has it, as a sequence's have theirs:
 * the consumer makes the type as "after" says, or brings it there.
 */
static Jsonb *
DdlnTypeImageDetails(Oid typid, char typtype)
{
	HeapTuple	tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(typid));
	Form_pg_type typ;
	DdlnJsonbState st = DDLN_JSONB_STATE_INIT;
	int			nestlevel;
	char	   *schema;

	if (!HeapTupleIsValid(tup))
		return NULL;
	typ = (Form_pg_type) GETSTRUCT(tup);
	schema = get_namespace_name_or_temp(typ->typnamespace);
	if (schema == NULL || strcmp(schema, DDLN_SCHEMA_NAME) == 0)
	{
		ReleaseSysCache(tup);
		return NULL;
	}
	nestlevel = NewGUCNestLevel();
	(void) set_config_option("search_path", "pg_catalog", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);

	DdlnImgToken(&st, WJB_BEGIN_OBJECT);
	DdlnImgKey(&st, "after");
	DdlnImgToken(&st, WJB_BEGIN_OBJECT);
	DdlnImgPair(&st, "kind", typtype == TYPTYPE_DOMAIN ? "domain" : "enum");
	DdlnImgPair(&st, "name", NameStr(typ->typname));
	DdlnImgPair(&st, "schema", schema);
	if (typtype == TYPTYPE_ENUM)
	{
		DdlnImgKey(&st, "labels");
		DdlnImgPushEnumLabels(&st, typid);
	}
	else
	{
		bool		isnull;
		Datum		def = SysCacheGetAttr(TYPEOID, tup, Anum_pg_type_typdefaultbin, &isnull);

		DdlnImgPair(&st, "type", DdlnImageTypeName(typ->typbasetype, typ->typtypmod));
		DdlnImgPair(&st, "collation",
					OidIsValid(typ->typcollation) &&
					typ->typcollation != get_typcollation(typ->typbasetype) ?
					DdlnImageCollationName(typ->typcollation) : NULL);
		DdlnImgPair(&st, "default", isnull ? NULL :
					DdlnTextResult(DirectFunctionCall2(pg_get_expr, def, ObjectIdGetDatum(InvalidOid))));
		DdlnImgKey(&st, "not_null");
		DdlnImgBool(&st, typ->typnotnull);
		DdlnImgKey(&st, "constraints");
		DdlnImgPushDomainConstraints(&st, typid);
	}
	DdlnImgToken(&st, WJB_END_OBJECT);
	ReleaseSysCache(tup);
	AtEOXact_GUC(true, nestlevel);
	return DdlnJsonbFinish(&st);
}

/* ---------- the transaction's end forgets everything ---------- */

static void
DdlnImageXactCallback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			/* a command whose sql_drop did not run: close the file, no leak warning */
			DdlnImageForgetDropped();
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			/* the contexts go with TopTransactionContext, the file with its resource owner */
			pending_cxt = NULL;
			pending = NIL;
			given = NIL;
			dropped_cxt = NULL;
			dropped = NULL;
			dropped_file = NULL;
			dropped_mem = 0;
			dropped_end_fileno = 0;
			dropped_end_offset = 0;
			break;
		default:
			break;
	}
}

/*
 * A subtransaction rolled back: the images of dropped relations it read are
 * of drops that did not happen; forget them (the file belongs to the
 * transaction's resource owner and is still open).
 */
static void
DdlnImageSubXactCallback(SubXactEvent event, SubTransactionId mySubid,
						 SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		DdlnImageForgetDropped();
}

static void
DdlnImageRegisterCallback(void)
{
	if (!xact_callback_registered)
	{
		RegisterXactCallback(DdlnImageXactCallback, NULL);
		RegisterSubXactCallback(DdlnImageSubXactCallback, NULL);
		xact_callback_registered = true;
	}
}

/* ---------- "before" at ddl_command_start ---------- */

/*
 * A relation capture leaves out: the extension's own (in its schema, as
 * capture.c judges objects), or a temporary one.
 */
static bool
DdlnImageSkipped(Oid relid)
{
	char	   *nspname = get_namespace_name(get_rel_namespace(relid));

	if (nspname == NULL || strcmp(nspname, DDLN_SCHEMA_NAME) == 0)
		return true;
	return !ddln_capture_temp && get_rel_persistence(relid) == RELPERSISTENCE_TEMP;
}

/*
 * Read the image of the relation "rv" names, after taking "lockmode" on it
 * (the lock the command will take), and keep it for ddl_command_end.  With
 * "index", rv names an index (ALTER INDEX RENAME): the index is locked,
 * the image is its table's.
 */
static void
DdlnImageRemember(RangeVar *rv, LOCKMODE lockmode, bool index)
{
	Oid			relid;
	MemoryContext old;
	DdlnImage  *img;

	if (rv == NULL)
		return;
	relid = RangeVarGetRelid(rv, NoLock, true);
	for (int tries = 0;; tries++)
	{
		Oid			again;
		char		relkind = get_rel_relkind(relid);

		if (!OidIsValid(relid) ||
			!(index ? (relkind == RELKIND_INDEX || relkind == RELKIND_PARTITIONED_INDEX) :
			  DdlnImageKind(relkind)))
			return;
		/* not the user's: the command will refuse it; no lock of ours on it */
		if (!DdlnRelationOwnerCheck(relid, GetUserId()) || IsCatalogRelationOid(relid))
			return;
		LockRelationOid(relid, lockmode);
		/* the name may have moved while we waited (RangeVarGetRelidExtended does the same) */
		again = RangeVarGetRelid(rv, NoLock, true);
		if (again == relid && SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
			break;
		UnlockRelationOid(relid, lockmode);
		if (tries >= 3)
			return;
		relid = again;
	}
	/* an index: the image is its table's (the command locks the index only) */
	if (index)
	{
		relid = IndexGetRelation(relid, true);
		if (!OidIsValid(relid) || !DdlnImageKind(get_rel_relkind(relid)))
			return;
	}
	if (DdlnImageSkipped(relid))
		return;

	DdlnImageRegisterCallback();
	if (pending_cxt == NULL)
		pending_cxt = AllocSetContextCreate(TopTransactionContext, "ddl_notify before images",
											ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(pending_cxt);
	img = DdlnImageRead(relid, NULL, false);
	if (img)
		pending = lappend(pending, img);
	MemoryContextSwitchTo(old);
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
					DdlnImageRemember(stmt->relation, AlterTableGetLockLevel(stmt->cmds), false);
				break;
			}
		case T_AlterSeqStmt:
			/* the lock AlterSequence takes */
			DdlnImageRemember(((AlterSeqStmt *) parsetree)->sequence, ShareRowExclusiveLock, false);
			break;
		case T_RenameStmt:
			{
				RenameStmt *stmt = (RenameStmt *) parsetree;
				ObjectType	type = stmt->renameType;

				/* RENAME COLUMN (ATTRIBUTE) says on what; RENAME CONSTRAINT does not */
				if (type == OBJECT_COLUMN || type == OBJECT_ATTRIBUTE)
					type = stmt->relationType;
				else if (type == OBJECT_TABCONSTRAINT)
					type = OBJECT_TABLE;
				if (type == OBJECT_TABLE || type == OBJECT_VIEW || type == OBJECT_MATVIEW ||
					type == OBJECT_FOREIGN_TABLE || type == OBJECT_SEQUENCE ||
					(type == OBJECT_TYPE && stmt->relation != NULL))
					DdlnImageRemember(stmt->relation, AccessExclusiveLock, false);
				/* ALTER INDEX RENAME locks the index so (RenameRelation) */
				else if (stmt->renameType == OBJECT_INDEX)
					DdlnImageRemember(stmt->relation, ShareUpdateExclusiveLock, true);
				break;
			}
		case T_AlterObjectSchemaStmt:
			{
				AlterObjectSchemaStmt *stmt = (AlterObjectSchemaStmt *) parsetree;

				if (stmt->objectType == OBJECT_TABLE || stmt->objectType == OBJECT_VIEW ||
					stmt->objectType == OBJECT_MATVIEW ||
					stmt->objectType == OBJECT_FOREIGN_TABLE ||
					stmt->objectType == OBJECT_SEQUENCE)
					DdlnImageRemember(stmt->relation, AccessExclusiveLock, false);
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
					DdlnImageRemember(stmt->relation, ShareLock, false);
				break;
			}
		case T_ViewStmt:
			{
				ViewStmt   *stmt = (ViewStmt *) parsetree;

				if (stmt->replace)
					DdlnImageRemember(stmt->view, AccessExclusiveLock, false);
				break;
			}
		default:
			break;
	}
}

/*
 * "before", "after" and "changes" of the relation a ddl_command_end row is
 * about (an index's, a constraint's: their table's), or NULL: "before" if
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
DdlnImageForRow(Oid classid, Oid objid, int32 objsubid, const char *tag)
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
			return DdlnTypeImageDetails(objid, typtype);
	}
	relid = DdlnImageRelationOf(classid, objid);
	if (!OidIsValid(relid))
		return NULL;
	sequence = (get_rel_relkind(relid) == RELKIND_SEQUENCE);
	if (list_member_oid(given, relid))
	{
		if (!sequence)
			return NULL;
		return DdlnImageDetails(NULL, DdlnImageRead(relid, NULL, false));
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
		return NULL;
	/* (capture left out the rows of the extension's own and temporary objects) */

	DdlnImageRegisterCallback();
	if (pending_cxt == NULL)
		pending_cxt = AllocSetContextCreate(TopTransactionContext, "ddl_notify before images",
											ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(pending_cxt);
	given = lappend_oid(given, relid);
	MemoryContextSwitchTo(old);
	return DdlnImageDetails(before, DdlnImageRead(relid, before, false));
}

/* ddl_command_end is done with the images of its command. */
void
DdlnImageForgetBefore(void)
{
	if (pending_cxt)
		MemoryContextReset(pending_cxt);
	pending = NIL;
	given = NIL;
}

/* ---------- "before" of dropped relations ---------- */

/*
 * The relation of ours an object belongs to or is: a relation of the kinds
 * with images itself, or the relation of an index, a constraint, a
 * default, a rule or a row type; InvalidOid for anything else, or when
 * that relation no longer exists (a row type can be deleted after its
 * table, when the drop reached it through a function or a cast).
 */
static Oid
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

/* Keep the flattened image "jb" of "ent": in memory up to work_mem, then in a file. */
static void
DdlnImageKeepDropped(DdlnDroppedEnt *ent, Jsonb *jb)
{
	ent->len = VARSIZE(jb);
	if (dropped_mem + ent->len <= (Size) work_mem * 1024)
	{
		ent->mem = MemoryContextAlloc(dropped_cxt, ent->len);
		memcpy(ent->mem, jb, ent->len);
		dropped_mem += ent->len;
		return;
	}
	if (dropped_file == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(dropped_cxt);
		ResourceOwner owner = CurrentResourceOwner;

		/* the transaction's, not a subtransaction's: closed by us only */
		CurrentResourceOwner = TopTransactionResourceOwner;
		dropped_file = BufFileCreateTemp(false);
		CurrentResourceOwner = owner;
		MemoryContextSwitchTo(old);
	}
	if (BufFileSeek(dropped_file, dropped_end_fileno, dropped_end_offset, SEEK_SET) != 0)
		/* untested: an I/O error on this backend's own temporary file */
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not seek in the temporary file of ddl_notify's dropped relation images")));
	ent->fileno = dropped_end_fileno;
	ent->offset = dropped_end_offset;
	BufFileWrite(dropped_file, (void *) jb, ent->len);
	BufFileTell(dropped_file, &dropped_end_fileno, &dropped_end_offset);
}

/*
 * The object access hook: at the first deletion of anything of a relation
 * of ours (itself, a column, an index, a constraint, a default, its view
 * rule or row type), read its image, while it is still whole.
 */
static void
DdlnImageObjectAccess(ObjectAccessType access, Oid classId, Oid objectId,
					  int subId, void *arg)
{
	Oid			relid;
	DdlnDroppedEnt *ent;
	bool		found;
	MemoryContext old;
	MemoryContext tmp;
	DdlnImage  *img;

	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);

	if (access != OAT_DROP || !ddln_capture_changes || !IsTransactionState())
		return;
	if (arg && (((ObjectAccessDrop *) arg)->dropflags & PERFORM_DELETION_INTERNAL))
		return;
	/* only while sql_drop will be told about it, and this database has ddl_notify */
	if (!trackDroppedObjectsNeeded())
		return;
	relid = DdlnImageRelationOf(classId, objectId);
	if (!OidIsValid(relid))
		return;
	if (dropped && hash_search(dropped, &relid, HASH_FIND, NULL) != NULL)
		return;

	DdlnImageRegisterCallback();
	if (dropped_cxt == NULL)
	{
		HASHCTL		ctl;

		/* once per command: is ddl_notify in this database? */
		if (DdlnGetRelids(true) == NULL)
			return;

		dropped_cxt = AllocSetContextCreate(TopTransactionContext, "ddl_notify dropped images",
											ALLOCSET_DEFAULT_SIZES);
		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(DdlnDroppedEnt);
		ctl.hcxt = dropped_cxt;
		dropped = hash_create("ddl_notify dropped images", 256, &ctl,
							  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	ent = (DdlnDroppedEnt *) hash_search(dropped, &relid, HASH_ENTER, &found);
	ent->len = -1;
	ent->mem = NULL;

	if (DdlnImageSkipped(relid))
		return;

	tmp = AllocSetContextCreate(CurrentMemoryContext, "ddl_notify image",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(tmp);
	img = DdlnImageRead(relid, NULL, true);
	if (img)
	{
		DdlnJsonbState st = DDLN_JSONB_STATE_INIT;

		DdlnImgToken(&st, WJB_BEGIN_OBJECT);
		DdlnImgKey(&st, "before");
		DdlnImgPushImage(&st, img);
		DdlnImageKeepDropped(ent, DdlnJsonbFinish(&st));
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(tmp);
}

/*
 * {"before": image} of dropped relation "relid", read when its deletion
 * began, or NULL.
 */
Jsonb *
DdlnImageTakeDropped(Oid relid)
{
	DdlnDroppedEnt *ent;
	Jsonb	   *jb;

	if (dropped == NULL)
		return NULL;
	ent = (DdlnDroppedEnt *) hash_search(dropped, &relid, HASH_FIND, NULL);
	if (ent == NULL || ent->len < 0)
		return NULL;
	if (ent->mem)
		return ent->mem;
	jb = palloc(ent->len);
	if (BufFileSeek(dropped_file, ent->fileno, ent->offset, SEEK_SET) != 0 ||
		BufFileRead(dropped_file, jb, ent->len) != (size_t) ent->len)
		/* untested: an I/O error on this backend's own temporary file */
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read the temporary file of ddl_notify's dropped relation images")));
	return jb;
}

/* sql_drop is done with the images of its command. */
void
DdlnImageForgetDropped(void)
{
	if (dropped_file)
		BufFileClose(dropped_file);
	if (dropped_cxt)
		MemoryContextDelete(dropped_cxt);
	dropped_file = NULL;
	dropped_cxt = NULL;
	dropped = NULL;
	dropped_mem = 0;
	dropped_end_fileno = 0;
	dropped_end_offset = 0;
}

/* _PG_init: install the object access hook */
void
DdlnImageInstallHooks(void)
{
	prev_object_access_hook = object_access_hook;
	object_access_hook = DdlnImageObjectAccess;
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

	return img ? DdlnImageDetails(NULL, img) : NULL;
}
