/*-------------------------------------------------------------------------
 *
 * warp_cpu_create.c
 *	  Setting up the CPU driver (warp_cpu_create): every node's vectors,
 *	  the columns' load buffers and text tables, the joins' probe order,
 *	  the joined-row arrays and the group table, which grow here too
 *	  (cpu_grow_joined, cpu_groups_reserve).
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "warp_cpu_internal.h"
#include "warp_group_merge.h"

/* ---------------------------------------------------------------- setup */

static bool
alloc_joined(WarpCpu *x, warp_int64 cap)
{
	int			j;
	int			nj = x->p->njoins;

	x->ecap = cap;
	x->epos = xalloc(x, sizeof(warp_uint16) * cap);
	x->tpos = xalloc(x, sizeof(warp_uint16) * cap);
	x->egroup = xalloc(x, sizeof(warp_int64) * cap);
	x->ebrow = xalloc0(x, sizeof(warp_int32 *) * (nj + 1));
	x->tbrow = xalloc0(x, sizeof(warp_int32 *) * (nj + 1));
	if (!x->epos || !x->tpos || !x->egroup || !x->ebrow || !x->tbrow)
		return false;
	x->fsnap = NULL;
	if (x->nfloat > 0 &&
		!(x->fsnap = xalloc(x, sizeof(WarpAggState) * cap * x->nfloat)))
		return false;
	for (j = 0; j < nj; j++)
	{
		x->ebrow[j] = xalloc(x, sizeof(warp_int32) * cap);
		x->tbrow[j] = xalloc(x, sizeof(warp_int32) * cap);
		if (!x->ebrow[j] || !x->tbrow[j])
			return false;
	}
	return true;
}

/* grow the joined-row arrays, keeping n_e entries of e* and n_t of t* */
bool
cpu_grow_joined(WarpCpu *x, warp_int64 need, warp_int64 n_e, warp_int64 n_t)
{
	warp_int64	cap = x->ecap;
	warp_uint16 *oe = x->epos,
			   *ot = x->tpos;
	warp_int32 **oeb = x->ebrow,
			  **otb = x->tbrow;
	int			j;

	while (cap < need)
		cap *= 2;
	if (!alloc_joined(x, cap))
		return false;
	memcpy(x->epos, oe, sizeof(warp_uint16) * n_e);
	memcpy(x->tpos, ot, sizeof(warp_uint16) * n_t);
	for (j = 0; j < x->p->njoins; j++)
	{
		memcpy(x->ebrow[j], oeb[j], sizeof(warp_int32) * n_e);
		memcpy(x->tbrow[j], otb[j], sizeof(warp_int32) * n_t);
	}
	return true;
}

bool
cpu_groups_reserve(WarpCpu *x, warp_int64 need)
{
	const WarpProgram *p = x->p;
	warp_int64	cap = x->gcap ? x->gcap : 64;
	int			a;

	if (need <= x->gcap)
		return true;
	while (cap < need)
		cap *= 2;
	{
		warp_int64 *k = xalloc(x, sizeof(warp_int64) * cap * (p->nkeys + 1));
		warp_uint8 *kn = xalloc(x, cap * (p->nkeys + 1));

		if (!k || !kn)
			return false;
		if (x->ngroups)
		{
			memcpy(k, x->gkey, sizeof(warp_int64) * x->ngroups * p->nkeys);
			memcpy(kn, x->gnull, x->ngroups * p->nkeys);
		}
		x->gkey = k;
		x->gnull = kn;
	}
	for (a = 0; a < p->naggs; a++)
	{
		WarpAggState *s = xalloc(x, sizeof(WarpAggState) * cap);

		if (!s)
			return false;
		if (x->ngroups)
			memcpy(s, x->gagg[a], sizeof(WarpAggState) * x->ngroups);
		x->gagg[a] = s;
	}
	x->gcap = cap;
	return true;
}

/*
 * Fraction of fact keys expected to find a match: rows over key range for
 * a direct table (dense keys, as dimension keys are), 1 for a hash table
 * (unknown).  Duplicated keys multiply rows: probe those late.
 */
static double
join_hit_rate(const WarpJoinTable *t, int kind)
{
	if (kind == WARP_JOIN_LEFT)
		return t->unique ? 1.0 : 2.0;	/* never drops a row */
	if (kind == WARP_JOIN_ANTI)
		return 1.0;				/* unknown */
	if (!t->unique && kind == WARP_JOIN_INNER)
		return 2.0;
	if (t->direct && t->nrows > 0)
		return (double) t->nrows / ((double) (t->max - t->min) + 1.0);
	return t->nrows == 0 ? 0.0 : 1.0;
}

/* the driver's per-node, per-column and per-vector arrays */
static bool
alloc_arrays(WarpCpu *x)
{
	const WarpProgram *prog = x->p;

	x->tables = xalloc0(x, sizeof(WarpJoinTable *) * (prog->njoins + 1));
	x->iv = xalloc0(x, sizeof(void *) * (prog->nnodes + 1));
	x->fv = xalloc0(x, sizeof(void *) * (prog->nnodes + 1));
	x->nv = xalloc0(x, sizeof(void *) * (prog->nnodes + 1));
	x->qv = xalloc0(x, sizeof(void *) * (prog->nnodes + 1));
	x->cq = xalloc0(x, sizeof(void *) * (prog->ncols + 1));
	x->selA = xalloc0(x, sizeof(void *) * (prog->nnodes + 1));
	x->selB = xalloc0(x, sizeof(void *) * (prog->nnodes + 1));
	x->ci = xalloc0(x, sizeof(void *) * (prog->ncols + 1));
	x->cf = xalloc0(x, sizeof(void *) * (prog->ncols + 1));
	x->cn = xalloc0(x, sizeof(void *) * (prog->ncols + 1));
	x->tdict = xalloc0(x, sizeof(void *) * (prog->ncols + 1));
	x->tmap = xalloc0(x, sizeof(void *) * (prog->ncols + 1));
	x->tcap = xalloc0(x, sizeof(warp_int64) * (prog->ncols + 1));
	x->intern = xalloc0(x, sizeof(WarpIntern) * (prog->ncols + 1));
	x->sel = xalloc(x, sizeof(warp_uint16) * WARP_VEC);
	x->usel = xalloc(x, sizeof(warp_uint16) * WARP_VEC);
	x->mark = xalloc(x, WARP_VEC);
	x->hidx = xalloc(x, sizeof(warp_int32) * (WARP_VEC + 1));
	x->hrow = xalloc(x, sizeof(warp_int32) * (WARP_VEC + 1));
	x->ok = xalloc(x, WARP_VEC);
	x->gagg = xalloc0(x, sizeof(WarpAggState *) * (prog->naggs + 1));
	x->kbuf = xalloc(x, sizeof(warp_int64) * (prog->nkeys + 1));
	x->knull = xalloc(x, prog->nkeys + 1);
	x->stride = xalloc(x, sizeof(warp_int64) * (prog->nkeys + 1));
	if (!x->tables || !x->iv || !x->fv || !x->nv || !x->selA || !x->selB ||
		!x->ci || !x->cf || !x->cn || !x->qv || !x->cq || !x->tdict || !x->tmap || !x->tcap || !x->intern ||
		!x->sel || !x->usel || !x->mark || !x->hidx || !x->hrow ||
		!x->ok || !x->gagg || !x->kbuf || !x->knull || !x->stride)
		return false;
	return true;
}

/* the join tables by join, and the order of the probes */
static bool
order_joins(WarpCpu *x, WarpJoinTable *const *tables)
{
	const WarpProgram *prog = x->p;
	int			j;

	x->all_unique = true;
	x->order = xalloc0(x, sizeof(int) * (prog->njoins + 1));
	if (!x->order)
		return false;
	for (j = 0; j < prog->njoins; j++)
	{
		int			k;

		x->tables[j] = tables[prog->joins[j].table];
		/* semi and anti joins keep a row at most once */
		if (!x->tables[j]->unique && (prog->joins[j].kind == WARP_JOIN_INNER ||
									  prog->joins[j].kind == WARP_JOIN_LEFT))
			x->all_unique = false;
		/* insertion sort by estimated hit rate: joins to different
		 * dimensions commute, so the most selective one is probed first */
		for (k = j; k > 0 && join_hit_rate(x->tables[x->order[k - 1]],
										   prog->joins[x->order[k - 1]].kind) >
			 join_hit_rate(x->tables[j], prog->joins[j].kind); k--)
			x->order[k] = x->order[k - 1];
		x->order[k] = j;
	}
	return true;
}

/* every column's load buffers (and a long IN list's intern table) */
static bool
alloc_columns(WarpCpu *x)
{
	const WarpProgram *prog = x->p;
	int			c;

	for (c = 0; c < prog->ncols; c++)
	{
		if (WARP_TYPE_IS_FLOAT(prog->cols[c].type))
			x->cf[c] = xalloc(x, sizeof(double) * WARP_VEC);
		else
			x->ci[c] = xalloc(x, sizeof(warp_int64) * WARP_VEC);
		x->cn[c] = xalloc(x, WARP_VEC);
		if ((!x->cf[c] && !x->ci[c]) || !x->cn[c])
			return false;
		if (prog->cols[c].decimal == WARP_DECIMAL_WIDE)
		{
			/* the allocator promises 8-byte alignment; int128 wants 16 */
			char	   *q = xalloc(x, sizeof(warp_int128) * WARP_VEC + 16);

			if (!q)
				return false;
			x->cq[c] = (warp_int128 *) (((uintptr_t) q + 15) & ~(uintptr_t) 15);
		}
		if (prog->cols[c].text == WARP_TEXT_EQ && prog->cols[c].str_count > 8 &&
			!cpu_eq_strings_intern(x, c))
			return false;
	}
	return true;
}

/* every node's result vectors and scratch selections; constants filled */
static bool
alloc_nodes(WarpCpu *x)
{
	const WarpProgram *prog = x->p;
	int			ni;

	for (ni = 0; ni < prog->nnodes; ni++)
	{
		const WarpNode *nd = &prog->nodes[ni];

		if (nd->op == WN_COL)
		{
			x->iv[ni] = x->ci[nd->a];
			x->fv[ni] = x->cf[nd->a];
			x->nv[ni] = x->cn[nd->a];
		}
		else
		{
			if (WARP_TYPE_IS_FLOAT(nd->type))
				x->fv[ni] = xalloc(x, sizeof(double) * WARP_VEC);
			else
				x->iv[ni] = xalloc(x, sizeof(warp_int64) * WARP_VEC);
			x->nv[ni] = xalloc(x, WARP_VEC);
			if ((!x->fv[ni] && !x->iv[ni]) || !x->nv[ni])
				return false;
		}
		x->selA[ni] = xalloc(x, sizeof(warp_uint16) * WARP_VEC);
		x->selB[ni] = xalloc(x, sizeof(warp_uint16) * WARP_VEC);
		if (!x->selA[ni] || !x->selB[ni])
			return false;
		if (nd->type == WT_NUMERIC)
		{
			/* the allocator promises 8-byte alignment; int128 wants 16 */
			char	   *q = xalloc(x, sizeof(warp_int128) * WARP_VEC + 16);

			if (!q)
				return false;
			x->qv[ni] = (warp_int128 *) (((uintptr_t) q + 15) & ~(uintptr_t) 15);
		}
		if (nd->op == WN_CONST)
		{
			int			i;

			for (i = 0; i < WARP_VEC; i++)
			{
				x->nv[ni][i] = (nd->flags & WARP_NODE_NULL) ? 1 : 0;
				if (WARP_TYPE_IS_FLOAT(nd->type))
					x->fv[ni][i] = nd->fval;
				else if (nd->type == WT_NUMERIC)
					x->qv[ni][i] = warp_node_numeric_const(nd);
				else
					x->iv[ni][i] = nd->ival;
			}
		}
	}
	return true;
}

/* the group table: direct codes or hash slots */
static bool
alloc_groups(WarpCpu *x)
{
	const WarpProgram *prog = x->p;
	int			k;
	warp_int64	product = 1;

	/* group lookup: direct when every key is a dimension payload id
	 * (row mode appends without lookups: no table either way) */
	x->direct = !prog->emit_rows;
	for (k = prog->nkeys - 1; k >= 0 && x->direct; k--)
	{
		const WarpGroupKey *gk = &prog->keys[k];

		if (gk->kind != WG_DIM)
		{
			x->direct = false;
			break;
		}
		x->stride[k] = product;
		product *= (warp_int64) x->tables[gk->join]->npayloads + 1;
		if (product > DIRECT_GROUPS_MAX)
		{
			x->direct = false;
			break;
		}
	}
	if (x->direct)
	{
		x->dgroup = xalloc(x, sizeof(warp_int32) * product);
		if (!x->dgroup)
			return false;
		memset(x->dgroup, 0xff, sizeof(warp_int32) * product);
	}
	else
	{
		x->hmask = 1023;
		x->hslot = xalloc(x, sizeof(warp_int32) * (x->hmask + 1));
		if (!x->hslot)
			return false;
		memset(x->hslot, 0xff, sizeof(warp_int32) * (x->hmask + 1));
	}
	if (!cpu_groups_reserve(x, 64))
		return false;
	return true;
}

WarpCpu *
warp_cpu_create(const WarpProgram *prog, WarpJoinTable *const *tables, const WarpAlloc *alloc)
{
	WarpCpu    *x = alloc->alloc(alloc->ctx, sizeof(WarpCpu));
	int			k;

	if (x == NULL)
		return NULL;
	memset(x, 0, sizeof(*x));
	x->p = prog;
	x->alloc = *alloc;
	if (!alloc_arrays(x))
		return NULL;
	if (!order_joins(x, tables))
		return NULL;
	if (!alloc_columns(x) || !alloc_nodes(x))
		return NULL;
	/* the aggregates whose transitions can fail (run_vector saves them) */
	x->float_aggs = xalloc(x, sizeof(int) * (prog->naggs + 1));
	if (!x->float_aggs)
		return NULL;
	for (k = 0; k < prog->naggs; k++)
		if (prog->aggs[k].kind == WA_SUM_FLOAT || prog->aggs[k].kind == WA_AVG_FLOAT)
			x->float_aggs[x->nfloat++] = k;
	if (!alloc_joined(x, WARP_VEC * 2))
		return NULL;
	if (!alloc_groups(x))
		return NULL;
	if (prog->topn_limit > 0)
	{
		x->topn_order = warp_topn_order(prog);
		x->topn_compact_at = cpu_topn_compact_floor(prog);
	}
	return x;
}
