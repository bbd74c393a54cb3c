"""`pgwarp bench ssb`: the runner's answer comparison and its outputs.

The runner only needs the table names, so tiny heap tables stand in for the
SSB tables and plain tables for the *_arrow foreign tables; they live in a
database of their own so that other tests' SSB tables do not interfere.
"""
import csv
import os
import xml.etree.ElementTree as ET

import psycopg
import pytest

from pwhelpers import pg_dsn

DBNAME = "pgwarp_bench_runner_test"

SETUP = """
CREATE TABLE lineorder (lo_orderkey int, lo_orderdate int, lo_revenue int, lo_tax float8);
CREATE TABLE date (d_datekey int, d_year int);
INSERT INTO date SELECT 19920101 + y * 10000, 1992 + y FROM generate_series(0, 6) y;
INSERT INTO lineorder
SELECT k, 19920101 + (k % 7) * 10000, k * 10, k / 3.0 FROM generate_series(1, 200) k;
CREATE TABLE date_arrow AS SELECT * FROM date;
-- the same rows in another physical order, and float sums that differ in
-- the last bits only: both must compare equal
CREATE TABLE lineorder_arrow AS
SELECT lo_orderkey, lo_orderdate, lo_revenue,
       lo_tax * (1 + 1e-13 * (lo_orderkey % 2)) AS lo_tax
FROM lineorder ORDER BY lo_orderkey DESC;
"""

QUERIES = {
    # ORDER BY on output columns
    "q1.1": """-- sums per year
select d_year, sum(lo_revenue) as revenue, sum(lo_tax) as tax
from lineorder, date
where lo_orderdate = d_datekey
group by d_year
order by d_year;""",
    # no ORDER BY: rows are compared sorted
    "q1.2": """select lo_orderkey, lo_revenue, 'date' as part
from lineorder where lo_orderkey <= 20;""",
    # ties in the ORDER BY key may come in any order
    "q2.1": """select d_year % 2 as parity, d_year, count(*) as n
from date join lineorder on lo_orderdate = d_datekey
group by d_year
order by parity""",
}


@pytest.fixture(scope="module")
def bench_db(db):
    db.execute("DROP DATABASE IF EXISTS %s" % DBNAME)
    db.execute("CREATE DATABASE %s" % DBNAME)
    dsn = pg_dsn() + " dbname=%s" % DBNAME
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(SETUP)
    yield dsn
    db.execute("DROP DATABASE IF EXISTS %s WITH (FORCE)" % DBNAME)


@pytest.fixture
def queries(scratch):
    qdir = os.path.join(scratch, "queries")
    os.makedirs(qdir)
    for name, sql in QUERIES.items():
        with open(os.path.join(qdir, name + ".sql"), "w") as f:
            f.write(sql + "\n")
    return qdir


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_normal_run_writes_outputs_and_skips_unavailable_modes(pgwarp, bench_db, queries, scratch):
    out = os.path.join(scratch, "out")
    r = pgwarp("bench", "ssb", "-d", bench_db, "--modes", "heap,arrow,warp-cpu,warp-gpu",
               "--runs", "2", "--queries", queries, "--out", out, timeout=60)
    assert r.rc == 0, r.describe()
    # progress on stderr
    assert "q1.1 heap: warm-up" in r.err, r.describe()

    rows = read_csv(os.path.join(out, "results.csv"))
    assert [(x["query"], x["mode"]) for x in rows] == [
        (q, m) for q in ("q1.1", "q1.2", "q2.1")
        for m in ("heap", "arrow", "warp-cpu", "warp-gpu")]
    expect_rows = {"q1.1": "7", "q1.2": "20", "q2.1": "7"}
    for x in rows:
        if x["mode"] in ("heap", "arrow"):
            assert x["status"] == "ok", x
            assert x["runs"] == "2" and x["rows"] == expect_rows[x["query"]], x
            assert 0 < float(x["min_s"]) <= float(x["median_s"]) <= float(x["max_s"]), x
        else:
            # the *_arrow tables here are heap tables, so no pg_warp plan: reported, not dropped
            assert x["status"] == "SKIPPED", x
            assert "pg_warp plan node" in x["note"], x
            assert x["median_s"] == "", x
    assert "SKIPPED" in r.err

    md = open(os.path.join(out, "results.md")).read()
    assert "| query | heap (s) | arrow (s) | warp-cpu (s) | warp-gpu (s) | rows |" in md
    for q in ("q1.1", "q1.2", "q2.1"):
        line = next(l for l in md.splitlines() if l.startswith("| %s |" % q))
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[0] == q
        float(cells[1])                                  # heap: median seconds
        assert cells[2].endswith("x)"), line             # arrow: ratio to heap
        assert cells[3] == cells[4] == "skipped", line
        assert cells[5] == expect_rows[q]
    assert "warp-cpu SKIPPED (q1.1, q1.2, q2.1)" in md
    assert "command: `pgwarp bench ssb -d" in md
    assert "date:" in md and "client machine:" in md

    svg = ET.parse(os.path.join(out, "chart.svg")).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    bars = [e for e in svg.iter(ns + "rect") if e.find(ns + "title") is not None]
    assert len(bars) == 6                               # 3 queries x 2 timed modes
    texts = " ".join(e.text or "" for e in svg.iter(ns + "text"))
    for word in ("heap", "arrow", "warp-cpu (skipped)", "log scale", "query", "q2.1"):
        assert word in texts, word


def test_planted_difference_fails_loudly(pgwarp, bench_db, queries, scratch):
    with psycopg.connect(bench_db, autocommit=True) as c:
        c.execute("UPDATE lineorder_arrow SET lo_revenue = lo_revenue + 1 WHERE lo_orderkey = 15")
    try:
        out = os.path.join(scratch, "out")
        r = pgwarp("bench", "ssb", "-d", bench_db, "--modes", "heap,arrow", "--runs", "1",
                   "--queries", queries, "--out", out, timeout=60)
        assert r.rc == 1, r.describe()
        # q1.1: lo_orderkey 15 is in year 1993 (15 % 7 = 1): revenue 10+1 more
        heap_rev = sum(k * 10 for k in range(1, 201) if k % 7 == 1)
        assert "q1.1: arrow returns different answers from heap" in r.err, r.describe()
        assert "heap: 1993 | %d |" % heap_rev in r.err, r.describe()
        assert "arrow: 1993 | %d |" % (heap_rev + 1) in r.err, r.describe()
        # q1.2 (no ORDER BY) shows the row too
        assert "heap: 15 | 150 | date" in r.err and "arrow: 15 | 151 | date" in r.err, r.describe()
        # q2.1 is unaffected
        assert "q2.1: arrow returns" not in r.err
        assert "2 wrong answers" in r.err
        # the outputs are still written, and say so
        rows = {(x["query"], x["mode"]): x for x in read_csv(os.path.join(out, "results.csv"))}
        assert rows[("q1.1", "arrow")]["status"] == "MISMATCH"
        assert rows[("q2.1", "arrow")]["status"] == "ok"
        assert "WRONG ANSWER" in open(os.path.join(out, "results.md")).read()
    finally:
        with psycopg.connect(bench_db, autocommit=True) as c:
            c.execute("UPDATE lineorder_arrow SET lo_revenue = lo_revenue - 1 "
                      "WHERE lo_orderkey = 15")


def test_row_count_and_float_differences(pgwarp, bench_db, queries, scratch):
    with psycopg.connect(bench_db, autocommit=True) as c:
        c.execute("INSERT INTO lineorder_arrow VALUES (5, 99990101, 0, 0)")
        c.execute("UPDATE lineorder_arrow SET lo_tax = lo_tax * (1 + 1e-6) WHERE lo_orderkey = 30")
    try:
        r = pgwarp("bench", "ssb", "-d", bench_db, "--modes", "heap,arrow", "--runs", "1",
                   "--queries", queries, "--only", "q1.1,q1.2", "--out",
                   os.path.join(scratch, "out"), timeout=60)
        assert r.rc == 1, r.describe()
        assert "heap returns 20 rows, arrow 21 rows" in r.err, r.describe()
        assert "arrow: 5 | 0 | date" in r.err, r.describe()
        # a float beyond 1e-9 relative is a difference (q1.1: 30 % 7 = 2, year 1994)
        assert "q1.1: arrow returns different answers" in r.err and "arrow: 1994 |" in r.err
    finally:
        with psycopg.connect(bench_db, autocommit=True) as c:
            c.execute("DELETE FROM lineorder_arrow WHERE lo_orderdate = 99990101")
            c.execute("UPDATE lineorder_arrow SET lo_tax = lo_tax / (1 + 1e-6) "
                      "WHERE lo_orderkey = 30")


def test_show_sql_rewrites_only_table_references(pgwarp, queries):
    r = pgwarp("bench", "ssb", "--modes", "heap,arrow", "--queries", queries, "--show-sql")
    assert r.rc == 0, r.describe()
    assert "from lineorder_arrow AS lineorder, date_arrow AS date\n" in r.out
    assert "from date_arrow AS date join lineorder_arrow AS lineorder on" in r.out
    assert "'date' as part" in r.out                 # strings and aliases untouched
    assert "from lineorder, date\n" in r.out          # heap mode as written


def test_show_sql_fact_warp_rewrites_only_the_fact_table(pgwarp, queries):
    r = pgwarp("bench", "ssb", "--modes", "fact-warp", "--queries", queries, "--show-sql")
    assert r.rc == 0, r.describe()
    assert "from lineorder_arrow AS lineorder, date\n" in r.out
    assert "from date join lineorder_arrow AS lineorder on" in r.out
    assert "date_arrow" not in r.out


def test_usage_errors(pgwarp, queries):
    assert pgwarp("bench").rc == 2
    assert pgwarp("bench", "tpch").rc == 2
    r = pgwarp("bench", "ssb", "--modes", "heap,bogus", "--queries", queries)
    assert r.rc == 2 and 'unknown mode "bogus"' in r.err
    assert pgwarp("bench", "ssb", "--runs", "0").rc == 2
    r = pgwarp("bench", "ssb", "--queries", queries, "--only", "q9.9", "--show-sql")
    assert r.rc == 1 and "q9.9" in r.err
