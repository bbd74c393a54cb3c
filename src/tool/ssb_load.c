/*
 * ssb_load.c — `pgwarp ssb load -d DSN --from DIR`: heap tables loaded by
 * COPY from our .tbl files or dbgen's (trailing '|' stripped), keys, ANALYZE,
 * and arrow_fdw foreign tables <table>_arrow over the .arrow files.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libpq-fe.h"
#include "pgwarp.h"
#include "ssb_gen.h"
#include "ssb_cli.h"

/* ----------------------------------------------------------------- load */

typedef struct LoadCx
{
	PGconn	   *conn;
	const char *schema_q;		/* quoted schema name and a dot, or "" */
	bool		quiet;
} LoadCx;

static int
report_pg(PGconn *conn, PGresult *res, const char *what)
{
	const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	const char *ctx = res ? PQresultErrorField(res, PG_DIAG_CONTEXT) : NULL;

	if (msg == NULL)
		msg = PQerrorMessage(conn);
	if (ctx)
		return pgw_error("%s: %s (%s)", what, msg, ctx);
	return pgw_error("%s: %s", what, msg);
}

static int
exec_ok(LoadCx *lx, const char *sql, const char *what)
{
	PGresult   *res = PQexec(lx->conn, sql);
	int			rc = 0;

	if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK)
		rc = report_pg(lx->conn, res, what);
	PQclear(res);
	return rc;
}

/* "schema"."name" into buf */
static char *
qualified(LoadCx *lx, const char *name, char *buf, size_t len)
{
	char	   *q = PQescapeIdentifier(lx->conn, name, strlen(name));

	snprintf(buf, len, "%s%s", lx->schema_q, q ? q : name);
	PQfreemem(q);
	return buf;
}

static char *
column_list(SsbTable t)
{
	const SsbTableInfo *ti = &ssb_tables[t];
	size_t		len = 16;
	char	   *s,
			   *p;

	for (int i = 0; i < ti->n_cols; i++)
		len += strlen(ti->cols[i].name) + strlen(ti->cols[i].pg_type) + 16;
	s = p = malloc(len);
	if (s == NULL)
		return NULL;
	*p++ = '(';
	for (int i = 0; i < ti->n_cols; i++)
		p += sprintf(p, "%s%s %s NOT NULL", i ? ", " : "", ti->cols[i].name,
					 ti->cols[i].pg_type);
	*p++ = ')';
	*p = '\0';
	return s;
}

/*
 * Stream a .tbl file into COPY FROM STDIN: each line's trailing '\r' and
 * one trailing '|' go, backslashes are doubled (text format escapes), empty
 * lines are skipped.
 */
static int
copy_tbl(LoadCx *lx, const char *path, const char *table_q, int64_t *rows)
{
	char		sql[1024];
	PGresult   *res;
	int			fd;
	size_t		cap = 1 << 20,
				have = 0;
	char	   *in = malloc(cap);
	char	   *out = malloc(2 * cap + 16);
	size_t		olen = 0;
	bool		eof = false;
	int			rc = 0;

	if (in == NULL || out == NULL)
	{
		free(in);
		free(out);
		return pgw_error("out of memory");
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
	{
		free(in);
		free(out);
		return pgw_error("could not open \"%s\": %s", path, strerror(errno));
	}
	snprintf(sql, sizeof(sql), "COPY %s FROM STDIN (FORMAT text, DELIMITER '|')", table_q);
	res = PQexec(lx->conn, sql);
	if (PQresultStatus(res) != PGRES_COPY_IN)
	{
		rc = report_pg(lx->conn, res, "COPY failed");
		PQclear(res);
		close(fd);
		free(in);
		free(out);
		return rc;
	}
	PQclear(res);

	while (!eof || have > 0)
	{
		size_t		pos = 0;

		if (!eof)
		{
			ssize_t		n;

			if (have == cap)
			{
				/* one line longer than the buffer: grow both */
				char	   *ni = realloc(in, cap * 2);
				char	   *no = ni ? realloc(out, cap * 4 + 16) : NULL;

				if (ni)
					in = ni;
				if (no == NULL)
				{
					rc = pgw_error("out of memory (a line of \"%s\" is too long)", path);
					break;
				}
				out = no;
				cap *= 2;
			}
			n = read(fd, in + have, cap - have);
			if (n < 0)
			{
				if (errno == EINTR)
					continue;
				rc = pgw_error("could not read \"%s\": %s", path, strerror(errno));
				break;
			}
			if (n == 0)
				eof = true;
			have += (size_t) n;
		}
		for (;;)
		{
			char	   *nl = memchr(in + pos, '\n', have - pos);
			size_t		end;
			size_t		next;

			if (nl == NULL)
			{
				if (!eof || pos == have)
					break;
				end = have;		/* last line without a newline */
				next = have;
			}
			else
			{
				end = (size_t) (nl - in);
				next = end + 1;
			}
			if (end > pos && in[end - 1] == '\r')
				end--;
			if (end > pos)		/* empty lines are skipped */
			{
				if (in[end - 1] == '|')
					end--;
				for (size_t i = pos; i < end; i++)
				{
					if (in[i] == '\\')
						out[olen++] = '\\';
					out[olen++] = in[i];
				}
				out[olen++] = '\n';
				(*rows)++;
			}
			pos = next;
			if (olen >= cap)
			{
				if (PQputCopyData(lx->conn, out, (int) olen) != 1)
				{
					rc = pgw_error("COPY failed: %s", PQerrorMessage(lx->conn));
					goto done;
				}
				olen = 0;
			}
		}
		memmove(in, in + pos, have - pos);
		have -= pos;
		if (eof && have == 0)
			break;
	}
done:
	if (rc == 0 && olen > 0 && PQputCopyData(lx->conn, out, (int) olen) != 1)
		rc = pgw_error("COPY failed: %s", PQerrorMessage(lx->conn));
	if (PQputCopyEnd(lx->conn, rc == 0 ? NULL : "pgwarp: input error") != 1 && rc == 0)
		rc = pgw_error("COPY failed: %s", PQerrorMessage(lx->conn));
	while ((res = PQgetResult(lx->conn)) != NULL)
	{
		if (rc == 0 && PQresultStatus(res) != PGRES_COMMAND_OK)
		{
			char		what[PATH_MAX + 64];

			snprintf(what, sizeof(what), "COPY from \"%s\" failed", path);
			rc = report_pg(lx->conn, res, what);
		}
		PQclear(res);
	}
	close(fd);
	free(in);
	free(out);
	return rc;
}

static void
rollback(LoadCx *lx)
{
	PGresult   *res = PQexec(lx->conn, "ROLLBACK");

	PQclear(res);
}

/*
 * BEGIN, drop table tq if replace, and create it with these columns: a heap
 * table, or with lit (the quoted path of an Arrow file) a foreign table of
 * arrow_fdw.  sql is the caller's buffer for the statements.
 */
static int
begin_create_table(LoadCx *lx, const char *tq, const char *cols,
				   const char *lit, bool replace, char *sql)
{
	const char *kind = lit ? "foreign table" : "table";
	char		what[700];

	if (exec_ok(lx, "BEGIN", "could not begin a transaction") != 0)
		return 1;
	if (replace)
	{
		sprintf(sql, "DROP %s IF EXISTS %s", lit ? "FOREIGN TABLE" : "TABLE", tq);
		snprintf(what, sizeof(what), "could not drop %s %s", kind, tq);
		if (exec_ok(lx, sql, what) != 0)
			return 1;
	}
	if (lit)
		sprintf(sql, "CREATE FOREIGN TABLE %s %s SERVER arrow_fdw OPTIONS (file %s)",
				tq, cols, lit);
	else
		sprintf(sql, "CREATE TABLE %s %s", tq, cols);
	snprintf(what, sizeof(what), "could not create %s %s%s", kind, tq,
			 replace ? "" : " (use --replace to drop existing tables)");
	return exec_ok(lx, sql, what);
}

static int
load_heap(LoadCx *lx, SsbTable t, const char *path, bool replace)
{
	const SsbTableInfo *ti = &ssb_tables[t];
	char		tq[512];
	char	   *cols = column_list(t);
	char	   *sql;
	int64_t		rows = 0;
	double		t0 = pgw_now(),
				t_copy,
				t_key;
	char		what[PATH_MAX + 1200];

	if (cols == NULL)
		return pgw_error("out of memory");
	qualified(lx, ti->name, tq, sizeof(tq));
	sql = malloc(strlen(cols) + 1200);
	if (sql == NULL)
	{
		free(cols);
		return pgw_error("out of memory");
	}
	if (begin_create_table(lx, tq, cols, NULL, replace, sql) != 0)
		goto fail;
	if (copy_tbl(lx, path, tq, &rows) != 0)
		goto fail;
	t_copy = pgw_now() - t0;
	sprintf(sql, "ALTER TABLE %s ADD PRIMARY KEY (%s)", tq, ti->primary_key);
	snprintf(what, sizeof(what), "could not add the primary key of %s (from \"%s\")", tq, path);
	if (exec_ok(lx, sql, what) != 0)
		goto fail;
	if (exec_ok(lx, "COMMIT", "could not commit") != 0)
		goto fail;
	t_key = pgw_now() - t0 - t_copy;
	sprintf(sql, "ANALYZE %s", tq);
	if (exec_ok(lx, sql, "ANALYZE failed") != 0)
		goto fail;
	if (!lx->quiet)
		printf("%-20s %11lld rows from %s (COPY %.2f s, primary key %.2f s, ANALYZE %.2f s)\n",
			   ti->name, (long long) rows, path, t_copy, t_key,
			   pgw_now() - t0 - t_copy - t_key);
	free(cols);
	free(sql);
	return 0;
fail:
	rollback(lx);
	free(cols);
	free(sql);
	return 1;
}

/* Can the server read this file?  (It runs as its own OS user.) */
static int
check_server_reads(LoadCx *lx, const char *path, const char *dir)
{
	const char *params[1] = {path};
	PGresult   *res = PQexecParams(lx->conn,
								   "SELECT pg_catalog.pg_read_binary_file($1, 0, 6)",
								   1, NULL, params, NULL, NULL, 0);
	int			rc = 0;

	if (PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		const char *msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);

		rc = pgw_error("the database server cannot read \"%s\": %s; the server runs "
					   "as its own operating system user, so %s and every directory "
					   "above it must be searchable, and the .arrow files readable, "
					   "by that user (and reading server files needs a superuser or "
					   "pg_read_server_files)",
					   path, msg ? msg : PQerrorMessage(lx->conn), dir);
	}
	PQclear(res);
	return rc;
}

static int
load_arrow(LoadCx *lx, SsbTable t, const char *path, const char *dir,
		   bool replace)
{
	const SsbTableInfo *ti = &ssb_tables[t];
	char		name[128];
	char		tq[512];
	char	   *cols;
	char	   *lit;
	char	   *sql;
	double		t0 = pgw_now();

	if (check_server_reads(lx, path, dir) != 0)
		return 1;
	snprintf(name, sizeof(name), "%s_arrow", ti->name);
	qualified(lx, name, tq, sizeof(tq));
	cols = column_list(t);
	lit = PQescapeLiteral(lx->conn, path, strlen(path));
	sql = cols && lit ? malloc(strlen(cols) + strlen(lit) + 1200) : NULL;
	if (sql == NULL)
	{
		free(cols);
		PQfreemem(lit);
		return pgw_error("out of memory");
	}
	if (begin_create_table(lx, tq, cols, lit, replace, sql) != 0)
		goto fail;
	if (exec_ok(lx, "COMMIT", "could not commit") != 0)
		goto fail;
	sprintf(sql, "ANALYZE %s", tq);
	if (exec_ok(lx, sql, "ANALYZE failed") != 0)
		goto fail;
	if (!lx->quiet)
		printf("%-20s foreign table over %s (%.2f s)\n", name, path, pgw_now() - t0);
	free(cols);
	PQfreemem(lit);
	free(sql);
	return 0;
fail:
	rollback(lx);
	free(cols);
	PQfreemem(lit);
	free(sql);
	return 1;
}

static int
ensure_arrow_fdw(LoadCx *lx)
{
	PGresult   *res = PQexec(lx->conn,
							 "SELECT 1 FROM pg_catalog.pg_foreign_server WHERE srvname = 'arrow_fdw'");
	bool		have;

	if (PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		int			rc = report_pg(lx->conn, res, "could not look up the arrow_fdw server");

		PQclear(res);
		return rc;
	}
	have = PQntuples(res) > 0;
	PQclear(res);
	if (have)
		return 0;
	res = PQexec(lx->conn, "CREATE EXTENSION IF NOT EXISTS pg_warp");
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
	{
		int			rc = report_pg(lx->conn, res,
								   "the .arrow files need the pg_warp extension (its arrow_fdw server), "
								   "and CREATE EXTENSION pg_warp failed");

		PQclear(res);
		return rc;
	}
	PQclear(res);
	return 0;
}

/*
 * The real path of directory `from` into dir (PATH_MAX), and which SSB
 * tables have a .tbl and which an .arrow file there.  Returns 0, or 1 after
 * an error message.
 */
static int
find_ssb_files(const char *from, char *dir, bool *has_tbl, bool *has_arrow)
{
	int			n_files = 0;
	struct stat st;

	if (realpath(from, dir) == NULL)
		return pgw_error("could not open directory \"%s\": %s", from, strerror(errno));
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return pgw_error("\"%s\" is not a directory", from);
	for (int t = 0; t < SSB_N_TABLES; t++)
	{
		char		p[PATH_MAX + 32];

		snprintf(p, sizeof(p), "%s/%s.tbl", dir, ssb_tables[t].name);
		has_tbl[t] = stat(p, &st) == 0 && S_ISREG(st.st_mode);
		snprintf(p, sizeof(p), "%s/%s.arrow", dir, ssb_tables[t].name);
		has_arrow[t] = stat(p, &st) == 0 && S_ISREG(st.st_mode);
		n_files += has_tbl[t] + has_arrow[t];
	}
	if (n_files == 0)
		return pgw_error("no SSB files in \"%s\" (expected lineorder.tbl, customer.tbl, "
						 "supplier.tbl, part.tbl, date.tbl and/or the same names with .arrow)",
						 dir);
	return 0;
}

/*
 * With --schema, create the schema if missing and qualify the tables with
 * it (*schema_q, the caller's to free); else leave them unqualified.
 * Returns 0, or 1 after an error message.
 */
static int
use_schema(LoadCx *lx, const char *schema, char **schema_q)
{
	int			rc = 0;

	if (schema)
	{
		char	   *q = PQescapeIdentifier(lx->conn, schema, strlen(schema));
		char	   *sql;

		if (q == NULL)
		{
			return pgw_error("invalid schema name: %s", PQerrorMessage(lx->conn));
		}
		*schema_q = malloc(strlen(q) + 2);
		sql = malloc(strlen(q) + 64);
		if (*schema_q == NULL || sql == NULL)
		{
			PQfreemem(q);
			free(sql);
			return pgw_error("out of memory");
		}
		sprintf(*schema_q, "%s.", q);
		sprintf(sql, "CREATE SCHEMA IF NOT EXISTS %s", q);
		PQfreemem(q);
		rc = exec_ok(lx, sql, "could not create the schema");
		free(sql);
		if (rc != 0)
			return rc;
		lx->schema_q = *schema_q;
	}
	else
		lx->schema_q = "";
	return rc;
}

/* The .tbl files into heap tables, then foreign tables over the .arrow files. */
static int
load_tables(LoadCx *lx, const char *dir, const bool *has_tbl,
			const bool *has_arrow, bool replace)
{
	int			rc = 0;
	bool		fdw_checked = false;

	for (int k = 0; k < SSB_N_TABLES && rc == 0; k++)
	{
		SsbTable	t = ssb_table_order[k];
		char		p[PATH_MAX + 32];

		if (!has_tbl[t])
			continue;
		snprintf(p, sizeof(p), "%s/%s.tbl", dir, ssb_tables[t].name);
		rc = load_heap(lx, t, p, replace);
		fflush(stdout);
	}
	for (int k = 0; k < SSB_N_TABLES && rc == 0; k++)
	{
		SsbTable	t = ssb_table_order[k];
		char		p[PATH_MAX + 32];

		if (!has_arrow[t])
			continue;
		if (!fdw_checked)
		{
			rc = ensure_arrow_fdw(lx);
			fdw_checked = true;
			if (rc != 0)
				break;
		}
		snprintf(p, sizeof(p), "%s/%s.arrow", dir, ssb_tables[t].name);
		rc = load_arrow(lx, t, p, dir, replace);
		fflush(stdout);
	}
	return rc;
}

int
cmd_ssb_load(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"dbname", required_argument, NULL, 'd'},
		{"from", required_argument, NULL, 'f'},
		{"schema", required_argument, NULL, 's'},
		{"replace", no_argument, NULL, 'r'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}
	};
	const char *dsn = NULL;
	const char *from = NULL;
	const char *schema = NULL;
	bool		replace = false;
	bool		quiet = false;
	int			opt;
	char		dir[PATH_MAX];
	bool		has_tbl[SSB_N_TABLES],
				has_arrow[SSB_N_TABLES];
	LoadCx		lx;
	char	   *schema_q = NULL;
	int			rc = 0;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "d:h", longopts, NULL)) != -1)
	{
		switch (opt)
		{
			case 'd':
				dsn = optarg;
				break;
			case 'f':
				from = optarg;
				break;
			case 's':
				schema = optarg;
				break;
			case 'r':
				replace = true;
				break;
			case 'q':
				quiet = true;
				break;
			case 'h':
				fputs(ssb_usage, stdout);
				return 0;
			default:
				return pgw_usage_error("ssb load", "invalid option \"%s\"", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return pgw_usage_error("ssb load", "unexpected argument \"%s\"", argv[optind]);
	if (from == NULL)
		return pgw_usage_error("ssb load", "missing --from DIR");
	if (schema != NULL && schema[0] == '\0')
		return pgw_usage_error("ssb load", "empty --schema");
	if (find_ssb_files(from, dir, has_tbl, has_arrow) != 0)
		return 1;

	memset(&lx, 0, sizeof(lx));
	lx.quiet = quiet;
	lx.conn = pgw_connect(dsn, "pgwarp");
	if (lx.conn == NULL)
		return 1;
	{
		PGresult   *res = PQexec(lx.conn, "SET client_min_messages = warning");

		PQclear(res);
	}
	rc = use_schema(&lx, schema, &schema_q);
	if (rc != 0)
		goto done;

	rc = load_tables(&lx, dir, has_tbl, has_arrow, replace);
done:
	free(schema_q);
	PQfinish(lx.conn);
	return rc;
}

