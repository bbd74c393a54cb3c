#!/bin/bash
# arrow_fdw scan benchmark in a throwaway cluster: bench/fdw_scan.sh [ROWS]
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${1:-6000000}
export PATH="$(pg_config --bindir):$PATH"
. scripts/cluster.sh
# USE_RUNNING_CLUSTER=1: use the cluster of PGHOST/PGPORT (e.g. the devkit's on the GPU machine)
if [ -z "${USE_RUNNING_CLUSTER:-}" ]; then
trap cluster_stop EXIT
cluster_start -c shared_buffers=2GB -c max_wal_size=8GB -c shared_preload_libraries=pg_warp
fi
psql -qX -c "CREATE EXTENSION pg_warp"
python3 bench/fdw_scan.py "$ROWS" "bench/results/$(date +%F)-fdw-scan-$(hostname -s).md"
