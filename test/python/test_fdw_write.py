"""arrow_fdw write side: INSERT and COPY FROM into writable foreign tables.

The oracles: the same rows in a heap table (compared with EXCEPT ALL both
ways on exact projections), pyarrow reading the file (values, full
validation, per-batch statistics against `pgwarp inspect --json`), and the
tally of what was committed, across rollbacks, errors, concurrent writers
and backends killed with SIGKILL (which makes the postmaster restart every
backend).  The crash test is the last one of this module: it breaks every
connection open at the time.
"""
import json
import os
import random
import signal
import threading
import time

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc as ipc
import pytest

from pwhelpers import cat_values, pg_dsn, wait_for_crash_restart, wait_for_server
from test_fdw_types import canon, check_sql_error, pg_canon, qi, ql

psycopg = pytest.importorskip("psycopg")


def connect():
    return psycopg.connect(pg_dsn(), autocommit=True)


@pytest.fixture(scope="module", autouse=True)
def extension(db):
    db.execute("CREATE EXTENSION IF NOT EXISTS pg_warp")
    yield


_n = [0]


@pytest.fixture
def names(db):
    """Fresh schema; dropped afterwards (if the server is up)."""
    _n[0] += 1
    s = "fdww_%d_%d" % (os.getpid(), _n[0])
    db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % s)
    db.execute("CREATE SCHEMA %s" % s)
    yield s
    try:
        with connect() as c:
            c.execute("DROP SCHEMA IF EXISTS %s CASCADE" % s)
    except psycopg.Error:
        pass


def committed_length(c, path):
    r = c.execute("SELECT length FROM pg_warp_arrow_committed WHERE path = %s", (path,)).fetchone()
    return None if r is None else r[0]


def read_arrow(data_or_path):
    """pyarrow's view of an Arrow IPC file (path or bytes), fully validated."""
    src = data_or_path if isinstance(data_or_path, str) else pa.py_buffer(data_or_path)
    reader = ipc.open_file(src)
    table = reader.read_all()
    table.validate(full=True)
    return reader, table


def read_committed_prefix(c, path):
    """The file cut at its committed length, read by pyarrow."""
    length = committed_length(c, path)
    with open(path, "rb") as f:
        data = f.read()
    assert len(data) >= length, (len(data), length)
    return read_arrow(data[:length])


# ------------------------------------------------------------ values

COLUMNS = """id bigint, i2 smallint, i4 integer, f4 real, f8 double precision,
    n numeric(20,4), b boolean, t text, v varchar(12), j json, by bytea, u uuid,
    d date, tm time, ts timestamp, tz timestamptz, iv interval"""
NAMES = ["id", "i2", "i4", "f4", "f8", "n", "b", "t", "v", "j", "by", "u", "d", "tm", "ts",
         "tz", "iv"]
ARROW_TYPES = {
    "id": pa.int64(), "i2": pa.int16(), "i4": pa.int32(), "f4": pa.float32(),
    "f8": pa.float64(), "n": pa.decimal128(20, 4), "b": pa.bool_(), "t": pa.utf8(),
    "v": pa.utf8(), "j": pa.utf8(), "by": pa.binary(), "u": pa.binary(16), "d": pa.date32(),
    "tm": pa.time64("us"), "ts": pa.timestamp("us"), "tz": pa.timestamp("us", tz="UTC"),
    "iv": pa.month_day_nano_interval()}
PG_TYPES = {"id": "bigint", "i2": "smallint", "i4": "integer", "f4": "real",
            "f8": "double precision", "n": "numeric(20,4)", "b": "boolean", "t": "text",
            "v": "character varying(12)", "j": "json", "by": "bytea", "u": "uuid", "d": "date",
            "tm": "time without time zone", "ts": "timestamp without time zone",
            "tz": "timestamp with time zone", "iv": "interval"}
# exact projection for EXCEPT ALL (floats by bits, numeric by text, interval by fields)
EXACT = ("id, i2, i4, float4send(f4), float8send(f8), n::text, b, t, v::text, j::text, by, u, "
         "d, tm, ts, tz, interval_send(iv)")

GEN = """SELECT i, (i %% 65536 - 32768)::int2, i * 7919 - 1000000, (i / 7.0)::real,
    i / 3.0 * (CASE WHEN i %% 2 = 0 THEN -1 ELSE 1 END), round(i * 1.2345, 4), i %% 3 = 0,
    'row ' || i || ' ✓', 'v' || (i %% 1000), json_build_object('k', i, 'a', ARRAY[i, -i]),
    decode(md5(i::text), 'hex'), md5(i::text)::uuid, date '2000-02-29' + (i * 37 %% 100000 - 50000),
    time '00:00' + i * interval '1.000001 second', timestamp '1900-01-01' + i * interval '37 hours 0.000001 sec',
    timestamptz '2024-03-31 01:30+02' + i * interval '1 day 1 microsecond',
    make_interval(months => i %% 30 - 15, days => i %% 70 - 35, secs => i / 1000.0)
  FROM generate_series(%d, %d) i"""

SPECIAL = """INSERT INTO {src} VALUES
  (-1, -32768, -2147483648, '-0', '-0', -9999999999999999.9999, false, '', '', '[]', '', '00000000-0000-0000-0000-000000000000',
   '4713-01-01 BC', '00:00', '4713-01-01 00:00 BC', '4713-01-01 00:00+00 BC', '-178000000 years -2147483648 days'),
  (-2, 32767, 2147483647, 'NaN', 'NaN', 9999999999999999.9999, true, E'tab\\there\\nnewline \\\\ "q"', 'exactly12chr',
   '{{"deep": {{"x": [1.5e300, null, "é"]}}}}', '\\x00ff00', 'ffffffff-ffff-ffff-ffff-ffffffffffff',
   '5874897-12-31', '23:59:59.999999', '294247-01-10 04:00:54.775807', '294247-01-10 04:00:54.775807+00',
   '178000000 years 2147483647 days 2562047 hours'),
  (-3, 0, 0, 'Infinity', '-Infinity', 0, NULL, '日本語 😀', 'ü', 'null', NULL, NULL,
   '1970-01-01', '23:59:59.999999', '1970-01-01 00:00', '1969-12-31 23:59:59.999999+00', '-1 microsecond'),
  (-4, NULL, NULL, '-Infinity', 'Infinity', -0.0001, true, NULL, NULL, NULL, '\\x', NULL, NULL, NULL, NULL, NULL, NULL),
  (-5, NULL, NULL, 1.401298464324817e-45, 5e-324, 0.0001, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (-6, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)"""


def assert_same_rows(c, a, b, proj=EXACT):
    diff = c.execute("SELECT count(*) FROM ((SELECT %s FROM %s EXCEPT ALL SELECT %s FROM %s) "
                     "UNION ALL (SELECT %s FROM %s EXCEPT ALL SELECT %s FROM %s)) x"
                     % (proj, a, proj, b, proj, b, proj, a)).fetchone()[0]
    assert diff == 0, "%s and %s differ in %d rows" % (a, b, diff)
    na = c.execute("SELECT count(*) FROM %s" % a).fetchone()[0]
    nb = c.execute("SELECT count(*) FROM %s" % b).fetchone()[0]
    assert na == nb


def heap_canon_rows(c, src):
    """Canonical values (test_fdw_types.canon forms) of the heap rows, by id."""
    exprs = []
    for name in NAMES:
        e = "x.%s" % qi(name)
        if name == "u":
            e = "uuid_send(x.u)"
        elif name in ("j", "v"):
            e = "x.%s::text" % name
        exprs.append(pg_canon(ARROW_TYPES[name], e))
    rows = c.execute("SELECT json_build_array(%s)::text FROM %s x ORDER BY x.id"
                     % (", ".join(exprs), src)).fetchall()
    return [json.loads(r[0]) for r in rows]


def arrow_canon_rows(table):
    cols = [[canon(table.schema.field(k).type, v) for v in cat_values(table.column(k))]
            for k in range(table.num_columns)]
    rows = [list(r) for r in zip(*cols)]
    return sorted(rows, key=lambda r: int(r[0]))


def inspect_json(pgwarp, path):
    res = pgwarp("inspect", path, "--json")
    assert res.rc == 0, res.describe()
    return json.loads(res.out)


def check_int_statistics(pgwarp, path, reader, columns):
    """pgwarp inspect's per-batch min/max equal pyarrow's for the columns."""
    info = inspect_json(pgwarp, path)
    assert len(info["batches"]) == reader.num_record_batches
    assert info["rows"] == sum(reader.get_batch(i).num_rows for i in range(reader.num_record_batches))
    for name in columns:
        mins, maxs = [], []
        for bi in range(reader.num_record_batches):
            arr = reader.get_batch(bi).column(name)
            mm = pc.min_max(arr).as_py() if arr.null_count < len(arr) else {"min": None, "max": None}
            entry = [c for c in info["batches"][bi]["columns"] if c["name"] == name]
            assert len(entry) == 1, info["batches"][bi]
            want = (None if mm["min"] is None else str(mm["min"]),
                    None if mm["max"] is None else str(mm["max"]))
            assert (entry[0]["min"], entry[0]["max"]) == want, (name, bi, entry[0], mm)
            mins.append(want[0] or "")
            maxs.append(want[1] or "")
        # the footer's field metadata carries the same values
        md = reader.schema.field(name).metadata or {}
        assert md.get(b"min_values", b"").decode() == ",".join(mins), (name, md)
        assert md.get(b"max_values", b"").decode() == ",".join(maxs), (name, md)
    return info


def test_insert_and_copy_values(db, scratch, names, pgwarp):
    s = names
    path = os.path.join(scratch, "w.arrow")
    src, ft = "%s.src" % s, "%s.ft" % s
    db.execute("CREATE TABLE %s (%s)" % (src, COLUMNS))
    db.execute("INSERT INTO %s %s" % (src, GEN % (1, 30000)))
    db.execute(SPECIAL.format(src=src))
    db.execute("CREATE FOREIGN TABLE %s (%s) SERVER arrow_fdw OPTIONS (file %s, writable 'true')"
               % (ft, COLUMNS, ql(path)))
    assert committed_length(db, path) == 0
    assert not os.path.exists(path)
    assert db.execute("SELECT count(*) FROM %s" % ft).fetchone()[0] == 0

    # a new file, then appends: INSERT ... SELECT, INSERT ... VALUES, COPY FROM
    db.execute("INSERT INTO %s SELECT * FROM %s WHERE id BETWEEN 1 AND 10000" % (ft, src))
    l1 = committed_length(db, path)
    assert l1 == os.path.getsize(path) > 0
    db.execute("INSERT INTO %s SELECT * FROM %s WHERE id < 0" % (ft, src))
    db.execute("INSERT INTO %s (id, t) VALUES (-100, 'only two columns')" % ft)
    db.execute("INSERT INTO %s (id, t) VALUES (-100, 'only two columns')" % src)
    with db.cursor() as cur:
        buf = bytearray()
        with cur.copy("COPY (SELECT * FROM %s WHERE id > 10000 ORDER BY id) TO STDOUT" % src) as cp:
            for chunk in cp:
                buf += chunk
        with cur.copy("COPY %s FROM STDIN" % ft) as cp:
            cp.write(bytes(buf))
    assert committed_length(db, path) == os.path.getsize(path) > l1

    assert_same_rows(db, ft, src)
    assert db.execute("SELECT count(*), sum(id), sum(i4), count(t) FROM %s" % ft).fetchone() == \
        db.execute("SELECT count(*), sum(id), sum(i4), count(t) FROM %s" % src).fetchone()

    # pyarrow agrees: schema of the write-side mapping, values, statistics
    reader, table = read_arrow(path)
    assert reader.num_record_batches >= 4
    assert table.schema.names == NAMES
    for name in NAMES:
        f = table.schema.field(name)
        assert f.type == ARROW_TYPES[name], (name, f.type)
        assert (f.metadata or {}).get(b"pg_type") == PG_TYPES[name].encode(), (name, f.metadata)
    assert arrow_canon_rows(table) == heap_canon_rows(db, src)
    check_int_statistics(pgwarp, path, reader, ["id", "i2", "i4"])

    # IMPORT FOREIGN SCHEMA restores the declared types from pg_type
    db.execute("IMPORT FOREIGN SCHEMA imp FROM SERVER arrow_fdw INTO %s OPTIONS (file %s)"
               % (s, ql(path)))
    types = db.execute("SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute "
                       "WHERE attrelid = %s::regclass AND attnum > 0 ORDER BY attnum",
                       ("%s.imp" % s,)).fetchall()
    assert types == [(n, PG_TYPES[n]) for n in NAMES]
    assert_same_rows(db, "%s.imp" % s, src)


def test_insert_refused_values_leave_nothing(db, scratch, names):
    s = names
    path = os.path.join(scratch, "r.arrow")
    db.execute("CREATE FOREIGN TABLE %s.ft (id int, d date, iv interval, n numeric(6,2), ts timestamp) SERVER arrow_fdw "
               "OPTIONS (file %s, writable 'true')" % (s, ql(path)))
    db.execute("INSERT INTO %s.ft SELECT i, date '2020-01-01' + i, make_interval(days => i), i / 4.0 "
               "FROM generate_series(1, 100) i" % s)
    length = committed_length(db, path)
    for bad in ("INSERT INTO %s.ft (id, d) SELECT i, CASE WHEN i = 5000 THEN 'infinity' ELSE date '2020-01-01' END "
                "FROM generate_series(1, 6000) i",
                "INSERT INTO %s.ft (id, iv) VALUES (1, '1 day'), (2, interval '2562047788 hours')",
                # PostgreSQL's last timestamp is past int64 microseconds since 1970
                "INSERT INTO %s.ft (id, ts) VALUES (1, '294247-01-10 04:00:54.775807'), "
                "(2, '294247-01-10 04:00:54.775808')"):
        with pytest.raises(psycopg.Error):
            db.execute(bad % s)
        assert committed_length(db, path) == length
        assert db.execute("SELECT count(*), sum(id) FROM %s.ft" % s).fetchone() == (100, 5050)
    # UPDATE/DELETE are refused; so is ON CONFLICT
    for q in ("UPDATE %s.ft SET id = 1", "DELETE FROM %s.ft"):
        with pytest.raises(psycopg.Error):
            db.execute(q % s)
    db.execute("INSERT INTO %s.ft (id) VALUES (7)" % s)
    _, t = read_arrow(path)
    assert t.num_rows == 101 and pc.sum(t.column("id")).as_py() == 5057


def test_insert_time_2400_keeps_file_valid(db, scratch, names):
    """time '24:00:00' is a PostgreSQL value but not an Arrow Time64 value
    (the format allows [0, 86400 s)): INSERT must refuse it or store a value
    pyarrow accepts; either way the file stays valid."""
    s = names
    path = os.path.join(scratch, "t24.arrow")
    db.execute("CREATE FOREIGN TABLE %s.ft (id int, tm time) SERVER arrow_fdw "
               "OPTIONS (file %s, writable 'true')" % (s, ql(path)))
    db.execute("INSERT INTO %s.ft VALUES (1, '23:59:59.999999')" % s)
    try:
        db.execute("INSERT INTO %s.ft VALUES (2, '24:00:00')" % s)
        inserted = True
    except psycopg.Error:
        inserted = False
    n = db.execute("SELECT count(*) FROM %s.ft" % s).fetchone()[0]
    assert n == (2 if inserted else 1)
    read_arrow(path)            # full validation


# ------------------------------------------------------------ transactions

def _state(c, ft):
    return c.execute("SELECT count(*), coalesce(sum(v), 0) FROM %s" % ft).fetchone()


def _check_file(c, path, want_rows, want_sum, whole=False):
    reader, t = read_committed_prefix(c, path)
    assert (t.num_rows, pc.sum(t.column("v")).as_py() or 0) == (want_rows, want_sum)
    if whole:
        reader, t = read_arrow(path)
        assert (t.num_rows, pc.sum(t.column("v")).as_py() or 0) == (want_rows, want_sum)
    return t


def test_transactions(db, scratch, names):
    s = names
    path = os.path.join(scratch, "tx.arrow")
    ft = "%s.ft" % s
    db.execute("CREATE FOREIGN TABLE %s (id int, v bigint, t text) SERVER arrow_fdw "
               "OPTIONS (file %s, writable 'true')" % (ft, ql(path)))
    other = connect()
    try:
        # a first INSERT rolled back: nothing committed, the file is rewritten later
        with db.transaction(force_rollback=True):
            db.execute("INSERT INTO %s SELECT i, i, 'a' FROM generate_series(1, 500) i" % ft)
            assert _state(db, ft) == (500, 125250)
            assert _state(other, ft) == (0, 0)
        assert _state(db, ft) == (0, 0) and committed_length(db, path) == 0

        db.execute("INSERT INTO %s SELECT i, i, 'b' FROM generate_series(1, 1000) i" % ft)
        rows, total = 1000, 500500
        assert _state(other, ft) == (rows, total)
        _check_file(db, path, rows, total, whole=True)

        # ROLLBACK
        db.execute("BEGIN")
        db.execute("INSERT INTO %s SELECT i, i, 'c' FROM generate_series(1, 3000) i" % ft)
        assert _state(db, ft) == (rows + 3000, total + 4501500)
        assert _state(other, ft) == (rows, total)
        db.execute("ROLLBACK")
        assert _state(db, ft) == (rows, total)
        _check_file(db, path, rows, total)
        assert os.path.getsize(path) > committed_length(db, path)     # the tail is still there

        # ROLLBACK TO SAVEPOINT between two committed INSERTs
        db.execute("BEGIN")
        db.execute("INSERT INTO %s VALUES (1, 10, 'd')" % ft)
        db.execute("SAVEPOINT s1")
        db.execute("INSERT INTO %s SELECT i, 1000000, 'e' FROM generate_series(1, 2000) i" % ft)
        db.execute("ROLLBACK TO SAVEPOINT s1")
        assert _state(db, ft) == (rows + 1, total + 10)
        db.execute("INSERT INTO %s VALUES (2, 20, 'f')" % ft)
        db.execute("SAVEPOINT s2")
        db.execute("INSERT INTO %s VALUES (3, 1000000, 'g')" % ft)
        db.execute("RELEASE SAVEPOINT s2")
        assert _state(other, ft) == (rows, total)
        db.execute("COMMIT")
        rows, total = rows + 3, total + 10 + 20 + 1000000
        assert _state(other, ft) == (rows, total)
        _check_file(db, path, rows, total, whole=True)

        # an error in the middle of a statement, after more than a record batch of rows
        with pytest.raises(psycopg.errors.DivisionByZero):
            db.execute("INSERT INTO %s SELECT i, 1 / (i - 1100000), 'h' FROM generate_series(1, 1200000) i"
                       % ft)
        assert _state(db, ft) == (rows, total)
        assert _state(other, ft) == (rows, total)
        # the failed statement's batches are cut off at once
        assert os.path.getsize(path) == committed_length(db, path)
        # ... in a transaction with an earlier INSERT that then commits
        db.execute("BEGIN")
        db.execute("INSERT INTO %s VALUES (4, 40, 'i')" % ft)
        db.execute("SAVEPOINT s3")
        with pytest.raises(psycopg.errors.DivisionByZero):
            db.execute("INSERT INTO %s SELECT i, 1 / (i - 5000), 'j' FROM generate_series(1, 6000) i" % ft)
        db.execute("ROLLBACK TO SAVEPOINT s3")
        db.execute("COMMIT")
        rows, total = rows + 1, total + 40
        assert _state(other, ft) == (rows, total)
        _check_file(db, path, rows, total, whole=True)

        # an aborted transaction block
        db.execute("BEGIN")
        db.execute("INSERT INTO %s VALUES (5, 50, 'k')" % ft)
        with pytest.raises(psycopg.errors.DivisionByZero):
            db.execute("SELECT 1 / 0")
        db.execute("ROLLBACK")

        # the next INSERT works, cuts off the tail, and pyarrow reads exactly the committed rows
        db.execute("INSERT INTO %s SELECT i, -i, NULL FROM generate_series(1, 100) i" % ft)
        rows, total = rows + 100, total - 5050
        assert _state(other, ft) == (rows, total)
        assert committed_length(db, path) == os.path.getsize(path)
        t = _check_file(db, path, rows, total, whole=True)
        assert sorted(t.column("t").to_pylist(), key=lambda x: (x is None, x)) == \
            ["b"] * 1000 + ["d", "f", "g", "i"] + [None] * 100
    finally:
        other.close()


# ------------------------------------------------------------ concurrency

def test_concurrent_writers(db, scratch, names):
    s = names
    path = os.path.join(scratch, "cc.arrow")
    ft = "%s.ft" % s
    db.execute("CREATE FOREIGN TABLE %s (w int, k int, v bigint) SERVER arrow_fdw "
               "OPTIONS (file %s, writable 'true')" % (ft, ql(path)))
    nthreads, per = 4, 25
    errors, done = [], threading.Event()
    expected = {}

    def writer(w):
        try:
            with connect() as c:
                rnd = random.Random(w)
                for k in range(per):
                    n = rnd.randint(1, 20000)
                    if k % 3 == 2:
                        with c.cursor() as cur, cur.copy("COPY %s FROM STDIN" % ft) as cp:
                            for i in range(n):
                                cp.write_row((w, k, i))
                    elif k % 5 == 4:
                        with c.transaction():
                            c.execute("INSERT INTO %s SELECT %d, %d, i FROM generate_series(0, %d) i"
                                      % (ft, w, k, n // 2 - 1))
                            c.execute("INSERT INTO %s SELECT %d, %d, i FROM generate_series(%d, %d) i"
                                      % (ft, w, k, n // 2, n - 1))
                    else:
                        c.execute("INSERT INTO %s SELECT %d, %d, i FROM generate_series(0, %d) i"
                                  % (ft, w, k, n - 1))
                    expected[(w, k)] = n
        except Exception as e:      # reported below
            errors.append(repr(e))

    def reader():
        last = 0
        try:
            with connect() as c:
                while not done.is_set():
                    n = c.execute("SELECT count(*) FROM %s" % ft).fetchone()[0]
                    assert n >= last, (n, last)
                    last = n
        except Exception as e:
            errors.append("reader: " + repr(e))

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(nthreads)]
    rt = threading.Thread(target=reader)
    rt.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    done.set()
    rt.join(60)
    assert not errors, errors
    assert len(expected) == nthreads * per
    total_rows = sum(expected.values())
    total_sum = sum(n * (n - 1) // 2 for n in expected.values())
    assert db.execute("SELECT count(*), sum(v) FROM %s" % ft).fetchone() == (total_rows, total_sum)
    got = dict(db.execute("SELECT w * 1000 + k, count(*) FROM %s GROUP BY 1" % ft).fetchall())
    assert got == {w * 1000 + k: n for (w, k), n in expected.items()}
    assert committed_length(db, path) == os.path.getsize(path)
    _, t = read_arrow(path)
    assert t.num_rows == total_rows and pc.sum(t.column("v")).as_py() == total_sum


# ------------------------------------------------------------ crash safety

def test_crash_safety(scratch, names):
    """Rounds of: a committed INSERT, then a backend killed with SIGKILL in
    the middle of a large uncommitted INSERT (or right after sending COMMIT
    for a small one).  After the restart the table and the file's committed
    prefix hold exactly the committed rows.  Must be the last test here."""
    s = names
    path = os.path.join(scratch, "crash.arrow")
    ft = "%s.ft" % s
    with connect() as c:
        c.execute("CREATE FOREIGN TABLE %s (id bigint, v bigint) SERVER arrow_fdw "
                  "OPTIONS (file %s, writable 'true')" % (ft, ql(path)))
    rnd = random.Random(20240601)
    rows, total, next_id = 0, 0, 1
    ids = []
    started = time.time()
    rounds = 12
    outcomes = []
    tails = 0           # rounds whose victim left bytes past the committed length
    for r in range(rounds):
        c = connect()
        n = rnd.randint(1, 5000)
        c.execute("INSERT INTO %s SELECT i, i * 3 FROM generate_series(%d, %d) i"
                  % (ft, next_id, next_id + n - 1))
        ids.append((next_id, next_id + n - 1))
        rows += n
        total += sum(3 * i for i in range(next_id, next_id + n))
        next_id += n
        assert c.execute("SELECT count(*), sum(v) FROM %s" % ft).fetchone() == (rows, total)
        # the committed INSERT cut off what the previous round's victim left
        assert os.path.getsize(path) == committed_length(c, path)

        watch = connect()       # killed by the postmaster's crash restart
        victim = connect()
        pid = victim.execute("SELECT pg_backend_pid()").fetchone()[0]
        victim.execute("BEGIN")
        commit_round = r % 4 == 3
        if commit_round:
            m = rnd.randint(1, 2000)
            victim.execute("INSERT INTO %s SELECT i, i * 3 FROM generate_series(%d, %d) i"
                           % (ft, next_id, next_id + m - 1))
            victim.pgconn.send_query(b"COMMIT")
            time.sleep(rnd.choice([0, 0, 0.0005, 0.002, 0.02]))
        else:
            victim.pgconn.send_query(
                ("INSERT INTO %s SELECT i, i * 3 FROM generate_series(%d, %d) i"
                 % (ft, next_id, next_id + 2500000 - 1)).encode())
            time.sleep(rnd.uniform(0.05, 2.0))
        os.kill(pid, signal.SIGKILL)
        for conn in (victim, c):
            try:
                conn.close()
            except Exception:
                pass
        # wait until the postmaster has terminated the other backends...
        wait_for_crash_restart(watch)
        # ... and the server accepts connections again
        c = wait_for_server(60)
        try:
            got = c.execute("SELECT count(*), coalesce(sum(v), 0) FROM %s" % ft).fetchone()
            if commit_round:
                after = (rows + m, total + sum(3 * i for i in range(next_id, next_id + m)))
                assert got in ((rows, total), after), (r, got, rows, total, m)
                outcomes.append(got == after)
                if got == after:
                    ids.append((next_id, next_id + m - 1))
                    rows, total = after
                next_id += m
            else:
                assert got == (rows, total), (r, got, rows, total)
                next_id += 2500000
            if os.path.getsize(path) > committed_length(c, path):
                tails += 1
            # the committed prefix is a valid file with exactly the committed rows
            _, t = read_committed_prefix(c, path)
            assert t.num_rows == rows and pc.sum(t.column("v")).as_py() == total, r
            want_ids = [i for a, b in ids for i in (a, b)]
            got_ids = sorted(t.column("id").to_pylist())
            assert len(got_ids) == rows and got_ids[0] == 1
            assert sum(got_ids) == sum((a + b) * (b - a + 1) // 2 for a, b in ids)
            assert min(want_ids) == got_ids[0] and max(want_ids) == got_ids[-1]
        finally:
            c.close()
    # a following INSERT works and leaves a file pyarrow reads whole
    with connect() as c:
        c.execute("INSERT INTO %s VALUES (-1, -3)" % ft)
        rows, total = rows + 1, total - 3
        assert c.execute("SELECT count(*), sum(v) FROM %s" % ft).fetchone() == (rows, total)
        assert committed_length(c, path) == os.path.getsize(path)
        _, t = read_arrow(path)
        assert t.num_rows == rows and pc.sum(t.column("v")).as_py() == total
    assert tails >= 2, "the victims never got to write: kill later"
    assert time.time() - started < 120
