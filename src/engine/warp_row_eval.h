/*-------------------------------------------------------------------------
 *
 * warp_row_eval.h
 *	  The row evaluator's interpreter: one expression node at a time over a
 *	  row's memo (warp_row_step), driven by a small explicit stack instead
 *	  of recursion (warp_row_eval), with the rarely taken large node kinds
 *	  (date/time, casts) kept out of line.  Columns come from
 *	  warp_row_load.h; the steps of a whole row are in warp_row_run.h.
 *
 * Pure C (also valid C++ for nvcc); no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_ROW_EVAL_H
#define WARP_ROW_EVAL_H

#include "warp_ops_float.h"
#include "warp_ops_int.h"
#include "warp_ops_datetime.h"
#include "warp_ops_tz.h"
#include "warp_row_load.h"

/* ----------------------------------------------------------- evaluation */

#define WARP_ROW_ISFLOAT(p, n) WARP_TYPE_IS_FLOAT((p)->nodes[(n)].type)

/*
 * Child x must be evaluated before the current node can go on.  A column
 * child is loaded right here (load_child in warp_row_step, which then steps
 * the node again from the start) rather than through another round of
 * warp_row_eval's stack; constants are in the memo from warp_row_prepare
 * on.  Either way a child is evaluated exactly when its parent needs it.
 */
#define WARP_ROW_NEED_CHILD(x) \
	do { \
		if (WRS_ST(s, (x)) == 0) \
		{ \
			*need = (x); \
			if (p->nodes[(x)].op == WN_COL) \
				goto load_child; \
			return WARP_ROW_NEED; \
		} \
	} while (0)

/*
 * The same in a node kind's helper of warp_row_step (WARP_FN_INLINE), which
 * returns WARP_ROW_NEED_COL for a column child; warp_row_step calls it with
 * WARP_ROW_STEP_BY, which goes to its load_child then.  Inlined, each
 * return's constant decides the jump, so the code is warp_row_step's own.
 */
#define WARP_ROW_NEED_COL	(-2)	/* internal: *need is a column, load it */
#define WARP_ROW_NEED_ARG(x) \
	do { \
		if (WRS_ST(s, (x)) == 0) \
		{ \
			*need = (x); \
			if (p->nodes[(x)].op == WN_COL) \
				return WARP_ROW_NEED_COL; \
			return WARP_ROW_NEED; \
		} \
	} while (0)
#define WARP_ROW_STEP_BY(call) \
	do { \
		int			hst = (call); \
		\
		if (hst == WARP_ROW_NEED_COL) \
			goto load_child; \
		return hst; \
	} while (0)

WARP_FN void
warp_row_set_int(WarpRowState *s, int ni, warp_int64 v)
{
	WRS_ST(s, ni) = 1;
	WRS_V(s, ni) = v;
}

WARP_FN void
warp_row_set_float(WarpRowState *s, int ni, double d)
{
	WRS_ST(s, ni) = 1;
	WRS_V(s, ni) = warp_row_dbits(d);
}

WARP_FN void
warp_row_copy(WarpRowState *s, int dst, int src)
{
	WRS_ST(s, dst) = WRS_ST(s, src);
	WRS_V(s, dst) = WRS_V(s, src);
}


/*
 * Integer + - * / % of PostgreSQL's int2, int4 or int8 operator (type):
 * the one definition both the row evaluator's memo step and the tile
 * kernels use (src/gpud/warp_gpu_tile.cu).
 */
WARP_FN int
warp_row_arith_int(int type, int sub, warp_int64 av, warp_int64 bv, warp_int64 *res)
{
	int			st;

	if (type == WT_INT8)
	{
		warp_int64	r = 0;

		switch (sub)
		{
			case WARP_ARITH_ADD: st = warp_int8_pl(av, bv, &r); break;
			case WARP_ARITH_SUB: st = warp_int8_mi(av, bv, &r); break;
			case WARP_ARITH_MUL: st = warp_int8_mul(av, bv, &r); break;
			case WARP_ARITH_DIV: st = warp_int8_div(av, bv, &r); break;
			default: st = warp_int8_mod(av, bv, &r); break;
		}
		*res = r;
	}
	else if (type == WT_INT4)
	{
		warp_int32	a = (warp_int32) av,
					b = (warp_int32) bv,
					r = 0;

		switch (sub)
		{
			case WARP_ARITH_ADD: st = warp_int4_pl(a, b, &r); break;
			case WARP_ARITH_SUB: st = warp_int4_mi(a, b, &r); break;
			case WARP_ARITH_MUL: st = warp_int4_mul(a, b, &r); break;
			case WARP_ARITH_DIV: st = warp_int4_div(a, b, &r); break;
			default: st = warp_int4_mod(a, b, &r); break;
		}
		*res = r;
	}
	else
	{
		warp_int16	a = (warp_int16) av,
					b = (warp_int16) bv,
					r = 0;

		switch (sub)
		{
			case WARP_ARITH_ADD: st = warp_int2_pl(a, b, &r); break;
			case WARP_ARITH_SUB: st = warp_int2_mi(a, b, &r); break;
			case WARP_ARITH_MUL: st = warp_int2_mul(a, b, &r); break;
			case WARP_ARITH_DIV: st = warp_int2_div(a, b, &r); break;
			default: st = warp_int2_mod(a, b, &r); break;
		}
		*res = r;
	}
	return st;
}
/* values_equal of warp_cpu_eval.c (both non-NULL) */
WARP_FN bool
warp_row_equal(const WarpProgram *p, const WarpRowState *s, int a, int b)
{
	if (WARP_ROW_ISFLOAT(p, a))
		return warp_float8_eq(warp_row_bitsd(WRS_V(s, a)), warp_row_bitsd(WRS_V(s, b)));
	return WRS_V(s, a) == WRS_V(s, b);
}

WARP_FN int
warp_row_arith(const WarpNode *nd, WarpRowState *s, int ni)
{
	int			st = WARP_OK;

	if (WARP_TYPE_IS_FLOAT(nd->type))
	{
		double		fa = warp_row_bitsd(WRS_V(s, nd->a)),
					fb = warp_row_bitsd(WRS_V(s, nd->b));

		if (nd->type == WT_FLOAT8)
		{
			warp_float8 r = 0;

			switch (nd->sub)
			{
				case WARP_ARITH_ADD: st = warp_float8_pl(fa, fb, &r); break;
				case WARP_ARITH_SUB: st = warp_float8_mi(fa, fb, &r); break;
				case WARP_ARITH_MUL: st = warp_float8_mul(fa, fb, &r); break;
				default: st = warp_float8_div(fa, fb, &r); break;
			}
			if (st == WARP_OK)
				warp_row_set_float(s, ni, r);
		}
		else
		{
			warp_float4 r = 0,
						a4 = (warp_float4) fa,
						b4 = (warp_float4) fb;

			switch (nd->sub)
			{
				case WARP_ARITH_ADD: st = warp_float4_pl(a4, b4, &r); break;
				case WARP_ARITH_SUB: st = warp_float4_mi(a4, b4, &r); break;
				case WARP_ARITH_MUL: st = warp_float4_mul(a4, b4, &r); break;
				default: st = warp_float4_div(a4, b4, &r); break;
			}
			if (st == WARP_OK)
				warp_row_set_float(s, ni, r);
		}
		return st;
	}
	{
		warp_int64	r = 0;

		st = warp_row_arith_int(nd->type, nd->sub, WRS_V(s, nd->a), WRS_V(s, nd->b), &r);
		if (st == WARP_OK)
			warp_row_set_int(s, ni, r);
	}
	return st;
}

/*
 * date_trunc, extract (as an int8 group key: numeric nodes are refused) and
 * date_part of a date, timestamp or timestamptz (in the program's zone),
 * and the date/time conversions, with the CPU driver's functions.
 * date_part's float8 is the decimal value rounded once; beyond 2^53 the
 * CPU driver rounds through the decimal string, so such a row goes back.
 */
WARP_FN_OUTLINE int
warp_row_datetime(const WarpProgram *p, const WarpNode *nd, WarpRowState *s, int ni)
{
	const WarpTz *tz = &p->tz;
	warp_int64	v = WRS_V(s, nd->a),
				r = 0;
	WarpDtField field = (WarpDtField) nd->sub;
	bool		is_ts = p->nodes[nd->a].type == WT_TIMESTAMP;
	bool		in_zone = (nd->flags & WARP_DT_TZ) != 0;
	bool		sat = (nd->flags & WARP_DT_SATURATE) != 0;
	WarpNumeric num;
	WarpStatus	st;
	int			scale;

	if (nd->flags & WARP_DT_ARITH)
	{
		st = warp_dt_arith(tz, nd, v, WRS_V(s, nd->b), &r);
		if (st == WARP_OK)
			warp_row_set_int(s, ni, r);
		return st;
	}
	if (nd->flags & WARP_DT_CAST)
	{
		switch ((WarpDtCast) nd->sub)
		{
			case WARP_DTC_DATE_TIMESTAMP:
				st = warp_date_to_timestamp_sat((warp_int32) v, sat, &r);
				break;
			case WARP_DTC_TIMESTAMPTZ_TIMESTAMP:
				st = warp_timestamptz_to_timestamp(tz, v, &r);
				break;
			case WARP_DTC_TIMESTAMP_DATE:
				st = warp_timestamp_to_date(v, &r);
				break;
			case WARP_DTC_TIMESTAMPTZ_DATE:
				st = warp_timestamptz_to_date(tz, v, &r);
				break;
			case WARP_DTC_TIMESTAMP_TIMESTAMPTZ:
				st = warp_timestamp_to_timestamptz_sat(tz, v, sat, &r);
				break;
			default:
				st = warp_date_to_timestamptz_sat(tz, v, sat, &r);
				break;
		}
		if (st == WARP_OK)
			warp_row_set_int(s, ni, r);
		return st;
	}
	if (nd->flags & WARP_DT_TRUNC)
	{
		st = in_zone ? warp_timestamptz_trunc(tz, field, v, &r) : warp_timestamp_trunc(field, v, &r);
		if (st == WARP_OK)
			warp_row_set_int(s, ni, r);
		return st;
	}
	st = in_zone ? warp_timestamptz_extract(tz, field, v, &num)
		: is_ts ? warp_timestamp_extract(field, v, &num)
		: warp_date_extract(field, (warp_int32) v, &num);
	if (st != WARP_OK)
		return st;
	scale = warp_dt_extract_scale(field, is_ts);
	if (num.scale != scale || num.value > WARP_INT64_MAX || num.value < WARP_INT64_MIN)
		return WARP_ERR_NUMERIC_OVERFLOW;
	r = (warp_int64) num.value;
	if (nd->flags & WARP_DT_PART)
	{
		const double p10[] = {1, 10, 100, 1000, 1e4, 1e5, 1e6};
		warp_uint64 mag = r < 0 ? -(warp_uint64) r : (warp_uint64) r;

		if (scale > 6)
			return WARP_ROW_BAD;
		if (scale > 0 && mag >= ((warp_uint64) 1 << 53))
			return WARP_ROW_BAD;
		/* exact operands: one correctly rounded division */
		warp_row_set_float(s, ni, scale == 0 ? (double) r : (double) r / p10[scale]);
		return WARP_OK;
	}
	warp_row_set_int(s, ni, r);
	return WARP_OK;
}

WARP_FN_OUTLINE int
warp_row_cast(const WarpProgram *p, const WarpNode *nd, WarpRowState *s, int ni)
{
	int			st = WARP_OK;

	if (WARP_ROW_ISFLOAT(p, nd->a))
	{
		double		v = warp_row_bitsd(WRS_V(s, nd->a));

		switch (nd->type)
		{
			case WT_FLOAT8:
				warp_row_set_float(s, ni, v);
				break;
			case WT_FLOAT4:
				{
					warp_float4 r = 0;

					if ((st = warp_float8_to_float4(v, &r)) == WARP_OK)
						warp_row_set_float(s, ni, r);
					break;
				}
			case WT_INT2:
				{
					warp_int16	r = 0;

					if ((st = warp_float8_to_int2(v, &r)) == WARP_OK)
						warp_row_set_int(s, ni, r);
					break;
				}
			case WT_INT4:
				{
					warp_int32	r = 0;

					if ((st = warp_float8_to_int4(v, &r)) == WARP_OK)
						warp_row_set_int(s, ni, r);
					break;
				}
			default:
				{
					warp_int64	r = 0;

					if ((st = warp_float8_to_int8(v, &r)) == WARP_OK)
						warp_row_set_int(s, ni, r);
					break;
				}
		}
	}
	else
	{
		warp_int64	v = WRS_V(s, nd->a);

		switch (nd->type)
		{
			case WT_FLOAT8:
				warp_row_set_float(s, ni, warp_int8_to_float8(v));
				break;
			case WT_FLOAT4:
				warp_row_set_float(s, ni, warp_int8_to_float4(v));
				break;
			case WT_INT2:
				{
					warp_int16	r = 0;

					if ((st = warp_int2_check(v, &r)) == WARP_OK)
						warp_row_set_int(s, ni, r);
					break;
				}
			case WT_INT4:
				{
					warp_int32	r = 0;

					if ((st = warp_int4_check(v, &r)) == WARP_OK)
						warp_row_set_int(s, ni, r);
					break;
				}
			default:
				warp_row_set_int(s, ni, v);
				break;
		}
	}
	return st;
}

/* WN_NEG: unary minus, with the integer types' overflow errors */
WARP_FN_INLINE int
warp_row_step_neg(const WarpProgram *p, const WarpNode *nd, WarpRowState *s, int ni, int *need)
{
	WARP_ROW_NEED_ARG(nd->a);
	if (WRS_ST(s, nd->a) == 2)
	{
		WRS_ST(s, ni) = 2;
		return WARP_OK;
	}
	if (WARP_TYPE_IS_FLOAT(nd->type))
	{
		warp_row_set_float(s, ni, -warp_row_bitsd(WRS_V(s, nd->a)));
		return WARP_OK;
	}
	else
	{
		warp_int64	v = WRS_V(s, nd->a);
		int			st;

		if (nd->type == WT_INT8)
		{
			warp_int64	r = 0;

			if ((st = warp_int8_um(v, &r)) != WARP_OK)
				return st;
			warp_row_set_int(s, ni, r);
		}
		else if (nd->type == WT_INT4)
		{
			warp_int32	r = 0;

			if ((st = warp_int4_um((warp_int32) v, &r)) != WARP_OK)
				return st;
			warp_row_set_int(s, ni, r);
		}
		else
		{
			warp_int16	r = 0;

			if ((st = warp_int2_um((warp_int16) v, &r)) != WARP_OK)
				return st;
			warp_row_set_int(s, ni, r);
		}
		return WARP_OK;
	}
}

/* WN_CMP: a comparison of a and b (floats as PostgreSQL orders them) */
WARP_FN_INLINE int
warp_row_step_cmp(const WarpProgram *p, const WarpNode *nd, WarpRowState *s, int ni, int *need)
{
	WARP_ROW_NEED_ARG(nd->a);
	WARP_ROW_NEED_ARG(nd->b);
	if (WRS_ST(s, nd->a) == 2 || WRS_ST(s, nd->b) == 2)
	{
		WRS_ST(s, ni) = 2;
		return WARP_OK;
	}
	{
		int			c;

		if (WARP_ROW_ISFLOAT(p, nd->a))
			c = warp_float8_cmp(warp_row_bitsd(WRS_V(s, nd->a)),
								warp_row_bitsd(WRS_V(s, nd->b)));
		else
			c = (WRS_V(s, nd->a) > WRS_V(s, nd->b)) - (WRS_V(s, nd->a) < WRS_V(s, nd->b));
		switch (nd->sub)
		{
			case WARP_CMP_EQ: c = c == 0; break;
			case WARP_CMP_NE: c = c != 0; break;
			case WARP_CMP_LT: c = c < 0; break;
			case WARP_CMP_LE: c = c <= 0; break;
			case WARP_CMP_GT: c = c > 0; break;
			default: c = c >= 0; break;
		}
		warp_row_set_int(s, ni, c);
	}
	return WARP_OK;
}

/* WN_AND, WN_OR: lazily, up to the deciding argument */
WARP_FN_INLINE int
warp_row_step_andor(const WarpProgram *p, const WarpNode *nd, WarpRowState *s, int ni, int *need)
{
	bool		is_and = nd->op == WN_AND;
	bool		sawnull = false;
	int			j;

	for (j = 0; j < nd->nargs; j++)
	{
		int			arg = p->args[nd->args_off + j];

		WARP_ROW_NEED_ARG(arg);
		if (WRS_ST(s, arg) == 2)
			sawnull = true;
		else if ((WRS_V(s, arg) != 0) != is_and)
		{
			/* AND met false / OR met true: decided */
			warp_row_set_int(s, ni, !is_and);
			return WARP_OK;
		}
	}
	if (sawnull)
		WRS_ST(s, ni) = 2;
	else
		warp_row_set_int(s, ni, is_and);
	return WARP_OK;
}

/* WN_IN_SET: a = ANY (set) */
WARP_FN_INLINE int
warp_row_step_in_set(const WarpProgram *p, const WarpNode *nd, WarpRowState *s, int ni, int *need)
{
	WARP_ROW_NEED_ARG(nd->a);
	if (WRS_ST(s, nd->a) == 2)
	{
		WRS_ST(s, ni) = 2;
		return WARP_OK;
	}
	{
		int			r = warp_in_set_test(p->setvals + nd->args_off, nd->nargs,
										 WRS_V(s, nd->a), (nd->flags & WARP_IN_NOT) != 0,
										 (nd->flags & WARP_IN_HAS_NULL) != 0);

		if (r < 0)
			WRS_ST(s, ni) = 2;
		else
			warp_row_set_int(s, ni, r);
	}
	return WARP_OK;
}

/* WN_COALESCE: the first non-NULL argument */
WARP_FN_INLINE int
warp_row_step_coalesce(const WarpProgram *p, const WarpNode *nd, WarpRowState *s, int ni, int *need)
{
	int			j;

	for (j = 0; j < nd->nargs; j++)
	{
		int			arg = p->args[nd->args_off + j];

		WARP_ROW_NEED_ARG(arg);
		if (WRS_ST(s, arg) == 1)
		{
			warp_row_copy(s, ni, arg);
			return WARP_OK;
		}
	}
	WRS_ST(s, ni) = 2;
	return WARP_OK;
}

/* WN_CASE: the first WHEN that holds, else ELSE or NULL */
WARP_FN_INLINE int
warp_row_step_case(const WarpProgram *p, const WarpNode *nd, WarpRowState *s, int ni, int *need)
{
	const warp_int32 *args = p->args + nd->args_off;
	int			npairs = nd->nargs / 2;
	int			j;

	for (j = 0; j < npairs; j++)
	{
		int			w = args[2 * j],
					t = args[2 * j + 1];

		WARP_ROW_NEED_ARG(w);
		if (WRS_ST(s, w) == 1 && WRS_V(s, w) != 0)
		{
			WARP_ROW_NEED_ARG(t);
			warp_row_copy(s, ni, t);
			return WARP_OK;
		}
	}
	if (nd->flags & WARP_CASE_HAS_ELSE)
	{
		int			e = args[nd->nargs - 1];

		WARP_ROW_NEED_ARG(e);
		warp_row_copy(s, ni, e);
		return WARP_OK;
	}
	WRS_ST(s, ni) = 2;
	return WARP_OK;
}

/*
 * One step of node ni: WARP_OK once its value is in the memo, WARP_ROW_NEED
 * with *need = the child to evaluate first, or an error.  Re-entrant: after
 * the child is done the node is stepped again from the start; children
 * already evaluated are read from the memo, so lazy n-ary nodes simply
 * rescan their arguments (never evaluating one past the deciding one).
 */
WARP_FN int
warp_row_step(const WarpRowEnv *env, WarpRowState *s, int ni, int *need)
{
	const WarpProgram *p = env->p;
	const WarpNode *nd = &p->nodes[ni];
	int			lst;

restart:
	switch ((WarpOp) nd->op)
	{
		case WN_COL:
			return warp_row_load(env, s, ni, nd->a);
		case WN_CONST:
			if (nd->flags & WARP_NODE_NULL)
				WRS_ST(s, ni) = 2;
			else if (WARP_TYPE_IS_FLOAT(nd->type))
				warp_row_set_float(s, ni, nd->fval);
			else
				warp_row_set_int(s, ni, nd->ival);
			return WARP_OK;
		case WN_ARITH:
			WARP_ROW_NEED_CHILD(nd->a);
			WARP_ROW_NEED_CHILD(nd->b);
			if (WRS_ST(s, nd->a) == 2 || WRS_ST(s, nd->b) == 2)
			{
				WRS_ST(s, ni) = 2;
				return WARP_OK;
			}
			return warp_row_arith(nd, s, ni);
		case WN_NEG:
			WARP_ROW_STEP_BY(warp_row_step_neg(p, nd, s, ni, need));
		case WN_CMP:
			WARP_ROW_STEP_BY(warp_row_step_cmp(p, nd, s, ni, need));
		case WN_AND:
		case WN_OR:
			WARP_ROW_STEP_BY(warp_row_step_andor(p, nd, s, ni, need));
		case WN_NOT:
			WARP_ROW_NEED_CHILD(nd->a);
			if (WRS_ST(s, nd->a) == 2)
				WRS_ST(s, ni) = 2;
			else
				warp_row_set_int(s, ni, !WRS_V(s, nd->a));
			return WARP_OK;
		case WN_IS_NULL:
		case WN_IS_NOT_NULL:
			WARP_ROW_NEED_CHILD(nd->a);
			warp_row_set_int(s, ni, (WRS_ST(s, nd->a) == 2) == (nd->op == WN_IS_NULL));
			return WARP_OK;
		case WN_CAST:
			WARP_ROW_NEED_CHILD(nd->a);
			if (WRS_ST(s, nd->a) == 2)
			{
				WRS_ST(s, ni) = 2;
				return WARP_OK;
			}
			return warp_row_cast(p, nd, s, ni);
		case WN_DISTINCT:
			WARP_ROW_NEED_CHILD(nd->a);
			WARP_ROW_NEED_CHILD(nd->b);
			{
				bool		an = WRS_ST(s, nd->a) == 2,
							bn = WRS_ST(s, nd->b) == 2;
				bool		d = (an || bn) ? an != bn : !warp_row_equal(p, s, nd->a, nd->b);

				warp_row_set_int(s, ni, nd->sub ? !d : d);
			}
			return WARP_OK;
		case WN_IN_SET:
			WARP_ROW_STEP_BY(warp_row_step_in_set(p, nd, s, ni, need));
		case WN_DATETIME:
			WARP_ROW_NEED_CHILD(nd->a);
			if (nd->flags & WARP_DT_ARITH)
				WARP_ROW_NEED_CHILD(nd->b);
			if (WRS_ST(s, nd->a) == 2 || ((nd->flags & WARP_DT_ARITH) && WRS_ST(s, nd->b) == 2))
			{
				WRS_ST(s, ni) = 2;
				return WARP_OK;
			}
			return warp_row_datetime(p, nd, s, ni);
		case WN_NULLIF:
			WARP_ROW_NEED_CHILD(nd->a);
			WARP_ROW_NEED_CHILD(nd->b);
			warp_row_copy(s, ni, nd->a);
			if (WRS_ST(s, nd->a) == 1 && WRS_ST(s, nd->b) == 1 &&
				warp_row_equal(p, s, nd->a, nd->b))
				WRS_ST(s, ni) = 2;
			return WARP_OK;
		case WN_COALESCE:
			WARP_ROW_STEP_BY(warp_row_step_coalesce(p, nd, s, ni, need));
		case WN_CASE:
			WARP_ROW_STEP_BY(warp_row_step_case(p, nd, s, ni, need));
	}
	return WARP_ROW_BAD;

load_child:
	/* *need is a column node (WARP_ROW_NEED_CHILD): one load site */
	if ((lst = warp_row_load(env, s, *need, p->nodes[*need].a)) != WARP_OK)
		return lst;
	goto restart;
}

/* Evaluate node root for the current row (memoized). */
WARP_FN_OUTLINE int
warp_row_eval(const WarpRowEnv *env, WarpRowState *s, int root)
{
	int			sp = 0;

	if (WRS_ST(s, root) != 0)
		return WARP_OK;
	s->stack[sp++] = root;
	while (sp > 0)
	{
		int			ni = s->stack[sp - 1];
		int			need = -1;
		int			st = warp_row_step(env, s, ni, &need);

		if (st == WARP_OK)
			sp--;
		else if (st == WARP_ROW_NEED)
		{
			if (sp >= WARP_ROW_MAX_DEPTH)
				return WARP_ROW_BAD;
			s->stack[sp++] = need;
		}
		else
			return st;
	}
	return WARP_OK;
}

#endif							/* WARP_ROW_EVAL_H */
