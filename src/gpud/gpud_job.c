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
 * This file sets up a job's parts, runs them and builds the result;
 * gpud_job_batches.c reads a part's batches and runs its driver over them
 * (gpud_job_internal.h holds what the two share).
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

#include "gpud_clock.h"
#include "gpud_files.h"
#include "gpud_job_internal.h"
#include "gpud_tcache.h"
#include "gpud_pinpool.h"
#include "gpud_turns.h"

/* (engine allocations of a job: a WarpMemList, warp_memlist.h) */

/* ------------------------------------------------------------ running */

/* first guess of one batch slot's staging bytes; more is taken if free */
#define STAGE_GUESS ((warp_uint64) 64 << 20)

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
	double		t = gpud_now_ms();

	gpud_turn_enter(&p->lane->turns);
	ok = create_gpu_driver(p);
	gpud_turn_leave(&p->lane->turns);
	p->phase_ms[GPUD_PHASE_CREATE] = gpud_now_ms() - t;
	t = gpud_now_ms();
	p->rc = ok ? run_batches(p) : -1;
	p->phase_ms[GPUD_PHASE_BATCHES] = gpud_now_ms() - t;
	t = gpud_now_ms();
	if (p->rc == 0 && !part_has_error(p))
	{
		gpud_turn_enter(&p->lane->turns);
		if (warp_gpu_finish(p->drv, p->fallback, sizeof(p->fallback)) != 0)
			p->rc = -1;
		gpud_turn_leave(&p->lane->turns);
	}
	p->phase_ms[GPUD_PHASE_FINISH] = gpud_now_ms() - t;
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
	res->bytes_registered += p->res.bytes_registered;
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
	else if (r->prog.emit_rows)
	{
		/* row mode: one part, which streams its rows in the listed order */
		int			lane = r->lane_of[0];

		memset(used, 0, sizeof(used));
		memset(r->lane_of, lane, total);
		used[lane] = true;
	}
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
	t = gpud_now_ms();
	for (k = 0; k < r->nparts && rc == 0; k++)
	{
		rc = reserve_device_memory(&r->parts[k]);
		if (rc == -1)
			snprintf(r->fallback, sizeof(r->fallback), "%s", r->parts[k].fallback);
	}
	r->res.phase_ms[GPUD_PHASE_RESERVE] = gpud_now_ms() - t;
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

	if (r->prog.emit_rows)
		ng = 0;					/* the rows went before (gpud_job_rows.c) */
	else if (ok && r->use_gpu)
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
	double		t0 = gpud_now_ms();
	double		setup_ms = 0;
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

	setup_ms = gpud_now_ms() - t0;
	/* a cached heap table's replica is in host memory: the CPU driver */
	r->use_gpu = dev->kind == GPUD_DEVICE_GPU && dev->ngpus > 0 && !r->job->cached;
	rc = 1;
	if (r->use_gpu)
	{
		/* the engine's one answer to "can the GPU driver run this exactly"
		 * (warp_row_check.h), asked before any lane or device memory is
		 * taken for the job */
		const char *bad = warp_row_check(&r->prog, r->tables);

		if (bad != NULL)
		{
			snprintf(r->fallback, sizeof(r->fallback), "%s", bad);
			rc = -1;
		}
		else
			rc = run_on_gpus(r);
	}
	if (rc == -1)
	{
		/* run it again, all of it, on the CPU driver (in row mode: from the
		 * first batch whose rows did not go yet) */
		int64_t		rows_sent = r->res.rows_sent,
					chunks_sent = r->res.chunks_sent;

		r->use_gpu = false;
		memset(&r->res, 0, sizeof(r->res));
		r->res.rows_sent = rows_sent;
		r->res.chunks_sent = chunks_sent;
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
	if (r->use_gpu && rc == 0 && r->prog.emit_rows && r->prog.topn_limit > 0 &&
		!part_has_error(&r->parts[0]))
	{
		/* row mode under a Top-N: the candidates, once, at the end */
		GpudRowSource src;

		gpud_rows_of_gpu(r->parts[0].drv, &src);
		rc = gpud_rows_send(r, &src);
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
		if (p->res.status != WARP_OK)
			rc = 0;
		else if (r->job->cached)
			rc = gpud_tcache_run(p, why, whylen);
		else
			rc = run_batches(p);
		if (rc == 0 && r->prog.emit_rows && r->prog.topn_limit > 0 && !part_has_error(p))
		{
			/* row mode under a Top-N: the candidates, once, at the end */
			GpudRowSource src;

			gpud_rows_of_cpu(r->cpu, &src);
			rc = gpud_rows_send(r, &src);
		}
		take_part_error(&r->res, p);
		add_part_counts(&r->res, p);
	}
	if (rc == -2)
		outcome = GPUD_JOB_CANCELLED;
	else if (rc == -3)
		outcome = GPUD_JOB_BAD;	/* no such replica: why */
	else
	{
		r->res.ran_on = r->use_gpu ? GPUD_DEVICE_GPU : GPUD_DEVICE_CPU;
		r->res.nparts = r->use_gpu ? r->nparts : 1;
		r->res.total_ms = gpud_now_ms() - t0;
		r->res.setup_ms = setup_ms;
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

