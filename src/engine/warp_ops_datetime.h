/*-------------------------------------------------------------------------
 *
 * warp_ops_datetime.h
 *	  date and timestamp (without time zone): comparison, extract(),
 *	  date_trunc() and date arithmetic with PostgreSQL's semantics.
 *
 * Representations are PostgreSQL's own: a date is int32 days since
 * 2000-01-01, a timestamp int64 microseconds since 2000-01-01 00:00, and
 * the extreme values of each type stand for -infinity and +infinity.  The
 * calendar is the proleptic Gregorian one, computed through Julian day
 * numbers with the same integer formulas PostgreSQL uses (Fliegel and van
 * Flandern's), so that every date PostgreSQL accepts -- 4713 BC to
 * 5874897 AD -- converts identically, including its astronomical year
 * numbering (year 0 is 1 BC) and the BC adjustments of extract().
 *
 * timestamp WITH time zone, which depends on the session's TimeZone, is
 * in warp_ops_tz.h.
 *
 * Infinite inputs return the fallback status WARP_ERR_NOT_FINITE from
 * extract (PostgreSQL returns +-Infinity or NULL there, which the engine's
 * result types cannot carry); comparisons order them correctly, and
 * date_trunc and date +- int pass them through as PostgreSQL does.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_OPS_DATETIME_H
#define WARP_OPS_DATETIME_H

#include "warp_defs.h"
#include "warp_ops_numeric.h"

#define WARP_POSTGRES_EPOCH_JDATE	2451545	/* date2j(2000, 1, 1) */
#define WARP_UNIX_EPOCH_JDATE		2440588	/* date2j(1970, 1, 1) */
#define WARP_DATE_END_JULIAN		2147483494	/* date2j(5874898, 1, 1) */
#define WARP_TIMESTAMP_END_JULIAN	109203528	/* date2j(294277, 1, 1) */
#define WARP_USECS_PER_DAY			INT64_C(86400000000)
#define WARP_USECS_PER_HOUR			INT64_C(3600000000)
#define WARP_USECS_PER_MINUTE		INT64_C(60000000)
#define WARP_USECS_PER_SEC			INT64_C(1000000)
#define WARP_MIN_TIMESTAMP			INT64_C(-211813488000000000)
#define WARP_END_TIMESTAMP			INT64_C(9223371331200000000)

#define WARP_DATE_NOBEGIN		WARP_INT32_MIN
#define WARP_DATE_NOEND			WARP_INT32_MAX
#define WARP_TIMESTAMP_NOBEGIN	WARP_INT64_MIN
#define WARP_TIMESTAMP_NOEND	WARP_INT64_MAX

/* extract() / date_trunc() fields */
typedef enum WarpDtField
{
	WARP_DT_MICROSECONDS,
	WARP_DT_MILLISECONDS,
	WARP_DT_SECOND,
	WARP_DT_MINUTE,
	WARP_DT_HOUR,
	WARP_DT_DAY,
	WARP_DT_WEEK,
	WARP_DT_MONTH,
	WARP_DT_QUARTER,
	WARP_DT_YEAR,
	WARP_DT_DECADE,
	WARP_DT_CENTURY,
	WARP_DT_MILLENNIUM,
	WARP_DT_DOW,
	WARP_DT_ISODOW,
	WARP_DT_DOY,
	WARP_DT_ISOYEAR,
	WARP_DT_EPOCH,
	WARP_DT_JULIAN,
	WARP_DT_FIELD_COUNT
} WarpDtField;

/* A broken-down timestamp, astronomical year (0 = 1 BC) */
typedef struct WarpTm
{
	int			year;
	int			mon;			/* 1..12 */
	int			mday;			/* 1..31 */
	int			hour;
	int			min;
	int			sec;
	warp_int32	usec;			/* 0..999999 */
} WarpTm;

WARP_FN bool
warp_date_is_finite(warp_int32 d)
{
	return d != WARP_DATE_NOBEGIN && d != WARP_DATE_NOEND;
}

WARP_FN bool
warp_timestamp_is_finite(warp_int64 t)
{
	return t != WARP_TIMESTAMP_NOBEGIN && t != WARP_TIMESTAMP_NOEND;
}

/* the range of finite dates PostgreSQL accepts: JD 0 up to 5874898-01-01 */
WARP_FN bool
warp_date_is_valid(warp_int64 d)
{
	return d >= -WARP_POSTGRES_EPOCH_JDATE &&
		d < WARP_DATE_END_JULIAN - WARP_POSTGRES_EPOCH_JDATE;
}

WARP_FN bool
warp_timestamp_is_valid(warp_int64 t)
{
	return t >= WARP_MIN_TIMESTAMP && t < WARP_END_TIMESTAMP;
}

/* ---------- Julian day arithmetic ---------- */

/*
 * Julian day number of a proleptic Gregorian date.  Shifting the year to
 * start in March puts the leap day last, so month lengths follow the
 * 30.6-day pattern that 7834 * month / 256 encodes; adding 4800 years keeps
 * every supported year positive for the integer divisions.
 */
WARP_FN int
warp_date2j(int year, int month, int day)
{
	int			julian;
	int			century;

	if (month > 2)
	{
		month += 1;
		year += 4800;
	}
	else
	{
		month += 13;
		year += 4799;
	}
	century = year / 100;
	julian = year * 365 - 32167;
	julian += year / 4 - century + century / 4;
	julian += 7834 * month / 256 + day;
	return julian;
}

/* inverse of warp_date2j; unsigned so that the largest dates do not overflow */
WARP_FN void
warp_j2date(int jd, int *year, int *month, int *day)
{
	unsigned int julian = (unsigned int) jd;
	unsigned int quad;
	unsigned int extra;
	int			y;

	julian += 32044;
	quad = julian / 146097;
	extra = (julian - quad * 146097) * 4 + 3;
	julian += 60 + quad * 3 + extra / 146097;
	quad = julian / 1461;
	julian -= quad * 1461;
	y = julian * 4 / 1461;
	julian = ((y != 0) ? ((julian + 305) % 365) : ((julian + 306) % 366)) + 123;
	y += quad * 4;
	*year = y - 4800;
	quad = julian * 2141 / 65536;
	*day = julian - 7834 * quad / 256;
	*month = (quad + 10) % 12 + 1;
}

/* day of week of a Julian day, 0 = Sunday */
WARP_FN int
warp_j2day(int jd)
{
	int			d = (jd + 1) % 7;

	return d < 0 ? d + 7 : d;
}

/*
 * ISO 8601 week number: week 1 is the week (Monday first) that contains
 * January 4th; late-December days may belong to week 1 of the next year
 * and early-January days to the last week of the previous one.
 */
WARP_FN int
warp_date2isoweek(int year, int mon, int mday)
{
	int			dayn = warp_date2j(year, mon, mday);
	int			day4 = warp_date2j(year, 1, 4);
	int			day0 = warp_j2day(day4 - 1);	/* offset to that week's Monday */
	int			result;

	if (dayn < day4 - day0)
	{
		day4 = warp_date2j(year - 1, 1, 4);
		day0 = warp_j2day(day4 - 1);
	}
	result = (dayn - (day4 - day0)) / 7 + 1;
	if (result >= 52)
	{
		day4 = warp_date2j(year + 1, 1, 4);
		day0 = warp_j2day(day4 - 1);
		if (dayn >= day4 - day0)
			result = (dayn - (day4 - day0)) / 7 + 1;
	}
	return result;
}

/* the year an ISO week belongs to (astronomical numbering) */
WARP_FN int
warp_date2isoyear(int year, int mon, int mday)
{
	int			dayn = warp_date2j(year, mon, mday);
	int			day4 = warp_date2j(year, 1, 4);
	int			day0 = warp_j2day(day4 - 1);
	int			week;

	if (dayn < day4 - day0)
	{
		day4 = warp_date2j(year - 1, 1, 4);
		day0 = warp_j2day(day4 - 1);
		year--;
	}
	week = (dayn - (day4 - day0)) / 7 + 1;
	if (week >= 52)
	{
		day4 = warp_date2j(year + 1, 1, 4);
		day0 = warp_j2day(day4 - 1);
		if (dayn >= day4 - day0)
			year++;
	}
	return year;
}

/* Julian day of the Monday of ISO week "week" of ISO year "year" */
WARP_FN int
warp_isoweek2j(int year, int week)
{
	int			day4 = warp_date2j(year, 1, 4);
	int			day0 = warp_j2day(day4 - 1);

	return (week - 1) * 7 + (day4 - day0);
}

/* ---------- timestamp <-> broken-down time ---------- */

/*
 * Split a finite timestamp into calendar fields.  Returns false if the day
 * falls outside the Julian day range (only possible for values PostgreSQL
 * would not have accepted).
 */
WARP_FN bool
warp_timestamp2tm(warp_int64 ts, WarpTm *tm)
{
	warp_int64	date = ts / WARP_USECS_PER_DAY;
	warp_int64	time = ts - date * WARP_USECS_PER_DAY;

	/* C division truncates toward zero; days must round down */
	if (time < 0)
	{
		time += WARP_USECS_PER_DAY;
		date -= 1;
	}
	date += WARP_POSTGRES_EPOCH_JDATE;
	if (date < 0 || date > WARP_INT32_MAX)
		return false;
	warp_j2date((int) date, &tm->year, &tm->mon, &tm->mday);
	tm->hour = (int) (time / WARP_USECS_PER_HOUR);
	time -= (warp_int64) tm->hour * WARP_USECS_PER_HOUR;
	tm->min = (int) (time / WARP_USECS_PER_MINUTE);
	time -= (warp_int64) tm->min * WARP_USECS_PER_MINUTE;
	tm->sec = (int) (time / WARP_USECS_PER_SEC);
	tm->usec = (warp_int32) (time - (warp_int64) tm->sec * WARP_USECS_PER_SEC);
	return true;
}

/*
 * Calendar fields to a timestamp, with tm2timestamp's checks: the result
 * must be in the valid range (date_trunc to a millennium can reach before
 * 4714 BC).  Computed in 128 bits, so no intermediate overflow.
 */
WARP_FN WarpStatus
warp_tm2timestamp(const WarpTm *tm, warp_int64 *res)
{
	warp_int64	date = (warp_int64) warp_date2j(tm->year, tm->mon, tm->mday) -
		WARP_POSTGRES_EPOCH_JDATE;
	warp_int64	time = (((warp_int64) tm->hour * 60 + tm->min) * 60 + tm->sec) *
		WARP_USECS_PER_SEC + tm->usec;
	warp_int128 t = (warp_int128) date * WARP_USECS_PER_DAY + time;

	if (t < WARP_MIN_TIMESTAMP || t >= WARP_END_TIMESTAMP)
		return WARP_ERR_TIMESTAMP_RANGE;
	*res = (warp_int64) t;
	return WARP_OK;
}

/* ---------- comparisons ---------- */

/* the infinities are the extreme integers, so plain comparison orders them */
WARP_FN int
warp_date_cmp(warp_int32 a, warp_int32 b)
{
	return (a > b) - (a < b);
}

WARP_FN int
warp_timestamp_cmp(warp_int64 a, warp_int64 b)
{
	return (a > b) - (a < b);
}

/* ---------- date arithmetic ---------- */

/* date + int4 (date_pli): infinities stay infinite */
WARP_FN WarpStatus
warp_date_pli(warp_int32 d, warp_int32 days, warp_int32 *res)
{
	warp_int64	r;

	if (!warp_date_is_finite(d))
	{
		*res = d;
		return WARP_OK;
	}
	r = (warp_int64) d + days;
	if (!warp_date_is_valid(r))
		return WARP_ERR_DATE_RANGE;
	*res = (warp_int32) r;
	return WARP_OK;
}

/* date - int4 (date_mii) */
WARP_FN WarpStatus
warp_date_mii(warp_int32 d, warp_int32 days, warp_int32 *res)
{
	warp_int64	r;

	if (!warp_date_is_finite(d))
	{
		*res = d;
		return WARP_OK;
	}
	r = (warp_int64) d - days;
	if (!warp_date_is_valid(r))
		return WARP_ERR_DATE_RANGE;
	*res = (warp_int32) r;
	return WARP_OK;
}

/* date - date (date_mi): infinite inputs are PostgreSQL's error */
WARP_FN WarpStatus
warp_date_mi(warp_int32 a, warp_int32 b, warp_int32 *res)
{
	if (!warp_date_is_finite(a) || !warp_date_is_finite(b))
		return WARP_ERR_DATE_SUB_INFINITE;
	*res = a - b;
	return WARP_OK;
}

/*
 * What a conversion gives, with saturate, for a result beyond the finite
 * timestamps (PostgreSQL's *_opt_overflow: cross-type comparisons treat it
 * as after every finite timestamp but before infinity, or the mirror
 * image): one step inside the infinities, which plain int64 comparison
 * then orders exactly so.
 */
#define WARP_TIMESTAMP_AFTER_FINITE		(WARP_INT64_MAX - 1)
#define WARP_TIMESTAMP_BEFORE_FINITE	(WARP_INT64_MIN + 1)

/* date -> timestamp (date2timestamp; saturate: date2timestamp_opt_overflow) */
WARP_FN WarpStatus
warp_date_to_timestamp_sat(warp_int32 d, bool saturate, warp_int64 *res)
{
	if (d == WARP_DATE_NOBEGIN)
		*res = WARP_TIMESTAMP_NOBEGIN;
	else if (d == WARP_DATE_NOEND)
		*res = WARP_TIMESTAMP_NOEND;
	else
	{
		if (d >= WARP_TIMESTAMP_END_JULIAN - WARP_POSTGRES_EPOCH_JDATE)
		{
			if (!saturate)
				return WARP_ERR_DATE_TIMESTAMP_RANGE;
			*res = WARP_TIMESTAMP_AFTER_FINITE;
			return WARP_OK;
		}
		*res = (warp_int64) d * WARP_USECS_PER_DAY;
	}
	return WARP_OK;
}

/* date -> timestamp (date2timestamp) */
WARP_FN WarpStatus
warp_date_to_timestamp(warp_int32 d, warp_int64 *res)
{
	return warp_date_to_timestamp_sat(d, false, res);
}

/* timestamp -> date (timestamp_date): the calendar day; infinities map */
WARP_FN WarpStatus
warp_timestamp_to_date(warp_int64 ts, warp_int64 *res)
{
	warp_int64	day;

	if (ts == WARP_TIMESTAMP_NOBEGIN)
		*res = WARP_DATE_NOBEGIN;
	else if (ts == WARP_TIMESTAMP_NOEND)
		*res = WARP_DATE_NOEND;
	else
	{
		day = ts / WARP_USECS_PER_DAY;
		if (ts < 0 && day * WARP_USECS_PER_DAY != ts)
			day--;
		*res = day;
	}
	return WARP_OK;
}

/* ---------- extract ---------- */

/* year as extract() reports it: there is no year 0, 1 BC is -1 */
WARP_FN int
warp_extract_year(int year)
{
	return year > 0 ? year : year - 1;
}

/*
 * Fields computed from the calendar date alone, shared by date and
 * timestamp.  Returns false for fields that need the time of day.
 */
WARP_FN bool
warp_extract_date_field(WarpDtField field, int year, int mon, int mday,
						warp_int64 *res)
{
	switch (field)
	{
		case WARP_DT_DAY:
			*res = mday;
			return true;
		case WARP_DT_MONTH:
			*res = mon;
			return true;
		case WARP_DT_QUARTER:
			*res = (mon - 1) / 3 + 1;
			return true;
		case WARP_DT_WEEK:
			*res = warp_date2isoweek(year, mon, mday);
			return true;
		case WARP_DT_YEAR:
			*res = warp_extract_year(year);
			return true;
		case WARP_DT_DECADE:
			/* decades count from year 0, so 1 BC (year 0) is decade 0 */
			*res = year >= 0 ? year / 10 : -((8 - (year - 1)) / 10);
			return true;
		case WARP_DT_CENTURY:
			/* centuries count from year 1: 2000 is in the 20th */
			*res = year > 0 ? (year + 99) / 100 : -((99 - (year - 1)) / 100);
			return true;
		case WARP_DT_MILLENNIUM:
			*res = year > 0 ? (year + 999) / 1000 : -((999 - (year - 1)) / 1000);
			return true;
		case WARP_DT_ISOYEAR:
			{
				int			iy = warp_date2isoyear(year, mon, mday);

				*res = iy > 0 ? iy : iy - 1;
				return true;
			}
		case WARP_DT_DOW:
			*res = warp_j2day(warp_date2j(year, mon, mday));
			return true;
		case WARP_DT_ISODOW:
			{
				int			dow = warp_j2day(warp_date2j(year, mon, mday));

				*res = dow == 0 ? 7 : dow;
				return true;
			}
		case WARP_DT_DOY:
			*res = warp_date2j(year, mon, mday) - warp_date2j(year, 1, 1) + 1;
			return true;
		default:
			return false;
	}
}

/*
 * Which fields extract(field FROM date) accepts; PostgreSQL rejects the
 * time-of-day ones for date ("unit ... not supported for type date"), so a
 * program asking for them must not be built.
 */
WARP_FN bool
warp_date_extract_supported(WarpDtField field)
{
	switch (field)
	{
		case WARP_DT_MICROSECONDS:
		case WARP_DT_MILLISECONDS:
		case WARP_DT_SECOND:
		case WARP_DT_MINUTE:
		case WARP_DT_HOUR:
		case WARP_DT_FIELD_COUNT:
			return false;
		default:
			return true;
	}
}

/*
 * extract(field FROM date).  PostgreSQL 14+ returns numeric; every date
 * field is an integer (scale 0).
 */
WARP_FN WarpStatus
warp_date_extract(WarpDtField field, warp_int32 d, WarpNumeric *res)
{
	int			year,
				mon,
				mday;
	warp_int64	v;

	if (!warp_date_is_finite(d))
		return WARP_ERR_NOT_FINITE;
	if (field == WARP_DT_EPOCH)
	{
		*res = warp_numeric_make(((warp_int128) d + WARP_POSTGRES_EPOCH_JDATE -
								  WARP_UNIX_EPOCH_JDATE) * 86400, 0);
		return WARP_OK;
	}
	if (field == WARP_DT_JULIAN)
	{
		*res = warp_numeric_make((warp_int128) d + WARP_POSTGRES_EPOCH_JDATE, 0);
		return WARP_OK;
	}
	warp_j2date(d + WARP_POSTGRES_EPOCH_JDATE, &year, &mon, &mday);
	if (!warp_extract_date_field(field, year, mon, mday, &v))
		return WARP_ERR_NOT_FINITE; /* unsupported field: never built */
	*res = warp_numeric_make(v, 0);
	return WARP_OK;
}

/*
 * Which fields extract(field FROM timestamp) the engine computes.  julian
 * on a timestamp is a fraction with a non-terminating expansion and is
 * left to PostgreSQL.
 */
WARP_FN bool
warp_timestamp_extract_supported(WarpDtField field)
{
	return field != WARP_DT_JULIAN && field < WARP_DT_FIELD_COUNT;
}

/*
 * extract(field FROM timestamp), as numeric: second is scale 6 (seconds
 * with microseconds), milliseconds scale 3, epoch scale 6 (seconds since
 * 1970-01-01 00:00), everything else an integer.
 */
WARP_FN WarpStatus
warp_timestamp_extract(WarpDtField field, warp_int64 ts, WarpNumeric *res)
{
	WarpTm		tm;
	warp_int64	v;

	if (!warp_timestamp_is_finite(ts))
		return WARP_ERR_NOT_FINITE;
	if (field == WARP_DT_EPOCH)
	{
		warp_int128 us = (warp_int128) ts +
			(warp_int128) (WARP_POSTGRES_EPOCH_JDATE - WARP_UNIX_EPOCH_JDATE) *
			WARP_USECS_PER_DAY;

		/*
		 * Where the shift to 1970 overflows int64 (the last ~30 years before
		 * 294277 AD), PostgreSQL divides by 10^6 in numeric instead, whose
		 * division picks 4 fractional digits for a quotient of this size and
		 * rounds half away from zero; the later round to 6 digits only pads.
		 * So the result there is a multiple of 100 microseconds.
		 */
		if (us >= WARP_INT64_MAX)
			us = ((us + 50) / 100) * 100;
		*res = warp_numeric_make(us, 6);
		return WARP_OK;
	}
	if (!warp_timestamp2tm(ts, &tm))
		return WARP_ERR_TIMESTAMP_RANGE;
	switch (field)
	{
		case WARP_DT_MICROSECONDS:
			*res = warp_numeric_make((warp_int64) tm.sec * WARP_USECS_PER_SEC + tm.usec, 0);
			return WARP_OK;
		case WARP_DT_MILLISECONDS:
			*res = warp_numeric_make((warp_int64) tm.sec * WARP_USECS_PER_SEC + tm.usec, 3);
			return WARP_OK;
		case WARP_DT_SECOND:
			*res = warp_numeric_make((warp_int64) tm.sec * WARP_USECS_PER_SEC + tm.usec, 6);
			return WARP_OK;
		case WARP_DT_MINUTE:
			*res = warp_numeric_make(tm.min, 0);
			return WARP_OK;
		case WARP_DT_HOUR:
			*res = warp_numeric_make(tm.hour, 0);
			return WARP_OK;
		default:
			break;
	}
	if (!warp_extract_date_field(field, tm.year, tm.mon, tm.mday, &v))
		return WARP_ERR_NOT_FINITE; /* julian: never built */
	*res = warp_numeric_make(v, 0);
	return WARP_OK;
}

/*
 * Display scale of extract(field FROM a timestamp or date) as PostgreSQL 14+
 * returns it (numeric): second and epoch of a timestamp carry microseconds,
 * milliseconds three decimals, every other field is an integer.
 */
WARP_FN int
warp_dt_extract_scale(WarpDtField field, bool is_timestamp)
{
	if (field == WARP_DT_MILLISECONDS)
		return 3;
	if (field == WARP_DT_SECOND || (field == WARP_DT_EPOCH && is_timestamp))
		return 6;
	return 0;
}

/* ---------- date_trunc ---------- */

WARP_FN bool
warp_timestamp_trunc_supported(WarpDtField field)
{
	return field <= WARP_DT_MILLENNIUM;
}

/*
 * Zero every field of tm finer than field, as timestamp_trunc and
 * timestamptz_trunc_internal do: week truncates to the ISO week's Monday;
 * decade, century and millennium use the same year arithmetic as
 * extract(), which for BC years means e.g. the 1st century BC starts at
 * 100 BC.
 */
WARP_FN WarpStatus
warp_tm_trunc(WarpDtField field, WarpTm *tm)
{
	switch (field)
	{
		case WARP_DT_WEEK:
			{
				int			woy = warp_date2isoweek(tm->year, tm->mon, tm->mday);

				/* the ISO week may belong to the neighbouring year */
				if (woy >= 52 && tm->mon == 1)
					--tm->year;
				if (woy <= 1 && tm->mon == 12)
					++tm->year;
				warp_j2date(warp_isoweek2j(tm->year, woy), &tm->year, &tm->mon, &tm->mday);
				tm->hour = tm->min = tm->sec = 0;
				tm->usec = 0;
				break;
			}
		case WARP_DT_MILLENNIUM:
		case WARP_DT_CENTURY:
		case WARP_DT_DECADE:
		case WARP_DT_YEAR:
		case WARP_DT_QUARTER:
		case WARP_DT_MONTH:
		case WARP_DT_DAY:
		case WARP_DT_HOUR:
		case WARP_DT_MINUTE:
		case WARP_DT_SECOND:
			if (field == WARP_DT_MILLENNIUM)
				tm->year = tm->year > 0 ? ((tm->year + 999) / 1000) * 1000 - 999
					: -((999 - (tm->year - 1)) / 1000) * 1000 + 1;
			else if (field == WARP_DT_CENTURY)
				tm->year = tm->year > 0 ? ((tm->year + 99) / 100) * 100 - 99
					: -((99 - (tm->year - 1)) / 100) * 100 + 1;
			else if (field == WARP_DT_DECADE)
				tm->year = tm->year > 0 ? (tm->year / 10) * 10
					: -((8 - (tm->year - 1)) / 10) * 10;
			if (field >= WARP_DT_YEAR)
				tm->mon = 1;
			if (field >= WARP_DT_QUARTER)
				tm->mon = 3 * ((tm->mon - 1) / 3) + 1;
			if (field >= WARP_DT_MONTH)
				tm->mday = 1;
			if (field >= WARP_DT_DAY)
				tm->hour = 0;
			if (field >= WARP_DT_HOUR)
				tm->min = 0;
			if (field >= WARP_DT_MINUTE)
				tm->sec = 0;
			tm->usec = 0;
			break;
		case WARP_DT_MILLISECONDS:
			tm->usec = (tm->usec / 1000) * 1000;
			break;
		case WARP_DT_MICROSECONDS:
			break;
		default:
			/* not a date_trunc unit: never built */
			return WARP_ERR_NOT_FINITE;
	}
	return WARP_OK;
}

/*
 * date_trunc(field, timestamp) as timestamp_trunc computes it (see
 * warp_tm_trunc).  Infinite timestamps are returned unchanged, as
 * PostgreSQL does.
 */
WARP_FN WarpStatus
warp_timestamp_trunc(WarpDtField field, warp_int64 ts, warp_int64 *res)
{
	WarpTm		tm;
	WarpStatus	st;

	if (!warp_timestamp_is_finite(ts))
	{
		*res = ts;
		return WARP_OK;
	}
	if (!warp_timestamp2tm(ts, &tm))
		return WARP_ERR_TIMESTAMP_RANGE;
	if ((st = warp_tm_trunc(field, &tm)) != WARP_OK)
		return st;
	return warp_tm2timestamp(&tm, res);
}

#endif							/* WARP_OPS_DATETIME_H */
