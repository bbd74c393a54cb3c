--
-- warp_rollup: GROUPING SETS, ROLLUP and CUBE.  The engine groups by every
-- column of every set and keeps the aggregates' partial states; a sorted
-- grouping sets Agg above combines them per set through pg_warp_merge
-- (under a WarpMerge node).  Uses warp_joins' tables and wj_check: every
-- query runs over heap tables with pg_warp off and over the Arrow copies
-- with pg_warp on, and the answers must be the same multiset.
--
SET pg_warp.explain_stable = on;
SET pg_warp.mode = cpu;

CREATE TABLE wr_queries (n integer, q text);
INSERT INTO wr_queries VALUES
(1, 'SELECT k2, kd, count(*) n, sum(price) s, avg(q) a FROM wj_f_@ GROUP BY ROLLUP (k2, kd)'),
(2, 'SELECT k2, q % 3 AS m, count(*) n, min(price) mn, max(kd) mx, sum(k2) s8 FROM wj_f_@ GROUP BY CUBE (k2, q % 3)'),
(3, 'SELECT k1, k2, count(kd) n, sum(q) s FROM wj_f_@ GROUP BY GROUPING SETS ((k1), (k2), ())'),
-- GROUPING(), HAVING, ORDER BY on a combined aggregate
(4, 'SELECT k2, kd, GROUPING(k2, kd) g, sum(price) s FROM wj_f_@ GROUP BY ROLLUP (k2, kd) HAVING count(*) > 100 ORDER BY s DESC, k2, kd, g LIMIT 20'),
-- a join, a dimension column in the sets, a left join's NULL row
(5, 'SELECT d1.name, f.k2, count(*) n, avg(f.price) a FROM wj_f_@ f LEFT JOIN wj_d1_@ d1 ON f.k1 = d1.id GROUP BY ROLLUP (d1.name, f.k2)'),
-- NULLs in a key column beside the rolled-up NULLs: GROUPING() tells them apart
(6, 'SELECT k1, GROUPING(k1) g, count(*) n FROM wj_f_@ GROUP BY ROLLUP (k1)'),
-- empty input: the empty set still has its row (count 0, sum NULL)
(7, 'SELECT k2, count(*) n, sum(price) s FROM wj_f_@ WHERE price < 0 GROUP BY ROLLUP (k2)'),
-- a plain column beside the sets, and DISTINCT aggregates inside them
(8, 'SELECT k2, kd, count(*) n FROM wj_f_@ GROUP BY k2, ROLLUP (kd)'),
(9, 'SELECT k2, count(DISTINCT k1) c, sum(price) s FROM wj_f_@ GROUP BY ROLLUP (k2)'),
(10, 'SELECT k2, q % 2 AS m, count(DISTINCT kd) c, count(*) n FROM wj_f_@ GROUP BY GROUPING SETS ((k2), (q % 2))'),
-- constant group keys: the rolled-up rows show NULL, not the constant
(11, 'SELECT 1 = 5 AS c, 7 AS x, k2, count(*) n FROM wj_f_@ GROUP BY CUBE (1, 2), k2'),
(12, 'SELECT 1 = 5 AS c, 7 AS x, count(*) n FROM wj_f_@ WHERE price < 0 GROUP BY CUBE (1, 2)');

SELECT n, (wj_check(q)).* FROM wr_queries ORDER BY n;

EXPLAIN (COSTS OFF)
SELECT k2, kd, count(*), sum(price) FROM wj_f_a GROUP BY ROLLUP (k2, kd);
EXPLAIN (COSTS OFF)
SELECT k2, kd, count(*) FROM wj_f_a GROUP BY CUBE (k2, kd);

-- the same through pg_warp_gpud
SET pg_warp.mode = gpu;
SELECT n, (wj_check(q)).* FROM wr_queries ORDER BY n;
RESET pg_warp.mode;
