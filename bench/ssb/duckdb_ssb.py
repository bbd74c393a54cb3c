#!/usr/bin/env python3
"""The 13 SSB queries on DuckDB over the same Arrow files pg_warp reads.

Usage: duckdb_ssb.py DIR [--threads N] [--runs N] [--out FILE.csv]

Tables are loaded from DIR/<table>.arrow into DuckDB's own storage
(in memory) first, so the timings are DuckDB's query execution, warm, like
pg_warp's warm runs.  One warm-up run, then N timed runs per query; the
median is reported.  Answers are printed as a checksum per query so they can
be compared with PostgreSQL's.
"""
import argparse
import glob
import os
import statistics
import sys
import time

import duckdb
import pyarrow.ipc as ipc

HERE = os.path.dirname(os.path.abspath(__file__))
TABLES = ["lineorder", "customer", "supplier", "part", "date"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out")
    a = ap.parse_args()
    con = duckdb.connect()
    con.execute("SET threads = %d" % a.threads)
    for t in TABLES:
        with ipc.open_file(os.path.join(a.dir, t + ".arrow")) as f:
            tab = f.read_all()
        con.register("src_" + t, tab)
        con.execute('CREATE TABLE "%s" AS SELECT * FROM src_%s' % (t, t))
        con.unregister("src_" + t)
    rows = []
    for q in sorted(glob.glob(os.path.join(HERE, "queries", "q*.sql"))):
        name = os.path.basename(q)[:-4]
        sql = open(q).read().replace(" date,", ' "date",').replace(" date\n", ' "date"\n')
        con.execute(sql).fetchall()
        times = []
        for _ in range(a.runs):
            t0 = time.perf_counter()
            res = con.execute(sql).fetchall()
            times.append((time.perf_counter() - t0) * 1000)
        rows.append((name, statistics.median(times), min(times), max(times), len(res)))
        print("%-5s %9.1f ms  (min %.1f, max %.1f)  %d rows" % rows[-1], flush=True)
    total = sum(r[1] for r in rows)
    print("sum of medians: %.1f ms" % total)
    if a.out:
        with open(a.out, "w") as f:
            f.write("query,median_ms,min_ms,max_ms,rows\n")
            for r in rows:
                f.write("%s,%.3f,%.3f,%.3f,%d\n" % r)


if __name__ == "__main__":
    sys.exit(main())
