#!/bin/bash
# Profile the GPU driver's row kernel under Nsight Compute on the GPU machine:
# the running daemon is replaced by `ncu ... <daemon>`, the given SSB
# queries run once each under pg_warp.mode = gpu, the daemon is stopped (ncu
# then writes its report) and the report's details page is printed.
#
#   (after scripts/device_gpud_wrappers.sh, inside device-pg.sh)
#   GPUD=/tmp/gpudbin/real SCHEMA=ssb1 QUERIES="q1.1 q3.1" COUNT=8 \
#       bash scripts/profile_gpud.sh
#
# GPUD: the daemon binary to profile; KERNEL: a regex of the kernels to
# profile (default warp_gpu_rows; warp_gpu_tile for the tile kernel); COUNT:
# launches to profile (the first ones after SKIP); SECTIONS: ncu sections (default: the
# speed of light, occupancy, launch, warp state and scheduler statistics,
# source counters).  The installed daemon (a symlink to a writable file, see
# device_gpud_wrappers.sh) is put back afterwards.  Output in $OUT:
# ncu-<tag>.txt (details page), ncu-<tag>.log (ncu's own messages).
set -uo pipefail
cd "$(dirname "$0")/.."
GPUD=${GPUD:-/tmp/gpudbin/real}
SCHEMA=${SCHEMA:-ssb1}
QUERIES=${QUERIES:-q1.1 q2.1 q3.1 q4.1}
COUNT=${COUNT:-8}
KERNEL=${KERNEL:-warp_gpu_rows}
SKIP=${SKIP:-0}
TAG=${TAG:-rows}
SECTIONS=${SECTIONS:-SpeedOfLight Occupancy LaunchStats WarpStateStats SchedulerStats SourceCounters ComputeWorkloadAnalysis MemoryWorkloadAnalysis}
OUTDIR=${OUT:-build/gpu-profile}
mkdir -p "$OUTDIR"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[ -n "$NCU" ] || { echo "no ncu on this machine"; exit 1; }
q() { psql -XAtq -v ON_ERROR_STOP=1 "$@"; }
status() { q -c "SELECT pg_read_file('pg_warp_gpud.status', 0, 256, true)"; }
gpud_pid() { status | cut -f4; }
wait_new() {
	local old=$1 st pid i
	for i in $(seq 1 600); do
		st=$(status)
		pid=$(echo "$st" | cut -f4)
		case "$st" in gpu*) [ -n "$pid" ] && [ "$pid" != "$old" ] && { echo "$st"; return 0; } ;; esac
		sleep 0.1
	done
	echo "daemon did not come back: $st"
	return 1
}

target=$(readlink -f "$(pg_config --bindir)/pg_warp_gpud")
[ -w "$(dirname "$target")" ] || { echo "cannot replace $target"; exit 1; }
cp "$target" /tmp/gpud-before-profile
rep=/tmp/pgwarp-ncu-$TAG
rm -f "$rep.ncu-rep"
sec=""
for s in $SECTIONS; do sec="$sec --section $s"; done
cat >"$target.new" <<EOF
#!/bin/sh
exec "$NCU" --clock-control none --target-processes all -k regex:$KERNEL \
	--launch-skip $SKIP --launch-count $COUNT $sec -o $rep -f \
	"$GPUD" "\$@" >>/tmp/pgwarp-ncu-$TAG.log 2>&1
EOF
chmod 755 "$target.new" && mv -f "$target.new" "$target"
old=$(gpud_pid)
kill -9 "$old" 2>/dev/null
wait_new "$old" || exit 1

for qn in $QUERIES; do
	sql=$(sed -E 's/\b(lineorder|customer|supplier|part|date)\b/\1_arrow/g' "bench/ssb/queries/$qn.sql")
	echo "== $qn"
	PGOPTIONS="-c search_path=$SCHEMA -c pg_warp.mode=gpu" q -c "EXPLAIN (ANALYZE) $sql" |
		grep -E "Ran On|Fallback|Kernel Time|Daemon Time|Execution Time" | sed 's/^ *//'
done

# a TERM lets the daemon exit (ncu then writes the report); the supervisor
# starts the original binary again
cp /tmp/gpud-before-profile "$target.new" && mv -f "$target.new" "$target"
old=$(gpud_pid)
kill -TERM "$old" 2>/dev/null
for i in $(seq 1 600); do [ -s "$rep.ncu-rep" ] && ! pgrep -f "ncu.*$rep" >/dev/null && break; sleep 0.2; done
wait_new "$old"
cp "/tmp/pgwarp-ncu-$TAG.log" "$OUTDIR/ncu-$TAG.log" 2>/dev/null
if [ -s "$rep.ncu-rep" ]; then
	"$NCU" --import "$rep.ncu-rep" --page details >"$OUTDIR/ncu-$TAG.txt" 2>&1
	echo "report: $(wc -l <"$OUTDIR/ncu-$TAG.txt") lines in ncu-$TAG.txt"
else
	echo "no report was written (see ncu-$TAG.log)"
	exit 1
fi
