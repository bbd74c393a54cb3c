#!/bin/bash
# Parquet page indexes and Bloom filters: SSB lineorder (synthetic, from
# `pgwarp ssb gen --cluster-by-date`) as Arrow and as Parquet written by
# pyarrow with and without a page index and Bloom filters; selective
# queries through arrow_fdw and the CPU engine, and DuckDB reading the same
# Parquet files, in a throwaway cluster.
#   bench/parquet_pageindex.sh [SF]   (needs pg_warp installed, pyarrow, duckdb)
set -euo pipefail
cd "$(dirname "$0")/.."
SF=${1:-1}
export PATH="$(pg_config --bindir):$PATH"
. scripts/cluster.sh
trap cluster_stop EXIT
cluster_start -c shared_buffers=1GB -c shared_preload_libraries=pg_warp
DATA="$PGWARP_TEST_DIR/ssb"
build/pgwarp ssb gen --sf "$SF" --format arrow --cluster-by-date --out "$DATA" --quiet
psql -qX -c "CREATE EXTENSION pg_warp"
python3 bench/parquet_pageindex.py "$DATA" "$SF" \
	"bench/results/$(date +%F)-parquet-pageindex-sf$SF-$(hostname -s).md"
