/*
 * flatbuf_build.c — back-to-front FlatBuffers builder (see flatbuf_build.h).
 *
 * All multi-byte values are written little-endian, as FlatBuffers requires;
 * we store them byte by byte so that the code is also correct on a
 * big-endian host.
 */
#include <string.h>

#include "flatbuf_build.h"

/* FlatBuffers offsets are 32-bit; keep well clear of that. */
#define FB_MAX_SIZE ((size_t) 1 << 30)

void
fb_init(FbBuilder *fb, const ArrowAllocator *allocator)
{
	memset(fb, 0, sizeof(*fb));
	fb->allocator = allocator ? allocator : &arrow_malloc_allocator;
	fb->minalign = 1;
}

void
fb_reset(FbBuilder *fb)
{
	fb->size = 0;
	fb->minalign = 1;
	fb->failed = false;
	fb->in_table = false;
}

void
fb_free(FbBuilder *fb)
{
	if (fb->buf)
		fb->allocator->free(fb->allocator->ctx, fb->buf);
	fb->buf = NULL;
	fb->cap = 0;
	fb->size = 0;
}

/* Make room for `need` more bytes in front of the current data. */
static bool
fb_reserve(FbBuilder *fb, size_t need)
{
	size_t		newcap;
	uint8_t    *nbuf;

	if (fb->failed)
		return false;
	if (need > FB_MAX_SIZE || fb->size + need > FB_MAX_SIZE)
	{
		fb->failed = true;
		return false;
	}
	if (fb->size + need <= fb->cap)
		return true;
	newcap = fb->cap ? fb->cap : 1024;
	while (newcap < fb->size + need)
		newcap *= 2;
	if (fb->allocator->max_alloc && newcap > fb->allocator->max_alloc)
	{
		fb->failed = true;
		return false;
	}
	nbuf = fb->allocator->alloc(fb->allocator->ctx, newcap);
	if (nbuf == NULL)
	{
		fb->failed = true;
		return false;
	}
	/* the data lives at the end: copy it to the end of the new buffer */
	if (fb->size)
		memcpy(nbuf + newcap - fb->size, fb->buf + fb->cap - fb->size, fb->size);
	if (fb->buf)
		fb->allocator->free(fb->allocator->ctx, fb->buf);
	fb->buf = nbuf;
	fb->cap = newcap;
	return true;
}

/* Pointer to the byte at distance `pos` from the end. */
static inline uint8_t *
fb_at(FbBuilder *fb, size_t pos)
{
	return fb->buf + fb->cap - pos;
}

static void
fb_push_bytes(FbBuilder *fb, const void *p, size_t n)
{
	if (!fb_reserve(fb, n))
		return;
	fb->size += n;
	if (n)
		memcpy(fb_at(fb, fb->size), p, n);
}

static void
fb_push_zeros(FbBuilder *fb, size_t n)
{
	if (!fb_reserve(fb, n))
		return;
	fb->size += n;
	memset(fb_at(fb, fb->size), 0, n);
}

/*
 * Pad so that after `extra` more bytes are pushed, the total size is a
 * multiple of `align`; since the finished buffer's length is a multiple of
 * the largest alignment, that puts the next object on an aligned address.
 */
static void
fb_prep(FbBuilder *fb, size_t align, size_t extra)
{
	size_t		pad;

	if (align > fb->minalign)
		fb->minalign = align;
	pad = (align - ((fb->size + extra) & (align - 1))) & (align - 1);
	if (pad)
		fb_push_zeros(fb, pad);
}

static void
le_store(uint8_t *p, uint64_t v, int n)
{
	int			i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t) (v >> (8 * i));
}

static void
fb_push_scalar(FbBuilder *fb, uint64_t v, int n)
{
	uint8_t		tmp[8];

	fb_prep(fb, n, 0);
	le_store(tmp, v, n);
	fb_push_bytes(fb, tmp, n);
}

/* Push a uoffset pointing at ref (which must already be in the buffer). */
static void
fb_push_uoffset(FbBuilder *fb, FbRef ref)
{
	fb_prep(fb, 4, 0);
	if (fb->failed)
		return;
	/* the offset will sit at distance size+4 from the end; target at ref */
	fb_push_scalar(fb, (uint32_t) (fb->size + 4 - ref), 4);
}

FbRef
fb_create_string(FbBuilder *fb, const char *s, size_t len)
{
	uint8_t		zero = 0;

	if (len > FB_MAX_SIZE)
	{
		fb->failed = true;
		return 0;
	}
	fb_prep(fb, 4, len + 1);
	fb_push_bytes(fb, &zero, 1);
	fb_push_bytes(fb, s, len);
	fb_push_scalar(fb, (uint32_t) len, 4);
	return fb->failed ? 0 : (FbRef) fb->size;
}

FbRef
fb_create_cstring(FbBuilder *fb, const char *s)
{
	return fb_create_string(fb, s ? s : "", s ? strlen(s) : 0);
}

FbRef
fb_create_offset_vector(FbBuilder *fb, const FbRef *refs, size_t n)
{
	size_t		i;

	if (n > FB_MAX_SIZE / 4)
	{
		fb->failed = true;
		return 0;
	}
	fb_prep(fb, 4, n * 4);
	/* elements are pushed last to first */
	for (i = n; i > 0; i--)
		fb_push_uoffset(fb, refs[i - 1]);
	fb_push_scalar(fb, (uint32_t) n, 4);
	return fb->failed ? 0 : (FbRef) fb->size;
}

FbRef
fb_create_struct_vector(FbBuilder *fb, const void *data, size_t elem_size,
						size_t n, size_t align)
{
	if (elem_size && n > FB_MAX_SIZE / elem_size)
	{
		fb->failed = true;
		return 0;
	}
	fb_prep(fb, 4, n * elem_size);
	fb_prep(fb, align < 4 ? 4 : align, n * elem_size);
	fb_push_bytes(fb, data, n * elem_size);
	fb_push_scalar(fb, (uint32_t) n, 4);
	return fb->failed ? 0 : (FbRef) fb->size;
}

void
fb_table_start(FbBuilder *fb)
{
	fb->in_table = true;
	fb->table_start = fb->size;
	fb->max_slot = 0;
	memset(fb->slot_pos, 0, sizeof(fb->slot_pos));
}

static void
fb_note_slot(FbBuilder *fb, int slot)
{
	if (slot < 0 || slot >= FB_MAX_SLOTS || !fb->in_table)
	{
		fb->failed = true;
		return;
	}
	fb->slot_pos[slot] = (uint32_t) fb->size;
	if (slot + 1 > fb->max_slot)
		fb->max_slot = slot + 1;
}

void
fb_add_bool(FbBuilder *fb, int slot, bool v)
{
	fb_push_scalar(fb, v ? 1 : 0, 1);
	fb_note_slot(fb, slot);
}

void
fb_add_int8(FbBuilder *fb, int slot, int8_t v)
{
	fb_push_scalar(fb, (uint8_t) v, 1);
	fb_note_slot(fb, slot);
}

void
fb_add_uint8(FbBuilder *fb, int slot, uint8_t v)
{
	fb_push_scalar(fb, v, 1);
	fb_note_slot(fb, slot);
}

void
fb_add_int16(FbBuilder *fb, int slot, int16_t v)
{
	fb_push_scalar(fb, (uint16_t) v, 2);
	fb_note_slot(fb, slot);
}

void
fb_add_int32(FbBuilder *fb, int slot, int32_t v)
{
	fb_push_scalar(fb, (uint32_t) v, 4);
	fb_note_slot(fb, slot);
}

void
fb_add_int64(FbBuilder *fb, int slot, int64_t v)
{
	fb_push_scalar(fb, (uint64_t) v, 8);
	fb_note_slot(fb, slot);
}

void
fb_add_offset(FbBuilder *fb, int slot, FbRef ref)
{
	if (ref == 0)
		return;
	fb_push_uoffset(fb, ref);
	fb_note_slot(fb, slot);
}

void
fb_add_struct(FbBuilder *fb, int slot, const void *data, size_t size,
			  size_t align)
{
	fb_prep(fb, align, size);
	fb_push_bytes(fb, data, size);
	fb_note_slot(fb, slot);
}

FbRef
fb_table_end(FbBuilder *fb)
{
	size_t		table_pos;
	size_t		vt_size;
	size_t		obj_size;
	uint8_t		vt[4 + 2 * FB_MAX_SLOTS];
	int			i;
	FbRef		vt_ref;

	if (!fb->in_table)
		fb->failed = true;
	fb->in_table = false;
	/* the soffset to the vtable, patched below */
	fb_push_scalar(fb, 0, 4);
	if (fb->failed)
		return 0;
	table_pos = fb->size;
	obj_size = table_pos - fb->table_start;
	vt_size = 4 + 2 * (size_t) fb->max_slot;
	if (obj_size > 0xffff)
	{
		fb->failed = true;
		return 0;
	}
	le_store(vt, vt_size, 2);
	le_store(vt + 2, obj_size, 2);
	for (i = 0; i < fb->max_slot; i++)
	{
		/* field address - table address, both measured from the end */
		uint32_t	off = fb->slot_pos[i] ? (uint32_t) (table_pos - fb->slot_pos[i]) : 0;

		le_store(vt + 4 + 2 * i, off, 2);
	}
	/* the vtable goes right in front of the table (2-byte aligned) */
	fb_prep(fb, 2, vt_size);
	fb_push_bytes(fb, vt, vt_size);
	if (fb->failed)
		return 0;
	vt_ref = (FbRef) fb->size;
	/* soffset: table address - vtable address (positive: vtable is before) */
	le_store(fb_at(fb, table_pos), (uint32_t) (int32_t) (vt_ref - table_pos), 4);
	return (FbRef) table_pos;
}

int
fb_finish(FbBuilder *fb, FbRef root, const uint8_t **data, size_t *len,
		  ArrowError *err)
{
	size_t		align = fb->minalign < 8 ? 8 : fb->minalign;

	fb_prep(fb, align, 4);
	fb_push_uoffset(fb, root);
	if (fb->failed || root == 0)
		return arrow_error(err, ARROW_ERR_NOMEM, -1,
						   "cannot build flatbuffer metadata (out of memory or over %zu bytes)",
						   (size_t) FB_MAX_SIZE);
	*data = fb_at(fb, fb->size);
	*len = fb->size;
	return 0;
}
