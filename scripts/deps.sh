#!/bin/bash
# Installs what building and testing pg_warp needs on Debian 12, only what is
# missing (so repeated runs cost seconds).  Used by `make test` and `make demo`.
set -euo pipefail

APT_PKGS=(build-essential postgresql-15 postgresql-server-dev-15 postgresql-client-15
          libpq-dev liblz4-dev libzstd-dev libsnappy-dev libbrotli-dev zlib1g-dev
          postgresql-15-postgis-3 clang time python3 python3-pip python3-venv)
PIP_PKGS=(pyarrow pytest "psycopg[binary]" matplotlib numpy shapely duckdb)

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)

missing=()
for p in "${APT_PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "deps: apt-get install ${missing[*]}"
	"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
	"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! python3 -c 'import pyarrow, pytest, psycopg, matplotlib, numpy, shapely, duckdb' 2>/dev/null; then
	echo "deps: pip install ${PIP_PKGS[*]}"
	python3 -m pip install -q "${PIP_PKGS[@]}" 2>/dev/null ||
		python3 -m pip install -q --break-system-packages "${PIP_PKGS[@]}"
fi

# The CUDA compiler: the toolkit scripts/cuda_home.sh finds ($CUDA_HOME, the
# nvcc on PATH, /usr/local/cuda), else NVIDIA's wheels of the same CUDA 13.0
# from PyPI (nvcc with ptxas, cicc from nvidia-nvvm, the compiler's crt
# headers, the runtime with the libcudart_static.a the daemon links),
# installed into .cuda/ in the checkout (ignored by git, about 250 MB).
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CUDA_PIP=("nvidia-cuda-nvcc==13.0.*" "nvidia-cuda-runtime==13.0.*" "nvidia-cuda-crt==13.0.*"
          "nvidia-nvvm==13.0.*")
if [ -z "$(bash "$ROOT/scripts/cuda_home.sh")" ]; then
	echo "deps: no CUDA toolkit found: pip install --target .cuda ${CUDA_PIP[*]}"
	rm -rf "$ROOT/.cuda" "$ROOT/.cuda.part"
	pip_cuda=(env PIP_ROOT_USER_ACTION=ignore python3 -m pip install -q --disable-pip-version-check
	          --target "$ROOT/.cuda.part" "${CUDA_PIP[@]}")
	"${pip_cuda[@]}" 2>/dev/null ||
		{ rm -rf "$ROOT/.cuda.part"; "${pip_cuda[@]}" --break-system-packages; } ||
		{ echo "deps: installing nvcc from PyPI failed: install the CUDA 13 toolkit, or set CUDA_HOME to it" >&2; exit 1; }
	# nvcc's profile looks for the runtime in lib64/; the wheels put it in lib/
	ln -s lib "$ROOT/.cuda.part/nvidia/cu13/lib64"
	mv "$ROOT/.cuda.part" "$ROOT/.cuda"
	[ -n "$(bash "$ROOT/scripts/cuda_home.sh")" ] ||
		{ echo "deps: the nvcc installed from PyPI into .cuda/ does not run" >&2; exit 1; }
fi
echo "deps: CUDA toolkit: $(bash "$ROOT/scripts/cuda_home.sh")"

# DuckDB with its tpch extension (dbgen and the 22 query texts) for the TPC-H
# kit and its tests, in build/tpch-venv: the extension's PyPI package is built
# for one DuckDB version, so both are pinned there (bench/tpch/setup_venv.sh)
if ! "$ROOT/build/tpch-venv/bin/python" "$ROOT/bench/tpch/tpch_gen.py" /nonexistent --check \
		>/dev/null 2>&1; then
	echo "deps: DuckDB with the tpch extension into build/tpch-venv"
	sh "$ROOT/bench/tpch/setup_venv.sh" >/dev/null ||
		{ echo "deps: could not set up build/tpch-venv (bench/tpch/setup_venv.sh)" >&2; exit 1; }
fi
