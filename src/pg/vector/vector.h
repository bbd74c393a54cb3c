/*
 * vector.h — vector similarity search over real[] (float4[]) columns:
 * the distance operators and the warp_ivf index access method.
 *
 *   vector_array.c   real[] arguments checked and seen as float vectors
 *   vector_ops.c     the SQL functions behind <->, <#>, <=>
 *   ivf.h            warp_ivf's page layout and internal interfaces
 *   ivf_*.c          warp_ivf: handler, build, k-means, insert, scan, vacuum
 *
 * The distances themselves are defined once in src/engine/warp_vector.h.
 */
#ifndef PGWARP_VECTOR_H
#define PGWARP_VECTOR_H

#include "postgres.h"

#include "fmgr.h"
#include "utils/array.h"

#include "warp_vector.h"
#include "warp_vector_cpu.h"

/* a real[] seen as a vector: elements point into the (detoasted) array */
typedef struct WarpVecArg
{
	const float *x;
	int			dims;
} WarpVecArg;

/* vector_array.c */
extern void pgwarp_vec_from_array(ArrayType *a, WarpVecArg *out);
extern void pgwarp_vec_check_dims(int a, int b);

/* vector_ops.c: the SQL functions, compared by address to find an
 * operator class's distance kind (ivf_handler.c) */
extern Datum pg_warp_l2_distance(PG_FUNCTION_ARGS);
extern Datum pg_warp_negative_inner_product(PG_FUNCTION_ARGS);
extern Datum pg_warp_cosine_distance(PG_FUNCTION_ARGS);

/* ivf_handler.c: called from _PG_init (reloptions) */
extern void pgwarp_ivf_init(void);

/* guc.c */
extern int	pgwarp_ivf_probes;

#endif							/* PGWARP_VECTOR_H */
