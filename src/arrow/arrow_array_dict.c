/*
 * arrow_array_dict.c — the dictionaries of dictionary-encoded columns: the
 * indices of a loaded column checked against their dictionary, and the
 * dictionary a record batch sees resolved (its dictionary batch and every
 * delta before the record batch, concatenated) and cached per file.
 *
 * The column loaders (arrow_array.c, arrow_array_range.c) call
 * get_dictionary and check_indices; the dictionary values themselves are
 * loaded with load_field like any column.
 */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow_array_internal.h"

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

int
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
int
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
