/*-------------------------------------------------------------------------
 *
 * gpud_prefetch.h
 *	  Loading a part's record batches of one Arrow file ahead, on helper
 *	  threads, handed over in order.
 *
 * A compressed batch costs its decompression on the CPU (about 1-4 GB/s
 * per thread for LZ4 and ZSTD), which one part's thread did serially
 * between the GPU's kernels.  A prefetcher loads up to `depth` batches of
 * the part's list ahead on `nthreads` threads, each batch entirely by one
 * thread (meta, then every column), so decompression runs in parallel and
 * overlaps the device's work; the part takes them in list order and
 * releases each once nothing reads its memory.  A load error stays with
 * its batch: the part meets it in order, exactly as a serial read would.
 *
 * The file is shared by the threads: its source must be safe to read from
 * several threads (pread and memory are), and no field loaded may be
 * dictionary-encoded (loading those changes the file's dictionary cache).
 * Memory comes from `alloc`, which must be thread-safe (malloc).
 *
 * Pure C (no PostgreSQL): helper threads block every signal.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUD_PREFETCH_H
#define GPUD_PREFETCH_H

#include <stdbool.h>
#include <stdint.h>

#include "arrow.h"

/* one loaded batch */
typedef struct GpudLoaded
{
	int			status;			/* 0, or -1 with err set */
	ArrowError	err;
	ArrowBatchMeta meta;
	ArrowArena	arena;			/* meta's and the columns' memory */
	ArrowArray *cols;			/* per requested field */
	void	   *state;			/* the load hook's, or NULL */
} GpudLoaded;

/*
 * How a column is loaded: arrow_load_column's way unless a hook says
 * otherwise (gpud_decoded.h: from the GPU column cache without
 * decompressing).  load is arrow_load_column plus the batch's *state
 * (NULL at first), which done gets back when the batch is released or
 * the prefetcher stops; both are called from any thread.
 */
typedef struct GpudLoadHook
{
	int			(*load) (void *ctx, ArrowFile *file, int batch, const ArrowBatchMeta *meta,
						 int field, ArrowArena *arena, ArrowArray *out, void **state,
						 ArrowError *err);
	void		(*done) (void *ctx, void *state);
	void	   *ctx;
} GpudLoadHook;

typedef struct GpudPrefetch GpudPrefetch;

/*
 * Start loading batches[0 .. n) of file (fields[0 .. ncols) of each) ahead,
 * through hook (NULL: arrow_load_column; copied).
 * Every batch number must exist in the file.  NULL when out of memory (the
 * caller then reads serially).  Threads that cannot be created are not
 * used: gpud_prefetch_take loads what no thread has claimed.
 */
extern GpudPrefetch *gpud_prefetch_start(ArrowFile *file, const int32_t *batches, int n,
										 const int32_t *fields, int ncols,
										 const ArrowAllocator *alloc,
										 const GpudLoadHook *hook, int nthreads,
										 int depth);

/* the i-th batch of the list, waiting for it; i must follow the last taken */
extern GpudLoaded *gpud_prefetch_take(GpudPrefetch *pf, int i);

/* nothing reads the taken batch l any more: free its memory */
extern void gpud_prefetch_release(GpudPrefetch *pf, GpudLoaded *l);

/* stop the threads (a load in progress finishes) and free everything */
extern void gpud_prefetch_stop(GpudPrefetch *pf);

/*
 * Threads and depth for one part: the machine's ncpu cores shared by the
 * job's nparts parts, at most GPUD_PREFETCH_THREADS each; ahead, twice as
 * many batches as threads plus one, but no more than GPUD_PREFETCH_BYTES
 * of decompressed batches of batch_bytes each nor more than `avail` bytes
 * (what the daemon's GPUD_PREFETCH_TOTAL has left: that memory is the
 * host's, outside every budget), and never fewer than 2.
 */
#define GPUD_PREFETCH_THREADS 8
#define GPUD_PREFETCH_BYTES ((uint64_t) 256 << 20)
#define GPUD_PREFETCH_TOTAL ((uint64_t) 1 << 30)
extern void gpud_prefetch_shape(long ncpu, int nparts, uint64_t batch_bytes, uint64_t avail,
								int *nthreads, int *depth);

/* should a part's batches of this file be loaded ahead (compressed
 * bodies, no dictionary-encoded field among fields)? */
extern bool gpud_prefetch_wanted(const ArrowFile *file, const ArrowBatchMeta *meta,
								 const int32_t *fields, int ncols);

#endif							/* GPUD_PREFETCH_H */
