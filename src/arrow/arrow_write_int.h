/*
 * arrow_write_int.h — internals shared by the writer's files (arrow_write.c:
 * the file, its output buffer and life cycle; arrow_write_message.c: IPC
 * messages; arrow_write_batch.c: batches and their statistics) and the
 * column builders (arrow_builder*.c, whose own internals are in
 * arrow_builder_int.h).  Not part of the public API.
 */
#ifndef PGWARP_ARROW_WRITE_INT_H
#define PGWARP_ARROW_WRITE_INT_H

#include "arrow.h"
#include "flatbuf_build.h"

/* shared between this layer's files only: not exported from the module */
#pragma GCC visibility push(hidden)

/* A growable byte buffer from the writer's allocator. */
typedef struct WBuf
{
	uint8_t    *data;
	size_t		len;
	size_t		cap;
} WBuf;

/*
 * Dictionary state of one dictionary-encoded field.  Every distinct value
 * ever seen is kept as a key (its storage bytes) with its index, so that
 * values are de-duplicated across batches; `pending` holds the values not yet
 * written in a dictionary batch (the delta).
 */
typedef struct ArrowDict
{
	ArrowField *field;			/* the dictionary-encoded field */
	ArrowField	value_field;	/* the value type, without dictionary */
	struct ArrowBuilder *pending;	/* values not yet written */
	int64_t		count;			/* distinct values so far (= next index) */
	int64_t		written;		/* values already in dictionary batches */
	bool		any_written;	/* a (non-delta) dictionary batch is out */
	int64_t		max_index;		/* largest index the index type holds */
	/* key store */
	WBuf		key_bytes;
	WBuf		key_offsets;	/* int64, count + 1 entries */
	WBuf		key_hashes;		/* uint64, count entries */
	WBuf		slots;			/* int64 open addressing table: index or -1 */
	size_t		n_slots;		/* power of two (0 before first insert) */
} ArrowDict;

/* Running min/max of one top-level column within the current batch. */
typedef enum StatKind
{
	STAT_NONE = 0,
	STAT_INT,					/* signed storage integers */
	STAT_UINT,					/* unsigned Int */
	STAT_FLOAT,
	STAT_DECIMAL
} StatKind;

struct ArrowBuilder
{
	ArrowWriter *w;
	ArrowField *field;
	ArrowTypeId type_id;
	int			width;			/* bytes per value (fixed-width, dictionary
								 * indices); 0 otherwise */
	int			offset_width;	/* 4 or 8 for offsets, else 0 */
	bool		is_bits;		/* Bool: bit-packed values */
	bool		top_level;
	int			column;			/* top-level column index, or -1 */

	int64_t		length;			/* slots in the current batch */
	int64_t		null_count;
	bool		has_validity;	/* bitmap materialised (after first null) */
	WBuf		validity;
	WBuf		values;			/* fixed-width values, bits, or indices */
	WBuf		offsets;		/* length + 1 entries when offset_width */
	WBuf		data;			/* Utf8/Binary bytes */
	bool		list_open;		/* between list_begin and list_end */

	int			n_children;
	struct ArrowBuilder **children;

	ArrowDict  *dict;			/* dictionary-encoded field */

	/* statistics of the current batch (top-level columns only) */
	StatKind	stat_kind;
	bool		stat_have;
	__int128	stat_imin,
				stat_imax;
	double		stat_dmin,
				stat_dmax;
};

/* A buffer of a message body: data and length as stored in the file. */
typedef struct BodyBuf
{
	const uint8_t *data;
	int64_t		len;
} BodyBuf;

/* ---- arrow_builder.c, arrow_builder_dict.c (dict_seed) ---- */
int			wbuf_reserve(ArrowWriter *w, WBuf *b, size_t extra, ArrowError *err);
void		wbuf_free(ArrowWriter *w, WBuf *b);
ArrowBuilder *builder_create(ArrowWriter *w, ArrowField *field, int column,
							 ArrowArena *arena, ArrowError *err);
void		builder_free(ArrowBuilder *b);
void		builder_reset(ArrowBuilder *b);
/* pre-order field nodes and buffers of the builder's current contents */
void		builder_collect(ArrowBuilder *b, ArrowFieldNode *nodes, int *n_nodes,
							BodyBuf *bufs, int *n_bufs);
/* count of nodes/buffers builder_collect produces */
void		builder_count(ArrowBuilder *b, int *n_nodes, int *n_bufs);
/* dictionaries of the builder tree, pre-order */
int			builder_dicts(ArrowBuilder *b, ArrowDict **out, int max);
/* seed a dictionary with the values of an existing dictionary array */
int			dict_seed(ArrowBuilder *b, const ArrowArray *dictionary,
					  ArrowError *err);
/* largest bytes any 32-bit-offset buffer of the tree holds */
int64_t		builder_max_offset32(ArrowBuilder *b);

/* ---- the writer (arrow_write*.c) ---- */
#define MAGIC "ARROW1"
#define METADATA_V5 4
#define HEADER_SCHEMA 1
#define HEADER_DICTIONARY 2
#define HEADER_RECORD_BATCH 3
#define BODY_ALIGN 64
#define OUT_BUF_SIZE (1 << 20)
#define APPEND_CHUNK_ROWS 16384
/* Flush a batch when a 32-bit offset buffer passes 1 GiB, so that one more
 * value of up to 1 GB (PostgreSQL's limit) still fits. */
#define OFFSET32_FLUSH ((int64_t) 1 << 30)

struct ArrowWriter
{
	ArrowWriterOptions opts;
	const ArrowAllocator *allocator;
	ArrowArena	arena;
	ArrowSchema schema;
	char	   *path;
	char	   *tmp_path;		/* create mode */
	int			fd;
	bool		append;
	bool		overwrite;
	bool		failed;			/* an I/O or memory error: only abort is left */
	int64_t		start_pos;		/* 0, or the old length when appending */
	int64_t		pos;			/* logical end of what we have written */
	WBuf		out;			/* write buffer, at file offset pos - out.len */

	WBuf		batch_blocks;	/* ArrowBlock[] */
	WBuf		dict_blocks;	/* ArrowBlock[] */
	int64_t		rows_written;
	int64_t		batches_written;	/* by this writer */
	int64_t		rows_buffered;

	ArrowBuilder **cols;
	int			n_dicts;
	ArrowDict **dicts;

	/* message assembly */
	FbBuilder	fb;
	WBuf		scratch;		/* compressed buffers of one message */
	ArrowFieldNode *nodes;
	BodyBuf    *bufs;
	int64_t    *buf_offsets;
	int			max_nodes;
	int			max_bufs;

	/* statistics: per top-level column, comma-separated text so far */
	WBuf	   *stat_min;
	WBuf	   *stat_max;
	int64_t		stat_entries;	/* batches covered by the strings */
};

static inline int64_t
align_up(int64_t v, int64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* ---- arrow_write.c ---- */
const ArrowAllocator *writer_allocator(ArrowWriter *w);
const char *writer_path(ArrowWriter *w);
/* the output buffer, written at w->pos */
int			out_flush(ArrowWriter *w, ArrowError *err);
int			out_write(ArrowWriter *w, const void *p, size_t len, ArrowError *err);
int			out_zeros(ArrowWriter *w, size_t n, ArrowError *err);
/* add a block to the footer's list of dictionary or record batch blocks */
int			push_block(ArrowWriter *w, WBuf *list, const ArrowBlock *blk,
					   ArrowError *err);

/* ---- arrow_write_message.c ---- */
/* the schema table, with the statistics metadata when stats */
FbRef		fb_schema(ArrowWriter *w, bool stats);
int			write_message(ArrowWriter *w, uint8_t header_type, FbRef header,
						  int64_t body_len, const BodyBuf *bufs,
						  const int64_t *offs, int n_bufs, ArrowBlock *blk,
						  ArrowError *err);
int			prepare_body(ArrowWriter *w, BodyBuf *bufs, int n, int64_t *offs,
						 int64_t *body_len, ArrowError *err);
FbRef		fb_record_batch(ArrowWriter *w, int64_t length,
							const ArrowFieldNode *nodes, int n_nodes,
							const BodyBuf *bufs, const int64_t *offs,
							int n_bufs);
int			write_schema_message(ArrowWriter *w, ArrowError *err);
/* the dictionary batches of values new since the last batch */
int			write_dictionaries(ArrowWriter *w, ArrowError *err);

/* ---- arrow_write_batch.c ---- */
int			wbuf_puts(ArrowWriter *w, WBuf *b, const char *s, ArrowError *err);
int64_t		count_entries(const char *s);

#pragma GCC visibility pop

#endif							/* PGWARP_ARROW_WRITE_INT_H */
