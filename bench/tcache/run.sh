#!/bin/bash
# The GPU table cache benchmark (tcache_bench.py) on a throwaway cluster
# with pg_warp preloaded.  DEVICE=cpu (default) runs pg_warp_gpud on its CPU
# driver; DEVICE=gpu on the GPU.  Arguments go to tcache_bench.py; the
# report goes to stdout.
#
#   bench/tcache/run.sh [--rows N] [--runs R] [--write-seconds S] [--clients C]
#                       [--write-rounds N] [--writes-only]
# PGOPTS adds server options, e.g. PGOPTS="-c pg_warp.gpu_table_cache_ring=0".
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/cluster.sh
trap cluster_stop EXIT
cluster_start "-c shared_preload_libraries=pg_warp" "-c pg_warp.gpud_device=${DEVICE:-cpu}" \
	"-c max_parallel_workers_per_gather=${WORKERS:-2}" "-c shared_buffers=1GB" ${PGOPTS:-}
for _ in $(seq 1 100); do
	psql -qAtc "SELECT pg_read_file('pg_warp_gpud.status', 0, 256, true) IS NOT NULL" | grep -q t && break
	sleep 0.2
done
python3 bench/tcache/tcache_bench.py "$@"
