/*-------------------------------------------------------------------------
 *
 * warp_row_run.h
 *	  One row through the whole program in steps (begin, quals, join keys,
 *	  probes, emit), so that the GPU kernel can regroup the rows still
 *	  alive between them; warp_row_run() is the steps in order.  Built on
 *	  warp_row_eval.h (expressions) and warp_row_agg.h (groups).
 *
 * Pure C (also valid C++ for nvcc); no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_ROW_RUN_H
#define WARP_ROW_RUN_H

#include "warp_row_agg.h"
#include "warp_row_eval.h"

/* ----------------------------------------------------------------- a row */

/*
 * A row goes through the program in steps, so that the GPU kernel can
 * regroup the rows still alive between them (warp_gpu_kernels.cu): begin, quals,
 * join keys, one probe per join, emit.  warp_row_run() is the steps in
 * order for one row.  The node memo (s) carries a row from one step to the
 * next, whichever thread runs the step.  Each step returns WARP_OK or the
 * status of a problem: a WarpStatus error, WARP_ROW_LOAD, WARP_ROW_BAD or
 * WARP_ROW_FULL; the whole query then needs the CPU driver (the states the
 * row already touched are not meaningful any more).
 */

/*
 * Put every constant's value into the memo of s's scratch, once before its
 * first row (warp_row_begin leaves constants alone): so a constant is
 * never stepped, and a row resets only the nodes it computes.
 */
WARP_FN void
warp_row_prepare(const WarpProgram *p, WarpRowState *s)
{
	int			i;

	for (i = 0; i < p->nnodes; i++)
	{
		const WarpNode *nd = &p->nodes[i];

		if (nd->op != WN_CONST)
			WRS_ST(s, i) = 0;
		else if (nd->flags & WARP_NODE_NULL)
			WRS_ST(s, i) = 2;
		else if (WARP_TYPE_IS_FLOAT(nd->type))
			warp_row_set_float(s, i, nd->fval);
		else
			warp_row_set_int(s, i, nd->ival);
	}
}

/* start row `row`: nothing evaluated yet but the constants */
WARP_FN void
warp_row_begin(const WarpProgram *p, WarpRowState *s, warp_int64 row)
{
	int			i;

	s->row = row;
	for (i = 0; i < p->nnodes; i++)
		if (p->nodes[i].op != WN_CONST)
			WRS_ST(s, i) = 0;
}

/*
 * The quals env->pre decides, for row `row`, before warp_row_begin: *pass
 * whether they all hold.  Each range loads its column and tests it only
 * while the ones before it passed, as the quals would (so a value the row
 * evaluator cannot load fails here iff it fails there).
 */
WARP_FN int
warp_row_prefilter(const WarpRowEnv *env, warp_int64 row, bool *pass)
{
	const WarpRowPre *pre = &env->pre;
	int			k;

	*pass = false;
	for (k = 0; k < pre->n; k++)
	{
		warp_int64	v = 0;
		bool		isnull;
		int			st = warp_row_fetch(env, pre->col[k], row, &v, &isnull);

		if (st != WARP_OK)
			return st;
		if (isnull || pre->never[k] ||
			(warp_uint64) v - (warp_uint64) pre->lo[k] > pre->width[k])
			return WARP_OK;
	}
	*pass = true;
	return WARP_OK;
}

/*
 * The quals from the first that env->pre does not decide, in order, each
 * only while all earlier ones passed.
 */
WARP_FN int
warp_row_quals(const WarpRowEnv *env, WarpRowState *s, bool *pass)
{
	const WarpProgram *p = env->p;
	int			i,
				st;

	*pass = false;
	for (i = env->pre.nquals; i < p->nquals; i++)
	{
		int			q = p->quals[i];

		if ((st = warp_row_eval(env, s, q)) != WARP_OK)
			return st;
		if (WRS_ST(s, q) != 1 || WRS_V(s, q) == 0)
			return WARP_OK;
	}
	*pass = true;
	return WARP_OK;
}

/* every join key, before any probe (as the CPU driver does) */
WARP_FN int
warp_row_join_keys(const WarpRowEnv *env, WarpRowState *s)
{
	const WarpProgram *p = env->p;
	int			i,
				st;

	for (i = 0; i < p->njoins; i++)
	{
		int			kn = p->joins[i].key_node;

		/* a column key (the usual one) loaded without the stack */
		if (WRS_ST(s, kn) == 0 && p->nodes[kn].op == WN_COL)
			st = warp_row_load(env, s, kn, p->nodes[kn].a);
		else
			st = warp_row_eval(env, s, kn);
		if (st != WARP_OK)
			return st;
	}
	return WARP_OK;
}

/*
 * Probe join j (its key evaluated): whether the row goes on, and *first,
 * the first matching build row, or -1 (a semi or anti join's row goes on
 * with no build row; a left join's miss is the NULL-extended row).
 */
WARP_FN bool
warp_row_probe(const WarpRowEnv *env, const WarpRowState *s, int j, warp_int32 *first)
{
	int			kn_ = env->p->joins[j].key_node;
	int			kind = env->p->joins[j].kind;
	warp_int32	r = WRS_ST(s, kn_) != 1 ? -1 :	/* NULL never matches */
		warp_join_lookup(&env->tables[j], WRS_V(s, kn_));

	*first = -1;
	if (kind == WARP_JOIN_SEMI || kind == WARP_JOIN_ANTI)
		return (r >= 0) == (kind == WARP_JOIN_SEMI);
	if (r < 0 && kind == WARP_JOIN_INNER)
		return false;
	*first = r;
	return true;
}

/*
 * A row that passed the quals and every probe (first[j] from probe j):
 * group keys, FILTERs and arguments once, then for every combination of
 * matching build rows its group and aggregate updates.
 */
WARP_FN int
warp_row_emit(const WarpRowEnv *env, WarpRowState *s, const WarpRowGroups *g,
			  const warp_int32 *first, WarpRowCounts *cnt)
{
	const WarpProgram *p = env->p;
	warp_int32	cur[WARP_ROW_MAX_JOINS];
	warp_int64	kv[WARP_ROW_MAX_KEYS];
	warp_uint8	kn[WARP_ROW_MAX_KEYS];
	warp_uint8	ok[WARP_ROW_MAX_AGGS];
	int			i,
				st;

	for (i = 0; i < p->njoins; i++)
		cur[i] = first[i];

	/* group keys from the fact row, then FILTER and argument per aggregate */
	for (i = 0; i < p->nkeys; i++)
	{
		const WarpGroupKey *gk = &p->keys[i];

		if (gk->kind != WG_FACT)
			continue;
		if ((st = warp_row_eval(env, s, gk->node)) != WARP_OK)
			return st;
		kn[i] = WRS_ST(s, gk->node) == 2;
		kv[i] = kn[i] ? 0 : WRS_V(s, gk->node);
	}
	for (i = 0; i < p->naggs; i++)
	{
		const WarpAggSpec *ag = &p->aggs[i];

		ok[i] = 1;
		if (ag->filter >= 0)
		{
			if ((st = warp_row_eval(env, s, ag->filter)) != WARP_OK)
				return st;
			ok[i] = WRS_ST(s, ag->filter) == 1 && WRS_V(s, ag->filter) != 0;
		}
		if (ok[i] && ag->arg >= 0)
		{
			if ((st = warp_row_eval(env, s, ag->arg)) != WARP_OK)
				return st;
			ok[i] = WRS_ST(s, ag->arg) == 1;
		}
	}

	/* every combination of matching build rows is one joined row */
	for (;;)
	{
		warp_int64	code = 0;
		warp_int64	slot;

		cnt->rows_joined++;
		for (i = 0; i < p->nkeys; i++)
		{
			const WarpGroupKey *gk = &p->keys[i];

			if (gk->kind == WG_DIM)
			{
				const WarpJoinTable *gt = &env->tables[gk->join];
				warp_int32	pid = cur[gk->join] >= 0 ? gt->payload[cur[gk->join]]
					: gt->npayloads;

				kv[i] = pid;
				kn[i] = 0;
				if (g->direct)
					code += pid * g->stride[i];
			}
		}
		/* row mode under a Top-N: at least topn_limit rows come first */
		if (!g->topn_have ||
			warp_topn_cmp(&g->topn, kv[g->topn.key], kn[g->topn.key],
						  g->topn_val, g->topn_null) <= 0)
		{
			slot = warp_row_group(g, kv, kn, code);
			if (slot < 0)
				return WARP_ROW_FULL;
			for (i = 0; i < p->naggs; i++)
			{
				const WarpAggSpec *ag = &p->aggs[i];

				if (!ok[i])
					continue;
				st = warp_row_agg_update(ag, &g->aggs[slot * p->naggs + i],
										 ag->arg >= 0 ? WRS_V(s, ag->arg) : 0,
										 ag->arg >= 0 ? warp_row_bitsd(WRS_V(s, ag->arg)) : 0.0);
				if (st != WARP_OK)
					return st;
			}
		}

		/* next combination: an odometer over the duplicate-key chains
		 * (a join without a build row, -1, has a chain of one) */
		for (i = p->njoins - 1; i >= 0; i--)
		{
			if (cur[i] >= 0)
			{
				cur[i] = env->tables[i].next[cur[i]];
				if (cur[i] >= 0)
					break;
			}
			cur[i] = first[i];
		}
		if (i < 0)
			break;
	}
	return WARP_OK;
}

/*
 * Run fact row `row` through the program into the group table g.  WARP_OK
 * (the row was filtered out, found no join partner, or was aggregated), or
 * the status of the first problem.
 */
WARP_FN int
warp_row_run(const WarpRowEnv *env, WarpRowState *s, const WarpRowGroups *g,
			 warp_int64 row, WarpRowCounts *cnt)
{
	const WarpProgram *p = env->p;
	warp_int32	first[WARP_ROW_MAX_JOINS];
	bool		pass;
	int			i,
				st;

	if ((st = warp_row_prefilter(env, row, &pass)) != WARP_OK || !pass)
		return st;
	warp_row_begin(p, s, row);
	if ((st = warp_row_quals(env, s, &pass)) != WARP_OK || !pass)
		return st;
	cnt->rows_filtered++;
	if ((st = warp_row_join_keys(env, s)) != WARP_OK)
		return st;
	for (i = 0; i < p->njoins; i++)
		if (!warp_row_probe(env, s, i, &first[i]))
			return WARP_OK;
	return warp_row_emit(env, s, g, first, cnt);
}

#endif							/* WARP_ROW_RUN_H */
