#!/bin/bash
# On the GPU machine, against a running cluster (as bench_gpu_ab.sh): SSB
# through the GPU with the tile kernel (src/gpud/warp_gpu_tile.cu) on and
# off, same daemon binary, same cluster and data.  Each pass's daemon is a
# two-line wrapper that sets PG_WARP_GPU_TILE and execs the installed
# daemon, so the supervisor restarts the same binary with the kernel on or
# off.  bench_gpu_ab.sh's first step compares the 13 answers with the CPU
# driver's (under whichever setting the running daemon has).
#
#   SF=20 RUNS=3 bash scripts/bench_gpu_tile_ab.sh
set -uo pipefail
cd "$(dirname "$0")/.."
WORK=${PGWARP_TEST_DIR:-/tmp/pgwarp-bench}
mkdir -p "$WORK/tile-ab"
real=$(readlink -f "$(pg_config --bindir)/pg_warp_gpud")
cp "$real" "$WORK/gpud-tile-real"
for m in tile:1 rows:0; do
	printf '#!/bin/sh\nPG_WARP_GPU_TILE=%s exec %s "$@"\n' "${m##*:}" "$WORK/gpud-tile-real" \
		>"$WORK/tile-ab/${m%%:*}"
	chmod 755 "$WORK/tile-ab/${m%%:*}"
done
AB_DIR="$WORK/tile-ab" bash scripts/bench_gpu_ab.sh
