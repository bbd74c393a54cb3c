/*-------------------------------------------------------------------------
 *
 * gpud_tcache.h
 *	  The GPU table cache inside pg_warp_gpud: replicas of heap tables'
 *	  row versions (values, inserting and deleting transaction, command
 *	  ids) kept current by the row changes backends ship, and queries run
 *	  over them under the query's snapshot (warp_visibility.h).
 *
 *	  gpud_tcache_store.c holds the replicas and applies requests;
 *	  gpud_tcache_run.c runs a job's program over one.
 *
 * Pure C; no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUD_TCACHE_H
#define GPUD_TCACHE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "gpud_job.h"
#include "gpud_tcache_wire.h"

/* rows a query hands the driver at once (a multiple of 8: bitmaps) */
#define TCACHE_SLICE	65536

typedef struct Replica
{
	GpudCacheKey key;
	char		name[64];
	int			state;			/* GpudCacheState */
	char		why[128];
	uint64_t	load_token;
	uint64_t	load_from;		/* the change log's head at LOAD_BEGIN: chunks
								 * before it describe what the scan sees */
	uint64_t	mem_limit;		/* the loader's limits, for changes from the log */
	uint64_t	log_limit;
	double		load_touched_ms;	/* last load request: a loader gone
									 * silent may be replaced */
	pthread_rwlock_t lock;		/* queries read; changes write */
	int			ncols;
	uint8_t    *kinds;			/* GPUD_CACHE_COL_* */
	/* versions, in arrival order; gone ones wait for compaction */
	int64_t		n,
				cap;
	uint64_t  **vals;			/* per column: int64 or double [cap] */
	uint8_t   **valid;			/* per column: bitmap [cap / 8] */
	int64_t    *nnull;			/* per column: null values held */
	uint32_t   *xmin,
			   *cmin,
			   *xmax,
			   *cmax,			/* xmin, xmax: dictionary entries */
			   *raw_xmin;
	uint64_t   *tid;			/* block << 16 | offset */
	uint8_t    *gone;
	int64_t		ngone;
	/* tid -> row, open addressing; key tid + 1 (0: empty) */
	uint64_t   *hkeys;
	uint32_t   *hrows;
	uint64_t	hcap,
				hcount;
	/* transaction dictionary: entry -> xid; entries 0 and 1 fixed */
	uint32_t   *dict;
	uint32_t	ndict,
				dcap;
	uint32_t   *dhash;			/* entry + 1 by xid, open addressing */
	uint32_t	dhcap;
	uint64_t	dict_epoch;		/* renumbered: a classification is stale;
								 * unique across replicas and daemons */
	/* changes that arrived while loading, applied at LOAD_END */
	uint8_t    *pend;
	uint64_t	pend_len,
				pend_cap;
	int64_t		pend_recs;
	uint64_t	bytes;			/* what the arrays above hold */
} Replica;

/*
 * Serve a GPUD_CACHE request at WARP_ARENA_JOB_OFF of the arena: *result
 * (malloc'd, *result_len bytes, a GpudCacheResp first) on GPUD_JOB_DONE.
 */
extern GpudJobOutcome gpud_tcache_request(uint8_t *arena, uint64_t arena_size,
										  void **result, uint64_t *result_len,
										  char *why, size_t whylen);

/*
 * The replica of key, read-locked, or NULL (*why set) when there is no
 * ready replica of exactly that identity and dictionary epoch.
 */
extern Replica *gpud_tcache_acquire(const GpudCacheKey *key, uint64_t dict_epoch,
									char *why, size_t whylen);
extern void gpud_tcache_release(Replica *r);

/*
 * After a query: entries the backend found committed or aborted for every
 * snapshot (classes' WARP_XID_ALL_* bits) are folded into entries 0 and 1,
 * and versions no snapshot can see are dropped.
 */
extern void gpud_tcache_compact(const GpudCacheKey *key, uint64_t dict_epoch,
								const uint8_t *classes, uint32_t nclasses);

/*
 * The change log (gpud_tcache_ring.c): mapped from the descriptor the
 * supervisor passes; drained in position order.
 */
extern bool gpud_tcache_ring_open(int fd, char *why, size_t whylen);
extern bool gpud_tcache_ring_active(void);
extern uint64_t gpud_tcache_ring_head(void);
extern bool gpud_tcache_ring_drain(uint64_t upto, double wait_ms);

/* a chunk of the log at position pos, for the replica of key */
extern void gpud_tcache_apply_logged(const GpudCacheKey *key, int ncols, const uint8_t *data,
									 uint64_t len, int64_t nrecs, uint64_t pos);
/* every replica to be loaded again (the log was damaged) */
extern void gpud_tcache_break_all(const char *why);

struct Part;

/* run part p's CPU driver over the job's replica: 0, 1 (a row's error in
 * p->res), -2 cancelled, -3 no replica (why) */
extern int	gpud_tcache_run(struct Part *p, char *why, size_t whylen);

#endif							/* GPUD_TCACHE_H */
