/*-------------------------------------------------------------------------
 *
 * warp_ops_float.h
 *	  float4/float8 arithmetic, comparison and casts with PostgreSQL's
 *	  semantics.
 *
 * PostgreSQL checks each arithmetic result rather than each argument:
 * overflow is an infinite result from finite arguments, underflow a zero
 * result from non-zero arguments (only * and /, since + and - of non-zero
 * values cannot round to zero unless the exact result is zero), and x / 0
 * is an error unless x is NaN.  NaN and infinite arguments propagate
 * without error.  Mixed float4/float8 operators (float48pl, ...) promote
 * the float4 argument, which is exact.
 *
 * On the device every add, subtract, multiply and divide goes through the
 * _rn intrinsics so that nvcc cannot fuse a multiply into a following add:
 * the CPU rounds each operation separately and so must the GPU.
 *
 * Comparisons follow float8_cmp_internal: all NaNs are equal to each other
 * and greater than every other value, and -0 equals 0 (ordinary IEEE
 * comparison already makes -0 == 0).
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_OPS_FLOAT_H
#define WARP_OPS_FLOAT_H

#include <math.h>

#include "warp_defs.h"

#ifdef WARP_DEVICE_CODE
#define WARP_F4_ADD(a, b)	__fadd_rn((a), (b))
#define WARP_F4_SUB(a, b)	__fsub_rn((a), (b))
#define WARP_F4_MUL(a, b)	__fmul_rn((a), (b))
#define WARP_F4_DIV(a, b)	__fdiv_rn((a), (b))
#define WARP_F8_ADD(a, b)	__dadd_rn((a), (b))
#define WARP_F8_SUB(a, b)	__dsub_rn((a), (b))
#define WARP_F8_MUL(a, b)	__dmul_rn((a), (b))
#define WARP_F8_DIV(a, b)	__ddiv_rn((a), (b))
#else
#define WARP_F4_ADD(a, b)	((a) + (b))
#define WARP_F4_SUB(a, b)	((a) - (b))
#define WARP_F4_MUL(a, b)	((a) * (b))
#define WARP_F4_DIV(a, b)	((a) / (b))
#define WARP_F8_ADD(a, b)	((a) + (b))
#define WARP_F8_SUB(a, b)	((a) - (b))
#define WARP_F8_MUL(a, b)	((a) * (b))
#define WARP_F8_DIV(a, b)	((a) / (b))
#endif

/*
 * Classification that works the same in C (type-generic macros) and in
 * CUDA C++ (overloads), without depending on either.
 */
WARP_FN bool
warp_isnan8(warp_float8 x)
{
	return x != x;
}

WARP_FN bool
warp_isinf8(warp_float8 x)
{
	return x == (warp_float8) INFINITY || x == -(warp_float8) INFINITY;
}

WARP_FN bool
warp_isnan4(warp_float4 x)
{
	return x != x;
}

WARP_FN bool
warp_isinf4(warp_float4 x)
{
	return x == (warp_float4) INFINITY || x == -(warp_float4) INFINITY;
}

/* ---------- float4 arithmetic ---------- */

WARP_FN WarpStatus
warp_float4_pl(warp_float4 a, warp_float4 b, warp_float4 *res)
{
	warp_float4 r = WARP_F4_ADD(a, b);

	if (warp_unlikely(warp_isinf4(r)) && !warp_isinf4(a) && !warp_isinf4(b))
		return WARP_ERR_FLOAT_OVERFLOW;
	*res = r;
	return WARP_OK;
}

WARP_FN WarpStatus
warp_float4_mi(warp_float4 a, warp_float4 b, warp_float4 *res)
{
	warp_float4 r = WARP_F4_SUB(a, b);

	if (warp_unlikely(warp_isinf4(r)) && !warp_isinf4(a) && !warp_isinf4(b))
		return WARP_ERR_FLOAT_OVERFLOW;
	*res = r;
	return WARP_OK;
}

WARP_FN WarpStatus
warp_float4_mul(warp_float4 a, warp_float4 b, warp_float4 *res)
{
	warp_float4 r = WARP_F4_MUL(a, b);

	if (warp_unlikely(warp_isinf4(r)) && !warp_isinf4(a) && !warp_isinf4(b))
		return WARP_ERR_FLOAT_OVERFLOW;
	if (warp_unlikely(r == 0.0f) && a != 0.0f && b != 0.0f)
		return WARP_ERR_FLOAT_UNDERFLOW;
	*res = r;
	return WARP_OK;
}

/*
 * NaN / 0 is NaN without error.  An infinite divisor legitimately gives 0,
 * so that is not underflow; an infinite dividend legitimately gives inf.
 */
WARP_FN WarpStatus
warp_float4_div(warp_float4 a, warp_float4 b, warp_float4 *res)
{
	warp_float4 r;

	if (warp_unlikely(b == 0.0f) && !warp_isnan4(a))
		return WARP_ERR_DIV_ZERO;
	r = WARP_F4_DIV(a, b);
	if (warp_unlikely(warp_isinf4(r)) && !warp_isinf4(a))
		return WARP_ERR_FLOAT_OVERFLOW;
	if (warp_unlikely(r == 0.0f) && a != 0.0f && !warp_isinf4(b))
		return WARP_ERR_FLOAT_UNDERFLOW;
	*res = r;
	return WARP_OK;
}

/* ---------- float8 arithmetic ---------- */

WARP_FN WarpStatus
warp_float8_pl(warp_float8 a, warp_float8 b, warp_float8 *res)
{
	warp_float8 r = WARP_F8_ADD(a, b);

	if (warp_unlikely(warp_isinf8(r)) && !warp_isinf8(a) && !warp_isinf8(b))
		return WARP_ERR_FLOAT_OVERFLOW;
	*res = r;
	return WARP_OK;
}

WARP_FN WarpStatus
warp_float8_mi(warp_float8 a, warp_float8 b, warp_float8 *res)
{
	warp_float8 r = WARP_F8_SUB(a, b);

	if (warp_unlikely(warp_isinf8(r)) && !warp_isinf8(a) && !warp_isinf8(b))
		return WARP_ERR_FLOAT_OVERFLOW;
	*res = r;
	return WARP_OK;
}

WARP_FN WarpStatus
warp_float8_mul(warp_float8 a, warp_float8 b, warp_float8 *res)
{
	warp_float8 r = WARP_F8_MUL(a, b);

	if (warp_unlikely(warp_isinf8(r)) && !warp_isinf8(a) && !warp_isinf8(b))
		return WARP_ERR_FLOAT_OVERFLOW;
	if (warp_unlikely(r == 0.0) && a != 0.0 && b != 0.0)
		return WARP_ERR_FLOAT_UNDERFLOW;
	*res = r;
	return WARP_OK;
}

WARP_FN WarpStatus
warp_float8_div(warp_float8 a, warp_float8 b, warp_float8 *res)
{
	warp_float8 r;

	if (warp_unlikely(b == 0.0) && !warp_isnan8(a))
		return WARP_ERR_DIV_ZERO;
	r = WARP_F8_DIV(a, b);
	if (warp_unlikely(warp_isinf8(r)) && !warp_isinf8(a))
		return WARP_ERR_FLOAT_OVERFLOW;
	if (warp_unlikely(r == 0.0) && a != 0.0 && !warp_isinf8(b))
		return WARP_ERR_FLOAT_UNDERFLOW;
	*res = r;
	return WARP_OK;
}

/* unary minus and abs never fail (PostgreSQL: float8um, float8abs) */
WARP_FN warp_float8
warp_float8_um(warp_float8 a)
{
	return -a;
}

WARP_FN warp_float4
warp_float4_um(warp_float4 a)
{
	return -a;
}

WARP_FN warp_float8
warp_float8_abs(warp_float8 a)
{
	return fabs(a);
}

WARP_FN warp_float4
warp_float4_abs(warp_float4 a)
{
	return fabsf(a);
}

/* ---------- mixed float4/float8 (float48pl, float84mul, ...) ---------- */

WARP_FN WarpStatus
warp_float48_pl(warp_float4 a, warp_float8 b, warp_float8 *res)
{
	return warp_float8_pl((warp_float8) a, b, res);
}

WARP_FN WarpStatus
warp_float48_mi(warp_float4 a, warp_float8 b, warp_float8 *res)
{
	return warp_float8_mi((warp_float8) a, b, res);
}

WARP_FN WarpStatus
warp_float48_mul(warp_float4 a, warp_float8 b, warp_float8 *res)
{
	return warp_float8_mul((warp_float8) a, b, res);
}

WARP_FN WarpStatus
warp_float48_div(warp_float4 a, warp_float8 b, warp_float8 *res)
{
	return warp_float8_div((warp_float8) a, b, res);
}

WARP_FN WarpStatus
warp_float84_pl(warp_float8 a, warp_float4 b, warp_float8 *res)
{
	return warp_float8_pl(a, (warp_float8) b, res);
}

WARP_FN WarpStatus
warp_float84_mi(warp_float8 a, warp_float4 b, warp_float8 *res)
{
	return warp_float8_mi(a, (warp_float8) b, res);
}

WARP_FN WarpStatus
warp_float84_mul(warp_float8 a, warp_float4 b, warp_float8 *res)
{
	return warp_float8_mul(a, (warp_float8) b, res);
}

WARP_FN WarpStatus
warp_float84_div(warp_float8 a, warp_float4 b, warp_float8 *res)
{
	return warp_float8_div(a, (warp_float8) b, res);
}

/* ---------- comparisons ---------- */

/*
 * float4 comparisons are done on the promoted values: promotion is exact
 * and preserves NaN-ness, so float4lt, float48lt, ... all agree with these.
 */
WARP_FN int
warp_float8_cmp(warp_float8 a, warp_float8 b)
{
	if (warp_isnan8(a))
		return warp_isnan8(b) ? 0 : 1;
	if (warp_isnan8(b))
		return -1;
	return (a > b) - (a < b);
}

WARP_FN bool
warp_float8_eq(warp_float8 a, warp_float8 b)
{
	return warp_isnan8(a) ? warp_isnan8(b) : !warp_isnan8(b) && a == b;
}

WARP_FN bool
warp_float8_ne(warp_float8 a, warp_float8 b)
{
	return !warp_float8_eq(a, b);
}

WARP_FN bool
warp_float8_lt(warp_float8 a, warp_float8 b)
{
	return !warp_isnan8(a) && (warp_isnan8(b) || a < b);
}

WARP_FN bool
warp_float8_le(warp_float8 a, warp_float8 b)
{
	return warp_isnan8(b) || (!warp_isnan8(a) && a <= b);
}

WARP_FN bool
warp_float8_gt(warp_float8 a, warp_float8 b)
{
	return !warp_isnan8(b) && (warp_isnan8(a) || a > b);
}

WARP_FN bool
warp_float8_ge(warp_float8 a, warp_float8 b)
{
	return warp_isnan8(a) || (!warp_isnan8(b) && a >= b);
}

/* ---------- casts ---------- */

/* float4 -> float8 (float4_to_float8, exact) */
WARP_FN warp_float8
warp_float4_to_float8(warp_float4 a)
{
	return (warp_float8) a;
}

/*
 * float8 -> float4 (dtof): overflow if a finite value becomes infinite,
 * underflow if a non-zero value becomes zero; denormal results are fine.
 */
WARP_FN WarpStatus
warp_float8_to_float4(warp_float8 a, warp_float4 *res)
{
	warp_float4 r = (warp_float4) a;

	if (warp_unlikely(warp_isinf4(r)) && !warp_isinf8(a))
		return WARP_ERR_FLOAT_OVERFLOW;
	if (warp_unlikely(r == 0.0f) && a != 0.0)
		return WARP_ERR_FLOAT_UNDERFLOW;
	*res = r;
	return WARP_OK;
}

/*
 * int -> float: a plain C conversion, which rounds to nearest-even on both
 * host and device (i4tod, i8tod, i4tof, i8tof, i2tod, i2tof).
 */
WARP_FN warp_float8
warp_int8_to_float8(warp_int64 a)
{
	return (warp_float8) a;
}

WARP_FN warp_float4
warp_int8_to_float4(warp_int64 a)
{
	return (warp_float4) a;
}

WARP_FN warp_float8
warp_int4_to_float8(warp_int32 a)
{
	return (warp_float8) a;
}

WARP_FN warp_float4
warp_int4_to_float4(warp_int32 a)
{
	return (warp_float4) a;
}

/*
 * float -> int (dtoi2, dtoi4, dtoi8, ftoi2, ftoi4, ftoi8): round half to
 * even with rint(), then range-check against the bounds as PostgreSQL's
 * FLOAT8_FITS_IN_INTxx macros do: MIN is a power of two and exact as a
 * float, so "x >= MIN && x < -MIN" is an exact test even where MAX is not
 * representable.  NaN fails both comparisons and so is out of range.
 */
WARP_FN WarpStatus
warp_float8_to_int2(warp_float8 a, warp_int16 *res)
{
	warp_float8 r = rint(a);

	if (warp_unlikely(!(r >= (warp_float8) WARP_INT16_MIN &&
						r < -((warp_float8) WARP_INT16_MIN))))
		return WARP_ERR_INT2_OVERFLOW;
	*res = (warp_int16) r;
	return WARP_OK;
}

WARP_FN WarpStatus
warp_float8_to_int4(warp_float8 a, warp_int32 *res)
{
	warp_float8 r = rint(a);

	if (warp_unlikely(!(r >= (warp_float8) WARP_INT32_MIN &&
						r < -((warp_float8) WARP_INT32_MIN))))
		return WARP_ERR_INT_OVERFLOW;
	*res = (warp_int32) r;
	return WARP_OK;
}

WARP_FN WarpStatus
warp_float8_to_int8(warp_float8 a, warp_int64 *res)
{
	warp_float8 r = rint(a);

	if (warp_unlikely(!(r >= (warp_float8) WARP_INT64_MIN &&
						r < -((warp_float8) WARP_INT64_MIN))))
		return WARP_ERR_INT8_OVERFLOW;
	*res = (warp_int64) r;
	return WARP_OK;
}

/* float4 -> int: promotion is exact and rint of it is exact in float */
WARP_FN WarpStatus
warp_float4_to_int2(warp_float4 a, warp_int16 *res)
{
	return warp_float8_to_int2((warp_float8) a, res);
}

WARP_FN WarpStatus
warp_float4_to_int4(warp_float4 a, warp_int32 *res)
{
	return warp_float8_to_int4((warp_float8) a, res);
}

WARP_FN WarpStatus
warp_float4_to_int8(warp_float4 a, warp_int64 *res)
{
	return warp_float8_to_int8((warp_float8) a, res);
}

#endif							/* WARP_OPS_FLOAT_H */
