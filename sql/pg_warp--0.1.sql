/* pg_warp--0.1.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION pg_warp" to load this file. \quit

CREATE FUNCTION pg_warp_arrow_schema(file text,
    OUT column_no integer, OUT name text, OUT arrow_type text,
    OUT nullable boolean, OUT pg_type text, OUT pg_type_metadata text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_warp_arrow_schema'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION pg_warp_arrow_schema(text) IS
'columns of an Arrow file on the server: Arrow type, the PostgreSQL type it maps to, and its pg_type metadata';

CREATE FUNCTION pg_warp_arrow_batches(file text,
    OUT batch integer, OUT "offset" bigint, OUT rows bigint,
    OUT body_bytes bigint, OUT compression text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_warp_arrow_batches'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION pg_warp_arrow_batches(text) IS
'record batches of an Arrow file on the server';

REVOKE ALL ON FUNCTION pg_warp_arrow_schema(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_warp_arrow_batches(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_warp_arrow_schema(text) TO pg_read_server_files;
GRANT EXECUTE ON FUNCTION pg_warp_arrow_batches(text) TO pg_read_server_files;

-- arrow_fdw: Arrow files as foreign tables
CREATE FUNCTION arrow_fdw_handler()
RETURNS fdw_handler
AS 'MODULE_PATHNAME', 'arrow_fdw_handler'
LANGUAGE C STRICT;

CREATE FUNCTION arrow_fdw_validator(text[], oid)
RETURNS void
AS 'MODULE_PATHNAME', 'arrow_fdw_validator'
LANGUAGE C STRICT;

CREATE FOREIGN DATA WRAPPER arrow_fdw
  HANDLER arrow_fdw_handler
  VALIDATOR arrow_fdw_validator;

CREATE SERVER arrow_fdw FOREIGN DATA WRAPPER arrow_fdw;

-- Committed length of each file of a writable arrow_fdw table: readers stop
-- there, so appends of aborted or crashed transactions are invisible.
CREATE TABLE pg_warp_arrow_committed (
    path text PRIMARY KEY,
    length bigint NOT NULL CHECK (length >= 0)
);
SELECT pg_catalog.pg_extension_config_dump('pg_warp_arrow_committed', '');
REVOKE ALL ON pg_warp_arrow_committed FROM PUBLIC;
GRANT SELECT ON pg_warp_arrow_committed TO PUBLIC;

CREATE FUNCTION pg_warp_arrow_ddl()
RETURNS event_trigger
AS 'MODULE_PATHNAME', 'pg_warp_arrow_ddl'
LANGUAGE C;

CREATE EVENT TRIGGER pg_warp_arrow_ddl_end ON ddl_command_end
  WHEN TAG IN ('CREATE FOREIGN TABLE', 'ALTER FOREIGN TABLE', 'IMPORT FOREIGN SCHEMA')
  EXECUTE FUNCTION pg_warp_arrow_ddl();

CREATE EVENT TRIGGER pg_warp_arrow_ddl_drop ON sql_drop
  WHEN TAG IN ('DROP FOREIGN TABLE', 'DROP SCHEMA', 'DROP SERVER', 'DROP OWNED')
  EXECUTE FUNCTION pg_warp_arrow_ddl();

CREATE FUNCTION pg_warp_footer_cache_stats(OUT hits bigint, OUT misses bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'pg_warp_footer_cache_stats'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION pg_warp_footer_cache_stats() IS
'lookups of the shared-memory Arrow footer cache that hit and missed since the server started';
