/*
 * arrow_array.c — materialising columns of record batches as validated
 * ArrowArray trees, dictionaries, and value accessors.
 *
 * A column is loaded buffer by buffer: only the buffers of the requested
 * field and its descendants are touched, so the bytes moved are those of the
 * projected columns.  When the source is mapped and a buffer is stored
 * uncompressed and 8-byte aligned, it is used in place; otherwise it is read
 * (and decompressed) into arena memory.
 *
 * Everything the accessors rely on is checked here: buffer sizes against
 * the lengths in the field nodes, offsets (monotonic, within their data or
 * child array), child lengths, dictionary indices.  A compressed buffer's
 * claimed uncompressed size is bounded by what the node requires, so a lying
 * header cannot make us allocate more than the data needs.
 */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow_read_internal.h"

/* Zeros standing in for empty buffers (e.g. the offsets of an empty array,
 * which writers may omit). */
static const int64_t zero_buffer[8] __attribute__((aligned(64)));

typedef struct LoadCtx
{
	ArrowFile  *file;
	const ArrowBatchMeta *meta;
	ArrowArena *arena;
	const char *name;			/* source name */
	char		label[96];		/* "record batch 3" / "dictionary batch 2" */
	int			batch;			/* record batch index (for dictionaries) */
	bool		in_dict;		/* loading dictionary values */
	ArrowError *err;
} LoadCtx;

typedef struct DictEntry
{
	int64_t		id;
	int			count;			/* dictionary messages for id applied */
	const ArrowField *field;	/* the schema field it was decoded for */
	ArrowArray *array;
	struct DictEntry *next;
} DictEntry;

typedef struct DictCache
{
	bool		indexed;		/* ids/deltas filled */
	int64_t    *ids;			/* per dictionary block */
	bool	   *deltas;
	DictEntry  *entries;
} DictCache;

static int	load_field(LoadCtx *lc, const ArrowField *f, int depth,
					   ArrowArray *out);

/* --------------------------------------------------------------- buffers */

static int
lc_corrupt(LoadCtx *lc, int64_t offset, const char *fmt,...)
	__attribute__((format(printf, 3, 4)));

static int
lc_corrupt(LoadCtx *lc, int64_t offset, const char *fmt,...)
{
	char		detail[700];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	return arrow_error(lc->err, ARROW_ERR_CORRUPT, offset, "%s: %s: %s",
					   lc->name, lc->label, detail);
}

/* a * b into *out, false on overflow (both non-negative) */
static inline bool
mul_ok(int64_t a, int64_t b, int64_t *out)
{
	if (a < 0 || b < 0)
		return false;
	if (a != 0 && b > INT64_MAX / a)
		return false;
	*out = a * b;
	return true;
}

/* Bytes of a bitmap of len bits (no overflow for any len >= 0). */
static inline int64_t
bitmap_bytes(int64_t len)
{
	return len / 8 + ((len & 7) != 0);
}

/* Read [off, off+len) of the source into new arena memory. */
static uint8_t *
read_into_arena(LoadCtx *lc, int64_t off, int64_t len)
{
	const ArrowSource *src = &lc->file->src;
	uint8_t    *p;
	int			e;

	if (len < 0 || (uint64_t) len > SIZE_MAX)
		return lc_corrupt(lc, off, "buffer of %" PRId64 " bytes", len), NULL;
	if (off < 0 || (uint64_t) off > src->size ||
		(uint64_t) len > src->size - (uint64_t) off)
		return lc_corrupt(lc, off, "%" PRId64 " bytes at offset %" PRId64 " extend past the end of the data",
						  len, off), NULL;
	p = arrow_arena_alloc_uninit(lc->arena, (size_t) len, lc->err);
	if (p == NULL || len == 0)
		return p;
	if (src->map)
	{
		memcpy(p, src->map + off, (size_t) len);
		arrow_src_count_mapped(src, (uint64_t) len);
		return p;
	}
	e = src->read(src->ctx, p, (size_t) len, (uint64_t) off);
	if (e != 0)
	{
		arrow_error(lc->err, ARROW_ERR_IO, off,
					"%s: %s: could not read %" PRId64 " bytes at offset %" PRId64 ": %s",
					lc->name, lc->label, len, off, strerror(e));
		if (lc->err)
			lc->err->errno_saved = e;
		return NULL;
	}
	return p;
}

/* Uncompressed bytes [off, off+len) of which `need` are used. */
static int
plain_buffer(LoadCtx *lc, int64_t off, int64_t len, int64_t need,
			 const uint8_t **ptr, int64_t *avail)
{
	const ArrowSource *src = &lc->file->src;

	if (src->map != NULL && ((uintptr_t) (src->map + off) & 7) == 0)
	{
		/* in place: the meta check put [off, off+len) within the source;
		 * counted as the `need` bytes a read would have taken */
		*ptr = src->map + off;
		*avail = len;
		arrow_src_count_mapped(src, (uint64_t) need);
		return 0;
	}
	/* only the bytes the array uses travel */
	*ptr = read_into_arena(lc, off, need);
	*avail = need;
	return *ptr ? 0 : -1;
}

/*
 * A compressed buffer: int64 uncompressed length, then the compressed bytes
 * (or the raw bytes if the length is -1).  An empty buffer may omit the
 * length entirely.
 */
static int
compressed_buffer(LoadCtx *lc, int idx, const ArrowBufferRef *ref,
				  int64_t need, const uint8_t **ptr, int64_t *avail)
{
	const ArrowSource *src = &lc->file->src;
	const ArrowAllocator *al = lc->arena->allocator;
	uint8_t		hdr[8];
	int64_t		ulen,
				out_len,
				clen;
	bool		prefix_only;
	uint8_t    *dst;
	const uint8_t *in;
	void	   *tmp = NULL;
	int			rc;

	if (ref->length < 8)
		return lc_corrupt(lc, ref->offset,
						  "compressed buffer %d (offset %" PRId64 ", length %" PRId64 ") is too short for its length prefix",
						  idx, ref->offset, ref->length);
	if (src->map)
	{
		memcpy(hdr, src->map + ref->offset, 8);
		arrow_src_count_mapped(src, 8);
	}
	else
	{
		in = read_into_arena(lc, ref->offset, 8);
		if (in == NULL)
			return -1;
		memcpy(hdr, in, 8);
	}
	ulen = (int64_t) fbr_load_u64(hdr);
	clen = ref->length - 8;
	if (ulen == -1)
	{
		if (clen < need)
			return lc_corrupt(lc, ref->offset,
							  "buffer %d (offset %" PRId64 ", length %" PRId64 ") holds %" PRId64 " bytes, the array needs %" PRId64,
							  idx, ref->offset, ref->length, clen, need);
		return plain_buffer(lc, ref->offset + 8, clen, need, ptr, avail);
	}

	/*
	 * A buffer may hold more than the array uses (writers store the whole
	 * buffer of a sliced array); beyond padding, only the used prefix is
	 * decompressed.
	 */
	if (ulen < need)
		return lc_corrupt(lc, ref->offset,
						  "compressed buffer %d (offset %" PRId64 ", length %" PRId64 ") claims %" PRId64 " uncompressed bytes, the array needs %" PRId64,
						  idx, ref->offset, ref->length, ulen, need);
	prefix_only = ulen > need + 64;
	out_len = prefix_only ? need : ulen;

	/* the compressed bytes: in place, or read into transient memory */
	if (src->map)
	{
		in = src->map + ref->offset + 8;
		arrow_src_count_mapped(src, (uint64_t) clen);
	}
	else
	{
		if (al->max_alloc != 0 && (uint64_t) clen > al->max_alloc)
			return arrow_error(lc->err, ARROW_ERR_NOMEM, ref->offset,
							   "%s: %s: compressed buffer %d of %" PRId64 " bytes exceeds the allocation limit",
							   lc->name, lc->label, idx, clen);
		tmp = al->alloc(al->ctx, clen > 0 ? (size_t) clen : 1);
		if (tmp == NULL)
			return arrow_error(lc->err, ARROW_ERR_NOMEM, ref->offset,
							   "%s: %s: out of memory for compressed buffer %d (%" PRId64 " bytes)",
							   lc->name, lc->label, idx, clen);
		rc = src->read(src->ctx, tmp, (size_t) clen, (uint64_t) ref->offset + 8);
		if (rc != 0)
		{
			al->free(al->ctx, tmp);
			arrow_error(lc->err, ARROW_ERR_IO, ref->offset,
						"%s: %s: could not read buffer %d at offset %" PRId64 ": %s",
						lc->name, lc->label, idx, ref->offset, strerror(rc));
			if (lc->err)
				lc->err->errno_saved = rc;
			return -1;
		}
		in = tmp;
	}

	/*
	 * Before allocating for the claim, check it against what the compressed
	 * bytes can possibly hold (and what their frame header says).
	 */
	dst = NULL;
	rc = arrow_check_claim(lc->meta->codec, in, (size_t) clen, (uint64_t) ulen,
						   lc->err);
	if (rc == 0)
	{
		dst = arrow_arena_alloc(lc->arena, (size_t) out_len, lc->err);
		if (dst == NULL)
		{
			if (tmp)
				al->free(al->ctx, tmp);
			return -1;
		}
		if (prefix_only)
			rc = arrow_decompress_prefix(lc->meta->codec, in, (size_t) clen, dst,
										 (size_t) out_len, (uint64_t) ulen,
										 lc->err);
		else
			rc = arrow_decompress(lc->meta->codec, in, (size_t) clen, dst,
								  (size_t) out_len, lc->err);
	}
	if (tmp)
		al->free(al->ctx, tmp);
	if (rc < 0)
	{
		char		inner[sizeof(lc->err->msg)];

		if (lc->err)
		{
			memcpy(inner, lc->err->msg, sizeof(inner));
			inner[sizeof(inner) - 1] = '\0';
			return lc_corrupt(lc, ref->offset, "buffer %d (offset %" PRId64 ", length %" PRId64 "): %.400s",
							  idx, ref->offset, ref->length, inner);
		}
		return -1;
	}
	*ptr = dst;
	*avail = out_len;
	return 0;
}

/*
 * Buffer idx of the batch, of which the array needs `need` bytes.  Sets *ptr
 * (never NULL) and *avail (bytes usable at *ptr, >= need).
 */
static int
load_buffer(LoadCtx *lc, int idx, int64_t need, const uint8_t **ptr,
			int64_t *avail)
{
	const ArrowBufferRef *ref;

	*ptr = (const uint8_t *) zero_buffer;
	*avail = 0;
	if (idx < 0 || idx >= lc->meta->n_buffers)
		return lc_corrupt(lc, -1, "buffer %d does not exist", idx);
	if (need == 0)
		return 0;
	ref = &lc->meta->buffers[idx];
	if (lc->meta->codec == ARROW_CODEC_NONE)
	{
		if (ref->length < need)
			return lc_corrupt(lc, ref->offset,
							  "buffer %d (offset %" PRId64 ", length %" PRId64 ") is shorter than the %" PRId64 " bytes the array needs",
							  idx, ref->offset, ref->length, need);
		return plain_buffer(lc, ref->offset, ref->length, need, ptr, avail);
	}
	return compressed_buffer(lc, idx, ref, need, ptr, avail);
}

/* --------------------------------------------------------------- offsets */

static bool
is_large(ArrowTypeId t)
{
	return t == ARROW_TYPE_LARGE_UTF8 || t == ARROW_TYPE_LARGE_BINARY ||
		t == ARROW_TYPE_LARGE_LIST;
}

/* offset i of an offsets buffer of w-byte (4 or 8) entries */
static inline int64_t
offset_entry(const uint8_t *p, int64_t i, int w)
{
	if (w == 4)
	{
		int32_t		v32;

		memcpy(&v32, p + i * 4, 4);
		return v32;
	}
	else
	{
		int64_t		v;

		memcpy(&v, p + i * 8, 8);
		return v;
	}
}

/*
 * Load and check the offsets buffer (buffer index idx) of an array of
 * length len: first >= 0, non-decreasing.  *last = the final offset.
 */
static int
load_offsets(LoadCtx *lc, const ArrowField *f, int idx, int64_t len,
			 ArrowArray *out, int64_t *last)
{
	int			w = is_large(f->type.id) ? 8 : 4;
	int64_t		need,
				avail,
				prev,
				i;
	const uint8_t *p;

	*last = 0;
	if (len == 0 && lc->meta->buffers[idx].length == 0)
	{
		/* an empty array may omit its single zero offset */
		out->offsets = (const uint8_t *) zero_buffer;
		return 0;
	}
	if (len == INT64_MAX || !mul_ok(len + 1, w, &need))
		return lc_corrupt(lc, -1, "column \"%s\": length %" PRId64 " is too large",
						  f->name, len);
	if (load_buffer(lc, idx, need, &p, &avail) < 0)
		return -1;
	out->offsets = p;
	prev = 0;
	for (i = 0; i <= len; i++)
	{
		int64_t		v = offset_entry(p, i, w);

		if (v < prev)
			return lc_corrupt(lc, lc->meta->buffers[idx].offset,
							  "column \"%s\": offset %" PRId64 " (%" PRId64 ") is %s",
							  f->name, i, v, i == 0 ? "negative" : "smaller than the one before");
		prev = v;
	}
	*last = prev;
	return 0;
}

/* ----------------------------------------------------------- dictionaries */

static int
check_indices(LoadCtx *lc, const ArrowField *f, const ArrowArray *a,
			  int64_t dict_len)
{
	const ArrowType *it = &f->dict.index_type;
	int			w = it->bit_width / 8;
	int64_t		i;

	for (i = 0; i < a->length; i++)
	{
		const uint8_t *p = a->values + i * w;
		int64_t		v;

		if (a->validity && !arrow_get_bit(a->validity, i))
			continue;
		switch (w)
		{
			case 1:
				v = it->is_signed ? (int64_t) (int8_t) p[0] : (int64_t) p[0];
				break;
			case 2:
				{
					uint16_t	u;

					memcpy(&u, p, 2);
					v = it->is_signed ? (int64_t) (int16_t) u : (int64_t) u;
					break;
				}
			case 4:
				{
					uint32_t	u;

					memcpy(&u, p, 4);
					v = it->is_signed ? (int64_t) (int32_t) u : (int64_t) u;
					break;
				}
			default:
				{
					uint64_t	u;

					memcpy(&u, p, 8);
					v = (!it->is_signed && u > (uint64_t) INT64_MAX) ? -1 : (int64_t) u;
					break;
				}
		}
		if (v < 0 || v >= dict_len)
			return lc_corrupt(lc, -1,
							  "column \"%s\": dictionary index %" PRId64 " at row %" PRId64 " is outside the dictionary of %" PRId64 " values",
							  f->name, v, i, dict_len);
	}
	return 0;
}

static DictCache *
dict_cache(LoadCtx *lc)
{
	ArrowFile  *file = lc->file;

	if (file->dict_cache == NULL)
		file->dict_cache = arrow_arena_alloc(&file->arena, sizeof(DictCache),
											 lc->err);
	return file->dict_cache;
}

/* Learn the id and delta flag of every dictionary message (once). */
static int
index_dictionaries(LoadCtx *lc, DictCache *dc)
{
	ArrowFile  *file = lc->file;
	ArrowArena	tmp;
	int64_t    *ids;
	bool	   *deltas;
	int			j;

	ids = arrow_arena_alloc(&file->arena, sizeof(int64_t) * ((size_t) file->n_dicts + 1),
							lc->err);
	deltas = arrow_arena_alloc(&file->arena, (size_t) file->n_dicts + 1, lc->err);
	if (ids == NULL || deltas == NULL)
		return -1;
	arrow_arena_init(&tmp, file->arena.allocator);
	for (j = 0; j < file->n_dicts; j++)
	{
		ArrowBatchMeta m;
		char		label[64];

		snprintf(label, sizeof(label), "dictionary batch %d", j);
		if (arrow_read_message_meta(file, &file->dicts[j],
									ARROW_MSG_DICTIONARY_BATCH, -1, -1,
									&tmp, &m, label, lc->err) < 0)
		{
			arrow_arena_free_all(&tmp);
			return -1;
		}
		ids[j] = m.dict_id;
		deltas[j] = m.is_delta;
		arrow_arena_free_all(&tmp);
	}
	dc->ids = ids;
	dc->deltas = deltas;
	dc->indexed = true;
	return 0;
}

static DictEntry *
find_entry(DictCache *dc, int64_t id, int count, const ArrowField *f)
{
	DictEntry  *e;

	for (e = dc->entries; e; e = e->next)
		if (e->id == id && e->count == count && e->field == f)
			return e;
	return NULL;
}

/* Concatenate the validity of a and b into a new bitmap (NULL if no nulls). */
static int
concat_validity(LoadCtx *lc, const ArrowArray *a, const ArrowArray *b,
				int64_t total, ArrowArray *out)
{
	uint8_t    *bits;
	int64_t		i;

	out->validity = NULL;
	if (a->null_count == 0 && b->null_count == 0)
		return 0;
	bits = arrow_arena_alloc(lc->arena, (size_t) ((total + 7) / 8), lc->err);
	if (bits == NULL)
		return -1;
	for (i = 0; i < total; i++)
	{
		bool		valid = i < a->length ? !arrow_is_null(a, i) :
			!arrow_is_null(b, i - a->length);

		if (valid)
			bits[i >> 3] |= (uint8_t) (1 << (i & 7));
	}
	out->validity = bits;
	return 0;
}

/* Append the delta dictionary b to a (flat value types only). */
static int
concat_dict(LoadCtx *lc, const ArrowField *vf, const ArrowArray *a,
			const ArrowArray *b, ArrowArray **res)
{
	ArrowArray *out;
	int64_t		total,
				i;
	ArrowTypeId t = vf->type.id;

	if (a->length > INT64_MAX - b->length)
		return lc_corrupt(lc, -1, "dictionary too long");
	total = a->length + b->length;
	out = arrow_arena_alloc(lc->arena, sizeof(ArrowArray), lc->err);
	if (out == NULL)
		return -1;
	*out = *a;
	out->length = total;
	out->null_count = a->null_count + b->null_count;
	if (t != ARROW_TYPE_NULL && concat_validity(lc, a, b, total, out) < 0)
		return -1;

	if (t == ARROW_TYPE_NULL)
		;
	else if (t == ARROW_TYPE_BOOL)
	{
		uint8_t    *bits = arrow_arena_alloc(lc->arena, (size_t) ((total + 7) / 8),
											 lc->err);

		if (bits == NULL)
			return -1;
		for (i = 0; i < total; i++)
		{
			bool		v = i < a->length ? arrow_get_bit(a->values, i) :
				arrow_get_bit(b->values, i - a->length);

			if (v)
				bits[i >> 3] |= (uint8_t) (1 << (i & 7));
		}
		out->values = bits;
		out->values_len = (total + 7) / 8;
	}
	else if (arrow_type_byte_width(&vf->type) > 0 ||
			 t == ARROW_TYPE_FIXED_SIZE_BINARY)
	{
		int64_t		w = arrow_type_byte_width(&vf->type);
		int64_t		alen,
					blen;
		uint8_t    *v;

		if (!mul_ok(a->length, w, &alen) || !mul_ok(b->length, w, &blen) ||
			alen > INT64_MAX - blen)
			return lc_corrupt(lc, -1, "dictionary too large");
		v = arrow_arena_alloc(lc->arena, (size_t) (alen + blen), lc->err);
		if (v == NULL)
			return -1;
		if (alen > 0)
			memcpy(v, a->values, (size_t) alen);
		if (blen > 0)
			memcpy(v + alen, b->values, (size_t) blen);
		out->values = v;
		out->values_len = alen + blen;
	}
	else if (t == ARROW_TYPE_UTF8 || t == ARROW_TYPE_BINARY ||
			 t == ARROW_TYPE_LARGE_UTF8 || t == ARROW_TYPE_LARGE_BINARY)
	{
		bool		large = is_large(t);
		int64_t		a0 = arrow_offset_at(a, 0),
					an = arrow_offset_at(a, a->length),
					b0 = arrow_offset_at(b, 0),
					bn = arrow_offset_at(b, b->length);
		int64_t		dlen = (an - a0) + (bn - b0);
		uint8_t    *offs,
				   *data;

		if (!large && dlen > INT32_MAX)
			return arrow_error(lc->err, ARROW_ERR_UNSUPPORTED, -1,
							   "%s: %s: column \"%s\": dictionary with deltas exceeds 2 GB",
							   lc->name, lc->label, vf->name);
		offs = arrow_arena_alloc(lc->arena, (size_t) (total + 1) * (large ? 8 : 4),
								 lc->err);
		data = arrow_arena_alloc(lc->arena, (size_t) dlen, lc->err);
		if (offs == NULL || data == NULL)
			return -1;
		for (i = 0; i <= total; i++)
		{
			int64_t		o = i <= a->length ? arrow_offset_at(a, i) - a0 :
				(an - a0) + arrow_offset_at(b, i - a->length) - b0;

			if (large)
				memcpy(offs + i * 8, &o, 8);
			else
			{
				int32_t		o32 = (int32_t) o;

				memcpy(offs + i * 4, &o32, 4);
			}
		}
		if (an > a0)
			memcpy(data, a->data + a0, (size_t) (an - a0));
		if (bn > b0)
			memcpy(data + (an - a0), b->data + b0, (size_t) (bn - b0));
		out->offsets = offs;
		out->data = data;
		out->data_len = dlen;
	}
	else
		return arrow_error(lc->err, ARROW_ERR_UNSUPPORTED, -1,
						   "%s: %s: column \"%s\": delta dictionaries of nested types are not supported",
						   lc->name, lc->label, vf->name);
	*res = out;
	return 0;
}

/* Load dictionary message j (whose values are described by vf). */
static int
load_dict_message(LoadCtx *lc, int j, const ArrowField *vf, ArrowArray **res)
{
	ArrowFile  *file = lc->file;
	ArrowArena	tmp;
	ArrowBatchMeta m;
	LoadCtx		dl;
	ArrowArray *arr;
	int			rc;

	arrow_arena_init(&tmp, file->arena.allocator);
	dl = *lc;
	snprintf(dl.label, sizeof(dl.label), "dictionary batch %d", j);
	dl.in_dict = true;
	dl.arena = &file->arena;
	rc = arrow_read_message_meta(file, &file->dicts[j],
								 ARROW_MSG_DICTIONARY_BATCH,
								 vf->n_nodes_total, vf->n_buffers_total,
								 &tmp, &m, dl.label, lc->err);
	if (rc == 0)
	{
		dl.meta = &m;
		arr = arrow_arena_alloc(&file->arena, sizeof(ArrowArray), lc->err);
		rc = arr ? load_field(&dl, vf, 1, arr) : -1;
		if (rc == 0)
			*res = arr;
	}
	arrow_arena_free_all(&tmp);
	return rc;
}

/*
 * The dictionary for field f as of record batch lc->batch: the last
 * non-delta dictionary message for its id before the batch, plus the deltas
 * after it.  Decoded states are cached in the file's arena.
 */
static int
get_dictionary(LoadCtx *lc, const ArrowField *f, ArrowArray **res)
{
	ArrowFile  *file = lc->file;
	DictCache  *dc = dict_cache(lc);
	int			limit,
				count = 0,
				start = -1,
				resume = -1,
				resume_count = 0,
				j;
	int64_t		id = f->dict.id;
	ArrowField *vf;
	ArrowArray *cur = NULL;
	DictEntry  *e;
	LoadCtx		dl;

	if (dc == NULL)
		return -1;
	if (!dc->indexed && index_dictionaries(lc, dc) < 0)
		return -1;
	limit = file->batch_dict_limit ? file->batch_dict_limit[lc->batch] :
		file->n_dicts;
	if (limit < 0 || limit > file->n_dicts)
		limit = file->n_dicts;
	for (j = 0; j < limit; j++)
		if (dc->ids[j] == id)
		{
			count++;
			if (!dc->deltas[j] || start < 0)
				start = j;
		}
	if (count == 0)
		return lc_corrupt(lc, -1, "column \"%s\": no dictionary with id %" PRId64 " precedes it",
						  f->name, id);
	e = find_entry(dc, id, count, f);
	if (e)
	{
		*res = e->array;
		return 0;
	}

	/* resume from the latest cached state at or after start, if any */
	{
		int			c = 0;

		for (j = 0; j < limit; j++)
		{
			if (dc->ids[j] != id)
				continue;
			c++;
			if (j >= start && (e = find_entry(dc, id, c, f)) != NULL)
			{
				resume = j;
				resume_count = c;
				cur = e->array;
			}
		}
	}
	vf = NULL;
	if (cur != NULL)
		vf = (ArrowField *) cur->field;
	else
	{
		vf = arrow_arena_alloc(&file->arena, sizeof(ArrowField), lc->err);
		if (vf == NULL)
			return -1;
		arrow_dict_value_field(f, vf);
	}

	dl = *lc;
	dl.arena = &file->arena;
	count = resume >= 0 ? resume_count : 0;
	{
		int			c = 0;

		for (j = 0; j < limit; j++)
		{
			ArrowArray *next = NULL;

			if (dc->ids[j] != id)
				continue;
			c++;
			if (j < start || j <= resume)
				continue;
			if (load_dict_message(lc, j, vf, &next) < 0)
				return -1;
			if (cur == NULL)
				cur = next;
			else
			{
				snprintf(dl.label, sizeof(dl.label), "dictionary batch %d", j);
				if (concat_dict(&dl, vf, cur, next, &cur) < 0)
					return -1;
			}
			count = c;
		}
	}

	e = arrow_arena_alloc(&file->arena, sizeof(DictEntry), lc->err);
	if (e == NULL)
		return -1;
	e->id = id;
	e->count = count;
	e->field = f;
	e->array = cur;
	e->next = dc->entries;
	dc->entries = e;
	*res = cur;
	return 0;
}

/* ---------------------------------------------------------------- arrays */

static int
load_children(LoadCtx *lc, const ArrowField *f, int depth, ArrowArray *out)
{
	int			i;

	if (f->n_children == 0)
		return 0;
	out->children = arrow_arena_alloc(lc->arena,
									  sizeof(ArrowArray) * (size_t) f->n_children,
									  lc->err);
	if (out->children == NULL)
		return -1;
	out->n_children = f->n_children;
	for (i = 0; i < f->n_children; i++)
		if (load_field(lc, &f->children[i], depth + 1, &out->children[i]) < 0)
			return -1;
	return 0;
}

static int
load_field(LoadCtx *lc, const ArrowField *f, int depth, ArrowArray *out)
{
	const ArrowFieldNode *node;
	int			bi = f->buffer_index;
	int64_t		len,
				need,
				avail,
				last;
	int			w;
	int			i;

	memset(out, 0, sizeof(*out));
	out->field = f;
	if (depth > ARROW_MAX_NESTING + 1)
		return lc_corrupt(lc, -1, "column \"%s\": nested too deep", f->name);
	if (f->node_index < 0 || f->node_index >= lc->meta->n_nodes ||
		bi < 0 || f->n_buffers < 0 || bi > lc->meta->n_buffers - f->n_buffers)
		return lc_corrupt(lc, -1, "column \"%s\": field node %d or buffers %d.. missing",
						  f->name, f->node_index, bi);
	node = &lc->meta->nodes[f->node_index];
	len = out->length = node->length;
	out->null_count = node->null_count;

	if (f->type.id == ARROW_TYPE_NULL && !f->has_dict)
	{
		out->null_count = len;
		return 0;
	}

	/* validity bitmap, only needed when there are nulls */
	if (out->null_count > 0)
	{
		if (load_buffer(lc, bi, bitmap_bytes(len), &out->validity, &avail) < 0)
			return -1;
	}

	if (f->has_dict)
	{
		if (lc->in_dict)
			return lc_corrupt(lc, -1, "column \"%s\": nested dictionary", f->name);
		w = f->dict.index_type.bit_width / 8;
		if (!mul_ok(len, w, &need))
			return lc_corrupt(lc, -1, "column \"%s\": length %" PRId64 " is too large",
							  f->name, len);
		if (load_buffer(lc, bi + 1, need, &out->values, &out->values_len) < 0 ||
			get_dictionary(lc, f, &out->dictionary) < 0 ||
			check_indices(lc, f, out, out->dictionary->length) < 0)
			return -1;
		return 0;
	}

	switch (f->type.id)
	{
		case ARROW_TYPE_BOOL:
			return load_buffer(lc, bi + 1, bitmap_bytes(len), &out->values,
							   &out->values_len);

		case ARROW_TYPE_UTF8:
		case ARROW_TYPE_BINARY:
		case ARROW_TYPE_LARGE_UTF8:
		case ARROW_TYPE_LARGE_BINARY:
			if (load_offsets(lc, f, bi + 1, len, out, &last) < 0)
				return -1;
			return load_buffer(lc, bi + 2, last, &out->data, &out->data_len);

		case ARROW_TYPE_LIST:
		case ARROW_TYPE_LARGE_LIST:
		case ARROW_TYPE_MAP:
			if (load_offsets(lc, f, bi + 1, len, out, &last) < 0 ||
				load_children(lc, f, depth, out) < 0)
				return -1;
			if (last > out->children[0].length)
				return lc_corrupt(lc, -1,
								  "column \"%s\": last offset %" PRId64 " exceeds the %" PRId64 " child values",
								  f->name, last, out->children[0].length);
			return 0;

		case ARROW_TYPE_FIXED_SIZE_LIST:
			if (load_children(lc, f, depth, out) < 0)
				return -1;
			if (!mul_ok(len, f->type.fixed_size, &need) ||
				out->children[0].length < need)
				return lc_corrupt(lc, -1,
								  "column \"%s\": %" PRId64 " lists of %d need more than the %" PRId64 " child values",
								  f->name, len, f->type.fixed_size,
								  out->children[0].length);
			return 0;

		case ARROW_TYPE_STRUCT:
			if (load_children(lc, f, depth, out) < 0)
				return -1;
			for (i = 0; i < out->n_children; i++)
				if (out->children[i].length < len)
					return lc_corrupt(lc, -1,
									  "column \"%s\": child %d has %" PRId64 " values, the struct %" PRId64,
									  f->name, i, out->children[i].length, len);
			return 0;

		default:
			w = arrow_type_byte_width(&f->type);
			if (w <= 0 && f->type.id != ARROW_TYPE_FIXED_SIZE_BINARY)
				return arrow_error(lc->err, ARROW_ERR_UNSUPPORTED, -1,
								   "%s: column \"%s\": type %d cannot be loaded",
								   lc->name, f->name, (int) f->type.id);
			if (!mul_ok(len, w, &need))
				return lc_corrupt(lc, -1, "column \"%s\": length %" PRId64 " is too large",
								  f->name, len);
			return load_buffer(lc, bi + 1, need, &out->values, &out->values_len);
	}
}

/* The load context of one column of a batch. */
static void
batch_load_ctx(LoadCtx *lc, ArrowFile *file, int batch, const ArrowBatchMeta *meta,
			   ArrowArena *arena, ArrowError *err)
{
	memset(lc, 0, sizeof(*lc));
	lc->file = file;
	lc->meta = meta;
	lc->arena = arena;
	lc->name = file->src.name;
	lc->batch = batch;
	lc->err = err;
	snprintf(lc->label, sizeof(lc->label), "record batch %d", batch);
}

/* A failed column load: allocation and codec errors do not know where
 * they happened, so they get the file, batch and column.  Returns -1. */
static int
column_load_failed(const LoadCtx *lc, const ArrowField *f, ArrowError *err)
{
	if (err && strstr(err->msg, lc->name) == NULL)
	{
		char		where[512];

		snprintf(where, sizeof(where), "%.200s: %.96s: column \"%.60s\"",
				 lc->name, lc->label, f->name);
		arrow_error_prefix(err, where);
	}
	return -1;
}

int
arrow_load_column(ArrowFile *file, int batch, const ArrowBatchMeta *meta,
				  int col, ArrowArena *arena, ArrowArray *out, ArrowError *err)
{
	LoadCtx		lc;
	const ArrowField *f;

	memset(out, 0, sizeof(*out));
	if (batch < 0 || batch >= file->n_batches || col < 0 ||
		col >= file->schema.n_fields)
		return arrow_error(err, ARROW_ERR_INVALID, -1,
						   "%s: record batch %d, column %d does not exist",
						   file->src.name, batch, col);
	batch_load_ctx(&lc, file, batch, meta, arena, err);
	f = &file->schema.fields[col];
	if (f->node_index < meta->n_nodes &&
		meta->nodes[f->node_index].length != meta->length)
		return lc_corrupt(&lc, -1, "column \"%s\" has %" PRId64 " rows, the batch %" PRId64,
						  f->name, meta->nodes[f->node_index].length, meta->length);
	if (load_field(&lc, f, 1, out) < 0)
		return column_load_failed(&lc, f, err);
	return 0;
}

bool
arrow_column_range_loadable(const ArrowFile *file, const ArrowBatchMeta *meta, int col)
{
	const ArrowField *f;

	if (meta->codec != ARROW_CODEC_NONE || col < 0 || col >= file->schema.n_fields)
		return false;
	f = &file->schema.fields[col];
	if (f->n_children != 0)
		return false;
	if (f->has_dict)
		return f->dict.index_type.bit_width >= 8;
	if (f->type.id == ARROW_TYPE_BOOL)
		return true;
	switch (f->type.id)
	{
		case ARROW_TYPE_UTF8:
		case ARROW_TYPE_BINARY:
		case ARROW_TYPE_LARGE_UTF8:
		case ARROW_TYPE_LARGE_BINARY:
			return true;		/* offsets of the range, then its bytes */
		case ARROW_TYPE_NULL:
		case ARROW_TYPE_LIST:
		case ARROW_TYPE_LARGE_LIST:
		case ARROW_TYPE_MAP:
		case ARROW_TYPE_FIXED_SIZE_LIST:
		case ARROW_TYPE_STRUCT:
		case ARROW_TYPE_FIXED_SIZE_BINARY:
			return false;
		default:
			return arrow_type_byte_width(&f->type) > 0;
	}
}

bool
arrow_batch_excludes_nulltest(const ArrowFile *file, const ArrowBatchMeta *meta, int field,
							  bool is_null)
{
	const ArrowField *f;
	const ArrowFieldNode *node;

	if (field < 0 || field >= file->schema.n_fields)
		return false;
	f = &file->schema.fields[field];
	node = &meta->nodes[f->node_index];
	if (is_null)
		return f->type.id != ARROW_TYPE_NULL && node->null_count == 0;
	return f->type.id == ARROW_TYPE_NULL ||
		(node->length > 0 && node->null_count == node->length);
}

bool
arrow_part_may_have_rows(const ArrowFile *file, int batch, int part)
{
	return part == 0 || file->batches[batch].body_len >= ARROW_PART_MIN_BODY;
}

bool
arrow_batch_part(const ArrowFile *file, int batch, const ArrowBatchMeta *meta,
				 const int *fields, int nfields, int part, int parts,
				 int64_t *first, int64_t *nrows, bool *split)
{
	int64_t		per;
	int			c;

	*first = 0;
	*nrows = meta->length;
	*split = parts > 1 && meta->length > ARROW_PART_MIN_ROWS &&
		file->batches[batch].body_len >= ARROW_PART_MIN_BODY;
	for (c = 0; *split && c < nfields; c++)
		if (fields[c] >= 0 && !arrow_column_range_loadable(file, meta, fields[c]))
			*split = false;
	if (!*split)
		return part == 0;
	per = (meta->length + parts - 1) / parts;
	per = (per + 63) & ~(int64_t) 63;
	if (per < ARROW_PART_MIN_ROWS)
		per = ARROW_PART_MIN_ROWS;
	*first = per * part;
	if (*first >= meta->length)
		return false;
	*nrows = meta->length - *first < per ? meta->length - *first : per;
	return true;
}

/*
 * Bytes [first, first + len) of buffer idx, after checking that the buffer
 * holds the need bytes the whole batch's array requires.
 */
static int
load_buffer_part(LoadCtx *lc, int idx, int64_t need, int64_t first, int64_t len,
				 const uint8_t **ptr)
{
	const ArrowBufferRef *ref;
	int64_t		avail;

	*ptr = (const uint8_t *) zero_buffer;
	if (idx < 0 || idx >= lc->meta->n_buffers)
		return lc_corrupt(lc, -1, "buffer %d does not exist", idx);
	if (need == 0 || len == 0)
		return 0;
	ref = &lc->meta->buffers[idx];
	if (ref->length < need)
		return lc_corrupt(lc, ref->offset,
						  "buffer %d (offset %" PRId64 ", length %" PRId64 ") is shorter than the %" PRId64 " bytes the array needs",
						  idx, ref->offset, ref->length, need);
	return plain_buffer(lc, ref->offset + first, len, len, ptr, &avail);
}

static int64_t
count_nulls(const uint8_t *validity, int64_t len)
{
	int64_t		valid = 0,
				i;

	for (i = 0; i + 64 <= len; i += 64)
	{
		uint64_t	w;

		memcpy(&w, validity + i / 8, 8);
		valid += __builtin_popcountll(w);
	}
	for (; i < len; i++)
		valid += arrow_get_bit(validity, i);
	return len - valid;
}

/*
 * Rows [row_off, row_off + row_len) of a string or binary column of len
 * rows (buffers bi: validity, bi + 1: offsets, bi + 2: data): the range's
 * row_len + 1 offsets, checked as load_offsets checks a whole array (the
 * first >= 0, non-decreasing; the last within the data buffer), rebased
 * to the range's first byte, and only the bytes they cover.
 */
static int
load_string_range(LoadCtx *lc, const ArrowField *f, int bi, int64_t len,
				  int64_t row_off, int64_t row_len, ArrowArray *out)
{
	int			w = is_large(f->type.id) ? 8 : 4;
	const uint8_t *op;
	uint8_t    *ro;
	int64_t		need,
				first = 0,
				prev = 0,
				i;

	if (len == INT64_MAX || !mul_ok(len + 1, w, &need))
		return lc_corrupt(lc, -1, "column \"%s\": length %" PRId64 " is too large",
						  f->name, len);
	if (load_buffer_part(lc, bi + 1, need, row_off * w, (row_len + 1) * w, &op) < 0)
		return -1;
	ro = arrow_arena_alloc(lc->arena, (size_t) ((row_len + 1) * w), lc->err);
	if (ro == NULL)
		return -1;
	for (i = 0; i <= row_len; i++)
	{
		int64_t		v = offset_entry(op, i, w);

		if (i == 0)
			first = prev = v;
		if (v < prev || v < 0)
			return lc_corrupt(lc, lc->meta->buffers[bi + 1].offset,
							  "column \"%s\": offset %" PRId64 " (%" PRId64 ") is %s",
							  f->name, row_off + i, v, v < 0 ? "negative" : "smaller than the one before");
		prev = v;
		if (w == 4)
		{
			int32_t		r = (int32_t) (v - first);

			memcpy(ro + i * 4, &r, 4);
		}
		else
		{
			int64_t		r = v - first;

			memcpy(ro + i * 8, &r, 8);
		}
	}
	out->offsets = ro;
	if (load_buffer_part(lc, bi + 2, prev, first, prev - first, &out->data) < 0)
		return -1;
	out->data_len = prev - first;
	return 0;
}

int
arrow_load_column_range(ArrowFile *file, int batch, const ArrowBatchMeta *meta,
						int col, int64_t row_off, int64_t row_len,
						ArrowArena *arena, ArrowArray *out, ArrowError *err)
{
	LoadCtx		lc;
	const ArrowField *f;
	const ArrowFieldNode *node;
	int			bi;
	int64_t		len,
				need,
				w;

	memset(out, 0, sizeof(*out));
	if (batch < 0 || batch >= file->n_batches || col < 0 ||
		col >= file->schema.n_fields)
		return arrow_error(err, ARROW_ERR_INVALID, -1,
						   "%s: record batch %d, column %d does not exist",
						   file->src.name, batch, col);
	if (!arrow_column_range_loadable(file, meta, col))
		return arrow_error(err, ARROW_ERR_UNSUPPORTED, -1,
						   "%s: record batch %d, column %d cannot be loaded by row range",
						   file->src.name, batch, col);
	if (row_off < 0 || row_len < 0 || (row_off & 7) != 0 ||
		row_off > meta->length || row_len > meta->length - row_off)
		return arrow_error(err, ARROW_ERR_INVALID, -1,
						   "%s: record batch %d: rows %" PRId64 "..+%" PRId64 " are not a range of its %" PRId64 " rows",
						   file->src.name, batch, row_off, row_len, meta->length);
	batch_load_ctx(&lc, file, batch, meta, arena, err);
	f = &file->schema.fields[col];
	bi = f->buffer_index;
	if (f->node_index < 0 || f->node_index >= meta->n_nodes ||
		bi < 0 || f->n_buffers < 2 || bi > meta->n_buffers - f->n_buffers)
		return lc_corrupt(&lc, -1, "column \"%s\": field node %d or buffers %d.. missing",
						  f->name, f->node_index, bi);
	node = &meta->nodes[f->node_index];
	len = node->length;
	if (len != meta->length)
		return lc_corrupt(&lc, -1, "column \"%s\" has %" PRId64 " rows, the batch %" PRId64,
						  f->name, len, meta->length);
	out->field = f;
	out->length = row_len;
	if (node->null_count > 0)
	{
		if (load_buffer_part(&lc, bi, bitmap_bytes(len), row_off / 8,
							 bitmap_bytes(row_off + row_len) - row_off / 8,
							 &out->validity) < 0)
			goto fail;
		out->null_count = count_nulls(out->validity, row_len);
		if (out->null_count == 0)
			out->validity = NULL;
	}
	if (!f->has_dict && f->type.id == ARROW_TYPE_BOOL)
	{
		if (load_buffer_part(&lc, bi + 1, bitmap_bytes(len), row_off / 8,
							 bitmap_bytes(row_off + row_len) - row_off / 8,
							 &out->values) < 0)
			goto fail;
		out->values_len = bitmap_bytes(row_off + row_len) - row_off / 8;
		return 0;
	}
	if (!f->has_dict && (f->type.id == ARROW_TYPE_UTF8 || f->type.id == ARROW_TYPE_BINARY ||
						 f->type.id == ARROW_TYPE_LARGE_UTF8 ||
						 f->type.id == ARROW_TYPE_LARGE_BINARY))
	{
		if (load_string_range(&lc, f, bi, len, row_off, row_len, out) < 0)
			goto fail;
		return 0;
	}
	w = f->has_dict ? f->dict.index_type.bit_width / 8 : arrow_type_byte_width(&f->type);
	if (!mul_ok(len, w, &need))
		return lc_corrupt(&lc, -1, "column \"%s\": length %" PRId64 " is too large",
						  f->name, len);
	if (load_buffer_part(&lc, bi + 1, need, row_off * w, row_len * w, &out->values) < 0)
		goto fail;
	out->values_len = row_len * w;
	if (f->has_dict &&
		(get_dictionary(&lc, f, &out->dictionary) < 0 ||
		 check_indices(&lc, f, out, out->dictionary->length) < 0))
		goto fail;
	return 0;

fail:
	return column_load_failed(&lc, f, err);
}

int
arrow_load_batch(ArrowFile *file, int batch, ArrowArena *arena,
				 ArrowRecordBatch *out, ArrowError *err)
{
	int			i;

	memset(out, 0, sizeof(*out));
	if (arrow_read_batch_meta(file, batch, arena, &out->meta, err) < 0)
		return -1;
	out->length = out->meta.length;
	out->n_columns = file->schema.n_fields;
	out->columns = arrow_arena_alloc(arena,
									 sizeof(ArrowArray) * ((size_t) out->n_columns + 1),
									 err);
	if (out->columns == NULL)
		return -1;
	for (i = 0; i < out->n_columns; i++)
		if (arrow_load_column(file, batch, &out->meta, i, arena,
							  &out->columns[i], err) < 0)
			return -1;
	return 0;
}

/* -------------------------------------------------------------- accessors */

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
