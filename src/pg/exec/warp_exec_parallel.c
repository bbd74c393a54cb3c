/*
 * warp_exec_parallel.c — a WarpPreAgg / WarpJoin / WarpScan node under
 * Gather: the dynamic shared memory its participants share (batch claiming,
 * a heap table's parallel scan, the engine's counters for EXPLAIN), and the
 * leader's dimensions and join tables handed to the workers there instead
 * of each building its own.
 *
 * The dimensions are built by warp_exec_dims.c, their join tables by
 * warp_exec_run.c.
 */
#include "postgres.h"

#include "access/tableam.h"
#include "utils/datum.h"
#include "utils/memutils.h"

#include "exec/warp_exec_internal.h"

/* One dimension in the DSM, after WarpShared and the WarpSharedDim array:
 * keys (int64), payload ids (int32), then the payload values as
 * datumSerialize writes them, npayloads * npay of them. */
typedef struct WarpSharedDim
{
	int64		rows;
	int32		npayloads;
	int32		npay;
	Size		off_keys;		/* from the start of WarpShared */
	Size		off_pids;
	Size		off_pay;
	Size		pay_bytes;
	Size		off_table;		/* the join table's flat form */
	Size		table_bytes;
} WarpSharedDim;

Size
warp_estimate_dsm(CustomScanState *node, ParallelContext *pcxt)
{
	WarpScanState *ws = (WarpScanState *) node;
	Size		bytes;
	int			i;
	bool		share;

	/*
	 * The leader builds the dimensions now, before the workers start, and
	 * hands them over in the DSM: one build per query instead of one per
	 * participant (on few cores the workers' builds ran one after another).
	 * Only when no dimension plan depends on a parameter: a rescan changes
	 * no dimension then, so the DSM copy stays right for relaunched workers.
	 * Not when the gate is closed: nothing is built then.
	 */
	ws->dims_shared_bytes = 0;
	ws->heap_pscan_off = 0;
	share = warp_exec_gate_open(ws);
	for (i = 0; share && i < ws->ndims; i++)
		if (!bms_is_empty(ws->dims[i].ps->plan->extParam) ||
			!bms_is_empty(ws->dims[i].ps->plan->allParam) ||
			ws->dims[i].text_key)	/* its strings are not shared */
			share = false;
	if (!share)
	{
		bytes = MAXALIGN(sizeof(WarpShared));
		if (ws->heap)
		{
			/* the heap scan's shared state after the rest */
			ws->heap_pscan_off = bytes;
			bytes = add_size(bytes, table_parallelscan_estimate(ws->fact_rel,
																ws->css.ss.ps.state->es_snapshot));
		}
		return bytes;
	}
	warp_exec_build_dims(ws);

	/*
	 * The join tables too: the workers attach to the leader's (in the DSM)
	 * instead of each building its own from the rows.  No text keys here
	 * (above), so the tables are built from the keys as warp_exec_build_program
	 * leaves them.
	 */
	{
		MemoryContext old = MemoryContextSwitchTo(ws->engine_cxt);

		(void) warp_exec_build_join_tables(ws);
		MemoryContextSwitchTo(old);
		for (i = 0; i < ws->ndims; i++)
			ws->dims[i].table_ready = true;
	}
	bytes = MAXALIGN(sizeof(WarpShared)) + MAXALIGN(sizeof(WarpSharedDim) * Max(ws->ndims, 1));
	for (i = 0; i < ws->ndims; i++)
	{
		WarpDim    *d = &ws->dims[i];
		int64		v;

		bytes = add_size(bytes, MAXALIGN(mul_size(sizeof(int64), d->rows)));
		bytes = add_size(bytes, MAXALIGN(mul_size(sizeof(int32), d->rows)));
		for (v = 0; v < (int64) d->npayloads * d->npay; v++)
		{
			int			k = v % d->npay;

			bytes = add_size(bytes, datumEstimateSpace(d->pvalues[v], d->pnulls[v],
													   d->pay_byval[k], d->pay_len[k]));
		}
		bytes = MAXALIGN(bytes);
		bytes = add_size(bytes, MAXALIGN((Size) warp_join_flat_size(d->table)));
	}
	ws->dims_shared_bytes = bytes;
	if (ws->heap)
	{
		ws->heap_pscan_off = bytes;
		bytes = add_size(bytes, table_parallelscan_estimate(ws->fact_rel,
															ws->css.ss.ps.state->es_snapshot));
	}
	return bytes;
}

/* the leader's dimensions into the DSM (sized by warp_estimate_dsm) */
static void
share_dims(WarpScanState *ws, WarpShared *wsh)
{
	char	   *base = (char *) wsh;
	WarpSharedDim *sd = (WarpSharedDim *) (base + MAXALIGN(sizeof(WarpShared)));
	Size		off = MAXALIGN(sizeof(WarpShared)) +
		MAXALIGN(sizeof(WarpSharedDim) * Max(ws->ndims, 1));
	int			i;

	for (i = 0; i < ws->ndims; i++)
	{
		WarpDim    *d = &ws->dims[i];
		char	   *start,
				   *ptr;
		int64		v;

		sd[i].rows = d->rows;
		sd[i].npayloads = d->npayloads;
		sd[i].npay = d->npay;
		sd[i].off_keys = off;
		if (d->rows > 0)
			memcpy(base + off, d->keys, sizeof(int64) * d->rows);
		off += MAXALIGN(sizeof(int64) * d->rows);
		sd[i].off_pids = off;
		if (d->rows > 0)
			memcpy(base + off, d->pids, sizeof(int32) * d->rows);
		off += MAXALIGN(sizeof(int32) * d->rows);
		sd[i].off_pay = off;
		start = ptr = base + off;
		for (v = 0; v < (int64) d->npayloads * d->npay; v++)
		{
			int			k = v % d->npay;

			datumSerialize(d->pvalues[v], d->pnulls[v], d->pay_byval[k], d->pay_len[k], &ptr);
		}
		sd[i].pay_bytes = ptr - start;
		off = MAXALIGN(off + sd[i].pay_bytes);
		sd[i].off_table = off;
		sd[i].table_bytes = (Size) warp_join_flat_size(d->table);
		warp_join_flatten(d->table, base + off);
		off += MAXALIGN(sd[i].table_bytes);
	}
	if (off != ws->dims_shared_bytes)
		elog(ERROR, "pg_warp: shared dimensions took %zu bytes, %zu estimated",
			 off, ws->dims_shared_bytes);
	wsh->ndims = ws->ndims;
	wsh->dims_shared = true;
}

/* a worker: the leader's dimensions, keys and payload ids used in place */
static void
receive_dims(WarpScanState *ws, WarpShared *wsh)
{
	char	   *base = (char *) wsh;
	WarpSharedDim *sd = (WarpSharedDim *) (base + MAXALIGN(sizeof(WarpShared)));
	MemoryContext old;
	int			i;

	if (wsh->ndims != ws->ndims)
		elog(ERROR, "pg_warp: the leader shared %d dimensions, the plan has %d",
			 wsh->ndims, ws->ndims);
	old = MemoryContextSwitchTo(ws->engine_cxt);
	for (i = 0; i < ws->ndims; i++)
	{
		WarpDim    *d = &ws->dims[i];
		char	   *ptr = base + sd[i].off_pay;
		int64		v,
					nv;

		if (sd[i].npay != d->npay)
			elog(ERROR, "pg_warp: shared dimension %d has %d payload columns, the plan %d",
				 i, sd[i].npay, d->npay);
		d->rows = sd[i].rows;
		d->keys = (int64 *) (base + sd[i].off_keys);
		d->pids = (int32 *) (base + sd[i].off_pids);
		d->npayloads = sd[i].npayloads;
		d->pcap = Max(d->npayloads, 1);
		nv = (int64) d->npayloads * d->npay;
		d->pvalues = palloc(sizeof(Datum) * Max(nv, 1));
		d->pnulls = palloc(sizeof(bool) * Max(nv, 1));
		for (v = 0; v < nv; v++)
			d->pvalues[v] = datumRestore(&ptr, &d->pnulls[v]);
		d->table = palloc(sizeof(WarpJoinTable));
		if (!warp_join_attach(base + sd[i].off_table, (int64) sd[i].table_bytes, d->table))
			elog(ERROR, "pg_warp: shared join table %d is malformed", i);
		d->table_ready = true;
	}
	warp_exec_set_join_ranges(ws);		/* the leader's keys, so the leader's ranges */
	MemoryContextSwitchTo(old);
	ws->dims_ready = true;
	ws->dims_from_leader = true;
}

void
warp_init_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	WarpScanState *ws = (WarpScanState *) node;
	WarpShared *wsh = coordinate;
	ArrowSharedScan *sh = &wsh->scan;

	pg_atomic_init_u64(&sh->next_batch, 0);
	pg_atomic_init_u64(&sh->batches_read, 0);
	pg_atomic_init_u64(&sh->batches_skipped, 0);
	pg_atomic_init_u64(&sh->bytes_read, 0);
	pg_atomic_init_u64(&sh->rows_filtered, 0);
	pg_atomic_init_u64(&wsh->rows_in, 0);
	pg_atomic_init_u64(&wsh->rows_filtered, 0);
	pg_atomic_init_u64(&wsh->rows_joined, 0);
	pg_atomic_init_u64(&wsh->groups, 0);
	wsh->dims_shared = false;
	wsh->ndims = 0;
	if (ws->dims_shared_bytes > 0)
		share_dims(ws, wsh);
	wsh->heap_pscan_off = ws->heap_pscan_off;
	if (ws->heap)
	{
		ws->heap_pscan = (ParallelTableScanDesc) ((char *) wsh + ws->heap_pscan_off);
		table_parallelscan_initialize(ws->fact_rel, ws->heap_pscan,
									  node->ss.ps.state->es_snapshot);
	}
	else
		arrow_scan_use_shared(&ws->scan, sh);
	ws->wshared = wsh;
}

void
warp_reinit_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	WarpScanState *ws = (WarpScanState *) node;

	pg_atomic_write_u64(&((WarpShared *) coordinate)->scan.next_batch, 0);
	if (ws->heap && ws->heap_pscan)
		table_parallelscan_reinitialize(ws->fact_rel, ws->heap_pscan);
}

void
warp_init_worker(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	WarpScanState *ws = (WarpScanState *) node;

	WarpShared *wsh = coordinate;

	if (ws->heap)
		ws->heap_pscan = (ParallelTableScanDesc) ((char *) wsh + wsh->heap_pscan_off);
	else
		arrow_scan_use_shared(&ws->scan, &wsh->scan);
	ws->wshared = wsh;
	if (wsh->dims_shared)
		receive_dims(ws, wsh);
}

/* the DSM goes away before EXPLAIN ANALYZE prints: keep the counters */
void
warp_shutdown(CustomScanState *node)
{
	WarpScanState *ws = (WarpScanState *) node;
	ArrowSharedScan *sh = ws->scan.shared;
	ArrowSharedScan *local = &ws->scan.local_shared;

	if (ws->wshared)
	{
		ws->total_counters.rows_in = pg_atomic_read_u64(&ws->wshared->rows_in);
		ws->total_counters.rows_filtered = pg_atomic_read_u64(&ws->wshared->rows_filtered);
		ws->total_counters.rows_joined = pg_atomic_read_u64(&ws->wshared->rows_joined);
		ws->total_groups = pg_atomic_read_u64(&ws->wshared->groups);
		ws->have_totals = true;
		ws->wshared = NULL;
	}
	if (ws->heap)
	{
		ws->heap_pscan = NULL;
		return;
	}
	if (sh == local)
		return;
	pg_atomic_write_u64(&local->batches_read, pg_atomic_read_u64(&sh->batches_read));
	pg_atomic_write_u64(&local->batches_skipped, pg_atomic_read_u64(&sh->batches_skipped));
	pg_atomic_write_u64(&local->bytes_read, pg_atomic_read_u64(&sh->bytes_read));
	pg_atomic_write_u64(&local->rows_filtered, pg_atomic_read_u64(&sh->rows_filtered));
	pg_atomic_write_u64(&local->next_batch, pg_atomic_read_u64(&sh->next_batch));
	arrow_scan_use_shared(&ws->scan, local);
}
