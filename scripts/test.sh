#!/bin/bash
# `make test`: installs dependencies, builds everything (extension, pgwarp,
# unit tests, CUDA sources), installs, starts a throwaway cluster, runs the
# pg_regress suite, the C unit tests and the Python interop tests, stops the
# cluster (also on failure) and prints one line "N passed, M failed".
# Exit status is non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PATH="$(pg_config --bindir):$PATH"

bash scripts/deps.sh || { echo "0 passed, 1 failed (dependencies)"; exit 1; }
# deps.sh may have just installed pg_config's package
export PATH="$(pg_config --bindir):$PATH"

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)

echo "== build"
if ! make -s -j2 all >build.log 2>&1; then
	tail -40 build.log
	echo "0 passed, 1 failed (build)"
	exit 1
fi
if ! "${sudo_cmd[@]}" make -s install >>build.log 2>&1; then
	tail -20 build.log
	echo "0 passed, 1 failed (install)"
	exit 1
fi

. scripts/cluster.sh
trap cluster_stop EXIT
# the GPU daemon runs with the CPU driver here, so the daemon, its protocol,
# cancellation and crash recovery are tested without a GPU; prepared
# transactions are allowed for the heap dimension cache's test
cluster_start -c shared_preload_libraries=pg_warp -c pg_warp.gpud_device=cpu \
	-c max_prepared_transactions=4 ||
	{ echo "0 passed, 1 failed (cluster start)"; exit 1; }
export PGWARP_BIN="$ROOT/build/pgwarp" PGWARP_EXPECT_GPUD=1

passed=0
failed=0
# names of what failed, repeated at the end (CI shows the tail of the log)
failures=()

# ---- pg_regress
echo "== pg_regress"
REGRESS_TESTS=$(ls test/regress/sql/*.sql 2>/dev/null | xargs -n1 basename 2>/dev/null | sed 's/\.sql$//' | sort)
mkdir -p build/regress
PG_REGRESS="$(dirname "$(pg_config --pgxs)")/../test/regress/pg_regress"
if [ -n "$REGRESS_TESTS" ]; then
	"$PG_REGRESS" --host="$PGHOST" --port="$PGPORT" --user=postgres \
		--inputdir=test/regress --outputdir=build/regress --dbname=pg_warp_regress \
		$REGRESS_TESTS | tee build/regress/summary.out
	p=$(grep -cE '^(ok|test) .*\.\.\. ok|^ok ' build/regress/summary.out || true)
	f=$(grep -cE 'FAILED|failed \(ignored\)|^not ok' build/regress/summary.out || true)
	n=$(echo "$REGRESS_TESTS" | wc -w)
	[ $((p + f)) -lt "$n" ] && f=$((n - p))
	[ -f build/regress/regression.diffs ] && [ "$f" -gt 0 ] && head -100 build/regress/regression.diffs
	while read -r l; do failures+=("pg_regress: $l"); done < <(grep -E 'FAILED|failed \(ignored\)|^not ok' build/regress/summary.out)
	[ "$f" -gt 0 ] && [ "$(grep -cE 'FAILED|failed \(ignored\)|^not ok' build/regress/summary.out)" -eq 0 ] &&
		failures+=("pg_regress: $f of $n tests did not report ok")
	passed=$((passed + p)); failed=$((failed + f))
	echo "pg_regress: $p passed, $f failed"
fi

# ---- C unit tests
echo "== unit"
for t in build/unit/test_*; do
	[ -x "$t" ] || continue
	out=$(timeout 300 "$t" 2>&1); rc=$?
	echo "$out" | grep -E '^(PASS|FAIL):' | sed "s|^|$(basename "$t"): |"
	p=$(echo "$out" | grep -c '^PASS:' || true)
	f=$(echo "$out" | grep -c '^FAIL:' || true)
	if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "$(basename "$t"): exited with status $rc"; echo "$out" | tail -5; f=1
		failures+=("$(basename "$t"): exited with status $rc")
	fi
	while read -r l; do [ -n "$l" ] && failures+=("$(basename "$t"): $l"); done < <(echo "$out" | grep '^FAIL:')
	passed=$((passed + p)); failed=$((failed + f))
done

# ---- Python interop tests
echo "== pytest"
if ls test/python/test_*.py >/dev/null 2>&1; then
	python3 -m pytest test/python -q -p no:cacheprovider --junitxml=build/pytest.xml \
		-o junit_family=xunit2 2>&1 | tail -40
	if [ -f build/pytest.xml ]; then
		read -r p f s < <(python3 - <<'PY'
import xml.etree.ElementTree as ET
r = ET.parse("build/pytest.xml").getroot()
suites = [r] if r.tag == "testsuite" else list(r)
t = sum(int(s.get("tests", 0)) for s in suites)
f = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
k = sum(int(s.get("skipped", 0)) for s in suites)
print(t - f - k, f, k)
PY
)
		while read -r l; do [ -n "$l" ] && failures+=("pytest: $l"); done < <(python3 - <<'PY'
import xml.etree.ElementTree as ET
for case in ET.parse("build/pytest.xml").getroot().iter("testcase"):
    for bad in list(case.findall("failure")) + list(case.findall("error")):
        msg = (bad.get("message") or "").splitlines()
        print("%s::%s %s" % (case.get("classname"), case.get("name"), msg[0][:200] if msg else ""))
PY
)
		[ "$s" -gt 0 ] && echo "pytest: $s skipped"
		passed=$((passed + p)); failed=$((failed + f))
	else
		failed=$((failed + 1))
		failures+=("pytest: no report (build/pytest.xml missing)")
	fi
fi

if [ ${#failures[@]} -gt 0 ]; then
	echo "== failed"
	printf '%s\n' "${failures[@]}"
	if printf '%s\n' "${failures[@]}" | grep -q '^pg_regress' && [ -f build/regress/regression.diffs ]; then
		echo "-- build/regress/regression.diffs (first 60 lines)"
		head -60 build/regress/regression.diffs
	fi
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
