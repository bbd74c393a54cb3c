-- SSB Q1.3; selectivity (1/364)(3/11)(5/50) = 0.0075 % of lineorder.  The paper
-- (revision 3) has lo_quantity between 36 and 40; many copies elsewhere have
-- 26 and 35 (selectivity 0.015 %), which does not match the paper's figure.
select sum(lo_extendedprice * lo_discount) as revenue
from lineorder, date
where lo_orderdate = d_datekey
  and d_weeknuminyear = 6
  and d_year = 1994
  and lo_discount between 5 and 7
  and lo_quantity between 36 and 40;
