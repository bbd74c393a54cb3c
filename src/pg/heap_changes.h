/*
 * heap_changes.h — committed modifications of heap tables, tracked in
 * shared memory so that dimensions built from heap tables can be cached
 * (see heap_changes.c).
 */
#ifndef HEAP_CHANGES_H
#define HEAP_CHANGES_H

#include "postgres.h"

#include "utils/relcache.h"
#include "utils/snapshot.h"

/* from _PG_init while shared_preload_libraries are loaded */
extern void pgwarp_heap_changes_preload(void);

/*
 * Can rows of rel read under snapshot be kept for (or taken from) a cache?
 * True with *gen, the table's change counter, when every change to rel is
 * seen here (a plain heap table, not subscribed, pg_warp preloaded, not in
 * recovery) and snapshot sees every committed change recorded so far; a cached copy made under another
 * such snapshot with the same *gen holds the same rows.  False with *why,
 * a phrase for EXPLAIN ANALYZE.
 */
extern bool heap_changes_consistent(Relation rel, Snapshot snapshot, uint64 *gen,
									const char **why);

#endif							/* HEAP_CHANGES_H */
