-- weight 10: point read on pgbench_accounts, aid uniform over the keyspace
\set aid random(1, :naccounts)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
