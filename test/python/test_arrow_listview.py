"""ListView and LargeListView columns (recent pyarrow, Polars) read as lists:
`pgwarp cat` and arrow_fdw give what pyarrow reads from the same file,
nested and compressed included; views out of row order are refused with
feature_not_supported naming the file and offset, views past their child
are data_corrupted."""
import os
import random

import psycopg
import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

from pwhelpers import assert_rows_match, cat_rows, parse_cat


def ql(s):
    return "'" + s.replace("'", "''") + "'"


def write(path, table, codec=None, chunk=None):
    with ipc.new_file(path, table.schema, options=ipc.IpcWriteOptions(compression=codec)) as w:
        w.write_table(table, max_chunksize=chunk)
    os.chmod(path, 0o644)
    return path


def as_lists(t):
    """pyarrow's values with list types for list view types (what the
    reader presents), for the cat comparison."""
    def conv(ty):
        if pa.types.is_list_view(ty):
            return pa.list_(conv(ty.value_type))
        if pa.types.is_large_list_view(ty):
            return pa.large_list(conv(ty.value_type))
        if pa.types.is_struct(ty):
            return pa.struct([pa.field(f.name, conv(f.type), f.nullable) for f in ty])
        return ty
    return pa.table({n: pa.array(t.column(n).to_pylist(), conv(t.column(n).type))
                     for n in t.column_names})


def oracle_rows(path):
    f = ipc.open_file(path)
    return cat_rows([as_lists(pa.Table.from_batches([f.get_batch(i)])).to_batches()[0]
                     for i in range(f.num_record_batches) if f.get_batch(i).num_rows])


def lists(n, seed):
    rnd = random.Random(seed)
    return [None if i % 9 == 4 else [None if j % 5 == 3 else rnd.randint(-999, 999)
                                     for j in range(i % 6)] for i in range(n)]


def view_table(n=3000):
    li = lists(n, 1)
    return pa.table({
        "k": pa.array(range(n), pa.int32()),
        "lv": pa.array(li, pa.list_view(pa.int32())),
        "llv": pa.array(lists(n, 2), pa.large_list_view(pa.int64())),
        "slv": pa.array([None if v is None else ["s%d" % x if x is not None else None
                                                 for x in v] for v in li],
                        pa.list_view(pa.string())),
        "st": pa.array([{"a": v} for v in li], pa.struct([("a", pa.list_view(pa.int32()))])),
    })


@pytest.mark.parametrize("codec", [None, "zstd"])
def test_list_views_like_pyarrow(pgwarp, scratch, codec):
    t = view_table()
    path = write(os.path.join(scratch, "lv.arrow"), t, codec, chunk=700)
    res = pgwarp("cat", path)
    assert res.rc == 0, res.describe()
    assert_rows_match(oracle_rows(path), parse_cat(res.out), path)


def test_sliced_list_views(pgwarp, scratch):
    """Batches of a sliced table: views start past the child's beginning."""
    t = view_table(500).slice(37, 400)
    path = write(os.path.join(scratch, "slice.arrow"), t, chunk=90)
    res = pgwarp("cat", path)
    assert res.rc == 0, res.describe()
    assert_rows_match(oracle_rows(path), parse_cat(res.out), path)


@pytest.fixture
def schema(db):
    db.execute("CREATE EXTENSION IF NOT EXISTS pg_warp")
    db.execute("DROP SCHEMA IF EXISTS lv_t CASCADE")
    db.execute("CREATE SCHEMA lv_t")
    yield "lv_t"
    db.execute("DROP SCHEMA IF EXISTS lv_t CASCADE")


def test_list_views_through_the_fdw(db, scratch, schema):
    t = view_table(800)
    path = write(os.path.join(scratch, "lv.arrow"), t.select(["k", "lv", "llv"]), chunk=300)
    db.execute("IMPORT FOREIGN SCHEMA lv FROM SERVER arrow_fdw INTO %s OPTIONS (file %s)"
               % (schema, ql(path)))
    got = db.execute("SELECT k, lv, llv FROM %s.lv ORDER BY k" % schema).fetchall()
    want = list(zip(t.column("k").to_pylist(), t.column("lv").to_pylist(),
                    t.column("llv").to_pylist()))
    assert got == [tuple(r) for r in want]
    got = db.execute("SELECT sum(cardinality(lv)), count(lv) FROM %s.lv" % schema).fetchone()
    assert got == (sum(len(v) for v in t.column("lv").to_pylist() if v is not None),
                   sum(1 for v in t.column("lv").to_pylist() if v is not None))


def fdw_error(db, schema, name, path, sqlstate):
    """Reading the file through a table is an ERROR with sqlstate naming the
    file and an offset."""
    db.execute("CREATE FOREIGN TABLE %s.%s (lv int[]) SERVER arrow_fdw OPTIONS (file %s)"
               % (schema, name, ql(path)))
    with pytest.raises(psycopg.Error) as e:
        db.execute("SELECT * FROM %s.%s" % (schema, name)).fetchall()
    assert e.value.sqlstate == sqlstate, str(e.value)
    assert name + ".arrow" in str(e.value) and "offset" in str(e.value), str(e.value)


def test_out_of_order_views_refused(db, pgwarp, scratch, schema):
    values = pa.array([1, 2, 3, 4, 5, 6], pa.int32())
    arr = pa.ListViewArray.from_arrays(pa.array([3, 0, 1], pa.int32()),
                                       pa.array([3, 2, 1], pa.int32()), values)
    assert arr.to_pylist() == [[4, 5, 6], [1, 2], [2]]
    path = write(os.path.join(scratch, "ooo.arrow"), pa.table({"lv": arr}))
    res = pgwarp("cat", path)
    assert res.rc != 0
    assert "ooo.arrow" in res.err and "out of row order" in res.err, res.err
    fdw_error(db, schema, "ooo", path, "0A000")


def test_view_past_its_child_is_corrupt(db, pgwarp, scratch, schema):
    values = pa.array([1, 2, 3, 4, 5, 6], pa.int32())
    arr = pa.ListViewArray.from_arrays(pa.array([0, 2, 4], pa.int32()),
                                       pa.array([2, 2, 2], pa.int32()), values)
    path = write(os.path.join(scratch, "past.arrow"), pa.table({"lv": arr}))
    data = bytearray(open(path, "rb").read())
    # the sizes buffer: 2, 2, 2 as int32; make the last one 7
    pat = (2).to_bytes(4, "little") * 3
    at = data.find(pat)
    assert at > 0
    data[at + 8:at + 12] = (7).to_bytes(4, "little")
    open(path, "wb").write(bytes(data))
    res = pgwarp("cat", path)
    assert res.rc != 0 and "past.arrow" in res.err, res.err
    fdw_error(db, schema, "past", path, "XX001")
