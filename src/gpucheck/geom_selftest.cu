/*
 * geom_selftest.cu — the spatial probe (src/engine/warp_geom.h,
 * warp_geom_set.h) as a GPU kernel, checked against the host and timed.
 *
 *   geom_selftest [POINTS [POLYGONS]]      (default 10000000 x 1000)
 *
 * Synthetic data: a jittered G x G tessellation of [0, 100]^2 (neighbours
 * share their jittered corners, so edges run at arbitrary angles and every
 * point of the square is in one cell or on an edge), every 5th cell with a
 * hole, every 7th a multipolygon (plus a small island square); points two
 * thirds clustered, one third uniform, and every 50th placed exactly on a
 * cell corner or an edge midpoint (within rounding distance of an edge, so
 * the filter must answer unsure there).
 *
 * The build side is indexed by warp_geom_set_index (the engine's own grid)
 * on the host and copied to the device; one thread per point looks up its
 * cell and runs warp_geom_set_test against each item there, for
 * ST_Contains (interior), ST_Covers (interior or boundary) and ST_DWithin
 * (radius 0.5).  Per point it records the number of IN items, the first
 * one, and the number of UNSURE ones (the pairs PostGIS's own function
 * decides in the backend); the host computes the same for every point and
 * the arrays must be identical.  Output: PASS/FAIL per predicate with the
 * kernel time (points already on the device: the column cache's case) and
 * the counts; exit 1 on a mismatch, 2 if no GPU could be used.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <vector>
#include <cuda_runtime.h>

extern "C"
{
#include "engine/warp_geom_set.h"
}

struct PointResult
{
	int			nin;
	int			first_in;
	int			nunsure;
};

__host__ __device__ static PointResult
probe_point(const WarpGeomSet &s, WarpGeomOp op, double x, double y, double r)
{
	PointResult pr = {0, -1, 0};
	warp_int32	start,
				end;

	warp_geom_set_cell(&s, x, y, &start, &end);
	for (warp_int32 k = start; k < end; k++)
	{
		warp_int32	item = s.cell_items[k];
		int			res = warp_geom_set_test(&s, item, op, x, y, r);

		if (res == WARP_GEOM_IN)
		{
			if (pr.nin++ == 0)
				pr.first_in = item;
		}
		else if (res == WARP_GEOM_UNSURE)
			pr.nunsure++;
	}
	return pr;
}

__global__ static void
probe_kernel(WarpGeomSet s, WarpGeomOp op, const double *xy, long long n, double r,
			 PointResult *out)
{
	long long	i = (long long) blockIdx.x * blockDim.x + threadIdx.x;

	for (; i < n; i += (long long) gridDim.x * blockDim.x)
		out[i] = probe_point(s, op, xy[2 * i], xy[2 * i + 1], r);
}

/* ------------------------------------------------------------ the data */

static unsigned long long rng_state = 0x35;

static double
urand(void)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double) (rng_state >> 11) * (1.0 / 9007199254740992.0);
}

static void *
host_alloc(void *ctx, size_t size)
{
	return malloc(size);
}

/* the tessellation as a WarpGeomSet (items filled directly, then indexed) */
static void
build_set(WarpGeomSet *s, int g, std::vector<double> &corner)
{
	int			ncells = g * g;
	int			nholes = 0,
				nislands = 0;
	WarpAlloc	alloc = {host_alloc, NULL};
	double		step = 100.0 / g;

	corner.resize(2 * (g + 1) * (g + 1));
	for (int j = 0; j <= g; j++)
		for (int i = 0; i <= g; i++)
		{
			bool		border_x = i == 0 || i == g,
						border_y = j == 0 || j == g;

			corner[2 * (j * (g + 1) + i)] = i * step + (border_x ? 0 : (urand() - 0.5) * step * 0.6);
			corner[2 * (j * (g + 1) + i) + 1] = j * step + (border_y ? 0 : (urand() - 0.5) * step * 0.6);
		}
	for (int c = 0; c < ncells; c++)
	{
		nholes += c % 5 == 0;
		nislands += c % 7 == 0;
	}
	if (!warp_geom_set_create(s, &alloc, ncells, ncells + nislands, ncells + nholes + nislands,
							  5 * (ncells + nholes + nislands)))
	{
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	for (int c = 0; c < ncells; c++)
	{
		int			i = c % g,
					j = c / g;
		int			idx[4] = {j * (g + 1) + i, j * (g + 1) + i + 1, (j + 1) * (g + 1) + i + 1,
		(j + 1) * (g + 1) + i};
		double	   *xy = (double *) s->polys.xy;
		warp_int32 *ring_pt = (warp_int32 *) s->polys.ring_pt;
		warp_int32 *comp_ring = (warp_int32 *) s->polys.comp_ring;
		double		b[4] = {INFINITY, INFINITY, -INFINITY, -INFINITY};
		double		cx = 0,
					cy = 0;

		s->kind[c] = WARP_GSER_POLYS;
		s->srid[c] = 4326;
		s->item_comp[c] = s->next_comp;
		comp_ring[s->next_comp++] = s->next_ring;
		ring_pt[s->next_ring++] = s->next_pt;
		for (int k = 0; k <= 4; k++)
		{
			double		x = corner[2 * idx[k % 4]],
						y = corner[2 * idx[k % 4] + 1];

			xy[2 * s->next_pt] = x;
			xy[2 * s->next_pt + 1] = y;
			s->next_pt++;
			b[0] = fmin(b[0], x);
			b[1] = fmin(b[1], y);
			b[2] = fmax(b[2], x);
			b[3] = fmax(b[3], y);
			if (k < 4)
			{
				cx += x / 4;
				cy += y / 4;
			}
		}
		if (c % 5 == 0)			/* a hole: a small square round the centre */
		{
			double		h = step * 0.15;
			double		hx[5] = {cx - h, cx - h, cx + h, cx + h, cx - h};
			double		hy[5] = {cy - h, cy + h, cy + h, cy - h, cy - h};

			ring_pt[s->next_ring++] = s->next_pt;
			for (int k = 0; k < 5; k++, s->next_pt++)
			{
				xy[2 * s->next_pt] = hx[k];
				xy[2 * s->next_pt + 1] = hy[k];
			}
		}
		if (c % 7 == 0)			/* an island beyond the square's top right */
		{
			double		ox = 100.5 + (c % 13),
						oy = 100.5 + (c % 11);
			double		ix[5] = {ox, ox + 0.4, ox + 0.4, ox, ox};
			double		iy[5] = {oy, oy, oy + 0.4, oy + 0.4, oy};

			comp_ring[s->next_comp++] = s->next_ring;
			ring_pt[s->next_ring++] = s->next_pt;
			for (int k = 0; k < 5; k++, s->next_pt++)
			{
				xy[2 * s->next_pt] = ix[k];
				xy[2 * s->next_pt + 1] = iy[k];
			}
			b[2] = fmax(b[2], ox + 0.4);
			b[3] = fmax(b[3], oy + 0.4);
		}
		memcpy(s->bbox + 4 * c, b, sizeof(b));
		s->mag[c] = fmax(fmax(fabs(b[0]), fabs(b[2])), fmax(fabs(b[1]), fabs(b[3])));
		s->fbox[4 * c] = warp_geom_float_down(b[0]);
		s->fbox[4 * c + 1] = warp_geom_float_down(b[1]);
		s->fbox[4 * c + 2] = warp_geom_float_up(b[2]);
		s->fbox[4 * c + 3] = warp_geom_float_up(b[3]);
		s->item_comp[c + 1] = s->next_comp;
		comp_ring[s->next_comp] = s->next_ring;
		ring_pt[s->next_ring] = s->next_pt;
		s->next_item++;
	}
}

static void
make_points(std::vector<double> &xy, long long n, int g, const std::vector<double> &corner)
{
	xy.resize(2 * n);
	for (long long i = 0; i < n; i++)
	{
		double		x,
					y;

		if (i % 50 == 0)
		{
			/* a corner, or the midpoint of a cell's bottom edge */
			int			ci = (int) (urand() * g),
						cj = (int) (urand() * g);
			int			a = cj * (g + 1) + ci;

			x = corner[2 * a];
			y = corner[2 * a + 1];
			if (i % 100 == 0)
			{
				x = (x + corner[2 * (a + 1)]) / 2;
				y = (y + corner[2 * (a + 1) + 1]) / 2;
			}
		}
		else if (i % 3 == 0)
		{
			x = urand() * 100;
			y = urand() * 100;
		}
		else
		{
			double		cx = 10 + (double) ((i * 7919) % 40) * 2.0,
						cy = 10 + (double) ((i * 104729) % 37) * 2.1;
			double		rr = sqrt(-2 * log(1 - urand())) * 3,
						t = 2 * M_PI * urand();

			x = cx + rr * cos(t);
			y = cy + rr * sin(t);
		}
		xy[2 * i] = x;
		xy[2 * i + 1] = y;
	}
}

/* ------------------------------------------------------- device copies */

#define CUDA_OK(call) \
	do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
		fprintf(stderr, "CUDA: %s: %s\n", #call, cudaGetErrorString(e_)); exit(2); } } while (0)

template <typename T>
static T *
to_device(const T *host, size_t n)
{
	T		   *d;

	CUDA_OK(cudaMalloc((void **) &d, (n ? n : 1) * sizeof(T)));
	if (n)
		CUDA_OK(cudaMemcpy(d, host, n * sizeof(T), cudaMemcpyHostToDevice));
	return d;
}

static WarpGeomSet
set_to_device(const WarpGeomSet &h)
{
	WarpGeomSet d = h;
	int			ncells = h.gnx * h.gny;

	d.kind = to_device(h.kind, h.nitems);
	d.srid = to_device(h.srid, h.nitems);
	d.bbox = to_device(h.bbox, 4 * (size_t) h.nitems);
	d.fbox = to_device(h.fbox, 4 * (size_t) h.nitems);
	d.mag = to_device(h.mag, h.nitems);
	d.item_comp = to_device(h.item_comp, (size_t) h.nitems + 1);
	d.polys.comp_ring = to_device(h.polys.comp_ring, (size_t) h.ncomps + 1);
	d.polys.ring_pt = to_device(h.polys.ring_pt, (size_t) h.nrings + 1);
	d.polys.xy = to_device(h.polys.xy, 2 * (size_t) h.npoints);
	d.cell_start = to_device(h.cell_start, (size_t) ncells + 1);
	d.cell_items = to_device(h.cell_items, (size_t) h.cell_start[ncells]);
	d.always = NULL;
	return d;
}

int
main(int argc, char **argv)
{
	long long	npoints = argc > 1 ? atoll(argv[1]) : 10000000;
	int			npolys = argc > 2 ? atoi(argv[2]) : 1000;
	int			g = (int) ceil(sqrt((double) npolys));
	std::vector<double> corner,
				xy;
	WarpGeomSet hs;
	WarpAlloc	alloc = {host_alloc, NULL};
	int			ndev = 0,
				failures = 0;
	struct
	{
		const char *name;
		WarpGeomOp	op;
		double		r;
	}			preds[] = {
		{"ST_Contains", WARP_GEOM_OP_CONTAINS, 0},
		{"ST_Covers", WARP_GEOM_OP_COVERS, 0},
		{"ST_DWithin(0.5)", WARP_GEOM_OP_DWITHIN, 0.5},
	};

	if (npoints < 1 || npolys < 1)
	{
		fprintf(stderr, "usage: geom_selftest [POINTS [POLYGONS]]\n");
		return 2;
	}
	build_set(&hs, g, corner);
	make_points(xy, npoints, g, corner);
	printf("data (synthetic): %lld points x %d polygons (%d x %d jittered cells)\n",
		   npoints, g * g, g, g);
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0)
	{
		/* the host side alone, so that the data and the grid are exercised */
		for (size_t p = 0; p < sizeof(preds) / sizeof(preds[0]); p++)
		{
			WarpGeomSet hp = hs;
			long long	in = 0,
						unsure = 0;

			if (!warp_geom_set_index(&hp, &alloc, preds[p].r))
				return 2;
			for (long long i = 0; i < npoints; i++)
			{
				PointResult w = probe_point(hp, preds[p].op, xy[2 * i], xy[2 * i + 1],
											preds[p].r);

				in += w.nin;
				unsure += w.nunsure;
			}
			printf("host only: %s: %lld pairs in, %lld pairs unsure\n", preds[p].name, in,
				   unsure);
		}
		fprintf(stderr, "no GPU: the device side was not run\n");
		return 2;
	}
	for (size_t p = 0; p < sizeof(preds) / sizeof(preds[0]); p++)
	{
		WarpGeomSet hp = hs,
					ds;
		double	   *dxy;
		PointResult *dout;
		std::vector<PointResult> got(npoints);
		cudaEvent_t e0,
					e1;
		float		ms = 0;
		long long	bad = 0,
					in = 0,
					unsure = 0;

		if (!warp_geom_set_index(&hp, &alloc, preds[p].r))
		{
			fprintf(stderr, "grid too large\n");
			return 2;
		}
		ds = set_to_device(hp);
		dxy = to_device(xy.data(), xy.size());
		CUDA_OK(cudaMalloc((void **) &dout, npoints * sizeof(PointResult)));
		CUDA_OK(cudaEventCreate(&e0));
		CUDA_OK(cudaEventCreate(&e1));
		probe_kernel<<<1024, 256>>>(ds, preds[p].op, dxy, npoints, preds[p].r, dout);
		CUDA_OK(cudaGetLastError());
		CUDA_OK(cudaEventRecord(e0));
		probe_kernel<<<(int) ((npoints + 255) / 256 < 65535 * 16 ? (npoints + 255) / 256 : 65535 * 16),
			256>>>(ds, preds[p].op, dxy, npoints, preds[p].r, dout);
		CUDA_OK(cudaEventRecord(e1));
		CUDA_OK(cudaEventSynchronize(e1));
		CUDA_OK(cudaGetLastError());
		CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
		CUDA_OK(cudaMemcpy(got.data(), dout, npoints * sizeof(PointResult),
						   cudaMemcpyDeviceToHost));
		for (long long i = 0; i < npoints; i++)
		{
			PointResult w = probe_point(hp, preds[p].op, xy[2 * i], xy[2 * i + 1], preds[p].r);

			if (w.nin != got[i].nin || w.first_in != got[i].first_in ||
				w.nunsure != got[i].nunsure)
			{
				if (bad++ < 5)
					fprintf(stderr, "  point %lld (%.17g, %.17g): host %d/%d/%d device %d/%d/%d\n",
							i, xy[2 * i], xy[2 * i + 1], w.nin, w.first_in, w.nunsure,
							got[i].nin, got[i].first_in, got[i].nunsure);
			}
			in += w.nin;
			unsure += w.nunsure;
		}
		printf("%s: %s %s: kernel %.3f ms (%.1f M points/s, points resident); "
			   "%lld pairs in, %lld pairs unsure (to PostGIS)\n",
			   bad ? "FAIL" : "PASS", preds[p].name, bad ? "differs from the host" : "equals the host",
			   ms, npoints / (ms * 1e3), in, unsure);
		failures += bad != 0;
		cudaFree(dxy);
		cudaFree(dout);
	}
	return failures ? 1 : 0;
}
