/*-------------------------------------------------------------------------
 *
 * warp_tile.c
 *	  Whether a program has the tile path's shape (warp_tile.h), and its
 *	  expressions as tapes.
 *
 * Pure C; no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "warp_tile.h"

static bool refuse(char *why, size_t whylen, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));

static bool
refuse(char *why, size_t whylen, const char *fmt,...)
{
	va_list		ap;

	if (why && whylen)
	{
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return false;
}

static bool
int_type(int t)
{
	return t == WT_INT2 || t == WT_INT4 || t == WT_INT8;
}

/* an integer-valued column the row evaluator reads as such (not text ids,
 * not numeric, not floats) */
static bool
int_column(const WarpProgram *p, int c)
{
	const WarpColumnSpec *cs = &p->cols[c];

	return c >= 0 && c < p->ncols && cs->text == 0 && cs->decimal != WARP_DECIMAL_WIDE &&
		(int_type(cs->type) || cs->type == WT_DATE || cs->type == WT_TIMESTAMP);
}

/*
 * Append node n's tape (its arguments first) to the plan; its position in
 * the tape, or -1 when the node is not of the tile shape.
 */
static int
tape_node(const WarpProgram *p, int n, WarpTilePlan *tp, int first, int depth)
{
	const WarpNode *nd;
	WarpTileStep st;
	int			a = 0,
				b = 0,
				pos;

	if (n < 0 || n >= p->nnodes || depth > WARP_TILE_MAX_TAPE)
		return -1;
	nd = &p->nodes[n];
	memset(&st, 0, sizeof(st));
	st.op = nd->op;
	st.type = nd->type;
	st.sub = nd->sub;
	switch ((WarpOp) nd->op)
	{
		case WN_COL:
			if (!int_column(p, nd->a) || p->cols[nd->a].type != nd->type)
				return -1;
			st.col = nd->a;
			break;
		case WN_CONST:
			if ((nd->flags & WARP_NODE_NULL) || !int_type(nd->type))
				return -1;
			st.ival = nd->ival;
			break;
		case WN_ARITH:
			if (!int_type(nd->type) || nd->sub > WARP_ARITH_MOD ||
				(a = tape_node(p, nd->a, tp, first, depth + 1)) < 0 ||
				(b = tape_node(p, nd->b, tp, first, depth + 1)) < 0)
				return -1;
			break;
		case WN_NEG:
		case WN_CAST:
			if (!int_type(nd->type) || !int_type(p->nodes[nd->a].type) ||
				(a = tape_node(p, nd->a, tp, first, depth + 1)) < 0)
				return -1;
			break;
		default:
			return -1;
	}
	if (tp->nsteps >= WARP_TILE_MAX_STEPS || tp->nsteps - first >= WARP_TILE_MAX_TAPE)
		return -1;
	st.a = (warp_uint8) a;
	st.b = (warp_uint8) b;
	pos = tp->nsteps - first;
	tp->steps[tp->nsteps++] = st;
	return pos;
}

/* node n as expression *e; false if it is not of the tile shape */
static bool
tape_expr(const WarpProgram *p, int n, WarpTilePlan *tp, WarpTileExpr *e)
{
	int			first = tp->nsteps;

	if (tape_node(p, n, tp, first, 0) < 0)
		return false;
	e->first = (warp_int16) first;
	e->len = (warp_int16) (tp->nsteps - first);
	return true;
}

bool
warp_tile_plan(const WarpProgram *p, WarpTilePlan *tp, char *why, size_t whylen)
{
	WarpRowPre	pre;
	int			j,
				k,
				a;

	memset(tp, 0, sizeof(*tp));
	if (p->emit_rows)
		return refuse(why, whylen, "rows are returned");
	warp_row_pre_plan(p, &pre);
	if (pre.nquals != p->nquals)
		return refuse(why, whylen, "a qual is not a range of a column");
	if (p->njoins > WARP_TILE_MAX_JOINS || p->nkeys > WARP_TILE_MAX_KEYS ||
		p->naggs > WARP_TILE_MAX_AGGS)
		return refuse(why, whylen, "too many joins, keys or aggregates");
	tp->njoins = p->njoins;
	tp->nkeys = p->nkeys;
	tp->naggs = p->naggs;
	for (j = 0; j < p->njoins; j++)
	{
		if (p->joins[j].kind != WARP_JOIN_INNER)
			return refuse(why, whylen, "join %d is not an inner join", j);
		/*
		 * A plain column: the drivers probe in different orders (the CPU
		 * driver's most selective first), so a key expression that can
		 * fail would fail on one and not the other.
		 */
		if (p->joins[j].key_node < 0 || p->joins[j].key_node >= p->nnodes ||
			p->nodes[p->joins[j].key_node].op != WN_COL ||
			!tape_expr(p, p->joins[j].key_node, tp, &tp->join_key[j]))
			return refuse(why, whylen, "join %d's key is not a column", j);
	}
	for (k = 0; k < p->nkeys; k++)
	{
		const WarpGroupKey *gk = &p->keys[k];

		if (gk->kind == WG_DIM)
			continue;
		if (!tape_expr(p, gk->node, tp, &tp->key[k]))
			return refuse(why, whylen, "group key %d is not integer arithmetic", k);
	}
	for (a = 0; a < p->naggs; a++)
	{
		const WarpAggSpec *ag = &p->aggs[a];

		if (ag->filter >= 0)
			return refuse(why, whylen, "aggregate %d has a FILTER", a);
		switch ((WarpAggKind) ag->kind)
		{
			case WA_COUNT_STAR:
				if (ag->arg >= 0)
					return refuse(why, whylen, "count(*) with an argument");
				continue;
			case WA_COUNT:
			case WA_SUM_INT:
			case WA_AVG_INT:
			case WA_SUM_INT8:
			case WA_MIN:
			case WA_MAX:
				if (WARP_TYPE_IS_FLOAT(ag->type) || ag->type == WT_NUMERIC)
					return refuse(why, whylen, "aggregate %d is not over integers", a);
				break;
			default:
				return refuse(why, whylen, "aggregate %d is not over integers", a);
		}
		if (!tape_expr(p, ag->arg, tp, &tp->arg[a]))
			return refuse(why, whylen, "aggregate %d's argument is not integer arithmetic", a);
	}
	tp->ok = 1;
	return true;
}
