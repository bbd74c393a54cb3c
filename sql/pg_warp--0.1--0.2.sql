/* pg_warp 0.1 -> 0.2: pg_warp_merge, the aggregate behind DISTINCT
 * aggregates beside plain ones (src/pg/warp_merge_agg.c) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION pg_warp UPDATE TO '0.2'" to load this file. \quit

CREATE FUNCTION pg_warp_merge_trans(internal, "any", regprocedure, anyelement)
RETURNS internal
AS 'MODULE_PATHNAME', 'pg_warp_merge_trans'
LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION pg_warp_merge_final(internal, "any", regprocedure, anyelement)
RETURNS anyelement
AS 'MODULE_PATHNAME', 'pg_warp_merge_final'
LANGUAGE C PARALLEL SAFE;

-- pg_warp_merge(partial state, aggregate, NULL::result type): the named
-- aggregate's result from its partial states; pg_warp's planner puts it
-- above its WarpPreAgg node and it runs nowhere else
CREATE AGGREGATE pg_warp_merge("any", regprocedure, anyelement) (
    SFUNC = pg_warp_merge_trans,
    STYPE = internal,
    FINALFUNC = pg_warp_merge_final,
    FINALFUNC_EXTRA
);

COMMENT ON AGGREGATE pg_warp_merge("any", regprocedure, anyelement) IS
'internal to pg_warp: finishes an aggregate from the partial states of pg_warp''s WarpPreAgg node';
