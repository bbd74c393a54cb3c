"""Helpers shared by the pgwarp interop tests.

* cat_values(): what `pgwarp cat` must print for a pyarrow array, computed
  from pyarrow's own view of the data (the oracle), and match_value() /
  parse_cat() to compare it exactly with what our reader printed.
* interval_batch(): builds record batches with the YEAR_MONTH and DAY_TIME
  interval types, which pyarrow can write but not create from Python, through
  the C data interface.
* A minimal read-only flatbuffer walker over Arrow IPC files (IpcLayout) that
  finds the absolute file offsets of lengths, counts and offsets, so that the
  bad-input tests can corrupt exactly those fields.
"""
import gc
import json
import math
import os
import re
import resource
import shutil
import struct
import subprocess

import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.types as pat
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


# --------------------------------------------------------------- running

PGWARP_BIN = os.environ.get("PGWARP_BIN") or os.path.join(REPO, "build", "pgwarp")


class Result(tuple):
    """(rc, stdout, stderr) with attribute access."""

    def __new__(cls, rc, out, err, args):
        self = tuple.__new__(cls, (rc, out, err))
        self.args = args
        return self

    rc = property(lambda self: self[0])
    out = property(lambda self: self[1])
    err = property(lambda self: self[2])

    def describe(self):
        return "pgwarp %s -> rc=%s\nstderr: %s\nstdout: %s" % (
            " ".join(map(str, self.args)), self.rc, self.err[-2000:], self.out[:1000])


def run_pgwarp(*args, timeout=120, env=None, mem_limit=None, stdin=None):
    """Run pgwarp; returns Result(rc, stdout, stderr).  rc is negative when
    the process died of a signal, None when it timed out (and was killed).
    mem_limit: address-space limit in bytes (prlimit --as)."""
    if not os.path.exists(PGWARP_BIN):
        pytest.fail("pgwarp binary not found at %s (build it: make build/pgwarp)" % PGWARP_BIN)
    cmd = [PGWARP_BIN] + [str(a) for a in args]
    preexec = None
    if mem_limit:
        if shutil.which("prlimit"):
            # prlimit rather than preexec_fn, which is unsafe with threads
            cmd = ["prlimit", "--as=%d" % mem_limit, "--core=0", "--"] + cmd
        else:
            def preexec():
                resource.setrlimit(resource.RLIMIT_AS, (mem_limit, mem_limit))
                resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    full_env = dict(os.environ)
    for k, v in (env or {}).items():
        if v is None:
            full_env.pop(k, None)       # None: remove the variable
        else:
            full_env[k] = v
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           stdin=subprocess.DEVNULL if stdin is None else stdin,
                           timeout=timeout, env=full_env, preexec_fn=preexec)
        rc = p.returncode
        out, err = p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc = None
        out, err = e.stdout or b"", e.stderr or b""
    return Result(rc, out.decode("utf-8", "surrogateescape"),
                  err.decode("utf-8", "replace"), args)


def pg_dsn():
    parts = []
    for key, env in (("host", "PGHOST"), ("port", "PGPORT"), ("user", "PGUSER"),
                     ("dbname", "PGDATABASE")):
        v = os.environ.get(env)
        if v:
            parts.append("%s=%s" % (key, v))
    return " ".join(parts)


def wait_for_server(timeout=60):
    """An autocommit connection once the test cluster accepts one again
    (after a crash restart), or the test fails."""
    import time
    import psycopg
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        try:
            c = psycopg.connect(pg_dsn(), autocommit=True)
            c.execute("SELECT 1")
            return c
        except psycopg.Error as e:
            last = e
            time.sleep(0.2)
    pytest.fail("server did not come back within %ds: %s" % (timeout, last))


def wait_for_crash_restart(watch, timeout=30):
    """Wait until connection `watch` is terminated by the postmaster's
    crash restart (after a backend was killed with SIGKILL), then close it;
    then call wait_for_server."""
    import time
    import psycopg
    deadline = time.time() + timeout
    while True:
        try:
            watch.execute("SELECT 1")
        except psycopg.Error:
            break
        assert time.time() < deadline, "other backends survived a SIGKILLed backend"
        time.sleep(0.05)
    try:
        watch.close()
    except Exception:
        pass


def gpud_status(conn):
    """(kind, name, pid) of the pg_warp_gpud serving the test cluster, from
    the status file it writes under $PGDATA, or None when none serves."""
    row = conn.execute("SELECT pg_read_file('pg_warp_gpud.status', 0, 256, true)").fetchone()
    if not row or not row[0]:
        return None
    # kind, GPUs, name, pid, then the budgets in effect (newer daemons)
    parts = row[0].strip().split("\t")
    if len(parts) < 4:
        return None
    pid = int(parts[3])
    try:
        os.kill(pid, 0)         # the status file outlives a killed daemon
    except ProcessLookupError:
        return None
    except PermissionError:
        pass                    # alive, run by the server's user
    return (parts[0], parts[2], pid)


def engine_modes():
    """pg_warp.mode values the engine suites run under: cpu always, gpu when
    a pg_warp_gpud serves the cluster (CI starts one with the CPU driver)."""
    return ["cpu", "gpu"]


def error_lines(res):
    """The lines of stderr that are pgwarp error messages."""
    return [l for l in res.err.splitlines() if l.startswith("pgwarp: ")]


def check_error_message(res, path=None, names=()):
    """An error exit: status 1 and a message on stderr that starts with
    'pgwarp: ' and names the file (for file errors) and anything in
    `names` (a column, ...)."""
    assert res.rc == 1, res.describe()
    lines = error_lines(res)
    assert lines, "no 'pgwarp: ' message\n" + res.describe()
    if path is not None:
        assert any(str(path) in l or os.path.basename(str(path)) in l for l in lines), \
            res.describe()
    for n in names:
        assert any(n in l for l in lines), "message does not name %r\n%s" % (n, res.describe())


# ------------------------------------------------------------------ cat form

class Num(str):
    """A JSON number token, kept as written."""


class Obj(list):
    """A JSON object as its ordered list of (key, value) pairs."""

    def __repr__(self):
        return "Obj(%s)" % list.__repr__(self)


def _bad_constant(name):
    raise ValueError("bare JSON constant %s (NaN/Infinity must be strings)" % name)


def parse_cat_line(line):
    return json.loads(line, parse_int=Num, parse_float=Num,
                      parse_constant=_bad_constant, object_pairs_hook=Obj)


def parse_cat(stdout):
    """Rows printed by `pgwarp cat` (one JSON array per line)."""
    rows = []
    if stdout == "":
        return rows
    if not stdout.endswith("\n"):
        raise AssertionError("pgwarp cat output does not end with a newline")
    # split on "\n" only: str.splitlines() would also split inside strings
    # holding U+2028, U+0085 and other characters JSON leaves unescaped
    for n, line in enumerate(stdout[:-1].split("\n")):
        if line.strip() == "":
            raise AssertionError("empty line %d in pgwarp cat output" % n)
        rows.append(parse_cat_line(line))
    return rows


_INT_RE = re.compile(r"-?(0|[1-9][0-9]*)\Z")


def _float_cat(x):
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x


def decimal_string(d, scale):
    """Exact text of a Decimal as pgwarp prints a Decimal128(p, scale)."""
    sign, digits, exp = d.as_tuple()
    unscaled = int("".join(map(str, digits)) or "0")
    shift = exp + scale
    if shift < 0:
        raise AssertionError("decimal %r has more than %d fraction digits" % (d, scale))
    unscaled *= 10 ** shift
    return unscaled_to_string(-unscaled if sign else unscaled, scale)


def decimal_unscaled(d, scale):
    sign, digits, exp = d.as_tuple()
    unscaled = int("".join(map(str, digits)) or "0") * 10 ** (exp + scale)
    return -unscaled if sign else unscaled


def unscaled_to_string(u, scale):
    neg = u < 0
    s = str(abs(u))
    if scale > 0:
        s = s.rjust(scale + 1, "0")
        s = s[:-scale] + "." + s[-scale:]
    elif scale < 0:
        s = s + "0" * (-scale) if u != 0 else "0"
    return ("-" if neg and u != 0 else "") + s


def _view_ints(arr, width):
    """Raw integer storage of a temporal array."""
    return arr.cast(pa.int32() if width == 32 else pa.int64()).to_pylist()


def cat_values(arr):
    """The values `pgwarp cat` prints for each slot of a pyarrow Array or
    ChunkedArray, as Python objects: None, bool, int, float, str, list, Obj."""
    if isinstance(arr, pa.ChunkedArray):
        out = []
        for c in arr.chunks:
            out.extend(cat_values(c))
        return out
    t = arr.type
    n = len(arr)
    valid = arr.is_valid().to_pylist() if n else []

    def masked(vals):
        return [v if ok else None for v, ok in zip(vals, valid)]

    if pat.is_null(t):
        return [None] * n
    if pat.is_dictionary(t):
        dvals = cat_values(arr.dictionary)
        idx = arr.indices.to_pylist()
        return [None if i is None else dvals[i] for i in idx]
    if pat.is_boolean(t) or pat.is_integer(t):
        return arr.to_pylist()
    if pat.is_floating(t):
        return [None if v is None else _float_cat(v) for v in arr.to_pylist()]
    if pat.is_decimal(t):
        if t.bit_width != 128:
            raise NotImplementedError(str(t))
        return [None if v is None else decimal_string(v, t.scale) for v in arr.to_pylist()]
    if pat.is_date32(t) or pat.is_time32(t):
        return _view_ints(arr, 32)
    if pat.is_date64(t) or pat.is_time64(t) or pat.is_timestamp(t) or pat.is_duration(t):
        return _view_ints(arr, 64)
    if t == pa.month_day_nano_interval():
        return [None if v is None else [v.months, v.days, v.nanoseconds] for v in arr.to_pylist()]
    if pat.is_string(t) or pat.is_large_string(t):
        return arr.to_pylist()
    if pat.is_binary(t) or pat.is_large_binary(t) or pat.is_fixed_size_binary(t):
        return [None if v is None else v.hex() for v in arr.to_pylist()]
    if pat.is_map(t):
        offs = arr.offsets.to_pylist()
        keys = cat_values(arr.keys)
        items = cat_values(arr.items)
        return masked([[[keys[j], items[j]] for j in range(offs[i], offs[i + 1])]
                       for i in range(n)])
    if pat.is_list(t) or pat.is_large_list(t):
        offs = arr.offsets.to_pylist()
        vals = cat_values(arr.values)
        return masked([vals[offs[i]:offs[i + 1]] for i in range(n)])
    if pat.is_fixed_size_list(t):
        size = t.list_size
        vals = cat_values(arr.values)
        base = arr.offset
        return masked([vals[(base + i) * size:(base + i + 1) * size] for i in range(n)])
    if pat.is_struct(t):
        children = [cat_values(c) for c in arr.flatten()]
        names = [t.field(i).name for i in range(t.num_fields)]
        rows = [Obj([(names[k], children[k][i]) for k in range(len(names))]) for i in range(n)]
        return masked(rows)
    raise NotImplementedError("no cat encoding for %s" % t)


def cat_rows(batches):
    """Expected `pgwarp cat` rows for a list of record batches / a table."""
    if isinstance(batches, pa.Table):
        batches = batches.to_batches()
    rows = []
    for b in batches:
        cols = [cat_values(b.column(i)) for i in range(b.num_columns)]
        rows.extend([list(r) for r in zip(*cols)] if cols else [])
    return rows


def match_value(exp, act):
    """Exact comparison of an expected cat value with a parsed one."""
    if exp is None:
        return act is None
    if isinstance(exp, bool):
        return act is exp
    if isinstance(exp, int):
        return isinstance(act, Num) and bool(_INT_RE.match(act)) and int(act) == exp
    if isinstance(exp, float):
        if not isinstance(act, Num):
            return False
        try:
            a = float(act)
        except ValueError:
            return False
        return a == exp and math.copysign(1.0, a) == math.copysign(1.0, exp)
    if isinstance(exp, str):
        return type(act) is str and act == exp
    if isinstance(exp, Obj):
        if not isinstance(act, Obj) or len(act) != len(exp):
            return False
        return all(ka == ke and match_value(ve, va)
                   for (ke, ve), (ka, va) in zip(exp, act))
    if isinstance(exp, list):
        if type(act) is not list or len(act) != len(exp):
            return False
        return all(match_value(e, a) for e, a in zip(exp, act))
    raise TypeError("unexpected expected value %r" % (exp,))


def encode_cat(v):
    """JSON text of an expected cat value, as a reference implementation of
    the encoding would print it (floats "%.17g")."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "%.17g" % v
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, Obj):
        return "{" + ", ".join("%s: %s" % (json.dumps(k), encode_cat(x)) for k, x in v) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(encode_cat(x) for x in v) + "]"
    raise TypeError(repr(v))


def assert_same_expected(a, b, what=""):
    """Two lists of expected rows (both computed, neither parsed) are equal."""
    assert_rows_match(a, [parse_cat_line(encode_cat(r)) for r in b], what)


def assert_rows_match(expected, actual, what=""):
    problems = []
    if len(expected) != len(actual):
        problems.append("row count: expected %d, got %d" % (len(expected), len(actual)))
    for i, (e, a) in enumerate(zip(expected, actual)):
        if not match_value(e, a):
            problems.append("row %d:\n  expected %s\n  got      %s" % (i, _short(e), _short(a)))
            if len(problems) > 6:
                break
    if problems:
        raise AssertionError("%s\n%s" % (what, "\n".join(problems)))


def _short(v, limit=600):
    s = repr(v)
    return s if len(s) <= limit else s[:limit] + "...(%d chars)" % len(s)


# --------------------------------------------- YEAR_MONTH / DAY_TIME batches

_cdi = {}


def _cffi():
    if not _cdi:
        from pyarrow.cffi import ffi
        keep = []

        @ffi.callback("void(struct ArrowSchema*)")
        def rel_s(p):
            p.release = ffi.NULL

        @ffi.callback("void(struct ArrowArray*)")
        def rel_a(p):
            p.release = ffi.NULL

        _cdi.update(ffi=ffi, keep=keep, rel_s=rel_s, rel_a=rel_a)
    return _cdi


def _c_schema(fmt, name, children=(), flags=2):
    c = _cffi()
    ffi, keep = c["ffi"], c["keep"]
    s = ffi.new("struct ArrowSchema*")
    f = ffi.new("char[]", fmt)
    nm = ffi.new("char[]", name.encode())
    keep += [s, f, nm]
    s.format, s.name, s.metadata, s.flags = f, nm, ffi.NULL, flags
    s.n_children = len(children)
    if children:
        ch = ffi.new("struct ArrowSchema*[]", list(children))
        keep.append(ch)
        s.children = ch
    else:
        s.children = ffi.NULL
    s.dictionary = ffi.NULL
    s.release = c["rel_s"]
    return s


def _c_array(length, null_count, bufs, children=()):
    c = _cffi()
    ffi, keep = c["ffi"], c["keep"]
    a = ffi.new("struct ArrowArray*")
    keep.append(a)
    a.length, a.null_count, a.offset = length, null_count, 0
    ptrs = []
    for b in bufs:
        if b is None:
            ptrs.append(ffi.NULL)
        else:
            m = ffi.new("char[]", max(len(b), 1))
            ffi.memmove(m, b, len(b))
            keep.append(m)
            ptrs.append(m)
    pb = ffi.new("void*[]", ptrs)
    keep.append(pb)
    a.n_buffers, a.buffers = len(bufs), pb
    a.n_children = len(children)
    if children:
        ch = ffi.new("struct ArrowArray*[]", list(children))
        keep.append(ch)
        a.children = ch
    else:
        a.children = ffi.NULL
    a.dictionary = ffi.NULL
    a.release = c["rel_a"]
    return a


def interval_batch(cols, nrows=None):
    """A RecordBatch of interval columns that pyarrow cannot build itself.
    cols: [(name, 'month' | 'day_time', values)], values: None, int months,
    or (days, milliseconds)."""
    c = _cffi()
    ffi = c["ffi"]
    schemas, arrays = [], []
    n = nrows
    for name, kind, vals in cols:
        n = len(vals)
        bitmap = bytearray((n + 7) // 8)
        data = bytearray()
        nulls = 0
        for i, v in enumerate(vals):
            if v is None:
                nulls += 1
                data += bytes(4 if kind == "month" else 8)
            else:
                bitmap[i >> 3] |= 1 << (i & 7)
                data += struct.pack("<i", v) if kind == "month" else struct.pack("<ii", *v)
        schemas.append(_c_schema(b"tiM" if kind == "month" else b"tiD", name))
        arrays.append(_c_array(n, nulls, [bytes(bitmap) if nulls else None, bytes(data)]))
    top_s = _c_schema(b"+s", "", schemas, flags=0)
    top_a = _c_array(n or 0, 0, [None], arrays)
    imported = pa.RecordBatch._import_from_c(int(ffi.cast("uintptr_t", top_a)),
                                             int(ffi.cast("uintptr_t", top_s)))
    # Copy into memory pyarrow owns (through an IPC round trip) and let go of
    # the imported batch now: its release callbacks must not outlive cffi at
    # interpreter shutdown.
    sink = pa.BufferOutputStream()
    with ipc.new_stream(sink, imported.schema) as w:
        w.write_batch(imported)
    del imported
    gc.collect()
    c["keep"].clear()
    return ipc.open_stream(sink.getvalue()).read_next_batch()


def interval_cat(kind, v):
    if v is None:
        return None
    return v if kind == "month" else list(v)


# ------------------------------------------------------- flatbuffer walking

class FB:
    """Read-only flatbuffer access over a bytes object; every accessor also
    returns the absolute position of what it read."""

    def __init__(self, buf):
        self.buf = buf

    def u8(self, p):
        return self.buf[p]

    def i16(self, p):
        return struct.unpack_from("<h", self.buf, p)[0]

    def i32(self, p):
        return struct.unpack_from("<i", self.buf, p)[0]

    def u32(self, p):
        return struct.unpack_from("<I", self.buf, p)[0]

    def i64(self, p):
        return struct.unpack_from("<q", self.buf, p)[0]

    def root(self, start):
        return start + self.u32(start)

    def field_pos(self, table, i):
        """Absolute position of field i of the table at `table`, or None."""
        vt = table - self.i32(table)
        vt_size = struct.unpack_from("<H", self.buf, vt)[0]
        if 4 + 2 * i + 2 > vt_size:
            return None
        off = struct.unpack_from("<H", self.buf, vt + 4 + 2 * i)[0]
        return table + off if off else None

    def deref(self, p):
        return p + self.u32(p)

    def table(self, table, i):
        p = self.field_pos(table, i)
        return None if p is None else self.deref(p)

    def vector(self, table, i):
        """(length position, first element position, length) or None."""
        p = self.field_pos(table, i)
        if p is None:
            return None
        v = self.deref(p)
        return v, v + 4, self.u32(v)

    def string(self, table, i):
        vec = self.vector(table, i)
        if vec is None:
            return None, None
        lenpos, start, n = vec
        return self.buf[start:start + n].decode("utf-8"), lenpos


class Site:
    """A field in the file that a test may overwrite."""

    def __init__(self, kind, pos, fmt, value, region):
        self.kind, self.pos, self.fmt, self.value, self.region = kind, pos, fmt, value, region

    def __repr__(self):
        return "Site(%s @%d %s=%r)" % (self.kind, self.pos, self.fmt, self.value)


# Type union values (Schema.fbs)
T_INT, T_FSB, T_FSL, T_DECIMAL = 2, 15, 16, 7


class IpcLayout:
    """Locates the messages, footer and interesting fields of an IPC file or
    stream written by pyarrow (continuation-marker format)."""

    def __init__(self, data):
        self.data = data
        self.fb = FB(data)
        self.sites = []
        self.messages = []   # dicts: offset, meta_len, header_type, body_offset, body_len, meta_start
        self.is_file = data[:6] == b"ARROW1"
        self.footer = None
        self.footer_blocks = {"dicts": [], "batches": []}
        pos = 8 if self.is_file else 0
        end = len(data)
        if self.is_file:
            flen = struct.unpack_from("<i", data, end - 10)[0]
            self.footer_start = end - 10 - flen
            self.sites.append(Site("footer_length", end - 10, "<i", flen, "trailer"))
            end = self.footer_start
        while pos + 8 <= end:
            marker = self.fb.u32(pos)
            assert marker == 0xFFFFFFFF, "legacy format not handled"
            mlen = self.fb.i32(pos + 4)
            if mlen == 0:
                self.eos = pos
                pos += 8
                break
            self._message(pos, mlen)
            pos = self.messages[-1]["end"]
        self.stream_end = pos
        if self.is_file:
            self._footer()

    # -- messages
    def _message(self, pos, mlen):
        fb = self.fb
        meta = pos + 8
        region = "msg%d" % len(self.messages)
        root = fb.root(meta)
        htype_pos = fb.field_pos(root, 1)
        htype = fb.u8(htype_pos)
        body_pos = fb.field_pos(root, 3)
        body_len = fb.i64(body_pos) if body_pos else 0
        header = fb.table(root, 2)
        m = dict(offset=pos, meta_len=mlen + 8, header_type=htype, meta_start=meta,
                 meta_end=meta + mlen, body_offset=meta + mlen, body_len=body_len,
                 end=meta + mlen + body_len, region=region)
        self.messages.append(m)
        sites = self.sites
        sites.append(Site("meta_length", pos + 4, "<i", mlen, region))
        sites.append(Site("message_root", meta, "<I", fb.u32(meta), region))
        sites.append(Site("message_vtable", root, "<i", fb.i32(root), region))
        sites.append(Site("header_type", htype_pos, "<B", htype, region))
        if body_pos:
            sites.append(Site("message_body_length", body_pos, "<q", body_len, region))
        if htype == 1:
            m["kind"] = "schema"
            self._schema(header, region)
        elif htype == 3:
            m["kind"] = "batch"
            self._record_batch(header, region, m)
        elif htype == 2:
            m["kind"] = "dict"
            idp = fb.field_pos(header, 0)
            if idp:
                sites.append(Site("dict_batch_id", idp, "<q", fb.i64(idp), region))
            m["dict_id"] = fb.i64(idp) if idp else 0
            dp = fb.field_pos(header, 2)
            m["is_delta"] = bool(fb.u8(dp)) if dp else False
            self._record_batch(fb.table(header, 1), region, m)

    def _record_batch(self, rb, region, m):
        fb, sites = self.fb, self.sites
        lp = fb.field_pos(rb, 0)
        m["length"] = fb.i64(lp) if lp else 0
        if lp:
            sites.append(Site("batch_length", lp, "<q", m["length"], region))
        nodes = fb.vector(rb, 1)
        m["nodes"] = []
        if nodes:
            lenpos, start, n = nodes
            sites.append(Site("nodes_count", lenpos, "<I", n, region))
            for k in range(n):
                p = start + 16 * k
                m["nodes"].append((fb.i64(p), fb.i64(p + 8)))
                sites.append(Site("node_length", p, "<q", fb.i64(p), region))
                sites.append(Site("node_null_count", p + 8, "<q", fb.i64(p + 8), region))
        bufs = fb.vector(rb, 2)
        m["buffers"] = []
        if bufs:
            lenpos, start, n = bufs
            sites.append(Site("buffers_count", lenpos, "<I", n, region))
            for k in range(n):
                p = start + 16 * k
                off, ln = fb.i64(p), fb.i64(p + 8)
                m["buffers"].append((off, ln))
                sites.append(Site("buffer_offset", p, "<q", off, region))
                sites.append(Site("buffer_length", p + 8, "<q", ln, region))
        comp = fb.table(rb, 3)
        m["codec"] = None
        if comp is not None:
            cp = fb.field_pos(comp, 0)
            m["codec"] = fb.u8(cp) if cp else 0
            if cp:
                sites.append(Site("codec", cp, "<b", m["codec"], region))

    def _schema(self, schema, region):
        fb = self.fb
        fields = fb.vector(schema, 1)
        out = []
        if fields:
            lenpos, start, n = fields
            self.sites.append(Site("fields_count", lenpos, "<I", n, region))
            for k in range(n):
                out.append(self._field(fb.deref(start + 4 * k), region))
        return out

    def _field(self, f, region):
        fb, sites = self.fb, self.sites
        name, namelen = fb.string(f, 0)
        if namelen is not None:
            sites.append(Site("name_length", namelen, "<I", len(name.encode()), region))
        np_ = fb.field_pos(f, 1)
        ttp = fb.field_pos(f, 2)
        tt = fb.u8(ttp) if ttp else 0
        if ttp:
            sites.append(Site("type_type", ttp, "<B", tt, region))
        ty = fb.table(f, 3)
        if ty is not None:
            if tt == T_INT:
                p = fb.field_pos(ty, 0)
                if p:
                    sites.append(Site("int_bit_width", p, "<i", fb.i32(p), region))
            elif tt == T_FSB:
                p = fb.field_pos(ty, 0)
                if p:
                    sites.append(Site("fsb_byte_width", p, "<i", fb.i32(p), region))
            elif tt == T_FSL:
                p = fb.field_pos(ty, 0)
                if p:
                    sites.append(Site("fsl_list_size", p, "<i", fb.i32(p), region))
            elif tt == T_DECIMAL:
                for i, kind in ((0, "decimal_precision"), (1, "decimal_scale"),
                                (2, "decimal_bit_width")):
                    p = fb.field_pos(ty, i)
                    if p:
                        sites.append(Site(kind, p, "<i", fb.i32(p), region))
        d = fb.table(f, 4)
        dict_info = None
        if d is not None:
            idp = fb.field_pos(d, 0)
            dict_id = fb.i64(idp) if idp else 0
            if idp:
                sites.append(Site("field_dict_id", idp, "<q", dict_id, region))
            it = fb.table(d, 1)
            bw, signed = 32, True
            if it is not None:
                p = fb.field_pos(it, 0)
                if p:
                    bw = fb.i32(p)
                    sites.append(Site("dict_index_bit_width", p, "<i", bw, region))
                p = fb.field_pos(it, 1)
                signed = bool(fb.u8(p)) if p else False
            op = fb.field_pos(d, 2)
            dict_info = dict(id=dict_id, bit_width=bw, signed=signed,
                             ordered=bool(fb.u8(op)) if op else False)
        children = []
        ch = fb.vector(f, 5)
        if ch:
            lenpos, start, n = ch
            sites.append(Site("children_count", lenpos, "<I", n, region))
            children = [self._field(fb.deref(start + 4 * k), region) for k in range(n)]
        md = {}
        mv = fb.vector(f, 6)
        if mv:
            lenpos, start, n = mv
            for k in range(n):
                kv = fb.deref(start + 4 * k)
                kk, _ = fb.string(kv, 0)
                vv, _ = fb.string(kv, 1)
                md[kk or ""] = vv or ""
        return dict(name=name or "", nullable=bool(fb.u8(np_)) if np_ else False,
                    type_type=tt, dictionary=dict_info, children=children, metadata=md)

    def _footer(self):
        fb, sites = self.fb, self.sites
        start = self.footer_start
        region = "footer"
        root = fb.root(start)
        sites.append(Site("footer_root", start, "<I", fb.u32(start), region))
        sites.append(Site("footer_vtable", root, "<i", fb.i32(root), region))
        schema = fb.table(root, 1)
        self.footer_fields = self._schema(schema, region)
        for which, idx in (("dicts", 2), ("batches", 3)):
            vec = fb.vector(root, idx)
            if not vec:
                continue
            lenpos, s, n = vec
            sites.append(Site(which + "_blocks_count", lenpos, "<I", n, region))
            for k in range(n):
                p = s + 24 * k
                self.footer_blocks[which].append((fb.i64(p), fb.i32(p + 8), fb.i64(p + 16)))
                breg = "footer_" + which
                sites.append(Site("block_offset", p, "<q", fb.i64(p), breg))
                sites.append(Site("block_meta_length", p + 8, "<i", fb.i32(p + 8), breg))
                sites.append(Site("block_body_length", p + 16, "<q", fb.i64(p + 16), breg))

    # -- conveniences
    def batch_messages(self):
        return [m for m in self.messages if m.get("kind") == "batch"]

    def schema_fields(self):
        """Fields of the schema the reader must use (footer for files)."""
        if self.is_file:
            return self.footer_fields
        return self._schema_from_stream()

    def _schema_from_stream(self):
        saved = self.sites
        self.sites = []
        try:
            m = self.messages[0]
            root = self.fb.root(m["meta_start"])
            return self._schema(self.fb.table(root, 2), "tmp")
        finally:
            self.sites = saved


def patch(data, pos, fmt, value):
    b = bytearray(data)
    struct.pack_into(fmt, b, pos, value)
    return bytes(b)


_OWN_BUFFERS = {1: 0, 13: 1, 16: 1, 4: 3, 5: 3, 19: 3, 20: 3, 12: 2, 21: 2, 17: 2}


def buffer_owners(fields, prefix=""):
    """[(field path, buffer number within the field)] in record batch buffer
    order, for the fields of an IpcLayout schema."""
    out = []
    for f in fields:
        path = prefix + f["name"]
        n = 2 if f["dictionary"] else _OWN_BUFFERS.get(f["type_type"], 2)
        out.extend((path, k) for k in range(n))
        out.extend(buffer_owners(f["children"], path + "."))
    return out


# ------------------------------------------------------------- statistics

def read_file(path):
    """pyarrow's view of an Arrow IPC file: (reader, table) after full validation."""
    reader = ipc.open_file(path)
    table = reader.read_all()
    table.validate(full=True)
    return reader, table


def stat_kind(t):
    if pat.is_integer(t) or pat.is_date(t) or pat.is_time(t) or pat.is_timestamp(t):
        return "int"
    if pat.is_decimal(t):
        return "decimal"
    if pat.is_floating(t):
        return "float"
    return None


def expected_stat(arr):
    """(min, max) pyarrow computes for one column of one batch, as Python
    numbers (ints, unscaled decimals, floats with NaN above +Infinity), or
    (None, None) when the batch has no non-null value."""
    t = arr.type
    kind = stat_kind(t)
    if kind == "decimal":
        vals = [decimal_unscaled(v, t.scale) for v in arr.to_pylist() if v is not None]
    elif kind == "float":
        vals = [float(v) for v in arr.to_pylist() if v is not None]
    elif pat.is_integer(t):
        vals = [v for v in arr.to_pylist() if v is not None]
    else:
        vals = [v for v in cat_values(arr) if v is not None]   # raw storage integers
    if not vals:
        return None, None
    if kind == "float":
        non_nan = [v for v in vals if not math.isnan(v)]
        mx = float("nan") if len(non_nan) < len(vals) else max(non_nan)
        mn = min(non_nan) if non_nan else float("nan")
        return mn, mx
    return min(vals), max(vals)


def same_stat(kind, entry, want):
    if want is None:
        return entry == ""
    if entry == "":
        return False
    if kind == "float":
        try:
            got = float(entry)
        except ValueError:
            return False
        return (math.isnan(got) and math.isnan(want)) or got == want
    return entry == str(want)


def check_statistics(path):
    reader, table = read_file(path)
    schema = reader.schema        # the footer's schema
    nb = reader.num_record_batches
    batches = [reader.get_batch(i) for i in range(nb)]
    checked = 0
    problems = []
    for ci, field in enumerate(schema):
        kind = stat_kind(field.type)
        if kind is None:
            continue
        md = field.metadata or {}
        assert b"min_values" in md and b"max_values" in md, (field.name, md)
        mins = md[b"min_values"].decode().split(",")
        maxs = md[b"max_values"].decode().split(",")
        assert len(mins) == nb and len(maxs) == nb, (field.name, nb, mins, maxs)
        for bi, b in enumerate(batches):
            mn, mx = expected_stat(b.column(ci))
            if not (same_stat(kind, mins[bi], mn) and same_stat(kind, maxs[bi], mx)):
                problems.append("%s batch %d: min %r max %r, pyarrow says %r %r"
                                % (field.name, bi, mins[bi], maxs[bi], mn, mx))
        checked += 1
    assert not problems, "\n".join(problems[:20])
    return checked


def uncompressed_buffers_in_compressed_batches(compressed, plain, raw_every=2):
    """An IPC stream or file like `compressed` (pyarrow-written, with
    compression) in which every `raw_every`-th non-empty buffer is instead
    stored uncompressed, with the -1 length prefix the format allows.
    `plain` is the same data written without compression, where the raw
    bytes come from.  Buffer offsets, body lengths and footer blocks are
    patched in place; the result is checked by the caller with pyarrow."""
    lc, lp = IpcLayout(compressed), IpcLayout(plain)
    bc = [m for m in lc.messages if m["kind"] in ("batch", "dict")]
    bp = [m for m in lp.messages if m["kind"] in ("batch", "dict")]
    assert len(bc) == len(bp)
    out = bytearray(compressed[:lc.messages[0]["end"]])      # magic + schema
    new_offsets = {}
    k = 0
    for mc, mp in zip(bc, bp):
        meta = bytearray(compressed[mc["offset"]:mc["meta_end"]])
        body = bytearray()
        fb = FB(compressed)
        sites = {s.pos: s for s in lc.sites if s.region == mc["region"]}
        buf_sites = sorted((s for s in sites.values() if s.kind == "buffer_offset"),
                           key=lambda s: s.pos)
        for (off, ln), (poff, pln), site in zip(mc["buffers"], mp["buffers"], buf_sites):
            if ln == 0:
                data = b""
            elif k % raw_every == 0:
                data = struct.pack("<q", -1) + plain[mp["body_offset"] + poff:
                                                     mp["body_offset"] + poff + pln]
            else:
                data = compressed[mc["body_offset"] + off:mc["body_offset"] + off + ln]
            if ln:
                k += 1
            rel = site.pos - mc["offset"]
            struct.pack_into("<q", meta, rel, len(body))
            struct.pack_into("<q", meta, rel + 8, len(data))
            body += data + bytes((-len(data)) % 8)
        bl = [s for s in sites.values() if s.kind == "message_body_length"]
        if bl:
            struct.pack_into("<q", meta, bl[0].pos - mc["offset"], len(body))
        else:
            assert len(body) == 0    # an empty body's length is not stored
        new_offsets[mc["offset"]] = (len(out), len(body))
        out += meta + body
    if not lc.is_file:
        out += b"\xff\xff\xff\xff\x00\x00\x00\x00"
        return bytes(out)
    out += compressed[lc.stream_end - 8:lc.stream_end]        # EOS marker
    footer = bytearray(compressed[lc.footer_start:])
    for s in lc.sites:
        if s.kind == "block_offset":
            off, blen = new_offsets[s.value]
            struct.pack_into("<q", footer, s.pos - lc.footer_start, off)
            struct.pack_into("<q", footer, s.pos + 16 - lc.footer_start, blen)
    pad = (-len(out)) % 8
    out += bytes(pad)
    return bytes(out + footer)
