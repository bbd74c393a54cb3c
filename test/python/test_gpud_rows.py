"""WarpScan and WarpJoin on pg_warp_gpud: rows streamed back in chunks.

With pg_warp.mode = gpu the row-returning plans (a filter and projection
over one Arrow table, a star join without aggregation, ORDER BY ... LIMIT
kept in the node) run on the daemon, which streams their rows back chunk by
chunk; `make test` runs the daemon on its CPU driver (pg_warp.gpud_device =
cpu), a GPU machine on the GPU.  Every answer is compared with vanilla
PostgreSQL's (pg_warp.enabled = off) over heap tables loaded from pyarrow's
CSV, so the reader cannot hide its own bugs.  Also: the daemon killed or the
query cancelled mid-stream, a cursor that stops reading early, two daemon
scans in one plan, and the backend's connection kept across queries.
"""
import datetime
import decimal
import os
import time

import psycopg
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.ipc as ipc
import pytest

from pwhelpers import gpud_status, pg_dsn

S = "gpud_rows"
NROWS = 60_000
BATCH = 3_000                   # 20 batches: the slow fault takes 1 s
WIDE_ROWS = 150_000             # one batch whose rows take several chunks


def fact_table(n):
    def nul(i, m, v):
        return None if i % m == 0 else v
    return pa.table({
        "k": pa.array([nul(i, 101, (i * 7919) % 40) for i in range(n)], pa.int32()),
        "v": pa.array([nul(i, 97, (i * 31) % 100_003 - 50_000) for i in range(n)], pa.int64()),
        "x": pa.array([nul(i, 89, ((i * 13) % 1000) / 8.0) for i in range(n)], pa.float64()),
        "s": pa.array([nul(i, 83, "s%d" % (i % 17)) for i in range(n)], pa.string()),
        "n": pa.array([nul(i, 79, decimal.Decimal((i * 37) % 200_000 - 100_000) / 100)
                       for i in range(n)], pa.decimal128(10, 2)),
        "d": pa.array([nul(i, 73, datetime.date(2000, 1, 1) + datetime.timedelta(days=i % 5000))
                       for i in range(n)], pa.date32()),
    })


COLS = "k int, v bigint, x float8, s text, n numeric(10,2), d date"


def write_arrow(table, path, batch):
    with ipc.new_file(path, table.schema) as w:
        for b in table.to_batches(max_chunksize=batch):
            w.write_batch(b)
    os.chmod(path, 0o644)


@pytest.fixture(scope="module")
def rows_db(db, tmp_path_factory):
    if gpud_status(db) is None:
        if os.environ.get("PGWARP_EXPECT_GPUD"):
            pytest.fail("pg_warp_gpud does not serve the test cluster (see the server log)")
        pytest.skip("no pg_warp_gpud serves this cluster")
    root = os.environ.get("PGWARP_TEST_DIR") or str(tmp_path_factory.mktemp("gpud_rows"))
    d = os.path.join(root, "gpud_rows_%d" % os.getpid())
    os.makedirs(d, exist_ok=True)
    os.chmod(d, 0o777)
    db.execute("CREATE EXTENSION IF NOT EXISTS pg_warp")
    db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % S)
    db.execute("CREATE SCHEMA %s" % S)
    for name, n, batch in (("fact", NROWS, BATCH), ("wide", WIDE_ROWS, WIDE_ROWS)):
        t = fact_table(n)
        path = os.path.join(d, name + ".arrow")
        write_arrow(t, path, batch)
        csv = os.path.join(d, name + ".csv")
        pacsv.write_csv(t, csv)
        os.chmod(csv, 0o644)
        db.execute("CREATE FOREIGN TABLE %s.%s (%s) SERVER arrow_fdw OPTIONS (file '%s')"
                   % (S, name, COLS, path))
        db.execute("CREATE TABLE %s.%s_heap (%s)" % (S, name, COLS))
        db.execute("COPY %s.%s_heap FROM '%s' WITH (FORMAT csv, HEADER true)" % (S, name, csv))
        db.execute("ANALYZE %s.%s" % (S, name))
        db.execute("ANALYZE %s.%s_heap" % (S, name))
    db.execute("CREATE TABLE %s.dim AS SELECT g AS k, 'name' || (g %% 9) AS name, g * 1.5 AS w "
               "FROM generate_series(0, 35) g" % S)
    db.execute("ANALYZE %s.dim" % S)
    yield db
    db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % S)


def q(sql, heap):
    return sql.format(f=S + (".fact_heap" if heap else ".fact"),
                      w=S + (".wide_heap" if heap else ".wide"), dim=S + ".dim")


def oracle(conn, sql):
    conn.execute("SET pg_warp.enabled = off")
    try:
        return conn.execute(q(sql, True)).fetchall()
    finally:
        conn.execute("RESET pg_warp.enabled")


def on_daemon(conn, sql, fault="none"):
    conn.execute("SET pg_warp.mode = gpu")
    conn.execute("SET pg_warp.gpud_fault = %s" % fault)
    try:
        return conn.execute(q(sql, False)).fetchall()
    finally:
        conn.execute("RESET pg_warp.gpud_fault")
        conn.execute("RESET pg_warp.mode")


def explain(conn, sql, fault="none"):
    conn.execute("SET pg_warp.mode = gpu")
    conn.execute("SET pg_warp.gpud_fault = %s" % fault)
    try:
        return "\n".join(r[0] for r in conn.execute("EXPLAIN (ANALYZE) " + q(sql, False)))
    finally:
        conn.execute("RESET pg_warp.gpud_fault")
        conn.execute("RESET pg_warp.mode")


def key(row):
    return tuple((v is None, v) for v in row)


def same_rows(a, b):
    return sorted(a, key=key) == sorted(b, key=key)


def wait_for_daemon(conn, old_pid, timeout=15):
    deadline = time.time() + timeout
    while time.time() < deadline:
        st = gpud_status(conn)
        if st and st[2] != old_pid:
            return st
        time.sleep(0.1)
    pytest.fail("the supervisor did not restart pg_warp_gpud within %d s" % timeout)


# the query reads a text column: on a GPU daemon its CPU driver runs it
TEXT_QUAL = "SELECT k, d FROM {f} WHERE s = 's3'"

# filter + projection, a star join, the types the daemon returns as values
ROW_QUERIES = [
    "SELECT k, v, x, n, d FROM {f} WHERE v % 5 = 1",
    "SELECT v, n FROM {f} WHERE x > 60 AND d < '2005-01-01'",
    TEXT_QUAL,
    "SELECT v FROM {f} WHERE k IS NULL OR n IS NULL",
    "SELECT f.v, f.d, dim.name, dim.w FROM {f} f JOIN {dim} dim ON f.k = dim.k WHERE f.x < 20",
    "SELECT f.v, dim.name FROM {f} f LEFT JOIN {dim} dim ON f.k = dim.k WHERE f.v > 40000",
    "SELECT 1 FROM {f} WHERE v > 49000",                        # rows without columns
]


@pytest.mark.parametrize("sql", ROW_QUERIES)
def test_rows_from_the_daemon_match_postgres(rows_db, sql):
    text = explain(rows_db, sql)
    assert "(pg_warp_gpud)" in text, text
    if sql == TEXT_QUAL and gpud_status(rows_db)[0] == "gpu":
        assert "Fallback: wide numeric, text and native columns" in text, text
    else:
        assert "Fallback" not in text, text
    assert "Rows From Daemon: " in text and "Hand-off: " in text, text
    got = on_daemon(rows_db, sql)
    assert same_rows(got, oracle(rows_db, sql))


def test_large_result_streams_in_chunks(rows_db):
    """150,000 rows of 6 columns in one batch: more than one chunk of the
    4 MB row area, every row once."""
    sql = "SELECT k, v, x, n, d, k + 1 FROM {w} WHERE v IS NOT NULL"
    text = explain(rows_db, sql)
    assert "(pg_warp_gpud)" in text, text
    rows = int(text.split("Rows From Daemon: ")[1].split(" in ")[0])
    chunks = int(text.split("Rows From Daemon: ")[1].split(" in ")[1].split()[0])
    assert chunks >= 2 and rows > 140_000, text
    assert same_rows(on_daemon(rows_db, sql), oracle(rows_db, sql))


def test_text_outputs_stay_in_the_backend(rows_db):
    sql = "SELECT s, v FROM {f} WHERE v > 45000"
    text = explain(rows_db, sql)
    assert "pg_warp_gpud" not in text, text
    assert same_rows(on_daemon(rows_db, sql), oracle(rows_db, sql))


@pytest.mark.parametrize("order", ["v DESC NULLS LAST", "v", "x, v", "d DESC, v", "n, v"])
def test_top_n_on_the_daemon(rows_db, order):
    sql = "SELECT k, v, x, n, d FROM {f} WHERE k <> 3 ORDER BY %s LIMIT 40" % order
    text = explain(rows_db, sql)
    assert "(pg_warp_gpud)" in text and "Fallback" not in text, text
    assert on_daemon(rows_db, sql) == oracle(rows_db, sql)


def test_top_n_with_ties(rows_db):
    """ORDER BY k has thousands of rows per value: the order keys are
    PostgreSQL's, and every row returned is one of those with its key (which
    of the tied rows come is not defined by SQL, and differs)."""
    sql = "SELECT k, v FROM {f} ORDER BY k DESC NULLS LAST LIMIT 25"
    got = on_daemon(rows_db, sql)
    want = oracle(rows_db, sql)
    assert [r[0] for r in got] == [r[0] for r in want]
    every = set(oracle(rows_db, "SELECT k, v FROM {f}"))
    assert all(r in every for r in got)


def test_errors_come_after_the_rows_before_them(rows_db):
    sql = "SELECT v FROM {f} WHERE 100 / (k - 7) > 1"
    with pytest.raises(psycopg.errors.DivisionByZero):
        oracle(rows_db, sql)
    with pytest.raises(psycopg.errors.DivisionByZero):
        on_daemon(rows_db, sql)
    # the session and its daemon connection still work
    sql = ROW_QUERIES[0]
    assert same_rows(on_daemon(rows_db, sql), oracle(rows_db, sql))


def test_reading_stops_early(rows_db):
    """A cursor read for 7 rows and closed (as a LIMIT stops its scan): the
    daemon's job is dropped, the session goes on with a new connection."""
    sql = "SELECT k, v FROM {f} WHERE v > 0"
    text = explain(rows_db, sql)
    assert "(pg_warp_gpud)" in text, text
    conn = psycopg.connect(pg_dsn(), autocommit=True)
    try:
        conn.execute("SET pg_warp.mode = gpu")
        conn.execute("SET cursor_tuple_fraction = 1")     # the plan above
        with conn.transaction():
            conn.execute("DECLARE c NO SCROLL CURSOR FOR " + q(sql, False))
            got = conn.execute("FETCH 7 FROM c").fetchall()
            conn.execute("CLOSE c")
        every = set(oracle(conn, sql))
        assert len(got) == 7 and all(r in every for r in got)
        sql = ROW_QUERIES[4]
        assert same_rows(on_daemon(conn, sql), oracle(conn, sql))
    finally:
        conn.close()


def test_two_daemon_scans_in_one_plan(rows_db):
    """UNION ALL of two WarpScans: the second starts while the first's
    result is still held, so it takes a connection of its own."""
    sql = ("SELECT v FROM {f} WHERE k = 1 UNION ALL SELECT v FROM {f} WHERE k = 2 "
           "UNION ALL SELECT count(*) FROM {f} WHERE k = 3")
    text = explain(rows_db, sql)
    assert text.count("(pg_warp_gpud)") >= 2, text
    assert same_rows(on_daemon(rows_db, sql), oracle(rows_db, sql))


def test_cancel_mid_stream(rows_db):
    st = gpud_status(rows_db)
    conn = psycopg.connect(pg_dsn(), autocommit=True)
    try:
        conn.execute("SET statement_timeout = '300ms'")
        t0 = time.time()
        with pytest.raises(psycopg.errors.QueryCanceled):
            on_daemon(conn, "SELECT k, v FROM {f}", fault="slow")
        assert time.time() - t0 < 1.5
        conn.execute("RESET statement_timeout")
        sql = ROW_QUERIES[1]
        assert same_rows(on_daemon(conn, sql), oracle(conn, sql))
    finally:
        conn.close()
    assert gpud_status(rows_db)[2] == st[2], "the daemon restarted after a cancel"


def test_daemon_killed_mid_stream(rows_db):
    """Killed after its first batch, whose rows went up already: a clean
    error (SQLSTATE 58000); a Top-N, which has returned nothing yet, runs
    again on the backend's CPU driver."""
    old = gpud_status(rows_db)
    with pytest.raises(psycopg.errors.SystemError) as e:
        on_daemon(rows_db, "SELECT k, v FROM {f}", fault="crash")
    assert "pg_warp_gpud" in str(e.value)
    new = wait_for_daemon(rows_db, old[2])
    sql = "SELECT k, v, d FROM {f} ORDER BY v DESC NULLS LAST LIMIT 30"
    text = explain(rows_db, sql, fault="crash")
    assert "Fallback: pg_warp_gpud died" in text and "Ran On: CPU" in text, text
    new = wait_for_daemon(rows_db, new[2])
    assert on_daemon(rows_db, sql, fault="crash") == oracle(rows_db, sql)
    wait_for_daemon(rows_db, new[2])


def backend_sockets(pid):
    try:
        return {os.readlink("/proc/%d/fd/%s" % (pid, fd)) for fd in os.listdir("/proc/%d/fd" % pid)
                if os.readlink("/proc/%d/fd/%s" % (pid, fd)).startswith("socket:")}
    except (PermissionError, FileNotFoundError):
        pytest.skip("cannot read the backend's descriptors")


def test_connection_is_kept_across_queries(rows_db):
    """One socket to the daemon serves a session's queries: a socket the
    backend did not have before its first daemon query stays open, the
    same one, across the next queries."""
    conn = psycopg.connect(pg_dsn(), autocommit=True)
    try:
        pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        before = backend_sockets(pid)
        seen = []
        for _ in range(3):
            on_daemon(conn, "SELECT k, count(*) FROM {f} GROUP BY k")
            on_daemon(conn, ROW_QUERIES[1])
            seen.append(backend_sockets(pid) - before)
        assert len(seen[0]) == 1 and seen[0] == seen[1] == seen[2], seen
    finally:
        conn.close()
