"""Extension versions: a database created at 0.1 keeps working, leaves
DISTINCT aggregates beside plain ones to PostgreSQL (and says why), and
after ALTER EXTENSION pg_warp UPDATE gets them offloaded through
pg_warp_merge (0.2, and 0.3's pg_warp_dim_cache_stats), with PostgreSQL's answers (the oracle: a heap table
loaded from the CSV that pyarrow writes)."""
import os
import re
import shutil
import tempfile

import psycopg
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.ipc as ipc
import pytest

from pwhelpers import pg_dsn

DB = "pgwarp_upgrade"
# the version ALTER EXTENSION ... UPDATE reaches: the control file's
with open(os.path.join(os.path.dirname(__file__), "..", "..", "pg_warp.control")) as _f:
    DEFAULT_VERSION = re.search(r"default_version\s*=\s*'([^']+)'", _f.read()).group(1)
QUERIES = [
    "SELECT k, count(DISTINCT a) c, sum(b) s, avg(b) av, count(*) n, max(b) mx FROM {t} GROUP BY k",
    "SELECT count(DISTINCT a) c, sum(b) s, avg(b) av FROM {t}",
    "SELECT count(DISTINCT a) c, sum(b) s FROM {t} WHERE b < -1000",
]


@pytest.fixture(scope="module")
def old(db):
    root = os.environ.get("PGWARP_TEST_DIR") or tempfile.gettempdir()
    scratch = tempfile.mkdtemp(prefix="upgrade.", dir=root)
    os.chmod(scratch, 0o755)
    db.execute("DROP DATABASE IF EXISTS %s" % DB)
    db.execute("CREATE DATABASE %s" % DB)
    conn = psycopg.connect(pg_dsn() + " dbname=%s" % DB, autocommit=True)
    conn.execute("CREATE EXTENSION pg_warp VERSION '0.1'")
    n = 30000
    table = pa.table({
        "k": pa.array([i % 7 for i in range(n)], pa.int32()),
        "a": pa.array([None if i % 11 == 0 else (i * 7919) % 500 for i in range(n)], pa.int32()),
        "b": pa.array([None if i % 13 == 0 else (i * 104729) % 2001 - 1000 for i in range(n)],
                      pa.int32()),
    })
    path = os.path.join(scratch, "u.arrow")
    with ipc.new_file(path, table.schema) as w:
        w.write_table(table, max_chunksize=4096)
    csv = os.path.join(scratch, "u.csv")
    pacsv.write_csv(table, csv)
    conn.execute("CREATE FOREIGN TABLE u_a (k integer, a integer, b integer) "
                 "SERVER arrow_fdw OPTIONS (file '%s')" % path)
    conn.execute("CREATE TABLE u_h (k integer, a integer, b integer)")
    with open(csv, "rb") as f, conn.cursor().copy(
            "COPY u_h FROM STDIN (FORMAT csv, HEADER true)") as cp:
        cp.write(f.read())
    conn.execute("ANALYZE u_a, u_h")
    # make the engine worth it for this small table
    conn.execute("SET cpu_tuple_cost = 10000")
    conn.execute("SET pg_warp.mode = cpu")
    yield conn
    conn.close()
    db.execute("DROP DATABASE %s" % DB)
    shutil.rmtree(scratch, ignore_errors=True)


def plan(conn, q):
    return "\n".join(r[0] for r in conn.execute("EXPLAIN (VERBOSE, COSTS OFF) " + q).fetchall())


def answers(conn, q):
    conn.execute("SET pg_warp.enabled = off")
    want = sorted(conn.execute(q.format(t="u_h")).fetchall(), key=repr)
    conn.execute("RESET pg_warp.enabled")
    got = sorted(conn.execute(q.format(t="u_a")).fetchall(), key=repr)
    return want, got


def test_version_0_1_then_update(old):
    assert old.execute("SELECT extversion FROM pg_extension WHERE extname = 'pg_warp'"
                       ).fetchone()[0] == "0.1"
    for q in QUERIES:
        p = plan(old, q.format(t="u_a"))
        assert "WarpMerge" not in p and "need pg_warp 0.2" in p, p
        want, got = answers(old, q)
        assert got == want, q
    # plain aggregates alone are offloaded at 0.1 as before
    assert "WarpPreAgg" in plan(old, "SELECT k, sum(b) FROM u_a GROUP BY k")

    assert old.execute("SELECT to_regprocedure('pg_warp_dim_cache_stats()')").fetchone()[0] is None
    old.execute("ALTER EXTENSION pg_warp UPDATE")
    assert old.execute("SELECT extversion FROM pg_extension WHERE extname = 'pg_warp'"
                       ).fetchone()[0] == DEFAULT_VERSION
    # 0.3: the dimension caches' account
    entries, nbytes, cluster = old.execute("SELECT * FROM pg_warp_dim_cache_stats()").fetchone()
    assert entries >= 0 and nbytes >= 0 and cluster is not None and cluster >= nbytes
    for q in QUERIES:
        p = plan(old, q.format(t="u_a"))
        assert "WarpMerge" in p and "WarpPreAgg" in p, p
        want, got = answers(old, q)
        assert len(want) >= 1
        assert got == want, q


def test_merge_aggregate_refuses_other_plans(old):
    old.execute("ALTER EXTENSION pg_warp UPDATE")
    for q in ("SELECT pg_warp_merge(b::bigint, 'sum(integer)'::regprocedure, NULL::bigint) FROM u_h",
              "SELECT pg_warp_merge(s, 'sum(integer)'::regprocedure, NULL::bigint) "
              "FROM (SELECT k, sum(b) s FROM u_a GROUP BY k) x"):
        with pytest.raises(psycopg.errors.FeatureNotSupported):
            old.execute(q)


def test_fresh_database_gets_the_default_version(db):
    default = db.execute("SELECT default_version FROM pg_available_extensions "
                         "WHERE name = 'pg_warp'").fetchone()[0]
    assert default == DEFAULT_VERSION
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "pg_warp.control")) as f:
        assert "default_version = '%s'" % default in f.read()
