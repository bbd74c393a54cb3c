/*-------------------------------------------------------------------------
 *
 * warp_cpu_join.c
 *	  The CPU driver's join probes: the joined rows of a vector probe one
 *	  join table (duplicate build keys multiply rows; semi and anti joins
 *	  filter; a left join's miss keeps build row -1), with branch-free
 *	  paths for unique joins on plain integer keys.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "warp_cpu_internal.h"

/* ---------------------------------------------------------------- probes */

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
WarpStatus
cpu_probe(WarpCpu *x, int step, warp_int64 *ne_io)
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
		const ArrowArray *a = cpu_plain_int_column(x, keynode);
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
		if ((st = cpu_eval(x, keynode, x->epos, (int) ne)) != WARP_OK)
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
			if (n2 >= x->ecap && !cpu_grow_joined(x, n2 + 1, ne, n2))
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
			if (n2 >= x->ecap && !cpu_grow_joined(x, n2 + 1, ne, n2))
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
