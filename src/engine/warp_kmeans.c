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
	bool		avx2;			/* the CPU has AVX2 and FMA */
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

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define KM_HAVE_AVX2 1

__attribute__((target("avx2,fma")))
static inline float
hsum8(__m256 v)
{
	__m128		s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));

	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
	return _mm_cvtss_f32(s);
}

/*
 * The nearest centroids of 4 points at once (p[0..3]): each centroid is
 * loaded once for the four dot products, 8 floats per FMA.  Search only
 * (float arithmetic, any order): what it decides is which list a sample
 * point trains.
 */
__attribute__((target("avx2,fma")))
static void
nearest4_avx2(const KMeansRun *r, const float *const p[4], int32_t best[4])
{
	int			dims = r->dims,
				tail = dims & ~7;
	double		bestd[4] = {INFINITY, INFINITY, INFINITY, INFINITY};

	/* as nearest_fast: centroid 0 when no distance is below infinity (NaN) */
	for (int q = 0; q < 4; q++)
		best[q] = 0;

	for (int j = 0; j < r->k; j++)
	{
		const float *c = r->c + (size_t) j * dims;
		__m256		a0 = _mm256_setzero_ps(),
					a1 = _mm256_setzero_ps(),
					a2 = _mm256_setzero_ps(),
					a3 = _mm256_setzero_ps();
		float		dot[4];

		for (int i = 0; i < tail; i += 8)
		{
			__m256		cv = _mm256_loadu_ps(c + i);

			a0 = _mm256_fmadd_ps(_mm256_loadu_ps(p[0] + i), cv, a0);
			a1 = _mm256_fmadd_ps(_mm256_loadu_ps(p[1] + i), cv, a1);
			a2 = _mm256_fmadd_ps(_mm256_loadu_ps(p[2] + i), cv, a2);
			a3 = _mm256_fmadd_ps(_mm256_loadu_ps(p[3] + i), cv, a3);
		}
		dot[0] = hsum8(a0);
		dot[1] = hsum8(a1);
		dot[2] = hsum8(a2);
		dot[3] = hsum8(a3);
		for (int i = tail; i < dims; i++)
			for (int q = 0; q < 4; q++)
				dot[q] += p[q][i] * c[i];
		for (int q = 0; q < 4; q++)
		{
			double		d = r->kind == WARP_VEC_L2 ? r->cnorm2[j] - 2.0 * dot[q] : -dot[q];

			if (d < bestd[q])
			{
				bestd[q] = d;
				best[q] = j;
			}
		}
	}
}
#endif

static void
run_init(KMeansRun *r, const float *x, int64_t n, int dims, int k, WarpVecKind kind,
		 const float *c, const double *cnorm2, int32_t *assign)
{
	r->x = x;
	r->n = n;
	r->dims = dims;
	r->k = k;
	r->kind = kind;
	r->c = c;
	r->cnorm2 = cnorm2;
	r->assign = assign;
	r->avx2 = false;
#ifdef KM_HAVE_AVX2
	__builtin_cpu_init();
	r->avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
}

static void
assign_task(void *arg, int task)
{
	KMeansRun  *r = (KMeansRun *) arg;
	int64_t		lo = (int64_t) task * KM_CHUNK,
				hi = lo + KM_CHUNK,
				i = lo;

	if (hi > r->n)
		hi = r->n;
#ifdef KM_HAVE_AVX2
	if (r->avx2)
		for (; i + 4 <= hi; i += 4)
		{
			const float *p[4];

			for (int q = 0; q < 4; q++)
				p[q] = r->x + (size_t) (i + q) * r->dims;
			nearest4_avx2(r, p, r->assign + i);
		}
#endif
	for (; i < hi; i++)
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
	run_init(&r, x, n, dims, k, kind, centroids, cnorm2, assign);
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
warp_kmeans_assign(const float *x, int64_t n, int dims, const float *centroids, int k,
				   WarpVecKind kind, int nthreads, bool (*interrupted) (void *iarg),
				   void *iarg, int32_t *out)
{
	KMeansRun	r;
	double	   *cnorm2 = malloc(sizeof(double) * (k > 0 ? k : 1));
	int			rc = 0;

	if (!cnorm2 || k < 1)
	{
		free(cnorm2);
		return -2;
	}
	for (int j = 0; j < k; j++)
		cnorm2[j] = warp_vec_cpu_dot(centroids + (size_t) j * dims,
									 centroids + (size_t) j * dims, dims);
	run_init(&r, x, n, dims, k, kind, centroids, cnorm2, out);
	if (warp_run_tasks(nthreads, (int) ((n + KM_CHUNK - 1) / KM_CHUNK), assign_task, &r,
					   interrupted, iarg) != 0)
		rc = -1;
	free(cnorm2);
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
