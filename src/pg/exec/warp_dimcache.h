/*
 * warp_dimcache.h — built dimension tables kept across queries by a
 * backend (see warp_dimcache.c).
 */
#ifndef WARP_DIMCACHE_H
#define WARP_DIMCACHE_H

#include "postgres.h"

#include "nodes/execnodes.h"
#include "nodes/plannodes.h"

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

/* with shared_preload_libraries: the cluster-wide account (shared memory) */
extern void pgwarp_dimcache_preload(void);

/* call once per query execution, before any get/put */
extern void warp_dimcache_begin_query(void);

/*
 * The cache key of a dimension plan, or NULL (with *why, a phrase for
 * EXPLAIN ANALYZE) if it cannot be cached; *gen is the change counter of a
 * heap table the plan scans (warp_dimcache.c), 0 otherwise, to be passed
 * to get and put.
 */
extern char *warp_dimcache_key(Plan *plan, EState *estate, uint64 *gen,
							   const char **why);

/* the entry for key built at gen (valid for the rest of this query), or NULL */
extern const WarpDimCached *warp_dimcache_get(const char *key, uint64 gen);

/* keep a copy of dim under key and gen (if it fits; *why says why it was
 * not kept) */
extern void warp_dimcache_put(const char *key, uint64 gen, const WarpDimCached *dim,
							  const int16 *typlen, const bool *typbyval,
							  const char **why);

#endif							/* WARP_DIMCACHE_H */
