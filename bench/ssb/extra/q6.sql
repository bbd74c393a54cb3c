-- many groups: revenue per customer (30K groups at SF=1, 600K at SF=20),
-- the top 100; every engine thread (GPU lane) sees most customers, so
-- their partial groups are merged before the Finalize step
SELECT lo_custkey, sum(lo_revenue) AS revenue, count(*) AS lines,
       max(lo_orderdate) AS last_order
FROM lineorder
GROUP BY lo_custkey
ORDER BY revenue DESC, lo_custkey
LIMIT 100;
