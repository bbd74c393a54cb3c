/*-------------------------------------------------------------------------
 *
 * warp_topn_order.c
 *	  Row mode under ORDER BY ... LIMIT: the candidates' compaction, on the
 *	  host of either driver (see warp_topn_order.h).
 *
 * Pure C; no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "warp_topn_order.h"

static int
cmp_rows(const WarpTopnOrder *o, int nk, const warp_int64 *keys, const warp_uint8 *knull,
		 warp_int64 g, warp_int64 h)
{
	return warp_topn_cmp(o, keys[g * nk + o->key], knull[g * nk + o->key],
						 keys[h * nk + o->key], knull[h * nk + o->key]);
}

/*
 * Rearrange idx[0..n) so idx[kth] holds the row of rank kth by the first
 * ORDER BY key (three-way partitions: many equal keys cost nothing extra).
 */
static void
select_kth(const WarpTopnOrder *o, int nk, const warp_int64 *keys, const warp_uint8 *knull,
		   warp_int32 *idx, warp_int64 n, warp_int64 kth)
{
	warp_int64	lo = 0,
				hi = n - 1;

	while (lo < hi)
	{
		warp_int32	pivot = idx[lo + (hi - lo) / 2];
		warp_int64	lt = lo,
					i = lo,
					gt = hi;

		while (i <= gt)
		{
			int			c = cmp_rows(o, nk, keys, knull, idx[i], pivot);
			warp_int32	t;

			if (c < 0)
			{
				t = idx[lt];
				idx[lt++] = idx[i];
				idx[i++] = t;
			}
			else if (c > 0)
			{
				t = idx[gt];
				idx[gt--] = idx[i];
				idx[i] = t;
			}
			else
				i++;
		}
		if (kth < lt)
			hi = lt - 1;
		else if (kth > gt)
			lo = gt + 1;
		else
			return;
	}
}

warp_int64
warp_topn_compact_rows(const WarpProgram *p, warp_int64 *keys, warp_uint8 *knull, warp_int64 n,
					   warp_int32 *idx, warp_int64 *val, warp_uint8 *null)
{
	WarpTopnOrder o = warp_topn_order(p);
	int			nk = p->nkeys;
	warp_int64	g,
				w = 0,
				thr;

	for (g = 0; g < n; g++)
		idx[g] = (warp_int32) g;
	select_kth(&o, nk, keys, knull, idx, n, p->topn_limit - 1);
	thr = idx[p->topn_limit - 1];
	*val = keys[thr * nk + o.key];
	*null = knull[thr * nk + o.key];
	for (g = 0; g < n; g++)
	{
		if (warp_topn_cmp(&o, keys[g * nk + o.key], knull[g * nk + o.key], *val, *null) > 0)
			continue;
		if (w != g)
		{
			memmove(keys + w * nk, keys + g * nk, sizeof(warp_int64) * nk);
			memmove(knull + w * nk, knull + g * nk, nk);
		}
		w++;
	}
	return w;
}
