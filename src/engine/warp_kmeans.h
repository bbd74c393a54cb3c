/*
 * warp_kmeans.h — k-means clustering of float vectors (warp_ivf's lists).
 *
 * Lloyd's algorithm from k distinct random samples, on several threads
 * (warp_threads.h); empty clusters are re-seeded by splitting the largest.
 * For WARP_VEC_COSINE the caller passes unit vectors and the centroids are
 * normalised after every update (spherical k-means); for WARP_VEC_NEG_IP
 * points are assigned by largest inner product.  The search is float
 * arithmetic and not part of any answer's definition: the lists it makes
 * only decide which rows an approximate scan looks at.
 *
 * Pure C (no PostgreSQL): a GPU build of the same routine can live in the
 * daemon.
 */
#ifndef WARP_KMEANS_H
#define WARP_KMEANS_H

#include <stdbool.h>
#include <stdint.h>

#include "warp_vector.h"

/*
 * x: n vectors of dims floats.  centroids: k * dims floats, written.
 * Returns 0, -1 when interrupted(iarg) said so, -2 when out of memory.
 */
extern int	warp_kmeans(const float *x, int64_t n, int dims, int k, WarpVecKind kind,
						int iterations, int nthreads, uint64_t seed,
						bool (*interrupted) (void *iarg), void *iarg,
						float *centroids);

/*
 * The nearest centroid of each of n vectors, into out[0 .. n), on nthreads
 * threads, by k-means's own search (float dot products: L2 by
 * |c|^2 - 2 x.c, inner product and cosine over unit centroids by the
 * largest x.c; a vector nearly equidistant from two centroids may go to
 * either).  Returns 0, -1 when interrupted, -2 when out of memory.
 */
extern int	warp_kmeans_assign(const float *x, int64_t n, int dims, const float *centroids,
							   int k, WarpVecKind kind, int nthreads,
							   bool (*interrupted) (void *iarg), void *iarg, int32_t *out);

/* index of the centroid nearest to v under `kind` (centroid norms squared
 * in cnorm2 for cosine, may be NULL otherwise) */
extern int	warp_kmeans_nearest(const float *centroids, const double *cnorm2, int k,
								int dims, WarpVecKind kind, const float *v);

#endif							/* WARP_KMEANS_H */
