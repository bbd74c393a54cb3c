/*-------------------------------------------------------------------------
 *
 * warp_ops_int.h
 *	  int2/int4/int8 arithmetic and comparison with PostgreSQL's semantics.
 *
 * Each operation returns a WarpStatus and writes its result through a
 * pointer; on an error the result is left unset.  The width of the result
 * and the overflow message follow PostgreSQL's operator for the argument
 * types: int2 op int2 is int2 ("smallint out of range"), any mix with int4
 * is int4 ("integer out of range"), any mix with int8 is int8 ("bigint out
 * of range").  Cross-type operators (int24pl, int48mul, ...) give the same
 * value as promoting the narrower argument and applying the wider type's
 * operator, which is what the wrappers at the end of this file do.
 *
 * PostgreSQL has % only for equal argument types; a mixed-width modulo is
 * parsed as a cast plus the wider type's %, so the mixed wrappers cover
 * % too.
 *
 * Overflow is detected without signed overflow (undefined in C): int2 and
 * int4 compute in int64, int8 in 128-bit arithmetic, which nvcc supports on
 * the device as well.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_OPS_INT_H
#define WARP_OPS_INT_H

#include "warp_defs.h"

/* ---------- int2 ---------- */

WARP_FN WarpStatus
warp_int2_check(warp_int64 v, warp_int16 *res)
{
	if (warp_unlikely(v < WARP_INT16_MIN || v > WARP_INT16_MAX))
		return WARP_ERR_INT2_OVERFLOW;
	*res = (warp_int16) v;
	return WARP_OK;
}

WARP_FN WarpStatus
warp_int2_pl(warp_int16 a, warp_int16 b, warp_int16 *res)
{
	return warp_int2_check((warp_int64) a + b, res);
}

WARP_FN WarpStatus
warp_int2_mi(warp_int16 a, warp_int16 b, warp_int16 *res)
{
	return warp_int2_check((warp_int64) a - b, res);
}

WARP_FN WarpStatus
warp_int2_mul(warp_int16 a, warp_int16 b, warp_int16 *res)
{
	return warp_int2_check((warp_int64) a * b, res);
}

/*
 * Division truncates toward zero, like C and PostgreSQL.  The only overflow
 * is MIN / -1; PostgreSQL tests for it explicitly (the hardware would trap
 * on int4/int8), and so do we.
 */
WARP_FN WarpStatus
warp_int2_div(warp_int16 a, warp_int16 b, warp_int16 *res)
{
	if (warp_unlikely(b == 0))
		return WARP_ERR_DIV_ZERO;
	return warp_int2_check((warp_int64) a / b, res);
}

/* MIN % -1 is 0 in PostgreSQL: x % -1 is always 0, so it never errors */
WARP_FN WarpStatus
warp_int2_mod(warp_int16 a, warp_int16 b, warp_int16 *res)
{
	if (warp_unlikely(b == 0))
		return WARP_ERR_DIV_ZERO;
	if (b == -1)
	{
		*res = 0;
		return WARP_OK;
	}
	*res = (warp_int16) (a % b);
	return WARP_OK;
}

WARP_FN WarpStatus
warp_int2_um(warp_int16 a, warp_int16 *res)
{
	return warp_int2_check(-(warp_int64) a, res);
}

WARP_FN WarpStatus
warp_int2_abs(warp_int16 a, warp_int16 *res)
{
	return warp_int2_check(a < 0 ? -(warp_int64) a : a, res);
}

/* ---------- int4 ---------- */

WARP_FN WarpStatus
warp_int4_check(warp_int64 v, warp_int32 *res)
{
	if (warp_unlikely(v < WARP_INT32_MIN || v > WARP_INT32_MAX))
		return WARP_ERR_INT_OVERFLOW;
	*res = (warp_int32) v;
	return WARP_OK;
}

WARP_FN WarpStatus
warp_int4_pl(warp_int32 a, warp_int32 b, warp_int32 *res)
{
	return warp_int4_check((warp_int64) a + b, res);
}

WARP_FN WarpStatus
warp_int4_mi(warp_int32 a, warp_int32 b, warp_int32 *res)
{
	return warp_int4_check((warp_int64) a - b, res);
}

WARP_FN WarpStatus
warp_int4_mul(warp_int32 a, warp_int32 b, warp_int32 *res)
{
	return warp_int4_check((warp_int64) a * b, res);
}

WARP_FN WarpStatus
warp_int4_div(warp_int32 a, warp_int32 b, warp_int32 *res)
{
	if (warp_unlikely(b == 0))
		return WARP_ERR_DIV_ZERO;
	/* in int64, INT_MIN / -1 is representable and fails the range check */
	return warp_int4_check((warp_int64) a / b, res);
}

WARP_FN WarpStatus
warp_int4_mod(warp_int32 a, warp_int32 b, warp_int32 *res)
{
	if (warp_unlikely(b == 0))
		return WARP_ERR_DIV_ZERO;
	/* INT_MIN % -1 would trap in hardware; the answer is 0 */
	if (b == -1)
	{
		*res = 0;
		return WARP_OK;
	}
	*res = a % b;
	return WARP_OK;
}

WARP_FN WarpStatus
warp_int4_um(warp_int32 a, warp_int32 *res)
{
	return warp_int4_check(-(warp_int64) a, res);
}

WARP_FN WarpStatus
warp_int4_abs(warp_int32 a, warp_int32 *res)
{
	return warp_int4_check(a < 0 ? -(warp_int64) a : a, res);
}

/* ---------- int8 ---------- */

WARP_FN WarpStatus
warp_int8_check(warp_int128 v, warp_int64 *res)
{
	if (warp_unlikely(v < WARP_INT64_MIN || v > WARP_INT64_MAX))
		return WARP_ERR_INT8_OVERFLOW;
	*res = (warp_int64) v;
	return WARP_OK;
}

WARP_FN WarpStatus
warp_int8_pl(warp_int64 a, warp_int64 b, warp_int64 *res)
{
	return warp_int8_check((warp_int128) a + b, res);
}

WARP_FN WarpStatus
warp_int8_mi(warp_int64 a, warp_int64 b, warp_int64 *res)
{
	return warp_int8_check((warp_int128) a - b, res);
}

WARP_FN WarpStatus
warp_int8_mul(warp_int64 a, warp_int64 b, warp_int64 *res)
{
	return warp_int8_check((warp_int128) a * b, res);
}

WARP_FN WarpStatus
warp_int8_div(warp_int64 a, warp_int64 b, warp_int64 *res)
{
	if (warp_unlikely(b == 0))
		return WARP_ERR_DIV_ZERO;
	/* INT64_MIN / -1 is the one quotient that does not fit */
	if (b == -1)
	{
		if (warp_unlikely(a == WARP_INT64_MIN))
			return WARP_ERR_INT8_OVERFLOW;
		*res = -a;
		return WARP_OK;
	}
	*res = a / b;
	return WARP_OK;
}

WARP_FN WarpStatus
warp_int8_mod(warp_int64 a, warp_int64 b, warp_int64 *res)
{
	if (warp_unlikely(b == 0))
		return WARP_ERR_DIV_ZERO;
	if (b == -1)
	{
		*res = 0;
		return WARP_OK;
	}
	*res = a % b;
	return WARP_OK;
}

WARP_FN WarpStatus
warp_int8_um(warp_int64 a, warp_int64 *res)
{
	if (warp_unlikely(a == WARP_INT64_MIN))
		return WARP_ERR_INT8_OVERFLOW;
	*res = -a;
	return WARP_OK;
}

WARP_FN WarpStatus
warp_int8_abs(warp_int64 a, warp_int64 *res)
{
	if (warp_unlikely(a == WARP_INT64_MIN))
		return WARP_ERR_INT8_OVERFLOW;
	*res = a < 0 ? -a : a;
	return WARP_OK;
}

/* ---------- narrowing casts (int84, int82, int42) ---------- */

WARP_FN WarpStatus
warp_int8_to_int4(warp_int64 a, warp_int32 *res)
{
	return warp_int4_check(a, res);
}

WARP_FN WarpStatus
warp_int8_to_int2(warp_int64 a, warp_int16 *res)
{
	return warp_int2_check(a, res);
}

WARP_FN WarpStatus
warp_int4_to_int2(warp_int32 a, warp_int16 *res)
{
	return warp_int2_check(a, res);
}

/* ---------- cross-type operators ---------- */

/*
 * int24pl, int42pl, ...: PostgreSQL's cross-type functions compute in the
 * wider type, so promotion gives the identical value and error.
 */
#define WARP_INT_MIXED(name, wide, ta, tb, op) \
WARP_FN WarpStatus \
warp_##name##_##op(ta a, tb b, wide *res) \
{ \
	return warp_##op##_dispatch_##wide(a, b, res); \
}

#define warp_pl_dispatch_warp_int32		warp_int4_pl
#define warp_mi_dispatch_warp_int32		warp_int4_mi
#define warp_mul_dispatch_warp_int32	warp_int4_mul
#define warp_div_dispatch_warp_int32	warp_int4_div
#define warp_mod_dispatch_warp_int32	warp_int4_mod
#define warp_pl_dispatch_warp_int64		warp_int8_pl
#define warp_mi_dispatch_warp_int64		warp_int8_mi
#define warp_mul_dispatch_warp_int64	warp_int8_mul
#define warp_div_dispatch_warp_int64	warp_int8_div
#define warp_mod_dispatch_warp_int64	warp_int8_mod

#define WARP_INT_MIXED_ALL(name, wide, ta, tb) \
	WARP_INT_MIXED(name, wide, ta, tb, pl) \
	WARP_INT_MIXED(name, wide, ta, tb, mi) \
	WARP_INT_MIXED(name, wide, ta, tb, mul) \
	WARP_INT_MIXED(name, wide, ta, tb, div) \
	WARP_INT_MIXED(name, wide, ta, tb, mod)

WARP_INT_MIXED_ALL(int24, warp_int32, warp_int16, warp_int32)
WARP_INT_MIXED_ALL(int42, warp_int32, warp_int32, warp_int16)
WARP_INT_MIXED_ALL(int28, warp_int64, warp_int16, warp_int64)
WARP_INT_MIXED_ALL(int82, warp_int64, warp_int64, warp_int16)
WARP_INT_MIXED_ALL(int48, warp_int64, warp_int32, warp_int64)
WARP_INT_MIXED_ALL(int84, warp_int64, warp_int64, warp_int32)

/* ---------- comparisons ---------- */

/*
 * All integer comparisons, same-width or cross-type (int24lt, int84eq, ...)
 * compare the mathematical values, so they are written once over int64;
 * widening is exact.  cmp returns -1, 0 or 1 like btint4cmp and friends.
 */
WARP_FN int
warp_int_cmp(warp_int64 a, warp_int64 b)
{
	return (a > b) - (a < b);
}

WARP_FN bool
warp_int_eq(warp_int64 a, warp_int64 b)
{
	return a == b;
}

WARP_FN bool
warp_int_ne(warp_int64 a, warp_int64 b)
{
	return a != b;
}

WARP_FN bool
warp_int_lt(warp_int64 a, warp_int64 b)
{
	return a < b;
}

WARP_FN bool
warp_int_le(warp_int64 a, warp_int64 b)
{
	return a <= b;
}

WARP_FN bool
warp_int_gt(warp_int64 a, warp_int64 b)
{
	return a > b;
}

WARP_FN bool
warp_int_ge(warp_int64 a, warp_int64 b)
{
	return a >= b;
}

/*
 * Whether v is among the n sorted distinct values of set: a binary search
 * without branches on the data (the comparison selects the next base, a
 * conditional move), since rows' values hit and miss unpredictably.
 * Invariant: the last member <= v, if any, lies in [b, b + len).
 */
WARP_FN bool
warp_in_set(const warp_int64 *set, warp_int32 n, warp_int64 v)
{
	const warp_int64 *b = set;
	warp_int32	len = n;

	if (n <= 0)
		return false;
	while (len > 1)
	{
		warp_int32	half = len >> 1;

		b = (b[half] <= v) ? b + half : b;
		len -= half;
	}
	return *b == v;
}

/*
 * x IN (set), or x NOT IN (set) when is_not, for a non-NULL x: 1 true,
 * 0 false, -1 NULL (no member matched and the list had a NULL, as
 * PostgreSQL's = ANY / <> ALL say).
 */
WARP_FN int
warp_in_set_test(const warp_int64 *set, warp_int32 n, warp_int64 v, bool is_not, bool has_null)
{
	if (warp_in_set(set, n, v))
		return is_not ? 0 : 1;
	if (has_null)
		return -1;
	return is_not ? 1 : 0;
}

#endif							/* WARP_OPS_INT_H */
