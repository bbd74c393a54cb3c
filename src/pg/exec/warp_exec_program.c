/*
 * warp_exec_program.c — the engine program of a WarpPreAgg / WarpJoin
 * node, built at execution time (parameters evaluated now) from the fact
 * quals, join keys, group keys and aggregates the plan keeps
 * (warp_compile*.c compile the expressions), with the hidden aggregates
 * some PostgreSQL results need; and what each output column of the node
 * is (OutCol), worked out once from the program.
 *
 * Built after the dimensions (warp_exec_dims.c: a text join key maps to
 * the fact column's strings), run by the drivers (warp_exec_run.c,
 * warp_exec_heap.c or pg_warp_gpud).
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"

#include "exec/warp_exec_internal.h"

static struct OutCol *
out_columns(WarpScanState *ws)
{
	OutCol	   *oc = palloc0(sizeof(OutCol) * Max(list_length(ws->outmap), 1));
	ListCell   *lc;

	foreach(lc, ws->outmap)
	{
		OutCol	   *c = &oc[foreach_current_index(lc)];
		int			m = lfirst_int(lc);
		WarpPlanKey *ki;
		Expr	   *ke;

		if (m < 0)
		{
			c->kind = OC_AGG;
			c->key = -m - 1;
			continue;
		}
		ki = &ws->keys[m];
		ke = ki->expr;
		c->key = m;
		if (ki->kind == WG_DIM)
		{
			c->kind = OC_DIM;
			c->dim = &ws->dims[ki->join];
			c->col = ki->col;
		}
		else if (ki->case_index)
		{
			ListCell   *sc;

			c->kind = OC_STRINGS;
			c->nstrings = list_length(ki->strings);
			c->strings = palloc(sizeof(Datum) * Max(c->nstrings, 1));
			foreach(sc, ki->strings)
				c->strings[foreach_current_index(sc)] = CStringGetTextDatum(strVal(lfirst(sc)));
		}
		else if ((c->col = warp_group_key_text_column(&ws->prog, ws->prog.keys[m].node)) >= 0)
		{
			c->kind = OC_TEXT;
			/* character(n): the engine's string lost its padding */
			c->type = exprType((Node *) ke);
			c->scale = exprTypmod((Node *) ke);
		}
		else if (exprType((Node *) ke) == NUMERICOID)
		{
			/* a numeric column or extract(): its unscaled value at the
			 * column's (field's) scale */
			c->kind = OC_NUMERIC;
			c->scale = warp_group_key_numeric_scale(ke);
		}
		else
		{
			c->kind = OC_VALUE;
			c->type = exprType((Node *) ke);
		}
	}
	return oc;
}

/*
 * ORDER BY ... LIMIT in the node: let the driver drop rows by the first
 * ORDER BY item too (WarpProgram.topn_limit), where that is a fact column
 * whose engine values order as PostgreSQL's operator does: integers, bool,
 * date, timestamp(tz), floats (NaN last, -0 = 0) and numeric (scaled
 * integers of one scale) under the type's default ordering.  Text (ids)
 * and dimension columns (payload ids) are left to warp_topn.c.
 */
static void
set_topn_prefilter(WarpScanState *ws, WarpProgram *p)
{
	const WarpTopNKey *k = &ws->topn_keys[0];
	const OutCol *c = &ws->out_cols[k->col];
	Oid			type = c->kind == OC_NUMERIC ? NUMERICOID : c->type;
	TypeCacheEntry *tc;

	if (c->kind != OC_VALUE && c->kind != OC_NUMERIC)
		return;
	tc = lookup_type_cache(type, TYPECACHE_LT_OPR | TYPECACHE_GT_OPR);
	if (k->sortop != tc->lt_opr && k->sortop != tc->gt_opr)
		return;
	p->topn_limit = ws->topn_bound;
	p->topn_key = c->key;
	p->topn_desc = k->sortop == tc->gt_opr ? 1 : 0;
	p->topn_nulls_first = k->nulls_first ? 1 : 0;
}

#define COMPILE(b, dst, expr) \
	do { \
		(dst) = warp_compile_expr((b), (Expr *) (expr)); \
		if ((dst) < 0) \
			elog(ERROR, "pg_warp: could not build the program: %s", (b)->why_not); \
	} while (0)

/* The program's fact quals, its joins' fact keys and its group keys. */
static void
program_quals_joins_keys(WarpScanState *ws, WarpBuilder *b, WarpProgram *p)
{
	ListCell   *lc;
	int			i;

	p->nquals = list_length(ws->quals);
	p->quals = palloc(sizeof(int32) * Max(p->nquals, 1));
	i = 0;
	foreach(lc, ws->quals)
	{
		p->quals[i] = warp_compile_qual(b, (Expr *) lfirst(lc));
		if (p->quals[i] < 0)
			elog(ERROR, "pg_warp: could not build the program: %s", b->why_not);
		i++;
	}
	p->njoins = ws->ndims;
	p->joins = palloc(sizeof(WarpJoinSpec) * Max(ws->ndims, 1));
	for (i = 0; i < ws->ndims; i++)
	{
		WarpDim    *d = &ws->dims[i];

		if (d->text_key)
		{
			/* the fact column's value: which dimension key string it equals */
			int		   *map = palloc(sizeof(int) * Max(d->nkstr, 1));
			int64		r;

			p->joins[i].key_node = warp_compile_text_join_key(b, (Expr *) d->fact_key,
															  d->nkstr, (const char *const *) d->kstr,
															  d->kstr_len, map);
			if (p->joins[i].key_node < 0)
				elog(ERROR, "pg_warp: could not build the program: %s", b->why_not);
			d->probe_keys = palloc(sizeof(int64) * Max(d->rows, 1));
			for (r = 0; r < d->rows; r++)
				d->probe_keys[r] = map[d->keys[r]];
		}
		else
		{
			COMPILE(b, p->joins[i].key_node, d->fact_key);
			d->probe_keys = NULL;
		}
		p->joins[i].table = i;
		p->joins[i].kind = d->kind;
	}
	p->nkeys = ws->nkeys;
	p->keys = palloc0(sizeof(WarpGroupKey) * Max(p->nkeys, 1));
	i = 0;
	for (int kx = 0; kx < ws->nkeys; kx++)
	{
		WarpPlanKey *ki = &ws->keys[kx];

		p->keys[i].kind = ki->kind;
		if (p->keys[i].kind == WG_FACT)
		{
			p->keys[i].node = warp_compile_group_key(b, ki->expr);
			if (p->keys[i].node < 0)
				elog(ERROR, "pg_warp: could not build the program: %s", b->why_not);
		}
		else
			p->keys[i].join = ki->join;
		i++;
	}
}

/* The program's aggregates, the plan's (the hidden ones come after them). */
static void
program_aggregates(WarpScanState *ws, WarpBuilder *b, WarpProgram *p)
{
	int			i;

	/* room for a hidden max(display scale) per sum/avg (see below) */
	p->naggs = ws->naggs;
	p->aggs = palloc0(sizeof(WarpAggSpec) * Max(2 * p->naggs, 1));
	ws->agg_scale_agg = palloc(sizeof(int) * Max(p->naggs, 1));
	ws->agg_square_agg = palloc(sizeof(int) * Max(p->naggs, 1));
	i = 0;
	for (int ax = 0; ax < ws->naggs; ax++)
	{
		WarpPlanAgg *ai = &ws->aggs[ax];
		WarpAggSpec *a = &p->aggs[i++];
		WarpType	t = WT_INT8;

		a->kind = ai->kind;
		if (a->kind == WARP_AGG_VAR_INT)
			a->kind = WA_SUM_INT8;	/* sum of x; the squares below */
		a->arg = -1;
		a->filter = -1;
		if (ai->arg && ai->argtype == NUMERICOID)
		{
			int			scale;

			a->arg = warp_compile_numeric_agg_arg(b, ai->arg, &scale);
			if (a->arg < 0)
				elog(ERROR, "pg_warp: could not build the program: %s", b->why_not);
		}
		else if (ai->arg)
			COMPILE(b, a->arg, ai->arg);
		if (ai->filter)
			COMPILE(b, a->filter, ai->filter);
		if (a->kind != WA_COUNT_STAR)
			warp_type_of(ai->argtype, &t);
		if (a->arg >= 0 && b->nodes[a->arg].type == WT_NUMERIC)
		{
			t = WT_NUMERIC;
			if (a->kind == WA_SUM_INT8)
				a->kind = WA_SUM_NUMERIC;
		}
		a->type = t;
		ws->agg_scale_agg[i - 1] = -1;
		ws->agg_square_agg[i - 1] = -1;
	}
}

/*
 * var/stddev of int2/int4 (WARP_AGG_VAR_INT): a hidden aggregate after
 * the real ones sums x::int8 * x::int8 under the same FILTER; the
 * state emitted is (N, sum, sum of squares)
 */
static void
program_var_squares(WarpScanState *ws, WarpBuilder *b, WarpProgram *p)
{
	int			i;

	i = 0;
	for (int ax = 0; ax < ws->naggs; ax++)
	{
		WarpPlanAgg *ai = &ws->aggs[ax];

		if (ai->kind == WARP_AGG_VAR_INT)
		{
			WarpAggSpec *h = &p->aggs[p->naggs];
			Oid			argtype = ai->argtype;
			Expr	   *wide = (Expr *) makeFuncExpr(argtype == INT2OID ? F_INT8_INT2 : F_INT8_INT4,
													 INT8OID, list_make1(ai->arg), InvalidOid,
													 InvalidOid, COERCE_IMPLICIT_CAST);
			Oid			mul = OpernameGetOprid(list_make1(makeString("*")), INT8OID, INT8OID);
			Expr	   *sq = make_opclause(mul, INT8OID, false, wide, copyObject(wide),
										   InvalidOid, InvalidOid);

			((OpExpr *) sq)->opfuncid = get_opcode(mul);
			h->kind = WA_SUM_INT8;
			h->type = WT_INT8;
			COMPILE(b, h->arg, sq);
			h->filter = p->aggs[i].filter;
			ws->agg_square_agg[i] = p->naggs++;
		}
		i++;
	}
}

/*
 * sum/avg of a numeric CASE/COALESCE whose values have different
 * display scales: PostgreSQL's result has the largest scale among the
 * values summed, which only the rows know.  A hidden aggregate after
 * the real ones, max() of the row's scale under the same FILTER, gives
 * it per group (agg_numeric_scale); hidden aggregates are never
 * emitted.
 */
static void
program_numeric_scales(WarpScanState *ws, WarpBuilder *b, WarpProgram *p)
{
	int			nreal = p->naggs;
	int			i;

	for (i = 0; i < nreal; i++)
	{
		WarpAggSpec *a = &p->aggs[i];

		if (a->kind == WA_SUM_NUMERIC && warp_node_dynamic_scale(b, a->arg))
		{
			WarpAggSpec *h = &p->aggs[p->naggs];

			h->kind = WA_MAX;
			h->type = WT_INT4;
			h->arg = warp_compile_scale_of(b, a->arg);
			h->filter = a->filter;
			ws->agg_scale_agg[i] = p->naggs++;
		}
	}
}
#undef COMPILE

void
warp_exec_build_program(WarpScanState *ws)
{
	WarpBuilder b;
	ExprContext *econtext = ws->css.ss.ps.ps_ExprContext;
	WarpProgram *p = &ws->prog;
	int			i;
	const char *bad;

	warp_builder_init(&b, ws->fact_relid, econtext);
	b.native_columns = ws->heap;
	memset(p, 0, sizeof(*p));
	p->version = WARP_PROGRAM_VERSION;
	p->emit_rows = ws->emit_rows ? 1 : 0;
	program_quals_joins_keys(ws, &b, p);
	program_aggregates(ws, &b, p);
	program_var_squares(ws, &b, p);
	program_numeric_scales(ws, &b, p);
	p->nnodes = b.nnodes;
	p->nodes = b.nodes;
	p->nargs = b.nargs;
	p->args = b.args;
	warp_builder_finish(&b, p);
	p->ncols = b.ncols;
	p->cols = b.cols;
	ws->col_attno = b.col_attno;
	/* a heap fact table's text columns come as Utf8 arrays (warp_exec_run_cpu_heap) */
	for (i = 0; i < p->ncols; i++)
		if (p->cols[i].text)
			p->cols[i].native = 0;
	ws->out_cols = out_columns(ws);
	if (ws->topn)
		set_topn_prefilter(ws, p);
	bad = warp_program_validate(p);
	if (bad)
		elog(ERROR, "pg_warp: invalid program: %s", bad);
}
