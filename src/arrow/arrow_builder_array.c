/*
 * arrow_builder_array.c — appending a row range of an existing ArrowArray
 * to a column builder (arrow_builder_append_array), buffer by buffer where
 * the types match, and the access to a nested builder's children.
 *
 * Single values are appended by arrow_builder_append.c.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "arrow_builder_int.h"

static int	append_range(ArrowBuilder *b, const ArrowArray *a, int64_t start,
						 int64_t len, ArrowError *err);

/* Same type (ignoring names, nullability and dictionary encoding)? */
static bool
types_compatible(const ArrowField *x, const ArrowField *y)
{
	const ArrowType *a = &x->type;
	const ArrowType *b = &y->type;
	int			i;

	if (a->id != b->id || x->n_children != y->n_children)
		return false;
	switch (a->id)
	{
		case ARROW_TYPE_INT:
			if (a->bit_width != b->bit_width || a->is_signed != b->is_signed)
				return false;
			break;
		case ARROW_TYPE_FLOAT:
			if (a->precision != b->precision)
				return false;
			break;
		case ARROW_TYPE_DECIMAL:
			if (a->dec_precision != b->dec_precision ||
				a->dec_scale != b->dec_scale)
				return false;
			break;
		case ARROW_TYPE_TIMESTAMP:
			if ((a->timezone == NULL) != (b->timezone == NULL) ||
				(a->timezone && strcmp(a->timezone, b->timezone) != 0))
				return false;
			/* FALLTHROUGH */
		case ARROW_TYPE_DATE:
		case ARROW_TYPE_TIME:
		case ARROW_TYPE_DURATION:
		case ARROW_TYPE_INTERVAL:
			if (a->unit != b->unit)
				return false;
			break;
		case ARROW_TYPE_FIXED_SIZE_BINARY:
		case ARROW_TYPE_FIXED_SIZE_LIST:
			if (a->fixed_size != b->fixed_size)
				return false;
			break;
		default:
			break;
	}
	for (i = 0; i < x->n_children; i++)
		if (!types_compatible(&x->children[i], &y->children[i]))
			return false;
	return true;
}

/* Validity of a's rows [start, start+len) onto b. */
static int
validity_range(ArrowBuilder *b, const ArrowArray *a, int64_t start, int64_t len,
			   ArrowError *err)
{
	int64_t		i;
	int64_t		base = b->length;

	if (a->validity == NULL || a->null_count == 0)
	{
		if (!b->has_validity)
			return 0;
		for (i = 0; i < len; i++)
		{
			if (bits_push(b->w, &b->validity, base + i, true, err) < 0)
				return -1;
		}
		return 0;
	}
	for (i = 0; i < len; i++)
	{
		/* validity_push uses b->length as the bit index */
		b->length = base + i;
		if (validity_push(b, !arrow_is_null(a, start + i), err) < 0)
		{
			b->length = base;
			return -1;
		}
	}
	b->length = base;
	return 0;
}

static int
offsets_range(ArrowBuilder *b, const ArrowArray *a, int64_t start, int64_t len,
			  int64_t base, ArrowError *err)
{
	int64_t		o0 = arrow_offset_at(a, start);
	int64_t		i;

	if (b->offset_width == 4 && base + (arrow_offset_at(a, start + len) - o0) > OFFSET32_LIMIT)
		return offset_push(b, OFFSET32_LIMIT + 1, err);
	if (wbuf_reserve(b->w, &b->offsets, (size_t) len * b->offset_width, err) < 0)
		return -1;
	for (i = 1; i <= len; i++)
	{
		int64_t		o = base + (arrow_offset_at(a, start + i) - o0);

		if (b->offset_width == 4)
		{
			int32_t		o32 = (int32_t) o;

			memcpy(b->offsets.data + b->offsets.len, &o32, 4);
		}
		else
			memcpy(b->offsets.data + b->offsets.len, &o, 8);
		b->offsets.len += b->offset_width;
	}
	return 0;
}

/* Per-row path: dictionary-encoded input and/or output. */
static int
append_range_rows(ArrowBuilder *b, const ArrowArray *a, int64_t start,
				  int64_t len, ArrowError *err)
{
	int64_t		i;

	for (i = 0; i < len; i++)
	{
		const ArrowArray *src = a;
		int64_t		k = start + i;

		if (arrow_is_null(a, k))
		{
			if (null_internal(b, err) < 0)
				return -1;
			continue;
		}
		if (a->field->has_dict && a->dictionary)
		{
			src = a->dictionary;
			k = arrow_get_dict_index(a, k);
			if (arrow_is_null(src, k))
			{
				if (null_internal(b, err) < 0)
					return -1;
				continue;
			}
		}
		if (b->dict)
		{
			if (check_open(b, err) < 0 ||
				append_range(b->dict->pending, src, k, 1, err) < 0 ||
				dict_commit(b, err) < 0)
				return -1;
		}
		else if (append_range(b, src, k, 1, err) < 0)
			return -1;
	}
	return 0;
}

static int
append_range(ArrowBuilder *b, const ArrowArray *a, int64_t start, int64_t len,
			 ArrowError *err)
{
	int64_t		base_len = b->length;
	int			i;

	if (len <= 0)
		return 0;
	if (check_open(b, err) < 0)
		return -1;
	if (b->dict || (a->field->has_dict && a->dictionary))
		return append_range_rows(b, a, start, len, err);

	switch (b->type_id)
	{
		case ARROW_TYPE_NULL:
			b->length += len;
			b->null_count += len;
			return 0;
		case ARROW_TYPE_BOOL:
			{
				int64_t		j;

				if (wbuf_reserve(b->w, &b->values, (size_t) (len / 8 + 2), err) < 0)
					return -1;
				for (j = 0; j < len; j++)
					if (bits_push(b->w, &b->values, base_len + j,
								  arrow_get_bit(a->values, a->offset + start + j), err) < 0)
						return -1;
				break;
			}
		case ARROW_TYPE_UTF8:
		case ARROW_TYPE_BINARY:
		case ARROW_TYPE_LARGE_UTF8:
		case ARROW_TYPE_LARGE_BINARY:
			{
				int64_t		o0 = arrow_offset_at(a, start);
				int64_t		o1 = arrow_offset_at(a, start + len);
				int64_t		base = (int64_t) b->data.len;

				if (offsets_range(b, a, start, len, base, err) < 0)
					return -1;
				if (wbuf_push(b->w, &b->data, a->data + o0, (size_t) (o1 - o0), err) < 0)
					return -1;
				break;
			}
		case ARROW_TYPE_LIST:
		case ARROW_TYPE_LARGE_LIST:
		case ARROW_TYPE_MAP:
			{
				int64_t		o0 = arrow_offset_at(a, start);
				int64_t		o1 = arrow_offset_at(a, start + len);

				if (offsets_range(b, a, start, len, b->children[0]->length, err) < 0)
					return -1;
				if (append_range(b->children[0], &a->children[0], o0, o1 - o0, err) < 0)
					return -1;
				break;
			}
		case ARROW_TYPE_FIXED_SIZE_LIST:
			{
				int64_t		sz = b->field->type.fixed_size;

				if (append_range(b->children[0], &a->children[0],
								 (a->offset + start) * sz, len * sz, err) < 0)
					return -1;
				break;
			}
		case ARROW_TYPE_STRUCT:
			for (i = 0; i < b->n_children; i++)
				if (append_range(b->children[i], &a->children[i],
								 a->offset + start, len, err) < 0)
					return -1;
			break;
		default:
			/* fixed width */
			if (wbuf_push(b->w, &b->values,
						  a->values + (size_t) (a->offset + start) * b->width,
						  (size_t) len * b->width, err) < 0)
				return -1;
			break;
	}
	if (validity_range(b, a, start, len, err) < 0)
		return -1;
	b->length = base_len + len;
	stat_range(b, base_len, len);
	return 0;
}

int
arrow_builder_append_array(ArrowBuilder *b, const ArrowArray *a,
						   int64_t start, int64_t len, ArrowError *err)
{
	char		t1[256],
				t2[256];

	if (start < 0 || len < 0 || start > a->length || len > a->length - start)
		return arrow_error(err, ARROW_ERR_INVALID, -1,
						   "%s: column \"%s\": rows [%lld, +%lld) outside an array of %lld",
						   writer_path(b->w), b->field->name, (long long) start,
						   (long long) len, (long long) a->length);
	if (!types_compatible(b->field, a->field))
		return arrow_error(err, ARROW_ERR_INVALID, -1,
						   "%s: column \"%s\" of type %s cannot take an array of type %s",
						   writer_path(b->w), b->field->name,
						   arrow_type_string(b->field, t1, sizeof(t1)),
						   arrow_type_string(a->field, t2, sizeof(t2)));
	return append_range(b, a, start, len, err);
}

ArrowBuilder *
arrow_builder_child(ArrowBuilder *b, int i)
{
	if (b == NULL || i < 0 || i >= b->n_children)
		return NULL;
	return b->children[i];
}
