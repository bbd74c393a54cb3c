/* pg_warp 0.4 -> 0.5. Each feature keeps its own section, headed
 * "-- ==== <feature> ====". */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION pg_warp UPDATE TO '0.5'" to load this file. \quit
