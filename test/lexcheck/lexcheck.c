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
 *	 querytext.c itself, to reach its static functions.
 * - It builds on every supported version: no gram.h or gramparse.h (not
 *	 installed from PostgreSQL 16 on).  PostgreSQL 19's scanner has no
 *	 standard_conforming_strings = off (nor escape_string_warning): there
 *	 only the "on" reading is compared (LEXCHECK_SCS_OFF).  The core scanner's token codes for
 *	 a constant and a quoted name are learnt at the first call, by scanning
 *	 one of each; the keyword table is the server's own ScanKeywordTokens.
 * - The core scanner runs with backslash_quote on and escape_string_warning
 *	 off, as a parse that succeeded saw no error from them; its errors are
 *	 caught here (a test harness may; the extension never does).
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#include "querytext.c"

#include "common/keywords.h"
#include "fmgr.h"
#include "parser/parser.h"
#include "parser/scanner.h"
#include "utils/builtins.h"

PG_MODULE_MAGIC;

/* querytext.c's DdlnCapQuery reads it; the check never calls that */
int			ddln_max_query_length = -1;

/* flex's accessor of the scanner's current token text, in no header */
extern char *core_yyget_text(core_yyscan_t yyscanner);

/* Can the core scanner read with standard_conforming_strings off? */
#if PG_VERSION_NUM >= 190000
#define LEXCHECK_SCS_OFF 0
#else
#define LEXCHECK_SCS_OFF 1
#endif

/* the server's keyword token codes (declared in gramparse.h, not installed) */
extern PGDLLIMPORT const uint16 ScanKeywordTokens[];

/* the core scanner's codes of the tokens compared, learnt by LexcheckCodes */
static int	lexcheck_sconst = -1;
static int	lexcheck_usconst = -1;
static int	lexcheck_ident = -1;
static int	lexcheck_uident = -1;

/* The code of the first token of "q", scanned with the settings as they are. */
static int
LexcheckFirstCode(const char *q)
{
	core_yy_extra_type extra;
	core_YYSTYPE lval;
	YYLTYPE		loc;
	core_yyscan_t scanner;
	int			tok;

	scanner = scanner_init(q, &extra, &ScanKeywords, ScanKeywordTokens);
	tok = core_yylex(&lval, &loc, scanner);
	scanner_finish(scanner);
	return tok;
}

static void
LexcheckCodes(void)
{
#if LEXCHECK_SCS_OFF
	bool		save_scs = standard_conforming_strings;
#endif

	if (lexcheck_sconst >= 0)
		return;
#if LEXCHECK_SCS_OFF
	standard_conforming_strings = true;
#endif
	lexcheck_sconst = LexcheckFirstCode("'a'");
	lexcheck_usconst = LexcheckFirstCode("U&'a'");
	lexcheck_ident = LexcheckFirstCode("\"a\"");
	lexcheck_uident = LexcheckFirstCode("U&\"a\"");
#if LEXCHECK_SCS_OFF
	standard_conforming_strings = save_scs;
#endif
}

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
#if LEXCHECK_SCS_OFF
		bool		save_scs = standard_conforming_strings;

		standard_conforming_strings = scs;
#endif
		scanner = scanner_init(q, &extra, &ScanKeywords, ScanKeywordTokens);
#if LEXCHECK_SCS_OFF
		standard_conforming_strings = save_scs;
		extra.escape_string_warning = false;
#endif
		extra.backslash_quote = BACKSLASH_QUOTE_ON;
		for (;;)
		{
			int			tok = core_yylex(&lval, &loc, scanner);
			int			at;

			if (tok == 0)
				break;
			if (tok != lexcheck_sconst && tok != lexcheck_usconst &&
				tok != lexcheck_uident &&
				!(tok == lexcheck_ident && q[loc] == '"'))
				continue;
			/* just past a quoted constant; at a dollar-quoted one's end */
			at = core_yyget_text(scanner) - extra.scanbuf;
			if (q[loc] == '$')
				at += (strchr(q + loc + 1, '$') - (q + loc)) + 1;
			if (tok == lexcheck_ident || tok == lexcheck_uident)
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
	char	   *core;
	char	   *ours;
	const char *r;

	LexcheckCodes();
	if (!scs && !LEXCHECK_SCS_OFF)
		PG_RETURN_TEXT_P(cstring_to_text("not compared"));
	core = LexcheckCore(q, scs, &unterminated);
	ours = LexcheckOurs(q, scs);

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
