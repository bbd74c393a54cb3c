/*
 * test_engine_ops.c — edge cases of the engine's scalar operation semantics
 * (src/engine/warp_ops_*.h).  The expected values are PostgreSQL 15's
 * results; test/python/test_engine_ops.py checks the same functions against
 * a live server over thousands of generated cases.
 */
#include <math.h>
#include <float.h>

#include "unit.h"
#include "engine/warp_ops_int.h"
#include "engine/warp_ops_float.h"
#include "engine/warp_ops_numeric.h"
#include "engine/warp_ops_datetime.h"
#include "engine/warp_ops_text.h"

#define S(x) ((const warp_uint8 *) (x)), ((warp_int32) strlen(x))

/* ---------------------------------------------------------------- status */

TEST(status_codes)
{
	CHECK(strcmp(warp_status_sqlstate(WARP_OK), "00000") == 0);
	CHECK(strcmp(warp_status_sqlstate(WARP_ERR_INT_OVERFLOW), "22003") == 0);
	CHECK(strcmp(warp_status_message(WARP_ERR_INT_OVERFLOW), "integer out of range") == 0);
	CHECK(strcmp(warp_status_message(WARP_ERR_INT2_OVERFLOW), "smallint out of range") == 0);
	CHECK(strcmp(warp_status_message(WARP_ERR_INT8_OVERFLOW), "bigint out of range") == 0);
	CHECK(strcmp(warp_status_sqlstate(WARP_ERR_DIV_ZERO), "22012") == 0);
	CHECK(strcmp(warp_status_message(WARP_ERR_DIV_ZERO), "division by zero") == 0);
	CHECK(strcmp(warp_status_message(WARP_ERR_FLOAT_OVERFLOW), "value out of range: overflow") == 0);
	CHECK(strcmp(warp_status_message(WARP_ERR_FLOAT_UNDERFLOW), "value out of range: underflow") == 0);
	CHECK(strcmp(warp_status_sqlstate(WARP_ERR_DATE_RANGE), "22008") == 0);
	CHECK(strcmp(warp_status_sqlstate(WARP_ERR_LIKE_ESCAPE), "22025") == 0);
	CHECK(!warp_status_is_fallback(WARP_ERR_DIV_ZERO));
	CHECK(warp_status_is_fallback(WARP_ERR_NUMERIC_OVERFLOW));
	CHECK(warp_status_is_fallback(WARP_ERR_NOT_FINITE));
	/* MAKE_SQLSTATE('2','2','0','1','2') */
	CHECK(warp_status_errcode(WARP_ERR_DIV_ZERO) ==
		  (2 | (2 << 6) | (0 << 12) | (1 << 18) | (2 << 24)));
	for (int s = 0; s < WARP_STATUS_COUNT; s++)
		CHECK(strlen(warp_status_sqlstate((WarpStatus) s)) == 5);
}

/* ---------------------------------------------------------------- int */

TEST(int2_ops)
{
	warp_int16	r;

	CHECK(warp_int2_pl(32766, 1, &r) == WARP_OK && r == 32767);
	CHECK(warp_int2_pl(32767, 1, &r) == WARP_ERR_INT2_OVERFLOW);
	CHECK(warp_int2_mi(-32768, 1, &r) == WARP_ERR_INT2_OVERFLOW);
	CHECK(warp_int2_mul(256, 128, &r) == WARP_ERR_INT2_OVERFLOW);
	CHECK(warp_int2_mul(-256, 128, &r) == WARP_OK && r == -32768);
	CHECK(warp_int2_div(-32768, -1, &r) == WARP_ERR_INT2_OVERFLOW);
	CHECK(warp_int2_div(7, 0, &r) == WARP_ERR_DIV_ZERO);
	CHECK(warp_int2_div(-7, 2, &r) == WARP_OK && r == -3);
	CHECK(warp_int2_mod(-32768, -1, &r) == WARP_OK && r == 0);
	CHECK(warp_int2_mod(-7, 2, &r) == WARP_OK && r == -1);
	CHECK(warp_int2_mod(7, -2, &r) == WARP_OK && r == 1);
	CHECK(warp_int2_mod(1, 0, &r) == WARP_ERR_DIV_ZERO);
	CHECK(warp_int2_um(-32768, &r) == WARP_ERR_INT2_OVERFLOW);
	CHECK(warp_int2_um(32767, &r) == WARP_OK && r == -32767);
	CHECK(warp_int2_abs(-32768, &r) == WARP_ERR_INT2_OVERFLOW);
	CHECK(warp_int2_abs(-5, &r) == WARP_OK && r == 5);
}

TEST(int4_ops)
{
	warp_int32	r;

	CHECK(warp_int4_pl(WARP_INT32_MAX, 1, &r) == WARP_ERR_INT_OVERFLOW);
	CHECK(warp_int4_pl(WARP_INT32_MAX, -1, &r) == WARP_OK && r == WARP_INT32_MAX - 1);
	CHECK(warp_int4_mi(WARP_INT32_MIN, 1, &r) == WARP_ERR_INT_OVERFLOW);
	CHECK(warp_int4_mi(0, WARP_INT32_MIN, &r) == WARP_ERR_INT_OVERFLOW);
	CHECK(warp_int4_mi(-1, WARP_INT32_MIN, &r) == WARP_OK && r == WARP_INT32_MAX);
	CHECK(warp_int4_mul(65536, 32768, &r) == WARP_ERR_INT_OVERFLOW);
	CHECK(warp_int4_mul(-65536, 32768, &r) == WARP_OK && r == WARP_INT32_MIN);
	CHECK(warp_int4_mul(WARP_INT32_MIN, -1, &r) == WARP_ERR_INT_OVERFLOW);
	CHECK(warp_int4_div(WARP_INT32_MIN, -1, &r) == WARP_ERR_INT_OVERFLOW);
	CHECK(warp_int4_div(WARP_INT32_MIN, 1, &r) == WARP_OK && r == WARP_INT32_MIN);
	CHECK(warp_int4_div(0, 0, &r) == WARP_ERR_DIV_ZERO);
	CHECK(warp_int4_div(-9, 4, &r) == WARP_OK && r == -2);
	CHECK(warp_int4_mod(WARP_INT32_MIN, -1, &r) == WARP_OK && r == 0);
	CHECK(warp_int4_mod(WARP_INT32_MIN, 0, &r) == WARP_ERR_DIV_ZERO);
	CHECK(warp_int4_mod(-9, 4, &r) == WARP_OK && r == -1);
	CHECK(warp_int4_um(WARP_INT32_MIN, &r) == WARP_ERR_INT_OVERFLOW);
	CHECK(warp_int4_abs(WARP_INT32_MIN, &r) == WARP_ERR_INT_OVERFLOW);
	CHECK(warp_int4_abs(WARP_INT32_MIN + 1, &r) == WARP_OK && r == WARP_INT32_MAX);
}

TEST(int8_ops)
{
	warp_int64	r;

	CHECK(warp_int8_pl(WARP_INT64_MAX, 1, &r) == WARP_ERR_INT8_OVERFLOW);
	CHECK(warp_int8_pl(WARP_INT64_MIN, -1, &r) == WARP_ERR_INT8_OVERFLOW);
	CHECK(warp_int8_pl(WARP_INT64_MIN, WARP_INT64_MAX, &r) == WARP_OK && r == -1);
	CHECK(warp_int8_mi(0, WARP_INT64_MIN, &r) == WARP_ERR_INT8_OVERFLOW);
	CHECK(warp_int8_mul(INT64_C(4294967296), INT64_C(2147483648), &r) == WARP_ERR_INT8_OVERFLOW);
	CHECK(warp_int8_mul(INT64_C(-4294967296), INT64_C(2147483648), &r) == WARP_OK &&
		  r == WARP_INT64_MIN);
	CHECK(warp_int8_mul(WARP_INT64_MIN, -1, &r) == WARP_ERR_INT8_OVERFLOW);
	CHECK(warp_int8_div(WARP_INT64_MIN, -1, &r) == WARP_ERR_INT8_OVERFLOW);
	CHECK(warp_int8_div(WARP_INT64_MAX, -1, &r) == WARP_OK && r == -WARP_INT64_MAX);
	CHECK(warp_int8_div(1, 0, &r) == WARP_ERR_DIV_ZERO);
	CHECK(warp_int8_mod(WARP_INT64_MIN, -1, &r) == WARP_OK && r == 0);
	CHECK(warp_int8_mod(WARP_INT64_MIN, 0, &r) == WARP_ERR_DIV_ZERO);
	CHECK(warp_int8_mod(WARP_INT64_MIN, 10, &r) == WARP_OK && r == -8);
	CHECK(warp_int8_um(WARP_INT64_MIN, &r) == WARP_ERR_INT8_OVERFLOW);
	CHECK(warp_int8_abs(WARP_INT64_MIN, &r) == WARP_ERR_INT8_OVERFLOW);
	CHECK(warp_int8_abs(-3, &r) == WARP_OK && r == 3);
}

TEST(int_mixed_and_casts)
{
	warp_int32	r4;
	warp_int64	r8;
	warp_int16	r2;

	/* int2 + int4 is int4: no smallint overflow */
	CHECK(warp_int24_pl(32767, 1, &r4) == WARP_OK && r4 == 32768);
	CHECK(warp_int42_mi(WARP_INT32_MIN, 1, &r4) == WARP_ERR_INT_OVERFLOW);
	CHECK(warp_int42_div(WARP_INT32_MIN, -1, &r4) == WARP_ERR_INT_OVERFLOW);
	CHECK(warp_int24_div(-32768, -1, &r4) == WARP_OK && r4 == 32768);
	CHECK(warp_int48_pl(WARP_INT32_MAX, 1, &r8) == WARP_OK && r8 == INT64_C(2147483648));
	CHECK(warp_int84_mul(WARP_INT64_MAX, 2, &r8) == WARP_ERR_INT8_OVERFLOW);
	CHECK(warp_int82_mod(WARP_INT64_MIN, -1, &r8) == WARP_OK && r8 == 0);
	CHECK(warp_int28_div(5, 0, &r8) == WARP_ERR_DIV_ZERO);
	CHECK(warp_int8_to_int4(INT64_C(2147483648), &r4) == WARP_ERR_INT_OVERFLOW);
	CHECK(warp_int8_to_int4(WARP_INT32_MIN, &r4) == WARP_OK && r4 == WARP_INT32_MIN);
	CHECK(warp_int4_to_int2(32768, &r2) == WARP_ERR_INT2_OVERFLOW);
	CHECK(warp_int8_to_int2(-32768, &r2) == WARP_OK && r2 == -32768);
	CHECK(warp_int_cmp(WARP_INT32_MAX, INT64_C(2147483648)) == -1);
	CHECK(warp_int_cmp(5, 5) == 0 && warp_int_cmp(WARP_INT64_MAX, WARP_INT64_MIN) == 1);
	CHECK(warp_int_eq(-1, -1) && warp_int_lt(-2, -1) && warp_int_ge(0, 0) &&
		  warp_int_gt(1, 0) && warp_int_le(0, 0) && warp_int_ne(1, 2));
}

/* ---------------------------------------------------------------- float */

TEST(float8_arith)
{
	warp_float8 r;

	CHECK(warp_float8_pl(DBL_MAX, DBL_MAX, &r) == WARP_ERR_FLOAT_OVERFLOW);
	CHECK(warp_float8_pl(INFINITY, 1.0, &r) == WARP_OK && isinf(r));
	CHECK(warp_float8_pl(INFINITY, -INFINITY, &r) == WARP_OK && isnan(r));
	CHECK(warp_float8_mi(-DBL_MAX, DBL_MAX, &r) == WARP_ERR_FLOAT_OVERFLOW);
	CHECK(warp_float8_mi(NAN, 1.0, &r) == WARP_OK && isnan(r));
	CHECK(warp_float8_mul(1e200, 1e200, &r) == WARP_ERR_FLOAT_OVERFLOW);
	CHECK(warp_float8_mul(1e-200, 1e-200, &r) == WARP_ERR_FLOAT_UNDERFLOW);
	CHECK(warp_float8_mul(0.0, 1e-200, &r) == WARP_OK && r == 0.0);
	CHECK(warp_float8_mul(INFINITY, 0.0, &r) == WARP_OK && isnan(r));
	CHECK(warp_float8_mul(4.9e-324, 0.5, &r) == WARP_ERR_FLOAT_UNDERFLOW);
	CHECK(warp_float8_mul(4.9e-324, 1.0, &r) == WARP_OK && r == 4.9e-324);
	CHECK(warp_float8_div(1.0, 0.0, &r) == WARP_ERR_DIV_ZERO);
	CHECK(warp_float8_div(1.0, -0.0, &r) == WARP_ERR_DIV_ZERO);
	CHECK(warp_float8_div(INFINITY, 0.0, &r) == WARP_ERR_DIV_ZERO);
	CHECK(warp_float8_div(NAN, 0.0, &r) == WARP_OK && isnan(r));
	CHECK(warp_float8_div(1e300, 1e-300, &r) == WARP_ERR_FLOAT_OVERFLOW);
	CHECK(warp_float8_div(1e-300, 1e300, &r) == WARP_ERR_FLOAT_UNDERFLOW);
	CHECK(warp_float8_div(1.0, INFINITY, &r) == WARP_OK && r == 0.0);
	CHECK(warp_float8_div(INFINITY, 2.0, &r) == WARP_OK && isinf(r));
	CHECK(warp_float8_div(-0.0, 5.0, &r) == WARP_OK && r == 0.0 && signbit(r));
	CHECK(warp_float8_um(0.0) == 0.0 && signbit(warp_float8_um(0.0)));
	CHECK(warp_float8_abs(-INFINITY) == INFINITY);
}

TEST(float4_arith)
{
	warp_float4 r;
	warp_float8 r8;

	CHECK(warp_float4_pl(FLT_MAX, FLT_MAX, &r) == WARP_ERR_FLOAT_OVERFLOW);
	CHECK(warp_float4_mul(1e30f, 1e30f, &r) == WARP_ERR_FLOAT_OVERFLOW);
	CHECK(warp_float4_mul(1e-30f, 1e-30f, &r) == WARP_ERR_FLOAT_UNDERFLOW);
	CHECK(warp_float4_div(1.0f, 0.0f, &r) == WARP_ERR_DIV_ZERO);
	CHECK(warp_float4_div(NAN, 0.0f, &r) == WARP_OK && isnan(r));
	CHECK(warp_float4_div(1e-30f, 1e30f, &r) == WARP_ERR_FLOAT_UNDERFLOW);
	/* computed in float, not double: 0.1f + 0.2f rounds in float */
	CHECK(warp_float4_pl(0.1f, 0.2f, &r) == WARP_OK && r == 0.1f + 0.2f);
	/* float4 + float8 is computed in float8: no float4 overflow */
	CHECK(warp_float48_mul(FLT_MAX, 10.0, &r8) == WARP_OK && r8 == (double) FLT_MAX * 10.0);
	CHECK(warp_float84_div(1.0, 0.0f, &r8) == WARP_ERR_DIV_ZERO);
	CHECK(warp_float48_pl(1.5f, DBL_MAX, &r8) == WARP_OK);
	CHECK(warp_float84_mi(-DBL_MAX, FLT_MAX, &r8) == WARP_OK);
	CHECK(warp_float48_div(1.0f, 1e308, &r8) == WARP_OK);
	CHECK(warp_float84_mul(1e308, 3.0f, &r8) == WARP_ERR_FLOAT_OVERFLOW);
	CHECK(warp_float84_pl(1.0, 2.0f, &r8) == WARP_OK && r8 == 3.0);
	CHECK(warp_float48_mi(1.0f, 2.0, &r8) == WARP_OK && r8 == -1.0);
	CHECK(warp_float4_mi(-FLT_MAX, FLT_MAX, &r) == WARP_ERR_FLOAT_OVERFLOW);
	CHECK(warp_float4_um(1.0f) == -1.0f && warp_float4_abs(-2.0f) == 2.0f);
}

TEST(float_compare)
{
	CHECK(warp_float8_cmp(NAN, NAN) == 0);
	CHECK(warp_float8_cmp(NAN, INFINITY) == 1);
	CHECK(warp_float8_cmp(INFINITY, NAN) == -1);
	CHECK(warp_float8_cmp(-0.0, 0.0) == 0);
	CHECK(warp_float8_cmp(-INFINITY, -DBL_MAX) == -1);
	CHECK(warp_float8_eq(NAN, NAN) && !warp_float8_ne(NAN, NAN));
	CHECK(!warp_float8_eq(NAN, 1.0) && warp_float8_ne(1.0, NAN));
	CHECK(warp_float8_lt(INFINITY, NAN) && !warp_float8_lt(NAN, NAN));
	CHECK(warp_float8_le(NAN, NAN) && warp_float8_ge(NAN, 1.0));
	CHECK(warp_float8_gt(NAN, INFINITY) && !warp_float8_gt(1.0, NAN));
	CHECK(warp_float8_eq(-0.0, 0.0));
	CHECK(warp_float8_eq(warp_float4_to_float8(0.1f), (double) 0.1f));
}

TEST(float_casts)
{
	warp_int32	r4;
	warp_int64	r8;
	warp_int16	r2;
	warp_float4 f;

	/* rint: half to even */
	CHECK(warp_float8_to_int4(2.5, &r4) == WARP_OK && r4 == 2);
	CHECK(warp_float8_to_int4(3.5, &r4) == WARP_OK && r4 == 4);
	CHECK(warp_float8_to_int4(-2.5, &r4) == WARP_OK && r4 == -2);
	CHECK(warp_float8_to_int4(2147483647.4, &r4) == WARP_OK && r4 == WARP_INT32_MAX);
	CHECK(warp_float8_to_int4(2147483647.5, &r4) == WARP_ERR_INT_OVERFLOW);
	CHECK(warp_float8_to_int4(-2147483648.5, &r4) == WARP_OK && r4 == WARP_INT32_MIN);
	CHECK(warp_float8_to_int4(-2147483648.6, &r4) == WARP_ERR_INT_OVERFLOW);
	CHECK(warp_float8_to_int4(NAN, &r4) == WARP_ERR_INT_OVERFLOW);
	CHECK(warp_float8_to_int4(INFINITY, &r4) == WARP_ERR_INT_OVERFLOW);
	CHECK(warp_float8_to_int8(9223372036854775807.0, &r8) == WARP_ERR_INT8_OVERFLOW);
	CHECK(warp_float8_to_int8(-9223372036854775808.0, &r8) == WARP_OK && r8 == WARP_INT64_MIN);
	CHECK(warp_float8_to_int2(32767.5, &r2) == WARP_ERR_INT2_OVERFLOW);
	CHECK(warp_float8_to_int2(-32768.5, &r2) == WARP_OK && r2 == -32768);
	CHECK(warp_float4_to_int4(2147483648.0f, &r4) == WARP_ERR_INT_OVERFLOW);
	CHECK(warp_float4_to_int4(-2147483648.0f, &r4) == WARP_OK && r4 == WARP_INT32_MIN);
	CHECK(warp_float4_to_int8(0.5f, &r8) == WARP_OK && r8 == 0);
	CHECK(warp_float4_to_int2(-1.5f, &r2) == WARP_OK && r2 == -2);
	CHECK(warp_float8_to_float4(1e39, &f) == WARP_ERR_FLOAT_OVERFLOW);
	CHECK(warp_float8_to_float4(1e-50, &f) == WARP_ERR_FLOAT_UNDERFLOW);
	CHECK(warp_float8_to_float4(1e-40, &f) == WARP_OK && f > 0.0f);	/* denormal */
	CHECK(warp_float8_to_float4(INFINITY, &f) == WARP_OK && isinf(f));
	CHECK(warp_float8_to_float4(NAN, &f) == WARP_OK && isnan(f));
	CHECK(warp_int8_to_float8(INT64_C(9007199254740993)) == 9007199254740992.0);
	CHECK(warp_int8_to_float4(16777217) == 16777216.0f);
	CHECK(warp_int4_to_float4(16777219) == 16777220.0f);
	CHECK(warp_int4_to_float8(WARP_INT32_MIN) == -2147483648.0);
}

/* ---------------------------------------------------------------- numeric */

static WarpNumeric
N(const char *s)
{
	/* tiny parser for tests: [-]digits[.digits] */
	WarpNumeric n = {0, 0};
	bool		neg = (*s == '-');
	bool		frac = false;

	if (neg)
		s++;
	for (; *s; s++)
	{
		if (*s == '.')
		{
			frac = true;
			continue;
		}
		n.value = n.value * 10 + (*s - '0');
		if (frac)
			n.scale++;
	}
	if (neg)
		n.value = -n.value;
	return n;
}

static bool
NEQ(WarpNumeric a, const char *s)
{
	WarpNumeric b = N(s);

	return a.value == b.value && a.scale == b.scale;
}

TEST(numeric_arith)
{
	WarpNumeric r;
	const char *max38 = "99999999999999999999999999999999999999";

	CHECK(warp_numeric_add(N("1.5"), N("2.25"), &r) == WARP_OK && NEQ(r, "3.75"));
	CHECK(warp_numeric_add(N("1.50"), N("-1.5"), &r) == WARP_OK && NEQ(r, "0.00"));
	CHECK(warp_numeric_sub(N("0"), N("0.001"), &r) == WARP_OK && NEQ(r, "-0.001"));
	CHECK(warp_numeric_add(N(max38), N("1"), &r) == WARP_ERR_NUMERIC_OVERFLOW);
	CHECK(warp_numeric_add(N(max38), N("-1"), &r) == WARP_OK);
	CHECK(warp_numeric_sub(warp_numeric_neg(N(max38)), N(max38), &r) == WARP_ERR_NUMERIC_OVERFLOW);
	/* 38 digits at scale 0 cannot be brought to scale 1 */
	CHECK(warp_numeric_add(N(max38), N("0.1"), &r) == WARP_ERR_NUMERIC_OVERFLOW);
	CHECK(warp_numeric_mul(N("1.5"), N("-0.25"), &r) == WARP_OK && NEQ(r, "-0.375"));
	CHECK(warp_numeric_mul(N("1.0"), N("1.00"), &r) == WARP_OK && NEQ(r, "1.000"));
	CHECK(warp_numeric_mul(N("10000000000000000000"), N("10000000000000000000"), &r) ==
		  WARP_ERR_NUMERIC_OVERFLOW);
	CHECK(warp_numeric_mul(N("1000000000000000000"), N("10000000000000000000"), &r) == WARP_OK &&
		  NEQ(r, "10000000000000000000000000000000000000"));
	CHECK(warp_numeric_mul(N(max38), N("0"), &r) == WARP_OK && NEQ(r, "0"));
	CHECK(warp_numeric_mul(N("0.0000000000000000001"), N("0.00000000000000000001"), &r) ==
		  WARP_ERR_NUMERIC_OVERFLOW);	/* scale 39 */
	/* the scaled-up operand leaves 38 digits but the difference fits */
	CHECK(warp_numeric_sub(N("0.99999999999999999999999999999999999999"), N("1"), &r) == WARP_OK &&
		  NEQ(r, "-0.00000000000000000000000000000000000001"));
	CHECK(warp_numeric_add(N("-1"), N("0.99999999999999999999999999999999999999"), &r) == WARP_OK &&
		  NEQ(r, "-0.00000000000000000000000000000000000001"));
	CHECK(warp_numeric_add(N("2"), N("0.99999999999999999999999999999999999999"), &r) ==
		  WARP_ERR_NUMERIC_OVERFLOW);
	CHECK(warp_numeric_sub(N("10"), N("0.00000000000000000000000000000000000001"), &r) ==
		  WARP_ERR_NUMERIC_OVERFLOW);	/* 9.99...9 needs 39 digits */
	CHECK(NEQ(warp_numeric_abs(N("-2.50")), "2.50"));
	CHECK(warp_numeric_valid(N(max38)) && !warp_numeric_valid(warp_numeric_make(warp_pow10_128(38), 0)));
}

TEST(numeric_compare_round_cast)
{
	WarpNumeric r;
	warp_int32	i4;
	warp_int64	i8;
	warp_int16	i2;
	const char *max38 = "99999999999999999999999999999999999999";

	CHECK(warp_numeric_cmp(N("1.50"), N("1.5")) == 0);
	CHECK(warp_numeric_eq(N("0.000"), N("0")));
	CHECK(warp_numeric_cmp(N("-0.1"), N("0")) == -1);
	CHECK(warp_numeric_lt(N("1.49"), N("1.5")) && warp_numeric_le(N("1.5"), N("1.50")));
	/* rescaling the 38-digit integer overflows: sign decides */
	CHECK(warp_numeric_cmp(N(max38), N("0.5")) == 1);
	CHECK(warp_numeric_cmp(N("0.5"), warp_numeric_neg(N(max38))) == 1);
	CHECK(warp_numeric_cmp(warp_numeric_neg(N(max38)), N("0.5")) == -1);
	CHECK(warp_numeric_round(N("2.5"), 0, &r) == WARP_OK && NEQ(r, "3"));
	CHECK(warp_numeric_round(N("-2.5"), 0, &r) == WARP_OK && NEQ(r, "-3"));
	CHECK(warp_numeric_round(N("2.449"), 1, &r) == WARP_OK && NEQ(r, "2.4"));
	CHECK(warp_numeric_round(N("99.95"), 1, &r) == WARP_OK && NEQ(r, "100.0"));
	CHECK(warp_numeric_round(N("1.5"), 3, &r) == WARP_OK && NEQ(r, "1.500"));
	CHECK(warp_numeric_round(N("1250"), -2, &r) == WARP_OK && NEQ(r, "1300"));
	CHECK(warp_numeric_round(N("-1249.9"), -2, &r) == WARP_OK && NEQ(r, "-1200"));
	CHECK(warp_numeric_round(N("0.4"), -5, &r) == WARP_OK && NEQ(r, "0"));
	CHECK(warp_numeric_round(N(max38), -1, &r) == WARP_ERR_NUMERIC_OVERFLOW);
	CHECK(NEQ(warp_numeric_normalize(N("1.500")), "1.5"));
	CHECK(NEQ(warp_numeric_normalize(N("100")), "100"));
	CHECK(NEQ(warp_numeric_normalize(N("0.00")), "0"));
	CHECK(warp_numeric_to_int4(N("2147483647.49"), &i4) == WARP_OK && i4 == WARP_INT32_MAX);
	CHECK(warp_numeric_to_int4(N("2147483647.5"), &i4) == WARP_ERR_INT_OVERFLOW);
	CHECK(warp_numeric_to_int4(N("-0.5"), &i4) == WARP_OK && i4 == -1);
	CHECK(warp_numeric_to_int8(N("9223372036854775808"), &i8) == WARP_ERR_INT8_OVERFLOW);
	CHECK(warp_numeric_to_int8(N("-9223372036854775808.4"), &i8) == WARP_OK && i8 == WARP_INT64_MIN);
	CHECK(warp_numeric_to_int2(N("32767.5"), &i2) == WARP_ERR_INT2_OVERFLOW);
	CHECK(NEQ(warp_int8_to_numeric(-42), "-42"));
}

/* ---------------------------------------------------------------- datetime */

TEST(julian)
{
	int			y,
				m,
				d;

	CHECK(warp_date2j(2000, 1, 1) == WARP_POSTGRES_EPOCH_JDATE);
	CHECK(warp_date2j(1970, 1, 1) == WARP_UNIX_EPOCH_JDATE);
	CHECK(warp_date2j(-4713, 11, 24) == 0);
	CHECK(warp_date2j(5874898, 1, 1) == WARP_DATE_END_JULIAN);
	CHECK(warp_date2j(294277, 1, 1) == WARP_TIMESTAMP_END_JULIAN);
	warp_j2date(0, &y, &m, &d);
	CHECK(y == -4713 && m == 11 && d == 24);
	warp_j2date(WARP_DATE_END_JULIAN - 1, &y, &m, &d);
	CHECK(y == 5874897 && m == 12 && d == 31);
	warp_j2date(warp_date2j(2024, 2, 29), &y, &m, &d);
	CHECK(y == 2024 && m == 2 && d == 29);
	warp_j2date(warp_date2j(1900, 3, 1) - 1, &y, &m, &d);
	CHECK(y == 1900 && m == 2 && d == 28);
	CHECK(warp_j2day(warp_date2j(2000, 1, 1)) == 6);	/* Saturday */
	CHECK(warp_j2day(0) == 1);	/* 4714-11-24 BC was a Monday */
	/* round trip over a long stretch */
	for (int j = 0; j < 2000000; j += 997)
	{
		warp_j2date(j, &y, &m, &d);
		CHECK(warp_date2j(y, m, d) == j);
	}
	CHECK(warp_date2isoweek(2021, 1, 1) == 53);
	CHECK(warp_date2isoweek(2019, 12, 30) == 1);
	CHECK(warp_date2isoyear(2019, 12, 30) == 2020);
	CHECK(warp_date2isoyear(2021, 1, 3) == 2020);
}

TEST(date_ops)
{
	warp_int32	r;
	warp_int64	ts;
	int			lo = -WARP_POSTGRES_EPOCH_JDATE;
	int			hi = WARP_DATE_END_JULIAN - WARP_POSTGRES_EPOCH_JDATE - 1;

	CHECK(warp_date_pli(0, 31, &r) == WARP_OK && r == 31);
	CHECK(warp_date_pli(hi, 1, &r) == WARP_ERR_DATE_RANGE);
	CHECK(warp_date_pli(hi, 0, &r) == WARP_OK && r == hi);
	CHECK(warp_date_mii(lo, 1, &r) == WARP_ERR_DATE_RANGE);
	CHECK(warp_date_pli(lo, hi - lo, &r) == WARP_OK && r == hi);
	CHECK(warp_date_pli(hi, WARP_INT32_MAX, &r) == WARP_ERR_DATE_RANGE);
	CHECK(warp_date_mii(0, WARP_INT32_MIN, &r) == WARP_ERR_DATE_RANGE);
	CHECK(warp_date_pli(WARP_DATE_NOEND, -5, &r) == WARP_OK && r == WARP_DATE_NOEND);
	CHECK(warp_date_mi(10, 3, &r) == WARP_OK && r == 7);
	CHECK(warp_date_mi(WARP_DATE_NOBEGIN, 3, &r) == WARP_ERR_DATE_SUB_INFINITE);
	CHECK(warp_date_mi(3, WARP_DATE_NOEND, &r) == WARP_ERR_DATE_SUB_INFINITE);
	CHECK(strcmp(warp_status_message(WARP_ERR_DATE_SUB_INFINITE), "cannot subtract infinite dates") == 0);
	CHECK(warp_date_to_timestamp(-1, &ts) == WARP_OK && ts == -WARP_USECS_PER_DAY);
	CHECK(warp_date_to_timestamp(hi, &ts) == WARP_ERR_DATE_TIMESTAMP_RANGE);
	CHECK(warp_date_to_timestamp(WARP_DATE_NOEND, &ts) == WARP_OK && ts == WARP_TIMESTAMP_NOEND);
	CHECK(warp_date_cmp(WARP_DATE_NOBEGIN, lo) == -1 && warp_date_cmp(5, 5) == 0);
	CHECK(warp_timestamp_cmp(WARP_TIMESTAMP_NOEND, WARP_END_TIMESTAMP - 1) == 1);
}

static warp_int64
xdate(WarpDtField f, warp_int32 d)
{
	WarpNumeric n;

	if (warp_date_extract(f, d, &n) != WARP_OK)
		return -999999;
	return (warp_int64) n.value;
}

TEST(date_extract)
{
	warp_int32	d = warp_date2j(2021, 1, 3) - WARP_POSTGRES_EPOCH_JDATE;	/* a Sunday */
	warp_int32	bc = warp_date2j(0, 6, 15) - WARP_POSTGRES_EPOCH_JDATE;	/* 1 BC */
	WarpNumeric n;

	CHECK(xdate(WARP_DT_YEAR, d) == 2021);
	CHECK(xdate(WARP_DT_MONTH, d) == 1);
	CHECK(xdate(WARP_DT_DAY, d) == 3);
	CHECK(xdate(WARP_DT_DOW, d) == 0);
	CHECK(xdate(WARP_DT_ISODOW, d) == 7);
	CHECK(xdate(WARP_DT_DOY, d) == 3);
	CHECK(xdate(WARP_DT_QUARTER, d) == 1);
	CHECK(xdate(WARP_DT_WEEK, d) == 53);
	CHECK(xdate(WARP_DT_ISOYEAR, d) == 2020);
	CHECK(xdate(WARP_DT_DECADE, d) == 202);
	CHECK(xdate(WARP_DT_CENTURY, d) == 21);
	CHECK(xdate(WARP_DT_MILLENNIUM, d) == 3);
	CHECK(xdate(WARP_DT_EPOCH, 0) == 946684800);
	CHECK(xdate(WARP_DT_JULIAN, 0) == 2451545);
	CHECK(xdate(WARP_DT_YEAR, bc) == -1);
	CHECK(xdate(WARP_DT_CENTURY, bc) == -1);
	CHECK(xdate(WARP_DT_DECADE, bc) == 0);
	CHECK(xdate(WARP_DT_MILLENNIUM, bc) == -1);
	CHECK(xdate(WARP_DT_DOY, warp_date2j(2024, 12, 31) - WARP_POSTGRES_EPOCH_JDATE) == 366);
	CHECK(warp_date_extract(WARP_DT_YEAR, WARP_DATE_NOEND, &n) == WARP_ERR_NOT_FINITE);
	CHECK(!warp_date_extract_supported(WARP_DT_HOUR));
	CHECK(warp_date_extract_supported(WARP_DT_DOY));
}

static warp_int64
mkts(int y, int mo, int d, int h, int mi, int s, int us)
{
	WarpTm		tm = {y, mo, d, h, mi, s, us};
	warp_int64	ts = 0;

	if (warp_tm2timestamp(&tm, &ts) != WARP_OK)
		return WARP_INT64_MIN;
	return ts;
}

TEST(timestamp_extract)
{
	warp_int64	ts = mkts(2021, 1, 3, 13, 45, 7, 500123);
	WarpNumeric n;
	WarpTm		tm;

	CHECK(warp_timestamp_extract(WARP_DT_SECOND, ts, &n) == WARP_OK &&
		  n.value == 7500123 && n.scale == 6);
	CHECK(warp_timestamp_extract(WARP_DT_MILLISECONDS, ts, &n) == WARP_OK &&
		  n.value == 7500123 && n.scale == 3);
	CHECK(warp_timestamp_extract(WARP_DT_MICROSECONDS, ts, &n) == WARP_OK &&
		  n.value == 7500123 && n.scale == 0);
	CHECK(warp_timestamp_extract(WARP_DT_MINUTE, ts, &n) == WARP_OK && n.value == 45);
	CHECK(warp_timestamp_extract(WARP_DT_HOUR, ts, &n) == WARP_OK && n.value == 13);
	CHECK(warp_timestamp_extract(WARP_DT_ISODOW, ts, &n) == WARP_OK && n.value == 7);
	CHECK(warp_timestamp_extract(WARP_DT_WEEK, ts, &n) == WARP_OK && n.value == 53);
	CHECK(warp_timestamp_extract(WARP_DT_EPOCH, 0, &n) == WARP_OK &&
		  n.value == (warp_int128) 946684800 * 1000000 && n.scale == 6);
	/* the epoch shift of the largest timestamp leaves int64 */
	CHECK(warp_timestamp_extract(WARP_DT_EPOCH, WARP_END_TIMESTAMP - 1, &n) == WARP_OK &&
		  n.value > (warp_int128) WARP_INT64_MAX && n.value % 100 == 0);
	/* PostgreSQL's numeric path there rounds to 100 microseconds */
	CHECK(warp_timestamp_extract(WARP_DT_EPOCH, WARP_END_TIMESTAMP - 2, &n) == WARP_OK &&
		  n.value == (warp_int128) 9224318016000 * 1000000);
	CHECK(warp_timestamp_extract(WARP_DT_EPOCH, WARP_INT64_MAX - INT64_C(946684800000000) - 1, &n) ==
		  WARP_OK && n.value == (warp_int128) WARP_INT64_MAX - 1);
	CHECK(warp_timestamp_extract(WARP_DT_YEAR, WARP_END_TIMESTAMP - 1, &n) == WARP_OK &&
		  n.value == 294276);
	CHECK(warp_timestamp_extract(WARP_DT_YEAR, WARP_MIN_TIMESTAMP, &n) == WARP_OK &&
		  n.value == -4714);
	CHECK(warp_timestamp_extract(WARP_DT_SECOND, -1, &n) == WARP_OK && n.value == 59999999);
	CHECK(warp_timestamp_extract(WARP_DT_HOUR, WARP_TIMESTAMP_NOBEGIN, &n) == WARP_ERR_NOT_FINITE);
	CHECK(!warp_timestamp_extract_supported(WARP_DT_JULIAN));
	CHECK(warp_timestamp2tm(-1, &tm) && tm.year == 1999 && tm.mon == 12 && tm.mday == 31 &&
		  tm.hour == 23 && tm.min == 59 && tm.sec == 59 && tm.usec == 999999);
}

TEST(timestamp_trunc)
{
	warp_int64	ts = mkts(2021, 1, 3, 13, 45, 7, 500123);
	warp_int64	r;

	CHECK(warp_timestamp_trunc(WARP_DT_YEAR, ts, &r) == WARP_OK && r == mkts(2021, 1, 1, 0, 0, 0, 0));
	CHECK(warp_timestamp_trunc(WARP_DT_QUARTER, mkts(2021, 8, 9, 1, 2, 3, 4), &r) == WARP_OK &&
		  r == mkts(2021, 7, 1, 0, 0, 0, 0));
	CHECK(warp_timestamp_trunc(WARP_DT_MONTH, ts, &r) == WARP_OK && r == mkts(2021, 1, 1, 0, 0, 0, 0));
	CHECK(warp_timestamp_trunc(WARP_DT_WEEK, ts, &r) == WARP_OK && r == mkts(2020, 12, 28, 0, 0, 0, 0));
	CHECK(warp_timestamp_trunc(WARP_DT_WEEK, mkts(2019, 12, 31, 5, 0, 0, 0), &r) == WARP_OK &&
		  r == mkts(2019, 12, 30, 0, 0, 0, 0));
	CHECK(warp_timestamp_trunc(WARP_DT_DAY, ts, &r) == WARP_OK && r == mkts(2021, 1, 3, 0, 0, 0, 0));
	CHECK(warp_timestamp_trunc(WARP_DT_HOUR, ts, &r) == WARP_OK && r == mkts(2021, 1, 3, 13, 0, 0, 0));
	CHECK(warp_timestamp_trunc(WARP_DT_MINUTE, ts, &r) == WARP_OK && r == mkts(2021, 1, 3, 13, 45, 0, 0));
	CHECK(warp_timestamp_trunc(WARP_DT_SECOND, ts, &r) == WARP_OK && r == mkts(2021, 1, 3, 13, 45, 7, 0));
	CHECK(warp_timestamp_trunc(WARP_DT_MILLISECONDS, ts, &r) == WARP_OK &&
		  r == mkts(2021, 1, 3, 13, 45, 7, 500000));
	CHECK(warp_timestamp_trunc(WARP_DT_MICROSECONDS, ts, &r) == WARP_OK && r == ts);
	CHECK(warp_timestamp_trunc(WARP_DT_DECADE, ts, &r) == WARP_OK && r == mkts(2020, 1, 1, 0, 0, 0, 0));
	CHECK(warp_timestamp_trunc(WARP_DT_CENTURY, ts, &r) == WARP_OK && r == mkts(2001, 1, 1, 0, 0, 0, 0));
	CHECK(warp_timestamp_trunc(WARP_DT_MILLENNIUM, ts, &r) == WARP_OK && r == mkts(2001, 1, 1, 0, 0, 0, 0));
	CHECK(warp_timestamp_trunc(WARP_DT_CENTURY, mkts(2000, 12, 31, 0, 0, 0, 0), &r) == WARP_OK &&
		  r == mkts(1901, 1, 1, 0, 0, 0, 0));
	/* the millennium of 4714 BC starts before the first valid timestamp */
	CHECK(warp_timestamp_trunc(WARP_DT_MILLENNIUM, WARP_MIN_TIMESTAMP, &r) == WARP_ERR_TIMESTAMP_RANGE);
	CHECK(warp_timestamp_trunc(WARP_DT_DAY, WARP_MIN_TIMESTAMP + 5, &r) == WARP_OK &&
		  r == WARP_MIN_TIMESTAMP);
	CHECK(warp_timestamp_trunc(WARP_DT_YEAR, WARP_TIMESTAMP_NOEND, &r) == WARP_OK &&
		  r == WARP_TIMESTAMP_NOEND);
	CHECK(warp_timestamp_trunc(WARP_DT_YEAR, WARP_END_TIMESTAMP - 1, &r) == WARP_OK &&
		  r == mkts(294276, 1, 1, 0, 0, 0, 0));
	CHECK(mkts(294277, 1, 1, 0, 0, 0, 0) == WARP_INT64_MIN);	/* out of range */
	CHECK(!warp_timestamp_trunc_supported(WARP_DT_DOW));
}

/* ---------------------------------------------------------------- text */

static int
like(const char *t, const char *p)
{
	bool		m;
	WarpStatus	st = warp_text_like(S(t), S(p), &m);

	if (st != WARP_OK)
		return -1;
	return m ? 1 : 0;
}

TEST(text_eq_cmp_hash)
{
	CHECK(warp_text_eq(S("abc"), S("abc")));
	CHECK(!warp_text_eq(S("abc"), S("abcd")));
	CHECK(!warp_text_eq(S("abc"), S("abd")));
	CHECK(warp_text_eq(S(""), S("")));
	CHECK(warp_text_cmp_c(S("abc"), S("abd")) == -1);
	CHECK(warp_text_cmp_c(S("ab"), S("abc")) == -1);
	CHECK(warp_text_cmp_c(S("\xc3\xa9"), S("z")) == 1);	/* bytes are unsigned */
	CHECK(warp_text_cmp_c(S("x"), S("x")) == 0);
	CHECK(warp_hash_bytes(S("hello world!")) == warp_hash_bytes(S("hello world!")));
	CHECK(warp_hash_bytes(S("hello world!")) != warp_hash_bytes(S("hello world?")));
	CHECK(warp_hash_bytes(S("")) != warp_hash_bytes(S("a")));
	CHECK(warp_hash_bytes((const warp_uint8 *) "a\0", 2) != warp_hash_bytes(S("a")));
	/* int2/int4/int8 keys that are equal hash equal */
	CHECK(warp_hash_int64((warp_int16) -5) == warp_hash_int64(INT64_C(-5)));
	CHECK(warp_hash_int64(1) != warp_hash_int64(2));
	CHECK(warp_hash_float8(-0.0) == warp_hash_float8(0.0));
	CHECK(warp_hash_float8(NAN) == warp_hash_float8(-NAN));
	CHECK(warp_hash_float8((double) 0.5f) == warp_hash_float8(0.5));
	CHECK(warp_hash_float8(1.0) != warp_hash_float8(2.0));
	CHECK(warp_hash_numeric(N("1.500")) == warp_hash_numeric(N("1.5")));
	CHECK(warp_hash_numeric(N("0.00")) == warp_hash_numeric(N("0")));
	CHECK(warp_hash_numeric(N("10")) != warp_hash_numeric(N("1")));
	CHECK(warp_hash_numeric(N("-1.5")) != warp_hash_numeric(N("1.5")));
	CHECK(warp_hash_combine(1, 2) != warp_hash_combine(2, 1));
}

TEST(text_like)
{
	CHECK(like("abc", "abc") == 1);
	CHECK(like("abc", "ab") == 0);
	CHECK(like("abc", "a%") == 1);
	CHECK(like("abc", "%c") == 1);
	CHECK(like("abc", "%b%") == 1);
	CHECK(like("abc", "%d%") == 0);
	CHECK(like("", "%") == 1);
	CHECK(like("", "") == 1);
	CHECK(like("", "_") == 0);
	CHECK(like("a", "") == 0);
	CHECK(like("abc", "a_c") == 1);
	CHECK(like("abc", "___") == 1);
	CHECK(like("abc", "____") == 0);
	CHECK(like("abc", "%__") == 1);
	CHECK(like("abc", "%___%") == 1);
	CHECK(like("abc", "%____%") == 0);
	CHECK(like("aaab", "%ab") == 1);
	CHECK(like("abab", "%ab%ab") == 1);
	CHECK(like("ababx", "%ab%ab") == 0);
	CHECK(like("mississippi", "%iss%pi") == 1);
	CHECK(like("mississippi", "m%i%i%i%i") == 1);
	CHECK(like("mississippi", "m%i%i%i%i%i") == 0);
	/* escapes */
	CHECK(like("a%c", "a\\%c") == 1);
	CHECK(like("abc", "a\\%c") == 0);
	CHECK(like("a_c", "a\\_c") == 1);
	CHECK(like("abc", "a\\_c") == 0);
	CHECK(like("a\\c", "a\\\\c") == 1);
	CHECK(like("abc", "\\a\\b\\c") == 1);
	CHECK(like("x%", "%\\%") == 1);
	CHECK(like("x%y", "%\\%") == 0);
	/* trailing escape: an error only when matching reaches it */
	CHECK(like("ab", "a\\") == -1);
	CHECK(like("xb", "a\\") == 0);
	CHECK(like("a", "a\\") == 0);
	CHECK(like("abc", "a%\\") == -1);
	CHECK(like("", "\\") == 0);
	CHECK(like("x", "\\") == -1);
	CHECK(like("", "%\\") == 0);	/* no text: the escape is never reached */
	CHECK(like("a", "%\\") == -1);	/* the '%' path checks it first */
	/* UTF-8: '_' is one character */
	CHECK(like("\xc3\xa9", "_") == 1);
	CHECK(like("\xc3\xa9", "__") == 0);
	CHECK(like("\xe2\x82\xac" "x", "_x") == 1);
	CHECK(like("\xf0\x9f\x98\x80", "_") == 1);
	CHECK(like("a\xf0\x9f\x98\x80" "b", "a_b") == 1);
	CHECK(like("a\xf0\x9f\x98\x80" "b", "%_b") == 1);
	CHECK(like("a\xf0\x9f\x98\x80" "b", "%\xf0\x9f\x98\x80%") == 1);
	CHECK(like("\xc3\xa9t\xc3\xa9", "\xc3\xa9%") == 1);
	CHECK(like("\xc3\xa9t\xc3\xa9", "%\xc3\xa9") == 1);
	CHECK(like("\xc3\xa9t\xc3\xa9", "_t_") == 1);
	CHECK(like("\xc3\xa9t\xc3\xa9", "\\\xc3\xa9%") == 1);
}

/* warp_in_set against a linear search: every set size up to 70, members
 * spread with gaps, probes below, between, on and above them, extremes */
TEST(in_set_search)
{
	warp_int64	set[70];
	int			n,
				i;

	CHECK(!warp_in_set(set, 0, 0));
	for (n = 1; n <= 70; n++)
	{
		warp_int64	v;

		for (i = 0; i < n; i++)
			set[i] = (warp_int64) i * 3 - 50 + (i > n / 2 ? 1000 : 0);
		if (n > 2)
		{
			set[0] = WARP_INT64_MIN;
			set[n - 1] = WARP_INT64_MAX;
		}
		for (v = -60; v <= 1300; v++)
		{
			bool		want = false;

			for (i = 0; i < n; i++)
				want = want || set[i] == v;
			CHECK(warp_in_set(set, n, v) == want);
		}
		CHECK(warp_in_set(set, n, WARP_INT64_MIN) == (n > 2));
		CHECK(warp_in_set(set, n, WARP_INT64_MAX) == (n > 2));
	}
}

int
main(void)
{
	RUN(status_codes);
	RUN(int2_ops);
	RUN(int4_ops);
	RUN(int8_ops);
	RUN(int_mixed_and_casts);
	RUN(float8_arith);
	RUN(float4_arith);
	RUN(float_compare);
	RUN(float_casts);
	RUN(numeric_arith);
	RUN(numeric_compare_round_cast);
	RUN(julian);
	RUN(date_ops);
	RUN(date_extract);
	RUN(timestamp_extract);
	RUN(timestamp_trunc);
	RUN(text_eq_cmp_hash);
	RUN(text_like);
	RUN(in_set_search);
	UNIT_EXIT();
}
