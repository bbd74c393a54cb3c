/*
 * flatbuf_build.h — a small FlatBuffers builder for Arrow IPC metadata.
 *
 * We write the handful of tables Arrow needs (Schema, Message, Footer, ...)
 * by hand instead of depending on flatcc and generated code.  The builder
 * works like the reference implementation: the buffer is filled from the
 * back, so every child object (string, vector, table) is created before the
 * object that refers to it and ends up at a higher address, which is what
 * FlatBuffers' unsigned forward offsets require.  A reference (FbRef) is the
 * distance of an object's start from the END of the buffer, which does not
 * change as more bytes are prepended.
 *
 * Tables: fb_table_start(), then fb_add_*() for each field (slot = field
 * index in the .fbs schema), then fb_table_end().  Tables cannot be nested
 * while being built: build the children first.  Every scalar is written
 * explicitly, even when equal to its default (simpler, and harmless).
 *
 * Memory errors are sticky: after one, every call is a no-op and
 * fb_finish() reports the failure, so callers check once.
 */
#ifndef PGWARP_FLATBUF_BUILD_H
#define PGWARP_FLATBUF_BUILD_H

#include "arrow.h"

typedef uint32_t FbRef;			/* 0 = none */

#define FB_MAX_SLOTS 16			/* Arrow's tables have at most 7 fields */

typedef struct FbBuilder
{
	const ArrowAllocator *allocator;
	uint8_t    *buf;			/* data occupies [buf + cap - size, buf + cap) */
	size_t		cap;
	size_t		size;
	size_t		minalign;		/* largest alignment used */
	bool		failed;			/* allocation failure or size limit hit */
	/* table under construction */
	bool		in_table;
	size_t		table_start;	/* size when the table was started */
	int			max_slot;		/* highest slot used + 1 */
	uint32_t	slot_pos[FB_MAX_SLOTS];	/* position (from end) of each field,
										 * 0 = absent */
} FbBuilder;

void		fb_init(FbBuilder *fb, const ArrowAllocator *allocator);
void		fb_reset(FbBuilder *fb);	/* empty, keeps the memory */
void		fb_free(FbBuilder *fb);

FbRef		fb_create_string(FbBuilder *fb, const char *s, size_t len);
FbRef		fb_create_cstring(FbBuilder *fb, const char *s);
/* vector of offsets to tables or strings */
FbRef		fb_create_offset_vector(FbBuilder *fb, const FbRef *refs, size_t n);
/* vector of structs (or scalars) given as little-endian bytes, elem_size
 * bytes each, aligned to align (a power of two) */
FbRef		fb_create_struct_vector(FbBuilder *fb, const void *data,
									size_t elem_size, size_t n, size_t align);

void		fb_table_start(FbBuilder *fb);
void		fb_add_bool(FbBuilder *fb, int slot, bool v);
void		fb_add_int8(FbBuilder *fb, int slot, int8_t v);
void		fb_add_uint8(FbBuilder *fb, int slot, uint8_t v);
void		fb_add_int16(FbBuilder *fb, int slot, int16_t v);
void		fb_add_int32(FbBuilder *fb, int slot, int32_t v);
void		fb_add_int64(FbBuilder *fb, int slot, int64_t v);
/* an offset to a child object; ref 0 adds nothing */
void		fb_add_offset(FbBuilder *fb, int slot, FbRef ref);
/* a struct stored inline in the table */
void		fb_add_struct(FbBuilder *fb, int slot, const void *data,
						  size_t size, size_t align);
FbRef		fb_table_end(FbBuilder *fb);

/*
 * Finish with `root` as the root table.  *data and *len: the finished buffer
 * (inside the builder, valid until the next reset/free); its length is a
 * multiple of 8.  Returns -1 with err set (NOMEM) if anything failed.
 */
int			fb_finish(FbBuilder *fb, FbRef root, const uint8_t **data,
					  size_t *len, ArrowError *err);

#endif							/* PGWARP_FLATBUF_BUILD_H */
