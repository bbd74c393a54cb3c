/*
 * warp_plan_spatial.c — WarpSpatialJoin paths: an inner join of two
 * relations on one PostGIS predicate (ST_Contains, ST_Within, ST_Covers,
 * ST_CoveredBy, ST_Intersects, ST_DWithin, &&) between two geometry
 * columns.
 *
 * The build side (inner child) is the side of the container argument for
 * ST_Contains/ST_Covers and their converses, else the smaller relation; its
 * rows are read once and its geometries become a grid (warp_geom_set.h).
 * The probe side (outer child) streams; each row is tested against the
 * geometries of its grid cell.  Other clauses of the join are the node's
 * qual, evaluated on joined rows.  Aggregates and grouping stay above in
 * PostgreSQL's Agg.
 *
 * A join of its own rather than a dimension of the star program: the star
 * program's joins are equality probes of hash or direct-address tables run
 * by the engine on Arrow or heap fact rows; a spatial probe needs variable
 * work per row and PostGIS's function for the rows it cannot decide, which
 * only a backend can call.  See docs/ARCHITECTURE.md.
 */
#include "postgres.h"

#include "catalog/pg_class.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "optimizer/tlist.h"

#include "pg_warp.h"
#include "warp.h"
#include "warp_plan_internal.h"
#include "warp_spatial.h"

static CustomPathMethods warp_spatial_path_methods;

/* per probe row: fetch, decode, grid lookup; per build row: decode, index */
#define SPATIAL_PROBE_COST	(4 * DEFAULT_CPU_OPERATOR_COST)
#define SPATIAL_BUILD_COST	(20 * DEFAULT_CPU_OPERATOR_COST)

static Var *
geometry_var(Node *n)
{
	while (n && IsA(n, RelabelType))
		n = (Node *) ((RelabelType *) n)->arg;
	if (n && IsA(n, Var) && ((Var *) n)->varlevelsup == 0)
		return (Var *) n;
	return NULL;
}

/* an expression evaluated once per execution: no columns, nothing volatile */
static bool
run_constant(Node *n)
{
	return !contain_var_clause(n) && !contain_volatile_functions(n) &&
		!contain_exec_param(n, NIL) && !contain_subplans(n);
}

/* only Vars in a target (no placeholders or expressions) */
static bool
plain_target(PathTarget *t)
{
	ListCell   *lc;

	foreach(lc, t->exprs)
		if (!IsA(lfirst(lc), Var))
			return false;
	return true;
}

/*
 * The spatial clause of a join: a recognised predicate whose two geometry
 * arguments are Vars, one from each side, and whose distance (ST_DWithin)
 * is a constant or an external parameter.  NULL (reason noted) if none.
 */
static RestrictInfo *
find_spatial_clause(List *restrictlist, RelOptInfo *outerrel, RelOptInfo *innerrel,
					WarpSpatialFunc *fn, Var **args)
{
	ListCell   *lc;
	const char *why = NULL;

	foreach(lc, restrictlist)
	{
		RestrictInfo *ri = lfirst(lc);
		Oid			funcid,
					collid;
		List	   *fargs;
		const char *w;

		if (!warp_spatial_clause_parts(ri->clause, &funcid, &collid, &fargs) ||
			list_length(fargs) < 2)
			continue;
		if (!warp_spatial_func(funcid, fn, &w))
		{
			if (w)
				why = w;
			continue;
		}
		args[0] = geometry_var(linitial(fargs));
		args[1] = geometry_var(lsecond(fargs));
		if (!args[0] || !args[1] || args[0]->varno == args[1]->varno)
		{
			why = "a spatial predicate's arguments are not columns of the two joined sides";
			continue;
		}
		if (!((bms_is_member(args[0]->varno, outerrel->relids) &&
			   bms_is_member(args[1]->varno, innerrel->relids)) ||
			  (bms_is_member(args[1]->varno, outerrel->relids) &&
			   bms_is_member(args[0]->varno, innerrel->relids))))
			continue;
		if (fn->nargs == 3)
		{
			if (!run_constant(lthird(fargs)))
			{
				why = "ST_DWithin's distance is not a constant or a query parameter";
				continue;
			}
		}
		return ri;
	}
	if (why)
		not_offloaded(why);
	return NULL;
}

/* the cheapest unparameterized parallel-safe path of a list, or NULL */
static Path *
cheapest_parallel_safe(List *paths)
{
	ListCell   *lc;
	Path	   *best = NULL;

	foreach(lc, paths)
	{
		Path	   *p = lfirst(lc);

		if (p->param_info == NULL && p->parallel_safe &&
			(best == NULL || p->total_cost < best->total_cost))
			best = p;
	}
	return best;
}

/* a WarpSpatialJoin or WarpSpatialFilter path over children (inner: NULL) */
static CustomPath *
spatial_path(RelOptInfo *rel, Path *outer, Path *inner, double rows, Cost startup, Cost total)
{
	CustomPath *cp = serial_custom_path(rel, rel->reltarget, rows, startup, total);

	cp->custom_paths = inner ? list_make2(outer, inner) : list_make1(outer);
	cp->methods = &warp_spatial_path_methods;
	return cp;
}

void
warp_spatial_join_paths(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
						RelOptInfo *innerrel, JoinType jointype, JoinPathExtraData *extra)
{
	WarpSpatialFunc fn;
	Var		   *args[2];
	RestrictInfo *sri;
	Path	   *outer_path = outerrel->cheapest_total_path;
	Path	   *inner_path = innerrel->cheapest_total_path;
	int			build_arg;
	CustomPath *cp;
	List	   *quals = NIL;
	ListCell   *lc;
	Cost		startup,
				total;

	if (jointype != JOIN_INNER || root->parse->commandType != CMD_SELECT)
		return;
	sri = find_spatial_clause(extra->restrictlist, outerrel, innerrel, &fn, args);
	if (sri == NULL)
		return;
	if (pgwarp_mode == PGWARP_MODE_GPU)
	{
		not_offloaded("spatial joins run on the CPU in the backend (pg_warp.mode = gpu asks for "
					  "the GPU, which has no spatial probe yet)");
		return;
	}
	/* the build side: the container, or the smaller side */
	if (fn.container_arg >= 0)
		build_arg = fn.container_arg;
	else
		build_arg = bms_is_member(args[0]->varno, innerrel->relids) ==
			(innerrel->rows <= outerrel->rows) ? 0 : 1;
	/* one path per pair: the build side is this call's inner side */
	if (!bms_is_member(args[build_arg]->varno, innerrel->relids))
		return;
	if (outer_path == NULL || inner_path == NULL || outer_path->param_info ||
		inner_path->param_info || !plain_target(joinrel->reltarget) ||
		!plain_target(outer_path->pathtarget) || !plain_target(inner_path->pathtarget))
	{
		not_offloaded("a spatial join side is parameterized or outputs expressions");
		return;
	}
	foreach(lc, extra->restrictlist)
		if (lfirst(lc) != sri)
			quals = lappend(quals, ((RestrictInfo *) lfirst(lc))->clause);

	startup = inner_path->total_cost + innerrel->rows * (cpu_tuple_cost + SPATIAL_BUILD_COST);
	total = startup + outer_path->total_cost +
		outerrel->rows * (cpu_tuple_cost + SPATIAL_PROBE_COST) +
		joinrel->rows * cpu_operator_cost * (1 + list_length(quals));
	cp = spatial_path(joinrel, outer_path, inner_path, joinrel->rows, startup, total);
	cp->custom_private = list_make3(sri->clause, makeInteger(build_arg), quals);
	add_path(joinrel, &cp->path);

	/*
	 * The parallel probe: each participant probes its share of the outer
	 * rows (a partial path) against its own copy of the build side (the
	 * inner path whole: a few thousand polygons cost milliseconds to index,
	 * less than sharing them would).
	 */
	inner_path = cheapest_parallel_safe(innerrel->pathlist);
	if (joinrel->consider_parallel && outerrel->partial_pathlist != NIL && inner_path)
	{
		Path	   *part = linitial(outerrel->partial_pathlist);
		double		share = outerrel->rows > 0 ? part->rows / outerrel->rows : 1.0;

		if (part->param_info || !plain_target(part->pathtarget) ||
			!plain_target(inner_path->pathtarget))
			return;
		startup = inner_path->total_cost +
			innerrel->rows * (cpu_tuple_cost + SPATIAL_BUILD_COST);
		total = startup + part->total_cost +
			part->rows * (cpu_tuple_cost + SPATIAL_PROBE_COST) +
			joinrel->rows * share * cpu_operator_cost * (1 + list_length(quals));
		cp = spatial_path(joinrel, part, inner_path, clamp_row_est(joinrel->rows * share),
						  startup, total);
		cp->path.parallel_safe = true;
		cp->path.parallel_workers = part->parallel_workers;
		cp->custom_private = list_make3(sri->clause, makeInteger(build_arg), quals);
		add_partial_path(joinrel, &cp->path);
	}
}

/* an index path of rel whose index conditions come from the clause ri */
static bool
index_path_uses(Path *p, RestrictInfo *ri)
{
	ListCell   *lc;

	if (IsA(p, BitmapHeapPath))
		return index_path_uses(((BitmapHeapPath *) p)->bitmapqual, ri);
	if (IsA(p, BitmapAndPath) || IsA(p, BitmapOrPath))
	{
		List	   *quals = IsA(p, BitmapAndPath) ? ((BitmapAndPath *) p)->bitmapquals :
			((BitmapOrPath *) p)->bitmapquals;

		foreach(lc, quals)
			if (index_path_uses(lfirst(lc), ri))
				return true;
		return false;
	}
	if (!IsA(p, IndexPath))
		return false;
	foreach(lc, ((IndexPath *) p)->indexclauses)
		if (((IndexClause *) lfirst(lc))->rinfo == ri)
			return true;
	return false;
}

static bool
has_index_path(RelOptInfo *rel, RestrictInfo *ri)
{
	ListCell   *lc;

	foreach(lc, rel->pathlist)
		if (index_path_uses(lfirst(lc), ri))
			return true;
	return false;
}

/*
 * A copy of the cheapest unparameterized foreign path in a list (partial or
 * not), or NULL: a copy, since add_path frees the paths a cheaper one (the
 * filter's own) displaces.
 */
static Path *
cheapest_foreign(List *paths)
{
	ListCell   *lc;
	Path	   *best = NULL;
	ForeignPath *copy;

	foreach(lc, paths)
	{
		Path	   *p = lfirst(lc);

		if (p->param_info == NULL && IsA(p, ForeignPath) &&
			(best == NULL || p->total_cost < best->total_cost))
			best = p;
	}
	if (best == NULL)
		return NULL;
	copy = makeNode(ForeignPath);
	memcpy(copy, best, sizeof(ForeignPath));
	return &copy->path;
}

/*
 * A filter path over child (a scan of rel whose plan loses the spatial
 * clause), and its parallel twin over partial, if any.
 */
static void
add_filter_paths(PlannerInfo *root, RelOptInfo *rel, RestrictInfo *ri, int probe_arg,
				 Path *child, Path *partial)
{
	QualCost	qc;
	CustomPath *cp;
	double		share;

	cost_qual_eval_node(&qc, (Node *) ri->clause, root);
	cp = spatial_path(rel, child, NULL, rel->rows, child->startup_cost,
					  child->total_cost + rel->tuples * (SPATIAL_PROBE_COST - qc.per_tuple) +
					  rel->rows * cpu_tuple_cost);
	cp->custom_private = list_make3(ri->clause, makeInteger(1 - probe_arg), NIL);
	add_path(rel, &cp->path);
	if (partial == NULL || !rel->consider_parallel)
		return;
	share = rel->rows > 0 ? partial->rows / rel->rows : 1.0;
	cp = spatial_path(rel, partial, NULL, partial->rows, partial->startup_cost,
					  partial->total_cost +
					  rel->tuples * share * (SPATIAL_PROBE_COST - qc.per_tuple) +
					  partial->rows * cpu_tuple_cost);
	cp->path.parallel_safe = true;
	cp->path.parallel_workers = partial->parallel_workers;
	cp->custom_private = list_make3(ri->clause, makeInteger(1 - probe_arg), NIL);
	add_partial_path(rel, &cp->path);
}

/*
 * WarpSpatialFilter's paths: a table's rows filtered by a PostGIS predicate
 * between one of its geometry columns and a constant geometry (a literal,
 * a parameter, ST_MakePoint of them).  The table is a heap table (the
 * child a fresh sequential scan, parallel or not) or an Arrow table (the
 * child arrow_fdw's own scan); the child's plan loses the spatial clause
 * (the node evaluates it), its other quals stay in the scan.
 */
void
warp_spatial_rel_paths(PlannerInfo *root, RelOptInfo *rel, RangeTblEntry *rte)
{
	ListCell   *lc;
	bool		arrow;

	if (rel->reloptkind != RELOPT_BASEREL || rte->rtekind != RTE_RELATION ||
		root->parse->commandType != CMD_SELECT || !bms_is_empty(rel->lateral_relids) ||
		!plain_target(rel->reltarget))
		return;
	arrow = rte->relkind == RELKIND_FOREIGN_TABLE && arrow_fdw_is_arrow_rel(rel);
	if (!arrow && rte->relkind != RELKIND_RELATION && rte->relkind != RELKIND_MATVIEW)
		return;
	foreach(lc, rel->baserestrictinfo)
	{
		RestrictInfo *ri = lfirst(lc);
		WarpSpatialFunc fn;
		Oid			funcid,
					collid;
		List	   *fargs;
		const char *why;
		Var		   *v;
		int			probe_arg;
		Path	   *child,
				   *partial = NULL;

		if (!warp_spatial_clause_parts(ri->clause, &funcid, &collid, &fargs) ||
			list_length(fargs) < 2 || !warp_spatial_func(funcid, &fn, &why))
			continue;
		if ((v = geometry_var(linitial(fargs))) && v->varno == rel->relid &&
			run_constant(lsecond(fargs)))
			probe_arg = 0;
		else if ((v = geometry_var(lsecond(fargs))) && v->varno == rel->relid &&
				 run_constant(linitial(fargs)))
			probe_arg = 1;
		else
			continue;
		/* the column must be the point side (the constant the container) */
		if (fn.container_arg == probe_arg || (fn.nargs == 3 && !run_constant(lthird(fargs))))
			continue;
		if (pgwarp_mode == PGWARP_MODE_GPU)
		{
			not_offloaded("spatial filters run on the CPU in the backend (pg_warp.mode = gpu "
						  "asks for the GPU, which has no spatial probe yet)");
			return;
		}
		/*
		 * A selective filter that an index scan answers reads few rows;
		 * the node reads them all (PostGIS's functions cost 10000
		 * operators, which makes every plan that calls them fewer times
		 * look cheap, but reading the table is what counts then).
		 */
		if (!arrow && rel->tuples > 0 && rel->rows < 0.02 * rel->tuples &&
			has_index_path(rel, ri))
		{
			not_offloaded("a selective spatial filter is left to an index scan");
			return;
		}
		if (arrow)
		{
			child = cheapest_foreign(rel->pathlist);
			partial = cheapest_foreign(rel->partial_pathlist);
			if (child == NULL)
				return;
		}
		else
		{
			int			w = rel->consider_parallel ?
				compute_parallel_worker(rel, rel->pages, -1, max_parallel_workers_per_gather) : 0;

			child = (Path *) create_seqscan_path(root, rel, NULL, 0);
			if (w > 0)
				partial = (Path *) create_seqscan_path(root, rel, NULL, w);
		}
		add_filter_paths(root, rel, ri, probe_arg, child, partial);
		return;
	}
}

/* position of a Var in a child plan's output (1-based), or 0 */
static int
child_resno(Plan *child, Var *v)
{
	ListCell   *lc;

	foreach(lc, child->targetlist)
	{
		TargetEntry *te = lfirst(lc);

		if (IsA(te->expr, Var) && ((Var *) te->expr)->varno == v->varno &&
			((Var *) te->expr)->varattno == v->varattno)
			return te->resno;
	}
	return 0;
}

static int
scan_tlist_add(List **stl, Var *v)
{
	ListCell   *lc;
	int			i = 0;

	foreach(lc, *stl)
	{
		Var		   *e = (Var *) ((TargetEntry *) lfirst(lc))->expr;

		if (e->varno == v->varno && e->varattno == v->varattno)
			return i;
		i++;
	}
	*stl = lappend(*stl, makeTargetEntry((Expr *) copyObject(v), i + 1, NULL, false));
	return i;
}

/* a filter's plan: the child's scan without the spatial clause */
static Plan *
plan_filter(CustomScan *cs, WarpSpatialPlan *sp, Expr *clause, List *fargs, List *tlist,
			Plan *child)
{
	List	   *vars;
	ListCell   *lc;
	Var		   *probe = geometry_var(list_nth(fargs, 1 - sp->build_arg));

	sp->filter = true;
	child->qual = list_delete_ptr(child->qual, clause);
	/* the child outputs every column the node's output and clause need */
	vars = lappend(pull_var_clause((Node *) tlist, PVC_RECURSE_PLACEHOLDERS), probe);
	foreach(lc, vars)
		if (child_resno(child, lfirst(lc)) == 0)
			child->targetlist = lappend(child->targetlist,
										makeTargetEntry(copyObject(lfirst(lc)),
														list_length(child->targetlist) + 1,
														NULL, false));
	cs->custom_scan_tlist = NIL;
	foreach(lc, child->targetlist)
	{
		TargetEntry *te = lfirst(lc);

		cs->custom_scan_tlist = lappend(cs->custom_scan_tlist,
										makeTargetEntry(copyObject(te->expr),
														list_length(cs->custom_scan_tlist) + 1,
														NULL, false));
		sp->src_child = lappend_int(sp->src_child, 0);
		sp->src_resno = lappend_int(sp->src_resno, te->resno);
	}
	sp->arg_slot[sp->build_arg] = -1;
	sp->arg_slot[1 - sp->build_arg] = child_resno(child, probe) - 1;
	cs->scan.plan.targetlist = tlist;
	cs->scan.plan.qual = NIL;
	cs->scan.scanrelid = 0;
	cs->custom_plans = list_make1(child);
	cs->custom_exprs = list_make1(clause);
	cs->custom_private = warp_spatial_plan_form(sp);
	cs->methods = &warp_spatial_filter_scan_methods;
	return &cs->scan.plan;
}

static Plan *
warp_spatial_plan_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
					   List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cs = makeNode(CustomScan);
	Expr	   *clause = linitial(best_path->custom_private);
	int			build_arg = intVal(lsecond(best_path->custom_private));
	List	   *quals = lthird(best_path->custom_private);
	List	   *stl = NIL;
	List	   *vars;
	WarpSpatialPlan sp;
	Oid			funcid;
	List	   *fargs;
	ListCell   *lc;
	int			a;

	memset(&sp, 0, sizeof(sp));
	(void) warp_spatial_clause_parts(clause, &funcid, &sp.inputcollid, &fargs);
	sp.funcid = funcid;
	sp.build_arg = build_arg;
	sp.build_child = 1;
	if (list_length(custom_plans) == 1)
		return plan_filter(cs, &sp, clause, fargs, tlist, linitial(custom_plans));
	/* the scan tuple: the output's Vars, the quals' and the arguments' */
	vars = pull_var_clause((Node *) list_make2(tlist, quals), PVC_RECURSE_PLACEHOLDERS);
	foreach(lc, vars)
		(void) scan_tlist_add(&stl, lfirst(lc));
	for (a = 0; a < 2; a++)
		sp.arg_slot[a] = scan_tlist_add(&stl, geometry_var(list_nth(fargs, a)));
	foreach(lc, stl)
	{
		Var		   *v = (Var *) ((TargetEntry *) lfirst(lc))->expr;
		int			r0 = child_resno(linitial(custom_plans), v);
		int			r1 = child_resno(lsecond(custom_plans), v);

		if (r0 == 0 && r1 == 0)
			elog(ERROR, "pg_warp: WarpSpatialJoin: a column is in neither side's output");
		sp.src_child = lappend_int(sp.src_child, r0 ? 0 : 1);
		sp.src_resno = lappend_int(sp.src_resno, r0 ? r0 : r1);
	}
	cs->scan.plan.targetlist = tlist;
	cs->scan.plan.qual = quals;
	cs->scan.scanrelid = 0;
	cs->custom_scan_tlist = stl;
	cs->custom_plans = custom_plans;
	cs->custom_exprs = list_make1(clause);
	cs->custom_private = warp_spatial_plan_form(&sp);
	cs->flags = best_path->flags;
	cs->methods = &warp_spatial_scan_methods;
	return &cs->scan.plan;
}

void
warp_spatial_planner_init(void)
{
	warp_spatial_path_methods.CustomName = "WarpSpatialJoin";
	warp_spatial_path_methods.PlanCustomPath = warp_spatial_plan_path;
}
