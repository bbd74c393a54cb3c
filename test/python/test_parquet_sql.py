"""arrow_fdw over Parquet files: IMPORT FOREIGN SCHEMA, scans, filters and
aggregates through pg_warp (CPU engine, and the daemon in CI where it serves
the cluster with its CPU driver) and through the plain FDW path, compared
with PostgreSQL (pg_warp off) over a heap copy loaded from pyarrow's reading
of the same file; row-group skipping from column statistics in EXPLAIN;
ANALYZE; a malformed file is an ERROR naming the file and an offset."""
import datetime
import decimal
import os
import random

import psycopg
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

SCHEMA = "pq_t"
ROWS = 40_000
RG = 5_000


def fact_table():
    rnd = random.Random(3)
    n = ROWS
    return pa.table({
        "k": pa.array(range(n), pa.int32()),
        "g": pa.array([rnd.randint(0, 20) for _ in range(n)], pa.int16()),
        "v": pa.array([None if i % 13 == 0 else rnd.randint(-10**9, 10**9) for i in range(n)],
                      pa.int64()),
        "f": pa.array([rnd.uniform(-100, 100) for _ in range(n)], pa.float64()),
        "d": pa.array([decimal.Decimal(rnd.randint(-10**6, 10**6)).scaleb(-2) for _ in range(n)],
                      pa.decimal128(10, 2)),
        "dt": pa.array([datetime.date(2000, 1, 1) + datetime.timedelta(days=i // 40)
                        for i in range(n)], pa.date32()),
        "ts": pa.array([datetime.datetime(2020, 1, 1) + datetime.timedelta(seconds=i * 17)
                        for i in range(n)], pa.timestamp("us")),
        "s": pa.array([None if i % 17 == 5 else "name%d" % rnd.randint(0, 300) for i in range(n)]),
    })


COLS = "k int, g smallint, v bigint, f float8, d numeric(10,2), dt date, ts timestamp, s text"


@pytest.fixture(scope="module")
def tables(db, module_scratch):
    t = fact_table()
    files = {}
    for codec in ("snappy", "zstd"):
        p = os.path.join(module_scratch, "fact_%s.parquet" % codec)
        pq.write_table(t, p, compression=codec, row_group_size=RG, store_schema=False,
                       data_page_version="2.0" if codec == "zstd" else "1.0")
        os.chmod(p, 0o644)
        files[codec] = p
    csv = os.path.join(module_scratch, "fact.csv")
    pacsv.write_csv(pq.read_table(files["snappy"]), csv)
    os.chmod(csv, 0o644)
    db.execute("CREATE EXTENSION IF NOT EXISTS pg_warp")
    db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % SCHEMA)
    db.execute("CREATE SCHEMA %s" % SCHEMA)
    db.execute("IMPORT FOREIGN SCHEMA fact_snappy FROM SERVER arrow_fdw INTO %s "
               "OPTIONS (file '%s')" % (SCHEMA, files["snappy"]))
    db.execute("CREATE FOREIGN TABLE %s.fact_zstd (%s) SERVER arrow_fdw OPTIONS (file '%s')"
               % (SCHEMA, COLS, files["zstd"]))
    db.execute("CREATE FOREIGN TABLE %s.fact_dir (%s) SERVER arrow_fdw "
               "OPTIONS (dir '%s', suffix '.parquet')" % (SCHEMA, COLS, module_scratch))
    db.execute("CREATE TABLE %s.fact_h (%s)" % (SCHEMA, COLS))
    db.execute("COPY %s.fact_h FROM '%s' WITH (FORMAT csv, HEADER true)" % (SCHEMA, csv))
    db.execute("SET max_parallel_workers_per_gather = 0")
    yield db, files
    db.execute("RESET max_parallel_workers_per_gather")
    db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % SCHEMA)


def test_import_types(tables):
    db, _ = tables
    got = db.execute(
        "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute "
        "WHERE attrelid = '%s.fact_snappy'::regclass AND attnum > 0 ORDER BY attnum" % SCHEMA
    ).fetchall()
    assert got == [("k", "integer"), ("g", "smallint"), ("v", "bigint"),
                   ("f", "double precision"), ("d", "numeric(10,2)"), ("dt", "date"),
                   ("ts", "timestamp without time zone"), ("s", "text")]


QUERIES = [
    "SELECT count(*), sum(v), min(v), max(v), sum(d), count(s), min(dt), max(ts) FROM {t}",
    "SELECT g, count(*), sum(v), avg(f)::numeric(20,6), sum(d), max(s) FROM {t} GROUP BY g ORDER BY g",
    "SELECT g, count(*) FROM {t} WHERE v > 0 AND d < 100 GROUP BY g ORDER BY g",
    "SELECT k, v, s, d, dt, ts FROM {t} WHERE k BETWEEN 12345 AND 12400 ORDER BY k",
    "SELECT count(*), sum(v) FROM {t} WHERE dt >= DATE '2001-06-01' AND dt < DATE '2001-09-01'",
    "SELECT count(*) FROM {t} WHERE v IS NULL",
    "SELECT s, count(*) FROM {t} WHERE s LIKE 'name1%' GROUP BY s ORDER BY s",
]

MODES = [("fdw", ["SET pg_warp.enabled = off"]),
         ("cpu", ["SET pg_warp.mode = cpu"]),
         ("gpud", ["SET pg_warp.mode = gpu"])]


def run(db, setup, sql):
    for s in setup:
        db.execute(s)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.execute("RESET pg_warp.enabled")
        db.execute("RESET pg_warp.mode")


@pytest.mark.parametrize("table", ["fact_snappy", "fact_zstd"])
@pytest.mark.parametrize("mode", [m[0] for m in MODES])
@pytest.mark.parametrize("qi", range(len(QUERIES)))
def test_queries(tables, table, mode, qi):
    db, _ = tables
    q = QUERIES[qi]
    expect = run(db, ["SET pg_warp.enabled = off"], q.format(t="%s.fact_h" % SCHEMA))
    got = run(db, dict(MODES)[mode], q.format(t="%s.%s" % (SCHEMA, table)))
    assert got == expect, (mode, q)


def test_dir_of_parquet_files(tables):
    db, _ = tables
    got = db.execute("SELECT count(*), sum(v) FROM %s.fact_dir" % SCHEMA).fetchone()
    one = db.execute("SELECT count(*), sum(v) FROM %s.fact_h" % SCHEMA).fetchone()
    assert got == (2 * one[0], 2 * one[1])


def test_row_group_skipping(tables):
    db, _ = tables
    db.execute("SET pg_warp.mode = cpu")
    try:
        plan = "\n".join(r[0] for r in db.execute(
            "EXPLAIN (ANALYZE, VERBOSE) SELECT count(*) FROM %s.fact_snappy WHERE k < 3000"
            % SCHEMA).fetchall())
        got = db.execute("SELECT count(*) FROM %s.fact_snappy WHERE k < 3000" % SCHEMA).fetchone()
    finally:
        db.execute("RESET pg_warp.mode")
    assert got == (3000,)
    assert "File Format: Parquet" in plan, plan
    # 8 row groups of 5000 rows: k < 3000 can only be in the first
    assert "Batches Skipped: 7" in plan, plan


def test_analyze(tables):
    db, _ = tables
    db.execute("ANALYZE %s.fact_snappy" % SCHEMA)
    n = db.execute("SELECT reltuples FROM pg_class WHERE oid = '%s.fact_snappy'::regclass"
                   % SCHEMA).fetchone()[0]
    assert n == ROWS


def test_bad_file_error(tables, module_scratch):
    db, files = tables
    data = open(files["snappy"], "rb").read()
    bad = os.path.join(module_scratch, "bad.parquet.x")
    with open(bad, "wb") as f:
        f.write(data[:-8] + (len(data) * 4).to_bytes(4, "little") + b"PAR1")
    os.chmod(bad, 0o644)
    # CREATE checks the file already
    with pytest.raises(psycopg.Error) as e:
        db.execute("CREATE FOREIGN TABLE %s.bad (%s) SERVER arrow_fdw OPTIONS (file '%s')"
                   % (SCHEMA, COLS, bad))
    assert e.value.sqlstate == "XX001", e.value
    assert bad in str(e.value) and "offset" in str(e.value), str(e.value)
    # a file that goes bad after CREATE
    with open(bad, "wb") as f:
        f.write(data)
    db.execute("CREATE FOREIGN TABLE %s.bad (%s) SERVER arrow_fdw OPTIONS (file '%s')"
               % (SCHEMA, COLS, bad))
    with open(bad, "wb") as f:
        f.write(data[:-8] + (len(data) * 4).to_bytes(4, "little") + b"PAR1")
    with pytest.raises(psycopg.Error) as e:
        db.execute("SELECT count(*) FROM %s.bad" % SCHEMA)
    assert e.value.sqlstate == "XX001", e.value
    assert bad in str(e.value) and "offset" in str(e.value), str(e.value)
    # a broken page header at the start of the first column chunk (page
    # data has no checksum in these files: flipped value bytes go unseen)
    b = bytearray(data)
    b[4:12] = b"\xff" * 8
    with open(bad, "wb") as f:
        f.write(bytes(b))
    for mode in MODES:
        with pytest.raises(psycopg.Error) as e:
            run(db, mode[1], "SELECT sum(k), sum(v), max(s) FROM %s.bad" % SCHEMA)
        assert bad in str(e.value), (mode, str(e.value))


def test_daemon_runs_parquet(tables):
    """pg_warp.mode = gpu: the daemon decodes the row groups on its loader
    threads (with the CPU driver in CI) and gives PostgreSQL's answer."""
    from pwhelpers import gpud_status
    db, _ = tables
    if gpud_status(db) is None:
        if os.environ.get("PGWARP_EXPECT_GPUD"):
            pytest.fail("pg_warp_gpud does not serve the test cluster")
        pytest.skip("no pg_warp_gpud serves this cluster")
    q = "SELECT g, count(*), sum(v), sum(d) FROM {t} WHERE k %% 3 = 1 GROUP BY g ORDER BY g"
    expect = run(db, ["SET pg_warp.enabled = off"], q.format(t="%s.fact_h" % SCHEMA) % ())
    db.execute("SET pg_warp.mode = gpu")
    try:
        sql = q.format(t="%s.fact_zstd" % SCHEMA) % ()
        plan = "\n".join(r[0] for r in db.execute("EXPLAIN (ANALYZE) " + sql).fetchall())
        got = db.execute(sql).fetchall()
    finally:
        db.execute("RESET pg_warp.mode")
    assert "pg_warp_gpud" in plan, plan
    assert got == expect


def test_insert_refused(tables, module_scratch):
    """A writable table over a Parquet file must not replace it with Arrow."""
    db, files = tables
    before = open(files["zstd"], "rb").read()
    with pytest.raises(psycopg.Error) as e:
        db.execute("CREATE FOREIGN TABLE %s.w (%s) SERVER arrow_fdw OPTIONS (file '%s', "
                   "writable 'true')" % (SCHEMA, COLS, files["zstd"]))
    assert e.value.sqlstate == "0A000", e.value
    assert open(files["zstd"], "rb").read() == before
