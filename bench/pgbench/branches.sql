-- weight 5: point read on pgbench_branches (1 branch per 100000 accounts)
\set bid random(1, greatest(1, :naccounts / 100000))
SELECT bbalance FROM pgbench_branches WHERE bid = :bid;
