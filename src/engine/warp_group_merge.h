/*
 * warp_group_merge.h — merge the partial groups of several drivers.
 *
 * The CPU driver's threads (warp_cpu_pool.h) and the GPU driver's lanes
 * each keep their own group table, so a GROUP BY with many groups came
 * back as up to (threads x groups) partial states, and PostgreSQL's
 * Finalize step (or the Sort under a DISTINCT aggregate's GroupAggregate)
 * had to take them all: SSB SF=20 grouped by year, region and customer
 * handed it 8-65M rows for 4.1M groups.  This merges them first, in
 * parallel: every source's groups are hashed and dealt into partitions by
 * the hash's top bits, then each partition is merged in a hash table of
 * its own (one task per partition, no locks).
 *
 * Groups are equal when their keys' binary images and NULL flags are (the
 * engine's own grouping rule; the Finalize step above still applies the
 * types' equality), text keys by their strings.  States are combined in
 * the CPU driver's form the way PostgreSQL's combine functions combine
 * the transition states they stand for (warp_agg_combine).  A combination
 * PostgreSQL's combine function would raise an error for (float or int8
 * overflow) abandons the merge: the caller then emits the sources'
 * groups unmerged, and the Finalize step raises the error.
 *
 * Pure C (no PostgreSQL); memory is malloc'd.
 */
#ifndef WARP_GROUP_MERGE_H
#define WARP_GROUP_MERGE_H

#include <stdbool.h>

#include "warp_cpu.h"
#include "warp_program.h"

/* a text key's string: key k's value id in the source's own numbering */
typedef const warp_uint8 *(*WarpKeyTextFn) (void *ctx, int k, warp_int64 id, warp_int64 *len);

/* One driver's groups. */
typedef struct WarpGroupSource
{
	warp_int64	n;
	const warp_int64 *keys;		/* n * nkeys, row-major */
	const warp_uint8 *nulls;	/* n * nkeys */
	const WarpAggState *const *aggs;	/* per aggregate: group 0's state */
	warp_int64	stride;			/* states between consecutive groups */
	WarpKeyTextFn text;			/* for text keys (NULL without any) */
	void	   *text_ctx;
} WarpGroupSource;

typedef struct WarpGroupMerge WarpGroupMerge;

/* the *why of a merge or regroup that ran out of memory (compare pointers) */
extern const char warp_merge_no_memory[];

/*
 * Merge nsrc sources of program p's groups; is_text[k] says key k is a text
 * key (NULL: none is).  The merged groups refer to the sources' keys,
 * states and strings, which must stay valid until warp_group_merge_free.
 * One partition is merged first as a sample: when it keeps more than
 * max_kept of its groups (1.0: never) the merge is abandoned, as it is for
 * no memory, a combination that would overflow or an interrupt: NULL is
 * returned with *why set.
 */
extern WarpGroupMerge *warp_group_merge(const WarpProgram *p, const bool *is_text,
										const WarpGroupSource *src, int nsrc,
										double max_kept, int nthreads,
										bool (*interrupted) (void *iarg), void *iarg,
										const char **why);
/*
 * count(DISTINCT x) in the engine: the merged groups are (keys, x), each
 * once; regroup them by the keys without key drop_key (x), each partition
 * on its own: the states are combined, and aggregate count_agg (count(x)
 * per (keys, x) group) becomes the number of such groups with a non-NULL
 * x.  A key's groups may land in several partitions, with disjoint sets of
 * x, so the counts of one key's rows add up to its count(DISTINCT x).
 * false with *why set on no memory, an overflow or an interrupt (the
 * merged groups are then no longer usable).
 */
extern bool warp_group_merge_regroup(WarpGroupMerge *m, int drop_key, int count_agg,
									 int nthreads, bool (*interrupted) (void *iarg),
									 void *iarg, const char **why);
extern warp_int64 warp_group_merge_ngroups(const WarpGroupMerge *m);
/* merged group g's key k, aggregate a's state, text key k's string (one
 * thread at a time: the last partition read is remembered) */
extern warp_int64 warp_group_merge_key(WarpGroupMerge *m, warp_int64 g, int k,
									   bool *isnull);
extern const WarpAggState *warp_group_merge_agg(WarpGroupMerge *m, warp_int64 g, int a);
/* text key k of group g (as its source gave it) */
extern const warp_uint8 *warp_group_merge_text(WarpGroupMerge *m, warp_int64 g, int k,
											   warp_int64 *len);
extern void warp_group_merge_free(WarpGroupMerge *m);

/*
 * Combine state b into state a of aggregate ag of program p, both in the
 * CPU driver's form, as the aggregate's PostgreSQL combine function would.
 * false: that function would raise an error (a is then undefined).
 */
extern bool warp_agg_combine(const WarpProgram *p, const WarpAggSpec *ag,
							 WarpAggState *a, const WarpAggState *b);

#endif							/* WARP_GROUP_MERGE_H */
