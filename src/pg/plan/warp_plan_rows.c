/*
 * warp_plan_rows.c — row-returning paths: WarpJoin and WarpScan.
 *
 * A star whose joined rows PostgreSQL needs (no aggregation the engine
 * takes), or the one Arrow table of a query without joins, as a path that
 * returns the rows themselves, serial and parallel, and with ORDER BY ...
 * LIMIT the Top-N kept in the node (topn_order).  The hooks calling
 * try_rows, and the star's plan description, live in warp_plan.c.
 */

#include "postgres.h"

#include "catalog/pg_type.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/tlist.h"
#include "utils/lsyscache.h"

#include "pg_warp.h"
#include "warp.h"
#include "plan/warp_plan_internal.h"

/*
 * Top-N inside the node: largest LIMIT (plus OFFSET) whose rows the node
 * keeps itself (warp_topn.c); a bigger one is PostgreSQL's sort.
 */
#define WARP_TOPN_MAX_ROWS	100000

/*
 * ORDER BY ... LIMIT of a query whose rows are rel's, as a formed
 * WarpPlanOrder (output columns, ordering operators, collations, NULLS
 * FIRST flags, bound), or NIL when the
 * node cannot return its rows in that order itself: every ORDER BY item
 * must be one of rel's output columns, every output a column or a
 * constant, and nothing may come between the scan/join and the LIMIT (no
 * aggregation, window, DISTINCT, set-returning function or row locking).  The ordering is the
 * operator's own (sort support), so it is PostgreSQL's for every type and
 * collation.
 */
static List *
topn_order(PlannerInfo *root, RelOptInfo *rel, PathTarget **target)
{
	Query	   *parse = root->parse;
	List	   *outputs = rel->reltarget->exprs;
	bool		exprs = false;
	List	   *cols = NIL,
			   *ops = NIL,
			   *colls = NIL,
			   *nulls_first = NIL;
	ListCell   *lc;
	WarpPlanOrder top;

	if (!bms_equal(rel->relids, root->all_baserels) ||
		parse->sortClause == NIL || root->limit_tuples < 1 ||
		root->limit_tuples > WARP_TOPN_MAX_ROWS || parse->hasAggs ||
		parse->groupClause != NIL || parse->groupingSets != NIL || parse->hasWindowFuncs ||
		parse->distinctClause != NIL || parse->hasTargetSRFs || parse->setOperations != NULL ||
		parse->rowMarks != NIL || parse->limitOption == LIMIT_OPTION_WITH_TIES ||
		root->query_pathkeys == NIL ||
		compare_pathkeys(root->query_pathkeys, root->sort_pathkeys) != PATHKEYS_EQUAL)
		return NIL;

	/*
	 * PostgreSQL computes the output expressions of every row before its
	 * sort, so an error there (a + 1 overflowing in a row that is not
	 * among the first N) is raised: kept in the node after the first N
	 * rows, a projection would not see it.  So output expressions become
	 * the node's own columns, computed by the engine for every row (those
	 * it cannot compute refuse the path).  Expensive ones PostgreSQL
	 * computes after the LIMIT (make_sort_input_target): not offered.
	 */
	*target = NULL;
	foreach(lc, root->processed_tlist)
	{
		TargetEntry *te = lfirst(lc);
		Expr	   *e = te->expr;
		QualCost	qc;

		while (e && IsA(e, RelabelType))
			e = ((RelabelType *) e)->arg;
		if (e == NULL)
			return NIL;
		if (IsA(e, Var) || IsA(e, Const) || IsA(e, Param))
			continue;
		if (contain_volatile_functions((Node *) e) || expression_returns_set((Node *) e))
			return NIL;
		cost_qual_eval_node(&qc, (Node *) e, root);
		if (te->ressortgroupref == 0 && qc.per_tuple > 10 * cpu_operator_cost)
			return NIL;
		exprs = true;
	}
	if (exprs)
	{
		*target = create_empty_pathtarget();
		foreach(lc, root->processed_tlist)
		{
			Expr	   *e = ((TargetEntry *) lfirst(lc))->expr;

			if (IsA(e, Const) || IsA(e, Param) || list_member((*target)->exprs, e))
				continue;
			add_column_to_pathtarget(*target, e, 0);
		}
		set_pathtarget_cost_width(root, *target);
		outputs = (*target)->exprs;
	}
	foreach(lc, root->query_pathkeys)
	{
		PathKey    *pk = lfirst(lc);
		EquivalenceClass *ec = pk->pk_eclass;
		ListCell   *mc;
		int			col = -1;
		Oid			type = InvalidOid,
					op;

		if (ec->ec_has_volatile)
			return NIL;
		foreach(mc, ec->ec_members)
		{
			EquivalenceMember *em = lfirst(mc);
			Expr	   *e = em->em_expr;
			Expr	   *bare = e;
			ListCell   *tc;

			if (em->em_is_child)
				continue;
			while (bare && IsA(bare, RelabelType))
				bare = ((RelabelType *) bare)->arg;
			foreach(tc, outputs)
			{
				if (equal(lfirst(tc), e) || equal(lfirst(tc), bare))
				{
					col = foreach_current_index(tc);
					type = em->em_datatype;
					break;
				}
			}
			if (col >= 0)
				break;
		}
		if (col < 0)
			return NIL;
		op = get_opfamily_member(pk->pk_opfamily, type, type, pk->pk_strategy);
		if (!OidIsValid(op))
			return NIL;
		cols = lappend_int(cols, col);
		ops = lappend_oid(ops, op);
		colls = lappend_oid(colls, ec->ec_collation);
		nulls_first = lappend_int(nulls_first, pk->pk_nulls_first ? 1 : 0);
	}
	top.cols = cols;
	top.sortops = ops;
	top.collations = colls;
	top.nulls_first = nulls_first;
	top.bound = (int) root->limit_tuples;
	return form_warp_plan_order(&top);
}

/*
 * Whether root plans planagg.c's subquery for min(x)/max(x): ORDER BY x
 * LIMIT 1 with "x IS NOT NULL" put first among the quals (the NullTest it
 * builds, location -1; a user's has a location).  PostgreSQL then orders
 * that test among the quals by cost, so x is computed for rows the
 * query's own quals would have dropped: an x that can fail (a + b
 * overflowing) raises an error the plain aggregate, which computes x only
 * for qualifying rows, does not.  PostgreSQL takes that path only where it
 * is cheap (an index), so it rarely shows; a WarpScan would make it
 * cheap everywhere, and WarpPreAgg computes min/max as the aggregate does.
 */
static bool
minmax_subquery(PlannerInfo *root)
{
	Query	   *parse = root->parse;
	ListCell   *lc;

	if (parse->hasAggs || root->limit_tuples != 1.0 || parse->jointree == NULL ||
		parse->jointree->quals == NULL || !IsA(parse->jointree->quals, List))
		return false;
	foreach(lc, (List *) parse->jointree->quals)
	{
		NullTest   *nt = lfirst(lc);

		if (IsA(nt, NullTest) && nt->nulltesttype == IS_NOT_NULL && nt->location == -1)
			return true;
	}
	return false;
}

/*
 * A fact output column the daemon cannot return (a text value is an id in
 * the driver that read it: the strings stay in the daemon), or NULL.
 */
static const char *
rows_daemon_refusal(StarInfo *si)
{
	ListCell   *lc;

	if (si->heap)
		return "a heap fact table is read by the backend's CPU engine only";
	foreach(lc, si->key_info)
	{
		WarpPlanKey key;

		deform_warp_plan_key(lfirst(lc), &key);
		if (key.kind != WG_FACT || key.case_index)
			continue;
		switch (exprType((Node *) key.expr))
		{
			case TEXTOID:
			case VARCHAROID:
			case BPCHAROID:
				return "text output columns of the fact table are returned by the backend's CPU engine only";
		}
	}
	return NULL;
}

/*
 * Where the rows come from: 0, the CPU driver in the backend; 1 +
 * GpudDeviceKind, pg_warp_gpud (mode gpu: whatever it drives; auto: a GPU
 * that runs the whole program, where device_choice says it beats the CPU
 * driver); -1, nowhere (mode gpu without a daemon that can: reason noted).
 */
static int
rows_where(StarInfo *si, StarCost *sc)
{
	GpudStatus	st;
	bool		serving;
	const char *refusal;

	if (pgwarp_mode == PGWARP_MODE_CPU)
		return 0;
	serving = pgwarp_gpud_status(&st);
	refusal = rows_daemon_refusal(si);
	if (pgwarp_mode == PGWARP_MODE_GPU)
	{
		if (!serving)
			refusal = "pg_warp_gpud is not running";
		if (refusal)
		{
			not_offloaded(psprintf("pg_warp.mode = gpu, and %s", refusal));
			return -1;
		}
		return 1 + st.kind;
	}
	if (serving && st.kind == GPUD_DEVICE_GPU && refusal == NULL && gpu_can_run(si) &&
		device_choice(&st, sc, pgwarp_cpu_thread_count(), false))
		return 1 + GPUD_DEVICE_GPU;
	return 0;
}

/*
 * The serial row-mode path of rel whose output columns are `outputs` (its
 * pathtarget `target`): plain columns, or for a Top-N target also fact
 * expressions the engine computes; NULL (reason noted) if refused.  si and
 * sc describe it for the caller, *where where it runs (rows_where).
 */
static CustomPath *
rows_path(PlannerInfo *root, RelOptInfo *rel, PathTarget *target, StarInfo *si, StarCost *sc,
		  int *where)
{
	PathTarget *scratch = create_empty_pathtarget();
	ListCell   *lc;
	CustomPath *cp;
	List	   *joins;
	Cost		startup,
				run;
	int			d;

	memset(si, 0, sizeof(*si));
	si->distinct_key = si->distinct_agg = -1;
	if (minmax_subquery(root))
		return NULL;			/* no reason: the aggregate is offloaded */
	if (!find_star(root, rel, si))
		return NULL;
	if (si->heap && !pgwarp_heap_row_joins)
	{
		not_offloaded("joins without aggregation over a heap fact table stay PostgreSQL's "
					  "(measured slower; pg_warp.heap_row_joins)");
		return NULL;
	}
	if (!star_fact_quals(root, si))
		return NULL;
	if (heap_special_refused(root, si, (Node *) si->quals) ||
		heap_special_refused(root, si, (Node *) si->fact_keys) ||
		heap_special_refused(root, si, (Node *) target->exprs))
		return NULL;
	si->payload = NIL;
	for (d = 0; d < list_length(si->dims); d++)
		si->payload = lappend(si->payload, NIL);
	/* every column the plan above needs is one output "key" */
	si->rows = true;
	foreach(lc, target->exprs)
	{
		Var		   *v = lfirst(lc);

		if (IsA(v, Var) && (v->varattno <= 0 || v->varlevelsup != 0))
		{
			not_offloaded("an output that is not a user column (whole row, system column)");
			return NULL;
		}
		if (!add_group_key_as(si, scratch, (Expr *) v, 0, true))
			return NULL;
	}
	if (list_length(si->key_info) > 64)
	{
		not_offloaded("more than 64 output columns");
		return NULL;
	}
	if (!star_dims_fit(si))
		return NULL;
	star_costs(si, sc);
	if (!star_joins(si, &joins))
		return NULL;
	if ((*where = rows_where(si, sc)) < 0)
		return NULL;

	/* the dimensions before the first row; then the fact scan streams, on
	 * pg_warp.cpu_threads threads, or from the daemon */
	startup = WARP_STARTUP_COST + sc->dims_cost;
	if (*where == 1 + GPUD_DEVICE_GPU || (*where > 0 && pgwarp_mode == PGWARP_MODE_GPU))
		run = sc->fact_cost / WARP_GPU_FACTOR;	/* (mode gpu asks for the daemon) */
	else
		run = sc->fact_cost / ((*where || si->heap) ? 1 : pgwarp_cpu_thread_count());
	run += rel->rows * cpu_tuple_cost;

	cp = star_path(rel, target, si, rel->rows, startup, startup + run);
	cp->flags = CUSTOMPATH_SUPPORT_PROJECTION;
	cp->custom_private = star_private(root, si, sc, joins, rel->relids, *where, true);
	cp->methods = rel->reloptkind == RELOPT_BASEREL ?
		&warp_scan_path_methods : &warp_join_path_methods;
	return cp;
}

/*
 * A star join whose rows PostgreSQL needs: a path for the relation of the
 * whole FROM list (WarpJoin) whose engine filters the fact table, probes
 * every dimension and returns each joined row, its columns taken as "group
 * keys" of a program in row mode (WarpProgram.emit_rows: appended, never
 * merged).  PostgreSQL's own steps above it (projection, ORDER BY, LIMIT,
 * DISTINCT, window functions, and an aggregation WarpPreAgg does not take:
 * drop_row_join_paths removes the Agg-over-WarpJoin paths where it does)
 * run as usual.  The executor streams:
 * a batch's rows go up before the next batch is read, so LIMIT stops the
 * scan and memory stays one batch's rows.  The CPU driver in the backend,
 * serial, or one participant of a Gather each; or pg_warp_gpud, whose rows
 * stream back in chunks (rows_where says when).  A heap fact table is read
 * through the table AM by one driver per participant (warp_exec_heap.c),
 * not on pg_warp.cpu_threads threads, and never by the daemon.
 *
 * The same for the one Arrow table of a query without joins (WarpScan,
 * rel a base relation): a star without dimensions, whose engine filters
 * the rows on its threads and returns the columns PostgreSQL needs.
 */
void
try_join_rows(PlannerInfo *root, RelOptInfo *rel)
{
	StarInfo	si;
	StarCost	sc;
	CustomPath *cp,
			   *tp = NULL;
	List	   *order;
	PathTarget *topn_target = NULL;
	double		rows = rel->rows;
	Cost		startup,
				scan;
	int			where;

	if ((cp = rows_path(root, rel, rel->reltarget, &si, &sc, &where)) == NULL)
		return;
	startup = cp->path.startup_cost;
	scan = cp->path.total_cost - startup - rows * cpu_tuple_cost;

	/*
	 * ORDER BY ... LIMIT: a path that keeps the best rows itself and returns
	 * them in order (pathkeys), so PostgreSQL puts only the Limit above; the
	 * same scan, a comparison per row instead of a tuple per row.  Where
	 * the query's outputs or ORDER BY items are fact expressions, its
	 * target is those: the engine computes them for every row, as
	 * PostgreSQL does before its sort (and raises their errors so).  Made
	 * before add_path(cp) like the partial paths.
	 */
	order = topn_order(root, rel, &topn_target);
	if (order != NIL)
	{
		if (topn_target == NULL)
		{
			tp = makeNode(CustomPath);
			memcpy(tp, cp, sizeof(CustomPath));
		}
		else
		{
			/* a refusal here is not the query's reason for EXPLAIN */
			char		saved[sizeof(last_reason)];
			StarInfo	si2;
			StarCost	sc2;
			int			where2;

			strlcpy(saved, last_reason, sizeof(saved));
			tp = rows_path(root, rel, topn_target, &si2, &sc2, &where2);
			strlcpy(last_reason, saved, sizeof(last_reason));
		}
	}
	if (tp != NULL)
	{
		tp->custom_private = warp_plan_with_order(tp->custom_private, order);
		tp->path.pathkeys = root->query_pathkeys;
		tp->path.rows = Min(rows, root->limit_tuples);
		tp->path.total_cost = startup + scan +
			rows * cpu_operator_cost * list_length(root->query_pathkeys) +
			tp->path.rows * cpu_tuple_cost;
		/* nothing comes out before the whole scan */
		tp->path.startup_cost = tp->path.total_cost;
	}

	/*
	 * The partial path: each participant claims fact batches and returns
	 * its joined rows; PostgreSQL puts the Gather above (every participant
	 * builds the dimension tables itself, as for WarpPreAgg).  Made before
	 * add_path(cp), which frees cp if another path dominates it.  Not for
	 * the daemon's plans, where the daemon does the reading.
	 */
	if (where == 0 && rel->consider_parallel && si.fact->consider_parallel &&
		max_parallel_workers_per_gather > 0 && sc.dims_safe)
	{
		int			workers;
		double		divisor;
		CustomPath *pp;

		workers = compute_parallel_worker(si.fact, sc.fact_bytes / BLCKSZ, -1,
										  max_parallel_workers_per_gather);
		/*
		 * PostgreSQL's rule grows the workers with the log of the bytes
		 * read, which the Arrow columns keep small; the engine's work grows
		 * with the rows: one more participant per million fact rows, up to
		 * the limit (H200, SSB SF=20: 6 workers by the bytes, 16 by rows)
		 */
		if (si.fact->rel_parallel_workers < 0)
			workers = Max(workers, (int) Min(sc.fact_rows / 1e6,
											 (double) max_parallel_workers_per_gather));
		workers = Min(workers, (int) Min(sc.fact_batches, (double) INT_MAX));
		if (workers > 0)
		{
			divisor = workers + (parallel_leader_participation ? 1.0 : 0.0);
			pp = parallel_star_path(cp, workers, &sc);
			pp->path.rows = clamp_row_est(rows / divisor);
			pp->path.startup_cost = WARP_STARTUP_COST + sc.par_dims_cost;
			pp->path.total_cost = pp->path.startup_cost + sc.fact_cost / divisor +
				pp->path.rows * cpu_tuple_cost;
			if (tp != NULL)
			{
				/* each participant's first rows, in order: a Gather Merge
				 * above merges them (made before add_partial_path(pp)) */
				CustomPath *tpp = makeNode(CustomPath);

				memcpy(tpp, pp, sizeof(CustomPath));
				tpp->path.pathtarget = tp->path.pathtarget;
				tpp->custom_private = tp->custom_private;
				tpp->path.pathkeys = root->query_pathkeys;
				tpp->path.rows = Min(pp->path.rows, root->limit_tuples);
				tpp->path.total_cost = pp->path.startup_cost + sc.fact_cost / divisor +
					pp->path.rows * cpu_operator_cost * list_length(root->query_pathkeys) +
					tpp->path.rows * cpu_tuple_cost;
				tpp->path.startup_cost = tpp->path.total_cost;
				add_partial_path(rel, &tpp->path);
			}
			add_partial_path(rel, &pp->path);
		}
	}
	if (tp != NULL)
		add_path(rel, &tp->path);
	add_path(rel, &cp->path);
}

/*
 * try_join_rows for a hook.  With aggregation, why WarpPreAgg did not take
 * the query is the reason EXPLAIN VERBOSE gives, not why the rows could not
 * come from the engine (a heap fact table, pg_warp.mode = gpu: WarpPreAgg
 * may well take those).
 */
void
try_rows(PlannerInfo *root, RelOptInfo *rel)
{
	Query	   *parse = root->parse;

	if (parse->hasAggs || parse->groupClause != NIL || parse->groupingSets != NIL)
	{
		char		saved[sizeof(last_reason)];

		strlcpy(saved, last_reason, sizeof(saved));
		try_join_rows(root, rel);
		strlcpy(last_reason, saved, sizeof(saved));
	}
	else
		try_join_rows(root, rel);
}
