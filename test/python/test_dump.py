"""`pgwarp dump`: PostgreSQL -> Arrow.  The oracle is PostgreSQL itself: every
expected value is fetched through psycopg (or computed by the server), never
typed in here; pyarrow reads what pgwarp wrote."""
import hashlib
import json
import math
import os
import struct
import subprocess
import time
from decimal import Decimal

import psycopg
import psycopg.sql
import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.types as pat
import pytest
from psycopg.adapt import Loader
from psycopg.pq import Format
from psycopg.types.composite import CompositeInfo, register_composite
from psycopg.types.string import TextLoader

from pwhelpers import (PGWARP_BIN, check_error_message, check_statistics, error_lines,
                       read_file, run_pgwarp)

# --------------------------------------------------------------- fixtures

SETUP = r"""
DROP TABLE IF EXISTS pwt_all, pwt_tz, pwt_nan_table, pwt_series;
DROP TYPE IF EXISTS pwt_comp;
DROP TYPE IF EXISTS pwt_mood;
DROP DOMAIN IF EXISTS pwt_posint;
CREATE TYPE pwt_comp AS (a int4, b text, c numeric(6,2));
CREATE TYPE pwt_mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN pwt_posint AS int4 CHECK (VALUE > 0);
CREATE TABLE pwt_all (
    id int4 NOT NULL, b bool, i2 int2, i4 int4, i8 int8, o oid, f4 float4, f8 float8,
    n12 numeric(12,2), n38 numeric(38,6), nu numeric, t text, vc varchar(10), bc char(4),
    js json, jb jsonb, by bytea, u uuid, d date, tm time, ts timestamp, tz timestamptz,
    iv interval, ai int4[], at text[], af float8[], ac pwt_comp, ip inet, en pwt_mood,
    pt point, dom pwt_posint, big text
);
INSERT INTO pwt_all VALUES
 (1, false, -32768, -2147483648, -9223372036854775808, 0, '-Infinity', '-Infinity',
  -9999999999.99, '-99999999999999999999999999999999.999999', '-12345678901234567890.123',
  '', '', '', '{}', '[]', '\x', '00000000-0000-0000-0000-000000000000',
  '4713-01-01 BC', '00:00:00', '4713-01-01 00:00:00 BC', '0001-01-01 00:00:00+00',
  '-1 year -2 mons -3 days -04:05:06.789012', '{}', '{}', '{}', ROW(NULL, NULL, NULL),
  '0.0.0.0/0', 'sad', '(0,0)', 1, ''),
 (2, true, 32767, 2147483647, 9223372036854775807, 4294967295, 'Infinity', 'Infinity',
  9999999999.99, '99999999999999999999999999999999.999999', '0.000001',
  E'h\u00e9llo \u65e5\u672c \U0001F600 "q" \\ \n\t\x01', 'abcdefghij', 'ab',
  '{"a": [1, 2.5, null],   "b": "x"}', '{"b": 1, "a": [true, null], "c": "\u00e9"}',
  '\x00ff10', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '5874897-12-31', '23:59:59.999999',
  '200000-12-31 23:59:59.999999', '2100-06-15 12:34:56.789012+05:30',
  '1 year 2 mons 3 days 04:05:06.789012', '{1,NULL,3}',
  '{"a",NULL,"","with,comma","quo\"te","NULL"}', '{1.5,NaN,-Infinity,-0}',
  ROW(1, 'x', 1.25), '2001:db8::1/128', 'happy', '(1.5,-2)', 2147483647, 'x'),
 (3, NULL, 0, 0, 0, 1, '-0', '-0', 0, 0, '100', 'plain', 'ü', 'äbc', 'null', '"str"',
  '\x00', '123e4567-e89b-12d3-a456-426614174000', '1969-12-31', '12:00:00',
  '1969-12-31 23:59:59.999999', '1969-12-31 23:59:59.999999-08',
  '0 seconds', '{0}', '{NULL}', '{NULL}', ROW(-5, '', NULL), '10.0.0.1', 'ok', '(1,1)', 5,
  repeat('y', 1000)),
 (4, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
 (5, true, 1, 1, 1, 2, 1.17549435e-38, 5e-324, 0.01, '0.000001', '-0.5', 'big row', NULL,
  NULL, '[1,2]', '{"k": {"n": [1, {"m": null}]}}', '\xdeadbeef', NULL, '1970-01-01',
  '00:00:00.000001', '1970-01-01 00:00:00', '1970-01-01 00:00:00+00',
  '-178000000 years', '{-2147483648,2147483647}', '{"\u00e9"}', '{1e308,-1e-308}',
  NULL, NULL, NULL, NULL, NULL, repeat('abcd\u00e9', 1000000)),
 (6, false, -1, -1, -1, 3, 'NaN', 'NaN', -0.01, '-0.000001', '3.14159', E'tab\there',
  'x', 'x', '"x"', '0', '\x0102', NULL, '2100-03-01', '00:00:01', '2262-04-12 00:00:00',
  '2262-04-12 00:00:00-12', '1 mon 1 day 00:00:00.000001', NULL, NULL, NULL,
  ROW(NULL, 'only b', 99.99), '::1', NULL, NULL, NULL, NULL),
 (7, true, 42, 42, 42, 42, 3.4028235e38, 1.7976931348623157e308, 1234567890.12,
  '12345678901234567890123456789012.123456', '12345678901234567890.1', 'z', 'z', 'z',
  '[]', '[]', '\x', NULL, '2000-02-29', '23:59:59', '2000-02-29 12:00:00',
  '2000-02-29 12:00:00+14', '178000000 years', '{5,4,3,2,1}', '{"","",""}', '{0.1}',
  ROW(2147483647, repeat('s', 300), -9999.99), NULL, NULL, NULL, NULL, NULL);
CREATE TABLE pwt_tz (id int4, ts timestamp, tz timestamptz);
INSERT INTO pwt_tz VALUES
 (1, '2024-03-10 02:30:00', '2024-03-10 02:30:00-05'),
 (2, '2024-11-03 01:30:00', '2024-11-03 01:30:00-04'),
 (3, '1900-01-01 00:00:00', '1900-01-01 00:00:00+05:53:28'),
 (4, '2038-01-19 03:14:08', '2038-01-19 03:14:08+00'),
 (5, '1969-07-20 20:17:40', '1969-07-20 20:17:40+00'),
 (6, NULL, NULL),
 (7, '2024-06-30 23:59:59.999999', '2024-06-30 23:59:59.999999+05:45');
CREATE TABLE pwt_nan_table (id int4, amount numeric(10,2));
INSERT INTO pwt_nan_table SELECT i, i FROM generate_series(1, 50) i;
INSERT INTO pwt_nan_table VALUES (51, 'NaN');
"""

# column -> the Arrow type the contract maps it to (None: checked separately)
ARROW_TYPES = {
    "id": pa.int32(), "b": pa.bool_(), "i2": pa.int16(), "i4": pa.int32(), "i8": pa.int64(),
    "o": pa.uint32(), "f4": pa.float32(), "f8": pa.float64(),
    "n12": pa.decimal128(12, 2), "n38": pa.decimal128(38, 6), "nu": None,
    "t": pa.utf8(), "vc": pa.utf8(), "bc": pa.utf8(), "js": pa.utf8(), "jb": pa.utf8(),
    "by": pa.binary(), "u": pa.binary(16), "d": pa.date32(), "tm": pa.time64("us"),
    "ts": pa.timestamp("us"), "tz": pa.timestamp("us", tz="UTC"),
    "iv": pa.month_day_nano_interval(), "ai": pa.list_(pa.int32()), "at": pa.list_(pa.utf8()),
    "af": pa.list_(pa.float64()),
    "ac": pa.struct([("a", pa.int32()), ("b", pa.utf8()), ("c", pa.decimal128(6, 2))]),
    "ip": pa.utf8(), "en": pa.utf8(), "pt": pa.utf8(), "dom": pa.int32(), "big": pa.utf8(),
}

# how PostgreSQL gives the expected value of each column (the oracle)
ORACLE_EXPR = {
    "o": "o::int8", "js": "js::text", "jb": "jb::text",
    "d": "(d - date '1970-01-01')",
    "tm": "(extract(epoch from tm) * 1000000)::int8",
    "ts": "(extract(epoch from ts) * 1000000)::int8",
    "tz": "(extract(epoch from tz) * 1000000)::int8",
    "en": "en::text", "pt": "pt::text",
}
# types whose text OUTPUT is wanted but psycopg would parse (inet::text
# would add the netmask that inet's output function leaves out)
RAW_TEXT_TYPES = ("inet", "cidr")


@pytest.fixture(scope="module")
def pg(db):
    with db.cursor() as cur:
        cur.execute(SETUP)
    yield db
    with db.cursor() as cur:
        cur.execute(SETUP[:SETUP.index("CREATE TYPE")])     # the DROP statements


def run_dump(*args, env=None, timeout=300):
    return run_pgwarp("dump", *args, env=env, timeout=timeout)


class IntervalRaw(Loader):
    """interval in PostgreSQL's binary form: (months, days, nanoseconds)."""
    format = Format.BINARY

    def load(self, data):
        us, days, months = struct.unpack(">qii", bytes(data))
        return (months, days, us * 1000)


def oracle_rows(conn, columns, source, order="id"):
    """{column: [values ordered by id]} fetched from PostgreSQL."""
    info = CompositeInfo.fetch(conn, "pwt_comp")
    register_composite(info, conn)
    exprs = [ORACLE_EXPR.get(c, c) for c in columns if c != "iv"]
    names = [c for c in columns if c != "iv"]
    out = {}
    with conn.cursor() as cur:
        for typ in RAW_TEXT_TYPES:
            cur.adapters.register_loader(typ, TextLoader)
        cur.execute("SELECT %s FROM %s ORDER BY %s" % (", ".join(exprs), source, order))
        rows = cur.fetchall()
    for k, c in enumerate(names):
        out[c] = [r[k] for r in rows]
    if "iv" in columns:
        with conn.cursor(binary=True) as cur:
            cur.adapters.register_loader("interval", IntervalRaw)
            cur.execute("SELECT iv FROM %s ORDER BY %s" % (source, order))
            out["iv"] = [r[0] for r in cur.fetchall()]
    return out


def arrow_values(col):
    """A pyarrow column as Python values comparable with oracle_rows()."""
    t = col.type
    if pat.is_date32(t):
        return col.cast(pa.int32()).to_pylist()
    if pat.is_time64(t) or pat.is_timestamp(t):
        return col.cast(pa.int64()).to_pylist()
    if t == pa.month_day_nano_interval():
        return [None if v is None else (v.months, v.days, v.nanoseconds) for v in col.to_pylist()]
    return col.to_pylist()


def canon(v):
    """Exact, comparable form (NaN equal to NaN, -0.0 distinct from 0.0,
    Decimals by exact value, bools distinct from ints)."""
    if v is None:
        return None
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, float):
        if math.isnan(v):
            return ("float", "nan")
        return ("float", v, math.copysign(1.0, v))
    if isinstance(v, Decimal):
        return ("dec",) + v.as_integer_ratio()
    if isinstance(v, (list, tuple)):
        if hasattr(v, "_asdict"):
            return canon(v._asdict())
        return tuple(canon(x) for x in v)
    if isinstance(v, dict):
        return tuple((k, canon(x)) for k, x in v.items())
    if hasattr(v, "bytes") and hasattr(v, "hex") and not isinstance(v, (bytes, str)):
        return v.bytes      # uuid.UUID
    if isinstance(v, memoryview):
        return bytes(v)
    return v


def float4(v):
    """The float4 PostgreSQL printed, as the float32 value it is."""
    if v is None or math.isnan(v):
        return v
    return struct.unpack("<f", struct.pack("<f", v))[0]


def compare_column(name, got, want, ids):
    g = [canon(x) for x in got]
    w = [canon(x) for x in want]
    if g != w:
        bad = [(i, x, y) for i, x, y in zip(ids, g, w) if x != y][:5]
        msg = "\n".join("  id %s: pgwarp %.300r\n         postgres %.300r" % b for b in bad)
        raise AssertionError("column %s differs (%d rows vs %d):\n%s" % (name, len(g), len(w), msg))


def pg_format_types(conn, query):
    """format_type() of each result column of a query (from its result
    descriptor: the type oid and typmod)."""
    with conn.cursor() as cur:
        cur.execute("SELECT * FROM (%s) q LIMIT 0" % query)
        res = cur.pgresult
        pairs = [(res.fname(i).decode(), res.ftype(i), res.fmod(i)) for i in range(res.nfields)]
        out = {}
        for name, oid, mod in pairs:
            cur.execute("SELECT format_type(%s::oid, %s)", (oid, mod))
            out[name] = cur.fetchone()[0]
    return out


def table_format_types(conn, table):
    with conn.cursor() as cur:
        cur.execute("""SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
                       WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped
                       ORDER BY attnum""", (table,))
        return dict(cur.fetchall())


def assert_no_output(res, out, names=()):
    check_error_message(res, names=names)
    assert not os.path.exists(out), "pgwarp left a file at OUT after failing\n" + res.describe()
    left = os.listdir(os.path.dirname(out))
    assert left == [], "pgwarp left files behind: %r" % left


# ------------------------------------------------------------ all types

DUMP_VARIANTS = {
    "table": (["-t", "pwt_all"], 1),
    "query-batches2-lz4": (["-c", "SELECT * FROM pwt_all", "--batch-rows", "2",
                            "--compress", "lz4"], 2),
    "table-zstd": (["-t", "public.pwt_all", "--compress", "zstd"], 1),
}


@pytest.mark.parametrize("variant", list(DUMP_VARIANTS))
def test_dump_every_type(pg, dsn, scratch, variant):
    args, batch_rows = DUMP_VARIANTS[variant]
    out = os.path.join(scratch, "all.arrow")
    res = run_dump("-d", dsn, *args, "-o", out)
    assert res.rc == 0, res.describe()
    reader, table = read_file(out)
    names = list(ARROW_TYPES)
    assert table.schema.names == names

    # types: the contract's mapping; unconstrained numeric gets the largest
    # scale PostgreSQL reports for the data
    with pg.cursor() as cur:
        cur.execute("SELECT max(scale(nu)) FROM pwt_all")
        nu_scale = cur.fetchone()[0]
    for f in table.schema:
        want = ARROW_TYPES[f.name] or pa.decimal128(38, nu_scale)
        if f.name == "dom" and f.type == pa.utf8():
            continue    # a domain: its base type, or (an "other type") text
        assert f.type == want, (f.name, f.type, want)

    # pg_type metadata = format_type()
    fmt_table = table_format_types(pg, "pwt_all")
    fmt_query = pg_format_types(pg, "SELECT * FROM pwt_all")
    for f in table.schema:
        got = (f.metadata or {}).get(b"pg_type", b"").decode()
        if f.name == "dom":
            # a query result reports a domain as its base type
            assert got in (fmt_table["dom"], fmt_query["dom"]), got
            continue
        assert fmt_table[f.name] == fmt_query[f.name]
        assert got == fmt_table[f.name], (f.name, f.metadata)

    # values, against what PostgreSQL returns
    table = table.sort_by("id")
    want = oracle_rows(pg, names, "pwt_all")
    ids = want["id"]
    for name in names:
        got = arrow_values(table.column(name))
        exp = want[name]
        if name == "f4":
            exp = [float4(v) for v in exp]
        if name == "dom" and table.schema.field("dom").type == pa.utf8():
            exp = [None if v is None else str(v) for v in exp]
        compare_column(name, got, exp, ids)

    # batches as asked, statistics consistent with the data
    sizes = [reader.get_batch(i).num_rows for i in range(reader.num_record_batches)]
    if batch_rows == 2:
        assert sizes == [2, 2, 2, 1], sizes
    comp = "lz4_frame" if "lz4" in args else "zstd" if "zstd" in args else "none"
    res = run_pgwarp("inspect", out, "--json")
    assert res.rc == 0, res.describe()
    assert {b["compression"] for b in json.loads(res.out)["batches"]} == {comp}
    check_statistics(out)


def test_timestamptz_is_the_instant_in_any_session_timezone(pg, dsn, scratch):
    """timestamptz -> Timestamp(us, "UTC") holding the instant, whatever the
    session TimeZone; timestamp (without zone) keeps its wall-clock value."""
    with pg.cursor() as cur:
        cur.execute("SELECT (extract(epoch from ts) * 1000000)::int8, "
                    "(extract(epoch from tz) * 1000000)::int8, tz FROM pwt_tz ORDER BY id")
        rows = cur.fetchall()
    want_ts = [r[0] for r in rows]
    want_tz = [r[1] for r in rows]
    want_dt = [r[2] for r in rows]
    n = 0
    with pg.cursor() as cur:
        cur.execute("SELECT current_database()")
        dbname = cur.fetchone()[0]
    for zone in ("Asia/Kolkata", "America/New_York", "Pacific/Chatham", "UTC"):
        for how in ("PGTZ", "options", "database"):
            n += 1
            out = os.path.join(scratch, "tz%d.arrow" % n)
            if how == "PGTZ":
                res = run_dump("-d", dsn, "-c", "SELECT * FROM pwt_tz ORDER BY id", "-o", out,
                               env={"PGTZ": zone})
            elif how == "options":
                res = run_dump("-d", "%s options='-c TimeZone=%s'" % (dsn, zone),
                               "-c", "SELECT * FROM pwt_tz ORDER BY id", "-o", out,
                               env={"PGTZ": "Europe/Moscow"})
            else:
                # the server's default for new sessions
                with pg.cursor() as cur:
                    cur.execute(psycopg.sql.SQL("ALTER DATABASE {} SET TimeZone = {}").format(
                        psycopg.sql.Identifier(dbname), psycopg.sql.Literal(zone)))
                try:
                    res = run_dump("-d", dsn, "-c", "SELECT current_setting('TimeZone') AS zone, "
                                   "* FROM pwt_tz ORDER BY id", "-o", out, env={"PGTZ": None})
                finally:
                    with pg.cursor() as cur:
                        cur.execute(psycopg.sql.SQL("ALTER DATABASE {} RESET TimeZone").format(
                            psycopg.sql.Identifier(dbname)))
            assert res.rc == 0, res.describe()
            _, table = read_file(out)
            if how == "database":
                assert set(table.column("zone").to_pylist()) == {zone}
            assert table.schema.field("tz").type == pa.timestamp("us", tz="UTC")
            assert table.schema.field("ts").type == pa.timestamp("us")
            assert table.column("ts").cast(pa.int64()).to_pylist() == want_ts, (zone, how)
            assert table.column("tz").cast(pa.int64()).to_pylist() == want_tz, (zone, how)
            # and as aware datetimes: the same instants psycopg sees
            assert table.column("tz").to_pylist() == want_dt, (zone, how)
            assert (table.schema.field("tz").metadata or {}).get(b"pg_type") == \
                b"timestamp with time zone"


def test_query_columns_keep_typmods(pg, dsn, scratch):
    """pg_type of query result columns is format_type(type, typmod)."""
    q = ("SELECT 'abc'::varchar(10) AS v, 1.5::numeric(12,2) AS n, 'x'::char(3) AS c, "
         "now()::timestamp(3) AS t3, '1 day'::interval AS i, '{1}'::int4[] AS a, "
         "1::pwt_posint AS dom, 'happy'::pwt_mood AS m, '{\"a\":1}'::jsonb AS j")
    out = os.path.join(scratch, "q.arrow")
    res = run_dump("-d", dsn, "-c", q, "-o", out)
    assert res.rc == 0, res.describe()
    _, table = read_file(out)
    want = pg_format_types(pg, q)
    got = {f.name: (f.metadata or {}).get(b"pg_type", b"").decode() for f in table.schema}
    assert got == want
    assert table.schema.field("n").type == pa.decimal128(12, 2)
    assert table.schema.field("dom").type in (pa.int32(), pa.utf8())
    with pg.cursor() as cur:
        cur.execute("SELECT v, n, c, m::text, j::text FROM (%s) q" % q)
        v, n, c, m, j = cur.fetchone()
    row = table.to_pylist()[0]
    assert (row["v"], row["n"], row["c"], row["m"], row["j"]) == (v, n, c, m, j)


def test_unconstrained_numeric_scale_from_data(pg, dsn, scratch):
    cases = {
        "mixed": "SELECT x::numeric AS x FROM (VALUES ('1.5'), ('2.25'), (NULL), ('-3.125'), "
                 "('100'), ('0.0000')) v(x)",
        "integers": "SELECT x::numeric AS x FROM (VALUES ('1'), ('-99999999999999999999999999999999999999'), ('0')) v(x)",
        "late_scale": "SELECT CASE WHEN i = 30000 THEN i + 0.12345 ELSE i END::numeric AS x "
                      "FROM generate_series(1, 30000) i",
    }
    for name, q in cases.items():
        out = os.path.join(scratch, name + ".arrow")
        res = run_dump("-d", dsn, "-c", q, "--batch-rows", "1000", "-o", out)
        assert res.rc == 0, res.describe()
        _, table = read_file(out)
        with pg.cursor() as cur:
            cur.execute("SELECT max(scale(x)) FROM (%s) q" % q)
            scale = cur.fetchone()[0]
            cur.execute(q)
            want = [r[0] for r in cur.fetchall()]
        assert table.schema.field("x").type == pa.decimal128(38, scale), name
        compare_column("x", table.column("x").to_pylist(), want, list(range(len(want))))


# ------------------------------------------------------- refused values

REFUSED = {
    "numeric_nan": ("SELECT 1 AS ok, 'NaN'::numeric AS bad_nan", "bad_nan"),
    "numeric_inf": ("SELECT 1 AS ok, 'Infinity'::numeric AS bad_inf", "bad_inf"),
    "numeric_ninf": ("SELECT '-Infinity'::numeric AS bad_ninf, 2 AS ok", "bad_ninf"),
    "numeric_39_digits": ("SELECT 1 AS ok, (10::numeric ^ 38)::numeric AS bad_big", "bad_big"),
    "numeric_late_nan": ("SELECT i AS ok, CASE WHEN i = 45000 THEN 'NaN'::numeric "
                         "ELSE i::numeric END AS late_nan FROM generate_series(1, 50000) i",
                         "late_nan"),
    "date_infinity": ("SELECT 1 AS ok, 'infinity'::date AS bad_date", "bad_date"),
    "date_minus_infinity": ("SELECT '-infinity'::date AS bad_date2", "bad_date2"),
    "timestamp_minus_infinity": ("SELECT 1 AS ok, '-infinity'::timestamp AS bad_ts", "bad_ts"),
    "timestamp_infinity": ("SELECT 1 AS ok, 'infinity'::timestamp AS bad_ts2", "bad_ts2"),
    "timestamptz_infinity": ("SELECT 1 AS ok, 'infinity'::timestamptz AS bad_tstz", "bad_tstz"),
    "late_date_infinity": ("SELECT i AS ok, CASE WHEN i = 45000 THEN 'infinity'::date "
                           "ELSE date '2000-01-01' + i END AS late_date "
                           "FROM generate_series(1, 50000) i", "late_date"),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_refused_values(pg, dsn, scratch, name):
    q, col = REFUSED[name]
    out = os.path.join(scratch, "out.arrow")
    res = run_dump("-d", dsn, "-c", q, "--batch-rows", "1000", "-o", out)
    assert_no_output(res, out, names=[col])


def test_refused_value_in_a_table_column(pg, dsn, scratch):
    out = os.path.join(scratch, "out.arrow")
    res = run_dump("-d", dsn, "-t", "pwt_nan_table", "--batch-rows", "10", "-o", out)
    assert_no_output(res, out, names=["amount"])


@pytest.mark.parametrize("name", ["numeric_nan", "numeric_inf", "numeric_ninf",
                                  "numeric_39_digits", "numeric_late_nan"])
def test_numeric_as_text(pg, dsn, scratch, name):
    q, col = REFUSED[name]
    out = os.path.join(scratch, "out.arrow")
    res = run_dump("-d", dsn, "-c", q, "--numeric-as-text", "--batch-rows", "1000", "-o", out)
    assert res.rc == 0, res.describe()
    _, table = read_file(out)
    assert table.schema.field(col).type == pa.utf8()
    with pg.cursor() as cur:
        cur.execute("SELECT %s::text FROM (%s) q" % (col, q))
        want = [r[0] for r in cur.fetchall()]
    assert table.column(col).to_pylist() == want
    assert (table.schema.field(col).metadata or {}).get(b"pg_type") == b"numeric"


# ------------------------------------------------------ failing queries

FAILING = "SELECT i, 1 / (i - 50000) AS x FROM generate_series(1, 100000) i"


def test_query_failing_midway_leaves_no_file(pg, dsn, scratch):
    out = os.path.join(scratch, "out.arrow")
    res = run_dump("-d", dsn, "-c", FAILING, "--batch-rows", "1000", "-o", out)
    assert_no_output(res, out)
    assert any("division by zero" in l for l in error_lines(res)), res.describe()


def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


@pytest.mark.parametrize("failure", ["midway", "refused_value", "bad_sql", "schema_mismatch"])
def test_failed_append_leaves_file_unchanged(pg, dsn, scratch, failure):
    out = os.path.join(scratch, "out.arrow")
    q = "SELECT i, (i * 7)::int4 AS x FROM generate_series(1, 5000) i"
    res = run_dump("-d", dsn, "-c", q, "--batch-rows", "1000", "-o", out)
    assert res.rc == 0, res.describe()
    before, size = sha(out), os.path.getsize(out)
    _, t_before = read_file(out)
    bad = {
        "midway": FAILING,
        "refused_value": "SELECT i, CASE WHEN i = 4000 THEN 'infinity'::date END AS x "
                         "FROM generate_series(1, 5000) i",
        "bad_sql": "SELECT i, x FROM no_such_table_pwt",
        "schema_mismatch": "SELECT i::int8 AS i, 'text' AS x FROM generate_series(1, 10) i",
    }[failure]
    res = run_dump("-d", dsn, "-c", bad, "--batch-rows", "1000", "--append", "-o", out)
    check_error_message(res)
    assert os.path.getsize(out) == size and sha(out) == before, "appended file changed"
    _, t_after = read_file(out)
    assert t_after.equals(t_before)
    assert sorted(os.listdir(scratch)) == ["out.arrow"]


def test_append(pg, dsn, scratch):
    out = os.path.join(scratch, "out.arrow")
    q1 = "SELECT i, md5(i::text) AS m FROM generate_series(1, 2500) i"
    q2 = "SELECT i, md5(i::text) AS m FROM generate_series(2501, 4000) i"
    for q, extra in ((q1, []), (q2, ["--append", "--compress", "zstd"])):
        res = run_dump("-d", dsn, "-c", q, "--batch-rows", "1000", "-o", out, *extra)
        assert res.rc == 0, res.describe()
    reader, table = read_file(out)
    with pg.cursor() as cur:
        cur.execute("SELECT i, md5(i::text) FROM generate_series(1, 4000) i")
        want = cur.fetchall()
    assert list(zip(table.column("i").to_pylist(), table.column("m").to_pylist())) == want
    assert [reader.get_batch(i).num_rows for i in range(reader.num_record_batches)] == \
        [1000, 1000, 500, 1000, 500]
    check_statistics(out)


# ------------------------------------------------------ batches, codecs

@pytest.mark.parametrize("codec", [None, "zstd", "lz4"])
def test_batch_rows_and_compression(pg, dsn, scratch, codec):
    out = os.path.join(scratch, "out.arrow")
    q = ("SELECT i, i * 0.5 AS half, repeat(chr(65 + i % 26), i % 50) AS s, "
         "CASE WHEN i % 7 = 0 THEN NULL ELSE i % 13 END::int2 AS m "
         "FROM generate_series(1, 10000) i")
    args = ["--batch-rows", "1000"] + (["--compress", codec] if codec else [])
    res = run_dump("-d", dsn, "-c", q, "-o", out, *args)
    assert res.rc == 0, res.describe()
    reader, table = read_file(out)
    assert reader.num_record_batches == 10
    assert all(reader.get_batch(i).num_rows == 1000 for i in range(10))
    with pg.cursor() as cur:
        cur.execute(q)
        want = cur.fetchall()
    got = list(zip(*(table.column(c).to_pylist() for c in table.schema.names)))
    assert got == want
    res = run_pgwarp("inspect", out, "--json")
    assert res.rc == 0, res.describe()
    j = json.loads(res.out)
    want_codec = {None: "none", "zstd": "zstd", "lz4": "lz4_frame"}[codec]
    assert [b["compression"] for b in j["batches"]] == [want_codec] * 10
    assert [b["rows"] for b in j["batches"]] == [1000] * 10
    check_statistics(out)


def test_default_batches_are_large(pg, dsn, scratch):
    out = os.path.join(scratch, "out.arrow")
    res = run_dump("-d", dsn, "-c", "SELECT i FROM generate_series(1, 200000) i", "-o", out)
    assert res.rc == 0, res.describe()
    reader, table = read_file(out)
    assert reader.num_record_batches == 1
    assert table.column("i").to_pylist() == list(range(1, 200001))


def test_empty_result(pg, dsn, scratch):
    out = os.path.join(scratch, "out.arrow")
    q = "SELECT 1::int4 AS a, 'x'::text AS b, 1.5::numeric(5,1) AS c WHERE false"
    res = run_dump("-d", dsn, "-c", q, "-o", out)
    assert res.rc == 0, res.describe()
    _, table = read_file(out)
    assert table.num_rows == 0
    assert [f.type for f in table.schema] == [pa.int32(), pa.utf8(), pa.decimal128(5, 1)]


# ------------------------------------------------------------- errors

def test_usage_and_connection_errors(pg, dsn, scratch):
    out = os.path.join(scratch, "out.arrow")
    res = run_dump("-d", dsn, "-c", "SELECT 1")              # no -o
    assert res.rc == 2, res.describe()
    res = run_dump("-d", dsn, "-o", out)                     # neither -c nor -t
    assert res.rc == 2, res.describe()
    res = run_dump("-d", dsn, "-c", "SELECT 1", "-t", "pwt_all", "-o", out)
    assert res.rc == 2, res.describe()
    res = run_dump("-d", dsn, "-c", "SELECT 1", "-o", out, "--batch-rows", "zero")
    assert res.rc == 2, res.describe()
    res = run_dump("-d", dsn, "-c", "SELECT 1", "-o", out, "--compress", "snappy")
    assert res.rc == 2, res.describe()
    res = run_dump("-d", "host=/nonexistent-socket-dir port=1", "-c", "SELECT 1", "-o", out,
                   timeout=60)
    assert_no_output(res, out)
    res = run_dump("-d", dsn, "-c", "SELEC broken", "-o", out)
    assert_no_output(res, out)
    res = run_dump("-d", dsn, "-t", "pwt_no_such_table", "-o", out)
    assert_no_output(res, out, names=["pwt_no_such_table"])
    res = run_dump("-d", dsn, "-c", "SELECT 1", "-o", os.path.join(scratch, "no", "dir.arrow"))
    check_error_message(res)
    assert os.listdir(scratch) == []


# ------------------------------------------------------- constant memory

def _run_measured(args, timeout, errpath):
    """Run pgwarp; return (rc, peak RSS in bytes, stderr).  The peak is the
    exec'd program's own: /usr/bin/time's %M when available (a small parent,
    so the pre-exec copy of this big Python process does not count), else
    the high-water mark VmHWM polled from /proc once pgwarp runs."""
    use_time = os.access("/usr/bin/time", os.X_OK)
    rsspath = errpath + ".rss"
    cmd = [PGWARP_BIN] + args
    if use_time:
        cmd = ["/usr/bin/time", "-f", "%M", "-o", rsspath] + cmd
    comm = os.path.basename(PGWARP_BIN)[:15]
    hwm = 0
    with open(errpath, "wb") as err:
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.time() + timeout
        while p.poll() is None:
            if time.time() > deadline:
                p.kill()
                p.wait()
                break
            if not use_time:
                try:
                    with open("/proc/%d/status" % p.pid) as f:
                        st = dict(l.split(":", 1) for l in f if ":" in l)
                    if st["Name"].strip() == comm:
                        hwm = max(hwm, int(st["VmHWM"].split()[0]) * 1024)
                except (OSError, KeyError, ValueError):
                    pass
            time.sleep(0.02)
    if use_time:
        with open(rsspath) as f:
            hwm = int(f.read().split()[-1]) * 1024
    with open(errpath, "rb") as f:
        return p.returncode, hwm, f.read().decode(errors="replace")


def test_constant_memory(pg, dsn, scratch):
    """5M rows stream through: the dump's peak RSS stays far below what
    holding every row would take (at least the size of the Arrow data)."""
    n = 5_000_000
    out = os.path.join(scratch, "big.arrow")
    q = ("SELECT i::int8 AS a, (i %% 1000)::int4 AS b, i::float8 / 3 AS c, md5(i::text) AS t "
         "FROM generate_series(1, %d) i" % n)
    rc, rss, err = _run_measured(["dump", "-d", dsn, "-c", q, "--batch-rows", "65536",
                                  "-o", out], 240, os.path.join(scratch, "stderr.txt"))
    assert rc == 0, err[-2000:]
    size = os.path.getsize(out)
    reader = ipc.open_file(pa.memory_map(out))
    assert sum(reader.get_batch(i).num_rows for i in range(reader.num_record_batches)) == n
    last = reader.get_batch(reader.num_record_batches - 1)
    with pg.cursor() as cur:
        cur.execute("SELECT * FROM (%s) q WHERE a = %d" % (q, n))
        want = cur.fetchone()
    assert tuple(last.column(k)[-1].as_py() for k in range(4)) == want
    # holding all rows needs at least `size` bytes (the Arrow data itself);
    # a streaming dump needs a few batches of 65536 rows (~4 MB each)
    assert rss < size / 4, "max RSS %.1f MB for %.1f MB of data" % (rss / 2 ** 20, size / 2 ** 20)


# ------------------------------------------------------ the stream format

@pytest.mark.parametrize("extra", [[], ["--batch-rows", "2", "--compress", "zstd"]])
def test_dump_stream_format(pg, dsn, scratch, extra):
    """--format stream writes the IPC stream format: pyarrow reads it as a
    stream (and fully validates it) with the same schema and values as the
    file format's dump of the same table, and arrow_fdw reads it too."""
    f_out = os.path.join(scratch, "all.arrow")
    s_out = os.path.join(scratch, "all.stream")
    res = run_dump("-d", dsn, "-t", "pwt_all", "-o", f_out, *extra)
    assert res.rc == 0, res.describe()
    res = run_dump("-d", dsn, "-t", "pwt_all", "-o", s_out, "--format", "stream", *extra)
    assert res.rc == 0, res.describe()
    with open(s_out, "rb") as f:
        assert f.read(6) != b"ARROW1"
    stream = ipc.open_stream(s_out).read_all()
    stream.validate(full=True)
    _, table = read_file(f_out)
    # the same types and pg_type metadata; statistics live in a file's footer only
    assert stream.schema.equals(table.schema, check_metadata=False)
    for sf, ff in zip(stream.schema, table.schema):
        assert sf.metadata == {k: v for k, v in ff.metadata.items()
                               if k not in (b"min_values", b"max_values")}, sf.name
    assert stream.num_rows == table.num_rows
    for name in table.schema.names:
        # NaN != NaN in equals(): compare the values' canonical forms
        assert [canon(v) for v in arrow_values(stream.column(name))] == \
            [canon(v) for v in arrow_values(table.column(name))], name
    with pg.cursor() as cur:
        cur.execute("CREATE EXTENSION IF NOT EXISTS pg_warp")
        cur.execute("DROP FOREIGN TABLE IF EXISTS pwt_stream")
        cur.execute("CREATE FOREIGN TABLE pwt_stream (id integer) SERVER arrow_fdw "
                    "OPTIONS (file '%s')" % s_out.replace("'", "''"))
        cur.execute("SELECT count(*), sum(id) FROM pwt_stream")
        got = cur.fetchone()
        cur.execute("SELECT count(*), sum(id) FROM pwt_all")
        assert got == cur.fetchone()
        cur.execute("DROP FOREIGN TABLE pwt_stream")


def test_dump_stream_format_usage_errors(dsn, scratch):
    out = os.path.join(scratch, "x.stream")
    res = run_dump("-d", dsn, "-c", "SELECT 1", "-o", out, "--format", "stream", "--append")
    assert res.rc == 2 and "--append" in res.err, res.describe()
    res = run_dump("-d", dsn, "-c", "SELECT 1", "-o", out, "--format", "parquet")
    assert res.rc == 2 and "unknown format" in res.err, res.describe()
    assert not os.path.exists(out)
