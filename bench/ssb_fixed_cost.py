#!/usr/bin/env python3
"""Where the time of a small SSB query goes: per query and mode, the
end-to-end time in one warm connection (client clock, the plain query)
and, from EXPLAIN (ANALYZE), planning, the dimensions (Build Time), the
engine's scan and, for queries on pg_warp_gpud, the hand-off (connect, job
written, wait, of it the daemon's own time and set-up, result taken).

    python3 bench/ssb_fixed_cost.py -d "dbname=postgres" --schema ssb1 \\
        [--modes gpu,cpu] [--runs 7] [--queries bench/ssb/queries]

Needs the SSB Arrow tables `pgwarp ssb load --schema S` creates
(lineorder_arrow, ...).  Mode gpu runs on pg_warp_gpud (whatever device it
drives: `pg_warp.gpud_device = cpu` measures the hand-off without a GPU);
cpu runs the CPU driver in the backend.  Prints a Markdown table of
medians and the geometric mean of the end-to-end times per mode.
"""
import argparse
import glob
import math
import os
import re
import statistics
import time

import psycopg

TABLES = ("lineorder", "customer", "supplier", "part", "date")
FIELDS = {
    "plan": r"Planning Time: ([\d.]+) ms",
    "exec": r"Execution Time: ([\d.]+) ms",
    "build": r"Build Time: ([\d.]+) ms",
    "scan": r"Scan Time: ([\d.]+) ms",
    "daemon": r"Daemon Time: ([\d.]+) ms",
}
HANDOFF = re.compile(r"Hand-off: connect ([\d.]+), job ([\d.]+), wait ([\d.]+) "
                     r"\(daemon ([\d.]+), of it set-up ([\d.]+)\), result ([\d.]+) ms")


def arrow_sql(sql):
    """the query over the *_arrow tables (table names in FROM lists only)"""
    out = []
    for line in sql.splitlines():
        if line.strip().lower().startswith("from "):
            for t in TABLES:
                line = re.sub(r"\b%s\b" % t, t + "_arrow", line)
        out.append(line)
    return "\n".join(out)


def measure(conn, sql, runs):
    wall, parsed = [], []
    conn.execute(sql).fetchall()            # warm-up: caches, windows
    for _ in range(runs):
        t0 = time.perf_counter()
        conn.execute(sql).fetchall()
        wall.append((time.perf_counter() - t0) * 1000)
        text = "\n".join(r[0] for r in conn.execute("EXPLAIN (ANALYZE) " + sql).fetchall())
        row = {}
        for k, rx in FIELDS.items():
            m = re.search(rx, text)
            row[k] = float(m.group(1)) if m else None
        m = HANDOFF.search(text)
        if m:
            (row["connect"], row["job"], row["wait"], row["daemon"], row["setup"],
             row["result"]) = (float(x) for x in m.groups())
        row["ran_on"] = (re.search(r"Ran On: (.*)", text) or [None, "?"])[1]
        parsed.append(row)
    med = {"wall": statistics.median(wall)}
    for k in list(FIELDS) + ["connect", "job", "wait", "setup", "result"]:
        vals = [r[k] for r in parsed if r.get(k) is not None]
        med[k] = statistics.median(vals) if vals else None
    med["ran_on"] = parsed[-1]["ran_on"]
    return med


def fmt(v):
    return "" if v is None else "%.2f" % v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-d", "--dsn", default="")
    ap.add_argument("--schema", required=True)
    ap.add_argument("--modes", default="gpu,cpu")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--queries", default=os.path.join(os.path.dirname(__file__), "ssb", "queries"))
    a = ap.parse_args()
    files = sorted(glob.glob(os.path.join(a.queries, "q*.sql")))
    with psycopg.connect(a.dsn, autocommit=True) as conn:
        conn.execute("SET search_path = %s, public" % a.schema)
        print("| mode | query | ran on | end-to-end | planning | execution | dims (build) | "
              "scan | connect | job | wait | daemon | daemon set-up | result |")
        print("|" + "---|" * 14)
        for mode in a.modes.split(","):
            conn.execute("SET pg_warp.mode = %s" % mode)
            walls = []
            for f in files:
                sql = arrow_sql(open(f).read())
                m = measure(conn, sql, a.runs)
                walls.append(m["wall"])
                print("| %s | %s | %s | %s |" % (
                    mode, os.path.basename(f)[:-4], m["ran_on"],
                    " | ".join(fmt(m[k]) for k in ("wall", "plan", "exec", "build", "scan",
                                                   "connect", "job", "wait", "daemon",
                                                   "setup", "result"))))
            gm = math.exp(sum(math.log(w) for w in walls) / len(walls))
            print("| %s | **geomean** | | %.2f | | | | | | | | | | |" % (mode, gm))


if __name__ == "__main__":
    main()
