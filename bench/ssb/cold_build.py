#!/usr/bin/env python3
"""The first query of a connection: SSB with pg_warp's dimension cache cold.

Usage: cold_build.py [--queries DIR] [--runs N] [--mode cpu|gpu] [--out FILE.md]

pg_warp keeps the join tables it built for a query's dimensions in the
backend (warp_dimcache.c), so warm benchmarks never see the build.  A new
connection does: every query here runs in a fresh connection, once with
`pg_warp.enable_dim_scan = on` (the engine reads Arrow dimensions straight
from their batches, warp_dim_arrow.c) and once with it off (the dimension
plans run through PostgreSQL's executor), alternating, N times each; the
medians of EXPLAIN ANALYZE's `Build Time` and `Execution Time` are printed
as a Markdown table.  The tables are pgwarp ssb load's `_arrow` tables in
the connection's database (PG* environment variables).
"""
import argparse
import glob
import os
import re
import statistics
import sys

import psycopg

HERE = os.path.dirname(os.path.abspath(__file__))
RENAME = [(r"\blineorder\b", "lineorder_arrow"), (r"\bcustomer\b", "customer_arrow"),
          (r"\bsupplier\b", "supplier_arrow"), (r"\bpart\b", "part_arrow"),
          (r"\bdate\b", "date_arrow")]


def arrow_sql(path):
    sql = "\n".join(l for l in open(path).read().splitlines() if not l.startswith("--"))
    for pat, rep in RENAME:
        sql = re.sub(pat, rep, sql)
    return sql.strip().rstrip(";")


def one_run(sql, mode, dim_scan):
    with psycopg.connect(autocommit=True) as conn:
        conn.execute("SET pg_warp.mode = %s" % mode)
        conn.execute("SET pg_warp.enable_dim_scan = %s" % ("on" if dim_scan else "off"))
        lines = [r[0] for r in conn.execute("EXPLAIN (ANALYZE, COSTS OFF) " + sql)]
    text = "\n".join(lines)
    if "Custom Scan (Warp" not in text:
        sys.exit("not offloaded:\n" + text)
    build = float(re.search(r"Build Time: ([0-9.]+) ms", text).group(1))
    total = float(re.search(r"Execution Time: ([0-9.]+) ms", text).group(1))
    engine = int(re.search(r"Dimensions Read by Engine: (\d+)", text).group(1))
    return build, total, engine


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", default=os.path.join(HERE, "queries"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--mode", default="cpu")
    ap.add_argument("--out")
    args = ap.parse_args()
    rows = ["| query | build, executor (ms) | build, engine (ms) | ratio | query, executor (ms) "
            "| query, engine (ms) | dims read by engine |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    sums = [0.0, 0.0, 0.0, 0.0]
    for path in sorted(glob.glob(os.path.join(args.queries, "*.sql"))):
        sql = arrow_sql(path)
        res = {True: [], False: []}
        for _ in range(args.runs):
            for dim_scan in (True, False):
                res[dim_scan].append(one_run(sql, args.mode, dim_scan))
        b_off = statistics.median(r[0] for r in res[False])
        b_on = statistics.median(r[0] for r in res[True])
        t_off = statistics.median(r[1] for r in res[False])
        t_on = statistics.median(r[1] for r in res[True])
        engine = res[True][0][2]
        for i, v in enumerate((b_off, b_on, t_off, t_on)):
            sums[i] += v
        rows.append("| %s | %.1f | %.1f | %.2fx | %.1f | %.1f | %d |"
                    % (os.path.basename(path)[:-4], b_off, b_on, b_off / max(b_on, 1e-3),
                       t_off, t_on, engine))
    rows.append("| **sum** | %.1f | %.1f | %.2fx | %.1f | %.1f | |"
                % (sums[0], sums[1], sums[0] / max(sums[1], 1e-3), sums[2], sums[3]))
    out = "\n".join(rows)
    print(out)
    if args.out:
        with open(args.out, "w") as f:
            f.write(out + "\n")


if __name__ == "__main__":
    main()
