/*
 * vec_scan_plan.c — planning WarpVecScan (vec_scan.h).
 *
 * Offered for a query over one Arrow foreign table whose ORDER BY is a
 * single pg_warp distance, `v <op> q` or `q <op> v` ascending with NULLS
 * LAST, v a real[] column and q an expression of no column (a constant or
 * a parameter), under a constant LIMIT, with nothing between the scan and
 * the LIMIT (no aggregation, window, DISTINCT, SRF, locking).  The path
 * returns the k nearest rows in order, so the planner puts the Limit
 * straight above it.  Other quals are evaluated by the node, on every
 * row, before it is scored, as PostgreSQL would.
 */
#include "postgres.h"

#include "access/stratnum.h"
#include "access/sysattr.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"

#include "pg_warp.h"
#include "warp.h"
#include "vector.h"
#include "vec_scan.h"

/* a larger LIMIT is PostgreSQL's sort (the node keeps its rows in memory) */
#define VEC_TOPK_MAX_ROWS	100000

static set_rel_pathlist_hook_type prev_rel_pathlist_hook = NULL;
static CustomPathMethods vec_path_methods;
CustomScanMethods pgwarp_vec_scan_methods;

/* the distance kind of a pg_warp distance function, or 0 */
static int
distance_kind(Oid funcid)
{
	FmgrInfo	fi;

	fmgr_info(funcid, &fi);
	if (fi.fn_addr == pg_warp_l2_distance)
		return WARP_VEC_L2;
	if (fi.fn_addr == pg_warp_negative_inner_product)
		return WARP_VEC_NEG_IP;
	if (fi.fn_addr == pg_warp_cosine_distance)
		return WARP_VEC_COSINE;
	return 0;
}

/* only user columns (no system column, no whole row) */
static bool
plain_columns(Node *node, Index relid)
{
	Bitmapset  *attrs = NULL;
	int			a = -1;

	pull_varattnos(node, relid, &attrs);
	while ((a = bms_next_member(attrs, a)) >= 0)
		if (a + FirstLowInvalidHeapAttributeNumber <= 0)
			return false;
	return true;
}

/* the query's single ORDER BY item if it is `v <op> q` of this rel */
static OpExpr *
distance_order(PlannerInfo *root, RelOptInfo *rel, int *attno, bool *var_first)
{
	PathKey    *pk;
	ListCell   *lc;

	if (list_length(root->query_pathkeys) != 1)
		return NULL;
	pk = linitial(root->query_pathkeys);
	if (pk->pk_strategy != BTLessStrategyNumber || pk->pk_nulls_first)
		return NULL;
	foreach(lc, pk->pk_eclass->ec_members)
	{
		EquivalenceMember *em = lfirst(lc);
		OpExpr	   *op = (OpExpr *) em->em_expr;
		Node	   *l,
				   *r;
		Var		   *v;
		Node	   *q;

		if (!IsA(op, OpExpr) || list_length(op->args) != 2 ||
			distance_kind(op->opfuncid) == 0)
			continue;
		l = linitial(op->args);
		r = lsecond(op->args);
		*var_first = IsA(l, Var);
		v = (Var *) (*var_first ? l : r);
		q = *var_first ? r : l;
		if (!IsA(v, Var) || v->varno != rel->relid || v->varlevelsup != 0 ||
			v->varattno <= 0 || v->vartype != FLOAT4ARRAYOID ||
			contain_var_clause(q) || contain_volatile_functions(q) ||
			contain_subplans(q))
			continue;
		*attno = v->varattno;
		return op;
	}
	return NULL;
}

/* whether the rows of rel go straight to ORDER BY ... LIMIT */
static bool
plain_topk_query(PlannerInfo *root, RelOptInfo *rel)
{
	Query	   *parse = root->parse;

	return bms_equal(rel->relids, root->all_baserels) &&
		parse->commandType == CMD_SELECT && parse->sortClause != NIL &&
		root->limit_tuples >= 1 && root->limit_tuples <= VEC_TOPK_MAX_ROWS &&
		!parse->hasAggs && parse->groupClause == NIL && parse->groupingSets == NIL &&
		!parse->hasWindowFuncs && parse->distinctClause == NIL &&
		!parse->hasTargetSRFs && parse->setOperations == NULL &&
		parse->rowMarks == NIL && parse->limitOption != LIMIT_OPTION_WITH_TIES &&
		root->query_pathkeys != NIL &&
		compare_pathkeys(root->query_pathkeys, root->sort_pathkeys) == PATHKEYS_EQUAL;
}

static void
vec_rel_paths(PlannerInfo *root, RelOptInfo *rel, Index rti, RangeTblEntry *rte)
{
	CustomPath *cp;
	OpExpr	   *op;
	int			attno;
	bool		var_first;
	Cost		base = -1;
	ListCell   *lc;

	if (prev_rel_pathlist_hook)
		prev_rel_pathlist_hook(root, rel, rti, rte);
	if (!pgwarp_enabled || rel->reloptkind != RELOPT_BASEREL ||
		!arrow_fdw_is_arrow_rel(rel) || rel->lateral_relids != NULL ||
		!plain_topk_query(root, rel))
		return;
	op = distance_order(root, rel, &attno, &var_first);
	if (op == NULL || !plain_columns((Node *) rel->reltarget->exprs, rel->relid))
		return;
	foreach(lc, rel->baserestrictinfo)
		if (!plain_columns((Node *) ((RestrictInfo *) lfirst(lc))->clause, rel->relid))
			return;
	foreach(lc, rel->pathlist)
	{
		Path	   *p = lfirst(lc);

		if (p->param_info == NULL && (base < 0 || p->total_cost < base))
			base = p->total_cost;
	}
	if (base < 0)
		return;

	cp = makeNode(CustomPath);
	cp->path.pathtype = T_CustomScan;
	cp->path.parent = rel;
	cp->path.pathtarget = rel->reltarget;
	cp->path.rows = Min(rel->rows, root->limit_tuples);
	/* the scan and one operator per row scored (what PostgreSQL charges
	 * for computing the distance above the scan), without the sort (the
	 * bounded heap rarely takes a row) and forming only the k rows kept */
	cp->path.startup_cost = base + rel->rows * cpu_operator_cost -
		Max(0, rel->rows - root->limit_tuples) * cpu_tuple_cost;	/* rows not formed */
	cp->path.total_cost = cp->path.startup_cost + cp->path.rows * cpu_tuple_cost;
	cp->path.pathkeys = root->query_pathkeys;
	cp->methods = &vec_path_methods;
	cp->custom_private = list_make4(makeInteger(attno),
									makeInteger(distance_kind(op->opfuncid)),
									makeInteger((int) root->limit_tuples),
									makeInteger(var_first ? 1 : 0));
	/* the query vector travels as the path's private expression */
	cp->custom_private = lappend(cp->custom_private,
								 var_first ? lsecond(op->args) : linitial(op->args));
	add_path(rel, &cp->path);
}

static Plan *
vec_plan_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
			  List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cs = makeNode(CustomScan);
	Node	   *query = llast(best_path->custom_private);

	cs->scan.plan.targetlist = tlist;
	cs->scan.plan.qual = NIL;
	cs->scan.scanrelid = rel->relid;
	cs->custom_scan_tlist = NIL;	/* the scan tuple is the table's row */
	cs->custom_plans = NIL;
	cs->custom_exprs = lcons(copyObject(query),
							 extract_actual_clauses(clauses, false));
	cs->custom_private = list_copy_head(best_path->custom_private, VEC_PRIV_COUNT);
	cs->flags = best_path->flags;
	cs->methods = &pgwarp_vec_scan_methods;
	return &cs->scan.plan;
}

void
pgwarp_vec_scan_init(void)
{
	vec_path_methods.CustomName = "WarpVecScan";
	vec_path_methods.PlanCustomPath = vec_plan_path;
	prev_rel_pathlist_hook = set_rel_pathlist_hook;
	set_rel_pathlist_hook = vec_rel_paths;
}
