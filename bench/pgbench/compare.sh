#!/bin/bash
# OLTP cost of pg_warp: pgbench TPS and latency with pg_warp in
# shared_preload_libraries and without it, in interleaved runs.
#
#   bench/pgbench/compare.sh [-s SCALE] [-T SECONDS] [-c CLIENTS] [-j THREADS]
#                            [-r ROUNDS] [-w WARMUP_S] [-o FILE] [-W] [-M PROTOCOL]
#
# -M: pgbench's query protocol (default prepared; simple plans every query,
# so pg_warp's planner hooks run each time).
# -W: pgbench's built-in TPC-B-like transactions (three UPDATEs, a SELECT,
# an INSERT per transaction: what heap_changes.c's hooks see) instead of
# the point reads below.
# Defaults: -s 10 -T 20 -c 2 -j 2 -r 5 -w 3.  Needs pg_warp installed
# (make install).  One throwaway cluster (scripts/cluster.sh) holds the
# pgbench data (pgbench -i -s SCALE, CREATE EXTENSION pg_warp); between runs
# its server is restarted with or without -c shared_preload_libraries=pg_warp,
# so that both configurations read the same files.  Each round runs both
# configurations, in ABBA order (round 1 plain first, round 2 preloaded
# first, ...) so that drift over time hits both alike; every run follows a
# restart and a short unrecorded warm-up.  The workload is bench/pgbench/*.sql:
#
#   pgbench -n -M prepared -c C -j J -T S -D naccounts=<100000*SCALE> -D hot_pct=5
#           -f hot.sql@80 -f uniform.sql@10 -f tellers.sql@5 -f branches.sql@5
#
# The report (mean TPS, stddev, min, max, mean latency per configuration, the
# relative difference, every run) goes to bench/results/<date>-pgbench-compare-
# <host>.md unless -o says otherwise.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
export PATH="$(pg_config --bindir):$PATH"

SCALE=10 SECS=20 CLIENTS=2 THREADS=2 ROUNDS=5 WARMUP=3 OUT= WRITES= PROTO=prepared
while getopts "s:T:c:j:r:w:o:WM:h" opt; do
	case $opt in
		s) SCALE=$OPTARG ;;
		T) SECS=$OPTARG ;;
		c) CLIENTS=$OPTARG ;;
		j) THREADS=$OPTARG ;;
		r) ROUNDS=$OPTARG ;;
		w) WARMUP=$OPTARG ;;
		o) OUT=$OPTARG ;;
		W) WRITES=1 ;;
		M) PROTO=$OPTARG ;;
		h) sed -n '2,29p' "$0"; exit 0 ;;
		*) echo "usage: $0 [-s SCALE] [-T SECONDS] [-c CLIENTS] [-j THREADS] [-r ROUNDS] [-w WARMUP_S] [-o FILE] [-W] [-M PROTOCOL]" >&2
		   exit 2 ;;
	esac
done
[ "$ROUNDS" -ge 1 ] || { echo "compare.sh: -r must be at least 1" >&2; exit 2; }
HOST=$(hostname -s 2>/dev/null || hostname)
KIND=${WRITES:+-writes}
[ "$PROTO" = prepared ] || KIND="$KIND-$PROTO"
[ -n "$OUT" ] || OUT="bench/results/$(date +%F)-pgbench-compare$KIND-$HOST.md"
NACCOUNTS=$((100000 * SCALE))
W=bench/pgbench
if [ -n "$WRITES" ]; then
	PGBENCH_ARGS=(-n -M "$PROTO" -c "$CLIENTS" -j "$THREADS" -b tpcb-like)
	TITLE="pgbench TPC-B-like writes"
else
	PGBENCH_ARGS=(-n -M "$PROTO" -c "$CLIENTS" -j "$THREADS" -D "naccounts=$NACCOUNTS" -D hot_pct=5
		-f "$W/hot.sql@80" -f "$W/uniform.sql@10" -f "$W/tellers.sql@5" -f "$W/branches.sql@5")
	TITLE="pgbench point reads"
fi

. scripts/cluster.sh
trap cluster_stop EXIT
cluster_start
BASE_OPTS="-p $PGPORT -k $PGHOST -c listen_addresses='' -c fsync=off"

restart_with() {	# restart_with "" | "-c shared_preload_libraries=pg_warp"
	cluster_as_server "$PG_BINDIR/pg_ctl" -D "$CLUSTER_DIR/data" -o "$BASE_OPTS $1" \
		-l "$CLUSTER_DIR/postgres.log" -w -t 60 restart >/dev/null ||
		{ tail -20 "$CLUSTER_DIR/postgres.log"; exit 1; }
}

echo "== pgbench -i -s $SCALE" >&2
psql -qX -v ON_ERROR_STOP=1 -c "CREATE EXTENSION pg_warp" >/dev/null
pgbench -i -q -s "$SCALE" >/dev/null 2>"$CLUSTER_DIR/init.log" || { cat "$CLUSTER_DIR/init.log"; exit 1; }
PGVERSION=$(psql -XAt -c "SELECT version()")

RUNS=$(mktemp)
trap 'rm -f "$RUNS"; cluster_stop' EXIT
for ((r = 1; r <= ROUNDS; r++)); do
	if ((r % 2)); then order="plain preloaded"; else order="preloaded plain"; fi
	for cfg in $order; do
		if [ "$cfg" = preloaded ]; then restart_with "-c shared_preload_libraries=pg_warp"
		else restart_with ""; fi
		spl=$(psql -XAt -c "SHOW shared_preload_libraries")
		if [ "$cfg" = preloaded ] && [ "$spl" != pg_warp ]; then
			echo "compare.sh: pg_warp is not preloaded (shared_preload_libraries='$spl')" >&2; exit 1
		fi
		if [ "$cfg" = plain ] && [ -n "$spl" ]; then
			echo "compare.sh: shared_preload_libraries='$spl' in the plain run" >&2; exit 1
		fi
		[ "$WARMUP" -gt 0 ] && pgbench "${PGBENCH_ARGS[@]}" -T "$WARMUP" >/dev/null 2>&1
		out=$(pgbench "${PGBENCH_ARGS[@]}" -T "$SECS" 2>&1) || { echo "$out" >&2; exit 1; }
		tps=$(echo "$out" | sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p')
		lat=$(echo "$out" | sed -n 's/^latency average = \([0-9.]*\) ms/\1/p')
		[ -n "$tps" ] && [ -n "$lat" ] || { echo "$out" >&2; echo "compare.sh: could not parse pgbench output" >&2; exit 1; }
		echo "$r $cfg $tps $lat" >>"$RUNS"
		echo "round $r $cfg: $tps TPS, $lat ms" >&2
	done
done

mkdir -p "$(dirname "$OUT")"
python3 - "$RUNS" "$OUT" <<PY
import statistics as st, sys
runs = [l.split() for l in open(sys.argv[1]) if l.strip()]
cfgs = ("plain", "preloaded")
s = {}
for c in cfgs:
    tps = [float(x[2]) for x in runs if x[1] == c]
    lat = [float(x[3]) for x in runs if x[1] == c]
    s[c] = dict(n=len(tps), mean=st.mean(tps), sd=st.stdev(tps) if len(tps) > 1 else 0.0,
                min=min(tps), max=max(tps), lat=st.mean(lat))
a, b = s["plain"], s["preloaded"]
diff = (b["mean"] - a["mean"]) / a["mean"] * 100
ldiff = (b["lat"] - a["lat"]) / a["lat"] * 100
# standard error of the difference of the means, in % of the plain mean
se = ((a["sd"] ** 2 / a["n"]) + (b["sd"] ** 2 / b["n"])) ** 0.5 / a["mean"] * 100
cv = max(a["sd"] / a["mean"], b["sd"] / b["mean"]) * 100
with open(sys.argv[2], "w") as f:
    w = f.write
    w("# $TITLE: pg_warp preloaded vs not\n\n")
    w("- date: $(date -u '+%Y-%m-%d %H:%M UTC')\n")
    w("- machine: $HOST; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); "
      "$(nproc) CPUs; $(free -m | awk '/^Mem:/ {print $2}') MB\n")
    w("- server: $PGVERSION; throwaway cluster (scripts/cluster.sh: fsync=off, "
      "otherwise defaults); pg_warp built from $(git -C "$ROOT" rev-parse --short HEAD)\n")
    w("- command: \`bench/pgbench/compare.sh -s $SCALE -T $SECS -c $CLIENTS -j $THREADS "
      "-r $ROUNDS -w $WARMUP${WRITES:+ -W} -M $PROTO\`\n")
    w("- workload: \`pgbench ${PGBENCH_ARGS[*]} -T $SECS\` after \`pgbench -i -s $SCALE\`; "
      "$ROUNDS rounds, both configurations per round in ABBA order, each run after a "
      "server restart and a ${WARMUP} s unrecorded warm-up\n\n")
    w("| configuration | runs | mean TPS | stddev | min | max | mean latency (ms) |\n")
    w("|---|---:|---:|---:|---:|---:|---:|\n")
    names = {"plain": "without pg_warp", "preloaded": "shared_preload_libraries = pg_warp"}
    for c in cfgs:
        x = s[c]
        w("| %s | %d | %.1f | %.1f (%.1f %%) | %.1f | %.1f | %.3f |\n" % (
            names[c], x["n"], x["mean"], x["sd"], x["sd"] / x["mean"] * 100,
            x["min"], x["max"], x["lat"]))
    w("\nRelative difference (preloaded vs not): TPS %+.2f %%, latency %+.2f %%; "
      "standard error of the TPS difference %.2f %% (run-to-run spread up to %.1f %%).\n\n"
      % (diff, ldiff, se, cv))
    w("| round | configuration | TPS | latency (ms) |\n|---:|---|---:|---:|\n")
    for x in runs:
        w("| %s | %s | %.1f | %s |\n" % (x[0], names[x[1]], float(x[2]), x[3]))
    w("\nNotes: %s\n" % (
      "a difference smaller than about two standard errors (%.2f %%) is not "
      "distinguishable from noise in this run." % (2 * se)))
print("%s: plain %.1f TPS, preloaded %.1f TPS (%+.2f %%, s.e. %.2f %%)" % (
    sys.argv[2], a["mean"], b["mean"], diff, se))
PY
