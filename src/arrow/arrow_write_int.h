/*
 * arrow_write_int.h — internals shared by arrow_write.c (file output) and
 * arrow_builder.c (column builders).  Not part of the public API.
 */
#ifndef PGWARP_ARROW_WRITE_INT_H
#define PGWARP_ARROW_WRITE_INT_H

#include "arrow.h"
#include "flatbuf_build.h"

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

/* ---- arrow_builder.c ---- */
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

/* ---- arrow_write.c ---- */
const ArrowAllocator *writer_allocator(ArrowWriter *w);
const char *writer_path(ArrowWriter *w);

#endif							/* PGWARP_ARROW_WRITE_INT_H */
