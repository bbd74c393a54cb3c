/*
 * arrow.h — pg_warp's Apache Arrow IPC library (reader and writer).
 *
 * Pure C11; must not include PostgreSQL headers.  Shared by the extension,
 * the pgwarp tool and the GPU daemon.
 *
 * Reading model
 *   An ArrowSource is a byte range: a file read with pread(), or memory the
 *   caller mapped.  arrow_open() parses the footer (file format) or indexes
 *   the messages (stream format) and decodes the schema.  For each record
 *   batch, arrow_read_batch_meta() decodes the message header: field nodes and
 *   the absolute position of every buffer, so a caller can move only the
 *   column buffers it needs (the FDW preads them, the daemon DMAs them).
 *   arrow_load_column() materialises one top-level column as a validated
 *   ArrowArray tree: buffers are used in place when the source is mapped,
 *   otherwise read into arena memory; compressed buffers are decompressed.
 *   Every offset, length, count and nesting depth is checked before use;
 *   offsets of variable-length arrays and dictionary indices are checked
 *   against their targets, so value accessors below never read out of bounds.
 *
 * Writing model
 *   ArrowWriter writes the IPC file format: schema, dictionary batches,
 *   record batches, footer.  Values go in through column builders (row by
 *   row, as pgwarp dump and INSERT produce them) or by appending ranges of
 *   ArrowArrays (copying a file).  A batch is flushed when it reaches
 *   batch_rows rows, or when a fixed-width buffer would exceed
 *   max_buffer_bytes.  Per-batch min/max statistics are kept for orderable
 *   columns and written as field custom metadata min_values / max_values in
 *   the footer's schema (see docs/arrow_fdw.md, "Per-batch statistics").
 *
 *   Append: a file is opened for append after its last complete footer; new
 *   batches go after the old trailer and a new footer is written at close, so
 *   the old prefix [0, old_length) stays a complete, readable Arrow file until
 *   the new footer lands.  arrow_find_last_footer() finds that prefix after an
 *   interrupted append, and the next append cuts the partial tail off.
 *
 * Errors: functions return 0 on success, -1 on failure with *err filled.
 * Messages name the source and the offset they concern.
 */
#ifndef PGWARP_ARROW_H
#define PGWARP_ARROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- errors */

typedef enum ArrowErrorCode
{
	ARROW_OK = 0,
	ARROW_ERR_IO,				/* read/write/fstat failed; errno_saved set */
	ARROW_ERR_CORRUPT,			/* malformed file: bad magic, bad flatbuffer,
								 * out-of-range offset, ... */
	ARROW_ERR_UNSUPPORTED,		/* valid Arrow we do not handle (Union,
								 * big-endian, Decimal256, ...) */
	ARROW_ERR_NOMEM,			/* allocation failed or exceeds a limit */
	ARROW_ERR_INVALID,			/* caller error: bad argument, value that the
								 * target type cannot hold */
	ARROW_ERR_INCOMPLETE		/* no footer at the end: truncated file or an
								 * interrupted append (see
								 * arrow_find_last_footer) */
} ArrowErrorCode;

typedef struct ArrowError
{
	ArrowErrorCode code;
	int			errno_saved;	/* for ARROW_ERR_IO */
	int64_t		offset;			/* file offset concerned, or -1 */
	char		msg[1024];		/* "FILE: what is wrong at offset N" */
} ArrowError;

/* Fill *err (printf-style) and return -1. */
int			arrow_error(ArrowError *err, ArrowErrorCode code, int64_t offset,
						const char *fmt,...) __attribute__((format(printf, 4, 5)));

/* ------------------------------------------------------------ allocation */

/*
 * All memory comes from arenas.  An arena allocates through an ArrowAllocator
 * (malloc by default; the extension passes one that uses palloc_extended in a
 * memory context) and is freed in one call.  Allocation requests above
 * ArrowAllocator.max_alloc fail with ARROW_ERR_NOMEM instead of trying.
 */
typedef struct ArrowAllocator
{
	void	   *(*alloc) (void *ctx, size_t size);	/* NULL on failure */
	void		(*free) (void *ctx, void *ptr);
	void	   *ctx;
	size_t		max_alloc;		/* 0 = no limit beyond the allocator's */
} ArrowAllocator;

extern const ArrowAllocator arrow_malloc_allocator;

typedef struct ArrowArenaChunk ArrowArenaChunk;
typedef struct ArrowArena
{
	const ArrowAllocator *allocator;
	ArrowArenaChunk *chunks;
	size_t		total;			/* bytes allocated so far */
} ArrowArena;

/*
 * A recycling allocator for arenas that are freed and refilled with
 * buffers of about the same sizes (batch after batch, part after part):
 * a freed block is kept and handed out again to a request it fits (and is
 * at most twice as big as), so the buffers' pages are not faulted in and
 * zeroed by the kernel again each time.  Blocks come from `base`; the
 * memory held is one working set.  arrow_recycler_release gives every block
 * back to base (not needed when base's memory goes away by itself).
 */
typedef struct ArrowRecycler
{
	ArrowAllocator alloc;		/* give this to arrow_arena_init */
	const ArrowAllocator *base;
	void	   *free_blocks;
	void	   *all_blocks;
} ArrowRecycler;

void		arrow_recycler_init(ArrowRecycler *r, const ArrowAllocator *base);
void		arrow_recycler_release(ArrowRecycler *r);

void		arrow_arena_init(ArrowArena *arena, const ArrowAllocator *allocator);
/* 64-byte aligned, zero-filled; NULL (and err set) on failure */
void	   *arrow_arena_alloc(ArrowArena *arena, size_t size, ArrowError *err);
/* the same without zeroing, for buffers the caller fills entirely */
void	   *arrow_arena_alloc_uninit(ArrowArena *arena, size_t size, ArrowError *err);
char	   *arrow_arena_strdup(ArrowArena *arena, const char *s, ArrowError *err);
void		arrow_arena_free_all(ArrowArena *arena);

/* ------------------------------------------------------------------ types */

/* Values of the Type union in Arrow's Schema.fbs. */
typedef enum ArrowTypeId
{
	ARROW_TYPE_NONE = 0,
	ARROW_TYPE_NULL = 1,
	ARROW_TYPE_INT = 2,
	ARROW_TYPE_FLOAT = 3,
	ARROW_TYPE_BINARY = 4,
	ARROW_TYPE_UTF8 = 5,
	ARROW_TYPE_BOOL = 6,
	ARROW_TYPE_DECIMAL = 7,
	ARROW_TYPE_DATE = 8,
	ARROW_TYPE_TIME = 9,
	ARROW_TYPE_TIMESTAMP = 10,
	ARROW_TYPE_INTERVAL = 11,
	ARROW_TYPE_LIST = 12,
	ARROW_TYPE_STRUCT = 13,
	ARROW_TYPE_UNION = 14,
	ARROW_TYPE_FIXED_SIZE_BINARY = 15,
	ARROW_TYPE_FIXED_SIZE_LIST = 16,
	ARROW_TYPE_MAP = 17,
	ARROW_TYPE_DURATION = 18,
	ARROW_TYPE_LARGE_BINARY = 19,
	ARROW_TYPE_LARGE_UTF8 = 20,
	ARROW_TYPE_LARGE_LIST = 21,
	ARROW_TYPE_RUN_END_ENCODED = 22,
	ARROW_TYPE_BINARY_VIEW = 23,
	ARROW_TYPE_UTF8_VIEW = 24,
	ARROW_TYPE_LIST_VIEW = 25,
	ARROW_TYPE_LARGE_LIST_VIEW = 26
} ArrowTypeId;

typedef enum ArrowPrecision
{
	ARROW_PRECISION_HALF = 0,
	ARROW_PRECISION_SINGLE = 1,
	ARROW_PRECISION_DOUBLE = 2
} ArrowPrecision;

typedef enum ArrowDateUnit
{
	ARROW_DATE_DAY = 0,
	ARROW_DATE_MILLISECOND = 1
} ArrowDateUnit;

typedef enum ArrowTimeUnit
{
	ARROW_TIME_SECOND = 0,
	ARROW_TIME_MILLISECOND = 1,
	ARROW_TIME_MICROSECOND = 2,
	ARROW_TIME_NANOSECOND = 3
} ArrowTimeUnit;

typedef enum ArrowIntervalUnit
{
	ARROW_INTERVAL_YEAR_MONTH = 0,	/* int32 months */
	ARROW_INTERVAL_DAY_TIME = 1,	/* int32 days, int32 milliseconds */
	ARROW_INTERVAL_MONTH_DAY_NANO = 2	/* int32 months, int32 days, int64 ns */
} ArrowIntervalUnit;

typedef struct ArrowType
{
	ArrowTypeId id;
	int			bit_width;		/* Int: 8/16/32/64; Decimal: 128 (256 is
								 * UNSUPPORTED); Time: 32/64 */
	bool		is_signed;		/* Int */
	ArrowPrecision precision;	/* Float */
	int32_t		dec_precision;	/* Decimal */
	int32_t		dec_scale;		/* Decimal */
	int			unit;			/* Date/Time/Timestamp/Duration/Interval unit
								 * enum value */
	char	   *timezone;		/* Timestamp: NULL = without zone */
	int32_t		fixed_size;		/* FixedSizeBinary byteWidth, FixedSizeList
								 * listSize */
	bool		keys_sorted;	/* Map */
	/*
	 * Utf8View/BinaryView in the file: the schema shows LargeUtf8/LargeBinary
	 * and loading materializes the views as such arrays (offsets and data),
	 * so every reader of strings works unchanged.  In a record batch the
	 * field has two buffers (validity, views) plus its variadic data buffers
	 * (ArrowBatchMeta.variadic).
	 */
	bool		view;
	/*
	 * ListView/LargeListView in the file: the schema shows List/LargeList
	 * and loading turns the views (offsets and sizes, three buffers with the
	 * validity) into list offsets (arrow_array_listview.c).
	 */
	bool		list_view;
} ArrowType;

typedef struct ArrowKeyValue
{
	char	   *key;
	char	   *value;
} ArrowKeyValue;

typedef struct ArrowDictEncoding
{
	int64_t		id;
	ArrowType	index_type;		/* an Int type; signed int32 if absent */
	bool		ordered;
} ArrowDictEncoding;

typedef struct ArrowField
{
	char	   *name;			/* never NULL ("" if absent) */
	bool		nullable;
	ArrowType	type;			/* for dictionary fields: the VALUE type */
	bool		has_dict;
	ArrowDictEncoding dict;
	int			n_children;
	struct ArrowField *children;
	int			n_metadata;
	ArrowKeyValue *metadata;

	/*
	 * Layout, computed by arrow_schema_layout(): this field's position in a
	 * record batch's pre-order lists of field nodes and buffers, and how many
	 * buffers the field itself owns (children not counted): Null 0; Struct,
	 * FixedSizeList 1; Bool, Int, Float, Decimal, Date, Time, Timestamp,
	 * Interval, Duration, FixedSizeBinary, and every dictionary-encoded field
	 * 2; Utf8, Binary and their Large variants 3; List, LargeList, Map 2.
	 * A dictionary-encoded field counts 1 node and 2 buffers (validity,
	 * indices) in record batches; its children describe the dictionary's
	 * values and carry positions within a dictionary batch, whose single
	 * column is the value field at node 0, buffer 0.
	 */
	int			node_index;
	int			buffer_index;
	int			n_buffers;
	int			n_nodes_total;	/* nodes of this field and all descendants */
	int			n_buffers_total;	/* buffers of this field and descendants */
} ArrowField;

#define ARROW_MAX_NESTING 64	/* deeper field trees are rejected */

typedef struct ArrowSchema
{
	int			n_fields;
	ArrowField *fields;
	int			n_metadata;
	ArrowKeyValue *metadata;
	int			n_nodes;		/* field nodes per record batch */
	int			n_buffers;		/* buffers per record batch (besides view
								 * fields' variadic ones) */
	int			n_view_fields;	/* fields read from Utf8View/BinaryView */
} ArrowSchema;

/* Computes node/buffer indices of every field; checks nesting depth and
 * that every type is supported (UNSUPPORTED error names the column). */
int			arrow_schema_layout(ArrowSchema *schema, ArrowError *err);

/* Look up custom metadata; NULL if absent. */
const char *arrow_field_metadata(const ArrowField *field, const char *key);

/* Human-readable type, e.g. "int32", "timestamp[us, tz=UTC]",
 * "list<item: utf8>", "dictionary<values=utf8, indices=int8>".  Returns buf. */
char	   *arrow_type_string(const ArrowField *field, char *buf, size_t len);

/* NULL if a and b have the same column names and types (nullability and
 * metadata aside), else a description of the first difference, in buf. */
const char *arrow_schema_diff(const ArrowSchema *a, const ArrowSchema *b,
							  char *buf, size_t len);

/* Deep copy of a schema into an arena. */
int			arrow_schema_copy(ArrowArena *arena, ArrowSchema *dst,
							  const ArrowSchema *src, ArrowError *err);

/* Byte width of one value of a fixed-width type (Int, Float, Decimal, Date,
 * Time, Timestamp, Interval, Duration, FixedSizeBinary); 0 for Bool
 * (bit-packed) and for variable-width or nested types. */
int			arrow_type_byte_width(const ArrowType *type);

/* Whether s[0..len) is well-formed UTF-8 (no overlong forms, surrogates or
 * code points past U+10FFFF).  Field names must be: they become column
 * names in a database's catalog. */
bool		arrow_utf8_valid(const char *s, size_t len);

/* ----------------------------------------------------------------- source */

typedef struct ArrowSource
{
	const char *name;			/* for error messages (usually the path) */
	uint64_t	size;			/* readable length: file size, or a committed
								 * length smaller than it */
	const uint8_t *map;			/* the whole range [0,size) in memory, or NULL */
	/* with map: bytes taken from it are added here (atomically) as the
	 * same loads through read would have read them, or NULL */
	uint64_t   *map_count;
	/* read exactly len bytes at offset; return 0, or an errno value (EIO for
	 * a short read) */
	int			(*read) (void *ctx, void *dst, size_t len, uint64_t offset);
	void	   *ctx;
} ArrowSource;

/* A source over an open file descriptor (pread); size from fstat unless
 * size_limit >= 0, in which case min(fstat size, size_limit). */
int			arrow_source_fd(ArrowSource *src, int fd, const char *name,
							int64_t size_limit, ArrowError *err);
/* A source over memory the caller owns. */
void		arrow_source_mem(ArrowSource *src, const void *data, size_t len,
							 const char *name);

/* ------------------------------------------------------------- the file */

typedef enum ArrowFormat
{
	ARROW_FORMAT_FILE = 1,		/* "ARROW1" magic, footer */
	ARROW_FORMAT_STREAM = 2,	/* bare sequence of encapsulated messages */
	ARROW_FORMAT_PARQUET = 3	/* "PAR1": an Apache Parquet file, read
								 * through src/parquet (row groups are the
								 * record batches) */
} ArrowFormat;

typedef enum ArrowCodec
{
	ARROW_CODEC_NONE = -1,
	ARROW_CODEC_LZ4_FRAME = 0,
	ARROW_CODEC_ZSTD = 1,
	ARROW_CODEC_PARQUET = 2		/* a Parquet row group: columns are decoded
								 * by the Parquet reader (never range-loaded) */
} ArrowCodec;

/* Position of one encapsulated message (as in the footer's Block). */
typedef struct ArrowBlock
{
	int64_t		offset;			/* of the message (continuation marker) */
	int32_t		meta_len;		/* bytes of marker+length+flatbuffer+padding */
	int64_t		body_len;
} ArrowBlock;

typedef struct ArrowFile
{
	ArrowSource src;
	ArrowFormat format;
	ArrowArena	arena;			/* schema, block lists, dictionaries */
	ArrowSchema schema;
	int			n_batches;
	ArrowBlock *batches;
	int			n_dicts;
	ArrowBlock *dicts;
	/*
	 * Stream format: batch_dict_limit[i] = number of entries of dicts[] that
	 * precede batch i in the stream (dictionary state for batch i).  File
	 * format: NULL (every dictionary, deltas included, applies to every batch).
	 */
	int		   *batch_dict_limit;
	int64_t		data_end;		/* file: offset of the footer; stream: end of
								 * last message */
	int64_t		footer_len;		/* file format */
	/* dictionaries decoded so far; managed by arrow_load_column */
	void	   *dict_cache;
	/* ARROW_FORMAT_PARQUET: the decoded footer (src/parquet), else NULL */
	struct PqFile *parquet;
} ArrowFile;

typedef struct ArrowOpenOptions
{
	const ArrowAllocator *allocator;	/* NULL = arrow_malloc_allocator */
	/* file format without a trailer at EOF: find the last complete footer
	 * (arrow_find_last_footer) instead of failing with INCOMPLETE */
	bool		recover_tail;
	/* Parquet: rows per part of a row group cut by its page index (0: the
	 * default, about 64Ki; small values serve tests and fuzzing) */
	int64_t		parquet_part_rows;
} ArrowOpenOptions;

/* Detects the format from the first bytes.  On failure, nothing to close. */
int			arrow_open(ArrowFile *file, const ArrowSource *src,
					   const ArrowOpenOptions *opts, ArrowError *err);
void		arrow_close(ArrowFile *file);

/*
 * For a file format source whose last bytes are not a valid trailer: find
 * the largest L such that [0, L) ends with a trailer whose footer decodes and
 * whose blocks all lie below it.  *length = L, or -1 with INCOMPLETE/CORRUPT
 * if none.  If the source ends with a valid trailer, *length = size.
 */
int			arrow_find_last_footer(const ArrowSource *src, int64_t *length,
								   ArrowError *err);

/* ---------------------------------------------------------------- batches */

typedef struct ArrowFieldNode
{
	int64_t		length;
	int64_t		null_count;
} ArrowFieldNode;

typedef struct ArrowBufferRef
{
	int64_t		offset;			/* ABSOLUTE file offset (body start + relative) */
	int64_t		length;			/* bytes in the file (compressed size, incl.
								 * the 8-byte length prefix, if compressed) */
} ArrowBufferRef;

typedef struct ArrowBatchMeta
{
	int64_t		length;			/* rows */
	int			n_nodes;
	ArrowFieldNode *nodes;		/* n_nodes == schema.n_nodes (checked) */
	int			n_buffers;
	ArrowBufferRef *buffers;	/* n_buffers == schema.n_buffers (checked);
								 * all within [body_offset, body_offset +
								 * body_len) (checked) */
	ArrowCodec	codec;
	int64_t		body_offset;	/* absolute */
	int64_t		body_len;
	/* set when decoding a dictionary batch message */
	int64_t		dict_id;
	bool		is_delta;
	/*
	 * View fields' data buffers (the message's variadic buffers), taken out
	 * of buffers[] so that every field keeps its schema position there:
	 * those of the field at node n are variadic[var_first[n] ..
	 * var_first[n] + var_count[n]) (arrays by node index; NULL without view
	 * fields).
	 */
	int			n_variadic;
	ArrowBufferRef *variadic;
	int		   *var_first;
	int		   *var_count;
	/* the message's variadicBufferCounts, one per view field in pre-order */
	int			n_var_counts;
	int64_t    *var_counts;
} ArrowBatchMeta;

/* Decode record batch i's message header (not its body).  Memory from
 * arena (the caller's, typically freed per batch). */
int			arrow_read_batch_meta(ArrowFile *file, int batch, ArrowArena *arena,
								  ArrowBatchMeta *meta, ArrowError *err);

/* ----------------------------------------------------------------- arrays */

/*
 * A loaded, validated column (or child) of one record batch.  Buffers:
 *   validity  bitmap, LSB first; NULL when null_count == 0
 *   values    fixed-width values, bit-packed Bool, or dictionary indices
 *   offsets   int32 (Utf8, Binary, List, Map) or int64 (Large*) offsets,
 *             length+1 entries, monotonic, within data/child (checked)
 *   data      bytes of Utf8/Binary
 * `offset` is always 0 for arrays we load (Arrow IPC has no array offset);
 * arrays sliced by arrow_array_slice() carry one.
 * children: List/LargeList/FixedSizeList/Map 1 (Map: a Struct of key,value),
 * Struct n.  dictionary: the dictionary values for dictionary-encoded fields
 * (indices checked < dictionary->length).
 */
typedef struct ArrowArray
{
	const ArrowField *field;
	int64_t		length;
	int64_t		null_count;
	int64_t		offset;
	const uint8_t *validity;
	const uint8_t *values;
	const uint8_t *offsets;
	const uint8_t *data;
	int64_t		values_len;		/* bytes available at values */
	int64_t		data_len;		/* bytes available at data */
	int			n_children;
	struct ArrowArray *children;
	struct ArrowArray *dictionary;
} ArrowArray;

/* Load top-level column `col` of the batch described by meta (which came
 * from arrow_read_batch_meta(file, batch, ...)).  Memory from arena. */
int			arrow_load_column(ArrowFile *file, int batch,
							  const ArrowBatchMeta *meta, int col,
							  ArrowArena *arena, ArrowArray *out,
							  ArrowError *err);

/*
 * Rows [row_off, row_off + row_len) of top-level column `col` of an
 * uncompressed batch, reading only those bytes (a morsel of a big batch):
 * the result is an array of row_len rows whose row 0 is batch row row_off.
 * row_off must be a multiple of 8 (bitmaps are then byte-aligned).  The
 * buffers are checked against the whole batch's lengths, as
 * arrow_load_column checks them, and dictionary indices within the range
 * against the dictionary.  Only columns arrow_column_range_loadable()
 * accepts: ARROW_ERR_UNSUPPORTED otherwise.
 */
int			arrow_load_column_range(ArrowFile *file, int batch,
									const ArrowBatchMeta *meta, int col,
									int64_t row_off, int64_t row_len,
									ArrowArena *arena, ArrowArray *out,
									ArrowError *err);

/* Whether column col of this batch can be loaded by range: the batch is
 * not compressed and the column is a fixed-width primitive, a boolean or a
 * dictionary of any value type (the dictionary is loaded whole). */
bool		arrow_column_range_loadable(const ArrowFile *file,
										const ArrowBatchMeta *meta, int col);

/*
 * Cutting big batches into parts (morsels) of rows for scans: a batch is
 * cut into `parts` parts only if its body has at least ARROW_PART_MIN_BODY
 * bytes (decided from the footer, so the other parts of a small batch are
 * known empty without its metadata), it has more than ARROW_PART_MIN_ROWS
 * rows and every column read is range-loadable; parts are multiples of 64
 * rows and at least ARROW_PART_MIN_ROWS long, so a batch may have fewer
 * non-empty parts.  A batch not cut is read whole by its part 0.
 */
#define ARROW_PART_MIN_ROWS 16384
#define ARROW_PART_MIN_BODY (1024 * 1024)

/*
 * Whether a batch's null counts (its metadata, read) show that no row can
 * pass `field IS NULL` (is_null true) or `field IS NOT NULL` (false).  The
 * Null type has no validity buffer: every value is null.  A reader treats
 * a null count of 0 as "no nulls", so this agrees with the values.
 */
bool		arrow_batch_excludes_nulltest(const ArrowFile *file, const ArrowBatchMeta *meta,
										  int field, bool is_null);

/* Whether part `part` of batch can have rows at all (from the footer). */
bool		arrow_part_may_have_rows(const ArrowFile *file, int batch, int part);

/*
 * The rows of part `part` of `parts` of a batch whose metadata is read:
 * [*first, *first + *nrows), and *split = whether the batch is cut (false:
 * load it whole).  fields: the nfields columns read (negative ones are
 * ignored).  False when this part has no rows.
 */
bool		arrow_batch_part(const ArrowFile *file, int batch, const ArrowBatchMeta *meta,
							 const int *fields, int nfields, int part, int parts,
							 int64_t *first, int64_t *nrows, bool *split);

/* Convenience: meta + all columns of batch i.  cols has schema.n_fields
 * entries allocated from arena. */
typedef struct ArrowRecordBatch
{
	int64_t		length;
	int			n_columns;
	ArrowArray *columns;
	ArrowBatchMeta meta;
} ArrowRecordBatch;

int			arrow_load_batch(ArrowFile *file, int batch, ArrowArena *arena,
							 ArrowRecordBatch *out, ArrowError *err);

/* Value access (no checks beyond those done at load time). */
static inline bool
arrow_is_null(const ArrowArray *a, int64_t i)
{
	int64_t		j;

	if (a->field && a->field->type.id == ARROW_TYPE_NULL)
		return true;
	if (a->validity == NULL)
		return false;
	j = a->offset + i;
	return ((a->validity[j >> 3] >> (j & 7)) & 1) == 0;
}

static inline bool
arrow_get_bit(const uint8_t *bits, int64_t i)
{
	return (bits[i >> 3] >> (i & 7)) & 1;
}

/* Offsets of value i of a Utf8/Binary/List (32- or 64-bit as the type is). */
static inline int64_t
arrow_offset_at(const ArrowArray *a, int64_t i)
{
	const ArrowTypeId t = a->field->type.id;

	if (t == ARROW_TYPE_LARGE_UTF8 || t == ARROW_TYPE_LARGE_BINARY ||
		t == ARROW_TYPE_LARGE_LIST)
		return ((const int64_t *) a->offsets)[a->offset + i];
	return ((const int32_t *) a->offsets)[a->offset + i];
}

/* Integer value (Int of any width/sign except uint64 above INT64_MAX —
 * use arrow_get_uint64 for those; Date32, Time, Timestamp, Duration; and
 * dictionary indices). */
int64_t		arrow_get_int(const ArrowArray *a, int64_t i);
uint64_t	arrow_get_uint64(const ArrowArray *a, int64_t i);
/* Float16/32/64 widened to double */
double		arrow_get_double(const ArrowArray *a, int64_t i);
/* Index into a->dictionary for a dictionary-encoded array */
int64_t		arrow_get_dict_index(const ArrowArray *a, int64_t i);
/* Pointer and length of Utf8/Binary/FixedSizeBinary/Decimal value bytes */
const uint8_t *arrow_get_bytes(const ArrowArray *a, int64_t i, int64_t *len);

/* A view of rows [start, start+len) of an array (shares buffers; its
 * null_count is recounted).  Children are not sliced: as in Arrow, row i of
 * a sliced Struct is row offset+i of its children, and a sliced
 * FixedSizeList's row i starts at child row (offset+i)*size; List offsets
 * are read at offset+i and point into the child directly. */
void		arrow_array_slice(const ArrowArray *src, int64_t start, int64_t len,
							  ArrowArray *dst);

/* ------------------------------------------------------------ compression */

/* Decompress one Arrow compressed buffer body (after the 8-byte length
 * prefix) into dst of exactly dst_len bytes.  CORRUPT on any mismatch. */
int			arrow_decompress(ArrowCodec codec, const uint8_t *src, size_t src_len,
							 uint8_t *dst, size_t dst_len, ArrowError *err);
/* "none", "lz4_frame" or "zstd" */
const char *arrow_codec_name(ArrowCodec codec);
/* IEEE 754 half precision to double (exact) */
double		arrow_half_to_double(uint16_t h);
/* Compress; returns the compressed size in *out_len.  dst must hold
 * arrow_compress_bound(codec, src_len) bytes. */
size_t		arrow_compress_bound(ArrowCodec codec, size_t src_len);
int			arrow_compress(ArrowCodec codec, int level, const uint8_t *src,
						   size_t src_len, uint8_t *dst, size_t *out_len,
						   ArrowError *err);

/* ---------------------------------------------------------------- writing */

#define ARROW_DEFAULT_BATCH_ROWS		(1 << 20)
#define ARROW_DEFAULT_MAX_BUFFER_BYTES	(8 << 20)

typedef struct ArrowWriterOptions
{
	int64_t		batch_rows;		/* 0 = ARROW_DEFAULT_BATCH_ROWS */
	int64_t		max_buffer_bytes;	/* fixed-width buffer cap per batch; 0 =
									 * ARROW_DEFAULT_MAX_BUFFER_BYTES */
	ArrowCodec	codec;			/* ARROW_CODEC_NONE, LZ4_FRAME or ZSTD */
	int			compression_level;	/* 0 = codec default */
	bool		no_statistics;	/* do not write min_values/max_values */
	const ArrowAllocator *allocator;
	bool		no_sync;		/* create mode: skip the fsyncs at close (for
								 * output that can be regenerated, such as
								 * pgwarp ssb gen's); the temporary file is
								 * still renamed into place only when complete */
	bool		stream;			/* create mode: the IPC stream format (no
								 * magic, no footer, so no statistics; an
								 * end-of-stream marker at close) */
} ArrowWriterOptions;

typedef struct ArrowWriter ArrowWriter;
typedef struct ArrowBuilder ArrowBuilder;

/*
 * Create a new file (O_CREAT|O_EXCL unless overwrite) with this schema.
 * Fields may carry has_dict: the writer keeps one dictionary per such field
 * (values de-duplicated) and writes it as dictionary batches.
 * The schema is copied; pg_type and other field metadata are written as given.
 */
int			arrow_writer_create(ArrowWriter **w, const char *path,
								const ArrowSchema *schema, bool overwrite,
								const ArrowWriterOptions *opts, ArrowError *err);

/*
 * Open an existing file for append: finds its last complete footer (cutting
 * off the tail of an interrupted append), checks that `schema` (if not NULL)
 * matches the file's (names and types; else INVALID naming the first
 * differing column), and positions after the old trailer.  If keep_length
 * >= 0, the file is first cut to keep_length, which must be the end of a
 * complete footer (the committed length from the FDW's catalog).
 * *old_length (if not NULL) receives the length the file had before.
 */
int			arrow_writer_append(ArrowWriter **w, const char *path,
								const ArrowSchema *schema, int64_t keep_length,
								const ArrowWriterOptions *opts,
								int64_t *old_length, ArrowError *err);

/* The writer's schema (with layout) and per-column builders. */
const ArrowSchema *arrow_writer_schema(ArrowWriter *w);
ArrowBuilder *arrow_writer_column(ArrowWriter *w, int col);

/* Child builders: List/LargeList/FixedSizeList/Map 1 (Map: the entries
 * struct), Struct n. */
ArrowBuilder *arrow_builder_child(ArrowBuilder *b, int i);

/*
 * Row-wise building.  For each row, append exactly one value (or null) to
 * every top-level column builder, then call arrow_writer_end_row().  Typed
 * appenders check that the builder's type takes that kind of value
 * (INVALID otherwise):
 *   int:     Int (range-checked for the width/sign), Date32 (days),
 *            Date64 (ms), Time32/64, Timestamp, Duration (in the field's unit)
 *   uint64:  Int unsigned 64
 *   double:  Float (narrowed for Float32; Float16 rounds to nearest)
 *   decimal: Decimal128, as a little-endian two's complement 128-bit
 *            unscaled integer in (lo, hi)
 *   bytes:   Utf8/LargeUtf8 (caller guarantees UTF-8), Binary/LargeBinary,
 *            FixedSizeBinary (len must equal byteWidth)
 *   bool:    Bool
 *   interval: Interval (YEAR_MONTH uses months; DAY_TIME days+ms in nanos
 *            field / 1e6 must be exact; MONTH_DAY_NANO all three)
 *   begin/end list: List/LargeList/FixedSizeList/Map: append the elements to
 *            the child builder in between; end checks FixedSizeList size
 *   struct valid: Struct/Map entries: append one value to every child first
 * Nulls: arrow_builder_append_null on any type (for Struct it appends nulls
 * to the children too; for FixedSizeList, size nulls to the child).
 */
int			arrow_builder_append_null(ArrowBuilder *b, ArrowError *err);
int			arrow_builder_append_int(ArrowBuilder *b, int64_t v, ArrowError *err);
int			arrow_builder_append_uint64(ArrowBuilder *b, uint64_t v, ArrowError *err);
int			arrow_builder_append_double(ArrowBuilder *b, double v, ArrowError *err);
int			arrow_builder_append_decimal(ArrowBuilder *b, uint64_t lo, int64_t hi,
										 ArrowError *err);
int			arrow_builder_append_bytes(ArrowBuilder *b, const void *p, size_t len,
									   ArrowError *err);
int			arrow_builder_append_bool(ArrowBuilder *b, bool v, ArrowError *err);
int			arrow_builder_append_interval(ArrowBuilder *b, int32_t months,
										  int32_t days, int64_t nanos,
										  ArrowError *err);
int			arrow_builder_list_begin(ArrowBuilder *b, ArrowError *err);
int			arrow_builder_list_end(ArrowBuilder *b, ArrowError *err);
int			arrow_builder_struct_valid(ArrowBuilder *b, ArrowError *err);

/* Append rows [start, start+len) of an array whose field has the same type
 * as the builder's (dictionaries are decoded and re-encoded). */
int			arrow_builder_append_array(ArrowBuilder *b, const ArrowArray *a,
									   int64_t start, int64_t len,
									   ArrowError *err);

/* End of one row: flushes a batch when a threshold is reached. */
int			arrow_writer_end_row(ArrowWriter *w, ArrowError *err);
/* End of n rows appended column by column (arrow_builder_append_array on
 * every top-level builder): every column must have exactly n new values.
 * Flushes when a threshold is reached (the batch may then exceed batch_rows
 * or the buffer cap by part of these n rows; arrow_writer_append_batch
 * re-batches exactly). */
int			arrow_writer_end_rows(ArrowWriter *w, int64_t n, ArrowError *err);
/* Append rows [start,start+len) of a record batch whose schema matches;
 * flushes at the thresholds (re-batching as needed). */
int			arrow_writer_append_batch(ArrowWriter *w, const ArrowRecordBatch *rb,
									  int64_t start, int64_t len, ArrowError *err);
/* Write buffered rows as a batch now (no-op when none are buffered). */
int			arrow_writer_flush(ArrowWriter *w, ArrowError *err);
/* Flush, write dictionaries not yet written, footer and trailer, fsync,
 * close, free.  *w is freed whether or not it fails. */
int			arrow_writer_close(ArrowWriter *w, ArrowError *err);
/* Give up: a new file is unlinked; an appended file is cut back to its old
 * length.  Frees w. */
void		arrow_writer_abort(ArrowWriter *w);

/* Rows and batches written so far (flushed). */
int64_t		arrow_writer_rows(const ArrowWriter *w);
int64_t		arrow_writer_batches(const ArrowWriter *w);
int64_t		arrow_writer_bytes(const ArrowWriter *w);

/* ------------------------------------------------------------- statistics */

/*
 * Per-batch statistics from field custom metadata "min_values" and
 * "max_values" of the (footer) schema: one comma-separated value per record
 * batch, an empty entry where the batch has none (all NULL, or a type
 * without order).  Values are the column's storage integers in decimal
 * (Int, Date32 days, Date64 ms, Time, Timestamp in its unit, Decimal128
 * unscaled) or floats printed with %.17g (NaN sorts above +Infinity, as in
 * PostgreSQL).  Returns false when absent or malformed (wrong count).
 */
typedef struct ArrowStatValue
{
	bool		present;
	bool		is_float;
	__int128	i;				/* integers, decimals (unscaled) */
	double		d;				/* floats */
} ArrowStatValue;

bool		arrow_field_stats(const ArrowFile *file, int col, ArrowArena *arena,
							  ArrowStatValue **mins, ArrowStatValue **maxs);

/*
 * Whether batch `batch` may hold a row whose top-level column col equals an
 * integer (its storage value: Int, Date32 days, ...) or the bytes [p,
 * p+len) (Utf8/Binary): 0 when a Parquet Bloom filter rules it out, 1 when
 * it may (Arrow files, columns without a filter), -1 on error (a malformed
 * filter, with err).
 */
int			arrow_batch_may_contain_int(ArrowFile *file, int batch, int col, __int128 v,
										ArrowError *err);
int			arrow_batch_may_contain_bytes(ArrowFile *file, int batch, int col, const void *p,
										  size_t len, ArrowError *err);

#ifdef __cplusplus
}
#endif

#endif							/* PGWARP_ARROW_H */
