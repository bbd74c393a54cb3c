/*-------------------------------------------------------------------------
 *
 * gpud_pinpool.h
 *	  A thread-safe allocator over one region of pinned host memory, for
 *	  the batches a lane's parts decompress ahead (gpud_prefetch.h).
 *
 * Buffers decompressed into malloc'd memory cross PCIe at pageable speed
 * (8-9 GB/s on an H100, and the copy blocks the part's thread); from
 * pinned memory the copy is asynchronous at link speed.  Pinning memory
 * per query costs milliseconds per megabyte, so each lane keeps one
 * region, made at its first compressed job, shared by the parts of every
 * job on the lane.  Requests of GPUD_PINPOOL_MIN bytes or more are carved
 * first-fit from the region (a 64-byte header before each block holds its
 * length; freed blocks are merged with their free neighbours); smaller
 * requests, and any that does not fit, go to malloc, so an allocation
 * never waits for another job.  gpud_pinpool_free tells the two apart by
 * address.
 *
 * Pure C (no PostgreSQL, no CUDA): the caller supplies the region.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUD_PINPOOL_H
#define GPUD_PINPOOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arrow.h"

#define GPUD_PINPOOL_MIN ((size_t) 64 << 10)

typedef struct GpudPinExtent
{
	size_t		off;
	size_t		len;
} GpudPinExtent;

typedef struct GpudPinPool
{
	pthread_mutex_t lock;
	uint8_t    *base;
	size_t		size;
	GpudPinExtent *free;		/* free extents, by offset, never adjacent */
	int			nfree;
	int			maxfree;
	size_t		used;			/* bytes carved (headers included) */
	ArrowAllocator alloc;		/* gpud_pinpool_alloc / _free over this */
} GpudPinPool;

/* a pool over [base, base + size); false when out of memory */
extern bool gpud_pinpool_init(GpudPinPool *pool, void *base, size_t size);
extern void gpud_pinpool_destroy(GpudPinPool *pool);

/* 64-byte aligned memory of at least size bytes, or NULL */
extern void *gpud_pinpool_alloc(GpudPinPool *pool, size_t size);
extern void gpud_pinpool_free(GpudPinPool *pool, void *p);

/* is p inside the region? */
extern bool gpud_pinpool_owns(const GpudPinPool *pool, const void *p);

#endif							/* GPUD_PINPOOL_H */
