/*-------------------------------------------------------------------------
 *
 * gpud_decoded.h
 *	  Decompressed column buffers of compressed Arrow files kept in the GPU
 *	  column cache, so that a query over columns an earlier query loaded
 *	  neither decompresses them nor copies them over PCIe again.
 *
 * The cache keys such a buffer by its file and the compressed buffer's
 * byte range (GPUD_COL_DECODED, gpud_colcache.h).  gpud_decoded_load, a
 * load hook for gpud_prefetch.h, loads one column of a batch and records
 * in the batch's GpudDecoded, for each buffer of a plain fixed-width
 * column (no dictionary, no children):
 *
 *   - when the cache holds every buffer the column needs: the entries,
 *     referenced until the batch is released, and the column's buffers
 *     point into "ghost" ranges, address space reserved with no access
 *     (nothing is on the host: reading one faults), each standing for its
 *     entry; nothing is read from the file nor decompressed;
 *   - otherwise: the column as arrow_load_column loads it, and each
 *     decompressed buffer's host bytes with their key, so that the GPU
 *     driver's copy of them fills an entry for the next query.
 *
 * The GPU driver asks gpud_decoded_find for every range it would copy
 * (warp_gpu.cu, cache_copy) and serves a ghost range from its entry.  A
 * batch with ghost ranges must reach nothing else that reads its memory:
 * the hook is for GPU parts whose driver reads through the column cache
 * the entries belong to, and a job that falls back to the CPU driver
 * loads every batch again without it.
 *
 * Pure C (no PostgreSQL, no CUDA).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUD_DECODED_H
#define GPUD_DECODED_H

#include <stdbool.h>
#include <stdint.h>

#include "arrow.h"
#include "gpud_colcache.h"

/* one decompressed buffer of a batch */
typedef struct GpudDecodedBuf
{
	const uint8_t *host;		/* the decoded bytes, or the ghost range */
	uint64_t	len;			/* bytes at host (the entry's size) */
	GpudColKey	key;			/* GPUD_COL_DECODED: the compressed buffer */
	GpudColEntry *held;			/* ghost: the entry holding the bytes */
	bool		ghost;
} GpudDecodedBuf;

/* a batch's decompressed buffers (the hook's per-batch state) */
typedef struct GpudDecoded
{
	int			n;
	int			cap;
	GpudDecodedBuf *bufs;
} GpudDecoded;

/* the hook's context: one file, read by parts of one GPU */
typedef struct GpudDecodedSource
{
	GpudColCache *cache;		/* the GPU's column cache */
	GpudColKey	id;				/* the file's identity (off, len, kind unused) */
	/*
	 * Also uncompressed batches (read with pread into staging memory):
	 * their buffers are keyed GPUD_COL_RAW by file offset and copy length,
	 * exactly as the driver keys a buffer it reads through the file's
	 * registered window, so either read path fills entries the other finds.
	 */
	bool		raw;
	/* counters, updated atomically: columns served from the cache, and
	 * the decompressed bytes they stand for */
	uint64_t	columns_served;
	uint64_t	bytes_served;
} GpudDecodedSource;

/* a GpudLoadHook's load and done, ctx a GpudDecodedSource */
extern int	gpud_decoded_load(void *ctx, ArrowFile *file, int batch,
							  const ArrowBatchMeta *meta, int field, ArrowArena *arena,
							  ArrowArray *out, void **state, ArrowError *err);
extern void gpud_decoded_done(void *ctx, void *state);

/* the buffer of d holding [p, p + len), or NULL (d may be NULL) */
extern const GpudDecodedBuf *gpud_decoded_find(const GpudDecoded *d, const void *p,
											   uint64_t len);

#endif							/* GPUD_DECODED_H */
