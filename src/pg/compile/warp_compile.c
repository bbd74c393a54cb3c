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
 */
#include "postgres.h"

#include <locale.h>
#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

#include "catalog/pg_collation.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "optimizer/optimizer.h"
#include "nodes/nodeFuncs.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/pg_locale.h"
#include "utils/syscache.h"
#include "utils/date.h"
#include "utils/timestamp.h"
#include "utils/numeric.h"
#include "utils/fmgrprotos.h"
#include "utils/datetime.h"
#include "parser/scansup.h"
#include "pgtime.h"

#include "pg_warp.h"
#include "warp.h"
#include "warp_ops_datetime.h"
#include "warp_ops_text.h"

bool
warp_type_of(Oid typid, WarpType *t)
{
	switch (typid)
	{
		case BOOLOID:
			*t = WT_BOOL;
			return true;
		case INT2OID:
			*t = WT_INT2;
			return true;
		case INT4OID:
			*t = WT_INT4;
			return true;
		case INT8OID:
			*t = WT_INT8;
			return true;
		case DATEOID:
			*t = WT_DATE;
			return true;
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			*t = WT_TIMESTAMP;
			return true;
		case FLOAT4OID:
			*t = WT_FLOAT4;
			return true;
		case FLOAT8OID:
			*t = WT_FLOAT8;
			return true;
	}
	return false;
}

/*
 * A Datum of an engine type as the engine holds it: integer-like types as
 * int64 in PostgreSQL's own domain (DateADT days, Timestamp microseconds),
 * floats as double.  Sets the one that applies.
 */
void
warp_datum_value(Datum d, Oid typid, int64 *ival, double *fval)
{
	switch (typid)
	{
		case BOOLOID:
			*ival = DatumGetBool(d);
			break;
		case INT2OID:
			*ival = DatumGetInt16(d);
			break;
		case INT4OID:
			*ival = DatumGetInt32(d);
			break;
		case DATEOID:
			*ival = DatumGetDateADT(d);
			break;
		case FLOAT4OID:
			*fval = DatumGetFloat4(d);
			break;
		case FLOAT8OID:
			*fval = DatumGetFloat8(d);
			break;
		default:				/* int8, timestamp, timestamptz */
			*ival = DatumGetInt64(d);
			break;
	}
}

static bool
is_int_type(WarpType t)
{
	return t == WT_INT2 || t == WT_INT4 || t == WT_INT8;
}

void
warp_builder_init(WarpBuilder *b, Index relid, ExprContext *econtext)
{
	memset(b, 0, sizeof(*b));
	b->relid = relid;
	b->econtext = econtext;
	b->nodes_cap = 32;
	b->nodes = palloc0(sizeof(WarpNode) * b->nodes_cap);
	b->args_cap = 32;
	b->args = palloc0(sizeof(int32) * b->args_cap);
	b->cols_cap = 16;
	b->col_attno = palloc0(sizeof(AttrNumber) * b->cols_cap);
	b->cols = palloc0(sizeof(WarpColumnSpec) * b->cols_cap);
}

static int
refuse(WarpBuilder *b, const char *why)
{
	if (b->why_not == NULL)
		b->why_not = why;
	return -1;
}

static int
add_node(WarpBuilder *b, WarpOp op, WarpType type)
{
	WarpNode   *n;

	if (b->nnodes == b->nodes_cap)
	{
		b->nodes_cap *= 2;
		b->nodes = repalloc(b->nodes, sizeof(WarpNode) * b->nodes_cap);
	}
	n = &b->nodes[b->nnodes];
	memset(n, 0, sizeof(*n));
	n->op = op;
	n->type = type;
	n->a = n->b = -1;
	return b->nnodes++;
}

static void
add_arg(WarpBuilder *b, int node)
{
	if (b->nargs == b->args_cap)
	{
		b->args_cap *= 2;
		b->args = repalloc(b->args, sizeof(int32) * b->args_cap);
	}
	b->args[b->nargs++] = node;
}

static int
new_column(WarpBuilder *b, AttrNumber attno, WarpType t)
{
	if (b->ncols == b->cols_cap)
	{
		b->cols_cap *= 2;
		b->col_attno = repalloc(b->col_attno, sizeof(AttrNumber) * b->cols_cap);
		b->cols = repalloc(b->cols, sizeof(WarpColumnSpec) * b->cols_cap);
	}
	b->col_attno[b->ncols] = attno;
	memset(&b->cols[b->ncols], 0, sizeof(WarpColumnSpec));
	b->cols[b->ncols].native = b->native_columns ? 1 : 0;
	b->cols[b->ncols].type = t;
	b->cols[b->ncols].field = -1;
	return b->ncols++;
}

/*
 * The program's column for attribute attno (one per attribute, whatever
 * reads it), created on first use.  LIKE columns (one per attribute and
 * pattern, compile_text_like) and text group-key columns (compile_text_key)
 * are not found here.
 */
static int
column_index(WarpBuilder *b, AttrNumber attno, WarpType t)
{
	int			c;

	for (c = 0; c < b->ncols; c++)
		if (b->col_attno[c] == attno && b->cols[c].text != WARP_TEXT_LIKE &&
			b->cols[c].text != WARP_TEXT_KEY && b->cols[c].text != WARP_TEXT_CMP &&
			!bms_is_member(c, b->join_key_cols))
			return c;
	return new_column(b, attno, t);
}

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
		return refuse(b, "column of another relation or a system column");
	if (!pgwarp_numeric_typmod(v->vartypmod, p, s))
		return refuse(b, "numeric column without a declared precision and scale");
	if (*p > 38 || *s < 0 || *s > *p)
		return refuse(b, "numeric column of more than 38 digits or a negative scale");
	if (*p > 18 && !bounded)
		return refuse(b, "numeric column of more than 18 digits as a group or join key");
	c = column_index(b, v->varattno, *p > 18 ? WT_NUMERIC : WT_INT8);
	b->cols[c].decimal = *p > 18 ? WARP_DECIMAL_WIDE : 1;
	b->cols[c].scale = (uint8) *s;
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
 * read.  Expressions go through compile_numeric.  Node index, or -1 with
 * why_not; *scale = s.
 */
int
warp_compile_decimal_arg(WarpBuilder *b, Expr *expr, int *scale)
{
	int			p,
				c,
				n;

	if (!IsA(expr, Var) || ((Var *) expr)->vartype != NUMERICOID)
		return refuse(b, "numeric expression (only a numeric column is read)");
	if ((c = decimal_column(b, (Var *) expr, false, &p, scale)) < 0)
		return -1;
	n = add_node(b, WN_COL, WT_INT8);
	b->nodes[n].a = c;
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
static int	compile_datetime(WarpBuilder *b, FuncExpr *fe);
static bool session_zone_ok(WarpBuilder *b);
static bool fact_text_column(WarpBuilder *b, Var *v, Oid collation, bool order);
static int	text_const_index(WarpBuilder *b, int col, const char *bytes, int len);

/* IN lists longer than this become one WN_IN_SET node (compile_in_set) */
#define WARP_IN_SET_MIN 8
static Const *scan_value(WarpBuilder *b, Expr *e);
static bool foldable(Expr *expr);
static bool cannot_fail(Expr *expr);
static int	compile_numeric_choice(WarpBuilder *b, Expr *expr, int *intd);
static Expr *case_when_expr(Expr *arg, Expr *when);

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

static int
compile_numeric(WarpBuilder *b, Expr *expr, int *intd)
{
	int			n,
				d;

	check_stack_depth();
	while (IsA(expr, RelabelType))
		expr = ((RelabelType *) expr)->arg;
	if (exprType((Node *) expr) != NUMERICOID)
		return refuse(b, "numeric expression of another type");
	switch (nodeTag(expr))
	{
		case T_Var:
			{
				int			p,
							sc,
							c;

				if ((c = decimal_column(b, (Var *) expr, true, &p, &sc)) < 0)
					return -1;
				n = add_node(b, WN_COL, WT_NUMERIC);
				b->nodes[n].a = c;
				b->nodes[n].scale = (uint8) sc;
				*intd = p - sc;
				return n;
			}
		case T_Const:
			{
				Const	   *c = (Const *) expr;
				char	   *str,
						   *q;
				int128		v = 0;
				int			digits = 0,
							ints = 0,
							sc = 0;
				bool		neg = false,
							frac = false;

				n = add_node(b, WN_CONST, WT_NUMERIC);
				*intd = 0;
				if (c->constisnull)
				{
					b->nodes[n].flags |= WARP_NODE_NULL;
					return n;
				}
				if (numeric_is_nan(DatumGetNumeric(c->constvalue)) ||
					numeric_is_inf(DatumGetNumeric(c->constvalue)))
					return refuse(b, "NaN or infinite numeric constant");
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
							return refuse(b, "numeric constant of more than 38 digits");
						v = v * 10 + (*q - '0');
						if (frac)
							sc++;
						else
							ints++;
					}
					else
						return refuse(b, "numeric constant the engine cannot read");
				}
				if (sc > 38)
					return refuse(b, "numeric constant of more than 38 decimals");
				if (neg)
					v = -v;
				set_numeric_const(&b->nodes[n], v, sc, digits > 18);
				*intd = ints;
				return n;
			}
		case T_FuncExpr:
			{
				FuncExpr   *fe = (FuncExpr *) expr;
				int			a,
							d;

				if (warp_is_extract_func(fe->funcid))
				{
					/* every field fits int64 at its scale: 19 digits */
					if ((n = compile_datetime(b, fe)) < 0)
						return -1;
					if (b->nodes[n].type != WT_NUMERIC)
						return refuse(b, "extract() as a numeric operand of a group key");
					*intd = 19 - b->nodes[n].scale;
					return n;
				}
				switch (fe->funcid)
				{
					case F_NUMERIC_INT2: d = 5; break;
					case F_NUMERIC_INT4: d = 10; break;
					case F_NUMERIC_INT8: d = 19; break;
					default:
						return refuse(b, "numeric function other than a cast from an integer or extract()");
				}
				if ((a = warp_compile_expr(b, linitial(fe->args))) < 0)
					return -1;
				n = add_node(b, WN_CAST, WT_NUMERIC);
				b->nodes[n].a = a;
				*intd = d;
				return n;
			}
		case T_OpExpr:
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
							d;

				if (fn == F_NUMERIC_UPLUS && list_length(op->args) == 1)
					return compile_numeric(b, linitial(op->args), intd);
				if (fn == F_NUMERIC_UMINUS && list_length(op->args) == 1)
				{
					if ((a = compile_numeric(b, linitial(op->args), intd)) < 0)
						return -1;
					if (bms_is_member(a, b->dyn_scale))
						return refuse(b, "numeric CASE/COALESCE of values of different scales as an operand");
					n = add_node(b, WN_NEG, WT_NUMERIC);
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
						return refuse(b, "numeric operator other than + - * (division is never offloaded)");
				}
				if (list_length(op->args) != 2 ||
					(a = compile_numeric(b, linitial(op->args), &da)) < 0 ||
					(bb = compile_numeric(b, lsecond(op->args), &db)) < 0)
					return -1;
				if (bms_is_member(a, b->dyn_scale) || bms_is_member(bb, b->dyn_scale))
					return refuse(b, "numeric CASE/COALESCE of values of different scales as an operand");
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
					return refuse(b, "numeric expression that could exceed 38 digits (from the columns' declared precisions)");
				n = add_node(b, WN_ARITH, WT_NUMERIC);
				b->nodes[n].sub = (uint8) sub;
				b->nodes[n].a = a;
				b->nodes[n].b = bb;
				b->nodes[n].scale = (uint8) sc;
				*intd = d;
				return n;
			}
		case T_CaseExpr:
		case T_CoalesceExpr:
			return compile_numeric_choice(b, expr, intd);
		case T_NullIfExpr:
			{
				/*
				 * NULLIF(x, y): CASE WHEN x = y THEN NULL ELSE x END, with
				 * numeric_eq's scale-insensitive comparison; x keeps its
				 * display scale (a NULL has none)
				 */
				NullIfExpr *ni = (NullIfExpr *) expr;
				int			x,
							y,
							cmp,
							nul;

				if (list_length(ni->args) != 2 ||
					exprType(lsecond(ni->args)) != NUMERICOID ||
					get_opcode(ni->opno) != F_NUMERIC_EQ)
					return refuse(b, "NULLIF of numeric and another type");
				if ((x = compile_numeric(b, linitial(ni->args), intd)) < 0 ||
					(y = compile_numeric(b, lsecond(ni->args), &d)) < 0)
					return -1;
				cmp = add_node(b, WN_CMP, WT_BOOL);
				b->nodes[cmp].sub = WARP_CMP_EQ;
				b->nodes[cmp].a = x;
				b->nodes[cmp].b = y;
				nul = add_node(b, WN_CONST, WT_NUMERIC);
				b->nodes[nul].flags |= WARP_NODE_NULL;
				b->nodes[nul].scale = b->nodes[x].scale;
				n = add_node(b, WN_CASE, WT_NUMERIC);
				b->nodes[n].flags = WARP_CASE_HAS_ELSE;
				b->nodes[n].scale = b->nodes[x].scale;
				b->nodes[n].nargs = 3;
				b->nodes[n].args_off = b->nargs;
				add_arg(b, cmp);
				add_arg(b, nul);
				add_arg(b, x);
				if (bms_is_member(x, b->dyn_scale))
					b->dyn_scale = bms_add_member(b->dyn_scale, n);
				return n;
			}
		default:
			return refuse(b, "numeric expression the engine does not compute");
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
	n = add_node(b, WN_CONST, WT_NUMERIC);
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
			kid[k] = warp_compile_expr(b, case_when_expr(arg, lfirst(lc)));
		else
		{
			kid[k] = compile_numeric(b, lfirst(lc), &kd[k]);
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
				int			m = add_node(b, WN_ARITH, WT_NUMERIC);

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
		return refuse(b, "numeric CASE/COALESCE that could exceed 38 digits");
	n = add_node(b, is_case ? WN_CASE : WN_COALESCE, WT_NUMERIC);
	b->nodes[n].flags = has_else ? WARP_CASE_HAS_ELSE : 0;
	b->nodes[n].scale = (uint8) maxs;
	b->nodes[n].nargs = nk;
	b->nodes[n].args_off = b->nargs;
	for (k = 0; k < nk; k++)
		add_arg(b, kid[k]);
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
	WarpNode	nd = b->nodes[n];	/* a copy: add_node may move them */
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
		m = add_node(b, (WarpOp) nd.op, WT_INT4);
		b->nodes[m].flags = nd.flags;
		b->nodes[m].nargs = nd.nargs;
		b->nodes[m].args_off = b->nargs;
		for (j = 0; j < nd.nargs; j++)
			add_arg(b, kid[j]);
		return m;
	}
	else
	{
		int			t = add_node(b, WN_IS_NOT_NULL, WT_BOOL);
		int			c;

		b->nodes[t].a = n;
		c = add_node(b, WN_CONST, WT_INT4);
		b->nodes[c].ival = nd.scale;
		m = add_node(b, WN_CASE, WT_INT4);
		b->nodes[m].nargs = 2;
		b->nodes[m].args_off = b->nargs;
		add_arg(b, t);
		add_arg(b, c);
		return m;
	}
}

/* a comparison of two numeric expressions (numeric_cmp's semantics) */
static int
compile_numeric_cmp_general(WarpBuilder *b, OpExpr *op, int sub)
{
	int			a,
				bb,
				d,
				n;

	if ((a = compile_numeric(b, linitial(op->args), &d)) < 0 ||
		(bb = compile_numeric(b, lsecond(op->args), &d)) < 0)
		return -1;
	n = add_node(b, WN_CMP, WT_BOOL);
	b->nodes[n].sub = (uint8) sub;
	b->nodes[n].a = a;
	b->nodes[n].b = bb;
	return n;
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

	if ((n = compile_numeric(b, expr, &d)) < 0)
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

/* a constant node holding a Datum of type typid */
static int
const_node(WarpBuilder *b, Oid typid, Datum value, bool isnull)
{
	WarpType	t;
	int			n;
	WarpNode   *nd;

	if (!warp_type_of(typid, &t))
		return refuse(b, "constant of a type the engine does not compute");
	n = add_node(b, WN_CONST, t);
	nd = &b->nodes[n];
	if (isnull)
	{
		nd->flags |= WARP_NODE_NULL;
		return n;
	}
	warp_datum_value(value, typid, &nd->ival, &nd->fval);
	return n;
}

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
	n = add_node(b, op, rtype);
	b->nodes[n].sub = sub;
	b->nodes[n].a = a;
	b->nodes[n].b = c;
	return n;
}

/* date 0, timestamp 1, timestamptz 2, other types -1 */
static int
datetime_rank(Oid t)
{
	return t == DATEOID ? 0 : t == TIMESTAMPOID ? 1 : t == TIMESTAMPTZOID ? 2 : -1;
}

/*
 * A comparison between date, timestamp and timestamptz of different types
 * (date_lt_timestamptz, timestamp_cmp_timestamptz, ...): the lower type is
 * converted to the higher one -- through the session's TimeZone where
 * timestamptz is involved -- and a result beyond the finite timestamps
 * saturates, as PostgreSQL's *_opt_overflow conversions make these
 * comparisons do instead of failing.  k: index into =, <>, <, <=, >, >=.
 */
static int
compile_datetime_cross_cmp(WarpBuilder *b, int k, bool distinct, Expr *l, Expr *r)
{
	int			rl = datetime_rank(exprType((Node *) l)),
				rr = datetime_rank(exprType((Node *) r));
	int			hi = Max(rl, rr);
	int			a,
				c,
				n;
	WarpDtCast	kind;

	if (distinct && k != 0)
		return refuse(b, "IS DISTINCT FROM with a non-equality operator");
	kind = Min(rl, rr) == 0 ? (hi == 1 ? WARP_DTC_DATE_TIMESTAMP : WARP_DTC_DATE_TIMESTAMPTZ)
		: WARP_DTC_TIMESTAMP_TIMESTAMPTZ;
	if (hi == 2 && !session_zone_ok(b))
		return -1;
	if ((a = warp_compile_expr(b, l)) < 0 || (c = warp_compile_expr(b, r)) < 0)
		return -1;
	n = add_node(b, WN_DATETIME, WT_TIMESTAMP);
	b->nodes[n].a = rl < rr ? a : c;
	b->nodes[n].sub = (uint8) kind;
	b->nodes[n].flags = WARP_DT_CAST | WARP_DT_SATURATE;
	if (rl < rr)
		a = n;
	else
		c = n;
	n = add_node(b, distinct ? WN_DISTINCT : WN_CMP, WT_BOOL);
	b->nodes[n].sub = distinct ? 0 : (uint8) k;
	b->nodes[n].a = a;
	b->nodes[n].b = c;
	return n;
}

/*
 * x + interval and x - interval, x a date, timestamp or timestamptz, the
 * interval a constant or an external parameter (its value taken when the
 * program is built at executor start): one WARP_DT_ARITH node holding the
 * interval (warp_ops_tz.h has PostgreSQL 15's timestamp_pl_interval; a
 * timestamptz goes through the session's zone, a date through midnight).
 * Subtraction adds the interval with each field negated, wrapping, as
 * timestamp_mi_interval does.  A NULL interval makes every row NULL.
 */
static int
compile_interval_arith(WarpBuilder *b, Oid ltype, bool minus, Expr *l, Expr *r)
{
	Interval	iv;
	bool		isnull = false;
	int			a,
				n;

	memset(&iv, 0, sizeof(iv));
	while (IsA(r, RelabelType))
		r = ((RelabelType *) r)->arg;
	if (IsA(r, Const))
	{
		isnull = ((Const *) r)->constisnull;
		if (!isnull)
			iv = *DatumGetIntervalP(((Const *) r)->constvalue);
	}
	else if (IsA(r, Param) && ((Param *) r)->paramkind == PARAM_EXTERN)
	{
		/* at plan time (no econtext) only the shape matters */
		if (b->econtext)
		{
			ExprState  *es = ExecInitExpr(r, NULL);
			Datum		v = ExecEvalExprSwitchContext(es, b->econtext, &isnull);

			if (!isnull)
				iv = *DatumGetIntervalP(v);
		}
	}
	else
		return refuse(b, "interval arithmetic with an interval that is not a constant");
	if (isnull)
		return const_node(b, TIMESTAMPOID, (Datum) 0, true);
	if (ltype == TIMESTAMPTZOID && !session_zone_ok(b))
		return -1;
	if ((a = warp_compile_expr(b, l)) < 0)
		return -1;
	if (minus)
	{
		iv.month = (int32) (0U - (uint32) iv.month);
		iv.day = (int32) (0U - (uint32) iv.day);
		iv.time = (int64) (UINT64CONST(0) - (uint64) iv.time);
	}
	n = add_node(b, WN_DATETIME, WT_TIMESTAMP);
	b->nodes[n].a = a;
	b->nodes[n].b = a;
	b->nodes[n].sub = (uint8) (ltype == DATEOID ? WARP_DTA_DATE_PL_INTERVAL :
							   ltype == TIMESTAMPTZOID ? WARP_DTA_TSTZ_PL_INTERVAL :
							   WARP_DTA_TS_PL_INTERVAL);
	b->nodes[n].flags = WARP_DT_ARITH;
	warp_node_set_interval(&b->nodes[n], iv.month, iv.day, iv.time);
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
		return refuse(b, "user-defined operator");
	name = get_opname(opno);
	if (name == NULL)
		return refuse(b, "unknown operator");
	if (list_length(args) == 1)
	{
		int			a;
		int			n;

		if (!warp_type_of(restype, &res) || res == WT_BOOL || res == WT_DATE ||
			res == WT_TIMESTAMP || exprType(linitial(args)) != restype)
			return refuse(b, "unary operator the engine does not compute");
		if (strcmp(name, "+") == 0)
			return warp_compile_expr(b, linitial(args));
		if (strcmp(name, "-") != 0)
			return refuse(b, "unary operator the engine does not compute");
		a = warp_compile_expr(b, linitial(args));
		if (a < 0)
			return -1;
		n = add_node(b, WN_NEG, res);
		b->nodes[n].a = a;
		return n;
	}
	if (list_length(args) != 2)
		return refuse(b, "operator with more than two arguments");
	ltype = exprType(linitial(args));
	rtype = exprType(lsecond(args));
	/* date/timestamp/timestamptz +/- interval (interval + x is inlined so) */
	if (rtype == INTERVALOID &&
		(ltype == DATEOID || ltype == TIMESTAMPOID || ltype == TIMESTAMPTZOID) &&
		(strcmp(name, "+") == 0 || strcmp(name, "-") == 0))
		return compile_interval_arith(b, ltype, name[0] == '-', linitial(args), lsecond(args));
	if (!warp_type_of(ltype, &lt) || !warp_type_of(rtype, &rt))
		return refuse(b, "operator on a type the engine does not compute");

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
				return compile_datetime_cross_cmp(b, k, distinct, linitial(args), lsecond(args));
			if (!ok)
				return refuse(b, "comparison across types the engine does not compare");
			if (distinct)
			{
				int			n;

				if (k != 0)
					return refuse(b, "IS DISTINCT FROM with a non-equality operator");
				n = compile_binary(b, WN_DISTINCT, 0, WT_BOOL, linitial(args), lsecond(args));
				return n;
			}
			return compile_binary(b, WN_CMP, k, WT_BOOL, linitial(args), lsecond(args));
		}
	}
	if (distinct)
		return refuse(b, "IS DISTINCT FROM with a non-equality operator");

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
			return refuse(b, "date arithmetic the engine does not compute");
		if ((a = warp_compile_expr(b, linitial(args))) < 0 ||
			(c = warp_compile_expr(b, lsecond(args))) < 0)
			return -1;
		n = add_node(b, WN_DATETIME, kind == WARP_DTA_DATE_MI ? WT_INT4 : WT_DATE);
		b->nodes[n].a = a;
		b->nodes[n].b = c;
		b->nodes[n].sub = (uint8) kind;
		b->nodes[n].flags = WARP_DT_ARITH;
		return n;
	}

	/* arithmetic: integer with integer or float with float */
	if (!warp_type_of(restype, &res))
		return refuse(b, "operator result of a type the engine does not compute");
	if (!((is_int_type(lt) && is_int_type(rt) && is_int_type(res)) ||
		  (WARP_TYPE_IS_FLOAT(lt) && WARP_TYPE_IS_FLOAT(rt) && WARP_TYPE_IS_FLOAT(res))))
		return refuse(b, "arithmetic on types the engine does not compute");
	{
		static const char *const ar_names[] = {"+", "-", "*", "/", "%"};
		int			k;

		for (k = 0; k < 5; k++)
			if (strcmp(name, ar_names[k]) == 0)
				break;
		if (k == 5 || (k == WARP_ARITH_MOD && WARP_TYPE_IS_FLOAT(res)))
			return refuse(b, "operator the engine does not compute");
		return compile_binary(b, WN_ARITH, k, res, linitial(args), lsecond(args));
	}
}

/* cast functions between numeric types: int2(), int4(), float8(), ... */
/*
 * A date/time unit as extract() and date_trunc() decode it (DecodeUnits,
 * then DecodeSpecial, on the downcased text), as a WarpDtField; -1 when
 * the engine has no such field.
 */
static int
datetime_field(Const *c)
{
	static const struct
	{
		int			dtk;
		WarpDtField field;
	}			map[] = {
		{DTK_MICROSEC, WARP_DT_MICROSECONDS}, {DTK_MILLISEC, WARP_DT_MILLISECONDS},
		{DTK_SECOND, WARP_DT_SECOND}, {DTK_MINUTE, WARP_DT_MINUTE},
		{DTK_HOUR, WARP_DT_HOUR}, {DTK_DAY, WARP_DT_DAY}, {DTK_WEEK, WARP_DT_WEEK},
		{DTK_MONTH, WARP_DT_MONTH}, {DTK_QUARTER, WARP_DT_QUARTER},
		{DTK_YEAR, WARP_DT_YEAR}, {DTK_DECADE, WARP_DT_DECADE},
		{DTK_CENTURY, WARP_DT_CENTURY}, {DTK_MILLENNIUM, WARP_DT_MILLENNIUM},
		{DTK_DOW, WARP_DT_DOW}, {DTK_ISODOW, WARP_DT_ISODOW}, {DTK_DOY, WARP_DT_DOY},
		{DTK_ISOYEAR, WARP_DT_ISOYEAR}, {DTK_EPOCH, WARP_DT_EPOCH},
		{DTK_JULIAN, WARP_DT_JULIAN}
	};
	text	   *units;
	char	   *low;
	int			type,
				val,
				k;

	if (c->constisnull || c->consttype != TEXTOID)
		return -1;
	units = DatumGetTextPP(c->constvalue);
	low = downcase_truncate_identifier(VARDATA_ANY(units), VARSIZE_ANY_EXHDR(units), false);
	type = DecodeUnits(0, low, &val);
	if (type == UNKNOWN_FIELD)
		type = DecodeSpecial(0, low, &val);
	if (type != UNITS && type != RESERV)
		return -1;
	for (k = 0; k < lengthof(map); k++)
		if (map[k].dtk == val)
			return map[k].field;
	return -1;
}

/* extract(unit FROM date | timestamp | timestamptz) */
bool
warp_is_extract_func(Oid funcid)
{
	return funcid == F_EXTRACT_TEXT_DATE || funcid == F_EXTRACT_TEXT_TIMESTAMP ||
		funcid == F_EXTRACT_TEXT_TIMESTAMPTZ;
}

/* the date/time functions compile_datetime takes (a constant unit first) */
bool
warp_is_datetime_func(Oid funcid)
{
	return warp_is_extract_func(funcid) ||
		funcid == F_DATE_TRUNC_TEXT_TIMESTAMP || funcid == F_DATE_TRUNC_TEXT_TIMESTAMPTZ ||
		funcid == F_DATE_PART_TEXT_TIMESTAMP || funcid == F_DATE_PART_TEXT_TIMESTAMPTZ;
}

/* the conversions compile_datetime_cast takes */
bool
warp_is_datetime_cast(Oid funcid)
{
	return funcid == F_TIMESTAMP_DATE || funcid == F_DATE_TIMESTAMP || funcid == F_TIMESTAMP_TIMESTAMPTZ ||
		funcid == F_DATE_TIMESTAMPTZ || funcid == F_TIMESTAMPTZ_TIMESTAMP ||
		funcid == F_TIMESTAMPTZ_DATE;
}

/*
 * Whether the session's TimeZone can be given to the engine (warp_tz.c);
 * marks the program as needing it.  false with why_not otherwise.
 */
static bool
session_zone_ok(WarpBuilder *b)
{
	const char *why;

	if (warp_session_tz(&why) == NULL)
	{
		refuse(b, psprintf("timestamptz in time zone \"%s\" (%s)",
						   pg_get_timezone_name(session_timezone), why));
		return false;
	}
	b->uses_tz = true;
	return true;
}

/*
 * The casts between date, timestamp and timestamptz (date(timestamptz),
 * timestamp(date), ...), those through the session's TimeZone included.
 * -2 when fe is not one of them.
 */
static int
compile_datetime_cast(WarpBuilder *b, FuncExpr *fe)
{
	WarpDtCast	kind;
	WarpType	t;
	int			a,
				n;

	switch (fe->funcid)
	{
		case F_TIMESTAMP_DATE:
			kind = WARP_DTC_DATE_TIMESTAMP;
			t = WT_TIMESTAMP;
			break;
		case F_TIMESTAMP_TIMESTAMPTZ:
			kind = WARP_DTC_TIMESTAMPTZ_TIMESTAMP;
			t = WT_TIMESTAMP;
			break;
		case F_DATE_TIMESTAMPTZ:
			kind = WARP_DTC_TIMESTAMPTZ_DATE;
			t = WT_DATE;
			break;
		case F_DATE_TIMESTAMP:
			kind = WARP_DTC_TIMESTAMP_DATE;
			t = WT_DATE;
			break;
		case F_TIMESTAMPTZ_TIMESTAMP:
			kind = WARP_DTC_TIMESTAMP_TIMESTAMPTZ;
			t = WT_TIMESTAMP;
			break;
		case F_TIMESTAMPTZ_DATE:
			kind = WARP_DTC_DATE_TIMESTAMPTZ;
			t = WT_TIMESTAMP;
			break;
		default:
			return -2;
	}
	if (list_length(fe->args) != 1)
		return refuse(b, "date/time conversion with more than one argument");
	if (kind != WARP_DTC_DATE_TIMESTAMP && kind != WARP_DTC_TIMESTAMP_DATE && !session_zone_ok(b))
		return -1;
	if ((a = warp_compile_expr(b, linitial(fe->args))) < 0)
		return -1;
	n = add_node(b, WN_DATETIME, t);
	b->nodes[n].a = a;
	b->nodes[n].sub = (uint8) kind;
	b->nodes[n].flags = WARP_DT_CAST;
	return n;
}

/*
 * date_trunc(unit, timestamp), date_part(unit, timestamp) and
 * extract(unit FROM date | timestamp) with a constant unit the engine
 * computes exactly as PostgreSQL does (warp_ops_datetime.h).  extract()
 * returns numeric, which the engine holds as its unscaled integer: only
 * at the root of a group key (warp_compile_group_key), whose value goes
 * back to PostgreSQL as that numeric.  The timestamptz variants read the
 * value in the session's TimeZone (warp_ops_tz.h).
 */
static int
compile_datetime(WarpBuilder *b, FuncExpr *fe)
{
	Expr	   *unit = linitial(fe->args);
	Expr	   *arg = lsecond(fe->args);
	Oid			argtype = exprType((Node *) arg);
	bool		is_ts = argtype == TIMESTAMPOID || argtype == TIMESTAMPTZOID;
	int			field,
				a,
				n,
				flags;
	WarpType	t;

	if (list_length(fe->args) != 2)
		return refuse(b, "date/time function with a time zone argument");
	if (!IsA(unit, Const) || (field = datetime_field((Const *) unit)) < 0)
		return refuse(b, "date/time unit that is not a constant the engine knows");
	if (argtype == TIMESTAMPTZOID && !session_zone_ok(b))
		return -1;
	switch (fe->funcid)
	{
		case F_DATE_TRUNC_TEXT_TIMESTAMP:
		case F_DATE_TRUNC_TEXT_TIMESTAMPTZ:
			if (!warp_timestamp_trunc_supported(field))
				return refuse(b, "date_trunc unit");
			flags = WARP_DT_TRUNC;
			t = WT_TIMESTAMP;
			break;
		case F_DATE_PART_TEXT_TIMESTAMP:
		case F_DATE_PART_TEXT_TIMESTAMPTZ:
			if (!warp_timestamp_extract_supported(field))
				return refuse(b, "date_part unit");
			flags = WARP_DT_PART;
			t = WT_FLOAT8;
			break;
		default:				/* extract */
			if (is_ts ? !warp_timestamp_extract_supported(field) :
				!warp_date_extract_supported(field))
				return refuse(b, "extract unit");
			flags = WARP_DT_EXTRACT;
			/* a group key: its unscaled int8; anywhere else a numeric node */
			t = (b->numeric_root && b->depth == 1) ? WT_INT8 : WT_NUMERIC;
			break;
	}
	if ((a = warp_compile_expr(b, arg)) < 0)
		return -1;
	if (argtype == TIMESTAMPTZOID)
		flags |= WARP_DT_TZ;
	n = add_node(b, WN_DATETIME, t);
	b->nodes[n].a = a;
	b->nodes[n].sub = (uint8) field;
	b->nodes[n].flags = (uint8) flags;
	if (t == WT_NUMERIC)
		b->nodes[n].scale = (uint8) warp_dt_extract_scale((WarpDtField) field, is_ts);
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
	int			n = add_node(b, WN_CMP, WT_BOOL);

	b->nodes[n].sub = holds ? WARP_CMP_EQ : WARP_CMP_NE;
	b->nodes[n].a = x;
	b->nodes[n].b = x;
	return n;
}

/*
 * A comparison between a numeric column side (numeric_cmp_column: X, of
 * scale s, |X| < 10^18) and a numeric value of the whole scan (a constant,
 * a parameter, scan_value), either way round, decided on X: with S = value
 * * 10^s, X op S is X op S itself when S is an integer, and otherwise
 * (floor F < S < F + 1) X < S is X <= F, X > S is X > F, X = S is false and
 * X <> S is true (for a non-NULL X: written X <> X and X = X, so that a
 * NULL X stays NULL).  A value beyond every X (NaN, which numeric orders
 * above everything, +-Infinity, |F| >= 10^18) decides the comparison
 * by its sign alone.  So every value a parameter may take at executor
 * start compiles.  Returns -2 when the expression is not of this shape
 * (the caller compiles it the usual way), -1 when refused.
 */
static int
compile_numeric_cmp(WarpBuilder *b, OpExpr *op)
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
	c = col ? scan_value(b, swapped ? linitial(op->args) : lsecond(op->args)) : NULL;
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
			return refuse(b, "numeric column without a declared precision and scale");
		if ((x = warp_compile_decimal_arg(b, col, &scale)) < 0)
			return -1;
	}
	if (c->constisnull)
	{
		k = add_node(b, WN_CONST, WT_INT8);
		b->nodes[k].flags |= WARP_NODE_NULL;
		n = add_node(b, WN_CMP, WT_BOOL);
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
	k = add_node(b, WN_CONST, WT_INT8);
	b->nodes[k].ival = f;
	n = add_node(b, WN_CMP, WT_BOOL);
	b->nodes[n].sub = (uint8) sub;
	b->nodes[n].a = x;
	b->nodes[n].b = k;
	return n;
}

/* one constant of a text column: its index k among the column's strings */
typedef struct WarpTextConst
{
	int			col;
	int			k;
	int			len;
	char	   *bytes;
} WarpTextConst;

static int
text_const_index(WarpBuilder *b, int col, const char *bytes, int len)
{
	ListCell   *lc;
	int			k = 0;
	WarpTextConst *tc;

	foreach(lc, b->text_consts)
	{
		tc = lfirst(lc);
		if (tc->col != col)
			continue;
		if (tc->len == len && memcmp(tc->bytes, bytes, len) == 0)
			return tc->k;
		k++;
	}
	tc = palloc(sizeof(WarpTextConst));
	tc->col = col;
	tc->k = k;
	tc->len = len;
	tc->bytes = palloc(Max(len, 1));
	memcpy(tc->bytes, bytes, len);
	b->text_consts = lappend(b->text_consts, tc);
	return k;
}

static void
builder_strings(WarpBuilder *b, WarpProgram *p)
{
	ListCell   *lc;
	int			n = list_length(b->text_consts),
				c,
				i;
	int		   *first = palloc0(sizeof(int) * (b->ncols + 1));
	int		   *len;
	int64		bytes = 0;

	/* each column's strings together, in the order of their indexes k */
	foreach(lc, b->text_consts)
		first[((WarpTextConst *) lfirst(lc))->col + 1]++;
	for (c = 0; c < b->ncols; c++)
	{
		b->cols[c].str_count = first[c + 1];
		first[c + 1] += first[c];
		b->cols[c].str_first = first[c];
	}
	p->nstrings = n;
	p->strings = palloc0(sizeof(WarpString) * Max(n, 1));
	len = palloc0(sizeof(int) * Max(n, 1));
	foreach(lc, b->text_consts)
	{
		WarpTextConst *tc = lfirst(lc);

		Assert(tc->k < b->cols[tc->col].str_count);
		len[first[tc->col] + tc->k] = tc->len;
	}
	for (i = 0; i < n; i++)
	{
		p->strings[i].off = (int32) bytes;
		p->strings[i].len = len[i];
		bytes += len[i];
		if (bytes > PG_INT32_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("pg_warp: the query's strings exceed 2 GB")));
	}
	p->nstrbytes = (int32) bytes;
	p->strbytes = palloc(Max(bytes, 1));
	foreach(lc, b->text_consts)
	{
		WarpTextConst *tc = lfirst(lc);

		memcpy(p->strbytes + p->strings[first[tc->col] + tc->k].off, tc->bytes, tc->len);
	}
}

void
warp_builder_finish(WarpBuilder *b, WarpProgram *p)
{
	builder_strings(b, p);
	p->nsetvals = b->nsetvals;
	p->setvals = b->setvals;
	memset(&p->tz, 0, sizeof(p->tz));
	if (b->uses_tz)
		warp_program_set_tz(p);
}

/*
 * Whether the engine can take text column v of the fact table under
 * collation: byte equality (a deterministic collation) or, with order, byte
 * order (the C collation), over the files' UTF-8 bytes (a UTF8 database:
 * the constants are in its encoding).  false with why_not otherwise.
 */
/*
 * Whether a collation orders text as its bytes compare (memcmp, the
 * shorter string first on a tie), so the engine's C comparison is
 * PostgreSQL's: C and POSIX, and libc's C.UTF-8 in a UTF-8 database when
 * glibc is 2.35 or later, whose C.UTF-8 collates by code point with
 * strcmp (the code point order of UTF-8 is its byte order; older
 * distributions' C.UTF-8 put unassigned code points last).  ICU
 * collations never.
 */
static bool
collation_orders_bytes(Oid collation)
{
	bool		bytes = false;
#ifdef __GLIBC__
	const char *v = gnu_get_libc_version();
	int			major = 0,
				minor = 0;
#endif

	if (!OidIsValid(collation))
		return false;
	if (lc_collate_is_c(collation))
		return true;
#ifdef __GLIBC__
	if (GetDatabaseEncoding() != PG_UTF8 || sscanf(v, "%d.%d", &major, &minor) != 2 ||
		major < 2 || (major == 2 && minor < 35))
		return false;
	if (collation == DEFAULT_COLLATION_OID)
	{
		const char *name;

		if (pg_newlocale_from_collation(collation) != 0)
			return false;		/* the database's ICU locale */
		name = setlocale(LC_COLLATE, NULL);
		bytes = name && (strcmp(name, "C.UTF-8") == 0 || strcmp(name, "C.utf8") == 0);
	}
	else
	{
		HeapTuple	tp = SearchSysCache1(COLLOID, ObjectIdGetDatum(collation));

		if (HeapTupleIsValid(tp))
		{
			Form_pg_collation form = (Form_pg_collation) GETSTRUCT(tp);
			bool		isnull;
			Datum		d = SysCacheGetAttr(COLLOID, tp, Anum_pg_collation_collcollate, &isnull);

			if (form->collprovider == COLLPROVIDER_LIBC && form->collisdeterministic && !isnull)
			{
				char	   *name = TextDatumGetCString(d);

				bytes = strcmp(name, "C.UTF-8") == 0 || strcmp(name, "C.utf8") == 0;
			}
			ReleaseSysCache(tp);
		}
	}
#endif
	return bytes;
}

static bool
fact_text_column(WarpBuilder *b, Var *v, Oid collation, bool order);

/*
 * The argument of `text_column IS [NOT] NULL`: the column read as a text
 * column matched against none of its strings (WARP_TEXT_EQ), whose NULLs
 * are the column's; no collation or encoding matters to a null test.
 * -2 when the argument is not a text column of the fact table.
 */
static int
compile_text_null_arg(WarpBuilder *b, Expr *arg)
{
	Var		   *v;
	int			ci;
	int			x;

	while (IsA(arg, RelabelType))
		arg = ((RelabelType *) arg)->arg;
	if (!IsA(arg, Var))
		return -2;
	v = (Var *) arg;
	if ((v->vartype != TEXTOID && v->vartype != VARCHAROID && v->vartype != BPCHAROID) ||
		v->varno != b->relid || v->varlevelsup != 0 || v->varattno <= 0)
		return -2;
	ci = column_index(b, v->varattno, WT_INT8);
	if (b->cols[ci].type != WT_INT8 || b->cols[ci].native ||
		(b->cols[ci].text != WARP_TEXT_EQ && b->cols[ci].text != 0))
		return -2;
	b->cols[ci].text = WARP_TEXT_EQ;
	x = add_node(b, WN_COL, WT_INT8);
	b->nodes[x].a = ci;
	return x;
}

static bool
fact_text_column(WarpBuilder *b, Var *v, Oid collation, bool order)
{
	const char *why = NULL;

	if (v->varno != b->relid || v->varlevelsup != 0 || v->varattno <= 0)
		why = "column of another relation or a system column";
	else if (!OidIsValid(collation) ||
			 !(order ? collation_orders_bytes(collation) : get_collation_isdeterministic(collation)))
		why = order ? "text ordering under a collation other than C or C.UTF-8" :
			"text under a nondeterministic collation";
	else if (GetDatabaseEncoding() != PG_UTF8)
		why = "text in a database whose encoding is not UTF8";
	if (why)
		refuse(b, why);
	return why == NULL;
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
static Const *
scan_value(WarpBuilder *b, Expr *e)
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

/*
 * A two-argument operator of a column and a value of the whole scan
 * (scan_value), either way round (relabelings stripped): the column, the
 * value and whether the value came first.  False for any other shape.
 */
static bool
column_and_value(WarpBuilder *b, OpExpr *op, Var **v, Const **c, bool *swapped)
{
	Expr	   *l = linitial(op->args);
	Expr	   *r = lsecond(op->args);

	while (IsA(l, RelabelType))
		l = ((RelabelType *) l)->arg;
	while (IsA(r, RelabelType))
		r = ((RelabelType *) r)->arg;
	*swapped = !IsA(l, Var);
	*v = (Var *) (*swapped ? r : l);
	if (!IsA(*v, Var))
		return false;
	*c = scan_value(b, *swapped ? l : r);
	return *c != NULL;
}

/*
 * The boolean program column of a text predicate with one constant string
 * (WARP_TEXT_LIKE: the pattern; WARP_TEXT_CMP: comparison cmp with the
 * string), one per attribute, predicate and string: a WN_COL node over it.
 */
static int
text_predicate_column(WarpBuilder *b, AttrNumber attno, int mode, int cmp,
					  const char *bytes, int len)
{
	int			ci,
				n;

	for (ci = 0; ci < b->ncols; ci++)
	{
		ListCell   *lc;

		if (b->col_attno[ci] != attno || b->cols[ci].text != mode || b->cols[ci].cmp != cmp)
			continue;
		foreach(lc, b->text_consts)
		{
			WarpTextConst *tc = lfirst(lc);

			if (tc->col == ci && tc->len == len && memcmp(tc->bytes, bytes, len) == 0)
				break;
		}
		if (lc != NULL)
			break;
	}
	if (ci == b->ncols)
	{
		ci = new_column(b, attno, WT_BOOL);
		b->cols[ci].text = (uint8) mode;
		b->cols[ci].cmp = (uint8) cmp;
		(void) text_const_index(b, ci, bytes, len);
	}
	n = add_node(b, WN_COL, WT_BOOL);
	b->nodes[n].a = ci;
	return n;
}

/*
 * text < <= > >= constant on a text or varchar column of the fact table
 * under the C collation, where PostgreSQL compares bytes (varstr_cmp:
 * memcmp, the shorter string first on a tie): a boolean column of its own
 * (WARP_TEXT_CMP, one per attribute, comparison and constant).  Other
 * collations order by the locale and stay PostgreSQL's.
 */
static int
compile_text_order(WarpBuilder *b, OpExpr *op, Oid fn)
{
	Const	   *c;
	Var		   *v;
	text	   *t;
	int			sub,
				n;
	bool		swapped;

	if (list_length(op->args) != 2)
		return -2;
	if (!column_and_value(b, op, &v, &c, &swapped))
		return refuse(b, "text ordering other than a column with a constant or parameter");
	if (v->vartype != TEXTOID && v->vartype != VARCHAROID)
		return refuse(b, "text ordering on another type");
	if (!fact_text_column(b, v, op->inputcollid, true))
		return -1;
	sub = fn == F_TEXT_LT ? WARP_CMP_LT : fn == F_TEXT_LE ? WARP_CMP_LE :
		fn == F_TEXT_GT ? WARP_CMP_GT : WARP_CMP_GE;
	if (swapped)				/* c op X == X op' c */
		sub = sub == WARP_CMP_LT ? WARP_CMP_GT : sub == WARP_CMP_LE ? WARP_CMP_GE :
			sub == WARP_CMP_GT ? WARP_CMP_LT : WARP_CMP_LE;
	if (c->constisnull)
	{
		n = add_node(b, WN_CONST, WT_BOOL);
		b->nodes[n].flags |= WARP_NODE_NULL;
		return n;
	}
	t = DatumGetTextPP(c->constvalue);
	return text_predicate_column(b, v->varattno, WARP_TEXT_CMP, sub,
								 VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
}

/*
 * The fact side of a join on text keys (texteq under a deterministic
 * collation): a text column of its own whose value is which of the
 * dimension's n distinct key strings it equals (their order: map[k] = k),
 * so the join probes with that number.  The strings are the dimension's,
 * known once its plan ran.
 */
int
warp_compile_text_join_key(WarpBuilder *b, Expr *expr, int n, const char *const *strs,
						   const int *lens, int *map)
{
	Var		   *v;
	int			ci,
				k,
				node;

	while (IsA(expr, RelabelType))
		expr = ((RelabelType *) expr)->arg;
	v = (Var *) expr;
	if (!IsA(expr, Var) || (v->vartype != TEXTOID && v->vartype != VARCHAROID))
		return refuse(b, "text join key that is not a text column");
	if (v->varno != b->relid || v->varlevelsup != 0 || v->varattno <= 0)
		return refuse(b, "column of another relation or a system column");
	if (GetDatabaseEncoding() != PG_UTF8)
		return refuse(b, "text in a database whose encoding is not UTF8");
	/* a column of its own: not shared with comparisons with constants */
	ci = new_column(b, v->varattno, WT_INT8);
	b->cols[ci].text = WARP_TEXT_EQ;
	b->join_key_cols = bms_add_member(b->join_key_cols, ci);
	for (k = 0; k < n; k++)
	{
		WarpTextConst *tc = palloc(sizeof(WarpTextConst));

		tc->col = ci;
		tc->k = k;
		tc->len = lens[k];
		tc->bytes = (char *) strs[k];
		b->text_consts = lappend(b->text_consts, tc);
		map[k] = k;
	}
	node = add_node(b, WN_COL, WT_INT8);
	b->nodes[node].a = ci;
	return node;
}

/*
 * text = constant and text <> constant (IN lists arrive here one element
 * at a time, from compile_saop) on a text or varchar column of the fact
 * table, under a deterministic collation, where equality is byte
 * equality: the column's value becomes which of its constants the row
 * equals (warp_cpu.c, load_text_column), compared with the constant's
 * index.  Returns -2 when the expression is not of this shape, -1 when
 * refused.
 */
static int
compile_text_cmp(WarpBuilder *b, OpExpr *op)
{
	Oid			fn = OidIsValid(op->opfuncid) ? op->opfuncid : get_opcode(op->opno);
	Const	   *c;
	Var		   *v;
	int			sub,
				ci,
				x,
				k,
				n;
	bool		swapped;

	if (fn == F_TEXTEQ)
		sub = WARP_CMP_EQ;
	else if (fn == F_TEXTNE)
		sub = WARP_CMP_NE;
	else if (fn == F_TEXT_LT || fn == F_TEXT_LE || fn == F_TEXT_GT || fn == F_TEXT_GE)
		return compile_text_order(b, op, fn);
	else
		return -2;
	if (list_length(op->args) != 2)
		return -2;
	if (!column_and_value(b, op, &v, &c, &swapped))
		return -2;
	if (v->vartype != TEXTOID && v->vartype != VARCHAROID)
		return -2;
	if (!fact_text_column(b, v, op->inputcollid, false))
		return -1;
	ci = column_index(b, v->varattno, WT_INT8);
	b->cols[ci].text = WARP_TEXT_EQ;
	x = add_node(b, WN_COL, WT_INT8);
	b->nodes[x].a = ci;
	k = add_node(b, WN_CONST, WT_INT8);
	if (c->constisnull)
		b->nodes[k].flags |= WARP_NODE_NULL;
	else
	{
		text	   *t = DatumGetTextPP(c->constvalue);

		b->nodes[k].ival = text_const_index(b, ci, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
	}
	n = add_node(b, WN_CMP, WT_BOOL);
	b->nodes[n].sub = (uint8) sub;
	b->nodes[n].a = x;
	b->nodes[n].b = k;
	return n;
}

/*
 * text LIKE pattern and NOT LIKE on a text or varchar column of the fact
 * table, the pattern a constant or a parameter (scan_value), in a UTF-8
 * database under a deterministic collation (where PostgreSQL's LIKE
 * compares bytes and '_' takes one character): the column is read as a
 * boolean column of its own, whether the row matches the pattern
 * (warp_cpu.c, load_text_column, with warp_text_like).  A pattern that
 * ends in an unpaired escape character fails on the rows whose match gets
 * that far, PostgreSQL's error (22025) for the first of them.
 * Returns -2 when the expression is not of this shape, -1 when refused.
 */
static int
compile_text_like(WarpBuilder *b, OpExpr *op)
{
	Oid			fn = OidIsValid(op->opfuncid) ? op->opfuncid : get_opcode(op->opno);
	Expr	   *col,
			   *pat;
	Const	   *c;
	Var		   *v;
	text	   *t;
	const char *pb;
	int			plen,
				n;

	if ((fn != F_TEXTLIKE && fn != F_TEXTNLIKE) || list_length(op->args) != 2)
		return -2;
	col = linitial(op->args);
	pat = lsecond(op->args);
	while (IsA(col, RelabelType))
		col = ((RelabelType *) col)->arg;
	if (!IsA(col, Var) || (c = scan_value(b, pat)) == NULL)
		return refuse(b, "LIKE other than a column with a constant or parameter pattern");
	v = (Var *) col;
	if (v->vartype != TEXTOID && v->vartype != VARCHAROID)
		return refuse(b, "LIKE on a type other than text or varchar");
	if (!fact_text_column(b, v, op->inputcollid, false))
		return -1;
	if (c->constisnull)
	{
		n = add_node(b, WN_CONST, WT_BOOL);
		b->nodes[n].flags |= WARP_NODE_NULL;
		return n;
	}
	t = DatumGetTextPP(c->constvalue);
	pb = VARDATA_ANY(t);
	plen = VARSIZE_ANY_EXHDR(t);
	n = text_predicate_column(b, v->varattno, WARP_TEXT_LIKE, 0, pb, plen);
	if (fn == F_TEXTNLIKE)
	{
		int			x = add_node(b, WN_NOT, WT_BOOL);

		b->nodes[x].a = n;
		n = x;
	}
	return n;
}

/*
 * A text or varchar column of the fact table as a group key, grouped under
 * a deterministic collation (byte equality): a WARP_TEXT_KEY column, whose
 * value is the string's id in the driver (one column per attribute).
 */
static int
compile_text_key(WarpBuilder *b, Var *v, Oid collation)
{
	int			ci,
				n;

	if (!fact_text_column(b, v, collation, false))
		return -1;
	for (ci = 0; ci < b->ncols; ci++)
		if (b->col_attno[ci] == v->varattno && b->cols[ci].text == WARP_TEXT_KEY)
			break;
	if (ci == b->ncols)
	{
		ci = new_column(b, v->varattno, WT_INT8);
		b->cols[ci].text = WARP_TEXT_KEY;
	}
	n = add_node(b, WN_COL, WT_INT8);
	b->nodes[n].a = ci;
	return n;
}

/* the column a text group key reads (warp_cpu_key_text), or -1 */
int
warp_group_key_text_column(const WarpProgram *p, int node)
{
	const WarpNode *nd;

	if (node < 0 || node >= p->nnodes)
		return -1;
	nd = &p->nodes[node];
	if (nd->op != WN_COL || p->cols[nd->a].text != WARP_TEXT_KEY)
		return -1;
	return nd->a;
}

int
warp_compile_group_key(WarpBuilder *b, Expr *expr)
{
	int			n,
				depth = b->depth;
	Expr	   *e = expr;

	while (IsA(e, RelabelType))
		e = ((RelabelType *) e)->arg;
	if (IsA(e, Var) && (((Var *) e)->vartype == TEXTOID || ((Var *) e)->vartype == VARCHAROID))
		return compile_text_key(b, (Var *) e, exprCollation((Node *) expr));
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
		return refuse(b, "numeric expression as a group key");
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
		(field = datetime_field((Const *) linitial(fe->args))) < 0)
		return -1;
	return warp_dt_extract_scale((WarpDtField) field, fe->funcid != F_EXTRACT_TEXT_DATE);
}

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
		return compile_datetime(b, fe);
	if ((n = compile_datetime_cast(b, fe)) != -2)
		return n;
	if (fe->funcretset || list_length(fe->args) != 1 || fe->funcid >= FirstNormalObjectId)
		return refuse(b, "function the engine does not compute");
	argtype = exprType(linitial(fe->args));
	if (!warp_type_of(fe->funcresulttype, &to) || !warp_type_of(argtype, &from))
		return refuse(b, "function on types the engine does not compute");
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
			return refuse(b, "function the engine does not compute");
	}
	if (!(is_int_type(from) || WARP_TYPE_IS_FLOAT(from)) ||
		!(is_int_type(to) || WARP_TYPE_IS_FLOAT(to)))
		return refuse(b, "cast the engine does not compute");
	a = warp_compile_expr(b, linitial(fe->args));
	if (a < 0)
		return -1;
	n = add_node(b, WN_CAST, to);
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
static Expr *
case_when_expr(Expr *arg, Expr *when)
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
	n = add_node(b, op, type);
	b->nodes[n].flags = flags;
	b->nodes[n].nargs = k;
	b->nodes[n].args_off = b->nargs;
	for (i = 0; i < k; i++)
		add_arg(b, kids[i]);
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
	is_text = (fn == F_TEXTEQ || fn == F_TEXTNE);
	if (is_text)
	{
		if (!IsA(l, Var) || (ltype != TEXTOID && ltype != VARCHAROID))
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

		if (!fact_text_column(b, v, sa->inputcollid, false))
			return -1;
		ci = column_index(b, v->varattno, WT_INT8);
		b->cols[ci].text = WARP_TEXT_EQ;
		x = add_node(b, WN_COL, WT_INT8);
		b->nodes[x].a = ci;
		for (i = 0; i < nvals; i++)
		{
			text	   *t;

			if (nulls[i])
			{
				has_null = true;
				continue;
			}
			t = DatumGetTextPP(values[i]);
			vals[nv++] = text_const_index(b, ci, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
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
	i = add_node(b, WN_IN_SET, WT_BOOL);
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
 * whole scan (scan_value: a parameter, or ARRAY[$1, 'x'], which IN ($1,
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
	ac = scan_value(b, arr);
	if (ac == NULL || (!runtime && ac->constisnull))
		return refuse(b, "IN list that is not a constant array or a parameter");
	elemtype = get_element_type(ac->consttype);
	if (!OidIsValid(elemtype))
		return refuse(b, "IN list that is not an array");
	if (runtime && elemtype == NUMERICOID)
		return refuse(b, "numeric IN list from a parameter");
	if (runtime && b->econtext == NULL)
	{
		/* plan time: the shape of one comparison */
		return warp_compile_expr(b, make_opclause(sa->opno, BOOLOID, false,
												  linitial(sa->args),
												  (Expr *) makeNullConst(elemtype, -1, InvalidOid),
												  InvalidOid, sa->inputcollid));
	}
	if (ac->constisnull)
		return const_node(b, BOOLOID, (Datum) 0, true);
	get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
	deconstruct_array(DatumGetArrayTypeP(ac->constvalue), elemtype,
					  typlen, typbyval, typalign, &values, &nulls, &nvals);
	if (nvals == 0)
		return const_node(b, BOOLOID, BoolGetDatum(!sa->useOr), false);
	if (nvals > WARP_IN_SET_MIN)
	{
		int			n = compile_in_set(b, sa, elemtype, values, nulls, nvals);

		if (n != -2)
			return n;
	}
	if (nvals > 1000 && !runtime)
		return refuse(b, "IN list longer than 1000 values");
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

static int
compile_expr(WarpBuilder *b, Expr *expr)
{
	WarpType	t;

	check_stack_depth();
	if (expr == NULL)
		return refuse(b, "missing expression");
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
		return const_node(b, exprType((Node *) expr), v, isnull);
	}
	/* numeric expressions; extract() at a group key's root stays int8 */
	if (exprType((Node *) expr) == NUMERICOID &&
		!(IsA(expr, FuncExpr) && b->numeric_root && b->depth == 1 &&
		  warp_is_extract_func(((FuncExpr *) expr)->funcid)))
	{
		int			d;

		return compile_numeric(b, expr, &d);
	}
	switch (nodeTag(expr))
	{
		case T_Var:
			{
				Var		   *v = (Var *) expr;
				int			n;

				if (v->varno != b->relid || v->varlevelsup != 0 || v->varattno <= 0)
					return refuse(b, "column of another relation or a system column");
				if (!warp_type_of(v->vartype, &t))
					return refuse(b, "column of a type the engine does not compute");
				n = add_node(b, WN_COL, t);
				b->nodes[n].a = column_index(b, v->varattno, t);
				return n;
			}
		case T_Const:
			{
				Const	   *c = (Const *) expr;

				return const_node(b, c->consttype, c->constvalue, c->constisnull);
			}
		case T_Param:
			{
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
					return refuse(b, "a subquery's value outside a WHERE comparison");
				if (p->paramkind != PARAM_EXTERN && p->paramkind != PARAM_EXEC)
					return refuse(b, "parameter set by a subquery");
				if (!warp_type_of(p->paramtype, &t))
					return refuse(b, "parameter of a type the engine does not compute");
				if (b->econtext)
				{
					ExprState  *es = ExecInitExpr(expr, NULL);

					v = ExecEvalExprSwitchContext(es, b->econtext, &isnull);
				}
				return const_node(b, p->paramtype, v, isnull);
			}
		case T_RelabelType:
			{
				RelabelType *r = (RelabelType *) expr;

				if (!warp_type_of(r->resulttype, &t) ||
					!warp_type_of(exprType((Node *) r->arg), &t))
					return refuse(b, "relabeling the engine does not compute");
				if (exprType((Node *) r->arg) != r->resulttype)
					return refuse(b, "relabeling between types");
				return warp_compile_expr(b, r->arg);
			}
		case T_OpExpr:
			{
				OpExpr	   *op = (OpExpr *) expr;
				bool		saved = b->fold_operands;
				int			n;

				if (op->opretset)
					return refuse(b, "set-returning operator");
				if ((n = compile_numeric_cmp(b, op)) != -2)
					return n;
				if ((n = compile_text_cmp(b, op)) != -2)
					return n;
				if ((n = compile_text_like(b, op)) != -2)
					return n;
				b->fold_operands = b->qual_root && b->depth == 1;
				n = compile_operator(b, op->opno, op->opresulttype, op->args, false);
				b->fold_operands = saved;
				return n;
			}
		case T_DistinctExpr:
			{
				DistinctExpr *op = (DistinctExpr *) expr;

				return compile_operator(b, op->opno, BOOLOID, op->args, true);
			}
		case T_NullIfExpr:
			{
				NullIfExpr *ni = (NullIfExpr *) expr;
				int			eq;
				int			n;

				if (!warp_type_of(ni->opresulttype, &t) ||
					exprType(linitial(ni->args)) != exprType(lsecond(ni->args)))
					return refuse(b, "NULLIF across types");
				/* check that "=" is one the engine computes */
				eq = compile_operator(b, ni->opno, BOOLOID, ni->args, false);
				if (eq < 0)
					return -1;
				n = add_node(b, WN_NULLIF, t);
				b->nodes[n].a = b->nodes[eq].a;
				b->nodes[n].b = b->nodes[eq].b;
				return n;
			}
		case T_ScalarArrayOpExpr:
			return compile_saop(b, (ScalarArrayOpExpr *) expr);
		case T_BoolExpr:
			{
				BoolExpr   *be = (BoolExpr *) expr;

				if (be->boolop == NOT_EXPR)
				{
					int			a = warp_compile_expr(b, linitial(be->args));
					int			n;

					if (a < 0)
						return -1;
					n = add_node(b, WN_NOT, WT_BOOL);
					b->nodes[n].a = a;
					return n;
				}
				return compile_list(b, be->boolop == AND_EXPR ? WN_AND : WN_OR,
									WT_BOOL, be->args, 0);
			}
		case T_NullTest:
			{
				NullTest   *nt = (NullTest *) expr;
				int			a,
							n;

				if (nt->argisrow)
					return refuse(b, "row IS NULL");
				a = compile_text_null_arg(b, nt->arg);
				if (a == -2)
					a = warp_compile_expr(b, nt->arg);
				if (a < 0)
					return -1;
				n = add_node(b, nt->nulltesttype == IS_NULL ? WN_IS_NULL : WN_IS_NOT_NULL, WT_BOOL);
				b->nodes[n].a = a;
				return n;
			}
		case T_FuncExpr:
			return compile_func(b, (FuncExpr *) expr);
		case T_CoalesceExpr:
			{
				CoalesceExpr *ce = (CoalesceExpr *) expr;

				if (!warp_type_of(ce->coalescetype, &t))
					return refuse(b, "COALESCE of a type the engine does not compute");
				return compile_list(b, WN_COALESCE, t, ce->args, 0);
			}
		case T_CaseExpr:
			{
				CaseExpr   *ce = (CaseExpr *) expr;
				List	   *args = NIL;
				ListCell   *lc;

				if (!warp_type_of(ce->casetype, &t))
					return refuse(b, "CASE of a type the engine does not compute");
				foreach(lc, ce->args)
				{
					CaseWhen   *w = lfirst_node(CaseWhen, lc);

					args = lappend(args, case_when_expr(ce->arg, w->expr));
					args = lappend(args, w->result);
				}
				if (ce->defresult)
					args = lappend(args, ce->defresult);
				return compile_list(b, WN_CASE, t, args,
									ce->defresult ? WARP_CASE_HAS_ELSE : 0);
			}
		default:
			break;
	}
	return refuse(b, "expression the engine does not compute");
}
