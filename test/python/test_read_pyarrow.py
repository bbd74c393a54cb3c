"""pyarrow writes, our reader reads: `pgwarp cat` must print exactly the
values pyarrow put in the file, for every type, in the IPC file and stream
formats, uncompressed, LZ4 and ZSTD; `pgwarp inspect --json` must describe
the file as it is."""
import json
import os

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

from cases import ALL_CASES, CASES_BY_NAME, wide_case
from pwhelpers import (IpcLayout, assert_rows_match, assert_same_expected, cat_rows,
                       check_error_message, error_lines, parse_cat, parse_cat_line,
                       uncompressed_buffers_in_compressed_batches)

COMPRESSIONS = [None, "lz4", "zstd"]
CODEC_NAMES = {None: "none", 0: "lz4_frame", 1: "zstd"}


def _params(cases):
    out = []
    for c in cases:
        for fmt in ("file", "stream"):
            if fmt == "file" and c.stream_only:
                continue
            for comp in COMPRESSIONS:
                out.append(pytest.param(c.name, fmt, comp,
                                        id="%s-%s-%s" % (c.name, fmt, comp or "none")))
    return out


WIDE = wide_case()
CASES = dict(CASES_BY_NAME)
CASES[WIDE.name] = WIDE
PARAMS = _params(ALL_CASES + [WIDE])


def write_case(scratch, name, fmt, comp):
    case = CASES[name]
    path = os.path.join(scratch, "%s.%s" % (name, "arrow" if fmt == "file" else "arrows"))
    stats = case.write(path, fmt, comp)
    if case.expect_deltas is not None:
        assert stats.num_dictionary_deltas == case.expect_deltas, stats
    if case.expect_replaced is not None:
        assert stats.num_replaced_dictionaries == case.expect_replaced, stats
    # the oracle reads its own file back
    reader = ipc.open_file(path) if fmt == "file" else ipc.open_stream(path)
    table = reader.read_all()
    table.validate(full=True)
    if case.wrappable:
        # decoded values (NaN-aware; dictionaries may be read back merged)
        assert_same_expected(case.expected_rows(), cat_rows(table),
                             "pyarrow reading its own file")
    else:
        assert table.equals(pa.Table.from_batches(case.batches()))
    return case, path


@pytest.mark.parametrize("name,fmt,comp", PARAMS)
def test_cat(pgwarp, scratch, name, fmt, comp):
    case, path = write_case(scratch, name, fmt, comp)
    res = pgwarp("cat", path)
    assert res.rc == 0, res.describe()
    assert_rows_match(case.expected_rows(), parse_cat(res.out),
                      "pgwarp cat %s (%s, %s)" % (name, fmt, comp))


def _expected_fields(fields):
    out = []
    for f in fields:
        d = f["dictionary"]
        out.append(dict(
            name=f["name"], nullable=f["nullable"], metadata=f["metadata"],
            dictionary=None if d is None else dict(
                id=d["id"], ordered=d["ordered"],
                index_type=("" if d["signed"] else "u") + "int%d" % d["bit_width"]),
            children=_expected_fields(f["children"])))
    return out


def _got_fields(fields):
    out = []
    for f in fields:
        assert isinstance(f["type"], str) and f["type"], f
        assert set(f) >= {"name", "type", "nullable", "dictionary", "metadata", "children"}, f
        d = f["dictionary"]
        if d is not None:
            d = dict(id=d["id"], ordered=d["ordered"], index_type=d["index_type"])
        out.append(dict(name=f["name"], nullable=f["nullable"], metadata=f["metadata"],
                        dictionary=d, children=_got_fields(f["children"])))
    return out


def _n_nodes(field):
    return 1 + sum(_n_nodes(c) for c in field["children"])


def check_inspect(j, path, fmt, case, layout):
    assert j["file"] == str(path)
    assert j["format"] == fmt
    assert j["size"] == os.path.getsize(path)
    assert j["incomplete_tail"] is None
    fields = layout.schema_fields()
    assert _got_fields(j["schema"]["fields"]) == _expected_fields(fields)
    # cross-check the layout walker with pyarrow on the top level
    schema = case.schema()
    assert [f["name"] for f in fields] == schema.names
    assert [f["nullable"] for f in fields] == [f.nullable for f in schema]
    want_md = {k.decode(): v.decode() for k, v in (schema.metadata or {}).items()}
    assert j["schema"]["metadata"] == want_md

    batches = case.batches()
    msgs = layout.batch_messages()
    assert len(msgs) == len(batches)
    if layout.is_file:
        assert [b[0] for b in layout.footer_blocks["batches"]] == [m["offset"] for m in msgs]
    assert len(j["batches"]) == len(batches), j["batches"]
    node_start = []
    k = 0
    for f in fields:
        node_start.append(k)
        k += _n_nodes(f)
    for i, (jb, b, m) in enumerate(zip(j["batches"], batches, msgs)):
        assert jb["index"] == i
        assert jb["rows"] == b.num_rows
        assert jb["offset"] == m["offset"]
        assert jb["body_bytes"] == m["body_len"]
        assert jb["compression"] == CODEC_NAMES[m["codec"]]
        assert [c["name"] for c in jb["columns"]] == schema.names
        for col, f, ns in zip(jb["columns"], fields, node_start):
            assert col["null_count"] == m["nodes"][ns][1], (i, col)
            assert isinstance(col["bytes"], int) and col["bytes"] >= 0
            assert col["min"] is None or isinstance(col["min"], str)
            assert col["max"] is None or isinstance(col["max"], str)
        assert sum(c["bytes"] for c in jb["columns"]) <= m["body_len"]
        if case.wrappable:
            assert [c["null_count"] for c in jb["columns"]] == \
                [b.column(x).null_count for x in range(b.num_columns)]
    assert j["rows"] == sum(b.num_rows for b in batches)


INSPECT_COMBOS = {("file", None), ("file", "lz4"), ("stream", "zstd")}
INSPECT_PARAMS = [p for p in PARAMS if (p.values[1], p.values[2]) in INSPECT_COMBOS]


@pytest.mark.parametrize("name,fmt,comp", INSPECT_PARAMS)
def test_inspect(pgwarp, scratch, name, fmt, comp):
    case, path = write_case(scratch, name, fmt, comp)
    res = pgwarp("inspect", path, "--json")
    assert res.rc == 0, res.describe()
    j = json.loads(res.out)
    layout = IpcLayout(open(path, "rb").read())
    if comp:
        assert all(m["codec"] is not None for m in layout.batch_messages())
    check_inspect(j, path, fmt, case, layout)


BATCH_CASES = ["int32", "utf8", "decimal128_38_10", "struct_nested", "map_utf8_int32",
               "dict_utf8_delta", "dict_utf8_replace", "month_interval", "null",
               "fixed_size_list_int16_3"]


@pytest.mark.parametrize("name,fmt", [(n, f) for n in BATCH_CASES for f in ("file", "stream")
                                      if not (f == "file" and CASES[n].stream_only)])
def test_cat_one_batch(pgwarp, scratch, name, fmt):
    """`cat --batch N` prints batch N only (dictionary state included)."""
    case, path = write_case(scratch, name, fmt, "zstd")
    for n in range(len(case.batches())):
        res = pgwarp("cat", path, "--batch", n)
        assert res.rc == 0, res.describe()
        assert_rows_match(case.expected_rows(batch=n), parse_cat(res.out),
                          "cat --batch %d" % n)
    res = pgwarp("cat", path, "--batch", len(case.batches()) + 5)
    assert res.rc in (1, 2), res.describe()
    assert error_lines(res), res.describe()


@pytest.fixture(scope="module")
def big_table():
    n = 400000
    return pa.table({
        "i": pa.array(range(n), pa.int64()),
        "s": pa.array(["row %d %s" % (i, "x" * (i % 37)) for i in range(n)]),
        "f": pa.array([i / 7 if i % 11 else None for i in range(n)], pa.float64()),
    })


@pytest.mark.parametrize("comp", [None, "lz4", "zstd"])
@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_big_batches(pgwarp, scratch, big_table, fmt, comp):
    """Buffers of several MB (multi-block LZ4 frames, large ZSTD frames)."""
    t = big_table
    n = t.num_rows
    path = os.path.join(scratch, "big.arrow")
    opts = ipc.IpcWriteOptions(compression=comp)
    with pa.OSFile(path, "wb") as sink:
        w = (ipc.new_file if fmt == "file" else ipc.new_stream)(sink, t.schema, options=opts)
        w.write_table(t, max_chunksize=150000)
        w.close()
    res = pgwarp("cat", path)
    assert res.rc == 0, res.describe()
    lines = res.out.split("\n")
    assert len(lines) == n + 1 and lines[-1] == "", len(lines)
    # spot-check densely rather than decoding 400k rows twice
    idx = sorted(set(range(0, n, 97)) | set(range(n - 50, n)) | set(range(149990, 150010)))
    exp = cat_rows(t.take(pa.array(idx)))
    assert_rows_match(exp, [parse_cat_line(lines[i]) for i in idx], comp)


def test_stream_without_eos(pgwarp, scratch):
    """A stream that ends after its last message, with no end-of-stream
    marker, is complete (the format allows closing the stream instead)."""
    case, path = write_case(scratch, "utf8", "stream", None)
    data = open(path, "rb").read()
    assert data[-8:] == b"\xff\xff\xff\xff\x00\x00\x00\x00"
    with open(path, "wb") as f:
        f.write(data[:-8])
    res = pgwarp("cat", path)
    assert res.rc == 0, res.describe()
    assert_rows_match(case.expected_rows(), parse_cat(res.out))


def test_string_views_read_as_strings(pgwarp, scratch):
    """Utf8View and BinaryView read as strings and binaries, inline (up to
    12 bytes) and in data buffers, compressed or not, in a struct too."""
    vals = ["a", None, "long string view value", "", "x" * 12, "y" * 13, "é" * 9]
    t = pa.table({"s": pa.array(vals, pa.string_view()),
                  "b": pa.array([None if v is None else v.encode() for v in vals], pa.binary_view()),
                  "st": pa.array([{"x": v} for v in vals], pa.struct([("x", pa.string_view())]))})
    for codec in (None, "lz4", "zstd"):
        path = os.path.join(scratch, "views-%s.arrow" % codec)
        with ipc.new_file(path, t.schema, options=ipc.IpcWriteOptions(compression=codec)) as w:
            w.write_table(t, max_chunksize=3)
        res = pgwarp("cat", path)
        assert res.rc == 0, res.describe()
        want = [[v, None if v is None else v.encode().hex(), [("x", v)]] for v in vals]
        assert [[r[0], r[1], list(r[2])] for r in parse_cat(res.out)] == want


def test_unsupported_types_are_clean_errors(pgwarp, scratch):
    """Valid Arrow that pgwarp does not map (union, run-end encoding,
    decimal256, list views out of row order): exit 1 naming the file, never a
    crash."""
    arrays = {
        "dense_union": pa.UnionArray.from_dense(
            pa.array([0, 1, 0], pa.int8()), pa.array([0, 0, 1], pa.int32()),
            [pa.array([1, 2], pa.int32()), pa.array(["a"])]),
        "sparse_union": pa.UnionArray.from_sparse(
            pa.array([0, 1], pa.int8()), [pa.array([1, 2]), pa.array(["a", "b"])]),
        "run_end_encoded": pa.RunEndEncodedArray.from_arrays(
            pa.array([2, 5], pa.int32()), pa.array(["x", "y"])),
        "decimal256": pa.array([1, None], pa.decimal256(50, 2)),
        "list_view": pa.ListViewArray.from_arrays([1, 0], [1, 1], pa.array([1, 2])),
    }
    for name, arr in arrays.items():
        path = os.path.join(scratch, name + ".arrow")
        t = pa.table({"ok": pa.array(range(len(arr)), pa.int32()), name: arr})
        with pa.OSFile(path, "wb") as sink:
            with ipc.new_file(sink, t.schema) as w:
                w.write_table(t)
        for cmd in (["cat", path], ["inspect", path, "--json"], ["inspect", path]):
            res = pgwarp(*cmd, timeout=20)
            if cmd[0] == "inspect" and res.rc == 0:
                continue    # describing such a file is fine; reading it is not
            check_error_message(res, path)


MIXED_CASES = ["utf8", "dict_utf8_delta", "struct_nested", "sliced_batches", "decimal128_38_10",
               "map_utf8_int32", "large_list_int64", "wide_all_types"]


@pytest.mark.parametrize("codec", ["lz4", "zstd"])
@pytest.mark.parametrize("fmt", ["file", "stream"])
@pytest.mark.parametrize("name", MIXED_CASES)
def test_uncompressed_buffers_in_compressed_batches(pgwarp, scratch, name, fmt, codec):
    """A compressed batch may store a buffer uncompressed (length prefix -1),
    as writers do when compression does not pay; every other buffer is
    rewritten that way here, and pyarrow checks the result first."""
    case = CASES[name]
    comp, plain = os.path.join(scratch, "c"), os.path.join(scratch, "p")
    case.write(comp, fmt, codec)
    case.write(plain, fmt, None)
    data = uncompressed_buffers_in_compressed_batches(open(comp, "rb").read(),
                                                      open(plain, "rb").read())
    path = os.path.join(scratch, "mixed.arrow")
    with open(path, "wb") as f:
        f.write(data)
    reader = ipc.open_file(path) if fmt == "file" else ipc.open_stream(path)
    table = reader.read_all()
    table.validate(full=True)
    assert_same_expected(case.expected_rows(), cat_rows(table), "pyarrow reading the mixed file")
    res = pgwarp("cat", path)
    assert res.rc == 0, res.describe()
    assert_rows_match(case.expected_rows(), parse_cat(res.out))


@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_legacy_ipc_format(pgwarp, scratch, fmt):
    """Pre-0.15 framing (no continuation marker): read correctly, or refused
    with a clean error; never misread."""
    case = CASES["dict_utf8_same"]
    path = os.path.join(scratch, "legacy.arrow")
    case.write(path, fmt, None, extra_opts=dict(use_legacy_format=True))
    assert open(path, "rb").read(4) != b"\xff\xff\xff\xff"
    res = pgwarp("cat", path, timeout=20)
    if res.rc == 0:
        assert_rows_match(case.expected_rows(), parse_cat(res.out))
    else:
        check_error_message(res, path)
