/*-------------------------------------------------------------------------
 *
 * warp_gpu.cu
 *	  The GPU driver of the engine (see warp_gpu.h).
 *
 * Per record batch: the program's columns (only the byte ranges the batch
 * uses, validity bitmaps and dictionaries included) are copied into one
 * device staging buffer with cudaMemcpyAsync on the copy stream, then one
 * fused kernel on the compute stream runs every row through the whole
 * program with the row evaluator of src/engine/warp_row.h (quals, join
 * probes with duplicate chains, group keys, aggregate updates with atomics
 * into the device group table).
 *
 * Batches are pipelined two deep: batch i has its own staging buffer and
 * column descriptors (slot i % 2); its copies are queued first, then the
 * host waits for batch i-1's kernel (which ran while batch i's copies and
 * the caller's reading of batch i went on), checks its status and group
 * count, and queues batch i's kernel behind an event on its copies.  So
 * copies overlap kernels, and the host knows the exact group count before
 * every launch, which the group table's flushing needs.  The row evaluator's
 * semantics are unit-tested on the CPU against the CPU driver
 * (test/unit/test_engine_row.c); this file only moves data and launches.
 *
 * Anything a row cannot do exactly (an error PostgreSQL would raise, a
 * value out of a column's range, a float aggregate input the atomics
 * would not reproduce) sets a device status; the batch then returns -1 and
 * the daemon re-runs the query on the CPU driver, which raises the error.
 *
 * The group table.  Direct form when every key is a dimension payload id
 * and the product of the payload counts is small: the slot is the code, it
 * cannot overflow.  Otherwise an open-addressing table of nslots slots,
 * filled to at most nslots / 2.  A fact row creates at most `fan` groups
 * (the product of the longest duplicate-key chains of the joins that group
 * keys read), so before every launch the host knows an upper bound of the
 * groups it can create; when the rows left would not fit, the table first
 * doubles on the device (grow_groups, while it stays within
 * HASH_BYTES_GROW_MAX and the query's memory share), and else is flushed:
 * compacted on the device, downloaded, merged into the host result
 * (warp_row_result_merge: the states combine per aggregate kind), and
 * cleared; a batch bigger than the free room runs in slices.  Rows are
 * never lost.
 *
 * Join tables are uploaded once, at create.  The CUDA context is created
 * with blocking synchronization so a waiting daemon thread sleeps instead
 * of spinning on a core OLTP backends need.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>

extern "C" {
#include "warp_gpu.h"
#include "warp_row.h"

/* a monotonic clock in milliseconds (host timings) */
static double
host_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}
}

#define BLOCK_THREADS 256
#define STAGE_ALIGN 256
/* direct group tables up to this many slots and bytes */
#define DIRECT_SLOTS_MAX (1 << 22)
#define DIRECT_BYTES_MAX ((size_t) 512 << 20)
/* hash group tables: slots wanted, and the device memory they may take */
#define HASH_SLOTS_WANT ((warp_int64) 1 << 22)
#define HASH_SLOTS_MIN ((warp_int64) 1 << 10)
#define HASH_BYTES_MAX ((size_t) 1 << 30)
/* ... and up to what size a full one doubles instead of flushing */
#define HASH_BYTES_GROW_MAX ((size_t) 8 << 30)

/* what a kernel reports back (device memory, mirrored in pinned memory) */
typedef struct DevResult
{
	unsigned long long nused;	/* groups in the device table */
	unsigned long long rows_filtered;
	unsigned long long rows_joined;
	int			status;			/* first non-OK row status */
	int			pad;
	long long	bad_row;		/* a row that set it */
} DevResult;

/* what one batch in flight owns on the device */
typedef struct BatchSlot
{
	WarpRowCol *h_cols;			/* pinned */
	WarpRowCol *d_cols;
	warp_uint8 *d_stage;
	size_t		stage_size;
	cudaEvent_t ev_copy0;		/* around its copies (copy stream) */
	cudaEvent_t ev_copy1;
	cudaEvent_t ev_run0;		/* around its kernels (compute stream) */
	cudaEvent_t ev_done;
	GpudColEntry **cents;		/* column cache entries its kernel reads */
	int			ncents;
	warp_int64	nrows;			/* rows of its batch */
} BatchSlot;

#define NBATCH_SLOTS 2

struct WarpGpu
{
	int			device;
	GpudColCache *cache;		/* the device's column cache, or NULL */
	const WarpProgram *prog;
	WarpGpuMem	mem;			/* device memory accounting (or none) */
	cudaStream_t stream;		/* kernels, flushes */
	cudaStream_t copy_stream;	/* batch copies */
	BatchSlot	slot[NBATCH_SLOTS];
	int			next_slot;		/* for the next batch */
	int			pend[NBATCH_SLOTS]; /* slots whose kernels were not waited for,
									 * oldest first */
	int			npend;

	/* the program and join tables on the device */
	void	   *d_prog_mem;
	WarpProgram *d_prog;
	WarpAggSpec *d_aggs;
	void	  **d_table_arrays;	/* every array allocated for the tables */
	int			n_table_arrays;
	WarpJoinTable *d_tables;	/* per join */
	warp_int64	fan;			/* most groups one fact row creates */

	/* the group table */
	WarpRowGroups grp;			/* device pointers */
	warp_int64	nslots;
	warp_int64	max_fill;		/* hash: groups allowed before a flush */
	int			grows;			/* times the hash table doubled */
	DevResult  *d_res;
	DevResult  *h_res;			/* pinned */
	warp_int64	used;			/* groups in the device table */

	/* flush buffers */
	void	   *d_out;
	size_t		d_out_size;
	void	   *h_out;
	size_t		h_out_size;

	WarpRowResult result;
	bool		finished;
	bool		failed;
	warp_int64	rows_in;
	warp_int64	bytes;
	double		copy_ms;
	double		kernel_ms;
	double		flush_copy_ms;	/* flushes: compaction and copy back */
	double		flush_host_ms;	/* ... and the host's merge of them */
	warp_int64	cached_bytes;
	int			nsm;

	/* launch shape of warp_gpu_rows for this program (see row_launch_shape) */
	int			row_threads;	/* per block */
	size_t		row_smem;		/* dynamic shared memory per block */
	int			row_max_blocks; /* one resident wave */
	WarpRowPre	pre;			/* the quals decided from raw values */
};

static bool context_poisoned = false;

#define MAX_DEVICES 64

static void release_slot_entries(GpudColCache *cache, BatchSlot *bs);
static bool blocking_sync_set[MAX_DEVICES];

/* ----------------------------------------------------------------- errors */

static void
set_why(char *why, size_t whylen, const char *fmt,...)
{
	va_list		ap;

	if (why == NULL || whylen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
}

/* errors after which the context is unusable (every later call fails) */
static bool
is_sticky(cudaError_t e)
{
	switch (e)
	{
		case cudaErrorIllegalAddress:
		case cudaErrorLaunchFailure:
		case cudaErrorHardwareStackError:
		case cudaErrorIllegalInstruction:
		case cudaErrorMisalignedAddress:
		case cudaErrorInvalidAddressSpace:
		case cudaErrorInvalidPc:
		case cudaErrorAssert:
		case cudaErrorLaunchTimeout:
		case cudaErrorECCUncorrectable:
		case cudaErrorContextIsDestroyed:
			return true;
		default:
			return false;
	}
}

/* true if e is success; else note it (and whether it poisoned the context) */
static bool
cuda_ok(cudaError_t e, const char *what, char *why, size_t whylen)
{
	if (e == cudaSuccess)
		return true;
	if (is_sticky(e))
		context_poisoned = true;
	set_why(why, whylen, "CUDA error in %s: %s (%s)", what, cudaGetErrorString(e),
			cudaGetErrorName(e));
	(void) cudaGetLastError();	/* clear a non-sticky error */
	return false;
}

#define CUDA_OK(call) cuda_ok((call), #call, why, whylen)

/* message for a row status */
static void
row_status_why(int st, long long row, char *why, size_t whylen)
{
	if (st == WARP_ROW_LOAD)
		set_why(why, whylen, "row %lld: a column value is out of range of its type", row);
	else if (st == WARP_ROW_BAD)
		set_why(why, whylen, "row %lld: data or values the GPU driver does not handle exactly", row);
	else if (st == WARP_ROW_FULL)
		set_why(why, whylen, "the device group table is full");
	else if (st > 0 && st < (int) WARP_STATUS_COUNT)
		set_why(why, whylen, "row %lld: %s", row, warp_status_message((WarpStatus) st));
	else
		set_why(why, whylen, "row %lld: status %d", row, st);
}

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
	if (cnt.rows_filtered)
		atomicAdd(&res->rows_filtered, (unsigned long long) cnt.rows_filtered);
	if (cnt.rows_joined)
		atomicAdd(&res->rows_joined, (unsigned long long) cnt.rows_joined);
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

/* ------------------------------------------------------------- utilities */

static size_t
align_up(size_t v, size_t a)
{
	return (v + a - 1) / a * a;
}

static int
grid_for(const WarpGpu *g, long long n)
{
	long long	blocks = (n + BLOCK_THREADS - 1) / BLOCK_THREADS;
	long long	max_blocks = (long long) g->nsm * 8;

	if (blocks > max_blocks)
		blocks = max_blocks;
	return blocks < 1 ? 1 : (int) blocks;
}

/* blocks of warp_gpu_rows for n rows: at most one resident wave */
static int
row_grid(const WarpGpu *g, long long n)
{
	long long	blocks = (n + g->row_threads - 1) / g->row_threads;

	if (blocks > g->row_max_blocks)
		blocks = g->row_max_blocks;
	return blocks < 1 ? 1 : (int) blocks;
}

/*
 * Threads per block and shared memory of warp_gpu_rows for the program: as
 * many threads as WARP_GPU_ROW_THREADS while a block's shared memory stays within
 * ROW_SMEM_BLOCK (so at least two blocks fit an SM), else fewer (a
 * multiple of 32 always); the grid is one wave of the blocks that can be
 * resident.
 */
#define ROW_SMEM_BLOCK (96 * 1024)

static bool
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

/*
 * Device allocations go through the job's account (warp_gpu.h: WarpGpuMem):
 * asked before cudaMalloc, told after cudaFree of a buffer being replaced.
 */
static bool
dev_malloc(WarpGpu *g, void **p, size_t n, char *why, size_t whylen)
{
	*p = NULL;
	if (g->mem.grow && !g->mem.grow(g->mem.ctx, (warp_uint64) n))
	{
		set_why(why, whylen, "device memory: %zu more bytes do not fit this query's share", n);
		return false;
	}
	if (!CUDA_OK(cudaMalloc(p, n)))
	{
		if (g->mem.shrink)
			g->mem.shrink(g->mem.ctx, (warp_uint64) n);
		return false;
	}
	return true;
}

static void
dev_free(WarpGpu *g, void *p, size_t n)
{
	if (p == NULL)
		return;
	cudaFree(p);
	if (g->mem.shrink)
		g->mem.shrink(g->mem.ctx, (warp_uint64) n);
}

/* ------------------------------------------------------------- interface */

extern "C" int
warp_gpu_device_count(char *why, size_t whylen)
{
	int			n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);

	if (e != cudaSuccess)
	{
		set_why(why, whylen, "no usable CUDA device: %s", cudaGetErrorString(e));
		(void) cudaGetLastError();
		return 0;
	}
	if (n == 0)
		set_why(why, whylen, "no CUDA device");
	return n;
}

extern "C" void
warp_gpu_device_name(int device, char *buf, size_t len)
{
	cudaDeviceProp prop;

	if (cudaGetDeviceProperties(&prop, device) != cudaSuccess)
	{
		(void) cudaGetLastError();
		snprintf(buf, len, "GPU %d", device);
		return;
	}
	snprintf(buf, len, "%s", prop.name);
}

/*
 * Ask for blocking synchronization on a device, once, preferably before
 * anything creates its context (the first cudaHostAlloc or cudaMalloc
 * does).  CUDA 12 and later overwrite the flags of an active primary
 * context too; an error here only costs a spinning wait.
 */
static void
set_blocking_sync(int device)
{
	if (device < 0 || device >= MAX_DEVICES || blocking_sync_set[device])
		return;
	if (cudaSetDevice(device) != cudaSuccess ||
		cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync) != cudaSuccess)
		(void) cudaGetLastError();
	blocking_sync_set[device] = true;
}

extern "C" void *
warp_gpu_host_alloc(size_t size)
{
	void	   *p = NULL;
	int			dev = 0;

	if (cudaGetDevice(&dev) == cudaSuccess)
		set_blocking_sync(dev);
	else
		(void) cudaGetLastError();

	if (cudaHostAlloc(&p, size, cudaHostAllocPortable) != cudaSuccess)
	{
		(void) cudaGetLastError();
		return NULL;
	}
	return p;
}

extern "C" void
warp_gpu_host_free(void *p)
{
	if (p)
		(void) cudaFreeHost(p);
}

extern "C" int
warp_gpu_warmup(int device, char *why, size_t whylen)
{
	cudaFuncAttributes attr;

	set_blocking_sync(device);
	/* the context, and every kernel's module (CUDA loads them lazily) */
	if (!CUDA_OK(cudaSetDevice(device)) || !CUDA_OK(cudaFree(0)) ||
		!CUDA_OK(cudaFuncGetAttributes(&attr, warp_gpu_rows)) ||
		!CUDA_OK(cudaFuncGetAttributes(&attr, warp_gpu_clear)) ||
		!CUDA_OK(cudaFuncGetAttributes(&attr, warp_gpu_compact)))
		return -1;
	return 0;
}

extern "C" int
warp_gpu_memory(int device, warp_uint64 *free_bytes, warp_uint64 *total_bytes)
{
	size_t		f = 0,
				t = 0;

	if (cudaSetDevice(device) != cudaSuccess || cudaMemGetInfo(&f, &t) != cudaSuccess)
	{
		(void) cudaGetLastError();
		return -1;
	}
	*free_bytes = f;
	*total_bytes = t;
	return 0;
}

extern "C" int
warp_gpu_host_register(void *p, size_t len, char *why, size_t whylen)
{
	int			dev = 0;
	int			ro = 0;
	cudaError_t e;

	if (cudaGetDevice(&dev) != cudaSuccess)
		(void) cudaGetLastError();
	set_blocking_sync(dev);
	/* a read-only mapping needs the read-only flag where the device has it */
	if (cudaDeviceGetAttribute(&ro, cudaDevAttrHostRegisterReadOnlySupported, dev) != cudaSuccess)
	{
		(void) cudaGetLastError();
		ro = 0;
	}
	if (!ro)
	{
		set_why(why, whylen, "the device cannot register read-only host memory");
		return -1;
	}
	e = cudaHostRegister(p, len, cudaHostRegisterPortable | cudaHostRegisterReadOnly);
	if (e != cudaSuccess)
	{
		cuda_ok(e, "cudaHostRegister", why, whylen);
		return -1;
	}
	return 0;
}

extern "C" void
warp_gpu_host_unregister(void *p)
{
	if (cudaHostUnregister(p) != cudaSuccess)
		(void) cudaGetLastError();
}

extern "C" bool
warp_gpu_context_poisoned(void)
{
	return context_poisoned;
}

extern "C" void
warp_gpu_destroy(WarpGpu *g)
{
	int			i;

	if (g == NULL)
		return;
	if (!context_poisoned)
	{
		(void) cudaSetDevice(g->device);
		if (g->copy_stream)
			(void) cudaStreamSynchronize(g->copy_stream);
		if (g->stream)
			(void) cudaStreamSynchronize(g->stream);
		cudaFree(g->d_prog_mem);
		for (i = 0; i < g->n_table_arrays; i++)
			cudaFree(g->d_table_arrays[i]);
		cudaFree(g->d_tables);
		for (i = 0; i < NBATCH_SLOTS; i++)
		{
			BatchSlot  *bs = &g->slot[i];

			release_slot_entries(g->cache, bs);
			cudaFree(bs->d_cols);
			cudaFree(bs->d_stage);
			cudaFreeHost(bs->h_cols);
			if (bs->ev_copy0)
				cudaEventDestroy(bs->ev_copy0);
			if (bs->ev_copy1)
				cudaEventDestroy(bs->ev_copy1);
			if (bs->ev_run0)
				cudaEventDestroy(bs->ev_run0);
			if (bs->ev_done)
				cudaEventDestroy(bs->ev_done);
		}
		cudaFree(g->grp.state);
		cudaFree(g->grp.keys);
		cudaFree(g->grp.knull);
		cudaFree(g->grp.aggs);
		cudaFree(g->d_res);
		cudaFree(g->d_out);
		cudaFreeHost(g->h_res);
		if (g->stream)
			cudaStreamDestroy(g->stream);
		if (g->copy_stream)
			cudaStreamDestroy(g->copy_stream);
		(void) cudaGetLastError();
	}
	for (i = 0; i < NBATCH_SLOTS; i++)
		free(g->slot[i].cents);
	free(g->d_table_arrays);
	free(g->h_out);
	warp_row_result_free(&g->result);
	free(g);
}

/* copy n bytes of host memory to a new device array; NULL src gives NULL */
static bool
upload(WarpGpu *g, const void *src, size_t n, void **dst, char *why, size_t whylen)
{
	*dst = NULL;
	if (src == NULL || n == 0)
		return true;
	if (!dev_malloc(g, dst, n, why, whylen))
		return false;
	g->d_table_arrays[g->n_table_arrays++] = *dst;
	return CUDA_OK(cudaMemcpy(*dst, src, n, cudaMemcpyHostToDevice));
}

/* the program with its arrays (the time zone table's and the IN sets'
 * too), in one device allocation */
static bool
upload_program(WarpGpu *g, const WarpProgram *p, char *why, size_t whylen)
{
	WarpProgram dp = *p;
	size_t		off[10],
				len[10],
				total;
	const void *src[10];
	warp_uint8 *host,
			   *dev;
	int			i;

	src[0] = p->cols;
	len[0] = sizeof(WarpColumnSpec) * p->ncols;
	src[1] = p->nodes;
	len[1] = sizeof(WarpNode) * p->nnodes;
	src[2] = p->args;
	len[2] = sizeof(warp_int32) * p->nargs;
	src[3] = p->quals;
	len[3] = sizeof(warp_int32) * p->nquals;
	src[4] = p->joins;
	len[4] = sizeof(WarpJoinSpec) * p->njoins;
	src[5] = p->keys;
	len[5] = sizeof(WarpGroupKey) * p->nkeys;
	src[6] = p->aggs;
	len[6] = sizeof(WarpAggSpec) * p->naggs;
	src[7] = p->tz.at;
	len[7] = sizeof(warp_int64) * p->tz.n;
	src[8] = p->tz.off;
	len[8] = sizeof(warp_int32) * p->tz.n;
	src[9] = p->setvals;
	len[9] = sizeof(warp_int64) * p->nsetvals;
	total = align_up(sizeof(WarpProgram), 64);
	for (i = 0; i < 10; i++)
	{
		off[i] = total;
		total = align_up(total + len[i], 64);
	}
	host = (warp_uint8 *) calloc(1, total);
	if (host == NULL)
	{
		set_why(why, whylen, "out of memory");
		return false;
	}
	if (!dev_malloc(g, &g->d_prog_mem, total, why, whylen))
	{
		free(host);
		return false;
	}
	dev = (warp_uint8 *) g->d_prog_mem;
	for (i = 0; i < 10; i++)
		if (len[i] > 0)
			memcpy(host + off[i], src[i], len[i]);
	dp.cols = (WarpColumnSpec *) (dev + off[0]);
	dp.nodes = (WarpNode *) (dev + off[1]);
	dp.args = (warp_int32 *) (dev + off[2]);
	dp.quals = (warp_int32 *) (dev + off[3]);
	dp.joins = (WarpJoinSpec *) (dev + off[4]);
	dp.keys = (WarpGroupKey *) (dev + off[5]);
	dp.aggs = (WarpAggSpec *) (dev + off[6]);
	dp.tz.at = (const warp_int64 *) (dev + off[7]);
	dp.tz.off = (const warp_int32 *) (dev + off[8]);
	/* text constants: programs with text columns never reach the device
	 * (warp_row_check) */
	dp.nstrings = 0;
	dp.strings = NULL;
	dp.nstrbytes = 0;
	dp.strbytes = NULL;
	dp.setvals = (warp_int64 *) (dev + off[9]);
	memcpy(host, &dp, sizeof(dp));
	g->d_prog = (WarpProgram *) dev;
	g->d_aggs = dp.aggs;
	if (!CUDA_OK(cudaMemcpy(dev, host, total, cudaMemcpyHostToDevice)))
	{
		free(host);
		return false;
	}
	free(host);
	return true;
}

/* every join's table (warp_row_check validated them) */
static bool
upload_tables(WarpGpu *g, const WarpProgram *p, WarpJoinTable *const *tables,
			  char *why, size_t whylen)
{
	WarpJoinTable dt[WARP_ROW_MAX_JOINS];
	int			j;

	g->d_table_arrays = (void **) calloc(5 * (p->njoins + 1), sizeof(void *));
	if (g->d_table_arrays == NULL)
	{
		set_why(why, whylen, "out of memory");
		return false;
	}
	for (j = 0; j < p->njoins; j++)
	{
		const WarpJoinTable *t = tables[p->joins[j].table];
		void	   *d;

		dt[j] = *t;
		dt[j].keys = NULL;		/* probes never read the build keys */
		if (!upload(g, t->payload, sizeof(warp_int32) * t->nrows, &d, why, whylen))
			return false;
		dt[j].payload = (warp_int32 *) d;
		if (!upload(g, t->next, sizeof(warp_int32) * t->nrows, &d, why, whylen))
			return false;
		dt[j].next = (warp_int32 *) d;
		dt[j].first = NULL;
		dt[j].slot_key = NULL;
		dt[j].slot_row = NULL;
		if (t->direct && t->nrows > 0)
		{
			if (!upload(g, t->first, sizeof(warp_int32) * (t->max - t->min + 1), &d, why, whylen))
				return false;
			dt[j].first = (warp_int32 *) d;
		}
		else if (!t->direct && t->nrows > 0)
		{
			if (!upload(g, t->slot_key, sizeof(warp_int64) * (t->mask + 1), &d, why, whylen))
				return false;
			dt[j].slot_key = (warp_int64 *) d;
			if (!upload(g, t->slot_row, sizeof(warp_int32) * (t->mask + 1), &d, why, whylen))
				return false;
			dt[j].slot_row = (warp_int32 *) d;
		}
	}
	if (p->njoins == 0)
		return true;
	if (!dev_malloc(g, (void **) &g->d_tables, sizeof(WarpJoinTable) * p->njoins, why, whylen))
		return false;
	return CUDA_OK(cudaMemcpy(g->d_tables, dt, sizeof(WarpJoinTable) * p->njoins,
							  cudaMemcpyHostToDevice));
}

/* clear the device group table (on the stream) */
static bool
clear_groups(WarpGpu *g, char *why, size_t whylen)
{
	warp_gpu_clear<<<grid_for(g, g->nslots), BLOCK_THREADS, 0, g->stream>>>(g->grp, g->nslots, g->d_aggs);
	if (!CUDA_OK(cudaGetLastError()))
		return false;
	if (!CUDA_OK(cudaMemsetAsync(&g->d_res->nused, 0, sizeof(unsigned long long), g->stream)))
		return false;
	g->used = 0;
	return true;
}

/*
 * Double a hash group table in place of a flush, while it stays within
 * HASH_BYTES_GROW_MAX and the query's share of device memory has room:
 * a flush downloads the groups and merges them on the host, so a query of
 * millions of groups (GROUP BY a customer key) would flush before nearly
 * every batch.  The new table is filled on the device from the old one.
 * 1: grown; 0: cannot grow (nothing changed); -1: a CUDA error (why).
 */
static size_t group_slot_bytes(const WarpProgram *p);

static int
grow_groups(WarpGpu *g, char *why, size_t whylen)
{
	const WarpProgram *p = g->prog;
	warp_int64	nslots = g->nslots * 2;
	size_t		nk = p->nkeys ? p->nkeys : 1;
	size_t		na = p->naggs ? p->naggs : 1;
	WarpRowGroups to = g->grp;
	WarpRowGroups from = g->grp;
	char		nomem[256];

	if (g->grp.direct || context_poisoned ||
		(size_t) nslots * group_slot_bytes(p) > HASH_BYTES_GROW_MAX)
		return 0;
	to.state = NULL;
	to.keys = NULL;
	to.knull = NULL;
	to.aggs = NULL;
	/* (out of memory or over the share: just no growth, so its own why) */
	if (!dev_malloc(g, (void **) &to.state, sizeof(warp_uint32) * nslots, nomem, sizeof(nomem)) ||
		!dev_malloc(g, (void **) &to.keys, sizeof(warp_int64) * nslots * nk, nomem, sizeof(nomem)) ||
		!dev_malloc(g, (void **) &to.knull, (size_t) nslots * nk, nomem, sizeof(nomem)) ||
		!dev_malloc(g, (void **) &to.aggs, sizeof(WarpAggState) * nslots * na, nomem, sizeof(nomem)))
	{
		dev_free(g, to.state, to.state ? sizeof(warp_uint32) * nslots : 0);
		dev_free(g, to.keys, to.keys ? sizeof(warp_int64) * nslots * nk : 0);
		dev_free(g, to.knull, to.knull ? (size_t) nslots * nk : 0);
		dev_free(g, to.aggs, to.aggs ? sizeof(WarpAggState) * nslots * na : 0);
		return context_poisoned ? -1 : 0;
	}
	to.mask = (warp_uint64) nslots - 1;
	to.max_used = (warp_uint64) (nslots / 2);
	warp_gpu_clear<<<grid_for(g, nslots), BLOCK_THREADS, 0, g->stream>>>(to, nslots, g->d_aggs);
	if (!CUDA_OK(cudaGetLastError()) ||
		!CUDA_OK(cudaMemsetAsync(&g->d_res->nused, 0, sizeof(unsigned long long), g->stream)))
		goto fail;
	warp_gpu_regroup<<<grid_for(g, g->nslots), BLOCK_THREADS, 0, g->stream>>>(from, g->nslots, to);
	if (!CUDA_OK(cudaGetLastError()) || !CUDA_OK(cudaStreamSynchronize(g->stream)))
		goto fail;
	dev_free(g, from.state, sizeof(warp_uint32) * g->nslots);
	dev_free(g, from.keys, sizeof(warp_int64) * g->nslots * nk);
	dev_free(g, from.knull, (size_t) g->nslots * nk);
	dev_free(g, from.aggs, sizeof(WarpAggState) * g->nslots * na);
	g->grp = to;
	g->nslots = nslots;
	g->max_fill = nslots / 2;
	g->grows++;
	return 1;

fail:
	/* the job fails (and re-runs on the CPU driver); the old table stays
	 * the driver's, to be freed with it */
	dev_free(g, to.state, sizeof(warp_uint32) * nslots);
	dev_free(g, to.keys, sizeof(warp_int64) * nslots * nk);
	dev_free(g, to.knull, (size_t) nslots * nk);
	dev_free(g, to.aggs, sizeof(WarpAggState) * nslots * na);
	return -1;
}

/* size the group table (no CUDA: warp_gpu_estimate uses it too) */
static bool
size_groups(WarpGpu *g, const WarpProgram *p, WarpJoinTable *const *tables,
			char *why, size_t whylen)
{
	size_t		slot_bytes = sizeof(warp_uint32) + (size_t) p->nkeys * 9 +
		(size_t) p->naggs * sizeof(WarpAggState);
	warp_int64	product = 1;
	bool		all_dim = true;
	bool		seen[WARP_ROW_MAX_JOINS];
	int			k;

	memset(seen, 0, sizeof(seen));
	memset(&g->grp, 0, sizeof(g->grp));
	g->grp.nkeys = p->nkeys;
	g->grp.naggs = p->naggs;
	g->fan = 1;
	for (k = p->nkeys - 1; k >= 0; k--)
	{
		const WarpGroupKey *gk = &p->keys[k];

		if (gk->kind != WG_DIM)
		{
			all_dim = false;
			continue;
		}
		if (!seen[gk->join])
		{
			/* distinct payloads one key finds <= its longest chain */
			seen[gk->join] = true;
			warp_int64	chain = warp_row_max_chain(tables[p->joins[gk->join].table]);

			/* a left join's miss is one row too */
			g->fan *= chain > 1 ? chain : 1;
			if (g->fan > HASH_SLOTS_WANT)
				g->fan = HASH_SLOTS_WANT + 1;
		}
		if (product <= DIRECT_SLOTS_MAX)
		{
			g->grp.stride[k] = product;
			product *= (warp_int64) tables[p->joins[gk->join].table]->npayloads + 1;
		}
	}
	if (g->fan < 1)
		g->fan = 1;
	if (all_dim && product <= DIRECT_SLOTS_MAX && (size_t) product * slot_bytes <= DIRECT_BYTES_MAX)
	{
		g->grp.direct = 1;
		g->nslots = product;
		g->max_fill = product;
	}
	else
	{
		warp_int64	want = HASH_SLOTS_WANT;

		if (all_dim && product < want / 2)
			want = product * 2;
		while ((size_t) want * slot_bytes > HASH_BYTES_MAX && want > HASH_SLOTS_MIN)
			want /= 2;
		for (g->nslots = HASH_SLOTS_MIN; g->nslots < want; g->nslots *= 2)
			;
		g->max_fill = g->nslots / 2;
		g->grp.mask = (warp_uint64) g->nslots - 1;
		g->grp.max_used = (warp_uint64) g->max_fill;
		if (g->fan > g->max_fill)
		{
			set_why(why, whylen, "duplicate join keys fan out beyond the device group table");
			return false;
		}
	}
	return true;
}

/* bytes of one slot of the group table, as allocated */
static size_t
group_slot_bytes(const WarpProgram *p)
{
	return sizeof(warp_uint32) + (sizeof(warp_int64) + 1) * (p->nkeys ? p->nkeys : 1) +
		sizeof(WarpAggState) * (p->naggs ? p->naggs : 1);
}

/* size and allocate the group table */
static bool
setup_groups(WarpGpu *g, const WarpProgram *p, WarpJoinTable *const *tables,
			 char *why, size_t whylen)
{
	if (!size_groups(g, p, tables, why, whylen))
		return false;
	if (!dev_malloc(g, (void **) &g->grp.state, sizeof(warp_uint32) * g->nslots, why, whylen) ||
		!dev_malloc(g, (void **) &g->grp.keys, sizeof(warp_int64) * g->nslots * (p->nkeys ? p->nkeys : 1), why, whylen) ||
		!dev_malloc(g, (void **) &g->grp.knull, (size_t) g->nslots * (p->nkeys ? p->nkeys : 1), why, whylen) ||
		!dev_malloc(g, (void **) &g->grp.aggs, sizeof(WarpAggState) * g->nslots * (p->naggs ? p->naggs : 1), why, whylen) ||
		!dev_malloc(g, (void **) &g->d_res, sizeof(DevResult), why, whylen) ||
		!CUDA_OK(cudaMallocHost(&g->h_res, sizeof(DevResult))))
		return false;
	g->grp.nused = &g->d_res->nused;
	if (!CUDA_OK(cudaMemsetAsync(g->d_res, 0, sizeof(DevResult), g->stream)))
		return false;
	return clear_groups(g, why, whylen);
}

extern "C" warp_uint64
warp_gpu_estimate(const WarpProgram *p, WarpJoinTable *const *tables, warp_uint64 stage_bytes)
{
	WarpGpu		tmp;
	warp_uint64 n = (warp_uint64) 16 << 20;	/* program, descriptors, rounding */
	int			j;

	memset(&tmp, 0, sizeof(tmp));
	if (warp_program_validate(p) != NULL || warp_row_check(p, tables) != NULL ||
		!size_groups(&tmp, p, tables, NULL, 0))
		return n;				/* create will refuse it anyway */
	/* the table, and the buffer its groups are flushed through */
	n += 2 * (warp_uint64) tmp.nslots * group_slot_bytes(p);
	for (j = 0; j < p->njoins; j++)
	{
		const WarpJoinTable *t = tables[p->joins[j].table];

		n += sizeof(warp_int32) * 2 * (warp_uint64) t->nrows;
		if (t->direct && t->nrows > 0)
			n += sizeof(warp_int32) * (warp_uint64) (t->max - t->min + 1);
		else if (t->nrows > 0)
			n += (sizeof(warp_int64) + sizeof(warp_int32)) * ((warp_uint64) t->mask + 1);
	}
	return n + NBATCH_SLOTS * stage_bytes;
}

extern "C" WarpGpu *
warp_gpu_create(int device, GpudColCache *cache, const WarpProgram *prog,
				WarpJoinTable *const *tables,
				const WarpGpuMem *mem, char *why, size_t whylen)
{
	WarpGpu    *g;
	const char *bad;
	cudaDeviceProp prop;
	int			i;

	if (context_poisoned)
	{
		set_why(why, whylen, "the CUDA context is unusable");
		return NULL;
	}
	if ((bad = warp_program_validate(prog)) != NULL ||
		(bad = warp_row_check(prog, tables)) != NULL)
	{
		set_why(why, whylen, "%s", bad);
		return NULL;
	}
	g = (WarpGpu *) calloc(1, sizeof(WarpGpu));
	if (g == NULL || !warp_row_result_init(&g->result, prog->nkeys, prog->naggs))
	{
		set_why(why, whylen, "out of memory");
		free(g);
		return NULL;
	}
#ifndef WARP_GPU_NO_PREFILTER	/* (an A/B switch: every quals by the interpreter) */
	warp_row_pre_plan(prog, &g->pre);
#endif
	g->device = device;
	g->cache = cache;
	g->prog = prog;
	if (mem)
		g->mem = *mem;
	g->npend = 0;
	set_blocking_sync(device);
	if (!CUDA_OK(cudaSetDevice(device)))
		goto fail;
	if (!CUDA_OK(cudaGetDeviceProperties(&prop, device)))
		goto fail;
	if (prop.major * 10 + prop.minor < 75)
	{
		set_why(why, whylen, "GPU compute capability %d.%d is below 7.5", prop.major, prop.minor);
		goto fail;
	}
	g->nsm = prop.multiProcessorCount > 0 ? prop.multiProcessorCount : 1;
	if (!row_launch_shape(g, prog, (int) prop.sharedMemPerBlockOptin, why, whylen))
		goto fail;
	if (!CUDA_OK(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking)) ||
		!CUDA_OK(cudaStreamCreateWithFlags(&g->copy_stream, cudaStreamNonBlocking)))
		goto fail;
	for (i = 0; i < NBATCH_SLOTS; i++)
	{
		BatchSlot  *bs = &g->slot[i];

		if (!CUDA_OK(cudaEventCreate(&bs->ev_copy0)) ||
			!CUDA_OK(cudaEventCreateWithFlags(&bs->ev_copy1, cudaEventBlockingSync)) ||
			!CUDA_OK(cudaEventCreate(&bs->ev_run0)) ||
			!CUDA_OK(cudaEventCreateWithFlags(&bs->ev_done, cudaEventBlockingSync)) ||
			!CUDA_OK(cudaMallocHost(&bs->h_cols, sizeof(WarpRowCol) * (prog->ncols + 1))) ||
			!dev_malloc(g, (void **) &bs->d_cols, sizeof(WarpRowCol) * (prog->ncols + 1), why, whylen))
			goto fail;
		bs->cents = (GpudColEntry **) calloc(4 * (prog->ncols + 1), sizeof(GpudColEntry *));
		if (bs->cents == NULL)
		{
			set_why(why, whylen, "out of memory");
			goto fail;
		}
	}
	if (!upload_program(g, prog, why, whylen) ||
		!upload_tables(g, prog, tables, why, whylen))
		goto fail;
	if (!setup_groups(g, prog, tables, why, whylen))
		goto fail;
	if (!CUDA_OK(cudaStreamSynchronize(g->stream)))
		goto fail;
	return g;

fail:
	warp_gpu_destroy(g);
	return NULL;
}

/*
 * Bring the device group table's groups to the host result and clear it.
 * The stream must be idle (synchronized) and g->used current.
 */
static bool
flush_groups(WarpGpu *g, char *why, size_t whylen)
{
	const WarpProgram *p = g->prog;
	warp_int64	n = g->used;
	size_t		kbytes = sizeof(warp_int64) * n * p->nkeys;
	size_t		nbytes = align_up((size_t) n * p->nkeys, 16);
	size_t		abytes = sizeof(WarpAggState) * n * p->naggs;
	size_t		need = align_up(kbytes, 16) + nbytes + abytes + 16;
	warp_uint8 *ho;
	warp_int64	i;
	int			a;
	unsigned long long got;
	WarpAggState st[WARP_ROW_MAX_AGGS];
	double		t0,
				t1;
	bool		first = g->result.n == 0;

	if (n == 0)
		return true;
	t0 = host_ms();
	if (need > g->d_out_size)
	{
		dev_free(g, g->d_out, g->d_out_size);
		g->d_out = NULL;
		g->d_out_size = 0;
		if (!dev_malloc(g, &g->d_out, need, why, whylen))
			return false;
		g->d_out_size = need;
	}
	if (need > g->h_out_size)
	{
		free(g->h_out);
		g->h_out = malloc(need);
		g->h_out_size = g->h_out ? need : 0;
		if (g->h_out == NULL)
		{
			set_why(why, whylen, "out of memory");
			return false;
		}
	}
	{
		warp_uint8 *d = (warp_uint8 *) g->d_out;
		unsigned long long *counter = (unsigned long long *) (d + need - 16);

		if (!CUDA_OK(cudaMemsetAsync(counter, 0, sizeof(*counter), g->stream)))
			return false;
		warp_gpu_compact<<<grid_for(g, g->nslots), BLOCK_THREADS, 0, g->stream>>>(
			g->grp, g->nslots, (warp_int64 *) d, d + align_up(kbytes, 16),
			(WarpAggState *) (d + align_up(kbytes, 16) + nbytes), counter,
			(unsigned long long) n);
		if (!CUDA_OK(cudaGetLastError()) ||
			!CUDA_OK(cudaMemcpyAsync(g->h_out, g->d_out, need, cudaMemcpyDeviceToHost, g->stream)) ||
			!clear_groups(g, why, whylen) ||
			!CUDA_OK(cudaStreamSynchronize(g->stream)))
			return false;
	}
	ho = (warp_uint8 *) g->h_out;
	t1 = host_ms();
	g->flush_copy_ms += t1 - t0;
	memcpy(&got, ho + need - 16, sizeof(got));
	if ((warp_int64) got != n)
	{
		set_why(why, whylen, "device group table holds %llu groups, expected %lld",
				got, (long long) n);
		return false;
	}
	for (i = 0; i < n; i++)
	{
		const warp_int64 *kv = (const warp_int64 *) ho + i * p->nkeys;
		const warp_uint8 *kn = ho + align_up(kbytes, 16) + i * p->nkeys;
		const WarpAggState *as = (const WarpAggState *) (ho + align_up(kbytes, 16) + nbytes) +
			i * p->naggs;

		for (a = 0; a < p->naggs; a++)
		{
			st[a] = as[a];
			warp_row_agg_export(&p->aggs[a], &st[a]);
		}
		/* the device table's groups are distinct: the first flush only
		 * appends them (the index is built if another flush comes) */
		if (first ? !warp_row_result_append(&g->result, kv, kn, st)
			: !warp_row_result_merge(&g->result, p, kv, kn, st))
		{
			set_why(why, whylen, "out of memory");
			return false;
		}
	}
	g->flush_host_ms += host_ms() - t1;
	return true;
}

/* one array of a column: in the staging buffer, or in the column cache */
typedef struct StageCopy
{
	const void *src;
	size_t		pos;			/* in the staging buffer */
	size_t		len;
	const warp_uint8 *dptr;		/* a column cache entry's memory, or NULL */
} StageCopy;

#define NO_POS ((size_t) -1)

/* plan one copy of len bytes at src; returns its index */
static size_t
stage_add(StageCopy *copies, int *ncopies, size_t *total, const void *src, size_t len)
{
	StageCopy  *c = &copies[(*ncopies)++];

	(void) total;
	c->src = src;
	c->len = len;
	c->pos = NO_POS;
	c->dptr = NULL;
	return (size_t) (c - copies);
}

/*
 * Plan the copy of rows [0, b->length) of b: the validity bitmap and the
 * values, from the byte holding row 0's bit (bitmaps) or from the element
 * of the same rounded-down row (fixed width), so that one bit/element
 * offset, offset % 8, serves both on the device.  *vpos / *dpos receive the
 * indexes of the copies of validity and values (NO_POS: none).
 */
static void
stage_buf(WarpRowBuf *b, StageCopy *copies, int *ncopies, size_t *total,
		  size_t *vpos, size_t *dpos)
{
	warp_int64	o8 = b->offset % 8;
	warp_int64	base = b->offset - o8;
	size_t		bits_len = (size_t) ((o8 + b->length + 7) / 8);

	*vpos = NO_POS;
	*dpos = NO_POS;
	if (b->length <= 0)
		return;
	if (b->validity)
		*vpos = stage_add(copies, ncopies, total, b->validity + base / 8, bits_len);
	if (b->phys == WRP_BOOL)
		*dpos = stage_add(copies, ncopies, total, b->values + base / 8, bits_len);
	else
	{
		warp_int64	w = warp_row_phys_bytes(b->phys, 1);

		*dpos = stage_add(copies, ncopies, total, b->values + base * w,
						  (size_t) ((o8 + b->length) * w));
	}
	b->offset = o8;
}

/* the device address of copy ci */
static const warp_uint8 *
stage_addr(const BatchSlot *bs, const StageCopy *copies, size_t ci)
{
	if (ci == NO_POS)
		return NULL;
	return copies[ci].dptr ? copies[ci].dptr : bs->d_stage + copies[ci].pos;
}

/* ------------------------------------------------------- the column cache */

extern "C" void
warp_gpu_keep_cache_pool(int device)
{
	cudaMemPool_t pool;
	uint64_t	keep = UINT64_MAX;

	if (cudaDeviceGetDefaultMemPool(&pool, device) != cudaSuccess ||
		cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep) != cudaSuccess)
		(void) cudaGetLastError();
}

/* entries live in stream-ordered memory: no device-wide sync to free them */
static void *
cache_alloc(void *ctx, uint64_t len)
{
	WarpGpu    *g = (WarpGpu *) ctx;
	void	   *p = NULL;

	if (cudaMallocAsync(&p, (size_t) len, g->copy_stream) != cudaSuccess)
	{
		(void) cudaGetLastError();
		return NULL;
	}
	return p;
}

static void
cache_free(void *ctx, void *ptr, void *ready)
{
	WarpGpu    *g = (WarpGpu *) ctx;

	/* every user's kernel is done (the entry was unreferenced) */
	if (cudaFreeAsync(ptr, g->copy_stream) != cudaSuccess)
		(void) cudaGetLastError();
	if (ready)
		(void) cudaEventDestroy((cudaEvent_t) ready);
}

/* let go of the cache entries a slot's kernel read */
static void
release_slot_entries(GpudColCache *cache, BatchSlot *bs)
{
	int			i;

	if (cache == NULL)
	{
		bs->ncents = 0;
		return;
	}
	for (i = 0; i < bs->ncents; i++)
		gpud_colcache_release(cache, bs->cents[i]);
	bs->ncents = 0;
}

/*
 * Serve copy c from the column cache if it lies in one of the batch's
 * decompressed buffers or in the file's mapping: a hit makes the compute
 * stream wait for the entry's fill; a miss copies into a new entry on the
 * copy stream (a decompressed buffer whole, whatever part of it c is).
 * false only on a CUDA error, or a ghost range the cache cannot serve.
 */
static bool
cache_copy(WarpGpu *g, BatchSlot *bs, StageCopy *c, const WarpGpuFile *file,
		   char *why, size_t whylen)
{
	const warp_uint8 *src = (const warp_uint8 *) c->src;
	const GpudDecodedBuf *db;
	const warp_uint8 *from;		/* what the entry holds a copy of */
	warp_uint64 size = 0;
	GpudColCacheOps ops;
	GpudColKey	key;
	GpudColEntry *e;
	bool		fill;

	if (file == NULL || c->len == 0)
		return true;
	db = gpud_decoded_find(file->decoded, src, c->len);
	if (db && db->ghost)
	{
		/* nothing is at src: the entry the batch's load found holds it */
		if (g->cache == NULL || db->held == NULL)
		{
			set_why(why, whylen, "a cached decompressed buffer is not in this GPU's column cache");
			return false;
		}
		e = db->held;
		gpud_colcache_ref(g->cache, e);
		fill = false;
		from = db->host;
	}
	else
	{
		if (g->cache == NULL)
			return true;
		if (db)
		{
			key = db->key;
			from = db->host;
			size = db->len;
		}
		else if (file->base != NULL && src >= file->base &&
				 src + c->len <= file->base + file->len)
		{
			key = file->id;
			key.off = (warp_uint64) (src - file->base);
			key.len = c->len;
			key.kind = GPUD_COL_RAW;
			from = src;
			size = c->len;
		}
		else
			return true;
		ops.alloc = cache_alloc;
		ops.free = cache_free;
		ops.ctx = g;
		e = gpud_colcache_get_sized(g->cache, &key, size, &ops, &fill);
		if (e == NULL)
			return true;		/* staged as usual */
	}
	if (fill)
	{
		cudaEvent_t ev = NULL;

		if (!CUDA_OK(cudaMemcpyAsync(e->ptr, from, size, cudaMemcpyHostToDevice,
									 g->copy_stream)) ||
			!CUDA_OK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming)) ||
			!CUDA_OK(cudaEventRecord(ev, g->copy_stream)))
		{
			if (ev)
				(void) cudaEventDestroy(ev);
			gpud_colcache_abandon(g->cache, e, &ops);
			return false;
		}
		gpud_colcache_filled(g->cache, e, ev);
		g->bytes += (warp_int64) size;
	}
	else
	{
		/* filled by an earlier batch, maybe of another query, maybe still
		 * copying: the kernel waits for it */
		if (!CUDA_OK(cudaStreamWaitEvent(g->stream, (cudaEvent_t) e->ready, 0)))
		{
			gpud_colcache_release(g->cache, e);
			return false;
		}
		g->cached_bytes += (warp_int64) c->len;
	}
	bs->cents[bs->ncents++] = e;
	c->dptr = (const warp_uint8 *) e->ptr + (src - from);
	return true;
}

/* milliseconds between two completed events, added to *acc */
static void
add_elapsed(cudaEvent_t a, cudaEvent_t b, double *acc)
{
	float		ms = 0;

	if (cudaEventElapsedTime(&ms, a, b) == cudaSuccess)
		*acc += ms;
	else
		(void) cudaGetLastError();
}

/*
 * Wait for the oldest batch whose kernels were not waited for, and take
 * its status and the group count (the count may already include later
 * kernels' groups: an upper bound, exact once nothing is pending).  false
 * (why set) when a row failed or on a CUDA error.
 */
static bool
wait_oldest(WarpGpu *g, char *why, size_t whylen)
{
	BatchSlot  *bs;
	int			i;

	if (g->npend == 0)
		return true;
	bs = &g->slot[g->pend[0]];
	for (i = 1; i < g->npend; i++)
		g->pend[i - 1] = g->pend[i];
	g->npend--;
	if (!CUDA_OK(cudaEventSynchronize(bs->ev_done)))
		return false;
	release_slot_entries(g->cache, bs);
	add_elapsed(bs->ev_copy0, bs->ev_copy1, &g->copy_ms);
	add_elapsed(bs->ev_run0, bs->ev_done, &g->kernel_ms);
	if (g->h_res->status != 0)
	{
		row_status_why(g->h_res->status, g->h_res->bad_row, why, whylen);
		return false;
	}
	g->used = (warp_int64) g->h_res->nused;
	return true;
}

/* wait for every batch queued; g->used is then exact */
static bool
wait_pending(WarpGpu *g, char *why, size_t whylen)
{
	while (g->npend > 0)
		if (!wait_oldest(g, why, whylen))
			return false;
	return true;
}

/* is slot k's batch still to be waited for? */
static bool
slot_pending(const WarpGpu *g, int k)
{
	int			i;

	for (i = 0; i < g->npend; i++)
		if (g->pend[i] == k)
			return true;
	return false;
}

extern "C" int
warp_gpu_run_batch(WarpGpu *g, const ArrowArray *cols, warp_int64 nrows,
				   const WarpGpuFile *file, char *why, size_t whylen)
{
	const WarpProgram *p = g->prog;
	BatchSlot  *bs = &g->slot[g->next_slot];
	StageCopy  *copies = NULL;
	size_t	   *pos = NULL;
	int			ncopies = 0;
	size_t		total = 0;
	int			c,
				i;
	warp_int64	r0;
	warp_int64	used_now = 0;	/* groups the device table may hold */

	if (g->failed || g->finished || context_poisoned)
	{
		set_why(why, whylen, "the GPU driver cannot go on");
		return -1;
	}
	g->rows_in += nrows;
	if (nrows <= 0)
		return 0;
	if (!CUDA_OK(cudaSetDevice(g->device)))
		goto fail;

	/*
	 * This slot's last batch (two back) must be done before its staging
	 * buffer and descriptors are reused; the queue is oldest first, so
	 * that waits for nothing newer.  Then describe the columns and plan
	 * their copies.
	 */
	while (slot_pending(g, g->next_slot))
		if (!wait_oldest(g, why, whylen))
			goto fail;
	copies = (StageCopy *) malloc(sizeof(StageCopy) * 4 * (p->ncols + 1));
	pos = (size_t *) malloc(sizeof(size_t) * 4 * (p->ncols + 1));
	if (copies == NULL || pos == NULL)
	{
		set_why(why, whylen, "out of memory");
		goto fail_free;
	}
	for (c = 0; c < p->ncols; c++)
	{
		WarpRowCol *rc = &bs->h_cols[c];
		const char *bad = warp_row_describe(&cols[c], &p->cols[c], nrows, rc);

		if (bad)
		{
			set_why(why, whylen, "column %d: %s", c, bad);
			goto fail_free;
		}
		stage_buf(&rc->data, copies, &ncopies, &total, &pos[4 * c], &pos[4 * c + 1]);
		pos[4 * c + 2] = pos[4 * c + 3] = NO_POS;
		if (rc->has_dict)
			stage_buf(&rc->dict, copies, &ncopies, &total, &pos[4 * c + 2], &pos[4 * c + 3]);
	}
	/* the column cache first; what it does not hold goes to staging */
	if (!CUDA_OK(cudaEventRecord(bs->ev_copy0, g->copy_stream)))
		goto fail_free;
	for (i = 0; i < ncopies; i++)
		if (!cache_copy(g, bs, &copies[i], file, why, whylen))
			goto fail_free;
	for (i = 0; i < ncopies; i++)
		if (copies[i].dptr == NULL)
		{
			copies[i].pos = align_up(total, STAGE_ALIGN);
			total = copies[i].pos + copies[i].len;
		}
	if (total > bs->stage_size)
	{
		size_t		size = align_up(total + total / 4, (size_t) 1 << 20);

		dev_free(g, bs->d_stage, bs->stage_size);
		bs->d_stage = NULL;
		bs->stage_size = 0;
		if (!dev_malloc(g, (void **) &bs->d_stage, size, why, whylen))
			goto fail_free;
		bs->stage_size = size;
	}
	for (c = 0; c < p->ncols; c++)
	{
		WarpRowCol *rc = &bs->h_cols[c];

		rc->data.validity = stage_addr(bs, copies, pos[4 * c]);
		rc->data.values = stage_addr(bs, copies, pos[4 * c + 1]);
		rc->dict.validity = stage_addr(bs, copies, pos[4 * c + 2]);
		rc->dict.values = stage_addr(bs, copies, pos[4 * c + 3]);
	}

	/* queue the copies: the column bytes, then their descriptors */
	for (i = 0; i < ncopies; i++)
		if (copies[i].len > 0 && copies[i].dptr == NULL &&
			!CUDA_OK(cudaMemcpyAsync(bs->d_stage + copies[i].pos, copies[i].src, copies[i].len,
									 cudaMemcpyHostToDevice, g->copy_stream)))
			goto fail_free;
	free(copies);
	free(pos);
	copies = NULL;
	pos = NULL;
	if (!CUDA_OK(cudaMemcpyAsync(bs->d_cols, bs->h_cols, sizeof(WarpRowCol) * p->ncols,
								 cudaMemcpyHostToDevice, g->copy_stream)) ||
		!CUDA_OK(cudaEventRecord(bs->ev_copy1, g->copy_stream)))
		goto fail;
	g->bytes += (warp_int64) total;

	/*
	 * The kernels of the batch before may still run: this batch's kernel
	 * is queued behind them without waiting when the group table has room
	 * for the groups both could create (always, in direct form), so the
	 * device goes from one batch to the next with no gap.  Else wait, for
	 * the exact group count.  Either way the batch before has finished
	 * reading the caller's memory (its copies) on return, as the caller
	 * frees it then.
	 */
	{
		warp_int64	bound = g->used;

		for (i = 0; i < g->npend; i++)
			bound += g->fan * g->slot[g->pend[i]].nrows;
		if (!g->grp.direct && bound + g->fan * nrows > g->max_fill)
		{
			if (!wait_pending(g, why, whylen))
				goto fail;
		}
		else
			used_now = bound;
		for (i = 0; i < g->npend; i++)
			if (!CUDA_OK(cudaEventSynchronize(g->slot[g->pend[i]].ev_copy1)))
				goto fail;
	}
	if (g->npend == 0)
		used_now = g->used;

	/* this batch's kernels, behind its copies */
	if (!CUDA_OK(cudaStreamWaitEvent(g->stream, bs->ev_copy1, 0)) ||
		!CUDA_OK(cudaEventRecord(bs->ev_run0, g->stream)))
		goto fail;
	for (r0 = 0; r0 < nrows;)
	{
		warp_int64	r1 = nrows;
		WarpRowEnv	env;

		/* in slices that cannot overflow the group table */
		if (!g->grp.direct)
		{
			warp_int64	fit = (g->max_fill - used_now) / g->fan;

			/* a bigger table first; a flush when it cannot grow */
			while (fit < nrows - r0 && g->used > 0)
			{
				int			grown = grow_groups(g, why, whylen);

				if (grown < 0)
					goto fail;
				if (grown == 0)
					break;
				fit = (g->max_fill - used_now) / g->fan;
			}
			if (fit < nrows - r0 && g->used > 0)
			{
				if (!flush_groups(g, why, whylen))
					goto fail;
				fit = g->max_fill / g->fan;
			}
			if (fit < nrows - r0)
				r1 = r0 + fit;
		}
		env.p = g->d_prog;
		env.tables = g->d_tables;
		env.cols = bs->d_cols;
		env.nrows = nrows;
		env.pre = g->pre;
		warp_gpu_rows<<<row_grid(g, r1 - r0), g->row_threads, g->row_smem, g->stream>>>(
			env, g->grp, (long long) r0, (long long) r1, g->d_res, g->prog->nnodes,
			g->prog->njoins);
		if (!CUDA_OK(cudaGetLastError()) ||
			!CUDA_OK(cudaMemcpyAsync(g->h_res, g->d_res, sizeof(DevResult),
									 cudaMemcpyDeviceToHost, g->stream)))
			goto fail;
		if (r1 < nrows)
		{
			/* another slice follows: it needs this one's group count */
			if (!CUDA_OK(cudaStreamSynchronize(g->stream)))
				goto fail;
			if (g->h_res->status != 0)
			{
				row_status_why(g->h_res->status, g->h_res->bad_row, why, whylen);
				goto fail;
			}
			g->used = (warp_int64) g->h_res->nused;
			used_now = g->used;
		}
		r0 = r1;
	}
	if (!CUDA_OK(cudaEventRecord(bs->ev_done, g->stream)))
		goto fail;
	bs->nrows = nrows;
	g->pend[g->npend++] = g->next_slot;
	g->next_slot = (g->next_slot + 1) % NBATCH_SLOTS;
	return 0;

fail_free:
	free(copies);
	free(pos);
fail:
	g->failed = true;
	return -1;
}

extern "C" int
warp_gpu_wait(WarpGpu *g, char *why, size_t whylen)
{
	int			rc = 0;

	if (context_poisoned)
	{
		set_why(why, whylen, "the GPU driver cannot go on");
		g->failed = true;
		return -1;
	}
	(void) cudaSetDevice(g->device);
	if (!g->failed && !wait_pending(g, why, whylen))
		rc = -1;
	/* whatever happened, nothing may still read the caller's memory */
	if (cudaStreamSynchronize(g->copy_stream) != cudaSuccess ||
		cudaStreamSynchronize(g->stream) != cudaSuccess)
	{
		if (rc == 0)
			set_why(why, whylen, "CUDA error while waiting for the device: %s",
					cudaGetErrorString(cudaGetLastError()));
		(void) cudaGetLastError();
		rc = -1;
	}
	else
	{
		int			i;

		for (i = 0; i < NBATCH_SLOTS; i++)
			release_slot_entries(g->cache, &g->slot[i]);
	}
	if (rc != 0 || g->failed)
	{
		g->failed = true;
		return -1;
	}
	return 0;
}

extern "C" int
warp_gpu_finish(WarpGpu *g, char *why, size_t whylen)
{
	if (g->failed || context_poisoned)
	{
		set_why(why, whylen, "the GPU driver cannot go on");
		return -1;
	}
	if (g->finished)
		return 0;
	if (!CUDA_OK(cudaSetDevice(g->device)) || !wait_pending(g, why, whylen) ||
		!flush_groups(g, why, whylen))
	{
		g->failed = true;
		return -1;
	}
	warp_row_result_final(&g->result, g->prog);
	g->finished = true;
	return 0;
}

extern "C" warp_int64
warp_gpu_ngroups(const WarpGpu *g)
{
	return g->finished ? g->result.n : 0;
}

extern "C" warp_int64
warp_gpu_group_key(const WarpGpu *g, warp_int64 grp, int k, bool *isnull)
{
	*isnull = g->result.knull[grp * g->result.nkeys + k] != 0;
	return g->result.keys[grp * g->result.nkeys + k];
}

extern "C" const WarpAggState *
warp_gpu_group_agg(const WarpGpu *g, warp_int64 grp, int a)
{
	return &g->result.aggs[grp * g->result.naggs + a];
}

extern "C" void
warp_gpu_counters(const WarpGpu *g, WarpCpuCounters *c)
{
	c->rows_in = g->rows_in;
	c->rows_filtered = g->h_res ? (warp_int64) g->h_res->rows_filtered : 0;
	c->rows_joined = g->h_res ? (warp_int64) g->h_res->rows_joined : 0;
}

extern "C" warp_int64
warp_gpu_cached_bytes(const WarpGpu *g)
{
	return g->cached_bytes;
}

extern "C" void
warp_gpu_flush_stats(const WarpGpu *g, double *copy_ms, double *host_ms)
{
	*copy_ms = g->flush_copy_ms;
	*host_ms = g->flush_host_ms;
}

extern "C" void
warp_gpu_transfer_stats(const WarpGpu *g, warp_int64 *bytes, double *copy_ms,
						double *kernel_ms)
{
	*bytes = g->bytes;
	*copy_ms = g->copy_ms;
	*kernel_ms = g->kernel_ms;
}
