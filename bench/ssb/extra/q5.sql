-- ROLLUP (pg_warp_merge under a grouping sets Agg): profit per year and
-- nation, per year, and in total
SELECT d_year, c_nation, sum(lo_revenue - lo_supplycost) AS profit, count(*) AS lines
FROM lineorder, date, customer
WHERE lo_orderdate = d_datekey AND lo_custkey = c_custkey AND c_region = 'AMERICA'
GROUP BY ROLLUP (d_year, c_nation)
ORDER BY d_year, c_nation;
