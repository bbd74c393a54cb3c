"""The engine inside a correlated subquery (a SubPlan PostgreSQL re-executes
for each outer row).

Where PostgreSQL can look the subquery's rows up through an index by the
outer value, the engine (which reads the whole table each time) is not
planned there, and EXPLAIN VERBOSE says so on a line of its own; without
such an index the engine's read stays a candidate (TPC-H q2 over Arrow).
Index scans are disabled by cost (enable_indexscan/bitmapscan off keeps the
index paths, at a prohibitive cost), so that only the guard, not the cost
model, keeps the engine out of the SubPlan.  Answers equal vanilla
PostgreSQL's either way.
"""
import pytest

Q = ("SELECT d.dk, (SELECT count(*) FROM cs_f f WHERE f.k = d.dk AND f.v > 10) AS n "
     "FROM cs_d d ORDER BY d.dk")


@pytest.fixture(scope="module")
def tables(db):
    with db.cursor() as cur:
        cur.execute("CREATE EXTENSION IF NOT EXISTS pg_warp")
        cur.execute("DROP TABLE IF EXISTS cs_f, cs_d")
        cur.execute("CREATE TABLE cs_f AS SELECT (i * 7919) % 500 AS k, i % 97 AS v "
                    "FROM generate_series(1, 200000) i")
        cur.execute("CREATE TABLE cs_d AS SELECT i AS dk FROM generate_series(0, 40) i")
        cur.execute("ANALYZE cs_f")
        cur.execute("ANALYZE cs_d")
    yield
    with db.cursor() as cur:
        cur.execute("RESET ALL")
        cur.execute("DROP TABLE IF EXISTS cs_f, cs_d")


def run(db, enabled):
    with db.cursor() as cur:
        cur.execute("SET pg_warp.enabled = %s" % ("on" if enabled else "off"))
        cur.execute("SET pg_warp.mode = cpu")
        cur.execute("SET pg_warp.heap_min_rows = 0")
        cur.execute("SET max_parallel_workers_per_gather = 0")
        cur.execute("SET enable_indexscan = off")
        cur.execute("SET enable_bitmapscan = off")
        cur.execute(Q)
        rows = cur.fetchall()
        cur.execute("EXPLAIN (VERBOSE) " + Q)
        plan = "\n".join(r[0] for r in cur.fetchall())
    return rows, plan


def subplan_text(plan):
    return plan.split("SubPlan 1", 1)[1].split("pg_warp:", 1)[0] if "SubPlan 1" in plan else ""


def test_index_lookup_keeps_the_subquery_postgresqls(db, tables):
    with db.cursor() as cur:
        cur.execute("CREATE INDEX cs_f_k ON cs_f (k)")
    try:
        want, _ = run(db, False)
        got, plan = run(db, True)
        assert got == want
        assert any(n > 0 for _, n in got)
        assert ("pg_warp: subquery not offloaded: a correlated subquery (re-executed for each "
                "outer row) whose rows PostgreSQL looks up through an index") in plan, plan
        assert "Warp" not in subplan_text(plan), plan
    finally:
        with db.cursor() as cur:
            cur.execute("DROP INDEX cs_f_k")


def test_without_an_index_the_engine_may_run_it(db, tables):
    want, _ = run(db, False)
    got, plan = run(db, True)
    assert got == want
    assert "subquery not offloaded" not in plan, plan
    assert "Custom Scan (WarpPreAgg)" in subplan_text(plan), plan
