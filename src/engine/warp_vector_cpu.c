/*
 * warp_vector_cpu.c — vectorised CPU loops for warp_vector.h's distances
 * (see warp_vector_cpu.h for why the bits are the same).
 *
 * Each loop keeps the WARP_VEC_LANES partial sums in SIMD registers: AVX
 * holds lanes 0-3 and 4-7 in two registers of four doubles, SSE2 in four
 * of two.  Eight floats are loaded per step, widened to double
 * (_mm*_cvtps_pd is exact), and subtracted, multiplied and added with
 * separate instructions, in the same order as the scalar code; the tail
 * (n mod 8 elements) goes to lanes 0.. as in warp_vector.h.  No FMA is
 * ever emitted: the AVX functions are compiled for "avx" only, which has
 * none.
 */
#include <stdbool.h>
#include <string.h>

#include "warp_vector_cpu.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define WARP_VEC_X86 1
#include <immintrin.h>
#endif

enum
{
	ISA_UNKNOWN = 0,
	ISA_SCALAR,
	ISA_SSE2,
	ISA_AVX
};

static int	vec_isa = ISA_UNKNOWN;

static int
best_isa(void)
{
#ifdef WARP_VEC_X86
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx") ? ISA_AVX : ISA_SSE2;
#else
	return ISA_SCALAR;
#endif
}

static int
current_isa(void)
{
	int			isa = vec_isa;

	if (isa == ISA_UNKNOWN)
		vec_isa = isa = best_isa(); /* a race writes the same value */
	return isa;
}

const char *
warp_vec_cpu_isa(void)
{
	switch (current_isa())
	{
		case ISA_AVX:
			return "avx";
		case ISA_SSE2:
			return "sse2";
	}
	return "scalar";
}

bool
warp_vec_cpu_use_isa(const char *isa)
{
	int			best = best_isa(),
				want;

	if (isa == NULL)
		want = best;
	else if (strcmp(isa, "scalar") == 0)
		want = ISA_SCALAR;
	else if (strcmp(isa, "sse2") == 0)
		want = ISA_SSE2;
	else if (strcmp(isa, "avx") == 0)
		want = ISA_AVX;
	else
		return false;
	if (want > best)
		return false;
	vec_isa = want;
	return true;
}

/* the tail elements (i from a multiple of 8 to n) into lanes 0.. */
static inline void
tail_l2(WarpVecSums *p, const float *a, const float *b, int i, int n)
{
	for (int l = 0; i < n; i++, l++)
	{
		double		d = (double) a[i] - (double) b[i];

		p->s[l] = p->s[l] + d * d;
	}
}

static inline void
tail_dot(WarpVecSums *p, const float *a, const float *b, int i, int n)
{
	for (int l = 0; i < n; i++, l++)
		p->s[l] = p->s[l] + (double) a[i] * (double) b[i];
}

#ifdef WARP_VEC_X86

/* ---- SSE2: lanes {0,1} {2,3} {4,5} {6,7} ---- */

/* floats p[0..8) as doubles, two per register (exact) */
static inline void
sse2_widen8(const float *p, __m128d out[4])
{
	__m128		lo = _mm_loadu_ps(p),
				hi = _mm_loadu_ps(p + 4);

	out[0] = _mm_cvtps_pd(lo);
	out[1] = _mm_cvtps_pd(_mm_movehl_ps(lo, lo));
	out[2] = _mm_cvtps_pd(hi);
	out[3] = _mm_cvtps_pd(_mm_movehl_ps(hi, hi));
}

static double
sse2_l2_squared(const float *a, const float *b, int n)
{
	__m128d		s0 = _mm_setzero_pd(),
				s1 = _mm_setzero_pd(),
				s2 = _mm_setzero_pd(),
				s3 = _mm_setzero_pd();
	WarpVecSums p;
	int			i;

	for (i = 0; i + 8 <= n; i += 8)
	{
		__m128d		x[4],
					y[4],
					d0,
					d1,
					d2,
					d3;

		sse2_widen8(a + i, x);
		sse2_widen8(b + i, y);
		d0 = _mm_sub_pd(x[0], y[0]);
		d1 = _mm_sub_pd(x[1], y[1]);
		d2 = _mm_sub_pd(x[2], y[2]);
		d3 = _mm_sub_pd(x[3], y[3]);
		s0 = _mm_add_pd(s0, _mm_mul_pd(d0, d0));
		s1 = _mm_add_pd(s1, _mm_mul_pd(d1, d1));
		s2 = _mm_add_pd(s2, _mm_mul_pd(d2, d2));
		s3 = _mm_add_pd(s3, _mm_mul_pd(d3, d3));
	}
	_mm_storeu_pd(p.s, s0);
	_mm_storeu_pd(p.s + 2, s1);
	_mm_storeu_pd(p.s + 4, s2);
	_mm_storeu_pd(p.s + 6, s3);
	tail_l2(&p, a, b, i, n);
	return warp_vec_total(&p);
}

/* a . b, and |a|^2 when norm (else skipped) */
static void
sse2_dot(const float *a, const float *b, int n, double *dot, double *norm)
{
	__m128d		s[4] = {_mm_setzero_pd(), _mm_setzero_pd(), _mm_setzero_pd(), _mm_setzero_pd()},
				q[4] = {_mm_setzero_pd(), _mm_setzero_pd(), _mm_setzero_pd(), _mm_setzero_pd()};
	WarpVecSums p,
				pn;
	int			i;

	for (i = 0; i + 8 <= n; i += 8)
	{
		__m128d		x[4],
					y[4];

		sse2_widen8(a + i, x);
		sse2_widen8(b + i, y);
		for (int r = 0; r < 4; r++)
		{
			s[r] = _mm_add_pd(s[r], _mm_mul_pd(x[r], y[r]));
			if (norm)
				q[r] = _mm_add_pd(q[r], _mm_mul_pd(x[r], x[r]));
		}
	}
	for (int r = 0; r < 4; r++)
	{
		_mm_storeu_pd(p.s + 2 * r, s[r]);
		_mm_storeu_pd(pn.s + 2 * r, q[r]);
	}
	tail_dot(&p, a, b, i, n);
	*dot = warp_vec_total(&p);
	if (norm)
	{
		tail_dot(&pn, a, a, i, n);
		*norm = warp_vec_total(&pn);
	}
}

/* ---- AVX: lanes {0..3} {4..7} ---- */

__attribute__((target("avx")))
static double
avx_l2_squared(const float *a, const float *b, int n)
{
	__m256d		s0 = _mm256_setzero_pd(),
				s1 = _mm256_setzero_pd();
	WarpVecSums p;
	int			i;

	for (i = 0; i + 8 <= n; i += 8)
	{
		__m256d		d0 = _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(a + i)),
									   _mm256_cvtps_pd(_mm_loadu_ps(b + i))),
					d1 = _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(a + i + 4)),
									   _mm256_cvtps_pd(_mm_loadu_ps(b + i + 4)));

		s0 = _mm256_add_pd(s0, _mm256_mul_pd(d0, d0));
		s1 = _mm256_add_pd(s1, _mm256_mul_pd(d1, d1));
	}
	_mm256_storeu_pd(p.s, s0);
	_mm256_storeu_pd(p.s + 4, s1);
	tail_l2(&p, a, b, i, n);
	return warp_vec_total(&p);
}

__attribute__((target("avx")))
static void
avx_dot(const float *a, const float *b, int n, double *dot, double *norm)
{
	__m256d		s0 = _mm256_setzero_pd(),
				s1 = _mm256_setzero_pd(),
				q0 = _mm256_setzero_pd(),
				q1 = _mm256_setzero_pd();
	WarpVecSums p,
				pn;
	int			i;

	for (i = 0; i + 8 <= n; i += 8)
	{
		__m256d		x0 = _mm256_cvtps_pd(_mm_loadu_ps(a + i)),
					x1 = _mm256_cvtps_pd(_mm_loadu_ps(a + i + 4)),
					y0 = _mm256_cvtps_pd(_mm_loadu_ps(b + i)),
					y1 = _mm256_cvtps_pd(_mm_loadu_ps(b + i + 4));

		s0 = _mm256_add_pd(s0, _mm256_mul_pd(x0, y0));
		s1 = _mm256_add_pd(s1, _mm256_mul_pd(x1, y1));
		if (norm)
		{
			q0 = _mm256_add_pd(q0, _mm256_mul_pd(x0, x0));
			q1 = _mm256_add_pd(q1, _mm256_mul_pd(x1, x1));
		}
	}
	_mm256_storeu_pd(p.s, s0);
	_mm256_storeu_pd(p.s + 4, s1);
	tail_dot(&p, a, b, i, n);
	*dot = warp_vec_total(&p);
	if (norm)
	{
		_mm256_storeu_pd(pn.s, q0);
		_mm256_storeu_pd(pn.s + 4, q1);
		tail_dot(&pn, a, a, i, n);
		*norm = warp_vec_total(&pn);
	}
}
#endif							/* WARP_VEC_X86 */

double
warp_vec_cpu_l2_squared(const float *a, const float *b, int n)
{
#ifdef WARP_VEC_X86
	switch (current_isa())
	{
		case ISA_AVX:
			return avx_l2_squared(a, b, n);
		case ISA_SSE2:
			return sse2_l2_squared(a, b, n);
	}
#endif
	return warp_vec_l2_squared(a, b, n);
}

void
warp_vec_cpu_dot_norm(const float *a, const float *b, int n, double *dot, double *norm2_a)
{
#ifdef WARP_VEC_X86
	switch (current_isa())
	{
		case ISA_AVX:
			avx_dot(a, b, n, dot, norm2_a);
			return;
		case ISA_SSE2:
			sse2_dot(a, b, n, dot, norm2_a);
			return;
	}
#endif
	*dot = warp_vec_dot(a, b, n);
	if (norm2_a)
		*norm2_a = warp_vec_norm_squared(a, n);
}

double
warp_vec_cpu_dot(const float *a, const float *b, int n)
{
	double		dot;

	warp_vec_cpu_dot_norm(a, b, n, &dot, NULL);
	return dot;
}

double
warp_vec_cpu_distance(WarpVecKind kind, const float *a, const float *b, int n,
					  double norm2_b)
{
	double		dot,
				norm2_a;

	switch (kind)
	{
		case WARP_VEC_L2:
			return sqrt(warp_vec_cpu_l2_squared(a, b, n));
		case WARP_VEC_NEG_IP:
			return -warp_vec_cpu_dot(a, b, n);
		case WARP_VEC_COSINE:
			if (norm2_b < 0.0)
				norm2_b = warp_vec_cpu_dot(b, b, n);
			warp_vec_cpu_dot_norm(a, b, n, &dot, &norm2_a);
			return warp_vec_cosine_from(dot, norm2_a, norm2_b);
	}
	return NAN;
}
