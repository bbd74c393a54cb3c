"""The GPU table cache under concurrent random writers (src/pg/tcache).

Writer sessions run random transactions on an attached heap table --
inserts, updates, deletes, COPY, savepoints rolled back or released,
TRUNCATE inside a transaction, commits and rollbacks -- while reader
sessions each run the same aggregate twice inside one REPEATABLE READ
transaction, pg_warp on (the replica in pg_warp_gpud) and off (PostgreSQL),
so under the same snapshot: the answers must be equal, every round.  In the
second test the daemon is killed with SIGKILL twice (queries fall back to
the heap, then the next one loads the replica again) and at the end a
writer backend is killed with SIGKILL, which makes the postmaster restart
the cluster, and the readers go on against the restarted server.

PGWARP_TCACHE_RANDOM_SECONDS sets how long the writers and readers run in
each test (default 20); PGWARP_TCACHE_KILL_ROUNDS repeats the kill test's
phases that many times (default 1) for a longer hunt.
"""
import os
import random
import signal
import threading
import time

import psycopg
import pytest

from pwhelpers import gpud_status, pg_dsn

S = "tcache_rand"
T = S + ".facts"
QUERY = ("SELECT g, count(*), sum(v), min(k), max(k), count(x), min(x) "
         "FROM %s GROUP BY g ORDER BY g" % T)
SECONDS = float(os.environ.get("PGWARP_TCACHE_RANDOM_SECONDS", "20"))
KILL_ROUNDS = int(os.environ.get("PGWARP_TCACHE_KILL_ROUNDS", "1"))


def connect():
    for _ in range(100):
        try:
            c = psycopg.connect(pg_dsn(), autocommit=True)
            c.execute("SET pg_warp.heap_min_rows = 0")
            c.execute("SET max_parallel_workers_per_gather = 0")
            c.execute("SET lock_timeout = '2s'")
            c.execute("SET pg_warp.gpu_table_cache = on")
            return c
        except psycopg.OperationalError:
            time.sleep(0.2)
    raise RuntimeError("the server did not come back")


def writer_txn(c, rnd):
    c.execute("BEGIN")
    nsave = 0
    for _ in range(rnd.randint(1, 6)):
        op = rnd.random()
        if op < 0.3:
            n = rnd.randint(1, 60)
            c.execute("INSERT INTO %s SELECT i, i %% 9, %d + i, CASE WHEN i %% 5 = 0 THEN NULL "
                      "ELSE i / 4.0 END FROM generate_series(%d, %d) i"
                      % (T, rnd.randint(-50, 50), rnd.randint(0, 5000), rnd.randint(5000, 5000 + n)))
        elif op < 0.55:
            c.execute("UPDATE %s SET v = v + %d, g = (g + %d) %% 9 WHERE k %% %d = %d"
                      % (T, rnd.randint(-3, 3), rnd.randint(0, 2), rnd.randint(7, 40),
                         rnd.randint(0, 6)))
        elif op < 0.7:
            c.execute("DELETE FROM %s WHERE k %% %d = %d" % (T, rnd.randint(20, 80), rnd.randint(0, 9)))
        elif op < 0.78:
            with c.cursor().copy("COPY %s (k, g, v, x) FROM STDIN" % T) as cp:
                for i in range(rnd.randint(1, 40)):
                    cp.write_row((rnd.randint(0, 6000), rnd.randint(0, 8), rnd.randint(0, 99), None))
        elif op < 0.9:
            nsave += 1
            c.execute("SAVEPOINT s%d" % nsave)
            c.execute("UPDATE %s SET v = -v WHERE g = %d" % (T, rnd.randint(0, 8)))
            c.execute("DELETE FROM %s WHERE k %% 97 = %d" % (T, rnd.randint(0, 96)))
            if rnd.random() < 0.6:
                c.execute("ROLLBACK TO SAVEPOINT s%d" % nsave)
            else:
                c.execute("RELEASE SAVEPOINT s%d" % nsave)
        elif op < 0.92:
            c.execute("TRUNCATE %s" % T)
            c.execute("INSERT INTO %s SELECT i, i %% 9, i, i FROM generate_series(1, %d) i"
                      % (T, rnd.randint(500, 3000)))
        else:
            time.sleep(rnd.random() * 0.05)     # hold the transaction open
    if rnd.random() < 0.7:
        c.execute("COMMIT")
    else:
        c.execute("ROLLBACK")


def writer(seed, stop, errors, conns):
    rnd = random.Random(seed)
    c = connect()
    conns.append(c)
    while not stop.is_set():
        try:
            writer_txn(c, rnd)
        except (psycopg.errors.LockNotAvailable, psycopg.errors.DeadlockDetected,
                psycopg.errors.SerializationFailure, psycopg.errors.QueryCanceled):
            c.execute("ROLLBACK")
        except psycopg.OperationalError:
            c = connect()       # the backend was killed; the cluster restarted
            conns.append(c)
        except Exception as e:  # noqa: BLE001
            errors.append("writer: %r" % e)
            return


def reader(stop, stats, errors):
    c = connect()
    n = 0
    while not stop.is_set():
        try:
            c.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
            c.execute("SET LOCAL pg_warp.enabled = on")
            if n % 4 == 0:
                plan = [r[0] for r in c.execute("EXPLAIN (ANALYZE, COSTS OFF) " + QUERY)]
                if any("GPU Table Cache: used" in line for line in plan):
                    stats["used"] += 1
                stats["explained"] += 1
            got = c.execute(QUERY).fetchall()
            c.execute("SET LOCAL pg_warp.enabled = off")
            want = c.execute(QUERY).fetchall()
            stats["rounds"] += 1
            n += 1
            if got != want:
                stats["mismatches"] += 1
                diff = ["%r | %r" % (a, b) for a, b in zip(got, want) if a != b]
                c.execute("SET LOCAL pg_warp.enabled = on")
                again = c.execute(QUERY).fetchall()
                plan = [r[0] for r in c.execute("EXPLAIN (ANALYZE, COSTS OFF) " + QUERY)]
                errors.append("mismatch (pg_warp | PostgreSQL):\n" + "\n".join(diff) +
                              "\nagain equal: %r\n" % (again == want) + "\n".join(plan))
            c.execute("COMMIT")
        except (psycopg.errors.LockNotAvailable, psycopg.errors.QueryCanceled):
            c.execute("ROLLBACK")
        except psycopg.OperationalError:
            c = connect()
        except Exception as e:  # noqa: BLE001
            errors.append("reader: %r" % e)
            return


@pytest.fixture
def table(db):
    db.execute("CREATE EXTENSION IF NOT EXISTS pg_warp")
    db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % S)
    db.execute("CREATE SCHEMA %s" % S)
    db.execute("CREATE TABLE %s (k int, g int, v bigint, x float8)" % T)
    db.execute("INSERT INTO %s SELECT i, i %% 9, i %% 1000, i / 2.0 FROM generate_series(1, 5000) i" % T)
    db.execute("ANALYZE %s" % T)
    db.execute("SELECT pg_warp_gpu_cache_attach('%s')" % T)
    yield T


def run_phase(seconds, nwriters, nreaders, stats, errors, mid=None, seed0=0, nmid=1):
    """writers and readers for seconds; mid(conns) called nmid times, evenly spaced"""
    stop = threading.Event()
    conns = []
    threads = [threading.Thread(target=writer, args=(seed0 + i, stop, errors, conns))
               for i in range(nwriters)]
    threads += [threading.Thread(target=reader, args=(stop, stats, errors)) for _ in range(nreaders)]
    for t in threads:
        t.start()
    for _ in range(nmid if mid else 0):
        time.sleep(seconds / (nmid + 1))
        mid(conns)
    time.sleep(seconds / (nmid + 1))
    stop.set()
    for t in threads:
        t.join(60)


def check_stats(stats, errors):
    assert not errors, errors[:3]
    assert stats["mismatches"] == 0, stats
    assert stats["rounds"] >= 50, stats
    # the cache answered a good share of the rounds it was asked about
    assert stats["used"] * 3 >= stats["explained"], stats
    print(stats)


def test_random_interleavings(table):
    """Random writers and readers, no process killed: every round equal."""
    stats = {"rounds": 0, "mismatches": 0, "used": 0, "explained": 0}
    errors = []
    run_phase(SECONDS, 3, 2, stats, errors, seed0=1)
    check_stats(stats, errors)


def test_random_interleavings_with_kills(table):
    """The same with pg_warp_gpud killed twice, then a writer backend (the
    cluster restarts): every round equal, before, between and after."""
    stats = {"rounds": 0, "mismatches": 0, "used": 0, "explained": 0}
    errors = []

    def kill_daemon(conns):
        ctl = connect()
        st = gpud_status(ctl)
        ctl.close()
        if st:
            os.kill(st[2], signal.SIGKILL)

    def kill_writer(conns):
        pid = conns[-1].info.backend_pid
        os.kill(pid, signal.SIGKILL)    # the postmaster restarts the cluster

    for rnd in range(KILL_ROUNDS):
        run_phase(SECONDS * 0.7, 3, 2, stats, errors, mid=kill_daemon, nmid=2,
                  seed0=1 + 1000 * rnd)
        assert not errors, errors[:3]
        run_phase(SECONDS * 0.3, 2, 2, stats, errors, mid=kill_writer, seed0=100 + 1000 * rnd)
        assert not errors, errors[:3]
    check_stats(stats, errors)
