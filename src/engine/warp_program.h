/*-------------------------------------------------------------------------
 *
 * warp_program.h
 *	  The engine's program format: what a backend hands to a driver.
 *
 * A program is a plan fragment over one fact table's record batches:
 *
 *   load columns -> filter (quals, in PostgreSQL's order) -> probe every
 *   dimension hash table -> group keys -> partial aggregates
 *
 * Expressions are a flat array of nodes; a node names its arguments by
 * index into a separate argument array, so the whole program is a handful of
 * plain arrays that can be copied to a daemon or a GPU unchanged.  Values
 * travel in two physical kinds: every integer-like type (bool, int2, int4,
 * int8, date, timestamp, timestamptz) as int64 in PostgreSQL's own value
 * domain (date = days since 2000-01-01, timestamp = microseconds since
 * 2000-01-01), every floating type as double, numeric (WT_NUMERIC) as a
 * 128-bit unscaled integer at the node's fixed display scale.  A node's
 * type says which PostgreSQL semantics apply (int4 + int4 overflows at
 * 2^31, float4 + float4 rounds to float).
 *
 * Numeric nodes (CPU driver only): a numeric(p <= 18, s) column read as
 * WT_NUMERIC (scale s), a constant (.ival unscaled, .scale), an integer
 * cast to numeric (scale 0), + - * and unary minus with PostgreSQL's
 * display scales (max of the two for + and -, their sum for *), and
 * comparisons of two numeric nodes (scale-insensitive, like numeric_cmp).
 * The program builder only builds expressions whose every value provably
 * fits 38 digits (from the columns' declared precisions), so the engine's
 * arithmetic is exact where PostgreSQL's is; the driver still checks.
 *
 * Pure C; no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_PROGRAM_H
#define WARP_PROGRAM_H

#include "warp_defs.h"
#include "warp_ops_tz.h"

/* version of this format; bump when a struct or an enum changes */
#define WARP_PROGRAM_VERSION 9

typedef enum WarpType
{
	WT_BOOL,
	WT_INT2,
	WT_INT4,
	WT_INT8,
	WT_DATE,
	WT_TIMESTAMP,				/* with or without time zone: same values */
	WT_FLOAT4,
	WT_FLOAT8,
	WT_NUMERIC					/* 128-bit fixed point at the node's .scale */
} WarpType;

/* values of this type travel as double */
#define WARP_TYPE_IS_FLOAT(t) ((t) == WT_FLOAT4 || (t) == WT_FLOAT8)

typedef enum WarpOp
{
	WN_COL,						/* column .a of the fact program */
	WN_CONST,					/* .ival / .fval, or NULL if .flags & NULL */
	WN_ARITH,					/* .sub = WARP_ARITH_*, args a, b; .type is
								 * the result type and the operator's width */
	WN_NEG,						/* unary minus of a */
	WN_CMP,						/* .sub = WARP_CMP_*, args a, b; compared as
								 * int64 or as double by a's type */
	WN_AND,						/* n-ary, args[args_off .. +nargs) */
	WN_OR,						/* n-ary */
	WN_NOT,						/* a */
	WN_IS_NULL,					/* a IS NULL (never NULL itself) */
	WN_IS_NOT_NULL,
	WN_CAST,					/* a converted to .type with PostgreSQL's
								 * cast semantics (range checks, rounding) */
	WN_DISTINCT,				/* a IS DISTINCT FROM b (.sub = 1: NOT) */
	WN_CASE,					/* args: when1, then1, ..., [else]; .flags &
								 * WARP_CASE_HAS_ELSE */
	WN_COALESCE,				/* n-ary: first non-NULL */
	WN_NULLIF,					/* NULLIF(a, b): NULL when a = b */
	WN_IN_SET,					/* a = ANY (set): a's int64 value (an integer,
								 * date, timestamp or a WARP_TEXT_EQ column's
								 * string index) among setvals[args_off ..
								 * +nargs), sorted and distinct; .flags
								 * WARP_IN_NOT: a <> ALL (set) instead, and
								 * WARP_IN_HAS_NULL: the list had a NULL (no
								 * match is then NULL, as PostgreSQL's) */
	WN_DATETIME					/* a date or timestamp a, .sub = WarpDtField
								 * (< WARP_DT_FIELD_COUNT), .flags one of:
								 * WARP_DT_TRUNC: date_trunc(field, a), a
								 * timestamp; WARP_DT_EXTRACT: extract(field
								 * FROM a), numeric as its unscaled int8 at
								 * warp_dt_extract_scale() in
								 * warp_ops_datetime.h; WARP_DT_PART:
								 * date_part(field, a), float8; with
								 * WARP_DT_TZ a is a timestamptz, read in
								 * the program's zone (.tz).  WARP_DT_CAST:
								 * .sub = WarpDtCast, a conversion */
} WarpOp;

#define WARP_IN_NOT			0x01
#define WARP_IN_HAS_NULL	0x02

#define WARP_DT_TRUNC		0x02
#define WARP_DT_EXTRACT		0x04
#define WARP_DT_PART		0x08
#define WARP_DT_TZ			0x10
#define WARP_DT_CAST		0x20
/* with WARP_DT_CAST from date or timestamp to timestamp(tz): a result
 * beyond the finite range saturates (warp_ops_datetime.h) instead of
 * failing; only under a cross-type comparison, as PostgreSQL does */
#define WARP_DT_SATURATE	0x40
/* .sub = WarpDtArith: date arithmetic on a and b */
#define WARP_DT_ARITH		0x80

typedef enum WarpDtArith
{
	WARP_DTA_DATE_PLI,			/* date + int4 -> date (date_pli; PostgreSQL
								 * inlines int4 + date as this) */
	WARP_DTA_DATE_MII,			/* date - int4 -> date (date_mii) */
	WARP_DTA_DATE_MI,			/* date - date -> int4 (date_mi) */
	/*
	 * a + a constant interval (the node's, warp_node_interval; b is a):
	 * timestamp -> timestamp, timestamptz -> timestamptz in the program's
	 * zone, date -> timestamp.  a - interval is a + the interval with each
	 * field negated (as timestamp_mi_interval does, wrapping).
	 */
	WARP_DTA_TS_PL_INTERVAL,
	WARP_DTA_TSTZ_PL_INTERVAL,
	WARP_DTA_DATE_PL_INTERVAL,
	WARP_DTA_COUNT
} WarpDtArith;

#define WARP_DTA_IS_INTERVAL(k) ((k) >= WARP_DTA_TS_PL_INTERVAL && (k) < WARP_DTA_COUNT)

/* date arithmetic on two operands (the kinds before the interval ones) */
WARP_FN WarpStatus
warp_date_arith(WarpDtArith kind, warp_int64 a, warp_int64 b, warp_int64 *res)
{
	warp_int32	r = 0;
	WarpStatus	st;

	switch (kind)
	{
		case WARP_DTA_DATE_PLI:
			st = warp_date_pli((warp_int32) a, (warp_int32) b, &r);
			break;
		case WARP_DTA_DATE_MII:
			st = warp_date_mii((warp_int32) a, (warp_int32) b, &r);
			break;
		default:
			st = warp_date_mi((warp_int32) a, (warp_int32) b, &r);
			break;
	}
	*res = r;
	return st;
}

/* WN_DATETIME conversions (.flags WARP_DT_CAST): argument -> result type */
typedef enum WarpDtCast
{
	WARP_DTC_DATE_TIMESTAMP,	/* date -> timestamp */
	WARP_DTC_TIMESTAMPTZ_TIMESTAMP, /* timestamptz -> timestamp (zone) */
	WARP_DTC_TIMESTAMPTZ_DATE,	/* timestamptz -> date (zone) */
	WARP_DTC_TIMESTAMP_TIMESTAMPTZ, /* timestamp -> timestamptz (zone) */
	WARP_DTC_DATE_TIMESTAMPTZ,	/* date -> timestamptz (zone) */
	WARP_DTC_TIMESTAMP_DATE,	/* timestamp -> date */
	WARP_DTC_COUNT
} WarpDtCast;

enum
{
	WARP_ARITH_ADD,
	WARP_ARITH_SUB,
	WARP_ARITH_MUL,
	WARP_ARITH_DIV,
	WARP_ARITH_MOD
};

enum
{
	WARP_CMP_EQ,
	WARP_CMP_NE,
	WARP_CMP_LT,
	WARP_CMP_LE,
	WARP_CMP_GT,
	WARP_CMP_GE
};

#define WARP_NODE_NULL		0x01	/* WN_CONST: the SQL NULL */
#define WARP_NODE_WIDE		0x04	/* WN_CONST, WT_NUMERIC: the unscaled value
									 * is ival_hi:ival (128 bits), not ival */
#define WARP_CASE_HAS_ELSE	0x02

typedef struct WarpNode
{
	warp_uint8	op;				/* WarpOp */
	warp_uint8	type;			/* WarpType of the result */
	warp_uint8	sub;			/* operator variant */
	warp_uint8	flags;
	warp_uint8	scale;			/* WT_NUMERIC: display scale (0 .. 38) */
	warp_uint8	pad[3];
	warp_int32	a;				/* first argument (node index) or column */
	warp_int32	b;				/* second argument */
	warp_int32	nargs;			/* n-ary nodes: count ... */
	warp_int32	args_off;		/* ... and offset into WarpProgram.args */
	warp_int64	ival;			/* WN_CONST, integer-like */
	double		fval;			/* WN_CONST, floating */
	warp_int64	ival_hi;		/* WN_CONST with WARP_NODE_WIDE */
} WarpNode;

/* a WT_NUMERIC constant's unscaled value */
WARP_FN warp_int128
warp_node_numeric_const(const WarpNode *nd)
{
	if (nd->flags & WARP_NODE_WIDE)
		return (warp_int128) (((warp_uint128) (warp_uint64) nd->ival_hi << 64) |
							  (warp_uint64) nd->ival);
	return nd->ival;
}

/* an interval constant in a WARP_DT_ARITH node: ival the microseconds,
 * ival_hi the months (high half) and days (low half) */
WARP_FN void
warp_node_set_interval(WarpNode *nd, warp_int32 month, warp_int32 day, warp_int64 time)
{
	nd->ival = time;
	nd->ival_hi = (warp_int64) (((warp_uint64) (warp_uint32) month << 32) | (warp_uint32) day);
}

WARP_FN void
warp_node_interval(const WarpNode *nd, warp_int32 *month, warp_int32 *day, warp_int64 *time)
{
	*month = (warp_int32) (warp_uint32) ((warp_uint64) nd->ival_hi >> 32);
	*day = (warp_int32) (warp_uint32) (warp_uint64) nd->ival_hi;
	*time = nd->ival;
}

/*
 * A WARP_DT_ARITH node's value (both drivers): from its operands a and b,
 * or for an interval kind from a and the node's interval, in zone tz for a
 * timestamptz.
 */
WARP_FN WarpStatus
warp_dt_arith(const WarpTz *tz, const WarpNode *nd, warp_int64 a, warp_int64 b, warp_int64 *res)
{
	warp_int32	month,
				day;
	warp_int64	time,
				ts = a;
	WarpStatus	st;

	if (!WARP_DTA_IS_INTERVAL(nd->sub))
		return warp_date_arith((WarpDtArith) nd->sub, a, b, res);
	warp_node_interval(nd, &month, &day, &time);
	if (nd->sub == WARP_DTA_DATE_PL_INTERVAL &&
		(st = warp_date_to_timestamp((warp_int32) a, &ts)) != WARP_OK)
		return st;
	return warp_timestamp_pl_interval(nd->sub == WARP_DTA_TSTZ_PL_INTERVAL ? tz : NULL,
									  ts, month, day, time, res);
}

/* How a column's Arrow values become engine values (see warp_load.c). */
typedef struct WarpColumnSpec
{
	warp_uint8	type;			/* WarpType the column is declared as */
	/*
	 * decimal = 1: a numeric(p <= 18, s) column, type WT_INT8, whose values
	 * are the unscaled integers value * 10^scale (Decimal128 of that scale,
	 * or integers scaled up).  Aggregates read it as WT_INT8 (sum, avg,
	 * min, max, count), numeric expressions as a WT_NUMERIC WN_COL node.
	 * precision (1 .. 18, or 0: unchecked): values of more digits, which a
	 * file may hold beyond its declared precision, cannot be read as
	 * declared (numeric expressions' bounds rest on it).
	 *
	 * decimal = WARP_DECIMAL_WIDE: a numeric(19 <= p <= 38, s) column, type
	 * WT_NUMERIC, read only as a WT_NUMERIC WN_COL node (its 128-bit
	 * unscaled values; precision always checked).
	 */
	warp_uint8	decimal;
	warp_uint8	scale;
	warp_uint8	precision;
	/*
	 * native = 1: the column arrives as engine values, not as Arrow data:
	 * an array of int64 (integer-like types, in PostgreSQL's own domain,
	 * infinite dates and timestamps included) or of double (float types)
	 * with an optional validity bitmap.  A heap fact table's columns come
	 * so from the backend, which deforms its tuples (warp_exec.c).
	 */
	warp_uint8	native;
	/*
	 * text = WARP_TEXT_EQ: a text column (Utf8, LargeUtf8 or a dictionary of
	 * them), type WT_INT8, whose value is which of the program's strings
	 * [str_first, str_first + str_count) it equals byte for byte (0 ..
	 * str_count - 1), or -1 for none: enough for = and <> against constants
	 * under a deterministic collation, which is all the builder lets it do.
	 *
	 * text = WARP_TEXT_LIKE: such a column read as WT_BOOL, whether the row
	 * matches the LIKE pattern strings[str_first] (str_count = 1; UTF-8,
	 * default escape, warp_text_like; a pattern ending in an unpaired escape
	 * is invalid).  One program column per attribute and pattern.
	 *
	 * text = WARP_TEXT_CMP: such a column read as WT_BOOL, whether the row
	 * compares to strings[str_first] (str_count = 1) as .cmp (WARP_CMP_LT,
	 * LE, GT, GE) says in byte order -- text ordering under the C
	 * collation (varstr_cmp: memcmp, then the shorter first).
	 *
	 * text = WARP_TEXT_KEY: such a column read as WT_INT8, an id of the
	 * row's string among the distinct strings the driver has met (byte
	 * equality, as under a deterministic collation): a group key, whose
	 * strings the driver gives back with its groups (str_count = 0).
	 */
	warp_uint8	text;
	warp_uint8	cmp;			/* WARP_TEXT_CMP: the comparison */
	/*
	 * bpchar = 1: a character(n) column (text EQ, CMP or KEY): its values
	 * are matched, compared and interned without their trailing blanks
	 * (warp_bpchar_len), as bpchar's operators do; the program's strings
	 * for it carry none.  LIKE columns never have it (bpcharlike matches
	 * the padded value).
	 */
	warp_uint8	bpchar;
	warp_int32	field;			/* field index in the file; set per file */
	warp_int32	str_first;
	warp_int32	str_count;
} WarpColumnSpec;

#define WARP_DECIMAL_WIDE 2

#define WARP_TEXT_EQ	1
#define WARP_TEXT_LIKE	2
#define WARP_TEXT_KEY	3
#define WARP_TEXT_CMP	4

/* A text constant: bytes [off, off + len) of WarpProgram.strbytes. */
typedef struct WarpString
{
	warp_int32	off;
	warp_int32	len;
} WarpString;

/* A dimension the fact rows are probed against (inner equi-join). */
/*
 * How a fact row meets a dimension (every join is between the fact table
 * and one dimension, so the joins are independent and commute):
 *   INNER: one joined row per matching build row; no match drops the row
 *   LEFT:  as INNER, but no match (a NULL key included) gives one joined
 *          row whose dimension side is NULL: payload id npayloads
 *   SEMI:  the row is kept once if a build row matches, else dropped
 *   ANTI:  the row is kept if no build row matches (a NULL key never does)
 */
typedef enum WarpJoinKind
{
	WARP_JOIN_INNER,
	WARP_JOIN_LEFT,
	WARP_JOIN_SEMI,
	WARP_JOIN_ANTI
} WarpJoinKind;

#define WARP_JOIN_KIND_COUNT 4

typedef struct WarpJoinSpec
{
	warp_int32	key_node;		/* fact-side key expression (integer-like) */
	warp_int32	table;			/* index of the built hash table */
	warp_int32	kind;			/* WarpJoinKind */
} WarpJoinSpec;

typedef enum WarpGroupKeyKind
{
	WG_FACT,					/* the value of a fact expression */
	WG_DIM						/* the payload id of a dimension's row */
} WarpGroupKeyKind;

typedef struct WarpGroupKey
{
	warp_uint8	kind;			/* WarpGroupKeyKind */
	warp_int32	node;			/* WG_FACT: expression */
	warp_int32	join;			/* WG_DIM: index into joins */
} WarpGroupKey;

/*
 * Partial aggregates.  Each produces the transition state PostgreSQL's
 * combine function for that aggregate expects (see warp_agg.h).
 */
typedef enum WarpAggKind
{
	WA_COUNT_STAR,				/* count(*): int8 */
	WA_COUNT,					/* count(x): int8, non-NULL inputs */
	WA_SUM_INT,					/* sum(int2|int4): int8, NULL if no input */
	WA_AVG_INT,					/* avg(int2|int4): int8[2] {count, sum} */
	WA_MIN,						/* min(x): x's type, NULL if no input */
	WA_MAX,
	WA_SUM_FLOAT,				/* sum(float4|float8): arg's type */
	WA_AVG_FLOAT,				/* avg(float4|float8): float8[3] {N, Sx, Sxx}
								 * (Youngs-Cramer, like float8_accum) */
	WA_SUM_INT8,				/* sum/avg(int8): count and 128-bit sum, sent
								 * as int8_avg_serialize's bytea */
	WA_SUM_NUMERIC				/* sum/avg of a numeric (WT_NUMERIC)
								 * expression: count and 192-bit sum, sent as
								 * numeric_avg_serialize's bytea */
} WarpAggKind;

typedef struct WarpAggSpec
{
	warp_uint8	kind;			/* WarpAggKind */
	warp_uint8	type;			/* WarpType of the argument */
	warp_int32	arg;			/* argument node, -1 for count(*) */
	warp_int32	filter;			/* FILTER (WHERE ...) node, or -1 */
} WarpAggSpec;

typedef struct WarpProgram
{
	warp_int32	version;
	warp_int32	ncols;
	WarpColumnSpec *cols;
	warp_int32	nnodes;
	WarpNode   *nodes;
	warp_int32	nargs;
	warp_int32 *args;
	warp_int32	nquals;			/* ANDed, evaluated in this order */
	warp_int32 *quals;
	warp_int32	njoins;
	WarpJoinSpec *joins;
	warp_int32	nkeys;
	WarpGroupKey *keys;
	warp_int32	naggs;
	WarpAggSpec *aggs;
	warp_int32	nstrings;		/* text constants (WarpColumnSpec.text) */
	WarpString *strings;
	warp_int32	nstrbytes;
	warp_uint8 *strbytes;
	warp_int32	nsetvals;		/* WN_IN_SET members */
	warp_int64 *setvals;
	WarpTz		tz;				/* the session's TimeZone (WARP_DT_TZ and
								 * the zone casts); n = 0 and zero offsets
								 * when unused */
	/*
	 * Row mode (no aggregates): every joined row becomes a "group" of its
	 * own, its keys the output columns, appended without any lookup, so
	 * duplicates stay duplicates (WarpJoin: a star join without
	 * aggregation).  The CPU driver only; warp_cpu_reset_groups empties
	 * the table between batches.
	 */
	warp_int32	emit_rows;

	/*
	 * Row mode under ORDER BY ... LIMIT (0: off): the caller keeps the best
	 * topn_limit rows by PostgreSQL's ordering; the driver drops a row
	 * whose first ORDER BY column, group key topn_key (a fact key, not
	 * text), sorts after the topn_limit-th best value among the rows it has
	 * kept, since at least topn_limit rows come before it.  topn_desc and
	 * topn_nulls_first as in the ORDER BY item; floats order NaN last,
	 * -0 = 0, as PostgreSQL's float comparisons.
	 */
	warp_int64	topn_limit;
	warp_int32	topn_key;
	warp_int32	topn_desc;
	warp_int32	topn_nulls_first;
} WarpProgram;

/*
 * Where a node's argument nodes are, by its operation: none (a column or
 * a constant), a, a and b, the list args[args_off .. + nargs), a with the
 * set setvals[args_off .. + nargs), or WN_DATETIME's own (a; b too for date
 * arithmetic).  The one grouping of the operations by their arguments,
 * for every walk over a program's nodes (warp_program_validate, the row
 * evaluator's depth check in warp_row_check.c).
 */
typedef enum WarpArity
{
	WARP_ARITY_NONE = 0,
	WARP_ARITY_UNARY,
	WARP_ARITY_BINARY,
	WARP_ARITY_LIST,
	WARP_ARITY_SET,
	WARP_ARITY_DATETIME,
	WARP_ARITY_UNKNOWN			/* not an operation */
} WarpArity;

WARP_FN WarpArity
warp_op_arity(int op)
{
	switch ((WarpOp) op)
	{
		case WN_COL:
		case WN_CONST:
			return WARP_ARITY_NONE;
		case WN_ARITH:
		case WN_CMP:
		case WN_DISTINCT:
		case WN_NULLIF:
			return WARP_ARITY_BINARY;
		case WN_NEG:
		case WN_NOT:
		case WN_IS_NULL:
		case WN_IS_NOT_NULL:
		case WN_CAST:
			return WARP_ARITY_UNARY;
		case WN_IN_SET:
			return WARP_ARITY_SET;
		case WN_AND:
		case WN_OR:
		case WN_CASE:
		case WN_COALESCE:
			return WARP_ARITY_LIST;
		case WN_DATETIME:
			return WARP_ARITY_DATETIME;
	}
	return WARP_ARITY_UNKNOWN;
}

/*
 * Check a program's internal consistency (indexes in range, argument types
 * of the right kind, no cycles).  Drivers run it before anything else, so a
 * corrupt program is an error, not an out-of-bounds access.  Returns NULL
 * if the program is valid, else a description of the first problem.
 */
extern const char *warp_program_validate(const WarpProgram *prog);

/*
 * Is node qn a comparison of a column with a constant, either side?  Then
 * its column node, its constant node and the operator with the column on
 * the left ("3 < c" is "c > 3").  The drivers' fast paths for such quals
 * (the CPU driver's column filters, the row evaluator's prefilter) start
 * here.
 */
extern bool warp_cmp_col_const(const WarpProgram *prog, int qn, int *colnode,
							   int *constnode, int *op);

/*
 * Narrow [*lo, *hi] to the integers v for which "v op c" holds (op one of
 * WARP_CMP_EQ, LT, LE, GT, GE; not NE); false when none is left.
 */
extern bool warp_cmp_narrow(int op, warp_int64 c, warp_int64 *lo, warp_int64 *hi);

#endif							/* WARP_PROGRAM_H */
