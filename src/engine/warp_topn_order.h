/*-------------------------------------------------------------------------
 *
 * warp_topn_order.h
 *	  Row mode under ORDER BY ... LIMIT (WarpProgram.topn_limit): the order
 *	  of the first ORDER BY key, once for the CPU driver and the GPU
 *	  kernel, and the candidates' compaction both drivers' hosts run.
 *
 * A driver keeps every row whose first ORDER BY key does not sort after
 * a threshold: the topn_limit-th best key among the rows it has kept,
 * since at least topn_limit rows come before any row after it.  Rows equal
 * to the threshold stay (the later ORDER BY keys, which the backend's
 * Top-N compares with PostgreSQL's own operators, decide between them).
 * The backend keeps the exact best rows of the candidates.
 *
 * Pure C (also valid C++ for nvcc); no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_TOPN_ORDER_H
#define WARP_TOPN_ORDER_H

#include "warp_defs.h"
#include "warp_program.h"

/* how the first ORDER BY key compares (from the program) */
typedef struct WarpTopnOrder
{
	warp_int32	key;			/* the group key (output column) */
	warp_uint8	is_float;		/* its values are float8 bits */
	warp_uint8	desc;
	warp_uint8	nulls_first;
	warp_uint8	pad;
} WarpTopnOrder;

/* the program's Top-N order (topn_limit > 0) */
WARP_FN WarpTopnOrder
warp_topn_order(const WarpProgram *p)
{
	WarpTopnOrder o;

	o.key = p->topn_key;
	o.is_float = WARP_TYPE_IS_FLOAT(p->nodes[p->keys[p->topn_key].node].type) ? 1 : 0;
	o.desc = p->topn_desc ? 1 : 0;
	o.nulls_first = p->topn_nulls_first ? 1 : 0;
	o.pad = 0;
	return o;
}

/*
 * PostgreSQL's order of two values of the first ORDER BY key (int64 or
 * float8 bits, NULL flags): < 0 when a comes first.  NULLs where the ORDER
 * BY item puts them; float NaN after every other value and equal to NaN,
 * -0 equal to 0 (float8_cmp_internal); DESC reverses the values' order.
 */
WARP_FN int
warp_topn_cmp(const WarpTopnOrder *o, warp_int64 a, warp_uint8 an, warp_int64 b, warp_uint8 bn)
{
	int			c;

	if (an || bn)
	{
		if (an && bn)
			return 0;
		c = an ? 1 : -1;
		return o->nulls_first ? -c : c;
	}
	if (o->is_float)
	{
		union
		{
			warp_int64	i;
			double		f;
		}			ua, ub;
		bool		na,
					nb;

		ua.i = a;
		ub.i = b;
		na = ua.f != ua.f;
		nb = ub.f != ub.f;
		if (na || nb)
			c = na ? (nb ? 0 : 1) : -1;
		else
			c = ua.f < ub.f ? -1 : (ua.f > ub.f ? 1 : 0);
	}
	else
		c = a < b ? -1 : (a > b ? 1 : 0);
	return o->desc ? -c : c;
}

/* compact when the candidates are twice the limit, and not for tiny ones */
WARP_FN warp_int64
warp_topn_compact_floor(const WarpProgram *p)
{
	return p->topn_limit * 2 > 4096 ? p->topn_limit * 2 : 4096;
}

/*
 * Compact n candidate rows (keys[r * nkeys ...], NULL flags knull[...]) of
 * program p: find the topn_limit-th best first ORDER BY key among them
 * (n > topn_limit), make it the threshold (*val, *null), and drop the rows
 * that sort after it, keeping the others in their order.  idx: scratch of
 * n entries.  Returns the rows kept.  (warp_topn_order.c; host code)
 */
extern warp_int64 warp_topn_compact_rows(const WarpProgram *p, warp_int64 *keys,
										 warp_uint8 *knull, warp_int64 n, warp_int32 *idx,
										 warp_int64 *val, warp_uint8 *null);

#endif							/* WARP_TOPN_ORDER_H */
