/*
 * bench_sql.c — the query text of `pgwarp bench ssb`: a small SQL tokenizer,
 * the rewrite of SSB table names to their *_arrow foreign tables (only in
 * table position of FROM clauses), and the ORDER BY keys used to compare
 * answers.  See cmd_bench.c for the rules.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "pgwarp.h"
#include "bench.h"

static const char *const ssb_tables[] = {
	"lineorder", "customer", "supplier", "part", "date", NULL
};

/* --------------------------------------------------------- SQL lexing */

typedef enum TokKind
{
	T_IDENT,					/* unquoted identifier or keyword */
	T_QIDENT,					/* "quoted identifier" */
	T_NUMBER,
	T_STRING,					/* any string constant */
	T_LPAREN,
	T_RPAREN,
	T_COMMA,
	T_DOT,
	T_SEMI,
	T_OP						/* any other character(s) */
} TokKind;

typedef struct Token
{
	TokKind		kind;
	size_t		start,
				end;			/* [start, end) in the text */
	char		word[64];		/* identifiers: lower-cased (unquoted) or
								 * literal (quoted) name, truncated */
} Token;

static bool
ident_start(unsigned char c)
{
	return isalpha(c) || c == '_' || c >= 0x80;
}

static bool
ident_char(unsigned char c)
{
	return isalnum(c) || c == '_' || c == '$' || c >= 0x80;
}

/* The end of the block comment at s[i] ("/" "*"; nested ones count). */
static size_t
block_comment_end(const char *s, size_t n, size_t i)
{
	int			depth = 1;

	i += 2;
	while (i < n && depth > 0)
	{
		if (s[i] == '/' && i + 1 < n && s[i + 1] == '*')
		{
			depth++;
			i += 2;
		}
		else if (s[i] == '*' && i + 1 < n && s[i + 1] == '/')
		{
			depth--;
			i += 2;
		}
		else
			i++;
	}
	return i;
}

/* The end of the string constant at s[i] ('...' or E'...'). */
static size_t
string_end(const char *s, size_t n, size_t i)
{
	bool		esc = (s[i] != '\'');

	i += esc ? 2 : 1;
	while (i < n)
	{
		if (esc && s[i] == '\\' && i + 1 < n)
			i += 2;
		else if (s[i] == '\'' && i + 1 < n && s[i + 1] == '\'')
			i += 2;
		else if (s[i] == '\'')
		{
			i++;
			break;
		}
		else
			i++;
	}
	return i;
}

/* A token starting with '$' at s[i]: $tag$ ... $tag$, else an operator. */
static size_t
scan_dollar(const char *s, size_t n, size_t i, Token *tk)
{
	/* $tag$ ... $tag$ (a $1 parameter falls through below) */
	size_t		j = i + 1;

	while (j < n && s[j] != '$' && ident_char((unsigned char) s[j]) && s[j] != '$')
		j++;
	if (j < n && s[j] == '$')
	{
		size_t		taglen = j - i + 1;
		const char *end;

		tk->kind = T_STRING;
		end = NULL;
		for (size_t k = j + 1; k + taglen <= n; k++)
			if (memcmp(s + k, s + i, taglen) == 0)
			{
				end = s + k;
				break;
			}
		i = end ? (size_t) (end - s) + taglen : n;
	}
	else
	{
		tk->kind = T_OP;
		i++;
	}
	return i;
}

/* The quoted identifier at s[i], its name into tk->word. */
static size_t
scan_qident(const char *s, size_t n, size_t i, Token *tk)
{
	size_t		w = 0;

	tk->kind = T_QIDENT;
	i++;
	while (i < n)
	{
		if (s[i] == '"' && i + 1 < n && s[i + 1] == '"')
		{
			if (w + 1 < sizeof(tk->word))
				tk->word[w++] = '"';
			i += 2;
		}
		else if (s[i] == '"')
		{
			i++;
			break;
		}
		else
		{
			if (w + 1 < sizeof(tk->word))
				tk->word[w++] = s[i];
			i++;
		}
	}
	return i;
}

/* The end of the number at s[i]. */
static size_t
number_end(const char *s, size_t n, size_t i)
{
	while (i < n && (isalnum((unsigned char) s[i]) || s[i] == '.' || s[i] == '_' ||
					 ((s[i] == '+' || s[i] == '-') &&
					  (s[i - 1] == 'e' || s[i - 1] == 'E'))))
	{
		/* stop before "1..": not a number's dot */
		if (s[i] == '.' && i + 1 < n && s[i + 1] == '.')
			break;
		i++;
	}
	return i;
}

/* The kind of a one-character token. */
static TokKind
punct_kind(unsigned char c)
{
	switch (c)
	{
		case '(':
			return T_LPAREN;
		case ')':
			return T_RPAREN;
		case ',':
			return T_COMMA;
		case '.':
			return T_DOT;
		case ';':
			return T_SEMI;
		default:
			return T_OP;
	}
}

/*
 * Tokenize PostgreSQL SQL text well enough to find clauses: comments
 * (nested block comments too) are dropped; string constants (with E''
 * backslash escapes and $tag$ quoting) and quoted identifiers are single
 * tokens.  Returns the number of tokens in *out (malloc'd).
 */
static int
sql_tokens(const char *s, Token **out)
{
	size_t		n = strlen(s);
	size_t		i = 0;
	int			cnt = 0,
				cap = 64;
	Token	   *t = xmalloc(sizeof(Token) * cap);

	while (i < n)
	{
		unsigned char c = s[i];
		Token		tk;

		memset(&tk, 0, sizeof(tk));
		if (isspace(c))
		{
			i++;
			continue;
		}
		if (c == '-' && i + 1 < n && s[i + 1] == '-')
		{
			while (i < n && s[i] != '\n')
				i++;
			continue;
		}
		if (c == '/' && i + 1 < n && s[i + 1] == '*')
		{
			i = block_comment_end(s, n, i);
			continue;
		}
		tk.start = i;
		if (c == '\'' ||
			((c == 'e' || c == 'E') && i + 1 < n && s[i + 1] == '\''))
		{
			tk.kind = T_STRING;
			i = string_end(s, n, i);
		}
		else if (c == '$' && i + 1 < n &&
				 (s[i + 1] == '$' || ident_start((unsigned char) s[i + 1])))
			i = scan_dollar(s, n, i, &tk);
		else if (c == '"')
			i = scan_qident(s, n, i, &tk);
		else if (ident_start(c))
		{
			size_t		w = 0;

			tk.kind = T_IDENT;
			while (i < n && ident_char((unsigned char) s[i]))
			{
				if (w + 1 < sizeof(tk.word))
					tk.word[w++] = tolower((unsigned char) s[i]);
				i++;
			}
		}
		else if (isdigit(c) || (c == '.' && i + 1 < n && isdigit((unsigned char) s[i + 1])))
		{
			tk.kind = T_NUMBER;
			i = number_end(s, n, i);
		}
		else
		{
			i++;
			tk.kind = punct_kind(c);
		}
		tk.end = i;
		if (cnt == cap)
		{
			cap *= 2;
			t = xrealloc(t, sizeof(Token) * cap);
		}
		t[cnt++] = tk;
	}
	*out = t;
	return cnt;
}

static bool
is_word(const Token *t, const char *w)
{
	return t->kind == T_IDENT && strcmp(t->word, w) == 0;
}

static bool
word_in(const Token *t, const char *const *list)
{
	if (t->kind != T_IDENT)
		return false;
	for (; *list; list++)
		if (strcmp(t->word, *list) == 0)
			return true;
	return false;
}

/* keywords that end a FROM clause at their depth */
static const char *const from_enders[] = {
	"where", "group", "order", "having", "limit", "offset", "fetch", "for",
	"window", "union", "intersect", "except", "select", "returning", "values",
	NULL
};

/* keywords after which "(" opens a subquery or list, not function args */
static const char *const paren_keywords[] = {
	"from", "join", "in", "exists", "any", "all", "some", "as", "lateral",
	"not", "and", "or", "where", "select", "on", "having", "union",
	"intersect", "except", "then", "else", "when", "using", "with", "by",
	"values", "over", NULL
};

/* words that cannot be a table alias (clause starts, join words) */
static const char *const not_alias[] = {
	"where", "group", "order", "having", "limit", "offset", "fetch", "for",
	"window", "union", "intersect", "except", "join", "inner", "left",
	"right", "full", "cross", "natural", "on", "using", "tablesample",
	"returning", NULL
};

static int
ssb_table_index(const Token *t)
{
	if (t->kind != T_IDENT && t->kind != T_QIDENT)
		return -1;
	for (int k = 0; ssb_tables[k]; k++)
		if (strcmp(t->word, ssb_tables[k]) == 0)
			return k;
	return -1;
}

#define MAX_DEPTH 128

/*
 * The query text with the SSB tables in FROM clauses replaced by their
 * _arrow foreign tables (the rule is in the file header), or only lineorder
 * if fact_only.  malloc'd.
 */
char *
rewrite_to_arrow(const char *sql, bool fact_only)
{
	Token	   *t;
	int			n = sql_tokens(sql, &t);
	bool		in_from[MAX_DEPTH];
	bool		expect[MAX_DEPTH];
	bool		funcargs[MAX_DEPTH];
	int			d = 0;
	size_t		copied = 0;
	Buf			out = {0};

	in_from[0] = expect[0] = funcargs[0] = false;
	for (int i = 0; i < n; i++)
	{
		const Token *tk = &t[i];
		const Token *next = i + 1 < n ? &t[i + 1] : NULL;
		const Token *prev = i > 0 ? &t[i - 1] : NULL;

		switch (tk->kind)
		{
			case T_LPAREN:
				{
					bool		was_expect = in_from[d] && expect[d];
					bool		fn = prev && (prev->kind == T_QIDENT ||
											  (prev->kind == T_IDENT &&
											   !word_in(prev, paren_keywords)));

					expect[d] = false;
					if (d + 1 < MAX_DEPTH)
						d++;
					in_from[d] = was_expect;
					expect[d] = was_expect;
					funcargs[d] = fn && !was_expect;
					continue;
				}
			case T_RPAREN:
				if (d > 0)
					d--;
				continue;
			case T_COMMA:
				if (in_from[d])
					expect[d] = true;
				continue;
			case T_DOT:
				continue;
			case T_IDENT:
				if (is_word(tk, "from") && !funcargs[d])
				{
					in_from[d] = true;
					expect[d] = true;
					continue;
				}
				if (word_in(tk, from_enders))
				{
					in_from[d] = false;
					expect[d] = false;
					continue;
				}
				if (in_from[d] && is_word(tk, "join"))
				{
					expect[d] = true;
					continue;
				}
				if (in_from[d] && expect[d] &&
					(is_word(tk, "only") || is_word(tk, "lateral")))
					continue;
				break;
			default:
				break;
		}
		if (!(in_from[d] && expect[d]))
			continue;
		/* a schema qualifier: the table name follows the dot */
		if ((tk->kind == T_IDENT || tk->kind == T_QIDENT) &&
			next && next->kind == T_DOT)
			continue;
		expect[d] = false;
		if (ssb_table_index(tk) < 0 || (next && next->kind == T_LPAREN) ||
			(fact_only && ssb_table_index(tk) != 0))
			continue;
		/* rewrite this token */
		buf_putn(&out, sql + copied, tk->start - copied);
		if (tk->kind == T_QIDENT)
		{
			buf_putn(&out, sql + tk->start, tk->end - tk->start - 1);
			buf_puts(&out, "_arrow\"");
		}
		else
		{
			buf_putn(&out, sql + tk->start, tk->end - tk->start);
			buf_puts(&out, "_arrow");
		}
		if (next == NULL ||
			!(is_word(next, "as") || next->kind == T_QIDENT ||
			  (next->kind == T_IDENT && !word_in(next, not_alias))))
		{
			buf_puts(&out, " AS ");
			buf_putn(&out, sql + tk->start, tk->end - tk->start);
		}
		copied = tk->end;
	}
	buf_puts(&out, sql + copied);
	free(t);
	return out.s;
}

/*
 * The top-level ORDER BY of a query as output column indexes.  Returns -1
 * when there is no top-level ORDER BY, 0 when one exists but an item is not
 * a plain output column name or ordinal (then *nkeys = 0), else 1.
 */
int
order_by_keys(const char *sql, const PGresult *res, int **keys, int *nkeys)
{
	Token	   *t;
	int			n = sql_tokens(sql, &t);
	int			d = 0;
	int			pos = -1;
	int			rc = 1;

	*keys = NULL;
	*nkeys = 0;
	for (int i = 0; i + 1 < n; i++)
	{
		if (t[i].kind == T_LPAREN)
			d++;
		else if (t[i].kind == T_RPAREN && d > 0)
			d--;
		else if (d == 0 && is_word(&t[i], "order") && is_word(&t[i + 1], "by"))
			pos = i + 2;
	}
	if (pos < 0)
	{
		free(t);
		return -1;
	}
	*keys = xmalloc(sizeof(int) * (n + 1));
	for (int i = pos; i < n && rc == 1;)
	{
		int			col = -1;
		int			j = i;

		/* an item: [qualifier.]name | ordinal, then ASC/DESC/NULLS x */
		if ((t[j].kind == T_IDENT || t[j].kind == T_QIDENT) &&
			j + 2 < n && t[j + 1].kind == T_DOT)
			j += 2;
		if (t[j].kind == T_IDENT || t[j].kind == T_QIDENT)
		{
			for (int c = 0; c < PQnfields(res); c++)
				if (strcmp(PQfname(res, c), t[j].word) == 0)
					col = c;
		}
		else if (t[j].kind == T_NUMBER)
		{
			long		v = strtol(sql + t[j].start, NULL, 10);

			if (v >= 1 && v <= PQnfields(res))
				col = (int) v - 1;
		}
		j++;
		while (j < n && (is_word(&t[j], "asc") || is_word(&t[j], "desc") ||
						 is_word(&t[j], "nulls") || is_word(&t[j], "first") ||
						 is_word(&t[j], "last")))
			j++;
		if (col < 0 ||
			!(j == n || t[j].kind == T_COMMA || t[j].kind == T_SEMI ||
			  is_word(&t[j], "limit") || is_word(&t[j], "offset") ||
			  is_word(&t[j], "fetch") || is_word(&t[j], "for")))
		{
			rc = 0;
			break;
		}
		(*keys)[(*nkeys)++] = col;
		if (j < n && t[j].kind == T_COMMA)
			i = j + 1;
		else
			break;
	}
	if (rc == 0)
	{
		free(*keys);
		*keys = NULL;
		*nkeys = 0;
	}
	free(t);
	return rc;
}


/* the statement without trailing semicolons, whitespace and comments */
char *
clean_sql(char *text)
{
	Token	   *t;
	int			n = sql_tokens(text, &t);
	int			last = n - 1;

	while (last >= 0 && t[last].kind == T_SEMI)
		last--;
	if (last < 0)
		text[0] = '\0';
	else
		text[t[last].end] = '\0';
	for (int i = 0; i <= last; i++)
		if (t[i].kind == T_SEMI)
		{
			free(t);
			return NULL;		/* more than one statement */
		}
	free(t);
	return text;
}
