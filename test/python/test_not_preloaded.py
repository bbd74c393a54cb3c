"""pg_warp loaded by CREATE EXTENSION into a server that does not preload it.

The README promises that pg_warp works without shared_preload_libraries
(CPU engine only, no daemon).  This starts a throwaway server of its own
without preloading, creates the extension, and runs a star query over an
Arrow fact table and a heap dimension: the session must survive loading the
library (PostgreSQL ends it with FATAL if a library defines a
PGC_POSTMASTER setting after startup), the engine must take the query and
answer what PostgreSQL answers with pg_warp off, and the heap dimension must
not be served from the cache (without preloading nobody tracks the writes
to heap tables).
"""
import os
import re
import shutil
import subprocess
import tempfile

import psycopg
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.ipc as ipc
import pytest

PORT = 54341


def as_server(cmd):
    if os.geteuid() == 0:
        cmd = ["runuser", "-u", "postgres", "--"] + cmd
    return subprocess.run(cmd, capture_output=True, text=True)


@pytest.fixture(scope="module")
def plain_server():
    bindir = subprocess.run(["pg_config", "--bindir"], capture_output=True,
                            text=True, check=True).stdout.strip()
    root = tempfile.mkdtemp(prefix="pg_warp_plain.")
    os.chmod(root, 0o755)
    data, sock, files = (os.path.join(root, x) for x in ("data", "sock", "files"))
    for d in (data, sock, files):
        os.mkdir(d)
    os.chmod(files, 0o1777)
    if os.geteuid() == 0:
        shutil.chown(data, "postgres")
        shutil.chown(sock, "postgres")
    os.chmod(data, 0o700)
    r = as_server([os.path.join(bindir, "initdb"), "-D", data, "-A", "trust", "-U", "postgres",
                   "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"])
    assert r.returncode == 0, r.stdout + r.stderr
    log = os.path.join(root, "postgres.log")
    open(log, "w").close()
    os.chmod(log, 0o666)
    r = as_server([os.path.join(bindir, "pg_ctl"), "-D", data, "-l", log, "-w", "-t", "60",
                   "-o", "-p %d -k %s -c listen_addresses='' -c fsync=off" % (PORT, sock),
                   "start"])
    assert r.returncode == 0, r.stdout + r.stderr + open(log).read()
    try:
        yield "host=%s port=%d user=postgres dbname=postgres" % (sock, PORT), files
    finally:
        as_server([os.path.join(bindir, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"])
        shutil.rmtree(root, ignore_errors=True)


def test_extension_without_preloading(plain_server):
    dsn, files = plain_server
    n = 30_000
    fact = pa.table({"k": pa.array([i % 50 for i in range(n)], pa.int32()),
                     "v": pa.array([(i * 13) % 1000 for i in range(n)], pa.int64())})
    path = os.path.join(files, "fact.arrow")
    with ipc.new_file(path, fact.schema) as w:
        w.write_table(fact)
    os.chmod(path, 0o644)
    csv = os.path.join(files, "fact.csv")
    pacsv.write_csv(fact, csv)
    os.chmod(csv, 0o644)
    with psycopg.connect(dsn, autocommit=True) as c:
        assert c.execute("SHOW shared_preload_libraries").fetchone()[0] == ""
        c.execute("CREATE EXTENSION pg_warp")
        c.execute("CREATE FOREIGN TABLE fact (k int, v bigint) SERVER arrow_fdw "
                  "OPTIONS (file '%s')" % path)
        c.execute("CREATE TABLE fact_h (k int, v bigint)")
        c.execute("COPY fact_h FROM '%s' WITH (FORMAT csv, HEADER true)" % csv)
        c.execute("CREATE TABLE dim AS SELECT g AS id, 'g' || (g % 7) AS grp "
                  "FROM generate_series(0, 49) g")
        c.execute("ANALYZE dim")
        c.execute("ANALYZE fact")
        sql = ("SELECT d.grp, count(*), sum(f.v) FROM {f} f JOIN dim d ON f.k = d.id "
               "GROUP BY 1 ORDER BY 1")
        for mode in ("cpu", "auto"):
            c.execute("SET pg_warp.mode = %s" % mode)
            for _ in range(2):
                plan = "\n".join(r[0] for r in c.execute(
                    "EXPLAIN (ANALYZE) " + sql.format(f="fact")).fetchall())
                assert "WarpPreAgg" in plan, plan
                m = re.search(r"Dimensions From Cache: (\d+)", plan)
                assert m and m.group(1) == "0", plan
                assert "Ran On: CPU" in plan, plan
            got = c.execute(sql.format(f="fact")).fetchall()
            c.execute("SET pg_warp.enabled = off")
            assert got == c.execute(sql.format(f="fact_h")).fetchall()
            c.execute("RESET pg_warp.enabled")
        # no shared memory: the session's own account only
        entries, nbytes, cluster = c.execute("SELECT * FROM pg_warp_dim_cache_stats()").fetchone()
        assert entries == 0 and nbytes == 0 and cluster is None
