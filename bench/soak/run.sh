#!/bin/bash
# pg_warp soak: mixed OLTP + analytics with faults injected, every answer
# checked (docs/soak.md).
#
#   bench/soak/run.sh [--minutes N] [--oltp-clients A] [--olap-clients B]
#                     [--sf SF] [--gpud-device auto|cpu] [--dsn DSN] ...
#                     (--help lists every option)
#
# Starts a throwaway cluster (pg_warp must be installed: make install) unless
# --dsn names a server.  Results go to bench/results/soak/<date>-<host>/ (or
# --out); the last line printed is
#   soak: Q queries, W wrong answers, E unexpected errors, L lost rows, OLTP TPS ratio R
# and the exit status is 0 only when W, E and L are 0 and no process grew.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$(pg_config --bindir):$PATH"
exec python3 -u bench/soak/soak.py "$@"
