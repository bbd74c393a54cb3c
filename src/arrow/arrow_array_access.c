/*
 * arrow_array_access.c — value accessors over loaded ArrowArrays: integers
 * of any width (and dictionary indices), floats (half precision included),
 * bytes of strings and fixed-size values, and slices of an array.
 *
 * The arrays were validated when loaded (arrow_array.c); the accessors
 * read them without further checks.
 */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow_array_internal.h"

static inline int64_t
load_int(const uint8_t *p, int width, bool is_signed)
{
	switch (width)
	{
		case 1:
			return is_signed ? (int64_t) (int8_t) p[0] : (int64_t) p[0];
		case 2:
			{
				uint16_t	u;

				memcpy(&u, p, 2);
				return is_signed ? (int64_t) (int16_t) u : (int64_t) u;
			}
		case 4:
			{
				uint32_t	u;

				memcpy(&u, p, 4);
				return is_signed ? (int64_t) (int32_t) u : (int64_t) u;
			}
		default:
			{
				int64_t		v;

				memcpy(&v, p, 8);
				return v;
			}
	}
}

int64_t
arrow_get_dict_index(const ArrowArray *a, int64_t i)
{
	const ArrowType *it = &a->field->dict.index_type;
	int			w = it->bit_width / 8;

	return load_int(a->values + (a->offset + i) * w, w, it->is_signed);
}

int64_t
arrow_get_int(const ArrowArray *a, int64_t i)
{
	const ArrowType *t = &a->field->type;
	int64_t		j = a->offset + i;
	int			w;

	if (a->field->has_dict)
		return arrow_get_dict_index(a, i);
	switch (t->id)
	{
		case ARROW_TYPE_INT:
			w = t->bit_width / 8;
			return load_int(a->values + j * w, w, t->is_signed);
		case ARROW_TYPE_BOOL:
			return arrow_get_bit(a->values, j);
		case ARROW_TYPE_FLOAT:
			return (int64_t) arrow_get_double(a, i);
		case ARROW_TYPE_DATE:
		case ARROW_TYPE_TIME:
		case ARROW_TYPE_TIMESTAMP:
		case ARROW_TYPE_DURATION:
		case ARROW_TYPE_DECIMAL:	/* low 64 bits */
		case ARROW_TYPE_INTERVAL:	/* months (or days) */
			w = arrow_type_byte_width(t);
			return load_int(a->values + j * w, w > 8 ? 8 : w, true);
		default:
			return 0;
	}
}

uint64_t
arrow_get_uint64(const ArrowArray *a, int64_t i)
{
	const ArrowType *t = &a->field->type;

	if (!a->field->has_dict && t->id == ARROW_TYPE_INT && t->bit_width == 64)
	{
		uint64_t	v;

		memcpy(&v, a->values + (a->offset + i) * 8, 8);
		return v;
	}
	return (uint64_t) arrow_get_int(a, i);
}

/* IEEE 754 half precision to double; exact for every value. */
double
arrow_half_to_double(uint16_t h)
{
	int			sign = h >> 15;
	int			exp = (h >> 10) & 0x1f;
	int			mant = h & 0x3ff;
	double		v;

	if (exp == 0)
		v = ldexp((double) mant, -24);
	else if (exp == 31)
		v = mant ? NAN : INFINITY;
	else
		v = ldexp((double) (mant | 0x400), exp - 25);
	return sign ? -v : v;
}

double
arrow_get_double(const ArrowArray *a, int64_t i)
{
	const ArrowType *t = &a->field->type;
	int64_t		j = a->offset + i;

	if (t->id == ARROW_TYPE_FLOAT && !a->field->has_dict)
	{
		switch (t->precision)
		{
			case ARROW_PRECISION_HALF:
				{
					uint16_t	h;

					memcpy(&h, a->values + j * 2, 2);
					return arrow_half_to_double(h);
				}
			case ARROW_PRECISION_SINGLE:
				{
					float		f;

					memcpy(&f, a->values + j * 4, 4);
					return f;
				}
			default:
				{
					double		d;

					memcpy(&d, a->values + j * 8, 8);
					return d;
				}
		}
	}
	if (t->id == ARROW_TYPE_INT && !t->is_signed && t->bit_width == 64 &&
		!a->field->has_dict)
		return (double) arrow_get_uint64(a, i);
	return (double) arrow_get_int(a, i);
}

const uint8_t *
arrow_get_bytes(const ArrowArray *a, int64_t i, int64_t *len)
{
	const ArrowType *t = &a->field->type;
	int64_t		j = a->offset + i;
	int64_t		w;

	if (a->field->has_dict)
	{
		w = a->field->dict.index_type.bit_width / 8;
		*len = w;
		return a->values + j * w;
	}
	switch (t->id)
	{
		case ARROW_TYPE_UTF8:
		case ARROW_TYPE_BINARY:
		case ARROW_TYPE_LARGE_UTF8:
		case ARROW_TYPE_LARGE_BINARY:
			{
				int64_t		s = arrow_offset_at(a, i),
							e = arrow_offset_at(a, i + 1);

				*len = e - s;
				return a->data + s;
			}
		default:
			w = arrow_type_byte_width(t);
			*len = w;
			if (w <= 0)
			{
				*len = 0;
				return (const uint8_t *) zero_buffer;
			}
			return a->values + j * w;
	}
}

void
arrow_array_slice(const ArrowArray *src, int64_t start, int64_t len,
				  ArrowArray *dst)
{
	int64_t		i;

	*dst = *src;
	dst->offset = src->offset + start;
	dst->length = len;
	if (src->field && src->field->type.id == ARROW_TYPE_NULL &&
		!src->field->has_dict)
		dst->null_count = len;
	else if (src->validity == NULL || src->null_count == 0)
		dst->null_count = 0;
	else
	{
		int64_t		n = 0;

		for (i = 0; i < len; i++)
			n += !arrow_get_bit(src->validity, dst->offset + i);
		dst->null_count = n;
	}
}
