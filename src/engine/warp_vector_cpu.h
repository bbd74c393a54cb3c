/*
 * warp_vector_cpu.h — the distances of warp_vector.h, vectorised for the
 * CPU (warp_vector_cpu.c).
 *
 * Same bits as warp_vector.h's scalar functions, which define them: lane
 * l of the SIMD accumulators is partial sum l (element i goes to lane
 * i mod WARP_VEC_LANES), every element is widened to double before the
 * subtract / multiply / add, each as its own rounded operation (no fused
 * multiply-add), and the lanes are totalled by warp_vec_total.  So a row
 * scored here, by the SQL operator, by the index or by a GPU kernel
 * compares equal.  On x86-64 the loops use SSE2, or AVX when the CPU has
 * it (chosen once, at the first call); elsewhere they are the scalar
 * functions.  test/unit/test_vector.c checks the bits against the scalar
 * definition.
 *
 * Pure C; no PostgreSQL headers; safe on any thread.
 */
#ifndef WARP_VECTOR_CPU_H
#define WARP_VECTOR_CPU_H

#include "warp_vector.h"

/* sum((a[i] - b[i])^2), as warp_vec_l2_squared */
extern double warp_vec_cpu_l2_squared(const float *a, const float *b, int n);

/* sum(a[i] * b[i]), as warp_vec_dot */
extern double warp_vec_cpu_dot(const float *a, const float *b, int n);

/* a . b and |a|^2 in one pass, as warp_vec_dot twice */
extern void warp_vec_cpu_dot_norm(const float *a, const float *b, int n,
								  double *dot, double *norm2_a);

/* as warp_vec_distance (norm2_b: |b|^2, or negative to compute it) */
extern double warp_vec_cpu_distance(WarpVecKind kind, const float *a, const float *b,
									int n, double norm2_b);

/* which loops run: "avx", "sse2" or "scalar" */
extern const char *warp_vec_cpu_isa(void);

/* for tests: run the loops of one ISA ("scalar", "sse2", "avx"; false if
 * this CPU lacks it), or NULL for the best the CPU has */
extern bool warp_vec_cpu_use_isa(const char *isa);

#endif							/* WARP_VECTOR_CPU_H */
