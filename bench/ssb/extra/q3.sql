-- numeric arithmetic (TPC-H Q1's shape): integer columns cast to numeric,
-- exact sums of products
SELECT d_year, sum(lo_extendedprice::numeric * (1 - lo_discount * 0.01)) AS net,
       avg(lo_quantity::numeric * 1.5 + lo_tax) AS q
FROM lineorder, date
WHERE lo_orderdate = d_datekey
GROUP BY d_year
ORDER BY d_year;
