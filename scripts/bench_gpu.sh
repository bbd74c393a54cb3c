#!/bin/bash
# SSB on the GPU machine, against a running cluster (PGHOST/PGPORT/PGUSER set;
# pg_warp preloaded so pg_warp_gpud drives the GPU).
#
#   SF=20 MODES=warp-cpu,warp-gpu RUNS=3 TBL=0 [EXTRA_OPTS="-c pg_warp.gpu_cache=off"] bash scripts/bench_gpu.sh
#
# QUERIES=bench/ssb/extra runs that folder's queries instead of the 13 SSB
# ones (files then named ssb-sfN-extra*; the data is generated once per SF).
#
# Generates the data (TBL=1 also writes the .tbl text and loads heap tables,
# for the heap mode; DUCKDB=1 writes the .tbl text, without heap tables
# unless TBL=1, and runs bench/ssb/duckdb_ssb.py on it), runs `pgwarp bench
# ssb` (which compares every mode's
# answers and exits 1 on a difference), then EXPLAIN ANALYZE of each query
# under pg_warp.mode = gpu for the bytes moved to the device and the copy
# rate.  Files land in $OUT (flat): ssb-sfN.md/.csv/.log, ssb-sfN-gpu.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
SF=${SF:-20}
MODES=${MODES:-warp-cpu,warp-gpu}
RUNS=${RUNS:-3}
TBL=${TBL:-0}
OUTDIR=${OUT:-build/gpu-bench}
WORK=${PGWARP_TEST_DIR:-/tmp/pgwarp-bench}
mkdir -p "$OUTDIR" "$WORK"
dir="$WORK/ssb-sf$SF"
schema="ssb$(echo "$SF" | tr -d .)"
QUERIES=${QUERIES:-bench/ssb/queries}
tag=sf$SF
[ "$QUERIES" = bench/ssb/queries ] || tag="sf$SF-$(basename "$QUERIES")"
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

psql -XAtq -c "CREATE EXTENSION IF NOT EXISTS pg_warp"
t0=$(date +%s.%N)
[ -f "$dir/lineorder.arrow" ] || pgwarp ssb gen --sf "$SF" --format arrow --out "$dir" --quiet || exit 1
echo "SF=$SF arrow generated in $(since "$t0") s ($(du -sh "$dir" | cut -f1))"
# the .tbl text: beside the Arrow files when the heap mode loads it (TBL=1),
# elsewhere when only DuckDB reads it (so no heap tables are loaded)
tbldir=$dir
[ "$TBL" = 1 ] || tbldir="$dir-tbl"
if [ "$TBL" = 1 ] || [ "${DUCKDB:-0}" = 1 ]; then
	t0=$(date +%s.%N)
	[ -f "$tbldir/lineorder.tbl" ] || pgwarp ssb gen --sf "$SF" --format tbl --out "$tbldir" --quiet || exit 1
	echo "SF=$SF tbl generated in $(since "$t0") s"
fi
t0=$(date +%s.%N)
if [ "$(psql -XAtq -c "SELECT to_regclass('$schema.lineorder_arrow') IS NOT NULL")" != t ] ||
	[ "$QUERIES" = bench/ssb/queries ]; then
	pgwarp ssb load -d "dbname=postgres" --from "$dir" --schema "$schema" --replace --quiet || exit 1
	psql -XAtq -c "VACUUM ANALYZE" >/dev/null
fi
echo "SF=$SF loaded in $(since "$t0") s"
# warm the page cache (and, through one GPU query, the daemon's windows)
cat "$dir"/*.arrow >/dev/null

rc=0
# EXTRA_OPTS: more settings for every session, e.g. "-c pg_warp.gpu_cache=off"
# (a DSN's options override PGOPTIONS, so they go into both)
extra=${EXTRA_OPTS:-}
pgwarp bench ssb -d "dbname=postgres options='-csearch_path=$schema $extra'" --modes "$MODES" \
	--runs "$RUNS" --queries "$QUERIES" --out "$WORK/res-$tag" >"$OUTDIR/ssb-$tag.log" 2>&1 || rc=$?
cp "$WORK/res-$tag/results.md" "$OUTDIR/ssb-$tag.md" 2>/dev/null
cp "$WORK/res-$tag/results.csv" "$OUTDIR/ssb-$tag.csv" 2>/dev/null
[ $rc -eq 0 ] && echo "ok   SSB SF=$SF ($QUERIES): answers equal under $MODES" ||
	{ echo "FAIL SSB SF=$SF bench (rc $rc)"; tail -20 "$OUTDIR/ssb-$tag.log"; }
cat "$OUTDIR/ssb-$tag.md" 2>/dev/null | grep -E "^\|"

: >"$OUTDIR/ssb-$tag-gpu.txt"
for f in "$QUERIES"/q*.sql; do
	sql=$(sed -E 's/\b(lineorder|customer|supplier|part|date)\b/\1_arrow/g' "$f")
	{
		echo "== $(basename "$f" .sql)"
		PGOPTIONS="-c search_path=$schema -c pg_warp.mode=gpu $extra" psql -XAtq -c "EXPLAIN (ANALYZE) $sql"
	} >>"$OUTDIR/ssb-$tag-gpu.txt"
done
grep -E "^== |Ran On|Fallback|Bytes To Device|Bytes From GPU Cache|Copy Rate|Copy Time|Kernel Time|Daemon Time|Scan Time|Execution Time" \
	"$OUTDIR/ssb-$tag-gpu.txt" | sed 's/^ *//' | awk '/^== /{ if (l) print l; l=$0; next } { l = l " | " $0 } END { print l }'

# DuckDB on the same data (from the .tbl text; needs a duckdb wheel in the
# wheels folder below, for machines without a package registry)
if [ "${DUCKDB:-0}" = 1 ] && [ -f "$tbldir/lineorder.tbl" ]; then
	whl=$(ls .devkit/wheels/duckdb-*.whl 2>/dev/null | head -1)
	if [ -n "$whl" ]; then
		rm -rf /tmp/duckdb-py && mkdir -p /tmp/duckdb-py &&
			python3 -c "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall('/tmp/duckdb-py')" "$whl"
		PYTHONPATH=/tmp/duckdb-py python3 bench/ssb/duckdb_ssb.py "$tbldir" --tbl --threads "$(nproc)" \
			--runs "$RUNS" --queries "$QUERIES" --out "$OUTDIR/ssb-$tag-duckdb.csv" \
			>"$OUTDIR/ssb-$tag-duckdb.log" 2>&1 || echo "FAIL duckdb (see ssb-$tag-duckdb.log)"
		tail -15 "$OUTDIR/ssb-$tag-duckdb.log"
	else
		echo "skip duckdb: no wheel in .devkit/wheels"
	fi
fi
exit $rc
