/*-------------------------------------------------------------------------
 *
 * querytext.c
 *	  The statement text an event stores in "query": secrets redacted, length
 *	  capped.  Capture (capture.c) calls it once per trigger call, as
 *	  DdlnCapQuery(DdlnRedactSecrets(DdlnCurrentStatementText())), when
 *	  ddl_notify.capture_query is on.
 *
 * Rules kept here:
 * - Secrets are redacted by meaning, not by words found in the text
 *	 (DdlnRedactSecrets): the string constant given to an option named like
 *	 a password (password, passwd, secret, any case, however the name is
 *	 spelled) becomes '********'; a string constant that is a libpq
 *	 connection string, in keyword = value or URI form, keeps everything but
 *	 its password and sslpassword values.  Everything else, comments
 *	 included, is left byte for byte; a replaced constant spans exactly its
 *	 own text.  A statement that cannot hold such a secret (cheap test
 *	 first) is returned as it is.
 * - Constants and names are read with PostgreSQL's own scanner, so their
 *	 escapes are decoded before anything is decided; the scan emits no
 *	 warning (escape_string_warning is off for it).
 * - The text is then cut to ddl_notify.max_query_length bytes (-1: no
 *	 limit) at a character boundary, with a note of how much was cut
 *	 (DdlnCapQuery).  The cap comes after redaction, which must see the
 *	 whole statement; it is what bounds an event row.
 * - Pure functions of their argument and the settings: no catalog access,
 *	 no SQL, no state; results are palloc'd in the caller's context (or the
 *	 argument itself when nothing changed).
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/keywords.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "parser/gramparse.h"
#include "parser/scanner.h"
#include "parser/scansup.h"

#include "ddl_notify.h"

/*
 * flex's accessor of the core scanner's current token text: exported by the
 * server (as every flex scanner's is) but declared in no header.  After
 * core_yylex() returned a quoted string constant it points just past the
 * constant's closing quote (the scanner looked ahead for a continuation and
 * gave the look-ahead back), after a dollar-quoted one at its closing
 * delimiter.
 */
extern char *core_yyget_text(core_yyscan_t yyscanner);

/* One token of a statement, as redaction needs it. */
typedef struct DdlnToken
{
	int			tok;
	int			start;			/* offset of its first byte */
	int			end;			/* past its last byte (string constants) */
	char	   *str;			/* IDENT, UIDENT, SCONST, USCONST: value as
								 * the scanner gives it */
} DdlnToken;

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
	bool		utf8 = (GetDatabaseEncoding() == PG_UTF8);

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
		if (c > 0 && c < 0x80)
			appendStringInfoChar(&out, (char) c);
		else if (utf8 && is_valid_unicode_codepoint(c))
		{
			unsigned char buf[8];

			unicode_to_utf8(c, buf);
			appendBinaryStringInfo(&out, (char *) buf, pg_utf_mblen(buf));
		}
		else
			appendStringInfoChar(&out, '?');
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
 * A libpq connection string with the values of "password" and
 * "sslpassword" replaced by ********, read as libpq reads it: the URI form
 * (postgresql://user:password@host/db?password=...) or keyword = value
 * pairs, values quoted with '...' (backslash escapes) or not.  NULL if it has
 * no such value, or is not a connection string at all.
 */
static char *
DdlnRedactConninfo(const char *v)
{
	StringInfoData out;
	const char *p = v;
	bool		redacted = false;
	size_t		prefix = 0;

	initStringInfo(&out);
	if (pg_strncasecmp(v, "postgresql://", 13) == 0)
		prefix = 13;
	else if (pg_strncasecmp(v, "postgres://", 11) == 0)
		prefix = 11;
	if (prefix > 0)
	{
		const char *auth = v + prefix;
		size_t		authlen = strcspn(auth, "/?");
		const char *at = NULL;
		const char *q;

		for (const char *c = auth; c < auth + authlen; c++)
			if (*c == '@')
				at = c;
		appendBinaryStringInfo(&out, v, prefix);
		if (at != NULL)
		{
			const char *colon = memchr(auth, ':', at - auth);

			if (colon != NULL)
			{
				appendBinaryStringInfo(&out, auth, colon + 1 - auth);
				appendStringInfoString(&out, "********");
				appendBinaryStringInfo(&out, at, auth + authlen - at);
				redacted = true;
			}
			else
				appendBinaryStringInfo(&out, auth, authlen);
		}
		else
			appendBinaryStringInfo(&out, auth, authlen);
		p = auth + authlen;
		q = strchr(p, '?');
		if (q == NULL)
		{
			appendStringInfoString(&out, p);
			return redacted ? out.data : NULL;
		}
		appendBinaryStringInfo(&out, p, q + 1 - p);
		p = q + 1;
		while (*p)
		{
			size_t		plen = strcspn(p, "&");
			const char *eq = memchr(p, '=', plen);

			if (eq != NULL)
			{
				char	   *key = DdlnPercentDecode(p, eq - p);

				if (DdlnIsConninfoSecret(key, strlen(key)))
				{
					appendBinaryStringInfo(&out, p, eq + 1 - p);
					appendStringInfoString(&out, "********");
					redacted = true;
				}
				else
					appendBinaryStringInfo(&out, p, plen);
			}
			else
				appendBinaryStringInfo(&out, p, plen);
			p += plen;
			if (*p == '&')
				appendStringInfoChar(&out, *p++);
		}
		return redacted ? out.data : NULL;
	}

	/* keyword = value ... */
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
				return NULL;	/* unterminated: not one libpq accepts */
			p++;
		}
		else
		{
			while (*p && !isspace((unsigned char) *p))
			{
				if (*p == '\\' && p[1])
					p++;
				p++;
			}
		}
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

/*
 * The escape character of the U&'...' or U&"..." token at i: that of a
 * UESCAPE 'c' clause after it, else a backslash.
 */
static char
DdlnUnicodeEscape(const DdlnToken *t, int n, int i)
{
	if (i + 2 < n && t[i + 1].tok == UESCAPE && t[i + 2].tok == SCONST &&
		t[i + 2].str != NULL && t[i + 2].str[0] != '\0')
		return t[i + 2].str[0];
	return '\\';
}

/*
 * The name a token gives an option, lower case, decoded; NULL for a token
 * that is no name (a constant, an operator, punctuation).
 */
static char *
DdlnTokenName(const char *query, const DdlnToken *t, int n, int i)
{
	const char *p = query + t[i].start;
	int			len = 0;

	if (t[i].tok == IDENT)
		return t[i].str;
	if (t[i].tok == UIDENT)
		return DdlnDecodeUnicode(t[i].str, DdlnUnicodeEscape(t, n, i));
	if (t[i].tok == SCONST || t[i].tok == USCONST || t[i].tok == BCONST ||
		t[i].tok == XCONST || t[i].tok == ICONST || t[i].tok == FCONST ||
		t[i].tok == PARAM || t[i].tok == Op)
		return NULL;
	/* a keyword: its letters as written */
	while (isalpha((unsigned char) p[len]) || p[len] == '_')
		len++;
	return len > 0 ? downcase_identifier(p, len, false, false) : NULL;
}

/*
 * Statement text with secrets replaced, decided by what the statement says
 * rather than by words found in it:
 * - the string constant given to an option named like a password
 *	 (password, passwd, secret, in any case, however the name is spelled:
 *	 OPTIONS (password '...') of a USER MAPPING, SERVER or FOREIGN TABLE)
 *	 becomes '********';
 * - a string constant that is a libpq connection string (CREATE and ALTER
 *	 SUBSCRIPTION ... CONNECTION, a conninfo option), in keyword = value or
 *	 URI form, keeps everything but its password and sslpassword values.
 * Constants and names are read with PostgreSQL's own scanner, so their
 * escapes (E'\x70assword=...', U&'p\0061ssword=...', U&"p\0061ssword") are
 * decoded before anything is decided, and comments are not tokens: a
 * comment mentioning a password changes nothing around it.  Each constant
 * replaced spans exactly its own text.  Statements that cannot hold such a
 * secret are returned as they are.
 */
char *
DdlnRedactSecrets(const char *query)
{
	core_yyscan_t scanner;
	core_yy_extra_type extra;
	core_YYSTYPE lval;
	YYLTYPE		loc;
	StringInfoData out;
	DdlnToken  *t;
	int			n = 0;
	int			max = 64;
	int			copied = 0;
	int			len;

	if (query == NULL)
		return NULL;
	if (!DdlnMayHoldSecret(query))
		return (char *) query;

	len = strlen(query);
	t = palloc(sizeof(DdlnToken) * max);
	scanner = scanner_init(query, &extra, &ScanKeywords, ScanKeywordTokens);
	extra.escape_string_warning = false;	/* capture never warns */
	for (;;)
	{
		int			tok = core_yylex(&lval, &loc, scanner);

		if (tok == 0)
			break;
		if (n == max)
		{
			max *= 2;
			t = repalloc(t, sizeof(DdlnToken) * max);
		}
		t[n].tok = tok;
		t[n].start = loc;
		t[n].end = -1;
		t[n].str = NULL;
		if (tok == IDENT || tok == UIDENT || tok == SCONST || tok == USCONST)
			t[n].str = lval.str;
		if (tok == SCONST || tok == USCONST)
		{
			int			at = core_yyget_text(scanner) - extra.scanbuf;

			if (query[loc] == '$')
			{
				/* at the closing delimiter, as long as the opening one */
				const char *d = strchr(query + loc + 1, '$');

				at += (d - (query + loc)) + 1;
			}
			t[n].end = Min(Max(at, loc), len);
		}
		n++;
	}
	scanner_finish(scanner);

	initStringInfo(&out);
	for (int i = 0; i < n; i++)
	{
		char	   *value;
		char	   *redacted = NULL;
		int			end = t[i].end;
		int			name;
		bool		by_name;

		if (t[i].tok != SCONST && t[i].tok != USCONST)
			continue;
		value = (t[i].tok == USCONST) ?
			DdlnDecodeUnicode(t[i].str, DdlnUnicodeEscape(t, n, i)) : t[i].str;
		if (t[i].tok == USCONST && i + 2 < n && t[i + 1].tok == UESCAPE &&
			t[i + 2].tok == SCONST)
			end = t[i + 2].end; /* the UESCAPE clause goes with it */
		/* the option's name comes before, with its UESCAPE clause if any */
		name = i - 1;
		if (name >= 2 && t[name].tok == SCONST && t[name - 1].tok == UESCAPE)
			name -= 2;
		by_name = (name >= 0 && DdlnIsSecretName(DdlnTokenName(query, t, n, name)));
		if (!by_name)
			redacted = DdlnRedactConninfo(value);
		if (!by_name && redacted == NULL)
			continue;
		appendBinaryStringInfo(&out, query + copied, t[i].start - copied);
		if (by_name)
			appendStringInfoString(&out, "'********'");
		else
			DdlnAppendLiteral(&out, redacted);
		copied = end;
	}
	if (copied == 0)
		return (char *) query;
	appendBinaryStringInfo(&out, query + copied, len - copied);
	return out.data;
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
