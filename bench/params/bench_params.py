#!/usr/bin/env python3
"""Prepared statements under generic plans against the same queries with
constants, on SSB's Arrow tables (pgwarp ssb load names them *_arrow).

For each query: the median of --runs executions of
  literal    the query with its constants, pg_warp on
  generic    PREPARE + EXECUTE under plan_cache_mode = force_generic_plan,
             pg_warp on
  arrow_fdw  the same generic plan with pg_warp.enabled = off
and whether the generic plan has a pg_warp node.  Answers of the three
are compared.  Usage:
  bench/params/bench_params.py -d "dbname=postgres" [--runs 5] [--out FILE.md]
"""
import argparse
import statistics
import time

import psycopg

# (name, parameter types, body with $n, arguments)
QUERIES = [
    ("like", "text", "SELECT count(*), sum(lo_revenue) FROM lineorder_arrow WHERE lo_shipmode LIKE $1",
     ["'%AIR%'"]),
    ("any_text", "text[]", "SELECT lo_shipmode, count(*) FROM lineorder_arrow WHERE lo_shipmode = ANY($1) "
     "GROUP BY 1 ORDER BY 1", ["'{AIR,RAIL,SHIP}'"]),
    ("text_lt", "text", "SELECT count(*) FROM lineorder_arrow WHERE lo_shipmode < $1", ["'M'"]),
    ("in_params", "text, text", "SELECT lo_orderpriority, count(*) FROM lineorder_arrow "
     "WHERE lo_shipmode IN ($1, $2) GROUP BY 1 ORDER BY 1", ["'MAIL'", "'FOB'"]),
    ("int_any", "int4[]", "SELECT sum(lo_revenue) FROM lineorder_arrow WHERE lo_quantity = ANY($1)",
     ["'{1,5,9,13,17}'"]),
    ("numeric_param", "numeric", "SELECT count(*), sum(lo_revenue) FROM lineorder_arrow WHERE lo_quantity < $1",
     ["25.5"]),
    ("gate", "int4", "SELECT d_year, sum(lo_revenue) FROM lineorder_arrow JOIN date_arrow "
     "ON lo_orderdate = d_datekey WHERE $1 > 0 AND lo_discount = 2 GROUP BY 1 ORDER BY 1", ["1"]),
    ("q1.1", "int4, int4, int4, int4", "SELECT sum(lo_extendedprice * lo_discount) FROM lineorder_arrow, "
     "date_arrow WHERE lo_orderdate = d_datekey AND d_year = $1 AND lo_discount BETWEEN $2 AND $3 "
     "AND lo_quantity < $4", ["1993", "1", "3", "25"]),
]


def literal(body, args):
    sql = body
    for i in range(len(args), 0, -1):
        sql = sql.replace("$%d" % i, args[i - 1])
    return sql


def timed(conn, sql, runs):
    times, rows = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        rows = conn.execute(sql).fetchall()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-d", "--dsn", default="dbname=postgres")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out")
    a = ap.parse_args()
    conn = psycopg.connect(a.dsn, autocommit=True, prepare_threshold=None)
    lines = ["| query | literal, pg_warp (ms) | generic plan, pg_warp (ms) | generic plan, arrow_fdw (ms) "
             "| generic plan's node | arrow_fdw / generic |", "|---|---|---|---|---|---|"]
    for name, types, body, args in QUERIES:
        conn.execute("SET pg_warp.enabled = on")
        conn.execute("SET plan_cache_mode = auto")
        lit_sql = literal(body, args)
        timed(conn, lit_sql, 1)
        t_lit, r_lit = timed(conn, lit_sql, a.runs)
        conn.execute("SET plan_cache_mode = force_generic_plan")
        conn.execute("DEALLOCATE ALL")
        conn.execute("PREPARE bp(%s) AS %s" % (types, body))
        ex = "EXECUTE bp(%s)" % ", ".join(args)
        plan = "\n".join(r[0] for r in conn.execute("EXPLAIN (COSTS OFF) " + ex).fetchall())
        node = next((n for n in ("WarpPreAgg", "WarpJoin", "WarpScan") if n in plan), "none")
        timed(conn, ex, 1)
        t_gen, r_gen = timed(conn, ex, a.runs)
        conn.execute("SET pg_warp.enabled = off")
        conn.execute("DEALLOCATE ALL")
        conn.execute("PREPARE bp(%s) AS %s" % (types, body))
        timed(conn, ex, 1)
        t_off, r_off = timed(conn, ex, a.runs)
        assert r_lit == r_gen == r_off, (name, r_lit, r_gen, r_off)
        lines.append("| %s | %.1f | %.1f | %.1f | %s | %.1fx |" % (
            name, t_lit * 1e3, t_gen * 1e3, t_off * 1e3, node, t_off / t_gen))
        print(lines[-1], flush=True)
    conn.execute("RESET plan_cache_mode")
    conn.execute("RESET pg_warp.enabled")
    if a.out:
        with open(a.out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
