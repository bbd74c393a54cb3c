/*-------------------------------------------------------------------------
 *
 * warp_program.c
 *	  Validation of a WarpProgram (see warp_program.h).
 *
 * A driver trusts nothing it has not checked: every node, argument,
 * column, join and aggregate index is checked to be in range, arguments
 * must come before the node that uses them (so evaluation terminates and
 * the expression graph is a tree), and argument kinds must fit the
 * operation (an integer comparison is not handed a float vector).
 *
 *-------------------------------------------------------------------------
 */
#include "warp_program.h"
#include "warp_ops_datetime.h"
#include "warp_ops_text.h"

#define KIND_FLOAT(p, n) WARP_TYPE_IS_FLOAT((p)->nodes[(n)].type)
#define IS_NUM(p, n) ((p)->nodes[(n)].type == WT_NUMERIC)

/* how a node's values travel: 0 int64, 1 double, 2 int128 (numeric) */
static int
kind_of(const WarpProgram *p, warp_int32 n)
{
	return IS_NUM(p, n) ? 2 : KIND_FLOAT(p, n) ? 1 : 0;
}

/*
 * A numeric node: only the operations the drivers compute in 128-bit fixed
 * point, with PostgreSQL's display scales.  NULL if fine.
 */
static const char *
numeric_node_problem(const WarpProgram *p, const WarpNode *nd)
{
	if (nd->scale > 38)
		return "numeric scale beyond 38";
	switch ((WarpOp) nd->op)
	{
		case WN_COL:
			if (!((p->cols[nd->a].decimal == 1 && p->cols[nd->a].type == WT_INT8) ||
				  (p->cols[nd->a].decimal == WARP_DECIMAL_WIDE &&
				   p->cols[nd->a].type == WT_NUMERIC)) ||
				p->cols[nd->a].scale != nd->scale)
				return "numeric node over a column that is not numeric";
			return NULL;
		case WN_CONST:
			{
				/* |value| < 10^38 (the engine's bound) */
				warp_int128 v = warp_node_numeric_const(nd),
							lim = 1;
				int			k;

				for (k = 0; k < 38; k++)
					lim *= 10;
				if (v >= lim || v <= -lim)
					return "numeric constant beyond 38 digits";
				return NULL;
			}
		case WN_ARITH:
			{
				int			sa = p->nodes[nd->a].scale,
							sb = p->nodes[nd->b].scale;

				if (!IS_NUM(p, nd->a) || !IS_NUM(p, nd->b))
					return "numeric arithmetic on other types";
				if (nd->sub == WARP_ARITH_MUL ? nd->scale != sa + sb :
					(nd->sub == WARP_ARITH_ADD || nd->sub == WARP_ARITH_SUB) ?
					nd->scale != (sa > sb ? sa : sb) : true)
					return "bad numeric arithmetic";
				return NULL;
			}
		case WN_NEG:
			if (!IS_NUM(p, nd->a) || p->nodes[nd->a].scale != nd->scale)
				return "bad numeric negation";
			return NULL;
		case WN_DATETIME:
			/* extract() anywhere: the field's unscaled value at its scale */
			if (!(nd->flags & WARP_DT_EXTRACT) ||
				nd->scale != warp_dt_extract_scale((WarpDtField) nd->sub,
												   p->nodes[nd->a].type == WT_TIMESTAMP))
				return "bad numeric extract()";
			return NULL;
		case WN_CAST:
			if (kind_of(p, nd->a) != 0 || nd->scale != 0 || p->nodes[nd->a].type == WT_BOOL ||
				p->nodes[nd->a].type == WT_DATE || p->nodes[nd->a].type == WT_TIMESTAMP)
				return "bad cast to numeric";
			return NULL;
		case WN_CASE:
		case WN_COALESCE:
			/* the values: numeric at the node's scale (checked with the
			 * argument list below) */
			return NULL;
		default:
			return "numeric result of an operation the engine does not compute in numeric";
	}
}

static bool
node_ok(const WarpProgram *p, warp_int32 n, warp_int32 before)
{
	return n >= 0 && n < p->nnodes && n < before;
}

static bool
is_boolish(const WarpProgram *p, warp_int32 n)
{
	return p->nodes[n].type == WT_BOOL;
}

/* the counts, the IN set values, row mode and top-N */
static const char *
validate_counts(const WarpProgram *p)
{
	if (p->version != WARP_PROGRAM_VERSION)
		return "program version mismatch";
	if (p->ncols < 0 || p->nnodes < 0 || p->nargs < 0 || p->nquals < 0 ||
		p->njoins < 0 || p->nkeys < 0 || p->naggs < 0)
		return "negative count";
	if (p->nsetvals < 0 || (p->nsetvals > 0 && p->setvals == NULL))
		return "bad IN set values";
	if (p->nkeys > 64)
		return "too many group keys";
	if (p->emit_rows != 0 && (p->emit_rows != 1 || p->naggs != 0))
		return "row mode with aggregates";
	if (p->topn_limit < 0 ||
		(p->topn_limit > 0 &&
		 (!p->emit_rows || p->topn_key < 0 || p->topn_key >= p->nkeys ||
		  p->keys[p->topn_key].kind != WG_FACT || p->keys[p->topn_key].node < 0 ||
		  p->keys[p->topn_key].node >= p->nnodes)))
		return "top-N on a key that is not a fact key of a row-mode program";
	if (p->topn_limit > 0 && p->nodes[p->keys[p->topn_key].node].op == WN_COL &&
		p->nodes[p->keys[p->topn_key].node].a >= 0 &&
		p->nodes[p->keys[p->topn_key].node].a < p->ncols &&
		p->cols[p->nodes[p->keys[p->topn_key].node].a].text == WARP_TEXT_KEY)
		return "top-N on a text key (its values are ids, not in the text's order)";
	return NULL;
}

/* WN_ARITH, WN_CMP, WN_DISTINCT, WN_NULLIF: a and b */
static const char *
validate_binary_node(const WarpProgram *p, warp_int32 i, const WarpNode *nd)
{
	if (!node_ok(p, nd->a, i) || !node_ok(p, nd->b, i))
		return "argument index out of range";
	if (kind_of(p, nd->a) != kind_of(p, nd->b))
		return "argument kinds differ";
	if ((nd->op == WN_DISTINCT || nd->op == WN_NULLIF) && IS_NUM(p, nd->a))
		return "numeric IS DISTINCT FROM or NULLIF";
	if (nd->op == WN_ARITH && (KIND_FLOAT(p, i) != KIND_FLOAT(p, nd->a) ||
							   nd->sub > WARP_ARITH_MOD ||
							   nd->type == WT_BOOL || nd->type == WT_DATE ||
							   nd->type == WT_TIMESTAMP))
		return "bad arithmetic";
	if (nd->op == WN_ARITH && KIND_FLOAT(p, i) && nd->sub == WARP_ARITH_MOD)
		return "float modulo";
	if (nd->op == WN_CMP && (nd->sub > WARP_CMP_GE || nd->type != WT_BOOL))
		return "bad comparison";
	if ((nd->op == WN_DISTINCT) && nd->type != WT_BOOL)
		return "bad DISTINCT";
	if (nd->op == WN_NULLIF && KIND_FLOAT(p, i) != KIND_FLOAT(p, nd->a))
		return "bad NULLIF";
	return NULL;
}

/* WN_NEG, WN_NOT, WN_IS_NULL, WN_IS_NOT_NULL, WN_CAST: a */
static const char *
validate_unary_node(const WarpProgram *p, warp_int32 i, const WarpNode *nd)
{
	if (!node_ok(p, nd->a, i))
		return "argument index out of range";
	if (nd->op == WN_NEG && (KIND_FLOAT(p, i) != KIND_FLOAT(p, nd->a) ||
							 nd->type == WT_BOOL || nd->type == WT_DATE ||
							 nd->type == WT_TIMESTAMP))
		return "bad negation";
	if (nd->op == WN_NOT && (!is_boolish(p, nd->a) || nd->type != WT_BOOL))
		return "NOT of a non-boolean";
	if (nd->op == WN_CAST && (nd->type == WT_BOOL || nd->type == WT_DATE ||
							  nd->type == WT_TIMESTAMP))
		return "unsupported cast";
	if (nd->op == WN_CAST && IS_NUM(p, nd->a))
		return "cast from numeric";
	return NULL;
}

/* WN_IN_SET: a, and its sorted set of values */
static const char *
validate_in_set_node(const WarpProgram *p, warp_int32 i, const WarpNode *nd)
{
	warp_int32	j;

	if (!node_ok(p, nd->a, i))
		return "argument index out of range";
	if (nd->type != WT_BOOL || kind_of(p, nd->a) != 0 || IS_NUM(p, nd->a) ||
		nd->nargs < 1 || nd->args_off < 0 || nd->args_off > p->nsetvals - nd->nargs ||
		(nd->flags & ~(WARP_IN_NOT | WARP_IN_HAS_NULL)) != 0)
		return "bad IN set";
	for (j = 1; j < nd->nargs; j++)
		if (p->setvals[nd->args_off + j - 1] >= p->setvals[nd->args_off + j])
			return "IN set not sorted";
	return NULL;
}

/* WN_AND, WN_OR, WN_CASE, WN_COALESCE: the argument list */
static const char *
validate_list_node(const WarpProgram *p, warp_int32 i, const WarpNode *nd)
{
	warp_int32	j;

	if (nd->nargs < 1 || nd->args_off < 0 ||
		nd->args_off > p->nargs - nd->nargs)
		return "argument list out of range";
	for (j = 0; j < nd->nargs; j++)
	{
		warp_int32	a = p->args[nd->args_off + j];

		if (!node_ok(p, a, i))
			return "argument index out of range";
		if (nd->op == WN_AND || nd->op == WN_OR)
		{
			if (!is_boolish(p, a))
				return "AND/OR of a non-boolean";
		}
		else if (nd->op == WN_CASE && (j % 2) == 0 &&
				 !(j == nd->nargs - 1 && (nd->flags & WARP_CASE_HAS_ELSE)))
		{
			if (!is_boolish(p, a))
				return "CASE condition is not boolean";
		}
		else if (kind_of(p, a) != kind_of(p, i))
			return "CASE/COALESCE result kind mismatch";
		else if (IS_NUM(p, i) && p->nodes[a].scale != nd->scale)
			return "numeric CASE/COALESCE value of another scale";
	}
	if (nd->op == WN_CASE &&
		(nd->nargs % 2) != ((nd->flags & WARP_CASE_HAS_ELSE) ? 1 : 0))
		return "CASE argument count";
	return NULL;
}

/* WN_DATETIME: date/time arithmetic, conversions and fields */
static const char *
validate_datetime_node(const WarpProgram *p, warp_int32 i, const WarpNode *nd)
{
	int			f = nd->flags & (WARP_DT_TRUNC | WARP_DT_EXTRACT |
								 WARP_DT_PART | WARP_DT_CAST);
	WarpType	at;

	if (!node_ok(p, nd->a, i))
		return "argument index out of range";
	at = (WarpType) p->nodes[nd->a].type;
	if (nd->flags == WARP_DT_ARITH)
	{
		WarpType	bt;

		if (!node_ok(p, nd->b, i))
			return "argument index out of range";
		bt = (WarpType) p->nodes[nd->b].type;
		if (WARP_DTA_IS_INTERVAL(nd->sub))
		{
			/* a + the node's interval (b is a) */
			if (nd->b != nd->a ||
				at != (nd->sub == WARP_DTA_DATE_PL_INTERVAL ? WT_DATE : WT_TIMESTAMP) ||
				nd->type != WT_TIMESTAMP)
				return "bad interval arithmetic";
			return NULL;
		}
		if (nd->sub >= WARP_DTA_COUNT ||
			(nd->sub == WARP_DTA_DATE_MI ? at != WT_DATE || bt != WT_DATE :
			 at != WT_DATE || bt != WT_INT4) ||
			nd->type != (nd->sub == WARP_DTA_DATE_MI ? WT_INT4 : WT_DATE))
			return "bad date arithmetic";
		return NULL;
	}
	if (f == WARP_DT_CAST)
	{
		static const warp_uint8 from[WARP_DTC_COUNT] = {
			WT_DATE, WT_TIMESTAMP, WT_TIMESTAMP, WT_TIMESTAMP, WT_DATE, WT_TIMESTAMP
		};
		static const warp_uint8 to[WARP_DTC_COUNT] = {
			WT_TIMESTAMP, WT_TIMESTAMP, WT_DATE, WT_TIMESTAMP, WT_TIMESTAMP, WT_DATE
		};

		if (nd->sub >= WARP_DTC_COUNT || (nd->flags & WARP_DT_TZ) ||
			at != from[nd->sub] || nd->type != to[nd->sub])
			return "bad date/time conversion";
		if ((nd->flags & WARP_DT_SATURATE) &&
			nd->sub != WARP_DTC_DATE_TIMESTAMP &&
			nd->sub != WARP_DTC_DATE_TIMESTAMPTZ &&
			nd->sub != WARP_DTC_TIMESTAMP_TIMESTAMPTZ)
			return "bad date/time conversion";
		return NULL;
	}
	if (nd->sub >= WARP_DT_FIELD_COUNT || (at != WT_DATE && at != WT_TIMESTAMP))
		return "bad date/time field or argument";
	if ((nd->flags & WARP_DT_TZ) && at != WT_TIMESTAMP)
		return "bad date/time field or argument";
	if (f == WARP_DT_TRUNC ? nd->type != WT_TIMESTAMP || at != WT_TIMESTAMP :
		f == WARP_DT_EXTRACT ? nd->type != WT_INT8 && nd->type != WT_NUMERIC :
		f == WARP_DT_PART ? nd->type != WT_FLOAT8 : true)
		return "bad date/time operation";
	return NULL;
}

/* node i: its type, its arguments by operation, and a numeric result */
static const char *
validate_node(const WarpProgram *p, warp_int32 i)
{
	const WarpNode *nd = &p->nodes[i];
	const char *bad = NULL;

	if (nd->type > WT_NUMERIC)
		return "bad node type";
	switch (warp_op_arity(nd->op))
	{
		case WARP_ARITY_NONE:
			if (nd->op == WN_COL)
			{
				if (nd->a < 0 || nd->a >= p->ncols)
					return "column index out of range";
				if (nd->type != WT_NUMERIC &&
					(KIND_FLOAT(p, i) != WARP_TYPE_IS_FLOAT(p->cols[nd->a].type) ||
					 p->cols[nd->a].type == WT_NUMERIC))
					return "column kind mismatch";
			}
			break;
		case WARP_ARITY_BINARY:
			bad = validate_binary_node(p, i, nd);
			break;
		case WARP_ARITY_UNARY:
			bad = validate_unary_node(p, i, nd);
			break;
		case WARP_ARITY_SET:
			bad = validate_in_set_node(p, i, nd);
			break;
		case WARP_ARITY_LIST:
			bad = validate_list_node(p, i, nd);
			break;
		case WARP_ARITY_DATETIME:
			bad = validate_datetime_node(p, i, nd);
			break;
		default:
			return "unknown operation";
	}
	if (bad)
		return bad;
	if (nd->type == WT_NUMERIC)
		return numeric_node_problem(p, nd);
	return NULL;
}

/* the string table and every column's text and numeric form */
static const char *
validate_columns(const WarpProgram *p)
{
	warp_int32	i;

	if (p->nstrings < 0 || p->nstrbytes < 0 ||
		(p->nstrings > 0 && p->strings == NULL) || (p->nstrbytes > 0 && p->strbytes == NULL))
		return "bad string table";
	for (i = 0; i < p->nstrings; i++)
		if (p->strings[i].off < 0 || p->strings[i].len < 0 ||
			p->strings[i].off > p->nstrbytes - p->strings[i].len)
			return "string outside the string table";
	for (i = 0; i < p->ncols; i++)
	{
		const WarpColumnSpec *c = &p->cols[i];

		if (c->text && (c->decimal || c->str_first < 0 || c->str_count < 0 ||
						c->str_first > p->nstrings - c->str_count))
			return "bad text column";
		if ((c->text == WARP_TEXT_EQ || c->text == WARP_TEXT_KEY) && c->type != WT_INT8)
			return "bad text column";
		if (c->text == WARP_TEXT_LIKE && (c->type != WT_BOOL || c->str_count != 1))
			return "bad LIKE column";
		if (c->text == WARP_TEXT_CMP &&
			(c->type != WT_BOOL || c->str_count != 1 ||
			 c->cmp < WARP_CMP_LT || c->cmp > WARP_CMP_GE))
			return "bad text comparison column";
		if (c->text > WARP_TEXT_CMP)
			return "bad text column";
		if (c->bpchar > 1 || (c->bpchar && (c->text == 0 || c->text == WARP_TEXT_LIKE)))
			return "bad character(n) column";
		if (c->decimal > WARP_DECIMAL_WIDE ||
			(c->decimal == 1 && (c->type != WT_INT8 || c->precision > 18 || c->scale > 18)) ||
			(c->decimal == WARP_DECIMAL_WIDE &&
			 (c->type != WT_NUMERIC || c->precision < 19 || c->precision > 38 ||
			  c->scale > c->precision)) ||
			(c->type == WT_NUMERIC && c->decimal != WARP_DECIMAL_WIDE))
			return "bad numeric column";
		if (c->native && (c->text || c->decimal))
			return "native column of text or numeric";
	}
	return NULL;
}

/* the quals, the join keys and the group keys */
static const char *
validate_roots(const WarpProgram *p)
{
	warp_int32	i;

	for (i = 0; i < p->nquals; i++)
		if (!node_ok(p, p->quals[i], p->nnodes) || !is_boolish(p, p->quals[i]))
			return "bad qual";
	for (i = 0; i < p->njoins; i++)
		if (!node_ok(p, p->joins[i].key_node, p->nnodes) ||
			KIND_FLOAT(p, p->joins[i].key_node) || IS_NUM(p, p->joins[i].key_node) ||
			p->joins[i].table < 0 || p->joins[i].table >= p->njoins ||
			p->joins[i].kind < 0 || p->joins[i].kind >= WARP_JOIN_KIND_COUNT)
			return "bad join";
	for (i = 0; i < p->nkeys; i++)
	{
		const WarpGroupKey *k = &p->keys[i];

		if (k->kind == WG_FACT ? !node_ok(p, k->node, p->nnodes) || IS_NUM(p, k->node)
			: (k->kind != WG_DIM || k->join < 0 || k->join >= p->njoins ||
			   p->joins[k->join].kind == WARP_JOIN_SEMI ||
			   p->joins[k->join].kind == WARP_JOIN_ANTI))
			return "bad group key";
	}
	return NULL;
}

/* every aggregate's kind, argument and FILTER */
static const char *
validate_aggs(const WarpProgram *p)
{
	warp_int32	i;

	for (i = 0; i < p->naggs; i++)
	{
		const WarpAggSpec *a = &p->aggs[i];

		if (a->kind > WA_SUM_NUMERIC)
			return "bad aggregate";
		if (a->kind == WA_COUNT_STAR ? a->arg != -1 : !node_ok(p, a->arg, p->nnodes))
			return "bad aggregate argument";
		if (a->filter != -1 && (!node_ok(p, a->filter, p->nnodes) || !is_boolish(p, a->filter)))
			return "bad aggregate filter";
		if (a->arg >= 0)
		{
			bool		f = KIND_FLOAT(p, a->arg);

			if ((a->kind == WA_SUM_FLOAT || a->kind == WA_AVG_FLOAT) != f &&
				a->kind != WA_COUNT && a->kind != WA_MIN && a->kind != WA_MAX)
				return "aggregate argument kind";
			if ((a->kind == WA_SUM_NUMERIC) != IS_NUM(p, a->arg) &&
				a->kind != WA_COUNT && a->kind != WA_MIN && a->kind != WA_MAX)
				return "aggregate argument kind";
			if (a->type != p->nodes[a->arg].type)
				return "aggregate argument type";
		}
	}
	return NULL;
}

const char *
warp_program_validate(const WarpProgram *p)
{
	const char *bad;
	warp_int32	i;

	if ((bad = validate_counts(p)) != NULL)
		return bad;
	for (i = 0; i < p->ncols; i++)
		if (p->cols[i].type > WT_NUMERIC || p->cols[i].precision > 38 ||
			(p->cols[i].decimal && p->cols[i].scale > 38))
			return "bad column type";	/* the rest: "bad numeric column" below */
	for (i = 0; i < p->nnodes; i++)
		if ((bad = validate_node(p, i)) != NULL)
			return bad;
	if (!warp_tz_valid(&p->tz))
		return "bad time zone table";
	if ((bad = validate_columns(p)) != NULL ||
		(bad = validate_roots(p)) != NULL)
		return bad;
	return validate_aggs(p);
}

bool
warp_cmp_col_const(const WarpProgram *prog, int qn, int *colnode, int *constnode, int *op)
{
	const WarpNode *nd = &prog->nodes[qn];

	if (nd->op != WN_CMP)
		return false;
	*op = nd->sub;
	if (prog->nodes[nd->a].op == WN_COL && prog->nodes[nd->b].op == WN_CONST)
	{
		*colnode = nd->a;
		*constnode = nd->b;
		return true;
	}
	if (prog->nodes[nd->a].op != WN_CONST || prog->nodes[nd->b].op != WN_COL)
		return false;
	*colnode = nd->b;
	*constnode = nd->a;
	switch (*op)
	{
		case WARP_CMP_LT: *op = WARP_CMP_GT; break;
		case WARP_CMP_LE: *op = WARP_CMP_GE; break;
		case WARP_CMP_GT: *op = WARP_CMP_LT; break;
		case WARP_CMP_GE: *op = WARP_CMP_LE; break;
		default: break;
	}
	return true;
}

bool
warp_cmp_narrow(int op, warp_int64 c, warp_int64 *lo, warp_int64 *hi)
{
	switch (op)
	{
		case WARP_CMP_EQ:
			if (c > *lo)
				*lo = c;
			if (c < *hi)
				*hi = c;
			break;
		case WARP_CMP_LT:
			if (c == WARP_INT64_MIN)
				return false;
			if (c - 1 < *hi)
				*hi = c - 1;
			break;
		case WARP_CMP_LE:
			if (c < *hi)
				*hi = c;
			break;
		case WARP_CMP_GT:
			if (c == WARP_INT64_MAX)
				return false;
			if (c + 1 > *lo)
				*lo = c + 1;
			break;
		default:				/* WARP_CMP_GE */
			if (c > *lo)
				*lo = c;
			break;
	}
	return *lo <= *hi;
}
