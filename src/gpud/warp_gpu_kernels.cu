/*-------------------------------------------------------------------------
 *
 * warp_gpu_kernels.cu
 *	  The GPU driver's kernels (see warp_gpu.cu): warp_gpu_rows, every row
 *	  of a batch through the whole program with the row evaluator of
 *	  src/engine/warp_row.h, and the group table's clear, compact and
 *	  regroup kernels; plus the launch shape of warp_gpu_rows for a
 *	  program.  The kernels and every device function they call are in
 *	  this one translation unit (or in headers it includes), so no
 *	  relocatable device code is needed; the other files launch them
 *	  through the declarations in warp_gpu_internal.h.
 *
 *-------------------------------------------------------------------------
 */
#include "warp_gpu_internal.h"
#include "warp_gpu_count.h"

/* ---------------------------------------------------------------- kernels */

/*
 * Shared memory of warp_gpu_rows for blocks of nthreads threads: the node
 * scratch of every thread's row (WarpRowState), each row's first build
 * row per join, and two queues of the rows still alive (as thread slots).
 */
typedef struct RowSmem
{
	size_t		first;			/* offsets */
	size_t		queue;
	size_t		total;
} RowSmem;

__host__ __device__ static inline RowSmem
row_smem_layout(int nnodes, int njoins, int nthreads)
{
	RowSmem		l;

	l.first = (WARP_ROW_SCRATCH_BYTES(nnodes) * nthreads + 15) / 16 * 16;
	l.queue = l.first + ((size_t) 4 * njoins * nthreads + 15) / 16 * 16;
	l.total = l.queue + (size_t) 2 * 2 * nthreads;
	return l;
}

/* append this thread's slot to a shared queue (one atomic per warp) */
__device__ static inline void
row_enqueue(bool alive, warp_uint16 *q, int *qn, int slot)
{
	unsigned	mask = __ballot_sync(0xffffffffu, alive);
	int			lane = threadIdx.x & 31;
	int			base = 0;

	if (mask == 0)
		return;
	if (lane == __ffs(mask) - 1)
		base = atomicAdd(qn, __popc(mask));
	base = __shfl_sync(0xffffffffu, base, __ffs(mask) - 1);
	if (alive)
		q[base + __popc(mask & ((1u << lane) - 1))] = (warp_uint16) slot;
}

/* the first failing row's status, once */
__device__ static inline void
row_fail(DevResult *res, int st, long long row)
{
	if (atomicCAS(&res->status, 0, st) == 0)
		res->bad_row = row;
}

/*
 * Every row of [r0, r1) through the program, a tile of blockDim.x rows at
 * a time (row base + t starts in thread t, its memo in scratch slot t).
 * Between the steps of warp_row_run -- quals and join keys, each probe,
 * emit -- the rows still alive are compacted into a queue, and the next
 * step runs on the queue with every thread busy: after a selective filter
 * or join, thread-per-row would leave most lanes of a warp idle while a
 * few take the expensive path.  A queued row carries its slot, so its
 * memo, first build rows and row number come along.  Every thread reaches
 * every barrier (blockDim.x is a multiple of 32, so the warp-wide queue
 * appends are full-warp); a failing row records its status and the block
 * stops after the tile.
 */
/*
 * Blocks of 128 threads, at least 8 per SM: caps the kernel at 64 registers
 * (it would take 108; a few bytes spill) for 32 resident warps per SM.  The
 * kernel is latency-bound (ncu on an H100, SSB SF=20, 256 x 3: 27 % of
 * issue slots busy, 0.4 eligible warps per scheduler, 30-48 % of the
 * stalls at the barriers between steps), so more warps in flight, and
 * barriers that hold 4 warps rather than 8, pay.  Measured on an H100 with
 * SSB SF=20 (bench/results/2026-12-05-h100-gpu-kernel-session13.md), kernel
 * time summed over the 13 queries: 256 x 3 (85 registers) 396 ms, 256 x 4
 * 373 ms, 128 x 6 383 ms, 128 x 8 368 ms; q1.x and q4.1/q4.2 gain 20-25 %,
 * the selective q2.2-q3.4 lose up to 10 %.  Earlier, on the H200
 * (2026-12-04-h200-gpu-kernel-session4.md): 256 x 3 291 ms against 325 ms
 * uncapped.
 */
#ifndef WARP_GPU_ROW_MIN_BLOCKS
#define WARP_GPU_ROW_MIN_BLOCKS 8
#endif
/* threads per block of warp_gpu_rows (fewer where a program's scratch needs it) */
#ifndef WARP_GPU_ROW_THREADS
#define WARP_GPU_ROW_THREADS 128
#endif

__global__ void __launch_bounds__(WARP_GPU_ROW_THREADS, WARP_GPU_ROW_MIN_BLOCKS)
warp_gpu_rows(const __grid_constant__ WarpRowEnv env, const __grid_constant__ WarpRowGroups grp,
			  long long r0, long long r1, DevResult *res, int nnodes, int njoins)
{
	extern __shared__ warp_int64 row_smem[];
	__shared__ int qn[WARP_ROW_MAX_JOINS + 2];
	__shared__ int stop;
	const int	nt = (int) blockDim.x;
	const int	t = (int) threadIdx.x;
	RowSmem		l = row_smem_layout(nnodes, njoins, nt);
	warp_int32 *first = (warp_int32 *) ((warp_uint8 *) row_smem + l.first);
	warp_uint16 *queue[2];
	WarpRowCounts cnt;
	long long	base;

	queue[0] = (warp_uint16 *) ((warp_uint8 *) row_smem + l.queue);
	queue[1] = queue[0] + nt;
	cnt.rows_filtered = 0;
	cnt.rows_joined = 0;
	/* slot t's constants, once (the loop's first barrier publishes them) */
	{
		WarpRowState s0;

		warp_row_state_init(&s0, row_smem, nnodes, nt, t);
		warp_row_prepare(env.p, &s0);
	}
	/*
	 * Without quals every row in range reaches the first probe, so
	 * compacting them first would only cost a barrier: the first step
	 * probes join 0 itself.
	 */
	const int	j0 = (env.p->nquals == 0 && njoins > 0) ? 1 : 0;

	for (base = r0 + (long long) blockIdx.x * nt; base < r1; base += (long long) gridDim.x * nt)
	{
		WarpRowState s;
		bool		alive = false;
		int			j,
					k,
					n;

		/*
		 * One barrier between tiles: it publishes the reset counters and
		 * whether a row failed (here or in another block: the batch goes to
		 * the CPU anyway), and the previous tile's emit step is over before
		 * this one writes the scratch and the queues.
		 */
		if (t < njoins + 2)
			qn[t] = 0;
		if (t == 0)
			stop = *(volatile int *) &res->status != 0;
		__syncthreads();
		if (stop)
			break;

		/*
		 * quals and join keys, row base + t in slot t; the quals env.pre
		 * decides from the raw values first, so a row they drop never
		 * touches the memo
		 */
		if (base + t < r1)
		{
			int			st = warp_row_prefilter(&env, base + t, &alive);

			if (st == WARP_OK && alive)
			{
				warp_row_state_init(&s, row_smem, nnodes, nt, t);
				warp_row_begin(env.p, &s, base + t);
				st = warp_row_quals(&env, &s, &alive);
			}
			if (st == WARP_OK && alive)
			{
				cnt.rows_filtered++;
				st = warp_row_join_keys(&env, &s);
			}
			if (st != WARP_OK)
			{
				row_fail(res, st, base + t);
				alive = false;
			}
			else if (alive && j0 == 1)
			{
				warp_int32	f = -1;

				alive = warp_row_probe(&env, &s, 0, &f);
				first[t] = f;
			}
		}
		row_enqueue(alive, queue[j0], &qn[j0], t);
		__syncthreads();

		/* each probe over the rows still alive, into the other queue */
		for (j = j0; j < njoins; j++)
		{
			const warp_uint16 *in = queue[j & 1];
			warp_uint16 *out = queue[(j + 1) & 1];

			n = qn[j];
			for (k = 0; k < n; k += nt)
			{
				int			slot = k + t < n ? in[k + t] : 0;
				warp_int32	f = -1;

				alive = false;
				if (k + t < n)
				{
					warp_row_state_init(&s, row_smem, nnodes, nt, slot);
					s.row = base + slot;
					alive = warp_row_probe(&env, &s, j, &f);
					first[j * nt + slot] = f;
				}
				row_enqueue(alive, out, &qn[j + 1], slot);
			}
			__syncthreads();
		}

		/* group keys, aggregate arguments and updates for the survivors */
		n = qn[njoins];
		for (k = t; k < n; k += nt)
		{
			int			slot = queue[njoins & 1][k];
			warp_int32	f[WARP_ROW_MAX_JOINS];
			int			st;

			for (j = 0; j < njoins; j++)
				f[j] = first[j * nt + slot];
			warp_row_state_init(&s, row_smem, nnodes, nt, slot);
			s.row = base + slot;
			st = warp_row_emit(&env, &s, &grp, f, &cnt);
			if (st != WARP_OK)
				row_fail(res, st, base + slot);
		}

		/* every thread is done with this tile's queues and scratch */
		__syncthreads();
	}
	warp_gpu_count_add(&res->rows_filtered, (unsigned long long) cnt.rows_filtered);
	warp_gpu_count_add(&res->rows_joined, (unsigned long long) cnt.rows_joined);
}

/* empty every slot: state 0, every aggregate at its initial state */
__global__ void
warp_gpu_clear(WarpRowGroups grp, long long nslots, const WarpAggSpec *aggs)
{
	long long	stride = (long long) gridDim.x * blockDim.x;
	long long	s;
	int			a;

	for (s = (long long) blockIdx.x * blockDim.x + threadIdx.x; s < nslots; s += stride)
	{
		grp.state[s] = 0;
		for (a = 0; a < grp.naggs; a++)
			warp_row_agg_init(&aggs[a], &grp.aggs[s * grp.naggs + a]);
	}
}

/* gather the used slots into out (keys, then NULL flags, then states) */
__global__ void
warp_gpu_compact(WarpRowGroups grp, long long nslots, warp_int64 *okeys, warp_uint8 *oknull,
				 WarpAggState *oaggs, unsigned long long *counter, unsigned long long limit)
{
	long long	stride = (long long) gridDim.x * blockDim.x;
	long long	s;
	int			k,
				a;

	for (s = (long long) blockIdx.x * blockDim.x + threadIdx.x; s < nslots; s += stride)
	{
		unsigned long long o;

		if (grp.state[s] != 2)
			continue;
		o = atomicAdd(counter, 1ULL);
		if (o >= limit)
			continue;			/* cannot happen; checked by the host */
		for (k = 0; k < grp.nkeys; k++)
		{
			okeys[o * grp.nkeys + k] = grp.keys[s * grp.nkeys + k];
			oknull[o * grp.nkeys + k] = grp.knull[s * grp.nkeys + k];
		}
		for (a = 0; a < grp.naggs; a++)
			oaggs[o * grp.naggs + a] = grp.aggs[s * grp.naggs + a];
	}
}

/*
 * Move every group of a table into a fresh, bigger one (its keys are
 * unique, so each makes a new group there); the aggregate states move as
 * they are.
 */
__global__ void
warp_gpu_regroup(WarpRowGroups from, long long nslots, WarpRowGroups to)
{
	long long	stride = (long long) gridDim.x * blockDim.x;
	long long	s;
	int			a;

	for (s = (long long) blockIdx.x * blockDim.x + threadIdx.x; s < nslots; s += stride)
	{
		warp_int64	slot;

		if (from.state[s] != 2)
			continue;
		slot = warp_row_group(&to, from.keys + s * from.nkeys, from.knull + s * from.nkeys, 0);
		if (slot < 0)
			continue;			/* cannot happen: the host sized `to` */
		for (a = 0; a < from.naggs; a++)
			to.aggs[slot * to.naggs + a] = from.aggs[s * from.naggs + a];
	}
}

/* ------------------------------------------------------------ launch shape */

/*
 * Threads per block and shared memory of warp_gpu_rows for the program: as
 * many threads as WARP_GPU_ROW_THREADS while a block's shared memory stays within
 * ROW_SMEM_BLOCK (so at least two blocks fit an SM), else fewer (a
 * multiple of 32 always); the grid is one wave of the blocks that can be
 * resident.
 */
#define ROW_SMEM_BLOCK (96 * 1024)

bool
row_launch_shape(WarpGpu *g, const WarpProgram *prog, int smem_optin, char *why, size_t whylen)
{
	cudaFuncAttributes attr;
	int			threads = WARP_GPU_ROW_THREADS;
	int			per_sm = 0;
	int			dyn_max;

	/* the kernel's static shared memory comes out of the same limit */
	if (!CUDA_OK(cudaFuncGetAttributes(&attr, warp_gpu_rows)))
		return false;
	dyn_max = smem_optin - (int) attr.sharedSizeBytes;
	while (threads > 32 && row_smem_layout(prog->nnodes, prog->njoins, threads).total > ROW_SMEM_BLOCK)
		threads /= 2;
	g->row_threads = threads;
	g->row_smem = row_smem_layout(prog->nnodes, prog->njoins, threads).total;
	if (dyn_max <= 0 || g->row_smem > (size_t) dyn_max)
	{
		set_why(why, whylen, "a program of %d nodes does not fit the GPU's shared memory",
				prog->nnodes);
		return false;
	}
	/* always the largest allowed: threads of other jobs set it concurrently */
	if (!CUDA_OK(cudaFuncSetAttribute(warp_gpu_rows, cudaFuncAttributeMaxDynamicSharedMemorySize,
									  dyn_max)) ||
		!CUDA_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, warp_gpu_rows,
															   threads, g->row_smem)))
		return false;
	if (per_sm < 1)
	{
		set_why(why, whylen, "a program of %d nodes does not fit the GPU's shared memory",
				prog->nnodes);
		return false;
	}
	g->row_max_blocks = g->nsm * per_sm;
	return true;
}
