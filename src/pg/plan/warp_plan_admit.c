/*
 * warp_plan_admit.c — which expressions the engine takes.
 *
 * Whether the engine compiles a fact expression or qual (through the
 * compiler's check mode), which expressions could raise an error and of
 * which kind (the aggregate split, warp_plan_agg.c, refuses plans that
 * would raise a different error than PostgreSQL's), what a heap fact
 * table cannot give the engine, and whether the GPU driver runs a star
 * (gpu_can_run, which decides where WarpPreAgg runs in warp_plan.c).
 */

#include "postgres.h"

#include "catalog/pg_statistic.h"
#include "nodes/nodeFuncs.h"
#include "parser/parsetree.h"
#include "utils/date.h"
#include "utils/numeric.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"

#include "pg_warp.h"
#include "warp.h"
#include "warp_row_check.h"
#include "plan/warp_plan_internal.h"

bool
check_fact_expr_as(StarInfo *si, Expr *e, bool qual, const char **why)
{
	WarpBuilder b;

	warp_builder_init(&b, si->fact->relid, NULL);
	b.native_columns = si->heap;	/* as the executor's program will be */
	if ((qual ? warp_compile_qual(&b, e) : warp_compile_expr(&b, e)) < 0)
	{
		*why = b.why_not;
		return false;
	}
	return true;
}

bool
check_fact_expr(StarInfo *si, Expr *e, const char **why)
{
	return check_fact_expr_as(si, e, false, why);
}

/*
 * Whether an operator or function node cannot raise an error itself (its
 * arguments aside): comparisons with built-in operators, extract/date_part
 * and the date of a timestamp(tz).
 */
static bool
node_cannot_fail(Node *node)
{
	if (IsA(node, OpExpr) || IsA(node, DistinctExpr) || IsA(node, NullIfExpr) ||
		IsA(node, ScalarArrayOpExpr))
	{
		Oid			opno = IsA(node, ScalarArrayOpExpr) ? ((ScalarArrayOpExpr *) node)->opno
			: ((OpExpr *) node)->opno;
		char	   *name = opno < FirstNormalObjectId ? get_opname(opno) : NULL;
		static const char *const cmp_names[] = {"=", "<>", "<", "<=", ">", ">="};
		int			k;

		for (k = 0; name && k < lengthof(cmp_names); k++)
			if (strcmp(name, cmp_names[k]) == 0)
				return true;
	}
	if (IsA(node, FuncExpr))
	{
		Oid			f = ((FuncExpr *) node)->funcid;

		/* fields of a date or timestamp, and the calendar day of one */
		if (warp_is_extract_func(f) || f == F_DATE_PART_TEXT_TIMESTAMP ||
			f == F_DATE_PART_TEXT_TIMESTAMPTZ || f == F_DATE_TIMESTAMP || f == F_DATE_TIMESTAMPTZ)
			return true;
	}
	return false;
}

/* nodes that raise no error themselves and only combine their arguments */
static bool
node_is_plain(Node *node)
{
	return IsA(node, Var) || IsA(node, Const) || IsA(node, Param) || IsA(node, RelabelType) ||
		IsA(node, BoolExpr) || IsA(node, NullTest) || IsA(node, BooleanTest) ||
		IsA(node, CaseExpr) || IsA(node, CaseWhen) || IsA(node, CaseTestExpr) ||
		IsA(node, CoalesceExpr) || IsA(node, List) || IsA(node, TargetEntry);
}

/*
 * Whether evaluating an expression could raise an error: anything but
 * columns, constants, parameters, comparisons with built-in operators,
 * extract/date_part and the date of a timestamp(tz), AND/OR/NOT, IS [NOT]
 * NULL, CASE and COALESCE of such.
 */
bool
may_fail_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (node_is_plain(node) || node_cannot_fail(node))
		return expression_tree_walker(node, may_fail_walker, context);
	return true;				/* arithmetic, casts, functions: they may */
}

/*
 * The errors (SQLSTATEs) evaluating an expression could raise, as bits:
 * arithmetic and casts overflow (22003), a division also divides by zero
 * (22012), date/time arithmetic and conversions leave the calendar's range
 * (22008); anything else is a class of its own.  Which of two different
 * errors rows raise first depends on the order they are evaluated in.
 */
#define ERRC_OVERFLOW	0x01
#define ERRC_DIVZERO	0x02
#define ERRC_DATETIME	0x04
#define ERRC_OTHER		0x08

bool
error_classes_walker(Node *node, int *classes)
{
	if (node == NULL)
		return false;
	if (node_is_plain(node) || node_cannot_fail(node))
		return expression_tree_walker(node, error_classes_walker, classes);
	if (IsA(node, OpExpr) || IsA(node, FuncExpr))
	{
		const char *name;
		Oid			rettype = exprType(node);

		name = IsA(node, OpExpr) ? get_opname(((OpExpr *) node)->opno)
			: get_func_name(((FuncExpr *) node)->funcid);
		if (name && (strcmp(name, "/") == 0 || strcmp(name, "%") == 0 ||
					 strcmp(name, "div") == 0 || strcmp(name, "mod") == 0))
			*classes |= ERRC_DIVZERO | ERRC_OVERFLOW;
		else if (rettype == DATEOID || rettype == TIMESTAMPOID ||
				 rettype == TIMESTAMPTZOID || rettype == INTERVALOID)
			*classes |= ERRC_DATETIME;
		else if ((IsA(node, FuncExpr) &&
				  ((FuncExpr *) node)->funcformat != COERCE_EXPLICIT_CALL) ||
				 (name && (strcmp(name, "+") == 0 || strcmp(name, "-") == 0 ||
						   strcmp(name, "*") == 0)))
			*classes |= ERRC_OVERFLOW;	/* a cast, or arithmetic */
		else
			*classes |= ERRC_OTHER;
		return expression_tree_walker(node, error_classes_walker, classes);
	}
	*classes |= ERRC_OTHER;		/* text input casts (22P02 too), the rest */
	return expression_tree_walker(node, error_classes_walker, classes);
}

/* how many different errors *classes stands for */
int
error_class_count(int classes)
{
	int			n = 0;

	for (; classes; classes &= classes - 1)
		n++;
	return n;
}

/*
 * What only the CPU driver computes (warp_row_check): numeric arithmetic
 * and casts, numeric columns of more than 18 digits, text columns and
 * extract() (numeric even as a group key, where the row evaluator could
 * take its integer: kept simple); numeric(p <= 18) columns read as their
 * unscaled int8 (aggregates, group keys, comparisons with constants),
 * date_trunc, date_part and the date/time conversions run on the GPU too.
 * (A comparison between two numeric columns passes here but is numeric
 * arithmetic to the engine: the daemon then gives it to the CPU driver,
 * EXPLAIN says so.)
 */
static bool
cpu_only_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var) && warp_is_text_type(((Var *) node)->vartype))
		return true;
	if (IsA(node, Var) && ((Var *) node)->vartype == NUMERICOID)
	{
		int			p,
					sc;

		if (!pgwarp_numeric_typmod(((Var *) node)->vartypmod, &p, &sc) || p > 18)
			return true;
	}
	/* numeric arithmetic, casts, CASE/COALESCE/NULLIF */
	if ((IsA(node, OpExpr) || IsA(node, FuncExpr) || IsA(node, CaseExpr) ||
		 IsA(node, CoalesceExpr) || IsA(node, NullIfExpr)) &&
		exprType(node) == NUMERICOID)
		return true;
	if (IsA(node, FuncExpr) && warp_is_extract_func(((FuncExpr *) node)->funcid))
		return true;
	return expression_tree_walker(node, cpu_only_walker, context);
}

/*
 * Values a heap fact table may hold that an Arrow file cannot and the
 * engine does not compute: NaN in a numeric column (Decimal128 has none;
 * warp_exec_heap.c reads numeric columns as Decimal128 arrays), and the
 * fields of an infinite date or timestamp (extract() and date_part() give
 * +-Infinity or NULL there; comparisons, date_trunc, the casts and date
 * arithmetic pass infinities on as PostgreSQL does).  A column is left to
 * PostgreSQL where its statistics (most common values, histogram bounds:
 * NaN sorts last and the infinities at the ends, so a sampled one shows)
 * hold such a value; one that ANALYZE did not sample is an error at
 * execution (warp_exec_heap.c), never a wrong answer.
 */
typedef struct HeapSpecial
{
	Index		varno;			/* the fact table's range table index */
	Oid			relid;
	bool		in_fields;		/* under extract() or date_part() */
	const char *why;
} HeapSpecial;

/* whether a value of type typid is NaN or infinite */
static bool
special_value(Oid typid, Datum v)
{
	switch (typid)
	{
		case NUMERICOID:
			return numeric_is_nan(DatumGetNumeric(v)) || numeric_is_inf(DatumGetNumeric(v));
		case DATEOID:
			return DATE_NOT_FINITE(DatumGetDateADT(v));
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return TIMESTAMP_NOT_FINITE(DatumGetTimestamp(v));
	}
	return false;
}

/* whether the statistics of column attno of relid show such a value */
static bool
stats_show_special(Oid relid, AttrNumber attno, Oid typid)
{
	HeapTuple	tup = SearchSysCache3(STATRELATTINH, ObjectIdGetDatum(relid),
									  Int16GetDatum(attno), BoolGetDatum(false));
	static const int kinds[] = {STATISTIC_KIND_MCV, STATISTIC_KIND_HISTOGRAM};
	bool		found = false;
	int			k,
				i;

	if (!HeapTupleIsValid(tup))
		return false;
	for (k = 0; k < lengthof(kinds) && !found; k++)
	{
		AttStatsSlot sslot;

		if (!get_attstatsslot(&sslot, tup, kinds[k], InvalidOid, ATTSTATSSLOT_VALUES))
			continue;
		for (i = 0; i < sslot.nvalues && !found; i++)
			found = special_value(typid, sslot.values[i]);
		free_attstatsslot(&sslot);
	}
	ReleaseSysCache(tup);
	return found;
}

static bool
heap_special_walker(Node *node, HeapSpecial *hs)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var) && ((Var *) node)->varno == hs->varno &&
		((Var *) node)->varlevelsup == 0 && ((Var *) node)->varattno > 0)
	{
		Var		   *v = (Var *) node;

		if (v->vartype == NUMERICOID && stats_show_special(hs->relid, v->varattno, NUMERICOID))
		{
			hs->why = "heap fact table: a numeric column whose statistics show NaN";
			return true;
		}
		if (hs->in_fields &&
			(v->vartype == DATEOID || v->vartype == TIMESTAMPOID || v->vartype == TIMESTAMPTZOID) &&
			stats_show_special(hs->relid, v->varattno, v->vartype))
		{
			hs->why = "heap fact table: extract() or date_part() of a column whose statistics show infinite values";
			return true;
		}
		return false;
	}
	if (IsA(node, FuncExpr) && !hs->in_fields)
	{
		Oid			f = ((FuncExpr *) node)->funcid;

		if (warp_is_extract_func(f) || f == F_DATE_PART_TEXT_TIMESTAMP ||
			f == F_DATE_PART_TEXT_TIMESTAMPTZ)
		{
			bool		r;

			hs->in_fields = true;
			r = expression_tree_walker(node, heap_special_walker, hs);
			hs->in_fields = false;
			return r;
		}
	}
	return expression_tree_walker(node, heap_special_walker, hs);
}

/*
 * Whether a heap fact table's expressions node may meet such a value
 * (reason noted); false for an Arrow fact table.
 */
bool
heap_special_refused(PlannerInfo *root, StarInfo *si, Node *node)
{
	HeapSpecial hs;

	if (!si->heap)
		return false;
	hs.varno = si->fact->relid;
	hs.relid = planner_rt_fetch(si->fact->relid, root)->relid;
	hs.in_fields = false;
	hs.why = NULL;
	if (!heap_special_walker(node, &hs))
		return false;
	not_offloaded(hs.why);
	return true;
}

/*
 * Whether the GPU driver will take the query (warp_row_check() decides for
 * sure at execution; this is what the plan already shows): sum(float4),
 * whose rounding depends on the order of the rows, and programs beyond the
 * row evaluator's limits run on the CPU driver, which under mode auto is
 * better done by a (parallel) plan in the backends than in the daemon.
 */
bool
gpu_can_run(StarInfo *si)
{
	ListCell   *lc;

	if (list_length(si->dims) > WARP_ROW_MAX_JOINS ||
		list_length(si->key_info) > WARP_ROW_MAX_KEYS ||
		list_length(si->agg_info) > WARP_ROW_MAX_AGGS)
		return false;
	if (cpu_only_walker((Node *) si->quals, NULL))
		return false;
	foreach(lc, si->fact_exprs)
	{
		Node	   *e = lfirst(lc);

		/* extract() at a group key's root is its int8 there (numeric_root) */
		if (e && IsA(e, FuncExpr) && warp_is_extract_func(((FuncExpr *) e)->funcid))
		{
			ListCell   *kc;

			foreach(kc, si->key_info)
				if (lsecond((List *) lfirst(kc)) == (void *) e)
				{
					e = (Node *) lsecond(((FuncExpr *) e)->args);
					break;
				}
		}
		if (cpu_only_walker(e, NULL))
			return false;
	}
	foreach(lc, si->agg_info)
	{
		WarpPlanAgg pa;
		WarpType	t = WT_INT8;

		deform_warp_plan_agg(lfirst(lc), &pa);
		/* numeric arguments: cpu_only_walker kept expressions and wide
		 * columns back; a numeric(p <= 18) column is an int8 sum/min/max */
		if (pa.kind != WA_COUNT_STAR)
			warp_type_of(pa.argtype, &t);
		if (!warp_row_agg_exact(pa.kind, t))
			return false;
	}
	return true;
}
