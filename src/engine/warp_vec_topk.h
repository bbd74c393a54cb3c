/*
 * warp_vec_topk.h — the k nearest rows of a stream, by (distance, scan
 * position): the order of a stable sort on distance, so the answer of an
 * exact k-NN scan is defined even where distances tie.  NULL distances
 * (NULL vectors) sort after every number and NaN after every non-NULL
 * (PostgreSQL's ORDER BY ... ASC, NULLS LAST for float8).
 *
 * A bounded max-heap of entries carrying a caller's payload (the row).
 * Pure C; the ordering (warp_vec_topk_before) is a WARP_FN so a GPU
 * top-k can share it.
 */
#ifndef WARP_VEC_TOPK_H
#define WARP_VEC_TOPK_H

#include <math.h>
#include <stdlib.h>

#include "warp_defs.h"

typedef struct WarpVecHit
{
	double		dist;
	int64_t		seq;			/* position in scan order */
	bool		isnull;
	void	   *payload;
} WarpVecHit;

/* rank of a distance: 0 number, 1 NaN, 2 NULL */
WARP_FN int
warp_vec_dist_rank(double d, bool isnull)
{
	return isnull ? 2 : (isnan(d) ? 1 : 0);
}

/* whether (da, sa) comes before (db, sb) */
WARP_FN bool
warp_vec_topk_before(double da, bool na, int64_t sa, double db, bool nb, int64_t sb)
{
	int			ra = warp_vec_dist_rank(da, na),
				rb = warp_vec_dist_rank(db, nb);

	if (ra != rb)
		return ra < rb;
	if (ra == 0 && da != db)
		return da < db;
	return sa < sb;
}

typedef struct WarpVecTopK
{
	int64_t		k;
	int64_t		n;
	WarpVecHit *h;				/* k entries: a max-heap (h[0] the last kept) */
} WarpVecTopK;

static inline bool
warp_vec_hit_before(const WarpVecHit *a, const WarpVecHit *b)
{
	return warp_vec_topk_before(a->dist, a->isnull, a->seq, b->dist, b->isnull, b->seq);
}

/* whether a row of this distance and position would be kept */
static inline bool
warp_vec_topk_wanted(const WarpVecTopK *t, double dist, bool isnull, int64_t seq)
{
	return t->n < t->k ||
		warp_vec_topk_before(dist, isnull, seq, t->h[0].dist, t->h[0].isnull, t->h[0].seq);
}

static inline void
warp_vec_topk_sift_down(WarpVecHit *h, int64_t n, int64_t i)
{
	for (;;)
	{
		int64_t		l = 2 * i + 1,
					r = l + 1,
					m = i;
		WarpVecHit	tmp;

		if (l < n && warp_vec_hit_before(&h[m], &h[l]))
			m = l;
		if (r < n && warp_vec_hit_before(&h[m], &h[r]))
			m = r;
		if (m == i)
			return;
		tmp = h[i];
		h[i] = h[m];
		h[m] = tmp;
		i = m;
	}
}

/*
 * Keep `hit` (call only when warp_vec_topk_wanted); returns the payload
 * of the entry it pushed out, or NULL.
 */
static inline void *
warp_vec_topk_add(WarpVecTopK *t, const WarpVecHit *hit)
{
	void	   *out = NULL;
	int64_t		i;

	if (t->n == t->k)
	{
		out = t->h[0].payload;
		t->h[0] = *hit;
		warp_vec_topk_sift_down(t->h, t->n, 0);
		return out;
	}
	i = t->n++;
	t->h[i] = *hit;
	while (i > 0 && warp_vec_hit_before(&t->h[(i - 1) / 2], &t->h[i]))
	{
		WarpVecHit	tmp = t->h[i];

		t->h[i] = t->h[(i - 1) / 2];
		t->h[(i - 1) / 2] = tmp;
		i = (i - 1) / 2;
	}
	return out;
}

/* the kept entries in order, nearest first (heap sort in place) */
static inline void
warp_vec_topk_sort(WarpVecTopK *t)
{
	int64_t		n;

	for (n = t->n; n > 1; n--)
	{
		WarpVecHit	tmp = t->h[0];

		t->h[0] = t->h[n - 1];
		t->h[n - 1] = tmp;
		warp_vec_topk_sift_down(t->h, n - 1, 0);
	}
}

#endif							/* WARP_VEC_TOPK_H */
