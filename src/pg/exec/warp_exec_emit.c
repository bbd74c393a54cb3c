/*
 * warp_exec_emit.c — what a WarpPreAgg / WarpJoin / WarpScan node returns,
 * tuple by tuple (the ExecScan access method): its groups, once the
 * program ran; in row mode the joined rows, batch by batch; with ORDER BY
 * ... LIMIT kept in the node, the best rows of all batches (warp_topn.c).
 * The constant quals (PostgreSQL's gating Result) are checked here first.
 *
 * The values come from warp_exec_groups.c, the batches from the drivers
 * (warp_exec_run.c).
 */
#include "postgres.h"

#include "executor/executor.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "exec/warp_exec_internal.h"

/* group (row) g into the slot's values */
static void
store_group(WarpScanState *ws, TupleTableSlot *slot, int64 g)
{
	int64		lg = g;
	WarpCpu    *cpu = warp_exec_group_driver(ws, &lg);
	int			n = list_length(ws->outmap);
	int			i;

	for (i = 0; i < n; i++)
		slot->tts_values[i] = warp_exec_group_datum(ws, cpu, lg, g, i, &slot->tts_isnull[i]);
}

/* under Gather: this participant's counts, for the leader's EXPLAIN */
static void
share_counters(WarpScanState *ws)
{
	if (ws->wshared)
	{
		pg_atomic_fetch_add_u64(&ws->wshared->rows_in, ws->counters.rows_in);
		pg_atomic_fetch_add_u64(&ws->wshared->rows_filtered, ws->counters.rows_filtered);
		pg_atomic_fetch_add_u64(&ws->wshared->rows_joined, ws->counters.rows_joined);
		pg_atomic_fetch_add_u64(&ws->wshared->groups, ws->groups);
	}
}

/*
 * Row mode with ORDER BY ... LIMIT in the node: every batch (round) is
 * consumed into the top-N set before the first row goes up, as PostgreSQL's
 * Sort consumes its input (so every error is raised, as there).  A row is
 * built only when its ORDER BY columns alone say it would be kept.
 */
static void
topn_fill(WarpScanState *ws)
{
	ExprContext *econtext = ws->css.ss.ps.ps_ExprContext;
	int			nk = ws->topn_nkeys;
	Datum	   *keys = palloc(sizeof(Datum) * nk);
	bool	   *nulls = palloc(sizeof(bool) * nk);
	MemoryContext old;

	for (;;)
	{
		int64		g;

		CHECK_FOR_INTERRUPTS();
		if (!warp_exec_rows_next_batch(ws))
			break;
		for (g = 0; g < ws->groups; g++)
		{
			int64		lg = g;
			WarpCpu    *cpu = warp_exec_group_driver(ws, &lg);
			int			k;

			if ((g & 1023) == 0)
			{
				ResetExprContext(econtext);
				CHECK_FOR_INTERRUPTS();
			}
			/* text keys are built in the per-tuple memory */
			old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
			for (k = 0; k < nk; k++)
				keys[k] = warp_exec_group_datum(ws, cpu, lg, g, ws->topn_keys[k].col, &nulls[k]);
			if (warp_topn_wanted(ws->topn, keys, nulls))
			{
				ExecClearTuple(ws->topn_slot);
				store_group(ws, ws->topn_slot, g);
				ExecStoreVirtualTuple(ws->topn_slot);
				warp_topn_add(ws->topn, ws->topn_slot);
				ws->topn_built++;
			}
			MemoryContextSwitchTo(old);
		}
		ws->rows_out += ws->groups;
		/* the rows before a failing one are in: now its error */
		warp_exec_rows_raise_pending(ws);
	}
	ResetExprContext(econtext);
	ws->rows_done = true;
	ws->groups = ws->rows_out;	/* for EXPLAIN and the leader */
	ws->next_group = ws->groups;
	share_counters(ws);
	warp_topn_sort(ws->topn);
}

static TupleTableSlot *
topn_next(WarpScanState *ws, TupleTableSlot *slot)
{
	if (!ws->executed)
	{
		warp_exec_rows_start(ws);
		ws->executed = true;
	}
	if (!ws->topn_done)
	{
		topn_fill(ws);
		ws->topn_done = true;
	}
	warp_topn_next(ws->topn, slot);
	return slot;
}

/* Row mode: the next joined row, or an empty slot at the end. */
static TupleTableSlot *
rows_next(WarpScanState *ws, TupleTableSlot *slot)
{
	ExprContext *econtext = ws->css.ss.ps.ps_ExprContext;

	if (ws->topn)
		return topn_next(ws, slot);
	if (!ws->executed)
	{
		warp_exec_rows_start(ws);
		ws->executed = true;
	}
	ExecClearTuple(slot);
	for (;;)
	{
		if (ws->next_group < ws->groups)
		{
			/* text values live until the next tuple (ExecScan resets) */
			MemoryContext old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);

			store_group(ws, slot, ws->next_group++);
			MemoryContextSwitchTo(old);
			ws->rows_out++;
			return ExecStoreVirtualTuple(slot);
		}
		warp_exec_rows_raise_pending(ws);
		if (ws->rows_done)
			return slot;
		CHECK_FOR_INTERRUPTS();
		if (!warp_exec_rows_next_batch(ws))
		{
			ws->rows_done = true;
			ws->groups = ws->rows_out;	/* for EXPLAIN and the leader */
			ws->next_group = ws->groups;
			share_counters(ws);
		}
	}
}

/*
 * The constant quals (WHERE $1 > 0), evaluated once per scan before any
 * dimension is built or batch read, as PostgreSQL's gating Result does:
 * false or NULL, and the node returns nothing.
 */
bool
warp_exec_gate_open(WarpScanState *ws)
{
	if (!ws->gate_checked)
	{
		ExprContext *econtext = ws->css.ss.ps.ps_ExprContext;

		ResetExprContext(econtext);
		ws->gate_closed = !ExecQual(ws->gate, econtext);
		ws->gate_checked = true;
	}
	return !ws->gate_closed;
}

TupleTableSlot *
warp_next(ScanState *node)
{
	WarpScanState *ws = (WarpScanState *) node;
	TupleTableSlot *slot = node->ss_ScanTupleSlot;

	if (!warp_exec_gate_open(ws))
	{
		ws->executed = true;
		return ExecClearTuple(slot);
	}
	if (ws->emit_rows)
		return rows_next(ws, slot);
	if (!ws->executed)
	{
		warp_exec_run_engine(ws);
		ws->executed = true;
		ws->next_group = 0;
		share_counters(ws);
	}
	ExecClearTuple(slot);
	if (ws->next_group >= ws->groups)
		return slot;
	store_group(ws, slot, ws->next_group++);
	return ExecStoreVirtualTuple(slot);
}
