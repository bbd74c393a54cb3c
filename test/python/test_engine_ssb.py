"""The 13 SSB queries through pg_warp's engine, against vanilla PostgreSQL.

Data: `pgwarp ssb gen --sf 0.1` writes the tables twice, as dbgen-style .tbl
text and as Arrow files.  The oracle is vanilla PostgreSQL (pg_warp.enabled
= off) over heap tables loaded by COPY from the .tbl text, which never
passes through pg_warp's Arrow code.  Each query then runs over the
arrow_fdw tables with pg_warp on; the plan must be pg_warp's
(Custom Scan (WarpPreAgg)) and the rows must be identical (SSB's sums are
integer, so equality is exact).  The same queries over Arrow with pg_warp
off must agree too (that is arrow_fdw on PostgreSQL's executor).
"""
import glob
import os
import re

import pytest

from pwhelpers import REPO, engine_modes, gpud_status

QUERIES = sorted(glob.glob(os.path.join(REPO, "bench", "ssb", "queries", "q*.sql")))
SCHEMA = "ssb_engine"


def arrowize(sql):
    return re.sub(r"\b(lineorder|customer|supplier|part|date)\b(?!_)", r"\1_arrow", sql)


@pytest.fixture(scope="module")
def ssb(db, pgwarp, tmp_path_factory):
    root = os.environ.get("PGWARP_TEST_DIR") or str(tmp_path_factory.mktemp("ssb"))
    d = os.path.join(root, "engine_ssb_sf01")
    os.makedirs(d, exist_ok=True)
    os.chmod(d, 0o777)
    for fmt in ("tbl", "arrow"):
        r = pgwarp("ssb", "gen", "--sf", "0.1", "--format", fmt, "--out", d, "--quiet")
        assert r.rc == 0, r.stderr
    for f in os.listdir(d):
        os.chmod(os.path.join(d, f), 0o644)
    with db.cursor() as cur:
        cur.execute("CREATE EXTENSION IF NOT EXISTS pg_warp")
        cur.execute("DROP SCHEMA IF EXISTS %s CASCADE" % SCHEMA)
        cur.execute("CREATE SCHEMA %s" % SCHEMA)
    from pwhelpers import pg_dsn
    r = pgwarp("ssb", "load", "-d", pg_dsn(), "--from", d, "--schema", SCHEMA, "--quiet")
    assert r.rc == 0, r.stderr
    with db.cursor() as cur:
        cur.execute("SET search_path = %s, public" % SCHEMA)
    yield db
    with db.cursor() as cur:
        cur.execute("RESET search_path")
        cur.execute("DROP SCHEMA IF EXISTS %s CASCADE" % SCHEMA)


def run(db, sql, enabled, mode="cpu"):
    with db.cursor() as cur:
        cur.execute("SET pg_warp.enabled = %s" % ("on" if enabled else "off"))
        cur.execute("SET pg_warp.mode = %s" % mode)
        cur.execute(sql)
        rows = cur.fetchall()
        cur.execute("RESET pg_warp.enabled")
        cur.execute("RESET pg_warp.mode")
    return rows


def plan(db, sql, mode="cpu", analyze=False):
    with db.cursor() as cur:
        cur.execute("SET pg_warp.enabled = on")
        cur.execute("SET pg_warp.mode = %s" % mode)
        cur.execute("EXPLAIN %s" % ("(ANALYZE) " if analyze else "") + sql)
        text = "\n".join(r[0] for r in cur.fetchall())
        cur.execute("RESET pg_warp.enabled")
        cur.execute("RESET pg_warp.mode")
    return text


def test_thirteen_queries_present():
    assert len(QUERIES) == 13


@pytest.mark.parametrize("mode", engine_modes())
@pytest.mark.parametrize("path", QUERIES, ids=[os.path.basename(q)[:-4] for q in QUERIES])
def test_ssb_query(ssb, path, mode):
    """mode cpu: the CPU driver in the backend (parallel plans allowed);
    mode gpu: the job goes to pg_warp_gpud (its GPU, or its CPU driver in
    CI), and EXPLAIN ANALYZE must say it ran there without a fallback."""
    if mode == "gpu" and gpud_status(ssb) is None:
        pytest.skip("no pg_warp_gpud serves this cluster")
    sql = open(path).read()
    oracle = run(ssb, sql, enabled=False)
    assert len(oracle) > 0, "the oracle returned nothing: the data or query is wrong"
    asql = arrowize(sql)
    p = plan(ssb, asql, mode)
    assert "Custom Scan (WarpPreAgg)" in p, p
    assert "Finalize" in p, p
    if mode == "gpu":
        assert "(pg_warp_gpud)" in p and "Gather" not in p, p
        a = plan(ssb, asql, mode, analyze=True)
        assert "Ran On: " in a and "Fallback" not in a, a
        assert ("Ran On: GPU" in a) == (gpud_status(ssb)[0] == "gpu"), a
    warp = run(ssb, asql, enabled=True, mode=mode)
    assert warp == oracle
    assert run(ssb, asql, enabled=False) == oracle


def test_heap_only_query_below_threshold_not_offloaded(ssb):
    """Without an Arrow table, and with pg_warp.heap_min_rows above the
    heap fact table's rows (or -1), the planner hook leaves the plan alone."""
    with ssb.cursor() as cur:
        for setting in ("-1", "100000000"):
            cur.execute("SET pg_warp.heap_min_rows = " + setting)
            try:
                p = plan(ssb, open(QUERIES[0]).read())
            finally:
                cur.execute("RESET pg_warp.heap_min_rows")
            assert "WarpPreAgg" not in p, p


@pytest.mark.parametrize("path", QUERIES, ids=[os.path.basename(q)[:-4] for q in QUERIES])
def test_ssb_query_heap_fact(ssb, path):
    """The 13 queries on the heap tables with pg_warp on: lineorder (600K
    rows, above pg_warp.heap_min_rows) becomes a heap fact table the engine
    reads through the table AM; answers equal to PostgreSQL's."""
    sql = open(path).read()
    oracle = run(ssb, sql, enabled=False)
    assert len(oracle) > 0
    p = plan(ssb, sql)
    assert "Custom Scan (WarpPreAgg)" in p and "Fact Storage: heap" in p, p
    assert run(ssb, sql, enabled=True) == oracle


def test_disabled_by_guc(ssb):
    asql = arrowize(open(QUERIES[0]).read())
    with ssb.cursor() as cur:
        for guc in ("pg_warp.enabled", "pg_warp.enable_preagg"):
            cur.execute("SET %s = off" % guc)
            cur.execute("EXPLAIN " + asql)
            text = "\n".join(r[0] for r in cur.fetchall())
            cur.execute("RESET %s" % guc)
            assert "WarpPreAgg" not in text, guc


def test_inner_hash_mem_bounds_offload(ssb):
    """A dimension estimated larger than pg_warp.inner_hash_mem is not built."""
    asql = arrowize(open([q for q in QUERIES if q.endswith("q2.1.sql")][0]).read())
    with ssb.cursor() as cur:
        cur.execute("SET pg_warp.inner_hash_mem = 64")
        cur.execute("EXPLAIN " + asql)
        text = "\n".join(r[0] for r in cur.fetchall())
        cur.execute("RESET pg_warp.inner_hash_mem")
    assert "WarpPreAgg" not in text
