/*-------------------------------------------------------------------------
 *
 * warp_geom.h
 *	  Point-versus-polygon predicates with a rounding filter, written once
 *	  for the CPU and the GPU.
 *
 * Every test answers IN, OUT or UNSURE.  IN and OUT are certain: the
 * orientation determinants and distances that decided them are farther
 * from zero (from the distance threshold) than any rounding error of a
 * double-precision evaluation, ours or PostGIS's, could move them, so any
 * correct algorithm (PostGIS's winding number, GEOS's robust predicates)
 * reaches the same answer.  UNSURE marks a point within rounding distance of
 * an edge or a vertex, a ring whose winding number and crossing parity
 * disagree (a self-intersecting ring), a point inside more than one
 * component of a multipolygon or inside a hole outside its shell (invalid
 * geometry): the caller asks PostGIS's own function, whose answer is then
 * the answer, boundary rules and invalid geometry included.
 *
 * The bounds are deliberately loose (1024 units in the last place, where
 * Shewchuk's static filter needs about 3): being UNSURE costs one PostGIS
 * call, being wrong costs a wrong answer.
 *
 * The bounding-box operator (&&) is computed as PostGIS computes it, on
 * boxes of float4 rounded outward (its BOX2DF), so it needs no filter.
 *
 * Pure C; no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_GEOM_H
#define WARP_GEOM_H

#include <float.h>
#include <math.h>

#include "warp_defs.h"

#define WARP_GEOM_OUT		0
#define WARP_GEOM_IN		1
#define WARP_GEOM_UNSURE	2

/* relative rounding bound of a determinant or a distance (1024 ulp) */
#define WARP_GEOM_REL_EPS	(1024.0 * DBL_EPSILON)

/*
 * Side of p relative to the directed segment a->b: +1 left, -1 right, 0 not
 * certain (p on the line, or too close to it for a double evaluation to
 * tell).
 */
WARP_FN int
warp_geom_side(double ax, double ay, double bx, double by, double px, double py)
{
	double		l = (bx - ax) * (py - ay);
	double		r = (by - ay) * (px - ax);
	double		det = l - r;
	double		bound = WARP_GEOM_REL_EPS * (fabs(l) + fabs(r));

	if (det > bound)
		return 1;
	if (-det > bound)
		return -1;
	return 0;
}

/*
 * Winding number of a closed ring (n points, last == first, interleaved
 * x,y) around p, Sunday's algorithm, with zero-length segments skipped as
 * PostGIS skips them.  UNSURE when p is within rounding distance of an edge
 * that crosses p's horizontal, or the winding number and the crossing
 * parity disagree; otherwise IN (winding number not zero) or OUT.
 */
WARP_FN int
warp_geom_ring_pip(const double *xy, warp_int32 n, double px, double py)
{
	warp_int32	wn = 0;
	warp_int32	crossings = 0;
	warp_int32	i;

	for (i = 1; i < n; i++)
	{
		double		ax = xy[2 * (i - 1)],
					ay = xy[2 * (i - 1) + 1];
		double		bx = xy[2 * i],
					by = xy[2 * i + 1];
		int			side;

		if (ax == bx && ay == by)
			continue;
		if (py > (ay > by ? ay : by) || py < (ay < by ? ay : by))
			continue;
		/*
		 * A horizontal segment at p's height never counts; p is on it
		 * (exactly: no rounding) when within its x extent
		 */
		if (ay == by)
		{
			if (px >= (ax < bx ? ax : bx) && px <= (ax > bx ? ax : bx))
				return WARP_GEOM_UNSURE;
			continue;
		}
		/*
		 * (no shortcut for a segment wholly left of p: PostGIS evaluates its
		 * side too, and a rounded side there would change its count)
		 */
		side = warp_geom_side(ax, ay, bx, by, px, py);
		if (side == 0)
			return WARP_GEOM_UNSURE;
		if (side > 0 && ay <= py && py < by)
		{
			wn++;
			crossings++;
		}
		else if (side < 0 && by <= py && py < ay)
		{
			wn--;
			crossings++;
		}
	}
	if ((wn != 0) != ((crossings & 1) != 0))
		return WARP_GEOM_UNSURE;
	return wn != 0 ? WARP_GEOM_IN : WARP_GEOM_OUT;
}

/*
 * A polygon or multipolygon, flattened: components [comp0, comp1) of
 * ring_start (the first ring of each component is its shell), rings as
 * point ranges in pt_start, points interleaved in xy.
 */
typedef struct WarpGeomPolys
{
	const warp_int32 *comp_ring;	/* per component: first ring; +1 entry */
	const warp_int32 *ring_pt;	/* per ring: first point; +1 entry */
	const double *xy;			/* 2 per point */
} WarpGeomPolys;

/*
 * Point in (multi)polygon: IN when p is inside exactly one component's shell
 * and none of its holes, OUT when in no component, UNSURE otherwise.
 */
WARP_FN int
warp_geom_polys_pip(const WarpGeomPolys *g, warp_int32 comp0, warp_int32 comp1,
					double px, double py)
{
	warp_int32	inside = 0;
	warp_int32	c;

	for (c = comp0; c < comp1; c++)
	{
		warp_int32	r0 = g->comp_ring[c],
					r1 = g->comp_ring[c + 1];
		warp_int32	r;
		int			shell;
		warp_int32	holes = 0;

		shell = warp_geom_ring_pip(g->xy + 2 * g->ring_pt[r0], g->ring_pt[r0 + 1] - g->ring_pt[r0],
								   px, py);
		if (shell == WARP_GEOM_UNSURE)
			return WARP_GEOM_UNSURE;
		for (r = r0 + 1; r < r1; r++)
		{
			int			h = warp_geom_ring_pip(g->xy + 2 * g->ring_pt[r],
											   g->ring_pt[r + 1] - g->ring_pt[r], px, py);

			if (h == WARP_GEOM_UNSURE)
				return WARP_GEOM_UNSURE;
			holes += h == WARP_GEOM_IN;
		}
		if (shell == WARP_GEOM_OUT)
		{
			if (holes != 0)
				return WARP_GEOM_UNSURE;	/* a hole outside its shell */
			continue;
		}
		if (holes > 1)
			return WARP_GEOM_UNSURE;	/* overlapping holes */
		if (holes == 0)
			inside++;
	}
	if (inside > 1)
		return WARP_GEOM_UNSURE;	/* overlapping components */
	return inside ? WARP_GEOM_IN : WARP_GEOM_OUT;
}

/* distance from p to segment a-b, as PostGIS's lw_dist2d_pt_seg computes it */
WARP_FN double
warp_geom_seg_dist(double ax, double ay, double bx, double by, double px, double py)
{
	double		dx = bx - ax,
				dy = by - ay;
	double		r,
				cx,
				cy;

	if (dx == 0 && dy == 0)
		return sqrt((px - ax) * (px - ax) + (py - ay) * (py - ay));
	r = ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy);
	if (r < 0)
		return sqrt((px - ax) * (px - ax) + (py - ay) * (py - ay));
	if (r > 1)
		return sqrt((px - bx) * (px - bx) + (py - by) * (py - by));
	cx = ax + r * dx;
	cy = ay + r * dy;
	return sqrt((px - cx) * (px - cx) + (py - cy) * (py - cy));
}

WARP_FN double
warp_geom_ring_dist(const double *xy, warp_int32 n, double px, double py)
{
	double		best = INFINITY;
	warp_int32	i;

	for (i = 1; i < n; i++)
	{
		double		d = warp_geom_seg_dist(xy[2 * (i - 1)], xy[2 * (i - 1) + 1],
										   xy[2 * i], xy[2 * i + 1], px, py);

		if (d < best)
			best = d;
	}
	return best;
}

/*
 * distance(p, polygon) <= r, decided: IN (within), OUT, or UNSURE when the
 * distance is within rounding of r or p's position is.  Per component as
 * PostGIS measures it: outside the shell, the distance to the shell; inside
 * a hole, to that hole; otherwise 0.  mag is the largest coordinate
 * magnitude of the polygon (the scale of the rounding errors).
 */
WARP_FN int
warp_geom_polys_dwithin(const WarpGeomPolys *g, warp_int32 comp0, warp_int32 comp1,
						double px, double py, double r, double mag)
{
	double		m = mag + fabs(px) + fabs(py) + r;
	double		tol = WARP_GEOM_REL_EPS * m;
	double		best = INFINITY;
	warp_int32	c;

	for (c = comp0; c < comp1; c++)
	{
		warp_int32	r0 = g->comp_ring[c],
					r1 = g->comp_ring[c + 1];
		warp_int32	ring;
		const double *sxy = g->xy + 2 * g->ring_pt[r0];
		warp_int32	sn = g->ring_pt[r0 + 1] - g->ring_pt[r0];
		int			shell = warp_geom_ring_pip(sxy, sn, px, py);
		double		d = 0;

		if (shell == WARP_GEOM_UNSURE)
			return WARP_GEOM_UNSURE;
		if (shell == WARP_GEOM_OUT)
			d = warp_geom_ring_dist(sxy, sn, px, py);
		else
		{
			for (ring = r0 + 1; ring < r1; ring++)
			{
				const double *hxy = g->xy + 2 * g->ring_pt[ring];
				warp_int32	hn = g->ring_pt[ring + 1] - g->ring_pt[ring];
				int			h = warp_geom_ring_pip(hxy, hn, px, py);

				if (h == WARP_GEOM_UNSURE)
					return WARP_GEOM_UNSURE;
				if (h == WARP_GEOM_IN)
				{
					d = warp_geom_ring_dist(hxy, hn, px, py);
					break;
				}
			}
			/* certainly inside: PostGIS's distance is exactly 0 */
			if (ring == r1 && r >= 0)
				return WARP_GEOM_IN;
		}
		if (d < best)
			best = d;
		if (best < r - tol)
			return WARP_GEOM_IN;
	}
	if (fabs(best - r) <= tol)
		return WARP_GEOM_UNSURE;
	return best <= r ? WARP_GEOM_IN : WARP_GEOM_OUT;
}

/* distance(p, q) <= r */
WARP_FN int
warp_geom_pt_dwithin(double qx, double qy, double px, double py, double r)
{
	double		d = sqrt((px - qx) * (px - qx) + (py - qy) * (py - qy));
	double		tol = WARP_GEOM_REL_EPS * (fabs(px) + fabs(py) + fabs(qx) + fabs(qy) + r);

	if (fabs(d - r) <= tol)
		return WARP_GEOM_UNSURE;
	return d <= r ? WARP_GEOM_IN : WARP_GEOM_OUT;
}

/* ------------------------------------------------------------- && */

/* the largest float <= d (PostGIS's next_float_down), clamped to FLT_MAX */
WARP_FN float
warp_geom_float_down(double d)
{
	float		f;

	if (d > (double) FLT_MAX)
		return FLT_MAX;
	if (d <= (double) -FLT_MAX)
		return -FLT_MAX;
	f = (float) d;
	if ((double) f <= d)
		return f;
	return nextafterf(f, -FLT_MAX);
}

/* the smallest float >= d (PostGIS's next_float_up), clamped to FLT_MAX */
WARP_FN float
warp_geom_float_up(double d)
{
	float		f;

	if (d >= (double) FLT_MAX)
		return FLT_MAX;
	if (d < (double) -FLT_MAX)
		return -FLT_MAX;
	f = (float) d;
	if ((double) f >= d)
		return f;
	return nextafterf(f, FLT_MAX);
}

/* boxes as xmin, ymin, xmax, ymax; PostGIS's box2df_overlaps */
WARP_FN bool
warp_geom_fbox_overlaps(const float *a, const float *b)
{
	return !(a[0] > b[2] || b[0] > a[2] || a[1] > b[3] || b[1] > a[3]);
}

/* the float box PostGIS gives a point */
WARP_FN void
warp_geom_point_fbox(double x, double y, float *box)
{
	box[0] = warp_geom_float_down(x);
	box[1] = warp_geom_float_down(y);
	box[2] = warp_geom_float_up(x);
	box[3] = warp_geom_float_up(y);
}

#endif							/* WARP_GEOM_H */
