/*-------------------------------------------------------------------------
 *
 * gpud_decoded.c
 *	  Decompressed column buffers kept in the GPU column cache (see
 *	  gpud_decoded.h).
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "gpud_decoded.h"

/* a column whose buffers are a validity bitmap and fixed-width values */
static bool
plain_fixed(const ArrowField *f)
{
	if (f->has_dict || f->n_children != 0 || f->n_buffers < 2)
		return false;
	switch (f->type.id)
	{
		case ARROW_TYPE_BOOL:
		case ARROW_TYPE_INT:
		case ARROW_TYPE_FLOAT:
		case ARROW_TYPE_DATE:
		case ARROW_TYPE_TIMESTAMP:
		case ARROW_TYPE_DECIMAL:
			return true;
		default:
			return false;
	}
}

static int64_t
bitmap_bytes(int64_t rows)
{
	return (rows + 7) / 8;
}

/* bytes of values len rows need; -1 if too many */
static int64_t
values_need(const ArrowField *f, int64_t len)
{
	int			w;

	if (f->type.id == ARROW_TYPE_BOOL)
		return bitmap_bytes(len);
	w = arrow_type_byte_width(&f->type);
	if (w <= 0 || len > INT64_MAX / w)
		return -1;
	return len * w;
}

/*
 * The key of buffer ref of a batch: a compressed buffer's byte range for
 * what it decompresses to; a plain buffer's offset and the bytes of it the
 * driver copies (need), as it keys a registered window's buffer.
 */
static GpudColKey
buffer_key(const GpudDecodedSource *s, const ArrowBatchMeta *meta, const ArrowBufferRef *ref,
		   int64_t need)
{
	GpudColKey	k = s->id;

	k.off = (uint64_t) ref->offset;
	if (meta->codec != ARROW_CODEC_NONE)
	{
		k.len = (uint64_t) ref->length;
		k.kind = GPUD_COL_DECODED;
	}
	else
	{
		k.len = need <= ref->length ? (uint64_t) need : 0;
		k.kind = GPUD_COL_RAW;
	}
	return k;
}

/* room for two more buffers in d */
static bool
make_room(GpudDecoded *d)
{
	if (d->n + 2 > d->cap)
	{
		int			cap = d->cap ? d->cap * 2 : 16;
		GpudDecodedBuf *b = realloc(d->bufs, sizeof(GpudDecodedBuf) * cap);

		if (b == NULL)
			return false;
		d->bufs = b;
		d->cap = cap;
	}
	return true;
}

/* address space of len bytes nothing may read */
static const uint8_t *
ghost_range(uint64_t len)
{
	void	   *p = mmap(NULL, (size_t) len, PROT_NONE,
						 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : (const uint8_t *) p;
}

static void
add_buf(GpudDecoded *d, const uint8_t *host, uint64_t len, const GpudColKey *key,
		GpudColEntry *held)
{
	GpudDecodedBuf *b = &d->bufs[d->n++];

	b->host = host;
	b->len = len;
	b->key = *key;
	b->held = held;
	b->ghost = held != NULL;
}

/*
 * Column f (its node) of the batch from the cache: true when every buffer
 * it needs is there (out then points at ghost ranges), false when the
 * caller must load it.
 */
static bool
from_cache(GpudDecodedSource *s, GpudDecoded *d, const ArrowField *f,
		   const ArrowFieldNode *node, const ArrowBatchMeta *meta, int64_t need,
		   ArrowArray *out)
{
	int			bi = f->buffer_index;
	GpudColKey	kv = buffer_key(s, meta, &meta->buffers[bi + 1], need);
	GpudColKey	kb = buffer_key(s, meta, &meta->buffers[bi], bitmap_bytes(node->length));
	GpudColEntry *ev;
	GpudColEntry *eb = NULL;
	const uint8_t *gv = NULL;
	const uint8_t *gb = NULL;

	ev = gpud_colcache_find(s->cache, &kv);
	if (ev == NULL)
		return false;
	if (ev->size < (uint64_t) need)
		goto miss;
	if (node->null_count > 0)
	{
		eb = gpud_colcache_find(s->cache, &kb);
		if (eb == NULL || eb->size < (uint64_t) bitmap_bytes(node->length))
			goto miss;
	}
	if (!make_room(d) || (gv = ghost_range(ev->size)) == NULL ||
		(eb && (gb = ghost_range(eb->size)) == NULL))
		goto miss;
	add_buf(d, gv, ev->size, &kv, ev);
	if (eb)
		add_buf(d, gb, eb->size, &kb, eb);
	memset(out, 0, sizeof(*out));
	out->field = f;
	out->length = node->length;
	out->null_count = node->null_count;
	out->values = gv;
	out->values_len = (int64_t) ev->size;
	out->validity = gb;
	__atomic_add_fetch(&s->columns_served, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&s->bytes_served, ev->size + (eb ? eb->size : 0), __ATOMIC_RELAXED);
	return true;

miss:
	if (gv)
		munmap((void *) gv, (size_t) ev->size);
	gpud_colcache_release(s->cache, ev);
	if (eb)
		gpud_colcache_release(s->cache, eb);
	return false;
}

int
gpud_decoded_load(void *ctx, ArrowFile *file, int batch, const ArrowBatchMeta *meta,
				  int field, ArrowArena *arena, ArrowArray *out, void **state,
				  ArrowError *err)
{
	GpudDecodedSource *s = ctx;
	GpudDecoded *d = *state;
	const ArrowField *f = NULL;
	const ArrowFieldNode *node = NULL;
	int64_t		need = -1;
	int			bi;

	/* a plain fixed-width column of a compressed batch, well formed as far
	 * as its node and buffer numbers go (else arrow_load_column says why) */
	if (s->cache != NULL && (meta->codec != ARROW_CODEC_NONE || s->raw) &&
		field >= 0 && field < file->schema.n_fields)
	{
		f = &file->schema.fields[field];
		bi = f->buffer_index;
		if (plain_fixed(f) && f->node_index >= 0 && f->node_index < meta->n_nodes &&
			bi >= 0 && bi + 1 < meta->n_buffers)
		{
			node = &meta->nodes[f->node_index];
			if (node->length == meta->length && node->length > 0 &&
				node->null_count >= 0 && node->null_count <= node->length)
				need = values_need(f, node->length);
		}
	}
	if (need > 0 && d == NULL)
	{
		d = calloc(1, sizeof(GpudDecoded));
		*state = d;
	}
	if (need > 0 && d != NULL && from_cache(s, d, f, node, meta, need, out))
		return 0;

	if (arrow_load_column(file, batch, meta, field, arena, out, err) != 0)
		return -1;

	/* what it decompressed or read, for the driver to keep for the next
	 * query (plain: the bytes the driver copies, as a window's) */
	if (need > 0 && d != NULL && make_room(d))
	{
		GpudColKey	kv = buffer_key(s, meta, &meta->buffers[f->buffer_index + 1], need);
		GpudColKey	kb = buffer_key(s, meta, &meta->buffers[f->buffer_index],
									bitmap_bytes(out->length));
		bool		plain = meta->codec == ARROW_CODEC_NONE;

		if (out->values != NULL && out->values_len >= need && kv.len > 0)
			add_buf(d, out->values, plain ? (uint64_t) need : (uint64_t) out->values_len,
					&kv, NULL);
		if (out->validity != NULL && out->null_count > 0 && kb.len > 0)
			add_buf(d, out->validity, (uint64_t) bitmap_bytes(out->length), &kb, NULL);
	}
	return 0;
}

void
gpud_decoded_done(void *ctx, void *state)
{
	GpudDecodedSource *s = ctx;
	GpudDecoded *d = state;
	int			i;

	if (d == NULL)
		return;
	for (i = 0; i < d->n; i++)
	{
		GpudDecodedBuf *b = &d->bufs[i];

		if (b->ghost)
			munmap((void *) b->host, (size_t) b->len);
		if (b->held)
			gpud_colcache_release(s->cache, b->held);
	}
	free(d->bufs);
	free(d);
}

const GpudDecodedBuf *
gpud_decoded_find(const GpudDecoded *d, const void *p, uint64_t len)
{
	const uint8_t *q = p;
	int			i;

	if (d == NULL)
		return NULL;
	for (i = 0; i < d->n; i++)
	{
		const GpudDecodedBuf *b = &d->bufs[i];

		if (q >= b->host && len <= b->len && (uint64_t) (q - b->host) <= b->len - len)
			return b;
	}
	return NULL;
}
