/*-------------------------------------------------------------------------
 *
 * warp_gpu.h
 *	  The GPU ("device") driver of the engine: runs a WarpProgram over
 *	  record batches in one fused CUDA kernel per batch and keeps the
 *	  partial aggregate of every group, with the same meaning as the CPU
 *	  driver (warp_cpu.h), whose results it must reproduce exactly.
 *
 * Only pg_warp_gpud links it (CUDA runtime, static); backends never do.
 * The driver refuses (NULL from warp_gpu_create, -1 from a run) whatever it
 * cannot do exactly, and the caller then runs the whole query on the CPU
 * driver, which also reports PostgreSQL's exact error when a row raises
 * one: the GPU driver never reports SQL errors itself.
 *
 * Usage: warp_gpu_create, warp_gpu_run_batch per record batch (columns
 * loaded by the Arrow library in host memory, pinned or not), then
 * warp_gpu_finish and the group accessors, then warp_gpu_destroy.  One
 * WarpGpu is used by one thread at a time.
 *
 * Pure C interface; no CUDA types.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_GPU_H
#define WARP_GPU_H

#include "arrow.h"
#include "gpud_colcache.h"
#include "gpud_decoded.h"
#include "warp_cpu.h"
#include "warp_join.h"
#include "warp_program.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct WarpGpu WarpGpu;

/* number of usable CUDA devices; 0 (with a reason in why) when none */
extern int	warp_gpu_device_count(char *why, size_t whylen);
/* create the device's context and load every kernel now, not at the
 * first query; -1 with a reason on a CUDA error */
extern int	warp_gpu_warmup(int device, char *why, size_t whylen);

/* the device's name ("NVIDIA H200") */
extern void warp_gpu_device_name(int device, char *buf, size_t len);

/* pinned host memory for batch buffers; NULL on failure */
extern void *warp_gpu_host_alloc(size_t size);
extern void warp_gpu_host_free(void *p);

/*
 * Register read-only host memory (a file mapping) for DMA at link speed;
 * -1 with a reason when the device or the driver cannot.  Costs about as
 * much as copying it once: callers cache registrations.
 */
extern int	warp_gpu_host_register(void *p, size_t len, char *why, size_t whylen);
extern void warp_gpu_host_unregister(void *p);

/*
 * Device memory accounting: grow is asked before every device allocation
 * (false: the allocation is refused and the driver gives up, -1/NULL), and
 * shrink told after a buffer is freed to be replaced by a bigger one.
 */
typedef struct WarpGpuMem
{
	bool		(*grow) (void *ctx, warp_uint64 bytes);
	void		(*shrink) (void *ctx, warp_uint64 bytes);
	void	   *ctx;
} WarpGpuMem;

/*
 * An upper bound of the device memory a driver for prog will allocate at
 * create and at the first batches, with staging buffers of stage_bytes
 * (one batch's column bytes); the caller reserves it before creating.
 */
extern warp_uint64 warp_gpu_estimate(const WarpProgram *prog, WarpJoinTable *const *tables,
									 warp_uint64 stage_bytes);

/*
 * A driver for prog on CUDA device `device`, reading through `cache` (that
 * device's column cache, or NULL: none); tables[i] is the join table of
 * .table i, as for warp_cpu_create (uploaded once, here; the caller may
 * free its copies after).  prog must stay valid until warp_gpu_destroy.
 * mem (NULL: none) accounts for its device memory.  NULL with a reason
 * when the program uses something the GPU driver does not do exactly, or
 * on a CUDA error (device out of memory included) or a refused allocation.
 */
extern WarpGpu *warp_gpu_create(int device, GpudColCache *cache, const WarpProgram *prog,
								WarpJoinTable *const *tables, const WarpGpuMem *mem,
								char *why, size_t whylen);

/* free and total device memory now; -1 on a CUDA error */
extern int	warp_gpu_memory(int device, warp_uint64 *free_bytes, warp_uint64 *total_bytes);

/*
 * Keep the memory column caches free on device `device` in its memory pool
 * instead of returning it to the driver at every synchronization.  Call
 * once per device that has a column cache, before any driver exists.
 */
extern void warp_gpu_keep_cache_pool(int device);

/*
 * Where a batch's column buffers live, for the column cache: a file's
 * mapping (its registered window, or base NULL: none), the file's identity
 * (id.off, id.len and id.kind are not used), and the batch's decompressed
 * buffers (NULL: none).  Buffers inside [base, base + len) are looked up in
 * the cache by file and byte range, those inside a decompressed buffer by
 * the compressed buffer it came from; a hit is read in place on the
 * device, a miss is copied into a new entry that later queries find.  A
 * decompressed buffer's ghost range (gpud_decoded.h) is always served from
 * the entry it holds.
 */
typedef struct WarpGpuFile
{
	const warp_uint8 *base;
	warp_uint64 len;
	GpudColKey	id;
	const GpudDecoded *decoded;
} WarpGpuFile;

/*
 * Queue one record batch: cols[c] is program column c, nrows rows; file
 * (NULL: no caching) says where the buffers live.  The
 * batch runs while the caller reads the next one, so its columns' memory
 * (the buffers the ArrowArrays point to) must stay as it is until the next
 * warp_gpu_run_batch, warp_gpu_wait, warp_gpu_finish or warp_gpu_destroy
 * call returns; the ArrowArray structs themselves may go at once.  0 = ok;
 * -1 = the query must be re-run on the CPU driver (why says why: a row of
 * this or the previous batch raised an error or needs the CPU driver, an
 * unsupported column layout, device out of memory, a CUDA error).  After
 * -1 the driver only accepts warp_gpu_wait and warp_gpu_destroy.
 */
extern int	warp_gpu_run_batch(WarpGpu *g, const ArrowArray *cols, warp_int64 nrows,
							   const WarpGpuFile *file, char *why, size_t whylen);

/*
 * Wait until nothing queued runs or copies any more: every batch's memory
 * may then be reused.  0, or -1 (why set) when a batch failed, as above;
 * either way nothing reads the caller's memory after it returns.
 */
extern int	warp_gpu_wait(WarpGpu *g, char *why, size_t whylen);

/* Bring every group to the host (after the last batch).  0 or -1 as above. */
extern int	warp_gpu_finish(WarpGpu *g, char *why, size_t whylen);

/* After warp_gpu_finish: the groups, as warp_cpu_ngroups etc. give them
 * (warp_gpu_group_key: also rows taken in row mode). */
extern warp_int64 warp_gpu_ngroups(const WarpGpu *g);
extern warp_int64 warp_gpu_group_key(const WarpGpu *g, warp_int64 grp, int k, bool *isnull);
extern const WarpAggState *warp_gpu_group_agg(const WarpGpu *g, warp_int64 grp, int a);

extern void warp_gpu_counters(const WarpGpu *g, WarpCpuCounters *c);

/*
 * Row mode (prog->emit_rows): after a batch, wait for it and bring the rows
 * it appended to the host (0, or -1 as warp_gpu_run_batch); then
 * warp_gpu_nrows rows are read with warp_gpu_group_key, and
 * warp_gpu_forget_rows drops them (not under a Top-N, whose candidates
 * are kept, compacted on the host, and read after warp_gpu_finish).
 */
extern int	warp_gpu_take_rows(WarpGpu *g, char *why, size_t whylen);
extern warp_int64 warp_gpu_nrows(const WarpGpu *g);
extern void warp_gpu_forget_rows(WarpGpu *g);

/* bytes copied host to device, milliseconds spent in those copies and in
 * the kernels (from the end of a batch's copies to its kernels' end; with
 * copies and kernels overlapping, the two may sum to more than the scan) */
/* time spent bringing groups back: compaction and copy, host merge */
extern void warp_gpu_flush_stats(const WarpGpu *g, double *copy_ms, double *host_ms);
extern void warp_gpu_transfer_stats(const WarpGpu *g, warp_int64 *bytes, double *copy_ms,
									double *kernel_ms);

/* bytes the kernels read from the column cache instead of copying */
extern warp_int64 warp_gpu_cached_bytes(const WarpGpu *g);

/*
 * A sticky CUDA error happened (the context is unusable for every
 * session): the daemon must exit and be restarted.
 */
extern bool warp_gpu_context_poisoned(void);

extern void warp_gpu_destroy(WarpGpu *g);

#ifdef __cplusplus
}
#endif

#endif							/* WARP_GPU_H */
