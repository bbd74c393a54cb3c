/*
 * warp_exec_explain.c — EXPLAIN of a WarpPreAgg / WarpJoin / WarpScan
 * node: where it runs, its filters, joins, group keys and top-N, the fact
 * scan (arrow_scan.c), and under ANALYZE the engine's counters, where the
 * program ran and how long each phase took.
 *
 * The state it shows is warp_exec_internal.h's WarpScanState, filled by
 * the other warp_exec*.c files.
 */
#include "postgres.h"

#include "access/stratnum.h"
#include "commands/explain.h"
#include "nodes/makefuncs.h"
#include "rewrite/rewriteManip.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"

#include "exec/warp_exec_internal.h"

/* an expression of the plan, with its Vars moved by setrefs' offset */
static char *
deparse(WarpScanState *ws, List *context, Node *expr)
{
	Node	   *e = copyObject(expr);

	if (ws->rtoffset != 0)
		OffsetVarNodes(e, ws->rtoffset, 0);
	return deparse_expression(e, context, true, false);
}

/* ORDER BY ... LIMIT kept here: "Top-N: 100 by a DESC, b" */
static void
explain_topn(WarpScanState *ws, List *context, ExplainState *es)
{
	List	   *tl = ((CustomScan *) ws->css.ss.ps.plan)->custom_scan_tlist;
	StringInfoData tn;
	int			j;

	initStringInfo(&tn);
	appendStringInfo(&tn, INT64_FORMAT " by ", ws->topn_bound);
	for (j = 0; j < ws->topn_nkeys; j++)
	{
		TargetEntry *te = list_nth(tl, ws->topn_keys[j].col);
		Oid			opfamily,
					opcintype;
		int16		strategy;
		bool		desc;

		desc = get_ordering_op_properties(ws->topn_keys[j].sortop, &opfamily, &opcintype,
										  &strategy) && strategy == BTGreaterStrategyNumber;

		appendStringInfo(&tn, "%s%s%s%s", j ? ", " : "",
						 deparse_expression((Node *) te->expr, context, true, false),
						 desc ? " DESC" : "",
						 ws->topn_keys[j].nulls_first != desc ?
						 (desc ? " NULLS LAST" : " NULLS FIRST") : "");
	}
	ExplainPropertyText("Top-N", tn.data, es);
	if (es->analyze && ws->executed)
	{
		/* rows the engine returned (fewer than joined where it drops
		 * rows by the first key), and those built as tuples */
		ExplainPropertyInteger("Top-N Rows Offered", NULL, ws->rows_out, es);
		ExplainPropertyInteger("Top-N Rows Built", NULL, ws->topn_built, es);
	}
}

/* the joins' keys: "f = d, (f1, f2) = (d1, d2) (left)" */
static void
explain_join_keys(WarpScanState *ws, List *context, ExplainState *es)
{
	StringInfoData buf;
	int			j;

	initStringInfo(&buf);
	for (j = 0; j < ws->ndims; j++)
	{
		static const char *const kinds[] = {"", " (left)", " (semi)", " (anti)"};

		if (ws->dims[j].key_display != NIL)
		{
			List	   *fv = linitial(ws->dims[j].key_display);
			List	   *dv = lsecond(ws->dims[j].key_display);

			appendStringInfo(&buf, "%s(%s, %s) = (%s, %s)%s", j ? ", " : "",
							 deparse(ws, context, linitial(fv)),
							 deparse(ws, context, lsecond(fv)),
							 deparse(ws, context, linitial(dv)),
							 deparse(ws, context, lsecond(dv)),
							 kinds[ws->dims[j].kind]);
		}
		else
			appendStringInfo(&buf, "%s%s = %s%s", j ? ", " : "",
							 deparse(ws, context, (Node *) ws->dims[j].fact_key),
							 deparse(ws, context, (Node *) ws->dims[j].dim_key),
							 kinds[ws->dims[j].kind]);
	}
	if (ws->ndims)
		ExplainPropertyText("Join Keys", buf.data, es);
}

/* EXPLAIN ANALYZE: pg_warp_gpud's account of the job, when it ran there */
static void
explain_daemon(WarpScanState *ws, ExplainState *es)
{
	if (ws->emit_rows && ws->dstream)
	{
		/* a LIMIT stopped reading: the daemon's account never came */
		ExplainPropertyText("Rows From Daemon", "stopped before the end", es);
		return;
	}
	if (ws->emit_rows && !ws->daemon_done)
		return;
	if (ws->emit_rows)
		ExplainPropertyText("Rows From Daemon",
							psprintf(INT64_FORMAT " in " INT64_FORMAT " chunks",
									 ws->gres->rows_sent, ws->gres->chunks_sent), es);
	if (ws->gres && ws->gres->ran_on == GPUD_DEVICE_GPU)
	{
		double		gbs = ws->gres->h2d_ms > 0 ?
			ws->gres->bytes_h2d / (ws->gres->h2d_ms * 1e6) : 0;

		ExplainPropertyInteger("Files Via Registered Windows", NULL,
							   ws->gres->windows, es);
		ExplainPropertyInteger("Bytes To Device", NULL, ws->gres->bytes_h2d, es);
		ExplainPropertyInteger("Bytes From GPU Cache", NULL, ws->gres->bytes_cached, es);
		ExplainPropertyFloat("Copy Rate", "GB/s", gbs, 1, es);
		ExplainPropertyFloat("Copy Time", "ms", ws->gres->h2d_ms, 3, es);
		ExplainPropertyFloat("Kernel Time", "ms", ws->gres->kernel_ms, 3, es);
	}
	if (ws->gres)
	{
		const GpudClientTimes *h = &ws->handoff;

		ExplainPropertyFloat("Daemon Time", "ms", ws->gres->total_ms, 3, es);
		/* the fixed cost around it: what the backend spent handing the job
		 * over and taking the result back, and the daemon's set-up */
		ExplainPropertyText("Hand-off",
							psprintf("connect %.3f, job %.3f, wait %.3f (daemon %.3f, of it "
									 "set-up %.3f), result %.3f ms",
									 h->connect_ms, h->job_ms, h->wait_ms,
									 ws->gres->total_ms, ws->gres->setup_ms, h->result_ms),
							es);
	}
	if (ws->gres && ws->gres->bytes_registered > 0)
		ExplainPropertyInteger("Bytes In Registered Windows", NULL,
							   ws->gres->bytes_registered, es);
	if (ws->gres && ws->gres->batches_ahead > 0)
		ExplainPropertyInteger("Batches Loaded Ahead", NULL, ws->gres->batches_ahead, es);
	if (ws->gres && ws->gres->columns_cached > 0)
		ExplainPropertyInteger("Compressed Columns From GPU Cache", NULL,
							   ws->gres->columns_cached, es);
	if (ws->gres && ws->gres->ran_on == GPUD_DEVICE_GPU)
	{
		const double *ph = ws->gres->phase_ms;
		char	   *txt = psprintf("reserve %.1f, create %.1f, batches %.1f, finish %.1f ms; "
								   "group flushes: copy %.1f, host %.1f ms",
								   ph[GPUD_PHASE_RESERVE], ph[GPUD_PHASE_CREATE],
								   ph[GPUD_PHASE_BATCHES], ph[GPUD_PHASE_FINISH],
								   ph[GPUD_PHASE_FLUSH_COPY], ph[GPUD_PHASE_FLUSH_HOST]);

		ExplainPropertyText("Daemon Phases", txt, es);
	}
}

/* EXPLAIN ANALYZE: the engine's counters, where it ran and how long it took */
static void
explain_analyze(WarpScanState *ws, ExplainState *es)
{
	/* under Gather: every participant's, summed (groups are partial
	 * groups, as many as the node returned in all) */
	const WarpCpuCounters *c = ws->have_totals ? &ws->total_counters : &ws->counters;

	ExplainPropertyInteger("Fact Rows", NULL, c->rows_in, es);
	ExplainPropertyInteger("Rows After Filter", NULL, c->rows_filtered, es);
	ExplainPropertyInteger("Rows After Joins", NULL, c->rows_joined, es);
	/* groups emitted: with threads, merged (warp_group_merge.h) unless
	 * a combination would overflow, so left out of stable output */
	if ((!pgwarp_explain_stable || ws->pool == NULL) && !ws->emit_rows)
		ExplainPropertyInteger("Groups", NULL, ws->have_totals ? ws->total_groups : ws->groups, es);
	if (ws->tcache == 1)
		ExplainPropertyText("GPU Table Cache", ws->tcache_loaded ? "used (loaded by this query)" : "used", es);
	else if (ws->tcache == 2)
		ExplainPropertyText("GPU Table Cache", psprintf("not used (%s)", ws->tcache_why), es);
	if (!pgwarp_explain_stable)
	{
		ExplainPropertyText("Ran On", ws->ran_on, es);
		if (ws->pool)
			ExplainPropertyInteger("CPU Threads", NULL, ws->pool->nthreads, es);
		else if (ws->emit_rows && ws->row_units != NULL)
			ExplainPropertyInteger("CPU Threads", NULL, ws->nthreads, es);
		if (ws->merged)
		{
			/* the threads' or lanes' groups, merged into Groups */
			ExplainPropertyInteger("Partial Groups Merged", NULL, ws->unmerged_groups, es);
			ExplainPropertyFloat("Merge Time", "ms", ws->merge_ms, 3, es);
		}
		else if (ws->merge_skipped)
		{
			ExplainPropertyText("Groups Not Merged", ws->merge_skipped, es);
			ExplainPropertyFloat("Merge Time", "ms", ws->merge_ms, 3, es);
		}
		if (ws->ndims > 0)
		{
			ExplainPropertyInteger("Dimensions From Cache", NULL, ws->dims_cached, es);
			ExplainPropertyInteger("Dimensions Read by Engine", NULL,
								   ws->dims_read_by_engine, es);
			if (ws->dims_not_cached.data && ws->dims_not_cached.len > 0)
				ExplainPropertyText("Dimensions Not Cached", ws->dims_not_cached.data, es);
		}
		if (ws->fallback[0])
			ExplainPropertyText("Fallback", ws->fallback, es);
		explain_daemon(ws, es);
		ExplainPropertyFloat("Build Time", "ms", ws->build_ms, 3, es);
		ExplainPropertyFloat("Scan Time", "ms", ws->scan_ms, 3, es);
	}
}

void
warp_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	WarpScanState *ws = (WarpScanState *) node;
	List	   *context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	StringInfoData buf;
	ListCell   *lc;

	if (!ws->on_daemon)
		ExplainPropertyText("Engine", "CPU", es);
	else if (pgwarp_explain_stable)
		ExplainPropertyText("Engine", "pg_warp_gpud", es);
	else
		ExplainPropertyText("Engine", ws->daemon_gpu ? "GPU (pg_warp_gpud)" : "CPU (pg_warp_gpud)", es);
	/* why the GPU or the CPU driver, when a GPU was there to choose */
	if (ws->device_choice && !pgwarp_explain_stable)
		ExplainPropertyText("Device Choice", ws->device_choice, es);
	/* (WarpScan's node line names its table) */
	if (((CustomScan *) node->ss.ps.plan)->scan.scanrelid == 0)
		ExplainPropertyText("Fact Table", RelationGetRelationName(ws->fact_rel), es);
	if (ws->quals)
	{
		Node	   *q = (Node *) make_ands_explicit(ws->quals);

		ExplainPropertyText("Engine Filter", deparse(ws, context, q), es);
	}
	if (ws->gate_quals != NIL)
		ExplainPropertyText("One-Time Filter",
							deparse(ws, context, (Node *) make_ands_explicit(ws->gate_quals)), es);
	if (ws->topn)
		explain_topn(ws, context, es);
	explain_join_keys(ws, context, es);
	initStringInfo(&buf);
	/* group keys are the scan tlist entries the output map marks as keys */
	foreach(lc, ws->outmap)
	{
		CustomScan *cs = (CustomScan *) node->ss.ps.plan;
		TargetEntry *tle = list_nth(cs->custom_scan_tlist, foreach_current_index(lc));

		if (lfirst_int(lc) >= 0)
			appendStringInfo(&buf, "%s%s", buf.len ? ", " : "",
							 deparse_expression((Node *) tle->expr, context, true, false));
	}
	if (buf.len && !ws->emit_rows)
		ExplainPropertyText("Group Keys", buf.data, es);
	if (ws->distinct_agg >= 0)
	{
		/* grouped by it too, merged, then counted per group key */
		WarpPlanKey *ki = &ws->keys[ws->distinct_key];

		ExplainPropertyText("Counts DISTINCT", deparse(ws, context, (Node *) ki->expr), es);
	}
	if (!ws->emit_rows)
		ExplainPropertyInteger("Partial Aggregates", NULL, ws->naggs, es);
	if (ws->heap)
	{
		ExplainPropertyText("Fact Storage", ws->on_daemon ?
							"heap, attached to the GPU table cache" :
							"heap (PostgreSQL's table access method)", es);
	}
	else
		arrow_scan_explain(&ws->scan, RelationGetDescr(ws->fact_rel), es);
	if (es->analyze && ws->executed)
		explain_analyze(ws, es);
}
