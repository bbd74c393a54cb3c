/* pg_warp 0.2 -> 0.3: pg_warp_dim_cache_stats, what the dimension caches
 * hold (src/pg/warp_dimcache.c) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION pg_warp UPDATE TO '0.3'" to load this file. \quit

CREATE FUNCTION pg_warp_dim_cache_stats(OUT entries integer, OUT bytes bigint,
                                        OUT cluster_bytes bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'pg_warp_dim_cache_stats'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_warp_dim_cache_stats() IS
'built dimension tables this session keeps for later queries (entries, bytes), and the bytes all sessions keep together under pg_warp.dim_cache_total_mem (NULL unless pg_warp is in shared_preload_libraries)';
