/*
 * warp_plan.c — offering the engine to the planner.
 *
 * In the UPPERREL_GROUP_AGG hook, a query whose FROM is a star (one
 * arrow_fdw fact table joined to dimension relations, each by one integer
 * or date equality with the fact table: inner joins, left joins with the
 * dimension on the nullable side, semi joins (EXISTS, IN) and anti joins
 * (NOT EXISTS)) and whose fact
 * quals, group keys and aggregates the engine computes exactly gets a
 * second plan:
 *
 *   Finalize Aggregate (PostgreSQL's, combine functions)
 *     -> Custom Scan (WarpPreAgg): engine scan + filter + probes +
 *        partial aggregation, emitting one partial state row per group
 *          -> dimension plans (PostgreSQL's, with their own quals)
 *
 * The dimension sides run as ordinary PostgreSQL plans, so every qual on a
 * dimension (text, LIKE, any collation or function) keeps PostgreSQL's
 * semantics; the engine builds hash tables from their output.  The final
 * Agg groups with the types' own equality, so the engine may split a group
 * (it groups by binary images) without changing results.  The path is
 * costed from per-row constants and competes with PostgreSQL's plans in
 * add_path.
 *
 * This file holds the hooks (the upper-paths, join-pathlist and
 * rel-pathlist hooks, and EXPLAIN's line saying why a query was not
 * offloaded), WarpPreAgg's paths with the Finalize Aggregate above them,
 * the plan's description of a star (custom_private) and the CustomScan
 * made from a path.  Finding the star: warp_plan_star.c; which
 * expressions the engine takes: warp_plan_admit.c; the aggregate split:
 * warp_plan_agg.c; row-returning paths and Top-N: warp_plan_rows.c; costs:
 * warp_plan_cost.c (shared declarations: warp_plan_internal.h).
 */

#include "postgres.h"

#include "commands/explain.h"
#include "executor/instrument.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/planner.h"
#include "optimizer/prep.h"
#include "optimizer/tlist.h"
#include "tcop/tcopprot.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"

#include "gpud_client.h"
#include "pg_warp.h"
#include "warp.h"
#include "plan/warp_plan_internal.h"
#include "warp_spatial.h"
#include "tcache/tcache.h"

static create_upper_paths_hook_type prev_upper_paths_hook = NULL;
static set_join_pathlist_hook_type prev_join_pathlist_hook = NULL;
static set_rel_pathlist_hook_type prev_rel_pathlist_hook = NULL;

static CustomPathMethods warp_preagg_path_methods;
CustomPathMethods warp_join_path_methods;
CustomPathMethods warp_scan_path_methods;

/*
 * Why the last query planned in this backend was not offloaded (empty if it
 * was, or touched no Arrow table); EXPLAIN VERBOSE prints it.
 */
char last_reason[256];

/*
 * Why a subquery of the last query was left to PostgreSQL as a whole (a
 * correlated subquery, see in_correlated_subquery), printed on a line of
 * its own: the outer query may well be offloaded.
 */
static char subquery_reason[256];

bool
not_offloaded(const char *why)
{
	elog(DEBUG1, "pg_warp: not offloaded: %s", why);
	strlcpy(last_reason, why, sizeof(last_reason));
	return false;
}

static bool exec_param_walker(Node *node, List **params);

/*
 * Whether one of rel's indexes can look its rows up by an outer row's value:
 * a qual `column op value` where value holds a PARAM_EXEC Param and no
 * column of rel, column is an index's leading key and op is in that key's
 * operator family (what PostgreSQL's index paths match, whatever their cost
 * under enable_indexscan and friends).
 */
static bool
index_lookup_by_param(RelOptInfo *rel)
{
	ListCell   *lc;

	foreach(lc, rel->baserestrictinfo)
	{
		OpExpr	   *op = (OpExpr *) ((RestrictInfo *) lfirst(lc))->clause;
		List	   *params = NIL;
		ListCell   *ic;
		int			side;

		if (!IsA(op, OpExpr) || list_length(op->args) != 2)
			continue;
		for (side = 0; side < 2; side++)
		{
			Node	   *col = list_nth(op->args, side);
			Node	   *val = list_nth(op->args, 1 - side);

			while (IsA(col, RelabelType))
				col = (Node *) ((RelabelType *) col)->arg;
			params = NIL;
			(void) exec_param_walker(val, &params);
			if (!IsA(col, Var) || ((Var *) col)->varno != rel->relid || params == NIL ||
				bms_is_member(rel->relid, pull_varnos(NULL, val)))
				continue;
			foreach(ic, rel->indexlist)
			{
				IndexOptInfo *ix = lfirst(ic);

				if (ix->nkeycolumns > 0 && ix->indexkeys[0] == ((Var *) col)->varattno &&
					op_in_opfamily(op->opno, ix->opfamily[0]))
					return true;
			}
		}
	}
	return false;
}

/*
 * Whether root plans a subquery that its parent re-executes for each outer
 * row (a correlated SubPlan: an outer column compared inside it, or a
 * LATERAL subquery under a nested loop) in which PostgreSQL can look the
 * rows of one of relids' tables up through an index by the outer value.
 * PostgreSQL notes the outer values such a subquery uses as
 * PlannerParamItems of the query level they come from (subselect.c,
 * replace_outer_var), before planning the subquery's joins, so a non-empty
 * plan_params list in an enclosing level means this level runs once per
 * outer row.
 *
 * The engine is refused there: its scan reads the whole table on every
 * execution (it has no index), where PostgreSQL's index scan reads a few
 * rows (TPC-H q2 over heap tables: partsupp's primary key looked up per
 * part).  Where no index serves the outer value (Arrow tables, or a heap
 * column without one) every plan reads the table per outer row, and the
 * engine's read, which takes the new value on each rescan for its filter
 * and batch skipping, was mostly the faster (TPC-H q2 over Arrow at SF=1,
 * three runs: 2.1, 6.7, 9.9 s; arrow_fdw's plan more than 60, 5.3, 43.6 s);
 * decorrelating the subquery into
 * a grouped join is what would win there.
 */
static bool
in_correlated_subquery(PlannerInfo *root, Relids relids)
{
	PlannerInfo *r;
	int			rti = -1;

	for (r = root->parent_root; r != NULL; r = r->parent_root)
		if (r->plan_params != NIL)
			break;
	if (r == NULL)
		return false;
	while ((rti = bms_next_member(relids, rti)) >= 0)
	{
		RelOptInfo *rel = rti < root->simple_rel_array_size ? root->simple_rel_array[rti] : NULL;

		if (rel == NULL || rel->reloptkind != RELOPT_BASEREL)
			continue;
		if (index_lookup_by_param(rel))
		{
			strlcpy(subquery_reason,
					"a correlated subquery (re-executed for each outer row) whose rows "
					"PostgreSQL looks up through an index stays PostgreSQL's",
					sizeof(subquery_reason));
			return true;
		}
	}
	return false;
}

static ExplainOneQuery_hook_type prev_explain_hook = NULL;

/*
 * EXPLAIN as PostgreSQL does it (commands/explain.c, ExplainOneQuery), then,
 * for VERBOSE text output, one line saying why pg_warp left the query to
 * PostgreSQL.
 */
static void
warp_explain_one_query(Query *query, int cursorOptions, IntoClause *into,
					   ExplainState *es, const char *queryString,
					   ParamListInfo params, QueryEnvironment *queryEnv)
{
	last_reason[0] = '\0';
	subquery_reason[0] = '\0';
	if (prev_explain_hook)
		prev_explain_hook(query, cursorOptions, into, es, queryString, params, queryEnv);
	else
	{
		PlannedStmt *plan;
		instr_time	planstart,
					planduration;
		BufferUsage bufusage_start,
					bufusage;

		if (es->buffers)
			bufusage_start = pgBufferUsage;
		INSTR_TIME_SET_CURRENT(planstart);
		plan = pg_plan_query(query, queryString, cursorOptions, params);
		INSTR_TIME_SET_CURRENT(planduration);
		INSTR_TIME_SUBTRACT(planduration, planstart);
		if (es->buffers)
		{
			memset(&bufusage, 0, sizeof(BufferUsage));
			BufferUsageAccumDiff(&bufusage, &pgBufferUsage, &bufusage_start);
		}
		ExplainOnePlan(plan, into, es, queryString, params, queryEnv,
					   &planduration, (es->buffers ? &bufusage : NULL));
	}
	if (es->verbose && es->format == EXPLAIN_FORMAT_TEXT && last_reason[0])
		appendStringInfo(es->str, "pg_warp: not offloaded: %s\n", last_reason);
	if (es->verbose && es->format == EXPLAIN_FORMAT_TEXT && subquery_reason[0])
		appendStringInfo(es->str, "pg_warp: subquery not offloaded: %s\n", subquery_reason);
}

/* ------------------------------------------------- the star's plan */

/*
 * The plan's description of each join (WarpPlanJoin): fact key,
 * dimension key, the positions of the payload columns and of the key(s) in
 * the dimension plan's output, the join kind, and the keys for EXPLAIN.
 * false (reason noted) if a dimension plan lacks a column.
 */
bool
star_joins(StarInfo *si, List **joins_out)
{
	List	   *joins = NIL;
	ListCell   *fk,
			   *dk,
			   *pl;
	ListCell   *dc = list_head(si->dims);

	forthree(fk, si->fact_keys, dk, si->dim_keys, pl, si->payload)
	{
		/* the dimension plan outputs its path's target, in order */
		PathTarget *dt = ((RelOptInfo *) lfirst(dc))->cheapest_total_path->pathtarget;
		List	   *presnos = NIL;
		ListCell   *vc;
		int			key_resno = target_position(dt, lfirst(dk));
		Var		   *dk2 = list_nth(si->dim_keys2, foreach_current_index(fk));
		int			key2_resno = dk2 ? target_position(dt, dk2) : 0;
		int			kind;
		WarpPlanJoin join;

		if (key2_resno < 0)
			key_resno = -1;

		foreach(vc, (List *) lfirst(pl))
		{
			int			r = target_position(dt, lfirst(vc));

			if (r < 0)
				key_resno = -1;
			presnos = lappend_int(presnos, r);
		}
		if (key_resno < 0)
			return not_offloaded("a dimension plan does not output its key or group columns");
		kind = list_nth_int(si->kinds, foreach_current_index(fk));
		/* cannot happen: nothing above a semi/anti join sees its inner side */
		if (presnos != NIL && (kind == WARP_JOIN_SEMI || kind == WARP_JOIN_ANTI))
			return not_offloaded("columns of a semi- or anti-joined dimension");
		join.fact_key = lfirst(fk);
		join.dim_key = lfirst(dk);
		join.payload_resnos = presnos;
		join.key_resno = key_resno;
		join.kind = kind;
		join.key2_resno = key2_resno;
		join.key_display = list_nth(si->key_display, foreach_current_index(fk));
		joins = lappend(joins, form_warp_plan_join(&join));
		dc = lnext(si->dims, dc);
	}
	*joins_out = joins;
	return true;
}

/*
 * A serial CustomPath of parent: not parameterized, not ordered, no
 * children; the caller adds those, flags, custom_private and methods
 * (star_path, and WarpMerge's in warp_merge_scan.c).
 */
CustomPath *
serial_custom_path(RelOptInfo *parent, PathTarget *target, double rows,
				   Cost startup, Cost total)
{
	CustomPath *cp = makeNode(CustomPath);

	cp->path.pathtype = T_CustomScan;
	cp->path.parent = parent;
	cp->path.pathtarget = target;
	cp->path.param_info = NULL;
	cp->path.parallel_aware = false;
	cp->path.parallel_safe = false;
	cp->path.parallel_workers = 0;
	cp->path.rows = rows;
	cp->path.startup_cost = startup;
	cp->path.total_cost = total;
	cp->path.pathkeys = NIL;
	cp->flags = 0;
	return cp;
}

/*
 * The serial engine path of a star: its dimension plans as children; the
 * caller sets flags, custom_private and methods.
 */
CustomPath *
star_path(RelOptInfo *parent, PathTarget *target, StarInfo *si, double rows,
		  Cost startup, Cost total)
{
	CustomPath *cp = serial_custom_path(parent, target, rows, startup, total);
	ListCell   *lc;

	foreach(lc, si->dims)
		cp->custom_paths = lappend(cp->custom_paths, dim_path((RelOptInfo *) lfirst(lc)));
	return cp;
}

/*
 * The parallel-aware copy of a star's serial path cp, for `workers`
 * workers: every participant builds the dimensions (from the parallel-safe
 * plans in sc); the fact is split.  The caller sets rows and costs.
 */
CustomPath *
parallel_star_path(CustomPath *cp, int workers, StarCost *sc)
{
	CustomPath *pp = makeNode(CustomPath);

	memcpy(pp, cp, sizeof(CustomPath));
	pp->path.parallel_aware = true;
	pp->path.parallel_safe = true;
	pp->path.parallel_workers = workers;
	pp->custom_paths = sc->par_dim_paths;
	return pp;
}

/* whether a path has WarpJoin or WarpScan under it (through the upper
 * paths PostgreSQL puts over a scan/join relation's paths) */
static bool
has_row_join(Path *p)
{
	ListCell   *lc;

	if (p == NULL)
		return false;
	switch (nodeTag(p))
	{
		case T_CustomPath:
			if (((CustomPath *) p)->methods == &warp_join_path_methods ||
				((CustomPath *) p)->methods == &warp_scan_path_methods)
				return true;
			foreach(lc, ((CustomPath *) p)->custom_paths)
				if (has_row_join(lfirst(lc)))
					return true;
			return false;
		case T_AggPath:
			return has_row_join(((AggPath *) p)->subpath);
		case T_GroupingSetsPath:
			return has_row_join(((GroupingSetsPath *) p)->subpath);
		case T_GroupPath:
			return has_row_join(((GroupPath *) p)->subpath);
		case T_SortPath:
		case T_IncrementalSortPath:
			return has_row_join(((SortPath *) p)->subpath);
		case T_ProjectionPath:
			return has_row_join(((ProjectionPath *) p)->subpath);
		case T_GatherPath:
			return has_row_join(((GatherPath *) p)->subpath);
		case T_GatherMergePath:
			return has_row_join(((GatherMergePath *) p)->subpath);
		case T_MaterialPath:
			return has_row_join(((MaterialPath *) p)->subpath);
		case T_NestPath:
		case T_MergePath:
		case T_HashPath:
			/* WarpJoin for part of the joins, PostgreSQL's above */
			return has_row_join(((JoinPath *) p)->outerjoinpath) ||
				has_row_join(((JoinPath *) p)->innerjoinpath);
		case T_UpperUniquePath:
			return has_row_join(((UpperUniquePath *) p)->subpath);
		default:
			return false;
	}
}

/*
 * WarpPreAgg takes the query: drop the paths PostgreSQL built by
 * aggregating WarpJoin's (or WarpScan's) rows.  The cost model can rank them close (both
 * scan the fact table on the engine), but the engine aggregating is always
 * the faster of the two: it never makes a row of every joined fact row.
 */
static void
drop_row_join_paths(RelOptInfo *rel)
{
	ListCell   *lc;

	foreach(lc, rel->pathlist)
		if (has_row_join(lfirst(lc)))
			rel->pathlist = foreach_delete_current(rel->pathlist, lc);
	foreach(lc, rel->partial_pathlist)
		if (has_row_join(lfirst(lc)))
			rel->partial_pathlist = foreach_delete_current(rel->partial_pathlist, lc);
}

/*
 * The plan's custom_private: the star as a WarpPlanInfo, formed
 * (warp_plan_info.h; the executor's warp_scan_state_from_plan deforms it).
 * where: 0 for this backend, 1 + GpudDeviceKind for pg_warp_gpud; rows:
 * row mode (WarpJoin, WarpScan), whose ORDER BY ... LIMIT
 * warp_plan_with_order adds.
 */
List *
star_private(PlannerInfo *root, StarInfo *si, StarCost *sc, List *joins, Relids relids,
			 int where, bool rows)
{
	WarpPlanInfo info;

	info.fact_relid = si->fact->relid;
	info.first_relid = bms_next_member(relids, -1);
	info.quals = si->quals;
	info.fact_attrs = sc->fact_attrs;
	info.joins = joins;
	info.key_info = si->key_info;
	info.agg_info = si->agg_info;
	info.outmap = si->outmap;
	info.gate = si->gate;
	info.fact_oid = planner_rt_fetch(si->fact->relid, root)->relid;
	info.where = where;
	info.heap = si->heap;
	info.distinct_key = si->distinct_key;
	info.distinct_agg = si->distinct_agg;
	info.rows = rows;
	info.order = NIL;
	info.device_choice = sc->device_choice;
	return form_warp_plan_info(&info);
}

/* custom_private of a row-mode path with its ORDER BY ... LIMIT (formed) */
List *
warp_plan_with_order(List *priv, List *order)
{
	WarpPlanInfo info;

	deform_warp_plan_info(priv, &info);
	info.order = order;
	return form_warp_plan_info(&info);
}

/* ---------------------------------------------------------- WarpPreAgg */

/*
 * The aggregation above the engine's path `in`: PostgreSQL's Finalize
 * Aggregate combining the partial states, or for two-level grouping a
 * plain Aggregate over the engine's distinct rows (sorted by the group
 * keys: DISTINCT aggregates cannot be hashed).
 */
static void
add_final_agg(PlannerInfo *root, RelOptInfo *output_rel, GroupPathExtraData *extra,
			  StarInfo *si, Path *in, double ngroups)
{
	Query	   *parse = root->parse;
	AggClauseCosts costs;
	AggPath    *ap;

	if (OidIsValid(si->merge_fn))
	{
		warp_add_merge_path(root, output_rel, in, extra->havingQual,
							si->merge_plain, si->merge_partial, si->merge_fn, ngroups);
		return;
	}
	memset(&costs, 0, sizeof(costs));
	if (!si->two_level)
	{
		get_agg_clause_costs(root, AGGSPLIT_FINAL_DESERIAL, &costs);
		ap = create_agg_path(root, output_rel, in, output_rel->reltarget,
							 parse->groupClause ? AGG_HASHED : AGG_PLAIN,
							 AGGSPLIT_FINAL_DESERIAL, parse->groupClause,
							 (List *) extra->havingQual, &costs, ngroups);
	}
	else
	{
		get_agg_clause_costs(root, AGGSPLIT_SIMPLE, &costs);
		/* (no pathkeys: every group key is a constant, one group) */
		if (parse->groupClause && !pathkeys_contained_in(root->group_pathkeys, in->pathkeys))
			in = (Path *) create_sort_path(root, in->parent, in, root->group_pathkeys, -1.0);
		ap = create_agg_path(root, output_rel, in, output_rel->reltarget,
							 parse->groupClause ? AGG_SORTED : AGG_PLAIN,
							 AGGSPLIT_SIMPLE, parse->groupClause,
							 (List *) extra->havingQual, &costs, ngroups);
	}
	add_path(output_rel, (Path *) ap);
}

static void
try_preagg(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *output_rel,
		   GroupPathExtraData *extra)
{
	Query	   *parse = root->parse;
	StarInfo	si;
	ListCell   *lc;
	CustomPath *cp;
	StarCost	sc;
	double		ngroups;
	double		engine_rows;
	Cost		cost;
	bool		on_daemon = false;
	bool		tcache = false;
	int			daemon_kind = GPUD_DEVICE_CPU;
	/* the CPU driver's threads in this backend (1: parallel plans instead) */
	int			cpu_threads = pgwarp_cpu_thread_count();

	memset(&si, 0, sizeof(si));
	if (!find_star(root, input_rel, &si))
		return;
	if (parse->groupClause && !grouping_is_hashable(parse->groupClause))
	{
		not_offloaded("group keys that cannot be hashed");
		return;
	}
	if (!star_fact_quals(root, &si))
		return;
	if (!build_partial_target(root, output_rel, extra, &si))
		return;
	if (si.two_level && parse->groupClause && !grouping_is_sortable(parse->groupClause))
	{
		not_offloaded("DISTINCT aggregates with group keys that cannot be sorted");
		return;
	}
	if (heap_special_refused(root, &si, (Node *) si.quals) ||
		heap_special_refused(root, &si, (Node *) si.fact_exprs) ||
		heap_special_refused(root, &si, (Node *) si.fact_keys))
		return;

	if (!star_dims_fit(&si))
		return;

	/*
	 * Where it runs: on pg_warp_gpud (mode gpu: whatever the daemon drives;
	 * auto: only a GPU), or on the CPU driver in the backend.  Daemon plans
	 * are not parallel: the daemon does the reading.
	 */
	star_costs(&si, &sc);
	if (pgwarp_mode != PGWARP_MODE_CPU && si.heap &&
		tcache_plan_usable(planner_rt_fetch(si.fact->relid, root)->relid))
	{
		/* a heap table attached to the GPU table cache: its replica in the
		 * daemon, whatever the daemon drives (tcache.h) */
		int			kind;

		on_daemon = pgwarp_gpud_serving(&kind);
		daemon_kind = kind;
		tcache = on_daemon;
	}
	else if (pgwarp_mode != PGWARP_MODE_CPU && !si.heap)
	{
		GpudStatus	st;
		bool		serving = pgwarp_gpud_status(&st);

		daemon_kind = st.kind;

		if (pgwarp_mode == PGWARP_MODE_GPU && !serving)
		{
			not_offloaded("pg_warp.mode = gpu, and pg_warp_gpud is not running");
			return;
		}
		on_daemon = serving && (pgwarp_mode == PGWARP_MODE_GPU ||
								(st.kind == GPUD_DEVICE_GPU && gpu_can_run(&si)));
		/* auto: the CPU driver where the GPU would wait on the link */
		if (on_daemon && st.kind == GPUD_DEVICE_GPU)
			on_daemon = device_choice(&st, &sc, cpu_threads, pgwarp_mode == PGWARP_MODE_GPU);
	}

	if ((on_daemon && daemon_kind == GPUD_DEVICE_GPU) || tcache)
		cost = WARP_STARTUP_COST + sc.fact_cost / WARP_GPU_FACTOR + sc.dims_cost;
	else
		cost = WARP_STARTUP_COST + sc.fact_cost / (on_daemon || si.heap ? 1 : cpu_threads) +
			sc.dims_cost;
	if (parse->groupClause)
		ngroups = estimate_num_groups(root,
									  get_sortgrouplist_exprs(parse->groupClause,
															  extra->targetList),
									  input_rel->rows, NULL, NULL);
	else
		ngroups = 1;
	/* the engine's rows: one per group, or per distinct (keys, arguments) */
	engine_rows = ngroups;
	if (si.two_level)
	{
		List	   *exprs = NIL;

		foreach(lc, si.partial_target->exprs)
			if (!IsA(lfirst(lc), Aggref))
				exprs = lappend(exprs, lfirst(lc));
		engine_rows = estimate_num_groups(root, exprs, input_rel->rows, NULL, NULL);
	}

	cp = star_path(fetch_upper_rel(root, UPPERREL_PARTIAL_GROUP_AGG, input_rel->relids),
				   si.partial_target, &si, engine_rows, cost, cost + engine_rows * cpu_tuple_cost);
	{
		List	   *joins;

		if (!star_joins(&si, &joins))
			return;
		/* 0: the backend's CPU driver; 1 + GpudDeviceKind: pg_warp_gpud */
		cp->custom_private = star_private(root, &si, &sc, joins, input_rel->relids,
										  on_daemon ? 1 + daemon_kind : 0, false);
	}
	cp->methods = &warp_preagg_path_methods;

	/* the engine aggregates: PostgreSQL's Agg over WarpJoin's rows goes */
	drop_row_join_paths(output_rel);
	add_final_agg(root, output_rel, extra, &si, &cp->path, ngroups);

	/*
	 * The parallel plan: Finalize Aggregate -> Gather -> WarpPreAgg, every
	 * participant claiming fact batches from a shared counter, building the
	 * (small) dimension tables itself and emitting its own partial states.
	 * Only with pg_warp.cpu_threads = 1: otherwise the serial plan above runs
	 * the engine on that many threads of the backend, which is the same
	 * split of the work without starting worker processes (about 12 ms on a
	 * small VM, more once the session has loaded llvmjit, which every worker
	 * then loads too).  A heap fact table is read by PostgreSQL's table AM,
	 * which only the process can call: its plan is parallel whatever the
	 * threads (a parallel heap scan hands out the pages).
	 */
	if (!on_daemon && (cpu_threads == 1 || si.heap) && si.distinct_agg < 0 &&
		input_rel->consider_parallel &&
		si.fact->consider_parallel && max_parallel_workers_per_gather > 0)
	{
		int			workers;
		double		divisor;
		CustomPath *pp;
		GatherPath *gp;
		double		grows;

		workers = compute_parallel_worker(si.fact, sc.fact_bytes / BLCKSZ, -1,
										  max_parallel_workers_per_gather);
		workers = Min(workers, (int) Min(sc.fact_batches, (double) INT_MAX));
		if (sc.dims_safe && workers > 0)
		{
			divisor = workers + (parallel_leader_participation ? 1.0 : 0.0);
			pp = parallel_star_path(cp, workers, &sc);
			pp->path.rows = engine_rows;
			pp->path.startup_cost = WARP_STARTUP_COST + sc.par_dims_cost + sc.fact_cost / divisor;
			pp->path.total_cost = pp->path.startup_cost + engine_rows * cpu_tuple_cost;
			grows = engine_rows * divisor;
			gp = create_gather_path(root, cp->path.parent, &pp->path, si.partial_target,
									NULL, &grows);
			add_final_agg(root, output_rel, extra, &si, &gp->path, ngroups);
		}
	}
}

static void
warp_upper_paths(PlannerInfo *root, UpperRelationKind stage, RelOptInfo *input_rel,
				 RelOptInfo *output_rel, void *extra)
{
	if (prev_upper_paths_hook)
		prev_upper_paths_hook(root, stage, input_rel, output_rel, extra);
	if (stage != UPPERREL_GROUP_AGG || !pgwarp_enabled || !pgwarp_enable_preagg)
		return;
	if (input_rel->reloptkind != RELOPT_BASEREL && input_rel->reloptkind != RELOPT_JOINREL)
		return;
	if (in_correlated_subquery(root, input_rel->relids))
		return;
	try_preagg(root, input_rel, output_rel, (GroupPathExtraData *) extra);
}

/* ------------------------------------------------------ joins, no aggregates */

static void
warp_join_paths(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
				RelOptInfo *innerrel, JoinType jointype, JoinPathExtraData *extra)
{
	Query	   *parse = root->parse;
	ListCell   *lc;

	if (prev_join_pathlist_hook)
		prev_join_pathlist_hook(root, joinrel, outerrel, innerrel, jointype, extra);
	if (pgwarp_enabled && pgwarp_enable_spatial)
		warp_spatial_join_paths(root, joinrel, outerrel, innerrel, jointype, extra);
	if (!pgwarp_enabled || !pgwarp_enable_join)
		return;
	/* aggregation too: WarpPreAgg, if it takes the query, drops these paths */
	if (parse->commandType != CMD_SELECT || in_correlated_subquery(root, joinrel->relids))
		return;
	/* once per relation: this hook runs for every way of splitting it */
	foreach(lc, list_concat_copy(joinrel->pathlist, joinrel->partial_pathlist))
		if (IsA(lfirst(lc), CustomPath) &&
			((CustomPath *) lfirst(lc))->methods == &warp_join_path_methods)
			return;
	if (bms_equal(joinrel->relids, root->all_baserels))
		try_rows(root, joinrel);
	else
	{
		/*
		 * Part of the FROM list: the star grows a depth at a time, so a
		 * query whose other joins the engine cannot do (a table that is no
		 * dimension, a full join, a condition across tables) still has the
		 * fact table and its dimensions joined by the engine, PostgreSQL
		 * joining the rest above.  Why a part was refused is not the
		 * query's reason for EXPLAIN VERBOSE.
		 */
		char		saved[sizeof(last_reason)];
		int			rti = -1;

		/* (rows of a heap fact table are PostgreSQL's: no Arrow, nothing) */
		while ((rti = bms_next_member(joinrel->relids, rti)) >= 0)
			if (root->simple_rel_array[rti] != NULL &&
				arrow_fdw_is_arrow_rel(root->simple_rel_array[rti]))
				break;
		if (rti < 0)
			return;
		strlcpy(saved, last_reason, sizeof(saved));
		try_join_rows(root, joinrel);
		strlcpy(last_reason, saved, sizeof(last_reason));
	}
}

/*
 * set_rel_pathlist_hook: WarpScan for the one Arrow table of a query
 * without joins.  Joins are WarpJoin's (warp_join_paths); an Arrow table
 * scanned below one of PostgreSQL's joins keeps arrow_fdw's scan, with the
 * engine as its row prefilter (warp_scan_filter.c).
 */
static void
warp_rel_paths(PlannerInfo *root, RelOptInfo *rel, Index rti, RangeTblEntry *rte)
{
	if (prev_rel_pathlist_hook)
		prev_rel_pathlist_hook(root, rel, rti, rte);
	if (pgwarp_enabled && pgwarp_enable_spatial)
		warp_spatial_rel_paths(root, rel, rte);
	if (!pgwarp_enabled || !pgwarp_enable_scan || rel->reloptkind != RELOPT_BASEREL ||
		!bms_equal(rel->relids, root->all_baserels) ||
		root->parse->commandType != CMD_SELECT || !arrow_fdw_is_arrow_rel(rel) ||
		in_correlated_subquery(root, rel->relids))
		return;
	try_rows(root, rel);
}

/* ---------------------------------------------------------------- plan */

static bool
exec_param_walker(Node *node, List **params)
{
	if (node == NULL)
		return false;
	if (IsA(node, Param) && ((Param *) node)->paramkind == PARAM_EXEC)
	{
		*params = list_append_unique(*params, node);
		return false;
	}
	return expression_tree_walker(node, exec_param_walker, params);
}

/*
 * The subquery values (PARAM_EXEC) anywhere in custom_private's
 * expressions, which the node evaluates when it builds its program.  They
 * become the plan's custom_exprs, the one list finalize_plan reads, so the
 * node's extParam names them and a new value (an outer query's next row)
 * rescans it.
 */
static void
collect_exec_params(Node *node, List **params)
{
	ListCell   *lc;

	if (node == NULL)
		return;
	if (IsA(node, List))
	{
		foreach(lc, (List *) node)
			collect_exec_params(lfirst(lc), params);
		return;
	}
	if (IsA(node, IntList) || IsA(node, OidList) || IsA(node, Integer) ||
		IsA(node, String) || IsA(node, Float) || IsA(node, Boolean))
		return;
	(void) exec_param_walker(node, params);
}

static Plan *
warp_plan_custom_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
					  List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cs = makeNode(CustomScan);

	cs->scan.plan.targetlist = tlist;
	cs->scan.plan.qual = NIL;
	cs->scan.scanrelid = 0;
	if (best_path->methods == &warp_scan_path_methods)
		cs->scan.scanrelid = rel->relid;	/* EXPLAIN: "on <table>" */
	if (best_path->methods == &warp_join_path_methods ||
		best_path->methods == &warp_scan_path_methods)
	{
		/*
		 * WarpJoin projects (CUSTOMPATH_SUPPORT_PROJECTION): the scan tuple
		 * is the path's own columns, in the order of the program's output
		 * map, and tlist (NIL when the caller puts the projection on later)
		 * any expressions over them, computed by ExecScan
		 */
		cs->custom_scan_tlist = make_tlist_from_pathtarget(best_path->path.pathtarget);
		if (tlist == NIL)
			cs->scan.plan.targetlist = copyObject(cs->custom_scan_tlist);
	}
	else
		cs->custom_scan_tlist = copyObject(tlist);
	cs->custom_plans = custom_plans;
	cs->custom_exprs = NIL;
	collect_exec_params((Node *) best_path->custom_private, &cs->custom_exprs);
	cs->custom_private = best_path->custom_private;
	cs->flags = best_path->flags;
	if (best_path->methods == &warp_join_path_methods)
		cs->methods = &warp_join_scan_methods;
	else if (best_path->methods == &warp_scan_path_methods)
		cs->methods = &warp_scan_scan_methods;
	else
		cs->methods = &warp_preagg_scan_methods;
	return &cs->scan.plan;
}

void
pgwarp_planner_init(void)
{
	warp_preagg_path_methods.CustomName = "WarpPreAgg";
	warp_preagg_path_methods.PlanCustomPath = warp_plan_custom_path;
	warp_join_path_methods.CustomName = "WarpJoin";
	warp_join_path_methods.PlanCustomPath = warp_plan_custom_path;
	warp_scan_path_methods.CustomName = "WarpScan";
	warp_scan_path_methods.PlanCustomPath = warp_plan_custom_path;
	warp_spatial_planner_init();
	prev_upper_paths_hook = create_upper_paths_hook;
	create_upper_paths_hook = warp_upper_paths;
	prev_join_pathlist_hook = set_join_pathlist_hook;
	set_join_pathlist_hook = warp_join_paths;
	prev_rel_pathlist_hook = set_rel_pathlist_hook;
	set_rel_pathlist_hook = warp_rel_paths;
	prev_explain_hook = ExplainOneQuery_hook;
	ExplainOneQuery_hook = warp_explain_one_query;
	warp_decorrelate_init();
}
