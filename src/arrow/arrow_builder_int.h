/*
 * arrow_builder_int.h — internals shared by the column builder's files:
 * arrow_builder.c (buffers, layout, creation, serialising),
 * arrow_builder_stats.c, arrow_builder_dict.c, arrow_builder_append.c and
 * arrow_builder_array.c.  Not part of the public API; what the writer uses
 * of the builders is in arrow_write_int.h.
 */
#ifndef PGWARP_ARROW_BUILDER_INT_H
#define PGWARP_ARROW_BUILDER_INT_H

#include <string.h>

#include "arrow_write_int.h"

/* shared between this layer's files only: not exported from the module */
#pragma GCC visibility push(hidden)

/* Flush once a 32-bit offset buffer passes this, so that one more value of
 * up to 1 GB (PostgreSQL's limit) still fits below 2^31. */
#define OFFSET32_LIMIT ((int64_t) INT32_MAX)

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

/* ---- arrow_builder.c ---- */
/* the validity bit of the builder's next slot (bitmap made at the first null) */
int			validity_push(ArrowBuilder *b, bool valid, ArrowError *err);
/* INVALID: the column's type does not take `what` */
int			type_error(ArrowBuilder *b, const char *what, ArrowError *err);
/* INVALID: value `what` out of range for the column's type */
int			range_error(ArrowBuilder *b, const char *what, ArrowError *err);

/* ---- arrow_builder_stats.c ---- */
uint16_t	double_to_half(double d);
/* fold value i of the builder into its batch statistics */
void		stat_add(ArrowBuilder *b, int64_t i);
/* fold values from .. from + n - 1 into the batch statistics */
void		stat_range(ArrowBuilder *b, int64_t from, int64_t n);

/* ---- arrow_builder_dict.c ---- */
/* turn the value just appended to the pending builder into an index */
int			dict_commit(ArrowBuilder *b, ArrowError *err);

/* ---- arrow_builder_append.c ---- */
int			check_open(ArrowBuilder *b, ArrowError *err);
int			offset_push(ArrowBuilder *b, int64_t off, ArrowError *err);
int			null_internal(ArrowBuilder *b, ArrowError *err);

#pragma GCC visibility pop

#endif							/* PGWARP_ARROW_BUILDER_INT_H */
