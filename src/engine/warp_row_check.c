/*-------------------------------------------------------------------------
 *
 * warp_row_check.c
 *	  Whether the GPU driver runs a program exactly (see warp_row_check.h):
 *	  the program's own checks (warp_gpu_can_run: validity, the row
 *	  evaluator's limits, what only the CPU driver reads or computes,
 *	  order-dependent aggregates, expression depth) and its join tables'
 *	  (warp_row_check).  The row evaluator itself is warp_row.h's.
 *
 *-------------------------------------------------------------------------
 */
#include "warp_row_check.h"

/*
 * The longest argument chain of p's expressions within
 * WARP_ROW_MAX_DEPTH (the evaluation stack of warp_row_eval)?  Arguments
 * precede their node (validated): depth in one pass.
 */
static bool
depth_fits(const WarpProgram *p)
{
	int			depth[WARP_ROW_MAX_NODES];
	int			i,
				j;

	for (i = 0; i < p->nnodes; i++)
	{
		const WarpNode *nd = &p->nodes[i];
		int			d = 0;

		switch (warp_op_arity(nd->op))
		{
			case WARP_ARITY_NONE:
				break;
			case WARP_ARITY_BINARY:
				d = depth[nd->a] > depth[nd->b] ? depth[nd->a] : depth[nd->b];
				break;
			case WARP_ARITY_UNARY:
			case WARP_ARITY_SET:	/* args_off indexes setvals */
				d = depth[nd->a];
				break;
			case WARP_ARITY_DATETIME:
				d = depth[nd->a];
				if ((nd->flags & WARP_DT_ARITH) && depth[nd->b] > d)
					d = depth[nd->b];
				break;
			default:
				for (j = 0; j < nd->nargs; j++)
					if (depth[p->args[nd->args_off + j]] > d)
						d = depth[p->args[nd->args_off + j]];
				break;
		}
		depth[i] = d + 1;
		if (depth[i] > WARP_ROW_MAX_DEPTH)
			return false;
	}
	return true;
}

/* the checks of warp_gpu_can_run after validation: NULL, or why not */
static const char *
program_problem(const WarpProgram *p)
{
	int			i;

	if (p->nnodes > WARP_ROW_MAX_NODES)
		return "too many expression nodes for the row evaluator";
	if (p->njoins > WARP_ROW_MAX_JOINS)
		return "too many joins for the row evaluator";
	if (p->nkeys > WARP_ROW_MAX_KEYS)
		return "too many group keys for the row evaluator";
	if (p->naggs > WARP_ROW_MAX_AGGS)
		return "too many aggregates for the row evaluator";
	for (i = 0; i < p->ncols; i++)
		if (p->cols[i].decimal == WARP_DECIMAL_WIDE || p->cols[i].text || p->cols[i].native)
			return "wide numeric, text and native columns are read by the CPU driver only";
	for (i = 0; i < p->nnodes; i++)
		if (p->nodes[i].type == WT_NUMERIC)
			return "numeric expressions run on the CPU driver only";
	if (!warp_tz_valid(&p->tz))
		return "malformed time zone table";
	if (!depth_fits(p))
		return "expression too deep for the row evaluator";
	for (i = 0; i < p->naggs; i++)
		if (!warp_row_agg_exact(p->aggs[i].kind, p->aggs[i].type))
			return "sum(float4) depends on the order of the rows";
	return NULL;
}

bool
warp_gpu_can_run(const WarpProgram *p, const char **why)
{
	const char *bad = warp_program_validate(p);

	if (bad == NULL)
		bad = program_problem(p);
	if (why)
		*why = bad;
	return bad == NULL;
}

/* whether join table t is well formed for the row evaluator's walks */
static bool
table_ok(const WarpJoinTable *t)
{
	warp_int64	r,
				n;

	if (t == NULL || t->nrows < 0 || t->nrows >= WARP_INT32_MAX || t->npayloads < 0)
		return false;
	for (r = 0; r < t->nrows; r++)
		if (t->payload[r] < 0 || t->payload[r] >= t->npayloads ||
			t->next[r] < -1 || t->next[r] >= t->nrows ||
			(t->next[r] >= 0 && t->next[r] <= r))
			return false;
	if (t->direct)
	{
		if (t->nrows > 0 && (t->max < t->min || (warp_uint64) (t->max - t->min) >= (warp_uint64) 1 << 31))
			return false;
		n = t->nrows > 0 ? t->max - t->min + 1 : 0;
		for (r = 0; r < n; r++)
			if (t->first[r] < -1 || t->first[r] >= t->nrows)
				return false;
	}
	else if (t->nrows > 0)
	{
		bool		empty = false;

		if (t->mask == 0 || ((t->mask + 1) & t->mask) != 0)
			return false;
		for (r = 0; r <= (warp_int64) t->mask; r++)
		{
			if (t->slot_row[r] < -1 || t->slot_row[r] >= t->nrows)
				return false;
			if (t->slot_row[r] < 0)
				empty = true;
		}
		if (!empty)
			return false;
	}
	return true;
}

const char *
warp_row_check(const WarpProgram *p, WarpJoinTable *const *tables)
{
	const char *bad;
	int			i;

	if (!warp_gpu_can_run(p, &bad))
		return bad;
	for (i = 0; i < p->njoins; i++)
		if (!table_ok(tables[p->joins[i].table]))
			return "malformed join table";
	return NULL;
}
