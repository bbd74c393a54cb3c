/*-------------------------------------------------------------------------
 *
 * warp_ops_numeric.h
 *	  numeric as 128-bit fixed point: + - * with PostgreSQL's result scales,
 *	  scale-insensitive comparison, rounding and integer casts.
 *
 * A WarpNumeric is value * 10^-scale with |value| < 10^38 and
 * 0 <= scale <= 38: exactly what an Arrow Decimal128 holds.  PostgreSQL's
 * numeric is arbitrary precision, so the engine computes the same exact
 * result whenever it fits; when it does not (or when a rescale to a common
 * scale would not fit) the operation returns WARP_ERR_NUMERIC_OVERFLOW, a
 * fallback status: PostgreSQL would have succeeded, the engine must hand
 * the work back rather than report an error.  Division is deliberately
 * absent (its result scale and rounding are not fixed-point friendly).
 *
 * Result scales follow PostgreSQL: a + b and a - b have the larger of the
 * two display scales, a * b their sum.  Equality and ordering ignore the
 * scale (1.50 = 1.5), as numeric_cmp does.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_OPS_NUMERIC_H
#define WARP_OPS_NUMERIC_H

#include "warp_defs.h"

#define WARP_NUMERIC_MAX_DIGITS	38
#define WARP_NUMERIC_MAX_SCALE	38

typedef struct WarpNumeric
{
	warp_int128 value;			/* unscaled value, |value| < 10^38 */
	warp_int32	scale;			/* digits after the decimal point */
} WarpNumeric;

/* 10^n for 0 <= n <= 38, by squaring (no table: none is host+device) */
WARP_FN warp_int128
warp_pow10_128(int n)
{
	warp_int128 r = 1;
	warp_int128 base = 10;

	while (n > 0)
	{
		if (n & 1)
			r *= base;
		n >>= 1;
		if (n > 0)
			base *= base;
	}
	return r;
}

/* largest representable magnitude, 10^38 - 1 (a constant: this is on
 * every row's path) */
WARP_FN warp_int128
warp_numeric_max_value(void)
{
	return (warp_int128) (((warp_uint128) UINT64_C(0x4b3b4ca85a86c47a) << 64) |
						  UINT64_C(0x098a223fffffffff));
}

/*
 * a * b in unsigned 128 bits; false when it does not fit.  The host has
 * the compiler's overflow check (a few multiplications); the device divides.
 */
WARP_FN bool
warp_umul128(warp_uint128 a, warp_uint128 b, warp_uint128 *r)
{
#if defined(__CUDA_ARCH__)
	if (a != 0 && b > ~(warp_uint128) 0 / a)
		return false;
	*r = a * b;
	return true;
#else
	return !__builtin_mul_overflow(a, b, r);
#endif
}

WARP_FN WarpNumeric
warp_numeric_make(warp_int128 value, warp_int32 scale)
{
	WarpNumeric n;

	n.value = value;
	n.scale = scale;
	return n;
}

WARP_FN bool
warp_numeric_valid(WarpNumeric n)
{
	warp_int128 max = warp_numeric_max_value();

	return n.value <= max && n.value >= -max &&
		n.scale >= 0 && n.scale <= WARP_NUMERIC_MAX_SCALE;
}

/*
 * Multiply value by 10^by (by >= 0), or fail when the result would leave
 * the 38-digit range.
 */
WARP_FN WarpStatus
warp_numeric_upscale_value(warp_int128 value, int by, warp_int128 *res)
{
	warp_uint128 max = (warp_uint128) warp_numeric_max_value();
	warp_uint128 r;

	if (by == 0 || value == 0)
	{
		*res = value;
		return WARP_OK;
	}
	if (by > WARP_NUMERIC_MAX_DIGITS)
		return WARP_ERR_NUMERIC_OVERFLOW;
	if (!warp_umul128((warp_uint128) (value > 0 ? value : -value),
					  (warp_uint128) warp_pow10_128(by), &r) || r > max)
		return WARP_ERR_NUMERIC_OVERFLOW;
	*res = value > 0 ? (warp_int128) r : -(warp_int128) r;
	return WARP_OK;
}

/*
 * Magnitude of value * 10^by in unsigned 128 bits, or false if that
 * exceeds 2^128 - 1 (about 3.4e38).  Intermediate values may exceed the
 * 38-digit range: 1 - 0.99999999999999999999999999999999999999 brings 1 to
 * 10^38 at scale 38, yet the difference fits.
 */
WARP_FN bool
warp_numeric_upscale_mag(warp_int128 value, int by, warp_uint128 *res)
{
	warp_uint128 mag = (warp_uint128) (value < 0 ? -value : value);
	warp_uint128 f;

	if (by == 0 || mag == 0)
	{
		*res = mag;
		return true;
	}
	if (by > WARP_NUMERIC_MAX_DIGITS)
		return false;
	f = (warp_uint128) warp_pow10_128(by);
	return warp_umul128(mag, f, res);
}

/*
 * a + b; PostgreSQL's result display scale is max(a.scale, b.scale).
 * Exact whenever the result fits 38 digits: signs and magnitudes are
 * handled separately so that only the smaller-scale operand is ever
 * scaled, and it can reach 3.4e38 without loss.  If even that overflows,
 * the other operand (< 10^38) cannot bring the sum back into range.
 */
WARP_FN WarpStatus
warp_numeric_add(WarpNumeric a, WarpNumeric b, WarpNumeric *res)
{
	warp_uint128 max = (warp_uint128) warp_numeric_max_value();
	int			s = a.scale > b.scale ? a.scale : b.scale;
	warp_uint128 ua,
				ub,
				r;
	bool		neg;

	if (!warp_numeric_upscale_mag(a.value, s - a.scale, &ua) ||
		!warp_numeric_upscale_mag(b.value, s - b.scale, &ub))
		return WARP_ERR_NUMERIC_OVERFLOW;
	if ((a.value < 0) == (b.value < 0))
	{
		/* same sign: the sum is at least each magnitude */
		if (ua > max || ub > max)
			return WARP_ERR_NUMERIC_OVERFLOW;
		r = ua + ub;
		neg = a.value < 0;
	}
	else if (ua >= ub)
	{
		r = ua - ub;
		neg = a.value < 0;
	}
	else
	{
		r = ub - ua;
		neg = b.value < 0;
	}
	if (r > max)
		return WARP_ERR_NUMERIC_OVERFLOW;
	res->value = neg ? -(warp_int128) r : (warp_int128) r;
	res->scale = s;
	return WARP_OK;
}

WARP_FN WarpNumeric
warp_numeric_neg(WarpNumeric a)
{
	a.value = -a.value;
	return a;
}

WARP_FN WarpNumeric
warp_numeric_abs(WarpNumeric a)
{
	if (a.value < 0)
		a.value = -a.value;
	return a;
}

WARP_FN WarpStatus
warp_numeric_sub(WarpNumeric a, WarpNumeric b, WarpNumeric *res)
{
	return warp_numeric_add(a, warp_numeric_neg(b), res);
}

/*
 * a * b, exact, with display scale a.scale + b.scale as numeric_mul
 * computes it; the product's overflow is checked before its magnitude.
 */
WARP_FN WarpStatus
warp_numeric_mul(WarpNumeric a, WarpNumeric b, WarpNumeric *res)
{
	warp_uint128 max = (warp_uint128) warp_numeric_max_value();
	warp_uint128 ua = (warp_uint128) (a.value < 0 ? -a.value : a.value);
	warp_uint128 ub = (warp_uint128) (b.value < 0 ? -b.value : b.value);
	int			s = a.scale + b.scale;
	warp_uint128 p;

	if (s > WARP_NUMERIC_MAX_SCALE)
		return WARP_ERR_NUMERIC_OVERFLOW;
	if (!warp_umul128(ua, ub, &p) || p > max)
		return WARP_ERR_NUMERIC_OVERFLOW;
	res->value = ((a.value < 0) != (b.value < 0)) ? -(warp_int128) p : (warp_int128) p;
	res->scale = s;
	return WARP_OK;
}

/*
 * Compare ignoring display scale (numeric_cmp).  Bring the smaller-scale
 * value up to the other's scale; if that leaves the 38-digit range its
 * magnitude exceeds every representable value, so its sign decides.
 */
WARP_FN int
warp_numeric_cmp(WarpNumeric a, WarpNumeric b)
{
	warp_int128 va = a.value;
	warp_int128 vb = b.value;

	if (a.scale < b.scale)
	{
		if (warp_numeric_upscale_value(a.value, b.scale - a.scale, &va) != WARP_OK)
			return a.value > 0 ? 1 : -1;
	}
	else if (b.scale < a.scale)
	{
		if (warp_numeric_upscale_value(b.value, a.scale - b.scale, &vb) != WARP_OK)
			return b.value > 0 ? -1 : 1;
	}
	return (va > vb) - (va < vb);
}

WARP_FN bool
warp_numeric_eq(WarpNumeric a, WarpNumeric b)
{
	return warp_numeric_cmp(a, b) == 0;
}

WARP_FN bool
warp_numeric_lt(WarpNumeric a, WarpNumeric b)
{
	return warp_numeric_cmp(a, b) < 0;
}

WARP_FN bool
warp_numeric_le(WarpNumeric a, WarpNumeric b)
{
	return warp_numeric_cmp(a, b) <= 0;
}

/*
 * Divide value by 10^by (by >= 1), rounding half away from zero as
 * PostgreSQL's round_var does.
 */
WARP_FN warp_int128
warp_numeric_div_pow10_round(warp_int128 value, int by)
{
	warp_int128 f,
				q,
				r;

	/* |value| < 10^38, so dividing by 10^39 or more always rounds to 0 */
	if (by > WARP_NUMERIC_MAX_DIGITS)
		return 0;
	f = warp_pow10_128(by);
	q = value / f;
	r = value % f;
	if (r < 0)
		r = -r;
	/* r >= f/2, written to avoid halving an odd f (f is even for by >= 1) */
	if (r >= f / 2)
		q += value < 0 ? -1 : 1;
	return q;
}

/*
 * round(numeric, int): round half away from zero to "scale" digits after
 * the point.  The result's display scale is max(scale, 0), as in
 * numeric_round; a negative scale rounds to tens, hundreds, ...
 */
WARP_FN WarpStatus
warp_numeric_round(WarpNumeric a, int scale, WarpNumeric *res)
{
	warp_int128 v;

	if (scale >= a.scale)
	{
		if (scale > WARP_NUMERIC_MAX_SCALE ||
			warp_numeric_upscale_value(a.value, scale - a.scale, &v) != WARP_OK)
			return WARP_ERR_NUMERIC_OVERFLOW;
		res->value = v;
		res->scale = scale;
		return WARP_OK;
	}
	v = warp_numeric_div_pow10_round(a.value, a.scale - scale);
	if (scale < 0)
	{
		/* back to units: the rounded multiple of 10^-scale */
		if (warp_numeric_upscale_value(v, -scale, &v) != WARP_OK)
			return WARP_ERR_NUMERIC_OVERFLOW;
		scale = 0;
	}
	else
	{
		/* rounding 99.95 to one digit carries into a new digit: 100.0 */
		warp_int128 max = warp_numeric_max_value();

		if (v > max || v < -max)
			return WARP_ERR_NUMERIC_OVERFLOW;
	}
	res->value = v;
	res->scale = scale;
	return WARP_OK;
}

/*
 * Canonical form for hashing: strip trailing fractional zeros, so that
 * values equal under numeric_cmp (1.50 and 1.5) have the same bits.
 */
WARP_FN WarpNumeric
warp_numeric_normalize(WarpNumeric a)
{
	if (a.value == 0)
		return warp_numeric_make(0, 0);
	while (a.scale > 0 && a.value % 10 == 0)
	{
		a.value /= 10;
		a.scale--;
	}
	return a;
}

/* ---------- casts ---------- */

/* int2/int4/int8 -> numeric: scale 0, always fits */
WARP_FN WarpNumeric
warp_int8_to_numeric(warp_int64 a)
{
	return warp_numeric_make(a, 0);
}

/*
 * numeric -> int (numeric_int2/int4/int8): round half away from zero to an
 * integer, then range-check with the target type's message.
 */
WARP_FN warp_int128
warp_numeric_to_int_rounded(WarpNumeric a)
{
	if (a.scale == 0)
		return a.value;
	return warp_numeric_div_pow10_round(a.value, a.scale);
}

WARP_FN WarpStatus
warp_numeric_to_int8(WarpNumeric a, warp_int64 *res)
{
	warp_int128 v = warp_numeric_to_int_rounded(a);

	if (v < WARP_INT64_MIN || v > WARP_INT64_MAX)
		return WARP_ERR_INT8_OVERFLOW;
	*res = (warp_int64) v;
	return WARP_OK;
}

WARP_FN WarpStatus
warp_numeric_to_int4(WarpNumeric a, warp_int32 *res)
{
	warp_int128 v = warp_numeric_to_int_rounded(a);

	if (v < WARP_INT32_MIN || v > WARP_INT32_MAX)
		return WARP_ERR_INT_OVERFLOW;
	*res = (warp_int32) v;
	return WARP_OK;
}

WARP_FN WarpStatus
warp_numeric_to_int2(WarpNumeric a, warp_int16 *res)
{
	warp_int128 v = warp_numeric_to_int_rounded(a);

	if (v < WARP_INT16_MIN || v > WARP_INT16_MAX)
		return WARP_ERR_INT2_OVERFLOW;
	*res = (warp_int16) v;
	return WARP_OK;
}

#endif							/* WARP_OPS_NUMERIC_H */
