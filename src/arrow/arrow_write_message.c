/*
 * arrow_write_message.c — the IPC messages of an ArrowWriter: flatbuffer
 * metadata (schema with its fields and types, record batch, dictionary
 * batch), the message framing (continuation marker, metadata length,
 * padding, body), and the body itself: buffers laid out at 64-byte
 * boundaries and compressed when a codec is set.
 *
 * arrow_write.c (the file: output buffer, create, append, close) writes the
 * schema and the footer with these; arrow_write_batch.c writes a batch's
 * dictionaries and record batch.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow_write_int.h"

static FbRef
fb_int_type(FbBuilder *fb, const ArrowType *t)
{
	fb_table_start(fb);
	fb_add_int32(fb, 0, t->bit_width);
	fb_add_bool(fb, 1, t->is_signed);
	return fb_table_end(fb);
}

/* The Type union's table for t. */
static FbRef
fb_type(FbBuilder *fb, const ArrowType *t)
{
	FbRef		tz = 0;

	if (t->id == ARROW_TYPE_TIMESTAMP && t->timezone)
		tz = fb_create_cstring(fb, t->timezone);
	if (t->id == ARROW_TYPE_INT)
		return fb_int_type(fb, t);
	fb_table_start(fb);
	switch (t->id)
	{
		case ARROW_TYPE_FLOAT:
			fb_add_int16(fb, 0, (int16_t) t->precision);
			break;
		case ARROW_TYPE_DECIMAL:
			fb_add_int32(fb, 0, t->dec_precision);
			fb_add_int32(fb, 1, t->dec_scale);
			fb_add_int32(fb, 2, t->bit_width ? t->bit_width : 128);
			break;
		case ARROW_TYPE_DATE:
		case ARROW_TYPE_INTERVAL:
		case ARROW_TYPE_DURATION:
			fb_add_int16(fb, 0, (int16_t) t->unit);
			break;
		case ARROW_TYPE_TIME:
			fb_add_int16(fb, 0, (int16_t) t->unit);
			fb_add_int32(fb, 1, t->bit_width);
			break;
		case ARROW_TYPE_TIMESTAMP:
			fb_add_int16(fb, 0, (int16_t) t->unit);
			fb_add_offset(fb, 1, tz);
			break;
		case ARROW_TYPE_FIXED_SIZE_BINARY:
		case ARROW_TYPE_FIXED_SIZE_LIST:
			fb_add_int32(fb, 0, t->fixed_size);
			break;
		case ARROW_TYPE_MAP:
			fb_add_bool(fb, 0, t->keys_sorted);
			break;
		default:
			/* Null, Bool, Utf8, Binary, List, Struct, Large*: no fields */
			break;
	}
	return fb_table_end(fb);
}

static FbRef
fb_kv_vector(FbBuilder *fb, const ArrowKeyValue *kv, int n,
			 const char *min_values, const char *max_values)
{
	FbRef		refs[256] = {0};
	FbRef	   *r = refs;
	int			total = n + (min_values ? 1 : 0) + (max_values ? 1 : 0);
	int			k = 0;
	int			i;
	FbRef		vec;

	if (total == 0)
		return 0;
	if (total > (int) (sizeof(refs) / sizeof(refs[0])))
	{
		r = fb->allocator->alloc(fb->allocator->ctx, sizeof(FbRef) * (size_t) total);
		if (r == NULL)
		{
			fb->failed = true;
			return 0;
		}
	}
	for (i = 0; i < n + 2; i++)
	{
		const char *key;
		const char *val;
		FbRef		kr,
					vr;

		if (i < n)
		{
			key = kv[i].key;
			val = kv[i].value;
		}
		else if (i == n && min_values)
		{
			key = "min_values";
			val = min_values;
		}
		else if (i == n + 1 && max_values)
		{
			key = "max_values";
			val = max_values;
		}
		else
			continue;
		kr = fb_create_cstring(fb, key);
		vr = fb_create_cstring(fb, val);
		fb_table_start(fb);
		fb_add_offset(fb, 0, kr);
		fb_add_offset(fb, 1, vr);
		r[k++] = fb_table_end(fb);
	}
	vec = fb_create_offset_vector(fb, r, (size_t) k);
	if (r != refs)
		fb->allocator->free(fb->allocator->ctx, r);
	return vec;
}

static FbRef
fb_field(FbBuilder *fb, const ArrowField *f, const char *min_values,
		 const char *max_values)
{
	FbRef		name,
				type,
				dict = 0,
				children,
				meta;
	FbRef		stack_refs[16] = {0};
	FbRef	   *crefs = stack_refs;
	int			i;

	if (f->n_children > 16)
	{
		crefs = fb->allocator->alloc(fb->allocator->ctx, sizeof(FbRef) * (size_t) f->n_children);
		if (crefs == NULL)
		{
			fb->failed = true;
			return 0;
		}
	}
	for (i = 0; i < f->n_children; i++)
		crefs[i] = fb_field(fb, &f->children[i], NULL, NULL);
	children = fb_create_offset_vector(fb, crefs, (size_t) f->n_children);
	if (crefs != stack_refs)
		fb->allocator->free(fb->allocator->ctx, crefs);

	name = fb_create_cstring(fb, f->name);
	type = fb_type(fb, &f->type);
	if (f->has_dict)
	{
		FbRef		it = fb_int_type(fb, &f->dict.index_type);

		fb_table_start(fb);
		fb_add_int64(fb, 0, f->dict.id);
		fb_add_offset(fb, 1, it);
		fb_add_bool(fb, 2, f->dict.ordered);
		fb_add_int16(fb, 3, 0);	/* DenseArray */
		dict = fb_table_end(fb);
	}
	meta = fb_kv_vector(fb, f->metadata, f->n_metadata, min_values, max_values);

	fb_table_start(fb);
	fb_add_offset(fb, 0, name);
	fb_add_bool(fb, 1, f->nullable);
	fb_add_uint8(fb, 2, (uint8_t) f->type.id);
	fb_add_offset(fb, 3, type);
	fb_add_offset(fb, 4, dict);
	fb_add_offset(fb, 5, children);
	fb_add_offset(fb, 6, meta);
	return fb_table_end(fb);
}

/* The schema table; with statistics when `stats` (footer only). */
FbRef
fb_schema(ArrowWriter *w, bool stats)
{
	FbBuilder  *fb = &w->fb;
	const ArrowSchema *s = &w->schema;
	FbRef	   *refs;
	FbRef		fields,
				meta;
	int			i;

	refs = fb->allocator->alloc(fb->allocator->ctx, sizeof(FbRef) * (size_t) (s->n_fields + 1));
	if (refs == NULL)
	{
		fb->failed = true;
		return 0;
	}
	for (i = 0; i < s->n_fields; i++)
	{
		const char *mn = NULL;
		const char *mx = NULL;

		if (stats && w->stat_min && w->stat_min[i].data && w->stat_entries > 0)
		{
			/* the strings are kept NUL-terminated */
			mn = (const char *) w->stat_min[i].data;
			mx = (const char *) w->stat_max[i].data;
		}
		refs[i] = fb_field(fb, &s->fields[i], mn, mx);
	}
	fields = fb_create_offset_vector(fb, refs, (size_t) s->n_fields);
	fb->allocator->free(fb->allocator->ctx, refs);
	meta = fb_kv_vector(fb, s->metadata, s->n_metadata, NULL, NULL);
	fb_table_start(fb);
	fb_add_int16(fb, 0, 0);		/* Little endian */
	fb_add_offset(fb, 1, fields);
	fb_add_offset(fb, 2, meta);
	return fb_table_end(fb);
}

/*
 * Write one encapsulated message whose header table is `header`, followed by
 * the body buffers (already laid out by prepare_body).
 */
int
write_message(ArrowWriter *w, uint8_t header_type, FbRef header,
			  int64_t body_len, const BodyBuf *bufs, const int64_t *offs,
			  int n_bufs, ArrowBlock *blk, ArrowError *err)
{
	FbRef		msg;
	const uint8_t *meta;
	size_t		meta_len;
	uint32_t	prefix[2];
	int64_t		padded;
	int64_t		written = 0;
	int			i;

	fb_table_start(&w->fb);
	fb_add_int16(&w->fb, 0, METADATA_V5);
	fb_add_uint8(&w->fb, 1, header_type);
	fb_add_offset(&w->fb, 2, header);
	fb_add_int64(&w->fb, 3, body_len);
	msg = fb_table_end(&w->fb);
	if (fb_finish(&w->fb, msg, &meta, &meta_len, err) < 0)
	{
		w->failed = true;
		return -1;
	}
	/* fb_finish returns a multiple of 8, so 8 + meta_len keeps alignment */
	padded = (int64_t) ((meta_len + 7) & ~(size_t) 7);
	if (padded > INT32_MAX - 8)
		return arrow_error(err, ARROW_ERR_INVALID, -1, "%s: message metadata too large",
						   writer_path(w));
	blk->offset = w->pos;
	blk->meta_len = (int32_t) (8 + padded);
	blk->body_len = body_len;
	prefix[0] = 0xFFFFFFFFu;
	prefix[1] = (uint32_t) padded;
	if (out_write(w, prefix, 8, err) < 0 ||
		out_write(w, meta, meta_len, err) < 0 ||
		out_zeros(w, (size_t) (padded - (int64_t) meta_len), err) < 0)
		return -1;
	for (i = 0; i < n_bufs; i++)
	{
		if (offs[i] > written && out_zeros(w, (size_t) (offs[i] - written), err) < 0)
			return -1;
		if (out_write(w, bufs[i].data, (size_t) bufs[i].len, err) < 0)
			return -1;
		written = offs[i] + bufs[i].len;
	}
	if (body_len > written && out_zeros(w, (size_t) (body_len - written), err) < 0)
		return -1;
	return 0;
}

/*
 * Compress the buffers if a codec is set (each becomes int64 uncompressed
 * length + compressed bytes, or -1 + the raw bytes when compressing does not
 * pay), and assign body offsets.  Empty buffers stay empty.
 */
int
prepare_body(ArrowWriter *w, BodyBuf *bufs, int n, int64_t *offs,
			 int64_t *body_len, ArrowError *err)
{
	int64_t		off = 0;
	int			i;

	if (w->opts.codec != ARROW_CODEC_NONE)
	{
		size_t		total = 0;
		size_t		at = 0;

		for (i = 0; i < n; i++)
		{
			size_t		bound;

			if (bufs[i].len == 0)
				continue;
			bound = arrow_compress_bound(w->opts.codec, (size_t) bufs[i].len);
			if (bound < (size_t) bufs[i].len)
				bound = (size_t) bufs[i].len;
			if (bound > SIZE_MAX - total - 16)
				return arrow_error(err, ARROW_ERR_NOMEM, -1, "%s: batch too large to compress",
								   writer_path(w));
			total += 8 + align_up((int64_t) bound, 8);
		}
		w->scratch.len = 0;
		if (wbuf_reserve(w, &w->scratch, total, err) < 0)
		{
			w->failed = true;
			return -1;
		}
		for (i = 0; i < n; i++)
		{
			uint8_t    *dst = w->scratch.data + at;
			size_t		clen = 0;
			int64_t		raw = bufs[i].len;
			size_t		bound;

			if (raw == 0)
				continue;
			bound = arrow_compress_bound(w->opts.codec, (size_t) raw);
			if (bound < (size_t) raw)
				bound = (size_t) raw;
			if (arrow_compress(w->opts.codec, w->opts.compression_level,
							   bufs[i].data, (size_t) raw, dst + 8, &clen, err) < 0)
			{
				w->failed = true;
				return -1;
			}
			if ((int64_t) clen >= raw)
			{
				int64_t		m1 = -1;

				memcpy(dst, &m1, 8);
				memcpy(dst + 8, bufs[i].data, (size_t) raw);
				clen = (size_t) raw;
			}
			else
				memcpy(dst, &raw, 8);
			bufs[i].data = dst;
			bufs[i].len = 8 + (int64_t) clen;
			at += 8 + (size_t) align_up((int64_t) bound, 8);
		}
	}
	for (i = 0; i < n; i++)
	{
		offs[i] = off;
		off = align_up(off + bufs[i].len, BODY_ALIGN);
	}
	*body_len = off;
	return 0;
}

/* RecordBatch table for nodes/buffers (already laid out). */
FbRef
fb_record_batch(ArrowWriter *w, int64_t length, const ArrowFieldNode *nodes,
				int n_nodes, const BodyBuf *bufs, const int64_t *offs, int n_bufs)
{
	FbBuilder  *fb = &w->fb;
	FbRef		nv,
				bv,
				comp = 0;
	int64_t    *pairs;
	int			i;

	pairs = fb->allocator->alloc(fb->allocator->ctx, sizeof(int64_t) * 2 * (size_t) (n_bufs + 1));
	if (pairs == NULL)
	{
		fb->failed = true;
		return 0;
	}
	for (i = 0; i < n_bufs; i++)
	{
		pairs[2 * i] = offs[i];
		pairs[2 * i + 1] = bufs[i].len;
	}
	bv = fb_create_struct_vector(fb, pairs, 16, (size_t) n_bufs, 8);
	fb->allocator->free(fb->allocator->ctx, pairs);
	/* ArrowFieldNode is two int64s, exactly Arrow's FieldNode struct */
	nv = fb_create_struct_vector(fb, nodes, 16, (size_t) n_nodes, 8);
	if (w->opts.codec != ARROW_CODEC_NONE)
	{
		fb_table_start(fb);
		fb_add_int8(fb, 0, (int8_t) w->opts.codec);
		fb_add_int8(fb, 1, 0);	/* BUFFER */
		comp = fb_table_end(fb);
	}
	fb_table_start(fb);
	fb_add_int64(fb, 0, length);
	fb_add_offset(fb, 1, nv);
	fb_add_offset(fb, 2, bv);
	fb_add_offset(fb, 3, comp);
	return fb_table_end(fb);
}

int
write_schema_message(ArrowWriter *w, ArrowError *err)
{
	FbRef		s;
	ArrowBlock	blk;

	fb_reset(&w->fb);
	s = fb_schema(w, false);
	return write_message(w, HEADER_SCHEMA, s, 0, NULL, NULL, 0, &blk, err);
}

/* A dictionary batch with d's pending values (a delta after the first). */
static int
write_dictionary(ArrowWriter *w, ArrowDict *d, ArrowError *err)
{
	ArrowBuilder *p = d->pending;
	int			n_nodes = 0,
				n_bufs = 0;
	int64_t		body_len;
	FbRef		rb,
				db;
	ArrowBlock	blk;

	builder_collect(p, w->nodes, &n_nodes, w->bufs, &n_bufs);
	if (prepare_body(w, w->bufs, n_bufs, w->buf_offsets, &body_len, err) < 0)
		return -1;
	fb_reset(&w->fb);
	rb = fb_record_batch(w, p->length, w->nodes, n_nodes, w->bufs,
						 w->buf_offsets, n_bufs);
	fb_table_start(&w->fb);
	fb_add_int64(&w->fb, 0, d->field->dict.id);
	fb_add_offset(&w->fb, 1, rb);
	fb_add_bool(&w->fb, 2, d->any_written);
	db = fb_table_end(&w->fb);
	if (write_message(w, HEADER_DICTIONARY, db, body_len, w->bufs,
					  w->buf_offsets, n_bufs, &blk, err) < 0 ||
		push_block(w, &w->dict_blocks, &blk, err) < 0)
	{
		w->failed = true;
		return -1;
	}
	d->written += p->length;
	d->any_written = true;
	builder_reset(p);
	return 0;
}

int
write_dictionaries(ArrowWriter *w, ArrowError *err)
{
	int			i;

	for (i = 0; i < w->n_dicts; i++)
	{
		ArrowDict  *d = w->dicts[i];

		if (!d->any_written || d->pending->length > 0)
		{
			if (write_dictionary(w, d, err) < 0)
				return -1;
		}
	}
	return 0;
}
