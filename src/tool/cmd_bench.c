/*
 * cmd_bench.c — pgwarp bench ssb: the Star Schema Benchmark runner.
 *
 *   pgwarp bench ssb [-d DSN] [--modes heap,arrow[,heap-warp,warp-cpu,warp-gpu,warp]]
 *                    [--runs N] [--queries DIR] [--out DIR] [--timeout S]
 *                    [--only q1.1,...] [--show-sql]
 *
 * For every query file (DIR/q*.sql, in natural order) and every mode: one
 * warm-up run, then N timed runs (wall time of PQexec, result transfer
 * included); median, min and max are reported.  A mode is a table set plus
 * settings:
 *
 *   heap      the heap tables as written in the query, pg_warp.enabled = off
 *   heap-warp the heap tables, pg_warp.enabled = on, pg_warp.mode = cpu (the
 *             engine reads the heap fact table through the table AM)
 *   arrow     the *_arrow foreign tables (see below), pg_warp.enabled = off
 *   warp-cpu  the *_arrow tables, pg_warp.enabled = on, pg_warp.mode = cpu
 *   warp-gpu  the *_arrow tables, pg_warp.enabled = on, pg_warp.mode = gpu
 *   warp      the *_arrow tables, pg_warp.enabled = on, pg_warp.mode = auto
 *   fact-warp lineorder_arrow with the heap dimension tables (a fact table
 *             converted, the rest kept), pg_warp.enabled = on, mode = cpu
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
#include "bench.h"


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
"                         heap-warp heap tables, pg_warp.mode = cpu\n"
"                         arrow     *_arrow tables, pg_warp.enabled = off\n"
"                         warp-cpu  *_arrow tables, pg_warp.mode = cpu\n"
"                         warp-gpu  *_arrow tables, pg_warp.mode = gpu\n"
"                         warp      *_arrow tables, pg_warp.mode = auto\n"
"                         fact-warp lineorder_arrow + heap dimensions, mode = cpu\n"
"  --runs N             timed runs per query and mode, after one warm-up\n"
"                       (default 3)\n"
"  --queries DIR        the query files, DIR/q*.sql (default bench/ssb/queries)\n"
"  --only LIST          only these queries (names without .sql, e.g. q1.1,q3.2)\n"
"  --out DIR            where to write the results (default bench/results/ssb;\n"
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



static const ModeDef mode_defs[] = {
	{"heap", false, false, "SET pg_warp.enabled = off", false, false},
	{"heap-warp", false, false, "SET pg_warp.enabled = on; SET pg_warp.mode = cpu", true, false},
	{"arrow", true, false, "SET pg_warp.enabled = off", false, false},
	{"warp-cpu", true, false, "SET pg_warp.enabled = on; SET pg_warp.mode = cpu", true, false},
	{"warp-gpu", true, false, "SET pg_warp.enabled = on; SET pg_warp.mode = gpu", true, true},
	{"warp", true, false, "SET pg_warp.enabled = on; SET pg_warp.mode = auto", true, false},
	{"fact-warp", true, true, "SET pg_warp.enabled = on; SET pg_warp.mode = cpu", true, false},
};

_Static_assert(sizeof(mode_defs) / sizeof(mode_defs[0]) == MAX_MODES,
			   "MAX_MODES must match mode_defs");









const char *const status_names[] = {
	"ok", "SKIPPED", "MISMATCH", "ERROR", "TIMEOUT"
};

/* ---------------------------------------------------------- small utils */

void *
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

void *
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

char *
xstrdup(const char *s)
{
	size_t		n = strlen(s) + 1;

	return memcpy(xmalloc(n), s, n);
}

char *
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



void
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

void
buf_puts(Buf *b, const char *s)
{
	buf_putn(b, s, strlen(s));
}

/* one line: message of a failed command, newlines folded */
char *
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

/*
 * A run that failed (run 0 is the warm-up): the cell's status and note,
 * reported on stderr; res is cleared.
 */
static void
cell_failed(Cell *cell, PGresult *res, double timeout, int run)
{
	bool		to = is_timeout(res);
	char	   *e = result_error(res);

	cell->status = to ? ST_TIMEOUT : ST_ERROR;
	if (!to)
		cell->note = e;
	else if (run == 0)
		cell->note = xasprintf("over the %g s timeout", timeout);
	else
		cell->note = xasprintf("over the %g s timeout (run %d)", timeout, run);
	if (to)
		free(e);
	fprintf(stderr, " %s: %s\n", status_names[cell->status], cell->note);
	PQclear(res);
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
		cell_failed(cell, res, timeout, 0);
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
			cell_failed(cell, res, timeout, r + 1);
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
			return pgw_usage_error("bench", "unknown mode \"%.*s\" (heap, heap-warp, "
								   "arrow, warp-cpu, warp-gpu, warp)", (int) len, p);
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

typedef struct BenchOpts
{
	const char *dsn;
	const char *modes;
	const char *qdir;
	const char *outdir;
	const char *only;
	bool		show_sql;
	int64_t		runs;
	double		timeout;
} BenchOpts;

/* Wrong answers and errors so far, and the list the final message names. */
typedef struct Failures
{
	int			nmismatch;
	int			nerror;
	Buf			list;
} Failures;

/*
 * The command line into *o and ri (modes, runs, timeout, the command
 * itself).  Returns -1 to go on, else the exit code.
 */
static int
parse_bench_args(int argc, char **argv, BenchOpts *o, RunInfo *ri)
{
	int			c;
	int			rc;

	o->dsn = NULL;
	o->modes = "heap,arrow";
	o->qdir = "bench/ssb/queries";
	o->outdir = "bench/results/ssb";
	o->only = NULL;
	o->show_sql = false;
	o->runs = 3;
	o->timeout = 0;
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
	ri->command = command_line(argc, argv);
	opterr = 0;
	optind = 2;
	while ((c = getopt_long(argc, argv, ":d:h", longopts, NULL)) != -1)
	{
		switch (c)
		{
			case 'd':
				o->dsn = optarg;
				break;
			case OPT_MODES:
				o->modes = optarg;
				break;
			case OPT_RUNS:
				if (!pgw_parse_count(optarg, &o->runs) || o->runs > 1000)
					return pgw_usage_error("bench", "invalid --runs value \"%s\" (1-1000)",
										   optarg);
				break;
			case OPT_QUERIES:
				o->qdir = optarg;
				break;
			case OPT_OUT:
				o->outdir = optarg;
				break;
			case OPT_TIMEOUT:
				{
					char	   *end;

					errno = 0;
					o->timeout = strtod(optarg, &end);
					if (errno || *end || !(o->timeout > 0) || o->timeout > 86400 * 7)
						return pgw_usage_error("bench", "invalid --timeout value \"%s\" "
											   "(seconds)", optarg);
					break;
				}
			case OPT_ONLY:
				o->only = optarg;
				break;
			case OPT_SHOW_SQL:
				o->show_sql = true;
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
	if ((rc = parse_modes(o->modes, ri)) != 0)
		return rc;
	ri->runs = (int) o->runs;
	ri->timeout = o->timeout;
	return -1;
}

/* --show-sql: every query as every mode runs it. */
static void
show_queries(Query **qs, int nq, const RunInfo *ri)
{
	for (int i = 0; i < nq; i++)
		for (int m = 0; m < ri->nmodes; m++)
		{
			char	   *sql = ri->modes[m]->arrow ?
				rewrite_to_arrow(qs[i]->text, ri->modes[m]->fact_only) :
				xstrdup(qs[i]->text);

			printf("-- %s %s (%s)\n%s;\n\n", qs[i]->name, ri->modes[m]->name,
				   ri->modes[m]->settings, sql);
			free(sql);
		}
}

/*
 * Connect, note the server's version and settings in ri, set the statement
 * timeout.  Returns 0, or 1 after an error message.
 */
static int
open_session(const char *dsn, RunInfo *ri)
{
	conn = pgw_connect(dsn, "pgwarp bench");
	if (conn == NULL)
		return 1;
	machine_info(ri);
	ri->server_version = query_value("SELECT version()");
	ri->settings = query_value(
		"SELECT string_agg(name || '=' || setting || coalesce(unit, ''), ', ' ORDER BY name) "
		"FROM pg_settings WHERE name IN ('jit', 'max_parallel_workers_per_gather', "
		"'shared_buffers', 'work_mem', 'shared_preload_libraries', 'effective_cache_size')");
	if (ri->timeout > 0)
	{
		char	   *set = xasprintf("SET statement_timeout = %.0f", ri->timeout * 1000);
		char	   *err = run_command(set);

		free(set);
		if (err)
		{
			pgw_error("could not set statement_timeout: %s", err);
			PQfinish(conn);
			return 1;
		}
	}
	return 0;
}

/* "QUERY MODE (what); " onto the list of failures */
static void
add_failure(Failures *f, const char *query, const char *mode, const char *what)
{
	buf_puts(&f->list, query);
	buf_puts(&f->list, " ");
	buf_puts(&f->list, mode);
	buf_puts(&f->list, what);
}

/*
 * The mode's settings, and for pg_warp modes the check that it plans the
 * query: NULL, or why the query cannot run in this mode (malloc'd).
 */
static char *
set_mode(const ModeDef *md, const char *sql)
{
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
	return err;
}

/* The answer of mode m compared with that of mode ref: a mismatch noted. */
static void
check_answer(Query *q, int m, int ref, const RunInfo *ri, Failures *f)
{
	const ModeDef *md = ri->modes[m];
	Cell	   *cell = &q->cells[m];
	char	   *diff = compare_results(q->text, q->cells[ref].result,
									   ri->modes[ref]->name, cell->result,
									   md->name);

	if (diff)
	{
		fflush(stdout);
		fprintf(stderr, "pgwarp: %s: %s returns different answers from %s:\n%s",
				q->name, md->name, ri->modes[ref]->name, diff);
		cell->status = ST_MISMATCH;
		cell->note = xasprintf("answers differ from %s", ri->modes[ref]->name);
		f->nmismatch++;
		add_failure(f, q->name, md->name, " (wrong answer); ");
		free(diff);
	}
}

/*
 * One query in every mode, each answer checked against the first mode's
 * with one.  Returns 0, or the exit code when the connection is lost.
 */
static int
run_query(Query *q, const RunInfo *ri, Failures *f)
{
	int			rc = 0;
	int			ref = -1;		/* the first mode with an answer */

	for (int m = 0; m < ri->nmodes; m++)
	{
		const ModeDef *md = ri->modes[m];
		Cell	   *cell = &q->cells[m];
		char	   *sql = md->arrow ? rewrite_to_arrow(q->text, md->fact_only) :
			xstrdup(q->text);
		char	   *err;

		err = set_mode(md, sql);
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
				f->nerror++;
				add_failure(f, q->name, md->name, " (error); ");
			}
			free(sql);
			continue;
		}
		run_cell(cell, q->name, md->name, sql, ri->runs, ri->timeout);
		free(sql);
		if (connection_lost())
		{
			rc = pgw_error("lost the connection: %s", PQerrorMessage(conn));
			break;
		}
		if (cell->status == ST_ERROR)
		{
			f->nerror++;
			add_failure(f, q->name, md->name, " (error); ");
		}
		if (cell->result == NULL)
			continue;
		if (ref < 0)
		{
			ref = m;
			continue;
		}
		check_answer(q, m, ref, ri, f);
	}
	for (int m = 0; m < ri->nmodes; m++)
		if (q->cells[m].result)
		{
			PQclear(q->cells[m].result);
			q->cells[m].result = NULL;
		}
	return rc;
}

/* results.csv, results.md and chart.svg in outdir; 0, or 1 on a failure */
static int
write_results(const char *outdir, Query **qs, int nq, const RunInfo *ri)
{
	int			rc = 0;
	char	   *p;

	p = xasprintf("%s/results.csv", outdir);
	if (write_csv(p, qs, nq, ri) != 0)
		rc = 1;
	free(p);
	p = xasprintf("%s/results.md", outdir);
	if (write_md(p, qs, nq, ri) != 0)
		rc = 1;
	free(p);
	p = xasprintf("%s/chart.svg", outdir);
	if (write_svg(p, qs, nq, ri) != 0)
		rc = 1;
	free(p);
	return rc;
}

int
cmd_bench(int argc, char **argv)
{
	BenchOpts	o;
	RunInfo		ri;
	Query	  **qs;
	int			nq;
	int			rc;
	Failures	f = {0};

	memset(&ri, 0, sizeof(ri));
	rc = parse_bench_args(argc, argv, &o, &ri);
	if (rc >= 0)
		return rc;
	rc = 0;

	nq = load_queries(o.qdir, o.only, &qs);
	if (nq < 0)
		return 1;

	if (o.show_sql)
	{
		show_queries(qs, nq, &ri);
		return 0;
	}

	if (make_dir(o.outdir) != 0)
		return 1;

	if (open_session(o.dsn, &ri) != 0)
		return 1;
	fprintf(stderr, "pgwarp bench: %d queries x %d modes, %d timed runs each, results in %s\n",
			nq, ri.nmodes, ri.runs, o.outdir);

	for (int i = 0; i < nq && rc == 0; i++)
		rc = run_query(qs[i], &ri, &f);
	PQfinish(conn);

	if (write_results(o.outdir, qs, nq, &ri) != 0)
		rc = 1;
	if (rc == 0)
		fprintf(stderr, "pgwarp bench: wrote %s/results.csv, %s/results.md, %s/chart.svg\n",
				o.outdir, o.outdir, o.outdir);
	if (f.nmismatch > 0 || f.nerror > 0)
	{
		if (f.list.len >= 2)
			f.list.s[f.list.len - 2] = '\0';
		pgw_error("%d wrong answer%s, %d error%s: %s", f.nmismatch, f.nmismatch == 1 ? "" : "s",
				  f.nerror, f.nerror == 1 ? "" : "s", f.list.s ? f.list.s : "");
		rc = 1;
	}
	return rc;
}
