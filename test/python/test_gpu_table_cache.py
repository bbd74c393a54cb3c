"""The GPU table cache (src/pg/tcache, src/gpud/gpud_tcache_*.c): heap tables
attached to a replica in pg_warp_gpud, kept current from captured row
changes, read under each query's snapshot.

The test cluster's daemon runs with pg_warp.gpud_device = cpu, so the replica
lives in its host memory and the same capture, visibility and fallback logic
is exercised without a GPU.  Every answer is compared with PostgreSQL's own
(pg_warp.enabled = off) in the same session and transaction, so under the
same snapshot (REPEATABLE READ) or the same committed state (READ COMMITTED
with no concurrent writer between the two), and every test checks that the
cache really answered (EXPLAIN ANALYZE: "GPU Table Cache: used") or says
why it did not.
"""
import os
import signal
import time

import psycopg
import pytest

from pwhelpers import gpud_status, pg_dsn

S = "tcache_t"
N = 30_000

QUERIES = [
    "SELECT g, count(*), sum(v), min(x), max(x), min(d), max(ts) FROM {t} GROUP BY g ORDER BY g",
    "SELECT count(*), sum(v), sum(k), avg(k) FROM {t} WHERE k % 3 = 1",
    "SELECT b, count(v), sum(g) FROM {t} WHERE v > 100 GROUP BY b ORDER BY b",
]


def connect():
    c = psycopg.connect(pg_dsn(), autocommit=True)
    c.execute("SET pg_warp.heap_min_rows = 0")
    c.execute("SET max_parallel_workers_per_gather = 0")
    c.execute("SET pg_warp.gpu_table_cache = on")
    return c


@pytest.fixture
def tbl(db):
    db.execute("CREATE EXTENSION IF NOT EXISTS pg_warp")
    db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % S)
    db.execute("CREATE SCHEMA %s" % S)
    t = S + ".sales"
    db.execute("CREATE TABLE %s (k int, g int2, v bigint, x float8, d date, ts timestamp, "
               "b bool, note text)" % t)
    db.execute("INSERT INTO %s SELECT i, i %% 7, (i * 37) %% 1000, i / 3.0, "
               "date '2020-01-01' + i %% 500, timestamp '2021-01-01' + i * interval '1 minute', "
               "i %% 2 = 0, 'n' || i FROM generate_series(1, %d) i" % (t, N))
    db.execute("INSERT INTO %s VALUES (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)" % t)
    db.execute("ANALYZE %s" % t)
    db.execute("SELECT pg_warp_gpu_cache_attach('%s')" % t)
    yield t
    db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % S)


def answers(conn, t, queries=QUERIES):
    """(pg_warp's rows, PostgreSQL's rows, EXPLAIN ANALYZE lines) per query"""
    out = []
    for q in queries:
        sql = q.format(t=t)
        conn.execute("SET pg_warp.enabled = on")
        plan = [r[0] for r in conn.execute("EXPLAIN (ANALYZE, COSTS OFF) " + sql).fetchall()]
        got = conn.execute(sql).fetchall()
        conn.execute("SET pg_warp.enabled = off")
        want = conn.execute(sql).fetchall()
        conn.execute("SET pg_warp.enabled = on")
        out.append((got, want, plan))
    return out


def cache_line(plan):
    for line in plan:
        if "GPU Table Cache:" in line:
            return line.split("GPU Table Cache:", 1)[1].strip()
    return None


def check(conn, t, expect_used=True, queries=QUERIES):
    for got, want, plan in answers(conn, t, queries):
        assert got == want, "\n".join(plan)
        line = cache_line(plan)
        if expect_used:
            assert line is not None and line.startswith("used"), "\n".join(plan)
    return True


def test_attach_and_query(tbl):
    with connect() as c:
        check(c, tbl)
        st = c.execute("SELECT \"table\"::text, rows, bytes, pending_changes, state "
                       "FROM pg_warp_gpu_cache_stats()").fetchall()
        assert len(st) == 1 and st[0][0] == tbl and st[0][4] == "ready"
        assert st[0][1] == N + 1 and st[0][2] > 0


def test_committed_writes_of_other_sessions(tbl):
    with connect() as a, connect() as b:
        check(a, tbl)
        b.execute("INSERT INTO %s SELECT i, i %% 5, i, i, NULL, NULL, true, NULL "
                  "FROM generate_series(1, 500) i" % tbl)
        b.execute("UPDATE %s SET v = v + 1, g = 3 WHERE k %% 11 = 0" % tbl)
        b.execute("DELETE FROM %s WHERE k %% 13 = 0" % tbl)
        check(a, tbl)
        # updates of updated rows (new tids, HOT chains)
        for _ in range(3):
            b.execute("UPDATE %s SET v = v * 2 WHERE k %% 17 = 1" % tbl)
        check(a, tbl)


def test_inside_the_writing_transaction(tbl):
    with connect() as a:
        a.execute("BEGIN")
        a.execute("INSERT INTO %s SELECT i, 1, 5, 1.5, NULL, NULL, false, NULL "
                  "FROM generate_series(1, 300) i" % tbl)
        check(a, tbl)
        a.execute("UPDATE %s SET v = -v WHERE k %% 10 = 0" % tbl)
        a.execute("DELETE FROM %s WHERE k %% 9 = 0" % tbl)
        check(a, tbl)
        a.execute("SAVEPOINT s1")
        a.execute("DELETE FROM %s WHERE g = 2" % tbl)
        a.execute("UPDATE %s SET g = 6 WHERE g = 1" % tbl)
        check(a, tbl)
        a.execute("ROLLBACK TO SAVEPOINT s1")
        check(a, tbl)
        a.execute("SAVEPOINT s2")
        a.execute("INSERT INTO %s VALUES (1, 1, 1, 1, NULL, NULL, true, NULL)" % tbl)
        a.execute("RELEASE SAVEPOINT s2")
        check(a, tbl)
        a.execute("ROLLBACK")
        check(a, tbl)
        a.execute("BEGIN")
        a.execute("UPDATE %s SET v = 0 WHERE k < 100" % tbl)
        a.execute("COMMIT")
        check(a, tbl)


def test_command_ids_inside_one_statement(tbl):
    """a volatile function reading the table while its statement writes it:
    the rows its own statement wrote are invisible to that statement"""
    with connect() as a:
        a.execute("CREATE FUNCTION %s.total() RETURNS bigint LANGUAGE sql VOLATILE AS "
                  "$$ SELECT sum(v) FROM %s $$" % (S, tbl))
        a.execute("BEGIN")
        a.execute("UPDATE %s SET v = v + 1000 WHERE k < 50" % tbl)
        got = a.execute("SELECT %s.total()" % S).fetchone()
        a.execute("SET LOCAL pg_warp.enabled = off")
        want = a.execute("SELECT %s.total()" % S).fetchone()
        assert got == want
        a.execute("COMMIT")


def test_repeatable_read_sees_its_snapshot(tbl):
    with connect() as a, connect() as b:
        a.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        check(a, tbl)
        b.execute("UPDATE %s SET v = v + 7 WHERE g = 4" % tbl)
        b.execute("DELETE FROM %s WHERE g = 5" % tbl)
        b.execute("INSERT INTO %s SELECT i, 5, 1, 1, NULL, NULL, true, NULL "
                  "FROM generate_series(1, 100) i" % tbl)
        check(a, tbl)           # the old rows, from the replica
        a.execute("COMMIT")
        check(a, tbl)


def test_uncommitted_and_aborted_writers(tbl):
    with connect() as a, connect() as b:
        b.execute("BEGIN")
        b.execute("UPDATE %s SET v = 999999 WHERE g = 1" % tbl)
        b.execute("INSERT INTO %s SELECT i, 2, 7, 7, NULL, NULL, true, NULL "
                  "FROM generate_series(1, 100) i" % tbl)
        # b's own query ships its changes: a must not see them
        check(b, tbl)
        check(a, tbl)
        b.execute("ROLLBACK")
        check(a, tbl)
        b.execute("BEGIN")
        b.execute("DELETE FROM %s WHERE g = 3" % tbl)
        b.execute("COMMIT")
        check(a, tbl)


def test_rolled_back_savepoint_then_another_writer(tbl):
    """A savepoint rolled back frees the rows it changed; another session
    changes the same rows and commits first.  The first transaction's
    commit must not bring the rolled-back changes into the replica after
    the other's (they would undo them: deleted versions live again)."""
    with connect() as a, connect() as b:
        for inner in ("none", "released", "rolled back"):
            a.execute("BEGIN")
            a.execute("UPDATE %s SET v = v + 1 WHERE g = 6" % tbl)     # kept
            a.execute("SAVEPOINT s")
            a.execute("UPDATE %s SET v = v + 1 WHERE g = 3" % tbl)
            a.execute("DELETE FROM %s WHERE g = 4 AND k %% 2 = 0" % tbl)
            if inner != "none":
                a.execute("SAVEPOINT s2")
                a.execute("UPDATE %s SET v = v + 2 WHERE g = 5" % tbl)
                a.execute("%s SAVEPOINT s2" % ("RELEASE" if inner == "released" else "ROLLBACK TO"))
            a.execute("ROLLBACK TO SAVEPOINT s")
            # the rows a's savepoint touched are free: b changes them and commits
            b.execute("UPDATE %s SET v = v + 100 WHERE g IN (3, 5)" % tbl)
            b.execute("DELETE FROM %s WHERE g = 4 AND k %% 4 = 0" % tbl)
            a.execute("INSERT INTO %s VALUES (-1, 3, 1, 1, NULL, NULL, true, NULL)" % tbl)
            a.execute("COMMIT")
            check(a, tbl)
            check(b, tbl)


def test_truncate_copy_and_rewrite(tbl):
    with connect() as a, connect() as b:
        check(a, tbl)
        b.execute("BEGIN")
        b.execute("TRUNCATE %s" % tbl)
        b.execute("INSERT INTO %s VALUES (1, 1, 1, 1, NULL, NULL, true, NULL)" % tbl)
        for got, want, plan in answers(b, tbl):
            assert got == want
            # (a plan for an apparently empty table may be PostgreSQL's own)
            line = cache_line(plan)
            assert line is None or line == "not used (table created or rewritten in this transaction)"
        b.execute("ROLLBACK")
        check(a, tbl)
        b.execute("BEGIN")
        b.execute("TRUNCATE %s" % tbl)
        with b.cursor().copy("COPY %s (k, g, v, x, b) FROM STDIN" % tbl) as cp:
            for i in range(25000):
                cp.write_row((i, i % 4, i * 3, i / 7.0, i % 3 == 0))
        b.execute("COMMIT")
        b.execute("ANALYZE %s" % tbl)
        check(a, tbl)
        with b.cursor().copy("COPY %s (k, g, v) FROM STDIN" % tbl) as cp:
            for i in range(500):
                cp.write_row((i, 9, 1))
        check(a, tbl)
        b.execute("ALTER TABLE %s ADD COLUMN extra int DEFAULT 5" % tbl)
        check(a, tbl, queries=QUERIES + ["SELECT g, sum(extra) FROM {t} GROUP BY g ORDER BY g"])
        b.execute("VACUUM FULL %s" % tbl)
        check(a, tbl)


def test_writes_from_functions_and_triggers(tbl):
    with connect() as a:
        a.execute("CREATE TABLE %s.log (k int)" % S)
        a.execute("CREATE FUNCTION %s.copy_in() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                  "INSERT INTO %s VALUES (NEW.k, 6, NEW.k * 2, 0, NULL, NULL, false, NULL); "
                  "DELETE FROM %s WHERE k = NEW.k + 1; RETURN NEW; END $$" % (S, tbl, tbl))
        a.execute("CREATE TRIGGER copy_in AFTER INSERT ON %s.log FOR EACH ROW "
                  "EXECUTE FUNCTION %s.copy_in()" % (S, S))
        a.execute("INSERT INTO %s.log SELECT i * 10 FROM generate_series(1, 200) i" % S)
        check(a, tbl)
        a.execute("CREATE FUNCTION %s.churn(n int) RETURNS void LANGUAGE plpgsql AS $$ BEGIN "
                  "FOR i IN 1..n LOOP UPDATE %s SET v = v + 1 WHERE k = i; END LOOP; END $$"
                  % (S, tbl))
        a.execute("BEGIN")
        a.execute("SELECT %s.churn(300)" % S)
        check(a, tbl)
        a.execute("COMMIT")
        check(a, tbl)
        # a row inserted and deleted by later commands of one statement
        a.execute("CREATE FUNCTION %s.ins_del() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                  "DELETE FROM %s WHERE k = -NEW.k; RETURN NULL; END $$" % (S, tbl))
        a.execute("CREATE TRIGGER ins_del AFTER INSERT ON %s FOR EACH ROW WHEN (NEW.k < 0) "
                  "EXECUTE FUNCTION %s.ins_del()" % (tbl, S))
        a.execute("INSERT INTO %s SELECT -i, 0, 1, 1, NULL, NULL, true, NULL "
                  "FROM generate_series(1, 50) i" % tbl)
        check(a, tbl)


def test_detach_and_reattach(tbl, db):
    with connect() as a:
        a.execute("SELECT pg_warp_gpu_cache_detach('%s')" % tbl)
        for got, want, plan in answers(a, tbl):
            assert got == want
            assert cache_line(plan) is None
        assert a.execute("SELECT count(*) FROM pg_warp_gpu_cache_stats()").fetchone()[0] == 0
        a.execute("DELETE FROM %s WHERE g = 0" % tbl)
        a.execute("SELECT pg_warp_gpu_cache_attach('%s')" % tbl)
        check(a, tbl)


def test_serializable_and_switch_fall_back(tbl):
    with connect() as a:
        a.execute("BEGIN ISOLATION LEVEL SERIALIZABLE")
        for got, want, plan in answers(a, tbl):
            assert got == want
            assert cache_line(plan) == "not used (serializable transaction)"
        a.execute("COMMIT")
        a.execute("SET pg_warp.gpu_table_cache = off")
        for got, want, plan in answers(a, tbl):
            assert got == want
            assert cache_line(plan) is None
        a.execute("SET pg_warp.gpu_table_cache = on")
        a.execute("SET pg_warp.mode = cpu")
        for got, want, plan in answers(a, tbl):
            assert got == want
            assert cache_line(plan) in (None, "not used (pg_warp.mode = cpu)")
        a.execute("RESET pg_warp.mode")


def test_only_the_owner_attaches(tbl, db):
    db.execute("DROP ROLE IF EXISTS tcache_other")
    db.execute("CREATE ROLE tcache_other")
    db.execute("GRANT USAGE ON SCHEMA %s TO tcache_other" % S)
    db.execute("GRANT ALL ON %s TO tcache_other" % tbl)
    try:
        with connect() as a:
            a.execute("SET ROLE tcache_other")
            for fn in ("attach", "detach"):
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    a.execute("SELECT pg_warp_gpu_cache_%s('%s')" % (fn, tbl))
    finally:
        db.execute("DROP OWNED BY tcache_other")
        db.execute("DROP ROLE tcache_other")


def test_refuses_what_it_cannot_hold(db):
    db.execute("CREATE EXTENSION IF NOT EXISTS pg_warp")
    db.execute("DROP TABLE IF EXISTS tcache_texts, tcache_part")
    db.execute("CREATE TABLE tcache_texts (a text)")
    with pytest.raises(psycopg.errors.FeatureNotSupported):
        db.execute("SELECT pg_warp_gpu_cache_attach('tcache_texts')")
    db.execute("CREATE TABLE tcache_part (a int) PARTITION BY RANGE (a)")
    with pytest.raises(psycopg.errors.FeatureNotSupported):
        db.execute("SELECT pg_warp_gpu_cache_attach('tcache_part')")
    db.execute("DROP TABLE tcache_texts, tcache_part")


def test_memory_limit_names_the_table(tbl, db):
    db.execute("ALTER SYSTEM SET pg_warp.gpu_table_cache_memory = 1")
    db.execute("SELECT pg_reload_conf()")
    time.sleep(0.5)
    try:
        with connect() as a:
            with pytest.raises(psycopg.errors.ProgramLimitExceeded, match="sales"):
                a.execute("SELECT pg_warp_gpu_cache_attach('%s')" % tbl)
    finally:
        db.execute("ALTER SYSTEM RESET pg_warp.gpu_table_cache_memory")
        db.execute("SELECT pg_reload_conf()")
        time.sleep(0.5)
    with connect() as a:
        check(a, tbl)           # loaded again by the query


def wait_new_daemon(conn, old_pid, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        st = gpud_status(conn)
        if st and st[2] != old_pid:
            return st
        time.sleep(0.1)
    pytest.fail("pg_warp_gpud was not restarted")


def test_daemon_killed_falls_back_then_reloads(tbl):
    with connect() as a, connect() as b:
        check(a, tbl)
        st = gpud_status(a)
        os.kill(st[2], signal.SIGKILL)
        # writes while the daemon is gone are not lost to a later replica
        b.execute("UPDATE %s SET v = v + 3 WHERE g = 2" % tbl)
        for got, want, plan in answers(a, tbl):
            assert got == want
        wait_new_daemon(a, st[2])
        # loaded again by the first query that needs it (maybe one above)
        res = answers(a, tbl)
        for got, want, plan in res:
            assert got == want
            assert cache_line(plan).startswith("used")
        b.execute("DELETE FROM %s WHERE g = 6" % tbl)
        check(a, tbl)
