/*-------------------------------------------------------------------------
 *
 * warp_cpu_group.c
 *	  The CPU driver's groups: finding or creating a joined row's group
 *	  (direct codes or a hash table), row mode's appended rows and their
 *	  top-N compaction, and accumulating the aggregates.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "warp_cpu_internal.h"
#include "warp_group_merge.h"
#include "warp_ops_float.h"
#include "warp_ops_int.h"
#include "warp_ops_datetime.h"
#include "warp_ops_tz.h"
#include "warp_ops_text.h"

/* ------------------------------------------------------------ grouping */

static warp_uint64
key_hash(const warp_int64 *kv, const warp_uint8 *kn, int nkeys)
{
	warp_uint64 h = UINT64_C(0x9e3779b97f4a7c15);
	int			k;

	for (k = 0; k < nkeys; k++)
		h = warp_hash_int64((warp_int64) (h ^ (kn[k] ? UINT64_C(0x5bd1e995) : (warp_uint64) kv[k])) + k);
	return h;
}

static bool
rehash_groups(WarpCpu *x)
{
	warp_uint64 cap = (x->hmask + 1) * 2;
	warp_int32 *slots = xalloc(x, sizeof(warp_int32) * cap);
	int			nkeys = x->p->nkeys;
	warp_int64	g;

	if (!slots)
		return false;
	memset(slots, 0xff, sizeof(warp_int32) * cap);
	for (g = 0; g < x->ngroups; g++)
	{
		warp_uint64 s = key_hash(x->gkey + g * nkeys, x->gnull + g * nkeys, nkeys) & (cap - 1);

		while (slots[s] >= 0)
			s = (s + 1) & (cap - 1);
		slots[s] = (warp_int32) g;
	}
	x->hslot = slots;
	x->hmask = cap - 1;
	return true;
}

/* ------------------------------------------------------ row-mode top-N */

/* the first ORDER BY key's order (warp_topn_order.h, shared with the GPU) */
static inline int
topn_cmp(const WarpCpu *x, warp_int64 a, warp_uint8 an, warp_int64 b, warp_uint8 bn)
{
	return warp_topn_cmp(&x->topn_order, a, an, b, bn);
}

/* compact when the table holds twice the limit, and not for tiny ones */
warp_int64
cpu_topn_compact_floor(const WarpProgram *p)
{
	return warp_topn_compact_floor(p);
}

/*
 * The table holds topn_compact_at rows: find the topn_limit-th best first
 * ORDER BY key among them, make it the threshold, and drop the rows that
 * sort after it (warp_topn_compact_rows).  false on no memory.
 */
static bool
topn_compact(WarpCpu *x)
{
	const WarpProgram *p = x->p;
	warp_int64	n = x->ngroups,
				w;

	if (n > x->topn_idx_cap)
	{
		x->topn_idx = xalloc(x, sizeof(warp_int32) * n);
		if (x->topn_idx == NULL)
			return false;
		x->topn_idx_cap = n;
	}
	w = warp_topn_compact_rows(p, x->gkey, x->gnull, n, x->topn_idx, &x->topn_val,
							   &x->topn_null);
	x->topn_have = true;
	x->ngroups = w;
	/* many rows equal to the threshold: compact again only at twice them */
	x->topn_compact_at = w * 2 > cpu_topn_compact_floor(p) ? w * 2 : cpu_topn_compact_floor(p);
	return true;
}

/* the key in kbuf/knull as a new group (row mode: every row); -1 on no memory */
static warp_int64
append_row(WarpCpu *x)
{
	int			nkeys = x->p->nkeys;
	warp_int64	g;

	if (x->ngroups >= WARP_INT32_MAX - 1 || !cpu_groups_reserve(x, x->ngroups + 1))
		return -1;
	g = x->ngroups++;
	memcpy(x->gkey + g * nkeys, x->kbuf, sizeof(warp_int64) * nkeys);
	memcpy(x->gnull + g * nkeys, x->knull, nkeys);
	return g;
}

/* group index of the key in kbuf/knull, created if new; -1 on no memory */
static warp_int64
find_group(WarpCpu *x, warp_int64 code)
{
	int			nkeys = x->p->nkeys;
	warp_int64	g;
	warp_uint64 s = 0;

	if (x->direct)
	{
		if (x->dgroup[code] >= 0)
			return x->dgroup[code];
	}
	else
	{
		s = key_hash(x->kbuf, x->knull, nkeys) & x->hmask;
		for (;;)
		{
			warp_int32	cand = x->hslot[s];

			if (cand < 0)
				break;
			if (memcmp(x->gkey + (warp_int64) cand * nkeys, x->kbuf, sizeof(warp_int64) * nkeys) == 0 &&
				memcmp(x->gnull + (warp_int64) cand * nkeys, x->knull, nkeys) == 0)
				return cand;
			s = (s + 1) & x->hmask;
		}
	}
	if ((g = append_row(x)) < 0)
		return -1;
	{
		int			a;

		for (a = 0; a < x->p->naggs; a++)
			memset(&x->gagg[a][g], 0, sizeof(WarpAggState));
	}
	if (x->direct)
		x->dgroup[code] = (warp_int32) g;
	else
	{
		x->hslot[s] = (warp_int32) g;
		if ((warp_uint64) x->ngroups * 2 > x->hmask && !rehash_groups(x))
			return -1;
	}
	return g;
}

/* min/max: numeric, float (PostgreSQL's order) or integer */
static inline void
accumulate_minmax(const WarpAggSpec *ag, WarpAggState *gs, const warp_uint8 *ok,
				  const warp_uint16 *epos, const warp_int64 *eg, warp_int64 ne,
				  const warp_int64 *iv, const double *fv, const warp_int128 *qv)
{
	warp_int64	e;

	for (e = 0; e < ne; e++)
	{
		int			i = epos[e];
		WarpAggState *s;

		if (!ok[i])
			continue;
		s = &gs[eg[e]];
		if (qv)
		{
			/* numeric: every value has the node's display scale, so
			 * the unscaled integers order like the numerics */
			if (s->count == 0 ||
				(ag->kind == WA_MIN ? qv[i] < warp_agg_wide(s) : qv[i] > warp_agg_wide(s)))
				warp_agg_set_wide(s, qv[i]);
		}
		else if (fv)
		{
			/* float8smaller(state, new): new unless state < new */
			bool		keep = ag->kind == WA_MIN ? warp_float8_lt(s->fval, fv[i])
				: warp_float8_gt(s->fval, fv[i]);

			if (s->count == 0 || !keep)
				s->fval = fv[i];
		}
		else if (s->count == 0 ||
				 (ag->kind == WA_MIN ? iv[i] < s->ival : iv[i] > s->ival))
			s->ival = iv[i];
		s->count++;
	}
}


/* avg(float): float8_accum step for step */
static inline WarpStatus
accumulate_avg_float(WarpCpu *x, WarpAggState *gs, const warp_uint8 *ok,
					 const warp_uint16 *epos, const warp_int64 *eg, warp_int64 ne,
					 const double *fv)
{
	warp_int64	e;

	for (e = 0; e < ne; e++)
	{
		int			i = epos[e];
		WarpAggState *s;
		double		v,
					N,
					Sx,
					Sxx;

		if (!ok[i])
			continue;
		s = &gs[eg[e]];
		/* float8_accum, step for step */
		v = fv[i];
		/* Sxx squares: beyond 2^400 the order decides overflow */
		if (x->order_check && !isinf(v) && fabs(v) >= 0x1p400)
			x->order_risk = true;
		N = (double) s->count + 1.0;
		Sx = s->fval + v;
		Sxx = s->fsxx;
		if (s->count > 0)
		{
			double		tmp = v * N - Sx;

			Sxx += tmp * tmp / (N * (double) s->count);
			if (isinf(Sx) || isinf(Sxx))
			{
				if (!isinf(s->fval) && !isinf(v))
					return WARP_ERR_FLOAT_OVERFLOW;
				Sxx = NAN;
			}
		}
		else if (isnan(v) || isinf(v))
			Sxx = NAN;
		s->count++;
		s->fval = Sx;
		s->fsxx = Sxx;
	}
	return WARP_OK;
}

/* ------------------------------------------------------------ aggregates */

static WarpStatus
accumulate(WarpCpu *x, int a, warp_int64 ne)
{
	const WarpAggSpec *ag = &x->p->aggs[a];
	WarpAggState *gs = x->gagg[a];
	const warp_uint8 *ok = x->ok;
	const warp_uint16 *epos = x->epos;
	const warp_int64 *eg = x->egroup;
	const warp_int64 *iv = ag->arg >= 0 ? x->iv[ag->arg] : NULL;
	const double *fv = ag->arg >= 0 ? x->fv[ag->arg] : NULL;
	const warp_int128 *qv = ag->arg >= 0 ? x->qv[ag->arg] : NULL;
	warp_int64	e;
	WarpStatus	st;

	switch ((WarpAggKind) ag->kind)
	{
		case WA_SUM_NUMERIC:
			for (e = 0; e < ne; e++)
			{
				int			i = epos[e];

				if (ok[i])
				{
					WarpAggState *s = &gs[eg[e]];
					warp_uint128 lo = ((warp_uint128) (warp_uint64) s->wide_hi << 64) | s->wide_lo;
					warp_uint128 sum = lo + (warp_uint128) qv[i];

					/* 192-bit add: the value sign-extended, the carry out
					 * of the low 128 bits into the top 64 */
					s->wide_top += (qv[i] < 0 ? -1 : 0) + (sum < lo ? 1 : 0);
					s->wide_lo = (warp_uint64) sum;
					s->wide_hi = (warp_int64) (warp_uint64) (sum >> 64);
					s->count++;
				}
			}
			break;
		case WA_COUNT_STAR:
		case WA_COUNT:
			for (e = 0; e < ne; e++)
				gs[eg[e]].count += ok[epos[e]];
			break;
		case WA_SUM_INT:
		case WA_AVG_INT:
			for (e = 0; e < ne; e++)
			{
				int			i = epos[e];

				if (ok[i])
				{
					WarpAggState *s = &gs[eg[e]];

					s->count++;
					/* int4_sum / int4_avg_accum: int64 sum, no check */
					s->ival = (warp_int64) ((warp_uint64) s->ival + (warp_uint64) iv[i]);
				}
			}
			break;
		case WA_SUM_INT8:
			for (e = 0; e < ne; e++)
			{
				int			i = epos[e];

				if (ok[i])
				{
					WarpAggState *s = &gs[eg[e]];

					/* do_int128_accum: 128 bits never overflow here */
					s->count++;
					warp_agg_set_wide(s, warp_agg_wide(s) + iv[i]);
				}
			}
			break;
		case WA_MIN:
		case WA_MAX:
			accumulate_minmax(ag, gs, ok, epos, eg, ne, iv, fv, qv);
			break;
		case WA_SUM_FLOAT:
			for (e = 0; e < ne; e++)
			{
				int			i = epos[e];
				WarpAggState *s;

				if (!ok[i])
					continue;
				s = &gs[eg[e]];
				/* beyond these no order of fewer than 2^60 additions
				 * overflows (float4: 2^64 * 2^60 < FLT_MAX) */
				if (x->order_check && !isinf(fv[i]) &&
					fabs(fv[i]) >= (ag->type == WT_FLOAT4 ? 0x1p64 : 0x1p960))
					x->order_risk = true;
				if (s->count == 0)
					s->fval = fv[i];
				else if (ag->type == WT_FLOAT4)
				{
					warp_float4 r;

					if ((st = warp_float4_pl((warp_float4) s->fval, (warp_float4) fv[i], &r)) != WARP_OK)
						return st;
					s->fval = r;
				}
				else if ((st = warp_float8_pl(s->fval, fv[i], &s->fval)) != WARP_OK)
					return st;
				s->count++;
			}
			break;
		case WA_AVG_FLOAT:
			return accumulate_avg_float(x, gs, ok, epos, eg, ne, fv);
	}
	return WARP_OK;
}

/* ---------------------------------------------------- a vector's rows */

/*
 * The group of every joined row e*[0..ne) into x->egroup, its fact keys
 * evaluated once per distinct position (x->usel[0..nu)); in row mode the
 * rows appended instead, those top-N already rules out dropped.
 */
WarpStatus
cpu_group_rows(WarpCpu *x, warp_int64 ne, int nu)
{
	const WarpProgram *p = x->p;
	int			k;
	warp_int64	e;
	WarpStatus	st;

	/* group of every joined row */
	for (k = 0; k < p->nkeys; k++)
		if (p->keys[k].kind == WG_FACT &&
			(st = cpu_eval(x, p->keys[k].node, x->usel, nu)) != WARP_OK)
			return st;
	for (e = 0; e < ne; e++)
	{
		int			i = x->epos[e];
		warp_int64	code = 0;
		warp_int64	g;

		for (k = 0; k < p->nkeys; k++)
		{
			const WarpGroupKey *gk = &p->keys[k];

			if (gk->kind == WG_DIM)
			{
				const WarpJoinTable *gt = x->tables[gk->join];
				warp_int32	br = x->ebrow[gk->join][e];
				warp_int32	pid = br >= 0 ? gt->payload[br] : gt->npayloads;

				x->kbuf[k] = pid;
				x->knull[k] = 0;
				if (x->direct)
					code += pid * x->stride[k];
			}
			else
			{
				x->knull[k] = x->nv[gk->node][i];
				if (x->knull[k])
					x->kbuf[k] = 0;
				else if (IS_FLOAT_NODE(x, gk->node))
					memcpy(&x->kbuf[k], &x->fv[gk->node][i], sizeof(double));
				else
					x->kbuf[k] = x->iv[gk->node][i];
			}
		}
		if (p->topn_limit > 0 && x->topn_have &&
			topn_cmp(x, x->kbuf[p->topn_key], x->knull[p->topn_key],
					 x->topn_val, x->topn_null) > 0)
			continue;			/* at least topn_limit rows come first */
		g = p->emit_rows ? append_row(x) : find_group(x, code);
		if (g < 0)
			return WARP_ERR_OUT_OF_MEMORY;
		x->egroup[e] = g;
	}
	if (p->emit_rows && p->topn_limit > 0 && x->ngroups >= x->topn_compact_at &&
		!topn_compact(x))
		return WARP_ERR_OUT_OF_MEMORY;
	return WARP_OK;
}

/*
 * Every aggregate over the joined rows e*[0..ne) of the vector (their
 * groups in x->egroup; x->usel[0..nu) the distinct positions).
 */
WarpStatus
cpu_aggregate_rows(WarpCpu *x, warp_int64 ne, int nu)
{
	const WarpProgram *p = x->p;
	int			k,
				a,
				f;
	warp_int64	e;
	WarpStatus	st;

	/*
	 * Float sums and averages can fail in their transitions (overflow).  On
	 * any error warp_cpu_run_batch replays the vector row by row to find
	 * PostgreSQL's first failing row; that replay must start from the
	 * states before this vector, or a sum already holding the vector's
	 * later rows overflows before an earlier row's own error (a division
	 * by zero in a later aggregate's FILTER, say) is reached.  So those
	 * states are saved here and put back on error (the other aggregates'
	 * transitions cannot fail).
	 */
	for (f = 0; f < x->nfloat; f++)
	{
		const WarpAggState *gs = x->gagg[x->float_aggs[f]];

		for (e = 0; e < ne; e++)
			x->fsnap[f * x->ecap + e] = gs[x->egroup[e]];
	}

	/* aggregates: FILTER first, then the argument, like ExecAgg */
	for (a = 0; a < p->naggs; a++)
	{
		const WarpAggSpec *ag = &p->aggs[a];
		warp_uint16 *asel = x->sel;	/* free again: reuse */
		int			na = nu;

		memcpy(asel, x->usel, sizeof(warp_uint16) * nu);
		for (k = 0; k < nu; k++)
			x->ok[x->usel[k]] = 0;
		if (ag->filter >= 0)
		{
			int			m2 = 0;

			if ((st = cpu_eval(x, ag->filter, asel, na)) != WARP_OK)
				goto restore;
			for (k = 0; k < na; k++)
				if (!x->nv[ag->filter][asel[k]] && x->iv[ag->filter][asel[k]])
					asel[m2++] = asel[k];
			na = m2;
		}
		if (ag->arg >= 0)
		{
			if ((st = cpu_eval(x, ag->arg, asel, na)) != WARP_OK)
				goto restore;
			for (k = 0; k < na; k++)
				x->ok[asel[k]] = !x->nv[ag->arg][asel[k]];
		}
		else
			for (k = 0; k < na; k++)
				x->ok[asel[k]] = 1;
		if ((st = accumulate(x, a, ne)) != WARP_OK)
			goto restore;
	}
	return WARP_OK;

restore:
	for (f = 0; f < x->nfloat; f++)
	{
		WarpAggState *gs = x->gagg[x->float_aggs[f]];

		/* backwards: a group several rows hit gets its first saved state */
		for (e = ne - 1; e >= 0; e--)
			gs[x->egroup[e]] = x->fsnap[f * x->ecap + e];
	}
	return st;
}
