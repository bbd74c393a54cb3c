#!/bin/bash
# Prints the directory of the CUDA toolkit that compiles pg_warp's CUDA code
# (the one whose bin/nvcc runs), or nothing when there is none.  Used by the
# Makefile (NVCC) and by scripts/deps.sh, test.sh and demo.sh.  In order:
#   $CUDA_HOME, when set: then nothing else is looked at (pointing it at an
#       empty directory builds as on a machine without the toolkit);
#   the nvcc on PATH, then /usr/local/cuda;
#   .cuda/nvidia/cu13 in the checkout: NVIDIA's compiler and runtime from
#       PyPI, which scripts/deps.sh installs there when no toolkit is found.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)

runs() { [ -x "$1/bin/nvcc" ] && "$1/bin/nvcc" --version >/dev/null 2>&1; }

if [ -n "${CUDA_HOME:-}" ]; then
	runs "$CUDA_HOME" && { echo "$CUDA_HOME"; exit 0; }
else
	nvcc=$(command -v nvcc 2>/dev/null) && runs "$(dirname "$(dirname "$nvcc")")" &&
		{ dirname "$(dirname "$nvcc")"; exit 0; }
	runs /usr/local/cuda && { echo /usr/local/cuda; exit 0; }
fi
runs "$ROOT/.cuda/nvidia/cu13" && echo "$ROOT/.cuda/nvidia/cu13"
exit 0
