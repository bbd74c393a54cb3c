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
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "arrow_write_int.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "pg_warp's Arrow writer assumes a little-endian host"
#endif

/* Flush once a 32-bit offset buffer passes this, so that one more value of
 * up to 1 GB (PostgreSQL's limit) still fits below 2^31. */
#define OFFSET32_LIMIT ((int64_t) INT32_MAX)

static int	append_range(ArrowBuilder *b, const ArrowArray *a, int64_t start,
						 int64_t len, ArrowError *err);
static int	null_internal(ArrowBuilder *b, ArrowError *err);

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

static inline int
wbuf_push(ArrowWriter *w, WBuf *b, const void *p, size_t n, ArrowError *err)
{
	if (n == 0)
		return 0;
	if (b->cap - b->len < n && wbuf_reserve(w, b, n, err) < 0)
		return -1;
	memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

static inline int
wbuf_zeros(ArrowWriter *w, WBuf *b, size_t n, ArrowError *err)
{
	if (b->cap - b->len < n && wbuf_reserve(w, b, n, err) < 0)
		return -1;
	memset(b->data + b->len, 0, n);
	b->len += n;
	return 0;
}

/* Append one bit (bit index `i`, i.e. the builder's current length). */
static inline int
bits_push(ArrowWriter *w, WBuf *b, int64_t i, bool bit, ArrowError *err)
{
	if ((i & 7) == 0)
	{
		if (wbuf_zeros(w, b, 1, err) < 0)
			return -1;
	}
	if (bit)
		b->data[i >> 3] |= (uint8_t) (1 << (i & 7));
	return 0;
}

static int
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

static int
type_error(ArrowBuilder *b, const char *what, ArrowError *err)
{
	char		tbuf[256];

	return arrow_error(err, ARROW_ERR_INVALID, -1,
					   "%s: column \"%s\" of type %s does not take %s",
					   writer_path(b->w), b->field->name,
					   arrow_type_string(b->field, tbuf, sizeof(tbuf)), what);
}

static int
range_error(ArrowBuilder *b, const char *what, ArrowError *err)
{
	char		tbuf[256];

	return arrow_error(err, ARROW_ERR_INVALID, -1,
					   "%s: value %s out of range for column \"%s\" of type %s",
					   writer_path(b->w), what, b->field->name,
					   arrow_type_string(b->field, tbuf, sizeof(tbuf)));
}

/* ------------------------------------------------------------ statistics */


/*
 * Double to IEEE half, rounding to nearest even, straight from the double's
 * bits (going through float would round twice).
 */
static uint16_t
double_to_half(double d)
{
	uint64_t	bits;
	uint16_t	sign;
	int			exp;
	uint64_t	m;
	int			e;
	int			shift;
	uint64_t	full,
				rem,
				halfway;
	uint32_t	h;

	memcpy(&bits, &d, 8);
	sign = (uint16_t) ((bits >> 48) & 0x8000);
	exp = (int) ((bits >> 52) & 0x7ff);
	m = bits & 0xFFFFFFFFFFFFFULL;
	if (exp == 0x7ff)
		return sign | 0x7c00 | (m ? 0x200 : 0);
	if (exp == 0)
		return sign;			/* double subnormals are far below half's */
	m |= (uint64_t) 1 << 52;
	e = exp - 1023;
	if (e > 15)
		return sign | 0x7c00;
	if (e >= -14)
		shift = 42;
	else
		shift = 42 + (-14 - e);
	if (shift > 60)
		return sign;
	full = m >> shift;
	rem = m & (((uint64_t) 1 << shift) - 1);
	halfway = (uint64_t) 1 << (shift - 1);
	if (rem > halfway || (rem == halfway && (full & 1)))
		full++;
	if (e >= -14)
		h = ((uint32_t) (e + 15) << 10) + (uint32_t) (full - 0x400);	/* carry
																		 * may reach inf */
	else
		h = (uint32_t) full;	/* may round up to the smallest normal */
	if (h >= 0x7c00)
		h = 0x7c00;
	return sign | (uint16_t) h;
}

/* NaN sorts above everything, as in PostgreSQL. */
static inline bool
float_less(double a, double b)
{
	if (isnan(a))
		return false;
	if (isnan(b))
		return true;
	return a < b;
}

static void
stat_add(ArrowBuilder *b, int64_t i)
{
	const uint8_t *p = b->values.data + (size_t) i * b->width;

	if (b->stat_kind == STAT_FLOAT)
	{
		double		d;

		if (b->width == 2)
		{
			uint16_t	h;

			memcpy(&h, p, 2);
			d = arrow_half_to_double(h);
		}
		else if (b->width == 4)
		{
			float		f;

			memcpy(&f, p, 4);
			d = f;
		}
		else
			memcpy(&d, p, 8);
		if (!b->stat_have)
		{
			b->stat_dmin = b->stat_dmax = d;
			b->stat_have = true;
		}
		else
		{
			if (float_less(d, b->stat_dmin))
				b->stat_dmin = d;
			if (float_less(b->stat_dmax, d))
				b->stat_dmax = d;
		}
	}
	else
	{
		__int128	v = 0;

		switch (b->width)
		{
			case 1:
				v = b->stat_kind == STAT_UINT ? (__int128) *(const uint8_t *) p : (__int128) *(const int8_t *) p;
				break;
			case 2:
				{
					int16_t		s;
					uint16_t	u;

					memcpy(&s, p, 2);
					memcpy(&u, p, 2);
					v = b->stat_kind == STAT_UINT ? (__int128) u : (__int128) s;
					break;
				}
			case 4:
				{
					int32_t		s;
					uint32_t	u;

					memcpy(&s, p, 4);
					memcpy(&u, p, 4);
					v = b->stat_kind == STAT_UINT ? (__int128) u : (__int128) s;
					break;
				}
			case 8:
				{
					int64_t		s;
					uint64_t	u;

					memcpy(&s, p, 8);
					memcpy(&u, p, 8);
					v = b->stat_kind == STAT_UINT ? (__int128) u : (__int128) s;
					break;
				}
			case 16:
				memcpy(&v, p, 16);
				break;
		}
		if (!b->stat_have)
		{
			b->stat_imin = b->stat_imax = v;
			b->stat_have = true;
		}
		else
		{
			if (v < b->stat_imin)
				b->stat_imin = v;
			if (v > b->stat_imax)
				b->stat_imax = v;
		}
	}
}

/* Statistics over slots [from, from+n) just appended. */
static void
stat_range(ArrowBuilder *b, int64_t from, int64_t n)
{
	int64_t		i;

	if (b->stat_kind == STAT_NONE || n <= 0)
		return;
	/* fast path (bulk appends of int32 without nulls: pgwarp ssb gen) */
	if (b->stat_kind == STAT_INT && b->width == 4 && !b->has_validity)
	{
		const int32_t *v = (const int32_t *) (b->values.data + (size_t) from * 4);
		int32_t		lo = v[0],
					hi = v[0];

		for (i = 1; i < n; i++)
		{
			lo = v[i] < lo ? v[i] : lo;
			hi = v[i] > hi ? v[i] : hi;
		}
		if (!b->stat_have)
		{
			b->stat_imin = lo;
			b->stat_imax = hi;
			b->stat_have = true;
		}
		else
		{
			if (lo < b->stat_imin)
				b->stat_imin = lo;
			if (hi > b->stat_imax)
				b->stat_imax = hi;
		}
		return;
	}
	for (i = from; i < from + n; i++)
	{
		if (b->has_validity && !arrow_get_bit(b->validity.data, i))
			continue;
		stat_add(b, i);
	}
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

/* ------------------------------------------------------------ dictionaries */

static uint64_t
hash_bytes(const uint8_t *p, size_t n)
{
	uint64_t	h = 0x9E3779B97F4A7C15ULL ^ (uint64_t) n;
	uint64_t	k;

	while (n >= 8)
	{
		memcpy(&k, p, 8);
		h ^= k * 0xbf58476d1ce4e5b9ULL;
		h = ((h << 27) | (h >> 37)) * 0x94d049bb133111ebULL;
		p += 8;
		n -= 8;
	}
	k = 0;
	if (n)
		memcpy(&k, p, n);
	h ^= k * 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 31;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 29;
	return h;
}

static int64_t
dict_lookup(ArrowDict *d, const uint8_t *key, size_t len, uint64_t h)
{
	const int64_t *slots = (const int64_t *) d->slots.data;
	const int64_t *offs = (const int64_t *) d->key_offsets.data;
	const uint64_t *hashes = (const uint64_t *) d->key_hashes.data;
	size_t		mask = d->n_slots - 1;
	size_t		s;

	if (d->n_slots == 0)
		return -1;
	for (s = h & mask;; s = (s + 1) & mask)
	{
		int64_t		idx = slots[s];

		if (idx < 0)
			return -1;
		if (hashes[idx] == h &&
			(size_t) (offs[idx + 1] - offs[idx]) == len &&
			(len == 0 || memcmp(d->key_bytes.data + offs[idx], key, len) == 0))
			return idx;
	}
}

static int
dict_grow_slots(ArrowWriter *w, ArrowDict *d, ArrowError *err)
{
	size_t		n = d->n_slots ? d->n_slots * 2 : 1024;
	int64_t    *slots;
	const uint64_t *hashes = (const uint64_t *) d->key_hashes.data;
	int64_t		i;

	if (n > SIZE_MAX / 8)
		return arrow_error(err, ARROW_ERR_NOMEM, -1, "%s: dictionary too large",
						   writer_path(w));
	d->slots.len = 0;
	if (wbuf_reserve(w, &d->slots, n * 8, err) < 0)
		return -1;
	d->slots.len = n * 8;
	slots = (int64_t *) d->slots.data;
	memset(slots, 0xff, n * 8);
	d->n_slots = n;
	/* re-insert every key (hashes of unmapped duplicates are re-inserted
	 * too; lookup finds the first, which is the one we want) */
	for (i = 0; i < d->count; i++)
	{
		size_t		s;

		for (s = hashes[i] & (n - 1); slots[s] >= 0; s = (s + 1) & (n - 1))
			;
		slots[s] = i;
	}
	return 0;
}

/* Add a key with the next index. */
static int
dict_insert(ArrowWriter *w, ArrowDict *d, const uint8_t *key, size_t len,
			uint64_t h, ArrowError *err)
{
	int64_t		end;
	int64_t    *slots;
	size_t		s;

	if ((size_t) (d->count + 1) * 2 > d->n_slots)
	{
		/* keep the load factor under 1/2; hashes must be stored first */
		if (wbuf_push(w, &d->key_hashes, &h, 8, err) < 0)
			return -1;
		d->count++;
		if (wbuf_push(w, &d->key_bytes, key, len, err) < 0)
			return -1;
		end = (int64_t) d->key_bytes.len;
		if (wbuf_push(w, &d->key_offsets, &end, 8, err) < 0)
			return -1;
		return dict_grow_slots(w, d, err);
	}
	if (wbuf_push(w, &d->key_hashes, &h, 8, err) < 0 ||
		wbuf_push(w, &d->key_bytes, key, len, err) < 0)
		return -1;
	end = (int64_t) d->key_bytes.len;
	if (wbuf_push(w, &d->key_offsets, &end, 8, err) < 0)
		return -1;
	slots = (int64_t *) d->slots.data;
	for (s = h & (d->n_slots - 1); slots[s] >= 0; s = (s + 1) & (d->n_slots - 1))
		;
	slots[s] = d->count;
	d->count++;
	return 0;
}

/* Bytes of the last value of a (flat, non-null) builder. */
static const uint8_t *
last_value(ArrowBuilder *p, size_t *len)
{
	int64_t		i = p->length - 1;

	if (p->offset_width == 4)
	{
		const int32_t *o = (const int32_t *) p->offsets.data;

		*len = (size_t) (o[i + 1] - o[i]);
		return p->data.data + o[i];
	}
	if (p->offset_width == 8)
	{
		const int64_t *o = (const int64_t *) p->offsets.data;

		*len = (size_t) (o[i + 1] - o[i]);
		return p->data.data + o[i];
	}
	*len = (size_t) p->width;
	return p->values.data + (size_t) i * p->width;
}

static void
pending_rollback(ArrowBuilder *p)
{
	p->length--;
	if (p->offset_width)
	{
		p->offsets.len -= p->offset_width;
		if (p->offset_width == 4)
			p->data.len = (size_t) ((const int32_t *) p->offsets.data)[p->length];
		else
			p->data.len = (size_t) ((const int64_t *) p->offsets.data)[p->length];
	}
	else
		p->values.len -= p->width;
}

static int
index_push(ArrowBuilder *b, int64_t idx, ArrowError *err)
{
	/* little-endian: the low `width` bytes of the int64 are the index */
	if (wbuf_push(b->w, &b->values, &idx, b->width, err) < 0 ||
		validity_push(b, true, err) < 0)
		return -1;
	b->length++;
	return 0;
}

/*
 * The value just appended to b->dict->pending: keep it as a new dictionary
 * entry, or roll it back if already known; then append its index to b.
 */
static int
dict_commit(ArrowBuilder *b, ArrowError *err)
{
	ArrowDict  *d = b->dict;
	ArrowBuilder *p = d->pending;
	const uint8_t *key;
	size_t		len;
	uint64_t	h;
	int64_t		idx;

	key = last_value(p, &len);
	h = hash_bytes(key, len);
	idx = dict_lookup(d, key, len, h);
	if (idx >= 0)
	{
		pending_rollback(p);
		return index_push(b, idx, err);
	}
	if (d->count >= d->max_index)
	{
		pending_rollback(p);
		return arrow_error(err, ARROW_ERR_INVALID, -1,
						   "%s: column \"%s\": more than %lld distinct values do not fit the dictionary index type",
						   writer_path(b->w), b->field->name,
						   (long long) d->max_index);
	}
	idx = d->count;
	if (dict_insert(b->w, d, key, len, h, err) < 0)
		return -1;
	return index_push(b, idx, err);
}

int
dict_seed(ArrowBuilder *b, const ArrowArray *dict, ArrowError *err)
{
	ArrowDict  *d = b->dict;
	int64_t		i;

	if (d == NULL || d->count != 0)
		return arrow_error(err, ARROW_ERR_INVALID, -1,
						   "%s: column \"%s\": cannot seed dictionary",
						   writer_path(b->w), b->field->name);
	for (i = 0; i < dict->length; i++)
	{
		const uint8_t *key;
		int64_t		len;
		uint64_t	h;

		if (arrow_is_null(dict, i))
		{
			/* a null entry keeps its index but never matches */
			key = (const uint8_t *) "";
			len = 0;
			h = ~(uint64_t) 0;
		}
		else
		{
			if (d->pending->offset_width ||
				d->value_field.type.id == ARROW_TYPE_FIXED_SIZE_BINARY ||
				d->value_field.type.id == ARROW_TYPE_DECIMAL)
				key = arrow_get_bytes(dict, i, &len);
			else
			{
				key = dict->values + (size_t) (dict->offset + i) * d->pending->width;
				len = d->pending->width;
			}
			h = hash_bytes(key, (size_t) len);
			/* duplicates in someone else's dictionary: keep the first */
			if (dict_lookup(d, key, (size_t) len, h) >= 0)
				h = ~(uint64_t) 0 - 1;
		}
		if (dict_insert(b->w, d, key, (size_t) len, h, err) < 0)
			return -1;
	}
	d->written = d->count;
	d->any_written = true;
	return 0;
}

/* ------------------------------------------------------------ appenders */

static int
check_open(ArrowBuilder *b, ArrowError *err)
{
	if (b->list_open)
		return arrow_error(err, ARROW_ERR_INVALID, -1,
						   "%s: column \"%s\": value appended to a list between list_begin and list_end (append elements to the child builder)",
						   writer_path(b->w), b->field->name);
	return 0;
}

static int
fixed_push(ArrowBuilder *b, const void *p, ArrowError *err)
{
	if (wbuf_push(b->w, &b->values, p, b->width, err) < 0 ||
		validity_push(b, true, err) < 0)
		return -1;
	if (b->stat_kind != STAT_NONE)
		stat_add(b, b->length);
	b->length++;
	return 0;
}

static int
offset_push(ArrowBuilder *b, int64_t off, ArrowError *err)
{
	if (b->offset_width == 4)
	{
		int32_t		o;

		if (off > OFFSET32_LIMIT)
			return arrow_error(err, ARROW_ERR_INVALID, -1,
							   "%s: column \"%s\": more than 2 GiB of values in one batch for a type with 32-bit offsets (use a Large type)",
							   writer_path(b->w), b->field->name);
		o = (int32_t) off;
		return wbuf_push(b->w, &b->offsets, &o, 4, err);
	}
	return wbuf_push(b->w, &b->offsets, &off, 8, err);
}

static int
null_internal(ArrowBuilder *b, ArrowError *err)
{
	int			i;

	if (check_open(b, err) < 0)
		return -1;
	if (b->type_id == ARROW_TYPE_NULL && !b->dict)
	{
		b->length++;
		b->null_count++;
		return 0;
	}
	if (b->dict || b->width)
	{
		if (wbuf_zeros(b->w, &b->values, b->width, err) < 0)
			return -1;
	}
	else if (b->is_bits)
	{
		if (bits_push(b->w, &b->values, b->length, false, err) < 0)
			return -1;
	}
	else if (b->offset_width)
	{
		int64_t		last;

		if (b->offset_width == 4)
			last = ((const int32_t *) b->offsets.data)[b->length];
		else
			last = ((const int64_t *) b->offsets.data)[b->length];
		if (offset_push(b, last, err) < 0)
			return -1;
	}
	else if (b->type_id == ARROW_TYPE_FIXED_SIZE_LIST)
	{
		int32_t		k;

		for (k = 0; k < b->field->type.fixed_size; k++)
			if (null_internal(b->children[0], err) < 0)
				return -1;
	}
	else if (b->type_id == ARROW_TYPE_STRUCT)
	{
		for (i = 0; i < b->n_children; i++)
			if (null_internal(b->children[i], err) < 0)
				return -1;
	}
	if (validity_push(b, false, err) < 0)
		return -1;
	b->length++;
	return 0;
}

int
arrow_builder_append_null(ArrowBuilder *b, ArrowError *err)
{
	if (!b->field->nullable && b->type_id != ARROW_TYPE_NULL)
		return arrow_error(err, ARROW_ERR_INVALID, -1,
						   "%s: null value in non-nullable column \"%s\"",
						   writer_path(b->w), b->field->name);
	return null_internal(b, err);
}

static int
append_int_plain(ArrowBuilder *b, int64_t v, ArrowError *err)
{
	char		vbuf[32];

	switch (b->type_id)
	{
		case ARROW_TYPE_INT:
			if (b->field->type.is_signed)
			{
				if (b->width < 8)
				{
					int64_t		lim = (int64_t) 1 << (b->width * 8 - 1);

					if (v < -lim || v >= lim)
						goto range;
				}
			}
			else
			{
				if (v < 0)
					goto range;
				if (b->width < 8 && v >= ((int64_t) 1 << (b->width * 8)))
					goto range;
			}
			break;
		case ARROW_TYPE_DATE:
			if (b->width == 4 && (v < INT32_MIN || v > INT32_MAX))
				goto range;
			break;
		case ARROW_TYPE_TIME:
			{
				/* Arrow times lie in [0, one day) (PostgreSQL allows 24:00) */
				static const int64_t per_day[] = {
					86400, 86400000, INT64_C(86400000000), INT64_C(86400000000000)
				};

				if (v < 0 || v >= per_day[b->field->type.unit & 3])
					goto range;
			}
			break;
		case ARROW_TYPE_TIMESTAMP:
		case ARROW_TYPE_DURATION:
			break;
		default:
			return type_error(b, "integers", err);
	}
	if (check_open(b, err) < 0)
		return -1;
	/* little-endian: the low `width` bytes hold the value */
	return fixed_push(b, &v, err);

range:
	snprintf(vbuf, sizeof(vbuf), "%lld", (long long) v);
	return range_error(b, vbuf, err);
}

static int
append_uint64_plain(ArrowBuilder *b, uint64_t v, ArrowError *err)
{
	char		vbuf[32];

	if (b->type_id != ARROW_TYPE_INT)
		return type_error(b, "unsigned integers", err);
	if (b->field->type.is_signed)
	{
		if (v > (uint64_t) INT64_MAX)
			goto range;
		return append_int_plain(b, (int64_t) v, err);
	}
	if (b->width < 8 && v >= ((uint64_t) 1 << (b->width * 8)))
		goto range;
	if (check_open(b, err) < 0)
		return -1;
	return fixed_push(b, &v, err);

range:
	snprintf(vbuf, sizeof(vbuf), "%llu", (unsigned long long) v);
	return range_error(b, vbuf, err);
}

static int
append_double_plain(ArrowBuilder *b, double v, ArrowError *err)
{
	if (b->type_id != ARROW_TYPE_FLOAT)
		return type_error(b, "floating-point values", err);
	if (check_open(b, err) < 0)
		return -1;
	if (b->width == 8)
		return fixed_push(b, &v, err);
	if (b->width == 4)
	{
		float		f = (float) v;

		return fixed_push(b, &f, err);
	}
	else
	{
		uint16_t	h = double_to_half(v);

		return fixed_push(b, &h, err);
	}
}

static int
append_decimal_plain(ArrowBuilder *b, uint64_t lo, int64_t hi, ArrowError *err)
{
	__int128	v;
	__int128	lim = 1;
	int			i;

	if (b->type_id != ARROW_TYPE_DECIMAL)
		return type_error(b, "decimal values", err);
	v = (__int128) (((unsigned __int128) (uint64_t) hi << 64) | lo);
	for (i = 0; i < b->field->type.dec_precision; i++)
		lim *= 10;
	if (v >= lim || v <= -lim)
		return arrow_error(err, ARROW_ERR_INVALID, -1,
						   "%s: value does not fit precision %d of column \"%s\"",
						   writer_path(b->w), b->field->type.dec_precision,
						   b->field->name);
	if (check_open(b, err) < 0)
		return -1;
	return fixed_push(b, &v, err);
}

static int
append_bytes_plain(ArrowBuilder *b, const void *p, size_t len, ArrowError *err)
{
	if (check_open(b, err) < 0)
		return -1;
	switch (b->type_id)
	{
		case ARROW_TYPE_UTF8:
		case ARROW_TYPE_BINARY:
		case ARROW_TYPE_LARGE_UTF8:
		case ARROW_TYPE_LARGE_BINARY:
			if (len > (size_t) INT64_MAX - b->data.len)
				return range_error(b, "(length)", err);
			if (b->offset_width == 4 && b->data.len + len > (size_t) OFFSET32_LIMIT)
				return offset_push(b, (int64_t) (b->data.len + len), err);
			if (wbuf_push(b->w, &b->data, p, len, err) < 0)
				return -1;
			if (offset_push(b, (int64_t) b->data.len, err) < 0 ||
				validity_push(b, true, err) < 0)
				return -1;
			b->length++;
			return 0;
		case ARROW_TYPE_FIXED_SIZE_BINARY:
			if (len != (size_t) b->width)
				return arrow_error(err, ARROW_ERR_INVALID, -1,
								   "%s: column \"%s\" takes values of %d bytes, not %zu",
								   writer_path(b->w), b->field->name, b->width, len);
			return fixed_push(b, p, err);
		default:
			return type_error(b, "byte strings", err);
	}
}

static int
append_bool_plain(ArrowBuilder *b, bool v, ArrowError *err)
{
	if (b->type_id != ARROW_TYPE_BOOL)
		return type_error(b, "booleans", err);
	if (check_open(b, err) < 0)
		return -1;
	if (bits_push(b->w, &b->values, b->length, v, err) < 0 ||
		validity_push(b, true, err) < 0)
		return -1;
	b->length++;
	return 0;
}

static int
append_interval_plain(ArrowBuilder *b, int32_t months, int32_t days,
					  int64_t nanos, ArrowError *err)
{
	uint8_t		buf[16];

	if (b->type_id != ARROW_TYPE_INTERVAL)
		return type_error(b, "intervals", err);
	switch (b->field->type.unit)
	{
		case ARROW_INTERVAL_YEAR_MONTH:
			if (days != 0 || nanos != 0)
				return range_error(b, "(interval with days or time)", err);
			memcpy(buf, &months, 4);
			break;
		case ARROW_INTERVAL_DAY_TIME:
			{
				int64_t		ms;
				int32_t		ms32;

				if (months != 0)
					return range_error(b, "(interval with months)", err);
				if (nanos % 1000000 != 0)
					return range_error(b, "(interval with sub-millisecond time)", err);
				ms = nanos / 1000000;
				if (ms < INT32_MIN || ms > INT32_MAX)
					return range_error(b, "(interval time)", err);
				ms32 = (int32_t) ms;
				memcpy(buf, &days, 4);
				memcpy(buf + 4, &ms32, 4);
				break;
			}
		default:
			memcpy(buf, &months, 4);
			memcpy(buf + 4, &days, 4);
			memcpy(buf + 8, &nanos, 8);
			break;
	}
	if (check_open(b, err) < 0)
		return -1;
	return fixed_push(b, buf, err);
}

/*
 * Public typed appenders: dictionary-encoded columns go through the pending
 * builder of the value type, then dict_commit().
 */
#define DICT_DISPATCH(b, call_plain_on) \
	do { \
		if ((b)->dict) \
		{ \
			if (check_open((b), err) < 0) \
				return -1; \
			if (call_plain_on((b)->dict->pending) < 0) \
				return -1; \
			return dict_commit((b), err); \
		} \
		return call_plain_on(b); \
	} while (0)

int
arrow_builder_append_int(ArrowBuilder *b, int64_t v, ArrowError *err)
{
#define CALL(x) append_int_plain((x), v, err)
	DICT_DISPATCH(b, CALL);
#undef CALL
}

int
arrow_builder_append_uint64(ArrowBuilder *b, uint64_t v, ArrowError *err)
{
#define CALL(x) append_uint64_plain((x), v, err)
	DICT_DISPATCH(b, CALL);
#undef CALL
}

int
arrow_builder_append_double(ArrowBuilder *b, double v, ArrowError *err)
{
#define CALL(x) append_double_plain((x), v, err)
	DICT_DISPATCH(b, CALL);
#undef CALL
}

int
arrow_builder_append_decimal(ArrowBuilder *b, uint64_t lo, int64_t hi,
							 ArrowError *err)
{
#define CALL(x) append_decimal_plain((x), lo, hi, err)
	DICT_DISPATCH(b, CALL);
#undef CALL
}

int
arrow_builder_append_bytes(ArrowBuilder *b, const void *p, size_t len,
						   ArrowError *err)
{
#define CALL(x) append_bytes_plain((x), p, len, err)
	DICT_DISPATCH(b, CALL);
#undef CALL
}

int
arrow_builder_append_bool(ArrowBuilder *b, bool v, ArrowError *err)
{
#define CALL(x) append_bool_plain((x), v, err)
	DICT_DISPATCH(b, CALL);
#undef CALL
}

int
arrow_builder_append_interval(ArrowBuilder *b, int32_t months, int32_t days,
							  int64_t nanos, ArrowError *err)
{
#define CALL(x) append_interval_plain((x), months, days, nanos, err)
	DICT_DISPATCH(b, CALL);
#undef CALL
}

int
arrow_builder_list_begin(ArrowBuilder *b, ArrowError *err)
{
	if (b->dict ||
		(b->type_id != ARROW_TYPE_LIST && b->type_id != ARROW_TYPE_LARGE_LIST &&
		 b->type_id != ARROW_TYPE_FIXED_SIZE_LIST && b->type_id != ARROW_TYPE_MAP))
		return type_error(b, "lists", err);
	if (check_open(b, err) < 0)
		return -1;
	b->list_open = true;
	return 0;
}

int
arrow_builder_list_end(ArrowBuilder *b, ArrowError *err)
{
	ArrowBuilder *c;

	if (!b->list_open)
		return arrow_error(err, ARROW_ERR_INVALID, -1,
						   "%s: column \"%s\": list_end without list_begin",
						   writer_path(b->w), b->field->name);
	c = b->children[0];
	if (c->list_open)
		return arrow_error(err, ARROW_ERR_INVALID, -1,
						   "%s: column \"%s\": list_end while an inner list is open",
						   writer_path(b->w), b->field->name);
	if (b->type_id == ARROW_TYPE_FIXED_SIZE_LIST)
	{
		int64_t		want = (b->length + 1) * (int64_t) b->field->type.fixed_size;

		if (c->length != want)
			return arrow_error(err, ARROW_ERR_INVALID, -1,
							   "%s: column \"%s\": fixed-size list needs %d elements, got %lld",
							   writer_path(b->w), b->field->name,
							   b->field->type.fixed_size,
							   (long long) (c->length - b->length * (int64_t) b->field->type.fixed_size));
	}
	else if (offset_push(b, c->length, err) < 0)
		return -1;
	if (validity_push(b, true, err) < 0)
		return -1;
	b->list_open = false;
	b->length++;
	return 0;
}

int
arrow_builder_struct_valid(ArrowBuilder *b, ArrowError *err)
{
	int			i;

	if (b->type_id != ARROW_TYPE_STRUCT)
		return type_error(b, "struct values", err);
	for (i = 0; i < b->n_children; i++)
		if (b->children[i]->length != b->length + 1 || b->children[i]->list_open)
			return arrow_error(err, ARROW_ERR_INVALID, -1,
							   "%s: column \"%s\": field \"%s\" has %lld values for %lld structs",
							   writer_path(b->w), b->field->name,
							   b->children[i]->field->name,
							   (long long) b->children[i]->length,
							   (long long) b->length + 1);
	if (validity_push(b, true, err) < 0)
		return -1;
	b->length++;
	return 0;
}

/* ------------------------------------------------------------ arrays */

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
