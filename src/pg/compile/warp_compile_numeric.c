/*
 * warp_compile_numeric.c — numeric expressions compiled into program nodes:
 * numeric(p, s) columns as their unscaled integers, numeric arithmetic in
 * 128-bit fixed point with PostgreSQL's display scales, numeric
 * CASE/COALESCE/NULLIF, aggregate arguments, and comparisons of a numeric
 * column with a value of the whole scan decided on integers.  Other
 * expressions go through the core (warp_compile.c), extract() through
 * warp_compile_datetime.c.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"

#include "pg_warp.h"
#include "compile/warp_compile_internal.h"

/*
 * The program column of a numeric(p, s) column v of the fact table, or -1
 * with why_not.  p <= 18: WarpColumnSpec.decimal, its unscaled int8 values;
 * bounded: numeric expressions rest on the declared precision, so values
 * beyond it are then checked at load.  19 <= p <= 38 (only when bounded: a
 * numeric expression's operand): WARP_DECIMAL_WIDE, its unscaled int128
 * values, always checked.  *p, *s: the declared typmod.
 */
static int
decimal_column(WarpBuilder *b, Var *v, bool bounded, int *p, int *s)
{
	int			c;

	if (v->varno != b->relid || v->varlevelsup != 0 || v->varattno <= 0)
		return warp_refuse(b, "column of another relation or a system column");
	if (!pgwarp_numeric_typmod(v->vartypmod, p, s))
		return warp_refuse(b, "numeric column without a declared precision and scale");
	if (*p > 38 || *s < 0 || *s > *p)
		return warp_refuse(b, "numeric column of more than 38 digits or a negative scale");
	if (*p > 18 && !bounded)
		return warp_refuse(b, "numeric column of more than 18 digits as a group or join key");
	c = warp_column_index(b, v->varattno, *p > 18 ? WT_NUMERIC : WT_INT8);
	b->cols[c].decimal = *p > 18 ? WARP_DECIMAL_WIDE : 1;
	b->cols[c].scale = (uint8) *s;
	/* a heap table's numeric column arrives as a Decimal128 array, as an
	 * Arrow file's does (warp_exec_heap.c), never as engine values */
	b->cols[c].native = 0;
	if (bounded)
		b->cols[c].precision = (uint8) *p;
	return c;
}

/* whether v is a numeric column of more than 18 declared digits */
static bool
wide_decimal(Expr *v)
{
	int			p,
				s;

	return IsA(v, Var) && ((Var *) v)->vartype == NUMERICOID &&
		pgwarp_numeric_typmod(((Var *) v)->vartypmod, &p, &s) && p > 18;
}

/*
 * An aggregate's argument (or a group key) that is a numeric(p <= 18, s)
 * column of the fact table: the column's values as their unscaled int8
 * (value * 10^s), which sum/avg (as exact 128-bit sums), min, max and count
 * read.  Expressions go through warp_compile_numeric.  Node index, or -1 with
 * why_not; *scale = s.
 */
int
warp_compile_decimal_arg(WarpBuilder *b, Expr *expr, int *scale)
{
	int			p,
				c,
				n;

	if (!IsA(expr, Var) || ((Var *) expr)->vartype != NUMERICOID)
		return warp_refuse(b, "numeric expression (only a numeric column is read)");
	if ((c = decimal_column(b, (Var *) expr, false, &p, scale)) < 0)
		return -1;
	n = warp_add_node(b, WN_COL, WT_INT8);
	b->nodes[n].a = c;
	return n;
}

/* a numeric constant node's value v at display scale sc; wide: beyond
 * int64, so the high half too (WARP_NODE_WIDE) */
static void
set_numeric_const(WarpNode *nd, int128 v, int sc, bool wide)
{
	nd->ival = (int64) v;
	if (wide)
	{
		nd->ival = (int64) (uint64) v;
		nd->ival_hi = (int64) (v >> 64);
		nd->flags |= WARP_NODE_WIDE;
	}
	nd->scale = (uint8) sc;
}

static int	compile_numeric_choice(WarpBuilder *b, Expr *expr, int *intd);

/* a numeric(p <= 38, s) column: its unscaled values at scale s */
static int
compile_numeric_column(WarpBuilder *b, Expr *expr, int *intd)
{
	int			p,
				sc,
				c,
				n;

	if ((c = decimal_column(b, (Var *) expr, true, &p, &sc)) < 0)
		return -1;
	n = warp_add_node(b, WN_COL, WT_NUMERIC);
	b->nodes[n].a = c;
	b->nodes[n].scale = (uint8) sc;
	*intd = p - sc;
	return n;
}

/* a numeric constant: its unscaled value at its own display scale */
static int
compile_numeric_const(WarpBuilder *b, Expr *expr, int *intd)
{
	Const	   *c = (Const *) expr;
	int			n;
	char	   *str,
			   *q;
	int128		v = 0;
	int			digits = 0,
				ints = 0,
				sc = 0;
	bool		neg = false,
				frac = false;

	n = warp_add_node(b, WN_CONST, WT_NUMERIC);
	*intd = 0;
	if (c->constisnull)
	{
		b->nodes[n].flags |= WARP_NODE_NULL;
		return n;
	}
	if (numeric_is_nan(DatumGetNumeric(c->constvalue)) ||
		numeric_is_inf(DatumGetNumeric(c->constvalue)))
		return warp_refuse(b, "NaN or infinite numeric constant");
	/* numeric_out writes exactly the display scale's digits */
	str = DatumGetCString(DirectFunctionCall1(numeric_out, c->constvalue));
	for (q = str; *q; q++)
	{
		if (*q == '-')
			neg = true;
		else if (*q == '.')
			frac = true;
		else if (*q >= '0' && *q <= '9')
		{
			if (v == 0 && *q == '0' && !frac)
				continue;	/* leading zeros */
			if (++digits > 38)
				return warp_refuse(b, "numeric constant of more than 38 digits");
			v = v * 10 + (*q - '0');
			if (frac)
				sc++;
			else
				ints++;
		}
		else
			return warp_refuse(b, "numeric constant the engine cannot read");
	}
	if (sc > 38)
		return warp_refuse(b, "numeric constant of more than 38 decimals");
	if (neg)
		v = -v;
	set_numeric_const(&b->nodes[n], v, sc, digits > 18);
	*intd = ints;
	return n;
}

/* extract() or an integer cast to numeric */
static int
compile_numeric_func(WarpBuilder *b, Expr *expr, int *intd)
{
	FuncExpr   *fe = (FuncExpr *) expr;
	int			a,
				d,
				n;

	if (warp_is_extract_func(fe->funcid))
	{
		/* every field fits int64 at its scale: 19 digits */
		if ((n = warp_compile_datetime(b, fe)) < 0)
			return -1;
		if (b->nodes[n].type != WT_NUMERIC)
			return warp_refuse(b, "extract() as a numeric operand of a group key");
		*intd = 19 - b->nodes[n].scale;
		return n;
	}
	switch (fe->funcid)
	{
		case F_NUMERIC_INT2: d = 5; break;
		case F_NUMERIC_INT4: d = 10; break;
		case F_NUMERIC_INT8: d = 19; break;
		default:
			return warp_refuse(b, "numeric function other than a cast from an integer or extract()");
	}
	if ((a = warp_compile_expr(b, linitial(fe->args))) < 0)
		return -1;
	n = warp_add_node(b, WN_CAST, WT_NUMERIC);
	b->nodes[n].a = a;
	*intd = d;
	return n;
}

/* unary + and -, and + - * of two numeric expressions */
static int
compile_numeric_op(WarpBuilder *b, Expr *expr, int *intd)
{
	OpExpr	   *op = (OpExpr *) expr;
	Oid			fn = OidIsValid(op->opfuncid) ? op->opfuncid : get_opcode(op->opno);
	int			a,
				bb,
				da,
				db,
				sa,
				sb,
				sub,
				sc,
				d,
				n;

	if (fn == F_NUMERIC_UPLUS && list_length(op->args) == 1)
		return warp_compile_numeric(b, linitial(op->args), intd);
	if (fn == F_NUMERIC_UMINUS && list_length(op->args) == 1)
	{
		if ((a = warp_compile_numeric(b, linitial(op->args), intd)) < 0)
			return -1;
		if (bms_is_member(a, b->dyn_scale))
			return warp_refuse(b, "numeric CASE/COALESCE of values of different scales as an operand");
		n = warp_add_node(b, WN_NEG, WT_NUMERIC);
		b->nodes[n].a = a;
		b->nodes[n].scale = b->nodes[a].scale;
		return n;
	}
	switch (fn)
	{
		case F_NUMERIC_ADD: sub = WARP_ARITH_ADD; break;
		case F_NUMERIC_SUB: sub = WARP_ARITH_SUB; break;
		case F_NUMERIC_MUL: sub = WARP_ARITH_MUL; break;
		default:
			return warp_refuse(b, "numeric operator other than + - * (division is never offloaded)");
	}
	if (list_length(op->args) != 2 ||
		(a = warp_compile_numeric(b, linitial(op->args), &da)) < 0 ||
		(bb = warp_compile_numeric(b, lsecond(op->args), &db)) < 0)
		return -1;
	if (bms_is_member(a, b->dyn_scale) || bms_is_member(bb, b->dyn_scale))
		return warp_refuse(b, "numeric CASE/COALESCE of values of different scales as an operand");
	sa = b->nodes[a].scale;
	sb = b->nodes[bb].scale;
	if (sub == WARP_ARITH_MUL)
	{
		sc = sa + sb;
		d = da + db;
	}
	else
	{
		sc = Max(sa, sb);
		d = Max(da, db) + 1;
	}
	if (d + sc > 38)
		return warp_refuse(b, "numeric expression that could exceed 38 digits (from the columns' declared precisions)");
	n = warp_add_node(b, WN_ARITH, WT_NUMERIC);
	b->nodes[n].sub = (uint8) sub;
	b->nodes[n].a = a;
	b->nodes[n].b = bb;
	b->nodes[n].scale = (uint8) sc;
	*intd = d;
	return n;
}

/*
 * NULLIF(x, y): CASE WHEN x = y THEN NULL ELSE x END, with
 * numeric_eq's scale-insensitive comparison; x keeps its
 * display scale (a NULL has none)
 */
static int
compile_numeric_nullif(WarpBuilder *b, Expr *expr, int *intd)
{
	NullIfExpr *ni = (NullIfExpr *) expr;
	int			x,
				y,
				cmp,
				nul,
				n,
				d;

	if (list_length(ni->args) != 2 ||
		exprType(lsecond(ni->args)) != NUMERICOID ||
		get_opcode(ni->opno) != F_NUMERIC_EQ)
		return warp_refuse(b, "NULLIF of numeric and another type");
	if ((x = warp_compile_numeric(b, linitial(ni->args), intd)) < 0 ||
		(y = warp_compile_numeric(b, lsecond(ni->args), &d)) < 0)
		return -1;
	cmp = warp_add_node(b, WN_CMP, WT_BOOL);
	b->nodes[cmp].sub = WARP_CMP_EQ;
	b->nodes[cmp].a = x;
	b->nodes[cmp].b = y;
	nul = warp_add_node(b, WN_CONST, WT_NUMERIC);
	b->nodes[nul].flags |= WARP_NODE_NULL;
	b->nodes[nul].scale = b->nodes[x].scale;
	n = warp_add_node(b, WN_CASE, WT_NUMERIC);
	b->nodes[n].flags = WARP_CASE_HAS_ELSE;
	b->nodes[n].scale = b->nodes[x].scale;
	b->nodes[n].nargs = 3;
	b->nodes[n].args_off = b->nargs;
	warp_add_arg(b, cmp);
	warp_add_arg(b, nul);
	warp_add_arg(b, x);
	if (bms_is_member(x, b->dyn_scale))
		b->dyn_scale = bms_add_member(b->dyn_scale, n);
	return n;
}

/*
 * A numeric expression of the fact table in 128-bit fixed point (see
 * warp_program.h): numeric(p <= 38, s) columns, numeric constants of at
 * most 38 significant digits, integers cast to numeric, + - * and unary
 * minus.  Each node's display scale is PostgreSQL's (columns: their
 * declared scale, as every stored value has it; constants: their own
 * display scale; + and -: the larger; *: the sum), and *intd bounds its
 * integer digits (|value| < 10^intd), so a node whose intd + scale could
 * pass 38 digits is refused here and the engine's arithmetic can never
 * overflow where PostgreSQL's exact numeric would not.  Returns the node,
 * or -1 with why_not.
 */
int
warp_compile_numeric(WarpBuilder *b, Expr *expr, int *intd)
{
	check_stack_depth();
	while (IsA(expr, RelabelType))
		expr = ((RelabelType *) expr)->arg;
	if (exprType((Node *) expr) != NUMERICOID)
		return warp_refuse(b, "numeric expression of another type");
	switch (nodeTag(expr))
	{
		case T_Var:
			return compile_numeric_column(b, expr, intd);
		case T_Const:
			return compile_numeric_const(b, expr, intd);
		case T_FuncExpr:
			return compile_numeric_func(b, expr, intd);
		case T_OpExpr:
			return compile_numeric_op(b, expr, intd);
		case T_CaseExpr:
		case T_CoalesceExpr:
			return compile_numeric_choice(b, expr, intd);
		case T_NullIfExpr:
			return compile_numeric_nullif(b, expr, intd);
		default:
			return warp_refuse(b, "numeric expression the engine does not compute");
	}
}

/* a numeric constant 1 at display scale k (10^k unscaled): x * it rescales x */
static int
numeric_one(WarpBuilder *b, int k)
{
	int128		v = 1;
	int			n,
				i;

	for (i = 0; i < k; i++)
		v *= 10;
	n = warp_add_node(b, WN_CONST, WT_NUMERIC);
	set_numeric_const(&b->nodes[n], v, k, k > 18);
	return n;
}

/*
 * CASE WHEN c THEN x ... [ELSE y] END and COALESCE(x, y, ...) over numeric.
 * Every value is computed at the largest of their display scales (a value
 * of a smaller one multiplied by a numeric 1 of the difference's scale, as
 * exact as PostgreSQL's), so comparisons and sums are right.  But
 * PostgreSQL's result keeps the display scale of the value the row took:
 * CASE ... THEN price ELSE 0 END is 12.50 or 0, and sum() over such values
 * has the largest scale among the rows it summed.  Such a node is put in
 * b->dyn_scale: it may be compared or summed (the aggregate's scale then
 * comes from warp_compile_scale_of, per group), never an operand of
 * arithmetic or the argument of min/max, whose displayed result would
 * depend on which of two equal values came last.  A NULL constant value
 * has no scale of its own.
 */
static int
compile_numeric_choice(WarpBuilder *b, Expr *expr, int *intd)
{
	bool		is_case = IsA(expr, CaseExpr);
	List	   *items = NIL;	/* the arguments in order; values marked */
	List	   *isval = NIL;
	bool		has_else = false;
	bool		dyn = false;
	Expr	   *arg = NULL;		/* CASE x WHEN ...: x */
	int		   *kid;
	int		   *kd;
	int			nk,
				k,
				maxs = -1,
				maxd = 0,
				n;
	ListCell   *lc,
			   *lv;

	if (is_case)
	{
		CaseExpr   *ce = (CaseExpr *) expr;

		foreach(lc, ce->args)
		{
			CaseWhen   *w = lfirst_node(CaseWhen, lc);

			items = lappend(lappend(items, w->expr), w->result);
			isval = lappend_int(lappend_int(isval, 0), 1);
		}
		arg = ce->arg;
		if (ce->defresult)
		{
			items = lappend(items, ce->defresult);
			isval = lappend_int(isval, 1);
			has_else = true;
		}
	}
	else
	{
		foreach(lc, ((CoalesceExpr *) expr)->args)
		{
			items = lappend(items, lfirst(lc));
			isval = lappend_int(isval, 1);
		}
	}
	nk = list_length(items);
	kid = palloc(sizeof(int) * nk);
	kd = palloc0(sizeof(int) * nk);
	k = 0;
	forboth(lc, items, lv, isval)
	{
		if (!lfirst_int(lv))
			kid[k] = warp_compile_expr(b, warp_case_when_expr(arg, lfirst(lc)));
		else
		{
			kid[k] = warp_compile_numeric(b, lfirst(lc), &kd[k]);
			if (kid[k] >= 0 && !(b->nodes[kid[k]].op == WN_CONST &&
								 (b->nodes[kid[k]].flags & WARP_NODE_NULL)))
			{
				if (maxs >= 0 && b->nodes[kid[k]].scale != maxs)
					dyn = true;
				maxs = Max(maxs, b->nodes[kid[k]].scale);
				if (bms_is_member(kid[k], b->dyn_scale))
					dyn = true;
			}
		}
		if (kid[k] < 0)
			return -1;
		k++;
	}
	if (maxs < 0)
		maxs = 0;				/* every value a NULL constant */
	k = 0;
	forboth(lc, items, lv, isval)
	{
		if (lfirst_int(lv))
		{
			WarpNode   *nd = &b->nodes[kid[k]];

			if (nd->op == WN_CONST && (nd->flags & WARP_NODE_NULL))
				nd->scale = (uint8) maxs;	/* no value, no scale */
			else if (nd->scale < maxs)
			{
				int			one = numeric_one(b, maxs - nd->scale);
				int			m = warp_add_node(b, WN_ARITH, WT_NUMERIC);

				b->nodes[m].sub = WARP_ARITH_MUL;
				b->nodes[m].a = kid[k];
				b->nodes[m].b = one;
				b->nodes[m].scale = (uint8) maxs;
				b->rescaled = bms_add_member(b->rescaled, m);
				kid[k] = m;
				kd[k] += 1;
			}
			maxd = Max(maxd, kd[k]);
		}
		k++;
	}
	if (maxd + maxs > 38)
		return warp_refuse(b, "numeric CASE/COALESCE that could exceed 38 digits");
	n = warp_add_node(b, is_case ? WN_CASE : WN_COALESCE, WT_NUMERIC);
	b->nodes[n].flags = has_else ? WARP_CASE_HAS_ELSE : 0;
	b->nodes[n].scale = (uint8) maxs;
	b->nodes[n].nargs = nk;
	b->nodes[n].args_off = b->nargs;
	for (k = 0; k < nk; k++)
		warp_add_arg(b, kid[k]);
	if (dyn)
		b->dyn_scale = bms_add_member(b->dyn_scale, n);
	*intd = maxd;
	return n;
}

bool
warp_node_dynamic_scale(WarpBuilder *b, int n)
{
	return n >= 0 && bms_is_member(n, b->dyn_scale);
}

/*
 * An int4 node giving, per row, the display scale PostgreSQL's value of
 * numeric node n has (NULL where n is NULL): a constant behind IS NOT NULL
 * for a node of one scale; for a CASE/COALESCE in b->dyn_scale the same
 * choice over the same conditions, its values replaced by their scales
 * (a rescaled value by its original's).  The conditions are the same
 * nodes, so nothing is evaluated that the value's CASE did not.
 */
int
warp_compile_scale_of(WarpBuilder *b, int n)
{
	WarpNode	nd = b->nodes[n];	/* a copy: warp_add_node may move them */
	int			m;

	if (bms_is_member(n, b->rescaled))
		return warp_compile_scale_of(b, nd.a);
	if (bms_is_member(n, b->dyn_scale))
	{
		int		   *kid = palloc(sizeof(int) * nd.nargs);
		int			j;

		for (j = 0; j < nd.nargs; j++)
		{
			int			a = b->args[nd.args_off + j];
			bool		cond = nd.op == WN_CASE && (j % 2) == 0 &&
				!((nd.flags & WARP_CASE_HAS_ELSE) && j == nd.nargs - 1);

			kid[j] = cond ? a : warp_compile_scale_of(b, a);
		}
		m = warp_add_node(b, (WarpOp) nd.op, WT_INT4);
		b->nodes[m].flags = nd.flags;
		b->nodes[m].nargs = nd.nargs;
		b->nodes[m].args_off = b->nargs;
		for (j = 0; j < nd.nargs; j++)
			warp_add_arg(b, kid[j]);
		return m;
	}
	else
	{
		int			t = warp_add_node(b, WN_IS_NOT_NULL, WT_BOOL);
		int			c;

		b->nodes[t].a = n;
		c = warp_add_node(b, WN_CONST, WT_INT4);
		b->nodes[c].ival = nd.scale;
		m = warp_add_node(b, WN_CASE, WT_INT4);
		b->nodes[m].nargs = 2;
		b->nodes[m].args_off = b->nargs;
		warp_add_arg(b, t);
		warp_add_arg(b, c);
		return m;
	}
}

/*
 * A numeric aggregate argument that is an expression, not a plain column
 * (warp_compile_decimal_arg): a WT_NUMERIC node; *scale its display scale.
 */
int
warp_compile_numeric_arg(WarpBuilder *b, Expr *expr, int *scale)
{
	int			d,
				n;

	if ((n = warp_compile_numeric(b, expr, &d)) < 0)
		return -1;
	*scale = b->nodes[n].scale;
	return n;
}

/*
 * The argument of sum/avg/min/max/count over numeric: a numeric(p <= 18, s)
 * column as its unscaled int8 (warp_compile_decimal_arg), anything else --
 * a wider column included -- as a numeric expression.
 */
int
warp_compile_numeric_agg_arg(WarpBuilder *b, Expr *expr, int *scale)
{
	if (IsA(expr, Var) && !wide_decimal(expr))
		return warp_compile_decimal_arg(b, expr, scale);
	return warp_compile_numeric_arg(b, expr, scale);
}

/* a comparison of two numeric expressions (numeric_cmp's semantics) */
static int
compile_numeric_cmp_general(WarpBuilder *b, OpExpr *op, int sub)
{
	int			a,
				bb,
				d,
				n;

	if ((a = warp_compile_numeric(b, linitial(op->args), &d)) < 0 ||
		(bb = warp_compile_numeric(b, lsecond(op->args), &d)) < 0)
		return -1;
	n = warp_add_node(b, WN_CMP, WT_BOOL);
	b->nodes[n].sub = (uint8) sub;
	b->nodes[n].a = a;
	b->nodes[n].b = bb;
	return n;
}

/*
 * The column side of a numeric comparison decided on integers: a
 * numeric(p <= 18, s) column of the fact table (its unscaled integer,
 * scale s) or an int2/int4 column cast to numeric (scale 0).  Either way
 * every value X has |X| < 10^18.  NULL for anything else.
 */
static Expr *
numeric_cmp_column(Expr *e, bool *is_int)
{
	while (IsA(e, RelabelType))
		e = ((RelabelType *) e)->arg;
	*is_int = false;
	if (IsA(e, Var) && ((Var *) e)->vartype == NUMERICOID && !wide_decimal(e))
		return e;
	if (IsA(e, FuncExpr) && list_length(((FuncExpr *) e)->args) == 1 &&
		(((FuncExpr *) e)->funcid == F_NUMERIC_INT4 || ((FuncExpr *) e)->funcid == F_NUMERIC_INT2) &&
		IsA(linitial(((FuncExpr *) e)->args), Var))
	{
		*is_int = true;
		return linitial(((FuncExpr *) e)->args);
	}
	return NULL;
}

static bool
numeric_positive(Numeric num)
{
	return DatumGetInt32(DirectFunctionCall2(numeric_cmp, NumericGetDatum(num),
											 NumericGetDatum(int64_to_numeric(0)))) > 0;
}

/* X op' X: true (EQ) or false (NE) for every non-NULL X, NULL for NULL */
static int
decided_cmp(WarpBuilder *b, int x, bool holds)
{
	int			n = warp_add_node(b, WN_CMP, WT_BOOL);

	b->nodes[n].sub = holds ? WARP_CMP_EQ : WARP_CMP_NE;
	b->nodes[n].a = x;
	b->nodes[n].b = x;
	return n;
}

/*
 * A comparison between a numeric column side (numeric_cmp_column: X, of
 * scale s, |X| < 10^18) and a numeric value of the whole scan (a constant,
 * a parameter, warp_scan_value), either way round, decided on X: with S = value
 * * 10^s, X op S is X op S itself when S is an integer, and otherwise
 * (floor F < S < F + 1) X < S is X <= F, X > S is X > F, X = S is false and
 * X <> S is true (for a non-NULL X: written X <> X and X = X, so that a
 * NULL X stays NULL).  A value beyond every X (NaN, which numeric orders
 * above everything, +-Infinity, |F| >= 10^18) decides the comparison
 * by its sign alone.  So every value a parameter may take at executor
 * start compiles.  Returns -2 when the expression is not of this shape
 * (the caller compiles it the usual way), -1 when refused.
 */
int
warp_compile_numeric_cmp(WarpBuilder *b, OpExpr *op)
{
	Const	   *c;
	Expr	   *col;
	int			sub,
				scale,
				x,
				k,
				n;
	bool		swapped,
				is_int;
	Numeric		num,
				scaled,
				fl;
	bool		exact;
	int64		f;

	/* IN lists arrive as OpExprs made by compile_saop, without opfuncid */
	switch (OidIsValid(op->opfuncid) ? op->opfuncid : get_opcode(op->opno))
	{
		case F_NUMERIC_EQ: sub = WARP_CMP_EQ; break;
		case F_NUMERIC_NE: sub = WARP_CMP_NE; break;
		case F_NUMERIC_LT: sub = WARP_CMP_LT; break;
		case F_NUMERIC_LE: sub = WARP_CMP_LE; break;
		case F_NUMERIC_GT: sub = WARP_CMP_GT; break;
		case F_NUMERIC_GE: sub = WARP_CMP_GE; break;
		default:
			return -2;
	}
	if (list_length(op->args) != 2)
		return -2;
	swapped = false;
	col = numeric_cmp_column(linitial(op->args), &is_int);
	if (col == NULL)
	{
		swapped = true;
		col = numeric_cmp_column(lsecond(op->args), &is_int);
	}
	c = col ? warp_scan_value(b, swapped ? linitial(op->args) : lsecond(op->args)) : NULL;
	if (c == NULL)
		return compile_numeric_cmp_general(b, op, sub);
	if (swapped)				/* c op X == X op' c */
		sub = sub == WARP_CMP_LT ? WARP_CMP_GT : sub == WARP_CMP_LE ? WARP_CMP_GE :
			sub == WARP_CMP_GT ? WARP_CMP_LT : sub == WARP_CMP_GE ? WARP_CMP_LE : sub;
	if (is_int)
	{
		scale = 0;
		if ((x = warp_compile_expr(b, col)) < 0)
			return -1;
	}
	else
	{
		int			prec;

		if (!pgwarp_numeric_typmod(((Var *) col)->vartypmod, &prec, &scale) || scale > 18)
			return warp_refuse(b, "numeric column without a declared precision and scale");
		if ((x = warp_compile_decimal_arg(b, col, &scale)) < 0)
			return -1;
	}
	if (c->constisnull)
	{
		k = warp_add_node(b, WN_CONST, WT_INT8);
		b->nodes[k].flags |= WARP_NODE_NULL;
		n = warp_add_node(b, WN_CMP, WT_BOOL);
		b->nodes[n].sub = (uint8) sub;
		b->nodes[n].a = x;
		b->nodes[n].b = k;
		return n;
	}
	num = DatumGetNumeric(c->constvalue);
	if (numeric_is_nan(num) || numeric_is_inf(num))
	{
		/* above every X (NaN, +Infinity) or below (-Infinity) */
		bool		above = numeric_is_nan(num) || numeric_positive(num);

		if (sub == WARP_CMP_EQ || sub == WARP_CMP_NE)
			return decided_cmp(b, x, sub == WARP_CMP_NE);
		return decided_cmp(b, x, above == (sub == WARP_CMP_LT || sub == WARP_CMP_LE));
	}
	{
		int64		p10 = 1;

		for (k = 0; k < scale; k++)
			p10 *= 10;			/* scale <= 18 */
		scaled = numeric_mul_opt_error(num, int64_to_numeric(p10), NULL);
	}
	fl = DatumGetNumeric(DirectFunctionCall1(numeric_floor, NumericGetDatum(scaled)));
	if (DatumGetInt32(DirectFunctionCall2(numeric_cmp, NumericGetDatum(DirectFunctionCall1(numeric_abs, NumericGetDatum(fl))),
										  NumericGetDatum(int64_to_numeric(INT64CONST(1000000000000000000))))) >= 0)
	{
		/* beyond every X: |X| < 10^18 <= |F| */
		bool		above = numeric_positive(fl);

		if (sub == WARP_CMP_EQ || sub == WARP_CMP_NE)
			return decided_cmp(b, x, sub == WARP_CMP_NE);
		return decided_cmp(b, x, above == (sub == WARP_CMP_LT || sub == WARP_CMP_LE));
	}
	exact = DatumGetInt32(DirectFunctionCall2(numeric_cmp, NumericGetDatum(scaled),
											  NumericGetDatum(fl))) == 0;
	f = DatumGetInt64(DirectFunctionCall1(numeric_int8, NumericGetDatum(fl)));
	if (!exact && (sub == WARP_CMP_EQ || sub == WARP_CMP_NE))
		return decided_cmp(b, x, sub == WARP_CMP_NE);	/* never equal */
	if (!exact)
		sub = (sub == WARP_CMP_LT || sub == WARP_CMP_LE) ? WARP_CMP_LE : WARP_CMP_GT;
	/* arguments precede their node */
	k = warp_add_node(b, WN_CONST, WT_INT8);
	b->nodes[k].ival = f;
	n = warp_add_node(b, WN_CMP, WT_BOOL);
	b->nodes[n].sub = (uint8) sub;
	b->nodes[n].a = x;
	b->nodes[n].b = k;
	return n;
}
