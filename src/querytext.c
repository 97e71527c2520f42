/*-------------------------------------------------------------------------
 *
 * querytext.c
 *	  The statement text an event stores in "query": secrets redacted, length
 *	  capped.  Capture (capture.c) calls it once per trigger call, as
 *	  DdlnCapQuery(DdlnRedactSecrets(DdlnCurrentStatementText())), when
 *	  ddl_notify.capture_query is on.  What users are told: docs/redaction.md.
 *
 * Rules kept here:
 * - Secrets are redacted by meaning, not by words found in the text
 *	 (DdlnRedactSecrets): the string constant given to a name like a
 *	 password (password, passwd, secret, any case, however the name is
 *	 spelled; an option, a role's PASSWORD, or "name = / := / => constant")
 *	 becomes '********'; a string constant that is a libpq connection
 *	 string, in keyword = value or URI form, keeps everything but its
 *	 password and sslpassword values; the password of a URI
 *	 (scheme://user:password@host) becomes ******** wherever it stands, in
 *	 a comment too.  Everything else, comments included, is left byte for
 *	 byte; a replaced constant spans exactly its own text.
 *	 A statement that cannot hold such a secret (cheap test first) is
 *	 returned as it is.
 * - Constants inside constants: a constant that may hold a secret and is
 *	 neither of the above (a function or DO body, an EXECUTE'd string, a
 *	 string in another language's body) is read again as SQL text, to
 *	 DDLN_REDACT_DEPTH levels, and written back with what that finds
 *	 redacted (dollar quotes kept when they still fit).  Reading inside a
 *	 constant is lenient: a quote left open runs to its end (a body in
 *	 another language, a comment with an apostrophe); what still cannot be
 *	 read (an open comment), or lies deeper than DDLN_REDACT_DEPTH, is
 *	 replaced whole by '********'.
 * - Redaction reads the text as the parser did, with its own small lexer
 *	 (DdlnLex) that follows PostgreSQL's scanner (scan.l) in everything that
 *	 decides where a constant or a quoted name begins and ends: comments
 *	 (nested block comments, --), '...', E'...', N'...', B'...', X'...', U&'...',
 *	 U&"...", "...", $tag$...$tag$, continuation of a quoted string over a
 *	 newline; escapes are decoded before anything is decided.  It never
 *	 raises an error, a warning or a notice (the core scanner's
 *	 "identifier will be truncated" NOTICE, its errors on text read with
 *	 other settings), needs no keyword list and includes none of the
 *	 parser's headers (gram.h and gramparse.h are not installed from
 *	 PostgreSQL 16 on), so it reads the same on every supported version.
 *	 test/lexcheck/run.sh holds it to each version's own scanner.
 * - Which settings did the parser use?  Only standard_conforming_strings
 *	 changes where a constant ends (backslash_quote and
 *	 escape_string_warning only decide whether the scanner complains).  The
 *	 value in force now is not the one the parser used: a multi-statement
 *	 string is scanned whole before its first statement runs, so a SET in
 *	 it takes effect only for later strings; a prepared statement, a
 *	 function's statements and an EXECUTE'd string were scanned whenever
 *	 they were, and a function body is read again at each first call.  So
 *	 both readings are taken (the second only when the text has a
 *	 backslash, the one thing they can differ on): a reading that cannot
 *	 scan the text (a quote left open, U&'...' with the setting off) is not
 *	 the parser's and is dropped; what either remaining reading finds a
 *	 secret is redacted, and where the two disagree about the same bytes,
 *	 the union of both spans becomes '********'.  A redaction is never
 *	 missed for not knowing the setting; at worst a few more bytes go.
 *	 (PostgreSQL 19 has no standard_conforming_strings = off: there the
 *	 second reading is never the parser's and can only add redactions; the
 *	 code is the same on every version.)  Knowing the setting instead would
 *	 mean recording it wherever a text is scanned (each query string, each
 *	 prepared statement, each function's first call), which no single
 *	 hook sees.
 * - Fails closed: a statement neither reading can scan (it was parsed, so
 *	 this means redaction misread it) is stored as DDLN_QUERY_WITHHELD,
 *	 never as written.
 * - The text is then cut to ddl_notify.max_query_length bytes (-1: no
 *	 limit) at a character boundary, with a note of how much was cut
 *	 (DdlnCapQuery).  The cap comes after redaction, which must see the
 *	 whole statement; it is what bounds an event row.
 * - Pure functions of their argument and the settings: no catalog access,
 *	 no SQL, no state, no error of their own; results are palloc'd in the
 *	 caller's context (or the argument itself when nothing changed).
 *
 * Floor: engine (capture's helper): called by capture.c only; calls
 * common.c.
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "utils/memutils.h"

#include "common.h"

/* what a redacted constant becomes */
#define DDLN_REDACTED		"'********'"
#define DDLN_REDACTED_IDENT	"\"********\""

/* what a statement redaction cannot read is stored as */
#define DDLN_QUERY_WITHHELD \
	"/* ddl_notify: statement text withheld, it could not be read for redaction */"

/* how deep constants inside constants are read as SQL text */
#define DDLN_REDACT_DEPTH	4

/* The kinds of token redaction tells apart. */
typedef enum DdlnTokKind
{
	DDLN_TK_WORD,				/* keyword or unquoted identifier */
	DDLN_TK_QIDENT,				/* "..." */
	DDLN_TK_UIDENT,				/* U&"..." */
	DDLN_TK_STRING,				/* '...', E'...', N'...', $tag$...$tag$ */
	DDLN_TK_USTRING,			/* U&'...' */
	DDLN_TK_OTHER				/* operator, punctuation, number, B'', X'' */
} DdlnTokKind;

/* One token of a text, as redaction needs it. */
typedef struct DdlnToken
{
	DdlnTokKind kind;
	int			start;			/* offset of its first byte */
	int			end;			/* offset past its last byte */
	char	   *value;			/* quoted names and constants: the value (U&
								 * ones with their escapes still in); else
								 * NULL (a word is read from the text) */
	char	   *dollar;			/* a dollar-quoted constant's delimiter */
} DdlnToken;

typedef struct DdlnTokens
{
	const char *q;				/* the text they are read from */
	DdlnToken  *t;
	int			n;
	int			max;
} DdlnTokens;

/*
 * What reading a constant as SQL text gave (DdlnRedactText), kept by the
 * first reading of a text for the second: both see most constants alike.
 */
typedef struct DdlnInner
{
	int			start;
	int			end;
	const char *value;
	char	   *inner;
} DdlnInner;

typedef struct DdlnInners
{
	DdlnInner  *e;
	int			n;
	int			max;
} DdlnInners;

/* One replacement of the bytes [start, end) of a text. */
typedef struct DdlnEdit
{
	int			start;
	int			end;
	const char *text;
} DdlnEdit;

typedef struct DdlnEdits
{
	DdlnEdit   *e;
	int			n;
	int			max;
} DdlnEdits;

/* How a quoted constant's body is read. */
typedef enum DdlnQuoting
{
	DDLN_Q_PLAIN,				/* '' is a quote (standard strings, U&'') */
	DDLN_Q_ESCAPE,				/* and backslash escapes (E'', and '' with
								 * standard_conforming_strings off) */
	DDLN_Q_BIT					/* the next quote ends it (B'', X'') */
} DdlnQuoting;

/* scan.l's character classes */
#define DDLN_IS_IDSTART(c) \
	(((c) >= 'A' && (c) <= 'Z') || ((c) >= 'a' && (c) <= 'z') || \
	 (c) == '_' || (unsigned char) (c) >= 0x80)
#define DDLN_IS_DIGIT(c)	((c) >= '0' && (c) <= '9')
#define DDLN_IS_IDCONT(c)	(DDLN_IS_IDSTART(c) || DDLN_IS_DIGIT(c) || (c) == '$')
#define DDLN_IS_HSPACE(c)	((c) == ' ' || (c) == '\t' || (c) == '\f' || (c) == '\v')
#define DDLN_IS_NEWLINE(c)	((c) == '\n' || (c) == '\r')
#define DDLN_IS_SPACE(c)	(DDLN_IS_HSPACE(c) || DDLN_IS_NEWLINE(c))
#define DDLN_IS_OPCHAR(c)	((c) != '\0' && strchr("~!@#^&|`?+-*/%<>=:", (c)) != NULL)

static char *DdlnRedactText(const char *q, int len, bool lenient, int depth);

/* Is this option name (decoded, any case) one whose value is a secret? */
static bool
DdlnIsSecretName(const char *w)
{
	return w != NULL &&
		(strcasestr(w, "password") != NULL || strcasestr(w, "passwd") != NULL ||
		 strcasestr(w, "secret") != NULL);
}

/*
 * Could the statement hold a secret redaction looks for?  Cheap test first:
 * a secret's name or a connection string's password spelled out, a URI, or
 * a backslash or UESCAPE (escapes can spell anything).  Most DDL has none.
 */
static bool
DdlnMayHoldSecret(const char *q)
{
	return strcasestr(q, "passw") != NULL || strcasestr(q, "secret") != NULL ||
		strstr(q, "://") != NULL || strchr(q, '\\') != NULL ||
		strcasestr(q, "uescape") != NULL;
}

static int
DdlnHexValue(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Code point "c" in the database encoding, '?' where it has none. */
static void
DdlnAppendCodePoint(StringInfo out, pg_wchar c)
{
	if (c > 0 && c < 0x80)
		appendStringInfoChar(out, (char) c);
	else if (GetDatabaseEncoding() == PG_UTF8 && c > 0 &&
			 is_valid_unicode_codepoint(c))
	{
		unsigned char buf[8];

		unicode_to_utf8(c, buf);
		appendBinaryStringInfo(out, (char *) buf, pg_utf_mblen(buf));
	}
	else
		appendStringInfoChar(out, '?');
}

/*
 * The value of a U&'...' constant or U&"..." identifier (the scanner leaves
 * its escapes to the grammar): \XXXX and \+XXXXXX with "esc" for the
 * backslash.  A character the database encoding cannot show here becomes
 * '?': redaction only needs to recognise words and connection strings.
 * Never fails.
 */
static char *
DdlnDecodeUnicode(const char *s, char esc)
{
	StringInfoData out;

	initStringInfo(&out);
	while (*s)
	{
		int			ndigits = 0;
		pg_wchar	c = 0;
		const char *p;

		if (*s != esc)
		{
			appendStringInfoChar(&out, *s++);
			continue;
		}
		if (s[1] == esc)
		{
			appendStringInfoChar(&out, esc);
			s += 2;
			continue;
		}
		p = s + 1;
		ndigits = (*p == '+') ? 6 : 4;
		if (*p == '+')
			p++;
		for (int i = 0; i < ndigits; i++)
		{
			int			h = DdlnHexValue(p[i]);

			if (h < 0)
			{
				ndigits = -1;
				break;
			}
			c = (c << 4) | h;
		}
		if (ndigits < 0)
		{
			appendStringInfoChar(&out, *s++);
			continue;
		}
		s = p + ndigits;
		DdlnAppendCodePoint(&out, c);
	}
	return out.data;
}

/* Is "key" (decoded) a libpq keyword whose value is a secret? */
static bool
DdlnIsConninfoSecret(const char *key, int len)
{
	return (len == 8 && strncmp(key, "password", 8) == 0) ||
		(len == 11 && strncmp(key, "sslpassword", 11) == 0);
}

/* "s" with %XX escapes decoded (a URI's parameter names). */
static char *
DdlnPercentDecode(const char *s, int len)
{
	char	   *out = palloc(len + 1);
	int			n = 0;

	for (int i = 0; i < len; i++)
	{
		if (s[i] == '%' && i + 2 < len &&
			DdlnHexValue(s[i + 1]) >= 0 && DdlnHexValue(s[i + 2]) >= 0)
		{
			out[n++] = (char) (DdlnHexValue(s[i + 1]) * 16 + DdlnHexValue(s[i + 2]));
			i += 2;
		}
		else
			out[n++] = s[i];
	}
	out[n] = '\0';
	return out;
}

/*
 * The authority of a URI connection string (the text after its scheme, of
 * "prefix" bytes, up to the first / or ?), appended to "out" with the
 * scheme, and with the password of user:password@host replaced by
 * ********.  Returns whether it replaced one; *rest is set to the text
 * after the authority.
 */
static bool
DdlnRedactUriAuthority(StringInfo out, const char *v, size_t prefix,
					   const char **rest)
{
	const char *auth = v + prefix;
	size_t		authlen = strcspn(auth, "/?");
	const char *at = NULL;
	bool		redacted = false;

	for (const char *c = auth; c < auth + authlen; c++)
		if (*c == '@')
			at = c;
	appendBinaryStringInfo(out, v, prefix);
	if (at != NULL)
	{
		const char *colon = memchr(auth, ':', at - auth);

		if (colon != NULL)
		{
			appendBinaryStringInfo(out, auth, colon + 1 - auth);
			appendStringInfoString(out, "********");
			appendBinaryStringInfo(out, at, auth + authlen - at);
			redacted = true;
		}
		else
			appendBinaryStringInfo(out, auth, authlen);
	}
	else
		appendBinaryStringInfo(out, auth, authlen);
	*rest = auth + authlen;
	return redacted;
}

/*
 * The parameters of a URI connection string (the text after its '?', "p"),
 * appended to "out" with the values of password and sslpassword (their
 * names %-decoded, as libpq decodes them) replaced by ********.  Returns
 * whether it replaced one.
 */
static bool
DdlnRedactUriParams(StringInfo out, const char *p)
{
	bool		redacted = false;

	while (*p)
	{
		size_t		plen = strcspn(p, "&");
		const char *eq = memchr(p, '=', plen);

		if (eq != NULL)
		{
			char	   *key = DdlnPercentDecode(p, eq - p);

			if (DdlnIsConninfoSecret(key, strlen(key)))
			{
				appendBinaryStringInfo(out, p, eq + 1 - p);
				appendStringInfoString(out, "********");
				redacted = true;
			}
			else
				appendBinaryStringInfo(out, p, plen);
		}
		else
			appendBinaryStringInfo(out, p, plen);
		p += plen;
		if (*p == '&')
			appendStringInfoChar(out, *p++);
	}
	return redacted;
}

/*
 * A connection string in URI form (postgresql://user:password@host/db?
 * password=..., its scheme "prefix" bytes long) with the password of its
 * authority and the values of its password and sslpassword parameters
 * replaced by ********.  NULL if it has none.
 */
static char *
DdlnRedactConninfoUri(const char *v, size_t prefix)
{
	StringInfoData out;
	const char *p;
	const char *q;
	bool		redacted;

	initStringInfo(&out);
	redacted = DdlnRedactUriAuthority(&out, v, prefix, &p);
	q = strchr(p, '?');
	if (q == NULL)
	{
		appendStringInfoString(&out, p);
		return redacted ? out.data : NULL;
	}
	appendBinaryStringInfo(&out, p, q + 1 - p);
	if (DdlnRedactUriParams(&out, q + 1))
		redacted = true;
	return redacted ? out.data : NULL;
}

/*
 * The end of the value of a keyword = value pair that starts at "p", read
 * as libpq reads it: quoted with '...' (backslash escapes) up to and with
 * its closing quote, or up to the next white space (backslash escapes too).
 * NULL if a quoted value is never closed.
 */
static const char *
DdlnConninfoValueEnd(const char *p)
{
	if (*p == '\'')
	{
		p++;
		while (*p && *p != '\'')
		{
			if (*p == '\\' && p[1])
				p++;
			p++;
		}
		if (*p != '\'')
			return NULL;
		return p + 1;
	}
	while (*p && !isspace((unsigned char) *p))
	{
		if (*p == '\\' && p[1])
			p++;
		p++;
	}
	return p;
}

/*
 * A connection string of keyword = value pairs with the values of password
 * and sslpassword replaced by ********, everything else (white space
 * included) kept as it was.  NULL if it has no such value, or is not a
 * connection string at all.
 */
static char *
DdlnRedactConninfoPairs(const char *v)
{
	StringInfoData out;
	const char *p = v;
	bool		redacted = false;

	initStringInfo(&out);
	while (*p)
	{
		const char *key;
		int			keylen;
		const char *val;

		while (isspace((unsigned char) *p))
			appendStringInfoChar(&out, *p++);
		if (*p == '\0')
			break;
		key = p;
		while (*p && *p != '=' && !isspace((unsigned char) *p))
			p++;
		keylen = p - key;
		while (isspace((unsigned char) *p))
			p++;
		if (*p != '=' || keylen == 0)
			return NULL;		/* not a connection string */
		p++;
		while (isspace((unsigned char) *p))
			p++;
		/* the text from the keyword up to the value, as it was */
		appendBinaryStringInfo(&out, key, p - key);
		val = p;
		p = DdlnConninfoValueEnd(val);
		if (p == NULL)
			return NULL;		/* unterminated: not one libpq accepts */
		if (DdlnIsConninfoSecret(key, keylen))
		{
			appendStringInfoString(&out, "********");
			redacted = true;
		}
		else
			appendBinaryStringInfo(&out, val, p - val);
	}
	return redacted ? out.data : NULL;
}

/*
 * A libpq connection string with the values of "password" and
 * "sslpassword" replaced by ********, read as libpq reads it: the URI form
 * (postgresql://user:password@host/db?password=...) or keyword = value
 * pairs, values quoted with '...' (backslash escapes) or not.  NULL if it has
 * no such value, or is not a connection string at all.
 */
static char *
DdlnRedactConninfo(const char *v)
{
	if (pg_strncasecmp(v, "postgresql://", 13) == 0)
		return DdlnRedactConninfoUri(v, 13);
	if (pg_strncasecmp(v, "postgres://", 11) == 0)
		return DdlnRedactConninfoUri(v, 11);
	if (strstr(v, "password") == NULL)
		return NULL;			/* libpq's keywords have no escapes */
	return DdlnRedactConninfoPairs(v);
}

/*
 * "s" with the password of every URI in it replaced by ********
 * (scheme://user:password@host...), wherever in the text the URI stands:
 * NULL if it has none.  A URI's password is a secret by its place, whatever
 * the text around it (a string in a body, a message, an HTTP address).
 */
static char *
DdlnRedactUriPasswords(const char *s)
{
	StringInfoData out;
	const char *copied = s;
	const char *p = s;
	bool		redacted = false;

	if (strstr(s, "://") == NULL)
		return NULL;
	initStringInfo(&out);
	while ((p = strstr(p, "://")) != NULL)
	{
		const char *auth = p + 3;
		size_t		authlen = strcspn(auth, "/?#'\" \t\n\r");
		const char *at = NULL;
		const char *colon;

		/* a scheme before it: letters, digits, + - . */
		if (p == s || !((p[-1] >= 'a' && p[-1] <= 'z') ||
						(p[-1] >= 'A' && p[-1] <= 'Z') || DDLN_IS_DIGIT(p[-1]) ||
						p[-1] == '+' || p[-1] == '-' || p[-1] == '.'))
		{
			p = auth;
			continue;
		}
		for (const char *c = auth; c < auth + authlen; c++)
			if (*c == '@')
				at = c;
		colon = at ? memchr(auth, ':', at - auth) : NULL;
		if (colon != NULL &&
			!(at - colon - 1 == 8 && strncmp(colon + 1, "********", 8) == 0))
		{
			appendBinaryStringInfo(&out, copied, colon + 1 - copied);
			appendStringInfoString(&out, "********");
			copied = at;
			redacted = true;
		}
		p = auth + authlen;
	}
	if (!redacted)
		return NULL;
	appendStringInfoString(&out, copied);
	return out.data;
}

/* "s" as a string constant that reads the same whatever the settings. */
static void
DdlnAppendLiteral(StringInfo out, const char *s)
{
	bool		backslash = (strchr(s, '\\') != NULL);

	if (backslash)
		appendStringInfoChar(out, 'E');
	appendStringInfoChar(out, '\'');
	for (; *s; s++)
	{
		if (*s == '\'' || (backslash && *s == '\\'))
			appendStringInfoChar(out, *s);
		appendStringInfoChar(out, *s);
	}
	appendStringInfoChar(out, '\'');
}

/* "s" as a quoted name: "..." with its double quotes doubled. */
static void
DdlnAppendIdent(StringInfo out, const char *s)
{
	appendStringInfoChar(out, '"');
	for (; *s; s++)
	{
		if (*s == '"')
			appendStringInfoChar(out, '"');
		appendStringInfoChar(out, *s);
	}
	appendStringInfoChar(out, '"');
}

/*
 * "s", a constant's or a quoted name's new value, written back as the token
 * was: a quoted name as one, a dollar-quoted constant between its delimiter
 * when that still ends exactly after it, any other constant as a literal
 * that reads the same whatever the settings.
 */
static char *
DdlnRequote(const char *s, const DdlnToken *t)
{
	StringInfoData out;
	char	   *result;

	initStringInfo(&out);
	if (t->kind == DDLN_TK_QIDENT || t->kind == DDLN_TK_UIDENT)
		DdlnAppendIdent(&out, s);
	else if (t->dollar != NULL)
	{
		size_t		dlen = strlen(t->dollar);

		appendStringInfo(&out, "%s%s%s", t->dollar, s, t->dollar);
		/* the delimiter's first occurrence after the opening must close it */
		if (strstr(out.data + dlen, t->dollar) != out.data + dlen + strlen(s))
		{
			resetStringInfo(&out);
			DdlnAppendLiteral(&out, s);
		}
	}
	else
		DdlnAppendLiteral(&out, s);
	/* many constants may be rewritten: give the buffer back */
	result = pstrdup(out.data);
	pfree(out.data);
	return result;
}

static void
DdlnAddToken(DdlnTokens *toks, DdlnTokKind kind, int start, int end,
			 char *value, char *dollar)
{
	DdlnToken  *t;

	if (toks->n == toks->max)
	{
		toks->max = Max(toks->max * 2, 64);
		toks->t = toks->t ? repalloc(toks->t, sizeof(DdlnToken) * toks->max) :
			palloc(sizeof(DdlnToken) * toks->max);
	}
	t = &toks->t[toks->n++];
	t->kind = kind;
	t->start = start;
	t->end = end;
	t->value = value;
	t->dollar = dollar;
}

static void
DdlnAddEdit(DdlnEdits *edits, int start, int end, const char *text)
{
	if (edits->n == edits->max)
	{
		edits->max = Max(edits->max * 2, 16);
		edits->e = edits->e ? repalloc(edits->e, sizeof(DdlnEdit) * edits->max) :
			palloc(sizeof(DdlnEdit) * edits->max);
	}
	edits->e[edits->n].start = start;
	edits->e[edits->n].end = end;
	edits->e[edits->n].text = text;
	edits->n++;
}

/*
 * The backslash escape at q[p] of an E'...' constant (p + 1 < len): its
 * value appended to "val", the offset past it returned.  As scan.l reads
 * them: \ooo octal, \xhh hex, \uXXXX and \UXXXXXXXX code points, \b \f \n
 * \r \t \v, any other character itself.  Never fails: a value the parser
 * would refuse becomes '?' (it was not the parser's reading then).
 */
static int
DdlnUnescape(const char *q, int len, int p, StringInfo val)
{
	char		c = q[p + 1];
	int			v = 0;
	int			k;

	if (c >= '0' && c <= '7')
	{
		for (k = 0, p++; k < 3 && p < len && q[p] >= '0' && q[p] <= '7'; k++, p++)
			v = v * 8 + (q[p] - '0');
		appendStringInfoChar(val, (v & 0xFF) ? (char) (v & 0xFF) : '?');
		return p;
	}
	if (c == 'x' && p + 2 < len && DdlnHexValue(q[p + 2]) >= 0)
	{
		p += 2;
		for (k = 0; k < 2 && p < len && DdlnHexValue(q[p]) >= 0; k++, p++)
			v = v * 16 + DdlnHexValue(q[p]);
		appendStringInfoChar(val, v ? (char) v : '?');
		return p;
	}
	if (c == 'u' || c == 'U')
	{
		int			ndigits = (c == 'u') ? 4 : 8;
		pg_wchar	cp = 0;

		for (k = 0; k < ndigits; k++)
		{
			if (p + 2 + k >= len || DdlnHexValue(q[p + 2 + k]) < 0)
				break;
			cp = (cp << 4) | DdlnHexValue(q[p + 2 + k]);
		}
		if (k == ndigits)
		{
			DdlnAppendCodePoint(val, cp);
			return p + 2 + ndigits;
		}
	}
	switch (c)
	{
		case 'b':
			c = '\b';
			break;
		case 'f':
			c = '\f';
			break;
		case 'n':
			c = '\n';
			break;
		case 'r':
			c = '\r';
			break;
		case 't':
			c = '\t';
			break;
		case 'v':
			c = '\v';
			break;
		default:
			break;
	}
	appendStringInfoChar(val, c);
	return p + 2;
}

/*
 * Past the closing quote at q[p - 1] of a quoted constant: the offset of
 * the quote that continues it, or -1.  scan.l's quotecontinue: horizontal
 * space and -- comments, a newline, then any white space and -- comments
 * each ended by a newline, then a quote.
 */
static int
DdlnContinuation(const char *q, int len, int p)
{
	for (;;)
	{
		if (p < len && DDLN_IS_HSPACE(q[p]))
			p++;
		else if (p + 1 < len && q[p] == '-' && q[p + 1] == '-')
		{
			while (p < len && !DDLN_IS_NEWLINE(q[p]))
				p++;
		}
		else
			break;
	}
	if (p >= len || !DDLN_IS_NEWLINE(q[p]))
		return -1;
	for (p++; p < len;)
	{
		if (DDLN_IS_SPACE(q[p]))
			p++;
		else if (p + 1 < len && q[p] == '-' && q[p + 1] == '-')
		{
			while (p < len && !DDLN_IS_NEWLINE(q[p]))
				p++;
			if (p >= len)
				return -1;
			p++;
		}
		else
			break;
	}
	return (p < len && q[p] == '\'') ? p : -1;
}

/*
 * The quoted constant whose opening quote is at q[*p], with its
 * continuations: its value appended to "val", *p set past it.  False if it
 * is left open, unless "lenient" (it then runs to the end of the text).
 */
static bool
DdlnLexQuoted(const char *q, int len, int *pp, DdlnQuoting how, bool lenient,
			  StringInfo val)
{
	int			p = *pp + 1;

	for (;;)
	{
		if (p >= len || (how == DDLN_Q_ESCAPE && q[p] == '\\' && p + 1 >= len))
		{
			*pp = len;
			return lenient;
		}
		if (q[p] == '\'')
		{
			int			next;

			if (how != DDLN_Q_BIT && p + 1 < len && q[p + 1] == '\'')
			{
				appendStringInfoChar(val, '\'');
				p += 2;
				continue;
			}
			next = DdlnContinuation(q, len, p + 1);
			if (next < 0)
			{
				*pp = p + 1;
				return true;
			}
			p = next + 1;
			continue;
		}
		if (how == DDLN_Q_ESCAPE && q[p] == '\\')
		{
			p = DdlnUnescape(q, len, p, val);
			continue;
		}
		appendStringInfoChar(val, q[p++]);
	}
}

/*
 * The quoted name whose opening double quote is at q[*p]: its value
 * appended to "val", *p set past it.  False if it is left open, unless
 * "lenient".
 */
static bool
DdlnLexQuotedName(const char *q, int len, int *pp, bool lenient, StringInfo val)
{
	int			p = *pp + 1;

	while (p < len)
	{
		if (q[p] == '"')
		{
			if (p + 1 < len && q[p + 1] == '"')
			{
				appendStringInfoChar(val, '"');
				p += 2;
				continue;
			}
			*pp = p + 1;
			return true;
		}
		appendStringInfoChar(val, q[p++]);
	}
	*pp = len;
	return lenient;
}

/*
 * At q[*pp], skip white space and comments.  False for a block comment left
 * open, even leniently: it would hide the rest.
 */
static bool
DdlnSkipSpace(const char *q, int len, int *pp)
{
	int			p = *pp;

	while (p < len)
	{
		if (DDLN_IS_SPACE(q[p]))
			p++;
		else if (q[p] == '-' && p + 1 < len && q[p + 1] == '-')
		{
			while (p < len && !DDLN_IS_NEWLINE(q[p]))
				p++;
		}
		else if (q[p] == '/' && p + 1 < len && q[p + 1] == '*')
		{
			int			depth = 1;

			for (p += 2; p < len && depth > 0; p++)
			{
				if (q[p] == '/' && p + 1 < len && q[p + 1] == '*')
					depth++, p++;
				else if (q[p] == '*' && p + 1 < len && q[p + 1] == '/')
					depth--, p++;
			}
			if (depth > 0)
				return false;
		}
		else
			break;
	}
	*pp = p;
	return true;
}

/*
 * At q[*pp], a quoted token (a string constant in any of its spellings, a
 * bit string, a quoted name): read it into toks and return 1; 0 if no
 * quoted token begins here; -1 where the scanner would stop (see DdlnLex).
 */
static int
DdlnLexQuotedToken(const char *q, int len, int *pp, bool scs, bool lenient,
				   StringInfo val, DdlnTokens *toks)
{
	int			start = *pp;
	char		c = q[start];
	char		c1 = (start + 1 < len) ? q[start + 1] : '\0';
	char		c2 = (start + 2 < len) ? q[start + 2] : '\0';
	DdlnTokKind kind;
	bool		ok;

	if (c == '\'' ||
		((c == 'e' || c == 'E' || c == 'n' || c == 'N') && c1 == '\''))
	{
		/* N'...' reads as '...' does */
		DdlnQuoting how = (c == 'e' || c == 'E' || !scs) ?
			DDLN_Q_ESCAPE : DDLN_Q_PLAIN;

		*pp += (c != '\'') ? 1 : 0;
		ok = DdlnLexQuoted(q, len, pp, how, lenient, val);
		kind = DDLN_TK_STRING;
	}
	else if ((c == 'b' || c == 'B' || c == 'x' || c == 'X') && c1 == '\'')
	{
		*pp += 1;
		if (!DdlnLexQuoted(q, len, pp, DDLN_Q_BIT, lenient, val))
			return -1;
		DdlnAddToken(toks, DDLN_TK_OTHER, start, *pp, NULL, NULL);
		return 1;
	}
	else if ((c == 'u' || c == 'U') && c1 == '&' && c2 == '\'')
	{
		if (!scs)
			return -1;			/* "unsafe use of string constant with
								 * Unicode escapes" */
		*pp += 2;
		ok = DdlnLexQuoted(q, len, pp, DDLN_Q_PLAIN, lenient, val);
		kind = DDLN_TK_USTRING;
	}
	else if ((c == 'u' || c == 'U') && c1 == '&' && c2 == '"')
	{
		*pp += 2;
		ok = DdlnLexQuotedName(q, len, pp, lenient, val);
		kind = DDLN_TK_UIDENT;
	}
	else if (c == '"')
	{
		ok = DdlnLexQuotedName(q, len, pp, lenient, val);
		kind = DDLN_TK_QIDENT;
	}
	else
		return 0;
	if (!ok)
		return -1;
	DdlnAddToken(toks, kind, start, *pp, pnstrdup(val->data, val->len), NULL);
	return 1;
}

/*
 * At q[*pp] == '$': a parameter ($1), a dollar-quoted string ($tag$...$tag$)
 * or a lone '$'.  False for a dollar-quoted string left open, unless
 * "lenient" (then it runs to the end).
 */
static bool
DdlnLexDollar(const char *q, int len, int *pp, bool lenient, StringInfo val,
			  DdlnTokens *toks)
{
	int			start = *pp;
	int			t = start + 1;
	char	   *delim;
	int			dlen;
	int			b;
	int			e;

	if (t < len && DDLN_IS_DIGIT(q[t]))
	{
		/* a parameter, $1 */
		for (; t < len && DDLN_IS_DIGIT(q[t]); t++)
			;
		DdlnAddToken(toks, DDLN_TK_OTHER, start, *pp = t, NULL, NULL);
		return true;
	}
	if (t < len && DDLN_IS_IDSTART(q[t]))
		while (t < len && (DDLN_IS_IDSTART(q[t]) || DDLN_IS_DIGIT(q[t])))
			t++;
	if (t >= len || q[t] != '$')
	{
		DdlnAddToken(toks, DDLN_TK_OTHER, start, *pp = start + 1, NULL, NULL);
		return true;
	}

	/*
	 * $tag$: the body ends at the delimiter's first occurrence (scan.l gives
	 * back the last $ of any other $tag$ it meets)
	 */
	delim = pnstrdup(q + start, t + 1 - start);
	dlen = t + 1 - start;
	b = t + 1;
	for (e = b; e + dlen <= len; e++)
		if (q[e] == '$' && memcmp(q + e, delim, dlen) == 0)
			break;
	if (e + dlen > len)
	{
		if (!lenient)
			return false;
		e = len;
		*pp = len;
	}
	else
		*pp = e + dlen;
	appendBinaryStringInfo(val, q + b, e - b);
	DdlnAddToken(toks, DDLN_TK_STRING, start, *pp, pnstrdup(val->data, val->len), delim);
	return true;
}

/*
 * At a digit (or '.' and a digit): a number: digits, a fraction, an
 * exponent.  What may follow it (letters the parser refuses, 16's 0x1F and
 * 1_000) begins no quoted token here, so it is read as a word or an
 * operator.  Returns where it ends.
 */
static int
DdlnLexNumber(const char *q, int len, int p)
{
	while (p < len && DDLN_IS_DIGIT(q[p]))
		p++;
	if (p + 1 < len && q[p] == '.' && q[p + 1] != '.')
		for (p++; p < len && DDLN_IS_DIGIT(q[p]); p++)
			;
	if (p < len && (q[p] == 'e' || q[p] == 'E'))
	{
		int			x = p + 1;

		if (x < len && (q[x] == '+' || q[x] == '-'))
			x++;
		if (x < len && DDLN_IS_DIGIT(q[x]))
			for (p = x; p < len && DDLN_IS_DIGIT(q[p]); p++)
				;
	}
	return p;
}

/*
 * Read the text q[0, len) into tokens as PostgreSQL's scanner would with
 * standard_conforming_strings "scs".  False where that scanner would stop
 * with an error that decides nothing but whether this is the parser's
 * reading: a comment, quoted name or constant left open (unless "lenient":
 * then only a comment), U&'...' with standard_conforming_strings off.
 * Everything else is read without complaint: a reading is dropped only when
 * the parser certainly did not read the text so.
 */
static bool
DdlnLex(const char *q, int len, bool scs, bool lenient, DdlnTokens *toks)
{
	int			p = 0;
	StringInfoData val;			/* a quoted token's value, copied out */

	toks->q = q;
	initStringInfo(&val);
	for (;;)
	{
		int			start;
		char		c;
		int			quoted;

		if (!DdlnSkipSpace(q, len, &p))
			return false;
		if (p >= len)
			break;
		start = p;
		c = q[p];
		resetStringInfo(&val);
		quoted = DdlnLexQuotedToken(q, len, &p, scs, lenient, &val, toks);
		if (quoted < 0)
			return false;
		if (quoted > 0)
			continue;
		if (DDLN_IS_IDSTART(c))
		{
			while (p < len && DDLN_IS_IDCONT(q[p]))
				p++;
			DdlnAddToken(toks, DDLN_TK_WORD, start, p, NULL, NULL);
		}
		else if (c == '$')
		{
			if (!DdlnLexDollar(q, len, &p, lenient, &val, toks))
				return false;
		}
		else if (DDLN_IS_DIGIT(c) || (c == '.' && p + 1 < len && DDLN_IS_DIGIT(q[p + 1])))
		{
			p = DdlnLexNumber(q, len, p);
			DdlnAddToken(toks, DDLN_TK_OTHER, start, p, NULL, NULL);
		}
		else if (DDLN_IS_OPCHAR(c))
		{
			/* an operator, ended where a comment begins */
			for (p++; p < len && DDLN_IS_OPCHAR(q[p]); p++)
				if ((q[p] == '-' && p + 1 < len && q[p + 1] == '-') ||
					(q[p] == '/' && p + 1 < len && q[p + 1] == '*'))
					break;
			DdlnAddToken(toks, DDLN_TK_OTHER, start, p, NULL, NULL);
		}
		else
		{
			p++;
			DdlnAddToken(toks, DDLN_TK_OTHER, start, p, NULL, NULL);
		}
	}
	return true;
}

/* Is token i (a word or an operator) "w", in any case? */
static bool
DdlnTokenIs(const DdlnTokens *toks, int i, DdlnTokKind kind, const char *w)
{
	const DdlnToken *t = &toks->t[i];
	int			len = strlen(w);

	return t->kind == kind && t->end - t->start == len &&
		pg_strncasecmp(toks->q + t->start, w, len) == 0;
}

/* Is token i a U& token's UESCAPE 'c' clause's start (UESCAPE, then 'c')? */
static bool
DdlnIsUescapeClause(const DdlnTokens *toks, int i)
{
	return i + 1 < toks->n &&
		DdlnTokenIs(toks, i, DDLN_TK_WORD, "uescape") &&
		toks->t[i + 1].kind == DDLN_TK_STRING &&
		toks->t[i + 1].dollar == NULL &&
		toks->t[i + 1].value[0] != '\0';
}

/* The value of the U& token i, decoded with its UESCAPE clause if any. */
static char *
DdlnUnicodeValue(const DdlnTokens *toks, int i)
{
	char		esc = '\\';

	if (DdlnIsUescapeClause(toks, i + 1))
		esc = toks->t[i + 2].value[0];
	return DdlnDecodeUnicode(toks->t[i].value, esc);
}

/*
 * The name given to the constant at token i, if any: the word or quoted
 * name before it (before its "=", ":=" or "=>"; before the UESCAPE clause
 * of a U&"..." name), decoded; NULL when a constant, an operator or
 * punctuation comes before it.
 */
static char *
DdlnNameBefore(const DdlnTokens *toks, int i)
{
	int			j = i - 1;
	const DdlnToken *t;

	if (j >= 0 && (DdlnTokenIs(toks, j, DDLN_TK_OTHER, "=") ||
				   DdlnTokenIs(toks, j, DDLN_TK_OTHER, ":=") ||
				   DdlnTokenIs(toks, j, DDLN_TK_OTHER, "=>")))
		j--;
	if (j >= 2 && toks->t[j - 2].kind == DDLN_TK_UIDENT &&
		DdlnIsUescapeClause(toks, j - 1))
		j -= 2;
	if (j < 0)
		return NULL;
	t = &toks->t[j];
	switch (t->kind)
	{
		case DDLN_TK_WORD:
			return pnstrdup(toks->q + t->start, t->end - t->start);
		case DDLN_TK_QIDENT:
			return t->value;
		case DDLN_TK_UIDENT:
			return DdlnUnicodeValue(toks, j);
		default:
			return NULL;
	}
}

/*
 * A constant's value read as SQL text (DdlnRedactText one level deeper),
 * taken from "inners" when the other reading of the same text read the same
 * constant, else read and added there.
 */
static char *
DdlnInnerText(DdlnInners *inners, const DdlnToken *t, const char *value,
			  int depth)
{
	int			lo = 0;
	int			hi = inners->n - 1;
	char	   *inner;

	/* the first reading adds them in order of their start */
	while (lo <= hi)
	{
		int			mid = (lo + hi) / 2;
		DdlnInner  *e = &inners->e[mid];

		if (e->start == t->start)
		{
			/* the same constant: its text, or this reading's own value */
			if (e->end == t->end && strcmp(e->value, value) == 0)
				return (e->inner == e->value) ? (char *) value : e->inner;
			break;
		}
		if (e->start < t->start)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	inner = DdlnRedactText(value, strlen(value), true, depth + 1);
	if (inners->n == 0 || inners->e[inners->n - 1].start < t->start)
	{
		if (inners->n == inners->max)
		{
			inners->max = Max(inners->max * 2, 16);
			inners->e = inners->e ?
				repalloc(inners->e, sizeof(DdlnInner) * inners->max) :
				palloc(sizeof(DdlnInner) * inners->max);
		}
		inners->e[inners->n].start = t->start;
		inners->e[inners->n].end = t->end;
		inners->e[inners->n].value = value;
		inners->e[inners->n].inner = inner;
		inners->n++;
	}
	return inner;
}

/*
 * One reading of the text q[0, len) (standard_conforming_strings "scs"):
 * the replacements it asks for added to "edits".  False if the text cannot
 * be read so (DdlnLex).  "depth": how many constants the text is inside;
 * "inners": what reading its constants as SQL text gave, shared by the two
 * readings.
 */
static bool
DdlnReadingEdits(const char *q, int len, bool scs, bool lenient, int depth,
				 DdlnEdits *edits, DdlnInners *inners)
{
	DdlnTokens	toks = {NULL, NULL, 0, 0};

	if (!DdlnLex(q, len, scs, lenient, &toks))
		return false;
	for (int i = 0; i < toks.n; i++)
	{
		DdlnToken  *t = &toks.t[i];
		bool		is_name = (t->kind == DDLN_TK_QIDENT ||
								t->kind == DDLN_TK_UIDENT);
		int			end = t->end;
		char	   *value = t->value;
		char	   *redacted;
		const char *text = NULL;

		if (!is_name && t->kind != DDLN_TK_STRING && t->kind != DDLN_TK_USTRING)
			continue;
		if (t->kind == DDLN_TK_USTRING || t->kind == DDLN_TK_UIDENT)
		{
			value = DdlnUnicodeValue(&toks, i);
			if (DdlnIsUescapeClause(&toks, i + 1))
			{
				/* the clause goes with it */
				end = toks.t[i + 2].end;
				i += 2;
			}
		}
		if (DdlnIsSecretName(DdlnNameBefore(&toks, t - toks.t)))
			text = is_name ? DDLN_REDACTED_IDENT : DDLN_REDACTED;
		else if ((redacted = DdlnRedactConninfo(value)) != NULL)
			text = DdlnRequote(redacted, t);
		else if (DdlnMayHoldSecret(value))
		{
			/*
			 * text inside a constant (a body, an EXECUTE'd string): read as
			 * SQL, then the passwords of the URIs left anywhere in it
			 */
			char	   *inner = NULL;

			if (depth < DDLN_REDACT_DEPTH)
				inner = DdlnInnerText(inners, t, value, depth);
			if (inner == NULL)
				text = is_name ? DDLN_REDACTED_IDENT : DDLN_REDACTED;
			else
			{
				if ((redacted = DdlnRedactUriPasswords(inner)) != NULL)
					inner = redacted;
				if (inner != value)
					text = DdlnRequote(inner, t);
			}
		}
		if (text != NULL)
			DdlnAddEdit(edits, t->start, end, text);
	}
	return true;
}

static int
DdlnEditCmp(const void *a, const void *b)
{
	const DdlnEdit *x = a;
	const DdlnEdit *y = b;

	if (x->start != y->start)
		return (x->start < y->start) ? -1 : 1;
	if (x->end != y->end)
		return (x->end < y->end) ? -1 : 1;
	return 0;
}

/*
 * The text q[0, len) (NUL-terminated there) with its secrets redacted,
 * read both ways standard_conforming_strings may have read it: q itself if
 * nothing is to be redacted, NULL if neither reading can scan it.  Where
 * the two readings' replacements overlap and differ, the union of their
 * spans becomes '********'.
 */
static char *
DdlnRedactText(const char *q, int len, bool lenient, int depth)
{
	DdlnEdits	edits = {NULL, 0, 0};
	DdlnInners	inners = {NULL, 0, 0};
	bool		on;
	bool		off = false;
	StringInfoData out;
	int			copied = 0;

	on = DdlnReadingEdits(q, len, true, lenient, depth, &edits, &inners);
	/* without a backslash the readings differ only in refusing U&'' */
	if (memchr(q, '\\', len) != NULL)
		off = DdlnReadingEdits(q, len, false, lenient, depth, &edits, &inners);
	if (!on && !off)
		return NULL;
	if (edits.n == 0)
		return (char *) q;

	qsort(edits.e, edits.n, sizeof(DdlnEdit), DdlnEditCmp);
	initStringInfo(&out);
	for (int i = 0; i < edits.n;)
	{
		DdlnEdit   *e = &edits.e[i];
		int			end = e->end;
		bool		same = true;

		for (i++; i < edits.n && edits.e[i].start < end; i++)
		{
			if (edits.e[i].start != e->start || edits.e[i].end != e->end ||
				strcmp(edits.e[i].text, e->text) != 0)
				same = false;
			end = Max(end, edits.e[i].end);
		}
		appendBinaryStringInfo(&out, q + copied, e->start - copied);
		appendStringInfoString(&out, same ? e->text : DDLN_REDACTED);
		copied = end;
	}
	appendBinaryStringInfo(&out, q + copied, len - copied);
	return out.data;
}

/*
 * Statement text with secrets replaced, decided by what the statement says
 * rather than by words found in it (see the file's header):
 * - the constant given to a name like a password (password, passwd,
 *	 secret, in any case, however the name is spelled: OPTIONS (password
 *	 '...') of a USER MAPPING, SERVER or FOREIGN TABLE, a role's PASSWORD
 *	 '...', "name = / := / => constant") becomes '********';
 * - a constant that is a libpq connection string (CREATE and ALTER
 *	 SUBSCRIPTION ... CONNECTION, a conninfo option, dblink_connect's
 *	 argument), in keyword = value or URI form, keeps everything but its
 *	 password and sslpassword values;
 * - the same inside constants (function and DO bodies, EXECUTE'd strings);
 * - the password of any URI (scheme://user:password@host), wherever it is.
 * Escapes (E'\x70assword=...', U&'p\0061ssword=...', U&"p\0061ssword") are
 * decoded before anything is decided, and comments are not tokens: a
 * comment mentioning a password changes nothing around it.  Each constant
 * replaced spans exactly its own text.  Statements that cannot hold such a
 * secret are returned as they are; one redaction cannot read is returned
 * as DDLN_QUERY_WITHHELD.  Never raises an error, a warning or a notice.
 */
char *
DdlnRedactSecrets(const char *query)
{
	MemoryContext work;
	MemoryContext caller;
	char	   *result;
	char	   *uris;

	if (query == NULL)
		return NULL;
	if (!DdlnMayHoldSecret(query))
		return (char *) query;

	/* tokens and values of every level, freed at once */
	work = AllocSetContextCreate(CurrentMemoryContext, "ddl_notify redaction",
								 ALLOCSET_DEFAULT_SIZES);
	caller = MemoryContextSwitchTo(work);
	result = DdlnRedactText(query, strlen(query), false, 0);
	if (result != NULL && (uris = DdlnRedactUriPasswords(result)) != NULL)
		result = uris;			/* a URI's password outside any constant */
	MemoryContextSwitchTo(caller);
	if (result == NULL)
		result = pstrdup(DDLN_QUERY_WITHHELD);
	else if (result != query)
		result = pstrdup(result);
	MemoryContextDelete(work);
	return result;
}

/*
 * The statement text as stored: at most ddl_notify.max_query_length bytes
 * (-1: no limit), cut at a character boundary, with a note of how much was
 * cut.  Every row of a statement carries its text (a DROP of 1,000 tables
 * writes 1,000 rows), and the delivery worker reads whole rows: the cap is
 * what bounds a row, whatever the size of a statement's comments.  Applied
 * after DdlnRedactSecrets(), which must see the whole statement.
 */
char *
DdlnCapQuery(const char *query)
{
	size_t		len;
	int			keep;

	if (query == NULL || ddln_max_query_length < 0)
		return (char *) query;
	len = strlen(query);
	if (len <= (size_t) ddln_max_query_length)
		return (char *) query;
	keep = pg_mbcliplen(query, (int) Min(len, (size_t) ddln_max_query_length),
						ddln_max_query_length);
	return psprintf("%.*s\n-- [ddl_notify: %zu more bytes cut, ddl_notify.max_query_length = %d]",
					keep, query, len - keep, ddln_max_query_length);
}
