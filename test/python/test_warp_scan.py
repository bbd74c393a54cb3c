"""Single-table queries without aggregation (Custom Scan (WarpScan): the
row mode of test_warp_join.py without dimensions, src/pg/plan/warp_plan.c
warp_rel_paths) and ORDER BY ... LIMIT kept in the node (Top-N:
src/pg/exec/warp_topn.c and the driver's WarpProgram.topn_limit), compared with
PostgreSQL itself as test_warp_join.py does: arrow_fdw tables with pg_warp
on against heap copies loaded by COPY, pg_warp off.
"""
import datetime
import decimal
import os

import pytest

# the fixtures base (the small star of test_engine_targeted.py), conn and mk
from test_engine_targeted import (TS, Star, base, check, conn, mk, plan_of, run,  # noqa: F401
                                  set_side)
from test_warp_join import PARALLEL, check_rows, nonempty


def check_scan(star, sql, **kw):
    return check_rows(star, sql, "WarpScan", **kw)


# the small star's fact table alone (with a qual: without one arrow_fdw's
# own scan costs about the same and may win): every fact type (NaN, -0,
# infinities, extreme dates and integers, NULLs), quals of every kind the engine
# compiles, PostgreSQL's steps above (projection, DISTINCT, window
# functions, ORDER BY ... LIMIT, an aggregate WarpPreAgg does not compute)
BASE_QUERIES = [
    ("SELECT * FROM f WHERE id <> 0", nonempty),
    ("SELECT f.id, f.r, f.x, f.dt, f.ts, f.fl, f.big, f.s FROM f WHERE f.x IS NOT NULL", nonempty),
    ("SELECT id, a, b FROM f WHERE a > 0 OR b IS NULL", nonempty),
    ("SELECT id FROM f WHERE id BETWEEN SYMMETRIC 9 AND 2 AND x IS DISTINCT FROM 1.0", nonempty),
    ("SELECT id, k FROM f WHERE k IN (1, 3, NULL) AND NOT fl", nonempty),
    ("SELECT id, CASE WHEN g = 0 THEN 'zero' ELSE 'other' END FROM f WHERE COALESCE(g, -1) <> 5",
     nonempty),
    ("SELECT id, dt FROM f WHERE dt >= date '2020-01-02' AND ts < timestamp '2030-01-01'", nonempty),
    ("SELECT a + 1, r * 2, upper(id::text) FROM f WHERE a < 1000", nonempty),
    ("SELECT DISTINCT k FROM f WHERE id <> 0", nonempty),
    ("SELECT id, g, row_number() OVER (PARTITION BY g ORDER BY id) FROM f WHERE id > 1", nonempty),
    ("SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY a) FROM f WHERE a IS NOT NULL", nonempty),
    ("SELECT 1 FROM f WHERE s <> 7", nonempty),
    ("SELECT id FROM f WHERE id > 1000", lambda r: r == []),
]


@pytest.mark.parametrize("threads", ["1", "4"])
def test_scan_rows(base, threads):
    base.conn.execute("SET pg_warp.cpu_threads = " + threads)
    try:
        for q, expect in BASE_QUERIES:
            check_scan(base, q, expect=expect)
        check_scan(base, "SELECT id, x FROM f WHERE id <> 0 ORDER BY x DESC NULLS LAST, id LIMIT 4", ordered=True,
                   expect=nonempty)
        # a CASE of text constants ordered in the node (its strings' order)
        check_scan(base, "SELECT id, CASE WHEN g = 0 THEN 'zero' WHEN g > 2 THEN 'big' END AS c FROM f "
                         "WHERE id <> 0 ORDER BY 2 NULLS FIRST, 1 DESC LIMIT 5", ordered=True, expect=nonempty)
    finally:
        base.conn.execute("RESET pg_warp.cpu_threads")


def test_scan_rows_errors(base):
    # the quals' errors, where PostgreSQL's scan raises them
    check_scan(base, "SELECT id FROM f WHERE 10 / g > 1", expect="error:22012")
    check_scan(base, "SELECT id FROM f WHERE a + b > 0", expect="error:22003")
    # in PostgreSQL's projection above the engine
    check_scan(base, "SELECT a * 2 FROM f WHERE id <> 0", expect="error:22003")


def test_scan_not_offloaded(base):
    conn = base.conn
    # a whole-row reference, a system column, FOR UPDATE is refused by
    # arrow_fdw itself
    check_scan(base, "SELECT f FROM f", offload=False)
    check_scan(base, "SELECT id, tableoid::regclass::text FROM f WHERE id < 3", offload=False)
    # aggregation stays WarpPreAgg's (no Agg over WarpScan)
    set_side(conn, base.w, True)
    plan = plan_of(conn, "SELECT k, count(*) FROM f GROUP BY 1")
    assert "WarpPreAgg" in plan and "WarpScan" not in plan, plan
    # a heap table (through the table AM: not for this node)
    set_side(conn, base.h, True)
    plan = plan_of(conn, "SELECT id FROM f WHERE a > 0")
    assert "WarpScan" not in plan, plan
    # a join: WarpJoin's, or PostgreSQL's over arrow_fdw scans
    set_side(conn, base.w, True)
    plan = plan_of(conn, "SELECT f.id FROM f FULL JOIN d ON f.k = d.dk")
    assert "WarpScan" not in plan, plan
    # the switch (pg_warp.enabled = off is the oracle's side in every check)
    conn.execute("SET pg_warp.enable_scan = off")
    try:
        check_scan(base, "SELECT id, a FROM f WHERE a > 0", offload=False)
    finally:
        conn.execute("RESET pg_warp.enable_scan")
    # pg_warp.mode = gpu: on pg_warp_gpud (test_gpud_rows.py)
    conn.execute("SET pg_warp.mode = gpu")
    try:
        check_scan(base, "SELECT id, a FROM f WHERE a > 0", offload=None)
    finally:
        conn.execute("RESET pg_warp.mode")


def test_explain(base):
    conn = base.conn
    set_side(conn, base.w, True)
    res = run(conn, "EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF) "
                    "SELECT id, a FROM f WHERE a > 0")
    assert res[0] == "ok", res
    plan = "\n".join(r[0] for r in res[1])
    # the node names its table; no dimension or group lines
    assert "Custom Scan (WarpScan) on " in plan and "Engine Filter: (f.a > 0)" in plan, plan
    assert "Fact Table" not in plan and "Partial Aggregates" not in plan, plan
    assert "not offloaded" not in plan, plan
    res = run(conn, "EXPLAIN (VERBOSE, COSTS OFF) SELECT f FROM f")
    plan = "\n".join(r[0] for r in res[1])
    assert "pg_warp: not offloaded: an output that is not a user column" in plan, plan


def _big_rows(n):
    rows = []
    for i in range(n):
        rows.append((i, i % 97 if i % 13 else None, ["AIR", "MAIL", "SHIP", "RAIL", None][i % 5],
                     decimal.Decimal(i % 5000) / 100, None if i % 11 == 0 else i * 0.5,
                     TS(2020, 1, 1) + datetime.timedelta(hours=i),
                     datetime.datetime(2021, 3, 1, tzinfo=datetime.timezone.utc) +
                     datetime.timedelta(minutes=37 * i)))
    return rows


BIG_COLS = [("id", "int4"), ("k", "int4"), ("t", "text"), ("m", "numeric(8,2)"), ("x", "float8"),
            ("ts", "timestamp"), ("tz", "timestamptz")]


@pytest.fixture(scope="module")
def big(conn):
    s = Star(conn, "warpscan_big")
    s.table("f", BIG_COLS, _big_rows(30000), batch_rows=700)
    yield s
    s.close()


# the quals of arrow_fdw's prefilter test, now the engine's whole scan: text
# LIKE and IN, numeric arithmetic, float, date/time parts, NULL handling
BIG_QUERIES = [
    "SELECT id, k, t, m FROM f WHERE t LIKE '%AI%' AND k * 2 > 50",
    "SELECT id, t, x FROM f WHERE (k % 3 = 1 OR x > 9000) AND t <> 'SHIP'",
    "SELECT id, m, tz FROM f WHERE m * 2 > 80.5 AND k IS NOT NULL",
    "SELECT id, ts FROM f WHERE date_part('hour', ts) BETWEEN 3 AND 5",
    "SELECT id, t FROM f WHERE COALESCE(k, -1) < 0",
    "SELECT id, x FROM f WHERE t IN ('AIR', 'RAIL') AND NOT (x < 100)",
    "SELECT t, m, tz FROM f WHERE k + id > 15000 AND tz > '2021-06-01 00:00+02'",
]


def test_scan_many_batches(big):
    """43 batches of text (ids reset between batches), numeric, timestamp(tz)
    and float columns: serial, on 4 threads (rounds of 8 units) and under
    Gather"""
    conn = big.conn
    for q in BIG_QUERIES:
        check_scan(big, q, expect=nonempty)
    conn.execute("SET pg_warp.cpu_threads = 4")
    try:
        for q in BIG_QUERIES:
            check_scan(big, q, expect=nonempty)
        set_side(conn, big.w, True)
        res = run(conn, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + BIG_QUERIES[0])
        assert res[0] == "ok" and "CPU Threads: 4" in "\n".join(r[0] for r in res[1]), res
    finally:
        conn.execute("RESET pg_warp.cpu_threads")
    for st in PARALLEL:
        conn.execute("SET " + st)
    try:
        for q in BIG_QUERIES[:4]:
            check_scan(big, q, expect=nonempty, parallel=True)
    finally:
        for st in PARALLEL:
            conn.execute("RESET " + st.split(" =")[0])
        conn.execute("SET max_parallel_workers_per_gather = 0")


@pytest.mark.parametrize("threads", ["1", "4"])
def test_error_after_limit(big, threads):
    """An error in a later row than a LIMIT needs is never raised, as in
    PostgreSQL's own scan: serially the rows before the failing one go up
    first; on threads a round that fails runs again on one thread, in scan
    order, its error after its rows.  Past the LIMIT, the error."""
    conn = big.conn
    conn.execute("SET pg_warp.cpu_threads = " + threads)
    try:
        # id 2500 is in the 4th batch of 700 rows: one round on 4 threads
        for lim, expect in ((1, lambda r: len(r) == 1), (2400, lambda r: len(r) == 2400),
                            (2600, "error:22012")):
            check_scan(big, "SELECT id FROM f WHERE 10 / (id - 2500) >= 0 LIMIT %d" % lim,
                       expect=expect)
        # the same a round later (id 20000: batch 28)
        check_scan(big, "SELECT count(*) FROM (SELECT id FROM f WHERE 10 / (id - 20000) >= 0 "
                        "LIMIT 19000) s", expect=lambda r: r[0][0] == 19000)
        check_scan(big, "SELECT id FROM f WHERE 10 / (id - 20000) >= 0", expect="error:22012")
    finally:
        conn.execute("RESET pg_warp.cpu_threads")


def test_rescan_and_cursor(big):
    """WarpScan as the inner side of a nested loop without Materialize (run
    again for every outer row), and a cursor fetched in pieces"""
    conn = big.conn
    settings = ["enable_material = off", "enable_hashjoin = off", "enable_mergejoin = off",
                "pg_warp.cpu_threads = 4", "pg_warp.enable_join = off"]
    for st in settings:
        conn.execute("SET " + st)
    try:
        q = ("SELECT v.i, s.id FROM (VALUES (1), (3), (5)) v(i), "
             "(SELECT id, k FROM f WHERE t = 'MAIL' OFFSET 0) s WHERE s.k = v.i")
        want = check(big, q, expect=nonempty, node="WarpScan")
        assert len({r[0] for r in want[1]}) == 3
        set_side(conn, big.w, True)
        assert "Nested Loop" in plan_of(conn, q)
    finally:
        for st in settings:
            conn.execute("RESET " + st.split(" =")[0])
    set_side(conn, big.h, False)
    want = run(conn, "SELECT id, t FROM f WHERE k < 40 ORDER BY id")
    set_side(conn, big.w, True)
    assert "WarpScan" in plan_of(conn, "SELECT id, t FROM f WHERE k < 40")
    got = []
    with conn.get().transaction():
        conn.execute("DECLARE c NO SCROLL CURSOR FOR SELECT id, t FROM f WHERE k < 40")
        while True:
            part = conn.execute("FETCH 997 FROM c").fetchall()
            if not part:
                break
            got.extend(part)
        conn.execute("CLOSE c")
    assert sorted(got) == [tuple(r) for r in want[1]]


def check_topn(star, sql, expect=None, node="WarpScan"):
    """ORDER BY ... LIMIT kept in the node: the plan has no Sort, the node
    says Top-N, the rows come in PostgreSQL's order"""
    conn = star.conn
    set_side(conn, star.w, True)
    plan = plan_of(conn, sql)
    assert "Top-N: " in plan and "Sort" not in plan, "%s\n%s" % (sql, plan)
    return check(star, sql, ordered=True, expect=expect, node=node)


# every type's ordering, NULLS FIRST/LAST, DESC, NaN after every float, -0
# equal to 0, OFFSET, a LIMIT beyond the rows; ties broken by id so the
# order is total
TOPN_QUERIES = [
    "SELECT id, x FROM f WHERE id <> 0 ORDER BY x, id LIMIT 5",
    "SELECT id, x FROM f WHERE id <> 0 ORDER BY x DESC, id LIMIT 5",
    "SELECT id, x FROM f WHERE id <> 0 ORDER BY x NULLS FIRST, id DESC LIMIT 7",
    "SELECT id, r FROM f WHERE id <> 0 ORDER BY r DESC NULLS LAST, id LIMIT 6",
    "SELECT id, big, s FROM f WHERE id <> 0 ORDER BY big, s DESC, id LIMIT 4",
    "SELECT id, dt, ts FROM f WHERE id <> 0 ORDER BY dt DESC, ts, id LIMIT 5 OFFSET 2",
    "SELECT id, fl FROM f WHERE id <> 0 ORDER BY fl NULLS FIRST, id LIMIT 3",
    "SELECT id, a FROM f WHERE id <> 0 ORDER BY a, id LIMIT 1000",
    "SELECT id, 'c', a FROM f WHERE id <> 0 ORDER BY id DESC LIMIT 3",
]


@pytest.mark.parametrize("threads", ["1", "4"])
def test_topn(base, threads):
    base.conn.execute("SET pg_warp.cpu_threads = " + threads)
    try:
        for q in TOPN_QUERIES:
            check_topn(base, q, expect=nonempty)
    finally:
        base.conn.execute("RESET pg_warp.cpu_threads")


def test_topn_big(big):
    """43 batches: text under the database's collation, numeric,
    timestamptz; serial and on 4 threads (rounds), errors raised as under
    PostgreSQL's Sort (which reads every row first, LIMIT 1 or not)"""
    conn = big.conn
    queries = ["SELECT t, id FROM f WHERE k < 50 ORDER BY t DESC NULLS FIRST, id LIMIT 25",
               "SELECT m, tz, id FROM f WHERE t LIKE '%A%' ORDER BY m DESC, tz, id LIMIT 40",
               "SELECT x, id FROM f WHERE k IS NOT NULL ORDER BY x NULLS FIRST, id DESC LIMIT 12",
               "SELECT id, t FROM f WHERE m > 10 ORDER BY tz DESC, id LIMIT 3000"]
    for threads in ("1", "4"):
        conn.execute("SET pg_warp.cpu_threads = " + threads)
        try:
            for q in queries:
                check_topn(big, q, expect=nonempty)
            check_topn(big, "SELECT id FROM f WHERE 10 / (id - 25000) >= 0 ORDER BY id LIMIT 1",
                       expect="error:22012")
        finally:
            conn.execute("RESET pg_warp.cpu_threads")
    # output and ORDER BY expressions the engine computes are the node's own
    # columns, computed for every row as PostgreSQL does before its sort:
    # an overflow in a row past the LIMIT is raised there too
    check_topn(big, "SELECT id, k FROM f WHERE k < 5 ORDER BY k * 2, id LIMIT 5", expect=nonempty)
    check_topn(big, "SELECT x * 2 + 1 AS y, m, k % 7, id FROM f WHERE k < 50 "
                    "ORDER BY x * 2 + 1 DESC NULLS LAST, id LIMIT 9", expect=nonempty)
    check_topn(big, "SELECT k * 100000000 AS e, id FROM f WHERE id <> -1 ORDER BY id LIMIT 3",
               expect="error:22003")
    # not in the node: an output the engine does not compute (upper()), a
    # window, a LIMIT past pg_warp's bound, WITH TIES
    set_side(conn, big.w, True)
    for q in ("SELECT upper(t), id FROM f WHERE k < 5 ORDER BY id LIMIT 5",
              "SELECT id, rank() OVER (ORDER BY k) FROM f WHERE k < 5 ORDER BY id LIMIT 5",
              "SELECT id FROM f WHERE k < 50 ORDER BY id LIMIT 200000",
              "SELECT id FROM f WHERE k < 50 ORDER BY k FETCH FIRST 3 ROWS WITH TIES"):
        plan = plan_of(conn, q)
        assert "Top-N" not in plan, "%s\n%s" % (q, plan)
        check(big, q, ordered="ORDER BY id" in q and "OVER" not in q, node="WarpScan")


def _many_rows(n):
    nan, inf = float("nan"), float("inf")
    specials = [nan, inf, -inf, -0.0, 0.0, None, 1e308, -1e308]
    rows = []
    for i in range(n):
        x = specials[i % 8] if i % 5 == 0 else ((i * 7919) % 1000) / 8.0 - 60
        rows.append((i, x, (i * 31) % 7 if i % 9 else None, decimal.Decimal((i * 13) % 20000) / 100,
                     TS(2000, 1, 1) + datetime.timedelta(seconds=(i * 104729) % 9000000)
                     if i % 17 else None, None if i % 23 == 0 else ((i * 37) % 500) / 4.0))
    return rows


@pytest.fixture(scope="module")
def many(conn):
    s = Star(conn, "warpscan_many")
    # one batch: the driver holds every row of it, so it compacts on its
    # own first ORDER BY key (WarpProgram.topn_limit) while scanning
    s.table("f", [("id", "int4"), ("x", "float8"), ("k", "int4"), ("m", "numeric(10,2)"),
                  ("ts", "timestamp"), ("r", "float4")], _many_rows(20000), batch_rows=20000)
    yield s
    s.close()


def test_topn_engine_prefilter(many):
    """The driver drops rows whose first ORDER BY key sorts after the
    limit-th best it has kept: floats with NaN (last), infinities, -0 and
    0 (equal), NULLs first or last, ascending and descending, a key with
    few values (ties across the threshold), numeric and timestamp keys;
    one batch serially and on 4 threads (parts of the batch)"""
    conn = many.conn
    orders = ["x, id", "x DESC, id", "x NULLS FIRST, id DESC", "x DESC NULLS LAST, id",
              "k DESC, id", "k NULLS FIRST, x, id", "m DESC, id", "ts DESC NULLS LAST, id",
              "r, id", "r DESC NULLS FIRST, id"]
    for threads in ("1", "4"):
        conn.execute("SET pg_warp.cpu_threads = " + threads)
        try:
            for o in orders:
                cols = [c.split()[0] for c in o.split(", ")]
                for lim in (1, 10, 3000):
                    check_topn(many, "SELECT %s FROM f WHERE id <> -1 ORDER BY %s LIMIT %d"
                               % (", ".join(dict.fromkeys(cols)), o, lim), expect=nonempty)
        finally:
            conn.execute("RESET pg_warp.cpu_threads")
    # the prefilter did the work: of 20000 rows, few were built
    set_side(conn, many.w, True)
    conn.execute("SET pg_warp.cpu_threads = 1")
    try:
        res = run(conn, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) "
                        "SELECT x, id FROM f WHERE id <> -1 ORDER BY x DESC, id LIMIT 10")
    finally:
        conn.execute("RESET pg_warp.cpu_threads")
    offered = [int(r[0].split(":")[1]) for r in res[1] if "Top-N Rows Offered" in r[0]]
    joined = [int(r[0].split(":")[1]) for r in res[1] if "Rows After Joins" in r[0]]
    assert joined == [20000] and offered and offered[0] < 10000, res


def test_corrupt_batch(mk):
    """A batch whose string offsets point past its data: WarpScan (one
    thread, threads, Top-N) and WarpPreAgg raise arrow_fdw's error (same
    SQLSTATE, the file named), never crash; a LIMIT met in the batches
    before it returns rows without the error, as arrow_fdw's scan does"""
    import struct

    from pwhelpers import IpcLayout, patch
    s = mk()
    rows = [(i, "s%d" % (i % 50)) for i in range(8000)]
    s.table("f", [("id", "int4"), ("t", "text")], rows, batch_rows=1000)
    data = open(s.files["f"], "rb").read()
    layout = IpcLayout(data)
    batch = layout.batch_messages()[5]
    # buffers: id (validity, values), t (validity, offsets, data)
    off = batch["body_offset"] + batch["buffers"][3][0]
    assert struct.unpack_from("<i", data, off) == (0,)
    path = s.files["f"].replace("f.arrow", "bad.arrow")
    with open(path, "wb") as out:
        out.write(patch(data, off + 4 * 1000, "<i", 1 << 30))
    os.chmod(path, 0o644)
    conn = s.conn
    conn.execute("CREATE FOREIGN TABLE %s.bad (id int4, t text) SERVER arrow_fdw "
                 "OPTIONS (file '%s')" % (s.w, path))
    queries = ["SELECT id, t FROM bad WHERE id >= 0",
               "SELECT t, count(*) FROM bad WHERE id >= 0 GROUP BY t",
               "SELECT id, t FROM bad WHERE id >= 0 ORDER BY id DESC LIMIT 5"]
    set_side(conn, s.w, False)
    want = [run(conn, q) for q in queries]
    for w in want:
        assert w[0] == "error" and os.path.basename(path) in w[2], w
    for threads in ("1", "4"):
        set_side(conn, s.w, True)
        conn.execute("SET pg_warp.cpu_threads = " + threads)
        try:
            for q, w, node in zip(queries, want, ("WarpScan", "WarpPreAgg", "Top-N")):
                assert node in plan_of(conn, q), (q, plan_of(conn, q))
                got = run(conn, q)
                assert got[0] == "error" and got[1] == w[1] and os.path.basename(path) in got[2], \
                    (q, threads, got, w)
            got = run(conn, "SELECT id, t FROM bad WHERE id >= 0 LIMIT 5")
            assert got[0] == "ok" and len(got[1]) == 5, got
        finally:
            conn.execute("RESET pg_warp.cpu_threads")
    assert run(conn, "SELECT 1")[1] == [(1,)]


def test_topn_under_gather(big):
    """With parallel workers (pg_warp.cpu_threads = 1) each participant
    keeps its own first rows in order and a Gather Merge merges them"""
    conn = big.conn
    settings = PARALLEL + ["pg_warp.cpu_threads = 1"]
    for st in settings:
        conn.execute("SET " + st)
    try:
        for q in ("SELECT t, id FROM f WHERE k < 50 ORDER BY t DESC NULLS FIRST, id LIMIT 25",
                  "SELECT x, tz, id FROM f WHERE k IS NOT NULL ORDER BY x NULLS FIRST, tz, id LIMIT 700"):
            set_side(conn, big.w, True)
            plan = plan_of(conn, q)
            assert "Gather Merge" in plan and "Parallel Custom Scan (WarpScan)" in plan and \
                "Top-N" in plan and "Sort" not in plan, "%s\n%s" % (q, plan)
            check(big, q, ordered=True, expect=nonempty, node="WarpScan")
    finally:
        for st in settings:
            conn.execute("RESET " + st.split(" =")[0])
        conn.execute("SET max_parallel_workers_per_gather = 0")


def test_topn_rescan(big):
    """Top-N as the inner side of a nested loop without Materialize: the
    kept rows are forgotten and the scan runs again for every outer row"""
    conn = big.conn
    settings = ["enable_material = off", "enable_hashjoin = off", "enable_mergejoin = off",
                "pg_warp.enable_join = off"]
    for st in settings:
        conn.execute("SET " + st)
    try:
        q = ("SELECT v.i, s.id, s.t FROM (VALUES (1), (2), (3)) v(i), "
             "(SELECT id, t FROM f WHERE k < 40 ORDER BY t DESC, id LIMIT 7) s WHERE s.id % 3 = v.i - 1")
        for threads in ("1", "4"):
            conn.execute("SET pg_warp.cpu_threads = " + threads)
            want = check(big, q, expect=nonempty, node="Top-N")
            assert len({r[0] for r in want[1]}) > 1
            set_side(conn, big.w, True)
            assert "Nested Loop" in plan_of(conn, q)
    finally:
        for st in settings + ["pg_warp.cpu_threads = 1"]:
            conn.execute("RESET " + st.split(" =")[0])


def test_null_count_skipping_on_threads(mk):
    """IS [NOT] NULL quals skip batches by their null counts on the engine's
    threads too (each thread reads a batch's header before its columns):
    WarpScan and WarpPreAgg, answers equal to the heap's"""
    s = mk()
    # b is NULL in batch 0 only; c is NULL in every row of batch 7
    rows = [(i, None if i < 1000 and i % 3 == 0 else i % 2 == 0, None if i >= 7000 else i % 5)
            for i in range(8000)]
    s.table("f", [("id", "int4"), ("b", "bool"), ("c", "int4")], rows, batch_rows=1000)
    conn = s.conn
    conn.execute("SET pg_warp.cpu_threads = 4")
    try:
        for q, node, skipped in (("SELECT id, c FROM f WHERE b IS NULL AND id >= 0", "WarpScan", 7),
                                 ("SELECT id FROM f WHERE c IS NOT NULL AND b IS NOT NULL "
                                  "AND id >= 0", "WarpScan", 1),
                                 ("SELECT count(*), sum(c) FROM f WHERE b IS NULL", "WarpPreAgg", 7)):
            check(s, q, expect=nonempty, node=node)
            set_side(conn, s.w, True)
            res = run(conn, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + q)
            lines = [r[0].strip() for r in res[1]]
            assert "Batches Skipped: %d" % skipped in lines and "CPU Threads: 4" in lines, lines
    finally:
        conn.execute("RESET pg_warp.cpu_threads")
