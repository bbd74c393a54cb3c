-- the lines behind one cell of q3.2's result: a year, a customer and a
-- supplier nation, small quantities
SELECT lo_orderkey, lo_linenumber, c_city, s_city, d_date, lo_quantity, lo_revenue
FROM lineorder, customer, supplier, date
WHERE lo_custkey = c_custkey AND lo_suppkey = s_suppkey AND lo_orderdate = d_datekey
  AND c_nation = 'UNITED STATES' AND s_nation = 'UNITED STATES'
  AND d_year = 1997 AND lo_quantity < 10
ORDER BY lo_orderkey, lo_linenumber;
