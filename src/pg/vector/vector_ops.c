/*
 * vector_ops.c — the SQL functions behind pg_warp's vector operators on
 * real[]:
 *
 *   <->  l2_distance             sqrt of the sum of squared differences
 *   <#>  negative_inner_product  minus the dot product
 *   <=>  cosine_distance         1 - cosine similarity (NaN for a zero vector)
 *        inner_product, vector_norm, vector_dims
 *
 * All are STRICT: a NULL array gives NULL (and so sorts last under
 * ORDER BY ... ASC).  The arithmetic is warp_vector.h's, through its
 * vectorised CPU loops (warp_vector_cpu.h: the same bits).
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/array.h"

#include "vector.h"

PG_FUNCTION_INFO_V1(pg_warp_l2_distance);
PG_FUNCTION_INFO_V1(pg_warp_negative_inner_product);
PG_FUNCTION_INFO_V1(pg_warp_inner_product);
PG_FUNCTION_INFO_V1(pg_warp_cosine_distance);
PG_FUNCTION_INFO_V1(pg_warp_vector_norm);
PG_FUNCTION_INFO_V1(pg_warp_vector_dims);

/* both arguments as vectors of equal dimensions */
static void
two_vectors(FunctionCallInfo fcinfo, WarpVecArg *a, WarpVecArg *b)
{
	pgwarp_vec_from_array(PG_GETARG_ARRAYTYPE_P(0), a);
	pgwarp_vec_from_array(PG_GETARG_ARRAYTYPE_P(1), b);
	pgwarp_vec_check_dims(a->dims, b->dims);
}

Datum
pg_warp_l2_distance(PG_FUNCTION_ARGS)
{
	WarpVecArg	a,
				b;

	two_vectors(fcinfo, &a, &b);
	PG_RETURN_FLOAT8(warp_vec_cpu_distance(WARP_VEC_L2, a.x, b.x, a.dims, -1.0));
}

Datum
pg_warp_negative_inner_product(PG_FUNCTION_ARGS)
{
	WarpVecArg	a,
				b;

	two_vectors(fcinfo, &a, &b);
	PG_RETURN_FLOAT8(warp_vec_cpu_distance(WARP_VEC_NEG_IP, a.x, b.x, a.dims, -1.0));
}

Datum
pg_warp_inner_product(PG_FUNCTION_ARGS)
{
	WarpVecArg	a,
				b;

	two_vectors(fcinfo, &a, &b);
	PG_RETURN_FLOAT8(warp_vec_cpu_dot(a.x, b.x, a.dims));
}

Datum
pg_warp_cosine_distance(PG_FUNCTION_ARGS)
{
	WarpVecArg	a,
				b;

	two_vectors(fcinfo, &a, &b);
	PG_RETURN_FLOAT8(warp_vec_cpu_distance(WARP_VEC_COSINE, a.x, b.x, a.dims, -1.0));
}

Datum
pg_warp_vector_norm(PG_FUNCTION_ARGS)
{
	WarpVecArg	a;

	pgwarp_vec_from_array(PG_GETARG_ARRAYTYPE_P(0), &a);
	PG_RETURN_FLOAT8(sqrt(warp_vec_cpu_dot(a.x, a.x, a.dims)));
}

Datum
pg_warp_vector_dims(PG_FUNCTION_ARGS)
{
	WarpVecArg	a;

	pgwarp_vec_from_array(PG_GETARG_ARRAYTYPE_P(0), &a);
	PG_RETURN_INT32(a.dims);
}
