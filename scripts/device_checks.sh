#!/bin/bash
# The checks of a GPU machine in one run, as the server's user against a
# running cluster (PGHOST/PGPORT/PGUSER set, pg_warp in
# shared_preload_libraries, pgwarp on PATH):
#
#   1. `make installcheck-gpu` (scripts/installcheck_gpu.sh) at SF (default 1)
#   2. the Python tests whose names say gpu, with PGWARP_ENGINE_MODE=gpu so
#      every differential chunk runs on the device driver
#   3. test_engine_targeted.py (its daemon queries on the GPU)
#   4. the differential test's gpu chunks again for each seed in SEEDS
#
# Needs pytest, psycopg and pyarrow importable by $PY (the device's python
# has none of them: carry them, see bench/results/2026-12-05-h200-device-checks.md).
# Logs go to $OUT (few files: the device call brings back 8); the last line says how many steps failed.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-python3}
SEEDS=${SEEDS:-}
OUTDIR=${OUT:-build/gpu-check}
mkdir -p "$OUTDIR"
export PGWARP_BIN=${PGWARP_BIN:-$(command -v pgwarp)}
export PGWARP_EXPECT_GPUD=1 PGWARP_ENGINE_MODE=gpu PYTHONUNBUFFERED=1
export PGWARP_TEST_DIR=${PGWARP_TEST_DIR:-$(mktemp -d /tmp/pgwarp-py.XXXXXX)}
chmod 777 "$PGWARP_TEST_DIR"
failed=0
step() {
	local name=$1; shift
	local t0=$SECONDS
	"$@" >"$OUTDIR/$name.log" 2>&1
	local rc=$?
	echo "$name rc=$rc $((SECONDS - t0)) s: $(tail -1 "$OUTDIR/$name.log")"
	[ $rc -eq 0 ] || failed=$((failed + 1))
}
# installcheck-gpu writes many files: keep them aside, bring back the diffs
# (INSTALLCHECK=0 skips it: a later call that only re-runs the Python tests)
if [ "${INSTALLCHECK:-1}" != 0 ]; then
	step installcheck-gpu env SF="${SF:-1}" OUT="$PGWARP_TEST_DIR/installcheck" \
		bash scripts/installcheck_gpu.sh
	[ -s "$PGWARP_TEST_DIR/installcheck/regress/regression.diffs" ] &&
		cp "$PGWARP_TEST_DIR/installcheck/regress/regression.diffs" "$OUTDIR/"
fi
# the Python tests assume a database whose default collation is C.UTF-8 (as
# scripts/cluster.sh initdb's it: text ordering is offloaded only under C
# collations); a cluster initialized under en_US.UTF-8 has another, so they
# get one of their own
createdb -T template0 -E UTF8 --locale=C.UTF-8 pgwarp_check 2>/dev/null
export PGDATABASE=pgwarp_check
step pytest-gpu "$PY" -m pytest test/python -q -rs -p no:cacheprovider -k gpu
# the targeted tests: their check_everywhere(..., daemon=N) queries go
# through pg_warp_gpud, the GPU here
step pytest-targeted "$PY" -m pytest test/python/test_engine_targeted.py -q -rs -p no:cacheprovider
for s in $SEEDS; do
	step "differential-gpu-seed$s" env PGWARP_DIFF_SEED="$s" "$PY" -m pytest \
		test/python/test_engine_differential.py -q -p no:cacheprovider -k gpu
done
echo "$failed steps failed"
[ $failed -eq 0 ]
