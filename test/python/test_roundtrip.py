"""pyarrow -> `pgwarp rewrite` (our reader and writer) -> pyarrow: the values,
types and names survive; batches are re-cut to --batch-rows; per-batch
min/max statistics match what pyarrow computes; --append adds batches, and
the tail of an interrupted append is reported and cut off."""
import hashlib
import json
import os
import shutil

import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.types as pat
import pytest

from cases import ALL_CASES, CASES_BY_NAME, wide_case
from pwhelpers import (assert_same_expected, cat_rows, check_error_message, check_statistics,
                       read_file, stat_kind)

WIDE = wide_case()
CASES = dict(CASES_BY_NAME)
CASES[WIDE.name] = WIDE
ALL = ALL_CASES + [WIDE]

MODES = {
    # name: (input format, extra rewrite options, batch rows asserted)
    "plain-stream-in": ("stream", [], None),
    "rows3-zstd": ("file", ["--batch-rows", "3", "--compress", "zstd"], 3),
    "rows2-lz4": ("file", ["--batch-rows", "2", "--compress", "lz4"], 2),
}


def write_input(case, scratch, fmt, name="in"):
    if case.stream_only:
        fmt = "stream"
    path = os.path.join(scratch, name + (".arrow" if fmt == "file" else ".arrows"))
    case.write(path, fmt)
    return path


def decoded_type(t):
    return t.value_type if pat.is_dictionary(t) else t


def check_same_data(case_batches, expected_rows, wrappable, table, in_schema):
    assert table.schema.names == in_schema.names
    for fi, fo in zip(in_schema, table.schema):
        assert decoded_type(fo.type) == decoded_type(fi.type), (fi.name, fi.type, fo.type)
        assert fo.nullable == fi.nullable, fi.name
    assert table.num_rows == sum(b.num_rows for b in case_batches)
    if wrappable:
        assert_same_expected(expected_rows, cat_rows(table), "values after rewrite")
    else:
        assert table.equals(pa.Table.from_batches(case_batches))


def rewrite(pgwarp, src, dst, *opts):
    res = pgwarp("rewrite", src, dst, *opts)
    assert res.rc == 0, res.describe()
    assert os.path.exists(dst)
    return res


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("name", [c.name for c in ALL])
def test_rewrite_values(pgwarp, scratch, name, mode):
    case = CASES[name]
    fmt, opts, rows = MODES[mode]
    src = write_input(case, scratch, fmt)
    dst = os.path.join(scratch, "out.arrow")
    rewrite(pgwarp, src, dst, *opts)
    reader, table = read_file(dst)
    check_same_data(case.batches(), case.expected_rows(), case.wrappable, table, case.schema())
    if rows:
        sizes = [reader.get_batch(i).num_rows for i in range(reader.num_record_batches)]
        total = sum(sizes)
        assert sizes == [rows] * (total // rows) + ([total % rows] if total % rows else []), sizes


def test_rewrite_keeps_metadata(pgwarp, scratch):
    """Schema and field custom metadata (pg_type and the like) are copied."""
    case = CASES["int32"]
    src = write_input(case, scratch, "file")
    dst = os.path.join(scratch, "out.arrow")
    rewrite(pgwarp, src, dst, "--batch-rows", "4")
    schema = ipc.open_file(dst).schema
    assert schema.metadata == case.schema().metadata
    for fi, fo in zip(case.schema(), schema):
        for k, v in (fi.metadata or {}).items():
            assert (fo.metadata or {}).get(k) == v, (fi.name, k, fo.metadata)


# ------------------------------------------------------------- statistics

STAT_CASES = [c.name for c in ALL
              if c.wrappable and any(stat_kind(f.type) for f in c.schema())]


@pytest.mark.parametrize("name", STAT_CASES)
def test_rewrite_statistics(pgwarp, scratch, name):
    case = CASES[name]
    src = write_input(case, scratch, "file")
    dst = os.path.join(scratch, "out.arrow")
    rewrite(pgwarp, src, dst, "--batch-rows", "3")
    assert check_statistics(dst) > 0


def test_statistics_nan_and_all_null_batches(pgwarp, scratch):
    """NaN sorts above +Infinity (as in PostgreSQL); a batch with only NULLs
    has empty entries; one with only NaN has NaN for both."""
    nan, inf = float("nan"), float("inf")
    t = pa.table({
        "f": pa.array([1.0, nan, -inf, None, None, None, nan, nan, None, -0.0, 0.0, inf],
                      pa.float64()),
        "g": pa.array([1.5, 2.5, None, None, None, None, None, None, -3.5, None, 7.0, 1.0],
                      pa.float32()),
        "i": pa.array([None] * 3 + [5, -5, 0] + [None] * 6, pa.int64()),
    })
    src = os.path.join(scratch, "in.arrow")
    with ipc.new_file(src, t.schema) as w:
        w.write_table(t)
    dst = os.path.join(scratch, "out.arrow")
    rewrite(pgwarp, src, dst, "--batch-rows", "3")
    assert check_statistics(dst) == 3
    md = ipc.open_file(dst).schema.field("i").metadata
    assert md[b"min_values"] == b",-5,,", md
    assert md[b"max_values"] == b",5,,", md


# ----------------------------------------------------------------- append

def _table(batches):
    return pa.Table.from_batches(batches)


def _write_pyarrow_file(path, table, **opts):
    with ipc.new_file(path, table.schema, options=ipc.IpcWriteOptions(**opts)) as w:
        w.write_table(table, max_chunksize=40)


def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def _parts():
    """Three tables of one schema with every plain type (wide case)."""
    b = WIDE.batches()[0]
    return (_table([b.slice(0, 120)]), _table([b.slice(120, 90)]), _table([b.slice(210, 90)]))


def _check_concat(path, tables):
    reader, table = read_file(path)
    want = pa.concat_tables(tables)
    assert_same_expected(cat_rows(want), cat_rows(table), "rows after append")
    check_statistics(path)
    return reader


def test_append(pgwarp, scratch):
    t1, t2, t3 = _parts()
    ins = []
    for i, t in enumerate((t1, t2, t3)):
        p = os.path.join(scratch, "in%d.arrow" % i)
        _write_pyarrow_file(p, t)
        ins.append(p)
    out = os.path.join(scratch, "out.arrow")
    rewrite(pgwarp, ins[0], out, "--batch-rows", "50")
    old = open(out, "rb").read()
    rewrite(pgwarp, ins[1], out, "--append", "--batch-rows", "50", "--compress", "zstd")
    # the old file is a prefix: its batches are not rewritten
    assert open(out, "rb").read()[:len(old)] == old
    reader = _check_concat(out, [t1, t2])
    assert reader.num_record_batches == 3 + 2
    rewrite(pgwarp, ins[2], out, "--append", "--batch-rows", "1000")
    reader = _check_concat(out, [t1, t2, t3])
    assert reader.num_record_batches == 3 + 2 + 1
    res = pgwarp("inspect", out, "--json")
    assert res.rc == 0, res.describe()
    j = json.loads(res.out)
    assert [b["compression"] for b in j["batches"]] == ["none"] * 3 + ["zstd"] * 2 + ["none"]
    assert [b["rows"] for b in j["batches"]] == [50, 50, 20, 50, 40, 90]
    assert j["incomplete_tail"] is None


def test_append_onto_pyarrow_file(pgwarp, scratch):
    t1, t2, _ = _parts()
    out = os.path.join(scratch, "out.arrow")
    _write_pyarrow_file(out, t1, compression="lz4")
    src = os.path.join(scratch, "in.arrows")
    with ipc.new_stream(src, t2.schema) as w:
        w.write_table(t2)
    rewrite(pgwarp, src, out, "--append")
    reader, table = read_file(out)
    assert_same_expected(cat_rows(pa.concat_tables([t1, t2])), cat_rows(table))


def test_append_schema_mismatch(pgwarp, scratch):
    t1, _, _ = _parts()
    out = os.path.join(scratch, "out.arrow")
    _write_pyarrow_file(out, t1)
    before = sha(out)
    other = os.path.join(scratch, "other.arrow")
    t = t1.set_column(3, "int64", pa.array(range(t1.num_rows), pa.int32()))
    _write_pyarrow_file(other, t)
    res = pgwarp("rewrite", other, out, "--append")
    check_error_message(res)
    assert "int64" in res.err, res.describe()     # names the first differing column
    assert sha(out) == before


def test_rewrite_refuses_existing_output(pgwarp, scratch):
    """Without --append an existing OUT is not silently replaced or
    corrupted: either it is refused (exit 1) or replaced by a correct file."""
    t1, t2, _ = _parts()
    a, b = os.path.join(scratch, "a.arrow"), os.path.join(scratch, "b.arrow")
    _write_pyarrow_file(a, t1)
    _write_pyarrow_file(b, t2)
    before = sha(b)
    res = pgwarp("rewrite", a, b)
    if res.rc == 0:
        _, table = read_file(b)
        assert_same_expected(cat_rows(t1), cat_rows(table))
    else:
        check_error_message(res)
        assert sha(b) == before


# ------------------------------------------------------ interrupted append

def _garbage_tail(kind, path, scratch, pgwarp, t_extra):
    """Make an interrupted append at the end of the complete file `path`."""
    data = open(path, "rb").read()
    if kind == "random":
        tail = os.urandom(1000)
    elif kind == "fake_trailer":
        # ends like a file (length + magic) but the "footer" is garbage
        tail = b"\xff\xff\xff\xff" + os.urandom(300) + (296).to_bytes(4, "little") + b"ARROW1"
    elif kind == "magic_only":
        tail = b"ARROW1"
    elif kind == "zeros":
        tail = bytes(4096)
    elif kind.startswith("partial_append"):
        # a real append cut short: write it completely, then cut
        full = os.path.join(scratch, "full.arrow")
        shutil.copy(path, full)
        src = os.path.join(scratch, "extra.arrow")
        _write_pyarrow_file(src, t_extra)
        rewrite(pgwarp, src, full, "--append", "--batch-rows", "30")
        fdata = open(full, "rb").read()
        assert fdata[:len(data)] == data
        cut = {"partial_append_1": len(data) + 1,
               "partial_append_mid": (len(data) + len(fdata)) // 2,
               "partial_append_minus1": len(fdata) - 1,
               "partial_append_minus10": len(fdata) - 10}[kind]
        tail = fdata[len(data):cut]
    else:
        raise ValueError(kind)
    with open(path, "ab") as f:
        f.write(tail)
    return len(data), len(tail)


TAILS = ["random", "fake_trailer", "magic_only", "zeros", "partial_append_1",
         "partial_append_mid", "partial_append_minus1", "partial_append_minus10"]


@pytest.mark.parametrize("appended_before", [False, True], ids=["one_footer", "two_footers"])
@pytest.mark.parametrize("tail", TAILS)
def test_interrupted_append(pgwarp, scratch, tail, appended_before):
    t1, t2, t3 = _parts()
    p1 = os.path.join(scratch, "t1.arrow")
    _write_pyarrow_file(p1, t1)
    out = os.path.join(scratch, "out.arrow")
    rewrite(pgwarp, p1, out, "--batch-rows", "64")
    committed = [t1]
    if appended_before:
        p2 = os.path.join(scratch, "t2.arrow")
        _write_pyarrow_file(p2, t2)
        rewrite(pgwarp, p2, out, "--append")
        committed.append(t2)
    valid_length, tail_bytes = _garbage_tail(tail, out, scratch, pgwarp, t3)
    assert os.path.getsize(out) == valid_length + tail_bytes

    res = pgwarp("inspect", out, "--json")
    assert res.rc == 0, res.describe()
    j = json.loads(res.out)
    assert j["incomplete_tail"] == {"valid_length": valid_length, "tail_bytes": tail_bytes}, j
    assert j["rows"] == sum(t.num_rows for t in committed)

    # the next append cuts the tail off
    p3 = os.path.join(scratch, "t3.arrow")
    _write_pyarrow_file(p3, t3)
    rewrite(pgwarp, p3, out, "--append", "--compress", "lz4")
    _check_concat(out, committed + [t3])
    res = pgwarp("inspect", out, "--json")
    assert res.rc == 0, res.describe()
    assert json.loads(res.out)["incomplete_tail"] is None
