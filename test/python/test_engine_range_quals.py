"""Two comparisons bounding one integer column (BETWEEN, or a pair of
range quals): the CPU driver tests them in one pass (filter_col_range in
src/engine/warp_cpu.c).  Every query runs through pg_warp and against
PostgreSQL with pg_warp off over a heap copy loaded from pyarrow's CSV;
the data has NULLs and the extremes of each width, the bounds include
empty ranges, NULL constants, strict and reversed comparisons and the
extremes of int8.
"""
import pyarrow as pa
import pytest

from test_engine_targeted import Star

I16 = (-32768, 32767)
I32 = (-2147483648, 2147483647)
I64 = (-9223372036854775808, 9223372036854775807)


def column(n, lo, hi, typ, seed):
    vals = []
    for i in range(n):
        r = (i * 2654435761 + seed) % 1000
        if r < 40:
            vals.append(None)
        elif r < 50:
            vals.append(lo)
        elif r < 60:
            vals.append(hi)
        else:
            vals.append((i * 7919 + seed) % 401 - 200)
    return pa.array(vals, typ)


@pytest.fixture(scope="module")
def tables(db):
    n = 30_000
    t = pa.table({"a": column(n, *I16, pa.int16(), 1),
                  "b": column(n, *I32, pa.int32(), 2),
                  "c": column(n, *I64, pa.int64(), 3),
                  "d": pa.array([(i * 31) % 401 - 200 for i in range(n)], pa.int32())})
    db.execute("CREATE EXTENSION IF NOT EXISTS pg_warp")
    star = Star(db, "range_quals").table(
        "r", [("a", "int2"), ("b", "int4"), ("c", "int8"), ("d", "int4")],
        arrow_table=t, batch_rows=7000)
    db.execute("SET pg_warp.mode = cpu")
    yield db, star
    db.execute("RESET pg_warp.mode")
    star.close()


WHERES = [
    "a BETWEEN -20 AND 30",
    "b BETWEEN -20 AND 30 AND d < 100",
    "c BETWEEN -20 AND 30",
    "d BETWEEN 10 AND 10",
    "d BETWEEN 30 AND -20",                       # empty
    "a > -5 AND a < 5",
    "5 > b AND -5 < b",                           # constants on the left
    "c >= -9223372036854775808 AND c <= 0",       # an int8 extreme as a bound
    "c > -9223372036854775807 AND c < 9223372036854775807",
    "c >= 9223372036854775807 AND c <= 9223372036854775807",
    "a BETWEEN -32768 AND 32767",
    "b > 2147483646 AND b <= 2147483647",
    # a NULL bound (a stable expression, folded at executor start): never true
    "d BETWEEN nullif(current_setting('pg_warp.mode'), current_setting('pg_warp.mode'))::int"
    " AND 5",
    "d >= -200 AND d <= 200 AND a BETWEEN 0 AND 100",
    "d < 0 AND b > 0 AND b < 100",                # the pair after another qual
    "b >= 10 AND c <= 10",                        # two columns: not a range
]


@pytest.mark.parametrize("where", WHERES)
def test_range_quals(tables, where):
    db, star = tables
    sql = "SELECT count(*), sum(a), sum(b), sum(c), sum(d) FROM {s}.r WHERE %s" % where
    plan = "\n".join(r[0] for r in db.execute("EXPLAIN " + sql.format(s=star.w)).fetchall())
    assert "WarpPreAgg" in plan, plan
    got = db.execute(sql.format(s=star.w)).fetchall()
    db.execute("SET pg_warp.enabled = off")
    want = db.execute(sql.format(s=star.h)).fetchall()
    db.execute("RESET pg_warp.enabled")
    assert got == want
