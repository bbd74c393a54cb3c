"""Heap dimension cache across a crash restart with a prepared transaction
(src/pg/heap_changes.c).

A prepared transaction outlives a restart; the shared-memory slots that
recorded its tables do not.  After the restart a backend caches the
dimension without the prepared changes; COMMIT PREPARED must still make
that entry stale.  The restart is a crash restart (a backend killed with
SIGKILL), which reinitializes shared memory like a server restart.  The
oracle is PostgreSQL with pg_warp off over a heap copy of the fact table,
in the same session.
"""
import os
import re
import signal

import psycopg
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.ipc as ipc
import pytest

from pwhelpers import pg_dsn, wait_for_crash_restart, wait_for_server

SCHEMA = "heapdims_restart_t"
QUERY = ("SELECT d.grp, count(*), sum(f.v) FROM {s}.{f} f JOIN {s}.dim d ON f.k = d.id "
         "GROUP BY 1 ORDER BY 1")


def connect():
    return psycopg.connect(pg_dsn(), autocommit=True)


def warp(c):
    sql = QUERY.format(s=SCHEMA, f="fact")
    plan = "\n".join(r[0] for r in c.execute("EXPLAIN (ANALYZE) " + sql).fetchall())
    assert "WarpPreAgg" in plan, plan
    return c.execute(sql).fetchall(), int(re.search(r"Dimensions From Cache: (\d+)", plan).group(1))


def oracle(c):
    c.execute("SET pg_warp.enabled = off")
    rows = c.execute(QUERY.format(s=SCHEMA, f="fact_h")).fetchall()
    c.execute("RESET pg_warp.enabled")
    return rows


def test_commit_prepared_after_crash_restart(module_scratch):
    with connect() as c:
        if int(c.execute("SHOW max_prepared_transactions").fetchone()[0]) == 0:
            pytest.skip("max_prepared_transactions = 0 on this cluster")
        n = 20_000
        fact = pa.table({"k": pa.array([i % 40 for i in range(n)], pa.int32()),
                         "v": pa.array([i % 97 for i in range(n)], pa.int64())})
        path = os.path.join(module_scratch, "fact.arrow")
        with ipc.new_file(path, fact.schema) as w:
            w.write_table(fact)
        os.chmod(path, 0o644)
        csv = os.path.join(module_scratch, "fact.csv")
        pacsv.write_csv(fact, csv)
        os.chmod(csv, 0o644)
        c.execute("CREATE EXTENSION IF NOT EXISTS pg_warp")
        c.execute("DROP SCHEMA IF EXISTS %s CASCADE" % SCHEMA)
        c.execute("CREATE SCHEMA %s" % SCHEMA)
        c.execute("CREATE FOREIGN TABLE %s.fact (k int, v bigint) SERVER arrow_fdw "
                  "OPTIONS (file '%s')" % (SCHEMA, path))
        c.execute("CREATE TABLE %s.fact_h (k int, v bigint)" % SCHEMA)
        c.execute("COPY %s.fact_h FROM '%s' WITH (FORMAT csv, HEADER true)" % (SCHEMA, csv))
        c.execute("CREATE TABLE %s.dim AS SELECT g AS id, 'g' || (g %% 4) AS grp "
                  "FROM generate_series(0, 39) g" % SCHEMA)
        c.execute("ANALYZE %s.dim" % SCHEMA)
        c.execute("ANALYZE %s.fact" % SCHEMA)
        c.execute("BEGIN")
        c.execute("UPDATE %s.dim SET grp = 'prepared' WHERE id < 25" % SCHEMA)
        c.execute("PREPARE TRANSACTION 'pg_warp_heapdims_restart'")
    prepared = True
    try:
        watch = connect()
        victim = connect()
        os.kill(victim.execute("SELECT pg_backend_pid()").fetchone()[0], signal.SIGKILL)
        wait_for_crash_restart(watch)
        try:
            victim.close()
        except Exception:
            pass
        a = wait_for_server(60)
        a.execute("SET pg_warp.mode = cpu")
        a.execute("SET max_parallel_workers_per_gather = 0")
        before = oracle(a)
        rows, _ = warp(a)
        rows2, cached = warp(a)
        assert cached == 1 and rows == rows2 == before
        with connect() as b:
            b.execute("COMMIT PREPARED 'pg_warp_heapdims_restart'")
        prepared = False
        rows, cached = warp(a)
        assert cached == 0, "a prepared change committed after a restart came from the cache"
        assert rows == oracle(a) != before
        a.close()
    finally:
        with wait_for_server(60) as c:
            if prepared:
                c.execute("ROLLBACK PREPARED 'pg_warp_heapdims_restart'")
            c.execute("DROP SCHEMA IF EXISTS %s CASCADE" % SCHEMA)
