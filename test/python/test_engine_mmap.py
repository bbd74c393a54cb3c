"""The CPU engine's threads reading Arrow files through a memory mapping
(pg_warp.cpu_mmap; src/engine/warp_cpu_pool.c, src/engine/warp_mapguard.c).

With the mapping, uncompressed buffers are used in place: answers and the
bytes counted must be those of the pread path, and a file truncated in
place while a query reads it must end the query with PostgreSQL's error
(55000, "changed during the scan"), not kill the backend with SIGBUS (which
would make the postmaster restart every session).  The oracle is
PostgreSQL with pg_warp off over a heap copy loaded from pyarrow's CSV.
"""
import os
import re

import psycopg
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.ipc as ipc
import pytest

from pwhelpers import pg_dsn

SCHEMA = "mmap_t"
BATCHES = 40
ROWS = 50_000


def fact_table():
    n = BATCHES * ROWS
    return pa.table({"k": pa.array([(i * 7) % 1000 for i in range(n)], pa.int32()),
                     "v": pa.array([(i * 13) % 100_003 for i in range(n)], pa.int64()),
                     "s": pa.array(["s%d" % (i % 37) for i in range(n)])})


def write_fact(path, table):
    with ipc.new_file(path, table.schema) as w:
        for b in table.to_batches(max_chunksize=ROWS):
            w.write_batch(b)
    os.chmod(path, 0o666)


@pytest.fixture(scope="module")
def fact(db, module_scratch):
    t = fact_table()
    path = os.path.join(module_scratch, "fact.arrow")
    write_fact(path, t)
    csv = os.path.join(module_scratch, "fact.csv")
    pacsv.write_csv(t, csv)
    os.chmod(csv, 0o644)
    db.execute("CREATE EXTENSION IF NOT EXISTS pg_warp")
    db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % SCHEMA)
    db.execute("CREATE SCHEMA %s" % SCHEMA)
    db.execute("CREATE FOREIGN TABLE %s.fact (k int, v bigint, s text) SERVER arrow_fdw "
               "OPTIONS (file '%s')" % (SCHEMA, path))
    db.execute("CREATE TABLE %s.fact_h (k int, v bigint, s text)" % SCHEMA)
    db.execute("COPY %s.fact_h FROM '%s' WITH (FORMAT csv, HEADER true)" % (SCHEMA, csv))
    db.execute("ANALYZE %s.fact" % SCHEMA)
    db.execute("SET pg_warp.mode = cpu")
    db.execute("SET pg_warp.cpu_threads = 3")
    db.execute("SET max_parallel_workers_per_gather = 0")
    yield db, path, t
    db.execute("RESET pg_warp.mode")
    db.execute("RESET pg_warp.cpu_threads")
    db.execute("RESET max_parallel_workers_per_gather")
    db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % SCHEMA)


AGG = ("SELECT k %% 10, count(*), sum(v), min(s) FROM {s}.{f} WHERE v > 500 "
       "GROUP BY 1 ORDER BY 1")
ROWSQ = "SELECT k, v, s FROM {s}.{f} WHERE v %% 5 = 1"


def explain(db, sql):
    return "\n".join(r[0] for r in db.execute("EXPLAIN (ANALYZE) " + sql).fetchall())


@pytest.fixture(scope="module")
def variants(fact, module_scratch):
    """The same rows as a zstd-compressed file and with the text column
    dictionary-encoded (a file the pool does not map)."""
    db, _, t = fact
    zpath = os.path.join(module_scratch, "fact_zstd.arrow")
    with ipc.new_file(zpath, t.schema,
                      options=ipc.IpcWriteOptions(compression="zstd")) as w:
        for b in t.to_batches(max_chunksize=ROWS):
            w.write_batch(b)
    os.chmod(zpath, 0o644)
    dt = t.set_column(2, "s", t.column("s").dictionary_encode())
    dpath = os.path.join(module_scratch, "fact_dict.arrow")
    write_fact(dpath, dt)
    for name, path in (("fact_zstd", zpath), ("fact_dict", dpath)):
        db.execute("CREATE FOREIGN TABLE %s.%s (k int, v bigint, s text) SERVER arrow_fdw "
                   "OPTIONS (file '%s')" % (SCHEMA, name, path))
        db.execute("ANALYZE %s.%s" % (SCHEMA, name))
    return db


@pytest.mark.parametrize("table", ["fact", "fact_zstd", "fact_dict"])
@pytest.mark.parametrize("query", [AGG, ROWSQ])
def test_same_answers_and_bytes(fact, variants, query, table):
    db, _, _ = fact
    warp_sql = query.format(s=SCHEMA, f=table).replace("%%", "%")
    got = {}
    for m in ("on", "off"):
        db.execute("SET pg_warp.cpu_mmap = %s" % m)
        plan = explain(db, warp_sql)
        assert "Custom Scan (Warp" in plan and "CPU Threads: 3" in plan, plan
        got[m] = (sorted(db.execute(warp_sql).fetchall()),
                  re.search(r"Bytes Read: (\d+)", plan).group(1))
    db.execute("RESET pg_warp.cpu_mmap")
    db.execute("SET pg_warp.enabled = off")
    want = sorted(db.execute(query.format(s=SCHEMA, f="fact_h").replace("%%", "%")).fetchall())
    db.execute("RESET pg_warp.enabled")
    assert got["on"][0] == got["off"][0] == want
    assert got["on"][1] == got["off"][1], "bytes counted differ with the mapping"


@pytest.mark.parametrize("mmap", ["on", "off"])
def test_file_truncated_between_rounds(fact, mmap):
    """Row mode runs the threads in rounds; the cursor's first FETCH runs
    the first round, then the file is cut to a quarter: the next round
    touches pages the file no longer has."""
    db, path, t = fact
    with psycopg.connect(pg_dsn(), autocommit=True) as c:
        started = c.execute("SELECT pg_postmaster_start_time()").fetchone()[0]
        c.execute("SET pg_warp.mode = cpu")
        c.execute("SET pg_warp.cpu_threads = 3")
        c.execute("SET max_parallel_workers_per_gather = 0")
        c.execute("SET pg_warp.cpu_mmap = %s" % mmap)
        sql = ROWSQ.format(s=SCHEMA, f="fact").replace("%%", "%")
        plan = explain(c, sql)
        assert "WarpScan" in plan and "CPU Threads: 3" in plan, plan
        try:
            c.execute("BEGIN")
            c.execute("DECLARE cur NO SCROLL CURSOR FOR " + sql)
            assert len(c.execute("FETCH 1 FROM cur").fetchall()) == 1
            os.truncate(path, os.path.getsize(path) // 4)
            with pytest.raises(psycopg.Error) as e:
                c.execute("FETCH ALL FROM cur").fetchall()
            assert e.value.sqlstate == "55000", e.value
            assert "changed during the scan" in str(e.value)
            c.execute("ROLLBACK")
            # the session and the server lived through it
            assert c.execute("SELECT 1").fetchone() == (1,)
        finally:
            write_fact(path, t)
        with psycopg.connect(pg_dsn(), autocommit=True) as d:
            assert d.execute("SELECT pg_postmaster_start_time()").fetchone()[0] == started
