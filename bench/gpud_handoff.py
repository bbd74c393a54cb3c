#!/usr/bin/env python3
"""The fixed cost of handing a small query to pg_warp_gpud.

Synthetic data: a 100,000-row Arrow fact table (4 batches) and a 50-row heap
dimension.  Runs a WarpPreAgg star query and a WarpScan row query with
pg_warp.mode = gpu (whatever the daemon drives) REPEAT times in one warm
connection, and CLIENTS connections at once doing the same ("at load"),
parses EXPLAIN ANALYZE's Hand-off line and prints the medians and 95th
percentiles of each part (connect, job, wait, result), and the client's
end-to-end latency of the plain query.

    python3 bench/gpud_handoff.py [--repeat 200] [--clients 8] [--dsn ...]

It needs a running cluster with pg_warp preloaded and a serving daemon
(PGHOST/PGPORT/PGUSER or --dsn) and a directory the server can read
(PGWARP_TEST_DIR or --dir).
"""
import argparse
import os
import re
import statistics
import threading
import time

import psycopg
import pyarrow as pa
import pyarrow.ipc as ipc

AGG = ("SELECT d.g, count(*), sum(f.v) FROM hb.fact f JOIN hb.dim d ON f.k = d.k "
       "WHERE f.v > 10 GROUP BY 1")
ROWS = "SELECT k, v FROM hb.fact WHERE v % 1000 = 7"
HANDOFF = re.compile(r"Hand-off: connect ([\d.]+), job ([\d.]+), wait ([\d.]+) "
                     r"\(daemon ([\d.]+), of it set-up ([\d.]+)\), result ([\d.]+) ms")


def setup(conn, d):
    n = 100_000
    t = pa.table({"k": pa.array([i % 50 for i in range(n)], pa.int32()),
                  "v": pa.array([(i * 7919) % 100_003 for i in range(n)], pa.int64())})
    path = os.path.join(d, "handoff_fact.arrow")
    with ipc.new_file(path, t.schema) as w:
        for b in t.to_batches(max_chunksize=25_000):
            w.write_batch(b)
    os.chmod(path, 0o644)
    conn.execute("CREATE EXTENSION IF NOT EXISTS pg_warp")
    conn.execute("DROP SCHEMA IF EXISTS hb CASCADE")
    conn.execute("CREATE SCHEMA hb")
    conn.execute("CREATE FOREIGN TABLE hb.fact (k int, v bigint) SERVER arrow_fdw "
                 "OPTIONS (file '%s')" % path)
    conn.execute("CREATE TABLE hb.dim AS SELECT g AS k, g % 7 AS g FROM generate_series(0, 49) g")
    conn.execute("ANALYZE hb.fact")
    conn.execute("ANALYZE hb.dim")


def handoffs(conn, sql, repeat):
    conn.execute("SET pg_warp.mode = gpu")
    parts, lat = [], []
    for _ in range(repeat):
        text = "\n".join(r[0] for r in conn.execute("EXPLAIN (ANALYZE) " + sql).fetchall())
        m = HANDOFF.search(text)
        if m is None:
            return None, text           # not run on the daemon
        parts.append([float(x) for x in m.groups()])
        t0 = time.perf_counter()
        conn.execute(sql).fetchall()
        lat.append((time.perf_counter() - t0) * 1000)
    return parts, lat


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def report(label, parts, lat):
    names = ["connect", "job", "wait", "daemon", "setup", "result"]
    cols = list(zip(*parts))
    print("%-26s %s | query %.3f / %.3f ms" % (
        label, "  ".join("%s %.3f/%.3f" % (n, statistics.median(c), pct(c, 0.95))
                         for n, c in zip(names, cols)),
        statistics.median(lat), pct(lat, 0.95)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dsn", default="")
    ap.add_argument("--dir", default=os.environ.get("PGWARP_TEST_DIR", "/tmp"))
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument("--clients", type=int, default=8)
    a = ap.parse_args()
    with psycopg.connect(a.dsn, autocommit=True) as c:
        setup(c, a.dir)
        print("median/p95 in ms over %d runs (EXPLAIN ANALYZE's Hand-off parts; "
              "query: client latency of the plain query)" % a.repeat)
        for label, sql in (("WarpPreAgg, 1 client", AGG), ("WarpScan rows, 1 client", ROWS)):
            parts, lat = handoffs(c, sql, 5)    # warm
            if parts is None:
                print("%-26s not run on pg_warp_gpud:\n%s" % (label, lat))
                continue
            report(label, *handoffs(c, sql, a.repeat))
    results = [None] * a.clients

    def client(i):
        with psycopg.connect(a.dsn, autocommit=True) as c:
            results[i] = handoffs(c, AGG, a.repeat // 2)

    th = [threading.Thread(target=client, args=(i,)) for i in range(a.clients)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    parts = [p for r in results for p in r[0]]
    lat = [x for r in results for x in r[1]]
    report("WarpPreAgg, %d clients" % a.clients, parts, lat)


if __name__ == "__main__":
    main()
