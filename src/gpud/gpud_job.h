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

#include "gpud_budget.h"
#include "gpud_turns.h"
#include "gpud_wire.h"

#define GPUD_MAX_GPUS 16

/* One GPU the daemon drives. */
typedef struct GpudGpu
{
	int			cuda_index;		/* its CUDA device number */
	GpudTurns	turns;			/* one batch at a time on this GPU */
	GpudBudget	budget;			/* its memory jobs may hold together */
	void	   *staging;		/* pinned host memory for batch buffers */
	size_t		staging_size;
} GpudGpu;

/*
 * What the daemon runs jobs on; set up once at start.  With several GPUs a
 * job's batches are spread over them by a fixed rule (gpud_batch_gpu), so
 * a batch always runs on the GPU whose column cache holds it.
 */
typedef struct GpudDevice
{
	int			kind;			/* GpudDeviceKind */
	int			ngpus;			/* usable GPUs, gpus[0 .. ngpus-1] */
	char		name[64];		/* of the first */
	GpudGpu		gpus[GPUD_MAX_GPUS];
} GpudDevice;

/* the GPU (of ngpus) that runs batch `batch` of the file with inode ino */
static inline int
gpud_batch_gpu(uint64_t ino, int batch, int ngpus)
{
	return ngpus <= 1 ? 0 : (int) ((ino + (uint64_t) batch) % (uint64_t) ngpus);
}

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
