/*
 * warp_exec.c — Custom Scan (WarpPreAgg, WarpJoin, WarpScan): the node's
 * executor callbacks (begin, exec, end, rescan) and the reading of the plan
 * the planner left in custom_private.
 *
 * WarpPreAgg runs a star query's program on the CPU driver and emits
 * partial aggregate states.  On the first call the node runs every
 * dimension plan (PostgreSQL's own, children of this node) and builds one
 * join table per dimension: the join key and a payload id naming the
 * distinct values of the dimension's group-by columns
 * (warp_exec_dims.c).  It then builds the program from the fact quals,
 * join keys, group keys and aggregate arguments kept in the plan
 * (parameters evaluated now; warp_exec_program.c), reads the fact table's
 * record batches through arrow_scan.c and runs the CPU driver over each
 * (warp_exec_run.c; a heap fact table: warp_exec_heap.c).  Finally it
 * returns one row per group: the group keys and, for each aggregate, the
 * transition state PostgreSQL's combine function expects
 * (warp_exec_groups.c, warp_exec_emit.c); the Finalize Aggregate node
 * above merges and finalizes them.  WarpJoin and WarpScan are the same
 * node in row mode: joined rows, streamed batch by batch.
 *
 * On a plan made for pg_warp_gpud (pg_warp.mode = gpu, or auto with a GPU
 * present) the same program, the dimensions' keys and payload ids and the
 * list of batches to read go to the daemon instead (gpud_client.c), which
 * reads the files and runs the program on the GPU; its groups come back in
 * the same form.  When the daemon cannot run the job (not running, died
 * mid-query, refused it) the node runs the CPU driver itself: nothing has
 * been emitted yet, so the query still returns once, exactly.
 *
 * EXPLAIN is warp_exec_explain.c, parallel query (DSM) warp_exec_parallel.c;
 * the state they share is warp_exec_internal.h.
 *
 * All engine memory comes from one memory context, so an error anywhere
 * (an overflow found by the engine, a query cancel, a bad file) frees it.
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "nodes/nodeFuncs.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "exec/warp_exec_internal.h"
#include "warp_spatial.h"

static CustomExecMethods warp_preagg_exec_methods;

static void *
engine_alloc(void *ctx, size_t size)
{
	return MemoryContextAllocExtended((MemoryContext) ctx, size,
									  MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
}

/* ----------------------------------------------------- executor methods */

static Node *
warp_create_state(CustomScan *cscan)
{
	WarpScanState *ws = (WarpScanState *) newNode(sizeof(WarpScanState), T_CustomScanState);

	ws->css.methods = &warp_preagg_exec_methods;
	return (Node *) ws;
}

/*
 * The plan the planner left in custom_private (a formed WarpPlanInfo,
 * warp_plan_info.h; built by src/pg/plan/warp_plan.c) into the
 * node's state: the fact table, its quals and attributes, the joins (each
 * dimension's key and payload columns; their plans are started by
 * warp_begin), group keys, aggregates, the output map, the constant quals,
 * where the plan runs, a heap fact table, count(DISTINCT), row mode and
 * ORDER BY ... LIMIT.  The only reader of custom_private.
 */
static void
warp_scan_state_from_plan(WarpScanState *ws, CustomScan *cs)
{
	WarpPlanInfo info;
	ListCell   *lc,
			   *pc;
	int			j;

	deform_warp_plan_info(cs->custom_private, &info);
	ws->fact_relid = info.fact_relid;
	ws->rtoffset = bms_next_member(cs->custom_relids, -1) - info.first_relid;
	ws->quals = info.quals;
	ws->fact_attrs = info.fact_attrs;
	ws->outmap = info.outmap;
	ws->gate_quals = info.gate;
	ws->fact_oid = info.fact_oid;
	ws->on_daemon = info.where != 0;
	ws->daemon_gpu = info.where == 1 + GPUD_DEVICE_GPU;
	ws->device_choice = info.device_choice;
	ws->heap = info.heap;
	ws->distinct_key = info.distinct_key;
	ws->distinct_agg = info.distinct_agg;
	ws->emit_rows = info.rows;

	ws->nkeys = list_length(info.key_info);
	ws->keys = palloc0(sizeof(WarpPlanKey) * Max(ws->nkeys, 1));
	foreach(lc, info.key_info)
		deform_warp_plan_key(lfirst(lc), &ws->keys[foreach_current_index(lc)]);
	ws->naggs = list_length(info.agg_info);
	ws->aggs = palloc0(sizeof(WarpPlanAgg) * Max(ws->naggs, 1));
	foreach(lc, info.agg_info)
		deform_warp_plan_agg(lfirst(lc), &ws->aggs[foreach_current_index(lc)]);

	ws->ndims = list_length(info.joins);
	ws->dims = palloc0(sizeof(WarpDim) * Max(ws->ndims, 1));
	j = 0;
	forboth(lc, info.joins, pc, cs->custom_plans)
	{
		WarpPlanJoin join;
		WarpDim    *d = &ws->dims[j++];
		Plan	   *plan = lfirst(pc);
		ListCell   *ac;
		int			k = 0;

		deform_warp_plan_join(lfirst(lc), &join);
		d->fact_key = join.fact_key;
		d->dim_key = join.dim_key;
		d->text_key = d->dim_key->vartype == TEXTOID || d->dim_key->vartype == VARCHAROID;
		d->key_resno = join.key_resno;
		d->kind = join.kind;
		d->key2_resno = join.key2_resno;
		d->key_display = join.key_display;
		d->npay = list_length(join.payload_resnos);
		d->pay_resno = palloc(sizeof(int) * Max(d->npay, 1));
		d->pay_len = palloc(sizeof(int16) * Max(d->npay, 1));
		d->pay_byval = palloc(sizeof(bool) * Max(d->npay, 1));
		warp_exec_check_resno(plan, d->key_resno);
		if (d->key2_resno > 0)
			warp_exec_check_resno(plan, d->key2_resno);
		foreach(ac, join.payload_resnos)
		{
			int			resno = lfirst_int(ac);
			TargetEntry *tle;

			warp_exec_check_resno(plan, resno);
			tle = list_nth(plan->targetlist, resno - 1);
			d->pay_resno[k] = resno;
			get_typlenbyval(exprType((Node *) tle->expr), &d->pay_len[k], &d->pay_byval[k]);
			k++;
		}
	}

	if (info.order != NIL)
	{
		WarpPlanOrder order;
		ListCell   *oc,
				   *cc,
				   *nc;
		int			k = 0;

		deform_warp_plan_order(info.order, &order);
		ws->topn_nkeys = list_length(order.cols);
		ws->topn_keys = palloc(sizeof(WarpTopNKey) * Max(ws->topn_nkeys, 1));
		ws->topn_bound = order.bound;
		forfour(cc, order.cols, oc, order.sortops, nc, order.nulls_first,
				pc, order.collations)
		{
			ws->topn_keys[k].col = lfirst_int(cc);
			ws->topn_keys[k].sortop = lfirst_oid(oc);
			ws->topn_keys[k].nulls_first = lfirst_int(nc) != 0;
			ws->topn_keys[k].collation = lfirst_oid(pc);
			k++;
		}
	}
}

static void
warp_begin(CustomScanState *node, EState *estate, int eflags)
{
	WarpScanState *ws = (WarpScanState *) node;
	CustomScan *cs = (CustomScan *) node->ss.ps.plan;
	Bitmapset  *attrs = NULL;
	ListCell   *lc;
	int			j;

	warp_scan_state_from_plan(ws, cs);
	ws->gate = ExecInitQual(ws->gate_quals, &node->ss.ps);
	ws->gate_checked = false;

	ws->engine_cxt = AllocSetContextCreate(estate->es_query_cxt, "pg_warp engine",
										   ALLOCSET_DEFAULT_SIZES);
	ws->alloc.alloc = engine_alloc;
	ws->alloc.ctx = ws->engine_cxt;

	/* the dimensions' plans, children of this node */
	for (j = 0; j < Min(ws->ndims, list_length(cs->custom_plans)); j++)
	{
		WarpDim    *d = &ws->dims[j];

		d->ps = ExecInitNode(list_nth(cs->custom_plans, j), estate, eflags);
		node->custom_ps = lappend(node->custom_ps, d->ps);
	}

	ws->fact_rel = table_open(ws->fact_oid, AccessShareLock);
	foreach(lc, ws->fact_attrs)
		attrs = bms_add_member(attrs, lfirst_int(lc) - FirstLowInvalidHeapAttributeNumber);
	if (!ws->heap)
		arrow_scan_begin(&ws->scan, ws->fact_rel, attrs, ws->quals, ws->fact_relid,
						 &node->ss.ps, (eflags & EXEC_FLAG_EXPLAIN_ONLY) != 0);
	/* the CPU driver takes big batches in parts (arrow_scan.h) */
	ws->scan.parts_per_batch = WARP_SCAN_PARTS;
	if (ws->topn_keys != NULL)
	{
		ws->topn_slot = MakeSingleTupleTableSlot(node->ss.ss_ScanTupleSlot->tts_tupleDescriptor,
												 &TTSOpsVirtual);
		ws->topn = warp_topn_create(node->ss.ss_ScanTupleSlot->tts_tupleDescriptor,
									ws->topn_nkeys, ws->topn_keys, ws->topn_bound,
									estate->es_query_cxt);
	}
	/* under Gather each participant is one thread; else pg_warp.cpu_threads */
	ws->nthreads = node->ss.ps.plan->parallel_aware ? 1 : pgwarp_cpu_thread_count();
}

static bool
warp_recheck(ScanState *node, TupleTableSlot *slot)
{
	return true;
}

static TupleTableSlot *
warp_exec(CustomScanState *node)
{
	return ExecScan(&node->ss, warp_next, warp_recheck);
}

static void
warp_end(CustomScanState *node)
{
	WarpScanState *ws = (WarpScanState *) node;
	ListCell   *lc;

	foreach(lc, node->custom_ps)
		ExecEndNode(lfirst(lc));
	if (ws->topn_slot)
		ExecDropSingleTupleTableSlot(ws->topn_slot);
	warp_exec_heap_rows_end(ws);
	arrow_scan_end(&ws->scan);
	if (ws->fact_rel)
		table_close(ws->fact_rel, AccessShareLock);
}

static void
warp_rescan(CustomScanState *node)
{
	WarpScanState *ws = (WarpScanState *) node;
	ListCell   *lc;
	int			i;

	foreach(lc, node->custom_ps)
		ExecReScan(lfirst(lc));
	if (!ws->heap)
		arrow_scan_rescan(&ws->scan);
	warp_exec_heap_rows_end(ws);	/* (its batch was in engine_cxt) */
	MemoryContextReset(ws->engine_cxt);
	ws->cpu = NULL;
	ws->pool = NULL;
	ws->pool_start = NULL;
	ws->gres = NULL;
	ws->dstream = NULL;			/* its connection went with engine_cxt */
	ws->daemon_done = false;
	ws->merged = NULL;
	ws->executed = false;
	ws->gate_checked = false;
	ws->dims_ready = false;
	ws->dims_not_cached.data = NULL;	/* was in engine_cxt */
	ws->dims_not_cached.len = 0;
	for (i = 0; i < ws->ndims; i++)
	{
		/* freed with engine_cxt: built again from the rebuilt dimension */
		ws->dims[i].table = NULL;
		ws->dims[i].table_ready = false;
	}
	ws->build_ms = 0;
	ws->groups = 0;
	ws->next_group = 0;
	ws->rows_done = false;
	ws->rows_status = WARP_OK;
	ws->rows_load = WARP_LOAD_OK;
	ws->rows_out = 0;
	ws->round_cxt = NULL;		/* was engine_cxt's child */
	ws->row_failed_pool = NULL;
	if (ws->topn)
		warp_topn_reset(ws->topn);
	ws->topn_done = false;
	ws->topn_built = 0;
	ws->out_cols = NULL;
	ws->row_tables = NULL;
	ws->row_units = NULL;
}

CustomScanMethods warp_preagg_scan_methods = {
	.CustomName = "WarpPreAgg",
	.CreateCustomScanState = warp_create_state,
};

/* the same node in row mode (custom_private item 10), named for EXPLAIN */
CustomScanMethods warp_join_scan_methods = {
	.CustomName = "WarpJoin",
	.CreateCustomScanState = warp_create_state,
};

/* ... and for one table without joins (scanrelid its relation) */
CustomScanMethods warp_scan_scan_methods = {
	.CustomName = "WarpScan",
	.CreateCustomScanState = warp_create_state,
};

void
pgwarp_exec_init(void)
{
	warp_preagg_exec_methods.CustomName = "WarpPreAgg";
	warp_preagg_exec_methods.BeginCustomScan = warp_begin;
	warp_preagg_exec_methods.ExecCustomScan = warp_exec;
	warp_preagg_exec_methods.EndCustomScan = warp_end;
	warp_preagg_exec_methods.ReScanCustomScan = warp_rescan;
	warp_preagg_exec_methods.ExplainCustomScan = warp_explain;
	warp_preagg_exec_methods.EstimateDSMCustomScan = warp_estimate_dsm;
	warp_preagg_exec_methods.InitializeDSMCustomScan = warp_init_dsm;
	warp_preagg_exec_methods.ReInitializeDSMCustomScan = warp_reinit_dsm;
	warp_preagg_exec_methods.InitializeWorkerCustomScan = warp_init_worker;
	warp_preagg_exec_methods.ShutdownCustomScan = warp_shutdown;
	RegisterCustomScanMethods(&warp_preagg_scan_methods);
	RegisterCustomScanMethods(&warp_join_scan_methods);
	RegisterCustomScanMethods(&warp_scan_scan_methods);
	warp_spatial_exec_init();
}
