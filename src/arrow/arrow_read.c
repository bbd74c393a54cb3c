/*
 * arrow_read.c — opening Arrow IPC files and streams, and decoding message
 * headers.
 *
 * File format:   "ARROW1" 00 00 | stream of messages | footer flatbuffer |
 *                int32 footer length | "ARROW1"
 * Stream format: messages, each 0xFFFFFFFF | int32 metadata length |
 *                Message flatbuffer (padded) | body; legacy streams omit the
 *                0xFFFFFFFF; 0xFFFFFFFF 00000000 (or EOF) ends the stream.
 *
 * Every position read from the data is checked against the source size (or
 * the footer's position, for blocks) before anything is read from it.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arrow_read_internal.h"
#include "parquet.h"

static const uint8_t arrow_magic[6] = {'A', 'R', 'R', 'O', 'W', '1'};

#define CONTINUATION		0xFFFFFFFFu
#define TRAILER_LEN			10		/* int32 footer length + magic */
#define LEADING_MAGIC_LEN	8		/* magic + 2 bytes of padding */

/* Message */
#define MESSAGE_VERSION		0
#define MESSAGE_HEADER_TYPE	1
#define MESSAGE_HEADER		2
#define MESSAGE_BODY_LENGTH	3
/* Footer */
#define FOOTER_VERSION		0
#define FOOTER_SCHEMA		1
#define FOOTER_DICTIONARIES	2
#define FOOTER_BATCHES		3
/* RecordBatch */
#define RB_LENGTH			0
#define RB_NODES			1
#define RB_BUFFERS			2
#define RB_COMPRESSION		3
#define RB_VARIADIC_COUNTS	4
/* DictionaryBatch */
#define DB_ID				0
#define DB_DATA				1
#define DB_IS_DELTA			2

#define BLOCK_SIZE			24
#define FIELD_NODE_SIZE		16
#define BUFFER_SIZE			16

static const char *
src_name(const ArrowSource *src)
{
	return src->name ? src->name : "(arrow)";
}

void
arrow_error_prefix(ArrowError *err, const char *name)
{
	size_t		cap = sizeof(err->msg);
	size_t		nlen,
				mlen;

	if (err == NULL)
		return;
	nlen = strlen(name);
	if (nlen > cap / 2)
		nlen = cap / 2;
	mlen = strnlen(err->msg, cap - 1);
	if (mlen > cap - 1 - (nlen + 2))
		mlen = cap - 1 - (nlen + 2);
	memmove(err->msg + nlen + 2, err->msg, mlen);
	memcpy(err->msg, name, nlen);
	err->msg[nlen] = ':';
	err->msg[nlen + 1] = ' ';
	err->msg[nlen + 2 + mlen] = '\0';
}

/*
 * Errors from helpers that do not know the source (allocation failures,
 * codecs) get its name at the public entry points.
 */
int
arrow_error_named(ArrowError *err, const char *name)
{
	if (err != NULL && name != NULL && strstr(err->msg, name) == NULL)
		arrow_error_prefix(err, name);
	return -1;
}

/*
 * Set err to "where: detail", the detail formatted from fmt and ap: the
 * error helpers of the schema layout and of the column loaders.  Returns -1.
 */
int
arrow_verror_in(ArrowError *err, ArrowErrorCode code, int64_t offset,
				const char *where, const char *fmt, va_list ap)
{
	char		detail[700];

	vsnprintf(detail, sizeof(detail), fmt, ap);
	return arrow_error(err, code, offset, "%s: %s", where, detail);
}

/* ---------------------------------------------------------------- sources */

static int
fd_read(void *ctx, void *dst, size_t len, uint64_t offset)
{
	int			fd = (int) (intptr_t) ctx;
	uint8_t    *p = dst;

	while (len > 0)
	{
		ssize_t		n;

		if (offset > (uint64_t) INT64_MAX)
			return EINVAL;
		n = pread(fd, p, len, (off_t) offset);
		if (n < 0)
		{
			if (errno == EINTR)
				continue;
			return errno ? errno : EIO;
		}
		if (n == 0)
			return EIO;			/* short read: the file shrank */
		p += n;
		len -= (size_t) n;
		offset += (uint64_t) n;
	}
	return 0;
}

int
arrow_source_fd(ArrowSource *src, int fd, const char *name,
				int64_t size_limit, ArrowError *err)
{
	struct stat st;

	memset(src, 0, sizeof(*src));
	src->name = name ? name : "(arrow)";
	if (fstat(fd, &st) < 0)
	{
		int			e = errno;

		arrow_error(err, ARROW_ERR_IO, -1, "%s: could not stat file: %s",
					src->name, strerror(e));
		if (err)
			err->errno_saved = e;
		return -1;
	}
	src->size = st.st_size > 0 ? (uint64_t) st.st_size : 0;
	if (size_limit >= 0 && (uint64_t) size_limit < src->size)
		src->size = (uint64_t) size_limit;
	src->map = NULL;
	src->read = fd_read;
	src->ctx = (void *) (intptr_t) fd;
	return 0;
}

static int
mem_read(void *ctx, void *dst, size_t len, uint64_t offset)
{
	/* callers check [offset, offset + len) against the source size */
	memcpy(dst, (const uint8_t *) ctx + offset, len);
	return 0;
}

void
arrow_source_mem(ArrowSource *src, const void *data, size_t len,
				 const char *name)
{
	memset(src, 0, sizeof(*src));
	src->name = name ? name : "(memory)";
	src->size = len;
	src->map = data;
	src->read = mem_read;
	src->ctx = (void *) data;
}

/* Read [off, off + len) of the source, which must lie within it. */
static int
src_read(const ArrowSource *src, void *dst, size_t len, uint64_t off,
		 ArrowError *err)
{
	int			e;

	if (off > src->size || len > src->size - off)
		return arrow_error(err, ARROW_ERR_CORRUPT, (int64_t) off,
						   "%s: %zu bytes at offset %" PRIu64 " extend past the end of the data (%" PRIu64 " bytes)",
						   src_name(src), len, off, src->size);
	if (len == 0)
		return 0;
	if (src->map)
	{
		memcpy(dst, src->map + off, len);
		arrow_src_count_mapped(src, len);
		return 0;
	}
	e = src->read(src->ctx, dst, len, off);
	if (e != 0)
	{
		arrow_error(err, ARROW_ERR_IO, (int64_t) off,
					"%s: could not read %zu bytes at offset %" PRIu64 ": %s",
					src_name(src), len, off, strerror(e));
		if (err)
			err->errno_saved = e;
		return -1;
	}
	return 0;
}

/*
 * Bytes [off, off + len) of the source: in place when mapped, otherwise read
 * into arena memory.
 */
static const uint8_t *
src_bytes(const ArrowSource *src, uint64_t off, size_t len, ArrowArena *arena,
		  ArrowError *err)
{
	uint8_t    *p;

	if (off > src->size || len > src->size - off)
	{
		arrow_error(err, ARROW_ERR_CORRUPT, (int64_t) off,
					"%s: %zu bytes at offset %" PRIu64 " extend past the end of the data (%" PRIu64 " bytes)",
					src_name(src), len, off, src->size);
		return NULL;
	}
	if (src->map)
	{
		arrow_src_count_mapped(src, len);
		return src->map + off;
	}
	p = arrow_arena_alloc(arena, len, err);
	if (p == NULL || src_read(src, p, len, off, err) < 0)
		return NULL;
	return p;
}

static int32_t
load_i32(const uint8_t *p)
{
	return (int32_t) fbr_load_u32(p);
}

/* -------------------------------------------------------------- messages */

typedef struct MessageInfo
{
	int16_t		version;
	uint8_t		header_type;
	FbrTable	header;
	bool		has_header;
	int64_t		body_len;
} MessageInfo;

static int
decode_message(const FbrReader *r, MessageInfo *mi)
{
	FbrTable	root;

	if (fbr_root(r, &root) < 0 ||
		fbr_get_i16(&root, MESSAGE_VERSION, 0, &mi->version) < 0 ||
		fbr_get_u8(&root, MESSAGE_HEADER_TYPE, 0, &mi->header_type) < 0 ||
		fbr_get_table(&root, MESSAGE_HEADER, &mi->header, &mi->has_header) < 0 ||
		fbr_get_i64(&root, MESSAGE_BODY_LENGTH, 0, &mi->body_len) < 0)
		return -1;
	if (mi->version < ARROW_METADATA_V4)
		return arrow_error(r->err, ARROW_ERR_UNSUPPORTED, r->base,
						   "%s: %s uses Arrow metadata version V%d; V4 or later is required",
						   r->name, r->what, mi->version + 1);
	if (!mi->has_header)
		return arrow_error(r->err, ARROW_ERR_CORRUPT, r->base,
						   "%s: %s has no header at offset %" PRId64,
						   r->name, r->what, r->base);
	return 0;
}

/*
 * The prefix of the message at off, of at most `avail` bytes: continuation
 * marker (optional, legacy streams lack it) and metadata length.  *prefix is
 * 4 or 8; *meta_len 0 means end of stream.
 */
static int
read_message_prefix(const ArrowSource *src, uint64_t off, uint64_t avail,
					int *prefix, int32_t *meta_len, ArrowError *err)
{
	uint8_t		b[8];

	if (avail < 4)
		return arrow_error(err, ARROW_ERR_CORRUPT, (int64_t) off,
						   "%s: truncated message at offset %" PRIu64,
						   src_name(src), off);
	if (src_read(src, b, 4, off, err) < 0)
		return -1;
	if (fbr_load_u32(b) == CONTINUATION)
	{
		if (avail < 8)
			return arrow_error(err, ARROW_ERR_CORRUPT, (int64_t) off,
							   "%s: truncated message at offset %" PRIu64,
							   src_name(src), off);
		if (src_read(src, b + 4, 4, off + 4, err) < 0)
			return -1;
		*prefix = 8;
		*meta_len = load_i32(b + 4);
	}
	else
	{
		*prefix = 4;
		*meta_len = load_i32(b);
	}
	if (*meta_len < 0)
		return arrow_error(err, ARROW_ERR_CORRUPT, (int64_t) off,
						   "%s: message at offset %" PRIu64 " has negative metadata length %" PRId32,
						   src_name(src), off, *meta_len);
	return 0;
}

static int
decode_record_batch(const ArrowSource *src, const FbrTable *rb,
					int n_nodes, int n_buffers, ArrowArena *arena,
					ArrowBatchMeta *meta, const char *label, ArrowError *err)
{
	FbrVector	nv,
				bv,
				vc;
	FbrTable	ct;
	bool		present,
				vc_present;
	uint32_t	i;
	int64_t		n_variadic = 0;
	const char *name = src_name(src);

	if (fbr_get_i64(rb, RB_LENGTH, 0, &meta->length) < 0 ||
		fbr_get_vector(rb, RB_NODES, FIELD_NODE_SIZE, &nv, &present) < 0 ||
		fbr_get_vector(rb, RB_BUFFERS, BUFFER_SIZE, &bv, &present) < 0 ||
		fbr_get_vector(rb, RB_VARIADIC_COUNTS, 8, &vc, &vc_present) < 0 ||
		fbr_get_table(rb, RB_COMPRESSION, &ct, &present) < 0)
		return -1;
	/* view fields' data buffers come on top of the schema's */
	if (vc_present && vc.n > 0)
	{
		if (vc.n > (uint32_t) INT_MAX / 2)
			return arrow_error(err, ARROW_ERR_CORRUPT, fbr_table_offset(rb),
							   "%s: %s: too many variadic buffer counts", name, label);
		meta->n_var_counts = (int) vc.n;
		meta->var_counts = arrow_arena_alloc(arena, sizeof(int64_t) * vc.n, err);
		if (meta->var_counts == NULL)
			return -1;
		for (i = 0; i < vc.n; i++)
		{
			int64_t		c = (int64_t) fbr_load_u64(fbr_vector_elem(&vc, i));

			if (c < 0 || c > INT_MAX / 2 || n_variadic > INT_MAX / 2 - c)
				return arrow_error(err, ARROW_ERR_CORRUPT, fbr_table_offset(rb),
								   "%s: %s: variadic buffer count %" PRId64 " is out of range",
								   name, label, c);
			meta->var_counts[i] = c;
			n_variadic += c;
		}
	}
	if (n_buffers >= 0)
		n_buffers += (int) n_variadic;
	if (meta->length < 0)
		return arrow_error(err, ARROW_ERR_CORRUPT, fbr_table_offset(rb),
						   "%s: %s: negative length %" PRId64,
						   name, label, meta->length);

	meta->codec = ARROW_CODEC_NONE;
	if (present)
	{
		uint8_t		codec,
					method;

		if (fbr_get_u8(&ct, 0, 0, &codec) < 0 || fbr_get_u8(&ct, 1, 0, &method) < 0)
			return -1;
		if (codec > 1)
			return arrow_error(err, ARROW_ERR_CORRUPT, fbr_table_offset(&ct),
							   "%s: %s: unknown compression codec %u",
							   name, label, (unsigned) codec);
		if (method != 0)
			return arrow_error(err, ARROW_ERR_UNSUPPORTED, fbr_table_offset(&ct),
							   "%s: %s: unsupported body compression method %u",
							   name, label, (unsigned) method);
		meta->codec = codec == 0 ? ARROW_CODEC_LZ4_FRAME : ARROW_CODEC_ZSTD;
	}

	if ((n_nodes >= 0 && nv.n != (uint32_t) n_nodes) ||
		(n_buffers >= 0 && bv.n != (uint32_t) n_buffers))
		return arrow_error(err, ARROW_ERR_CORRUPT, fbr_table_offset(rb),
						   "%s: %s: %" PRIu32 " field nodes and %" PRIu32 " buffers, but the schema needs %d and %d",
						   name, label, nv.n, bv.n, n_nodes, n_buffers);
	if (nv.n > INT_MAX || bv.n > INT_MAX)
		return arrow_error(err, ARROW_ERR_CORRUPT, fbr_table_offset(rb),
						   "%s: %s: too many nodes or buffers", name, label);

	meta->n_nodes = (int) nv.n;
	meta->nodes = arrow_arena_alloc(arena, sizeof(ArrowFieldNode) * (nv.n + 1), err);
	meta->n_buffers = (int) bv.n;
	meta->buffers = arrow_arena_alloc(arena, sizeof(ArrowBufferRef) * (bv.n + 1), err);
	if (meta->nodes == NULL || meta->buffers == NULL)
		return -1;

	for (i = 0; i < nv.n; i++)
	{
		const uint8_t *p = fbr_vector_elem(&nv, i);
		ArrowFieldNode *n = &meta->nodes[i];

		n->length = (int64_t) fbr_load_u64(p);
		n->null_count = (int64_t) fbr_load_u64(p + 8);
		if (n->length < 0 || n->null_count < 0 || n->null_count > n->length)
			return arrow_error(err, ARROW_ERR_CORRUPT, fbr_table_offset(rb),
							   "%s: %s: field node %" PRIu32 " has length %" PRId64 " and null count %" PRId64,
							   name, label, i, n->length, n->null_count);
	}
	for (i = 0; i < bv.n; i++)
	{
		const uint8_t *p = fbr_vector_elem(&bv, i);
		int64_t		off = (int64_t) fbr_load_u64(p);
		int64_t		len = (int64_t) fbr_load_u64(p + 8);

		if (off < 0 || len < 0 || off > meta->body_len ||
			len > meta->body_len - off)
			return arrow_error(err, ARROW_ERR_CORRUPT,
							   meta->body_offset + (off > 0 && off <= meta->body_len ? off : 0),
							   "%s: %s: buffer %" PRIu32 " (offset %" PRId64 ", length %" PRId64 ") extends past the message body (%" PRId64 " bytes at offset %" PRId64 ")",
							   name, label, i, off, len, meta->body_len,
							   meta->body_offset);
		meta->buffers[i].offset = meta->body_offset + off;
		meta->buffers[i].length = len;
	}
	return 0;
}

/*
 * Field f's buffers, in the message's pre-order list raw (from *cursor),
 * into their schema positions in meta->buffers, a view field's variadic
 * data buffers (which follow its views buffer) into meta->variadic.
 */
static int
remap_field(const ArrowField *f, const ArrowBufferRef *raw, int n_raw, int *cursor,
			int *vfield, ArrowBatchMeta *meta, const char *name, const char *label,
			ArrowError *err)
{
	int			k;

	if (*cursor > n_raw - f->n_buffers)
		return arrow_error(err, ARROW_ERR_CORRUPT, -1,
						   "%s: %s: too few buffers for column \"%s\"", name, label, f->name);
	for (k = 0; k < f->n_buffers; k++)
		meta->buffers[f->buffer_index + k] = raw[(*cursor)++];
	if (f->type.view)
	{
		int64_t		c;

		if (*vfield >= meta->n_var_counts)
			return arrow_error(err, ARROW_ERR_CORRUPT, -1,
							   "%s: %s: no variadic buffer count for view column \"%s\"",
							   name, label, f->name);
		c = meta->var_counts[(*vfield)++];
		if (c > n_raw - *cursor)
			return arrow_error(err, ARROW_ERR_CORRUPT, -1,
							   "%s: %s: view column \"%s\" needs %" PRId64 " data buffers, the message has %d more",
							   name, label, f->name, c, n_raw - *cursor);
		meta->var_first[f->node_index] = meta->n_variadic;
		meta->var_count[f->node_index] = (int) c;
		for (k = 0; k < c; k++)
			meta->variadic[meta->n_variadic++] = raw[(*cursor)++];
	}
	if (!f->has_dict)
		for (k = 0; k < f->n_children; k++)
			if (remap_field(&f->children[k], raw, n_raw, cursor, vfield, meta, name, label,
							err) < 0)
				return -1;
	return 0;
}

/* a record batch of a schema with view fields: buffers to their schema positions */
static int
remap_view_buffers(const ArrowSchema *schema, ArrowArena *arena, ArrowBatchMeta *meta,
				   const char *name, const char *label, ArrowError *err)
{
	ArrowBufferRef *raw;
	int			n_raw = meta->n_buffers,
				cursor = 0,
				vfield = 0,
				i;

	if (schema->n_view_fields == 0)
	{
		for (i = 0; i < meta->n_var_counts; i++)
			if (meta->var_counts[i] != 0)
				return arrow_error(err, ARROW_ERR_CORRUPT, -1,
								   "%s: %s: variadic buffers, but the schema has no view column",
								   name, label);
		return 0;
	}
	if (meta->n_var_counts != schema->n_view_fields)
		return arrow_error(err, ARROW_ERR_CORRUPT, -1,
						   "%s: %s: %d variadic buffer counts for %d view columns",
						   name, label, meta->n_var_counts, schema->n_view_fields);
	raw = arrow_arena_alloc(arena, sizeof(ArrowBufferRef) * (n_raw + 1), err);
	meta->variadic = arrow_arena_alloc(arena, sizeof(ArrowBufferRef) * (n_raw + 1), err);
	meta->var_first = arrow_arena_alloc(arena, sizeof(int) * (meta->n_nodes + 1), err);
	meta->var_count = arrow_arena_alloc(arena, sizeof(int) * (meta->n_nodes + 1), err);
	if (raw == NULL || meta->variadic == NULL || meta->var_first == NULL ||
		meta->var_count == NULL)
		return -1;
	memcpy(raw, meta->buffers, sizeof(ArrowBufferRef) * n_raw);
	memset(meta->var_count, 0, sizeof(int) * (meta->n_nodes + 1));
	for (i = 0; i < schema->n_fields; i++)
		if (remap_field(&schema->fields[i], raw, n_raw, &cursor, &vfield, meta, name, label,
						err) < 0)
			return -1;
	if (cursor != n_raw)
		return arrow_error(err, ARROW_ERR_CORRUPT, -1, "%s: %s: %d buffers left over",
						   name, label, n_raw - cursor);
	meta->n_buffers = schema->n_buffers;
	return 0;
}

int
arrow_read_message_meta(ArrowFile *file, const ArrowBlock *blk,
						int expect_type, int n_nodes, int n_buffers,
						ArrowArena *arena, ArrowBatchMeta *meta,
						const char *label, ArrowError *err)
{
	const ArrowSource *src = &file->src;
	const char *name = src_name(src);
	int64_t		limit = file->data_end;
	int			prefix;
	int32_t		mlen;
	const uint8_t *fb;
	FbrReader	r;
	MessageInfo mi;
	FbrTable	rb;

	memset(meta, 0, sizeof(*meta));
	meta->codec = ARROW_CODEC_NONE;
	if (blk->offset < 0 || blk->meta_len < 4 || blk->body_len < 0 ||
		blk->offset > limit || blk->meta_len > limit - blk->offset)
		return arrow_error(err, ARROW_ERR_CORRUPT, blk->offset,
						   "%s: %s: message at offset %" PRId64 " (metadata %" PRId32 " bytes) lies outside the data (%" PRId64 " bytes)",
						   name, label, blk->offset, blk->meta_len, limit);
	if (read_message_prefix(src, (uint64_t) blk->offset, (uint64_t) blk->meta_len,
							&prefix, &mlen, err) < 0)
		return -1;
	if (mlen == 0 || mlen > blk->meta_len - prefix)
		return arrow_error(err, ARROW_ERR_CORRUPT, blk->offset,
						   "%s: %s: message at offset %" PRId64 " has metadata length %" PRId32 ", but its block allows %" PRId32,
						   name, label, blk->offset, mlen, blk->meta_len - prefix);
	fb = src_bytes(src, (uint64_t) blk->offset + prefix, (size_t) mlen, arena, err);
	if (fb == NULL)
		return -1;
	fbr_reader_init(&r, fb, (size_t) mlen, blk->offset + prefix, name, label, err);
	if (decode_message(&r, &mi) < 0)
		return -1;
	if (mi.header_type != expect_type)
		return arrow_error(err, ARROW_ERR_CORRUPT, blk->offset,
						   "%s: %s: message at offset %" PRId64 " has type %u, expected %s",
						   name, label, blk->offset, (unsigned) mi.header_type,
						   expect_type == ARROW_MSG_RECORD_BATCH ? "a record batch" :
						   "a dictionary batch");

	meta->body_offset = blk->offset + blk->meta_len;
	meta->body_len = mi.body_len;
	if (mi.body_len < 0 || mi.body_len > limit - meta->body_offset)
		return arrow_error(err, ARROW_ERR_CORRUPT, meta->body_offset,
						   "%s: %s: message body of %" PRId64 " bytes at offset %" PRId64 " extends past the end of the data (%" PRId64 ")",
						   name, label, mi.body_len, meta->body_offset, limit);

	if (expect_type == ARROW_MSG_DICTIONARY_BATCH)
	{
		bool		present;

		if (fbr_get_i64(&mi.header, DB_ID, 0, &meta->dict_id) < 0 ||
			fbr_get_bool(&mi.header, DB_IS_DELTA, false, &meta->is_delta) < 0 ||
			fbr_get_table(&mi.header, DB_DATA, &rb, &present) < 0)
			return -1;
		if (!present)
			return arrow_error(err, ARROW_ERR_CORRUPT, blk->offset,
							   "%s: %s: dictionary batch without data at offset %" PRId64,
							   name, label, blk->offset);
	}
	else
		rb = mi.header;
	if (decode_record_batch(src, &rb, n_nodes, n_buffers, arena, meta, label, err) < 0)
		return -1;
	if (expect_type == ARROW_MSG_RECORD_BATCH)
		return remap_view_buffers(&file->schema, arena, meta, name, label, err);
	return 0;
}

int
arrow_read_batch_meta(ArrowFile *file, int batch, ArrowArena *arena,
					  ArrowBatchMeta *meta, ArrowError *err)
{
	char		label[64];
	int			c;

	if (batch < 0 || batch >= file->n_batches)
		return arrow_error(err, ARROW_ERR_INVALID, -1,
						   "%s: record batch %d does not exist (the file has %d)",
						   src_name(&file->src), batch, file->n_batches);
	if (file->parquet != NULL)
		return parquet_batch_meta(file, batch, arena, meta, err);
	snprintf(label, sizeof(label), "record batch %d", batch);
	if (arrow_read_message_meta(file, &file->batches[batch],
								ARROW_MSG_RECORD_BATCH,
								file->schema.n_nodes, file->schema.n_buffers,
								arena, meta, label, err) < 0)
		return arrow_error_named(err, src_name(&file->src));

	/*
	 * Every top-level column has the batch's length.  Loading a column checks
	 * it too, but a scan that loads no column (count(*)) takes the batch's
	 * length as its row count: a length no column has must not get that far.
	 */
	/* with no column nothing bounds the length: a scan would loop over it */
	if (file->schema.n_fields == 0 && meta->length > INT32_MAX)
		return arrow_error(err, ARROW_ERR_CORRUPT, file->batches[batch].offset,
						   "%s: record batch %d (message at offset %" PRId64 "): %" PRId64 " rows "
						   "of no column (more than %d)", src_name(&file->src), batch,
						   file->batches[batch].offset, meta->length, INT32_MAX);
	for (c = 0; c < file->schema.n_fields; c++)
	{
		const ArrowField *f = &file->schema.fields[c];

		if (f->node_index >= 0 && f->node_index < meta->n_nodes &&
			meta->nodes[f->node_index].length != meta->length)
			return arrow_error(err, ARROW_ERR_CORRUPT, file->batches[batch].offset,
							   "%s: record batch %d (message at offset %" PRId64 "): column \"%s\" has %" PRId64 " rows, the batch %" PRId64,
							   src_name(&file->src), batch, file->batches[batch].offset,
							   f->name, meta->nodes[f->node_index].length, meta->length);
	}
	return 0;
}

/* ------------------------------------------------------------ file format */

typedef struct FooterInfo
{
	ArrowSchema schema;
	int			n_dicts;
	ArrowBlock *dicts;
	int			n_batches;
	ArrowBlock *batches;
} FooterInfo;

/*
 * Is there a plausible trailer ending at `end`?  Sets the footer's position.
 * Only looks at the 10 trailer bytes and the leading magic.
 */
static int
check_trailer(const ArrowSource *src, uint64_t end, int64_t *footer_off,
			  int32_t *footer_len, ArrowError *err)
{
	uint8_t		t[TRAILER_LEN];
	int32_t		flen;

	if (end < LEADING_MAGIC_LEN + TRAILER_LEN)
		return arrow_error(err, ARROW_ERR_INCOMPLETE, (int64_t) end,
						   "%s: file of %" PRIu64 " bytes is too short for an Arrow file",
						   src_name(src), end);
	if (src_read(src, t, TRAILER_LEN, end - TRAILER_LEN, err) < 0)
		return -1;
	if (memcmp(t + 4, arrow_magic, sizeof(arrow_magic)) != 0)
		return arrow_error(err, ARROW_ERR_INCOMPLETE, (int64_t) end - 6,
						   "%s: no Arrow trailer at the end of the file (offset %" PRIu64 "): truncated, or an interrupted append",
						   src_name(src), end - 6);
	flen = load_i32(t);
	if (flen <= 0 ||
		(uint64_t) flen > end - TRAILER_LEN - LEADING_MAGIC_LEN)
		return arrow_error(err, ARROW_ERR_CORRUPT, (int64_t) end - TRAILER_LEN,
						   "%s: footer length %" PRId32 " at offset %" PRIu64 " is out of range",
						   src_name(src), flen, end - TRAILER_LEN);
	*footer_len = flen;
	*footer_off = (int64_t) (end - TRAILER_LEN) - flen;
	return 0;
}

static int
decode_blocks(const FbrTable *ft, int id, const char *what, int64_t limit,
			  ArrowArena *arena, int *n_out, ArrowBlock **out, ArrowError *err)
{
	FbrVector	v;
	bool		present;
	uint32_t	i;

	*n_out = 0;
	*out = NULL;
	if (fbr_get_vector(ft, id, BLOCK_SIZE, &v, &present) < 0)
		return -1;
	if (v.n > INT_MAX / BLOCK_SIZE)
		return arrow_error(err, ARROW_ERR_CORRUPT, fbr_table_offset(ft),
						   "%s: footer lists %" PRIu32 " %s", ft->r->name, v.n, what);
	*out = arrow_arena_alloc(arena, sizeof(ArrowBlock) * ((size_t) v.n + 1), err);
	if (*out == NULL)
		return -1;
	for (i = 0; i < v.n; i++)
	{
		const uint8_t *p = fbr_vector_elem(&v, i);
		ArrowBlock *b = &(*out)[i];

		b->offset = (int64_t) fbr_load_u64(p);
		b->meta_len = load_i32(p + 8);
		b->body_len = (int64_t) fbr_load_u64(p + 16);
		/* the block must lie between the leading magic and the footer */
		if (b->offset < LEADING_MAGIC_LEN || b->offset > limit ||
			b->meta_len < 8 || b->meta_len > limit - b->offset ||
			b->body_len < 0 || b->body_len > limit - b->offset - b->meta_len)
			return arrow_error(err, ARROW_ERR_CORRUPT, fbr_table_offset(ft),
							   "%s: footer: %s block %" PRIu32 " (offset %" PRId64 ", metadata %" PRId32 ", body %" PRId64 ") does not lie within the data before the footer at offset %" PRId64,
							   ft->r->name, what, i, b->offset, b->meta_len,
							   b->body_len, limit);
	}
	*n_out = (int) v.n;
	return 0;
}

/* Read and decode the footer at [footer_off, footer_off + footer_len). */
static int
decode_footer(const ArrowSource *src, int64_t footer_off, int32_t footer_len,
			  ArrowArena *arena, FooterInfo *fi, ArrowError *err)
{
	const uint8_t *buf;
	FbrReader	r;
	FbrTable	root,
				st;
	int16_t		version;
	bool		present;

	memset(fi, 0, sizeof(*fi));
	buf = src_bytes(src, (uint64_t) footer_off, (size_t) footer_len, arena, err);
	if (buf == NULL)
		return -1;
	fbr_reader_init(&r, buf, (size_t) footer_len, footer_off, src_name(src),
					"footer", err);
	if (fbr_root(&r, &root) < 0 ||
		fbr_get_i16(&root, FOOTER_VERSION, 0, &version) < 0 ||
		fbr_get_table(&root, FOOTER_SCHEMA, &st, &present) < 0)
		return -1;
	if (version < ARROW_METADATA_V4)
		return arrow_error(err, ARROW_ERR_UNSUPPORTED, footer_off,
						   "%s: footer uses Arrow metadata version V%d; V4 or later is required",
						   src_name(src), version + 1);
	if (!present)
		return arrow_error(err, ARROW_ERR_CORRUPT, footer_off,
						   "%s: footer at offset %" PRId64 " has no schema",
						   src_name(src), footer_off);
	if (arrow_decode_schema(&st, arena, &fi->schema, err) < 0 ||
		decode_blocks(&root, FOOTER_DICTIONARIES, "dictionary", footer_off,
					  arena, &fi->n_dicts, &fi->dicts, err) < 0 ||
		decode_blocks(&root, FOOTER_BATCHES, "record batch", footer_off,
					  arena, &fi->n_batches, &fi->batches, err) < 0)
		return -1;
	return 0;
}

/* Does [0, end) form a file whose footer decodes? */
static int
check_file_end(const ArrowSource *src, uint64_t end, ArrowError *err)
{
	ArrowArena	tmp;
	FooterInfo	fi;
	int64_t		foff;
	int32_t		flen;
	int			rc;

	if (check_trailer(src, end, &foff, &flen, err) < 0)
		return -1;
	arrow_arena_init(&tmp, NULL);
	rc = decode_footer(src, foff, flen, &tmp, &fi, err);
	arrow_arena_free_all(&tmp);
	return rc;
}

int
arrow_find_last_footer(const ArrowSource *src, int64_t *length, ArrowError *err)
{
	enum
	{
	WINDOW = 64 * 1024};
	uint8_t		head[LEADING_MAGIC_LEN];
	uint8_t    *win;
	uint64_t	hi;
	ArrowError	scratch;

	*length = -1;
	if (src->size < LEADING_MAGIC_LEN + TRAILER_LEN)
		return arrow_error(err, ARROW_ERR_CORRUPT, 0,
						   "%s: file of %" PRIu64 " bytes is too short for an Arrow file",
						   src_name(src), src->size);
	if (src_read(src, head, sizeof(head), 0, err) < 0)
		return -1;
	if (memcmp(head, arrow_magic, sizeof(arrow_magic)) != 0)
		return arrow_error(err, ARROW_ERR_CORRUPT, 0,
						   "%s: not an Arrow file (no ARROW1 magic at offset 0)",
						   src_name(src));
	if (check_file_end(src, src->size, &scratch) == 0)
	{
		*length = (int64_t) src->size;
		return 0;
	}

	/*
	 * Scan backwards for "ARROW1" ending at some L < size, window by window
	 * (windows overlap by 5 bytes so no occurrence is split).  The smallest
	 * possible file end is LEADING_MAGIC_LEN + TRAILER_LEN.
	 */
	win = src->map ? NULL : malloc(WINDOW);
	if (!src->map && win == NULL)
		return arrow_error(err, ARROW_ERR_NOMEM, -1, "%s: out of memory",
						   src_name(src));
	hi = src->size - 1;			/* candidate ends are < size */
	while (hi >= LEADING_MAGIC_LEN + TRAILER_LEN)
	{
		/* window covers file bytes [lo, hi) and ends candidates in (lo+5, hi] */
		uint64_t	lo = hi > WINDOW ? hi - WINDOW : 0;
		const uint8_t *w;
		uint64_t	end;

		if (src->map)
			w = src->map + lo;
		else
		{
			if (src_read(src, win, (size_t) (hi - lo), lo, err) < 0)
			{
				free(win);
				return -1;
			}
			w = win;
		}
		for (end = hi; end >= lo + 6 && end >= LEADING_MAGIC_LEN + TRAILER_LEN; end--)
		{
			if (w[end - lo - 1] != '1' ||
				memcmp(w + (end - lo - 6), arrow_magic, 6) != 0)
				continue;
			if (check_file_end(src, end, &scratch) == 0)
			{
				free(win);
				*length = (int64_t) end;
				return 0;
			}
		}
		if (lo == 0)
			break;
		hi = lo + 5;
	}
	free(win);
	return arrow_error(err, ARROW_ERR_INCOMPLETE, -1,
					   "%s: no complete Arrow footer found in %" PRIu64 " bytes",
					   src_name(src), src->size);
}

static int
open_file_format(ArrowFile *file, const ArrowOpenOptions *opts, ArrowError *err)
{
	ArrowSource *src = &file->src;
	FooterInfo	fi;
	int64_t		foff;
	int32_t		flen;

	if (check_trailer(src, src->size, &foff, &flen, err) < 0 ||
		(opts && opts->recover_tail && check_file_end(src, src->size, err) < 0))
	{
		int64_t		len;

		if (!(opts && opts->recover_tail))
			return -1;
		if (arrow_find_last_footer(src, &len, err) < 0)
			return -1;
		src->size = (uint64_t) len;
		if (check_trailer(src, src->size, &foff, &flen, err) < 0)
			return -1;
	}
	if (decode_footer(src, foff, flen, &file->arena, &fi, err) < 0)
		return -1;
	file->schema = fi.schema;
	file->n_dicts = fi.n_dicts;
	file->dicts = fi.dicts;
	file->n_batches = fi.n_batches;
	file->batches = fi.batches;
	file->batch_dict_limit = NULL;
	file->data_end = foff;
	file->footer_len = flen;
	return 0;
}

/* ---------------------------------------------------------- stream format */

/* A growable array of blocks in arena memory. */
typedef struct BlockList
{
	ArrowBlock *v;
	int		   *limits;			/* for batches: dictionaries before each */
	int			n;
	int			cap;
} BlockList;

static int
block_list_add(BlockList *l, ArrowArena *arena, const ArrowBlock *b, int limit,
			   bool with_limits, const char *name, ArrowError *err)
{
	if (l->n == l->cap)
	{
		int			cap = l->cap ? l->cap * 2 : 16;
		ArrowBlock *v;
		int		   *lim = NULL;

		if (l->cap > INT_MAX / 4)
			return arrow_error(err, ARROW_ERR_CORRUPT, b->offset,
							   "%s: too many messages", name);
		v = arrow_arena_alloc(arena, sizeof(ArrowBlock) * (size_t) cap, err);
		if (v == NULL)
			return -1;
		if (with_limits)
		{
			lim = arrow_arena_alloc(arena, sizeof(int) * (size_t) cap, err);
			if (lim == NULL)
				return -1;
			if (l->n > 0)
				memcpy(lim, l->limits, sizeof(int) * (size_t) l->n);
		}
		if (l->n > 0)
			memcpy(v, l->v, sizeof(ArrowBlock) * (size_t) l->n);
		l->v = v;
		l->limits = lim;
		l->cap = cap;
	}
	l->v[l->n] = *b;
	if (with_limits)
		l->limits[l->n] = limit;
	l->n++;
	return 0;
}

static int
open_stream_format(ArrowFile *file, ArrowError *err)
{
	ArrowSource *src = &file->src;
	const char *name = src_name(src);
	uint64_t	off = 0;
	bool		have_schema = false;
	BlockList	batches,
				dicts;
	ArrowArena	scratch;
	int			rc = -1;

	memset(&batches, 0, sizeof(batches));
	memset(&dicts, 0, sizeof(dicts));
	arrow_arena_init(&scratch, file->arena.allocator);

	while (off < src->size)
	{
		int			prefix;
		int32_t		mlen;
		const uint8_t *fb;
		FbrReader	r;
		MessageInfo mi;
		ArrowBlock	blk;
		uint64_t	body_off;
		char		what[64];

		if (read_message_prefix(src, off, src->size - off, &prefix, &mlen, err) < 0)
			goto done;
		if (mlen == 0)
			break;				/* end-of-stream marker */
		if ((uint64_t) mlen > src->size - off - prefix)
		{
			arrow_error(err, ARROW_ERR_CORRUPT, (int64_t) off,
						"%s: metadata of the message at offset %" PRIu64 " (%" PRId32 " bytes) extends past the end of the data (%" PRIu64 " bytes)",
						name, off, mlen, src->size);
			goto done;
		}
		snprintf(what, sizeof(what), "message at offset %" PRIu64, off);
		fb = src_bytes(src, off + prefix, (size_t) mlen, &scratch, err);
		if (fb == NULL)
			goto done;
		fbr_reader_init(&r, fb, (size_t) mlen, (int64_t) (off + prefix), name,
						what, err);
		if (decode_message(&r, &mi) < 0)
			goto done;
		body_off = off + prefix + (uint64_t) mlen;
		if (mi.body_len < 0 || (uint64_t) mi.body_len > src->size - body_off)
		{
			arrow_error(err, ARROW_ERR_CORRUPT, (int64_t) off,
						"%s: body of the message at offset %" PRIu64 " (%" PRId64 " bytes) extends past the end of the data (%" PRIu64 " bytes)",
						name, off, mi.body_len, src->size);
			goto done;
		}
		blk.offset = (int64_t) off;
		blk.meta_len = prefix + mlen;	/* cannot overflow: mlen < size - 8 */
		blk.body_len = mi.body_len;
		if (!have_schema && mi.header_type != ARROW_MSG_SCHEMA)
		{
			arrow_error(err, ARROW_ERR_CORRUPT, (int64_t) off,
						"%s: the first message (offset %" PRIu64 ") is not a schema",
						name, off);
			goto done;
		}
		if ((uint64_t) prefix + (uint64_t) mlen > INT32_MAX)
		{
			arrow_error(err, ARROW_ERR_CORRUPT, (int64_t) off,
						"%s: message at offset %" PRIu64 " is too large",
						name, off);
			goto done;
		}
		switch (mi.header_type)
		{
			case ARROW_MSG_SCHEMA:
				if (have_schema)
				{
					arrow_error(err, ARROW_ERR_CORRUPT, (int64_t) off,
								"%s: a second schema message at offset %" PRIu64,
								name, off);
					goto done;
				}
				if (arrow_decode_schema(&mi.header, &file->arena, &file->schema,
										err) < 0)
					goto done;
				have_schema = true;
				break;
			case ARROW_MSG_DICTIONARY_BATCH:
				if (block_list_add(&dicts, &file->arena, &blk, 0, false, name,
								   err) < 0)
					goto done;
				break;
			case ARROW_MSG_RECORD_BATCH:
				if (block_list_add(&batches, &file->arena, &blk, dicts.n, true,
								   name, err) < 0)
					goto done;
				break;
			default:
				arrow_error(err, ARROW_ERR_UNSUPPORTED, (int64_t) off,
							"%s: message at offset %" PRIu64 " has unsupported type %u",
							name, off, (unsigned) mi.header_type);
				goto done;
		}
		off = body_off + (uint64_t) mi.body_len;
	}
	if (!have_schema)
	{
		arrow_error(err, ARROW_ERR_CORRUPT, 0,
					"%s: no schema message: empty or not an Arrow stream", name);
		goto done;
	}
	file->n_batches = batches.n;
	file->batches = batches.v;
	file->batch_dict_limit = batches.limits;
	file->n_dicts = dicts.n;
	file->dicts = dicts.v;
	file->data_end = (int64_t) off;
	file->footer_len = 0;
	rc = 0;
done:
	arrow_arena_free_all(&scratch);
	return rc;
}

/* ------------------------------------------------------------ open/close */

int
arrow_open(ArrowFile *file, const ArrowSource *src,
		   const ArrowOpenOptions *opts, ArrowError *err)
{
	uint8_t		head[LEADING_MAGIC_LEN];
	int			rc;

	memset(file, 0, sizeof(*file));
	file->src = *src;
	if (file->src.name == NULL)
		file->src.name = "(arrow)";
	arrow_arena_init(&file->arena, opts && opts->allocator ? opts->allocator :
					 &arrow_malloc_allocator);
	if (src->size > (uint64_t) INT64_MAX)
	{
		arrow_error(err, ARROW_ERR_INVALID, -1, "%s: source too large",
					file->src.name);
		return -1;
	}

	if (src->size >= 6 && src_read(src, head, 6, 0, err) == 0 &&
		memcmp(head, arrow_magic, 6) == 0)
	{
		file->format = ARROW_FORMAT_FILE;
		rc = open_file_format(file, opts, err);
	}
	else if (src->size >= PARQUET_MAGIC_LEN &&
			 src_read(src, head, PARQUET_MAGIC_LEN, 0, err) == 0 &&
			 memcmp(head, parquet_magic, PARQUET_MAGIC_LEN) == 0)
		rc = parquet_open(file, opts, err);	/* lays the schema out */
	else
	{
		file->format = ARROW_FORMAT_STREAM;
		rc = open_stream_format(file, err);
	}
	if (rc == 0 && file->format != ARROW_FORMAT_PARQUET &&
		arrow_schema_layout(&file->schema, err) < 0)
		rc = -1;
	if (rc < 0)
	{
		arrow_error_named(err, file->src.name);
		arrow_arena_free_all(&file->arena);
		memset(file, 0, sizeof(*file));
		return -1;
	}
	return 0;
}

void
arrow_close(ArrowFile *file)
{
	if (file->arena.allocator)
		arrow_arena_free_all(&file->arena);
	memset(file, 0, sizeof(*file));
}
