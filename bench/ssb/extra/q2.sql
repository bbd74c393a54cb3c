-- LIKE on the fact table, text group key, a join
SELECT d_year, lo_orderpriority, count(*), sum(lo_extendedprice)
FROM lineorder, date
WHERE lo_orderdate = d_datekey AND lo_shipmode LIKE '%AIR%' AND lo_orderpriority NOT LIKE '5%'
GROUP BY d_year, lo_orderpriority
ORDER BY d_year, lo_orderpriority;
