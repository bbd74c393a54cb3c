/*-------------------------------------------------------------------------
 *
 * gpud_job_internal.h
 *	  What the two files of a job's run share (gpud_job.h is the
 *	  interface): a part (one lane's share of a job) and the run of the
 *	  whole job, the batch buffers' staging allocator, the cancel check,
 *	  and run_batches.  gpud_job.c sets up the parts, runs them and builds
 *	  the result; gpud_job_batches.c reads a part's batches and runs its
 *	  driver over them.
 *
 * Pure C; no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUD_JOB_INTERNAL_H
#define GPUD_JOB_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpud_job.h"
#include "warp_cpu.h"
#include "warp_gpu.h"
#include "warp_memlist.h"
#include "warp_row_check.h"

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

/* bump-allocate from the staging memory while it lasts, malloc beyond */
extern void *staging_alloc(void *ctx, size_t size);
extern void staging_free(void *ctx, void *p);

/* has the backend cancelled, or gone away? (cancel word, socket) */
extern bool should_stop(GpudArenaHeader *h, int sock);

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
	int			resume_at;		/* row mode: listed batches (job order)
								 * whose rows went already; the CPU driver
								 * resumes after them */
	char		fallback[192];
	GpudResult	res;			/* header being filled */
} Run;

/* read part p's batches and run its driver over them (gpud_job_batches.c) */
extern int	run_batches(Part *p);

/* rows a driver holds in row mode: nrows of them, each key as key() gives */
typedef struct GpudRowSource
{
	const void *drv;
	warp_int64	nrows;
	warp_int64	(*key) (const void *drv, warp_int64 row, int k, bool *isnull);
} GpudRowSource;

/*
 * Row mode: stream src's rows to the backend in chunks (gpud_job_rows.c),
 * each read before the next is written.  0, or -2 when the backend
 * cancelled or went away.
 */
extern int	gpud_rows_send(Run *r, const GpudRowSource *src);

/* the CPU driver's rows, and the GPU driver's taken rows, as a
 * GpudRowSource */
extern void gpud_rows_of_cpu(const WarpCpu *cpu, GpudRowSource *src);
extern void gpud_rows_of_gpu(const WarpGpu *gpu, GpudRowSource *src);

#endif							/* GPUD_JOB_INTERNAL_H */
