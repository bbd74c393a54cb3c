/*
 * warp_dimcache.h — built dimension tables kept across queries by a
 * backend (see warp_dimcache.c).
 */
#ifndef WARP_DIMCACHE_H
#define WARP_DIMCACHE_H

#include "postgres.h"

#include "nodes/execnodes.h"
#include "nodes/plannodes.h"
#include "utils/snapshot.h"

/* A built dimension: per build row its key and payload id, and the
 * distinct payload tuples (npayloads x npay values). */
typedef struct WarpDimCached
{
	int64		rows;
	int64	   *keys;
	int32	   *pids;
	int			npayloads;
	int			npay;
	Datum	   *pvalues;
	bool	   *pnulls;
	void	   *cxt;			/* the entry's memory (cache side) */
} WarpDimCached;

/* call once per query execution, before any get/put */
extern void warp_dimcache_begin_query(void);

/*
 * The cache key of a dimension plan, or NULL (with *why, a phrase for
 * EXPLAIN ANALYZE) if it cannot be cached;
 * *heap_relid is the heap table it scans (else InvalidOid), to be passed
 * to get and put with the snapshot the plan runs under.
 */
extern char *warp_dimcache_key(Plan *plan, EState *estate, Oid *heap_relid,
							   const char **why);

/* the entry for key (valid for the rest of this query), or NULL; *why says
 * why an entry of the key could not be used, if one could not */
extern const WarpDimCached *warp_dimcache_get(const char *key, Oid heap_relid,
											  Snapshot snapshot, const char **why);

/* keep a copy of dim, built under snapshot, under key (if it fits; *why
 * says why it was not kept) */
extern void warp_dimcache_put(const char *key, Oid heap_relid, Snapshot snapshot,
							  const WarpDimCached *dim, const int16 *typlen,
							  const bool *typbyval, const char **why);

#endif							/* WARP_DIMCACHE_H */
