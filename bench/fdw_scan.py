#!/usr/bin/env python3
"""arrow_fdw scan benchmark (issue 3): SSB q1.1's shape on a heap table and on
the same rows as an Arrow foreign table, stock executor (no pg_warp plans
exist yet), with 0 and 2 parallel workers; unclustered and clustered by the
date key (batch skipping).  Needs a running cluster (PG* env vars) with
pg_warp installed, pgwarp on PATH and PGWARP_TEST_DIR readable by the server.

Usage: bench/fdw_scan.py ROWS OUT.md
"""
import os
import re
import statistics
import subprocess
import sys
import time

import psycopg

Q11 = """SELECT sum(lo_extendedprice * lo_discount::bigint) AS revenue FROM {t}
WHERE lo_orderdate BETWEEN 19930101 AND 19931231 AND lo_discount BETWEEN 1 AND 3
  AND lo_quantity < 25"""
RUNS = 5


def timed(cur, sql):
    t0 = time.perf_counter()
    cur.execute(sql)
    rows = cur.fetchall()
    return time.perf_counter() - t0, rows


def explain_io(cur, sql):
    cur.execute("EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, COSTS OFF) " + sql)
    text = "\n".join(r[0] for r in cur.fetchall())
    arrow = sum(int(x) for x in re.findall(r"Bytes Read: (\d+)", text))
    skipped = sum(int(x) for x in re.findall(r"Batches Skipped: (\d+)", text))
    read = sum(int(x) for x in re.findall(r"Batches Read: (\d+)", text))
    launched = sum(int(x) for x in re.findall(r"Workers Launched: (\d+)", text))
    m = re.search(r"Buffers: shared(?: hit=(\d+))?(?: read=(\d+))?", text)
    heap = 0
    if m:
        heap = (int(m.group(1) or 0) + int(m.group(2) or 0)) * 8192
    return arrow or heap, read, skipped, launched


def main():
    rows, out = int(sys.argv[1]), sys.argv[2]
    d = os.environ["PGWARP_TEST_DIR"]
    conn = psycopg.connect(autocommit=True)
    cur = conn.cursor()
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run(["psql", "-qX", "-v", "ON_ERROR_STOP=1", "-v", "rows=%d" % rows,
                    "-f", os.path.join(here, "sql", "lineorder_synth.sql")], check=True)
    cols = ("lo_orderkey int4, lo_linenumber int4, lo_custkey int4, lo_partkey int4, "
            "lo_suppkey int4, lo_orderdate int4, lo_orderpriority text, lo_shippriority int4, "
            "lo_quantity int4, lo_extendedprice int4, lo_ordtotalprice int4, lo_discount int4, "
            "lo_revenue int4, lo_supplycost int4, lo_tax int4, lo_commitdate int4, lo_shipmode text")
    for name, query in (("lineorder_arrow", "SELECT * FROM lineorder"),
                        ("lineorder_arrow_clustered", "SELECT * FROM lineorder ORDER BY lo_orderdate")):
        path = os.path.join(d, name + ".arrow")
        subprocess.run(["pgwarp", "dump", "--quiet", "-c", query, "-o", path], check=True)
        cur.execute("DROP FOREIGN TABLE IF EXISTS %s" % name)
        cur.execute("CREATE FOREIGN TABLE %s (%s) SERVER arrow_fdw OPTIONS (file '%s')" % (name, cols, path))
        cur.execute("ANALYZE %s" % name)
    cur.execute("SELECT pg_total_relation_size('lineorder')")
    heap_bytes = cur.fetchone()[0]
    results = []
    answers = {}
    for table in ("lineorder", "lineorder_arrow", "lineorder_arrow_clustered"):
        for workers in (0, 2):
            cur.execute("SET max_parallel_workers_per_gather = %d" % workers)
            sql = Q11.format(t=table)
            timed(cur, sql)  # warm-up
            times = []
            for _ in range(RUNS):
                t, ans = timed(cur, sql)
                times.append(t)
            answers[(table, workers)] = ans
            io, bread, bskip, launched = explain_io(cur, sql)
            results.append((table, workers, statistics.median(times), min(times), max(times), io, bread, bskip, launched))
    ref = answers[("lineorder", 0)]
    bad = [k for k, v in answers.items() if v != ref]
    base = {w: r[2] for r in results for w in (0, 2) if r[0] == "lineorder" and r[1] == w}
    with open(out, "w") as f:
        f.write("# arrow_fdw scan benchmark — %s on %s\n\n" % (time.strftime("%Y-%m-%d"), os.uname().nodename))
        f.write("Machine: %d cores, %s. PostgreSQL %s, stock executor (pg_warp has no custom plans yet).\n"
                % (os.cpu_count(), subprocess.run(["sh", "-c", "lscpu | sed -n 's/^Model name: *//p'"],
                                                   capture_output=True, text=True).stdout.strip(),
                   conn.execute('SHOW server_version').fetchone()[0]))
        f.write("Command: `bench/fdw_scan.sh %d`. Data: %d rows, 17 columns (lineorder's shape, "
                "bench/sql/lineorder_synth.sql), heap %d MB (unlogged, warm in shared_buffers/page cache); "
                "Arrow files written by `pgwarp dump` (1M-row batches), unclustered and ordered by lo_orderdate.\n\n"
                % (rows, rows, heap_bytes // 1000000))
        f.write("Query (SSB q1.1's shape):\n```sql\n%s\n```\n\n" % Q11.format(t="<table>"))
        f.write("| table | workers (launched) | median s | min s | max s | bytes read | batches read/skipped | speed-up vs heap |\n")
        f.write("|---|---|---|---|---|---|---|---|\n")
        for (table, w, med, mn, mx, io, bread, bskip, launched) in results:
            f.write("| %s | %d (%d) | %.3f | %.3f | %.3f | %.1f MB | %s | %.2fx |\n"
                    % (table, w, launched, med, mn, mx, io / 1e6,
                       "%d/%d" % (bread, bskip) if table != "lineorder" else "-", base[w] / med))
        f.write("\nAnswer: revenue = %s. Identical across all tables and worker counts: %s.\n"
                % (ref[0][0], "yes" if not bad else "NO: %r" % bad))
        f.write("Bytes read: heap = shared buffers touched x 8 kB; Arrow = bytes pread by the FDW "
                "(only the 4 referenced columns' buffers of unskipped batches).\n")
    print(open(out).read())
    if bad:
        sys.exit(1)


if __name__ == "__main__":
    main()
