/* pg_warp 0.3 -> 0.4: vector distance operators and the warp_ivf index
 * access method, PostGIS acceleration hooks, the GPU table cache for heap
 * tables, Parquet support in arrow_fdw. Each feature keeps its own section. */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION pg_warp UPDATE TO '0.4'" to load this file. \quit


-- ==== GPU table cache ====
-- Heap tables attached to a replica in pg_warp_gpud, kept current by the
-- row changes a trigger captures (src/pg/tcache, docs/gpu-table-cache.md).

CREATE FUNCTION pg_warp_gpu_cache_capture()
RETURNS trigger
AS 'MODULE_PATHNAME', 'pg_warp_gpu_cache_capture'
LANGUAGE C;

COMMENT ON FUNCTION pg_warp_gpu_cache_capture() IS
'the trigger pg_warp_gpu_cache_attach creates: ships the row changes of an attached table to its GPU table cache replica';

CREATE FUNCTION pg_warp_gpu_cache_attach(regclass)
RETURNS void
AS 'MODULE_PATHNAME', 'pg_warp_gpu_cache_attach'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION pg_warp_gpu_cache_attach(regclass) IS
'attach a heap table to the GPU table cache: creates its capture trigger and loads its replica into pg_warp_gpud (needs the table''s ownership)';

CREATE FUNCTION pg_warp_gpu_cache_detach(regclass)
RETURNS void
AS 'MODULE_PATHNAME', 'pg_warp_gpu_cache_detach'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION pg_warp_gpu_cache_detach(regclass) IS
'detach a heap table from the GPU table cache: drops its capture trigger and its replica (needs the table''s ownership)';

CREATE FUNCTION pg_warp_gpu_cache_stats(OUT "table" regclass, OUT rows bigint,
                                        OUT bytes bigint, OUT pending_changes bigint,
                                        OUT state text, OUT reason text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_warp_gpu_cache_stats'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_warp_gpu_cache_stats() IS
'the GPU table cache''s replicas of this database''s tables: row versions held, bytes, changes held while loading, state (loading, ready, reload needed) and why';
