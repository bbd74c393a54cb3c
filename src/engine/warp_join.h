/*-------------------------------------------------------------------------
 *
 * warp_join.h
 *	  Join tables: the built (dimension) side of an inner equi-join on an
 *	  integer-like key.
 *
 * Each build row has a key and a payload id (a small dense integer naming
 * the distinct values of the dimension columns the query groups by; the
 * backend assigns them).  Lookup gives the first build row with that key
 * and next[] chains the others, so duplicate keys multiply rows exactly as
 * a join does.  Dense keys (SSB's) become a direct-address array; others an
 * open-addressing hash table.  Keys compare as integers, which is the
 * semantics of every integer, date and timestamp equality operator, cross
 * type included (int4 = int8).  NULL keys are never inserted: NULL never
 * matches.
 *
 * Pure C; no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_JOIN_H
#define WARP_JOIN_H

#include "warp_defs.h"
#include "warp_ops_text.h"

/* Memory for engine structures.  The backend passes a palloc wrapper. */
typedef struct WarpAlloc
{
	void	   *(*alloc) (void *ctx, size_t size);	/* NULL on failure */
	void	   *ctx;
} WarpAlloc;

typedef struct WarpJoinTable
{
	warp_int64	nrows;
	warp_int64 *keys;			/* per build row */
	warp_int32 *payload;		/* per build row */
	warp_int32 *next;			/* next build row with the same key, or -1 */
	warp_int32	npayloads;		/* payload ids are 0 .. npayloads-1 */
	bool		unique;			/* no key occurs twice */
	/* direct-address form: first[key - min] */
	bool		direct;
	warp_int64	min;
	warp_int64	max;
	warp_int32 *first;
	/* direct form: bit (key - min) set when key occurs; the CPU driver
	 * tests it before first[], which is 32 times larger and, for a
	 * filtered dimension, mostly misses (NULL: not built) */
	warp_uint64 *bits;
	/* hash form: slots of (key, first row), row -1 = empty */
	warp_uint64 mask;
	warp_int64 *slot_key;
	warp_int32 *slot_row;
} WarpJoinTable;

/*
 * Build a table from n rows (keys[] and payload[] are copied).  NULL if
 * memory runs out or n exceeds the int32 row numbering.
 */
extern WarpJoinTable *warp_join_build(const WarpAlloc *alloc, const warp_int64 *keys,
									  const warp_int32 *payload, warp_int64 n,
									  warp_int32 npayloads);

/*
 * The flat form: a table and its arrays in one block of
 * warp_join_flat_size() bytes, which warp_join_flatten writes (into shared
 * memory, say) and warp_join_attach reads back in place: *out's arrays
 * point into src, which must outlive it.  attach returns false for a
 * block that is not a table's flat form of that size.
 */
extern warp_int64 warp_join_flat_size(const WarpJoinTable *t);
extern void warp_join_flatten(const WarpJoinTable *t, void *dst);
extern bool warp_join_attach(const void *src, warp_int64 size, WarpJoinTable *out);

/* bytes a table of n rows with this key range would take (planning) */
extern warp_int64 warp_join_estimate_bytes(warp_int64 n);

/* keys hash with the engine's integer key hash, warp_hash_int64()
 * (warp_ops_text.h: the widened value, so int4 = int8 keys meet) */
/* First build row whose key equals k, or -1 (the GPU kernel calls it too,
 * on a copy of the table whose arrays live on the device). */
WARP_FN warp_int32
warp_join_lookup(const WarpJoinTable *t, warp_int64 k)
{
	warp_uint64 i;

	if (t->direct)
	{
		if (k < t->min || k > t->max)
			return -1;
		return t->first[k - t->min];
	}
	if (t->nrows == 0)
		return -1;
	i = warp_hash_int64(k) & t->mask;
	for (;;)
	{
		warp_int32	r = t->slot_row[i];

		if (r < 0)
			return -1;
		if (t->slot_key[i] == k)
			return r;
		i = (i + 1) & t->mask;
	}
}

#endif							/* WARP_JOIN_H */
