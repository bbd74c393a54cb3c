#!/usr/bin/env python3
"""Write the seed corpus of the reader fuzzer (test/fuzz/corpus/).

Small Arrow files made by pyarrow: file and stream format, every supported
type, dictionaries (with deltas and replacement), nesting, list views, LZ4 and ZSTD
compression, the legacy stream format, sliced batches, tail garbage.  Kept
small (a few KB each) so that the fuzzer mutates metadata, not bulk data.

    python3 test/fuzz/make_corpus.py
"""
import datetime
import decimal
import io
import os
import struct

import pyarrow as pa
import pyarrow.ipc as ipc

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def to_bytes(batches, stream=False, schema=None, **opts):
    sink = io.BytesIO()
    schema = schema or batches[0].schema
    options = ipc.IpcWriteOptions(**opts)
    w = (ipc.new_stream if stream else ipc.new_file)(sink, schema, options=options)
    for b in batches:
        w.write_batch(b)
    w.close()
    return sink.getvalue()


def put(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def rb(**cols):
    return pa.record_batch(list(cols.values()), names=list(cols.keys()))


def list_views():
    """ListView / LargeListView columns (read as lists)."""
    vals = [[1, 2], None, [], [3], [4, None, 5]]
    b = rb(lv=pa.array(vals, pa.list_view(pa.int32())),
           llv=pa.array(vals, pa.large_list_view(pa.int64())),
           ooo=pa.ListViewArray.from_arrays(pa.array([3, 0, 1, 0, 2], pa.int32()),
                                            pa.array([1, 2, 1, 0, 2], pa.int32()),
                                            pa.array([7, 8, 9, 10], pa.int16())))
    put("list_views.arrow", to_bytes([b]))
    put("list_views.arrows", to_bytes([b.slice(1)], stream=True, compression="zstd"))


def main():
    os.makedirs(OUT, exist_ok=True)
    list_views()
    utc = datetime.timezone.utc

    ints = rb(i8=pa.array([1, None, -128], pa.int8()),
              u16=pa.array([0, 65535, None], pa.uint16()),
              i32=pa.array([1, 2, 3], pa.int32()),
              u64=pa.array([2**64 - 1, 0, None], pa.uint64()),
              i64=pa.array([None, -1, 2**63 - 1], pa.int64()))
    floats = rb(f16=pa.Array.from_buffers(pa.float16(), 3, [
                    None, pa.py_buffer(struct.pack("<3H", 0x3C00, 0x7C00, 0x0001))]),
                f32=pa.array([1.5, None, float("nan")], pa.float32()),
                f64=pa.array([-0.0, 1e300, None], pa.float64()),
                b=pa.array([True, None, False], pa.bool_()))
    strings = rb(s=pa.array(["a", None, "xyz"]),
                 ls=pa.array(["", "q", None], pa.large_utf8()),
                 bi=pa.array([b"\x00", None, b""], pa.binary()),
                 lb=pa.array([b"ab", b"c", None], pa.large_binary()),
                 fsb=pa.array([b"ab", None, b"cd"], pa.binary(2)))
    temporal = rb(d32=pa.array([0, None, -1], pa.date32()),
                  d64=pa.array([86400000, None, 0], pa.date64()),
                  t32=pa.array([1, None, 2], pa.time32("ms")),
                  t64=pa.array([1, None, 2], pa.time64("us")),
                  ts=pa.array([0, None, 1], pa.timestamp("ns", tz="Europe/Paris")),
                  dur=pa.array([1, None, 2], pa.duration("s")),
                  ym=pa.array([1, None, -2], pa.month_interval()) if hasattr(pa, "month_interval") else pa.array([1, None, -2], pa.int32()),
                  mdn=pa.array([pa.MonthDayNano([1, 2, 3]), None, pa.MonthDayNano([0, 0, 0])],
                               pa.month_day_nano_interval()),
                  dec=pa.array([decimal.Decimal("1.5"), None, decimal.Decimal("-99.9")],
                               pa.decimal128(5, 1)))
    nested = rb(l=pa.array([[1, None], None, []], pa.list_(pa.int32())),
                ll=pa.array([["a"], [], None], pa.large_list(pa.utf8())),
                fl=pa.array([[1, 2], None, [3, 4]], pa.list_(pa.float64(), 2)),
                st=pa.array([{"x": 1, "y": [True]}, None, {"x": None, "y": None}],
                            pa.struct([("x", pa.int64()), ("y", pa.list_(pa.bool_()))])),
                m=pa.array([[("a", 1)], None, [("b", None), ("c", 3)]],
                           pa.map_(pa.utf8(), pa.int32())),
                ls=pa.array([[[1], [2, 3]], None, [[]]], pa.list_(pa.list_(pa.int8()))),
                n=pa.nulls(3))
    dicts = rb(d=pa.array(["x", "y", None]).dictionary_encode(),
               d8=pa.DictionaryArray.from_arrays(pa.array([0, 1, 0], pa.int8()),
                                                 pa.array([1.5, 2.5])),
               dl=pa.DictionaryArray.from_arrays(pa.array([1, 0, None], pa.uint8()),
                                                 pa.array([[1], [2, 3]], pa.list_(pa.int16()))))

    for name, b in [("ints", ints), ("floats", floats), ("strings", strings),
                    ("temporal", temporal), ("nested", nested), ("dicts", dicts)]:
        put(name + ".arrow", to_bytes([b, b.slice(1, 2)]))
        put(name + ".arrows", to_bytes([b], stream=True))
    put("nested_lz4.arrow", to_bytes([nested], compression="lz4"))
    put("strings_zstd.arrows", to_bytes([strings, strings.slice(1)], stream=True,
                                        compression="zstd"))
    put("temporal_zstd.arrow", to_bytes([temporal], compression="zstd"))
    put("dicts_lz4.arrows", to_bytes([dicts], stream=True, compression="lz4"))
    put("legacy.arrows", to_bytes([ints], stream=True, use_legacy_format=True))

    # dictionary deltas and replacement
    schema = pa.schema([("c", pa.dictionary(pa.int16(), pa.utf8()))])

    def db(values, idx):
        return pa.record_batch([pa.DictionaryArray.from_arrays(
            pa.array(idx, pa.int16()), pa.array(values))], schema=schema)

    put("delta.arrows", to_bytes([db(["a"], [0]), db(["a", "b"], [1, None]),
                                  db(["a", "b", "c"], [2])],
                                 stream=True, emit_dictionary_deltas=True))
    put("replace.arrows", to_bytes([db(["a", "b"], [1]), db(["z"], [0, 0])],
                                   stream=True))
    # a file followed by the start of an interrupted append
    f = to_bytes([ints])
    put("tail.arrow", f + f[8:200])
    # statistics metadata
    sschema = pa.schema([pa.field("v", pa.int32(), metadata={
        "min_values": "1,", "max_values": "3,"}),
        pa.field("w", pa.float32(), metadata={"min_values": "nan,-inf",
                                               "max_values": "1.5,inf"})])
    sb = pa.record_batch([pa.array([1, 3], pa.int32()),
                          pa.array([1.5, None], pa.float32())], schema=sschema)
    put("stats.arrow", to_bytes([sb, sb.slice(0, 0)]))


if __name__ == "__main__":
    main()
