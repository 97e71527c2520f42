/*-------------------------------------------------------------------------
 *
 * walmsg.c
 *	  DDL in the WAL: each recorded event also becomes a transactional
 *	  logical decoding message, for change-data-capture consumers (G15).
 *
 * With ddl_notify.wal_messages on, capture.c hands every event row it has
 * just inserted to DdlnWalMessage(), which writes it to the WAL with
 * LogLogicalMessage(prefix "ddl_notify", transactional).  Any logical
 * decoding consumer (pgoutput with messages 'true', test_decoding,
 * wal2json, Debezium) then sees the DDL in its transaction's stream, between
 * the row changes made before and after the statement.
 *
 * Rules kept here:
 * - Called by capture only, right after the event row's heap insert, in the
 *	 DDL's own (sub)transaction.  The message is transactional: it is decoded
 *	 only if that (sub)transaction commits, so a rolled-back DDL or savepoint
 *	 leaves nothing in the stream, as it leaves no event row (G1).  A
 *	 prepared transaction's messages are decoded with it: at PREPARE by a
 *	 two-phase slot (followed by COMMIT/ROLLBACK PREPARED), else at COMMIT
 *	 PREPARED.
 * - The caller tests ddl_notify.wal_messages: off costs one boolean test.
 *	 Below wal_level = logical nothing could decode a message, so none is
 *	 written (the setting is documented as needing logical).
 * - The content is one JSON object: "v" (the format version, set by
 *	 ddl_notify.wal_message_version) and every column of the row as it was
 *	 inserted, keyed and spelled as to_jsonb() of the ddl_notify.event row
 *	 spells it (so a column added to the table appears without a change
 *	 here).  Version 2 (the default) is nothing more: the shape of a
 *	 relation before and after the command, and the changes between them,
 *	 are in the row's details, where capture put them.  Version 1, kept for
 *	 the consumers written for it, is 0.1.0's message: the details without
 *	 those images and "statement" (null if nothing else is left), and for
 *	 DDL on an ordinary or partitioned table (CREATE TABLE [AS], SELECT INTO, ALTER
 *	 TABLE, a table rewrite) "table": its columns after the command and its
 *	 replica identity, read from the catalogs as the DDL left them.  A change to
 *	 the format that a consumer could trip on makes a new version; the old
 *	 one stays available through the setting.
 * - It runs no SQL and takes no lock on the user's table.  Version 2 reads
 *	 no catalog at all; version 1 reads the pg_class cache, and for table
 *	 DDL one index scan each of pg_attribute and pg_index.  The text is
 *	 built once per event with StringInfo, strings copied as they are
 *	 unless escape_json is needed.
 *
 * Floor: engine (capture's helper): called by capture.c only; calls no other
 * file of ddl_notify.
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tupdesc.h"
#include "access/transam.h"
#include "access/xlog.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "replication/message.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/fmgroids.h"
#include "utils/fmgrprotos.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/xid8.h"

#include "common.h"

/*
 * A JSON string of len bytes: copied as it is when nothing in it needs an
 * escape (identifiers, command tags, most statements), else escape_json.
 */
static void
DdlnWalString(StringInfo buf, const char *s, int len)
{
	for (int i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) s[i];

		if (c < 0x20 || c == '"' || c == '\\')
		{
			char	   *copy = pnstrdup(s, len);

			escape_json(buf, copy);
			pfree(copy);
			return;
		}
	}
	enlargeStringInfo(buf, len + 2);
	appendStringInfoChar(buf, '"');
	appendBinaryStringInfo(buf, s, len);
	appendStringInfoChar(buf, '"');
}

/*
 * An integer, oid or xid8 value (typid one of INT2OID, INT4OID, INT8OID,
 * OIDOID, XID8OID), as to_jsonb() of the row would spell it: the integers
 * as numbers, oid and xid8 as strings.
 */
static void
DdlnWalNumber(StringInfo buf, Oid typid, Datum value)
{
	char		num[MAXINT8LEN + 3];
	int			len;

	switch (typid)
	{
		case INT2OID:
			len = pg_ltoa(DatumGetInt16(value), num);
			appendBinaryStringInfo(buf, num, len);
			break;
		case INT4OID:
			len = pg_ltoa(DatumGetInt32(value), num);
			appendBinaryStringInfo(buf, num, len);
			break;
		case INT8OID:
			len = pg_lltoa(DatumGetInt64(value), num);
			appendBinaryStringInfo(buf, num, len);
			break;
		case OIDOID:
			/* to_jsonb() spells oid and xid8 as strings */
			num[0] = '"';
			len = pg_ultoa_n(DatumGetObjectId(value), num + 1);
			num[len + 1] = '"';
			appendBinaryStringInfo(buf, num, len + 2);
			break;
		case XID8OID:
			num[0] = '"';
			len = pg_ulltoa_n(U64FromFullTransactionId(DatumGetFullTransactionId(value)), num + 1);
			num[len + 1] = '"';
			appendBinaryStringInfo(buf, num, len + 2);
			break;
	}
}

/*
 * A value of a type DdlnWalValue does not spell itself: an array as
 * array_to_json() makes it, anything else its text (the type's output
 * function), as a string.
 */
static void
DdlnWalOther(StringInfo buf, Oid typid, Datum value)
{
	if (OidIsValid(get_element_type(typid)))
		appendStringInfoString(buf,
							   TextDatumGetCString(DirectFunctionCall1(array_to_json, value)));
	else
	{
		Oid			out;
		bool		varlena;

		/* anything else: its text, as a string */
		getTypeOutputInfo(typid, &out, &varlena);
		escape_json(buf, OidOutputFunctionCall(out, value));
	}
}

/* One column's value, as to_jsonb() of the row would spell it. */
static void
DdlnWalValue(StringInfo buf, Oid typid, Datum value)
{
	switch (typid)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case OIDOID:
		case XID8OID:
			DdlnWalNumber(buf, typid, value);
			break;
		case BOOLOID:
			appendStringInfoString(buf, DatumGetBool(value) ? "true" : "false");
			break;
		case TEXTOID:
		case VARCHAROID:
			{
				text	   *t = DatumGetTextPP(value);

				DdlnWalString(buf, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
			}
			break;
		case NAMEOID:
			{
				const char *n = NameStr(*DatumGetName(value));

				DdlnWalString(buf, n, strlen(n));
			}
			break;
		case JSONBOID:
			{
				Jsonb	   *jb = DatumGetJsonbP(value);

				(void) JsonbToCString(buf, &jb->root, VARSIZE(jb));
			}
			break;
		case JSONOID:
			appendStringInfoString(buf, TextDatumGetCString(value));
			break;
		case TIMESTAMPTZOID:
		case TIMESTAMPOID:
		case DATEOID:
			{
				char		tbuf[MAXDATELEN + 1];

				appendStringInfoChar(buf, '"');
				appendStringInfoString(buf, JsonEncodeDateTime(tbuf, value, typid, NULL));
				appendStringInfoChar(buf, '"');
			}
			break;
		default:
			DdlnWalOther(buf, typid, value);
			break;
	}
}

/*
 * Version 1's details: the row's, without the relation images ("before",
 * "after", "changes") and the "statement" key, which version 1 never had;
 * null if nothing else is left, as 0.1.0 wrote it.
 */
static void
DdlnWalDetailsV1(StringInfo buf, Datum details)
{
	static const char *const images[] = {"before", "after", "changes", "statement"};
	Datum		d = details;
	bool		had = false;
	Jsonb	   *jb;

	if (JB_ROOT_IS_OBJECT(DatumGetJsonbP(d)))
	{
		for (size_t k = 0; k < lengthof(images); k++)
		{
			Datum		key = CStringGetTextDatum(images[k]);

			if (DatumGetBool(DirectFunctionCall2(jsonb_exists, d, key)))
			{
				d = DirectFunctionCall2(jsonb_delete, d, key);
				had = true;
			}
		}
	}
	jb = DatumGetJsonbP(d);
	if (had && JB_ROOT_COUNT(jb) == 0)
		appendStringInfoString(buf, "null");
	else
		(void) JsonbToCString(buf, &jb->root, VARSIZE(jb));
}

/* Is column col of the row the text s? */
static bool
DdlnWalTextIs(const Datum *values, const bool *nulls, int col, const char *s)
{
	text	   *t;
	size_t		len = strlen(s);

	if (nulls[col])
		return false;
	t = DatumGetTextPP(values[col]);
	return VARSIZE_ANY_EXHDR(t) == len && memcmp(VARDATA_ANY(t), s, len) == 0;
}

/*
 * Is this event DDL on a table whose shape a consumer needs: the command
 * that created, altered, renamed or moved it, or its rewrite?
 */
static bool
DdlnWalIsTableDdl(const Datum *values, const bool *nulls)
{
	if (nulls[DDLN_EV_CLASSID] ||
		DatumGetObjectId(values[DDLN_EV_CLASSID]) != RelationRelationId)
		return false;
	if (DdlnWalTextIs(values, nulls, DDLN_EV_TRIGGER_EVENT, "table_rewrite"))
		return true;
	if (!DdlnWalTextIs(values, nulls, DDLN_EV_TRIGGER_EVENT, "ddl_command_end"))
		return false;
	return DdlnWalTextIs(values, nulls, DDLN_EV_COMMAND_TAG, "CREATE TABLE") ||
		DdlnWalTextIs(values, nulls, DDLN_EV_COMMAND_TAG, "CREATE TABLE AS") ||
		DdlnWalTextIs(values, nulls, DDLN_EV_COMMAND_TAG, "SELECT INTO") ||
		DdlnWalTextIs(values, nulls, DDLN_EV_COMMAND_TAG, "ALTER TABLE");
}

/* The replica identity's columns: those of the index that serves it. */
static void
DdlnWalIdentityIndex(StringInfo buf, Oid relid, bool primary,
					 char **names, int natts)
{
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	bool		first = true;

	rel = table_open(IndexRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_index_indrelid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(relid));
	scan = systable_beginscan(rel, IndexIndrelidIndexId, true, NULL, 1, &key);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_index idx = (Form_pg_index) GETSTRUCT(tup);

		if (!(primary ? idx->indisprimary : idx->indisreplident))
			continue;
		for (int i = 0; i < idx->indnkeyatts; i++)
		{
			int			attnum = idx->indkey.values[i];

			if (attnum < 1 || attnum > natts || names[attnum - 1] == NULL)
				continue;
			if (!first)
				appendStringInfoChar(buf, ',');
			escape_json(buf, names[attnum - 1]);
			first = false;
		}
		break;
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
}

/*
 * ,"columns":[...]: the relation's columns numbered 1 to natts, each with its
 * name, type (null once dropped), not-null flag, position and dropped flag.
 * Returns the names of the live ones, indexed by attnum - 1 (NULL for a
 * dropped one), for DdlnWalReplicaIdentity.
 */
static char **
DdlnWalColumns(StringInfo buf, Oid relid, int natts)
{
	char	  **names;
	Relation	attrel;
	ScanKeyData keys[2];
	SysScanDesc scan;
	HeapTuple	atttup;
	bool		first = true;

	/*
	 * Its columns (attnum > 0) in one scan of pg_attribute's index, in
	 * attnum order: the DDL has just invalidated their cache entries, so
	 * lookups through the cache would each scan anyway, and build entries.
	 * The names of the live ones are kept by attnum for the identity.
	 */
	names = palloc0(sizeof(char *) * Max(natts, 1));
	appendStringInfoString(buf, ",\"columns\":[");
	attrel = table_open(AttributeRelationId, AccessShareLock);
	ScanKeyInit(&keys[0], Anum_pg_attribute_attrelid, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(relid));
	ScanKeyInit(&keys[1], Anum_pg_attribute_attnum, BTGreaterStrategyNumber,
				F_INT2GT, Int16GetDatum(0));
	scan = systable_beginscan(attrel, AttributeRelidNumIndexId, true, NULL, 2, keys);
	while (HeapTupleIsValid(atttup = systable_getnext(scan)))
	{
		Form_pg_attribute att = (Form_pg_attribute) GETSTRUCT(atttup);
		const char *attname = NameStr(att->attname);

		if (att->attnum > natts)
			continue;
		if (!first)
			appendStringInfoChar(buf, ',');
		first = false;
		appendStringInfoString(buf, "{\"name\":");
		DdlnWalString(buf, attname, strlen(attname));
		appendStringInfoString(buf, ",\"type\":");
		if (att->attisdropped || !OidIsValid(att->atttypid))
			appendStringInfoString(buf, "null");
		else
		{
			escape_json(buf, format_type_with_typemod(att->atttypid, att->atttypmod));
			names[att->attnum - 1] = pstrdup(attname);
		}
		appendStringInfo(buf, ",\"not_null\":%s,\"position\":%d,\"dropped\":%s}",
						 att->attnotnull ? "true" : "false", att->attnum,
						 att->attisdropped ? "true" : "false");
	}
	systable_endscan(scan);
	table_close(attrel, AccessShareLock);
	appendStringInfoString(buf, "]");
	return names;
}

/*
 * ,"replica_identity":...,"identity_columns":[...]: the relation's replica
 * identity setting (ident, its relreplident) spelled as a word, and the
 * columns it names; names and natts are what DdlnWalColumns returned.
 */
static void
DdlnWalReplicaIdentity(StringInfo buf, Oid relid, char ident,
					   char **names, int natts)
{
	appendStringInfoString(buf, ",\"replica_identity\":");
	switch (ident)
	{
		case REPLICA_IDENTITY_DEFAULT:
			appendStringInfoString(buf, "\"default\"");
			break;
		case REPLICA_IDENTITY_NOTHING:
			appendStringInfoString(buf, "\"nothing\"");
			break;
		case REPLICA_IDENTITY_FULL:
			appendStringInfoString(buf, "\"full\"");
			break;
		case REPLICA_IDENTITY_INDEX:
			appendStringInfoString(buf, "\"index\"");
			break;
		default:
			appendStringInfoString(buf, "null");
			break;
	}

	/*
	 * The columns that identify a row in the old-row image of an UPDATE or
	 * DELETE: the primary key's (default), the chosen index's, every live
	 * column (full), none (nothing, or default without a primary key).
	 */
	appendStringInfoString(buf, ",\"identity_columns\":[");
	if (ident == REPLICA_IDENTITY_FULL)
	{
		bool		first = true;

		for (int i = 0; i < natts; i++)
		{
			if (names[i] == NULL)
				continue;
			if (!first)
				appendStringInfoChar(buf, ',');
			escape_json(buf, names[i]);
			first = false;
		}
	}
	else if (ident == REPLICA_IDENTITY_DEFAULT || ident == REPLICA_IDENTITY_INDEX)
		DdlnWalIdentityIndex(buf, relid, ident == REPLICA_IDENTITY_DEFAULT, names, natts);
	appendStringInfoString(buf, "]");
}

/*
 * Version 1 only: ,"table":{...}: an ordinary or partitioned table's
 * columns after the command (every attribute with a positive number,
 * dropped ones flagged) and its replica identity.  Nothing for any other
 * kind of relation.
 */
static void
DdlnWalTable(StringInfo buf, Oid relid)
{
	HeapTuple	reltup;
	Form_pg_class relform;
	char	  **names;
	int			natts;
	char		ident;

	reltup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(reltup))
		return;
	relform = (Form_pg_class) GETSTRUCT(reltup);
	if (relform->relkind != RELKIND_RELATION &&
		relform->relkind != RELKIND_PARTITIONED_TABLE)
	{
		ReleaseSysCache(reltup);
		return;
	}
	natts = relform->relnatts;
	ident = relform->relreplident;

	appendStringInfoString(buf, ",\"table\":{\"schema\":");
	escape_json(buf, get_namespace_name(relform->relnamespace));
	appendStringInfoString(buf, ",\"name\":");
	escape_json(buf, NameStr(relform->relname));
	ReleaseSysCache(reltup);

	names = DdlnWalColumns(buf, relid, natts);
	DdlnWalReplicaIdentity(buf, relid, ident, names, natts);
	appendStringInfoString(buf, "}");
}

/*
 * Write the event row just inserted (its descriptor, values and nulls, as
 * capture formed them) as a transactional logical decoding message.
 */
void
DdlnWalMessage(TupleDesc desc, const Datum *values, const bool *nulls)
{
	StringInfoData buf;

	/* below wal_level = logical nothing can decode a message */
	if (!XLogLogicalInfoActive())
		return;

	initStringInfo(&buf);
	appendStringInfo(&buf, "{\"v\":%d", ddln_wal_message_version);
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attisdropped)
			continue;
		appendStringInfoChar(&buf, ',');
		DdlnWalString(&buf, NameStr(att->attname), strlen(NameStr(att->attname)));
		appendStringInfoChar(&buf, ':');
		if (nulls[i])
			appendStringInfoString(&buf, "null");
		else if (i == DDLN_EV_DETAILS && ddln_wal_message_version == 1)
			DdlnWalDetailsV1(&buf, values[i]);
		else
			DdlnWalValue(&buf, att->atttypid, values[i]);
	}
	if (ddln_wal_message_version == 1 && DdlnWalIsTableDdl(values, nulls))
		DdlnWalTable(&buf, DatumGetObjectId(values[DDLN_EV_OBJID]));
	appendStringInfoChar(&buf, '}');

	(void) DdlnLogLogicalMessage(DDLN_WAL_MESSAGE_PREFIX, buf.data, buf.len, true);
	pfree(buf.data);
}
