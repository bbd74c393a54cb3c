#!/usr/bin/env python3
"""Write the small Arrow files that test/unit/test_arrow_read.c reads.

The values are fixed; the C test checks them.  Regenerate with
    python3 test/unit/data/make_fixtures.py
(pyarrow is the reference implementation the reader is checked against.)
"""
import datetime
import decimal
import os

import struct
import pyarrow as pa
import pyarrow.ipc as ipc

HERE = os.path.dirname(os.path.abspath(__file__))


def types_batch(base):
    """One batch of 3 rows covering every supported type; `base` shifts
    some values so that batches differ."""
    utc = datetime.timezone.utc
    cols = {
        "i8": pa.array([1 + base, -2, None], pa.int8()),
        "u64": pa.array([0, 2**64 - 1, 5 + base], pa.uint64()),
        "i32": pa.array([10 + base, 20, 30], pa.int32()),
        # 1.5, -0.25, 65504 as IEEE half floats (no numpy needed)
        "f16": pa.Array.from_buffers(pa.float16(), 3, [
            None, pa.py_buffer(struct.pack("<3H", 0x3E00, 0xB400, 0x7BFF))]),
        "f32": pa.array([0.5, None, -3.0], pa.float32()),
        "f64": pa.array([1.25, float("nan"), float("-inf")], pa.float64()),
        "b": pa.array([True, False, None], pa.bool_()),
        "s": pa.array(["a", "", "h\u00e9llo"], pa.utf8()),
        "ls": pa.array(["x", None, "yz"], pa.large_utf8()),
        "bin": pa.array([b"\x00\x01", b"", None], pa.binary()),
        "lbin": pa.array([b"q", b"rs", b""], pa.large_binary()),
        "fsb": pa.array([b"abc", None, b"xyz"], pa.binary(3)),
        "dec": pa.array([decimal.Decimal("123.45"), decimal.Decimal("-1.00"), None],
                        pa.decimal128(10, 2)),
        "d32": pa.array([datetime.date(1970, 1, 2), datetime.date(2000, 1, 1), None],
                        pa.date32()),
        "d64": pa.array([datetime.date(1970, 1, 2), None, datetime.date(1969, 12, 31)],
                        pa.date64()),
        "t32": pa.array([1, 86399, None], pa.time32("s")),
        "t64": pa.array([1000, None, 5], pa.time64("ns")),
        "ts": pa.array([datetime.datetime(2020, 1, 1, tzinfo=utc), None,
                        datetime.datetime(1970, 1, 1, 0, 0, 1, tzinfo=utc)],
                       pa.timestamp("us", tz="UTC")),
        "ts_naive": pa.array([0, 1, -1], pa.timestamp("ms")),
        "dur": pa.array([5, -5, None], pa.duration("ms")),
        "iv": pa.array([pa.MonthDayNano([1, 2, 3]), None, pa.MonthDayNano([-1, 0, 7])],
                       pa.month_day_nano_interval()),
        "lst": pa.array([[1, 2], [], None], pa.list_(pa.int32())),
        "llst": pa.array([["a"], None, ["b", "c"]], pa.large_list(pa.utf8())),
        "fsl": pa.array([[1, 2], None, [5, 6]], pa.list_(pa.int16(), 2)),
        "st": pa.array([{"a": 1, "b": "x"}, None, {"a": None, "b": "z"}],
                       pa.struct([("a", pa.int32()), ("b", pa.utf8())])),
        "mp": pa.array([[("k1", 1), ("k2", 2)], None, []],
                       pa.map_(pa.utf8(), pa.int32())),
        "dict": pa.array(["red", "green", None], pa.utf8()).dictionary_encode(),
        "nul": pa.nulls(3),
    }
    return pa.record_batch(list(cols.values()), names=list(cols.keys()))


def write_file(name, batches, **opts):
    path = os.path.join(HERE, name)
    with ipc.new_file(path, batches[0].schema,
                      options=ipc.IpcWriteOptions(**opts)) as w:
        for b in batches:
            w.write_batch(b)


def write_stream(name, batches, **opts):
    path = os.path.join(HERE, name)
    with ipc.new_stream(path, batches[0].schema,
                        options=ipc.IpcWriteOptions(**opts)) as w:
        for b in batches:
            w.write_batch(b)


def main():
    # the dictionary must be the same in both batches of a file
    b0 = types_batch(0)
    b1 = types_batch(1)
    write_file("types.arrow", [b0, b1])
    write_stream("types.arrows", [b0, b1])
    write_file("types_lz4.arrow", [b0, b1], compression="lz4")
    write_file("types_zstd.arrow", [b0, b1], compression="zstd")
    write_stream("types_legacy.arrows", [b0], use_legacy_format=True)

    # dictionary deltas and replacement (stream format)
    schema = pa.schema([("c", pa.dictionary(pa.int16(), pa.utf8()))])

    def dict_batch(values, indices):
        arr = pa.DictionaryArray.from_arrays(pa.array(indices, pa.int16()),
                                             pa.array(values, pa.utf8()))
        return pa.record_batch([arr], schema=schema)

    write_stream("dict_delta.arrows",
                 [dict_batch(["a", "b"], [0, 1, 0]),
                  dict_batch(["a", "b", "c"], [2, None, 1]),
                  dict_batch(["a", "b", "c", "d"], [3, 0])],
                 emit_dictionary_deltas=True)
    write_stream("dict_replace.arrows",
                 [dict_batch(["a", "b"], [1, 0]),
                  dict_batch(["z"], [0, 0])])

    # statistics in field metadata (as pgwarp dump writes them)
    stats_schema = pa.schema([
        pa.field("id", pa.int64(), metadata={"min_values": "1,-170141183460469231731687303715884105728",
                                              "max_values": "10,"}),
        pa.field("x", pa.float64(), metadata={"min_values": "-inf,0.5",
                                               "max_values": "nan,1e300"}),
        pa.field("bad", pa.int32(), metadata={"min_values": "1,2,3",
                                               "max_values": "1,2"}),
    ])
    sb = pa.record_batch([pa.array([1, 10], pa.int64()), pa.array([0.0, 1.0]),
                          pa.array([1, 2], pa.int32())], schema=stats_schema)
    write_file("stats.arrow", [sb, sb])

    # nesting deeper than ARROW_MAX_NESTING (64), and an unsupported type
    t = pa.int32()
    for _ in range(70):
        t = pa.list_(t)
    # (pyarrow refuses to write batches this deep: a schema-only file)
    with ipc.new_file(os.path.join(HERE, "deep.arrow"), pa.schema([("deep", t)])):
        pass
    ub = pa.UnionArray.from_dense(pa.array([0, 1], pa.int8()), pa.array([0, 0], pa.int32()),
                                  [pa.array([1], pa.int64()), pa.array(["a"])], ["i", "s"])
    write_file("union.arrow", [pa.record_batch([pa.array([1, 2], pa.int32()), ub],
                                               names=["ok", "u"])])

    # compressed slices: pyarrow stores whole buffers of sliced arrays, so
    # buffers claim more bytes than the batch uses
    n = 300
    big = pa.record_batch([
        pa.array([None if i % 5 == 0 else i for i in range(n)], pa.int32()),
        pa.array([str(i) for i in range(n)], pa.utf8()),
        pa.array([[i, i + 1] for i in range(n)], pa.list_(pa.int64())),
    ], names=["i", "s", "l"])
    for codec in ("lz4", "zstd"):
        write_file("sliced_%s.arrow" % codec, [big.slice(7, 100), big.slice(290, 10)],
                   compression=codec)

    # one batch of 1000 rows for loads by row range (arrow_load_column_range):
    # nulls at irregular places, a column without nulls, booleans, a
    # dictionary, 16-byte decimals, and columns that cannot be range-loaded
    n = 1000
    rb = pa.record_batch([
        pa.array([None if i % 7 == 3 or 500 <= i < 530 else i * 3 - 1000 for i in range(n)],
                 pa.int32()),
        pa.array([i * 1234567891 - 10**12 for i in range(n)], pa.int64()),
        pa.array([None if i % 11 == 0 else i % 3 == 0 for i in range(n)], pa.bool_()),
        pa.array([["x", "yy", None, "zzz"][i % 4] for i in range(n)]).dictionary_encode(),
        pa.array([None if i % 13 == 5 else decimal.Decimal(i) / 100 for i in range(n)],
                 pa.decimal128(12, 2)),
        pa.array([float(i) / 8 for i in range(n)], pa.float64()),
        pa.array([str(i) for i in range(n)], pa.utf8()),
    ], names=["i32", "i64", "b", "dict", "dec", "f64", "s"])
    write_file("range.arrow", [rb])
    write_file("range_lz4.arrow", [rb], compression="lz4")

    # an empty file (no batches) and empty batches
    write_file("empty.arrow", [pa.record_batch([pa.array([], pa.utf8())], names=["s"])])


if __name__ == "__main__":
    main()
