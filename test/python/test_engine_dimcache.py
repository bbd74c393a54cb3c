"""The dimension cache (src/pg/exec/warp_dimcache.c).

A backend keeps the dimension tables it built, keyed by the dimension's
plan and the identity of its Arrow files.  These tests run a star query
twice in one session and check that the second run takes its dimensions
from the cache and still answers what vanilla PostgreSQL answers; then
change the dimension's file (rewritten in place with other rows, replaced
by rename) or the query's filter, and check that the cache is not used for
what changed.  The oracle is PostgreSQL with pg_warp off over heap copies
loaded from pyarrow's CSV.
"""
import os
import re

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.ipc as ipc
import pytest

SCHEMA = "dimcache_t"


def write_arrow(path, table):
    tmp = path + ".tmp"
    with ipc.new_file(tmp, table.schema) as w:
        w.write_table(table)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def dim_table(shift):
    ks = list(range(60))
    return pa.table({"id": pa.array(ks, pa.int32()),
                     "grp": pa.array(["g%d" % ((k + shift) % 5) for k in ks]),
                     "w": pa.array([(k * 3 + shift) % 11 for k in ks], pa.int32())})


@pytest.fixture(scope="module")
def star(db, module_scratch):
    d = module_scratch
    n = 50_000
    fact = pa.table({"k": pa.array([(i * 7) % 64 for i in range(n)], pa.int32()),
                     "v": pa.array([i % 1000 for i in range(n)], pa.int64())})
    write_arrow(os.path.join(d, "fact.arrow"), fact)
    write_arrow(os.path.join(d, "dim.arrow"), dim_table(0))
    db.execute("CREATE EXTENSION IF NOT EXISTS pg_warp")
    db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % SCHEMA)
    db.execute("CREATE SCHEMA %s" % SCHEMA)
    db.execute("CREATE FOREIGN TABLE %s.fact (k int, v bigint) SERVER arrow_fdw "
               "OPTIONS (file '%s')" % (SCHEMA, os.path.join(d, "fact.arrow")))
    db.execute("CREATE FOREIGN TABLE %s.dim (id int, grp text, w int) SERVER arrow_fdw "
               "OPTIONS (file '%s')" % (SCHEMA, os.path.join(d, "dim.arrow")))
    db.execute("CREATE TABLE %s.fact_h (k int, v bigint)" % SCHEMA)
    db.execute("CREATE TABLE %s.dim_h (id int, grp text, w int)" % SCHEMA)
    csv = os.path.join(d, "fact.csv")
    pacsv.write_csv(fact, csv)
    os.chmod(csv, 0o644)
    db.execute("COPY %s.fact_h FROM '%s' WITH (FORMAT csv, HEADER true)" % (SCHEMA, csv))
    db.execute("ANALYZE %s.fact" % SCHEMA)
    db.execute("ANALYZE %s.dim" % SCHEMA)
    db.execute("SET pg_warp.mode = cpu")
    db.execute("SET max_parallel_workers_per_gather = 0")
    yield db, d
    db.execute("RESET pg_warp.mode")
    db.execute("RESET max_parallel_workers_per_gather")
    db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % SCHEMA)


def load_dim_heap(db, d, table):
    csv = os.path.join(d, "dim.csv")
    pacsv.write_csv(table, csv)
    os.chmod(csv, 0o644)
    db.execute("TRUNCATE %s.dim_h" % SCHEMA)
    db.execute("COPY %s.dim_h FROM '%s' WITH (FORMAT csv, HEADER true)" % (SCHEMA, csv))


QUERY = ("SELECT d.grp, count(*), sum(f.v) FROM {s}.{f} f JOIN {s}.{d} d ON f.k = d.id "
         "WHERE d.w < {w} GROUP BY 1 ORDER BY 1")


def warp(db, w=7):
    sql = QUERY.format(s=SCHEMA, f="fact", d="dim", w=w)
    plan = "\n".join(r[0] for r in db.execute("EXPLAIN (ANALYZE) " + sql).fetchall())
    assert "WarpPreAgg" in plan, plan
    m = re.search(r"Dimensions From Cache: (\d+)", plan)
    assert m, plan
    return db.execute(sql).fetchall(), int(m.group(1))


def oracle(db, w=7):
    db.execute("SET pg_warp.enabled = off")
    rows = db.execute(QUERY.format(s=SCHEMA, f="fact_h", d="dim_h", w=w)).fetchall()
    db.execute("RESET pg_warp.enabled")
    return rows


def test_second_run_uses_the_cache(star):
    db, d = star
    load_dim_heap(db, d, dim_table(0))
    first, _ = warp(db)
    again, cached = warp(db)
    assert cached == 1
    assert first == again == oracle(db)


def test_other_filter_is_another_entry(star):
    db, d = star
    warp(db)
    rows, cached = warp(db, w=3)
    assert cached == 0, "a different filter reused a cached dimension"
    assert rows == oracle(db, w=3)


def test_replaced_file_is_not_served_from_cache(star):
    db, d = star
    warp(db)
    warp(db)
    write_arrow(os.path.join(d, "dim.arrow"), dim_table(2))    # rename over it
    load_dim_heap(db, d, dim_table(2))
    rows, cached = warp(db)
    assert cached == 0, "a replaced dimension file was served from the cache"
    assert rows == oracle(db)
    rows, cached = warp(db)
    assert cached == 1
    assert rows == oracle(db)


def test_rewritten_in_place_is_not_served_from_cache(star):
    db, d = star
    path = os.path.join(d, "dim.arrow")
    warp(db)
    with ipc.new_file(path, dim_table(3).schema) as w:             # same inode
        w.write_table(dim_table(3))
    load_dim_heap(db, d, dim_table(3))
    rows, cached = warp(db)
    assert cached == 0, "a dimension file rewritten in place was served from the cache"
    assert rows == oracle(db)
