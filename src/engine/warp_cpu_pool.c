/*
 * warp_cpu_pool.c — the CPU driver on several threads (warp_cpu_pool.h).
 *
 * Pure C: no PostgreSQL header, no PostgreSQL call.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "warp_cpu_pool.h"
#include "warp_mapguard.h"
#include "warp_memlist.h"

/* ------------------------------------------------------------ memory */

typedef struct WarpPoolThread
{
	WarpCpuPool *pool;
	int			index;
	pthread_t	tid;
	bool		started;
	WarpMemList mem;			/* engine memory (driver, group table) */
	WarpAlloc	alloc;
	ArrowRecycler bufs;			/* column buffers, recycled unit after unit */
	ArrowArena	arena;			/* the running unit's */
	pthread_mutex_t *dict_held; /* the dictionary lock it holds, or NULL */
	WarpCpu    *cpu;
	ArrowArray *cols;
	uint64_t	batches_read;
} WarpPoolThread;

static void
thread_free(WarpPoolThread *t)
{
	warp_memlist_free_all(&t->mem);
	arrow_recycler_release(&t->bufs);
	t->cpu = NULL;
	t->cols = NULL;
}

/* ------------------------------------------------------------ reading */

static int
counting_read(void *ctx, void *dst, size_t len, uint64_t off)
{
	WarpPoolFile *pf = ctx;
	int			rc = pf->inner_read(pf->inner_ctx, dst, len, off);

	if (rc == 0)
		__atomic_fetch_add(&pf->pool->bytes_read, (uint64_t) len, __ATOMIC_RELAXED);
	return rc;
}

/* ------------------------------------------------------------ errors */

/*
 * Unit u failed: keep its error if it is the earliest so far, and start no
 * unit after it.
 */
static void
set_error(WarpCpuPool *pool, uint64_t u, WarpPoolError kind, WarpStatus st,
		  WarpLoadStatus ls, int bad_col, int64_t bad_row, int file, int batch,
		  const ArrowError *aerr)
{
	pthread_mutex_lock(&pool->lock);
	if (pool->error == WARP_POOL_OK || pool->error == WARP_POOL_INTERRUPTED ||
		u < pool->error_unit)
	{
		if (!(kind == WARP_POOL_INTERRUPTED && pool->error != WARP_POOL_OK))
		{
			pool->error = kind;
			pool->error_unit = u;
			pool->status = st;
			pool->load_status = ls;
			pool->bad_col = bad_col;
			pool->bad_row = bad_row;
			pool->bad_file = file;
			pool->bad_batch = batch;
			if (aerr)
				pool->arrow_err = *aerr;
		}
	}
	if (u < __atomic_load_n(&pool->stop_unit, __ATOMIC_RELAXED))
		__atomic_store_n(&pool->stop_unit, u, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&pool->lock);
}

/* ------------------------------------------------------------ one unit */

/* Load column c of unit (whole batch, or rows [first, first+n)). */
static int
load_col(WarpPoolThread *t, WarpPoolFile *pf, int batch, const ArrowBatchMeta *meta,
		 int field, bool split, int64_t first, int64_t n, ArrowArray *out,
		 ArrowError *err)
{
	bool		dict = field >= 0 && field < pf->file->schema.n_fields &&
		pf->file->schema.fields[field].has_dict;
	int			rc;

	/* the dictionary cache is the file's: one thread at a time */
	if (dict)
	{
		pthread_mutex_lock(&pf->dict_lock);
		t->dict_held = &pf->dict_lock;
	}
	if (split)
		rc = arrow_load_column_range(pf->file, batch, meta, field, first, n, &t->arena, out, err);
	else
		rc = arrow_load_column(pf->file, batch, meta, field, &t->arena, out, err);
	if (dict)
	{
		t->dict_held = NULL;
		pthread_mutex_unlock(&pf->dict_lock);
	}
	return rc;
}

/* The unit's loads and program (run_unit), on t->arena. */
static void
run_unit_body(WarpPoolThread *t, uint64_t u, const WarpPoolBatch *pb, int part)
{
	WarpCpuPool *pool = t->pool;
	int			parts = pool->parts > 1 ? pool->parts : 1;
	WarpPoolFile *pf = &pool->files[pb->file];
	ArrowFile  *file = pf->file;
	ArrowBatchMeta meta;
	ArrowError	err;
	int64_t		first = 0,
				n;
	bool		split;
	int			c;
	WarpLoadStatus ls = WARP_LOAD_OK;
	int			bad_col = 0;
	warp_int64	bad_row = 0;
	WarpStatus	st;

	memset(&err, 0, sizeof(err));
	if (arrow_read_batch_meta(file, pb->batch, &t->arena, &meta, &err) != 0)
	{
		set_error(pool, u, WARP_POOL_ARROW, WARP_OK, WARP_LOAD_OK, 0, 0, pb->file, pb->batch, &err);
		return;
	}
	for (c = 0; c < pf->nnull; c++)
	{
		if (arrow_batch_excludes_nulltest(file, &meta, pf->null_fields[c], pf->null_is_null[c]))
		{
			if (part == 0)
				__atomic_fetch_add(&pool->batches_skipped, 1, __ATOMIC_RELAXED);
			return;
		}
	}
	if (!arrow_batch_part(file, pb->batch, &meta, pf->fields, pool->prog->ncols, part, parts,
						  &first, &n, &split))
		return;					/* an empty part, or loaded whole by part 0 */
	for (c = 0; c < pool->prog->ncols; c++)
	{
		if (load_col(t, pf, pb->batch, &meta, pf->fields[c], split, first, n,
					 &t->cols[c], &err) != 0)
		{
			set_error(pool, u, err.code == ARROW_ERR_NOMEM ? WARP_POOL_NOMEM : WARP_POOL_ARROW,
					  WARP_OK, WARP_LOAD_OK, 0, 0, pb->file, pb->batch, &err);
			return;
		}
	}
	st = warp_cpu_run_batch(t->cpu, t->cols, n, NULL, &ls, &bad_col, &bad_row);
	if (part == 0)
		t->batches_read++;
	if (st != WARP_OK)
		set_error(pool, u, WARP_POOL_STATUS, st, WARP_LOAD_OK, 0, 0, pb->file, pb->batch, NULL);
	else if (ls != WARP_LOAD_OK)
		set_error(pool, u, WARP_POOL_LOAD, WARP_OK, ls, bad_col, first + bad_row,
				  pb->file, pb->batch, NULL);
}

static void
run_unit(WarpPoolThread *t, uint64_t u)
{
	WarpCpuPool *pool = t->pool;
	int			parts = pool->parts > 1 ? pool->parts : 1;
	const WarpPoolBatch *pb = &pool->batches[u / parts];
	int			part = (int) (u % parts);
	WarpPoolFile *pf = &pool->files[pb->file];
	ArrowFile  *file = pf->file;
	WarpMapGuard guard;

	if (pb->batch < 0 || pb->batch >= file->n_batches)
	{
		ArrowError	err;

		memset(&err, 0, sizeof(err));
		arrow_error(&err, ARROW_ERR_INVALID, -1, "%s: record batch %d does not exist",
					file->src.name, pb->batch);
		set_error(pool, u, WARP_POOL_ARROW, WARP_OK, WARP_LOAD_OK, 0, 0, pb->file, pb->batch, &err);
		return;
	}
	/* a small batch is one unit (its part 0); decided without reading it */
	if (!arrow_part_may_have_rows(file, pb->batch, part))
		return;
	arrow_arena_init(&t->arena, &t->bufs.alloc);
	if (pool->nmapped == 0)
	{
		run_unit_body(t, u, pb, part);
		arrow_arena_free_all(&t->arena);
		return;
	}
	guard.ranges = pool->map_ranges;
	guard.nranges = pool->nfiles;
	if (sigsetjmp(guard.jb, 1) != 0)
	{
		/* a mapped page past the end of its file: the file shrank */
		ArrowError	err;

		if (t->dict_held)
		{
			pthread_mutex_unlock(t->dict_held);
			t->dict_held = NULL;
		}
		arrow_arena_free_all(&t->arena);
		memset(&err, 0, sizeof(err));
		arrow_error(&err, ARROW_ERR_IO, -1,
					"%s: record batch %d: the file became shorter while it was read",
					file->src.name, pb->batch);
		set_error(pool, u, WARP_POOL_ARROW, WARP_OK, WARP_LOAD_OK, 0, 0, pb->file, pb->batch, &err);
		return;
	}
	warp_mapguard_arm(&guard);
	run_unit_body(t, u, pb, part);
	warp_mapguard_disarm();
	arrow_arena_free_all(&t->arena);
}

/* Claim and run units until none is left or the pool stops. */
static void *
thread_main(void *arg)
{
	WarpPoolThread *t = arg;
	WarpCpuPool *pool = t->pool;
	uint64_t	nunits = (uint64_t) pool->nbatches * (pool->parts > 1 ? pool->parts : 1);

	for (;;)
	{
		uint64_t	u;

		if (t->index == 0 && pool->interrupted &&
			pool->interrupted(pool->interrupted_arg))
		{
			set_error(pool, 0, WARP_POOL_INTERRUPTED, WARP_OK, WARP_LOAD_OK, 0, 0, -1, -1, NULL);
			__atomic_store_n(&pool->stop_unit, 0, __ATOMIC_RELAXED);
			break;
		}
		u = __atomic_fetch_add(&pool->next_unit, 1, __ATOMIC_RELAXED);
		if (u >= nunits || u >= __atomic_load_n(&pool->stop_unit, __ATOMIC_RELAXED))
			break;
		run_unit(t, u);
	}
	return NULL;
}

/* ------------------------------------------------------------ the pool */

/*
 * Map pf's file for this run if the caller allows it (mappable) and none of
 * the fields the program reads is dictionary-encoded (a dictionary is
 * cached in the file beyond the run, so it must not point into the
 * mapping).  Bytes taken from the mapping count like reads.
 */
static void
map_file(WarpCpuPool *pool, WarpPoolFile *pf, WarpMapRange *range)
{
	ArrowFile  *file = pf->file;
	void	   *m;
	int			c;

	pf->map = NULL;
	if (!pf->mappable || pf->map_fd < 0 || file->src.map != NULL || file->src.size == 0 ||
		file->src.size > (uint64_t) SIZE_MAX || !warp_mapguard_install())
		return;
	for (c = 0; c < pool->prog->ncols; c++)
	{
		int			f = pf->fields[c];

		if (f >= 0 && f < file->schema.n_fields && file->schema.fields[f].has_dict)
			return;
	}
	m = mmap(NULL, (size_t) file->src.size, PROT_READ, MAP_SHARED, pf->map_fd, 0);
	if (m == MAP_FAILED)
		return;					/* read as before */
	pf->map = m;
	pf->map_len = (size_t) file->src.size;
	file->src.map = m;
	file->src.map_count = &pool->bytes_read;
	range->lo = m;
	range->len = pf->map_len;
	pool->nmapped++;
}

int
warp_cpu_pool_run(WarpCpuPool *pool)
{
	int			nthreads = pool->nthreads < 1 ? 1 : pool->nthreads;
	int			i,
				f;
	sigset_t	all,
				old;

	pool->error = WARP_POOL_OK;
	pool->order_risk = false;
	pool->ncpus = 0;
	pool->batches_read = 0;
	pool->batches_skipped = 0;
	pool->bytes_read = 0;
	memset(&pool->counters, 0, sizeof(pool->counters));
	pool->next_unit = 0;
	pool->stop_unit = UINT64_MAX;
	pool->error_unit = UINT64_MAX;
	pthread_mutex_init(&pool->lock, NULL);
	pool->cpus = calloc(nthreads, sizeof(WarpCpu *));
	pool->threads = calloc(nthreads, sizeof(WarpPoolThread));
	if (pool->cpus == NULL || pool->threads == NULL)
	{
		pool->error = WARP_POOL_NOMEM;
		return -1;
	}
	pool->nthreads = nthreads;

	/* every thread's driver, made here so that failing costs nothing */
	for (i = 0; i < nthreads; i++)
	{
		WarpPoolThread *t = &pool->threads[i];

		t->pool = pool;
		t->index = i;
		t->alloc.alloc = warp_memlist_alloc;
		t->alloc.ctx = &t->mem;
		arrow_recycler_init(&t->bufs, NULL);
		t->cpu = warp_cpu_create(pool->prog, pool->tables, &t->alloc);
		t->cols = warp_memlist_alloc(&t->mem, sizeof(ArrowArray) * (pool->prog->ncols > 0 ? pool->prog->ncols : 1));
		if (t->cpu == NULL || t->cols == NULL)
		{
			pool->error = WARP_POOL_NOMEM;
			return -1;
		}
		pool->cpus[i] = t->cpu;
		/* several threads: the order of float additions differs from a
		 * serial scan's (warp_cpu_set_order_check) */
		warp_cpu_set_order_check(t->cpu, nthreads > 1);
	}
	pool->ncpus = nthreads;

	pool->nmapped = 0;
	pool->map_ranges = calloc(pool->nfiles > 0 ? pool->nfiles : 1, sizeof(WarpMapRange));
	if (pool->map_ranges == NULL)
	{
		pool->error = WARP_POOL_NOMEM;
		return -1;
	}
	for (f = 0; f < pool->nfiles; f++)
	{
		WarpPoolFile *pf = &pool->files[f];

		if (pf->file == NULL)
			continue;			/* a file with nothing to read (no unit names it) */
		pthread_mutex_init(&pf->dict_lock, NULL);
		pf->pool = pool;
		pf->inner_read = pf->file->src.read;
		pf->inner_ctx = pf->file->src.ctx;
		pf->file->src.read = counting_read;
		pf->file->src.ctx = pf;
		map_file(pool, pf, &pool->map_ranges[f]);
	}

	/*
	 * The other threads take no asynchronous signal: the calling process
	 * handles them.  A synchronous one (SIGBUS from a mapped page the file
	 * no longer has) must reach the thread that caused it.
	 */
	sigfillset(&all);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGFPE);
	sigdelset(&all, SIGILL);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (i = 1; i < nthreads; i++)
	{
		WarpPoolThread *t = &pool->threads[i];

		if (pthread_create(&t->tid, NULL, thread_main, t) == 0)
			t->started = true;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);

	thread_main(&pool->threads[0]);
	for (i = 1; i < nthreads; i++)
		if (pool->threads[i].started)
		{
			pthread_join(pool->threads[i].tid, NULL);
			pool->threads[i].started = false;
		}

	for (f = 0; f < pool->nfiles; f++)
	{
		WarpPoolFile *pf = &pool->files[f];

		if (pf->file == NULL)
			continue;
		pf->file->src.read = pf->inner_read;
		pf->file->src.ctx = pf->inner_ctx;
		pthread_mutex_destroy(&pf->dict_lock);
		if (pf->map)
		{
			munmap((void *) pf->map, pf->map_len);
			pf->map = NULL;
			pf->file->src.map = NULL;
			pf->file->src.map_count = NULL;
		}
	}
	free(pool->map_ranges);
	pool->map_ranges = NULL;
	for (i = 0; i < nthreads; i++)
	{
		WarpCpuCounters c;

		warp_cpu_counters(pool->cpus[i], &c);
		pool->counters.rows_in += c.rows_in;
		pool->counters.rows_filtered += c.rows_filtered;
		pool->counters.rows_joined += c.rows_joined;
		pool->batches_read += pool->threads[i].batches_read;
		if (warp_cpu_order_risk(pool->cpus[i]))
			pool->order_risk = true;
	}
	return pool->error == WARP_POOL_OK ? 0 : -1;
}

void
warp_cpu_pool_free(WarpCpuPool *pool)
{
	int			i;

	if (pool->threads)
	{
		for (i = 0; i < pool->nthreads; i++)
			thread_free(&pool->threads[i]);
		free(pool->threads);
		pool->threads = NULL;
		pthread_mutex_destroy(&pool->lock);
	}
	free(pool->cpus);
	pool->cpus = NULL;
	pool->ncpus = 0;
}
