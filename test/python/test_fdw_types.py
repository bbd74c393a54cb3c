"""arrow_fdw read side: files written by pyarrow (the oracle) for every mapped
Arrow type, imported with IMPORT FOREIGN SCHEMA; every value PostgreSQL
returns must equal what pyarrow wrote.

Values are compared exactly through canonical forms computed on both sides:
PostgreSQL turns each value into JSON whose leaves are strings (integers and
numerics as text, floats as the hex of float4send/float8send, dates as days
since 1970, times and timestamps as the int64 microseconds time_send and
timestamp_send give (timestamps from 2000-01-01), intervals as the hex of interval_send (microseconds, days, months),
bytea as hex), composites as JSON arrays by field and arrays as JSON arrays;
Python computes the same forms from pyarrow's values.  Values PostgreSQL
cannot hold (dates and timestamps out of its range, NUL in text) must give an
error, computed in Python from PostgreSQL's documented limits.
"""
import itertools
import json
import math
import os
import struct
import uuid
from decimal import Decimal

import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.types as pat
import pytest

import cases
from cases import ALL_CASES, CASES_BY_NAME, wide_case
from pwhelpers import cat_values

psycopg = pytest.importorskip("psycopg")

# ---------------------------------------------------------------- limits

UNIX_EPOCH_USEC_FROM_PG = 946684800000000       # 2000-01-01 - 1970-01-01 in us
MIN_TIMESTAMP = -211813488000000000               # PostgreSQL, from its epoch
END_TIMESTAMP = 9223371331200000000
DATE_MIN_UNIX_DAYS = -2440588                     # Julian day 0 (4714-11-24 BC)
DATE_END_UNIX_DAYS = 2147483494 - 2440588         # DATE_END_JULIAN, exclusive
USECS_PER_DAY = 86400000000
INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1

UNIT_USEC = {"s": 1000000, "ms": 1000, "us": 1}


class Unrepresentable(Exception):
    """A value PostgreSQL cannot hold: reading it must fail with sqlstate."""

    def __init__(self, sqlstate, why):
        Exception.__init__(self, why)
        self.sqlstate = sqlstate


def round_ns_to_us(ns):
    """Nanoseconds to microseconds, half away from zero (exact integers)."""
    q, r = divmod(abs(ns), 1000)
    if r >= 500:
        q += 1
    return q if ns >= 0 else -q


def to_usec(v, unit, what):
    if unit == "ns":
        return round_ns_to_us(v)
    us = v * UNIT_USEC[unit]
    if not INT64_MIN <= us <= INT64_MAX:
        raise Unrepresentable("22008", "%s %d%s overflows microseconds" % (what, v, unit))
    return us


def interval_hex(us, days, months):
    return struct.pack(">qii", us, days, months).hex()


# ------------------------------------------------- expected (Python side)

def canon(t, v):
    """Canonical form of the cat value v (pwhelpers.cat_values) of Arrow type t."""
    if v is None:
        return None
    if pat.is_dictionary(t):
        return canon(t.value_type, v)
    if pat.is_null(t):
        return None
    if pat.is_boolean(t):
        return "true" if v else "false"
    if pat.is_integer(t):
        return str(v)
    if pat.is_floating(t):
        if v == "NaN":
            return "NaN"
        x = float(v)
        return struct.pack(">d" if t.bit_width == 64 else ">f", x).hex()
    if pat.is_decimal(t):
        return v                                   # exact decimal text at the scale
    if pat.is_date(t):
        days = v if pat.is_date32(t) else v // 86400000
        if not DATE_MIN_UNIX_DAYS <= days < DATE_END_UNIX_DAYS:
            raise Unrepresentable("22008", "date %d out of range" % days)
        return str(days)
    if pat.is_time(t):
        us = to_usec(v, t.unit, "time")
        if not 0 <= us <= USECS_PER_DAY:
            raise Unrepresentable("22008", "time %d out of range" % us)
        return str(us)
    if pat.is_timestamp(t):
        us = to_usec(v, t.unit, "timestamp")
        pg = us - UNIX_EPOCH_USEC_FROM_PG
        if not MIN_TIMESTAMP <= pg < END_TIMESTAMP:
            raise Unrepresentable("22008", "timestamp %d out of range" % us)
        return str(pg)                             # microseconds since 2000-01-01
    if pat.is_duration(t):
        return interval_hex(to_usec(v, t.unit, "duration"), 0, 0)
    if t == pa.month_day_nano_interval():
        m, d, ns = v
        return interval_hex(round_ns_to_us(ns), d, m)
    if str(t) == "month_interval":
        return interval_hex(0, 0, v)
    if str(t) == "day_time_interval":
        d, ms = v
        return interval_hex(ms * 1000, d, 0)
    if pat.is_string(t) or pat.is_large_string(t):
        if "\x00" in v:
            raise Unrepresentable("22021", "NUL in a string")
        return v
    if pat.is_binary(t) or pat.is_large_binary(t) or pat.is_fixed_size_binary(t):
        return v                                   # hex already
    if pat.is_map(t):
        return [[canon(t.key_type, k), canon(t.item_type, x)] for k, x in v]
    if pat.is_list(t) or pat.is_large_list(t) or pat.is_fixed_size_list(t):
        return [canon(t.value_type, x) for x in v]
    if pat.is_struct(t):
        assert [n for n, _ in v] == [t.field(i).name for i in range(t.num_fields)]
        return [canon(t.field(i).type, x) for i, (_, x) in enumerate(v)]
    raise NotImplementedError(str(t))


# ------------------------------------------------ PostgreSQL side (SQL)

def qi(name):
    return '"%s"' % name.replace('"', '""')


def ql(s):
    return "'%s'" % s.replace("'", "''")


def pg_leaf(t, e):
    """SQL text expression giving the canonical form of a scalar."""
    if pat.is_floating(t):
        ft, send = ("double precision", "float8send") if t.bit_width == 64 else ("real", "float4send")
        return "CASE WHEN %s = 'NaN'::%s THEN 'NaN' ELSE encode(%s(%s), 'hex') END" % (e, ft, send, e)
    if pat.is_date(t):
        return "(%s - date '1970-01-01')::text" % e
    if pat.is_time(t) or pat.is_timestamp(t):
        # the stored int64 (exact; extract(epoch) rounds near the limits)
        send = "time_send" if pat.is_time(t) else "timestamptz_send" if t.tz else "timestamp_send"
        return "('x' || encode(%s(%s), 'hex'))::bit(64)::bigint::text" % (send, e)
    if pat.is_duration(t) or pat.is_interval(t) or str(t) in ("month_interval", "day_time_interval"):
        return "encode(interval_send(%s), 'hex')" % e
    if pat.is_binary(t) or pat.is_large_binary(t) or pat.is_fixed_size_binary(t):
        return "encode(%s, 'hex')" % e
    return "%s::text" % e          # integers, numeric, bool, text, null


_depth = itertools.count()


def pg_canon(t, e):
    """SQL json expression: the canonical form of expression e (Arrow type t)."""
    if pat.is_dictionary(t):
        return pg_canon(t.value_type, e)
    if pat.is_struct(t):
        parts = [pg_canon(t.field(i).type, "(%s).%s" % (e, qi(t.field(i).name)))
                 for i in range(t.num_fields)]
        return "CASE WHEN num_nulls(%s) = 1 THEN NULL ELSE json_build_array(%s) END" % (
            e, ", ".join(parts))
    if pat.is_map(t) or pat.is_list(t) or pat.is_large_list(t) or pat.is_fixed_size_list(t):
        g = "g%d" % next(_depth)
        elem = "(%s)[%s.i]" % (e, g)
        if pat.is_map(t):
            inner = "CASE WHEN num_nulls(%s) = 1 THEN NULL ELSE json_build_array(%s, %s) END" % (
                elem, pg_canon(t.key_type, "(%s).%s" % (elem, qi(t.key_field.name))),
                pg_canon(t.item_type, "(%s).%s" % (elem, qi(t.item_field.name))))
        else:
            inner = pg_canon(t.value_type, elem)
        return ("CASE WHEN %s IS NULL THEN NULL ELSE (SELECT coalesce(json_agg(%s ORDER BY %s.i), "
                "'[]'::json) FROM generate_subscripts(%s, 1) AS %s(i)) END") % (e, inner, g, e, g)
    return "to_json((%s))" % pg_leaf(t, e)


def expected_pg_type(t, schema, typname):
    """format_type() of the column IMPORT FOREIGN SCHEMA must create."""
    if pat.is_dictionary(t):
        return expected_pg_type(t.value_type, schema, typname)
    if pat.is_null(t) or pat.is_string(t) or pat.is_large_string(t):
        return "text"
    if pat.is_boolean(t):
        return "boolean"
    if pat.is_integer(t):
        if t == pa.uint64():
            return "numeric"
        bits = t.bit_width + (0 if pat.is_signed_integer(t) else 1)
        return "smallint" if bits <= 16 else "integer" if bits <= 32 else "bigint"
    if pat.is_floating(t):
        return "double precision" if t.bit_width == 64 else "real"
    if pat.is_decimal(t):
        return "numeric(%d,%d)" % (t.precision, t.scale)
    if pat.is_date(t):
        return "date"
    if pat.is_time(t):
        return "time without time zone"
    if pat.is_timestamp(t):
        return "timestamp with time zone" if t.tz else "timestamp without time zone"
    if pat.is_duration(t) or pat.is_interval(t) or str(t) in ("month_interval", "day_time_interval"):
        return "interval"
    if pat.is_binary(t) or pat.is_large_binary(t) or pat.is_fixed_size_binary(t):
        return "bytea"
    if pat.is_struct(t):
        return "%s.%s" % (schema, typname)
    if pat.is_map(t):
        return "%s.%s_entry[]" % (schema, typname)
    if pat.is_list(t) or pat.is_large_list(t) or pat.is_fixed_size_list(t):
        return expected_pg_type(t.value_type, schema, typname) + "[]"
    raise NotImplementedError(str(t))


# --------------------------------------------------------------- helpers

_names = itertools.count()


def write_arrow(path, batches, fmt, compression=None, opts=None):
    options = dict(opts or {})
    if compression:
        options["compression"] = compression
    options = ipc.IpcWriteOptions(**options)
    schema = batches[0].schema
    with pa.OSFile(str(path), "wb") as sink:
        w = (ipc.new_file if fmt == "file" else ipc.new_stream)(sink, schema, options=options)
        for b in batches:
            w.write_batch(b)
        w.close()
    os.chmod(path, 0o644)


def with_rid(batches):
    """The batches with an int64 column rid numbering the rows (through
    Table.append_column, which works for types pyarrow cannot wrap)."""
    out, n, template = [], 0, None
    for b in batches:
        if b.num_rows:
            t = pa.Table.from_batches([b]).append_column(
                "rid", pa.array(range(n, n + b.num_rows), pa.int64()))
            nb = t.combine_chunks().to_batches()
            assert len(nb) == 1
            out.append(nb[0])
            template = nb[0]
        else:
            out.append(None)
        n += b.num_rows
    assert template is not None
    return [template.slice(0, 0) if b is None else b for b in out]


def new_schema(db):
    name = "fdwt_%d_%d" % (os.getpid(), next(_names))
    db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % name)
    db.execute("CREATE SCHEMA %s" % name)
    return name


def import_table(db, schema, table, path_opts):
    opts = ", ".join("%s %s" % (k, ql(v)) for k, v in path_opts.items())
    db.execute("IMPORT FOREIGN SCHEMA %s FROM SERVER arrow_fdw INTO %s OPTIONS (%s)"
               % (qi(table), schema, opts))


def column_types(db, schema, table):
    return db.execute(
        "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute "
        "WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum",
        ("%s.%s" % (schema, qi(table)),)).fetchall()


def expected_columns(schema, rows):
    """Per column: ('ok', [canonical values]) or ('error', sqlstate, why)."""
    out = {}
    for ci, f in enumerate(schema):
        vals = []
        try:
            for r in rows:
                vals.append(canon(f.type, r[ci]))
            out[f.name] = ("ok", vals)
        except Unrepresentable as e:
            out[f.name] = ("error", e.sqlstate, str(e))
    return out


def fetch_canon(db, qualified, fields, order="rid"):
    exprs = [pg_canon(f.type, "x.%s" % qi(f.name)) for f in fields]
    sql = "SELECT json_build_array(%s)::text FROM %s x ORDER BY x.%s" % (
        ", ".join(exprs), qualified, qi(order))
    return [json.loads(r[0]) for r in db.execute(sql).fetchall()]


def compare_columns(names, expected_cols, got_rows, what=""):
    problems = []
    nrows = len(expected_cols[0]) if expected_cols else 0
    if len(got_rows) != nrows:
        problems.append("row count: expected %d, got %d" % (nrows, len(got_rows)))
    for i, row in enumerate(got_rows[:nrows]):
        for k, name in enumerate(names):
            if row[k] != expected_cols[k][i]:
                problems.append("row %d column %s: expected %r, got %r"
                                % (i, name, expected_cols[k][i], row[k]))
        if len(problems) > 8:
            break
    assert not problems, what + "\n" + "\n".join(problems)


def check_sql_error(db, sql, sqlstate, names=()):
    with pytest.raises(psycopg.Error) as ei:
        db.execute(sql).fetchall()
    e = ei.value
    assert e.sqlstate == sqlstate, "%s: expected SQLSTATE %s, got %s: %s" % (sql, sqlstate, e.sqlstate, e)
    for n in names:
        assert n in str(e), "error does not name %r: %s" % (n, e)
    return e


def check_table(db, schema, table, arrow_schema, rows):
    """Imported table schema.table holds exactly rows (cat values, in
    arrow_schema order, the last column being rid)."""
    qualified = "%s.%s" % (schema, qi(table))
    types = column_types(db, schema, table)
    want_types = [(f.name, expected_pg_type(f.type, schema, "%s_%s" % (table, f.name)))
                  for f in arrow_schema]
    assert types == want_types
    exp = expected_columns(arrow_schema, rows)
    good = [f for f in arrow_schema if exp[f.name][0] == "ok"]
    assert db.execute("SELECT count(*) FROM %s" % qualified).fetchone()[0] == len(rows)
    got = fetch_canon(db, qualified, good)
    compare_columns([f.name for f in good], [exp[f.name][1] for f in good], got, qualified)
    for f in arrow_schema:
        if exp[f.name][0] == "error":
            _, state, why = exp[f.name]
            # out-of-range errors name the column
            check_sql_error(db, "SELECT %s FROM %s" % (qi(f.name), qualified), state,
                            names=(f.name,) if state == "22008" else ())
    return exp


@pytest.fixture(scope="module", autouse=True)
def extension(db):
    db.execute("CREATE EXTENSION IF NOT EXISTS pg_warp")
    db.execute("SET max_parallel_workers_per_gather = 0")
    yield


@pytest.fixture
def schema(db):
    s = new_schema(db)
    yield s
    db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % s)


# ----------------------------------------------------- cases.py, all types

CODECS = [None, "lz4", "zstd"]
# lists of lists have no PostgreSQL array equivalent: jsonb (test_fdw_interop.py)
UNMAPPABLE = {"list_list_int8"}
PARAMS = []
for _i, _c in enumerate(ALL_CASES):
    if _c.name in UNMAPPABLE:
        continue
    for _k, _fmt in enumerate(("file", "stream")):
        if _fmt == "file" and _c.stream_only:
            continue
        PARAMS.append(pytest.param(_c.name, _fmt, CODECS[(_i + _k) % 3],
                                   id="%s-%s-%s" % (_c.name, _fmt, CODECS[(_i + _k) % 3] or "plain")))


@pytest.mark.parametrize("name,fmt,codec", PARAMS)
def test_case_values(db, scratch, schema, name, fmt, codec):
    case = CASES_BY_NAME[name]
    batches = with_rid(case.batches())
    path = os.path.join(scratch, name + "." + fmt)
    write_arrow(path, batches, fmt, codec,
                case.file_opts if fmt == "file" else case.stream_opts)
    rows = case.expected_rows()
    rows = [r + [i] for i, r in enumerate(rows)]
    import_table(db, schema, name, {"file": path})
    check_table(db, schema, name, batches[0].schema, rows)


@pytest.mark.parametrize("fmt", ["file", "stream"])
@pytest.mark.parametrize("codec", CODECS)
def test_wide_all_types(db, scratch, schema, fmt, codec):
    case = wide_case()
    names = case.schema().names
    keep = [k for k, n in enumerate(names) if n not in UNMAPPABLE]
    schema0 = pa.schema([case.schema().field(k) for k in keep])
    batches = with_rid([pa.record_batch([b.column(k) for k in keep], schema=schema0)
                        for b in case.batches()])
    path = os.path.join(scratch, "wide.arrow")
    write_arrow(path, batches, fmt, codec)
    rows = [[r[k] for k in keep] + [i] for i, r in enumerate(case.expected_rows())]
    import_table(db, schema, "wide", {"file": path})
    exp = check_table(db, schema, "wide", batches[0].schema, rows)
    assert sum(1 for v in exp.values() if v[0] == "ok") > 40


# ------------------------------------- values at PostgreSQL's limits

def _my_case(name, typ, values, metadata=None):
    """value_case-like: v (values), nn (no NULLs), z (all NULL); batches:
    values, none, reversed, first only."""
    nn = [v for v in values if v is not None]

    def build():
        schema = pa.schema([pa.field("v", typ, metadata=metadata), pa.field("nn", typ, False),
                            pa.field("z", typ)])
        out = []
        for vals in (values, [], list(reversed(values)), values[:1]):
            cyc = list(itertools.islice(itertools.cycle(nn), len(vals)))
            out.append(pa.record_batch([pa.array(vals, typ), pa.array(cyc, typ),
                                        pa.nulls(len(vals), typ)], schema=schema))
        return out

    return cases.Case(name, build)


PG_MIN_US = MIN_TIMESTAMP + UNIX_EPOCH_USEC_FROM_PG
STRINGS_NO_NUL = [s for s in cases.STRINGS if s is None or "\x00" not in s]

IN_RANGE = [
    _my_case("date32_limits", pa.date32(),
             [0, -1, 19000, DATE_MIN_UNIX_DAYS, DATE_END_UNIX_DAYS - 1, None, 2932896]),
    _my_case("date64_floor", pa.date64(),
             [0, -1, 86399999, -86400000, -86400001, None, DATE_MIN_UNIX_DAYS * 86400000,
              (DATE_END_UNIX_DAYS - 1) * 86400000 + 86399999, 1700000000123]),
    _my_case("time32_s_limits", pa.time32("s"), [0, 86399, 86400, None, 1]),
    _my_case("time64_ns_round", pa.time64("ns"),
             [0, 499, 500, 1499, 1500, 86399999999499, 86399999999500, None]),
    _my_case("duration_s_limits", pa.duration("s"),
             [INT64_MAX // 10 ** 6, -(INT64_MAX // 10 ** 6), 0, -1, None]),
    _my_case("duration_ms_limits", pa.duration("ms"),
             [INT64_MAX // 10 ** 3, -(INT64_MAX // 10 ** 3), 0, -1, None]),
    _my_case("duration_ns_round", pa.duration("ns"),
             [1499, 1500, -1499, -1500, -1501, 2500, None, INT64_MAX - 1000, INT64_MIN + 1000]),
    _my_case("interval_mdn_round", pa.month_day_nano_interval(),
             [pa.MonthDayNano([0, 0, 1499]), pa.MonthDayNano([0, 0, 1500]),
              pa.MonthDayNano([0, 0, -1500]), pa.MonthDayNano([0, 0, -1501]), None,
              pa.MonthDayNano([-7, 40, 86400 * 10 ** 9 + 500])]),
    _my_case("utf8_no_nul", pa.utf8(), STRINGS_NO_NUL),
    _my_case("large_utf8_no_nul", pa.large_utf8(), STRINGS_NO_NUL),
] + [
    _my_case("timestamp_%s_%s_limits" % (unit, (tz or "none").replace("/", "_")), pa.timestamp(unit, tz=tz), vals)
    for unit, vals in (
        ("s", [PG_MIN_US // 10 ** 6, INT64_MAX // 10 ** 6, 0, -1, 1, None, 1700000000]),
        ("ms", [PG_MIN_US // 10 ** 3, INT64_MAX // 10 ** 3, 0, -1, None, 1700000000123]),
        ("us", [PG_MIN_US, INT64_MAX, 0, -1, 1, None, 1700000000123456]),
        ("ns", [0, -1, 1, 499, 500, -500, -501, 1499, -1500, None,
                INT64_MAX - 1000, INT64_MIN + 1000, 1700000000123456789]))
    for tz in (None, "UTC", "Asia/Kolkata")
]
IN_RANGE_BY_NAME = {c.name: c for c in IN_RANGE}


@pytest.mark.parametrize("name", sorted(IN_RANGE_BY_NAME))
def test_values_at_limits(db, scratch, schema, name):
    case = IN_RANGE_BY_NAME[name]
    batches = with_rid(case.batches())
    for fmt, codec in (("file", "zstd"), ("stream", None)):
        path = os.path.join(scratch, "%s.%s" % (name, fmt))
        write_arrow(path, batches, fmt, codec)
        rows = [r + [i] for i, r in enumerate(case.expected_rows())]
        table = "%s_%s" % (name, fmt)
        import_table(db, schema, table, {"file": path})
        exp = check_table(db, schema, table, batches[0].schema, rows)
        assert all(v[0] == "ok" for v in exp.values()), exp


# one value just past each limit: a clean error naming the column
OUT_OF_RANGE = [
    ("date32", pa.date32(), DATE_END_UNIX_DAYS, "22008"),
    ("date32", pa.date32(), DATE_MIN_UNIX_DAYS - 1, "22008"),
    ("date64", pa.date64(), DATE_END_UNIX_DAYS * 86400000, "22008"),
    ("date64", pa.date64(), DATE_MIN_UNIX_DAYS * 86400000 - 1, "22008"),
    ("time32", pa.time32("s"), 86401, "22008"),
    ("time32", pa.time32("ms"), -1, "22008"),
    ("time64", pa.time64("us"), USECS_PER_DAY + 1, "22008"),
    ("time64", pa.time64("ns"), USECS_PER_DAY * 1000 + 500, "22008"),
    ("timestamp", pa.timestamp("s"), PG_MIN_US // 10 ** 6 - 1, "22008"),
    ("timestamp", pa.timestamp("s"), INT64_MAX // 10 ** 6 + 1, "22008"),
    ("timestamp", pa.timestamp("ms", tz="UTC"), PG_MIN_US // 10 ** 3 - 1, "22008"),
    ("timestamp", pa.timestamp("us", tz="UTC"), PG_MIN_US - 1, "22008"),
    ("duration", pa.duration("s"), INT64_MAX // 10 ** 6 + 1, "22008"),
    ("duration", pa.duration("ms"), INT64_MIN // 10 ** 3 - 1, "22008"),
    ("utf8", pa.utf8(), "nul \x00 inside", "22021"),
    ("large_utf8", pa.large_utf8(), "\x00", "22021"),
]


@pytest.mark.parametrize("k", range(len(OUT_OF_RANGE)),
                         ids=["%s-%s-%r" % (o[0], o[1], o[2])[:60] for o in OUT_OF_RANGE])
def test_values_out_of_range(db, scratch, schema, k):
    kind, typ, value, state = OUT_OF_RANGE[k]
    t = pa.table({"id": pa.array([1, 2, 3], pa.int32()),
                  "bad": pa.array([None, value, None], typ)})
    # the Python oracle agrees that this value cannot be represented
    with pytest.raises(Unrepresentable):
        canon(typ, cat_values(t.column("bad"))[1])
    path = os.path.join(scratch, "oor.arrow")
    write_arrow(path, t.to_batches(), "file")
    import_table(db, schema, "oor", {"file": path})
    # other columns read fine; the bad one fails cleanly
    assert db.execute("SELECT sum(id) FROM %s.oor" % schema).fetchone()[0] == 6
    check_sql_error(db, "SELECT bad FROM %s.oor" % schema, state,
                    names=("bad",) if state == "22008" else ())
    # the connection is still usable
    assert db.execute("SELECT 1").fetchone()[0] == 1


# ------------------------------------------------ pg_type field metadata

def test_pg_type_metadata(db, scratch, schema):
    us = [uuid.UUID(int=0), uuid.UUID("12345678-9abc-def0-1234-56789abcdef0"), None,
          uuid.UUID(int=2 ** 128 - 1)]
    js = ['{"a": [1, 2.50, null]}', None, '"x"', "[]"]
    vc = ["", "ten chars!", None, "héllo"]
    fields = [
        pa.field("u", pa.binary(16), metadata={"pg_type": "uuid"}),
        pa.field("j", pa.utf8(), metadata={"pg_type": "json"}),
        pa.field("jb", pa.utf8(), metadata={"pg_type": "jsonb"}),
        pa.field("v", pa.utf8(), metadata={"pg_type": "character varying(10)"}),
        # metadata that cannot read the field: the mapping is used instead
        pa.field("i", pa.int32(), metadata={"pg_type": "uuid"}),
        pa.field("evil", pa.int64(), metadata={"pg_type": "int8; DROP TABLE x"}),
        pa.field("bad", pa.utf8(), metadata={"pg_type": "no_such_type(3)"}),
        pa.field("n", pa.decimal128(12, 2), metadata={"pg_type": "numeric(5,2)"}),
    ]
    t = pa.table([pa.array([None if x is None else x.bytes for x in us], pa.binary(16)),
                  pa.array(js), pa.array(js), pa.array(vc), pa.array([1, None, -1, 7], pa.int32()),
                  pa.array([2 ** 62, None, 0, -1], pa.int64()), pa.array(vc),
                  pa.array([Decimal("1234567890.12"), None, Decimal("-0.01"), Decimal("0")],
                           pa.decimal128(12, 2))],
                 schema=pa.schema(fields))
    path = os.path.join(scratch, "meta.arrow")
    write_arrow(path, t.to_batches(max_chunksize=2), "file")
    import_table(db, schema, "meta", {"file": path})
    assert column_types(db, schema, "meta") == [
        ("u", "uuid"), ("j", "json"), ("jb", "jsonb"), ("v", "character varying(10)"),
        ("i", "integer"), ("evil", "bigint"), ("bad", "text"), ("n", "numeric(12,2)")]
    got = db.execute("SELECT u::text, j::text, jb::text, v::text, i, evil, bad, n::text "
                     "FROM %s.meta" % schema).fetchall()
    jb = [None if x is None else
          db.execute("SELECT %s::jsonb::text", (x,)).fetchone()[0] for x in js]
    want = [(None if u is None else str(u), j, b, v, i, e, v, n)
            for u, j, b, v, i, e, n in zip(us, js, jb, vc, [1, None, -1, 7],
                                           [2 ** 62, None, 0, -1],
                                           ["1234567890.12", None, "-0.01", "0.00"])]
    assert got == want

    # a value its type's input function refuses: that function's error
    t2 = pa.table([pa.array(["short", "much too long for ten"])],
                  schema=pa.schema([pa.field("v", pa.utf8(),
                                             metadata={"pg_type": "character varying(10)"})]))
    path2 = os.path.join(scratch, "meta2.arrow")
    write_arrow(path2, t2.to_batches(), "stream")
    import_table(db, schema, "meta2", {"file": path2})
    check_sql_error(db, "SELECT v FROM %s.meta2" % schema, "22001")


# ---------------------------------------------- declared types, HV004

def _mismatch_file(scratch):
    t = pa.table({
        "i64": pa.array([1, 2], pa.int64()), "u16": pa.array([1, 2], pa.uint16()),
        "u64": pa.array([1, 2], pa.uint64()), "f64": pa.array([1.5, 2], pa.float64()),
        "d": pa.array([Decimal("1.50"), None], pa.decimal128(12, 2)),
        "ts": pa.array([1, 2], pa.timestamp("us")),
        "tstz": pa.array([1, 2], pa.timestamp("us", tz="UTC")),
        "b": pa.array([True, False]), "dt": pa.array([1, 2], pa.date32()),
        "l": pa.array([[1], []], pa.list_(pa.int64())),
        "s": pa.array([{"a": 1, "b": "x"}, None], pa.struct([("a", pa.int32()), ("b", pa.utf8())])),
        "bin": pa.array([b"x", b""]), "i32": pa.array([1, -2], pa.int32()),
        "f32": pa.array([1.5, -2], pa.float32()), "txt": pa.array(["1", "2"]),
    })
    path = os.path.join(scratch, "mm.arrow")
    write_arrow(path, t.to_batches(), "file")
    return path, t


REFUSED = [("i64", "integer"), ("i64", "smallint"), ("u16", "smallint"), ("u64", "bigint"),
           ("f64", "real"), ("d", "numeric(11,2)"), ("d", "numeric(12,3)"), ("d", "numeric(12,1)"),
           ("d", "integer"), ("ts", "timestamptz"), ("tstz", "timestamp"), ("b", "integer"),
           ("dt", "timestamp"), ("l", "integer[]"), ("l", "bigint"), ("i64", "bigint[]"),
           ("s", "pg_temp_rec"), ("bin", "text"), ("bin", "uuid")]
ACCEPTED = [("i32", "bigint", "1,-2"), ("i32", "numeric", "1,-2"), ("u16", "integer", "1,2"),
            ("f32", "double precision", "1.5,-2"), ("d", "numeric(14,2)", "1.50,"),
            ("d", "numeric", "1.50,"), ("txt", "integer", "1,2"), ("l", "numeric[]", "{1},{}"),
            ("i64", "numeric", "1,2"), ("bin", "bytea", "\\x78,\\x")]


@pytest.mark.parametrize("col,typ", REFUSED)
def test_declared_type_refused(db, scratch, schema, col, typ):
    path, _ = _mismatch_file(scratch)
    if typ == "pg_temp_rec":
        # no field c (and not as many fields as the struct: no positional match)
        db.execute("CREATE TYPE %s.rec AS (a integer, c text, d text)" % schema)
        typ = "%s.rec" % schema
    e = check_sql_error(db, "CREATE FOREIGN TABLE %s.t (%s %s) SERVER arrow_fdw OPTIONS (file %s)"
                        % (schema, qi(col), typ, ql(path)), "HV004", names=(col,))
    assert db.execute("SELECT to_regclass(%s)", ("%s.t" % schema,)).fetchone()[0] is None, e


@pytest.mark.parametrize("col,typ,text", ACCEPTED)
def test_declared_type_widened(db, scratch, schema, col, typ, text):
    path, _ = _mismatch_file(scratch)
    db.execute("CREATE FOREIGN TABLE %s.t (%s %s) SERVER arrow_fdw OPTIONS (file %s)"
               % (schema, qi(col), typ, ql(path)))
    got = db.execute("SELECT string_agg(coalesce(%s::text, ''), ',' ORDER BY ord) FROM "
                     "(SELECT %s, row_number() OVER () AS ord FROM %s.t) x"
                     % (qi(col), qi(col), schema)).fetchone()[0]
    assert got == text


def test_declared_composite_by_name(db, scratch, schema):
    path, _ = _mismatch_file(scratch)
    # fields matched by name, in another order, a subset
    db.execute("CREATE TYPE %s.rec AS (b text, a bigint)" % schema)
    db.execute("CREATE FOREIGN TABLE %s.t (s %s.rec, i64 bigint) SERVER arrow_fdw OPTIONS (file %s)"
               % (schema, schema, ql(path)))
    got = db.execute("SELECT (s).b, (s).a, num_nulls(s) FROM %s.t" % schema).fetchall()
    assert got == [("x", 1, 0), (None, None, 1)]


def test_unknown_column_refused(db, scratch, schema):
    path, _ = _mismatch_file(scratch)
    check_sql_error(db, "CREATE FOREIGN TABLE %s.t (nosuch integer) SERVER arrow_fdw OPTIONS (file %s)"
                    % (schema, ql(path)), "42703", names=("nosuch",))


# ------------------------------------------------------- unmappable types

def _union_table():
    u = pa.UnionArray.from_sparse(pa.array([0, 1, 0], pa.int8()),
                                  [pa.array([1, 2, 3], pa.int32()), pa.array(["a", "b", "c"])])
    return pa.table({"ok": pa.array([1, 2, 3], pa.int32()), "un": u})


@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_union_import_error(db, scratch, schema, fmt):
    path = os.path.join(scratch, "union.arrow")
    write_arrow(path, _union_table().to_batches(), fmt)
    with pytest.raises(psycopg.Error) as ei:
        db.execute("IMPORT FOREIGN SCHEMA un FROM SERVER arrow_fdw INTO %s OPTIONS (file %s)"
                   % (schema, ql(path)))
    e = ei.value
    assert e.sqlstate in ("HV004", "0A000"), (e.sqlstate, str(e))
    assert '"un"' in str(e) and "union" in str(e).lower(), e
    assert db.execute("SELECT count(*) FROM pg_class WHERE relnamespace = %s::regnamespace",
                      (schema,)).fetchone()[0] == 0
    # declaring the union column is refused too, naming it
    with pytest.raises(psycopg.Error) as ei:
        db.execute("CREATE FOREIGN TABLE %s.t (un text) SERVER arrow_fdw OPTIONS (file %s)"
                   % (schema, ql(path)))
    assert ei.value.sqlstate in ("HV004", "0A000") and '"un"' in str(ei.value), ei.value


def test_list_of_list_imports_as_jsonb(db, scratch, schema):
    # no PostgreSQL array holds a ragged list of lists: the column is jsonb
    # (its values are compared with pyarrow's in test_fdw_interop.py)
    case = CASES_BY_NAME["list_list_int8"]
    path = os.path.join(scratch, "ll.arrow")
    write_arrow(path, case.batches(), "file")
    db.execute("IMPORT FOREIGN SCHEMA ll FROM SERVER arrow_fdw INTO %s OPTIONS (file %s)"
               % (schema, ql(path)))
    assert dict(column_types(db, schema, "ll"))["v"] == "jsonb"


# ------------------------------------------------- several files: dir, files

PART_SCHEMA = pa.schema([("id", pa.int64()), ("s", pa.utf8()),
                         ("d", pa.dictionary(pa.int8(), pa.utf8())), ("f", pa.float64())])


def _part(i, n, offset):
    ids = list(range(offset, offset + n))
    return pa.Table.from_pydict({
        "id": pa.array(ids, pa.int64()),
        "s": pa.array([None if k % 5 == 0 else "p%d-%d" % (i, k) for k in ids]),
        "d": pa.DictionaryArray.from_arrays(pa.array([k % 3 for k in ids], pa.int8()),
                                            pa.array(["x", "y", "z%d" % i])),
        "f": pa.array([k / 7 if k % 4 else None for k in ids], pa.float64()),
    }, schema=PART_SCHEMA)


def test_dir_several_files(db, scratch, schema):
    d = os.path.join(scratch, "parts")
    os.makedirs(d)
    os.chmod(d, 0o755)
    parts, offset = [], 0
    # written out of name order, in both formats and all codecs, several batches each
    specs = [("c.arrow", "file", "zstd", 300), ("a.arrow", "stream", "lz4", 1000),
             ("b.arrow", "file", None, 0), ("d.arrow", "stream", None, 17)]
    for i, (fname, fmt, codec, n) in enumerate(specs):
        t = _part(i, n, offset)
        offset += n
        bs = t.to_batches(max_chunksize=128) or [pa.RecordBatch.from_pylist([], schema=PART_SCHEMA)]
        write_arrow(os.path.join(d, fname), bs, fmt, codec)
        parts.append((fname, t))
    # other suffixes are ignored unless asked for
    write_arrow(os.path.join(d, "z.feather"), _part(9, 5, 10 ** 6).to_batches(), "file")
    import_table(db, schema, "parts", {"dir": d})
    order = sorted(parts)
    want = pa.concat_tables([t for _, t in order])
    rows = [r for r in zip(*[cat_values(want.column(k)) for k in range(want.num_columns)])]
    rows = [list(r) for r in rows]
    got = fetch_canon(db, "%s.parts" % schema, list(want.schema), order="id")
    exp = expected_columns(want.schema, sorted(rows, key=lambda r: r[0]))
    compare_columns([f.name for f in want.schema], [exp[f.name][1] for f in want.schema], got)
    # file order is name order: the scan returns the rows in that order
    ids = [r[0] for r in db.execute("SELECT id FROM %s.parts" % schema).fetchall()]
    assert ids == [r[0] for r in rows]
    # aggregates, also in a parallel plan
    q = "SELECT count(*), sum(id), count(s), sum(f) FROM %s.parts" % schema
    serial = db.execute(q).fetchone()
    assert serial[:3] == (len(rows), sum(r[0] for r in rows), sum(1 for r in rows if r[1] is not None))
    assert math.isclose(serial[3], sum(r[3] for r in rows if r[3] is not None), rel_tol=1e-12)
    db.execute("ALTER FOREIGN TABLE %s.parts OPTIONS (ADD parallel_workers '2')" % schema)
    for s in ("SET parallel_setup_cost = 0", "SET parallel_tuple_cost = 0",
              "SET max_parallel_workers_per_gather = 2"):
        db.execute(s)
    try:
        plan = "\n".join(r[0] for r in db.execute("EXPLAIN " + q).fetchall())
        par = db.execute(q).fetchone()
        ids_par = sorted(r[0] for r in db.execute("SELECT id FROM %s.parts" % schema).fetchall())
    finally:
        db.execute("RESET parallel_setup_cost")
        db.execute("RESET parallel_tuple_cost")
        db.execute("SET max_parallel_workers_per_gather = 0")
    assert "Gather" in plan, plan
    assert par[:3] == serial[:3]
    assert math.isclose(par[3], serial[3], rel_tol=1e-12)
    assert ids_par == sorted(ids)
    # suffix
    import_table(db, schema, "feath", {"dir": d, "suffix": ".feather"})
    assert db.execute("SELECT count(*), min(id) FROM %s.feath" % schema).fetchone() == (5, 10 ** 6)


def test_files_option_and_schema_mismatch(db, scratch, schema):
    a, b, c = (os.path.join(scratch, n) for n in ("a.arrow", "b.arrow", "c.arrow"))
    write_arrow(a, _part(0, 10, 0).to_batches(), "file")
    write_arrow(b, _part(1, 20, 10).to_batches(), "stream", "zstd")
    other = _part(2, 5, 30)
    other = other.set_column(0, "id", pa.array(range(30, 35), pa.int32()))     # int32, not int64
    write_arrow(c, other.to_batches(), "file")
    # files in the order given (not sorted)
    import_table(db, schema, "ab", {"files": "%s, %s" % (b, a)})
    ids = [r[0] for r in db.execute("SELECT id FROM %s.ab" % schema).fetchall()]
    assert ids == list(range(10, 30)) + list(range(10))
    for files in ("%s,%s" % (a, c), "%s,%s,%s" % (a, b, c)):
        e = check_sql_error(db, "CREATE FOREIGN TABLE %s.t (id bigint) SERVER arrow_fdw "
                            "OPTIONS (files %s)" % (schema, ql(files)), "HV004", names=(a, c))
        assert "id" in (e.diag.message_detail or "") + str(e), e
        check_sql_error(db, "IMPORT FOREIGN SCHEMA t FROM SERVER arrow_fdw INTO %s OPTIONS (files %s)"
                        % (schema, ql(files)), "HV004", names=(a, c))
    # a dir holding files of different schemas
    d = os.path.join(scratch, "mixed")
    os.makedirs(d)
    os.chmod(d, 0o755)
    write_arrow(os.path.join(d, "1.arrow"), _part(0, 3, 0).to_batches(), "file")
    write_arrow(os.path.join(d, "2.arrow"), other.to_batches(), "file")
    check_sql_error(db, "CREATE FOREIGN TABLE %s.t (id bigint) SERVER arrow_fdw OPTIONS (dir %s)"
                    % (schema, ql(d)), "HV004",
                    names=(os.path.join(d, "1.arrow"), os.path.join(d, "2.arrow")))
