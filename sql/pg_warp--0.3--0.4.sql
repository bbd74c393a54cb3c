/* pg_warp 0.3 -> 0.4: vector distance operators and the warp_ivf index
 * access method, PostGIS acceleration hooks, the GPU table cache for heap
 * tables, Parquet support in arrow_fdw. Each feature keeps its own section. */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION pg_warp UPDATE TO '0.4'" to load this file. \quit


-- ==== daemon budgets ====
-- The running pg_warp_gpud's device and the memory budgets in effect (the
-- settings may be -1: sized from the machine at the daemon's start).
CREATE FUNCTION pg_warp_gpud_settings(OUT device text, OUT gpus integer, OUT name text,
                                      OUT lanes_per_gpu integer,
                                      OUT max_registered_memory_mb bigint,
                                      OUT gpu_cache_memory_mb bigint,
                                      OUT staging_memory_mb bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_warp_gpud_settings'
LANGUAGE C STRICT;
