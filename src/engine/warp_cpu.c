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
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "warp_cpu.h"
#include "warp_group_merge.h"
#include "warp_row_conv.h"
#include "warp_ops_float.h"
#include "warp_ops_int.h"
#include "warp_ops_datetime.h"
#include "warp_ops_tz.h"
#include "warp_ops_text.h"

/* direct-address group table when the product of payload counts is small */
#define DIRECT_GROUPS_MAX (1 << 22)

/*
 * A text group-key column's distinct strings, numbered in order of first
 * appearance: string id is bytes [off[id], off[id + 1]) of bytes; slot is
 * an open-addressing table of ids by hash.  Ids are this driver's own (each
 * thread has its own), which is why its groups go back to PostgreSQL with
 * their strings (warp_cpu_key_text), never with ids.
 */
typedef struct WarpIntern
{
	warp_uint8 *bytes;
	warp_int64	nbytes,
				bcap;
	warp_int64 *off;
	warp_int64	n,
				ncap;
	warp_int32 *slot;
	warp_uint64 mask;
} WarpIntern;

struct WarpCpu
{
	const WarpProgram *p;
	WarpJoinTable **tables;
	WarpAlloc	alloc;

	/* per node: result vectors (int or float by type), NULL flags, two
	 * scratch selection vectors */
	warp_int64 **iv;
	double	  **fv;
	warp_uint8 **nv;
	warp_int128 **qv;			/* numeric nodes: unscaled values */
	warp_int128 **cq;			/* wide numeric columns: unscaled values */
	warp_uint16 **selA;
	warp_uint16 **selB;

	/* the batch's columns and the current vector within it */
	const ArrowArray *bcols;
	warp_int64	vstart;
	int			vn;
	WarpLoadStatus load_status;	/* set with WARP_STATUS_LOAD */
	int			bad_col;
	warp_int64	bad_row;

	/* per column: loaded values of the current vector */
	warp_int64 **ci;
	double	  **cf;
	warp_uint8 **cn;
	/* text columns (WarpColumnSpec.text): the dictionary last matched
	 * against the program's strings, and its entries' matches */
	const ArrowArray **tdict;
	warp_int32 **tmap;
	warp_int64 *tcap;
	/*
	 * per column, distinct strings by hash (WarpIntern): a text group key's
	 * (filled as rows come), or a WARP_TEXT_EQ column's program strings when
	 * it has more than 8 (a text join key's dimension keys, long IN lists;
	 * filled at create, so ids are the strings' indexes)
	 */
	WarpIntern *intern;

	/* main selection and joined rows */
	warp_uint16 *sel;
	bool		all_unique;
	int		   *order;			/* joins in probe order, most selective first */
	warp_int64	ecap;
	warp_uint16 *epos,
			   *tpos;
	warp_int32 **ebrow,
			  **tbrow;
	warp_int64 *egroup;
	/* float sum/avg aggregates, and their states before the current vector
	 * (fsnap[f * ecap + e]: aggregate float_aggs[f], joined row e) */
	int			nfloat;
	int		   *float_aggs;
	WarpAggState *fsnap;
	warp_uint16 *usel;
	warp_int32 *hidx;			/* probe scratch: joined rows found ... */
	warp_int32 *hrow;			/* ... and their build rows */
	warp_uint8 *mark;
	warp_uint8 *ok;

	/* groups */
	warp_int64	ngroups;
	warp_int64	gcap;
	warp_int64 *gkey;			/* ngroups * nkeys */
	warp_uint8 *gnull;			/* ngroups * nkeys */
	WarpAggState **gagg;		/* per agg: gcap states */
	bool		direct;
	warp_int64 *stride;			/* direct: per key */
	warp_int32 *dgroup;			/* direct: code -> group, -1 */
	warp_uint64 hmask;			/* hash: slots of group ids, -1 empty */
	warp_int32 *hslot;
	warp_int64 *kbuf;			/* key values of one row */
	warp_uint8 *knull;

	WarpCpuCounters counters;

	/* a float sum or average saw a value so large that the order of the
	 * additions decides whether it overflows (warp_cpu_set_order_check) */
	bool		order_check;
	bool		order_risk;

	/* row mode under ORDER BY ... LIMIT (WarpProgram.topn_limit): rows
	 * whose first ORDER BY key sorts after topn_val are dropped */
	bool		topn_have;
	bool		topn_float;
	warp_int64	topn_val;		/* (float bits for floats) */
	warp_uint8	topn_null;
	warp_int64	topn_compact_at;	/* rows at which to compact next */
	warp_int32 *topn_idx;		/* compaction scratch */
	warp_int64	topn_idx_cap;
};

static void *
xalloc(WarpCpu *x, size_t size)
{
	return x->alloc.alloc(x->alloc.ctx, size ? size : 1);
}

static void *
xalloc0(WarpCpu *x, size_t size)
{
	void	   *p = xalloc(x, size);

	if (p)
		memset(p, 0, size ? size : 1);
	return p;
}

/* internal status: a column could not be loaded (x->load_status says why) */
#define WARP_STATUS_LOAD ((WarpStatus) (WARP_STATUS_COUNT + 1))

#define IS_FLOAT_NODE(x, ni) WARP_TYPE_IS_FLOAT((x)->p->nodes[(ni)].type)

/* ---------------------------------------------------------------- setup */

static bool eq_strings_intern(WarpCpu *x, int c);

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
static bool
grow_joined(WarpCpu *x, warp_int64 need, warp_int64 n_e, warp_int64 n_t)
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

static bool
groups_reserve(WarpCpu *x, warp_int64 need)
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

static warp_int64 topn_compact_floor(const WarpProgram *p);

WarpCpu *
warp_cpu_create(const WarpProgram *prog, WarpJoinTable *const *tables, const WarpAlloc *alloc)
{
	WarpCpu    *x = alloc->alloc(alloc->ctx, sizeof(WarpCpu));
	int			ni,
				c,
				j,
				k;
	warp_int64	product = 1;

	if (x == NULL)
		return NULL;
	memset(x, 0, sizeof(*x));
	x->p = prog;
	x->alloc = *alloc;
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
		return NULL;
	x->all_unique = true;
	x->order = xalloc0(x, sizeof(int) * (prog->njoins + 1));
	if (!x->order)
		return NULL;
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
	for (c = 0; c < prog->ncols; c++)
	{
		if (WARP_TYPE_IS_FLOAT(prog->cols[c].type))
			x->cf[c] = xalloc(x, sizeof(double) * WARP_VEC);
		else
			x->ci[c] = xalloc(x, sizeof(warp_int64) * WARP_VEC);
		x->cn[c] = xalloc(x, WARP_VEC);
		if ((!x->cf[c] && !x->ci[c]) || !x->cn[c])
			return NULL;
		if (prog->cols[c].decimal == WARP_DECIMAL_WIDE)
		{
			/* the allocator promises 8-byte alignment; int128 wants 16 */
			char	   *q = xalloc(x, sizeof(warp_int128) * WARP_VEC + 16);

			if (!q)
				return NULL;
			x->cq[c] = (warp_int128 *) (((uintptr_t) q + 15) & ~(uintptr_t) 15);
		}
		if (prog->cols[c].text == WARP_TEXT_EQ && prog->cols[c].str_count > 8 &&
			!eq_strings_intern(x, c))
			return NULL;
	}
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
				return NULL;
		}
		x->selA[ni] = xalloc(x, sizeof(warp_uint16) * WARP_VEC);
		x->selB[ni] = xalloc(x, sizeof(warp_uint16) * WARP_VEC);
		if (!x->selA[ni] || !x->selB[ni])
			return NULL;
		if (nd->type == WT_NUMERIC)
		{
			/* the allocator promises 8-byte alignment; int128 wants 16 */
			char	   *q = xalloc(x, sizeof(warp_int128) * WARP_VEC + 16);

			if (!q)
				return NULL;
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
	/* the aggregates whose transitions can fail (run_vector saves them) */
	x->float_aggs = xalloc(x, sizeof(int) * (prog->naggs + 1));
	if (!x->float_aggs)
		return NULL;
	for (k = 0; k < prog->naggs; k++)
		if (prog->aggs[k].kind == WA_SUM_FLOAT || prog->aggs[k].kind == WA_AVG_FLOAT)
			x->float_aggs[x->nfloat++] = k;
	if (!alloc_joined(x, WARP_VEC * 2))
		return NULL;

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
			return NULL;
		memset(x->dgroup, 0xff, sizeof(warp_int32) * product);
	}
	else
	{
		x->hmask = 1023;
		x->hslot = xalloc(x, sizeof(warp_int32) * (x->hmask + 1));
		if (!x->hslot)
			return NULL;
		memset(x->hslot, 0xff, sizeof(warp_int32) * (x->hmask + 1));
	}
	if (!groups_reserve(x, 64))
		return NULL;
	if (prog->topn_limit > 0)
	{
		x->topn_float = IS_FLOAT_NODE(x, prog->keys[prog->topn_key].node);
		x->topn_compact_at = topn_compact_floor(prog);
	}
	return x;
}

/* ------------------------------------------------------------- loading */

bool
warp_cpu_can_load(const ArrowField *f, WarpType type)
{
	const ArrowType *t = &f->type;	/* the value type, also for dictionaries */

	switch (type)
	{
		case WT_BOOL:
			return t->id == ARROW_TYPE_BOOL;
		case WT_INT2:
		case WT_INT4:
		case WT_INT8:
			{
				int			max_bits = type == WT_INT2 ? 16 : type == WT_INT4 ? 32 : 64;

				if (t->id != ARROW_TYPE_INT)
					return false;
				/* the reading side's mapping: UInt8->int2, UInt16->int4,
				 * UInt32->int8; a narrower Arrow type into a wider column */
				if (t->is_signed)
					return t->bit_width <= max_bits;
				return t->bit_width < max_bits;
			}
		case WT_DATE:
			return t->id == ARROW_TYPE_DATE;
		case WT_TIMESTAMP:
			return t->id == ARROW_TYPE_TIMESTAMP;
		case WT_FLOAT4:
			return t->id == ARROW_TYPE_FLOAT && t->precision != ARROW_PRECISION_DOUBLE;
		case WT_FLOAT8:
			return t->id == ARROW_TYPE_FLOAT;
		case WT_NUMERIC:
			return false;		/* decimal columns load as WT_INT8 */
	}
	return false;
}

/*
 * Date32/Date64 and timestamp raw values to PostgreSQL's domains: the
 * conversion of the row evaluator (warp_row.h), which the GPU kernel runs
 * too, so both drivers accept and reject exactly the same values.
 */
static inline bool
conv_date(warp_int64 d, int unit, warp_int64 *out)
{
	return warp_row_convert(unit == ARROW_DATE_MILLISECOND ? WRC_DATE_MS : WRC_DATE_DAY, d, out);
}

static inline bool
conv_timestamp(warp_int64 v, int unit, warp_int64 *out)
{
	return warp_row_convert(unit == ARROW_TIME_SECOND ? WRC_TS_S :
							unit == ARROW_TIME_MILLISECOND ? WRC_TS_MS :
							unit == ARROW_TIME_MICROSECOND ? WRC_TS_US : WRC_TS_NS, v, out);
}

/*
 * A dictionary-encoded column: each selected row's index is looked up in
 * the dictionary (indices were checked against its length at load time).
 */
static WarpLoadStatus
load_dict_column(WarpCpu *x, int c, const warp_uint16 *sel, int n, int *bad)
{
	const ArrowArray *a = &x->bcols[c];
	const ArrowArray *dict = a->dictionary;
	const ArrowType *t = &a->field->type;
	bool		isfloat = WARP_TYPE_IS_FLOAT(x->p->cols[c].type);
	warp_uint8 *nul = x->cn[c];
	int			k;

	if (dict == NULL)
		return WARP_LOAD_UNSUPPORTED;
	for (k = 0; k < n; k++)
	{
		int			i = sel[k];
		warp_int64	row = x->vstart + i;
		warp_int64	idx;

		nul[i] = arrow_is_null(a, row);
		if (nul[i])
			continue;
		idx = arrow_get_dict_index(a, row);
		if (arrow_is_null(dict, idx))
		{
			nul[i] = 1;
			continue;
		}
		if (isfloat)
			x->cf[c][i] = arrow_get_double(dict, idx);
		else if (t->id == ARROW_TYPE_DATE)
		{
			if (!conv_date(arrow_get_int(dict, idx), t->unit, &x->ci[c][i]))
			{
				*bad = i;
				return WARP_LOAD_RANGE;
			}
		}
		else if (t->id == ARROW_TYPE_TIMESTAMP)
		{
			if (!conv_timestamp(arrow_get_int(dict, idx), t->unit, &x->ci[c][i]))
			{
				*bad = i;
				return WARP_LOAD_RANGE;
			}
		}
		else
			x->ci[c][i] = arrow_get_int(dict, idx);
	}
	return WARP_LOAD_OK;
}

/*
 * Load column c of the current vector at the positions of sel (late
 * materialization: a column is read only for the rows an expression needs,
 * so an aggregate argument is read for the rows that survived the quals and
 * the joins, not for the whole batch).  *bad is the position of a value out
 * of the declared type's range.
 */
/*
 * A numeric(p <= 18, s) column (WarpColumnSpec.decimal): Decimal128 values
 * of scale s as their unscaled int64, or integers times 10^s.  A value
 * beyond int64 (a file holding more digits than its declared precision)
 * cannot be read as declared.
 */
static WarpLoadStatus
load_decimal_column(WarpCpu *x, int c, const warp_uint16 *sel, int n, int *bad)
{
	const WarpColumnSpec *cs = &x->p->cols[c];
	const ArrowArray *a = &x->bcols[c];
	const ArrowType *t = &a->field->type;
	warp_uint8 *nul = x->cn[c];
	warp_int64 *out = x->ci[c];
	warp_int64	mult = 1;
	warp_int64	limit = 0;		/* 10^precision, or 0: unchecked */
	int			k;

	if (a->field->has_dict || cs->type != WT_INT8 || cs->scale > 18 || cs->precision > 18)
		return WARP_LOAD_UNSUPPORTED;
	if (cs->precision > 0)
	{
		limit = 1;
		for (k = 0; k < cs->precision; k++)
			limit *= 10;
	}
	if (t->id == ARROW_TYPE_DECIMAL)
	{
		if (t->bit_width != 128 || t->dec_scale != cs->scale || a->values == NULL)
			return WARP_LOAD_UNSUPPORTED;
	}
	else if (t->id == ARROW_TYPE_INT && (t->is_signed || t->bit_width < 64))
	{
		for (k = 0; k < cs->scale; k++)
			mult *= 10;
	}
	else
		return WARP_LOAD_UNSUPPORTED;
	for (k = 0; k < n; k++)
	{
		int			i = sel[k];

		nul[i] = arrow_is_null(a, x->vstart + i);
		if (nul[i])
			continue;
		if (t->id == ARROW_TYPE_DECIMAL)
		{
			const warp_uint8 *p = a->values + (a->offset + x->vstart + i) * 16;
			warp_uint64 lo;
			warp_int64	hi;

			memcpy(&lo, p, 8);
			memcpy(&hi, p + 8, 8);
			if (hi != ((warp_int64) lo < 0 ? -1 : 0))
			{
				*bad = i;
				return WARP_LOAD_UNSUPPORTED;
			}
			out[i] = (warp_int64) lo;
		}
		else if (__builtin_mul_overflow(arrow_get_int(a, x->vstart + i), mult, &out[i]))
		{
			*bad = i;
			return WARP_LOAD_UNSUPPORTED;
		}
		/* more digits than declared: numeric expressions' bounds rest on it */
		if (limit && (out[i] >= limit || out[i] <= -limit))
		{
			*bad = i;
			return WARP_LOAD_PRECISION;
		}
	}
	return WARP_LOAD_OK;
}

/*
 * A numeric(19 <= p <= 38, s) column (WARP_DECIMAL_WIDE): Decimal128 values
 * of scale s as 128-bit unscaled integers, each checked against the
 * declared precision (numeric expressions' bounds rest on it).
 */
static WarpLoadStatus
load_wide_decimal_column(WarpCpu *x, int c, const warp_uint16 *sel, int n, int *bad)
{
	const WarpColumnSpec *cs = &x->p->cols[c];
	const ArrowArray *a = &x->bcols[c];
	const ArrowType *t = &a->field->type;
	warp_uint8 *nul = x->cn[c];
	warp_int128 *out = x->cq[c];
	warp_int128 limit = 1;		/* 10^precision */
	int			k;

	if (a->field->has_dict || t->id != ARROW_TYPE_DECIMAL || t->bit_width != 128 ||
		t->dec_scale != cs->scale || a->values == NULL || cs->precision > 38)
		return WARP_LOAD_UNSUPPORTED;
	for (k = 0; k < cs->precision; k++)
		limit *= 10;
	for (k = 0; k < n; k++)
	{
		int			i = sel[k];
		const warp_uint8 *p;
		warp_uint64 lo;
		warp_int64	hi;

		nul[i] = arrow_is_null(a, x->vstart + i);
		if (nul[i])
			continue;
		p = a->values + (a->offset + x->vstart + i) * 16;
		memcpy(&lo, p, 8);
		memcpy(&hi, p + 8, 8);
		out[i] = (warp_int128) (((warp_uint128) (warp_uint64) hi << 64) | lo);
		if (out[i] >= limit || out[i] <= -limit)
		{
			*bad = i;
			return WARP_LOAD_PRECISION;
		}
	}
	return WARP_LOAD_OK;
}

/* whether a three-way comparison result c (-1, 0, 1) satisfies WARP_CMP_* op */
static inline bool
cmp_holds(int op, int c)
{
	switch (op)
	{
		case WARP_CMP_EQ: return c == 0;
		case WARP_CMP_NE: return c != 0;
		case WARP_CMP_LT: return c < 0;
		case WARP_CMP_LE: return c <= 0;
		case WARP_CMP_GT: return c > 0;
		default: return c >= 0;
	}
}

/*
 * The intern table's own hash (ids never leave the driver, so it need match
 * nothing else): 8-byte loads, one multiply-xorshift per word.
 */
static inline warp_uint64
intern_hash(const warp_uint8 *p, warp_int32 len)
{
	warp_uint64 h = UINT64_C(0x9E3779B97F4A7C15) ^ ((warp_uint64) len * UINT64_C(0xff51afd7ed558ccd));

	while (len >= 8)
	{
		warp_uint64 w;

		memcpy(&w, p, 8);
		h = (h ^ w) * UINT64_C(0xc4ceb9fe1a85ec53);
		h ^= h >> 29;
		p += 8;
		len -= 8;
	}
	if (len > 0)
	{
		warp_uint64 w = 0;

		memcpy(&w, p, (size_t) len);
		h = (h ^ w) * UINT64_C(0xc4ceb9fe1a85ec53);
	}
	h ^= h >> 32;
	h *= UINT64_C(0xff51afd7ed558ccd);
	return h ^ (h >> 29);
}

static bool
intern_rehash(WarpCpu *x, WarpIntern *t)
{
	warp_uint64 cap = t->slot ? (t->mask + 1) * 2 : 256;
	warp_int32 *slot = xalloc(x, sizeof(warp_int32) * cap);
	warp_int64	id;

	if (slot == NULL)
		return false;
	memset(slot, 0xff, sizeof(warp_int32) * cap);
	for (id = 0; id < t->n; id++)
	{
		warp_uint64 h = intern_hash(t->bytes + t->off[id],
									(warp_int32) (t->off[id + 1] - t->off[id])) & (cap - 1);

		while (slot[h] >= 0)
			h = (h + 1) & (cap - 1);
		slot[h] = (warp_int32) id;
	}
	t->slot = slot;
	t->mask = cap - 1;
	return true;
}

/* the id of bytes [p, p + len) among t's strings, or -1 (*slot: where it would go) */
static inline warp_int64
intern_find(const WarpIntern *t, const warp_uint8 *p, warp_int32 len, warp_uint64 *slot)
{
	warp_uint64 h = intern_hash(p, len) & t->mask;

	for (;;)
	{
		warp_int32	id = t->slot[h];

		if (id < 0)
			break;
		if (t->off[id + 1] - t->off[id] == len &&
			(len == 0 || memcmp(t->bytes + t->off[id], p, (size_t) len) == 0))
			return id;
		h = (h + 1) & t->mask;
	}
	*slot = h;
	return -1;
}

/* the id of bytes [p, p + len) in column c's strings, added if new; -1: no memory */
static warp_int64
intern_id(WarpCpu *x, int c, const warp_uint8 *p, warp_int32 len)
{
	WarpIntern *t = &x->intern[c];
	warp_uint64 h;

	if (t->slot == NULL)
	{
		t->ncap = 64;
		t->off = xalloc(x, sizeof(warp_int64) * (t->ncap + 1));
		if (t->off == NULL || !intern_rehash(x, t))
			return -1;
		t->off[0] = 0;
	}
	{
		warp_int64	id = intern_find(t, p, len, &h);

		if (id >= 0)
			return id;
	}
	if (t->n >= WARP_INT32_MAX - 2)
		return -1;
	if (t->n == t->ncap)
	{
		warp_int64 *off = xalloc(x, sizeof(warp_int64) * (t->ncap * 2 + 1));

		if (off == NULL)
			return -1;
		memcpy(off, t->off, sizeof(warp_int64) * (t->n + 1));
		t->off = off;
		t->ncap *= 2;
	}
	if (t->nbytes + len > t->bcap)
	{
		warp_int64	cap = t->bcap ? t->bcap : 4096;
		warp_uint8 *b;

		while (cap < t->nbytes + len)
			cap *= 2;
		b = xalloc(x, (size_t) cap);
		if (b == NULL)
			return -1;
		if (t->nbytes)
			memcpy(b, t->bytes, (size_t) t->nbytes);
		t->bytes = b;
		t->bcap = cap;
	}
	if (len)
		memcpy(t->bytes + t->nbytes, p, (size_t) len);
	t->nbytes += len;
	t->slot[h] = (warp_int32) t->n;
	t->n++;
	t->off[t->n] = t->nbytes;
	if ((warp_uint64) t->n * 2 > t->mask && !intern_rehash(x, t))
		return -1;
	return t->n - 1;
}

/*
 * A WARP_TEXT_EQ column's program strings into its intern table, in order:
 * their ids are their indexes (the builder gives a column distinct
 * strings).  false: no memory.
 */
static bool
eq_strings_intern(WarpCpu *x, int c)
{
	const WarpColumnSpec *cs = &x->p->cols[c];
	warp_int32	k;

	for (k = 0; k < cs->str_count; k++)
	{
		const WarpString *s = &x->p->strings[cs->str_first + k];

		if (intern_id(x, c, x->p->strbytes + s->off, s->len) != k)
			return false;
	}
	return true;
}

/*
 * A text column's value for bytes [p, p + len): which of its strings they
 * equal, or -1 (WARP_TEXT_EQ); whether they match its LIKE pattern
 * (WARP_TEXT_LIKE), or TEXT_LIKE_ESCAPE where the match reached an
 * unpaired escape character at the pattern's end (PostgreSQL's error).
 */
#define TEXT_LIKE_ESCAPE (-3)

static inline warp_int64
text_match(WarpCpu *x, const WarpColumnSpec *cs, const warp_uint8 *p, warp_int64 len)
{
	int			k;

	if (cs->text == WARP_TEXT_LIKE)
	{
		const WarpString *s = &x->p->strings[cs->str_first];
		bool		m = false;

		if (warp_text_like(p, (warp_int32) len, x->p->strbytes + s->off, s->len, &m) != WARP_OK)
			return TEXT_LIKE_ESCAPE;
		return m ? 1 : 0;
	}
	if (cs->text == WARP_TEXT_KEY)
		return intern_id(x, (int) (cs - x->p->cols), p, (warp_int32) len);
	if (cs->text == WARP_TEXT_EQ && x->intern[cs - x->p->cols].slot)
	{
		warp_uint64 unused;

		return intern_find(&x->intern[cs - x->p->cols], p, (warp_int32) len, &unused);
	}
	if (cs->text == WARP_TEXT_CMP)
	{
		const WarpString *s = &x->p->strings[cs->str_first];

		return cmp_holds(cs->cmp, warp_text_cmp_c(p, (warp_int32) len,
												   x->p->strbytes + s->off, s->len));
	}

	for (k = 0; k < cs->str_count; k++)
	{
		const WarpString *s = &x->p->strings[cs->str_first + k];

		if (s->len == len && (len == 0 || memcmp(x->p->strbytes + s->off, p, (size_t) len) == 0))
			return k;
	}
	return -1;
}

/*
 * a == b for len bytes, reading only those bytes: 4..16 bytes as two
 * overlapping words each (first and last), fewer byte by byte, more by
 * memcmp.  Codes that share a prefix (MFGR#1, MFGR#2) differ in the last
 * word, which is compared with the first.
 */
static inline bool
bytes_equal(const warp_uint8 *a, const warp_uint8 *b, warp_int32 len)
{
	warp_uint64 a1,
				a2,
				b1,
				b2;
	warp_uint32 c1,
				c2,
				d1,
				d2;
	warp_int32	i;

	if (len > 16)
		return memcmp(a, b, (size_t) len) == 0;
	if (len >= 8)
	{
		memcpy(&a1, a, 8);
		memcpy(&b1, b, 8);
		memcpy(&a2, a + len - 8, 8);
		memcpy(&b2, b + len - 8, 8);
		return ((a1 ^ b1) | (a2 ^ b2)) == 0;
	}
	if (len >= 4)
	{
		memcpy(&c1, a, 4);
		memcpy(&d1, b, 4);
		memcpy(&c2, a + len - 4, 4);
		memcpy(&d2, b + len - 4, 4);
		return ((c1 ^ d1) | (c2 ^ d2)) == 0;
	}
	for (i = 0; i < len; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

static inline bool
is_utf8_type(const ArrowType *t)
{
	return t->id == ARROW_TYPE_UTF8 || t->id == ARROW_TYPE_LARGE_UTF8;
}

/*
 * A text column (WarpColumnSpec.text): each row's value is which of the
 * program's strings for the column it equals byte for byte, or -1.  A
 * dictionary's entries are matched once per dictionary, rows then look
 * their index up.
 */
static WarpLoadStatus
load_text_column(WarpCpu *x, int c, const warp_uint16 *sel, int n, int *bad)
{
	const WarpColumnSpec *cs = &x->p->cols[c];
	const ArrowArray *a = &x->bcols[c];
	warp_uint8 *nul = x->cn[c];
	warp_int64 *out = x->ci[c];
	int			k;

	if (cs->type != ((cs->text == WARP_TEXT_LIKE || cs->text == WARP_TEXT_CMP) ? WT_BOOL : WT_INT8) ||
		!is_utf8_type(&a->field->type))
		return WARP_LOAD_UNSUPPORTED;
	if (a->field->has_dict)
	{
		const ArrowArray *d = a->dictionary;
		warp_int32 *map;

		if (d == NULL)
			return WARP_LOAD_UNSUPPORTED;
		if (x->tdict[c] != d || x->tcap[c] < d->length)
		{
			warp_int64	e;

			if (x->tcap[c] < d->length)
			{
				x->tmap[c] = xalloc(x, sizeof(warp_int32) * (d->length > 0 ? d->length : 1));
				if (x->tmap[c] == NULL)
					return WARP_LOAD_UNSUPPORTED;
				x->tcap[c] = d->length;
			}
			for (e = 0; e < d->length; e++)
			{
				warp_int64	len;
				const warp_uint8 *p;

				if (arrow_is_null(d, e))
				{
					x->tmap[c][e] = -2;	/* a NULL entry: the row is NULL */
					continue;
				}
				p = arrow_get_bytes(d, e, &len);
				if (len > WARP_INT32_MAX)
					return WARP_LOAD_UNSUPPORTED;
				x->tmap[c][e] = (warp_int32) text_match(x, cs, p, len);
				if (x->tmap[c][e] < 0 && cs->text == WARP_TEXT_KEY)
					return WARP_LOAD_NO_MEMORY;
			}
			x->tdict[c] = d;
		}
		map = x->tmap[c];
		for (k = 0; k < n; k++)
		{
			int			i = sel[k];
			warp_int64	row = x->vstart + i;
			warp_int32	m;

			nul[i] = arrow_is_null(a, row);
			if (nul[i])
				continue;
			m = map[arrow_get_dict_index(a, row)];
			if (m == TEXT_LIKE_ESCAPE)
			{
				*bad = i;
				return WARP_LOAD_LIKE_ESCAPE;
			}
			nul[i] = m == -2;
			out[i] = m;
		}
		return WARP_LOAD_OK;
	}
	if (cs->text == WARP_TEXT_EQ && x->intern[c].slot == NULL &&
		a->field->type.id == ARROW_TYPE_UTF8 && cs->str_count <= 8)
	{
		/*
		 * `col = 'x'`, `col IN (a few)`: the offsets read in place and the
		 * bytes compared inline, the program's strings by length first (no
		 * call per row: this loop is most of a text filter's time)
		 */
		const warp_int32 *offs = (const warp_int32 *) a->offsets + a->offset;
		const warp_uint8 *sp[8];
		warp_int32	sl[8];
		int			ns = cs->str_count;
		int			q;

		for (q = 0; q < ns; q++)
		{
			const WarpString *ws = &x->p->strings[cs->str_first + q];

			sp[q] = x->p->strbytes + ws->off;
			sl[q] = ws->len;
		}
		for (k = 0; k < n; k++)
		{
			int			i = sel[k];
			warp_int64	row = x->vstart + i;
			warp_int32	len;
			const warp_uint8 *p;
			warp_int64	m = -1;

			nul[i] = arrow_is_null(a, row);
			if (nul[i])
				continue;
			p = a->data + offs[row];
			len = offs[row + 1] - offs[row];
			for (q = 0; q < ns; q++)
				if (sl[q] == len && bytes_equal(sp[q], p, len))
				{
					m = q;
					break;
				}
			out[i] = m;
		}
		return WARP_LOAD_OK;
	}
	for (k = 0; k < n; k++)
	{
		int			i = sel[k];
		warp_int64	row = x->vstart + i;
		warp_int64	len;
		const warp_uint8 *p;

		nul[i] = arrow_is_null(a, row);
		if (nul[i])
			continue;
		p = arrow_get_bytes(a, row, &len);
		if (len > WARP_INT32_MAX)
		{
			*bad = i;
			return WARP_LOAD_UNSUPPORTED;
		}
		out[i] = text_match(x, cs, p, len);
		if (out[i] < 0 && cs->text == WARP_TEXT_KEY)
			return WARP_LOAD_NO_MEMORY;
		if (out[i] == TEXT_LIKE_ESCAPE && cs->text == WARP_TEXT_LIKE)
		{
			*bad = i;
			return WARP_LOAD_LIKE_ESCAPE;
		}
	}
	return WARP_LOAD_OK;
}

/*
 * A native column (WarpColumnSpec.native): int64 or double engine values
 * as they are, and the validity bitmap.
 */
static WarpLoadStatus
load_native_column(WarpCpu *x, int c, const warp_uint16 *sel, int n)
{
	const WarpColumnSpec *cs = &x->p->cols[c];
	const ArrowArray *a = &x->bcols[c];
	const ArrowType *t = &a->field->type;
	bool		isfloat = WARP_TYPE_IS_FLOAT(cs->type);
	warp_uint8 *nul = x->cn[c];
	int			k;

	if (a->field->has_dict || a->values == NULL || a->offset != 0 ||
		(isfloat ? t->id != ARROW_TYPE_FLOAT || t->precision != ARROW_PRECISION_DOUBLE :
		 t->id != ARROW_TYPE_INT || t->bit_width != 64 || !t->is_signed) ||
		a->values_len < (x->vstart + x->vn) * 8)
		return WARP_LOAD_UNSUPPORTED;
	for (k = 0; k < n; k++)
	{
		int			i = sel[k];

		nul[i] = arrow_is_null(a, x->vstart + i);
		if (isfloat)
			x->cf[c][i] = ((const double *) a->values)[x->vstart + i];
		else
			x->ci[c][i] = ((const warp_int64 *) a->values)[x->vstart + i];
	}
	return WARP_LOAD_OK;
}

static WarpLoadStatus
load_column(WarpCpu *x, int c, const warp_uint16 *sel, int n, int *bad)
{
	const WarpColumnSpec *cs = &x->p->cols[c];
	const ArrowArray *a = &x->bcols[c];
	const ArrowType *t = &a->field->type;
	warp_int64	base = a->offset + x->vstart;
	warp_uint8 *nul = x->cn[c];
	bool		dense = n == x->vn;	/* sel is 0 .. vn-1 */
	int			k;

	if (cs->native)
		return load_native_column(x, c, sel, n);
	if (cs->decimal == WARP_DECIMAL_WIDE)
		return load_wide_decimal_column(x, c, sel, n, bad);
	if (cs->decimal)
		return load_decimal_column(x, c, sel, n, bad);
	if (cs->text)
		return load_text_column(x, c, sel, n, bad);
	if (!warp_cpu_can_load(a->field, (WarpType) cs->type))
		return WARP_LOAD_UNSUPPORTED;
	if (a->field->has_dict)
		return load_dict_column(x, c, sel, n, bad);
	if (a->validity == NULL)
	{
		if (dense)
			memset(nul, 0, n);
		else
			for (k = 0; k < n; k++)
				nul[sel[k]] = 0;
	}
	else
		for (k = 0; k < n; k++)
			nul[sel[k]] = arrow_is_null(a, x->vstart + sel[k]);

	if (WARP_TYPE_IS_FLOAT(cs->type))
	{
		double	   *out = x->cf[c];

		if (t->precision == ARROW_PRECISION_DOUBLE)
		{
			const double *in = (const double *) a->values + base;

			if (dense)
				memcpy(out, in, sizeof(double) * n);
			else
				for (k = 0; k < n; k++)
					out[sel[k]] = in[sel[k]];
		}
		else if (t->precision == ARROW_PRECISION_SINGLE)
		{
			const float *in = (const float *) a->values + base;

			for (k = 0; k < n; k++)
				out[sel[k]] = in[sel[k]];
		}
		else
			for (k = 0; k < n; k++)
				out[sel[k]] = arrow_get_double(a, x->vstart + sel[k]);
		return WARP_LOAD_OK;
	}
	else
	{
		warp_int64 *out = x->ci[c];

		if (t->id == ARROW_TYPE_INT && t->bit_width == 32 && t->is_signed)
		{
			const warp_int32 *in = (const warp_int32 *) a->values + base;

			if (dense)
				for (k = 0; k < n; k++)
					out[k] = in[k];
			else
				for (k = 0; k < n; k++)
					out[sel[k]] = in[sel[k]];
		}
		else if (t->id == ARROW_TYPE_INT && t->bit_width == 64 && t->is_signed)
		{
			const warp_int64 *in = (const warp_int64 *) a->values + base;

			for (k = 0; k < n; k++)
				out[sel[k]] = in[sel[k]];
		}
		else if (t->id == ARROW_TYPE_BOOL)
		{
			for (k = 0; k < n; k++)
				out[sel[k]] = arrow_get_bit(a->values, base + sel[k]);
		}
		else if (t->id == ARROW_TYPE_DATE)
		{
			for (k = 0; k < n; k++)
			{
				int			i = sel[k];

				if (!nul[i] && !conv_date(arrow_get_int(a, x->vstart + i), t->unit, &out[i]))
				{
					*bad = i;
					return WARP_LOAD_RANGE;
				}
			}
		}
		else if (t->id == ARROW_TYPE_TIMESTAMP)
		{
			for (k = 0; k < n; k++)
			{
				int			i = sel[k];

				if (!nul[i] && !conv_timestamp(arrow_get_int(a, x->vstart + i), t->unit, &out[i]))
				{
					*bad = i;
					return WARP_LOAD_RANGE;
				}
			}
		}
		else
			for (k = 0; k < n; k++)
				out[sel[k]] = arrow_get_int(a, x->vstart + sel[k]);
	}
	return WARP_LOAD_OK;
}

/* ----------------------------------------------------------- evaluation */

static WarpStatus eval(WarpCpu *x, int ni, const warp_uint16 *sel, int n);

static inline bool
values_equal(WarpCpu *x, int a, int b, int i)
{
	if (IS_FLOAT_NODE(x, a))
		return warp_float8_eq(x->fv[a][i], x->fv[b][i]);
	return x->iv[a][i] == x->iv[b][i];
}

static inline void
copy_value(WarpCpu *x, int dst, int src, int i)
{
	x->nv[dst][i] = x->nv[src][i];
	if (IS_FLOAT_NODE(x, dst))
		x->fv[dst][i] = x->fv[src][i];
	else if (x->p->nodes[dst].type == WT_NUMERIC)
		x->qv[dst][i] = x->qv[src][i];
	else
		x->iv[dst][i] = x->iv[src][i];
}

#define ARITH_LOOP(T, IN, FN) \
	for (k = 0; k < n; k++) \
	{ \
		int			i = sel[k]; \
		T			r; \
		if (an[i] | bn[i]) { rn[i] = 1; continue; } \
		rn[i] = 0; \
		st = FN((T) IN##a[i], (T) IN##b[i], &r); \
		if (warp_unlikely(st != WARP_OK)) return st; \
		OUT[i] = r; \
	}

#define ARITH_OPS(T, IN, PFX) \
	switch (nd->sub) \
	{ \
		case WARP_ARITH_ADD: ARITH_LOOP(T, IN, PFX##_pl); break; \
		case WARP_ARITH_SUB: ARITH_LOOP(T, IN, PFX##_mi); break; \
		case WARP_ARITH_MUL: ARITH_LOOP(T, IN, PFX##_mul); break; \
		case WARP_ARITH_DIV: ARITH_LOOP(T, IN, PFX##_div); break; \
		default: ARITH_LOOP(T, IN, PFX##_mod); break; \
	}

/*
 * Numeric nodes: int128 unscaled values at the nodes' scales, with
 * warp_ops_numeric.h's exact operations.  The builder bounds every value
 * below 10^38 from the columns' precisions, so WARP_ERR_NUMERIC_OVERFLOW
 * cannot arise from valid data; should it, it is reported, never wrapped.
 */
static WarpStatus
eval_numeric_arith(WarpCpu *x, const WarpNode *nd, int ni, const warp_uint16 *sel, int n)
{
	const warp_uint8 *an = x->nv[nd->a],
			   *bn = x->nv[nd->b];
	const warp_int128 *qa = x->qv[nd->a],
			   *qb = x->qv[nd->b];
	warp_uint8 *rn = x->nv[ni];
	warp_int128 *out = x->qv[ni];
	int			sa = x->p->nodes[nd->a].scale,
				sb = x->p->nodes[nd->b].scale;
	int			k;

	for (k = 0; k < n; k++)
	{
		int			i = sel[k];
		WarpNumeric r;
		WarpStatus	st;

		rn[i] = an[i] | bn[i];
		if (rn[i])
			continue;
		if (nd->sub == WARP_ARITH_MUL)
			st = warp_numeric_mul(warp_numeric_make(qa[i], sa), warp_numeric_make(qb[i], sb), &r);
		else if (nd->sub == WARP_ARITH_ADD)
			st = warp_numeric_add(warp_numeric_make(qa[i], sa), warp_numeric_make(qb[i], sb), &r);
		else
			st = warp_numeric_sub(warp_numeric_make(qa[i], sa), warp_numeric_make(qb[i], sb), &r);
		if (warp_unlikely(st != WARP_OK))
			return st;
		out[i] = r.value;
	}
	return WARP_OK;
}

static void
eval_numeric_cmp(WarpCpu *x, const WarpNode *nd, int ni, const warp_uint16 *sel, int n)
{
	const warp_uint8 *an = x->nv[nd->a],
			   *bn = x->nv[nd->b];
	const warp_int128 *qa = x->qv[nd->a],
			   *qb = x->qv[nd->b];
	int			sa = x->p->nodes[nd->a].scale,
				sb = x->p->nodes[nd->b].scale;
	warp_uint8 *rn = x->nv[ni];
	warp_int64 *out = x->iv[ni];
	int			k;

	for (k = 0; k < n; k++)
	{
		int			i = sel[k];
		int			c;

		rn[i] = an[i] | bn[i];
		if (rn[i])
			continue;
		c = warp_numeric_cmp(warp_numeric_make(qa[i], sa), warp_numeric_make(qb[i], sb));
		out[i] = cmp_holds(nd->sub, c);
	}
}

/* float types have no % */
#define warp_float8_mod warp_float8_div
#define warp_float4_mod warp_float4_div

static WarpStatus
eval_arith(WarpCpu *x, const WarpNode *nd, int ni, const warp_uint16 *sel, int n)
{
	const warp_uint8 *an,
			   *bn;
	warp_uint8 *rn = x->nv[ni];
	WarpStatus	st;
	int			k;

	if ((st = eval(x, nd->a, sel, n)) != WARP_OK ||
		(st = eval(x, nd->b, sel, n)) != WARP_OK)
		return st;
	an = x->nv[nd->a];
	bn = x->nv[nd->b];
	if (nd->type == WT_NUMERIC)
		return eval_numeric_arith(x, nd, ni, sel, n);
	if (WARP_TYPE_IS_FLOAT(nd->type))
	{
		const double *fa = x->fv[nd->a],
				   *fb = x->fv[nd->b];
		double	   *OUT = x->fv[ni];

		if (nd->type == WT_FLOAT8)
			ARITH_OPS(warp_float8, f, warp_float8)
		else
			ARITH_OPS(warp_float4, f, warp_float4)
	}
	else
	{
		const warp_int64 *ia = x->iv[nd->a],
				   *ib = x->iv[nd->b];
		warp_int64 *OUT = x->iv[ni];

		if (nd->type == WT_INT8)
			ARITH_OPS(warp_int64, i, warp_int8)
		else if (nd->type == WT_INT4)
			ARITH_OPS(warp_int32, i, warp_int4)
		else
			ARITH_OPS(warp_int16, i, warp_int2)
	}
	return WARP_OK;
}

static WarpStatus
eval_cmp(WarpCpu *x, const WarpNode *nd, int ni, const warp_uint16 *sel, int n)
{
	const warp_uint8 *an,
			   *bn;
	warp_uint8 *rn = x->nv[ni];
	warp_int64 *out = x->iv[ni];
	WarpStatus	st;
	int			k;

	if ((st = eval(x, nd->a, sel, n)) != WARP_OK ||
		(st = eval(x, nd->b, sel, n)) != WARP_OK)
		return st;
	an = x->nv[nd->a];
	bn = x->nv[nd->b];
	if (x->p->nodes[nd->a].type == WT_NUMERIC)
	{
		eval_numeric_cmp(x, nd, ni, sel, n);
		return WARP_OK;
	}
	if (IS_FLOAT_NODE(x, nd->a))
	{
		const double *fa = x->fv[nd->a],
				   *fb = x->fv[nd->b];

		for (k = 0; k < n; k++)
		{
			int			i = sel[k];
			int			c;

			rn[i] = an[i] | bn[i];
			c = warp_float8_cmp(fa[i], fb[i]);
			out[i] = cmp_holds(nd->sub, c);
		}
	}
	else
	{
		const warp_int64 *ia = x->iv[nd->a],
				   *ib = x->iv[nd->b];

#define CMP_LOOP(OP) \
		for (k = 0; k < n; k++) \
		{ \
			int			i = sel[k]; \
			rn[i] = an[i] | bn[i]; \
			out[i] = ia[i] OP ib[i]; \
		}
		switch (nd->sub)
		{
			case WARP_CMP_EQ: CMP_LOOP(==); break;
			case WARP_CMP_NE: CMP_LOOP(!=); break;
			case WARP_CMP_LT: CMP_LOOP(<); break;
			case WARP_CMP_LE: CMP_LOOP(<=); break;
			case WARP_CMP_GT: CMP_LOOP(>); break;
			default: CMP_LOOP(>=); break;
		}
#undef CMP_LOOP
	}
	return WARP_OK;
}

/* AND / OR with SQL's three-valued logic, short-circuit per row */
static WarpStatus
eval_bool(WarpCpu *x, const WarpNode *nd, int ni, const warp_uint16 *sel, int n)
{
	warp_uint16 *cur = x->selA[ni];
	warp_int64 *out = x->iv[ni];
	warp_uint8 *rn = x->nv[ni];
	bool		is_and = nd->op == WN_AND;
	int			m = n,
				k,
				j;

	for (k = 0; k < n; k++)
	{
		cur[k] = sel[k];
		out[sel[k]] = is_and;
		rn[sel[k]] = 0;
	}
	for (j = 0; j < nd->nargs && m > 0; j++)
	{
		int			arg = x->p->args[nd->args_off + j];
		const warp_int64 *av;
		const warp_uint8 *anul;
		int			m2 = 0;
		WarpStatus	st = eval(x, arg, cur, m);

		if (st != WARP_OK)
			return st;
		av = x->iv[arg];
		anul = x->nv[arg];
		for (k = 0; k < m; k++)
		{
			int			i = cur[k];

			if (!anul[i] && (av[i] != 0) != is_and)
			{
				/* AND met false / OR met true: decided */
				out[i] = !is_and;
				rn[i] = 0;
				continue;
			}
			if (anul[i])
				rn[i] = 1;
			cur[m2++] = (warp_uint16) i;
		}
		m = m2;
	}
	return WARP_OK;
}

static WarpStatus
eval_cast(WarpCpu *x, const WarpNode *nd, int ni, const warp_uint16 *sel, int n)
{
	const warp_uint8 *an;
	warp_uint8 *rn = x->nv[ni];
	WarpStatus	st = eval(x, nd->a, sel, n);
	bool		from_float = IS_FLOAT_NODE(x, nd->a);
	int			k;

	if (st != WARP_OK)
		return st;
	an = x->nv[nd->a];
	for (k = 0; k < n; k++)
	{
		int			i = sel[k];

		rn[i] = an[i];
		if (an[i])
			continue;
		if (nd->type == WT_NUMERIC)
		{
			/* int2/int4/int8 to numeric: exact, scale 0 */
			x->qv[ni][i] = x->iv[nd->a][i];
			continue;
		}
		if (from_float)
		{
			double		v = x->fv[nd->a][i];

			switch (nd->type)
			{
				case WT_FLOAT8:
					x->fv[ni][i] = v;
					break;
				case WT_FLOAT4:
					{
						warp_float4 r;

						if ((st = warp_float8_to_float4(v, &r)) != WARP_OK)
							return st;
						x->fv[ni][i] = r;
						break;
					}
				case WT_INT2:
					{
						warp_int16	r;

						if ((st = warp_float8_to_int2(v, &r)) != WARP_OK)
							return st;
						x->iv[ni][i] = r;
						break;
					}
				case WT_INT4:
					{
						warp_int32	r;

						if ((st = warp_float8_to_int4(v, &r)) != WARP_OK)
							return st;
						x->iv[ni][i] = r;
						break;
					}
				default:
					{
						warp_int64	r;

						if ((st = warp_float8_to_int8(v, &r)) != WARP_OK)
							return st;
						x->iv[ni][i] = r;
						break;
					}
			}
		}
		else
		{
			warp_int64	v = x->iv[nd->a][i];

			switch (nd->type)
			{
				case WT_FLOAT8:
					x->fv[ni][i] = warp_int8_to_float8(v);
					break;
				case WT_FLOAT4:
					x->fv[ni][i] = warp_int8_to_float4(v);
					break;
				case WT_INT2:
					{
						warp_int16	r;

						if ((st = warp_int2_check(v, &r)) != WARP_OK)
							return st;
						x->iv[ni][i] = r;
						break;
					}
				case WT_INT4:
					{
						warp_int32	r;

						if ((st = warp_int4_check(v, &r)) != WARP_OK)
							return st;
						x->iv[ni][i] = r;
						break;
					}
				default:
					x->iv[ni][i] = v;
					break;
			}
		}
	}
	return WARP_OK;
}

/* CASE and COALESCE: each row takes the first branch that applies */
static WarpStatus
eval_choice(WarpCpu *x, const WarpNode *nd, int ni, const warp_uint16 *sel, int n)
{
	warp_uint16 *cur = x->selA[ni];
	warp_uint16 *hit = x->selB[ni];
	const warp_int32 *args = x->p->args + nd->args_off;
	int			m = n,
				k,
				j;
	WarpStatus	st;

	memcpy(cur, sel, sizeof(warp_uint16) * n);
	if (nd->op == WN_COALESCE)
	{
		for (j = 0; j < nd->nargs && m > 0; j++)
		{
			int			m2 = 0;

			if ((st = eval(x, args[j], cur, m)) != WARP_OK)
				return st;
			for (k = 0; k < m; k++)
			{
				int			i = cur[k];

				if (!x->nv[args[j]][i])
					copy_value(x, ni, args[j], i);
				else
					cur[m2++] = (warp_uint16) i;
			}
			m = m2;
		}
	}
	else
	{
		int			npairs = nd->nargs / 2;

		for (j = 0; j < npairs && m > 0; j++)
		{
			int			w = args[2 * j],
						t = args[2 * j + 1];
			int			m2 = 0,
						h = 0;

			if ((st = eval(x, w, cur, m)) != WARP_OK)
				return st;
			for (k = 0; k < m; k++)
			{
				int			i = cur[k];

				if (!x->nv[w][i] && x->iv[w][i])
					hit[h++] = (warp_uint16) i;
				else
					cur[m2++] = (warp_uint16) i;
			}
			m = m2;
			if (h > 0)
			{
				if ((st = eval(x, t, hit, h)) != WARP_OK)
					return st;
				for (k = 0; k < h; k++)
					copy_value(x, ni, t, hit[k]);
			}
		}
		if ((nd->flags & WARP_CASE_HAS_ELSE) && m > 0)
		{
			int			e = args[nd->nargs - 1];

			if ((st = eval(x, e, cur, m)) != WARP_OK)
				return st;
			for (k = 0; k < m; k++)
				copy_value(x, ni, e, cur[k]);
			m = 0;
		}
	}
	/* rows no branch produced a value for are NULL */
	for (k = 0; k < m; k++)
		x->nv[ni][cur[k]] = 1;
	return WARP_OK;
}

/* v / 10^scale as the nearest double, as numeric_float8 rounds it */
static double
scaled_to_double(warp_int64 v, int scale)
{
	static const double p10[] = {1, 10, 100, 1000, 1e4, 1e5, 1e6};
	char		buf[48];
	warp_uint64 mag = v < 0 ? -(warp_uint64) v : (warp_uint64) v;

	if (scale == 0 || mag < (UINT64_C(1) << 53))
		return scale == 0 ? (double) v : (double) v / p10[scale];	/* exact operands */
	/* beyond 2^53 the integer itself is rounded: go through the decimal */
	snprintf(buf, sizeof(buf), "%s%llu.%0*llu", v < 0 ? "-" : "",
			 (unsigned long long) (mag / (warp_uint64) p10[scale]), scale,
			 (unsigned long long) (mag % (warp_uint64) p10[scale]));
	return strtod(buf, NULL);
}

/* date_trunc / extract / date_part of a date or timestamp */
/* date arithmetic (WARP_DT_ARITH) on a and b, both evaluated */
static WarpStatus
eval_date_arith(WarpCpu *x, const WarpNode *nd, int ni, const warp_uint16 *sel, int n)
{
	WarpStatus	st;
	int			k;

	if ((st = eval(x, nd->b, sel, n)) != WARP_OK)
		return st;
	for (k = 0; k < n; k++)
	{
		int			i = sel[k];

		x->nv[ni][i] = x->nv[nd->a][i] | x->nv[nd->b][i];
		if (x->nv[ni][i])
			continue;
		if ((st = warp_dt_arith(&x->p->tz, nd, x->iv[nd->a][i], x->iv[nd->b][i],
								&x->iv[ni][i])) != WARP_OK)
			return st;
	}
	return WARP_OK;
}

/* date_trunc / extract / date_part / conversions / date arithmetic */
static WarpStatus
eval_datetime(WarpCpu *x, const WarpNode *nd, int ni, const warp_uint16 *sel, int n)
{
	WarpStatus	st = eval(x, nd->a, sel, n);
	bool		is_ts = x->p->nodes[nd->a].type == WT_TIMESTAMP;
	bool		in_zone = (nd->flags & WARP_DT_TZ) != 0;
	bool		sat = (nd->flags & WARP_DT_SATURATE) != 0;
	const WarpTz *tz = &x->p->tz;
	WarpDtField field = (WarpDtField) nd->sub;
	int			scale = warp_dt_extract_scale(field, is_ts);
	int			k;

	if (st != WARP_OK)
		return st;
	if (nd->flags & WARP_DT_ARITH)
		return eval_date_arith(x, nd, ni, sel, n);
	for (k = 0; k < n; k++)
	{
		int			i = sel[k];
		warp_int64	v = x->iv[nd->a][i];
		warp_int64 *out = &x->iv[ni][i];
		WarpNumeric num;

		x->nv[ni][i] = x->nv[nd->a][i];
		if (x->nv[ni][i])
			continue;
		if (nd->flags & WARP_DT_CAST)
		{
			switch ((WarpDtCast) nd->sub)
			{
				case WARP_DTC_DATE_TIMESTAMP:
					st = warp_date_to_timestamp_sat((warp_int32) v, sat, out);
					break;
				case WARP_DTC_TIMESTAMPTZ_TIMESTAMP:
					st = warp_timestamptz_to_timestamp(tz, v, out);
					break;
				case WARP_DTC_TIMESTAMP_DATE:
					st = warp_timestamp_to_date(v, out);
					break;
				case WARP_DTC_TIMESTAMPTZ_DATE:
					st = warp_timestamptz_to_date(tz, v, out);
					break;
				case WARP_DTC_TIMESTAMP_TIMESTAMPTZ:
					st = warp_timestamp_to_timestamptz_sat(tz, v, sat, out);
					break;
				default:
					st = warp_date_to_timestamptz_sat(tz, v, sat, out);
					break;
			}
			if (st != WARP_OK)
				return st;
			continue;
		}
		if (nd->flags & WARP_DT_TRUNC)
		{
			st = in_zone ? warp_timestamptz_trunc(tz, field, v, out)
				: warp_timestamp_trunc(field, v, out);
			if (st != WARP_OK)
				return st;
			continue;
		}
		st = in_zone ? warp_timestamptz_extract(tz, field, v, &num)
			: is_ts ? warp_timestamp_extract(field, v, &num)
			: warp_date_extract(field, (warp_int32) v, &num);
		if (st != WARP_OK)
			return st;
		/* every field fits int64 at its fixed scale (checked, not assumed) */
		if (num.scale != scale || num.value > WARP_INT64_MAX || num.value < WARP_INT64_MIN)
			return WARP_ERR_NUMERIC_OVERFLOW;
		if (nd->flags & WARP_DT_PART)
			x->fv[ni][i] = scaled_to_double((warp_int64) num.value, scale);
		else if (nd->type == WT_NUMERIC)
			x->qv[ni][i] = num.value;
		else
			*out = (warp_int64) num.value;
	}
	return WARP_OK;
}

static WarpStatus
eval(WarpCpu *x, int ni, const warp_uint16 *sel, int n)
{
	const WarpNode *nd = &x->p->nodes[ni];
	warp_uint8 *rn = x->nv[ni];
	WarpStatus	st;
	int			k;

	switch ((WarpOp) nd->op)
	{
		case WN_COL:
			{
				int			bad = 0;

				x->load_status = load_column(x, nd->a, sel, n, &bad);
				if (x->load_status == WARP_LOAD_NO_MEMORY)
					return WARP_ERR_OUT_OF_MEMORY;
				if (x->load_status == WARP_LOAD_LIKE_ESCAPE)
				{
					/* a row's error, found in scan order like a qual's */
					x->load_status = WARP_LOAD_OK;
					return WARP_ERR_LIKE_ESCAPE;
				}
				if (x->load_status != WARP_LOAD_OK)
				{
					x->bad_col = nd->a;
					x->bad_row = x->vstart + bad;
					return WARP_STATUS_LOAD;
				}
				if (nd->type == WT_NUMERIC && x->cq[nd->a])
				{
					/* a wide decimal column's unscaled int128 */
					const warp_int128 *cv = x->cq[nd->a];

					for (k = 0; k < n; k++)
						x->qv[ni][sel[k]] = cv[sel[k]];
				}
				else if (nd->type == WT_NUMERIC)
				{
					/* a decimal column's unscaled int64, widened */
					const warp_int64 *cv = x->ci[nd->a];

					for (k = 0; k < n; k++)
						x->qv[ni][sel[k]] = cv[sel[k]];
				}
				return WARP_OK;
			}
		case WN_CONST:
			return WARP_OK;
		case WN_ARITH:
			return eval_arith(x, nd, ni, sel, n);
		case WN_CMP:
			return eval_cmp(x, nd, ni, sel, n);
		case WN_IN_SET:
			if ((st = eval(x, nd->a, sel, n)) != WARP_OK)
				return st;
			{
				const warp_int64 *set = x->p->setvals + nd->args_off;
				bool		is_not = (nd->flags & WARP_IN_NOT) != 0,
							has_null = (nd->flags & WARP_IN_HAS_NULL) != 0;

				for (k = 0; k < n; k++)
				{
					int			i = sel[k],
								r;

					rn[i] = x->nv[nd->a][i];
					if (rn[i])
						continue;
					r = warp_in_set_test(set, nd->nargs, x->iv[nd->a][i], is_not, has_null);
					if (r < 0)
						rn[i] = 1;
					else
						x->iv[ni][i] = r;
				}
			}
			return WARP_OK;
		case WN_AND:
		case WN_OR:
			return eval_bool(x, nd, ni, sel, n);
		case WN_CAST:
			return eval_cast(x, nd, ni, sel, n);
		case WN_DATETIME:
			return eval_datetime(x, nd, ni, sel, n);
		case WN_CASE:
		case WN_COALESCE:
			return eval_choice(x, nd, ni, sel, n);
		case WN_NEG:
			if ((st = eval(x, nd->a, sel, n)) != WARP_OK)
				return st;
			for (k = 0; k < n; k++)
			{
				int			i = sel[k];

				rn[i] = x->nv[nd->a][i];
				if (rn[i])
					continue;
				if (WARP_TYPE_IS_FLOAT(nd->type))
					x->fv[ni][i] = -x->fv[nd->a][i];
				else if (nd->type == WT_NUMERIC)
					x->qv[ni][i] = -x->qv[nd->a][i];	/* |v| < 10^38 */
				else
				{
					warp_int64	v = x->iv[nd->a][i];

					if (nd->type == WT_INT8)
					{
						if ((st = warp_int8_um(v, &x->iv[ni][i])) != WARP_OK)
							return st;
					}
					else if (nd->type == WT_INT4)
					{
						warp_int32	r;

						if ((st = warp_int4_um((warp_int32) v, &r)) != WARP_OK)
							return st;
						x->iv[ni][i] = r;
					}
					else
					{
						warp_int16	r;

						if ((st = warp_int2_um((warp_int16) v, &r)) != WARP_OK)
							return st;
						x->iv[ni][i] = r;
					}
				}
			}
			return WARP_OK;
		case WN_NOT:
			if ((st = eval(x, nd->a, sel, n)) != WARP_OK)
				return st;
			for (k = 0; k < n; k++)
			{
				int			i = sel[k];

				rn[i] = x->nv[nd->a][i];
				x->iv[ni][i] = !x->iv[nd->a][i];
			}
			return WARP_OK;
		case WN_IS_NULL:
		case WN_IS_NOT_NULL:
			if ((st = eval(x, nd->a, sel, n)) != WARP_OK)
				return st;
			for (k = 0; k < n; k++)
			{
				int			i = sel[k];

				rn[i] = 0;
				x->iv[ni][i] = x->nv[nd->a][i] == (nd->op == WN_IS_NULL);
			}
			return WARP_OK;
		case WN_DISTINCT:
			if ((st = eval(x, nd->a, sel, n)) != WARP_OK ||
				(st = eval(x, nd->b, sel, n)) != WARP_OK)
				return st;
			for (k = 0; k < n; k++)
			{
				int			i = sel[k];
				bool		an = x->nv[nd->a][i],
							bn = x->nv[nd->b][i];
				bool		d = (an || bn) ? an != bn : !values_equal(x, nd->a, nd->b, i);

				rn[i] = 0;
				x->iv[ni][i] = nd->sub ? !d : d;
			}
			return WARP_OK;
		case WN_NULLIF:
			if ((st = eval(x, nd->a, sel, n)) != WARP_OK ||
				(st = eval(x, nd->b, sel, n)) != WARP_OK)
				return st;
			for (k = 0; k < n; k++)
			{
				int			i = sel[k];

				copy_value(x, ni, nd->a, i);
				if (!x->nv[nd->a][i] && !x->nv[nd->b][i] &&
					values_equal(x, nd->a, nd->b, i))
					rn[i] = 1;
			}
			return WARP_OK;
	}
	return WARP_OK;
}

/* ----------------------------------------------------------- fast paths */

/*
 * The commonest shapes get loops that read the Arrow buffer directly: a
 * qual "column op constant" and a join key, both over a plain signed
 * integer column.  Loading such a column cannot fail and an integer
 * comparison or lookup cannot raise, so these give exactly the general
 * path's result, in one pass instead of a load, an evaluation and a
 * compaction over vectors.
 */

/* the batch's values of column node ni when it is a plain signed integer
 * column of a type the engine loads as is; NULL otherwise */
static const ArrowArray *
plain_int_column(WarpCpu *x, int ni)
{
	const WarpNode *nd = &x->p->nodes[ni];
	const ArrowArray *a;
	const ArrowType *t;

	if (nd->op != WN_COL || x->p->cols[nd->a].decimal || x->p->cols[nd->a].text)
		return NULL;
	a = &x->bcols[nd->a];
	t = &a->field->type;
	if (a->field->has_dict || t->id != ARROW_TYPE_INT || !t->is_signed ||
		(t->bit_width != 16 && t->bit_width != 32 && t->bit_width != 64) ||
		a->values == NULL ||
		!warp_cpu_can_load(a->field, (WarpType) x->p->cols[nd->a].type))
		return NULL;
	return a;
}

static inline int
valid_bit(const warp_uint8 *validity, warp_int64 j)
{
	return (validity[j >> 3] >> (j & 7)) & 1;
}

/*
 * Keep the rows sel[0..m) of an integer column whose value v (as int64)
 * satisfies KEEP, in place: m2 rows kept.  Branch-free: selectivity is
 * data, not a pattern.  In scope: a, base, sel, m, m2, k, dense.
 */
#define SEL_FILTER_LOOP(T, KEEP) \
	do { \
		const T    *in = (const T *) a->values + base; \
		if (a->validity == NULL && dense) \
			for (k = 0; k < m; k++) \
			{ \
				warp_int64	v = (warp_int64) in[k]; \
				sel[m2] = (warp_uint16) k; \
				m2 += (KEEP); \
			} \
		else if (a->validity == NULL) \
			for (k = 0; k < m; k++) \
			{ \
				int			i = sel[k]; \
				warp_int64	v = (warp_int64) in[i]; \
				sel[m2] = (warp_uint16) i; \
				m2 += (KEEP); \
			} \
		else \
			for (k = 0; k < m; k++) \
			{ \
				int			i = sel[k]; \
				warp_int64	v = (warp_int64) in[i]; \
				sel[m2] = (warp_uint16) i; \
				m2 += (KEEP) & valid_bit(a->validity, base + i); \
			} \
	} while (0)

#define FCC_LOOP(T, OP) SEL_FILTER_LOOP(T, v OP cv)

#define FCC_OPS(T) \
	switch (op) \
	{ \
		case WARP_CMP_EQ: FCC_LOOP(T, ==); break; \
		case WARP_CMP_NE: FCC_LOOP(T, !=); break; \
		case WARP_CMP_LT: FCC_LOOP(T, <); break; \
		case WARP_CMP_LE: FCC_LOOP(T, <=); break; \
		case WARP_CMP_GT: FCC_LOOP(T, >); break; \
		default: FCC_LOOP(T, >=); break; \
	}

/*
 * Is qual qn "column op constant" (either side) on a plain integer column?
 * Then its column, its constant node and the operator with the column on
 * the left.
 */
static const ArrowArray *
col_const_shape(WarpCpu *x, int qn, int *colnode, int *constnode, int *op)
{
	const ArrowArray *a;

	if (!warp_cmp_col_const(x->p, qn, colnode, constnode, op) ||
		IS_FLOAT_NODE(x, *constnode) || (a = plain_int_column(x, *colnode)) == NULL)
		return NULL;
	return a;
}

/*
 * Qual qn over the rows sel[0..m) when it is "column op constant" (either
 * side) on a plain integer column: keep the rows where it is true, in
 * place.  Returns the rows kept, or -1 when the qual has another shape.
 */
static int
filter_col_const(WarpCpu *x, int qn, warp_uint16 *sel, int m)
{
	const ArrowArray *a;
	int			colnode,
				constnode,
				op,
				k,
				m2 = 0;
	warp_int64	base,
				cv;
	bool		dense = m == x->vn;	/* sel is 0 .. vn-1 */

	if ((a = col_const_shape(x, qn, &colnode, &constnode, &op)) == NULL)
		return -1;
	if (x->nv[constnode][0])
		return 0;				/* NULL: the comparison is never true */
	cv = x->iv[constnode][0];
	base = a->offset + x->vstart;
	switch (a->field->type.bit_width)
	{
		case 16: FCC_OPS(warp_int16); break;
		case 32: FCC_OPS(warp_int32); break;
		default: FCC_OPS(warp_int64); break;
	}
	return m2;
}

#define FCR_LOOP(T) \
	SEL_FILTER_LOOP(T, (warp_uint64) v - (warp_uint64) lo <= width)

/*
 * Quals qa and qb over the rows sel[0..m) when they bound one plain integer
 * column from both sides with constants (BETWEEN's two comparisons): one
 * pass, lo <= v <= hi as one comparison of v - lo (unsigned, wrapping)
 * with hi - lo.  Neither comparison can
 * fail, so testing qb on rows qa rejects changes no outcome.  Returns the
 * rows kept, or -1 for another shape.
 */
static int
filter_col_range(WarpCpu *x, int qa, int qb, warp_uint16 *sel, int m)
{
	const ArrowArray *a,
			   *b;
	int			ca,
				cb,
				ka,
				kb,
				opa,
				opb,
				k,
				m2 = 0;
	warp_int64	lo = INT64_MIN,
				hi = INT64_MAX,
				base;
	warp_uint64 width;
	bool		dense = m == x->vn;
	int			i;

	if ((a = col_const_shape(x, qa, &ca, &ka, &opa)) == NULL ||
		(b = col_const_shape(x, qb, &cb, &kb, &opb)) == NULL ||
		x->p->nodes[ca].a != x->p->nodes[cb].a)
		return -1;
	for (i = 0; i < 2; i++)
	{
		int			op = i == 0 ? opa : opb;
		int			kn = i == 0 ? ka : kb;
		warp_int64	c;

		if (op != WARP_CMP_GE && op != WARP_CMP_GT && op != WARP_CMP_LE && op != WARP_CMP_LT)
			return -1;
		if (x->nv[kn][0])
			return 0;			/* NULL: never true */
		c = x->iv[kn][0];
		if (!warp_cmp_narrow(op, c, &lo, &hi))
			return 0;			/* no value passes both */
	}
	if (lo == INT64_MIN || hi == INT64_MAX)
		return -1;				/* not one bound on each side */
	width = (warp_uint64) hi - (warp_uint64) lo;
	base = a->offset + x->vstart;
	switch (a->field->type.bit_width)
	{
		case 16: FCR_LOOP(warp_int16); break;
		case 32: FCR_LOOP(warp_int32); break;
		default: FCR_LOOP(warp_int64); break;
	}
	(void) b;
	return m2;
}

#undef FCR_LOOP
#undef FCC_OPS
#undef FCC_LOOP
#undef SEL_FILTER_LOOP

/* ------------------------------------------------------------ grouping */

static warp_uint64
key_hash(const warp_int64 *kv, const warp_uint8 *kn, int nkeys)
{
	warp_uint64 h = UINT64_C(0x9e3779b97f4a7c15);
	int			k;

	for (k = 0; k < nkeys; k++)
		h = warp_hash_int64((warp_int64) (h ^ (kn[k] ? UINT64_C(0x5bd1e995) : (warp_uint64) kv[k])) + k);
	return h;
}

static bool
rehash_groups(WarpCpu *x)
{
	warp_uint64 cap = (x->hmask + 1) * 2;
	warp_int32 *slots = xalloc(x, sizeof(warp_int32) * cap);
	int			nkeys = x->p->nkeys;
	warp_int64	g;

	if (!slots)
		return false;
	memset(slots, 0xff, sizeof(warp_int32) * cap);
	for (g = 0; g < x->ngroups; g++)
	{
		warp_uint64 s = key_hash(x->gkey + g * nkeys, x->gnull + g * nkeys, nkeys) & (cap - 1);

		while (slots[s] >= 0)
			s = (s + 1) & (cap - 1);
		slots[s] = (warp_int32) g;
	}
	x->hslot = slots;
	x->hmask = cap - 1;
	return true;
}

/* the key in kbuf/knull as a new group (row mode: every row); -1 on no memory */
/* ------------------------------------------------------ row-mode top-N */

/* compact when the table holds twice the limit, and not for tiny ones */
static warp_int64
topn_compact_floor(const WarpProgram *p)
{
	return p->topn_limit * 2 > 4096 ? p->topn_limit * 2 : 4096;
}

/*
 * PostgreSQL's order of two values of the first ORDER BY key (int64 or
 * float bits, NULL flags): < 0 when a comes first.  NULLs where the ORDER
 * BY item puts them; float NaN after every other value and equal to NaN,
 * -0 equal to 0 (float8_cmp_internal); DESC reverses the values' order.
 */
static inline int
topn_cmp(const WarpCpu *x, warp_int64 a, warp_uint8 an, warp_int64 b, warp_uint8 bn)
{
	int			c;

	if (an || bn)
	{
		if (an && bn)
			return 0;
		c = an ? 1 : -1;
		return x->p->topn_nulls_first ? -c : c;
	}
	if (x->topn_float)
	{
		double		fa,
					fb;

		memcpy(&fa, &a, sizeof(fa));
		memcpy(&fb, &b, sizeof(fb));
		if (isnan(fa) || isnan(fb))
			c = isnan(fa) ? (isnan(fb) ? 0 : 1) : -1;
		else
			c = fa < fb ? -1 : (fa > fb ? 1 : 0);
	}
	else
		c = a < b ? -1 : (a > b ? 1 : 0);
	return x->p->topn_desc ? -c : c;
}

static inline int
topn_cmp_rows(const WarpCpu *x, warp_int64 g, warp_int64 h)
{
	int			nk = x->p->nkeys,
				k = x->p->topn_key;

	return topn_cmp(x, x->gkey[g * nk + k], x->gnull[g * nk + k],
					x->gkey[h * nk + k], x->gnull[h * nk + k]);
}

/*
 * Rearrange idx[0..n) so idx[kth] holds the row of rank kth by the first
 * ORDER BY key (three-way partitions: many equal keys cost nothing extra).
 */
static void
topn_select(const WarpCpu *x, warp_int32 *idx, warp_int64 n, warp_int64 kth)
{
	warp_int64	lo = 0,
				hi = n - 1;

	while (lo < hi)
	{
		warp_int32	pivot = idx[lo + (hi - lo) / 2];
		warp_int64	lt = lo,
					i = lo,
					gt = hi;

		while (i <= gt)
		{
			int			c = topn_cmp_rows(x, idx[i], pivot);
			warp_int32	t;

			if (c < 0)
			{
				t = idx[lt];
				idx[lt++] = idx[i];
				idx[i++] = t;
			}
			else if (c > 0)
			{
				t = idx[gt];
				idx[gt--] = idx[i];
				idx[i] = t;
			}
			else
				i++;
		}
		if (kth < lt)
			hi = lt - 1;
		else if (kth > gt)
			lo = gt + 1;
		else
			return;
	}
}

/*
 * The table holds topn_compact_at rows: find the topn_limit-th best first
 * ORDER BY key among them, make it the threshold, and drop the rows that
 * sort after it (those equal to it stay: later keys decide between them).
 * false on no memory.
 */
static bool
topn_compact(WarpCpu *x)
{
	const WarpProgram *p = x->p;
	int			nk = p->nkeys;
	warp_int64	n = x->ngroups,
				g,
				w = 0,
				thr;

	if (n > x->topn_idx_cap)
	{
		x->topn_idx = xalloc(x, sizeof(warp_int32) * n);
		if (x->topn_idx == NULL)
			return false;
		x->topn_idx_cap = n;
	}
	for (g = 0; g < n; g++)
		x->topn_idx[g] = (warp_int32) g;
	topn_select(x, x->topn_idx, n, p->topn_limit - 1);
	thr = x->topn_idx[p->topn_limit - 1];
	x->topn_val = x->gkey[thr * nk + p->topn_key];
	x->topn_null = x->gnull[thr * nk + p->topn_key];
	x->topn_have = true;
	for (g = 0; g < n; g++)
	{
		if (topn_cmp(x, x->gkey[g * nk + p->topn_key], x->gnull[g * nk + p->topn_key],
					 x->topn_val, x->topn_null) > 0)
			continue;
		if (w != g)
		{
			memcpy(x->gkey + w * nk, x->gkey + g * nk, sizeof(warp_int64) * nk);
			memcpy(x->gnull + w * nk, x->gnull + g * nk, nk);
		}
		w++;
	}
	x->ngroups = w;
	/* many rows equal to the threshold: compact again only at twice them */
	x->topn_compact_at = w * 2 > topn_compact_floor(p) ? w * 2 : topn_compact_floor(p);
	return true;
}

static warp_int64
append_row(WarpCpu *x)
{
	int			nkeys = x->p->nkeys;
	warp_int64	g;

	if (x->ngroups >= WARP_INT32_MAX - 1 || !groups_reserve(x, x->ngroups + 1))
		return -1;
	g = x->ngroups++;
	memcpy(x->gkey + g * nkeys, x->kbuf, sizeof(warp_int64) * nkeys);
	memcpy(x->gnull + g * nkeys, x->knull, nkeys);
	return g;
}

/* group index of the key in kbuf/knull, created if new; -1 on no memory */
static warp_int64
find_group(WarpCpu *x, warp_int64 code)
{
	int			nkeys = x->p->nkeys;
	warp_int64	g;
	warp_uint64 s = 0;

	if (x->direct)
	{
		if (x->dgroup[code] >= 0)
			return x->dgroup[code];
	}
	else
	{
		s = key_hash(x->kbuf, x->knull, nkeys) & x->hmask;
		for (;;)
		{
			warp_int32	cand = x->hslot[s];

			if (cand < 0)
				break;
			if (memcmp(x->gkey + (warp_int64) cand * nkeys, x->kbuf, sizeof(warp_int64) * nkeys) == 0 &&
				memcmp(x->gnull + (warp_int64) cand * nkeys, x->knull, nkeys) == 0)
				return cand;
			s = (s + 1) & x->hmask;
		}
	}
	if ((g = append_row(x)) < 0)
		return -1;
	{
		int			a;

		for (a = 0; a < x->p->naggs; a++)
			memset(&x->gagg[a][g], 0, sizeof(WarpAggState));
	}
	if (x->direct)
		x->dgroup[code] = (warp_int32) g;
	else
	{
		x->hslot[s] = (warp_int32) g;
		if ((warp_uint64) x->ngroups * 2 > x->hmask && !rehash_groups(x))
			return -1;
	}
	return g;
}

/* ------------------------------------------------------------ aggregates */

static WarpStatus
accumulate(WarpCpu *x, int a, warp_int64 ne)
{
	const WarpAggSpec *ag = &x->p->aggs[a];
	WarpAggState *gs = x->gagg[a];
	const warp_uint8 *ok = x->ok;
	const warp_uint16 *epos = x->epos;
	const warp_int64 *eg = x->egroup;
	const warp_int64 *iv = ag->arg >= 0 ? x->iv[ag->arg] : NULL;
	const double *fv = ag->arg >= 0 ? x->fv[ag->arg] : NULL;
	const warp_int128 *qv = ag->arg >= 0 ? x->qv[ag->arg] : NULL;
	warp_int64	e;
	WarpStatus	st;

	switch ((WarpAggKind) ag->kind)
	{
		case WA_SUM_NUMERIC:
			for (e = 0; e < ne; e++)
			{
				int			i = epos[e];

				if (ok[i])
				{
					WarpAggState *s = &gs[eg[e]];
					warp_uint128 lo = ((warp_uint128) (warp_uint64) s->wide_hi << 64) | s->wide_lo;
					warp_uint128 sum = lo + (warp_uint128) qv[i];

					/* 192-bit add: the value sign-extended, the carry out
					 * of the low 128 bits into the top 64 */
					s->wide_top += (qv[i] < 0 ? -1 : 0) + (sum < lo ? 1 : 0);
					s->wide_lo = (warp_uint64) sum;
					s->wide_hi = (warp_int64) (warp_uint64) (sum >> 64);
					s->count++;
				}
			}
			break;
		case WA_COUNT_STAR:
		case WA_COUNT:
			for (e = 0; e < ne; e++)
				gs[eg[e]].count += ok[epos[e]];
			break;
		case WA_SUM_INT:
		case WA_AVG_INT:
			for (e = 0; e < ne; e++)
			{
				int			i = epos[e];

				if (ok[i])
				{
					WarpAggState *s = &gs[eg[e]];

					s->count++;
					/* int4_sum / int4_avg_accum: int64 sum, no check */
					s->ival = (warp_int64) ((warp_uint64) s->ival + (warp_uint64) iv[i]);
				}
			}
			break;
		case WA_SUM_INT8:
			for (e = 0; e < ne; e++)
			{
				int			i = epos[e];

				if (ok[i])
				{
					WarpAggState *s = &gs[eg[e]];

					/* do_int128_accum: 128 bits never overflow here */
					s->count++;
					warp_agg_set_wide(s, warp_agg_wide(s) + iv[i]);
				}
			}
			break;
		case WA_MIN:
		case WA_MAX:
			for (e = 0; e < ne; e++)
			{
				int			i = epos[e];
				WarpAggState *s;

				if (!ok[i])
					continue;
				s = &gs[eg[e]];
				if (qv)
				{
					/* numeric: every value has the node's display scale, so
					 * the unscaled integers order like the numerics */
					if (s->count == 0 ||
						(ag->kind == WA_MIN ? qv[i] < warp_agg_wide(s) : qv[i] > warp_agg_wide(s)))
						warp_agg_set_wide(s, qv[i]);
				}
				else if (fv)
				{
					/* float8smaller(state, new): new unless state < new */
					bool		keep = ag->kind == WA_MIN ? warp_float8_lt(s->fval, fv[i])
						: warp_float8_gt(s->fval, fv[i]);

					if (s->count == 0 || !keep)
						s->fval = fv[i];
				}
				else if (s->count == 0 ||
						 (ag->kind == WA_MIN ? iv[i] < s->ival : iv[i] > s->ival))
					s->ival = iv[i];
				s->count++;
			}
			break;
		case WA_SUM_FLOAT:
			for (e = 0; e < ne; e++)
			{
				int			i = epos[e];
				WarpAggState *s;

				if (!ok[i])
					continue;
				s = &gs[eg[e]];
				/* beyond these no order of fewer than 2^60 additions
				 * overflows (float4: 2^64 * 2^60 < FLT_MAX) */
				if (x->order_check && !isinf(fv[i]) &&
					fabs(fv[i]) >= (ag->type == WT_FLOAT4 ? 0x1p64 : 0x1p960))
					x->order_risk = true;
				if (s->count == 0)
					s->fval = fv[i];
				else if (ag->type == WT_FLOAT4)
				{
					warp_float4 r;

					if ((st = warp_float4_pl((warp_float4) s->fval, (warp_float4) fv[i], &r)) != WARP_OK)
						return st;
					s->fval = r;
				}
				else if ((st = warp_float8_pl(s->fval, fv[i], &s->fval)) != WARP_OK)
					return st;
				s->count++;
			}
			break;
		case WA_AVG_FLOAT:
			for (e = 0; e < ne; e++)
			{
				int			i = epos[e];
				WarpAggState *s;
				double		v,
							N,
							Sx,
							Sxx;

				if (!ok[i])
					continue;
				s = &gs[eg[e]];
				/* float8_accum, step for step */
				v = fv[i];
				/* Sxx squares: beyond 2^400 the order decides overflow */
				if (x->order_check && !isinf(v) && fabs(v) >= 0x1p400)
					x->order_risk = true;
				N = (double) s->count + 1.0;
				Sx = s->fval + v;
				Sxx = s->fsxx;
				if (s->count > 0)
				{
					double		tmp = v * N - Sx;

					Sxx += tmp * tmp / (N * (double) s->count);
					if (isinf(Sx) || isinf(Sxx))
					{
						if (!isinf(s->fval) && !isinf(v))
							return WARP_ERR_FLOAT_OVERFLOW;
						Sxx = NAN;
					}
				}
				else if (isnan(v) || isinf(v))
					Sxx = NAN;
				s->count++;
				s->fval = Sx;
				s->fsxx = Sxx;
			}
			break;
	}
	return WARP_OK;
}

/* ---------------------------------------------------------------- batch */

/* warp_join_lookup(), with a direct table's bitmap tested first */
static inline warp_int32
lookup_filtered(const WarpJoinTable *t, warp_int64 k)
{
	if (t->direct && t->bits != NULL)
	{
		warp_uint64 d = (warp_uint64) (k - t->min);

		if (k < t->min || k > t->max || ((t->bits[d >> 6] >> (d & 63)) & 1) == 0)
			return -1;
		return t->first[d];
	}
	return warp_join_lookup(t, k);
}

/*
 * Probe step of a query whose joins all keep a row at most once (unique
 * inner or left, semi, anti) with the key read from a plain integer column:
 * the joined rows e*[0..ne) are filtered in place.  Returns the rows kept.
 *
 * Two passes, no data-dependent branch: first the rows whose key is present
 * (for a direct table from its bitmap, which stays in cache where first[]
 * does not) are listed with their build rows, then the rows are written
 * out.  A filtered dimension keeps a fifth or less of the fact rows, so a
 * per-row branch on "found" would mispredict often.
 */
#define PROBE_UNIQUE_FN(NAME, T) \
static warp_int64 \
NAME(WarpCpu *x, int step, const WarpJoinTable *t, int kind, \
	 const ArrowArray *a, warp_int64 ne) \
{ \
	int			j = x->order[step]; \
	warp_int64	base = a->offset + x->vstart; \
	const T    *in = (const T *) a->values + base; \
	const warp_uint8 *validity = a->validity; \
	warp_uint16 *epos = x->epos; \
	warp_int32 *hidx = x->hidx; \
	warp_int32 *hrow = x->hrow; \
	warp_int32 *jb = x->ebrow[j]; \
	warp_int64	e, \
				h = 0, \
				q; \
	int			jj; \
 \
	if (t->direct && t->bits != NULL) \
	{ \
		warp_uint64 span = (warp_uint64) (t->max - t->min); \
 \
		for (e = 0; e < ne; e++) \
		{ \
			int			i = epos[e]; \
			warp_uint64 d = (warp_uint64) ((warp_int64) in[i] - t->min); \
			warp_uint64 ok = d <= span; \
			int			hit; \
 \
			d &= (warp_uint64) 0 - ok; \
			hit = (int) (ok & (t->bits[d >> 6] >> (d & 63))); \
			if (validity != NULL) \
				hit &= valid_bit(validity, base + i); \
			hidx[h] = (warp_int32) e; \
			hrow[h] = (warp_int32) d; \
			h += hit; \
		} \
		for (q = 0; q < h; q++) \
			hrow[q] = t->first[hrow[q]]; \
	} \
	else \
		for (e = 0; e < ne; e++) \
		{ \
			int			i = epos[e]; \
			warp_int32	r = -1; \
 \
			if (validity == NULL || valid_bit(validity, base + i)) \
				r = warp_join_lookup(t, (warp_int64) in[i]); \
			hidx[h] = (warp_int32) e; \
			hrow[h] = r; \
			h += r >= 0; \
		} \
 \
	switch (kind) \
	{ \
		case WARP_JOIN_LEFT: \
			for (e = 0; e < ne; e++) \
				jb[e] = -1; \
			for (q = 0; q < h; q++) \
				jb[hidx[q]] = hrow[q]; \
			return ne; \
		case WARP_JOIN_ANTI: \
			{ \
				warp_int64	n2 = 0; \
 \
				hidx[h] = (warp_int32) ne;	/* sentinel */ \
				for (e = 0, q = 0; e < ne; e++) \
				{ \
					if (e == hidx[q]) \
					{ \
						q++; \
						continue; \
					} \
					epos[n2] = epos[e]; \
					for (jj = 0; jj < step; jj++) \
						x->ebrow[x->order[jj]][n2] = x->ebrow[x->order[jj]][e]; \
					jb[n2] = -1; \
					n2++; \
				} \
				return n2; \
			} \
		default: \
			/* inner, semi: the rows found, in order */ \
			for (q = 0; q < h; q++) \
			{ \
				e = hidx[q]; \
				epos[q] = epos[e]; \
				for (jj = 0; jj < step; jj++) \
					x->ebrow[x->order[jj]][q] = x->ebrow[x->order[jj]][e]; \
				jb[q] = kind == WARP_JOIN_SEMI ? -1 : hrow[q]; \
			} \
			return h; \
	} \
}

PROBE_UNIQUE_FN(probe_unique_int16, warp_int16)
PROBE_UNIQUE_FN(probe_unique_int32, warp_int32)
PROBE_UNIQUE_FN(probe_unique_int64, warp_int64)

#undef PROBE_UNIQUE_FN

/*
 * Probe the step-th join of the probe order for the joined rows e*[0..ne);
 * result back in e*.  ebrow[] of the joins probed earlier travel along.
 */
static WarpStatus
probe(WarpCpu *x, int step, warp_int64 *ne_io)
{
	int			j = x->order[step];
	const WarpJoinTable *t = x->tables[j];
	int			keynode = x->p->joins[j].key_node;
	const warp_int64 *kv = x->iv[keynode];
	const warp_uint8 *kn = x->nv[keynode];
	int			kind = x->p->joins[j].kind;
	warp_int64	ne = *ne_io,
				n2 = 0,
				e;
	int			jj;

	if (x->all_unique)
	{
		/* the key was not loaded up front (run_vector): load it for the
		 * rows still joined, or read it straight from the column */
		const ArrowArray *a = plain_int_column(x, keynode);
		WarpStatus	st;

		if (a != NULL)
		{
			switch (a->field->type.bit_width)
			{
				case 16:
					*ne_io = probe_unique_int16(x, step, t, kind, a, ne);
					break;
				case 32:
					*ne_io = probe_unique_int32(x, step, t, kind, a, ne);
					break;
				default:
					*ne_io = probe_unique_int64(x, step, t, kind, a, ne);
					break;
			}
			return WARP_OK;
		}
		if ((st = eval(x, keynode, x->epos, (int) ne)) != WARP_OK)
			return st;			/* a value out of the column type's range */
	}
	if (kind == WARP_JOIN_SEMI || kind == WARP_JOIN_ANTI)
	{
		/* a filter: keep the row when (not) found, once */
		bool		want = kind == WARP_JOIN_SEMI;

		for (e = 0; e < ne; e++)
		{
			int			i = x->epos[e];
			bool		found = !kn[i] && warp_join_lookup(t, kv[i]) >= 0;

			if (found != want)
				continue;
			x->epos[n2] = (warp_uint16) i;
			for (jj = 0; jj < step; jj++)
				x->ebrow[x->order[jj]][n2] = x->ebrow[x->order[jj]][e];
			x->ebrow[j][n2] = -1;
			n2++;
		}
		*ne_io = n2;
		return WARP_OK;
	}
	if (t->unique)
	{
		/* at most one match: filter in place */
		for (e = 0; e < ne; e++)
		{
			int			i = x->epos[e];
			warp_int32	r;

			r = kn[i] ? -1 : warp_join_lookup(t, kv[i]);
			if (r < 0 && kind != WARP_JOIN_LEFT)
				continue;
			x->epos[n2] = (warp_uint16) i;
			for (jj = 0; jj < step; jj++)
				x->ebrow[x->order[jj]][n2] = x->ebrow[x->order[jj]][e];
			x->ebrow[j][n2] = r;
			n2++;
		}
		*ne_io = n2;
		return WARP_OK;
	}
	for (e = 0; e < ne; e++)
	{
		int			i = x->epos[e];
		warp_int32	r;

		r = kn[i] ? -1 : warp_join_lookup(t, kv[i]);
		if (r < 0 && kind == WARP_JOIN_LEFT)
		{
			/* the NULL-extended row */
			if (n2 >= x->ecap && !grow_joined(x, n2 + 1, ne, n2))
				return WARP_ERR_OUT_OF_MEMORY;
			x->tpos[n2] = (warp_uint16) i;
			for (jj = 0; jj < step; jj++)
				x->tbrow[x->order[jj]][n2] = x->ebrow[x->order[jj]][e];
			x->tbrow[j][n2] = -1;
			n2++;
			continue;
		}
		for (; r >= 0; r = t->next[r])
		{
			if (n2 >= x->ecap && !grow_joined(x, n2 + 1, ne, n2))
				return WARP_ERR_OUT_OF_MEMORY;
			x->tpos[n2] = (warp_uint16) i;
			for (jj = 0; jj < step; jj++)
				x->tbrow[x->order[jj]][n2] = x->ebrow[x->order[jj]][e];
			x->tbrow[j][n2] = r;
			n2++;
		}
	}
	{
		warp_uint16 *p = x->epos;
		warp_int32 **b = x->ebrow;

		x->epos = x->tpos;
		x->tpos = p;
		x->ebrow = x->tbrow;
		x->tbrow = b;
	}
	*ne_io = n2;
	return WARP_OK;
}

/* One vector: rows [start, start+n) of the batch. */
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
			(m2 = filter_col_range(x, qn, p->quals[q + 1], x->sel, *m)) >= 0)
		{
			*m = m2;
			q++;
			continue;
		}
		m2 = filter_col_const(x, qn, x->sel, *m);

		if (m2 < 0)
		{
			const warp_uint8 *qnull;
			const warp_int64 *qval;

			if ((st = eval(x, qn, x->sel, *m)) != WARP_OK)
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

static WarpStatus
run_vector(WarpCpu *x, const ArrowArray *cols, warp_int64 start, int n,
		   const bool *keep, WarpLoadStatus *ls, int *bad_col, warp_int64 *bad_row)
{
	const WarpProgram *p = x->p;
	int			m = 0,
				j,
				k,
				a,
				f,
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
	 * When every join keeps a row at most once, probe() loads each key for
	 * the rows the joins before it kept; otherwise all are loaded here.
	 */
	if (!x->all_unique)
		for (j = 0; j < p->njoins; j++)
			if ((st = eval(x, p->joins[j].key_node, x->sel, m)) != WARP_OK)
				return st;
	for (k = 0; k < m; k++)
		x->epos[k] = x->sel[k];
	ne = m;
	for (j = 0; j < p->njoins && ne > 0; j++)
		if ((st = probe(x, j, &ne)) != WARP_OK)
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

	/* group of every joined row */
	for (k = 0; k < p->nkeys; k++)
		if (p->keys[k].kind == WG_FACT &&
			(st = eval(x, p->keys[k].node, x->usel, nu)) != WARP_OK)
			return st;
	for (e = 0; e < ne; e++)
	{
		int			i = x->epos[e];
		warp_int64	code = 0;
		warp_int64	g;

		for (k = 0; k < p->nkeys; k++)
		{
			const WarpGroupKey *gk = &p->keys[k];

			if (gk->kind == WG_DIM)
			{
				const WarpJoinTable *gt = x->tables[gk->join];
				warp_int32	br = x->ebrow[gk->join][e];
				warp_int32	pid = br >= 0 ? gt->payload[br] : gt->npayloads;

				x->kbuf[k] = pid;
				x->knull[k] = 0;
				if (x->direct)
					code += pid * x->stride[k];
			}
			else
			{
				x->knull[k] = x->nv[gk->node][i];
				if (x->knull[k])
					x->kbuf[k] = 0;
				else if (IS_FLOAT_NODE(x, gk->node))
					memcpy(&x->kbuf[k], &x->fv[gk->node][i], sizeof(double));
				else
					x->kbuf[k] = x->iv[gk->node][i];
			}
		}
		if (p->topn_limit > 0 && x->topn_have &&
			topn_cmp(x, x->kbuf[p->topn_key], x->knull[p->topn_key],
					 x->topn_val, x->topn_null) > 0)
			continue;			/* at least topn_limit rows come first */
		g = p->emit_rows ? append_row(x) : find_group(x, code);
		if (g < 0)
			return WARP_ERR_OUT_OF_MEMORY;
		x->egroup[e] = g;
	}
	if (p->emit_rows)
	{
		if (p->topn_limit > 0 && x->ngroups >= x->topn_compact_at && !topn_compact(x))
			return WARP_ERR_OUT_OF_MEMORY;
		return WARP_OK;			/* no aggregates */
	}

	/*
	 * Float sums and averages can fail in their transitions (overflow).  On
	 * any error warp_cpu_run_batch replays the vector row by row to find
	 * PostgreSQL's first failing row; that replay must start from the
	 * states before this vector, or a sum already holding the vector's
	 * later rows overflows before an earlier row's own error (a division
	 * by zero in a later aggregate's FILTER, say) is reached.  So those
	 * states are saved here and put back on error (the other aggregates'
	 * transitions cannot fail).
	 */
	for (f = 0; f < x->nfloat; f++)
	{
		const WarpAggState *gs = x->gagg[x->float_aggs[f]];

		for (e = 0; e < ne; e++)
			x->fsnap[f * x->ecap + e] = gs[x->egroup[e]];
	}

	/* aggregates: FILTER first, then the argument, like ExecAgg */
	for (a = 0; a < p->naggs; a++)
	{
		const WarpAggSpec *ag = &p->aggs[a];
		warp_uint16 *asel = x->sel;	/* free again: reuse */
		int			na = nu;

		memcpy(asel, x->usel, sizeof(warp_uint16) * nu);
		for (k = 0; k < nu; k++)
			x->ok[x->usel[k]] = 0;
		if (ag->filter >= 0)
		{
			int			m2 = 0;

			if ((st = eval(x, ag->filter, asel, na)) != WARP_OK)
				goto restore;
			for (k = 0; k < na; k++)
				if (!x->nv[ag->filter][asel[k]] && x->iv[ag->filter][asel[k]])
					asel[m2++] = asel[k];
			na = m2;
		}
		if (ag->arg >= 0)
		{
			if ((st = eval(x, ag->arg, asel, na)) != WARP_OK)
				goto restore;
			for (k = 0; k < na; k++)
				x->ok[asel[k]] = !x->nv[ag->arg][asel[k]];
		}
		else
			for (k = 0; k < na; k++)
				x->ok[asel[k]] = 1;
		if ((st = accumulate(x, a, ne)) != WARP_OK)
			goto restore;
	}
	return WARP_OK;

restore:
	for (f = 0; f < x->nfloat; f++)
	{
		WarpAggState *gs = x->gagg[x->float_aggs[f]];

		/* backwards: a group several rows hit gets its first saved state */
		for (e = ne - 1; e >= 0; e--)
			gs[x->egroup[e]] = x->fsnap[f * x->ecap + e];
	}
	return st;
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
		x->topn_compact_at = topn_compact_floor(x->p);
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
