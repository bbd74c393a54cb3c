#!/bin/bash
# test/fuzz/run.sh TARGET SECONDS [libFuzzer options...]
#
# A long libFuzzer run of one target (fuzz_reader, fuzz_stream, fuzz_parquet)
# at the lowest CPU priority, one process: new inputs go to
# test/fuzz/work/TARGET/ (seeded from test/fuzz/corpus/TARGET/), inputs that
# crash, leak, time out or exceed memory to test/fuzz/crashes/TARGET/.  A
# finding ends a libFuzzer run; this restarts it (from the grown work
# corpus) until SECONDS have passed, so one run reports every finding.  At
# the end the work corpus is merged into the repository's corpus
# (-merge=1 -use_counters=0: only inputs that reach new edges are kept) and
# totals are printed:
# executions, findings, corpus files and size.
#
#   make fuzz
#   test/fuzz/run.sh fuzz_reader 3600
set -uo pipefail
cd "$(dirname "$0")/../.."
target=$1 seconds=$2
shift 2
bin=build/fuzz/$target
[ -x "$bin" ] || { echo "$bin missing: make $bin" >&2; exit 2; }
corpus=test/fuzz/corpus/$target
work=test/fuzz/work/$target
crashes=test/fuzz/crashes/$target
logs=test/fuzz/work/$target.logs
mkdir -p "$corpus" "$work" "$crashes" "$logs"
end=$(($(date +%s) + seconds))
execs=0 runs=0
while [ "$(date +%s)" -lt "$end" ]; do
	left=$((end - $(date +%s)))
	runs=$((runs + 1))
	log=$logs/run$runs.log
	nice -n 19 "$bin" -max_total_time="$left" -rss_limit_mb=2048 -timeout=20 \
		-use_value_profile=1 -print_final_stats=1 -artifact_prefix="$crashes/" \
		"$@" "$work" "$corpus" >"$log" 2>&1
	rc=$?
	n=$(grep -oE '^stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || true)
	[ -z "$n" ] && n=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
	execs=$((execs + ${n:-0}))
	if [ $rc -ne 0 ]; then
		echo "$target: run $runs ended with status $rc after ${n:-0} executions:"
		grep -E 'ERROR: |runtime error|SUMMARY|error without|leak:|Test unit written' "$log" | head -8
	fi
done
findings=$(ls "$crashes" | wc -l)
before=$(ls "$corpus" | wc -l)
nice -n 19 "$bin" -merge=1 -use_counters=0 -rss_limit_mb=2048 -timeout=20 "$corpus" "$work" \
	>"$logs/merge.log" 2>&1 || { echo "$target: merge failed (see $logs/merge.log)"; exit 1; }
echo "$target: $runs runs, $execs executions, $findings findings in $crashes," \
	"corpus $before -> $(ls "$corpus" | wc -l) files, $(du -sh "$corpus" | cut -f1)"
