"""Heap dimension tables kept across queries (src/pg/heap_changes.c,
src/pg/exec/warp_dimcache.c).

A backend keeps the join table it built from a heap dimension while no
transaction that modified the table has committed since, and uses it only
under snapshots that see the same committed changes.  Each test runs a
star query over an Arrow fact table and a heap dimension in one session,
changes the dimension in another session (or in the same transaction, or
behind an older snapshot), and compares every answer with PostgreSQL's own
(pg_warp.enabled = off, the fact table a heap copy loaded from pyarrow's
CSV) in the same session and transaction, so under the same snapshot.
"""
import os
import re
import time

import psycopg
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.ipc as ipc
import pytest

from pwhelpers import pg_dsn

SCHEMA = "heapdims_t"
NDIM = 60

QUERY = ("SELECT d.grp, count(*), sum(f.v) FROM {s}.{f} f "
         "JOIN {s}.{d} d ON f.k = d.id WHERE d.w < 9 GROUP BY 1 ORDER BY 1")


def write_arrow(path, table):
    with ipc.new_file(path, table.schema) as w:
        w.write_table(table)
    os.chmod(path, 0o644)


@pytest.fixture(scope="module")
def star(db, module_scratch):
    d = module_scratch
    n = 40_000
    fact = pa.table({"k": pa.array([(i * 7) % 64 for i in range(n)], pa.int32()),
                     "v": pa.array([i % 1000 for i in range(n)], pa.int64())})
    write_arrow(os.path.join(d, "fact.arrow"), fact)
    csv = os.path.join(d, "fact.csv")
    pacsv.write_csv(fact, csv)
    os.chmod(csv, 0o644)
    db.execute("CREATE EXTENSION IF NOT EXISTS pg_warp")
    db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % SCHEMA)
    db.execute("CREATE SCHEMA %s" % SCHEMA)
    db.execute("CREATE FOREIGN TABLE %s.fact (k int, v bigint) SERVER arrow_fdw "
               "OPTIONS (file '%s')" % (SCHEMA, os.path.join(d, "fact.arrow")))
    db.execute("CREATE TABLE %s.fact_h (k int, v bigint)" % SCHEMA)
    db.execute("COPY %s.fact_h FROM '%s' WITH (FORMAT csv, HEADER true)" % (SCHEMA, csv))
    db.execute("CREATE TABLE %s.parent (id int PRIMARY KEY)" % SCHEMA)
    db.execute("CREATE TABLE %s.dim (id int REFERENCES %s.parent ON DELETE CASCADE, "
               "grp text, w int)" % (SCHEMA, SCHEMA))
    db.execute("CREATE TABLE %s.other (id int, grp text, w int)" % SCHEMA)
    db.execute("ANALYZE %s.fact" % SCHEMA)
    db.execute("SET pg_warp.mode = cpu")
    db.execute("SET max_parallel_workers_per_gather = 0")
    yield db, d
    db.execute("RESET pg_warp.mode")
    db.execute("RESET max_parallel_workers_per_gather")
    db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % SCHEMA)


def reset_dim(db):
    db.execute("TRUNCATE %s.dim, %s.parent" % (SCHEMA, SCHEMA))
    db.execute("INSERT INTO %s.parent SELECT g FROM generate_series(0, %d) g" % (SCHEMA, NDIM + 10))
    db.execute("INSERT INTO %s.dim SELECT g, 'g' || (g %% 5), (g * 3) %% 11 "
               "FROM generate_series(0, %d) g" % (SCHEMA, NDIM - 1))
    db.execute("ANALYZE %s.dim" % SCHEMA)


LAST_PLAN = {}


def warp(db):
    """The query through pg_warp: its rows and how many dimensions came
    from the cache (the EXPLAIN ANALYZE text kept in LAST_PLAN)."""
    sql = QUERY.format(s=SCHEMA, f="fact", d="dim")
    plan = "\n".join(r[0] for r in db.execute("EXPLAIN (ANALYZE) " + sql).fetchall())
    assert "WarpPreAgg" in plan, plan
    m = re.search(r"Dimensions From Cache: (\d+)", plan)
    assert m, plan
    LAST_PLAN["text"] = plan
    return db.execute(sql).fetchall(), int(m.group(1))


def not_cached():
    """The reason EXPLAIN ANALYZE gave for the dimension, or None."""
    m = re.search(r"Dimensions Not Cached: (.*)", LAST_PLAN["text"])
    return m.group(1).strip() if m else None


def oracle(db):
    db.execute("SET pg_warp.enabled = off")
    try:
        return db.execute(QUERY.format(s=SCHEMA, f="fact_h", d="dim")).fetchall()
    finally:
        db.execute("RESET pg_warp.enabled")


def cached_state(db):
    """Run twice: the second run must come from the cache, both right."""
    reset_dim(db)
    first, _ = warp(db)
    again, cached = warp(db)
    assert cached == 1, "a heap dimension nobody changed was not cached"
    assert first == again == oracle(db)


def other_session():
    return psycopg.connect(pg_dsn(), autocommit=True)


def test_second_run_uses_the_cache(star):
    db, _ = star
    cached_state(db)


MODIFICATIONS = {
    "update": "UPDATE {s}.dim SET grp = 'moved' WHERE id %% 7 = 0",
    "insert": "INSERT INTO {s}.dim VALUES (63, 'new', 1)",
    "delete": "DELETE FROM {s}.dim WHERE id < 10",
    "merge": ("MERGE INTO {s}.dim d USING (SELECT 5 AS id) s ON d.id = s.id "
              "WHEN MATCHED THEN UPDATE SET w = 0, grp = 'merged'"),
    "on_conflict_cte": ("WITH x AS (INSERT INTO {s}.dim VALUES (61, 'cte', 2) RETURNING 1) "
                        "SELECT count(*) FROM x"),
    "function": ("DO $$ BEGIN EXECUTE 'UPDATE {s}.dim SET w = 1 WHERE id = 3'; "
                 "END $$"),
    "fk_cascade": "DELETE FROM {s}.parent WHERE id IN (1, 2, 11)",
    "copy": "COPY {s}.dim FROM PROGRAM 'printf \"62,copied,4\\n\"' WITH (FORMAT csv)",
    "truncate": "TRUNCATE {s}.dim CASCADE",
    "insert_select": "INSERT INTO {s}.dim SELECT id + 1, grp || 'x', w FROM {s}.dim WHERE id < 4",
}


@pytest.mark.parametrize("what", sorted(MODIFICATIONS))
def test_change_committed_elsewhere_is_seen(star, what):
    db, _ = star
    cached_state(db)
    with other_session() as b:
        sql = MODIFICATIONS[what].format(s=SCHEMA).replace("%%", "%")
        b.execute(sql)
    rows, cached = warp(db)
    assert cached == 0, "a heap dimension changed by a committed %s came from the cache" % what
    assert rows == oracle(db)
    rows, cached = warp(db)
    assert cached == 1
    assert rows == oracle(db)


def test_uncommitted_change_then_commit(star):
    db, _ = star
    cached_state(db)
    before = oracle(db)
    with other_session() as b:
        b.autocommit = False
        b.execute("UPDATE %s.dim SET grp = 'pending' WHERE id < 30" % SCHEMA)
        rows, _ = warp(db)
        assert rows == before == oracle(db)
        b.commit()
    rows, cached = warp(db)
    assert cached == 0
    assert rows == oracle(db)
    assert rows != before


def test_rolled_back_change(star):
    db, _ = star
    cached_state(db)
    before = oracle(db)
    with other_session() as b:
        b.autocommit = False
        b.execute("DELETE FROM %s.dim" % SCHEMA)
        b.rollback()
    rows, _ = warp(db)
    assert rows == before == oracle(db)


def test_own_transaction_and_savepoint(star):
    db, _ = star
    cached_state(db)
    before = oracle(db)
    db.execute("BEGIN")
    try:
        db.execute("UPDATE %s.dim SET grp = 'mine' WHERE id %% 3 = 0" % SCHEMA)
        rows, cached = warp(db)
        assert cached == 0, "a dimension this transaction changed came from the cache"
        assert not_cached() == "dim (written by this transaction)"
        assert rows == oracle(db) != before
        db.execute("SAVEPOINT s")
        db.execute("DELETE FROM %s.dim WHERE id < 40" % SCHEMA)
        rows, _ = warp(db)
        assert rows == oracle(db)
        db.execute("ROLLBACK TO SAVEPOINT s")
        rows, cached = warp(db)
        assert cached == 0
        assert rows == oracle(db)
    finally:
        db.execute("ROLLBACK")
    rows, _ = warp(db)
    assert rows == before == oracle(db)


def test_repeatable_read_keeps_its_snapshot(star):
    db, _ = star
    cached_state(db)
    before = oracle(db)
    db.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
    try:
        rows, _ = warp(db)
        assert rows == before
        with other_session() as b:
            b.execute("UPDATE %s.dim SET grp = 'later' WHERE id < 50" % SCHEMA)
        rows, _ = warp(db)
        assert rows == before == oracle(db), "a repeatable read saw another's later commit"
        rows, _ = warp(db)
        assert rows == before
    finally:
        db.execute("COMMIT")
    rows, cached = warp(db)
    assert cached == 0
    assert rows == oracle(db) != before
    rows, cached = warp(db)
    assert cached == 1


def test_cursor_with_older_snapshot(star):
    """A cursor's snapshot predates a commit; a query after the commit puts
    the newer rows in the cache; the cursor must not take them."""
    db, _ = star
    cached_state(db)
    db.execute("BEGIN")
    try:
        db.execute("DECLARE c CURSOR FOR " + QUERY.format(s=SCHEMA, f="fact", d="dim"))
        db.execute("SET LOCAL pg_warp.enabled = off")
        db.execute("DECLARE o CURSOR FOR " + QUERY.format(s=SCHEMA, f="fact_h", d="dim"))
        db.execute("SET LOCAL pg_warp.enabled = on")
        with other_session() as b:
            b.execute("DELETE FROM %s.dim WHERE id %% 2 = 0" % SCHEMA)
        newer, _ = warp(db)
        newer_again, cached = warp(db)
        assert cached == 1 and newer == newer_again == oracle(db)
        old = db.execute("FETCH ALL FROM c").fetchall()
        assert old == db.execute("FETCH ALL FROM o").fetchall()
        assert old != newer
    finally:
        db.execute("COMMIT")


def test_serializable_is_not_cached(star):
    db, _ = star
    cached_state(db)
    db.execute("BEGIN ISOLATION LEVEL SERIALIZABLE")
    try:
        rows, cached = warp(db)
        assert cached == 0, "a serializable transaction took no predicate lock on the dimension"
        assert not_cached() == "dim (serializable transaction)"
        assert rows == oracle(db)
    finally:
        db.execute("COMMIT")


def test_guc_off(star):
    db, _ = star
    cached_state(db)
    db.execute("SET pg_warp.cache_heap_dimensions = off")
    try:
        rows, cached = warp(db)
        assert cached == 0
        assert not_cached() == "dim (pg_warp.cache_heap_dimensions is off)"
        assert rows == oracle(db)
    finally:
        db.execute("RESET pg_warp.cache_heap_dimensions")
    rows, cached = warp(db)
    assert cached == 1 and not_cached() is None
    db.execute("SET pg_warp.dim_cache_mem = 0")
    try:
        rows, cached = warp(db)
        assert cached == 0
        assert not_cached() == "dim (pg_warp.dim_cache_mem is 0)"
        assert rows == oracle(db)
    finally:
        db.execute("RESET pg_warp.dim_cache_mem")


def test_prepared_transaction(star):
    db, _ = star
    if int(db.execute("SHOW max_prepared_transactions").fetchone()[0]) == 0:
        pytest.skip("max_prepared_transactions = 0 on this cluster")
    cached_state(db)
    before = oracle(db)
    with other_session() as b:
        b.execute("BEGIN")
        b.execute("UPDATE %s.dim SET grp = 'prepared' WHERE id < 20" % SCHEMA)
        b.execute("PREPARE TRANSACTION 'pg_warp_heapdims'")
    try:
        rows, _ = warp(db)
        assert rows == before == oracle(db)
    finally:
        db.execute("COMMIT PREPARED 'pg_warp_heapdims'")
    rows, cached = warp(db)
    assert cached == 0
    assert rows == oracle(db) != before


def test_temp_and_partitioned_dimensions_are_not_cached(star):
    db, _ = star
    db.execute("CREATE TEMP TABLE tdim AS SELECT * FROM %s.dim" % SCHEMA)
    db.execute("CREATE TABLE %s.pdim (id int, grp text, w int) PARTITION BY RANGE (id)"
               % SCHEMA)
    db.execute("CREATE TABLE %s.pdim_a PARTITION OF %s.pdim FOR VALUES FROM (0) TO (1000)"
               % (SCHEMA, SCHEMA))
    db.execute("INSERT INTO %s.pdim SELECT * FROM %s.dim" % (SCHEMA, SCHEMA))
    try:
        for dim in ("pg_temp.tdim", "%s.pdim_a" % SCHEMA):
            sql = ("SELECT d.grp, count(*), sum(f.v) FROM %s.fact f JOIN %s d ON f.k = d.id "
                   "GROUP BY 1 ORDER BY 1" % (SCHEMA, dim))
            for _ in range(2):
                plan = "\n".join(r[0] for r in
                                 db.execute("EXPLAIN (ANALYZE) " + sql).fetchall())
                assert "WarpPreAgg" in plan, plan
                assert "Dimensions From Cache: 0" in plan, plan
                why = "a temporary table" if dim.startswith("pg_temp") else "a partition"
                assert re.search(r"Dimensions Not Cached: \S+ \(%s\)" % why, plan), plan
            db.execute("INSERT INTO %s SELECT 63, 'routed', 1" %
                       ("%s.pdim" % SCHEMA if dim.endswith("pdim_a") else dim))
            got = db.execute(sql).fetchall()
            db.execute("SET pg_warp.enabled = off")
            want = db.execute(sql.replace("%s.fact f" % SCHEMA,
                                          "%s.fact_h f" % SCHEMA)).fetchall()
            db.execute("RESET pg_warp.enabled")
            assert got == want
    finally:
        db.execute("DROP TABLE IF EXISTS tdim")
        db.execute("DROP TABLE IF EXISTS %s.pdim" % SCHEMA)


def test_index_scan_dimension(star):
    """A dimension planned as an Index Scan is cached and invalidated the
    same way."""
    db, _ = star
    reset_dim(db)
    db.execute("CREATE INDEX dim_w ON %s.dim (w)" % SCHEMA)
    sql = ("SELECT d.grp, count(*), sum(f.v) FROM %s.fact f JOIN %s.dim d ON f.k = d.id "
           "WHERE d.w = 3 GROUP BY 1 ORDER BY 1" % (SCHEMA, SCHEMA))
    db.execute("SET enable_seqscan = off")
    db.execute("SET enable_bitmapscan = off")
    try:
        def run():
            plan = "\n".join(r[0] for r in db.execute("EXPLAIN (ANALYZE) " + sql).fetchall())
            assert "WarpPreAgg" in plan and "Index Scan using dim_w" in plan, plan
            cached = int(re.search(r"Dimensions From Cache: (\d+)", plan).group(1))
            rows = db.execute(sql).fetchall()
            db.execute("SET pg_warp.enabled = off")
            want = db.execute(sql.replace(".fact f", ".fact_h f")).fetchall()
            db.execute("RESET pg_warp.enabled")
            assert rows == want
            return cached
        run()
        assert run() == 1
        with other_session() as b:
            b.execute("UPDATE %s.dim SET w = 3 WHERE id = 7" % SCHEMA)
        assert run() == 0
        assert run() == 1
    finally:
        db.execute("RESET enable_seqscan")
        db.execute("RESET enable_bitmapscan")
        db.execute("DROP INDEX %s.dim_w" % SCHEMA)


def test_concurrent_writers(star):
    """A writer commits changes to the dimension as fast as it can (with
    pauses) while this session runs the query and PostgreSQL's own in one
    REPEATABLE READ transaction at a time (one snapshot for both): the
    answers must always agree, whether the dimension came from the cache or
    not.  Then the writer is held still for a few rounds, so the cached path
    is taken however busy the machine (under load the writer can commit
    between every pair of queries, and no round would hit the cache)."""
    import random
    import threading
    db, _ = star
    reset_dim(db)
    stop = threading.Event()
    hold = threading.Event()
    held = threading.Event()
    errors = []

    def writer():
        rnd = random.Random(7)
        try:
            with other_session() as b:
                while not stop.is_set():
                    if hold.is_set():
                        held.set()
                        stop.wait(0.01)
                        continue
                    b.execute("UPDATE %s.dim SET grp = 'w%d' WHERE id = %d"
                              % (SCHEMA, rnd.randrange(5), rnd.randrange(NDIM)))
                    if rnd.random() < 0.3:
                        stop.wait(0.02)
        except Exception as e:      # reported by the main thread
            errors.append(e)

    def round_():
        db.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        try:
            rows, cached = warp(db)
            want = oracle(db)
        finally:
            db.execute("COMMIT")
        assert rows == want, "cached=%d" % cached
        return cached

    t = threading.Thread(target=writer)
    t.start()
    hits = runs = 0
    try:
        deadline = time.time() + 4
        while time.time() < deadline:
            hits += round_()
            runs += 1
        hold.set()
        assert held.wait(30), "the writer did not stop"
        quiet_hits = sum(round_() for _ in range(3))
    finally:
        stop.set()
        t.join()
    assert not errors, errors
    # both paths ran: misses while the writer commits, hits once it is still
    assert runs >= 10 and hits < runs, (runs, hits)
    assert quiet_hits >= 2, quiet_hits


def test_transaction_writing_many_tables(star):
    """A transaction that writes more tables than the backend lists (its
    noted slots are then found in a bitmap), the dimension last."""
    db, _ = star
    for i in range(24):
        db.execute("CREATE TABLE IF NOT EXISTS %s.many_%d (x int)" % (SCHEMA, i))
    cached_state(db)
    with other_session() as b:
        with b.transaction():
            for i in range(24):
                b.execute("INSERT INTO %s.many_%d VALUES (%d)" % (SCHEMA, i, i))
            b.execute("UPDATE %s.dim SET grp = 'many' WHERE id %% 4 = 1" % SCHEMA)
    rows, cached = warp(db)
    assert cached == 0
    assert rows == oracle(db)


def test_prepared_statement_parameters(star):
    """A generic plan's dimension filter on $1: the parameter's value is
    part of the key (its binary image: two floats that print alike under a
    low extra_float_digits are different keys)."""
    db, _ = star
    reset_dim(db)
    db.execute("ALTER TABLE %s.dim ADD COLUMN f float8" % SCHEMA)
    db.execute("UPDATE %s.dim SET f = 0.1 WHERE id %% 2 = 0" % SCHEMA)
    db.execute("UPDATE %s.dim SET f = 0.1 + 1e-15 WHERE id %% 2 = 1" % SCHEMA)
    db.execute("SET plan_cache_mode = force_generic_plan")
    db.execute("SET extra_float_digits = -15")
    q = ("SELECT d.grp, count(*), sum(f.v) FROM {s}.{f} f JOIN {s}.dim d ON f.k = d.id "
         "WHERE d.grp = $1 AND d.f = $2 GROUP BY 1 ORDER BY 1")
    db.execute("PREPARE hq(text, float8) AS " + q.format(s=SCHEMA, f="fact"))
    db.execute("PREPARE hq_off(text, float8) AS " + q.format(s=SCHEMA, f="fact_h"))
    try:
        def run(grp, f):
            args = "('%s', %r)" % (grp, f)
            plan = "\n".join(r[0] for r in db.execute("EXPLAIN (ANALYZE) EXECUTE hq" + args))
            assert "WarpPreAgg" in plan, plan
            cached = int(re.search(r"Dimensions From Cache: (\d+)", plan).group(1))
            rows = db.execute("EXECUTE hq" + args).fetchall()
            db.execute("SET pg_warp.enabled = off")
            want = db.execute("EXECUTE hq_off" + args).fetchall()
            db.execute("RESET pg_warp.enabled")
            assert rows == want, (grp, f)
            return cached, rows
        run("g1", 0.1)
        assert run("g1", 0.1)[0] == 1, "a parameterized dimension was not cached"
        cached, rows = run("g1", 0.1 + 1e-15)
        assert cached == 0, "another parameter value came from the cache"
        assert run("g2", 0.1)[0] == 0
        assert run("g1", 0.1)[0] == 1
        assert run("g1", 0.1 + 1e-15)[0] == 1
    finally:
        db.execute("DEALLOCATE hq")
        db.execute("DEALLOCATE hq_off")
        db.execute("RESET plan_cache_mode")
        db.execute("RESET extra_float_digits")
        db.execute("ALTER TABLE %s.dim DROP COLUMN f" % SCHEMA)


def cache_stats(conn):
    """(entries, bytes) this session's cache holds, and the cluster's bytes."""
    return conn.execute("SELECT * FROM pg_warp_dim_cache_stats()").fetchone()


def set_total(db, others, value):
    """pg_warp.dim_cache_total_mem (PGC_SIGHUP) for every session given."""
    if value is None:
        db.execute("ALTER SYSTEM RESET pg_warp.dim_cache_total_mem")
    else:
        db.execute("ALTER SYSTEM SET pg_warp.dim_cache_total_mem = '%s'" % value)
    db.execute("SELECT pg_reload_conf()")
    deadline = time.time() + 10
    for conn in [db] + others:
        while True:
            # reading it applies a pending reload at the statement's start
            shown = conn.execute("SHOW pg_warp.dim_cache_total_mem").fetchone()[0]
            expect = value if value is not None else "2GB"
            if shown == expect:
                break
            assert time.time() < deadline, "%s never saw %s (shows %s)" % (conn, expect, shown)
            time.sleep(0.05)


def test_cluster_wide_total(star):
    """pg_warp.dim_cache_total_mem bounds every session's cache together:
    another session's entries leave no room, evicting them makes room, and
    a session's share goes back when it exits."""
    db, _ = star
    reset_dim(db)
    # db starts with an empty cache (earlier tests left entries in it)
    db.execute("SET pg_warp.dim_cache_mem = 0")
    warp(db)
    db.execute("RESET pg_warp.dim_cache_mem")
    assert cache_stats(db)[:2] == (0, 0)
    other = other_session()
    try:
        other.execute("SET pg_warp.mode = cpu")
        other.execute("SET max_parallel_workers_per_gather = 0")
        # the size of one entry: what a fresh session holds after caching it
        assert cache_stats(other)[:2] == (0, 0)
        warp(other)
        n, entry, _ = cache_stats(other)
        assert n == 1 and entry >= 2048, (n, entry)
        other.execute("SET pg_warp.dim_cache_mem = 0")
        warp(other)				# trims this session's cache to nothing
        assert cache_stats(other)[:2] == (0, 0)
        other.execute("RESET pg_warp.dim_cache_mem")

        # db keeps the entry; the total then has room for half another
        first, _ = warp(db)
        _, mine, cluster = cache_stats(db)
        assert mine >= entry and cluster >= mine
        set_total(db, [other], "%dkB" % ((cluster + entry // 2) // 1024))
        rows, cached = warp(other)
        assert cached == 0
        assert not_cached() == "dim (pg_warp.dim_cache_total_mem is taken by the caches of all sessions)"
        assert rows == oracle(other)
        assert cache_stats(other)[:2] == (0, 0)
        # db still uses its own entry under the lower total
        rows, cached = warp(db)
        assert cached == 1 and rows == first
        # another dimension of db's makes room by evicting db's own oldest
        n_before = cache_stats(db)[0]
        other_q = QUERY.format(s=SCHEMA, f="fact", d="dim").replace("d.w < 9", "d.w < 8")
        db.execute(other_q).fetchall()
        assert cache_stats(db)[0] == n_before
        plan = "\n".join(r[0] for r in db.execute("EXPLAIN (ANALYZE) " + other_q).fetchall())
        assert "Dimensions From Cache: 1" in plan, plan
        rows, cached = warp(db)		# and back: the first one again
        assert cached == 0 and not_cached() is None and rows == first

        # db lets its entries go: now the other session's fits, and is used
        db.execute("SET pg_warp.dim_cache_mem = 0")
        warp(db)
        db.execute("RESET pg_warp.dim_cache_mem")
        assert cache_stats(db)[:2] == (0, 0)
        warp(other)
        rows, cached = warp(other)
        assert cached == 1 and rows == oracle(other)
        assert cache_stats(other)[1] == entry

        set_total(db, [other], "0")
        rows, cached = warp(db)
        assert cached == 0 and not_cached() == "dim (pg_warp.dim_cache_total_mem is 0)"
        assert rows == first
    finally:
        set_total(db, [], None)
    # the other session's share goes back when it exits
    before = cache_stats(db)[2]
    other.close()
    deadline = time.time() + 10
    while cache_stats(db)[2] != before - entry:
        assert time.time() < deadline, (before, entry, cache_stats(db))
        time.sleep(0.05)
