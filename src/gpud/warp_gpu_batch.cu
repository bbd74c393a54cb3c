/*-------------------------------------------------------------------------
 *
 * warp_gpu_batch.cu
 *	  Running record batches on the GPU driver (see warp_gpu.cu): the
 *	  two-deep pipeline of batch slots, the waits for a batch's kernels
 *	  and their status, and warp_gpu_run_batch with its helpers -- room in
 *	  the group table for the batch, and its kernel launches in slices that
 *	  cannot overflow it.  A batch's copies are planned and queued by
 *	  warp_gpu_stage.cu; the group table grows and flushes in
 *	  warp_gpu_groups.cu.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>

#include "warp_gpu_internal.h"

/* message for a row status */
static void
row_status_why(int st, long long row, char *why, size_t whylen)
{
	if (st == WARP_ROW_LOAD)
		set_why(why, whylen, "row %lld: a column value is out of range of its type", row);
	else if (st == WARP_ROW_BAD)
		set_why(why, whylen, "row %lld: data or values the GPU driver does not handle exactly", row);
	else if (st == WARP_ROW_FULL)
		set_why(why, whylen, "the device group table is full");
	else if (st > 0 && st < (int) WARP_STATUS_COUNT)
		set_why(why, whylen, "row %lld: %s", row, warp_status_message((WarpStatus) st));
	else
		set_why(why, whylen, "row %lld: status %d", row, st);
}

/* ---------------------------------------------------------- pipeline */

static void
add_elapsed(cudaEvent_t a, cudaEvent_t b, double *acc)
{
	float		ms = 0;

	if (cudaEventElapsedTime(&ms, a, b) == cudaSuccess)
		*acc += ms;
	else
		(void) cudaGetLastError();
}

/*
 * Wait for the oldest batch whose kernels were not waited for, and take
 * its status and the group count (the count may already include later
 * kernels' groups: an upper bound, exact once nothing is pending).  false
 * (why set) when a row failed or on a CUDA error.
 */
static bool
wait_oldest(WarpGpu *g, char *why, size_t whylen)
{
	BatchSlot  *bs;
	int			i;

	if (g->npend == 0)
		return true;
	bs = &g->slot[g->pend[0]];
	for (i = 1; i < g->npend; i++)
		g->pend[i - 1] = g->pend[i];
	g->npend--;
	if (!CUDA_OK(cudaEventSynchronize(bs->ev_done)))
		return false;
	release_slot_entries(g->cache, bs);
	add_elapsed(bs->ev_copy0, bs->ev_copy1, &g->copy_ms);
	add_elapsed(bs->ev_run0, bs->ev_done, &g->kernel_ms);
	if (g->h_res->status != 0)
	{
		row_status_why(g->h_res->status, g->h_res->bad_row, why, whylen);
		return false;
	}
	g->used = (warp_int64) g->h_res->nused;
	return true;
}

/* wait for every batch queued; g->used is then exact */
static bool
wait_pending(WarpGpu *g, char *why, size_t whylen)
{
	while (g->npend > 0)
		if (!wait_oldest(g, why, whylen))
			return false;
	return true;
}

/* is slot k's batch still to be waited for? */
static bool
slot_pending(const WarpGpu *g, int k)
{
	int			i;

	for (i = 0; i < g->npend; i++)
		if (g->pend[i] == k)
			return true;
	return false;
}

/* ------------------------------------------------------------- a batch */

/*
 * The kernels of the batch before may still run: this batch's kernel
 * is queued behind them without waiting when the group table has room
 * for the groups both could create (always, in direct form), so the
 * device goes from one batch to the next with no gap.  Else wait, for
 * the exact group count.  Either way the batch before has finished
 * reading the caller's memory (its copies) on return, as the caller
 * frees it then.  *used_now: the groups the device table may hold.
 */
static bool
room_for_batch(WarpGpu *g, warp_int64 nrows, warp_int64 *used_now, char *why, size_t whylen)
{
	warp_int64	bound = g->used;
	int			i;

	for (i = 0; i < g->npend; i++)
		bound += g->fan * g->slot[g->pend[i]].nrows;
	if (!g->grp.direct && bound + g->fan * nrows > g->max_fill)
	{
		if (!wait_pending(g, why, whylen))
			return false;
	}
	else
		*used_now = bound;
	for (i = 0; i < g->npend; i++)
		if (!CUDA_OK(cudaEventSynchronize(g->slot[g->pend[i]].ev_copy1)))
			return false;
	if (g->npend == 0)
		*used_now = g->used;
	return true;
}

/*
 * The end *r1 of the slice of rows from r0 that cannot overflow a hash
 * group table holding up to used_now groups.
 */
static bool
slice_end(WarpGpu *g, warp_int64 r0, warp_int64 nrows, warp_int64 used_now, warp_int64 *r1,
		  char *why, size_t whylen)
{
	warp_int64	fit = (g->max_fill - used_now) / g->fan;

	/* a bigger table first; a flush when it cannot grow */
	while (fit < nrows - r0 && g->used > 0)
	{
		int			grown = grow_groups(g, why, whylen);

		if (grown < 0)
			return false;
		if (grown == 0)
			break;
		fit = (g->max_fill - used_now) / g->fan;
	}
	if (fit < nrows - r0 && g->used > 0)
	{
		if (!flush_groups(g, why, whylen))
			return false;
		fit = g->max_fill / g->fan;
	}
	if (fit < nrows - r0)
		*r1 = r0 + fit;
	return true;
}

/* this batch's kernels, behind its copies */
static bool
run_slices(WarpGpu *g, BatchSlot *bs, warp_int64 nrows, warp_int64 used_now,
		   char *why, size_t whylen)
{
	warp_int64	r0;

	if (!CUDA_OK(cudaStreamWaitEvent(g->stream, bs->ev_copy1, 0)) ||
		!CUDA_OK(cudaEventRecord(bs->ev_run0, g->stream)))
		return false;
	for (r0 = 0; r0 < nrows;)
	{
		warp_int64	r1 = nrows;
		WarpRowEnv	env;

		/* in slices that cannot overflow the group table */
		if (!g->grp.direct && !slice_end(g, r0, nrows, used_now, &r1, why, whylen))
			return false;
		env.p = g->d_prog;
		env.tables = g->d_tables;
		env.cols = bs->d_cols;
		env.nrows = nrows;
		env.pre = g->pre;
		if (g->tile_on)
		{
			if (!tile_launch(g, &env, r0, r1, why, whylen))
				return false;
		}
		else
			warp_gpu_rows<<<row_grid(g, r1 - r0), g->row_threads, g->row_smem, g->stream>>>(
				env, g->grp, (long long) r0, (long long) r1, g->d_res, g->prog->nnodes,
				g->prog->njoins);
		if (!CUDA_OK(cudaGetLastError()) ||
			!CUDA_OK(cudaMemcpyAsync(g->h_res, g->d_res, sizeof(DevResult),
									 cudaMemcpyDeviceToHost, g->stream)))
			return false;
		if (r1 < nrows)
		{
			/* another slice follows: it needs this one's group count */
			if (!CUDA_OK(cudaStreamSynchronize(g->stream)))
				return false;
			if (g->h_res->status != 0)
			{
				row_status_why(g->h_res->status, g->h_res->bad_row, why, whylen);
				return false;
			}
			g->used = (warp_int64) g->h_res->nused;
			used_now = g->used;
		}
		r0 = r1;
	}
	return true;
}

extern "C" int
warp_gpu_run_batch(WarpGpu *g, const ArrowArray *cols, warp_int64 nrows,
				   const WarpGpuFile *file, char *why, size_t whylen)
{
	BatchSlot  *bs = &g->slot[g->next_slot];
	warp_int64	used_now = 0;	/* groups the device table may hold */

	if (g->failed || g->finished || context_poisoned)
	{
		set_why(why, whylen, "the GPU driver cannot go on");
		return -1;
	}
	g->rows_in += nrows;
	if (nrows <= 0)
		return 0;
	if (!CUDA_OK(cudaSetDevice(g->device)))
		goto fail;

	/*
	 * This slot's last batch (two back) must be done before its staging
	 * buffer and descriptors are reused; the queue is oldest first, so
	 * that waits for nothing newer.  Then describe the columns and plan
	 * their copies.
	 */
	while (slot_pending(g, g->next_slot))
		if (!wait_oldest(g, why, whylen))
			goto fail;
	if (!stage_batch(g, bs, cols, nrows, file, why, whylen) ||
		!room_for_batch(g, nrows, &used_now, why, whylen) ||
		!run_slices(g, bs, nrows, used_now, why, whylen))
		goto fail;
	if (!CUDA_OK(cudaEventRecord(bs->ev_done, g->stream)))
		goto fail;
	bs->nrows = nrows;
	g->pend[g->npend++] = g->next_slot;
	g->next_slot = (g->next_slot + 1) % NBATCH_SLOTS;
	return 0;

fail:
	g->failed = true;
	return -1;
}

extern "C" int
warp_gpu_wait(WarpGpu *g, char *why, size_t whylen)
{
	int			rc = 0;

	if (context_poisoned)
	{
		set_why(why, whylen, "the GPU driver cannot go on");
		g->failed = true;
		return -1;
	}
	(void) cudaSetDevice(g->device);
	if (!g->failed && !wait_pending(g, why, whylen))
		rc = -1;
	/* whatever happened, nothing may still read the caller's memory */
	if (cudaStreamSynchronize(g->copy_stream) != cudaSuccess ||
		cudaStreamSynchronize(g->stream) != cudaSuccess)
	{
		if (rc == 0)
			set_why(why, whylen, "CUDA error while waiting for the device: %s",
					cudaGetErrorString(cudaGetLastError()));
		(void) cudaGetLastError();
		rc = -1;
	}
	else
	{
		int			i;

		for (i = 0; i < NBATCH_SLOTS; i++)
			release_slot_entries(g->cache, &g->slot[i]);
	}
	if (rc != 0 || g->failed)
	{
		g->failed = true;
		return -1;
	}
	return 0;
}

extern "C" int
warp_gpu_finish(WarpGpu *g, char *why, size_t whylen)
{
	if (g->failed || context_poisoned)
	{
		set_why(why, whylen, "the GPU driver cannot go on");
		return -1;
	}
	if (g->finished)
		return 0;
	if (!CUDA_OK(cudaSetDevice(g->device)) || !wait_pending(g, why, whylen) ||
		!flush_groups(g, why, whylen))
	{
		g->failed = true;
		return -1;
	}
	warp_row_result_final(&g->result, g->prog);
	g->finished = true;
	return 0;
}
