/*
 * cmd_ssb.c — pgwarp ssb gen | load: Star Schema Benchmark data.
 *
 *   pgwarp ssb gen --sf N --format arrow|tbl --out DIR [--threads T]
 *                  [--seed S] [--cluster-by-date] [--batch-rows N] [--quiet]
 *   pgwarp ssb load -d DSN --from DIR [--schema S] [--replace] [--quiet]
 *
 * gen: the rows come from ssb_gen.c.  T worker threads generate chunks of
 * units (orders, or dimension rows) into per-thread slots, as columns (and
 * formatted as .tbl text with --format tbl); the main thread takes the chunks
 * in unit order and appends them to the Arrow writer (statistics included)
 * or writes the text.  Chunk boundaries depend only on the table, so the
 * output is byte-identical for any T.  Arrow record batches hold exactly
 * --batch-rows rows (the last one fewer).
 *
 * load: heap tables with primary keys, filled by COPY FROM STDIN (FORMAT
 * text, DELIMITER '|') from DIR/<table>.tbl (ours or dbgen's: each line's
 * trailing '|' is stripped and backslashes are doubled as the lines stream
 * through), then ANALYZE; and, for each DIR/<table>.arrow, an arrow_fdw
 * foreign table <table>_arrow, then ANALYZE.
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

static const char *ssb_usage =
"Usage:\n"
"  pgwarp ssb gen --sf N --format arrow|tbl --out DIR [--threads T] [--seed S]\n"
"                 [--cluster-by-date] [--batch-rows N] [--fsync] [--quiet]\n"
"  pgwarp ssb load -d DSN --from DIR [--schema S] [--replace] [--quiet]\n"
"\n"
"Star Schema Benchmark (SSB) data: tables lineorder, customer, supplier, part\n"
"and date with the specification's columns.\n"
"\n"
"gen writes one file per table into DIR (created if missing): lineorder.arrow,\n"
"customer.arrow, ... (Arrow IPC files, int32 and utf8 columns, min/max\n"
"statistics per record batch) or lineorder.tbl, ... (dbgen-style text: fields\n"
"separated by '|', with a '|' after the last one).\n"
"  --sf N             scale factor, may be fractional (0.01, 0.1, 1, 10, ...):\n"
"                     lineorder ~6,000,000 x N rows, customer 30,000 x N,\n"
"                     supplier 2,000 x N, part 200,000 x floor(1 + log2 N)\n"
"                     (200,000 x N below 1), date 2,557 rows (1992-1998)\n"
"  --format F         arrow or tbl\n"
"  --out DIR          output directory\n"
"  --threads T        generator threads (default: the number of CPUs); the\n"
"                     output does not depend on T\n"
"  --seed S           random seed (default 0); the output is a function of\n"
"                     the seed and the scale factor\n"
"  --cluster-by-date  write lineorder ordered by lo_orderdate (the same rows,\n"
"                     generated order by order in date order)\n"
"  --batch-rows N     Arrow rows per record batch (default 1048576)\n"
"  --fsync            fsync each file before renaming it into place (default:\n"
"                     not, the data can be regenerated; a file appears under\n"
"                     its name only when complete either way)\n"
"\n"
"load creates heap tables lineorder, customer, ... (primary keys, ANALYZE)\n"
"loaded with COPY from DIR/<table>.tbl (ours or dbgen's), and arrow_fdw\n"
"foreign tables lineorder_arrow, customer_arrow, ... over DIR/<table>.arrow,\n"
"for the files that exist.  The server must be able to read DIR's .arrow\n"
"files (it runs as its own operating system user).\n"
"  -d, --dbname DSN   connection string or database name\n"
"  --from DIR         directory with the .tbl and/or .arrow files\n"
"  --schema S         create the tables in schema S (created if missing)\n"
"  --replace          drop existing tables of the same names first\n"
"  --quiet            print nothing but errors\n";

/* generation order: small tables first */
static const SsbTable gen_order[SSB_N_TABLES] = {
	SSB_DATE, SSB_SUPPLIER, SSB_CUSTOMER, SSB_PART, SSB_LINEORDER
};

/* ------------------------------------------------------------ pipeline */

typedef struct Slot
{
	int64_t		expect;			/* chunk index this slot holds next */
	int			state;			/* 0 free, 1 generating, 2 ready */
	bool		failed;			/* out of memory */
	bool		have_chunk;
	SsbChunk	chunk;
	char	   *text;
	size_t		text_cap;
	size_t		text_len;
} Slot;

typedef struct Pipeline
{
	pthread_mutex_t mu;
	pthread_cond_t cv;
	const SsbConfig *cfg;
	SsbTable	table;
	bool		tbl;
	int64_t		n_units;
	int64_t		units_per_chunk;
	int64_t		n_chunks;
	int64_t		next_claim;
	int			n_slots;
	Slot	   *slots;
	bool		stop;
} Pipeline;

static void
produce(Pipeline *pl, Slot *s, int64_t c)
{
	int64_t		u0 = c * pl->units_per_chunk;
	int64_t		u1 = u0 + pl->units_per_chunk;

	if (u1 > pl->n_units)
		u1 = pl->n_units;
	if (!s->have_chunk)
	{
		if (ssb_chunk_init(&s->chunk, pl->table, pl->units_per_chunk) != 0)
		{
			s->failed = true;
			return;
		}
		s->have_chunk = true;
	}
	ssb_generate(pl->cfg, pl->table, u0, u1, &s->chunk);
	if (pl->tbl)
	{
		size_t		need = ssb_tbl_bound(&s->chunk);

		if (need > s->text_cap)
		{
			char	   *t = realloc(s->text, need);

			if (t == NULL)
			{
				s->failed = true;
				return;
			}
			s->text = t;
			s->text_cap = need;
		}
		s->text_len = ssb_format_tbl(&s->chunk, s->text);
	}
}

static void *
worker_main(void *arg)
{
	Pipeline   *pl = arg;

	for (;;)
	{
		int64_t		c;
		Slot	   *s;

		pthread_mutex_lock(&pl->mu);
		if (pl->stop || pl->next_claim >= pl->n_chunks)
		{
			pthread_mutex_unlock(&pl->mu);
			break;
		}
		c = pl->next_claim++;
		s = &pl->slots[c % pl->n_slots];
		while (!pl->stop && !(s->state == 0 && s->expect == c))
			pthread_cond_wait(&pl->cv, &pl->mu);
		if (pl->stop)
		{
			pthread_mutex_unlock(&pl->mu);
			break;
		}
		s->state = 1;
		pthread_mutex_unlock(&pl->mu);

		produce(pl, s, c);

		pthread_mutex_lock(&pl->mu);
		s->state = 2;
		pthread_cond_broadcast(&pl->cv);
		pthread_mutex_unlock(&pl->mu);
	}
	return NULL;
}

/* The consumer: called once per chunk, in order; returns 0 or 1 (error
 * already reported). */
typedef int (*ConsumeFn) (void *ctx, Slot *s);

static int
run_pipeline(const SsbConfig *cfg, SsbTable t, bool tbl, int threads,
			 ConsumeFn consume, void *ctx)
{
	Pipeline	pl;
	pthread_t  *tids;
	int			started = 0;
	int			rc = 0;

	memset(&pl, 0, sizeof(pl));
	pthread_mutex_init(&pl.mu, NULL);
	pthread_cond_init(&pl.cv, NULL);
	pl.cfg = cfg;
	pl.table = t;
	pl.tbl = tbl;
	pl.n_units = ssb_table_units(cfg, t);
	pl.units_per_chunk = t == SSB_LINEORDER ? 4096 : 16384;
	pl.n_chunks = (pl.n_units + pl.units_per_chunk - 1) / pl.units_per_chunk;
	if (threads > pl.n_chunks)
		threads = (int) pl.n_chunks;
	if (threads < 1)
		threads = 1;
	pl.n_slots = threads + 2;
	pl.slots = calloc((size_t) pl.n_slots, sizeof(Slot));
	tids = calloc((size_t) threads, sizeof(pthread_t));
	if (pl.slots == NULL || tids == NULL)
	{
		free(pl.slots);
		free(tids);
		return pgw_error("out of memory");
	}
	for (int i = 0; i < pl.n_slots; i++)
		pl.slots[i].expect = i;

	for (int i = 0; i < threads; i++)
	{
		int			e = pthread_create(&tids[i], NULL, worker_main, &pl);

		if (e != 0)
		{
			if (started == 0)
			{
				rc = pgw_error("could not start a thread: %s", strerror(e));
				goto out;
			}
			break;				/* fewer threads will do */
		}
		started++;
	}

	for (int64_t c = 0; c < pl.n_chunks; c++)
	{
		Slot	   *s = &pl.slots[c % pl.n_slots];

		pthread_mutex_lock(&pl.mu);
		while (!(s->state == 2 && s->expect == c))
			pthread_cond_wait(&pl.cv, &pl.mu);
		pthread_mutex_unlock(&pl.mu);
		if (s->failed)
		{
			rc = pgw_error("out of memory generating table %s", ssb_tables[t].name);
			break;
		}
		if (consume(ctx, s) != 0)
		{
			rc = 1;
			break;
		}
		pthread_mutex_lock(&pl.mu);
		s->state = 0;
		s->expect = c + pl.n_slots;
		pthread_cond_broadcast(&pl.cv);
		pthread_mutex_unlock(&pl.mu);
	}

out:
	pthread_mutex_lock(&pl.mu);
	pl.stop = true;
	pthread_cond_broadcast(&pl.cv);
	pthread_mutex_unlock(&pl.mu);
	for (int i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	for (int i = 0; i < pl.n_slots; i++)
	{
		if (pl.slots[i].have_chunk)
			ssb_chunk_free(&pl.slots[i].chunk);
		free(pl.slots[i].text);
	}
	free(pl.slots);
	free(tids);
	pthread_cond_destroy(&pl.cv);
	pthread_mutex_destroy(&pl.mu);
	return rc;
}

/* --------------------------------------------------------------- Arrow */

typedef struct ArrowOut
{
	ArrowWriter *w;
	const ArrowSchema *schema;
	int64_t		batch_rows;
	int64_t		appended;
	const char *path;
	ArrowError	err;
} ArrowOut;

static int
consume_arrow(void *ctx, Slot *s)
{
	ArrowOut   *ao = ctx;
	const SsbChunk *c = &s->chunk;
	ArrowArray	arr[SSB_MAX_COLS];
	int64_t		start = 0;

	memset(arr, 0, sizeof(arr));
	for (int i = 0; i < c->n_cols; i++)
	{
		ArrowArray *a = &arr[i];

		a->field = &ao->schema->fields[i];
		a->length = c->n_rows;
		if (c->ints[i])
		{
			a->values = (const uint8_t *) c->ints[i];
			a->values_len = c->n_rows * 4;
		}
		else
		{
			a->offsets = (const uint8_t *) c->strs[i].offsets;
			a->data = (const uint8_t *) c->strs[i].data;
			a->data_len = c->strs[i].offsets[c->n_rows];
		}
	}
	while (start < c->n_rows)
	{
		int64_t		buffered = ao->appended - arrow_writer_rows(ao->w);
		int64_t		len = ao->batch_rows - buffered;

		if (len <= 0)
		{
			if (arrow_writer_flush(ao->w, &ao->err) != 0)
				return pgw_error("%s", ao->err.msg);
			continue;
		}
		if (len > c->n_rows - start)
			len = c->n_rows - start;
		for (int i = 0; i < c->n_cols; i++)
			if (arrow_builder_append_array(arrow_writer_column(ao->w, i), &arr[i],
										   start, len, &ao->err) != 0)
				return pgw_error("%s", ao->err.msg);
		if (arrow_writer_end_rows(ao->w, len, &ao->err) != 0)
			return pgw_error("%s", ao->err.msg);
		ao->appended += len;
		start += len;
	}
	return 0;
}

static int
build_schema(SsbTable t, ArrowSchema *schema, ArrowField *fields,
			 ArrowKeyValue *md)
{
	const SsbTableInfo *ti = &ssb_tables[t];

	memset(schema, 0, sizeof(*schema));
	memset(fields, 0, sizeof(ArrowField) * ti->n_cols);
	for (int i = 0; i < ti->n_cols; i++)
	{
		ArrowField *f = &fields[i];

		f->name = (char *) ti->cols[i].name;
		f->nullable = false;
		if (ti->cols[i].max_len == 0)
		{
			f->type.id = ARROW_TYPE_INT;
			f->type.bit_width = 32;
			f->type.is_signed = true;
		}
		else
			f->type.id = ARROW_TYPE_UTF8;
		md[i].key = (char *) "pg_type";
		md[i].value = (char *) ti->cols[i].pg_type;
		f->n_metadata = 1;
		f->metadata = &md[i];
	}
	schema->n_fields = ti->n_cols;
	schema->fields = fields;
	return 0;
}

static int
write_arrow(const SsbConfig *cfg, SsbTable t, const char *path, int threads,
			int64_t batch_rows, bool do_fsync, int64_t *rows, int64_t *batches,
			int64_t *bytes)
{
	ArrowSchema schema;
	ArrowField	fields[SSB_MAX_COLS];
	ArrowKeyValue md[SSB_MAX_COLS];
	ArrowWriterOptions opts;
	ArrowOut	ao;
	char	   *temp;
	int			rc;

	build_schema(t, &schema, fields, md);
	memset(&opts, 0, sizeof(opts));
	opts.batch_rows = batch_rows;
	opts.codec = ARROW_CODEC_NONE;
	opts.no_sync = !do_fsync;
	memset(&ao, 0, sizeof(ao));
	ao.batch_rows = batch_rows;
	ao.path = path;
	ao.schema = &schema;

	temp = pgw_temp_path(path);
	if (temp == NULL)
		return pgw_error("out of memory");
	pgw_cleanup_set_unlink(temp);
	if (arrow_writer_create(&ao.w, path, &schema, true, &opts, &ao.err) != 0)
	{
		pgw_cleanup_clear();
		free(temp);
		return pgw_error("%s", ao.err.msg);
	}
	rc = run_pipeline(cfg, t, false, threads, consume_arrow, &ao);
	if (rc != 0)
	{
		arrow_writer_abort(ao.w);
		pgw_cleanup_clear();
		free(temp);
		return rc;
	}
	if (arrow_writer_flush(ao.w, &ao.err) != 0)
	{
		arrow_writer_abort(ao.w);
		pgw_cleanup_clear();
		free(temp);
		return pgw_error("%s", ao.err.msg);
	}
	*rows = arrow_writer_rows(ao.w);
	*batches = arrow_writer_batches(ao.w);
	pgw_block_signals(true);
	rc = arrow_writer_close(ao.w, &ao.err);
	pgw_cleanup_clear();
	pgw_block_signals(false);
	free(temp);
	if (rc != 0)
		return pgw_error("%s", ao.err.msg);
	{
		struct stat st;

		*bytes = stat(path, &st) == 0 ? (int64_t) st.st_size : 0;
	}
	return 0;
}

/* ---------------------------------------------------------------- .tbl */

typedef struct TblOut
{
	int			fd;
	const char *path;
	int64_t		rows;
	int64_t		bytes;
} TblOut;

static int
consume_tbl(void *ctx, Slot *s)
{
	TblOut	   *to = ctx;
	const char *p = s->text;
	size_t		left = s->text_len;

	while (left > 0)
	{
		ssize_t		n = write(to->fd, p, left);

		if (n < 0)
		{
			if (errno == EINTR)
				continue;
			return pgw_error("could not write \"%s\": %s", to->path, strerror(errno));
		}
		p += n;
		left -= (size_t) n;
	}
	to->rows += s->chunk.n_rows;
	to->bytes += (int64_t) s->text_len;
	return 0;
}

static int
write_tbl(const SsbConfig *cfg, SsbTable t, const char *path, int threads,
		  bool do_fsync, int64_t *rows, int64_t *bytes)
{
	TblOut		to;
	char	   *temp = pgw_temp_path(path);
	int			rc;

	if (temp == NULL)
		return pgw_error("out of memory");
	memset(&to, 0, sizeof(to));
	to.path = path;
	pgw_cleanup_set_unlink(temp);
	to.fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (to.fd < 0)
	{
		rc = pgw_error("could not create \"%s\": %s", temp, strerror(errno));
		pgw_cleanup_clear();
		free(temp);
		return rc;
	}
	rc = run_pipeline(cfg, t, true, threads, consume_tbl, &to);
	if (rc == 0 && do_fsync && fsync(to.fd) != 0)
		rc = pgw_error("could not fsync \"%s\": %s", temp, strerror(errno));
	if (rc == 0 && close(to.fd) != 0)
		rc = pgw_error("could not write \"%s\": %s", temp, strerror(errno));
	else if (rc != 0)
		close(to.fd);
	pgw_block_signals(true);
	if (rc == 0 && rename(temp, path) != 0)
		rc = pgw_error("could not rename \"%s\" to \"%s\": %s", temp, path,
					   strerror(errno));
	if (rc != 0)
		unlink(temp);
	pgw_cleanup_clear();
	pgw_block_signals(false);
	free(temp);
	*rows = to.rows;
	*bytes = to.bytes;
	return rc;
}

/* ------------------------------------------------------------------ gen */

static int
make_dirs(const char *dir)
{
	char		buf[PATH_MAX];
	size_t		len = strlen(dir);
	struct stat st;

	if (len == 0 || len >= sizeof(buf))
		return pgw_error("invalid output directory \"%s\"", dir);
	memcpy(buf, dir, len + 1);
	for (size_t i = 1; i <= len; i++)
	{
		if (buf[i] == '/' || buf[i] == '\0')
		{
			char		save = buf[i];

			buf[i] = '\0';
			if (mkdir(buf, 0755) != 0 && errno != EEXIST)
				return pgw_error("could not create directory \"%s\": %s", buf,
								 strerror(errno));
			buf[i] = save;
		}
	}
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return pgw_error("\"%s\" is not a directory", dir);
	return 0;
}

static int
ssb_gen(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"sf", required_argument, NULL, 's'},
		{"format", required_argument, NULL, 'f'},
		{"out", required_argument, NULL, 'o'},
		{"threads", required_argument, NULL, 't'},
		{"seed", required_argument, NULL, 'S'},
		{"cluster-by-date", no_argument, NULL, 'c'},
		{"batch-rows", required_argument, NULL, 'b'},
		{"fsync", no_argument, NULL, 'F'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}
	};
	bool		do_fsync = false;
	double		sf = -1;
	const char *format = NULL;
	const char *out = NULL;
	int64_t		threads = 0;
	uint64_t	seed = 0;
	bool		cluster = false;
	int64_t		batch_rows = ARROW_DEFAULT_BATCH_ROWS;
	bool		quiet = false;
	bool		tbl;
	int			opt;
	SsbConfig  *cfg;
	char		errbuf[256];
	double		t_all;
	int64_t		total_rows = 0;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1)
	{
		switch (opt)
		{
			case 's':
				{
					char	   *end;

					errno = 0;
					sf = strtod(optarg, &end);
					if (errno != 0 || end == optarg || *end != '\0' || !(sf > 0))
						return pgw_usage_error("ssb gen", "invalid scale factor \"%s\"", optarg);
					break;
				}
			case 'f':
				format = optarg;
				break;
			case 'o':
				out = optarg;
				break;
			case 't':
				if (!pgw_parse_count(optarg, &threads) || threads > 1024)
					return pgw_usage_error("ssb gen", "invalid thread count \"%s\"", optarg);
				break;
			case 'S':
				{
					char	   *end;

					errno = 0;
					seed = strtoull(optarg, &end, 10);
					if (errno != 0 || end == optarg || *end != '\0' || optarg[0] == '-')
						return pgw_usage_error("ssb gen", "invalid seed \"%s\" (an unsigned integer)", optarg);
					break;
				}
			case 'c':
				cluster = true;
				break;
			case 'b':
				if (!pgw_parse_count(optarg, &batch_rows) || batch_rows > INT32_MAX)
					return pgw_usage_error("ssb gen", "invalid --batch-rows \"%s\"", optarg);
				break;
			case 'F':
				do_fsync = true;
				break;
			case 'q':
				quiet = true;
				break;
			case 'h':
				fputs(ssb_usage, stdout);
				return 0;
			default:
				return pgw_usage_error("ssb gen", "invalid option \"%s\"", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return pgw_usage_error("ssb gen", "unexpected argument \"%s\"", argv[optind]);
	if (sf < 0)
		return pgw_usage_error("ssb gen", "missing --sf N");
	if (format == NULL)
		return pgw_usage_error("ssb gen", "missing --format arrow|tbl");
	if (strcmp(format, "arrow") == 0)
		tbl = false;
	else if (strcmp(format, "tbl") == 0)
		tbl = true;
	else
		return pgw_usage_error("ssb gen", "unknown format \"%s\" (arrow or tbl)", format);
	if (out == NULL || out[0] == '\0')
		return pgw_usage_error("ssb gen", "missing --out DIR");
	if (threads == 0)
	{
		long		n = sysconf(_SC_NPROCESSORS_ONLN);

		threads = n < 1 ? 1 : (n > 64 ? 64 : n);
	}

	cfg = malloc(sizeof(SsbConfig));
	if (cfg == NULL)
		return pgw_error("out of memory");
	if (ssb_config_init(cfg, sf, seed, cluster, errbuf, sizeof(errbuf)) != 0)
	{
		free(cfg);
		return pgw_usage_error("ssb gen", "%s", errbuf);
	}
	if (make_dirs(out) != 0)
	{
		free(cfg);
		return 1;
	}
	pgw_install_signal_cleanup();

	t_all = pgw_now();
	for (int k = 0; k < SSB_N_TABLES; k++)
	{
		SsbTable	t = gen_order[k];
		char		path[PATH_MAX];
		int64_t		rows = 0,
					batches = 0,
					bytes = 0;
		double		t0 = pgw_now(),
					el;
		int			rc;

		if (snprintf(path, sizeof(path), "%s/%s.%s", out, ssb_tables[t].name,
					 tbl ? "tbl" : "arrow") >= (int) sizeof(path))
		{
			free(cfg);
			return pgw_error("output path too long");
		}
		if (tbl)
			rc = write_tbl(cfg, t, path, (int) threads, do_fsync, &rows, &bytes);
		else
			rc = write_arrow(cfg, t, path, (int) threads, batch_rows, do_fsync,
							 &rows, &batches, &bytes);
		if (rc != 0)
		{
			free(cfg);
			return rc;
		}
		total_rows += rows;
		el = pgw_now() - t0;
		if (!quiet)
		{
			printf("%-16s %11lld rows", path + strlen(out) + 1, (long long) rows);
			if (!tbl)
				printf(", %lld batch%s", (long long) batches, batches == 1 ? "" : "es");
			printf(", %.1f MB, %.2f s (%.2fM rows/s)\n", bytes / 1e6, el,
				   el > 0 ? rows / el / 1e6 : 0.0);
			fflush(stdout);
		}
	}
	if (!quiet)
		printf("SSB SF %g (seed %llu%s, %d threads): %lld rows in %.2f s\n",
			   sf, (unsigned long long) seed, cluster ? ", clustered by date" : "",
			   (int) threads, (long long) total_rows, pgw_now() - t_all);
	free(cfg);
	return 0;
}

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
	if (exec_ok(lx, "BEGIN", "could not begin a transaction") != 0)
		goto fail;
	if (replace)
	{
		sprintf(sql, "DROP TABLE IF EXISTS %s", tq);
		snprintf(what, sizeof(what), "could not drop table %s", tq);
		if (exec_ok(lx, sql, what) != 0)
			goto fail;
	}
	sprintf(sql, "CREATE TABLE %s %s", tq, cols);
	snprintf(what, sizeof(what), "could not create table %s%s", tq,
			 replace ? "" : " (use --replace to drop existing tables)");
	if (exec_ok(lx, sql, what) != 0)
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
	{
		PGresult   *res = PQexec(lx->conn, "ROLLBACK");

		PQclear(res);
	}
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
	char		what[700];
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
	if (exec_ok(lx, "BEGIN", "could not begin a transaction") != 0)
		goto fail;
	if (replace)
	{
		sprintf(sql, "DROP FOREIGN TABLE IF EXISTS %s", tq);
		snprintf(what, sizeof(what), "could not drop foreign table %s", tq);
		if (exec_ok(lx, sql, what) != 0)
			goto fail;
	}
	sprintf(sql, "CREATE FOREIGN TABLE %s %s SERVER arrow_fdw OPTIONS (file %s)",
			tq, cols, lit);
	snprintf(what, sizeof(what), "could not create foreign table %s%s", tq,
			 replace ? "" : " (use --replace to drop existing tables)");
	if (exec_ok(lx, sql, what) != 0)
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
	{
		PGresult   *res = PQexec(lx->conn, "ROLLBACK");

		PQclear(res);
	}
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

static int
ssb_load(int argc, char **argv)
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
	int			n_files = 0;
	LoadCx		lx;
	char	   *schema_q = NULL;
	int			rc = 0;
	bool		fdw_checked = false;
	struct stat st;

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

	memset(&lx, 0, sizeof(lx));
	lx.quiet = quiet;
	lx.conn = pgw_connect(dsn, "pgwarp");
	if (lx.conn == NULL)
		return 1;
	{
		PGresult   *res = PQexec(lx.conn, "SET client_min_messages = warning");

		PQclear(res);
	}
	if (schema)
	{
		char	   *q = PQescapeIdentifier(lx.conn, schema, strlen(schema));
		char	   *sql;

		if (q == NULL)
		{
			rc = pgw_error("invalid schema name: %s", PQerrorMessage(lx.conn));
			goto done;
		}
		schema_q = malloc(strlen(q) + 2);
		sql = malloc(strlen(q) + 64);
		if (schema_q == NULL || sql == NULL)
		{
			PQfreemem(q);
			free(sql);
			rc = pgw_error("out of memory");
			goto done;
		}
		sprintf(schema_q, "%s.", q);
		sprintf(sql, "CREATE SCHEMA IF NOT EXISTS %s", q);
		PQfreemem(q);
		rc = exec_ok(&lx, sql, "could not create the schema");
		free(sql);
		if (rc != 0)
			goto done;
		lx.schema_q = schema_q;
	}
	else
		lx.schema_q = "";

	for (int k = 0; k < SSB_N_TABLES && rc == 0; k++)
	{
		SsbTable	t = gen_order[k];
		char		p[PATH_MAX + 32];

		if (!has_tbl[t])
			continue;
		snprintf(p, sizeof(p), "%s/%s.tbl", dir, ssb_tables[t].name);
		rc = load_heap(&lx, t, p, replace);
		fflush(stdout);
	}
	for (int k = 0; k < SSB_N_TABLES && rc == 0; k++)
	{
		SsbTable	t = gen_order[k];
		char		p[PATH_MAX + 32];

		if (!has_arrow[t])
			continue;
		if (!fdw_checked)
		{
			rc = ensure_arrow_fdw(&lx);
			fdw_checked = true;
			if (rc != 0)
				break;
		}
		snprintf(p, sizeof(p), "%s/%s.arrow", dir, ssb_tables[t].name);
		rc = load_arrow(&lx, t, p, dir, replace);
		fflush(stdout);
	}
done:
	free(schema_q);
	PQfinish(lx.conn);
	return rc;
}

/* ---------------------------------------------------------------- entry */

int
cmd_ssb(int argc, char **argv)
{
	if (argc < 2)
	{
		fputs(ssb_usage, stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
		strcmp(argv[1], "help") == 0)
	{
		fputs(ssb_usage, stdout);
		return 0;
	}
	if (strcmp(argv[1], "gen") == 0)
		return ssb_gen(argc - 1, argv + 1);
	if (strcmp(argv[1], "load") == 0)
		return ssb_load(argc - 1, argv + 1);
	return pgw_usage_error("ssb", "unknown subcommand \"%s\" (gen or load)", argv[1]);
}
