/*
 * test_vector.c — vector distances (src/engine/warp_vector.h), the k-NN
 * top-k ordering (warp_vec_topk.h) and k-means (warp_kmeans.c).
 *
 * Distances against a long-double reference (any summation order agrees
 * with it to a few ulps) and bit-for-bit against a scalar loop written in
 * the definition's order (lane i mod 8, pairwise total); pgvector's
 * documented special cases; the top-k against a stable sort of every row
 * by (distance, position) with NULL and NaN distances; k-means separating
 * well-separated clusters exactly and honouring interrupts; the vectorised
 * CPU loops (warp_vector_cpu.c) bit-for-bit against the scalar definition.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "unit.h"
#include "warp_kmeans.h"
#include "warp_vec_topk.h"
#include "warp_vector.h"
#include "warp_vector_cpu.h"

static float
rnd_float(double scale)
{
	return (float) (((double) (unit_rnd() % 2000001) / 1000000.0 - 1.0) * scale);
}

/* the definition's order, written independently: lane sums, then pairs */
static double
defined_l2sq(const float *a, const float *b, int n)
{
	double		lane[8] = {0};

	for (int i = 0; i < n; i++)
	{
		double		d = (double) a[i] - (double) b[i];

		lane[i % 8] += d * d;
	}
	return ((lane[0] + lane[1]) + (lane[2] + lane[3])) +
		((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

TEST(distances_match_the_definition)
{
	float		a[1537],
				b[1537];
	int			sizes[] = {1, 2, 7, 8, 9, 15, 16, 17, 100, 768, 1536, 1537};

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
	{
		int			n = sizes[s];
		long double l2 = 0,
					dot = 0,
					na = 0,
					nb = 0;

		for (int i = 0; i < n; i++)
		{
			a[i] = rnd_float(10);
			b[i] = rnd_float(10);
			l2 += ((long double) a[i] - b[i]) * ((long double) a[i] - b[i]);
			dot += (long double) a[i] * b[i];
			na += (long double) a[i] * a[i];
			nb += (long double) b[i] * b[i];
		}
		CHECK(warp_vec_l2_squared(a, b, n) == defined_l2sq(a, b, n));
		CHECK(fabsl(warp_vec_distance(WARP_VEC_L2, a, b, n, -1) - sqrtl(l2)) <= 1e-12L * sqrtl(l2));
		CHECK(fabsl(warp_vec_distance(WARP_VEC_NEG_IP, a, b, n, -1) + dot) <=
			  1e-12L * sqrtl(na * nb));
		CHECK(fabsl(warp_vec_distance(WARP_VEC_COSINE, a, b, n, -1) -
					(1 - dot / sqrtl(na * nb))) <= 1e-12L);
		/* symmetric, and the precomputed norm gives the same bits */
		CHECK(warp_vec_distance(WARP_VEC_COSINE, a, b, n, -1) ==
			  warp_vec_distance(WARP_VEC_COSINE, b, a, n, -1));
		CHECK(warp_vec_distance(WARP_VEC_COSINE, a, b, n, warp_vec_norm_squared(b, n)) ==
			  warp_vec_distance(WARP_VEC_COSINE, a, b, n, -1));
	}
}

/* bit-equal doubles (NaN payloads aside: both NaN counts as equal) */
static bool
same_bits(double x, double y)
{
	return (isnan(x) && isnan(y)) || memcmp(&x, &y, sizeof(double)) == 0;
}

static void
cpu_loops_once(void)
{
	static float buf_a[1600 + 3],
				buf_b[1600 + 3];
	int			sizes[] = {1, 3, 7, 8, 9, 16, 23, 128, 767, 768, 1536, 1537, 1600};

	for (int round = 0; round < 40; round++)
		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		{
			int			n = sizes[s];
			/* unaligned starts, as list children of Arrow buffers may be */
			float	   *a = buf_a + round % 3,
					   *b = buf_b + (round / 3) % 3;
			double		scale = round % 4 == 0 ? 1e30 : (round % 4 == 1 ? 1e-30 : 10);
			double		dot,
						na;

			for (int i = 0; i < n; i++)
			{
				a[i] = rnd_float(scale);
				b[i] = rnd_float(scale);
			}
			if (round == 7)
				a[n / 2] = NAN;
			if (round == 9)
				b[n - 1] = INFINITY;
			if (round == 11)
				for (int i = 0; i < n; i++)
					a[i] = 0;
			CHECK(same_bits(warp_vec_cpu_l2_squared(a, b, n), warp_vec_l2_squared(a, b, n)));
			CHECK(same_bits(warp_vec_cpu_dot(a, b, n), warp_vec_dot(a, b, n)));
			warp_vec_cpu_dot_norm(a, b, n, &dot, &na);
			CHECK(same_bits(dot, warp_vec_dot(a, b, n)));
			CHECK(same_bits(na, warp_vec_norm_squared(a, n)));
			for (int kind = WARP_VEC_L2; kind <= WARP_VEC_COSINE; kind++)
			{
				CHECK(same_bits(warp_vec_cpu_distance((WarpVecKind) kind, a, b, n, -1),
								warp_vec_distance((WarpVecKind) kind, a, b, n, -1)));
				CHECK(same_bits(warp_vec_cpu_distance((WarpVecKind) kind, a, b, n,
													  warp_vec_norm_squared(b, n)),
								warp_vec_distance((WarpVecKind) kind, a, b, n, -1)));
			}
		}
}

TEST(cpu_loops_match_the_definition)
{
	const char *isas[] = {"scalar", "sse2", "avx"};

	for (int i = 0; i < 3; i++)
		if (warp_vec_cpu_use_isa(isas[i]))
		{
			CHECK(strcmp(warp_vec_cpu_isa(), isas[i]) == 0);
			printf("  (vector loops: %s)\n", isas[i]);
			cpu_loops_once();
			CHECK(warp_vec_cpu_l2_squared((float[]) {3, 0}, (float[]) {0, 4}, 2) == 25);
		}
	CHECK(!warp_vec_cpu_use_isa("mmx"));
	CHECK(warp_vec_cpu_use_isa(NULL));
}

TEST(pgvector_special_cases)
{
	float		z[2] = {0, 0},
				x[2] = {1, 2},
				y[2] = {2, 4},
				one[2] = {1, 1},
				neg[2] = {-1.1f, -1.1f},
				big[1] = {3e38f},
				nbig[1] = {-3e38f};

	CHECK(isnan(warp_vec_distance(WARP_VEC_COSINE, x, z, 2, -1)));
	CHECK(isnan(warp_vec_distance(WARP_VEC_COSINE, z, z, 2, -1)));
	CHECK(warp_vec_distance(WARP_VEC_COSINE, x, y, 2, -1) == 0);
	CHECK(warp_vec_distance(WARP_VEC_COSINE, one, neg, 2, -1) == 2);	/* clamped */
	CHECK(warp_vec_distance(WARP_VEC_L2, z, (float[]) {3, 4}, 2, -1) == 5);
	CHECK(warp_vec_distance(WARP_VEC_NEG_IP, x, (float[]) {3, 4}, 2, -1) == -11);
	/* no overflow where float4 arithmetic would */
	CHECK(fabs(warp_vec_distance(WARP_VEC_L2, big, nbig, 1, -1) - 6e38) < 1e31);
}

typedef struct Row
{
	double		d;
	bool		null;
	int64_t		seq;
} Row;

static int
cmp_row(const void *pa, const void *pb)
{
	const Row  *a = pa,
			   *b = pb;

	if (warp_vec_topk_before(a->d, a->null, a->seq, b->d, b->null, b->seq))
		return -1;
	return warp_vec_topk_before(b->d, b->null, b->seq, a->d, a->null, a->seq) ? 1 : 0;
}

TEST(topk_equals_stable_sort)
{
	for (int round = 0; round < 50; round++)
	{
		int			n = 1 + (int) (unit_rnd() % 400);
		int			k = 1 + (int) (unit_rnd() % 60);
		Row		   *rows = malloc(sizeof(Row) * n);
		WarpVecTopK t = {k, 0, malloc(sizeof(WarpVecHit) * k)};

		for (int i = 0; i < n; i++)
		{
			int			r = (int) (unit_rnd() % 20);

			rows[i].d = (double) (unit_rnd() % 8);	/* many ties */
			rows[i].null = r == 0;
			if (r == 1)
				rows[i].d = NAN;
			rows[i].seq = i;
			if (warp_vec_topk_wanted(&t, rows[i].d, rows[i].null, i))
			{
				WarpVecHit	h = {rows[i].d, i, rows[i].null, (void *) (intptr_t) (i + 1)};

				warp_vec_topk_add(&t, &h);
			}
		}
		warp_vec_topk_sort(&t);
		qsort(rows, n, sizeof(Row), cmp_row);	/* total order: stable by seq */
		CHECK(t.n == (k < n ? k : n));
		for (int i = 0; i < t.n; i++)
			CHECK((intptr_t) t.h[i].payload - 1 == rows[i].seq && t.h[i].seq == rows[i].seq);
		/* numbers, then NaN, then NULL */
		for (int i = 1; i < n; i++)
			CHECK(warp_vec_dist_rank(rows[i - 1].d, rows[i - 1].null) <=
				  warp_vec_dist_rank(rows[i].d, rows[i].null));
		free(rows);
		free(t.h);
	}
}

#define KM_DIMS 8
#define KM_K 5
#define KM_PER 200

TEST(kmeans_separates_clusters)
{
	static float x[KM_K * KM_PER * KM_DIMS];
	float		c[KM_K * KM_DIMS];

	for (int kind = WARP_VEC_L2; kind <= WARP_VEC_COSINE; kind++)
	{
		for (int j = 0; j < KM_K; j++)
			for (int p = 0; p < KM_PER; p++)
				for (int d = 0; d < KM_DIMS; d++)
					x[((j * KM_PER) + p) * KM_DIMS + d] =
						(d == j ? 100.0f : 0.0f) + rnd_float(1);
		CHECK(warp_kmeans(x, KM_K * KM_PER, KM_DIMS, KM_K, (WarpVecKind) kind, 10, 2, 7,
						  NULL, NULL, c) == 0);
		/* every point of a cluster lands on the same centroid, and
		 * different clusters on different ones */
		for (int j = 0; j < KM_K; j++)
		{
			int			first = warp_kmeans_nearest(c, NULL, KM_K, KM_DIMS, (WarpVecKind) kind,
													x + (size_t) j * KM_PER * KM_DIMS);

			for (int p = 1; p < KM_PER; p++)
				CHECK(warp_kmeans_nearest(c, NULL, KM_K, KM_DIMS, (WarpVecKind) kind,
										  x + ((size_t) j * KM_PER + p) * KM_DIMS) == first);
			for (int o = 0; o < j; o++)
				CHECK(warp_kmeans_nearest(c, NULL, KM_K, KM_DIMS, (WarpVecKind) kind,
										  x + (size_t) o * KM_PER * KM_DIMS) != first);
		}
	}
	/* fewer points than clusters is refused */
	CHECK(warp_kmeans(x, 3, KM_DIMS, 4, WARP_VEC_L2, 10, 1, 7, NULL, NULL, c) == -2);
}

TEST(kmeans_assign_matches_nearest)
{
	enum
	{
		N = 3001, D = 37, K = 13
	};
	static float x[N * D];
	float		c[K * D];
	int32_t		out[N];

	for (int kind = WARP_VEC_L2; kind <= WARP_VEC_COSINE; kind++)
	{
		for (int j = 0; j < K; j++)
			for (int d = 0; d < D; d++)
				c[j * D + d] = (d % K == j ? 50.0f : 0.0f) + rnd_float(1);
		if (kind == WARP_VEC_COSINE)
			for (int j = 0; j < K; j++)
			{
				double		nn = sqrt(warp_vec_norm_squared(c + j * D, D));

				for (int d = 0; d < D; d++)
					c[j * D + d] = (float) (c[j * D + d] / nn);
			}
		for (int i = 0; i < N; i++)
			for (int d = 0; d < D; d++)
				x[i * D + d] = (d % K == i % K ? 40.0f : 0.0f) + rnd_float(2);
		for (int d = 0; d < D; d++)
			x[5 * D + d] = NAN;		/* no nearest: list 0, as the exact search */
		CHECK(warp_kmeans_assign(x, N, D, c, K, (WarpVecKind) kind, 3, NULL, NULL, out) == 0);
		for (int i = 0; i < N; i++)
			CHECK(out[i] == warp_kmeans_nearest(c, NULL, K, D, (WarpVecKind) kind, x + i * D));
		CHECK(out[5] == 0);
	}
}

static bool
always(void *arg)
{
	return true;
}

TEST(kmeans_interrupted)
{
	static float x[4000 * 4];
	float		c[16 * 4];

	for (int i = 0; i < 4000 * 4; i++)
		x[i] = rnd_float(1);
	CHECK(warp_kmeans(x, 4000, 4, 16, WARP_VEC_L2, 10, 2, 1, always, NULL, c) == -1);
}

int
main(void)
{
	RUN(distances_match_the_definition);
	RUN(cpu_loops_match_the_definition);
	RUN(pgvector_special_cases);
	RUN(topk_equals_stable_sort);
	RUN(kmeans_separates_clusters);
	RUN(kmeans_assign_matches_nearest);
	RUN(kmeans_interrupted);
	UNIT_EXIT();
}
