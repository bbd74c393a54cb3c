/*-------------------------------------------------------------------------
 *
 * warp_gpu.cu
 *	  The GPU driver of the engine (see warp_gpu.h).
 *
 * Per record batch: the program's columns (only the byte ranges the batch
 * uses, validity bitmaps and dictionaries included) are copied into one
 * device staging buffer with cudaMemcpyAsync on the copy stream, then one
 * fused kernel on the compute stream runs every row through the whole
 * program with the row evaluator of src/engine/warp_row.h (quals, join
 * probes with duplicate chains, group keys, aggregate updates with atomics
 * into the device group table).
 *
 * Batches are pipelined two deep: batch i has its own staging buffer and
 * column descriptors (slot i % 2); its copies are queued first, then the
 * host waits for batch i-1's kernel (which ran while batch i's copies and
 * the caller's reading of batch i went on), checks its status and group
 * count, and queues batch i's kernel behind an event on its copies.  So
 * copies overlap kernels, and the host knows the exact group count before
 * every launch, which the group table's flushing needs.  The row evaluator's
 * semantics are unit-tested on the CPU against the CPU driver
 * (test/unit/test_engine_row.c); this file only moves data and launches.
 *
 * Anything a row cannot do exactly (an error PostgreSQL would raise, a
 * value out of a column's range, a float aggregate input the atomics
 * would not reproduce) sets a device status; the batch then returns -1 and
 * the daemon re-runs the query on the CPU driver, which raises the error.
 *
 * The group table.  Direct form when every key is a dimension payload id
 * and the product of the payload counts is small: the slot is the code, it
 * cannot overflow.  Otherwise an open-addressing table of nslots slots,
 * filled to at most nslots / 2.  A fact row creates at most `fan` groups
 * (the product of the longest duplicate-key chains of the joins that group
 * keys read), so before every launch the host knows an upper bound of the
 * groups it can create; when the rows left would not fit, the table first
 * doubles on the device (grow_groups, while it stays within
 * HASH_BYTES_GROW_MAX and the query's memory share), and else is flushed:
 * compacted on the device, downloaded, merged into the host result
 * (warp_row_result_merge: the states combine per aggregate kind), and
 * cleared; a batch bigger than the free room runs in slices.  Rows are
 * never lost.
 *
 * Join tables are uploaded once, at create.  The CUDA context is created
 * with blocking synchronization so a waiting daemon thread sleeps instead
 * of spinning on a core OLTP backends need.
 *
 * This file holds the driver's lifecycle: error reporting, the devices,
 * create (context, streams, events, uploads) and destroy, and the
 * counters.  The rest, by concern (warp_gpu_internal.h declares what
 * they share): warp_gpu_kernels.cu (the kernels), warp_gpu_memory.cu
 * (device memory), warp_gpu_groups.cu (the group table),
 * warp_gpu_stage.cu (host memory and a batch's copies) and
 * warp_gpu_batch.cu (running batches).
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "warp_gpu_internal.h"

bool		context_poisoned = false;

#define MAX_DEVICES 64

static bool blocking_sync_set[MAX_DEVICES];

/* ----------------------------------------------------------------- errors */

void
set_why(char *why, size_t whylen, const char *fmt,...)
{
	va_list		ap;

	if (why == NULL || whylen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
}

/* errors after which the context is unusable (every later call fails) */
static bool
is_sticky(cudaError_t e)
{
	switch (e)
	{
		case cudaErrorIllegalAddress:
		case cudaErrorLaunchFailure:
		case cudaErrorHardwareStackError:
		case cudaErrorIllegalInstruction:
		case cudaErrorMisalignedAddress:
		case cudaErrorInvalidAddressSpace:
		case cudaErrorInvalidPc:
		case cudaErrorAssert:
		case cudaErrorLaunchTimeout:
		case cudaErrorECCUncorrectable:
		case cudaErrorContextIsDestroyed:
			return true;
		default:
			return false;
	}
}

/* true if e is success; else note it (and whether it poisoned the context) */
bool
cuda_ok(cudaError_t e, const char *what, char *why, size_t whylen)
{
	if (e == cudaSuccess)
		return true;
	if (is_sticky(e))
		context_poisoned = true;
	set_why(why, whylen, "CUDA error in %s: %s (%s)", what, cudaGetErrorString(e),
			cudaGetErrorName(e));
	(void) cudaGetLastError();	/* clear a non-sticky error */
	return false;
}

/* ------------------------------------------------------------- interface */

extern "C" int
warp_gpu_device_count(char *why, size_t whylen)
{
	int			n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);

	if (e != cudaSuccess)
	{
		set_why(why, whylen, "no usable CUDA device: %s", cudaGetErrorString(e));
		(void) cudaGetLastError();
		return 0;
	}
	if (n == 0)
		set_why(why, whylen, "no CUDA device");
	return n;
}

extern "C" void
warp_gpu_device_name(int device, char *buf, size_t len)
{
	cudaDeviceProp prop;

	if (cudaGetDeviceProperties(&prop, device) != cudaSuccess)
	{
		(void) cudaGetLastError();
		snprintf(buf, len, "GPU %d", device);
		return;
	}
	snprintf(buf, len, "%s", prop.name);
}

/*
 * Ask for blocking synchronization on a device, once, preferably before
 * anything creates its context (the first cudaHostAlloc or cudaMalloc
 * does).  CUDA 12 and later overwrite the flags of an active primary
 * context too; an error here only costs a spinning wait.
 */
void
set_blocking_sync(int device)
{
	if (device < 0 || device >= MAX_DEVICES || blocking_sync_set[device])
		return;
	if (cudaSetDevice(device) != cudaSuccess ||
		cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync) != cudaSuccess)
		(void) cudaGetLastError();
	blocking_sync_set[device] = true;
}

extern "C" int
warp_gpu_warmup(int device, char *why, size_t whylen)
{
	cudaFuncAttributes attr;

	set_blocking_sync(device);
	/* the context, and every kernel's module (CUDA loads them lazily) */
	if (!CUDA_OK(cudaSetDevice(device)) || !CUDA_OK(cudaFree(0)) ||
		!CUDA_OK(cudaFuncGetAttributes(&attr, warp_gpu_rows)) ||
		!CUDA_OK(cudaFuncGetAttributes(&attr, warp_gpu_clear)) ||
		!CUDA_OK(cudaFuncGetAttributes(&attr, warp_gpu_compact)))
		return -1;
	return 0;
}

extern "C" bool
warp_gpu_context_poisoned(void)
{
	return context_poisoned;
}

extern "C" void
warp_gpu_destroy(WarpGpu *g)
{
	int			i;

	if (g == NULL)
		return;
	if (!context_poisoned)
	{
		(void) cudaSetDevice(g->device);
		if (g->copy_stream)
			(void) cudaStreamSynchronize(g->copy_stream);
		if (g->stream)
			(void) cudaStreamSynchronize(g->stream);
		cudaFree(g->d_prog_mem);
		for (i = 0; i < g->n_table_arrays; i++)
			cudaFree(g->d_table_arrays[i]);
		cudaFree(g->d_tables);
		for (i = 0; i < NBATCH_SLOTS; i++)
		{
			BatchSlot  *bs = &g->slot[i];

			release_slot_entries(g->cache, bs);
			cudaFree(bs->d_cols);
			cudaFree(bs->d_stage);
			cudaFreeHost(bs->h_cols);
			if (bs->ev_copy0)
				cudaEventDestroy(bs->ev_copy0);
			if (bs->ev_copy1)
				cudaEventDestroy(bs->ev_copy1);
			if (bs->ev_run0)
				cudaEventDestroy(bs->ev_run0);
			if (bs->ev_done)
				cudaEventDestroy(bs->ev_done);
		}
		cudaFree(g->grp.state);
		cudaFree(g->grp.keys);
		cudaFree(g->grp.knull);
		cudaFree(g->grp.aggs);
		cudaFree(g->d_res);
		cudaFree(g->d_out);
		cudaFreeHost(g->h_res);
		if (g->stream)
			cudaStreamDestroy(g->stream);
		if (g->copy_stream)
			cudaStreamDestroy(g->copy_stream);
		(void) cudaGetLastError();
	}
	for (i = 0; i < NBATCH_SLOTS; i++)
		free(g->slot[i].cents);
	free(g->d_table_arrays);
	free(g->h_out);
	warp_row_result_free(&g->result);
	free(g);
}

extern "C" WarpGpu *
warp_gpu_create(int device, GpudColCache *cache, const WarpProgram *prog,
				WarpJoinTable *const *tables,
				const WarpGpuMem *mem, char *why, size_t whylen)
{
	WarpGpu    *g;
	const char *bad;
	cudaDeviceProp prop;
	int			i;

	if (context_poisoned)
	{
		set_why(why, whylen, "the CUDA context is unusable");
		return NULL;
	}
	if ((bad = warp_row_check(prog, tables)) != NULL)
	{
		set_why(why, whylen, "%s", bad);
		return NULL;
	}
	g = (WarpGpu *) calloc(1, sizeof(WarpGpu));
	if (g == NULL || !warp_row_result_init(&g->result, prog->nkeys, prog->naggs))
	{
		set_why(why, whylen, "out of memory");
		free(g);
		return NULL;
	}
#ifndef WARP_GPU_NO_PREFILTER	/* (an A/B switch: every quals by the interpreter) */
	warp_row_pre_plan(prog, &g->pre);
#endif
	g->device = device;
	g->cache = cache;
	g->prog = prog;
	if (mem)
		g->mem = *mem;
	g->npend = 0;
	set_blocking_sync(device);
	if (!CUDA_OK(cudaSetDevice(device)))
		goto fail;
	if (!CUDA_OK(cudaGetDeviceProperties(&prop, device)))
		goto fail;
	if (prop.major * 10 + prop.minor < 75)
	{
		set_why(why, whylen, "GPU compute capability %d.%d is below 7.5", prop.major, prop.minor);
		goto fail;
	}
	g->nsm = prop.multiProcessorCount > 0 ? prop.multiProcessorCount : 1;
	if (!row_launch_shape(g, prog, (int) prop.sharedMemPerBlockOptin, why, whylen))
		goto fail;
	if (!CUDA_OK(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking)) ||
		!CUDA_OK(cudaStreamCreateWithFlags(&g->copy_stream, cudaStreamNonBlocking)))
		goto fail;
	for (i = 0; i < NBATCH_SLOTS; i++)
	{
		BatchSlot  *bs = &g->slot[i];

		if (!CUDA_OK(cudaEventCreate(&bs->ev_copy0)) ||
			!CUDA_OK(cudaEventCreateWithFlags(&bs->ev_copy1, cudaEventBlockingSync)) ||
			!CUDA_OK(cudaEventCreate(&bs->ev_run0)) ||
			!CUDA_OK(cudaEventCreateWithFlags(&bs->ev_done, cudaEventBlockingSync)) ||
			!CUDA_OK(cudaMallocHost(&bs->h_cols, sizeof(WarpRowCol) * (prog->ncols + 1))) ||
			!dev_malloc(g, (void **) &bs->d_cols, sizeof(WarpRowCol) * (prog->ncols + 1), why, whylen))
			goto fail;
		bs->cents = (GpudColEntry **) calloc(4 * (prog->ncols + 1), sizeof(GpudColEntry *));
		if (bs->cents == NULL)
		{
			set_why(why, whylen, "out of memory");
			goto fail;
		}
	}
	if (!upload_program(g, prog, why, whylen) ||
		!upload_tables(g, prog, tables, why, whylen))
		goto fail;
	if (!setup_groups(g, prog, tables, why, whylen))
		goto fail;
	(void) tile_launch_shape(g, prog, tables);
	if (!CUDA_OK(cudaStreamSynchronize(g->stream)))
		goto fail;
	return g;

fail:
	warp_gpu_destroy(g);
	return NULL;
}

/* ------------------------------------------------------------- counters */

extern "C" void
warp_gpu_counters(const WarpGpu *g, WarpCpuCounters *c)
{
	c->rows_in = g->rows_in;
	c->rows_filtered = g->h_res ? (warp_int64) g->h_res->rows_filtered : 0;
	c->rows_joined = g->h_res ? (warp_int64) g->h_res->rows_joined : 0;
}

extern "C" warp_int64
warp_gpu_cached_bytes(const WarpGpu *g)
{
	return g->cached_bytes;
}

extern "C" void
warp_gpu_flush_stats(const WarpGpu *g, double *copy_ms, double *host_ms)
{
	*copy_ms = g->flush_copy_ms;
	*host_ms = g->flush_host_ms;
}

extern "C" void
warp_gpu_transfer_stats(const WarpGpu *g, warp_int64 *bytes, double *copy_ms,
						double *kernel_ms)
{
	*bytes = g->bytes;
	*copy_ms = g->copy_ms;
	*kernel_ms = g->kernel_ms;
}
