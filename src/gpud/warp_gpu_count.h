/*-------------------------------------------------------------------------
 *
 * warp_gpu_count.h
 *	  A kernel's per-thread row counts (rows filtered, rows joined, for
 *	  EXPLAIN ANALYZE) into its DevResult: summed over the warp first, so
 *	  one atomic per warp reaches the counter instead of one per thread.
 *	  Every thread of a batch's kernel adds to the same two addresses, and
 *	  such atomics are serialised at the L2: on an H100 a 1M-row batch
 *	  (about 200,000 threads) spent a large part of its time there
 *	  (bench/results/2026-12-07-h100-tile-kernel.md).
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_GPU_COUNT_H
#define WARP_GPU_COUNT_H

/* add n (this thread's count, < 2^32) to *counter, once per warp */
__device__ static __forceinline__ void
warp_gpu_count_add(unsigned long long *counter, unsigned long long n)
{
	unsigned	mask = __activemask();
	unsigned	sum;

#if __CUDA_ARCH__ >= 800
	sum = __reduce_add_sync(mask, (unsigned) n);
#else
	int			o;

	if (mask != 0xffffffffu)
	{
		/* a partial warp (not in this kernel's launches): one per thread */
		if (n != 0)
			atomicAdd(counter, n);
		return;
	}
	sum = (unsigned) n;
	for (o = 16; o > 0; o >>= 1)
		sum += __shfl_xor_sync(mask, sum, o);
#endif
	if ((threadIdx.x & 31) == (unsigned) (__ffs(mask) - 1) && sum != 0)
		atomicAdd(counter, (unsigned long long) sum);
}

#endif							/* WARP_GPU_COUNT_H */
