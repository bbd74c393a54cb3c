#!/bin/bash
# Spatial join and filter benchmark (synthetic data) in a throwaway cluster:
#   bench/postgis/run.sh [POINTS] [POLYGONS]
# PostGIS with a GiST index (pg_warp.enabled = off, parallel workers as
# configured) against pg_warp's WarpSpatialJoin/WarpSpatialFilter (CPU,
# parallel workers as configured, over the heap table and over its GeoArrow
# dump) and shapely's STRtree; answers are compared with PostGIS's.
set -euo pipefail
cd "$(dirname "$0")/../.."
POINTS=${1:-5000000}
POLYS=${2:-1000}
export PATH="$(pg_config --bindir):$PATH"
. scripts/cluster.sh
if [ -z "${USE_RUNNING_CLUSTER:-}" ]; then
trap cluster_stop EXIT
cluster_start -c shared_buffers=1GB -c max_wal_size=8GB -c shared_preload_libraries=pg_warp \
	-c pg_warp.gpud_device=cpu
fi
export PGWARP_BIN="${PGWARP_BIN:-$PWD/build/pgwarp}"
python3 bench/postgis/bench_postgis.py "$POINTS" "$POLYS" \
	"bench/results/$(date +%F)-postgis-${POINTS}x${POLYS}-$(hostname -s).md"
