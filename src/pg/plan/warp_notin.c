/*
 * warp_notin.c — `x NOT IN (SELECT y ...)` as an anti join.
 *
 * PostgreSQL plans NOT IN as a (hashed) SubPlan filter, never as a join:
 * NOT IN is not NOT EXISTS when NULLs are about.  In a WHERE conjunct a
 * NULL result drops the row like false, and then, with S the subquery's
 * rows,
 *
 *   x NOT IN (S)  keeps the row  iff  S is empty, or x is not NULL, no y
 *                                     of S equals x and no y is NULL
 *
 * so where x and y can never be NULL (columns declared NOT NULL of tables
 * reached by no outer join) it is NOT EXISTS (S where y = x), an anti
 * join.  With NULLs possible it would take two more conjuncts, `NOT EXISTS
 * (S where y IS NULL)` and `x IS NOT NULL OR NOT EXISTS (S)`; that form is
 * not made: offloaded, a differential query (a nullable int2 column NOT IN
 * a dimension's keys, beside a qual dividing by a float column) raised
 * division by zero where PostgreSQL's plan did not, a cause not yet found.
 * The anti join is what the engine runs between a fact table and a
 * dimension (TPC-H q16 over tables declared with their keys NOT NULL:
 * partsupp anti join supplier).  Only where S is a plain SELECT of
 * tables (no aggregation, grouping, DISTINCT, LIMIT, set operation or
 * volatile function: adding a qual to its WHERE keeps its meaning), the
 * operator is a strict equality, and S's quals cannot raise an error a
 * hashed SubPlan would not (it reads all of S too, as the anti join does).
 */

#include "postgres.h"

#include "access/table.h"
#include "catalog/pg_operator.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteManip.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "plan/warp_plan_internal.h"

/* LIKE / NOT LIKE with a constant pattern that has no trailing escape:
 * the pattern error is the only one these operators raise */
static bool
safe_like(OpExpr *op)
{
	char	   *name;
	Const	   *pat;
	char	   *s;

	if (op->opno >= FirstNormalObjectId || list_length(op->args) != 2)
		return false;
	name = get_opname(op->opno);
	pat = (Const *) lsecond(op->args);
	if (name == NULL || (strcmp(name, "~~") != 0 && strcmp(name, "!~~") != 0) ||
		!IsA(pat, Const) || pat->constisnull ||
		(pat->consttype != TEXTOID && pat->consttype != BPCHAROID))
		return false;
	s = TextDatumGetCString(pat->constvalue);
	return strlen(s) == 0 || s[strlen(s) - 1] != '\\';
}

static bool
quals_may_fail(Node *node)
{
	if (node == NULL)
		return false;
	if (IsA(node, List))
	{
		ListCell   *lc;

		foreach(lc, (List *) node)
			if (quals_may_fail(lfirst(lc)))
				return true;
		return false;
	}
	if (IsA(node, BoolExpr))
		return quals_may_fail((Node *) ((BoolExpr *) node)->args);
	if (IsA(node, OpExpr) && safe_like((OpExpr *) node))
		return quals_may_fail(linitial(((OpExpr *) node)->args));
	return may_fail_walker(node, NULL);
}

/* the FROM items of a query: tables and inner joins only */
static bool
inner_joins_only(Node *n)
{
	if (IsA(n, List))
	{
		ListCell   *lc;

		foreach(lc, (List *) n)
			if (!inner_joins_only(lfirst(lc)))
				return false;
		return true;
	}
	if (IsA(n, RangeTblRef))
		return true;
	if (IsA(n, JoinExpr) && ((JoinExpr *) n)->jointype == JOIN_INNER)
		return inner_joins_only(((JoinExpr *) n)->larg) &&
			inner_joins_only(((JoinExpr *) n)->rarg);
	return false;
}

/* e (of query q) is a column declared NOT NULL of a table that q reaches
 * by inner joins only: it is never NULL */
static bool
never_null(Query *q, Node *e)
{
	Var		   *v;
	RangeTblEntry *rte;
	Relation	rel;
	bool		notnull;

	while (e && IsA(e, RelabelType))
		e = (Node *) ((RelabelType *) e)->arg;
	if (e == NULL || !IsA(e, Var))
		return false;
	v = (Var *) e;
	if (v->varlevelsup != 0 || v->varattno <= 0 || !inner_joins_only((Node *) q->jointree->fromlist))
		return false;
	rte = rt_fetch(v->varno, q->rtable);
	if (rte->rtekind != RTE_RELATION)
		return false;
	rel = table_open(rte->relid, NoLock);
	notnull = TupleDescAttr(RelationGetDescr(rel), v->varattno - 1)->attnotnull;
	table_close(rel, NoLock);
	return notnull;
}

static bool
plain_select(Query *s)
{
	return s->commandType == CMD_SELECT && !s->hasAggs && s->groupClause == NIL &&
		s->groupingSets == NIL && s->havingQual == NULL && !s->hasWindowFuncs &&
		s->distinctClause == NIL && s->sortClause == NIL && s->limitCount == NULL &&
		s->limitOffset == NULL && !s->hasTargetSRFs && s->setOperations == NULL &&
		s->cteList == NIL && s->rowMarks == NIL && !s->hasForUpdate &&
		s->jointree != NULL && s->jointree->fromlist != NIL &&
		list_length(s->targetList) == 1 && !((TargetEntry *) linitial(s->targetList))->resjunk;
}

/* NOT EXISTS (s's rows with the extra qual) */
static Node *
not_exists(Query *s, Node *extra)
{
	Query	   *e = copyObject(s);
	SubLink    *sl = makeNode(SubLink);

	if (extra)
		e->jointree->quals = e->jointree->quals == NULL ? extra :
			(Node *) make_andclause(list_make2(e->jointree->quals, extra));
	sl->subLinkType = EXISTS_SUBLINK;
	sl->subLinkId = 0;
	sl->subselect = (Node *) e;
	sl->location = -1;
	return (Node *) make_notclause((Expr *) sl);
}

/*
 * The conjuncts replacing qual, a conjunct of q's WHERE, if it is `x NOT
 * IN (SELECT y ...)` as the header describes; NIL: left as it is.
 */
List *
notin_conjuncts(Query *q, Node *qual)
{
	BoolExpr   *not = (BoolExpr *) qual;
	SubLink    *sl;
	OpExpr	   *test;
	Query	   *s;
	Node	   *x,
			   *y,
			   *outer_x;
	OpExpr	   *eq;
	Param	   *p;
	List	   *out;

	if (!IsA(not, BoolExpr) || not->boolop != NOT_EXPR)
		return NIL;
	sl = linitial(not->args);
	if (!IsA(sl, SubLink) || sl->subLinkType != ANY_SUBLINK || !IsA(sl->subselect, Query))
		return NIL;
	test = (OpExpr *) sl->testexpr;
	if (!IsA(test, OpExpr) || list_length(test->args) != 2)
		return NIL;
	p = (Param *) lsecond(test->args);
	while (p && IsA(p, RelabelType))
		p = (Param *) ((RelabelType *) p)->arg;
	if (!IsA(p, Param) || p->paramkind != PARAM_SUBLINK || p->paramid != 1)
		return NIL;
	set_opfuncid(test);
	if (!func_strict(test->opfuncid) ||
		!(op_mergejoinable(test->opno, exprType(linitial(test->args))) ||
		  op_hashjoinable(test->opno, exprType(linitial(test->args)))))
		return NIL;
	s = (Query *) sl->subselect;
	x = linitial(test->args);
	if (!plain_select(s) || contain_subplans(x) || contain_volatile_functions(x) ||
		contain_volatile_functions((Node *) s) || s->hasSubLinks ||
		quals_may_fail(s->jointree->quals) ||
		quals_may_fail((Node *) ((TargetEntry *) linitial(s->targetList))->expr))
		return NIL;
	y = (Node *) ((TargetEntry *) linitial(s->targetList))->expr;
	if (!never_null(s, y) || !never_null(q, x))
		return NIL;

	/* y = x inside the subquery: x one level further out there */
	outer_x = copyObject(x);
	IncrementVarSublevelsUp(outer_x, 1, 0);
	eq = copyObject(test);
	if (IsA(lsecond(eq->args), RelabelType))
		((RelabelType *) lsecond(eq->args))->arg = (Expr *) copyObject(y);
	else
		lsecond(eq->args) = copyObject(y);
	linitial(eq->args) = outer_x;
	out = list_make1(not_exists(s, (Node *) eq));
	return out;
}
