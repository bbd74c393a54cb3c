/*
 * warp_topn.h — the best N rows of a stream by PostgreSQL's own ordering
 * (see warp_topn.c).
 */
#ifndef WARP_TOPN_H
#define WARP_TOPN_H

#include "access/tupdesc.h"
#include "executor/tuptable.h"

typedef struct WarpTopN WarpTopN;

/* One ORDER BY item: a column of the rows and its ordering operator. */
typedef struct WarpTopNKey
{
	int			col;			/* 0-based column of the rows */
	Oid			sortop;			/* "<" or ">" of a btree opfamily */
	Oid			collation;
	bool		nulls_first;
} WarpTopNKey;

extern WarpTopN *warp_topn_create(TupleDesc desc, int nkeys, const WarpTopNKey *keys,
								  int64 bound, MemoryContext parent);

/*
 * Whether a row whose ORDER BY columns are keys[]/nulls[] (indexed like
 * the WarpTopNKey array) would be kept: the set is not full yet, or the row
 * comes before its last row.  Cheap: no copy.
 */
extern bool warp_topn_wanted(WarpTopN *t, const Datum *keys, const bool *nulls);

/* Keep the slot's row (copied), dropping the last one if the set is full. */
extern void warp_topn_add(WarpTopN *t, TupleTableSlot *slot);

/* Sort what is kept; then warp_topn_next returns it in order. */
extern void warp_topn_sort(WarpTopN *t);
extern bool warp_topn_next(WarpTopN *t, TupleTableSlot *slot);

/* Forget every row (a rescan). */
extern void warp_topn_reset(WarpTopN *t);

#endif							/* WARP_TOPN_H */
