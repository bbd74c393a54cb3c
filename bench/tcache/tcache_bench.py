#!/usr/bin/env python3
"""GPU table cache benchmark (docs/gpu-table-cache.md): an aggregate over a
synthetic heap table answered three ways in the same run -- vanilla
PostgreSQL (pg_warp.enabled = off, its parallel workers), pg_warp reading the
heap (the CPU driver behind PostgreSQL's table AM: pg_warp.gpu_table_cache =
off) and pg_warp from the GPU table cache -- then pgbench-style writes
(single-row inserts and updates) on the table attached and not attached.

Needs a running server with pg_warp preloaded and pg_warp_gpud serving (PG*
environment); bench/tcache/run.sh starts one.  Prints a Markdown report.

  tcache_bench.py [--rows N] [--runs R] [--write-seconds S] [--clients C]
"""
import argparse
import os
import platform
import statistics
import subprocess
import tempfile
import time

import psycopg

QUERY = "SELECT g, count(*), sum(v), max(x) FROM tcache_bench.sales GROUP BY g ORDER BY g"
WRITES = """\\set k random(1, {rows})
\\set r random(0, 99)
INSERT INTO tcache_bench.sales VALUES (:k, :r % 16, :r, :k * 0.5);
UPDATE tcache_bench.sales SET v = v + 1 WHERE k = :k;
"""


def timed(conn, sql, runs):
    conn.execute(sql).fetchall()            # warm
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        conn.execute(sql).fetchall()
        ts.append((time.perf_counter() - t0) * 1000)
    return statistics.median(ts), min(ts)


def explain_line(conn, key):
    for (line,) in conn.execute("EXPLAIN (ANALYZE) " + QUERY):
        if key in line:
            return line.strip()
    return "(none)"


def pgbench_tps(script, seconds, clients):
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write(script)
    os.chmod(f.name, 0o644)
    out = subprocess.run(["pgbench", "-n", "-M", "prepared", "-c", str(clients), "-j",
                          str(clients), "-T", str(seconds), "-f", f.name],
                         capture_output=True, text=True, check=True).stdout
    os.unlink(f.name)
    for line in out.splitlines():
        if line.startswith("tps ="):
            return float(line.split()[2])
    raise RuntimeError(out)


def machine_line(dev):
    return "- date: %s; machine: %s (%d CPUs); pg_warp_gpud: `%s`" % (
        time.strftime("%Y-%m-%d"), platform.node(), os.cpu_count(), (dev or "").strip())


def after_writes(c):
    """(pg_warp's answer, PostgreSQL's) with the table attached again"""
    c.execute("SELECT pg_warp_gpu_cache_attach('tcache_bench.sales')")
    c.execute("SET pg_warp.enabled = on")
    c.execute("SET pg_warp.gpu_table_cache = on")
    got = c.execute(QUERY).fetchall()
    c.execute("SET pg_warp.enabled = off")
    return got, c.execute(QUERY).fetchall()


def write_rounds(c, a):
    """pgbench TPS per round, attached and not attached, alternating the order"""
    tps = {"not attached": [], "attached": []}
    for rnd in range(a.write_rounds):
        order = ["attached", "not attached"] if rnd % 2 == 0 else ["not attached", "attached"]
        for mode in order:
            if mode == "attached":
                c.execute("SELECT pg_warp_gpu_cache_attach('tcache_bench.sales')")
            else:
                c.execute("SELECT pg_warp_gpu_cache_detach('tcache_bench.sales')")
            tps[mode].append(pgbench_tps(WRITES.format(rows=a.rows), a.write_seconds, a.clients))
    return tps


def write_cost(c, a, dev):
    tps = write_rounds(c, a)
    got, want = after_writes(c)
    print("# GPU table cache: write cost (attached against not attached)\n")
    print(machine_line(dev))
    print("- data: synthetic, `tcache_bench.sales(k int, g int2, v int8, x float8)`, %d rows, "
          "index on k" % a.rows)
    print("- workload: pgbench -M prepared, %d clients, %d s per run, %d rounds, the order "
          "alternating each round; per transaction one INSERT and one UPDATE by key" %
          (a.clients, a.write_seconds, a.write_rounds))
    print("- command: `bench/tcache/run.sh --writes-only --rows %d --write-rounds %d "
          "--write-seconds %d`\n" % (a.rows, a.write_rounds, a.write_seconds))
    print("| table | TPS per run | mean | stdev |\n|---|---|---|---|")
    for k, v in tps.items():
        print("| %s | %s | %.0f | %.0f |" % (k, ", ".join("%.0f" % x for x in v),
                                          statistics.mean(v), statistics.pstdev(v)))
    ratios = [x / y for x, y in zip(tps["attached"], tps["not attached"])]
    print("\nAttached / not attached: %.1f %% of the mean (per round: %s; stdev %.1f points). "
          "Answer after the writes equal to PostgreSQL's: %s.\n"
          % (100 * statistics.mean(tps["attached"]) / statistics.mean(tps["not attached"]),
             ", ".join("%.0f %%" % (100 * r) for r in ratios), 100 * statistics.pstdev(ratios),
             got == want))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--write-seconds", type=int, default=15)
    ap.add_argument("--write-rounds", type=int, default=2)
    ap.add_argument("--clients", type=int, default=2)
    ap.add_argument("--writes-only", action="store_true",
                    help="only the write cost (attached against not attached)")
    a = ap.parse_args()
    c = psycopg.connect(autocommit=True)
    c.execute("CREATE EXTENSION IF NOT EXISTS pg_warp")
    c.execute("DROP SCHEMA IF EXISTS tcache_bench CASCADE")
    c.execute("CREATE SCHEMA tcache_bench")
    c.execute("CREATE TABLE tcache_bench.sales (k int, g int2, v int8, x float8)")
    c.execute("INSERT INTO tcache_bench.sales SELECT i, i %% 16, (i::int8 * 7919) %% 1000, i * 0.5 "
              "FROM generate_series(1, %d) i" % a.rows)
    c.execute("CREATE INDEX ON tcache_bench.sales (k)")
    c.execute("VACUUM ANALYZE tcache_bench.sales")
    dev = c.execute("SELECT pg_read_file('pg_warp_gpud.status', 0, 256, true)").fetchone()[0]
    workers = c.execute("SHOW max_parallel_workers_per_gather").fetchone()[0]

    if a.writes_only:
        return write_cost(c, a, dev)
    res = {}
    c.execute("SET pg_warp.enabled = off")
    res["PostgreSQL (heap, %s parallel workers)" % workers] = timed(c, QUERY, a.runs)
    want = c.execute(QUERY).fetchall()
    c.execute("SET pg_warp.enabled = on")
    c.execute("SET pg_warp.gpu_table_cache = off")
    res["pg_warp, heap read by the table AM"] = timed(c, QUERY, a.runs)
    c.execute("SET pg_warp.gpu_table_cache = on")
    t0 = time.perf_counter()
    c.execute("SELECT pg_warp_gpu_cache_attach('tcache_bench.sales')")
    attach_ms = (time.perf_counter() - t0) * 1000
    res["pg_warp, GPU table cache"] = timed(c, QUERY, a.runs)
    got = c.execute(QUERY).fetchall()
    used = explain_line(c, "GPU Table Cache")
    stats = c.execute("SELECT rows, bytes FROM pg_warp_gpu_cache_stats()").fetchone()

    tps = write_rounds(c, a)
    after, after_want = after_writes(c)

    print("# GPU table cache: aggregate over a heap table, and its write cost\n")
    print(machine_line(dev))
    print("- data: synthetic, `tcache_bench.sales(k int, g int2, v int8, x float8)`, "
          "%d rows (%s), index on k" % (a.rows, c.execute(
              "SELECT pg_size_pretty(pg_table_size('tcache_bench.sales'))").fetchone()[0]))
    print("- query: `%s`; median and best of %d warm runs" % (QUERY, a.runs))
    print("- command: `bench/tcache/run.sh --rows %d`\n" % a.rows)
    print("| plan | median ms | best ms |\n|---|---|---|")
    for k, (med, best) in res.items():
        print("| %s | %.1f | %.1f |" % (k, med, best))
    print("\nAnswers equal to PostgreSQL's: %s (and after the writes: %s). EXPLAIN ANALYZE: `%s`. "
          "Attach (trigger + load): %.0f ms; replica: %d row versions, %d bytes.\n"
          % (got == want, after == after_want, used, attach_ms, stats[0], stats[1]))
    print("Writes: pgbench -M prepared, %d clients, %d s per run, runs alternating; "
          "per transaction one INSERT and one UPDATE by key of the table.\n" % (a.clients, a.write_seconds))
    print("| table | TPS per run | mean TPS |\n|---|---|---|")
    for k, v in tps.items():
        print("| %s | %s | %.0f |" % (k, ", ".join("%.0f" % x for x in v), statistics.mean(v)))
    print("\nAttached / not attached: %.1f %%" %
          (100.0 * statistics.mean(tps["attached"]) / statistics.mean(tps["not attached"])))


if __name__ == "__main__":
    main()
