/*-------------------------------------------------------------------------
 *
 * gpud_job.h
 *	  Running one job inside pg_warp_gpud: open the fact table's Arrow
 *	  files, read the listed batches, run the program on the GPU driver (or
 *	  the CPU driver), and produce the result.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUD_JOB_H
#define GPUD_JOB_H

#include <pthread.h>
#include <stdbool.h>

#include "gpud_budget.h"
#include "gpud_lanes.h"
#include "gpud_turns.h"
#include "gpud_wire.h"

/*
 * A lane of a GPU: its own turns, pinned staging memory and share of the
 * GPU's memory budget, so the parts of jobs on different lanes of one GPU
 * run at the same time (their kernels and copies overlap on the device).
 */
typedef struct GpudLane
{
	int			cuda_index;		/* its GPU's CUDA device number */
	int			gpu;			/* its GPU's ordinal in the daemon, 0.. */
	struct GpudColCache *cache; /* its GPU's column cache, or NULL */
	GpudTurns	turns;			/* one batch at a time on this lane */
	GpudBudget	budget;			/* memory its parts may hold together */
	void	   *staging;		/* pinned host memory for batch buffers */
	size_t		staging_size;
	/* pinned memory its parts decompress batches into ahead of the GPU
	 * (gpud_pinpool.h), made at start; NULL: malloc'd memory instead */
	struct GpudPinPool *ahead;
} GpudLane;

/*
 * What the daemon runs jobs on; set up once at start.  Which GPU and lane
 * run a job's batches: gpud_lanes.h.
 */
typedef struct GpudDevice
{
	int			kind;			/* GpudDeviceKind */
	int			ngpus;			/* usable GPUs */
	int			lanes_per_gpu;
	int			min_batches_per_lane;	/* a GPU's share of a job gets one
										 * more lane per this many batches */
	char		name[64];		/* of the first GPU */
	GpudLane	lanes[GPUD_MAX_LANES];	/* GPU g's are g * lanes_per_gpu + i */
	uint32_t	next_lane[GPUD_MAX_GPUS];	/* round robin of small jobs */
} GpudDevice;

/*
 * Pin GPUD_PREFETCH_BYTES for lane->ahead (left NULL when that fails), at
 * the daemon's start, before any job.
 */
extern void gpud_lane_pin_ahead(GpudLane *lane);

/* Outcome of gpud_run_job. */
typedef enum GpudJobOutcome
{
	GPUD_JOB_DONE,				/* result built (it may carry a SQL error) */
	GPUD_JOB_CANCELLED,			/* the backend cancelled or went away */
	GPUD_JOB_BAD				/* the job could not be read: why */
} GpudJobOutcome;

/*
 * Run the job at WARP_ARENA_JOB_OFF of the arena.  sock is watched for the
 * backend going away.  On GPUD_JOB_DONE *result (malloc'd, *result_len
 * bytes, offsets relative to the result's start) is set.
 */
extern GpudJobOutcome gpud_run_job(GpudDevice *dev, uint8_t *arena, uint64_t arena_size,
								   int sock, void **result, uint64_t *result_len,
								   char *why, size_t whylen);

#endif							/* GPUD_JOB_H */
