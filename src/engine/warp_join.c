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
