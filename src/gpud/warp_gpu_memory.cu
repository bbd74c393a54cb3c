/*-------------------------------------------------------------------------
 *
 * warp_gpu_memory.cu
 *	  Device memory of the GPU driver (see warp_gpu.cu): allocations
 *	  through the job's account (warp_gpu.h: WarpGpuMem), the device's
 *	  free memory, the program and join tables uploaded at create, and the
 *	  column cache's entries in the device's stream-ordered memory pool.
 *
 *-------------------------------------------------------------------------
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "warp_gpu_internal.h"

/* ------------------------------------------------------ device memory */

/*
 * Device allocations go through the job's account (warp_gpu.h: WarpGpuMem):
 * asked before cudaMalloc, told after cudaFree of a buffer being replaced.
 */
bool
dev_malloc(WarpGpu *g, void **p, size_t n, char *why, size_t whylen)
{
	*p = NULL;
	if (g->mem.grow && !g->mem.grow(g->mem.ctx, (warp_uint64) n))
	{
		set_why(why, whylen, "device memory: %zu more bytes do not fit this query's share", n);
		return false;
	}
	if (!CUDA_OK(cudaMalloc(p, n)))
	{
		if (g->mem.shrink)
			g->mem.shrink(g->mem.ctx, (warp_uint64) n);
		return false;
	}
	return true;
}

void
dev_free(WarpGpu *g, void *p, size_t n)
{
	if (p == NULL)
		return;
	cudaFree(p);
	if (g->mem.shrink)
		g->mem.shrink(g->mem.ctx, (warp_uint64) n);
}

extern "C" int
warp_gpu_memory(int device, warp_uint64 *free_bytes, warp_uint64 *total_bytes)
{
	size_t		f = 0,
				t = 0;

	if (cudaSetDevice(device) != cudaSuccess || cudaMemGetInfo(&f, &t) != cudaSuccess)
	{
		(void) cudaGetLastError();
		return -1;
	}
	*free_bytes = f;
	*total_bytes = t;
	return 0;
}

/* ------------------------------------------------- program and tables */

/* copy n bytes of host memory to a new device array; NULL src gives NULL */
static bool
upload(WarpGpu *g, const void *src, size_t n, void **dst, char *why, size_t whylen)
{
	*dst = NULL;
	if (src == NULL || n == 0)
		return true;
	if (!dev_malloc(g, dst, n, why, whylen))
		return false;
	g->d_table_arrays[g->n_table_arrays++] = *dst;
	return CUDA_OK(cudaMemcpy(*dst, src, n, cudaMemcpyHostToDevice));
}

/* the program with its arrays (the time zone table's and the IN sets'
 * too), in one device allocation */
bool
upload_program(WarpGpu *g, const WarpProgram *p, char *why, size_t whylen)
{
	WarpProgram dp = *p;
	size_t		off[10],
				len[10],
				total;
	const void *src[10];
	warp_uint8 *host,
			   *dev;
	int			i;

	src[0] = p->cols;
	len[0] = sizeof(WarpColumnSpec) * p->ncols;
	src[1] = p->nodes;
	len[1] = sizeof(WarpNode) * p->nnodes;
	src[2] = p->args;
	len[2] = sizeof(warp_int32) * p->nargs;
	src[3] = p->quals;
	len[3] = sizeof(warp_int32) * p->nquals;
	src[4] = p->joins;
	len[4] = sizeof(WarpJoinSpec) * p->njoins;
	src[5] = p->keys;
	len[5] = sizeof(WarpGroupKey) * p->nkeys;
	src[6] = p->aggs;
	len[6] = sizeof(WarpAggSpec) * p->naggs;
	src[7] = p->tz.at;
	len[7] = sizeof(warp_int64) * p->tz.n;
	src[8] = p->tz.off;
	len[8] = sizeof(warp_int32) * p->tz.n;
	src[9] = p->setvals;
	len[9] = sizeof(warp_int64) * p->nsetvals;
	total = align_up(sizeof(WarpProgram), 64);
	for (i = 0; i < 10; i++)
	{
		off[i] = total;
		total = align_up(total + len[i], 64);
	}
	host = (warp_uint8 *) calloc(1, total);
	if (host == NULL)
	{
		set_why(why, whylen, "out of memory");
		return false;
	}
	if (!dev_malloc(g, &g->d_prog_mem, total, why, whylen))
	{
		free(host);
		return false;
	}
	dev = (warp_uint8 *) g->d_prog_mem;
	for (i = 0; i < 10; i++)
		if (len[i] > 0)
			memcpy(host + off[i], src[i], len[i]);
	dp.cols = (WarpColumnSpec *) (dev + off[0]);
	dp.nodes = (WarpNode *) (dev + off[1]);
	dp.args = (warp_int32 *) (dev + off[2]);
	dp.quals = (warp_int32 *) (dev + off[3]);
	dp.joins = (WarpJoinSpec *) (dev + off[4]);
	dp.keys = (WarpGroupKey *) (dev + off[5]);
	dp.aggs = (WarpAggSpec *) (dev + off[6]);
	dp.tz.at = (const warp_int64 *) (dev + off[7]);
	dp.tz.off = (const warp_int32 *) (dev + off[8]);
	/* text constants: programs with text columns never reach the device
	 * (warp_row_check) */
	dp.nstrings = 0;
	dp.strings = NULL;
	dp.nstrbytes = 0;
	dp.strbytes = NULL;
	dp.setvals = (warp_int64 *) (dev + off[9]);
	memcpy(host, &dp, sizeof(dp));
	g->d_prog = (WarpProgram *) dev;
	g->d_aggs = dp.aggs;
	if (!CUDA_OK(cudaMemcpy(dev, host, total, cudaMemcpyHostToDevice)))
	{
		free(host);
		return false;
	}
	free(host);
	return true;
}

/* every join's table (warp_row_check validated them) */
bool
upload_tables(WarpGpu *g, const WarpProgram *p, WarpJoinTable *const *tables,
			  char *why, size_t whylen)
{
	WarpJoinTable dt[WARP_ROW_MAX_JOINS];
	int			j;

	g->d_table_arrays = (void **) calloc(5 * (p->njoins + 1), sizeof(void *));
	if (g->d_table_arrays == NULL)
	{
		set_why(why, whylen, "out of memory");
		return false;
	}
	for (j = 0; j < p->njoins; j++)
	{
		const WarpJoinTable *t = tables[p->joins[j].table];
		void	   *d;

		dt[j] = *t;
		dt[j].keys = NULL;		/* probes never read the build keys */
		if (!upload(g, t->payload, sizeof(warp_int32) * t->nrows, &d, why, whylen))
			return false;
		dt[j].payload = (warp_int32 *) d;
		if (!upload(g, t->next, sizeof(warp_int32) * t->nrows, &d, why, whylen))
			return false;
		dt[j].next = (warp_int32 *) d;
		dt[j].first = NULL;
		dt[j].slot_key = NULL;
		dt[j].slot_row = NULL;
		if (t->direct && t->nrows > 0)
		{
			if (!upload(g, t->first, sizeof(warp_int32) * (t->max - t->min + 1), &d, why, whylen))
				return false;
			dt[j].first = (warp_int32 *) d;
		}
		else if (!t->direct && t->nrows > 0)
		{
			if (!upload(g, t->slot_key, sizeof(warp_int64) * (t->mask + 1), &d, why, whylen))
				return false;
			dt[j].slot_key = (warp_int64 *) d;
			if (!upload(g, t->slot_row, sizeof(warp_int32) * (t->mask + 1), &d, why, whylen))
				return false;
			dt[j].slot_row = (warp_int32 *) d;
		}
	}
	if (p->njoins == 0)
		return true;
	if (!dev_malloc(g, (void **) &g->d_tables, sizeof(WarpJoinTable) * p->njoins, why, whylen))
		return false;
	return CUDA_OK(cudaMemcpy(g->d_tables, dt, sizeof(WarpJoinTable) * p->njoins,
							  cudaMemcpyHostToDevice));
}

/* ------------------------------------------------------- the column cache */

extern "C" void
warp_gpu_keep_cache_pool(int device)
{
	cudaMemPool_t pool;
	uint64_t	keep = UINT64_MAX;

	if (cudaDeviceGetDefaultMemPool(&pool, device) != cudaSuccess ||
		cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep) != cudaSuccess)
		(void) cudaGetLastError();
}

/* entries live in stream-ordered memory: no device-wide sync to free them */
void *
cache_alloc(void *ctx, uint64_t len)
{
	WarpGpu    *g = (WarpGpu *) ctx;
	void	   *p = NULL;

	if (cudaMallocAsync(&p, (size_t) len, g->copy_stream) != cudaSuccess)
	{
		(void) cudaGetLastError();
		return NULL;
	}
	return p;
}

void
cache_free(void *ctx, void *ptr, void *ready)
{
	WarpGpu    *g = (WarpGpu *) ctx;

	/* every user's kernel is done (the entry was unreferenced) */
	if (cudaFreeAsync(ptr, g->copy_stream) != cudaSuccess)
		(void) cudaGetLastError();
	if (ready)
		(void) cudaEventDestroy((cudaEvent_t) ready);
}

/* let go of the cache entries a slot's kernel read */
void
release_slot_entries(GpudColCache *cache, BatchSlot *bs)
{
	int			i;

	if (cache == NULL)
	{
		bs->ncents = 0;
		return;
	}
	for (i = 0; i < bs->ncents; i++)
		gpud_colcache_release(cache, bs->cents[i]);
	bs->ncents = 0;
}
