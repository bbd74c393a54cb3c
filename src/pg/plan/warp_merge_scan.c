/*-------------------------------------------------------------------------
 *
 * warp_merge_scan.c
 *	  WarpMerge: the aggregation above WarpPreAgg for DISTINCT aggregates
 *	  beside plain ones.
 *
 * For `SELECT k, count(DISTINCT a), sum(b) ... GROUP BY k` the engine
 * groups by (k, a) and keeps sum(b)'s partial state per such group.  An
 * Agg above it groups by k, counts DISTINCT a over those rows with
 * PostgreSQL's own DISTINCT (the types' equality), and turns sum(b) into
 * pg_warp_merge(partial state of sum(b), sum(int4), NULL::int8)
 * (warp_merge_agg.c), which combines the partial states.
 *
 * The rest of the plan (ORDER BY, the final projection, HAVING written in
 * terms of the query's aggregates) refers to `sum(b)`, not to the
 * pg_warp_merge expression, so that Agg cannot be the grouping relation's
 * path itself.  WarpMerge is: a CustomScan whose scan tuple is the Agg's
 * output, described by custom_scan_tlist in the query's own terms (the
 * group keys, the aggregates as the query wrote them); PostgreSQL's
 * set_customscan_references then points everything above at those
 * columns, the way postgres_fdw's pushed-down aggregates work.  The node
 * itself only passes the Agg's rows through and projects them.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/executor.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/prep.h"
#include "optimizer/tlist.h"
#include "parser/parse_func.h"
#include "utils/lsyscache.h"

#include "pg_warp.h"
#include "warp.h"
#include "plan/warp_plan_internal.h"

static CustomPathMethods warp_merge_path_methods;
static CustomScanMethods warp_merge_scan_methods;
static CustomExecMethods warp_merge_exec_methods;

/* ------------------------------------------------------------- planning */

/*
 * The pg_warp_merge aggregate of the installed extension, or InvalidOid
 * (pg_warp not created in this database, or created at 0.1: then such
 * queries are simply not offloaded until ALTER EXTENSION pg_warp UPDATE).
 */
Oid
warp_merge_aggregate(void)
{
	Oid			nsp = pgwarp_extension_schema(true);
	Oid			argtypes[3] = {ANYOID, REGPROCEDUREOID, ANYELEMENTOID};
	List	   *name;

	if (!OidIsValid(nsp))
		return InvalidOid;
	name = list_make2(makeString(get_namespace_name(nsp)), makeString("pg_warp_merge"));
	return LookupFuncName(name, 3, argtypes, true);
}

typedef struct MergeCtx
{
	List	   *plain;			/* the plain aggregates ... */
	List	   *partial;		/* ... and their partial Aggrefs */
	Oid			merge_fn;
	List	   *numbered;		/* Aggrefs of the Agg, by their aggno */
} MergeCtx;

/* pg_warp_merge(partial, aggregate, NULL::result) in place of agg */
static Aggref *
make_merge_aggref(Aggref *agg, Aggref *partial, Oid merge_fn)
{
	Aggref	   *m = makeNode(Aggref);
	Const	   *fn = makeConst(REGPROCEDUREOID, -1, InvalidOid, sizeof(Oid),
							   ObjectIdGetDatum(agg->aggfnoid), false, true);
	Const	   *witness = makeNullConst(agg->aggtype, -1, agg->aggcollid);

	m->aggfnoid = merge_fn;
	m->aggtype = agg->aggtype;
	m->aggcollid = agg->aggcollid;
	m->inputcollid = agg->inputcollid;
	m->aggtranstype = INTERNALOID;
	m->aggargtypes = list_make3_oid(exprType((Node *) partial), REGPROCEDUREOID, agg->aggtype);
	m->args = list_make3(makeTargetEntry((Expr *) copyObject(partial), 1, NULL, false),
						 makeTargetEntry((Expr *) fn, 2, NULL, false),
						 makeTargetEntry((Expr *) witness, 3, NULL, false));
	m->aggkind = AGGKIND_NORMAL;
	m->aggsplit = AGGSPLIT_SIMPLE;
	m->location = -1;
	return m;
}

/*
 * The Agg's version of an expression: plain aggregates replaced by their
 * pg_warp_merge, and every aggregate numbered (aggno, aggtransno) afresh,
 * equal ones alike, without shared transition states.
 */
static Node *
merge_mutator(Node *node, MergeCtx *ctx)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Aggref))
	{
		Aggref	   *agg = (Aggref *) node;
		Aggref	   *out = NULL;
		ListCell   *lc;
		int			no;

		foreach(lc, ctx->plain)
			if (equal(lfirst(lc), agg))
				out = make_merge_aggref(agg, list_nth(ctx->partial, foreach_current_index(lc)),
										ctx->merge_fn);
		if (out == NULL)
			out = copyObject(agg);
		out->aggno = out->aggtransno = -1;
		no = -1;
		foreach(lc, ctx->numbered)
			if (equal(lfirst(lc), out))
				no = foreach_current_index(lc);
		if (no < 0)
		{
			no = list_length(ctx->numbered);
			ctx->numbered = lappend(ctx->numbered, copyObject(out));
		}
		out->aggno = out->aggtransno = no;
		return (Node *) out;
	}
	return expression_tree_mutator(node, merge_mutator, ctx);
}

static void
add_leaf(List **leaves, List **sgrefs, Expr *e, Index sgref)
{
	ListCell   *lc;

	foreach(lc, *leaves)
		if (equal(lfirst(lc), e))
		{
			if (sgref && list_nth_int(*sgrefs, foreach_current_index(lc)) == 0)
				list_nth_cell(*sgrefs, foreach_current_index(lc))->int_value = sgref;
			return;
		}
	*leaves = lappend(*leaves, e);
	*sgrefs = lappend_int(*sgrefs, sgref);
}

/*
 * The rollups of a GROUPING SETS query for a sorted grouping sets Agg:
 * chains of sets, each set a subset of the one before, so that one sort
 * order serves the whole chain (the columns of the smallest set first).
 * Built greedily, largest set first (PostgreSQL's own, optimal, choice is
 * static in planner.c); every chain after the first costs one more sort of
 * the engine's groups, which are few.  NIL if a set has a column twice or
 * every set is empty.
 */
static List *
sorted_rollups(PlannerInfo *root, double ngroups)
{
	Query	   *parse = root->parse;
	/* (preprocess_grouping_sets has expanded them: lists of sortgrouprefs) */
	List	   *sets = parse->groupingSets;
	int			n = list_length(sets);
	bool	   *used = palloc0(sizeof(bool) * (n + 1));
	List	   *rollups = NIL;
	ListCell   *lc;

	foreach(lc, sets)
	{
		List	   *set = lfirst(lc);
		ListCell   *c;

		foreach(c, set)
			if (list_member_int(list_copy_tail(set, foreach_current_index(c) + 1), lfirst_int(c)))
				return NIL;
	}
	for (;;)
	{
		List	   *chain = NIL;	/* the sets, largest first */
		List	   *last = NIL;
		List	   *order = NIL;	/* sortgrouprefs in sort order */
		RollupData *rollup;
		int			best;
		int			i;
		ListCell   *cc;

		/* the largest unused set starts a chain; then, each time, the
		 * largest unused subset of the chain's last set */
		for (;;)
		{
			best = -1;
			i = 0;
			foreach(lc, sets)
			{
				List	   *set = lfirst(lc);

				if (!used[i] &&
					(chain == NIL || list_difference_int(set, last) == NIL) &&
					(best < 0 || list_length(set) > list_length(list_nth(sets, best))))
					best = i;
				i++;
			}
			if (best < 0)
				break;
			used[best] = true;
			last = list_nth(sets, best);
			chain = lappend(chain, last);
		}
		if (chain == NIL)
			break;
		if (linitial(chain) == NIL)
			return NIL;			/* only empty sets left, and they have
								 * no chain to join: not expected */
		/* sort order: the smallest set's columns, then what each larger
		 * set adds */
		for (i = list_length(chain) - 1; i >= 0; i--)
			foreach(cc, (List *) list_nth(chain, i))
				if (!list_member_int(order, lfirst_int(cc)))
					order = lappend_int(order, lfirst_int(cc));

		rollup = makeNode(RollupData);
		foreach(cc, order)
			rollup->groupClause = lappend(rollup->groupClause,
										  get_sortgroupref_clause(lfirst_int(cc),
																  parse->groupClause));
		foreach(cc, chain)
		{
			GroupingSetData *gs = makeNode(GroupingSetData);
			List	   *idx = NIL;
			int			k;

			/* a set of the chain is a prefix of the order */
			for (k = 0; k < list_length((List *) lfirst(cc)); k++)
				idx = lappend_int(idx, k);
			gs->set = list_copy_head(order, list_length((List *) lfirst(cc)));
			gs->numGroups = ngroups;
			rollup->gsets_data = lappend(rollup->gsets_data, gs);
			rollup->gsets = lappend(rollup->gsets, idx);
		}
		rollup->numGroups = ngroups;
		rollup->hashable = false;
		rollup->is_hashed = false;
		rollups = lappend(rollups, rollup);
	}
	return rollups;
}

/*
 * Add WarpMerge -> Agg -> [Sort ->] in to output_rel.  plain/partial: the
 * plain aggregates and the partial Aggrefs `in` emits for them.
 */
void
warp_add_merge_path(PlannerInfo *root, RelOptInfo *output_rel, Path *in, Node *having,
					List *plain, List *partial, Oid merge_fn, double ngroups)
{
	Query	   *parse = root->parse;
	PathTarget *final = output_rel->reltarget;
	PathTarget *agg_target = create_empty_pathtarget();
	List	   *leaves = NIL;
	List	   *sgrefs = NIL;
	MergeCtx	ctx;
	AggClauseCosts costs;
	Path	   *agg;			/* AggPath or GroupingSetsPath */
	CustomPath *cp;
	ListCell   *lc;
	int			i = 0;

	/* the Agg's columns: the group keys, then every aggregate and column
	 * the other output expressions are made of */
	foreach(lc, final->exprs)
	{
		Index		sgref = get_pathtarget_sortgroupref(final, i);

		i++;
		if (sgref && parse->groupClause &&
			get_sortgroupref_clause_noerr(sgref, parse->groupClause) != NULL)
			add_leaf(&leaves, &sgrefs, lfirst(lc), sgref);
	}
	i = 0;
	foreach(lc, final->exprs)
	{
		Index		sgref = get_pathtarget_sortgroupref(final, i);
		List	   *parts;
		ListCell   *pc;

		i++;
		if (sgref && parse->groupClause &&
			get_sortgroupref_clause_noerr(sgref, parse->groupClause) != NULL)
			continue;			/* a group key: a leaf already */
		/* (a column here is a group key itself: build_partial_target) */
		parts = pull_var_clause(lfirst(lc), PVC_INCLUDE_AGGREGATES |
								PVC_RECURSE_WINDOWFUNCS |
								PVC_INCLUDE_PLACEHOLDERS);
		foreach(pc, parts)
			add_leaf(&leaves, &sgrefs, lfirst(pc), 0);
	}

	memset(&ctx, 0, sizeof(ctx));
	ctx.plain = plain;
	ctx.partial = partial;
	ctx.merge_fn = merge_fn;
	i = 0;
	foreach(lc, leaves)
		add_column_to_pathtarget(agg_target, (Expr *) merge_mutator(lfirst(lc), &ctx),
								 list_nth_int(sgrefs, i++));
	having = merge_mutator(having, &ctx);
	set_pathtarget_cost_width(root, agg_target);

	memset(&costs, 0, sizeof(costs));
	get_agg_clause_costs(root, AGGSPLIT_SIMPLE, &costs);
	if (parse->groupingSets)
	{
		List	   *rollups = sorted_rollups(root, ngroups);
		List	   *pathkeys;
		GroupingSetsPath *gp;

		if (rollups == NIL)
			return;
		pathkeys = make_pathkeys_for_sortclauses(root,
												 ((RollupData *) linitial(rollups))->groupClause,
												 root->processed_tlist);
		if (!pathkeys_contained_in(pathkeys, in->pathkeys))
			in = (Path *) create_sort_path(root, in->parent, in, pathkeys, -1.0);
		gp = create_groupingsets_path(root, output_rel, in, (List *) having, AGG_SORTED,
									  rollups, &costs, ngroups);
		/* (create_groupingsets_path takes the relation's target) */
		gp->path.pathtarget = agg_target;
		agg = &gp->path;
	}
	else
	{
		if (parse->groupClause && !pathkeys_contained_in(root->group_pathkeys, in->pathkeys))
			in = (Path *) create_sort_path(root, in->parent, in, root->group_pathkeys, -1.0);
		agg = (Path *) create_agg_path(root, output_rel, in, agg_target,
							 parse->groupClause ? AGG_SORTED : AGG_PLAIN,
							 AGGSPLIT_SIMPLE, parse->groupClause, (List *) having, &costs,
							 ngroups);
	}

	cp = serial_custom_path(output_rel, final, agg->rows, agg->startup_cost,
							agg->total_cost + agg->rows * cpu_tuple_cost);
	cp->path.pathkeys = agg->pathkeys;
	cp->custom_paths = list_make1(agg);
	cp->custom_private = leaves;
	cp->methods = &warp_merge_path_methods;
	add_path(output_rel, &cp->path);
}

static Node *
wrap_const(Node *n)
{
	Const	   *c = (Const *) n;

	if (n == NULL || !IsA(n, Const))
		return n;
	return (Node *) makeRelabelType((Expr *) c, c->consttype, c->consttypmod, c->constcollid,
									COERCE_IMPLICIT_CAST);
}

static Plan *
warp_merge_plan(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
				List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cs = makeNode(CustomScan);
	List	   *scan_tlist = NIL;
	ListCell   *lc;

	/*
	 * A group key that is a constant (`GROUP BY ROLLUP (1 = 2)`): setrefs
	 * never replaces a Const by a reference to the scan tuple, so this node
	 * would output the constant where the grouping sets Agg nulled the key.
	 * Wrapped in a no-op RelabelType, here and in the scan tlist, it is
	 * matched like any other expression.
	 */
	foreach(lc, best_path->custom_private)
		scan_tlist = lappend(scan_tlist,
							 makeTargetEntry((Expr *) wrap_const(copyObject(lfirst(lc))),
											 list_length(scan_tlist) + 1, NULL, false));
	foreach(lc, tlist)
	{
		TargetEntry *tle = lfirst(lc);

		tle->expr = (Expr *) wrap_const((Node *) tle->expr);
	}
	cs->scan.plan.targetlist = tlist;
	cs->scan.plan.qual = NIL;
	cs->scan.scanrelid = 0;
	cs->custom_scan_tlist = scan_tlist;
	cs->custom_plans = custom_plans;
	cs->custom_exprs = NIL;
	cs->custom_private = NIL;
	cs->flags = best_path->flags;
	cs->methods = &warp_merge_scan_methods;
	return &cs->scan.plan;
}

/* ------------------------------------------------------------ execution */

static Node *
warp_merge_create_state(CustomScan *cscan)
{
	CustomScanState *css = makeNode(CustomScanState);

	css->methods = &warp_merge_exec_methods;
	return (Node *) css;
}

static void
warp_merge_begin(CustomScanState *node, EState *estate, int eflags)
{
	CustomScan *cs = (CustomScan *) node->ss.ps.plan;

	node->custom_ps = list_make1(ExecInitNode(linitial(cs->custom_plans), estate, eflags));
}

static TupleTableSlot *
warp_merge_next(ScanState *ss)
{
	CustomScanState *node = (CustomScanState *) ss;
	TupleTableSlot *slot = ExecProcNode(linitial(node->custom_ps));

	if (TupIsNull(slot))
		return ExecClearTuple(ss->ss_ScanTupleSlot);
	return ExecCopySlot(ss->ss_ScanTupleSlot, slot);
}

static bool
warp_merge_recheck(ScanState *ss, TupleTableSlot *slot)
{
	return true;
}

static TupleTableSlot *
warp_merge_exec(CustomScanState *node)
{
	return ExecScan(&node->ss, warp_merge_next, warp_merge_recheck);
}

static void
warp_merge_end(CustomScanState *node)
{
	ExecEndNode(linitial(node->custom_ps));
}

static void
warp_merge_rescan(CustomScanState *node)
{
	PlanState  *child = linitial(node->custom_ps);

	if (node->ss.ps.chgParam != NULL)
		UpdateChangedParamSet(child, node->ss.ps.chgParam);
	if (child->chgParam == NULL)
		ExecReScan(child);
}

void
pgwarp_merge_init(void)
{
	warp_merge_path_methods.CustomName = "WarpMerge";
	warp_merge_path_methods.PlanCustomPath = warp_merge_plan;
	warp_merge_scan_methods.CustomName = "WarpMerge";
	warp_merge_scan_methods.CreateCustomScanState = warp_merge_create_state;
	warp_merge_exec_methods.CustomName = "WarpMerge";
	warp_merge_exec_methods.BeginCustomScan = warp_merge_begin;
	warp_merge_exec_methods.ExecCustomScan = warp_merge_exec;
	warp_merge_exec_methods.EndCustomScan = warp_merge_end;
	warp_merge_exec_methods.ReScanCustomScan = warp_merge_rescan;
	RegisterCustomScanMethods(&warp_merge_scan_methods);
}
