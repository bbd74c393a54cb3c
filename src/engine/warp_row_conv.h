/*-------------------------------------------------------------------------
 *
 * warp_row_conv.h
 *	  Arrow date and timestamp values converted to PostgreSQL's epoch and
 *	  range (warp_row_convert), shared by the CPU driver's column loading
 *	  (warp_cpu_load.c) and the row evaluator's (warp_row_load.h), so that
 *	  both drivers accept and reject exactly the same values.
 *
 * Pure C (also valid C++ for nvcc); no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_ROW_CONV_H
#define WARP_ROW_CONV_H

#include "warp_defs.h"

/* conversion of an integer value to the engine's domain */
typedef enum WarpRowConv
{
	WRC_NONE = 0,
	WRC_DATE_DAY,
	WRC_DATE_MS,
	WRC_TS_S,
	WRC_TS_MS,
	WRC_TS_US,
	WRC_TS_NS,
	WRC_DECIMAL					/* Decimal128 of the column's scale: its
								 * unscaled value, which must fit int64 (and
								 * dec_limit when set) */
} WarpRowConv;

/* One fixed-width array: row i is element offset+i (bit offset+i). */
/* PostgreSQL's epoch (2000-01-01) relative to Unix's, and its limits */
#define WARP_ROW_EPOCH_DAYS INT64_C(10957)
#define WARP_ROW_EPOCH_USECS (WARP_ROW_EPOCH_DAYS * INT64_C(86400000000))
#define WARP_ROW_DATE_MIN (-INT64_C(2451545))
#define WARP_ROW_DATE_END (INT64_C(2147483494) - INT64_C(2451545))	/* JD of 5874898-01-01, from 2000 */
#define WARP_ROW_TS_MIN (-INT64_C(211813488000000000))
#define WARP_ROW_TS_END INT64_C(9223371331200000000)

/* v * m without overflow (m > 0); false on overflow */
WARP_FN bool
warp_row_mul_ok(warp_int64 v, warp_int64 m, warp_int64 *out)
{
	if (v > WARP_INT64_MAX / m || v < WARP_INT64_MIN / m)
		return false;
	*out = v * m;
	return true;
}

/* conv_date / conv_timestamp of warp_cpu_load.c */
WARP_FN bool
warp_row_convert(int conv, warp_int64 v, warp_int64 *out)
{
	warp_int64	us = 0;

	switch (conv)
	{
		case WRC_NONE:
			*out = v;
			return true;
		case WRC_DATE_DAY:
		case WRC_DATE_MS:
			if (conv == WRC_DATE_MS)
				v = v >= 0 ? v / 86400000 : -((-(v + 1)) / 86400000) - 1;
			v -= WARP_ROW_EPOCH_DAYS;
			if (v < WARP_ROW_DATE_MIN || v >= WARP_ROW_DATE_END)
				return false;
			*out = v;
			return true;
		case WRC_TS_S:
			if (!warp_row_mul_ok(v, INT64_C(1000000), &us))
				return false;
			break;
		case WRC_TS_MS:
			if (!warp_row_mul_ok(v, INT64_C(1000), &us))
				return false;
			break;
		case WRC_TS_US:
			us = v;
			break;
		default:
			{
				/* nanoseconds: round half away from zero, like arrow_fdw */
				warp_int64	q = v / 1000,
							r = v % 1000;

				if (r >= 500)
					q++;
				else if (r <= -500)
					q--;
				us = q;
			}
	}
	if (us < WARP_INT64_MIN + WARP_ROW_EPOCH_USECS)
		return false;
	us -= WARP_ROW_EPOCH_USECS;
	if (us < WARP_ROW_TS_MIN || us >= WARP_ROW_TS_END)
		return false;
	*out = us;
	return true;
}

#endif							/* WARP_ROW_CONV_H */
