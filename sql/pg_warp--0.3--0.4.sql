/* pg_warp 0.3 -> 0.4: vector distance operators and the warp_ivf index
 * access method, PostGIS acceleration hooks, the GPU table cache for heap
 * tables, Parquet support in arrow_fdw. Each feature keeps its own section. */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION pg_warp UPDATE TO '0.4'" to load this file. \quit


-- ==== vectors ====
-- Distance operators with pgvector's spelling and meaning on real[]
-- (float4[]) vectors, and warp_ivf, an IVF-Flat index access method.

CREATE FUNCTION l2_distance(real[], real[]) RETURNS float8
AS 'MODULE_PATHNAME', 'pg_warp_l2_distance'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION negative_inner_product(real[], real[]) RETURNS float8
AS 'MODULE_PATHNAME', 'pg_warp_negative_inner_product'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION inner_product(real[], real[]) RETURNS float8
AS 'MODULE_PATHNAME', 'pg_warp_inner_product'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION cosine_distance(real[], real[]) RETURNS float8
AS 'MODULE_PATHNAME', 'pg_warp_cosine_distance'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION vector_norm(real[]) RETURNS float8
AS 'MODULE_PATHNAME', 'pg_warp_vector_norm'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION vector_dims(real[]) RETURNS integer
AS 'MODULE_PATHNAME', 'pg_warp_vector_dims'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OPERATOR <-> (
    LEFTARG = real[], RIGHTARG = real[], PROCEDURE = l2_distance,
    COMMUTATOR = '<->');
CREATE OPERATOR <#> (
    LEFTARG = real[], RIGHTARG = real[], PROCEDURE = negative_inner_product,
    COMMUTATOR = '<#>');
CREATE OPERATOR <=> (
    LEFTARG = real[], RIGHTARG = real[], PROCEDURE = cosine_distance,
    COMMUTATOR = '<=>');

COMMENT ON OPERATOR <->(real[], real[]) IS 'L2 (Euclidean) distance';
COMMENT ON OPERATOR <#>(real[], real[]) IS 'negative inner product';
COMMENT ON OPERATOR <=>(real[], real[]) IS 'cosine distance';

CREATE FUNCTION warp_ivf_handler(internal) RETURNS index_am_handler
AS 'MODULE_PATHNAME', 'pg_warp_ivf_handler'
LANGUAGE C;

CREATE ACCESS METHOD warp_ivf TYPE INDEX HANDLER warp_ivf_handler;
COMMENT ON ACCESS METHOD warp_ivf IS 'IVF-Flat approximate nearest-neighbour index over real[]';

CREATE OPERATOR CLASS real_l2_ops FOR TYPE real[] USING warp_ivf AS
    OPERATOR 1 <-> (real[], real[]) FOR ORDER BY float_ops,
    FUNCTION 1 l2_distance(real[], real[]);
CREATE OPERATOR CLASS real_ip_ops FOR TYPE real[] USING warp_ivf AS
    OPERATOR 1 <#> (real[], real[]) FOR ORDER BY float_ops,
    FUNCTION 1 negative_inner_product(real[], real[]);
CREATE OPERATOR CLASS real_cosine_ops FOR TYPE real[] USING warp_ivf AS
    OPERATOR 1 <=> (real[], real[]) FOR ORDER BY float_ops,
    FUNCTION 1 cosine_distance(real[], real[]);

CREATE FUNCTION pg_warp_ivf_check(index regclass,
    OUT lists integer, OUT dims integer, OUT pages bigint, OUT entries bigint)
AS 'MODULE_PATHNAME', 'pg_warp_ivf_check'
LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION pg_warp_ivf_check(regclass) IS
'walks a warp_ivf index and checks its pages; counts its lists, pages and entries';

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
