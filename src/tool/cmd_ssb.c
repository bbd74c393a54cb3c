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
 * load (ssb_load.c): heap tables with primary keys, filled by COPY FROM STDIN (FORMAT
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
#include "ssb_cli.h"

const char *const ssb_usage =
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

/* generation and load order: small tables first */
const SsbTable ssb_table_order[SSB_N_TABLES] = {
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

typedef struct GenOpts
{
	bool		do_fsync;
	double		sf;
	const char *format;
	const char *out;
	int64_t		threads;
	uint64_t	seed;
	bool		cluster;
	int64_t		batch_rows;
	bool		quiet;
	bool		tbl;
} GenOpts;

/* The command line into *o.  Returns -1 to go on, else the exit code. */
static int
parse_gen_args(int argc, char **argv, GenOpts *o)
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
	int			opt;

	memset(o, 0, sizeof(*o));
	o->sf = -1;
	o->batch_rows = ARROW_DEFAULT_BATCH_ROWS;
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
					o->sf = strtod(optarg, &end);
					if (errno != 0 || end == optarg || *end != '\0' || !(o->sf > 0))
						return pgw_usage_error("ssb gen", "invalid scale factor \"%s\"", optarg);
					break;
				}
			case 'f':
				o->format = optarg;
				break;
			case 'o':
				o->out = optarg;
				break;
			case 't':
				if (!pgw_parse_count(optarg, &o->threads) || o->threads > 1024)
					return pgw_usage_error("ssb gen", "invalid thread count \"%s\"", optarg);
				break;
			case 'S':
				{
					char	   *end;

					errno = 0;
					o->seed = strtoull(optarg, &end, 10);
					if (errno != 0 || end == optarg || *end != '\0' || optarg[0] == '-')
						return pgw_usage_error("ssb gen", "invalid seed \"%s\" (an unsigned integer)", optarg);
					break;
				}
			case 'c':
				o->cluster = true;
				break;
			case 'b':
				if (!pgw_parse_count(optarg, &o->batch_rows) || o->batch_rows > INT32_MAX)
					return pgw_usage_error("ssb gen", "invalid --batch-rows \"%s\"", optarg);
				break;
			case 'F':
				o->do_fsync = true;
				break;
			case 'q':
				o->quiet = true;
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
	if (o->sf < 0)
		return pgw_usage_error("ssb gen", "missing --sf N");
	if (o->format == NULL)
		return pgw_usage_error("ssb gen", "missing --format arrow|tbl");
	if (strcmp(o->format, "arrow") == 0)
		o->tbl = false;
	else if (strcmp(o->format, "tbl") == 0)
		o->tbl = true;
	else
		return pgw_usage_error("ssb gen", "unknown format \"%s\" (arrow or tbl)", o->format);
	if (o->out == NULL || o->out[0] == '\0')
		return pgw_usage_error("ssb gen", "missing --out DIR");
	if (o->threads == 0)
	{
		long		n = sysconf(_SC_NPROCESSORS_ONLN);

		o->threads = n < 1 ? 1 : (n > 64 ? 64 : n);
	}
	return -1;
}

/*
 * Every table into its file in o->out, a line for each unless quiet.
 * Returns 0, or the exit code of a failure.
 */
static int
generate_tables(const SsbConfig *cfg, const GenOpts *o, int64_t *total_rows)
{
	const char *out = o->out;
	bool		tbl = o->tbl;

	for (int k = 0; k < SSB_N_TABLES; k++)
	{
		SsbTable	t = ssb_table_order[k];
		char		path[PATH_MAX];
		int64_t		rows = 0,
					batches = 0,
					bytes = 0;
		double		t0 = pgw_now(),
					el;
		int			rc;

		if (snprintf(path, sizeof(path), "%s/%s.%s", out, ssb_tables[t].name,
					 tbl ? "tbl" : "arrow") >= (int) sizeof(path))
			return pgw_error("output path too long");
		if (tbl)
			rc = write_tbl(cfg, t, path, (int) o->threads, o->do_fsync, &rows, &bytes);
		else
			rc = write_arrow(cfg, t, path, (int) o->threads, o->batch_rows, o->do_fsync,
							 &rows, &batches, &bytes);
		if (rc != 0)
			return rc;
		*total_rows += rows;
		el = pgw_now() - t0;
		if (!o->quiet)
		{
			printf("%-16s %11lld rows", path + strlen(out) + 1, (long long) rows);
			if (!tbl)
				printf(", %lld batch%s", (long long) batches, batches == 1 ? "" : "es");
			printf(", %.1f MB, %.2f s (%.2fM rows/s)\n", bytes / 1e6, el,
				   el > 0 ? rows / el / 1e6 : 0.0);
			fflush(stdout);
		}
	}
	return 0;
}

static int
ssb_gen(int argc, char **argv)
{
	GenOpts		o;
	SsbConfig  *cfg;
	char		errbuf[256];
	double		t_all;
	int64_t		total_rows = 0;
	int			rc;

	rc = parse_gen_args(argc, argv, &o);
	if (rc >= 0)
		return rc;

	cfg = malloc(sizeof(SsbConfig));
	if (cfg == NULL)
		return pgw_error("out of memory");
	if (ssb_config_init(cfg, o.sf, o.seed, o.cluster, errbuf, sizeof(errbuf)) != 0)
	{
		free(cfg);
		return pgw_usage_error("ssb gen", "%s", errbuf);
	}
	if (make_dirs(o.out) != 0)
	{
		free(cfg);
		return 1;
	}
	pgw_install_signal_cleanup();

	t_all = pgw_now();
	rc = generate_tables(cfg, &o, &total_rows);
	if (rc != 0)
	{
		free(cfg);
		return rc;
	}
	if (!o.quiet)
		printf("SSB SF %g (seed %llu%s, %d threads): %lld rows in %.2f s\n",
			   o.sf, (unsigned long long) o.seed, o.cluster ? ", clustered by date" : "",
			   (int) o.threads, (long long) total_rows, pgw_now() - t_all);
	free(cfg);
	return 0;
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
		return cmd_ssb_load(argc - 1, argv + 1);
	return pgw_usage_error("ssb", "unknown subcommand \"%s\" (gen or load)", argv[1]);
}
