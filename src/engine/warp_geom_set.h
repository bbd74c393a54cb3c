/*-------------------------------------------------------------------------
 *
 * warp_geom_set.h
 *	  The build side of a spatial join: geometries flattened into arrays
 *	  (boxes, components, rings, points) and a uniform grid over their
 *	  boxes, and the one predicate test both drivers use.
 *
 * A set is built in three steps: warp_geom_set_create with the totals,
 * warp_geom_set_add per geometry (a WarpGser), warp_geom_set_index.  Every
 * array is one allocation from the caller's allocator; nothing is freed
 * here (the backend's memory context owns it).  Items that are OPAQUE
 * (PostGIS must judge them) are not in the grid but in `always`, which
 * every probe visits.
 *
 * Pure C; no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_GEOM_SET_H
#define WARP_GEOM_SET_H

#include "warp_defs.h"
#include "warp_geom.h"
#include "warp_geom_gser.h"
#include "warp_join.h"			/* WarpAlloc */

/* predicate families (the planner maps PostGIS functions onto them) */
typedef enum WarpGeomOp
{
	WARP_GEOM_OP_CONTAINS,		/* interior: ST_Contains, ST_Within */
	WARP_GEOM_OP_COVERS,		/* interior or boundary: ST_Covers,
								 * ST_CoveredBy, ST_Intersects */
	WARP_GEOM_OP_DWITHIN,		/* distance <= r: ST_DWithin */
	WARP_GEOM_OP_OVERLAPS		/* float boxes overlap: && */
} WarpGeomOp;

typedef struct WarpGeomSet
{
	warp_int32	nitems;
	warp_uint8 *kind;			/* per item: WARP_GSER_* */
	warp_int32 *srid;			/* per item */
	double	   *bbox;			/* 4 per item: xmin, ymin, xmax, ymax */
	float	   *fbox;			/* 4 per item: PostGIS's float box */
	double	   *mag;			/* per item: largest |coordinate| */
	warp_int32 *item_comp;		/* per item: first component; +1 entry */
	warp_int32	ncomps,
				nrings,
				npoints;
	WarpGeomPolys polys;
	/* fill positions while adding */
	warp_int32	next_item,
				next_comp,
				next_ring,
				next_pt;
	/* the grid */
	warp_int32	gnx,
				gny;
	double		gx0,
				gy0,
				gcw,
				gch;
	warp_int32 *cell_start;		/* gnx*gny+1 */
	warp_int32 *cell_items;
	warp_int32 *always;			/* opaque items */
	warp_int32	nalways;
} WarpGeomSet;

/* false: out of memory */
extern bool warp_geom_set_create(WarpGeomSet *s, const WarpAlloc *alloc, warp_int32 nitems,
								 warp_int32 ncomps, warp_int32 nrings, warp_int32 npoints);
extern void warp_geom_set_add(WarpGeomSet *s, const WarpGser *g);

/*
 * Builds the grid; pad widens every box (the distance of ST_DWithin, 0
 * otherwise).  false: out of memory.
 */
extern bool warp_geom_set_index(WarpGeomSet *s, const WarpAlloc *alloc, double pad);

/* the grid cell's items for a point: [*start, *end) of cell_items */
WARP_FN void
warp_geom_set_cell(const WarpGeomSet *s, double x, double y, warp_int32 *start, warp_int32 *end)
{
	double		fx = (x - s->gx0) / s->gcw,
				fy = (y - s->gy0) / s->gch;
	warp_int32	cx,
				cy,
				cell;

	*start = *end = 0;
	if (!(fx >= 0 && fy >= 0 && fx < (double) s->gnx && fy < (double) s->gny))
		return;
	cx = (warp_int32) fx;
	cy = (warp_int32) fy;
	cell = cy * s->gnx + cx;
	*start = s->cell_start[cell];
	*end = s->cell_start[cell + 1];
}

/*
 * op(item, point (x, y)) with distance r: WARP_GEOM_IN (true), OUT (false)
 * or UNSURE (PostGIS decides).  The point is a plain one (WARP_GSER_POINT)
 * with the item's SRID.
 */
WARP_FN int
warp_geom_set_test(const WarpGeomSet *s, warp_int32 item, WarpGeomOp op, double x, double y,
				   double r)
{
	const double *b = s->bbox + 4 * (size_t) item;
	warp_uint8	kind = s->kind[item];

	if (kind == WARP_GSER_OPAQUE)
		return WARP_GEOM_UNSURE;
	if (op == WARP_GEOM_OP_OVERLAPS)
	{
		float		pb[4];

		warp_geom_point_fbox(x, y, pb);
		return warp_geom_fbox_overlaps(s->fbox + 4 * (size_t) item, pb) ?
			WARP_GEOM_IN : WARP_GEOM_OUT;
	}
	if (op == WARP_GEOM_OP_DWITHIN)
	{
		double		tol = WARP_GEOM_REL_EPS * (s->mag[item] + fabs(x) + fabs(y) + r);
		double		far = r + tol;

		if (x < b[0] - far || x > b[2] + far || y < b[1] - far || y > b[3] + far)
			return WARP_GEOM_OUT;
		if (kind == WARP_GSER_POINT)
			return warp_geom_pt_dwithin(b[0], b[1], x, y, r);
		return warp_geom_polys_dwithin(&s->polys, s->item_comp[item], s->item_comp[item + 1],
									   x, y, r, s->mag[item]);
	}
	/* CONTAINS, COVERS: outside the closed box is outside, boundary too */
	if (x < b[0] || x > b[2] || y < b[1] || y > b[3])
		return WARP_GEOM_OUT;
	if (kind == WARP_GSER_POINT)
		return WARP_GEOM_UNSURE;
	return warp_geom_polys_pip(&s->polys, s->item_comp[item], s->item_comp[item + 1], x, y);
}

#endif							/* WARP_GEOM_SET_H */
