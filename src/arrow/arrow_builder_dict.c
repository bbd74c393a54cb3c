/*
 * arrow_builder_dict.c — the ArrowDict of a dictionary-encoded field: the
 * hash table of every distinct value seen in the file, and the commit of a
 * value just appended to the pending builder (a known value rolled back and
 * its old index used, a new one keyed and given the next index).
 *
 * The typed appenders (arrow_builder_append.c) and array appends
 * (arrow_builder_array.c) call dict_commit; the writer seeds a dictionary
 * from an existing file's dictionary with dict_seed when appending.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "arrow_builder_int.h"

static uint64_t
hash_bytes(const uint8_t *p, size_t n)
{
	uint64_t	h = 0x9E3779B97F4A7C15ULL ^ (uint64_t) n;
	uint64_t	k;

	while (n >= 8)
	{
		memcpy(&k, p, 8);
		h ^= k * 0xbf58476d1ce4e5b9ULL;
		h = ((h << 27) | (h >> 37)) * 0x94d049bb133111ebULL;
		p += 8;
		n -= 8;
	}
	k = 0;
	if (n)
		memcpy(&k, p, n);
	h ^= k * 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 31;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 29;
	return h;
}

static int64_t
dict_lookup(ArrowDict *d, const uint8_t *key, size_t len, uint64_t h)
{
	const int64_t *slots = (const int64_t *) d->slots.data;
	const int64_t *offs = (const int64_t *) d->key_offsets.data;
	const uint64_t *hashes = (const uint64_t *) d->key_hashes.data;
	size_t		mask = d->n_slots - 1;
	size_t		s;

	if (d->n_slots == 0)
		return -1;
	for (s = h & mask;; s = (s + 1) & mask)
	{
		int64_t		idx = slots[s];

		if (idx < 0)
			return -1;
		if (hashes[idx] == h &&
			(size_t) (offs[idx + 1] - offs[idx]) == len &&
			(len == 0 || memcmp(d->key_bytes.data + offs[idx], key, len) == 0))
			return idx;
	}
}

static int
dict_grow_slots(ArrowWriter *w, ArrowDict *d, ArrowError *err)
{
	size_t		n = d->n_slots ? d->n_slots * 2 : 1024;
	int64_t    *slots;
	const uint64_t *hashes = (const uint64_t *) d->key_hashes.data;
	int64_t		i;

	if (n > SIZE_MAX / 8)
		return arrow_error(err, ARROW_ERR_NOMEM, -1, "%s: dictionary too large",
						   writer_path(w));
	d->slots.len = 0;
	if (wbuf_reserve(w, &d->slots, n * 8, err) < 0)
		return -1;
	d->slots.len = n * 8;
	slots = (int64_t *) d->slots.data;
	memset(slots, 0xff, n * 8);
	d->n_slots = n;
	/* re-insert every key (hashes of unmapped duplicates are re-inserted
	 * too; lookup finds the first, which is the one we want) */
	for (i = 0; i < d->count; i++)
	{
		size_t		s;

		for (s = hashes[i] & (n - 1); slots[s] >= 0; s = (s + 1) & (n - 1))
			;
		slots[s] = i;
	}
	return 0;
}

/* Add a key with the next index. */
static int
dict_insert(ArrowWriter *w, ArrowDict *d, const uint8_t *key, size_t len,
			uint64_t h, ArrowError *err)
{
	int64_t		end;
	int64_t    *slots;
	size_t		s;

	if ((size_t) (d->count + 1) * 2 > d->n_slots)
	{
		/* keep the load factor under 1/2; hashes must be stored first */
		if (wbuf_push(w, &d->key_hashes, &h, 8, err) < 0)
			return -1;
		d->count++;
		if (wbuf_push(w, &d->key_bytes, key, len, err) < 0)
			return -1;
		end = (int64_t) d->key_bytes.len;
		if (wbuf_push(w, &d->key_offsets, &end, 8, err) < 0)
			return -1;
		return dict_grow_slots(w, d, err);
	}
	if (wbuf_push(w, &d->key_hashes, &h, 8, err) < 0 ||
		wbuf_push(w, &d->key_bytes, key, len, err) < 0)
		return -1;
	end = (int64_t) d->key_bytes.len;
	if (wbuf_push(w, &d->key_offsets, &end, 8, err) < 0)
		return -1;
	slots = (int64_t *) d->slots.data;
	for (s = h & (d->n_slots - 1); slots[s] >= 0; s = (s + 1) & (d->n_slots - 1))
		;
	slots[s] = d->count;
	d->count++;
	return 0;
}

/* Bytes of the last value of a (flat, non-null) builder. */
static const uint8_t *
last_value(ArrowBuilder *p, size_t *len)
{
	int64_t		i = p->length - 1;

	if (p->offset_width == 4)
	{
		const int32_t *o = (const int32_t *) p->offsets.data;

		*len = (size_t) (o[i + 1] - o[i]);
		return p->data.data + o[i];
	}
	if (p->offset_width == 8)
	{
		const int64_t *o = (const int64_t *) p->offsets.data;

		*len = (size_t) (o[i + 1] - o[i]);
		return p->data.data + o[i];
	}
	*len = (size_t) p->width;
	return p->values.data + (size_t) i * p->width;
}

static void
pending_rollback(ArrowBuilder *p)
{
	p->length--;
	if (p->offset_width)
	{
		p->offsets.len -= p->offset_width;
		if (p->offset_width == 4)
			p->data.len = (size_t) ((const int32_t *) p->offsets.data)[p->length];
		else
			p->data.len = (size_t) ((const int64_t *) p->offsets.data)[p->length];
	}
	else
		p->values.len -= p->width;
}

static int
index_push(ArrowBuilder *b, int64_t idx, ArrowError *err)
{
	/* little-endian: the low `width` bytes of the int64 are the index */
	if (wbuf_push(b->w, &b->values, &idx, b->width, err) < 0 ||
		validity_push(b, true, err) < 0)
		return -1;
	b->length++;
	return 0;
}

/*
 * The value just appended to b->dict->pending: keep it as a new dictionary
 * entry, or roll it back if already known; then append its index to b.
 */
int
dict_commit(ArrowBuilder *b, ArrowError *err)
{
	ArrowDict  *d = b->dict;
	ArrowBuilder *p = d->pending;
	const uint8_t *key;
	size_t		len;
	uint64_t	h;
	int64_t		idx;

	key = last_value(p, &len);
	h = hash_bytes(key, len);
	idx = dict_lookup(d, key, len, h);
	if (idx >= 0)
	{
		pending_rollback(p);
		return index_push(b, idx, err);
	}
	if (d->count >= d->max_index)
	{
		pending_rollback(p);
		return arrow_error(err, ARROW_ERR_INVALID, -1,
						   "%s: column \"%s\": more than %lld distinct values do not fit the dictionary index type",
						   writer_path(b->w), b->field->name,
						   (long long) d->max_index);
	}
	idx = d->count;
	if (dict_insert(b->w, d, key, len, h, err) < 0)
		return -1;
	return index_push(b, idx, err);
}

int
dict_seed(ArrowBuilder *b, const ArrowArray *dict, ArrowError *err)
{
	ArrowDict  *d = b->dict;
	int64_t		i;

	if (d == NULL || d->count != 0)
		return arrow_error(err, ARROW_ERR_INVALID, -1,
						   "%s: column \"%s\": cannot seed dictionary",
						   writer_path(b->w), b->field->name);
	for (i = 0; i < dict->length; i++)
	{
		const uint8_t *key;
		int64_t		len;
		uint64_t	h;

		if (arrow_is_null(dict, i))
		{
			/* a null entry keeps its index but never matches */
			key = (const uint8_t *) "";
			len = 0;
			h = ~(uint64_t) 0;
		}
		else
		{
			if (d->pending->offset_width ||
				d->value_field.type.id == ARROW_TYPE_FIXED_SIZE_BINARY ||
				d->value_field.type.id == ARROW_TYPE_DECIMAL)
				key = arrow_get_bytes(dict, i, &len);
			else
			{
				key = dict->values + (size_t) (dict->offset + i) * d->pending->width;
				len = d->pending->width;
			}
			h = hash_bytes(key, (size_t) len);
			/* duplicates in someone else's dictionary: keep the first */
			if (dict_lookup(d, key, (size_t) len, h) >= 0)
				h = ~(uint64_t) 0 - 1;
		}
		if (dict_insert(b->w, d, key, (size_t) len, h, err) < 0)
			return -1;
	}
	d->written = d->count;
	d->any_written = true;
	return 0;
}
