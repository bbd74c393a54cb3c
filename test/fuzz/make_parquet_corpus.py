#!/usr/bin/env python3
"""Write the seed corpus of the Parquet fuzzer (test/fuzz/corpus/fuzz_parquet/).

Small Parquet files made by pyarrow (and DuckDB when installed): every
codec, data pages v1 and v2, dictionary, DELTA_* and BYTE_STREAM_SPLIT
encodings, nullable, nested (lists, structs, maps), INT96, several row
groups, page indexes and Bloom filters.  Kept to a few KB each so that the fuzzer mutates metadata and
page headers, not bulk data.

    python3 test/fuzz/make_parquet_corpus.py
"""
import datetime
import decimal
import io
import os

import pyarrow as pa
import pyarrow.parquet as pq

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "fuzz_parquet")


def table(n=40):
    return pa.table({
        "i": pa.array([None if i % 5 == 1 else i * 3 for i in range(n)], pa.int32()),
        "u8": pa.array([i % 256 for i in range(n)], pa.uint8()),
        "l": pa.array([i * 1000003 for i in range(n)], pa.int64()),
        "f": pa.array([i / 3 for i in range(n)], pa.float64()),
        "h": pa.array([float(i % 7) for i in range(n)], pa.float16()),
        "s": pa.array([None if i % 7 == 2 else "s%d" % (i % 6) for i in range(n)]),
        "b": pa.array([i % 2 == 0 for i in range(n)]),
        "d": pa.array([decimal.Decimal(i).scaleb(-2) for i in range(n)], pa.decimal128(20, 2)),
        "dt": pa.array([datetime.date(2020, 1, 1) + datetime.timedelta(days=i) for i in range(n)]),
        "ts": pa.array([i * 10**9 for i in range(n)], pa.timestamp("ns", "UTC")),
        "fsb": pa.array([bytes([i % 256] * 3) for i in range(n)], pa.binary(3)),
        "li": pa.array([None if i % 4 == 3 else list(range(i % 3)) for i in range(n)],
                       pa.list_(pa.int32())),
        "st": pa.array([{"a": i, "b": None if i % 2 else "x"} for i in range(n)]),
        "m": pa.array([[("k", i)] if i % 3 else None for i in range(n)], pa.map_(pa.string(), pa.int64())),
    })


def write(name, t, **kw):
    sink = io.BytesIO()
    kw.setdefault("store_schema", False)
    pq.write_table(t, sink, **kw)
    with open(os.path.join(OUT, name + ".parquet"), "wb") as f:
        f.write(sink.getvalue())


def page_index(t):
    """Page indexes (read as parts of row groups when the reader's part size
    is small, as the fuzzer sets it) and Bloom filters."""
    blooms = {"i": {"ndv": 64, "fpp": 0.05}, "s": {"ndv": 16, "fpp": 0.05},
              "l": {"ndv": 64, "fpp": 0.05}}
    write("page_index", t, write_page_index=True, max_rows_per_page=4, row_group_size=40,
          bloom_filter_options=blooms)
    write("page_index_v2", t.select(["i", "s", "li", "st"]), write_page_index=True,
          max_rows_per_page=3, data_page_version="2.0", use_dictionary=False,
          compression="snappy")


def main():
    os.makedirs(OUT, exist_ok=True)
    t = table()
    for codec in ("none", "snappy", "gzip", "zstd", "lz4", "brotli"):
        write("plain_" + codec, t, compression=codec, use_dictionary=False)
        write("dict_" + codec, t, compression=codec, row_group_size=16)
    write("v2", t, data_page_version="2.0", compression="snappy")
    write("v2_plain", t, data_page_version="2.0", use_dictionary=False)
    write("delta", t.select(["i", "l", "s", "fsb"]), use_dictionary=False,
          column_encoding={"i": "DELTA_BINARY_PACKED", "l": "DELTA_BINARY_PACKED",
                           "s": "DELTA_BYTE_ARRAY", "fsb": "DELTA_BYTE_ARRAY"})
    write("delta_len", t.select(["s"]), use_dictionary=False,
          column_encoding={"s": "DELTA_LENGTH_BYTE_ARRAY"})
    write("split", t.select(["f", "h", "i", "l", "fsb"]), use_dictionary=False,
          column_encoding={"f": "BYTE_STREAM_SPLIT", "h": "BYTE_STREAM_SPLIT",
                           "i": "BYTE_STREAM_SPLIT", "l": "BYTE_STREAM_SPLIT",
                           "fsb": "BYTE_STREAM_SPLIT"})
    write("int96", t.select(["ts"]), use_deprecated_int96_timestamps=True)
    write("small_pages", t, data_page_size=64, row_group_size=10)
    page_index(t)
    more()
    try:
        import duckdb
    except ImportError:
        return
    con = duckdb.connect()
    for ver in ("V1", "V2"):
        p = os.path.join(OUT, "duckdb_%s.parquet" % ver.lower())
        con.execute("COPY (SELECT i, 'n' || (i %% 5) AS s, [i, i] AS l, i / 3.0 AS f "
                    "FROM range(30) t(i)) TO '%s' (FORMAT parquet, PARQUET_VERSION %s)"
                    % (p, ver))


def more():
    """Shapes added for the long runs: deep nesting, many row groups,
    statistics and page indexes, dictionary fallback to plain in one chunk,
    all-null and empty columns, more physical and logical types."""
    n = 30
    deep_t = pa.list_(pa.struct([("a", pa.list_(pa.map_(pa.string(), pa.list_(pa.int64())))),
                                 ("b", pa.struct([("c", pa.float32())]))]))
    deep = pa.table({
        "deep": pa.array([[{"a": [[("k", [i, None])]], "b": {"c": float(i)}}] if i % 3 else
                          (None if i % 2 else [{"a": None, "b": None}]) for i in range(n)], deep_t),
        "ll": pa.array([[["a", None], []] if i % 4 else None for i in range(n)],
                       pa.list_(pa.list_(pa.string()))),
        "fl": pa.array([[i, i + 1] for i in range(n)], pa.list_(pa.int16(), 2)),
    })
    write("deep", deep)
    write("deep_v2", deep, data_page_version="2.0", compression="zstd")
    types = pa.table({
        "u16": pa.array([i * 1000 % 65536 for i in range(n)], pa.uint16()),
        "u32": pa.array([2**32 - 1 - i for i in range(n)], pa.uint32()),
        "u64": pa.array([2**64 - 1 - i for i in range(n)], pa.uint64()),
        "i8": pa.array([i - 15 for i in range(n)], pa.int8()),
        "f32": pa.array([i / 7 for i in range(n)], pa.float32()),
        "t32": pa.array([i * 1000 for i in range(n)], pa.time32("ms")),
        "t64": pa.array([i for i in range(n)], pa.time64("us")),
        "tsms": pa.array([i for i in range(n)], pa.timestamp("ms")),
        "d64": pa.array([i * 86400000 for i in range(n)], pa.date64()),
        "dec9": pa.array([decimal.Decimal(i) for i in range(n)], pa.decimal128(9, 0)),
        "dec18": pa.array([decimal.Decimal(i).scaleb(-3) for i in range(n)], pa.decimal128(18, 3)),
        "bin": pa.array([bytes(range(i % 9)) for i in range(n)], pa.binary()),
        "lstr": pa.array(["x" * (i % 5) for i in range(n)], pa.large_string()),
        "nul": pa.nulls(n, pa.int32()),
        "allnull": pa.array([None] * n, pa.string()),
    })
    write("types", types)
    write("types_stats", types, write_statistics=True, write_page_index=True,
          row_group_size=7, compression="snappy")
    write("many_groups", types.select(["u32", "lstr", "nul"]), row_group_size=3)
    # a dictionary page limit so small that the writer falls back to plain
    big = pa.table({"s": pa.array(["value-%d" % i for i in range(200)])})
    write("dict_fallback", big, dictionary_pagesize_limit=64, data_page_size=128)
    write("empty", types.slice(0, 0))
    write("bool_v2", pa.table({"b": pa.array([None if i % 5 == 0 else i % 3 == 0
                                              for i in range(n)])}),
          data_page_version="2.0", use_dictionary=False)


if __name__ == "__main__":
    main()
