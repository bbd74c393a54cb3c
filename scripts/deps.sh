#!/bin/bash
# Installs what building and testing pg_warp needs on Debian 12, only what is
# missing (so repeated runs cost seconds).  Used by `make test` and `make demo`.
set -euo pipefail

APT_PKGS=(build-essential postgresql-15 postgresql-server-dev-15 postgresql-client-15
          libpq-dev liblz4-dev libzstd-dev clang time python3 python3-pip)
PIP_PKGS=(pyarrow pytest "psycopg[binary]" matplotlib)

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

if ! python3 -c 'import pyarrow, pytest, psycopg, matplotlib' 2>/dev/null; then
	echo "deps: pip install ${PIP_PKGS[*]}"
	python3 -m pip install -q "${PIP_PKGS[@]}" 2>/dev/null ||
		python3 -m pip install -q --break-system-packages "${PIP_PKGS[@]}"
fi

if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
	echo "deps: nvcc not found: the CUDA toolkit (13) is needed to compile the CUDA code (src/gpud, src/gpucheck)" >&2
	exit 1
fi
