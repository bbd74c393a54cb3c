-- top-N lines of one table: the 100 largest revenues among small,
-- discounted lines
SELECT lo_orderkey, lo_linenumber, lo_discount, lo_quantity, lo_revenue
FROM lineorder
WHERE lo_discount BETWEEN 1 AND 3 AND lo_quantity < 25
ORDER BY lo_revenue DESC, lo_orderkey, lo_linenumber
LIMIT 100;
