"""pg_warp's star-join pre-aggregation (Custom Scan (WarpPreAgg)) against
PostgreSQL itself, on the cases where accelerated engines are known to have
returned wrong answers: NULL join and group keys, duplicate dimension keys,
empty inputs, all-NULL groups, integer and float overflow, division by zero
only where PostgreSQL divides, IS [NOT] DISTINCT FROM, BETWEEN SYMMETRIC,
real arithmetic, NaN / -0 / Infinity, integer extremes, dates and
timestamps, CASE / COALESCE / NULLIF, IN lists with NULL, prepared
statements, FILTER, HAVING, ORDER BY ... LIMIT, rescans, unusual Arrow
encodings.

Every case is run twice:
  * on arrow_fdw tables with pg_warp on, where the plan must contain
    WarpPreAgg when the query is meant to be offloaded;
  * the ORACLE: the same SQL with pg_warp.enabled = off on heap tables
    holding the same rows, loaded with COPY from CSV files that pyarrow.csv
    wrote (the data never passes through pg_warp's Arrow reader).
Results must be equal (sorted unless the query has a total ORDER BY; float
sums and averages, named sum*/avg*, to a relative 1e-9; everything else
exactly, with -0 = 0 and NaN = NaN), or both must fail with the same
SQLSTATE.

The tables are a few rows each, far below the size where the planner would
choose the engine on cost, so the session raises cpu_tuple_cost and
cpu_operator_cost (the same settings for both runs): they change plan
choice only, never results.  (A query on an empty table alone still costs
the same either way, so those few are checked for results only.)

The helpers (Star, check, ...) are shared with test_engine_differential.py.
"""
import datetime
import decimal
import math
import os
import re
import shutil
import struct
import tempfile
import time

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.ipc as ipc
import pytest

psycopg = pytest.importorskip("psycopg")
from psycopg.types.string import TextLoader  # noqa: E402

from pwhelpers import gpud_status, pg_dsn  # noqa: E402

# plan choice only: the test tables are tiny (see the module docstring)
SESSION_SETTINGS = [
    "SET cpu_tuple_cost = 10000",
    "SET cpu_operator_cost = 2500",
    "SET max_parallel_workers_per_gather = 0",
    "SET enable_mergejoin = off",        # keep the oracle in fact-row order
    "SET plan_cache_mode = auto",
    "SET TimeZone = 'UTC'",
    "SET extra_float_digits = 1",
    "SET jit = off",
    # the CPU driver in the backend unless a test asks for pg_warp_gpud: on a
    # machine whose daemon drives a GPU, auto would send star queries there
    # and the tests of threads, workers and the row-order float fallback
    # would test the GPU instead
    "SET pg_warp.mode = cpu",
]

REL_TOL = 1e-9

PA_TYPE = {
    "int2": pa.int16(), "int4": pa.int32(), "int8": pa.int64(),
    "float4": pa.float32(), "float8": pa.float64(),
    "date": pa.date32(), "timestamp": pa.timestamp("us"),
    "timestamptz": pa.timestamp("us", tz="UTC"),
    "bool": pa.bool_(), "text": pa.string(), "varchar(20)": pa.string(),
    "varchar(400)": pa.string(), "varchar(10)": pa.string(),
}

NAN = float("nan")
INF = float("inf")


def pa_type(t):
    """the Arrow type a test column of PostgreSQL type t is written as"""
    m = re.match(r"numeric\((\d+),\s*(\d+)\)$", t)
    if m:
        return pa.decimal128(int(m.group(1)), int(m.group(2)))
    return PA_TYPE[t]
D = datetime.date
TS = datetime.datetime


# ------------------------------------------------------------------ setup

def scratch_root():
    root = os.environ.get("PGWARP_TEST_DIR")
    if not root:
        root = os.path.join(tempfile.gettempdir(), "pgwarp-pytest-%d" % os.getuid())
        os.makedirs(root, exist_ok=True)
    return root


def connect_once():
    """An autocommit connection of our own: dates and timestamps come back
    as text (exact, and not limited to Python's year range), and psycopg
    never prepares statements behind our back (a statement prepared under
    one search_path would run against the other schema's tables)."""
    conn = psycopg.connect(pg_dsn(), autocommit=True)
    conn.prepare_threshold = None
    for t in ("date", "timestamp", "timestamptz"):
        conn.adapters.register_loader(t, TextLoader)
    conn.execute("CREATE EXTENSION IF NOT EXISTS pg_warp")
    for s in SESSION_SETTINGS:
        conn.execute(s)
    return conn


def _stat_entry(values, is_float):
    vals = [v for v in values if v is not None]
    if not vals:
        return "", ""
    if is_float:
        nans = [v for v in vals if math.isnan(v)]
        rest = [v for v in vals if not math.isnan(v)]
        lo = min(rest) if rest else NAN
        hi = NAN if nans else max(rest)
        return "%.17g" % lo, "%.17g" % hi
    return "%d" % min(vals), "%d" % max(vals)


def with_statistics(schema, batches):
    """schema with min_values / max_values field metadata for the batches,
    in the storage values docs/arrow_fdw.md (per-batch statistics) describes"""
    fields = []
    for i, f in enumerate(schema):
        t = f.type
        if pa.types.is_integer(t) or pa.types.is_floating(t):
            raw = [b.column(i).to_pylist() for b in batches]
        elif pa.types.is_date32(t):
            raw = [b.column(i).view(pa.int32()).to_pylist() for b in batches]
        elif pa.types.is_date64(t) or pa.types.is_timestamp(t):
            raw = [b.column(i).view(pa.int64()).to_pylist() for b in batches]
        elif pa.types.is_decimal(t):
            # the unscaled integer (12345 for 123.45 in Decimal(10, 2))
            raw = [[None if v is None else int(v.scaleb(t.scale)) for v in b.column(i).to_pylist()]
                   for b in batches]
        else:
            fields.append(f)
            continue
        ent = [_stat_entry(r, pa.types.is_floating(t)) for r in raw]
        fields.append(f.with_metadata({b"min_values": ",".join(e[0] for e in ent).encode(),
                                       b"max_values": ",".join(e[1] for e in ent).encode()}))
    return pa.schema(fields, metadata=schema.metadata)


class Session:
    """The test connection; reconnects after the server lost it (a crashed
    backend), so that one crash fails one case, not every later one."""

    def __init__(self):
        self.c = None
        self.get()

    def get(self):
        if self.c is None or self.c.closed or self.c.broken:
            if self.c is not None:
                # let the postmaster finish terminating every backend first
                time.sleep(1.0)
            deadline = time.time() + 60
            while True:
                try:
                    self.c = connect_once()
                    self.c.execute("SELECT 1")
                    break
                except psycopg.OperationalError:
                    if time.time() > deadline:
                        raise
                    time.sleep(0.5)
        return self.c

    def execute(self, sql):
        return self.get().execute(sql)

    def lost(self):
        return self.c is None or self.c.closed or self.c.broken

    def close(self):
        if self.c is not None:
            self.c.close()


class Star:
    """One test schema pair: `w_<tag>` holds what pg_warp runs on (arrow_fdw
    foreign tables, or heap tables for heap dimensions), `h_<tag>` the
    oracle's heap tables, each loaded from a CSV file written by pyarrow."""

    def __init__(self, conn, tag):
        self.conn = conn
        self.w = "w_" + tag
        self.h = "h_" + tag
        self.dir = tempfile.mkdtemp(prefix="engine_%s." % tag, dir=scratch_root())
        os.chmod(self.dir, 0o755)
        for s in (self.w, self.h):
            conn.execute("DROP SCHEMA IF EXISTS %s CASCADE" % s)
            conn.execute("CREATE SCHEMA %s" % s)
        self.files = {}

    def close(self):
        for s in (self.w, self.h):
            try:
                self.conn.execute("DROP SCHEMA IF EXISTS %s CASCADE" % s)
            except psycopg.Error:
                pass
        shutil.rmtree(self.dir, ignore_errors=True)

    def table(self, name, cols, rows=None, arrow=True, batch_rows=None, arrow_table=None,
              compression=None, empty_batch=False, stats=False):
        """cols: [(name, pgtype)]; rows: tuples of Python values.
        arrow_table: the Arrow data to write instead (other encodings); the
        CSV is then written from its columns cast to the plain types.
        stats: write per-batch min/max statistics (docs/arrow_fdw.md, per-batch statistics)
        so that arrow_fdw skips batches."""
        names = [c for c, _ in cols]
        ddl = ", ".join("%s %s" % (c, t) for c, t in cols)
        plain_schema = pa.schema([(c, pa_type(t)) for c, t in cols])
        if arrow_table is None:
            rows = list(rows or [])
            arrays = []
            for i, (c, t) in enumerate(cols):
                arrays.append(pa.array([r[i] for r in rows], type=pa_type(t)))
            arrow_table = pa.Table.from_arrays(arrays, names=names)
        plain = pa.Table.from_arrays(
            [col.dictionary_decode() if pa.types.is_dictionary(col.type) else col
             for col in (c.combine_chunks() for c in arrow_table.columns)],
            names=names)
        plain = plain.cast(plain_schema)
        csv_path = os.path.join(self.dir, name + ".csv")
        pacsv.write_csv(plain, csv_path)
        os.chmod(csv_path, 0o644)
        self.conn.execute("CREATE TABLE %s.%s (%s)" % (self.h, name, ddl))
        self.conn.execute("COPY %s.%s FROM '%s' WITH (FORMAT csv, HEADER true)"
                          % (self.h, name, csv_path))
        self.conn.execute("ANALYZE %s.%s" % (self.h, name))
        if arrow:
            path = os.path.join(self.dir, name + ".arrow")
            opts = ipc.IpcWriteOptions(compression=compression) if compression else None
            batches = arrow_table.combine_chunks().to_batches(max_chunksize=batch_rows) \
                if arrow_table.num_rows else []
            if empty_batch:
                batches.insert(0, pa.RecordBatch.from_arrays(
                    [pa.array([], type=f.type) for f in arrow_table.schema], schema=arrow_table.schema))
            schema = with_statistics(arrow_table.schema, batches) if stats else arrow_table.schema
            with ipc.new_file(path, schema, options=opts) as w:
                for b in batches:
                    w.write_batch(pa.RecordBatch.from_arrays(b.columns, schema=schema))
            os.chmod(path, 0o644)
            self.files[name] = path
            self.conn.execute("CREATE FOREIGN TABLE %s.%s (%s) SERVER arrow_fdw "
                              "OPTIONS (file '%s')" % (self.w, name, ddl, path))
            # group estimates from statistics, not "every row a group"
            self.conn.execute("ANALYZE %s.%s" % (self.w, name))
        else:
            self.conn.execute("CREATE TABLE %s.%s (%s)" % (self.w, name, ddl))
            self.conn.execute("INSERT INTO %s.%s SELECT * FROM %s.%s"
                              % (self.w, name, self.h, name))
            self.conn.execute("ANALYZE %s.%s" % (self.w, name))
        return self


# ------------------------------------------------------------- comparing

def run(conn, sql):
    """('ok', rows, column names) or ('error', sqlstate, message)"""
    try:
        cur = conn.execute(sql)
        if cur.description is None:
            return ("ok", [], [])
        return ("ok", cur.fetchall(), [d.name for d in cur.description])
    except psycopg.Error as e:
        if conn.lost():
            return ("error", "CRASH", "the server lost the connection: %s" % str(e).strip())
        return ("error", e.sqlstate, str(e).strip().split("\n")[0])


def _sort_key(row):
    out = []
    for v in row:
        if v is None:
            out.append((1, 0, 0))
        elif isinstance(v, float):
            out.append((0, 1, 0.0) if math.isnan(v) else (0, 0, v + 0.0))
        else:
            out.append((0, 0, v))
    return out


def same_value(a, b, tol):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if a == b:                       # also -0.0 == 0.0 and inf == inf
            return True
        if tol and not math.isinf(a) and not math.isinf(b):
            return abs(a - b) <= tol * max(abs(a), abs(b))
        return False
    if isinstance(a, decimal.Decimal):
        # numeric: the same value and the same display scale (1.50 is not 1.5)
        return isinstance(b, decimal.Decimal) and str(a) == str(b)
    return type(a) is type(b) and a == b


def approx_columns(names):
    """float sums and averages may be added in another order"""
    return [bool(re.match(r"(sum|avg)", n or "")) for n in names]


def same_result(got, want, ordered):
    """None when equal, else a reason"""
    if got[0] != want[0]:
        return "one failed, the other did not"
    if got[0] == "error":
        return None if got[1] == want[1] else "different SQLSTATE"
    g, w = got[1], want[1]
    if len(g) != len(w):
        return "%d rows instead of %d" % (len(g), len(w))
    if not ordered:
        g, w = sorted(g, key=_sort_key), sorted(w, key=_sort_key)
    tol = approx_columns(want[2])

    def row_equal(rg, rw):
        return len(rg) == len(rw) and all(
            same_value(a, b, REL_TOL if t else 0) for a, b, t in zip(rg, rw, tol))

    for i, (rg, rw) in enumerate(zip(g, w)):
        if not row_equal(rg, rw):
            # rows whose other columns tie (a CUBE's NULL keys beside real
            # NULLs) sort by their float columns, which may differ in the
            # last bits (seed 66666): pair the rows up instead
            if not ordered and _pair_rows(g, w, row_equal):
                return None
            return "row %d differs: %r instead of %r" % (i, rg, rw)
    return None


def _pair_rows(g, w, row_equal):
    """whether every row of g equals a different row of w"""
    free = list(w)
    for rg in g:
        for k, rw in enumerate(free):
            if row_equal(rg, rw):
                del free[k]
                break
        else:
            return False
    return True


def _short(res, limit=25):
    if res[0] == "error":
        return "ERROR %s: %s" % (res[1], res[2])
    rows = res[1]
    return "%d rows %r%s" % (len(rows), rows[:limit], " ..." if len(rows) > limit else "")


def set_side(conn, schema, warp):
    conn.execute("SET search_path = %s, public" % schema)
    conn.execute("SET pg_warp.enabled = %s" % ("on" if warp else "off"))


def plan_of(conn, sql):
    res = run(conn, "EXPLAIN (COSTS OFF) " + sql)
    if res[0] == "error":
        return "EXPLAIN failed: %s %s" % (res[1], res[2])
    return "\n".join(r[0] for r in res[1])


def execute_both(conn, star_w, star_h, sql, explain_sql=None, oracle_sql=None):
    """(plan, warp result, oracle result) of sql on both sides"""
    set_side(conn, star_w, True)
    plan = plan_of(conn, explain_sql or sql)
    got = run(conn, sql)
    set_side(conn, star_h, False)
    want = run(conn, oracle_sql or sql)
    return plan, got, want


def diagnose(conn, star_w, sql):
    """the arrow tables with pg_warp off: tells an engine bug from a reader bug"""
    set_side(conn, star_w, False)
    return run(conn, sql)


def test_grouping_sets_float_sums_stay_postgresql(mk):
    """Under GROUPING SETS the engine's finest groups are added to each
    other for the coarser sets, another order of additions than
    PostgreSQL's: a float4 total that overflows in row order (3e38 + 3e38)
    need not overflow as a sum of groups (3e38 - 3e38 in one of them).  So
    a float sum or average keeps such a query PostgreSQL's (the error is
    PostgreSQL's), while integer sums under ROLLUP stay offloaded."""
    rows = [(0, 0, 3e38), (1, 1, 3e38), (2, 0, -3e38), (3, 1, 1.0)]
    s = mk()
    s.table("f", [("id", "int4"), ("g", "int4"), ("x", "float4")], rows, batch_rows=4)
    conn = s.conn
    for q in ("SELECT g, sum(x) FROM f GROUP BY CUBE (g)",
              "SELECT g, avg(x::float8 * 1e300) FROM f GROUP BY ROLLUP (g)"):
        want = check(s, q, offload=False)
        set_side(conn, s.w, True)
        plan = "\n".join(r[0] for r in run(conn, "EXPLAIN (VERBOSE, COSTS OFF) " + q)[1])
        assert "WarpPreAgg" not in plan and "GROUPING SETS with a sum or average of floats" in plan, plan
    check(s, "SELECT g, sum(x) FROM f GROUP BY CUBE (g)", offload=False, expect="error:22003")
    check(s, "SELECT g, sum(id), count(*) FROM f GROUP BY ROLLUP (g)")


def check(star, sql, offload=True, ordered=False, expect=None, node="WarpPreAgg"):
    """Run sql on both sides and compare.  offload: the plan must contain
    node.  expect: optional sanity check of the oracle itself
    ('error:<sqlstate>' or a callable on the rows) so that a case cannot
    silently lose what it tests."""
    conn = star.conn
    plan, got, want = execute_both(conn, star.w, star.h, sql)
    problems = []
    if offload and node not in plan:
        problems.append("not offloaded; plan:\n" + plan)
    why = same_result(got, want, ordered)
    if why:
        alt = diagnose(conn, star.w, sql)
        problems.append("%s\n  pg_warp: %s\n  oracle:  %s\n  arrow_fdw, pg_warp off: %s\n  plan:\n%s"
                        % (why, _short(got), _short(want), _short(alt), plan))
    assert not problems, "%s\n%s" % (sql, "\n".join(problems))
    if expect is not None:
        if isinstance(expect, str):
            assert want[0] == "error" and want[1] == expect.split(":")[1], \
                "oracle did not fail with %s: %s\n%s" % (expect, _short(want), sql)
        else:
            assert want[0] == "ok" and expect(want[1]), "oracle result unexpected: %s\n%s" % (
                _short(want), sql)
    return want


def check_everywhere(star, queries, workers=0, daemon=0, expect=None):
    """check() every query with the CPU driver on 1 and on 4 threads; the
    first `workers` under PostgreSQL's parallel workers (pg_warp.cpu_threads
    = 1, parallel costs zero); the first `daemon` through pg_warp_gpud when
    one serves the cluster."""
    conn = star.conn
    for threads in ("1", "4"):
        conn.execute("SET pg_warp.cpu_threads = " + threads)
        try:
            for q in queries:
                check(star, q, expect=expect)
        finally:
            conn.execute("RESET pg_warp.cpu_threads")
    if workers:
        settings = ["max_parallel_workers_per_gather = 2", "parallel_setup_cost = 0",
                    "parallel_tuple_cost = 0", "min_parallel_table_scan_size = 0",
                    "pg_warp.cpu_threads = 1"]
        try:
            for st in settings:
                conn.execute("SET " + st)
            for q in queries[:workers]:
                check(star, q, expect=expect)
        finally:
            for st in settings:
                conn.execute("RESET " + st.split(" =")[0])
            conn.execute("SET max_parallel_workers_per_gather = 0")
    if daemon and gpud_status(conn) is not None:
        conn.execute("SET pg_warp.mode = gpu")
        try:
            for q in queries[:daemon]:
                check(star, q, expect=expect)
        finally:
            conn.execute("SET pg_warp.mode = cpu")


def icu_nondeterministic(conn):
    """public.pgwarp_test_ci, a nondeterministic ICU collation, or False
    where the server has no ICU"""
    try:
        conn.execute("CREATE COLLATION IF NOT EXISTS public.pgwarp_test_ci "
                     "(provider = icu, locale = 'und-u-ks-level2', deterministic = false)")
        return True
    except psycopg.Error:
        return False


# ----------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def conn():
    c = Session()
    yield c
    c.close()


@pytest.fixture
def mk(conn, request):
    """mk() -> a fresh Star named after the test"""
    made = []

    def make(suffix=""):
        tag = re.sub(r"[^a-z0-9]+", "_", request.node.name.lower())[:40] + suffix
        s = Star(conn, tag)
        made.append(s)
        return s
    yield make
    for s in made:
        s.close()


FACT_COLS = [("id", "int4"), ("k", "int4"), ("k8", "int8"), ("g", "int4"), ("a", "int4"),
             ("b", "int4"), ("s", "int2"), ("big", "int8"), ("r", "float4"), ("x", "float8"),
             ("dt", "date"), ("ts", "timestamp"), ("fl", "bool")]

# no row of `base` makes an expression fail by itself: error cases have their
# own tables
BASE_FACT = [
    (1, 1, 10, 0, 10, 2, 1, 1, 1.5, 1.0, D(2020, 1, 1), TS(2020, 1, 1), True),
    (2, 1, 10, None, 20, 3, -1, -1, -2.25, -0.0, D(2020, 1, 2), TS(2020, 1, 1, 12), False),
    (3, 2, 11, 1, None, 5, 32767, 9223372036854775807, 0.25, 0.0, D(2020, 2, 29),
     TS(2020, 2, 29, 23, 59, 59, 999999), None),
    (4, 2, None, 1, -7, None, -32768, -9223372036854775808, None, NAN, None, None, True),
    (5, 3, 12, 0, 2147483647, 1, 0, 0, 3.0, INF, D(1999, 12, 31),
     TS(1999, 12, 31, 23, 59, 59, 999999), False),
    (6, None, 12, None, -2147483648, -1, None, None, -0.0, -INF, D(2000, 1, 1), TS(2000, 1, 1), True),
    (7, 4, 13, 2, 100, 3, 7, 4294967296, NAN, NAN, D(2038, 1, 19), TS(2038, 1, 19, 3, 14, 8), None),
    (8, 99, 4294967306, 2, 50, 10, 8, -4294967296, INF, 1e300, D(1970, 1, 1), TS(1970, 1, 1), True),
    (9, 1, 10, 0, None, None, None, None, None, None, None, None, None),
    (10, 0, 0, 3, 0, 7, 0, 0, 0.0, 0.0, D(1, 1, 1), TS(1, 1, 1), False),
    (11, 5, 4294967297, 3, 3, 2, -5, 5, 1e-45, 5e-324, D(9999, 12, 31),
     TS(9999, 12, 31, 23, 59, 59, 999999), True),
    (12, 1, 11, 0, 4, 4, 4, 4, 4.5, -1.5, D(2020, 1, 1), TS(2020, 1, 1), False),
    (13, 2, 13, None, 6, 6, 6, 6, 6.0, 6.0, D(2020, 1, 2), TS(2020, 1, 1, 12), True),
    (14, -1, -1, 1, 1, 1, 1, 1, 1.0, 1.0, D(2020, 1, 3), TS(2020, 1, 3), True),
]

DIM_COLS = [("dk", "int4"), ("name", "text"), ("grp", "int4")]
# duplicate key 1 (two names), NULL key, key 3 with a NULL name, key 5 with
# the empty string, keys 7 and 8 with no fact rows
BASE_DIM = [(1, "one", 1), (1, "uno", 1), (2, "two", 2), (3, None, 2), (None, "nullkey", 3),
            (4, "four", None), (5, "", 3), (7, "seven", 4), (8, "eight", 4), (0, "zero", 0),
            (-1, "minus", None)]

# an int8-keyed Arrow dimension: keys beyond int4 whose low 32 bits equal
# small keys (4294967306 = 2^32 + 10)
D8_COLS = [("ak", "int8"), ("label", "text")]
BASE_D8 = [(10, "ten"), (11, "eleven"), (12, "twelve"), (4294967306, "2^32+10"),
           (-9223372036854775808, "min"), (9223372036854775807, "max"), (0, "zero"),
           (None, "null")]

# an int2-keyed dimension: fact int4/int8 keys compare to it as integers
D2_COLS = [("sk", "int2"), ("sname", "text")]
BASE_D2 = [(0, "s0"), (1, "s1"), (2, "s2"), (3, "s3"), (-1, "s-1"), (13, "s13")]


@pytest.fixture(scope="module")
def base(conn):
    s = Star(conn, "targeted_base")
    s.table("f", FACT_COLS, BASE_FACT, batch_rows=5)
    s.table("d", DIM_COLS, BASE_DIM, arrow=False)
    s.table("d8", D8_COLS, BASE_D8, arrow=True)
    s.table("d2", D2_COLS, BASE_D2, arrow=False)
    yield s
    s.close()


def to_f4(v):
    """v as the nearest float4 (the largest finite one beyond its range)"""
    if v is None or math.isnan(v) or math.isinf(v):
        return v
    if abs(v) > 3.4028234663852886e38:
        return math.copysign(3.4028234663852886e38, v)
    return struct.unpack("<f", struct.pack("<f", v))[0]


def nonempty(rows):
    return len(rows) > 0


# ================================================================== tests

def test_null_join_keys(base):
    # NULL fact keys (id 6, and k8 of id 4) and the NULL dimension key never match
    check(base, "SELECT count(*), sum(a), count(a) FROM f JOIN d ON f.k = d.dk",
          expect=lambda r: r[0][0] == 16)
    check(base, "SELECT d.name, count(*), sum(a) FROM f JOIN d ON f.k = d.dk GROUP BY d.name",
          expect=lambda r: all(x[0] != "nullkey" for x in r))
    check(base, "SELECT f.k, count(*) FROM f JOIN d ON f.k = d.dk GROUP BY f.k")
    check(base, "SELECT d.dk, count(*), min(f.id), max(f.id) FROM f JOIN d ON d.dk = f.k GROUP BY d.dk")
    check(base, "SELECT count(*) FROM f JOIN d8 ON f.k8 = d8.ak")
    check(base, "SELECT d8.label, count(*), sum(f.s) FROM f JOIN d8 ON f.k8 = d8.ak GROUP BY 1")


def test_null_group_keys(base):
    # fact-side NULL group keys (g), dimension-side NULL group values (name of
    # key 3, grp of key 4), and NULL next to 0 / '' in the same column
    check(base, "SELECT g, count(*), sum(a), count(a) FROM f GROUP BY g",
          expect=lambda r: any(x[0] is None for x in r) and any(x[0] == 0 for x in r))
    check(base, "SELECT d.name, count(*) FROM f JOIN d ON f.k = d.dk GROUP BY d.name",
          expect=lambda r: any(x[0] is None for x in r) and any(x[0] == "" for x in r))
    check(base, "SELECT d.grp, f.g, count(*), sum(f.b) FROM f JOIN d ON f.k = d.dk GROUP BY d.grp, f.g")
    check(base, "SELECT d.grp, d.name, count(*) FROM f JOIN d ON f.k = d.dk GROUP BY d.grp, d.name")
    check(base, "SELECT fl, count(*), sum(s) FROM f GROUP BY fl")
    check(base, "SELECT dt, count(*) FROM f GROUP BY dt")
    check(base, "SELECT ts, count(*), min(id) FROM f GROUP BY ts")
    check(base, "SELECT b, g, count(*) FROM f GROUP BY b, g")
    check(base, "SELECT k8, count(*) FROM f GROUP BY k8")
    check(base, "SELECT big, count(*) FROM f GROUP BY big")


def test_duplicate_dimension_keys(base, mk):
    # key 1 appears twice in d: its fact rows count twice
    check(base, "SELECT count(*), sum(a), avg(a), min(a), max(a), sum(r), avg(x) "
                "FROM f JOIN d ON f.k = d.dk WHERE f.x < 100",
          expect=nonempty)
    check(base, "SELECT d.grp, count(*), sum(f.a), avg(f.b) FROM f JOIN d ON f.k = d.dk GROUP BY d.grp")
    check(base, "SELECT f.k, count(*), sum(f.a) FROM f JOIN d ON f.k = d.dk GROUP BY f.k",
          expect=lambda r: (1, 8, 68) in r)
    s = mk()
    s.table("f", [("k1", "int4"), ("k2", "int8"), ("v", "int4")],
            [(1, 1, 1), (1, 2, 10), (2, 1, 100), (2, 2, 1000), (3, 3, 10000), (1, 1, None)])
    # every key three times in one dimension, twice in the other
    s.table("d1", [("k", "int4"), ("n", "text")],
            [(i, "a%d" % c) for i in (1, 2, 3) for c in range(3)], arrow=False)
    s.table("d2", [("k", "int2"), ("m", "text")],
            [(i, "b%d" % (c + i)) for i in (1, 2) for c in range(2)], arrow=True)
    check(s, "SELECT count(*), sum(v), count(v) FROM f JOIN d1 ON f.k1 = d1.k JOIN d2 ON f.k2 = d2.k",
          expect=lambda r: r[0] == (30, 6666, 24))
    check(s, "SELECT d1.n, d2.m, count(*), sum(v) FROM f JOIN d1 ON f.k1 = d1.k "
             "JOIN d2 ON f.k2 = d2.k GROUP BY d1.n, d2.m")
    check(s, "SELECT d2.m, count(*), sum(v) FROM f JOIN d1 ON f.k1 = d1.k "
             "JOIN d2 ON f.k2 = d2.k GROUP BY d2.m")
    # duplicates with the same payload value: one group, counted twice
    check(s, "SELECT f.k1, count(*), sum(v), avg(v) FROM f JOIN d2 ON f.k2 = d2.k GROUP BY f.k1")


def test_many_duplicate_matches(mk):
    # one fact row matching thousands of dimension rows (joined-row buffers
    # beyond one vector), and a vector of fact rows all matching
    s = mk()
    s.table("f", [("k", "int4"), ("v", "int4"), ("w", "float8")],
            [(i % 3, i, i * 0.5) for i in range(3000)], batch_rows=1000)
    s.table("d", [("k", "int4"), ("tag", "text")],
            [(0, "z%d" % (i % 5)) for i in range(2500)] + [(1, "one")] + [(2, "t%d" % i) for i in range(3)],
            arrow=False)
    check(s, "SELECT count(*), sum(v), sum(w), avg(v) FROM f JOIN d ON f.k = d.k",
          expect=lambda r: r[0][0] == 1000 * 2500 + 1000 + 3000)
    check(s, "SELECT d.tag, count(*), sum(v), max(w) FROM f JOIN d ON f.k = d.k GROUP BY d.tag")
    check(s, "SELECT f.k, d.tag, count(*), min(v) FROM f JOIN d ON f.k = d.k "
             "WHERE f.v % 7 = 1 GROUP BY f.k, d.tag")


def test_empty_fact_table(mk):
    """A file of no record batch, and one of a single empty batch.  Alone,
    the empty table is estimated at one row and PostgreSQL's plan costs the
    same as the engine's, so the planner may keep it; joined to a large
    dimension the engine's plan is the cheaper one."""
    s = mk()
    cols = [("k", "int4"), ("v", "int4"), ("x", "float8"), ("dt", "date")]
    s.table("f", cols, [])
    s.table("fb", cols, [], empty_batch=True)
    s.table("d", [("k", "int4"), ("n", "text")], [(i, "n%d" % (i % 10)) for i in range(2000)],
            arrow=False)
    for t in ("f", "fb"):
        check(s, "SELECT count(*), sum(v), avg(v), min(x), max(dt), count(x) FROM %s" % t,
              offload=False, expect=lambda r: r == [(0, None, None, None, None, 0)])
        check(s, "SELECT v, count(*) FROM %s GROUP BY v" % t, offload=False, expect=lambda r: r == [])
        check(s, "SELECT count(*), sum(v), avg(v), min(x), max(dt), count(x), sum(x) FROM %s t "
                 "JOIN d ON t.k = d.k" % t,
              expect=lambda r: r == [(0, None, None, None, None, 0, None)])
        check(s, "SELECT d.n, count(*), sum(x) FROM %s t JOIN d ON t.k = d.k GROUP BY d.n" % t,
              expect=lambda r: r == [])
        check(s, "SELECT t.v, count(*) FROM %s t JOIN d ON t.k = d.k GROUP BY t.v" % t,
              expect=lambda r: r == [])
        check(s, "SELECT count(*) FROM %s t JOIN d ON t.k = d.k HAVING count(*) = 0" % t,
              expect=lambda r: r == [(0,)])


def test_every_batch_skipped(mk):
    """Batches skipped on their min/max statistics: the engine sees no batch
    at all, or only some."""
    s = mk()
    rows = [(i, i % 10, i * 0.5, None if i % 7 == 0 else i % 100) for i in range(5000)]
    s.table("f", [("id", "int4"), ("g", "int4"), ("x", "float8"), ("n", "int8")], rows,
            batch_rows=500, stats=True)
    s.table("d", [("k", "int4"), ("name", "text")], [(i, "n%d" % (i % 3)) for i in range(10)],
            arrow=False)
    check(s, "SELECT count(*), sum(g), max(x), min(n) FROM f WHERE id < 0",
          expect=lambda r: r == [(0, None, None, None)])
    check(s, "SELECT g, count(*) FROM f WHERE id > 5000 GROUP BY g", expect=lambda r: r == [])
    check(s, "SELECT d.name, count(*) FROM f JOIN d ON f.g = d.k WHERE f.x > 1e9::float8 GROUP BY d.name",
          expect=lambda r: r == [])
    check(s, "SELECT g, count(*), sum(x), max(n) FROM f WHERE id BETWEEN 1200 AND 1300 GROUP BY g",
          expect=lambda r: sum(x[1] for x in r) == 101)
    for cond in ("x > 2499.5::float8", "x >= 2499.5::float8", "x = 250::float8", "x < 0.5::float8",
                 "id = 4999", "id <> 0", "n IS NULL AND id < 700", "n > 98", "n = 99 AND id > 4900",
                 "id IN (0, 4999)", "x > 'NaN'::float8", "x < 'Infinity'::float8 AND id >= 4500"):
        check(s, "SELECT count(*), min(id), max(id), sum(x) FROM f WHERE " + cond, expect=nonempty)


def test_join_key_ranges_skip_batches(mk):
    """Inner and semi joins on an integer fact column skip the fact batches
    outside [min, max] of the dimension's keys (pg_warp.enable_join_ranges);
    answers equal PostgreSQL's either way, and no range is used where a fact
    qual could raise an error or for a left join."""
    s = mk()
    conn = s.conn
    d0 = datetime.date(2020, 1, 1)
    t0 = datetime.datetime(2020, 1, 1)
    rows = [(None if i % 97 == 0 else i // 100, i % 7, (i * 13) % 1000,
             None if i % 89 == 0 else d0 + datetime.timedelta(days=i // 100),
             t0 + datetime.timedelta(hours=i // 100, seconds=i % 100))
            for i in range(6000)]
    s.table("f", [("day", "int4"), ("g", "int4"), ("v", "int8"), ("dt", "date"),
                  ("ts", "timestamp")], rows, batch_rows=500, stats=True)
    s.table("dd", [("dt", "date"), ("m", "int4")],
            [(d0 + datetime.timedelta(days=i), i // 30) for i in range(70)])
    s.table("dts", [("ts", "timestamp"), ("q", "int4")],
            [(t0 + datetime.timedelta(hours=i // 100, seconds=i % 100), i % 4)
             for i in range(1800, 2300)], arrow=False)
    s.table("d", [("day", "int8"), ("yr", "int4")], [(i, 2000 + i // 12) for i in range(60)])
    s.table("e", [("day", "int4"), ("w", "int4")], [(i, i % 3) for i in range(10, 14)],
            arrow=False)
    s.table("h", [("g", "int4"), ("w", "int4")], [(i, i % 2) for i in range(2, 5)],
            arrow=False)
    queries = [
        ("SELECT d.yr, count(*), sum(f.v) FROM f JOIN d ON f.day = d.day WHERE d.yr = 2002 "
         "GROUP BY d.yr", True),
        ("SELECT d.yr, h.w, count(*) FROM f JOIN d ON f.day = d.day JOIN h ON f.g = h.g "
         "WHERE d.yr = 2001 GROUP BY 1, 2", True),
        ("SELECT count(*), sum(v) FROM f WHERE EXISTS (SELECT 1 FROM e WHERE e.day = f.day)", True),
        ("SELECT d.yr, count(*) FROM f JOIN d ON f.day = d.day WHERE d.yr = 1999 GROUP BY d.yr",
         True),                                          # no keys: every batch
        ("SELECT dd.m, count(*), sum(f.v) FROM f JOIN dd ON f.dt = dd.dt WHERE dd.m = 1 "
         "GROUP BY dd.m", True),                         # date keys
        ("SELECT dts.q, count(*), sum(f.v) FROM f JOIN dts ON f.ts = dts.ts GROUP BY dts.q",
         True),                                          # timestamp keys
        ("SELECT d.yr, count(*) FROM f JOIN d ON f.day = d.day WHERE f.g < 3 AND d.yr = 2003 "
         "GROUP BY d.yr", True),
        ("SELECT d.yr, count(*) FROM f JOIN d ON f.day = d.day WHERE 100 / (f.g - 3) > 0 "
         "AND d.yr = 2002 GROUP BY d.yr", False),         # a qual that can fail: none
        ("SELECT d.yr, count(*), count(f.day) FROM f LEFT JOIN d ON f.day = d.day AND d.yr = 2002 "
         "GROUP BY d.yr", False),                         # left join: none
    ]
    for sql, ranges in queries:
        check(s, sql, expect=nonempty if "1999" not in sql and "100 /" not in sql else None)
        set_side(conn, s.w, True)
        for on in ("on", "off"):
            conn.execute("SET pg_warp.enable_join_ranges = " + on)
            res = run(conn, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + sql)
            conn.execute("RESET pg_warp.enable_join_ranges")
            if res[0] == "error":
                assert "100 /" in sql, res
                continue
            lines = [r[0] for r in res[1]]
            assert any("Warp" in l for l in lines), lines
            skipped = sum(int(l.split(":")[1]) for l in lines if "Batches Skipped:" in l)
            described = any("Join Key Ranges:" in l for l in lines)
            assert described == (ranges and on == "on"), (sql, on, lines)
            if ranges and on == "on":
                assert skipped >= 6, (sql, lines)
            elif "WHERE f.g" not in sql:
                assert skipped == 0, (sql, on, lines)
    # a parameter in the dimension's qual: the range follows each execution
    set_side(conn, s.w, True)
    conn.execute("PREPARE jr(int) AS SELECT d.yr, count(*), sum(f.v) FROM f JOIN d "
                 "ON f.day = d.day WHERE d.yr = $1 GROUP BY d.yr")
    try:
        conn.execute("SET plan_cache_mode = force_generic_plan")
        for yr in (2001, 2004, 2002):
            got = run(conn, "EXECUTE jr(%d)" % yr)
            set_side(conn, s.h, False)
            want = run(conn, "SELECT d.yr, count(*), sum(f.v) FROM f JOIN d ON f.day = d.day "
                             "WHERE d.yr = %d GROUP BY d.yr" % yr)
            set_side(conn, s.w, True)
            assert got == want and want[1], (yr, got, want)
    finally:
        conn.execute("DEALLOCATE jr")
        conn.execute("RESET plan_cache_mode")


def test_all_rows_filtered(base):
    check(base, "SELECT count(*), sum(a), avg(a), sum(x), avg(r), min(dt), max(ts), count(b) "
                "FROM f WHERE a > 2147483647", expect=lambda r: r[0][0] == 0)
    check(base, "SELECT g, count(*), sum(a) FROM f WHERE id < 0 GROUP BY g",
          expect=lambda r: r == [])
    check(base, "SELECT count(*), sum(a) FROM f JOIN d ON f.k = d.dk WHERE f.id > 100",
          expect=lambda r: r == [(0, None)])
    check(base, "SELECT count(*), max(x) FROM f WHERE x <> x", expect=lambda r: r == [(0, None)])
    # every row filtered in all but one record batch
    check(base, "SELECT count(*), sum(a), min(id) FROM f WHERE id = 14", expect=lambda r: r == [(1, 1, 14)])


def test_no_dimension_match(base, mk):
    check(base, "SELECT count(*), sum(a) FROM f JOIN d ON f.k = d.dk WHERE d.name = 'nope'",
          expect=lambda r: r == [(0, None)])
    check(base, "SELECT d.name, count(*) FROM f JOIN d ON f.k = d.dk WHERE d.dk > 50 GROUP BY d.name",
          expect=lambda r: r == [])
    check(base, "SELECT count(*) FROM f JOIN d ON f.k = d.dk JOIN d8 ON f.k8 = d8.ak "
                "WHERE d8.label = 'max'", expect=lambda r: r == [(0,)])
    s = mk()
    s.table("f", [("k", "int4"), ("v", "int4")], [(1, 1), (2, 2), (None, 3)])
    s.table("d", [("k", "int8"), ("n", "text")], [(10, "x"), (None, "y")])
    s.table("e", [("k", "int4"), ("n", "text")], [], arrow=False)
    check(s, "SELECT count(*), sum(v) FROM f JOIN d ON f.k = d.k", expect=lambda r: r == [(0, None)])
    check(s, "SELECT d.n, count(*) FROM f JOIN d ON f.k = d.k GROUP BY d.n", expect=lambda r: r == [])
    check(s, "SELECT count(*), sum(v) FROM f JOIN e ON f.k = e.k", expect=lambda r: r == [(0, None)])


def test_all_null_aggregates(mk):
    s = mk()
    cols = [("g", "int4"), ("i2", "int2"), ("i4", "int4"), ("i8", "int8"), ("r", "float4"),
            ("x", "float8"), ("dt", "date"), ("ts", "timestamp"), ("tz", "timestamptz")]
    rows = [(1, None, None, None, None, None, None, None, None),
            (1, None, None, None, None, None, None, None, None),
            (2, 5, 6, 7, 1.5, 2.5, D(2020, 5, 5), TS(2020, 5, 5, 5), TS(2020, 5, 5, 5)),
            (2, None, None, None, None, None, None, None, None),
            (None, None, None, None, None, None, None, None, None)]
    s.table("f", cols, rows)
    s.table("d", [("g", "int4"), ("n", "text")], [(1, "one"), (2, "two"), (3, "three")], arrow=False)
    sql = ("SELECT g, count(*), count(i4), sum(i2), sum(i4), avg(i2), avg(i4), sum(r), sum(x), "
           "avg(r), avg(x), min(i2), max(i4), min(i8), max(i8), min(r), max(x), min(dt), max(dt), "
           "min(ts), max(ts), min(tz), max(tz), count(x) FROM f GROUP BY g")
    check(s, sql, expect=lambda r: any(x[0] == 1 and x[1] == 2 and x[2] == 0 and x[3] is None
                                       for x in r))
    check(s, sql.replace("SELECT g,", "SELECT f.g,").replace("FROM f GROUP BY g",
                                                           "FROM f JOIN d ON f.g = d.g GROUP BY f.g"))
    check(s, "SELECT d.n, sum(i4), count(i4), max(dt) FROM f JOIN d ON f.g = d.g GROUP BY d.n")
    # a FILTER that no row passes gives NULL / 0, also in groups with rows
    check(s, "SELECT g, sum(i4) FILTER (WHERE i4 > 100), count(*) FILTER (WHERE false), "
             "max(x) FILTER (WHERE x IS NULL), avg(r) FILTER (WHERE r < 0) FROM f GROUP BY g")
    check(s, "SELECT sum(i4), avg(x), min(dt), count(i8) FROM f WHERE i4 IS NULL",
          expect=lambda r: r == [(None, None, None, 0)])


def test_int_overflow_in_aggregate_argument(mk):
    s = mk()
    s.table("f", [("k", "int4"), ("a", "int4"), ("b", "int4"), ("s", "int2"), ("t", "int2"),
                  ("big", "int8")],
            [(1, 1, 2, 1, 2, 1), (1, 3, 4, 3, 4, 2), (2, 65536, 65536, 200, 200, 4611686018427387904),
             (3, 46341, 46341, 182, 182, 3037000500)])
    s.table("d", [("k", "int4"), ("n", "text")], [(1, "a"), (3, "c")], arrow=False)
    # 65536 * 65536 and 46341^2 overflow int4
    check(s, "SELECT sum(a * b) FROM f", expect="error:22003")
    check(s, "SELECT k, sum(a * b) FROM f GROUP BY k", expect="error:22003")
    check(s, "SELECT sum(a * b) FROM f WHERE k = 1", expect=lambda r: r == [(14,)])
    check(s, "SELECT avg(a * b) FROM f WHERE k <> 2", expect="error:22003")
    check(s, "SELECT max(a + b * 32768) FROM f", expect="error:22003")
    check(s, "SELECT min(-a - b * 32768 - 1) FROM f", expect="error:22003")
    # the overflowing rows never reach the aggregate: no error
    check(s, "SELECT sum(a * b) FILTER (WHERE k = 1), count(*) FROM f", expect=nonempty)
    check(s, "SELECT sum(CASE WHEN a < 1000 THEN a * b END) FROM f", expect=lambda r: r == [(14,)])
    # k = 2 has no dimension row: PostgreSQL never computes its a * b
    check(s, "SELECT d.n, sum(f.a * f.b) FROM f JOIN d ON f.k = d.k WHERE f.k <> 3 GROUP BY d.n",
          expect=lambda r: r == [("a", 14)])
    # int2 * int2 is int2
    check(s, "SELECT sum(s * t) FROM f", expect="error:22003")
    check(s, "SELECT sum(s * t) FROM f WHERE s < 100", expect=lambda r: r == [(14,)])
    check(s, "SELECT sum(s::int4 * t) FROM f", expect=nonempty)
    # int8: overflow of bigint arithmetic; min(big * 2) is computed per row
    check(s, "SELECT min(big * 2) FROM f", expect="error:22003")
    check(s, "SELECT max(big * big) FROM f", expect="error:22003")
    check(s, "SELECT max(big * 2) FILTER (WHERE big < 1000000) FROM f", expect=lambda r: r == [(4,)])
    # group key expression overflow
    check(s, "SELECT a * b, count(*) FROM f GROUP BY a * b", expect="error:22003")
    check(s, "SELECT s * t AS st, count(*) FROM f GROUP BY 1", expect="error:22003")


def test_int_overflow_in_filter(mk):
    s = mk()
    s.table("f", [("a", "int4"), ("b", "int4"), ("s", "int2"), ("big", "int8")],
            [(1, 2, 1, 1), (2147483647, 1, 32767, 9223372036854775807),
             (-2147483648, -1, -32768, -9223372036854775808), (5, 0, 5, 5)])
    check(s, "SELECT count(*) FROM f WHERE a + b > 0", expect="error:22003")
    check(s, "SELECT count(*) FROM f WHERE a * 2 > 0", expect="error:22003")
    check(s, "SELECT count(*) FROM f WHERE a - 1 < 0", expect="error:22003")
    check(s, "SELECT count(*) FROM f WHERE -a > 0", expect="error:22003")
    check(s, "SELECT count(*) FROM f WHERE a / b > 0", expect="error:22003")   # min / -1 (and / 0)
    check(s, "SELECT count(*) FROM f WHERE b <> 0 AND a / b > 0", expect="error:22003")
    check(s, "SELECT count(*) FROM f WHERE b > 0 AND a / b > 0", expect=lambda r: r == [(1,)])
    check(s, "SELECT count(*) FROM f WHERE b <> 0 AND a % b = 0", expect=lambda r: r == [(2,)])  # % -1 is 0
    check(s, "SELECT count(*) FROM f WHERE s + 1::int2 > 0", expect="error:22003")
    check(s, "SELECT count(*) FROM f WHERE s + 1 > 0", expect=lambda r: r == [(3,)])  # int2 + int4 is int4
    check(s, "SELECT count(*) FROM f WHERE -s > 0", expect="error:22003")
    check(s, "SELECT count(*) FROM f WHERE s * 2::int2 > 0", expect="error:22003")
    check(s, "SELECT count(*) FROM f WHERE big + 1 > 0", expect="error:22003")
    check(s, "SELECT count(*) FROM f WHERE big - 1 > 0", expect="error:22003")
    check(s, "SELECT count(*) FROM f WHERE -big > 0", expect="error:22003")
    check(s, "SELECT count(*) FROM f WHERE big / -1 > 0", expect="error:22003")
    check(s, "SELECT count(*) FROM f WHERE big::int4 > 0", expect="error:22003")
    check(s, "SELECT count(*) FROM f WHERE a::int2 > 0", expect="error:22003")
    check(s, "SELECT count(*) FROM f WHERE a < 10 AND a::int2 > 0 AND a > -100",
          expect=lambda r: r == [(2,)])
    check(s, "SELECT count(*) FROM f WHERE abs(a) > 0", offload=False, expect="error:22003")
    # only the rows that pass the first AND arm are multiplied
    check(s, "SELECT count(*) FROM f WHERE a < 100 AND a > -100 AND a * 1000000 > 0",
          expect=lambda r: r == [(2,)])
    check(s, "SELECT count(*) FROM f WHERE a > 100 OR a * 2 > 4", expect="error:22003")
    check(s, "SELECT count(*) FROM f WHERE (a < 100 AND a > -100) OR (a * 2 < 0)", expect="error:22003")
    check(s, "SELECT count(*) FROM f WHERE a BETWEEN -100 AND 100 AND a * 1000000000 <> 0",
          expect="error:22003")  # 5 * 1e8 overflows


def test_division_by_zero(mk):
    s = mk()
    s.table("f", [("k", "int4"), ("a", "int4"), ("b", "int4"), ("s", "int2"), ("z", "int2"),
                  ("big", "int8"), ("zz", "int8"), ("x", "float8"), ("y", "float8"),
                  ("r", "float4"), ("q", "float4")],
            [(1, 10, 2, 10, 2, 10, 2, 10.0, 2.0, 10.0, 2.0),
             (2, 9, 0, 9, 0, 9, 0, 9.0, 0.0, 9.0, 0.0),
             (3, 8, None, 8, None, 8, None, 8.0, None, 8.0, None),
             (1, 7, 3, 7, 3, 7, 3, 7.0, 3.0, 7.0, 3.0)])
    s.table("d", [("k", "int4"), ("n", "text")], [(1, "one"), (3, "three")], arrow=False)
    zero = {"b": "0", "z": "0::int2", "zz": "0::int8", "y": "0::float8", "q": "0::float4"}
    for num, den in (("a", "b"), ("s", "z"), ("big", "zz"), ("x", "y"), ("r", "q")):
        # sum(bigint) is numeric, outside the engine: max() for the int8 pair
        agg = "max" if num == "big" else "sum"

        def chk(q, **kw):
            check(s, q.replace("sum(", agg + "("), **kw)
        chk("SELECT count(*) FROM f WHERE %s / %s > 1" % (num, den), expect="error:22012")
        chk("SELECT count(*) FROM f WHERE %s <> 0 AND %s / %s > 1" % (den, num, den),
              expect=lambda r: r == [(2,)])
        chk("SELECT count(*) FROM f WHERE %s / %s > 1 AND %s <> 0" % (num, den, den),
              expect=lambda r: r == [(2,)])   # PostgreSQL runs the cheaper qual first
        chk("SELECT count(*) FROM f WHERE %s = 0 OR %s / %s > 1" % (den, num, den),
              expect=lambda r: r == [(3,)])
        chk("SELECT sum(%s / %s) FROM f" % (num, den), expect="error:22012")
        chk("SELECT sum(%s / %s) FILTER (WHERE %s <> 0), count(*) FROM f" % (num, den, den),
              expect=nonempty)
        chk("SELECT sum(CASE WHEN %s = 0 THEN NULL ELSE %s / %s END) FROM f" % (den, num, den),
              expect=nonempty)
        chk("SELECT sum(CASE WHEN %s <> 0 THEN %s / %s ELSE -1 END) FROM f" % (den, num, den),
              expect=nonempty)
        chk("SELECT sum(%s / NULLIF(%s, %s)) FROM f" % (num, den, zero[den]), expect=nonempty)
        chk("SELECT count(*) FROM f WHERE COALESCE(%s / NULLIF(%s, %s), %s) >= %s"
              % (num, den, zero[den], zero[den], zero[den]), expect=lambda r: r == [(4,)])
        # the row with a zero divisor has no dimension row
        chk("SELECT d.n, sum(f.%s / f.%s) FROM f JOIN d ON f.k = d.k GROUP BY d.n" % (num, den),
              expect=nonempty)
        # PostgreSQL's min/max rewrite (ORDER BY ... LIMIT 1) takes a Top-N
        # WarpScan where it costs less than WarpPreAgg: either is the engine
        chk("SELECT max(%s / %s) FROM f WHERE k = 2" % (num, den), expect="error:22012",
            node="Custom Scan (Warp")
        chk("SELECT %s / %s AS q, count(*) FROM f GROUP BY 1" % (num, den), expect="error:22012")
    for num, den in (("a", "b"), ("s", "z"), ("big", "zz")):
        check(s, "SELECT count(*) FROM f WHERE %s %% %s = 1" % (num, den), expect="error:22012")
        check(s, "SELECT count(*) FROM f WHERE %s <> 0 AND %s %% %s = 1" % (den, num, den),
              expect=lambda r: r == [(1,)])
    check(s, "SELECT count(*) FROM f WHERE a / 0 > 1", expect="error:22012")
    check(s, "SELECT count(*) FROM f WHERE x / 0.0::float8 > 1", expect="error:22012")
    check(s, "SELECT count(*) FROM f WHERE x / 0.0::float4 > 1", expect="error:22012")
    check(s, "SELECT count(*) FROM f WHERE a < 0 AND a / 0 > 1", expect=lambda r: r == [(0,)])


def test_is_distinct_from(base):
    check(base, "SELECT count(*) FROM f WHERE a IS DISTINCT FROM b", expect=nonempty)
    check(base, "SELECT count(*) FROM f WHERE a IS NOT DISTINCT FROM b")
    check(base, "SELECT count(*) FROM f WHERE g IS NOT DISTINCT FROM NULL", expect=lambda r: r == [(3,)])
    check(base, "SELECT count(*) FROM f WHERE g IS DISTINCT FROM NULL", expect=lambda r: r == [(11,)])
    check(base, "SELECT count(*) FROM f WHERE g IS DISTINCT FROM 0")
    check(base, "SELECT count(*) FROM f WHERE NOT (g IS DISTINCT FROM k)")
    check(base, "SELECT count(*) FROM f WHERE x IS NOT DISTINCT FROM 'NaN'::float8",
          expect=lambda r: r == [(2,)])
    check(base, "SELECT count(*) FROM f WHERE x IS DISTINCT FROM r")
    check(base, "SELECT count(*) FROM f WHERE x IS NOT DISTINCT FROM -0.0::float8",
          expect=lambda r: r == [(3,)])
    check(base, "SELECT count(*) FROM f WHERE dt IS NOT DISTINCT FROM date '2020-01-01'")
    check(base, "SELECT count(*) FROM f WHERE ts IS DISTINCT FROM timestamp '2020-01-01'")
    check(base, "SELECT count(*) FROM f WHERE fl IS NOT DISTINCT FROM NULL")
    check(base, "SELECT count(*) FROM f WHERE fl IS DISTINCT FROM true")
    check(base, "SELECT s IS DISTINCT FROM b AS dd, count(*), count(*) FILTER "
                "(WHERE k IS NOT DISTINCT FROM g) FROM f GROUP BY 1")
    check(base, "SELECT count(*) FROM f WHERE big IS DISTINCT FROM k8")


def test_between_symmetric(base):
    check(base, "SELECT count(*) FROM f WHERE a BETWEEN SYMMETRIC 50 AND 1",
          expect=lambda r: r[0][0] > 0)
    check(base, "SELECT count(*) FROM f WHERE a BETWEEN 50 AND 1", expect=lambda r: r == [(0,)])
    check(base, "SELECT count(*) FROM f WHERE a NOT BETWEEN SYMMETRIC 50 AND 1")
    check(base, "SELECT count(*) FROM f WHERE a BETWEEN SYMMETRIC b AND g")
    # a NULL bound folds the qual to a constant: PostgreSQL's plan
    check(base, "SELECT count(*) FROM f WHERE a BETWEEN SYMMETRIC NULL AND 5", offload=False)
    check(base, "SELECT count(*) FROM f WHERE NOT (a BETWEEN NULL AND 5)")
    check(base, "SELECT count(*) FROM f WHERE x BETWEEN SYMMETRIC 'Infinity'::float8 AND 0::float8")
    check(base, "SELECT count(*) FROM f WHERE x BETWEEN SYMMETRIC 'NaN'::float8 AND -1::float8")
    check(base, "SELECT count(*) FROM f WHERE dt BETWEEN SYMMETRIC date '2021-01-01' AND date '2000-01-01'")
    check(base, "SELECT count(*) FROM f WHERE ts NOT BETWEEN SYMMETRIC timestamp '2021-01-01' "
                "AND timestamp '2000-01-01'")
    check(base, "SELECT s BETWEEN SYMMETRIC 10 AND -10 AS inr, count(*), sum(s) FROM f GROUP BY 1")
    check(base, "SELECT count(*) FILTER (WHERE big BETWEEN SYMMETRIC 4294967296 AND -4294967296) FROM f")


def test_float4_arithmetic_and_sums(mk):
    s = mk()
    # 4097 * 4097 = 16785409 is not a float4 (it rounds to 16785408);
    # 16777216 + 1 is not either; 0.1::float4 is not 0.1::float8
    s.table("f", [("g", "int4"), ("r", "float4"), ("q", "float4"), ("x", "float8")],
            [(1, 4097.0, 1.0, 4097.0), (1, 16777216.0, 1.0, 0.5), (2, 0.1, 3.0, 0.1),
             (2, 0.25, 16777216.0, 0.25), (3, 1.5, -1.5, 1.5), (3, None, 2.0, None),
             (4, 3e38, 2.0, 1.0), (5, 1e-45, 0.5, 1e-300)])
    check(s, "SELECT count(*) FROM f WHERE g < 4 AND r * r = 16785408::float4", expect=lambda r: r == [(1,)])
    check(s, "SELECT count(*) FROM f WHERE g < 4 AND r * r = 16785409::float8", expect=lambda r: r == [(0,)])
    check(s, "SELECT count(*) FROM f WHERE r + q = 16777216::float4 AND g = 1",
          expect=lambda r: r == [(1,)])
    check(s, "SELECT count(*) FROM f WHERE r = 0.1::float8", expect=lambda r: r == [(0,)])
    check(s, "SELECT count(*) FROM f WHERE r = 0.1::float4", expect=lambda r: r == [(1,)])
    check(s, "SELECT count(*) FROM f WHERE r::float8 = x", expect=lambda r: r[0][0] == 3)
    check(s, "SELECT count(*) FROM f WHERE r > x")
    check(s, "SELECT g, sum(r * r) FROM f WHERE g < 4 GROUP BY g",
          expect=lambda r: any(g == 1 and to_f4(v) == to_f4(16785408.0 + 2.0 ** 48) for g, v in r))
    check(s, "SELECT g, min(r * r), max(r + q), min(r / q) FROM f WHERE g < 4 GROUP BY g")
    check(s, "SELECT sum(r + q) AS sum_rq FROM f WHERE g = 1", expect=lambda r: r == [(16781314.0,)])
    # float4 arithmetic overflow / underflow is an error
    check(s, "SELECT count(*) FROM f WHERE r * q > 0", expect="error:22003")
    check(s, "SELECT max(r * q) FROM f", expect="error:22003")
    check(s, "SELECT count(*) FROM f WHERE r * 0.5::float4 > 0", expect="error:22003")  # 1e-45 underflow
    check(s, "SELECT count(*) FROM f WHERE x * x > 0", expect="error:22003")   # 1e-300 squared
    check(s, "SELECT count(*) FROM f WHERE g < 4 AND r * q > 0", expect=lambda r: r == [(4,)])
    check(s, "SELECT count(*) FROM f WHERE x::float4 > 0", expect="error:22003")
    check(s, "SELECT count(*) FROM f WHERE g <> 5 AND x::float4 > 0", expect=lambda r: r == [(6,)])
    check(s, "SELECT count(*) FROM f WHERE r::int4 > 0", expect="error:22003")   # 3e38
    check(s, "SELECT count(*) FROM f WHERE g < 4 AND r::int4 > 0", expect=lambda r: r == [(3,)])
    check(s, "SELECT count(*) FROM f WHERE g < 4 AND r::int2 > 0", expect="error:22003")
    check(s, "SELECT r::int4 AS ri, count(*) FROM f WHERE g < 4 GROUP BY 1")   # rint: 0.25 -> 0, 1.5 -> 2
    # sum(float4) accumulates in float4 and fails on overflow
    check(s, "SELECT sum(r) FROM f WHERE g = 4", expect=nonempty)
    s2 = mk("b")
    s2.table("f", [("g", "int4"), ("r", "float4")], [(1, 3e38), (1, 3e38), (2, 1.0)])
    check(s2, "SELECT sum(r) FROM f", expect="error:22003")
    check(s2, "SELECT g, sum(r) FROM f GROUP BY g", expect="error:22003")
    check(s2, "SELECT g, avg(r), max(r) FROM f GROUP BY g", expect=nonempty)
    check(s2, "SELECT sum(r) FROM f WHERE g = 2", expect=lambda r: r == [(1.0,)])
    # exactly representable float4 sums are exact in any order
    s3 = mk("c")
    s3.table("f", [("g", "int4"), ("r", "float4")],
             [(i % 4, (i % 37 - 18) * 0.25) for i in range(2000)], batch_rows=300)
    check(s3, "SELECT g, sum(r), avg(r), min(r), max(r), count(r) FROM f GROUP BY g")
    check(s3, "SELECT sum(r * 2::float4), sum(r::float8), avg(r * r) FROM f WHERE r > -2::float4")


def test_float8_sum_avg_overflow(mk):
    s = mk()
    s.table("f", [("g", "int4"), ("x", "float8")],
            [(1, 1e308), (1, 1e308), (2, 1e300), (2, 1e300), (3, 1e300), (3, 3e300), (4, INF),
             (4, 1e308), (5, 1.0), (5, 2.0)])
    check(s, "SELECT sum(x) FROM f WHERE g = 1", expect="error:22003")
    check(s, "SELECT g, sum(x) FROM f GROUP BY g", expect="error:22003")
    check(s, "SELECT g, sum(x) FROM f WHERE g > 1 GROUP BY g", expect=nonempty)
    check(s, "SELECT avg(x) FROM f WHERE g = 2", expect=lambda r: r == [(1e300,)])
    # the sum of squared deviations overflows: PostgreSQL's float8_accum fails
    check(s, "SELECT avg(x) FROM f WHERE g = 3", expect="error:22003")
    check(s, "SELECT g, avg(x) FROM f WHERE g IN (4, 5) GROUP BY g", expect=nonempty)
    check(s, "SELECT max(x), min(x), count(x) FROM f")
    check(s, "SELECT count(*) FROM f WHERE x * 10::float8 > 0", expect="error:22003")
    check(s, "SELECT count(*) FROM f WHERE x + x > 0", expect="error:22003")


def test_float_special_values(mk):
    s = mk()
    vals = [NAN, -0.0, 0.0, INF, -INF, 1.0, -1.0, NAN, 0.0, -0.0, None, 5e-324, -5e-324,
            1.7976931348623157e308]
    rows = [(i, i % 3, v, to_f4(v)) for i, v in enumerate(vals)]
    s.table("f", [("id", "int4"), ("g", "int4"), ("x", "float8"), ("r", "float4")], rows)
    s.table("d", [("g", "int4"), ("n", "text")], [(0, "a"), (1, "b"), (2, "c")], arrow=False)
    # one group for NaN, one for 0 / -0 (PostgreSQL's float equality)
    check(s, "SELECT x, count(*) FROM f GROUP BY x",
          expect=lambda r: sum(1 for x in r if x[0] is not None and math.isnan(x[0])) == 1
          and sum(1 for x in r if x[0] == 0) == 1)
    check(s, "SELECT r, count(*), min(id) FROM f GROUP BY r")
    check(s, "SELECT x, r, count(*) FROM f GROUP BY x, r")
    check(s, "SELECT d.n, x, count(*) FROM f JOIN d ON f.g = d.g GROUP BY d.n, x")
    check(s, "SELECT g, min(x), max(x), min(r), max(r) FROM f GROUP BY g")
    check(s, "SELECT min(x), max(x), min(r), max(r) FROM f", expect=lambda r: math.isnan(r[0][1]))
    check(s, "SELECT min(x), max(x) FROM f WHERE x < 'NaN'::float8", expect=lambda r: r[0][1] == INF)
    check(s, "SELECT min(x), max(x), min(r), max(r) FROM f WHERE x <> x OR x = 0")
    check(s, "SELECT g, sum(x), avg(x), sum(r), avg(r) FROM f GROUP BY g")
    check(s, "SELECT sum(x) AS sum_x, avg(r) FROM f WHERE x > -1::float8 AND x < 1e300::float8")
    for cond in ("x = 'NaN'::float8", "x > 'Infinity'::float8", "x >= 'NaN'::float8",
                 "x < 'NaN'::float8", "x <> 'NaN'::float8", "x = 0::float8", "x = -0.0::float8",
                 "x < 0::float8", "x <= -0.0::float8", "x = x", "x <> x", "r = 'NaN'::float4",
                 "r = x", "r > x", "r <> x", "x IN ('NaN'::float8, 0::float8)",
                 "x NOT IN ('NaN'::float8, 1::float8)", "-x = 0::float8", "x * 0::float8 = 0::float8",
                 "x - x = 0::float8", "x / 'Infinity'::float8 = 0::float8",
                 "r * 0::float4 <> r * 0::float4", "x + 'Infinity'::float8 > 0::float8",
                 "COALESCE(x, 'NaN'::float8) = 'NaN'::float8", "NULLIF(x, 'NaN'::float8) IS NULL",
                 "NULLIF(x, 0::float8) IS NULL", "CASE WHEN x > 0::float8 THEN x ELSE -x END > 1::float8"):
        check(s, "SELECT count(*), min(id), max(id) FROM f WHERE " + cond)
    # keys computed by the engine: -x, x * 1, casts
    check(s, "SELECT -x AS nx, count(*) FROM f GROUP BY 1")
    check(s, "SELECT r::float8 AS rx, count(*) FROM f GROUP BY 1")
    check(s, "SELECT (x * 0::float8) AS z, count(*) FROM f GROUP BY 1")


def test_integer_extremes(mk):
    s = mk()
    lo2, hi2, lo4, hi4, lo8, hi8 = -32768, 32767, -2147483648, 2147483647, -(1 << 63), (1 << 63) - 1
    rows = [(1, lo2, lo4, lo8), (1, hi2, hi4, hi8), (2, 0, 0, 0), (2, -1, -1, -1), (3, None, None, None),
            (3, hi2, hi4, hi8), (4, lo2, lo4, lo8), (4, 1, 1, 1), (5, hi2, lo4, hi8), (5, lo2, hi4, lo8)]
    rows += [(6, hi2, hi4, hi8)] * 3000        # sums beyond int4 of int2 / int4 values
    s.table("f", [("g", "int4"), ("s", "int2"), ("i", "int4"), ("l", "int8")], rows, batch_rows=1024)
    s.table("d", [("k", "int8"), ("n", "text")],
            [(lo8, "lo8"), (hi8, "hi8"), (lo4, "lo4"), (hi4, "hi4"), (lo2, "lo2"), (hi2, "hi2"),
             (0, "zero"), (-1, "minus one")], arrow=True)
    s.table("d4", [("k", "int4"), ("n4", "text")],
            [(lo4, "lo4"), (hi4, "hi4"), (lo2, "lo2"), (hi2, "hi2"), (0, "zero"), (-1, "m1")],
            arrow=False)
    check(s, "SELECT g, min(s), max(s), min(i), max(i), min(l), max(l), sum(s), sum(i), avg(s), "
             "avg(i), count(l) FROM f GROUP BY g", expect=lambda r: any(x[0] == 6 for x in r))
    check(s, "SELECT sum(s), sum(i), avg(i), avg(s) FROM f", expect=nonempty)
    check(s, "SELECT s, count(*) FROM f GROUP BY s")
    check(s, "SELECT i, count(*) FROM f GROUP BY i")
    check(s, "SELECT l, count(*) FROM f GROUP BY l")
    check(s, "SELECT s, i, l, count(*) FROM f GROUP BY s, i, l")
    for key in ("s", "i", "l"):
        check(s, "SELECT d.n, count(*) FROM f JOIN d ON f.%s = d.k GROUP BY d.n" % key, expect=nonempty)
        check(s, "SELECT d4.n4, count(*) FROM f JOIN d4 ON f.%s = d4.k GROUP BY d4.n4" % key,
              expect=nonempty)
    for cond in ("l = -9223372036854775808", "l > 9223372036854775806", "l < -9223372036854775807",
                 "i = -2147483648", "i >= 2147483647", "i > 2147483646::int8", "s = -32768",
                 "s > 32766", "s < 40000", "s > -40000", "s = 32767::int8", "l > 2147483647",
                 "i < l", "s = i", "l IN (-9223372036854775808, 9223372036854775807)",
                 "i IN (2147483647, -2147483648, 4294967295)", "s::int8 * 4294967296 < l",
                 "i::int8 + 1 > 2147483647", "s::int4 * 65536 = -2147483648", "l % 2 = -1",
                 "i / 2 = 1073741823", "s / 2::int2 = -16384", "l % -1 = 0", "i % -1 = 0",
                 "s % -1::int2 = 0"):
        check(s, "SELECT count(*), min(g), max(g) FROM f WHERE " + cond)


def test_date_timestamp(mk):
    s = mk()
    rows = [(1, D(2020, 1, 1), TS(2020, 1, 1), TS(2020, 1, 1, 5)),
            (2, D(2020, 2, 29), TS(2020, 2, 29, 23, 59, 59, 999999), TS(2020, 3, 1)),
            (3, D(1999, 12, 31), TS(1999, 12, 31, 23, 59, 59, 999999), TS(1999, 12, 31)),
            (4, D(2000, 1, 1), TS(2000, 1, 1), TS(2000, 1, 1)),
            (5, D(1970, 1, 1), TS(1970, 1, 1), TS(1970, 1, 1)),
            (6, D(1969, 12, 31), TS(1969, 12, 31, 23, 59, 59, 999999), TS(1969, 12, 31, 23)),
            (7, D(1, 1, 1), TS(1, 1, 1), TS(1, 1, 1)),
            (8, D(9999, 12, 31), TS(9999, 12, 31, 23, 59, 59, 999999), TS(9999, 12, 31)),
            (9, None, None, None),
            (10, D(2020, 1, 1), TS(2020, 1, 1, 0, 0, 0, 1), TS(2020, 1, 1, 5)),
            (11, D(1600, 2, 29), TS(1600, 2, 29, 12), TS(1600, 2, 29, 12))]
    s.table("f", [("id", "int4"), ("dt", "date"), ("ts", "timestamp"), ("tz", "timestamptz")], rows,
            batch_rows=4)
    s.table("dd", [("dk", "date"), ("season", "text")],
            [(D(2020, 1, 1), "winter20"), (D(2020, 2, 29), "leap"), (D(1970, 1, 1), "epoch"),
             (D(1970, 1, 1), "epoch2"), (None, "none"), (D(9999, 12, 31), "end")], arrow=True)
    s.table("dt", [("tk", "timestamp"), ("what", "text")],
            [(TS(2020, 1, 1), "y2020"), (TS(2000, 1, 1), "y2000"), (TS(1, 1, 1), "y1")], arrow=False)
    check(s, "SELECT min(dt), max(dt), min(ts), max(ts), min(tz), max(tz), count(dt) FROM f",
          expect=lambda r: r[0][0] == "0001-01-01")
    check(s, "SELECT dt, count(*), min(ts), max(tz) FROM f GROUP BY dt")
    check(s, "SELECT ts, count(*) FROM f GROUP BY ts")
    check(s, "SELECT tz, count(*), min(id) FROM f GROUP BY tz")
    check(s, "SELECT dd.season, count(*), min(f.ts) FROM f JOIN dd ON f.dt = dd.dk GROUP BY dd.season",
          expect=lambda r: ("epoch2", 1, "1970-01-01 00:00:00") in r)
    check(s, "SELECT dt.what, count(*), max(f.dt) FROM f JOIN dt ON f.ts = dt.tk GROUP BY dt.what")
    for cond in ("dt >= date '2020-01-01'", "dt < date '2000-01-01'", "dt = date '2020-02-29'",
                 "dt BETWEEN date '1969-12-31' AND date '1970-01-01'", "dt <> date '2020-01-01'",
                 "dt > date '9999-12-30'", "dt < date '0002-01-01'", "dt IN (date '2020-01-01', NULL)",
                 "ts > timestamp '2020-01-01'", "ts >= timestamp '2020-01-01'",
                 "ts < timestamp '2000-01-01'", "ts <= timestamp '1969-12-31 23:59:59.999999'",
                 "ts = timestamp '2020-02-29 23:59:59.999999'",
                 "ts BETWEEN SYMMETRIC timestamp '2021-01-01' AND timestamp '1970-01-01'",
                 "tz >= timestamptz '2020-01-01 05:00:00+00'", "tz < timestamptz '1970-01-01 00:00:00+00'",
                 "dt IS NULL", "ts IS NOT NULL AND dt < date '2000-01-01'",
                 "CASE WHEN id > 5 THEN dt END > date '1980-01-01'",
                 "COALESCE(dt, date '2100-01-01') > date '2050-01-01'",
                 "NULLIF(dt, date '2020-01-01') IS NULL"):
        check(s, "SELECT count(*), min(id), max(id), min(dt), max(ts) FROM f WHERE " + cond)
    # cross-type datetime comparisons (through the session's TimeZone; more
    # in test_engine_timezone.py); date arithmetic stays PostgreSQL's
    check(s, "SELECT count(*) FROM f WHERE dt < timestamp '2000-01-01 12:00'")
    check(s, "SELECT count(*) FROM f WHERE ts < timestamptz '2000-01-01 12:00+00'")
    # date arithmetic: date +- int4, int4 + date, date - date
    check(s, "SELECT count(*) FROM f WHERE dt + 1 > date '2020-01-01'")
    check(s, "SELECT sum(dt - date '2000-01-01'), min(dt - 7), max(3 + dt), count(dt - dt) FROM f",
          expect=nonempty)
    check(s, "SELECT dt - 1, count(*) FROM f GROUP BY 1")
    check(s, "SELECT max(dt + 2147483000) FROM f", expect="error:22008")
    check(s, "SELECT min(dt) FILTER (WHERE ts > timestamp '2000-01-01'), "
             "max(ts) FILTER (WHERE dt < date '2000-01-01') FROM f")


def test_case_coalesce_nullif(base):
    check(base, "SELECT count(*) FROM f WHERE CASE WHEN g = 0 THEN a > 5 WHEN g = 1 THEN b > 4 END")
    check(base, "SELECT count(*) FROM f WHERE NOT CASE WHEN g = 0 THEN a > 5 ELSE NULL END")
    check(base, "SELECT CASE WHEN a > 10 THEN 'big' END IS NULL AS x, count(*) FROM f GROUP BY 1",
          offload=False)   # text CASE
    check(base, "SELECT CASE WHEN a > 10 THEN 1 WHEN a > 0 THEN 2 WHEN a IS NULL THEN NULL ELSE 3 END "
                "AS c, count(*), sum(a) FROM f GROUP BY 1")
    check(base, "SELECT sum(CASE WHEN fl THEN s ELSE -s END), sum(CASE WHEN g = 2 THEN x END), "
                "max(CASE WHEN x < 0::float8 THEN dt END) FROM f")
    check(base, "SELECT COALESCE(g, k, -100) AS c, count(*) FROM f GROUP BY 1")
    check(base, "SELECT sum(COALESCE(a, b, 0)), sum(COALESCE(s, 1::int2)), max(COALESCE(r, x)) FROM f")
    check(base, "SELECT count(*) FROM f WHERE COALESCE(a, b) > 3")
    check(base, "SELECT count(*) FROM f WHERE COALESCE(fl, false)")
    check(base, "SELECT NULLIF(g, 0) AS n, count(*), count(NULLIF(b, 3)) FROM f GROUP BY 1")
    check(base, "SELECT sum(NULLIF(a, 10)), avg(NULLIF(x, 1::float8)), min(NULLIF(dt, date '2020-01-01')) "
                "FROM f WHERE x < 10::float8")
    check(base, "SELECT count(*) FROM f WHERE NULLIF(k, 1) IS NULL")
    check(base, "SELECT count(*) FROM f WHERE NULLIF(s, 0::int2) > 0")
    check(base, "SELECT count(*) FROM f WHERE CASE WHEN a IS NULL THEN NULL WHEN a > 0 THEN true ELSE false END")
    check(base, "SELECT CASE WHEN s > 0 THEN s::int8 ELSE big END AS c, count(*) FROM f GROUP BY 1")
    check(base, "SELECT d.name, sum(CASE WHEN f.b > 3 THEN f.a ELSE 0 END) FROM f JOIN d ON f.k = d.dk "
                "GROUP BY d.name")


def test_in_lists_with_null(base):
    for cond in ("a IN (10, 20, NULL)", "a NOT IN (10, 20, NULL)", "a NOT IN (10, 20)",
                 "g NOT IN (0)", "g IN (0, 1)", "k IN (1, 4294967297)",
                 "k8 IN (10, 4294967306)", "k8 NOT IN (10, 4294967306, NULL)",
                 "s IN (32767, -32768, 40000)", "x IN ('NaN'::float8, 'Infinity'::float8)",
                 "x NOT IN (1::float8, -0.0::float8)", "r IN (1.5::float4, 0.25::float4, NULL)",
                 "dt IN (date '2020-01-01', date '0001-01-01')",
                 "ts NOT IN (timestamp '2020-01-01', timestamp '1970-01-01')",
                 "fl IN (true, NULL)", "(a IN (10, 20, NULL)) IS NULL", "NOT (a IN (1, NULL))",
                 "COALESCE(a IN (10, NULL), true)", "a = ANY ('{10,20,NULL}'::int4[])",
                 "a <> ALL ('{10,20}'::int4[])", "a < ANY ('{0,5}'::int4[])",
                 "a >= ALL ('{1,NULL}'::int4[])", "big IN (9223372036854775807, -9223372036854775808)"):
        check(base, "SELECT count(*), min(id), max(id) FROM f WHERE " + cond)
    check(base, "SELECT count(*) FROM f WHERE g IN (NULL)", offload=False)   # folds to NULL
    check(base, "SELECT count(*) FILTER (WHERE a IN (10, NULL)), count(*) FILTER (WHERE a NOT IN (10, NULL)), "
                "count(*) FROM f")
    check(base, "SELECT g IN (0, NULL) AS x, count(*) FROM f GROUP BY 1")


def test_prepared_statements(base):
    conn = base.conn
    stmts = {
        "q1": ("(int4, int4)", "SELECT d.name, count(*), sum(f.a) FROM f JOIN d ON f.k = d.dk "
                               "WHERE f.a BETWEEN $1 AND $2 GROUP BY d.name",
               ["(0, 100)", "(-2147483648, 2147483647)", "(NULL, 5)", "(50, 1)", "(NULL, NULL)"]),
        "q2": ("(float8)", "SELECT g, count(*), max(x) FROM f WHERE x < $1 GROUP BY g",
               ["(1.5)", "('NaN')", "('-Infinity')", "(NULL)", "(0)"]),
        "q3": ("(int4)", "SELECT sum(a * $1), count(*) FROM f WHERE a IS NOT NULL AND a < 1000",
               ["(1)", "(2147483647)", "(0)", "(NULL)", "(-1)"]),
        "q4": ("(int4)", "SELECT sum(a) FILTER (WHERE b > $1), count(*) FILTER (WHERE g IS DISTINCT FROM $1) "
                         "FROM f", ["(2)", "(NULL)", "(0)"]),
        "q5": ("(int4)", "SELECT count(*) FROM f WHERE a / $1 > 1", ["(1)", "(0)", "(NULL)", "(-1)"]),
        "q6": ("(date, timestamp)", "SELECT count(*), min(dt), max(ts) FROM f WHERE dt >= $1 AND ts < $2",
               ["('2000-01-01', '2030-01-01')", "(NULL, '2030-01-01')", "('0001-01-01', '9999-12-31')"]),
        "q7": ("(int8)", "SELECT d8.label, count(*) FROM f JOIN d8 ON f.k8 = d8.ak WHERE f.big > $1 "
                         "GROUP BY d8.label", ["(0)", "(-9223372036854775808)", "(NULL)"]),
        "q8": ("(int2, int4)", "SELECT s + $1 AS k, count(*) FROM f WHERE s IS NOT NULL AND s < $2 GROUP BY 1",
               ["(1, 100)", "(32767, 100)", "(NULL, 100)", "(1, 40000)"]),
        "q9": ("(int4, float8)", "SELECT CASE WHEN a > $1 THEN x ELSE $2 END AS c, count(*) FROM f GROUP BY 1",
               ["(0, 1)", "(NULL, 'NaN')", "(5, NULL)"]),
    }
    # a NULL parameter folded into a custom plan makes a constant qual,
    # which stays PostgreSQL's
    check_prepared(base, stmts, lambda mode, name, args: mode == "force_generic_plan" or "NULL" not in args)


def check_prepared(star, stmts, must_offload):
    """PREPARE each statement on both sides and EXECUTE it with each
    argument list under custom and generic plans: equal results (errors by
    SQLSTATE), and offloaded where must_offload(mode, name, args) says."""
    conn = star.conn
    problems = []
    for mode in ("force_custom_plan", "force_generic_plan"):
        conn.execute("SET plan_cache_mode = %s" % mode)
        try:
            for name, (types, body, args_list) in stmts.items():
                for side, schema, warp in (("w", star.w, True), ("h", star.h, False)):
                    set_side(conn, schema, warp)
                    run(conn, "DEALLOCATE %s_%s" % (name, side))
                    conn.execute("PREPARE %s_%s%s AS %s" % (name, side, types, body))
                for args in args_list:
                    set_side(conn, star.w, True)
                    plan = plan_of(conn, "EXECUTE %s_w%s" % (name, args))
                    got = run(conn, "EXECUTE %s_w%s" % (name, args))
                    set_side(conn, star.h, False)
                    want = run(conn, "EXECUTE %s_h%s" % (name, args))
                    if "Custom Scan (Warp" not in plan and must_offload(mode, name, args):
                        problems.append("%s %s%s not offloaded:\n%s" % (mode, name, args, plan))
                    why = same_result(got, want, False)
                    if why:
                        problems.append("%s EXECUTE %s%s [%s]: %s\n  pg_warp: %s\n  oracle:  %s"
                                        % (mode, name, args, body[:200], why, _short(got), _short(want)))
        finally:
            conn.execute("SET plan_cache_mode = auto")
    for side in ("w", "h"):
        for name in stmts:
            run(conn, "DEALLOCATE %s_%s" % (name, side))
    assert not problems, "\n".join(problems)


NUMS = ["(1.5)", "(1.005)", "(-0.01)", "(0)", "('NaN')", "('Infinity')", "('-Infinity')", "(NULL)",
        "(1e30)", "(-1e30)", "(12345678901234567890.5)", "(999.99)", "(-1000)", "(2.999999999999999999999)"]


def test_prepared_text_and_arrays(mk):
    """Parameters of prepared statements where the engine used to want
    constants: text = <> < LIKE NOT LIKE $1 (the pattern's trailing escape
    an error only where PostgreSQL's match reaches it), IN ($1, 'x'), and
    x = ANY($1) / x <> ALL($1) over text, int, int8, float8 and date
    arrays, with NULL elements, empty, NULL and 5,000-element arrays;
    numeric and int columns against numeric parameters of every kind
    (NaN, +-Infinity, beyond 18 digits, more decimals than the column);
    the generic plans offloaded, every answer PostgreSQL's."""
    import random
    rnd = random.Random(21)
    words = ["AIR", "AIR ", "MAIL", "SHIP", "TRUCK", "", "a_b", "a\\b", "50%", "\u00e9", "\u540d\u524d", "Z"]
    n = 12000
    vals = [None if i % 17 == 0 else rnd.choice(words) for i in range(n)]
    tab = pa.table({
        "id": pa.array(range(n), pa.int32()),
        "sm": pa.array(vals, pa.string()),
        "sd": pa.array(vals, pa.string()).dictionary_encode(),
        "a": pa.array([None if i % 13 == 0 else rnd.randint(-50, 50) for i in range(n)], pa.int32()),
        "x": pa.array([float("nan") if i % 11 == 0 else rnd.uniform(-5, 5) for i in range(n)], pa.float64()),
        "dt": pa.array([datetime.date(2020, 1, 1) + datetime.timedelta(days=i % 40) for i in range(n)],
                       pa.date32()),
        "p": pa.array([None if i % 19 == 0 else decimal.Decimal(rnd.randint(-99999, 99999)) / 100
                       for i in range(n)], pa.decimal128(12, 2)),
        "s": pa.array([rnd.randint(-300, 300) for i in range(n)], pa.int16()),
    })
    cols = [("id", "int4"), ("sm", "text"), ("sd", "varchar(20)"), ("a", "int4"), ("x", "float8"),
            ("dt", "date"), ("p", "numeric(12,2)"), ("s", "int2")]
    s = mk()
    s.table("f", cols, arrow_table=tab, batch_rows=2500)
    big = "'{%s}'" % ",".join(str(i) for i in range(-2500, 2500, 1))
    stmts = {
        "t1": ("(text)", "SELECT a % 4, count(*), sum(id) FROM f WHERE sm = $1 GROUP BY 1",
               ["('AIR')", "('')", "(NULL)", "('nope')"]),
        "t2": ("(text)", "SELECT count(*), sum(a) FROM f WHERE sd <> $1", ["('AIR')", "(NULL)"]),
        "t3": ("(text, text)", "SELECT a % 4, count(*) FROM f WHERE sm < $1 AND sd >= $2 GROUP BY 1",
               ["('M', 'A')", "('\u00e9', '')", "(NULL, 'A')", "('Z', 'AIR ')"]),
        "t4": ("(text)", "SELECT a % 4, count(*) FROM f WHERE sm LIKE $1 GROUP BY 1",
               ["('A%')", "('%I%')", "('_')", "('a\\_b')", "('%')", "(NULL)", "('50\\%')",
                "('\u540d_')", "('A\\')", "('Q\\')"]),
        "t5": ("(text)", "SELECT count(*) FROM f WHERE sd NOT LIKE $1", ["('A%')", "('SHIP\\')"]),
        "t6": ("(text)", "SELECT a % 4, count(*) FROM f WHERE sm IN ($1, 'MAIL') GROUP BY 1",
               ["('AIR')", "(NULL)", "('MAIL')"]),
        "t7": ("(text[])", "SELECT a % 4, count(*) FROM f WHERE sd = ANY($1) GROUP BY 1",
               ["('{AIR,SHIP}')", "('{}')", "(NULL)", "('{AIR,NULL}')", "('{NULL}')"]),
        "t8": ("(text[])", "SELECT count(*) FROM f WHERE sm <> ALL($1)",
               ["('{AIR,SHIP}')", "('{}')", "(NULL)", "('{AIR,NULL}')"]),
        "a1": ("(int4[])", "SELECT count(*), sum(x) FILTER (WHERE x = x) FROM f WHERE a = ANY($1)",
               ["('{1,2,3}')", "('{}')", "(NULL)", "('{1,NULL}')", "(%s)" % big]),
        "a2": ("(int8[])", "SELECT a % 4, count(*) FROM f WHERE a <> ALL($1) GROUP BY 1",
               ["('{1,2,3}')", "('{NULL}')", "('{9223372036854775807}')"]),
        "a3": ("(float8[])", "SELECT count(*) FROM f WHERE x = ANY($1) OR x < ALL($1)",
               ["('{NaN}')", "('{-Infinity,0}')", "('{}')"]),
        "a4": ("(date[])", "SELECT count(*) FROM f WHERE dt = ANY($1)",
               ["('{2020-01-05,2020-01-07}')", "('{infinity}')", "(NULL)"]),
        "a5": ("(int4)", "SELECT count(*) FROM f WHERE a IN ($1, $1 + 1, 7)", ["(3)", "(NULL)"]),
        "n1": ("(numeric)", "SELECT a % 4, count(*), sum(p) FROM f WHERE p > $1 GROUP BY 1", NUMS),
        "n2": ("(numeric)", "SELECT count(*) FROM f WHERE $1 >= p", NUMS),
        "n3": ("(numeric, numeric)", "SELECT count(*), sum(p) FROM f WHERE p = $1 OR p <> $2",
               ["(1.5, 'NaN')", "(-0.01, 1e30)", "(NULL, 0)", "('Infinity', 1.005)"]),
        "n4": ("(numeric)", "SELECT count(*) FROM f WHERE a < $1 AND s >= -$1", NUMS),
        "n5": ("(numeric)", "SELECT count(*) FROM f WHERE p <= $1 AND a::numeric <> $1", NUMS),
        "n6": ("(numeric[])", "SELECT count(*) FROM f WHERE p = ANY($1)", ["('{1.5,-0.01,NaN}')"]),
    }
    # custom plans take constants: a NULL folds into a constant qual, and a
    # constant array of over 1,000 elements stays PostgreSQL's
    # (numeric arrays from a parameter stay PostgreSQL's)
    check_prepared(s, stmts, lambda mode, name, args: name != "n6" and (
        mode == "force_generic_plan" or ("NULL" not in args and len(args) < 1000)))
    # the trailing escape fails on rows that reach it, as PostgreSQL's
    set_side(s.conn, s.h, False)
    run(s.conn, "SET plan_cache_mode = force_generic_plan")
    assert run(s.conn, "SELECT count(*) FROM f WHERE sm LIKE 'A\\'")[0] == "error"
    run(s.conn, "SET plan_cache_mode = auto")


def test_constant_quals(base):
    """Quals over no column (WHERE $1 > 0, WHERE current_date < ...), which
    PostgreSQL evaluates once in a gating Result above the scan or join: the
    node evaluates them before it builds a dimension or reads a batch, and
    returns nothing unless they are true (false, NULL), so a dimension qual
    that would fail is not evaluated then; an error in one is raised once.
    WarpPreAgg on one table and on a star, WarpScan rows, a parallel plan;
    generic plans offloaded, answers PostgreSQL's.  (PostgreSQL offers no
    custom join under a constant qual: WarpJoin's rows stay its own.)"""
    stmts = {
        "g1": ("(int4)", "SELECT count(*), sum(a) FROM f WHERE $1 > 0 AND a > 5", ["(1)", "(0)", "(NULL)"]),
        "g2": ("(int4)", "SELECT d.name, count(*), sum(f.a) FROM f JOIN d ON f.k = d.dk WHERE $1 > 0 "
                         "GROUP BY d.name", ["(1)", "(0)", "(NULL)"]),
        "g3": ("(int4)", "SELECT d.name, f.a, f.x FROM f JOIN d ON f.k = d.dk WHERE $1 IS NOT NULL AND f.a > 0",
               ["(1)", "(NULL)"]),
        "g4": ("(int4)", "SELECT a, x FROM f WHERE $1 <> 0 AND a < 50", ["(1)", "(0)"]),
        "g5": ("(int4)", "SELECT count(*) FROM f WHERE 10 / $1 > 0 AND a > 0", ["(1)", "(0)", "(-1)"]),
        "g6": ("(int4)", "SELECT d.name, count(*) FROM f JOIN d ON f.k = d.dk WHERE $1 > 0 AND d.grp / $1 >= 0 "
                         "GROUP BY d.name", ["(1)", "(0)"]),
        "g7": ("(int4)", "SELECT a, x FROM f WHERE $1 > 0 ORDER BY x DESC NULLS LAST, a LIMIT 3",
               ["(1)", "(0)"]),
    }
    # (g3: PostgreSQL calls no join hook under a constant qual)
    check_prepared(base, stmts, lambda mode, name, args: mode == "force_generic_plan" and name != "g3")
    qs = ["SELECT g, count(*), sum(a) FROM f WHERE current_date < '2000-01-01' AND a > 0 GROUP BY g",
          "SELECT g, count(*), sum(a) FROM f WHERE current_date > '2000-01-01' AND a > 0 GROUP BY g",
          "SELECT d.name, count(*) FROM f JOIN d ON f.k = d.dk "
          "WHERE current_date < '2000-01-01' GROUP BY d.name"]
    check_everywhere(base, qs, workers=3)
    check(base, qs[1], expect=nonempty)
    set_side(base.conn, base.w, True)
    plan = plan_of(base.conn, qs[0])
    assert "One-Time Filter: (CURRENT_DATE < '2000-01-01'::date)" in plan and "WarpPreAgg" in plan, plan


def test_variance_stddev(base):
    """var_samp, var_pop, variance, stddev, stddev_samp and stddev_pop of
    int2, int4 (the engine's count, sum and sum of squares, exact in 128
    bits, emitted as numeric_poly_serialize's state), float4 and float8
    (avg's {N, Sx, Sxx}): per group, with FILTER, over a join, groups of
    one row and of none, extremes (2147483647, -32768, NaN, infinities),
    on 1 and 4 threads and in parallel workers; answers PostgreSQL's."""
    qs = ["SELECT g, var_samp(a), var_pop(a), variance(s), stddev(s), stddev_samp(b), stddev_pop(b), "
          "count(*) FROM f GROUP BY g",
          "SELECT g, var_samp(x), var_pop(r), variance(x), stddev(r), stddev_samp(x), stddev_pop(x) "
          "FROM f GROUP BY g",
          "SELECT d.name, stddev(f.a) FILTER (WHERE f.b > 2), variance(f.x) FILTER (WHERE f.fl), "
          "var_pop(f.s) FROM f JOIN d ON f.k = d.dk GROUP BY d.name",
          "SELECT stddev(a), var_samp(s), stddev(x) FROM f WHERE a = 2147483647",
          "SELECT stddev(a), var_pop(s), var_samp(x) FROM f WHERE a > 2147483647",
          "SELECT id % 3, var_samp(a), stddev_pop(s) FROM f WHERE a IS NOT NULL GROUP BY 1",
          "SELECT g, count(DISTINCT k), stddev(a), var_pop(s) FROM f GROUP BY g"]
    check_everywhere(base, qs, workers=2)
    # beside a DISTINCT aggregate a float variance depends on the order of
    # the rows (as a float sum does): PostgreSQL's
    check(base, "SELECT g, count(DISTINCT k), var_pop(x) FROM f GROUP BY g", offload=False)
    check(base, qs[0], expect=nonempty)
    check(base, "SELECT count(*), var_samp(a) FROM f WHERE a = 2147483647",
          expect=lambda r: r[0][0] >= 1)
    check(base, "SELECT g, var_samp(s) FROM f WHERE s = -32768 GROUP BY g", expect=nonempty)


def test_subquery_values(base):
    """A subquery's value in a fact qual's comparison: an initplan (scalar
    subquery, uncorrelated), taken when the node starts; a correlated
    subquery whose plan is the node, rescanned per outer row with the new
    value (custom_exprs name the parameter); an initplan as a constant qual
    (the gate); one that fails (more than one row, 21000) where PostgreSQL
    reaches it; outside a WHERE comparison (a CASE, an aggregate argument)
    it stays PostgreSQL's.  Answers PostgreSQL's, on 1 and 4 threads."""
    qs = ["SELECT count(*), sum(a) FROM f WHERE a = (SELECT max(a) FROM f WHERE a < 1000)",
          "SELECT d.name, count(*) FROM f JOIN d ON f.k = d.dk WHERE f.a >= (SELECT min(grp) FROM d) "
          "GROUP BY d.name",
          "SELECT g, count(*) FROM f WHERE (SELECT count(*) FROM d) > 3 AND a > 0 GROUP BY g",
          "SELECT g, count(*) FROM f WHERE (SELECT count(*) FROM d) > 1000 AND a > 0 GROUP BY g",
          "SELECT count(*) FROM f WHERE dt < (SELECT max(dt) FROM f) AND x IS NOT NULL"]
    check_everywhere(base, qs)
    check(base, qs[0], expect=lambda r: r[0][0] > 0)
    check(base, "SELECT count(*) FROM f WHERE k = (SELECT dk FROM d WHERE dk IS NOT NULL)",
          expect="error:21000")
    check(base, "SELECT d.dk, (SELECT count(*) FROM f WHERE f.k = d.dk AND f.a > 0) FROM d", offload=False,
          expect=nonempty)
    set_side(base.conn, base.w, True)
    plan = plan_of(base.conn, "SELECT d.dk, (SELECT count(*) FROM f WHERE f.k = d.dk AND f.a > 0) FROM d")
    assert "WarpPreAgg" in plan and "SubPlan" in plan, plan
    # a Sort between the SubPlan and the node keeps its sorted rows unless
    # a parameter below it changed: only the node's extParam says so
    q = ("SELECT d.dk, (SELECT g FROM f WHERE f.k = d.dk GROUP BY g ORDER BY count(*) DESC, g NULLS FIRST "
         "LIMIT 1) FROM d")
    check(base, q, offload=False, expect=lambda r: len({row[1] for row in r}) > 1)
    set_side(base.conn, base.w, True)
    plan = plan_of(base.conn, q)
    assert "WarpPreAgg" in plan and "Sort" in plan, plan
    check(base, "SELECT sum(CASE WHEN a > (SELECT min(grp) FROM d) THEN 1 ELSE 0 END) FROM f", offload=False,
          expect=nonempty)


def test_bool_and_or(base):
    """bool_and, every and bool_or as the engine's min and max of a boolean
    (false < true; NULL inputs skipped, NULL without any): of a column and
    of comparisons, with FILTER, per group, over a join, on no row; on 1
    and 4 threads and in parallel workers.  Answers PostgreSQL's."""
    qs = ["SELECT g, bool_and(fl), bool_or(fl), every(a > 0), bool_or(x > 1) FILTER (WHERE b > 2) "
          "FROM f GROUP BY g",
          "SELECT bool_and(fl), bool_or(fl), count(*) FROM f WHERE fl IS NULL",
          "SELECT d.name, bool_or(f.a IS NULL), bool_and(f.dt > date '2000-01-01') FROM f "
          "JOIN d ON f.k = d.dk GROUP BY 1",
          "SELECT bool_and(a > 0), bool_or(a < 0) FROM f WHERE a > 2147483647"]
    check_everywhere(base, qs, workers=2)
    check(base, qs[0], expect=lambda r: any(row[1] is True for row in r) and any(row[1] is False for row in r))


def test_text_case_keys(base):
    """A CASE of text constants as a group key (report buckets): grouped by
    which distinct string it yields (a string in two branches is one
    group; no ELSE is NULL, a group of its own), searched and simple CASE,
    beside dimension keys, with count(DISTINCT) counted by the engine, on 1
    and 4 threads; a CASE with a non-constant
    result stays PostgreSQL's.  Answers PostgreSQL's."""
    qs = ["SELECT CASE WHEN a > 10 THEN 'big' WHEN a > 0 THEN 'small' ELSE 'none' END AS b, count(*), "
          "sum(a) FROM f GROUP BY 1",
          "SELECT CASE WHEN g = 0 THEN 'x' WHEN g = 1 THEN 'y' WHEN g = 2 THEN 'x' END AS b, count(*) "
          "FROM f GROUP BY 1",
          "SELECT CASE g WHEN 0 THEN 'zero' WHEN 1 THEN '' ELSE NULL END, max(x) FROM f GROUP BY 1",
          "SELECT d.name, CASE WHEN f.fl THEN 'yes'::varchar ELSE 'no' END AS yn, count(*) "
          "FROM f JOIN d ON f.k = d.dk GROUP BY 1, 2",
          "SELECT CASE WHEN a > 10 THEN 'big' ELSE 'small' END, count(DISTINCT k) FROM f GROUP BY 1",
          "SELECT CASE WHEN s < 0 THEN '\u00e9t\u00e9' ELSE 'hiver' END AS saison, count(*), avg(r) FROM f "
          "GROUP BY 1 HAVING count(*) > 1 ORDER BY 1"]
    # (parallel workers: on these few rows PostgreSQL's own parallel plan
    # costs less; the SSB-size plan is a Parallel WarpPreAgg)
    check_everywhere(base, qs)
    check(base, qs[0], expect=lambda r: len(r) >= 2)
    check(base, qs[1], expect=lambda r: any(row[0] is None for row in r))
    check(base, "SELECT CASE WHEN a > 10 THEN 'big' ELSE d.name END, count(*) FROM f JOIN d ON f.k = d.dk "
                "GROUP BY 1", offload=False, expect=nonempty)


def test_filter_clauses(base):
    check(base, "SELECT count(*) FILTER (WHERE a > 10), count(a) FILTER (WHERE b > 2), "
                "sum(a) FILTER (WHERE fl), sum(a) FILTER (WHERE NOT fl), sum(a) FILTER (WHERE fl IS NULL), "
                "avg(x) FILTER (WHERE x < 100::float8), min(dt) FILTER (WHERE g = 0), "
                "max(ts) FILTER (WHERE g IS NULL), count(*) FROM f")
    check(base, "SELECT g, count(*) FILTER (WHERE a IS NULL), sum(s) FILTER (WHERE s > 0), "
                "max(r) FILTER (WHERE r < 'Infinity'::float4) FROM f GROUP BY g")
    check(base, "SELECT d.name, count(*) FILTER (WHERE f.b IN (2, 3)), sum(f.a) FILTER (WHERE f.a < 100), "
                "count(*) FROM f JOIN d ON f.k = d.dk GROUP BY d.name")
    # the same aggregate with and without a FILTER
    check(base, "SELECT sum(a), sum(a) FILTER (WHERE a < 100), sum(a) FILTER (WHERE a < 100 AND b < 5) FROM f")
    # a FILTER on a dimension column stays PostgreSQL's
    check(base, "SELECT count(*) FILTER (WHERE d.grp = 1) FROM f JOIN d ON f.k = d.dk", offload=False)


def test_having(base):
    check(base, "SELECT g, count(*) FROM f GROUP BY g HAVING count(*) > 2",
          expect=lambda r: len(r) > 0)
    check(base, "SELECT g, sum(a) FROM f GROUP BY g HAVING sum(a) IS NULL OR sum(a) < 0")
    check(base, "SELECT g, count(*) FROM f GROUP BY g HAVING max(x) > 0::float8 AND min(dt) < date '2020-01-02'")
    check(base, "SELECT d.name, count(*) FROM f JOIN d ON f.k = d.dk GROUP BY d.name "
                "HAVING sum(f.a) FILTER (WHERE f.b > 2) > 10")
    check(base, "SELECT count(*) FROM f HAVING sum(a) > 0")
    check(base, "SELECT count(*) FROM f WHERE id < 0 HAVING count(*) = 0", expect=lambda r: r == [(0,)])
    check(base, "SELECT g, avg(a) FROM f GROUP BY g HAVING avg(a) > 5 AND count(b) >= 1")


def test_order_by_limit(base):
    check(base, "SELECT g, count(*), sum(a) FROM f GROUP BY g ORDER BY g NULLS FIRST LIMIT 3", ordered=True)
    check(base, "SELECT g, count(*) AS c FROM f GROUP BY g ORDER BY c DESC, g LIMIT 2", ordered=True)
    check(base, "SELECT d.name, count(*), sum(f.a) AS s FROM f JOIN d ON f.k = d.dk GROUP BY d.name "
                "ORDER BY s DESC NULLS LAST, d.name LIMIT 4", ordered=True)
    check(base, "SELECT x, count(*) FROM f GROUP BY x ORDER BY x DESC LIMIT 3", ordered=True)
    check(base, "SELECT dt, count(*) FROM f GROUP BY dt ORDER BY dt LIMIT 5 OFFSET 1", ordered=True)
    check(base, "SELECT d.grp, max(f.ts) AS m FROM f JOIN d ON f.k = d.dk GROUP BY d.grp "
                "ORDER BY m NULLS FIRST, d.grp LIMIT 10", ordered=True)


def test_cross_type_join_keys(base, mk):
    # int8 fact keys beyond int4 must not match int4 dimension keys by their low bits
    check(base, "SELECT d.name, count(*) FROM f JOIN d ON f.k8 = d.dk GROUP BY d.name",
          expect=lambda r: sorted(x[0] for x in r) == ["minus", "zero"])
    check(base, "SELECT d2.sname, count(*), sum(f.a) FROM f JOIN d2 ON f.k = d2.sk GROUP BY d2.sname")
    check(base, "SELECT d2.sname, count(*) FROM f JOIN d2 ON f.k8 = d2.sk GROUP BY d2.sname")
    check(base, "SELECT d2.sname, d8.label, count(*) FROM f JOIN d2 ON f.s = d2.sk "
                "JOIN d8 ON f.big = d8.ak GROUP BY 1, 2")
    s = mk()
    s.table("f", [("k8", "int8"), ("k2", "int2"), ("v", "int4")],
            [(4294967297, 1, 1), (1, 1, 2), (-4294967295, -1, 4), (65537, 1, 8), (-1, -1, 16),
             (2147483648, 0, 32), (-2147483648, 0, 64)])
    s.table("d", [("k", "int4"), ("n", "text")], [(1, "one"), (-1, "minus one"), (-2147483648, "min")])
    s.table("e", [("k", "int2"), ("m", "text")], [(1, "one"), (-1, "m1"), (0, "zero")], arrow=False)
    check(s, "SELECT d.n, count(*), sum(v) FROM f JOIN d ON f.k8 = d.k GROUP BY d.n",
          expect=lambda r: sorted(r) == [("min", 1, 64), ("minus one", 1, 16), ("one", 1, 2)])
    check(s, "SELECT e.m, count(*), sum(v) FROM f JOIN e ON f.k8 = e.k GROUP BY e.m")
    check(s, "SELECT e.m, d.n, count(*), sum(v) FROM f JOIN e ON f.k2 = e.k JOIN d ON f.k8 = d.k GROUP BY 1, 2")


def test_dimension_quals_and_arrow_dimensions(base):
    check(base, "SELECT d.name, count(*) FROM f JOIN d ON f.k = d.dk WHERE d.name LIKE 'o%' OR d.grp > 2 "
                "GROUP BY d.name")
    check(base, "SELECT d8.label, sum(f.a) FROM f JOIN d8 ON f.k8 = d8.ak WHERE length(d8.label) > 3 "
                "AND f.a > 0 GROUP BY d8.label")
    check(base, "SELECT d.grp, d8.label, count(*), sum(f.s) FROM f JOIN d ON f.k = d.dk "
                "JOIN d8 ON f.k8 = d8.ak WHERE d.name IS NOT NULL GROUP BY d.grp, d8.label")
    check(base, "SELECT count(*) FROM f JOIN d ON f.k = d.dk JOIN d2 ON f.g = d2.sk "
                "JOIN d8 ON f.k8 = d8.ak")
    check(base, "SELECT d.name, d2.sname, count(*) FROM f JOIN d ON f.k = d.dk JOIN d2 ON f.g = d2.sk "
                "WHERE f.x IS NOT NULL GROUP BY d.name, d2.sname")


def test_group_by_fact_expressions(base):
    check(base, "SELECT a % 3 AS m, count(*) FROM f GROUP BY 1")
    check(base, "SELECT (a / 100)::int8 AS m, count(*), sum(b) FROM f GROUP BY 1")
    check(base, "SELECT x::int8 AS xi, count(*) FROM f WHERE x BETWEEN -10::float8 AND 10::float8 GROUP BY 1")
    check(base, "SELECT r::float8 * 2::float8 AS rr, count(*) FROM f GROUP BY 1")
    check(base, "SELECT fl, g IS NULL AS gn, count(*) FROM f GROUP BY 1, 2")
    check(base, "SELECT s::int4 + 1 AS s1, big % 7 AS b7, count(*) FROM f GROUP BY 1, 2")
    check(base, "SELECT k + g AS kg, d.name, count(*) FROM f JOIN d ON f.k = d.dk GROUP BY 1, 2")
    check(base, "SELECT f.k, count(*) FROM f JOIN d ON f.k = d.dk GROUP BY f.k")
    check(base, "SELECT d.dk, f.g, count(*) FROM f JOIN d ON f.k = d.dk GROUP BY d.dk, f.g")


def test_rescan(base):
    # the pre-aggregation under a nested loop: rescanned once per outer row
    for q in ("SELECT v.i, s.c FROM (VALUES (1), (2), (3)) v(i) CROSS JOIN LATERAL "
              "(SELECT count(*) + v.i AS c, sum(a) AS sa FROM f) s",
              "SELECT v.i, (SELECT sum(f.a) + v.i FROM f JOIN d ON f.k = d.dk) FROM (VALUES (1), (2)) v(i)"):
        check(base, q, offload=True)


def test_not_offloaded_still_right(base):
    # outside the engine's domain: PostgreSQL's plan, same answers
    for q in ("SELECT sum(big) FROM f",                              # numeric sum
              "SELECT count(DISTINCT g) FROM f",
              "SELECT d.name, count(*) FROM f LEFT JOIN d ON f.k = d.dk GROUP BY d.name",
              "SELECT count(*) FROM f JOIN d ON f.k = d.dk AND f.g = d.grp",
              "SELECT count(*) FROM f JOIN d ON f.k + 1 = d.dk",
              "SELECT string_agg(d.name, ',' ORDER BY d.name) FROM f JOIN d ON f.k = d.dk",
              "SELECT count(*) FROM f WHERE random() < 2",
              "SELECT count(*) FROM f WHERE fl IS TRUE"):
        check(base, q, offload=False)


def test_arrow_encodings(mk):
    """Arrow types and encodings that map onto the engine's types: narrower
    and unsigned integers, half floats, Date64, timestamp units, dictionary
    encoded columns, compressed batches, no validity buffer."""
    n = 3000
    ids = list(range(n))
    vals = [None if i % 11 == 0 else (i * 37) % 200 - 100 for i in ids]
    tab = pa.table({
        "id": pa.array(ids, pa.int32()),
        "i8": pa.array(vals, pa.int8()),
        "u8": pa.array([None if v is None else v + 100 for v in vals], pa.uint8()),
        "u16": pa.array([None if v is None else (v + 100) * 300 for v in vals], pa.uint16()),
        "u32": pa.array([None if v is None else (v + 100) * 20000000 for v in vals], pa.uint32()),
        "h": pa.array([None if v is None else v / 4 for v in vals], pa.float16()),
        "d64": pa.array([None if v is None else (18000 + v) * 86400000 for v in vals], pa.date64()),
        "ts_s": pa.array([None if v is None else 1600000000 + v * 3661 for v in vals], pa.timestamp("s")),
        "ts_ms": pa.array([None if v is None else 1600000000000 + v * 3661001 for v in vals],
                          pa.timestamp("ms")),
        "ts_ns": pa.array([None if v is None else 1600000000000000000 + v * 3661001001000 for v in vals],
                          pa.timestamp("ns")),
        "nn": pa.array([i % 7 for i in ids], pa.int32()),             # no NULLs: no validity buffer
    })
    cols = [("id", "int4"), ("i8", "int2"), ("u8", "int2"), ("u16", "int4"), ("u32", "int8"),
            ("h", "float4"), ("d64", "date"), ("ts_s", "timestamp"), ("ts_ms", "timestamp"),
            ("ts_ns", "timestamp"), ("nn", "int4")]
    s = mk()
    s.table("f", cols, arrow_table=tab, batch_rows=700)
    s.table("d", [("k", "int4"), ("n", "text")], [(i, "n%d" % (i % 4)) for i in range(-100, 101)],
            arrow=False)
    aggs = ("count(*), sum(i8), sum(u8), sum(u16), min(u32), max(u32), sum(h), min(h), max(h), "
            "min(d64), max(d64), min(ts_s), max(ts_ms), min(ts_ns), max(ts_ns), sum(nn), count(h)")
    check(s, "SELECT " + aggs + " FROM f", expect=nonempty)
    check(s, "SELECT nn, " + aggs + " FROM f WHERE u16 > 9000 GROUP BY nn")
    check(s, "SELECT d.n, " + aggs + " FROM f JOIN d ON f.i8 = d.k GROUP BY d.n")
    check(s, "SELECT d64, count(*) FROM f WHERE d64 > date '2019-04-01' GROUP BY d64")
    check(s, "SELECT count(*) FROM f WHERE ts_ns > timestamp '2020-09-13 12:26:40' AND h < 10::float4")
    # dictionary-encoded integers and floats
    dtab = pa.table({
        "g": pa.array([i % 5 for i in ids], pa.int32()).dictionary_encode(),
        "v": pa.array(vals, pa.int32()).dictionary_encode(),
        "x": pa.array([None if v is None else v * 0.5 for v in vals], pa.float64()).dictionary_encode(),
        "w": pa.array([v for v in ids], pa.int32()),
    })
    s2 = mk("dict")
    s2.table("f", [("g", "int4"), ("v", "int4"), ("x", "float8"), ("w", "int4")], arrow_table=dtab,
             batch_rows=1000)
    check(s2, "SELECT count(*), sum(w) FROM f", expect=nonempty)   # plain columns only
    check(s2, "SELECT g, count(*), sum(v), max(x) FROM f WHERE v > 0 GROUP BY g", expect=nonempty)
    # compressed record batches
    for codec in ("lz4", "zstd"):
        s3 = mk(codec)
        s3.table("f", cols, arrow_table=tab, batch_rows=1000, compression=codec)
        check(s3, "SELECT nn, " + aggs + " FROM f WHERE i8 IS NOT NULL GROUP BY nn")


def test_error_precedence(mk):
    """Two rows fail with different errors: PostgreSQL works row by row
    (quals, group keys, then each aggregate's FILTER and argument) and
    reports the first failing row's error; the engine must report the same
    SQLSTATE.  Row 1 divides by zero in an aggregate argument, row 2
    overflows in a qual / another aggregate / a group key."""
    s = mk()
    s.table("f", [("a", "int4"), ("b", "int4"), ("k", "int4")],
            [(1, 0, 1), (2147483647, 1, 2)] + [(i, 1, 3) for i in range(3, 40)])
    s.table("d", [("k", "int4"), ("n", "text")], [(1, "one"), (2, "two"), (3, "three")], arrow=False)
    check(s, "SELECT sum(a / b) FROM f WHERE a + 1 > 0", expect="error:22012")
    check(s, "SELECT sum(a + 1), sum(a / b) FROM f", expect="error:22012")
    check(s, "SELECT sum(a / b), sum(a + 1) FROM f", expect="error:22012")
    check(s, "SELECT a + 1 AS g, sum(a / b) FROM f GROUP BY 1", expect="error:22012")
    check(s, "SELECT d.n, sum(f.a / f.b), max(f.a + 1) FROM f JOIN d ON f.k = d.k GROUP BY d.n",
          expect="error:22012")


def test_float_sum_overflow_after_an_earlier_error(mk):
    """A float sum overflows at row 400 of a vector; row 100 divides by
    zero in a later aggregate's FILTER.  PostgreSQL, row by row, stops at
    row 100.  The engine evaluates the vector aggregate by aggregate, then
    replays it row by row to find that row: the replay must start from the
    sums before the vector (a sum already holding the vector's rows used
    to overflow at once, reporting 22003 instead of 22012; differential
    test seed 11)."""
    s = mk()
    rows = [(i, 0.0 if i == 100 else 1.0, 1e36, 1.5 + i, i % 3) for i in range(1000)]
    s.table("f", [("id", "int4"), ("x", "float8"), ("r", "float4"), ("y", "float8"), ("g", "int4")], rows)
    check(s, "SELECT sum(r), count(*) FILTER (WHERE 1 / x > 0) FROM f", expect="error:22012")
    check(s, "SELECT g, avg(y), sum(r * 3::float4), count(*) FILTER (WHERE 1 / x > 0) FROM f GROUP BY g",
          expect="error:22012")
    # the overflow alone, and before the division (rows 0..99 only)
    check(s, "SELECT sum(r) FROM f", expect="error:22003")
    check(s, "SELECT sum(r * 1e3::float4), count(*) FILTER (WHERE 1 / x > 0) FROM f", expect="error:22003")


def test_simple_case(mk):
    """CASE x WHEN v1 THEN ... WHEN v2 THEN ... [ELSE ...] END (PostgreSQL's
    CaseTestExpr): x compared with each WHEN value in order (a NULL x
    matches nothing), over ints, text (equality under the column's
    collation), dates and numeric; in group keys, aggregate arguments and
    FILTERs, quals, nested in another simple CASE's result and value; an
    error in x arises at the first WHEN, as in PostgreSQL."""
    rows = [(i, None if i % 9 == 0 else i % 5, ["AIR", "MAIL", "SHIP", None][i % 4],
             D(2024, 1, 1) + datetime.timedelta(days=i % 4),
             None if i % 7 == 0 else decimal.Decimal(i % 300) / 100, i % 3 - 1)
            for i in range(5000)]
    s = mk()
    s.table("f", [("id", "int4"), ("k", "int4"), ("t", "text"), ("d", "date"), ("p", "numeric(6,2)"),
                  ("z", "int4")], rows, batch_rows=900)
    queries = [
        "SELECT CASE k WHEN 1 THEN 1.5::float8 WHEN 2 THEN 2.5 ELSE NULL END IS NULL, count(*), sum(id) "
        "FROM f GROUP BY 1",
        "SELECT CASE k WHEN 1 THEN 10 WHEN 2 THEN 20 WHEN 3 THEN 30 END AS c, count(*), sum(id) FROM f GROUP BY 1",
        "SELECT CASE t WHEN 'AIR' THEN 1 WHEN 'SHIP' THEN 2 ELSE 0 END AS c, count(*) FROM f GROUP BY 1",
        "SELECT sum(CASE k WHEN 0 THEN id ELSE -id END), count(*) FILTER (WHERE CASE t WHEN 'MAIL' THEN true END),"
        " max(CASE d WHEN date '2024-01-02' THEN id END) FROM f",
        "SELECT k, sum(CASE k WHEN 1 THEN p WHEN 2 THEN 0 ELSE p * 2 END), avg(CASE t WHEN 'AIR' THEN p END) "
        "FROM f GROUP BY k",
        "SELECT count(*), sum(id) FROM f WHERE CASE k % 3 WHEN 0 THEN t = 'AIR' WHEN 1 THEN id > 100 END",
        "SELECT CASE k WHEN 1 THEN CASE t WHEN 'AIR' THEN 1 ELSE 2 END ELSE 3 END AS c, count(*) "
        "FROM f GROUP BY 1",
        "SELECT sum(CASE CASE k WHEN 1 THEN 2 ELSE k END WHEN 2 THEN 100 ELSE 1 END) FROM f",
    ]
    check_everywhere(s, queries, workers=2, daemon=4, expect=nonempty)
    # the test value raises the error (division by zero where z = 0)
    check(s, "SELECT sum(CASE 10 / z WHEN 10 THEN 1 ELSE 0 END) FROM f", expect="error:22012")
    check(s, "SELECT sum(CASE 10 / (z + 2) WHEN 10 THEN 1 WHEN 5 THEN 2 ELSE 0 END) FROM f", expect=nonempty)


def test_money(mk):
    """money (int8 cents with its own operators: cash_mul_flt8 rounds,
    cash_div_int4 truncates, sum over money, comparisons): the engine has
    no money type, so every query over a money column keeps PostgreSQL's
    plan, heap fact table or not, and returns its answer."""
    s = mk()
    conn = s.conn
    for side in (s.w, s.h):
        conn.execute("CREATE TABLE %s.m AS SELECT i AS id, i %% 7 AS g, "
                     "(((i * 7919) %% 200001) - 100000)::numeric(12,2)::money AS m, "
                     "CASE WHEN i %% 11 = 0 THEN NULL ELSE (i * 0.37)::numeric(12,2)::money END AS n "
                     "FROM generate_series(1, 20000) i" % side)
        conn.execute("INSERT INTO %s.m VALUES (-1, 1, '92233720368547758.07'::money, "
                     "'92233720368547758.07'::money)" % side)
        conn.execute("ANALYZE %s.m" % side)
    conn.execute("SET pg_warp.heap_min_rows = 0")
    try:
        for q in ("SELECT g, min(m), max(m), count(n) FROM m WHERE id > 0 GROUP BY g",
                  "SELECT g, sum(m * 1.5::float8), sum(m / 3), sum(n * 2) FROM m WHERE id > 0 GROUP BY g",
                  "SELECT count(*), max(m - n) FROM m WHERE m > '$10.00'::money AND id > 0",
                  "SELECT sum(m), sum(n) FROM m"):
            check(s, q, offload=False)
            set_side(conn, s.w, True)
            assert "Warp" not in plan_of(conn, q), plan_of(conn, q)
    finally:
        conn.execute("RESET pg_warp.heap_min_rows")


def test_scan_qual_order(mk):
    """Quals of equal cost run in their written order in PostgreSQL: here the
    overflowing (a + 1) IS NULL runs before k = 5, on every row.  The
    engine does so; so must the arrow_fdw scan when the query is not
    offloaded (COUNT(DISTINCT) keeps PostgreSQL's plan)."""
    s = mk()
    s.table("f", [("a", "int4"), ("k", "int4")], [(1, 1), (2147483647, 2)] + [(i, 3) for i in range(40)])
    check(s, "SELECT count(*) FROM f WHERE (a + 1) IS NULL AND k = 5", expect="error:22003")
    check(s, "SELECT count(*), count(DISTINCT a) FROM f WHERE (a + 1) IS NULL AND k = 5",
          offload=False, expect="error:22003")
    # written the other way round: whatever PostgreSQL's own order gives
    check(s, "SELECT count(*) FROM f WHERE k = 5 AND (a + 1) IS NULL")


def test_distinct_argument_errors(mk):
    """PostgreSQL sorts the rows of DISTINCT aggregates, so every row's WHERE
    clause runs before any DISTINCT argument: with one row failing in each
    (an earlier row's division by zero in the argument, a later row's
    overflow in WHERE), the WHERE error wins.  The engine works row by row,
    so a DISTINCT argument that can fail keeps PostgreSQL's plan; arguments
    that cannot (columns, comparisons, CASE) are offloaded."""
    s = mk()
    rows = [(i, 1 + i % 3, i % 5) for i in range(50)]
    rows[3] = (3, 0, 1)                 # b = 0: division by zero in the argument
    rows[40] = (2147483647, 1, 2)       # a + 1 overflows in WHERE
    s.table("f", [("a", "int4"), ("b", "int4"), ("g", "int4")], rows, batch_rows=16)
    check(s, "SELECT g, count(DISTINCT a / b) FROM f WHERE a + 1 > 0 GROUP BY g",
          offload=False, expect="error:22003")
    check(s, "SELECT g, count(DISTINCT a / b) FROM f WHERE a < 100 GROUP BY g",
          offload=False, expect="error:22012")
    check(s, "SELECT g, count(DISTINCT a), count(DISTINCT CASE WHEN b > 1 THEN a END), "
             "max(b) FROM f WHERE a + 1 > 0 GROUP BY g", expect="error:22003")
    check(s, "SELECT g, count(DISTINCT a > b) FROM f WHERE a < 100 GROUP BY g", expect=nonempty)


def test_division_beside_distinct(mk):
    """PostgreSQL evaluates the aggregate arguments beside a DISTINCT
    aggregate in the order of its sort (by the group keys), the engine in
    scan order: a division that overflows on an early row (float8 / tiny)
    and divides by zero on a later one that sorts first raises the other
    error first, so such a query keeps PostgreSQL's plan (differential seed
    32); arguments that cannot divide stay offloaded."""
    s = mk()
    rows = [(i % 4, float(i + 1), 1.0 + i % 3, i % 7) for i in range(60)]
    rows[5] = (3, 1e308, 1e-300, 2)     # overflow, group 3, scanned first
    rows[50] = (0, 1.0, 0.0, 3)         # division by zero, group 0, sorted first
    s.table("f", [("g", "int4"), ("x", "float8"), ("y", "float8"), ("d", "int4")], rows,
            batch_rows=16)
    check(s, "SELECT g, count(DISTINCT d), max(x / y) FROM f GROUP BY g",
          offload=False, expect="error:22012")
    check(s, "SELECT g, count(DISTINCT d), max(x), min(y) FROM f GROUP BY g", expect=nonempty)


def test_different_errors_beside_distinct(mk):
    """The same as test_division_beside_distinct across two aggregates: an
    int4 product that overflows (22003) on a row scanned first, a timestamp
    minus an interval that leaves the calendar (22008) on a row that sorts
    first.  PostgreSQL raises the latter; such a query keeps its plan.  One
    kind of error only (two overflows) stays offloaded."""
    s = mk()
    t0 = datetime.datetime(2020, 1, 1)
    rows = [(i % 4, 1000 + i, 3, t0 + datetime.timedelta(days=i), i % 7) for i in range(60)]
    rows[5] = (3, 2000000000, 2, t0, 2)                          # 22003, group 3, scanned first
    rows[50] = (0, 7, 3, datetime.datetime(1, 1, 1), 3)          # 22008, group 0, sorted first
    s.table("f", [("g", "int4"), ("a", "int4"), ("b", "int4"), ("t", "timestamp"), ("d", "int4")],
            rows, batch_rows=16)
    check(s, "SELECT g, count(DISTINCT d), max(a * b), min(t - interval '4800 years') "
             "FROM f GROUP BY g", offload=False, expect="error:22008")
    check(s, "SELECT g, count(DISTINCT d), max(a * b), min(a + b) FROM f GROUP BY g",
          expect="error:22003")
    check(s, "SELECT g, count(DISTINCT d), max(a - b), min(t - interval '1 year') FROM f "
             "WHERE g <> 0 GROUP BY g", offload=False, expect=nonempty)


def test_join_key_ranges(mk):
    """Join tables over dense and sparse key ranges (direct-address and
    hashed), probed with keys below, above and far outside the range,
    including the int8 extremes (key - min must not wrap into the range)."""
    lo8, hi8 = -(1 << 63), (1 << 63) - 1
    probes = [lo8, hi8, lo8 + 1, hi8 - 1, -4294967296, 4294967296, 4294967295, -4294967297,
              -3, -2, -1, 0, 1, 2, 3, 4, 1000, 65536, 65537, -65536, 2147483647, -2147483648,
              2147483648, -2147483649, None]
    s = mk()
    s.table("f", [("id", "int4"), ("k", "int8"), ("k4", "int4")],
            [(i, p, None if p is None or not -2147483648 <= p <= 2147483647 else p)
             for i, p in enumerate(probes * 3)])
    s.table("dense", [("k", "int4"), ("n", "text")], [(-2, "m2"), (-1, "m1"), (0, "z"), (1, "p1"), (2, "p2"),
                                                       (2, "p2b")], arrow=False)
    s.table("single", [("k", "int8"), ("n", "text")], [(1, "one")])
    s.table("ext", [("k", "int8"), ("n", "text")], [(lo8, "lo"), (hi8, "hi"), (0, "zero")])
    s.table("low", [("k", "int8"), ("n", "text")], [(lo8, "lo"), (lo8 + 1, "lo1"), (lo8 + 2, "lo2")],
            arrow=False)
    s.table("high", [("k", "int8"), ("n", "text")], [(hi8, "hi"), (hi8 - 1, "hi1"), (hi8 - 3, "hi3")])
    s.table("sparse", [("k", "int8"), ("n", "text")],
            [(i * 1000003, "s%d" % i) for i in range(-20, 20)] + [(4294967296, "2^32"), (-4294967296, "-2^32")],
            arrow=False)
    s.table("i2", [("k", "int2"), ("n", "text")], [(-32768, "min"), (32767, "max"), (-1, "m1"), (0, "z")])
    s.table("nulls", [("k", "int4"), ("n", "text")], [(None, "a"), (None, "b")], arrow=False)
    for dim in ("dense", "single", "ext", "low", "high", "sparse", "i2", "nulls"):
        for key in ("k", "k4"):
            check(s, "SELECT %s.n, count(*), min(f.id), max(f.id) FROM f JOIN %s ON f.%s = %s.k GROUP BY 1"
                  % (dim, dim, key, dim))
    check(s, "SELECT dense.n, ext.n, count(*) FROM f JOIN dense ON f.k4 = dense.k JOIN ext ON f.k = ext.k "
             "GROUP BY 1, 2")
    check(s, "SELECT low.n, high.n, count(*) FROM f JOIN low ON f.k = low.k JOIN high ON f.k4 = high.k "
             "GROUP BY 1, 2", expect=lambda r: r == [])


def test_three_dimensions(mk):
    """Three dimensions with duplicate keys and different selectivities (the
    engine probes the most selective first), every payload grouped."""
    s = mk()
    rng_rows = []
    for i in range(3000):
        rng_rows.append((i, i % 50, (i * 7) % 30 if i % 13 else None, (i * 11) % 20, i % 9 - 4,
                         (i % 17) * 0.5))
    s.table("f", [("id", "int4"), ("a", "int4"), ("b", "int8"), ("c", "int2"), ("v", "int4"),
                  ("x", "float8")], rng_rows, batch_rows=1024)
    s.table("da", [("k", "int4"), ("an", "text"), ("ag", "int4")],
            [(k, "a%d" % (k % 7), k % 3) for k in range(50)] + [(3, "a3dup", 0), (4, "a4dup", None)],
            arrow=False)
    s.table("db", [("k", "int8"), ("bn", "text")],
            [(k, "b%d" % (k % 4)) for k in range(0, 30, 2)] + [(2, "b2dup"), (2, "b2dup2")])
    s.table("dc", [("k", "int2"), ("cn", "text")], [(k, None if k == 5 else "c%d" % k) for k in range(20)],
            arrow=False)
    joins = "FROM f JOIN da ON f.a = da.k JOIN db ON f.b = db.k JOIN dc ON f.c = dc.k"
    check(s, "SELECT da.an, db.bn, dc.cn, count(*), sum(f.v), avg(f.x), min(f.id) %s GROUP BY 1, 2, 3" % joins,
          expect=nonempty)
    check(s, "SELECT da.ag, dc.cn, count(*), sum(f.v) %s WHERE dc.cn = 'c4' GROUP BY 1, 2" % joins, expect=nonempty)
    check(s, "SELECT db.bn, count(*), max(f.x) %s WHERE da.an = 'a3dup' AND f.v > 0 GROUP BY 1" % joins)
    check(s, "SELECT count(*), sum(f.v), sum(f.x) %s WHERE da.ag = 1 AND db.bn <> 'b0'" % joins,
          expect=nonempty)
    check(s, "SELECT f.v, dc.cn, count(*) %s GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2 NULLS FIRST LIMIT 7" % joins,
          ordered=True)


def test_columns_used_on_some_rows(mk):
    """Columns read only for some rows: in a CASE branch, a FILTER, the
    right side of AND / OR, a COALESCE fallback, or only by rows that
    survive quals and joins; NULLs in every column, several batches."""
    s = mk()
    rows = []
    for i in range(3000):
        rows.append((i, None if i % 11 == 0 else i % 200, None if i % 5 == 0 else (i * 7) % 100 - 50,
                     None if i % 3 == 1 else (i * 13) % 60 - 30, None if i % 4 == 2 else i * 0.25,
                     None if i % 6 == 5 else D(2000, 1, 1) + datetime.timedelta(days=i % 400)))
    s.table("f", [("id", "int4"), ("a", "int4"), ("b", "int4"), ("c", "int2"), ("x", "float8"),
                  ("dt", "date")], rows, batch_rows=700)
    s.table("d", [("k", "int4"), ("n", "text")], [(k, "n%d" % (k % 6)) for k in range(0, 200, 3)], arrow=False)
    for q in ("SELECT sum(CASE WHEN id % 3 = 0 THEN b ELSE c END), count(*) FROM f WHERE a > 10",
              "SELECT sum(CASE WHEN a IS NULL THEN c WHEN b > 0 THEN b END), max(CASE WHEN c < 0 THEN dt END) "
              "FROM f WHERE id % 2 = 0",
              "SELECT sum(b) FILTER (WHERE c > 5), max(x) FILTER (WHERE id % 7 = 0), "
              "min(dt) FILTER (WHERE b IS NULL) FROM f WHERE a % 2 = 0",
              "SELECT count(*), sum(id) FROM f WHERE a > 100 AND (b > 5 OR c < 0)",
              "SELECT count(*), sum(id) FROM f WHERE a < 20 OR (b > 40 AND x > 100::float8)",
              "SELECT COALESCE(b, c, a) AS k, count(*), sum(x) FROM f WHERE id > 500 GROUP BY 1",
              "SELECT d.n, sum(f.b), max(f.dt), avg(f.x) FROM f JOIN d ON f.a = d.k WHERE f.c IS NOT NULL "
              "GROUP BY d.n",
              "SELECT d.n, c, count(*) FROM f JOIN d ON f.a = d.k WHERE f.id > 2000 GROUP BY 1, 2",
              "SELECT count(*) FROM f WHERE CASE WHEN a > 150 THEN b > 0 ELSE x < 10::float8 END",
              "SELECT NULLIF(c, 0::int2) AS k, sum(b) FILTER (WHERE x IS NOT NULL) FROM f WHERE a IS NOT NULL "
              "GROUP BY 1"):
        check(s, q, expect=nonempty)


def _fact_rows(n, seed=0):
    out = []
    for i in range(n):
        j = (i * 7919 + seed) % 1000
        out.append((i, j % 13 if j % 17 else None, (j % 101) - 50, None if j % 9 == 0 else j * 0.5))
    return out


SMALL_FACT = [("id", "int4"), ("k", "int4"), ("v", "int4"), ("x", "float8")]


def test_multiple_files(mk):
    """A fact table over several files (`files`, `dir`), one of them empty,
    with different batch sizes."""
    s = mk()
    parts = [_fact_rows(1500, 1), [], _fact_rows(700, 2), _fact_rows(2100, 3)]
    for n, rows in enumerate(parts):
        s.table("p%d" % n, SMALL_FACT, rows, batch_rows=[500, None, 333, 1024][n])
    allrows = [r for p in parts for r in p]
    s.table("f", SMALL_FACT, allrows, arrow=False)     # the oracle's copy
    s.conn.execute("DROP TABLE %s.f" % s.w)
    files = ",".join(s.files["p%d" % n] for n in range(4))
    ddl = ", ".join("%s %s" % c for c in SMALL_FACT)
    s.conn.execute("CREATE FOREIGN TABLE %s.f (%s) SERVER arrow_fdw OPTIONS (files '%s')" % (s.w, ddl, files))
    s.conn.execute("ANALYZE %s.f" % s.w)
    s.table("d", [("k", "int4"), ("n", "text")], [(k, "n%d" % (k % 4)) for k in range(13)], arrow=False)
    for q in ("SELECT count(*), sum(v), avg(x), min(id), max(id) FROM f",
              "SELECT k, count(*), sum(v), max(x) FROM f WHERE v > -20 GROUP BY k",
              "SELECT d.n, count(*), sum(f.v), sum(f.x) FROM f JOIN d ON f.k = d.k GROUP BY d.n"):
        check(s, q, expect=nonempty)
    # the same files as a directory
    s2 = mk("dir")
    os.makedirs(os.path.join(s2.dir, "parts"))
    os.chmod(os.path.join(s2.dir, "parts"), 0o755)
    for n in range(4):
        shutil.copy(s.files["p%d" % n], os.path.join(s2.dir, "parts", "part%d.arrow" % n))
    s2.table("f", SMALL_FACT, allrows, arrow=False)
    s2.conn.execute("DROP TABLE %s.f" % s2.w)
    s2.conn.execute("CREATE FOREIGN TABLE %s.f (%s) SERVER arrow_fdw OPTIONS (dir '%s')"
                    % (s2.w, ddl, os.path.join(s2.dir, "parts")))
    s2.conn.execute("ANALYZE %s.f" % s2.w)
    check(s2, "SELECT k, count(*), sum(v), avg(x) FROM f GROUP BY k", expect=nonempty)


def test_writable_table_visibility(mk):
    """A writable arrow_fdw fact table: rows of a rolled-back INSERT are
    invisible, the transaction's own uncommitted rows are visible to it."""
    s = mk()
    wdir = os.path.join(s.dir, "w")
    os.makedirs(wdir)
    os.chmod(wdir, 0o777)
    ddl = ", ".join("%s %s" % c for c in SMALL_FACT)
    s.table("src1", SMALL_FACT, _fact_rows(1200, 5), arrow=False)
    s.table("src2", SMALL_FACT, _fact_rows(900, 6), arrow=False)
    s.table("d", [("k", "int4"), ("n", "text")], [(k, "n%d" % (k % 3)) for k in range(13)], arrow=False)
    s.conn.execute("CREATE FOREIGN TABLE %s.f (%s) SERVER arrow_fdw OPTIONS (file '%s', writable 'true')"
                   % (s.w, ddl, os.path.join(wdir, "f.arrow")))
    s.conn.execute("CREATE TABLE %s.f (%s)" % (s.h, ddl))
    for t in (s.w, s.h):
        s.conn.execute("INSERT INTO %s.f SELECT * FROM %s.src1" % (t, s.h))
    s.conn.execute("ANALYZE %s.f" % s.w)
    queries = ("SELECT count(*), sum(v), avg(x), max(id) FROM f",
               "SELECT d.n, count(*), sum(f.v) FROM f JOIN d ON f.k = d.k GROUP BY d.n")
    for q in queries:
        check(s, q, expect=nonempty)
    # rolled back: invisible
    s.conn.execute("BEGIN")
    s.conn.execute("INSERT INTO %s.f SELECT * FROM %s.src2" % (s.w, s.h))
    s.conn.execute("ROLLBACK")
    for q in queries:
        check(s, q, expect=nonempty)
    # our own uncommitted rows: visible to us
    s.conn.execute("BEGIN")
    try:
        for t in (s.w, s.h):
            s.conn.execute("INSERT INTO %s.f SELECT * FROM %s.src2 WHERE id %% 2 = 0" % (t, s.h))
        for q in queries:
            check(s, q, expect=nonempty)
    finally:
        s.conn.execute("ROLLBACK")
    for q in queries:
        check(s, q, expect=nonempty)


def test_many_groups(mk):
    """Tens of thousands of groups (group table growth across batches),
    on fact keys and on a large dimension's payload."""
    s = mk()
    rows = [(i, (i * 7) % 40000, i % 3, (i * 13) % 1000 - 500, (i % 97) * 0.5) for i in range(60000)]
    s.table("f", [("id", "int4"), ("g", "int4"), ("h", "int2"), ("v", "int4"), ("x", "float8")], rows,
            batch_rows=7000)
    s.table("d", [("k", "int4"), ("n", "text")], [(k, "name%05d" % (k // 2)) for k in range(40000)],
            arrow=False)
    check(s, "SELECT g, count(*), sum(v), max(x) FROM f GROUP BY g", expect=lambda r: len(r) == 40000)
    check(s, "SELECT g, h, count(*), min(v) FROM f WHERE v > 0 GROUP BY g, h")
    check(s, "SELECT d.n, f.h, count(*), sum(f.v), avg(f.x) FROM f JOIN d ON f.g = d.k GROUP BY d.n, f.h",
          expect=lambda r: len(r) > 10000)


def test_self_join_and_partitioned_dimension(mk):
    s = mk()
    rows = _fact_rows(2000, 7)
    s.table("f", SMALL_FACT, rows, batch_rows=600)
    s.table("f2", SMALL_FACT, rows[:300])
    s.conn.execute("CREATE TABLE %s.dp (k int4, n text) PARTITION BY RANGE (k)" % s.w)
    s.conn.execute("CREATE TABLE %s.dp_lo PARTITION OF %s.dp FOR VALUES FROM (MINVALUE) TO (6)" % (s.w, s.w))
    s.conn.execute("CREATE TABLE %s.dp_hi PARTITION OF %s.dp FOR VALUES FROM (6) TO (MAXVALUE)" % (s.w, s.w))
    s.conn.execute("CREATE TABLE %s.dp (k int4, n text)" % s.h)
    for t in (s.w, s.h):
        s.conn.execute("INSERT INTO %s.dp SELECT g, 'p' || (g %% 5) FROM generate_series(0, 12) g" % t)
        s.conn.execute("ANALYZE %s.dp" % t)
    check(s, "SELECT dp.n, count(*), sum(f.v) FROM f JOIN dp ON f.k = dp.k GROUP BY dp.n", expect=nonempty)
    check(s, "SELECT dp.n, count(*) FROM f JOIN dp ON f.k = dp.k WHERE dp.k > 3 GROUP BY dp.n", expect=nonempty)
    # an Arrow table as the dimension of another (the larger is the fact table)
    check(s, "SELECT f2.k, count(*), sum(f.v) FROM f JOIN f2 ON f.id = f2.id GROUP BY f2.k", expect=nonempty)
    check(s, "SELECT count(*), sum(f.x), sum(f2.v) FROM f JOIN f2 ON f.v = f2.id", offload=False)


def test_aggregate_expressions(base):
    """Repeated aggregates, expressions over aggregates and over group keys,
    aggregates of group keys."""
    check(base, "SELECT g, sum(a), sum(a) * 2, sum(a) FILTER (WHERE b > 2), count(*), count(*) + 1, "
                "sum(g), max(g) FROM f GROUP BY g HAVING sum(a) IS NOT NULL OR count(*) > 0")
    check(base, "SELECT sum(a) / count(*), avg(a) - min(a), max(x) - min(x) FROM f WHERE x < 100::float8")
    check(base, "SELECT d.name, sum(f.s) + count(*) AS total, sum(f.s) FROM f JOIN d ON f.k = d.dk "
                "GROUP BY d.name ORDER BY 2 DESC, 1 NULLS LAST", ordered=True)
    check(base, "SELECT count(*), count(1), count(k), count(fl), count(dt), count(x) FROM f")


def test_explain_analyze(base):
    """EXPLAIN ANALYZE runs the engine too (counters, timings)."""
    conn = base.conn
    set_side(conn, base.w, True)
    for q in ("SELECT g, count(*), sum(a) FROM f GROUP BY g",
              "SELECT d.name, count(*) FROM f JOIN d ON f.k = d.dk WHERE f.b > 1 GROUP BY d.name"):
        res = run(conn, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + q)
        assert res[0] == "ok", (q, res)
        text = "\n".join(r[0] for r in res[1])
        assert "WarpPreAgg" in text and "Fact Rows" in text, text


@pytest.mark.parametrize("threads", [1, 3])
def test_parallel_plans(mk, threads):
    """With parallel query allowed and pg_warp.cpu_threads = 1, the
    pre-aggregation runs under a Gather (each participant scanning part of
    the batches, the dimensions built once by the leader and shared); with
    more threads it is a serial plan whose engine runs on that many threads
    of the backend.  Results must not change."""
    s = mk()
    rows = [(i, (i * 31) % 200 if i % 19 else None, (i * 17) % 2000 - 1000, None if i % 7 == 0 else i * 0.125,
             i % 5 == 0, (i * 7) % 200) for i in range(50000)]
    s.table("f", [("id", "int4"), ("k", "int4"), ("v", "int4"), ("x", "float8"), ("b", "bool"), ("k2", "int8")],
            rows, batch_rows=2000)
    s.table("d", [("k", "int4"), ("n", "text")], [(k, "n%d" % (k % 9)) for k in range(200)] + [(7, "dup7")],
            arrow=False)
    s.table("da", [("k", "int4"), ("m", "text")], [(k, "m%d" % (k % 4)) for k in range(0, 200, 2)])
    conn = s.conn
    settings = ["max_parallel_workers_per_gather = 2", "parallel_setup_cost = 0", "parallel_tuple_cost = 0",
                "min_parallel_table_scan_size = 0", "parallel_leader_participation = on",
                "pg_warp.cpu_threads = %d" % threads]
    try:
        for st in settings:
            conn.execute("SET " + st)
        queries = ("SELECT count(*), sum(v), avg(x), min(id), max(id) FROM f",
                   "SELECT k, count(*), sum(v), max(x) FROM f WHERE v > -500 GROUP BY k",
                   "SELECT d.n, count(*), sum(f.v), avg(f.x) FROM f JOIN d ON f.k = d.k GROUP BY d.n",
                   "SELECT d.n, da.m, count(*), sum(f.v) FROM f JOIN d ON f.k = d.k JOIN da ON f.k2 = da.k "
                   "WHERE f.b GROUP BY 1, 2",
                   "SELECT b, count(*) FILTER (WHERE x > 100::float8), sum(v) FILTER (WHERE k IS NULL) FROM f "
                   "GROUP BY b")
        for q in queries:
            check(s, q, expect=nonempty)
        set_side(conn, s.w, True)
        # (under the session's inflated per-row costs Gather's tuples are dear)
        conn.execute("SET cpu_tuple_cost = 0.01")
        conn.execute("SET cpu_operator_cost = 0.0025")
        plans = [plan_of(conn, q) for q in queries]
        conn.execute("SET cpu_tuple_cost = 10000")
        conn.execute("SET cpu_operator_cost = 2500")
        if threads == 1:
            assert any("Parallel Custom Scan (WarpPreAgg)" in p for p in plans), plans
        else:
            assert all("Parallel Custom Scan (WarpPreAgg)" not in p for p in plans) and \
                any("Custom Scan (WarpPreAgg)" in p for p in plans), plans
        check(s, "SELECT count(*) FROM f WHERE v / (id % 1000) > 0", expect="error:22012")
    finally:
        for st in settings:
            conn.execute("RESET " + st.split(" =")[0])
        conn.execute("SET max_parallel_workers_per_gather = 0")


def test_big_batches_in_parts(mk):
    """Record batches over 1 MB are read by the CPU driver in parts of their
    rows (arrow_load_column_range): serial and parallel, with NULLs at part
    boundaries, booleans, dictionaries, strings and a compressed file (read
    whole).
    A value the engine must refuse reports its row within the batch, not
    within the part."""
    n = 300000
    rows_k = [None if i % 9 == 4 or 131000 <= i < 131100 else (i * 7) % 300 for i in range(n)]
    tab = pa.table({
        "id": pa.array(range(n), pa.int32()),
        "k": pa.array(rows_k, pa.int32()),
        "v": pa.array([(i * 13) % 1000 - 500 for i in range(n)], pa.int64()),
        "b": pa.array([None if i % 5 == 0 else i % 3 == 0 for i in range(n)], pa.bool_()),
        "g": pa.array([(i * 5) % 6 - 2 for i in range(n)], pa.int32()).dictionary_encode(),
        "x": pa.array([None if i % 17 == 0 else i * 0.25 for i in range(n)], pa.float64()),
        "t": pa.array([None if i % 13 == 2 else "w%d" % ((i * 11) % 40) for i in range(n)], pa.string()),
    })
    cols = [("id", "int4"), ("k", "int4"), ("v", "int8"), ("b", "bool"), ("g", "int4"), ("x", "float8"),
            ("t", "text")]
    dim = [(k, "n%d" % (k % 7)) for k in range(0, 300, 3)]
    queries = ("SELECT count(*), count(k), sum(v), min(id), max(id), avg(x), count(b) FROM f",
               "SELECT g, count(*), sum(v), count(x) FROM f WHERE b GROUP BY g",
               "SELECT d.n, count(*), sum(f.v), max(f.id) FROM f JOIN d ON f.k = d.k "
               "WHERE f.v > -400 GROUP BY d.n",
               "SELECT count(*) FROM f WHERE k IS NULL AND id BETWEEN 130000 AND 132000",
               # a string column read by parts (its offsets rebased per part)
               "SELECT t, count(*), sum(v) FROM f WHERE t LIKE 'w1%' OR t = 'w7' GROUP BY t")
    conn = None
    for codec in (None, "lz4"):
        s = mk(codec or "")
        s.table("f", cols, arrow_table=tab, batch_rows=n, compression=codec)
        s.table("d", [("k", "int4"), ("n", "text")], dim, arrow=False)
        conn = s.conn
        for q in queries:
            check(s, q, expect=nonempty)
        settings = ["max_parallel_workers_per_gather = 2", "parallel_setup_cost = 0",
                    "parallel_tuple_cost = 0", "min_parallel_table_scan_size = 0"]
        try:
            for st in settings:
                conn.execute("SET " + st)
            for q in queries:
                check(s, q, expect=nonempty)
            check(s, "SELECT count(*) FROM f WHERE v / (id - 250000) > 0", expect="error:22012")
        finally:
            for st in settings:
                conn.execute("RESET " + st.split(" =")[0])
            conn.execute("SET max_parallel_workers_per_gather = 0")

    # a date beyond PostgreSQL's range at batch row 250003: arrow_fdw and the
    # engine both refuse it, the engine naming the row of the batch
    days = [i % 20000 for i in range(n)]
    days[250003] = 2**31 - 1
    s = mk("baddate")
    path = os.path.join(s.dir, "bad.arrow")
    with ipc.new_file(path, pa.schema([("id", pa.int32()), ("dt", pa.date32())])) as w:
        w.write_batch(pa.record_batch([pa.array(range(n), pa.int32()), pa.array(days, pa.date32())],
                                      names=["id", "dt"]))
    os.chmod(path, 0o644)
    conn.execute("CREATE FOREIGN TABLE %s.bad (id int4, dt date) SERVER arrow_fdw OPTIONS (file '%s')"
                 % (s.w, path))
    sql = "SELECT count(*), max(dt) FROM %s.bad WHERE id > 0" % s.w
    conn.execute("SET pg_warp.enabled = on")
    plan = plan_of(conn, sql)
    assert "WarpPreAgg" in plan, plan
    for enabled in ("on", "off"):
        conn.execute("SET pg_warp.enabled = " + enabled)
        try:
            conn.execute(sql).fetchall()
            raise AssertionError("pg_warp.enabled=%s: no error" % enabled)
        except psycopg.Error as e:
            assert e.sqlstate == "22008", (enabled, e.sqlstate, str(e))
            if enabled == "on":
                assert "record batch 0, row 250003." in (e.diag.message_detail or ""), str(e)
        finally:
            conn.execute("RESET pg_warp.enabled")


def test_threads_cancel(mk):
    """A statement timeout stops the CPU driver's threads (WarpPreAgg,
    WarpScan, a Top-N): the query fails
    with 57014, and the next query in the session runs normally (the threads
    were joined and their memory freed)."""
    n = 2_000_000
    tab = pa.table({"a": pa.array([i % 1000 for i in range(n)], pa.int32()),
                    "b": pa.array([(i * 7) % 5000 for i in range(n)], pa.int32())})
    s = mk()
    s.table("f", [("a", "int4"), ("b", "int4")], arrow_table=tab, batch_rows=n)
    conn = s.conn
    # WarpPreAgg; WarpScan's rows; WarpScan's Top-N (the whole scan before
    # the first row)
    for sql, node, ordered in (
            ("SELECT a, count(*), sum(b) FROM f WHERE a * 3 + b > 10 GROUP BY a", "WarpPreAgg", False),
            ("SELECT a, b FROM f WHERE a * 3 + b > 10 AND b > 4990", "WarpScan", False),
            ("SELECT a, b FROM f WHERE a * 3 + b > 10 ORDER BY b DESC, a LIMIT 5", "Top-N", True)):
        set_side(conn, s.w, True)
        conn.execute("SET pg_warp.cpu_threads = 2")
        try:
            assert node in plan_of(conn, sql), plan_of(conn, sql)
            want = check(s, sql, ordered=ordered, expect=nonempty, node=node)
            set_side(conn, s.w, True)
            conn.execute("SET pg_warp.cpu_threads = 2")
            conn.execute("SET statement_timeout = 1")
            try:
                conn.execute(sql).fetchall()
                cancelled = None
            except psycopg.Error as e:
                cancelled = e.sqlstate
            conn.execute("RESET statement_timeout")
            assert cancelled == "57014", (sql, cancelled)
            got = run(conn, sql)
            assert got[0] == "ok" and same_result(got, want, ordered) is None, (got[:2], want[:2])
        finally:
            conn.execute("RESET statement_timeout")
            conn.execute("RESET pg_warp.cpu_threads")


def test_numeric_aggregates(mk):
    """sum, avg, min, max and count of numeric(p <= 18, s) columns: the
    engine sums the unscaled values exactly in 128 bits and hands
    PostgreSQL its own numeric_avg_serialize state.  Every display scale
    modulo 4 (the base-10000 digit boundary), NULL-only and empty groups,
    18-digit values whose sums pass 2^63, joins, FILTER and HAVING; wider
    numerics and unconstrained numeric stay PostgreSQL's."""
    from decimal import Decimal as Dec
    n = 3000
    big = 999999999999999999
    rows = []
    for i in range(n):
        g = i % 9
        rows.append((
            i, g, i % 50,
            None if i % 11 == 0 or g == 8 else Dec(((i * 7919) % 200001) - 100000) / 100,
            None if i % 13 == 1 else Dec(((i * 104729) % 2000001) - 1000000) / 10 ** 5,
            None if i % 7 == 3 else Dec((big if i % 2 else -big + 7) if i % 5 == 0 else i * 37 - 50000),
            Dec((i * 31) % 1000 - 500) / 10,
            None if g == 8 else Dec((i * 13) % 10000) / 1000,
            Dec(((i * 17) % 99999) - 49999) / 10 ** 4,
        ))
    # 20 rows of 18 nines in one group: the sum needs more than 64 bits
    for j in range(20):
        rows.append((n + j, 0, 1, Dec("1.00"), Dec("0.00001"), Dec(big), Dec("0.5"), Dec("1.000"),
                     Dec("-4.9999")))
    cols = [("id", "int4"), ("g", "int4"), ("k", "int4"), ("a2", "numeric(12,2)"),
            ("a5", "numeric(15,5)"), ("a0", "numeric(18,0)"), ("a1", "numeric(9,1)"),
            ("a3", "numeric(10,3)"), ("a4", "numeric(16,4)")]
    s = mk()
    s.table("f", cols, rows, batch_rows=700)
    s.table("d", [("k", "int4"), ("name", "text")], [(k, "n%d" % (k % 6)) for k in range(0, 50, 2)],
            arrow=False)
    aggs = ("sum(a2), avg(a2), min(a2), max(a2), count(a2), sum(a5), avg(a5), min(a5), max(a5), "
            "sum(a0), avg(a0), min(a0), max(a0), sum(a1), avg(a1), sum(a3), avg(a3), max(a3), "
            "sum(a4), avg(a4), min(a4)")
    check(s, "SELECT " + aggs + " FROM f", expect=nonempty)
    check(s, "SELECT g, " + aggs + " FROM f GROUP BY g",
          expect=lambda r: any(row[0] == 8 and row[1] is None and row[5] == 0 for row in r))
    check(s, "SELECT g, " + aggs + " FROM f WHERE id < 0 GROUP BY g", expect=lambda r: r == [])
    check(s, "SELECT " + aggs + " FROM f WHERE id < 0", expect=nonempty)
    check(s, "SELECT d.name, sum(f.a2), avg(f.a0), max(f.a5) FROM f JOIN d ON f.k = d.k GROUP BY d.name",
          expect=nonempty)
    check(s, "SELECT g, sum(a2) FILTER (WHERE k > 10), avg(a4) FILTER (WHERE id % 3 = 0) FROM f GROUP BY g "
             "HAVING sum(a0) > 0", expect=nonempty)
    check(s, "SELECT g, sum(a0) FROM f GROUP BY g ORDER BY 2 DESC LIMIT 3", ordered=True, expect=nonempty)
    # comparisons of a column with a constant, decided on the unscaled
    # integer: exact constants, constants with more decimals than the
    # column (never equal; < and > by the floor), either side
    for cond in ("a2 > 10", "a2 >= 10.5", "a2 < -100.25", "a2 = 1.00", "a2 = 1.001",
                 "a2 <> 1.001", "a2 <> 1", "10.005 < a2", "-0.001 >= a2", "a2 <= 0",
                 "a5 > 0.000015", "a5 = 0.00001", "a0 > 999999999999999998",
                 "a0 < -999999999999999990", "a1 BETWEEN -10.04 AND 10.06", "a4 <> -4.9999",
                 "a3 >= 9.9995", "a2 > 5 AND a0 < 0"):
        check(s, "SELECT g, count(*), sum(a2), max(a0) FROM f WHERE %s GROUP BY g" % cond)
    check(s, "SELECT count(*) FROM f WHERE a2 = 1.00", expect=lambda r: r[0][0] >= 20)
    check(s, "SELECT count(*) FROM f WHERE a2 = 1.001", expect=lambda r: r[0][0] == 0)
    # numeric arithmetic, comparisons between numeric columns and numeric
    # group keys: test_numeric_arithmetic; constants beyond 18 digits are
    # 128-bit; NaN stays PostgreSQL's
    check(s, "SELECT count(*) FROM f WHERE a0 > 1e20 OR a0 < -123456789012345678901234.5")
    # the constant first: its comparison mirrored once, not twice
    check(s, "SELECT count(*), sum(a2) FROM f WHERE 123456789012345678901.25 > a0 AND "
             "-99999999999999999999 < a2", expect=lambda r: r[0][0] > 0)
    check(s, "SELECT count(*) FROM f WHERE 123456789012345678901.25 < a0", expect=lambda r: r[0][0] == 0)
    check(s, "SELECT count(*) FROM f WHERE a2 < 'NaN'", offload=False)
    # no declared precision: PostgreSQL's plan (wider columns:
    # test_numeric_wide_columns)
    s2 = mk("wide")
    s2.table("f", [("g", "int4"), ("w", "numeric(30,4)")],
             [(i % 3, Dec(10 ** 24 + i) / 10 ** 4) for i in range(100)])
    conn = s2.conn
    set_side(conn, s2.w, True)
    conn.execute("CREATE FOREIGN TABLE fu (g int4, w numeric) SERVER arrow_fdw OPTIONS (file '%s')"
                 % s2.files["f"])
    plan = plan_of(conn, "SELECT g, sum(w) FROM fu GROUP BY g")
    assert "WarpPreAgg" not in plan, plan


def test_numeric_arithmetic(mk):
    """numeric + - * and unary minus in 128-bit fixed point, integers cast
    to numeric, comparisons between numeric expressions, numeric group
    keys: PostgreSQL's display scales (sum of the scales for *, the larger
    for + and -), exact sums of products that pass 2^127 (192-bit sums),
    min/max of products, NULLs, FILTER, joins; equal to the heap, on 1 and
    4 threads.  Expressions that could pass 38 digits (from the declared
    precisions), division and rounding stay PostgreSQL's."""
    from decimal import Decimal as Dec
    big = 999999999999999999
    rows = []
    for i in range(4000):
        g = i % 7
        rows.append((
            i, g, i % 40,
            None if i % 11 == 0 else Dec(((i * 7919) % 2000001) - 1000000) / 100,
            None if i % 13 == 1 else Dec((i * 31) % 10000) / 100,
            None if i % 9 == 4 else Dec(((i * 104729) % 2000001) - 1000000) / 10 ** 5,
            Dec((big if i % 2 else -big) if g == 3 else (i * 37 - 50000)),
            None if i % 17 == 5 else Dec((i * 13) % 1999 - 999) / 10,
            (i * 7) % 1000 - 500,
            None if i % 19 == 0 else (i * 7919) % 2 ** 40 - 2 ** 39,
        ))
    # 300 rows of (10^18 - 1)^2 in group 6: the sum of a0 * a0 passes 2^127
    for j in range(300):
        rows.append((5000 + j, 6, 1, Dec("1.00"), Dec("0.50"), Dec("0.00001"), Dec(big), Dec("0.5"), 1, 1))
    cols = [("id", "int4"), ("g", "int4"), ("k", "int4"), ("a2", "numeric(12,2)"), ("q", "numeric(5,2)"),
            ("a5", "numeric(15,5)"), ("a0", "numeric(18,0)"), ("a1", "numeric(5,1)"), ("i4", "int4"),
            ("i8", "int8")]
    s = mk()
    s.table("f", cols, rows, batch_rows=900)
    s.table("d", [("k", "int4"), ("name", "text")], [(k, "n%d" % (k % 6)) for k in range(0, 40, 2)],
            arrow=False)
    aggs = ("sum(a2 * q), avg(a2 * (1 - q)), min(a2 * q), max(a2 - q), count(a2 + a5), sum(-a2), "
            "sum(a2 * (1 - q) * (1 + q)), avg(a5 * a1), sum(a0 * a0), avg(a0 * a0), min(-a0 * a0), "
            "max(a0 * 2.5), sum(i4 * q), sum(i8::numeric * a2), sum(a2 + 0.001), avg(+a1 - 100), "
            "sum(a0 - a2 + a5)")
    conn = s.conn
    for threads in ("1", "4"):
        conn.execute("SET pg_warp.cpu_threads = " + threads)
        try:
            check(s, "SELECT " + aggs + " FROM f", expect=nonempty)
            check(s, "SELECT g, " + aggs + " FROM f GROUP BY g",
                  expect=lambda r: any(row[0] == 6 and row[9] is not None and row[9] > 2 ** 127 for row in r))
            check(s, "SELECT g, " + aggs + " FROM f WHERE id < 0 GROUP BY g", expect=lambda r: r == [])
        finally:
            conn.execute("RESET pg_warp.cpu_threads")
    for cond in ("a2 > a5", "a2 * q > 1000.5", "a2 + 1.5 >= a0", "a1 = q", "a1 <> q * 2",
                 "-a2 < a5 - 10", "i4::numeric * 0.01 > a1", "a2 * q IS NULL", "a2 - a2 = 0",
                 "a0 * a0 > 100000000000000000", "a5 * 100000 = a0", "q IN (0.5, 1.00, 12.34)",
                 "a1 NOT IN (1.5, -2.0)", "a2 * q NOT IN (0.25, NULL)", "a1 * 2 IN (3, 5.0, 7.00)",
                 "a2 * q BETWEEN SYMMETRIC 100 AND -100.5"):
        check(s, "SELECT g, count(*), sum(a2 * q) FROM f WHERE %s GROUP BY g" % cond)
    check(s, "SELECT count(*) FROM f WHERE a2 * q > 1000.5", expect=lambda r: r[0][0] > 100)
    check(s, "SELECT count(*) FROM f WHERE q IN (0.5, 1.00, 12.34)", expect=lambda r: r[0][0] >= 300)
    check(s, "SELECT g, sum(a2 * q) FILTER (WHERE a5 > a1), count(*) FILTER (WHERE a2 * 2 < q) FROM f "
             "GROUP BY g HAVING sum(a2 * q) > 0", expect=nonempty)
    check(s, "SELECT d.name, sum(f.a2 * f.q), max(f.a5 - f.a1) FROM f JOIN d ON f.k = d.k GROUP BY d.name",
          expect=nonempty)
    # numeric columns as group keys (their unscaled values)
    check(s, "SELECT a1, count(*), sum(a2 * q) FROM f GROUP BY a1", expect=lambda r: len(r) > 100)
    check(s, "SELECT q, a1, max(a0) FROM f WHERE q < 1 GROUP BY q, a1", expect=nonempty)
    check(s, "SELECT g, count(DISTINCT a1) FROM f GROUP BY g", expect=nonempty)
    # PostgreSQL's plan: 54 digits, division, rounding, a product as a key
    check(s, "SELECT sum(a0 * a0 * a0) FROM f", offload=False, expect=nonempty)
    check(s, "SELECT sum(a2 / 3) FROM f", offload=False)
    check(s, "SELECT sum(round(a2 * q, 1)) FROM f", offload=False)
    check(s, "SELECT a2 * q, count(*) FROM f GROUP BY 1", offload=False)
    plan = plan_of(conn, "SELECT sum(a0 * a0 * a0) FROM %s.f" % s.w)
    assert "WarpPreAgg" not in plan, plan


def test_numeric_case(mk):
    """CASE and COALESCE over numeric: the values at the largest display
    scale, but each row's own scale as PostgreSQL has it, so sum/avg show
    the largest scale among the rows they summed (a group that only took
    ELSE 0 shows 0, not 0.00; one with no value is NULL).  Nested, without
    ELSE, NULL branches, NULLIF, FILTER, comparisons, joins, empty input; on 1 and
    4 threads, parallel workers and the daemon.  min/max and arithmetic
    over values of different scales stay PostgreSQL's (min(0, 0.00) shows
    whichever came last)."""
    from decimal import Decimal as Dec
    rows = []
    for i in range(3000):
        g = i % 8
        rows.append((
            i, g, i % 30,
            None if i % 11 == 0 else Dec(((i * 7919) % 200001) - 100000) / 100,
            None if i % 13 == 1 else Dec((i * 31) % 10000) / 100,
            None if i % 9 == 4 else Dec(((i * 104729) % 2000001) - 1000000) / 10 ** 5,
            Dec(i * 37 - 50000),
            (i * 7) % 1000 - 500,
            "abcd"[i % 4],
        ))
    cols = [("id", "int4"), ("g", "int4"), ("k", "int4"), ("a2", "numeric(12,2)"), ("q", "numeric(5,2)"),
            ("a5", "numeric(15,5)"), ("a0", "numeric(18,0)"), ("i4", "int4"), ("t", "text")]
    s = mk()
    s.table("f", cols, rows, batch_rows=700)
    s.table("d", [("k", "int4"), ("name", "text")], [(k, "n%d" % (k % 4)) for k in range(0, 30, 2)],
            arrow=False)
    aggs = [
        "sum(CASE WHEN g > 4 THEN a2 ELSE 0 END)",
        "avg(CASE WHEN g > 4 THEN a2 ELSE 0 END)",
        "sum(CASE WHEN i4 % 3 = 0 THEN a5 WHEN i4 % 3 = 1 THEN a2 END)",
        "avg(CASE WHEN i4 < 0 THEN a0 WHEN t = 'b' THEN q ELSE NULL END)",
        "sum(COALESCE(a2, 0))",
        "avg(COALESCE(a5, a2, 1))",
        "sum(COALESCE(a2, q))",
        "count(CASE WHEN g = 1 THEN a5 END)",
        "sum(CASE WHEN g = 1 THEN CASE WHEN i4 > 0 THEN a5 ELSE 1 END WHEN g = 2 THEN a0 ELSE a2 END)",
        "sum(CASE WHEN g > 4 THEN a2 * q ELSE a0 END)",
        "max(CASE WHEN g > 2 THEN a2 ELSE q END)",
        "min(COALESCE(a2, q, -1.50))",
        "sum(CASE WHEN g = 7 THEN a5 ELSE 0 END) FILTER (WHERE i4 > 0)",
        "avg(NULLIF(a2, 0)), sum(NULLIF(a5, a2)), count(NULLIF(q, 1.5)), min(NULLIF(a0, 0))",
        "sum(NULLIF(COALESCE(a2, 0), 0.00))",
    ]
    sel = ", ".join(aggs)
    queries = [
        "SELECT " + sel + " FROM f",
        "SELECT g, " + sel + " FROM f GROUP BY g",
        "SELECT t, " + sel + " FROM f WHERE a2 > 0 GROUP BY t",
        "SELECT g, " + sel + " FROM f WHERE id < 0 GROUP BY g",
        "SELECT " + sel + " FROM f WHERE id < 0",
        "SELECT d.name, sum(CASE WHEN f.g < 3 THEN f.a5 ELSE 0 END), avg(COALESCE(f.a2, f.a0)) "
        "FROM f JOIN d ON f.k = d.k GROUP BY d.name",
        "SELECT g, count(*) FROM f WHERE CASE WHEN g > 2 THEN a2 ELSE a5 END > 10 GROUP BY g",
        "SELECT count(*), sum(a2) FROM f WHERE COALESCE(a2, a5, 0) BETWEEN -5 AND 500.5",
    ]
    # the oracle really has groups that took only the integer branch
    want = check(s, "SELECT g, sum(CASE WHEN g > 4 THEN a2 ELSE 0 END) FROM f GROUP BY g")
    assert any(str(r[1]) == "0" for r in want[1]) and any("." in str(r[1]) for r in want[1]), want
    check_everywhere(s, queries, workers=2, daemon=3)
    # PostgreSQL's: min/max over values of several scales, arithmetic on them
    for q in ("SELECT min(CASE WHEN g > 4 THEN a2 ELSE 0 END) FROM f",
              "SELECT g, max(COALESCE(a2, 0)) FROM f GROUP BY g",
              "SELECT sum(CASE WHEN g > 4 THEN a2 ELSE 0 END * 2) FROM f",
              "SELECT sum(-COALESCE(a2, 0)) FROM f"):
        check(s, q, offload=False, expect=nonempty)


def test_numeric_wide_columns(mk):
    """numeric(19..38, s) columns (what `pgwarp dump` writes for unconstrained
    numeric is numeric(38, s)): read as 128-bit unscaled values; sum/avg in
    192 bits (sums far beyond 38 digits), min/max/count, comparisons with
    constants and with other numeric columns, FILTER, and arithmetic whose
    declared bounds stay within 38 digits; larger products and constants of
    more than 18 digits stay PostgreSQL's, as do wide columns as group keys."""
    from decimal import Decimal as Dec
    import random as _r
    rng = _r.Random(38)
    big = Dec("99999999999999999999999999999999.999999")     # 38 digits
    rows = []
    ctx = decimal.localcontext()
    ctx.__enter__().prec = 60
    for i in range(3000):
        r = rng.random()
        if r < 0.05:
            m = None
        elif r < 0.08:
            m = big * rng.choice([1, -1])
        elif r < 0.10:
            m = Dec(rng.choice(["0.000001", "-0.000001", "0", "-0"]))
        else:
            m = Dec(rng.randint(-10 ** 30, 10 ** 30)).scaleb(-6)
        w = None if rng.random() < 0.05 else Dec(rng.randint(-10 ** 24, 10 ** 24))
        a2 = Dec(rng.randint(-10 ** 9, 10 ** 9)).scaleb(-2)
        q = lambda v, e: None if v is None else v.quantize(Dec(1).scaleb(-e))
        rows.append((i, i % 7, q(m, 6), q(w, 0), q(a2, 2), rng.randint(-100, 100)))
    ctx.__exit__(None, None, None)
    s = mk()
    s.table("f", [("id", "int4"), ("g", "int4"), ("m", "numeric(38,6)"), ("w", "numeric(25,0)"),
                  ("a2", "numeric(12,2)"), ("k", "int4")], rows, batch_rows=700)
    queries = [
        "SELECT g, sum(m), avg(m), min(m), max(m), count(m) FROM f GROUP BY g",
        "SELECT sum(w), avg(w), min(w), max(w), count(*) FROM f",
        "SELECT g, sum(m) FILTER (WHERE m < 0), max(w) FILTER (WHERE k > 0) FROM f GROUP BY g",
        "SELECT g, count(*), sum(w) FROM f WHERE m > 0 AND w <> 0 GROUP BY g",
        "SELECT count(*), sum(a2) FROM f WHERE m BETWEEN -5.5 AND 123456789012.25",
        "SELECT count(*) FROM f WHERE m IN (0, 0.000001, -0.000001)",
        "SELECT g, count(*) FROM f WHERE m > w GROUP BY g",
        "SELECT g, sum(w * 3), sum(w + w), sum(w * k), sum(w - a2), min(-w) FROM f GROUP BY g",
        "SELECT max(w - 1.5), sum(-m), min(-m) FROM f",
        "SELECT k % 3, sum(w * a2) FROM f GROUP BY 1",
    ]
    for q in queries:
        check(s, q, expect=nonempty)
    # sums beyond 38 digits (the 192-bit state) really happen here
    check(s, "SELECT sum(m * 1) FROM f WHERE m > 0", offload=False)
    check(s, "SELECT sum(m) FROM f WHERE m > 0",
          expect=lambda r: len(str(r[0][0]).split(".")[0]) > 33)
    # beyond the engine: products past 38 digits, long constants, keys
    check(s, "SELECT sum(m * k) FROM f", offload=False)
    check(s, "SELECT sum(m + a2) FROM f", offload=False)    # 33 integer digits + 6
    # constants of up to 38 digits are 128-bit constants; more stay PostgreSQL's
    check(s, "SELECT count(*), sum(w) FROM f WHERE m > 1e20 AND m < 99999999999999999999999999999999.999999",
          expect=nonempty)
    check(s, "SELECT count(*) FROM f WHERE w <> -999999999999999999999999 AND m >= -12345678901234567890.5")
    check(s, "SELECT sum(w + 1234567890123456789012) FROM f", expect=nonempty)
    check(s, "SELECT count(*) FROM f WHERE m > 100000000000000000000000000000000000000", offload=False)
    check(s, "SELECT w, count(*) FROM f GROUP BY w", offload=False)


def test_numeric_beyond_declared_precision(mk):
    """A file whose numeric(12,2) column holds values of more digits than
    declared: numeric expressions' bounds rest on the declared precision,
    so the engine refuses to read such a value in one (22003, naming the
    column, the file, the batch and the row) instead of risking a wrong
    sum."""
    from decimal import Decimal as Dec
    vals = [1, 2, 10 ** 15, 3]      # unscaled: 0.01, 0.02, 10^13 (16 digits), 0.03
    buf = b"".join(struct.pack("<qq", v, 0) for v in vals)
    arr = pa.Array.from_buffers(pa.decimal128(12, 2), len(vals), [None, pa.py_buffer(buf)])
    tab = pa.table({"g": pa.array([1, 1, 2, 2], pa.int32()), "p": arr})
    s = mk()
    s.table("f", [("g", "int4"), ("p", "numeric(12,2)")], [(1, Dec("0.01"))], arrow=False)
    path = os.path.join(s.dir, "wide.arrow")
    with ipc.new_file(path, tab.schema) as w:
        w.write_table(tab)
    os.chmod(path, 0o644)
    conn = s.conn
    set_side(conn, s.w, True)
    conn.execute("CREATE FOREIGN TABLE fw (g int4, p numeric(12,2)) SERVER arrow_fdw OPTIONS (file '%s')"
                 % path)
    conn.execute("ANALYZE fw")
    plan = plan_of(conn, "SELECT g, sum(p * p) FROM fw GROUP BY g")
    assert "WarpPreAgg" in plan, plan
    res = run(conn, "SELECT g, sum(p * p) FROM fw GROUP BY g")
    assert res[0] == "error" and res[1] == "22003" and "numeric(12,2)" in res[2], res
    # the whole message: file, batch and row
    with pytest.raises(psycopg.Error) as e:
        conn.execute("SELECT g, sum(p * p) FROM fw GROUP BY g").fetchall()
    assert "wide.arrow" in e.value.diag.message_detail and "row 2" in e.value.diag.message_detail, \
        e.value.diag.message_detail


def test_heap_fact_tables(mk):
    """A heap fact table (no Arrow table in the query, at least
    pg_warp.heap_min_rows rows): the engine reads it through the table AM,
    deforming tuples into column vectors, in one process or under Gather
    (a parallel heap scan).  NULLs, infinite dates and timestamps, NaN,
    every fixed-width type, text (LIKE, equality, C ordering, group and join
    keys; TOASTed values), joins of every kind, numeric expressions; the
    transaction's own uncommitted rows are seen (its snapshot); below the
    threshold, extract/date_part of columns whose statistics show
    infinities, for a parent of inheritance children or under TABLESAMPLE,
    PostgreSQL's plan."""
    words = ["AIR", "MAIL", "", "\u00e9t\u00e9", "SHIP", "x" * 3000]   # a long one is TOASTed
    rows = [(i, i % 50 if i % 17 else None, (i * 7919) % 100000 - 50000, i * 0.25 if i % 13 else None,
             None if i % 11 == 0 else (i * 31) % 1000 - 500, i % 3 == 0 if i % 7 else None,
             D(2020, 1, 1) + datetime.timedelta(days=i % 500), TS(2020, 1, 1) + datetime.timedelta(minutes=i),
             float(i % 97) / 8, None if i % 19 == 0 else words[(i * 7) % len(words)])
            for i in range(30000)]
    cols = [("id", "int4"), ("k", "int4"), ("v", "int8"), ("x", "float8"), ("s", "int2"), ("b", "bool"),
            ("d", "date"), ("ts", "timestamp"), ("r", "float4"), ("t", "text")]
    s = mk()
    s.table("f", cols, rows, arrow=False)
    s.table("dim", [("k", "int4"), ("name", "text")], [(k, "n%d" % (k % 6)) for k in range(0, 50, 2)],
            arrow=False)
    conn = s.conn
    # infinite dates and timestamps, NaN: PostgreSQL's values, compared as it does
    for side in (s.w, s.h):
        conn.execute("INSERT INTO %s.f VALUES (-1, 2, 1, 'NaN', 1, true, 'infinity', '-infinity', 'NaN', 'AIR'), "
                     "(-2, 4, 2, '-Infinity', 2, false, '-infinity', 'infinity', 1, NULL)" % side)
    s.table("tdim", [("t", "text"), ("grp", "text")], [("AIR", "a"), ("", "e"), ("\u00e9t\u00e9", "u"),
                                                      ("SHIP", "s"), ("SHIP", "s2")], arrow=False)
    conn.execute("ANALYZE %s.f" % s.w)
    conn.execute("SET pg_warp.heap_min_rows = 0")
    queries = [
        "SELECT count(*), sum(v), avg(x), min(d), max(d), min(ts), max(ts), sum(s), avg(r) FROM f",
        "SELECT k, count(*), sum(v), max(x), min(r) FROM f WHERE s > -100 GROUP BY k",
        "SELECT dim.name, count(*), sum(f.v), avg(f.x) FROM f JOIN dim ON f.k = dim.k GROUP BY dim.name",
        "SELECT dim.name, count(*) FROM f LEFT JOIN dim ON f.k = dim.k WHERE f.b GROUP BY dim.name",
        "SELECT b, count(*) FILTER (WHERE d > '2020-06-01'), max(ts) FILTER (WHERE x IS NULL) FROM f GROUP BY b",
        "SELECT count(*) FROM f WHERE EXISTS (SELECT 1 FROM dim WHERE dim.k = f.k)",
        "SELECT count(*), max(v) FROM f WHERE NOT EXISTS (SELECT 1 FROM dim WHERE dim.k = f.k)",
        "SELECT d, count(*) FROM f WHERE d < '2020-01-05' OR d > '2021-05-10' GROUP BY d",
        "SELECT d, count(*), sum(v), min(ts), max(r) FROM f GROUP BY d",
        "SELECT s, b, count(*), sum(x), max(ts) FROM f GROUP BY s, b",
        # text columns come as Utf8 vectors (detoasted)
        "SELECT t, count(*), sum(v) FROM f WHERE t LIKE '%A%' OR t = '' GROUP BY t",
        "SELECT tdim.grp, count(*), max(f.id) FROM f JOIN tdim ON f.t = tdim.t GROUP BY 1",
        "SELECT length(t), count(*) FROM f WHERE t COLLATE \"C\" > 'M' GROUP BY t",
        "SELECT count(*) FROM f WHERE v / (id % 1000) > 0",
    ]
    try:
        for parallel in (False, True):
            # realistic per-row costs for the parallel plans (under the
            # session's inflated ones Gather's tuples are dear)
            settings = (["max_parallel_workers_per_gather = 2", "parallel_setup_cost = 0",
                         "parallel_tuple_cost = 0", "min_parallel_table_scan_size = 0",
                         "cpu_tuple_cost = 0.01", "cpu_operator_cost = 0.0025"] if parallel
                        else ["max_parallel_workers_per_gather = 0"])
            for st in settings:
                conn.execute("SET " + st)
            try:
                for q in queries:
                    check(s, q, expect=None if "id % 1000" in q else nonempty)
                check(s, "SELECT count(*) FROM f WHERE v / (id % 1000) > 0", expect="error:22012")
                set_side(conn, s.w, True)
                plan = plan_of(conn, queries[2])
                assert "heap" in plan and (("Parallel Custom Scan (WarpPreAgg)" in plan) == parallel), plan
            finally:
                for st in settings:
                    conn.execute("RESET " + st.split(" =")[0])
                conn.execute("SET max_parallel_workers_per_gather = 0")
                conn.execute("SET cpu_tuple_cost = 10000")
                conn.execute("SET cpu_operator_cost = 2500")
        # date_trunc, conversions and cross-type comparisons pass the
        # infinities on as PostgreSQL does (one process: under the parallel
        # settings' real costs, ts's many distinct values make PostgreSQL's
        # group estimate too high for pg_warp's plan to win)
        check(s, "SELECT max(d - date '2020-01-01') FROM f", expect="error:22008")
        for q in ("SELECT date_trunc('month', ts), count(*), min(d::timestamp) FROM f GROUP BY 1",
                  "SELECT ts::date, count(*) FROM f WHERE ts > d AND d::timestamptz <= ts::timestamptz "
                  "GROUP BY 1",
                  "SELECT date_trunc('day', ts + interval '1 mon 12 hours'), count(*), "
                  "max(d - interval '1 day'), min(ts::timestamptz + interval '1 day') FROM f GROUP BY 1"):
            check(s, q, expect=lambda r: any(str(v[0]) in ("infinity", "-infinity") for v in r))
        # the transaction's own rows
        conn.execute("BEGIN")
        try:
            conn.execute("INSERT INTO %s.f SELECT id + 100000, k, v, x, s, b, d, ts, r, t FROM %s.f" % (s.w, s.w))
            conn.execute("INSERT INTO %s.f SELECT id + 100000, k, v, x, s, b, d, ts, r, t FROM %s.f" % (s.h, s.h))
            check(s, queries[1], expect=nonempty)
            check(s, "SELECT count(*) FROM f", expect=lambda r: r[0][0] == 60004)
        finally:
            conn.execute("ROLLBACK")
        # numeric expressions are the engine's; extract/date_part of columns
        # whose statistics show infinities (their results there are
        # +-Infinity or NULL) stay PostgreSQL's
        set_side(conn, s.w, True)
        check(s, "SELECT sum(v::numeric * 2) FROM f", expect=nonempty)
        for q in ("SELECT date_part('month', ts), count(*) FROM f GROUP BY 1",
                  "SELECT count(*) FROM f WHERE extract(year FROM d) = 2020"):
            assert "WarpPreAgg" not in plan_of(conn, q), q
            check(s, q, offload=False, expect=nonempty)
        set_side(conn, s.w, True)    # (check() leaves the oracle's side set)
        # a parent of inheritance children, TABLESAMPLE: PostgreSQL's plan
        conn.execute("CREATE TABLE fchild () INHERITS (f)")
        conn.execute("INSERT INTO fchild SELECT * FROM f WHERE id < 100")
        conn.execute("ANALYZE f")
        assert "WarpPreAgg" not in plan_of(conn, "SELECT count(*), sum(v) FROM f")
        assert "WarpPreAgg" in plan_of(conn, "SELECT count(*), sum(v) FROM ONLY f")
        conn.execute("DROP TABLE fchild")
        assert "WarpPreAgg" not in plan_of(conn, "SELECT count(*) FROM f TABLESAMPLE SYSTEM (50)")
        conn.execute("SET pg_warp.heap_min_rows = 100000")
        assert "WarpPreAgg" not in plan_of(conn, queries[0])
        conn.execute("SET pg_warp.heap_min_rows = -1")
        assert "WarpPreAgg" not in plan_of(conn, queries[0])
    finally:
        conn.execute("RESET pg_warp.heap_min_rows")


def test_date_trunc_extract_date_part(mk):
    """date_trunc(unit, timestamp), date_part(unit, timestamp) anywhere and
    extract(unit FROM date | timestamp) as a group key (numeric, handed
    back at PostgreSQL's display scale), for every unit PostgreSQL
    accepts for the type, against the heap; the timestamptz variants,
    extract inside an expression and units the engine does not compute
    stay PostgreSQL's (and its errors are its own)."""
    import random
    rnd = random.Random(7)
    rows = []
    for i in range(4000):
        ts = None if i % 17 == 0 else TS(1, 1, 1) + datetime.timedelta(
            microseconds=rnd.randrange(0, 315537897599999999))
        if i % 5 == 1 and ts is not None:          # near year and week boundaries
            ts = TS(rnd.choice([1999, 2000, 2004, 2020, 2021]), rnd.choice([1, 12]),
                    rnd.choice([1, 2, 3, 28, 29, 30, 31]) if i % 2 else 1,
                    rnd.randrange(24), rnd.randrange(60), rnd.randrange(60), rnd.randrange(10 ** 6))
        d = None if i % 13 == 0 else D(1, 1, 1) + datetime.timedelta(days=rnd.randrange(0, 3652058))
        rows.append((i, ts, d, i % 100))
    s = mk()
    s.table("f", [("id", "int4"), ("ts", "timestamp"), ("d", "date"), ("v", "int4")], rows,
            batch_rows=900)
    trunc_units = ["microseconds", "milliseconds", "second", "minute", "hour", "day", "week",
                   "month", "quarter", "year", "decade", "century", "millennium", "Years", "mon"]
    for u in trunc_units:
        check(s, "SELECT date_trunc('%s', ts), count(*), sum(v) FROM f GROUP BY 1" % u,
              expect=nonempty)
    ts_units = ["microseconds", "milliseconds", "second", "minute", "hour", "day", "week",
                "month", "quarter", "year", "decade", "century", "millennium", "dow", "isodow",
                "doy", "isoyear", "epoch"]
    for u in ts_units:
        check(s, "SELECT extract(%s FROM ts), count(*), min(id) FROM f GROUP BY 1" % u,
              expect=nonempty)
        check(s, "SELECT count(*), sum(date_part('%s', ts)), max(date_part('%s', ts)) FROM f "
                 "WHERE date_part('%s', ts) > 1" % (u, u, u), expect=nonempty)
    date_units = ["day", "week", "month", "quarter", "year", "decade", "century", "millennium",
                  "dow", "isodow", "doy", "isoyear", "epoch", "julian"]
    for u in date_units:
        check(s, "SELECT extract(%s FROM d), count(*), sum(v) FROM f GROUP BY 1" % u,
              expect=nonempty)
    # extract() anywhere else: a numeric expression (quals, aggregates, FILTER)
    for u in ("year", "epoch", "microseconds", "dow", "julian", "isoyear"):
        arg = "d" if u == "julian" else "ts"
        check(s, "SELECT v %% 4, count(*), sum(extract(%s FROM %s)), max(extract(%s FROM %s) * 2), "
                 "avg(extract(%s FROM %s) - 1) FROM f WHERE extract(%s FROM %s) > 2 GROUP BY 1"
              % (u, arg, u, arg, u, arg, u, arg), expect=nonempty)
    check(s, "SELECT count(*) FILTER (WHERE extract(month FROM d) = 2), min(extract(second FROM ts)) "
             "FROM f WHERE extract(year FROM d) BETWEEN 1900 AND 2100", expect=nonempty)
    check(s, "SELECT date_trunc('month', ts), extract(year FROM d), count(*) FROM f "
             "WHERE date_trunc('day', ts) >= timestamp '2000-01-01' GROUP BY 1, 2",
          expect=nonempty)
    # PostgreSQL's plan: extract inside a group key's expression, a unit the
    # engine does not compute, the time-zone dependent variants
    check(s, "SELECT extract(year FROM d) + 1, count(*) FROM f GROUP BY 1", offload=False)
    check(s, "SELECT extract(julian FROM ts), count(*) FROM f GROUP BY 1", offload=False)
    check(s, "SELECT date_trunc('month', ts::timestamptz), count(*) FROM f GROUP BY 1",
          offload=False)
    check(s, "SELECT extract(hour FROM d), count(*) FROM f GROUP BY 1", offload=False,
          expect="error:0A000")
    check(s, "SELECT date_trunc('fortnight', ts), count(*) FROM f GROUP BY 1", offload=False,
          expect="error:22023")


def test_text_equality(mk):
    """text = constant, <> constant, IN and NOT IN lists (with NULL) on text
    and varchar fact columns, plain Utf8 and dictionary-encoded, under
    deterministic collations: equal to the heap; through pg_warp_gpud too
    (whose CPU driver gets the constants over the wire).  Ordering
    comparisons and nondeterministic collations stay PostgreSQL's."""
    import random
    rnd = random.Random(11)
    words = ["AIR", "MAIL", "SHIP", "TRUCK", "RAIL", "REG AIR", "FOB", "", "\u00e9", "e\u0301",
             "air", "AIR ", "\u540d\u524d"]
    vals = [None if i % 23 == 0 else rnd.choice(words) for i in range(6000)]
    tab = pa.table({
        "id": pa.array(range(6000), pa.int32()),
        "sm": pa.array(vals, pa.string()),
        "sd": pa.array(vals, pa.string()).dictionary_encode(),
        "lg": pa.array(vals, pa.large_string()),
        "v": pa.array([i % 97 for i in range(6000)], pa.int32()),
    })
    cols = [("id", "int4"), ("sm", "text"), ("sd", "text"), ("lg", "text"), ("v", "int4")]
    s = mk()
    s.table("f", cols, arrow_table=tab, batch_rows=1700)
    s.table("d", [("k", "int4"), ("n", "text")], [(k, "n%d" % (k % 5)) for k in range(97)],
            arrow=False)
    conds = ["sm = 'AIR'", "sd = 'AIR'", "lg = 'AIR'", "sm <> 'MAIL'", "sd <> 'MAIL'",
             "sm = ''", "sd = ''", "sm = '\u00e9'", "sd = 'e\u0301'", "'TRUCK' = sm",
             "sm IN ('AIR', 'REG AIR', '')", "sd NOT IN ('AIR', 'FOB')",
             "sm IN ('AIR', NULL)", "sd NOT IN ('AIR', NULL)", "sm = 'NOPE'",
             "sm = 'AIR' OR sd = 'SHIP'", "sm = 'AIR ' AND v > 10", "sm = 'AIR' COLLATE \"C\"",
             "sd = '\u540d\u524d'", "NOT (sm = 'air')"]
    for c in conds:
        check(s, "SELECT v % 5, count(*), sum(v) FROM f WHERE " + c + " GROUP BY 1")
    check(s, "SELECT count(*) FROM f WHERE sm = 'AIR'", expect=lambda r: r[0][0] > 100)
    check(s, "SELECT d.n, count(*) FILTER (WHERE f.sd = 'RAIL'), sum(f.v) FROM f JOIN d ON f.v = d.k "
             "WHERE f.sm <> 'SHIP' GROUP BY d.n", expect=nonempty)
    # PostgreSQL's plan
    check(s, "SELECT count(*) FROM f WHERE sm > 'M'", offload=False)
    conn = s.conn
    try:
        conn.execute("CREATE COLLATION IF NOT EXISTS public.pgwarp_test_ci "
                     "(provider = icu, locale = 'und-u-ks-level2', deterministic = false)")
        have_icu = True
    except psycopg.Error:
        have_icu = False
    if have_icu:
        check(s, "SELECT count(*) FROM f WHERE sm = 'air' COLLATE public.pgwarp_test_ci", offload=False,
              expect=lambda r: r[0][0] > 0)
    # through the daemon (its CPU driver in CI, given back by a GPU driver)
    if gpud_status(conn) is not None:
        conn.execute("SET pg_warp.mode = gpu")
        try:
            for c in conds[:6]:
                check(s, "SELECT v % 5, count(*) FROM f WHERE " + c + " GROUP BY 1")
        finally:
            conn.execute("SET pg_warp.mode = cpu")


def test_text_like(mk):
    """text LIKE constant and NOT LIKE on text and varchar fact columns
    (plain Utf8, large, dictionary-encoded), in a UTF-8 database: '_' takes
    one character (a multibyte one too), '%' any run, '\\' escapes, ESCAPE
    clauses, NULL values, several patterns on one column beside
    = on it; equal to the heap, offloaded (the pattern is a column of its
    own).  A pattern ending in the escape character fails where
    PostgreSQL's match reaches its end (22025), not elsewhere.  ILIKE and
    patterns that are other columns stay PostgreSQL's."""
    import random
    rnd = random.Random(12)
    words = ["AIR", "MAIL", "SHIP", "TRUCK", "RAIL", "REG AIR", "FOB", "", "\u00e9", "e\u0301",
             "air", "AIR ", "\u540d\u524d", "50%", "a_b", "a\\b", "%", "_", "xAIRy"]
    vals = [None if i % 23 == 0 else rnd.choice(words) for i in range(6000)]
    tab = pa.table({
        "id": pa.array(range(6000), pa.int32()),
        "sm": pa.array(vals, pa.string()),
        "sd": pa.array(vals, pa.string()).dictionary_encode(),
        "lg": pa.array(vals, pa.large_string()),
        "v": pa.array([i % 97 for i in range(6000)], pa.int32()),
    })
    cols = [("id", "int4"), ("sm", "text"), ("sd", "varchar(20)"), ("lg", "text"), ("v", "int4")]
    s = mk()
    s.table("f", cols, arrow_table=tab, batch_rows=1700)
    conds = ["sm LIKE 'A%'", "sd LIKE 'A%'", "lg LIKE 'A%'", "sm LIKE '%AIR%'", "sd LIKE '%AIR'",
             "sm LIKE '_IR'", "sd LIKE '_'", "sm LIKE 'e_'", "sd LIKE '__'", "sm LIKE ''",
             "sd LIKE '%'", "sm LIKE '%%'", "sm LIKE '_%_'", "sm NOT LIKE 'A%'", "sd NOT LIKE '%a%'",
             "sm LIKE '%\\%'", "sd LIKE '50\\%'", "sm LIKE 'a\\_b'", "sm LIKE 'a\\\\b'",
             "sd LIKE 'a#_b' ESCAPE '#'", "sm LIKE '%#%' ESCAPE '#'",
             "sm LIKE 'A%' AND sm LIKE '%R' AND sm <> 'AIR'", "sm LIKE 'A%' OR sd LIKE '%\u540d%'",
             "sm ~~ 'M%'", "sd !~~ 'M%'", "sm LIKE '\u540d_'", "lg LIKE '%\u0301'",
             "NOT (sm LIKE 'x%')", "sm LIKE 'A%' COLLATE \"C\""]
    for c in conds:
        check(s, "SELECT v % 5, count(*), sum(v) FROM f WHERE " + c + " GROUP BY 1")
    check(s, "SELECT count(*) FROM f WHERE sm LIKE '%AIR%'", expect=lambda r: r[0][0] > 300)
    check(s, "SELECT v % 3, count(*) FILTER (WHERE sd LIKE 'R%'), count(*) FILTER (WHERE sd LIKE '%L') "
             "FROM f GROUP BY 1", expect=nonempty)
    check(s, "SELECT count(*), count(*) FILTER (WHERE sm LIKE '_') FROM f WHERE sm LIKE '%'",
          expect=lambda r: r[0][0] > 0)
    # a pattern ending in the escape character: PostgreSQL's error only for
    # the rows whose match gets that far, in PostgreSQL's order of quals
    for col in ("sm", "sd", "lg"):
        check(s, "SELECT count(*) FROM f WHERE %s LIKE 'zz\\'" % col, expect=lambda r: r[0][0] == 0)
        check(s, "SELECT count(*) FROM f WHERE %s LIKE 'A\\'" % col, expect="error:22025")
    check(s, "SELECT count(*) FROM f WHERE sm LIKE 'FOB\\'", expect=lambda r: r[0][0] == 0)
    check(s, "SELECT count(*) FROM f WHERE v < 0 AND sm LIKE 'A\\'", expect=lambda r: r[0][0] == 0)
    check(s, "SELECT count(*) FROM f WHERE v >= 0 OR sm LIKE 'A\\'", expect=lambda r: r[0][0] > 0)
    check(s, "SELECT count(*) FROM f WHERE sm = 'zz' OR sd NOT LIKE 'A\\'", expect="error:22025")
    check(s, "SELECT v % 3, count(*) FILTER (WHERE sm LIKE 'A\\') FROM f WHERE sm NOT LIKE 'A%' GROUP BY 1",
          expect=nonempty)
    # PostgreSQL's plan
    check(s, "SELECT count(*) FROM f WHERE sm ILIKE 'a%'", offload=False)
    check(s, "SELECT count(*) FROM f WHERE sm LIKE sd", offload=False)


def test_text_ordering_c(mk):
    """text < <= > >= a constant under the C collation (byte order, the
    shorter string first on a common prefix), either side, plain, large and
    dictionary-encoded, NULLs: equal to the heap and offloaded; the same
    under the database's default collation (C.UTF-8 here) and C.utf8.  An
    ICU collation stays PostgreSQL's."""
    import random
    rnd = random.Random(14)
    words = ["AIR", "AIR ", "AIRx", "MAIL", "SHIP", "", "a", "\u00e9", "e\u0301", "\u540d", "Z", "z",
             "M", "Ma", "L\uffff", "\U0001f600"]
    vals = [None if i % 19 == 0 else rnd.choice(words) for i in range(5000)]
    tab = pa.table({
        "id": pa.array(range(5000), pa.int32()),
        "sm": pa.array(vals, pa.string()),
        "sd": pa.array(vals, pa.string()).dictionary_encode(),
        "lg": pa.array(vals, pa.large_string()),
        "v": pa.array([i % 97 for i in range(5000)], pa.int32()),
    })
    cols = [("id", "int4"), ("sm", "text"), ("sd", "varchar(20)"), ("lg", "text"), ("v", "int4")]
    s = mk()
    s.table("f", cols, arrow_table=tab, batch_rows=1300)
    conds = ["sm < 'M' COLLATE \"C\"", "sd <= 'AIR' COLLATE \"C\"", "lg > 'AIR' COLLATE \"C\"",
             "sm >= 'Ma' COLLATE \"C\"", "'M' > sm COLLATE \"C\"", "'AIR ' <= sd COLLATE \"C\"",
             "sm < '' COLLATE \"C\"", "sm >= '' COLLATE \"C\"", "sd > '\u00e9' COLLATE \"C\"",
             "lg < '\U0001f600' COLLATE \"C\"", "sm COLLATE \"C\" BETWEEN 'A' AND 'Z'",
             "sm < 'M' COLLATE \"C\" AND sd > 'A' COLLATE \"C\"", "sm COLLATE \"POSIX\" > 'a'"]
    for c in conds:
        check(s, "SELECT v % 5, count(*), sum(v) FROM f WHERE " + c + " GROUP BY 1")
    check(s, "SELECT count(*) FROM f WHERE sm < 'M' COLLATE \"C\"", expect=lambda r: r[0][0] > 1000)
    check(s, "SELECT count(*) FILTER (WHERE sd > 'Z' COLLATE \"C\"), count(*) FROM f", expect=nonempty)
    # the default collation, C.UTF-8 (glibc >= 2.35: code point order, i.e.
    # byte order), and the C.utf8 collation: offloaded, the same answers
    for c in conds[:11]:
        plain = c.replace(' COLLATE "C"', "").replace(' COLLATE "POSIX"', "")
        check(s, "SELECT v % 5, count(*), sum(v) FROM f WHERE " + plain + " GROUP BY 1")
        check(s, "SELECT v % 5, count(*), sum(v) FROM f WHERE "
              + c.replace('COLLATE "C"', 'COLLATE "C.utf8"') + " GROUP BY 1")
    # an ICU collation orders by the locale: PostgreSQL's
    check(s, "SELECT count(*) FROM f WHERE sm < 'M' COLLATE \"und-x-icu\"", offload=False,
          expect=lambda r: r[0][0] > 0)


def test_text_group_keys(mk):
    """text and varchar columns of the fact table as group keys (plain Utf8,
    large, dictionary-encoded; 161 strings, one of 300 bytes):
    groups by byte equality under deterministic collations, NULL a group of
    its own, with other keys, dimension keys, FILTER, HAVING, ORDER BY,
    count(DISTINCT text); equal to the heap in one thread, on 4 threads
    (each thread's strings go back with its groups) and in PostgreSQL's
    parallel workers.  A nondeterministic collation stays PostgreSQL's."""
    import random
    rnd = random.Random(13)
    words = ["AIR", "MAIL", "SHIP", "TRUCK", "", "\u00e9", "e\u0301", "air", "AIR ",
             "\u540d\u524d", "x" * 300] + ["w%03d" % i for i in range(150)]
    n = 20000
    vals = [None if i % 29 == 0 else rnd.choice(words[:10] if i < n // 2 else words) for i in range(n)]
    tab = pa.table({
        "id": pa.array(range(n), pa.int32()),
        "sm": pa.array(vals, pa.string()),
        "sd": pa.array(vals, pa.string()).dictionary_encode(),
        "lg": pa.array(vals, pa.large_string()),
        "vc": pa.array([v if i % 3 else None for i, v in enumerate(reversed(vals))], pa.string()),
        "v": pa.array([i % 97 for i in range(n)], pa.int32()),
    })
    cols = [("id", "int4"), ("sm", "text"), ("sd", "text"), ("lg", "text"), ("vc", "varchar(400)"),
            ("v", "int4")]
    s = mk()
    s.table("f", cols, arrow_table=tab, batch_rows=1500)
    s.table("d", [("k", "int4"), ("n", "text")], [(k, "n%d" % (k % 5)) for k in range(97)],
            arrow=False)
    queries = [
        "SELECT sm, count(*), sum(v) FROM f GROUP BY sm",
        "SELECT sd, count(*), min(v) FROM f GROUP BY sd",
        "SELECT lg, max(v) FROM f GROUP BY lg",
        "SELECT vc, count(*) FROM f GROUP BY vc",
        "SELECT sd, v % 3, count(*) FROM f GROUP BY sd, v % 3",
        "SELECT sm, sd, count(*) FROM f GROUP BY sm, sd",
        "SELECT sm, count(*) FROM f WHERE sm LIKE 'w0%' OR sd = 'AIR' GROUP BY sm",
        "SELECT d.n, f.sd, count(*), avg(f.v) FROM f JOIN d ON f.v = d.k GROUP BY d.n, f.sd",
        "SELECT sd, count(*) FILTER (WHERE v > 50) FROM f GROUP BY sd HAVING count(*) > 40",
        "SELECT sm, count(*) FROM f GROUP BY sm ORDER BY count(*) DESC, sm COLLATE \"C\" LIMIT 5",
        "SELECT v % 7, count(DISTINCT sd) FROM f GROUP BY 1",
        "SELECT sm COLLATE \"C\", count(*) FROM f GROUP BY 1",
        "SELECT sm, count(*) FROM f WHERE v < 0 GROUP BY sm",
        # only empty strings: the driver stored no bytes at all
        "SELECT sm, sd, count(*) FROM f WHERE sm = '' GROUP BY sm, sd",
    ]
    conn = s.conn
    for threads in ("1", "4"):
        conn.execute("SET pg_warp.cpu_threads = " + threads)
        try:
            for q in queries:
                check(s, q, expect=(lambda r: len(r) > 5) if "v < 0" not in q and "LIMIT" not in q
                      and "= ''" not in q else nonempty if "= ''" in q else None)
        finally:
            conn.execute("RESET pg_warp.cpu_threads")
    # PostgreSQL's parallel workers, each with its own strings
    settings = ["max_parallel_workers_per_gather = 2", "parallel_setup_cost = 0", "parallel_tuple_cost = 0",
                "min_parallel_table_scan_size = 0", "parallel_leader_participation = on",
                "pg_warp.cpu_threads = 1"]
    try:
        for st in settings:
            conn.execute("SET " + st)
        for q in queries[:4]:
            check(s, q, expect=nonempty)
        set_side(conn, s.w, True)
        conn.execute("SET cpu_tuple_cost = 0.01")
        conn.execute("SET cpu_operator_cost = 0.0025")
        plans = [plan_of(conn, q) for q in queries[:4]]
        conn.execute("SET cpu_tuple_cost = 10000")
        conn.execute("SET cpu_operator_cost = 2500")
        assert any("Parallel Custom Scan (WarpPreAgg)" in p for p in plans), plans
    finally:
        for st in settings:
            conn.execute("RESET " + st.split(" =")[0])
        conn.execute("SET max_parallel_workers_per_gather = 0")
    check(s, "SELECT count(*) FROM (SELECT sd FROM f GROUP BY sd) x", expect=lambda r: r[0][0] > 100)
    try:
        conn.execute("CREATE COLLATION IF NOT EXISTS public.pgwarp_test_ci "
                     "(provider = icu, locale = 'und-u-ks-level2', deterministic = false)")
        have_icu = True
    except psycopg.Error:
        have_icu = False
    if have_icu:
        check(s, "SELECT sm COLLATE public.pgwarp_test_ci, count(*) FROM f GROUP BY 1", offload=False,
              expect=nonempty)


def test_text_join_keys(mk):
    """Joins on text keys (texteq under a deterministic collation): the
    dimension's distinct key strings numbered once, the fact column's value
    = which of them it equals.  Inner, left, semi and anti joins, duplicate
    dimension keys, NULL and empty keys, keys the other side lacks,
    plain/large/dictionary fact columns, a varchar dimension on the heap and
    a text dimension in Arrow, few keys (linear match) and many (hash
    table), a text qual on the same column; 1 and 4 threads, parallel
    workers, the daemon.  A nondeterministic collation stays PostgreSQL's."""
    import random
    rnd = random.Random(15)
    many = ["k%04d" % i for i in range(2000)]
    few = ["AIR", "MAIL", "", "\u00e9", "SHIP"]
    n = 30000
    vals_m = [None if i % 23 == 0 else rnd.choice(many + ["zz", "k99999"]) for i in range(n)]
    vals_f = [None if i % 29 == 0 else rnd.choice(few + ["RAIL"]) for i in range(n)]
    tab = pa.table({
        "id": pa.array(range(n), pa.int32()),
        "km": pa.array(vals_m, pa.string()),
        "kd": pa.array(vals_m, pa.string()).dictionary_encode(),
        "kf": pa.array(vals_f, pa.large_string()),
        "v": pa.array([(i * 7) % 1000 for i in range(n)], pa.int64()),
    })
    s = mk()
    s.table("f", [("id", "int4"), ("km", "text"), ("kd", "text"), ("kf", "text"), ("v", "int8")],
            arrow_table=tab, batch_rows=4000)
    dm = [(k, "g%d" % (i % 9)) for i, k in enumerate(many[:1800])] + [("k0005", "dup"), (None, "nullkey")]
    s.table("dm", [("k", "varchar(10)"), ("g", "text")], dm, arrow=False)
    s.table("dfw", [("k", "text"), ("g", "text")], [("AIR", "a"), ("", "empty"), ("\u00e9", "e"),
                                                     ("SHIP", "s"), ("SHIP", "s2")])
    queries = [
        "SELECT dm.g, count(*), sum(f.v) FROM f JOIN dm ON f.km = dm.k GROUP BY dm.g",
        "SELECT dm.g, count(*), sum(f.v) FROM f JOIN dm ON f.kd = dm.k GROUP BY dm.g",
        "SELECT dm.g, count(*) FROM f LEFT JOIN dm ON f.km = dm.k GROUP BY dm.g",
        "SELECT dfw.g, count(*), max(f.id) FROM f JOIN dfw ON f.kf = dfw.k GROUP BY dfw.g",
        "SELECT dfw.g, count(*) FROM f LEFT JOIN dfw ON f.kf = dfw.k GROUP BY dfw.g",
        "SELECT count(*), sum(v) FROM f WHERE EXISTS (SELECT 1 FROM dm WHERE dm.k = f.km AND dm.g = 'g3')",
        "SELECT count(*), sum(v) FROM f WHERE NOT EXISTS (SELECT 1 FROM dm WHERE dm.k = f.kd)",
        "SELECT dm.g, dfw.g, count(*) FROM f JOIN dm ON f.km = dm.k JOIN dfw ON f.kf = dfw.k "
        "WHERE f.km LIKE 'k1%' AND f.kf <> 'MAIL' GROUP BY 1, 2",
        "SELECT dm.g, count(*) FROM f JOIN dm ON f.km = dm.k WHERE f.km IN ('k0001', 'k0005', 'zz') GROUP BY 1",
    ]
    conn = s.conn
    check_everywhere(s, queries, workers=4, daemon=4, expect=nonempty)
    if icu_nondeterministic(conn):
        set_side(conn, s.w, True)
        plan = plan_of(conn, "SELECT count(*) FROM f JOIN dfw ON f.kf = dfw.k COLLATE public.pgwarp_test_ci")
        assert "WarpPreAgg" not in plan, plan


def test_snowflake_arms(mk):
    """Dimensions joined among themselves (a snowflake: supplier -> nation
    -> region) form one arm, whose join PostgreSQL plans and the engine
    runs as one dimension: group keys and quals anywhere in the arm, heap
    and Arrow members, NULL and missing keys inside the arm, two arms, an
    arm beside a plain dimension, 1 and 4 threads, parallel workers, the
    daemon.  An outer join into an arm, a condition between the fact table
    and an arm member other than the key, and an arm joined to the fact
    table twice stay PostgreSQL's."""
    n = 20000
    rows = [(i, i % 120 if i % 31 else None, (i * 7) % 50, (i * 13) % 1000 - 500) for i in range(n)]
    s = mk()
    s.table("f", [("id", "int4"), ("sk", "int4"), ("pk", "int4"), ("v", "int8")], rows, batch_rows=3000)
    s.table("supp", [("sk", "int4"), ("nk", "int4"), ("sname", "text")],
            [(k, None if k % 17 == 3 else k % 25, "s%d" % k) for k in range(110)], arrow=False)
    s.table("nation", [("nk", "int4"), ("rk", "int8"), ("nname", "text")],
            [(k, k % 5, "n%d" % k) for k in range(22)])
    s.table("region", [("rk", "int8"), ("rname", "text")], [(k, "r%d" % k) for k in range(4)],
            arrow=False)
    s.table("part", [("pk", "int4"), ("cat", "text")], [(k, "c%d" % (k % 6)) for k in range(45)],
            arrow=False)
    s.table("cat", [("cat", "text"), ("brand", "text")], [("c%d" % k, "b%d" % (k % 2)) for k in range(5)],
            arrow=False)
    queries = [
        "SELECT region.rname, count(*), sum(f.v) FROM f JOIN supp ON f.sk = supp.sk "
        "JOIN nation ON supp.nk = nation.nk JOIN region ON nation.rk = region.rk GROUP BY 1",
        "SELECT nation.nname, supp.sname, count(*) FROM f JOIN supp ON f.sk = supp.sk "
        "JOIN nation ON supp.nk = nation.nk WHERE nation.rk <> 2 AND f.v > 0 GROUP BY 1, 2",
        "SELECT region.rname, cat.brand, count(*), max(f.v) FROM f JOIN supp ON f.sk = supp.sk "
        "JOIN nation ON supp.nk = nation.nk JOIN region ON nation.rk = region.rk "
        "JOIN part ON f.pk = part.pk JOIN cat ON part.cat = cat.cat GROUP BY 1, 2",
        "SELECT nation.nname, part.cat, sum(f.v) FROM f JOIN supp ON f.sk = supp.sk "
        "JOIN nation ON supp.nk = nation.nk JOIN part ON f.pk = part.pk "
        "WHERE region_ok(nation.rk) GROUP BY 1, 2",
        "SELECT count(*), sum(f.v) FROM f JOIN supp ON f.sk = supp.sk JOIN nation ON supp.nk = nation.nk "
        "AND nation.nname LIKE 'n1%'",
    ]
    conn = s.conn
    for side in (s.w, s.h):
        conn.execute("CREATE FUNCTION %s.region_ok(int8) RETURNS bool LANGUAGE sql IMMUTABLE "
                     "AS 'SELECT $1 < 3'" % side)
    check_everywhere(s, queries, workers=3, daemon=3, expect=nonempty)
    # PostgreSQL's plan
    check(s, "SELECT count(*) FROM f JOIN supp ON f.sk = supp.sk JOIN nation ON supp.nk = nation.nk "
             "AND nation.rk < f.v", offload=False, expect=nonempty)
    check(s, "SELECT nation.nname, count(*) FROM f JOIN supp ON f.sk = supp.sk "
             "LEFT JOIN nation ON supp.nk = nation.nk GROUP BY 1", offload=False, expect=nonempty)
    check(s, "SELECT count(*) FROM f JOIN supp ON f.sk = supp.sk JOIN nation ON supp.nk = nation.nk "
             "AND nation.nk = f.pk", offload=False)
    set_side(conn, s.w, True)
    for q in ("SELECT count(*) FROM f JOIN supp ON f.sk = supp.sk JOIN nation ON supp.nk = nation.nk "
              "AND nation.rk < f.v",
              "SELECT nation.nname, count(*) FROM f JOIN supp ON f.sk = supp.sk "
              "LEFT JOIN nation ON supp.nk = nation.nk GROUP BY 1"):
        assert "WarpPreAgg" not in plan_of(conn, q), q


def test_two_column_joins(mk):
    """A dimension joined by two int2/int4 columns: the engine packs each
    pair into one int8 key (a * 2^32 + (b + 2^31)) on both sides.  Inner,
    left, semi and anti joins, either column order, int2 beside int4,
    negative values and both ends of the int4 range, NULLs in either
    column on either side, duplicate pairs, an Arrow dimension (cached
    across queries) and a heap one; 1 and 4 threads, parallel workers, the
    daemon.  Three
    columns, or an int8 column, stay PostgreSQL's."""
    import random
    rnd = random.Random(16)
    n = 30000
    edge = [-2147483648, 2147483647, 0, -1]
    rows = [(i, None if i % 37 == 0 else rnd.choice(edge + list(range(-5, 40))),
             None if i % 41 == 0 else rnd.randint(-4, 12), (i * 7) % 100, i % 5) for i in range(n)]
    s = mk()
    s.table("f", [("id", "int4"), ("x", "int4"), ("y", "int2"), ("v", "int8"), ("z", "int4")], rows,
            batch_rows=5000)
    dim = [(a, b, "n%d" % ((a * 3 + b) % 9)) for a in list(range(-5, 40)) + edge for b in range(-4, 10)]
    dim += [(None, 1, "nul"), (3, None, "nul2"), (3, 2, "dup")]
    s.table("d2", [("a", "int4"), ("b", "int2"), ("name", "text")], dim, arrow=False)
    s.table("da", [("a", "int4"), ("b", "int4"), ("name", "text")], dim)
    queries = [
        "SELECT d2.name, count(*), sum(f.v) FROM f JOIN d2 ON f.x = d2.a AND f.y = d2.b GROUP BY 1",
        "SELECT d2.name, count(*) FROM f JOIN d2 ON f.y = d2.b AND f.x = d2.a GROUP BY 1",
        "SELECT d2.name, count(*), max(f.id) FROM f LEFT JOIN d2 ON f.x = d2.a AND f.y = d2.b GROUP BY 1",
        "SELECT count(*), sum(v) FROM f WHERE EXISTS "
        "(SELECT 1 FROM d2 WHERE d2.a = f.x AND d2.b = f.y AND d2.name <> 'n3')",
        "SELECT count(*), sum(v) FROM f WHERE NOT EXISTS (SELECT 1 FROM d2 WHERE d2.a = f.x AND d2.b = f.y)",
        "SELECT da.name, count(*), sum(f.v) FROM f JOIN da ON f.x = da.a AND f.y = da.b GROUP BY 1",
        "SELECT da.name, d2.name, count(*) FROM f JOIN da ON f.x = da.a AND f.y = da.b "
        "JOIN d2 ON f.z = d2.a AND f.id = d2.b GROUP BY 1, 2",
    ]
    conn = s.conn
    check_everywhere(s, queries, workers=2, daemon=3, expect=nonempty)
    set_side(conn, s.w, True)
    plan = plan_of(conn, queries[0])
    assert "Join Keys: (f.x, f.y) = (d2.a, d2.b)" in plan, plan
    for q in ("SELECT count(*) FROM f JOIN d2 ON f.x = d2.a AND f.y = d2.b AND f.z = d2.a",
              "SELECT count(*) FROM f JOIN d2 ON f.v = d2.a AND f.y = d2.b"):
        check(s, q, offload=False)
        assert "WarpPreAgg" not in plan_of(conn, q), q


def test_scan_prefilter(mk):
    """Queries no pg_warp plan takes (no aggregation, window functions)
    still get the engine as a row prefilter of arrow_fdw's scan: the quals
    it computes exactly are evaluated over each batch before rows become
    tuples, PostgreSQL then evaluates every qual on the rows kept.  Equal to
    the heap with text, numeric, float, date/time and NULL-heavy quals, in
    parallel scans too; a qual that errors leaves the batch to PostgreSQL
    (same error, or none when a LIMIT stops first); simple "column OP
    constant" clauses stay with the raw-value filter.  WarpScan, which
    takes such single-table queries by default, is off here
    (test_warp_scan.py tests it)."""
    from decimal import Decimal as Dec
    rows = [(i, None if i % 13 == 0 else i % 97, None if i % 7 == 0 else ["AIR", "MAIL", "SHIP", "RAIL"][i % 4],
             Dec(i % 5000) / 100, None if i % 11 == 0 else i * 0.5, TS(2020, 1, 1) + datetime.timedelta(hours=i))
            for i in range(20000)]
    s = mk()
    s.table("f", [("id", "int4"), ("k", "int4"), ("t", "text"), ("m", "numeric(8,2)"), ("x", "float8"),
                  ("ts", "timestamp")], rows, batch_rows=3000)
    conds = ["t LIKE '%AI%' AND k * 2 > 50", "(k % 3 = 1 OR x > 9000) AND t <> 'SHIP'",
             "m * 2 > 80.5 AND k IS NOT NULL", "date_part('hour', ts) BETWEEN 3 AND 5",
             "COALESCE(k, -1) < 0", "t IN ('AIR', 'RAIL') AND NOT (x < 100)", "k + id > 15000"]
    conn = s.conn
    conn.execute("SET pg_warp.enable_scan = off")
    try:
        prefilter_cases(mk, s, conds)
    finally:
        conn.execute("RESET pg_warp.enable_scan")


def prefilter_cases(mk, s, conds):
    conn = s.conn
    for c in conds:
        check(s, "SELECT id, k, t, m FROM f WHERE %s ORDER BY id" % c, offload=False,
              expect=nonempty)
        check(s, "SELECT id, row_number() OVER (ORDER BY id DESC) FROM f WHERE %s ORDER BY id" % c,
              offload=False, expect=nonempty)
        set_side(conn, s.w, True)
        plan = plan_of(conn, "SELECT id FROM f WHERE %s ORDER BY id" % c)
        assert "Engine Prefilter" in plan, plan
    # parallel scans: every participant prefilters its batches
    settings = ["max_parallel_workers_per_gather = 2", "parallel_setup_cost = 0", "parallel_tuple_cost = 0",
                "min_parallel_table_scan_size = 0"]
    try:
        for st in settings:
            conn.execute("SET " + st)
        for c in conds[:3]:
            check(s, "SELECT id, t FROM f WHERE %s ORDER BY id" % c, offload=False, expect=nonempty)
    finally:
        for st in settings:
            conn.execute("RESET " + st.split(" =")[0])
        conn.execute("SET max_parallel_workers_per_gather = 0")
    # errors are PostgreSQL's, where it meets them
    check(s, "SELECT id FROM f WHERE 10 / (id - 4000) > 100 ORDER BY id", offload=False,
          expect="error:22012")
    check(s, "SELECT id FROM f WHERE 10 / (id - 2500) >= 0 LIMIT 1", offload=False,
          expect=lambda r: len(r) == 1)
    # a qual the engine does not compute (abs) that PostgreSQL evaluates
    # first raises its error before a later qual could drop the row: the
    # prefilter stops at it (found by the differential test)
    s2 = mk("err")
    s2.table("g", [("id", "int4"), ("i", "int4")], [(j, -2147483648 if j == 77 else j) for j in range(200)])
    check(s2, "SELECT id FROM g WHERE id NOT IN (1, 2, 3, 4, NULL) AND abs(i) > 10", offload=False,
          expect="error:22003")
    # the raw-value filter's clauses are not evaluated twice
    set_side(conn, s.w, True)
    plan = plan_of(conn, "SELECT id FROM f WHERE k < 10 ORDER BY id")
    assert "Engine Prefilter" not in plan, plan
    conn.execute("SET pg_warp.enable_scan_filter = off")
    try:
        plan = plan_of(conn, "SELECT id FROM f WHERE k * 2 > 50 ORDER BY id")
        assert "Engine Prefilter" not in plan, plan
    finally:
        conn.execute("RESET pg_warp.enable_scan_filter")


def test_raw_text_filter_across_batches(mk):
    """arrow_fdw's raw-value row filter decides `text_column = 'value'` from
    the files' bytes.  The value used to be copied into the first batch's
    memory, which is reset before the next batch: later batches compared
    with freed bytes and dropped matching rows as soon as other columns
    reused that memory (found by the differential test with another seed).
    Every batch, with pg_warp off and on, equals the heap."""
    rows = [(i, ["air", "AIR", "mail", ""][i % 4] if i % 9 else None,
             D(1999, 1, 1) + datetime.timedelta(days=(i * 37) % 700), i % 13) for i in range(8000)]
    s = mk()
    s.table("f", [("id", "int4"), ("tx", "text"), ("d", "date"), ("v", "int4")], rows, batch_rows=1100)
    conn = s.conn
    for q in ("SELECT id, v FROM f WHERE tx = 'air' AND extract(week FROM d) > 0 ORDER BY id",
              "SELECT id FROM f WHERE tx = 'AIR' AND d > '1999-03-01' AND v * 2 > 4 ORDER BY id",
              "SELECT count(*), sum(v) FROM f WHERE tx = 'mail' AND date_part('month', d) > 3"):
        set_side(conn, s.h, False)
        want = run(conn, q)
        assert want[0] == "ok" and len(want[1]) > 0, want
        for warp in (False, True):
            set_side(conn, s.w, warp)
            got = run(conn, q)
            assert same_result(got, want, False) is None, (q, warp, _short(got), _short(want))


def test_threads_float_order(mk):
    """Whether a float sum overflows depends on the order of the additions
    when values come near the top of the range: PostgreSQL adds in row
    order, the engine's threads each add a part.  Such values make the
    engine re-run the query in one thread, so the answer (here NaN: a NaN
    comes before the two huge values meet) and the errors stay
    PostgreSQL's."""
    rows = [(0, 1e308, 1e300), (1, NAN, NAN)] + [(2 + i, 1e308 if i % 2 == 0 else 1.0, 1e300)
                                                  for i in range(40)]
    s = mk()
    s.table("f", [("id", "int4"), ("x", "float8"), ("y", "float8")], rows, batch_rows=2)
    conn = s.conn
    conn.execute("SET pg_warp.cpu_threads = 4")
    try:
        check(s, "SELECT sum(x), avg(y) FROM f", expect=lambda r: math.isnan(r[0][0]))
        check(s, "SELECT sum(x) FROM f WHERE id > 1", expect="error:22003")
        check(s, "SELECT id % 3, sum(x), count(*) FROM f GROUP BY 1")
        set_side(conn, s.w, True)
        lines = [r[0] for r in run(conn, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT sum(x) FROM f")[1]]
        assert any("Fallback: float sums re-run in row order" in l for l in lines), lines
    finally:
        conn.execute("RESET pg_warp.cpu_threads")


def test_threads_merge_groups(mk):
    """The CPU driver's threads each keep their own groups; they are merged
    before PostgreSQL sees them (warp_group_merge.c), so a group every
    thread saw reaches the Finalize step once.  Many groups (integer,
    NULL, text and date keys; every aggregate kind, FILTER, a DISTINCT
    aggregate beside plain ones, GROUPING SETS) must give PostgreSQL's
    answers, and EXPLAIN ANALYZE must show as many groups as there are
    distinct keys, merged from more partial groups."""
    words = ["", "a", "bb", "ccc", "dd", "e" * 40]
    rows = []
    for i in range(60000):
        rows.append((i, None if i % 17 == 0 else (i * 7919) % 4001,
                     None if i % 23 == 0 else words[(i * 31) % 6] + str(i % 50),
                     datetime.date(2000, 1, 1) + datetime.timedelta(days=(i * 13) % 900),
                     None if i % 11 == 0 else ((i * 104729) % 20001 - 10000) / 8.0,
                     None if i % 13 == 0 else ((i * 2654435761) % (1 << 62)) - (1 << 61),
                     None if i % 7 == 0 else decimal.Decimal((i * 37) % 100000 - 50000) / 100,
                     (i * 3) % 1000))
    s = mk()
    s.table("f", [("id", "int4"), ("k", "int4"), ("t", "text"), ("d", "date"), ("x", "float8"),
                  ("b", "int8"), ("p", "numeric(12,2)"), ("v", "int4")], rows, batch_rows=500)
    conn = s.conn
    queries = [
        "SELECT k, count(*), sum(v), avg(v), min(v), max(d), sum(b), avg(b) FROM f GROUP BY k",
        "SELECT k, t, count(x), sum(x), avg(x), min(x), max(x) FROM f GROUP BY k, t",
        "SELECT t, d, sum(p), avg(p), min(p), max(p), count(*) FILTER (WHERE v > 500) FROM f GROUP BY t, d",
        "SELECT v, count(DISTINCT k), sum(v), count(*) FROM f GROUP BY v",
        "SELECT k, v % 3, sum(b), count(*) FROM f GROUP BY ROLLUP (k, v % 3)",
        "SELECT k, count(*) FROM f GROUP BY k HAVING sum(v) > 8000 ORDER BY k LIMIT 50",
    ]
    conn.execute("SET pg_warp.cpu_threads = 4")
    try:
        for q in queries:
            check(s, q)
        # the plan the check above ran: 4 threads, merged groups
        set_side(conn, s.w, True)
        conn.execute("SET pg_warp.explain_stable = off")
        # keys every thread meets (an integer; a text key with another):
        # as many groups go up as there are distinct keys, merged from more
        # partial ones whenever more than one thread took work (on a busy
        # machine one thread may take every unit before the others start,
        # so the merge must be seen in one of several runs)
        for keys in ("v", "t, v % 7"):
            want = run(conn, "SELECT count(*) FROM (SELECT DISTINCT %s FROM f) s" % keys)[1][0][0]
            seen_merge = False
            for attempt in range(20):
                lines = [r[0] for r in run(conn, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) "
                                                 "SELECT %s, count(*) FROM f GROUP BY %s" % (keys, keys))[1]]
                groups = [int(l.split(":")[1]) for l in lines if l.strip().startswith("Groups:")]
                merged = [int(l.split(":")[1]) for l in lines if "Partial Groups Merged:" in l]
                assert groups == [want], (keys, want, lines)
                assert not merged or merged[0] >= want, (keys, lines)
                if merged and merged[0] > want:
                    seen_merge = True
                    break
            assert seen_merge, (keys, lines)
    finally:
        conn.execute("RESET pg_warp.explain_stable")
        conn.execute("RESET pg_warp.cpu_threads")


def test_numeric_batch_skipping(mk):
    """Batches skipped on the Decimal128 min/max statistics of a numeric
    column, compared through numeric's own order (scale-insensitive; NaN
    and Infinity above every value), for the engine and arrow_fdw's own
    scan; answers equal vanilla's, and the skipping is seen in EXPLAIN."""
    s = mk()
    D = decimal.Decimal
    rows = [(i, None if i % 11 == 0 else D(i * 7 - 14000) / 100, i % 5) for i in range(4000)]
    s.table("f", [("id", "int4"), ("p", "numeric(12,2)"), ("g", "int4")], rows,
            batch_rows=400, stats=True)
    conn = s.conn
    conds = ["p > 100.00", "p >= 139.93", "p < -139.99", "p <= -140.00", "p = 0", "p = 0.000",
             "p = 12.345", "p > 139.93", "p BETWEEN -10.5 AND 10.5", "p = 70.07 AND id > 0",
             "p > 1e20", "p < -1e-30",
             # NaN/Infinity constants decide the comparison for every row
             "p < 'NaN'", "p > 'Infinity'", "p <= '-Infinity'", "p >= 'NaN'", "p <> 'NaN'",
             "'Infinity' > p", "p = '-Infinity'", "p > 123456789012345678901234.5",
             "-123456789012345678901234.5 < p"]
    for cond in conds:
        check(s, "SELECT count(*), sum(p), min(id), max(id) FROM f WHERE " + cond)
        check(s, "SELECT g, count(*), sum(p) FROM f WHERE %s GROUP BY g" % cond)
    set_side(conn, s.w, True)
    for warp in ("on", "off"):
        conn.execute("SET pg_warp.enabled = " + warp)
        lines = [r[0] for r in run(conn, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) "
                                         "SELECT count(*), sum(p) FROM f WHERE p > 100.00")[1]]
        skipped = [int(l.split(":")[1]) for l in lines if "Batches Skipped:" in l]
        # 10 batches of 400 rows, p rising with id: those whose largest p is
        # at most 100 are skipped
        want = sum(1 for b in range(10)
                   if max(r[1] for r in rows[b * 400:(b + 1) * 400] if r[1] is not None) <= 100)
        assert want >= 5 and skipped == [want], (warp, want, lines)
        assert any("Batch Skipping:" in l and "p > 100.00" in l for l in lines), lines
    # a parameter, evaluated once per scan
    conn.execute("SET pg_warp.enabled = on")
    conn.execute("PREPARE ps(numeric) AS SELECT count(*), sum(p) FROM f WHERE p <= $1")
    try:
        conn.execute("SET plan_cache_mode = force_generic_plan")
        got = run(conn, "EXECUTE ps(-130.5)")
        set_side(conn, s.h, False)
        want = run(conn, "SELECT count(*), sum(p) FROM f WHERE p <= -130.5")
        assert got == want and want[1][0][0] > 0, (got, want)
    finally:
        conn.execute("DEALLOCATE ps")
        conn.execute("RESET plan_cache_mode")


def test_count_distinct_in_engine(mk):
    """count(DISTINCT x) alone or beside plain aggregates, x an integer-like fact
    column: the engine groups by (keys, x), merges the threads' groups and
    counts the distinct x per key itself (warp_group_merge_regroup); the Agg
    above only adds the counts.  Answers equal vanilla's on 1 and 4
    threads, under parallel-worker settings (where the plan must stay
    serial) and through the daemon; keys whose engine identity is not the
    type's equality (a left join's dimension column, floats, numeric) keep
    the plan where PostgreSQL counts DISTINCT."""
    rows = [(i, None if i % 13 == 0 else (i * 7919) % 501, None if i % 9 == 0 else i % 17,
             ["a", "b", "", "dd"][i % 4] if i % 10 else None, (i % 6) * 0.5, i % 40,
             datetime.date(2001, 1, 1) + datetime.timedelta(days=i % 77),
             decimal.Decimal(i % 5) / 10)
            for i in range(30000)]
    s = mk()
    s.table("f", [("id", "int4"), ("x", "int4"), ("k", "int4"), ("t", "text"), ("fl", "float8"),
                  ("dk", "int4"), ("d", "date"), ("nm", "numeric(4,1)")], rows, batch_rows=700)
    s.table("dim", [("id", "int4"), ("grp", "text"), ("g2", "int4")],
            [(i, None if i % 7 == 0 else "g%d" % (i % 4), i % 3) for i in range(35)], arrow=False)
    engine = [
        "SELECT k, count(DISTINCT x), sum(x), count(*) FROM f GROUP BY k",
        "SELECT count(DISTINCT x), count(*), min(d) FROM f",
        "SELECT count(DISTINCT x), count(*) FROM f WHERE id < 0",
        "SELECT t, k, count(DISTINCT d) AS cd, sum(x) FROM f GROUP BY t, k",
        "SELECT dim.grp, count(DISTINCT f.x), sum(f.k) FROM f JOIN dim ON f.dk = dim.id GROUP BY dim.grp",
        "SELECT k, count(DISTINCT x) c, count(*) FROM f GROUP BY k HAVING count(DISTINCT x) > 400 "
        "ORDER BY count(DISTINCT x) DESC, k LIMIT 5",
        "SELECT k, count(DISTINCT dk), count(x) FILTER (WHERE x > 100) FROM f GROUP BY k",
        # alone, or beside min/max only
        "SELECT k, count(DISTINCT x) FROM f GROUP BY k",
        "SELECT count(DISTINCT x) FROM f",
        "SELECT t, count(DISTINCT x), max(d), min(x) FROM f GROUP BY t",
    ]
    postgres = [
        "SELECT dim.grp, count(DISTINCT f.x), sum(f.k) FROM f LEFT JOIN dim ON f.dk = dim.id GROUP BY dim.grp",
        "SELECT fl, count(DISTINCT x), count(*) FROM f GROUP BY fl",
        "SELECT nm, count(DISTINCT x), count(*) FROM f GROUP BY nm",
        "SELECT k, count(DISTINCT x), count(DISTINCT d), count(*) FROM f GROUP BY k",
    ]
    conn = s.conn
    check_everywhere(s, engine + postgres, workers=len(engine), daemon=len(engine))
    set_side(conn, s.w, True)
    for q in engine:
        assert "Counts DISTINCT" in plan_of(conn, q), (q, plan_of(conn, q))
    for q in postgres:
        assert "Counts DISTINCT" not in plan_of(conn, q), (q, plan_of(conn, q))


def test_in_sets(mk):
    """IN lists and = ANY / <> ALL arrays of more than 8 values, which the
    engine decides by a binary search of the sorted distinct values (one
    WN_IN_SET node): int2/int4/int8 columns against lists of any integer
    type (members beyond the column's range, duplicates, extremes), date,
    timestamp and timestamptz against their own types, text and a
    dictionary-encoded varchar (the empty string, strings absent from the
    data); NULL columns, NULL members (x IN (..., NULL) is NULL where x is
    no member, NOT IN then never true), inside CASE and FILTER, beside
    other quals; arrays from parameters under generic plans; on 1 and 4
    threads and in parallel workers, every answer PostgreSQL's."""
    import random
    rnd = random.Random(314)
    n = 20000
    words = ["AIR", "MAIL", "SHIP", "TRUCK", "RAIL", "FOB", "REG AIR", "", "a", "Z", "\u00e9t\u00e9", "x y"]
    d0 = datetime.date(2020, 1, 1)
    t0 = datetime.datetime(2020, 1, 1)
    i4 = [None if i % 23 == 0 else rnd.choice([rnd.randint(-40, 40), 2147483647, -2147483648])
          for i in range(n)]
    txt = [None if i % 19 == 0 else rnd.choice(words) for i in range(n)]
    tab = pa.table({
        "id": pa.array(range(n), pa.int32()),
        "i2": pa.array([None if i % 29 == 0 else rnd.choice([rnd.randint(-40, 40), 32767, -32768])
                        for i in range(n)], pa.int16()),
        "i4": pa.array(i4, pa.int32()),
        "i8": pa.array([None if v is None else v * 4294967296 + (v % 3) for v in i4], pa.int64()),
        "dt": pa.array([None if i % 31 == 0 else d0 + datetime.timedelta(days=rnd.randint(0, 60))
                        for i in range(n)], pa.date32()),
        "ts": pa.array([None if i % 37 == 0 else t0 + datetime.timedelta(hours=rnd.randint(0, 200))
                        for i in range(n)], pa.timestamp("us")),
        "tz": pa.array([None if i % 41 == 0 else t0 + datetime.timedelta(minutes=30 * rnd.randint(0, 100))
                        for i in range(n)], pa.timestamp("us", tz="UTC")),
        "t": pa.array(txt, pa.string()),
        "v": pa.array(txt, pa.string()).dictionary_encode(),
        "x": pa.array([rnd.uniform(-10, 10) for i in range(n)], pa.float64()),
    })
    cols = [("id", "int4"), ("i2", "int2"), ("i4", "int4"), ("i8", "int8"), ("dt", "date"),
            ("ts", "timestamp"), ("tz", "timestamptz"), ("t", "text"), ("v", "varchar(20)"),
            ("x", "float8")]
    s = mk()
    s.table("f", cols, arrow_table=tab, batch_rows=3000)
    ints = "1, 2, 3, 5, 8, 13, 21, 34, -1, -2, -3, 3, 2147483647, 0"
    ints_null = "4, 6, 9, 10, -10, -20, -30, 30, 20, NULL"
    dates = ", ".join("'2020-01-%02d'" % d for d in range(1, 31, 3)) + ", '1999-01-01', 'infinity'"
    stamps = ", ".join("'2020-01-%02d %02d:00'" % (1 + h // 24, h % 24) for h in range(0, 200, 17))
    zones = ", ".join("'2020-01-01 %02d:%02d+00'" % (m // 60, m % 60) for m in range(0, 1440, 90))
    strs = "'AIR', 'MAIL', '', 'nope', 'RAIL', 'x y', 'a', 'b', 'c', '\u00e9t\u00e9'"
    qs = ["SELECT i4 %% 5, count(*), sum(id) FROM f WHERE i4 IN (%s) GROUP BY 1" % ints,
          "SELECT count(*), sum(i4) FROM f WHERE i2 NOT IN (%s)" % ints,
          "SELECT count(*), sum(i2) FROM f WHERE i2 IN (%s, 40000, 32767, -32768)" % ints,
          "SELECT count(*) FROM f WHERE i8 IN (%s)" % ", ".join(str(v * 4294967296 + (v % 3))
                                                                for v in range(-12, 12)),
          "SELECT i8 IN (1, 2, 4294967296, 4294967297, -4294967294, 8589934594, 0, 7, 9) AS m, "
          "count(*) FROM f GROUP BY 1",
          "SELECT count(*) FROM f WHERE i4 NOT IN (%s)" % ints_null,
          "SELECT count(*) FILTER (WHERE i4 IN (%s)), count(*) FILTER (WHERE i4 NOT IN (%s)), "
          "count(*) FILTER (WHERE (i4 IN (%s)) IS NULL) FROM f" % (ints_null, ints, ints_null),
          "SELECT count(*), min(dt) FROM f WHERE dt IN (%s)" % dates,
          "SELECT count(*) FROM f WHERE dt NOT IN (%s) AND x > 0" % dates,
          "SELECT count(*), max(ts) FROM f WHERE ts IN (%s)" % stamps,
          "SELECT count(*), min(tz) FROM f WHERE tz IN (%s)" % zones,
          "SELECT t, count(*) FROM f WHERE t IN (%s) GROUP BY t" % strs,
          "SELECT count(*) FROM f WHERE v NOT IN (%s)" % strs,
          "SELECT count(*) FROM f WHERE v IN (%s, NULL) OR i4 = 0" % strs,
          "SELECT sum(CASE WHEN t IN (%s) THEN 1 ELSE 0 END), "
          "sum(CASE WHEN i4 IN (%s) THEN i2 END) FROM f WHERE id %% 3 = 0" % (strs, ints),
          "SELECT i2 %% 3, count(*) FROM f WHERE i4 = ANY('{%s}'::int8[]) GROUP BY 1"
          % ",".join(str(v) for v in range(-40, 40, 3))]
    # through pg_warp_gpud too (the GPU on the GPU machine: the integer and
    # date/time sets run in the device driver's row evaluator there)
    check_everywhere(s, qs, workers=2, daemon=len(qs))
    st = gpud_status(s.conn)
    if st is not None:
        set_side(s.conn, s.w, True)
        s.conn.execute("SET pg_warp.mode = gpu")
        try:
            for q in (qs[0], qs[3], qs[6], qs[8], qs[10]):
                text = "\n".join(r[0] for r in s.conn.execute("EXPLAIN (ANALYZE, VERBOSE) " + q))
                assert "Ran On: " in text and ("Ran On: GPU" in text) == (st[0] == "gpu") and \
                    "Fallback" not in text, \
                    "%s\n%s" % (q, text)
        finally:
            s.conn.execute("SET pg_warp.mode = cpu")
    for q in (qs[0], qs[7], qs[9], qs[10], qs[11]):
        check(s, q, expect=nonempty, node="Custom Scan (Warp")
    check(s, qs[5], expect=lambda r: r[0][0] == 0, node="Custom Scan (Warp")
    big = ",".join(str(v) for v in range(-30, 30, 2))
    stmts = {
        "s1": ("(int4[])", "SELECT i4 % 3, count(*) FROM f WHERE i4 = ANY($1) GROUP BY 1",
               ["('{%s}')" % big, "('{%s,NULL}')" % big, "('{1,1,1,1,1,1,1,1,1,1}')"]),
        "s2": ("(int8[])", "SELECT count(*) FROM f WHERE i2 <> ALL($1)",
               ["('{%s}')" % big, "('{%s,NULL}')" % big, "('{9223372036854775807,%s}')" % big]),
        "s3": ("(text[])", "SELECT count(*) FROM f WHERE t = ANY($1) OR v <> ALL($1)",
               ["('{AIR,MAIL,SHIP,TRUCK,RAIL,q,r,s,t,\"\"}')", "('{AIR,MAIL,SHIP,TRUCK,RAIL,q,r,s,NULL}')"]),
        "s4": ("(date[])", "SELECT count(*) FROM f WHERE dt = ANY($1)",
               ["('{%s}')" % ",".join(str(d0 + datetime.timedelta(days=d)) for d in range(0, 60, 5))]),
    }
    check_prepared(s, stmts, lambda mode, name, args: mode == "force_generic_plan")


def test_minmax_not_as_top_n(mk):
    """min(x)/max(x) over one table, which PostgreSQL may plan as ORDER BY x
    LIMIT 1 with "x IS NOT NULL" added to the quals (planagg.c): that test
    is cheaper than a timestamptz-date comparison, so it came first and x
    was computed for rows the query's quals drop (a + b overflows in row 7
    here).  PostgreSQL takes that path only where it is cheap (its heap
    plan here is the plain aggregate); a WarpScan Top-N made it cheap (the
    differential test found the error), so the subquery is left to
    PostgreSQL and the aggregate is WarpPreAgg's, which computes x only for
    qualifying rows, as vanilla's Agg does."""
    n = 5000
    t0 = datetime.datetime(1999, 12, 1)
    tab = pa.table({
        "id": pa.array(range(n), pa.int32()),
        "a": pa.array([2147483647 if i == 7 else (i * 7919) % 10007 - 5000 for i in range(n)], pa.int32()),
        "b": pa.array([1 if i == 7 else i % 1000 for i in range(n)], pa.int32()),
        "tz": pa.array([datetime.datetime(2020, 1, 1) if i == 7 else t0 + datetime.timedelta(hours=i % 1000)
                        for i in range(n)], pa.timestamp("us", tz="UTC")),
    })
    s = mk()
    s.table("f", [("id", "int4"), ("a", "int4"), ("b", "int4"), ("tz", "timestamptz")], arrow_table=tab)
    qs = ["SELECT min(a + b) FROM f WHERE tz <= date '2000-01-01'",
          "SELECT max(a + b), min(a - b) FROM f WHERE tz < date '2000-01-20'",
          "SELECT max(a + b) FROM f WHERE tz <= date '2000-01-01' AND id > 3"]
    for q in qs:
        check(s, q, expect=lambda r: r[0][0] is not None)
    # where a qualifying row overflows, the error is PostgreSQL's too
    check(s, "SELECT min(a + b) FROM f WHERE tz > date '1999-01-01'", expect="error:22003")
    # without WarpPreAgg the Top-N WarpScan was the cheapest plan for them
    s.conn.execute("SET pg_warp.enable_preagg = off")
    try:
        for q in qs:
            check(s, q, offload=False, expect=lambda r: r[0][0] is not None)
            set_side(s.conn, s.w, True)
            assert "Top-N" not in plan_of(s.conn, q), plan_of(s.conn, q)
    finally:
        s.conn.execute("RESET pg_warp.enable_preagg")
