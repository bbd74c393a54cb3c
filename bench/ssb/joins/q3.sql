-- a brand's discounted lines, with their part and supplier
SELECT lo_orderkey, lo_linenumber, p_name, s_name, lo_discount, lo_extendedprice
FROM lineorder, part, supplier
WHERE lo_partkey = p_partkey AND lo_suppkey = s_suppkey
  AND p_brand1 = 'MFGR#2221' AND lo_discount >= 9
ORDER BY lo_orderkey, lo_linenumber;
