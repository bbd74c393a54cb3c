/*
 * test_gpud_decoded.c — decompressed column buffers kept in the GPU column
 * cache (src/gpud/gpud_decoded.c), with malloc standing in for device
 * memory and the GPU driver's fill done here by memcpy: a first load
 * decompresses and records each buffer with its key; once the cache holds
 * them, the next load reads and decompresses nothing, its columns point at
 * ghost ranges (unreadable: a child that reads one dies of SIGSEGV) whose
 * entries hold exactly the bytes a plain load gives; a column with a
 * buffer missing or an entry too small is loaded as usual and the entries
 * it found are let go; every reference is dropped when the batch is done;
 * uncompressed files and a job without a cache are left alone; through
 * the prefetcher, batches taken or never taken release their entries;
 * plain batches read with pread (raw) share the keys a registered
 * window's buffers get.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arrow.h"
#include "gpud_colcache.h"
#include "gpud_decoded.h"
#include "gpud_prefetch.h"
#include "unit.h"
#include "unit_arrow_file.h"

#define NBATCH 4
#define ROWS 3000
#define NCOLS 3

static char dir[] = "/tmp/pgwarp-decoded-XXXXXX";
static char zstd_path[256];
static char plain_path[256];

static void *
fake_alloc(void *ctx, uint64_t len)
{
	return malloc(len);
}

static void
fake_free(void *ctx, void *ptr, void *ready)
{
	free(ptr);
}

static const GpudColCacheOps ops = {fake_alloc, fake_free, NULL};
static int	ready_token;

/* x int64 = row; y int32 = row % 11, null every 5th row; z float64 = row / 4 */
static int
write_file(const char *path, ArrowCodec codec)
{
	ArrowSchema s;
	ArrowField	f[NCOLS];
	ArrowWriter *w;
	ArrowWriterOptions o;
	ArrowError	err;
	int64_t		i;
	int			c;

	memset(&o, 0, sizeof(o));
	o.codec = codec;
	o.batch_rows = ROWS;
	memset(f, 0, sizeof(f));
	for (c = 0; c < NCOLS; c++)
	{
		f[c].name = (char *) (c == 0 ? "x" : c == 1 ? "y" : "z");
		f[c].nullable = true;
		f[c].type.id = c == 2 ? ARROW_TYPE_FLOAT : ARROW_TYPE_INT;
		f[c].type.bit_width = c == 0 ? 64 : 32;
		f[c].type.is_signed = true;
		f[c].type.precision = ARROW_PRECISION_DOUBLE;
	}
	memset(&s, 0, sizeof(s));
	s.n_fields = NCOLS;
	s.fields = f;
	if (arrow_writer_create(&w, path, &s, true, &o, &err) != 0)
		return -1;
	for (i = 0; i < (int64_t) NBATCH * ROWS; i++)
	{
		if (arrow_builder_append_int(arrow_writer_column(w, 0), i, &err) != 0 ||
			(i % 5 == 0 ? arrow_builder_append_null(arrow_writer_column(w, 1), &err) :
			 arrow_builder_append_int(arrow_writer_column(w, 1), i % 11, &err)) != 0 ||
			arrow_builder_append_double(arrow_writer_column(w, 2), i / 4.0, &err) != 0 ||
			arrow_writer_end_row(w, &err) != 0)
		{
			arrow_writer_abort(w);
			return -1;
		}
	}
	return arrow_writer_close(w, &err);
}

static GpudDecodedSource
source(GpudColCache *cache)
{
	GpudDecodedSource s;

	memset(&s, 0, sizeof(s));
	s.cache = cache;
	s.id.dev = 9;
	s.id.ino = 42;
	s.id.size = 1 << 20;
	return s;
}

/* bytes column c of a batch needs at its values / validity */
static int64_t
values_bytes(int c)
{
	return (int64_t) ROWS * (c == 1 ? 4 : 8);
}

/* what a plain load gives, for comparison */
typedef struct Plain
{
	ArrowArena	arena;
	ArrowBatchMeta meta;
	ArrowArray	cols[NCOLS];
} Plain;

static bool
plain_load(Opened *o, int b, Plain *p)
{
	ArrowError	err;
	int			c;

	arrow_arena_init(&p->arena, NULL);
	if (arrow_read_batch_meta(&o->file, b, &p->arena, &p->meta, &err) != 0)
		return false;
	for (c = 0; c < NCOLS; c++)
		if (arrow_load_column(&o->file, b, &p->meta, c, &p->arena, &p->cols[c], &err) != 0)
			return false;
	return true;
}

/*
 * Load batch b through the hook into cols (meta and memory in *arena,
 * state in *state); true if every load succeeded.
 */
static bool
hook_load(Opened *o, GpudDecodedSource *s, int b, ArrowArena *arena, ArrowBatchMeta *meta,
		  ArrowArray *cols, void **state)
{
	ArrowError	err;
	int			c;

	arrow_arena_init(arena, NULL);
	*state = NULL;
	if (arrow_read_batch_meta(&o->file, b, arena, meta, &err) != 0)
		return false;
	for (c = 0; c < NCOLS; c++)
		if (gpud_decoded_load(s, &o->file, b, meta, c, arena, &cols[c], state, &err) != 0)
			return false;
	return true;
}

/* the GPU driver's part: copy every non-ghost buffer into a new entry */
static int
fill_cache(GpudColCache *cache, const GpudDecoded *d)
{
	int			i;
	int			filled = 0;

	for (i = 0; d && i < d->n; i++)
	{
		const GpudDecodedBuf *b = &d->bufs[i];
		bool		fill;
		GpudColEntry *e;

		if (b->ghost)
			continue;
		e = gpud_colcache_get_sized(cache, &b->key, b->len, &ops, &fill);
		if (e == NULL)
			continue;
		if (fill)
		{
			memcpy(e->ptr, b->host, b->len);
			gpud_colcache_filled(cache, e, &ready_token);
			filled++;
		}
		gpud_colcache_release(cache, e);
	}
	return filled;
}

/* fill the cache from a first load of every batch */
static void
warm(Opened *o, GpudColCache *cache)
{
	GpudDecodedSource s = source(cache);
	int			b;

	for (b = 0; b < NBATCH; b++)
	{
		ArrowArena	arena;
		ArrowBatchMeta meta;
		ArrowArray	cols[NCOLS];
		void	   *state;

		CHECK(hook_load(o, &s, b, &arena, &meta, cols, &state));
		/* x and z: values; y: values and validity */
		CHECK(fill_cache(cache, state) == 4);
		gpud_decoded_done(&s, state);
		arrow_arena_free_all(&arena);
	}
	CHECK(s.columns_served == 0);
}

/* open the ZSTD file and fill a cache of 64 MB from a first load; false
 * (a check failed) if either does not work */
static bool
open_warm(Opened *o, GpudColCache *cache)
{
	CHECK(open_file(o, zstd_path));
	if (unit_current_failed)
		return false;
	CHECK(gpud_colcache_init(cache, 64 << 20));
	warm(o, cache);
	return !unit_current_failed;
}

/* does reading the byte at p kill a child with SIGSEGV? */
static bool
unreadable(const uint8_t *p)
{
	pid_t		pid = fork();
	int			st = 0;

	if (pid == 0)
	{
		volatile uint8_t v = *(volatile const uint8_t *) p;

		(void) v;
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return false;
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV;
}

/* the entry behind column c's buffer at p holds what a plain load gives */
static bool
served_equal(const GpudDecoded *d, const uint8_t *p, const uint8_t *want, int64_t len)
{
	const GpudDecodedBuf *b = gpud_decoded_find(d, p, (uint64_t) len);

	return b != NULL && b->ghost && b->held != NULL && b->host == p &&
		b->held->size >= (uint64_t) len && memcmp(b->held->ptr, want, (size_t) len) == 0;
}

static bool
is_ghost(const GpudDecoded *d, const uint8_t *p)
{
	const GpudDecodedBuf *b = gpud_decoded_find(d, p, 1);

	return b != NULL && b->ghost;
}

/* an entry's references, without taking one */
static int
refs_of(GpudColCache *cache, const GpudColKey *k)
{
	GpudColEntry *e = gpud_colcache_find(cache, k);
	int			r;

	if (e == NULL)
		return -1;
	r = e->refs - 1;
	gpud_colcache_release(cache, e);
	return r;
}

TEST(first_load_records_then_cache_serves_without_decoding)
{
	Opened		o;
	GpudColCache cache;
	GpudDecodedSource s;
	int			b;

	if (!open_warm(&o, &cache))
		return;
	s = source(&cache);
	for (b = 0; b < NBATCH; b++)
	{
		ArrowArena	arena;
		ArrowBatchMeta meta;
		ArrowArray	cols[NCOLS];
		void	   *state;
		GpudDecoded *d;
		Plain		p;
		GpudColKey	keys[4];
		int			c,
					i;

		CHECK(plain_load(&o, b, &p));
		CHECK(hook_load(&o, &s, b, &arena, &meta, cols, &state));
		d = state;
		CHECK(d != NULL && d->n == 4);
		/* nothing was decompressed into the arena: only the meta is there */
		for (c = 0; c < NCOLS && d; c++)
		{
			CHECK(cols[c].length == ROWS && cols[c].null_count == p.cols[c].null_count);
			CHECK(served_equal(d, cols[c].values, p.cols[c].values, values_bytes(c)));
			CHECK(cols[c].values_len >= values_bytes(c));
		}
		CHECK(cols[0].validity == NULL && cols[2].validity == NULL);
		CHECK(p.cols[1].null_count == ROWS / 5);
		CHECK(d && served_equal(d, cols[1].validity, p.cols[1].validity, (ROWS + 7) / 8));
		/* a range past a buffer's end is not found */
		CHECK(gpud_decoded_find(d, cols[0].values + 8, (uint64_t) values_bytes(0)) == NULL);
		if (b == 0)
			CHECK(unreadable(cols[0].values) && unreadable(cols[1].validity));
		for (i = 0; d && i < d->n && i < 4; i++)
		{
			keys[i] = d->bufs[i].key;
			CHECK(d->bufs[i].key.kind == GPUD_COL_DECODED);
			CHECK(refs_of(&cache, &keys[i]) == 1);
		}
		gpud_decoded_done(&s, state);
		for (i = 0; d && i < 4; i++)
			CHECK(refs_of(&cache, &keys[i]) == 0);
		arrow_arena_free_all(&arena);
		arrow_arena_free_all(&p.arena);
	}
	CHECK(s.columns_served == (uint64_t) NBATCH * NCOLS);
	close_file(&o);
}

/*
 * A cache holding y's values but not its validity, and x's values in an
 * entry smaller than the column needs: both are loaded (decompressed) as
 * usual, z is served, and no reference stays behind.
 */
TEST(missing_or_short_entries_load_as_usual)
{
	Opened		o;
	GpudColCache full;
	GpudColCache part;
	GpudDecodedSource s;
	ArrowArena	arena;
	ArrowBatchMeta meta;
	ArrowArray	cols[NCOLS];
	void	   *state;
	GpudDecoded *d;
	Plain		p;
	int			i;

	if (!open_warm(&o, &full))
		return;
	CHECK(gpud_colcache_init(&part, 64 << 20));
	CHECK(plain_load(&o, 2, &p));
	s = source(&full);
	CHECK(hook_load(&o, &s, 2, &arena, &meta, cols, &state));
	d = state;
	/* copy into `part`: z whole, y's values only, x's values cut short */
	for (i = 0; d && i < d->n; i++)
	{
		GpudDecodedBuf *b = &d->bufs[i];
		const ArrowField *f = &o.file.schema.fields[0];
		bool		is_x_values = b->key.off == (uint64_t) meta.buffers[f->buffer_index + 1].offset;
		bool		is_y_validity = b->key.off ==
			(uint64_t) meta.buffers[o.file.schema.fields[1].buffer_index].offset;
		uint64_t	size = is_x_values ? (uint64_t) values_bytes(0) - 8 : b->len;
		bool		fill;
		GpudColEntry *e;

		if (is_y_validity)
			continue;
		e = gpud_colcache_get_sized(&part, &b->key, size, &ops, &fill);
		CHECK(e != NULL && fill);
		if (e)
		{
			memcpy(e->ptr, b->held->ptr, size);
			gpud_colcache_filled(&part, e, &ready_token);
			gpud_colcache_release(&part, e);
		}
	}
	gpud_decoded_done(&s, state);
	arrow_arena_free_all(&arena);

	s = source(&part);
	CHECK(hook_load(&o, &s, 2, &arena, &meta, cols, &state));
	d = state;
	CHECK(s.columns_served == 1);
	/* (a ghost read here would fault: look before comparing) */
	CHECK(!is_ghost(d, cols[0].values) && !is_ghost(d, cols[1].values) &&
		  !is_ghost(d, cols[1].validity));
	if (!unit_current_failed)
	{
		CHECK(memcmp(cols[0].values, p.cols[0].values, values_bytes(0)) == 0);
		CHECK(memcmp(cols[1].values, p.cols[1].values, values_bytes(1)) == 0);
		CHECK(memcmp(cols[1].validity, p.cols[1].validity, (ROWS + 7) / 8) == 0);
	}
	CHECK(served_equal(d, cols[2].values, p.cols[2].values, values_bytes(2)));
	/* x and y loaded: recorded, not ghosts, for the driver to cache */
	CHECK(d != NULL && d->n == 4);
	for (i = 0; d && i < d->n; i++)
		if (!d->bufs[i].ghost)
			CHECK(d->bufs[i].held == NULL);
	gpud_decoded_done(&s, state);
	/* every entry of `part` unreferenced: y's values (found, then let go
	 * for want of the validity) and x's short one included */
	{
		GpudColEntry *e;
		int			n = 0;

		for (e = part.lru.next; e != &part.lru; e = e->next, n++)
			CHECK(e->refs == 0);
		CHECK(n == 3);
	}
	arrow_arena_free_all(&arena);
	arrow_arena_free_all(&p.arena);
	close_file(&o);
}

/* no cache, or an uncompressed file: loaded as arrow_load_column does */
TEST(no_cache_or_uncompressed_left_alone)
{
	Opened		o;
	GpudColCache cache;
	GpudDecodedSource s;
	ArrowArena	arena;
	ArrowBatchMeta meta;
	ArrowArray	cols[NCOLS];
	void	   *state;
	Plain		p;

	CHECK(gpud_colcache_init(&cache, 64 << 20));
	CHECK(open_file(&o, plain_path));
	if (unit_current_failed)
		return;
	s = source(&cache);
	CHECK(hook_load(&o, &s, 1, &arena, &meta, cols, &state));
	CHECK(state == NULL);
	CHECK(plain_load(&o, 1, &p));
	CHECK(memcmp(cols[0].values, p.cols[0].values, values_bytes(0)) == 0);
	arrow_arena_free_all(&arena);
	arrow_arena_free_all(&p.arena);
	close_file(&o);

	CHECK(open_file(&o, zstd_path));
	if (unit_current_failed)
		return;
	warm(&o, &cache);
	s = source(NULL);
	CHECK(hook_load(&o, &s, 1, &arena, &meta, cols, &state));
	CHECK(state == NULL && s.columns_served == 0);
	CHECK(plain_load(&o, 1, &p));
	CHECK(memcmp(cols[2].values, p.cols[2].values, values_bytes(2)) == 0);
	arrow_arena_free_all(&arena);
	arrow_arena_free_all(&p.arena);
	close_file(&o);
}

/*
 * Plain (uncompressed) batches read with pread, with raw set: buffers are
 * keyed GPUD_COL_RAW by file offset and the bytes the driver copies, the
 * key the driver gives a buffer read through a registered window; so an
 * entry made from a window's bytes serves the pread path with nothing
 * read, and what the pread path records fills entries with the file's
 * bytes.
 */
TEST(plain_batches_share_the_window_keys)
{
	Opened		o;
	GpudColCache cache;
	GpudDecodedSource s;
	ArrowArena	arena;
	ArrowBatchMeta meta;
	ArrowArray	cols[NCOLS];
	void	   *state;
	GpudDecoded *d;
	Plain		p;
	int			c,
				i;

	CHECK(gpud_colcache_init(&cache, 64 << 20));
	CHECK(open_file(&o, plain_path));
	if (unit_current_failed)
		return;
	s = source(&cache);
	s.raw = true;
	CHECK(hook_load(&o, &s, 1, &arena, &meta, cols, &state));
	d = state;
	CHECK(d != NULL && d->n == 4 && s.columns_served == 0);
	for (i = 0; d && i < d->n; i++)
	{
		const GpudDecodedBuf *b = &d->bufs[i];
		bool		found = false;

		CHECK(!b->ghost && b->held == NULL && b->key.kind == GPUD_COL_RAW);
		CHECK(b->key.dev == 9 && b->key.ino == 42 && b->key.len == b->len);
		/* at a buffer's file offset, the copy's length */
		for (c = 0; c < NCOLS; c++)
		{
			const ArrowField *f = &o.file.schema.fields[c];

			if (b->key.off == (uint64_t) meta.buffers[f->buffer_index + 1].offset &&
				b->len == (uint64_t) values_bytes(c) && b->host == cols[c].values)
				found = true;
			if (meta.buffers[f->buffer_index].length > 0 &&
				b->key.off == (uint64_t) meta.buffers[f->buffer_index].offset &&
				b->len == (ROWS + 7) / 8 && b->host == cols[c].validity)
				found = true;
		}
		CHECK(found);
	}
	CHECK(fill_cache(&cache, d) == 4);
	gpud_decoded_done(&s, state);
	arrow_arena_free_all(&arena);

	/* batch 1 again: served whole, nothing read */
	CHECK(hook_load(&o, &s, 1, &arena, &meta, cols, &state));
	CHECK(plain_load(&o, 1, &p));
	d = state;
	CHECK(s.columns_served == NCOLS);
	for (c = 0; c < NCOLS; c++)
		CHECK(served_equal(d, cols[c].values, p.cols[c].values, values_bytes(c)));
	CHECK(served_equal(d, cols[1].validity, p.cols[1].validity, (ROWS + 7) / 8));
	gpud_decoded_done(&s, state);
	arrow_arena_free_all(&arena);

	/* batch 2's x as the driver caches it from a window: key (file,
	 * buffer offset, copy length), filled with the file's bytes there */
	{
		GpudColKey	k = s.id;
		GpudColEntry *e;
		bool		fill;

		arrow_arena_free_all(&p.arena);
		CHECK(plain_load(&o, 2, &p));
		k.off = (uint64_t) p.meta.buffers[o.file.schema.fields[0].buffer_index + 1].offset;
		k.len = (uint64_t) values_bytes(0);
		k.kind = GPUD_COL_RAW;
		e = gpud_colcache_get_sized(&cache, &k, k.len, &ops, &fill);
		CHECK(e != NULL && fill);
		if (e)
		{
			CHECK(pread(o.fd, e->ptr, k.len, (off_t) k.off) == (ssize_t) k.len);
			gpud_colcache_filled(&cache, e, &ready_token);
			gpud_colcache_release(&cache, e);
		}
		CHECK(hook_load(&o, &s, 2, &arena, &meta, cols, &state));
		CHECK(s.columns_served == NCOLS + 1);
		CHECK(served_equal(state, cols[0].values, p.cols[0].values, values_bytes(0)));
		CHECK(!is_ghost(state, cols[2].values));
		gpud_decoded_done(&s, state);
		arrow_arena_free_all(&arena);
	}
	{
		GpudColEntry *e;

		for (e = cache.lru.next; e != &cache.lru; e = e->next)
			CHECK(e->refs == 0);
	}
	arrow_arena_free_all(&p.arena);
	close_file(&o);
}

/* through the prefetcher: served batches arrive in order, and every
 * reference goes whether a batch was taken and released or never taken */
TEST(prefetcher_with_the_hook_releases_everything)
{
	Opened		o;
	GpudColCache cache;
	GpudDecodedSource s;
	GpudLoadHook hook = {gpud_decoded_load, gpud_decoded_done, NULL};
	int32_t		list[NBATCH] = {3, 0, 2, 1};
	int32_t		fields[NCOLS] = {0, 1, 2};
	GpudPrefetch *pf;
	GpudColEntry *e;
	int			i;

	if (!open_warm(&o, &cache))
		return;
	s = source(&cache);
	hook.ctx = &s;
	pf = gpud_prefetch_start(&o.file, list, NBATCH, fields, NCOLS, NULL, &hook, 2, 4);
	CHECK(pf != NULL);
	if (pf == NULL)
		return;
	for (i = 0; i < 2; i++)
	{
		GpudLoaded *l = gpud_prefetch_take(pf, i);
		Plain		p;
		int			c;

		CHECK(l->status == 0 && l->state != NULL);
		CHECK(plain_load(&o, list[i], &p));
		for (c = 0; c < NCOLS && l->state; c++)
			CHECK(served_equal(l->state, l->cols[c].values, p.cols[c].values, values_bytes(c)));
		arrow_arena_free_all(&p.arena);
		gpud_prefetch_release(pf, l);
	}
	/* batches 2 and 3 of the list loaded (or loading) and never taken */
	gpud_prefetch_stop(pf);
	CHECK(s.columns_served >= 2 * NCOLS);
	for (e = cache.lru.next; e != &cache.lru; e = e->next)
		CHECK(e->refs == 0);
	close_file(&o);
}

int
main(void)
{
	if (mkdtemp(dir) == NULL)
		return 1;
	snprintf(zstd_path, sizeof(zstd_path), "%s/zstd.arrow", dir);
	snprintf(plain_path, sizeof(plain_path), "%s/plain.arrow", dir);
	if (write_file(zstd_path, ARROW_CODEC_ZSTD) != 0 ||
		write_file(plain_path, ARROW_CODEC_NONE) != 0)
	{
		printf("FAIL: setup: could not write the test files\n");
		return 1;
	}
	RUN(first_load_records_then_cache_serves_without_decoding);
	RUN(missing_or_short_entries_load_as_usual);
	RUN(no_cache_or_uncompressed_left_alone);
	RUN(prefetcher_with_the_hook_releases_everything);
	RUN(plain_batches_share_the_window_keys);
	unlink(zstd_path);
	unlink(plain_path);
	rmdir(dir);
	UNIT_EXIT();
}
