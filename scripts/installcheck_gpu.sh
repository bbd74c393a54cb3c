#!/bin/bash
# `make installcheck-gpu`: pg_warp's checks on a machine with an NVIDIA GPU,
# against a running cluster (PGHOST/PGPORT/PGUSER set) whose
# shared_preload_libraries has pg_warp, so
# that pg_warp_gpud drives the GPU.  Needs only psql, pg_regress's files in
# the repository and the installed pgwarp tool (no Python packages).
#
#   0. the server can run vanilla PostgreSQL's reference plans (JIT loads,
#      or jit = off)
#   1. the daemon serves with a GPU (its status file says so)
#   2. the regression suite (the same expected output as CI: plans are
#      printed with pg_warp.explain_stable)
#   3. SSB at SF (default 1): the 13 queries under heap (vanilla PostgreSQL
#      over tables COPYed from the generator's .tbl text), the CPU driver and
#      the GPU (pg_warp.mode = gpu); `pgwarp bench` compares every answer
#      and fails on a difference; EXPLAIN ANALYZE must show each query ran
#      on the GPU with no fallback
#   4. faults: the daemon killed mid-query (answer still right, daemon
#      restarted), device out of memory (CPU fallback), a query over its
#      GPU memory quota (CPU fallback), a cancelled query (prompt, daemon
#      survives)
#   5. timestamptz functions and casts in six time zones on the GPU against
#      vanilla PostgreSQL, and their timing (pg_warp off, CPU, GPU)
#   6. numeric(p <= 18) columns on the GPU against vanilla PostgreSQL, and
#      their timing
#   7. interval arithmetic on the GPU; numeric CASE stays on the CPU driver
#   8. 6M groups on the GPU (the group table grows on the device), and
#      DISTINCT-beside-plain and ROLLUP plans (WarpMerge) with the engine
#      part on the GPU; the lanes' groups merged (pg_warp.merge_groups) and
#      not
#   9. scheduling across GPUs: the cluster restarted with
#      pg_warp.gpud_split_gpus = 2, so the daemon drives each GPU as two
#      (own column cache, lanes and memory share); the 13 SSB queries and the
#      plans of 8. against heap, each GPU's cache serving the second run;
#      then restarted as it was.  Needs pg_ctl and the data directory (runs
#      as the server's user); SPLIT_GPUS=0 skips it.
#  10. compressed fact tables: lineorder as ZSTD and LZ4, the 13 queries
#      against heap (twice: the second run's columns come decompressed from
#      the GPU column cache, q1.1 then copies nothing), 8 clients at once,
#      and a 64 MB column cache (restart, as 9.)
# Output: a summary line per check; results under $OUT (or build/gpu-check).
set -uo pipefail
cd "$(dirname "$0")/.."
SF=${SF:-1}
OUTDIR=${OUT:-build/gpu-check}
mkdir -p "$OUTDIR"
WORK=${PGWARP_TEST_DIR:-$(mktemp -d /tmp/pgwarp-gpu.XXXXXX)}
mkdir -p "$WORK"; chmod 777 "$WORK"
export PGWARP_TEST_DIR=$WORK
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
q() { psql -XAtq -v ON_ERROR_STOP=1 "$@"; }
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }

# 0. the reference: vanilla PostgreSQL's plans over heap tables must run
# here.  A server whose JIT provider cannot load (a PostgreSQL copied
# without its LLVM library) fails every big heap query, and each would
# count as a wrong answer: stop with one clear line instead.
if [ "$(q -c "SHOW jit")" = on ] &&
	! q -c "SET jit_above_cost = 0; SELECT sum(i) FROM generate_series(1, 10) i" >/dev/null 2>&1; then
	bad "the server cannot JIT-compile (its llvmjit library does not load): start it with -c jit=off"
	echo "$fails failed"
	exit 1
fi

# 1. the daemon
datadir=$(q -c "SHOW data_directory")
# (a daemon just killed -- by an A/B run before this one -- may have left
# its file for the moment before the supervisor notices: wait for a live pid)
for i in $(seq 1 100); do
	st=$(q -c "SELECT pg_read_file('pg_warp_gpud.status', 0, 256, true)")
	[ -n "$st" ] && [ -d "/proc/$(echo "$st" | cut -f4)" ] && break
	sleep 0.1
done
echo "pg_warp_gpud: $st"
case "$st" in
	gpu*) ok "pg_warp_gpud drives a GPU" ;;
	*) bad "pg_warp_gpud is not serving a GPU (status: '$st')"; echo "$fails failed"; exit 1 ;;
esac
gpud_pid() { q -c "SELECT split_part(pg_read_file('pg_warp_gpud.status', 0, 256, true), E'\t', 4)"; }

# 2. regression suite
PG_REGRESS="$(dirname "$(pg_config --pgxs)")/../test/regress/pg_regress"
if [ -x "$PG_REGRESS" ]; then
	if "$PG_REGRESS" --bindir="$(dirname "$(command -v psql)")" --host="$PGHOST" --port="$PGPORT" \
		--user="$PGUSER" --inputdir=test/regress \
		--outputdir="$OUTDIR/regress" --dbname=pg_warp_regress \
		$(ls test/regress/sql/*.sql | xargs -n1 basename | sed 's/\.sql$//') >"$OUTDIR/regress.log" 2>&1; then
		ok "pg_regress"
	else
		bad "pg_regress (see regress/regression.diffs)"
		tail -5 "$OUTDIR/regress.log"
	fi
else
	echo "skip pg_regress: not installed with this PostgreSQL"
fi

# 3. SSB
q -c "CREATE EXTENSION IF NOT EXISTS pg_warp"
ssb="$WORK/ssb-sf$SF"
t0=$(date +%s.%N)
pgwarp ssb gen --sf "$SF" --format arrow --out "$ssb" --quiet &&
	pgwarp ssb gen --sf "$SF" --format tbl --out "$ssb" --quiet &&
	pgwarp ssb load -d "dbname=postgres" --from "$ssb" --schema ssb --replace --quiet ||
	{ bad "SSB data"; echo "$fails failed"; exit 1; }
echo "SSB SF=$SF generated and loaded in $(since "$t0") s"
q -c "VACUUM ANALYZE" >/dev/null
DSN="dbname=postgres options=-csearch_path=ssb"
if pgwarp bench ssb -d "$DSN" --modes heap,warp-cpu,warp-gpu --runs "${RUNS:-3}" \
	--out "$OUTDIR/ssb-sf$SF" >"$OUTDIR/ssb-sf$SF.log" 2>&1; then
	ok "SSB SF=$SF: 13 answers equal under heap, warp-cpu and warp-gpu"
else
	bad "SSB SF=$SF bench (answers differ or a mode failed; see ssb-sf$SF.log)"
	tail -20 "$OUTDIR/ssb-sf$SF.log"
fi
cat "$OUTDIR/ssb-sf$SF/results.md" 2>/dev/null | head -40
for f in bench/ssb/queries/q*.sql; do
	sql=$(sed -E 's/\b(lineorder|customer|supplier|part|date)\b/\1_arrow/g' "$f")
	plan=$(PGOPTIONS="-c search_path=ssb -c pg_warp.mode=gpu" q -c "EXPLAIN (ANALYZE) $sql")
	echo "== $(basename "$f")" >>"$OUTDIR/ssb-explain-gpu.txt"
	echo "$plan" >>"$OUTDIR/ssb-explain-gpu.txt"
	if echo "$plan" | grep -q "Ran On: GPU" && ! echo "$plan" | grep -q "Fallback"; then
		:
	else
		bad "$(basename "$f"): did not run on the GPU"
		echo "$plan" | grep -E "Engine|Ran On|Fallback"
	fi
done
grep -E "^== |Ran On|Bytes To Device|Bytes From GPU Cache|Copy Rate|Copy Time|Kernel Time|Daemon Time|Scan Time|Execution Time" "$OUTDIR/ssb-explain-gpu.txt" |
	paste - - - - - - - - - - | sed 's/  */ /g' > "$OUTDIR/ssb-gpu-transfer.txt"
cat "$OUTDIR/ssb-gpu-transfer.txt"

# 4. faults (q4.1: three joins and a group by)
sql=$(sed -E 's/\b(lineorder|customer|supplier|part|date)\b/\1_arrow/g' bench/ssb/queries/q4.1.sql)
want=$(PGOPTIONS="-c search_path=ssb -c pg_warp.enabled=off" q -c "$sql" | md5sum)
pid=$(gpud_pid)
got=$(PGOPTIONS="-c search_path=ssb -c pg_warp.mode=gpu -c pg_warp.gpud_fault=crash" q -c "$sql" | md5sum)
[ "$got" = "$want" ] && ok "daemon killed mid-query: right answer" || bad "daemon killed mid-query: wrong answer"
for i in $(seq 1 100); do
	npid=$(gpud_pid)
	[ -n "$npid" ] && [ "$npid" != "$pid" ] && kill -0 "$npid" 2>/dev/null && break
	sleep 0.1
done
[ "$npid" != "$pid" ] && ok "daemon restarted (pid $pid -> $npid)" || bad "daemon not restarted"
sleep 1
plan=$(PGOPTIONS="-c search_path=ssb -c pg_warp.mode=gpu" q -c "EXPLAIN (ANALYZE) $sql")
echo "$plan" | grep -q "Ran On: GPU" && ok "GPU used again after the restart" ||
	{ bad "GPU not used after the restart"; echo "$plan" | grep -E "Engine|Ran On|Fallback"; }
got=$(PGOPTIONS="-c search_path=ssb -c pg_warp.mode=gpu -c pg_warp.gpud_fault=device_oom" q -c "$sql" | md5sum)
plan=$(PGOPTIONS="-c search_path=ssb -c pg_warp.mode=gpu -c pg_warp.gpud_fault=device_oom" q -c "EXPLAIN (ANALYZE) $sql")
[ "$got" = "$want" ] && echo "$plan" | grep -q "Fallback: device out of memory" &&
	ok "device out of memory: ran on the CPU, right answer" || bad "device out of memory fallback"
got=$(PGOPTIONS="-c search_path=ssb -c pg_warp.mode=gpu -c pg_warp.gpu_memory_per_query=1" q -c "$sql" | md5sum)
plan=$(PGOPTIONS="-c search_path=ssb -c pg_warp.mode=gpu -c pg_warp.gpu_memory_per_query=1" q -c "EXPLAIN (ANALYZE) $sql")
[ "$got" = "$want" ] && echo "$plan" | grep -q "Fallback: needs about .* pg_warp.gpu_memory_per_query" &&
	ok "over the per-query GPU memory quota: ran on the CPU, right answer" ||
	{ bad "per-query GPU memory quota"; echo "$plan" | grep -E "Ran On|Fallback"; }
pid=$(gpud_pid)
t0=$(date +%s.%N)
PGOPTIONS="-c search_path=ssb -c pg_warp.mode=gpu -c pg_warp.gpud_fault=slow -c statement_timeout=100" \
	q -c "$sql" >/dev/null 2>"$OUTDIR/cancel.err"
el=$(since "$t0")
grep -q "canceling statement" "$OUTDIR/cancel.err" && awk -v e="$el" 'BEGIN { exit !(e < 1.5) }' &&
	[ "$(gpud_pid)" = "$pid" ] && ok "cancel: stopped after $el s, daemon alive" ||
	bad "cancel (took $el s: $(cat "$OUTDIR/cancel.err"))"

# 5. timestamptz in the session's TimeZone on the GPU (date_trunc, date_part,
#    the casts): the same answers as vanilla PostgreSQL in zones with
#    daylight saving, odd offsets and skipped days, run on the GPU
q -c "DROP TABLE IF EXISTS tz_src; CREATE TABLE tz_src AS
      SELECT a, a::timestamp AS ts, a::date AS d, (extract(epoch FROM a)::int8 % 1000) AS v
      FROM generate_series(timestamptz '1990-01-01 00:00:00.000001+00',
                           timestamptz '2025-12-31+00', interval '97 seconds 3 microseconds') a" &&
	pgwarp dump -d "dbname=postgres" --quiet -c 'SELECT * FROM tz_src' -o "$WORK/tz.arrow" &&
	q -c "DROP FOREIGN TABLE IF EXISTS tz_t; CREATE FOREIGN TABLE tz_t (a timestamptz, ts timestamp, d date, v int8)
	      SERVER arrow_fdw OPTIONS (file '$WORK/tz.arrow')" ||
	bad "timestamptz data"
tzq=("SELECT date_trunc('day', a) k, count(*), min(a), max(a), sum(v) FROM tz_t GROUP BY 1 ORDER BY 1"
	"SELECT date_trunc('month', a) k, date_trunc('week', a), count(*), min(a::timestamp), max(d::timestamptz) FROM tz_t GROUP BY 1, 2 ORDER BY 1, 2"
	"SELECT a::date k, count(*), min(ts::timestamptz), max(date_trunc('hour', a)) FROM tz_t GROUP BY 1 ORDER BY 1"
	"SELECT date_part('hour', a) h, date_part('dow', a) w, count(*), sum(v) FROM tz_t GROUP BY 1, 2 ORDER BY 1, 2"
	"SELECT count(*), min(a), max(date_trunc('year', a)) FROM tz_t WHERE date_trunc('day', a) <> d::timestamptz"
	"SELECT extract(year FROM a) y, extract(hour FROM a) h, count(*), max(ts) FROM tz_t WHERE a >= d AND ts <= a GROUP BY 1, 2 ORDER BY 1, 2")
# same_on_gpu WHAT ZONE SQL: the GPU's answer is vanilla PostgreSQL's and
# the plan ran on the GPU without falling back
same_on_gpu() {
	local want got plan
	want=$(PGOPTIONS="-c TimeZone=$2 -c pg_warp.enabled=off" q -c "$3" | md5sum)
	got=$(PGOPTIONS="-c TimeZone=$2 -c pg_warp.mode=gpu" q -c "$3" | md5sum)
	plan=$(PGOPTIONS="-c TimeZone=$2 -c pg_warp.mode=gpu" q -c "EXPLAIN (ANALYZE) $3")
	if [ "$got" != "$want" ]; then
		bad "$1 in $2: answer differs: $3"
	elif ! echo "$plan" | grep -q "Ran On: GPU" || echo "$plan" | grep -q "Fallback"; then
		bad "$1 in $2: not on the GPU: $3"
		echo "$plan" | grep -E "Engine|Ran On|Fallback"
	fi
}
# time_modes LABEL ZONE SQL: three warm runs each with pg_warp off, CPU, GPU
time_modes() {
	local mode i t0
	for mode in "pg_warp.enabled=off" "pg_warp.mode=cpu" "pg_warp.mode=gpu"; do
		for i in 1 2 3 4; do
			t0=$(date +%s.%N)
			PGOPTIONS="-c TimeZone=$2 -c $mode" q -c "$3" >/dev/null
			[ $i -gt 1 ] && echo "$1, $mode: $(since "$t0") s"
		done
	done
}
for zone in UTC America/New_York Australia/Lord_Howe Asia/Kathmandu America/Sao_Paulo Pacific/Apia; do
	for sql in "${tzq[@]}"; do
		same_on_gpu timestamptz "$zone" "$sql"
	done
done
ok "timestamptz on the GPU: ${#tzq[@]} queries x 6 zones checked"
time_modes "timestamptz date_trunc('day') group-by, $(q -c 'SELECT count(*) FROM tz_src') rows" \
	Europe/Berlin "${tzq[0]}" | tee "$OUTDIR/tz-timing.txt"

# 6. numeric(p <= 18, s) columns on the GPU: sum/avg/min/max/count, group
#    keys and comparisons with constants over their unscaled int8 (and date
#    arithmetic)
q -c "DROP TABLE IF EXISTS num_src; CREATE TABLE num_src AS
      SELECT i % 97 AS g, ((i::int8 * 7919) % 2000003 - 1000000)::numeric(12,2) / 100 AS price,
             (i % 1000)::numeric(18,0) * 1000000000000 AS big, (i % 13)::numeric(4,1) / 10 AS k
      FROM generate_series(1, 5000000) i" &&
	pgwarp dump -d "dbname=postgres" --quiet -c 'SELECT g, price::numeric(12,2) AS price, big::numeric(18,0) AS big, k::numeric(4,1) AS k FROM num_src' -o "$WORK/num.arrow" &&
	q -c "DROP FOREIGN TABLE IF EXISTS num_t; CREATE FOREIGN TABLE num_t (g int4, price numeric(12,2), big numeric(18,0), k numeric(4,1))
	      SERVER arrow_fdw OPTIONS (file '$WORK/num.arrow')" ||
	bad "numeric data"
numq=("SELECT g, sum(price), avg(price), min(price), max(price), count(price) FROM num_t GROUP BY g ORDER BY g"
	"SELECT k, sum(big), avg(big), sum(price) FROM num_t WHERE price > 12.5 AND big <> 0 GROUP BY k ORDER BY k"
	"SELECT count(*), sum(price) FROM num_t WHERE price BETWEEN -100.005 AND 5000.5"
	"SELECT d - date '1990-01-01' k, count(*), min(d + 30), max(d - 7) FROM tz_t WHERE d - 1 > date '2000-01-01' GROUP BY 1 ORDER BY 1")
for sql in "${numq[@]}"; do
	same_on_gpu numeric UTC "$sql"
done
ok "numeric columns and date arithmetic on the GPU: ${#numq[@]} queries checked"
# under pg_warp.mode = auto too (the planner's choice, not only the GUC's)
for sql in "${numq[0]}" "${tzq[0]}" "${tzq[5]}"; do
	plan=$(PGOPTIONS="-c TimeZone=Europe/Berlin" q -c "EXPLAIN (ANALYZE) $sql")
	echo "$plan" | grep -q "Ran On: GPU" && ! echo "$plan" | grep -q "Fallback" ||
		{ bad "mode auto did not choose the GPU: $sql"; echo "$plan" | grep -E "Engine|Ran On|Fallback"; }
done
ok "mode auto: numeric and timestamptz queries checked"
time_modes "numeric sum/avg/min/max group-by, 5000000 rows" UTC "${numq[0]}" |
	tee "$OUTDIR/numeric-timing.txt"

# 7. date/timestamp/timestamptz +/- interval on the GPU (months on the local
#    calendar, days through the local date, DST zones), and numeric
#    CASE/COALESCE, which the CPU driver computes: mode auto must not send
#    it to the GPU, and the answer (display scales included) is vanilla's
ivq=("SELECT date_trunc('day', a + interval '1 month') k, count(*), min(a - interval '1 day 02:00'), max(ts + interval '36 hours') FROM tz_t GROUP BY 1 ORDER BY 1"
	"SELECT count(*), min(d + interval '1 mon'), max(a + interval '-13 mons 40 days') FROM tz_t WHERE a + interval '1 day' > ts + interval '24 hours'")
for zone in UTC America/New_York Australia/Lord_Howe Pacific/Apia; do
	for sql in "${ivq[@]}"; do
		same_on_gpu interval "$zone" "$sql"
	done
done
ok "interval arithmetic on the GPU: ${#ivq[@]} queries x 4 zones checked"
sql="SELECT g, sum(CASE WHEN k > 0.5 THEN price ELSE 0 END), avg(COALESCE(price, big)) FROM num_t GROUP BY g ORDER BY g"
want=$(PGOPTIONS="-c pg_warp.enabled=off" q -c "$sql" | md5sum)
got=$(q -c "$sql" | md5sum)
plan=$(q -c "EXPLAIN (ANALYZE) $sql")
[ "$got" = "$want" ] || bad "numeric CASE: answer differs"
echo "$plan" | grep -q "Ran On: CPU" || { bad "numeric CASE: mode auto did not keep it on the CPU driver"; echo "$plan" | grep -E "Engine|Ran On|Fallback"; }
ok "numeric CASE/COALESCE: vanilla's answer, on the CPU driver"

# 8. many groups on the GPU (6M: the hash group table doubles on the device
#    instead of flushing to the host before every batch), and the plans
#    whose aggregation WarpMerge finishes (DISTINCT beside plain aggregates,
#    ROLLUP) with their engine part on the GPU; answers against vanilla
mgq=("SELECT count(*), sum(s), sum(n), min(k1), max(k2) FROM (SELECT lo_orderkey k1, lo_linenumber k2, sum(lo_revenue) s, count(*) n FROM @lineorder GROUP BY 1, 2) x"
	"SELECT d_year, c_region, count(DISTINCT lo_custkey), sum(lo_revenue), count(*) FROM @lineorder, @date, @customer WHERE lo_orderdate = d_datekey AND lo_custkey = c_custkey GROUP BY 1, 2 ORDER BY 1, 2"
	"SELECT d_year, c_nation, sum(lo_revenue - lo_supplycost), count(*) FROM @lineorder, @date, @customer WHERE lo_orderdate = d_datekey AND lo_custkey = c_custkey AND c_region = 'AMERICA' GROUP BY ROLLUP (1, 2) ORDER BY 1, 2")
# mg_check LABEL RANON: the queries above on the GPU, their groups merged
# and not, against vanilla's answers; EXPLAIN must say "Ran On: RANON"
mg_check() {
	local sql h a want got plan unmerged
	for sql in "${mgq[@]}"; do
		h=${sql//@/}
		a=$(echo "$sql" | sed -E 's/@([a-z]+)/\1_arrow/g')
		want=$(PGOPTIONS="-c search_path=ssb -c pg_warp.enabled=off" q -c "$h" | md5sum)
		got=$(PGOPTIONS="-c search_path=ssb -c pg_warp.mode=gpu" q -c "$a" | md5sum)
		plan=$(PGOPTIONS="-c search_path=ssb -c pg_warp.mode=gpu" q -c "EXPLAIN (ANALYZE) $a")
		unmerged=$(PGOPTIONS="-c search_path=ssb -c pg_warp.mode=gpu -c pg_warp.merge_groups=off" q -c "$a" | md5sum)
		[ "$got" = "$want" ] || bad "$1: answer differs: $a"
		[ "$unmerged" = "$want" ] || bad "$1: answer differs with merge_groups off: $a"
		{ echo "$plan" | grep -qF "Ran On: $2" && ! echo "$plan" | grep -q "Fallback"; } ||
			{ bad "$1: not on $2: $a"; echo "$plan" | grep -E "Ran On|Fallback"; }
		echo "$plan" | grep -E "Groups:|Groups Merged|Groups Not Merged|Merge Time|Kernel Time|Daemon Time|Execution Time" | sed 's/^ */  /'
	done
}
mg_check "many groups / WarpMerge" "GPU"
ok "many groups and WarpMerge plans on the GPU: ${#mgq[@]} queries checked"

# 9. several GPUs on a one-GPU machine: each GPU driven as two
# wait_gpud OLDPID: the daemon (a new one when OLDPID is given) serves a GPU
wait_gpud() {
	local i st
	for i in $(seq 1 300); do
		st=$(q -c "SELECT pg_read_file('pg_warp_gpud.status', 0, 256, true)" 2>/dev/null)
		case "$st" in gpu*) [ -z "$1" ] || [ "$(gpud_pid)" != "$1" ] && { echo "$st"; return 0; } ;; esac
		sleep 0.2
	done
	return 1
}
# restart_with SETTING: ALTER SYSTEM, restart the cluster, wait for the GPU
restart_with() {
	local old
	old=$(gpud_pid)
	q -c "ALTER SYSTEM $1" && pg_ctl restart -D "$datadir" -w -m fast >"$OUTDIR/restart.log" 2>&1 &&
		wait_gpud "$old"
}
if [ "${SPLIT_GPUS:-1}" = 0 ]; then
	echo "skip several GPUs: SPLIT_GPUS=0"
elif ! command -v pg_ctl >/dev/null || [ ! -w "$datadir" ]; then
	echo "skip several GPUs: the cluster cannot be restarted from here"
elif st=$(restart_with "SET pg_warp.gpud_split_gpus = 2") && [ "$(echo "$st" | cut -f2)" = 2 ]; then
	ok "pg_warp_gpud drives each GPU as two: $st"
	if pgwarp bench ssb -d "$DSN" --modes heap,warp-gpu --runs 1 \
		--out "$OUTDIR/ssb-split" >"$OUTDIR/ssb-split.log" 2>&1; then
		ok "several GPUs: 13 SSB answers equal under heap and warp-gpu"
	else
		bad "several GPUs: SSB answers differ or a mode failed (see ssb-split.log)"
		tail -20 "$OUTDIR/ssb-split.log"
	fi
	both=0
	for f in bench/ssb/queries/q*.sql; do
		sql=$(sed -E 's/\b(lineorder|customer|supplier|part|date)\b/\1_arrow/g' "$f")
		plan=$(PGOPTIONS="-c search_path=ssb -c pg_warp.mode=gpu" q -c "EXPLAIN (ANALYZE) $sql")
		echo "== $(basename "$f")" >>"$OUTDIR/ssb-explain-split.txt"
		echo "$plan" >>"$OUTDIR/ssb-explain-split.txt"
		if ! echo "$plan" | grep -q "Ran On: GPU" || echo "$plan" | grep -q "Fallback"; then
			bad "several GPUs: $(basename "$f") did not run on the GPU"
			echo "$plan" | grep -E "Ran On|Fallback"
		fi
		echo "$plan" | grep -q "Ran On: GPU (2 x " && both=$((both + 1))
		# the second run reads from both GPUs' column caches
		if [ "$(basename "$f")" = q2.1.sql ]; then
			cached=$(echo "$plan" | sed -n 's/.*Bytes From GPU Cache: \([0-9]*\).*/\1/p')
			[ "${cached:-0}" -gt 0 ] && ok "several GPUs: q2.1 read $cached bytes from the GPUs' column caches" ||
				bad "several GPUs: q2.1 read nothing from the column caches"
		fi
	done
	[ "$both" -ge 10 ] && ok "several GPUs: $both of 13 SSB queries ran on both GPUs" ||
		bad "several GPUs: only $both of 13 SSB queries ran on both GPUs"
	mg_check "several GPUs" "GPU (2 x "
	ok "several GPUs: many groups and WarpMerge plans checked"
	grep -E "^== |Ran On|Bytes To Device|Bytes From GPU Cache|Kernel Time|Daemon Time|Execution Time" \
		"$OUTDIR/ssb-explain-split.txt" | paste - - - - - - - | sed 's/  */ /g' | tee "$OUTDIR/ssb-split-gpus.txt"
	st=$(restart_with "RESET pg_warp.gpud_split_gpus") && ok "restarted as before: $st" ||
		bad "the cluster did not come back after the several-GPU check"
else
	bad "several GPUs: the daemon did not come back driving two GPUs (status: '$st')"
	restart_with "RESET pg_warp.gpud_split_gpus" >/dev/null
fi

# 10. compressed fact tables on the GPU: lineorder rewritten as ZSTD and LZ4;
#     each SSB query against heap, twice, and a third time in EXPLAIN
#     ANALYZE, which must copy nothing to the device for q1.1 (its columns
#     decompressed by the first run are kept in the GPU's column cache and
#     nothing is decompressed again); then 8 clients at once over both
#     tables; then a column cache too small for the columns (entries
#     evicted while other batches hold theirs), the same answers
. scripts/compressed_tables.sh
# comp_check LABEL RUNS: the 13 queries over both tables RUNS times each
# against heap's answers in $WORK/heap-q*.md5; EXPLAIN ANALYZE to
# $OUTDIR/compressed-explain.txt; comp_n = query/codec pairs run
comp_check() {
	local f t sql got plan i
	comp_n=0
	for f in bench/ssb/queries/q*.sql; do
		for t in zstd lz4; do
			sql=$(sed -E "s/\b(customer|supplier|part|date)\b/\1_arrow/g; s/\blineorder\b/lineorder_$t/g" "$f")
			for i in $(seq 1 "$2"); do
				got=$(PGOPTIONS="-c search_path=ssb -c pg_warp.mode=gpu" q -c "$sql" | md5sum)
				[ "$got" = "$(cat "$WORK/heap-$(basename "$f" .sql).md5")" ] ||
					bad "$1: $t $(basename "$f") run $i: answer differs from heap's"
			done
			plan=$(PGOPTIONS="-c search_path=ssb -c pg_warp.mode=gpu" q -c "EXPLAIN (ANALYZE) $sql")
			{ echo "== $1 $t $(basename "$f")"; echo "$plan"; } >>"$OUTDIR/compressed-explain.txt"
			if ! echo "$plan" | grep -q "Ran On: GPU" || echo "$plan" | grep -q "Fallback"; then
				bad "$1: $t $(basename "$f") did not run on the GPU"
				echo "$plan" | grep -E "Ran On|Fallback"
			fi
			[ "$(basename "$f")" = q1.1.sql ] && echo "$1 $t q1.1: $(echo "$plan" | grep -E "Bytes To Device|Bytes From GPU Cache|Compressed Columns|Daemon Time" | sed 's/^ *//' | paste -sd' ')"
			comp_n=$((comp_n + 1))
		done
	done
}
if compressed_tables ssb "$WORK" >"$OUTDIR/compressed-files.txt" 2>&1; then
	cat "$OUTDIR/compressed-files.txt"
	for f in bench/ssb/queries/q*.sql; do
		PGOPTIONS="-c search_path=ssb -c pg_warp.enabled=off" q -c "$(cat "$f")" >"$WORK/heap.out" ||
			bad "compressed lineorder: heap's $(basename "$f") failed"
		[ -s "$WORK/heap.out" ] || bad "compressed lineorder: heap's $(basename "$f") returned nothing"
		md5sum <"$WORK/heap.out" >"$WORK/heap-$(basename "$f" .sql).md5"
	done
	: >"$OUTDIR/compressed-explain.txt"
	comp_check "compressed" 2
	ok "compressed lineorder: $comp_n query/codec pairs twice and in EXPLAIN, answers equal to heap's"
	for t in zstd lz4; do
		plan=$(sed -n "/^== compressed $t q1.1.sql/,/^== /p" "$OUTDIR/compressed-explain.txt")
		tod=$(echo "$plan" | sed -n 's/.*Bytes To Device: \([0-9]*\).*/\1/p')
		fromc=$(echo "$plan" | sed -n 's/.*Bytes From GPU Cache: \([0-9]*\).*/\1/p')
		ncols=$(echo "$plan" | sed -n 's/.*Compressed Columns From GPU Cache: \([0-9]*\).*/\1/p')
		[ "${tod:-1}" = 0 ] && [ "${fromc:-0}" -gt 0 ] && [ "${ncols:-0}" -gt 0 ] &&
			ok "compressed lineorder ($t): q1.1's third run read $fromc bytes of $ncols decompressed columns from the GPU cache, copied nothing" ||
			bad "compressed lineorder ($t): q1.1's third run copied ${tod:-?} bytes, read ${fromc:-0} from the cache (${ncols:-0} columns not decompressed)"
	done
	# 8 clients at once, every query over both tables, in different orders
	for c in $(seq 1 8); do
		(
			for f in $(ls bench/ssb/queries/q*.sql | awk -v c="$c" 'BEGIN { srand(c) } { print rand() "\t" $0 }' | sort | cut -f2); do
				for t in zstd lz4; do
					sql=$(sed -E "s/\b(customer|supplier|part|date)\b/\1_arrow/g; s/\blineorder\b/lineorder_$t/g" "$f")
					got=$(PGOPTIONS="-c search_path=ssb -c pg_warp.mode=gpu" q -c "$sql" 2>&1 | md5sum)
					[ "$got" = "$(cat "$WORK/heap-$(basename "$f" .sql).md5")" ] || echo "client $c: $t $(basename "$f")"
				done
			done
		) >"$OUTDIR/compressed-client-$c.txt" &
	done
	wait
	wrong=$(cat "$OUTDIR"/compressed-client-*.txt | wc -l)
	[ "$wrong" -eq 0 ] && ok "compressed lineorder: 8 clients at once, 26 queries each, answers equal to heap's" ||
		{ bad "compressed lineorder: $wrong answers of 8 concurrent clients differ"; cat "$OUTDIR"/compressed-client-*.txt | head; }
	if ! command -v pg_ctl >/dev/null || [ ! -w "$datadir" ]; then
		echo "skip the small column cache: the cluster cannot be restarted from here"
	elif st=$(restart_with "SET pg_warp.gpu_cache_memory = 64"); then
		comp_check "small cache" 2
		ok "compressed lineorder with a 64 MB column cache: $comp_n query/codec pairs twice, answers equal to heap's"
		st=$(restart_with "RESET pg_warp.gpu_cache_memory") && ok "restarted as before: $st" ||
			bad "the cluster did not come back after the small-cache check"
	else
		bad "small column cache: the daemon did not come back"
		restart_with "RESET pg_warp.gpu_cache_memory" >/dev/null
	fi
else
	bad "compressed lineorder: the tables could not be made"
	cat "$OUTDIR/compressed-files.txt"
fi

echo "$fails failed"
[ "$fails" -eq 0 ]
