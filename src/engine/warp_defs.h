/*-------------------------------------------------------------------------
 *
 * warp_defs.h
 *	  Common definitions for pg_warp's engine operation semantics.
 *
 * The meaning of every engine operation is written once, as an inline
 * scalar function that both gcc (the CPU driver, unit tests) and nvcc (the
 * GPU driver) compile.  This header supplies the function qualifier that
 * makes that possible, fixed-width types and the status codes the
 * operations return instead of raising errors: the engine never calls
 * PostgreSQL, so an operation reports what went wrong and the extension
 * raises the error PostgreSQL itself would have raised, with the same
 * SQLSTATE and message text.
 *
 * Pure C11 (plus __int128, which gcc, clang and nvcc all provide on 64-bit
 * targets); no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_DEFS_H
#define WARP_DEFS_H

#include <stdint.h>
#include <stddef.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#ifdef __CUDACC__
#define WARP_FN __host__ __device__ static inline
#else
#define WARP_FN static inline
#endif

/*
 * A function the GPU kernel calls instead of inlining: the row evaluator's
 * interpreter and its rarely taken, large node kinds.  Inlined at each call
 * site, the kernel's code grew past half a megabyte (five copies of the
 * interpreter), more than the SM's instruction caches hold.
 */
#ifdef __CUDACC__
#define WARP_FN_OUTLINE __host__ __device__ static __noinline__
#else
#define WARP_FN_OUTLINE static inline
#endif

/*
 * A piece of a hot function cut out only to name it: always inlined, so
 * the code generated is the one function's (the row evaluator's
 * warp_row_step and its node kinds).
 */
#ifdef __CUDACC__
#define WARP_FN_INLINE __host__ __device__ static __forceinline__
#else
#define WARP_FN_INLINE static inline __attribute__((always_inline))
#endif

/*
 * True while compiling device code.  Floating-point operations use the
 * explicitly rounded intrinsics there, because nvcc otherwise contracts a
 * multiply followed by an add into one fused multiply-add, which rounds once
 * instead of twice and so would differ from PostgreSQL's result.
 */
#if defined(__CUDACC__) && defined(__CUDA_ARCH__)
#define WARP_DEVICE_CODE 1
#endif

typedef int8_t warp_int8;
typedef int16_t warp_int16;
typedef int32_t warp_int32;
typedef int64_t warp_int64;
typedef uint8_t warp_uint8;
typedef uint16_t warp_uint16;
typedef uint32_t warp_uint32;
typedef uint64_t warp_uint64;
typedef float warp_float4;
typedef double warp_float8;
__extension__ typedef __int128 warp_int128;
__extension__ typedef unsigned __int128 warp_uint128;

#define WARP_INT16_MIN	(-32767 - 1)
#define WARP_INT16_MAX	32767
#define WARP_INT32_MIN	(-2147483647 - 1)
#define WARP_INT32_MAX	2147483647
#define WARP_INT64_MIN	(-INT64_C(9223372036854775807) - 1)
#define WARP_INT64_MAX	INT64_C(9223372036854775807)

#if defined(__GNUC__) || defined(__CUDACC__)
#define warp_likely(x)		__builtin_expect((x) != 0, 1)
#define warp_unlikely(x)	__builtin_expect((x) != 0, 0)
#else
#define warp_likely(x)		(x)
#define warp_unlikely(x)	(x)
#endif

/*
 * Outcome of an operation.  Every error code corresponds to exactly one
 * PostgreSQL ereport (SQLSTATE plus message text, see warp_status_sqlstate()
 * and warp_status_message()), except those flagged "fallback": they mark a
 * value the engine cannot represent exactly (a numeric beyond 38 digits, an
 * infinite date).  PostgreSQL would not fail there; the row has to be
 * evaluated by PostgreSQL instead, so the extension must never report them
 * as errors.
 */
typedef enum WarpStatus
{
	WARP_OK = 0,
	WARP_ERR_INT2_OVERFLOW,		/* 22003 smallint out of range */
	WARP_ERR_INT_OVERFLOW,		/* 22003 integer out of range */
	WARP_ERR_INT8_OVERFLOW,		/* 22003 bigint out of range */
	WARP_ERR_DIV_ZERO,			/* 22012 division by zero */
	WARP_ERR_FLOAT_OVERFLOW,	/* 22003 value out of range: overflow */
	WARP_ERR_FLOAT_UNDERFLOW,	/* 22003 value out of range: underflow */
	WARP_ERR_DATE_RANGE,		/* 22008 date out of range */
	WARP_ERR_TIMESTAMP_RANGE,	/* 22008 timestamp out of range */
	WARP_ERR_DATE_TIMESTAMP_RANGE,	/* 22008 date out of range for timestamp */
	WARP_ERR_LIKE_ESCAPE,		/* 22025 LIKE pattern must not end with
								 * escape character */
	WARP_ERR_DATE_SUB_INFINITE, /* 22008 cannot subtract infinite dates */
	WARP_ERR_OUT_OF_MEMORY,		/* 53200 out of memory (engine allocation) */
	/* fallback codes: not errors, the engine cannot compute the value */
	WARP_ERR_NUMERIC_OVERFLOW,	/* beyond 38 digits of 128-bit fixed point */
	WARP_ERR_NOT_FINITE,		/* infinite date/timestamp input */
	WARP_STATUS_COUNT
} WarpStatus;

/* first status that is a fallback, not an error PostgreSQL would raise */
#define WARP_FIRST_FALLBACK WARP_ERR_NUMERIC_OVERFLOW

WARP_FN bool
warp_status_is_fallback(WarpStatus st)
{
	return st >= WARP_FIRST_FALLBACK;
}

/*
 * Five-character SQLSTATE of a status, as PostgreSQL's errcode() would
 * report it.  "00000" for WARP_OK.  Fallback codes get 22003 (numeric) and
 * 22008 (datetime) so that a report, should one ever escape, is at least of
 * the right class.
 */
static inline const char *
warp_status_sqlstate(WarpStatus st)
{
	switch (st)
	{
		case WARP_OK:
			return "00000";
		case WARP_ERR_INT2_OVERFLOW:
		case WARP_ERR_INT_OVERFLOW:
		case WARP_ERR_INT8_OVERFLOW:
		case WARP_ERR_FLOAT_OVERFLOW:
		case WARP_ERR_FLOAT_UNDERFLOW:
		case WARP_ERR_NUMERIC_OVERFLOW:
			return "22003";
		case WARP_ERR_DIV_ZERO:
			return "22012";
		case WARP_ERR_DATE_RANGE:
		case WARP_ERR_TIMESTAMP_RANGE:
		case WARP_ERR_DATE_TIMESTAMP_RANGE:
		case WARP_ERR_DATE_SUB_INFINITE:
		case WARP_ERR_NOT_FINITE:
			return "22008";
		case WARP_ERR_LIKE_ESCAPE:
			return "22025";
		case WARP_ERR_OUT_OF_MEMORY:
			return "53200";
		case WARP_STATUS_COUNT:
			break;
	}
	return "XX000";
}

/* PostgreSQL's exact message text for a status (errmsg of its ereport) */
static inline const char *
warp_status_message(WarpStatus st)
{
	switch (st)
	{
		case WARP_OK:
			return "ok";
		case WARP_ERR_INT2_OVERFLOW:
			return "smallint out of range";
		case WARP_ERR_INT_OVERFLOW:
			return "integer out of range";
		case WARP_ERR_INT8_OVERFLOW:
			return "bigint out of range";
		case WARP_ERR_DIV_ZERO:
			return "division by zero";
		case WARP_ERR_FLOAT_OVERFLOW:
			return "value out of range: overflow";
		case WARP_ERR_FLOAT_UNDERFLOW:
			return "value out of range: underflow";
		case WARP_ERR_DATE_RANGE:
			return "date out of range";
		case WARP_ERR_TIMESTAMP_RANGE:
			return "timestamp out of range";
		case WARP_ERR_DATE_TIMESTAMP_RANGE:
			return "date out of range for timestamp";
		case WARP_ERR_LIKE_ESCAPE:
			return "LIKE pattern must not end with escape character";
		case WARP_ERR_DATE_SUB_INFINITE:
			return "cannot subtract infinite dates";
		case WARP_ERR_OUT_OF_MEMORY:
			return "out of memory";
		case WARP_ERR_NUMERIC_OVERFLOW:
			return "numeric value exceeds the engine's 38-digit fixed point";
		case WARP_ERR_NOT_FINITE:
			return "infinite date or timestamp is not handled by the engine";
		case WARP_STATUS_COUNT:
			break;
	}
	return "unknown engine status";
}

/*
 * SQLSTATE packed as PostgreSQL's MAKE_SQLSTATE does (6 bits per
 * character), so the extension can pass it straight to errcode().
 */
static inline int
warp_status_errcode(WarpStatus st)
{
	const char *s = warp_status_sqlstate(st);

	return ((s[0] - '0') & 0x3F) |
		(((s[1] - '0') & 0x3F) << 6) |
		(((s[2] - '0') & 0x3F) << 12) |
		(((s[3] - '0') & 0x3F) << 18) |
		(((s[4] - '0') & 0x3F) << 24);
}

#endif							/* WARP_DEFS_H */
