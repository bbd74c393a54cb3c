/*
 * test_engine_row.c — the row evaluator (src/engine/warp_row.h), the body
 * of the GPU driver's kernel, run on the CPU against the CPU driver
 * (warp_cpu.c, the reference) over randomly generated programs and record
 * batches: NULLs everywhere, dictionary columns, every loadable Arrow
 * type, quals with lazy AND/OR/CASE/COALESCE, direct and hash join tables
 * with duplicate keys, fact and dimension group keys, every aggregate
 * kind with and without FILTER.  The row driver here is the GPU driver's
 * algorithm done sequentially: group table in direct or hash form, partial
 * tables flushed and merged (warp_row_result_*), states exported and
 * finalized the same way.
 *
 * A program must give the same groups and states on both (float sums
 * within rounding, avg's Sxx within rounding), and a row error on one side
 * iff the other fails too; the row evaluator may also give a program back
 * (WARP_ROW_BAD) where it cannot be exact (float aggregates of -0, NaN or
 * huge values), and only there.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "warp_cpu.h"
#include "warp_join.h"
#include "warp_program.h"
#include "warp_row.h"
#include "warp_tile.h"

static void *
test_alloc(void *ctx, size_t size)
{
	(void) ctx;
	return calloc(1, size);
}

static const WarpAlloc ALLOC = {test_alloc, NULL};

#define rnd unit_rnd

static int
rn(int n)
{
	return (int) (rnd() % (uint64_t) n);
}

/* ------------------------------------------------------------- programs */

#define MAXNODES 120
#define MAXARGS 240

typedef struct Prog
{
	WarpProgram p;
	WarpNode	nodes[MAXNODES];
	int32_t		args[MAXARGS];
	WarpColumnSpec cols[16];
	int32_t		quals[12];
	WarpJoinSpec joins[4];
	WarpGroupKey keys[8];
	WarpAggSpec aggs[16];
	warp_int64	setvals[96];
	bool		overflow;		/* ran out of nodes: discard */
	int			tchoice[4];		/* join i uses tables[tchoice[i]] */
} Prog;

/*
 * A made-up time zone for the timestamptz nodes: transitions about every
 * half year around the generated timestamps (2021), offsets of -5 h, -4 h,
 * +5:30 and +1 h, some a few hours apart from the half-year rhythm.
 */
#define NTZ 16
static warp_int64 tz_at[NTZ];
static warp_int32 tz_off[NTZ];

static void
tz_init(WarpTz *tz)
{
	static const warp_int32 offs[4] = {-18000, -14400, 19800, 3600};
	int			i;

	for (i = 0; i < NTZ; i++)
	{
		tz_at[i] = INT64_C(946684800) + INT64_C(680000000) + (warp_int64) i * 15778800 +
			(i % 3) * 3600;
		tz_off[i] = offs[i % 4];
	}
	memset(tz, 0, sizeof(*tz));
	tz->n = NTZ;
	tz->at = tz_at;
	tz->off = tz_off;
	tz->off0_local = -17762;	/* a local mean time */
	tz->off0_next = -18000;
	tz->cycle_start = tz_at[NTZ - 1] + 1;
}

static void
prog_init(Prog *g)
{
	memset(g, 0, sizeof(*g));
	g->p.version = WARP_PROGRAM_VERSION;
	tz_init(&g->p.tz);
	g->p.nodes = g->nodes;
	g->p.args = g->args;
	g->p.cols = g->cols;
	g->p.quals = g->quals;
	g->p.joins = g->joins;
	g->p.keys = g->keys;
	g->p.aggs = g->aggs;
	g->p.setvals = g->setvals;
}

static int
node(Prog *g, WarpOp op, WarpType t, int sub, int a, int b)
{
	WarpNode   *n;

	if (g->p.nnodes >= MAXNODES)
	{
		g->overflow = true;
		return 0;
	}
	n = &g->nodes[g->p.nnodes];
	memset(n, 0, sizeof(*n));
	n->op = op;
	n->type = t;
	n->sub = sub;
	n->a = a;
	n->b = b;
	return g->p.nnodes++;
}

static int
nary(Prog *g, WarpOp op, WarpType t, int nargs, const int *kids, int flags)
{
	int			n = node(g, op, t, 0, -1, -1);
	int			i;

	if (g->p.nargs + nargs > MAXARGS)
	{
		g->overflow = true;
		return n;
	}
	g->nodes[n].nargs = nargs;
	g->nodes[n].args_off = g->p.nargs;
	g->nodes[n].flags = flags;
	for (i = 0; i < nargs; i++)
		g->args[g->p.nargs++] = kids[i];
	return n;
}

/*
 * The fact table's columns (program column c = batch column c):
 *  0 int32 -> int4        1 int64 -> int8         2 float64 -> float8
 *  3 dict<int8 -> int32> -> int4                  4 int16 -> int2
 *  5 date32 or date64 -> date                     6 timestamp[ms|ns|s] -> timestamp
 *  7 bool                 8 float32 -> float4     9 uint8 -> int2
 * 10 dict<int16 -> float64> -> float8            11 int32 join key -> int4
 * 12 uint16 -> int4      13 float16 -> float4
 */
#define NCOLS 15
static const WarpType col_type[NCOLS] = {
	WT_INT4, WT_INT8, WT_FLOAT8, WT_INT4, WT_INT2, WT_DATE, WT_TIMESTAMP,
	WT_BOOL, WT_FLOAT4, WT_INT2, WT_FLOAT8, WT_INT4, WT_INT4, WT_FLOAT4,
	WT_INT8						/* 14: Decimal128(12, 2) -> numeric(12,2) */
};

static int
col(Prog *g, int c)
{
	int			i;

	for (i = g->p.ncols; i <= c; i++)
	{
		g->cols[i].type = col_type[i];
		if (i == 14)
		{
			/* a numeric(12,2) column: unscaled int8, precision checked */
			g->cols[i].decimal = 1;
			g->cols[i].scale = 2;
			g->cols[i].precision = 12;
		}
	}
	if (c >= g->p.ncols)
		g->p.ncols = c + 1;
	return node(g, WN_COL, col_type[c], 0, c, -1);
}

static int
iconst(Prog *g, WarpType t, int64_t v, bool isnull)
{
	int			n = node(g, WN_CONST, t, 0, -1, -1);

	g->nodes[n].ival = v;
	if (isnull)
		g->nodes[n].flags = WARP_NODE_NULL;
	return n;
}

static int
fconst(Prog *g, WarpType t, double v, bool isnull)
{
	int			n = node(g, WN_CONST, t, 0, -1, -1);

	g->nodes[n].fval = t == WT_FLOAT4 ? (double) (float) v : v;
	if (isnull)
		g->nodes[n].flags = WARP_NODE_NULL;
	return n;
}

static int	gen_bool(Prog *g, int d);
static int	gen_float(Prog *g, WarpType t, int d);
static int	gen_int(Prog *g, WarpType t, int d);

/*
 * A timestamp(tz)-valued date/time node over column 6 (timestamp) or 5
 * (date): date_trunc in or out of the zone, or a conversion.
 */
static int
gen_datetime(Prog *g)
{
	static const int trunc_units[] = {WARP_DT_SECOND, WARP_DT_MINUTE, WARP_DT_HOUR, WARP_DT_DAY,
	WARP_DT_WEEK, WARP_DT_MONTH, WARP_DT_YEAR, WARP_DT_MILLENNIUM};
	int			n;

	switch (rn(7))
	{
		case 6:
			{
				/* + a constant interval: timestamp, timestamptz, date */
				static const int kinds[] = {WARP_DTA_TS_PL_INTERVAL, WARP_DTA_TSTZ_PL_INTERVAL,
				WARP_DTA_DATE_PL_INTERVAL};
				int			k = kinds[rn(3)];
				int			c = col(g, k == WARP_DTA_DATE_PL_INTERVAL ? 5 : 6);
				int32_t		month = rn(4) == 0 ? 0 : (int32_t) rn(61) - 30;
				int32_t		day = rn(3) == 0 ? 0 : (int32_t) rn(801) - 400;
				int64_t		time = rn(3) == 0 ? 0 : ((int64_t) rn(200001) - 100000) * 997;

				if (rn(30) == 0)
					month = rn(2) ? INT32_MAX : INT32_MIN;	/* out of range */
				if (rn(30) == 0)
					day = rn(2) ? INT32_MAX : -INT32_MAX;
				n = node(g, WN_DATETIME, WT_TIMESTAMP, k, c, c);
				g->nodes[n].flags = WARP_DT_ARITH;
				warp_node_set_interval(&g->nodes[n], month, day, time);
				return n;
			}
		case 5:
			{
				/* date arithmetic, then the date as a timestamp */
				int			d,
							k = rn(3);

				if (k == 0)
					d = node(g, WN_DATETIME, WT_DATE, WARP_DTA_DATE_PLI, col(g, 5),
							 iconst(g, WT_INT4, (int64_t) rn(2001) - 1000, rn(20) == 0));
				else if (k == 1)
					d = node(g, WN_DATETIME, WT_DATE, WARP_DTA_DATE_PLI, col(g, 5),
							 iconst(g, WT_INT4, rn(50) == 0 ? 2147483000 : (int64_t) rn(41) - 20, false));
				else
					d = node(g, WN_DATETIME, WT_DATE, WARP_DTA_DATE_MII, col(g, 5),
							 gen_int(g, WT_INT4, 1));
				g->nodes[d].flags = WARP_DT_ARITH;
				n = node(g, WN_DATETIME, WT_TIMESTAMP, WARP_DTC_DATE_TIMESTAMP, d, -1);
				break;
			}
		case 0:
		case 1:
			n = node(g, WN_DATETIME, WT_TIMESTAMP, trunc_units[rn(8)], col(g, 6), -1);
			g->nodes[n].flags = WARP_DT_TRUNC | (rn(2) ? WARP_DT_TZ : 0);
			return n;
		case 2:
			n = node(g, WN_DATETIME, WT_TIMESTAMP,
					 rn(2) ? WARP_DTC_TIMESTAMPTZ_TIMESTAMP : WARP_DTC_TIMESTAMP_TIMESTAMPTZ,
					 col(g, 6), -1);
			break;
		case 3:
			n = node(g, WN_DATETIME, WT_TIMESTAMP,
					 rn(2) ? WARP_DTC_DATE_TIMESTAMP : WARP_DTC_DATE_TIMESTAMPTZ, col(g, 5), -1);
			break;
		default:
			{
				int			d = node(g, WN_DATETIME, WT_DATE, WARP_DTC_TIMESTAMPTZ_DATE, col(g, 6), -1);

				g->nodes[d].flags = WARP_DT_CAST;
				n = node(g, WN_DATETIME, WT_TIMESTAMP, WARP_DTC_DATE_TIMESTAMP, d, -1);
				break;
			}
	}
	g->nodes[n].flags = WARP_DT_CAST;
	return n;
}

/* date_part(field, column 6 or 5), in or out of the zone */
static int
gen_date_part(Prog *g)
{
	static const int fields[] = {WARP_DT_MICROSECONDS, WARP_DT_MILLISECONDS, WARP_DT_SECOND,
		WARP_DT_HOUR, WARP_DT_DAY, WARP_DT_WEEK, WARP_DT_DOY, WARP_DT_ISOYEAR, WARP_DT_EPOCH};
	bool		ts = rn(3) != 0;
	int			f = fields[rn(9)];
	int			n;

	if (!ts)
		f = fields[4 + rn(5)];	/* the date fields */
	n = node(g, WN_DATETIME, WT_FLOAT8, f, col(g, ts ? 6 : 5), -1);
	g->nodes[n].flags = WARP_DT_PART | (ts && rn(2) ? WARP_DT_TZ : 0);
	return n;
}

/* an integer expression of type t (int2/int4/int8) */
static int
gen_int(Prog *g, WarpType t, int d)
{
	int			r = d <= 0 ? rn(2) : rn(10);

	switch (r)
	{
		case 0:
			if (t == WT_INT4)
			{
				static const int c4[] = {0, 3, 11, 12};

				return col(g, c4[rn(4)]);
			}
			if (t == WT_INT8)
				return col(g, 1);
			return col(g, rn(2) ? 4 : 9);
		case 1:
			return iconst(g, t, rn(21) - 10, rn(15) == 0);
		case 2:
		case 3:
			{
				int			a = gen_int(g, t, d - 1),
							b = gen_int(g, t, d - 1);

				return node(g, WN_ARITH, t, rn(5), a, b);
			}
		case 4:
			return node(g, WN_NEG, t, 0, gen_int(g, t, d - 1), -1);
		case 5:
			{
				/* casts: between integer widths, or from float */
				int			a;

				if (rn(2))
				{
					static const WarpType it[] = {WT_INT2, WT_INT4, WT_INT8};

					a = gen_int(g, it[rn(3)], d - 1);
				}
				else
					a = gen_float(g, rn(2) ? WT_FLOAT8 : WT_FLOAT4, d - 1);
				return node(g, WN_CAST, t, 0, a, -1);
			}
		case 6:
			{
				int			kids[5];
				int			n = 2 * (1 + rn(2)),
							i;
				bool		has_else = rn(2);

				for (i = 0; i < n; i += 2)
				{
					kids[i] = gen_bool(g, d - 1);
					kids[i + 1] = gen_int(g, t, d - 1);
				}
				if (has_else)
					kids[n++] = gen_int(g, t, d - 1);
				return nary(g, WN_CASE, t, n, kids, has_else ? WARP_CASE_HAS_ELSE : 0);
			}
		case 7:
			{
				int			kids[3];
				int			n = 2 + rn(2),
							i;

				for (i = 0; i < n; i++)
					kids[i] = gen_int(g, t, d - 1);
				return nary(g, WN_COALESCE, t, n, kids, 0);
			}
		case 8:
			{
				int			a = gen_int(g, t, d - 1),
							b = gen_int(g, t, d - 1);

				return node(g, WN_NULLIF, t, 0, a, b);
			}
		default:
			return col(g, t == WT_INT8 ? 1 : t == WT_INT4 ? 0 : 4);
	}
}

static int
gen_float(Prog *g, WarpType t, int d)
{
	int			r = d <= 0 ? rn(2) : rn(8);

	switch (r)
	{
		case 0:
			if (t == WT_FLOAT8 && rn(4) == 0)
				return gen_date_part(g);
			if (t == WT_FLOAT8)
				return col(g, rn(2) ? 2 : 10);
			return col(g, rn(2) ? 8 : 13);
		case 1:
			return fconst(g, t, (rn(41) - 20) * 0.5, rn(15) == 0);
		case 2:
		case 3:
			{
				int			a = gen_float(g, t, d - 1),
							b = gen_float(g, t, d - 1);

				return node(g, WN_ARITH, t, rn(4), a, b);
			}
		case 4:
			return node(g, WN_NEG, t, 0, gen_float(g, t, d - 1), -1);
		case 5:
			{
				int			a = rn(2) ? gen_int(g, rn(2) ? WT_INT4 : WT_INT8, d - 1)
					: gen_float(g, t == WT_FLOAT8 ? WT_FLOAT4 : WT_FLOAT8, d - 1);

				return node(g, WN_CAST, t, 0, a, -1);
			}
		case 6:
			{
				int			kids[3];

				kids[0] = gen_bool(g, d - 1);
				kids[1] = gen_float(g, t, d - 1);
				kids[2] = gen_float(g, t, d - 1);
				return nary(g, WN_CASE, t, 3, kids, WARP_CASE_HAS_ELSE);
			}
		default:
			{
				int			kids[2];

				kids[0] = gen_float(g, t, d - 1);
				kids[1] = gen_float(g, t, d - 1);
				return rn(2) ? nary(g, WN_COALESCE, t, 2, kids, 0)
					: node(g, WN_NULLIF, t, 0, kids[0], kids[1]);
			}
	}
}

/*
 * x IN (set) / x NOT IN (set) of 9 to 24 distinct sorted values around the
 * generated integers, with or without a NULL member
 */
static int
gen_in_set(Prog *g, int d)
{
	int			a = rn(2) ? col(g, rn(2) ? 0 : 3) : gen_int(g, rn(2) ? WT_INT4 : WT_INT8, d - 1);
	int			n = 0,
				want = 9 + rn(16),
				v,
				i;

	if (g->p.nsetvals + want > (int) (sizeof(g->setvals) / sizeof(g->setvals[0])))
		return iconst(g, WT_BOOL, 1, false);
	for (v = -15; v <= 15 && n < want; v++)
		if (rn(2))
			g->setvals[g->p.nsetvals + n++] = v;
	if (n == 0)
		g->setvals[g->p.nsetvals + n++] = 0;
	i = node(g, WN_IN_SET, WT_BOOL, 0, a, -1);
	g->nodes[i].args_off = g->p.nsetvals;
	g->nodes[i].nargs = n;
	g->nodes[i].flags = (rn(2) ? WARP_IN_NOT : 0) | (rn(3) == 0 ? WARP_IN_HAS_NULL : 0);
	g->p.nsetvals += n;
	return i;
}

static int
gen_bool(Prog *g, int d)
{
	int			r = d <= 0 ? rn(3) : rn(10);

	switch (r)
	{
		case 0:
			return col(g, 7);
		case 1:
			{
				/* comparison of a column with a constant */
				int			c = rn(7);

				if (c == 0)
					return node(g, WN_CMP, WT_BOOL, rn(6), col(g, 5),
								iconst(g, WT_DATE, 8000 + rn(40), false));
				if (c == 1)
					return node(g, WN_CMP, WT_BOOL, rn(6), col(g, 6),
								iconst(g, WT_TIMESTAMP, (int64_t) (690000000 + rn(200)) * 1000000, false));
				if (c == 2)
					return node(g, WN_CMP, WT_BOOL, rn(6), col(g, 2),
								fconst(g, WT_FLOAT8, rn(21) - 10, false));
				if (c == 3)
					return node(g, WN_CMP, WT_BOOL, rn(6), gen_datetime(g),
								iconst(g, WT_TIMESTAMP, (int64_t) (690000000 + rn(200)) * 1000000, false));
				if (c == 4)
					return node(g, WN_CMP, WT_BOOL, rn(6), col(g, 14),
								iconst(g, WT_INT8, (int64_t) rn(2001) - 1000, false));
				return node(g, WN_CMP, WT_BOOL, rn(6), col(g, rn(2) ? 0 : 3),
							iconst(g, WT_INT4, rn(21) - 10, rn(20) == 0));
			}
		case 2:
			return iconst(g, WT_BOOL, rn(2), rn(6) == 0);
		case 3:
		case 4:
			{
				if (rn(2))
				{
					WarpType	t = rn(2) ? WT_INT4 : WT_INT8;
					int			a = gen_int(g, t, d - 1),
								b = gen_int(g, t, d - 1);

					return node(g, WN_CMP, WT_BOOL, rn(6), a, b);
				}
				else
				{
					WarpType	t = rn(2) ? WT_FLOAT4 : WT_FLOAT8;
					int			a = gen_float(g, t, d - 1),
								b = gen_float(g, t, d - 1);

					return node(g, WN_CMP, WT_BOOL, rn(6), a, b);
				}
			}
		case 5:
			{
				int			kids[3];
				int			n = 2 + rn(2),
							i;

				for (i = 0; i < n; i++)
					kids[i] = gen_bool(g, d - 1);
				return nary(g, rn(2) ? WN_AND : WN_OR, WT_BOOL, n, kids, 0);
			}
		case 6:
			return node(g, WN_NOT, WT_BOOL, 0, gen_bool(g, d - 1), -1);
		case 7:
			if (rn(3) == 0)
				return gen_in_set(g, d);
			{
				int			a = rn(2) ? gen_int(g, WT_INT4, d - 1) : gen_float(g, WT_FLOAT8, d - 1);

				return node(g, rn(2) ? WN_IS_NULL : WN_IS_NOT_NULL, WT_BOOL, 0, a, -1);
			}
		case 8:
			{
				int			a,
							b;

				if (rn(2))
				{
					a = gen_int(g, WT_INT4, d - 1);
					b = gen_int(g, WT_INT4, d - 1);
				}
				else
				{
					a = gen_float(g, WT_FLOAT8, d - 1);
					b = gen_float(g, WT_FLOAT8, d - 1);
				}
				return node(g, WN_DISTINCT, WT_BOOL, rn(2), a, b);
			}
		default:
			{
				int			kids[3];

				kids[0] = gen_bool(g, d - 1);
				kids[1] = gen_bool(g, d - 1);
				kids[2] = gen_bool(g, d - 1);
				return nary(g, WN_CASE, WT_BOOL, 3, kids, WARP_CASE_HAS_ELSE);
			}
	}
}

/*
 * One to four quals comparing a column with a constant, either side, as
 * warp_row_pre_plan takes them (and NE and float ones, which end its
 * prefix): BETWEEN-like pairs on one column, NULL constants, bounds at the
 * int64 extremes, dates that do not convert (bad_date batches), dictionary
 * and decimal columns.
 */
static void
gen_simple_quals(Prog *g)
{
	static const int cols[] = {0, 1, 3, 4, 5, 6, 7, 9, 11, 12, 14, 2};
	int			n = 1 + rn(4),
				i;

	for (i = 0; i < n && g->p.nquals < 4; i++)
	{
		int			c = cols[rn(12)],
					pair = rn(3) == 0 ? 2 : 1,
					k;

		for (k = 0; k < pair && g->p.nquals < 4; k++)
		{
			WarpType	t = col_type[c];
			int			op,
						cn = col(g, c),
						kn;
			int64_t		v;

			if (pair == 2)		/* a lower bound, then an upper one */
				op = k == 0 ? (rn(2) ? WARP_CMP_GE : WARP_CMP_GT) : (rn(2) ? WARP_CMP_LE : WARP_CMP_LT);
			else
			{
				static const int ops[] = {WARP_CMP_EQ, WARP_CMP_LT, WARP_CMP_LE, WARP_CMP_GT, WARP_CMP_GE};

				op = ops[rn(5)];
			}
			if (rn(10) == 0)
				op = WARP_CMP_NE;
			switch (c)
			{
				case 5: v = 8000 + rn(40); break;
				case 6: v = (int64_t) (690000000 + rn(200)) * 1000000; break;
				case 7: v = rn(2); break;
				case 14: v = (int64_t) rn(2001) - 1000; break;
				default: v = rn(21) - 10; break;
			}
			if (rn(15) == 0)
				v = rn(2) ? INT64_MIN : INT64_MAX;
			kn = WARP_TYPE_IS_FLOAT(t) ? fconst(g, t, (double) (rn(21) - 10), rn(20) == 0)
				: iconst(g, t, v, rn(20) == 0);
			g->quals[g->p.nquals++] = rn(2) ? node(g, WN_CMP, WT_BOOL, op, cn, kn)
				: node(g, WN_CMP, WT_BOOL,
					   op == WARP_CMP_LT ? WARP_CMP_GT : op == WARP_CMP_LE ? WARP_CMP_GE :
					   op == WARP_CMP_GT ? WARP_CMP_LT : op == WARP_CMP_GE ? WARP_CMP_LE : op,
					   kn, cn);
		}
	}
}

/* ---------------------------------------------------------- join tables */

#define NTABLES 4
static WarpJoinTable *tables[NTABLES];

static void
build_tables(void)
{
	int64_t		k0[40],
				k1[40],
				k2[16],
				k3[1];
	int32_t		p0[40],
				p1[40],
				p2[16],
				p3[1];
	int			n0 = 0,
				n1 = 0,
				i;

	/* 0: unique dense keys 0..30 except every 7th (a filtered dimension) */
	for (i = 0; i <= 30; i++)
		if (i % 7 != 3)
		{
			k0[n0] = i;
			p0[n0++] = i % 5;
		}
	tables[0] = warp_join_build(&ALLOC, k0, p0, n0, 5);
	/* 1: duplicate dense keys */
	for (i = 0; i < 30; i++)
	{
		k1[n1] = rn(20);
		p1[n1++] = rn(4);
	}
	tables[1] = warp_join_build(&ALLOC, k1, p1, n1, 4);
	/* 2: sparse keys, hash form, with duplicates */
	{
		static const int64_t sk[16] = {0, 5, 17, -3, 1000000000000LL, 5, -3, 250,
		-999, 17, 5, 42, 7, -20, 900, 3};

		for (i = 0; i < 16; i++)
		{
			k2[i] = sk[i];
			p2[i] = i % 6;
		}
		tables[2] = warp_join_build(&ALLOC, k2, p2, 16, 6);
	}
	/* 3: empty */
	(void) k3;
	(void) p3;
	tables[3] = warp_join_build(&ALLOC, k3, p3, 0, 1);
}

/* ------------------------------------------------------------- batches */

typedef struct Batch
{
	int64_t		n;
	ArrowArray	cols[NCOLS];
	ArrowArray	dicts[NCOLS];
	ArrowArray	orig[NCOLS];	/* sliced: the arrays that own the buffers */
	bool		sliced;
} Batch;

static ArrowField fields[NCOLS];
static ArrowField dict_fields[NCOLS];

static void
setup_fields(bool date64, int ts_unit)
{
	ArrowType	t;
	int			c;

	memset(fields, 0, sizeof(fields));
	memset(dict_fields, 0, sizeof(dict_fields));
	for (c = 0; c < NCOLS; c++)
	{
		fields[c].name = "c";
		fields[c].nullable = true;
	}
#define SETINT(c, w, s) do { memset(&t, 0, sizeof(t)); t.id = ARROW_TYPE_INT; t.bit_width = (w); t.is_signed = (s); fields[c].type = t; } while (0)
#define SETFLT(c, pr) do { memset(&t, 0, sizeof(t)); t.id = ARROW_TYPE_FLOAT; t.precision = (pr); fields[c].type = t; } while (0)
	SETINT(0, 32, true);
	SETINT(1, 64, true);
	SETFLT(2, ARROW_PRECISION_DOUBLE);
	SETINT(3, 32, true);		/* value type of the dictionary */
	fields[3].has_dict = true;
	fields[3].dict.index_type.id = ARROW_TYPE_INT;
	fields[3].dict.index_type.bit_width = 8;
	fields[3].dict.index_type.is_signed = true;
	SETINT(4, 16, true);
	memset(&t, 0, sizeof(t));
	t.id = ARROW_TYPE_DATE;
	t.unit = date64 ? ARROW_DATE_MILLISECOND : ARROW_DATE_DAY;
	fields[5].type = t;
	memset(&t, 0, sizeof(t));
	t.id = ARROW_TYPE_TIMESTAMP;
	t.unit = ts_unit;
	fields[6].type = t;
	memset(&t, 0, sizeof(t));
	t.id = ARROW_TYPE_BOOL;
	fields[7].type = t;
	SETFLT(8, ARROW_PRECISION_SINGLE);
	SETINT(9, 8, false);
	SETFLT(10, ARROW_PRECISION_DOUBLE);
	fields[10].has_dict = true;
	fields[10].dict.index_type.id = ARROW_TYPE_INT;
	fields[10].dict.index_type.bit_width = 16;
	fields[10].dict.index_type.is_signed = false;
	SETINT(11, 32, true);
	SETINT(12, 16, false);
	SETFLT(13, ARROW_PRECISION_HALF);
	memset(&t, 0, sizeof(t));
	t.id = ARROW_TYPE_DECIMAL;
	t.bit_width = 128;
	t.dec_precision = 12;
	t.dec_scale = 2;
	fields[14].type = t;
	for (c = 0; c < NCOLS; c++)
	{
		dict_fields[c] = fields[c];
		dict_fields[c].has_dict = false;
	}
}

static uint16_t
half_of(double v)
{
	/* small multiples of 0.25 only: exact in half precision */
	int			sign = v < 0;
	double		a = fabs(v);
	int			e;
	int			m;

	if (a == 0)
		return (uint16_t) (sign << 15);
	e = (int) floor(log2(a));
	m = (int) ((a / ldexp(1.0, e) - 1.0) * 1024.0 + 0.5);
	return (uint16_t) ((sign << 15) | ((e + 15) << 10) | m);
}

/* fill column c of batch b with n random values; some NULL */
static void
fill_column(Batch *b, int c, int64_t n, bool floats_special, int bad_date)
{
	ArrowArray *a = &b->cols[c];
	int			width = 8;
	uint8_t    *vals,
			   *bits;
	int64_t		i;
	bool		nullable = rn(4) != 0;

	memset(a, 0, sizeof(*a));
	a->field = &fields[c];
	a->length = n;
	switch (c)
	{
		case 4: case 12: case 13: width = 2; break;
		case 0: case 11: case 8: width = 4; break;
		case 9: width = 1; break;
		case 3: width = 1; break;
		case 10: width = 2; break;
		case 5: width = fields[5].type.unit == ARROW_DATE_DAY ? 4 : 8; break;
		case 7: width = 0; break;
		case 14: width = 16; break;
		default: width = 8; break;
	}
	a->values_len = width ? n * width + 8 : n / 8 + 8;
	vals = calloc(1, a->values_len + 64);
	bits = calloc(1, n / 8 + 8);
	a->values = vals;
	for (i = 0; i < n; i++)
	{
		bool		isnull = nullable && rn(8) == 0;

		if (!isnull)
			bits[i / 8] |= 1 << (i % 8);
		else
			a->null_count++;
		switch (c)
		{
			case 0:
			case 11:
				((int32_t *) vals)[i] = c == 11 ? rn(36) - 2 : rn(41) - 20;
				break;
			case 1:
				((int64_t *) vals)[i] = rn(50) == 0 ? (int64_t) (rnd() >> 2) : (int64_t) rn(2001) - 1000;
				break;
			case 2:
				{
					double		v = (rn(401) - 200) * 0.25;

					if (floats_special && rn(20) == 0)
						v = rn(2) ? NAN : (rn(2) ? -0.0 : 1e300);
					((double *) vals)[i] = v;
					break;
				}
			case 3:
				((int8_t *) vals)[i] = (int8_t) rn(8);
				break;
			case 4:
				((int16_t *) vals)[i] = (int16_t) (rn(2001) - 1000);
				break;
			case 5:
				{
					int64_t		d = 19000 + rn(40);	/* Unix days */

					if (bad_date && rn(50) == 0)
						d = 2147483000LL;	/* beyond PostgreSQL's dates */
					if (fields[5].type.unit == ARROW_DATE_DAY)
						((int32_t *) vals)[i] = (int32_t) d;
					else
						((int64_t *) vals)[i] = d * 86400000LL - rn(86400000);
					break;
				}
			case 6:
				{
					int64_t		s = 1636684800LL + rn(200);

					switch (fields[6].type.unit)
					{
						case ARROW_TIME_SECOND:
							((int64_t *) vals)[i] = s;
							break;
						case ARROW_TIME_MILLISECOND:
							((int64_t *) vals)[i] = s * 1000 + rn(1000);
							break;
						case ARROW_TIME_MICROSECOND:
							((int64_t *) vals)[i] = s * 1000000 + rn(1000000);
							break;
						default:
							((int64_t *) vals)[i] = s * 1000000000LL + rn(1000000000) - 500000000;
							break;
					}
					if (bad_date && rn(50) == 0 && fields[6].type.unit == ARROW_TIME_SECOND)
						((int64_t *) vals)[i] = INT64_C(9000000000000000000);
					break;
				}
			case 7:
				if (rn(2))
					vals[i / 8] |= 1 << (i % 8);
				break;
			case 8:
				((float *) vals)[i] = (float) ((rn(201) - 100) * 0.5);
				break;
			case 9:
				vals[i] = (uint8_t) rn(256);
				break;
			case 10:
				((uint16_t *) vals)[i] = (uint16_t) rn(6);
				break;
			case 12:
				((uint16_t *) vals)[i] = (uint16_t) rn(65536);
				break;
			case 13:
				((uint16_t *) vals)[i] = half_of((rn(81) - 40) * 0.25);
				break;
			case 14:
				{
					/* little-endian 128 bits; now and then more digits than
					 * declared (a load error on both drivers) */
					int64_t		v = (int64_t) rn(200001) - 100000;
					int64_t		hi;

					if (bad_date && rn(60) == 0)
						v = rn(2) ? INT64_C(1000000000000) : -INT64_C(5000000000000000000);
					if (rn(4000) == 0)
						v = -INT64_C(1000000000000);	/* 13 digits, alone */
					hi = v < 0 ? -1 : 0;
					if (bad_date && rn(80) == 0)
						hi = 1;			/* beyond int64 */
					memcpy(vals + i * 16, &v, 8);
					memcpy(vals + i * 16 + 8, &hi, 8);
					break;
				}
		}
	}
	if (a->null_count > 0 || rn(2))
		a->validity = bits;
	else
		free(bits);

	/* dictionaries */
	if (c == 3 || c == 10)
	{
		ArrowArray *d = &b->dicts[c];
		int			nd = c == 3 ? 8 : 6;
		uint8_t    *dv = calloc(1, 64 + nd * 8);
		uint8_t    *db = calloc(1, 8);

		memset(d, 0, sizeof(*d));
		d->field = &dict_fields[c];
		d->length = nd;
		d->values = dv;
		d->values_len = nd * (c == 3 ? 4 : 8);
		for (i = 0; i < nd; i++)
		{
			if (i != 2)
				db[0] |= 1 << i;
			if (c == 3)
				((int32_t *) dv)[i] = (int32_t) (i * 3 - 7);
			else
				((double *) dv)[i] = i * 1.25 - 2.0;
		}
		d->validity = db;
		d->null_count = 1;
		a->dictionary = d;
	}
}

static void
make_batch(Batch *b, int64_t n, bool floats_special, int bad_date)
{
	int			c;

	memset(b, 0, sizeof(*b));
	b->n = n;
	for (c = 0; c < NCOLS; c++)
		fill_column(b, c, n, floats_special, bad_date);
}

static void
free_batch(Batch *b)
{
	int			c;

	if (b->sliced)
		memcpy(b->cols, b->orig, sizeof(b->cols));
	for (c = 0; c < NCOLS; c++)
	{
		free((void *) b->cols[c].values);
		free((void *) b->cols[c].validity);
		if (b->cols[c].dictionary)
		{
			free((void *) b->dicts[c].values);
			free((void *) b->dicts[c].validity);
		}
	}
}

/* ----------------------------------------------------------- row driver */

enum
{
	MODE_HASH,					/* one hash table for everything */
	MODE_FLUSH,					/* small chunks, flushed and merged */
	MODE_DIRECT,				/* direct group codes */
	MODE_APPEND					/* row mode: every row appended (the GPU
								 * driver's append form), a Top-N's
								 * candidates compacted on the host */
};

/* export every used slot of g into r, then clear g */
static bool
flush_groups(const WarpProgram *p, WarpRowGroups *g, warp_int64 nslots, WarpRowResult *r)
{
	warp_int64	s;
	int			a;
	WarpAggState st[WARP_ROW_MAX_AGGS];
	bool		first = r->n == 0;

	for (s = 0; s < nslots; s++)
	{
		if (g->state[s] != 2)
			continue;
		for (a = 0; a < p->naggs; a++)
		{
			st[a] = g->aggs[s * p->naggs + a];
			warp_row_agg_export(&p->aggs[a], &st[a]);
		}
		/* as the GPU driver: the first flush appends (its groups are
		 * distinct), later ones merge (indexing the appended ones first) */
		if (first || g->append ?
			!warp_row_result_append(r, g->keys + s * p->nkeys, g->knull + s * p->nkeys, st)
			: !warp_row_result_merge(r, p, g->keys + s * p->nkeys, g->knull + s * p->nkeys, st))
			return false;
	}
	for (s = 0; s < nslots; s++)
	{
		g->state[s] = 0;
		for (a = 0; a < p->naggs; a++)
			warp_row_agg_init(&p->aggs[a], &g->aggs[s * p->naggs + a]);
	}
	*g->nused = 0;
	return true;
}

/*
 * Run the program over the batches the way the GPU driver does, one row
 * at a time.  Returns WARP_OK or the first row's status.
 */
/* the arrays of a group table of nslots slots, every slot empty */
static void
alloc_groups(const WarpProgram *p, WarpRowGroups *g, warp_int64 nslots,
			 unsigned long long *nused)
{
	g->state = calloc(nslots, sizeof(warp_uint32));
	g->keys = calloc(nslots * (p->nkeys + 1), sizeof(warp_int64));
	g->knull = calloc(nslots * (p->nkeys + 1), 1);
	g->aggs = calloc(nslots * (p->naggs + 1), sizeof(WarpAggState));
	g->nused = nused;
	for (warp_int64 sl = 0; sl < nslots; sl++)
		for (int k = 0; k < p->naggs; k++)
			warp_row_agg_init(&p->aggs[k], &g->aggs[sl * p->naggs + k]);
}

static void
free_groups(WarpRowGroups *g)
{
	free(g->state);
	free(g->keys);
	free(g->knull);
	free(g->aggs);
}

/*
 * Run programs of the tile shape through warp_tile_run (the tile kernel's
 * per-row work) instead of warp_row_run; tile_runs counts the runs that
 * did, so the test can require that the generator made some.
 */
static bool use_tile;
static int	tile_runs,
			tile_block_runs;

/*
 * The tile kernel's shared-memory form for a direct group table, done
 * sequentially: rows [0, n) pre-aggregated into a block's own states,
 * which then go into the group table with warp_row_agg_absorb under the
 * keys warp_tile_direct_keys gives back.
 */
static int
tile_block_run(const WarpRowEnv *env, const WarpTilePlan *tp, const WarpRowGroups *g,
			   warp_int64 nslots, warp_int64 n, WarpRowCounts *cnt)
{
	const WarpProgram *p = env->p;
	WarpAggState *acc = malloc(sizeof(WarpAggState) * (nslots * p->naggs + 1));
	warp_uint8 *used = calloc(nslots + 1, 1);
	warp_int64	row,
				sl;
	int			a,
				st = WARP_OK;

	for (sl = 0; sl < nslots; sl++)
		for (a = 0; a < p->naggs; a++)
			warp_row_agg_init(&p->aggs[a], &acc[sl * p->naggs + a]);
	for (row = 0; row < n && st == WARP_OK; row++)
	{
		warp_int32	first[WARP_TILE_MAX_JOINS];
		warp_int64	kv[WARP_TILE_MAX_KEYS],
					iv[WARP_TILE_MAX_AGGS],
					code;
		warp_uint8	kn[WARP_TILE_MAX_KEYS],
					ok[WARP_TILE_MAX_AGGS];
		bool		alive,
					passed;

		st = warp_tile_probe(env, tp, row, &alive, &passed, first);
		cnt->rows_filtered += passed;
		if (st != WARP_OK || !alive)
			continue;
		st = warp_tile_emit_values(env, tp, g, row, first, kv, kn, &code, iv, ok);
		if (st != WARP_OK)
			break;
		cnt->rows_joined++;
		used[code] = 1;
		st = warp_tile_update(p->aggs, p->naggs, &acc[code * p->naggs], iv, ok);
	}
	for (sl = 0; sl < nslots && st == WARP_OK; sl++)
	{
		warp_int64	kv[WARP_TILE_MAX_KEYS],
					slot;
		warp_uint8	kn[WARP_TILE_MAX_KEYS];

		if (!used[sl])
			continue;
		warp_tile_direct_keys(g, sl, kv, kn);
		slot = warp_row_group(g, kv, kn, sl);
		for (a = 0; a < p->naggs; a++)
			warp_row_agg_absorb(&p->aggs[a], &g->aggs[slot * p->naggs + a], &acc[sl * p->naggs + a]);
	}
	free(acc);
	free(used);
	return st;
}

static int
row_driver(const WarpProgram *p, WarpJoinTable *const *ptabs, Batch *batches, int nb,
		   int mode, warp_int64 max_used,
		   WarpRowResult *res, WarpRowCounts *cnt, warp_int64 *rows_in)
{
	WarpJoinTable tabs[WARP_ROW_MAX_JOINS];
	WarpRowCol	cols[NCOLS];
	WarpRowEnv	env;
	WarpRowGroups g;
	WarpRowState *s = malloc(sizeof(WarpRowState));
	/* the kernel's layout: the scratch of several threads interleaved */
	int			nthreads = 1 + rn(5);
	void	   *scratch = malloc(WARP_ROW_SCRATCH_BYTES(p->nnodes) * nthreads + 8);
	unsigned long long nused = 0;
	warp_int64	nslots;
	int			j,
				k,
				bi,
				st = WARP_OK;
	warp_int64	chunk = 1 + rn(300),
				inchunk = 0;
	WarpTilePlan *tp = NULL;

	memset(&g, 0, sizeof(g));
	memset(cnt, 0, sizeof(*cnt));
	*rows_in = 0;
	for (j = 0; j < p->njoins; j++)
		tabs[j] = *ptabs[p->joins[j].table];
	env.p = p;
	env.tables = tabs;
	env.cols = cols;
	warp_row_pre_plan(p, &env.pre);
	if (use_tile)
	{
		tp = malloc(sizeof(WarpTilePlan));
		if (!warp_tile_plan(p, tp, NULL, 0))
		{
			free(tp);
			tp = NULL;
		}
		for (j = 0; tp && j < p->njoins; j++)
			if (!tabs[j].unique)
			{
				free(tp);
				tp = NULL;
			}
		if (tp)
			tile_runs++;
	}
	warp_row_state_init(s, scratch, p->nnodes, nthreads, (int) rn(nthreads));
	warp_row_prepare(p, s);
	g.nkeys = p->nkeys;
	g.naggs = p->naggs;
	if (mode == MODE_APPEND)
	{
		/* as the GPU driver sizes it: rows times every inner and left
		 * join's duplicate fan-out */
		warp_int64	bound = 0,
					fan = 1;

		for (bi = 0; bi < nb; bi++)
			bound += batches[bi].n;
		for (j = 0; j < p->njoins; j++)
			if (p->joins[j].kind == WARP_JOIN_INNER || p->joins[j].kind == WARP_JOIN_LEFT)
			{
				warp_int64	ch = warp_row_max_chain(&tabs[j]);

				fan *= ch > 1 ? ch : 1;
			}
		for (nslots = 64; nslots < bound * fan + 1; nslots *= 2)
			;
		g.append = 1;
		g.mask = nslots - 1;
		g.max_used = nslots;
		if (p->topn_limit > 0)
			g.topn = warp_topn_order(p);
	}
	else if (mode == MODE_DIRECT)
	{
		warp_int64	product = 1;

		g.direct = 1;
		for (k = p->nkeys - 1; k >= 0; k--)
		{
			g.stride[k] = product;
			product *= (warp_int64) tabs[p->keys[k].join].npayloads + 1;
		}
		nslots = product;
	}
	else
	{
		/* as the GPU driver sizes it: rows times the duplicate fan-out of
		 * the joins that group keys read, at most half full */
		warp_int64	bound = 0,
					fan = 1;

		for (bi = 0; bi < nb; bi++)
			bound += batches[bi].n;
		if (mode == MODE_FLUSH)
			bound = 300;
		for (k = 0; k < p->nkeys; k++)
			if (p->keys[k].kind == WG_DIM)
			{
				warp_int64	ch = warp_row_max_chain(&tabs[p->keys[k].join]);

				fan *= ch > 1 ? ch : 1;		/* a left join's miss is a row */
			}
		bound *= fan;
		for (nslots = 64; nslots < 2 * bound; nslots *= 2)
			;
		g.mask = nslots - 1;
		g.max_used = max_used ? max_used : nslots / 2;
	}
	alloc_groups(p, &g, nslots, &nused);
	warp_row_result_init(res, p->nkeys, p->naggs);

	for (bi = 0; bi < nb && st == WARP_OK; bi++)
	{
		Batch	   *b = &batches[bi];
		warp_int64	row;

		for (k = 0; k < p->ncols; k++)
		{
			const char *why = warp_row_describe(&b->cols[k], &p->cols[k], b->n, &cols[k]);

			if (why)
			{
				printf("describe column %d: %s\n", k, why);
				st = WARP_ROW_BAD;
				break;
			}
		}
		env.nrows = b->n;
		*rows_in += b->n;
		if (tp && mode == MODE_DIRECT && p->naggs > 0 && rn(2))
		{
			st = tile_block_run(&env, tp, &g, nslots, b->n, cnt);
			tile_block_runs++;
			continue;
		}
		for (row = 0; row < b->n && st == WARP_OK; row++)
		{
			st = tp ? warp_tile_run(&env, tp, &g, row, cnt) : warp_row_run(&env, s, &g, row, cnt);
			if (mode == MODE_FLUSH && ++inchunk == chunk)
			{
				flush_groups(p, &g, nslots, res);
				inchunk = 0;
				chunk = 1 + rn(300);
			}
		}
		if (mode == MODE_APPEND && p->topn_limit > 0 && st == WARP_OK)
		{
			/* as warp_gpu_take_rows: the batch's rows to the host, the
			 * candidates compacted there, the threshold back to the rows */
			flush_groups(p, &g, nslots, res);
			if (res->n >= warp_topn_compact_floor(p) / 64 && res->n > p->topn_limit)
			{
				warp_int32 *idx = malloc(sizeof(warp_int32) * res->n);

				res->n = warp_topn_compact_rows(p, res->keys, res->knull, res->n, idx,
												&g.topn_val, &g.topn_null);
				g.topn_have = 1;
				free(idx);
			}
		}
	}
	if (st == WARP_OK)
	{
		flush_groups(p, &g, nslots, res);
		warp_row_result_final(res, p);
	}
	free_groups(&g);
	free(scratch);
	free(s);
	free(tp);
	return st;
}

/* ----------------------------------------------------------- comparison */

static bool
close_enough(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b);
	return fabs(a - b) <= 1e-9 * fmax(1.0, fmax(fabs(a), fabs(b)));
}

/* compare CPU group gi with the row driver's groups; returns false on mismatch */
static bool
same_group(const WarpProgram *p, const WarpCpu *cpu, warp_int64 gi, const WarpRowResult *r,
		   char *why, size_t len)
{
	warp_int64	kv[WARP_ROW_MAX_KEYS];
	warp_uint8	kn[WARP_ROW_MAX_KEYS];
	warp_int64	h;
	int			k,
				a;

	for (k = 0; k < p->nkeys; k++)
	{
		bool		isnull;

		kv[k] = warp_cpu_group_key(cpu, gi, k, &isnull);
		kn[k] = isnull;
	}
	h = -1;
	for (warp_int64 x = 0; x < r->n; x++)
		if ((p->nkeys == 0 ||
			 (memcmp(r->keys + x * p->nkeys, kv, sizeof(warp_int64) * p->nkeys) == 0 &&
			  memcmp(r->knull + x * p->nkeys, kn, p->nkeys) == 0)))
		{
			h = x;
			break;
		}
	if (h < 0)
	{
		snprintf(why, len, "CPU group %lld missing", (long long) gi);
		return false;
	}
	for (a = 0; a < p->naggs; a++)
	{
		const WarpAggState *c = warp_cpu_group_agg(cpu, gi, a);
		const WarpAggState *w = &r->aggs[h * p->naggs + a];
		bool		ok = c->count == w->count;

		switch ((WarpAggKind) p->aggs[a].kind)
		{
			case WA_COUNT_STAR:
			case WA_COUNT:
				break;
			case WA_SUM_INT:
			case WA_AVG_INT:
				ok = ok && c->ival == w->ival;
				break;
			case WA_SUM_INT8:
				ok = ok && c->wide_lo == w->wide_lo && c->wide_hi == w->wide_hi;
				break;
			case WA_SUM_NUMERIC:
				ok = false;		/* never generated: the row evaluator refuses it */
				break;
			case WA_MIN:
			case WA_MAX:
				/* -0 vs 0 matters (it prints); a NaN's sign does not */
				ok = ok && c->ival == w->ival &&
					(c->fval == w->fval || (isnan(c->fval) && isnan(w->fval))) &&
					(isnan(c->fval) || signbit(c->fval) == signbit(w->fval));
				break;
			case WA_SUM_FLOAT:
				ok = ok && close_enough(c->fval, w->fval);
				break;
			case WA_AVG_FLOAT:
				ok = ok && close_enough(c->fval, w->fval) &&
					/* Sxx from Σx² - Sx²/N: exact up to cancellation of Σx² */
					fabs(c->fsxx - w->fsxx) <=
					1e-9 * fmax(1.0, fmax(fabs(c->fsxx), c->count ? c->fval * c->fval / c->count : 0));
				break;
		}
		if (!ok)
		{
			snprintf(why, len, "group %lld agg %d kind %d: cpu count %lld ival %lld f %.17g sxx %.17g; row count %lld ival %lld f %.17g sxx %.17g",
					 (long long) gi, a, p->aggs[a].kind,
					 (long long) c->count, (long long) c->ival, c->fval, c->fsxx,
					 (long long) w->count, (long long) w->ival, w->fval, w->fsxx);
			return false;
		}
	}
	return true;
}

/* ----------------------------------------------------------- generation */

static bool
uses_float_agg(const WarpProgram *p)
{
	int			a;

	for (a = 0; a < p->naggs; a++)
	{
		const WarpAggSpec *ag = &p->aggs[a];

		if (ag->kind == WA_SUM_FLOAT || ag->kind == WA_AVG_FLOAT ||
			((ag->kind == WA_MIN || ag->kind == WA_MAX) && WARP_TYPE_IS_FLOAT(ag->type)))
			return true;
	}
	return false;
}

static void
gen_program(Prog *g)
{
	int			i,
				nq = rn(3),
				nj = rn(4),
				nk = rn(4),
				na = 1 + rn(6);
	int			depth = 1 + rn(3);
	int			j = 0;

	prog_init(g);
	/* leading "column op constant" quals, decided by warp_row_prefilter */
	if (rn(2))
		gen_simple_quals(g);
	for (i = 0; i < nq && g->p.nquals < 8; i++)
		g->quals[g->p.nquals++] = gen_bool(g, depth);
	for (i = 0; i < nj; i++)
	{
		int			t = rn(10) == 0 ? 3 : rn(3);
		WarpJoinSpec *js = &g->joins[g->p.njoins++];

		js->table = i;
		js->key_node = t == 2 ? (rn(2) ? col(g, 1) : col(g, 0)) : (rn(3) ? col(g, 11) : col(g, 0));
		/* inner most often; left, semi and anti joins too */
		js->kind = rn(2) ? WARP_JOIN_INNER : 1 + rn(3);
		g->tchoice[i] = t;
	}
	for (i = 0; i < nk; i++)
	{
		WarpGroupKey *k = &g->keys[g->p.nkeys++];

		if (g->p.njoins > 0 && rn(2) &&
			(g->joins[j = rn(g->p.njoins)].kind == WARP_JOIN_INNER ||
			 g->joins[j].kind == WARP_JOIN_LEFT))
		{
			/* only inner and left joins have a dimension side to group by */
			k->kind = WG_DIM;
			k->join = j;
		}
		else
		{
			static const int kc[] = {0, 3, 4, 5, 7, 10, 13, 14};

			k->kind = WG_FACT;
			k->node = rn(4) == 0 ? gen_datetime(g) :
				rn(3) ? col(g, kc[rn(8)]) : gen_int(g, WT_INT4, 1);
		}
	}
	for (i = 0; i < na; i++)
	{
		int			kind = rn(9);
		WarpAggSpec *ag = &g->aggs[g->p.naggs++];

		ag->kind = kind;
		ag->filter = rn(3) == 0 ? gen_bool(g, 1) : -1;
		switch ((WarpAggKind) kind)
		{
			case WA_COUNT_STAR:
				ag->arg = -1;
				ag->type = WT_INT8;
				break;
			case WA_COUNT:
			case WA_MIN:
			case WA_MAX:
				{
					int			c = rn(8);

					ag->arg = c == 0 ? gen_float(g, rn(2) ? WT_FLOAT8 : WT_FLOAT4, depth) :
						c == 1 ? col(g, 5) : c == 2 ? col(g, 6) :
						c == 7 ? (rn(2) ? gen_datetime(g) : col(g, 14)) :
						gen_int(g, c == 3 ? WT_INT8 : WT_INT4, depth);
					break;
				}
			case WA_SUM_INT:
			case WA_AVG_INT:
				ag->arg = gen_int(g, rn(2) ? WT_INT2 : WT_INT4, depth);
				break;
			case WA_SUM_INT8:
				/* sum(int8), or sum/avg of a numeric(12,2) column */
				ag->arg = rn(3) == 0 ? col(g, 14) : gen_int(g, WT_INT8, depth);
				break;
			case WA_SUM_FLOAT:
				ag->arg = gen_float(g, WT_FLOAT8, depth);
				break;
			case WA_AVG_FLOAT:
				ag->arg = gen_float(g, rn(2) ? WT_FLOAT8 : WT_FLOAT4, depth);
				break;
			case WA_SUM_NUMERIC:
				break;			/* rn(9) never gives it */
		}
		if (ag->arg >= 0)
			ag->type = g->nodes[ag->arg].type;
	}
}

/* ------------------------------------------------------- tile programs */

/* an integer expression of the tile shape (columns, constants, + - * / %,
 * unary minus, casts between integer types) of type t */
static int
gen_tile_int(Prog *g, WarpType t, int d)
{
	static const int c4[] = {0, 3, 11, 12},
				c8[] = {1, 14},
				c2[] = {4, 9};
	int			r = d <= 0 ? rn(2) : rn(6);

	switch (r)
	{
		case 0:
			return t == WT_INT4 ? col(g, c4[rn(4)]) : t == WT_INT8 ? col(g, c8[rn(2)]) : col(g, c2[rn(2)]);
		case 1:
			return iconst(g, t, rn(4) == 0 ? (t == WT_INT2 ? 32767 : t == WT_INT4 ? 2147483647 : INT64_MAX) :
						  (int64_t) rn(41) - 20, false);
		case 2:
		case 3:
			return node(g, WN_ARITH, t, rn(5), gen_tile_int(g, t, d - 1), gen_tile_int(g, t, d - 1));
		case 4:
			return node(g, WN_NEG, t, 0, gen_tile_int(g, t, d - 1), -1);
		default:
			{
				WarpType	from = rn(3) == 0 ? WT_INT2 : rn(2) ? WT_INT4 : WT_INT8;

				return node(g, WN_CAST, t, 0, gen_tile_int(g, from, d - 1), -1);
			}
	}
}

/*
 * A program of the tile shape (warp_tile.h) most of the time: range quals,
 * inner joins on the unique tables, keys from dimensions or integer
 * expressions, integer aggregates over such expressions.
 */
static void
gen_tile_program(Prog *g)
{
	int			i,
				nj = rn(4),
				nk = rn(3),
				na = 1 + rn(4);

	prog_init(g);
	if (rn(3))
		gen_simple_quals(g);
	for (i = 0; i < nj; i++)
	{
		int			t = rn(8) == 0 ? 3 : 0;
		WarpJoinSpec *js = &g->joins[g->p.njoins++];

		js->table = i;
		js->key_node = rn(4) ? col(g, 11) : col(g, 0);
		js->kind = WARP_JOIN_INNER;
		g->tchoice[i] = t;
	}
	for (i = 0; i < nk; i++)
	{
		WarpGroupKey *k = &g->keys[g->p.nkeys++];

		if (g->p.njoins > 0 && rn(3))
		{
			k->kind = WG_DIM;
			k->join = rn(g->p.njoins);
		}
		else
		{
			k->kind = WG_FACT;
			k->node = rn(3) ? col(g, rn(2) ? 4 : 5) : gen_tile_int(g, WT_INT4, 1);
		}
	}
	for (i = 0; i < na; i++)
	{
		static const int kinds[] = {WA_COUNT_STAR, WA_COUNT, WA_SUM_INT, WA_AVG_INT,
		WA_SUM_INT8, WA_MIN, WA_MAX};
		WarpAggSpec *ag = &g->aggs[g->p.naggs++];

		ag->kind = kinds[rn(7)];
		ag->filter = -1;
		ag->arg = -1;
		ag->type = WT_INT8;
		if (ag->kind == WA_SUM_INT || ag->kind == WA_AVG_INT)
			ag->arg = gen_tile_int(g, rn(2) ? WT_INT2 : WT_INT4, 1 + rn(2));
		else if (ag->kind == WA_SUM_INT8)
			ag->arg = gen_tile_int(g, WT_INT8, 1 + rn(2));
		else if (ag->kind != WA_COUNT_STAR)
			ag->arg = rn(5) == 0 ? col(g, 5) : gen_tile_int(g, rn(2) ? WT_INT8 : WT_INT4, 1 + rn(2));
		if (ag->arg >= 0)
			ag->type = g->nodes[ag->arg].type;
	}
}

/* the join tables of a generated program, by join index */
static void
program_tables(const Prog *g, WarpJoinTable **out)
{
	int			i;

	for (i = 0; i < g->p.njoins; i++)
		out[i] = tables[g->tchoice[i]];
}

/* ----------------------------------------------------------------- tests */

static int	n_compared,
			n_both_failed,
			n_fallback,
			n_groups;

/* one program over one set of batches, every row driver mode */
static void
check_program(Prog *g, Batch *batches, int nb, char *fail, size_t faillen)
{
	WarpJoinTable *tabs[WARP_ROW_MAX_JOINS];
	WarpCpu    *cpu;
	WarpCpuCounters cc;
	bool		cpu_err = false;
	int			bi,
				mode;
	const char *why;

	program_tables(g, tabs);
	why = warp_row_check(&g->p, tabs);
	if (why)
	{
		snprintf(fail, faillen, "warp_row_check: %s", why);
		return;
	}
	cpu = warp_cpu_create(&g->p, tabs, &ALLOC);
	if (cpu == NULL)
	{
		snprintf(fail, faillen, "warp_cpu_create failed");
		return;
	}
	for (bi = 0; bi < nb && !cpu_err; bi++)
	{
		WarpLoadStatus ls;
		int			bad_col;
		warp_int64	bad_row;
		WarpStatus	st = warp_cpu_run_batch(cpu, batches[bi].cols, batches[bi].n, NULL,
											&ls, &bad_col, &bad_row);

		if (st != WARP_OK || ls != WARP_LOAD_OK)
			cpu_err = true;
	}
	warp_cpu_counters(cpu, &cc);

	for (mode = MODE_HASH; mode <= MODE_DIRECT; mode++)
	{
		WarpRowResult res;
		WarpRowCounts rc;
		warp_int64	rows_in;
		int			st,
					k;

		if (mode == MODE_DIRECT)
		{
			warp_int64	product = 1;

			for (k = 0; k < g->p.nkeys; k++)
			{
				if (g->p.keys[k].kind != WG_DIM)
					break;
				product *= tabs[g->p.keys[k].join]->npayloads + 1;
			}
			if (k < g->p.nkeys || product > 100000)
				continue;
		}
		st = row_driver(&g->p, tabs, batches, nb, mode, 0, &res, &rc, &rows_in);
		if (cpu_err)
		{
			if (st == WARP_OK)
				snprintf(fail, faillen, "mode %d: CPU driver failed, row driver did not", mode);
			else
				n_both_failed++;
		}
		else if (st != WARP_OK)
		{
			if (st == WARP_ROW_BAD && uses_float_agg(&g->p))
				n_fallback++;
			else
				snprintf(fail, faillen, "mode %d: row driver status %d, CPU driver ok", mode, st);
		}
		else
		{
			warp_int64	gi;

			n_compared++;
			if (res.n != warp_cpu_ngroups(cpu))
				snprintf(fail, faillen, "mode %d: %lld groups, CPU %lld", mode,
						 (long long) res.n, (long long) warp_cpu_ngroups(cpu));
			else if (rc.rows_filtered != cc.rows_filtered || rc.rows_joined != cc.rows_joined ||
					 rows_in != cc.rows_in)
				snprintf(fail, faillen, "mode %d: counters differ", mode);
			else
				for (gi = 0; gi < res.n; gi++)
					if (!same_group(&g->p, cpu, gi, &res, fail, faillen))
						break;
			n_groups += res.n;
		}
		warp_row_result_free(&res);
		if (fail[0])
			return;
	}
}

TEST(random_programs_match_cpu_driver)
{
	int			round;
	int			failures = 0;
	int			n_pre_programs = 0,
				n_pre_merged = 0,
				n_pre_never = 0;

	build_tables();
	for (round = 0; round < 40; round++)
	{
		Batch		batches[3];
		int			nb = 1 + rn(3),
					bi,
					pi;
		static const int ts_units[] = {ARROW_TIME_SECOND, ARROW_TIME_MILLISECOND,
		ARROW_TIME_MICROSECOND, ARROW_TIME_NANOSECOND};
		bool		special = round % 3 == 2;

		setup_fields(round % 2 == 1, ts_units[round % 4]);
		for (bi = 0; bi < nb; bi++)
			make_batch(&batches[bi], rn(4) == 0 ? rn(3) : 500 + rn(2600), special,
					   round % 5 == 4);
		/* some rounds read slices (arrays with an offset) */
		if (round % 4 == 3)
			for (bi = 0; bi < nb; bi++)
			{
				int64_t		start = batches[bi].n > 20 ? rn(13) : 0;
				int			c;

				for (c = 0; c < NCOLS; c++)
				{
					ArrowArray	sl;

					arrow_array_slice(&batches[bi].cols[c], start, batches[bi].n - start, &sl);
					batches[bi].orig[c] = batches[bi].cols[c];
					batches[bi].cols[c] = sl;
				}
				batches[bi].sliced = true;
				batches[bi].n -= start;
			}
		for (pi = 0; pi < 25; pi++)
		{
			Prog		g;
			char		fail[512] = "";

			gen_program(&g);
			if (g.overflow)
				continue;
			if (warp_program_validate(&g.p) != NULL)
			{
				printf("generated an invalid program: %s\n", warp_program_validate(&g.p));
				CHECK(0);
				continue;
			}
			{
				WarpRowPre	pre;

				warp_row_pre_plan(&g.p, &pre);
				n_pre_programs += pre.nquals > 0;
				n_pre_merged += pre.nquals > pre.n;
				for (bi = 0; bi < pre.n; bi++)
					n_pre_never += pre.never[bi];
			}
			check_program(&g, batches, nb, fail, sizeof(fail));
			if (fail[0])
			{
				if (failures++ < 5)
					printf("round %d program %d: %s\n", round, pi, fail);
				CHECK(fail[0] == 0);
			}
		}
		for (bi = 0; bi < nb; bi++)
			free_batch(&batches[bi]);
	}
	printf("  random programs: %d compared (%d groups), %d failed on both drivers, "
		   "%d given back (float aggregates)\n",
		   n_compared, n_groups, n_both_failed, n_fallback);
	printf("  prefiltered quals: %d programs, %d with a merged range, %d ranges never true\n",
		   n_pre_programs, n_pre_merged, n_pre_never);
	CHECK(n_compared > 1000);
	CHECK(n_both_failed > 50);
	/* the prefilter decided quals of many programs, ranges of two among them */
	CHECK(n_pre_programs > 200);
	CHECK(n_pre_merged > 20);
	CHECK(n_pre_never > 10);
}

/*
 * The tile path (warp_tile_run, the tile kernel's per-row work) against
 * the CPU driver, over programs of the tile shape: every result and every
 * row error the same.
 */
TEST(tile_programs_match_cpu_driver)
{
	int			round,
				failures = 0;

	build_tables();
	use_tile = true;
	tile_runs = 0;
	n_compared = 0;
	n_both_failed = 0;
	for (round = 0; round < 24; round++)
	{
		Batch		batches[2];
		int			nb = 1 + rn(2),
					bi,
					pi;

		setup_fields(round % 2 == 1, ARROW_TIME_MICROSECOND);
		for (bi = 0; bi < nb; bi++)
			make_batch(&batches[bi], rn(5) == 0 ? rn(3) : 300 + rn(1500), round % 3 == 2,
					   round % 5 == 4);
		for (pi = 0; pi < 25; pi++)
		{
			Prog		g;
			char		fail[512] = "";

			gen_tile_program(&g);
			if (g.overflow || warp_program_validate(&g.p) != NULL)
				continue;
			check_program(&g, batches, nb, fail, sizeof(fail));
			if (fail[0])
			{
				if (failures++ < 5)
					printf("tile round %d program %d: %s\n", round, pi, fail);
				CHECK(fail[0] == 0);
			}
		}
		for (bi = 0; bi < nb; bi++)
			free_batch(&batches[bi]);
	}
	use_tile = false;
	printf("  tile programs: %d driver runs on the tile path (%d batches pre-aggregated), "
		   "%d compared, %d failed on both\n", tile_runs, tile_block_runs, n_compared, n_both_failed);
	CHECK(tile_block_runs > 100);
	CHECK(tile_runs > 300);
	CHECK(n_compared > 300);
	CHECK(n_both_failed > 10);
}

/* a hand-written star join: every agg kind, duplicate keys, exact values */
TEST(star_join_every_aggregate)
{
	Prog		g;
	Batch		b;
	WarpJoinTable *tabs[2];
	WarpCpu    *cpu;
	WarpLoadStatus ls;
	int			bad_col;
	warp_int64	bad_row;
	WarpRowResult res;
	WarpRowCounts rc;
	warp_int64	rows_in,
				gi;
	int			mode,
				k;
	char		fail[512] = "";

	setup_fields(false, ARROW_TIME_MICROSECOND);
	make_batch(&b, 3000, false, 0);
	prog_init(&g);
	g.quals[g.p.nquals++] = node(&g, WN_CMP, WT_BOOL, WARP_CMP_GE, col(&g, 0), iconst(&g, WT_INT4, -15, false));
	g.joins[0].key_node = col(&g, 11);
	g.joins[0].table = 0;
	g.joins[1].key_node = col(&g, 11);
	g.joins[1].table = 1;
	g.p.njoins = 2;
	g.keys[0].kind = WG_DIM;
	g.keys[0].join = 1;
	g.keys[1].kind = WG_DIM;
	g.keys[1].join = 0;
	g.p.nkeys = 2;
	for (k = 0; k <= WA_SUM_INT8; k++)
	{
		WarpAggSpec *ag = &g.aggs[g.p.naggs++];

		ag->kind = k;
		ag->filter = -1;
		switch ((WarpAggKind) k)
		{
			case WA_COUNT_STAR: ag->arg = -1; break;
			case WA_SUM_INT8: ag->arg = col(&g, 1); break;
			case WA_SUM_FLOAT: ag->arg = col(&g, 2); break;
			case WA_AVG_FLOAT: ag->arg = col(&g, 8); break;
			case WA_MIN: ag->arg = col(&g, 10); break;
			case WA_MAX: ag->arg = col(&g, 5); break;
			default: ag->arg = col(&g, 3); break;
		}
		ag->type = ag->arg >= 0 ? g.nodes[ag->arg].type : WT_INT8;
	}
	g.aggs[1].filter = col(&g, 7);
	CHECK_MSG(warp_program_validate(&g.p) == NULL, warp_program_validate(&g.p));
	/* the two joins use tables 0 and 1 */
	tabs[0] = tables[0];
	tabs[1] = tables[1];
	CHECK(warp_row_check(&g.p, tabs) == NULL);
	cpu = warp_cpu_create(&g.p, tabs, &ALLOC);
	CHECK(warp_cpu_run_batch(cpu, b.cols, b.n, NULL, &ls, &bad_col, &bad_row) == WARP_OK && ls == WARP_LOAD_OK);
	CHECK(warp_cpu_ngroups(cpu) > 10);
	/* the row driver looks tables up by program index: make them match */
	for (mode = MODE_HASH; mode <= MODE_DIRECT; mode++)
	{
		CHECK(row_driver(&g.p, tabs, &b, 1, mode, 0, &res, &rc, &rows_in) == WARP_OK);
		CHECK(res.n == warp_cpu_ngroups(cpu));
		for (gi = 0; gi < warp_cpu_ngroups(cpu) && !fail[0]; gi++)
			same_group(&g.p, cpu, gi, &res, fail, sizeof(fail));
		CHECK_MSG(fail[0] == 0, fail);
		warp_row_result_free(&res);
	}

	/* a group table that cannot take the groups reports, never drops */
	CHECK(row_driver(&g.p, tabs, &b, 1, MODE_HASH, 3, &res, &rc, &rows_in) == WARP_ROW_FULL);
	warp_row_result_free(&res);
	free_batch(&b);
}

TEST(no_group_keys_and_empty_input)
{
	Prog		g;
	Batch		b;
	WarpRowResult res;
	WarpRowCounts rc;
	warp_int64	rows_in;

	setup_fields(false, ARROW_TIME_MICROSECOND);
	prog_init(&g);
	g.aggs[0].kind = WA_COUNT_STAR;
	g.aggs[0].arg = -1;
	g.aggs[0].filter = -1;
	g.aggs[1].kind = WA_SUM_INT;
	g.aggs[1].arg = col(&g, 0);
	g.aggs[1].type = WT_INT4;
	g.aggs[1].filter = -1;
	g.p.naggs = 2;
	/* like the CPU driver: no rows, no group (the final Agg makes one) */
	make_batch(&b, 0, false, 0);
	CHECK(row_driver(&g.p, NULL, &b, 1, MODE_DIRECT, 0, &res, &rc, &rows_in) == WARP_OK);
	CHECK(res.n == 0);
	warp_row_result_free(&res);
	free_batch(&b);
	make_batch(&b, 100, false, 0);
	CHECK(row_driver(&g.p, NULL, &b, 1, MODE_DIRECT, 0, &res, &rc, &rows_in) == WARP_OK);
	CHECK(res.n == 1 && res.aggs[0].count == 100);
	warp_row_result_free(&res);
	free_batch(&b);
}

TEST(float_edge_values)
{
	WarpAggSpec mn = {WA_MIN, WT_FLOAT8, 0, -1};
	WarpAggSpec mx = {WA_MAX, WT_FLOAT8, 0, -1};
	WarpAggSpec sf = {WA_SUM_FLOAT, WT_FLOAT8, 0, -1};
	WarpAggSpec s4 = {WA_SUM_FLOAT, WT_FLOAT4, 0, -1};
	WarpAggSpec si8 = {WA_SUM_INT8, WT_INT8, 0, -1};
	WarpAggState a,
				b;
	double		vals[] = {3.5, -INFINITY, INFINITY, -2.0, 1e300};
	int			i;

	/* NaN is the largest float, -Inf the smallest */
	warp_row_agg_init(&mx, &a);
	warp_row_agg_init(&mn, &b);
	for (i = 0; i < 5; i++)
	{
		CHECK(warp_row_agg_update(&mx, &a, 0, vals[i]) == WARP_OK);
		CHECK(warp_row_agg_update(&mn, &b, 0, vals[i]) == WARP_OK);
	}
	warp_row_agg_export(&mx, &a);
	warp_row_agg_export(&mn, &b);
	CHECK(a.fval == INFINITY && b.fval == -INFINITY && a.count == 5);
	warp_row_agg_init(&mx, &a);
	CHECK(warp_row_agg_update(&mx, &a, 0, NAN) == WARP_OK);
	CHECK(warp_row_agg_update(&mx, &a, 0, INFINITY) == WARP_OK);
	warp_row_agg_export(&mx, &a);
	CHECK(isnan(a.fval));
	/* -0 in min/max, non-finite or huge sums: given back */
	warp_row_agg_init(&mn, &a);
	CHECK(warp_row_agg_update(&mn, &a, 0, -0.0) == WARP_ROW_BAD);
	warp_row_agg_init(&sf, &a);
	CHECK(warp_row_agg_update(&sf, &a, 0, NAN) == WARP_ROW_BAD);
	CHECK(warp_row_agg_update(&sf, &a, 0, 1e300) == WARP_ROW_BAD);
	CHECK(warp_row_agg_update(&sf, &a, 0, -0.0) == WARP_OK);
	warp_row_agg_export(&sf, &a);
	CHECK(a.fval == 0.0 && signbit(a.fval));	/* sum of -0 is -0 */
	CHECK(warp_row_agg_update(&s4, &a, 0, 1.0) == WARP_ROW_BAD);
	/* 128-bit sums carry and borrow across the word */
	warp_row_agg_init(&si8, &a);
	warp_row_agg_update(&si8, &a, WARP_INT64_MAX, 0);
	warp_row_agg_update(&si8, &a, WARP_INT64_MAX, 0);
	warp_row_agg_update(&si8, &a, 5, 0);
	CHECK(warp_agg_wide(&a) == (warp_int128) WARP_INT64_MAX * 2 + 5);
	warp_row_agg_update(&si8, &a, WARP_INT64_MIN, 0);
	warp_row_agg_update(&si8, &a, WARP_INT64_MIN, 0);
	warp_row_agg_update(&si8, &a, WARP_INT64_MIN, 0);
	CHECK(warp_agg_wide(&a) == (warp_int128) WARP_INT64_MAX * 2 + 5 + (warp_int128) WARP_INT64_MIN * 3);
	b = a;
	warp_row_agg_merge(&si8, &a, &b);
	CHECK(warp_agg_wide(&a) == ((warp_int128) WARP_INT64_MAX * 2 + 5 + (warp_int128) WARP_INT64_MIN * 3) * 2);
	CHECK(a.count == 12);
	/* half floats */
	CHECK(warp_row_half(0x3c00) == 1.0 && warp_row_half(0xc000) == -2.0);
	CHECK(warp_row_half(0x0001) == ldexp(1.0, -24) && isinf(warp_row_half(0x7c00)));
	CHECK(isnan(warp_row_half(0x7e00)) && warp_row_half(0x7bff) == 65504.0);
}

/* the ranges warp_row_pre_plan makes of hand-written leading quals */
TEST(prefilter_ranges)
{
	Prog		g;
	WarpRowPre	pre;
	int			c;

	/* BETWEEN's pair on one column, written const-first, then c3 = 7 */
	prog_init(&g);
	g.quals[g.p.nquals++] = node(&g, WN_CMP, WT_BOOL, WARP_CMP_LE, iconst(&g, WT_INT4, -4, false), col(&g, 0));
	g.quals[g.p.nquals++] = node(&g, WN_CMP, WT_BOOL, WARP_CMP_LT, col(&g, 0), iconst(&g, WT_INT4, 9, false));
	g.quals[g.p.nquals++] = node(&g, WN_CMP, WT_BOOL, WARP_CMP_EQ, col(&g, 3), iconst(&g, WT_INT4, 7, false));
	warp_row_pre_plan(&g.p, &pre);
	CHECK(pre.nquals == 3 && pre.n == 2);
	CHECK(pre.col[0] == 0 && !pre.never[0] && pre.lo[0] == -4 && pre.width[0] == 12);
	CHECK(pre.col[1] == 3 && !pre.never[1] && pre.lo[1] == 7 && pre.width[1] == 0);

	/* a NULL bound stays "never" whatever bound on the column follows */
	prog_init(&g);
	g.quals[g.p.nquals++] = node(&g, WN_CMP, WT_BOOL, WARP_CMP_GE, col(&g, 0), iconst(&g, WT_INT4, 0, true));
	g.quals[g.p.nquals++] = node(&g, WN_CMP, WT_BOOL, WARP_CMP_LE, col(&g, 0), iconst(&g, WT_INT4, 5, false));
	warp_row_pre_plan(&g.p, &pre);
	CHECK(pre.nquals == 2 && pre.n == 1 && pre.never[0]);

	/* no value below INT64_MIN; disjoint bounds: never */
	prog_init(&g);
	g.quals[g.p.nquals++] = node(&g, WN_CMP, WT_BOOL, WARP_CMP_LT, col(&g, 1), iconst(&g, WT_INT8, INT64_MIN, false));
	g.quals[g.p.nquals++] = node(&g, WN_CMP, WT_BOOL, WARP_CMP_GT, col(&g, 0), iconst(&g, WT_INT4, 5, false));
	g.quals[g.p.nquals++] = node(&g, WN_CMP, WT_BOOL, WARP_CMP_LT, col(&g, 0), iconst(&g, WT_INT4, 6, false));
	warp_row_pre_plan(&g.p, &pre);
	CHECK(pre.nquals == 3 && pre.n == 2 && pre.never[0] && pre.never[1]);

	/* <> and a float comparison end the prefix; later quals are the interpreter's */
	prog_init(&g);
	g.quals[g.p.nquals++] = node(&g, WN_CMP, WT_BOOL, WARP_CMP_GT, col(&g, 0), iconst(&g, WT_INT4, 1, false));
	g.quals[g.p.nquals++] = node(&g, WN_CMP, WT_BOOL, WARP_CMP_NE, col(&g, 3), iconst(&g, WT_INT4, 2, false));
	g.quals[g.p.nquals++] = node(&g, WN_CMP, WT_BOOL, WARP_CMP_GT, col(&g, 3), iconst(&g, WT_INT4, 1, false));
	warp_row_pre_plan(&g.p, &pre);
	CHECK(pre.nquals == 1 && pre.n == 1 && pre.lo[0] == 2 && pre.width[0] == (warp_uint64) INT64_MAX - 2);
	prog_init(&g);
	g.quals[g.p.nquals++] = node(&g, WN_CMP, WT_BOOL, WARP_CMP_GT, col(&g, 2), fconst(&g, WT_FLOAT8, 1.0, false));
	warp_row_pre_plan(&g.p, &pre);
	CHECK(pre.nquals == 0 && pre.n == 0);

	/* at most WARP_ROW_MAX_PRE ranges: quals on alternating columns */
	prog_init(&g);
	for (c = 0; c < WARP_ROW_MAX_PRE + 2; c++)
		g.quals[g.p.nquals++] = node(&g, WN_CMP, WT_BOOL, WARP_CMP_GE, col(&g, c % 2 ? 3 : 0),
									 iconst(&g, WT_INT4, c, false));
	warp_row_pre_plan(&g.p, &pre);
	CHECK(pre.nquals == WARP_ROW_MAX_PRE && pre.n == WARP_ROW_MAX_PRE);
}

/* rows r (nk keys each) in a canonical order, for comparing multisets */
static int	cmp_nk;

static int
cmp_row(const void *a, const void *b)
{
	const warp_int64 *x = a,
			   *y = b;
	int			k;

	for (k = 0; k < 2 * cmp_nk; k++)
		if (x[k] != y[k])
			return x[k] < y[k] ? -1 : 1;
	return 0;
}

/* n rows as (key, NULL flag) pairs, sorted: keys NULL are 0 */
static warp_int64 *
row_set(int nk, warp_int64 n, const warp_int64 *keys, const warp_uint8 *knull,
		const WarpCpu *cpu)
{
	warp_int64 *out = malloc(sizeof(warp_int64) * (2 * nk * n + 1));
	warp_int64	r;
	int			k;

	for (r = 0; r < n; r++)
		for (k = 0; k < nk; k++)
		{
			bool		isnull;
			warp_int64	v = cpu ? warp_cpu_group_key(cpu, r, k, &isnull) : keys[r * nk + k];

			if (!cpu)
				isnull = knull[r * nk + k] != 0;
			out[(r * nk + k) * 2] = isnull ? 0 : v;
			out[(r * nk + k) * 2 + 1] = isnull;
		}
	cmp_nk = nk;
	qsort(out, n, sizeof(warp_int64) * 2 * nk, cmp_row);
	return out;
}

/*
 * The number of rows of set (sorted pairs, n >= the limit) whose first
 * ORDER BY key sorts strictly before the limit-th best one (*kv, *kn):
 * the rows every driver must have kept.
 */
static warp_int64
topn_before(const WarpProgram *p, const warp_int64 *set, warp_int64 n, warp_int64 *kv,
			warp_uint8 *kn)
{
	WarpTopnOrder o = warp_topn_order(p);
	int			nk = p->nkeys;
	warp_int64	r,
				below;
	warp_int64 *keys = malloc(sizeof(warp_int64) * (n * nk + 1));
	warp_uint8 *knull = malloc(n * nk + 1);
	warp_int32 *idx = malloc(sizeof(warp_int32) * (n + 1));

	for (r = 0; r < n * nk; r++)
	{
		keys[r] = set[2 * r];
		knull[r] = (warp_uint8) set[2 * r + 1];
	}
	(void) warp_topn_compact_rows(p, keys, knull, n, idx, kv, kn);
	for (below = 0, r = 0; r < n; r++)
		below += warp_topn_cmp(&o, set[2 * (r * nk + o.key)], (warp_uint8) set[2 * (r * nk + o.key) + 1],
							   *kv, *kn) < 0;
	free(keys);
	free(knull);
	free(idx);
	return below;
}

/*
 * Row mode (WarpJoin, WarpScan): the GPU driver's append form, run by the
 * row evaluator, returns the CPU driver's rows (the same multiset); under
 * a Top-N both keep every row whose first ORDER BY key sorts before the
 * limit-th best one, and at least the limit rows.
 */
TEST(row_mode_programs_match_cpu_driver)
{
	int			round,
				compared = 0,
				topn = 0,
				failures = 0;

	build_tables();
	for (round = 0; round < 30; round++)
	{
		Batch		batches[2];
		int			nb = 1 + rn(2),
					bi,
					pi;

		setup_fields(round % 2 == 1, ARROW_TIME_MICROSECOND);
		for (bi = 0; bi < nb; bi++)
			make_batch(&batches[bi], 200 + rn(1500), round % 3 == 2, 0);
		for (pi = 0; pi < 20; pi++)
		{
			Prog		g;
			WarpJoinTable *tabs[WARP_ROW_MAX_JOINS];
			WarpCpu    *cpu;
			WarpRowResult res;
			WarpRowCounts rc;
			warp_int64	rows_in;
			bool		cpu_err = false;
			int			st,
						k;

			gen_program(&g);
			g.p.naggs = 0;
			g.p.emit_rows = 1;
			g.p.topn_limit = 0;
			for (k = 0; k < g.p.nkeys && rn(2); k++)
				if (g.p.keys[k].kind == WG_FACT)
				{
					g.p.topn_limit = 1 + rn(60);
					g.p.topn_key = k;
					g.p.topn_desc = rn(2);
					g.p.topn_nulls_first = rn(2);
					break;
				}
			if (g.overflow || warp_program_validate(&g.p) != NULL)
				continue;
			program_tables(&g, tabs);
			if (warp_row_check(&g.p, tabs) != NULL)
				continue;
			cpu = warp_cpu_create(&g.p, tabs, &ALLOC);
			CHECK(cpu != NULL);
			for (bi = 0; bi < nb && !cpu_err; bi++)
			{
				WarpLoadStatus ls;
				int			bad_col;
				warp_int64	bad_row;

				cpu_err = warp_cpu_run_batch(cpu, batches[bi].cols, batches[bi].n, NULL,
											 &ls, &bad_col, &bad_row) != WARP_OK ||
					ls != WARP_LOAD_OK;
			}
			st = row_driver(&g.p, tabs, batches, nb, MODE_APPEND, 0, &res, &rc, &rows_in);
			if (cpu_err || st != WARP_OK)
			{
				/* a row that fails fails on both (or the GPU gives back) */
				if (cpu_err != (st != WARP_OK) && !(st == WARP_ROW_BAD && !cpu_err))
				{
					if (failures++ < 5)
						printf("round %d program %d: CPU %s, rows %d\n", round, pi,
							   cpu_err ? "failed" : "ok", st);
					CHECK(0);
				}
			}
			else
			{
				int			nk = g.p.nkeys;
				warp_int64	nc = warp_cpu_ngroups(cpu);
				warp_int64 *a = row_set(nk, nc, NULL, NULL, cpu);
				warp_int64 *b = row_set(nk, res.n, res.keys, res.knull, NULL);
				bool		ok;

				if (g.p.topn_limit == 0)
					ok = nc == res.n && memcmp(a, b, sizeof(warp_int64) * 2 * nk * nc) == 0;
				else
				{
					warp_int64	kv,
								tv;
					warp_uint8	kn,
								tn;
					warp_int64	ba = nc >= g.p.topn_limit ? topn_before(&g.p, a, nc, &kv, &kn) : nc;
					warp_int64	bb = res.n >= g.p.topn_limit ? topn_before(&g.p, b, res.n, &tv, &tn) : res.n;

					/* same rows strictly before the limit-th key, and as many
					 * candidates as the limit (or every row) */
					ok = ba == bb && (nc >= g.p.topn_limit) == (res.n >= g.p.topn_limit);
					if (ok && nc >= g.p.topn_limit)
						ok = kv == tv && kn == tn;
					topn++;
				}
				if (!ok)
				{
					if (failures++ < 5)
						printf("round %d program %d: %lld rows, CPU %lld (top-n %lld)\n", round, pi,
							   (long long) res.n, (long long) nc, (long long) g.p.topn_limit);
					CHECK(0);
				}
				else
					compared++;
				free(a);
				free(b);
			}
			warp_row_result_free(&res);
		}
		for (bi = 0; bi < nb; bi++)
			free_batch(&batches[bi]);
	}
	printf("  row mode: %d programs compared (%d under a Top-N)\n", compared, topn);
	CHECK(compared > 200);
	CHECK(topn > 30);
}

TEST(check_rejects_what_it_cannot_do)
{
	Prog		g;
	WarpJoinTable bad;
	WarpJoinTable *tabs[1];
	int			i,
				x;

	setup_fields(false, ARROW_TIME_MICROSECOND);
	prog_init(&g);
	g.aggs[0].kind = WA_SUM_FLOAT;
	g.aggs[0].arg = col(&g, 8);
	g.aggs[0].type = WT_FLOAT4;
	g.aggs[0].filter = -1;
	g.p.naggs = 1;
	CHECK(warp_program_validate(&g.p) == NULL);
	CHECK(warp_row_check(&g.p, NULL) != NULL);	/* sum(float4) */

	/* a chain of 40 additions is deeper than the evaluator's stack */
	prog_init(&g);
	x = col(&g, 0);
	for (i = 0; i < 40; i++)
		x = node(&g, WN_ARITH, WT_INT4, WARP_ARITH_ADD, x, iconst(&g, WT_INT4, 1, false));
	g.quals[g.p.nquals++] = node(&g, WN_CMP, WT_BOOL, WARP_CMP_GT, x, iconst(&g, WT_INT4, 0, false));
	CHECK(warp_program_validate(&g.p) == NULL);
	CHECK(warp_row_check(&g.p, NULL) != NULL);

	/* a join table whose chain loops */
	build_tables();
	prog_init(&g);
	g.joins[0].key_node = col(&g, 11);
	g.joins[0].table = 0;
	g.p.njoins = 1;
	bad = *tables[1];
	bad.next = malloc(sizeof(warp_int32) * bad.nrows);
	memcpy(bad.next, tables[1]->next, sizeof(warp_int32) * bad.nrows);
	tabs[0] = &bad;
	CHECK(warp_row_check(&g.p, tabs) == NULL);
	bad.next[bad.nrows - 1] = 0;
	CHECK(warp_row_check(&g.p, tabs) != NULL);
	free(bad.next);
	CHECK(warp_row_max_chain(tables[1]) >= 2 && warp_row_max_chain(tables[0]) == 1);
}

/*
 * Arrow dates and timestamps outside PostgreSQL's ranges are refused at
 * load (both drivers convert with warp_row_convert): dates JD 0
 * (4714-11-24 BC) up to 5874897-12-31, timestamps 4714-11-24 BC up to
 * 294276-12-31 23:59:59.999999.  Limits from the calendar, not from the
 * engine: JD(1970-01-01) = 2440588, JD(5874898-01-01) = 2147483494.
 */
TEST(date_timestamp_limits)
{
	warp_int64	out;
	const warp_int64 jd_unix = 2440588;
	const warp_int64 last_day = 2147483494 - 1 - jd_unix;	/* from 1970 */
	const warp_int64 first_day = -jd_unix;
	const warp_int64 day_us = INT64_C(86400000000);

	CHECK(warp_row_convert(WRC_DATE_DAY, last_day, &out) && out == last_day - 10957);
	CHECK(!warp_row_convert(WRC_DATE_DAY, last_day + 1, &out));
	CHECK(!warp_row_convert(WRC_DATE_DAY, INT32_MAX, &out));
	CHECK(warp_row_convert(WRC_DATE_DAY, first_day, &out) && out == first_day - 10957);
	CHECK(!warp_row_convert(WRC_DATE_DAY, first_day - 1, &out));
	CHECK(!warp_row_convert(WRC_DATE_DAY, INT32_MIN, &out));
	CHECK(warp_row_convert(WRC_DATE_MS, last_day * 86400000 + 86399999, &out) &&
		  out == last_day - 10957);
	CHECK(!warp_row_convert(WRC_DATE_MS, (last_day + 1) * 86400000, &out));
	CHECK(warp_row_convert(WRC_DATE_MS, first_day * 86400000, &out));
	CHECK(!warp_row_convert(WRC_DATE_MS, first_day * 86400000 - 1, &out));
	/* timestamps: microseconds since 1970 as int64 end before PostgreSQL's
	 * 294277-01-01 (as in arrow_fdw, a unit that overflows int64
	 * microseconds is out of range); the first instant of JD 0 */
	{
		const warp_int64 begin_us = -jd_unix * day_us;

		CHECK(warp_row_convert(WRC_TS_US, INT64_MAX, &out) && out == INT64_MAX - 10957 * day_us);
		CHECK(warp_row_convert(WRC_TS_US, begin_us, &out));
		CHECK(!warp_row_convert(WRC_TS_US, begin_us - 1, &out));
		CHECK(!warp_row_convert(WRC_TS_MS, begin_us / 1000 - 1, &out));
		CHECK(warp_row_convert(WRC_TS_NS, INT64_MIN, &out));
		CHECK(!warp_row_convert(WRC_TS_S, INT64_MAX / 1000, &out));
	}
}

int
main(void)
{
	RUN(random_programs_match_cpu_driver);
	RUN(tile_programs_match_cpu_driver);
	RUN(row_mode_programs_match_cpu_driver);
	RUN(star_join_every_aggregate);
	RUN(no_group_keys_and_empty_input);
	RUN(float_edge_values);
	RUN(prefilter_ranges);
	RUN(check_rejects_what_it_cannot_do);
	RUN(date_timestamp_limits);
	UNIT_EXIT();
}
