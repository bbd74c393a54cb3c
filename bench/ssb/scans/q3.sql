-- a window over the filtered lines: each customer's single-unit,
-- undiscounted lines ranked by revenue (first 1000 rows)
SELECT lo_custkey, lo_orderdate, lo_revenue,
       rank() OVER (PARTITION BY lo_custkey
                    ORDER BY lo_revenue DESC, lo_orderkey, lo_linenumber) AS r
FROM lineorder
WHERE lo_quantity = 1 AND lo_discount = 0
ORDER BY lo_custkey, r
LIMIT 1000;
