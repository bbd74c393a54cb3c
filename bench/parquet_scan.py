#!/usr/bin/env python3
"""Parquet vs Arrow (see parquet_scan.sh): DATA SF OUT.md

The same lineorder rows as an Arrow IPC file (pgwarp ssb gen: record
batches with statistics) and as Parquet written by pyarrow (snappy and
zstd, 1Mi-row row groups), each behind an arrow_fdw table; each query runs
with pg_warp.mode = cpu (3 timed runs after one warm-up, median) and the
answers of the three tables must agree."""
import os
import statistics
import subprocess
import sys
import time

import psycopg
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

QUERIES = {
    "q1.1-lineorder": "SELECT sum(lo_extendedprice * lo_discount) FROM {t} "
                      "WHERE lo_discount BETWEEN 1 AND 3 AND lo_quantity < 25",
    "count-group": "SELECT lo_shipmode, count(*), sum(lo_revenue) FROM {t} GROUP BY 1 ORDER BY 1",
    "date-range": "SELECT count(*), sum(lo_revenue) FROM {t} "
                  "WHERE lo_orderdate BETWEEN 19940101 AND 19940131",
    "full-agg": "SELECT sum(lo_quantity), sum(lo_revenue), sum(lo_supplycost), max(lo_tax) FROM {t}",
}


def connect_lineorders(files):
    """A connection with lo_NAME over each file (name: path), CPU engine, no
    parallel workers."""
    conn = psycopg.connect(autocommit=True)
    for name, path in files.items():
        conn.execute("IMPORT FOREIGN SCHEMA lineorder FROM SERVER arrow_fdw INTO public "
                     "OPTIONS (file '%s')" % path)
        conn.execute("ALTER FOREIGN TABLE lineorder RENAME TO lo_%s" % name)
        conn.execute("ANALYZE lo_%s" % name)
    conn.execute("SET pg_warp.mode = cpu")
    conn.execute("SET max_parallel_workers_per_gather = 0")
    return conn


def main():
    data, sf, out = sys.argv[1], sys.argv[2], sys.argv[3]
    arrow = os.path.join(data, "lineorder.arrow")
    t0 = time.time()
    table = ipc.open_file(arrow).read_all()
    files = {"arrow": arrow}
    for codec in ("snappy", "zstd"):
        p = os.path.join(data, "lineorder_%s.parquet" % codec)
        pq.write_table(table, p, compression=codec)
        os.chmod(p, 0o644)
        files["parquet_" + codec] = p
    write_s = time.time() - t0
    rows = table.num_rows
    del table
    conn = connect_lineorders(files)
    lines = ["# Parquet vs Arrow, SSB lineorder SF %s, CPU engine" % sf, "",
             "- machine: %s (%d CPUs, shared with other jobs)" % (os.uname().nodename, os.cpu_count()),
             "- data: synthetic SSB lineorder from `pgwarp ssb gen --sf %s` (%d rows); Parquet "
             "written by pyarrow %s from the same table (default 1Mi-row row groups)"
             % (sf, rows, pq.__name__ and __import__("pyarrow").__version__),
             "- command: `bench/parquet_scan.sh %s`; pg_warp.mode = cpu, default threads; "
             "median of 3 runs after a warm-up (files in the page cache)" % sf,
             "- file sizes: " + ", ".join("%s %.0f MB" % (k, os.path.getsize(v) / 1e6)
                                          for k, v in files.items()),
             "- baseline: the Arrow file, same run", "",
             "| query | arrow ms | parquet snappy ms | parquet zstd ms | snappy / arrow |",
             "|---|---|---|---|---|"]
    for qn, q in QUERIES.items():
        res, ms = {}, {}
        for name in files:
            sql = q.format(t="lo_" + name)
            conn.execute(sql).fetchall()
            times = []
            for _ in range(3):
                t = time.time()
                res[name] = conn.execute(sql).fetchall()
                times.append((time.time() - t) * 1000)
            ms[name] = statistics.median(times)
        assert res["arrow"] == res["parquet_snappy"] == res["parquet_zstd"], (qn, res)
        lines.append("| %s | %.0f | %.0f | %.0f | %.2fx |" % (
            qn, ms["arrow"], ms["parquet_snappy"], ms["parquet_zstd"],
            ms["parquet_snappy"] / ms["arrow"]))
    lines += ["", "Answers were identical across the three files for every query.", ""]
    with open(out, "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
