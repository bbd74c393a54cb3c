#!/bin/bash
# A/B of pg_warp_gpud builds in one run on the GPU machine: SSB through the
# GPU under each daemon binary, same cluster, same data, same warm caches.
#
#   AB_DIR=build/ab SF=20 RUNS=5 bash scripts/bench_gpu_ab.sh
#
# AB_DIR holds daemon binaries (any names; each must speak the installed
# extension's protocol).  For each one in turn (twice, in the order given
# and then reversed, so drift shows): it is copied over the installed
# pg_warp_gpud, the running daemon is killed (the supervisor restarts it
# from the new file), and `pgwarp bench ssb --modes warp-gpu` runs plus
# one EXPLAIN ANALYZE per query for the kernel and daemon times.  Answers
# are compared with the CPU driver by the first pass (bench_gpu.sh).
# Results land in $OUT: ab-<name>-<pass>.md and ab-summary.txt.
#
# AB_ONCE=1 runs each build once, in the order given.
# AB_BENCH, when set, is a command run instead in each pass (with AB_TAG
# set to <name>-<pass>), e.g. the compressed-table benchmark:
#   AB_BENCH='SCHEMA=ssb5 MODES=gpu OUT=$OUT/$AB_TAG bash scripts/bench_gpu_compressed.sh'
set -uo pipefail
cd "$(dirname "$0")/.."
AB_DIR=${AB_DIR:-build/ab}
SF=${SF:-20}
RUNS=${RUNS:-5}
OUTDIR=${OUT:-build/gpu-bench}
WORK=${PGWARP_TEST_DIR:-/tmp/pgwarp-bench}
mkdir -p "$OUTDIR" "$WORK"
schema="ssb$(echo "$SF" | tr -d .)"
q() { psql -XAtq -v ON_ERROR_STOP=1 "$@"; }
status() { q -c "SELECT pg_read_file('pg_warp_gpud.status', 0, 256, true)"; }
gpud_pid() { status | cut -f4; }

# data, load, and answers of warp-gpu against warp-cpu with the current daemon
SF=$SF MODES=warp-cpu,warp-gpu RUNS=1 bash scripts/bench_gpu.sh || exit 1

# the installed daemon, or the file it links to (the bindir may not be ours
# to write: there, install a symlink to a file in a directory this user may
# replace files in -- not /tmp itself, whose sticky bit forbids replacing
# another user's file, which made every pass run the same binary once)
target=$(readlink -f "$(pg_config --bindir)/pg_warp_gpud")
[ -w "$(dirname "$target")" ] || { echo "cannot replace $target"; exit 1; }
cp "$target" "$WORK/gpud-installed"
names=$(ls "$AB_DIR")
order="$names $(echo "$names" | tac)"
[ "${AB_ONCE:-0}" = 1 ] && order=$names	# one pass per build (short device calls)
: >"$OUTDIR/ab-summary.txt"
pass=0
for n in $order; do
	pass=$((pass + 1))
	old=$(gpud_pid)
	cp "$AB_DIR/$n" "$target.new" && mv -f "$target.new" "$target"
	kill -9 "$old" 2>/dev/null
	for i in $(seq 1 300); do
		st=$(status)
		pid=$(echo "$st" | cut -f4)
		case "$st" in gpu*) [ -n "$pid" ] && [ "$pid" != "$old" ] && break ;; esac
		sleep 0.1
	done
	echo "== $n (pass $pass): $st" | tee -a "$OUTDIR/ab-summary.txt"
	if [ -n "${AB_BENCH:-}" ]; then
		AB_TAG="$n-$pass" OUT="$OUTDIR" bash -c "$AB_BENCH" >>"$OUTDIR/ab-summary.txt" 2>&1 ||
			echo "FAIL bench under $n" | tee -a "$OUTDIR/ab-summary.txt"
		continue
	fi
	pgwarp bench ssb -d "dbname=postgres options='-csearch_path=$schema'" --modes warp-gpu \
		--runs "$RUNS" --out "$WORK/ab-$n-$pass" >"$OUTDIR/ab-$n-$pass.log" 2>&1 ||
		echo "FAIL bench under $n" | tee -a "$OUTDIR/ab-summary.txt"
	cp "$WORK/ab-$n-$pass/results.md" "$OUTDIR/ab-$n-$pass.md" 2>/dev/null
	grep -E '^\| (q|\*\*)' "$OUTDIR/ab-$n-$pass.md" >>"$OUTDIR/ab-summary.txt"
	for f in bench/ssb/queries/q*.sql; do
		sql=$(sed -E 's/\b(lineorder|customer|supplier|part|date)\b/\1_arrow/g' "$f")
		PGOPTIONS="-c search_path=$schema -c pg_warp.mode=gpu" q -c "EXPLAIN (ANALYZE) $sql" |
			grep -E "Ran On|Fallback|Kernel Time|Daemon Time" | sed 's/^ *//' | paste -sd'|' |
			sed "s/^/$(basename "$f" .sql) | /" >>"$OUTDIR/ab-summary.txt"
	done
done
cp "$WORK/gpud-installed" "$target.new" && mv -f "$target.new" "$target"
kill -9 "$(gpud_pid)" 2>/dev/null
cat "$OUTDIR/ab-summary.txt"
