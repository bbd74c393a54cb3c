/*-------------------------------------------------------------------------
 *
 * warp_geom_gser.c
 *	  GSERIALIZED (PostGIS 3) decoding with bounds checks: see
 *	  warp_geom_gser.h for the layout and the classification.
 *
 * Pure C; no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <string.h>

#include "warp_geom.h"
#include "warp_geom_gser.h"

#define G2_Z		0x01
#define G2_M		0x02
#define G2_BBOX		0x04
#define G2_GEODETIC 0x08
#define G2_EXTENDED 0x10
#define G2_VERSION	0x40

/* coordinates beyond this are left to PostGIS (its float boxes clamp) */
#define GSER_MAX_COORD 1e38

static warp_uint32
rd_u32(const warp_uint8 *p)
{
	warp_uint32 v;

	memcpy(&v, p, 4);
	return v;
}

static double
rd_f64(const warp_uint8 *p)
{
	double		v;

	memcpy(&v, p, 8);
	return v;
}

static bool
plain_coord(double v)
{
	return isfinite(v) && fabs(v) < GSER_MAX_COORD;
}

/*
 * One polygon body at *pp: checks its size and rings, widens the box; on
 * success *pp moves past it.
 */
static bool
scan_polygon(const warp_uint8 **pp, const warp_uint8 *end, WarpGser *g)
{
	const warp_uint8 *p = *pp;
	warp_uint32 nrings,
				r;
	const warp_uint8 *counts,
			   *pts;

	if (end - p < 8 || rd_u32(p) != WARP_GSER_POLYGONTYPE)
		return false;
	nrings = rd_u32(p + 4);
	if (nrings == 0 || nrings > (warp_uint32) ((end - p - 8) / 4))
		return false;
	counts = p + 8;
	pts = counts + 4 * (size_t) nrings + ((nrings & 1) ? 4 : 0);
	if (pts > end)
		return false;
	for (r = 0; r < nrings; r++)
	{
		warp_uint32 n = rd_u32(counts + 4 * r),
					i;
		const warp_uint8 *q = pts;

		if (n < 4 || n > (warp_uint32) ((end - pts) / 16))
			return false;
		for (i = 0; i < n; i++, q += 16)
		{
			double		x = rd_f64(q),
						y = rd_f64(q + 8);

			if (!plain_coord(x) || !plain_coord(y))
				return false;
			if (x < g->bbox[0])
				g->bbox[0] = x;
			if (y < g->bbox[1])
				g->bbox[1] = y;
			if (x > g->bbox[2])
				g->bbox[2] = x;
			if (y > g->bbox[3])
				g->bbox[3] = y;
		}
		/* closed: last point bitwise equal to the first, as PostGIS tests */
		if (memcmp(pts, pts + 16 * (size_t) (n - 1), 16) != 0)
			return false;
		pts += 16 * (size_t) n;
		if (g->npoints > WARP_INT32_MAX - (warp_int32) n)
			return false;
		g->npoints += (warp_int32) n;
	}
	g->nrings += (warp_int32) nrings;
	g->ncomps++;
	*pp = pts;
	return true;
}

static void
read_polys(const warp_uint8 *body, const warp_uint8 *end, warp_uint32 type, WarpGser *g)
{
	const warp_uint8 *p = body;

	g->ncomps = g->nrings = g->npoints = 0;
	g->bbox[0] = g->bbox[1] = INFINITY;
	g->bbox[2] = g->bbox[3] = -INFINITY;
	if (type == WARP_GSER_POLYGONTYPE)
	{
		if (!scan_polygon(&p, end, g))
			return;
	}
	else
	{
		warp_uint32 ngeoms,
					i;

		if (end - p < 8)
			return;
		ngeoms = rd_u32(p + 4);
		if (ngeoms == 0 || ngeoms > (warp_uint32) ((end - p - 8) / 8))
			return;
		p += 8;
		for (i = 0; i < ngeoms; i++)
			if (!scan_polygon(&p, end, g))
				return;
	}
	g->body = body;
	g->end = end;
	g->mag = fmax(fmax(fabs(g->bbox[0]), fabs(g->bbox[2])),
				  fmax(fabs(g->bbox[1]), fabs(g->bbox[3])));
	g->kind = WARP_GSER_POLYS;
}

void
warp_gser_read(const warp_uint8 *data, size_t len, WarpGser *g)
{
	const warp_uint8 *end = data + len;
	const warp_uint8 *p;
	warp_uint8	flags;
	warp_int32	srid;
	warp_uint32 type;

	memset(g, 0, sizeof(*g));
	g->kind = WARP_GSER_OPAQUE;
	if (len < 4)
		return;
	srid = ((warp_int32) data[0] << 16) | ((warp_int32) data[1] << 8) | data[2];
	srid = (warp_int32) ((warp_uint32) srid << 11) >> 11;	/* 21-bit signed */
	g->srid = srid;
	flags = data[3];
	if (!(flags & G2_VERSION) || (flags & (G2_Z | G2_M | G2_GEODETIC)))
		return;
	p = data + 4;
	if (flags & G2_EXTENDED)
	{
		if (end - p < 8)
			return;
		p += 8;
	}
	if (flags & G2_BBOX)
	{
		float		b[4];

		if (end - p < 16)
			return;
		memcpy(b, p, 16);		/* xmin, xmax, ymin, ymax */
		g->fbox[0] = b[0];
		g->fbox[1] = b[2];
		g->fbox[2] = b[1];
		g->fbox[3] = b[3];
		g->has_fbox = true;
		p += 16;
	}
	if (end - p < 8)
		return;
	type = rd_u32(p);
	if (type == WARP_GSER_POINTTYPE)
	{
		if (rd_u32(p + 4) != 1 || end - p < 24)
			return;
		g->x = rd_f64(p + 8);
		g->y = rd_f64(p + 16);
		if (!plain_coord(g->x) || !plain_coord(g->y))
			return;
		g->bbox[0] = g->bbox[2] = g->x;
		g->bbox[1] = g->bbox[3] = g->y;
		g->mag = fmax(fabs(g->x), fabs(g->y));
		g->kind = WARP_GSER_POINT;
	}
	else if (type == WARP_GSER_POLYGONTYPE || type == WARP_GSER_MULTIPOLYGONTYPE)
		read_polys(p, end, type, g);
}

static const warp_uint8 *
copy_polygon(const warp_uint8 *p, warp_int32 *ring_pt, warp_int32 *ring, double *xy,
			 warp_int32 *pt)
{
	warp_uint32 nrings = rd_u32(p + 4),
				r;
	const warp_uint8 *counts = p + 8;
	const warp_uint8 *pts = counts + 4 * (size_t) nrings + ((nrings & 1) ? 4 : 0);

	for (r = 0; r < nrings; r++)
	{
		warp_uint32 n = rd_u32(counts + 4 * r);

		ring_pt[(*ring)++] = *pt;
		memcpy(xy + 2 * (size_t) *pt, pts, 16 * (size_t) n);
		*pt += (warp_int32) n;
		pts += 16 * (size_t) n;
	}
	return pts;
}

void
warp_gser_copy_polys(const WarpGser *g, warp_int32 *comp_ring, warp_int32 comp_base,
					 warp_int32 *ring_pt, warp_int32 ring_base, double *xy, warp_int32 pt_base)
{
	const warp_uint8 *p = g->body;
	warp_int32	ring = ring_base,
				pt = pt_base,
				c;

	if (rd_u32(p) == WARP_GSER_POLYGONTYPE)
	{
		comp_ring[comp_base] = ring;
		(void) copy_polygon(p, ring_pt, &ring, xy, &pt);
		return;
	}
	p += 8;
	for (c = 0; c < g->ncomps; c++)
	{
		comp_ring[comp_base + c] = ring;
		p = copy_polygon(p, ring_pt, &ring, xy, &pt);
	}
}

void
warp_gser_polys_fbox(const WarpGser *g, float *fbox)
{
	if (g->has_fbox)
	{
		memcpy(fbox, g->fbox, sizeof(g->fbox));
		return;
	}
	fbox[0] = warp_geom_float_down(g->bbox[0]);
	fbox[1] = warp_geom_float_down(g->bbox[1]);
	fbox[2] = warp_geom_float_up(g->bbox[2]);
	fbox[3] = warp_geom_float_up(g->bbox[3]);
}
