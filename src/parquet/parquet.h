/*
 * parquet.h — pg_warp's Apache Parquet reader.
 *
 * Pure C11; must not include PostgreSQL headers.  A Parquet file is read
 * through the Arrow reader's ArrowFile (src/arrow/arrow.h): arrow_open()
 * recognises the "PAR1" magic and calls parquet_open(), which decodes the
 * Thrift footer and presents the Parquet schema as an Arrow schema and each
 * row group as a record batch.  arrow_read_batch_meta() and
 * arrow_load_column() then call the functions below, which decode a row
 * group's column chunks (every page, decompressed, levels and values
 * decoded) into ordinary Arrow arrays in the caller's arena, so every
 * consumer of ArrowFile (the FDW, the CPU engine, the daemon, the tool)
 * reads Parquet unchanged.  Row-group statistics become the per-batch
 * statistics of arrow_field_stats().  A row group with a page index
 * (OffsetIndex for every column) is presented as several batches, each a
 * range of its rows that starts at page boundaries (pq_pageindex.c), so
 * that the ColumnIndex's page min/max skip parts of it.
 *
 * Every length, count and offset read from the file is checked before use;
 * errors are ARROW_ERR_CORRUPT (or UNSUPPORTED for valid Parquet we do not
 * read) with a message naming the file, the column and the file offset.
 */
#ifndef PGWARP_PARQUET_H
#define PGWARP_PARQUET_H

#include "arrow.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "PAR1" */
#define PARQUET_MAGIC_LEN 4
extern const uint8_t parquet_magic[PARQUET_MAGIC_LEN];

/* Open file->src (already set, with its arena) as a Parquet file: fills
 * file->schema (laid out), n_batches, batches, data_end, footer_len and
 * file->parquet. */
int			parquet_open(ArrowFile *file, const ArrowOpenOptions *opts, ArrowError *err);

/* Row group `batch` as a record batch header: length, one node per field
 * (top-level lengths; null counts from statistics or -1), buffers naming
 * each field's column chunk (for caches keyed by position), codec
 * ARROW_CODEC_PARQUET. */
int			parquet_batch_meta(ArrowFile *file, int batch, ArrowArena *arena,
							   ArrowBatchMeta *meta, ArrowError *err);

/* Decode top-level column col of row group batch. */
int			parquet_load_column(ArrowFile *file, int batch, int col, ArrowArena *arena,
								ArrowArray *out, ArrowError *err);

/* Per-row-group min/max of column col (see arrow_field_stats). */
bool		parquet_field_stats(const ArrowFile *file, int col, ArrowArena *arena,
								ArrowStatValue **mins, ArrowStatValue **maxs);

/* arrow_batch_may_contain_int/bytes (pq_bloom.c): is_int selects v, else
 * the bytes; 1 maybe, 0 no, -1 error */
int			parquet_may_contain(ArrowFile *file, int batch, int col, bool is_int, __int128 v,
								const void *bytes, size_t len, ArrowError *err);

/* row groups of the file (its batches are row groups or their parts) */
int			parquet_row_groups(const ArrowFile *file);

/* "snappy", "zstd", ... of the first column chunk of the file (for
 * descriptions); "none" when uncompressed or empty. */
const char *parquet_file_codec(const ArrowFile *file);

#ifdef __cplusplus
}
#endif

#endif							/* PGWARP_PARQUET_H */
