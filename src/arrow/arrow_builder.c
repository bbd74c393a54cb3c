/*
 * arrow_builder.c — column builders for ArrowWriter.
 *
 * A builder accumulates the buffers of one field for the current record
 * batch: validity bitmap (materialised only once a null appears, so that
 * columns without nulls cost nothing), values, offsets and data, and child
 * builders for nested types.  arrow_write.c serialises them at flush time
 * and resets them, so a builder never holds more than one batch.
 *
 * Dictionary-encoded fields keep an ArrowDict: every distinct value seen in
 * the file (as raw storage bytes in a hash table) and a "pending" builder of
 * the value type with the values that have not been written in a
 * dictionary batch yet.  A typed append on such a field appends the value
 * to the pending builder first (which does the type and range checks), then
 * looks its bytes up: a known value is rolled back off the pending builder
 * and its old index used.  That way one code path validates values for both
 * encodings.  Dictionary value types are limited to flat types (fixed-width
 * and Utf8/Binary), which is what anyone dictionary-encodes in practice.
 *
 * Values are stored in host byte order; the writer declares the schema
 * little-endian, so we refuse to build on big-endian hosts.
 *
 * This file holds the buffers, the layout, creation and serialising of a
 * builder; the statistics are in arrow_builder_stats.c, the dictionaries in
 * arrow_builder_dict.c, the value appenders in arrow_builder_append.c and
 * the array appends in arrow_builder_array.c.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "arrow_builder_int.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "pg_warp's Arrow writer assumes a little-endian host"
#endif

/* ------------------------------------------------------------ buffers */

int
wbuf_reserve(ArrowWriter *w, WBuf *b, size_t extra, ArrowError *err)
{
	const ArrowAllocator *al = writer_allocator(w);
	size_t		need;
	size_t		newcap;
	uint8_t    *nd;

	if (extra > SIZE_MAX - b->len)
		return arrow_error(err, ARROW_ERR_NOMEM, -1, "%s: buffer size overflow",
						   writer_path(w));
	need = b->len + extra;
	if (need <= b->cap)
		return 0;
	newcap = b->cap ? b->cap : 256;
	while (newcap < need)
	{
		if (newcap > SIZE_MAX / 2)
		{
			newcap = need;
			break;
		}
		newcap *= 2;
	}
	if (al->max_alloc && newcap > al->max_alloc)
	{
		newcap = need;
		if (newcap > al->max_alloc)
			return arrow_error(err, ARROW_ERR_NOMEM, -1,
							   "%s: buffer of %zu bytes exceeds the allocation limit of %zu bytes",
							   writer_path(w), need, al->max_alloc);
	}
	nd = al->alloc(al->ctx, newcap);
	if (nd == NULL)
		return arrow_error(err, ARROW_ERR_NOMEM, -1,
						   "%s: out of memory allocating %zu bytes",
						   writer_path(w), newcap);
	if (b->len)
		memcpy(nd, b->data, b->len);
	if (b->data)
		al->free(al->ctx, b->data);
	b->data = nd;
	b->cap = newcap;
	return 0;
}

void
wbuf_free(ArrowWriter *w, WBuf *b)
{
	const ArrowAllocator *al = writer_allocator(w);

	if (b->data)
		al->free(al->ctx, b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

int
validity_push(ArrowBuilder *b, bool valid, ArrowError *err)
{
	int64_t		i = b->length;

	if (!valid && !b->has_validity)
	{
		/* first null: every earlier slot was valid */
		size_t		nfull = (size_t) (i >> 3);
		int			rem = (int) (i & 7);

		b->validity.len = 0;
		if (wbuf_reserve(b->w, &b->validity, nfull + 1, err) < 0)
			return -1;
		memset(b->validity.data, 0xff, nfull);
		b->validity.len = nfull;
		if (rem)
			b->validity.data[b->validity.len++] = (uint8_t) ((1 << rem) - 1);
		b->has_validity = true;
	}
	if (b->has_validity && bits_push(b->w, &b->validity, i, valid, err) < 0)
		return -1;
	if (!valid)
		b->null_count++;
	return 0;
}

/* ------------------------------------------------------------ errors */

int
type_error(ArrowBuilder *b, const char *what, ArrowError *err)
{
	char		tbuf[256];

	return arrow_error(err, ARROW_ERR_INVALID, -1,
					   "%s: column \"%s\" of type %s does not take %s",
					   writer_path(b->w), b->field->name,
					   arrow_type_string(b->field, tbuf, sizeof(tbuf)), what);
}

int
range_error(ArrowBuilder *b, const char *what, ArrowError *err)
{
	char		tbuf[256];

	return arrow_error(err, ARROW_ERR_INVALID, -1,
					   "%s: value %s out of range for column \"%s\" of type %s",
					   writer_path(b->w), what, b->field->name,
					   arrow_type_string(b->field, tbuf, sizeof(tbuf)));
}

/* ------------------------------------------------------------ creation */

static int
index_width(ArrowBuilder *b, const ArrowType *it, int64_t *max_index,
			ArrowError *err)
{
	int			bw = it->bit_width;

	if (it->id != ARROW_TYPE_INT ||
		(bw != 8 && bw != 16 && bw != 32 && bw != 64))
		return arrow_error(err, ARROW_ERR_INVALID, -1,
						   "%s: column \"%s\": dictionary index type must be an integer type",
						   writer_path(b->w), b->field->name);
	if (bw == 64)
		*max_index = INT64_MAX;
	else if (it->is_signed)
		*max_index = ((int64_t) 1 << (bw - 1)) - 1;
	else
		*max_index = ((int64_t) 1 << bw) - 1;
	return bw / 8;
}

static bool
dict_value_type_ok(ArrowTypeId id)
{
	switch (id)
	{
		case ARROW_TYPE_INT:
		case ARROW_TYPE_FLOAT:
		case ARROW_TYPE_DECIMAL:
		case ARROW_TYPE_DATE:
		case ARROW_TYPE_TIME:
		case ARROW_TYPE_TIMESTAMP:
		case ARROW_TYPE_DURATION:
		case ARROW_TYPE_INTERVAL:
		case ARROW_TYPE_FIXED_SIZE_BINARY:
		case ARROW_TYPE_UTF8:
		case ARROW_TYPE_LARGE_UTF8:
		case ARROW_TYPE_BINARY:
		case ARROW_TYPE_LARGE_BINARY:
			return true;
		default:
			return false;
	}
}

/*
 * Set width/offset_width/is_bits from the field's type; normalises a few
 * defaults in the (writer-owned) field so that what we write is explicit.
 */
static int
builder_layout(ArrowBuilder *b, ArrowError *err)
{
	ArrowType  *t = &b->field->type;
	char		tbuf[256];

	switch (t->id)
	{
		case ARROW_TYPE_NULL:
			break;
		case ARROW_TYPE_INT:
			if (t->bit_width != 8 && t->bit_width != 16 &&
				t->bit_width != 32 && t->bit_width != 64)
				goto bad;
			b->width = t->bit_width / 8;
			break;
		case ARROW_TYPE_FLOAT:
			if (t->precision == ARROW_PRECISION_HALF)
				b->width = 2;
			else if (t->precision == ARROW_PRECISION_SINGLE)
				b->width = 4;
			else if (t->precision == ARROW_PRECISION_DOUBLE)
				b->width = 8;
			else
				goto bad;
			break;
		case ARROW_TYPE_DECIMAL:
			if (t->bit_width == 0)
				t->bit_width = 128;
			if (t->bit_width != 128)
				goto unsupported;
			if (t->dec_precision < 1 || t->dec_precision > 38 ||
				t->dec_scale > t->dec_precision)
				goto bad;
			b->width = 16;
			break;
		case ARROW_TYPE_DATE:
			if (t->unit == ARROW_DATE_DAY)
				b->width = 4;
			else if (t->unit == ARROW_DATE_MILLISECOND)
				b->width = 8;
			else
				goto bad;
			break;
		case ARROW_TYPE_TIME:
			if (t->unit < ARROW_TIME_SECOND || t->unit > ARROW_TIME_NANOSECOND)
				goto bad;
			/* the width follows from the unit; accept 0 meaning "the usual" */
			if (t->bit_width == 0)
				t->bit_width = t->unit <= ARROW_TIME_MILLISECOND ? 32 : 64;
			if (t->bit_width != (t->unit <= ARROW_TIME_MILLISECOND ? 32 : 64))
				goto bad;
			b->width = t->bit_width / 8;
			break;
		case ARROW_TYPE_TIMESTAMP:
		case ARROW_TYPE_DURATION:
			if (t->unit < ARROW_TIME_SECOND || t->unit > ARROW_TIME_NANOSECOND)
				goto bad;
			b->width = 8;
			break;
		case ARROW_TYPE_INTERVAL:
			if (t->unit == ARROW_INTERVAL_YEAR_MONTH)
				b->width = 4;
			else if (t->unit == ARROW_INTERVAL_DAY_TIME)
				b->width = 8;
			else if (t->unit == ARROW_INTERVAL_MONTH_DAY_NANO)
				b->width = 16;
			else
				goto bad;
			break;
		case ARROW_TYPE_FIXED_SIZE_BINARY:
			if (t->fixed_size <= 0)
				goto bad;
			b->width = t->fixed_size;
			break;
		case ARROW_TYPE_BOOL:
			b->is_bits = true;
			break;
		case ARROW_TYPE_UTF8:
		case ARROW_TYPE_BINARY:
			b->offset_width = 4;
			break;
		case ARROW_TYPE_LARGE_UTF8:
		case ARROW_TYPE_LARGE_BINARY:
			b->offset_width = 8;
			break;
		case ARROW_TYPE_LIST:
			if (b->field->n_children != 1)
				goto bad;
			b->offset_width = 4;
			break;
		case ARROW_TYPE_LARGE_LIST:
			if (b->field->n_children != 1)
				goto bad;
			b->offset_width = 8;
			break;
		case ARROW_TYPE_MAP:
			if (b->field->n_children != 1 ||
				b->field->children[0].type.id != ARROW_TYPE_STRUCT ||
				b->field->children[0].n_children != 2)
				goto bad;
			b->offset_width = 4;
			break;
		case ARROW_TYPE_FIXED_SIZE_LIST:
			if (b->field->n_children != 1 || t->fixed_size <= 0)
				goto bad;
			break;
		case ARROW_TYPE_STRUCT:
			break;
		default:
			goto unsupported;
	}
	if (b->field->type.id != ARROW_TYPE_LIST &&
		b->field->type.id != ARROW_TYPE_LARGE_LIST &&
		b->field->type.id != ARROW_TYPE_MAP &&
		b->field->type.id != ARROW_TYPE_FIXED_SIZE_LIST &&
		b->field->type.id != ARROW_TYPE_STRUCT &&
		b->field->n_children != 0)
		goto bad;
	return 0;

bad:
	return arrow_error(err, ARROW_ERR_INVALID, -1,
					   "%s: column \"%s\": invalid type %s for writing",
					   writer_path(b->w), b->field->name,
					   arrow_type_string(b->field, tbuf, sizeof(tbuf)));
unsupported:
	return arrow_error(err, ARROW_ERR_UNSUPPORTED, -1,
					   "%s: column \"%s\": writing type %s is not supported",
					   writer_path(b->w), b->field->name,
					   arrow_type_string(b->field, tbuf, sizeof(tbuf)));
}

ArrowBuilder *
builder_create(ArrowWriter *w, ArrowField *field, int column,
			   ArrowArena *arena, ArrowError *err)
{
	ArrowBuilder *b;
	int			i;

	b = arrow_arena_alloc(arena, sizeof(ArrowBuilder), err);
	if (b == NULL)
		return NULL;
	b->w = w;
	b->field = field;
	b->type_id = field->type.id;
	b->column = column;
	b->top_level = column >= 0;
	if (builder_layout(b, err) < 0)
		return NULL;

	if (field->has_dict)
	{
		ArrowDict  *d;
		int			iw;
		char		tbuf[256];

		if (!dict_value_type_ok(field->type.id))
		{
			arrow_error(err, ARROW_ERR_UNSUPPORTED, -1,
						"%s: column \"%s\": dictionary encoding of %s values is not supported",
						writer_path(w), field->name,
						arrow_type_string(field, tbuf, sizeof(tbuf)));
			return NULL;
		}
		d = arrow_arena_alloc(arena, sizeof(ArrowDict), err);
		if (d == NULL)
			return NULL;
		d->field = field;
		d->value_field = *field;
		d->value_field.has_dict = false;
		d->value_field.nullable = false;
		d->value_field.n_metadata = 0;
		d->value_field.metadata = NULL;
		iw = index_width(b, &field->dict.index_type, &d->max_index, err);
		if (iw < 0)
			return NULL;
		d->pending = builder_create(w, &d->value_field, -1, arena, err);
		if (d->pending == NULL)
			return NULL;
		if (wbuf_zeros(w, &d->key_offsets, 8, err) < 0)
			return NULL;
		b->dict = d;
		/* the column itself stores indices */
		b->width = iw;
		b->offset_width = 0;
		b->is_bits = false;
		return b;
	}

	if (b->offset_width && wbuf_zeros(w, &b->offsets, b->offset_width, err) < 0)
		return NULL;

	if (b->top_level)
	{
		switch (field->type.id)
		{
			case ARROW_TYPE_INT:
				b->stat_kind = field->type.is_signed ? STAT_INT : STAT_UINT;
				break;
			case ARROW_TYPE_FLOAT:
				b->stat_kind = STAT_FLOAT;
				break;
			case ARROW_TYPE_DECIMAL:
				b->stat_kind = STAT_DECIMAL;
				break;
			case ARROW_TYPE_DATE:
			case ARROW_TYPE_TIME:
			case ARROW_TYPE_TIMESTAMP:
			case ARROW_TYPE_DURATION:
				b->stat_kind = STAT_INT;
				break;
			default:
				break;
		}
	}

	b->n_children = field->n_children;
	if (b->n_children)
	{
		b->children = arrow_arena_alloc(arena, sizeof(ArrowBuilder *) * b->n_children, err);
		if (b->children == NULL)
			return NULL;
		for (i = 0; i < b->n_children; i++)
		{
			b->children[i] = builder_create(w, &field->children[i], -1, arena, err);
			if (b->children[i] == NULL)
				return NULL;
		}
	}
	return b;
}

void
builder_free(ArrowBuilder *b)
{
	int			i;

	if (b == NULL)
		return;
	wbuf_free(b->w, &b->validity);
	wbuf_free(b->w, &b->values);
	wbuf_free(b->w, &b->offsets);
	wbuf_free(b->w, &b->data);
	for (i = 0; i < b->n_children; i++)
		builder_free(b->children[i]);
	if (b->dict)
	{
		builder_free(b->dict->pending);
		wbuf_free(b->w, &b->dict->key_bytes);
		wbuf_free(b->w, &b->dict->key_offsets);
		wbuf_free(b->w, &b->dict->key_hashes);
		wbuf_free(b->w, &b->dict->slots);
	}
}

void
builder_reset(ArrowBuilder *b)
{
	int			i;

	b->length = 0;
	b->null_count = 0;
	b->has_validity = false;
	b->validity.len = 0;
	b->values.len = 0;
	b->data.len = 0;
	b->list_open = false;
	b->stat_have = false;
	if (b->offset_width)
	{
		/* capacity for the leading zero was reserved at creation */
		memset(b->offsets.data, 0, b->offset_width);
		b->offsets.len = b->offset_width;
	}
	for (i = 0; i < b->n_children; i++)
		builder_reset(b->children[i]);
}

/* ------------------------------------------------------------ serialising */

static int64_t
bitmap_bytes(int64_t n)
{
	return (n + 7) / 8;
}

void
builder_count(ArrowBuilder *b, int *n_nodes, int *n_bufs)
{
	int			i;

	(*n_nodes)++;
	if (b->dict)
	{
		*n_bufs += 2;
		return;
	}
	switch (b->type_id)
	{
		case ARROW_TYPE_NULL:
			break;
		case ARROW_TYPE_STRUCT:
		case ARROW_TYPE_FIXED_SIZE_LIST:
			*n_bufs += 1;
			break;
		case ARROW_TYPE_UTF8:
		case ARROW_TYPE_BINARY:
		case ARROW_TYPE_LARGE_UTF8:
		case ARROW_TYPE_LARGE_BINARY:
			*n_bufs += 3;
			break;
		default:
			*n_bufs += 2;
			break;
	}
	for (i = 0; i < b->n_children; i++)
		builder_count(b->children[i], n_nodes, n_bufs);
}

void
builder_collect(ArrowBuilder *b, ArrowFieldNode *nodes, int *n_nodes,
				BodyBuf *bufs, int *n_bufs)
{
	int			i;
	BodyBuf    *vb;

	nodes[*n_nodes].length = b->length;
	nodes[*n_nodes].null_count =
		b->type_id == ARROW_TYPE_NULL && !b->dict ? b->length : b->null_count;
	(*n_nodes)++;
	if (b->type_id == ARROW_TYPE_NULL && !b->dict)
		return;

	/* validity: written with length 0 when there are no nulls */
	vb = &bufs[(*n_bufs)++];
	if (b->null_count > 0 && b->has_validity)
	{
		vb->data = b->validity.data;
		vb->len = bitmap_bytes(b->length);
	}
	else
	{
		vb->data = NULL;
		vb->len = 0;
	}

	if (b->dict || b->width || b->is_bits)
	{
		bufs[*n_bufs].data = b->values.data;
		bufs[*n_bufs].len = b->is_bits && !b->dict ? bitmap_bytes(b->length) :
			(int64_t) b->values.len;
		(*n_bufs)++;
	}
	if (b->dict)
		return;
	if (b->offset_width)
	{
		bufs[*n_bufs].data = b->offsets.data;
		bufs[*n_bufs].len = (int64_t) b->offsets.len;
		(*n_bufs)++;
		if (b->type_id == ARROW_TYPE_UTF8 || b->type_id == ARROW_TYPE_BINARY ||
			b->type_id == ARROW_TYPE_LARGE_UTF8 ||
			b->type_id == ARROW_TYPE_LARGE_BINARY)
		{
			bufs[*n_bufs].data = b->data.data;
			bufs[*n_bufs].len = (int64_t) b->data.len;
			(*n_bufs)++;
		}
	}
	for (i = 0; i < b->n_children; i++)
		builder_collect(b->children[i], nodes, n_nodes, bufs, n_bufs);
}

int
builder_dicts(ArrowBuilder *b, ArrowDict **out, int max)
{
	int			n = 0;
	int			i;

	if (b->dict)
	{
		if (max > 0)
			out[0] = b->dict;
		return 1;
	}
	for (i = 0; i < b->n_children; i++)
		n += builder_dicts(b->children[i], out ? out + n : NULL, max - n);
	return n;
}

int64_t
builder_max_offset32(ArrowBuilder *b)
{
	int64_t		m = 0;
	int			i;

	if (b->dict)
		return 0;
	if (b->offset_width == 4)
	{
		if (b->type_id == ARROW_TYPE_UTF8 || b->type_id == ARROW_TYPE_BINARY)
			m = (int64_t) b->data.len;
		else
			m = b->children[0]->length;
	}
	for (i = 0; i < b->n_children; i++)
	{
		int64_t		c = builder_max_offset32(b->children[i]);

		if (c > m)
			m = c;
	}
	return m;
}
