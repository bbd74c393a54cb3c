"""Star joins without aggregation (Custom Scan (WarpJoin)) against
PostgreSQL itself: the engine filters the fact table, probes every
dimension and returns each joined row (src/pg/plan/warp_plan.c try_join_rows,
the row mode of src/engine/warp_cpu.c).

Every query runs on arrow_fdw tables with pg_warp on (the plan must contain
WarpJoin where the query is meant to be offloaded) and on the oracle, heap
copies loaded by COPY from CSV that pyarrow wrote, with pg_warp off; the
rows must be equal (as multisets unless the query orders them totally), or
both sides must fail with the same SQLSTATE.  The helpers are those of
test_engine_targeted.py, whose session settings make the engine's plans
win on these small tables.
"""
import datetime
import decimal
import re

import pytest

# the fixtures base (the small star of test_engine_targeted.py), conn and mk
from test_engine_targeted import (Star, base, check, conn, mk, plan_of, run,  # noqa: F401
                                  set_side)

PARALLEL = ["max_parallel_workers_per_gather = 2", "parallel_setup_cost = 0",
            "parallel_tuple_cost = 0", "min_parallel_table_scan_size = 0",
            "parallel_leader_participation = off"]


def check_rows(star, sql, node, offload=True, ordered=False, expect=None, parallel=False):
    """check() for a row-mode node (WarpJoin, WarpScan): offload True, the
    plan must have it (parallel: under a Gather); False, it must not; None,
    either"""
    conn = star.conn
    if offload is False or parallel:
        set_side(conn, star.w, True)
        plan = plan_of(conn, sql)
        assert offload is not False or node not in plan, "%s\noffloaded:\n%s" % (sql, plan)
        assert not parallel or "Parallel Custom Scan (%s)" % node in plan, \
            "%s\nno parallel %s:\n%s" % (sql, node, plan)
    return check(star, sql, offload=bool(offload), ordered=ordered, expect=expect, node=node)


def check_join(star, sql, **kw):
    return check_rows(star, sql, "WarpJoin", **kw)


def nonempty(rows):
    return len(rows) > 0


# joins of the small star whose rows the engine returns: duplicate and NULL
# dimension keys, every fact type (NaN, -0, infinities, extreme dates and
# integers), left/semi/anti joins, an int8-keyed Arrow dimension, int2 keys,
# a snowflake arm, PostgreSQL's steps above (projection, DISTINCT, window
# functions, ORDER BY ... LIMIT)
BASE_QUERIES = [
    ("SELECT f.id, d.name, d.grp FROM f JOIN d ON f.k = d.dk", nonempty),
    ("SELECT f.*, d.name FROM f JOIN d ON f.k = d.dk", nonempty),
    ("SELECT f.id, f.r, f.x, f.dt, f.ts, f.fl, f.big, f.s, d.name FROM f JOIN d ON f.k = d.dk "
     "WHERE f.x IS NOT NULL", nonempty),
    ("SELECT f.id, d.name, d.grp FROM f LEFT JOIN d ON f.k = d.dk", nonempty),
    ("SELECT f.id, d.name FROM f LEFT JOIN d ON f.k = d.dk AND d.grp > 1", nonempty),
    ("SELECT f.id, f.a FROM f WHERE EXISTS (SELECT 1 FROM d WHERE d.dk = f.k)", nonempty),
    ("SELECT f.id, f.a FROM f WHERE NOT EXISTS (SELECT 1 FROM d WHERE d.dk = f.k)", nonempty),
    ("SELECT f.id, d8.label FROM f JOIN d8 ON f.k8 = d8.ak", nonempty),
    ("SELECT f.id, f.s, d2.sname FROM f JOIN d2 ON f.s = d2.sk", nonempty),
    ("SELECT f.id, d.name, d2.sname FROM f JOIN d ON f.k = d.dk JOIN d2 ON f.g = d2.sk "
     "WHERE f.a > 0 AND d.grp IS NOT NULL", nonempty),
    # a snowflake arm: d2 joins d, not the fact table
    ("SELECT f.id, d.name, d2.sname FROM f JOIN d ON f.k = d.dk JOIN d2 ON d.grp = d2.sk", nonempty),
    ("SELECT f.a + 1, upper(d.name), f.r * 2 FROM f JOIN d ON f.k = d.dk WHERE f.a < 1000", nonempty),
    ("SELECT DISTINCT d.name FROM f JOIN d ON f.k = d.dk", nonempty),
    ("SELECT f.id, d.grp, row_number() OVER (PARTITION BY d.grp ORDER BY f.id) FROM f "
     "JOIN d ON f.k = d.dk", nonempty),
    ("SELECT f.id, d.name FROM f JOIN d ON f.k = d.dk WHERE f.id BETWEEN SYMMETRIC 9 AND 2 "
     "AND f.x IS DISTINCT FROM 1.0", nonempty),
    ("SELECT 1 FROM f JOIN d ON f.k = d.dk", nonempty),
    ("SELECT f.id, d.name FROM f JOIN d ON f.k = d.dk WHERE f.id > 100", lambda r: r == []),
]


@pytest.mark.parametrize("threads", ["1", "4"])
def test_join_rows(base, threads):
    base.conn.execute("SET pg_warp.cpu_threads = " + threads)
    try:
        for q, expect in BASE_QUERIES:
            check_join(base, q, expect=expect)
        check_join(base, "SELECT f.id, d.name FROM f JOIN d ON f.k = d.dk ORDER BY 1 DESC, 2 LIMIT 4",
                   ordered=True, expect=nonempty)
        # a constant qual: PostgreSQL (15.4 on) offers no custom join then,
        # its gating Result needs a join of its own; the answers stay right
        check_join(base, "SELECT f.id, d.name FROM f JOIN d ON f.k = d.dk WHERE current_date > '2000-01-01'",
                   offload=None, expect=nonempty)
        check_join(base, "SELECT f.id, d.name FROM f JOIN d ON f.k = d.dk "
                         "WHERE current_date < '2000-01-01' AND f.a > 0", offload=None, expect=lambda r: r == [])
    finally:
        base.conn.execute("RESET pg_warp.cpu_threads")


def test_join_rows_errors(base):
    # the fact quals' errors, where PostgreSQL's scan raises them
    check_join(base, "SELECT f.id, d.name FROM f JOIN d ON f.k = d.dk WHERE 10 / f.g > 1",
               expect="error:22012")
    check_join(base, "SELECT f.id, d.name FROM f JOIN d ON f.k = d.dk WHERE f.a + f.b > 0",
               expect="error:22003")
    # in PostgreSQL's projection above the engine
    check_join(base, "SELECT f.a * 2, d.name FROM f JOIN d ON f.k = d.dk", expect="error:22003")


def test_not_offloaded_still_right(base):
    conn = base.conn
    # a full join; a whole-row reference; a numeric column of more than 18
    # digits is not among the engine's loads (its own table)
    check_join(base, "SELECT f.id, d.name FROM f FULL JOIN d ON f.k = d.dk", offload=False)
    check_join(base, "SELECT f, d.name FROM f JOIN d ON f.k = d.dk", offload=False)
    # aggregation stays WarpPreAgg's
    plan = plan_of(conn, "SELECT d.name, count(*) FROM f JOIN d ON f.k = d.dk GROUP BY 1")
    assert "WarpJoin" not in plan, plan
    # the switch
    conn.execute("SET pg_warp.enable_join = off")
    try:
        check_join(base, "SELECT f.id, d.name FROM f JOIN d ON f.k = d.dk", offload=False)
    finally:
        conn.execute("RESET pg_warp.enable_join")
    # pg_warp.mode = gpu: on pg_warp_gpud (test_gpud_rows.py)
    conn.execute("SET pg_warp.mode = gpu")
    try:
        check_join(base, "SELECT f.id, d.name FROM f JOIN d ON f.k = d.dk", offload=None)
    finally:
        conn.execute("RESET pg_warp.mode")


@pytest.mark.parametrize("threads", ["1", "4"])
def test_rescan(base, threads):
    # WarpJoin as the inner side of a nested loop without Materialize: run
    # again for every outer row (on 4 threads: a new round list each time)
    conn = base.conn
    settings = ["enable_material = off", "enable_hashjoin = off", "enable_mergejoin = off",
                "pg_warp.cpu_threads = " + threads]
    for st in settings:
        conn.execute("SET " + st)
    try:
        q = ("SELECT v.i, s.id, s.name FROM (VALUES (1), (3), (5)) v(i), "
             "(SELECT f.id, d.name FROM f JOIN d ON f.k = d.dk OFFSET 0) s WHERE s.id > v.i")
        want = check_join(base, q, expect=nonempty)
        assert len({r[0] for r in want[1]}) == 3
        set_side(conn, base.w, True)
        assert "Nested Loop" in plan_of(conn, q)
    finally:
        for st in settings:
            conn.execute("RESET " + st.split(" =")[0])


def _big_rows(n):
    rows = []
    for i in range(n):
        rows.append((i, i % 50 if i % 11 else None, ["ab", "", "long text %d" % (i % 300), None][i % 4],
                     decimal.Decimal(i % 1000) / 100 - 3, (i % 7) * 0.25 - 0.5,
                     datetime.datetime(2021, 3, 1, tzinfo=datetime.timezone.utc) +
                     datetime.timedelta(minutes=37 * i),
                     datetime.date(2020, 1, 1) + datetime.timedelta(days=i % 400)))
    return rows


BIG_COLS = [("id", "int4"), ("k", "int4"), ("t", "text"), ("m", "numeric(12,2)"), ("x", "float8"),
            ("tz", "timestamptz"), ("d", "date")]


@pytest.fixture(scope="module")
def big(conn):
    s = Star(conn, "warpjoin_big")
    s.table("f", BIG_COLS, _big_rows(30000), batch_rows=700)
    s.table("dim", [("id", "int4"), ("grp", "text"), ("w", "int8")],
            [(i, None if i % 7 == 0 else "g%d" % (i % 4), i * 1000) for i in range(40)] +
            [(3, "dup3", 3)], arrow=True)
    s.table("dt", [("dk", "date"), ("month", "text")],
            [(datetime.date(2020, 1, 1) + datetime.timedelta(days=i), "m%d" % (i // 31))
             for i in range(0, 400, 2)], arrow=False)
    yield s
    s.close()


BIG_QUERIES = [
    "SELECT f.id, f.t, f.m, f.x, f.tz, dim.grp, dim.w FROM f JOIN dim ON f.k = dim.id",
    "SELECT f.id, f.t, dt.month FROM f JOIN dt ON f.d = dt.dk WHERE f.m > 1.5 AND f.t LIKE 'long%'",
    "SELECT f.t, f.m * 2, dim.grp FROM f LEFT JOIN dim ON f.k = dim.id WHERE f.x <> 0",
    "SELECT f.id, f.tz, dt.month, dim.grp FROM f JOIN dt ON f.d = dt.dk JOIN dim ON f.k = dim.id "
    "WHERE f.tz < '2021-06-01 00:00+02' AND dim.grp <> 'g1'",
]


def test_join_rows_many_batches(big):
    """43 batches, text (ids reset between batches), numeric, timestamptz and
    float columns; serial, on 4 threads (rounds of 8 units) and under Gather"""
    conn = big.conn
    for q in BIG_QUERIES:
        check_join(big, q, expect=nonempty)
    conn.execute("SET pg_warp.cpu_threads = 4")
    try:
        for q in BIG_QUERIES:
            check_join(big, q, expect=nonempty)
        set_side(conn, big.w, True)
        res = run(conn, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + BIG_QUERIES[0])
        assert res[0] == "ok" and "CPU Threads: 4" in "\n".join(r[0] for r in res[1]), res
    finally:
        conn.execute("RESET pg_warp.cpu_threads")
    for st in PARALLEL:
        conn.execute("SET " + st)
    try:
        for q in BIG_QUERIES:
            check_join(big, q, expect=nonempty, parallel=True)
    finally:
        for st in PARALLEL:
            conn.execute("RESET " + st.split(" =")[0])
        conn.execute("SET max_parallel_workers_per_gather = 0")


def test_limit_stops_the_scan(big):
    """rows go up batch by batch: a LIMIT reads a few batches, not 43, and an
    error in a row after the LIMIT's last is never raised (as on the oracle,
    whose hash join probes with the fact rows in order)"""
    conn = big.conn
    q = "SELECT f.id, dim.grp FROM f JOIN dim ON f.k = dim.id LIMIT 10"
    set_side(conn, big.w, True)
    res = run(conn, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + q)
    assert res[0] == "ok", res
    text = "\n".join(r[0] for r in res[1])
    m = re.search(r"Fact Rows: (\d+)", text)
    assert "WarpJoin" in text and m, text
    assert 0 < int(m.group(1)) <= 2 * 700, text
    # on 4 threads: the first round, at most 8 batches per thread
    conn.execute("SET pg_warp.cpu_threads = 4")
    try:
        res = run(conn, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + q)
        text = "\n".join(r[0] for r in res[1])
        m = re.search(r"Fact Rows: (\d+)", text)
        assert "WarpJoin" in text and m and 0 < int(m.group(1)) <= 32 * 700 < 30000, text
    finally:
        conn.execute("RESET pg_warp.cpu_threads")
    # id 20000 divides by zero; the first 10 joined rows come long before
    check_join(big, "SELECT count(*) FROM (SELECT f.id FROM f JOIN dim ON f.k = dim.id "
               "WHERE 100 / (f.id - 20000) > -1000 LIMIT 10) s", expect=lambda r: r == [(10,)])
    check_join(big, "SELECT f.id FROM f JOIN dim ON f.k = dim.id WHERE 100 / (f.id - 20000) > -1000",
               expect="error:22012")



def test_aggregates_over_join_rows(big):
    """aggregations WarpPreAgg does not compute: PostgreSQL's Agg over
    WarpJoin's rows (the star join still on the engine); where WarpPreAgg
    takes an aggregation, no Agg-over-WarpJoin plan is left"""
    conn = big.conn
    for q in ("SELECT dim.grp, percentile_disc(0.5) WITHIN GROUP (ORDER BY f.x) FROM f "
              "JOIN dim ON f.k = dim.id GROUP BY dim.grp",
              "SELECT dim.grp, string_agg(DISTINCT f.t, ',' ORDER BY f.t) FROM f "
              "JOIN dim ON f.k = dim.id WHERE f.id < 3000 GROUP BY dim.grp",
              "SELECT dt.month, round(stddev_samp(f.m), 6), bool_and(f.t IS NOT NULL) FROM f "
              "JOIN dt ON f.d = dt.dk GROUP BY dt.month",
              "SELECT count(*) FILTER (WHERE f.t IS NULL), array_agg(DISTINCT dim.grp ORDER BY dim.grp) "
              "FROM f LEFT JOIN dim ON f.k = dim.id"):
        check_join(big, q, expect=nonempty)
        set_side(conn, big.w, True)
        assert "WarpPreAgg" not in plan_of(conn, q), plan_of(conn, q)
    q = "SELECT dim.grp, count(*), sum(f.k) FROM f JOIN dim ON f.k = dim.id GROUP BY dim.grp"
    set_side(conn, big.w, True)
    plan = plan_of(conn, q)
    assert "WarpPreAgg" in plan and "WarpJoin" not in plan, plan


@pytest.mark.parametrize("threads", ["1", "4"])
def test_cursor_prepared_empty(big, mk, threads):
    """a cursor fetched in pieces (the scan resumes where it stopped), a
    prepared statement's generic plan with a parameter in a fact qual, and
    an empty fact table and an empty dimension"""
    conn = big.conn
    conn.execute("SET pg_warp.cpu_threads = " + threads)
    try:
        q = "SELECT f.id, f.t, dim.grp FROM f JOIN dim ON f.k = dim.id WHERE f.id % 3 = 0"
        want = check_join(big, q, expect=nonempty)[1]
        set_side(conn, big.w, True)
        assert "WarpJoin" in plan_of(conn, q)
        conn.execute("BEGIN")
        try:
            conn.execute("DECLARE wj_cur NO SCROLL CURSOR FOR " + q)
            got = []
            for n in (1, 7, 500, 20000):
                got += conn.execute("FETCH %d FROM wj_cur" % n).fetchall()
            got += conn.execute("FETCH ALL FROM wj_cur").fetchall()
        finally:
            conn.execute("COMMIT")
        key = lambda r: tuple((x is None, x) for x in r)  # noqa: E731
        assert sorted(got, key=key) == sorted(want, key=key)

        conn.execute("SET plan_cache_mode = force_generic_plan")
        try:
            # text equal / not equal to a parameter: its value taken when
            # the program is built (in either order)
            stmts = [
                ("wj_p(int, float8, text)", "SELECT f.id, dim.grp FROM f JOIN dim ON f.k = dim.id "
                 "WHERE f.id < $1 AND f.x <> $2 AND f.t <> $3", "WarpJoin"),
                ("wj_a(text)", "SELECT dim.grp, count(*), sum(f.k) FROM f JOIN dim ON f.k = dim.id "
                 "WHERE $1 = f.t GROUP BY 1", "WarpPreAgg"),
            ]
            args = {"wj_p": [(100, 0.25, "ab"), (5000, -0.5, ""), (30000, 0, None), (-1, 0, "x")],
                    "wj_a": [("ab",), ("",), ("long text 6",), (None,), ("nothing",)]}
            for decl, body, node in stmts:
                name = decl.split("(")[0]
                conn.execute("PREPARE %s AS %s" % (decl, body))
                for a in args[name]:
                    lit = ", ".join("NULL" if v is None else "'%s'" % v if isinstance(v, str) else repr(v)
                                    for v in a)
                    plan = "\n".join(r[0] for r in conn.execute(
                        "EXPLAIN EXECUTE %s(%s)" % (name, lit)).fetchall())
                    assert node in plan, (decl, a, plan)
                    got = conn.execute("EXECUTE %s(%s)" % (name, lit)).fetchall()
                    set_side(conn, big.h, False)
                    exp = conn.execute("SELECT * FROM (%s) s" % re.sub(
                        r"\$(\d)", lambda m: "(%s)::%s" % (lit.split(", ")[int(m.group(1)) - 1],
                                                       decl[decl.index("(") + 1:-1].split(", ")[
                                                           int(m.group(1)) - 1]), body)).fetchall()
                    set_side(conn, big.w, True)
                    assert sorted(got, key=key) == sorted(exp, key=key), (decl, a)
                    # (a NULL compares as NULL: no row)
                    assert bool(got) != (a[0] == -1 or None in a or a == ("nothing",)), (decl, a)
        finally:
            conn.execute("DEALLOCATE ALL")
            conn.execute("RESET plan_cache_mode")
            conn.execute("SET plan_cache_mode = auto")
    finally:
        conn.execute("RESET pg_warp.cpu_threads")

    s = mk()
    s.table("f", [("id", "int4"), ("k", "int4")], [])
    s.table("d", [("k", "int4"), ("name", "text")], [(1, "a")], arrow=False)
    s.table("f2", [("id", "int4"), ("k", "int4")], [(i, i % 3) for i in range(2000)], batch_rows=300)
    s.table("d0", [("k", "int4"), ("name", "text")], [], arrow=False)
    s.conn.execute("SET pg_warp.cpu_threads = " + threads)
    try:
        # (an empty table costs the same either way: results only)
        check_join(s, "SELECT f.id, d.name FROM f JOIN d ON f.k = d.k", offload=None,
                   expect=lambda r: r == [])
        check_join(s, "SELECT f2.id, d0.name FROM f2 JOIN d0 ON f2.k = d0.k",
                   expect=lambda r: r == [])
        check_join(s, "SELECT f2.id, d0.name FROM f2 LEFT JOIN d0 ON f2.k = d0.k",
                   expect=lambda r: len(r) == 2000)
    finally:
        s.conn.execute("RESET pg_warp.cpu_threads")


def test_explain_verbose_reason(big):
    """where WarpPreAgg takes an aggregation over a heap fact table, EXPLAIN
    VERBOSE names no reason the row path gave up; a join without
    aggregation over it stays PostgreSQL's unless pg_warp.heap_row_joins is
    on, and says why"""
    conn = big.conn
    conn.execute("SET pg_warp.heap_min_rows = 0")
    try:
        set_side(conn, big.h, True)
        q = "SELECT dim.grp, count(*) FROM f JOIN dim ON f.k = dim.id GROUP BY 1"
        text = "\n".join(r[0] for r in conn.execute("EXPLAIN (VERBOSE, COSTS OFF) " + q).fetchall())
        assert "WarpPreAgg" in text and "not offloaded" not in text, text
        q = "SELECT f.id, dim.grp FROM f JOIN dim ON f.k = dim.id"
        text = "\n".join(r[0] for r in conn.execute("EXPLAIN (VERBOSE, COSTS OFF) " + q).fetchall())
        assert "WarpJoin" not in text and "not offloaded: joins without aggregation over a heap " \
            "fact table stay PostgreSQL's (measured slower; pg_warp.heap_row_joins)" in text, text
        conn.execute("SET pg_warp.heap_row_joins = on")
        text = "\n".join(r[0] for r in conn.execute("EXPLAIN (VERBOSE, COSTS OFF) " + q).fetchall())
        assert "WarpJoin" in text and "not offloaded" not in text, text
    finally:
        conn.execute("RESET pg_warp.heap_min_rows")
        conn.execute("RESET pg_warp.heap_row_joins")
        set_side(conn, big.w, True)


def test_join_topn(big):
    """ORDER BY ... LIMIT in WarpJoin: fact and dimension columns as keys
    (the dimension's text and int8 through their sort support), serial and
    on 4 threads"""
    conn = big.conn
    queries = ["SELECT f.id, dim.grp, dim.w FROM f JOIN dim ON f.k = dim.id "
               "ORDER BY dim.grp NULLS FIRST, dim.w DESC, f.id LIMIT 30",
               "SELECT f.id, f.tz, dt.month FROM f JOIN dt ON f.d = dt.dk WHERE f.x <> 0 "
               "ORDER BY dt.month DESC, f.tz, f.id LIMIT 15"]
    for threads in ("1", "4"):
        conn.execute("SET pg_warp.cpu_threads = " + threads)
        try:
            for q in queries:
                set_side(conn, big.w, True)
                plan = plan_of(conn, q)
                assert "Top-N: " in plan and "Sort" not in plan, "%s\n%s" % (q, plan)
                check(big, q, ordered=True, expect=nonempty, node="WarpJoin")
        finally:
            conn.execute("RESET pg_warp.cpu_threads")


# the engine joins the fact table and some dimensions, PostgreSQL the rest:
# a full join, a condition across the fact table and a dimension, a left
# join with a fact-only condition in ON, an aggregate over such a join
PART_QUERIES = [
    "SELECT f.id, d.name, d2.sname FROM (f JOIN d ON f.k = d.dk) FULL JOIN d2 ON f.s = d2.sk",
    "SELECT f.id, d.name, d2.sname FROM f JOIN d ON f.k = d.dk JOIN d2 ON f.s = d2.sk "
    "WHERE f.a > d2.sk * 3",
    "SELECT f.id, d.name, d2.sname FROM f JOIN d ON f.k = d.dk LEFT JOIN d2 ON f.s = d2.sk "
    "AND f.a > 0",
    "SELECT d.name, count(*), sum(f.a), min(d2.sname) FROM f JOIN d ON f.k = d.dk "
    "JOIN d2 ON f.s = d2.sk AND f.b <> d2.sk GROUP BY 1",
    "SELECT f.id, d8.label, d.name FROM f JOIN d8 ON f.k8 = d8.ak JOIN d ON f.k = d.dk "
    "WHERE d.grp IS DISTINCT FROM f.g",
]


@pytest.mark.parametrize("threads", ["1", "4"])
def test_join_part(base, threads):
    """WarpJoin for part of the FROM list (the star grown a depth at a
    time), PostgreSQL's joins above it"""
    conn = base.conn
    conn.execute("SET pg_warp.cpu_threads = " + threads)
    try:
        for q in PART_QUERIES:
            set_side(conn, base.w, True)
            plan = plan_of(conn, q)
            assert re.search(r"(Hash|Nested Loop|Merge)( Full| Left| Right)?( Join)?", plan) and \
                "WarpJoin" in plan and "WarpPreAgg" not in plan, "%s\n%s" % (q, plan)
            check_join(base, q, expect=nonempty)
    finally:
        conn.execute("RESET pg_warp.cpu_threads")
    conn.execute("SET pg_warp.enable_join = off")
    try:
        check_join(base, PART_QUERIES[0], offload=False)
    finally:
        conn.execute("RESET pg_warp.enable_join")


def test_join_part_many_batches(big):
    """A part of the star over 43 batches: on 4 threads and under Gather
    (each participant the engine's part, PostgreSQL's join above)"""
    conn = big.conn
    q = ("SELECT f.id, dim.grp, dt.month FROM f JOIN dim ON f.k = dim.id JOIN dt ON f.d = dt.dk "
         "WHERE f.m * 1000 > dim.w")
    conn.execute("SET pg_warp.cpu_threads = 4")
    try:
        check_join(big, q, expect=nonempty)
    finally:
        conn.execute("RESET pg_warp.cpu_threads")
    settings = PARALLEL + ["pg_warp.cpu_threads = 1"]
    for st in settings:
        conn.execute("SET " + st)
    try:
        check_join(big, q, expect=nonempty, parallel=True)
    finally:
        for st in settings:
            conn.execute("RESET " + st.split(" =")[0])
        conn.execute("SET max_parallel_workers_per_gather = 0")
