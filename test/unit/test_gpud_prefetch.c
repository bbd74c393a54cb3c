/*
 * test_gpud_prefetch.c — the daemon's loading of compressed batches ahead
 * (src/gpud/gpud_prefetch.c): every batch of a list arrives in order with
 * the values the file holds, for any number of threads and depth (none
 * included: the taker then loads each batch itself); a batch that cannot
 * be decoded keeps its error in its own slot, the batches before it load;
 * stopping early frees every batch loaded, taken or not (an allocator that
 * counts live blocks must end at zero); and the memory held at once stays
 * within the depth.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>

#include "arrow.h"
#include "gpud_prefetch.h"
#include "unit.h"
#include "unit_arrow_file.h"

#define NBATCH 48
#define ROWS 1000

static char dir[] = "/tmp/pgwarp-prefetch-XXXXXX";

/* malloc, counting live blocks and the most ever live */
static long live;
static long live_max;
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;

static void *
count_alloc(void *ctx, size_t size)
{
	void	   *p = malloc(size);

	(void) ctx;
	if (p)
	{
		pthread_mutex_lock(&live_lock);
		if (++live > live_max)
			live_max = live;
		pthread_mutex_unlock(&live_lock);
	}
	return p;
}

static void
count_free(void *ctx, void *p)
{
	(void) ctx;
	if (p == NULL)
		return;
	pthread_mutex_lock(&live_lock);
	live--;
	pthread_mutex_unlock(&live_lock);
	free(p);
}

static const ArrowAllocator counting = {count_alloc, count_free, NULL, 0};

/* a file of NBATCH batches of ROWS rows: x = row number, y = row % 7 */
static int
write_file(const char *path, ArrowCodec codec)
{
	ArrowSchema s;
	ArrowField	f[2];
	ArrowWriter *w;
	ArrowWriterOptions o;
	ArrowError	err;
	int64_t		i;
	int			c;

	memset(&o, 0, sizeof(o));
	o.codec = codec;
	o.batch_rows = ROWS;
	for (c = 0; c < 2; c++)
	{
		memset(&f[c], 0, sizeof(f[c]));
		f[c].name = (char *) (c == 0 ? "x" : "y");
		f[c].nullable = true;
		f[c].type.id = ARROW_TYPE_INT;
		f[c].type.bit_width = c == 0 ? 64 : 32;
		f[c].type.is_signed = true;
	}
	memset(&s, 0, sizeof(s));
	s.n_fields = 2;
	s.fields = f;
	if (arrow_writer_create(&w, path, &s, true, &o, &err) != 0)
		return -1;
	for (i = 0; i < (int64_t) NBATCH * ROWS; i++)
	{
		if (arrow_builder_append_int(arrow_writer_column(w, 0), i, &err) != 0 ||
			arrow_builder_append_int(arrow_writer_column(w, 1), i % 7, &err) != 0 ||
			arrow_writer_end_row(w, &err) != 0)
		{
			arrow_writer_abort(w);
			return -1;
		}
	}
	return arrow_writer_close(w, &err);
}

/* batch l holds batch b's rows: x = b * ROWS + i, y = x % 7 */
static bool
batch_ok(const GpudLoaded *l, int b)
{
	const int64_t *x;
	const int32_t *y;
	int			i;

	if (l->status != 0 || l->meta.length != ROWS || l->cols[0].length != ROWS)
		return false;
	x = (const int64_t *) l->cols[0].values;
	y = (const int32_t *) l->cols[1].values;
	for (i = 0; i < ROWS; i++)
		if (x[i] != (int64_t) b * ROWS + i || y[i] != (int32_t) (x[i] % 7))
			return false;
	return true;
}

/* a list of batches out of file order, with repeats */
static int
make_list(int32_t *list)
{
	int			n = 0;
	int			i;

	for (i = 0; i < NBATCH; i++)
		list[n++] = (int32_t) ((i * 17) % NBATCH);
	for (i = 0; i < 8; i++)
		list[n++] = (int32_t) (i * 5);
	return n;
}

static void
run_list(const char *path, int nthreads, int depth, bool keep_prev)
{
	Opened		o;
	int32_t		list[NBATCH + 8];
	int32_t		fields[2] = {0, 1};
	int			n = make_list(list);
	GpudPrefetch *pf;
	GpudLoaded *prev = NULL;
	int			i;

	CHECK(open_file(&o, path));
	if (unit_current_failed)
		return;
	live = live_max = 0;
	pf = gpud_prefetch_start(&o.file, list, n, fields, 2, &counting, NULL, nthreads, depth);
	CHECK(pf != NULL);
	if (pf == NULL)
	{
		close_file(&o);
		return;
	}
	for (i = 0; i < n; i++)
	{
		GpudLoaded *l = gpud_prefetch_take(pf, i);

		CHECK_MSG(batch_ok(l, list[i]), l->err.msg);
		/* as the GPU path does: the batch before is released once this
		 * one is queued */
		if (prev)
			gpud_prefetch_release(pf, prev);
		prev = NULL;
		if (keep_prev)
			prev = l;
		else
			gpud_prefetch_release(pf, l);
	}
	if (prev)
		gpud_prefetch_release(pf, prev);
	gpud_prefetch_stop(pf);
	CHECK(live == 0);
	close_file(&o);
}

static const char *
path_of(const char *name)
{
	static char buf[4][512];
	static int	k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
	return buf[k];
}

TEST(in_order_any_threads)
{
	static const int shapes[][2] = {{0, 1}, {1, 1}, {1, 3}, {4, 2}, {4, 9}, {8, 17}, {16, 64}};
	const char *files[] = {"lz4.arrow", "zstd.arrow"};
	size_t		s;
	int			f;

	for (f = 0; f < 2; f++)
		for (s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
		{
			run_list(path_of(files[f]), shapes[s][0], shapes[s][1], s % 2 == 0);
			if (unit_current_failed)
			{
				printf("  (file %s, %d threads, depth %d)\n", files[f], shapes[s][0], shapes[s][1]);
				return;
			}
		}
}

/*
 * The most blocks live at once grows with the depth, not with the list:
 * with the taker holding none, depth d keeps at most d batches loaded.
 */
TEST(memory_bounded_by_depth)
{
	Opened		o;
	int32_t		list[NBATCH];
	int32_t		fields[2] = {0, 1};
	GpudPrefetch *pf;
	long		one;
	long		many;
	int			i;

	for (i = 0; i < NBATCH; i++)
		list[i] = i;
	CHECK(open_file(&o, path_of("zstd.arrow")));
	if (unit_current_failed)
		return;
	/* one batch's blocks */
	live = live_max = 0;
	pf = gpud_prefetch_start(&o.file, list, 1, fields, 2, &counting, NULL, 0, 1);
	gpud_prefetch_release(pf, gpud_prefetch_take(pf, 0));
	gpud_prefetch_stop(pf);
	one = live_max;
	CHECK(one > 0);
	/* 8 threads, depth 3, the taker slow: never more than 3 batches */
	live = live_max = 0;
	pf = gpud_prefetch_start(&o.file, list, NBATCH, fields, 2, &counting, NULL, 8, 3);
	for (i = 0; i < NBATCH; i++)
	{
		GpudLoaded *l = gpud_prefetch_take(pf, i);

		CHECK(batch_ok(l, i));
		usleep(200);
		gpud_prefetch_release(pf, l);
	}
	gpud_prefetch_stop(pf);
	many = live_max;
	CHECK(live == 0);
	CHECK_MSG(many <= 3 * one, "more than depth batches were live");
	CHECK(many > one);			/* and it did load ahead */
	close_file(&o);
}

/* stopping after a few batches frees what the threads loaded ahead */
TEST(stop_early_frees_everything)
{
	Opened		o;
	int32_t		list[NBATCH];
	int32_t		fields[2] = {0, 1};
	GpudPrefetch *pf;
	int			i;

	for (i = 0; i < NBATCH; i++)
		list[i] = NBATCH - 1 - i;
	CHECK(open_file(&o, path_of("lz4.arrow")));
	if (unit_current_failed)
		return;
	live = 0;
	pf = gpud_prefetch_start(&o.file, list, NBATCH, fields, 2, &counting, NULL, 6, 12);
	CHECK(batch_ok(gpud_prefetch_take(pf, 0), NBATCH - 1));
	(void) gpud_prefetch_take(pf, 1);	/* taken, never released */
	usleep(20000);				/* let the threads fill up */
	gpud_prefetch_stop(pf);
	CHECK(live == 0);
	close_file(&o);
}

/* batch 20's frames damaged: its slot has the error, the others load */
TEST(bad_batch_keeps_its_error)
{
	const char *path = path_of("bad.arrow");
	Opened		o;
	int32_t		list[NBATCH];
	int32_t		fields[2] = {0, 1};
	GpudPrefetch *pf;
	ArrowArena	arena;
	ArrowBatchMeta m;
	ArrowError	err;
	int			fd;
	int			i;
	int			damaged = 0;

	CHECK(write_file(path, ARROW_CODEC_ZSTD) == 0);
	CHECK(open_file(&o, path));
	if (unit_current_failed)
		return;
	/* overwrite the ZSTD magic of every buffer of batch 20 */
	arrow_arena_init(&arena, NULL);
	CHECK(arrow_read_batch_meta(&o.file, 20, &arena, &m, &err) == 0);
	fd = open(path, O_RDWR);
	for (i = 0; i < m.n_buffers && fd >= 0; i++)
	{
		uint8_t		magic[4];

		if (m.buffers[i].length <= 12)
			continue;
		if (pread(fd, magic, 4, m.buffers[i].offset + 8) == 4 &&
			magic[0] == 0x28 && magic[1] == 0xb5 && magic[2] == 0x2f && magic[3] == 0xfd)
		{
			CHECK(pwrite(fd, "\0\0\0\0", 4, m.buffers[i].offset + 8) == 4);
			damaged++;
		}
	}
	if (fd >= 0)
		close(fd);
	arrow_arena_free_all(&arena);
	CHECK(damaged > 0);
	for (i = 0; i < NBATCH; i++)
		list[i] = i;
	live = 0;
	pf = gpud_prefetch_start(&o.file, list, NBATCH, fields, 2, &counting, NULL, 4, 9);
	for (i = 0; i < NBATCH; i++)
	{
		GpudLoaded *l = gpud_prefetch_take(pf, i);

		if (i == 20)
		{
			CHECK(l->status != 0);
			CHECK_MSG(strstr(l->err.msg, "record batch 20") != NULL, l->err.msg);
			break;				/* as the daemon does: stop at the error */
		}
		CHECK_MSG(batch_ok(l, i), l->err.msg);
		gpud_prefetch_release(pf, l);
	}
	gpud_prefetch_stop(pf);
	CHECK(live == 0);
	close_file(&o);
}

TEST(wanted_only_for_compressed_plain_fields)
{
	Opened		o;
	ArrowArena	arena;
	ArrowBatchMeta m;
	ArrowError	err;
	int32_t		fields[2] = {0, 1};
	int32_t		bad[1] = {5};

	CHECK(write_file(path_of("none.arrow"), ARROW_CODEC_NONE) == 0);
	CHECK(open_file(&o, path_of("none.arrow")));
	if (unit_current_failed)
		return;
	arrow_arena_init(&arena, NULL);
	CHECK(arrow_read_batch_meta(&o.file, 0, &arena, &m, &err) == 0);
	CHECK(!gpud_prefetch_wanted(&o.file, &m, fields, 2));
	arrow_arena_free_all(&arena);
	close_file(&o);
	CHECK(open_file(&o, path_of("lz4.arrow")));
	if (unit_current_failed)
		return;
	arrow_arena_init(&arena, NULL);
	CHECK(arrow_read_batch_meta(&o.file, 0, &arena, &m, &err) == 0);
	CHECK(gpud_prefetch_wanted(&o.file, &m, fields, 2));
	CHECK(!gpud_prefetch_wanted(&o.file, &m, bad, 1));
	arrow_arena_free_all(&arena);
	close_file(&o);
}

TEST(shape_of_threads_and_depth)
{
	int			t,
				d;

	/* 16 cores, two parts: 8 threads each; 16 MB batches: 16 ahead, small ones 17 */
	gpud_prefetch_shape(16, 2, 16 << 20, GPUD_PREFETCH_TOTAL, &t, &d);
	CHECK(t == 8 && d == 16);	/* 256 MB / 16 MB */
	gpud_prefetch_shape(16, 2, 1 << 20, GPUD_PREFETCH_TOTAL, &t, &d);
	CHECK(t == 8 && d == 17);
	gpud_prefetch_shape(64, 1, 1 << 20, GPUD_PREFETCH_TOTAL, &t, &d);
	CHECK(t == GPUD_PREFETCH_THREADS && d == 17);
	gpud_prefetch_shape(2, 4, 1 << 20, GPUD_PREFETCH_TOTAL, &t, &d);
	CHECK(t == 1 && d == 3);
	/* huge batches: at least two, and no more threads than batches */
	gpud_prefetch_shape(16, 1, (uint64_t) 1 << 30, GPUD_PREFETCH_TOTAL, &t, &d);
	CHECK(d == 2 && t == 2);
	gpud_prefetch_shape(0, 0, 0, GPUD_PREFETCH_TOTAL, &t, &d);
	CHECK(t == 1 && d == 3);
	/* the daemon's total nearly taken: what is left, at least two */
	gpud_prefetch_shape(16, 2, 16 << 20, 100 << 20, &t, &d);
	CHECK(d == 6 && t == 6);
	gpud_prefetch_shape(16, 2, 16 << 20, 0, &t, &d);
	CHECK(d == 2 && t == 2);
}

int
main(void)
{
	char		cmd[300];

	if (mkdtemp(dir) == NULL)
		return 1;
	if (write_file(path_of("lz4.arrow"), ARROW_CODEC_LZ4_FRAME) != 0 ||
		write_file(path_of("zstd.arrow"), ARROW_CODEC_ZSTD) != 0)
	{
		printf("FAIL: setup: could not write the test files\n");
		return 1;
	}
	RUN(in_order_any_threads);
	RUN(memory_bounded_by_depth);
	RUN(stop_early_frees_everything);
	RUN(bad_batch_keeps_its_error);
	RUN(wanted_only_for_compressed_plain_fields);
	RUN(shape_of_threads_and_depth);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("(could not remove %s)\n", dir);
	UNIT_EXIT();
}
