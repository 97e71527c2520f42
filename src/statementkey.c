/*-------------------------------------------------------------------------
 *
 * statementkey.c
 *	  Which statement of its transaction an event belongs to, for a
 *	  consumer that replays statement texts: the "statement" key of every
 *	  event's details ({"id", "exact", "nested", "role", "search_path",
 *	  "settings"}).
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
 * - "search_path" (as SHOW prints it), "role" (current_user) and
 *	 "settings" (the settings that change what a statement's literals
 *	 mean: DateStyle, IntervalStyle, TimeZone, standard_conforming_strings;
 *	 common.c's ddln_text_settings) are read once, at the top-level
 *	 frame's opening: what the statement's text must be run under to mean
 *	 the same.  No catalog read per event: the role's name is one syscache
 *	 look-up per statement.
 * - "exact" is the capture's verdict on this event's "query", given by the
 *	 caller (capture.c): true only if it is byte for byte the text the
 *	 parser read for this top-level statement (capture_query on, the
 *	 utility hook saw the statement's own slice, nothing redacted, nothing
 *	 cut); a nested event's is always false (its query is the nested
 *	 statement's).  None of these keys is a statement text: a subscriber
 *	 whose owner may not read statement texts (G10) still sees them.
 * - Without the library preloaded, the first DDL statement of a session runs
 *	 before the utility hook is installed, and capture stores the whole
 *	 query string: it is exact only if that string is one statement of the
 *	 kind running (parsed again once, quietly, at ddl_command_start).
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
#include "nodes/parsenodes.h"
#include "nodes/pg_list.h"
#include "parser/parser.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "common.h"

/* the open frames, innermost first: the subtransaction each was opened in */
static List *frames = NIL;		/* in TopTransactionContext */

/* the top-level statement of the open frames */
static int64 statement_count = 0;	/* top-level statements begun this transaction */
static char *statement_search_path = NULL;	/* in TopTransactionContext */
static char *statement_role = NULL;

/* the settings its text is read under (common.c), as SHOW printed them */
static char *statement_settings[DDLN_TEXT_SETTINGS];
static bool statement_whole = false;	/* the hook did not see it, and the
										 * whole query string is it */
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
		memset(statement_settings, 0, sizeof(statement_settings));
		statement_whole = false;
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

/* What DdlnWholeStringIsIt() parses, and what it found. */
typedef struct DdlnWholeString
{
	const char *string;
	NodeTag		tag;			/* of the statement running */
	bool		is_it;
} DdlnWholeString;

static void
DdlnWholeStringParse(void *arg)
{
	DdlnWholeString *w = (DdlnWholeString *) arg;
	List	   *raw = raw_parser(w->string, RAW_PARSE_DEFAULT);

	NodeTag		tag;

	if (list_length(raw) != 1)
		return;
	tag = nodeTag(((RawStmt *) linitial(raw))->stmt);
	/*
	 * T_Invalid: the statement is not known (a frame opened after the
	 * commit inside CREATE INDEX CONCURRENTLY and its like, which forgot
	 * the one its start opened): one of the statements that commit inside
	 * themselves.
	 */
	if (w->tag == T_Invalid)
		w->is_it = (tag == T_IndexStmt || tag == T_DropStmt || tag == T_ReindexStmt ||
					tag == T_AlterTableStmt);
	else
		w->is_it = (tag == w->tag);
}

/*
 * The first DDL statement of a session that did not preload the library
 * runs before the utility hook is installed: the text capture stores is
 * then the whole query string (common.c).  It is the statement's exact text
 * only if the string holds one statement, of the kind running (not a DO
 * block or a query whose function runs the DDL; with "parsetree" NULL, for
 * the frame opened again after CREATE INDEX CONCURRENTLY's own commit, one
 * of the kinds that commit inside themselves).  Parsed again with the
 * session's settings, quietly: anything it cannot read is "no".  Once per
 * session at most.
 */
static bool
DdlnWholeStringIsIt(Node *parsetree)
{
	DdlnWholeString w;

	if (ddln_statement.string != NULL || debug_query_string == NULL)
		return false;
	w.string = debug_query_string;
	w.tag = parsetree ? nodeTag(parsetree) : T_Invalid;
	w.is_it = false;
	if (!DdlnTryQuietly(DdlnWholeStringParse, &w))
		return false;
	return w.is_it;
}

/* ddl_command_start: open a frame; a top-level one is a new statement. */
void
DdlnStatementKeyStart(Node *parsetree)
{
	bool		whole = false;

	MemoryContext old;

	if (!callbacks_registered)
	{
		RegisterXactCallback(DdlnStatementKeyXactCallback, NULL);
		RegisterSubXactCallback(DdlnStatementKeySubXactCallback, NULL);
		callbacks_registered = true;
	}
	if (frames == NIL)
		whole = DdlnWholeStringIsIt(parsetree);
	old = MemoryContextSwitchTo(TopTransactionContext);
	if (frames == NIL)
	{
		statement_whole = whole;
		statement_count++;
		statement_search_path = pstrdup(namespace_search_path ? namespace_search_path : "");
		statement_role = pstrdup(GetUserNameFromId(GetUserId(), false));
		for (int i = 0; i < DDLN_TEXT_SETTINGS; i++)
			statement_settings[i] =
				pstrdup(GetConfigOption(ddln_text_settings[i], false, false));
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

/*
 * The "statement" key of the events of one capture call, as a jsonb object
 * {"statement": {...}}; "unchanged": the call's query is the text capture
 * read, unredacted and uncut.  That text is the statement's exact text if
 * the utility hook gave its own slice, or if it is the whole query string
 * and that is the statement (DdlnWholeStringIsIt), and the statement is a
 * top-level one.
 */
Jsonb *
DdlnStatementKey(bool unchanged)
{
	DdlnJsonbState st = DDLN_JSONB_STATE_INIT;
	bool		exact;
	bool		nested;

	if (frames == NIL)
		DdlnStatementKeyStart(NULL);
	nested = list_length(frames) > 1;
	exact = unchanged && !nested && (DdlnCurrentStatementSliced() || statement_whole);

	DdlnJsonToken(&st, WJB_BEGIN_OBJECT);
	DdlnJsonKey(&st, "statement");
	DdlnJsonToken(&st, WJB_BEGIN_OBJECT);
	DdlnJsonKey(&st, "id");
	DdlnJsonInt(&st, statement_count);
	DdlnJsonPair(&st, "role", statement_role);
	DdlnJsonKey(&st, "exact");
	DdlnJsonBool(&st, exact);
	DdlnJsonKey(&st, "nested");
	DdlnJsonBool(&st, nested);
	DdlnJsonPair(&st, "search_path", statement_search_path);
	DdlnJsonKey(&st, "settings");
	DdlnJsonToken(&st, WJB_BEGIN_OBJECT);
	DdlnJsonTextSettings(&st, statement_settings);
	DdlnJsonToken(&st, WJB_END_OBJECT);
	DdlnJsonToken(&st, WJB_END_OBJECT);
	return DdlnJsonbFinish(&st);
}
