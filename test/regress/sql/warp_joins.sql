--
-- warp_joins: left, semi and anti joins of a star (the engine's join kinds),
-- and the join clauses that must keep a query with PostgreSQL.  Every query
-- runs twice: over heap tables with pg_warp off (the oracle) and over their
-- Arrow copies with pg_warp on; wj_check reports whether the engine took it
-- and whether the two answers are the same multiset of rows.
--
CREATE EXTENSION IF NOT EXISTS pg_warp;
\getenv dir PGWARP_TEST_DIR
SELECT set_config('regress.dir', :'dir', false) IS NOT NULL AS dir_set;
SET pg_warp.explain_stable = on;
SET pg_warp.mode = cpu;

-- fact: NULL keys, keys without a dimension row; int4 and int8 keys
CREATE TABLE wj_f_h (k1 integer, k2 bigint, kd date, q smallint, price integer);
INSERT INTO wj_f_h
SELECT CASE WHEN i % 13 = 0 THEN NULL ELSE i % 60 END, (i % 9)::bigint,
       CASE WHEN i % 17 = 0 THEN NULL ELSE date '2000-01-01' + i % 40 END,
       (i % 50)::smallint, 1000 + i % 997
FROM generate_series(1, 40000) i;
-- dimension 1: a NULL key, a duplicate key (5), keys 0..45 of the fact's 0..59
CREATE TABLE wj_d1_h (id integer, name text, grp integer);
INSERT INTO wj_d1_h SELECT i, 'name ' || (i % 9), i % 4 FROM generate_series(0, 45) i;
INSERT INTO wj_d1_h VALUES (NULL, 'null key', 0), (5, 'dup5', 1);
-- dimension 2 (int8 key, heap only), dimension 3 (date key)
CREATE TABLE wj_d2 (id bigint, label text);
INSERT INTO wj_d2 SELECT i, 'L' || i FROM generate_series(0, 6) i;
CREATE TABLE wj_d3_h (day date, season text);
INSERT INTO wj_d3_h SELECT date '2000-01-01' + i, CASE WHEN i < 20 THEN 'early' ELSE 'late' END
FROM generate_series(5, 30) i;

\! pgwarp dump -d dbname=pg_warp_regress --quiet -c 'SELECT * FROM wj_f_h' -o "$PGWARP_TEST_DIR/wj_f.arrow" --batch-rows 4096
\! pgwarp dump -d dbname=pg_warp_regress --quiet -c 'SELECT * FROM wj_d1_h' -o "$PGWARP_TEST_DIR/wj_d1.arrow"
\! pgwarp dump -d dbname=pg_warp_regress --quiet -c 'SELECT * FROM wj_d3_h' -o "$PGWARP_TEST_DIR/wj_d3.arrow"
DO $do$ BEGIN
  EXECUTE format($$CREATE FOREIGN TABLE wj_f_a (k1 integer, k2 bigint, kd date, q smallint, price integer)
    SERVER arrow_fdw OPTIONS (file %L)$$, current_setting('regress.dir') || '/wj_f.arrow');
  EXECUTE format($$CREATE FOREIGN TABLE wj_d1_a (id integer, name text, grp integer)
    SERVER arrow_fdw OPTIONS (file %L)$$, current_setting('regress.dir') || '/wj_d1.arrow');
  EXECUTE format($$CREATE FOREIGN TABLE wj_d3_a (day date, season text)
    SERVER arrow_fdw OPTIONS (file %L)$$, current_setting('regress.dir') || '/wj_d3.arrow');
END $do$;
ANALYZE wj_f_h, wj_d1_h, wj_d2, wj_d3_h, wj_f_a, wj_d1_a, wj_d3_a;

-- q names tables wj_f_@, wj_d1_@, wj_d3_@: @ becomes h (heap, pg_warp off)
-- or a (Arrow, pg_warp on)
CREATE FUNCTION wj_check(q text, OUT offloaded boolean, OUT same boolean, OUT nrows bigint)
LANGUAGE plpgsql AS $$
DECLARE
	line text;
	qa text := replace(q, '@', 'a');
	qh text := replace(q, '@', 'h');
BEGIN
	offloaded := false;
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || qa LOOP
		offloaded := offloaded OR line LIKE '%WarpPreAgg%';
	END LOOP;
	PERFORM set_config('pg_warp.enabled', 'off', true);
	EXECUTE 'CREATE TEMP TABLE wj_want AS ' || qh;
	PERFORM set_config('pg_warp.enabled', 'on', true);
	EXECUTE 'CREATE TEMP TABLE wj_got AS ' || qa;
	SELECT count(*) INTO nrows FROM wj_want;
	EXECUTE 'SELECT NOT EXISTS (SELECT * FROM wj_want EXCEPT ALL SELECT * FROM wj_got)
	            AND NOT EXISTS (SELECT * FROM wj_got EXCEPT ALL SELECT * FROM wj_want)' INTO same;
	DROP TABLE wj_want;
	DROP TABLE wj_got;
END $$;

CREATE TABLE wj_queries (n integer, q text);
INSERT INTO wj_queries VALUES
-- left joins: the NULL-extended rows group under NULL dimension columns
(1, 'SELECT d1.name, count(*), sum(price), avg(q) FROM wj_f_@ f LEFT JOIN wj_d1_@ d1 ON f.k1 = d1.id GROUP BY d1.name'),
(2, 'SELECT d1.name, d1.grp, count(*), sum(price) FROM wj_f_@ f LEFT JOIN wj_d1_@ d1 ON f.k1 = d1.id AND d1.grp = 2 WHERE q < 30 GROUP BY d1.name, d1.grp'),
(3, 'SELECT d1.name, d2.label, count(*), sum(price) FROM wj_f_@ f LEFT JOIN wj_d1_@ d1 ON f.k1 = d1.id JOIN wj_d2 d2 ON f.k2 = d2.id GROUP BY 1, 2'),
(4, 'SELECT d3.season, count(*), max(price) FROM wj_f_@ f LEFT JOIN wj_d3_@ d3 ON f.kd = d3.day GROUP BY 1'),
(5, 'SELECT count(*), sum(price) FROM wj_f_@ f LEFT JOIN wj_d1_@ d1 ON f.k1 = d1.id'),
(6, 'SELECT f.k2, d1.name, d3.season, count(*) FROM wj_f_@ f LEFT JOIN wj_d1_@ d1 ON f.k1 = d1.id LEFT JOIN wj_d3_@ d3 ON f.kd = d3.day GROUP BY 1, 2, 3'),
-- a left join to an empty dimension: every row NULL-extended
(7, 'SELECT d1.name, count(*) FROM wj_f_@ f LEFT JOIN wj_d1_@ d1 ON f.k1 = d1.id AND d1.grp = 99 GROUP BY 1'),
(8, 'SELECT d1.name, count(*) FROM wj_f_@ f LEFT JOIN (SELECT * FROM wj_d1_@ WHERE grp = 99) d1 ON f.k1 = d1.id GROUP BY 1'),
-- an inner join to an empty dimension
(9, 'SELECT d1.name, count(*) FROM wj_f_@ f JOIN wj_d1_@ d1 ON f.k1 = d1.id AND d1.grp = 99 GROUP BY 1'),
-- semi joins (EXISTS, IN): a duplicate dimension key counts once
(10, 'SELECT count(*), sum(price) FROM wj_f_@ f WHERE EXISTS (SELECT 1 FROM wj_d1_@ d1 WHERE d1.id = f.k1 AND d1.grp = 1)'),
(11, 'SELECT k2, count(*), sum(price) FROM wj_f_@ f WHERE k1 IN (SELECT id FROM wj_d1_@ d1 WHERE d1.grp = 1) GROUP BY k2'),
(12, 'SELECT count(*) FROM wj_f_@ f WHERE EXISTS (SELECT 1 FROM wj_d1_@ d1 WHERE d1.id = f.k1 AND d1.name IN (''dup5'', ''name 5''))'),
(13, 'SELECT d2.label, count(*) FROM wj_f_@ f JOIN wj_d2 d2 ON f.k2 = d2.id WHERE f.kd IN (SELECT day FROM wj_d3_@ WHERE season = ''late'') GROUP BY 1'),
-- anti joins (NOT EXISTS): a NULL fact key finds no partner, so it stays
(14, 'SELECT count(*), sum(price) FROM wj_f_@ f WHERE NOT EXISTS (SELECT 1 FROM wj_d1_@ d1 WHERE d1.id = f.k1 AND d1.grp = 1)'),
(15, 'SELECT d2.label, count(*) FROM wj_f_@ f JOIN wj_d2 d2 ON f.k2 = d2.id WHERE NOT EXISTS (SELECT 1 FROM wj_d1_@ d1 WHERE d1.id = f.k1) GROUP BY 1'),
(16, 'SELECT count(*) FROM wj_f_@ f WHERE NOT EXISTS (SELECT 1 FROM wj_d1_@ d1 WHERE d1.id = f.k1 AND d1.grp = 99)'),
-- PostgreSQL turns this left join into an anti join
(17, 'SELECT count(*), min(q) FROM wj_f_@ f LEFT JOIN wj_d1_@ d1 ON f.k1 = d1.id WHERE d1.id IS NULL'),
-- all kinds at once
(18, 'SELECT d1.name, d1.grp, count(*), min(price), max(q) FROM wj_f_@ f LEFT JOIN wj_d1_@ d1 ON f.k1 = d1.id AND d1.name LIKE ''name 1%''
      WHERE f.k2 IN (SELECT id FROM wj_d2 WHERE label <> ''L3'')
        AND NOT EXISTS (SELECT 1 FROM wj_d3_@ d3 WHERE d3.day = f.kd AND d3.season = ''early'') GROUP BY 1, 2'),
-- kept with PostgreSQL: a condition on the fact table alone in a left
-- join''s ON (it must not filter fact rows), a constant ON, a clause over
-- the nullable side above the join, a condition on the outer row inside
-- NOT EXISTS, a full join, a dimension joined to another dimension
(19, 'SELECT count(*), sum(price) FROM wj_f_@ f LEFT JOIN wj_d1_@ d1 ON f.k1 = d1.id AND f.q > 10'),
(20, 'SELECT d1.name, count(*) FROM wj_f_@ f LEFT JOIN wj_d1_@ d1 ON f.k1 = d1.id AND false GROUP BY 1'),
(21, 'SELECT count(*) FROM wj_f_@ f LEFT JOIN wj_d1_@ d1 ON f.k1 = d1.id WHERE coalesce(d1.grp, 0) = 0'),
(22, 'SELECT count(*) FROM wj_f_@ f WHERE NOT EXISTS (SELECT 1 FROM wj_d1_@ d1 WHERE d1.id = f.k1 AND f.q > 10)'),
(23, 'SELECT d1.name, count(*) FROM wj_f_@ f FULL JOIN wj_d1_@ d1 ON f.k1 = d1.id GROUP BY 1'),
(24, 'SELECT d2.label, count(*) FROM wj_f_@ f JOIN wj_d1_@ d1 ON f.k1 = d1.id LEFT JOIN wj_d2 d2 ON d2.id = d1.grp GROUP BY 1');

SELECT n, (wj_check(q)).* FROM wj_queries ORDER BY n;

-- plans: the join kind is shown with its keys
EXPLAIN (COSTS OFF)
SELECT d1.name, count(*) FROM wj_f_a f LEFT JOIN wj_d1_a d1 ON f.k1 = d1.id
WHERE NOT EXISTS (SELECT 1 FROM wj_d3_a d3 WHERE d3.day = f.kd)
  AND f.k2 IN (SELECT id FROM wj_d2)
GROUP BY 1;

-- the same through pg_warp_gpud (its CPU driver in CI, the GPU on a GPU
-- machine)
SET pg_warp.mode = gpu;
SELECT n, (wj_check(q)).* FROM wj_queries WHERE n <= 18 ORDER BY n;
RESET pg_warp.mode;
