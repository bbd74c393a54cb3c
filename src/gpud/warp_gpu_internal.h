/*-------------------------------------------------------------------------
 *
 * warp_gpu_internal.h
 *	  What the CUDA files of the GPU driver share (warp_gpu.h is the
 *	  interface; warp_gpu.cu describes how the driver works): the WarpGpu
 *	  structure with its batch slots, the limits of the group table and
 *	  staging, the kernels' declarations, error reporting, and the
 *	  functions one file of the driver calls in another.
 *
 *	  warp_gpu.cu          lifecycle: errors, devices, create and destroy
 *	  warp_gpu_kernels.cu  the kernels and the launch shape of the row kernel
 *	  warp_gpu_memory.cu   device allocations, the program and join tables
 *	                       on the device, the column cache's memory
 *	  warp_gpu_groups.cu   the device group table: sizing, growing, flushing
 *	  warp_gpu_stage.cu    pinned host memory, a batch's copies to the device
 *	  warp_gpu_batch.cu    running batches: the two-deep pipeline, waits
 *
 * For the .cu files only (CUDA types).
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_GPU_INTERNAL_H
#define WARP_GPU_INTERNAL_H

#include <cuda_runtime.h>

extern "C" {
#include "warp_gpu.h"
#include "warp_row.h"
#include "warp_tile.h"
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
	warp_int64	topn_compact_at;	/* row mode, Top-N: candidates on the
									 * host that trigger a compaction */

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

	/* the tile kernel (warp_gpu_tile.cu), when the program has its shape */
	bool		tile_on;
	WarpTilePlan tile;
	int			tile_shared_slots;	/* direct groups pre-aggregated per block */
	size_t		tile_smem;
	int			tile_max_blocks;
};

/* a sticky CUDA error happened: every later call fails (warp_gpu.cu) */
extern bool context_poisoned;

/* ------------------------------------------------------------ errors */

extern void set_why(char *why, size_t whylen, const char *fmt,...);
/* true if e is success; else note it (and whether it poisoned the context) */
extern bool cuda_ok(cudaError_t e, const char *what, char *why, size_t whylen);

#define CUDA_OK(call) cuda_ok((call), #call, why, whylen)

/* ask for blocking synchronization on a device, once (warp_gpu.cu) */
extern void set_blocking_sync(int device);

/* ----------------------------------------------------------- utilities */

static inline size_t
align_up(size_t v, size_t a)
{
	return (v + a - 1) / a * a;
}

static inline int
grid_for(const WarpGpu *g, long long n)
{
	long long	blocks = (n + BLOCK_THREADS - 1) / BLOCK_THREADS;
	long long	max_blocks = (long long) g->nsm * 8;

	if (blocks > max_blocks)
		blocks = max_blocks;
	return blocks < 1 ? 1 : (int) blocks;
}

/* blocks of warp_gpu_rows for n rows: at most one resident wave */
static inline int
row_grid(const WarpGpu *g, long long n)
{
	long long	blocks = (n + g->row_threads - 1) / g->row_threads;

	if (blocks > g->row_max_blocks)
		blocks = g->row_max_blocks;
	return blocks < 1 ? 1 : (int) blocks;
}

/* ------------------------------------------- kernels (warp_gpu_kernels.cu) */

__global__ void warp_gpu_rows(const __grid_constant__ WarpRowEnv env,
							  const __grid_constant__ WarpRowGroups grp,
							  long long r0, long long r1, DevResult *res, int nnodes,
							  int njoins);
__global__ void warp_gpu_clear(WarpRowGroups grp, long long nslots, const WarpAggSpec *aggs);
__global__ void warp_gpu_compact(WarpRowGroups grp, long long nslots, warp_int64 *okeys,
								 warp_uint8 *oknull, WarpAggState *oaggs,
								 unsigned long long *counter, unsigned long long limit);
__global__ void warp_gpu_regroup(WarpRowGroups from, long long nslots, WarpRowGroups to);

/* threads, shared memory and grid of warp_gpu_rows for the program */
extern bool row_launch_shape(WarpGpu *g, const WarpProgram *prog, int smem_optin,
							 char *why, size_t whylen);

/* ------------------------------------------- the tile kernel (warp_gpu_tile.cu) */

/* whether the job runs the tile kernel, and its launch shape (at create,
 * once the group table is set up) */
extern bool tile_launch_shape(WarpGpu *g, const WarpProgram *prog, WarpJoinTable *const *tables);
/* the tile kernel over rows [r0, r1) of a batch */
extern bool tile_launch(WarpGpu *g, const WarpRowEnv *env, warp_int64 r0, warp_int64 r1,
						char *why, size_t whylen);

/* ------------------------------------------- memory (warp_gpu_memory.cu) */

/* device allocations through the job's account (WarpGpuMem) */
extern bool dev_malloc(WarpGpu *g, void **p, size_t n, char *why, size_t whylen);
extern void dev_free(WarpGpu *g, void *p, size_t n);
/* the program, and every join's table, on the device (at create) */
extern bool upload_program(WarpGpu *g, const WarpProgram *p, char *why, size_t whylen);
extern bool upload_tables(WarpGpu *g, const WarpProgram *p, WarpJoinTable *const *tables,
						  char *why, size_t whylen);
/* the column cache's entries, in stream-ordered memory */
extern void *cache_alloc(void *ctx, uint64_t len);
extern void cache_free(void *ctx, void *ptr, void *ready);
/* let go of the cache entries a slot's kernel read */
extern void release_slot_entries(GpudColCache *cache, BatchSlot *bs);

/* ------------------------------------------- groups (warp_gpu_groups.cu) */

/* size and allocate the group table (at create) */
extern bool setup_groups(WarpGpu *g, const WarpProgram *p, WarpJoinTable *const *tables,
						 char *why, size_t whylen);
/* double a hash group table: 1 grown, 0 cannot, -1 a CUDA error */
extern int	grow_groups(WarpGpu *g, char *why, size_t whylen);
/* bring the device table's groups to the host result and clear it */
extern bool flush_groups(WarpGpu *g, char *why, size_t whylen);

/* ------------------------------------------- staging (warp_gpu_stage.cu) */

/* describe a batch's columns into slot bs and queue their copies */
extern bool stage_batch(WarpGpu *g, BatchSlot *bs, const ArrowArray *cols, warp_int64 nrows,
						const WarpGpuFile *file, char *why, size_t whylen);

#endif							/* WARP_GPU_INTERNAL_H */
