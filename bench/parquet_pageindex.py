#!/usr/bin/env python3
"""Parquet page index and Bloom filters (see parquet_pageindex.sh): DATA SF OUT.md

The same lineorder rows (ordered by lo_orderdate) as an Arrow IPC file
(pgwarp ssb gen) and as Parquet written by pyarrow with snappy and 1Mi-row
row groups: once plain, once with write_page_index=True and Bloom filters on
lo_orderkey and lo_custkey.  Each query runs through arrow_fdw with
pg_warp.mode = cpu (3 timed runs after a warm-up, median; the answers of all
files must agree) and through DuckDB over the same Parquet files."""
import os
import statistics
import subprocess
import sys
import time

import duckdb
import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

from parquet_scan import connect_lineorders

QUERIES = {
    "date-month": "SELECT count(*), sum(lo_revenue) FROM {t} "
                  "WHERE lo_orderdate BETWEEN 19940101 AND 19940131",
    "date-day": "SELECT count(*), sum(lo_revenue) FROM {t} WHERE lo_orderdate = 19970612",
    "q1.1-shape": "SELECT sum(lo_extendedprice * lo_discount) FROM {t} "
                  "WHERE lo_orderdate BETWEEN 19930101 AND 19931231 "
                  "AND lo_discount BETWEEN 1 AND 3 AND lo_quantity < 25",
    "orderkey-eq": "SELECT count(*), sum(lo_revenue) FROM {t} WHERE lo_orderkey = {okey}",
    "orderkey-absent": "SELECT count(*) FROM {t} WHERE lo_orderkey = {absent}",
    "full-scan-filter": "SELECT sum(lo_extendedprice * lo_discount) FROM {t} "
                        "WHERE lo_discount BETWEEN 1 AND 3 AND lo_quantity < 25",
}


def timed(fn):
    fn()
    times = []
    res = None
    for _ in range(3):
        t = time.time()
        res = fn()
        times.append((time.time() - t) * 1000)
    return res, statistics.median(times)


def norm(rows):
    return [tuple(int(v) if v is not None else None for v in r) for r in rows]


def main():
    data, sf, out = sys.argv[1], sys.argv[2], sys.argv[3]
    arrow = os.path.join(data, "lineorder.arrow")
    table = ipc.open_file(arrow).read_all()
    okey = table.column("lo_orderkey")[len(table) // 3].as_py()
    keys = set(table.column("lo_orderkey").unique().to_pylist())
    # a key inside [min, max] that no row has (min/max cannot rule it out)
    absent = next((k for k in range(okey, max(keys)) if k not in keys), -5)
    del keys
    files = {"arrow": arrow}
    p = os.path.join(data, "lineorder.parquet")
    pq.write_table(table, p, compression="snappy")
    files["parquet"] = p
    p = os.path.join(data, "lineorder_pi.parquet")
    pq.write_table(table, p, compression="snappy", write_page_index=True,
                   bloom_filter_options={"lo_orderkey": {"ndv": 1 << 20, "fpp": 0.01},
                                         "lo_custkey": {"ndv": 1 << 18, "fpp": 0.01}})
    files["parquet_pi"] = p
    for f in files.values():
        os.chmod(f, 0o644)
    rows = table.num_rows
    del table
    conn = connect_lineorders(files)
    duck = duckdb.connect()
    ver = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                         text=True).stdout.strip()
    lines = ["# Parquet page index and Bloom filters, SSB lineorder SF %s" % sf, "",
             "- machine: %s (%d CPUs, shared with other jobs: timings are noisy)"
             % (os.uname().nodename, os.cpu_count()),
             "- data: synthetic SSB lineorder from `pgwarp ssb gen --sf %s --cluster-by-date` "
             "(%d rows, ordered by lo_orderdate); Parquet written by pyarrow %s, snappy, "
             "1Mi-row row groups: `parquet` plain, `parquet_pi` with write_page_index=True and "
             "Bloom filters on lo_orderkey and lo_custkey (fpp 0.01); orderkey-absent asks for "
             "lo_orderkey = %d, %s" % (sf, rows, pa.__version__, absent,
                                      "inside the column's range, held by no row" if absent != -5
                                      else "outside the column's range (the keys are dense: "
                                      "none inside it is missing, so min/max decide, not the "
                                      "Bloom filters)"),
             "- command: `bench/parquet_pageindex.sh %s` at %s; pg_warp.mode = cpu, default "
             "threads, no parallel workers; DuckDB %s (default threads) runs the same SQL over "
             "read_parquet() of the same files; median of 3 runs after a warm-up (files in the "
             "page cache)" % (sf, ver, duckdb.__version__),
             "- file sizes: " + ", ".join("%s %.0f MB" % (k, os.path.getsize(v) / 1e6)
                                          for k, v in files.items()),
             "- baseline: the Arrow file and the Parquet file without a page index, same run", "",
             "| query | arrow ms | parquet ms | parquet_pi ms | parquet_pi batches read/skipped "
             "| duckdb parquet ms | duckdb parquet_pi ms |",
             "|---|---|---|---|---|---|---|"]
    for qn, q in QUERIES.items():
        res, ms = {}, {}
        for name in files:
            sql = q.format(t="lo_" + name, okey=okey, absent=absent)
            res[name], ms[name] = timed(lambda: conn.execute(sql).fetchall())
        plan = "\n".join(r[0] for r in conn.execute(
            "EXPLAIN (ANALYZE) " + q.format(t="lo_parquet_pi", okey=okey, absent=absent)).fetchall())
        rd = [l.split(":")[1].strip() for l in plan.splitlines() if "Batches Read:" in l]
        sk = [l.split(":")[1].strip() for l in plan.splitlines() if "Batches Skipped:" in l]
        for name in ("parquet", "parquet_pi"):
            dq = q.format(t="read_parquet('%s')" % files[name], okey=okey, absent=absent)
            r, ms["duck_" + name] = timed(lambda: duck.execute(dq).fetchall())
            assert norm(r) == norm(res["arrow"]), (qn, name, r, res["arrow"])
        assert norm(res["arrow"]) == norm(res["parquet"]) == norm(res["parquet_pi"]), (qn, res)
        lines.append("| %s | %.0f | %.0f | %.0f | %s/%s | %.0f | %.0f |" % (
            qn, ms["arrow"], ms["parquet"], ms["parquet_pi"], rd[0] if rd else "?",
            sk[0] if sk else "?", ms["duck_parquet"], ms["duck_parquet_pi"]))
    lines += ["", "Answers were identical across the three files and DuckDB for every query.",
              "Batches of `parquet_pi` are its row groups cut at page boundaries (parts of "
              "64Ki-128Ki rows); `parquet` has one batch per row group.", ""]
    with open(out, "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
