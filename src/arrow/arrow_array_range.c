/*
 * arrow_array_range.c — loading part of a record batch: a row range of a
 * column (arrow_load_column_range, reading only the buffer bytes the range
 * covers, and arrow_column_range_loadable, which columns can be loaded so),
 * the split of a batch into parts (arrow_batch_part,
 * arrow_part_may_have_rows), and whether a batch's null counts rule out an
 * IS [NOT] NULL test.
 *
 * Whole columns and batches are loaded by arrow_array.c, whose buffer and
 * offset loaders these share for their checks.
 */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow_array_internal.h"

bool
arrow_column_range_loadable(const ArrowFile *file, const ArrowBatchMeta *meta, int col)
{
	const ArrowField *f;

	if (meta->codec != ARROW_CODEC_NONE || col < 0 || col >= file->schema.n_fields)
		return false;
	f = &file->schema.fields[col];
	if (f->n_children != 0 || f->type.view)
		return false;
	if (f->has_dict)
		return f->dict.index_type.bit_width >= 8;
	if (f->type.id == ARROW_TYPE_BOOL)
		return true;
	switch (f->type.id)
	{
		case ARROW_TYPE_UTF8:
		case ARROW_TYPE_BINARY:
		case ARROW_TYPE_LARGE_UTF8:
		case ARROW_TYPE_LARGE_BINARY:
			return true;		/* offsets of the range, then its bytes */
		case ARROW_TYPE_NULL:
		case ARROW_TYPE_LIST:
		case ARROW_TYPE_LARGE_LIST:
		case ARROW_TYPE_MAP:
		case ARROW_TYPE_FIXED_SIZE_LIST:
		case ARROW_TYPE_STRUCT:
		case ARROW_TYPE_FIXED_SIZE_BINARY:
			return false;
		default:
			return arrow_type_byte_width(&f->type) > 0;
	}
}

bool
arrow_batch_excludes_nulltest(const ArrowFile *file, const ArrowBatchMeta *meta, int field,
							  bool is_null)
{
	const ArrowField *f;
	const ArrowFieldNode *node;

	if (field < 0 || field >= file->schema.n_fields)
		return false;
	f = &file->schema.fields[field];
	node = &meta->nodes[f->node_index];
	if (is_null)
		return f->type.id != ARROW_TYPE_NULL && node->null_count == 0;
	return f->type.id == ARROW_TYPE_NULL ||
		(node->length > 0 && node->null_count == node->length);
}

bool
arrow_part_may_have_rows(const ArrowFile *file, int batch, int part)
{
	return part == 0 || file->batches[batch].body_len >= ARROW_PART_MIN_BODY;
}

bool
arrow_batch_part(const ArrowFile *file, int batch, const ArrowBatchMeta *meta,
				 const int *fields, int nfields, int part, int parts,
				 int64_t *first, int64_t *nrows, bool *split)
{
	int64_t		per;
	int			c;

	*first = 0;
	*nrows = meta->length;
	*split = parts > 1 && meta->length > ARROW_PART_MIN_ROWS &&
		file->batches[batch].body_len >= ARROW_PART_MIN_BODY;
	for (c = 0; *split && c < nfields; c++)
		if (fields[c] >= 0 && !arrow_column_range_loadable(file, meta, fields[c]))
			*split = false;
	if (!*split)
		return part == 0;
	per = (meta->length + parts - 1) / parts;
	per = (per + 63) & ~(int64_t) 63;
	if (per < ARROW_PART_MIN_ROWS)
		per = ARROW_PART_MIN_ROWS;
	*first = per * part;
	if (*first >= meta->length)
		return false;
	*nrows = meta->length - *first < per ? meta->length - *first : per;
	return true;
}

/*
 * Bytes [first, first + len) of buffer idx, after checking that the buffer
 * holds the need bytes the whole batch's array requires.
 */
static int
load_buffer_part(LoadCtx *lc, int idx, int64_t need, int64_t first, int64_t len,
				 const uint8_t **ptr)
{
	const ArrowBufferRef *ref;
	int64_t		avail;

	*ptr = (const uint8_t *) zero_buffer;
	if (idx < 0 || idx >= lc->meta->n_buffers)
		return lc_corrupt(lc, -1, "buffer %d does not exist", idx);
	if (need == 0 || len == 0)
		return 0;
	ref = &lc->meta->buffers[idx];
	if (ref->length < need)
		return lc_corrupt(lc, ref->offset,
						  "buffer %d (offset %" PRId64 ", length %" PRId64 ") is shorter than the %" PRId64 " bytes the array needs",
						  idx, ref->offset, ref->length, need);
	return plain_buffer(lc, ref->offset + first, len, len, ptr, &avail);
}

static int64_t
count_nulls(const uint8_t *validity, int64_t len)
{
	int64_t		valid = 0,
				i;

	for (i = 0; i + 64 <= len; i += 64)
	{
		uint64_t	w;

		memcpy(&w, validity + i / 8, 8);
		valid += __builtin_popcountll(w);
	}
	for (; i < len; i++)
		valid += arrow_get_bit(validity, i);
	return len - valid;
}

/*
 * Rows [row_off, row_off + row_len) of a string or binary column of len
 * rows (buffers bi: validity, bi + 1: offsets, bi + 2: data): the range's
 * row_len + 1 offsets, checked as load_offsets checks a whole array (the
 * first >= 0, non-decreasing; the last within the data buffer), rebased
 * to the range's first byte, and only the bytes they cover.
 */
static int
load_string_range(LoadCtx *lc, const ArrowField *f, int bi, int64_t len,
				  int64_t row_off, int64_t row_len, ArrowArray *out)
{
	int			w = is_large(f->type.id) ? 8 : 4;
	const uint8_t *op;
	uint8_t    *ro;
	int64_t		need,
				first = 0,
				prev = 0,
				i;

	if (len == INT64_MAX || !mul_ok(len + 1, w, &need))
		return lc_corrupt(lc, -1, "column \"%s\": length %" PRId64 " is too large",
						  f->name, len);
	if (load_buffer_part(lc, bi + 1, need, row_off * w, (row_len + 1) * w, &op) < 0)
		return -1;
	ro = arrow_arena_alloc(lc->arena, (size_t) ((row_len + 1) * w), lc->err);
	if (ro == NULL)
		return -1;
	for (i = 0; i <= row_len; i++)
	{
		int64_t		v = offset_entry(op, i, w);

		if (i == 0)
			first = prev = v;
		if (v < prev || v < 0)
			return lc_corrupt(lc, lc->meta->buffers[bi + 1].offset,
							  "column \"%s\": offset %" PRId64 " (%" PRId64 ") is %s",
							  f->name, row_off + i, v, v < 0 ? "negative" : "smaller than the one before");
		prev = v;
		if (w == 4)
		{
			int32_t		r = (int32_t) (v - first);

			memcpy(ro + i * 4, &r, 4);
		}
		else
		{
			int64_t		r = v - first;

			memcpy(ro + i * 8, &r, 8);
		}
	}
	out->offsets = ro;
	if (load_buffer_part(lc, bi + 2, prev, first, prev - first, &out->data) < 0)
		return -1;
	out->data_len = prev - first;
	return 0;
}

int
arrow_load_column_range(ArrowFile *file, int batch, const ArrowBatchMeta *meta,
						int col, int64_t row_off, int64_t row_len,
						ArrowArena *arena, ArrowArray *out, ArrowError *err)
{
	LoadCtx		lc;
	const ArrowField *f;
	const ArrowFieldNode *node;
	int			bi;
	int64_t		len,
				need,
				w;

	memset(out, 0, sizeof(*out));
	if (check_batch_column(file, batch, col, err) < 0)
		return -1;
	if (!arrow_column_range_loadable(file, meta, col))
		return arrow_error(err, ARROW_ERR_UNSUPPORTED, -1,
						   "%s: record batch %d, column %d cannot be loaded by row range",
						   file->src.name, batch, col);
	if (row_off < 0 || row_len < 0 || (row_off & 7) != 0 ||
		row_off > meta->length || row_len > meta->length - row_off)
		return arrow_error(err, ARROW_ERR_INVALID, -1,
						   "%s: record batch %d: rows %" PRId64 "..+%" PRId64 " are not a range of its %" PRId64 " rows",
						   file->src.name, batch, row_off, row_len, meta->length);
	batch_load_ctx(&lc, file, batch, meta, arena, err);
	f = &file->schema.fields[col];
	bi = f->buffer_index;
	if (f->node_index < 0 || f->node_index >= meta->n_nodes ||
		bi < 0 || f->n_buffers < 2 || bi > meta->n_buffers - f->n_buffers)
		return lc_corrupt(&lc, -1, "column \"%s\": field node %d or buffers %d.. missing",
						  f->name, f->node_index, bi);
	node = &meta->nodes[f->node_index];
	len = node->length;
	if (len != meta->length)
		return lc_corrupt(&lc, -1, "column \"%s\" has %" PRId64 " rows, the batch %" PRId64,
						  f->name, len, meta->length);
	out->field = f;
	out->length = row_len;
	if (node->null_count > 0)
	{
		if (load_buffer_part(&lc, bi, bitmap_bytes(len), row_off / 8,
							 bitmap_bytes(row_off + row_len) - row_off / 8,
							 &out->validity) < 0)
			goto fail;
		out->null_count = count_nulls(out->validity, row_len);
		if (out->null_count == 0)
			out->validity = NULL;
	}
	if (!f->has_dict && f->type.id == ARROW_TYPE_BOOL)
	{
		if (load_buffer_part(&lc, bi + 1, bitmap_bytes(len), row_off / 8,
							 bitmap_bytes(row_off + row_len) - row_off / 8,
							 &out->values) < 0)
			goto fail;
		out->values_len = bitmap_bytes(row_off + row_len) - row_off / 8;
		return 0;
	}
	if (!f->has_dict && (f->type.id == ARROW_TYPE_UTF8 || f->type.id == ARROW_TYPE_BINARY ||
						 f->type.id == ARROW_TYPE_LARGE_UTF8 ||
						 f->type.id == ARROW_TYPE_LARGE_BINARY))
	{
		if (load_string_range(&lc, f, bi, len, row_off, row_len, out) < 0)
			goto fail;
		return 0;
	}
	w = f->has_dict ? f->dict.index_type.bit_width / 8 : arrow_type_byte_width(&f->type);
	if (!mul_ok(len, w, &need))
		return lc_corrupt(&lc, -1, "column \"%s\": length %" PRId64 " is too large",
						  f->name, len);
	if (load_buffer_part(&lc, bi + 1, need, row_off * w, row_len * w, &out->values) < 0)
		goto fail;
	out->values_len = row_len * w;
	if (f->has_dict &&
		(get_dictionary(&lc, f, &out->dictionary) < 0 ||
		 check_indices(&lc, f, out, out->dictionary->length) < 0))
		goto fail;
	return 0;

fail:
	return column_load_failed(&lc, f, err);
}
