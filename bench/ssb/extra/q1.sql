-- text group key on the fact table (varchar lo_shipmode)
SELECT lo_shipmode, count(*), sum(lo_revenue)
FROM lineorder
GROUP BY lo_shipmode
ORDER BY lo_shipmode;
