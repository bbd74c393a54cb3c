/*
 * pgwarp_gpu_probe — measures what the GPU data path depends on, on the
 * machine it runs on, and prints one JSON object per line:
 *
 *   {"probe":"device", ...}            each visible GPU
 *   {"probe":"context", "ms":...}      CUDA context creation
 *   {"probe":"h2d", "kind":"pinned"|"pageable", "bytes":N, "gbps":...}
 *   {"probe":"register", "bytes":N, "ms":..., "gbps":...}
 *       cudaHostRegister(ReadOnly) of a read-only mmap of --file, per window
 *       size, and the copy rate from the registered window
 *   {"probe":"sum_int32", "bytes":N, "gbps":...}
 *       a resident-data reduction kernel (the "work is nearly free" figure)
 *
 * Usage: pgwarp_gpu_probe [--file PATH] [--max-mb N]
 * It is a measuring tool for docs/ and bench/; the extension never runs it.
 */
#include <cuda_runtime.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpud/gpud_clock.h"

#define CK(call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) { \
		fprintf(stderr, "pgwarp_gpu_probe: %s: %s\n", #call, cudaGetErrorString(e_)); \
		exit(1); \
	} \
} while (0)

__global__ void
sum_int32(const int32_t *v, size_t n, unsigned long long *out)
{
	long long	acc = 0;
	size_t		i;

	for (i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
		 i += (size_t) gridDim.x * blockDim.x)
		acc += v[i];
	/* warp reduce, then one atomic per warp */
	for (int o = 16; o > 0; o >>= 1)
		acc += __shfl_down_sync(0xffffffff, acc, o);
	if ((threadIdx.x & 31) == 0)
		atomicAdd(out, (unsigned long long) acc);
}

/* Median-of-5 copy rate in GB/s for `bytes` from src to device. */
static double
copy_gbps(void *dev, const void *src, size_t bytes, cudaStream_t s)
{
	double		t[5];
	int			r;
	int			reps = bytes < (1 << 20) ? 200 : (bytes < (64 << 20) ? 20 : 3);

	for (r = 0; r < 5; r++)
	{
		double		t0 = gpud_now_ms();

		for (int k = 0; k < reps; k++)
			CK(cudaMemcpyAsync(dev, src, bytes, cudaMemcpyHostToDevice, s));
		CK(cudaStreamSynchronize(s));
		t[r] = (gpud_now_ms() - t0) / reps;
	}
	for (int i = 0; i < 5; i++)
		for (int j = i + 1; j < 5; j++)
			if (t[j] < t[i])
			{
				double		x = t[i];

				t[i] = t[j];
				t[j] = x;
			}
	return bytes / (t[2] * 1e-3) / 1e9;
}

static void
probe_devices(void)
{
	int			n = 0;

	CK(cudaGetDeviceCount(&n));
	for (int d = 0; d < n; d++)
	{
		cudaDeviceProp p;

		CK(cudaGetDeviceProperties(&p, d));
		printf("{\"probe\":\"device\",\"index\":%d,\"name\":\"%s\",\"sm\":\"%d.%d\","
			   "\"multiprocessors\":%d,\"memory_bytes\":%zu,\"pci_bus\":%d}\n",
			   d, p.name, p.major, p.minor, p.multiProcessorCount,
			   p.totalGlobalMem, p.pciBusID);
	}
}

static void
probe_h2d(size_t max_bytes, cudaStream_t s)
{
	static const size_t sizes[] = {8 << 10, 256 << 10, 4 << 20, 16 << 20, 64 << 20, 256 << 20};
	void	   *dev;
	void	   *pinned;
	void	   *pageable;

	CK(cudaMalloc(&dev, max_bytes));
	CK(cudaMallocHost(&pinned, max_bytes));
	pageable = malloc(max_bytes);
	memset(pinned, 1, max_bytes);
	memset(pageable, 1, max_bytes);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]) && sizes[i] <= max_bytes; i++)
	{
		printf("{\"probe\":\"h2d\",\"kind\":\"pinned\",\"bytes\":%zu,\"gbps\":%.2f}\n",
			   sizes[i], copy_gbps(dev, pinned, sizes[i], s));
		printf("{\"probe\":\"h2d\",\"kind\":\"pageable\",\"bytes\":%zu,\"gbps\":%.2f}\n",
			   sizes[i], copy_gbps(dev, pageable, sizes[i], s));
		fflush(stdout);
	}

	/* resident reduction */
	{
		unsigned long long *out;
		size_t		n = max_bytes / sizeof(int32_t);
		double		t0;
		double		ms;

		CK(cudaMemcpy(dev, pinned, max_bytes, cudaMemcpyHostToDevice));
		CK(cudaMalloc(&out, sizeof(*out)));
		CK(cudaMemset(out, 0, sizeof(*out)));
		sum_int32<<<1024, 256, 0, s>>>((const int32_t *) dev, n, out);
		CK(cudaStreamSynchronize(s));
		t0 = gpud_now_ms();
		for (int k = 0; k < 10; k++)
			sum_int32<<<1024, 256, 0, s>>>((const int32_t *) dev, n, out);
		CK(cudaStreamSynchronize(s));
		ms = (gpud_now_ms() - t0) / 10;
		printf("{\"probe\":\"sum_int32\",\"bytes\":%zu,\"ms\":%.3f,\"gbps\":%.1f}\n",
			   max_bytes, ms, max_bytes / (ms * 1e-3) / 1e9);
		CK(cudaFree(out));
	}
	CK(cudaFree(dev));
	CK(cudaFreeHost(pinned));
	free(pageable);
}

/* Registration cost of read-only file windows of growing size. */
static void
probe_register(const char *path, cudaStream_t s)
{
	int			fd = open(path, O_RDONLY);
	struct stat st;
	void	   *dev;
	size_t		win;

	if (fd < 0 || fstat(fd, &st) != 0)
	{
		perror(path);
		exit(1);
	}
	CK(cudaMalloc(&dev, (size_t) st.st_size));
	for (win = 4 << 20; win <= (size_t) st.st_size; win *= 4)
	{
		void	   *map = mmap(NULL, win, PROT_READ, MAP_SHARED, fd, 0);
		double		t0;
		double		reg_ms;
		double		unreg_ms;
		double		gbps;

		if (map == MAP_FAILED)
		{
			perror("mmap");
			exit(1);
		}
		t0 = gpud_now_ms();
		CK(cudaHostRegister(map, win, cudaHostRegisterReadOnly));
		reg_ms = gpud_now_ms() - t0;
		gbps = copy_gbps(dev, map, win, s);
		t0 = gpud_now_ms();
		CK(cudaHostUnregister(map));
		unreg_ms = gpud_now_ms() - t0;
		munmap(map, win);
		printf("{\"probe\":\"register\",\"bytes\":%zu,\"register_ms\":%.2f,"
			   "\"register_gbps\":%.2f,\"unregister_ms\":%.2f,\"copy_gbps\":%.2f}\n",
			   win, reg_ms, win / (reg_ms * 1e-3) / 1e9, unreg_ms, gbps);
		fflush(stdout);
	}
	CK(cudaFree(dev));
	close(fd);
}

int
main(int argc, char **argv)
{
	const char *file = NULL;
	size_t		max_mb = 256;
	cudaStream_t s;
	double		t0;

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--file") == 0 && i + 1 < argc)
			file = argv[++i];
		else if (strcmp(argv[i], "--max-mb") == 0 && i + 1 < argc)
			max_mb = strtoul(argv[++i], NULL, 10);
		else
		{
			fprintf(stderr, "usage: pgwarp_gpu_probe [--file PATH] [--max-mb N]\n");
			return 2;
		}
	}
	t0 = gpud_now_ms();
	CK(cudaFree(0));			/* creates the primary context */
	printf("{\"probe\":\"context\",\"ms\":%.1f}\n", gpud_now_ms() - t0);
	probe_devices();
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	probe_h2d(max_mb << 20, s);
	if (file)
		probe_register(file, s);
	return 0;
}
