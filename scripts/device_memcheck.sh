#!/bin/bash
# On the GPU machine, as root, around the script that starts a cluster from
# the staged install (B below; kept outside the repository): run
# pg_warp_gpud under compute-sanitizer (every daemon the supervisor starts,
# the restarted ones included), e.g. one `make installcheck-gpu` under
# memcheck, then the SSB queries under racecheck:
#
#   bash scripts/device_memcheck.sh wrap [TOOL]        (TOOL: memcheck, the default)
#   <start the cluster, then run> 'RUNS=1 bash scripts/installcheck_gpu.sh;
#       bash scripts/device_memcheck.sh switch racecheck; ...; bash scripts/device_memcheck.sh end' \
#       -c shared_preload_libraries=pg_warp
#   bash scripts/device_memcheck.sh unwrap     (writes $OUT/memcheck.tgz and prints the summaries)
#
# `switch TOOL` (as the server's user, while the cluster runs) stops the
# current daemon with SIGTERM, so that its sanitizer writes its ERROR
# SUMMARY, and waits for the supervisor's next daemon, which runs under
# TOOL (memcheck, racecheck, synccheck, initcheck); `end` is `switch off`:
# the next daemons run bare.  Logs: /tmp/memcheck/<tool>.<pid>.log (a
# daemon ended by SIGKILL leaves no summary).  Results of such runs:
# bench/results/2026-12-06-h100-memcheck-split-compressed.md.
set -u
cd "$(dirname "$0")/.."
B=.devkit/stage/usr/lib/postgresql/15/bin
L=/tmp/memcheck
q() { psql -XAtq -c "$1"; }
status_pid() { q "SELECT split_part(pg_read_file('pg_warp_gpud.status', 0, 256, true), E'\t', 4)"; }
case "${1:-}" in
	wrap)
		mkdir -p $L && chmod 777 $L && rm -f $L/*
		echo "${2:-memcheck}" >$L/tool && chmod 666 $L/tool
		[ -e $B/pg_warp_gpud.real ] || mv $B/pg_warp_gpud $B/pg_warp_gpud.real
		cat >$B/pg_warp_gpud <<EOW
#!/bin/bash
t=\$(cat $L/tool 2>/dev/null)
case "\$t" in memcheck|racecheck|synccheck|initcheck) ;; *) exec "\$(dirname "\$0")/pg_warp_gpud.real" "\$@" ;; esac
exec /usr/local/cuda/bin/compute-sanitizer --tool "\$t" --log-file $L/\$t.%p.log "\$(dirname "\$0")/pg_warp_gpud.real" "\$@"
EOW
		chmod 755 $B/pg_warp_gpud
		;;
	switch|end)
		[ "$1" = end ] && set -- switch off
		echo "${2:?tool}" >$L/tool
		pid=$(status_pid)
		[ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null
		for i in $(seq 1 300); do
			new=$(status_pid)
			[ -n "$new" ] && [ "$new" != "$pid" ] && [ -d "/proc/$new" ] && break
			sleep 0.2
		done
		echo "pg_warp_gpud now: $(q "SELECT pg_read_file('pg_warp_gpud.status', 0, 256, true)") (tool $2)"
		;;
	unwrap)
		[ -e $B/pg_warp_gpud.real ] && mv -f $B/pg_warp_gpud.real $B/pg_warp_gpud
		tar czf "${OUT:-/tmp}/memcheck.tgz" -C $L . 2>/dev/null
		grep -H "ERROR SUMMARY\|RACECHECK SUMMARY" $L/*.log
		grep -l "Invalid\|Error\b\|Race reported\|hazard" $L/*.log 2>/dev/null | sed 's/^/reports in: /'
		;;
	*)
		echo "usage: $0 wrap [TOOL] | switch TOOL | end | unwrap" >&2
		exit 2
		;;
esac
