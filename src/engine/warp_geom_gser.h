/*-------------------------------------------------------------------------
 *
 * warp_geom_gser.h
 *	  Reading PostGIS geometry values (the GSERIALIZED version 2 layout of
 *	  PostGIS 3) without PostGIS: points, polygons and multipolygons.
 *
 * The layout, after the 4-byte varlena header: srid (3 bytes, 21-bit
 * signed), flags (1 byte: Z 0x01, M 0x02, BBOX 0x04, GEODETIC 0x08,
 * EXTENDED 0x10, version 0x40), an optional 8-byte extended flags word, an
 * optional float4 box (xmin, xmax, ymin, ymax[, z..., m...]), then the body:
 * uint32 type and count in native order, and doubles.  A polygon's body is
 * type, nrings, nrings point counts, 4 bytes of padding when nrings is odd,
 * then the rings' points; a multipolygon's is type, ngeoms, then each
 * polygon's body.
 *
 * warp_gser_read classifies a value: a plain point, a plain polygon or
 * multipolygon (2-D, non-empty, every ring closed with at least 4 points,
 * finite coordinates of magnitude below 1e38), or OPAQUE: anything else
 * (version 1, Z or M, geography, empty, other types, non-finite or huge
 * coordinates, a truncated value).  Opaque values are PostGIS's to judge.
 * Every length and count is checked against the value's size.
 *
 * Pure C; no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_GEOM_GSER_H
#define WARP_GEOM_GSER_H

#include "warp_defs.h"

#define WARP_GSER_OPAQUE	0
#define WARP_GSER_POINT		1
#define WARP_GSER_POLYS		2

/* PostGIS type numbers */
#define WARP_GSER_POINTTYPE			1
#define WARP_GSER_POLYGONTYPE		3
#define WARP_GSER_MULTIPOLYGONTYPE	6

typedef struct WarpGser
{
	int			kind;			/* WARP_GSER_* */
	warp_int32	srid;			/* 0 = unknown */
	bool		has_fbox;		/* a stored float box (fbox valid) */
	float		fbox[4];		/* xmin, ymin, xmax, ymax */
	/* kind POINT */
	double		x,
				y;
	/* kind POLYS */
	warp_int32	ncomps;
	warp_int32	nrings;
	warp_int32	npoints;
	double		bbox[4];		/* exact: xmin, ymin, xmax, ymax */
	double		mag;			/* largest |coordinate| */
	const warp_uint8 *body;		/* the type word of the body */
	const warp_uint8 *end;
} WarpGser;

/*
 * data/len: the value after its varlena header.  Always fills g->kind; the
 * srid is valid whenever the header could be read (len >= 4).
 */
extern void warp_gser_read(const warp_uint8 *data, size_t len, WarpGser *g);

/*
 * Appends a POLYS value: components to comp_ring[comp_base...], rings to
 * ring_pt[ring_base...], points to xy[2*pt_base...].  The caller sized the
 * arrays from ncomps/nrings/npoints, and writes the closing entries.
 */
extern void warp_gser_copy_polys(const WarpGser *g, warp_int32 *comp_ring, warp_int32 comp_base,
								 warp_int32 *ring_pt, warp_int32 ring_base, double *xy,
								 warp_int32 pt_base);

/* the float box of a POLYS value: the stored one, else PostGIS's rounding */
extern void warp_gser_polys_fbox(const WarpGser *g, float *fbox);

#endif							/* WARP_GEOM_GSER_H */
