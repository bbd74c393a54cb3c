/*-------------------------------------------------------------------------
 *
 * warp_row_agg.h
 *	  The row evaluator's aggregate states (init, update in place, export
 *	  to the CPU driver's form, merge, final) and its group table (find or
 *	  claim a group slot).  See the exactness rules in warp_row.h.
 *
 * Pure C (also valid C++ for nvcc); no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_ROW_AGG_H
#define WARP_ROW_AGG_H

#include "warp_ops_float.h"
#include "warp_row_atomic.h"
#include "warp_row_types.h"

/* ------------------------------------------------------------- joining */

/* probes use warp_join_lookup() (warp_join.h) on the device's copy */

/* ------------------------------------------------------------ aggregates */

/* float min/max: an unsigned key ordered as PostgreSQL orders float8 */
#define WARP_ROW_SIGN UINT64_C(0x8000000000000000)

WARP_FN warp_uint64
warp_row_fkey(double d)
{
	warp_uint64 b = (d != d) ? UINT64_C(0x7ff8000000000000)
		: (warp_uint64) warp_row_dbits(d);

	return (b & WARP_ROW_SIGN) ? ~b : (b | WARP_ROW_SIGN);
}

WARP_FN double
warp_row_funkey(warp_uint64 k)
{
	warp_uint64 b = (k & WARP_ROW_SIGN) ? (k & ~WARP_ROW_SIGN) : ~k;

	return warp_row_bitsd((warp_int64) b);
}

/* largest inputs to sum(float8) / avg(float) that cannot overflow in any order */
#define WARP_ROW_SUM_LIMIT	8.0e288		/* < 2^960 */
#define WARP_ROW_AVG_LIMIT	2.0e120		/* < 2^400 */

/*
 * Initial accumulating state of aggregate a: the identity of its update.
 * min/max keep their running value in ival (float: as warp_row_fkey);
 * sum(float8) starts from -0, the identity of addition (so a sum of -0s
 * stays -0, as the CPU driver's first-value assignment gives).
 */
WARP_FN void
warp_row_agg_init(const WarpAggSpec *ag, WarpAggState *s)
{
	bool		isfloat = WARP_TYPE_IS_FLOAT(ag->type);

	s->count = 0;
	s->ival = 0;
	s->fval = 0.0;
	s->fsxx = 0.0;
	s->wide_lo = 0;
	s->wide_hi = 0;
	s->wide_top = 0;
	if (ag->kind == WA_MIN)
		s->ival = isfloat ? (warp_int64) ~UINT64_C(0) : WARP_INT64_MAX;
	else if (ag->kind == WA_MAX)
		s->ival = isfloat ? 0 : WARP_INT64_MIN;
	else if (ag->kind == WA_SUM_FLOAT)
		s->fval = -0.0;
}

/* Add one input (iv or fv by the argument's kind) to an accumulating state. */
WARP_FN int
warp_row_agg_update(const WarpAggSpec *ag, WarpAggState *s, warp_int64 iv, double fv)
{
	switch ((WarpAggKind) ag->kind)
	{
		case WA_COUNT_STAR:
		case WA_COUNT:
			warp_row_add_u64((warp_uint64 *) &s->count, 1);
			return WARP_OK;
		case WA_SUM_INT:
		case WA_AVG_INT:
			warp_row_add_u64((warp_uint64 *) &s->count, 1);
			warp_row_add_u64((warp_uint64 *) &s->ival, (warp_uint64) iv);
			return WARP_OK;
		case WA_SUM_INT8:
			{
				/* 128-bit add: low word, then its carry and the sign into high */
				warp_uint64 old = warp_row_fetch_add_u64(&s->wide_lo, (warp_uint64) iv);
				warp_uint64 hi = (iv < 0 ? ~UINT64_C(0) : 0) +
					(old + (warp_uint64) iv < old ? 1 : 0);

				if (hi != 0)
					warp_row_add_u64((warp_uint64 *) &s->wide_hi, hi);
				warp_row_add_u64((warp_uint64 *) &s->count, 1);
				return WARP_OK;
			}
		case WA_MIN:
		case WA_MAX:
			if (WARP_TYPE_IS_FLOAT(ag->type))
			{
				if (fv == 0.0 && warp_row_dbits(fv) != 0)
					return WARP_ROW_BAD;	/* -0: order-dependent result */
				if (ag->kind == WA_MIN)
					warp_row_min_u64((warp_uint64 *) &s->ival, warp_row_fkey(fv));
				else
					warp_row_max_u64((warp_uint64 *) &s->ival, warp_row_fkey(fv));
			}
			else if (ag->kind == WA_MIN)
				warp_row_min_i64(&s->ival, iv);
			else
				warp_row_max_i64(&s->ival, iv);
			warp_row_add_u64((warp_uint64 *) &s->count, 1);
			return WARP_OK;
		case WA_SUM_FLOAT:
			if (ag->type != WT_FLOAT8 || !(fv < WARP_ROW_SUM_LIMIT && fv > -WARP_ROW_SUM_LIMIT))
				return WARP_ROW_BAD;
			warp_row_add_f64(&s->fval, fv);
			warp_row_add_u64((warp_uint64 *) &s->count, 1);
			return WARP_OK;
		case WA_AVG_FLOAT:
			if (!(fv < WARP_ROW_AVG_LIMIT && fv > -WARP_ROW_AVG_LIMIT))
				return WARP_ROW_BAD;
			warp_row_add_f64(&s->fval, fv);
			warp_row_add_f64(&s->fsxx, WARP_F8_MUL(fv, fv));
			warp_row_add_u64((warp_uint64 *) &s->count, 1);
			return WARP_OK;
		case WA_SUM_NUMERIC:
			return WARP_ROW_BAD;	/* CPU driver only (warp_row_check) */
	}
	return WARP_ROW_BAD;
}

/*
 * Add accumulating state b into accumulating state *a, atomically in
 * device code: a thread block's pre-aggregated state of a group into the
 * group table (src/gpud/warp_gpu_tile.cu).  The sum of the updates each
 * state took, as if every input had been added to *a itself.
 */
WARP_FN void
warp_row_agg_absorb(const WarpAggSpec *ag, WarpAggState *a, const WarpAggState *b)
{
	if (b->count == 0)
		return;
	switch ((WarpAggKind) ag->kind)
	{
		case WA_COUNT_STAR:
		case WA_COUNT:
			break;
		case WA_SUM_INT:
		case WA_AVG_INT:
			warp_row_add_u64((warp_uint64 *) &a->ival, (warp_uint64) b->ival);
			break;
		case WA_SUM_INT8:
			{
				warp_uint64 old = warp_row_fetch_add_u64(&a->wide_lo, b->wide_lo);
				warp_uint64 hi = (warp_uint64) b->wide_hi + (old + b->wide_lo < old ? 1 : 0);

				if (hi != 0)
					warp_row_add_u64((warp_uint64 *) &a->wide_hi, hi);
				break;
			}
		case WA_MIN:
			if (WARP_TYPE_IS_FLOAT(ag->type))
				warp_row_min_u64((warp_uint64 *) &a->ival, (warp_uint64) b->ival);
			else
				warp_row_min_i64(&a->ival, b->ival);
			break;
		case WA_MAX:
			if (WARP_TYPE_IS_FLOAT(ag->type))
				warp_row_max_u64((warp_uint64 *) &a->ival, (warp_uint64) b->ival);
			else
				warp_row_max_i64(&a->ival, b->ival);
			break;
		case WA_SUM_FLOAT:
			warp_row_add_f64(&a->fval, b->fval);
			break;
		case WA_AVG_FLOAT:
			warp_row_add_f64(&a->fval, b->fval);
			warp_row_add_f64(&a->fsxx, b->fsxx);
			break;
		case WA_SUM_NUMERIC:
			break;				/* CPU driver only (warp_row_check) */
	}
	warp_row_add_u64((warp_uint64 *) &a->count, (warp_uint64) b->count);
}

/*
 * An accumulating state in the CPU driver's form (what warp_cpu_group_agg
 * returns), except that avg(float)'s fsxx is still Σx² (warp_row_agg_final
 * converts it).  Fields an empty state never set are zero, as in the CPU
 * driver's.
 */
WARP_FN void
warp_row_agg_export(const WarpAggSpec *ag, WarpAggState *s)
{
	switch ((WarpAggKind) ag->kind)
	{
		case WA_MIN:
		case WA_MAX:
			if (s->count == 0)
			{
				s->ival = 0;
				s->fval = 0.0;
			}
			else if (WARP_TYPE_IS_FLOAT(ag->type))
			{
				s->fval = warp_row_funkey((warp_uint64) s->ival);
				s->ival = 0;
			}
			break;
		case WA_SUM_FLOAT:
			if (s->count == 0)
				s->fval = 0.0;
			break;
		default:
			break;
	}
}

/* Combine exported state b into exported state a (same aggregate). */
WARP_FN void
warp_row_agg_merge(const WarpAggSpec *ag, WarpAggState *a, const WarpAggState *b)
{
	if (b->count == 0)
		return;
	if (a->count == 0)
	{
		*a = *b;
		return;
	}
	switch ((WarpAggKind) ag->kind)
	{
		case WA_COUNT_STAR:
		case WA_COUNT:
			break;
		case WA_SUM_INT:
		case WA_AVG_INT:
			a->ival = (warp_int64) ((warp_uint64) a->ival + (warp_uint64) b->ival);
			break;
		case WA_SUM_INT8:
			{
				warp_uint64 lo = a->wide_lo + b->wide_lo;

				a->wide_hi = (warp_int64) ((warp_uint64) a->wide_hi + (warp_uint64) b->wide_hi +
										   (lo < a->wide_lo ? 1 : 0));
				a->wide_lo = lo;
				break;
			}
		case WA_MIN:
		case WA_MAX:
			if (WARP_TYPE_IS_FLOAT(ag->type))
			{
				int			c = warp_float8_cmp(b->fval, a->fval);

				if (ag->kind == WA_MIN ? c < 0 : c > 0)
					a->fval = b->fval;
			}
			else if (ag->kind == WA_MIN ? b->ival < a->ival : b->ival > a->ival)
				a->ival = b->ival;
			break;
		case WA_SUM_FLOAT:
			a->fval = WARP_F8_ADD(a->fval, b->fval);
			break;
		case WA_AVG_FLOAT:
			a->fval = WARP_F8_ADD(a->fval, b->fval);
			a->fsxx = WARP_F8_ADD(a->fsxx, b->fsxx);
			break;
		case WA_SUM_NUMERIC:
			break;				/* CPU driver only (warp_row_check) */
	}
	a->count += b->count;
}

/*
 * Last step once all partial states are merged: avg(float)'s Σx² becomes
 * Sxx = Σx² - Sx²/N (clamped at 0), the Youngs-Cramer sum of squared
 * deviations up to rounding.  avg's final function reads only N and Sx.
 */
WARP_FN void
warp_row_agg_final(const WarpAggSpec *ag, WarpAggState *s)
{
	if (ag->kind == WA_AVG_FLOAT)
	{
		double		sxx = 0.0;

		if (s->count > 1)
		{
			sxx = s->fsxx - s->fval * s->fval / (double) s->count;
			if (!(sxx > 0.0))
				sxx = 0.0;
		}
		s->fsxx = sxx;
	}
}

/* ------------------------------------------------------------- grouping */

WARP_FN warp_uint64
warp_row_key_hash(const warp_int64 *kv, const warp_uint8 *kn, int nkeys)
{
	warp_uint64 h = UINT64_C(0x9e3779b97f4a7c15);
	int			k;

	for (k = 0; k < nkeys; k++)
		h = warp_hash_int64((warp_int64) (h ^ (kn[k] ? UINT64_C(0x5bd1e995) : (warp_uint64) kv[k])) + k);
	return h;
}

/*
 * Slot of the group with these keys, created if new (append form: a new
 * slot every time); -1 if the table is full.
 */
WARP_FN warp_int64
warp_row_group(const WarpRowGroups *g, const warp_int64 *kv, const warp_uint8 *kn, warp_int64 code)
{
	int			nkeys = g->nkeys;
	int			k;
	warp_uint64 i,
				probes;

	if (g->append)
	{
		/* row mode: the next slot, whatever the keys */
		i = warp_row_fetch_add_u64((warp_uint64 *) g->nused, 1);
		if (i > g->mask || i >= g->max_used)
			return -1;
		for (k = 0; k < nkeys; k++)
		{
			g->keys[i * nkeys + k] = kv[k];
			g->knull[i * nkeys + k] = kn[k];
		}
		warp_row_publish_u32(&g->state[i], 2);
		return (warp_int64) i;
	}
	if (g->direct)
	{
		if (warp_row_load_u32(&g->state[code]) != 2)
		{
			/*
			 * Every row of this group writes the same keys, so racing
			 * writers are harmless (nobody reads keys until the kernel is
			 * over); the compare-and-swap only makes the count exact.
			 */
			for (k = 0; k < nkeys; k++)
			{
				g->keys[code * nkeys + k] = kv[k];
				g->knull[code * nkeys + k] = kn[k];
			}
			if (warp_row_cas_u32(&g->state[code], 0, 2) == 0)
				warp_row_add_u64((warp_uint64 *) g->nused, 1);
		}
		return code;
	}
	i = warp_row_key_hash(kv, kn, nkeys) & g->mask;
	for (probes = 0; probes <= g->mask; probes++, i = (i + 1) & g->mask)
	{
		warp_uint32 st = warp_row_load_u32(&g->state[i]);
		const volatile warp_int64 *sk;
		const volatile warp_uint8 *sn;

		if (st == 0)
		{
			st = warp_row_cas_u32(&g->state[i], 0, 1);
			if (st == 0)
			{
				/*
				 * Claimed: fill in the keys, then publish (always, so that
				 * nobody spins on this slot forever), then count it.  Over
				 * the limit, the row is reported instead of aggregated.
				 */
				for (k = 0; k < nkeys; k++)
				{
					g->keys[i * nkeys + k] = kv[k];
					g->knull[i * nkeys + k] = kn[k];
				}
				warp_row_publish_u32(&g->state[i], 2);
				if (warp_row_fetch_add_u64((warp_uint64 *) g->nused, 1) >= g->max_used)
					return -1;
				return (warp_int64) i;
			}
		}
		while (st == 1)			/* another thread is filling it in */
			st = warp_row_load_u32(&g->state[i]);
#ifdef __CUDA_ARCH__
		__threadfence();
#endif
		sk = g->keys + i * nkeys;
		sn = g->knull + i * nkeys;
		for (k = 0; k < nkeys; k++)
			if (sk[k] != kv[k] || sn[k] != kn[k])
				break;
		if (k == nkeys)
			return (warp_int64) i;
	}
	return -1;
}

#endif							/* WARP_ROW_AGG_H */
