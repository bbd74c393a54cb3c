#!/bin/bash
# Parquet vs Arrow through arrow_fdw and the CPU engine, in a throwaway
# cluster: SSB lineorder from `pgwarp ssb gen` (synthetic), the same rows
# written as Parquet by pyarrow (snappy, and zstd), queries over lineorder
# alone.  bench/parquet_scan.sh [SF]   (needs pg_warp installed, pyarrow)
set -euo pipefail
cd "$(dirname "$0")/.."
SF=${1:-1}
export PATH="$(pg_config --bindir):$PATH"
. scripts/cluster.sh
trap cluster_stop EXIT
cluster_start -c shared_buffers=1GB -c shared_preload_libraries=pg_warp
DATA="$PGWARP_TEST_DIR/ssb"
build/pgwarp ssb gen --sf "$SF" --format arrow --out "$DATA" --quiet
psql -qX -c "CREATE EXTENSION pg_warp"
python3 bench/parquet_scan.py "$DATA" "$SF" \
	"bench/results/$(date +%F)-parquet-scan-sf$SF-$(hostname -s).md"
