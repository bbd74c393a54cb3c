/*-------------------------------------------------------------------------
 *
 * warp_dim_arrow.c
 *	  A dimension's rows read by the engine straight from its Arrow batches.
 *
 * A star query's dimension side is usually a plain arrow_fdw scan with a
 * qual or two (c_region = 'AMERICA').  Run through PostgreSQL's executor,
 * every row the scan's prefilter keeps becomes a tuple of every referenced
 * column, PostgreSQL evaluates the quals again on it, and a projection picks
 * the join key and the group columns: with the dimension cache cold (a new
 * connection, a changed table) that build took longer than the fact scan
 * itself (SSB q4.2: 40 ms of build against 31 ms of scan at SF=1).  Here
 * the batches come through arrow_fdw's own scan (the same files, batch
 * skipping, raw-value filter and counters), one engine program of all the
 * scan's quals decides every row exactly, and only the output columns of
 * the rows that pass become Datums.
 *
 * Taken only where that is exactly PostgreSQL's answer: an arrow_fdw scan
 * that is not parallel-aware, whose output columns are plain columns of its
 * table, and whose quals the engine computes every one of.  A batch the
 * engine gives up on (an error such as a division by zero, a value it
 * cannot read, a column the file lacks) goes through PostgreSQL's quals row
 * by row, so PostgreSQL raises its own error where its scan would.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "executor/executor.h"
#include "nodes/execnodes.h"
#include "utils/memutils.h"

#include "arrow_scan.h"
#include "pg_warp.h"
#include "warp.h"
#include "warp_dim_arrow.h"
#include "warp_scan_filter.h"

struct WarpDimArrow
{
	ForeignScanState *node;
	ArrowScanState *ss;
	WarpScanFilter *filter;		/* all the quals; NULL when there are none */
	int			nout;
	AttrNumber *out_attno;		/* per output column */
	bool	   *keep;			/* rows of the batch that pass */
	int64		keep_len;
	bool		batch_loaded;
	bool		batch_by_pg;	/* the engine gave this batch up */
	int64		row;			/* next row of the batch */
	MemoryContext batch_cxt;	/* the values of this batch's rows */
	int64		rows;
};

/* the attribute number of each output column, or false if one is not a
 * plain column of the scanned table */
static bool
output_attnos(ForeignScanState *node, AttrNumber *attno, int natts)
{
	Plan	   *plan = node->ss.ps.plan;
	Index		scanrelid = ((Scan *) plan)->scanrelid;
	ListCell   *lc;
	int			i = 0;

	foreach(lc, plan->targetlist)
	{
		TargetEntry *tle = lfirst(lc);
		Var		   *var = (Var *) tle->expr;

		if (!IsA(var, Var) || var->varno != scanrelid || var->varlevelsup != 0 ||
			var->varattno < 1 || var->varattno > natts)
			return false;
		attno[i++] = var->varattno;
	}
	return true;
}

WarpDimArrow *
warp_dim_arrow_begin(PlanState *ps)
{
	ArrowScanState *ss = arrow_fdw_scan_state(ps);
	ForeignScanState *node = (ForeignScanState *) ps;
	WarpDimArrow *r;
	List	   *quals;

	if (ss == NULL || !pgwarp_enable_dim_scan || ps->plan->parallel_aware ||
		ss->shared != &ss->local_shared || ss->nfiles == 0 || ss->batch_start == NULL)
		return NULL;
	r = palloc0(sizeof(WarpDimArrow));
	r->node = node;
	r->ss = ss;
	r->nout = list_length(ps->plan->targetlist);
	r->out_attno = palloc(sizeof(AttrNumber) * Max(r->nout, 1));
	if (!output_attnos(node, r->out_attno, ss->natts))
	{
		pfree(r->out_attno);
		pfree(r);
		return NULL;
	}
	quals = ps->plan->qual;
	if (quals != NIL)
	{
		r->filter = warp_scan_filter_create(quals, ((Scan *) ps->plan)->scanrelid,
											ps->ps_ExprContext);
		if (r->filter == NULL || warp_scan_filter_nquals(r->filter) != list_length(quals))
		{
			if (r->filter)
				warp_scan_filter_free(r->filter);
			pfree(r->out_attno);
			pfree(r);
			return NULL;
		}
		/* a parallel worker is one participant of many already */
		if (!IsParallelWorker())
			warp_scan_filter_set_threads(r->filter, pgwarp_cpu_thread_count());
	}
	r->batch_cxt = AllocSetContextCreate(CurrentMemoryContext, "pg_warp dimension batch",
										 ALLOCSET_DEFAULT_SIZES);
	return r;
}

/* load the next batch and decide its rows; false at the end */
static bool
next_batch(WarpDimArrow *r)
{
	ArrowScanState *ss = r->ss;
	int64		kept = 0;
	int64		i;

	/*
	 * No row filter in the scan: the raw-value filter and arrow_fdw's engine
	 * prefilter would only run a part of the quals that r->filter runs in
	 * full (the rows it removes are counted with theirs, for EXPLAIN).
	 */
	if (!arrow_scan_next_batch(ss, r->node->ss.ps.ps_ExprContext, false))
	{
		ss->done = true;
		return false;
	}
	MemoryContextReset(r->batch_cxt);
	if (ss->cur_rows > r->keep_len)
	{
		if (r->keep)
			pfree(r->keep);
		r->keep = MemoryContextAllocHuge(GetMemoryChunkContext(r), sizeof(bool) * ss->cur_rows);
		r->keep_len = ss->cur_rows;
	}
	for (i = 0; i < ss->cur_rows; i++)
	{
		r->keep[i] = ss->cur_keep == NULL || ss->cur_keep[i];
		kept += r->keep[i];
	}
	r->batch_by_pg = false;
	if (r->filter && kept > 0)
	{
		if (warp_scan_filter_decide(r->filter, ss->cur_cols, ss->cur_rows, r->keep, kept, &kept))
			pg_atomic_fetch_add_u64(&ss->shared->rows_filtered, ss->cur_rows - kept);
		else
			r->batch_by_pg = true;
	}
	r->row = 0;
	r->batch_loaded = true;
	return true;
}

bool
warp_dim_arrow_next(WarpDimArrow *r, Datum *values, bool *isnull)
{
	ArrowScanState *ss = r->ss;

	for (;;)
	{
		MemoryContext old;
		int64		i;
		int			k;

		if (!r->batch_loaded || r->row >= ss->cur_rows)
		{
			if (!next_batch(r))
				return false;
			continue;
		}
		i = r->row++;
		if (!r->keep[i])
			continue;
		old = MemoryContextSwitchTo(r->batch_cxt);
		if (r->batch_by_pg)
		{
			/* PostgreSQL's quals on the whole row, as arrow_fdw's scan runs
			 * them */
			ExprContext *econtext = r->node->ss.ps.ps_ExprContext;
			TupleTableSlot *slot = r->node->ss.ss_ScanTupleSlot;
			bool		pass;

			ExecClearTuple(slot);
			arrow_scan_row_values(ss, i, slot->tts_values, slot->tts_isnull);
			ExecStoreVirtualTuple(slot);
			ResetExprContext(econtext);
			econtext->ecxt_scantuple = slot;
			pass = ExecQual(r->node->ss.ps.qual, econtext);
			if (pass)
				for (k = 0; k < r->nout; k++)
				{
					values[k] = slot->tts_values[r->out_attno[k] - 1];
					isnull[k] = slot->tts_isnull[r->out_attno[k] - 1];
				}
			MemoryContextSwitchTo(old);
			if (!pass)
				continue;
		}
		else
		{
			ScanFile   *sf = &ss->files[ss->cur_file];

			for (k = 0; k < r->nout; k++)
				values[k] = arrow_scan_value(ss, sf, r->out_attno[k] - 1, i, &isnull[k]);
			MemoryContextSwitchTo(old);
		}
		r->rows++;
		return true;
	}
}

int64
warp_dim_arrow_end(WarpDimArrow *r)
{
	int64		rows = r->rows;

	r->ss->done = true;
	if (r->filter)
		warp_scan_filter_free(r->filter);
	MemoryContextDelete(r->batch_cxt);
	if (r->keep)
		pfree(r->keep);
	pfree(r->out_attno);
	pfree(r);
	return rows;
}
