"""The fuzz corpora (test/fuzz/corpus/: pyarrow- and DuckDB-written seeds
and the mutated inputs the long libFuzzer runs kept) through the server:
IMPORT FOREIGN SCHEMA, every row's text output (every column converted by
arrow_fdw, nested ones as PostgreSQL arrays, composites or jsonb), every
nested column again declared json and jsonb (arrow_json.c's renderer), and a
count through pg_warp's engine.

The libFuzzer targets (test/fuzz/) check the pure-C reader; this checks what
the server does with what the reader accepts.  Each statement either
succeeds or fails with a data, file, feature or resource SQLSTATE whose
message names the file when it is about the file's content: never an
internal error (XX000), never a crashed backend, never a hang."""
import os
import shutil
import signal
import threading

import pytest

psycopg = pytest.importorskip("psycopg")

HERE = os.path.dirname(os.path.abspath(__file__))
# PGWARP_FUZZ_CORPUS: another root with the same target folders (a long
# run's work corpus, to put everything the fuzzers found through the server)
CORPUS = os.environ.get("PGWARP_FUZZ_CORPUS") or os.path.join(os.path.dirname(HERE), "fuzz", "corpus")
TARGETS = ["fuzz_reader", "fuzz_stream", "fuzz_parquet"]
# what a bad or unusual file may raise: data exceptions, data corrupted,
# system/file errors, not supported, FDW errors, resources, program limits,
# and names IMPORT cannot use (duplicate or reserved column names)
ALLOWED_CLASSES = ("22", "58", "0A", "HV", "53", "54", "42")
TIMEOUT_MS = 20000


def ql(s):
    return "'%s'" % s.replace("'", "''")


@pytest.fixture
def schema(db):
    db.execute("CREATE EXTENSION IF NOT EXISTS pg_warp")
    name = "fuzzsql_%d" % os.getpid()
    db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % name)
    db.execute("CREATE SCHEMA %s" % name)
    yield name
    db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % name)


def run(db, sql, path, problems, what):
    """Executes sql; a problem is recorded unless it succeeds or fails with
    an allowed SQLSTATE.  Returns the rows or None."""
    try:
        cur = db.execute(sql)
        return cur.fetchall() if cur.description else []
    except psycopg.OperationalError as e:
        if db.closed or db.broken:
            raise AssertionError("%s %s: connection lost (backend crash?): %s"
                                 % (what, os.path.basename(path), e))
        err = e
    except psycopg.Error as e:
        err = e
    state = err.sqlstate or ""
    msg = str(err).splitlines()[0] if str(err) else ""
    if state == "57014":
        problems.append("%s %s: hung past %d ms" % (what, os.path.basename(path), TIMEOUT_MS))
    elif state == "XX001" and os.path.basename(path) not in msg:
        problems.append("%s %s: data-corrupted error without the file name: %s"
                        % (what, os.path.basename(path), msg))
    elif not state.startswith(ALLOWED_CLASSES) and state != "XX001":
        problems.append("%s %s: SQLSTATE %s: %s" % (what, os.path.basename(path), state, msg))
    return None


def nested_columns(db, table):
    return [r[0] for r in db.execute(
        "SELECT a.attname FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
        "WHERE a.attrelid = %s::regclass AND a.attnum > 0 AND NOT a.attisdropped "
        "AND (t.typcategory = 'A' OR t.typtype = 'c' OR t.typname IN ('json', 'jsonb')) "
        "ORDER BY a.attnum", (table,)).fetchall()]


def watchdog(db):
    """A statement that ignores statement_timeout (a loop without an
    interrupt check) would hang the test: past 3 times the timeout its
    backend is killed (the server runs on this machine), the connection
    breaks and the test reports the input."""
    pid = db.execute("SELECT pg_backend_pid()").fetchone()[0]

    def kill():
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    t = threading.Timer(3 * TIMEOUT_MS / 1000.0, kill)
    t.daemon = True
    t.start()
    return t


def replay_one(db, schema, scratch, src, problems):
    dog = watchdog(db)
    try:
        _replay_one(db, schema, scratch, src, problems)
    finally:
        dog.cancel()


def _replay_one(db, schema, scratch, src, problems):
    path = os.path.join(scratch, os.path.basename(src))
    shutil.copyfile(src, path)
    os.chmod(path, 0o644)
    db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % schema)
    db.execute("CREATE SCHEMA %s" % schema)
    if run(db, "IMPORT FOREIGN SCHEMA f FROM SERVER arrow_fdw INTO %s OPTIONS (file %s)"
           % (schema, ql(path)), path, problems, "import") is None:
        return
    table = "%s.f" % schema
    run(db, "SELECT t::text FROM %s t" % table, path, problems, "rows")
    run(db, "SELECT count(*) FROM %s" % table, path, problems, "count")
    cols = nested_columns(db, table)
    for jtype in ("json", "jsonb"):
        if not cols:
            break
        decl = ", ".join('"%s" %s' % (c.replace('"', '""'), jtype) for c in cols)
        name = "%s.j%s" % (schema, jtype)
        if run(db, "CREATE FOREIGN TABLE %s (%s) SERVER arrow_fdw OPTIONS (file %s)"
               % (name, decl, ql(path)), path, problems, jtype + " table") is None:
            continue
        run(db, "SELECT t::text FROM %s t" % name, path, problems, jtype)


@pytest.mark.parametrize("target", TARGETS)
def test_corpus_through_the_server(db, schema, scratch, target):
    d = os.path.join(CORPUS, target)
    files = sorted(os.path.join(d, f) for f in os.listdir(d) if not f.startswith("."))
    assert files, "no corpus in %s" % d
    db.execute("SET statement_timeout = %d" % TIMEOUT_MS)
    problems = []
    imported = 0
    for src in files:
        replay_one(db, schema, scratch, src, problems)
        imported += db.execute("SELECT count(*) FROM pg_class c JOIN pg_namespace n "
                               "ON n.oid = c.relnamespace WHERE n.nspname = %s",
                               (schema,)).fetchone()[0] > 0
    db.execute("RESET statement_timeout")
    assert not problems, "\n".join(problems[:30])
    # the seeds are valid files: most of the corpus must import
    assert imported >= min(10, len(files) // 10), (imported, len(files))
