/*
 * test_cpu_pool.c — the CPU driver on threads (src/engine/warp_cpu_pool.c)
 * against the same driver run on one thread over whole batches.
 *
 * Files written with our Arrow writer: one uncompressed with two batches
 * big enough to be cut into parts and a small one, one LZ4-compressed
 * (read whole).  Checked: the groups (merged over the threads' drivers)
 * equal the single driver's, with any number of threads and parts; the
 * error reported is the one of the earliest failing row in scan order
 * whatever the threads' timing; a load error names its batch and batch
 * row; an interrupt stops the pool; bytes and batches are counted.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arrow.h"
#include "unit.h"
#include "warp_cpu.h"
#include "warp_cpu_pool.h"
#include "warp_program.h"

#define ROWS_BIG	300000		/* a batch of two int32 columns: 2.4 MB */
#define ROWS_SMALL	100000		/* 0.8 MB: one unit */
#define NGROUPS		97

static char dir[] = "/tmp/pgwarp_pool_XXXXXX";

static const char *
path_of(const char *name)
{
	static char buf[256];

	snprintf(buf, sizeof(buf), "%s/%s", dir, name);
	return buf;
}

/* the value of column v at global row r (NULL every 13th row) */
static bool
v_null(int64_t r)
{
	return r % 13 == 7;
}

static int64_t
v_value(int64_t r)
{
	int64_t		v = (r * 7919) % 20011 - 10000;

	return v == -1 ? 1 : v;		/* -1 only where a test puts it */
}

/* a value of v put at a row in place of v_value's */
typedef struct Override
{
	int64_t		row;
	int64_t		v;
} Override;

/*
 * k = row % NGROUPS, v as above but for the overrides, d = row % 20000
 * days but for date_bad_row (a date PostgreSQL cannot hold)
 */
static int
write_file(const char *path, ArrowCodec codec, const Override *ov, int nov,
		   int64_t date_bad_row)
{
	ArrowField	f[3];
	ArrowSchema s;
	ArrowWriterOptions o;
	ArrowWriter *w;
	ArrowError	err;
	int64_t		r,
				total = 2 * ROWS_BIG + ROWS_SMALL;
	int			i;

	memset(f, 0, sizeof(f));
	f[0].name = "k";
	f[0].type.id = ARROW_TYPE_INT;
	f[0].type.bit_width = 32;
	f[0].type.is_signed = true;
	f[1] = f[0];
	f[1].name = "v";
	f[1].nullable = true;
	f[2].name = "d";
	f[2].nullable = true;
	f[2].type.id = ARROW_TYPE_DATE;
	f[2].type.unit = ARROW_DATE_DAY;
	memset(&s, 0, sizeof(s));
	s.n_fields = 3;
	s.fields = f;
	memset(&o, 0, sizeof(o));
	o.codec = codec;
	o.batch_rows = ROWS_BIG;
	o.no_sync = true;
	if (arrow_writer_create(&w, path, &s, true, &o, &err) < 0)
	{
		CHECK_MSG(0, err.msg);
		return -1;
	}
	for (r = 0; r < total; r++)
	{
		int64_t		v = v_value(r);
		bool		isnull = v_null(r);
		int			rc;

		for (i = 0; i < nov; i++)
			if (ov[i].row == r)
				v = ov[i].v, isnull = false;
		rc = arrow_builder_append_int(arrow_writer_column(w, 0), r % NGROUPS, &err);
		if (rc == 0)
			rc = isnull ? arrow_builder_append_null(arrow_writer_column(w, 1), &err)
				: arrow_builder_append_int(arrow_writer_column(w, 1), v, &err);
		if (rc == 0)
			rc = arrow_builder_append_int(arrow_writer_column(w, 2),
										  r == date_bad_row ? 2147483000 : r % 20000, &err);
		if (rc == 0)
			rc = arrow_writer_end_row(w, &err);
		/* the last batch is small: cut it there */
		if (rc == 0 && r == 2 * ROWS_BIG - 1)
			rc = arrow_writer_flush(w, &err);
		if (rc != 0)
		{
			CHECK_MSG(0, err.msg);
			arrow_writer_abort(w);
			return -1;
		}
	}
	if (arrow_writer_close(w, &err) < 0)
	{
		CHECK_MSG(0, err.msg);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------- programs */

typedef struct Prog
{
	WarpProgram p;
	WarpNode	nodes[16];
	int32_t		quals[2];
	WarpColumnSpec cols[3];
	WarpGroupKey keys[1];
	WarpAggSpec aggs[4];
} Prog;

static int
add_node(Prog *g, WarpOp op, WarpType t, int sub, int a, int b, int64_t ival)
{
	WarpNode   *n = &g->nodes[g->p.nnodes];

	memset(n, 0, sizeof(*n));
	n->op = op;
	n->type = t;
	n->sub = sub;
	n->a = a;
	n->b = b;
	n->ival = ival;
	return g->p.nnodes++;
}

/*
 * GROUP BY k: count(*), sum(v), count(v), max(d) [WHERE <qual>]:
 * qual 0 none, 1 "1000 / (v + 1) > 0": division by zero where v = -1,
 * integer overflow where v = 2147483647
 */
static void
make_prog(Prog *g, int qual)
{
	int			k,
				v,
				d;

	memset(g, 0, sizeof(*g));
	g->p.version = WARP_PROGRAM_VERSION;
	g->p.nodes = g->nodes;
	g->p.cols = g->cols;
	g->p.quals = g->quals;
	g->p.keys = g->keys;
	g->p.aggs = g->aggs;
	g->p.ncols = 3;
	g->cols[0].type = WT_INT4;
	g->cols[1].type = WT_INT4;
	g->cols[2].type = WT_DATE;
	k = add_node(g, WN_COL, WT_INT4, 0, 0, -1, 0);
	v = add_node(g, WN_COL, WT_INT4, 0, 1, -1, 0);
	d = add_node(g, WN_COL, WT_DATE, 0, 2, -1, 0);
	if (qual == 1)
	{
		int			c = add_node(g, WN_CONST, WT_INT4, 0, -1, -1, 1000);
		int			one = add_node(g, WN_CONST, WT_INT4, 0, -1, -1, 1);
		int			add = add_node(g, WN_ARITH, WT_INT4, WARP_ARITH_ADD, v, one, 0);
		int			div = add_node(g, WN_ARITH, WT_INT4, WARP_ARITH_DIV, c, add, 0);
		int			z = add_node(g, WN_CONST, WT_INT4, 0, -1, -1, 0);

		g->quals[g->p.nquals++] = add_node(g, WN_CMP, WT_BOOL, WARP_CMP_GT, div, z, 0);
	}
	g->keys[0].kind = WG_FACT;
	g->keys[0].node = k;
	g->p.nkeys = 1;
	g->aggs[0].kind = WA_COUNT_STAR;
	g->aggs[0].arg = -1;
	g->aggs[0].filter = -1;
	g->aggs[1].kind = WA_SUM_INT;
	g->aggs[1].type = WT_INT4;
	g->aggs[1].arg = v;
	g->aggs[1].filter = -1;
	g->aggs[2].kind = WA_COUNT;
	g->aggs[2].type = WT_INT4;
	g->aggs[2].arg = v;
	g->aggs[2].filter = -1;
	g->aggs[3].kind = WA_MAX;
	g->aggs[3].type = WT_DATE;
	g->aggs[3].arg = d;
	g->aggs[3].filter = -1;
	g->p.naggs = 4;
}

/* ------------------------------------------------------------ running */

static void *
test_alloc(void *ctx, size_t size)
{
	(void) ctx;
	return calloc(1, size);
}

typedef struct Opened
{
	int			fd;
	ArrowFile	file;
} Opened;

static int
open_file(Opened *o, const char *path)
{
	ArrowSource src;
	ArrowError	err;

	o->fd = open(path, O_RDONLY);
	if (o->fd < 0 || arrow_source_fd(&src, o->fd, path, -1, &err) != 0 ||
		arrow_open(&o->file, &src, NULL, &err) != 0)
	{
		CHECK_MSG(0, path);
		return -1;
	}
	return 0;
}

static void
close_file(Opened *o)
{
	arrow_close(&o->file);
	close(o->fd);
}

/* per group: count(*), sum(v), count(v), max(d) */
typedef struct Groups
{
	int64_t		v[NGROUPS][4];
	bool		seen[NGROUPS];
} Groups;

static void
add_groups(Groups *out, WarpCpu *cpu)
{
	warp_int64	g,
				n = warp_cpu_ngroups(cpu);

	for (g = 0; g < n; g++)
	{
		bool		isnull;
		int64_t		k = warp_cpu_group_key(cpu, g, 0, &isnull);
		const WarpAggState *s;

		if (isnull || k < 0 || k >= NGROUPS)
		{
			CHECK(0);
			continue;
		}
		s = warp_cpu_group_agg(cpu, g, 0);
		out->v[k][0] += s->count;
		s = warp_cpu_group_agg(cpu, g, 1);
		out->v[k][1] += s->count ? s->ival : 0;
		s = warp_cpu_group_agg(cpu, g, 2);
		out->v[k][2] += s->count;
		s = warp_cpu_group_agg(cpu, g, 3);
		if (s->count && (!out->seen[k] || s->ival > out->v[k][3]))
			out->v[k][3] = s->ival;
		out->seen[k] = out->seen[k] || s->count > 0;
	}
}

/* the reference: one driver, whole batches, in order */
static WarpStatus
run_single(Opened *o, const WarpProgram *p, Groups *out, WarpLoadStatus *ls,
		   int *bad_batch, warp_int64 *bad_row)
{
	WarpAlloc	alloc = {test_alloc, NULL};
	WarpCpu    *cpu = warp_cpu_create(p, NULL, &alloc);
	int			b,
				c;
	WarpStatus	st = WARP_OK;

	memset(out, 0, sizeof(*out));
	*ls = WARP_LOAD_OK;
	for (b = 0; b < o->file.n_batches && st == WARP_OK && *ls == WARP_LOAD_OK; b++)
	{
		ArrowArena	arena;
		ArrowBatchMeta meta;
		ArrowArray	cols[3];
		ArrowError	err;
		int			bad_col;

		arrow_arena_init(&arena, NULL);
		CHECK(arrow_read_batch_meta(&o->file, b, &arena, &meta, &err) == 0);
		for (c = 0; c < 3; c++)
			CHECK(arrow_load_column(&o->file, b, &meta, c, &arena, &cols[c], &err) == 0);
		st = warp_cpu_run_batch(cpu, cols, meta.length, NULL, ls, &bad_col, bad_row);
		*bad_batch = b;
		arrow_arena_free_all(&arena);
	}
	add_groups(out, cpu);
	/* (test_alloc's blocks are not tracked: a few MB per call, a test) */
	return st;
}

static int	fields[3] = {0, 1, 2};

static int	polls;
static int	stop_after;

static bool
interrupted(void *arg)
{
	(void) arg;
	return ++polls > stop_after;
}

static int
run_pool(Opened *o, const WarpProgram *p, int nthreads, int parts, WarpCpuPool *pool,
		 Groups *out)
{
	static WarpPoolBatch batches[16];
	static WarpPoolFile pf;
	int			b,
				i,
				rc;

	memset(&pf, 0, sizeof(pf));
	pf.file = &o->file;
	pf.fields = fields;
	for (b = 0; b < o->file.n_batches; b++)
	{
		batches[b].file = 0;
		batches[b].batch = b;
	}
	memset(pool, 0, sizeof(*pool));
	pool->prog = p;
	pool->nfiles = 1;
	pool->files = &pf;
	pool->nbatches = o->file.n_batches;
	pool->batches = batches;
	pool->nthreads = nthreads;
	pool->parts = parts;
	pool->interrupted = stop_after >= 0 ? interrupted : NULL;
	polls = 0;
	rc = warp_cpu_pool_run(pool);
	memset(out, 0, sizeof(*out));
	for (i = 0; i < pool->ncpus; i++)
		add_groups(out, pool->cpus[i]);
	return rc;
}

/* ------------------------------------------------------------- tests */

TEST(same_groups_any_threads_and_parts)
{
	static const int threads[] = {1, 2, 3, 8};
	static const int parts[] = {1, 4, 8, 64};
	Prog		g;
	Groups		want,
				got;
	WarpLoadStatus ls;
	int			bb,
				t,
				q,
				c;
	warp_int64	br;

	for (c = 0; c < 2; c++)
	{
		const char *path = path_of(c ? "lz4.arrow" : "plain.arrow");
		Opened		o;

		if (write_file(path, c ? ARROW_CODEC_LZ4_FRAME : ARROW_CODEC_NONE, NULL, 0, -1) < 0 ||
			open_file(&o, path) < 0)
			return;
		CHECK(o.file.n_batches == 3);
		make_prog(&g, 0);
		CHECK(run_single(&o, &g.p, &want, &ls, &bb, &br) == WARP_OK && ls == WARP_LOAD_OK);
		CHECK(want.v[0][0] > 0);
		for (t = 0; t < 4; t++)
			for (q = 0; q < 4; q++)
			{
				WarpCpuPool pool;
				int			rc;

				stop_after = -1;
				rc = run_pool(&o, &g.p, threads[t], parts[q], &pool, &got);
				CHECK_MSG(rc == 0 && pool.error == WARP_POOL_OK, path);
				CHECK_MSG(memcmp(&want, &got, sizeof(want)) == 0, path);
				CHECK(pool.batches_read == 3);
				CHECK(pool.counters.rows_in == 2 * ROWS_BIG + ROWS_SMALL);
				CHECK(pool.bytes_read > (uint64_t) (2 * ROWS_BIG + ROWS_SMALL) * 8 / (c ? 50 : 1));
				CHECK(pool.ncpus == threads[t]);
				warp_cpu_pool_free(&pool);
				CHECK(pool.cpus == NULL);
			}
		close_file(&o);
	}
}

/*
 * Rows that fail: the pool must report the error of the earliest one in
 * scan order (batch, then row), however the threads were scheduled.
 */
TEST(earliest_error_wins)
{
	/*
	 * 1000 / (v + 1): v = -1 divides by zero, v = INT_MAX overflows.  Row
	 * 250001 is in part 6 of batch 0 (parts of 37504 rows), row 320000 in
	 * batch 1, row 650000 in batch 2 (the small one, a single unit).
	 */
	static const Override first_zero[] = {{250001, -1}, {320000, 2147483647}, {650000, -1}};
	static const Override first_overflow[] = {{320000, 2147483647}, {650000, -1}, {650001, -1}};
	static const Override late_only[] = {{650002, 2147483647}, {699999, -1}};
	static const struct
	{
		const char *name;
		const Override *ov;
		int			nov;
		WarpStatus	want;
		int			batch;
	}			cases[] = {
		{"err1.arrow", first_zero, 3, WARP_ERR_DIV_ZERO, 0},
		{"err2.arrow", first_overflow, 3, WARP_ERR_INT_OVERFLOW, 1},
		{"err3.arrow", late_only, 2, WARP_ERR_INT_OVERFLOW, 2},
	};
	Prog		g;
	Groups		got;
	int			c,
				i;

	make_prog(&g, 1);
	for (c = 0; c < 3; c++)
	{
		Opened		o;
		Groups		want;
		WarpLoadStatus ls;
		int			bb;
		warp_int64	br;

		if (write_file(path_of(cases[c].name), ARROW_CODEC_NONE, cases[c].ov, cases[c].nov, -1) < 0 ||
			open_file(&o, path_of(cases[c].name)) < 0)
			return;
		/* the reference agrees on what the first error is */
		CHECK_MSG(run_single(&o, &g.p, &want, &ls, &bb, &br) == cases[c].want && bb == cases[c].batch, cases[c].name);
		for (i = 0; i < 24; i++)
		{
			WarpCpuPool pool;

			stop_after = -1;
			CHECK(run_pool(&o, &g.p, 1 + i % 4, i % 3 ? 8 : 64, &pool, &got) == -1);
			CHECK_MSG(pool.error == WARP_POOL_STATUS && pool.status == cases[c].want &&
					  pool.bad_batch == cases[c].batch, cases[c].name);
			warp_cpu_pool_free(&pool);
		}
		close_file(&o);
	}
}

/* A date PostgreSQL cannot hold: a load error at its batch and batch row. */
TEST(load_error_names_batch_row)
{
	Prog		g;
	Opened		o;
	Groups		got;
	int			i;

	if (write_file(path_of("date.arrow"), ARROW_CODEC_NONE, NULL, 0, 2 * ROWS_BIG - 3) < 0 ||
		open_file(&o, path_of("date.arrow")) < 0)
		return;
	make_prog(&g, 0);
	for (i = 0; i < 10; i++)
	{
		WarpCpuPool pool;

		stop_after = -1;
		CHECK(run_pool(&o, &g.p, 1 + i % 3, 8, &pool, &got) == -1);
		CHECK_MSG(pool.error == WARP_POOL_LOAD && pool.load_status == WARP_LOAD_RANGE &&
				  pool.bad_batch == 1 && pool.bad_row == ROWS_BIG - 3 && pool.bad_col == 2,
				  "load error");
		warp_cpu_pool_free(&pool);
	}
	close_file(&o);
}

TEST(interrupt_stops_the_pool)
{
	Prog		g;
	Opened		o;
	Groups		got;
	WarpCpuPool pool;

	if (open_file(&o, path_of("plain.arrow")) < 0)
		return;
	make_prog(&g, 0);
	stop_after = 0;				/* at the first poll */
	CHECK(run_pool(&o, &g.p, 3, 8, &pool, &got) == -1);
	CHECK(pool.error == WARP_POOL_INTERRUPTED);
	CHECK(pool.counters.rows_in < 2 * ROWS_BIG + ROWS_SMALL);
	warp_cpu_pool_free(&pool);
	stop_after = -1;
	close_file(&o);
}

/* A file of the scan with nothing to read (an empty writable table's file):
 * its slot has no ArrowFile and no unit names it. */
TEST(file_without_batches)
{
	Prog		g;
	Opened		o;
	Groups		want,
				got;
	WarpLoadStatus ls;
	int			bb,
				b,
				i;
	warp_int64	br;
	WarpPoolFile pf[2];
	WarpPoolBatch batches[8];
	WarpCpuPool pool;

	if (open_file(&o, path_of("plain.arrow")) < 0)
		return;
	make_prog(&g, 0);
	CHECK(run_single(&o, &g.p, &want, &ls, &bb, &br) == WARP_OK);
	memset(pf, 0, sizeof(pf));
	pf[1].file = &o.file;
	pf[1].fields = fields;
	for (b = 0; b < o.file.n_batches; b++)
	{
		batches[b].file = 1;
		batches[b].batch = b;
	}
	memset(&pool, 0, sizeof(pool));
	pool.prog = &g.p;
	pool.nfiles = 2;
	pool.files = pf;
	pool.nbatches = o.file.n_batches;
	pool.batches = batches;
	pool.nthreads = 3;
	pool.parts = 8;
	CHECK(warp_cpu_pool_run(&pool) == 0);
	memset(&got, 0, sizeof(got));
	for (i = 0; i < pool.ncpus; i++)
		add_groups(&got, pool.cpus[i]);
	CHECK(memcmp(&want, &got, sizeof(want)) == 0);
	warp_cpu_pool_free(&pool);
	close_file(&o);
}

int
main(void)
{
	if (mkdtemp(dir) == NULL)
	{
		printf("FAIL: mkdtemp\n");
		return 1;
	}
	RUN(same_groups_any_threads_and_parts);
	RUN(earliest_error_wins);
	RUN(load_error_names_batch_row);
	RUN(interrupt_stops_the_pool);
	RUN(file_without_batches);
	{
		static const char *const names[] = {"plain.arrow", "lz4.arrow", "err1.arrow",
		"err2.arrow", "err3.arrow", "date.arrow"};
		int			i;

		for (i = 0; i < 6; i++)
			unlink(path_of(names[i]));
		rmdir(dir);
	}
	UNIT_EXIT();
}
