#!/usr/bin/env python3
"""Stress the heap dimension cache (src/pg/heap_changes.c): writers commit,
roll back and prepare changes to SSB's heap dimensions while readers run
SSB queries over lineorder_arrow and the heap dimensions, each reader
transaction running the query through pg_warp and through PostgreSQL
(pg_warp.enabled = off) under one REPEATABLE READ snapshot.  Every pair
must agree.

    scripts/stress_heapdims.py [--seconds 60] [--readers 3] [--writers 3]
                               [--pause 0.2] [--mode cpu] [-d DSN]
                               [--queries bench/ssb/queries]

--pause: each writer waits up to this many seconds between transactions
(longer pauses let readers find dimensions in the cache between writes).
--mode: pg_warp.mode of the readers (gpu on the GPU machine).

Needs the SSB tables of `pgwarp ssb load` (heap dimensions and
lineorder_arrow) and pg_warp preloaded.  The writers set columns the
queries filter and group on (region, nation, manufacturer, category) of
random dimension rows to other values those columns take, so the answers
move while the tables keep SSB's shape; at the end every changed row gets
its original value back.  Prints the counts and exits 1 on any mismatch.
"""
import argparse
import os
import random
import re
import sys
import threading
import time

import psycopg

# (table, key column, column changed, values it takes)
CHANGES = [
    ("customer", "c_custkey", "c_region", ["AMERICA", "ASIA", "EUROPE"]),
    ("customer", "c_custkey", "c_nation", ["UNITED STATES", "CHINA", "PERU"]),
    ("supplier", "s_suppkey", "s_region", ["AMERICA", "ASIA", "EUROPE"]),
    ("part", "p_partkey", "p_mfgr", ["MFGR#1", "MFGR#2", "MFGR#3"]),
    ("part", "p_partkey", "p_category", ["MFGR#12", "MFGR#14"]),
]


def arrow_fact(sql):
    """The query with lineorder in Arrow, the dimensions kept in heap."""
    return re.sub(r"\blineorder\b(?!_)", "lineorder_arrow AS lineorder", sql, count=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--readers", type=int, default=3)
    ap.add_argument("--writers", type=int, default=3)
    ap.add_argument("--pause", type=float, default=0.2)
    ap.add_argument("--mode", default="cpu", choices=["cpu", "gpu", "auto"])
    ap.add_argument("-d", "--dsn", default="")
    ap.add_argument("--queries", default=os.path.join(os.path.dirname(__file__), "..",
                                                       "bench", "ssb", "queries"))
    a = ap.parse_args()
    queries = []
    for f in sorted(os.listdir(a.queries)):
        if f.endswith(".sql"):
            sql = open(os.path.join(a.queries, f)).read().strip().rstrip(";")
            queries.append((f[:-4], arrow_fact(sql)))
    stop = threading.Event()
    lock = threading.Lock()
    stats = {"pairs": 0, "cached": 0, "mismatch": 0, "commits": 0, "rollbacks": 0,
             "prepared": 0, "errors": 0}
    originals = {}          # (table, key col, col, key) -> original value

    def bump(k, n=1):
        with lock:
            stats[k] += n

    def writer(seed):
        rnd = random.Random(seed)
        with psycopg.connect(a.dsn, autocommit=True) as c:
            prepared_ok = int(c.execute("SHOW max_prepared_transactions").fetchone()[0]) > 0
            counts = {t: c.execute("SELECT count(*) FROM %s" % t).fetchone()[0]
                      for t in {ch[0] for ch in CHANGES}}
            while not stop.is_set():
                t, kc, col, vals = rnd.choice(CHANGES)
                key = rnd.randint(1, counts[t])
                try:
                    c.execute("BEGIN")
                    old = c.execute("SELECT %s FROM %s WHERE %s = %%s FOR UPDATE" % (col, t, kc),
                                    (key,)).fetchone()
                    if old is None:
                        c.execute("ROLLBACK")
                        continue
                    with lock:
                        originals.setdefault((t, kc, col, key), old[0])
                    c.execute("UPDATE %s SET %s = %%s WHERE %s = %%s" % (t, col, kc),
                              (rnd.choice(vals), key))
                    r = rnd.random()
                    if r < 0.2:
                        c.execute("ROLLBACK")
                        bump("rollbacks")
                    elif r < 0.25 and prepared_ok:
                        gid = "stress_heapdims_%d_%d" % (seed, rnd.randrange(1 << 30))
                        c.execute("PREPARE TRANSACTION '%s'" % gid)
                        time.sleep(rnd.uniform(0, 0.05))
                        c.execute("COMMIT PREPARED '%s'" % gid)
                        bump("prepared")
                    else:
                        c.execute("COMMIT")
                        bump("commits")
                except psycopg.Error:
                    bump("errors")
                    try:
                        c.execute("ROLLBACK")
                    except psycopg.Error:
                        pass
                stop.wait(rnd.uniform(0, a.pause))

    def reader(seed):
        rnd = random.Random(seed)
        with psycopg.connect(a.dsn, autocommit=True) as c:
            c.execute("SET pg_warp.mode = %s" % a.mode)
            while not stop.is_set():
                name, sql = rnd.choice(queries)
                c.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
                try:
                    plan = "\n".join(r[0] for r in c.execute("EXPLAIN (ANALYZE) " + sql))
                    got = c.execute(sql).fetchall()
                    c.execute("SET LOCAL pg_warp.enabled = off")
                    want = c.execute(sql).fetchall()
                finally:
                    c.execute("COMMIT")
                m = re.search(r"Dimensions From Cache: (\d+)", plan)
                bump("pairs")
                bump("cached", int(m.group(1)) if m else 0)
                if got != want:
                    bump("mismatch")
                    print("MISMATCH %s\n  pg_warp: %s\n  postgres: %s" % (name, got[:5], want[:5]),
                          file=sys.stderr)

    threads = [threading.Thread(target=writer, args=(100 + i,)) for i in range(a.writers)]
    threads += [threading.Thread(target=reader, args=(200 + i,)) for i in range(a.readers)]
    for t in threads:
        t.start()
    time.sleep(a.seconds)
    stop.set()
    for t in threads:
        t.join()
    with psycopg.connect(a.dsn, autocommit=True) as c:
        for (t, kc, col, key), v in originals.items():
            c.execute("UPDATE %s SET %s = %%s WHERE %s = %%s" % (t, col, kc), (v, key))
    print("%(pairs)d query pairs (%(cached)d dimensions from the cache), %(mismatch)d "
          "mismatches; writers: %(commits)d commits, %(rollbacks)d rollbacks, "
          "%(prepared)d prepared+committed, %(errors)d errors" % stats)
    print("restored %d changed rows" % len(originals))
    return 1 if stats["mismatch"] else 0


if __name__ == "__main__":
    sys.exit(main())
