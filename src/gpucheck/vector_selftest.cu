/*
 * vector_selftest.cu — the vector distances (src/engine/warp_vector.h) and
 * the k-NN order (warp_vec_topk.h) on the GPU against the host, bit for bit.
 *
 * One thread per pair of vectors (random float4 vectors of 1 .. 2000
 * elements, zero vectors, huge and tiny values) computes L2, the negative
 * inner product and the cosine distance (with and without a precomputed
 * query norm); the host computes the same with gcc/nvcc host code.  Any
 * difference in a single bit fails: the definition fixes the summation
 * order and the headers use the _rn intrinsics, so nvcc may not fuse a
 * multiply-add.  Output: "PASS: name" / "FAIL: name ..." lines; exit 1 on
 * a failure, 2 without a usable GPU.
 */
#include <cstdio>
#include <cstring>
#include <cmath>
#include <cuda_runtime.h>

#include "engine/warp_vector.h"
#include "engine/warp_vec_topk.h"

#define NPAIRS 256
#define MAXD 2000

struct Out
{
	double		d[4];
	int			before;
};

__host__ __device__ static void
run_pair(const float *a, const float *b, int n, Out *o)
{
	o->d[0] = warp_vec_distance(WARP_VEC_L2, a, b, n, -1.0);
	o->d[1] = warp_vec_distance(WARP_VEC_NEG_IP, a, b, n, -1.0);
	o->d[2] = warp_vec_distance(WARP_VEC_COSINE, a, b, n, -1.0);
	o->d[3] = warp_vec_distance(WARP_VEC_COSINE, a, b, n, warp_vec_norm_squared(b, n));
	o->before = warp_vec_topk_before(o->d[0], false, 1, o->d[2], isnan(o->d[2]), 2);
}

__global__ static void
pairs_kernel(const float *a, const float *b, const int *len, Out *out)
{
	int			i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < NPAIRS)
		run_pair(a + (size_t) i * MAXD, b + (size_t) i * MAXD, len[i], &out[i]);
}

static unsigned long long rng = 88172645463325252ULL;

static float
rnd(double scale)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (float) (((double) (rng % 2000001) / 1000000.0 - 1.0) * scale);
}

int
main(void)
{
	static float a[NPAIRS * MAXD],
				b[NPAIRS * MAXD];
	static int	len[NPAIRS];
	static Out	host[NPAIRS],
				dev[NPAIRS];
	float	   *da,
			   *db;
	int		   *dl;
	Out		   *dout;
	int			failed = 0;
	cudaError_t err;

	for (int i = 0; i < NPAIRS; i++)
	{
		double		scale = i % 7 == 0 ? 1e30 : (i % 7 == 1 ? 1e-30 : 10.0);

		len[i] = i < 16 ? i + 1 : 1 + (int) (rng % MAXD);
		for (int k = 0; k < len[i]; k++)
		{
			a[(size_t) i * MAXD + k] = rnd(scale);
			b[(size_t) i * MAXD + k] = i % 11 == 3 ? 0.0f : rnd(scale);	/* zero vectors */
		}
		run_pair(a + (size_t) i * MAXD, b + (size_t) i * MAXD, len[i], &host[i]);
	}
	err = cudaMalloc((void **) &da, sizeof(a));
	if (err == cudaSuccess)
		err = cudaMalloc((void **) &db, sizeof(b));
	if (err == cudaSuccess)
		err = cudaMalloc((void **) &dl, sizeof(len));
	if (err == cudaSuccess)
		err = cudaMalloc((void **) &dout, sizeof(dev));
	if (err != cudaSuccess)
	{
		printf("FAIL: vector_selftest: no usable GPU (%s)\n", cudaGetErrorString(err));
		return 2;
	}
	cudaMemcpy(da, a, sizeof(a), cudaMemcpyHostToDevice);
	cudaMemcpy(db, b, sizeof(b), cudaMemcpyHostToDevice);
	cudaMemcpy(dl, len, sizeof(len), cudaMemcpyHostToDevice);
	pairs_kernel<<<(NPAIRS + 63) / 64, 64>>>(da, db, dl, dout);
	err = cudaGetLastError();
	if (err == cudaSuccess)
		err = cudaMemcpy(dev, dout, sizeof(dev), cudaMemcpyDeviceToHost);
	if (err != cudaSuccess)
	{
		printf("FAIL: vector_selftest: kernel failed (%s)\n", cudaGetErrorString(err));
		return 2;
	}
	for (int i = 0; i < NPAIRS; i++)
		if (memcmp(host[i].d, dev[i].d, sizeof(host[i].d)) != 0 || host[i].before != dev[i].before)
		{
			if (failed++ < 10)
				printf("FAIL: pair %d (%d dims): host %.17g %.17g %.17g %.17g, device %.17g %.17g %.17g %.17g\n",
					   i, len[i], host[i].d[0], host[i].d[1], host[i].d[2], host[i].d[3],
					   dev[i].d[0], dev[i].d[1], dev[i].d[2], dev[i].d[3]);
		}
	printf("%s: vector_distances_bitwise (%d pairs)\n", failed ? "FAIL" : "PASS", NPAIRS);
	return failed ? 1 : 0;
}
