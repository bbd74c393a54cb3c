#!/bin/bash
# Concurrent SSB streams against pg_warp_gpud on the GPU machine, after
# scripts/installcheck_gpu.sh loaded SSB into schema `ssb` (heap tables and
# *_arrow tables).  CLIENTS pgbench clients run the 13 queries (each client a
# random mix) under pg_warp.mode = gpu for DURATION seconds; meanwhile a checker
# session keeps running every query under pg_warp.mode = gpu and compares its
# rows with vanilla PostgreSQL's answer over the heap tables.  Reports
# throughput, latency percentiles, errors and mismatches.
#
#   CLIENTS=16 DURATION=60 bash scripts/stress_gpu.sh
set -uo pipefail
cd "$(dirname "$0")/.."
CLIENTS=${CLIENTS:-16}
DURATION=${DURATION:-60}
OUTDIR=${OUT:-build/gpu-stress}
W=$(mktemp -d /tmp/pgwarp-stress.XXXXXX)
mkdir -p "$OUTDIR"

# per query: the arrow version for pgbench, and the oracle's rows
args=()
for f in bench/ssb/queries/q*.sql; do
	n=$(basename "$f" .sql)
	sed -E 's/\b(lineorder|customer|supplier|part|date)\b/\1_arrow/g' "$f" | grep -v '^--' |
		tr '\n' ' ' | sed 's/;[[:space:]]*$//' >"$W/$n.sql"
	echo ";" >>"$W/$n.sql"
	args+=(-f "$W/$n.sql")
	PGOPTIONS="-c search_path=ssb -c pg_warp.enabled=off" psql -XAtq -f "$f" | md5sum >"$W/$n.want"
done

# the checker: every query in turn under mode gpu until pgbench ends
(
	checks=0 bad=0
	end=$(($(date +%s) + DURATION))
	while [ "$(date +%s)" -lt "$end" ]; do
		for f in "$W"/q*.sql; do
			n=$(basename "$f" .sql)
			got=$(PGOPTIONS="-c search_path=ssb -c pg_warp.mode=gpu" psql -XAtq -f "$f" 2>&1 | md5sum)
			checks=$((checks + 1))
			[ "$got" = "$(cat "$W/$n.want")" ] || { bad=$((bad + 1)); echo "mismatch: $n"; }
		done
	done
	echo "checker: $checks answers compared with the heap oracle, $bad mismatches"
) >"$OUTDIR/stress-checker.log" 2>&1 &
checker=$!

cd "$W"
PGOPTIONS="-c search_path=ssb -c pg_warp.mode=gpu" pgbench -n -c "$CLIENTS" -j "$CLIENTS" \
	-T "$DURATION" -l --log-prefix="$W/pgb" "${args[@]}" postgres >"$OUTDIR/stress-pgbench.log" 2>&1
rc=$?
cd - >/dev/null
wait "$checker"
cat "$W"/pgb* 2>/dev/null | awk '{ print $3 / 1000.0 }' | sort -n >"$W/lat"
n=$(wc -l <"$W/lat")
pct() { awk -v p="$1" -v n="$n" 'NR == int((n - 1) * p) + 1 { printf "%.1f", $1 }' "$W/lat"; }
echo "stress: $CLIENTS clients, $DURATION s, pgbench rc $rc"
grep -E "^(number of transactions actually processed|number of failed|tps =|latency average)" \
	"$OUTDIR/stress-pgbench.log"
echo "latency ms: p50 $(pct 0.50)  p95 $(pct 0.95)  p99 $(pct 0.99)  max $(tail -1 "$W/lat")  ($n queries)"
grep -ciE "error|fatal" "$OUTDIR/stress-pgbench.log" | sed 's/^/pgbench error lines: /'
cat "$OUTDIR/stress-checker.log" | tail -3
rm -rf "$W"
