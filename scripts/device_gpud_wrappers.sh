#!/bin/bash
# On the GPU machine, as root, before starting the cluster from the staged
# install (B below; kept outside the repository): make
# the staged pg_warp_gpud a symlink to /tmp/gpudbin/current, a wrapper that
# runs the real daemon with extra options, so tests and A/B runs can use
# daemon settings the supervisor does not pass (it runs pg_warp_gpud with
# --device, --max-registered-mb and --cache-mb only).
#
#   CUR=force bash scripts/device_gpud_wrappers.sh
#   <start the cluster, then run> '... AB_DIR=build/ab bash scripts/bench_gpu_ab.sh' ...
#   bash scripts/device_gpud_wrappers.sh --restore    (before the call ends)
#
# Wrappers in /tmp/gpudbin: force (--min-batches-per-lane=1: every job
# with 2+ batches is split over the lanes, so small test data runs the
# multi-lane paths), one (--lanes-per-gpu=1), default, four
# (--lanes-per-gpu=4); CUR picks the one installed (default: force).
# build/ab gets one, default and four for scripts/bench_gpu_ab.sh.  It also
# installs the psycopg wheels carried in .whl/ into /tmp/site for the
# device's python (path in /tmp/py-path).
#
# --restore puts the real binary back into the staged install: a symlink
# left there breaks the next run on the same machine.
set -u
cd "$(dirname "$0")/.."
B=.devkit/stage/usr/lib/postgresql/15/bin/pg_warp_gpud
if [ "${1:-}" = --restore ]; then
	[ -L $B ] && rm -f $B && cp /tmp/gpudbin/real $B
	rm -rf build/ab
	exit 0
fi
mkdir -p /tmp/gpudbin && chmod 777 /tmp/gpudbin
[ -L $B ] || cp $B /tmp/gpudbin/real
chmod 755 /tmp/gpudbin/real
mk() { printf '#!/bin/sh\nexec /tmp/gpudbin/real "$@" %s\n' "$2" >/tmp/gpudbin/$1; chmod 755 /tmp/gpudbin/$1; }
mk force "--min-batches-per-lane=1"
mk one "--lanes-per-gpu=1"
mk default ""
mk four "--lanes-per-gpu=4"
cp /tmp/gpudbin/${CUR:-force} /tmp/gpudbin/current
chmod 755 /tmp/gpudbin/current
ln -sf /tmp/gpudbin/current $B
mkdir -p build/ab && rm -f build/ab/*
cp /tmp/gpudbin/one build/ab/a-lanes1
cp /tmp/gpudbin/default build/ab/b-lanes2
cp /tmp/gpudbin/four build/ab/c-lanes4
chmod -R a+rX build/ab
P=$(command -v python3)
$P -m pip install -q --no-index --target /tmp/site .whl/*.whl >/dev/null 2>&1
echo "$P" >/tmp/py-path
chmod -R a+rX /tmp/site /tmp/py-path 2>/dev/null
mkdir -p /tmp/pgout && chmod 777 /tmp/pgout
