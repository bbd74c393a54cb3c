/*
 * pq_thrift.c — the Thrift compact protocol, as Parquet's footer and page
 * headers use it: a bounded cursor, field headers, integers (zigzag
 * varints), binaries, list headers and skipping of unknown fields with a
 * nesting limit.  Every read is checked against the end of the bytes.
 */
#include <inttypes.h>
#include <stdio.h>

#include "pq_internal.h"

void
pq_thrift_init(PqThrift *t, const uint8_t *p, size_t len, int64_t file_off,
			   const char *name, const char *what, ArrowError *err)
{
	t->base = p;
	t->p = p;
	t->end = p + len;
	t->file_off = file_off;
	t->name = name;
	t->what = what;
	t->depth = 0;
	t->err = err;
}

int
pq_thrift_fail(PqThrift *t, const char *fmt,...)
{
	char		detail[512];
	va_list		ap;
	int64_t		off = t->file_off + (int64_t) (t->p - t->base);

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	return arrow_error(t->err, ARROW_ERR_CORRUPT, off,
					   "%s: malformed Parquet %s at offset %" PRId64 ": %s",
					   t->name, t->what, off, detail);
}

int
pq_uvarint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t	r = 0;
	int			shift = 0;

	while (*p < end)
	{
		uint8_t		b = *(*p)++;

		if (shift == 63 && (b & 0x7e) != 0)
			return -1;
		r |= (uint64_t) (b & 0x7f) << shift;
		if ((b & 0x80) == 0)
		{
			*v = r;
			return 0;
		}
		shift += 7;
		if (shift > 63)
			return -1;
	}
	return -1;
}

static int
read_varint(PqThrift *t, uint64_t *v)
{
	if (pq_uvarint(&t->p, t->end, v) < 0)
		return pq_thrift_fail(t, "bad varint");
	return 0;
}

static int
read_zigzag(PqThrift *t, int64_t *v)
{
	uint64_t	u;

	if (read_varint(t, &u) < 0)
		return -1;
	*v = (int64_t) (u >> 1) ^ -(int64_t) (u & 1);
	return 0;
}

int
pq_thrift_field(PqThrift *t, int16_t *last_id, int *type, int16_t *id)
{
	uint8_t		b;
	int			delta;

	if (t->p >= t->end)
		return pq_thrift_fail(t, "struct not terminated");
	b = *t->p++;
	*type = b & 0x0f;
	if (*type == PQ_T_STOP)
		return 0;
	delta = b >> 4;
	if (delta == 0)
	{
		int64_t		v;

		if (read_zigzag(t, &v) < 0)
			return -1;
		if (v < INT16_MIN || v > INT16_MAX)
			return pq_thrift_fail(t, "field id %" PRId64 " out of range", v);
		*id = (int16_t) v;
	}
	else
		*id = (int16_t) (*last_id + delta);
	*last_id = *id;
	if (*type > PQ_T_STRUCT)
		return pq_thrift_fail(t, "unknown field type %d", *type);
	return 0;
}

int
pq_thrift_i64(PqThrift *t, int type, int64_t *v)
{
	if (type == PQ_T_BYTE)
	{
		if (t->p >= t->end)
			return pq_thrift_fail(t, "truncated byte");
		*v = (int8_t) *t->p++;
		return 0;
	}
	if (type != PQ_T_I16 && type != PQ_T_I32 && type != PQ_T_I64)
		return pq_thrift_fail(t, "expected an integer, found type %d", type);
	return read_zigzag(t, v);
}

int
pq_thrift_i32(PqThrift *t, int type, int32_t *v)
{
	int64_t		w;

	if (type == PQ_T_I64)
		return pq_thrift_fail(t, "expected a 32-bit integer, found type %d", type);
	if (pq_thrift_i64(t, type, &w) < 0)
		return -1;
	if (w < INT32_MIN || w > INT32_MAX)
		return pq_thrift_fail(t, "integer %" PRId64 " out of range", w);
	*v = (int32_t) w;
	return 0;
}

int
pq_thrift_bool(PqThrift *t, int type, bool *v)
{
	if (type == PQ_T_TRUE || type == PQ_T_FALSE)
	{
		*v = type == PQ_T_TRUE;
		return 0;
	}
	return pq_thrift_fail(t, "expected a boolean, found type %d", type);
}

int
pq_thrift_binary(PqThrift *t, int type, const uint8_t **p, uint32_t *len)
{
	uint64_t	n;

	if (type != PQ_T_BINARY)
		return pq_thrift_fail(t, "expected a binary, found type %d", type);
	if (read_varint(t, &n) < 0)
		return -1;
	if (n > (uint64_t) (t->end - t->p))
		return pq_thrift_fail(t, "binary of %" PRIu64 " bytes past the end", n);
	*p = t->p;
	*len = (uint32_t) n;
	t->p += n;
	return 0;
}

int
pq_thrift_list(PqThrift *t, int type, int *elem_type, int32_t *n)
{
	uint8_t		b;
	uint64_t	size;

	if (type != PQ_T_LIST && type != PQ_T_SET)
		return pq_thrift_fail(t, "expected a list, found type %d", type);
	if (t->p >= t->end)
		return pq_thrift_fail(t, "truncated list header");
	b = *t->p++;
	*elem_type = b & 0x0f;
	size = b >> 4;
	if (size == 15 && read_varint(t, &size) < 0)
		return -1;
	/* every element takes at least one byte */
	if (size > (uint64_t) (t->end - t->p) || size > INT32_MAX)
		return pq_thrift_fail(t, "list of %" PRIu64 " elements past the end", size);
	if (*elem_type == PQ_T_STOP || *elem_type > PQ_T_STRUCT)
		return pq_thrift_fail(t, "unknown list element type %d", *elem_type);
	*n = (int32_t) size;
	return 0;
}

int
pq_thrift_enter(PqThrift *t, int type)
{
	if (type != PQ_T_STRUCT)
		return pq_thrift_fail(t, "expected a struct, found type %d", type);
	if (++t->depth > PQ_THRIFT_MAX_DEPTH)
		return pq_thrift_fail(t, "structures nested too deeply");
	return 0;
}

void
pq_thrift_leave(PqThrift *t)
{
	t->depth--;
}

int
pq_thrift_struct(PqThrift *t, int type, PqFieldFn fn, void *arg)
{
	int16_t		last = 0,
				id;
	int			ft,
				rc;

	if (pq_thrift_enter(t, type) < 0)
		return -1;
	for (;;)
	{
		if (pq_thrift_field(t, &last, &ft, &id) < 0)
			return -1;
		if (ft == PQ_T_STOP)
			break;
		rc = fn ? fn(t, id, ft, arg) : 1;
		if (rc < 0 || (rc > 0 && pq_thrift_skip(t, ft) < 0))
			return -1;
	}
	pq_thrift_leave(t);
	return 0;
}

/* skip a list element / map entry of type `type` (booleans are one byte) */
static int
skip_element(PqThrift *t, int type)
{
	if (type == PQ_T_TRUE || type == PQ_T_FALSE)
	{
		if (t->p >= t->end)
			return pq_thrift_fail(t, "truncated boolean");
		t->p++;
		return 0;
	}
	return pq_thrift_skip(t, type);
}

int
pq_thrift_skip(PqThrift *t, int type)
{
	int64_t		i64;
	const uint8_t *p;
	uint32_t	len;
	int32_t		n,
				i;
	int			et;

	switch (type)
	{
		case PQ_T_TRUE:
		case PQ_T_FALSE:
			return 0;
		case PQ_T_BYTE:
		case PQ_T_I16:
		case PQ_T_I32:
		case PQ_T_I64:
			return pq_thrift_i64(t, type, &i64);
		case PQ_T_DOUBLE:
			if (t->end - t->p < 8)
				return pq_thrift_fail(t, "truncated double");
			t->p += 8;
			return 0;
		case PQ_T_BINARY:
			return pq_thrift_binary(t, type, &p, &len);
		case PQ_T_LIST:
		case PQ_T_SET:
			if (pq_thrift_list(t, type, &et, &n) < 0 || pq_thrift_enter(t, PQ_T_STRUCT) < 0)
				return -1;
			for (i = 0; i < n; i++)
				if (skip_element(t, et) < 0)
					return -1;
			pq_thrift_leave(t);
			return 0;
		case PQ_T_MAP:
			{
				uint64_t	size;
				int			kt = 0,
							vt = 0;

				if (read_varint(t, &size) < 0)
					return -1;
				if (size > (uint64_t) (t->end - t->p))
					return pq_thrift_fail(t, "map of %" PRIu64 " entries past the end", size);
				if (size > 0)
				{
					if (t->p >= t->end)
						return pq_thrift_fail(t, "truncated map header");
					kt = *t->p >> 4;
					vt = *t->p & 0x0f;
					t->p++;
				}
				if (pq_thrift_enter(t, PQ_T_STRUCT) < 0)
					return -1;
				for (uint64_t k = 0; k < size; k++)
					if (skip_element(t, kt) < 0 || skip_element(t, vt) < 0)
						return -1;
				pq_thrift_leave(t);
				return 0;
			}
		case PQ_T_STRUCT:
			return pq_thrift_struct(t, type, NULL, NULL);
		default:
			return pq_thrift_fail(t, "unknown field type %d", type);
	}
}
