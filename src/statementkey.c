/*-------------------------------------------------------------------------
 *
 * statementkey.c
 *	  Which statement of its transaction an event belongs to, for a
 *	  consumer that replays statement texts: the "statement" key of every
 *	  event's details ({"id", "exact", "nested", "role", "search_path"}).
 *	  What users are told: docs/reference.md ("The payload"), docs/cdc.md.
 *
 * Rules kept here:
 * - A statement is a top-level one: ddl_command_start opens a frame
 *	 (DdlnStatementKeyStart), ddl_command_end closes it
 *	 (DdlnStatementKeyEnd).  A DDL statement run while another one's frame
 *	 is open (an extension's script under CREATE EXTENSION, DDL a function
 *	 called by a DDL statement runs) opens a nested frame and its events
 *	 share the outer statement's id, with "nested": true: replaying the
 *	 outer statement's text once makes them too.  A statement outside any
 *	 DDL (in a DO block, a function called by a query) is a top-level one,
 *	 with its own id and its own text.  Parts PostgreSQL runs as
 *	 subcommands (CREATE SCHEMA's elements, ALTER TABLE's subcommands, a
 *	 serial column's sequence) open no frame: they are the statement's.
 * - "id" is the statement's ordinal in its transaction, from 1, drawn at
 *	 the top-level frame's opening; ids never repeat in a transaction (a
 *	 statement rolled back to a savepoint leaves a gap).  A frame whose
 *	 subtransaction aborts is dropped with it; the transaction's end drops
 *	 them all and starts the count again.
 * - "search_path" (as SHOW prints it) and "role" (current_user) are read
 *	 once, at the top-level frame's opening: what the statement's text
 *	 must be run under to mean the same.  No catalog read per event: the
 *	 role's name is one syscache look-up per statement.
 * - "exact" is the capture's verdict on this event's "query", given by the
 *	 caller (capture.c): true only if it is byte for byte the text the
 *	 parser read for this top-level statement (capture_query on, the
 *	 utility hook saw the statement's own slice, nothing redacted, nothing
 *	 cut); a nested event's is always false (its query is the nested
 *	 statement's).  None of these keys is a statement text: a subscriber
 *	 whose owner may not read statement texts (G10) still sees them.
 * - CREATE INDEX CONCURRENTLY commits the transaction its ddl_command_start
 *	 ran in: the first event recorded without a frame opens one, closed by
 *	 that statement's ddl_command_end.
 *
 * Floor: engine (capture's helper): called by capture.c only; calls
 * common.c.
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

#include "common.h"

/* the open frames, innermost first: the subtransaction each was opened in */
static List *frames = NIL;		/* in TopTransactionContext */

/* the top-level statement of the open frames */
static int64 statement_count = 0;	/* top-level statements begun this transaction */
static char *statement_search_path = NULL;	/* in TopTransactionContext */
static char *statement_role = NULL;
static bool callbacks_registered = false;

static void
DdlnStatementKeyXactCallback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PARALLEL_COMMIT || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_PREPARE)
	{
		frames = NIL;
		statement_count = 0;
		statement_search_path = NULL;
		statement_role = NULL;
	}
}

static void
DdlnStatementKeySubXactCallback(SubXactEvent event, SubTransactionId mySubid,
								SubTransactionId parentSubid, void *arg)
{
	if (event != SUBXACT_EVENT_ABORT_SUB)
		return;
	while (frames != NIL && (SubTransactionId) linitial_int(frames) == mySubid)
		frames = list_delete_first(frames);
}

/* ddl_command_start: open a frame; a top-level one is a new statement. */
void
DdlnStatementKeyStart(void)
{
	MemoryContext old;

	if (!callbacks_registered)
	{
		RegisterXactCallback(DdlnStatementKeyXactCallback, NULL);
		RegisterSubXactCallback(DdlnStatementKeySubXactCallback, NULL);
		callbacks_registered = true;
	}
	old = MemoryContextSwitchTo(TopTransactionContext);
	if (frames == NIL)
	{
		statement_count++;
		statement_search_path = pstrdup(namespace_search_path ? namespace_search_path : "");
		statement_role = pstrdup(GetUserNameFromId(GetUserId(), false));
	}
	frames = lcons_int((int) GetCurrentSubTransactionId(), frames);
	MemoryContextSwitchTo(old);
}

/* ddl_command_end: close the innermost frame. */
void
DdlnStatementKeyEnd(void)
{
	if (frames != NIL)
		frames = list_delete_first(frames);
}

/* Push "key": string onto a jsonb being built. */
static void
DdlnStatementKeyPair(JsonbParseState **state, const char *key, JsonbValue *val)
{
	JsonbValue	k;

	k.type = jbvString;
	k.val.string.len = strlen(key);
	k.val.string.val = (char *) key;
	(void) pushJsonbValue(state, WJB_KEY, &k);
	(void) pushJsonbValue(state, WJB_VALUE, val);
}

/*
 * The "statement" key of the events of one capture call, as a jsonb object
 * {"statement": {...}}; "exact": the call's query is the exact text of its
 * statement, if the statement is a top-level one.
 */
Jsonb *
DdlnStatementKey(bool exact)
{
	JsonbParseState *state = NULL;
	JsonbValue	v;
	JsonbValue *res;
	bool		nested;

	if (frames == NIL)
		DdlnStatementKeyStart();
	nested = list_length(frames) > 1;

	(void) pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	v.type = jbvString;
	v.val.string.val = "statement";
	v.val.string.len = strlen("statement");
	(void) pushJsonbValue(&state, WJB_KEY, &v);
	(void) pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	v.type = jbvNumeric;
	v.val.numeric = int64_to_numeric(statement_count);
	DdlnStatementKeyPair(&state, "id", &v);
	v.type = jbvString;
	v.val.string.val = statement_role;
	v.val.string.len = strlen(statement_role);
	DdlnStatementKeyPair(&state, "role", &v);
	v.type = jbvBool;
	v.val.boolean = exact && !nested;
	DdlnStatementKeyPair(&state, "exact", &v);
	v.val.boolean = nested;
	DdlnStatementKeyPair(&state, "nested", &v);
	v.type = jbvString;
	v.val.string.val = statement_search_path;
	v.val.string.len = strlen(statement_search_path);
	DdlnStatementKeyPair(&state, "search_path", &v);
	(void) pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	res = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	return JsonbValueToJsonb(res);
}
