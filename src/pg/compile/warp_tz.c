/*-------------------------------------------------------------------------
 *
 * warp_tz.c
 *	  The session's TimeZone as the engine's transition table (WarpTz).
 *
 * The engine converts timestamptz values with PostgreSQL's rules (see
 * src/engine/warp_ops_tz.h) but cannot call pg_localtime() or
 * pg_next_dst_boundary(); this file asks them instead, once per zone and
 * backend: every transition from 4714 BC on, through two 400-year cycles
 * past 2800 (PostgreSQL's zone tables end earlier; after them it
 * extrapolates by whole cycles).
 * Before the table is used it is checked: the two cycles must repeat, and
 * the engine's lookups must agree with PostgreSQL's own functions at
 * sample instants across the whole timestamp range.  A zone that fails is
 * left to PostgreSQL (the planner does not offload what needs it).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "datatype/timestamp.h"
#include "pgtime.h"
#include "utils/datetime.h"
#include "utils/memutils.h"

#include "warp.h"

static pg_tz *cached_zone = NULL;
static WarpTz cached_tz;
static const char *cached_why = NULL;

/* pg_time_t of a date's midnight UTC */
static pg_time_t
date_secs(int y, int m, int d)
{
	return (pg_time_t) (date2j(y, m, d) - UNIX_EPOCH_JDATE) * SECS_PER_DAY;
}

/* whether the engine's lookups agree with PostgreSQL's at instant t */
static bool
agrees_at(const WarpTz *tz, pg_tz *zone, pg_time_t t)
{
	struct pg_tm *tm = pg_localtime(&t, zone);
	long int	before,
				after;
	int			bisdst,
				aisdst,
				res;
	pg_time_t	boundary = 0;
	warp_int32	wbefore = 0,
				wafter = 0;
	warp_int64	wboundary = 0;

	if (tm == NULL || tm->tm_gmtoff != warp_tz_offset(tz, t))
		return false;
	res = pg_next_dst_boundary(&t, &before, &bisdst, &boundary, &after, &aisdst, zone);
	if (res != warp_tz_next_boundary(tz, t, &wbefore, &wboundary, &wafter) ||
		before != wbefore)
		return false;
	return res == 0 || (boundary == wboundary && after == wafter);
}

/*
 * Tabulate zone into *tz (arrays in TopMemoryContext); NULL, or why the
 * engine cannot use it.
 */
static const char *
build_zone(pg_tz *zone, WarpTz *tz)
{
	const pg_time_t start = (pg_time_t) (0 - UNIX_EPOCH_JDATE) * SECS_PER_DAY - 2 * SECS_PER_DAY;
	pg_time_t	cycle_start = date_secs(2800, 1, 1);
	pg_time_t	end = cycle_start + 2 * WARP_TZ_CYCLE_SECS;
	pg_time_t	t = start,
				boundary = 0;
	long int	before,
				after;
	int			bisdst,
				aisdst,
				res,
				cap = 256,
				n = 0,
				i,
				first,
				second;
	warp_int64 *at;
	warp_int32 *off;
	struct pg_tm *tm;
	static const int years[] = {
		-4712, -3000, -1000, -1, 1, 500, 1000, 1500, 1700, 1850, 1883, 1900,
		1916, 1920, 1940, 1945, 1950, 1970, 1980, 1990, 2000, 2007, 2010,
		2011, 2014, 2020, 2024, 2030, 2037, 2038, 2050, 2087, 2100, 2200,
		2399, 2400, 2401, 2799, 2800, 2801, 3000, 3199, 3200, 3201, 3599,
		3600, 3601, 4000, 5000,
		10000, 100000, 200000, 294276
	};

	memset(tz, 0, sizeof(*tz));
	tz->at = at = MemoryContextAlloc(TopMemoryContext, sizeof(warp_int64) * cap);
	tz->off = off = MemoryContextAlloc(TopMemoryContext, sizeof(warp_int32) * cap);
	tz->cycle_start = cycle_start;
	tm = pg_localtime(&t, zone);
	if (tm == NULL)
		return "pg_localtime failed";
	tz->off0_local = (warp_int32) tm->tm_gmtoff;
	res = pg_next_dst_boundary(&t, &before, &bisdst, &boundary, &after, &aisdst, zone);
	tz->off0_next = (warp_int32) before;
	while (res == 1 && boundary < end)
	{
		if (n > 0 && boundary <= at[n - 1])
			return "its transitions are not ascending";
		if (n == WARP_TZ_MAX_TRANSITIONS)
			return "it has too many transitions";
		if (n == cap)
		{
			cap *= 2;
			tz->at = at = repalloc(at, sizeof(warp_int64) * cap);
			tz->off = off = repalloc(off, sizeof(warp_int32) * cap);
		}
		at[n] = boundary;
		off[n] = (warp_int32) after;
		n++;
		t = boundary;
		res = pg_next_dst_boundary(&t, &before, &bisdst, &boundary, &after, &aisdst, zone);
		if (res == 0)
		{
			/*
			 * From exactly the last transition of its table PostgreSQL reports
			 * none, though it extrapolates later ones: ask a second later.
			 */
			t++;
			res = pg_next_dst_boundary(&t, &before, &bisdst, &boundary, &after, &aisdst, zone);
		}
	}
	if (res < 0)
		return "pg_next_dst_boundary failed";
	tz->n = n;
	if (!warp_tz_valid(tz))
		return "its offsets are a day or more";

	/* the two cycles after cycle_start must repeat each other */
	first = 0;
	while (first < n && at[first] < cycle_start)
		first++;
	second = first;
	while (second < n && at[second] < cycle_start + WARP_TZ_CYCLE_SECS)
		second++;
	if (n - second != second - first ||
		warp_tz_offset(tz, cycle_start) != warp_tz_offset(tz, cycle_start + WARP_TZ_CYCLE_SECS))
		return "its transitions do not repeat every 400 years";
	for (i = first; i < second; i++)
		if (at[i] + WARP_TZ_CYCLE_SECS != at[i - first + second] ||
			off[i] != off[i - first + second])
			return "its transitions do not repeat every 400 years";

	/* and agree with PostgreSQL's own functions, near and far */
	for (i = 0; i < lengthof(years); i++)
	{
		pg_time_t	y = date_secs(years[i], 1, 1);
		int			k;

		for (k = 0; k < 4; k++)
			if (!agrees_at(tz, zone, y + (pg_time_t) k * 7945301))	/* ~92 days */
				return "the engine's table disagrees with PostgreSQL's time zone code";
	}
	for (i = 0; i < n; i += Max(1, n / 64))
	{
		pg_time_t	a = at[i];

		/*
		 * At a transition itself only the offset: PostgreSQL reports no next
		 * boundary from exactly its table's last transition even where it
		 * extrapolates later ones (harmless: the next is months away).
		 */
		if (!agrees_at(tz, zone, a - 1))
			return "the engine's table disagrees with PostgreSQL's time zone code";
		tm = pg_localtime(&a, zone);	/* static: after agrees_at's */
		if (tm == NULL || tm->tm_gmtoff != warp_tz_offset(tz, a))
			return "the engine's table disagrees with PostgreSQL's time zone code";
	}
	return NULL;
}

/*
 * The session's TimeZone as a WarpTz (cached per zone; the arrays live as
 * long as the backend), or NULL with *why when the engine cannot use it.
 */
const WarpTz *
warp_session_tz(const char **why)
{
	if (session_timezone == NULL)
	{
		*why = "no session time zone";
		return NULL;
	}
	if (session_timezone != cached_zone)
	{
		if (cached_tz.at)
			pfree((void *) cached_tz.at);
		if (cached_tz.off)
			pfree((void *) cached_tz.off);
		memset(&cached_tz, 0, sizeof(cached_tz));
		cached_why = build_zone(session_timezone, &cached_tz);
		if (cached_why)
		{
			if (cached_tz.at)
				pfree((void *) cached_tz.at);
			if (cached_tz.off)
				pfree((void *) cached_tz.off);
			memset(&cached_tz, 0, sizeof(cached_tz));
		}
		cached_zone = session_timezone;
	}
	*why = cached_why;
	return cached_why ? NULL : &cached_tz;
}

/* a copy of the session's zone table into p (current memory context) */
void
warp_program_set_tz(WarpProgram *p)
{
	const char *why;
	const WarpTz *tz = warp_session_tz(&why);
	warp_int64 *at;
	warp_int32 *off;

	if (tz == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("pg_warp cannot use time zone \"%s\": %s",
						pg_get_timezone_name(session_timezone), why),
				 errhint("The plan was made under another TimeZone; plan the query again, or set pg_warp.enabled = off.")));
	p->tz = *tz;
	at = palloc(sizeof(warp_int64) * Max(tz->n, 1));
	off = palloc(sizeof(warp_int32) * Max(tz->n, 1));
	if (tz->n > 0)
	{
		memcpy(at, tz->at, sizeof(warp_int64) * tz->n);
		memcpy(off, tz->off, sizeof(warp_int32) * tz->n);
	}
	p->tz.at = at;
	p->tz.off = off;
}
