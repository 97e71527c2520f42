/*-------------------------------------------------------------------------
 *
 * imagetexts.c
 *	  Which keys of the relation images (details.before, details.after,
 *	  details.changes; relimage.c and imgdiff.c write them,
 *	  docs/reference.md "The payload" describes them) hold statement texts
 *	  or expressions, and the copy of an event's details without them that
 *	  a subscriber whose owner may not read event.query receives (G10,
 *	  issue 35).
 *
 * The one list is ddln_image_keys below: every key an image, a column, a
 * constraint or index, a partition's parent or a change carries, each
 * marked as kept (names, types, kinds, flags, a sequence's numbers, storage
 * parameters), as text (withheld: a view's
 * query, a default, a generated expression, a constraint's or index's
 * definition, a partition key or bound, a foreign table's options, the
 * old and new values of the changes that carry those) or as a nested
 * object whose keys the list gives in turn.
 *
 * Rules kept here:
 * - Fail closed: inside an image or a change, a key the list does not know
 *	 (one a later relimage.c adds) is withheld as a text is, and so are the
 *	 "old" and "new" of a change whose op the list does not know, and a
 *	 scalar in an array the list says holds objects.  Only the
 *	 keys of details outside before, after and changes are copied as they
 *	 are: they are not images (subcommands, grantees, drop flags).
 * - A withheld value becomes JSON null, and details gets "texts_withheld":
 *	 true whenever it has before, after or changes, so that a consumer can
 *	 tell a withheld default from no default.
 * - Everything else is copied as it is, in the same order.
 *
 * Floor: engine: called by fetch.c only (the read of a batch, where
 * event.query is withheld for the same subscribers); calls nothing of
 * ddl_notify's.
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "common.h"
#include "engine.h"

/* Where a key stands: the object that holds it. */
typedef enum DdlnImgCtx
{
	DDLN_IMGCTX_DETAILS,		/* details itself */
	DDLN_IMGCTX_IMAGE,			/* before, after */
	DDLN_IMGCTX_COLUMN,			/* an element of an image's columns; a change's
								 * column when it is an object (add column) */
	DDLN_IMGCTX_PART,			/* an element of constraints or indexes; a
								 * change's constraint or index */
	DDLN_IMGCTX_PARENT,			/* an image's partition_of */
	DDLN_IMGCTX_OWNER,			/* a sequence image's owned_by */
	DDLN_IMGCTX_CHANGE,			/* an element of changes */
	DDLN_IMGCTX_COPY			/* copied as it is */
} DdlnImgCtx;

/* What a key's value is. */
typedef enum DdlnImgKeyKind
{
	DDLN_IMGKEY_KEEP,			/* not a text: kept */
	DDLN_IMGKEY_TEXT,			/* a statement text or expression: withheld */
	DDLN_IMGKEY_NESTED			/* an object, or array of objects, of "inner" */
} DdlnImgKeyKind;

typedef struct DdlnImgKey
{
	DdlnImgCtx	ctx;
	const char *key;
	int			keylen;			/* strlen(key) */
	const char *op;				/* DDLN_IMGCTX_CHANGE: only for this op; NULL:
								 * any op */
	DdlnImgKeyKind kind;
	DdlnImgCtx	inner;			/* DDLN_IMGKEY_NESTED: what it holds */
} DdlnImgKey;

#define KEEP(ctx, key)		{DDLN_IMGCTX_##ctx, key, sizeof(key) - 1, NULL, DDLN_IMGKEY_KEEP, DDLN_IMGCTX_COPY}
#define TEXT(ctx, key)		{DDLN_IMGCTX_##ctx, key, sizeof(key) - 1, NULL, DDLN_IMGKEY_TEXT, DDLN_IMGCTX_COPY}
#define NESTED(ctx, key, in) {DDLN_IMGCTX_##ctx, key, sizeof(key) - 1, NULL, DDLN_IMGKEY_NESTED, DDLN_IMGCTX_##in}
#define OP_KEEP(op)			{DDLN_IMGCTX_CHANGE, "old", 3, op, DDLN_IMGKEY_KEEP, DDLN_IMGCTX_COPY}, \
							{DDLN_IMGCTX_CHANGE, "new", 3, op, DDLN_IMGKEY_KEEP, DDLN_IMGCTX_COPY}

/*
 * Every key of the images and changes (docs/reference.md, "The payload").
 * Keep it whole when relimage.c writes a new key: a key missing here is
 * withheld from the subscribers above, whatever it holds.
 */
static const DdlnImgKey ddln_image_keys[] = {
	/* details: the images; its other keys are not looked at */
	NESTED(DETAILS, "before", IMAGE),
	NESTED(DETAILS, "after", IMAGE),
	NESTED(DETAILS, "changes", CHANGE),

	/* an image */
	KEEP(IMAGE, "kind"),
	KEEP(IMAGE, "name"),
	KEEP(IMAGE, "schema"),
	NESTED(IMAGE, "columns", COLUMN),
	NESTED(IMAGE, "indexes", PART),
	NESTED(IMAGE, "constraints", PART),
	KEEP(IMAGE, "replica_identity"),
	KEEP(IMAGE, "replica_identity_index"),
	TEXT(IMAGE, "definition"),	/* a view's or materialized view's query */
	TEXT(IMAGE, "partition_key"),
	NESTED(IMAGE, "partition_of", PARENT),
	NESTED(IMAGE, "inherits", PARENT),	/* INHERITS parents: names */
	NESTED(IMAGE, "of_type", PARENT),	/* a typed table's type: a name */
	TEXT(IMAGE, "partition_bound"),
	KEEP(IMAGE, "server"),
	TEXT(IMAGE, "options"),		/* a foreign table's, name=value */
	KEEP(IMAGE, "unlogged"),
	KEEP(IMAGE, "reloptions"),	/* storage parameters, name=value: values
								 * checked by their access method, no text
								 * of the statement's */
	/* a sequence's image: parameters and owner, numbers and names */
	KEEP(IMAGE, "type"),
	KEEP(IMAGE, "start"),
	KEEP(IMAGE, "increment"),
	KEEP(IMAGE, "min"),
	KEEP(IMAGE, "max"),
	KEEP(IMAGE, "cache"),
	KEEP(IMAGE, "cycle"),
	NESTED(IMAGE, "owned_by", OWNER),
	/* a domain's image (type, not_null, constraints above and below) */
	TEXT(IMAGE, "default"),		/* an expression */
	KEEP(IMAGE, "collation"),
	KEEP(IMAGE, "not_null"),
	KEEP(IMAGE, "not_null_name"),	/* its NOT NULL constraint's: a name */
	/* an enum's image: its labels, names of values */
	KEEP(IMAGE, "labels"),

	/* a column */
	KEEP(COLUMN, "name"),
	KEEP(COLUMN, "type"),
	KEEP(COLUMN, "attnum"),
	TEXT(COLUMN, "default"),
	KEEP(COLUMN, "identity"),
	KEEP(COLUMN, "not_null"),
	KEEP(COLUMN, "not_null_name"),	/* its NOT NULL constraint's: a name */
	KEEP(COLUMN, "not_null_no_inherit"),	/* and NO INHERIT: a flag */
	KEEP(COLUMN, "not_null_not_valid"), /* and NOT VALID: a flag */
	KEEP(COLUMN, "collation"),
	TEXT(COLUMN, "generated"),
	KEEP(COLUMN, "virtual"),	/* a generated column's kind: a flag */
	KEEP(COLUMN, "inherited"),	/* only inherited: a flag */
	KEEP(COLUMN, "storage"),	/* STORAGE: a keyword */
	KEEP(COLUMN, "compression"),	/* COMPRESSION: a method's name */
	KEEP(COLUMN, "statistics"),	/* SET STATISTICS: a number */

	/* a constraint or an index */
	KEEP(PART, "name"),
	KEEP(PART, "type"),
	KEEP(PART, "constraint"),
	TEXT(PART, "definition"),
	KEEP(PART, "inherited"),	/* a constraint only inherited: a flag */
	KEEP(PART, "clustered"),	/* an index: CLUSTER ON, a flag */

	/*
	 * a partition's partitioned table, an INHERITS parent, a table's type, a
	 * partition attached or detached
	 */
	KEEP(PARENT, "schema"),
	KEEP(PARENT, "name"),

	/* the column owning a sequence */
	KEEP(OWNER, "schema"),
	KEEP(OWNER, "name"),
	KEEP(OWNER, "column"),
	KEEP(OWNER, "identity"),

	/* a change: "column" is a name, or a column (add column) */
	KEEP(CHANGE, "op"),
	NESTED(CHANGE, "column", COLUMN),
	KEEP(CHANGE, "name"),
	NESTED(CHANGE, "constraint", PART),
	NESTED(CHANGE, "index", PART),
	KEEP(CHANGE, "identity"),
	KEEP(CHANGE, "old_index"),
	KEEP(CHANGE, "new_index"),
	KEEP(CHANGE, "option"),
	KEEP(CHANGE, "using_index"),	/* add constraint: the index it took over */
	KEEP(CHANGE, "deferrable"),	/* alter constraint */
	KEEP(CHANGE, "deferred"),
	KEEP(CHANGE, "no_inherit"),	/* set not null inherit: a flag */
	NESTED(CHANGE, "partition", PARENT),	/* attach, detach partition: names */
	TEXT(CHANGE, "bound"),		/* attach partition: FOR VALUES ... */
	/* old and new are names, types or kinds for these ops ... */
	OP_KEEP("rename"),
	OP_KEEP("set schema"),
	OP_KEEP("rename column"),
	OP_KEEP("alter column type"),
	OP_KEEP("set collation"),
	OP_KEEP("set identity"),
	OP_KEEP("drop identity"),
	OP_KEEP("rename constraint"),
	OP_KEEP("rename index"),
	OP_KEEP("set replica identity"),
	OP_KEEP("set sequence option"),	/* numbers, a type, a flag */
	OP_KEEP("set owned by"),	/* a column's names */
	OP_KEEP("set reloptions"),
	OP_KEEP("set inherits"),	/* parents' names */
	OP_KEEP("set of type"),		/* a type's name */
	OP_KEEP("set storage"),		/* keywords */
	OP_KEEP("set compression"),	/* a method's name, or null */
	OP_KEEP("set statistics"),	/* numbers, or null */
	OP_KEEP("set index reloptions"),	/* storage parameters, as
										 * "set reloptions" */
	/* ... and texts for these (and for any op not listed) */
	TEXT(CHANGE, "old"),		/* set default, drop default, set
								 * expression, drop expression, set
								 * definition */
	TEXT(CHANGE, "new"),
};

#undef KEEP
#undef TEXT
#undef NESTED
#undef OP_KEEP

/*
 * The entry for "key" (of length "len") in an object of "ctx", with op "op"
 * for a change; NULL if the list has none.  An entry for the op wins over
 * one for any op.
 */
static const DdlnImgKey *
DdlnImgKeyFind(DdlnImgCtx ctx, const char *key, int len, const char *op)
{
	const DdlnImgKey *any = NULL;

	for (size_t i = 0; i < lengthof(ddln_image_keys); i++)
	{
		const DdlnImgKey *k = &ddln_image_keys[i];

		if (k->ctx != ctx || k->keylen != len || memcmp(k->key, key, len) != 0)
			continue;
		if (k->op == NULL)
			any = k;
		else if (op != NULL && strcmp(k->op, op) == 0)
			return k;
	}
	return any;
}

/* Step over the value whose first token, "tok", was read already. */
static void
DdlnImgSkip(JsonbIterator **it, JsonbIteratorToken tok)
{
	JsonbValue	v;
	int			depth;

	if (tok != WJB_BEGIN_OBJECT && tok != WJB_BEGIN_ARRAY)
		return;
	depth = 1;
	while (depth > 0)
	{
		tok = JsonbIteratorNext(it, &v, false);
		if (tok == WJB_BEGIN_OBJECT || tok == WJB_BEGIN_ARRAY)
			depth++;
		else if (tok == WJB_END_OBJECT || tok == WJB_END_ARRAY)
			depth--;
	}
}

static void DdlnImgCopyValue(JsonbIterator **it, DdlnJsonbState *st,
							 JsonbIteratorToken tok, JsonbValue *v, DdlnImgCtx ctx);

/*
 * Copy the rest of an object of "ctx" whose WJB_BEGIN_OBJECT was read and
 * pushed, withholding its texts.
 */
static void
DdlnImgCopyObject(JsonbIterator **it, DdlnJsonbState *st, DdlnImgCtx ctx)
{
	char	   *op = NULL;
	JsonbValue	k;
	JsonbValue	v;
	JsonbIteratorToken tok;

	while ((tok = JsonbIteratorNext(it, &k, false)) == WJB_KEY)
	{
		const DdlnImgKey *entry = NULL;
		JsonbValue	null_value;

		DdlnJsonbPush(st, WJB_KEY, &k);
		tok = JsonbIteratorNext(it, &v, false);
		if (ctx == DDLN_IMGCTX_COPY)
		{
			DdlnImgCopyValue(it, st, tok, &v, DDLN_IMGCTX_COPY);
			continue;
		}
		entry = DdlnImgKeyFind(ctx, k.val.string.val, k.val.string.len, op);
		if (ctx == DDLN_IMGCTX_CHANGE && tok == WJB_VALUE && v.type == jbvString &&
			k.val.string.len == 2 && memcmp(k.val.string.val, "op", 2) == 0)
			op = pnstrdup(v.val.string.val, v.val.string.len);	/* jsonb puts "op" first */

		if (entry == NULL && ctx == DDLN_IMGCTX_DETAILS)
			DdlnImgCopyValue(it, st, tok, &v, DDLN_IMGCTX_COPY);
		else if (entry != NULL && entry->kind == DDLN_IMGKEY_KEEP)
			DdlnImgCopyValue(it, st, tok, &v, DDLN_IMGCTX_COPY);
		else if (entry != NULL && entry->kind == DDLN_IMGKEY_NESTED &&
				 (tok == WJB_BEGIN_OBJECT || tok == WJB_BEGIN_ARRAY))
			DdlnImgCopyValue(it, st, tok, &v, entry->inner);
		else if (entry != NULL && entry->kind == DDLN_IMGKEY_NESTED &&
				 (v.type == jbvNull ||
				  (entry->inner == DDLN_IMGCTX_COLUMN && v.type == jbvString)))
			DdlnImgCopyValue(it, st, tok, &v, DDLN_IMGCTX_COPY);	/* null, or a change's column name */
		else
		{
			/* a text, or what the list does not know: withheld */
			DdlnImgSkip(it, tok);
			null_value.type = jbvNull;
			DdlnJsonbPush(st, WJB_VALUE, &null_value);
		}
	}
	Assert(tok == WJB_END_OBJECT);
	if (ctx == DDLN_IMGCTX_DETAILS)
	{
		JsonbValue	key;
		JsonbValue	yes;

		/* jsonb sorts the keys of what it is given: the place does not matter */
		key.type = jbvString;
		key.val.string.val = "texts_withheld";
		key.val.string.len = strlen("texts_withheld");
		yes.type = jbvBool;
		yes.val.boolean = true;
		DdlnJsonbPush(st, WJB_KEY, &key);
		DdlnJsonbPush(st, WJB_VALUE, &yes);
	}
	if (op != NULL)
		pfree(op);
}

/*
 * Copy the value whose first token "tok" (and scalar "v") was read, as an
 * object of "ctx" or an array of such objects, withholding its texts.
 */
static void
DdlnImgCopyValue(JsonbIterator **it, DdlnJsonbState *st, JsonbIteratorToken tok,
				 JsonbValue *v, DdlnImgCtx ctx)
{
	check_stack_depth();
	if (tok == WJB_BEGIN_OBJECT)
	{
		DdlnJsonbPush(st, WJB_BEGIN_OBJECT, NULL);
		DdlnImgCopyObject(it, st, ctx);
		DdlnJsonbPush(st, WJB_END_OBJECT, NULL);
	}
	else if (tok == WJB_BEGIN_ARRAY)
	{
		JsonbValue	e;

		DdlnJsonbPush(st, WJB_BEGIN_ARRAY, v->val.array.rawScalar ? v : NULL);
		while ((tok = JsonbIteratorNext(it, &e, false)) != WJB_END_ARRAY)
		{
			if (tok == WJB_ELEM && ctx != DDLN_IMGCTX_COPY)
				e.type = jbvNull;	/* a scalar where the list says objects: withheld */
			DdlnImgCopyValue(it, st, tok, &e, ctx);
		}
		DdlnJsonbPush(st, WJB_END_ARRAY, NULL);
	}
	else
		DdlnJsonbPush(st, tok, v);
}

/*
 * "details" of an event, as a subscriber whose owner may not read
 * event.query receives it: the texts of before, after and changes
 * withheld (the header says how).  "details" itself if it has no images.
 */
Jsonb *
DdlnDetailsWithoutTexts(Jsonb *details)
{
	DdlnJsonbState st = DDLN_JSONB_STATE_INIT;
	JsonbIterator *it;
	JsonbValue	v;
	bool		images = false;
	MemoryContext cxt;
	MemoryContext old;
	Jsonb	   *built;
	Jsonb	   *result;

	if (!JB_ROOT_IS_OBJECT(details))
		return details;
	for (int i = 0; i < 3 && !images; i++)
	{
		static const char *const keys[] = {"before", "after", "changes"};

		images = (getKeyJsonValueFromContainer(&details->root, keys[i],
											   strlen(keys[i]), NULL) != NULL);
	}
	if (!images)
		return details;

	/* the builder's tree in memory of its own: a batch reads many events */
	cxt = AllocSetContextCreate(CurrentMemoryContext, "ddl_notify image texts",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	it = JsonbIteratorInit(&details->root);
	if (JsonbIteratorNext(&it, &v, false) != WJB_BEGIN_OBJECT)
		elog(ERROR, "details of an event is not an object");	/* not reached: tested above */
	DdlnJsonbPush(&st, WJB_BEGIN_OBJECT, NULL);
	DdlnImgCopyObject(&it, &st, DDLN_IMGCTX_DETAILS);
	built = DdlnJsonbFinish(&st);
	MemoryContextSwitchTo(old);
	result = palloc(VARSIZE(built));
	memcpy(result, built, VARSIZE(built));
	MemoryContextDelete(cxt);
	return result;
}
