"""Correlated aggregate subqueries planned as grouped joins
(src/pg/plan/warp_decorrelate.c), against PostgreSQL itself.

`x < (SELECT f(agg(y)) FROM t WHERE t.k = o.k ...)` in WHERE becomes a join
with t grouped by k.  Every query runs with pg_warp off (the oracle: a
SubPlan per outer row) and on, over heap tables and over Arrow copies
dumped with `pgwarp dump`; the rows must be equal.  The data has duplicate
and NULL keys on both sides, outer keys without inner rows, groups whose
values are all NULL, and an empty table.  Where the rewrite is promised the
plan must have no SubPlan (PostgreSQL's own plan of each query has one); where
it would change the answer or raise an error PostgreSQL does not, it must
not happen.
"""
import os

import pytest

from pwhelpers import pg_dsn, run_pgwarp

TABLES = {
    "dc_o": ("ok int NOT NULL, k int, k8 int8, g int, x numeric, y float8, t text",
             "SELECT i, CASE WHEN i % 17 = 0 THEN NULL ELSE i % 60 END, i % 60, i % 3, "
             "(i * 37 % 101)::numeric / 4, (i * 13 % 29)::float8, 't' || (i % 5) "
             "FROM generate_series(1, 400) i"),
    "dc_i": ("id int NOT NULL, k int, g int, v numeric, w int, f float8, s text",
             "SELECT i, CASE WHEN i % 23 = 0 THEN NULL ELSE i % 50 END, i % 3, "
             "CASE WHEN i % 50 = 7 OR i % 11 = 0 THEN NULL ELSE (i * 7 % 53)::numeric / 2 END, "
             "i % 9, (i * 3 % 31)::float8, 't' || (i % 5) "
             "FROM generate_series(1, 3000) i"),
    "dc_e": ("k int, v numeric", "SELECT 1, 1.0 WHERE false"),
}

# (query, rewritten?) -- the tables are named without a schema
QUERIES = [
    # TPC-H q17's shape: a strict expression over avg
    ("SELECT ok FROM dc_o WHERE x < (SELECT 0.5 * avg(v) FROM dc_i WHERE dc_i.k = dc_o.k)", True),
    # keys on either side of the correlation
    ("SELECT ok, x FROM dc_o WHERE x >= (SELECT min(v) FROM dc_i WHERE dc_o.k = dc_i.k)", True),
    ("SELECT ok FROM dc_o WHERE y <= (SELECT max(f) FROM dc_i WHERE dc_i.k = dc_o.k)", True),
    # two correlation keys and an uncorrelated qual (q20's)
    ("SELECT ok FROM dc_o WHERE x > (SELECT 0.1 * sum(v) FROM dc_i "
     "WHERE dc_i.k = dc_o.k AND dc_i.g = dc_o.g AND dc_i.w > 3)", True),
    # several aggregates in one expression, a sum of integers
    ("SELECT ok FROM dc_o WHERE x < (SELECT max(v) - min(v) + sum(w) FROM dc_i "
     "WHERE dc_i.k = dc_o.k)", True),
    # beside other conjuncts and joins
    ("SELECT a.ok, b.ok FROM dc_o a JOIN dc_o b ON a.ok = b.ok + 1 WHERE a.g = 1 "
     "AND a.x <= (SELECT avg(v) FROM dc_i WHERE dc_i.k = b.k)", True),
    # nested: inside an IN subquery (q20)
    ("SELECT ok FROM dc_o WHERE k IN (SELECT i2.k FROM dc_i i2 WHERE i2.w = 1 AND "
     "i2.v > (SELECT avg(v) FROM dc_i i3 WHERE i3.k = i2.k))", True),
    # an empty inner table: no groups, no rows
    ("SELECT ok FROM dc_o WHERE x < (SELECT avg(v) FROM dc_e WHERE dc_e.k = dc_o.k)", True),
    # over no rows count is 0 and coalesce is not NULL: not the same as a join
    ("SELECT ok FROM dc_o WHERE 3 < (SELECT count(*) FROM dc_i WHERE dc_i.k = dc_o.k)", False),
    ("SELECT ok FROM dc_o WHERE x > (SELECT coalesce(sum(v), 0) FROM dc_i "
     "WHERE dc_i.k = dc_o.k)", False),
    # not a conjunct of WHERE: a NULL result does not drop the row
    ("SELECT ok FROM dc_o WHERE ok < 5 OR x < (SELECT avg(v) FROM dc_i WHERE dc_i.k = dc_o.k)",
     False),
    ("SELECT ok, (SELECT avg(v) FROM dc_i WHERE dc_i.k = dc_o.k) FROM dc_o", False),
    ("SELECT ok FROM dc_o WHERE (x < (SELECT avg(v) FROM dc_i WHERE dc_i.k = dc_o.k)) "
     "IS NOT TRUE", False),
    # an equality with the subquery (q2's): PostgreSQL would misestimate the join
    ("SELECT ok, x FROM dc_o WHERE x = (SELECT min(v) FROM dc_i WHERE dc_o.k = dc_i.k)", False),
    # a correlation of another type (int4 = int8), or not an equality
    ("SELECT ok FROM dc_o WHERE x < (SELECT avg(v) FROM dc_i WHERE dc_i.k = dc_o.k8)", False),
    ("SELECT ok FROM dc_o WHERE x < (SELECT avg(v) FROM dc_i WHERE dc_i.k < dc_o.k)", False),
    # a collatable key
    ("SELECT ok FROM dc_o WHERE x < (SELECT avg(v) FROM dc_i WHERE dc_i.s = dc_o.t)", False),
    # the outer query referenced outside the correlation
    ("SELECT ok FROM dc_o WHERE x < (SELECT avg(v) + dc_o.y FROM dc_i WHERE dc_i.k = dc_o.k)",
     False),
    ("SELECT ok FROM dc_o WHERE x < (SELECT avg(v) FROM dc_i WHERE dc_i.k = dc_o.k "
     "AND dc_i.f > dc_o.y)", False),
    # an error for a group no outer row asks for (division by zero in the
    # group k = 45 only) must not arise
    ("SELECT ok FROM dc_o WHERE dc_o.k < 40 AND x < (SELECT avg(v / (k - 45)) FROM dc_i "
     "WHERE dc_i.k = dc_o.k)", False),
    # GROUP BY / LIMIT in the subquery: another query
    ("SELECT ok FROM dc_o WHERE x < (SELECT avg(v) FROM dc_i WHERE dc_i.k = dc_o.k "
     "GROUP BY g ORDER BY g LIMIT 1)", False),
]


# x NOT IN (SELECT y ...) in WHERE (src/pg/plan/warp_notin.c): an anti join
# where x and y are columns declared NOT NULL (True: over the heap tables;
# the Arrow tables declare no NOT NULL), else left as it is
NOT_IN = [
    # a NULL among the y (k is NULL where i % 23 = 0; i = 46 has w = 1): no row
    ("SELECT ok FROM dc_o WHERE k NOT IN (SELECT k FROM dc_i WHERE w = 1)", False),
    # no NULL y; the outer NULL k drop out
    ("SELECT ok FROM dc_o WHERE k NOT IN (SELECT k FROM dc_i WHERE w = 1 AND k IS NOT NULL)",
     False),
    # an empty subquery keeps every row, NULL k too
    ("SELECT ok FROM dc_o WHERE k NOT IN (SELECT k FROM dc_e)", False),
    ("SELECT ok FROM dc_o WHERE k NOT IN (SELECT k FROM dc_i WHERE w = 100)", False),
    # NOT NULL columns on both sides: the anti join
    ("SELECT ok FROM dc_o WHERE ok NOT IN (SELECT id FROM dc_i WHERE w = 2)", True),
    ("SELECT ok FROM dc_o WHERE ok NOT IN (SELECT id FROM dc_i WHERE w = 100)", True),
    # correlated, with duplicates of y; LIKE with a constant pattern
    ("SELECT ok FROM dc_o WHERE ok NOT IN (SELECT id - 10 + 10 FROM dc_i "
     "WHERE dc_i.g = dc_o.g)", False),
    ("SELECT ok FROM dc_o WHERE ok NOT IN (SELECT id FROM dc_i WHERE dc_i.g = dc_o.g "
     "AND w < 4)", True),
    ("SELECT ok FROM dc_o WHERE ok NOT IN (SELECT id FROM dc_i WHERE s LIKE 't%1')", True),
    # y computed with an error possible (int4 overflow): stays
    ("SELECT ok FROM dc_o WHERE ok NOT IN (SELECT id * 3 FROM dc_i WHERE s LIKE 't%1')", False),
    # beside an inner join and other conjuncts; x on the nullable side of a
    # left join can be NULL
    ("SELECT a.ok, b.ok FROM dc_o a JOIN dc_o b ON a.ok = b.ok + 1 WHERE a.g = 2 "
     "AND b.ok NOT IN (SELECT id FROM dc_i WHERE w = 5)", True),
    ("SELECT a.ok, b.ok FROM dc_o a LEFT JOIN dc_o b ON a.ok = b.ok + 1000 WHERE a.g = 2 "
     "AND b.ok NOT IN (SELECT id FROM dc_i WHERE w = 5)", False),
    # under OR, aggregated, limited: NOT IN stays
    ("SELECT ok FROM dc_o WHERE ok < 50 OR ok NOT IN (SELECT id FROM dc_i WHERE w = 1)", False),
    ("SELECT ok FROM dc_o WHERE ok NOT IN (SELECT max(id) FROM dc_i GROUP BY g)", False),
    ("SELECT ok FROM dc_o WHERE ok NOT IN (SELECT id FROM dc_i WHERE w = 1 ORDER BY k "
     "LIMIT 5)", False),
    # a qual that could fail for a row the SubPlan need not read
    ("SELECT ok FROM dc_o WHERE ok NOT IN (SELECT id FROM dc_i WHERE v / (w - 1) > 1)", False),
    # a LIKE pattern ending in an escape raises its error either way
    ("SELECT ok FROM dc_o WHERE ok NOT IN (SELECT id FROM dc_i WHERE s LIKE 't\\')", False),
]


@pytest.fixture(scope="module")
def tables(db, module_scratch):
    with db.cursor() as cur:
        cur.execute("CREATE EXTENSION IF NOT EXISTS pg_warp")
        cur.execute("DROP SCHEMA IF EXISTS dc_heap CASCADE")
        cur.execute("DROP SCHEMA IF EXISTS dc_arrow CASCADE")
        cur.execute("CREATE SCHEMA dc_heap")
        cur.execute("CREATE SCHEMA dc_arrow")
        for name, (cols, fill) in TABLES.items():
            cur.execute("CREATE TABLE dc_heap.%s (%s)" % (name, cols))
            cur.execute("INSERT INTO dc_heap.%s %s" % (name, fill))
            cur.execute("ANALYZE dc_heap.%s" % name)
    os.chmod(module_scratch, 0o755)
    for name in TABLES:
        out = os.path.join(module_scratch, name + ".arrow")
        res = run_pgwarp("dump", "-q", "-d", pg_dsn(), "-t", "dc_heap." + name, "-o", out)
        assert res.rc == 0, res.stderr
        os.chmod(out, 0o644)
        with db.cursor() as cur:
            cur.execute("IMPORT FOREIGN SCHEMA %s FROM SERVER arrow_fdw INTO dc_arrow "
                        "OPTIONS (file '%s')" % (name, out))
            cur.execute("ANALYZE dc_arrow.%s" % name)
    yield
    with db.cursor() as cur:
        cur.execute("RESET ALL")
        cur.execute("DROP SCHEMA IF EXISTS dc_heap CASCADE")
        cur.execute("DROP SCHEMA IF EXISTS dc_arrow CASCADE")


def run(db, sql, schema, enabled, explain=False):
    with db.cursor() as cur:
        cur.execute("SET search_path = %s" % schema)
        cur.execute("SET pg_warp.enabled = %s" % ("on" if enabled else "off"))
        cur.execute("SET pg_warp.mode = cpu")
        if explain:
            cur.execute("EXPLAIN (VERBOSE) " + sql)
            return "\n".join(r[0] for r in cur.fetchall())
        cur.execute(sql)
        return sorted(cur.fetchall(), key=repr)


@pytest.mark.parametrize("schema", ["dc_heap", "dc_arrow"])
@pytest.mark.parametrize("qi", range(len(QUERIES)))
def test_answer_and_plan(db, tables, schema, qi):
    sql, rewritten = QUERIES[qi]
    want = run(db, sql, schema, False)
    got = run(db, sql, schema, True)
    assert got == want, "%s\n%s\n%s" % (sql, want[:8], got[:8])
    plan = run(db, sql, schema, True, explain=True)
    # (the derived table's Subquery Scan may be flattened away: no SubPlan
    # is what shows the rewrite, each query having one otherwise)
    assert ("SubPlan" not in plan) == rewritten, plan


@pytest.mark.parametrize("schema", ["dc_heap", "dc_arrow"])
@pytest.mark.parametrize("qi", range(len(NOT_IN)))
def test_not_in(db, tables, schema, qi):
    sql, rewritten = NOT_IN[qi]
    try:
        want = run(db, sql, schema, False)
    except Exception as e:      # (the escape pattern's error)
        with pytest.raises(type(e)):
            run(db, sql, schema, True)
        return
    got = run(db, sql, schema, True)
    assert got == want, "%s\n%s\n%s" % (sql, want[:8], got[:8])
    plan = run(db, sql, schema, True, explain=True)
    # PostgreSQL plans NOT IN as a SubPlan filter, never as an anti join
    assert ("Anti" in plan) == (rewritten and schema == "dc_heap"), plan


def test_not_in_answers(db, tables):
    """the data makes the cases matter: a NULL y empties the answer, an
    empty subquery keeps the NULL x, the anti joins keep some rows"""
    sizes = [len(run(db, sql, "dc_heap", False)) for sql, _ in NOT_IN[:6]]
    assert sizes[0] == 0 and 0 < sizes[1] < 400 and sizes[2] == 400 and sizes[3] == 400, sizes
    assert 0 < sizes[4] < 400 and sizes[5] == 400, sizes


def test_queries_have_answers(db, tables):
    """the data makes the promised rewrites return rows (and drop some)"""
    for sql, rewritten in QUERIES[:7]:
        rows = run(db, sql, "dc_heap", False)
        assert 0 < len(rows) < 400, sql


def test_index_on_the_correlation_keeps_the_subplan(db, tables):
    """PostgreSQL looks the rows up per outer value: its plan stays"""
    sql = QUERIES[0][0]
    with db.cursor() as cur:
        cur.execute("CREATE INDEX dc_i_k ON dc_heap.dc_i (k)")
    try:
        assert run(db, sql, "dc_heap", True) == run(db, sql, "dc_heap", False)
        assert "SubPlan" in run(db, sql, "dc_heap", True, explain=True)
    finally:
        with db.cursor() as cur:
            cur.execute("DROP INDEX dc_heap.dc_i_k")


def test_switched_off(db, tables):
    sql = QUERIES[0][0]
    with db.cursor() as cur:
        cur.execute("SET pg_warp.enable_decorrelation = off")
    try:
        plan = run(db, sql, "dc_heap", True, explain=True)
        assert "SubPlan" in plan, plan
    finally:
        with db.cursor() as cur:
            cur.execute("RESET pg_warp.enable_decorrelation")


def test_for_update_left_alone(db, tables):
    """rows locked FOR UPDATE come from the query's own FROM: no rewrite"""
    for sql in (QUERIES[0][0], NOT_IN[4][0]):
        sql += " FOR UPDATE"
        assert run(db, sql, "dc_heap", True) == run(db, sql, "dc_heap", False)
        plan = run(db, sql, "dc_heap", True, explain=True)
        assert "SubPlan" in plan and "Anti" not in plan, plan
