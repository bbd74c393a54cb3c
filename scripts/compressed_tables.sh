#!/bin/bash
# Sourced by scripts that run SSB over compressed fact tables
# (bench_gpu_compressed.sh, installcheck_gpu.sh): defines
#
#   compressed_tables SCHEMA WORKDIR
#
# which rewrites SCHEMA.lineorder_arrow's file as LZ4_FRAME and ZSTD
# (`pgwarp rewrite --compress`) into WORKDIR and makes the foreign tables
# SCHEMA.lineorder_lz4 and SCHEMA.lineorder_zstd over them (a file made
# before from the same source, with its table, is reused).  Prints a line
# per codec; non-zero when the source is missing or a step fails.  Needs
# a q function (psql -XAtq) in the caller.

compressed_tables() {
	local schema=$1 work=$2 src cols codec t0
	src=$(q -c "SELECT substring(ftoptions::text FROM 'file=([^,}]+)') FROM pg_foreign_table t
	            JOIN pg_class c ON c.oid = t.ftrelid JOIN pg_namespace n ON n.oid = c.relnamespace
	            WHERE n.nspname = '$schema' AND c.relname = 'lineorder_arrow'")
	[ -r "$src" ] || { echo "no readable lineorder_arrow in schema $schema ('$src')"; return 1; }
	cols=$(q -c "SELECT string_agg(quote_ident(attname) || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attnum)
	             FROM pg_attribute WHERE attrelid = '$schema.lineorder_arrow'::regclass AND attnum > 0 AND NOT attisdropped")
	for codec in lz4 zstd; do
		# made before from the same file (an A/B's later passes): reuse it
		if [ "$work/lineorder_$codec.arrow" -nt "$src" ] &&
			[ -n "$(q -c "SELECT to_regclass('$schema.lineorder_$codec')")" ]; then
			echo "reusing $work/lineorder_$codec.arrow"
			continue
		fi
		t0=$(date +%s.%N)
		pgwarp rewrite "$src" "$work/lineorder_$codec.arrow" --compress "$codec" ||
			{ echo "rewrite $codec failed"; return 1; }
		echo "rewrite --compress $codec: $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s," \
			"$(stat -c %s "$work/lineorder_$codec.arrow") bytes (uncompressed $(stat -c %s "$src"))"
		q -c "DROP FOREIGN TABLE IF EXISTS $schema.lineorder_$codec;
		      CREATE FOREIGN TABLE $schema.lineorder_$codec ($cols) SERVER arrow_fdw
		      OPTIONS (file '$work/lineorder_$codec.arrow'); ANALYZE $schema.lineorder_$codec" >/dev/null ||
			return 1
	done
}
