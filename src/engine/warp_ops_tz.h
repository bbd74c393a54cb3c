/*-------------------------------------------------------------------------
 *
 * warp_ops_tz.h
 *	  timestamp with time zone in the session's TimeZone: local time,
 *	  date_trunc, extract/date_part and the casts between timestamptz,
 *	  timestamp and date, with PostgreSQL's semantics.
 *
 * PostgreSQL converts a timestamptz to local time with pg_localtime() (the
 * UTC offset in force at that instant) and a local time back with
 * DetermineTimeZoneOffset(), which looks for the zone's next transition
 * after "local time minus one day" (pg_next_dst_boundary) and resolves
 * times in a gap or an overlap by its own rule: in a spring-forward gap the
 * offset before the transition, in a fall-back overlap the one after.  The
 * engine cannot call either, so the backend tabulates the zone (WarpTz):
 * every transition PostgreSQL reports from 4714 BC on, up to two 400-year
 * Gregorian cycles past a point after which PostgreSQL's own zone data
 * repeats with that period (its tzcode extrapolates by whole cycles; the
 * backend verifies the repetition and compares the table with
 * pg_localtime/pg_next_dst_boundary at sample instants before using it).
 * Lookups beyond the table map back by whole cycles, as PostgreSQL does.
 *
 * Times here are pg_time_t seconds since 1970-01-01 UTC; values are
 * PostgreSQL's microseconds since 2000-01-01.
 *
 * Pure C; no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_OPS_TZ_H
#define WARP_OPS_TZ_H

#include "warp_defs.h"
#include "warp_ops_datetime.h"

/* 400 Gregorian years: 146097 days */
#define WARP_TZ_CYCLE_SECS		INT64_C(12622780800)
#define WARP_SECS_PER_DAY		86400
/* seconds from 1970-01-01 to 2000-01-01 */
#define WARP_TZ_EPOCH_SHIFT		INT64_C(946684800)
#define WARP_TZ_MAX_TRANSITIONS 40000

/*
 * A time zone as the engine sees it.  at[i] (ascending) is a transition;
 * off[i] the UTC offset (seconds east) from at[i] on.  Before at[0] (or
 * always, with no transitions) local time uses off0_local and the "offset
 * before the next boundary" is off0_next: PostgreSQL's pg_localtime and
 * pg_next_dst_boundary may pick different types there.  From cycle_start
 * on, offsets repeat every WARP_TZ_CYCLE_SECS; the table covers up to
 * cycle_start + 2 cycles, and later times are looked up one or more whole
 * cycles earlier.
 */
typedef struct WarpTz
{
	warp_int32	n;
	warp_int32	off0_local;
	warp_int32	off0_next;
	warp_int32	pad;
	warp_int64	cycle_start;
	const warp_int64 *at;
	const warp_int32 *off;
} WarpTz;

/* fields extract() accepts for timestamptz (as for timestamp, no julian) */
WARP_FN bool
warp_timestamptz_extract_supported(WarpDtField field)
{
	return warp_timestamp_extract_supported(field);
}

/* floor of a timestamp's seconds, as pg_time_t */
WARP_FN warp_int64
warp_tz_seconds(warp_int64 ts)
{
	warp_int64	s = ts / WARP_USECS_PER_SEC;

	if (ts < 0 && s * WARP_USECS_PER_SEC != ts)
		s--;
	return s + WARP_TZ_EPOCH_SHIFT;
}

/* t mapped into the table by whole cycles; *shift = what was subtracted */
WARP_FN warp_int64
warp_tz_map(const WarpTz *tz, warp_int64 t, warp_int64 *shift)
{
	warp_int64	k;

	*shift = 0;
	if (t < tz->cycle_start + WARP_TZ_CYCLE_SECS)
		return t;
	k = (t - tz->cycle_start) / WARP_TZ_CYCLE_SECS;
	*shift = k * WARP_TZ_CYCLE_SECS;
	return t - *shift;
}

/* index of the first transition after t (n if none) */
WARP_FN int
warp_tz_after(const WarpTz *tz, warp_int64 t)
{
	int			lo = 0,
				hi = tz->n;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (t < tz->at[mid])
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* UTC offset in force at t (pg_localtime's tm_gmtoff) */
WARP_FN warp_int32
warp_tz_offset(const WarpTz *tz, warp_int64 t)
{
	warp_int64	shift;
	int			i = warp_tz_after(tz, warp_tz_map(tz, t, &shift));

	return i == 0 ? tz->off0_local : tz->off[i - 1];
}

/*
 * pg_next_dst_boundary: 1 with the next transition after t, and the offsets
 * before and after it; 0 when there is none (*before: the offset at t).
 */
WARP_FN int
warp_tz_next_boundary(const WarpTz *tz, warp_int64 t, warp_int32 *before,
					  warp_int64 *boundary, warp_int32 *after)
{
	warp_int64	shift;
	int			i = warp_tz_after(tz, warp_tz_map(tz, t, &shift));

	*before = i == 0 ? tz->off0_next : tz->off[i - 1];
	if (i == tz->n)
		return 0;
	*boundary = tz->at[i] + shift;
	*after = tz->off[i];
	return 1;
}

/*
 * DetermineTimeZoneOffset: the UTC offset (seconds east) that applies to
 * the local time mytime (local seconds since 1970, taken as if UTC).
 */
WARP_FN warp_int32
warp_tz_local_offset(const WarpTz *tz, warp_int64 mytime)
{
	warp_int32	before,
				after;
	warp_int64	boundary,
				beforetime,
				aftertime;

	if (!warp_tz_next_boundary(tz, mytime - WARP_SECS_PER_DAY, &before, &boundary, &after))
		return before;
	beforetime = mytime - before;
	aftertime = mytime - after;
	if (beforetime < boundary && aftertime < boundary)
		return before;
	if (beforetime > boundary && aftertime >= boundary)
		return after;
	/* in a gap or an overlap: prefer the earlier UTC interpretation's rule */
	return beforetime > aftertime ? before : after;
}

/* a finite timestamptz as local time (a timestamp, maybe just out of range) */
WARP_FN warp_int64
warp_tz_to_local(const WarpTz *tz, warp_int64 ts, warp_int32 *off)
{
	*off = warp_tz_offset(tz, warp_tz_seconds(ts));
	return ts + (warp_int64) *off * WARP_USECS_PER_SEC;
}

/*
 * timestamptz -> timestamp (timestamptz2timestamp): the local time, which
 * must itself be a valid timestamp.
 */
WARP_FN WarpStatus
warp_timestamptz_to_timestamp(const WarpTz *tz, warp_int64 ts, warp_int64 *res)
{
	warp_int32	off;
	warp_int64	local;

	if (!warp_timestamp_is_finite(ts))
	{
		*res = ts;
		return WARP_OK;
	}
	local = warp_tz_to_local(tz, ts, &off);
	if (!warp_timestamp_is_valid(local))
		return WARP_ERR_TIMESTAMP_RANGE;
	*res = local;
	return WARP_OK;
}

/* timestamptz -> date (timestamptz2date): the local calendar date */
WARP_FN WarpStatus
warp_timestamptz_to_date(const WarpTz *tz, warp_int64 ts, warp_int64 *res)
{
	warp_int32	off;

	if (!warp_timestamp_is_finite(ts))
		return warp_timestamp_to_date(ts, res);
	return warp_timestamp_to_date(warp_tz_to_local(tz, ts, &off), res);
}

/* a result r out of the finite range: the error, or saturated */
WARP_FN WarpStatus
warp_tz_out_of_range(warp_int64 r, bool saturate, WarpStatus err, warp_int64 *res)
{
	if (!saturate)
		return err;
	*res = r < WARP_MIN_TIMESTAMP ? WARP_TIMESTAMP_BEFORE_FINITE : WARP_TIMESTAMP_AFTER_FINITE;
	return WARP_OK;
}

/*
 * timestamp -> timestamptz (timestamp2timestamptz): the local time read in
 * the zone; "timestamp out of range" when the result is not valid, or with
 * saturate (timestamp2timestamptz_opt_overflow, for comparisons) a value
 * just inside the infinities.
 */
WARP_FN WarpStatus
warp_timestamp_to_timestamptz_sat(const WarpTz *tz, warp_int64 ts, bool saturate, warp_int64 *res)
{
	warp_int64	r;

	if (!warp_timestamp_is_finite(ts))
	{
		*res = ts;
		return WARP_OK;
	}
	r = ts - (warp_int64) warp_tz_local_offset(tz, warp_tz_seconds(ts)) * WARP_USECS_PER_SEC;
	if (!warp_timestamp_is_valid(r))
		return warp_tz_out_of_range(r, saturate, WARP_ERR_TIMESTAMP_RANGE, res);
	*res = r;
	return WARP_OK;
}

WARP_FN WarpStatus
warp_timestamp_to_timestamptz(const WarpTz *tz, warp_int64 ts, warp_int64 *res)
{
	return warp_timestamp_to_timestamptz_sat(tz, ts, false, res);
}

/*
 * date -> timestamptz (date2timestamptz): local midnight of the date;
 * saturate as date2timestamptz_opt_overflow.
 */
WARP_FN WarpStatus
warp_date_to_timestamptz_sat(const WarpTz *tz, warp_int64 d, bool saturate, warp_int64 *res)
{
	warp_int64	midnight = 0;
	WarpStatus	st;

	/* local midnight read in the zone: timestamp -> timestamptz's rule */
	st = warp_date_to_timestamp_sat((warp_int32) d, saturate, &midnight);
	if (st != WARP_OK || !warp_timestamp_is_finite(midnight) ||
		midnight == WARP_TIMESTAMP_AFTER_FINITE)
	{
		*res = midnight;
		return st;
	}
	st = warp_timestamp_to_timestamptz_sat(tz, midnight, saturate, res);
	return st == WARP_ERR_TIMESTAMP_RANGE ? WARP_ERR_DATE_TIMESTAMP_RANGE : st;
}

WARP_FN WarpStatus
warp_date_to_timestamptz(const WarpTz *tz, warp_int64 d, warp_int64 *res)
{
	return warp_date_to_timestamptz_sat(tz, d, false, res);
}

/*
 * extract(field FROM timestamptz): the fields of the local time; epoch is
 * the instant itself (as for timestamp).
 */
WARP_FN WarpStatus
warp_timestamptz_extract(const WarpTz *tz, WarpDtField field, warp_int64 ts, WarpNumeric *res)
{
	warp_int32	off;

	if (!warp_timestamp_is_finite(ts))
		return WARP_ERR_NOT_FINITE;
	if (field == WARP_DT_EPOCH)
		return warp_timestamp_extract(field, ts, res);
	return warp_timestamp_extract(field, warp_tz_to_local(tz, ts, &off), res);
}

/*
 * date_trunc(field, timestamptz) as timestamptz_trunc_internal computes it:
 * truncate the local time; for day and coarser units (week included) the
 * offset is determined again for the truncated local time, for finer ones
 * the original offset is kept.  A truncated date before 4714 BC or a
 * result out of range is "timestamp out of range".
 */
WARP_FN WarpStatus
warp_timestamptz_trunc(const WarpTz *tz, WarpDtField field, warp_int64 ts, warp_int64 *res)
{
	warp_int32	off;
	warp_int64	local;
	WarpTm		tm;
	WarpStatus	st;
	warp_int128 r;

	if (!warp_timestamp_is_finite(ts))
	{
		*res = ts;
		return WARP_OK;
	}
	local = warp_tz_to_local(tz, ts, &off);
	if (!warp_timestamp2tm(local, &tm))
		return WARP_ERR_TIMESTAMP_RANGE;
	if ((st = warp_tm_trunc(field, &tm)) != WARP_OK)
		return st;
	/* tm2timestamp's julian-day check, then the local value unchecked */
	if (warp_date2j(tm.year, tm.mon, tm.mday) < 0)
		return WARP_ERR_TIMESTAMP_RANGE;
	r = ((warp_int128) warp_date2j(tm.year, tm.mon, tm.mday) - WARP_POSTGRES_EPOCH_JDATE) *
		WARP_USECS_PER_DAY +
		(((warp_int64) tm.hour * 60 + tm.min) * 60 + tm.sec) * WARP_USECS_PER_SEC + tm.usec;
	if (field >= WARP_DT_DAY && field <= WARP_DT_MILLENNIUM)
	{
		/* whole local days: seconds since 1970 without rounding issues */
		warp_int64	secs = (warp_int64) (r / WARP_USECS_PER_SEC) + WARP_TZ_EPOCH_SHIFT;

		off = warp_tz_local_offset(tz, secs);
	}
	r -= (warp_int128) off * WARP_USECS_PER_SEC;
	if (r < WARP_MIN_TIMESTAMP || r >= WARP_END_TIMESTAMP)
		return WARP_ERR_TIMESTAMP_RANGE;
	*res = (warp_int64) r;
	return WARP_OK;
}

/* ---------- timestamp(tz) + interval ---------- */

/* IS_VALID_JULIAN: a year and month date2j handles (Nov 4714 BC on) */
WARP_FN bool
warp_valid_julian(warp_int64 year, warp_int64 mon)
{
	return (year > -4713 || (year == -4713 && mon >= 11)) &&
		(year < 5874898 || (year == 5874898 && mon < 6));
}

/*
 * tm2timestamp with an optional zone: the local fields' timestamp, less
 * the offset DetermineTimeZoneOffset finds for them (tz NULL: none).  An
 * invalid Julian year/month or a result outside the valid range is
 * "timestamp out of range".  Computed in 128 bits: the int64 overflow
 * checks of tm2timestamp reject nothing that the range check would let
 * through.
 */
WARP_FN WarpStatus
warp_tm_to_ts_in_zone(const WarpTz *tz, const WarpTm *tm, warp_int64 *res)
{
	warp_int64	date,
				sod;
	warp_int128 r;

	if (!warp_valid_julian(tm->year, tm->mon))
		return WARP_ERR_TIMESTAMP_RANGE;
	date = (warp_int64) warp_date2j(tm->year, tm->mon, tm->mday) - WARP_POSTGRES_EPOCH_JDATE;
	sod = ((warp_int64) tm->hour * 60 + tm->min) * 60 + tm->sec;
	r = (warp_int128) date * WARP_USECS_PER_DAY + sod * WARP_USECS_PER_SEC + tm->usec;
	if (tz)
		r -= (warp_int128) warp_tz_local_offset(tz, date * WARP_SECS_PER_DAY + sod +
												 WARP_TZ_EPOCH_SHIFT) * WARP_USECS_PER_SEC;
	if (r < WARP_MIN_TIMESTAMP || r >= WARP_END_TIMESTAMP)
		return WARP_ERR_TIMESTAMP_RANGE;
	*res = (warp_int64) r;
	return WARP_OK;
}

/* a finite timestamp's calendar fields, in the zone when tz is given */
WARP_FN bool
warp_ts_fields(const WarpTz *tz, warp_int64 ts, WarpTm *tm)
{
	warp_int32	off;

	return warp_timestamp2tm(tz ? warp_tz_to_local(tz, ts, &off) : ts, tm);
}

/*
 * timestamp_pl_interval (tz NULL) and timestamptz_pl_interval (tz: the
 * session's zone), PostgreSQL 15: infinities pass; months are added to the
 * calendar fields (the day clamped to the month's last), then days through
 * the Julian day number, each step read and rebuilt in the zone; then the
 * microseconds (a sum beyond int64 is "timestamp out of range" too:
 * PostgreSQL 15 checks it rather than wrapping).  The Julian day sum wraps
 * as its int does.
 */
WARP_FN WarpStatus
warp_timestamp_pl_interval(const WarpTz *tz, warp_int64 ts, warp_int32 month, warp_int32 day,
						   warp_int64 time, warp_int64 *res)
{
	static const int mdays[2][12] = {
		{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31},
		{31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}
	};
	WarpTm		tm;
	WarpStatus	st;

	if (!warp_timestamp_is_finite(ts))
	{
		*res = ts;
		return WARP_OK;
	}
	if (month != 0)
	{
		warp_int64	y,
					m;
		int			leap;

		if (!warp_ts_fields(tz, ts, &tm))
			return WARP_ERR_TIMESTAMP_RANGE;
		y = tm.year;
		m = (warp_int64) tm.mon + month;
		if (m > 12)
		{
			y += (m - 1) / 12;
			m = (m - 1) % 12 + 1;
		}
		else if (m < 1)
		{
			y += m / 12 - 1;
			m = m % 12 + 12;
		}
		if (!warp_valid_julian(y, m))
			return WARP_ERR_TIMESTAMP_RANGE;
		tm.year = (int) y;
		tm.mon = (int) m;
		leap = (tm.year % 4 == 0 && (tm.year % 100 != 0 || tm.year % 400 == 0)) ? 1 : 0;
		if (tm.mday > mdays[leap][tm.mon - 1])
			tm.mday = mdays[leap][tm.mon - 1];
		if ((st = warp_tm_to_ts_in_zone(tz, &tm, &ts)) != WARP_OK)
			return st;
	}
	if (day != 0)
	{
		int			julian;

		if (!warp_ts_fields(tz, ts, &tm))
			return WARP_ERR_TIMESTAMP_RANGE;
		julian = (int) ((unsigned int) warp_date2j(tm.year, tm.mon, tm.mday) + (unsigned int) day);
		warp_j2date(julian, &tm.year, &tm.mon, &tm.mday);
		if ((st = warp_tm_to_ts_in_zone(tz, &tm, &ts)) != WARP_OK)
			return st;
	}
	{
		warp_int128 r = (warp_int128) ts + time;

		if (r < WARP_MIN_TIMESTAMP || r >= WARP_END_TIMESTAMP)
			return WARP_ERR_TIMESTAMP_RANGE;
		ts = (warp_int64) r;
	}
	*res = ts;
	return WARP_OK;
}

/*
 * Consistency of a table as received (the daemon or a driver validates
 * before use): ascending transitions, offsets under a day, a cycle start
 * the table covers by two cycles.
 */
WARP_FN bool
warp_tz_valid(const WarpTz *tz)
{
	int			i;

	if (tz->n < 0 || tz->n > WARP_TZ_MAX_TRANSITIONS ||
		(tz->n > 0 && (tz->at == (const warp_int64 *) 0 || tz->off == (const warp_int32 *) 0)))
		return false;
	if (tz->off0_local <= -WARP_SECS_PER_DAY || tz->off0_local >= WARP_SECS_PER_DAY ||
		tz->off0_next <= -WARP_SECS_PER_DAY || tz->off0_next >= WARP_SECS_PER_DAY)
		return false;
	for (i = 0; i < tz->n; i++)
	{
		if (tz->off[i] <= -WARP_SECS_PER_DAY || tz->off[i] >= WARP_SECS_PER_DAY)
			return false;
		if (i > 0 && tz->at[i] <= tz->at[i - 1])
			return false;
	}
	return true;
}

#endif							/* WARP_OPS_TZ_H */
