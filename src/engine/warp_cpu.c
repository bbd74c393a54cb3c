/*-------------------------------------------------------------------------
 *
 * warp_cpu.c
 *	  The CPU driver of the engine (see warp_cpu.h).
 *
 * A record batch is processed WARP_VEC rows at a time.  Every expression
 * node owns a result vector indexed by row position within the vector;
 * nodes are evaluated only at the positions of a selection vector, so a row
 * an earlier qual rejected, a CASE branch not taken or the right side of an
 * AND whose left side was false is never computed: errors (overflow,
 * division by zero) arise only where PostgreSQL's executor would raise
 * them.  After the quals, the surviving rows probe each join table in
 * order; a probe may multiply rows (duplicate build keys), so joined rows
 * are kept as (position, build row per join) tuples.  A semi or anti join
 * only filters; a left join's row without a match carries build row -1,
 * whose group keys are the NULL row (payload id npayloads).  Group keys and
 * aggregate arguments are evaluated once per surviving position and
 * accumulated once per joined row.
 *
 * This file is the batch loop (quals, probes, groups and aggregates of one
 * vector after another) and the interface of warp_cpu.h; the steps live in
 * warp_cpu_create.c (setup), warp_cpu_load.c (columns), warp_cpu_eval.c
 * (expressions), warp_cpu_filter.c (qual fast paths), warp_cpu_join.c
 * (probes) and warp_cpu_group.c (groups, top-N, aggregates), sharing the
 * driver's state through warp_cpu_internal.h.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "warp_cpu_internal.h"
#include "warp_group_merge.h"
#include "warp_ops_float.h"
#include "warp_ops_int.h"
#include "warp_ops_datetime.h"
#include "warp_ops_tz.h"
#include "warp_ops_text.h"

/*
 * The quals, in order, over the *m rows of x->sel: each keeps the rows it
 * passes (not NULL, true), so later quals see only those.
 */
static WarpStatus
run_quals(WarpCpu *x, int *m)
{
	const WarpProgram *p = x->p;
	int			q,
				k;

	for (q = 0; q < p->nquals && *m > 0; q++)
	{
		int			qn = p->quals[q];
		int			m2 = -1;
		WarpStatus	st;

		/* BETWEEN's two comparisons in one pass */
		if (q + 1 < p->nquals &&
			(m2 = cpu_filter_col_range(x, qn, p->quals[q + 1], x->sel, *m)) >= 0)
		{
			*m = m2;
			q++;
			continue;
		}
		m2 = cpu_filter_col_const(x, qn, x->sel, *m);

		if (m2 < 0)
		{
			const warp_uint8 *qnull;
			const warp_int64 *qval;

			if ((st = cpu_eval(x, qn, x->sel, *m)) != WARP_OK)
				return st;
			qnull = x->nv[qn];
			qval = x->iv[qn];
			/* branch-free compaction: selectivity is data, not a pattern */
			m2 = 0;
			for (k = 0; k < *m; k++)
			{
				int			i = x->sel[k];

				x->sel[m2] = (warp_uint16) i;
				m2 += (qnull[i] == 0) & (qval[i] != 0);
			}
		}
		*m = m2;
	}
	return WARP_OK;
}

/* One vector: rows [start, start+n) of the batch. */
static WarpStatus
run_vector(WarpCpu *x, const ArrowArray *cols, warp_int64 start, int n,
		   const bool *keep, WarpLoadStatus *ls, int *bad_col, warp_int64 *bad_row)
{
	const WarpProgram *p = x->p;
	int			m = 0,
				j,
				k,
				nu;
	warp_int64	ne,
				e;
	WarpStatus	st;

	x->bcols = cols;
	x->vstart = start;
	x->vn = n;
	if (keep == NULL)
	{
		for (k = 0; k < n; k++)
			x->sel[k] = (warp_uint16) k;
		m = n;
	}
	else
		for (k = 0; k < n; k++)
		{
			x->sel[m] = (warp_uint16) k;
			m += keep[start + k] != 0;
		}
	x->counters.rows_in += n;

	if ((st = run_quals(x, &m)) != WARP_OK)
		return st;
	x->counters.rows_filtered += m;
	if (m == 0)
		return WARP_OK;

	/*
	 * Join keys are plain columns (the planner checks): no errors here.
	 * When every join keeps a row at most once, cpu_probe() loads each key for
	 * the rows the joins before it kept; otherwise all are loaded here.
	 */
	if (!x->all_unique)
		for (j = 0; j < p->njoins; j++)
			if ((st = cpu_eval(x, p->joins[j].key_node, x->sel, m)) != WARP_OK)
				return st;
	for (k = 0; k < m; k++)
		x->epos[k] = x->sel[k];
	ne = m;
	for (j = 0; j < p->njoins && ne > 0; j++)
		if ((st = cpu_probe(x, j, &ne)) != WARP_OK)
			return st;
	x->counters.rows_joined += ne;
	if (ne == 0)
		return WARP_OK;

	/* distinct surviving positions, ascending */
	if (x->all_unique)
	{
		nu = (int) ne;
		memcpy(x->usel, x->epos, sizeof(warp_uint16) * ne);
	}
	else
	{
		memset(x->mark, 0, n);
		for (e = 0; e < ne; e++)
			x->mark[x->epos[e]] = 1;
		nu = 0;
		for (k = 0; k < n; k++)
			if (x->mark[k])
				x->usel[nu++] = (warp_uint16) k;
	}

	if ((st = cpu_group_rows(x, ne, nu)) != WARP_OK)
		return st;
	if (p->emit_rows)
		return WARP_OK;			/* no aggregates */
	return cpu_aggregate_rows(x, ne, nu);
}

/*
 * Only the quals over a batch: keep[i] stays true for the rows that pass
 * them all and turns false for the others (rows keep already rejected are
 * not evaluated).  Returns WARP_OK with *kept = the rows still kept, or
 * the first error or load status met (keep is then partly updated: the
 * caller must treat every row as kept).
 */
WarpStatus
warp_cpu_filter_batch(WarpCpu *x, const ArrowArray *cols, warp_int64 nrows, bool *keep,
					  warp_int64 *kept, WarpLoadStatus *load_status)
{
	return warp_cpu_filter_rows(x, cols, 0, nrows, keep, kept, load_status);
}

WarpStatus
warp_cpu_filter_rows(WarpCpu *x, const ArrowArray *cols, warp_int64 first, warp_int64 end,
					 bool *keep, warp_int64 *kept, WarpLoadStatus *load_status)
{
	const WarpProgram *p = x->p;
	warp_int64	start;
	int			c;

	*load_status = WARP_LOAD_OK;
	*kept = 0;
	for (c = 0; c < p->ncols; c++)
		x->tdict[c] = NULL;
	x->bcols = cols;
	for (start = first; start < end; start += WARP_VEC)
	{
		int			n = (int) (end - start < WARP_VEC ? end - start : WARP_VEC);
		int			m = 0,
					k;
		WarpStatus	st;

		x->vstart = start;
		x->vn = n;
		for (k = 0; k < n; k++)
		{
			x->sel[m] = (warp_uint16) k;
			m += keep[start + k] != 0;
			keep[start + k] = false;
		}
		if ((st = run_quals(x, &m)) != WARP_OK)
		{
			if (st == WARP_STATUS_LOAD)
				*load_status = x->load_status;
			return st;
		}
		for (k = 0; k < m; k++)
			keep[start + x->sel[k]] = true;
		*kept += m;
	}
	return WARP_OK;
}

WarpStatus
warp_cpu_run_batch(WarpCpu *x, const ArrowArray *cols, warp_int64 nrows,
				   const bool *keep, WarpLoadStatus *load_status,
				   int *bad_col, warp_int64 *bad_row)
{
	warp_int64	start;
	int			c;

	*load_status = WARP_LOAD_OK;
	/* a dictionary's matches hold for this batch only: another batch's
	 * dictionary may sit at the same address once a file is closed */
	for (c = 0; c < x->p->ncols; c++)
		x->tdict[c] = NULL;
	for (start = 0; start < nrows; start += WARP_VEC)
	{
		int			n = (int) (nrows - start < WARP_VEC ? nrows - start : WARP_VEC);
		WarpStatus	st = run_vector(x, cols, start, n, keep, load_status, bad_col, bad_row);

		/*
		 * An error: PostgreSQL's executor, working row by row, reports the
		 * first row's error, whichever stage (qual, aggregate argument) it
		 * comes from.  Find that row by re-running the vector one row at a
		 * time (the query fails either way, so the partial states the rows
		 * leave behind do not matter).
		 */
		if (st != WARP_OK && st != WARP_STATUS_LOAD && st != WARP_ERR_OUT_OF_MEMORY)
		{
			int			k;

			for (k = 0; k < n; k++)
			{
				WarpStatus	rst = run_vector(x, cols, start + k, 1, keep, load_status,
											 bad_col, bad_row);

				if (rst != WARP_OK)
				{
					st = rst;
					break;
				}
			}
		}
		if (st == WARP_STATUS_LOAD)
		{
			*load_status = x->load_status;
			*bad_col = x->bad_col;
			*bad_row = x->bad_row;
			return WARP_OK;
		}
		if (st != WARP_OK)
			return st;
	}
	return WARP_OK;
}

void
warp_cpu_reset_groups(WarpCpu *x)
{
	int			c;

	if (!x->p->emit_rows)
		return;
	x->ngroups = 0;
	/* the top-N threshold stays: the rows it was taken from went up */
	if (x->p->topn_limit > 0)
		x->topn_compact_at = cpu_topn_compact_floor(x->p);
	/* the text keys' strings were those of the rows emitted */
	for (c = 0; c < x->p->ncols; c++)
	{
		WarpIntern *t = &x->intern[c];

		if (x->p->cols[c].text != WARP_TEXT_KEY || t->slot == NULL)
			continue;
		t->n = 0;
		t->nbytes = 0;
		t->off[0] = 0;
		memset(t->slot, 0xff, sizeof(warp_int32) * (t->mask + 1));
		x->tdict[c] = NULL;
	}
}

warp_int64
warp_cpu_ngroups(const WarpCpu *x)
{
	return x->ngroups;
}

warp_int64
warp_cpu_group_key(const WarpCpu *x, warp_int64 g, int k, bool *isnull)
{
	*isnull = x->gnull[g * x->p->nkeys + k] != 0;
	return x->gkey[g * x->p->nkeys + k];
}

const warp_uint8 *
warp_cpu_key_text(const WarpCpu *x, int col, warp_int64 id, warp_int64 *len)
{
	const WarpIntern *t = &x->intern[col];

	if (col < 0 || col >= x->p->ncols || x->p->cols[col].text != WARP_TEXT_KEY ||
		id < 0 || id >= t->n)
		return NULL;
	*len = t->off[id + 1] - t->off[id];
	if (t->bytes == NULL)
	{
		/* only empty strings so far: no bytes were ever stored */
		static const warp_uint8 no_bytes = 0;

		return &no_bytes;
	}
	return t->bytes + t->off[id];
}

const WarpAggState *
warp_cpu_group_agg(const WarpCpu *x, warp_int64 g, int a)
{
	return &x->gagg[a][g];
}

void
warp_cpu_group_source(const WarpCpu *x, WarpGroupSource *src)
{
	memset(src, 0, sizeof(WarpGroupSource));
	src->n = x->ngroups;
	src->keys = x->gkey;
	src->nulls = x->gnull;
	src->aggs = (const WarpAggState *const *) x->gagg;
	src->stride = 1;
}

void
warp_cpu_set_order_check(WarpCpu *x, bool on)
{
	x->order_check = on;
}

bool
warp_cpu_order_risk(const WarpCpu *x)
{
	return x->order_risk;
}

void
warp_cpu_counters(const WarpCpu *x, WarpCpuCounters *c)
{
	*c = x->counters;
}
