"""Arrow values other writers produce, read through declared types that can
hold them: every integer into numeric(p, s) with room for it (UInt64 into
numeric(20,0)), Duration into bigint (its count of the unit) as well as
interval, and nested values (lists of lists, structs, maps, fixed-size
lists, of any depth) into json and jsonb, which IMPORT FOREIGN SCHEMA picks
for ragged lists of lists.  The oracle is pyarrow: its to_pylist() values,
and for scans through pg_warp's engine, vanilla PostgreSQL over the same
values in a heap table."""
import datetime
import json
import os
from decimal import Decimal

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

psycopg = pytest.importorskip("psycopg")


def ql(s):
    return "'%s'" % s.replace("'", "''")


@pytest.fixture
def schema(db):
    db.execute("CREATE EXTENSION IF NOT EXISTS pg_warp")
    name = "interop_%d" % os.getpid()
    db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % name)
    db.execute("CREATE SCHEMA %s" % name)
    yield name
    db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % name)


def write(path, table, chunk=None):
    with ipc.new_file(path, table.schema) as w:
        w.write_table(table, max_chunksize=chunk)
    return path


def table_over(db, schema, name, cols, path):
    db.execute("CREATE FOREIGN TABLE %s.%s (%s) SERVER arrow_fdw OPTIONS (file %s)"
               % (schema, name, cols, ql(path)))


# ------------------------------------------------------ integers, numeric

U64 = [0, 1, 2**63 - 1, 2**63, 2**64 - 1, None, 12345678901234567890]


def test_uint64_into_numeric_with_room(db, scratch, schema):
    path = write(os.path.join(scratch, "u.arrow"),
                 pa.table({"u": pa.array(U64, pa.uint64()),
                           "i": pa.array([None if v is None else v % 2**31 - 2**30 for v in U64],
                                         pa.int32())}), chunk=3)
    table_over(db, schema, "u20", "u numeric(20,0), i numeric(12,2)", path)
    got = db.execute("SELECT u, i FROM %s.u20" % schema).fetchall()
    want = [(None if v is None else Decimal(v),
             None if v is None else Decimal(v % 2**31 - 2**30)) for v in U64]
    assert got == want
    # numeric(19,0) cannot hold 2^64 - 1: refused when declared, naming why
    with pytest.raises(psycopg.Error) as ei:
        table_over(db, schema, "u19", "u numeric(19,0)", path)
        db.execute("SELECT u FROM %s.u19" % schema).fetchall()
    assert ei.value.sqlstate == "HV004" and "cannot hold every value" in str(ei.value), ei.value


def test_uint64_numeric_through_the_engine(db, scratch, schema):
    n = 20000
    vals = [None if k % 17 == 0 else (k * 2654435761 * 7919) % 2**64 for k in range(n)]
    keys = [k % 7 for k in range(n)]
    path = write(os.path.join(scratch, "ue.arrow"),
                 pa.table({"k": pa.array(keys, pa.int32()), "u": pa.array(vals, pa.uint64())}),
                 chunk=4096)
    table_over(db, schema, "ue", "k integer, u numeric(20,0)", path)
    db.execute("CREATE TABLE %s.ue_h (k integer, u numeric(20,0))" % schema)
    with db.cursor().copy("COPY %s.ue_h FROM STDIN" % schema) as cp:
        for k, v in zip(keys, vals):
            cp.write_row((k, v))
    q = ("SELECT k, count(u), sum(u), min(u), max(u) FROM %s.{t} "
         "WHERE u > 9223372036854775807 GROUP BY k ORDER BY k" % schema)
    want = db.execute(q.format(t="ue_h")).fetchall()
    for mode in ("cpu", "auto"):
        with db.transaction():
            db.execute("SET LOCAL pg_warp.mode = %s" % mode)
            assert db.execute(q.format(t="ue")).fetchall() == want, mode


# ----------------------------------------------------------- durations

@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
def test_duration_into_bigint_and_interval(db, scratch, schema, unit):
    vals = [0, 1, -5, 86400 * 3 + 7, None, 2**40]
    path = write(os.path.join(scratch, "d_%s.arrow" % unit),
                 pa.table({"d": pa.array(vals, pa.duration(unit))}))
    table_over(db, schema, "dur_b", "d bigint", path)
    assert [r[0] for r in db.execute("SELECT d FROM %s.dur_b" % schema)] == vals
    want = (sum(v for v in vals if v is not None), 5, max(v for v in vals if v is not None))
    for mode in ("cpu", "auto"):
        with db.transaction():
            db.execute("SET LOCAL pg_warp.mode = %s" % mode)
            db.execute("SET LOCAL cpu_tuple_cost = 10000")
            assert db.execute("SELECT sum(d), count(d), max(d) FROM %s.dur_b WHERE d > -100"
                              % schema).fetchone() == want, mode
    table_over(db, schema, "dur_i", "d interval", path)
    per = {"s": 1, "ms": 1000, "us": 1000000, "ns": 1000000000}[unit]
    got = [r[0] for r in db.execute("SELECT extract(epoch FROM d) FROM %s.dur_i" % schema)]
    for v, g in zip(vals, got):
        if v is None:
            assert g is None
        elif unit == "ns":
            # nanoseconds round to PostgreSQL's microseconds
            assert abs(g - Decimal(v) / per) <= Decimal("0.000001")
        else:
            assert g == Decimal(v) / per
    # a Duration declared as anything else is refused, naming what it maps to
    with pytest.raises(psycopg.Error) as ei:
        table_over(db, schema, "dur_t", "d integer", path)
        db.execute("SELECT d FROM %s.dur_t" % schema).fetchall()
    assert ei.value.sqlstate == "HV004" and "bigint" in str(ei.value), ei.value


# -------------------------------------------------------- nested as JSON

def to_json_value(v):
    """pyarrow's to_pylist() value as PostgreSQL's to_json writes it"""
    if isinstance(v, dict):
        return {k: to_json_value(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [to_json_value(x) for x in v]
    if isinstance(v, bytes):
        return "\\x" + v.hex()
    if isinstance(v, datetime.datetime):
        return v.isoformat()
    if isinstance(v, datetime.date):
        return v.isoformat()
    if isinstance(v, float):
        return Decimal(repr(v))
    if isinstance(v, int) and not isinstance(v, bool):
        return Decimal(v)
    return v


def nested_table():
    ll = [[[1, 2], [3]], None, [[]], [], [[None, -7], None, [8, 9, 10]]]
    st = [{"a": 1, "b": "x", "c": [1.5, None]}, None, {"a": None, "b": "y\"q", "c": []},
          {"a": 4, "b": None, "c": None}, {"a": -1, "b": "ü", "c": [2.25]}]
    mp = [[("k1", 1), ("k2", None)], None, [], [("z", 26)], [("a", 0), ("a", 1)]]
    fsl = [[1, 2, 3], None, [4, None, 6], [0, 0, 0], [7, 8, 9]]
    deep = [{"xs": [{"d": datetime.date(2020, 1, 31), "v": Decimal("1.25")}],
             "ts": datetime.datetime(2021, 5, 6, 7, 8, 9)},
            None,
            {"xs": [], "ts": None},
            {"xs": [{"d": None, "v": Decimal("-0.50")}, None], "ts": datetime.datetime(1999, 12, 31)},
            {"xs": None, "ts": datetime.datetime(2000, 2, 29, 23, 59, 59)}]
    bins = [[b"\x00\xff", b""], None, [None], [b"abc"], []]
    return pa.table({
        "ll": pa.array(ll, pa.list_(pa.list_(pa.int64()))),
        "st": pa.array(st, pa.struct([("a", pa.int32()), ("b", pa.utf8()),
                                      ("c", pa.list_(pa.float64()))])),
        "mp": pa.array(mp, pa.map_(pa.utf8(), pa.int16())),
        "fsl": pa.array(fsl, pa.list_(pa.int32(), 3)),
        "deep": pa.array(deep, pa.struct([
            ("xs", pa.large_list(pa.struct([("d", pa.date32()), ("v", pa.decimal128(9, 2))]))),
            ("ts", pa.timestamp("s"))])),
        "bins": pa.array(bins, pa.list_(pa.binary())),
        "dl": pa.array([["x", "y"], None, ["y"], [], ["x", "x"]],
                       pa.list_(pa.dictionary(pa.int8(), pa.utf8()))),
    })


@pytest.mark.parametrize("jtype", ["json", "jsonb"])
def test_nested_values_as_json(db, scratch, schema, jtype):
    t = nested_table()
    path = write(os.path.join(scratch, "n.arrow"), t, chunk=2)
    cols = ", ".join("%s %s" % (c, jtype) for c in t.schema.names)
    table_over(db, schema, "nj", cols, path)
    got = db.execute("SELECT %s FROM %s.nj" % (", ".join("%s::text" % c for c in t.schema.names),
                                                schema)).fetchall()
    assert len(got) == t.num_rows
    for c, name in enumerate(t.schema.names):
        want = t.column(name).to_pylist()
        for r in range(t.num_rows):
            g = got[r][c]
            w = want[r]
            if w is None:
                assert g is None, (name, r, g)
                continue
            assert json.loads(g, parse_float=Decimal, parse_int=Decimal) == to_json_value(w), \
                (name, r, g, w)


def test_lists_of_lists_import_as_jsonb(db, scratch, schema):
    t = nested_table().select(["ll", "fsl"])
    path = write(os.path.join(scratch, "ll.arrow"), t)
    db.execute("IMPORT FOREIGN SCHEMA ll FROM SERVER arrow_fdw INTO %s OPTIONS (file %s)"
               % (schema, ql(path)))
    types = dict(db.execute(
        "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute "
        "WHERE attrelid = %s::regclass AND attnum > 0", ("%s.ll" % schema,)).fetchall())
    assert types == {"ll": "jsonb", "fsl": "integer[]"}, types
    got = [r[0] for r in db.execute("SELECT ll::text FROM %s.ll" % schema)]
    want = t.column("ll").to_pylist()
    assert [None if g is None else json.loads(g) for g in got] == want
    # jsonb operators work on them
    assert db.execute("SELECT count(*) FROM %s.ll WHERE ll @> '[[8]]'" % schema).fetchone()[0] == 1


def test_nested_json_refuses_what_has_no_json(db, scratch, schema):
    # a union inside a list has no PostgreSQL equivalent: refused, naming the column
    t = pa.table({"l": pa.array([[1]], pa.list_(pa.int64()))})
    path = write(os.path.join(scratch, "ok.arrow"), t)
    table_over(db, schema, "okj", "l jsonb", path)
    assert db.execute("SELECT l::text FROM %s.okj" % schema).fetchone()[0] == "[1]"
    with pytest.raises(psycopg.Error) as ei:
        table_over(db, schema, "badj", "l json[]", path)
        db.execute("SELECT l FROM %s.badj" % schema).fetchall()
    assert ei.value.sqlstate == "HV004" and '"l"' in str(ei.value), ei.value


# ------------------------------------------------------------ string views

def view_table(n=6000, seed=7):
    import random
    rnd = random.Random(seed)
    words = ["", "a", "twelve chars", "thirteen char", "é" * 7, "x" * 40, "long string %d"]
    vals = [None if k % 9 == 0 else rnd.choice(words).replace("%d", str(k % 50))
            for k in range(n)]
    return vals, pa.table({
        "k": pa.array(list(range(n)), pa.int32()),
        "s": pa.array(vals, pa.string_view()),
        "b": pa.array([None if v is None else v.encode() for v in vals], pa.binary_view()),
        "st": pa.array([None if k % 11 == 0 else {"x": v} for k, v in enumerate(vals)],
                       pa.struct([("x", pa.string_view())])),
    })


@pytest.mark.parametrize("codec", [None, "zstd", "lz4"])
@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_string_views(db, scratch, schema, codec, fmt):
    """Utf8View and BinaryView (what Polars and recent pyarrow write) read as
    text and bytea, also inside structs, compressed or not, in both IPC
    formats; the engine computes on them like on Utf8 columns."""
    vals, t = view_table()
    path = os.path.join(scratch, "v.arrow")
    opts = ipc.IpcWriteOptions(compression=codec)
    if fmt == "file":
        with ipc.new_file(path, t.schema, options=opts) as w:
            w.write_table(t, max_chunksize=1000)
    else:
        with ipc.new_stream(path, t.schema, options=opts) as w:
            w.write_table(t, max_chunksize=1000)
    db.execute("IMPORT FOREIGN SCHEMA v FROM SERVER arrow_fdw INTO %s OPTIONS (file %s)"
               % (schema, ql(path)))
    types = dict(db.execute(
        "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute "
        "WHERE attrelid = %s::regclass AND attnum > 0 AND attname IN ('s', 'b')",
        ("%s.v" % schema,)).fetchall())
    assert types == {"s": "text", "b": "bytea"}, types
    got = db.execute("SELECT k, s, b, (st).x FROM %s.v ORDER BY k" % schema).fetchall()
    want_st = t.column("st").to_pylist()
    assert got == [(k, v, None if v is None else v.encode(),
                    None if want_st[k] is None else want_st[k]["x"])
                   for k, v in enumerate(vals)]
    # the engine over them, against vanilla PostgreSQL over a heap copy
    db.execute("CREATE TABLE %s.vh AS SELECT k, s FROM %s.v" % (schema, schema))
    q = ("SELECT s, count(*), sum(k) FROM %s.{t} WHERE s <> 'a' OR k < 100 "
         "GROUP BY s ORDER BY s" % schema)
    want = db.execute(q.format(t="vh")).fetchall()
    with db.transaction():
        db.execute("SET LOCAL pg_warp.mode = cpu")
        db.execute("SET LOCAL cpu_tuple_cost = 10000")
        plan = "\n".join(r[0] for r in db.execute("EXPLAIN " + q.format(t="v")))
        assert "WarpPreAgg" in plan, plan
        assert db.execute(q.format(t="v")).fetchall() == want


def test_string_view_out_of_its_buffers_is_an_error(db, scratch, schema):
    vals, t = view_table(n=50)
    path = os.path.join(scratch, "bad.arrow")
    with ipc.new_file(path, t.select(["s"]).schema) as w:
        w.write_table(t.select(["s"]))
    data = bytearray(open(path, "rb").read())
    # a long view (more than 12 bytes) whose offset is pushed past its buffer
    long_row = next(k for k, v in enumerate(vals) if v is not None and len(v.encode()) > 12)
    key = vals[long_row].encode()[:4]
    pos = data.find(len(vals[long_row].encode()).to_bytes(4, "little") + key)
    assert pos > 0
    data[pos + 12:pos + 16] = (1 << 30).to_bytes(4, "little")
    open(path, "wb").write(bytes(data))
    table_over(db, schema, "bad", "s text", path)
    with pytest.raises(psycopg.Error) as ei:
        db.execute("SELECT s FROM %s.bad" % schema).fetchall()
    assert ei.value.sqlstate == "XX001", ei.value
    assert "bad.arrow" in str(ei.value) and "view" in str(ei.value), ei.value
