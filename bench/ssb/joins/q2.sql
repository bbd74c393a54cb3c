-- the top 100 lines by revenue of one region's customers in one year
SELECT lo_orderkey, lo_linenumber, c_name, c_nation, d_date, lo_revenue
FROM lineorder, customer, date
WHERE lo_custkey = c_custkey AND lo_orderdate = d_datekey
  AND c_region = 'ASIA' AND d_year = 1994
ORDER BY lo_revenue DESC, lo_orderkey, lo_linenumber
LIMIT 100;
