--
-- warp_stable: stable expressions (CURRENT_DATE, now(), and expressions over
-- them) folded into constants when the program is built at executor start.
-- A clock is folded anywhere (evaluating it cannot fail); any other stable
-- expression only as an operand of a WHERE condition's operator, where
-- PostgreSQL itself evaluates it once at scan start for an index scan.
-- Volatile functions are never offloaded.  Uses warp_joins' tables and
-- wj_check; the results do not depend on today's date.
--
SET pg_warp.explain_stable = on;
SET pg_warp.mode = cpu;

CREATE TABLE ws_queries (n integer, q text);
INSERT INTO ws_queries VALUES
(1, 'SELECT count(*), sum(price) FROM wj_f_@ WHERE kd >= current_date - (current_date - date ''2000-01-20'')'),
(2, 'SELECT k2, count(*) FROM wj_f_@ WHERE kd < (now() - (now() - timestamptz ''2000-01-15 12:00+00''))::date GROUP BY k2'),
(3, 'SELECT count(*) FILTER (WHERE kd < current_date) c, max(kd) FROM wj_f_@'),
(4, 'SELECT d1.name, count(*) FROM wj_f_@ f JOIN wj_d1_@ d1 ON f.k1 = d1.id WHERE f.kd BETWEEN date ''2000-01-10'' AND current_date GROUP BY 1'),
-- kept with PostgreSQL: a stable expression inside an aggregate''s FILTER
-- (not a WHERE operand), a volatile function
(5, 'SELECT count(*) FILTER (WHERE kd >= to_date(''2000-01-20'', ''YYYY-MM-DD'')) FROM wj_f_@'),
(6, 'SELECT count(*) FROM wj_f_@ WHERE q > 100 * random()'),
-- a clock with date arithmetic in a FILTER: the clock folded, the
-- arithmetic computed by the engine
(7, 'SELECT count(*) FILTER (WHERE kd >= current_date - (current_date - date ''2000-01-20'')) FROM wj_f_@');

SELECT n, offloaded, same OR n = 6 AS same FROM ws_queries, wj_check(q) ORDER BY n;

EXPLAIN (COSTS OFF)
SELECT count(*) FROM wj_f_a WHERE kd >= current_date - (current_date - date '2000-01-20');

-- through pg_warp_gpud: the folded values travel in the program
SET pg_warp.mode = gpu;
SELECT n, (wj_check(q)).* FROM ws_queries WHERE n <= 4 ORDER BY n;
RESET pg_warp.mode;
