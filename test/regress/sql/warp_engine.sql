--
-- warp_engine: plans and EXPLAIN output of pg_warp's engine (Custom Scan
-- (WarpPreAgg)), what is and is not offloaded, and answers compared with
-- the heap tables the Arrow files came from.
--
CREATE EXTENSION IF NOT EXISTS pg_warp;
\getenv dir PGWARP_TEST_DIR
SELECT set_config('regress.dir', :'dir', false) IS NOT NULL AS dir_set;
SET pg_warp.explain_stable = on;
-- the CPU driver in the backend, so plans are the same with or without a GPU
SET pg_warp.mode = cpu;

CREATE TABLE we_fact (k1 integer, k2 bigint, q smallint, price integer, f8 float8, d date);
INSERT INTO we_fact
SELECT i % 50, (i % 7)::bigint, (i % 60)::smallint, 1000 + i % 997,
       CASE WHEN i % 11 = 0 THEN NULL ELSE i / 8.0 END, date '1995-01-01' + i % 900
FROM generate_series(1, 30000) i;
INSERT INTO we_fact VALUES (NULL, NULL, NULL, NULL, NULL, NULL), (7, 3, 5, 2147483647, 'NaN', '2000-01-01');
CREATE TABLE we_dim1 (id integer, name text, grp integer);
INSERT INTO we_dim1 SELECT i, 'name ' || (i % 9), i % 4 FROM generate_series(0, 45) i;
INSERT INTO we_dim1 VALUES (NULL, 'null key', 0);
CREATE TABLE we_dim2 (id bigint, label varchar(8));
INSERT INTO we_dim2 SELECT i, 'L' || i FROM generate_series(0, 6) i;
INSERT INTO we_dim2 VALUES (3, 'dup');   -- a duplicate key: the join multiplies rows

\! pgwarp dump -d dbname=pg_warp_regress --quiet -c 'SELECT * FROM we_fact' -o "$PGWARP_TEST_DIR/we_fact.arrow" --batch-rows 8192
\! pgwarp dump -d dbname=pg_warp_regress --quiet -c 'SELECT * FROM we_dim1' -o "$PGWARP_TEST_DIR/we_dim1.arrow"
DO $do$ BEGIN
  EXECUTE format($$CREATE FOREIGN TABLE we_fact_a (k1 integer, k2 bigint, q smallint, price integer, f8 float8, d date)
    SERVER arrow_fdw OPTIONS (file %L)$$, current_setting('regress.dir') || '/we_fact.arrow');
  EXECUTE format($$CREATE FOREIGN TABLE we_dim1_a (id integer, name text, grp integer)
    SERVER arrow_fdw OPTIONS (file %L)$$, current_setting('regress.dir') || '/we_dim1.arrow');
END $do$;
ANALYZE we_fact, we_dim1, we_dim2, we_fact_a, we_dim1_a;

-- a star: Arrow fact, Arrow and heap dimensions
EXPLAIN (COSTS OFF)
SELECT d1.name, d2.label, sum(f.price), count(*), avg(f.q), min(f.d), max(f.f8)
FROM we_fact_a f JOIN we_dim1_a d1 ON f.k1 = d1.id JOIN we_dim2 d2 ON f.k2 = d2.id
WHERE f.q < 40 AND d1.grp <> 2
GROUP BY d1.name, d2.label;

-- the same answers as the heap tables with pg_warp off
CREATE TEMP TABLE we_expected AS
SELECT d1.name, d2.label, sum(f.price) s, count(*) c, avg(f.q) a, min(f.d) mi, max(f.f8) ma
FROM we_fact f JOIN we_dim1 d1 ON f.k1 = d1.id JOIN we_dim2 d2 ON f.k2 = d2.id
WHERE f.q < 40 AND d1.grp <> 2
GROUP BY d1.name, d2.label;
CREATE TEMP TABLE we_got AS
SELECT d1.name, d2.label, sum(f.price) s, count(*) c, avg(f.q) a, min(f.d) mi, max(f.f8) ma
FROM we_fact_a f JOIN we_dim1_a d1 ON f.k1 = d1.id JOIN we_dim2 d2 ON f.k2 = d2.id
WHERE f.q < 40 AND d1.grp <> 2
GROUP BY d1.name, d2.label;
SELECT count(*) AS groups,
       (SELECT count(*) FROM (SELECT * FROM we_expected EXCEPT ALL SELECT * FROM we_got) x) AS missing,
       (SELECT count(*) FROM (SELECT * FROM we_got EXCEPT ALL SELECT * FROM we_expected) x) AS extra
FROM we_expected;

-- EXPLAIN ANALYZE counters are exact, timings hidden by explain_stable
-- (one thread: with more, the partial groups depend on scheduling)
SET pg_warp.cpu_threads = 1;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(*), sum(price) FROM we_fact_a WHERE k1 = 3;
RESET pg_warp.cpu_threads;
SELECT count(*), sum(price) FROM we_fact_a WHERE k1 = 3;
SELECT count(*), sum(price) FROM we_fact WHERE k1 = 3;

-- no GROUP BY and nothing passes: one row, count 0 and NULL sums
SELECT count(*), sum(price), avg(price), min(d) FROM we_fact_a WHERE q > 1000;

-- HAVING and ORDER BY ... LIMIT run above the engine
EXPLAIN (COSTS OFF)
SELECT k2, sum(price) FROM we_fact_a GROUP BY k2 HAVING count(*) > 4000 ORDER BY 2 DESC LIMIT 3;
SELECT k2, sum(price) FROM we_fact_a GROUP BY k2 HAVING count(*) > 4000 ORDER BY 2 DESC LIMIT 3;
SELECT k2, sum(price) FROM we_fact GROUP BY k2 HAVING count(*) > 4000 ORDER BY 2 DESC LIMIT 3;

-- overflow is raised where PostgreSQL raises it (int4 * int4), not before
SELECT sum(price * 1000) FROM we_fact_a;
SELECT sum(price * 1000) FROM we_fact;
SELECT sum(price * 1000) FROM we_fact_a WHERE price < 2000;
SELECT sum(price * 1000) FROM we_fact WHERE price < 2000;
-- division by zero only for rows that reach the division
SELECT count(*) FROM we_fact_a WHERE q <> 0 AND price / q > 100;
SELECT count(*) FROM we_fact WHERE q <> 0 AND price / q > 100;
SELECT count(*) FROM we_fact_a WHERE price / q > 100;
SELECT count(*) FROM we_fact WHERE price / q > 100;

-- parameters of a prepared statement
PREPARE we_p(int, int) AS SELECT count(*), sum(price) FROM we_fact_a WHERE q BETWEEN $1 AND $2;
EXECUTE we_p(10, 20);
EXECUTE we_p(30, 31);
EXECUTE we_p(NULL, 31);
SELECT count(*), sum(price) FROM we_fact WHERE q BETWEEN 10 AND 20;

-- sum/avg(int8): 128-bit sums sent as int8_avg_serialize's state, past int8's range
EXPLAIN (COSTS OFF)
SELECT k1 % 3, sum(k2 * 1000000000000000000) FROM we_fact_a GROUP BY 1;
SELECT (SELECT count(*) FROM (
          SELECT k1 % 3, sum(k2 * 1000000000000000000), avg(k2 * -1000000000000000000),
                 sum(-9223372036854775807 + k2), avg(k2), sum(k2) FILTER (WHERE q > 30)
          FROM we_fact_a GROUP BY 1
          EXCEPT ALL
          SELECT k1 % 3, sum(k2 * 1000000000000000000), avg(k2 * -1000000000000000000),
                 sum(-9223372036854775807 + k2), avg(k2), sum(k2) FILTER (WHERE q > 30)
          FROM we_fact GROUP BY 1) x) AS differing_groups,
       (SELECT sum(k2 * 1000000000000000000) FROM we_fact_a) AS total;
SELECT sum(k2), avg(k2) FROM we_fact_a WHERE k2 > 100;

-- a parallel plan: participants claim batches and emit their own partial
-- states (pg_warp.cpu_threads = 1: with more, the serial plan runs on threads)
SET pg_warp.cpu_threads = 1;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
ALTER TABLE we_dim1 SET (parallel_workers = 0);   -- keep the dimension a plain scan
EXPLAIN (COSTS OFF)
SELECT d1.grp, k2, count(*), sum(price), max(f8) FROM we_fact_a f JOIN we_dim1 d1 ON f.k1 = d1.id GROUP BY d1.grp, k2;
SELECT d1.grp, k2, count(*), sum(price), max(f8) FROM we_fact_a f JOIN we_dim1 d1 ON f.k1 = d1.id GROUP BY d1.grp, k2 ORDER BY 1, 2;
SELECT d1.grp, k2, count(*), sum(price), max(f8) FROM we_fact f JOIN we_dim1 d1 ON f.k1 = d1.id GROUP BY d1.grp, k2 ORDER BY 1, 2;
-- EXPLAIN ANALYZE sums the engine's counters over every participant
CREATE FUNCTION we_explain_line(q text, key text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	r text;
BEGIN
	FOR r IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
		IF r LIKE '%' || key || ':%' THEN
			RETURN trim(r);
		END IF;
	END LOOP;
	RETURN NULL;
END $$;
SELECT we_explain_line('SELECT d1.grp, k2, count(*) FROM we_fact_a f JOIN we_dim1 d1 ON f.k1 = d1.id GROUP BY d1.grp, k2', 'Fact Rows')
       = 'Fact Rows: ' || (SELECT count(*) FROM we_fact) AS all_participants_counted,
       we_explain_line('SELECT d1.grp, k2, count(*) FROM we_fact_a f JOIN we_dim1 d1 ON f.k1 = d1.id GROUP BY d1.grp, k2', 'Workers Planned') AS parallel;
-- the leader builds the dimension once and hands it to the workers in the
-- DSM: the dimension plan runs once (loops=1) although workers ran.  (A
-- worker slot can be briefly unavailable on a busy machine: up to 10 runs
-- until one launches workers; a run without workers proves nothing.)
CREATE FUNCTION we_dim_once(q text) RETURNS TABLE (workers_launched bool, dim_scan text)
LANGUAGE plpgsql AS $$
DECLARE
	r text;
	i int;
BEGIN
	FOR i IN 1 .. 10 LOOP
		workers_launched := false;
		dim_scan := NULL;
		FOR r IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
			IF r ~ 'Workers Launched: [1-9]' THEN
				workers_launched := true;
			ELSIF r ~ 'Scan on we_dim1' THEN
				dim_scan := trim(r);
			END IF;
		END LOOP;
		EXIT WHEN workers_launched;
		PERFORM pg_sleep(0.2);
	END LOOP;
	RETURN NEXT;
END $$;
SET pg_warp.cache_heap_dimensions = off;   -- built, not taken from the cache
SELECT * FROM we_dim_once('SELECT d1.grp, k2, count(*) FROM we_fact_a f JOIN we_dim1 d1 ON f.k1 = d1.id GROUP BY d1.grp, k2');
RESET pg_warp.cache_heap_dimensions;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET pg_warp.cpu_threads;
ALTER TABLE we_dim1 RESET (parallel_workers);

-- the CPU driver on threads of this backend: a serial plan whose threads
-- each emit their partial states, combined by the Finalize step
SET pg_warp.cpu_threads = 4;
EXPLAIN (COSTS OFF)
SELECT d1.grp, k2, count(*), sum(price), max(f8) FROM we_fact_a f JOIN we_dim1 d1 ON f.k1 = d1.id GROUP BY d1.grp, k2;
SELECT count(*) AS differences FROM (
  (SELECT d1.grp, k2, count(*), sum(price), max(f8) FROM we_fact_a f JOIN we_dim1 d1 ON f.k1 = d1.id GROUP BY d1.grp, k2
   EXCEPT ALL
   SELECT d1.grp, k2, count(*), sum(price), max(f8) FROM we_fact f JOIN we_dim1 d1 ON f.k1 = d1.id GROUP BY d1.grp, k2)
  UNION ALL
  (SELECT d1.grp, k2, count(*), sum(price), max(f8) FROM we_fact f JOIN we_dim1 d1 ON f.k1 = d1.id GROUP BY d1.grp, k2
   EXCEPT ALL
   SELECT d1.grp, k2, count(*), sum(price), max(f8) FROM we_fact_a f JOIN we_dim1 d1 ON f.k1 = d1.id GROUP BY d1.grp, k2)) x;
SELECT count(*), sum(price), min(d), max(f8) FROM we_fact_a WHERE q < 40;
SELECT count(*), sum(price), min(d), max(f8) FROM we_fact WHERE q < 40;
-- a row's error is PostgreSQL's
SELECT sum(price / (k1 - 3)) FROM we_fact_a;
SELECT sum(price / (k1 - 3)) FROM we_fact;
RESET pg_warp.cpu_threads;

-- not offloaded: a full join, a DISTINCT aggregate with FILTER
EXPLAIN (COSTS OFF)
SELECT count(*) FROM we_fact_a f FULL JOIN we_dim2 d ON f.k2 = d.id;
EXPLAIN (COSTS OFF)
SELECT count(DISTINCT k1) FILTER (WHERE q > 1), sum(price) FROM we_fact_a;
-- EXPLAIN VERBOSE says why a query was left to PostgreSQL
CREATE FUNCTION we_reason(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) ' || q LOOP
    IF l LIKE 'pg_warp:%' THEN RETURN NEXT l; END IF;
  END LOOP;
END $$;
SELECT we_reason('SELECT count(*) FROM we_fact_a f FULL JOIN we_dim2 d ON f.k2 = d.id');
SELECT we_reason('SELECT count(DISTINCT k1) FILTER (WHERE q > 1), sum(price) FROM we_fact_a');
SELECT we_reason('SELECT sum(k2) FROM we_fact_a');
SELECT we_reason('SELECT count(*) FROM we_fact_a WHERE k1::text = ''3''');
SELECT we_reason('SELECT count(*) FROM we_fact_a f JOIN we_dim2 d ON f.k2 < d.id');
-- text columns of the fact table: LIKE, NOT LIKE and a text group key
-- (the CPU driver: the daemon never sees text); 47 rows are too few to
-- offload at the usual costs
SET cpu_tuple_cost = 10000;
SET cpu_operator_cost = 2500;
SET jit = off;
EXPLAIN (COSTS OFF)
SELECT name, count(*), sum(grp) FROM we_dim1_a WHERE name LIKE 'name _' AND name NOT LIKE '%3' GROUP BY name;
SELECT name, count(*), sum(grp) FROM we_dim1_a WHERE name LIKE 'name _' AND name NOT LIKE '%3'
GROUP BY name ORDER BY name;
SELECT count(*) AS differences FROM (
  (SELECT name, count(*), sum(grp) FROM we_dim1_a WHERE name NOT LIKE '%l%' GROUP BY name
   EXCEPT ALL
   SELECT name, count(*), sum(grp) FROM we_dim1 WHERE name NOT LIKE '%l%' GROUP BY name)
  UNION ALL
  (SELECT name, count(*), sum(grp) FROM we_dim1 WHERE name NOT LIKE '%l%' GROUP BY name
   EXCEPT ALL
   SELECT name, count(*), sum(grp) FROM we_dim1_a WHERE name NOT LIKE '%l%' GROUP BY name)) x;
RESET cpu_tuple_cost;
RESET cpu_operator_cost;
RESET jit;
-- mode gpu: the job goes to pg_warp_gpud (the test cluster runs one), in a
-- plan that is never parallel (the daemon does the reading)
SET pg_warp.mode = gpu;
SELECT count(*) AS no_reason_on_daemon FROM we_reason('SELECT count(*) FROM we_fact_a');
EXPLAIN (COSTS OFF)
SELECT d.name, count(*), sum(f.price) FROM we_fact_a f JOIN we_dim1 d ON f.k1 = d.id GROUP BY 1;
-- the same groups as the heap table the Arrow file came from
SELECT count(*) AS differences FROM (
  (SELECT d.name, count(*), sum(f.price) FROM we_fact_a f JOIN we_dim1 d ON f.k1 = d.id GROUP BY 1
   EXCEPT ALL
   SELECT d.name, count(*), sum(f.price) FROM we_fact f JOIN we_dim1 d ON f.k1 = d.id GROUP BY 1)
  UNION ALL
  (SELECT d.name, count(*), sum(f.price) FROM we_fact f JOIN we_dim1 d ON f.k1 = d.id GROUP BY 1
   EXCEPT ALL
   SELECT d.name, count(*), sum(f.price) FROM we_fact_a f JOIN we_dim1 d ON f.k1 = d.id GROUP BY 1)) x;
SET pg_warp.mode = cpu;
SELECT count(*) AS no_reason_when_offloaded FROM we_reason('SELECT count(*) FROM we_fact_a');
SET pg_warp.enabled = off;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM we_fact_a;
RESET pg_warp.enabled;
