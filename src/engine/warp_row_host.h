/*-------------------------------------------------------------------------
 *
 * warp_row_host.h
 *	  Host-side setup of the row evaluator (never device code): the
 *	  prefilter ranges (warp_row_pre_plan), join tables' longest chains,
 *	  and how a record batch's Arrow column is described to the kernel
 *	  (warp_row_describe).  Whether a program may run at all is
 *	  warp_row_check.h's.
 *
 * Pure C (also valid C++ for nvcc); no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_ROW_HOST_H
#define WARP_ROW_HOST_H

#include <string.h>

#include "arrow.h"
#include "warp_cpu.h"
#include "warp_row_types.h"

static inline void
warp_row_pre_plan(const WarpProgram *p, WarpRowPre *pre)
{
	int			q;

	memset(pre, 0, sizeof(*pre));
	for (q = 0; q < p->nquals; q++)
	{
		const WarpNode *cn,
				   *kn;
		int			colnode,
					constnode,
					op,
					c,
					k;
		bool		never;
		warp_int64	lo = WARP_INT64_MIN,
					hi = WARP_INT64_MAX;

		if (!warp_cmp_col_const(p, p->quals[q], &colnode, &constnode, &op) || op == WARP_CMP_NE)
			break;
		cn = &p->nodes[colnode];
		kn = &p->nodes[constnode];
		if (WARP_TYPE_IS_FLOAT(cn->type) || WARP_TYPE_IS_FLOAT(kn->type))
			break;
		c = cn->a;
		/* the qual right before on the same column: one range */
		k = pre->n - 1;
		never = false;
		if (k >= 0 && pre->col[k] == c)
		{
			never = pre->never[k];
			lo = pre->lo[k];
			hi = (warp_int64) ((warp_uint64) lo + pre->width[k]);
		}
		else if (pre->n == WARP_ROW_MAX_PRE)
			break;
		else
			k = pre->n++;
		never = never || (kn->flags & WARP_NODE_NULL) ||
			!warp_cmp_narrow(op, kn->ival, &lo, &hi);
		pre->col[k] = c;
		pre->never[k] = never;
		pre->lo[k] = never ? 0 : lo;
		pre->width[k] = never ? 0 : (warp_uint64) hi - (warp_uint64) lo;
		pre->nquals = q + 1;
	}
}

/* most rows one key finds in t (the longest duplicate chain) */
static inline warp_int64
warp_row_max_chain(const WarpJoinTable *t)
{
	warp_int64	best = t->nrows > 0 ? 1 : 0;
	warp_int64	r;

	if (t->unique)
		return best;
	/* chains ascend (checked by warp_row_check): walk from every head */
	{
		warp_int64	nheads = t->direct ? (t->nrows > 0 ? t->max - t->min + 1 : 0)
			: (t->nrows > 0 ? (warp_int64) t->mask + 1 : 0);

		for (r = 0; r < nheads; r++)
		{
			warp_int32	h = t->direct ? t->first[r] : t->slot_row[r];
			warp_int64	n = 0;

			for (; h >= 0; h = t->next[h])
				n++;
			if (n > best)
				best = n;
		}
	}
	return best;
}

/* the WarpRowPhys of an Arrow fixed-width type, WRP_NONE if none */
static inline int
warp_row_phys(const ArrowType *t)
{
	switch (t->id)
	{
		case ARROW_TYPE_BOOL:
			return WRP_BOOL;
		case ARROW_TYPE_INT:
			switch (t->bit_width)
			{
				case 8: return t->is_signed ? WRP_I8 : WRP_U8;
				case 16: return t->is_signed ? WRP_I16 : WRP_U16;
				case 32: return t->is_signed ? WRP_I32 : WRP_U32;
				case 64: return t->is_signed ? WRP_I64 : WRP_U64;
			}
			return WRP_NONE;
		case ARROW_TYPE_FLOAT:
			return t->precision == ARROW_PRECISION_HALF ? WRP_F16 :
				t->precision == ARROW_PRECISION_SINGLE ? WRP_F32 : WRP_F64;
		case ARROW_TYPE_DATE:
			return t->unit == ARROW_DATE_MILLISECOND ? WRP_I64 : WRP_I32;
		case ARROW_TYPE_TIMESTAMP:
		case ARROW_TYPE_DURATION:
			return WRP_I64;
		case ARROW_TYPE_DECIMAL:
			return t->bit_width == 128 ? WRP_D128 : WRP_NONE;
		default:
			return WRP_NONE;
	}
}

/* bytes a fixed-width buffer needs for rows [0, offset + length) */
static inline warp_int64
warp_row_phys_bytes(int phys, warp_int64 rows)
{
	switch (phys)
	{
		case WRP_BOOL: return (rows + 7) / 8;
		case WRP_I8: case WRP_U8: return rows;
		case WRP_I16: case WRP_U16: case WRP_F16: return rows * 2;
		case WRP_I32: case WRP_U32: case WRP_F32: return rows * 4;
		case WRP_I64: case WRP_U64: case WRP_F64: return rows * 8;
		case WRP_D128: return rows * 16;
		default: return -1;
	}
}

/*
 * Describe program column `type` loaded in a (host pointers) for rows
 * [0, nrows).  NULL, or why the row evaluator cannot read it (the CPU
 * driver may still: it is then the one to run the query).
 */
static inline const char *
warp_row_describe(const ArrowArray *a, const WarpColumnSpec *cs, warp_int64 nrows, WarpRowCol *out)
{
	const ArrowType *t;
	WarpType	type = (WarpType) cs->type;

	memset(out, 0, sizeof(*out));
	if (a == NULL || a->field == NULL)
		return "column type cannot be loaded as declared";
	t = &a->field->type;
	if (cs->decimal)
	{
		/* load_decimal_column's Decimal128 case (integers: CPU driver) */
		int			k;

		if (cs->decimal != 1 || type != WT_INT8 || a->field->has_dict ||
			t->id != ARROW_TYPE_DECIMAL || t->bit_width != 128 ||
			t->dec_scale != cs->scale || cs->precision > 18)
			return "numeric column the GPU driver does not read";
		out->conv = WRC_DECIMAL;
		if (cs->precision > 0)
			for (out->dec_limit = 1, k = 0; k < cs->precision; k++)
				out->dec_limit *= 10;
	}
	else if (!warp_cpu_can_load(a->field, type))
		return "column type cannot be loaded as declared";
	if (a->length < nrows || a->offset < 0 || nrows < 0)
		return "column shorter than the batch";
	out->isfloat = WARP_TYPE_IS_FLOAT(type);
	if (t->id == ARROW_TYPE_DATE)
		out->conv = t->unit == ARROW_DATE_MILLISECOND ? WRC_DATE_MS : WRC_DATE_DAY;
	else if (t->id == ARROW_TYPE_TIMESTAMP)
		out->conv = t->unit == ARROW_TIME_SECOND ? WRC_TS_S :
			t->unit == ARROW_TIME_MILLISECOND ? WRC_TS_MS :
			t->unit == ARROW_TIME_MICROSECOND ? WRC_TS_US : WRC_TS_NS;
	out->data.validity = a->validity;
	out->data.values = a->values;
	out->data.offset = a->offset;
	out->data.length = nrows;
	if (a->field->has_dict)
	{
		const ArrowArray *d = a->dictionary;
		const ArrowType *it = &a->field->dict.index_type;

		if (d == NULL || d->field == NULL || d->length < 0 || d->offset < 0)
			return "dictionary missing";
		out->has_dict = 1;
		out->data.phys = it->id == ARROW_TYPE_INT ? warp_row_phys(it) : WRP_NONE;
		if (out->data.phys == WRP_NONE || out->data.phys == WRP_BOOL)
			return "unsupported dictionary index type";
		out->dict.validity = d->validity;
		out->dict.values = d->values;
		out->dict.offset = d->offset;
		out->dict.length = d->length;
		out->dict.phys = warp_row_phys(&d->field->type);
		if (out->dict.phys == WRP_NONE || d->field->has_dict ||
			(d->length > 0 && (d->values == NULL ||
							   warp_row_phys_bytes(out->dict.phys, d->offset + d->length) > d->values_len)))
			return "unsupported dictionary layout";
	}
	else
	{
		out->data.phys = warp_row_phys(t);
		if (out->data.phys == WRP_NONE)
			return "unsupported column layout";
	}
	if (nrows > 0 && (a->values == NULL ||
					  warp_row_phys_bytes(out->data.phys, a->offset + nrows) > a->values_len))
		return "column buffer shorter than the batch";
	return NULL;
}

#endif							/* WARP_ROW_HOST_H */
