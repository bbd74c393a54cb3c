/*-------------------------------------------------------------------------
 *
 * warp_row_result.h
 *	  The merged result on the host (never device code): every group once,
 *	  its aggregate states in the CPU driver's form, merged from flushed
 *	  device tables with warp_row_agg.h's merge.
 *
 * Pure C (also valid C++ for nvcc); no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_ROW_RESULT_H
#define WARP_ROW_RESULT_H

#include <stdlib.h>
#include <string.h>
#include "warp_row_agg.h"

/* ------------------------------------------------- host-side result table */

/*
 * The merged result on the host: every group once, states in the CPU
 * driver's form.  Partial states (a flushed device table, a slice of a
 * batch) are merged in with warp_row_result_merge(); groups keep the order
 * in which they were first merged.
 */
typedef struct WarpRowResult
{
	int			nkeys;
	int			naggs;
	warp_int64	n;				/* groups */
	warp_int64	cap;
	warp_int64 *keys;			/* cap * nkeys */
	warp_uint8 *knull;			/* cap * nkeys */
	WarpAggState *aggs;			/* cap * naggs */
	warp_uint64 hmask;			/* slots of group indexes, -1 = empty */
	warp_int64 *hslot;
	bool		unindexed;		/* groups appended that hslot lacks */
	bool		finalized;
} WarpRowResult;

static inline void
warp_row_result_free(WarpRowResult *r)
{
	free(r->keys);
	free(r->knull);
	free(r->aggs);
	free(r->hslot);
	memset(r, 0, sizeof(*r));
}

/* false if out of memory */
static inline bool
warp_row_result_init(WarpRowResult *r, int nkeys, int naggs)
{
	memset(r, 0, sizeof(*r));
	r->nkeys = nkeys;
	r->naggs = naggs;
	r->hmask = 1023;
	r->hslot = (warp_int64 *) malloc(sizeof(warp_int64) * (r->hmask + 1));
	if (r->hslot == NULL)
		return false;
	memset(r->hslot, 0xff, sizeof(warp_int64) * (r->hmask + 1));
	return true;
}

static inline bool
warp_row_result_grow(WarpRowResult *r)
{
	warp_int64	cap = r->cap ? r->cap * 2 : 64;
	warp_int64 *k = (warp_int64 *) realloc(r->keys, sizeof(warp_int64) * cap * (r->nkeys + 1));
	warp_uint8 *kn;
	WarpAggState *a;

	if (k == NULL)
		return false;
	r->keys = k;
	kn = (warp_uint8 *) realloc(r->knull, (size_t) cap * (r->nkeys + 1));
	if (kn == NULL)
		return false;
	r->knull = kn;
	a = (WarpAggState *) realloc(r->aggs, sizeof(WarpAggState) * cap * (r->naggs + 1));
	if (a == NULL)
		return false;
	r->aggs = a;
	r->cap = cap;
	return true;
}

/*
 * The host index's hash of a key: warp_row_key_hash with its halves
 * swapped.  The device table places a group at (hash & its mask), so a
 * flushed table arrives in the order of the hash's low bits; indexing it
 * by the same low bits with linear probing piles the groups into long
 * runs (a flush of 600K groups took 0.3 to 5.7 s, by the order the
 * device's inserts happened to take).  The high half does not follow
 * that order.
 */
static inline warp_uint64
warp_row_result_hash(const warp_int64 *kv, const warp_uint8 *kn, int nkeys)
{
	warp_uint64 h = warp_row_key_hash(kv, kn, nkeys);

	return (h >> 32) | (h << 32);
}

static inline bool
warp_row_result_rehash(WarpRowResult *r)
{
	warp_uint64 cap = (r->hmask + 1) * 2;
	warp_int64 *slots;
	warp_int64	gi;

	/* at most half full (groups appended unindexed may need more) */
	while (cap < (warp_uint64) r->n * 2 + 2)
		cap *= 2;
	slots = (warp_int64 *) malloc(sizeof(warp_int64) * cap);
	if (slots == NULL)
		return false;
	memset(slots, 0xff, sizeof(warp_int64) * cap);
	for (gi = 0; gi < r->n; gi++)
	{
		warp_uint64 h = warp_row_result_hash(r->keys + gi * r->nkeys,
											 r->knull + gi * r->nkeys, r->nkeys) & (cap - 1);

		while (slots[h] >= 0)
			h = (h + 1) & (cap - 1);
		slots[h] = gi;
	}
	free(r->hslot);
	r->hslot = slots;
	r->hmask = cap - 1;
	return true;
}

/*
 * Append a group the result does not have (the first flush of a table of
 * distinct groups): no lookup; the index is rebuilt by the next
 * warp_row_result_merge.  false if out of memory.
 */
static inline bool
warp_row_result_append(WarpRowResult *r, const warp_int64 *kv, const warp_uint8 *kn,
					   const WarpAggState *states)
{
	warp_int64	gi;

	if (r->n >= r->cap && !warp_row_result_grow(r))
		return false;
	gi = r->n++;
	if (r->nkeys > 0)
	{
		memcpy(r->keys + gi * r->nkeys, kv, sizeof(warp_int64) * r->nkeys);
		memcpy(r->knull + gi * r->nkeys, kn, r->nkeys);
	}
	if (r->naggs > 0)
		memcpy(r->aggs + gi * r->naggs, states, sizeof(WarpAggState) * r->naggs);
	r->unindexed = true;
	return true;
}

/*
 * Merge one group's exported states (naggs of them) into r.  false if out
 * of memory.
 */
static inline bool
warp_row_result_merge(WarpRowResult *r, const WarpProgram *p, const warp_int64 *kv,
					  const warp_uint8 *kn, const WarpAggState *states)
{
	int			nkeys = r->nkeys;
	warp_uint64 h;
	warp_int64	gi;
	int			a;

	if (r->unindexed)
	{
		/* groups appended without an index: index them all */
		if (!warp_row_result_rehash(r))
			return false;
		r->unindexed = false;
	}
	h = warp_row_result_hash(kv, kn, nkeys) & r->hmask;

	for (;;)
	{
		gi = r->hslot[h];
		if (gi < 0)
			break;
		if (memcmp(r->keys + gi * nkeys, kv, sizeof(warp_int64) * nkeys) == 0 &&
			memcmp(r->knull + gi * nkeys, kn, nkeys) == 0)
		{
			for (a = 0; a < r->naggs; a++)
				warp_row_agg_merge(&p->aggs[a], &r->aggs[gi * r->naggs + a], &states[a]);
			return true;
		}
		h = (h + 1) & r->hmask;
	}
	if (r->n >= r->cap && !warp_row_result_grow(r))
		return false;
	gi = r->n++;
	if (nkeys > 0)
	{
		memcpy(r->keys + gi * nkeys, kv, sizeof(warp_int64) * nkeys);
		memcpy(r->knull + gi * nkeys, kn, nkeys);
	}
	if (r->naggs > 0)
		memcpy(r->aggs + gi * r->naggs, states, sizeof(WarpAggState) * r->naggs);
	r->hslot[h] = gi;
	if ((warp_uint64) r->n * 2 > r->hmask && !warp_row_result_rehash(r))
		return false;
	return true;
}

/* after the last merge: warp_row_agg_final on every state (once) */
static inline void
warp_row_result_final(WarpRowResult *r, const WarpProgram *p)
{
	warp_int64	gi;
	int			a;

	if (r->finalized)
		return;
	for (gi = 0; gi < r->n; gi++)
		for (a = 0; a < r->naggs; a++)
			warp_row_agg_final(&p->aggs[a], &r->aggs[gi * r->naggs + a]);
	r->finalized = true;
}

#endif							/* WARP_ROW_RESULT_H */
