"""Parquet page indexes and Bloom filters.

Files written by pyarrow with write_page_index=True: their big row groups
are read as parts cut at page boundaries; every value must still be what
pyarrow reads (`pgwarp cat`, flat and nested columns, v1 and v2 pages,
dictionary and plain, several codecs), queries through the FDW, the CPU
engine and the daemon must give PostgreSQL's answer over a heap copy, and
EXPLAIN must show parts skipped by the pages' min/max.  Bloom filters
(pyarrow's bloom_filter_options, and DuckDB's COPY, which writes them by
default) must skip row groups for equalities on absent values and never
for present ones (a wrong hash would skip those and lose rows)."""
import datetime
import os
import random
import re

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from pwhelpers import assert_rows_match, cat_rows, parse_cat
from test_parquet_sql import MODES, run

SCHEMA = "pq_pi"
ROWS = 300_000
RG = 150_000


def fact_table(n=ROWS, seed=5):
    rnd = random.Random(seed)
    return pa.table({
        "k": pa.array(range(n), pa.int32()),
        "g": pa.array([rnd.randint(0, 9) for _ in range(n)], pa.int16()),
        "v": pa.array([None if i % 13 == 0 else rnd.randint(-10**9, 10**9) for i in range(n)],
                      pa.int64()),
        "dt": pa.array([datetime.date(2000, 1, 1) + datetime.timedelta(days=i // 300)
                        for i in range(n)], pa.date32()),
        "s": pa.array([None if i % 17 == 5 else "n%d" % rnd.randint(0, 5000) for i in range(n)]),
    })


def nested_table(n=140_000, seed=9):
    rnd = random.Random(seed)
    return pa.table({
        "id": pa.array(range(n), pa.int32()),
        "l": pa.array([None if i % 11 == 5 else [rnd.randint(-99, 99) for _ in range(i % 4)]
                       for i in range(n)], pa.list_(pa.int32())),
        "st": pa.array([None if i % 7 == 0 else {"a": i, "b": "x%d" % (i % 100)}
                        for i in range(n)], pa.struct([("a", pa.int64()), ("b", pa.string())])),
    })


def write(path, table, **kw):
    kw.setdefault("store_schema", False)
    pq.write_table(table, path, **kw)
    os.chmod(path, 0o644)
    return path


VARIANTS = [
    ("dict_small_pages", dict(compression="snappy", max_rows_per_page=3000)),
    ("plain_v2", dict(compression="zstd", use_dictionary=False, data_page_version="2.0")),
    ("default_pages", dict(compression="none")),
]


@pytest.mark.parametrize("variant", [v[0] for v in VARIANTS])
def test_parts_read_like_pyarrow(pgwarp, scratch, variant):
    path = write(os.path.join(scratch, "f.parquet"), fact_table(), row_group_size=RG,
                 write_page_index=True, **dict(VARIANTS)[variant])
    res = pgwarp("inspect", path)
    assert res.rc == 0, res.describe()
    # two row groups of 150,000 rows, each cut in two parts at least
    assert "2 row groups as" in res.out and "cut at page boundaries" in res.out, res.out
    oracle = pq.read_table(path)
    res = pgwarp("cat", path)
    assert res.rc == 0, res.describe()
    assert_rows_match(cat_rows(oracle.to_batches()), parse_cat(res.out), path)


@pytest.mark.parametrize("v2", [False, True])
def test_nested_parts(pgwarp, scratch, v2):
    path = write(os.path.join(scratch, "n.parquet"), nested_table(), row_group_size=140_000,
                 write_page_index=True, max_rows_per_page=2500,
                 data_page_version="2.0" if v2 else "1.0")
    oracle = pq.read_table(path)
    res = pgwarp("cat", path)
    assert res.rc == 0, res.describe()
    assert_rows_match(cat_rows(oracle.to_batches()), parse_cat(res.out), path)


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7f
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def test_bad_offset_index(pgwarp, scratch):
    """An OffsetIndex whose first page location is off by a few bytes: an
    error naming the file and an offset, not a crash or wrong values."""
    path = write(os.path.join(scratch, "b.parquet"), fact_table(n=140_000),
                 row_group_size=140_000, write_page_index=True, use_dictionary=False)
    rg = pq.ParquetFile(path).metadata.row_group(0)
    cc = rg.column(0)
    last = rg.column(rg.num_columns - 1)
    chunk_end = (last.dictionary_page_offset or last.data_page_offset) + last.total_compressed_size
    data = bytearray(open(path, "rb").read())
    # OffsetIndex: its list (field 1, 0x19) of PageLocations, the first's
    # field 1 an i64 (0x16): the zigzag varint offset of the first page
    old = varint(cc.data_page_offset * 2)
    m = re.compile(re.escape(b"\x19") + b"[\x1c-\xfc]" + re.escape(b"\x16" + old)).search(
        bytes(data), chunk_end)
    assert m is not None
    at = m.start() + 3
    new = varint((cc.data_page_offset + 3) * 2)
    assert len(new) == len(old)
    data[at:at + len(old)] = new
    bad = os.path.join(scratch, "bad.parquet")
    open(bad, "wb").write(data)
    os.chmod(bad, 0o644)
    res = pgwarp("cat", bad)
    assert res.rc != 0, res.describe()
    assert "bad.parquet" in res.err and "offset" in res.err, res.err


# ------------------------------------------------------------ SQL

COLS = "k int, g smallint, v bigint, dt date, s text"


@pytest.fixture(scope="module")
def tables(db, module_scratch):
    t = fact_table()
    paths = {}
    paths["pi"] = write(os.path.join(module_scratch, "fact_pi.parquet"), t, row_group_size=RG,
                        write_page_index=True, compression="snappy", max_rows_per_page=4000)
    paths["nopi"] = write(os.path.join(module_scratch, "fact_nopi.parquet"), t,
                          row_group_size=RG, compression="snappy")
    bt = t.take(pa.array(random.Random(1).sample(range(ROWS), ROWS)))
    paths["bloom"] = write(os.path.join(module_scratch, "fact_bloom.parquet"), bt,
                           row_group_size=30_000, compression="zstd",
                           bloom_filter_options={"k": {"ndv": 30_000, "fpp": 0.01},
                                                 "s": {"ndv": 5_000, "fpp": 0.01},
                                                 "dt": {"ndv": 1_000, "fpp": 0.01}})
    csv = os.path.join(module_scratch, "fact.csv")
    pacsv.write_csv(t, csv)
    os.chmod(csv, 0o644)
    db.execute("CREATE EXTENSION IF NOT EXISTS pg_warp")
    db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % SCHEMA)
    db.execute("CREATE SCHEMA %s" % SCHEMA)
    for name, p in paths.items():
        db.execute("CREATE FOREIGN TABLE %s.%s (%s) SERVER arrow_fdw OPTIONS (file '%s')"
                   % (SCHEMA, name, COLS, p))
    db.execute("CREATE TABLE %s.h (%s)" % (SCHEMA, COLS))
    db.execute("COPY %s.h FROM '%s' WITH (FORMAT csv, HEADER true)" % (SCHEMA, csv))
    db.execute("SET max_parallel_workers_per_gather = 0")
    yield db, paths
    db.execute("RESET max_parallel_workers_per_gather")
    db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % SCHEMA)


QUERIES = [
    "SELECT count(*), sum(v), min(s), max(dt) FROM {t}",
    "SELECT g, count(*), sum(v), max(s) FROM {t} GROUP BY g ORDER BY g",
    "SELECT k, v, s, dt FROM {t} WHERE k BETWEEN 123456 AND 123470 ORDER BY k",
    "SELECT count(*), sum(v) FROM {t} WHERE k >= 149990 AND k < 150020",
    "SELECT count(*), sum(v) FROM {t} WHERE dt = DATE '2001-06-01'",
    "SELECT count(*), sum(g) FROM {t} WHERE s = 'n77'",
    "SELECT count(*) FROM {t} WHERE k = 299999 OR k = 0",
]

@pytest.mark.parametrize("table", ["pi", "bloom"])
@pytest.mark.parametrize("mode", [m[0] for m in MODES])
@pytest.mark.parametrize("qi", range(len(QUERIES)))
def test_queries(tables, table, mode, qi):
    db, _ = tables
    q = QUERIES[qi]
    expect = run(db, ["SET pg_warp.enabled = off"], q.format(t="%s.h" % SCHEMA))
    got = run(db, dict(MODES)[mode], q.format(t="%s.%s" % (SCHEMA, table)))
    assert got == expect, (mode, q)


def explain(db, mode, sql):
    db.execute(dict(MODES)[mode][0])
    try:
        return "\n".join(r[0] for r in db.execute("EXPLAIN (ANALYZE, VERBOSE) " + sql).fetchall())
    finally:
        db.execute("RESET pg_warp.enabled")
        db.execute("RESET pg_warp.mode")


def batches(plan, what):
    for line in plan.splitlines():
        line = line.strip()
        if line.startswith(what + ":"):
            return int(line.split(":")[1].split()[0])
    raise AssertionError("no %s in\n%s" % (what, plan))


@pytest.mark.parametrize("mode", ["fdw", "cpu"])
def test_page_skipping_in_explain(tables, mode):
    """k is sorted: a narrow range reads one or two parts of one row group;
    without the page index the whole row group is read."""
    db, _ = tables
    sql = "SELECT count(*), sum(v) FROM %s.{t} WHERE k BETWEEN 70000 AND 70100" % SCHEMA
    plan = explain(db, mode, sql.format(t="pi"))
    assert "row groups as" in plan and "cut at page boundaries" in plan, plan
    read, skipped = batches(plan, "Batches Read"), batches(plan, "Batches Skipped")
    assert read <= 2 and skipped >= 2, plan
    plan = explain(db, mode, sql.format(t="nopi"))
    assert "row groups as batches" in plan, plan
    assert batches(plan, "Batches Read") == 1, plan


@pytest.mark.parametrize("mode", ["fdw", "cpu"])
def test_bloom_skipping(tables, mode):
    """The rows are shuffled, so min/max skip nothing; the Bloom filters skip
    the row groups that lack the value.  Present values are never skipped
    (the test_queries answers), absent ones inside the range nearly always."""
    db, paths = tables
    n_rg = pq.ParquetFile(paths["bloom"]).metadata.num_row_groups
    present = random.Random(4).sample(range(ROWS), 5)
    for k in present:
        got = run(db, dict(MODES)[mode], "SELECT count(*), max(k) FROM %s.bloom WHERE k = %d"
                  % (SCHEMA, k))
        assert got == [(1, k)], k
        plan = explain(db, mode, "SELECT count(*) FROM %s.bloom WHERE k = %d" % (SCHEMA, k))
        assert batches(plan, "Batches Read") >= 1, plan
    # absent strings (in the range of the column's min/max) and dates
    for sql in ("SELECT count(*) FROM %s.bloom WHERE s = 'n4999x'",
                "SELECT count(*) FROM %s.bloom WHERE s = 'n1000 '"):
        assert run(db, dict(MODES)[mode], sql % SCHEMA) == [(0,)]
        plan = explain(db, mode, sql % SCHEMA)
        assert batches(plan, "Batches Skipped") >= n_rg - 1, plan
    # present string: only row groups whose filter has it are read
    got = run(db, dict(MODES)[mode], "SELECT count(*) FROM %s.bloom WHERE s = 'n42'" % SCHEMA)
    expect = run(db, [], "SELECT count(*) FROM %s.h WHERE s = 'n42'" % SCHEMA)
    assert got == expect


def test_duckdb_bloom(db, scratch):
    """DuckDB's COPY writes Bloom filters for dictionary-encoded columns."""
    duckdb = pytest.importorskip("duckdb")
    path = os.path.join(scratch, "duck.parquet")
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT (i * 7919) % 100000 AS k, 'w' || (i % 3000) AS s "
                "FROM range(100000) r(i)")
    con.execute("COPY t TO '%s' (FORMAT parquet, ROW_GROUP_SIZE 20000)" % path)
    con.close()
    os.chmod(path, 0o644)
    md = pq.ParquetFile(path).metadata
    db.execute("CREATE EXTENSION IF NOT EXISTS pg_warp")
    db.execute("DROP FOREIGN TABLE IF EXISTS pq_duck_bloom")
    db.execute("CREATE FOREIGN TABLE pq_duck_bloom (k bigint, s text) SERVER arrow_fdw "
               "OPTIONS (file '%s')" % path)
    try:
        oracle = pq.read_table(path).to_pylist()
        for val in ("w17", "w2999", "w3000", "zz"):
            got = db.execute("SELECT count(*) FROM pq_duck_bloom WHERE s = %s", (val,)).fetchone()
            assert got == (sum(1 for r in oracle if r["s"] == val),), val
        plan = "\n".join(r[0] for r in db.execute(
            "EXPLAIN (ANALYZE) SELECT count(*) FROM pq_duck_bloom WHERE s = 'w1000x'").fetchall())
        assert batches(plan, "Batches Skipped") >= md.num_row_groups - 1, plan
    finally:
        db.execute("DROP FOREIGN TABLE IF EXISTS pq_duck_bloom")


def test_bloom_long_values(db, scratch):
    """Values of 32 bytes and more (XXH64's striped path) and 8-byte keys:
    present ones are found, absent ones skip every row group."""
    rnd = random.Random(8)
    n = 40_000
    keys = rnd.sample(range(10**12), n)
    t = pa.table({
        "id": pa.array(keys, pa.int64()),
        "ls": pa.array(["customer-%012d-%s" % (k, "y" * (k % 40)) for k in keys]),
    })
    path = write(os.path.join(scratch, "long.parquet"), t, row_group_size=5000,
                 bloom_filter_options={"id": {"ndv": 5000, "fpp": 0.01},
                                       "ls": {"ndv": 5000, "fpp": 0.01}})
    db.execute("CREATE EXTENSION IF NOT EXISTS pg_warp")
    db.execute("DROP FOREIGN TABLE IF EXISTS pq_long_bloom")
    db.execute("CREATE FOREIGN TABLE pq_long_bloom (id bigint, ls text) SERVER arrow_fdw "
               "OPTIONS (file '%s')" % path)
    try:
        for k in keys[::4001]:
            s = "customer-%012d-%s" % (k, "y" * (k % 40))
            got = db.execute("SELECT count(*), min(id) FROM pq_long_bloom WHERE ls = %s",
                             (s,)).fetchone()
            assert got == (1, k), s
            got = db.execute("SELECT count(*), min(ls) FROM pq_long_bloom WHERE id = %s",
                             (k,)).fetchone()
            assert got == (1, s), k
        absent = "customer-%012d-%s" % (1, "y" * 39)
        plan = "\n".join(r[0] for r in db.execute(
            "EXPLAIN (ANALYZE) SELECT count(*) FROM pq_long_bloom WHERE ls = '%s'"
            % absent).fetchall())
        assert batches(plan, "Batches Skipped") >= 7, plan
    finally:
        db.execute("DROP FOREIGN TABLE IF EXISTS pq_long_bloom")
