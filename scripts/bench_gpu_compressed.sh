#!/bin/bash
# Compressed fact tables through pg_warp: the 13 SSB queries over lineorder
# stored uncompressed, LZ4_FRAME and ZSTD (`pgwarp rewrite --compress`), on
# the CPU driver and on the GPU, against a running cluster whose ssb schema
# an earlier SSB load made (installcheck_gpu.sh, bench_gpu.sh, or
# `pgwarp ssb load`).  Every answer is compared with the uncompressed
# table's under the same mode; times are the median of RUNS warm runs
# (client-side, through psql), and one EXPLAIN ANALYZE per query gives the
# daemon's phases.
#
#   SCHEMA=ssb RUNS=3 MODES="cpu gpu" bash scripts/bench_gpu_compressed.sh
#
# Output: $OUT/compressed${AB_TAG:+-$AB_TAG}.md (a table per mode),
# compressed-explain*.txt and compressed-failures*.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
SCHEMA=${SCHEMA:-ssb}
RUNS=${RUNS:-3}
MODES=${MODES:-cpu gpu}
OUTDIR=${OUT:-build/gpu-bench}
WORK=${PGWARP_TEST_DIR:-/tmp/pgwarp-bench}
SFX=${AB_TAG:+-$AB_TAG}
mkdir -p "$OUTDIR" "$WORK"
q() { psql -XAtq -v ON_ERROR_STOP=1 "$@"; }

. scripts/compressed_tables.sh
compressed_tables "$SCHEMA" "$WORK" >"$OUTDIR/compressed-files$SFX.txt" ||
	{ cat "$OUTDIR/compressed-files$SFX.txt"; exit 1; }
src=$(q -c "SELECT substring(ftoptions::text FROM 'file=([^,}]+)') FROM pg_foreign_table t
            JOIN pg_class c ON c.oid = t.ftrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = '$SCHEMA' AND c.relname = 'lineorder_arrow'")
cat "$OUTDIR/compressed-files$SFX.txt"

# run SQL: milliseconds of each of RUNS runs after one warm-up, median
median_ms() {
	local i t0 ts=()
	PGOPTIONS="$1" q -c "$2" >/dev/null || return 1
	for i in $(seq 1 "$RUNS"); do
		t0=$(date +%s%N)
		PGOPTIONS="$1" q -c "$2" >/dev/null || return 1
		ts+=($((($(date +%s%N) - t0) / 1000)))
	done
	printf '%s\n' "${ts[@]}" | sort -n | awk '{ a[NR] = $1 } END { printf "%.1f", a[int((NR + 1) / 2)] / 1000 }'
}

: >"$OUTDIR/compressed-explain$SFX.txt"
: >"$OUTDIR/compressed-failures$SFX.txt"
{
	echo "# SSB over compressed lineorder ($(basename "$src"), schema $SCHEMA), median of $RUNS warm runs, ms"
	for mode in $MODES; do
		echo
		echo "| query ($mode) | uncompressed | lz4 | zstd |"
		echo "|---|---:|---:|---:|"
		for f in bench/ssb/queries/q*.sql; do
			base=$(sed -E 's/\b(customer|supplier|part|date)\b/\1_arrow/g' "$f")
			opts="-c search_path=$SCHEMA -c pg_warp.mode=$mode"
			row="| $(basename "$f" .sql)"
			want=$(PGOPTIONS="$opts" q -c "$(echo "$base" | sed -E 's/\blineorder\b/lineorder_arrow/g')" | md5sum)
			for t in arrow lz4 zstd; do
				sql=$(echo "$base" | sed -E "s/\blineorder\b/lineorder_$t/g")
				got=$(PGOPTIONS="$opts" q -c "$sql" | md5sum)
				[ "$got" = "$want" ] || echo "answer differs: $mode $t $(basename "$f")" >>"$OUTDIR/compressed-failures$SFX.txt"
				plan=$(PGOPTIONS="$opts" q -c "EXPLAIN (ANALYZE) $sql")
				{ echo "== $mode $t $(basename "$f")"; echo "$plan" | grep -E "Ran On|Fallback|Daemon|Scan Time|Bytes To Device|Bytes From GPU Cache|Batches Loaded Ahead|Compressed Columns From GPU Cache|Copy Rate|Kernel Time|Execution Time"; } \
					>>"$OUTDIR/compressed-explain$SFX.txt"
				echo "$plan" | grep -q "Ran On: $( [ "$mode" = gpu ] && echo GPU || echo CPU)" ||
					echo "not on $mode: $t $(basename "$f")" >>"$OUTDIR/compressed-failures$SFX.txt"
				row="$row | $(median_ms "$opts" "$sql")"
			done
			echo "$row |"
		done
	done
} | tee "$OUTDIR/compressed$SFX.md"
cat "$OUTDIR/compressed-failures$SFX.txt"
fails=$(wc -l <"$OUTDIR/compressed-failures$SFX.txt")
echo "$fails failed"
[ "$fails" -eq 0 ]
