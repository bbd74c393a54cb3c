"""Arrow data cases written by pyarrow (the oracle) for the reader and
round-trip tests: every type pgwarp reads, with NULLs, a non-null column, an
all-null column, a zero-row batch and several batches."""
import itertools
from decimal import Decimal

import pyarrow as pa
import pyarrow.ipc as ipc

from pwhelpers import cat_rows, interval_batch, interval_cat

NAN = float("nan")
INF = float("inf")

SCHEMA_METADATA = {"origin": "pgwarp pytest", "ключ": "значение ✓"}
FIELD_METADATA = {"note": "field v", "pg_type": "something(1,2)"}

STRINGS = ["", "a", None, "héllo wörld", "日本語テキスト", "😀 emoji \U0001F680",
           "x" * 1000, 'quote " backslash \\ slash / newline \n tab \t cr \r',
           "control \x01\x1f and del \x7f", "nul \x00 inside", None, "\u2028\u2029"]
BINARIES = [b"", b"\x00\xff", None, bytes(range(256)), b"abc", None, b"\x80" * 17]


def D(s):
    return None if s is None else Decimal(s)


class Case:
    """A named set of record batches of one schema."""

    def __init__(self, name, build, stream_only=False, file_opts=None, stream_opts=None,
                 expected=None, wrappable=True, expect_deltas=None, expect_replaced=None):
        self.name = name
        self._build = build
        self.stream_only = stream_only
        self.file_opts = file_opts or {}
        self.stream_opts = stream_opts or {}
        self._expected = expected
        self.wrappable = wrappable      # pyarrow can make Python arrays of every column
        self.expect_deltas = expect_deltas
        self.expect_replaced = expect_replaced
        self._cache = None

    def batches(self):
        if self._cache is None:
            self._cache = self._build()
        return self._cache

    def schema(self):
        return self.batches()[0].schema

    def expected_rows(self, batch=None):
        """Rows `pgwarp cat` must print (all batches, or batch number `batch`)."""
        idx = list(range(len(self.batches()))) if batch is None else [batch]
        if self._expected is not None:
            return self._expected(idx)
        bs = self.batches()
        return cat_rows([bs[i] for i in idx])

    def write(self, path, fmt, compression=None, extra_opts=None):
        """Write the case with pyarrow; returns the writer's stats."""
        opts = dict(self.file_opts if fmt == "file" else self.stream_opts)
        opts.update(extra_opts or {})
        if compression:
            opts["compression"] = compression
        options = ipc.IpcWriteOptions(**opts)
        bs = self.batches()
        schema = bs[0].schema
        with pa.OSFile(str(path), "wb") as sink:
            if fmt == "file":
                w = ipc.new_file(sink, schema, options=options)
            else:
                w = ipc.new_stream(sink, schema, options=options)
            for b in bs:
                w.write_batch(b)
            w.close()
        return w.stats


def _cycle(vals, n):
    nn = [v for v in vals if v is not None]
    return list(itertools.islice(itertools.cycle(nn), n)) if nn else [None] * n


def value_case(name, typ, values, nonnull=True):
    """Columns v (values with NULLs, field metadata), nn (declared NOT NULL,
    no NULLs) and z (all NULL); batches: values, zero rows, values reversed,
    one row."""

    def build():
        fields = [pa.field("v", typ, True, metadata=FIELD_METADATA)]
        if nonnull:
            fields.append(pa.field("nn", typ, False))
        fields.append(pa.field("z", typ, True))
        schema = pa.schema(fields, metadata=SCHEMA_METADATA)
        out = []
        for vals in (values, [], list(reversed(values)), values[:1]):
            cols = [pa.array(vals, typ)]
            if nonnull:
                cols.append(pa.array(_cycle(values, len(vals)), typ))
            cols.append(pa.nulls(len(vals), typ))
            out.append(pa.record_batch(cols, schema=schema))
        return out

    return Case(name, build)


def _tz_times(unit):
    return [0, -1, 1, 2 ** 63 - 1, -(2 ** 63) + 1, None, 1700000000123456789 // {
        "s": 10 ** 9, "ms": 10 ** 6, "us": 10 ** 3, "ns": 1}[unit], -86400]


INT_CASES = [
    ("int8", pa.int8(), [-128, 127, 0, None, -1, 1, None]),
    ("int16", pa.int16(), [-32768, 32767, 0, None, -1, 1]),
    ("int32", pa.int32(), [-2 ** 31, 2 ** 31 - 1, 0, None, -1, 1]),
    ("int64", pa.int64(), [-2 ** 63, 2 ** 63 - 1, 0, None, -1, 1]),
    ("uint8", pa.uint8(), [0, 255, None, 1, 128]),
    ("uint16", pa.uint16(), [0, 65535, None, 1, 32768]),
    ("uint32", pa.uint32(), [0, 2 ** 32 - 1, None, 1, 2 ** 31]),
    ("uint64", pa.uint64(), [0, 2 ** 64 - 1, None, 2 ** 63, 2 ** 63 - 1, 1]),
]

FLOAT_SPECIALS = [0.0, -0.0, NAN, INF, -INF, None, 1.5, -2.25, 0.1, 1e-3, 12345.678]

CASES = [value_case(n, t, v) for n, t, v in INT_CASES] + [
    value_case("float16", pa.float16(),
               FLOAT_SPECIALS + [65504.0, -65504.0, 5.960464477539063e-08, 6.103515625e-05]),
    value_case("float32", pa.float32(),
               FLOAT_SPECIALS + [3.4028234663852886e38, 1.401298464324817e-45,
                                 -1.1754943508222875e-38, 16777217.0]),
    value_case("float64", pa.float64(),
               FLOAT_SPECIALS + [1.7976931348623157e308, 5e-324, -2.2250738585072014e-308,
                                 9007199254740993.0, 1 / 3]),
    value_case("decimal128_38_0", pa.decimal128(38, 0),
               [D("9" * 38), D("-" + "9" * 38), D("0"), None, D("1"), D("-1"),
                D("170141183460469231731687303715884105"), D("-18446744073709551616")]),
    value_case("decimal128_38_10", pa.decimal128(38, 10),
               [D("1234567890123456789012345678.1234567890"), D("-0.0000000001"),
                D("-9999999999999999999999999999.9999999999"), None, D("0"), D("42.5")]),
    value_case("decimal128_10_2", pa.decimal128(10, 2),
               [D("12.30"), D("-0.05"), D("0.00"), D("99999999.99"), D("-99999999.99"), None,
                D("0.01"), D("-1.00")]),
    value_case("decimal128_5_5", pa.decimal128(5, 5), [D("0.12345"), D("-0.00001"), None, D("0")]),
    value_case("decimal128_1_0", pa.decimal128(1, 0), [D("9"), D("-9"), D("0"), None]),
    value_case("decimal128_5_neg2", pa.decimal128(5, -2),
               [D("1.2345E+6"), D("-9.9999E+6"), D("0E+2"), None, D("1E+2")]),
    value_case("decimal128_19_0", pa.decimal128(19, 0),
               [D("9999999999999999999"), D("-9999999999999999999"), D("9223372036854775808"),
                D("-9223372036854775809"), None]),
    value_case("decimal128_20_3", pa.decimal128(20, 3),
               [D("-12345678901234567.890"), D("18446744073709551.615"), D("-0.001"), None]),
    value_case("bool", pa.bool_(), [True, False, None, True, True, False, False, True, None,
                                    False, True]),
    value_case("date32", pa.date32(), [0, -1, 19000, -719162, 2932896, None, 2 ** 31 - 1,
                                       -2 ** 31]),
    value_case("date64", pa.date64(), [0, 86400000, -86400000, None, 253402214400000,
                                       -62135596800000]),
    value_case("time32_s", pa.time32("s"), [0, 86399, None, 3600, 1]),
    value_case("time32_ms", pa.time32("ms"), [0, 86399999, None, 1]),
    value_case("time64_us", pa.time64("us"), [0, 86399999999, None, 1, 43200000000]),
    value_case("time64_ns", pa.time64("ns"), [0, 86399999999999, None, 1]),
] + [
    value_case("timestamp_%s%s" % (unit, "_" + tzname if tz else ""), pa.timestamp(unit, tz=tz),
               _tz_times(unit))
    for unit in ("s", "ms", "us", "ns")
    for tz, tzname in ((None, ""), ("UTC", "utc"), ("America/New_York", "nyc"))
    if tz is None or unit in ("us", "ns") or tzname == "utc"
] + [
    value_case("duration_%s" % unit, pa.duration(unit), [0, -1, 2 ** 63 - 1, -(2 ** 63), None, 42])
    for unit in ("s", "ms", "us", "ns")
] + [
    value_case("month_day_nano_interval", pa.month_day_nano_interval(),
               [pa.MonthDayNano([1, 2, 3]), pa.MonthDayNano([-1, -2, -3]), None,
                pa.MonthDayNano([2 ** 31 - 1, -2 ** 31, 2 ** 63 - 1]),
                pa.MonthDayNano([0, 0, -(2 ** 63)]), pa.MonthDayNano([0, 0, 0])]),
    value_case("utf8", pa.utf8(), STRINGS),
    value_case("large_utf8", pa.large_utf8(), STRINGS),
    value_case("binary", pa.binary(), BINARIES),
    value_case("large_binary", pa.large_binary(), BINARIES),
    value_case("fixed_size_binary_3", pa.binary(3), [b"abc", b"\x00\x00\x00", None, b"\xff\x01\x80"]),
    value_case("fixed_size_binary_16", pa.binary(16), [bytes(range(16)), None, b"\xff" * 16]),
    value_case("fixed_size_binary_1", pa.binary(1), [b"\x00", None, b"z"]),
    value_case("list_int32", pa.list_(pa.int32()),
               [[1, 2, 3], [], None, [None], [None, 4], [2 ** 31 - 1, -2 ** 31], []]),
    value_case("list_utf8", pa.list_(pa.utf8()), [["a", ""], [], None, [None, "é"], ["😀"] * 5]),
    value_case("list_bool", pa.list_(pa.bool_()), [[True, None, False] * 5, [], None, [False]]),
    value_case("large_list_int64", pa.large_list(pa.int64()),
               [[1, -(2 ** 63)], [], None, [None, None], [2 ** 63 - 1]]),
    value_case("large_list_utf8", pa.large_list(pa.large_utf8()), [["a", None], [], None, [""]]),
    value_case("fixed_size_list_int16_3", pa.list_(pa.int16(), 3),
               [[1, 2, 3], None, [None, 5, None], [-32768, 0, 32767]]),
    value_case("fixed_size_list_utf8_2", pa.list_(pa.utf8(), 2), [["a", ""], None, [None, "é"]]),
    value_case("list_list_int8", pa.list_(pa.list_(pa.int8())),
               [[[1], [], None], [], None, [[None]], [[1, 2], [3]]]),
    value_case("list_decimal", pa.list_(pa.decimal128(12, 3)),
               [[D("1.500"), None, D("-0.001")], [], None]),
    value_case("list_struct", pa.list_(pa.struct([("a", pa.int32()), ("b", pa.utf8())])),
               [[{"a": 1, "b": "x"}, None, {"a": None, "b": None}], [], None,
                [{"a": -5, "b": ""}]]),
    value_case("struct_nested", pa.struct([
        ("a", pa.int32()),
        ("b", pa.struct([("c", pa.utf8()), ("d", pa.list_(pa.float64()))])),
        ("e", pa.bool_())]),
        [{"a": 1, "b": {"c": "x", "d": [1.5, None, -0.0]}, "e": True}, None,
         {"a": None, "b": None, "e": None},
         {"a": 2, "b": {"c": None, "d": None}, "e": False},
         {"a": 3, "b": {"c": "ü", "d": []}, "e": None}]),
    value_case("struct_of_temporal", pa.struct([
        ("ts", pa.timestamp("ms", tz="UTC")), ("d", pa.date32()),
        ("dec", pa.decimal128(7, 2)), ("bin", pa.binary())]),
        [{"ts": 1, "d": 2, "dec": D("-1.25"), "bin": b"\x01"}, None,
         {"ts": None, "d": -5, "dec": None, "bin": b""}]),
    value_case("map_utf8_int32", pa.map_(pa.utf8(), pa.int32()),
               [[("a", 1), ("b", None)], [], None, [("", 0)], [("k%d" % i, i) for i in range(20)]]),
    value_case("map_int32_list_utf8", pa.map_(pa.int32(), pa.list_(pa.utf8())),
               [[(1, ["a", None]), (2, None), (3, [])], None, []]),
    value_case("null", pa.null(), [None, None, None], nonnull=False),
]


# ------------------------------------------------------------ dictionaries

def _dict(indices, values, index_type=pa.int8(), value_type=pa.utf8(), ordered=False):
    return pa.DictionaryArray.from_arrays(pa.array(indices, index_type),
                                          pa.array(values, value_type), ordered=ordered)


def dict_case(name, index_type, value_type, dicts, indices, ordered=False, **kw):
    """One dictionary column v (and an all-null dictionary column z) over
    several batches; batch i uses dictionary dicts[i] and indices[i]."""

    def build():
        typ = pa.dictionary(index_type, value_type, ordered=ordered)
        schema = pa.schema([pa.field("v", typ), pa.field("z", typ),
                            pa.field("plain", pa.int32())], metadata=SCHEMA_METADATA)
        out = []
        for k, (dv, ix) in enumerate(zip(dicts, indices)):
            v = _dict(ix, dv, index_type, value_type, ordered)
            z = _dict([None] * len(ix), dicts[0], index_type, value_type, ordered)
            out.append(pa.record_batch([v, z, pa.array(range(k * 100, k * 100 + len(ix)),
                                                       pa.int32())], schema=schema))
        return out

    return Case(name, build, **kw)


STR_DICT_A = ["alpha", "beta", "", "gämma"]
DICT_CASES = [
    # the same dictionary in every batch
    dict_case("dict_utf8_same", pa.int8(), pa.utf8(), [STR_DICT_A] * 4,
              [[0, 1, None, 2, 3, 0], [], [3, 3, None], [1]]),
    # dictionary with a NULL value and int32 indices, ordered
    dict_case("dict_utf8_nullvalue_ordered", pa.int32(), pa.utf8(),
              [["a", None, "c"]] * 2, [[0, 1, 2, None, 1], [2, 1]], ordered=True),
    # unsigned indices
    dict_case("dict_uint8_index", pa.uint8(), pa.utf8(), [["x", "y"]] * 2,
              [[1, 0, None], [0]]),
    # integer values
    dict_case("dict_int64_values", pa.int16(), pa.int64(),
              [[2 ** 63 - 1, -(2 ** 63), 0, 7]] * 3, [[0, 1, 2, 3, None], [], [3, 2, 1, 0]]),
    dict_case("dict_large_utf8", pa.int64(), pa.large_utf8(), [["p", "q"]] * 2,
              [[0, 1, None], [1, 1]]),
    # growing dictionary: pyarrow writes delta dictionary batches
    dict_case("dict_utf8_delta", pa.int16(), pa.utf8(),
              [["a", "b"], ["a", "b", "c"], ["a", "b", "c", "d", "é"]],
              [[0, 1, None], [2, 0, 1], [4, 3, None, 2]],
              file_opts=dict(emit_dictionary_deltas=True),
              stream_opts=dict(emit_dictionary_deltas=True), expect_deltas=2),
    # unrelated dictionary per batch: replacement (stream format only)
    dict_case("dict_utf8_replace", pa.int8(), pa.utf8(),
              [["a", "b"], ["x", "y", "z"], ["a", "b"], ["only"]],
              [[0, 1, None], [2, 1, 0], [1], [0, 0]], stream_only=True, expect_replaced=3),
    # replacement mixed with a delta in one stream
    dict_case("dict_utf8_delta_and_replace", pa.int8(), pa.utf8(),
              [["a"], ["a", "b"], ["z"], ["z", "y"]],
              [[0, None], [1, 0], [0], [1, 0]], stream_only=True,
              stream_opts=dict(emit_dictionary_deltas=True), expect_deltas=2,
              expect_replaced=1),
]


def _nested_dict_case():
    def build():
        dtyp = pa.dictionary(pa.int8(), pa.utf8())
        st = pa.struct([pa.field("code", dtyp), pa.field("n", pa.int32())])
        lt = pa.list_(pa.field("item", dtyp))
        schema = pa.schema([pa.field("s", st), pa.field("l", lt)])
        dictionary = pa.array(["red", "green", "blue"])
        out = []
        for ix, lix, offs in (([0, 2, None], [1, 1, None, 0], [0, 2, 2, 4]),
                              ([1], [2], [0, 1])):
            code = pa.DictionaryArray.from_arrays(pa.array(ix, pa.int8()), dictionary)
            s = pa.StructArray.from_arrays([code, pa.array(range(len(ix)), pa.int32())],
                                           fields=list(st))
            litems = pa.DictionaryArray.from_arrays(pa.array(lix, pa.int8()), dictionary)
            mask = pa.array([False, True, False]) if len(ix) == 3 else None
            l = pa.ListArray.from_arrays(pa.array(offs, pa.int32()), litems, type=lt, mask=mask)
            out.append(pa.record_batch([s, l], schema=schema))
        return out

    return Case("dict_nested_in_struct_and_list", build)


def _interval_case(name, kind, values):
    nn = [v for v in values if v is not None]
    batches_vals = [values, [], list(reversed(values)), values[:1]]

    def nonnull(vals):
        return list(itertools.islice(itertools.cycle(nn), len(vals)))

    def build():
        return [interval_batch([("v", kind, vals), ("nn", kind, nonnull(vals)),
                                ("z", kind, [None] * len(vals))])
                for vals in batches_vals]

    def expected(indices):
        rows = []
        for k in indices:
            vals = batches_vals[k]
            rows.extend([interval_cat(kind, v), interval_cat(kind, w), None]
                        for v, w in zip(vals, nonnull(vals)))
        return rows

    return Case(name, build, expected=expected, wrappable=False)


INTERVAL_CASES = [
    _interval_case("month_interval", "month", [1, None, -2 ** 31, 2 ** 31 - 1, 0, -13]),
    _interval_case("day_time_interval", "day_time",
                   [(1, 2), None, (-5, -86400000), (2 ** 31 - 1, -2 ** 31), (0, 0)]),
]

def _sliced_case():
    """Batches that are slices of a larger batch: pyarrow writes sliced
    arrays with their bitmaps shifted, and zero-row slices with whole
    buffers (larger than the rows need, which the format allows)."""

    def build():
        n = 50
        schema = pa.schema([
            ("s", pa.utf8()), ("l", pa.list_(pa.int32())), ("i", pa.int32()),
            ("b", pa.bool_()), ("st", pa.struct([("x", pa.int16()), ("y", pa.utf8())])),
            ("fsl", pa.list_(pa.int8(), 2)), ("bin", pa.large_binary())])
        full = pa.record_batch([
            pa.array([None if i % 7 == 3 else "s%d" % (i * i) for i in range(n)]),
            pa.array([None if i % 5 == 1 else list(range(i % 4)) for i in range(n)],
                     pa.list_(pa.int32())),
            pa.array([None if i % 3 == 0 else i for i in range(n)], pa.int32()),
            pa.array([None if i % 4 == 0 else i % 3 == 0 for i in range(n)]),
            pa.array([None if i % 6 == 0 else {"x": i, "y": None if i % 4 else "y%d" % i}
                      for i in range(n)], schema.field("st").type),
            pa.array([None if i % 9 == 0 else [i % 100, -(i % 100)] for i in range(n)],
                     pa.list_(pa.int8(), 2)),
            pa.array([None if i % 8 == 0 else bytes([i]) * (i % 5) for i in range(n)],
                     pa.large_binary()),
        ], schema=schema)
        return [full.slice(3, 11), full.slice(0, 0), full.slice(17, 0), full.slice(13),
                full.slice(49, 1), full]

    return Case("sliced_batches", build)


ALL_CASES = CASES + DICT_CASES + [_nested_dict_case(), _sliced_case()] + INTERVAL_CASES
CASES_BY_NAME = {c.name: c for c in ALL_CASES}


def wide_case():
    """All plain value types side by side in one file, 300 rows per batch."""

    def build():
        fields, cols = [], []
        for c in CASES:
            if not c.wrappable:
                continue
            b = c.batches()[0]
            col = b.column(0)
            reps = 300 // len(col) + 1
            arr = pa.concat_arrays([col] * reps).slice(0, 300)
            fields.append(pa.field(c.name, col.type))
            cols.append(arr)
        schema = pa.schema(fields)
        rb = pa.record_batch(cols, schema=schema)
        return [rb, rb.slice(0, 0), rb.slice(7, 100), rb]

    return Case("wide_all_types", build)
