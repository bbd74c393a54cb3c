"""arrow_fdw in a database whose encoding is not UTF-8: Arrow strings are
UTF-8, so they are converted on the way in and out (and a character the
database encoding cannot represent is an error, not mojibake)."""
import os

import psycopg
import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

from pwhelpers import pg_dsn

DB = "pgwarp_latin1"


@pytest.fixture(scope="module")
def latin1(db):
    db.execute("DROP DATABASE IF EXISTS %s" % DB)
    db.execute("CREATE DATABASE %s ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0" % DB)
    conn = psycopg.connect(pg_dsn() + " dbname=%s" % DB, autocommit=True)
    conn.execute("SET client_encoding = 'UTF8'")
    conn.execute("CREATE EXTENSION pg_warp")
    yield conn
    conn.close()
    db.execute("DROP DATABASE %s" % DB)


def write(path, table):
    with ipc.new_file(path, table.schema) as w:
        w.write_table(table)


def test_read_converts_to_database_encoding(latin1, scratch):
    path = os.path.join(scratch, "s.arrow")
    values = ["plain", "café", "Grüße", "", None, "ÿ"]
    write(path, pa.table({"s": pa.array(values, pa.utf8())}))
    latin1.execute("CREATE FOREIGN TABLE enc_r (s text) SERVER arrow_fdw OPTIONS (file '%s')" % path)
    got = [r[0] for r in latin1.execute("SELECT s FROM enc_r").fetchall()]
    assert got == values
    # the server really stores LATIN1: one byte per accented character
    assert latin1.execute("SELECT octet_length(s) FROM enc_r WHERE s = 'café'").fetchone()[0] == 4
    # pg_warp's engine compares the files' UTF-8 bytes: in a LATIN1 database
    # text equality, LIKE and text group keys stay PostgreSQL's (costs set so
    # that the engine would otherwise take these tiny queries)
    latin1.execute("SET cpu_tuple_cost = 10000")
    latin1.execute("SET cpu_operator_cost = 2500")
    try:
        for q, want in (("SELECT count(*) FROM enc_r WHERE s = 'café'", [(1,)]),
                        ("SELECT count(*) FROM enc_r WHERE s LIKE 'Gr%e'", [(1,)]),
                        ("SELECT s, count(*) FROM enc_r WHERE s = 'ÿ' GROUP BY s", [("ÿ", 1)])):
            assert latin1.execute(q).fetchall() == want, q
        plan = "\n".join(r[0] for r in latin1.execute(
            "EXPLAIN (VERBOSE) SELECT count(*) FROM enc_r WHERE s = 'café'").fetchall())
        assert "not offloaded" in plan and "UTF8" in plan, plan
    finally:
        latin1.execute("RESET cpu_tuple_cost")
        latin1.execute("RESET cpu_operator_cost")


def test_read_unrepresentable_character_is_an_error(latin1, scratch):
    path = os.path.join(scratch, "u.arrow")
    write(path, pa.table({"s": pa.array(["ok", "snowman \u2603"], pa.utf8())}))
    latin1.execute("CREATE FOREIGN TABLE enc_u (s text) SERVER arrow_fdw OPTIONS (file '%s')" % path)
    with pytest.raises(psycopg.Error) as e:
        latin1.execute("SELECT s FROM enc_u").fetchall()
    assert e.value.sqlstate == "22P05"  # untranslatable_character


def test_insert_writes_utf8(latin1, scratch):
    path = os.path.join(scratch, "w.arrow")
    latin1.execute("CREATE FOREIGN TABLE enc_w (id int, s text) SERVER arrow_fdw "
                   "OPTIONS (file '%s', writable 'true')" % path)
    values = ["café", "Grüße", "ÿ", None]
    with latin1.cursor() as cur:
        cur.executemany("INSERT INTO enc_w VALUES (%s, %s)", list(enumerate(values)))
    t = ipc.open_file(path).read_all()
    t.validate(full=True)
    assert t.column("s").to_pylist() == values
    assert [r[0] for r in latin1.execute("SELECT s FROM enc_w ORDER BY id").fetchall()] == values
