#!/bin/sh
# A Python environment whose DuckDB loads the tpch extension (dbgen and the
# 22 query texts), for bench/tpch/tpch.py and the TPC-H tests: build/tpch-venv.
# The extension's PyPI package is built for one DuckDB version; both are
# pinned to it here.  Usage: bench/tpch/setup_venv.sh [VERSION]
set -eu
V=${1:-1.5.5}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
python3 -m venv "$ROOT/build/tpch-venv"
"$ROOT/build/tpch-venv/bin/pip" install -q "duckdb==$V" "duckdb-extension-tpch==$V"
"$ROOT/build/tpch-venv/bin/python" "$ROOT/bench/tpch/tpch_gen.py" /nonexistent --check
echo "build/tpch-venv: duckdb $V with the tpch extension"
