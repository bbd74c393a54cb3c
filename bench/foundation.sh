#!/bin/bash
# Foundation benchmarks (issue 2), in a throwaway cluster on this machine:
#  1. pgwarp dump of a ROWS-row, 17-column table (lineorder's shape) vs
#     COPY ... TO STDOUT (FORMAT csv) of the same table, same server.
#  2. Reader: GB/s of column data touched when summing 4 of the 17 columns of
#     the dumped file (about 1 GB at 10M rows), pread and mmap sources.
# Usage: bench/foundation.sh [ROWS]   (default 10000000)
# Writes bench/results/<date>-foundation-<host>.md and prints it.
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${1:-10000000}
export PATH="$(pg_config --bindir):$PATH"
[ -n "${USE_RUNNING_CLUSTER:-}" ] || make -s -j2 all >/dev/null
. scripts/cluster.sh
# USE_RUNNING_CLUSTER=1: use the cluster of PGHOST/PGPORT (e.g. the devkit's on the GPU machine)
if [ -z "${USE_RUNNING_CLUSTER:-}" ]; then
trap cluster_stop EXIT
cluster_start -c shared_buffers=2GB -c max_wal_size=8GB
fi
W=$PGWARP_TEST_DIR

echo "creating the $ROWS-row table" >&2
psql -qX -v ON_ERROR_STOP=1 -v rows=$ROWS -f bench/sql/lineorder_synth.sql
heap=$(psql -XAtc "SELECT pg_total_relation_size('lineorder')")

t() { local s=$(date +%s.%N); "$@"; python3 -c "print(round($(date +%s.%N) - $s, 3))"; }
# warm-up read of the heap so both runs see it in shared buffers / page cache
psql -XAtc "SELECT count(*) FROM lineorder" >/dev/null

copy_s=$(t sh -c "psql -XAtc \"COPY lineorder TO STDOUT (FORMAT csv)\" > $W/lineorder.csv")
csv_bytes=$(stat -c %s "$W/lineorder.csv")
rm -f "$W/lineorder.csv"
dump_s=$(t pgwarp dump --quiet -t lineorder -o "$W/lineorder.arrow")
arrow_bytes=$(stat -c %s "$W/lineorder.arrow")
dumpz_s=$(t pgwarp dump --quiet -t lineorder -o "$W/lineorder_zstd.arrow" --compress zstd)
arrowz_bytes=$(stat -c %s "$W/lineorder_zstd.arrow")

cols="lo_quantity lo_extendedprice lo_discount lo_orderdate"
cat "$W/lineorder.arrow" >/dev/null
rd_pread=$(build/bench/arrow_read_bench "$W/lineorder.arrow" --mode pread --runs 5 $cols)
rd_mmap=$(build/bench/arrow_read_bench "$W/lineorder.arrow" --mode mmap --runs 5 $cols)
rd_zstd=$(build/bench/arrow_read_bench "$W/lineorder_zstd.arrow" --mode pread --runs 3 $cols)
med() { python3 -c "import sys,json,statistics; r=[json.loads(l) for l in sys.stdin if l.strip()]; print('%.2f GB/s (median of %d; %.3f s; %d MB of column data)' % (statistics.median(x['gbps'] for x in r), len(r), statistics.median(x['seconds'] for x in r), r[0]['column_bytes']/1e6))"; }

host=$(hostname -s); day=$(date +%F)
out=bench/results/$day-foundation-$host.md
mkdir -p bench/results
rate() { python3 -c "print('%.0f' % ($1 / $2))"; }
{
echo "# Foundation benchmarks — $day on $host"
echo
echo "Machine: $(nproc) cores, $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(lscpu | sed -n 's/^Model name: *//p'); PostgreSQL $(psql -XAtc 'SHOW server_version')."
echo "Command: \`bench/foundation.sh $ROWS\`. Table: $ROWS rows, 17 columns (15 int4, 2 text; lineorder's shape), unlogged heap of $((heap / 1048576)) MB, warm."
echo
echo "## pgwarp dump vs COPY TO CSV (same table, same server, client-side file)"
echo
echo "| method | seconds | rows/s | output MB | output MB/s |"
echo "|---|---|---|---|---|"
echo "| COPY lineorder TO STDOUT (FORMAT csv) via psql | $copy_s | $(rate $ROWS $copy_s) | $((csv_bytes / 1000000)) | $(rate $csv_bytes/1e6 $copy_s) |"
echo "| pgwarp dump (uncompressed) | $dump_s | $(rate $ROWS $dump_s) | $((arrow_bytes / 1000000)) | $(rate $arrow_bytes/1e6 $dump_s) |"
echo "| pgwarp dump --compress zstd | $dumpz_s | $(rate $ROWS $dumpz_s) | $((arrowz_bytes / 1000000)) | $(rate $arrowz_bytes/1e6 $dumpz_s) |"
echo
echo "Ratio dump/COPY time: $(python3 -c "print('%.2f' % ($dump_s / $copy_s))")."
echo
echo "## Reader: sum of 4 of 17 columns ($cols), file in page cache"
echo
echo "- pread source (what a backend does): $(echo "$rd_pread" | med)"
echo "- mmap source (zero-copy, what the GPU daemon will do): $(echo "$rd_mmap" | med)"
echo "- zstd-compressed file, pread + decompress: $(echo "$rd_zstd" | med)"
echo
echo "Raw runs:"
echo '```'
echo "$rd_pread"; echo "$rd_mmap"; echo "$rd_zstd"
echo '```'
} > "$out"
cat "$out"
