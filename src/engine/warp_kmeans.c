/*
 * warp_kmeans.c — k-means for warp_ivf (see warp_kmeans.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "warp_kmeans.h"
#include "warp_threads.h"
#include "warp_vector_cpu.h"

#define KM_CHUNK 2048			/* points per task */

typedef struct KMeansRun
{
	const float *x;
	int64_t		n;
	int			dims;
	int			k;
	WarpVecKind kind;
	const float *c;				/* current centroids */
	const double *cnorm2;		/* |c|^2 */
	int32_t    *assign;			/* n */
} KMeansRun;

/* a float dot product the compiler vectorises (search only, not semantics) */
static inline float
dotf(const float *a, const float *b, int n)
{
	float		s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
	int			i,
				l;

	for (i = 0; i + 8 <= n; i += 8)
		for (l = 0; l < 8; l++)
			s[l] += a[i + l] * b[i + l];
	for (; i < n; i++)
		s[0] += a[i] * b[i];
	return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/* nearest centroid by the search metric: L2 via |c|^2 - 2 x.c, IP and
 * unit-vector cosine via the largest dot product */
static int
nearest_fast(const KMeansRun *r, const float *v)
{
	int			best = 0,
				j;
	double		bestd = INFINITY;

	for (j = 0; j < r->k; j++)
	{
		double		d = dotf(v, r->c + (size_t) j * r->dims, r->dims);

		d = r->kind == WARP_VEC_L2 ? r->cnorm2[j] - 2.0 * d : -d;
		if (d < bestd)
		{
			bestd = d;
			best = j;
		}
	}
	return best;
}

static void
assign_task(void *arg, int task)
{
	KMeansRun  *r = (KMeansRun *) arg;
	int64_t		lo = (int64_t) task * KM_CHUNK,
				hi = lo + KM_CHUNK,
				i;

	if (hi > r->n)
		hi = r->n;
	for (i = lo; i < hi; i++)
		r->assign[i] = nearest_fast(r, r->x + (size_t) i * r->dims);
}

static void
normalise(float *v, int dims)
{
	double		nn = sqrt(warp_vec_norm_squared(v, dims));
	int			d;

	if (nn > 0)
		for (d = 0; d < dims; d++)
			v[d] = (float) (v[d] / nn);
}

/* a tiny deterministic generator (xorshift64*) */
static uint64_t
next_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

/* k distinct samples as the first centroids (partial Fisher-Yates) */
static int
init_centroids(const float *x, int64_t n, int dims, int k, uint64_t *rng, float *c)
{
	int64_t    *idx = malloc(sizeof(int64_t) * n);
	int64_t		i;

	if (!idx)
		return -2;
	for (i = 0; i < n; i++)
		idx[i] = i;
	for (i = 0; i < k; i++)
	{
		int64_t		j = i + (int64_t) (next_rand(rng) % (uint64_t) (n - i));
		int64_t		t = idx[i];

		idx[i] = idx[j];
		idx[j] = t;
		memcpy(c + (size_t) i * dims, x + (size_t) idx[i] * dims, sizeof(float) * dims);
	}
	free(idx);
	return 0;
}

/* new centroids as means of their points; empty ones split the largest */
static void
update_centroids(KMeansRun *r, float *c, double *sum, int64_t *count, uint64_t *rng)
{
	int			dims = r->dims,
				j,
				d;
	int64_t		i;

	memset(sum, 0, sizeof(double) * (size_t) r->k * dims);
	memset(count, 0, sizeof(int64_t) * r->k);
	for (i = 0; i < r->n; i++)
	{
		const float *v = r->x + (size_t) i * dims;
		double	   *s = sum + (size_t) r->assign[i] * dims;

		count[r->assign[i]]++;
		for (d = 0; d < dims; d++)
			s[d] += v[d];
	}
	for (j = 0; j < r->k; j++)
		if (count[j] > 0)
			for (d = 0; d < dims; d++)
				c[(size_t) j * dims + d] = (float) (sum[(size_t) j * dims + d] / count[j]);
	for (j = 0; j < r->k; j++)
	{
		int			big = 0,
					b;

		if (count[j] > 0)
			continue;
		for (b = 1; b < r->k; b++)
			if (count[b] > count[big])
				big = b;
		if (count[big] < 2)
			break;
		/* j takes a slightly moved copy of the largest; both get half */
		for (d = 0; d < dims; d++)
		{
			float		v = c[(size_t) big * dims + d];
			float		eps = (float) ((next_rand(rng) % 2001) / 1000.0 - 1.0) * 1e-4f;

			c[(size_t) j * dims + d] = v * (1 + eps) + eps * 1e-3f;
			c[(size_t) big * dims + d] = v * (1 - eps) - eps * 1e-3f;
		}
		count[j] = count[big] / 2;
		count[big] -= count[j];
	}
	if (r->kind == WARP_VEC_COSINE)
		for (j = 0; j < r->k; j++)
			normalise(c + (size_t) j * dims, dims);
}

int
warp_kmeans(const float *x, int64_t n, int dims, int k, WarpVecKind kind,
			int iterations, int nthreads, uint64_t seed,
			bool (*interrupted) (void *iarg), void *iarg, float *centroids)
{
	KMeansRun	r;
	double	   *cnorm2 = malloc(sizeof(double) * k);
	double	   *sum = malloc(sizeof(double) * (size_t) k * dims);
	int64_t    *count = malloc(sizeof(int64_t) * k);
	int32_t    *assign = malloc(sizeof(int32_t) * (n > 0 ? n : 1));
	uint64_t	rng = seed | 1;
	int			rc = 0,
				it,
				j;
	int			ntasks = (int) ((n + KM_CHUNK - 1) / KM_CHUNK);

	if (!cnorm2 || !sum || !count || !assign || k < 1 || n < k)
		rc = -2;
	if (rc == 0)
		rc = init_centroids(x, n, dims, k, &rng, centroids);
	r.x = x;
	r.n = n;
	r.dims = dims;
	r.k = k;
	r.kind = kind;
	r.c = centroids;
	r.cnorm2 = cnorm2;
	r.assign = assign;
	for (it = 0; rc == 0 && it < iterations; it++)
	{
		for (j = 0; j < k; j++)
			cnorm2[j] = warp_vec_norm_squared(centroids + (size_t) j * dims, dims);
		if (warp_run_tasks(nthreads, ntasks, assign_task, &r, interrupted, iarg) != 0)
		{
			rc = -1;
			break;
		}
		update_centroids(&r, centroids, sum, count, &rng);
	}
	free(cnorm2);
	free(sum);
	free(count);
	free(assign);
	return rc;
}

int
warp_kmeans_nearest(const float *centroids, const double *cnorm2, int k, int dims,
					WarpVecKind kind, const float *v)
{
	int			best = 0,
				j;
	double		bestd = INFINITY;
	double		vn = kind == WARP_VEC_COSINE ? warp_vec_norm_squared(v, dims) : -1.0;

	for (j = 0; j < k; j++)
	{
		const float *c = centroids + (size_t) j * dims;
		double		d;

		if (kind == WARP_VEC_COSINE)
			d = warp_vec_cosine_from(warp_vec_cpu_dot(v, c, dims), vn,
									 cnorm2 ? cnorm2[j] : warp_vec_norm_squared(c, dims));
		else
			d = warp_vec_cpu_distance(kind, v, c, dims, -1.0);
		if (d < bestd)
		{
			bestd = d;
			best = j;
		}
	}
	return best;
}
