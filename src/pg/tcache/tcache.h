/*
 * tcache.h — the GPU table cache, backend side: heap tables attached to
 * it have a replica in pg_warp_gpud (src/gpud/gpud_tcache_store.c) kept
 * current from the row changes an AFTER ROW trigger captures, and
 * WarpPreAgg plans over them run in the daemon under the query's snapshot.
 *
 *   tcache_layout.c   which columns a replica holds, a version's record
 *   tcache_capture.c  the capture trigger, the transaction's change
 *                     buffers, shipping them, the shared capture epoch
 *   tcache_ring.c     the change log ring shared with the daemon
 *   tcache_load.c     loading a replica from the table's pages
 *   tcache_query.c    may a query use it, and its snapshot's classes
 *   tcache_sql.c      attach, detach, stats
 */
#ifndef TCACHE_H
#define TCACHE_H

#include "postgres.h"

#include "access/htup_details.h"
#include "lib/stringinfo.h"
#include "utils/rel.h"
#include "utils/snapshot.h"

#include "gpud_client.h"

#define TCACHE_TRIGGER_NAME	"pg_warp_gpu_cache"

/* GUCs (guc.c) */
extern bool pgwarp_gpu_table_cache;
extern int	pgwarp_gpu_table_cache_memory;	/* MB */
extern int	pgwarp_gpu_table_cache_log;	/* MB */
extern int	pgwarp_gpu_table_cache_ring;	/* MB */

/* The columns a replica holds: every column of an engine-native type. */
typedef struct TcacheLayout
{
	int			ncols;
	AttrNumber *attnos;			/* per cached column */
	uint8	   *kinds;			/* GPUD_CACHE_COL_* */
	Oid		   *types;
	int			natts;
	int		   *col_of_att;		/* [natts + 1]: cached column, or -1 */
	uint32		hash;
} TcacheLayout;

/* tcache_layout.c */
extern void tcache_layout(TupleDesc desc, TcacheLayout *lay);
extern void tcache_make_key(Relation rel, const TcacheLayout *lay, GpudCacheKey *key);
extern void tcache_fill_request(GpudCacheReq *req, int op, Relation rel,
								const TcacheLayout *lay, const GpudCacheKey *key);
/* a version's header as a record; false when no snapshot can see it */
extern bool tcache_version_rec(HeapTupleHeader htup, TransactionId horizon,
							   GpudCacheRec *rec);
/* rec (INSERT) and the tuple's values, appended to buf */
extern void tcache_append_insert(StringInfo buf, const GpudCacheRec *rec,
								 const TcacheLayout *lay, TupleDesc desc, HeapTuple tup,
								 Datum *values, bool *isnull);

/* tcache_capture.c */
extern void pgwarp_tcache_preload(void);
extern bool tcache_preloaded(void);
extern uint64 tcache_epoch(void);
extern void tcache_epoch_bump(void);
extern void tcache_flush_all(void);
/* is rel attached (its capture trigger present and enabled ALWAYS)? */
extern bool tcache_attached(Relation rel);

/* tcache_ring.c */
extern void tcache_ring_create(void);
extern int	tcache_ring_fd(void);
extern bool tcache_ring_enabled(void);
extern uint64 tcache_ring_head(void);
extern bool tcache_ring_append(const GpudCacheKey *key, int ncols, const char *data,
							   uint32 len, int64 nrecs);

/* tcache_load.c: a new replica of rel from its pages; false with *why */
extern bool tcache_load(Relation rel, const TcacheLayout *lay, const GpudCacheKey *key,
						char *why, size_t whylen);

/* tcache_query.c */
extern bool tcache_plan_usable(Oid relid);
extern bool tcache_prepare(Relation rel, Snapshot snapshot, int ncols, const AttrNumber *attnos,
						   const bool *isfloat, GpudClientCached *out, bool *loaded,
						   char *why, size_t whylen);

#endif							/* TCACHE_H */
