"""Randomized differential test of pg_warp's star-join pre-aggregation.

A seeded RNG (PGWARP_DIFF_SEED, default below) builds a small star schema:
one fact table of a few thousand rows (int2/int4/int8/float4/float8/date/
timestamp/bool, numeric(12,2)/numeric(18,0) and text columns, NULL-heavy columns,
extreme values, NaN / -0 / Infinity) and six dimensions (int4, int2, int8, date and text keys,
and one joined by two columns (int4, int2), with duplicate and NULL keys, text and integer
attributes).  It is written once
as Arrow files (pyarrow, with per-batch min/max statistics, so that batches
get skipped) and once as CSV (pyarrow.csv) loaded into heap tables.

Then thousands of random queries (filters that are random expression trees
over fact columns, 0-3 joins (inner; left, with dimension quals in ON or in
WHERE; semi as EXISTS or IN; anti as NOT EXISTS; NOT IN, which stays
PostgreSQL's), 0-3 group keys from dimension or fact
columns and fact expressions (date_trunc, extract, a text column among
them), 1-4
aggregates of the kinds the engine computes (numeric columns and numeric
arithmetic included),
comparisons of numeric and text columns with constants (text: =, <>,
IN, NOT IN, [NOT] LIKE, ordering under C), date_part in float
expressions, FILTER, HAVING, ORDER BY all keys + LIMIT) each run
  * on the Arrow tables with pg_warp on, and
  * on the heap tables with pg_warp.enabled = off (the oracle).
Both succeed: equal results (sorted; float sums and averages to a relative
1e-9, everything else exactly, numeric with its display scale, -0 = 0,
NaN = NaN).  Both fail: the same
SQLSTATE.  Anything else fails the test, which prints the seed and every
failing SQL.  At least 60% of the queries must get the WarpPreAgg plan, and
at least half must succeed on the oracle, so that the test cannot pass by
never offloading or by generating nothing but errors.

A tenth of the queries use DISTINCT aggregates and min/max (the engine's
two-level grouping), most of those with plain aggregates beside them
(combined above the engine by pg_warp_merge); a few group by ROLLUP, CUBE
or GROUPING SETS (the grouping sets Agg above the engine combines the
partial states per set, through pg_warp_merge too).  Some generated queries use
things the engine does not compute (NOT IN, abs()), on purpose: whatever
plan they get, the answers must not change.

PostgreSQL's own answer can depend on its plan when rows would fail: a
LIMIT over a sorted aggregation stops early, a sorted aggregation computes
every group key before any aggregate argument, a hashed one goes row by
row, and a nested loop over a materialized fact scan evaluates every fact
qual before the first row is aggregated.  A pg_warp result is accepted
when it equals PostgreSQL's under one of those plans (ORACLE_PLANS, with and
without the LIMIT; an error also against the query without its ORDER BY,
which lets PostgreSQL hash the groups and sort them afterwards).

Session settings (cost constants that make the engine's plan win on these
small tables, no parallel workers, no merge joins) and the comparison rules
come from test_engine_targeted.py.
"""
import datetime
from decimal import Decimal
import math
import os
import random
import re

import pytest

from pwhelpers import gpud_status
from test_engine_targeted import (D, INF, NAN, REL_TOL, TS, Session, Star, _short, diagnose,
                                  execute_both, plan_of, run, same_result, same_value, set_side)

SEED = int(os.environ.get("PGWARP_DIFF_SEED", "271828"))
NFACT = 4000
BATCH_ROWS = 1100   # a full vector of 1024 rows and a short one per batch
NCHUNKS = 10
QUERIES_PER_CHUNK = 300
MIN_OFFLOADED = 0.60
MIN_ORACLE_OK = 0.50


# --------------------------------------------------------------- the data

def gen_data(rng):
    """(fact rows, dims) as Python values; see the module docstring"""
    def maybe(p_null, v):
        return None if rng.random() < p_null else v

    dates = [D(2020, 1, 1) + datetime.timedelta(days=i) for i in range(30)]
    fact = []
    for i in range(NFACT):
        # id, i8 and d grow with the row: range quals select runs of rows
        k1 = maybe(0.08, rng.randint(-3, 45))
        k2 = maybe(0.05, rng.choice([rng.randint(0, 24)] * 9 + [4294967296 + rng.randint(0, 3)]))
        k3 = maybe(0.10, rng.randint(0, 17))
        kd = maybe(0.05, rng.choice(dates + [D(2019, 12, 31), D(2021, 6, 1)]))
        r = rng.random()
        if r < 0.004:
            i2 = rng.choice([32767, -32768, 32766])
        else:
            i2 = rng.randint(-100, 100)
        i2 = maybe(0.30, i2)
        r = rng.random()
        if r < 0.002:
            i4 = rng.choice([2147483647, -2147483648, 2147483646])
        elif r < 0.10:
            i4 = 0
        else:
            i4 = rng.randint(-1000, 1000)
        i4 = maybe(0.10, i4)
        r = rng.random()
        if r < 0.002:
            i8 = rng.choice([9223372036854775807, -9223372036854775808])
        else:
            i8 = i * 1000003 + rng.randint(-5000, 5000) - 2000000000
        i8 = maybe(0.10, i8)
        r = rng.random()
        if r < 0.01:
            f4 = rng.choice([NAN, INF, -INF, -0.0, 3.4028234663852886e38, 1e-45])
        else:
            f4 = rng.randint(-200, 200) * 0.25
        f4 = maybe(0.15, f4)
        r = rng.random()
        if r < 0.012:
            f8 = rng.choice([NAN, INF, -INF, -0.0, 0.0, 1e150, 5e-324])
        else:
            f8 = rng.uniform(-1e4, 1e4)
        f8 = maybe(0.15, f8)
        r = rng.random()
        if r < 0.003:
            d = rng.choice([D(1, 1, 1), D(9999, 12, 31)])
        else:
            d = D(1995, 1, 1) + datetime.timedelta(days=(i * 3) // 2 + rng.randint(0, 40))
        d = maybe(0.10, d)
        r = rng.random()
        if r < 0.003:
            ts = rng.choice([TS(1, 1, 1), TS(9999, 12, 31, 23, 59, 59, 999999)])
        else:
            ts = TS(2000, 1, 1) + datetime.timedelta(hours=rng.randint(0, 400) * 7,
                                                     microseconds=rng.choice([0, 0, 1, 999999]))
        ts = maybe(0.10, ts)
        b = maybe(0.20, rng.random() < 0.5)
        n4 = maybe(0.85, rng.randint(-5, 5))
        # numeric(12,2) and numeric(18,0): extremes whose sums pass 2^63
        m2 = maybe(0.12, Decimal(rng.randint(-99999999, 99999999)) / 100
                   if rng.random() < 0.97 else Decimal(rng.choice([9999999999, -9999999999])) + Decimal("0.99"))
        m0 = maybe(0.12, rng.choice([999999999999999999, -999999999999999999])
                   if rng.random() < 0.05 else rng.randint(-10 ** 6, 10 ** 6))
        m0 = None if m0 is None else Decimal(m0)
        tx = maybe(0.10, rng.choice(TEXTS))
        # a timestamptz next to ts (no draw of its own: the other columns of
        # a seed stay as they were), read in each chunk's TimeZone
        tz = None if ts is None else (
            ts.replace(tzinfo=datetime.timezone.utc) +
            (datetime.timedelta(minutes=(i * 37) % 1440) if ts.year < 9999 else datetime.timedelta(0)))
        # a numeric(34,4) column (wider than 18 digits: 128-bit in the
        # engine), also without a draw of its own
        mw = None if m0 is None or m2 is None else m0 * 10 ** 11 + m2
        fact.append((i, k1, k2, k3, kd, i2, i4, i8, f4, f8, d, ts, b, n4, m2, m0, tx, tz, mw))

    names = ["n%02d" % j for j in range(18)] + [None, "", "\u00e9", "e\u0301", "\u540d\u524d"]
    d1 = [(k, rng.choice(names), maybe(0.1, rng.randint(0, 4))) for k in range(40)]
    d1 += [(5, "dup5", 1), (6, "dup6", None), (6, "n01", 2), (None, "nullkey", 0)]
    d2 = [(k, "c%d" % (k % 6), maybe(0.1, rng.randint(-10, 10) * 1000000000)) for k in range(20)]
    d2 += [(3, "c3b", 7), (None, "c0", 1)]
    d3 = [(k, maybe(0.05, "l%d" % (k % 7)), maybe(0.2, rng.randint(0, 3))) for k in range(16)]
    d3 += [(4294967297, "big", 1), (2, "l2dup", 2), (-9223372036854775808, "min", 0)]
    d4 = [(dt, ["Jan", "Feb"][dt.month - 1], dt.year) for dt in dates]
    d4 += [(dates[3], "Jan-dup", 2020), (None, "none", None)]
    # a text-keyed dimension (joined on f.tx) and one joined by two columns
    d5 = [(t, rng.randint(0, 3)) for t in TEXTS] + [("AIR", 9), (None, 7), ("zz", 1)]
    d6 = [(a, b, "p%d" % ((a + b) % 5)) for a in range(0, 40, 2) for b in range(0, 16, 3)]
    d6 += [(None, 1, "nulla"), (2, None, "nullb"), (4, 3, "dupx")]
    return fact, (d1, d2, d3, d4, d5, d6)


FACT_COLS = [("id", "int4"), ("k1", "int4"), ("k2", "int8"), ("k3", "int2"), ("kd", "date"),
             ("i2", "int2"), ("i4", "int4"), ("i8", "int8"), ("f4", "float4"), ("f8", "float8"),
             ("d", "date"), ("ts", "timestamp"), ("b", "bool"), ("n4", "int4"),
             ("m2", "numeric(12,2)"), ("m0", "numeric(18,0)"), ("tx", "text"),
             ("tz", "timestamptz"), ("mw", "numeric(34,4)")]
D1_COLS = [("k", "int4"), ("name", "text"), ("grp", "int4")]
D2_COLS = [("k", "int2"), ("cat", "text"), ("w", "int8")]
D3_COLS = [("k", "int8"), ("label", "text"), ("z", "int4")]
D4_COLS = [("dk", "date"), ("month", "text"), ("yr", "int4")]
D5_COLS = [("t", "text"), ("tg", "int4")]
D6_COLS = [("a", "int4"), ("b", "int2"), ("lab", "text")]


@pytest.fixture(scope="module")
def star():
    sess = Session()
    rng = random.Random(SEED)
    fact, (d1, d2, d3, d4, d5, d6) = gen_data(rng)
    s = Star(sess, "diff")
    # per-batch min/max statistics: arrow_fdw skips batches (only on quals
    # that cannot fail, so no error a heap scan raises is skipped)
    s.table("f", FACT_COLS, fact, batch_rows=BATCH_ROWS, stats=True)
    s.table("d1", D1_COLS, d1, arrow=True, stats=True)
    s.table("d2", D2_COLS, d2, arrow=False)
    s.table("d3", D3_COLS, d3, arrow=True)
    s.table("d4", D4_COLS, d4, arrow=False)
    s.table("d5", D5_COLS, d5, arrow=True)
    s.table("d6", D6_COLS, d6, arrow=False)
    yield s
    s.close()
    sess.close()


# --------------------------------------------------------- the generator

INT_COLS = {"i2": "int2", "i4": "int4", "i8": "int8", "n4": "int4", "k1": "int4", "k2": "int8",
            "k3": "int2", "id": "int4"}
RANK = {"int2": 0, "int4": 1, "int8": 2}
BY_RANK = ["int2", "int4", "int8"]

JOINS = {
    "d1": ("f.k1 = d1.k", ["d1.name", "d1.grp", "d1.k"],
           ["d1.grp IN (0, 1, 2)", "d1.name LIKE 'n1%'", "d1.grp IS NOT NULL", "d1.k < 30",
            "d1.name IS NULL OR d1.grp = 3", "d1.name = 'n05' OR d1.name = ''",
            "d1.name = '\u00e9' OR d1.name = 'dup5'", "d1.name <> 'e\u0301'"]),
    "d2": ("f.k2 = d2.k", ["d2.cat", "d2.w"],
           ["d2.cat <> 'c0'", "d2.w > 0", "d2.k BETWEEN 2 AND 12", "d2.cat IN ('c1', 'c3b')"]),
    "d3": ("f.k3 = d3.k", ["d3.label", "d3.z"],
           ["d3.z IS NOT NULL", "d3.label >= 'l3'", "d3.k % 2 = 0", "coalesce(d3.z, 0) < 2"]),
    "d4": ("f.kd = d4.dk", ["d4.month", "d4.yr"],
           ["d4.month = 'Jan'", "d4.dk > date '2020-01-10'", "d4.yr = 2020"]),
    # a text join key; a dimension joined by two columns (int4, int2)
    "d5": ("f.tx = d5.t", ["d5.tg", "d5.t"], ["d5.tg > 0", "d5.t <> 'MAIL'", "d5.t LIKE 'A%'"]),
    "d6": ("f.k1 = d6.a AND f.k3 = d6.b", ["d6.lab"], ["d6.lab <> 'p0'", "d6.a < 20", "d6.b IS NOT NULL"]),
}


# fact text values: equality is byte equality (deterministic collation)
TEXTS = ["AIR", "MAIL", "SHIP", "", "air", "AIR ", "\u00e9", "e\u0301", "\u540d"]
LIKE_PATTERNS = ["A%", "%A%", "_", "__", "%IR", "%I_", "e_", "", "%", "_%_", "%\u0301", "a__"]

TRUNC_UNITS = ["microseconds", "milliseconds", "second", "minute", "hour", "day", "week", "month",
               "quarter", "year", "decade", "century", "millennium"]
TS_UNITS = TRUNC_UNITS + ["dow", "isodow", "doy", "isoyear", "epoch"]
DATE_UNITS = ["day", "week", "month", "quarter", "year", "decade", "century", "millennium", "dow",
              "isodow", "doy", "isoyear", "epoch", "julian"]


VAR_FUNCS = ["var_samp", "var_pop", "variance", "stddev", "stddev_samp", "stddev_pop"]


class Gen:
    def __init__(self, rng):
        self.rng = rng
        self.int_aggs = 0
        self.in_lists = 0

    def long_list(self, vals, extra):
        """every third IN list made longer than 8 values with extra (which
        the engine decides as one set lookup), by a counter: the random
        stream, and so every other query of a seed, stays as it was"""
        self.in_lists += 1
        return vals + extra if self.in_lists % 3 == 0 else vals

    def pick(self, *xs):
        return self.rng.choice(xs)

    def chance(self, p):
        return self.rng.random() < p

    # ---- integers: (sql, type)
    def int_const(self, t=None):
        r = self.rng.random()
        if t is None:
            t = self.pick("int2", "int4", "int4", "int4", "int8")
        if r < 0.08:
            v = {"int2": self.pick(32767, -32768), "int4": self.pick(2147483647, -2147483648),
                 "int8": self.pick(9223372036854775807, -9223372036854775808)}[t]
        elif r < 0.2:
            v = self.pick(0, 1, -1, 2)
        else:
            v = self.rng.randint(-120, 120)
        if t == "int4" and -2147483648 < v:
            return ("%d" % v if v >= 0 else "(%d)" % v), t
        return "'%d'::%s" % (v, t), t

    def int_expr(self, depth):
        if depth <= 0 or self.chance(0.35):
            if self.chance(0.75):
                c = self.pick(*INT_COLS)
                return "f." + c, INT_COLS[c]
            return self.int_const()
        r = self.rng.random()
        if r < 0.45:
            a, ta = self.int_expr(depth - 1)
            if self.chance(0.5):
                b, tb = self.int_const()
            else:
                b, tb = self.int_expr(depth - 1)
            op = self.pick("+", "-", "*", "+", "-", "/", "%")
            if op in "/%" and self.chance(0.6):
                b = "NULLIF(%s, '0'::%s)" % (b, tb)      # mostly avoid a zero divisor
            t = BY_RANK[max(RANK[ta], RANK[tb])]
            return "(%s %s %s)" % (a, op, b), t
        if r < 0.52:
            a, ta = self.int_expr(depth - 1)
            return "(- %s)" % a, ta
        if r < 0.64:
            t = self.pick("int2", "int4", "int8")
            if self.chance(0.3):
                a, _ = self.float_expr(depth - 1)
            else:
                a, _ = self.int_expr(depth - 1)
            return "(%s)::%s" % (a, t), t
        if r < 0.76:
            a, ta = self.int_expr(depth - 1)
            b, tb = self.int_expr(depth - 1)
            t = BY_RANK[max(RANK[ta], RANK[tb])]
            if self.chance(0.6):
                return "CASE WHEN %s THEN %s ELSE %s END" % (self.bool_expr(depth - 1), a, b), t
            if self.chance(0.5):
                # CASE x WHEN ...: x compared with each value in turn
                x, _ = self.int_expr(depth - 1)
                return "CASE %s WHEN %s THEN %s WHEN %s THEN %s%s END" % (
                    x, self.int_const()[0], a, self.int_const()[0], b,
                    self.pick("", " ELSE 0", " ELSE NULL")), t
            return "CASE WHEN %s THEN %s WHEN %s THEN %s END" % (
                self.bool_expr(depth - 1), a, self.bool_expr(depth - 1), b), t
        if r < 0.88:
            a, ta = self.int_expr(depth - 1)
            b, tb = self.int_expr(depth - 1)
            t = BY_RANK[max(RANK[ta], RANK[tb])]
            return "COALESCE(%s, %s)" % (a, b), t
        a, ta = self.int_expr(depth - 1)
        b, _ = self.int_const(ta)
        return "NULLIF(%s, %s)" % (a, b), ta

    # ---- floats: (sql, type)
    def float_const(self, t=None):
        t = t or self.pick("float4", "float8", "float8")
        v = self.pick("0", "1", "-1", "0.5", "2.25", "-0", "NaN", "Infinity", "-Infinity", "100",
                      "1e-3", "1e300" if t == "float8" else "1e30", "%d" % self.rng.randint(-50, 50))
        return "'%s'::%s" % (v, t), t

    def float_expr(self, depth, linear=False):
        """linear: only what keeps float4 multiples of 1/4 exact (float4
        sums are then exact in any order)"""
        if depth <= 0 or self.chance(0.35):
            if not linear and self.chance(0.08):
                return "date_part('%s', f.ts)" % self.pick(*TS_UNITS), "float8"
            if self.chance(0.75):
                c = self.pick("f4", "f8") if not linear else "f4"
                return "f." + c, {"f4": "float4", "f8": "float8"}[c]
            if linear:
                return "'%s'::float4" % self.pick("0", "1", "-2.5", "0.25", "10"), "float4"
            return self.float_const()
        r = self.rng.random()
        if r < 0.45:
            a, ta = self.float_expr(depth - 1, linear)
            b, tb = self.float_expr(depth - 1, linear) if self.chance(0.5) else \
                (self.float_const() if not linear else ("'2'::float4", "float4"))
            op = self.pick("+", "-", "+", "-") if linear else self.pick("+", "-", "*", "/", "+", "*")
            if op == "/" and self.chance(0.6):
                b = "NULLIF(%s, '0'::%s)" % (b, tb)
            t = "float8" if "float8" in (ta, tb) else "float4"
            return "(%s %s %s)" % (a, op, b), t
        if r < 0.55:
            a, ta = self.float_expr(depth - 1, linear)
            return "(- %s)" % a, ta
        if r < 0.68 and not linear:
            t = self.pick("float4", "float8")
            a, _ = self.int_expr(depth - 1) if self.chance(0.6) else self.float_expr(depth - 1)
            return "(%s)::%s" % (a, t), t
        if r < 0.84:
            a, ta = self.float_expr(depth - 1, linear)
            b, tb = self.float_expr(depth - 1, linear)
            t = "float8" if "float8" in (ta, tb) else "float4"
            return "CASE WHEN %s THEN %s ELSE %s END" % (self.bool_expr(depth - 1), a, b), t
        if r < 0.94:
            a, ta = self.float_expr(depth - 1, linear)
            b, tb = self.float_expr(depth - 1, linear)
            t = "float8" if "float8" in (ta, tb) else "float4"
            return "COALESCE(%s, %s)" % (a, b), t
        a, ta = self.float_expr(depth - 1, linear)
        return "NULLIF(%s, '%s'::%s)" % (a, self.pick("0", "NaN", "1"), ta), ta

    # ---- dates and timestamps
    def date_const(self):
        return "date '%s'" % self.pick("2000-01-01", "2001-06-15", "1995-03-01", "2005-12-31",
                                       "2020-01-05", "0001-01-01", "9999-12-31", "2003-07-04")

    def ts_const(self):
        return "timestamp '%s'" % self.pick("2000-01-01", "2000-06-01 12:00", "2000-03-15 07:00:00.000001",
                                            "0001-01-01", "9999-12-31 23:59:59.999999", "2000-10-10 10:00")

    def date_expr(self, depth):
        if self.chance(0.1):
            return self.pick("(f.d + %d)", "(f.kd - %d)", "(%d + f.d)") % self.rng.randint(-400, 400)
        if depth <= 0 or self.chance(0.6):
            return self.pick("f.d", "f.d", "f.kd")
        r = self.rng.random()
        if r < 0.4:
            return "CASE WHEN %s THEN f.d ELSE %s END" % (self.bool_expr(depth - 1), self.date_const())
        if r < 0.75:
            return "COALESCE(f.d, f.kd, %s)" % self.date_const()
        return "NULLIF(f.d, %s)" % self.date_const()

    def interval_const(self):
        # months (day clamped to the month's end), days (local calendar
        # days for timestamptz), time; some beyond the timestamp range
        return self.pick("1 month", "-1 month", "1 day", "24 hours", "1 year 2 mons 3 days 04:05:06.5",
                         "-13 mons -40 days", "36:00:00", "-1 day 23:59:59.999999", "0",
                         "100000 years", "2147483647 days", "%d days" % self.rng.randint(-800, 800))

    def ts_expr(self, depth):
        if self.chance(0.3):
            # timestamptz in the chunk's TimeZone, and the casts through it
            return self.pick("f.tz", "f.tz::timestamp", "f.ts::timestamptz", "f.d::timestamptz",
                             "date_trunc('%s', f.tz)" % self.pick(*TRUNC_UNITS),
                             "COALESCE(f.tz, %s)" % self.ts_const(),
                             "(f.tz %s interval '%s')" % (self.pick("+", "-"), self.interval_const()),
                             "(f.d %s interval '%s')" % (self.pick("+", "-"), self.interval_const()))
        if self.chance(0.1):
            return "(f.ts %s interval '%s')" % (self.pick("+", "-"), self.interval_const())
        if depth <= 0 or self.chance(0.65):
            return "f.ts"
        if self.chance(0.5):
            return "CASE WHEN %s THEN f.ts END" % self.bool_expr(depth - 1)
        return "COALESCE(f.ts, %s)" % self.ts_const()

    # ---- booleans
    def cmp(self):
        return self.pick("=", "<>", "<", "<=", ">", ">=")

    def bool_expr(self, depth):
        rng = self.rng
        if depth <= 0:
            r = rng.random()
            if r < 0.2:
                return self.pick("f.b", "NOT f.b", "f.b IS NULL", "f.i2 IS NOT NULL", "f.n4 IS NULL")
            if r < 0.5:
                a, _ = self.int_expr(0)
                b, _ = self.int_const()
                return "%s %s %s" % (a, self.cmp(), b)
            if r < 0.7:
                a, _ = self.float_expr(0)
                b, _ = self.float_const()
                return "%s %s %s" % (a, self.cmp(), b)
            if r < 0.80:
                if self.chance(0.2):
                    return "f.tz::date %s %s" % (self.cmp(), self.date_const())
                if self.chance(0.2):
                    # across date, timestamp and timestamptz
                    return self.pick("f.tz %s f.d", "f.ts %s f.tz", "f.d %s f.ts",
                                     "(f.d - f.kd) %s 30",
                                     "f.tz %s " + self.date_const(),
                                     "f.d %s " + self.ts_const()) % self.cmp()
                return "f.d %s %s" % (self.cmp(), self.date_const())
            if r < 0.84:
                lit = lambda: "'%s'" % self.pick(*TEXTS + ["NOPE"])
                k = self.rng.random()
                if k < 0.4:
                    return "f.tx %s %s" % (self.pick("=", "<>"), lit())
                if k < 0.6:
                    return "f.tx %sLIKE '%s'" % (self.pick("", "NOT "), self.pick(*LIKE_PATTERNS))
                if k < 0.7:
                    # byte order under C; the default collation stays PostgreSQL's
                    return "f.tx %s %s%s" % (self.cmp(), lit(), self.pick(' COLLATE "C"', ""))
                vals = [lit() for _ in range(self.rng.randint(1, 3))] + (["NULL"] if self.chance(0.2) else [])
                vals = self.long_list(vals, ["'%s'" % t for t in TEXTS[self.in_lists % 3:]] + ["'NOPE'"])
                return "f.tx %sIN (%s)" % (self.pick("", "NOT "), ", ".join(vals))
            if r < 0.86:
                return "f.%s %s %s" % (self.pick("m2", "m0"), self.cmp(), self.pick(
                    "0", "1", "-1", "100.5", "100.505", "-0.01", "12345.67", "999999999999999998",
                    "%d.%02d" % (self.rng.randint(-1000000, 1000000), self.rng.randint(0, 99))))
            if r < 0.90:
                return "%s %s %s" % (self.numeric_expr(), self.cmp(), self.numeric_expr())
            return "f.ts %s %s" % (self.cmp(), self.ts_const())
        r = rng.random()
        if r < 0.22:
            a, _ = self.int_expr(depth - 1)
            b, _ = self.int_expr(depth - 1)
            return "%s %s %s" % (a, self.cmp(), b)
        if r < 0.36:
            a, _ = self.float_expr(depth - 1)
            if self.chance(0.3):
                b = "(%s)::float8" % self.int_expr(depth - 1)[0]
            else:
                b, _ = self.float_expr(depth - 1)
            return "%s %s %s" % (a, self.cmp(), b)
        if r < 0.42:
            if self.chance(0.5):
                return "%s %s %s" % (self.date_expr(depth - 1), self.cmp(),
                                     self.pick(self.date_const(), "f.kd", "f.d"))
            return "%s %s %s" % (self.ts_expr(depth - 1), self.cmp(), self.ts_const())
        if r < 0.56:
            op = self.pick("AND", "OR", "AND")
            n = rng.randint(2, 3)
            return "(%s)" % (" %s " % op).join(self.bool_expr(depth - 1) for _ in range(n))
        if r < 0.61:
            return "NOT (%s)" % self.bool_expr(depth - 1)
        if r < 0.67:
            kind = self.pick("int", "float", "date", "bool")
            a = {"int": lambda: self.int_expr(depth - 1)[0], "float": lambda: self.float_expr(depth - 1)[0],
                 "date": lambda: self.date_expr(depth - 1), "bool": lambda: self.bool_expr(depth - 1)}[kind]
            return "(%s) IS %sNULL" % (a(), self.pick("", "NOT "))
        if r < 0.74:
            if self.chance(0.6):
                a, _ = self.int_expr(depth - 1)
                b, _ = self.int_expr(depth - 1) if self.chance(0.5) else self.int_const()
            elif self.chance(0.5):
                a, _ = self.float_expr(depth - 1)
                b, _ = self.float_const()
            else:
                a, b = self.date_expr(depth - 1), self.pick(self.date_const(), "f.kd")
            return "%s IS %sDISTINCT FROM %s" % (a, self.pick("", "NOT "), b)
        if r < 0.81:
            if self.chance(0.6):
                a, _ = self.int_expr(depth - 1)
                lo, _ = self.int_const()
                hi, _ = self.int_const()
            else:
                a, _ = self.float_expr(depth - 1)
                lo, _ = self.float_const()
                hi, _ = self.float_const()
            return "%s %sBETWEEN %s%s AND %s" % (a, self.pick("", "NOT "), self.pick("", "SYMMETRIC "),
                                                 lo, hi)
        if r < 0.89:
            if self.chance(0.65):
                a, t = self.int_expr(depth - 1)
                vals = [str(rng.randint(-100, 100)) for _ in range(rng.randint(1, 5))]
                if self.chance(0.2):
                    vals.append(str(self.pick(2147483647, 4294967296, -32768)))
            else:
                a, t = self.float_expr(depth - 1)
                vals = [self.float_const(t)[0] for _ in range(rng.randint(1, 4))]
            if self.chance(0.25):
                vals.append("NULL")
            if t in ("int2", "int4", "int8"):
                vals = self.long_list(vals, [str(v) for v in range(-40 + self.in_lists % 7, 40, 9)])
            return "%s %sIN (%s)" % (a, self.pick("", "NOT "), ", ".join(vals))
        if r < 0.93:
            return "f.b = (%s)" % self.bool_expr(depth - 1)
        if r < 0.97:
            return "CASE WHEN %s THEN %s ELSE %s END" % (self.bool_expr(depth - 1), self.bool_expr(depth - 1),
                                                        self.bool_expr(depth - 1))
        return "COALESCE(%s, %s)" % (self.bool_expr(depth - 1), self.pick("true", "false", "f.b"))

    # ---- aggregates: (sql, name prefix)
    def small_int_expr(self, depth):
        """an int2/int4 expression (sum and avg of bigint are numeric)"""
        for _ in range(6):
            a, t = self.int_expr(depth)
            if t != "int8":
                return a
        return self.pick("f.i4", "f.i2", "f.n4")

    def column_expr(self, make, fallback):
        """an expression that reads a column: min/max of a constant lets
        PostgreSQL rewrite the query into ORDER BY ... LIMIT 1 (planagg.c),
        which stops at the first row and so skips errors a full
        aggregation raises"""
        for _ in range(6):
            e = make()
            if "f." in e:
                return e
        return fallback

    def aggregate(self, depth):
        rng = self.rng
        r = rng.random()
        if r < 0.15:
            a, name = "count(*)", "cnt"
        elif r < 0.25:
            x = self.pick(lambda: self.int_expr(depth)[0], lambda: self.float_expr(depth)[0],
                          lambda: self.date_expr(depth), lambda: self.bool_expr(depth))()
            a, name = "count(%s)" % x, "cnt"
        elif r < 0.40:
            fn = self.pick("sum", "avg")
            # every fourth: a variance or standard deviation (numeric
            # results, exact); chosen by count, so the random stream, and
            # every seed's queries, stay as they were
            self.int_aggs += 1
            if self.int_aggs % 4 == 0:
                fn = VAR_FUNCS[(self.int_aggs // 4) % len(VAR_FUNCS)]
            a, name = "%s(%s)" % (fn, self.small_int_expr(depth)), "int"
        elif r < 0.55:
            fn = self.pick("sum", "avg")
            if self.chance(0.5):
                x, _ = self.float_expr(depth, linear=True)
            else:
                # float8: any expression
                x, t = self.float_expr(depth)
                if t == "float4":
                    x = "(%s)::float8" % x
            a, name = "%s(%s)" % (fn, x), fn
        elif r < 0.70:
            fn = self.pick("min", "max")
            a, name = "%s(%s)" % (fn, self.column_expr(lambda: self.int_expr(depth)[0], "f.i4")), fn
        elif r < 0.82:
            fn = self.pick("min", "max")
            a, name = "%s(%s)" % (fn, self.column_expr(lambda: self.float_expr(depth)[0], "f.f8")), fn
        elif r < 0.87:
            fn = self.pick("min", "max")
            a, name = "%s(%s)" % (fn, self.date_expr(depth)), fn
        elif r < 0.91:
            fn = self.pick("min", "max")
            a, name = "%s(%s)" % (fn, self.ts_expr(depth)), fn
        else:
            # numeric columns and expressions: sum/avg exact, min/max/count
            fn = self.pick("sum", "avg", "min", "max", "count", "sum")
            arg = "f.%s" % self.pick("m2", "m0", "mw") if self.chance(0.5) else self.numeric_expr()
            a, name = "%s(%s)" % (fn, arg), "num" + fn
        if self.chance(0.25):
            a += " FILTER (WHERE %s)" % self.bool_expr(rng.randint(0, 2))
        return a, name

    def numeric_expr(self, depth=2):
        """numeric arithmetic (+ - * unary minus, integer casts, constants,
        CASE/COALESCE); some products of m0 pass 38 digits and stay
        PostgreSQL's"""
        r = self.rng.random()
        if depth == 0 or r < 0.35:
            return self.pick("f.m2", "f.m0", "f.m2", "f.mw", "f.i4::numeric", "f.i2::numeric",
                             "1.5", "-0.25", "100", "0.001", "-123456789012345678901.25",
                             "extract(%s FROM f.ts)" % self.pick(*TS_UNITS),
                             "extract(%s FROM f.d)" % self.pick(*DATE_UNITS),
                             "extract(%s FROM f.tz)" % self.pick(*TS_UNITS))
        a = self.numeric_expr(depth - 1)
        b = self.numeric_expr(depth - 1)
        if r < 0.43:
            # CASE/COALESCE: values of different display scales show each
            # row's own (sum/avg: the largest summed); NULL values too
            if self.chance(0.15):
                return "NULLIF(%s, %s)" % (a, self.pick(b, "0", "1.50"))
            if self.chance(0.4):
                return "COALESCE(%s, %s%s)" % (a, b, self.pick("", ", 0", ", NULL::numeric", ", 1.000"))
            els = self.pick("", " ELSE 0", " ELSE %s" % self.numeric_expr(depth - 1), " ELSE NULL")
            return "(CASE WHEN %s THEN %s WHEN %s THEN %s%s END)" % (
                self.bool_expr(1), a, self.bool_expr(1), b, els)
        if r < 0.5:
            return "(-%s)" % a
        return "(%s %s %s)" % (a, self.pick("+", "-", "*"), b)

    def fact_key(self):
        return self.pick(
            lambda: "f.i2", lambda: "f.b", lambda: "f.n4", lambda: "f.k1", lambda: "f.k3",
            lambda: "f.f4", lambda: "f.d", lambda: "f.kd",
            lambda: "(f.i4 %% %d)" % self.rng.randint(2, 9),
            lambda: "(f.i8 / 400000000)",
            lambda: "(f.f8 > '0'::float8)",
            lambda: "COALESCE(f.i2, '-1'::int2)",
            lambda: "CASE WHEN f.i4 > 0 THEN 1 WHEN f.i4 < 0 THEN -1 END",
            lambda: "(%s)" % self.bool_expr(1),
            lambda: "(f.i2 / 10)::int2",
            lambda: "(f.f4 * '0.5'::float4)",
            lambda: "date_trunc('%s', f.ts)" % self.pick(*TRUNC_UNITS),
            lambda: "extract(%s FROM f.ts)" % self.pick(*TS_UNITS),
            lambda: "extract(%s FROM f.d)" % self.pick(*DATE_UNITS),
            lambda: "date_trunc('%s', f.tz)" % self.pick(*TRUNC_UNITS),
            lambda: "extract(%s FROM f.tz)" % self.pick(*TS_UNITS),
            lambda: "date_part('%s', f.tz)" % self.pick(*TS_UNITS),
            lambda: "f.tz::date",
            lambda: "f.ts::date",
            lambda: "date_trunc('%s', f.d)" % self.pick(*TRUNC_UNITS),
            lambda: "f.tx",
            lambda: "f.m2",
        )()

    def row_query(self, from_, dim_quals, visible, depth):
        """a join (WarpJoin) or a scan of the fact table alone (WarpScan)
        without aggregation: fact columns, expressions
        over them (PostgreSQL's projection above the engine) and the
        visible dimensions' columns; sometimes ORDER BY every output column
        and a LIMIT"""
        rng = self.rng
        outs = []
        for _ in range(rng.randint(1, 5)):
            r = rng.random()
            if visible and r < 0.35:
                outs.append(self.pick(*JOINS[self.pick(*visible)][1]))
            elif r < 0.8:
                outs.append("f.%s" % self.pick("id", "i2", "i4", "i8", "f4", "f8", "d", "ts", "b",
                                              "m2", "m0", "tx", "tz", "k1", "kd",
                                              *(["mw"] if self.chance(0.1) else [])))
            else:
                outs.append(self.fact_key())
        where = [self.bool_expr(depth) for _ in range(rng.choice([0, 1, 1, 2]))] + dim_quals
        sql = "SELECT %s FROM %s" % (", ".join("%s AS c_%d" % (o, i) for i, o in enumerate(outs)),
                                     from_)
        if where:
            sql += " WHERE " + " AND ".join(where)
        limit = None
        if self.chance(0.3):
            sql += " ORDER BY %s" % ", ".join(
                "%d%s" % (i + 1, self.pick("", " DESC", " NULLS FIRST")) for i in range(len(outs)))
            limit = rng.randint(1, 30)
        return sql, limit

    def query(self):
        rng = self.rng
        depth = rng.randint(1, 3)
        dims = rng.sample(sorted(JOINS), rng.choice([0, 0, 1, 1, 1, 2, 2, 3]))
        from_ = "f"
        dim_quals = []
        visible = []            # dimensions whose columns the query may group by
        for dname in dims:
            on, _, quals = JOINS[dname]
            q = "(%s)" % self.pick(*quals) if self.chance(0.25) else None
            r = rng.random()
            if r < 0.12:
                # a left join: its dimension quals in ON (the engine's case)
                # or in WHERE (an inner join, or a clause over the nullable
                # side that keeps the query PostgreSQL's)
                if q and self.chance(0.7):
                    from_ += " LEFT JOIN %s ON %s AND %s" % (dname, on, q)
                else:
                    from_ += " LEFT JOIN %s ON %s" % (dname, on)
                    if q:
                        dim_quals.append(q)
                visible.append(dname)
            elif r < 0.21:
                dim_quals.append("EXISTS (SELECT 1 FROM %s WHERE %s%s)"
                                 % (dname, on, " AND " + q if q else ""))
            elif r < 0.25 and " AND " not in on:
                fk, dk = [s.strip() for s in on.split("=")]
                dim_quals.append("%s IN (SELECT %s FROM %s%s)"
                                 % (fk, dk, dname, " WHERE " + q if q else ""))
            elif r < 0.33:
                dim_quals.append("NOT EXISTS (SELECT 1 FROM %s WHERE %s%s)"
                                 % (dname, on, " AND " + q if q else ""))
            elif r < 0.34 and " AND " not in on:
                fk, dk = [s.strip() for s in on.split("=")]
                dim_quals.append("%s NOT IN (SELECT %s FROM %s%s)"
                                 % (fk, dk, dname, " WHERE " + q if q else ""))
            else:
                from_ += " JOIN %s ON %s" % (dname, on)
                if q:
                    dim_quals.append(q)
                visible.append(dname)
        # without aggregation: WarpJoin with dimensions, WarpScan without
        if self.chance(0.15 if dims else 0.1):
            return self.row_query(from_, dim_quals, visible, depth)
        keys = []
        for _ in range(rng.choice([0, 1, 1, 2, 2, 3])):
            if visible and self.chance(0.5):
                keys.append(self.pick(*JOINS[self.pick(*visible)][1]))
            else:
                keys.append(self.fact_key())
        keys = list(dict.fromkeys(keys))
        aggs = []
        if self.chance(0.1):
            # two-level grouping: only DISTINCT aggregates and min/max, over
            # fact expressions and the visible dimensions' columns
            for j in range(rng.randint(1, 3)):
                if visible and self.chance(0.3):
                    x = self.pick(*JOINS[self.pick(*visible)][1])
                else:
                    x = self.fact_key()
                if self.chance(0.2):
                    a, name = "%s(%s)" % (self.pick("min", "max"), x), "mm"
                elif self.chance(0.7):
                    a, name = "count(DISTINCT %s)" % x, "cntd"
                else:
                    a, name = "%s(DISTINCT %s)" % (self.pick("sum", "avg"), self.small_int_expr(1)), "sumd"
                aggs.append("%s AS %s_%d" % (a, name, j))
            # plain aggregates beside them (pg_warp_merge combines their
            # partial states per (keys, arguments) group)
            if self.chance(0.6):
                for j in range(rng.randint(1, 2)):
                    a, name = self.aggregate(rng.randint(0, depth))
                    aggs.append("%s AS %s_p%d" % (a, name, j))
        else:
            for j in range(rng.randint(1, 4)):
                a, name = self.aggregate(rng.randint(0, depth))
                aggs.append("%s AS %s_%d" % (a, name, j))
        if self.chance(0.03):
            aggs.append("sum(f.i8) AS numsum")
        if self.chance(0.02):
            aggs.append("count(DISTINCT f.i2) AS cntd")
        where = []
        for _ in range(rng.choice([0, 1, 1, 1, 2, 3])):
            where.append(self.bool_expr(depth))
        if self.chance(0.02):
            where.append("abs(f.i4) > 10")
        where += dim_quals
        sql = "SELECT %s FROM %s" % (", ".join(["%s AS key_%d" % (k, i) for i, k in enumerate(keys)] + aggs),
                                     from_)
        if where:
            sql += " WHERE " + " AND ".join(where)
        if keys:
            cols = [str(i + 1) for i in range(len(keys))]
            r = rng.random()
            if r < 0.03:
                # grouping sets: the engine groups by every column, the
                # grouping sets Agg above combines the partial states per set
                sql += " GROUP BY ROLLUP (%s)" % ", ".join(cols)
            elif r < 0.05 and len(cols) <= 3:
                sql += " GROUP BY CUBE (%s)" % ", ".join(cols)
            elif r < 0.06:
                sql += " GROUP BY GROUPING SETS (%s, ())" % ", ".join("(%s)" % c for c in cols)
            else:
                sql += " GROUP BY " + ", ".join(cols)
        if self.chance(0.15):
            a, _ = self.aggregate(rng.randint(0, 1))
            sql += " HAVING %s IS NOT NULL AND count(*) %s %d" % (a, self.pick(">", ">=", "<>"),
                                                                   rng.randint(0, 3))
        limit = None
        # (grouping sets repeat key tuples across sets: no total order)
        if keys and self.chance(0.1) and "GROUP BY ROLLUP" not in sql and \
                "GROUP BY CUBE" not in sql and "GROUPING SETS" not in sql:
            sql += " ORDER BY %s" % ", ".join(
                "%d%s" % (i + 1, self.pick("", " DESC", " NULLS FIRST")) for i in range(len(keys)))
            limit = rng.randint(1, 20)
        return sql, limit


# --------------------------------------------------------------- the test

# Plans of PostgreSQL's own that evaluate the same query in another order:
# a LIMIT over Sort + GroupAggregate stops aggregating early; a sorted
# aggregation computes every row's group keys before any aggregate argument;
# a hashed one works row by row.  Which row's error surfaces first (or
# whether an error surfaces at all) depends on that choice, so a pg_warp
# result is also accepted when it is what one of these plans returns.
# (nested loops over a materialized fact scan raise a qual's error for the
# whole fact table before any row reaches the aggregate; hash joins that
# probe with fact rows, like the engine, do not; the last variant keeps the
# fact rows in file order through outer joins that PostgreSQL would
# otherwise run as hash right joins, whose unmatched rows come out last)
# "enable_nestloop = off; enable_sort = off": a hash join streaming the fact
# table into a HashAggregate, PostgreSQL's row-by-row plan (each row's quals,
# probe and aggregate arguments before the next row's), which is the order
# the engine follows; with the nested loop over a materialized fact scan or
# a sorted aggregation, every WHERE clause is evaluated first (seed 404:
# PostgreSQL raises 22003 from a cast in WHERE or 22012 from a division in
# max() depending on that plan)
ORACLE_PLANS = ["enable_sort = off", "enable_hashagg = off", "enable_nestloop = off",
                "enable_sort = off; enable_hashjoin = off; enable_mergejoin = off",
                "enable_nestloop = off; enable_sort = off"]


def _without_order(sql):
    """sql without its top-level ORDER BY ... LIMIT"""
    cut = _top_level(sql, " ORDER BY ")
    return sql[:cut] if cut >= 0 else sql.rsplit(" LIMIT ", 1)[0]


def other_oracle(conn, star, sql, limit, got):
    """the first result of PostgreSQL (heap tables, pg_warp off) under
    another plan that equals got, or None"""
    ordered = limit is not None
    set_side(conn, star.h, False)
    variants = [None] + ORACLE_PLANS
    try:
        for setting in variants:
            for one in (setting.split("; ") if setting else []):
                conn.execute("SET " + one)
            if ordered:
                res = run(conn, sql)                     # as written, with the LIMIT
                if same_result(got, res, True) is None:
                    return res
                if got[0] == "error":
                    # the error of a Sort above a HashAggregate: one that
                    # sorts the groups, not the rows (seed 606: 22008 from
                    # an aggregate argument row by row, 22003 from WHERE
                    # when the rows are sorted first); the ORDER BY keeps
                    # the sorted aggregation even with enable_sort off
                    res = run(conn, _without_order(sql))
                    if same_result(got, res, True) is None:
                        return res
                res = run(conn, sql.rsplit(" LIMIT ", 1)[0])
                if res[0] == "ok":
                    res = ("ok", res[1][:limit], res[2])
            else:
                res = run(conn, sql)
            if same_result(got, res, ordered) is None:
                return res
            for one in (setting.split("; ") if setting else []):
                conn.execute("RESET " + one.split(" =")[0])
    finally:
        for setting in ORACLE_PLANS:
            for one in setting.split("; "):
                conn.execute("RESET " + one.split(" =")[0])
    return None


def float4_overflow_order(sql, got, want):
    """one side raised float overflow (22003) and the other did not, in a
    query summing a float4: PostgreSQL's float4 sum overflows or not
    depending on the order of its additions"""
    one_overflow = (got[0] == "error") != (want[0] == "error") and \
        "22003" in (got[1] if got[0] == "error" else want[1])
    return one_overflow and ("(f.f4" in sql or "::float4" in sql) and \
        ("sum(" in sql or "avg(" in sql)


def float_order_only(got, want):
    """both succeeded with the same rows except in float values: a float
    sum or average whose additions cancel (values near +-9e18 of a bigint
    cast to float8) rounds differently when PostgreSQL's sort for a DISTINCT
    aggregate, which is not stable, hands it the rows in another order"""
    if got[0] != "ok" or want[0] != "ok" or len(got[1]) != len(want[1]):
        return False

    def rest(row):
        return repr(tuple(v for v in row if not isinstance(v, float)))
    a = sorted(got[1], key=rest)
    b = sorted(want[1], key=rest)
    return all(rest(x) == rest(y) for x, y in zip(a, b)) and \
        any(isinstance(v, float) for row in a for v in row)


def numeric_scale_order_only(got, want):
    """both succeeded with the same rows except for the display scale of
    numeric values equal in value (0.000 and 0): min/max of a CASE or
    COALESCE whose values have different scales keeps whichever of two
    equal values PostgreSQL's aggregate saw last (numeric_smaller), so the
    order of the rows decides which scale shows"""
    if got[0] != "ok" or want[0] != "ok" or len(got[1]) != len(want[1]):
        return False

    def norm(row):
        return repr(tuple(v.normalize() if isinstance(v, Decimal) and v.is_finite() else v
                          for v in row))
    a = sorted(got[1], key=norm)
    b = sorted(want[1], key=norm)
    return all(norm(x) == norm(y) for x, y in zip(a, b))


def _top_level(sql, word, start=0):
    """index of word in sql outside parentheses and string literals, or -1"""
    depth, i = 0, start
    while i < len(sql):
        c = sql[i]
        if c == "'":
            i = sql.index("'", i + 1)
            while sql.startswith("''", i):
                i = sql.index("'", i + 2)
        elif depth == 0 and sql.startswith(word, i):
            return i
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        i += 1
    return -1


def _split_top(text):
    items, start = [], 0
    while True:
        i = _top_level(text, ", ", start)
        if i < 0:
            return items + [text[start:]]
        items.append(text[start:i])
        start = i + 2


def float_sums_within_bound(conn, star, sql, got, want):
    """both succeeded with the same rows except in the float sums and
    averages, each within the bound of summing in another order: n * eps *
    sum(|x|), n and sum(|x|) taken over all the rows the query aggregates
    (a bound for every group), eps that of the sum's type.  The engine adds
    per batch (and per thread) and combines the partial sums, PostgreSQL
    adds row by row, so sums whose terms cancel (a bigint near +-9e18 cast
    to float) differ by more than any relative tolerance of the result."""
    if not float_order_only(got, want) or not sql.startswith("SELECT "):
        return False
    frm = _top_level(sql, " FROM ")
    end = min([i for i in (_top_level(sql, w, frm) for w in (" GROUP BY ", " ORDER BY ", " LIMIT "))
               if i >= 0] or [len(sql)])
    items = _split_top(sql[len("SELECT "):frm])
    bounds = {}
    for col, item in enumerate(items):
        if not item.startswith(("sum(", "avg(")):
            continue
        close = _top_level(item, ")", 4)      # the aggregate's own parenthesis
        arg = item[4:close]
        if arg.startswith("DISTINCT "):
            arg = arg[len("DISTINCT "):]
        if not re.match(r"( FILTER \(WHERE .*\))? AS \w+$", item[close + 1:]):
            continue
        set_side(conn, star.h, False)
        res = run(conn, "SELECT count(*), sum(abs((%s)::float8)), pg_typeof(sum(%s))::text %s"
                  % (arg, arg, sql[frm:end]))
        if res[0] != "ok" or res[1][0][1] is None:
            return False
        n, total, typ = res[1][0]
        eps = 2.0 ** -23 if typ == "real" else 2.0 ** -52
        bounds[col] = n * eps * total

    def rest(row):
        return repr(tuple(v for v in row if not isinstance(v, float)))
    for a, b in zip(sorted(got[1], key=rest), sorted(want[1], key=rest)):
        for col, (x, y) in enumerate(zip(a, b)):
            if not isinstance(x, float) or same_value(x, y, REL_TOL):
                continue
            if col not in bounds or math.isnan(x) or math.isnan(y) or math.isinf(x) or \
                    math.isinf(y) or abs(x - y) > bounds[col]:
                return False
    return True


# Under pg_warp.mode = gpu the jobs go to pg_warp_gpud.  CI's daemon runs the
# CPU driver, so there a few chunks cover the protocol; on the GPU machine
# (PGWARP_ENGINE_MODE=gpu) every chunk runs against the device driver.
GPU_CHUNKS = NCHUNKS if os.environ.get("PGWARP_ENGINE_MODE") == "gpu" else 3
# "threads": the CPU driver on 4 threads of the backend (pg_warp.cpu_threads),
# each thread's partial states combined by PostgreSQL's Finalize step
# "heap": the same queries on the heap copies (the oracle's own tables) with
# pg_warp on: the engine reads the heap fact table through the table AM
# (numeric columns as Decimal128 vectors; WarpJoin too, with
# pg_warp.heap_row_joins on)
CASES = [("cpu", c) for c in range(NCHUNKS)] + [("gpu", c) for c in range(GPU_CHUNKS)] + \
    [("threads", c) for c in range(3)] + [("heap", c) for c in range(3)] + \
    [("params", c) for c in range(2)]
MIN_OFFLOADED_HEAP = 0.25
# through pg_warp_gpud only aggregations are offloaded (WarpJoin and WarpScan,
# a quarter of the offloaded queries on the CPU, are not planned there):
# seed 7171 chunk 1 offloads 254 of 300 on the CPU, 178 through the daemon
MIN_OFFLOADED_GPU = 0.50


# each chunk runs in a TimeZone of its own (both sides): the timestamptz
# expressions convert through it
CHUNK_ZONES = ["UTC", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata", "Europe/Moscow",
               "Pacific/Chatham", "America/Sao_Paulo", "Europe/Dublin", "Pacific/Apia", "Asia/Tehran"]


# ------------------------------------------------- prepared statements

# the constants of a generated query, for parametrize(): kept as they are
# (type modifiers, quoted identifiers, COLLATE), typed literals, casts of
# a string, bare strings and numbers (not part of a name)
_TOKEN = re.compile(r"""
    (?P<keep>::\w+\([^)]*\)|"[^"]*")
  | (?P<typed>(?<![\w.])(?:date|timestamptz|timestamp|interval)\s+'(?:[^']|'')*')
  | (?P<cast>'(?:[^']|'')*'::(?:int2|int4|int8|float4|float8|numeric|text|date|timestamptz|timestamp
                                |interval|bool)(?![\w(]))
  | (?P<str>'(?:[^']|'')*')
  | (?P<num>(?<![\w.$])\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.(]))
""", re.X)


# what precedes a GROUP BY or ORDER BY position (GROUP BY 1, 2; ORDER BY
# 1 DESC, 2; ROLLUP (1, 2); GROUPING SETS ((1), (2), ())): it stays
_ORDINALS = re.compile(r"(?:GROUP BY|ORDER BY|ROLLUP \(|CUBE \(|SETS \()\s*"
                       r"(?:\(?\d*\)?(?:\s+(?:ASC|DESC|NULLS FIRST|NULLS LAST))*\s*,\s*)*\(?$")


def parametrize(sql):
    """sql with its constants as parameters: (body, types, args) for
    PREPARE name(types) AS body; EXECUTE name(args).  Each parameter's type
    is its constant's as PostgreSQL types it (an integer literal int4, int8
    or numeric by size, a decimal numeric, a cast or a typed literal its
    type, a bare string unknown, resolved by its context as the literal
    would be), so the statement means the same; the same constant twice is
    one parameter (a GROUP BY expression must equal the select list's).
    A string right after '(' (date_trunc's and extract's units) stays."""
    params = {}
    types = []
    args = []

    def sub(m):
        kind = m.lastgroup
        text = m.group(kind)
        if kind == "keep":
            return text
        if kind == "str" and (sql[m.end():m.end() + 2] == "::" or sql[:m.start()].rstrip().endswith("(")):
            return text
        if kind == "num" and _ORDINALS.search(sql[:m.start()]):
            return text
        if kind == "typed":
            typ, _, lit = text.partition(" ")
            arg = lit.strip()
        elif kind == "cast":
            lit, _, typ = text.rpartition("::")
            arg = lit
        elif kind == "str":
            typ, arg = "unknown", text
        elif "." in text or "e" in text.lower():
            typ, arg = "numeric", text
        else:
            v = int(text)
            typ = "int4" if v <= 2147483647 else "int8" if v <= 9223372036854775807 else "numeric"
            arg = text
        key = (typ, arg)
        if key not in params:
            types.append(typ)
            args.append(arg)
            params[key] = len(types)
        return "$%d" % params[key]

    return _TOKEN.sub(sub, sql), types, args


def run_prepared(conn, name, sql, explain=False):
    """PREPARE sql with its constants as parameters and EXECUTE it: (plan
    or None, result), or None where PREPARE fails"""
    body, types, args = parametrize(sql)
    run(conn, "DEALLOCATE " + name)
    if run(conn, "PREPARE %s%s AS %s" % (name, "(%s)" % ", ".join(types) if types else "", body))[0] != "ok":
        return None
    execute = "EXECUTE %s%s" % (name, "(%s)" % ", ".join(args) if args else "")
    plan = plan_of(conn, execute) if explain else None
    return plan, run(conn, execute)


def execute_both_prepared(conn, star_w, star_h, sql, oracle_sql=None):
    """execute_both() through prepared statements under generic plans; the
    constants' statement where one side cannot prepare it"""
    conn.execute("SET plan_cache_mode = force_generic_plan")
    try:
        set_side(conn, star_w, True)
        mine = run_prepared(conn, "diff_w", sql, explain=True)
        set_side(conn, star_h, False)
        theirs = run_prepared(conn, "diff_h", oracle_sql or sql)
    finally:
        conn.execute("RESET plan_cache_mode")
    if mine is None or theirs is None:
        return execute_both(conn, star_w, star_h, sql, oracle_sql=oracle_sql)
    return mine[0], mine[1], theirs[1]


@pytest.mark.parametrize("mode,chunk", CASES, ids=["%s-%d" % c for c in CASES])
def test_differential(star, mode, chunk):
    rng = random.Random("%d/%d" % (SEED, chunk))
    gen = Gen(rng)
    conn = star.conn
    conn.execute("SET TimeZone = '%s'" % CHUNK_ZONES[(chunk + SEED) % len(CHUNK_ZONES)])
    try:
        run_chunk(star, mode, chunk, gen)
    finally:
        conn.execute("SET TimeZone = 'UTC'")


def run_chunk(star, mode, chunk, gen):
    conn = star.conn
    if mode == "gpu" and gpud_status(conn) is None:
        pytest.skip("no pg_warp_gpud serves this cluster")
    conn.execute("SET pg_warp.mode = %s" % ("cpu" if mode in ("threads", "heap", "params") else mode))
    conn.execute("SET pg_warp.cpu_threads = %d" % (4 if mode == "threads" else 1))
    conn.execute("SET pg_warp.heap_min_rows = %d" % (0 if mode == "heap" else -1))
    conn.execute("SET pg_warp.heap_row_joins = %s" % ("on" if mode == "heap" else "off"))
    side = star.h if mode == "heap" else star.w
    n = offloaded = oracle_ok = both_failed = row_joins = 0
    failures = []
    plan_dependent = []
    within_bound = []
    both = execute_both_prepared if mode == "params" else execute_both
    for q in range(QUERIES_PER_CHUNK):
        sql, limit = gen.query()
        ordered = limit is not None
        if ordered:
            full = sql
            sql = "%s LIMIT %d" % (sql, limit)
            plan, got, want = both(conn, side, star.h, sql, oracle_sql=full)
            if want[0] == "ok":
                want = ("ok", want[1][:limit], want[2])
        else:
            plan, got, want = both(conn, side, star.h, sql)
        if same_result(got, want, ordered) is not None:
            alt = other_oracle(conn, star, sql, limit, got)
            if alt is not None:
                want = alt
        n += 1
        rows_node = "WarpJoin" in plan or "WarpScan" in plan
        warp = "WarpPreAgg" in plan or rows_node
        if "WarpPreAgg" in plan and mode == "gpu":
            assert "(pg_warp_gpud)" in plan, plan
        offloaded += warp
        row_joins += rows_node
        oracle_ok += want[0] == "ok"
        both_failed += got[0] == want[0] == "error"
        why = same_result(got, want, ordered)
        if why:
            alt = diagnose(conn, star.w, sql)
            pg_sums = not warp and same_result(got, alt, ordered) is None
            # PostgreSQL's own aggregation over WarpJoin's (WarpScan's)
            # rows: they reach its Sort or hash table in another order than
            # a hash join's
            pg_sums = pg_sums or (rows_node and "WarpPreAgg" not in plan)
            if pg_sums and (float4_overflow_order(sql, got, want) or float_order_only(got, want) or
                            numeric_scale_order_only(got, want)):
                # PostgreSQL's own plan over the Arrow tables (pg_warp on and
                # off agree) against its plan over the heap copies: whether a
                # float4 sum overflows, how a float sum rounds, and which
                # scale a numeric min/max of equal values shows, depends
                # on the order rows reach it
                plan_dependent.append(sql)
                continue
            if float_sums_within_bound(conn, star, sql, got, want):
                within_bound.append(sql)
                continue
            failures.append("query %d/%d (%s): %s\n  %s\n  pg_warp: %s\n  oracle:  %s\n"
                            "  arrow_fdw, pg_warp off: %s\n  offloaded: %s"
                            % (chunk, q, "ordered" if ordered else "sorted", why, sql, _short(got, 8),
                               _short(want, 8), _short(alt, 8), warp))
    conn.execute("RESET pg_warp.mode")
    conn.execute("RESET pg_warp.cpu_threads")
    conn.execute("RESET pg_warp.heap_min_rows")
    conn.execute("RESET pg_warp.heap_row_joins")
    print("seed %d chunk %d: %d queries, %d offloaded (%d as WarpJoin or WarpScan), %d succeeded "
          "on the oracle, %d failed on both, %d mismatches, %d float sums of PostgreSQL's own plans "
          "differing by row order, %d engine float sums within the bound"
          % (SEED, chunk, n, offloaded, row_joins, oracle_ok, both_failed, len(failures),
             len(plan_dependent), len(within_bound)))
    for sql in plan_dependent:
        print("  plan-dependent: " + sql)
    for sql in within_bound:
        print("  float sums apart within n * eps * sum(|x|): " + sql)
    assert not failures, "PGWARP_DIFF_SEED=%d: %d of %d queries differ:\n%s" % (
        SEED, len(failures), n, "\n".join(failures))
    assert offloaded >= {"heap": MIN_OFFLOADED_HEAP, "gpu": MIN_OFFLOADED_GPU}.get(
        mode, MIN_OFFLOADED) * n, \
        "seed %d: only %d of %d queries got a WarpPreAgg, WarpJoin or WarpScan plan" % (SEED, offloaded, n)
    assert oracle_ok >= MIN_ORACLE_OK * n, \
        "seed %d: only %d of %d queries succeeded on the oracle" % (SEED, oracle_ok, n)
