/*-------------------------------------------------------------------------
 *
 * warp_row_load.h
 *	  The row evaluator reading one value of a program column from an
 *	  Arrow buffer (fixed-width, dictionary-encoded, Decimal128), with the
 *	  same conversions and range checks as the CPU driver's column loading
 *	  (warp_cpu_load.c).
 *
 * Pure C (also valid C++ for nvcc); no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_ROW_LOAD_H
#define WARP_ROW_LOAD_H

#include "warp_ops_float.h"
#include "warp_row_atomic.h"
#include "warp_row_conv.h"
#include "warp_row_types.h"

/* -------------------------------------------------------------- loading */

/* IEEE half to double, exactly as arrow_half_to_double() */
WARP_FN double
warp_row_half(warp_uint16 h)
{
	int			sign = h >> 15;
	int			e = (h >> 10) & 0x1f;
	int			mant = h & 0x3ff;
	double		v;

	if (e == 0)
		v = (double) mant * (1.0 / 16777216.0); /* 2^-24, exact */
	else if (e == 31)
		v = mant ? warp_row_bitsd(INT64_C(0x7ff8000000000000))
			: warp_row_bitsd(INT64_C(0x7ff0000000000000));
	else
		v = (double) (mant | 0x400) *
			warp_row_bitsd((warp_int64) (e - 25 + 1023) << 52);
	return sign ? -v : v;
}

WARP_FN bool
warp_row_buf_null(const WarpRowBuf *b, warp_int64 i)
{
	warp_int64	j;

	if (b->validity == NULL)
		return false;
	j = b->offset + i;
	return ((b->validity[j >> 3] >> (j & 7)) & 1) == 0;
}

/* integer element i (any width, signed or not; Bool as 0/1) */
WARP_FN warp_int64
warp_row_buf_int(const WarpRowBuf *b, warp_int64 i)
{
	warp_int64	j = b->offset + i;

	switch (b->phys)
	{
		case WRP_BOOL:
			return (b->values[j >> 3] >> (j & 7)) & 1;
		case WRP_I8:
			return ((const warp_int8 *) b->values)[j];
		case WRP_I16:
			return ((const warp_int16 *) b->values)[j];
		case WRP_I32:
			return ((const warp_int32 *) b->values)[j];
		case WRP_I64:
		case WRP_U64:
			return ((const warp_int64 *) b->values)[j];
		case WRP_U8:
			return ((const warp_uint8 *) b->values)[j];
		case WRP_U16:
			return ((const warp_uint16 *) b->values)[j];
		case WRP_U32:
			return ((const warp_uint32 *) b->values)[j];
		default:
			return 0;
	}
}

WARP_FN double
warp_row_buf_double(const WarpRowBuf *b, warp_int64 i)
{
	warp_int64	j = b->offset + i;

	switch (b->phys)
	{
		case WRP_F16:
			return warp_row_half(((const warp_uint16 *) b->values)[j]);
		case WRP_F32:
			return ((const float *) b->values)[j];
		case WRP_F64:
			return ((const double *) b->values)[j];
		default:
			return (double) warp_row_buf_int(b, i);
	}
}

/*
 * Column c of row i (load_column and load_dict_column of warp_cpu_load.c):
 * WARP_OK with *isnull, or with *v the engine's value (double bits for a
 * float column); WARP_ROW_BAD or WARP_ROW_LOAD for a value the row
 * evaluator does not take.
 */
WARP_FN int
warp_row_fetch(const WarpRowEnv *env, int c, warp_int64 i, warp_int64 *v, bool *isnull)
{
	const WarpRowCol *col = &env->cols[c];
	const WarpRowBuf *vb = &col->data;

	*isnull = false;
	if (warp_row_buf_null(&col->data, i))
	{
		*isnull = true;
		return WARP_OK;
	}
	if (col->has_dict)
	{
		warp_int64	idx = warp_row_buf_int(&col->data, i);

		/* the Arrow library checked indices at load; never trust a copy */
		if (idx < 0 || idx >= col->dict.length)
			return WARP_ROW_BAD;
		vb = &col->dict;
		i = idx;
		if (warp_row_buf_null(vb, i))
		{
			*isnull = true;
			return WARP_OK;
		}
	}
	if (col->isfloat)
	{
		*v = warp_row_dbits(warp_row_buf_double(vb, i));
		return WARP_OK;
	}
	if (col->conv == WRC_DECIMAL)
	{
		/* load_decimal_column: the unscaled value as int64, in bounds */
		const warp_uint8 *p = vb->values + (vb->offset + i) * 16;
		warp_uint64 lo = 0;
		warp_int64	hi = 0,
					x;
		int			k;

		for (k = 7; k >= 0; k--)
		{
			lo = (lo << 8) | p[k];
			hi = (warp_int64) (((warp_uint64) hi << 8) | p[8 + k]);
		}
		x = (warp_int64) lo;
		if (hi != (x < 0 ? -1 : 0) ||
			(col->dec_limit > 0 && (x >= col->dec_limit || x <= -col->dec_limit)))
			return WARP_ROW_LOAD;	/* the CPU driver reports it */
		*v = x;
		return WARP_OK;
	}
	if (!warp_row_convert(col->conv, warp_row_buf_int(vb, i), v))
		return WARP_ROW_LOAD;
	return WARP_OK;
}

/* Column c of the current row into node ni's memo. */
WARP_FN int
warp_row_load(const WarpRowEnv *env, WarpRowState *s, int ni, int c)
{
	warp_int64	v = 0;
	bool		isnull;
	int			st = warp_row_fetch(env, c, s->row, &v, &isnull);

	if (st != WARP_OK)
		return st;
	if (isnull)
		WRS_ST(s, ni) = 2;
	else
	{
		WRS_ST(s, ni) = 1;
		WRS_V(s, ni) = v;
	}
	return WARP_OK;
}

#endif							/* WARP_ROW_LOAD_H */
