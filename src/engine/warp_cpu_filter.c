/*-------------------------------------------------------------------------
 *
 * warp_cpu_filter.c
 *	  The CPU driver's fast paths for quals: "column op constant" and
 *	  BETWEEN's two comparisons over a plain integer column, filtered
 *	  straight from the Arrow buffer (the general path is cpu_eval).
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "warp_cpu_internal.h"

/* ----------------------------------------------------------- fast paths */

/*
 * The commonest shapes get loops that read the Arrow buffer directly: a
 * qual "column op constant" and a join key, both over a plain signed
 * integer column.  Loading such a column cannot fail and an integer
 * comparison or lookup cannot raise, so these give exactly the general
 * path's result, in one pass instead of a load, an evaluation and a
 * compaction over vectors.
 */

/* the batch's values of column node ni when it is a plain signed integer
 * column of a type the engine loads as is; NULL otherwise */
const ArrowArray *
cpu_plain_int_column(WarpCpu *x, int ni)
{
	const WarpNode *nd = &x->p->nodes[ni];
	const ArrowArray *a;
	const ArrowType *t;

	if (nd->op != WN_COL || x->p->cols[nd->a].decimal || x->p->cols[nd->a].text)
		return NULL;
	a = &x->bcols[nd->a];
	t = &a->field->type;
	if (a->field->has_dict || t->id != ARROW_TYPE_INT || !t->is_signed ||
		(t->bit_width != 16 && t->bit_width != 32 && t->bit_width != 64) ||
		a->values == NULL ||
		!warp_cpu_can_load(a->field, (WarpType) x->p->cols[nd->a].type))
		return NULL;
	return a;
}

/*
 * Keep the rows sel[0..m) of an integer column whose value v (as int64)
 * satisfies KEEP, in place: m2 rows kept.  Branch-free: selectivity is
 * data, not a pattern.  In scope: a, base, sel, m, m2, k, dense.
 */
#define SEL_FILTER_LOOP(T, KEEP) \
	do { \
		const T    *in = (const T *) a->values + base; \
		if (a->validity == NULL && dense) \
			for (k = 0; k < m; k++) \
			{ \
				warp_int64	v = (warp_int64) in[k]; \
				sel[m2] = (warp_uint16) k; \
				m2 += (KEEP); \
			} \
		else if (a->validity == NULL) \
			for (k = 0; k < m; k++) \
			{ \
				int			i = sel[k]; \
				warp_int64	v = (warp_int64) in[i]; \
				sel[m2] = (warp_uint16) i; \
				m2 += (KEEP); \
			} \
		else \
			for (k = 0; k < m; k++) \
			{ \
				int			i = sel[k]; \
				warp_int64	v = (warp_int64) in[i]; \
				sel[m2] = (warp_uint16) i; \
				m2 += (KEEP) & valid_bit(a->validity, base + i); \
			} \
	} while (0)

#define FCC_LOOP(T, OP) SEL_FILTER_LOOP(T, v OP cv)

#define FCC_OPS(T) \
	switch (op) \
	{ \
		case WARP_CMP_EQ: FCC_LOOP(T, ==); break; \
		case WARP_CMP_NE: FCC_LOOP(T, !=); break; \
		case WARP_CMP_LT: FCC_LOOP(T, <); break; \
		case WARP_CMP_LE: FCC_LOOP(T, <=); break; \
		case WARP_CMP_GT: FCC_LOOP(T, >); break; \
		default: FCC_LOOP(T, >=); break; \
	}

/*
 * Is qual qn "column op constant" (either side) on a plain integer column?
 * Then its column, its constant node and the operator with the column on
 * the left.
 */
static const ArrowArray *
col_const_shape(WarpCpu *x, int qn, int *colnode, int *constnode, int *op)
{
	const ArrowArray *a;

	if (!warp_cmp_col_const(x->p, qn, colnode, constnode, op) ||
		IS_FLOAT_NODE(x, *constnode) || (a = cpu_plain_int_column(x, *colnode)) == NULL)
		return NULL;
	return a;
}

/*
 * Qual qn over the rows sel[0..m) when it is "column op constant" (either
 * side) on a plain integer column: keep the rows where it is true, in
 * place.  Returns the rows kept, or -1 when the qual has another shape.
 */
int
cpu_filter_col_const(WarpCpu *x, int qn, warp_uint16 *sel, int m)
{
	const ArrowArray *a;
	int			colnode,
				constnode,
				op,
				k,
				m2 = 0;
	warp_int64	base,
				cv;
	bool		dense = m == x->vn;	/* sel is 0 .. vn-1 */

	if ((a = col_const_shape(x, qn, &colnode, &constnode, &op)) == NULL)
		return -1;
	if (x->nv[constnode][0])
		return 0;				/* NULL: the comparison is never true */
	cv = x->iv[constnode][0];
	base = a->offset + x->vstart;
	switch (a->field->type.bit_width)
	{
		case 16: FCC_OPS(warp_int16); break;
		case 32: FCC_OPS(warp_int32); break;
		default: FCC_OPS(warp_int64); break;
	}
	return m2;
}

#define FCR_LOOP(T) \
	SEL_FILTER_LOOP(T, (warp_uint64) v - (warp_uint64) lo <= width)

/*
 * Quals qa and qb over the rows sel[0..m) when they bound one plain integer
 * column from both sides with constants (BETWEEN's two comparisons): one
 * pass, lo <= v <= hi as one comparison of v - lo (unsigned, wrapping)
 * with hi - lo.  Neither comparison can
 * fail, so testing qb on rows qa rejects changes no outcome.  Returns the
 * rows kept, or -1 for another shape.
 */
int
cpu_filter_col_range(WarpCpu *x, int qa, int qb, warp_uint16 *sel, int m)
{
	const ArrowArray *a,
			   *b;
	int			ca,
				cb,
				ka,
				kb,
				opa,
				opb,
				k,
				m2 = 0;
	warp_int64	lo = INT64_MIN,
				hi = INT64_MAX,
				base;
	warp_uint64 width;
	bool		dense = m == x->vn;
	int			i;

	if ((a = col_const_shape(x, qa, &ca, &ka, &opa)) == NULL ||
		(b = col_const_shape(x, qb, &cb, &kb, &opb)) == NULL ||
		x->p->nodes[ca].a != x->p->nodes[cb].a)
		return -1;
	for (i = 0; i < 2; i++)
	{
		int			op = i == 0 ? opa : opb;
		int			kn = i == 0 ? ka : kb;
		warp_int64	c;

		if (op != WARP_CMP_GE && op != WARP_CMP_GT && op != WARP_CMP_LE && op != WARP_CMP_LT)
			return -1;
		if (x->nv[kn][0])
			return 0;			/* NULL: never true */
		c = x->iv[kn][0];
		if (!warp_cmp_narrow(op, c, &lo, &hi))
			return 0;			/* no value passes both */
	}
	if (lo == INT64_MIN || hi == INT64_MAX)
		return -1;				/* not one bound on each side */
	width = (warp_uint64) hi - (warp_uint64) lo;
	base = a->offset + x->vstart;
	switch (a->field->type.bit_width)
	{
		case 16: FCR_LOOP(warp_int16); break;
		case 32: FCR_LOOP(warp_int32); break;
		default: FCR_LOOP(warp_int64); break;
	}
	(void) b;
	return m2;
}

#undef FCR_LOOP
#undef FCC_OPS
#undef FCC_LOOP
#undef SEL_FILTER_LOOP
