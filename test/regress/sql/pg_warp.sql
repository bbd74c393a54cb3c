--
-- pg_warp: extension, GUCs, and reading Arrow metadata on the server.
-- Files are written by `pgwarp dump` (PATH set by the harness) into
-- $PGWARP_TEST_DIR; paths in messages are masked as $DIR.
--
CREATE EXTENSION pg_warp;
SHOW pg_warp.enabled;
SHOW pg_warp.mode;
SET pg_warp.mode = 'cpu';
SHOW pg_warp.mode;
SET pg_warp.mode = 'bogus';
SET pg_warp.no_such_setting = 1;
RESET pg_warp.mode;

\getenv dir PGWARP_TEST_DIR
SELECT set_config('regress.dir', :'dir', false) IS NOT NULL AS dir_set;

-- a table with one column of each mapped type, dumped to Arrow
CREATE TABLE regress_types (
    b boolean, i2 smallint, i4 integer, i8 bigint, f4 real, f8 float8,
    n numeric(12,2), t text, v varchar(10), by bytea, d date, tm time,
    ts timestamp, tstz timestamptz, iv interval, u uuid, ia integer[]);
INSERT INTO regress_types
SELECT i % 2 = 0, i, i * 1000, i::int8 << 40, i / 3.0, i / 7.0,
       i * 1.25, 'row ' || i, 'v' || i, decode(md5(i::text), 'hex'),
       date '2000-01-01' + i, time '12:00' + i * interval '1 minute',
       timestamp '2020-02-29 10:00' + i * interval '1 hour',
       timestamptz '2020-02-29 10:00+00' + i * interval '1 day',
       make_interval(months => i, days => i, secs => i / 10.0),
       md5(i::text)::uuid, ARRAY[i, NULL, -i]
FROM generate_series(1, 2500) i;
INSERT INTO regress_types DEFAULT VALUES;   -- a row of NULLs

\! pgwarp dump -d dbname=pg_warp_regress --quiet -t regress_types -o "$PGWARP_TEST_DIR/regress_types.arrow" --batch-rows 1000

SELECT column_no, name, arrow_type, nullable, pg_type, pg_type_metadata
FROM pg_warp_arrow_schema(current_setting('regress.dir') || '/regress_types.arrow');

SELECT batch, rows, compression, body_bytes > 0 AS has_body
FROM pg_warp_arrow_batches(current_setting('regress.dir') || '/regress_types.arrow');

-- compressed
\! pgwarp dump -d dbname=pg_warp_regress --quiet -c 'SELECT i4, t FROM regress_types' -o "$PGWARP_TEST_DIR/regress_zstd.arrow" --compress zstd
SELECT count(*) AS batches, sum(rows) AS rows, min(compression) AS compression
FROM pg_warp_arrow_batches(current_setting('regress.dir') || '/regress_zstd.arrow');

-- errors: missing file, not an Arrow file, truncated file
CREATE FUNCTION regress_try(f text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    PERFORM * FROM pg_warp_arrow_batches(f);
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || replace(SQLERRM, current_setting('regress.dir'), '$DIR');
END $$;
SELECT regress_try(current_setting('regress.dir') || '/no_such_file.arrow');
\! printf 'this is not an arrow file, just some text\n' > "$PGWARP_TEST_DIR/not_arrow.arrow"
SELECT regress_try(current_setting('regress.dir') || '/not_arrow.arrow');
\! head -c 3000 "$PGWARP_TEST_DIR/regress_types.arrow" > "$PGWARP_TEST_DIR/truncated.arrow"
SELECT regress_try(current_setting('regress.dir') || '/truncated.arrow') LIKE 'XX001: %$DIR/truncated.arrow%' AS truncated_is_corrupt;
\! : > "$PGWARP_TEST_DIR/empty.arrow"
SELECT regress_try(current_setting('regress.dir') || '/empty.arrow') LIKE 'XX001: %$DIR/empty.arrow%' AS empty_is_corrupt;

-- privileges: ordinary roles may not read server files
CREATE ROLE regress_warp_user;
SET ROLE regress_warp_user;
SELECT count(*) FROM pg_warp_arrow_batches(current_setting('regress.dir') || '/regress_types.arrow');
RESET ROLE;
GRANT pg_read_server_files TO regress_warp_user;
SET ROLE regress_warp_user;
SELECT count(*) FROM pg_warp_arrow_batches(current_setting('regress.dir') || '/regress_types.arrow');
RESET ROLE;
REVOKE pg_read_server_files FROM regress_warp_user;
DROP ROLE regress_warp_user;

DROP FUNCTION regress_try(text);
DROP TABLE regress_types;
DROP EXTENSION pg_warp;
