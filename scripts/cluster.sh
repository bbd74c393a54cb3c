#!/bin/bash
# Throwaway PostgreSQL 15 cluster for tests and the demo; sourced, not run.
#   cluster_start [postgres -c options...]   sets PGHOST PGPORT PGUSER PGDATABASE
#                                            PGWARP_TEST_DIR CLUSTER_DIR
#   (PGWARP_TEST_PORT picks the port, default 54329, so clusters can run side by side)
#   cluster_stop                              stops it and removes its files
# PostgreSQL refuses to run as root, so when we are root the server runs as
# the unprivileged `postgres` user; clients (psql, pg_regress, pytest) run as
# the caller and connect over a private socket directory with trust auth.

PG_BINDIR=$(pg_config --bindir)

cluster_as_server() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

cluster_start() {
	CLUSTER_DIR=$(mktemp -d /tmp/pg_warp_cluster.XXXXXX)
	chmod 755 "$CLUSTER_DIR"
	mkdir -p "$CLUSTER_DIR/data" "$CLUSTER_DIR/sock" "$CLUSTER_DIR/files"
	chmod 1777 "$CLUSTER_DIR/files"
	[ "$(id -u)" -eq 0 ] && chown postgres "$CLUSTER_DIR/data" "$CLUSTER_DIR/sock"
	chmod 700 "$CLUSTER_DIR/data"
	export PGHOST="$CLUSTER_DIR/sock" PGPORT=${PGWARP_TEST_PORT:-54329} PGUSER=postgres PGDATABASE=postgres
	export PGWARP_TEST_DIR="$CLUSTER_DIR/files" CLUSTER_DIR
	cluster_as_server "$PG_BINDIR/initdb" -D "$CLUSTER_DIR/data" -A trust -U postgres \
		-E UTF8 --locale=C.UTF-8 --no-sync >"$CLUSTER_DIR/initdb.log" 2>&1 ||
		{ cat "$CLUSTER_DIR/initdb.log"; return 1; }
	local opts="-p $PGPORT -k $PGHOST -c listen_addresses='' -c fsync=off"
	local o
	for o in "$@"; do opts="$opts $o"; done
	touch "$CLUSTER_DIR/postgres.log"; chmod 666 "$CLUSTER_DIR/postgres.log"
	cluster_as_server "$PG_BINDIR/pg_ctl" -D "$CLUSTER_DIR/data" -o "$opts" \
		-l "$CLUSTER_DIR/postgres.log" -w -t 60 start >/dev/null ||
		{ tail -30 "$CLUSTER_DIR/postgres.log"; return 1; }
}

cluster_stop() {
	[ -n "${CLUSTER_DIR:-}" ] && [ -d "$CLUSTER_DIR" ] || return 0
	cluster_as_server "$PG_BINDIR/pg_ctl" -D "$CLUSTER_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
	if [ -n "${KEEP_CLUSTER:-}" ]; then
		echo "cluster files kept in $CLUSTER_DIR"
	else
		rm -rf "$CLUSTER_DIR"
	fi
	CLUSTER_DIR=
}
