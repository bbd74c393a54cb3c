/*-------------------------------------------------------------------------
 *
 * warp_geom_set.c
 *	  Building a spatial join's geometry set and its grid (warp_geom_set.h).
 *
 * The grid: about two cells per item along each axis of the items' union
 * box (at most 1024 x 1024), each cell listing the items whose padded box
 * touches it.  Boxes are padded by the caller's distance plus a relative
 * margin (2^-20 of the coordinates' magnitude) that covers float4 rounding
 * of the && operator's boxes, so a cell never misses an item a point could
 * match.
 *
 * Pure C; no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <string.h>

#include "warp_geom_set.h"

#define GRID_MAX_SIDE 1024

static void *
alloc_n(const WarpAlloc *alloc, size_t n, size_t size)
{
	if (n == 0)
		n = 1;
	return alloc->alloc(alloc->ctx, n * size);
}

bool
warp_geom_set_create(WarpGeomSet *s, const WarpAlloc *alloc, warp_int32 nitems,
					 warp_int32 ncomps, warp_int32 nrings, warp_int32 npoints)
{
	memset(s, 0, sizeof(*s));
	s->nitems = nitems;
	s->ncomps = ncomps;
	s->nrings = nrings;
	s->npoints = npoints;
	s->kind = alloc_n(alloc, nitems, sizeof(warp_uint8));
	s->srid = alloc_n(alloc, nitems, sizeof(warp_int32));
	s->bbox = alloc_n(alloc, 4 * (size_t) nitems, sizeof(double));
	s->fbox = alloc_n(alloc, 4 * (size_t) nitems, sizeof(float));
	s->mag = alloc_n(alloc, nitems, sizeof(double));
	s->item_comp = alloc_n(alloc, (size_t) nitems + 1, sizeof(warp_int32));
	s->polys.comp_ring = alloc_n(alloc, (size_t) ncomps + 1, sizeof(warp_int32));
	s->polys.ring_pt = alloc_n(alloc, (size_t) nrings + 1, sizeof(warp_int32));
	s->polys.xy = alloc_n(alloc, 2 * (size_t) npoints, sizeof(double));
	return s->kind && s->srid && s->bbox && s->fbox && s->mag && s->item_comp &&
		s->polys.comp_ring && s->polys.ring_pt && s->polys.xy;
}

void
warp_geom_set_add(WarpGeomSet *s, const WarpGser *g)
{
	warp_int32	i = s->next_item++;
	double	   *b = s->bbox + 4 * (size_t) i;
	float	   *fb = s->fbox + 4 * (size_t) i;

	s->kind[i] = (warp_uint8) g->kind;
	s->srid[i] = g->srid;
	s->item_comp[i] = s->next_comp;
	s->mag[i] = g->mag;
	memcpy(b, g->bbox, 4 * sizeof(double));
	if (g->kind == WARP_GSER_POINT)
		warp_geom_point_fbox(g->x, g->y, fb);
	else if (g->kind == WARP_GSER_POLYS)
	{
		warp_gser_polys_fbox(g, fb);
		warp_gser_copy_polys(g, (warp_int32 *) s->polys.comp_ring, s->next_comp,
							 (warp_int32 *) s->polys.ring_pt, s->next_ring,
							 (double *) s->polys.xy, s->next_pt);
		s->next_comp += g->ncomps;
		s->next_ring += g->nrings;
		s->next_pt += g->npoints;
	}
	s->item_comp[i + 1] = s->next_comp;
	((warp_int32 *) s->polys.comp_ring)[s->next_comp] = s->next_ring;
	((warp_int32 *) s->polys.ring_pt)[s->next_ring] = s->next_pt;
}

/*
 * How far an item's box is widened: the distance, plus 2^-20 of it and of
 * the coordinates' magnitude (float4 rounding of && boxes, and every
 * rounding margin of warp_geom_set_test, are far below that).
 */
static double
item_pad(const WarpGeomSet *s, warp_int32 i, double pad)
{
	return pad + (pad + s->mag[i]) * (1.0 / (1 << 20)) + 1e-30;
}

/* the padded box of an item as cell ranges; false if it has none */
static bool
item_cells(const WarpGeomSet *s, warp_int32 i, double pad, warp_int32 *c)
{
	const double *b = s->bbox + 4 * (size_t) i;
	double		p = item_pad(s, i, pad);
	double		lo[2] = {b[0] - p, b[1] - p},
				hi[2] = {b[2] + p, b[3] + p};
	double		o[2] = {s->gx0, s->gy0},
				w[2] = {s->gcw, s->gch};
	warp_int32	n[2] = {s->gnx, s->gny};
	int			a;

	for (a = 0; a < 2; a++)
	{
		double		l = floor((lo[a] - o[a]) / w[a]),
					h = floor((hi[a] - o[a]) / w[a]);

		c[a] = l < 0 ? 0 : (l >= n[a] ? n[a] - 1 : (warp_int32) l);
		c[a + 2] = h < 0 ? 0 : (h >= n[a] ? n[a] - 1 : (warp_int32) h);
	}
	return true;
}

/*
 * One pass over the indexed items' cells: without fill, counts each cell's
 * items into cell_start[cell + 1] and returns the total (stopping past
 * INT32_MAX); with fill (each cell's next position), writes cell_items.
 */
static warp_int64
grid_pass(WarpGeomSet *s, double pad, warp_int32 *fill)
{
	warp_int64	total = 0;
	warp_int32	i,
				cx,
				cy;

	for (i = 0; i < s->nitems && total <= WARP_INT32_MAX; i++)
	{
		warp_int32	c[4];

		if (s->kind[i] == WARP_GSER_OPAQUE || !item_cells(s, i, pad, c))
			continue;
		for (cy = c[1]; cy <= c[3]; cy++)
			for (cx = c[0]; cx <= c[2]; cx++)
			{
				if (fill)
					s->cell_items[fill[cy * s->gnx + cx]++] = i;
				else
					s->cell_start[cy * s->gnx + cx + 1]++;
			}
		total += (warp_int64) (c[2] - c[0] + 1) * (c[3] - c[1] + 1);
	}
	return total;
}

bool
warp_geom_set_index(WarpGeomSet *s, const WarpAlloc *alloc, double pad)
{
	double		x0 = INFINITY,
				y0 = INFINITY,
				x1 = -INFINITY,
				y1 = -INFINITY,
				side;
	warp_int32	i,
				nindexed = 0,
				ncells;
	warp_int64	total;
	warp_int32 *fill;

	s->nalways = 0;
	s->always = alloc_n(alloc, s->nitems, sizeof(warp_int32));
	if (!s->always)
		return false;
	for (i = 0; i < s->nitems; i++)
	{
		const double *b = s->bbox + 4 * (size_t) i;
		double		p = item_pad(s, i, pad);

		if (s->kind[i] == WARP_GSER_OPAQUE)
		{
			s->always[s->nalways++] = i;
			continue;
		}
		nindexed++;
		x0 = fmin(x0, b[0] - p);
		y0 = fmin(y0, b[1] - p);
		x1 = fmax(x1, b[2] + p);
		y1 = fmax(y1, b[3] + p);
	}
	side = ceil(2.0 * sqrt((double) nindexed));
	/* cells no smaller than the distance: a box then spans a few cells */
	if (pad > 0 && side > fmax(x1 - x0, y1 - y0) / pad)
		side = ceil(fmax(x1 - x0, y1 - y0) / pad);
	s->gnx = s->gny = side < 1 ? 1 : (side > GRID_MAX_SIDE ? GRID_MAX_SIDE : (warp_int32) side);
	if (nindexed == 0)
	{
		x0 = y0 = 0;
		x1 = y1 = 1;
		s->gnx = s->gny = 1;
	}
	s->gx0 = x0;
	s->gy0 = y0;
	s->gcw = (x1 - x0) / s->gnx;
	s->gch = (y1 - y0) / s->gny;
	/* a degenerate extent (one point, a line of them) still has width */
	if (!(s->gcw > 0) || !isfinite(s->gcw))
		s->gcw = fmax(fabs(x0), 1.0) * (1.0 / (1 << 20)) + 1e-30;
	if (!(s->gch > 0) || !isfinite(s->gch))
		s->gch = fmax(fabs(y0), 1.0) * (1.0 / (1 << 20)) + 1e-30;
	ncells = s->gnx * s->gny;
	s->cell_start = alloc_n(alloc, (size_t) ncells + 1, sizeof(warp_int32));
	fill = alloc_n(alloc, (size_t) ncells + 1, sizeof(warp_int32));
	if (!s->cell_start || !fill)
		return false;
	memset(s->cell_start, 0, ((size_t) ncells + 1) * sizeof(warp_int32));
	total = grid_pass(s, pad, NULL);
	if (total > WARP_INT32_MAX)
		return false;
	for (i = 0; i < ncells; i++)
		s->cell_start[i + 1] += s->cell_start[i];
	s->cell_items = alloc_n(alloc, (size_t) total, sizeof(warp_int32));
	if (!s->cell_items)
		return false;
	memcpy(fill, s->cell_start, ((size_t) ncells + 1) * sizeof(warp_int32));
	(void) grid_pass(s, pad, fill);
	return true;
}
