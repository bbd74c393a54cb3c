"""Arrow dimensions read by the engine (src/pg/exec/warp_dim_arrow.c).

A star query's dimension that is a plain arrow_fdw scan whose quals the
engine computes has its join table built from the batches' columns, not
through PostgreSQL's executor.  Every query here runs three ways: with
`pg_warp.enable_dim_scan` on (EXPLAIN ANALYZE must say how many dimensions
the engine read), with it off (none), and on heap copies loaded from
pyarrow's CSV with pg_warp off, the oracle.  The dimension has three
batches, text and dictionary-encoded payloads, NULL keys, a column with
zeros (a qual that divides by it fails where PostgreSQL's does, or not at
all where an earlier qual drops the row first) and quals the engine does not
compute (the dimension then goes through PostgreSQL).
"""
import os
import re

import psycopg
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.ipc as ipc
import pytest

from pwhelpers import pg_dsn

SCHEMA = "dim_arrow_t"
NDIM = 3000


def write_arrow(path, table, batch_rows):
    with ipc.new_file(path, table.schema) as w:
        for b in table.to_batches(max_chunksize=batch_rows):
            w.write_batch(b)
    os.chmod(path, 0o644)


def dim_table():
    ids = [None if i % 97 == 5 else i for i in range(NDIM)]
    return pa.table({
        "id": pa.array(ids, pa.int32()),
        "grp": pa.array([None if i % 41 == 0 else "g%d" % (i % 7) for i in range(NDIM)]),
        "cat": pa.array(["c%d" % (i % 4) for i in range(NDIM)]).dictionary_encode(),
        "name": pa.array(["n%d" % i for i in range(NDIM)]),
        "w": pa.array([(i * 13) % 50 for i in range(NDIM)], pa.int32()),
        "z": pa.array([i % 250 for i in range(NDIM)], pa.int32()),
        "ts": pa.array([i * 3_600_000_000 for i in range(NDIM)], pa.timestamp("us")),
        "dt": pa.array([None if i % 43 == 1 else 18000 + i % 60 for i in range(NDIM)],
                       pa.date32()),
        "ok": pa.array([None if i % 31 == 2 else i % 3 == 0 for i in range(NDIM)]),
    })


DIM_COLS = "id int, grp text, cat text, name text, w int, z int, ts timestamp, dt date, ok bool"


@pytest.fixture(scope="module")
def star(db, module_scratch):
    d = module_scratch
    n = 60_000
    fact = pa.table({"k": pa.array([None if i % 53 == 0 else (i * 7) % (NDIM + 40)
                                    for i in range(n)], pa.int32()),
                     "v": pa.array([i % 1000 for i in range(n)], pa.int64())})
    dim = dim_table()
    write_arrow(os.path.join(d, "fact.arrow"), fact, 25_000)
    write_arrow(os.path.join(d, "dim.arrow"), dim, 1100)
    db.prepare_threshold = None     # the tests DEALLOCATE ALL
    db.execute("CREATE EXTENSION IF NOT EXISTS pg_warp")
    db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % SCHEMA)
    db.execute("CREATE SCHEMA %s" % SCHEMA)
    db.execute("CREATE FOREIGN TABLE %s.fact (k int, v bigint) SERVER arrow_fdw "
               "OPTIONS (file '%s')" % (SCHEMA, os.path.join(d, "fact.arrow")))
    db.execute("CREATE FOREIGN TABLE %s.dim (%s) SERVER arrow_fdw OPTIONS (file '%s')"
               % (SCHEMA, DIM_COLS, os.path.join(d, "dim.arrow")))
    db.execute("CREATE TABLE %s.fact_h (k int, v bigint)" % SCHEMA)
    db.execute("CREATE TABLE %s.dim_h (%s)" % (SCHEMA, DIM_COLS))
    for name, table in (("fact_h", fact), ("dim_h", dim.cast(pa.schema(
            [f.with_type(pa.string()) if pa.types.is_dictionary(f.type) else f
             for f in dim.schema])))):
        csv = os.path.join(d, name + ".csv")
        pacsv.write_csv(table, csv)
        os.chmod(csv, 0o644)
        db.execute("COPY %s.%s FROM '%s' WITH (FORMAT csv, HEADER true)" % (SCHEMA, name, csv))
    for t in ("fact", "dim", "fact_h", "dim_h"):
        db.execute("ANALYZE %s.%s" % (SCHEMA, t))
    db.execute("SET pg_warp.mode = cpu")
    db.execute("SET max_parallel_workers_per_gather = 0")
    db.execute("SET search_path = %s, public" % SCHEMA)
    yield db
    for s in ("pg_warp.mode", "max_parallel_workers_per_gather", "search_path",
              "pg_warp.enable_dim_scan"):
        db.execute("RESET " + s)
    db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % SCHEMA)


def run(db, sql):
    try:
        return ("ok", sorted(db.execute(sql).fetchall(), key=repr))
    except psycopg.Error as e:
        return ("error", e.sqlstate)


def fresh(db, dim_scan):
    """a new connection with db's settings: the dimension cache is per
    backend, so a second run in one session would read the first's table"""
    conn = psycopg.connect(pg_dsn(), autocommit=True)
    conn.prepare_threshold = None
    for s in ("pg_warp.mode", "max_parallel_workers_per_gather", "search_path",
              "pg_warp.cpu_threads", "parallel_setup_cost", "parallel_tuple_cost",
              "min_parallel_table_scan_size", "plan_cache_mode"):
        conn.execute("SELECT set_config(%s, %s, false)", (s, db.execute("SHOW " + s).fetchone()[0]))
    conn.execute("SET pg_warp.enable_dim_scan = %s" % ("on" if dim_scan else "off"))
    return conn


def warp_run(db, sql, dim_scan, node):
    """(result, dimensions the engine read) with pg_warp on, each from a
    backend whose dimension cache is empty"""
    with fresh(db, dim_scan) as conn:
        res = run(conn, sql)
    with fresh(db, dim_scan) as conn:
        try:
            plan = "\n".join(r[0] for r in conn.execute("EXPLAIN (ANALYZE, COSTS OFF) " + sql))
        except psycopg.Error:
            plan = "\n".join(r[0] for r in conn.execute("EXPLAIN (COSTS OFF) " + sql))
            assert node in plan, plan
            return res, None
    assert node in plan, plan
    assert re.search(r"Dimensions From Cache: 0", plan), plan
    m = re.search(r"Dimensions Read by Engine: (\d+)", plan)
    assert m, plan
    return res, int(m.group(1))


def oracle(db, sql):
    db.execute("SET pg_warp.enabled = off")
    try:
        return run(db, sql.replace("fact ", "fact_h ").replace("dim ", "dim_h "))
    finally:
        db.execute("RESET pg_warp.enabled")


def check(db, sql, engine_reads, node="WarpPreAgg", expect_error=None):
    want = oracle(db, sql)
    if expect_error:
        assert want == ("error", expect_error), "the oracle did not fail: %r" % (want,)
    else:
        assert want[0] == "ok" and want[1], "the oracle returned nothing to compare: %r" % (want,)
    on, reads_on = warp_run(db, sql, True, node)
    off, reads_off = warp_run(db, sql, False, node)
    assert on == want, "enable_dim_scan on:\n%s\n%r\n%r" % (sql, on[:20], want[1][:20])
    assert off == want, "enable_dim_scan off:\n%s" % sql
    if reads_on is not None:
        assert reads_on == engine_reads, sql
        assert reads_off == 0, sql


GROUPED = "SELECT {keys}, count(*), sum(f.v) FROM fact f JOIN dim d ON f.k = d.id {where} GROUP BY {keys}"


@pytest.mark.parametrize("keys,where", [
    ("d.grp", "WHERE d.grp = 'g1'"),
    ("d.grp", ""),                                     # no qual: every row
    ("d.cat", "WHERE d.w IN (1, 3, 5, 7) OR d.name LIKE 'n1%'"),
    ("d.cat, d.grp", "WHERE d.w BETWEEN 10 AND 30 AND d.z IS NOT NULL"),
    ("d.name", "WHERE d.z < 3"),                       # many payloads
    ("d.grp", "WHERE d.ts >= '1970-02-01' AND d.w <> 4"),
    ("d.grp", "WHERE d.z <> 0 AND 100 / d.z > 1"),     # the zeros dropped first
    ("d.cat", "WHERE d.grp IS NOT NULL AND d.w < 30"),  # a text column's null test
    ("d.cat", "WHERE d.grp IS NULL OR d.cat IS NULL"),
    ("d.dt, d.ok", "WHERE d.w < 40"),                  # date and bool payloads
    ("d.ts", "WHERE d.z < 4"),                         # timestamp payloads
])
def test_engine_reads_the_dimension(star, keys, where):
    check(star, GROUPED.format(keys=keys, where=where), engine_reads=1)


@pytest.mark.parametrize("where", [
    "grp IS NULL", "grp IS NOT NULL AND cat = 'c1'", "cat IS NULL", "NOT (grp IS NULL)",
    "name IS NOT NULL AND grp IS NULL",
])
def test_text_null_tests_in_the_engine(star, where):
    """IS [NOT] NULL of a text column (plain and dictionary-encoded) is an
    engine filter, on a fact table too"""
    db = star
    sql = "SELECT count(*), sum(w) FROM dim WHERE " + where
    want = oracle(db, sql)
    assert want[0] == "ok", want
    # a small table: costs that make any scan worth offloading (plan choice
    # only, as test_engine_targeted.py does)
    db.execute("SET cpu_tuple_cost = 10000")
    db.execute("SET cpu_operator_cost = 2500")
    try:
        plan = "\n".join(r[0] for r in db.execute("EXPLAIN (COSTS OFF) " + sql))
        got = run(db, sql)
    finally:
        db.execute("RESET cpu_tuple_cost")
        db.execute("RESET cpu_operator_cost")
    assert "WarpPreAgg" in plan and "Engine Filter" in plan and "NULL" in plan, plan
    assert got == want


def test_empty_dimension(star):
    check(star, "SELECT count(*), sum(f.v) FROM fact f JOIN dim d ON f.k = d.id "
          "WHERE d.grp = 'nothing'", engine_reads=1)


def test_division_by_zero_is_postgresql_s(star):
    """the engine gives the batch up; PostgreSQL's quals raise the error"""
    check(star, GROUPED.format(keys="d.grp", where="WHERE 100 / d.z > 1"), engine_reads=1,
          expect_error="22012")


def test_qual_the_engine_does_not_compute(star):
    """upper() is PostgreSQL's: that dimension goes through its executor"""
    check(star, GROUPED.format(keys="d.grp", where="WHERE upper(d.name) = 'N12'"),
          engine_reads=0)


def test_rows_without_aggregation(star):
    check(star, "SELECT f.v, d.grp, d.cat FROM fact f JOIN dim d ON f.k = d.id "
          "WHERE d.w = 3 AND d.cat <> 'c2'", engine_reads=1, node="WarpJoin")


def test_generic_plan_parameter(star):
    db = star
    db.execute("SET plan_cache_mode = force_generic_plan")
    try:
        sql = GROUPED.format(keys="d.grp", where="WHERE d.w < $1 AND d.grp <> $2")
        for dim_scan in ("on", "off"):
            db.execute("SET pg_warp.enable_dim_scan = " + dim_scan)
            db.execute("DEALLOCATE ALL")
            db.execute("PREPARE q(int, text) AS " + sql)
            for args in ("(10, 'g2')", "(40, 'g0')", "(0, 'g1')"):
                got = run(db, "EXECUTE q" + args)
                want = oracle(db, sql.replace("$1", args[1:-1].split(",")[0]).replace(
                    "$2", args[1:-1].split(",")[1]))
                assert got == want, (dim_scan, args)
            # executed before with these values: from the cache (the
            # parameter values are part of its key) ...
            plan = "\n".join(r[0] for r in db.execute("EXPLAIN (ANALYZE) EXECUTE q(10, 'g2')"))
            assert "WarpPreAgg" in plan and "Dimensions From Cache: 1" in plan, plan
            # ... and without the cache, read by the engine when it may
            db.execute("SET pg_warp.dim_cache_mem = 0")
            plan = "\n".join(r[0] for r in db.execute("EXPLAIN (ANALYZE) EXECUTE q(10, 'g2')"))
            db.execute("RESET pg_warp.dim_cache_mem")
            assert "WarpPreAgg" in plan, plan
            assert re.search(r"Dimensions Read by Engine: %d" % (1 if dim_scan == "on" else 0),
                             plan), plan
    finally:
        db.execute("DEALLOCATE ALL")
        db.execute("RESET plan_cache_mode")
        db.execute("RESET pg_warp.dim_cache_mem")


def test_parallel_workers(star):
    """under Gather the leader builds the dimension before the workers start"""
    db = star
    settings = ["max_parallel_workers_per_gather = 2", "parallel_setup_cost = 0",
                "parallel_tuple_cost = 0", "min_parallel_table_scan_size = 0",
                "pg_warp.cpu_threads = 1"]
    for s in settings:
        db.execute("SET " + s)
    try:
        check(db, GROUPED.format(keys="d.cat", where="WHERE d.w < 20"), engine_reads=1)
    finally:
        for s in settings:
            db.execute("RESET " + s.split(" =")[0])
        db.execute("SET max_parallel_workers_per_gather = 0")


# ------------------------------------------------ a dimension of big batches

NBIG = 40_000   # below the fact table's 60,000 rows: a dimension


@pytest.fixture(scope="module")
def big(star, module_scratch):
    """bigdim: two batches of 20,000 rows (each filtered on 4 threads),
    z = 0 only at row 37,000 (in the second batch's last thread's range)"""
    db = star
    d = module_scratch
    dim = pa.table({
        "id": pa.array([i % NDIM if i % 3 else None for i in range(NBIG)], pa.int32()),
        "mf": pa.array(["MFGR#%d" % (i % 5) for i in range(NBIG)]),
        "cat": pa.array(["c%d" % (i % 9) for i in range(NBIG)]),
        "z": pa.array([0 if i == 37_000 else 1 + i % 300 for i in range(NBIG)], pa.int32()),
    })
    write_arrow(os.path.join(d, "bigdim.arrow"), dim, 20_000)
    cols = "id int, mf text, cat text, z int"
    db.execute("CREATE FOREIGN TABLE bigdim (%s) SERVER arrow_fdw OPTIONS (file '%s')"
               % (cols, os.path.join(d, "bigdim.arrow")))
    db.execute("CREATE TABLE bigdim_h (%s)" % cols)
    csv = os.path.join(d, "bigdim.csv")
    pacsv.write_csv(dim, csv)
    os.chmod(csv, 0o644)
    db.execute("COPY bigdim_h FROM '%s' WITH (FORMAT csv, HEADER true)" % csv)
    db.execute("ANALYZE bigdim")
    db.execute("ANALYZE bigdim_h")
    db.execute("SET pg_warp.cpu_threads = 4")
    yield db
    db.execute("RESET pg_warp.cpu_threads")


BIG = ("SELECT b.cat, count(*), sum(f.v) FROM fact f JOIN bigdim b ON f.k = b.id "
       "WHERE {where} GROUP BY b.cat")


def big_oracle(db, sql):
    return oracle(db, sql.replace("bigdim ", "bigdim_h "))


def check_big(db, sql, expect_error=None):
    want = big_oracle(db, sql)
    if expect_error:
        assert want == ("error", expect_error), want
    else:
        assert want[0] == "ok" and want[1], want
    for dim_scan in (True, False):
        got, reads = warp_run(db, sql, dim_scan, "WarpPreAgg")
        assert got == want, (dim_scan, sql)
        if reads is not None:
            assert reads == (1 if dim_scan else 0), (dim_scan, sql)


@pytest.mark.parametrize("where", [
    "b.mf = 'MFGR#1' OR b.mf = 'MFGR#3'",
    "b.mf IN ('MFGR#0', 'MFGR#4') AND b.z > 150",
    "b.z <> 0 AND 300 / b.z = 1",                 # the zero dropped first
])
def test_big_batches_on_threads(big, where):
    check_big(big, BIG.format(where=where))


def test_big_batch_error_is_postgresql_s(big):
    """the thread whose range holds row 37,000 fails: PostgreSQL's quals
    take the batch and raise the division by zero"""
    check_big(big, BIG.format(where="b.mf <> 'MFGR#9' AND 300 / b.z > 1"),
              expect_error="22012")


def test_no_gather_below_the_engine(big):
    """with parallel plans cheap, PostgreSQL's cheapest plan for the
    dimension is a Gather; the star takes the dimension's serial scan
    instead, which the engine reads itself"""
    db = big
    settings = ["max_parallel_workers_per_gather = 2", "parallel_setup_cost = 0",
                "parallel_tuple_cost = 0", "min_parallel_table_scan_size = 0"]
    for s in settings:
        db.execute("SET " + s)
    try:
        sql = BIG.format(where="b.mf = 'MFGR#2'")
        plans = {}
        for dim_scan in ("on", "off"):
            db.execute("SET pg_warp.enable_dim_scan = " + dim_scan)
            plans[dim_scan] = "\n".join(r[0] for r in db.execute("EXPLAIN (COSTS OFF) " + sql))
        assert "WarpPreAgg" in plans["off"] and "Gather" in plans["off"], \
            "the case needs a Gather below the engine when it does not read dimensions:\n" + plans["off"]
        assert "WarpPreAgg" in plans["on"] and "Gather" not in plans["on"], plans["on"]
        check_big(db, sql)
    finally:
        for s in settings:
            db.execute("RESET " + s.split(" =")[0])
        db.execute("SET max_parallel_workers_per_gather = 0")


def test_dimension_of_two_files(star, module_scratch):
    """a dimension over two files (arrow_fdw's files option; one schema), the
    second with w all NULL: batches of both files, in order"""
    db = star
    d = module_scratch
    a = pa.table({"id": pa.array(range(0, 1500), pa.int32()),
                  "grp": pa.array(["g%d" % (i % 6) for i in range(1500)]),
                  "w": pa.array([i % 50 for i in range(1500)], pa.int32())})
    b = pa.table({"id": pa.array(range(1500, 2900), pa.int32()),
                  "grp": pa.array(["g%d" % (i % 4) for i in range(1400)]),
                  "w": pa.array([None] * 1400, pa.int32())})
    fa, fb = os.path.join(d, "two_a.arrow"), os.path.join(d, "two_b.arrow")
    write_arrow(fa, a, 700)
    write_arrow(fb, b, 700)
    db.execute("CREATE FOREIGN TABLE twodim (id int, grp text, w int) SERVER arrow_fdw "
               "OPTIONS (files '%s,%s')" % (fa, fb))
    db.execute("CREATE TABLE twodim_h (id int, grp text, w int)")
    rows = [(i, "g%d" % (i % 6), i % 50) for i in range(1500)] + \
        [(1500 + i, "g%d" % (i % 4), None) for i in range(1400)]
    with db.cursor().copy("COPY twodim_h FROM STDIN") as cp:
        for r in rows:
            cp.write_row(r)
    db.execute("ANALYZE twodim")
    db.execute("ANALYZE twodim_h")
    q = ("SELECT t.grp, count(*), sum(f.v) FROM fact f JOIN twodim t ON f.k = t.id "
         "WHERE {where} GROUP BY t.grp")
    for where, reads in (("t.grp <> 'g1'", 1), ("t.w < 10 OR t.grp = 'g3'", 1),
                         ("t.id > 100", 1)):
        sql = q.format(where=where)
        want = oracle(db, sql.replace("twodim ", "twodim_h "))
        assert want[0] == "ok" and want[1], want
        for dim_scan in (True, False):
            got, n = warp_run(db, sql, dim_scan, "WarpPreAgg")
            assert got == want, (where, dim_scan, got, want)
            assert n == (reads if dim_scan else 0), (where, dim_scan)


def test_text_and_two_column_keys(star, module_scratch):
    """Join keys read from the batches without Datums: a text key (plain and
    dictionary-encoded, repeated across batches, NULL, duplicate strings:
    each new string goes through its Datum once, later rows find it by its
    bytes) and a key of two columns (int4, int2) packed into one integer"""
    db = star
    d = module_scratch
    n = 20_000
    codes = ["k%03d" % (i % 400) for i in range(n)]
    fact = pa.table({"tk": pa.array([None if i % 61 == 0 else c for i, c in enumerate(codes)]),
                     "a": pa.array([i % 37 for i in range(n)], pa.int32()),
                     "b": pa.array([None if i % 89 == 0 else (i % 11) - 5 for i in range(n)],
                                   pa.int16()),
                     "v": pa.array([i % 997 for i in range(n)], pa.int64())})
    m = 1200
    tdim = pa.table({"code": pa.array([None if i % 50 == 7 else "k%03d" % (i % 450)
                                       for i in range(m)]),
                     "grp": pa.array(["g%d" % (i % 5) for i in range(m)]),
                     "w": pa.array([i % 30 for i in range(m)], pa.int32())})
    pdim = pa.table({"a": pa.array([None if i % 97 == 3 else i % 40 for i in range(m)], pa.int32()),
                     "b": pa.array([(i // 40) % 12 - 6 for i in range(m)], pa.int16()),
                     "grp": pa.array(["p%d" % (i % 6) for i in range(m)])})
    files = {"tfact": fact, "tdim": tdim, "pdim": pdim,
             "tdimd": tdim.set_column(0, "code", tdim.column("code").dictionary_encode())}
    cols = {"tfact": "tk text, a int, b smallint, v bigint", "tdim": "code text, grp text, w int",
            "tdimd": "code text, grp text, w int", "pdim": "a int, b smallint, grp text"}
    for name, table in files.items():
        path = os.path.join(d, name + ".arrow")
        write_arrow(path, table, 300 if name != "tfact" else 5000)
        db.execute("CREATE FOREIGN TABLE %s (%s) SERVER arrow_fdw OPTIONS (file '%s')"
                   % (name, cols[name], path))
        db.execute("CREATE TABLE %s_h (%s)" % (name, cols[name]))
        plain = table.cast(pa.schema([f.with_type(pa.string()) if pa.types.is_dictionary(f.type)
                                      else f for f in table.schema]))
        csv = os.path.join(d, name + ".csv")
        pacsv.write_csv(plain, csv)
        os.chmod(csv, 0o644)
        db.execute("COPY %s_h FROM '%s' WITH (FORMAT csv, HEADER true)" % (name, csv))
        db.execute("ANALYZE %s" % name)
        db.execute("ANALYZE %s_h" % name)
    queries = [
        "SELECT t.grp, count(*), sum(f.v) FROM tfact f JOIN tdim t ON f.tk = t.code "
        "WHERE t.w < 20 GROUP BY t.grp",
        "SELECT t.grp, count(*), sum(f.v) FROM tfact f JOIN tdimd t ON f.tk = t.code "
        "WHERE t.grp <> 'g2' GROUP BY t.grp",
        "SELECT t.code, count(*) FROM tfact f JOIN tdim t ON f.tk = t.code GROUP BY t.code",
        "SELECT p.grp, count(*), sum(f.v) FROM tfact f JOIN pdim p ON f.a = p.a AND f.b = p.b "
        "WHERE p.grp <> 'p4' GROUP BY p.grp",
    ]
    for sql in queries:
        want = oracle(db, sql.replace("tfact ", "tfact_h ").replace("tdim ", "tdim_h ")
                      .replace("tdimd ", "tdimd_h ").replace("pdim ", "pdim_h "))
        assert want[0] == "ok" and len(want[1]) > 1, (sql, want)
        for dim_scan in (True, False):
            got, reads = warp_run(db, sql, dim_scan, "WarpPreAgg")
            assert got == want, (sql, dim_scan, got[:5], want[1][:5])
            assert reads == (1 if dim_scan else 0), (sql, dim_scan)


def test_text_key_not_utf8_is_postgresql_s_error(star, module_scratch):
    """a text key that is not valid text (a NUL byte) raises 22021 from the
    engine's raw key read, as the conversion to text does with the engine
    read off"""
    db = star
    path = os.path.join(module_scratch, "badkey.arrow")
    keys = ["k%03d" % i for i in range(600)]
    keys[450] = "k\x00bad"
    write_arrow(path, pa.table({"code": pa.array(keys), "grp": pa.array(["g"] * 600)}), 200)
    db.execute("CREATE FOREIGN TABLE badkey (code text, grp text) SERVER arrow_fdw "
               "OPTIONS (file '%s')" % path)
    fpath = os.path.join(module_scratch, "badfact.arrow")
    write_arrow(fpath, pa.table({"tk": pa.array(["k%03d" % (i % 700) for i in range(5000)]),
                                 "v": pa.array(range(5000), pa.int64())}), 2500)
    db.execute("CREATE FOREIGN TABLE badfact (tk text, v bigint) SERVER arrow_fdw "
               "OPTIONS (file '%s')" % fpath)
    db.execute("ANALYZE badfact")
    sql = "SELECT b.grp, count(*) FROM badfact f JOIN badkey b ON f.tk = b.code GROUP BY b.grp"
    for dim_scan in (True, False):
        got, _ = warp_run(db, sql, dim_scan, "WarpPreAgg")
        assert got == ("error", "22021"), (dim_scan, got)
