/*
 * vector_array.c — a real[] argument checked and seen as a float vector.
 *
 * The checks and their SQLSTATEs follow pgvector's for its vector type: a
 * vector is a one-dimensional array of at least one element and no NULLs;
 * two vectors compared must have the same number of dimensions.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/array.h"

#include "vector.h"

/* out->x points into `a`, which must stay valid while it is used */
void
pgwarp_vec_from_array(ArrayType *a, WarpVecArg *out)
{
	if (ARR_ELEMTYPE(a) != FLOAT4OID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("vector must be an array of real")));
	if (ARR_NDIM(a) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("vector must be a one-dimensional array, not %d-dimensional",
						ARR_NDIM(a))));
	if (ARR_NDIM(a) == 0 || ARR_DIMS(a)[0] < 1)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("vector must have at least 1 dimension")));
	if (ARR_HASNULL(a) && array_contains_nulls(a))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("vector must not contain NULL elements")));
	out->x = (const float *) ARR_DATA_PTR(a);
	out->dims = ARR_DIMS(a)[0];
}

void
pgwarp_vec_check_dims(int a, int b)
{
	if (a != b)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("different vector dimensions %d and %d", a, b)));
}
