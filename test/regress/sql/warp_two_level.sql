--
-- warp_two_level: DISTINCT aggregates by two-level grouping.  The engine
-- groups by the group keys and the DISTINCT arguments (and min/max
-- arguments) and PostgreSQL's Aggregate computes the aggregates over those
-- distinct rows.  Uses warp_joins' tables and wj_check: every query runs
-- over heap tables with pg_warp off and over the Arrow copies with pg_warp
-- on, and the answers must be the same multiset.
--
\getenv dir PGWARP_TEST_DIR
SELECT set_config('regress.dir', :'dir', false) IS NOT NULL AS dir_set;
SET pg_warp.explain_stable = on;
SET pg_warp.mode = cpu;

-- extreme and special values for a float DISTINCT: -0 and 0 are one value
-- to PostgreSQL (the engine keeps them apart by binary image; the Aggregate
-- above merges them), NaN is one value, NULLs are not counted
CREATE TABLE wt_f_h (k integer, g integer, f8 float8, d date);
INSERT INTO wt_f_h
SELECT i % 25, i % 4,
       CASE i % 7 WHEN 0 THEN NULL WHEN 1 THEN '-0' WHEN 2 THEN '0' WHEN 3 THEN 'NaN'
                  WHEN 4 THEN 'Infinity' ELSE (i % 11) / 4.0 END,
       date '2001-01-01' + i % 33
FROM generate_series(1, 20000) i;
\! pgwarp dump -d dbname=pg_warp_regress --quiet -c 'SELECT * FROM wt_f_h' -o "$PGWARP_TEST_DIR/wt_f.arrow" --batch-rows 3000
DO $do$ BEGIN
  EXECUTE format($$CREATE FOREIGN TABLE wt_f_a (k integer, g integer, f8 float8, d date)
    SERVER arrow_fdw OPTIONS (file %L)$$, current_setting('regress.dir') || '/wt_f.arrow');
END $do$;
ANALYZE wt_f_h, wt_f_a;

CREATE TABLE wt_queries (n integer, q text);
INSERT INTO wt_queries VALUES
(1, 'SELECT count(DISTINCT k1) FROM wj_f_@'),
(2, 'SELECT k2, count(DISTINCT k1) c1, count(DISTINCT q) c2 FROM wj_f_@ GROUP BY k2'),
(3, 'SELECT k2, count(DISTINCT k1) c, max(price) mx, min(q) mn FROM wj_f_@ f WHERE q < 40 GROUP BY k2'),
(4, 'SELECT d1.name, count(DISTINCT f.kd) c, sum(DISTINCT f.q) s FROM wj_f_@ f JOIN wj_d1_@ d1 ON f.k1 = d1.id GROUP BY d1.name'),
-- a dimension column as the DISTINCT argument, a left join's NULL row included
(5, 'SELECT f.k2, count(DISTINCT d1.name) FROM wj_f_@ f LEFT JOIN wj_d1_@ d1 ON f.k1 = d1.id GROUP BY f.k2'),
(6, 'SELECT count(DISTINCT d1.grp) c, avg(DISTINCT f.q) a FROM wj_f_@ f JOIN wj_d1_@ d1 ON f.k1 = d1.id WHERE EXISTS (SELECT 1 FROM wj_d2 d2 WHERE d2.id = f.k2)'),
-- an argument that can fail (integer overflow) stays PostgreSQL's: it
-- evaluates every WHERE clause before any DISTINCT argument
(7, 'SELECT count(DISTINCT k1 + k2) FROM wj_f_@ WHERE kd IS NOT NULL'),
-- HAVING above the two levels
(8, 'SELECT k2, count(DISTINCT k1) FROM wj_f_@ GROUP BY k2 HAVING count(DISTINCT k1) > 10 AND max(q) > 3'),
-- empty input: one row of 0 without GROUP BY, none with it
(9, 'SELECT count(DISTINCT k1) c, max(q) m FROM wj_f_@ WHERE price < 0'),
(10, 'SELECT k2, count(DISTINCT k1) FROM wj_f_@ WHERE price < 0 GROUP BY k2'),
-- floats: -0 = 0, NaN, Infinity, NULL
(11, 'SELECT count(DISTINCT f8) c, min(f8) mn, max(f8) mx FROM wt_f_@'),
(12, 'SELECT g, count(DISTINCT f8) c, sum(DISTINCT f8) s, count(DISTINCT d) cd FROM wt_f_@ GROUP BY g'),
(13, 'SELECT k, count(DISTINCT f8) FROM wt_f_@ WHERE f8 >= 0 GROUP BY k'),
-- a group key fixed to a constant: no sort order to ask for, one group
(14, 'SELECT d3.season, sum(DISTINCT f.k1) s, count(DISTINCT d3.day) c FROM wj_f_@ f JOIN wj_d3_@ d3 ON f.kd = d3.day WHERE d3.season = ''late'' GROUP BY 1'),
-- a DISTINCT aggregate beside a plain one: the engine keeps sum(price)'s
-- partial state per (k2, k1), pg_warp_merge combines them (WarpMerge)
(15, 'SELECT k2, count(DISTINCT k1) c, sum(price) s FROM wj_f_@ GROUP BY k2'),
-- kept with PostgreSQL: FILTER or ORDER BY on a DISTINCT aggregate
(16, 'SELECT count(DISTINCT k1) FILTER (WHERE q > 5) FROM wj_f_@'),
(17, 'SELECT string_agg(DISTINCT k1::text, '','' ORDER BY k1::text) FROM wj_f_@'),
-- every plain aggregate kind beside DISTINCT ones: count(*), count(x),
-- sum/avg of int2 (int8 state, int8[] state) and int8 (numeric state, sent
-- serialized), min/max of int and date
(18, 'SELECT k2, count(DISTINCT k1) c, count(*) n, count(kd) nk, sum(q) s, avg(q) a, sum(k2) s8, avg(k2) a8, min(price) mn, max(kd) mx FROM wj_f_@ GROUP BY k2'),
-- no GROUP BY; then empty input: count 0, the others NULL
(19, 'SELECT count(DISTINCT k1) c, count(*) n, sum(price) s, avg(price) a, sum(k2) s8 FROM wj_f_@'),
(20, 'SELECT count(DISTINCT k1) c, count(*) n, sum(q) s, avg(price) a, sum(k2) s8, max(kd) m FROM wj_f_@ WHERE price < 0'),
(21, 'SELECT k2, count(DISTINCT k1) c, sum(q) s FROM wj_f_@ WHERE price < 0 GROUP BY k2'),
-- expressions over the aggregates, HAVING on either kind, ORDER BY a merged
-- aggregate with LIMIT (a total order)
(22, 'SELECT k2, sum(q) * 2 s2, count(DISTINCT k1) + 1 c FROM wj_f_@ GROUP BY k2 HAVING sum(price) > 0 AND count(DISTINCT kd) > 1'),
(23, 'SELECT k2, count(DISTINCT k1) c, sum(price) s FROM wj_f_@ GROUP BY k2 ORDER BY s DESC, k2 LIMIT 4'),
-- a join, FILTER on the plain aggregate, a dimension column as argument
(24, 'SELECT d1.name, count(DISTINCT f.kd) c, sum(f.price) FILTER (WHERE f.q > 10) s, count(*) n FROM wj_f_@ f JOIN wj_d1_@ d1 ON f.k1 = d1.id GROUP BY d1.name'),
(25, 'SELECT f.k2, count(DISTINCT d1.grp) c, avg(f.q) a FROM wj_f_@ f LEFT JOIN wj_d1_@ d1 ON f.k1 = d1.id GROUP BY f.k2'),
-- the DISTINCT argument is a group key; two DISTINCT aggregates
(26, 'SELECT k2, count(DISTINCT k2) c, count(*) n FROM wj_f_@ GROUP BY k2'),
(27, 'SELECT k2, count(DISTINCT k1) c1, count(DISTINCT q) c2, sum(price) s, min(q) mn FROM wj_f_@ GROUP BY k2'),
-- floats: -0 = 0 and NaN for the DISTINCT, min/max/count beside it
(28, 'SELECT g, count(DISTINCT f8) c, count(f8) n, min(f8) mn, max(f8) mx, count(*) FROM wt_f_@ GROUP BY g'),
-- kept with PostgreSQL: a plain argument that can fail (overflow) beside a
-- WHERE clause that can (division by zero): PostgreSQL sorts before it
-- aggregates, so every WHERE clause runs before any argument
(29, 'SELECT k2, count(DISTINCT k1) c, sum(price * q) s FROM wj_f_@ WHERE 100 / (q + 1) > 1 GROUP BY k2');

SELECT n, (wj_check(q)).* FROM wt_queries ORDER BY n;

EXPLAIN (COSTS OFF)
SELECT d1.name, count(DISTINCT f.kd), max(f.q) FROM wj_f_a f JOIN wj_d1_a d1 ON f.k1 = d1.id GROUP BY d1.name;
EXPLAIN (COSTS OFF)
SELECT k2, count(DISTINCT k1) c, sum(price) s FROM wj_f_a GROUP BY k2 ORDER BY s;
CREATE FUNCTION wt_plan(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) ' || q LOOP
    IF l NOT LIKE '%Arrow File:%' THEN RETURN NEXT l; END IF;	-- (a path)
  END LOOP;
END $$;
SELECT wt_plan('SELECT count(DISTINCT k1) c, sum(price) s, avg(k2) a FROM wj_f_a');

-- pg_warp_merge runs only where pg_warp's planner puts it
SELECT pg_warp_merge(price::bigint, 'sum(integer)'::regprocedure, NULL::bigint) FROM wj_f_h;
SELECT pg_warp_merge(s, 'sum(integer)'::regprocedure, NULL::bigint)
FROM (SELECT k2, sum(price) s FROM wj_f_a GROUP BY k2) x;

-- a parallel plan: every participant emits its own distinct rows, the
-- Sort and the Aggregate sit above the Gather (warp_engine's tables; one
-- CPU thread per participant)
SET pg_warp.cpu_threads = 1;
ALTER TABLE we_dim1 SET (parallel_workers = 0);
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET seq_page_cost = 1000;	-- the fact scan's cost dominates: split it
EXPLAIN (COSTS OFF)
SELECT d1.grp, k2, count(DISTINCT f.k1) c, max(f.q) m FROM we_fact_a f JOIN we_dim1 d1 ON f.k1 = d1.id GROUP BY d1.grp, k2;
CREATE TEMP TABLE wt_par_got AS
SELECT d1.grp, k2, count(DISTINCT f.k1) c, max(f.q) m FROM we_fact_a f JOIN we_dim1 d1 ON f.k1 = d1.id GROUP BY d1.grp, k2;
SET pg_warp.enabled = off;
CREATE TEMP TABLE wt_par_want AS
SELECT d1.grp, k2, count(DISTINCT f.k1) c, max(f.q) m FROM we_fact f JOIN we_dim1 d1 ON f.k1 = d1.id GROUP BY d1.grp, k2;
RESET pg_warp.enabled;
SELECT count(*) AS groups,
       (SELECT count(*) FROM (SELECT * FROM wt_par_want EXCEPT ALL SELECT * FROM wt_par_got) x) AS missing,
       (SELECT count(*) FROM (SELECT * FROM wt_par_got EXCEPT ALL SELECT * FROM wt_par_want) x) AS extra
FROM wt_par_want;
-- the same with plain aggregates beside the DISTINCT one: pg_warp_merge
-- combines the participants' partial states of one (keys, argument) group
EXPLAIN (COSTS OFF)
SELECT d1.grp, count(DISTINCT f.k1) c, sum(f.price) s, count(*) n FROM we_fact_a f JOIN we_dim1 d1 ON f.k1 = d1.id GROUP BY d1.grp;
CREATE TEMP TABLE wt_par2_got AS
SELECT d1.grp, count(DISTINCT f.k1) c, sum(f.price) s, count(*) n FROM we_fact_a f JOIN we_dim1 d1 ON f.k1 = d1.id GROUP BY d1.grp;
SET pg_warp.enabled = off;
CREATE TEMP TABLE wt_par2_want AS
SELECT d1.grp, count(DISTINCT f.k1) c, sum(f.price) s, count(*) n FROM we_fact f JOIN we_dim1 d1 ON f.k1 = d1.id GROUP BY d1.grp;
RESET pg_warp.enabled;
SELECT count(*) AS groups,
       (SELECT count(*) FROM (SELECT * FROM wt_par2_want EXCEPT ALL SELECT * FROM wt_par2_got) x) AS missing,
       (SELECT count(*) FROM (SELECT * FROM wt_par2_got EXCEPT ALL SELECT * FROM wt_par2_want) x) AS extra
FROM wt_par2_want;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET seq_page_cost;
RESET pg_warp.cpu_threads;
ALTER TABLE we_dim1 RESET (parallel_workers);

-- the same through pg_warp_gpud
SET pg_warp.mode = gpu;
SELECT n, (wj_check(q)).* FROM wt_queries WHERE n <= 15 OR n >= 18 ORDER BY n;
RESET pg_warp.mode;
