/*-------------------------------------------------------------------------
 *
 * gpud_lanes.h
 *	  Which GPU and which lane run each batch of a pg_warp_gpud job.
 *
 * A batch's GPU is fixed by the file's inode and the batch number, so the
 * batch runs on the same GPU in every query and that GPU's column cache
 * holds it.  A GPU's share of a job is dealt round robin over as many of
 * its lanes as it has min_batches_per_lane batches for; a share smaller
 * than that takes one lane, the next in turn for that GPU, so concurrent
 * small jobs spread over the lanes.
 *
 * Header-only so the unit test (test/unit/test_gpud_lanes.c) checks the
 * very code the daemon runs.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUD_LANES_H
#define GPUD_LANES_H

#include <stdbool.h>
#include <stdint.h>

#define GPUD_MAX_GPUS 16
#define GPUD_MAX_LANES 64

/* the GPU (of ngpus) that runs batch `batch` of the file with inode ino */
static inline int
gpud_batch_gpu(uint64_t ino, int batch, int ngpus)
{
	return ngpus <= 1 ? 0 : (int) ((ino + (uint64_t) batch) % (uint64_t) ngpus);
}

/*
 * Deal n batches to lanes.  gpu_of[i] is batch i's GPU (< ngpus); on return
 * lane[i] is its lane, GPU g's lanes being g * lanes_per_gpu + 0 ..
 * lanes_per_gpu - 1, and used[l] is true for every lane that got a batch
 * (used[] has ngpus * lanes_per_gpu entries, cleared by the caller).
 * next_lane[g] is GPU g's round-robin counter, shared by concurrent jobs.
 */
static inline void
gpud_deal_lanes(int ngpus, int lanes_per_gpu, int min_batches_per_lane,
				uint32_t *next_lane, int n, const uint8_t *gpu_of,
				uint8_t *lane, bool *used)
{
	int			per_gpu[GPUD_MAX_GPUS] = {0};
	int			nlanes[GPUD_MAX_GPUS];
	int			first[GPUD_MAX_GPUS];
	int			dealt[GPUD_MAX_GPUS] = {0};
	int			g,
				i;

	for (i = 0; i < n; i++)
		per_gpu[gpu_of[i]]++;
	for (g = 0; g < ngpus; g++)
	{
		nlanes[g] = per_gpu[g] / (min_batches_per_lane > 0 ? min_batches_per_lane : 1);
		if (nlanes[g] < 1)
			nlanes[g] = 1;
		first[g] = 0;
		if (nlanes[g] >= lanes_per_gpu)
			nlanes[g] = lanes_per_gpu;
		else if (per_gpu[g] > 0)
			first[g] = (int) (__atomic_fetch_add(&next_lane[g], 1, __ATOMIC_RELAXED) %
							  (uint32_t) lanes_per_gpu);
	}
	for (i = 0; i < n; i++)
	{
		int			l;

		g = gpu_of[i];
		l = g * lanes_per_gpu + (first[g] + dealt[g]++ % nlanes[g]) % lanes_per_gpu;
		lane[i] = (uint8_t) l;
		used[l] = true;
	}
}

#endif							/* GPUD_LANES_H */
