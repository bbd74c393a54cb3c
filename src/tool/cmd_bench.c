/*
 * cmd_bench.c — pgwarp bench ssb: the Star Schema Benchmark runner.
 *
 *   pgwarp bench ssb [-d DSN] [--modes heap,arrow[,warp-cpu,warp-gpu,warp]]
 *                    [--runs N] [--queries DIR] [--out DIR] [--timeout S]
 *                    [--only q1.1,...] [--show-sql]
 *
 * For every query file (DIR/q*.sql, in natural order) and every mode: one
 * warm-up run, then N timed runs (wall time of PQexec, result transfer
 * included); median, min and max are reported.  A mode is a table set plus
 * settings:
 *
 *   heap      the heap tables as written in the query, pg_warp.enabled = off
 *   arrow     the *_arrow foreign tables (see below), pg_warp.enabled = off
 *   warp-cpu  the *_arrow tables, pg_warp.enabled = on, pg_warp.mode = cpu
 *   warp-gpu  the *_arrow tables, pg_warp.enabled = on, pg_warp.mode = gpu
 *   warp      the *_arrow tables, pg_warp.enabled = on, pg_warp.mode = auto
 *
 * Table rewrite for the arrow tables: the SQL text is tokenized (strings,
 * quoted identifiers, comments and dollar quotes are skipped), and an
 * identifier lineorder, customer, supplier, part or date is rewritten only
 * in table position of a FROM clause: right after FROM, after a comma of the
 * FROM list, after JOIN (ONLY/LATERAL and a schema qualifier may precede it),
 * at any subquery depth.  It becomes "lineorder_arrow AS lineorder" (the
 * alias keeps qualified column references working) unless the query gives
 * its own alias.  Columns, functions and casts (date '1994-01-01',
 * extract(year from x)) are never touched.  --show-sql prints the result.
 *
 * A pg_warp mode runs only if it would measure something: EXPLAIN of the
 * query under the mode's settings must show a pg_warp plan node (a line
 * "Custom Scan (<name containing Warp>)"), and for warp-gpu that node must
 * say GPU in its EXPLAIN lines.  Otherwise it would merely repeat `arrow`,
 * and it is reported as SKIPPED with the reason (also when a SET fails).
 *
 * Answers: every mode's warm-up result is compared with the first mode that
 * produced one, as text, every row: rows are sorted first when the query has
 * no top-level ORDER BY; with an ORDER BY whose items all name output
 * columns (or ordinals), only rows with equal sort keys are sorted among
 * themselves (ties may come in any order); float4/float8 columns compare
 * within 1e-9 relative.  A difference is printed (the differing rows of
 * both modes) and makes the command exit 1 after the outputs are written.
 *
 * Outputs in --out: results.csv, results.md, chart.svg (grouped bars per
 * query, log-scale time axis, min-max whiskers; written here, no
 * dependencies).  Progress goes to stderr.
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

static const char *bench_usage =
"Usage: pgwarp bench ssb [-d DSN] [options]\n"
"\n"
"Run the Star Schema Benchmark queries in several modes, check that every\n"
"mode returns the same answers, and write results.csv, results.md and\n"
"chart.svg.\n"
"\n"
"Options:\n"
"  -d, --dbname DSN     libpq connection string or URI (default: libpq's\n"
"                       defaults, PGHOST, PGDATABASE, ...)\n"
"  --modes LIST         comma-separated, in order (default heap,arrow); the\n"
"                       first mode is the reference for answers and ratios:\n"
"                         heap      heap tables, pg_warp.enabled = off\n"
"                         arrow     *_arrow tables, pg_warp.enabled = off\n"
"                         warp-cpu  *_arrow tables, pg_warp.mode = cpu\n"
"                         warp-gpu  *_arrow tables, pg_warp.mode = gpu\n"
"                         warp      *_arrow tables, pg_warp.mode = auto\n"
"  --runs N             timed runs per query and mode, after one warm-up\n"
"                       (default 3)\n"
"  --queries DIR        the query files, DIR/q*.sql (default bench/ssb/queries)\n"
"  --only LIST          only these queries (names without .sql, e.g. q1.1,q3.2)\n"
"  --out DIR            where to write the results (default ssb-results;\n"
"                       created if missing, files replaced)\n"
"  --timeout S          statement_timeout in seconds per run; a run over it\n"
"                       is reported as TIMEOUT (default: none)\n"
"  --show-sql           print each query as every mode runs it, and exit\n"
"  --help               show this help\n"
"\n"
"Arrow modes run the same text with the table names lineorder, customer,\n"
"supplier, part and date rewritten to lineorder_arrow ... date_arrow where\n"
"they appear as tables in a FROM clause.  pg_warp modes whose EXPLAIN shows\n"
"no pg_warp plan node (or, for warp-gpu, no GPU node) are reported as\n"
"SKIPPED with the reason.  Exit status: 0 when every mode agreed, 1 on a\n"
"difference in answers, a query error or a connection error, 2 on usage\n"
"errors.\n";

/* ------------------------------------------------------------------ modes */

typedef struct ModeDef
{
	const char *name;
	bool		arrow;			/* *_arrow tables */
	const char *settings;		/* run before the mode's queries */
	bool		warp;			/* needs a pg_warp plan node */
	bool		gpu;			/* ... that runs on the GPU */
} ModeDef;

static const ModeDef mode_defs[] = {
	{"heap", false, "SET pg_warp.enabled = off", false, false},
	{"arrow", true, "SET pg_warp.enabled = off", false, false},
	{"warp-cpu", true, "SET pg_warp.enabled = on; SET pg_warp.mode = cpu", true, false},
	{"warp-gpu", true, "SET pg_warp.enabled = on; SET pg_warp.mode = gpu", true, true},
	{"warp", true, "SET pg_warp.enabled = on; SET pg_warp.mode = auto", true, false},
};

#define MAX_MODES ((int) (sizeof(mode_defs) / sizeof(mode_defs[0])))

static const char *const ssb_tables[] = {
	"lineorder", "customer", "supplier", "part", "date", NULL
};

typedef enum CellStatus
{
	ST_OK,
	ST_SKIPPED,
	ST_MISMATCH,
	ST_ERROR,
	ST_TIMEOUT
} CellStatus;

static const char *const status_names[] = {
	"ok", "SKIPPED", "MISMATCH", "ERROR", "TIMEOUT"
};

/* one query in one mode */
typedef struct Cell
{
	CellStatus	status;
	char	   *note;			/* skip reason, error message, mismatch */
	double	   *times;			/* timed runs */
	int			nruns;
	double		median,
				min,
				max;
	long		rows;
	PGresult   *result;			/* warm-up result, for the comparison */
} Cell;

typedef struct Query
{
	char	   *name;			/* file name without .sql */
	char	   *path;
	char	   *text;			/* as written (trailing ';' removed) */
	Cell		cells[MAX_MODES];
} Query;

/* ---------------------------------------------------------- small utils */

static void *
xmalloc(size_t n)
{
	void	   *p = malloc(n ? n : 1);

	if (p == NULL)
	{
		fprintf(stderr, "pgwarp: out of memory\n");
		exit(1);
	}
	return p;
}

static void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (p == NULL)
	{
		fprintf(stderr, "pgwarp: out of memory\n");
		exit(1);
	}
	return p;
}

static char *
xstrdup(const char *s)
{
	size_t		n = strlen(s) + 1;

	return memcpy(xmalloc(n), s, n);
}

static char *
xasprintf(const char *fmt,...) __attribute__((format(printf, 1, 2)));

static char *
xasprintf(const char *fmt,...)
{
	va_list		ap;
	char	   *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
	{
		fprintf(stderr, "pgwarp: out of memory\n");
		exit(1);
	}
	va_end(ap);
	return s;
}

/* growable string */
typedef struct Buf
{
	char	   *s;
	size_t		len,
				cap;
} Buf;

static void
buf_putn(Buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap)
	{
		b->cap = (b->len + n + 1) * 2 + 64;
		b->s = xrealloc(b->s, b->cap);
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void
buf_puts(Buf *b, const char *s)
{
	buf_putn(b, s, strlen(s));
}

/* one line: message of a failed command, newlines folded */
static char *
one_line(const char *msg)
{
	char	   *s = xstrdup(msg ? msg : "");
	size_t		n = strlen(s);

	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = '\0';
	for (char *p = s; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	return s;
}

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
			continue;
		}
		tk.start = i;
		if (c == '\'' ||
			((c == 'e' || c == 'E') && i + 1 < n && s[i + 1] == '\''))
		{
			bool		esc = (c != '\'');

			tk.kind = T_STRING;
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
		}
		else if (c == '$' && i + 1 < n &&
				 (s[i + 1] == '$' || ident_start((unsigned char) s[i + 1])))
		{
			/* $tag$ ... $tag$ (a $1 parameter falls through below) */
			size_t		j = i + 1;

			while (j < n && s[j] != '$' && ident_char((unsigned char) s[j]) && s[j] != '$')
				j++;
			if (j < n && s[j] == '$')
			{
				size_t		taglen = j - i + 1;
				const char *end;

				tk.kind = T_STRING;
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
				tk.kind = T_OP;
				i++;
			}
		}
		else if (c == '"')
		{
			size_t		w = 0;

			tk.kind = T_QIDENT;
			i++;
			while (i < n)
			{
				if (s[i] == '"' && i + 1 < n && s[i + 1] == '"')
				{
					if (w + 1 < sizeof(tk.word))
						tk.word[w++] = '"';
					i += 2;
				}
				else if (s[i] == '"')
				{
					i++;
					break;
				}
				else
				{
					if (w + 1 < sizeof(tk.word))
						tk.word[w++] = s[i];
					i++;
				}
			}
		}
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
			while (i < n && (isalnum((unsigned char) s[i]) || s[i] == '.' || s[i] == '_' ||
							 ((s[i] == '+' || s[i] == '-') &&
							  (s[i - 1] == 'e' || s[i - 1] == 'E'))))
			{
				/* stop before "1..": not a number's dot */
				if (s[i] == '.' && i + 1 < n && s[i + 1] == '.')
					break;
				i++;
			}
		}
		else
		{
			i++;
			switch (c)
			{
				case '(':
					tk.kind = T_LPAREN;
					break;
				case ')':
					tk.kind = T_RPAREN;
					break;
				case ',':
					tk.kind = T_COMMA;
					break;
				case '.':
					tk.kind = T_DOT;
					break;
				case ';':
					tk.kind = T_SEMI;
					break;
				default:
					tk.kind = T_OP;
					break;
			}
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
 * _arrow foreign tables (the rule is in the file header).  malloc'd.
 */
static char *
rewrite_to_arrow(const char *sql)
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
		if (ssb_table_index(tk) < 0 || (next && next->kind == T_LPAREN))
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
static int
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

/* ------------------------------------------------------ answer checks */

static int
cmp_text(const PGresult *r, int a, int b, int c)
{
	bool		na = PQgetisnull(r, a, c),
				nb = PQgetisnull(r, b, c);

	if (na || nb)
		return (int) na - (int) nb;		/* NULLs last */
	return strcmp(PQgetvalue(r, a, c), PQgetvalue(r, b, c));
}

typedef struct SortCtx
{
	const PGresult *r;
} SortCtx;

static int
cmp_rows(const void *x, const void *y, void *arg)
{
	const SortCtx *cx = arg;
	int			a = *(const int *) x,
				b = *(const int *) y;

	for (int c = 0; c < PQnfields(cx->r); c++)
	{
		int			v = cmp_text(cx->r, a, b, c);

		if (v != 0)
			return v;
	}
	return a - b;
}

/*
 * The canonical row order of a result: all rows sorted (no ORDER BY), or
 * sorted only within runs of equal sort keys (ORDER BY on output columns),
 * or as returned (any other ORDER BY).
 */
static int *
canonical_order(const PGresult *r, int order_rc, const int *keys, int nkeys)
{
	int			n = PQntuples(r);
	int		   *ord = xmalloc(sizeof(int) * (n + 1));
	SortCtx		cx = {r};

	for (int i = 0; i < n; i++)
		ord[i] = i;
	if (order_rc < 0)
		qsort_r(ord, n, sizeof(int), cmp_rows, &cx);
	else if (order_rc == 1)
	{
		int			start = 0;

		for (int i = 1; i <= n; i++)
		{
			bool		same = i < n;

			for (int k = 0; same && k < nkeys; k++)
				if (cmp_text(r, start, i, keys[k]) != 0)
					same = false;
			if (!same)
			{
				qsort_r(ord + start, i - start, sizeof(int), cmp_rows, &cx);
				start = i;
			}
		}
	}
	return ord;
}

static bool
is_float_type(Oid t)
{
	return t == 700 || t == 701;	/* float4, float8 */
}

static bool
values_equal(const PGresult *a, int ra, const PGresult *b, int rb, int c)
{
	bool		na = PQgetisnull(a, ra, c),
				nb = PQgetisnull(b, rb, c);
	const char *va,
			   *vb;

	if (na || nb)
		return na == nb;
	va = PQgetvalue(a, ra, c);
	vb = PQgetvalue(b, rb, c);
	if (strcmp(va, vb) == 0)
		return true;
	if (is_float_type(PQftype(a, c)) || is_float_type(PQftype(b, c)))
	{
		char	   *ea,
				   *eb;
		double		x = strtod(va, &ea),
					y = strtod(vb, &eb);

		if (*ea == '\0' && *eb == '\0' && isfinite(x) && isfinite(y) &&
			fabs(x - y) <= 1e-9 * fmax(fabs(x), fabs(y)))
			return true;
	}
	return false;
}

static void
row_text(Buf *b, const PGresult *r, int row)
{
	for (int c = 0; c < PQnfields(r); c++)
	{
		if (c > 0)
			buf_puts(b, " | ");
		buf_puts(b, PQgetisnull(r, row, c) ? "NULL" : PQgetvalue(r, row, c));
	}
}

/*
 * Compare result b (mode mb) with the reference a (mode ma).  Returns NULL
 * when equal, else a malloc'd multi-line report of the differing rows.
 */
static char *
compare_results(const char *sql, const PGresult *a, const char *ma,
				const PGresult *b, const char *mb)
{
	int		   *keys;
	int			nkeys;
	int			orc;
	int		   *oa,
			   *ob;
	int			na = PQntuples(a),
				nb = PQntuples(b);
	int			shown = 0;
	Buf			rep = {0};
	char		line[256];

	if (PQnfields(a) != PQnfields(b))
		return xasprintf("    %s returns %d columns, %s %d columns\n",
						 ma, PQnfields(a), mb, PQnfields(b));
	orc = order_by_keys(sql, a, &keys, &nkeys);
	oa = canonical_order(a, orc, keys, nkeys);
	ob = canonical_order(b, orc, keys, nkeys);
	if (na != nb)
	{
		snprintf(line, sizeof(line), "    %s returns %d rows, %s %d rows\n",
				 ma, na, mb, nb);
		buf_puts(&rep, line);
	}
	for (int i = 0; i < (na > nb ? na : nb); i++)
	{
		bool		eq = i < na && i < nb;

		for (int c = 0; eq && c < PQnfields(a); c++)
			eq = values_equal(a, oa[i], b, ob[i], c);
		if (eq)
			continue;
		if (shown++ >= 10)
			continue;
		snprintf(line, sizeof(line), "    row %d%s:\n", i + 1,
				 orc < 0 ? " (rows sorted: no ORDER BY)" : "");
		buf_puts(&rep, line);
		buf_puts(&rep, "      ");
		buf_puts(&rep, ma);
		buf_puts(&rep, ": ");
		if (i < na)
			row_text(&rep, a, oa[i]);
		else
			buf_puts(&rep, "(no row)");
		buf_puts(&rep, "\n      ");
		buf_puts(&rep, mb);
		buf_puts(&rep, ": ");
		if (i < nb)
			row_text(&rep, b, ob[i]);
		else
			buf_puts(&rep, "(no row)");
		buf_puts(&rep, "\n");
	}
	if (shown > 10)
	{
		snprintf(line, sizeof(line), "    ... %d more differing rows\n", shown - 10);
		buf_puts(&rep, line);
	}
	free(keys);
	free(oa);
	free(ob);
	return rep.s;
}

/* --------------------------------------------------------- running SQL */

static PGconn *conn;

/* a failed result's error as one line: "message (SQLSTATE xxxxx)" */
static char *
result_error(const PGresult *res)
{
	const char *msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
	const char *st = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	char	   *line,
			   *out;

	if (msg == NULL)
		return one_line(PQresultErrorMessage(res));
	line = one_line(msg);
	out = st ? xasprintf("%s (SQLSTATE %s)", line, st) : xstrdup(line);
	free(line);
	return out;
}

/* Run a utility command; NULL on success, else a malloc'd error message. */
static char *
run_command(const char *sql)
{
	PGresult   *res = PQexec(conn, sql);
	char	   *err = NULL;

	if (PQresultStatus(res) != PGRES_COMMAND_OK &&
		PQresultStatus(res) != PGRES_TUPLES_OK)
		err = result_error(res);
	PQclear(res);
	return err;
}

/* the first value of a query's result, or "?" */
static char *
query_value(const char *sql)
{
	PGresult   *res = PQexec(conn, sql);
	char	   *v;

	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) > 0 &&
		!PQgetisnull(res, 0, 0))
		v = xstrdup(PQgetvalue(res, 0, 0));
	else
		v = xstrdup("?");
	PQclear(res);
	return v;
}

static bool
connection_lost(void)
{
	return PQstatus(conn) != CONNECTION_OK;
}

/*
 * Why a pg_warp mode cannot run this query (malloc'd), or NULL when EXPLAIN
 * shows a pg_warp plan node (on the GPU, for gpu modes).
 */
static char *
warp_unavailable(const ModeDef *m, const char *sql)
{
	char	   *explain = xasprintf("EXPLAIN %s", sql);
	PGresult   *res = PQexec(conn, explain);
	bool		warp = false,
				gpu = false;
	char	   *why = NULL;

	free(explain);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		char	   *e = result_error(res);

		why = xasprintf("EXPLAIN failed: %s", e);
		free(e);
		PQclear(res);
		return why;
	}
	for (int i = 0, in_warp_node = 0; i < PQntuples(res); i++)
	{
		const char *line = PQgetvalue(res, i, 0);
		const char *cs = strstr(line, "Custom Scan (");

		if (cs)
		{
			const char *name = cs + strlen("Custom Scan (");
			const char *close = strchr(name, ')');

			in_warp_node = 0;
			for (const char *p = name; close && p + 4 <= close; p++)
				if (strncasecmp(p, "warp", 4) == 0)
					in_warp_node = 1;
			warp |= in_warp_node;
		}
		else if (strstr(line, "->"))
			in_warp_node = 0;
		if (in_warp_node && strstr(line, "GPU"))
			gpu = true;
	}
	PQclear(res);
	if (!warp)
		return xasprintf("no pg_warp plan node in EXPLAIN (pg_warp has no "
						 "custom plans for this query; it would repeat `arrow`)");
	if (m->gpu && !gpu)
		return xasprintf("the pg_warp plan does not run on a GPU (no GPU here, "
						 "or not offloaded)");
	return NULL;
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return (x > y) - (x < y);
}

static bool
is_timeout(const PGresult *res)
{
	const char *st = PQresultErrorField(res, PG_DIAG_SQLSTATE);

	return st && strcmp(st, "57014") == 0;
}

/* warm-up and timed runs of one query in one mode */
static void
run_cell(Cell *cell, const char *name, const char *mode, const char *sql, int runs,
		 double timeout)
{
	PGresult   *res;
	double		t0,
				t;

	fprintf(stderr, "%s %s: warm-up", name, mode);
	t0 = pgw_now();
	res = PQexec(conn, sql);
	t = pgw_now() - t0;
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		bool		to = is_timeout(res);
		char	   *e = result_error(res);

		cell->status = to ? ST_TIMEOUT : ST_ERROR;
		cell->note = to ? xasprintf("over the %g s timeout", timeout) : e;
		if (to)
			free(e);
		fprintf(stderr, " %s: %s\n", status_names[cell->status], cell->note);
		PQclear(res);
		return;
	}
	cell->result = res;
	cell->rows = PQntuples(res);
	fprintf(stderr, " %.3f s; runs", t);
	cell->times = xmalloc(sizeof(double) * runs);
	for (int r = 0; r < runs; r++)
	{
		t0 = pgw_now();
		res = PQexec(conn, sql);
		t = pgw_now() - t0;
		if (PQresultStatus(res) != PGRES_TUPLES_OK)
		{
			bool		to = is_timeout(res);
			char	   *e = result_error(res);

			cell->status = to ? ST_TIMEOUT : ST_ERROR;
			cell->note = to ? xasprintf("over the %g s timeout (run %d)", timeout, r + 1) : e;
			if (to)
				free(e);
			fprintf(stderr, " %s: %s\n", status_names[cell->status], cell->note);
			PQclear(res);
			return;
		}
		PQclear(res);
		cell->times[cell->nruns++] = t;
		fprintf(stderr, " %.3f", t);
	}
	{
		double	   *s = xmalloc(sizeof(double) * runs);

		memcpy(s, cell->times, sizeof(double) * runs);
		qsort(s, runs, sizeof(double), cmp_double);
		cell->min = s[0];
		cell->max = s[runs - 1];
		cell->median = runs % 2 ? s[runs / 2] : (s[runs / 2 - 1] + s[runs / 2]) / 2;
		free(s);
	}
	cell->status = ST_OK;
	fprintf(stderr, " -> median %.3f s, %ld rows\n", cell->median, cell->rows);
}

/* ---------------------------------------------------------- query files */

static char *
read_file(const char *path)
{
	FILE	   *f = fopen(path, "r");
	Buf			b = {0};
	char		chunk[8192];
	size_t		n;

	if (f == NULL)
		return NULL;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_putn(&b, chunk, n);
	fclose(f);
	if (b.s == NULL)
		b.s = xstrdup("");
	return b.s;
}

/* the statement without trailing semicolons, whitespace and comments */
static char *
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

static int
cmp_names(const void *a, const void *b)
{
	return strverscmp((*(Query *const *) a)->name, (*(Query *const *) b)->name);
}

static bool
name_listed(const char *name, const char *list)
{
	size_t		n = strlen(name);

	for (const char *p = list; p && *p;)
	{
		const char *e = strchr(p, ',');
		size_t		len = e ? (size_t) (e - p) : strlen(p);

		if (len == n && strncmp(p, name, n) == 0)
			return true;
		p = e ? e + 1 : NULL;
	}
	return false;
}

/* Load DIR/q*.sql; returns the count, or -1 after printing an error. */
static int
load_queries(const char *dir, const char *only, Query ***out)
{
	DIR		   *dh = opendir(dir);
	struct dirent *de;
	Query	  **qs = NULL;
	int			n = 0;

	if (dh == NULL)
	{
		pgw_error("could not open query directory \"%s\": %s%s", dir, strerror(errno),
				  strcmp(dir, "bench/ssb/queries") == 0 ?
				  " (run from the pg_warp checkout, or give --queries DIR)" : "");
		return -1;
	}
	while ((de = readdir(dh)) != NULL)
	{
		size_t		len = strlen(de->d_name);
		Query	   *q;

		if (de->d_name[0] != 'q' || len < 5 || strcmp(de->d_name + len - 4, ".sql") != 0)
			continue;
		q = xmalloc(sizeof(Query));
		memset(q, 0, sizeof(*q));
		q->name = xstrdup(de->d_name);
		q->name[len - 4] = '\0';
		if (only && !name_listed(q->name, only))
		{
			free(q->name);
			free(q);
			continue;
		}
		q->path = xasprintf("%s/%s", dir, de->d_name);
		qs = xrealloc(qs, sizeof(Query *) * (n + 1));
		qs[n++] = q;
	}
	closedir(dh);
	if (n == 0)
	{
		pgw_error("no query files %s/q*.sql%s%s", dir, only ? " match --only " : "",
				  only ? only : "");
		return -1;
	}
	qsort(qs, n, sizeof(Query *), cmp_names);
	for (int i = 0; i < n; i++)
	{
		char	   *text = read_file(qs[i]->path);

		if (text == NULL)
		{
			pgw_error("could not read \"%s\": %s", qs[i]->path, strerror(errno));
			return -1;
		}
		qs[i]->text = clean_sql(text);
		if (qs[i]->text == NULL)
		{
			pgw_error("\"%s\" holds more than one statement", qs[i]->path);
			return -1;
		}
		if (qs[i]->text[0] == '\0')
		{
			pgw_error("\"%s\" holds no statement", qs[i]->path);
			return -1;
		}
	}
	if (only)
	{
		/* every listed name must exist */
		for (const char *p = only; p && *p;)
		{
			const char *e = strchr(p, ',');
			size_t		len = e ? (size_t) (e - p) : strlen(p);
			bool		found = false;

			for (int i = 0; i < n; i++)
				if (strlen(qs[i]->name) == len && strncmp(qs[i]->name, p, len) == 0)
					found = true;
			if (!found)
			{
				pgw_error("--only: no query file %s/%.*s.sql", dir, (int) len, p);
				return -1;
			}
			p = e ? e + 1 : NULL;
		}
	}
	*out = qs;
	return n;
}

/* --------------------------------------------------------------- outputs */

typedef struct RunInfo
{
	const ModeDef *modes[MAX_MODES];
	int			nmodes;
	int			runs;
	double		timeout;
	char		date[64];
	char		host[256];
	char		cpu[256];
	int			ncpu;
	long		mem_mb;
	char		kernel[256];
	char	   *server_version;
	char	   *settings;		/* jit, workers, shared_buffers, ... */
	char	   *command;
} RunInfo;

static void
machine_info(RunInfo *ri)
{
	FILE	   *f;
	char		line[512];
	struct utsname u;
	time_t		now = time(NULL);
	struct tm	tm;

	gmtime_r(&now, &tm);
	strftime(ri->date, sizeof(ri->date), "%Y-%m-%d %H:%M UTC", &tm);
	if (gethostname(ri->host, sizeof(ri->host)) != 0)
		strcpy(ri->host, "?");
	ri->host[sizeof(ri->host) - 1] = '\0';
	strcpy(ri->cpu, "?");
	if ((f = fopen("/proc/cpuinfo", "r")) != NULL)
	{
		while (fgets(line, sizeof(line), f))
		{
			char	   *colon = strchr(line, ':');

			if (strncmp(line, "model name", 10) == 0 && colon)
			{
				snprintf(ri->cpu, sizeof(ri->cpu), "%s", colon + 2);
				ri->cpu[strcspn(ri->cpu, "\n")] = '\0';
				break;
			}
		}
		fclose(f);
	}
	ri->ncpu = (int) sysconf(_SC_NPROCESSORS_ONLN);
	ri->mem_mb = 0;
	if ((f = fopen("/proc/meminfo", "r")) != NULL)
	{
		long		kb;

		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "MemTotal: %ld kB", &kb) == 1)
				ri->mem_mb = kb / 1024;
		fclose(f);
	}
	if (uname(&u) == 0)
		snprintf(ri->kernel, sizeof(ri->kernel), "%s %s %s", u.sysname, u.release,
				 u.machine);
	else
		strcpy(ri->kernel, "?");
}

/* the command line, shell-quoted, with passwords in the DSN hidden */
static char *
command_line(int argc, char **argv)
{
	Buf			b = {0};

	buf_puts(&b, "pgwarp");
	for (int i = 0; i < argc; i++)
	{
		char	   *a = xstrdup(argv[i]);
		char	   *p;
		bool		plain = true;

		if ((p = strstr(a, "password=")) != NULL)
		{
			char	   *e = p + 9;

			while (*e && *e != ' ' && *e != '&')
				e++;
			memmove(p + 12, e, strlen(e) + 1);
			memcpy(p + 9, "***", 3);
		}
		if ((p = strstr(a, "://")) != NULL)
		{
			char	   *at = strchr(p + 3, '@');
			char	   *colon = strchr(p + 3, ':');

			if (at && colon && colon < at)
			{
				memmove(colon + 4, at, strlen(at) + 1);
				memcpy(colon + 1, "***", 3);
			}
		}
		for (p = a; *p; p++)
			if (!(isalnum((unsigned char) *p) || strchr("-_./=,:@%+", *p)))
				plain = false;
		buf_puts(&b, " ");
		if (plain && *a)
			buf_puts(&b, a);
		else
		{
			buf_puts(&b, "'");
			for (p = a; *p; p++)
			{
				if (*p == '\'')
					buf_puts(&b, "'\\''");
				else
					buf_putn(&b, p, 1);
			}
			buf_puts(&b, "'");
		}
		free(a);
	}
	return b.s;
}

static void
csv_field(FILE *f, const char *s)
{
	if (strpbrk(s, ",\"\n\r") == NULL)
	{
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++)
	{
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static int
write_csv(const char *path, Query **qs, int nq, const RunInfo *ri)
{
	FILE	   *f = fopen(path, "w");

	if (f == NULL)
		return pgw_error("could not create \"%s\": %s", path, strerror(errno));
	fputs("query,mode,median_s,min_s,max_s,runs,rows,status,note\n", f);
	for (int i = 0; i < nq; i++)
		for (int m = 0; m < ri->nmodes; m++)
		{
			const Cell *c = &qs[i]->cells[m];
			bool		timed = c->status == ST_OK || c->status == ST_MISMATCH;

			csv_field(f, qs[i]->name);
			fputc(',', f);
			csv_field(f, ri->modes[m]->name);
			if (timed)
				fprintf(f, ",%.6f,%.6f,%.6f,%d,%ld,", c->median, c->min, c->max,
						c->nruns, c->rows);
			else
				fprintf(f, ",,,,%d,,", c->nruns);
			fputs(status_names[c->status], f);
			fputc(',', f);
			csv_field(f, c->note ? c->note : "");
			fputc('\n', f);
		}
	if (fclose(f) != 0)
		return pgw_error("could not write \"%s\": %s", path, strerror(errno));
	return 0;
}

static void
md_escape(FILE *f, const char *s)
{
	for (; *s; s++)
	{
		if (*s == '|')
			fputs("\\|", f);
		else
			fputc(*s, f);
	}
}

/* seconds with 3 significant digits at least, never "0.000" */
static void
fmt_secs(FILE *f, double v)
{
	if (v >= 10)
		fprintf(f, "%.1f", v);
	else if (v >= 0.01)
		fprintf(f, "%.3f", v);
	else
		fprintf(f, "%.5f", v);
}

static int
write_md(const char *path, Query **qs, int nq, const RunInfo *ri)
{
	FILE	   *f = fopen(path, "w");
	double		total[MAX_MODES] = {0};
	bool		total_ok[MAX_MODES];
	double		logsum[MAX_MODES] = {0};
	int			nratio[MAX_MODES] = {0};
	const char *first = ri->modes[0]->name;

	if (f == NULL)
		return pgw_error("could not create \"%s\": %s", path, strerror(errno));
	fprintf(f, "# Star Schema Benchmark: pgwarp bench ssb\n\n");
	fprintf(f, "- date: %s\n", ri->date);
	fprintf(f, "- client machine: %s; %s; %d CPUs; %ld MB; %s\n", ri->host, ri->cpu,
			ri->ncpu, ri->mem_mb, ri->kernel);
	fprintf(f, "- server: %s\n", ri->server_version);
	fprintf(f, "- server settings: %s\n", ri->settings);
	fprintf(f, "- command: `%s`\n", ri->command);
	fprintf(f, "- method: per query and mode, one warm-up run, then %d timed run%s "
			"(wall time at the client, result transfer included); the cells are "
			"median seconds; (N.NNx) = %s median / this median, higher is faster. "
			"Every mode's answers were compared with those of the first mode.\n\n",
			ri->runs, ri->runs == 1 ? "" : "s", first);

	fputs("| query |", f);
	for (int m = 0; m < ri->nmodes; m++)
		fprintf(f, " %s (s) |", ri->modes[m]->name);
	fputs(" rows |\n|---|", f);
	for (int m = 0; m < ri->nmodes; m++)
		fputs("---:|", f);
	fputs("---:|\n", f);
	for (int m = 0; m < ri->nmodes; m++)
		total_ok[m] = true;
	for (int i = 0; i < nq; i++)
	{
		const Cell *ref = &qs[i]->cells[0];
		long		rows = -1;

		fprintf(f, "| %s |", qs[i]->name);
		for (int m = 0; m < ri->nmodes; m++)
		{
			const Cell *c = &qs[i]->cells[m];

			if (c->status == ST_OK || c->status == ST_MISMATCH)
			{
				fputc(' ', f);
				fmt_secs(f, c->median);
				if (m > 0 && ref->status == ST_OK && c->median > 0)
				{
					fprintf(f, " (%.2fx)", ref->median / c->median);
					logsum[m] += log(ref->median / c->median);
					nratio[m]++;
				}
				if (c->status == ST_MISMATCH)
					fputs(" **WRONG ANSWER**", f);
				total[m] += c->median;
				if (rows < 0)
					rows = c->rows;
			}
			else
			{
				fprintf(f, " %s", c->status == ST_SKIPPED ? "skipped" :
						c->status == ST_TIMEOUT ? "timeout" : "**error**");
				total_ok[m] = false;
			}
			fputs(" |", f);
		}
		if (rows >= 0)
			fprintf(f, " %ld |\n", rows);
		else
			fputs(" |\n", f);
	}
	fputs("| **total** |", f);
	for (int m = 0; m < ri->nmodes; m++)
	{
		if (total_ok[m])
		{
			fputc(' ', f);
			fmt_secs(f, total[m]);
		}
		else
			fputs(" –", f);
		if (m > 0 && nratio[m] > 0)
			fprintf(f, " (geomean %.2fx)", exp(logsum[m] / nratio[m]));
		fputs(" |", f);
	}
	fputs(" |\n\n", f);

	/* notes: skipped / failed cells, grouped by mode and reason */
	{
		bool		any = false;

		for (int m = 0; m < ri->nmodes; m++)
		{
			for (int i = 0; i < nq; i++)
			{
				const Cell *c = &qs[i]->cells[m];
				bool		seen = false;
				Buf			names = {0};

				if (c->status == ST_OK || c->note == NULL)
					continue;
				for (int j = 0; j < i; j++)
				{
					const Cell *o = &qs[j]->cells[m];

					if (o->status == c->status && o->note && strcmp(o->note, c->note) == 0)
						seen = true;
				}
				if (seen)
					continue;
				for (int j = i; j < nq; j++)
				{
					const Cell *o = &qs[j]->cells[m];

					if (o->status == c->status && o->note && strcmp(o->note, c->note) == 0)
					{
						if (names.len)
							buf_puts(&names, ", ");
						buf_puts(&names, qs[j]->name);
					}
				}
				if (!any)
					fputs("Notes:\n\n", f);
				any = true;
				fprintf(f, "- %s %s (%s): ", ri->modes[m]->name, status_names[c->status],
						names.s);
				md_escape(f, c->note);
				fputs("\n", f);
				free(names.s);
			}
		}
		if (any)
			fputs("\n", f);
	}
	fputs("Files: results.csv (every figure), chart.svg (the chart).\n", f);
	if (fclose(f) != 0)
		return pgw_error("could not write \"%s\": %s", path, strerror(errno));
	return 0;
}

static void
xml_escape(FILE *f, const char *s)
{
	for (; *s; s++)
	{
		switch (*s)
		{
			case '<':
				fputs("&lt;", f);
				break;
			case '>':
				fputs("&gt;", f);
				break;
			case '&':
				fputs("&amp;", f);
				break;
			case '"':
				fputs("&quot;", f);
				break;
			default:
				fputc(*s, f);
		}
	}
}

static const char *const palette[] = {
	"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2"
};

static void
time_label(char *buf, size_t len, double v)
{
	if (v >= 1)
		snprintf(buf, len, "%g s", v);
	else if (v >= 1e-3)
		snprintf(buf, len, "%g ms", v * 1e3);
	else
		snprintf(buf, len, "%g µs", v * 1e6);
}

static int
write_svg(const char *path, Query **qs, int nq, const RunInfo *ri)
{
	FILE	   *f = fopen(path, "w");
	double		vmin = INFINITY,
				vmax = 0;
	int			dlo,
				dhi;
	const int	bar_w = 14,
				gap = 18,
				left = 80,
				right = 30,
				top = 70,
				plot_h = 340,
				bottom = 70;
	int			group_w = ri->nmodes * bar_w + gap;
	int			width = left + nq * group_w + right;
	int			height;
	int			y0 = top + plot_h;

	if (width < 560)
		width = 560;
	height = top + plot_h + bottom;
	if (f == NULL)
		return pgw_error("could not create \"%s\": %s", path, strerror(errno));
	for (int i = 0; i < nq; i++)
		for (int m = 0; m < ri->nmodes; m++)
		{
			const Cell *c = &qs[i]->cells[m];

			if (c->status != ST_OK && c->status != ST_MISMATCH)
				continue;
			vmin = fmin(vmin, fmax(c->min, 1e-6));
			vmax = fmax(vmax, fmax(c->max, 1e-6));
		}
	if (!isfinite(vmin))
	{
		vmin = 0.1;
		vmax = 1;
	}
	dlo = (int) floor(log10(vmin));
	dhi = (int) ceil(log10(vmax));
	if (dhi <= dlo)
		dhi = dlo + 1;

#define YPOS(v) (y0 - (log10(fmax((v), 1e-6)) - dlo) / (double) (dhi - dlo) * plot_h)

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
			"viewBox=\"0 0 %d %d\" font-family=\"Helvetica, Arial, sans-serif\" "
			"font-size=\"12\">\n", width, height, width, height);
	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", width, height);
	fprintf(f, "<text x=\"%d\" y=\"22\" font-size=\"16\" font-weight=\"bold\">"
			"Star Schema Benchmark: median time per query (log scale, lower is "
			"better)</text>\n", left);
	fprintf(f, "<text x=\"%d\" y=\"40\" fill=\"#555\">", left);
	xml_escape(f, ri->host);
	fprintf(f, ", %s, %d timed run%s after a warm-up; whiskers: min-max</text>\n",
			ri->date, ri->runs, ri->runs == 1 ? "" : "s");

	/* grid and y labels: decades, with 2 and 5 between */
	for (int d = dlo; d <= dhi; d++)
	{
		for (int k = 1; k <= 5; k += (k == 1 ? 1 : 3))
		{
			double		v = k * pow(10, d);
			double		y = YPOS(v);
			char		lab[32];

			if (d == dhi && k > 1)
				break;
			fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" "
					"stroke=\"%s\" stroke-width=\"1\"/>\n", left, width - right, y, y,
					k == 1 ? "#bbb" : "#eee");
			time_label(lab, sizeof(lab), v);
			if (k == 1 || dhi - dlo <= 3)
				fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"%s\">%s</text>\n",
						left - 6, y + 4, k == 1 ? "#000" : "#777", lab);
		}
	}
	fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#000\"/>\n",
			left, width - right, y0, y0);
	fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#000\"/>\n",
			left, left, top, y0);
	fprintf(f, "<text transform=\"translate(18,%d) rotate(-90)\" text-anchor=\"middle\">"
			"median time (seconds, log scale)</text>\n", top + plot_h / 2);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">query</text>\n",
			left + (width - left - right) / 2, height - 12);

	/* bars */
	for (int i = 0; i < nq; i++)
	{
		int			gx = left + gap / 2 + i * group_w;

		for (int m = 0; m < ri->nmodes; m++)
		{
			const Cell *c = &qs[i]->cells[m];
			int			x = gx + m * bar_w;
			const char *color = palette[m % 6];

			if (c->status == ST_OK || c->status == ST_MISMATCH)
			{
				double		y = YPOS(c->median);

				fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" "
						"fill=\"%s\"%s><title>%s %s: median %.4f s (min %.4f, max %.4f, "
						"%d runs)%s</title></rect>\n",
						x, y, bar_w - 2, y0 - y, color,
						c->status == ST_MISMATCH ? " stroke=\"red\" stroke-width=\"2\"" : "",
						qs[i]->name, ri->modes[m]->name, c->median, c->min, c->max,
						c->nruns, c->status == ST_MISMATCH ? ", WRONG ANSWER" : "");
				fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
						"stroke=\"#333\"/>\n", x + (bar_w - 2) / 2.0, x + (bar_w - 2) / 2.0,
						YPOS(c->min), YPOS(c->max));
			}
			else
			{
				/* a mark at the base: skipped / timeout / error */
				fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"9\" fill=\"#999\" "
						"transform=\"rotate(-90 %d %d)\">%s<title>%s %s: %s</title></text>\n",
						x + bar_w / 2 + 2, y0 - 4, x + bar_w / 2 + 2, y0 - 4,
						c->status == ST_SKIPPED ? "skipped" :
						c->status == ST_TIMEOUT ? "timeout" : "error",
						qs[i]->name, ri->modes[m]->name, status_names[c->status]);
			}
		}
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">",
				gx + ri->nmodes * bar_w / 2, y0 + 18);
		xml_escape(f, qs[i]->name);
		fputs("</text>\n", f);
	}

	/* legend, one line above the plot */
	{
		int			lx = left;

		for (int m = 0; m < ri->nmodes; m++)
		{
			bool		any = false;

			for (int i = 0; i < nq; i++)
				if (qs[i]->cells[m].status == ST_OK || qs[i]->cells[m].status == ST_MISMATCH)
					any = true;
			fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>\n",
					lx, 50, palette[m % 6]);
			fprintf(f, "<text x=\"%d\" y=\"%d\">%s%s</text>\n", lx + 16, 61,
					ri->modes[m]->name, any ? "" : " (skipped)");
			lx += 16 + 8 * (int) strlen(ri->modes[m]->name) + (any ? 0 : 62) + 24;
		}
	}
	fputs("</svg>\n", f);
#undef YPOS
	if (fclose(f) != 0)
		return pgw_error("could not write \"%s\": %s", path, strerror(errno));
	return 0;
}

static int
make_dir(const char *path)
{
	char		tmp[PATH_MAX];

	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int) sizeof(tmp))
		return pgw_error("path too long: %s", path);
	for (char *p = tmp + 1; *p; p++)
	{
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
			return pgw_error("could not create directory \"%s\": %s", tmp, strerror(errno));
		*p = '/';
	}
	if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
		return pgw_error("could not create directory \"%s\": %s", tmp, strerror(errno));
	return 0;
}

/* ------------------------------------------------------------------ main */

enum
{
	OPT_MODES = 1000,
	OPT_RUNS,
	OPT_QUERIES,
	OPT_OUT,
	OPT_TIMEOUT,
	OPT_ONLY,
	OPT_SHOW_SQL
};

static const struct option longopts[] = {
	{"dbname", required_argument, NULL, 'd'},
	{"modes", required_argument, NULL, OPT_MODES},
	{"runs", required_argument, NULL, OPT_RUNS},
	{"queries", required_argument, NULL, OPT_QUERIES},
	{"out", required_argument, NULL, OPT_OUT},
	{"timeout", required_argument, NULL, OPT_TIMEOUT},
	{"only", required_argument, NULL, OPT_ONLY},
	{"show-sql", no_argument, NULL, OPT_SHOW_SQL},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0}
};

static int
parse_modes(const char *list, RunInfo *ri)
{
	const char *p = list;

	ri->nmodes = 0;
	while (p && *p)
	{
		const char *e = strchr(p, ',');
		size_t		len = e ? (size_t) (e - p) : strlen(p);
		const ModeDef *found = NULL;

		for (int k = 0; k < MAX_MODES; k++)
			if (strlen(mode_defs[k].name) == len && strncmp(mode_defs[k].name, p, len) == 0)
				found = &mode_defs[k];
		if (found == NULL)
			return pgw_usage_error("bench", "unknown mode \"%.*s\" (heap, arrow, "
								   "warp-cpu, warp-gpu, warp)", (int) len, p);
		for (int k = 0; k < ri->nmodes; k++)
			if (ri->modes[k] == found)
				return pgw_usage_error("bench", "mode \"%s\" given twice", found->name);
		ri->modes[ri->nmodes++] = found;
		p = e ? e + 1 : NULL;
	}
	if (ri->nmodes == 0)
		return pgw_usage_error("bench", "--modes needs at least one mode");
	return 0;
}

int
cmd_bench(int argc, char **argv)
{
	const char *dsn = NULL;
	const char *modes = "heap,arrow";
	const char *qdir = "bench/ssb/queries";
	const char *outdir = "ssb-results";
	const char *only = NULL;
	bool		show_sql = false;
	int64_t		runs = 3;
	double		timeout = 0;
	RunInfo		ri;
	Query	  **qs;
	int			nq;
	int			c;
	int			rc = 0;
	int			nmismatch = 0,
				nerror = 0;
	Buf			failures = {0};

	memset(&ri, 0, sizeof(ri));
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
	{
		fputs(bench_usage, stdout);
		return 0;
	}
	if (argc < 2 || argv[1][0] == '-')
		return pgw_usage_error("bench", "missing the benchmark name (ssb)");
	if (strcmp(argv[1], "ssb") != 0)
		return pgw_usage_error("bench", "unknown benchmark \"%s\" (only ssb)", argv[1]);
	/* argv[0] is "bench": the command line reads "pgwarp bench ssb ..." */
	ri.command = command_line(argc, argv);
	opterr = 0;
	optind = 2;
	while ((c = getopt_long(argc, argv, ":d:h", longopts, NULL)) != -1)
	{
		switch (c)
		{
			case 'd':
				dsn = optarg;
				break;
			case OPT_MODES:
				modes = optarg;
				break;
			case OPT_RUNS:
				if (!pgw_parse_count(optarg, &runs) || runs > 1000)
					return pgw_usage_error("bench", "invalid --runs value \"%s\" (1-1000)",
										   optarg);
				break;
			case OPT_QUERIES:
				qdir = optarg;
				break;
			case OPT_OUT:
				outdir = optarg;
				break;
			case OPT_TIMEOUT:
				{
					char	   *end;

					errno = 0;
					timeout = strtod(optarg, &end);
					if (errno || *end || !(timeout > 0) || timeout > 86400 * 7)
						return pgw_usage_error("bench", "invalid --timeout value \"%s\" "
											   "(seconds)", optarg);
					break;
				}
			case OPT_ONLY:
				only = optarg;
				break;
			case OPT_SHOW_SQL:
				show_sql = true;
				break;
			case 'h':
				fputs(bench_usage, stdout);
				return 0;
			case ':':
				return pgw_usage_error("bench", "option %s needs a value",
									   argv[optind - 1]);
			default:
				return pgw_usage_error("bench", "unknown option \"%s\"",
									   argv[optind - 1]);
		}
	}
	if (optind < argc)
		return pgw_usage_error("bench", "unexpected argument \"%s\"", argv[optind]);
	if ((rc = parse_modes(modes, &ri)) != 0)
		return rc;
	ri.runs = (int) runs;
	ri.timeout = timeout;

	nq = load_queries(qdir, only, &qs);
	if (nq < 0)
		return 1;

	if (show_sql)
	{
		for (int i = 0; i < nq; i++)
			for (int m = 0; m < ri.nmodes; m++)
			{
				char	   *sql = ri.modes[m]->arrow ? rewrite_to_arrow(qs[i]->text) :
					xstrdup(qs[i]->text);

				printf("-- %s %s (%s)\n%s;\n\n", qs[i]->name, ri.modes[m]->name,
					   ri.modes[m]->settings, sql);
				free(sql);
			}
		return 0;
	}

	if (make_dir(outdir) != 0)
		return 1;

	conn = pgw_connect(dsn, "pgwarp bench");
	if (conn == NULL)
		return 1;
	machine_info(&ri);
	ri.server_version = query_value("SELECT version()");
	ri.settings = query_value(
		"SELECT string_agg(name || '=' || setting || coalesce(unit, ''), ', ' ORDER BY name) "
		"FROM pg_settings WHERE name IN ('jit', 'max_parallel_workers_per_gather', "
		"'shared_buffers', 'work_mem', 'shared_preload_libraries', 'effective_cache_size')");
	if (timeout > 0)
	{
		char	   *set = xasprintf("SET statement_timeout = %.0f", timeout * 1000);
		char	   *err = run_command(set);

		free(set);
		if (err)
		{
			pgw_error("could not set statement_timeout: %s", err);
			PQfinish(conn);
			return 1;
		}
	}
	fprintf(stderr, "pgwarp bench: %d queries x %d modes, %d timed runs each, results in %s\n",
			nq, ri.nmodes, ri.runs, outdir);

	for (int i = 0; i < nq && rc == 0; i++)
	{
		Query	   *q = qs[i];
		int			ref = -1;	/* the first mode with an answer */

		for (int m = 0; m < ri.nmodes; m++)
		{
			const ModeDef *md = ri.modes[m];
			Cell	   *cell = &q->cells[m];
			char	   *sql = md->arrow ? rewrite_to_arrow(q->text) : xstrdup(q->text);
			char	   *err;

			err = run_command("RESET pg_warp.enabled; RESET pg_warp.mode");
			free(err);
			err = run_command(md->settings);
			if (err == NULL && md->warp)
				err = warp_unavailable(md, sql);
			else if (err)
			{
				char	   *e2 = xasprintf("%s failed: %s", md->settings, err);

				free(err);
				err = e2;
			}
			if (connection_lost())
			{
				rc = pgw_error("lost the connection: %s", PQerrorMessage(conn));
				free(err);
				free(sql);
				break;
			}
			if (err)
			{
				if (md->warp)
				{
					cell->status = ST_SKIPPED;
					cell->note = err;
					fprintf(stderr, "%s %s: SKIPPED: %s\n", q->name, md->name, err);
				}
				else
				{
					cell->status = ST_ERROR;
					cell->note = err;
					fprintf(stderr, "%s %s: ERROR: %s\n", q->name, md->name, err);
					nerror++;
					buf_puts(&failures, q->name);
					buf_puts(&failures, " ");
					buf_puts(&failures, md->name);
					buf_puts(&failures, " (error); ");
				}
				free(sql);
				continue;
			}
			run_cell(cell, q->name, md->name, sql, ri.runs, timeout);
			free(sql);
			if (connection_lost())
			{
				rc = pgw_error("lost the connection: %s", PQerrorMessage(conn));
				break;
			}
			if (cell->status == ST_ERROR)
			{
				nerror++;
				buf_puts(&failures, q->name);
				buf_puts(&failures, " ");
				buf_puts(&failures, md->name);
				buf_puts(&failures, " (error); ");
			}
			if (cell->result == NULL)
				continue;
			if (ref < 0)
			{
				ref = m;
				continue;
			}
			{
				char	   *diff = compare_results(q->text, q->cells[ref].result,
												   ri.modes[ref]->name, cell->result,
												   md->name);

				if (diff)
				{
					fflush(stdout);
					fprintf(stderr, "pgwarp: %s: %s returns different answers from %s:\n%s",
							q->name, md->name, ri.modes[ref]->name, diff);
					cell->status = ST_MISMATCH;
					cell->note = xasprintf("answers differ from %s", ri.modes[ref]->name);
					nmismatch++;
					buf_puts(&failures, q->name);
					buf_puts(&failures, " ");
					buf_puts(&failures, md->name);
					buf_puts(&failures, " (wrong answer); ");
					free(diff);
				}
			}
		}
		for (int m = 0; m < ri.nmodes; m++)
			if (q->cells[m].result)
			{
				PQclear(q->cells[m].result);
				q->cells[m].result = NULL;
			}
	}
	PQfinish(conn);

	{
		char	   *p;

		p = xasprintf("%s/results.csv", outdir);
		if (write_csv(p, qs, nq, &ri) != 0)
			rc = 1;
		free(p);
		p = xasprintf("%s/results.md", outdir);
		if (write_md(p, qs, nq, &ri) != 0)
			rc = 1;
		free(p);
		p = xasprintf("%s/chart.svg", outdir);
		if (write_svg(p, qs, nq, &ri) != 0)
			rc = 1;
		free(p);
	}
	if (rc == 0)
		fprintf(stderr, "pgwarp bench: wrote %s/results.csv, %s/results.md, %s/chart.svg\n",
				outdir, outdir, outdir);
	if (nmismatch > 0 || nerror > 0)
	{
		if (failures.len >= 2)
			failures.s[failures.len - 2] = '\0';
		pgw_error("%d wrong answer%s, %d error%s: %s", nmismatch, nmismatch == 1 ? "" : "s",
				  nerror, nerror == 1 ? "" : "s", failures.s ? failures.s : "");
		rc = 1;
	}
	return rc;
}
