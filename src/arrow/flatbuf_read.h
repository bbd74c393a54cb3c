/*
 * flatbuf_read.h — a small, bounds-checked FlatBuffers table reader.
 *
 * Arrow's metadata (Schema, Message, Footer) is FlatBuffers.  Rather than
 * generated code that trusts its input, we read tables by hand: every
 * uoffset, soffset, vtable size, vector length and string length is checked
 * against the buffer before it is followed, and table nesting is bounded, so
 * a malformed buffer yields ARROW_ERR_CORRUPT naming the source and the
 * absolute file offset, never an out-of-bounds read.
 *
 * All functions return 0 on success and -1 (with r->err filled) on failure.
 * Absent fields are not errors: scalars take their default, tables,
 * vectors and strings report present = false.
 */
#ifndef PGWARP_FLATBUF_READ_H
#define PGWARP_FLATBUF_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arrow.h"

/* deeper chains of tables are rejected (the Arrow schema is further limited
 * to ARROW_MAX_NESTING levels of fields) */
#define FBR_MAX_DEPTH 128

typedef struct FbrReader
{
	const uint8_t *buf;
	size_t		len;
	int64_t		base;			/* absolute file offset of buf[0] */
	const char *name;			/* source name, for messages */
	const char *what;			/* e.g. "footer", "message" */
	ArrowError *err;
} FbrReader;

typedef struct FbrTable
{
	const FbrReader *r;
	size_t		pos;			/* table start within buf */
	size_t		vt;				/* vtable start within buf */
	uint16_t	vt_len;			/* vtable size in bytes */
	uint16_t	t_len;			/* table inline size in bytes */
	int			depth;
} FbrTable;

typedef struct FbrVector
{
	const FbrReader *r;
	size_t		pos;			/* first element within buf */
	uint32_t	n;				/* number of elements (0 if absent) */
	size_t		elem_size;
	int			depth;			/* of the table holding the vector */
} FbrVector;

/* Little-endian loads from unaligned memory. */
static inline uint16_t
fbr_load_u16(const uint8_t *p)
{
	return (uint16_t) (p[0] | (p[1] << 8));
}

static inline uint32_t
fbr_load_u32(const uint8_t *p)
{
	return (uint32_t) p[0] | ((uint32_t) p[1] << 8) |
		((uint32_t) p[2] << 16) | ((uint32_t) p[3] << 24);
}

static inline uint64_t
fbr_load_u64(const uint8_t *p)
{
	return (uint64_t) fbr_load_u32(p) | ((uint64_t) fbr_load_u32(p + 4) << 32);
}

/* Set up a reader over buf[0..len) that lies at file offset base. */
void		fbr_reader_init(FbrReader *r, const uint8_t *buf, size_t len,
						   int64_t base, const char *name, const char *what,
						   ArrowError *err);

/* The root table (uoffset at buf[0]). */
int			fbr_root(const FbrReader *r, FbrTable *t);

/* Scalars; `def` when the field is absent. */
int			fbr_get_u8(const FbrTable *t, int id, uint8_t def, uint8_t *out);
int			fbr_get_bool(const FbrTable *t, int id, bool def, bool *out);
int			fbr_get_i16(const FbrTable *t, int id, int16_t def, int16_t *out);
int			fbr_get_i32(const FbrTable *t, int id, int32_t def, int32_t *out);
int			fbr_get_i64(const FbrTable *t, int id, int64_t def, int64_t *out);

/* Sub-table (also the value of a union: its type is a u8 field of id-1). */
int			fbr_get_table(const FbrTable *t, int id, FbrTable *sub, bool *present);

/* Vector of elem_size-byte elements (structs or scalars), or of uoffsets
 * (elem_size 4) to tables or strings. */
int			fbr_get_vector(const FbrTable *t, int id, size_t elem_size,
						  FbrVector *v, bool *present);
/* Element i of a vector of structs/scalars (i < v->n, unchecked). */
static inline const uint8_t *
fbr_vector_elem(const FbrVector *v, uint32_t i)
{
	return v->r->buf + v->pos + (size_t) i * v->elem_size;
}
/* Table i of a vector of tables. */
int			fbr_vector_table(const FbrVector *v, uint32_t i, FbrTable *sub);

/* String (not NUL-terminated as returned; use len). */
int			fbr_get_string(const FbrTable *t, int id, const char **s,
						  uint32_t *len, bool *present);

/* Absolute file offset of the table, for messages. */
static inline int64_t
fbr_table_offset(const FbrTable *t)
{
	return t->r->base + (int64_t) t->pos;
}

#endif							/* PGWARP_FLATBUF_READ_H */
