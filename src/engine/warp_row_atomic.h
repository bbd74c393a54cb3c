/*-------------------------------------------------------------------------
 *
 * warp_row_atomic.h
 *	  Bit casts between doubles and int64 words, and the atomic updates of
 *	  aggregate states and group slots: atomics in device code, plain
 *	  read-modify-write on the host (warp_row_agg.h, warp_row_run.h).
 *
 * Pure C (also valid C++ for nvcc); no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_ROW_ATOMIC_H
#define WARP_ROW_ATOMIC_H

#include "warp_defs.h"
#include "warp_ops_float.h"

/* ------------------------------------------------------------ bit casts */

WARP_FN warp_int64
warp_row_dbits(double d)
{
	union
	{
		double		d;
		warp_int64	i;
	}			u;

	u.d = d;
	return u.i;
}

WARP_FN double
warp_row_bitsd(warp_int64 i)
{
	union
	{
		double		d;
		warp_int64	i;
	}			u;

	u.i = i;
	return u.d;
}

/* ------------------------------------------------------------- atomics */

WARP_FN void
warp_row_add_u64(warp_uint64 *p, warp_uint64 v)
{
#ifdef __CUDA_ARCH__
	atomicAdd((unsigned long long *) p, (unsigned long long) v);
#else
	*p += v;
#endif
}

/* add, returning the old value */
WARP_FN warp_uint64
warp_row_fetch_add_u64(warp_uint64 *p, warp_uint64 v)
{
#ifdef __CUDA_ARCH__
	return atomicAdd((unsigned long long *) p, (unsigned long long) v);
#else
	warp_uint64 o = *p;

	*p = o + v;
	return o;
#endif
}

WARP_FN void
warp_row_add_f64(double *p, double v)
{
#ifdef __CUDA_ARCH__
	atomicAdd(p, v);
#else
	*p = WARP_F8_ADD(*p, v);
#endif
}

WARP_FN void
warp_row_min_i64(warp_int64 *p, warp_int64 v)
{
#ifdef __CUDA_ARCH__
	atomicMin((long long *) p, (long long) v);
#else
	if (v < *p)
		*p = v;
#endif
}

WARP_FN void
warp_row_max_i64(warp_int64 *p, warp_int64 v)
{
#ifdef __CUDA_ARCH__
	atomicMax((long long *) p, (long long) v);
#else
	if (v > *p)
		*p = v;
#endif
}

WARP_FN void
warp_row_min_u64(warp_uint64 *p, warp_uint64 v)
{
#ifdef __CUDA_ARCH__
	atomicMin((unsigned long long *) p, (unsigned long long) v);
#else
	if (v < *p)
		*p = v;
#endif
}

WARP_FN void
warp_row_max_u64(warp_uint64 *p, warp_uint64 v)
{
#ifdef __CUDA_ARCH__
	atomicMax((unsigned long long *) p, (unsigned long long) v);
#else
	if (v > *p)
		*p = v;
#endif
}

/* compare-and-swap, returning the old value */
WARP_FN warp_uint32
warp_row_cas_u32(warp_uint32 *p, warp_uint32 expect, warp_uint32 v)
{
#ifdef __CUDA_ARCH__
	return atomicCAS((unsigned int *) p, expect, v);
#else
	warp_uint32 o = *p;

	if (o == expect)
		*p = v;
	return o;
#endif
}

/* publish a slot: its keys must be visible before the state says ready */
WARP_FN void
warp_row_publish_u32(warp_uint32 *p, warp_uint32 v)
{
#ifdef __CUDA_ARCH__
	__threadfence();
	atomicExch((unsigned int *) p, v);
#else
	*p = v;
#endif
}

WARP_FN warp_uint32
warp_row_load_u32(const warp_uint32 *p)
{
	return *(const volatile warp_uint32 *) p;
}

#endif							/* WARP_ROW_ATOMIC_H */
