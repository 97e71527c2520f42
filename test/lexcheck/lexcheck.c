/*-------------------------------------------------------------------------
 *
 * lexcheck.c
 *	  A differential check of redaction's lexer (src/querytext.c, DdlnLex)
 *	  against PostgreSQL's own scanner, run by test/lexcheck/run.sh: for a
 *	  text and a value of standard_conforming_strings, lexcheck_compare()
 *	  lists every string constant (start, end, value) and quoted name
 *	  (start, value) each lexer sees, and says where they differ.
 *
 * Rules kept here:
 * - Test code only, never built into the extension.  It includes
 *	 querytext.c itself, to reach its static functions, and the parser's
 *	 gramparse.h, which PostgreSQL installs up to 15 only: the check runs
 *	 where that header is (run.sh skips elsewhere).  What the check protects
 *	 is version-independent: querytext.c includes no parser header.
 * - The core scanner runs with backslash_quote on and escape_string_warning
 *	 off, as a parse that succeeded saw no error from them; its errors are
 *	 caught here (a test harness may; the extension never does).
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#include "querytext.c"

#include "fmgr.h"
#include "parser/gramparse.h"
#include "parser/parser.h"
#include "utils/builtins.h"

PG_MODULE_MAGIC;

/* querytext.c's DdlnCapQuery reads it; the check never calls that */
int			ddln_max_query_length = -1;

/* flex's accessor of the scanner's current token text, in no header */
extern char *core_yyget_text(core_yyscan_t yyscanner);

/*
 * The core scanner's constants and quoted names of "q", one "start:end:value"
 * line each (end -1 for names), or NULL when it raised an error; *unterminated
 * tells whether the error is one that only decides whether this was the
 * parser's reading (an unterminated token, U&'' with the setting off).
 */
static char *
LexcheckCore(const char *q, bool scs, bool *unterminated)
{
	MemoryContext mcx = CurrentMemoryContext;
	StringInfoData out;
	volatile bool ok = true;
	int			len = strlen(q);

	initStringInfo(&out);
	*unterminated = false;
	PG_TRY();
	{
		core_yyscan_t scanner;
		core_yy_extra_type extra;
		core_YYSTYPE lval;
		YYLTYPE		loc;
		bool		save_scs = standard_conforming_strings;
		int			save_bq = backslash_quote;

		standard_conforming_strings = scs;
		backslash_quote = BACKSLASH_QUOTE_ON;
		scanner = scanner_init(q, &extra, &ScanKeywords, ScanKeywordTokens);
		standard_conforming_strings = save_scs;
		backslash_quote = save_bq;
		extra.escape_string_warning = false;
		for (;;)
		{
			int			tok = core_yylex(&lval, &loc, scanner);
			int			at;

			if (tok == 0)
				break;
			if (tok != SCONST && tok != USCONST && tok != UIDENT &&
				!(tok == IDENT && q[loc] == '"'))
				continue;
			/* just past a quoted constant; at a dollar-quoted one's end */
			at = core_yyget_text(scanner) - extra.scanbuf;
			if (q[loc] == '$')
				at += (strchr(q + loc + 1, '$') - (q + loc)) + 1;
			if (tok == IDENT || tok == UIDENT)
				at = -1;
			appendStringInfo(&out, "%d:%d:%s\n", loc, Min(at, len), lval.str);
		}
		scanner_finish(scanner);
	}
	PG_CATCH();
	{
		ErrorData  *e;

		MemoryContextSwitchTo(mcx);
		e = CopyErrorData();
		FlushErrorState();
		*unterminated = (strstr(e->message, "unterminated") != NULL ||
						 strstr(e->message, "unsafe use of string constant") != NULL);
		ok = false;
	}
	PG_END_TRY();
	return ok ? out.data : NULL;
}

/* The same list from DdlnLex (strict, as for a statement), or NULL. */
static char *
LexcheckOurs(const char *q, bool scs)
{
	DdlnTokens	toks = {NULL, NULL, 0, 0};
	StringInfoData out;

	if (!DdlnLex(q, strlen(q), scs, false, &toks))
		return NULL;
	initStringInfo(&out);
	for (int i = 0; i < toks.n; i++)
	{
		DdlnToken  *t = &toks.t[i];
		int			start = t->start;
		int			l;

		switch (t->kind)
		{
			case DDLN_TK_STRING:
			case DDLN_TK_USTRING:
				/* the core scanner gives N'' as NCHAR, then the constant */
				if (q[start] == 'n' || q[start] == 'N')
					start++;
				appendStringInfo(&out, "%d:%d:%s\n", start, t->end, t->value);
				break;
			case DDLN_TK_QIDENT:
			case DDLN_TK_UIDENT:
				/* the core scanner truncates a "..." name to NAMEDATALEN */
				l = strlen(t->value);
				if (t->kind == DDLN_TK_QIDENT && l >= NAMEDATALEN)
					l = pg_mbcliplen(t->value, l, NAMEDATALEN - 1);
				appendStringInfo(&out, "%d:-1:%.*s\n", start, l, t->value);
				break;
			default:
				break;
		}
	}
	return out.data;
}

/*
 * lexcheck_compare(text, scs boolean): 'agree', 'both refuse', 'not
 * compared' (the core scanner raised an error that decides nothing about
 * token boundaries, such as a bad escape), or the two lists where they
 * differ.
 */
PG_FUNCTION_INFO_V1(lexcheck_compare);
Datum
lexcheck_compare(PG_FUNCTION_ARGS)
{
	char	   *q = text_to_cstring(PG_GETARG_TEXT_PP(0));
	bool		scs = PG_GETARG_BOOL(1);
	bool		unterminated;
	char	   *core = LexcheckCore(q, scs, &unterminated);
	char	   *ours = LexcheckOurs(q, scs);
	const char *r;

	if (core == NULL && !unterminated)
		r = "not compared";
	else if (core == NULL && ours == NULL)
		r = "both refuse";
	else if (core == NULL)
		r = "differ: the core scanner refuses, ours reads";
	else if (ours == NULL)
		r = psprintf("differ: ours refuses, the core scanner reads\n%s", core);
	else if (strcmp(core, ours) != 0)
		r = psprintf("differ:\ncore:\n%sours:\n%s", core, ours);
	else
		r = "agree";
	PG_RETURN_TEXT_P(cstring_to_text(r));
}
