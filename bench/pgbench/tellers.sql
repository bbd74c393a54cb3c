-- weight 5: point read on pgbench_tellers (10 tellers per 100000 accounts)
\set tid random(1, greatest(1, :naccounts / 10000))
SELECT tbalance FROM pgbench_tellers WHERE tid = :tid;
