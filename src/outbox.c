/*-------------------------------------------------------------------------
 *
 * outbox.c
 *	  The publisher's half of DDL replication (G16): each DDL statement that
 *	  a publication named by publish_ddl() covers also writes one row of
 *	  ddl_notify.ddl_outbox, in the statement's own transaction, at its
 *	  ddl_command_end, so that logical replication carries it to the
 *	  subscriber in commit order with the rows (apply.c applies it there).
 *	  What users are told: docs/replication.md.
 *
 * Rules kept here:
 * - One row per complete statement, never per event: capture notes each
 *	 event it inserts (DdlnOutboxNote) in the frame the statement's
 *	 ddl_command_start opened (DdlnOutboxStatementStart), and the
 *	 statement's ddl_command_end writes the row (DdlnOutboxStatementEnd).
 *	 Frames nest (a DDL run by a function a DDL calls has its own); a frame
 *	 whose subtransaction aborted is dropped with it, and the transaction's
 *	 end drops them all.  A statement that recorded no event (DROP ... IF
 *	 EXISTS of nothing, the extension's own or temporary objects) writes
 *	 nothing.
 * - Written only when ddl_notify.ddl_publication has a row (read once per
 *	 statement, at its start, through the catalog snapshot); without it a
 *	 statement costs one look at an empty table.  Never written for the
 *	 statements of an extension's script (CREATE EXTENSION itself is the
 *	 statement) nor for publication and subscription commands, which are
 *	 each cluster's own.
 * - Which publications a statement belongs to ("publications"): a FOR ALL
 *	 TABLES publication, every statement; otherwise one that lists a
 *	 relation the statement's events touch (a partition by its ancestors
 *	 too), or a schema one of them lies in, or loses a table in the
 *	 statement (its "publication relation" is among the dropped objects).
 *	 Functions, types and other objects outside a published schema are not
 *	 covered by a table-list publication.
 * - "statement" is the exact text PostgreSQL parsed for this statement
 *	 (common.c, from the utility hook), never the redacted "query": a
 *	 statement in which redaction finds a secret (a user mapping's
 *	 password) is written with statement NULL, and stops the subscriber
 *	 visibly instead of replicating the secret or a changed text.  The
 *	 search_path it ran under, the role it ran as and the settings that
 *	 change what its literals mean (common.c) go with it.
 * - CREATE TABLE AS and SELECT INTO write their rows before their
 *	 ddl_command_end, so they write two outbox rows: at ddl_command_start
 *	 the statement, which the subscriber runs WITH NO DATA so that the rows
 *	 that follow find their table ("create without data", its id drawn from
 *	 the event ids), and at ddl_command_end the images to check ("check").
 * - "objects": per event, its type, identity, command tag and trigger
 *	 event, and the relation images capture made ("before", "after"), which
 *	 the subscriber checks its result against.  Dropped objects carry no
 *	 image (a drop is checked by the object being gone).
 * - A statement applied here from another cluster (apply.c sets
 *	 ddln_apply_origin around it) keeps that cluster's identity and event
 *	 id as its origin: a subscriber of this cluster applies it once, and
 *	 never back where it came from.
 * - The row is written as a plain heap and index insert, seen by logical
 *	 decoding (unlike the event rows).  Nothing reads it here after its
 *	 commit (logical decoding reads the WAL, the tuple included, never the
 *	 table): the engine's sweep empties the table now and then
 *	 (DdlnOutboxPrune), under an exclusive lock it does not wait for (no
 *	 statement that writes a row is in progress), with PostgreSQL's
 *	 non-transactional truncation: nothing of it is decoded or replicated,
 *	 and the catalogs do not change.
 *
 * Floor: engine (capture's helper): called by capture.c and, for pruning,
 * by deliver.c's sweep; calls common.c.
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/heap.h"
#include "catalog/index.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/objectaddress.h"
#include "catalog/partition.h"
#include "catalog/pg_attrdef.h"
#include "catalog/pg_class.h"
#include "catalog/pg_constraint.h"
#include "catalog/pg_policy.h"
#include "catalog/pg_publication.h"
#include "catalog/pg_rewrite.h"
#include "catalog/pg_statistic_ext.h"
#include "catalog/pg_trigger.h"
#include "commands/extension.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "common.h"

DdlnApplyOrigin ddln_apply_origin = {false, 0, 0};

/* One statement between its ddl_command_start and its ddl_command_end. */
typedef struct DdlnOutboxFrame
{
	SubTransactionId subxid;	/* where it was opened */
	List	   *pubnames;		/* ddl_publication's rows (char *), NIL: off */
	int64		first_id;		/* its first event's id, 0: none yet */
	StringInfoData objects;		/* the "objects" array so far, without [ ] */
	List	   *relids;			/* relations its events touch */
	List	   *schemas;		/* schema names of its events (char *) */
	List	   *dropped_pubs;	/* publications that lost a table (char *) */
	bool		created_first;	/* a CREATE TABLE AS whose table went ahead */
} DdlnOutboxFrame;

static List *frames = NIL;		/* innermost first, in TopTransactionContext */

static void DdlnOutboxCreateFirst(DdlnOutboxFrame *f, CreateTableAsStmt *stmt);
static bool callbacks_registered = false;

#define DDLN_OUTBOX_NATTS 12

static void
DdlnOutboxXactCallback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PARALLEL_COMMIT || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_PREPARE)
	{
		frames = NIL;
		ddln_apply_origin.set = false;
	}
}

static void
DdlnOutboxSubXactCallback(SubXactEvent event, SubTransactionId mySubid,
						  SubTransactionId parentSubid, void *arg)
{
	if (event != SUBXACT_EVENT_ABORT_SUB)
		return;
	while (frames != NIL && ((DdlnOutboxFrame *) linitial(frames))->subxid == mySubid)
		frames = list_delete_first(frames);
}

/* ddl_publication's rows, NIL when it has none (or does not exist yet). */
static List *
DdlnOutboxPublications(void)
{
	const DdlnRelids *relids = DdlnGetRelids(true);
	Oid			relid;
	Relation	rel;
	SysScanDesc scan;
	HeapTuple	tup;
	List	   *names = NIL;

	if (relids == NULL)
		return NIL;
	relid = get_relname_relid("ddl_publication", relids->nsp);
	if (!OidIsValid(relid))
		return NIL;
	rel = table_open(relid, AccessShareLock);
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		bool		isnull;
		Datum		d = heap_getattr(tup, 1, RelationGetDescr(rel), &isnull);

		if (!isnull)
			names = lappend(names, pstrdup(NameStr(*DatumGetName(d))));
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return names;
}

/* ddl_command_start: open the statement's frame. */
void
DdlnOutboxStatementStart(Node *parsetree)
{
	MemoryContext old;
	DdlnOutboxFrame *f;

	if (!callbacks_registered)
	{
		RegisterXactCallback(DdlnOutboxXactCallback, NULL);
		RegisterSubXactCallback(DdlnOutboxSubXactCallback, NULL);
		callbacks_registered = true;
	}
	old = MemoryContextSwitchTo(TopTransactionContext);
	f = palloc0(sizeof(DdlnOutboxFrame));
	f->subxid = GetCurrentSubTransactionId();
	if (!creating_extension)
		f->pubnames = DdlnOutboxPublications();
	if (f->pubnames != NIL)
		initStringInfo(&f->objects);
	frames = lcons(f, frames);
	MemoryContextSwitchTo(old);
	if (f->pubnames != NIL && parsetree != NULL && IsA(parsetree, CreateTableAsStmt) &&
		((CreateTableAsStmt *) parsetree)->objtype == OBJECT_TABLE)
		DdlnOutboxCreateFirst(f, (CreateTableAsStmt *) parsetree);
}

/* The relation column of a catalog whose rows belong to a relation. */
static AttrNumber
DdlnOutboxRelationColumn(Oid classid, AttrNumber *oidcol)
{
	switch (classid)
	{
		case ConstraintRelationId:
			*oidcol = Anum_pg_constraint_oid;
			return Anum_pg_constraint_conrelid;
		case TriggerRelationId:
			*oidcol = Anum_pg_trigger_oid;
			return Anum_pg_trigger_tgrelid;
		case RewriteRelationId:
			*oidcol = Anum_pg_rewrite_oid;
			return Anum_pg_rewrite_ev_class;
		case AttrDefaultRelationId:
			*oidcol = Anum_pg_attrdef_oid;
			return Anum_pg_attrdef_adrelid;
		case PolicyRelationId:
			*oidcol = Anum_pg_policy_oid;
			return Anum_pg_policy_polrelid;
		case StatisticExtRelationId:
			*oidcol = Anum_pg_statistic_ext_oid;
			return Anum_pg_statistic_ext_stxrelid;
		default:
			return InvalidAttrNumber;
	}
}

/* The relation an event's object belongs to, or InvalidOid. */
static Oid
DdlnOutboxRelationOf(Oid classid, Oid objid)
{
	AttrNumber	oidcol;
	AttrNumber	relcol;
	Relation	catalog;
	HeapTuple	tup;
	Oid			relid = InvalidOid;

	if (classid == RelationRelationId)
	{
		char		relkind = get_rel_relkind(objid);

		if (relkind == RELKIND_INDEX || relkind == RELKIND_PARTITIONED_INDEX)
			return IndexGetRelation(objid, true);
		return objid;
	}
	relcol = DdlnOutboxRelationColumn(classid, &oidcol);
	if (relcol == InvalidAttrNumber)
		return InvalidOid;
	catalog = table_open(classid, AccessShareLock);
	tup = get_catalog_object_by_oid(catalog, oidcol, objid);
	if (HeapTupleIsValid(tup))
	{
		bool		isnull;
		Datum		d = heap_getattr(tup, relcol, RelationGetDescr(catalog), &isnull);

		if (!isnull)
			relid = DatumGetObjectId(d);
	}
	table_close(catalog, AccessShareLock);
	return relid;
}

/* Append "key": value (a JSON text) to the frame's objects. */
static void
DdlnOutboxPair(StringInfo buf, const char *key, const char *value, bool first)
{
	if (!first)
		appendStringInfoChar(buf, ',');
	escape_json(buf, key);
	appendStringInfoChar(buf, ':');
	if (value == NULL)
		appendStringInfoString(buf, "null");
	else
		escape_json(buf, value);
}

/* Append the image "key" of details, if it has one. */
static void
DdlnOutboxImage(StringInfo buf, Jsonb *details, const char *key)
{
	JsonbValue	v;

	if (details == NULL ||
		getKeyJsonValueFromContainer(&details->root, key, strlen(key), &v) == NULL ||
		v.type != jbvBinary)
		return;
	appendStringInfoChar(buf, ',');
	escape_json(buf, key);
	appendStringInfoChar(buf, ':');
	(void) JsonbToCString(buf, v.val.binary.data, v.val.binary.len);
}

/*
 * Capture inserted event "id" for the current statement: note it in the
 * innermost frame, if DDL replication is on for this statement.
 */
void
DdlnOutboxNote(int64 id, const char *trigger_event, const char *command_tag,
			   const char *object_type, const char *schema_name,
			   const char *identity, bool has_address, Oid classid, Oid objid,
			   Jsonb *details)
{
	DdlnOutboxFrame *f;
	MemoryContext old;
	bool		dropped = (strcmp(trigger_event, "sql_drop") == 0);

	/*
	 * CREATE INDEX CONCURRENTLY (and DETACH PARTITION CONCURRENTLY) commit
	 * the transaction their ddl_command_start ran in: the frame is opened
	 * again in the one that records them.
	 */
	if (frames == NIL)
		DdlnOutboxStatementStart(NULL);
	f = (DdlnOutboxFrame *) linitial(frames);
	if (f->pubnames == NIL)
		return;
	old = MemoryContextSwitchTo(TopTransactionContext);
	if (f->first_id == 0)
		f->first_id = id;
	if (f->objects.len > 0)
		appendStringInfoChar(&f->objects, ',');
	appendStringInfoChar(&f->objects, '{');
	DdlnOutboxPair(&f->objects, "type", object_type, true);
	DdlnOutboxPair(&f->objects, "identity", identity, false);
	DdlnOutboxPair(&f->objects, "tag", command_tag, false);
	DdlnOutboxPair(&f->objects, "event", trigger_event, false);
	if (!dropped)
	{
		DdlnOutboxImage(&f->objects, details, "before");
		DdlnOutboxImage(&f->objects, details, "after");
	}
	appendStringInfoChar(&f->objects, '}');

	if (schema_name)
		f->schemas = lappend(f->schemas, pstrdup(schema_name));
	if (has_address && !dropped)
	{
		Oid			relid = DdlnOutboxRelationOf(classid, objid);

		if (OidIsValid(relid))
			f->relids = lappend_oid(f->relids, relid);
	}
	/* "t in publication p": the drop took t out of p */
	if (dropped && object_type && identity &&
		strcmp(object_type, "publication relation") == 0)
	{
		const char *at = strstr(identity, " in publication ");

		if (at)
			f->dropped_pubs = lappend(f->dropped_pubs, pstrdup(at + 16));
	}
	MemoryContextSwitchTo(old);
}

/* Does publication "pub" cover relation relid (or one of its ancestors)? */
static bool
DdlnOutboxListsRelation(Oid pubid, Oid relid)
{
	List	   *rels;
	ListCell   *lc;

	if (SearchSysCacheExists2(PUBLICATIONRELMAP, ObjectIdGetDatum(relid),
							  ObjectIdGetDatum(pubid)) ||
		SearchSysCacheExists2(PUBLICATIONNAMESPACEMAP,
							  ObjectIdGetDatum(get_rel_namespace(relid)),
							  ObjectIdGetDatum(pubid)))
		return true;
	if (!get_rel_relispartition(relid))
		return false;
	rels = get_partition_ancestors(relid);
	foreach(lc, rels)
	{
		if (SearchSysCacheExists2(PUBLICATIONRELMAP, ObjectIdGetDatum(lfirst_oid(lc)),
								  ObjectIdGetDatum(pubid)))
			return true;
	}
	return false;
}

/* Does the publication named "name" cover the statement of frame f? */
static bool
DdlnOutboxCovers(DdlnOutboxFrame *f, const char *name)
{
	Publication *pub = GetPublicationByName(name, true);
	ListCell   *lc;

	if (pub == NULL)
		return false;
	if (pub->alltables)
		return true;
	foreach(lc, f->relids)
	{
		if (OidIsValid(get_rel_relkind(lfirst_oid(lc))) &&
			DdlnOutboxListsRelation(pub->oid, lfirst_oid(lc)))
			return true;
	}
	foreach(lc, f->schemas)
	{
		Oid			nsp = get_namespace_oid((char *) lfirst(lc), true);

		if (OidIsValid(nsp) &&
			SearchSysCacheExists2(PUBLICATIONNAMESPACEMAP, ObjectIdGetDatum(nsp),
								  ObjectIdGetDatum(pub->oid)))
			return true;
	}
	foreach(lc, f->dropped_pubs)
	{
		if (strcmp((char *) lfirst(lc), name) == 0 ||
			strcmp((char *) lfirst(lc), quote_identifier(name)) == 0)
			return true;
	}
	return false;
}

/* The settings the statement's text is read under (common.c), as now. */
static Jsonb *
DdlnOutboxSettings(void)
{
	DdlnJsonbState st = DDLN_JSONB_STATE_INIT;

	DdlnJsonToken(&st, WJB_BEGIN_OBJECT);
	DdlnJsonTextSettings(&st, NULL);
	return DdlnJsonbFinish(&st);
}

/* The search_path in force, as a list of quoted schema names. */
static char *
DdlnOutboxSearchPath(void)
{
	List	   *path = fetch_search_path(false);
	StringInfoData buf;
	ListCell   *lc;

	initStringInfo(&buf);
	foreach(lc, path)
	{
		char	   *nsp = get_namespace_name(lfirst_oid(lc));

		if (nsp == NULL)
			continue;
		if (buf.len > 0)
			appendStringInfoString(&buf, ", ");
		appendStringInfoString(&buf, quote_identifier(nsp));
	}
	list_free(path);
	return buf.data;
}

/* Publication and subscription commands are each cluster's own. */
static bool
DdlnOutboxOwnCommand(const char *tag)
{
	return strstr(tag, "PUBLICATION") != NULL || strstr(tag, "SUBSCRIPTION") != NULL;
}

/*
 * Write the row of frame f, for the publications in pubs: its id and
 * origin id "id" (an event's id), what the subscriber does with it.
 */
static void
DdlnOutboxWrite(DdlnOutboxFrame *f, int64 id, const char *tag, List *pubs,
				const char *action)
{
	const DdlnRelids *relids = DdlnGetRelids(false);
	Oid			relid = get_relname_relid("ddl_outbox", relids->nsp);
	Datum		values[DDLN_OUTBOX_NATTS];
	bool		nulls[DDLN_OUTBOX_NATTS] = {0};
	Datum	   *names;
	const char *text = DdlnCurrentStatementText();
	StringInfoData objects;
	Relation	rel;
	CatalogIndexState indstate;
	HeapTuple	tup;
	int			i = 0;
	ListCell   *lc;

	if (!OidIsValid(relid))
		return;
	names = palloc(sizeof(Datum) * list_length(pubs));
	foreach(lc, pubs)
	{
		Name		n = palloc0(NAMEDATALEN);

		namestrcpy(n, (char *) lfirst(lc));
		names[i++] = NameGetDatum(n);
	}
	initStringInfo(&objects);
	appendStringInfo(&objects, "[%s]", f->objects.data);

	values[0] = Int64GetDatum(id);
	values[1] = Int64GetDatum(ddln_apply_origin.set ? ddln_apply_origin.origin :
							  (int64) GetSystemIdentifier());
	values[2] = Int64GetDatum(ddln_apply_origin.set ? ddln_apply_origin.origin_id : id);
	values[3] = PointerGetDatum(construct_array(names, list_length(pubs), NAMEOID,
												NAMEDATALEN, false, TYPALIGN_CHAR));
	values[4] = DirectFunctionCall1(namein,
									CStringGetDatum(GetUserNameFromId(GetUserId(), false)));
	values[5] = CStringGetTextDatum(DdlnOutboxSearchPath());
	values[6] = CStringGetTextDatum(tag);
	/* a text redaction would change holds a secret: never replicated */
	nulls[7] = (text == NULL || DdlnRedactSecrets(text) != text);
	values[7] = nulls[7] ? (Datum) 0 : CStringGetTextDatum(text);
	values[8] = DirectFunctionCall1(jsonb_in, CStringGetDatum(objects.data));
	values[9] = TimestampTzGetDatum(GetCurrentStatementStartTimestamp());
	values[10] = CStringGetTextDatum(action);
	values[11] = JsonbPGetDatum(DdlnOutboxSettings());

	rel = table_open(relid, RowExclusiveLock);
	indstate = CatalogOpenIndexes(rel);
	tup = heap_form_tuple(RelationGetDescr(rel), values, nulls);
	DdlnInsertRow(rel, indstate, tup, true);
	CatalogCloseIndexes(indstate);
	heap_freetuple(tup);
	table_close(rel, RowExclusiveLock);
}

/*
 * ddl_command_start of CREATE TABLE AS / SELECT INTO: the rows it makes are
 * decoded before its ddl_command_end, so its table must go first.  Write
 * the statement now, for the subscriber to run WITH NO DATA; its
 * ddl_command_end writes the images to check ("check").  Which
 * publications: those FOR ALL TABLES, and those of the schema the table
 * will be made in (named, or the first of the search_path); a table list
 * never holds a table not made yet.
 */
static void
DdlnOutboxCreateFirst(DdlnOutboxFrame *f, CreateTableAsStmt *stmt)
{
	const char *schema = stmt->into->rel->schemaname;
	List	   *pubs = NIL;
	ListCell   *lc;

	if (schema == NULL)
	{
		List	   *path = fetch_search_path(false);

		schema = path != NIL ? get_namespace_name(linitial_oid(path)) : NULL;
	}
	foreach(lc, f->pubnames)
	{
		Publication *pub = GetPublicationByName((char *) lfirst(lc), true);
		Oid			nsp = schema ? get_namespace_oid(schema, true) : InvalidOid;

		if (pub && (pub->alltables ||
					(OidIsValid(nsp) &&
					 SearchSysCacheExists2(PUBLICATIONNAMESPACEMAP, ObjectIdGetDatum(nsp),
										   ObjectIdGetDatum(pub->oid)))))
			pubs = lappend(pubs, lfirst(lc));
	}
	if (pubs == NIL)
		return;
	DdlnOutboxWrite(f, DdlnCounterNext(DdlnGetRelids(false)->event_seq),
					stmt->is_select_into ? "SELECT INTO" : "CREATE TABLE AS", pubs,
					"create without data");
	f->created_first = true;
}

/*
 * ddl_command_end of a statement with tag "tag": close its frame, and write
 * its row if it recorded events that a publication marked with
 * publish_ddl() covers.
 */
void
DdlnOutboxStatementEnd(const char *tag)
{
	DdlnOutboxFrame *f;
	List	   *pubs = NIL;
	ListCell   *lc;

	if (frames == NIL)
		return;
	f = (DdlnOutboxFrame *) linitial(frames);
	frames = list_delete_first(frames);
	if (f->pubnames == NIL || f->first_id == 0 || creating_extension ||
		DdlnOutboxOwnCommand(tag))
		return;
	foreach(lc, f->pubnames)
	{
		if (DdlnOutboxCovers(f, (char *) lfirst(lc)))
			pubs = lappend(pubs, lfirst(lc));
	}
	if (pubs != NIL)
		DdlnOutboxWrite(f, f->first_id, tag, pubs,
						f->created_first ? "check" : "statement");
}

/*
 * The sweep: empty ddl_notify.ddl_outbox, whose rows only logical decoding
 * reads (from the WAL), if nobody holds a lock on it.  The lock is the
 * caller's transaction's; the truncation is not undone by its abort.
 */
void
DdlnOutboxPrune(void)
{
	const DdlnRelids *relids = DdlnGetRelids(true);
	Oid			relid;
	Relation	rel;
	BlockNumber blocks;

	if (relids == NULL)
		return;
	relid = get_relname_relid("ddl_outbox", relids->nsp);
	if (!OidIsValid(relid) || !ConditionalLockRelationOid(relid, AccessExclusiveLock))
		return;
	rel = table_open(relid, NoLock);
	blocks = RelationGetNumberOfBlocks(rel);
	if (blocks > 0)
		heap_truncate_one_rel(rel);
	table_close(rel, NoLock);
}
