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

/* call once per query execution, before any get/put */
extern void warp_dimcache_begin_query(void);

/* the cache key of a dimension plan, or NULL if it cannot be cached */
extern char *warp_dimcache_key(Plan *plan, EState *estate);

/* the entry for key (valid for the rest of this query), or NULL */
extern const WarpDimCached *warp_dimcache_get(const char *key);

/* keep a copy of dim under key (if it fits) */
extern void warp_dimcache_put(const char *key, const WarpDimCached *dim,
							  const int16 *typlen, const bool *typbyval);

#endif							/* WARP_DIMCACHE_H */
