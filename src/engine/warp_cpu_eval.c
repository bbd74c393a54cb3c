/*-------------------------------------------------------------------------
 *
 * warp_cpu_eval.c
 *	  The CPU driver's expression evaluation: node ni over the positions of
 *	  a selection vector, each operation a loop over the vector, lazily
 *	  (a CASE branch not taken, the right side of a decided AND/OR are
 *	  never computed), with PostgreSQL's errors.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "warp_cpu_internal.h"
#include "warp_ops_float.h"
#include "warp_ops_int.h"
#include "warp_ops_datetime.h"
#include "warp_ops_tz.h"
#include "warp_ops_text.h"

/* ----------------------------------------------------------- evaluation */

static inline bool
values_equal(WarpCpu *x, int a, int b, int i)
{
	if (IS_FLOAT_NODE(x, a))
		return warp_float8_eq(x->fv[a][i], x->fv[b][i]);
	return x->iv[a][i] == x->iv[b][i];
}

static inline void
copy_value(WarpCpu *x, int dst, int src, int i)
{
	x->nv[dst][i] = x->nv[src][i];
	if (IS_FLOAT_NODE(x, dst))
		x->fv[dst][i] = x->fv[src][i];
	else if (x->p->nodes[dst].type == WT_NUMERIC)
		x->qv[dst][i] = x->qv[src][i];
	else
		x->iv[dst][i] = x->iv[src][i];
}

#define ARITH_LOOP(T, IN, FN) \
	for (k = 0; k < n; k++) \
	{ \
		int			i = sel[k]; \
		T			r; \
		if (an[i] | bn[i]) { rn[i] = 1; continue; } \
		rn[i] = 0; \
		st = FN((T) IN##a[i], (T) IN##b[i], &r); \
		if (warp_unlikely(st != WARP_OK)) return st; \
		OUT[i] = r; \
	}

#define ARITH_OPS(T, IN, PFX) \
	switch (nd->sub) \
	{ \
		case WARP_ARITH_ADD: ARITH_LOOP(T, IN, PFX##_pl); break; \
		case WARP_ARITH_SUB: ARITH_LOOP(T, IN, PFX##_mi); break; \
		case WARP_ARITH_MUL: ARITH_LOOP(T, IN, PFX##_mul); break; \
		case WARP_ARITH_DIV: ARITH_LOOP(T, IN, PFX##_div); break; \
		default: ARITH_LOOP(T, IN, PFX##_mod); break; \
	}

/*
 * Numeric nodes: int128 unscaled values at the nodes' scales, with
 * warp_ops_numeric.h's exact operations.  The builder bounds every value
 * below 10^38 from the columns' precisions, so WARP_ERR_NUMERIC_OVERFLOW
 * cannot arise from valid data; should it, it is reported, never wrapped.
 */
static WarpStatus
eval_numeric_arith(WarpCpu *x, const WarpNode *nd, int ni, const warp_uint16 *sel, int n)
{
	const warp_uint8 *an = x->nv[nd->a],
			   *bn = x->nv[nd->b];
	const warp_int128 *qa = x->qv[nd->a],
			   *qb = x->qv[nd->b];
	warp_uint8 *rn = x->nv[ni];
	warp_int128 *out = x->qv[ni];
	int			sa = x->p->nodes[nd->a].scale,
				sb = x->p->nodes[nd->b].scale;
	int			k;

	for (k = 0; k < n; k++)
	{
		int			i = sel[k];
		WarpNumeric r;
		WarpStatus	st;

		rn[i] = an[i] | bn[i];
		if (rn[i])
			continue;
		if (nd->sub == WARP_ARITH_MUL)
			st = warp_numeric_mul(warp_numeric_make(qa[i], sa), warp_numeric_make(qb[i], sb), &r);
		else if (nd->sub == WARP_ARITH_ADD)
			st = warp_numeric_add(warp_numeric_make(qa[i], sa), warp_numeric_make(qb[i], sb), &r);
		else
			st = warp_numeric_sub(warp_numeric_make(qa[i], sa), warp_numeric_make(qb[i], sb), &r);
		if (warp_unlikely(st != WARP_OK))
			return st;
		out[i] = r.value;
	}
	return WARP_OK;
}

static void
eval_numeric_cmp(WarpCpu *x, const WarpNode *nd, int ni, const warp_uint16 *sel, int n)
{
	const warp_uint8 *an = x->nv[nd->a],
			   *bn = x->nv[nd->b];
	const warp_int128 *qa = x->qv[nd->a],
			   *qb = x->qv[nd->b];
	int			sa = x->p->nodes[nd->a].scale,
				sb = x->p->nodes[nd->b].scale;
	warp_uint8 *rn = x->nv[ni];
	warp_int64 *out = x->iv[ni];
	int			k;

	for (k = 0; k < n; k++)
	{
		int			i = sel[k];
		int			c;

		rn[i] = an[i] | bn[i];
		if (rn[i])
			continue;
		c = warp_numeric_cmp(warp_numeric_make(qa[i], sa), warp_numeric_make(qb[i], sb));
		out[i] = cmp_holds(nd->sub, c);
	}
}

/* float types have no % */
#define warp_float8_mod warp_float8_div
#define warp_float4_mod warp_float4_div

static WarpStatus
eval_arith(WarpCpu *x, const WarpNode *nd, int ni, const warp_uint16 *sel, int n)
{
	const warp_uint8 *an,
			   *bn;
	warp_uint8 *rn = x->nv[ni];
	WarpStatus	st;
	int			k;

	if ((st = cpu_eval(x, nd->a, sel, n)) != WARP_OK ||
		(st = cpu_eval(x, nd->b, sel, n)) != WARP_OK)
		return st;
	an = x->nv[nd->a];
	bn = x->nv[nd->b];
	if (nd->type == WT_NUMERIC)
		return eval_numeric_arith(x, nd, ni, sel, n);
	if (WARP_TYPE_IS_FLOAT(nd->type))
	{
		const double *fa = x->fv[nd->a],
				   *fb = x->fv[nd->b];
		double	   *OUT = x->fv[ni];

		if (nd->type == WT_FLOAT8)
			ARITH_OPS(warp_float8, f, warp_float8)
		else
			ARITH_OPS(warp_float4, f, warp_float4)
	}
	else
	{
		const warp_int64 *ia = x->iv[nd->a],
				   *ib = x->iv[nd->b];
		warp_int64 *OUT = x->iv[ni];

		if (nd->type == WT_INT8)
			ARITH_OPS(warp_int64, i, warp_int8)
		else if (nd->type == WT_INT4)
			ARITH_OPS(warp_int32, i, warp_int4)
		else
			ARITH_OPS(warp_int16, i, warp_int2)
	}
	return WARP_OK;
}

static WarpStatus
eval_cmp(WarpCpu *x, const WarpNode *nd, int ni, const warp_uint16 *sel, int n)
{
	const warp_uint8 *an,
			   *bn;
	warp_uint8 *rn = x->nv[ni];
	warp_int64 *out = x->iv[ni];
	WarpStatus	st;
	int			k;

	if ((st = cpu_eval(x, nd->a, sel, n)) != WARP_OK ||
		(st = cpu_eval(x, nd->b, sel, n)) != WARP_OK)
		return st;
	an = x->nv[nd->a];
	bn = x->nv[nd->b];
	if (x->p->nodes[nd->a].type == WT_NUMERIC)
	{
		eval_numeric_cmp(x, nd, ni, sel, n);
		return WARP_OK;
	}
	if (IS_FLOAT_NODE(x, nd->a))
	{
		const double *fa = x->fv[nd->a],
				   *fb = x->fv[nd->b];

		for (k = 0; k < n; k++)
		{
			int			i = sel[k];
			int			c;

			rn[i] = an[i] | bn[i];
			c = warp_float8_cmp(fa[i], fb[i]);
			out[i] = cmp_holds(nd->sub, c);
		}
	}
	else
	{
		const warp_int64 *ia = x->iv[nd->a],
				   *ib = x->iv[nd->b];

#define CMP_LOOP(OP) \
		for (k = 0; k < n; k++) \
		{ \
			int			i = sel[k]; \
			rn[i] = an[i] | bn[i]; \
			out[i] = ia[i] OP ib[i]; \
		}
		switch (nd->sub)
		{
			case WARP_CMP_EQ: CMP_LOOP(==); break;
			case WARP_CMP_NE: CMP_LOOP(!=); break;
			case WARP_CMP_LT: CMP_LOOP(<); break;
			case WARP_CMP_LE: CMP_LOOP(<=); break;
			case WARP_CMP_GT: CMP_LOOP(>); break;
			default: CMP_LOOP(>=); break;
		}
#undef CMP_LOOP
	}
	return WARP_OK;
}

/* AND / OR with SQL's three-valued logic, short-circuit per row */
static WarpStatus
eval_bool(WarpCpu *x, const WarpNode *nd, int ni, const warp_uint16 *sel, int n)
{
	warp_uint16 *cur = x->selA[ni];
	warp_int64 *out = x->iv[ni];
	warp_uint8 *rn = x->nv[ni];
	bool		is_and = nd->op == WN_AND;
	int			m = n,
				k,
				j;

	for (k = 0; k < n; k++)
	{
		cur[k] = sel[k];
		out[sel[k]] = is_and;
		rn[sel[k]] = 0;
	}
	for (j = 0; j < nd->nargs && m > 0; j++)
	{
		int			arg = x->p->args[nd->args_off + j];
		const warp_int64 *av;
		const warp_uint8 *anul;
		int			m2 = 0;
		WarpStatus	st = cpu_eval(x, arg, cur, m);

		if (st != WARP_OK)
			return st;
		av = x->iv[arg];
		anul = x->nv[arg];
		for (k = 0; k < m; k++)
		{
			int			i = cur[k];

			if (!anul[i] && (av[i] != 0) != is_and)
			{
				/* AND met false / OR met true: decided */
				out[i] = !is_and;
				rn[i] = 0;
				continue;
			}
			if (anul[i])
				rn[i] = 1;
			cur[m2++] = (warp_uint16) i;
		}
		m = m2;
	}
	return WARP_OK;
}

/* v converted by FN into a T, stored in the node's DST vector (iv or fv) */
#define CAST_CHECKED(T, FN, DST) \
	do { \
		T			r; \
		\
		if ((st = FN(v, &r)) != WARP_OK) \
			return st; \
		x->DST[ni][i] = r; \
	} while (0)

static WarpStatus
eval_cast(WarpCpu *x, const WarpNode *nd, int ni, const warp_uint16 *sel, int n)
{
	const warp_uint8 *an;
	warp_uint8 *rn = x->nv[ni];
	WarpStatus	st = cpu_eval(x, nd->a, sel, n);
	bool		from_float = IS_FLOAT_NODE(x, nd->a);
	int			k;

	if (st != WARP_OK)
		return st;
	an = x->nv[nd->a];
	for (k = 0; k < n; k++)
	{
		int			i = sel[k];

		rn[i] = an[i];
		if (an[i])
			continue;
		if (nd->type == WT_NUMERIC)
		{
			/* int2/int4/int8 to numeric: exact, scale 0 */
			x->qv[ni][i] = x->iv[nd->a][i];
			continue;
		}
		if (from_float)
		{
			double		v = x->fv[nd->a][i];

			switch (nd->type)
			{
				case WT_FLOAT8:
					x->fv[ni][i] = v;
					break;
				case WT_FLOAT4:
					CAST_CHECKED(warp_float4, warp_float8_to_float4, fv);
					break;
				case WT_INT2:
					CAST_CHECKED(warp_int16, warp_float8_to_int2, iv);
					break;
				case WT_INT4:
					CAST_CHECKED(warp_int32, warp_float8_to_int4, iv);
					break;
				default:
					CAST_CHECKED(warp_int64, warp_float8_to_int8, iv);
					break;
			}
		}
		else
		{
			warp_int64	v = x->iv[nd->a][i];

			switch (nd->type)
			{
				case WT_FLOAT8:
					x->fv[ni][i] = warp_int8_to_float8(v);
					break;
				case WT_FLOAT4:
					x->fv[ni][i] = warp_int8_to_float4(v);
					break;
				case WT_INT2:
					CAST_CHECKED(warp_int16, warp_int2_check, iv);
					break;
				case WT_INT4:
					CAST_CHECKED(warp_int32, warp_int4_check, iv);
					break;
				default:
					x->iv[ni][i] = v;
					break;
			}
		}
	}
	return WARP_OK;
}

#undef CAST_CHECKED

/* CASE and COALESCE: each row takes the first branch that applies */
static WarpStatus
eval_choice(WarpCpu *x, const WarpNode *nd, int ni, const warp_uint16 *sel, int n)
{
	warp_uint16 *cur = x->selA[ni];
	warp_uint16 *hit = x->selB[ni];
	const warp_int32 *args = x->p->args + nd->args_off;
	int			m = n,
				k,
				j;
	WarpStatus	st;

	memcpy(cur, sel, sizeof(warp_uint16) * n);
	if (nd->op == WN_COALESCE)
	{
		for (j = 0; j < nd->nargs && m > 0; j++)
		{
			int			m2 = 0;

			if ((st = cpu_eval(x, args[j], cur, m)) != WARP_OK)
				return st;
			for (k = 0; k < m; k++)
			{
				int			i = cur[k];

				if (!x->nv[args[j]][i])
					copy_value(x, ni, args[j], i);
				else
					cur[m2++] = (warp_uint16) i;
			}
			m = m2;
		}
	}
	else
	{
		int			npairs = nd->nargs / 2;

		for (j = 0; j < npairs && m > 0; j++)
		{
			int			w = args[2 * j],
						t = args[2 * j + 1];
			int			m2 = 0,
						h = 0;

			if ((st = cpu_eval(x, w, cur, m)) != WARP_OK)
				return st;
			for (k = 0; k < m; k++)
			{
				int			i = cur[k];

				if (!x->nv[w][i] && x->iv[w][i])
					hit[h++] = (warp_uint16) i;
				else
					cur[m2++] = (warp_uint16) i;
			}
			m = m2;
			if (h > 0)
			{
				if ((st = cpu_eval(x, t, hit, h)) != WARP_OK)
					return st;
				for (k = 0; k < h; k++)
					copy_value(x, ni, t, hit[k]);
			}
		}
		if ((nd->flags & WARP_CASE_HAS_ELSE) && m > 0)
		{
			int			e = args[nd->nargs - 1];

			if ((st = cpu_eval(x, e, cur, m)) != WARP_OK)
				return st;
			for (k = 0; k < m; k++)
				copy_value(x, ni, e, cur[k]);
			m = 0;
		}
	}
	/* rows no branch produced a value for are NULL */
	for (k = 0; k < m; k++)
		x->nv[ni][cur[k]] = 1;
	return WARP_OK;
}

/* v / 10^scale as the nearest double, as numeric_float8 rounds it */
static double
scaled_to_double(warp_int64 v, int scale)
{
	static const double p10[] = {1, 10, 100, 1000, 1e4, 1e5, 1e6};
	char		buf[48];
	warp_uint64 mag = v < 0 ? -(warp_uint64) v : (warp_uint64) v;

	if (scale == 0 || mag < (UINT64_C(1) << 53))
		return scale == 0 ? (double) v : (double) v / p10[scale];	/* exact operands */
	/* beyond 2^53 the integer itself is rounded: go through the decimal */
	snprintf(buf, sizeof(buf), "%s%llu.%0*llu", v < 0 ? "-" : "",
			 (unsigned long long) (mag / (warp_uint64) p10[scale]), scale,
			 (unsigned long long) (mag % (warp_uint64) p10[scale]));
	return strtod(buf, NULL);
}

/* date_trunc / extract / date_part of a date or timestamp */
/* date arithmetic (WARP_DT_ARITH) on a and b, both evaluated */
static WarpStatus
eval_date_arith(WarpCpu *x, const WarpNode *nd, int ni, const warp_uint16 *sel, int n)
{
	WarpStatus	st;
	int			k;

	if ((st = cpu_eval(x, nd->b, sel, n)) != WARP_OK)
		return st;
	for (k = 0; k < n; k++)
	{
		int			i = sel[k];

		x->nv[ni][i] = x->nv[nd->a][i] | x->nv[nd->b][i];
		if (x->nv[ni][i])
			continue;
		if ((st = warp_dt_arith(&x->p->tz, nd, x->iv[nd->a][i], x->iv[nd->b][i],
								&x->iv[ni][i])) != WARP_OK)
			return st;
	}
	return WARP_OK;
}

/* date_trunc / extract / date_part / conversions / date arithmetic */
static WarpStatus
eval_datetime(WarpCpu *x, const WarpNode *nd, int ni, const warp_uint16 *sel, int n)
{
	WarpStatus	st = cpu_eval(x, nd->a, sel, n);
	bool		is_ts = x->p->nodes[nd->a].type == WT_TIMESTAMP;
	bool		in_zone = (nd->flags & WARP_DT_TZ) != 0;
	bool		sat = (nd->flags & WARP_DT_SATURATE) != 0;
	const WarpTz *tz = &x->p->tz;
	WarpDtField field = (WarpDtField) nd->sub;
	int			scale = warp_dt_extract_scale(field, is_ts);
	int			k;

	if (st != WARP_OK)
		return st;
	if (nd->flags & WARP_DT_ARITH)
		return eval_date_arith(x, nd, ni, sel, n);
	for (k = 0; k < n; k++)
	{
		int			i = sel[k];
		warp_int64	v = x->iv[nd->a][i];
		warp_int64 *out = &x->iv[ni][i];
		WarpNumeric num;

		x->nv[ni][i] = x->nv[nd->a][i];
		if (x->nv[ni][i])
			continue;
		if (nd->flags & WARP_DT_CAST)
		{
			switch ((WarpDtCast) nd->sub)
			{
				case WARP_DTC_DATE_TIMESTAMP:
					st = warp_date_to_timestamp_sat((warp_int32) v, sat, out);
					break;
				case WARP_DTC_TIMESTAMPTZ_TIMESTAMP:
					st = warp_timestamptz_to_timestamp(tz, v, out);
					break;
				case WARP_DTC_TIMESTAMP_DATE:
					st = warp_timestamp_to_date(v, out);
					break;
				case WARP_DTC_TIMESTAMPTZ_DATE:
					st = warp_timestamptz_to_date(tz, v, out);
					break;
				case WARP_DTC_TIMESTAMP_TIMESTAMPTZ:
					st = warp_timestamp_to_timestamptz_sat(tz, v, sat, out);
					break;
				default:
					st = warp_date_to_timestamptz_sat(tz, v, sat, out);
					break;
			}
			if (st != WARP_OK)
				return st;
			continue;
		}
		if (nd->flags & WARP_DT_TRUNC)
		{
			st = in_zone ? warp_timestamptz_trunc(tz, field, v, out)
				: warp_timestamp_trunc(field, v, out);
			if (st != WARP_OK)
				return st;
			continue;
		}
		st = in_zone ? warp_timestamptz_extract(tz, field, v, &num)
			: is_ts ? warp_timestamp_extract(field, v, &num)
			: warp_date_extract(field, (warp_int32) v, &num);
		if (st != WARP_OK)
			return st;
		/* every field fits int64 at its fixed scale (checked, not assumed) */
		if (num.scale != scale || num.value > WARP_INT64_MAX || num.value < WARP_INT64_MIN)
			return WARP_ERR_NUMERIC_OVERFLOW;
		if (nd->flags & WARP_DT_PART)
			x->fv[ni][i] = scaled_to_double((warp_int64) num.value, scale);
		else if (nd->type == WT_NUMERIC)
			x->qv[ni][i] = num.value;
		else
			*out = (warp_int64) num.value;
	}
	return WARP_OK;
}

/* a column node: the column loaded at sel (numeric: widened to int128) */
static WarpStatus
eval_column(WarpCpu *x, const WarpNode *nd, int ni, const warp_uint16 *sel, int n)
{
	int			k;

	int			bad = 0;

	x->load_status = cpu_load_column(x, nd->a, sel, n, &bad);
	if (x->load_status == WARP_LOAD_NO_MEMORY)
		return WARP_ERR_OUT_OF_MEMORY;
	if (x->load_status == WARP_LOAD_LIKE_ESCAPE)
	{
		/* a row's error, found in scan order like a qual's */
		x->load_status = WARP_LOAD_OK;
		return WARP_ERR_LIKE_ESCAPE;
	}
	if (x->load_status != WARP_LOAD_OK)
	{
		x->bad_col = nd->a;
		x->bad_row = x->vstart + bad;
		return WARP_STATUS_LOAD;
	}
	if (nd->type == WT_NUMERIC && x->cq[nd->a])
	{
		/* a wide decimal column's unscaled int128 */
		const warp_int128 *cv = x->cq[nd->a];

		for (k = 0; k < n; k++)
			x->qv[ni][sel[k]] = cv[sel[k]];
	}
	else if (nd->type == WT_NUMERIC)
	{
		/* a decimal column's unscaled int64, widened */
		const warp_int64 *cv = x->ci[nd->a];

		for (k = 0; k < n; k++)
			x->qv[ni][sel[k]] = cv[sel[k]];
	}
	return WARP_OK;
}

/* unary minus, with the integer types' overflow errors */
static WarpStatus
eval_neg(WarpCpu *x, const WarpNode *nd, int ni, const warp_uint16 *sel, int n)
{
	warp_uint8 *rn = x->nv[ni];
	WarpStatus	st;
	int			k;

	if ((st = cpu_eval(x, nd->a, sel, n)) != WARP_OK)
		return st;
	for (k = 0; k < n; k++)
	{
		int			i = sel[k];

		rn[i] = x->nv[nd->a][i];
		if (rn[i])
			continue;
		if (WARP_TYPE_IS_FLOAT(nd->type))
			x->fv[ni][i] = -x->fv[nd->a][i];
		else if (nd->type == WT_NUMERIC)
			x->qv[ni][i] = -x->qv[nd->a][i];	/* |v| < 10^38 */
		else
		{
			warp_int64	v = x->iv[nd->a][i];

			if (nd->type == WT_INT8)
			{
				if ((st = warp_int8_um(v, &x->iv[ni][i])) != WARP_OK)
					return st;
			}
			else if (nd->type == WT_INT4)
			{
				warp_int32	r;

				if ((st = warp_int4_um((warp_int32) v, &r)) != WARP_OK)
					return st;
				x->iv[ni][i] = r;
			}
			else
			{
				warp_int16	r;

				if ((st = warp_int2_um((warp_int16) v, &r)) != WARP_OK)
					return st;
				x->iv[ni][i] = r;
			}
		}
	}
	return WARP_OK;
}

WarpStatus
cpu_eval(WarpCpu *x, int ni, const warp_uint16 *sel, int n)
{
	const WarpNode *nd = &x->p->nodes[ni];
	warp_uint8 *rn = x->nv[ni];
	WarpStatus	st;
	int			k;

	switch ((WarpOp) nd->op)
	{
		case WN_COL:
			return eval_column(x, nd, ni, sel, n);
		case WN_CONST:
			return WARP_OK;
		case WN_ARITH:
			return eval_arith(x, nd, ni, sel, n);
		case WN_CMP:
			return eval_cmp(x, nd, ni, sel, n);
		case WN_IN_SET:
			if ((st = cpu_eval(x, nd->a, sel, n)) != WARP_OK)
				return st;
			{
				const warp_int64 *set = x->p->setvals + nd->args_off;
				bool		is_not = (nd->flags & WARP_IN_NOT) != 0,
							has_null = (nd->flags & WARP_IN_HAS_NULL) != 0;

				for (k = 0; k < n; k++)
				{
					int			i = sel[k],
								r;

					rn[i] = x->nv[nd->a][i];
					if (rn[i])
						continue;
					r = warp_in_set_test(set, nd->nargs, x->iv[nd->a][i], is_not, has_null);
					if (r < 0)
						rn[i] = 1;
					else
						x->iv[ni][i] = r;
				}
			}
			return WARP_OK;
		case WN_AND:
		case WN_OR:
			return eval_bool(x, nd, ni, sel, n);
		case WN_CAST:
			return eval_cast(x, nd, ni, sel, n);
		case WN_DATETIME:
			return eval_datetime(x, nd, ni, sel, n);
		case WN_CASE:
		case WN_COALESCE:
			return eval_choice(x, nd, ni, sel, n);
		case WN_NEG:
			return eval_neg(x, nd, ni, sel, n);
		case WN_NOT:
			if ((st = cpu_eval(x, nd->a, sel, n)) != WARP_OK)
				return st;
			for (k = 0; k < n; k++)
			{
				int			i = sel[k];

				rn[i] = x->nv[nd->a][i];
				x->iv[ni][i] = !x->iv[nd->a][i];
			}
			return WARP_OK;
		case WN_IS_NULL:
		case WN_IS_NOT_NULL:
			if ((st = cpu_eval(x, nd->a, sel, n)) != WARP_OK)
				return st;
			for (k = 0; k < n; k++)
			{
				int			i = sel[k];

				rn[i] = 0;
				x->iv[ni][i] = x->nv[nd->a][i] == (nd->op == WN_IS_NULL);
			}
			return WARP_OK;
		case WN_DISTINCT:
			if ((st = cpu_eval(x, nd->a, sel, n)) != WARP_OK ||
				(st = cpu_eval(x, nd->b, sel, n)) != WARP_OK)
				return st;
			for (k = 0; k < n; k++)
			{
				int			i = sel[k];
				bool		an = x->nv[nd->a][i],
							bn = x->nv[nd->b][i];
				bool		d = (an || bn) ? an != bn : !values_equal(x, nd->a, nd->b, i);

				rn[i] = 0;
				x->iv[ni][i] = nd->sub ? !d : d;
			}
			return WARP_OK;
		case WN_NULLIF:
			if ((st = cpu_eval(x, nd->a, sel, n)) != WARP_OK ||
				(st = cpu_eval(x, nd->b, sel, n)) != WARP_OK)
				return st;
			for (k = 0; k < n; k++)
			{
				int			i = sel[k];

				copy_value(x, ni, nd->a, i);
				if (!x->nv[nd->a][i] && !x->nv[nd->b][i] &&
					values_equal(x, nd->a, nd->b, i))
					rn[i] = 1;
			}
			return WARP_OK;
	}
	return WARP_OK;
}
