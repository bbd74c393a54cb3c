#!/usr/bin/env python3
"""The 13 SSB queries on DuckDB over the same Arrow files pg_warp reads.

Usage: duckdb_ssb.py DIR [--threads N] [--runs N] [--out FILE.csv] [--tbl]

Tables are loaded from DIR/<table>.arrow (with --tbl: from the generator's
DIR/<table>.tbl text, where pyarrow is not installed, e.g. the GPU machine)
into DuckDB's own storage (in memory) first, so the timings are DuckDB's query execution, warm, like
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

HERE = os.path.dirname(os.path.abspath(__file__))
TABLES = ["lineorder", "customer", "supplier", "part", "date"]

# the SSB schema (as `pgwarp ssb gen` writes it: I integer, V varchar)
SCHEMA = {
    "lineorder": "lo_orderkey I lo_linenumber I lo_custkey I lo_partkey I lo_suppkey I "
                 "lo_orderdate I lo_orderpriority V lo_shippriority I lo_quantity I "
                 "lo_extendedprice I lo_ordtotalprice I lo_discount I lo_revenue I "
                 "lo_supplycost I lo_tax I lo_commitdate I lo_shipmode V",
    "customer": "c_custkey I c_name V c_address V c_city V c_nation V c_region V c_phone V "
                "c_mktsegment V",
    "supplier": "s_suppkey I s_name V s_address V s_city V s_nation V s_region V s_phone V",
    "part": "p_partkey I p_name V p_mfgr V p_category V p_brand1 V p_color V p_type V "
            "p_size I p_container V",
    "date": "d_datekey I d_date V d_dayofweek V d_month V d_year I d_yearmonthnum I "
            "d_yearmonth V d_daynuminweek I d_daynuminmonth I d_daynuminyear I "
            "d_monthnuminyear I d_weeknuminyear I d_sellingseason V d_lastdayinweekfl I "
            "d_lastdayinmonthfl I d_holidayfl I d_weekdayfl I",
}


def load_tbl(con, d, t):
    """a .tbl file: '|'-separated with a trailing '|' (an empty last field)"""
    w = SCHEMA[t].split()
    cols = [(w[i], "INTEGER" if w[i + 1] == "I" else "VARCHAR") for i in range(0, len(w), 2)]
    spec = ", ".join("'%s': '%s'" % c for c in cols) + ", 'trailing_': 'VARCHAR'"
    con.execute('CREATE TABLE "%s" AS SELECT %s FROM read_csv(\'%s\', delim = \'|\', '
                "header = false, quote = '', escape = '', columns = {%s})"
                % (t, ", ".join(c[0] for c in cols), os.path.join(d, t + ".tbl"), spec))


def load_arrow(con, d, t):
    import pyarrow.ipc as ipc
    with ipc.open_file(os.path.join(d, t + ".arrow")) as f:
        tab = f.read_all()
    con.register("src_" + t, tab)
    con.execute('CREATE TABLE "%s" AS SELECT * FROM src_%s' % (t, t))
    con.unregister("src_" + t)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out")
    ap.add_argument("--tbl", action="store_true", help="load the .tbl text files")
    ap.add_argument("--queries", default=os.path.join(HERE, "queries"),
                    help="folder of q*.sql files (default: the 13 SSB queries)")
    a = ap.parse_args()
    con = duckdb.connect()
    con.execute("SET threads = %d" % a.threads)
    t0 = time.perf_counter()
    for t in TABLES:
        (load_tbl if a.tbl else load_arrow)(con, a.dir, t)
    print("loaded in %.1f s" % (time.perf_counter() - t0), flush=True)
    rows = []
    for q in sorted(glob.glob(os.path.join(a.queries, "q*.sql"))):
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
