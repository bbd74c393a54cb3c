/*
 * pq_internal.h — internals shared by the Parquet reader's files:
 *   pq_thrift.c    Thrift compact protocol decoding
 *   pq_meta.c      the footer (FileMetaData, row groups, column chunks)
 *   pq_schema.c    the Parquet schema as an Arrow schema, with levels
 *   pq_codec.c     page decompression
 *   pq_rle.c       RLE/bit-packed hybrid and bit unpacking
 *   pq_values.c    value decoders (PLAIN, dictionary, DELTA_*, BYTE_STREAM_SPLIT)
 *   pq_chunk.c     pages of one column chunk into levels and values
 *   pq_assemble.c  levels and values into Arrow arrays
 *   pq_file.c      the ArrowFile entry points (open, batch meta, load, stats)
 * Pure C; no PostgreSQL header.  Not part of the public API.
 */
#ifndef PGWARP_PQ_INTERNAL_H
#define PGWARP_PQ_INTERNAL_H

#include <stdarg.h>
#include <string.h>

#include "parquet.h"

#pragma GCC visibility push(hidden)

/* Physical types (parquet.thrift Type) */
enum
{
	PQ_BOOLEAN = 0, PQ_INT32 = 1, PQ_INT64 = 2, PQ_INT96 = 3, PQ_FLOAT = 4,
	PQ_DOUBLE = 5, PQ_BYTE_ARRAY = 6, PQ_FIXED_LEN_BYTE_ARRAY = 7
};

/* ConvertedType */
enum
{
	PQ_CT_UTF8 = 0, PQ_CT_MAP = 1, PQ_CT_MAP_KEY_VALUE = 2, PQ_CT_LIST = 3,
	PQ_CT_ENUM = 4, PQ_CT_DECIMAL = 5, PQ_CT_DATE = 6, PQ_CT_TIME_MILLIS = 7,
	PQ_CT_TIME_MICROS = 8, PQ_CT_TIMESTAMP_MILLIS = 9, PQ_CT_TIMESTAMP_MICROS = 10,
	PQ_CT_UINT_8 = 11, PQ_CT_UINT_16 = 12, PQ_CT_UINT_32 = 13, PQ_CT_UINT_64 = 14,
	PQ_CT_INT_8 = 15, PQ_CT_INT_16 = 16, PQ_CT_INT_32 = 17, PQ_CT_INT_64 = 18,
	PQ_CT_JSON = 19, PQ_CT_BSON = 20, PQ_CT_INTERVAL = 21
};

/* LogicalType union members (field ids) */
enum
{
	PQ_LT_NONE = 0, PQ_LT_STRING = 1, PQ_LT_MAP = 2, PQ_LT_LIST = 3, PQ_LT_ENUM = 4,
	PQ_LT_DECIMAL = 5, PQ_LT_DATE = 6, PQ_LT_TIME = 7, PQ_LT_TIMESTAMP = 8,
	PQ_LT_INTEGER = 10, PQ_LT_UNKNOWN = 11, PQ_LT_JSON = 12, PQ_LT_BSON = 13,
	PQ_LT_UUID = 14, PQ_LT_FLOAT16 = 15
};

/* FieldRepetitionType */
enum
{
	PQ_REQUIRED = 0, PQ_OPTIONAL = 1, PQ_REPEATED = 2
};

/* Encoding */
enum
{
	PQ_ENC_PLAIN = 0, PQ_ENC_PLAIN_DICTIONARY = 2, PQ_ENC_RLE = 3,
	PQ_ENC_BIT_PACKED = 4, PQ_ENC_DELTA_BINARY_PACKED = 5,
	PQ_ENC_DELTA_LENGTH_BYTE_ARRAY = 6, PQ_ENC_DELTA_BYTE_ARRAY = 7,
	PQ_ENC_RLE_DICTIONARY = 8, PQ_ENC_BYTE_STREAM_SPLIT = 9
};

/* PageType */
enum
{
	PQ_PAGE_DATA = 0, PQ_PAGE_INDEX = 1, PQ_PAGE_DICTIONARY = 2, PQ_PAGE_DATA_V2 = 3
};

/* ------------------------------------------------------------ thrift */

/* Compact protocol field types */
enum
{
	PQ_T_STOP = 0, PQ_T_TRUE = 1, PQ_T_FALSE = 2, PQ_T_BYTE = 3, PQ_T_I16 = 4,
	PQ_T_I32 = 5, PQ_T_I64 = 6, PQ_T_DOUBLE = 7, PQ_T_BINARY = 8, PQ_T_LIST = 9,
	PQ_T_SET = 10, PQ_T_MAP = 11, PQ_T_STRUCT = 12
};

#define PQ_THRIFT_MAX_DEPTH 32

/* A cursor over Thrift bytes [base, end); file_off is base's file offset. */
typedef struct PqThrift
{
	const uint8_t *base;
	const uint8_t *p;
	const uint8_t *end;
	int64_t		file_off;
	const char *name;			/* source name, for errors */
	const char *what;			/* "page header", "footer" */
	int			depth;
	ArrowError *err;
} PqThrift;

void		pq_thrift_init(PqThrift *t, const uint8_t *p, size_t len, int64_t file_off,
						   const char *name, const char *what, ArrowError *err);
/* a CORRUPT error at the cursor's file offset; returns -1 */
int			pq_thrift_fail(PqThrift *t, const char *fmt,...)
			__attribute__((format(printf, 2, 3)));
/* Next field header of the current struct: *type PQ_T_STOP at its end. */
int			pq_thrift_field(PqThrift *t, int16_t *last_id, int *type, int16_t *id);
int			pq_thrift_i32(PqThrift *t, int type, int32_t *v);
int			pq_thrift_i64(PqThrift *t, int type, int64_t *v);
int			pq_thrift_bool(PqThrift *t, int type, bool *v);
int			pq_thrift_binary(PqThrift *t, int type, const uint8_t **p, uint32_t *len);
/* a list header: element type and count (count checked against the bytes left) */
int			pq_thrift_list(PqThrift *t, int type, int *elem_type, int32_t *n);
/* the type of a list element of type elem_type read as a field */
int			pq_thrift_skip(PqThrift *t, int type);
/*
 * Walk the fields of the struct at the cursor (type: the field type read
 * for it): fn(t, id, type, arg) returns 0 when it read the field, 1 to have
 * it skipped, -1 on error.  fn NULL skips the whole struct.
 */
typedef int (*PqFieldFn) (PqThrift *t, int16_t id, int type, void *arg);
int			pq_thrift_struct(PqThrift *t, int type, PqFieldFn fn, void *arg);
/* enter / leave a nested struct (depth-limited) */
int			pq_thrift_enter(PqThrift *t, int type);
void		pq_thrift_leave(PqThrift *t);

/* ------------------------------------------------------------ footer */

typedef struct PqLogical
{
	int			kind;			/* PQ_LT_* */
	int			unit;			/* TIME/TIMESTAMP: 1 ms, 2 us, 3 ns */
	bool		utc;			/* isAdjustedToUTC */
	int			bit_width;		/* INTEGER */
	bool		is_signed;
	int32_t		scale;			/* DECIMAL */
	int32_t		precision;
} PqLogical;

typedef struct PqSchemaElem
{
	int			type;			/* physical type, -1 for groups */
	int32_t		type_length;
	int			repetition;		/* -1 when absent (the root) */
	char	   *name;
	int32_t		num_children;
	int			converted;		/* -1 when absent */
	int32_t		scale;
	int32_t		precision;
	PqLogical	logical;
} PqSchemaElem;

typedef struct PqStats
{
	bool		has_min;
	bool		has_max;
	bool		legacy;			/* from the deprecated min/max fields */
	const uint8_t *min;
	const uint8_t *max;
	uint32_t	min_len;
	uint32_t	max_len;
	int64_t		null_count;		/* -1 when absent */
} PqStats;

typedef struct PqChunk
{
	int			type;
	int			codec;
	int64_t		num_values;
	int64_t		total_compressed;
	int64_t		total_uncompressed;
	int64_t		data_page_offset;
	int64_t		dict_page_offset;	/* -1 when absent */
	bool		external;		/* file_path set: data in another file */
	PqStats		stats;
	int64_t		start;			/* first byte of the chunk */
	/* where the page index and the Bloom filter are (-1 when absent) */
	int64_t		oi_offset;		/* OffsetIndex */
	int32_t		oi_length;
	int64_t		ci_offset;		/* ColumnIndex */
	int32_t		ci_length;
	int64_t		bloom_offset;
	int32_t		bloom_length;	/* -1: not given (header read to learn it) */
	/* the OffsetIndex, when the row group is cut into parts (pq_pageindex.c) */
	int			n_pages;
	struct PqPageLoc *pages;
} PqChunk;

/* One data page of a column chunk (OffsetIndex PageLocation) */
typedef struct PqPageLoc
{
	int64_t		offset;			/* of its page header */
	int32_t		size;			/* header and body */
	int64_t		first_row;		/* within the row group */
} PqPageLoc;

typedef struct PqRowGroup
{
	int64_t		num_rows;
	int64_t		start;			/* lowest chunk start */
	int64_t		bytes;			/* sum of chunk sizes */
	PqChunk    *chunks;			/* one per leaf column */
	int			first_batch;	/* its first part's batch number */
	int			n_parts;		/* batches it is presented as (>= 1) */
	int64_t    *part_rows;		/* n_parts + 1 row boundaries: part k is rows
								 * [part_rows[k], part_rows[k+1]) */
} PqRowGroup;

typedef struct PqFooter
{
	int			n_elems;
	PqSchemaElem *elems;
	int64_t		num_rows;
	int			n_row_groups;
	PqRowGroup *row_groups;
	int			n_chunks_per_rg;	/* from the first row group (checked) */
	bool		type_defined_order;	/* column_orders present */
	char	   *created_by;
	int			n_kv;
	ArrowKeyValue *kv;
} PqFooter;

int			pq_parse_footer(const uint8_t *buf, size_t len, int64_t file_off,
							const char *name, ArrowArena *arena, PqFooter *out,
							ArrowError *err);
/* one PageHeader; *hdr_len gets its length */
typedef struct PqPageHeader
{
	int			type;
	int32_t		uncompressed_size;
	int32_t		compressed_size;
	int32_t		num_values;
	int			encoding;
	int			def_encoding;
	int			rep_encoding;
	int32_t		num_nulls;		/* v2 */
	int32_t		num_rows;		/* v2 */
	int32_t		def_len;		/* v2 */
	int32_t		rep_len;		/* v2 */
	bool		is_compressed;	/* v2 */
} PqPageHeader;

int			pq_parse_page_header(const uint8_t *p, size_t len, int64_t file_off,
								 const char *name, PqPageHeader *h, size_t *hdr_len,
								 ArrowError *err);

/* ------------------------------------------------------------ schema */

/* How a leaf's physical values become its Arrow values */
typedef enum PqConv
{
	PQ_CONV_BOOL,
	PQ_CONV_COPY4,				/* INT32 / FLOAT into a 4-byte type */
	PQ_CONV_COPY8,				/* INT64 / DOUBLE into an 8-byte type */
	PQ_CONV_I8,					/* INT32 narrowed to int8 (range-checked) */
	PQ_CONV_I16,
	PQ_CONV_U8,
	PQ_CONV_U16,
	PQ_CONV_INT96,				/* Impala timestamp into ns since the epoch */
	PQ_CONV_DEC32,				/* INT32 decimal into Decimal128 */
	PQ_CONV_DEC64,
	PQ_CONV_DECBYTES,			/* big-endian two's complement bytes */
	PQ_CONV_HALF,				/* FLBA(2) into Float16 */
	PQ_CONV_FLBA,				/* FixedSizeBinary */
	PQ_CONV_INTERVAL,			/* FLBA(12) months/days/ms into MonthDayNano */
	PQ_CONV_BYTES,				/* Utf8 / Binary */
	PQ_CONV_NULL				/* the Null type */
} PqConv;

typedef struct PqLeaf
{
	const char *path;			/* dotted, for errors */
	int			type;			/* physical */
	int32_t		type_length;
	int			max_def;
	int			max_rep;
	PqConv		conv;
	const ArrowField *field;	/* the Arrow leaf */
	int			top;			/* top-level field */
	bool		unsigned_int;	/* statistics compare unsigned */
} PqLeaf;

/* Level information of one Arrow field (indexed by node_index) */
typedef struct PqNode
{
	int			leaf;			/* leftmost leaf under the field */
	int			seg;			/* number of list ancestors */
	int			slot_def;		/* def level at which a slot exists (the
								 * innermost list ancestor's entry level) */
	int			nonnull_def;	/* def level at which the value is not null */
	int			entry_def;		/* lists: def level at which an entry exists */
	bool		nullable;
} PqNode;

typedef struct PqFile
{
	PqFooter	footer;
	int			n_leaves;
	PqLeaf	   *leaves;
	PqNode	   *nodes;			/* schema.n_nodes */
	int		   *first_leaf;		/* per top-level field */
	int		   *n_leaf;			/* per top-level field */
	int64_t		data_end;		/* offset of the footer */
	int		   *batch_rg;		/* per batch: its row group */
	int		   *batch_part;		/* per batch: its part of the row group */
	int64_t		n_page_locs;	/* OffsetIndex entries kept */
	int64_t		part_rows;		/* parts' least size (PQ_PART_ROWS) */
	/* the Bloom filter read last (pq_bloom.c) */
	int			bloom_rg;
	int			bloom_leaf;
	uint8_t    *bloom_bits;		/* malloc'd; NULL when none held */
	uint32_t	bloom_bytes;
} PqFile;

int			pq_build_schema(PqFile *pf, ArrowArena *arena, ArrowSchema *schema,
							const char *name, ArrowError *err);

/* ------------------------------------------------------------ decoding */

int			pq_decompress(int codec, const uint8_t *src, size_t src_len, uint8_t *dst,
						  size_t dst_len, ArrowError *err);
const char *pq_codec_name(int codec);

/* bits needed for values 0..max */
static inline int
pq_bit_width(uint32_t max)
{
	int			w = 0;

	while (max)
	{
		w++;
		max >>= 1;
	}
	return w;
}

/* Unsigned LEB128 varint at *p (< end); advances *p.  -1 if malformed. */
int			pq_uvarint(const uint8_t **p, const uint8_t *end, uint64_t *v);

/*
 * Decode n values of the RLE/bit-packed hybrid (no length prefix) of bit
 * width bw from [p, p+len) into out8 (bw <= 8) or out32.  *used gets the
 * bytes consumed.  -1 with err (offset file_off + position) if malformed.
 */
int			pq_rle_decode(const uint8_t *p, size_t len, int bw, int64_t n,
						  uint8_t *out8, uint32_t *out32, int64_t file_off,
						  const char *name, ArrowError *err);
/* unpack n values of bw bits (LSB first) from p into out (64-bit) */
void		pq_unpack_bits(const uint8_t *p, int bw, int64_t n, uint64_t *out);

/* A growable byte buffer in a scratch arena */
typedef struct PqGrow
{
	uint8_t    *p;
	int64_t		len;
	int64_t		cap;
} PqGrow;

int			pq_grow(PqGrow *g, ArrowArena *arena, int64_t need, ArrowError *err);

/* Decoded physical values of a column chunk (or a dictionary) */
typedef struct PqValues
{
	int64_t		n;
	int			width;			/* fixed-width bytes (BOOLEAN: 1 per value);
								 * 0 for BYTE_ARRAY */
	PqGrow		fixed;
	PqGrow		offs;			/* BYTE_ARRAY: int64 end offsets */
	PqGrow		data;
} PqValues;

/* What a value decoder needs to know */
typedef struct PqDecodeCtx
{
	const PqLeaf *leaf;
	const char *name;
	int64_t		file_off;		/* of the values' first byte, for errors;
								 * -1 when they were decompressed */
	int64_t		page_off;		/* of the page header */
	ArrowArena *scratch;
	ArrowError *err;
	const PqValues *dict;		/* NULL without a dictionary page */
} PqDecodeCtx;

/* Append n values in encoding enc from [p, p+len) to out. */
int			pq_decode_values(PqDecodeCtx *cx, int enc, const uint8_t *p, size_t len,
							 int64_t n, PqValues *out);
/* a CORRUPT error naming the leaf and the page; returns -1 */
int			pq_decode_fail(PqDecodeCtx *cx, const char *fmt,...)
			__attribute__((format(printf, 2, 3)));

/* Levels and values of one column chunk */
typedef struct PqLeafData
{
	int64_t		n_levels;
	uint8_t    *def;			/* NULL when max_def == 0 */
	uint8_t    *rep;			/* NULL when max_rep == 0 */
	PqValues	vals;
} PqLeafData;

/*
 * The pages of the chunk holding rows [lo, hi) of the row group (the whole
 * chunk when it has no OffsetIndex kept or the range is the row group):
 * *row0 gets the row group row of the first level decoded.
 */
int			pq_read_chunk_rows(ArrowFile *file, const PqFile *pf, int rg, int leaf,
							   int64_t lo, int64_t hi, ArrowArena *scratch,
							   PqLeafData *out, int64_t *row0, ArrowError *err);
/* Keep rows [skip, skip + keep) of decoded leaf data (levels and values) */
int			pq_trim_rows(PqLeafData *L, const PqLeaf *leaf, int64_t skip, int64_t keep,
						 ArrowArena *scratch, const char *name, ArrowError *err);

/* Build the Arrow array (of `rows` rows) of top-level field col from its
 * leaves' data */
int			pq_assemble(const ArrowFile *file, const PqFile *pf, int rg, int col,
						const PqLeafData *leaves, int64_t rows, ArrowArena *arena,
						ArrowArray *out, ArrowError *err);

/* ------------------------------------------------------------ page index */

/* Row groups of at least 2 * part_rows rows whose every column chunk has
 * an OffsetIndex are presented as parts of part_rows (by default
 * PQ_PART_ROWS) to 2 * part_rows rows, cut where pages of many columns
 * begin. */
#define PQ_PART_ROWS		65536
#define PQ_MAX_PAGE_LOCS	(1 << 22)	/* OffsetIndex entries kept per file */

/* Read the OffsetIndexes and cut row groups into parts; fills batch_rg,
 * batch_part and the row groups' parts (every row group has >= 1). */
int			pq_plan_parts(ArrowFile *file, PqFile *pf, ArrowError *err);
/* Pages [*p_lo, *p_hi] of chunk c overlap rows [lo, hi) (c->n_pages > 0) */
void		pq_pages_for_rows(const PqChunk *c, int64_t rg_rows, int64_t lo, int64_t hi,
							  int *p_lo, int *p_hi);
/* rows of page p of c (the next page's first row, or the row group's end) */
static inline int64_t
pq_page_end_row(const PqChunk *c, int p, int64_t rg_rows)
{
	return p + 1 < c->n_pages ? c->pages[p + 1].first_row : rg_rows;
}

/* Per-part min/max of a leaf in row group rg from its ColumnIndex, in
 * mins/maxs[first_batch ...]: false when it has none usable (the caller
 * then uses the row group's statistics). */
bool		pq_part_stats(const ArrowFile *file, const PqFile *pf, int rg, int leaf,
						  ArrowArena *arena, ArrowStatValue *mins, ArrowStatValue *maxs);
/* a statistics value (min_value/max_value encoding) as the storage integer
 * or double; false when not usable (pq_file.c) */
bool		pq_stat_value(const PqLeaf *leaf, const uint8_t *p, uint32_t len,
						  ArrowStatValue *v);

/* ------------------------------------------------------------ Bloom filters */

uint64_t	pq_xxhash64(const void *p, size_t len, uint64_t seed);
/* 1 if the split-block filter of numBytes bits may hold hash h, else 0 */
int			pq_bloom_check(const uint8_t *bits, uint32_t bytes, uint64_t h);

/* A CORRUPT error naming the source; returns -1 */
int			pq_corrupt(ArrowError *err, const char *name, int64_t offset,
					   const char *fmt,...) __attribute__((format(printf, 4, 5)));

#pragma GCC visibility pop

#endif							/* PGWARP_PQ_INTERNAL_H */
