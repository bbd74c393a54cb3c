--
-- arrow_fdw: foreign tables over Arrow files written by `pgwarp dump`.
-- Every answer is compared with the heap table the file came from.
--
CREATE EXTENSION pg_warp;
-- this file tests the FDW on PostgreSQL's executor; the engine's plans are
-- tested in warp_engine.sql
SET pg_warp.enable_preagg = off;
SET pg_warp.enable_scan = off;
\getenv dir PGWARP_TEST_DIR
SELECT set_config('regress.dir', :'dir', false) IS NOT NULL AS dir_set;

CREATE TYPE regress_pair AS (a integer, b text);
CREATE TABLE fdw_src (
    id integer, b boolean, i2 smallint, i8 bigint, f4 real, f8 float8,
    n numeric(12,2), t text, v varchar(10), by bytea, d date, tm time,
    ts timestamp, tstz timestamptz, iv interval, u uuid, ia integer[],
    ta text[], js json, p regress_pair);
INSERT INTO fdw_src
SELECT i, i % 3 = 0, (i % 30000)::int2, (i::int8 * 1000003) << 20, i / 3.0, i / 7.0,
       i * 1.25, 'row ' || i, 'v' || (i % 1000), decode(md5(i::text), 'hex'),
       date '1960-01-01' + i * 7, time '00:00' + i * interval '1 second',
       timestamp '1950-02-28 10:00' + i * interval '1 hour 1 minute',
       timestamptz '2020-02-29 10:00+00' + i * interval '1 day 1 second',
       make_interval(months => i % 25, days => i % 40, secs => i / 1000.0),
       md5(i::text)::uuid, ARRAY[i, NULL, -i], ARRAY['x' || i, NULL, ''],
       json_build_object('k', i), ROW(i, 'p' || i)::regress_pair
FROM generate_series(1, 20000) i;
INSERT INTO fdw_src (id) VALUES (0);   -- NULL in every other column
INSERT INTO fdw_src VALUES (-1, false, -32768, -9223372036854775808, 'NaN', '-Infinity',
    -9999999999.99, '', '', '', '4713-01-01 BC', '23:59:59.999999', '200000-12-31 23:59:59.999999',
    '1901-12-13 20:45:52+00', '-178000000 years', '00000000-0000-0000-0000-000000000000',
    '{}', '{}', '[]', ROW(NULL, NULL));

-- batches of 4096 rows, ordered by id so batch skipping has something to skip
\! pgwarp dump -d dbname=pg_warp_regress --quiet -c 'SELECT * FROM fdw_src ORDER BY id' -o "$PGWARP_TEST_DIR/fdw_src.arrow" --batch-rows 4096

DO $do$ BEGIN EXECUTE format($$CREATE FOREIGN TABLE fdw_t (
    id integer, b boolean, i2 smallint, i8 bigint, f4 real, f8 float8,
    n numeric(12,2), t text, v varchar(10), by bytea, d date, tm time,
    ts timestamp, tstz timestamptz, iv interval, u uuid, ia integer[],
    ta text[], js json, p regress_pair)
  SERVER arrow_fdw OPTIONS (file %L)$$, current_setting('regress.dir') || '/fdw_src.arrow'); END $do$;

-- every value equal (json compared as text: it has no equality operator)
SELECT count(*) AS rows FROM fdw_t;
SELECT count(*) AS differing FROM (
  (SELECT id, b, i2, i8, f4, f8, n, t, v, by, d, tm, ts, tstz, iv, u, ia, ta, js::text, p FROM fdw_t
   EXCEPT ALL
   SELECT id, b, i2, i8, f4, f8, n, t, v, by, d, tm, ts, tstz, iv, u, ia, ta, js::text, p FROM fdw_src)
  UNION ALL
  (SELECT id, b, i2, i8, f4, f8, n, t, v, by, d, tm, ts, tstz, iv, u, ia, ta, js::text, p FROM fdw_src
   EXCEPT ALL
   SELECT id, b, i2, i8, f4, f8, n, t, v, by, d, tm, ts, tstz, iv, u, ia, ta, js::text, p FROM fdw_t)) x;
SELECT sum(i8) = (SELECT sum(i8) FROM fdw_src) AS sum_i8,
       sum(n) = (SELECT sum(n) FROM fdw_src) AS sum_n,
       max(tstz) = (SELECT max(tstz) FROM fdw_src) AS max_tstz
FROM fdw_t;

-- whole-row references read every column
SELECT (SELECT md5(string_agg(x::text, ',' ORDER BY id)) FROM fdw_t x) =
       (SELECT md5(string_agg(x::text, ',' ORDER BY id)) FROM fdw_src x) AS same_rows;
SELECT x FROM fdw_t x WHERE id = 7;

-- a table over a directory of 40 files; planning reads their metadata once,
-- later plans take it from the shared footer cache (misses stay put)
\! mkdir -p "$PGWARP_TEST_DIR/many" && for i in $(seq 1 40); do pgwarp dump -d dbname=pg_warp_regress --quiet -c "SELECT id, i8 FROM fdw_src WHERE (id + 40) % 40 = $i - 1" -o "$PGWARP_TEST_DIR/many/part$i.arrow" || exit 1; done
DO $do$ BEGIN EXECUTE format($$CREATE FOREIGN TABLE fdw_many (id int, i8 bigint) SERVER arrow_fdw OPTIONS (dir %L)$$,
    current_setting('regress.dir') || '/many'); END $do$;
SELECT count(*), sum(i8) = (SELECT sum(i8) FROM fdw_src) AS same_sum FROM fdw_many;
SELECT misses AS misses0, hits AS hits0 FROM pg_warp_footer_cache_stats() \gset
SELECT count(*) FROM fdw_many WHERE id > 10000;
SELECT misses - :misses0 AS new_misses, hits - :hits0 >= 80 AS hits_for_plan_and_scan
FROM pg_warp_footer_cache_stats();
DROP FOREIGN TABLE fdw_many;

-- projection: fewer columns, fewer bytes; batch skipping on id
EXPLAIN (COSTS OFF) SELECT sum(i2) FROM fdw_t WHERE id < 5000;
CREATE FUNCTION explain_lines(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF l ~ 'Batches|Columns Read|Batch Skipping' THEN RETURN NEXT trim(l); END IF;
  END LOOP;
END $$;
SELECT * FROM explain_lines('SELECT sum(i2) FROM fdw_t WHERE id < 5000');
SELECT (SELECT sum(i2) FROM fdw_t WHERE id < 5000) = (SELECT sum(i2) FROM fdw_src WHERE id < 5000) AS same;
SELECT * FROM explain_lines('SELECT count(*) FROM fdw_t WHERE id >= 19000 AND id <= 19100');
SELECT (SELECT count(*) FROM fdw_t WHERE id >= 19000 AND id <= 19100) AS n;
SELECT * FROM explain_lines('SELECT count(*) FROM fdw_t WHERE 12288 = id');
-- IS [NOT] NULL skips by the batches' null counts (the NULL row is in batch 0)
SELECT * FROM explain_lines('SELECT count(*) FROM fdw_t WHERE b IS NULL');
SELECT (SELECT count(*) FROM fdw_t WHERE b IS NULL) = (SELECT count(*) FROM fdw_src WHERE b IS NULL) AS same_null,
       (SELECT count(*) FROM fdw_t WHERE b IS NOT NULL) = (SELECT count(*) FROM fdw_src WHERE b IS NOT NULL) AS same_not_null,
       (SELECT count(*) FROM fdw_t WHERE p IS NULL) = (SELECT count(*) FROM fdw_src WHERE p IS NULL) AS same_row_is_null;

-- clauses decided from raw values drop rows before they become Datums;
-- every predicate gives the heap's answer (NaN, -Infinity, NULL, extremes)
SELECT q AS mismatch FROM (VALUES
  ('id < 5000'), ('id <= 0'), ('id = 12288'), ('id >= 19999'), ('id > -1'), ('5000 > id'),
  ('i2 < 0'), ('i2 = -32768'), ('i8 > 0'), ('i8 = -9223372036854775808'), ('i8 <= 7340054020096'),
  ('f4 > 100'), ('f4 = ''NaN'''), ('f4 < ''NaN'''), ('f4 >= ''NaN''::float8'),
  ('f8 < 0'), ('f8 = ''-Infinity'''), ('f8 > 1000.5'), ('f8 <= 2857.0'),
  ('d < ''1961-01-01'''), ('d = ''4713-01-01 BC'''), ('d >= ''2000-01-01'''),
  ('ts > ''1951-01-01'''), ('ts <= ''1950-03-01 00:00'''), ('ts = ''200000-12-31 23:59:59.999999'''),
  ('b IS NULL'), ('b IS NOT NULL'), ('tstz > ''2030-01-01 00:00+00'''),
  ('id BETWEEN 100 AND 200 AND f8 > 20'), ('id > 10 AND i2 < 5')) v(q)
WHERE (xpath('/row/c/text()', query_to_xml('SELECT count(*) AS c FROM fdw_t WHERE ' || q, false, true, '')))[1]::text
   <> (xpath('/row/c/text()', query_to_xml('SELECT count(*) AS c FROM fdw_src WHERE ' || q, false, true, '')))[1]::text;
CREATE FUNCTION filtered_rows(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF l ~ 'Rows Removed by Arrow Filter' THEN RETURN substring(l from '(\d+)')::bigint; END IF;
  END LOOP;
END $$;
SELECT filtered_rows('SELECT count(*) FROM fdw_t WHERE id BETWEEN 5000 AND 5099') AS removed_by_arrow_filter;
-- text equality is decided from the raw UTF-8 bytes too (deterministic
-- collation, UTF-8 database); the answers must be the heap's
SELECT filtered_rows('SELECT count(*) FROM fdw_t WHERE t = ''row 77''') AS removed_by_text_filter;
SELECT filtered_rows('SELECT count(*) FROM fdw_t WHERE v = ''v5''') AS removed_by_varchar_filter;
SELECT val, (SELECT count(*) FROM fdw_t WHERE t = val) AS arrow_t,
       (SELECT count(*) FROM fdw_src WHERE t = val) AS heap_t,
       (SELECT count(*) FROM fdw_t WHERE v = val) AS arrow_v,
       (SELECT count(*) FROM fdw_src WHERE v = val) AS heap_v
FROM unnest(ARRAY['row 77', '', 'v5', 'v999', 'no such value', NULL]) AS val;
DROP FUNCTION filtered_rows(text);

-- timestamptz against a timestamp depends on TimeZone: not used for skipping,
-- and answers match the heap's in any zone
SET TimeZone = 'Asia/Kolkata';
SELECT * FROM explain_lines('SELECT count(*) FROM fdw_t WHERE tstz > ''2040-01-01 03:00''::timestamp');
SELECT (SELECT count(*) FROM fdw_t WHERE tstz > '2040-01-01 03:00'::timestamp) =
       (SELECT count(*) FROM fdw_src WHERE tstz > '2040-01-01 03:00'::timestamp) AS same;
SELECT (SELECT count(*) FROM fdw_t WHERE tstz > '2040-01-01 03:00+00') =
       (SELECT count(*) FROM fdw_src WHERE tstz > '2040-01-01 03:00+00') AS same_tz;
RESET TimeZone;
-- a NULL parameter: a strict comparison is false everywhere, nothing is read
SET plan_cache_mode = force_generic_plan;
PREPARE qn(int) AS SELECT count(*) FROM fdw_t WHERE id = $1;
SELECT * FROM explain_lines('EXECUTE qn(NULL)');
EXECUTE qn(NULL);
SELECT * FROM explain_lines('EXECUTE qn(20000)');
EXECUTE qn(20000);
RESET plan_cache_mode;
CREATE FUNCTION bytes_read(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF l ~ 'Bytes Read' THEN RETURN substring(l from '(\d+)')::bigint; END IF;
  END LOOP;
END $$;
SELECT bytes_read('SELECT count(i2) FROM fdw_t') * 3 < bytes_read('SELECT count(t) FROM fdw_t') AS int2_reads_less_than_text,
       bytes_read('SELECT count(*) FROM fdw_t WHERE id > 100000') < 1000000 AS skipped_reads_little;
-- a prepared statement: the parameter is used for skipping
PREPARE q(int) AS SELECT count(*), sum(i8) FROM fdw_t WHERE id > $1;
EXECUTE q(15000);
SELECT count(*), sum(i8) FROM fdw_src WHERE id > 15000;

-- parallel scan
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
ALTER FOREIGN TABLE fdw_t OPTIONS (ADD parallel_workers '2');
EXPLAIN (COSTS OFF) SELECT count(*), sum(f8) FROM fdw_t WHERE id > 100;
SELECT count(*), sum(i2), sum(n), min(d), max(ts) FROM fdw_t WHERE id > 100;
SELECT count(*), sum(i2), sum(n), min(d), max(ts) FROM fdw_src WHERE id > 100;
RESET parallel_setup_cost; RESET parallel_tuple_cost; RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- ANALYZE: row estimate within 2x on a skewed column
ANALYZE fdw_t;
SELECT reltuples FROM pg_class WHERE relname = 'fdw_t';
CREATE FUNCTION est_rows(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN ' || q LOOP
    RETURN substring(l from 'rows=(\d+)')::bigint;
  END LOOP;
END $$;
SELECT est_rows('SELECT * FROM fdw_t WHERE v = ''v1''') BETWEEN 10 AND 40 AS eq_estimate_ok,
       est_rows('SELECT * FROM fdw_t WHERE b') BETWEEN 3333 AND 13334 AS bool_estimate_ok;
-- a skewed column: 70 % of k is 1, the rest distinct
CREATE TABLE skew_src AS
  SELECT i, CASE WHEN i % 10 < 7 THEN 1 ELSE i END AS k FROM generate_series(1, 30000) i;
\! pgwarp dump -d dbname=pg_warp_regress --quiet -t skew_src -o "$PGWARP_TEST_DIR/skew.arrow" --batch-rows 5000
DO $do$ BEGIN EXECUTE format($$CREATE FOREIGN TABLE skew_t (i int, k int) SERVER arrow_fdw OPTIONS (file %L)$$,
    current_setting('regress.dir') || '/skew.arrow'); END $do$;
ANALYZE skew_t;
SELECT q, est::float / act BETWEEN 0.5 AND 2 AS within_2x
FROM (VALUES ('k = 1'), ('k > 20000'), ('k < 100'), ('k <> 1')) v(q),
     LATERAL (SELECT est_rows('SELECT * FROM skew_t WHERE ' || q) AS est) e,
     LATERAL (SELECT (xpath('/row/c/text()', query_to_xml('SELECT count(*) AS c FROM skew_src WHERE ' || q, false, true, '')))[1]::text::int AS act) a;
-- the same in 300 batches: ANALYZE samples rows from 100 of them
\! pgwarp dump -d dbname=pg_warp_regress --quiet -t skew_src -o "$PGWARP_TEST_DIR/skew_many.arrow" --batch-rows 100
DO $do$ BEGIN EXECUTE format($$CREATE FOREIGN TABLE skew_many (i int, k int) SERVER arrow_fdw OPTIONS (file %L)$$,
    current_setting('regress.dir') || '/skew_many.arrow'); END $do$;
ANALYZE skew_many;
SELECT reltuples FROM pg_class WHERE relname = 'skew_many';
SELECT q, est::float / act BETWEEN 0.5 AND 2 AS within_2x
FROM (VALUES ('k = 1'), ('k > 20000'), ('k <> 1')) v(q),
     LATERAL (SELECT est_rows('SELECT * FROM skew_many WHERE ' || q) AS est) e,
     LATERAL (SELECT (xpath('/row/c/text()', query_to_xml('SELECT count(*) AS c FROM skew_src WHERE ' || q, false, true, '')))[1]::text::int AS act) a;
DROP FOREIGN TABLE skew_t, skew_many;
DROP TABLE skew_src;

-- IMPORT FOREIGN SCHEMA restores types from pg_type metadata
CREATE SCHEMA imp;
DO $do$ BEGIN EXECUTE format($$IMPORT FOREIGN SCHEMA fdw_imported FROM SERVER arrow_fdw INTO imp OPTIONS (file %L)$$,
              current_setting('regress.dir') || '/fdw_src.arrow'); END $do$;
SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
WHERE attrelid = 'imp.fdw_imported'::regclass AND attnum > 0 ORDER BY attnum;
SELECT count(*) AS differing FROM (
  SELECT id, n, v, u, ia, p::text FROM imp.fdw_imported
  EXCEPT ALL SELECT id, n, v, u, ia, p::text FROM fdw_src) x;

-- errors
CREATE FUNCTION try_sql(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || replace(SQLERRM, current_setting('regress.dir'), '$DIR');
END $$;
SELECT try_sql('CREATE FOREIGN TABLE e1 (a int) SERVER arrow_fdw');
SELECT try_sql('CREATE FOREIGN TABLE e2 (a int) SERVER arrow_fdw OPTIONS (file ''relative.arrow'')');
SELECT try_sql('CREATE FOREIGN TABLE e3 (a int) SERVER arrow_fdw OPTIONS (file ''/nonexistent/x.arrow'')');
SELECT try_sql('CREATE FOREIGN TABLE e4 (a int) SERVER arrow_fdw OPTIONS (file ''/x.arrow'', dir ''/tmp'')');
SELECT try_sql('CREATE FOREIGN TABLE e5 (a int) SERVER arrow_fdw OPTIONS (filename ''/x.arrow'')');
SELECT try_sql('CREATE FOREIGN TABLE e6 (a int) SERVER arrow_fdw OPTIONS (dir ''/tmp'', parallel_workers ''many'')');
\! pgwarp dump -d dbname=pg_warp_regress --quiet -c 'SELECT id, t FROM fdw_src LIMIT 10' -o "$PGWARP_TEST_DIR/other_schema.arrow"
SELECT try_sql(format('CREATE FOREIGN TABLE e7 (id int) SERVER arrow_fdw OPTIONS (files %L)',
    current_setting('regress.dir') || '/fdw_src.arrow,' || current_setting('regress.dir') || '/other_schema.arrow'));
-- a declared type that cannot hold the file's type
SELECT try_sql(format('CREATE FOREIGN TABLE e8 (i8 integer) SERVER arrow_fdw OPTIONS (file %L)',
    current_setting('regress.dir') || '/fdw_src.arrow'));

SELECT try_sql(format('CREATE FOREIGN TABLE e9 (nosuch integer) SERVER arrow_fdw OPTIONS (file %L)',
    current_setting('regress.dir') || '/fdw_src.arrow'));

-- ordinary roles may not name server files
CREATE ROLE regress_fdw_user;
GRANT USAGE ON FOREIGN SERVER arrow_fdw TO regress_fdw_user;
GRANT CREATE ON SCHEMA public TO regress_fdw_user;
SET ROLE regress_fdw_user;
SELECT try_sql(format('CREATE FOREIGN TABLE e10 (id int) SERVER arrow_fdw OPTIONS (file %L)',
    current_setting('regress.dir') || '/fdw_src.arrow'));
RESET ROLE;
REVOKE CREATE ON SCHEMA public FROM regress_fdw_user;
REVOKE USAGE ON FOREIGN SERVER arrow_fdw FROM regress_fdw_user;
DROP ROLE regress_fdw_user;

-- a file truncated after the table was created: a clean error
\! cp "$PGWARP_TEST_DIR/fdw_src.arrow" "$PGWARP_TEST_DIR/trunc.arrow"
DO $do$ BEGIN EXECUTE format($$CREATE FOREIGN TABLE fdw_trunc (id int, t text) SERVER arrow_fdw OPTIONS (file %L)$$,
              current_setting('regress.dir') || '/trunc.arrow'); END $do$;
SELECT count(*) FROM fdw_trunc;
\! truncate -s 100000 "$PGWARP_TEST_DIR/trunc.arrow"
SELECT try_sql('SELECT count(*) FROM fdw_trunc') ~ '^XX001: ' AS truncated_is_corrupt;

-- a file truncated in the middle of a scan: a clean error, not garbage
\! cp "$PGWARP_TEST_DIR/fdw_src.arrow" "$PGWARP_TEST_DIR/trunc2.arrow" && chmod 666 "$PGWARP_TEST_DIR/trunc2.arrow"
DO $do$ BEGIN EXECUTE format($$CREATE FOREIGN TABLE fdw_trunc2 (id int, t text) SERVER arrow_fdw OPTIONS (file %L)$$,
              current_setting('regress.dir') || '/trunc2.arrow'); END $do$;
CREATE FUNCTION truncate_at(i int, at int) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN
  IF i = at THEN
    EXECUTE format('COPY (SELECT 1) TO PROGRAM %L',
                   'truncate -s 200000 ' || current_setting('regress.dir') || '/trunc2.arrow');
  END IF;
  RETURN true;
END $$;
SELECT try_sql('SELECT count(*) FROM fdw_trunc2 WHERE truncate_at(id, 10)');

DROP SCHEMA imp CASCADE;
DROP FOREIGN TABLE fdw_t, fdw_trunc, fdw_trunc2;
DROP FUNCTION truncate_at(int, int);
DROP TABLE fdw_src;
DROP FUNCTION bytes_read(text), est_rows(text), try_sql(text);
DROP TYPE regress_pair;

-- writable tables: INSERT and COPY FROM are transactional
CREATE FUNCTION try_sql(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || replace(SQLERRM, current_setting('regress.dir'), '$DIR');
END $$;
\! rm -f "$PGWARP_TEST_DIR/wt.arrow" "$PGWARP_TEST_DIR/wt_bad.arrow"
CREATE TABLE wsrc (id bigint, name text, amount numeric(12,2), day date, at timestamptz, ok boolean);
DO $do$ BEGIN EXECUTE format($$CREATE FOREIGN TABLE wt (id bigint, name text, amount numeric(12,2),
    day date, at timestamptz, ok boolean) SERVER arrow_fdw OPTIONS (file %L, writable 'true')$$,
    current_setting('regress.dir') || '/wt.arrow'); END $do$;
SELECT length FROM pg_warp_arrow_committed WHERE path LIKE '%/wt.arrow';
SELECT count(*) FROM wt;
INSERT INTO wsrc SELECT i, 'n' || i, i * 0.01, date '2024-01-01' + i % 366,
    timestamptz '2024-01-01 00:00+00' + i * interval '1 minute', i % 2 = 0
  FROM generate_series(1, 3000) i;
INSERT INTO wt SELECT * FROM wsrc WHERE id <= 1000;
BEGIN;
INSERT INTO wt SELECT * FROM wsrc WHERE id > 1000;
SELECT count(*) FROM wt;
ROLLBACK;
SELECT count(*) FROM wt;
BEGIN;
INSERT INTO wt SELECT * FROM wsrc WHERE id BETWEEN 1001 AND 2000;
SAVEPOINT s;
INSERT INTO wt SELECT * FROM wsrc WHERE id > 2000;
ROLLBACK TO SAVEPOINT s;
SELECT count(*) FROM wt;
COMMIT;
-- an error in the middle of a statement leaves nothing behind
SELECT try_sql('INSERT INTO wt SELECT id, name, amount / (id - 2500), day, at, ok FROM wsrc WHERE id > 2000');
SELECT count(*) FROM wt;
COPY wt FROM PROGRAM 'printf "9001\tcopied\t1.50\t2024-02-29\t2024-02-29 12:00:00+00\tt\n9002\t\\\\N\t\\\\N\t\\\\N\t\\\\N\t\\\\N\n"';
INSERT INTO wsrc VALUES (9001, 'copied', 1.50, '2024-02-29', '2024-02-29 12:00:00+00', true),
                        (9002, NULL, NULL, NULL, NULL, NULL);
SELECT count(*) AS differing FROM (
  (SELECT * FROM wt EXCEPT ALL SELECT * FROM wsrc WHERE id <= 2000 OR id > 9000)
  UNION ALL
  (SELECT * FROM wsrc WHERE id <= 2000 OR id > 9000 EXCEPT ALL SELECT * FROM wt)) x;
SELECT * FROM explain_lines('SELECT count(*) FROM wt WHERE id > 9000');
-- only INSERT; not into read-only tables; values the file type cannot hold
SELECT try_sql('UPDATE wt SET id = 1');
SELECT try_sql('DELETE FROM wt');
DO $do$ BEGIN EXECUTE format($$CREATE FOREIGN TABLE wt_ro (id bigint) SERVER arrow_fdw OPTIONS (file %L)$$,
    current_setting('regress.dir') || '/wt.arrow'); END $do$;
SELECT try_sql('INSERT INTO wt_ro VALUES (1)');
SELECT try_sql('INSERT INTO wt (id, day) VALUES (1, ''infinity'')');
SELECT count(*) FROM wt;
DO $do$ BEGIN EXECUTE format($$CREATE FOREIGN TABLE wt_bad (n numeric) SERVER arrow_fdw OPTIONS (file %L, writable 'true')$$,
    current_setting('regress.dir') || '/wt_bad.arrow'); END $do$;
SELECT try_sql('INSERT INTO wt_bad VALUES (1)');
-- ordinary roles may not create writable tables even with read rights
CREATE ROLE regress_reader IN ROLE pg_read_server_files;
GRANT USAGE ON FOREIGN SERVER arrow_fdw TO regress_reader;
GRANT CREATE ON SCHEMA public TO regress_reader;
SET ROLE regress_reader;
SELECT try_sql(format('CREATE FOREIGN TABLE wt_x (id bigint) SERVER arrow_fdw OPTIONS (file %L, writable ''true'')',
    current_setting('regress.dir') || '/wt_x.arrow'));
RESET ROLE;
REVOKE CREATE ON SCHEMA public FROM regress_reader;
REVOKE USAGE ON FOREIGN SERVER arrow_fdw FROM regress_reader;
DROP ROLE regress_reader;
DROP FOREIGN TABLE wt, wt_ro, wt_bad;
SELECT count(*) AS rows_left FROM pg_warp_arrow_committed;
DROP TABLE wsrc;
DROP FUNCTION try_sql(text);
DROP FUNCTION explain_lines(text);
DROP EXTENSION pg_warp;
