/*
 * flatbuf_read.c — bounds-checked FlatBuffers reading (see flatbuf_read.h).
 *
 * Positions are size_t indexes into the buffer; every addition is checked
 * against the buffer length before it is made, so nothing here can overflow
 * or read outside [buf, buf + len).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "flatbuf_read.h"

void
fbr_reader_init(FbrReader *r, const uint8_t *buf, size_t len, int64_t base,
			   const char *name, const char *what, ArrowError *err)
{
	r->buf = buf;
	r->len = len;
	r->base = base;
	r->name = name ? name : "(arrow)";
	r->what = what ? what : "metadata";
	r->err = err;
}

/* Report a corrupt flatbuffer at buffer position pos. */
static int
fbr_fail(const FbrReader *r, size_t pos, const char *fmt,...)
	__attribute__((format(printf, 3, 4)));

static int
fbr_fail(const FbrReader *r, size_t pos, const char *fmt,...)
{
	char		detail[512];
	va_list		ap;
	int64_t		off = r->base + (int64_t) pos;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	return arrow_error(r->err, ARROW_ERR_CORRUPT, off,
					   "%s: corrupt %s flatbuffer: %s at offset %" PRId64,
					   r->name, r->what, detail, off);
}

/* Does [pos, pos + n) lie within the buffer? */
static inline bool
fbr_in_bounds(const FbrReader *r, size_t pos, size_t n)
{
	return pos <= r->len && n <= r->len - pos;
}

/* Decode the table starting at pos. */
static int
fbr_table_at(const FbrReader *r, size_t pos, int depth, FbrTable *t)
{
	int32_t		soff;
	int64_t		vt;

	if (depth > FBR_MAX_DEPTH)
		return fbr_fail(r, pos, "tables nested more than %d deep", FBR_MAX_DEPTH);
	if (!fbr_in_bounds(r, pos, 4))
		return fbr_fail(r, pos, "table extends past the end of the %zu-byte buffer",
					   r->len);
	soff = (int32_t) fbr_load_u32(r->buf + pos);
	/* the vtable lies at pos - soff (soff may be negative) */
	vt = (int64_t) pos - (int64_t) soff;
	if (vt < 0 || !fbr_in_bounds(r, (size_t) vt, 4))
		return fbr_fail(r, pos, "vtable offset %" PRId32 " points outside the buffer",
					   soff);
	t->r = r;
	t->pos = pos;
	t->vt = (size_t) vt;
	t->vt_len = fbr_load_u16(r->buf + vt);
	t->t_len = fbr_load_u16(r->buf + vt + 2);
	t->depth = depth;
	if (t->vt_len < 4 || (t->vt_len & 1) != 0 ||
		!fbr_in_bounds(r, t->vt, t->vt_len))
		return fbr_fail(r, pos, "bad vtable size %u", (unsigned) t->vt_len);
	if (t->t_len < 4 || !fbr_in_bounds(r, pos, t->t_len))
		return fbr_fail(r, pos, "bad table size %u", (unsigned) t->t_len);
	return 0;
}

int
fbr_root(const FbrReader *r, FbrTable *t)
{
	uint32_t	off;

	if (r->len < 8)
		return fbr_fail(r, 0, "buffer of %zu bytes is too small", r->len);
	off = fbr_load_u32(r->buf);
	if (off >= r->len)
		return fbr_fail(r, 0, "root offset %" PRIu32 " is past the end", off);
	return fbr_table_at(r, off, 1, t);
}

/*
 * Position of field `id` holding `size` bytes inline: *pos = 0 when the field
 * is absent.  The field must lie within the table's inline size (which lies
 * within the buffer).
 */
static int
fbr_field(const FbrTable *t, int id, size_t size, size_t *pos)
{
	size_t		slot = 4 + 2 * (size_t) id;
	uint16_t	off;

	*pos = 0;
	if (id < 0 || slot + 2 > t->vt_len)
		return 0;
	off = fbr_load_u16(t->r->buf + t->vt + slot);
	if (off == 0)
		return 0;
	if (off < 4 || (size_t) off + size > t->t_len)
		return fbr_fail(t->r, t->pos, "field %d (offset %u, %zu bytes) lies outside its %u-byte table",
					   id, (unsigned) off, size, (unsigned) t->t_len);
	*pos = t->pos + off;
	return 0;
}

int
fbr_get_u8(const FbrTable *t, int id, uint8_t def, uint8_t *out)
{
	size_t		p;

	if (fbr_field(t, id, 1, &p) < 0)
		return -1;
	*out = p ? t->r->buf[p] : def;
	return 0;
}

int
fbr_get_bool(const FbrTable *t, int id, bool def, bool *out)
{
	uint8_t		v;

	if (fbr_get_u8(t, id, def ? 1 : 0, &v) < 0)
		return -1;
	*out = v != 0;
	return 0;
}

int
fbr_get_i16(const FbrTable *t, int id, int16_t def, int16_t *out)
{
	size_t		p;

	if (fbr_field(t, id, 2, &p) < 0)
		return -1;
	*out = p ? (int16_t) fbr_load_u16(t->r->buf + p) : def;
	return 0;
}

int
fbr_get_i32(const FbrTable *t, int id, int32_t def, int32_t *out)
{
	size_t		p;

	if (fbr_field(t, id, 4, &p) < 0)
		return -1;
	*out = p ? (int32_t) fbr_load_u32(t->r->buf + p) : def;
	return 0;
}

int
fbr_get_i64(const FbrTable *t, int id, int64_t def, int64_t *out)
{
	size_t		p;

	if (fbr_field(t, id, 8, &p) < 0)
		return -1;
	*out = p ? (int64_t) fbr_load_u64(t->r->buf + p) : def;
	return 0;
}

/* Follow the uoffset stored at buffer position p; *target = destination. */
static int
fbr_follow(const FbrReader *r, size_t p, size_t *target)
{
	uint32_t	off = fbr_load_u32(r->buf + p);

	if (off > r->len - p || p + off >= r->len)
		return fbr_fail(r, p, "offset %" PRIu32 " points past the end of the %zu-byte buffer",
					   off, r->len);
	*target = p + off;
	return 0;
}

int
fbr_get_table(const FbrTable *t, int id, FbrTable *sub, bool *present)
{
	size_t		p,
				target;

	*present = false;
	if (fbr_field(t, id, 4, &p) < 0)
		return -1;
	if (p == 0)
		return 0;
	if (fbr_follow(t->r, p, &target) < 0)
		return -1;
	if (fbr_table_at(t->r, target, t->depth + 1, sub) < 0)
		return -1;
	*present = true;
	return 0;
}

int
fbr_get_vector(const FbrTable *t, int id, size_t elem_size, FbrVector *v,
			  bool *present)
{
	size_t		p,
				target;
	uint32_t	n;

	*present = false;
	v->r = t->r;
	v->pos = 0;
	v->n = 0;
	v->elem_size = elem_size;
	v->depth = t->depth;
	if (fbr_field(t, id, 4, &p) < 0)
		return -1;
	if (p == 0)
		return 0;
	if (fbr_follow(t->r, p, &target) < 0)
		return -1;
	if (!fbr_in_bounds(t->r, target, 4))
		return fbr_fail(t->r, target, "vector length extends past the end");
	n = fbr_load_u32(t->r->buf + target);
	/* n * elem_size must fit in what follows: divide, never multiply */
	if (elem_size != 0 && n > (t->r->len - target - 4) / elem_size)
		return fbr_fail(t->r, target, "vector of %" PRIu32 " %zu-byte elements extends past the end of the %zu-byte buffer",
					   n, elem_size, t->r->len);
	v->pos = target + 4;
	v->n = n;
	*present = true;
	return 0;
}

int
fbr_vector_table(const FbrVector *v, uint32_t i, FbrTable *sub)
{
	size_t		p = v->pos + (size_t) i * 4;
	size_t		target;

	if (i >= v->n || v->elem_size != 4)
		return fbr_fail(v->r, v->pos, "vector index %" PRIu32 " out of range", i);
	if (fbr_follow(v->r, p, &target) < 0)
		return -1;
	return fbr_table_at(v->r, target, v->depth + 1, sub);
}

int
fbr_get_string(const FbrTable *t, int id, const char **s, uint32_t *len,
			  bool *present)
{
	FbrVector	v;

	*s = "";
	*len = 0;
	if (fbr_get_vector(t, id, 1, &v, present) < 0)
		return -1;
	if (*present)
	{
		*s = (const char *) v.r->buf + v.pos;
		*len = v.n;
	}
	return 0;
}
