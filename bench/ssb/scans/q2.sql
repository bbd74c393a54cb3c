-- the lines of one month shipped by air without tax
SELECT lo_orderkey, lo_linenumber, lo_custkey, lo_revenue, lo_supplycost
FROM lineorder
WHERE lo_orderdate BETWEEN 19940101 AND 19940131 AND lo_tax = 0 AND lo_shipmode = 'AIR'
ORDER BY lo_orderkey, lo_linenumber;
