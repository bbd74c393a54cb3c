"""Vector distance operators on real[]: values against numpy (float64),
pgvector's documented behaviour (errors, NULLs, zero vectors), and
ORDER BY ... LIMIT over heap and Arrow foreign tables equal to vanilla
PostgreSQL (pg_warp.enabled = off) on a heap copy loaded with COPY."""
import math
import os

import numpy as np
import psycopg
import pyarrow as pa
import pytest

from vector_data import clustered, exact_order, literal, load

SCHEMA = "vec_ops"
OPS = ["<->", "<#>", "<=>"]


@pytest.fixture(scope="module")
def conn(db):
    db.execute("CREATE EXTENSION IF NOT EXISTS pg_warp")
    db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % SCHEMA)
    db.execute("CREATE SCHEMA %s" % SCHEMA)
    yield db
    db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % SCHEMA)


def one(conn, sql, *args):
    return conn.execute(sql, args).fetchone()[0]


def test_values_against_numpy(conn):
    rng = np.random.default_rng(1)
    for dims in (1, 3, 7, 8, 9, 16, 131, 1536):
        a = rng.normal(0, 10, dims).astype(np.float32)
        b = rng.normal(0, 10, dims).astype(np.float32)
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        got = conn.execute("SELECT %s::real[] <-> %s::real[], %s::real[] <#> %s::real[], "
                           "%s::real[] <=> %s::real[], inner_product(%s::real[], %s::real[]), "
                           "vector_norm(%s::real[]), vector_dims(%s::real[])",
                           [literal(a), literal(b)] * 4 + [literal(a)] * 2).fetchone()
        want = (math.sqrt(((a64 - b64) ** 2).sum()), -(a64 @ b64),
                1 - (a64 @ b64) / math.sqrt((a64 @ a64) * (b64 @ b64)), a64 @ b64,
                math.sqrt(a64 @ a64), dims)
        for g, w in zip(got, want):
            assert g == pytest.approx(w, rel=1e-12, abs=1e-9), (dims, got, want)


def test_pgvector_examples(conn):
    # pgvector's test/expected/functions.out, spelt on real[]
    assert one(conn, "SELECT '{0,0}'::real[] <-> '{3,4}'") == 5
    assert one(conn, "SELECT l2_distance('{0,0}', '{0,1}')") == 1
    assert one(conn, "SELECT inner_product('{1,2}', '{3,4}')") == 11
    assert one(conn, "SELECT '{1,2}'::real[] <#> '{3,4}'") == -11
    assert one(conn, "SELECT cosine_distance('{1,2}', '{2,4}')") == 0
    assert math.isnan(one(conn, "SELECT cosine_distance('{1,2}', '{0,0}')"))
    assert math.isnan(one(conn, "SELECT '{0,0}'::real[] <=> '{0,0}'"))
    assert one(conn, "SELECT cosine_distance('{1,1}', '{1,1}')") == 0
    assert one(conn, "SELECT cosine_distance('{1,1}', '{-1,-1}')") == 2
    assert one(conn, "SELECT cosine_distance('{1,1}', '{1.1,1.1}')") == 0
    assert one(conn, "SELECT cosine_distance('{1,1}', '{-1.1,-1.1}')") == 2
    assert one(conn, "SELECT vector_norm('{3,4}')") == 5
    # large values: sums in double do not overflow where float4 would
    assert one(conn, "SELECT '{3e38}'::real[] <-> '{-3e38}'") == pytest.approx(6e38, rel=1e-7)


@pytest.mark.parametrize("sql,state,text", [
    ("SELECT '{1,2}'::real[] <-> '{3}'", "22000", "different vector dimensions 2 and 1"),
    ("SELECT '{1,2,3}'::real[] <#> '{3,4}'", "22000", "different vector dimensions 3 and 2"),
    ("SELECT '{1}'::real[] <=> '{3,4}'", "22000", "different vector dimensions 1 and 2"),
    ("SELECT '{1,NULL}'::real[] <-> '{3,4}'", "22004", "NULL elements"),
    ("SELECT '{{1,2},{3,4}}'::real[] <-> '{3,4}'", "22000", "one-dimensional"),
    ("SELECT '{}'::real[] <-> '{}'", "22000", "at least 1 dimension"),
])
def test_errors(conn, sql, state, text):
    with pytest.raises(psycopg.Error) as e:
        conn.execute(sql)
    assert e.value.sqlstate == state and text in str(e.value), str(e.value)


def test_null_arrays_are_null(conn):
    assert conn.execute("SELECT NULL::real[] <-> '{1}', '{1}'::real[] <#> NULL, "
                        "cosine_distance(NULL, '{1}')").fetchone() == (None, None, None)


def _same_topk(conn, sql, params=()):
    conn.execute("SET pg_warp.enabled = off")
    want = conn.execute(sql, params).fetchall()
    conn.execute("SET pg_warp.enabled = on")
    got = conn.execute(sql, params).fetchall()
    assert got == want
    return got


@pytest.fixture(scope="module")
def heap(conn):
    x = clustered(3000, 24, 12, seed=7)
    vecs = list(x)
    vecs[5] = None
    vecs[77] = None
    lang = [("en" if i % 3 else "fr",) for i in range(len(vecs))]
    conn.execute("CREATE TABLE %s.h (id int, v real[], lang text)" % SCHEMA)
    load(conn, SCHEMA + ".h", vecs, lang)
    conn.execute("ANALYZE %s.h" % SCHEMA)
    return x


@pytest.mark.parametrize("op", OPS)
def test_heap_topk_equals_numpy_and_vanilla(conn, heap, op):
    x = heap
    q = clustered(1, 24, 12, seed=99)[0]
    rows = _same_topk(conn, "SELECT id, v %s %%s::real[] FROM %s.h ORDER BY v %s %%s::real[], id "
                      "LIMIT 25" % (op, SCHEMA, op), (literal(q), literal(q)))
    d, order = exact_order(op, x, q)
    order = [i for i in order if i not in (5, 77)][:25]
    assert [r[0] for r in rows] == order
    for (i, dist) in rows:
        assert dist == pytest.approx(d[i], rel=1e-9, abs=1e-9)
    # with a filter and a parameter
    rows = _same_topk(conn, "SELECT id FROM %s.h WHERE lang = 'en' ORDER BY v %s %%s::real[] "
                      "LIMIT 10" % (SCHEMA, op), (literal(q),))
    assert [r[0] for r in rows] == [i for i in order if i % 3][:10]


def test_heap_nulls_last_and_k_beyond_table(conn, heap):
    rows = _same_topk(conn, "SELECT id FROM %s.h ORDER BY v <-> '%s' LIMIT 5000"
                      % (SCHEMA, literal(heap[0])))
    assert len(rows) == 3000 and {r[0] for r in rows[-2:]} == {5, 77}


def test_empty_table(conn):
    conn.execute("CREATE TABLE %s.empty (id int, v real[])" % SCHEMA)
    assert _same_topk(conn, "SELECT id FROM %s.empty ORDER BY v <=> '{1,2}' LIMIT 3"
                      % SCHEMA) == []


def _arrow_table(conn, scratch, name, x, typ, nulls=(), extra_cols=False):
    n, dims = x.shape
    flat = pa.array(x.reshape(-1).astype(np.float16 if typ == "half" else np.float32))
    mask = pa.array([i in nulls for i in range(n)]) if nulls else None
    if typ in ("list", "large"):
        off = np.arange(0, n * dims + 1, dims, dtype=np.int64 if typ == "large" else np.int32)
        cls = pa.LargeListArray if typ == "large" else pa.ListArray
        arr = cls.from_arrays(pa.array(off), flat, mask=mask)
    else:
        arr = pa.FixedSizeListArray.from_arrays(flat, dims, mask=mask)
    path = os.path.join(scratch, name + ".arrow")
    cols = {"id": pa.array(np.arange(n, dtype=np.int32)), "v": arr}
    if extra_cols:
        cols["lang"] = pa.array(["en" if i % 3 else "fr" for i in range(n)])
    t = pa.table(cols)
    with pa.OSFile(path, "wb") as f:
        with pa.ipc.new_file(f, t.schema) as w:
            w.write_table(t, max_chunksize=700)
    os.chmod(path, 0o644)
    conn.execute("CREATE FOREIGN TABLE %s.%s (id int, v real[]%s) SERVER arrow_fdw "
                 "OPTIONS (file '%s')" % (SCHEMA, name, ", lang text" if extra_cols else "",
                                          path))
    return path


def _explain(conn, sql, params=()):
    return "\n".join(r[0] for r in conn.execute("EXPLAIN (COSTS OFF) " + sql, params))


@pytest.mark.parametrize("typ", ["fixed", "list", "large", "half"])
def test_arrow_foreign_table_equals_heap(conn, scratch, typ):
    x = clustered(2500, 16, 10, seed=11)
    if typ == "half":
        x = x.astype(np.float16).astype(np.float32)
    nulls = (3, 1400)
    name = "arrow_" + typ
    _arrow_table(conn, scratch, name, x, typ, nulls=nulls, extra_cols=True)
    conn.execute("CREATE TABLE %s.%s_h (id int, v real[], lang text)" % (SCHEMA, name))
    vecs = [None if i in nulls else v for i, v in enumerate(x)]
    load(conn, "%s.%s_h" % (SCHEMA, name), vecs,
         [("en" if i % 3 else "fr",) for i in range(len(x))])
    q = literal(clustered(1, 16, 10, seed=12)[0])
    qf = np.array(literal_floats(q), dtype=np.float32)
    for op in OPS:
        for where, k in (("", 20), (" WHERE lang <> 'fr' AND id > 100", 7), ("", 3000)):
            sql = ("SELECT id, v %s '%s', lang FROM %s.%%s%s ORDER BY v %s '%s' LIMIT %d"
                   % (op, q, SCHEMA, where, op, q, k))
            conn.execute("SET pg_warp.enabled = off")
            want = conn.execute(sql % (name + "_h")).fetchall()
            conn.execute("SET pg_warp.enabled = on")
            assert "WarpVecScan" in _explain(conn, sql % name)
            got = conn.execute(sql % name).fetchall()
            if k == 3000:
                # the NULL distances tie: PostgreSQL's full sort is not
                # stable, WarpVecScan keeps scan order (checked below)
                assert got[:-2] == want[:-2] and set(got[-2:]) == set(want[-2:])
            else:
                assert got == want, (op, where)
            if not where and k == 20:
                d, order = exact_order(op, x, qf)
                assert [r[0] for r in got] == [i for i in order if i not in nulls][:20]
            if k == 3000:
                assert [r[0] for r in got[-2:]] == list(nulls)   # NULLs last, scan order
    # a parameter, a commuted operator, an OFFSET
    sql = "SELECT id FROM %s.%%s ORDER BY %%%%s::real[] <=> v LIMIT 5 OFFSET 2" % SCHEMA
    conn.execute("SET pg_warp.enabled = off")
    want = conn.execute(sql % (name + "_h"), (q,)).fetchall()
    conn.execute("SET pg_warp.enabled = on")
    assert "WarpVecScan" in _explain(conn, sql % name, (q,))
    assert conn.execute(sql % name, (q,)).fetchall() == want


def test_arrow_errors_like_the_operator(conn, scratch):
    x = clustered(50, 4, 2, seed=1)
    _arrow_table(conn, scratch, "arrow_err", x, "list")
    for q, state, text in (("{1,2,3}", "22000", "different vector dimensions 4 and 3"),
                           ("{1,NULL,3,4}", "22004", "NULL elements"),
                           ("{}", "22000", "at least 1 dimension")):
        sql = "SELECT id FROM %s.arrow_err ORDER BY v <-> '%s' LIMIT 3" % (SCHEMA, q)
        for enabled in ("off", "on"):
            conn.execute("SET pg_warp.enabled = %s" % enabled)
            with pytest.raises(psycopg.Error) as e:
                conn.execute(sql)
            assert e.value.sqlstate == state and text in str(e.value), str(e.value)
    conn.execute("SET pg_warp.enabled = on")
    # a NULL element inside the Arrow data
    flat = pa.array([1.0, None, 2.0, 3.0], pa.float32())
    arr = pa.FixedSizeListArray.from_arrays(flat, 2)
    path = os.path.join(scratch, "nullelem.arrow")
    t = pa.table({"id": pa.array([1, 2], pa.int32()), "v": arr})
    with pa.OSFile(path, "wb") as f:
        with pa.ipc.new_file(f, t.schema) as w:
            w.write_table(t)
    os.chmod(path, 0o644)
    conn.execute("CREATE FOREIGN TABLE %s.nullelem (id int, v real[]) SERVER arrow_fdw "
                 "OPTIONS (file '%s')" % (SCHEMA, path))
    for enabled in ("off", "on"):
        conn.execute("SET pg_warp.enabled = %s" % enabled)
        with pytest.raises(psycopg.Error) as e:
            conn.execute("SELECT id FROM %s.nullelem ORDER BY v <-> '{1,1}' LIMIT 1" % SCHEMA)
        assert e.value.sqlstate == "22004"
    conn.execute("SET pg_warp.enabled = on")
    # an empty table never checks the query vector, in either plan
    conn.execute("CREATE TABLE %s.empty_h (id int, v real[])" % SCHEMA)
    empty = _arrow_table(conn, scratch, "arrow_empty", x[:0], "fixed")
    assert _same_topk(conn, "SELECT id FROM %s.arrow_empty ORDER BY v <-> '{1}' LIMIT 3"
                      % SCHEMA) == []


def test_arrow_explain_analyze(conn, scratch):
    x = clustered(1000, 8, 4, seed=2)
    _arrow_table(conn, scratch, "arrow_ex", x, "fixed")
    plan = "\n".join(r[0] for r in conn.execute(
        "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT id FROM "
        "%s.arrow_ex ORDER BY v <#> '%s' LIMIT 4" % (SCHEMA, literal(x[0]))))
    assert "Vector Top-K: v <#>, k = 4" in plan and "Vectors Scored: 1000" in plan, plan
    assert "Scored From Arrow Buffers: 1000" in plan and "no vector kernel" in plan, plan


def literal_floats(lit):
    return [float(e) for e in lit.strip("{}").split(",")]


def test_ties_follow_scan_order(conn):
    # equal distances: PostgreSQL's top-N sort is not stable, so the test
    # compares the multiset of distances and the set of rows strictly
    # nearer than the k-th distance
    conn.execute("CREATE TABLE %s.ties AS SELECT g AS id, ARRAY[(g %% 5)::real, 0] AS v "
                 "FROM generate_series(1, 200) g" % SCHEMA)
    sql = "SELECT id, v <-> '{0,0}' FROM %s.ties ORDER BY v <-> '{0,0}' LIMIT 50" % SCHEMA
    conn.execute("SET pg_warp.enabled = off")
    want = conn.execute(sql).fetchall()
    conn.execute("SET pg_warp.enabled = on")
    got = conn.execute(sql).fetchall()
    assert sorted(d for _, d in got) == sorted(d for _, d in want)
    assert {i for i, d in got if d < 1} == {i for i, d in want if d < 1}


@pytest.mark.parametrize("codec,threads", [(None, 1), (None, 3), ("lz4", 3), ("zstd", 1)])
def test_arrow_streamed_in_chunks(conn, scratch, codec, threads):
    """Vectors wider than a chunk's worth of rows per batch (streamed in
    several chunks, batches of uneven size, NULL vectors in a later chunk),
    scored by the backend alone or on CPU threads (no qual), compressed
    batches (loaded whole), the vector itself in the output, and a qual
    over the vector (read as a Datum): all equal vanilla PostgreSQL over a
    heap copy."""
    conn.execute("SET pg_warp.cpu_threads = %d" % threads)
    n, dims = 9000, 96
    x = clustered(n, dims, 20, seed=31)
    if codec:
        x = x[:3000]
        n = len(x)
    nulls = {5, 2900, 6100}
    name = "chunks_%s_%d" % (codec or "plain", threads)
    flat = pa.array(x.reshape(-1))
    arr = pa.FixedSizeListArray.from_arrays(flat, dims,
                                            mask=pa.array([i in nulls for i in range(n)]))
    path = os.path.join(scratch, name + ".arrow")
    t = pa.table({"id": pa.array(np.arange(n, dtype=np.int32)), "v": arr})
    opts = pa.ipc.IpcWriteOptions(compression=codec) if codec else None
    with pa.OSFile(path, "wb") as f:
        with pa.ipc.new_file(f, t.schema, options=opts) as w:
            w.write_table(t, max_chunksize=3700)
    os.chmod(path, 0o644)
    conn.execute("CREATE FOREIGN TABLE %s.%s (id int, v real[]) SERVER arrow_fdw "
                 "OPTIONS (file '%s')" % (SCHEMA, name, path))
    conn.execute("CREATE TABLE %s.%s_h (id int, v real[])" % (SCHEMA, name))
    load(conn, "%s.%s_h" % (SCHEMA, name), [None if i in nulls else v for i, v in enumerate(x)])
    q = literal(clustered(1, dims, 20, seed=32)[0])
    for op in OPS:
        for select, where, k in (("id, v", "", 12), ("id", "", n),
                                 ("id", " WHERE v[3] > 0", 9)):
            sql = ("SELECT %s FROM %s.%%s%s ORDER BY v %s '%s' LIMIT %d"
                   % (select, SCHEMA, where, op, q, k))
            conn.execute("SET pg_warp.enabled = off")
            want = conn.execute(sql % (name + "_h")).fetchall()
            conn.execute("SET pg_warp.enabled = on")
            assert "WarpVecScan" in _explain(conn, sql % name)
            got = conn.execute(sql % name).fetchall()
            if k == n:
                # NULL distances tie: compare them as a set, then scan order
                tail = len([i for i in nulls if i < n])
                assert got[:-tail] == want[:-tail] and set(got[-tail:]) == set(want[-tail:])
                assert [r[0] for r in got[-tail:]] == sorted(i for i in nulls if i < n)
            else:
                assert got == want, (op, where, codec)
    plan = "\n".join(r[0] for r in conn.execute(
        "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT id FROM %s.%s "
        "ORDER BY v <-> '%s' LIMIT 4" % (SCHEMA, name, q)))
    nn = len([i for i in nulls if i < n])
    assert "Vectors Scored: %d" % (n - nn) in plan, plan
    assert "Scored From Arrow Buffers: %d" % (n - nn) in plan, plan
    assert ("%d threads" % threads in plan) == (threads > 1), plan
    # errors are the serial loop's, threads or not: the query's dimensions
    # checked at the first non-NULL row, then against the rows'
    for q2, state in (("{1,2}", "22000"), ("{1,NULL}", "22004")):
        with pytest.raises(psycopg.Error) as e:
            conn.execute("SELECT id FROM %s.%s ORDER BY v <-> '%s' LIMIT 3" % (SCHEMA, name, q2))
        assert e.value.sqlstate == state, str(e.value)
    conn.execute("RESET pg_warp.cpu_threads")
