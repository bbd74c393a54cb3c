/*
 * arrow_read_internal.h — declarations shared by the reader's source files
 * (arrow_schema.c, arrow_read.c, arrow_array*.c).  Not part of the public API.
 */
#ifndef PGWARP_ARROW_READ_INTERNAL_H
#define PGWARP_ARROW_READ_INTERNAL_H

#include <stdarg.h>

#include "arrow.h"
#include "flatbuf_read.h"

/* shared between this layer's files only: not exported from the module */
#pragma GCC visibility push(hidden)

/* MessageHeader union values (Message.fbs) */
#define ARROW_MSG_SCHEMA			1
#define ARROW_MSG_DICTIONARY_BATCH	2
#define ARROW_MSG_RECORD_BATCH		3

/* MetadataVersion values (Schema.fbs); V4 is the oldest we read */
#define ARROW_METADATA_V4			3
#define ARROW_METADATA_V5			4

/* Count n bytes served from a mapped source (ArrowSource.map_count). */
static inline void
arrow_src_count_mapped(const ArrowSource *src, uint64_t n)
{
	if (src->map_count != NULL)
		__atomic_fetch_add(src->map_count, n, __ATOMIC_RELAXED);
}

/* Decode a Schema table (not yet laid out) into arena memory. */
int			arrow_decode_schema(const FbrTable *t, ArrowArena *arena,
								ArrowSchema *schema, ArrowError *err);

/* Number of buffers a field of this (value) type owns, not counting
 * children and ignoring dictionary encoding. */
int			arrow_type_n_buffers(const ArrowType *type);

/*
 * The field describing the values of a dictionary-encoded field's
 * dictionary: a copy of it without the dictionary encoding, laid out as the
 * single column of a dictionary batch (node 0, buffer 0; its children were
 * laid out that way by arrow_schema_layout already).
 */
void		arrow_dict_value_field(const ArrowField *field, ArrowField *out);

/*
 * Decode the header of the message at blk: a RecordBatch (expect_type
 * ARROW_MSG_RECORD_BATCH) or a DictionaryBatch (its inner RecordBatch);
 * checks the counts of nodes and buffers against n_nodes / n_buffers unless
 * they are negative, every buffer against the body and the body against the
 * data.  label names the message in errors ("record batch 3").
 */
int			arrow_read_message_meta(ArrowFile *file, const ArrowBlock *blk,
									int expect_type, int n_nodes, int n_buffers,
									ArrowArena *arena, ArrowBatchMeta *meta,
									const char *label, ArrowError *err);

/*
 * Decompress the first dst_len bytes of a compressed buffer whose claimed
 * uncompressed size `claimed` exceeds dst_len (see arrow_compress.c).
 */
int			arrow_decompress_prefix(ArrowCodec codec, const uint8_t *src,
									size_t src_len, uint8_t *dst, size_t dst_len,
									uint64_t claimed, ArrowError *err);

/*
 * Is `claimed` a plausible uncompressed size for these compressed bytes?
 * CORRUPT if it exceeds what the codec can expand them to, or contradicts
 * the content size the frame header declares.
 */
int			arrow_check_claim(ArrowCodec codec, const uint8_t *src,
							  size_t src_len, uint64_t claimed, ArrowError *err);

/* Prefix err->msg with "name: " (for errors from name-less helpers). */
void		arrow_error_prefix(ArrowError *err, const char *name);
/* Prefix err->msg with "name: " unless it names the source already;
 * returns -1. */
int			arrow_error_named(ArrowError *err, const char *name);
/* Set err to "where: detail", detail formatted from fmt and ap; returns -1. */
int			arrow_verror_in(ArrowError *err, ArrowErrorCode code, int64_t offset,
							const char *where, const char *fmt, va_list ap)
			__attribute__((format(printf, 5, 0)));

#pragma GCC visibility pop

#endif							/* PGWARP_ARROW_READ_INTERNAL_H */
