/*-------------------------------------------------------------------------
 *
 * gpud_colcache.h
 *	  The GPU column cache of pg_warp_gpud: byte ranges of Arrow files
 *	  (column buffers of record batches) kept resident in device memory
 *	  across queries and shared by every job, so that a query over columns
 *	  already on the device copies nothing over PCIe.
 *
 * Entries are keyed by the file's identity (device, inode, size, mtime, so a
 * rewritten or grown file never matches an old entry) and the byte range:
 * either the bytes of that range themselves (kind GPUD_COL_RAW) or, for a
 * compressed buffer, what it decompresses to (GPUD_COL_DECODED; the entry
 * then has its own size, and gpud_decoded.h says how it is used).
 * The job that misses allocates the entry and fills it (an asynchronous
 * copy); it marks it filled with an opaque "ready" handle (a CUDA event
 * recorded after the copy) that later users wait on before reading.  An
 * entry being filled is not handed to anyone else: they copy the bytes
 * themselves that once.  Users hold a reference until their kernel is done;
 * only unreferenced entries are evicted, least recently used first, to
 * make room within the budget.  Device memory is allocated and freed
 * through callbacks, so this index is pure C (unit-tested with malloc:
 * test/unit/test_gpud_colcache.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUD_COLCACHE_H
#define GPUD_COLCACHE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct GpudColKey
{
	uint64_t	dev;
	uint64_t	ino;
	uint64_t	size;
	int64_t		mtime_sec;
	int64_t		mtime_nsec;
	uint64_t	off;			/* byte range in the file */
	uint64_t	len;
	uint64_t	kind;			/* GpudColKind */
} GpudColKey;

typedef enum GpudColKind
{
	GPUD_COL_RAW = 0,			/* the range's bytes */
	GPUD_COL_DECODED = 1		/* the compressed buffer at the range,
								 * decompressed */
} GpudColKind;

typedef struct GpudColEntry
{
	GpudColKey	key;
	void	   *ptr;			/* device memory, size bytes */
	uint64_t	size;			/* key.len for GPUD_COL_RAW */
	void	   *ready;			/* the filler's handle; NULL while filling */
	int			refs;
	struct GpudColEntry *hnext; /* hash chain */
	struct GpudColEntry *prev;	/* LRU list, most recent first */
	struct GpudColEntry *next;
} GpudColEntry;

/* device memory for entries; free also disposes of the ready handle */
typedef struct GpudColCacheOps
{
	void	   *(*alloc) (void *ctx, uint64_t len);	/* NULL if none */
	void		(*free) (void *ctx, void *ptr, void *ready);
	void	   *ctx;
} GpudColCacheOps;

typedef struct GpudColCache
{
	pthread_mutex_t mutex;
	uint64_t	budget;			/* bytes entries may take; 0: cache off */
	uint64_t	used;
	uint64_t	nentries;
	GpudColEntry **buckets;
	uint64_t	nbuckets;		/* a power of two */
	GpudColEntry lru;			/* sentinel: lru.next most recent */
	/* statistics */
	uint64_t	hits;
	uint64_t	misses;
	uint64_t	evictions;
} GpudColCache;

/* false if memory for the index runs out (the cache is then off) */
extern bool gpud_colcache_init(GpudColCache *c, uint64_t budget);

/*
 * The entry for key, with a reference taken, or NULL (no room even after
 * evicting every unreferenced entry, the range is bigger than the budget,
 * the allocation failed, or another job is filling it).  *fill is true
 * when the entry is new: the caller copies the bytes into entry->ptr and
 * then calls gpud_colcache_filled (or gpud_colcache_abandon).  Otherwise
 * the caller waits on entry->ready before reading.  ops frees evicted
 * entries and allocates the new one.
 */
extern GpudColEntry *gpud_colcache_get(GpudColCache *c, const GpudColKey *key,
									   const GpudColCacheOps *ops, bool *fill);

/* the same for an entry of `size` bytes (GPUD_COL_DECODED keys) */
extern GpudColEntry *gpud_colcache_get_sized(GpudColCache *c, const GpudColKey *key,
											 uint64_t size, const GpudColCacheOps *ops,
											 bool *fill);

/*
 * The filled entry for key, with a reference taken, or NULL: a lookup that
 * never creates an entry (a miss is not counted).
 */
extern GpudColEntry *gpud_colcache_find(GpudColCache *c, const GpudColKey *key);

/* one more reference to e, which the caller already holds one of */
extern void gpud_colcache_ref(GpudColCache *c, GpudColEntry *e);

/* the filler's copy is queued; ready is what later users wait on */
extern void gpud_colcache_filled(GpudColCache *c, GpudColEntry *e, void *ready);

/* the filler could not fill it: drop the entry (it holds the only ref) */
extern void gpud_colcache_abandon(GpudColCache *c, GpudColEntry *e,
								  const GpudColCacheOps *ops);

/* the user's kernel is done with it */
extern void gpud_colcache_release(GpudColCache *c, GpudColEntry *e);

#endif							/* GPUD_COLCACHE_H */
