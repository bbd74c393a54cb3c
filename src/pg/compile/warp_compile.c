/*
 * warp_compile.c — PostgreSQL expression trees to engine program nodes.
 *
 * Only what the engine computes exactly as PostgreSQL does is accepted:
 * built-in operators on integer, float, date and timestamp values
 * (arithmetic with PostgreSQL's overflow and division-by-zero errors,
 * comparisons with its NaN ordering), AND/OR/NOT, IS [NOT] NULL,
 * IS [NOT] DISTINCT FROM, NULLIF, searched CASE, COALESCE, IN lists,
 * numeric casts between those types, constants and external parameters.
 * Anything else is refused with a reason, and the query keeps PostgreSQL's
 * own plan.  Date and timestamp values take part only in comparisons with
 * the same type (or date/timestamp/timestamptz across types, through the
 * session's TimeZone).
 *
 * This file is the core: the entry points (warp_compile_expr, _qual,
 * _group_key), operators, casts, booleans, CASE/COALESCE/NULLIF, IN lists
 * and the folding of stable expressions into values of the whole scan.
 * Its neighbours in src/pg/compile (warp_compile_internal.h): the builder's
 * primitives (warp_compile_builder.c) and the numeric, date/time and text
 * expressions (warp_compile_numeric.c, warp_compile_datetime.c,
 * warp_compile_text.c).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"

#include "pg_warp.h"
#include "compile/warp_compile_internal.h"
#include "warp_ops_datetime.h"

/* IN lists longer than this become one WN_IN_SET node (compile_in_set) */
#define WARP_IN_SET_MIN 8

static int
compile_binary(WarpBuilder *b, WarpOp op, int sub, WarpType rtype, Expr *l, Expr *r)
{
	int			a = warp_compile_expr(b, l);
	int			c;
	int			n;

	if (a < 0)
		return -1;
	c = warp_compile_expr(b, r);
	if (c < 0)
		return -1;
	n = warp_add_node(b, op, rtype);
	b->nodes[n].sub = sub;
	b->nodes[n].a = a;
	b->nodes[n].b = c;
	return n;
}

/*
 * A built-in operator on engine types.  Its meaning is taken from its name
 * and argument types; only built-in operators (OID below
 * FirstGenbkiObjectId... FirstNormalObjectId) are trusted to mean what
 * their names say.
 */
static int
compile_operator(WarpBuilder *b, Oid opno, Oid restype, List *args, bool distinct)
{
	char	   *name;
	Oid			ltype,
				rtype;
	WarpType	lt,
				rt,
				res;

	if (opno >= FirstNormalObjectId)
		return warp_refuse(b, "user-defined operator");
	name = get_opname(opno);
	if (name == NULL)
		return warp_refuse(b, "unknown operator");
	if (list_length(args) == 1)
	{
		int			a;
		int			n;

		if (!warp_type_of(restype, &res) || res == WT_BOOL || res == WT_DATE ||
			res == WT_TIMESTAMP || exprType(linitial(args)) != restype)
			return warp_refuse(b, "unary operator the engine does not compute");
		if (strcmp(name, "+") == 0)
			return warp_compile_expr(b, linitial(args));
		if (strcmp(name, "-") != 0)
			return warp_refuse(b, "unary operator the engine does not compute");
		a = warp_compile_expr(b, linitial(args));
		if (a < 0)
			return -1;
		n = warp_add_node(b, WN_NEG, res);
		b->nodes[n].a = a;
		return n;
	}
	if (list_length(args) != 2)
		return warp_refuse(b, "operator with more than two arguments");
	ltype = exprType(linitial(args));
	rtype = exprType(lsecond(args));
	/* date/timestamp/timestamptz +/- interval (interval + x is inlined so) */
	if (rtype == INTERVALOID &&
		(ltype == DATEOID || ltype == TIMESTAMPOID || ltype == TIMESTAMPTZOID) &&
		(strcmp(name, "+") == 0 || strcmp(name, "-") == 0))
		return warp_compile_interval_arith(b, ltype, name[0] == '-', linitial(args), lsecond(args));
	if (!warp_type_of(ltype, &lt) || !warp_type_of(rtype, &rt))
		return warp_refuse(b, "operator on a type the engine does not compute");

	/* comparisons */
	{
		static const char *const cmp_names[] = {"=", "<>", "<", "<=", ">", ">="};
		int			k;

		for (k = 0; k < 6; k++)
			if (strcmp(name, cmp_names[k]) == 0)
				break;
		if (k < 6)
		{
			bool		ok;

			if (is_int_type(lt))
				ok = is_int_type(rt);
			else if (WARP_TYPE_IS_FLOAT(lt))
				ok = WARP_TYPE_IS_FLOAT(rt);
			else
				ok = lt == rt && ltype == rtype;	/* bool, date, timestamp */
			if (!ok && datetime_rank(ltype) >= 0 && datetime_rank(rtype) >= 0)
				return warp_compile_datetime_cross_cmp(b, k, distinct, linitial(args), lsecond(args));
			if (!ok)
				return warp_refuse(b, "comparison across types the engine does not compare");
			if (distinct)
			{
				int			n;

				if (k != 0)
					return warp_refuse(b, "IS DISTINCT FROM with a non-equality operator");
				n = compile_binary(b, WN_DISTINCT, 0, WT_BOOL, linitial(args), lsecond(args));
				return n;
			}
			return compile_binary(b, WN_CMP, k, WT_BOOL, linitial(args), lsecond(args));
		}
	}
	if (distinct)
		return warp_refuse(b, "IS DISTINCT FROM with a non-equality operator");

	/* date + int4, date - int4, date - date (int4 + date is inlined) */
	if ((ltype == DATEOID || rtype == DATEOID) &&
		(strcmp(name, "+") == 0 || strcmp(name, "-") == 0))
	{
		bool		plus = name[0] == '+';
		int			kind = -1,
					a,
					c,
					n;

		if (ltype == DATEOID && rtype == INT4OID)
			kind = plus ? WARP_DTA_DATE_PLI : WARP_DTA_DATE_MII;
		else if (!plus && ltype == DATEOID && rtype == DATEOID)
			kind = WARP_DTA_DATE_MI;
		if (kind < 0)
			return warp_refuse(b, "date arithmetic the engine does not compute");
		if ((a = warp_compile_expr(b, linitial(args))) < 0 ||
			(c = warp_compile_expr(b, lsecond(args))) < 0)
			return -1;
		n = warp_add_node(b, WN_DATETIME, kind == WARP_DTA_DATE_MI ? WT_INT4 : WT_DATE);
		b->nodes[n].a = a;
		b->nodes[n].b = c;
		b->nodes[n].sub = (uint8) kind;
		b->nodes[n].flags = WARP_DT_ARITH;
		return n;
	}

	/* arithmetic: integer with integer or float with float */
	if (!warp_type_of(restype, &res))
		return warp_refuse(b, "operator result of a type the engine does not compute");
	if (!((is_int_type(lt) && is_int_type(rt) && is_int_type(res)) ||
		  (WARP_TYPE_IS_FLOAT(lt) && WARP_TYPE_IS_FLOAT(rt) && WARP_TYPE_IS_FLOAT(res))))
		return warp_refuse(b, "arithmetic on types the engine does not compute");
	{
		static const char *const ar_names[] = {"+", "-", "*", "/", "%"};
		int			k;

		for (k = 0; k < 5; k++)
			if (strcmp(name, ar_names[k]) == 0)
				break;
		if (k == 5 || (k == WARP_ARITH_MOD && WARP_TYPE_IS_FLOAT(res)))
			return warp_refuse(b, "operator the engine does not compute");
		return compile_binary(b, WN_ARITH, k, res, linitial(args), lsecond(args));
	}
}

/* cast functions between numeric types: int2(), int4(), float8(), ... */
static int
compile_func(WarpBuilder *b, FuncExpr *fe)
{
	WarpType	from,
				to;
	char	   *fname;
	Oid			argtype;
	int			a,
				n;

	if (warp_is_datetime_func(fe->funcid))
		return warp_compile_datetime(b, fe);
	if ((n = warp_compile_datetime_cast(b, fe)) != -2)
		return n;
	if (fe->funcretset || list_length(fe->args) != 1 || fe->funcid >= FirstNormalObjectId)
		return warp_refuse(b, "function the engine does not compute");
	argtype = exprType(linitial(fe->args));
	if (!warp_type_of(fe->funcresulttype, &to) || !warp_type_of(argtype, &from))
		return warp_refuse(b, "function on types the engine does not compute");
	fname = get_func_name(fe->funcid);
	{
		/* the built-in cast functions are named after their result type */
		static const struct
		{
			Oid			typid;
			const char *fname;
		}			casts[] = {
			{INT2OID, "int2"}, {INT4OID, "int4"}, {INT8OID, "int8"},
			{FLOAT4OID, "float4"}, {FLOAT8OID, "float8"}
		};
		int			k;

		for (k = 0; k < lengthof(casts); k++)
			if (casts[k].typid == fe->funcresulttype && fname &&
				strcmp(fname, casts[k].fname) == 0)
				break;
		if (k == lengthof(casts))
			return warp_refuse(b, "function the engine does not compute");
	}
	if (!(is_int_type(from) || WARP_TYPE_IS_FLOAT(from)) ||
		!(is_int_type(to) || WARP_TYPE_IS_FLOAT(to)))
		return warp_refuse(b, "cast the engine does not compute");
	a = warp_compile_expr(b, linitial(fe->args));
	if (a < 0)
		return -1;
	n = warp_add_node(b, WN_CAST, to);
	b->nodes[n].a = a;
	return n;
}

/* CaseTestExpr -> the CASE's test expression (see compile_case_when) */
static Node *
case_test_mutator(Node *node, void *context)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, CaseTestExpr))
		return copyObject((Node *) context);
	if (IsA(node, CaseExpr) && ((CaseExpr *) node)->arg != NULL)
	{
		/* a nested CASE y WHEN ...: its WHENs test y, only y may test ours */
		CaseExpr   *ce = (CaseExpr *) copyObject(node);

		ce->arg = (Expr *) case_test_mutator((Node *) ce->arg, context);
		return (Node *) ce;
	}
	return expression_tree_mutator(node, case_test_mutator, context);
}

/*
 * A WHEN condition of CASE arg WHEN ... (arg NULL: of a plain CASE), with
 * its CaseTestExpr replaced by arg itself, so `x = 'A'` is an ordinary
 * comparison (text columns included).  PostgreSQL evaluates arg once per
 * row before the first WHEN; the engine evaluates it within the first WHEN
 * and again (or memoized) in later ones: the same value, and an error it
 * raises arises at the same point.
 */
Expr *
warp_case_when_expr(Expr *arg, Expr *when)
{
	return arg ? (Expr *) case_test_mutator((Node *) when, arg) : when;
}

static int
compile_list(WarpBuilder *b, WarpOp op, WarpType type, List *args, int flags)
{
	int		   *kids = palloc(sizeof(int) * Max(list_length(args), 1));
	int			k = 0,
				n,
				i;
	ListCell   *lc;

	foreach(lc, args)
	{
		kids[k] = warp_compile_expr(b, lfirst(lc));
		if (kids[k] < 0)
			return -1;
		k++;
	}
	n = warp_add_node(b, op, type);
	b->nodes[n].flags = flags;
	b->nodes[n].nargs = k;
	b->nodes[n].args_off = b->nargs;
	for (i = 0; i < k; i++)
		warp_add_arg(b, kids[i]);
	return n;
}

static int
cmp_int64(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return x < y ? -1 : x > y ? 1 : 0;
}

/*
 * x = ANY (values) or x <> ALL (values) of more than WARP_IN_SET_MIN
 * elements as one WN_IN_SET node: a binary search of the sorted distinct
 * values instead of an OR/AND of a comparison (and three nodes, each with
 * its vectors) per element.  Where every comparison is an exact integer
 * one: integer types with each other (int2/int4/int8: the operators compare
 * the values), date with date, timestamp(tz) with the same type, and text
 * equality on a fact text column under a deterministic collation (the
 * set holds the strings' indexes among the column's constants, which the
 * column's value is; -1, no constant, is in no set).  Returns -2 for any
 * other shape (the caller expands the list), -1 when refused.
 */
static int
compile_in_set(WarpBuilder *b, ScalarArrayOpExpr *sa, Oid elemtype, Datum *values,
			   bool *nulls, int nvals)
{
	Expr	   *l = linitial(sa->args);
	Oid			ltype;
	Oid			fn = get_opcode(sa->opno);
	char	   *name;
	int64	   *vals;
	int			nv = 0,
				x,
				n,
				i;
	bool		has_null = false;
	bool		is_text;

	while (IsA(l, RelabelType))
		l = ((RelabelType *) l)->arg;
	ltype = exprType((Node *) l);
	if (sa->opno >= FirstNormalObjectId || (name = get_opname(sa->opno)) == NULL ||
		strcmp(name, sa->useOr ? "=" : "<>") != 0)
		return -2;
	is_text = (fn == F_TEXTEQ || fn == F_TEXTNE || fn == F_BPCHAREQ || fn == F_BPCHARNE);
	if (is_text)
	{
		if (!IsA(l, Var) || ((fn == F_BPCHAREQ || fn == F_BPCHARNE) ? ltype != BPCHAROID :
							 (ltype != TEXTOID && ltype != VARCHAROID)))
			return -2;
	}
	else if (!((ltype == INT2OID || ltype == INT4OID || ltype == INT8OID) &&
			   (elemtype == INT2OID || elemtype == INT4OID || elemtype == INT8OID)) &&
			 !(ltype == elemtype &&
			   (ltype == DATEOID || ltype == TIMESTAMPOID || ltype == TIMESTAMPTZOID)))
		return -2;
	for (i = 0; i < nvals; i++)
		if (!nulls[i])
			break;
	if (i == nvals)
		return -2;				/* only NULLs: the expansion says NULL */
	vals = palloc(sizeof(int64) * nvals);
	if (is_text)
	{
		Var		   *v = (Var *) l;
		int			ci;

		if ((x = warp_text_eq_column(b, v, sa->inputcollid, &ci)) < 0)
			return -1;
		for (i = 0; i < nvals; i++)
		{
			if (nulls[i])
			{
				has_null = true;
				continue;
			}
			vals[nv++] = warp_text_const_for(b, ci, v, values[i]);
		}
	}
	else
	{
		if ((x = warp_compile_expr(b, l)) < 0)
			return -1;
		for (i = 0; i < nvals; i++)
		{
			double		unused;

			if (nulls[i])
			{
				has_null = true;
				continue;
			}
			warp_datum_value(values[i], elemtype, &vals[nv], &unused);
			nv++;
		}
	}
	qsort(vals, nv, sizeof(int64), cmp_int64);
	n = 0;
	for (i = 0; i < nv; i++)
		if (n == 0 || vals[i] != vals[n - 1])
			vals[n++] = vals[i];
	if (b->nsetvals + n > b->setvals_cap)
	{
		b->setvals_cap = Max(b->setvals_cap * 2, b->nsetvals + n);
		b->setvals = b->setvals ? repalloc_huge(b->setvals, sizeof(int64) * b->setvals_cap)
			: palloc_extended(sizeof(int64) * b->setvals_cap, MCXT_ALLOC_HUGE);
	}
	memcpy(b->setvals + b->nsetvals, vals, sizeof(int64) * n);
	i = warp_add_node(b, WN_IN_SET, WT_BOOL);
	b->nodes[i].a = x;
	b->nodes[i].args_off = b->nsetvals;
	b->nodes[i].nargs = n;
	b->nodes[i].flags = (sa->useOr ? 0 : WARP_IN_NOT) | (has_null ? WARP_IN_HAS_NULL : 0);
	b->nsetvals += n;
	return i;
}

/*
 * x op ANY/ALL (array): an OR/AND of comparisons with its elements.  The
 * array is a constant of at most 1000 elements, or any other value of the
 * whole scan (warp_scan_value: a parameter, or ARRAY[$1, 'x'], which IN ($1,
 * 'x') becomes), of any length, known once the program is built at
 * executor start; at plan time one comparison with a NULL element stands
 * for its shape.  Not numeric elements from a parameter: a value the
 * engine cannot represent (NaN, more than 38 digits) would only be found
 * at executor start, too late to leave the comparison to PostgreSQL.
 */
static int
compile_saop(WarpBuilder *b, ScalarArrayOpExpr *sa)
{
	Expr	   *arr = lsecond(sa->args);
	Const	   *ac;
	Oid			elemtype;
	int16		typlen;
	bool		typbyval;
	char		typalign;
	Datum	   *values;
	bool	   *nulls;
	int			nvals,
				i;
	bool		runtime;
	List	   *ors = NIL;
	Node	   *tree;

	while (IsA(arr, RelabelType))
		arr = ((RelabelType *) arr)->arg;
	runtime = !IsA(arr, Const);
	ac = warp_scan_value(b, arr);
	if (ac == NULL || (!runtime && ac->constisnull))
		return warp_refuse(b, "IN list that is not a constant array or a parameter");
	elemtype = get_element_type(ac->consttype);
	if (!OidIsValid(elemtype))
		return warp_refuse(b, "IN list that is not an array");
	if (runtime && elemtype == NUMERICOID)
		return warp_refuse(b, "numeric IN list from a parameter");
	if (runtime && b->econtext == NULL)
	{
		/* plan time: the shape of one comparison */
		return warp_compile_expr(b, make_opclause(sa->opno, BOOLOID, false,
												  linitial(sa->args),
												  (Expr *) makeNullConst(elemtype, -1, InvalidOid),
												  InvalidOid, sa->inputcollid));
	}
	if (ac->constisnull)
		return warp_const_node(b, BOOLOID, (Datum) 0, true);
	get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
	deconstruct_array(DatumGetArrayTypeP(ac->constvalue), elemtype,
					  typlen, typbyval, typalign, &values, &nulls, &nvals);
	if (nvals == 0)
		return warp_const_node(b, BOOLOID, BoolGetDatum(!sa->useOr), false);
	if (nvals > WARP_IN_SET_MIN)
	{
		int			n = compile_in_set(b, sa, elemtype, values, nulls, nvals);

		if (n != -2)
			return n;
	}
	if (nvals > 1000 && !runtime)
		return warp_refuse(b, "IN list longer than 1000 values");
	for (i = 0; i < nvals; i++)
	{
		Const	   *c = makeConst(elemtype, -1, InvalidOid, typlen, values[i], nulls[i], typbyval);

		ors = lappend(ors, make_opclause(sa->opno, BOOLOID, false,
										 linitial(sa->args), (Expr *) c,
										 InvalidOid, sa->inputcollid));
	}
	tree = (Node *) (sa->useOr ? makeBoolExpr(OR_EXPR, ors, -1) : makeBoolExpr(AND_EXPR, ors, -1));
	if (nvals == 1)
		tree = linitial(ors);
	return warp_compile_expr(b, (Expr *) tree);
}

/* true if node holds something evaluated per row or by another plan node */
static bool
not_foldable_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var) || IsA(node, Aggref) || IsA(node, WindowFunc) ||
		IsA(node, GroupingFunc) || IsA(node, SubPlan) || IsA(node, AlternativeSubPlan) ||
		IsA(node, SubLink) || IsA(node, PlaceHolderVar) || IsA(node, CurrentOfExpr) ||
		IsA(node, NextValueExpr) || IsA(node, CaseTestExpr))
		return true;
	if (IsA(node, Param) && ((Param *) node)->paramkind != PARAM_EXTERN &&
		((Param *) node)->paramkind != PARAM_EXEC)
		return true;
	if (IsA(node, ArrayCoerceExpr))
	{
		/*
		 * its element expression reads each element through a CaseTestExpr
		 * of its own (ARRAY[$1, 'x']::text[] folds)
		 */
		ArrayCoerceExpr *ac = (ArrayCoerceExpr *) node;

		return not_foldable_walker((Node *) ac->arg, context) ||
			(!IsA(ac->elemexpr, CaseTestExpr) &&
			 !(IsA(ac->elemexpr, RelabelType) &&
			   IsA(((RelabelType *) ac->elemexpr)->arg, CaseTestExpr)) &&
			 not_foldable_walker((Node *) ac->elemexpr, context));
	}
	return expression_tree_walker(node, not_foldable_walker, context);
}

/*
 * An expression over no column whose functions are at most stable
 * (now(), CURRENT_DATE, now() - interval '7 days', $1 + 1): one value for
 * the whole scan.  Volatile functions are never folded (nor offloaded).
 */
static bool
foldable(Expr *expr)
{
	if (IsA(expr, Const) || IsA(expr, Param) || IsA(expr, Var))
		return false;
	return !not_foldable_walker((Node *) expr, NULL) &&
		!contain_volatile_functions((Node *) expr) &&
		!expression_returns_set((Node *) expr);
}

/*
 * An expression over no column and no volatile function: the backend may
 * evaluate it once for the scan (a gating qual, warp_exec.c), as
 * PostgreSQL's gating Result does, a subquery's value (initplan, outer
 * query) included.  Constants and parameters too.
 */
bool
warp_compile_scan_constant(Expr *expr)
{
	return !not_foldable_walker((Node *) expr, NULL) &&
		!contain_volatile_functions((Node *) expr) &&
		!expression_returns_set((Node *) expr);
}

/*
 * the clock of the statement or transaction, or an array of constants and
 * external parameters (x IN ($1, 'a'), without coercions): evaluating it
 * cannot fail
 */
static bool
cannot_fail(Expr *expr)
{
	if (IsA(expr, SQLValueFunction))
		return true;
	if (IsA(expr, ArrayExpr) && !((ArrayExpr *) expr)->multidims)
	{
		ListCell   *lc;

		foreach(lc, ((ArrayExpr *) expr)->elements)
		{
			Node	   *e = lfirst(lc);

			while (IsA(e, RelabelType))
				e = (Node *) ((RelabelType *) e)->arg;
			if (!IsA(e, Const) && !(IsA(e, Param) && ((Param *) e)->paramkind == PARAM_EXTERN))
				return false;
		}
		return true;
	}
	if (IsA(expr, FuncExpr) && ((FuncExpr *) expr)->args == NIL)
	{
		Oid			f = ((FuncExpr *) expr)->funcid;

		return f == F_NOW || f == F_STATEMENT_TIMESTAMP || f == F_TRANSACTION_TIMESTAMP;
	}
	return false;
}

/*
 * A value that is one for the whole scan, as a Const: a constant; an
 * external parameter (a prepared statement's); or a stable expression over
 * no column that compile_expr would fold (a clock anywhere, anything else
 * only as an operand of a qual's root operator, b->depth being that
 * operator's).  Parameters and folded expressions are evaluated when the
 * program is built at executor start; at plan time (no econtext) only the
 * shape matters and the value is a NULL of the expression's type.
 * Relabelings are stripped.  NULL for anything else.
 */
Const *
warp_scan_value(WarpBuilder *b, Expr *e)
{
	Const	   *c;

	while (IsA(e, RelabelType))
		e = ((RelabelType *) e)->arg;
	if (IsA(e, Const))
		return (Const *) e;
	if (IsA(e, Param) && ((Param *) e)->paramkind == PARAM_EXEC)
	{
		/* a subquery's value: only as a qual's operand (see compile_expr) */
		if (!(b->qual_root && b->depth == 1))
			return NULL;
	}
	else if (!(IsA(e, Param) && ((Param *) e)->paramkind == PARAM_EXTERN) &&
			 !(foldable(e) && (cannot_fail(e) || (b->qual_root && b->depth == 1))))
		return NULL;
	c = makeNullConst(exprType((Node *) e), exprTypmod((Node *) e), exprCollation((Node *) e));
	if (b->econtext)
	{
		ExprState  *es = ExecInitExpr(e, NULL);

		c->constvalue = ExecEvalExprSwitchContext(es, b->econtext, &c->constisnull);
		if (!c->constisnull && !c->constbyval && c->constlen == -1)
			c->constvalue = PointerGetDatum(PG_DETOAST_DATUM(c->constvalue));
	}
	return c;
}

static int	compile_expr(WarpBuilder *b, Expr *expr);

/*
 * Stable expressions are folded into constants when the program is built
 * at executor start: a clock (CURRENT_DATE, now()) anywhere, since it
 * cannot fail; any other one only as an operand of a qual's operator
 * (WHERE ts >= now() - interval '7 days'), where PostgreSQL itself, with an
 * index scan, evaluates it once at scan start as a runtime key.  Inside a
 * CASE branch or an aggregate argument it would be evaluated where
 * PostgreSQL might not evaluate it, so there it is not offloaded.
 */
int
warp_compile_expr(WarpBuilder *b, Expr *expr)
{
	int			n;

	b->depth++;
	n = compile_expr(b, expr);
	b->depth--;
	return n;
}

int
warp_compile_qual(WarpBuilder *b, Expr *expr)
{
	int			n;
	int			depth = b->depth;

	b->qual_root = true;
	b->depth = 0;
	n = warp_compile_expr(b, expr);
	b->qual_root = false;
	b->depth = depth;
	return n;
}

int
warp_compile_group_key(WarpBuilder *b, Expr *expr)
{
	int			n,
				depth = b->depth;
	Expr	   *e = expr;

	while (IsA(e, RelabelType))
		e = ((RelabelType *) e)->arg;
	if (IsA(e, Var) && warp_is_text_type(((Var *) e)->vartype))
		return warp_compile_text_key(b, (Var *) e, exprCollation((Node *) expr));
	if (IsA(e, Var) && ((Var *) e)->vartype == NUMERICOID)
	{
		int			scale;

		/*
		 * numeric(p <= 18, s): its unscaled int8 (every value has scale s,
		 * so equal numerics have equal unscaled values)
		 */
		return warp_compile_decimal_arg(b, e, &scale);
	}
	b->numeric_root = true;
	b->depth = 0;
	n = warp_compile_expr(b, expr);
	b->numeric_root = false;
	b->depth = depth;
	if (n >= 0 && b->nodes[n].type == WT_NUMERIC)
		return warp_refuse(b, "numeric expression as a group key");
	return n;
}

/* display scale of a group key that is extract() (numeric), else -1 */
int
warp_group_key_numeric_scale(Expr *expr)
{
	FuncExpr   *fe = (FuncExpr *) expr;
	int			field;

	while (IsA(expr, RelabelType))
		expr = ((RelabelType *) expr)->arg;
	if (IsA(expr, Var))
	{
		int			p,
					s;

		/* a numeric(p <= 18, s) column: its unscaled values */
		if (!pgwarp_numeric_typmod(((Var *) expr)->vartypmod, &p, &s))
			return -1;
		return s;
	}
	fe = (FuncExpr *) expr;
	if (!IsA(expr, FuncExpr) ||
		!warp_is_extract_func(fe->funcid) ||
		!IsA(linitial(fe->args), Const) ||
		(field = warp_datetime_field((Const *) linitial(fe->args))) < 0)
		return -1;
	return warp_dt_extract_scale((WarpDtField) field, fe->funcid != F_EXTRACT_TEXT_DATE);
}

/* an external parameter, or a subquery's value as a qual's operand */
static int
compile_param(WarpBuilder *b, Expr *expr)
{
	WarpType	t;
	Param	   *p = (Param *) expr;
	Datum		v = (Datum) 0;
	bool		isnull = true;

	/*
	 * a subquery's value (an initplan's output, an outer
	 * query's column): evaluating it runs the subquery, which
	 * PostgreSQL does when a row first needs it; taken at
	 * executor start only as an operand of a qual's operator,
	 * where PostgreSQL's index scans take it at scan start too
	 * (the node's custom_exprs name it, so a new value rescans)
	 */
	if (p->paramkind == PARAM_EXEC && !(b->fold_operands && b->depth == 2))
		return warp_refuse(b, "a subquery's value outside a WHERE comparison");
	if (p->paramkind != PARAM_EXTERN && p->paramkind != PARAM_EXEC)
		return warp_refuse(b, "parameter set by a subquery");
	if (!warp_type_of(p->paramtype, &t))
		return warp_refuse(b, "parameter of a type the engine does not compute");
	if (b->econtext)
	{
		ExprState  *es = ExecInitExpr(expr, NULL);

		v = ExecEvalExprSwitchContext(es, b->econtext, &isnull);
	}
	return warp_const_node(b, p->paramtype, v, isnull);
}

/* an operator: numeric and text comparisons, LIKE, then the rest */
static int
compile_opexpr(WarpBuilder *b, Expr *expr)
{
	OpExpr	   *op = (OpExpr *) expr;
	bool		saved = b->fold_operands;
	int			n;

	if (op->opretset)
		return warp_refuse(b, "set-returning operator");
	if ((n = warp_compile_numeric_cmp(b, op)) != -2)
		return n;
	if ((n = warp_compile_text_cmp(b, op)) != -2)
		return n;
	if ((n = warp_compile_text_like(b, op)) != -2)
		return n;
	b->fold_operands = b->qual_root && b->depth == 1;
	n = compile_operator(b, op->opno, op->opresulttype, op->args, false);
	b->fold_operands = saved;
	return n;
}

/* NULLIF(x, y) of two values of one engine type */
static int
compile_nullif(WarpBuilder *b, Expr *expr)
{
	WarpType	t;
	NullIfExpr *ni = (NullIfExpr *) expr;
	int			eq;
	int			n;

	if (!warp_type_of(ni->opresulttype, &t) ||
		exprType(linitial(ni->args)) != exprType(lsecond(ni->args)))
		return warp_refuse(b, "NULLIF across types");
	/* check that "=" is one the engine computes */
	eq = compile_operator(b, ni->opno, BOOLOID, ni->args, false);
	if (eq < 0)
		return -1;
	n = warp_add_node(b, WN_NULLIF, t);
	b->nodes[n].a = b->nodes[eq].a;
	b->nodes[n].b = b->nodes[eq].b;
	return n;
}

/* AND, OR, NOT */
static int
compile_bool(WarpBuilder *b, Expr *expr)
{
	BoolExpr   *be = (BoolExpr *) expr;

	if (be->boolop == NOT_EXPR)
	{
		int			a = warp_compile_expr(b, linitial(be->args));
		int			n;

		if (a < 0)
			return -1;
		n = warp_add_node(b, WN_NOT, WT_BOOL);
		b->nodes[n].a = a;
		return n;
	}
	return compile_list(b, be->boolop == AND_EXPR ? WN_AND : WN_OR,
						WT_BOOL, be->args, 0);
}

/* IS [NOT] NULL (text columns included) */
static int
compile_null_test(WarpBuilder *b, Expr *expr)
{
	NullTest   *nt = (NullTest *) expr;
	int			a,
				n;

	if (nt->argisrow)
		return warp_refuse(b, "row IS NULL");
	a = warp_compile_text_null_arg(b, nt->arg);
	if (a == -2)
		a = warp_compile_expr(b, nt->arg);
	if (a < 0)
		return -1;
	n = warp_add_node(b, nt->nulltesttype == IS_NULL ? WN_IS_NULL : WN_IS_NOT_NULL, WT_BOOL);
	b->nodes[n].a = a;
	return n;
}

/* CASE [x] WHEN ... THEN ... [ELSE ...] END */
static int
compile_case(WarpBuilder *b, Expr *expr)
{
	WarpType	t;
	CaseExpr   *ce = (CaseExpr *) expr;
	List	   *args = NIL;
	ListCell   *lc;

	if (!warp_type_of(ce->casetype, &t))
		return warp_refuse(b, "CASE of a type the engine does not compute");
	foreach(lc, ce->args)
	{
		CaseWhen   *w = lfirst_node(CaseWhen, lc);

		args = lappend(args, warp_case_when_expr(ce->arg, w->expr));
		args = lappend(args, w->result);
	}
	if (ce->defresult)
		args = lappend(args, ce->defresult);
	return compile_list(b, WN_CASE, t, args,
						ce->defresult ? WARP_CASE_HAS_ELSE : 0);
}

static int
compile_expr(WarpBuilder *b, Expr *expr)
{
	WarpType	t;

	check_stack_depth();
	if (expr == NULL)
		return warp_refuse(b, "missing expression");
	if (foldable(expr) && warp_type_of(exprType((Node *) expr), &t) &&
		(cannot_fail(expr) || (b->fold_operands && b->depth == 2)))
	{
		Datum		v = (Datum) 0;
		bool		isnull = true;

		/* at plan time (no econtext) only its shape matters */
		if (b->econtext)
		{
			ExprState  *es = ExecInitExpr(expr, NULL);

			v = ExecEvalExprSwitchContext(es, b->econtext, &isnull);
		}
		return warp_const_node(b, exprType((Node *) expr), v, isnull);
	}
	/* numeric expressions; extract() at a group key's root stays int8 */
	if (exprType((Node *) expr) == NUMERICOID &&
		!(IsA(expr, FuncExpr) && b->numeric_root && b->depth == 1 &&
		  warp_is_extract_func(((FuncExpr *) expr)->funcid)))
	{
		int			d;

		return warp_compile_numeric(b, expr, &d);
	}
	switch (nodeTag(expr))
	{
		case T_Var:
			{
				Var		   *v = (Var *) expr;
				int			n;

				if (v->varno != b->relid || v->varlevelsup != 0 || v->varattno <= 0)
					return warp_refuse(b, "column of another relation or a system column");
				if (!warp_type_of(v->vartype, &t))
					return warp_refuse(b, "column of a type the engine does not compute");
				n = warp_add_node(b, WN_COL, t);
				b->nodes[n].a = warp_column_index(b, v->varattno, t);
				return n;
			}
		case T_Const:
			{
				Const	   *c = (Const *) expr;

				return warp_const_node(b, c->consttype, c->constvalue, c->constisnull);
			}
		case T_Param:
			return compile_param(b, expr);
		case T_RelabelType:
			{
				RelabelType *r = (RelabelType *) expr;

				if (!warp_type_of(r->resulttype, &t) ||
					!warp_type_of(exprType((Node *) r->arg), &t))
					return warp_refuse(b, "relabeling the engine does not compute");
				if (exprType((Node *) r->arg) != r->resulttype)
					return warp_refuse(b, "relabeling between types");
				return warp_compile_expr(b, r->arg);
			}
		case T_OpExpr:
			return compile_opexpr(b, expr);
		case T_DistinctExpr:
			{
				DistinctExpr *op = (DistinctExpr *) expr;

				return compile_operator(b, op->opno, BOOLOID, op->args, true);
			}
		case T_NullIfExpr:
			return compile_nullif(b, expr);
		case T_ScalarArrayOpExpr:
			return compile_saop(b, (ScalarArrayOpExpr *) expr);
		case T_BoolExpr:
			return compile_bool(b, expr);
		case T_NullTest:
			return compile_null_test(b, expr);
		case T_FuncExpr:
			return compile_func(b, (FuncExpr *) expr);
		case T_CoalesceExpr:
			{
				CoalesceExpr *ce = (CoalesceExpr *) expr;

				if (!warp_type_of(ce->coalescetype, &t))
					return warp_refuse(b, "COALESCE of a type the engine does not compute");
				return compile_list(b, WN_COALESCE, t, ce->args, 0);
			}
		case T_CaseExpr:
			return compile_case(b, expr);
		default:
			break;
	}
	return warp_refuse(b, "expression the engine does not compute");
}
