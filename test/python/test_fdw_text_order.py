"""Text ordering comparisons with a constant (<, <=, >=, >, BETWEEN) decided
by arrow_fdw's raw-value row filter under any collation, once per distinct
value (src/pg/fdw/arrow_text_memo.c): every answer is the heap copy's under the
same collation (ICU, libc C.UTF-8, C, the column's and the expression's),
the filter does remove rows ("Rows Removed by Arrow Filter"), plain and
dictionary-encoded columns, parameters
that change between executions get fresh answers, and a batch with more
distinct values than the memo keeps (65,536) is still decided right, and a
rescan with a new parameter value forgets the answers kept."""
import random

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

N = 30000

# a vocabulary where byte order, code point order and the locales' orders
# all differ: case, accents, punctuation, digits, empty, long values
WORDS = ["", "a", "A", "b", "B", "z", "Z", "e", "é", "É", "ä", "Äpfel", "apfel", "zebra",
         "Zebra", "MFGR#2221", "MFGR#2228", "MFGR#22210", "mfgr#2225", "MFGR#3", "co-op",
         "coop", "co op", "1", "10", "9", "_x", "x_", "ǅ", "ß", "ss", "日本", "中文", "ﬁ", "fi",
         "x" * 1500, "y" * 1100 + "é"]


def values(seed, nrows, distinct_extra=0):
    rnd = random.Random(seed)
    out = []
    for i in range(nrows):
        r = rnd.random()
        if r < 0.05:
            out.append(None)
        elif distinct_extra and r < 0.9:
            out.append("v%07d" % rnd.randrange(distinct_extra))
        else:
            out.append(rnd.choice(WORDS))
    return out


def have_icu(db):
    return db.execute("SELECT count(*) FROM pg_collation "
                      "WHERE collname = 'en-US-x-icu'").fetchone()[0] == 1


@pytest.fixture(scope="module")
def tables(db, module_scratch):
    if db.execute("SELECT getdatabaseencoding()").fetchone()[0] != "UTF8":
        pytest.skip("the raw-value text filter needs a UTF-8 database")
    icu = have_icu(db)
    coll = '"en-US-x-icu"' if icu else '"C.utf8"'
    made = []
    # tord_many: more distinct values (~70,000) than the memo keeps
    # tord_dict: the same values dictionary-encoded
    for name, nrows, extra in (("tord", N, 0), ("tord_many", 90000, 10 ** 7),
                               ("tord_dict", N, 0)):
        vals = values(7 if not extra else 11, nrows, extra)
        path = "%s/%s.arrow" % (module_scratch, name)
        col = pa.array(vals, pa.string())
        if name == "tord_dict":
            col = col.dictionary_encode()
        t = pa.table({"id": pa.array(range(nrows), pa.int32()), "s": col})
        with ipc.new_file(path, t.schema, options=ipc.IpcWriteOptions()) as w:
            w.write_table(t, max_chunksize=7000 if not extra else 90000)
        db.execute("DROP FOREIGN TABLE IF EXISTS %s" % name)
        db.execute("DROP TABLE IF EXISTS %s_heap" % name)
        db.execute("CREATE FOREIGN TABLE %s (id int, s text COLLATE %s) SERVER arrow_fdw "
                   "OPTIONS (file '%s')" % (name, coll, path))
        db.execute("CREATE TABLE %s_heap (id int, s text COLLATE %s)" % (name, coll))
        with db.cursor().copy("COPY %s_heap (id, s) FROM STDIN" % name) as cp:
            for i, v in enumerate(vals):
                cp.write_row((i, v))
        made.append(name)
    yield icu
    for name in made:
        db.execute("DROP FOREIGN TABLE IF EXISTS %s" % name)
        db.execute("DROP TABLE IF EXISTS %s_heap" % name)


CLAUSES = [
    "s >= 'MFGR#2221' AND s <= 'MFGR#2228'",
    "s BETWEEN 'b' AND 'e'",
    "s < 'apfel'",
    "'Zebra' < s",
    "s > ''",
    "s <= 'ß'",
    "s >= 'x'",
    "s > 'coop' COLLATE \"C\"",
    "s < 'É' COLLATE \"C.utf8\"",
    "s BETWEEN 'ä' AND 'z' AND id % 3 = 1",
    "s::varchar > 'co op'",
]


def rows(db, sql):
    return sorted(r[0] for r in db.execute(sql).fetchall())


def removed_by_filter(db, sql):
    plan = "\n".join(r[0] for r in db.execute(
        "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + sql).fetchall())
    for line in plan.splitlines():
        if "Rows Removed by Arrow Filter:" in line:
            return int(line.split(":")[1]), plan
    return 0, plan


@pytest.mark.parametrize("clause", CLAUSES)
def test_text_order_answers_equal_heap(db, tables, clause):
    for name in ("tord", "tord_many", "tord_dict"):
        db.execute("SET pg_warp.enabled = off")     # arrow_fdw's own scan
        try:
            got = rows(db, "SELECT id FROM %s WHERE %s" % (name, clause))
            want = rows(db, "SELECT id FROM %s_heap WHERE %s" % (name, clause))
            n, plan = removed_by_filter(db, "SELECT id FROM %s WHERE %s" % (name, clause))
        finally:
            db.execute("RESET pg_warp.enabled")
        assert got == want, (name, clause)
        total = db.execute("SELECT count(*) FROM %s_heap" % name).fetchone()[0]
        assert want and len(want) < total, (name, clause)  # the clause selects something
        # the raw-value filter decided the text clause (not only the executor)
        assert n > 0, plan
        assert n <= total - len(want), plan


def test_text_order_with_pg_warp_on_equals_heap(db, tables):
    """pg_warp's planner on (its engine or arrow_fdw, whichever it takes)."""
    for clause in CLAUSES:
        got = db.execute("SELECT count(*), min(id), max(id) FROM tord WHERE %s" % clause).fetchone()
        want = db.execute("SELECT count(*), min(id), max(id) FROM tord_heap WHERE %s"
                          % clause).fetchone()
        assert got == want, clause


def test_parameter_changes_between_executions(db, tables):
    db.execute("SET pg_warp.enabled = off")
    db.execute("SET plan_cache_mode = force_generic_plan")
    try:
        for v in ["b", "MFGR#2221", "ä", "", "zz", "b"]:
            got = rows(db, "SELECT id FROM tord WHERE s > %s" % "'%s'" % v.replace("'", "''"))
            with db.cursor() as cur:
                cur.execute("SELECT id FROM tord WHERE s > %s", (v,), prepare=True)
                prepared = sorted(r[0] for r in cur.fetchall())
            want = rows(db, "SELECT id FROM tord_heap WHERE s > '%s'" % v.replace("'", "''"))
            assert got == want == prepared, v
    finally:
        db.execute("RESET plan_cache_mode")
        db.execute("RESET pg_warp.enabled")


def test_icu_order_differs_from_bytes(db, tables):
    """The test's premise: under its collation the answer is not the byte
    order's, so a filter comparing bytes would fail the tests above."""
    if not tables:
        pytest.skip("no ICU collations in this PostgreSQL")
    a = db.execute("SELECT count(*) FROM tord_heap WHERE s < 'apfel'").fetchone()[0]
    b = db.execute("SELECT count(*) FROM tord_heap WHERE s < 'apfel' COLLATE \"C\"").fetchone()[0]
    assert a != b


def test_rescan_with_a_new_parameter_forgets_the_answers(db, tables):
    """A parameterized scan rescanned with another value (a lateral
    subquery per outer row) asks the operator again: answers kept for the
    value before would be wrong for the next."""
    sql = ("SELECT v.x, c.n FROM (VALUES ('b'), ('MFGR#2221'), ('ä'), ('b'), ('zz')) v(x) "
           "CROSS JOIN LATERAL (SELECT count(*) AS n, sum(id) AS ids FROM %s "
           "WHERE s > v.x COLLATE %s) c")
    coll = '"en-US-x-icu"' if tables else '"C.utf8"'
    db.execute("SET pg_warp.enabled = off")
    try:
        got = db.execute(sql % ("tord", coll)).fetchall()
        plan = "\n".join(r[0] for r in db.execute(
            "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + sql % ("tord", coll)).fetchall())
    finally:
        db.execute("RESET pg_warp.enabled")
    want = db.execute(sql % ("tord_heap", coll)).fetchall()
    assert got == want
    assert len(set(n for _, n in want)) >= 4       # the values select differently
    assert "Rows Removed by Arrow Filter" in plan and "loops=5" in plan, plan


def test_explain_names_the_collation_that_keeps_text_ordering_back(db, tables):
    """Text ordering under a collation other than C / C.UTF-8 stays
    PostgreSQL's in the engine: EXPLAIN VERBOSE names that collation and
    what would offload it (the first-run trap of a cluster made under the
    system's locale); under "C" the same aggregate is offloaded."""
    coll = "en-US-x-icu" if tables else "C.utf8"
    db.execute("SET cpu_tuple_cost = 10000")
    db.execute("SET cpu_operator_cost = 2500")
    try:
        q = "SELECT count(*) FROM tord WHERE s < 'apfel' COLLATE %s"
        plan = "\n".join(r[0] for r in db.execute(
            "EXPLAIN (VERBOSE, COSTS OFF) " + q % '"en-US-x-icu"').fetchall()) if tables else None
        if plan is not None:
            assert 'text ordering under collation "%s"' % coll in plan, plan
            assert "offloaded only under C, POSIX or C.UTF-8" in plan, plan
            assert "WarpPreAgg" not in plan, plan
        plan_c = "\n".join(r[0] for r in db.execute(
            "EXPLAIN (VERBOSE, COSTS OFF) " + q % '"C"').fetchall())
        assert "WarpPreAgg" in plan_c, plan_c
        # and the answers agree with PostgreSQL's own
        db.execute("SET pg_warp.enabled = off")
        want = [db.execute(q % c).fetchone()[0] for c in ('"C"', '"%s"' % coll)]
        db.execute("RESET pg_warp.enabled")
        got = [db.execute(q % c).fetchone()[0] for c in ('"C"', '"%s"' % coll)]
        assert got == want
    finally:
        db.execute("RESET cpu_tuple_cost")
        db.execute("RESET cpu_operator_cost")
        db.execute("RESET pg_warp.enabled")
