-- weight 80: point read on the hot part of pgbench_accounts, the highest
-- :hot_pct percent of the aids (pass -D naccounts=<100000 * scale> -D hot_pct=5)
\set hot greatest(1, :naccounts * :hot_pct / 100)
\set aid random(:naccounts - :hot + 1, :naccounts)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
