#!/bin/bash
# `make demo`: installs dependencies, builds and installs pg_warp, starts a
# throwaway cluster with pg_warp preloaded, makes a 1M-row table, dumps it
# to Arrow with pgwarp, shows the file from the shell and from SQL, checks
# it against pyarrow; then generates the Star Schema Benchmark at SF=1
# (DEMO_SF), loads it as heap and arrow_fdw tables, runs `pgwarp bench ssb`
# in every mode (fact-warp: lineorder in Arrow, the dimensions left in heap
# tables; modes this machine cannot run are reported as skipped),
# prints the table and the chart's path (results kept in build/demo/), and
# stops the cluster.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PATH="$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin):$PATH"
bash scripts/deps.sh
export PATH="$(pg_config --bindir):$PATH"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)

echo "== building"
make -s -j2 all >build.log 2>&1 || { tail -40 build.log; exit 1; }
"${sudo_cmd[@]}" make -s install >>build.log 2>&1 || { tail -20 build.log; exit 1; }

. scripts/cluster.sh
trap cluster_stop EXIT
cluster_start -c shared_preload_libraries=pg_warp
ROWS=${DEMO_ROWS:-1000000}
F="$PGWARP_TEST_DIR/demo.arrow"

echo "== a $ROWS-row table in PostgreSQL"
psql -q -v ON_ERROR_STOP=1 <<SQL
CREATE EXTENSION pg_warp;
CREATE TABLE demo AS
SELECT i AS id, (i % 1000)::int4 AS customer, (i * 7 % 10000) / 100.0 AS price,
       (random() * 100)::float8 AS score, date '1995-01-01' + (i % 2557) AS day,
       'order-' || i AS label
FROM generate_series(1, $ROWS) i;
SQL

echo "== pgwarp dump (PostgreSQL -> Arrow, binary COPY, constant memory)"
/usr/bin/time -f "   %e s, max RSS %M KB" pgwarp dump -t demo -o "$F" --quiet
echo "== pgwarp inspect"
pgwarp inspect "$F" | head -40
echo "== the same file seen from SQL"
psql -q -v ON_ERROR_STOP=1 -c "SELECT name, arrow_type, pg_type, pg_type_metadata FROM pg_warp_arrow_schema('$F')" \
     -c "SELECT count(*) AS batches, sum(rows) AS rows, pg_size_pretty(sum(body_bytes)) AS body FROM pg_warp_arrow_batches('$F')"
echo "== pyarrow reads it and agrees with PostgreSQL"
python3 - "$F" <<'PY'
import sys, subprocess, pyarrow.ipc as ipc
t = ipc.open_file(sys.argv[1]).read_all()
t.validate(full=True)
q = "SELECT count(*), sum(customer), sum(price), min(day)::text, max(label) FROM demo"
pg = subprocess.run(["psql", "-XAtF|", "-c", q], capture_output=True, text=True, check=True).stdout.strip().split("|")
import pyarrow.compute as pc
mine = [str(t.num_rows), str(pc.sum(t["customer"]).as_py()), str(pc.sum(t["price"]).as_py()),
        str(pc.min(t["day"]).as_py()), pc.max(t["label"]).as_py()]
print("   PostgreSQL:", pg)
print("   pyarrow:   ", mine)
sys.exit(0 if mine == pg else 1)
PY

SF=${DEMO_SF:-1}
SSB="$PGWARP_TEST_DIR/ssb"
echo "== Star Schema Benchmark, SF=$SF: pgwarp ssb gen (Arrow, and .tbl text for the heap tables)"
/usr/bin/time -f "   arrow: %e s" pgwarp ssb gen --sf "$SF" --format arrow --out "$SSB"
/usr/bin/time -f "   tbl:   %e s" pgwarp ssb gen --sf "$SF" --format tbl --out "$SSB"
ls -l "$SSB"
echo "== pgwarp ssb load (heap tables by COPY from .tbl, arrow_fdw tables over the .arrow files)"
/usr/bin/time -f "   %e s" pgwarp ssb load -d "$PGDATABASE" --from "$SSB"
echo "== pgwarp bench ssb (every mode; warm-up + 3 timed runs each; answers compared)"
rm -rf build/demo
mkdir -p build/demo
pgwarp bench ssb -d "$PGDATABASE" --modes heap,arrow,fact-warp,warp-cpu,warp-gpu --runs "${DEMO_RUNS:-3}" \
	--queries bench/ssb/queries --out build/demo --timeout 600
echo
cat build/demo/results.md
echo
echo "chart: $ROOT/build/demo/chart.svg   (table: $ROOT/build/demo/results.md, figures: $ROOT/build/demo/results.csv)"
echo "demo done"
