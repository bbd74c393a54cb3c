/*
 * arrow_array.c — materialising columns of record batches as validated
 * ArrowArray trees: buffers, offsets, whole columns and batches.  The
 * dictionaries are resolved by arrow_array_dict.c, row ranges and batch
 * parts loaded by arrow_array_range.c, and the value accessors are in
 * arrow_array_access.c.
 *
 * A column is loaded buffer by buffer: only the buffers of the requested
 * field and its descendants are touched, so the bytes moved are those of the
 * projected columns.  When the source is mapped and a buffer is stored
 * uncompressed and 8-byte aligned, it is used in place; otherwise it is read
 * (and decompressed) into arena memory.
 *
 * Everything the accessors rely on is checked here: buffer sizes against
 * the lengths in the field nodes, offsets (monotonic, within their data or
 * child array), child lengths, dictionary indices.  A compressed buffer's
 * claimed uncompressed size is bounded by what the node requires, so a lying
 * header cannot make us allocate more than the data needs.
 */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow_array_internal.h"
#include "parquet.h"

/* Zeros standing in for empty buffers (e.g. the offsets of an empty array,
 * which writers may omit). */
const int64_t zero_buffer[8] __attribute__((aligned(64)));

/* --------------------------------------------------------------- buffers */

int
lc_corrupt(LoadCtx *lc, int64_t offset, const char *fmt,...)
{
	char		where[1024];
	va_list		ap;
	int			rc;

	snprintf(where, sizeof(where), "%s: %s", lc->name, lc->label);
	va_start(ap, fmt);
	rc = arrow_verror_in(lc->err, ARROW_ERR_CORRUPT, offset, where, fmt, ap);
	va_end(ap);
	return rc;
}

/* Read [off, off+len) of the source into new arena memory. */
static uint8_t *
read_into_arena(LoadCtx *lc, int64_t off, int64_t len)
{
	const ArrowSource *src = &lc->file->src;
	uint8_t    *p;
	int			e;

	if (len < 0 || (uint64_t) len > SIZE_MAX)
		return lc_corrupt(lc, off, "buffer of %" PRId64 " bytes", len), NULL;
	if (off < 0 || (uint64_t) off > src->size ||
		(uint64_t) len > src->size - (uint64_t) off)
		return lc_corrupt(lc, off, "%" PRId64 " bytes at offset %" PRId64 " extend past the end of the data",
						  len, off), NULL;
	p = arrow_arena_alloc_uninit(lc->arena, (size_t) len, lc->err);
	if (p == NULL || len == 0)
		return p;
	if (src->map)
	{
		memcpy(p, src->map + off, (size_t) len);
		arrow_src_count_mapped(src, (uint64_t) len);
		return p;
	}
	e = src->read(src->ctx, p, (size_t) len, (uint64_t) off);
	if (e != 0)
	{
		arrow_error(lc->err, ARROW_ERR_IO, off,
					"%s: %s: could not read %" PRId64 " bytes at offset %" PRId64 ": %s",
					lc->name, lc->label, len, off, strerror(e));
		if (lc->err)
			lc->err->errno_saved = e;
		return NULL;
	}
	return p;
}

/* Uncompressed bytes [off, off+len) of which `need` are used. */
int
plain_buffer(LoadCtx *lc, int64_t off, int64_t len, int64_t need,
			 const uint8_t **ptr, int64_t *avail)
{
	const ArrowSource *src = &lc->file->src;

	if (src->map != NULL && ((uintptr_t) (src->map + off) & 7) == 0)
	{
		/* in place: the meta check put [off, off+len) within the source;
		 * counted as the `need` bytes a read would have taken */
		*ptr = src->map + off;
		*avail = len;
		arrow_src_count_mapped(src, (uint64_t) need);
		return 0;
	}
	/* only the bytes the array uses travel */
	*ptr = read_into_arena(lc, off, need);
	*avail = need;
	return *ptr ? 0 : -1;
}

/*
 * A compressed buffer: int64 uncompressed length, then the compressed bytes
 * (or the raw bytes if the length is -1).  An empty buffer may omit the
 * length entirely.
 */
static int
compressed_buffer(LoadCtx *lc, int idx, const ArrowBufferRef *ref,
				  int64_t need, const uint8_t **ptr, int64_t *avail)
{
	const ArrowSource *src = &lc->file->src;
	const ArrowAllocator *al = lc->arena->allocator;
	uint8_t		hdr[8];
	int64_t		ulen,
				out_len,
				clen;
	bool		prefix_only;
	uint8_t    *dst;
	const uint8_t *in;
	void	   *tmp = NULL;
	int			rc;

	if (ref->length < 8)
		return lc_corrupt(lc, ref->offset,
						  "compressed buffer %d (offset %" PRId64 ", length %" PRId64 ") is too short for its length prefix",
						  idx, ref->offset, ref->length);
	if (src->map)
	{
		memcpy(hdr, src->map + ref->offset, 8);
		arrow_src_count_mapped(src, 8);
	}
	else
	{
		in = read_into_arena(lc, ref->offset, 8);
		if (in == NULL)
			return -1;
		memcpy(hdr, in, 8);
	}
	ulen = (int64_t) fbr_load_u64(hdr);
	clen = ref->length - 8;
	if (ulen == -1)
	{
		if (clen < need)
			return lc_corrupt(lc, ref->offset,
							  "buffer %d (offset %" PRId64 ", length %" PRId64 ") holds %" PRId64 " bytes, the array needs %" PRId64,
							  idx, ref->offset, ref->length, clen, need);
		return plain_buffer(lc, ref->offset + 8, clen, need, ptr, avail);
	}

	/*
	 * A buffer may hold more than the array uses (writers store the whole
	 * buffer of a sliced array); beyond padding, only the used prefix is
	 * decompressed.
	 */
	if (ulen < need)
		return lc_corrupt(lc, ref->offset,
						  "compressed buffer %d (offset %" PRId64 ", length %" PRId64 ") claims %" PRId64 " uncompressed bytes, the array needs %" PRId64,
						  idx, ref->offset, ref->length, ulen, need);
	prefix_only = ulen > need + 64;
	out_len = prefix_only ? need : ulen;

	/* the compressed bytes: in place, or read into transient memory */
	if (src->map)
	{
		in = src->map + ref->offset + 8;
		arrow_src_count_mapped(src, (uint64_t) clen);
	}
	else
	{
		if (al->max_alloc != 0 && (uint64_t) clen > al->max_alloc)
			return arrow_error(lc->err, ARROW_ERR_NOMEM, ref->offset,
							   "%s: %s: compressed buffer %d of %" PRId64 " bytes exceeds the allocation limit",
							   lc->name, lc->label, idx, clen);
		tmp = al->alloc(al->ctx, clen > 0 ? (size_t) clen : 1);
		if (tmp == NULL)
			return arrow_error(lc->err, ARROW_ERR_NOMEM, ref->offset,
							   "%s: %s: out of memory for compressed buffer %d (%" PRId64 " bytes)",
							   lc->name, lc->label, idx, clen);
		rc = src->read(src->ctx, tmp, (size_t) clen, (uint64_t) ref->offset + 8);
		if (rc != 0)
		{
			al->free(al->ctx, tmp);
			arrow_error(lc->err, ARROW_ERR_IO, ref->offset,
						"%s: %s: could not read buffer %d at offset %" PRId64 ": %s",
						lc->name, lc->label, idx, ref->offset, strerror(rc));
			if (lc->err)
				lc->err->errno_saved = rc;
			return -1;
		}
		in = tmp;
	}

	/*
	 * Before allocating for the claim, check it against what the compressed
	 * bytes can possibly hold (and what their frame header says).
	 */
	dst = NULL;
	rc = arrow_check_claim(lc->meta->codec, in, (size_t) clen, (uint64_t) ulen,
						   lc->err);
	if (rc == 0)
	{
		dst = arrow_arena_alloc(lc->arena, (size_t) out_len, lc->err);
		if (dst == NULL)
		{
			if (tmp)
				al->free(al->ctx, tmp);
			return -1;
		}
		if (prefix_only)
			rc = arrow_decompress_prefix(lc->meta->codec, in, (size_t) clen, dst,
										 (size_t) out_len, (uint64_t) ulen,
										 lc->err);
		else
			rc = arrow_decompress(lc->meta->codec, in, (size_t) clen, dst,
								  (size_t) out_len, lc->err);
	}
	if (tmp)
		al->free(al->ctx, tmp);
	if (rc < 0)
	{
		char		inner[sizeof(lc->err->msg)];

		if (lc->err)
		{
			memcpy(inner, lc->err->msg, sizeof(inner));
			inner[sizeof(inner) - 1] = '\0';
			return lc_corrupt(lc, ref->offset, "buffer %d (offset %" PRId64 ", length %" PRId64 "): %.400s",
							  idx, ref->offset, ref->length, inner);
		}
		return -1;
	}
	*ptr = dst;
	*avail = out_len;
	return 0;
}

/*
 * Buffer idx of the batch, of which the array needs `need` bytes.  Sets *ptr
 * (never NULL) and *avail (bytes usable at *ptr, >= need).
 */
int
load_buffer(LoadCtx *lc, int idx, int64_t need, const uint8_t **ptr,
			int64_t *avail)
{
	*ptr = (const uint8_t *) zero_buffer;
	*avail = 0;
	if (idx < 0 || idx >= lc->meta->n_buffers)
		return lc_corrupt(lc, -1, "buffer %d does not exist", idx);
	return load_buffer_ref(lc, idx, &lc->meta->buffers[idx], need, ptr, avail);
}

/* load_buffer of a buffer given by its reference (idx names it in errors) */
int
load_buffer_ref(LoadCtx *lc, int idx, const ArrowBufferRef *ref, int64_t need,
				const uint8_t **ptr, int64_t *avail)
{
	*ptr = (const uint8_t *) zero_buffer;
	*avail = 0;
	if (need == 0)
		return 0;
	if (lc->meta->codec == ARROW_CODEC_NONE)
	{
		if (ref->length < need)
			return lc_corrupt(lc, ref->offset,
							  "buffer %d (offset %" PRId64 ", length %" PRId64 ") is shorter than the %" PRId64 " bytes the array needs",
							  idx, ref->offset, ref->length, need);
		return plain_buffer(lc, ref->offset, ref->length, need, ptr, avail);
	}
	return compressed_buffer(lc, idx, ref, need, ptr, avail);
}

/* --------------------------------------------------------------- offsets */

/*
 * Load and check the offsets buffer (buffer index idx) of an array of
 * length len: first >= 0, non-decreasing.  *last = the final offset.
 */
int
load_offsets(LoadCtx *lc, const ArrowField *f, int idx, int64_t len,
			 ArrowArray *out, int64_t *last)
{
	int			w = is_large(f->type.id) ? 8 : 4;
	int64_t		need,
				avail,
				prev,
				i;
	const uint8_t *p;

	*last = 0;
	if (len == 0 && lc->meta->buffers[idx].length == 0)
	{
		/* an empty array may omit its single zero offset */
		out->offsets = (const uint8_t *) zero_buffer;
		return 0;
	}
	if (len == INT64_MAX || !mul_ok(len + 1, w, &need))
		return lc_corrupt(lc, -1, "column \"%s\": length %" PRId64 " is too large",
						  f->name, len);
	if (load_buffer(lc, idx, need, &p, &avail) < 0)
		return -1;
	out->offsets = p;
	prev = 0;
	for (i = 0; i <= len; i++)
	{
		int64_t		v = offset_entry(p, i, w);

		if (v < prev)
			return lc_corrupt(lc, lc->meta->buffers[idx].offset,
							  "column \"%s\": offset %" PRId64 " (%" PRId64 ") is %s",
							  f->name, i, v, i == 0 ? "negative" : "smaller than the one before");
		prev = v;
	}
	*last = prev;
	return 0;
}

/* ----------------------------------------------------------- string views */

static inline int32_t
view_i32(const uint8_t *p)
{
	int32_t		v;

	memcpy(&v, p, 4);
	return v;
}

/*
 * A Utf8View/BinaryView column (ArrowType.view) as a LargeUtf8/LargeBinary
 * array: each 16-byte view is its length and either the bytes themselves
 * (up to 12) or a prefix, a data buffer index and an offset into it; the
 * strings are copied into fresh offsets and data, every view checked
 * against the buffers it names.
 */
static int
load_views(LoadCtx *lc, const ArrowField *f, int bi, int64_t len, ArrowArray *out)
{
	const ArrowBatchMeta *m = lc->meta;
	int			nvar = m->var_count ? m->var_count[f->node_index] : 0;
	int			first = nvar ? m->var_first[f->node_index] : 0;
	const uint8_t *views,
			  **vbuf = NULL;
	int64_t    *vlen = NULL,
			   *offs,
				need,
				avail,
				total = 0,
				i;
	uint8_t    *data;
	int			k;

	if (!mul_ok(len, 16, &need))
		return lc_corrupt(lc, -1, "column \"%s\": length %" PRId64 " is too large", f->name, len);
	if (load_buffer(lc, bi + 1, need, &views, &avail) < 0)
		return -1;
	if (nvar > 0)
	{
		vbuf = arrow_arena_alloc(lc->arena, sizeof(*vbuf) * nvar, lc->err);
		vlen = arrow_arena_alloc(lc->arena, sizeof(*vlen) * nvar, lc->err);
		if (vbuf == NULL || vlen == NULL)
			return -1;
	}
	/* the bytes of each data buffer the views use, and the total */
	for (k = 0; k < nvar; k++)
		vlen[k] = 0;
	for (i = 0; i < len; i++)
	{
		const uint8_t *v = views + 16 * i;
		int32_t		l = view_i32(v),
					b = view_i32(v + 8),
					o = view_i32(v + 12);

		if (out->validity && !arrow_get_bit(out->validity, i))
			continue;
		if (l < 0 || total > INT64_MAX - l)
			return lc_corrupt(lc, m->buffers[bi + 1].offset,
							  "column \"%s\": view %" PRId64 " has length %d", f->name, i, l);
		total += l;
		if (l <= 12)
			continue;
		if (b < 0 || b >= nvar || o < 0)
			return lc_corrupt(lc, m->buffers[bi + 1].offset,
							  "column \"%s\": view %" PRId64 " names data buffer %d at offset %d (the batch has %d)",
							  f->name, i, b, o, nvar);
		if ((int64_t) o + l > vlen[b])
			vlen[b] = (int64_t) o + l;
	}
	for (k = 0; k < nvar; k++)
	{
		int64_t		used = vlen[k];

		/* a buffer shorter than what its views use is an error here */
		if (load_buffer_ref(lc, -1, &m->variadic[first + k], used, &vbuf[k], &vlen[k]) < 0)
			return -1;
		vlen[k] = used;
	}
	offs = arrow_arena_alloc(lc->arena, sizeof(int64_t) * (len + 1), lc->err);
	data = arrow_arena_alloc(lc->arena, total + 1, lc->err);
	if (offs == NULL || data == NULL)
		return -1;
	offs[0] = 0;
	for (i = 0; i < len; i++)
	{
		const uint8_t *v = views + 16 * i;
		int32_t		l = view_i32(v);

		if (out->validity && !arrow_get_bit(out->validity, i))
			l = 0;
		else if (l <= 12)
			memcpy(data + offs[i], v + 4, (size_t) l);
		else
		{
			/* in range: checked above, and each buffer holds vlen[b] bytes */
			memcpy(data + offs[i], vbuf[view_i32(v + 8)] + view_i32(v + 12), (size_t) l);
		}
		offs[i + 1] = offs[i] + l;
	}
	out->offsets = (const uint8_t *) offs;
	out->data = data;
	out->data_len = total;
	return 0;
}

/* ---------------------------------------------------------------- arrays */

int
load_children(LoadCtx *lc, const ArrowField *f, int depth, ArrowArray *out)
{
	int			i;

	if (f->n_children == 0)
		return 0;
	out->children = arrow_arena_alloc(lc->arena,
									  sizeof(ArrowArray) * (size_t) f->n_children,
									  lc->err);
	if (out->children == NULL)
		return -1;
	out->n_children = f->n_children;
	for (i = 0; i < f->n_children; i++)
		if (load_field(lc, &f->children[i], depth + 1, &out->children[i]) < 0)
			return -1;
	return 0;
}

int
load_field(LoadCtx *lc, const ArrowField *f, int depth, ArrowArray *out)
{
	const ArrowFieldNode *node;
	int			bi = f->buffer_index;
	int64_t		len,
				need,
				avail,
				last;
	int			w;
	int			i;

	memset(out, 0, sizeof(*out));
	out->field = f;
	if (depth > ARROW_MAX_NESTING + 1)
		return lc_corrupt(lc, -1, "column \"%s\": nested too deep", f->name);
	if (f->node_index < 0 || f->node_index >= lc->meta->n_nodes ||
		bi < 0 || f->n_buffers < 0 || bi > lc->meta->n_buffers - f->n_buffers)
		return lc_corrupt(lc, -1, "column \"%s\": field node %d or buffers %d.. missing",
						  f->name, f->node_index, bi);
	node = &lc->meta->nodes[f->node_index];
	len = out->length = node->length;
	out->null_count = node->null_count;

	if (f->type.id == ARROW_TYPE_NULL && !f->has_dict)
	{
		out->null_count = len;
		return 0;
	}

	/* validity bitmap, only needed when there are nulls */
	if (out->null_count > 0)
	{
		if (load_buffer(lc, bi, bitmap_bytes(len), &out->validity, &avail) < 0)
			return -1;
	}

	if (f->has_dict)
	{
		if (lc->in_dict)
			return lc_corrupt(lc, -1, "column \"%s\": nested dictionary", f->name);
		w = f->dict.index_type.bit_width / 8;
		if (!mul_ok(len, w, &need))
			return lc_corrupt(lc, -1, "column \"%s\": length %" PRId64 " is too large",
							  f->name, len);
		if (load_buffer(lc, bi + 1, need, &out->values, &out->values_len) < 0 ||
			get_dictionary(lc, f, &out->dictionary) < 0 ||
			check_indices(lc, f, out, out->dictionary->length) < 0)
			return -1;
		return 0;
	}

	switch (f->type.id)
	{
		case ARROW_TYPE_BOOL:
			return load_buffer(lc, bi + 1, bitmap_bytes(len), &out->values,
							   &out->values_len);

		case ARROW_TYPE_UTF8:
		case ARROW_TYPE_BINARY:
		case ARROW_TYPE_LARGE_UTF8:
		case ARROW_TYPE_LARGE_BINARY:
			if (f->type.view)
				return load_views(lc, f, bi, len, out);
			if (load_offsets(lc, f, bi + 1, len, out, &last) < 0)
				return -1;
			return load_buffer(lc, bi + 2, last, &out->data, &out->data_len);

		case ARROW_TYPE_LIST:
		case ARROW_TYPE_LARGE_LIST:
		case ARROW_TYPE_MAP:
			if (f->type.list_view)
				return load_list_views(lc, f, bi, depth, out);
			if (load_offsets(lc, f, bi + 1, len, out, &last) < 0 ||
				load_children(lc, f, depth, out) < 0)
				return -1;
			if (last > out->children[0].length)
				return lc_corrupt(lc, -1,
								  "column \"%s\": last offset %" PRId64 " exceeds the %" PRId64 " child values",
								  f->name, last, out->children[0].length);
			return 0;

		case ARROW_TYPE_FIXED_SIZE_LIST:
			if (load_children(lc, f, depth, out) < 0)
				return -1;
			if (!mul_ok(len, f->type.fixed_size, &need) ||
				out->children[0].length < need)
				return lc_corrupt(lc, -1,
								  "column \"%s\": %" PRId64 " lists of %d need more than the %" PRId64 " child values",
								  f->name, len, f->type.fixed_size,
								  out->children[0].length);
			return 0;

		case ARROW_TYPE_STRUCT:
			if (load_children(lc, f, depth, out) < 0)
				return -1;
			for (i = 0; i < out->n_children; i++)
				if (out->children[i].length < len)
					return lc_corrupt(lc, -1,
									  "column \"%s\": child %d has %" PRId64 " values, the struct %" PRId64,
									  f->name, i, out->children[i].length, len);
			return 0;

		default:
			w = arrow_type_byte_width(&f->type);
			if (w <= 0 && f->type.id != ARROW_TYPE_FIXED_SIZE_BINARY)
				return arrow_error(lc->err, ARROW_ERR_UNSUPPORTED, -1,
								   "%s: column \"%s\": type %d cannot be loaded",
								   lc->name, f->name, (int) f->type.id);
			if (!mul_ok(len, w, &need))
				return lc_corrupt(lc, -1, "column \"%s\": length %" PRId64 " is too large",
								  f->name, len);
			return load_buffer(lc, bi + 1, need, &out->values, &out->values_len);
	}
}

/* The load context of one column of a batch. */
void
batch_load_ctx(LoadCtx *lc, ArrowFile *file, int batch, const ArrowBatchMeta *meta,
			   ArrowArena *arena, ArrowError *err)
{
	memset(lc, 0, sizeof(*lc));
	lc->file = file;
	lc->meta = meta;
	lc->arena = arena;
	lc->name = file->src.name;
	lc->batch = batch;
	lc->err = err;
	snprintf(lc->label, sizeof(lc->label), "record batch %d", batch);
}

/* A failed column load: allocation and codec errors do not know where
 * they happened, so they get the file, batch and column.  Returns -1. */
int
column_load_failed(const LoadCtx *lc, const ArrowField *f, ArrowError *err)
{
	if (err && strstr(err->msg, lc->name) == NULL)
	{
		char		where[512];

		snprintf(where, sizeof(where), "%.200s: %.96s: column \"%.60s\"",
				 lc->name, lc->label, f->name);
		arrow_error_prefix(err, where);
	}
	return -1;
}

/* INVALID unless the file has record batch `batch` and column `col`. */
int
check_batch_column(const ArrowFile *file, int batch, int col, ArrowError *err)
{
	if (batch < 0 || batch >= file->n_batches || col < 0 ||
		col >= file->schema.n_fields)
		return arrow_error(err, ARROW_ERR_INVALID, -1,
						   "%s: record batch %d, column %d does not exist",
						   file->src.name, batch, col);
	return 0;
}

int
arrow_load_column(ArrowFile *file, int batch, const ArrowBatchMeta *meta,
				  int col, ArrowArena *arena, ArrowArray *out, ArrowError *err)
{
	LoadCtx		lc;
	const ArrowField *f;

	memset(out, 0, sizeof(*out));
	if (check_batch_column(file, batch, col, err) < 0)
		return -1;
	if (file->parquet != NULL)
		return parquet_load_column(file, batch, col, arena, out, err);
	batch_load_ctx(&lc, file, batch, meta, arena, err);
	f = &file->schema.fields[col];
	if (f->node_index < meta->n_nodes &&
		meta->nodes[f->node_index].length != meta->length)
		return lc_corrupt(&lc, -1, "column \"%s\" has %" PRId64 " rows, the batch %" PRId64,
						  f->name, meta->nodes[f->node_index].length, meta->length);
	if (load_field(&lc, f, 1, out) < 0)
		return column_load_failed(&lc, f, err);
	return 0;
}

int
arrow_load_batch(ArrowFile *file, int batch, ArrowArena *arena,
				 ArrowRecordBatch *out, ArrowError *err)
{
	int			i;

	memset(out, 0, sizeof(*out));
	if (arrow_read_batch_meta(file, batch, arena, &out->meta, err) < 0)
		return -1;
	out->length = out->meta.length;
	out->n_columns = file->schema.n_fields;
	out->columns = arrow_arena_alloc(arena,
									 sizeof(ArrowArray) * ((size_t) out->n_columns + 1),
									 err);
	if (out->columns == NULL)
		return -1;
	for (i = 0; i < out->n_columns; i++)
		if (arrow_load_column(file, batch, &out->meta, i, arena,
							  &out->columns[i], err) < 0)
			return -1;
	return 0;
}

