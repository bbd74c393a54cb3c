#!/bin/bash
# The k-NN benchmark (bench/vector/vector_bench.py) on the GPU machine,
# against a running cluster (PGHOST/PGPORT/PGUSER set, pg_warp preloaded).
# SYNTHETIC data: a mixture of anisotropic Gaussians, normalised.
#
#   PART=exact ROWS=1000000 DIMS=1536 bash scripts/bench_vectors_gpu.sh
#   PART=ivf   ROWS=1000000 DIMS=1536 bash scripts/bench_vectors_gpu.sh
#
# PART=exact: vanilla PostgreSQL's heap plan (the ground truth), WarpVecScan
#   over the Arrow copy on THREADS CPU threads, and PyTorch brute force over
#   the vectors resident in device memory (float32 / float16, one query and
#   min(64, QUERIES) queries per matrix product) in the same run.
# PART=ivf: the ground truth, WarpVecScan, warp_ivf (LISTS lists, PROBES)
#   and faiss-cpu IVF-Flat on the same lists.
# Each part generates and loads its data itself (minutes at 1M x 1536; the
# ground truth, PostgreSQL's heap plan, takes seconds per query there, so
# QUERIES stays small).
# Reports land in $OUT (vector-<rows>-<dims>-<part>.md and .json).
set -uo pipefail
cd "$(dirname "$0")/.."
PART=${PART:-exact}
ROWS=${ROWS:-1000000}
DIMS=${DIMS:-1536}
QUERIES=${QUERIES:-32}
THREADS=${THREADS:-$(nproc)}
LISTS=${LISTS:-1000}
PROBES=${PROBES:-1,10,40}
OUTDIR=${OUT:-build/gpu-bench}
mkdir -p "$OUTDIR"
case "$PART" in
	exact) skip="ivf,faiss,hnsw,arrow-vanilla"; extra=(--torch) ;;
	ivf) skip="hnsw,arrow-vanilla"; extra=() ;;
	*) echo "PART must be exact or ivf"; exit 2 ;;
esac
psql -XAtq -c "CREATE EXTENSION IF NOT EXISTS pg_warp" || exit 1
exec python3 bench/vector/vector_bench.py --rows "$ROWS" --dims "$DIMS" --queries "$QUERIES" \
	--normalise --lists "$LISTS" --probes "$PROBES" --cpu-threads "$THREADS" \
	--maintenance-work-mem 8GB --skip "$skip" "${extra[@]}" \
	--machine "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)" \
	--out "$OUTDIR/vector-$ROWS-$DIMS-$PART.md"
