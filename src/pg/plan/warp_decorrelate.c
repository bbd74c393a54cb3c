/*
 * warp_decorrelate.c — a correlated aggregate subquery as a grouped join.
 *
 * PostgreSQL runs a scalar subquery that refers to the outer query as a
 * SubPlan re-executed for every outer row.  Where no index serves the
 * outer value, each execution reads the subquery's whole table: TPC-H q17
 * (`l_quantity < (SELECT 0.2 * avg(l_quantity) FROM lineitem WHERE
 * l_partkey = p_partkey)`) and q20 run for minutes.  Before planning
 * (planner_hook), such a subquery becomes a derived table grouped by its
 * correlation keys, joined to the outer query on them:
 *
 *   WHERE x < (SELECT f(agg(y)) FROM t WHERE t.k = o.k AND q)
 *   =>
 *   FROM ..., (SELECT t.k, agg(y) FROM t WHERE q GROUP BY t.k) d
 *   WHERE o.k = d.k AND x < f(d.agg)
 *
 * It is done only where the two are the same query:
 *  - the comparison is a conjunct of WHERE, through a strict operator
 *    other than an equality, so a NULL subquery result drops the row; the
 *    aggregates (sum, avg, min, max) are NULL over no rows and f is
 *    strict, so an outer row without a group (whose subquery would see no
 *    rows) is dropped by the inner join exactly as by the comparison;
 *  - each correlation is `inner expression = outer column` with the type's
 *    own equality (not collatable), and the subquery refers to the outer
 *    query nowhere else; the derived table has one row per key, so no outer
 *    row is duplicated, and a NULL key matches in neither form;
 *  - nothing it computes for groups the outer query never asks for can
 *    raise an error (may_fail_walker over its quals and aggregate
 *    arguments, after constant folding, which PostgreSQL does to both);
 *  - the subquery is a plain SELECT of tables: no GROUP BY, HAVING,
 *    DISTINCT, LIMIT, window, set operation, CTE or sublink of its own.
 * An equality with the subquery (TPC-H q2's `ps_supplycost = (SELECT
 * min(ps_supplycost) ...)`) stays a SubPlan: as a join clause beside the
 * key equality PostgreSQL multiplies the two selectivities, estimates one
 * row where there are hundreds, and nests loops over full rescans of the
 * tables joined above it (q2 over Arrow at SF=1: 32 s against 9 s); as
 * `(k, x) IN (SELECT k, agg ... GROUP BY k)` it fares no better, the
 * grouped side being unique and the semi join made that inner join again.
 * `x NOT IN (SELECT ...)` conjuncts are rewritten here too (warp_notin.c).
 * Queries with FOR UPDATE are left alone.
 * Where PostgreSQL can look the subquery's rows up through an index led by
 * a correlation column (TPC-H q2 over heap tables: partsupp's primary
 * key), its per-row plan is cheap and stays (see in_correlated_subquery in
 * warp_plan.c).  pg_warp.enable_decorrelation turns it off.
 */

#include "postgres.h"

#include "access/table.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "optimizer/planner.h"
#include "parser/parse_oper.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

#include "pg_warp.h"
#include "warp.h"
#include "plan/warp_plan_internal.h"

static planner_hook_type prev_planner_hook = NULL;

/* one correlation: inner expression = outer column (varlevelsup 1) */
typedef struct Correlation
{
	Expr	   *inner;
	Var		   *outer;
	OpExpr	   *op;
} Correlation;

static void decorrelate_query(Query *q);

static Node *
strip_relabel(Node *n)
{
	while (n && IsA(n, RelabelType))
		n = (Node *) ((RelabelType *) n)->arg;
	return n;
}

/* any Var, Aggref or PlaceHolderVar referring to an outer query level */
static bool
outer_ref_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
		return ((Var *) node)->varlevelsup != 0;
	if (IsA(node, Aggref))
	{
		if (((Aggref *) node)->agglevelsup != 0)
			return true;
	}
	if (IsA(node, PlaceHolderVar) || IsA(node, GroupingFunc) || IsA(node, SubLink))
		return true;
	if (IsA(node, Param) && ((Param *) node)->paramkind != PARAM_EXTERN)
		return true;
	return expression_tree_walker(node, outer_ref_walker, context);
}

/*
 * Whether qual is `inner = outer` (either order): the type's own equality,
 * a non-collatable type, inner an expression of the subquery's columns,
 * outer a column of the query one level up.
 */
static bool
correlation_of(Node *qual, Correlation *c)
{
	OpExpr	   *op = (OpExpr *) qual;
	Node	   *a,
			   *b;
	Oid			type;
	TypeCacheEntry *tc;

	if (!IsA(op, OpExpr) || list_length(op->args) != 2)
		return false;
	a = strip_relabel(linitial(op->args));
	b = strip_relabel(lsecond(op->args));
	if (IsA(b, Var) && ((Var *) b)->varlevelsup == 1 && !outer_ref_walker(a, NULL))
		c->inner = (Expr *) linitial(op->args), c->outer = (Var *) b;
	else if (IsA(a, Var) && ((Var *) a)->varlevelsup == 1 && !outer_ref_walker(b, NULL))
		c->inner = (Expr *) lsecond(op->args), c->outer = (Var *) a;
	else
		return false;
	c->op = op;
	type = exprType((Node *) c->inner);
	if (type != c->outer->vartype || type_is_collatable(type) ||
		contain_volatile_functions((Node *) c->inner) || !contain_var_clause((Node *) c->inner))
		return false;
	tc = lookup_type_cache(type, TYPECACHE_EQ_OPR);
	return OidIsValid(tc->eq_opr) && tc->eq_opr == op->opno;
}

/* a built-in sum, avg, min or max: NULL over no rows, no error of its own */
static bool
plain_aggregate(Aggref *a)
{
	char	   *name;
	Oid			argtype;

	if (a->agglevelsup != 0 || a->aggfnoid >= FirstNormalObjectId ||
		list_length(a->args) != 1 || a->aggkind != AGGKIND_NORMAL)
		return false;
	name = get_func_name(a->aggfnoid);
	argtype = exprType((Node *) ((TargetEntry *) linitial(a->args))->expr);
	if (strcmp(name, "min") == 0 || strcmp(name, "max") == 0)
		return true;
	/* sums and averages of these types cannot overflow into an error */
	return (strcmp(name, "sum") == 0 || strcmp(name, "avg") == 0) &&
		(argtype == INT2OID || argtype == INT4OID || argtype == INT8OID ||
		 argtype == NUMERICOID || argtype == FLOAT4OID || argtype == FLOAT8OID);
}

/* may evaluating node raise an error (constants folded first, as
 * PostgreSQL's planner folds them in either form of the query) */
static bool
may_fail(Node *node)
{
	if (node == NULL)
		return false;
	node = eval_const_expressions(NULL, copyObject(node));
	return may_fail_walker(node, NULL);
}

/*
 * The subquery's result expression over its aggregates: NULL when any of
 * them is (strict operators and functions of constants and aggregates),
 * each aggregate plain and its arguments error-free.  The aggregates found
 * are appended to *aggs.
 */
static bool
result_ok(Node *node, List **aggs)
{
	if (node == NULL)
		return false;
	if (IsA(node, Const))
		return true;
	if (IsA(node, RelabelType))
		return result_ok((Node *) ((RelabelType *) node)->arg, aggs);
	if (IsA(node, Aggref))
	{
		Aggref	   *a = (Aggref *) node;

		if (!plain_aggregate(a) || may_fail((Node *) a->args) ||
			may_fail((Node *) a->aggfilter) || outer_ref_walker((Node *) a->args, NULL) ||
			outer_ref_walker((Node *) a->aggfilter, NULL))
			return false;
		*aggs = lappend(*aggs, a);
		return true;
	}
	if (IsA(node, OpExpr) || IsA(node, FuncExpr))
	{
		Oid			fn = IsA(node, OpExpr) ? ((OpExpr *) node)->opfuncid :
			((FuncExpr *) node)->funcid;
		List	   *args = IsA(node, OpExpr) ? ((OpExpr *) node)->args :
			((FuncExpr *) node)->args;
		ListCell   *lc;

		if (IsA(node, OpExpr))
			set_opfuncid((OpExpr *) node), fn = ((OpExpr *) node)->opfuncid;
		if (!func_strict(fn) || func_volatile(fn) == PROVOLATILE_VOLATILE ||
			(IsA(node, FuncExpr) && ((FuncExpr *) node)->funcretset))
			return false;
		foreach(lc, args)
			if (!result_ok(lfirst(lc), aggs))
				return false;
		return true;
	}
	return false;
}

/*
 * Whether PostgreSQL could fetch the subquery's rows for one outer value
 * through an index: a correlation's inner side is a column of a table
 * that has an index led by it.
 */
static bool
index_serves(Query *s, List *corrs)
{
	ListCell   *lc;

	foreach(lc, corrs)
	{
		Correlation *c = lfirst(lc);
		Var		   *v = (Var *) strip_relabel((Node *) c->inner);
		RangeTblEntry *rte;
		Relation	rel;
		List	   *indexes;
		ListCell   *ic;
		bool		found = false;

		if (!IsA(v, Var) || v->varlevelsup != 0)
			continue;
		rte = rt_fetch(v->varno, s->rtable);
		if (rte->rtekind != RTE_RELATION)
			continue;
		rel = table_open(rte->relid, NoLock);
		indexes = RelationGetIndexList(rel);
		table_close(rel, NoLock);
		foreach(ic, indexes)
		{
			HeapTuple	tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(lfirst_oid(ic)));

			if (!HeapTupleIsValid(tup))
				continue;
			if (((Form_pg_index) GETSTRUCT(tup))->indkey.values[0] == v->varattno)
				found = true;
			ReleaseSysCache(tup);
		}
		if (found)
			return true;
	}
	return false;
}

/*
 * The ON conditions of a FROM item, appended to *quals; false if it is not
 * tables and inner joins of tables.
 */
static bool
from_quals(Node *n, List **quals)
{
	if (IsA(n, RangeTblRef))
		return true;
	if (IsA(n, JoinExpr))
	{
		JoinExpr   *j = (JoinExpr *) n;

		if (j->jointype != JOIN_INNER)
			return false;
		*quals = list_concat(*quals, make_ands_implicit((Expr *) j->quals));
		return from_quals(j->larg, quals) && from_quals(j->rarg, quals);
	}
	return false;
}

/* the subquery's shape: an aggregate-only SELECT over tables */
static bool
plain_aggregate_subquery(Query *s)
{
	ListCell   *lc;
	int			outputs = 0;

	if (s->commandType != CMD_SELECT || !s->hasAggs || s->groupClause != NIL ||
		s->groupingSets != NIL || s->havingQual != NULL || s->hasWindowFuncs ||
		s->distinctClause != NIL || s->sortClause != NIL || s->limitCount != NULL ||
		s->limitOffset != NULL || s->hasTargetSRFs || s->setOperations != NULL ||
		s->cteList != NIL || s->rowMarks != NIL || s->hasSubLinks || s->hasForUpdate ||
		s->hasModifyingCTE || s->hasRecursive || s->jointree == NULL ||
		s->jointree->fromlist == NIL)
		return false;
	foreach(lc, s->rtable)
	{
		RangeTblEntry *rte = lfirst(lc);

		if (rte->rtekind != RTE_RELATION && rte->rtekind != RTE_JOIN)
			return false;
		if (rte->rtekind == RTE_RELATION && rte->tablesample != NULL)
			return false;
	}
	foreach(lc, s->targetList)
		if (!((TargetEntry *) lfirst(lc))->resjunk)
			outputs++;
	return outputs == 1 && list_length(s->targetList) == 1;
}

/*
 * The derived table for subquery s of q (its correlations corrs, its
 * other quals rest, its aggregates aggs): SELECT keys..., aggs... FROM
 * s's tables WHERE rest GROUP BY keys, appended to q's range table and
 * FROM list; returns its range table index.
 */
static Index
add_derived_table(Query *q, Query *s, List *corrs, List *rest, List *aggs)
{
	Query	   *d = copyObject(s);
	List	   *tlist = NIL,
			   *groups = NIL,
			   *names = NIL;
	ListCell   *lc;
	RangeTblEntry *rte;
	RangeTblRef *ref;
	int			resno = 0;

	d->jointree->quals = rest == NIL ? NULL : (Node *) make_ands_explicit(rest);
	foreach(lc, corrs)
	{
		Correlation *c = lfirst(lc);
		Oid			type = exprType((Node *) c->inner);
		SortGroupClause *g = makeNode(SortGroupClause);
		TargetEntry *te;
		char		name[16];

		snprintf(name, sizeof(name), "k%d", ++resno);
		te = makeTargetEntry(copyObject(c->inner), resno, pstrdup(name), false);
		te->ressortgroupref = resno;
		tlist = lappend(tlist, te);
		g->tleSortGroupRef = resno;
		get_sort_group_operators(type, false, true, false, &g->sortop, &g->eqop, NULL,
								 &g->hashable);
		groups = lappend(groups, g);
		names = lappend(names, makeString(pstrdup(name)));
	}
	foreach(lc, aggs)
	{
		char		name[16];

		snprintf(name, sizeof(name), "a%d", ++resno);
		tlist = lappend(tlist, makeTargetEntry(copyObject(lfirst(lc)), resno, pstrdup(name),
											   false));
		names = lappend(names, makeString(pstrdup(name)));
	}
	d->targetList = tlist;
	d->groupClause = groups;

	rte = makeNode(RangeTblEntry);
	rte->rtekind = RTE_SUBQUERY;
	rte->subquery = d;
	rte->eref = makeAlias("warp_decorrelated", names);
	rte->inFromCl = true;
	q->rtable = lappend(q->rtable, rte);
	ref = makeNode(RangeTblRef);
	ref->rtindex = list_length(q->rtable);
	q->jointree->fromlist = lappend(q->jointree->fromlist, ref);
	return ref->rtindex;
}

/* the expression with each aggregate of aggs replaced by its derived column */
static Node *
replace_aggs(Node *node, List *aggs, Index rti, int first)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Aggref))
	{
		Aggref	   *a = (Aggref *) node;
		int			i = 0;
		ListCell   *lc;

		foreach(lc, aggs)		/* (result_ok found every one) */
		{
			if (lfirst(lc) == node)
				break;
			i++;
		}

		return (Node *) makeVar(rti, first + i, a->aggtype, -1, a->aggcollid, 0);
	}
	if (IsA(node, OpExpr) || IsA(node, FuncExpr) || IsA(node, RelabelType))
	{
		Node	   *copy = copyObject(node);
		List	  **args = IsA(copy, OpExpr) ? &((OpExpr *) copy)->args :
			IsA(copy, FuncExpr) ? &((FuncExpr *) copy)->args : NULL;
		List	   *orig = IsA(node, OpExpr) ? ((OpExpr *) node)->args :
			IsA(node, FuncExpr) ? ((FuncExpr *) node)->args : NIL;
		ListCell   *lc;

		if (args == NULL)
		{
			((RelabelType *) copy)->arg =
				(Expr *) replace_aggs((Node *) ((RelabelType *) node)->arg, aggs, rti, first);
			return copy;
		}
		*args = NIL;
		foreach(lc, orig)
			*args = lappend(*args, replace_aggs(lfirst(lc), aggs, rti, first));
		return copy;
	}
	return copyObject(node);
}

/*
 * Conjunct qual of q's WHERE, if it compares with a correlated aggregate
 * subquery as the header describes: the subquery joined as a derived
 * table, its key equalities appended to *extra, and the conjunct to put in
 * its place returned.  NULL: left as it is.
 */
static Node *
decorrelate_conjunct(Query *q, Node *qual, List **extra)
{
	OpExpr	   *cmp = (OpExpr *) qual;
	SubLink    *sl;
	Query	   *s;
	int			side;
	List	   *corrs = NIL,
			   *rest = NIL,
			   *on = NIL,
			   *aggs = NIL;
	ListCell   *lc;
	Index		rti;
	TargetEntry *te;
	OpExpr	   *newcmp;

	if (!IsA(cmp, OpExpr) || list_length(cmp->args) != 2)
		return NULL;
	set_opfuncid(cmp);
	if (!func_strict(cmp->opfuncid) || op_mergejoinable(cmp->opno, exprType(linitial(cmp->args))) ||
		op_hashjoinable(cmp->opno, exprType(linitial(cmp->args))))
		return NULL;
	for (side = 0; side < 2; side++)
	{
		sl = (SubLink *) strip_relabel(list_nth(cmp->args, side));
		if (IsA(sl, SubLink) && sl->subLinkType == EXPR_SUBLINK &&
			!contain_subplans(list_nth(cmp->args, 1 - side)))
			break;
	}
	if (side == 2 || !IsA(sl->subselect, Query))
		return NULL;
	s = (Query *) sl->subselect;
	if (!plain_aggregate_subquery(s))
		return NULL;
	foreach(lc, make_ands_implicit((Expr *) s->jointree->quals))
	{
		Node	   *c = lfirst(lc);
		Correlation *corr = palloc(sizeof(Correlation));

		if (!outer_ref_walker(c, NULL))
			rest = lappend(rest, c);
		else if (correlation_of(c, corr))
			corrs = lappend(corrs, corr);
		else
			return NULL;
	}
	te = linitial(s->targetList);
	foreach(lc, s->jointree->fromlist)
		if (!from_quals(lfirst(lc), &on))
			return NULL;
	if (corrs == NIL || list_length(corrs) > 8 ||
		outer_ref_walker((Node *) rest, NULL) || may_fail((Node *) rest) ||
		outer_ref_walker((Node *) on, NULL) || may_fail((Node *) on) ||
		!result_ok((Node *) te->expr, &aggs) || index_serves(s, corrs))
		return NULL;

	rti = add_derived_table(q, s, corrs, rest, aggs);
	foreach(lc, corrs)
	{
		Correlation *c = lfirst(lc);
		OpExpr	   *eq = copyObject(c->op);
		Var		   *outer = copyObject(c->outer);
		Var		   *key = makeVar(rti, foreach_current_index(lc) + 1,
								  exprType((Node *) c->inner), exprTypmod((Node *) c->inner),
								  InvalidOid, 0);

		outer->varlevelsup = 0;
		eq->args = list_make2(outer, key);
		*extra = lappend(*extra, eq);
	}
	newcmp = copyObject(cmp);
	list_nth_cell(newcmp->args, side)->ptr_value =
		replace_aggs((Node *) te->expr, aggs, rti, list_length(corrs) + 1);
	return (Node *) newcmp;
}

/* every subquery of node (sublinks' queries), decorrelated in turn */
static bool
sublink_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, SubLink))
	{
		SubLink    *sl = (SubLink *) node;

		if (IsA(sl->subselect, Query))
			decorrelate_query((Query *) sl->subselect);
		return sublink_walker(sl->testexpr, context);
	}
	return expression_tree_walker(node, sublink_walker, context);
}

static void
decorrelate_query(Query *q)
{
	ListCell   *lc;
	List	   *conjuncts,
			   *out = NIL,
			   *extra = NIL;
	bool		changed = false;

	check_stack_depth();
	foreach(lc, q->rtable)
	{
		RangeTblEntry *rte = lfirst(lc);

		if (rte->rtekind == RTE_SUBQUERY)
			decorrelate_query(rte->subquery);
	}
	foreach(lc, q->cteList)
		if (IsA(((CommonTableExpr *) lfirst(lc))->ctequery, Query))
			decorrelate_query((Query *) ((CommonTableExpr *) lfirst(lc))->ctequery);
	if (!q->hasSubLinks || q->jointree == NULL)
		return;
	sublink_walker((Node *) q->jointree, NULL);
	sublink_walker((Node *) q->targetList, NULL);
	sublink_walker(q->havingQual, NULL);
	/* (FOR UPDATE: rows locked through the original FROM only) */
	if (q->commandType != CMD_SELECT || q->jointree->quals == NULL || q->setOperations != NULL ||
		q->rowMarks != NIL)
		return;

	conjuncts = make_ands_implicit((Expr *) q->jointree->quals);
	foreach(lc, conjuncts)
	{
		List	   *anti = pgwarp_enable_decorrelation ? notin_conjuncts(q, lfirst(lc)) : NIL;
		Node	   *n = anti ? NULL : decorrelate_conjunct(q, lfirst(lc), &extra);

		if (anti)
			out = list_concat(out, anti);
		else
			out = lappend(out, n ? n : lfirst(lc));
		changed |= n != NULL || anti != NIL;
	}
	if (changed)
		q->jointree->quals = (Node *) make_ands_explicit(list_concat(out, extra));
}

static PlannedStmt *
warp_planner(Query *parse, const char *query_string, int cursorOptions,
			 ParamListInfo boundParams)
{
	if (pgwarp_enabled && pgwarp_enable_decorrelation)
		decorrelate_query(parse);
	if (prev_planner_hook)
		return prev_planner_hook(parse, query_string, cursorOptions, boundParams);
	return standard_planner(parse, query_string, cursorOptions, boundParams);
}

void
warp_decorrelate_init(void)
{
	prev_planner_hook = planner_hook;
	planner_hook = warp_planner;
}
