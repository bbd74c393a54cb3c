/*-------------------------------------------------------------------------
 *
 * gpud_job.c
 *	  Running one job inside pg_warp_gpud (see gpud_job.h).
 *
 * The daemon reads the fact table's Arrow files itself, batch by batch in
 * the order the backend listed them, and runs the program on the GPU
 * driver.  For the GPU a file is used in place through its registered
 * window (gpud_files.h), and the driver runs batch i while this thread
 * reads batch i+1, so a batch's memory (what arrow_load_column allocated:
 * metadata, realigned or decompressed buffers) is kept until the next
 * batch has been queued.  Without a window the file is pread into the
 * daemon's pinned staging memory, which is shared by every job and only
 * used inside a GPU turn, so such a batch is waited for before its turn
 * ends.  Whenever
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

#include "gpud_files.h"
#include "gpud_job.h"
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

	if (rc == 0)
		*cs->bytes += (int64_t) len;
	*cs->ms += now_ms() - t0;
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
	Staging		staging;
	ArrowAllocator batch_alloc;	/* staging memory while it lasts */
	Staging		no_staging;
	ArrowAllocator heap_alloc;	/* malloc only */
	/* the driver */
	bool		use_gpu;
	WarpCpu    *cpu;
	WarpGpu    *gpu;
	char		fallback[192];
	GpudResult res;				/* header being filled */
	bool		cancelled;
	GpudAccount acct;			/* the GPU driver's device memory */
} Run;

/* first guess of one batch slot's staging bytes; more is taken if free */
#define STAGE_GUESS ((warp_uint64) 64 << 20)

/*
 * Read the listed batches of every file and run the driver over them.
 * Returns 0 when done (res says whether with an error), -1 when the GPU
 * driver gave up (fallback says why), -2 when cancelled.
 */
static int
run_batches(Run *r)
{
	ArrowArray *cols = calloc(r->prog.ncols > 0 ? r->prog.ncols : 1, sizeof(ArrowArray));
	int			fi;
	int			rc = 0;

	if (cols == NULL)
	{
		r->res.status = WARP_ERR_OUT_OF_MEMORY;
		return 0;
	}
	for (fi = 0; fi < r->job->nfiles && rc == 0; fi++)
	{
		GpudFile   *f = (GpudFile *) (r->arena + r->job->off_files) + fi;
		const char *path = (const char *) r->arena + f->off_path;
		const int32_t *batches = (const int32_t *) (r->arena + f->off_batches);
		const int32_t *fields = (const int32_t *) (r->arena + f->off_fields);
		ArrowError *err = &r->res.arrow_error;
		ArrowSource src;
		ArrowOpenOptions opts = {0};
		ArrowFile	file;
		CountingSource cs;
		struct stat st;
		int			fd;
		int			i;
		GpudWindow *win = NULL;
		const uint8_t *wbase = NULL;
		uint64_t	readable;
		ArrowArena	prev;		/* the batch the GPU may still read */
		WarpGpuFile gfile;
		bool		have_prev = false;

		if (f->nbatches == 0)
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
		{
			arrow_error(err, ARROW_ERR_IO, -1, "could not open Arrow file \"%s\": %s",
						path, strerror(errno));
			err->errno_saved = errno;
			r->res.has_arrow_error = 1;
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
			r->res.has_arrow_error = 1;
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
		if (r->use_gpu)
			win = gpud_window_acquire(fd, &st, readable, &wbase);
		if (win)
		{
			arrow_source_mem(&src, wbase, readable, path);
			r->res.windows++;
			/* the column cache knows this file by its identity */
			memset(&gfile, 0, sizeof(gfile));
			gfile.base = wbase;
			gfile.len = readable;
			gfile.id.dev = (uint64_t) st.st_dev;
			gfile.id.ino = (uint64_t) st.st_ino;
			gfile.id.size = (uint64_t) st.st_size;
			gfile.id.mtime_sec = (int64_t) st.st_mtim.tv_sec;
			gfile.id.mtime_nsec = (int64_t) st.st_mtim.tv_nsec;
		}
		else
		{
			if (arrow_source_fd(&src, fd, path, f->limit, err) != 0)
			{
				r->res.has_arrow_error = 1;
				close(fd);
				break;
			}
			cs.inner_read = src.read;
			cs.inner_ctx = src.ctx;
			cs.bytes = &r->res.bytes_read;
			cs.ms = &r->res.read_ms;
			src.read = counting_read;
			src.ctx = &cs;
		}
		opts.recover_tail = f->recover_tail != 0;
		if (arrow_open(&file, &src, &opts, err) != 0)
		{
			r->res.has_arrow_error = 1;
			gpud_window_release(win);
			close(fd);
			break;
		}
		for (i = 0; i < f->nbatches; i++)
		{
			int			b = batches[i];
			ArrowArena	arena;
			ArrowBatchMeta meta;
			int			c;
			bool		failed = false;
			bool		turn = r->use_gpu;

			if (should_stop(r->hdr, r->sock))
			{
				rc = -2;
				break;
			}
			if (b < 0 || b >= file.n_batches)
			{
				arrow_error(err, ARROW_ERR_CORRUPT, -1,
							"Arrow file \"%s\" has no record batch %d", path, b);
				r->res.has_arrow_error = 1;
				rc = 1;
				break;
			}
			/* a GPU job holds the device for one batch at a time */
			if (turn)
				gpud_turn_enter(&r->dev->turns);
			r->staging.used = 0;
			arrow_arena_init(&arena, win ? &r->heap_alloc : &r->batch_alloc);
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
				r->res.has_arrow_error = 1;
				arrow_arena_free_all(&arena);
				if (turn)
					gpud_turn_leave(&r->dev->turns);
				rc = 1;
				break;
			}
			r->res.batches++;
			if (r->use_gpu)
			{
				if (warp_gpu_run_batch(r->gpu, cols, meta.length, win && r->job->use_cache ? &gfile : NULL,
									   r->fallback, sizeof(r->fallback)) != 0)
					rc = -1;
				else if (win == NULL &&
						 warp_gpu_wait(r->gpu, r->fallback, sizeof(r->fallback)) != 0)
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
				WarpLoadStatus ls = WARP_LOAD_OK;
				int			bad_col = 0;
				warp_int64	bad_row = 0;
				WarpStatus	st2;

				st2 = warp_cpu_run_batch(r->cpu, cols, meta.length, NULL, &ls, &bad_col, &bad_row);
				if (st2 != WARP_OK)
				{
					r->res.status = st2;
					rc = 1;
				}
				else if (ls != WARP_LOAD_OK)
				{
					r->res.load_status = ls;
					r->res.bad_col = bad_col;
					r->res.bad_row = bad_row;
					r->res.bad_file = fi;
					rc = 1;
				}
				arrow_arena_free_all(&arena);
			}
			if (turn)
				gpud_turn_leave(&r->dev->turns);
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
		if (r->use_gpu && r->gpu &&
			warp_gpu_wait(r->gpu, r->fallback, sizeof(r->fallback)) != 0 && rc == 0)
			rc = -1;
		if (have_prev)
			arrow_arena_free_all(&prev);
		have_prev = false;
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
 * Reserve the GPU driver's device memory, waiting behind running jobs
 * (outside any GPU turn: they need turns to finish and free it).  0 when
 * reserved, -1 (fallback set) when the job must run on the CPU, -2 when
 * the query was cancelled while waiting.
 */
static int
reserve_device_memory(Run *r)
{
	warp_uint64 need = warp_gpu_estimate(&r->prog, r->tables, STAGE_GUESS);

	r->acct.budget = &r->dev->budget;
	r->acct.quota = r->job->mem_quota;
	if (need > r->job->mem_quota)
	{
		snprintf(r->fallback, sizeof(r->fallback),
				 "needs about %llu MB of GPU memory, more than pg_warp.gpu_memory_per_query (%llu MB)",
				 (unsigned long long) (need >> 20), (unsigned long long) (r->job->mem_quota >> 20));
		return -1;
	}
	if (gpud_budget_reserve(&r->dev->budget, need, stop_waiting, r) != 0)
	{
		if (should_stop(r->hdr, r->sock))
			return -2;
		snprintf(r->fallback, sizeof(r->fallback),
				 "needs about %llu MB of GPU memory, more than the device has for queries (%llu MB)",
				 (unsigned long long) (need >> 20),
				 (unsigned long long) (r->dev->budget.total >> 20));
		return -1;
	}
	r->acct.reserved = need;
	return 0;
}

/* Build the driver; false (with fallback set) if the GPU driver refuses. */
static bool
create_driver(Run *r)
{
	if (r->use_gpu)
	{
		WarpGpuMem	mem;

		if (r->job->fault == GPUD_FAULT_DEVICE_OOM)
		{
			snprintf(r->fallback, sizeof(r->fallback),
					 "device out of memory (injected by pg_warp.gpud_fault)");
			return false;
		}
		mem.grow = gpud_account_grow;
		mem.shrink = gpud_account_shrink;
		mem.ctx = &r->acct;
		r->gpu = warp_gpu_create(0, &r->prog, r->tables, &mem, r->fallback, sizeof(r->fallback));
		return r->gpu != NULL;
	}
	r->cpu = warp_cpu_create(&r->prog, r->tables, &r->alloc);
	if (r->cpu == NULL)
		r->res.status = WARP_ERR_OUT_OF_MEMORY;
	return true;
}

/* Serialize the groups after the header. */
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
	warp_int64	g;

	if (res->status == WARP_OK && res->load_status == WARP_LOAD_OK && !res->has_arrow_error)
		ng = r->use_gpu ? warp_gpu_ngroups(r->gpu) : warp_cpu_ngroups(r->cpu);
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
	for (g = 0; g < ng; g++)
	{
		int			k,
					a;

		for (k = 0; k < nk; k++)
		{
			bool		isnull;
			int64_t		v = r->use_gpu ? warp_gpu_group_key(r->gpu, g, k, &isnull)
				: warp_cpu_group_key(r->cpu, g, k, &isnull);

			((int64_t *) (out + off_keys))[g * nk + k] = v;
			out[off_nulls + g * nk + k] = isnull ? 1 : 0;
		}
		for (a = 0; a < na; a++)
		{
			const WarpAggState *s = r->use_gpu ? warp_gpu_group_agg(r->gpu, g, a)
				: warp_cpu_group_agg(r->cpu, g, a);

			memcpy(out + off_states + (g * na + a) * sizeof(WarpAggState), s,
				   sizeof(WarpAggState));
		}
	}
	if (r->use_gpu)
	{
		warp_gpu_counters(r->gpu, &res->counters);
		warp_gpu_transfer_stats(r->gpu, &res->bytes_h2d, &res->h2d_ms, &res->kernel_ms);
		res->bytes_cached = warp_gpu_cached_bytes(r->gpu);
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
	Run			r;
	const char *bad;
	int			i;
	int			rc;
	double		t0 = now_ms();

	memset(&r, 0, sizeof(r));
	r.dev = dev;
	r.hdr = (GpudArenaHeader *) arena;
	r.sock = sock;
	r.arena = arena;
	r.arena_size = arena_size;
	bad = gpud_job_open(arena, arena_size, WARP_ARENA_JOB_OFF, &r.job, &r.prog);
	if (bad)
	{
		snprintf(why, whylen, "%s", bad);
		return GPUD_JOB_BAD;
	}
	r.alloc.alloc = warp_memlist_alloc;
	r.alloc.ctx = &r.mem;
	r.batch_alloc.alloc = staging_alloc;
	r.batch_alloc.free = staging_free;
	r.batch_alloc.ctx = &r.staging;
	r.heap_alloc.alloc = staging_alloc;
	r.heap_alloc.free = staging_free;
	r.heap_alloc.ctx = &r.no_staging;
	r.res.magic = GPUD_MAGIC;
	r.res.bad_file = -1;

	/* join tables: built here from the keys and payload ids sent */
	r.tables = warp_memlist_alloc(&r.mem, sizeof(WarpJoinTable *) * (r.prog.njoins + 1));
	for (i = 0; r.tables && i < r.prog.njoins; i++)
	{
		GpudTable  *t = (GpudTable *) (arena + r.job->off_tables) + i;

		r.tables[i] = warp_join_build(&r.alloc, (const warp_int64 *) (arena + t->off_keys),
									  (const warp_int32 *) (arena + t->off_payload),
									  t->nrows, t->npayloads);
		if (r.tables[i] == NULL)
			break;
	}
	if (r.tables == NULL || i < r.prog.njoins)
	{
		warp_memlist_free_all(&r.mem);
		snprintf(why, whylen, "out of memory building the join tables");
		return GPUD_JOB_BAD;
	}

	r.use_gpu = dev->kind == GPUD_DEVICE_GPU;
	if (r.use_gpu)
	{
		bool		ok;

		r.staging.base = dev->staging;
		r.staging.size = dev->staging_size;
		snprintf(r.res.device, sizeof(r.res.device), "%s", dev->name);
		rc = reserve_device_memory(&r);
		if (rc == 0)
		{
			gpud_turn_enter(&dev->turns);
			ok = create_driver(&r);
			gpud_turn_leave(&dev->turns);
			rc = ok ? run_batches(&r) : -1;
		}
		if (rc == 0 && !r.res.has_arrow_error)
		{
			gpud_turn_enter(&dev->turns);
			if (warp_gpu_finish(r.gpu, r.fallback, sizeof(r.fallback)) != 0)
				rc = -1;
			gpud_turn_leave(&dev->turns);
		}
		if (rc == -1)
		{
			/* run it again, all of it, on the CPU driver */
			if (r.gpu)
			{
				gpud_turn_enter(&dev->turns);
				warp_gpu_destroy(r.gpu);
				gpud_turn_leave(&dev->turns);
			}
			r.gpu = NULL;
			r.use_gpu = false;
			r.staging.base = NULL;
			r.staging.size = 0;
			memset(&r.res.counters, 0, sizeof(r.res.counters));
			r.res.status = WARP_OK;
			r.res.batches = 0;
			if (r.acct.over_quota)
				snprintf(r.fallback, sizeof(r.fallback),
						 "needed more GPU memory than pg_warp.gpu_memory_per_query (%llu MB)",
						 (unsigned long long) (r.job->mem_quota >> 20));
			else if (r.acct.reserved > 0 && strncmp(r.fallback, "device memory:", 14) == 0)
				snprintf(r.fallback, sizeof(r.fallback),
						 "needed more GPU memory than other queries left free");
			gpud_account_close(&r.acct);
			snprintf(r.res.fallback, sizeof(r.res.fallback), "%s", r.fallback);
			if (warp_gpu_context_poisoned())
			{
				/* a sticky CUDA error: finish this job on the CPU, then the
				 * daemon exits and the supervisor starts a fresh one */
				fprintf(stderr, "pg_warp_gpud: CUDA context lost (%s); will restart\n", r.fallback);
			}
		}
	}
	else
		rc = 1;					/* not tried */
	if (!r.use_gpu)
	{
		snprintf(r.res.device, sizeof(r.res.device), "CPU");
		create_driver(&r);
		rc = r.res.status == WARP_OK ? run_batches(&r) : 0;
	}
	if (rc == -2)
	{
		if (r.gpu)
		{
			gpud_turn_enter(&dev->turns);
			warp_gpu_destroy(r.gpu);
			gpud_turn_leave(&dev->turns);
		}
		gpud_account_close(&r.acct);
		warp_memlist_free_all(&r.mem);
		return GPUD_JOB_CANCELLED;
	}
	r.res.ran_on = r.use_gpu ? GPUD_DEVICE_GPU : GPUD_DEVICE_CPU;
	r.res.total_ms = now_ms() - t0;
	*result = build_result(&r, result_len);
	if (r.gpu)
	{
		gpud_turn_enter(&dev->turns);
		warp_gpu_destroy(r.gpu);
		gpud_turn_leave(&dev->turns);
	}
	gpud_account_close(&r.acct);
	warp_memlist_free_all(&r.mem);
	if (*result == NULL)
	{
		snprintf(why, whylen, "out of memory building the result");
		return GPUD_JOB_BAD;
	}
	return GPUD_JOB_DONE;
}
