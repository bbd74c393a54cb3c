/*
 * arrow_builder_append.c — appending single values to a column builder:
 * nulls, the typed appenders (integers, floats, decimals, bytes, booleans,
 * intervals), each checking the value against the column's type, and list
 * and struct slots.
 *
 * A value for a dictionary-encoded field goes through the pending builder
 * and dict_commit (arrow_builder_dict.c); statistics are kept by stat_add
 * (arrow_builder_stats.c).  Whole arrays are appended by
 * arrow_builder_array.c.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "arrow_builder_int.h"

int
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

int
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

int
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
