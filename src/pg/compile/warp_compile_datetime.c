/*
 * warp_compile_datetime.c — date, timestamp and timestamptz expressions
 * compiled into program nodes (warp_ops_datetime.h computes them):
 * extract(), date_part() and date_trunc() with a constant unit, the casts
 * between the three types, comparisons across them, and x +/- interval.
 * Those involving timestamptz read the session's TimeZone, which
 * warp_tz.c gives the engine.  Date arithmetic with integers stays with
 * the other operators (warp_compile.c, compile_operator).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "nodes/nodeFuncs.h"
#include "parser/scansup.h"
#include "pgtime.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/fmgroids.h"
#include "utils/timestamp.h"

#include "compile/warp_compile_internal.h"
#include "warp_ops_datetime.h"

/*
 * Whether the session's TimeZone can be given to the engine (warp_tz.c);
 * marks the program as needing it.  false with why_not otherwise.
 */
static bool
session_zone_ok(WarpBuilder *b)
{
	const char *why;

	if (warp_session_tz(&why) == NULL)
	{
		warp_refuse(b, psprintf("timestamptz in time zone \"%s\" (%s)",
						   pg_get_timezone_name(session_timezone), why));
		return false;
	}
	b->uses_tz = true;
	return true;
}

/*
 * A date/time unit as extract() and date_trunc() decode it (DecodeUnits,
 * then DecodeSpecial, on the downcased text), as a WarpDtField; -1 when
 * the engine has no such field.
 */
int
warp_datetime_field(Const *c)
{
	static const struct
	{
		int			dtk;
		WarpDtField field;
	}			map[] = {
		{DTK_MICROSEC, WARP_DT_MICROSECONDS}, {DTK_MILLISEC, WARP_DT_MILLISECONDS},
		{DTK_SECOND, WARP_DT_SECOND}, {DTK_MINUTE, WARP_DT_MINUTE},
		{DTK_HOUR, WARP_DT_HOUR}, {DTK_DAY, WARP_DT_DAY}, {DTK_WEEK, WARP_DT_WEEK},
		{DTK_MONTH, WARP_DT_MONTH}, {DTK_QUARTER, WARP_DT_QUARTER},
		{DTK_YEAR, WARP_DT_YEAR}, {DTK_DECADE, WARP_DT_DECADE},
		{DTK_CENTURY, WARP_DT_CENTURY}, {DTK_MILLENNIUM, WARP_DT_MILLENNIUM},
		{DTK_DOW, WARP_DT_DOW}, {DTK_ISODOW, WARP_DT_ISODOW}, {DTK_DOY, WARP_DT_DOY},
		{DTK_ISOYEAR, WARP_DT_ISOYEAR}, {DTK_EPOCH, WARP_DT_EPOCH},
		{DTK_JULIAN, WARP_DT_JULIAN}
	};
	text	   *units;
	char	   *low;
	int			type,
				val,
				k;

	if (c->constisnull || c->consttype != TEXTOID)
		return -1;
	units = DatumGetTextPP(c->constvalue);
	low = downcase_truncate_identifier(VARDATA_ANY(units), VARSIZE_ANY_EXHDR(units), false);
	type = DecodeUnits(0, low, &val);
	if (type == UNKNOWN_FIELD)
		type = DecodeSpecial(0, low, &val);
	if (type != UNITS && type != RESERV)
		return -1;
	for (k = 0; k < lengthof(map); k++)
		if (map[k].dtk == val)
			return map[k].field;
	return -1;
}

/* extract(unit FROM date | timestamp | timestamptz) */
bool
warp_is_extract_func(Oid funcid)
{
	return funcid == F_EXTRACT_TEXT_DATE || funcid == F_EXTRACT_TEXT_TIMESTAMP ||
		funcid == F_EXTRACT_TEXT_TIMESTAMPTZ;
}

/* the date/time functions warp_compile_datetime takes (a constant unit first) */
bool
warp_is_datetime_func(Oid funcid)
{
	return warp_is_extract_func(funcid) ||
		funcid == F_DATE_TRUNC_TEXT_TIMESTAMP || funcid == F_DATE_TRUNC_TEXT_TIMESTAMPTZ ||
		funcid == F_DATE_PART_TEXT_TIMESTAMP || funcid == F_DATE_PART_TEXT_TIMESTAMPTZ;
}

/* the conversions warp_compile_datetime_cast takes */
bool
warp_is_datetime_cast(Oid funcid)
{
	return funcid == F_TIMESTAMP_DATE || funcid == F_DATE_TIMESTAMP || funcid == F_TIMESTAMP_TIMESTAMPTZ ||
		funcid == F_DATE_TIMESTAMPTZ || funcid == F_TIMESTAMPTZ_TIMESTAMP ||
		funcid == F_TIMESTAMPTZ_DATE;
}

/*
 * The casts between date, timestamp and timestamptz (date(timestamptz),
 * timestamp(date), ...), those through the session's TimeZone included.
 * -2 when fe is not one of them.
 */
int
warp_compile_datetime_cast(WarpBuilder *b, FuncExpr *fe)
{
	WarpDtCast	kind;
	WarpType	t;
	int			a,
				n;

	switch (fe->funcid)
	{
		case F_TIMESTAMP_DATE:
			kind = WARP_DTC_DATE_TIMESTAMP;
			t = WT_TIMESTAMP;
			break;
		case F_TIMESTAMP_TIMESTAMPTZ:
			kind = WARP_DTC_TIMESTAMPTZ_TIMESTAMP;
			t = WT_TIMESTAMP;
			break;
		case F_DATE_TIMESTAMPTZ:
			kind = WARP_DTC_TIMESTAMPTZ_DATE;
			t = WT_DATE;
			break;
		case F_DATE_TIMESTAMP:
			kind = WARP_DTC_TIMESTAMP_DATE;
			t = WT_DATE;
			break;
		case F_TIMESTAMPTZ_TIMESTAMP:
			kind = WARP_DTC_TIMESTAMP_TIMESTAMPTZ;
			t = WT_TIMESTAMP;
			break;
		case F_TIMESTAMPTZ_DATE:
			kind = WARP_DTC_DATE_TIMESTAMPTZ;
			t = WT_TIMESTAMP;
			break;
		default:
			return -2;
	}
	if (list_length(fe->args) != 1)
		return warp_refuse(b, "date/time conversion with more than one argument");
	if (kind != WARP_DTC_DATE_TIMESTAMP && kind != WARP_DTC_TIMESTAMP_DATE && !session_zone_ok(b))
		return -1;
	if ((a = warp_compile_expr(b, linitial(fe->args))) < 0)
		return -1;
	n = warp_add_node(b, WN_DATETIME, t);
	b->nodes[n].a = a;
	b->nodes[n].sub = (uint8) kind;
	b->nodes[n].flags = WARP_DT_CAST;
	return n;
}

/*
 * date_trunc(unit, timestamp), date_part(unit, timestamp) and
 * extract(unit FROM date | timestamp) with a constant unit the engine
 * computes exactly as PostgreSQL does (warp_ops_datetime.h).  extract()
 * returns numeric, which the engine holds as its unscaled integer: only
 * at the root of a group key (warp_compile_group_key), whose value goes
 * back to PostgreSQL as that numeric.  The timestamptz variants read the
 * value in the session's TimeZone (warp_ops_tz.h).
 */
int
warp_compile_datetime(WarpBuilder *b, FuncExpr *fe)
{
	Expr	   *unit = linitial(fe->args);
	Expr	   *arg = lsecond(fe->args);
	Oid			argtype = exprType((Node *) arg);
	bool		is_ts = argtype == TIMESTAMPOID || argtype == TIMESTAMPTZOID;
	int			field,
				a,
				n,
				flags;
	WarpType	t;

	if (list_length(fe->args) != 2)
		return warp_refuse(b, "date/time function with a time zone argument");
	if (!IsA(unit, Const) || (field = warp_datetime_field((Const *) unit)) < 0)
		return warp_refuse(b, "date/time unit that is not a constant the engine knows");
	if (argtype == TIMESTAMPTZOID && !session_zone_ok(b))
		return -1;
	switch (fe->funcid)
	{
		case F_DATE_TRUNC_TEXT_TIMESTAMP:
		case F_DATE_TRUNC_TEXT_TIMESTAMPTZ:
			if (!warp_timestamp_trunc_supported(field))
				return warp_refuse(b, "date_trunc unit");
			flags = WARP_DT_TRUNC;
			t = WT_TIMESTAMP;
			break;
		case F_DATE_PART_TEXT_TIMESTAMP:
		case F_DATE_PART_TEXT_TIMESTAMPTZ:
			if (!warp_timestamp_extract_supported(field))
				return warp_refuse(b, "date_part unit");
			flags = WARP_DT_PART;
			t = WT_FLOAT8;
			break;
		default:				/* extract */
			if (is_ts ? !warp_timestamp_extract_supported(field) :
				!warp_date_extract_supported(field))
				return warp_refuse(b, "extract unit");
			flags = WARP_DT_EXTRACT;
			/* a group key: its unscaled int8; anywhere else a numeric node */
			t = (b->numeric_root && b->depth == 1) ? WT_INT8 : WT_NUMERIC;
			break;
	}
	if ((a = warp_compile_expr(b, arg)) < 0)
		return -1;
	if (argtype == TIMESTAMPTZOID)
		flags |= WARP_DT_TZ;
	n = warp_add_node(b, WN_DATETIME, t);
	b->nodes[n].a = a;
	b->nodes[n].sub = (uint8) field;
	b->nodes[n].flags = (uint8) flags;
	if (t == WT_NUMERIC)
		b->nodes[n].scale = (uint8) warp_dt_extract_scale((WarpDtField) field, is_ts);
	return n;
}

/*
 * A comparison between date, timestamp and timestamptz of different types
 * (date_lt_timestamptz, timestamp_cmp_timestamptz, ...): the lower type is
 * converted to the higher one -- through the session's TimeZone where
 * timestamptz is involved -- and a result beyond the finite timestamps
 * saturates, as PostgreSQL's *_opt_overflow conversions make these
 * comparisons do instead of failing.  k: index into =, <>, <, <=, >, >=.
 */
int
warp_compile_datetime_cross_cmp(WarpBuilder *b, int k, bool distinct, Expr *l, Expr *r)
{
	int			rl = datetime_rank(exprType((Node *) l)),
				rr = datetime_rank(exprType((Node *) r));
	int			hi = Max(rl, rr);
	int			a,
				c,
				n;
	WarpDtCast	kind;

	if (distinct && k != 0)
		return warp_refuse(b, "IS DISTINCT FROM with a non-equality operator");
	kind = Min(rl, rr) == 0 ? (hi == 1 ? WARP_DTC_DATE_TIMESTAMP : WARP_DTC_DATE_TIMESTAMPTZ)
		: WARP_DTC_TIMESTAMP_TIMESTAMPTZ;
	if (hi == 2 && !session_zone_ok(b))
		return -1;
	if ((a = warp_compile_expr(b, l)) < 0 || (c = warp_compile_expr(b, r)) < 0)
		return -1;
	n = warp_add_node(b, WN_DATETIME, WT_TIMESTAMP);
	b->nodes[n].a = rl < rr ? a : c;
	b->nodes[n].sub = (uint8) kind;
	b->nodes[n].flags = WARP_DT_CAST | WARP_DT_SATURATE;
	if (rl < rr)
		a = n;
	else
		c = n;
	n = warp_add_node(b, distinct ? WN_DISTINCT : WN_CMP, WT_BOOL);
	b->nodes[n].sub = distinct ? 0 : (uint8) k;
	b->nodes[n].a = a;
	b->nodes[n].b = c;
	return n;
}

/*
 * x + interval and x - interval, x a date, timestamp or timestamptz, the
 * interval a constant or an external parameter (its value taken when the
 * program is built at executor start): one WARP_DT_ARITH node holding the
 * interval (warp_ops_tz.h has PostgreSQL 15's timestamp_pl_interval; a
 * timestamptz goes through the session's zone, a date through midnight).
 * Subtraction adds the interval with each field negated, wrapping, as
 * timestamp_mi_interval does.  A NULL interval makes every row NULL.
 */
int
warp_compile_interval_arith(WarpBuilder *b, Oid ltype, bool minus, Expr *l, Expr *r)
{
	Interval	iv;
	bool		isnull = false;
	int			a,
				n;

	memset(&iv, 0, sizeof(iv));
	while (IsA(r, RelabelType))
		r = ((RelabelType *) r)->arg;
	if (IsA(r, Const))
	{
		isnull = ((Const *) r)->constisnull;
		if (!isnull)
			iv = *DatumGetIntervalP(((Const *) r)->constvalue);
	}
	else if (IsA(r, Param) && ((Param *) r)->paramkind == PARAM_EXTERN)
	{
		/* at plan time (no econtext) only the shape matters */
		if (b->econtext)
		{
			ExprState  *es = ExecInitExpr(r, NULL);
			Datum		v = ExecEvalExprSwitchContext(es, b->econtext, &isnull);

			if (!isnull)
				iv = *DatumGetIntervalP(v);
		}
	}
	else
		return warp_refuse(b, "interval arithmetic with an interval that is not a constant");
	if (isnull)
		return warp_const_node(b, TIMESTAMPOID, (Datum) 0, true);
	if (ltype == TIMESTAMPTZOID && !session_zone_ok(b))
		return -1;
	if ((a = warp_compile_expr(b, l)) < 0)
		return -1;
	if (minus)
	{
		iv.month = (int32) (0U - (uint32) iv.month);
		iv.day = (int32) (0U - (uint32) iv.day);
		iv.time = (int64) (UINT64CONST(0) - (uint64) iv.time);
	}
	n = warp_add_node(b, WN_DATETIME, WT_TIMESTAMP);
	b->nodes[n].a = a;
	b->nodes[n].b = a;
	b->nodes[n].sub = (uint8) (ltype == DATEOID ? WARP_DTA_DATE_PL_INTERVAL :
							   ltype == TIMESTAMPTZOID ? WARP_DTA_TSTZ_PL_INTERVAL :
							   WARP_DTA_TS_PL_INTERVAL);
	b->nodes[n].flags = WARP_DT_ARITH;
	warp_node_set_interval(&b->nodes[n], iv.month, iv.day, iv.time);
	return n;
}
