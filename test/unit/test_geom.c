/*
 * test_geom.c — the geometry layer (src/engine/warp_geom*.h): GSERIALIZED
 * decoding with every truncation, point-in-polygon classification on edges,
 * vertices and holes, distances at the threshold, PostGIS's float boxes,
 * and the grid against a scan of every item.
 */
#include <float.h>
#include <math.h>

#include "unit.h"
#include "warp_geom.h"
#include "warp_geom_gser.h"
#include "warp_geom_set.h"

typedef struct Buf
{
	uint8_t		b[4096];
	size_t		n;
} Buf;

static void
put(Buf *b, const void *p, size_t n)
{
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void
put_u32(Buf *b, uint32_t v)
{
	put(b, &v, 4);
}

static void
put_f64(Buf *b, double v)
{
	put(b, &v, 8);
}

/* header after the varlena header: srid (3 bytes), flags (version 2) */
static void
header(Buf *b, int32_t srid, uint8_t flags)
{
	uint8_t		h[4] = {(srid >> 16) & 0x1f, (srid >> 8) & 0xff, srid & 0xff, 0x40 | flags};

	b->n = 0;
	put(b, h, 4);
}

/* POLYGON((0 0,4 0,4 4,0 4,0 0),(1 1,1 2,2 2,2 1,1 1)) */
static void
square_with_hole(Buf *b, bool with_box)
{
	static const double sq[] = {0, 0, 4, 0, 4, 4, 0, 4, 0, 0};
	static const double hole[] = {1, 1, 1, 2, 2, 2, 2, 1, 1, 1};
	int			i;

	header(b, 0, with_box ? 0x04 : 0);
	if (with_box)
	{
		float		box[4] = {0, 4, 0, 4};

		put(b, box, 16);
	}
	put_u32(b, WARP_GSER_POLYGONTYPE);
	put_u32(b, 2);
	put_u32(b, 5);
	put_u32(b, 5);
	for (i = 0; i < 10; i++)
		put_f64(b, sq[i]);
	for (i = 0; i < 10; i++)
		put_f64(b, hole[i]);
}

/* a POINT value with the given flags, x, y (and a 0 for Z when flagged) */
static void
point_value(Buf *b, int32_t srid, uint8_t flags, double x, double y)
{
	header(b, srid, flags);
	put_u32(b, WARP_GSER_POINTTYPE);
	put_u32(b, 1);
	put_f64(b, x);
	put_f64(b, y);
	if (flags & 0x01)
		put_f64(b, 0);
}

TEST(test_read_point)
{
	Buf			b;
	WarpGser	g;

	point_value(&b, 4326, 0, 1.5, -2.25);
	warp_gser_read(b.b, b.n, &g);
	CHECK(g.kind == WARP_GSER_POINT);
	CHECK(g.srid == 4326);
	CHECK(g.x == 1.5 && g.y == -2.25);
	/* a negative SRID (21 bits, sign-extended) */
	point_value(&b, -3, 0, 0, 0);
	warp_gser_read(b.b, b.n, &g);
	CHECK(g.srid == -3);
	/* EMPTY, Z, NaN and huge coordinates are PostGIS's */
	header(&b, 0, 0);
	put_u32(&b, WARP_GSER_POINTTYPE);
	put_u32(&b, 0);
	warp_gser_read(b.b, b.n, &g);
	CHECK(g.kind == WARP_GSER_OPAQUE);
	point_value(&b, 0, 0x01, 0, 0);
	warp_gser_read(b.b, b.n, &g);
	CHECK(g.kind == WARP_GSER_OPAQUE);
	point_value(&b, 0, 0, NAN, 0);
	warp_gser_read(b.b, b.n, &g);
	CHECK(g.kind == WARP_GSER_OPAQUE);
	point_value(&b, 0, 0, 1e300, 0);
	warp_gser_read(b.b, b.n, &g);
	CHECK(g.kind == WARP_GSER_OPAQUE);
	/* version 1 (no version bit) */
	point_value(&b, 0, 0, 0, 0);
	b.b[3] = 0;
	warp_gser_read(b.b, b.n, &g);
	CHECK(g.kind == WARP_GSER_OPAQUE);
}

TEST(test_read_polygon_and_truncations)
{
	Buf			b;
	WarpGser	g;
	int			box;

	for (box = 0; box < 2; box++)
	{
		size_t		n;
		uint8_t    *copy;

		square_with_hole(&b, box);
		warp_gser_read(b.b, b.n, &g);
		CHECK(g.kind == WARP_GSER_POLYS);
		CHECK(g.ncomps == 1 && g.nrings == 2 && g.npoints == 10);
		CHECK(g.bbox[0] == 0 && g.bbox[1] == 0 && g.bbox[2] == 4 && g.bbox[3] == 4);
		CHECK(g.has_fbox == (box == 1));
		/* every shorter value is refused, read from an exact-size copy */
		for (n = 0; n < b.n; n++)
		{
			copy = malloc(n ? n : 1);
			memcpy(copy, b.b, n);
			warp_gser_read(copy, n, &g);
			CHECK(g.kind == WARP_GSER_OPAQUE);
			free(copy);
		}
	}
	/* an open ring and a ring of 3 points are PostGIS's */
	square_with_hole(&b, false);
	b.b[b.n - 1] ^= 0x01;
	warp_gser_read(b.b, b.n, &g);
	CHECK(g.kind == WARP_GSER_OPAQUE);
	/* a huge ring count */
	square_with_hole(&b, false);
	b.b[8] = 0xff;
	b.b[9] = 0xff;
	warp_gser_read(b.b, b.n, &g);
	CHECK(g.kind == WARP_GSER_OPAQUE);
}

static void *
unit_alloc(void *ctx, size_t n)
{
	return malloc(n);
}

static const WarpAlloc alloc = {unit_alloc, NULL};

static void
one_polygon_set(Buf *b, WarpGeomSet *s, double pad)
{
	WarpGser	g;

	warp_gser_read(b->b, b->n, &g);
	CHECK(warp_geom_set_create(s, &alloc, 1, g.ncomps, g.nrings, g.npoints));
	warp_geom_set_add(s, &g);
	CHECK(warp_geom_set_index(s, &alloc, pad));
}

static int
contains(WarpGeomSet *s, double x, double y)
{
	return warp_geom_set_test(s, 0, WARP_GEOM_OP_CONTAINS, x, y, 0);
}

TEST(test_point_in_polygon)
{
	Buf			b;
	WarpGeomSet s;

	square_with_hole(&b, false);
	one_polygon_set(&b, &s, 0);
	CHECK(contains(&s, 3, 3) == WARP_GEOM_IN);
	CHECK(contains(&s, 0.5, 3.5) == WARP_GEOM_IN);
	CHECK(contains(&s, 1.5, 1.5) == WARP_GEOM_OUT);	/* in the hole */
	CHECK(contains(&s, 5, 1) == WARP_GEOM_OUT);
	CHECK(contains(&s, -1e-300, 2) == WARP_GEOM_OUT);	/* outside the box */
	/* boundary: edges, vertices, the hole's edges and corners */
	CHECK(contains(&s, 2, 0) == WARP_GEOM_UNSURE);
	CHECK(contains(&s, 4, 4) == WARP_GEOM_UNSURE);
	CHECK(contains(&s, 0, 2) == WARP_GEOM_UNSURE);
	CHECK(contains(&s, 1, 1.5) == WARP_GEOM_UNSURE);
	CHECK(contains(&s, 2, 2) == WARP_GEOM_UNSURE);
	/*
	 * one ulp beside an axis-parallel edge: the determinant's terms are
	 * exact, so the side is certain (PostGIS computes the same terms)
	 */
	CHECK(contains(&s, 3, nextafter(4.0, 0.0)) == WARP_GEOM_IN);
	CHECK(contains(&s, nextafter(1.0, 2.0), 1.5) == WARP_GEOM_OUT);
	/* on a slanted edge up to rounding (2/3 is not a double): PostGIS decides */
	{
		static const double tri[] = {3, 0, 0, 1, 0, 0, 3, 0};

		CHECK(warp_geom_ring_pip(tri, 4, 1.0, 2.0 / 3.0) == WARP_GEOM_UNSURE);
		CHECK(warp_geom_ring_pip(tri, 4, 1.0, 2.0 / 3.0 - 1e-9) == WARP_GEOM_IN);
		CHECK(warp_geom_ring_pip(tri, 4, 1.0, 2.0 / 3.0 + 1e-9) == WARP_GEOM_OUT);
	}
	/* far enough from it: decided */
	CHECK(contains(&s, 3, 4 - 1e-9) == WARP_GEOM_IN);
	/* the ray through a vertex's height (y of the hole's corners) */
	CHECK(contains(&s, 0.5, 1) == WARP_GEOM_IN);
	CHECK(contains(&s, 3, 2) == WARP_GEOM_IN);
	/* the float box of && */
	CHECK(warp_geom_set_test(&s, 0, WARP_GEOM_OP_OVERLAPS, 4 + 1e-9, 2, 0) == WARP_GEOM_IN);
	CHECK(warp_geom_set_test(&s, 0, WARP_GEOM_OP_OVERLAPS, 4 + 1e-5, 2, 0) == WARP_GEOM_OUT);
}

TEST(test_float_box_rounding)
{
	int			i;

	for (i = 0; i < 100000; i++)
	{
		double		d = ((double) (int64_t) unit_rnd() / 9.2e18) * pow(10, (int) (unit_rnd() % 60) - 30);
		float		lo = warp_geom_float_down(d),
					hi = warp_geom_float_up(d);

		CHECK((double) lo <= d && (double) hi >= d);
		CHECK((double) nextafterf(lo, FLT_MAX) > d || (double) lo == d);
		CHECK((double) nextafterf(hi, -FLT_MAX) < d || (double) hi == d);
	}
	CHECK(warp_geom_float_up(1e300) == FLT_MAX);
	CHECK(warp_geom_float_down(-1e300) == -FLT_MAX);
}

TEST(test_dwithin_threshold)
{
	Buf			b;
	WarpGeomSet s;

	/* 3-4-5: the distance is exactly the radius */
	CHECK(warp_geom_pt_dwithin(0, 0, 3, 4, 5) == WARP_GEOM_UNSURE);
	CHECK(warp_geom_pt_dwithin(0, 0, 3, 4, 5.001) == WARP_GEOM_IN);
	CHECK(warp_geom_pt_dwithin(0, 0, 3, 4, 4.999) == WARP_GEOM_OUT);
	square_with_hole(&b, false);
	one_polygon_set(&b, &s, 1.0);
	CHECK(warp_geom_set_test(&s, 0, WARP_GEOM_OP_DWITHIN, 5, 2, 1.0) == WARP_GEOM_UNSURE);
	CHECK(warp_geom_set_test(&s, 0, WARP_GEOM_OP_DWITHIN, 4.5, 2, 1.0) == WARP_GEOM_IN);
	CHECK(warp_geom_set_test(&s, 0, WARP_GEOM_OP_DWITHIN, 5.5, 2, 1.0) == WARP_GEOM_OUT);
	/* in the hole: the distance to the hole's ring */
	CHECK(warp_geom_set_test(&s, 0, WARP_GEOM_OP_DWITHIN, 1.5, 1.5, 0.4) == WARP_GEOM_OUT);
	CHECK(warp_geom_set_test(&s, 0, WARP_GEOM_OP_DWITHIN, 1.5, 1.5, 0.6) == WARP_GEOM_IN);
	CHECK(warp_geom_set_test(&s, 0, WARP_GEOM_OP_DWITHIN, 3, 3, 0) == WARP_GEOM_IN);
}

/* the grid finds every item a scan of all items finds */
TEST(test_grid_matches_scan)
{
	enum {N = 300};
	static Buf	bufs[N];
	WarpGser	g[N];
	WarpGeomSet s;
	int			i,
				k;
	int32_t		nc = 0,
				nr = 0,
				np = 0;

	for (i = 0; i < N; i++)
	{
		double		x = (double) (unit_rnd() % 1000) / 10,
					y = (double) (unit_rnd() % 1000) / 10,
					w = 0.5 + (double) (unit_rnd() % 100) / 10;
		double		ring[10] = {x, y, x + w, y, x + w, y + w, x, y + w, x, y};

		header(&bufs[i], 0, 0);
		put_u32(&bufs[i], WARP_GSER_POLYGONTYPE);
		put_u32(&bufs[i], 1);
		put_u32(&bufs[i], 5);
		put_u32(&bufs[i], 0);
		for (k = 0; k < 10; k++)
			put_f64(&bufs[i], ring[k]);
		warp_gser_read(bufs[i].b, bufs[i].n, &g[i]);
		CHECK(g[i].kind == WARP_GSER_POLYS);
		nc += g[i].ncomps;
		nr += g[i].nrings;
		np += g[i].npoints;
	}
	CHECK(warp_geom_set_create(&s, &alloc, N, nc, nr, np));
	for (i = 0; i < N; i++)
		warp_geom_set_add(&s, &g[i]);
	CHECK(warp_geom_set_index(&s, &alloc, 0.75));
	for (k = 0; k < 20000; k++)
	{
		double		x = (double) (unit_rnd() % 120000) / 1000 - 10,
					y = (double) (unit_rnd() % 120000) / 1000 - 10;
		int			op;

		for (op = WARP_GEOM_OP_CONTAINS; op <= WARP_GEOM_OP_OVERLAPS; op++)
		{
			int32_t		st,
						en,
						j;
			int			found[N] = {0};

			warp_geom_set_cell(&s, x, y, &st, &en);
			for (j = st; j < en; j++)
				found[s.cell_items[j]] = 1;
			for (i = 0; i < N; i++)
				if (!found[i])
					CHECK(warp_geom_set_test(&s, i, op, x, y, 0.75) == WARP_GEOM_OUT);
		}
	}
}

int
main(void)
{
	RUN(test_read_point);
	RUN(test_read_polygon_and_truncations);
	RUN(test_point_in_polygon);
	RUN(test_float_box_rounding);
	RUN(test_dwithin_threshold);
	RUN(test_grid_matches_scan);
	UNIT_EXIT();
}
