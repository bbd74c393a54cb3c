"""The planner's estimates for arrow_fdw tables that ANALYZE never sampled
(src/pg/fdw/arrow_fdw_stats.c): a database-wide ANALYZE skips foreign
tables, so their columns have no pg_statistic rows; the row count comes from
the footers, and range clauses and IS NULL are estimated from the footers'
per-batch min/max statistics and the batch headers' null counts instead of
PostgreSQL's defaults (a third of the rows for an inequality).  A file
without statistics gets the defaults, and a table analyzed by name uses
ANALYZE's rows."""
import json

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

N = 200000

# the column set the dump makes (true counts computed by PostgreSQL over the
# same generate_series)
SELECT = ("SELECT i::int8 AS id, (i %% 50 + 1)::int4 AS q, date '1992-01-01' + i / 100 AS d, "
          "(i * 0.01)::numeric(12,2) AS price, i::float8 / 7 AS f, "
          "CASE WHEN i %% 4 = 0 THEN NULL ELSE i END::int4 AS n, 'x' || i AS s "
          "FROM generate_series(0, %d) i" % (N - 1))

CLAUSES = [
    "id < 20000",
    "id BETWEEN 50000 AND 69999",
    "id >= 150000",
    "q <= 10",
    "d >= '1996-01-01'",
    "d < '1992-06-01'",
    "price > 1500",
    "f < 10000",
    "n < 100000",
    "n IS NULL",
    "n IS NOT NULL AND id < 100000",
]


def estimate(db, table, clause):
    plan = db.execute("EXPLAIN (FORMAT JSON) SELECT * FROM %s WHERE %s" % (table, clause)).fetchone()[0]
    if isinstance(plan, str):
        plan = json.loads(plan)
    return plan[0]["Plan"]["Plan Rows"]


def truth(db, clause):
    return db.execute("SELECT count(*) FROM (%s) t WHERE %s" % (SELECT, clause)).fetchone()[0]


def has_pg_stats(db, table):
    return db.execute("SELECT count(*) FROM pg_stats WHERE tablename = %s", (table,)).fetchone()[0] > 0


@pytest.fixture(scope="module")
def footer_tables(db, module_scratch, pgwarp, dsn):
    path = "%s/fs.arrow" % module_scratch
    rc, out, err = pgwarp("dump", "-d", dsn, "-c", SELECT, "-o", path, "--batch-rows", "20000", "--quiet")
    assert rc == 0, err
    # the same values without statistics (pyarrow writes none)
    plain = "%s/fs_plain.arrow" % module_scratch
    t = ipc.open_file(path).read_all()
    t = t.cast(pa.schema([f.remove_metadata() for f in t.schema]))
    with ipc.new_file(plain, t.schema) as w:
        w.write_table(t, max_chunksize=20000)
    cols = "id int8, q int4, d date, price numeric(12,2), f float8, n int4, s text"
    for name, p in (("fs", path), ("fs_an", path), ("fs_plain", plain)):
        db.execute("DROP FOREIGN TABLE IF EXISTS %s" % name)
        db.execute("CREATE FOREIGN TABLE %s (%s) SERVER arrow_fdw OPTIONS (file '%s')" % (name, cols, p))
    db.execute("SET pg_warp.enabled = off")
    yield module_scratch
    db.execute("RESET pg_warp.enabled")
    for name in ("fs", "fs_an", "fs_plain", "fs_w"):
        db.execute("DROP FOREIGN TABLE IF EXISTS %s" % name)


def test_database_wide_analyze_skips_foreign_tables(db, footer_tables):
    db.execute("ANALYZE")
    assert not has_pg_stats(db, "fs")


@pytest.mark.parametrize("clause", CLAUSES)
def test_estimates_from_footers_without_analyze(db, footer_tables, clause):
    assert not has_pg_stats(db, "fs")
    est, real = estimate(db, "fs", clause), truth(db, clause)
    # within 20% (or 1% of the table) of the true count; the defaults
    # (N/3 for an inequality, N/200 for IS NULL) miss every one of these
    assert abs(est - real) <= max(0.2 * real, 0.01 * N), (clause, est, real)


def test_row_count_from_footers(db, footer_tables):
    assert estimate(db, "fs", "true") == N


def test_no_statistics_in_file_keeps_defaults(db, footer_tables):
    # nothing is made up when the file has no min/max statistics
    assert estimate(db, "fs_plain", "id < 20000") == pytest.approx(N / 3, rel=0.01)
    # text columns have no statistics: the default for an inequality
    assert estimate(db, "fs", "s < 'x5'") == pytest.approx(N / 3, rel=0.01)


def test_analyze_by_name_is_used(db, footer_tables):
    db.execute("ANALYZE fs_an")
    assert has_pg_stats(db, "fs_an")
    for clause in ("id < 20000", "q <= 10", "n IS NULL"):
        est, real = estimate(db, "fs_an", clause), truth(db, clause)
        assert abs(est - real) <= max(0.2 * real, 0.01 * N), (clause, est, real)
    # ANALYZE adds what the footers do not have: distinct counts
    assert estimate(db, "fs_an", "q = 7") == pytest.approx(N / 50, rel=0.2)


def test_writable_table_uneven_batches(db, footer_tables):
    db.execute("CREATE FOREIGN TABLE fs_w (id int8) SERVER arrow_fdw "
               "OPTIONS (file '%s/fs_w.arrow', writable 'true')" % footer_tables)
    db.execute("INSERT INTO fs_w SELECT i FROM generate_series(1, 100000) i")
    db.execute("INSERT INTO fs_w SELECT i FROM generate_series(1, 10) i")
    # the 10-row batch weighs 10 rows, not half the table
    est = estimate(db, "fs_w", "id <= 50000")
    assert abs(est - 50010) <= 0.2 * 50010, est

