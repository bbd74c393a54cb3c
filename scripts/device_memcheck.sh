#!/bin/bash
# On the GPU machine, as root, around ../shared/devkit's device-pg.sh: run
# pg_warp_gpud under compute-sanitizer memcheck (every daemon the
# supervisor starts, the restarted ones included), e.g. for one
# `make installcheck-gpu`:
#
#   bash scripts/device_memcheck.sh wrap
#   OUT=/tmp/pgout bash .devkit/device-pg.sh 'RUNS=1 bash scripts/installcheck_gpu.sh; bash scripts/device_memcheck.sh end' \
#       -c shared_preload_libraries=pg_warp
#   bash scripts/device_memcheck.sh unwrap     (writes $OUT/memcheck.tgz and prints the summaries)
#
# `end` (as the server's user, while the cluster runs) stops the current
# daemon with SIGTERM so that memcheck writes its ERROR SUMMARY, and makes
# the next one run without memcheck.  Logs: /tmp/memcheck/sanitizer.<pid>.log
# (a daemon ended by SIGKILL leaves no summary).  This is the committed form
# of the wrapper the 2026-12-06 run used
# (bench/results/2026-12-06-h100-memcheck-split-compressed-session16.md).
set -u
cd "$(dirname "$0")/.."
B=.devkit/stage/usr/lib/postgresql/15/bin
L=/tmp/memcheck
case "${1:-}" in
	wrap)
		mkdir -p $L && chmod 777 $L && rm -f $L/*
		[ -e $B/pg_warp_gpud.real ] || mv $B/pg_warp_gpud $B/pg_warp_gpud.real
		cat >$B/pg_warp_gpud <<EOW
#!/bin/bash
[ -e $L/off ] && exec "\$(dirname "\$0")/pg_warp_gpud.real" "\$@"
exec /usr/local/cuda/bin/compute-sanitizer --tool memcheck --log-file $L/sanitizer.%p.log "\$(dirname "\$0")/pg_warp_gpud.real" "\$@"
EOW
		chmod 755 $B/pg_warp_gpud
		;;
	end)
		touch $L/off
		pid=$(psql -XAtq -c "SELECT split_part(pg_read_file('pg_warp_gpud.status', 0, 256, true), E'\t', 4)")
		[ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null
		for i in $(seq 1 150); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.2
		done
		sleep 3
		;;
	unwrap)
		[ -e $B/pg_warp_gpud.real ] && mv -f $B/pg_warp_gpud.real $B/pg_warp_gpud
		tar czf "${OUT:-/tmp}/memcheck.tgz" -C $L . 2>/dev/null
		grep -H "ERROR SUMMARY" $L/sanitizer.*.log
		grep -l "Invalid\|Error\b" $L/sanitizer.*.log 2>/dev/null | sed 's/^/reports in: /'
		;;
	*)
		echo "usage: $0 wrap|end|unwrap" >&2
		exit 2
		;;
esac
