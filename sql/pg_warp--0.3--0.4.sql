/* pg_warp 0.3 -> 0.4: vector distance operators and the warp_ivf index
 * access method, PostGIS acceleration hooks, the GPU table cache for heap
 * tables, Parquet support in arrow_fdw. Each feature keeps its own section. */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION pg_warp UPDATE TO '0.4'" to load this file. \quit

