/*-------------------------------------------------------------------------
 *
 * gpud_job_rows.c
 *	  A row-mode job's rows (WarpProgram.emit_rows: WarpJoin, WarpScan)
 *	  streamed to the backend in chunks (gpud_wire.h: ROWS, NEXT).
 *
 * Without ORDER BY ... LIMIT the rows of each batch go as soon as the
 * batch has run (on the GPU: once the kernel's appended rows are on the
 * host and the lane's turn is left), so the daemon holds one batch's rows and the backend
 * returns the first rows while later batches are still to be read; with
 * it, the driver keeps the candidates for the best rows (a bounded set,
 * warp_topn_order.h; the GPU kernel drops the rows after the threshold the
 * host found) and they go once, at the end.  A chunk is laid out in
 * the arena's row area (after the job) as a GpudResult of rows with no
 * aggregates, which is the form the backend reads groups in; the daemon
 * waits for NEXT before it overwrites it, so the backend's memory stays
 * one chunk whatever the result's size.
 *
 * Pure C; no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "gpud_job_internal.h"

/*
 * Send rows [from, from + n) of the driver as one chunk at the start of
 * the row area and wait for the backend to have read them.  0, or -2 when
 * the backend cancelled or went away.
 */
static int
send_chunk(Run *r, uint64_t roff, const GpudRowSource *src, warp_int64 from, warp_int64 n)
{
	int			nk = r->prog.nkeys;
	GpudResult *res = (GpudResult *) (r->arena + roff);
	uint64_t	off_keys = (sizeof(GpudResult) + 15) & ~(uint64_t) 15;
	uint64_t	off_nulls = (off_keys + (uint64_t) n * nk * sizeof(int64_t) + 15) & ~(uint64_t) 15;
	uint64_t	len = off_nulls + (uint64_t) n * nk;
	int64_t    *keys = (int64_t *) ((uint8_t *) res + off_keys);
	uint8_t    *nulls = (uint8_t *) res + off_nulls;
	warp_int64	g;
	int			k;
	GpudMsg		m;

	memset(res, 0, sizeof(GpudResult));
	res->magic = GPUD_MAGIC;
	res->ngroups = n;
	res->nkeys = nk;
	res->naggs = 0;
	res->off_keys = off_keys;
	res->off_nulls = off_nulls;
	res->off_states = len;
	for (g = 0; g < n; g++)
		for (k = 0; k < nk; k++)
		{
			bool		isnull;

			keys[g * nk + k] = src->key(src->drv, from + g, k, &isnull);
			nulls[g * nk + k] = isnull ? 1 : 0;
		}
	if (should_stop(r->hdr, r->sock) ||
		gpud_send_msg(r->sock, GPUD_ROWS, roff, len, NULL, -1) != 0 ||
		gpud_recv_msg(r->sock, &m) != 0 || m.type != GPUD_NEXT || r->hdr->cancel)
		return -2;
	r->res.rows_sent += n;
	r->res.chunks_sent++;
	return 0;
}

int
gpud_rows_send(Run *r, const GpudRowSource *src)
{
	uint64_t	roff = GPUD_RESULT_OFF(r->job->total);
	uint64_t	head = ((sizeof(GpudResult) + 15) & ~(uint64_t) 15) + 32;
	uint64_t	per_row = (uint64_t) r->prog.nkeys * (sizeof(int64_t) + 1);
	warp_int64	n = src->nrows;
	warp_int64	max_rows,
				from;

	if (n <= 0)
		return 0;
	if (roff > r->arena_size || r->arena_size - roff < head + per_row)
		return -2;				/* the backend left no room for a row:
								 * not one of ours; drop the job */
	/* rows without columns (SELECT 1 FROM ...) are only a count */
	max_rows = per_row > 0 ? (warp_int64) ((r->arena_size - roff - head) / per_row) : n;
	for (from = 0; from < n; from += max_rows)
	{
		int			rc = send_chunk(r, roff, src,
									from, n - from < max_rows ? n - from : max_rows);

		if (rc != 0)
			return rc;
	}
	return 0;
}

static warp_int64
cpu_row_key(const void *drv, warp_int64 row, int k, bool *isnull)
{
	return warp_cpu_group_key((const WarpCpu *) drv, row, k, isnull);
}

void
gpud_rows_of_cpu(const WarpCpu *cpu, GpudRowSource *src)
{
	src->drv = cpu;
	src->nrows = warp_cpu_ngroups(cpu);
	src->key = cpu_row_key;
}

static warp_int64
gpu_row_key(const void *drv, warp_int64 row, int k, bool *isnull)
{
	return warp_gpu_group_key((const WarpGpu *) drv, row, k, isnull);
}

void
gpud_rows_of_gpu(const WarpGpu *gpu, GpudRowSource *src)
{
	src->drv = gpu;
	src->nrows = warp_gpu_nrows(gpu);
	src->key = gpu_row_key;
}
