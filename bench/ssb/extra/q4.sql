-- a DISTINCT aggregate beside plain ones (pg_warp_merge over the engine's
-- (keys, lo_custkey) groups): distinct customers, revenue and orders per
-- year and region
SELECT d_year, c_region, count(DISTINCT lo_custkey) AS customers,
       sum(lo_revenue) AS revenue, count(*) AS lines
FROM lineorder, date, customer
WHERE lo_orderdate = d_datekey AND lo_custkey = c_custkey
GROUP BY d_year, c_region
ORDER BY d_year, c_region;
