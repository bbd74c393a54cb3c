/*-------------------------------------------------------------------------
 *
 * warp_join.c
 *	  Building join tables (see warp_join.h).
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "warp_join.h"

/*
 * A direct array (4 bytes per key value in [min, max]) is used when the key
 * range is at most this many times the row count, or small in absolute
 * terms: filtered dimensions (SSB's part after p_category = ...) keep few
 * rows of a dense range, and a miss in a direct array costs one load where
 * an open-addressing miss walks a cluster.
 */
#define DIRECT_MAX_SPREAD 16
#define DIRECT_SMALL_SPAN (1 << 22)
#define DIRECT_MAX_SPAN (1 << 26)

warp_int64
warp_join_estimate_bytes(warp_int64 n)
{
	/* rows (key, payload, next) + hash slots at load <= 1/2 */
	return n * (8 + 4 + 4) + 2 * n * (8 + 4) + 1024;
}

WarpJoinTable *
warp_join_build(const WarpAlloc *alloc, const warp_int64 *keys,
				const warp_int32 *payload, warp_int64 n, warp_int32 npayloads)
{
	WarpJoinTable *t;
	warp_int64	i;
	warp_int64	min = 0,
				max = 0;

	if (n < 0 || n >= WARP_INT32_MAX)
		return NULL;
	t = alloc->alloc(alloc->ctx, sizeof(WarpJoinTable));
	if (t == NULL)
		return NULL;
	memset(t, 0, sizeof(*t));
	t->nrows = n;
	t->npayloads = npayloads;
	t->unique = true;
	t->keys = alloc->alloc(alloc->ctx, sizeof(warp_int64) * (n + 1));
	t->payload = alloc->alloc(alloc->ctx, sizeof(warp_int32) * (n + 1));
	t->next = alloc->alloc(alloc->ctx, sizeof(warp_int32) * (n + 1));
	if (!t->keys || !t->payload || !t->next)
		return NULL;
	if (n > 0)
	{
		memcpy(t->keys, keys, sizeof(warp_int64) * n);
		memcpy(t->payload, payload, sizeof(warp_int32) * n);
	}
	for (i = 0; i < n; i++)
	{
		if (i == 0 || keys[i] < min)
			min = keys[i];
		if (i == 0 || keys[i] > max)
			max = keys[i];
	}

	/*
	 * Rows are chained in build order, so duplicates come out of a probe in
	 * the order the dimension produced them.  Insert backwards, prepending.
	 */
	if (n > 0 && (warp_uint64) (max - min) < (warp_uint64) DIRECT_MAX_SPAN &&
		((warp_uint64) (max - min) < (warp_uint64) DIRECT_SMALL_SPAN ||
		 (warp_uint64) (max - min) < (warp_uint64) n * DIRECT_MAX_SPREAD))
	{
		warp_int64	span = max - min + 1;

		t->direct = true;
		t->min = min;
		t->max = max;
		t->first = alloc->alloc(alloc->ctx, sizeof(warp_int32) * span);
		if (t->first == NULL)
			return NULL;
		memset(t->first, 0xff, sizeof(warp_int32) * span);
		t->bits = alloc->alloc(alloc->ctx, sizeof(warp_uint64) * ((span + 63) / 64));
		if (t->bits == NULL)
			return NULL;
		memset(t->bits, 0, sizeof(warp_uint64) * ((span + 63) / 64));
		for (i = n - 1; i >= 0; i--)
		{
			warp_int32 *f = &t->first[keys[i] - min];

			t->bits[(keys[i] - min) >> 6] |= UINT64_C(1) << ((keys[i] - min) & 63);

			if (*f >= 0)
				t->unique = false;
			t->next[i] = *f;
			*f = (warp_int32) i;
		}
		return t;
	}
	else
	{
		warp_uint64 cap = 16;

		while (cap < (warp_uint64) n * 2)
			cap <<= 1;
		t->mask = cap - 1;
		t->slot_key = alloc->alloc(alloc->ctx, sizeof(warp_int64) * cap);
		t->slot_row = alloc->alloc(alloc->ctx, sizeof(warp_int32) * cap);
		if (!t->slot_key || !t->slot_row)
			return NULL;
		memset(t->slot_row, 0xff, sizeof(warp_int32) * cap);
		for (i = n - 1; i >= 0; i--)
		{
			warp_uint64 s = warp_hash_int64(keys[i]) & t->mask;

			for (;;)
			{
				if (t->slot_row[s] < 0)
				{
					t->slot_key[s] = keys[i];
					t->next[i] = -1;
					t->slot_row[s] = (warp_int32) i;
					break;
				}
				if (t->slot_key[s] == keys[i])
				{
					t->unique = false;
					t->next[i] = t->slot_row[s];
					t->slot_row[s] = (warp_int32) i;
					break;
				}
				s = (s + 1) & t->mask;
			}
		}
	}
	return t;
}

/* ------------------------------------------------------------ flat form */

#define FLAT_ALIGN(x) (((x) + 7) & ~(warp_int64) 7)

/* the arrays of t in the flat form's order: where, element size, count */
typedef struct FlatArray
{
	void	  **ptr;
	warp_int64	elem;
	warp_int64	count;
} FlatArray;

static int
flat_arrays(WarpJoinTable *t, FlatArray *a)
{
	warp_int64	n = t->nrows + 1;
	int			k = 0;

	a[k++] = (FlatArray) {(void **) &t->keys, sizeof(warp_int64), n};
	a[k++] = (FlatArray) {(void **) &t->payload, sizeof(warp_int32), n};
	a[k++] = (FlatArray) {(void **) &t->next, sizeof(warp_int32), n};
	if (t->direct)
	{
		warp_int64	span = t->max - t->min + 1;

		a[k++] = (FlatArray) {(void **) &t->first, sizeof(warp_int32), span};
		a[k++] = (FlatArray) {(void **) &t->bits, sizeof(warp_uint64), t->bits ? (span + 63) / 64 : 0};
	}
	else
	{
		a[k++] = (FlatArray) {(void **) &t->slot_key, sizeof(warp_int64), (warp_int64) t->mask + 1};
		a[k++] = (FlatArray) {(void **) &t->slot_row, sizeof(warp_int32), (warp_int64) t->mask + 1};
	}
	return k;
}

warp_int64
warp_join_flat_size(const WarpJoinTable *t)
{
	WarpJoinTable copy = *t;
	FlatArray	a[8];
	int			k = flat_arrays(&copy, a);
	warp_int64	bytes = FLAT_ALIGN((warp_int64) sizeof(WarpJoinTable));
	int			i;

	for (i = 0; i < k; i++)
		bytes += FLAT_ALIGN(a[i].elem * a[i].count);
	return bytes;
}

void
warp_join_flatten(const WarpJoinTable *t, void *dst)
{
	char	   *base = dst;
	WarpJoinTable copy = *t;
	FlatArray	a[8];
	int			k = flat_arrays(&copy, a);
	warp_int64	off = FLAT_ALIGN((warp_int64) sizeof(WarpJoinTable));
	WarpJoinTable *h = (WarpJoinTable *) base;
	int			i;

	for (i = 0; i < k; i++)
	{
		if (a[i].count > 0)
			memcpy(base + off, *a[i].ptr, (size_t) (a[i].elem * a[i].count));
		off += FLAT_ALIGN(a[i].elem * a[i].count);
	}
	*h = *t;
	/* no pointer in the header: each process maps the copy elsewhere */
	h->keys = NULL;
	h->payload = NULL;
	h->next = NULL;
	h->first = NULL;
	h->slot_key = NULL;
	h->slot_row = NULL;
	h->bits = t->bits ? (warp_uint64 *) (base + off) : NULL;	/* only "built or not" */
}

bool
warp_join_attach(const void *src, warp_int64 size, WarpJoinTable *out)
{
	const char *base = src;
	FlatArray	a[8];
	int			k;
	warp_int64	off = FLAT_ALIGN((warp_int64) sizeof(WarpJoinTable));
	bool		has_bits;
	int			i;

	if (size < off)
		return false;
	memcpy(out, base, sizeof(WarpJoinTable));
	has_bits = out->bits != NULL;
	if (out->nrows < 0 || out->nrows >= WARP_INT32_MAX ||
		(out->direct && (out->max < out->min || out->max - out->min >= DIRECT_MAX_SPAN)) ||
		(!out->direct && (out->mask == 0 || (out->mask & (out->mask + 1)) != 0 ||
						  out->mask > (warp_uint64) WARP_INT32_MAX * 4)))
		return false;
	k = flat_arrays(out, a);	/* bits sized by the header's marker */
	for (i = 0; i < k; i++)
	{
		warp_int64	count = a[i].ptr == (void **) &out->bits && !has_bits ? 0 : a[i].count;

		if (count > 0 && off + a[i].elem * count > size)
			return false;
		*a[i].ptr = count > 0 ? (void *) (base + off) : NULL;
		off += FLAT_ALIGN(a[i].elem * count);
	}
	return off == size;
}
