#!/usr/bin/env python3
"""Whether pg_warp's costs rank its plans as their times do.

  cost_check.py [--schema tpch_arrow] [--runs N] [--parallel]

Over the TPC-H tables loaded by `tpch.py load` (connection from libpq's
environment), each probe query runs with pg_warp off (arrow_fdw and
PostgreSQL's executor) and on, serial (max_parallel_workers_per_gather = 0,
pg_warp.cpu_threads = 1, JIT off) unless --parallel.  For each it prints
the top plan node's estimated total cost and the execution time (best of
N, EXPLAIN ANALYZE), the microseconds per cost unit of each plan, and
whether the costs pick the faster plan: the planner takes pg_warp's plan
where its cost is lower, so an honest model has pg_warp's microseconds
per unit no lower than PostgreSQL's (a cheaper cost then means a shorter
time).  The probes isolate the engine's kinds of work: a filter over
every row, a probe of a small and of a large join table (the large one
built from 1.5M rows), grouping into 200K groups, and joined rows returned
to PostgreSQL.
"""
import argparse
import json

import psycopg

PROBES = [
    ("filter, numeric expression",
     "SELECT count(*) FROM lineitem WHERE l_quantity * 2 > l_discount"),
    ("probe, 10K-row join table",
     "SELECT count(*) FROM lineitem, supplier WHERE l_suppkey = s_suppkey"),
    ("build 1.5M rows + probe",
     "SELECT count(*) FROM lineitem, orders WHERE l_orderkey = o_orderkey"),
    ("group by, 200K groups",
     "SELECT l_partkey, sum(l_quantity) FROM lineitem GROUP BY l_partkey"),
    ("joined rows to PostgreSQL",
     "SELECT l_orderkey, s_name FROM lineitem, supplier WHERE l_suppkey = s_suppkey "
     "AND l_quantity < 10"),
]


def measure(conn, sql, enabled, runs):
    conn.execute("SET pg_warp.enabled = %s" % ("on" if enabled else "off"))
    best, cost, warp = None, None, False
    for _ in range(runs):
        plan = conn.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql).fetchone()[0][0]
        ms = plan["Execution Time"]
        cost = plan["Plan"]["Total Cost"]
        warp = "Warp" in json.dumps(plan["Plan"])
        best = ms if best is None else min(best, ms)
    return cost, best, warp


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--schema", default="tpch_arrow")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--parallel", action="store_true")
    a = ap.parse_args()
    conn = psycopg.connect(autocommit=True)
    conn.execute("SET search_path = %s" % a.schema)
    conn.execute("SET pg_warp.mode = cpu")
    if not a.parallel:
        conn.execute("SET max_parallel_workers_per_gather = 0")
        conn.execute("SET pg_warp.cpu_threads = 1")
        conn.execute("SET jit = off")
    print("| probe | PostgreSQL cost | ms | us/unit | pg_warp cost | ms | us/unit | "
          "pg_warp plan | cost picks | time picks |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, sql in PROBES:
        pc, pm, _ = measure(conn, sql, False, a.runs)
        wc, wm, warp = measure(conn, sql, True, a.runs)
        print("| %s | %.0f | %.0f | %.1f | %.0f | %.0f | %.1f | %s | %s | %s |" % (
            name, pc, pm, 1000 * pm / pc, wc, wm, 1000 * wm / wc, "yes" if warp else "no",
            "pg_warp" if wc < pc else "PostgreSQL", "pg_warp" if wm < pm else "PostgreSQL"))


if __name__ == "__main__":
    main()
