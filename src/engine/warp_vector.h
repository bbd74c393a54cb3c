/*-------------------------------------------------------------------------
 *
 * warp_vector.h
 *	  Vector distances: the meaning of pg_warp's <->, <#> and <=> operators.
 *
 * Written once for every place that computes a distance: the SQL functions
 * behind the operators (src/pg/vector/vector_ops.c), the warp_ivf index's
 * build, insert and scan, and any GPU kernel (nvcc compiles the same
 * functions as __host__ __device__ through WARP_FN).
 *
 * Semantics (pgvector's spelling and meaning, on float4 elements):
 *	 L2            <->  sqrt(sum((a[i] - b[i])^2))
 *	 inner product <#>  -sum(a[i] * b[i])          (negative, so smaller = nearer)
 *	 cosine        <=>  1 - dot / sqrt(|a|^2 * |b|^2), the similarity clamped
 *	                    to [-1, 1]; NaN when either vector has norm zero
 *	                    (pgvector returns NaN there too; NaN sorts after every
 *	                    number in PostgreSQL, so such rows come last).
 *
 * Every product and sum is taken in double from the float4 elements, in a
 * fixed order: element i goes to partial sum i mod WARP_VEC_LANES, and the
 * partial sums are added pairwise at the end.  The order is part of the
 * definition, so that a vectorised CPU loop, a scalar loop and a GPU thread
 * give bit-identical distances (the GPU build uses the explicitly rounded
 * intrinsics, so nvcc cannot contract a multiply and an add into an FMA).
 *
 * Pure C; no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_VECTOR_H
#define WARP_VECTOR_H

#include <math.h>

#include "warp_defs.h"
#include "warp_ops_float.h"

/* distance kinds (stored in warp_ivf metapages: do not renumber) */
typedef enum WarpVecKind
{
	WARP_VEC_L2 = 1,			/* <-> */
	WARP_VEC_NEG_IP = 2,		/* <#> */
	WARP_VEC_COSINE = 3			/* <=> */
} WarpVecKind;

#define WARP_VEC_LANES 8

/* the partial sums of one pass, and their fixed pairwise total */
typedef struct WarpVecSums
{
	double		s[WARP_VEC_LANES];
} WarpVecSums;

WARP_FN double
warp_vec_total(const WarpVecSums *p)
{
	double		a = WARP_F8_ADD(p->s[0], p->s[1]);
	double		b = WARP_F8_ADD(p->s[2], p->s[3]);
	double		c = WARP_F8_ADD(p->s[4], p->s[5]);
	double		d = WARP_F8_ADD(p->s[6], p->s[7]);

	return WARP_F8_ADD(WARP_F8_ADD(a, b), WARP_F8_ADD(c, d));
}

/* sum((a[i] - b[i])^2) */
WARP_FN double
warp_vec_l2_squared(const float *a, const float *b, int n)
{
	WarpVecSums p;
	int			i,
				l;

	for (l = 0; l < WARP_VEC_LANES; l++)
		p.s[l] = 0.0;
	for (i = 0; i + WARP_VEC_LANES <= n; i += WARP_VEC_LANES)
		for (l = 0; l < WARP_VEC_LANES; l++)
		{
			double		d = WARP_F8_SUB((double) a[i + l], (double) b[i + l]);

			p.s[l] = WARP_F8_ADD(p.s[l], WARP_F8_MUL(d, d));
		}
	for (l = 0; i < n; i++, l++)
	{
		double		d = WARP_F8_SUB((double) a[i], (double) b[i]);

		p.s[l] = WARP_F8_ADD(p.s[l], WARP_F8_MUL(d, d));
	}
	return warp_vec_total(&p);
}

/* sum(a[i] * b[i]) */
WARP_FN double
warp_vec_dot(const float *a, const float *b, int n)
{
	WarpVecSums p;
	int			i,
				l;

	for (l = 0; l < WARP_VEC_LANES; l++)
		p.s[l] = 0.0;
	for (i = 0; i + WARP_VEC_LANES <= n; i += WARP_VEC_LANES)
		for (l = 0; l < WARP_VEC_LANES; l++)
			p.s[l] = WARP_F8_ADD(p.s[l],
								 WARP_F8_MUL((double) a[i + l], (double) b[i + l]));
	for (l = 0; i < n; i++, l++)
		p.s[l] = WARP_F8_ADD(p.s[l], WARP_F8_MUL((double) a[i], (double) b[i]));
	return warp_vec_total(&p);
}

/* |a|^2 */
WARP_FN double
warp_vec_norm_squared(const float *a, int n)
{
	return warp_vec_dot(a, a, n);
}

/* the cosine distance from a dot product and the two squared norms */
WARP_FN double
warp_vec_cosine_from(double dot, double norm2_a, double norm2_b)
{
	double		denom = sqrt(WARP_F8_MUL(norm2_a, norm2_b));
	double		sim;

	sim = WARP_F8_DIV(dot, denom);
	if (isnan(sim))
		return NAN;				/* a zero vector (0 / 0), or NaN elements */
	if (sim > 1.0)
		sim = 1.0;
	else if (sim < -1.0)
		sim = -1.0;
	return WARP_F8_SUB(1.0, sim);
}

WARP_FN double
warp_vec_cosine(const float *a, const float *b, int n)
{
	return warp_vec_cosine_from(warp_vec_dot(a, b, n),
								warp_vec_norm_squared(a, n),
								warp_vec_norm_squared(b, n));
}

/*
 * The distance of one kind.  For cosine, norm2_b is |b|^2 when the caller
 * has it (a query vector compared with many rows), or a negative number to
 * compute it here.
 */
WARP_FN double
warp_vec_distance(WarpVecKind kind, const float *a, const float *b, int n,
				  double norm2_b)
{
	switch (kind)
	{
		case WARP_VEC_L2:
			return sqrt(warp_vec_l2_squared(a, b, n));
		case WARP_VEC_NEG_IP:
			return -warp_vec_dot(a, b, n);
		case WARP_VEC_COSINE:
			if (norm2_b < 0.0)
				norm2_b = warp_vec_norm_squared(b, n);
			return warp_vec_cosine_from(warp_vec_dot(a, b, n),
										warp_vec_norm_squared(a, n), norm2_b);
	}
	return NAN;
}

#endif							/* WARP_VECTOR_H */
