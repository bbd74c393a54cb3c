"""Heap fact tables take the engine's numeric and date/time expressions, and
joins without aggregation, against vanilla PostgreSQL.

A seeded RNG (PGWARP_HEAP_SEED) fills a heap fact table with numeric
columns of several precisions and scales (negative values, zeros, the
declared extremes, NULLs; 18 digits and 38), dates from before 1900 to
after 2038 (and the calendar's first and last days), timestamps and
timestamptz across 1901 and 2038, character(n) and text, and a heap
dimension keyed by int4 and by character(n).  Random queries --
aggregates over numeric columns and expressions, extract(), date_part(),
date_trunc() and interval arithmetic as group keys, arguments and quals,
min/max of character(n), and joins without aggregation (WarpJoin,
WarpScan, with pg_warp.heap_row_joins on) that return numeric, date and
character(n) columns -- run with
pg_warp on and off; answers must be equal (numeric with its display scale)
or both fail with the same SQLSTATE, and most of them must be offloaded.

Values a heap may hold and the engine does not compute -- numeric NaN and
the fields of infinite dates -- are left to PostgreSQL when the table's
statistics show them, and otherwise raise 0A000 rather than answer
differently.
"""
import datetime
import decimal
import os
import random

import pytest

from test_engine_targeted import Session, plan_of, run, same_result, _short

SEED = int(os.environ.get("PGWARP_HEAP_SEED", "4242"))
decimal.getcontext().prec = 80          # numeric(38, s) values exactly
NROWS = 3000
NQUERIES = 260
MIN_OFFLOADED = 0.6

NUMS = [("n2", 12, 2), ("n0", 18, 0), ("n5", 10, 5), ("nw", 30, 6), ("n38", 38, 10), ("nf", 20, 18)]


def rand_numeric(rng, p, s):
    """a numeric(p, s) value: mostly moderate, some at the declared
    extremes, some tiny, negative as often as positive"""
    r = rng.random()
    if r < 0.1:
        return None
    if r < 0.15:
        v = decimal.Decimal(10) ** (p - s) - decimal.Decimal(1).scaleb(-s)
    elif r < 0.2:
        v = decimal.Decimal(1).scaleb(-s) if s else decimal.Decimal(1)
    elif r < 0.23:
        v = decimal.Decimal(0)
    else:
        digits = rng.randint(1, min(p, 12))
        v = decimal.Decimal(rng.randint(0, 10 ** digits - 1)).scaleb(-min(s, digits))
    v = v.quantize(decimal.Decimal(1).scaleb(-s))
    return -v if rng.random() < 0.5 else v


def rand_date(rng):
    r = rng.random()
    if r < 0.08:
        return None
    if r < 0.1:
        return rng.choice(["4713-11-24 BC", "5874897-12-31", "0001-01-01 BC", "1999-12-31",
                           "2000-01-01", "2038-01-19", "2038-01-20", "1970-01-01"])
    return (datetime.date(1850, 1, 1) + datetime.timedelta(days=rng.randint(0, 365 * 250))).isoformat()


def rand_ts(rng):
    r = rng.random()
    if r < 0.08:
        return None
    if r < 0.1:
        return rng.choice(["4713-11-24 00:00:00 BC", "294276-12-31 23:59:59.999999",
                           "2038-01-19 03:14:07", "2038-01-19 03:14:08", "1901-12-13 20:45:52",
                           "1999-12-31 23:59:59.999999"])
    base = datetime.datetime(1890, 1, 1) + datetime.timedelta(
        seconds=rng.randint(0, 250 * 365 * 86400), microseconds=rng.randint(0, 999999))
    return base.isoformat(sep=" ")


@pytest.fixture(scope="module")
def heap(db):
    rng = random.Random(SEED)
    conn = Session()
    conn.execute("DROP SCHEMA IF EXISTS heapx CASCADE")
    conn.execute("CREATE SCHEMA heapx")
    conn.execute("CREATE TABLE heapx.f (id int, k int, c character(4), t text, %s, "
                 "d date, ts timestamp, tz timestamptz)"
                 % ", ".join("%s numeric(%d,%d)" % n for n in NUMS))
    conn.execute("CREATE TABLE heapx.dim (id int PRIMARY KEY, cc character(4), name text, "
                 "dn numeric(8,3), dd date)")
    codes = ["AB", "AB  ", "Z", "", "x y", None]
    with conn.get().cursor().copy("COPY heapx.dim FROM STDIN") as cp:
        for i in range(40):
            cp.write_row((i, ["AB", "Z", "x y", "Q%d" % i][i % 4] if i < 20 else "D%d" % i,
                          "name%d" % (i % 7), rand_numeric(rng, 8, 3), rand_date(rng)))
    with conn.get().cursor().copy("COPY heapx.f FROM STDIN") as cp:
        for i in range(NROWS):
            k = None if rng.random() < 0.05 else rng.randint(-3, 45)
            cp.write_row([i, k, rng.choice(codes), rng.choice(["a", "bb", None, "ccc"])] +
                         [rand_numeric(rng, p, s) for _, p, s in NUMS] +
                         [rand_date(rng), rand_ts(rng), rand_ts(rng)])
    conn.execute("ANALYZE heapx.f")
    conn.execute("ANALYZE heapx.dim")
    conn.execute("SET search_path = heapx, public")
    conn.execute("SET pg_warp.heap_min_rows = 0")
    conn.execute("SET pg_warp.heap_row_joins = on")
    yield conn
    conn.execute("DROP SCHEMA IF EXISTS heapx CASCADE")
    conn.close()


class Gen:
    def __init__(self, rng):
        self.rng = rng

    def pick(self, *xs):
        return self.rng.choice(xs)

    def num_col(self):
        return "f." + self.pick(*[n[0] for n in NUMS])

    def num_const(self):
        return self.pick("0", "-12.5", "3.14159", "100", "-0.00001", "99999.99", "1e3")

    def num_expr(self, depth=2):
        if depth == 0 or self.rng.random() < 0.35:
            return self.pick(self.num_col(), self.num_col(), self.num_const())
        a, b = self.num_expr(depth - 1), self.num_expr(depth - 1)
        return "(%s %s %s)" % (a, self.pick("+", "-", "*"), b) if self.rng.random() < 0.85 \
            else "(- %s)" % a

    def dt_col(self):
        return "f." + self.pick("d", "ts", "tz")

    def dt_key(self):
        col = self.dt_col()
        unit = self.pick("year", "month", "quarter", "day", "dow", "doy", "decade", "century")
        return self.pick("extract(%s FROM %s)" % (unit, col),
                         "date_part('%s', %s)" % (unit, col),
                         "date_trunc('%s', %s)" % (self.pick("year", "month", "day", "quarter"),
                                                   self.pick("f.ts", "f.tz", "f.d")))

    def qual(self):
        k = self.rng.randrange(7)
        if k == 0:
            return "%s %s %s" % (self.num_col(), self.pick("<", ">", "=", "<=", "<>"),
                                 self.num_const())
        if k == 1:
            return "%s %s %s" % (self.num_expr(1), self.pick("<", ">="), self.num_expr(1))
        if k == 2:
            return "f.d %s date '%s'" % (self.pick("<", ">=", "="),
                                         self.pick("1999-12-31", "2038-01-20", "1900-03-01"))
        if k == 3:
            return "f.ts + interval '%s' %s timestamp '%s'" % (
                self.pick("1 month", "-3 days", "1 year 2 hours"), self.pick("<", ">"),
                self.pick("2000-01-01", "2040-06-30 12:00", "1950-01-01"))
        if k == 4:
            return "extract(year FROM f.d) %s %d" % (self.pick("<", ">", "="),
                                                     self.rng.randint(1900, 2090))
        if k == 5:
            return "f.c %s" % self.pick("= 'AB'", "<> 'Z'", "IS NULL", "IN ('AB', 'x y')")
        return "f.d - %d %s date '2000-01-01'" % (self.rng.randint(-400, 400), self.pick("<", ">"))

    def where(self):
        n = self.rng.randint(0, 2)
        return " WHERE " + " AND ".join(self.qual() for _ in range(n)) if n else ""

    def agg(self):
        k = self.rng.randrange(6)
        if k == 0:
            return "%s(%s)" % (self.pick("sum", "avg", "min", "max", "count"), self.num_col())
        if k == 1:
            return "%s(%s)" % (self.pick("sum", "min", "max"), self.num_expr())
        if k == 2:
            return "%s(%s)" % (self.pick("min", "max"), self.pick("f.c", "f.d", "f.ts", "f.tz"))
        if k == 3:
            return "sum(%s)" % self.pick("extract(month FROM f.d)", "extract(year FROM f.ts)",
                                         "date_part('day', f.tz)")
        if k == 4:
            return "%s(f.d + interval '%s')" % (self.pick("min", "max"),
                                                self.pick("1 day", "-1 month", "10 years"))
        return "count(*)"

    def query(self):
        """(sql, expected to be offloaded): a heap table's rows without joins
        stay PostgreSQL's (its scan costs less), as do joins on
        character(n) and min/max of character(n), which the engine does not
        take from any table; their answers are compared all the same"""
        k = self.rng.randrange(5)
        if k <= 1:
            keys = [self.pick(self.dt_key(), "f.c", "f.n0", "f.k")
                    for _ in range(self.rng.randint(0, 2))]
            aggs = [self.agg() for _ in range(self.rng.randint(1, 3))]
            sql = "SELECT %s FROM f%s" % (", ".join(keys + aggs), self.where())
            if keys:
                sql += " GROUP BY %s" % ", ".join(str(i + 1) for i in range(len(keys)))
            return sql, "(f.c)" not in sql
        if k == 2:
            on = self.pick("f.k = dim.id", "f.c = dim.cc")
            aggs = [self.pick(self.agg(), "sum(dim.dn)", "max(dim.cc)", "min(dim.dd)")
                    for _ in range(self.rng.randint(1, 2))]
            sql = "SELECT dim.name, %s FROM f JOIN dim ON %s%s GROUP BY 1" % (
                ", ".join(aggs), on, self.where())
            return sql, "cc" not in sql and "(f.c)" not in sql
        if k == 3:
            on = self.pick("f.k = dim.id", "f.c = dim.cc")
            cols = "f.id, f.c, %s, f.d, f.ts, dim.name, dim.cc, dim.dn" % self.pick("f.n2", "f.n0",
                                                                                 "f.n5")
            return "SELECT %s FROM f JOIN dim ON %s%s" % (cols, on, self.where()), on == "f.k = dim.id"
        cols = "f.id, %s, %s, f.d, f.c" % (self.num_col(), self.num_expr(1))
        w = self.where() or " WHERE f.id % 3 = 0"
        return "SELECT %s FROM f%s" % (cols, w), False


def both(conn, sql):
    conn.execute("SET pg_warp.enabled = on")
    plan = plan_of(conn, sql)
    got = run(conn, sql)
    conn.execute("SET pg_warp.enabled = off")
    want = run(conn, sql)
    conn.execute("SET pg_warp.enabled = on")
    return plan, got, want


def test_random_heap_queries(heap):
    conn = heap
    gen = Gen(random.Random(SEED + 1))
    failures = []
    offloaded = expected = rows_nodes = ok = 0
    for q in range(NQUERIES):
        sql, expect = gen.query()
        ordered = False
        plan, got, want = both(heap, sql)
        warp = "Warp" in plan
        expected += expect
        offloaded += warp and expect
        if expect and not warp and os.environ.get("PGWARP_HEAP_REASONS"):
            res = run(conn, "EXPLAIN (VERBOSE) " + sql)
            reasons = [r[0] for r in res[1] if "pg_warp:" in r[0]] if res[0] == "ok" else [res]
            print("NOT OFFLOADED: %s\n   %s" % (sql, reasons))
        rows_nodes += "WarpJoin" in plan or "WarpScan" in plan
        ok += want[0] == "ok"
        why = same_result(got, want, ordered)
        if why:
            failures.append("query %d: %s\n  %s\n  pg_warp: %s\n  oracle:  %s\n  plan: %s"
                            % (q, why, sql, _short(got, 6), _short(want, 6), plan))
    print("seed %d: %d queries, %d of %d offloadable ones offloaded (%d WarpJoin/WarpScan), "
          "%d succeeded on the oracle" % (SEED, NQUERIES, offloaded, expected, rows_nodes, ok))
    assert not failures, "PGWARP_HEAP_SEED=%d: %d differ:\n%s" % (SEED, len(failures),
                                                                   "\n".join(failures[:10]))
    assert offloaded >= MIN_OFFLOADED * expected, "only %d of %d offloaded" % (offloaded, expected)
    assert rows_nodes >= 0.08 * NQUERIES, "only %d WarpJoin/WarpScan plans" % rows_nodes
    assert ok >= 0.5 * NQUERIES


# the TPC-H shapes the heap path exists for, each offloaded and equal
SHAPES = [
    "SELECT c, sum(n2), sum(n2 * (1 - n5)), avg(n0), count(*) FROM f "
    "WHERE d <= date '2038-01-19' - interval '90 days' GROUP BY c",
    "SELECT sum(n2 * n5) FROM f WHERE d >= date '1994-01-01' "
    "AND d < date '1994-01-01' + interval '1 year' AND n5 BETWEEN -0.06 AND 0.07",
    "SELECT extract(year FROM d) AS y, sum(n2) FROM f GROUP BY 1",
    "SELECT dim.name, sum(f.n2) FROM f JOIN dim ON f.k = dim.id "
    "WHERE f.ts < timestamp '2038-01-19 03:14:08' GROUP BY 1",
    "SELECT f.id, f.n2, f.d, f.c, dim.cc, dim.dn FROM f JOIN dim ON f.k = dim.id WHERE f.n0 > 0",
    "SELECT min(n38), max(nw), min(d), max(ts) FROM f",
]


@pytest.mark.parametrize("nr", range(len(SHAPES)))
def test_heap_shapes_offloaded(heap, nr):
    sql = SHAPES[nr]
    plan, got, want = both(heap, sql)
    assert same_result(got, want, False) is None, "%s\n%s\n%s" % (sql, _short(got), _short(want))
    assert "Warp" in plan, plan


def special_table(conn, name, coltype, value, analyze_with):
    """2000 ordinary rows and one NaN or infinity, which ANALYZE sees
    (analyze_with) or not (inserted after it)"""
    conn.execute("DROP TABLE IF EXISTS %s" % name)
    conn.execute("CREATE TABLE %s (id int, v %s)" % (name, coltype))
    ordinary = "date '2000-01-01' + g" if coltype == "date" else "(g / 4.0 - 40.25)::%s" % coltype
    conn.execute("INSERT INTO %s SELECT g, %s FROM generate_series(1, 2000) g" % (name, ordinary))
    if analyze_with:
        conn.execute("INSERT INTO %s VALUES (0, '%s')" % (name, value))
        conn.execute("ANALYZE %s" % name)
    else:
        conn.execute("ANALYZE %s" % name)
        conn.execute("INSERT INTO %s VALUES (0, '%s')" % (name, value))


@pytest.mark.parametrize("coltype,value,expr", [
    ("numeric(10,2)", "NaN", "sum(v), max(v)"),
    ("date", "infinity", "sum(extract(year FROM v))"),
    ("date", "-infinity", "max(date_part('month', v))"),
])
def test_special_values_in_statistics_stay_postgresql(heap, coltype, value, expr):
    special_table(heap, "heapx.sp", coltype, value, analyze_with=True)
    sql = "SELECT %s FROM heapx.sp" % expr
    plan, got, want = both(heap, sql)
    assert "Warp" not in plan, plan
    assert same_result(got, want, False) is None, (_short(got), _short(want))
    res = run(heap, "EXPLAIN (VERBOSE) " + sql)
    text = "\n".join(r[0] for r in res[1])
    assert "statistics show" in text, text


@pytest.mark.parametrize("coltype,value,expr", [
    ("numeric(10,2)", "NaN", "sum(v), max(v)"),
    ("date", "infinity", "sum(extract(year FROM v))"),
])
def test_special_values_missed_by_statistics_error(heap, coltype, value, expr):
    """an unsampled NaN or infinity: an error (0A000), never another answer"""
    special_table(heap, "heapx.sp2", coltype, value, analyze_with=False)
    sql = "SELECT %s FROM heapx.sp2" % expr
    plan, got, want = both(heap, sql)
    assert want[0] == "ok"
    if "Warp" in plan:
        assert got[0] == "error" and got[1] == "0A000", (_short(got), plan)
    else:
        assert same_result(got, want, False) is None


def test_infinite_dates_outside_extract_offloaded(heap):
    """comparisons, date_trunc and min/max pass infinities on as PostgreSQL
    does: only extract() and date_part() are kept from them"""
    special_table(heap, "heapx.sp3", "date", "infinity", analyze_with=True)
    for sql in ["SELECT max(v), min(v), count(*) FROM heapx.sp3 WHERE v > date '2001-01-01'",
                "SELECT date_trunc('month', v), count(*) FROM heapx.sp3 GROUP BY 1"]:
        plan, got, want = both(heap, sql)
        assert same_result(got, want, False) is None, (sql, _short(got), _short(want))
        assert "Warp" in plan, plan
