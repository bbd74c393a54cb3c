-- A synthetic table of SSB lineorder's shape (17 columns: 15 int4, 2 text),
-- :rows rows, until the SSB generator exists (issue 4).  Dates are int4
-- yyyymmdd keys of the 2557 days 1992-01-01 .. 1998-12-31, as in SSB.
CREATE UNLOGGED TABLE lineorder AS
SELECT (i / 4)::int4 AS lo_orderkey, (i % 7 + 1)::int4 AS lo_linenumber,
       (i * 7919 % 30000)::int4 AS lo_custkey, (i * 104729 % 200000)::int4 AS lo_partkey,
       (i * 31 % 2000)::int4 AS lo_suppkey,
       to_char(date '1992-01-01' + (i * 17 % 2557)::int4, 'YYYYMMDD')::int4 AS lo_orderdate,
       (ARRAY['1-URGENT','2-HIGH','3-MEDIUM','4-NOT SPECI','5-LOW'])[i % 5 + 1] AS lo_orderpriority,
       (i % 2)::int4 AS lo_shippriority, (i % 50 + 1)::int4 AS lo_quantity,
       (i * 13 % 10000000)::int4 AS lo_extendedprice, (i * 17 % 50000000)::int4 AS lo_ordtotalprice,
       (i % 11)::int4 AS lo_discount, (i * 19 % 10000000)::int4 AS lo_revenue,
       (i * 23 % 100000)::int4 AS lo_supplycost, (i % 9)::int4 AS lo_tax,
       to_char(date '1992-01-01' + (i * 3 % 2557)::int4, 'YYYYMMDD')::int4 AS lo_commitdate,
       (ARRAY['AIR','FOB','MAIL','RAIL','REG AIR','SHIP','TRUCK'])[i % 7 + 1] AS lo_shipmode
FROM generate_series(1::bigint, :rows) i;
VACUUM ANALYZE lineorder;
