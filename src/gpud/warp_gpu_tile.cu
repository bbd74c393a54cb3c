/*-------------------------------------------------------------------------
 *
 * warp_gpu_tile.cu
 *	  The tile kernel: programs of the tile shape (src/engine/warp_tile.h)
 *	  without the row evaluator's memo, queues and barriers.  A block
 *	  takes a tile of TILE_ITEMS rows per thread (row base + i * threads +
 *	  t in thread t, so every load of a step is coalesced), runs each step
 *	  over all of its rows -- the prefilter, the join keys and probes,
 *	  then group keys and aggregate arguments -- with every value in
 *	  registers, and aggregates into shared memory when the group table
 *	  is direct and small: one atomic per group and aggregate per block
 *	  reaches device memory instead of one per row.  Larger or hash group
 *	  tables take the rows' updates directly, as warp_gpu_rows does.
 *
 *	  The launch shape (tile_launch_shape) is chosen once per job;
 *	  warp_gpu_batch.cu launches the tile kernel for a job whose program
 *	  has the shape and whose join tables have unique keys, and
 *	  warp_gpu_rows otherwise.  The tile kernel is off unless the
 *	  daemon's environment has PG_WARP_GPU_TILE=1: on an H100 it gives
 *	  the CPU driver's answers but is not faster than warp_gpu_rows
 *	  (bench/results/2026-12-07-h100-tile-kernel.md: both are bound by
 *	  the per-row instruction count, not by memory).
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "warp_gpu_internal.h"
#include "warp_gpu_count.h"

#ifndef TILE_ITEMS
#define TILE_ITEMS 4
#endif
#define TILE_THREADS 256
/* shared memory for a block's pre-aggregates (more: straight to the table) */
#define TILE_SMEM_MAX (32 * 1024)

/* the first failing row's status, once (as warp_gpu_rows records it) */
__device__ static inline void
tile_fail(DevResult *res, int st, long long row)
{
	if (atomicCAS(&res->status, 0, st) == 0)
		res->bad_row = row;
}

__global__ void __launch_bounds__(TILE_THREADS)
warp_gpu_tile(const __grid_constant__ WarpRowEnv env, const __grid_constant__ WarpTilePlan tp,
			  const __grid_constant__ WarpRowGroups grp, long long r0, long long r1,
			  DevResult *res, int shared_slots)
{
	extern __shared__ warp_int64 tile_smem[];
	const WarpAggSpec *aggs = env.p->aggs;
	const int	nt = (int) blockDim.x;
	const int	t = (int) threadIdx.x;
	const int	naggs = tp.naggs;
	WarpAggState *acc = (WarpAggState *) tile_smem;
	warp_uint32 *used = (warp_uint32 *) (acc + (size_t) shared_slots * naggs);
	unsigned long long nfiltered = 0,
				njoined = 0;
	long long	base;
	int			s,
				a;

	for (s = t; s < shared_slots; s += nt)
	{
		used[s] = 0;
		for (a = 0; a < naggs; a++)
			warp_row_agg_init(&aggs[a], &acc[(size_t) s * naggs + a]);
	}

	for (base = r0 + (long long) blockIdx.x * nt * TILE_ITEMS; base < r1;
		 base += (long long) gridDim.x * nt * TILE_ITEMS)
	{
		warp_int32	first[TILE_ITEMS][WARP_TILE_MAX_JOINS];
		bool		alive[TILE_ITEMS];
		int			i;

		/* a failed row anywhere: the batch goes to the CPU driver anyway
		 * (one barrier per tile, and every thread leaves together) */
		if (__syncthreads_or(t == 0 && *(volatile int *) &res->status != 0))
			break;

		/* quals, join keys and probes of every row of the tile */
#pragma unroll
		for (i = 0; i < TILE_ITEMS; i++)
		{
			long long	row = base + (long long) i * nt + t;
			bool		passed = false;
			int			st;

			alive[i] = false;
			if (row >= r1)
				continue;
			st = warp_tile_probe(&env, &tp, row, &alive[i], &passed, first[i]);
			nfiltered += passed;
			if (st != WARP_OK)
			{
				tile_fail(res, st, row);
				alive[i] = false;
			}
		}

		/* the joined rows' groups and aggregates */
		for (i = 0; i < TILE_ITEMS; i++)
		{
			long long	row = base + (long long) i * nt + t;
			warp_int64	kv[WARP_TILE_MAX_KEYS];
			warp_uint8	kn[WARP_TILE_MAX_KEYS];
			warp_int64	iv[WARP_TILE_MAX_AGGS];
			warp_uint8	ok[WARP_TILE_MAX_AGGS];
			warp_int64	code;
			int			st;

			if (!alive[i])
				continue;
			st = warp_tile_emit_values(&env, &tp, &grp, row, first[i], kv, kn, &code, iv, ok);
			if (st != WARP_OK)
			{
				tile_fail(res, st, row);
				continue;
			}
			njoined++;
			if (shared_slots > 0)
			{
				used[code] = 1;
				st = warp_tile_update(aggs, naggs, &acc[(size_t) code * naggs], iv, ok);
			}
			else
				st = warp_tile_aggregate(aggs, naggs, &grp, kv, kn, code, iv, ok);
			if (st != WARP_OK)
				tile_fail(res, st, row);
		}
	}

	/* the block's groups into the table: one update per group and aggregate */
	if (shared_slots > 0)
	{
		__syncthreads();
		for (s = t; s < shared_slots; s += nt)
		{
			warp_int64	kv[WARP_TILE_MAX_KEYS];
			warp_uint8	kn[WARP_TILE_MAX_KEYS];
			warp_int64	slot;

			if (!used[s])
				continue;
			warp_tile_direct_keys(&grp, s, kv, kn);
			slot = warp_row_group(&grp, kv, kn, s);
			for (a = 0; a < naggs; a++)
				warp_row_agg_absorb(&aggs[a], &grp.aggs[slot * naggs + a],
									&acc[(size_t) s * naggs + a]);
		}
	}
	warp_gpu_count_add(&res->rows_filtered, nfiltered);
	warp_gpu_count_add(&res->rows_joined, njoined);
}

/*
 * Whether this job runs the tile kernel, and its launch shape: the program
 * has the tile shape, every join table has unique keys (one joined row per
 * fact row), and the environment turns it on.  A direct group
 * table small enough gets the shared-memory pre-aggregation.
 */
bool
tile_launch_shape(WarpGpu *g, const WarpProgram *prog, WarpJoinTable *const *tables)
{
	const char *env = getenv("PG_WARP_GPU_TILE");
	char		why[160];
	size_t		smem = 0;
	int			per_sm = 0,
				j;

	g->tile_on = false;
	if (env == NULL || strcmp(env, "1") != 0)
		return false;
	if (!warp_tile_plan(prog, &g->tile, why, sizeof(why)))
		return false;
	for (j = 0; j < prog->njoins; j++)
		if (!tables[prog->joins[j].table]->unique)
			return false;
	g->tile_shared_slots = 0;
	if (g->grp.direct && prog->naggs > 0)
	{
		smem = (size_t) g->nslots * prog->naggs * sizeof(WarpAggState) +
			(size_t) g->nslots * sizeof(warp_uint32);
		if (smem <= TILE_SMEM_MAX)
			g->tile_shared_slots = (int) g->nslots;
		else
			smem = 0;
	}
	g->tile_smem = smem;
	if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, warp_gpu_tile, TILE_THREADS,
													  smem) != cudaSuccess || per_sm < 1)
	{
		(void) cudaGetLastError();
		return false;
	}
	g->tile_max_blocks = g->nsm * per_sm;
	g->tile_on = true;
	return true;
}

/* the tile kernel over rows [r0, r1) of the slot's batch */
bool
tile_launch(WarpGpu *g, const WarpRowEnv *env, warp_int64 r0, warp_int64 r1,
			char *why, size_t whylen)
{
	long long	per_block = (long long) TILE_THREADS * TILE_ITEMS;
	long long	blocks = (r1 - r0 + per_block - 1) / per_block;

	if (blocks > g->tile_max_blocks)
		blocks = g->tile_max_blocks;
	if (blocks < 1)
		blocks = 1;
	warp_gpu_tile<<<(int) blocks, TILE_THREADS, g->tile_smem, g->stream>>>(
		*env, g->tile, g->grp, (long long) r0, (long long) r1, g->d_res, g->tile_shared_slots);
	return CUDA_OK(cudaGetLastError());
}
