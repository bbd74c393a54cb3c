/*-------------------------------------------------------------------------
 *
 * gpud_job.c
 *	  Running one job inside pg_warp_gpud (see gpud_job.h).
 *
 * The daemon reads the fact table's Arrow files itself and runs the
 * program on the GPU driver.  The listed batches are dealt to lanes of the
 * GPUs (gpud_lanes.h); each lane used is a part, with its own driver, run
 * in its own thread, reading its batches in the order the backend listed
 * them; the result is every part's groups as partial states.  For the GPU
 * a file is used in place through its registered window (gpud_files.h),
 * and the driver runs batch i while the part reads batch i+1, so a batch's
 * memory (what arrow_load_column allocated: metadata, realigned or
 * decompressed buffers) is kept until the next batch has been queued.
 * Without a window the file is pread into the lane's pinned staging
 * memory, which is shared by every job on the lane and only used inside a
 * turn, so such a batch is waited for before its turn ends.  A file with
 * compressed bodies is read ahead instead (gpud_prefetch.h): helper
 * threads decompress the part's batches in parallel into the lane's pinned
 * memory, outside the turns, and the part takes them in its list's order;
 * on the GPU, columns whose decompressed buffers the GPU's column cache
 * holds from an earlier query are neither read nor decompressed
 * (gpud_decoded.h).  Whenever
 * the GPU driver cannot finish a job exactly (a row raised an error, a
 * column layout or aggregate it does not do, device memory ran out) the
 * whole job is run again on the CPU driver, which reports PostgreSQL's
 * exact error for the first failing row; no partial state has been sent
 * anywhere yet, so nothing is counted twice.  Between batches the job
 * looks at the backend's cancel word and at the socket, so a cancelled
 * query stops within one batch.
 *
 * Pure C (no PostgreSQL): memory is malloc'd and freed at the end of the
 * job, on every path.
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpud_decoded.h"
#include "gpud_files.h"
#include "gpud_job.h"
#include "gpud_pinpool.h"
#include "gpud_prefetch.h"
#include "gpud_turns.h"
#include "warp_cpu.h"
#include "warp_gpu.h"
#include "warp_memlist.h"

/* ------------------------------------------------------------ memory */

/* (engine allocations of a job: a WarpMemList, warp_memlist.h) */

/*
 * Batch buffers: bump-allocated from the daemon's pinned staging memory
 * while it lasts (copies from it run at link speed), malloc beyond.  Reset
 * per batch.
 */
typedef struct Staging
{
	uint8_t    *base;
	size_t		size;
	size_t		used;
} Staging;

static void *
staging_alloc(void *ctx, size_t size)
{
	Staging    *s = ctx;
	size_t		off = (s->used + 63) & ~(size_t) 63;

	if (s->base && off <= s->size && size <= s->size - off)
	{
		s->used = off + size;
		return s->base + off;
	}
	return malloc(size);
}

static void
staging_free(void *ctx, void *p)
{
	Staging    *s = ctx;

	if (s->base && (uint8_t *) p >= s->base && (uint8_t *) p < s->base + s->size)
		return;
	free(p);
}

/* ------------------------------------------------------------ reading */

typedef struct CountingSource
{
	int			(*inner_read) (void *ctx, void *dst, size_t len, uint64_t off);
	void	   *inner_ctx;
	int64_t    *bytes;
	double	   *ms;
	pthread_mutex_t lock;		/* prefetch threads read at the same time */
} CountingSource;

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

static int
counting_read(void *ctx, void *dst, size_t len, uint64_t off)
{
	CountingSource *cs = ctx;
	double		t0 = now_ms();
	int			rc = cs->inner_read(cs->inner_ctx, dst, len, off);

	pthread_mutex_lock(&cs->lock);
	if (rc == 0)
		*cs->bytes += (int64_t) len;
	*cs->ms += now_ms() - t0;
	pthread_mutex_unlock(&cs->lock);
	return rc;
}

static bool
should_stop(GpudArenaHeader *h, int sock)
{
	struct pollfd p;

	if (h->cancel)
		return true;
	p.fd = sock;
	p.events = POLLIN | POLLRDHUP;
	p.revents = 0;
	/* the backend sends nothing while a job runs: anything readable is
	 * end of file or a protocol violation, either way stop */
	return poll(&p, 1, 0) > 0;
}

/* ------------------------------------------------------------ running */

struct Run;

/*
 * One lane's share of a job, or the whole job on the CPU driver: the
 * batches it takes, its driver, its device memory and its counts.  The
 * parts of a job run in threads of their own, one per lane.
 */
typedef struct Part
{
	struct Run *run;
	int			lane_index;		/* of dev->lanes; -1 for the CPU driver */
	GpudLane   *lane;			/* NULL: the CPU driver (run->cpu) */
	WarpGpu    *drv;
	GpudAccount acct;			/* the driver's device memory */
	Staging		staging;
	ArrowAllocator batch_alloc; /* staging memory while it lasts */
	GpudResult	res;			/* this part's counts and errors */
	char		fallback[192];	/* why its GPU driver gave up */
	bool		stopped;		/* gave up because another part did */
	double		phase_ms[GPUD_PHASES];	/* create, batches, finish */
	int			rc;
	pthread_t	thread;
	bool		threaded;
} Part;

typedef struct Run
{
	GpudDevice *dev;
	GpudArenaHeader *hdr;
	int			sock;
	uint8_t    *arena;
	uint64_t	arena_size;
	GpudJob    *job;
	WarpProgram prog;
	WarpJoinTable **tables;
	WarpMemList mem;
	WarpAlloc	alloc;
	Staging		no_staging;
	ArrowAllocator heap_alloc;	/* malloc only */
	/* the drivers */
	bool		use_gpu;
	int			nparts;			/* GPU parts in parts[], by lane */
	Part		parts[GPUD_MAX_LANES];
	uint8_t    *lane_of;		/* per listed batch, in job order: its lane */
	int		   *file_first;		/* per file: its first batch in lane_of */
	Part		cpu_part;
	WarpCpu    *cpu;
	int			stop;			/* a part gave up: the others stop too */
	char		fallback[192];
	GpudResult	res;			/* header being filled */
} Run;

/* first guess of one batch slot's staging bytes; more is taken if free */
#define STAGE_GUESS ((warp_uint64) 64 << 20)

/* does part p run the i-th listed batch of file fi? */
static bool
part_takes(const Part *p, int fi, int i)
{
	return p->lane == NULL ||
		p->run->lane_of[p->run->file_first[fi] + i] == p->lane_index;
}

static bool
other_part_stopped(Part *p)
{
	return p->lane != NULL && p->run->nparts > 1 &&
		__atomic_load_n(&p->run->stop, __ATOMIC_RELAXED) != 0;
}

/*
 * Run part p's driver over one loaded batch: 0, 1 when a row failed (the
 * CPU driver's error in p->res), -1 when the GPU driver gave up
 * (p->fallback says why).
 */
static int
run_loaded(Part *p, const ArrowArray *cols, int64_t nrows, const WarpGpuFile *gfile)
{
	Run		   *r = p->run;
	WarpLoadStatus ls = WARP_LOAD_OK;
	int			bad_col = 0;
	warp_int64	bad_row = 0;
	WarpStatus	st;

	p->res.batches++;
	if (p->lane != NULL)
		return warp_gpu_run_batch(p->drv, cols, nrows, gfile, p->fallback,
								  sizeof(p->fallback)) != 0 ? -1 : 0;
	st = warp_cpu_run_batch(r->cpu, cols, nrows, NULL, &ls, &bad_col, &bad_row);
	if (st != WARP_OK)
	{
		p->res.status = st;
		return 1;
	}
	if (ls != WARP_LOAD_OK)
	{
		p->res.load_status = ls;
		p->res.bad_col = bad_col;
		p->res.bad_row = bad_row;
		return 1;
	}
	return 0;
}

/* decompressed bytes all jobs' parts may hold ahead (start_prefetch) */
static uint64_t ahead_reserved;

/* give back what start_prefetch reserved */
static void
release_ahead(uint64_t *reserved)
{
	if (*reserved > 0)
		__atomic_sub_fetch(&ahead_reserved, *reserved, __ATOMIC_RELAXED);
	*reserved = 0;
}

/*
 * Pin lane's memory for batches decompressed ahead (gpud_job.h).  At start:
 * pinning 256 MB takes about 100 ms and holds up the CUDA calls of every
 * other thread meanwhile (measured on an H100: made at a lane's first
 * compressed query, even on a thread of its own, it added 80-100 ms to
 * the queries running then).
 */
void
gpud_lane_pin_ahead(GpudLane *lane)
{
	void	   *mem = warp_gpu_host_alloc(GPUD_PREFETCH_BYTES);
	GpudPinPool *pool = mem ? malloc(sizeof(GpudPinPool)) : NULL;

	if (pool && gpud_pinpool_init(pool, mem, GPUD_PREFETCH_BYTES))
		lane->ahead = pool;
	else
	{
		free(pool);
		warp_gpu_host_free(mem);
	}
}

/*
 * For a file with compressed bodies: start loading part p's batches of file
 * fi ahead on helper threads (gpud_prefetch.h), so that their decompression
 * runs in parallel and outside the part's GPU turns.  *ahead receives the
 * batch numbers it loads: p's, in order, up to the first the file does not
 * have (the serial path reports that one).  NULL when the file is not
 * compressed, a field read is dictionary-encoded, p has fewer than two
 * batches there (one is enough with a hook, which may spare decompressing
 * it), or on any failure: the part then reads serially.  hook (NULL: none)
 * loads the columns (gpud_prefetch.h).
 * *reserved receives what it took of the daemon's GPUD_PREFETCH_TOTAL.
 */
static GpudPrefetch *
start_prefetch(Part *p, ArrowFile *file, int fi, int mine, const GpudLoadHook *hook,
			   int32_t **ahead, int *nahead, uint64_t *reserved)
{
	Run		   *r = p->run;
	GpudFile   *f = (GpudFile *) (r->arena + r->job->off_files) + fi;
	const int32_t *batches = (const int32_t *) (r->arena + f->off_batches);
	const int32_t *fields = (const int32_t *) (r->arena + f->off_fields);
	ArrowArena	scratch;
	ArrowBatchMeta meta;
	ArrowError	e;
	GpudPrefetch *pre;
	GpudPinPool *pool;
	int32_t    *list;
	int			n = 0;
	int			i;
	int			parts;
	int			nthreads;
	int			depth;
	int64_t		meta_rows = 0;
	uint64_t	row_bytes = 0;
	uint64_t	batch_bytes;
	uint64_t	taken;
	bool		want;
	/* one batch is worth it only when the hook may spare decompressing it */
	int			least = hook ? 1 : 2;

	*ahead = NULL;
	*reserved = 0;
	*nahead = 0;
#ifdef GPUD_NO_PREFETCH
	/* a build for A/B measurements (scripts/bench_gpu_ab.sh) */
	return NULL;
#endif
	if (mine < least || (list = malloc(sizeof(int32_t) * mine)) == NULL)
		return NULL;
	for (i = 0; i < f->nbatches && n < mine; i++)
	{
		if (!part_takes(p, fi, i))
			continue;
		if (batches[i] < 0 || batches[i] >= file->n_batches)
			break;
		list[n++] = batches[i];
	}
	want = n >= least;
	if (want)
	{
		arrow_arena_init(&scratch, &r->heap_alloc);
		want = arrow_read_batch_meta(file, list[0], &scratch, &meta, &e) == 0 &&
			gpud_prefetch_wanted(file, &meta, fields, r->prog.ncols);
		if (want)
			meta_rows = meta.length;
		arrow_arena_free_all(&scratch);
	}
	if (!want)
	{
		free(list);
		return NULL;
	}
	/* decompressed bytes of a batch: rows times the fields' widths */
	for (i = 0; i < r->prog.ncols; i++)
	{
		int			w = arrow_type_byte_width(&file->schema.fields[fields[i]].type);

		row_bytes += w > 0 ? w : 16;
	}
	batch_bytes = (uint64_t) (meta_rows > 0 ? meta_rows : 1) * row_bytes;
	parts = r->use_gpu && r->nparts > 0 ? r->nparts : 1;
	taken = __atomic_load_n(&ahead_reserved, __ATOMIC_RELAXED);
	gpud_prefetch_shape(sysconf(_SC_NPROCESSORS_ONLN), parts, batch_bytes,
						taken < GPUD_PREFETCH_TOTAL ? GPUD_PREFETCH_TOTAL - taken : 0,
						&nthreads, &depth);
	/* (two batches a part are always allowed: the total may be exceeded
	 * by that much) */
	*reserved = (uint64_t) depth * batch_bytes;
	__atomic_add_fetch(&ahead_reserved, *reserved, __ATOMIC_RELAXED);
	/* for the GPU, into the lane's pinned memory: copied at link speed */
	pool = p->lane ? p->lane->ahead : NULL;
	pre = gpud_prefetch_start(file, list, n, fields, r->prog.ncols,
							  pool ? &pool->alloc : &r->heap_alloc, hook, nthreads, depth);
	if (pre == NULL)
	{
		release_ahead(reserved);
		free(list);
		return NULL;
	}
	*ahead = list;
	*nahead = n;
	return pre;
}

/*
 * Read the listed batches of every file that part p takes and run its
 * driver over them.  Returns 0 when done (p->res says whether with an
 * error), -1 when the GPU driver gave up (p->fallback says why) or another
 * part did, -2 when cancelled.
 */
static int
run_batches(Part *p)
{
	Run		   *r = p->run;
	bool		on_gpu = p->lane != NULL;
	ArrowArray *cols = calloc(r->prog.ncols > 0 ? r->prog.ncols : 1, sizeof(ArrowArray));
	int			fi;
	int			rc = 0;

	if (cols == NULL)
	{
		p->res.status = WARP_ERR_OUT_OF_MEMORY;
		return 0;
	}
	for (fi = 0; fi < r->job->nfiles && rc == 0; fi++)
	{
		GpudFile   *f = (GpudFile *) (r->arena + r->job->off_files) + fi;
		const char *path = (const char *) r->arena + f->off_path;
		const int32_t *batches = (const int32_t *) (r->arena + f->off_batches);
		const int32_t *fields = (const int32_t *) (r->arena + f->off_fields);
		ArrowError *err = &p->res.arrow_error;
		ArrowSource src;
		ArrowOpenOptions opts = {0};
		ArrowFile	file;
		CountingSource cs = {.lock = PTHREAD_MUTEX_INITIALIZER};
		struct stat st;
		int			fd;
		int			i;
		GpudWindow *win = NULL;
		const uint8_t *wbase = NULL;
		uint64_t	readable;
		ArrowArena	prev;		/* the batch the GPU may still read */
		WarpGpuFile gfile;
		bool		have_prev = false;
		int			mine = 0;
		GpudPrefetch *pre = NULL;	/* compressed: batches loaded ahead */
		int32_t    *ahead = NULL;	/* the batches it loads, in order */
		int			nahead = 0;
		uint64_t	ahead_bytes = 0;	/* reserved of the daemon's total */
		int			taken = 0;
		GpudLoaded *prev_l = NULL;	/* the loaded batch the GPU may still read */
		GpudDecodedSource dsrc = {0};	/* compressed: columns the cache holds */
		GpudLoadHook hook = {gpud_decoded_load, gpud_decoded_done, &dsrc};
		bool		use_decoded;

		for (i = 0; i < f->nbatches; i++)
			if (part_takes(p, fi, i))
				mine++;
		if (mine == 0)
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
		{
			arrow_error(err, ARROW_ERR_IO, -1, "could not open Arrow file \"%s\": %s",
						path, strerror(errno));
			err->errno_saved = errno;
			p->res.has_arrow_error = 1;
			break;
		}
		/* the file the backend planned with: a writable table's file may
		 * only have grown past its committed length, any other must be
		 * unchanged */
		if (fstat(fd, &st) != 0 || (uint64_t) st.st_dev != f->dev ||
			(uint64_t) st.st_ino != f->ino ||
			(f->limit >= 0 ? st.st_size < f->limit :
			 (st.st_size != f->size || st.st_mtim.tv_sec != f->mtime_sec ||
			  st.st_mtim.tv_nsec != f->mtime_nsec)))
		{
			arrow_error(err, ARROW_ERR_IO, -1,
						"Arrow file \"%s\" was replaced or changed while the query ran", path);
			err->errno_saved = ESTALE;
			p->res.has_arrow_error = 1;
			close(fd);
			break;
		}
		/*
		 * For the GPU, the file's registered window: column buffers are
		 * used in place and DMA'd from the page cache.  Otherwise (or when
		 * no window can be made) pread into staging memory.
		 */
		readable = (uint64_t) st.st_size;
		if (f->limit >= 0 && (uint64_t) f->limit < readable)
			readable = (uint64_t) f->limit;
		if (on_gpu)
			win = gpud_window_acquire(fd, &st, readable, &wbase);
		/* the column cache knows this file by its identity */
		memset(&gfile, 0, sizeof(gfile));
		gfile.id.dev = (uint64_t) st.st_dev;
		gfile.id.ino = (uint64_t) st.st_ino;
		gfile.id.size = (uint64_t) st.st_size;
		gfile.id.mtime_sec = (int64_t) st.st_mtim.tv_sec;
		gfile.id.mtime_nsec = (int64_t) st.st_mtim.tv_nsec;
		/* compressed batches: the GPU's cache may hold columns decompressed */
		use_decoded = on_gpu && r->job->use_cache && p->lane->cache != NULL;
		dsrc.cache = use_decoded ? p->lane->cache : NULL;
		dsrc.id = gfile.id;
		if (win)
		{
			arrow_source_mem(&src, wbase, readable, path);
			p->res.windows++;
			gfile.base = wbase;
			gfile.len = readable;
		}
		else
		{
			if (arrow_source_fd(&src, fd, path, f->limit, err) != 0)
			{
				p->res.has_arrow_error = 1;
				close(fd);
				break;
			}
			cs.inner_read = src.read;
			cs.inner_ctx = src.ctx;
			cs.bytes = &p->res.bytes_read;
			cs.ms = &p->res.read_ms;
			src.read = counting_read;
			src.ctx = &cs;
		}
		opts.recover_tail = f->recover_tail != 0;
		if (arrow_open(&file, &src, &opts, err) != 0)
		{
			p->res.has_arrow_error = 1;
			gpud_window_release(win);
			close(fd);
			break;
		}
		pre = start_prefetch(p, &file, fi, mine, use_decoded ? &hook : NULL, &ahead, &nahead,
							 &ahead_bytes);
		for (i = 0; i < f->nbatches; i++)
		{
			int			b = batches[i];
			ArrowArena	arena;
			ArrowBatchMeta meta;
			int			c;
			bool		failed = false;
			bool		turn = on_gpu;

			if (!part_takes(p, fi, i))
				continue;
			if (should_stop(r->hdr, r->sock))
			{
				rc = -2;
				break;
			}
			if (other_part_stopped(p))
			{
				p->stopped = true;
				rc = -1;
				break;
			}
			if (b < 0 || b >= file.n_batches)
			{
				arrow_error(err, ARROW_ERR_CORRUPT, -1,
							"Arrow file \"%s\" has no record batch %d", path, b);
				p->res.has_arrow_error = 1;
				rc = 1;
				break;
			}
			if (pre && taken < nahead)
			{
				/*
				 * Loaded ahead (into the lane's pinned memory or malloc'd
				 * memory, kept until the next batch is queued, as a
				 * window's; columns the GPU's cache holds decompressed are
				 * not loaded at all): wait for it outside the turn, so
				 * decompression never holds the device.
				 */
				GpudLoaded *l = gpud_prefetch_take(pre, taken++);

				p->res.batches_ahead++;
				if (turn)
					gpud_turn_enter(&p->lane->turns);
				if (l->status != 0)
				{
					*err = l->err;
					p->res.has_arrow_error = 1;
					if (turn)
						gpud_turn_leave(&p->lane->turns);
					rc = 1;
					break;
				}
				gfile.decoded = l->state;
				rc = run_loaded(p, l->cols, l->meta.length,
								r->job->use_cache && (win || l->state) ? &gfile : NULL);
				gfile.decoded = NULL;
				if (prev_l)
					gpud_prefetch_release(pre, prev_l);
				prev_l = NULL;
				if (on_gpu)
					prev_l = l;
				else
					gpud_prefetch_release(pre, l);
				goto batch_done;
			}
			/* a GPU job holds the device for one batch at a time */
			if (turn)
				gpud_turn_enter(&p->lane->turns);
			p->staging.used = 0;
			arrow_arena_init(&arena, win ? &r->heap_alloc : &p->batch_alloc);
			if (arrow_read_batch_meta(&file, b, &arena, &meta, err) != 0)
				failed = true;
			for (c = 0; !failed && c < r->prog.ncols; c++)
			{
				if (fields[c] < 0 || fields[c] >= file.schema.n_fields)
				{
					arrow_error(err, ARROW_ERR_INVALID, -1,
								"Arrow file \"%s\" has no field %d", path, fields[c]);
					failed = true;
				}
				else if (arrow_load_column(&file, b, &meta, fields[c], &arena, &cols[c], err) != 0)
					failed = true;
			}
			if (failed)
			{
				p->res.has_arrow_error = 1;
				arrow_arena_free_all(&arena);
				if (turn)
					gpud_turn_leave(&p->lane->turns);
				rc = 1;
				break;
			}
			if (on_gpu)
			{
				rc = run_loaded(p, cols, meta.length, win && r->job->use_cache ? &gfile : NULL);
				if (rc == 0 && win == NULL &&
					warp_gpu_wait(p->drv, p->fallback, sizeof(p->fallback)) != 0)
					rc = -1;	/* staging memory is free again only now */
				/* the batch before this one is done with its memory */
				if (have_prev)
					arrow_arena_free_all(&prev);
				have_prev = false;
				if (win)
				{
					prev = arena;
					have_prev = true;
				}
				else
					arrow_arena_free_all(&arena);
			}
			else
			{
				rc = run_loaded(p, cols, meta.length, NULL);
				arrow_arena_free_all(&arena);
			}
	batch_done:
			if (rc == 1 && p->res.load_status != WARP_LOAD_OK)
				p->res.bad_file = fi;
			if (turn)
				gpud_turn_leave(&p->lane->turns);
			if (r->job->fault == GPUD_FAULT_CRASH)
				raise(SIGKILL);		/* as kill -9 would */
			if (r->job->fault == GPUD_FAULT_SLOW)
				usleep(50 * 1000);
			if (rc != 0)
				break;
		}

		/*
		 * Nothing may read this file's memory (its window, its dictionaries,
		 * the last batch's buffers) once it is closed: wait for the device,
		 * whatever happened above.
		 */
		if (on_gpu && p->drv &&
			warp_gpu_wait(p->drv, p->fallback, sizeof(p->fallback)) != 0 && rc == 0)
			rc = -1;
		if (have_prev)
			arrow_arena_free_all(&prev);
		have_prev = false;
		if (prev_l)
			gpud_prefetch_release(pre, prev_l);
		gpud_prefetch_stop(pre);
		p->res.columns_cached += (int64_t) dsrc.columns_served;
		release_ahead(&ahead_bytes);
		free(ahead);
		arrow_close(&file);
		gpud_window_release(win);
		close(fd);
	}
	free(cols);
	return rc < 0 ? rc : 0;
}

static bool
stop_waiting(void *arg)
{
	Run		   *r = arg;

	return should_stop(r->hdr, r->sock);
}

/*
 * Reserve part p's device memory on its lane, waiting behind running jobs
 * (outside any GPU turn: they need turns to finish and free it).  0 when
 * reserved, -1 (p->fallback set) when the job must run on the CPU, -2 when
 * the query was cancelled while waiting.  pg_warp.gpu_memory_per_query
 * caps each part.
 */
static int
reserve_device_memory(Part *p)
{
	Run		   *r = p->run;
	warp_uint64 need = warp_gpu_estimate(&r->prog, r->tables, STAGE_GUESS);

	p->acct.budget = &p->lane->budget;
	p->acct.quota = r->job->mem_quota;
	if (need > r->job->mem_quota)
	{
		snprintf(p->fallback, sizeof(p->fallback),
				 "needs about %llu MB of GPU memory, more than pg_warp.gpu_memory_per_query (%llu MB)",
				 (unsigned long long) (need >> 20), (unsigned long long) (r->job->mem_quota >> 20));
		return -1;
	}
	if (gpud_budget_reserve(&p->lane->budget, need, stop_waiting, r) != 0)
	{
		if (should_stop(r->hdr, r->sock))
			return -2;
		snprintf(p->fallback, sizeof(p->fallback),
				 "needs about %llu MB of GPU memory, more than the device has for queries (%llu MB)",
				 (unsigned long long) (need >> 20),
				 (unsigned long long) (p->lane->budget.total >> 20));
		return -1;
	}
	p->acct.reserved = need;
	return 0;
}

/* Build part p's GPU driver; false (with p->fallback set) if it refuses. */
static bool
create_gpu_driver(Part *p)
{
	Run		   *r = p->run;
	WarpGpuMem	mem;

	if (r->job->fault == GPUD_FAULT_DEVICE_OOM)
	{
		snprintf(p->fallback, sizeof(p->fallback),
				 "device out of memory (injected by pg_warp.gpud_fault)");
		return false;
	}
	mem.grow = gpud_account_grow;
	mem.shrink = gpud_account_shrink;
	mem.ctx = &p->acct;
	p->drv = warp_gpu_create(p->lane->cuda_index, p->lane->cache, &r->prog, r->tables, &mem,
							 p->fallback, sizeof(p->fallback));
	return p->drv != NULL;
}

static bool
part_has_error(const Part *p)
{
	return p->res.status != WARP_OK || p->res.load_status != WARP_LOAD_OK ||
		p->res.has_arrow_error;
}

/*
 * One lane's share of the job: driver, batches, and the groups brought
 * back.  Runs in a thread of its own when the job has several parts; a
 * part that fails makes the others stop at their next batch.
 */
static void *
part_main(void *arg)
{
	Part	   *p = arg;
	Run		   *r = p->run;
	bool		ok;
	double		t = now_ms();

	gpud_turn_enter(&p->lane->turns);
	ok = create_gpu_driver(p);
	gpud_turn_leave(&p->lane->turns);
	p->phase_ms[GPUD_PHASE_CREATE] = now_ms() - t;
	t = now_ms();
	p->rc = ok ? run_batches(p) : -1;
	p->phase_ms[GPUD_PHASE_BATCHES] = now_ms() - t;
	t = now_ms();
	if (p->rc == 0 && !part_has_error(p))
	{
		gpud_turn_enter(&p->lane->turns);
		if (warp_gpu_finish(p->drv, p->fallback, sizeof(p->fallback)) != 0)
			p->rc = -1;
		gpud_turn_leave(&p->lane->turns);
	}
	p->phase_ms[GPUD_PHASE_FINISH] = now_ms() - t;
	if (p->rc != 0 || part_has_error(p))
		__atomic_store_n(&r->stop, 1, __ATOMIC_RELAXED);
	return NULL;
}

/* give part p's driver and device memory back */
static void
part_release(Part *p)
{
	if (p->drv)
	{
		gpud_turn_enter(&p->lane->turns);
		warp_gpu_destroy(p->drv);
		gpud_turn_leave(&p->lane->turns);
		p->drv = NULL;
	}
	gpud_account_close(&p->acct);
}

/* counts of part p added to the job's header */
static void
add_part_counts(GpudResult *res, const Part *p)
{
	res->batches += p->res.batches;
	res->batches_ahead += p->res.batches_ahead;
	res->columns_cached += p->res.columns_cached;
	res->bytes_read += p->res.bytes_read;
	res->windows += p->res.windows;
	res->read_ms += p->res.read_ms;
}

/* the first error of part p becomes the job's */
static void
take_part_error(GpudResult *res, const Part *p)
{
	res->status = p->res.status;
	res->load_status = p->res.load_status;
	res->bad_col = p->res.bad_col;
	res->bad_row = p->res.bad_row;
	res->bad_file = p->res.bad_file;
	res->has_arrow_error = p->res.has_arrow_error;
	res->arrow_error = p->res.arrow_error;
}

static void
init_part(Run *r, Part *p, int lane_index)
{
	memset(p, 0, sizeof(*p));
	p->run = r;
	p->lane_index = lane_index;
	p->lane = lane_index >= 0 ? &r->dev->lanes[lane_index] : NULL;
	p->res.bad_file = -1;
	if (p->lane)
	{
		p->staging.base = p->lane->staging;
		p->staging.size = p->lane->staging_size;
	}
	p->batch_alloc.alloc = staging_alloc;
	p->batch_alloc.free = staging_free;
	p->batch_alloc.ctx = &p->staging;
}

/*
 * Which lane runs each listed batch (r->lane_of, gpud_deal_lanes), and a
 * part for every lane used, in lane order.
 */
static bool
assign_lanes(Run *r)
{
	GpudDevice *dev = r->dev;
	bool		used[GPUD_MAX_LANES] = {false};
	uint8_t    *gpu_of;
	int			total = 0;
	int			fi,
				l;

	for (fi = 0; fi < r->job->nfiles; fi++)
		total += ((GpudFile *) (r->arena + r->job->off_files))[fi].nbatches;
	gpu_of = warp_memlist_alloc(&r->mem, total > 0 ? total : 1);
	r->lane_of = warp_memlist_alloc(&r->mem, total > 0 ? total : 1);
	r->file_first = warp_memlist_alloc(&r->mem, sizeof(int) * (r->job->nfiles + 1));
	if (gpu_of == NULL || r->lane_of == NULL || r->file_first == NULL)
		return false;
	total = 0;
	for (fi = 0; fi < r->job->nfiles; fi++)
	{
		GpudFile   *f = (GpudFile *) (r->arena + r->job->off_files) + fi;
		const int32_t *batches = (const int32_t *) (r->arena + f->off_batches);
		int			i;

		r->file_first[fi] = total;
		for (i = 0; i < f->nbatches; i++)
			gpu_of[total++] = (uint8_t) gpud_batch_gpu(f->ino, batches[i], dev->ngpus);
	}
	gpud_deal_lanes(dev->ngpus, dev->lanes_per_gpu, dev->min_batches_per_lane,
					dev->next_lane, total, gpu_of, r->lane_of, used);
	/* a job with no batch still runs (and brings back its empty groups) */
	if (total == 0)
		used[0] = true;
	r->nparts = 0;
	for (l = 0; l < dev->ngpus * dev->lanes_per_gpu; l++)
		if (used[l])
			init_part(r, &r->parts[r->nparts++], l);
	return true;
}

/*
 * Run the job on the lanes assign_lanes chose, one part per lane, in
 * parallel.  0 when done (r->res says whether with an error), -1 when it
 * must run on the CPU driver (r->fallback says why), -2 when cancelled.  A
 * job split over several parts that meets a bad batch is re-run on the
 * CPU driver too, which reports the first error in scan order as
 * PostgreSQL would.
 */
static int
run_on_gpus(Run *r)
{
	int			k,
				rc = 0;
	double		t;

	if (!assign_lanes(r))
	{
		snprintf(r->fallback, sizeof(r->fallback), "out of memory");
		return -1;
	}

	/* memory on every lane, in lane order, so that jobs waiting for more
	 * than one cannot deadlock */
	t = now_ms();
	for (k = 0; k < r->nparts && rc == 0; k++)
	{
		rc = reserve_device_memory(&r->parts[k]);
		if (rc == -1)
			snprintf(r->fallback, sizeof(r->fallback), "%s", r->parts[k].fallback);
	}
	r->res.phase_ms[GPUD_PHASE_RESERVE] = now_ms() - t;
	if (rc == 0)
	{
		for (k = 1; k < r->nparts; k++)
			r->parts[k].threaded =
				pthread_create(&r->parts[k].thread, NULL, part_main, &r->parts[k]) == 0;
		part_main(&r->parts[0]);
		for (k = 1; k < r->nparts; k++)
		{
			if (r->parts[k].threaded)
				pthread_join(r->parts[k].thread, NULL);
			else
				part_main(&r->parts[k]);
		}
		/* cancelled beats gave up beats done */
		for (k = 0; k < r->nparts; k++)
			if (r->parts[k].rc == -2)
				rc = -2;
		for (k = 0; k < r->nparts && rc == 0; k++)
		{
			Part	   *p = &r->parts[k];

			if (p->rc == -1 && !p->stopped)
			{
				snprintf(r->fallback, sizeof(r->fallback), "%s", p->fallback);
				rc = -1;
			}
		}
		for (k = 0; k < r->nparts && rc == 0; k++)
		{
			Part	   *p = &r->parts[k];

			if (!part_has_error(p))
				continue;
			if (r->nparts == 1)
				take_part_error(&r->res, p);
			else
			{
				snprintf(r->fallback, sizeof(r->fallback),
						 "a batch could not be read on GPU %d; the CPU driver reports the first error in scan order",
						 p->lane->gpu);
				rc = -1;
			}
			break;
		}
		for (k = 0; k < r->nparts; k++)
		{
			int			ph;

			add_part_counts(&r->res, &r->parts[k]);
			/* the slowest lane's time in each phase */
			for (ph = GPUD_PHASE_CREATE; ph < GPUD_PHASES; ph++)
				if (r->parts[k].phase_ms[ph] > r->res.phase_ms[ph])
					r->res.phase_ms[ph] = r->parts[k].phase_ms[ph];
		}
	}
	if (rc != 0)
	{
		bool		over_quota = false,
					reserved = false;

		for (k = 0; k < r->nparts; k++)
		{
			over_quota |= r->parts[k].acct.over_quota;
			reserved |= r->parts[k].acct.reserved > 0;
			part_release(&r->parts[k]);
		}
		r->nparts = 0;
		if (over_quota)
			snprintf(r->fallback, sizeof(r->fallback),
					 "needed more GPU memory than pg_warp.gpu_memory_per_query (%llu MB)",
					 (unsigned long long) (r->job->mem_quota >> 20));
		else if (reserved && strncmp(r->fallback, "device memory:", 14) == 0)
			snprintf(r->fallback, sizeof(r->fallback),
					 "needed more GPU memory than other queries left free");
	}
	return rc;
}

/* Serialize the groups of every part's driver after the header. */
static void *
build_result(Run *r, uint64_t *len)
{
	GpudResult *res = &r->res;
	warp_int64	ng = 0;
	int			nk = r->prog.nkeys,
				na = r->prog.naggs;
	uint64_t	off_keys,
				off_nulls,
				off_states,
				total;
	uint8_t    *out;
	warp_int64	g,
				at = 0;
	int			k;
	bool		ok = res->status == WARP_OK && res->load_status == WARP_LOAD_OK &&
		!res->has_arrow_error;

	if (ok && r->use_gpu)
		for (k = 0; k < r->nparts; k++)
			ng += warp_gpu_ngroups(r->parts[k].drv);
	else if (ok && r->cpu)
		ng = warp_cpu_ngroups(r->cpu);
	off_keys = (sizeof(GpudResult) + 15) & ~(uint64_t) 15;
	off_nulls = (off_keys + (uint64_t) ng * nk * sizeof(int64_t) + 15) & ~(uint64_t) 15;
	off_states = (off_nulls + (uint64_t) ng * nk + 15) & ~(uint64_t) 15;
	total = off_states + (uint64_t) ng * na * sizeof(WarpAggState);
	out = malloc(total);
	if (out == NULL)
		return NULL;
	res->ngroups = ng;
	res->nkeys = nk;
	res->naggs = na;
	res->off_keys = off_keys;
	res->off_nulls = off_nulls;
	res->off_states = off_states;

	/*
	 * Every part's groups, one after the other: a group several GPUs saw
	 * comes once from each, as partial states that the combine step above
	 * merges like those of parallel workers.
	 */
	for (k = 0; k < (r->use_gpu ? r->nparts : 1) && at < ng; k++)
	{
		WarpGpu    *drv = r->use_gpu ? r->parts[k].drv : NULL;
		warp_int64	n = drv ? warp_gpu_ngroups(drv) : warp_cpu_ngroups(r->cpu);

		for (g = 0; g < n; g++, at++)
		{
			int			c,
						a;

			for (c = 0; c < nk; c++)
			{
				bool		isnull;
				int64_t		v = drv ? warp_gpu_group_key(drv, g, c, &isnull)
					: warp_cpu_group_key(r->cpu, g, c, &isnull);

				((int64_t *) (out + off_keys))[at * nk + c] = v;
				out[off_nulls + at * nk + c] = isnull ? 1 : 0;
			}
			for (a = 0; a < na; a++)
			{
				const WarpAggState *s = drv ? warp_gpu_group_agg(drv, g, a)
					: warp_cpu_group_agg(r->cpu, g, a);

				memcpy(out + off_states + (at * na + a) * sizeof(WarpAggState), s,
					   sizeof(WarpAggState));
			}
		}
	}
	if (r->use_gpu)
	{
		for (k = 0; k < r->nparts; k++)
		{
			WarpCpuCounters c;
			warp_int64	bytes;
			double		copy_ms,
						kernel_ms,
						flush_copy_ms,
						flush_host_ms;

			warp_gpu_counters(r->parts[k].drv, &c);
			res->counters.rows_in += c.rows_in;
			res->counters.rows_filtered += c.rows_filtered;
			res->counters.rows_joined += c.rows_joined;
			warp_gpu_transfer_stats(r->parts[k].drv, &bytes, &copy_ms, &kernel_ms);
			res->bytes_h2d += bytes;
			res->h2d_ms += copy_ms;
			res->kernel_ms += kernel_ms;
			res->bytes_cached += warp_gpu_cached_bytes(r->parts[k].drv);
			/* the slowest lane's flushes */
			warp_gpu_flush_stats(r->parts[k].drv, &flush_copy_ms, &flush_host_ms);
			if (flush_copy_ms > res->phase_ms[GPUD_PHASE_FLUSH_COPY])
				res->phase_ms[GPUD_PHASE_FLUSH_COPY] = flush_copy_ms;
			if (flush_host_ms > res->phase_ms[GPUD_PHASE_FLUSH_HOST])
				res->phase_ms[GPUD_PHASE_FLUSH_HOST] = flush_host_ms;
		}
	}
	else if (r->cpu)
		warp_cpu_counters(r->cpu, &res->counters);
	memcpy(out, res, sizeof(GpudResult));
	*len = total;
	return out;
}

GpudJobOutcome
gpud_run_job(GpudDevice *dev, uint8_t *arena, uint64_t arena_size, int sock,
			 void **result, uint64_t *result_len, char *why, size_t whylen)
{
	Run		   *r;
	const char *bad;
	int			i,
				k;
	int			rc;
	double		t0 = now_ms();
	GpudJobOutcome outcome = GPUD_JOB_DONE;

	r = calloc(1, sizeof(Run));
	if (r == NULL)
	{
		snprintf(why, whylen, "out of memory");
		return GPUD_JOB_BAD;
	}
	r->dev = dev;
	r->hdr = (GpudArenaHeader *) arena;
	r->sock = sock;
	r->arena = arena;
	r->arena_size = arena_size;
	bad = gpud_job_open(arena, arena_size, WARP_ARENA_JOB_OFF, &r->job, &r->prog);
	if (bad)
	{
		snprintf(why, whylen, "%s", bad);
		free(r);
		return GPUD_JOB_BAD;
	}
	r->alloc.alloc = warp_memlist_alloc;
	r->alloc.ctx = &r->mem;
	r->heap_alloc.alloc = staging_alloc;
	r->heap_alloc.free = staging_free;
	r->heap_alloc.ctx = &r->no_staging;
	r->res.magic = GPUD_MAGIC;
	r->res.bad_file = -1;

	/* join tables: built here from the keys and payload ids sent */
	r->tables = warp_memlist_alloc(&r->mem, sizeof(WarpJoinTable *) * (r->prog.njoins + 1));
	for (i = 0; r->tables && i < r->prog.njoins; i++)
	{
		GpudTable  *t = (GpudTable *) (arena + r->job->off_tables) + i;

		r->tables[i] = warp_join_build(&r->alloc, (const warp_int64 *) (arena + t->off_keys),
									   (const warp_int32 *) (arena + t->off_payload),
									   t->nrows, t->npayloads);
		if (r->tables[i] == NULL)
			break;
	}
	if (r->tables == NULL || i < r->prog.njoins)
	{
		warp_memlist_free_all(&r->mem);
		free(r);
		snprintf(why, whylen, "out of memory building the join tables");
		return GPUD_JOB_BAD;
	}

	r->use_gpu = dev->kind == GPUD_DEVICE_GPU && dev->ngpus > 0;
	rc = r->use_gpu ? run_on_gpus(r) : 1;
	if (rc == -1)
	{
		/* run it again, all of it, on the CPU driver */
		r->use_gpu = false;
		memset(&r->res, 0, sizeof(r->res));
		r->res.magic = GPUD_MAGIC;
		r->res.bad_file = -1;
		snprintf(r->res.fallback, sizeof(r->res.fallback), "%s", r->fallback);
		if (warp_gpu_context_poisoned())
		{
			/* a sticky CUDA error: finish this job on the CPU, then the
			 * daemon exits and the supervisor starts a fresh one */
			fprintf(stderr, "pg_warp_gpud: CUDA context lost (%s); will restart\n", r->fallback);
		}
	}
	if (r->use_gpu)
	{
		int			ngpus = 0,
					last = -1;

		/* "NVIDIA H200", "NVIDIA H200, 2 lanes", "2 x NVIDIA H200, 4 lanes" */
		for (k = 0; k < r->nparts; k++)
			if (r->parts[k].lane->gpu != last)
			{
				last = r->parts[k].lane->gpu;
				ngpus++;
			}
		if (ngpus > 1)
			snprintf(r->res.device, sizeof(r->res.device), "%d x %.30s, %d lanes",
					 ngpus, dev->name, r->nparts);
		else if (r->nparts > 1)
			snprintf(r->res.device, sizeof(r->res.device), "%.40s, %d lanes",
					 dev->name, r->nparts);
		else
			snprintf(r->res.device, sizeof(r->res.device), "%s", dev->name);
	}
	else if (rc != -2)
	{
		Part	   *p = &r->cpu_part;

		snprintf(r->res.device, sizeof(r->res.device), "CPU");
		init_part(r, p, -1);
		r->cpu = warp_cpu_create(&r->prog, r->tables, &r->alloc);
		if (r->cpu == NULL)
			p->res.status = WARP_ERR_OUT_OF_MEMORY;
		rc = p->res.status == WARP_OK ? run_batches(p) : 0;
		take_part_error(&r->res, p);
		add_part_counts(&r->res, p);
	}
	if (rc == -2)
		outcome = GPUD_JOB_CANCELLED;
	else
	{
		r->res.ran_on = r->use_gpu ? GPUD_DEVICE_GPU : GPUD_DEVICE_CPU;
		r->res.nparts = r->use_gpu ? r->nparts : 1;
		r->res.total_ms = now_ms() - t0;
		*result = build_result(r, result_len);
		if (*result == NULL)
		{
			snprintf(why, whylen, "out of memory building the result");
			outcome = GPUD_JOB_BAD;
		}
	}
	for (k = 0; k < r->nparts; k++)
		part_release(&r->parts[k]);
	warp_memlist_free_all(&r->mem);
	free(r);
	return outcome;
}
