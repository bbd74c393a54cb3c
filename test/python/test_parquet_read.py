"""The Parquet reader (src/parquet) against pyarrow: files written by pyarrow
with every codec, encoding and data page version it writes, and by DuckDB,
must print through `pgwarp cat` exactly the values pyarrow reads back from
the same file.  Files are written without the embedded Arrow schema, so
pyarrow reads the Parquet types as they are, as our reader does.
Malformed files must fail with a message naming the file and an offset,
never crash."""
import datetime
import decimal
import os
import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pwhelpers import assert_rows_match, cat_rows, parse_cat

CODECS = ["none", "snappy", "gzip", "zstd", "lz4", "brotli"]
N = 2000


def typed_table(n=N, seed=7):
    rnd = random.Random(seed)

    def maybe(v, i):
        return None if i % 7 == 3 else v

    base = datetime.datetime(2000, 1, 1)
    cols = {
        "b": pa.array([maybe(i % 3 == 0, i) for i in range(n)], pa.bool_()),
        "i8": pa.array([maybe(rnd.randint(-128, 127), i) for i in range(n)], pa.int8()),
        "u8": pa.array([maybe(rnd.randint(0, 255), i) for i in range(n)], pa.uint8()),
        "i16": pa.array([maybe(rnd.randint(-32768, 32767), i) for i in range(n)], pa.int16()),
        "u16": pa.array([maybe(rnd.randint(0, 65535), i) for i in range(n)], pa.uint16()),
        "i32": pa.array([maybe(rnd.randint(-2**31, 2**31 - 1), i) for i in range(n)], pa.int32()),
        "u32": pa.array([maybe(rnd.randint(0, 2**32 - 1), i) for i in range(n)], pa.uint32()),
        "i64": pa.array([maybe(rnd.randint(-2**63, 2**63 - 1), i) for i in range(n)], pa.int64()),
        "u64": pa.array([maybe(rnd.randint(0, 2**64 - 1), i) for i in range(n)], pa.uint64()),
        "seq": pa.array(list(range(n)), pa.int64()),
        "f32": pa.array([maybe(rnd.uniform(-1e6, 1e6), i) for i in range(n)], pa.float32()),
        "f64": pa.array([maybe(rnd.uniform(-1e9, 1e9), i) for i in range(n)], pa.float64()),
        "f16": pa.array([maybe(float(rnd.randint(-100, 100)) / 4, i) for i in range(n)], pa.float16()),
        "d32": pa.array([maybe(decimal.Decimal(rnd.randint(-10**8, 10**8)).scaleb(-2), i)
                         for i in range(n)], pa.decimal128(9, 2)),
        "d64": pa.array([maybe(decimal.Decimal(rnd.randint(-10**17, 10**17)).scaleb(-4), i)
                         for i in range(n)], pa.decimal128(18, 4)),
        "d38": pa.array([maybe(decimal.Decimal(rnd.randint(-10**37, 10**37)).scaleb(-10), i)
                         for i in range(n)], pa.decimal128(38, 10)),
        "date": pa.array([maybe(datetime.date(1970, 1, 1) + datetime.timedelta(days=rnd.randint(-30000, 30000)), i)
                          for i in range(n)], pa.date32()),
        "t_ms": pa.array([maybe(rnd.randint(0, 86399999), i) for i in range(n)], pa.time32("ms")),
        "t_us": pa.array([maybe(rnd.randint(0, 86399999999), i) for i in range(n)], pa.time64("us")),
        "t_ns": pa.array([maybe(rnd.randint(0, 86399999999999), i) for i in range(n)], pa.time64("ns")),
        "ts_ms": pa.array([maybe(rnd.randint(-10**12, 10**12), i) for i in range(n)], pa.timestamp("ms")),
        "ts_us": pa.array([maybe(rnd.randint(-10**15, 10**15), i) for i in range(n)], pa.timestamp("us", "UTC")),
        "ts_ns": pa.array([maybe(rnd.randint(-10**18, 10**18), i) for i in range(n)], pa.timestamp("ns")),
        "s": pa.array([maybe("v%d" % rnd.randint(0, 50), i) for i in range(n)], pa.string()),
        "s_uniq": pa.array([maybe("row %d %s" % (i, "x" * (i % 13)), i) for i in range(n)], pa.string()),
        "bin": pa.array([maybe(bytes([rnd.randint(0, 255) for _ in range(i % 9)]), i)
                         for i in range(n)], pa.binary()),
        "fsb": pa.array([maybe(bytes([rnd.randint(0, 255) for _ in range(5)]), i)
                         for i in range(n)], pa.binary(5)),
        "req": pa.array([i * 3 for i in range(n)], pa.int32()),
    }
    fields = [pa.field(k, v.type, nullable=(k != "req")) for k, v in cols.items()]
    return pa.table(list(cols.values()), schema=pa.schema(fields))


def nested_table(n=N, seed=11):
    rnd = random.Random(seed)

    def lst(i):
        if i % 11 == 5:
            return None
        return [None if j % 4 == 3 else rnd.randint(-99, 99) for j in range(i % 5)]

    return pa.table({
        "id": pa.array(range(n), pa.int32()),
        "l": pa.array([lst(i) for i in range(n)], pa.list_(pa.int32())),
        "ls": pa.array([None if i % 9 == 1 else ["a%d" % j for j in range(i % 4)] for i in range(n)],
                       pa.list_(pa.string())),
        "st": pa.array([None if i % 6 == 2 else {"x": None if i % 5 == 0 else i, "y": "s%d" % (i % 3)}
                        for i in range(n)],
                       pa.struct([("x", pa.int64()), ("y", pa.string())])),
        "m": pa.array([None if i % 8 == 7 else [("k%d" % j, None if j == 1 else j * i) for j in range(i % 3)]
                       for i in range(n)], pa.map_(pa.string(), pa.int64())),
        "sl": pa.array([None if i % 10 == 0 else {"v": [i, i + 1][: i % 3]} for i in range(n)],
                       pa.struct([("v", pa.list_(pa.int64()))])),
    })


def write(path, table, **kw):
    kw.setdefault("store_schema", False)
    pq.write_table(table, path, **kw)
    os.chmod(path, 0o644)
    return path


def check_cat(pgwarp, path):
    oracle = pq.read_table(path)
    oracle.validate(full=True)
    res = pgwarp("cat", path)
    assert res.rc == 0, res.describe()
    assert_rows_match(cat_rows(oracle.to_batches()), parse_cat(res.out), path)


VARIANTS = [
    ("plain", dict(use_dictionary=False)),
    ("dict", dict(use_dictionary=True)),
    ("v2", dict(data_page_version="2.0")),
    ("v2_plain", dict(data_page_version="2.0", use_dictionary=False)),
    ("small_pages", dict(data_page_size=512, row_group_size=700)),
    ("delta", dict(use_dictionary=False, column_encoding={
        "i32": "DELTA_BINARY_PACKED", "i64": "DELTA_BINARY_PACKED", "u64": "DELTA_BINARY_PACKED",
        "seq": "DELTA_BINARY_PACKED", "date": "DELTA_BINARY_PACKED", "ts_ns": "DELTA_BINARY_PACKED",
        "s": "DELTA_LENGTH_BYTE_ARRAY", "s_uniq": "DELTA_BYTE_ARRAY", "bin": "DELTA_LENGTH_BYTE_ARRAY",
        "fsb": "DELTA_BYTE_ARRAY", "d38": "DELTA_BYTE_ARRAY"})),
    ("delta_v2", dict(use_dictionary=False, data_page_version="2.0", column_encoding={
        "i32": "DELTA_BINARY_PACKED", "i64": "DELTA_BINARY_PACKED", "s_uniq": "DELTA_BYTE_ARRAY",
        "s": "DELTA_LENGTH_BYTE_ARRAY", "b": "RLE"})),
    ("split", dict(use_dictionary=False, column_encoding={
        "f32": "BYTE_STREAM_SPLIT", "f64": "BYTE_STREAM_SPLIT", "i32": "BYTE_STREAM_SPLIT",
        "i64": "BYTE_STREAM_SPLIT", "fsb": "BYTE_STREAM_SPLIT", "d38": "BYTE_STREAM_SPLIT",
        "f16": "BYTE_STREAM_SPLIT"})),
    ("int96", dict(use_deprecated_int96_timestamps=True)),
    ("v1_format", dict(version="1.0")),
]


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("variant", [v[0] for v in VARIANTS])
def test_types(pgwarp, scratch, variant, codec):
    kw = dict(dict(VARIANTS)[variant])
    t = typed_table()
    if variant == "v1_format":
        # Parquet format 1.0 has no unsigned 32/64, nanosecond or FLOAT16 types
        t = t.drop(["u32", "u64", "t_ns", "ts_ns", "f16"])
    path = write(os.path.join(scratch, "t.parquet"), t, compression=codec,
                 row_group_size=kw.pop("row_group_size", 1000), **kw)
    check_cat(pgwarp, path)


@pytest.mark.parametrize("codec", ["snappy", "zstd"])
@pytest.mark.parametrize("v2", [False, True])
def test_nested(pgwarp, scratch, codec, v2):
    path = write(os.path.join(scratch, "n.parquet"), nested_table(), compression=codec,
                 row_group_size=800, data_page_version="2.0" if v2 else "1.0")
    check_cat(pgwarp, path)


def test_empty_and_all_null(pgwarp, scratch):
    t = pa.table({"a": pa.array([None] * 50, pa.int32()), "n": pa.nulls(50),
                  "s": pa.array([None] * 50, pa.string())})
    check_cat(pgwarp, write(os.path.join(scratch, "nulls.parquet"), t))
    check_cat(pgwarp, write(os.path.join(scratch, "empty.parquet"), t.slice(0, 0)))


def test_duckdb_files(pgwarp, scratch):
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    for codec in ("uncompressed", "snappy", "zstd", "gzip", "lz4", "brotli"):
        for ver in ("V1", "V2"):
            path = os.path.join(scratch, "duck_%s_%s.parquet" % (codec, ver))
            con.execute(
                "COPY (SELECT i::INT AS i, i::BIGINT * 1000003 AS big, "
                "CASE WHEN i %% 5 = 0 THEN NULL ELSE 'name ' || (i %% 97) END AS s, "
                "(i / 7.0)::DOUBLE AS f, (i * 1.25)::DECIMAL(12, 2) AS d, "
                "DATE '2000-01-01' + (i %% 4000)::INT AS dt, "
                "TIMESTAMP '2001-02-03 04:05:06' + to_seconds(i * 37) AS ts, "
                "i %% 3 = 0 AS b, [i, i + 1] AS l, {'a': i, 'b': 's' || i} AS st "
                "FROM range(5000) t(i)) TO '%s' (FORMAT parquet, COMPRESSION %s, "
                "ROW_GROUP_SIZE 1500, PARQUET_VERSION %s)" % (path, codec, ver))
            os.chmod(path, 0o644)
            check_cat(pgwarp, path)


# ---------------------------------------------------------------- bad files

def test_bad_files(pgwarp, scratch):
    good = write(os.path.join(scratch, "good.parquet"), typed_table(400), compression="snappy",
                 row_group_size=150)
    data = open(good, "rb").read()
    rnd = random.Random(5)
    variants = {
        "truncated": data[:len(data) // 2],
        "no_tail_magic": data[:-4] + b"XXXX",
        "footer_len": data[:-8] + (len(data) * 2).to_bytes(4, "little") + b"PAR1",
        "tiny": b"PAR1PAR1",
    }
    flen = int.from_bytes(data[-8:-4], "little")
    foot = len(data) - 8 - flen
    for k in range(40):
        b = bytearray(data)
        # corrupt the footer or the pages
        lo, hi = (foot, len(data) - 8) if k % 2 else (4, foot)
        for _ in range(1 + k % 4):
            b[rnd.randrange(lo, hi)] = rnd.randrange(256)
        variants["flip%d" % k] = bytes(b)
    for name, blob in variants.items():
        path = os.path.join(scratch, name + ".parquet")
        with open(path, "wb") as f:
            f.write(blob)
        res = pgwarp("cat", path)
        assert res.rc in (0, 1), (name, res.describe())   # an error, never a signal
        if res.rc == 1:
            msg = res.err
            assert path in msg, (name, msg)
        if name in ("truncated", "no_tail_magic", "footer_len", "tiny"):
            assert res.rc == 1 and "offset" in res.err, (name, res.err)


def test_rewrite_to_arrow(pgwarp, scratch):
    """`pgwarp rewrite` takes Parquet input: the Arrow file it writes holds
    the values pyarrow reads from the Parquet file."""
    src = write(os.path.join(scratch, "rw.parquet"), typed_table(2000), compression="zstd",
                row_group_size=300)
    out = os.path.join(scratch, "rw.arrow")
    res = pgwarp("rewrite", src, out, "--batch-rows", "700")
    assert res.rc == 0, res.describe()
    res = pgwarp("cat", out)
    assert res.rc == 0, res.describe()
    assert_rows_match(cat_rows(pq.read_table(src).to_batches()), parse_cat(res.out), out)
