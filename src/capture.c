/*-------------------------------------------------------------------------
 *
 * capture.c
 *	  The event trigger functions: every DDL command becomes rows of
 *	  ddl_notify.event, inside the DDL's own transaction.
 *
 * Rules kept here:
 * - Rows are inserted by the DDL's own transaction, in the event trigger, so
 *	 they commit or roll back with it, savepoints included (G1).  The
 *	 transaction is flagged (ddln_xact_recorded) so that ddl_notify.c takes
 *	 the subscription-point lock at PRE_COMMIT and wakes the worker at COMMIT.
 * - One row per object PostgreSQL reports; GRANT/REVOKE become one row per
 *	 granted object.  ALTER TABLE subcommands, rewrite reasons and the
 *	 original/cascaded flag of drops go into "details", read in C from what
 *	 SQL-level triggers cannot see (pg_ddl_command).
 * - Never recorded: the extension's own objects (everything in schema
 *	 ddl_notify, the schema and the extension itself), the internal companions
 *	 of dropped objects nobody names (row and array types, TOAST tables, a
 *	 view's _RETURN rule, the system triggers of a foreign key), and temporary objects unless
 *	 ddl_notify.capture_temp is on.
 * - Rows are formed in C and written with a plain heap and index insert (as
 *	 PostgreSQL writes its catalogs): no executor, no SQL, no search_path.
 *	 The heap inserts are flagged HEAP_INSERT_NO_LOGICAL: logical decoding
 *	 (publications, CDC tools) never sees these rows (G0).
 *	 Capture runs as the DDL's author; role_name records who that was.  The
 *	 event trigger functions (pg_event_trigger_ddl_commands() and friends)
 *	 are called directly through fmgr, as the executor calls a function in
 *	 FROM: capture runs no SQL at all.
 * - Each row is noted for DDL replication's outbox (outbox.c), which writes
 *	 one row per statement at its ddl_command_end when a publish_ddl()
 *	 publication covers it; otherwise that costs a test of an empty list.
 * - With ddl_notify.wal_messages on, each row is also handed to walmsg.c
 *	 right after its insert, which writes it to the WAL as a transactional
 *	 logical decoding message (G15); off, that costs one boolean test.
 * - Before it commits, a transaction that recorded events writes its position
 *	 in commit order (counter.c's DdlnRecordCommitPosition), which orders
 *	 delivery (G5).
 * - Event ids and commit positions come from the extension's sequences
 *	 through counter.c, never nextval(): the user's lastval() must not see
 *	 them (G0).
 * - Events caused by a subscriber's handler carry that subscriber's name in
 *	 "origin" and the chain of subscribers that led to them in
 *	 "origin_chain" (G12): the chain of the event the handler was called
 *	 for, then this subscriber (so origin is its last element).  deliver.c
 *	 sets ddln_current_origin and ddln_current_chain around handler calls.
 *	 A 0.1.0 event table (before ALTER EXTENSION UPDATE) has no
 *	 origin_chain and is written without it.
 * - "query" is stored as querytext.c makes it: secrets redacted, cut to
 *	 ddl_notify.max_query_length (its header states how).
 * - Every event's "details" carry "statement" (statementkey.c): which
 *	 top-level statement of the transaction it belongs to, the search_path
 *	 and role that statement ran under, and whether "query" is its exact
 *	 text (nothing redacted or cut, the hook's own slice); built once per
 *	 trigger call, at its first row.  ddl_command_start opens the
 *	 statement's frame, ddl_command_end closes it.
 * - With ddl_notify.capture_changes on, "details" of events on tables,
 *	 views, materialized views and foreign tables also carry "before",
 *	 "after" and "changes" (imgcommand.c, which says when each is read;
 *	 imgdrop.c for dropped relations).
 *	 ddl_command_start records no event: it lets imgcommand.c read the
 *	 "before" image of the relation the command will change, and opens the
 *	 statement's frame for DDL replication's outbox (outbox.c).
 * - The rows of pg_event_trigger_ddl_commands() and
 *	 pg_event_trigger_dropped_objects() are read one at a time from the
 *	 function's tuplestore; sql_drop resets a memory context after each row,
 *	 so a DROP SCHEMA of thousands of tables holds one row's memory of ours
 *	 at a time (the event table, opened at the first row, stays open in the
 *	 call's context).
 *
 * Floor: capture (under the entry): called by the event triggers through
 * fmgr and by ddl_notify.c; calls querytext.c, imgcommand.c, imgdrop.c,
 * walmsg.c, outbox.c, counter.c and common.c, never the API, the worker or
 * the delivery engine.
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/objectaddress.h"
#include "catalog/pg_class.h"
#include "catalog/pg_constraint.h"
#include "catalog/pg_foreign_data_wrapper.h"
#include "catalog/pg_foreign_server.h"
#include "catalog/pg_language.h"
#include "catalog/pg_largeobject.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_policy.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_rewrite.h"
#include "catalog/pg_trigger.h"
#include "catalog/pg_type.h"
#include "commands/event_trigger.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "funcapi.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "tcop/cmdtag.h"
#include "tcop/deparse_utility.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/fmgrprotos.h"
#include "utils/formatting.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/tuplestore.h"
#include "utils/xid8.h"

#include "common.h"

PG_FUNCTION_INFO_V1(ddl_notify_capture_ddl_command_start);
PG_FUNCTION_INFO_V1(ddl_notify_capture_ddl_command_end);
PG_FUNCTION_INFO_V1(ddl_notify_capture_sql_drop);
PG_FUNCTION_INFO_V1(ddl_notify_capture_table_rewrite);

bool		ddln_xact_recorded = false;

/* One event row on its way to ddl_notify.event. */
typedef struct DdlnEventRow
{
	const char *trigger_event;
	const char *command_tag;
	const char *object_type;
	const char *schema_name;
	const char *object_identity;
	Oid			classid;
	Oid			objid;
	int32		objsubid;
	bool		has_address;
	bool		in_extension;
	Jsonb	   *details;		/* or NULL */
} DdlnEventRow;

/* What every row of one trigger call shares. */
typedef struct DdlnCaptureCall
{
	NameData	role_name;
	const char *query;
	bool		exact;			/* query is the text read, unredacted, uncut */
	Jsonb	   *statement;		/* the "statement" key, at the first row */
	Relation	rel;			/* ddl_notify.event, opened at the first row */
	CatalogIndexState indstate;
	Oid			seqid;			/* its id sequence */
	MemoryContext cxt;			/* the call's: the table stays open in it */
} DdlnCaptureCall;



static bool
DdlnIsOwnObject(const char *object_type, const char *schema_name,
				const char *identity)
{
	if (schema_name && strcmp(schema_name, DDLN_SCHEMA_NAME) == 0)
		return true;
	if (object_type && identity &&
		(strcmp(object_type, "schema") == 0 || strcmp(object_type, "extension") == 0) &&
		strcmp(identity, DDLN_SCHEMA_NAME) == 0)
		return true;
	return false;
}

static bool
DdlnIsTempSchema(const char *schema_name)
{
	return schema_name != NULL &&
		(strcmp(schema_name, "pg_temp") == 0 ||
		 strncmp(schema_name, "pg_temp_", 8) == 0 ||
		 strncmp(schema_name, "pg_toast_temp_", 14) == 0);
}

/* Start a trigger call: who ran it and what statement. */
static void
DdlnBeginCapture(DdlnCaptureCall *call)
{
	memset(call, 0, sizeof(*call));
	call->cxt = CurrentMemoryContext;
	namestrcpy(&call->role_name, GetUserNameFromId(GetUserId(), false));
	if (ddln_capture_query)
	{
		const char *text = DdlnCurrentStatementText();
		const char *redacted = DdlnRedactSecrets(text);

		call->query = DdlnCapQuery(redacted);
		/* each returns its argument itself when it changed nothing */
		call->exact = text != NULL && redacted == text && call->query == redacted;
	}
}

static void
DdlnEndCapture(DdlnCaptureCall *call)
{
	if (call->rel)
	{
		CatalogCloseIndexes(call->indstate);
		table_close(call->rel, RowExclusiveLock);
	}
}

/* Open ddl_notify.event and its indexes for this call's rows. */
static void
DdlnOpenEventTable(DdlnCaptureCall *call)
{
	const DdlnRelids *relids = DdlnGetRelids(false);

	call->seqid = relids->event_seq;
	call->rel = table_open(relids->event, RowExclusiveLock);
	if (RelationGetDescr(call->rel)->natts != DDLN_EV_NATTS &&
		RelationGetDescr(call->rel)->natts != DDLN_EV_NATTS_010)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table ddl_notify.event does not have the columns this version of ddl_notify writes"),
				 errhint(DDLN_HINT_TABLE_SHAPE)));
	call->indstate = CatalogOpenIndexes(call->rel);
}

/*
 * The origin_chain of an event a handler's DDL causes: the chain of the
 * event the handler was called for, then the handler's subscriber.
 */
static Datum
DdlnOriginChain(void)
{
	Datum	   *elems = NULL;
	bool	   *elnulls = NULL;
	int			n = 0;
	Datum	   *chain;
	int			len = 0;

	if (ddln_current_chain != (Datum) 0)
		deconstruct_array(DatumGetArrayTypeP(ddln_current_chain), TEXTOID, -1, false,
						  TYPALIGN_INT, &elems, &elnulls, &n);
	chain = palloc(sizeof(Datum) * (n + 1));
	for (int i = 0; i < n; i++)
	{
		if (!elnulls[i])
			chain[len++] = elems[i];
	}
	chain[len++] = CStringGetTextDatum(ddln_current_origin);
	return PointerGetDatum(construct_array(chain, len, TEXTOID, -1, false, TYPALIGN_INT));
}


/*
 * "details" with the call's "statement" key (statementkey.c, built once per
 * call).  Callers that add relation images add it first, while "details" is
 * small: the images are then set beside it, never concatenated again.
 */
static Jsonb *
DdlnWithStatement(DdlnCaptureCall *call, Jsonb *details)
{
	if (call->statement == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(call->cxt);

		call->statement = DdlnStatementKey(call->exact);
		MemoryContextSwitchTo(old);
	}
	return DdlnDetailsWith(details, call->statement);
}

static void
DdlnInsertEvent(DdlnCaptureCall *call, const DdlnEventRow *row)
{
	Datum		values[DDLN_EV_NATTS];
	bool		nulls[DDLN_EV_NATTS];
	Jsonb	   *details;
	HeapTuple	tup;

#define DDLN_TEXT(col, str) \
	do { \
		nulls[col] = ((str) == NULL); \
		values[col] = (str) ? CStringGetTextDatum(str) : (Datum) 0; \
	} while (0)

	if (call->rel == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(call->cxt);

		DdlnOpenEventTable(call);
		MemoryContextSwitchTo(old);
	}

	memset(nulls, false, sizeof(nulls));
	values[DDLN_EV_ID] = Int64GetDatum(DdlnCounterNext(call->seqid));
	values[DDLN_EV_XID] = FullTransactionIdGetDatum(GetTopFullTransactionId());
	values[DDLN_EV_OCCURRED_AT] = TimestampTzGetDatum(GetCurrentStatementStartTimestamp());
	DDLN_TEXT(DDLN_EV_TRIGGER_EVENT, row->trigger_event);
	DDLN_TEXT(DDLN_EV_COMMAND_TAG, row->command_tag);
	DDLN_TEXT(DDLN_EV_OBJECT_TYPE, row->object_type);
	DDLN_TEXT(DDLN_EV_SCHEMA_NAME, row->schema_name);
	DDLN_TEXT(DDLN_EV_OBJECT_IDENTITY, row->object_identity);
	values[DDLN_EV_CLASSID] = ObjectIdGetDatum(row->classid);
	values[DDLN_EV_OBJID] = ObjectIdGetDatum(row->objid);
	values[DDLN_EV_OBJSUBID] = Int32GetDatum(row->objsubid);
	nulls[DDLN_EV_CLASSID] = nulls[DDLN_EV_OBJID] = nulls[DDLN_EV_OBJSUBID] = !row->has_address;
	values[DDLN_EV_IN_EXTENSION] = BoolGetDatum(row->in_extension);
	values[DDLN_EV_ROLE_NAME] = NameGetDatum(&call->role_name);
	DDLN_TEXT(DDLN_EV_QUERY, call->query);
	/* the statement it belongs to, unless the caller put it in already */
	details = row->details;
	if (details == NULL ||
		getKeyJsonValueFromContainer(&details->root, "statement", strlen("statement"), NULL) == NULL)
		details = DdlnWithStatement(call, details);
	values[DDLN_EV_DETAILS] = JsonbPGetDatum(details);
	DDLN_TEXT(DDLN_EV_ORIGIN, ddln_current_origin);
	values[DDLN_EV_PROCESSED] = Int64GetDatum(0);
	nulls[DDLN_EV_ORIGIN_CHAIN] = (ddln_current_origin == NULL);
	values[DDLN_EV_ORIGIN_CHAIN] = ddln_current_origin ? DdlnOriginChain() : (Datum) 0;
#undef DDLN_TEXT

	tup = heap_form_tuple(RelationGetDescr(call->rel), values, nulls);
	DdlnInsertUnpublished(call->rel, call->indstate, tup);
	heap_freetuple(tup);
	/* the statement's outbox row, if its DDL is replicated (outbox.c) */
	DdlnOutboxNote(DatumGetInt64(values[DDLN_EV_ID]), row->trigger_event, row->command_tag,
				   row->object_type, row->schema_name, row->object_identity,
				   row->has_address, row->classid, row->objid, details);
	/* the same event in the WAL stream, for CDC consumers (walmsg.c) */
	if (ddln_wal_messages)
		DdlnWalMessage(RelationGetDescr(call->rel), values, nulls);

	ddln_xact_recorded = true;
}

/* Kind of an ALTER TABLE subcommand, as a user would write it. */
static const char *
DdlnAlterTableKind(AlterTableType t)
{
	switch (t)
	{
		case AT_AddColumn:
			DDLN_CASE_AT_ADD_COLUMN_RECURSE
		case AT_AddColumnToView:
			return "ADD COLUMN";
		case AT_ColumnDefault:
		case AT_CookedColumnDefault:
			return "ALTER COLUMN SET/DROP DEFAULT";
		case AT_DropNotNull:
			return "ALTER COLUMN DROP NOT NULL";
		case AT_SetNotNull:
			DDLN_CASE_AT_CHECK_NOT_NULL
			return "ALTER COLUMN SET NOT NULL";
		case AT_DropExpression:
			return "ALTER COLUMN DROP EXPRESSION";
			DDLN_CASE_AT_SET_EXPRESSION("ALTER COLUMN SET EXPRESSION")
		case AT_SetStatistics:
			return "ALTER COLUMN SET STATISTICS";
		case AT_SetOptions:
			return "ALTER COLUMN SET OPTIONS";
		case AT_ResetOptions:
			return "ALTER COLUMN RESET OPTIONS";
		case AT_SetStorage:
			return "ALTER COLUMN SET STORAGE";
		case AT_SetCompression:
			return "ALTER COLUMN SET COMPRESSION";
		case AT_DropColumn:
			DDLN_CASE_AT_DROP_COLUMN_RECURSE
			return "DROP COLUMN";
		case AT_AddIndex:
		case AT_ReAddIndex:
			return "ADD INDEX";
		case AT_AddConstraint:
			DDLN_CASE_AT_ADD_CONSTRAINT_RECURSE
		case AT_ReAddConstraint:
		case AT_ReAddDomainConstraint:
		case AT_AddIndexConstraint:
			return "ADD CONSTRAINT";
		case AT_AlterConstraint:
			return "ALTER CONSTRAINT";
		case AT_ValidateConstraint:
			DDLN_CASE_AT_VALIDATE_CONSTRAINT_RECURSE
			return "VALIDATE CONSTRAINT";
		case AT_DropConstraint:
			DDLN_CASE_AT_DROP_CONSTRAINT_RECURSE
			return "DROP CONSTRAINT";
		case AT_ReAddComment:
			return "COMMENT";
		case AT_AlterColumnType:
			return "ALTER COLUMN TYPE";
		case AT_AlterColumnGenericOptions:
			return "ALTER COLUMN OPTIONS";
		case AT_ChangeOwner:
			return "OWNER TO";
		case AT_ClusterOn:
			return "CLUSTER ON";
		case AT_DropCluster:
			return "SET WITHOUT CLUSTER";
		case AT_SetLogged:
			return "SET LOGGED";
		case AT_SetUnLogged:
			return "SET UNLOGGED";
		case AT_DropOids:
			return "SET WITHOUT OIDS";
		case AT_SetAccessMethod:
			return "SET ACCESS METHOD";
		case AT_SetTableSpace:
			return "SET TABLESPACE";
		case AT_SetRelOptions:
			return "SET";
		case AT_ResetRelOptions:
			return "RESET";
		case AT_ReplaceRelOptions:
			return "SET (replace)";
		case AT_EnableTrig:
			return "ENABLE TRIGGER";
		case AT_EnableAlwaysTrig:
			return "ENABLE ALWAYS TRIGGER";
		case AT_EnableReplicaTrig:
			return "ENABLE REPLICA TRIGGER";
		case AT_DisableTrig:
			return "DISABLE TRIGGER";
		case AT_EnableTrigAll:
			return "ENABLE TRIGGER ALL";
		case AT_DisableTrigAll:
			return "DISABLE TRIGGER ALL";
		case AT_EnableTrigUser:
			return "ENABLE TRIGGER USER";
		case AT_DisableTrigUser:
			return "DISABLE TRIGGER USER";
		case AT_EnableRule:
			return "ENABLE RULE";
		case AT_EnableAlwaysRule:
			return "ENABLE ALWAYS RULE";
		case AT_EnableReplicaRule:
			return "ENABLE REPLICA RULE";
		case AT_DisableRule:
			return "DISABLE RULE";
		case AT_AddInherit:
			return "INHERIT";
		case AT_DropInherit:
			return "NO INHERIT";
		case AT_AddOf:
			return "OF";
		case AT_DropOf:
			return "NOT OF";
		case AT_ReplicaIdentity:
			return "REPLICA IDENTITY";
		case AT_EnableRowSecurity:
			return "ENABLE ROW LEVEL SECURITY";
		case AT_DisableRowSecurity:
			return "DISABLE ROW LEVEL SECURITY";
		case AT_ForceRowSecurity:
			return "FORCE ROW LEVEL SECURITY";
		case AT_NoForceRowSecurity:
			return "NO FORCE ROW LEVEL SECURITY";
		case AT_GenericOptions:
			return "OPTIONS";
		case AT_AttachPartition:
			return "ATTACH PARTITION";
		case AT_DetachPartition:
			return "DETACH PARTITION";
		case AT_DetachPartitionFinalize:
			return "DETACH PARTITION FINALIZE";
		case AT_AddIdentity:
			return "ALTER COLUMN ADD IDENTITY";
		case AT_SetIdentity:
			return "ALTER COLUMN SET IDENTITY";
		case AT_DropIdentity:
			return "ALTER COLUMN DROP IDENTITY";
		case AT_ReAddStatistics:
			return "ADD STATISTICS";
	}
	return "UNKNOWN";
}

/* The name a subcommand acts on (column, constraint, partition...), or NULL. */
static const char *
DdlnAlterTableName(CollectedATSubcmd *sub, AlterTableCmd *cmd)
{
	if (DdlnATAddsColumn(cmd->subtype))
	{
		if (cmd->def && IsA(cmd->def, ColumnDef))
			return ((ColumnDef *) cmd->def)->colname;
	}
	if (cmd->subtype == AT_AttachPartition || cmd->subtype == AT_DetachPartition ||
		cmd->subtype == AT_DetachPartitionFinalize)
	{
		if (cmd->def && IsA(cmd->def, PartitionCmd))
			return ((PartitionCmd *) cmd->def)->name->relname;
	}
	/*
	 * SET/DROP NOT NULL name the column on every version: from 18 on their
	 * address is the column's catalogued NOT NULL constraint
	 */
	if ((cmd->subtype == AT_SetNotNull || cmd->subtype == AT_DropNotNull) && cmd->name)
		return cmd->name;
	if (sub->address.classId == ConstraintRelationId && OidIsValid(sub->address.objectId))
	{
		char	   *name = get_constraint_name(sub->address.objectId);

		if (name)
			return name;
	}
	if (cmd->name)
		return cmd->name;
	if (sub->address.classId == RelationRelationId && sub->address.objectSubId > 0)
		return get_attname(sub->address.objectId, sub->address.objectSubId, true);
	return NULL;
}

static Jsonb *
DdlnAlterTableDetails(CollectedCommand *cmd)
{
	DdlnJsonbState st = DDLN_JSONB_STATE_INIT;
	ListCell   *lc;
	List	   *seen_kinds = NIL;
	List	   *seen_names = NIL;

	DdlnJsonToken(&st, WJB_BEGIN_OBJECT);
	DdlnJsonKey(&st, "subcommands");
	DdlnJsonToken(&st, WJB_BEGIN_ARRAY);
	foreach(lc, cmd->d.alterTable.subcmds)
	{
		CollectedATSubcmd *sub = (CollectedATSubcmd *) lfirst(lc);
		AlterTableCmd *atc = (AlterTableCmd *) sub->parsetree;
		const char *kind = "UNKNOWN";
		const char *name = NULL;
		bool		known = (atc && IsA(atc, AlterTableCmd));
		ListCell   *lck,
				   *lcn;
		bool		dup = false;

		/* steps PostgreSQL adds by itself (re-creating a constraint or an
		 * index after a type change) are not what the user asked for */
		if (atc && IsA(atc, AlterTableCmd) &&
			(atc->subtype == AT_ReAddIndex || atc->subtype == AT_ReAddConstraint ||
			 atc->subtype == AT_ReAddDomainConstraint || atc->subtype == AT_ReAddComment ||
			 atc->subtype == AT_ReAddStatistics))
			continue;
		/*
		 * the same step repeated on inheritance children or partitions; not
		 * ATTACH/DETACH PARTITION, which name the partition (from 17 on) and
		 * are never repeated
		 */
		if (sub->address.classId == RelationRelationId &&
			OidIsValid(sub->address.objectId) &&
			sub->address.objectId != cmd->d.alterTable.objectId &&
			!(known && (atc->subtype == AT_AttachPartition ||
						atc->subtype == AT_DetachPartition ||
						atc->subtype == AT_DetachPartitionFinalize)))
			continue;

		if (known)
		{
			kind = DdlnAlterTableKind(atc->subtype);
			name = DdlnAlterTableName(sub, atc);
		}

		/* ... and once more when the recursion reports it without an address */
		forboth(lck, seen_kinds, lcn, seen_names)
		{
			if (DdlnStrEq(lfirst(lck), known ? kind : NULL) &&
				DdlnStrEq(lfirst(lcn), name))
				dup = true;
		}
		if (dup)
			continue;
		seen_kinds = lappend(seen_kinds, known ? (char *) kind : NULL);
		seen_names = lappend(seen_names, (char *) name);

		DdlnJsonToken(&st, WJB_BEGIN_OBJECT);
		DdlnJsonKey(&st, "kind");
		DdlnJsonString(&st, kind);
		if (known)
		{
			DdlnJsonKey(&st, "name");
			DdlnJsonString(&st, name);
		}
		DdlnJsonToken(&st, WJB_END_OBJECT);
	}
	DdlnJsonToken(&st, WJB_END_ARRAY);
	return DdlnJsonbFinish(&st);
}

/* The catalog an InternalGrant's objects live in, or InvalidOid. */
static Oid
DdlnGrantClassId(ObjectType objtype)
{
	switch (objtype)
	{
		case OBJECT_TABLE:
		case OBJECT_SEQUENCE:
			return RelationRelationId;
		case OBJECT_FUNCTION:
		case OBJECT_PROCEDURE:
		case OBJECT_ROUTINE:
			return ProcedureRelationId;
		case OBJECT_SCHEMA:
			return NamespaceRelationId;
		case OBJECT_TYPE:
		case OBJECT_DOMAIN:
			return TypeRelationId;
		case OBJECT_FDW:
			return ForeignDataWrapperRelationId;
		case OBJECT_FOREIGN_SERVER:
			return ForeignServerRelationId;
		case OBJECT_LANGUAGE:
			return LanguageRelationId;
		case OBJECT_LARGEOBJECT:

			/*
			 * PostgreSQL's object addresses name a large object by
			 * pg_largeobject, not by pg_largeobject_metadata where its row
			 * lives (getObjectDescription() and friends know no other).
			 */
			return LargeObjectRelationId;
		default:
			/* databases, tablespaces, parameters: shared objects */
			return InvalidOid;
	}
}

static Jsonb *
DdlnGrantDetails(InternalGrant *istmt)
{
	DdlnJsonbState st = DDLN_JSONB_STATE_INIT;
	ListCell   *lc;

	DdlnJsonToken(&st, WJB_BEGIN_OBJECT);
	DdlnJsonKey(&st, "grant");
	DdlnJsonBool(&st, istmt->is_grant);
	DdlnJsonKey(&st, "all_privileges");
	DdlnJsonBool(&st, istmt->all_privs);
	DdlnJsonKey(&st, "privileges");
	DdlnJsonToken(&st, WJB_BEGIN_ARRAY);
	if (!istmt->all_privs)
	{
		static const struct
		{
			AclMode		bit;
			const char *name;
		}			privs[] = {
			{ACL_SELECT, "SELECT"}, {ACL_INSERT, "INSERT"}, {ACL_UPDATE, "UPDATE"},
			{ACL_DELETE, "DELETE"}, {ACL_TRUNCATE, "TRUNCATE"},
			{ACL_REFERENCES, "REFERENCES"}, {ACL_TRIGGER, "TRIGGER"},
			{ACL_EXECUTE, "EXECUTE"}, {ACL_USAGE, "USAGE"}, {ACL_CREATE, "CREATE"},
			{ACL_CREATE_TEMP, "TEMPORARY"}, {ACL_CONNECT, "CONNECT"},
		};

		for (int i = 0; i < (int) lengthof(privs); i++)
		{
			if (istmt->privileges & privs[i].bit)
				DdlnJsonString(&st, privs[i].name);
		}
	}
	foreach(lc, istmt->col_privs)
	{
		AccessPriv *ap = (AccessPriv *) lfirst(lc);

		if (ap->priv_name)
			DdlnJsonString(&st, asc_toupper(ap->priv_name, strlen(ap->priv_name)));
	}
	DdlnJsonToken(&st, WJB_END_ARRAY);
	DdlnJsonKey(&st, "grantees");
	DdlnJsonToken(&st, WJB_BEGIN_ARRAY);
	foreach(lc, istmt->grantees)
	{
		Oid			grantee = lfirst_oid(lc);

		DdlnJsonString(&st, grantee == ACL_ID_PUBLIC ? "PUBLIC" :
					   GetUserNameFromId(grantee, true));
	}
	DdlnJsonToken(&st, WJB_END_ARRAY);
	DdlnJsonKey(&st, "grant_option");
	DdlnJsonBool(&st, istmt->grant_option);
	DdlnJsonKey(&st, "columns");
	DdlnJsonBool(&st, istmt->col_privs != NIL);
	if (istmt->col_privs != NIL)
	{
		/* GRANT UPDATE (c, d) ...: privilege and columns, as written */
		DdlnJsonKey(&st, "column_privileges");
		DdlnJsonToken(&st, WJB_BEGIN_ARRAY);
		foreach(lc, istmt->col_privs)
		{
			AccessPriv *ap = (AccessPriv *) lfirst(lc);
			ListCell   *lc2;

			DdlnJsonToken(&st, WJB_BEGIN_OBJECT);
			DdlnJsonKey(&st, "privilege");
			DdlnJsonString(&st, ap->priv_name ? asc_toupper(ap->priv_name, strlen(ap->priv_name)) : "ALL");
			DdlnJsonKey(&st, "columns");
			DdlnJsonToken(&st, WJB_BEGIN_ARRAY);
			foreach(lc2, ap->cols)
				DdlnJsonString(&st, strVal(lfirst(lc2)));
			DdlnJsonToken(&st, WJB_END_ARRAY);
			DdlnJsonToken(&st, WJB_END_OBJECT);
		}
		DdlnJsonToken(&st, WJB_END_ARRAY);
	}
	return DdlnJsonbFinish(&st);
}

static void
DdlnRecordGrant(DdlnCaptureCall *call, const char *tag, CollectedCommand *cmd,
				const char *object_type)
{
	InternalGrant *istmt = cmd->d.grant.istmt;
	Oid			classid = DdlnGrantClassId(istmt->objtype);
	Jsonb	   *details = DdlnGrantDetails(istmt);
	ListCell   *lc;

	if (!OidIsValid(classid))
	{
		DdlnEventRow row = {0};

		row.trigger_event = "ddl_command_end";
		row.command_tag = tag;
		row.object_type = object_type;
		row.in_extension = cmd->in_extension;
		row.details = details;
		DdlnInsertEvent(call, &row);
		return;
	}

	foreach(lc, istmt->objects)
	{
		ObjectAddress addr;
		DdlnEventRow row = {0};
		Oid			nspid;

		ObjectAddressSet(addr, classid, lfirst_oid(lc));
		row.trigger_event = "ddl_command_end";
		row.command_tag = tag;
		row.object_type = getObjectTypeDescription(&addr, true);
		row.object_identity = getObjectIdentity(&addr, true);
		/* a large object has no schema (nor an entry get_object_namespace knows) */
		nspid = is_objectclass_supported(addr.classId) ? get_object_namespace(&addr) : InvalidOid;
		row.schema_name = OidIsValid(nspid) ? get_namespace_name_or_temp(nspid) : NULL;
		row.classid = addr.classId;
		row.objid = addr.objectId;
		row.objsubid = 0;
		row.has_address = true;
		row.in_extension = cmd->in_extension;
		row.details = details;

		if (DdlnIsOwnObject(row.object_type, row.schema_name, row.object_identity))
			continue;
		if (!ddln_capture_temp && DdlnIsTempSchema(row.schema_name))
			continue;
		DdlnInsertEvent(call, &row);
	}
}


/* The command tag of an event trigger call; refuse any other kind of call. */
static const char *
DdlnEventTriggerTag(FunctionCallInfo fcinfo, const char *fname)
{
	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_EVENT_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("function \"%s\" must be called as an event trigger", fname)));
	return GetCommandTagName(((EventTriggerData *) fcinfo->context)->tag);
}

/*
 * The rows of one of the event trigger functions, as it returned them (a
 * tuplestore, which spills to a file beyond work_mem), read one at a time:
 * a DROP SCHEMA of thousands of tables never has them all deformed in
 * memory at once.
 */
typedef struct DdlnObjects
{
	MemoryContext cxt;			/* where the rows are read */
	ExprContext *econtext;
	Tuplestorestate *store;		/* NULL: no rows */
	TupleTableSlot *slot;
	Datum	   *values;			/* the current row */
	bool	   *nulls;
} DdlnObjects;

/*
 * Call pg_event_trigger_ddl_commands() or pg_event_trigger_dropped_objects()
 * directly, as the executor calls a set-returning function in a FROM clause,
 * and keep its rows: no SQL, no planning, no executor start-up per DDL.
 */
static void
DdlnOpenObjects(Oid fnoid, DdlnObjects *objs)
{
	FmgrInfo	flinfo;
	ReturnSetInfo rsinfo;

	LOCAL_FCINFO(fcinfo, 0);

	memset(objs, 0, sizeof(*objs));
	objs->cxt = CurrentMemoryContext;
	objs->econtext = CreateStandaloneExprContext();
	fmgr_info(fnoid, &flinfo);
	memset(&rsinfo, 0, sizeof(rsinfo));
	rsinfo.type = T_ReturnSetInfo;
	rsinfo.econtext = objs->econtext;
	rsinfo.allowedModes = (int) SFRM_Materialize;
	rsinfo.returnMode = SFRM_Materialize;
	InitFunctionCallInfoData(*fcinfo, &flinfo, 0, InvalidOid, NULL, (Node *) &rsinfo);
	(void) FunctionCallInvoke(fcinfo);

	if (rsinfo.setResult == NULL)
		return;
	objs->store = rsinfo.setResult;
	objs->slot = MakeSingleTupleTableSlot(rsinfo.setDesc, &TTSOpsMinimalTuple);
}

/* The next row, in objs->values and objs->nulls; false after the last. */
static bool
DdlnNextObject(DdlnObjects *objs)
{
	MemoryContext old;
	bool		found;

	if (objs->store == NULL)
		return false;
	/*
	 * In the objects' context: a row the tuplestore reads back from its file
	 * is allocated here and freed by the slot at the next row, whatever
	 * context the caller resets between rows.
	 */
	old = MemoryContextSwitchTo(objs->cxt);
	found = tuplestore_gettupleslot(objs->store, true, false, objs->slot);
	if (found)
		slot_getallattrs(objs->slot);
	MemoryContextSwitchTo(old);
	if (!found)
		return false;
	objs->values = objs->slot->tts_values;
	objs->nulls = objs->slot->tts_isnull;
	return true;
}

/* Back to before the first row. */
static void
DdlnRewindObjects(DdlnObjects *objs)
{
	if (objs->store)
		tuplestore_rescan(objs->store);
}

static void
DdlnCloseObjects(DdlnObjects *objs)
{
	if (objs->store)
	{
		ExecDropSingleTupleTableSlot(objs->slot);
		tuplestore_end(objs->store);
	}
	FreeExprContext(objs->econtext, true);
}

/* Column "col" (0-based) of the current row, as a C string, NULL for NULL. */
static const char *
DdlnObjText(DdlnObjects *objs, int col)
{
	return objs->nulls[col] ? NULL : TextDatumGetCString(objs->values[col]);
}

/* Is column "col" of the current row the text "s"?  (Nothing allocated.) */
static bool
DdlnObjTextIs(DdlnObjects *objs, int col, const char *s)
{
	text	   *t;

	if (objs->nulls[col])
		return false;
	t = DatumGetTextPP(objs->values[col]);
	return VARSIZE_ANY_EXHDR(t) == strlen(s) && memcmp(VARDATA_ANY(t), s, strlen(s)) == 0;
}

/*
 * Is one of the rows the extension ddl_notify itself?  Then the statement is
 * CREATE/ALTER/DROP EXTENSION ddl_notify and none of its rows is recorded:
 * the others are the extension's own objects.  Leaves the rows rewound.
 */
static bool
DdlnAboutThisExtension(DdlnObjects *objs, int typecol, int identcol)
{
	bool		found = false;

	while (!found && DdlnNextObject(objs))
		found = DdlnObjTextIs(objs, typecol, "extension") &&
			DdlnObjTextIs(objs, identcol, DDLN_EXTENSION_NAME);
	DdlnRewindObjects(objs);
	return found;
}

/*
 * A trigger, policy or rule has no schema of its own: the schema of its
 * table ("pg_temp" for a temporary one), read from the catalog by OID.
 */
static const char *
DdlnParentSchema(Oid classid, Oid objid)
{
	Oid			indexid;
	AttrNumber	oidatt;
	AttrNumber	relatt;
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	Oid			relid = InvalidOid;

	if (classid == TriggerRelationId)
	{
		indexid = TriggerOidIndexId;
		oidatt = Anum_pg_trigger_oid;
		relatt = Anum_pg_trigger_tgrelid;
	}
	else if (classid == PolicyRelationId)
	{
		indexid = PolicyOidIndexId;
		oidatt = Anum_pg_policy_oid;
		relatt = Anum_pg_policy_polrelid;
	}
	else if (classid == RewriteRelationId)
	{
		indexid = RewriteOidIndexId;
		oidatt = Anum_pg_rewrite_oid;
		relatt = Anum_pg_rewrite_ev_class;
	}
	else
		return NULL;

	rel = table_open(classid, AccessShareLock);
	ScanKeyInit(&key, oidatt, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(objid));
	scan = systable_beginscan(rel, indexid, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
	{
		bool		isnull;
		Datum		d = heap_getattr(tup, relatt, RelationGetDescr(rel), &isnull);

		if (!isnull)
			relid = DatumGetObjectId(d);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);

	if (!OidIsValid(relid))
		return NULL;
	if (get_rel_persistence(relid) == RELPERSISTENCE_TEMP)
		return "pg_temp";
	return get_namespace_name(get_rel_namespace(relid));
}

/* A text[] as a JSON array, NULL as JSON null. */
static void
DdlnJsonTextArray(DdlnJsonbState *st, bool isnull, Datum arr)
{
	Datum	   *elems;
	bool	   *enulls;
	int			n;

	if (isnull)
	{
		DdlnJsonString(st, NULL);
		return;
	}
	deconstruct_array(DatumGetArrayTypeP(arr), TEXTOID, -1, false, TYPALIGN_INT,
					  &elems, &enulls, &n);
	DdlnJsonToken(st, WJB_BEGIN_ARRAY);
	for (int i = 0; i < n; i++)
		DdlnJsonString(st, enulls[i] ? NULL : TextDatumGetCString(elems[i]));
	DdlnJsonToken(st, WJB_END_ARRAY);
}

/*
 * ddl_command_start: records no event; opens the statement's outbox frame
 * (outbox.c: a CREATE TABLE AS writes its outbox row now) and reads the
 * "before" image of the relation an ALTER, RENAME, SET SCHEMA or CREATE OR
 * REPLACE VIEW will change (imgcommand.c), for ddl_command_end.
 */
Datum
ddl_notify_capture_ddl_command_start(PG_FUNCTION_ARGS)
{
	(void) DdlnEventTriggerTag(fcinfo, "capture_ddl_command_start");
	DdlnStatementKeyStart(((EventTriggerData *) fcinfo->context)->parsetree);
	DdlnOutboxStatementStart(((EventTriggerData *) fcinfo->context)->parsetree);
	DdlnImageCommandStart(((EventTriggerData *) fcinfo->context)->parsetree);
	PG_RETURN_VOID();
}

/*
 * ddl_command_end: one row per command of pg_event_trigger_ddl_commands(),
 * GRANT expanded per object, ALTER TABLE with its subcommands.
 */
Datum
ddl_notify_capture_ddl_command_end(PG_FUNCTION_ARGS)
{
	const char *tag = DdlnEventTriggerTag(fcinfo, "capture_ddl_command_end");
	DdlnCaptureCall call;
	DdlnObjects objs;

	/*
	 * DROP collects no command (PostgreSQL marks it collected without
	 * stashing one): its objects come through sql_drop.  Asking would cost
	 * as much as a command, for an empty answer.
	 */
	if (IsA(((EventTriggerData *) fcinfo->context)->parsetree, DropStmt))
	{
		DdlnOutboxStatementEnd(tag);
		DdlnStatementKeyEnd();
		PG_RETURN_VOID();
	}

	DdlnBeginCapture(&call);
	/* the catalog rows the command just wrote must be visible to us */
	CommandCounterIncrement();
	DdlnOpenObjects(F_PG_EVENT_TRIGGER_DDL_COMMANDS, &objs);
	if (!DdlnAboutThisExtension(&objs, 4, 6))
	{
		/*
		 * Columns: classid, objid, objsubid, command_tag, object_type,
		 * schema_name, object_identity, in_extension, command
		 */
		while (DdlnNextObject(&objs))
		{
			Datum	   *v = objs.values;
			bool	   *isnull = objs.nulls;
			DdlnEventRow row = {0};
			CollectedCommand *cmd;

			row.trigger_event = "ddl_command_end";
			row.command_tag = DdlnObjText(&objs, 3);
			if (row.command_tag == NULL)
				row.command_tag = tag;
			row.object_type = DdlnObjText(&objs, 4);
			row.schema_name = DdlnObjText(&objs, 5);
			row.object_identity = DdlnObjText(&objs, 6);
			row.in_extension = !isnull[7] && DatumGetBool(v[7]);
			if (!isnull[0])
			{
				row.has_address = true;
				row.classid = DatumGetObjectId(v[0]);
				row.objid = DatumGetObjectId(v[1]);
				row.objsubid = DatumGetInt32(v[2]);
				if (row.schema_name == NULL)
					row.schema_name = DdlnParentSchema(row.classid, row.objid);
			}
			cmd = isnull[8] ? NULL : (CollectedCommand *) DatumGetPointer(v[8]);

			if (cmd && cmd->type == SCT_Grant)
			{
				DdlnRecordGrant(&call, row.command_tag, cmd, row.object_type);
				continue;
			}

			if (DdlnIsOwnObject(row.object_type, row.schema_name, row.object_identity))
				continue;
			if (!ddln_capture_temp && DdlnIsTempSchema(row.schema_name))
				continue;

			if (cmd && cmd->type == SCT_AlterTable)
				row.details = DdlnAlterTableDetails(cmd);
			/* "before", "after" and "changes" of a relation (imgcommand.c) */
			if (ddln_capture_changes && row.has_address)
				row.details = DdlnImageForRow(row.classid, row.objid, row.objsubid,
											  row.command_tag,
											  DdlnWithStatement(&call, row.details));

			DdlnInsertEvent(&call, &row);
		}
	}

	DdlnCloseObjects(&objs);
	DdlnImageForgetBefore();
	DdlnEndCapture(&call);
	DdlnOutboxStatementEnd(tag);
	DdlnStatementKeyEnd();
	PG_RETURN_VOID();
}

/*
 * The schema of a dropped trigger, policy or rule, for which
 * pg_event_trigger_dropped_objects() gives none: its table's, the first of
 * the row's address_names (column 10).  NULL for any other kind of object,
 * or when address_names is null or empty.
 */
static char *
DdlnDroppedTableSchema(DdlnObjects *objs, const char *object_type)
{
	ArrayType  *names;
	Datum	   *elems;
	bool	   *enulls;
	int			nelems;

	/* a trigger, policy or rule lives in its table's schema */
	if (!(object_type && !objs->nulls[10] &&
		  (strcmp(object_type, "trigger") == 0 ||
		   strcmp(object_type, "policy") == 0 ||
		   strcmp(object_type, "rule") == 0)))
		return NULL;
	names = DatumGetArrayTypeP(objs->values[10]);
	if (ArrayGetNItems(ARR_NDIM(names), ARR_DIMS(names)) <= 0)
		return NULL;
	deconstruct_array(names, TEXTOID, -1, false, TYPALIGN_INT,
					  &elems, &enulls, &nelems);
	return enulls[0] ? NULL : TextDatumGetCString(elems[0]);
}

/*
 * The event row of the current row of pg_event_trigger_dropped_objects(),
 * without its details, in "row" (zeroed by the caller).
 *
 * Columns: classid, objid, objsubid, original, normal, is_temporary,
 * object_type, schema_name, object_name, object_identity, address_names,
 * address_args
 */
static void
DdlnDroppedRow(DdlnObjects *objs, const char *tag, DdlnEventRow *row)
{
	Datum	   *v = objs->values;

	row->trigger_event = "sql_drop";
	row->command_tag = tag;
	row->object_type = DdlnObjText(objs, 6);
	row->schema_name = DdlnObjText(objs, 7);
	row->object_identity = DdlnObjText(objs, 9);
	row->has_address = true;
	row->classid = DatumGetObjectId(v[0]);
	row->objid = DatumGetObjectId(v[1]);
	row->objsubid = DatumGetInt32(v[2]);
	if (row->schema_name == NULL)
		row->schema_name = DdlnDroppedTableSchema(objs, row->object_type);
}

/*
 * Is this dropped object one capture never records: the extension's own, a
 * temporary one (unless ddl_notify.capture_temp), a view's _RETURN rule, or
 * an internal companion nobody names (row and array types, TOAST tables,
 * a foreign key's system triggers)?  original, normal and is_temp are the
 * row's columns of those names.
 */
static bool
DdlnDropIgnored(const DdlnEventRow *row, bool original, bool normal,
				bool is_temp)
{
	if (DdlnIsOwnObject(row->object_type, row->schema_name, row->object_identity))
		return true;
	if (!ddln_capture_temp && (is_temp || DdlnIsTempSchema(row->schema_name)))
		return true;

	/* a view's rule, whatever dependency path reached it */
	if (row->object_type && strcmp(row->object_type, "rule") == 0 && row->object_identity &&
		strncmp(row->object_identity, "\"_RETURN\" on ", 13) == 0)
		return true;

	/* internal companions nobody names */
	if (!original && !normal && row->object_type != NULL)
	{
		if (strcmp(row->object_type, "type") == 0 ||
			strcmp(row->object_type, "toast table") == 0)
			return true;
		if (row->schema_name && strcmp(row->schema_name, "pg_toast") == 0)
			return true;
		/* the system triggers that implement a foreign key */
		if (strcmp(row->object_type, "trigger") == 0 && row->object_identity &&
			strncmp(row->object_identity, "\"RI_ConstraintTrigger_", 22) == 0)
			return true;
	}
	return false;
}

/*
 * A dropped object's details: {"original", "cascaded", "address_names",
 * "address_args"} from the current row of pg_event_trigger_dropped_objects()
 * ("cascaded" is its "normal").
 */
static Jsonb *
DdlnDropDetails(DdlnObjects *objs, bool original, bool normal)
{
	DdlnJsonbState st = DDLN_JSONB_STATE_INIT;

	DdlnJsonToken(&st, WJB_BEGIN_OBJECT);
	DdlnJsonKey(&st, "original");
	DdlnJsonBool(&st, original);
	DdlnJsonKey(&st, "cascaded");
	DdlnJsonBool(&st, normal);
	DdlnJsonKey(&st, "address_names");
	DdlnJsonTextArray(&st, objs->nulls[10], objs->values[10]);
	DdlnJsonKey(&st, "address_args");
	DdlnJsonTextArray(&st, objs->nulls[11], objs->values[11]);
	return DdlnJsonbFinish(&st);
}

/*
 * sql_drop: every dropped object the user named or CASCADE took, with its
 * identity (pg_event_trigger_ddl_commands() shows nothing for DROP).
 */
Datum
ddl_notify_capture_sql_drop(PG_FUNCTION_ARGS)
{
	const char *tag = DdlnEventTriggerTag(fcinfo, "capture_sql_drop");
	DdlnCaptureCall call;
	DdlnObjects objs;
	bool		about_this;
	MemoryContext cxt = CurrentMemoryContext;
	MemoryContext rowcxt;

	DdlnBeginCapture(&call);
	DdlnOpenObjects(F_PG_EVENT_TRIGGER_DROPPED_OBJECTS, &objs);
	about_this = DdlnAboutThisExtension(&objs, 6, 9);

	/*
	 * One row at a time, each in a memory context reset after it: a DROP
	 * SCHEMA of thousands of tables needs no more memory of ours than one
	 * row's (ddl_notify.event's descriptor and indexes, opened at the
	 * first row, live in the call's context).
	 */
	rowcxt = AllocSetContextCreate(CurrentMemoryContext, "ddl_notify sql_drop row",
								   ALLOCSET_DEFAULT_SIZES);

	/* Columns: see DdlnDroppedRow */
	while (!about_this && DdlnNextObject(&objs))
	{
		DdlnEventRow row = {0};
		bool		original = DatumGetBool(objs.values[3]);
		bool		normal = DatumGetBool(objs.values[4]);
		bool		is_temp = DatumGetBool(objs.values[5]);

		MemoryContextReset(rowcxt);
		MemoryContextSwitchTo(rowcxt);
		DdlnDroppedRow(&objs, tag, &row);
		if (DdlnDropIgnored(&row, original, normal, is_temp))
			continue;

		row.details = DdlnWithStatement(&call, DdlnDropDetails(&objs, original, normal));
		/* the pre-image of a dropped relation (imgdrop.c) */
		if (ddln_capture_changes && row.classid == RelationRelationId && row.objsubid == 0)
			row.details = DdlnDetailsWith(row.details, DdlnImageTakeDropped(row.objid));

		DdlnInsertEvent(&call, &row);
	}

	MemoryContextSwitchTo(cxt);
	MemoryContextDelete(rowcxt);
	DdlnCloseObjects(&objs);
	DdlnImageForgetDropped();
	DdlnEndCapture(&call);
	PG_RETURN_VOID();
}

/*
 * table_rewrite: the table and why PostgreSQL rewrites it.
 */
Datum
ddl_notify_capture_table_rewrite(PG_FUNCTION_ARGS)
{
	const char *tag = DdlnEventTriggerTag(fcinfo, "capture_table_rewrite");
	DdlnCaptureCall call;
	DdlnEventRow row = {0};
	ObjectAddress addr;
	Oid			relid;
	int			reason;
	DdlnJsonbState st = DDLN_JSONB_STATE_INIT;

	relid = DatumGetObjectId(DirectFunctionCall1(pg_event_trigger_table_rewrite_oid,
												 (Datum) 0));
	reason = DatumGetInt32(DirectFunctionCall1(pg_event_trigger_table_rewrite_reason,
											   (Datum) 0));

	ObjectAddressSet(addr, RelationRelationId, relid);
	row.trigger_event = "table_rewrite";
	row.command_tag = tag;
	row.object_type = getObjectTypeDescription(&addr, true);
	row.object_identity = getObjectIdentity(&addr, true);
	row.schema_name = get_namespace_name_or_temp(get_rel_namespace(relid));
	row.has_address = true;
	row.classid = RelationRelationId;
	row.objid = relid;
	row.objsubid = 0;

	if (DdlnIsOwnObject(row.object_type, row.schema_name, row.object_identity))
		PG_RETURN_VOID();
	if (!ddln_capture_temp && get_rel_persistence(relid) == RELPERSISTENCE_TEMP)
		PG_RETURN_VOID();

	DdlnJsonToken(&st, WJB_BEGIN_OBJECT);
	DdlnJsonKey(&st, "rewrite_reason");
	DdlnJsonInt(&st, reason);
	DdlnJsonKey(&st, "reasons");
	DdlnJsonToken(&st, WJB_BEGIN_ARRAY);
	{
		static const struct
		{
			int			bit;
			const char *name;
		}			reasons[] = {
			{AT_REWRITE_ALTER_PERSISTENCE, "persistence"},
			{AT_REWRITE_DEFAULT_VAL, "default value"},
			{AT_REWRITE_COLUMN_REWRITE, "column rewrite"},
#ifdef AT_REWRITE_ACCESS_METHOD
			{AT_REWRITE_ACCESS_METHOD, "access method"},
#endif
		};

		for (int i = 0; i < (int) lengthof(reasons); i++)
		{
			if (reason & reasons[i].bit)
				DdlnJsonString(&st, reasons[i].name);
		}
	}
	DdlnJsonToken(&st, WJB_END_ARRAY);
	row.details = DdlnJsonbFinish(&st);

	DdlnBeginCapture(&call);
	DdlnInsertEvent(&call, &row);
	DdlnEndCapture(&call);
	PG_RETURN_VOID();
}
