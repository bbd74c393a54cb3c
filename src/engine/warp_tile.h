/*-------------------------------------------------------------------------
 *
 * warp_tile.h
 *	  The tile path: programs of the common analytic shape -- quals that
 *	  are all column ranges, inner joins on a key of integer-valued fact
 *	  columns and arithmetic, group keys from the dimensions or such
 *	  expressions, integer aggregates -- evaluated without the row
 *	  evaluator's memo.  Each expression becomes a short tape of steps
 *	  whose values live in registers, so the GPU kernel
 *	  (src/gpud/warp_gpu_tile.cu) runs several rows per thread with
 *	  coalesced loads and pre-aggregates in shared memory, paying the
 *	  interpretation per tile rather than per row.
 *
 *	  The semantics stay the row evaluator's: columns are read by
 *	  warp_row_fetch, arithmetic by warp_row_arith_int, casts by the
 *	  same range checks, the prefilter by warp_row_prefilter, probes by
 *	  warp_join_lookup, groups by warp_row_group and aggregate updates by
 *	  warp_row_agg_update; and the order of evaluation is warp_row_run's
 *	  (quals, every join key, the probes, then group keys and aggregate
 *	  arguments of the joined rows), so a row that would fail there fails
 *	  here with the same status.  warp_tile_plan (warp_tile.c) decides
 *	  whether a program has this shape.
 *
 * Pure C (also valid C++ for nvcc); no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_TILE_H
#define WARP_TILE_H

#include "warp_row.h"

#define WARP_TILE_MAX_STEPS 48
#define WARP_TILE_MAX_TAPE 8	/* steps of one expression */
/* smaller than the row evaluator's limits: the per-row arrays live in
 * each thread's registers or stack */
#define WARP_TILE_MAX_JOINS 8
#define WARP_TILE_MAX_KEYS 8
#define WARP_TILE_MAX_AGGS 8

/* one step of an expression tape: a value from a column, a constant or
 * earlier steps of the same tape (a, b are positions in the tape) */
typedef struct WarpTileStep
{
	warp_uint8	op;				/* WN_COL, WN_CONST, WN_ARITH, WN_NEG, WN_CAST */
	warp_uint8	type;			/* WarpType of the result (integer-like) */
	warp_uint8	sub;			/* WN_ARITH: WARP_ARITH_* */
	warp_uint8	a;
	warp_uint8	b;
	warp_uint8	pad[3];
	warp_int32	col;			/* WN_COL: program column */
	warp_int32	pad2;
	warp_int64	ival;			/* WN_CONST */
} WarpTileStep;

/* an expression: steps [first, first + len) of WarpTilePlan.steps, its
 * value the last one's */
typedef struct WarpTileExpr
{
	warp_int16	first;
	warp_int16	len;
} WarpTileExpr;

typedef struct WarpTilePlan
{
	warp_int32	ok;				/* the program has the tile shape */
	warp_int32	njoins;
	warp_int32	nkeys;
	warp_int32	naggs;
	WarpTileExpr join_key[WARP_TILE_MAX_JOINS];
	WarpTileExpr key[WARP_TILE_MAX_KEYS];	/* WG_FACT keys (len 0: WG_DIM) */
	WarpTileExpr arg[WARP_TILE_MAX_AGGS];	/* len 0: count(*) */
	warp_int32	nsteps;
	WarpTileStep steps[WARP_TILE_MAX_STEPS];
} WarpTilePlan;

/*
 * Whether program p has the tile shape; if so, fill *plan (else why says
 * what is missing, for the daemon's log).
 */
extern bool warp_tile_plan(const WarpProgram *p, WarpTilePlan *plan, char *why, size_t whylen);

/*
 * Evaluate expression e for row `row`: WARP_OK with *v and *isnull, or
 * the status the row evaluator would give for the same row.
 */
WARP_FN_INLINE int
warp_tile_eval(const WarpRowEnv *env, const WarpTilePlan *tp, WarpTileExpr e,
			   warp_int64 row, warp_int64 *v, bool *isnull)
{
	warp_int64	val[WARP_TILE_MAX_TAPE];
	warp_uint8	nul[WARP_TILE_MAX_TAPE];
	int			i;

	for (i = 0; i < e.len; i++)
	{
		const WarpTileStep *sp = &tp->steps[e.first + i];
		int			st = WARP_OK;
		bool		n = false;
		warp_int64	r = 0;

		switch (sp->op)
		{
			case WN_COL:
				st = warp_row_fetch(env, sp->col, row, &r, &n);
				break;
			case WN_CONST:
				r = sp->ival;
				break;
			case WN_ARITH:
				n = nul[sp->a] || nul[sp->b];
				if (!n)
					st = warp_row_arith_int(sp->type, sp->sub, val[sp->a], val[sp->b], &r);
				break;
			case WN_NEG:
				n = nul[sp->a];
				if (!n)
					st = warp_row_arith_int(sp->type, WARP_ARITH_SUB, 0, val[sp->a], &r);
				break;
			default:			/* WN_CAST between integer types */
				n = nul[sp->a];
				if (!n)
				{
					r = val[sp->a];
					if (sp->type == WT_INT4)
					{
						warp_int32	x = 0;

						st = warp_int4_check(r, &x);
						r = x;
					}
					else if (sp->type == WT_INT2)
					{
						warp_int16	x = 0;

						st = warp_int2_check(r, &x);
						r = x;
					}
				}
				break;
		}
		if (st != WARP_OK)
			return st;
		val[i] = n ? 0 : r;
		nul[i] = n;
	}
	*v = val[e.len - 1];
	*isnull = nul[e.len - 1];
	return WARP_OK;
}

/*
 * Row `row` up to its join partners: the prefilter (every qual), then
 * every join key, then the probes.  WARP_OK with *alive false when the row
 * is filtered out or finds no partner; with *passed whether it passed the
 * quals (EXPLAIN's rows filtered), and first[j] each join's build row.
 */
WARP_FN_INLINE int
warp_tile_probe(const WarpRowEnv *env, const WarpTilePlan *tp, warp_int64 row, bool *alive,
				bool *passed, warp_int32 *first)
{
	warp_int64	kv[WARP_TILE_MAX_JOINS];
	bool		kn[WARP_TILE_MAX_JOINS];
	int			j,
				st;

	*alive = false;
	*passed = false;
	if ((st = warp_row_prefilter(env, row, passed)) != WARP_OK || !*passed)
		return st;
	for (j = 0; j < tp->njoins; j++)
		if ((st = warp_tile_eval(env, tp, tp->join_key[j], row, &kv[j], &kn[j])) != WARP_OK)
			return st;
	for (j = 0; j < tp->njoins; j++)
	{
		first[j] = kn[j] ? -1 : warp_join_lookup(&env->tables[j], kv[j]);
		if (first[j] < 0)
			return WARP_OK;
	}
	*alive = true;
	return WARP_OK;
}

/*
 * A joined row's group: its keys (kv, kn) and, for a direct table, its
 * code; then each aggregate's input (iv, ok[a] false when NULL).  Unique
 * join keys only (warp_tile_plan), so one joined row per fact row.
 */
WARP_FN_INLINE int
warp_tile_emit_values(const WarpRowEnv *env, const WarpTilePlan *tp, const WarpRowGroups *g,
					  warp_int64 row, const warp_int32 *first, warp_int64 *kv, warp_uint8 *kn,
					  warp_int64 *code, warp_int64 *iv, warp_uint8 *ok)
{
	const WarpProgram *p = env->p;
	int			k,
				a,
				st;

	*code = 0;
	for (k = 0; k < tp->nkeys; k++)
	{
		bool		n = false;

		if (tp->key[k].len > 0)
		{
			if ((st = warp_tile_eval(env, tp, tp->key[k], row, &kv[k], &n)) != WARP_OK)
				return st;
			kn[k] = n;
			if (n)
				kv[k] = 0;
		}
	}
	for (a = 0; a < tp->naggs; a++)
	{
		bool		n = false;

		iv[a] = 0;
		ok[a] = 1;
		if (tp->arg[a].len > 0)
		{
			if ((st = warp_tile_eval(env, tp, tp->arg[a], row, &iv[a], &n)) != WARP_OK)
				return st;
			ok[a] = !n;
		}
	}
	for (k = 0; k < tp->nkeys; k++)
	{
		const WarpGroupKey *gk = &p->keys[k];

		if (gk->kind == WG_DIM)
		{
			warp_int32	pid = env->tables[gk->join].payload[first[gk->join]];

			kv[k] = pid;
			kn[k] = 0;
			if (g->direct)
				*code += pid * g->stride[k];
		}
	}
	return WARP_OK;
}

/*
 * A direct group table's keys for slot code (every key a payload id):
 * what warp_tile_emit_values gave the rows of that slot.
 */
WARP_FN_INLINE void
warp_tile_direct_keys(const WarpRowGroups *g, warp_int64 code, warp_int64 *kv, warp_uint8 *kn)
{
	int			k;

	for (k = 0; k < g->nkeys; k++)
	{
		kv[k] = (k == 0 ? code : code % g->stride[k - 1]) / g->stride[k];
		kn[k] = 0;
	}
}

/* a joined row's aggregate inputs into the states sa[0 .. naggs) */
WARP_FN_INLINE int
warp_tile_update(const WarpAggSpec *aggs, int naggs, WarpAggState *sa, const warp_int64 *iv,
				 const warp_uint8 *ok)
{
	int			a,
				st;

	for (a = 0; a < naggs; a++)
		if (ok[a] && (st = warp_row_agg_update(&aggs[a], &sa[a], iv[a], 0.0)) != WARP_OK)
			return st;
	return WARP_OK;
}

/* ... into its group of the table g (created if new) */
WARP_FN_INLINE int
warp_tile_aggregate(const WarpAggSpec *aggs, int naggs, const WarpRowGroups *g,
					const warp_int64 *kv, const warp_uint8 *kn, warp_int64 code,
					const warp_int64 *iv, const warp_uint8 *ok)
{
	warp_int64	slot = warp_row_group(g, kv, kn, code);

	if (slot < 0)
		return WARP_ROW_FULL;
	return warp_tile_update(aggs, naggs, &g->aggs[slot * naggs], iv, ok);
}

/*
 * Row `row` through the whole program into g, as warp_row_run does: the
 * host's form of the kernel's per-row work (the unit tests compare the two).
 */
WARP_FN int
warp_tile_run(const WarpRowEnv *env, const WarpTilePlan *tp, const WarpRowGroups *g,
			  warp_int64 row, WarpRowCounts *cnt)
{
	warp_int32	first[WARP_TILE_MAX_JOINS];
	warp_int64	kv[WARP_TILE_MAX_KEYS];
	warp_uint8	kn[WARP_TILE_MAX_KEYS];
	warp_int64	iv[WARP_TILE_MAX_AGGS];
	warp_uint8	ok[WARP_TILE_MAX_AGGS];
	warp_int64	code;
	bool		alive,
				passed;
	int			st;

	st = warp_tile_probe(env, tp, row, &alive, &passed, first);
	if (passed)
		cnt->rows_filtered++;
	if (st != WARP_OK || !alive)
		return st;
	if ((st = warp_tile_emit_values(env, tp, g, row, first, kv, kn, &code, iv, ok)) != WARP_OK)
		return st;
	cnt->rows_joined++;
	return warp_tile_aggregate(env->p->aggs, tp->naggs, g, kv, kn, code, iv, ok);
}

#endif							/* WARP_TILE_H */
