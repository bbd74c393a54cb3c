/*-------------------------------------------------------------------------
 *
 * warp_row.h
 *	  A row-at-a-time evaluator of a WarpProgram, compiled by both gcc and
 *	  nvcc: the body of the GPU driver's fused kernel (src/gpud/warp_gpu.cu),
 *	  and testable on the CPU (test/unit/test_engine_row.c checks it against
 *	  the CPU driver, warp_cpu.c, which is the reference for every detail).
 *
 * One call of warp_row_run() takes one fact row through the whole program:
 *
 *   quals in order (each evaluated only if the earlier ones passed) ->
 *   every join key -> probe every join table (a miss drops the row of an
 *   inner or semi join, a hit that of an anti join; a left join's miss is
 *   the NULL-extended row, payload id npayloads) ->
 *   group keys and aggregate FILTERs/arguments (once per fact row) ->
 *   for every combination of matching build rows (duplicate keys chain):
 *   find or create the group, update every aggregate.
 *
 * Expressions are evaluated lazily with a small explicit stack instead of
 * recursion (device stacks are tiny): a node's value is memoized for the
 * row, and a node is evaluated only when its parent needs it, exactly where
 * the CPU driver evaluates it (a CASE branch not taken, the right side of
 * an AND whose left side was false, an aggregate argument whose FILTER
 * failed are never computed), so a row raises an error here iff the CPU
 * driver raises one for it.  An error, a value the row evaluator does not
 * reproduce exactly, or malformed data is returned as a status; the GPU
 * driver then gives the whole query back to the CPU driver, which reports
 * PostgreSQL's error (or computes the answer).
 *
 * Aggregate states are updated in place with the *_atomic helpers below:
 * atomics in device code, plain read-modify-write on the host.  While
 * accumulating, some kinds keep a different representation from the CPU
 * driver's (see warp_row_agg_init); warp_row_agg_export converts a state to
 * the CPU driver's form and warp_row_agg_merge combines two such states, so
 * partial results may be merged in any number of steps.
 *
 * Exactness rules (what is sent back to the CPU driver instead):
 *	- sum(float4): its rounding and overflow depend on the order of the
 *	  additions; refused when the driver is created (warp_row_check).
 *	- sum(float8), avg(float*): atomic adds reorder the sum, which changes
 *	  the result only by rounding, but overflow would be order-dependent.
 *	  An input that is not finite, or of magnitude >= 2^960 (sum) or 2^400
 *	  (avg, whose Youngs-Cramer Sxx squares it), makes the row fall back:
 *	  below those bounds no order of additions of fewer than 2^60 values
 *	  can overflow, so neither driver raises an error.  avg(float)'s Sxx is
 *	  not computed step by step: Σx² is accumulated instead and converted
 *	  by warp_row_agg_final(); avg's final function reads only N and Sx.
 *	- min/max(float) of -0: PostgreSQL keeps the last of equal values, so
 *	  whether min(0, -0) prints 0 or -0 depends on row order; a -0 input
 *	  falls back.  All NaNs compare equal; the state keeps the canonical NaN.
 *
 * Pure C (also valid C++ for nvcc); no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_ROW_H
#define WARP_ROW_H

#include <stdlib.h>
#include <string.h>

#include "arrow.h"
#include "warp_cpu.h"
#include "warp_join.h"
#include "warp_ops_float.h"
#include "warp_ops_int.h"
#include "warp_ops_datetime.h"
#include "warp_ops_tz.h"
#include "warp_program.h"

/* limits of the row evaluator (per-thread memory on the GPU) */
#define WARP_ROW_MAX_NODES	128
#define WARP_ROW_MAX_DEPTH	32		/* longest argument chain */
#define WARP_ROW_MAX_JOINS	16
#define WARP_ROW_MAX_KEYS	16
#define WARP_ROW_MAX_AGGS	64

/*
 * Statuses besides WarpStatus: the row needs the CPU driver.  LOAD: a
 * column value outside its declared type's range (the CPU driver reports
 * it); BAD: malformed data (a dictionary index out of range), a limit of
 * this evaluator, a value it does not aggregate exactly, or a full group
 * table.
 */
#define WARP_ROW_NEED		(-1)	/* internal: evaluate a child first */
#define WARP_ROW_LOAD		((int) WARP_STATUS_COUNT + 1)
#define WARP_ROW_BAD		((int) WARP_STATUS_COUNT + 2)
#define WARP_ROW_FULL		((int) WARP_STATUS_COUNT + 3)

/* ------------------------------------------------------------- columns */

/* physical layout of a fixed-width Arrow buffer */
typedef enum WarpRowPhys
{
	WRP_NONE = 0,
	WRP_BOOL,					/* bit-packed */
	WRP_I8,
	WRP_I16,
	WRP_I32,
	WRP_I64,
	WRP_U8,
	WRP_U16,
	WRP_U32,
	WRP_U64,					/* dictionary indices only */
	WRP_F16,
	WRP_F32,
	WRP_F64,
	WRP_D128					/* Decimal128: little-endian two's complement */
} WarpRowPhys;

/* conversion of an integer value to the engine's domain */
typedef enum WarpRowConv
{
	WRC_NONE = 0,
	WRC_DATE_DAY,
	WRC_DATE_MS,
	WRC_TS_S,
	WRC_TS_MS,
	WRC_TS_US,
	WRC_TS_NS,
	WRC_DECIMAL					/* Decimal128 of the column's scale: its
								 * unscaled value, which must fit int64 (and
								 * dec_limit when set) */
} WarpRowConv;

/* One fixed-width array: row i is element offset+i (bit offset+i). */
typedef struct WarpRowBuf
{
	const warp_uint8 *validity; /* LSB-first bitmap, NULL = no NULLs */
	const warp_uint8 *values;
	warp_int64	offset;
	warp_int64	length;			/* rows that may be addressed */
	warp_int32	phys;			/* WarpRowPhys */
	warp_int32	pad;
} WarpRowBuf;

/* How program column c is read from one record batch. */
typedef struct WarpRowCol
{
	WarpRowBuf	data;			/* values, or dictionary indices */
	WarpRowBuf	dict;			/* the dictionary's values (has_dict) */
	warp_int32	has_dict;
	warp_int32	isfloat;		/* engine value is a double */
	warp_int32	conv;			/* WarpRowConv */
	warp_int64	dec_limit;		/* WRC_DECIMAL: 10^precision, or 0 */
	warp_int32	pad;
} WarpRowCol;

/* --------------------------------------------------------- the program */

/*
 * The program's leading quals that compare a column with a constant (no
 * float on either side), as ranges over the column's engine value, decided
 * from the raw values before a row's memo is touched (warp_row_prefilter):
 * in the kernel most rows of a selective scan are dropped by a load and a
 * subtraction instead of the interpreter's steps.  Adjacent quals on one
 * column (BETWEEN's two) are one range.  Built by warp_row_pre_plan.
 */
#define WARP_ROW_MAX_PRE 8

typedef struct WarpRowPre
{
	warp_int32	nquals;			/* leading quals decided here */
	warp_int32	n;				/* ranges, in qual order */
	warp_int32	col[WARP_ROW_MAX_PRE];	/* program column */
	warp_int32	never[WARP_ROW_MAX_PRE];	/* NULL or empty bound: no row
											 * passes (the column is still
											 * loaded, as the qual loads it) */
	warp_int64	lo[WARP_ROW_MAX_PRE];
	warp_uint64 width[WARP_ROW_MAX_PRE];	/* passes iff (unsigned) v - lo <=
											 * width */
} WarpRowPre;

/*
 * Everything constant while rows are evaluated.  All pointers must be valid
 * where the evaluator runs (device pointers in the kernel).  tables[j] is
 * the table of join j (already resolved through joins[j].table).
 */
typedef struct WarpRowEnv
{
	const WarpProgram *p;
	const WarpJoinTable *tables;
	const WarpRowCol *cols;
	warp_int64	nrows;			/* rows of the batch */
	WarpRowPre	pre;			/* warp_row_pre_plan(p) */
} WarpRowEnv;

/*
 * Per-row scratch: memoized node values and the evaluation stack.  Node n's
 * value is v[n * stride] (int64, or double bits) and its state st[n *
 * stride] (0 = not yet, 1 = value, 2 = NULL).  The kernel points v and st
 * into shared memory with stride = the block's thread count, so the
 * threads of a warp touch consecutive words: as per-thread arrays (local
 * memory) the scratch of every resident thread was far larger than the
 * caches, and its traffic, not the data, bounded the kernel.  On the host
 * stride is 1 (warp_row_state_init).
 */
typedef struct WarpRowState
{
	warp_int64	row;
	warp_int64 *v;
	warp_uint8 *st;
	warp_int32	stride;
	warp_int32	stack[WARP_ROW_MAX_DEPTH];
} WarpRowState;

#define WRS_V(s, n)		((s)->v[(n) * (s)->stride])
#define WRS_ST(s, n)	((s)->st[(n) * (s)->stride])

/* bytes of scratch one thread needs for a program of nnodes nodes */
#define WARP_ROW_SCRATCH_BYTES(nnodes) ((size_t) (nnodes) * (sizeof(warp_int64) + 1))

/*
 * Point s at scratch for nthreads threads (nnodes nodes each), as thread t:
 * values first (8-byte aligned), then states.
 */
WARP_FN void
warp_row_state_init(WarpRowState *s, void *scratch, int nnodes, int nthreads, int t)
{
	s->v = (warp_int64 *) scratch + t;
	s->st = (warp_uint8 *) scratch + (size_t) nnodes * nthreads * sizeof(warp_int64) + t;
	s->stride = nthreads;
}

/* What the rows did, for EXPLAIN ANALYZE (like WarpCpuCounters). */
typedef struct WarpRowCounts
{
	warp_int64	rows_filtered;
	warp_int64	rows_joined;
} WarpRowCounts;

/* ------------------------------------------------------------ the groups */

/*
 * The group table.  Direct form: every key is a dimension payload id and
 * slot = sum of pid * stride[k] (as the CPU driver's direct codes); hash
 * form: open addressing over the keys, slot claimed with a compare-and-swap
 * on state (0 empty, 1 being filled, 2 ready).  Slot s's keys are
 * keys[s * nkeys ...], NULL flags knull[s * nkeys ...], aggregate a's state
 * aggs[s * naggs + a].  At most max_used slots may be taken in hash form
 * (the host sizes batches so that it never runs over; if it did, the row
 * would return WARP_ROW_FULL rather than be lost).
 */
typedef struct WarpRowGroups
{
	warp_int32	direct;
	warp_int32	nkeys;
	warp_int32	naggs;
	warp_int32	pad;
	warp_uint64 mask;			/* hash: slots - 1 */
	warp_uint64 max_used;		/* hash: claim limit */
	warp_int64	stride[WARP_ROW_MAX_KEYS];	/* direct */
	warp_uint32 *state;
	warp_int64 *keys;
	warp_uint8 *knull;
	WarpAggState *aggs;
	unsigned long long *nused;	/* groups created */
} WarpRowGroups;

/* ------------------------------------------------------------ bit casts */

WARP_FN warp_int64
warp_row_dbits(double d)
{
	union
	{
		double		d;
		warp_int64	i;
	}			u;

	u.d = d;
	return u.i;
}

WARP_FN double
warp_row_bitsd(warp_int64 i)
{
	union
	{
		double		d;
		warp_int64	i;
	}			u;

	u.i = i;
	return u.d;
}

/* ------------------------------------------------------------- atomics */

WARP_FN void
warp_row_add_u64(warp_uint64 *p, warp_uint64 v)
{
#ifdef __CUDA_ARCH__
	atomicAdd((unsigned long long *) p, (unsigned long long) v);
#else
	*p += v;
#endif
}

/* add, returning the old value */
WARP_FN warp_uint64
warp_row_fetch_add_u64(warp_uint64 *p, warp_uint64 v)
{
#ifdef __CUDA_ARCH__
	return atomicAdd((unsigned long long *) p, (unsigned long long) v);
#else
	warp_uint64 o = *p;

	*p = o + v;
	return o;
#endif
}

WARP_FN void
warp_row_add_f64(double *p, double v)
{
#ifdef __CUDA_ARCH__
	atomicAdd(p, v);
#else
	*p = WARP_F8_ADD(*p, v);
#endif
}

WARP_FN void
warp_row_min_i64(warp_int64 *p, warp_int64 v)
{
#ifdef __CUDA_ARCH__
	atomicMin((long long *) p, (long long) v);
#else
	if (v < *p)
		*p = v;
#endif
}

WARP_FN void
warp_row_max_i64(warp_int64 *p, warp_int64 v)
{
#ifdef __CUDA_ARCH__
	atomicMax((long long *) p, (long long) v);
#else
	if (v > *p)
		*p = v;
#endif
}

WARP_FN void
warp_row_min_u64(warp_uint64 *p, warp_uint64 v)
{
#ifdef __CUDA_ARCH__
	atomicMin((unsigned long long *) p, (unsigned long long) v);
#else
	if (v < *p)
		*p = v;
#endif
}

WARP_FN void
warp_row_max_u64(warp_uint64 *p, warp_uint64 v)
{
#ifdef __CUDA_ARCH__
	atomicMax((unsigned long long *) p, (unsigned long long) v);
#else
	if (v > *p)
		*p = v;
#endif
}

/* compare-and-swap, returning the old value */
WARP_FN warp_uint32
warp_row_cas_u32(warp_uint32 *p, warp_uint32 expect, warp_uint32 v)
{
#ifdef __CUDA_ARCH__
	return atomicCAS((unsigned int *) p, expect, v);
#else
	warp_uint32 o = *p;

	if (o == expect)
		*p = v;
	return o;
#endif
}

/* publish a slot: its keys must be visible before the state says ready */
WARP_FN void
warp_row_publish_u32(warp_uint32 *p, warp_uint32 v)
{
#ifdef __CUDA_ARCH__
	__threadfence();
	atomicExch((unsigned int *) p, v);
#else
	*p = v;
#endif
}

WARP_FN warp_uint32
warp_row_load_u32(const warp_uint32 *p)
{
	return *(const volatile warp_uint32 *) p;
}

/* -------------------------------------------------------------- loading */

/* IEEE half to double, exactly as arrow_half_to_double() */
WARP_FN double
warp_row_half(warp_uint16 h)
{
	int			sign = h >> 15;
	int			e = (h >> 10) & 0x1f;
	int			mant = h & 0x3ff;
	double		v;

	if (e == 0)
		v = (double) mant * (1.0 / 16777216.0); /* 2^-24, exact */
	else if (e == 31)
		v = mant ? warp_row_bitsd(INT64_C(0x7ff8000000000000))
			: warp_row_bitsd(INT64_C(0x7ff0000000000000));
	else
		v = (double) (mant | 0x400) *
			warp_row_bitsd((warp_int64) (e - 25 + 1023) << 52);
	return sign ? -v : v;
}

WARP_FN bool
warp_row_buf_null(const WarpRowBuf *b, warp_int64 i)
{
	warp_int64	j;

	if (b->validity == NULL)
		return false;
	j = b->offset + i;
	return ((b->validity[j >> 3] >> (j & 7)) & 1) == 0;
}

/* integer element i (any width, signed or not; Bool as 0/1) */
WARP_FN warp_int64
warp_row_buf_int(const WarpRowBuf *b, warp_int64 i)
{
	warp_int64	j = b->offset + i;

	switch (b->phys)
	{
		case WRP_BOOL:
			return (b->values[j >> 3] >> (j & 7)) & 1;
		case WRP_I8:
			return ((const warp_int8 *) b->values)[j];
		case WRP_I16:
			return ((const warp_int16 *) b->values)[j];
		case WRP_I32:
			return ((const warp_int32 *) b->values)[j];
		case WRP_I64:
		case WRP_U64:
			return ((const warp_int64 *) b->values)[j];
		case WRP_U8:
			return ((const warp_uint8 *) b->values)[j];
		case WRP_U16:
			return ((const warp_uint16 *) b->values)[j];
		case WRP_U32:
			return ((const warp_uint32 *) b->values)[j];
		default:
			return 0;
	}
}

WARP_FN double
warp_row_buf_double(const WarpRowBuf *b, warp_int64 i)
{
	warp_int64	j = b->offset + i;

	switch (b->phys)
	{
		case WRP_F16:
			return warp_row_half(((const warp_uint16 *) b->values)[j]);
		case WRP_F32:
			return ((const float *) b->values)[j];
		case WRP_F64:
			return ((const double *) b->values)[j];
		default:
			return (double) warp_row_buf_int(b, i);
	}
}

/* PostgreSQL's epoch (2000-01-01) relative to Unix's, and its limits */
#define WARP_ROW_EPOCH_DAYS INT64_C(10957)
#define WARP_ROW_EPOCH_USECS (WARP_ROW_EPOCH_DAYS * INT64_C(86400000000))
#define WARP_ROW_DATE_MIN (-INT64_C(2451545))
#define WARP_ROW_DATE_END (INT64_C(2147483494) - INT64_C(2451545))	/* JD of 5874898-01-01, from 2000 */
#define WARP_ROW_TS_MIN (-INT64_C(211813488000000000))
#define WARP_ROW_TS_END INT64_C(9223371331200000000)

/* v * m without overflow (m > 0); false on overflow */
WARP_FN bool
warp_row_mul_ok(warp_int64 v, warp_int64 m, warp_int64 *out)
{
	if (v > WARP_INT64_MAX / m || v < WARP_INT64_MIN / m)
		return false;
	*out = v * m;
	return true;
}

/* conv_date / conv_timestamp of warp_cpu.c */
WARP_FN bool
warp_row_convert(int conv, warp_int64 v, warp_int64 *out)
{
	warp_int64	us = 0;

	switch (conv)
	{
		case WRC_NONE:
			*out = v;
			return true;
		case WRC_DATE_DAY:
		case WRC_DATE_MS:
			if (conv == WRC_DATE_MS)
				v = v >= 0 ? v / 86400000 : -((-(v + 1)) / 86400000) - 1;
			v -= WARP_ROW_EPOCH_DAYS;
			if (v < WARP_ROW_DATE_MIN || v >= WARP_ROW_DATE_END)
				return false;
			*out = v;
			return true;
		case WRC_TS_S:
			if (!warp_row_mul_ok(v, INT64_C(1000000), &us))
				return false;
			break;
		case WRC_TS_MS:
			if (!warp_row_mul_ok(v, INT64_C(1000), &us))
				return false;
			break;
		case WRC_TS_US:
			us = v;
			break;
		default:
			{
				/* nanoseconds: round half away from zero, like arrow_fdw */
				warp_int64	q = v / 1000,
							r = v % 1000;

				if (r >= 500)
					q++;
				else if (r <= -500)
					q--;
				us = q;
			}
	}
	if (us < WARP_INT64_MIN + WARP_ROW_EPOCH_USECS)
		return false;
	us -= WARP_ROW_EPOCH_USECS;
	if (us < WARP_ROW_TS_MIN || us >= WARP_ROW_TS_END)
		return false;
	*out = us;
	return true;
}

/*
 * Column c of row i (load_column and load_dict_column of warp_cpu.c):
 * WARP_OK with *isnull, or with *v the engine's value (double bits for a
 * float column); WARP_ROW_BAD or WARP_ROW_LOAD for a value the row
 * evaluator does not take.
 */
WARP_FN int
warp_row_fetch(const WarpRowEnv *env, int c, warp_int64 i, warp_int64 *v, bool *isnull)
{
	const WarpRowCol *col = &env->cols[c];
	const WarpRowBuf *vb = &col->data;

	*isnull = false;
	if (warp_row_buf_null(&col->data, i))
	{
		*isnull = true;
		return WARP_OK;
	}
	if (col->has_dict)
	{
		warp_int64	idx = warp_row_buf_int(&col->data, i);

		/* the Arrow library checked indices at load; never trust a copy */
		if (idx < 0 || idx >= col->dict.length)
			return WARP_ROW_BAD;
		vb = &col->dict;
		i = idx;
		if (warp_row_buf_null(vb, i))
		{
			*isnull = true;
			return WARP_OK;
		}
	}
	if (col->isfloat)
	{
		*v = warp_row_dbits(warp_row_buf_double(vb, i));
		return WARP_OK;
	}
	if (col->conv == WRC_DECIMAL)
	{
		/* load_decimal_column: the unscaled value as int64, in bounds */
		const warp_uint8 *p = vb->values + (vb->offset + i) * 16;
		warp_uint64 lo = 0;
		warp_int64	hi = 0,
					x;
		int			k;

		for (k = 7; k >= 0; k--)
		{
			lo = (lo << 8) | p[k];
			hi = (warp_int64) (((warp_uint64) hi << 8) | p[8 + k]);
		}
		x = (warp_int64) lo;
		if (hi != (x < 0 ? -1 : 0) ||
			(col->dec_limit > 0 && (x >= col->dec_limit || x <= -col->dec_limit)))
			return WARP_ROW_LOAD;	/* the CPU driver reports it */
		*v = x;
		return WARP_OK;
	}
	if (!warp_row_convert(col->conv, warp_row_buf_int(vb, i), v))
		return WARP_ROW_LOAD;
	return WARP_OK;
}

/* Column c of the current row into node ni's memo. */
WARP_FN int
warp_row_load(const WarpRowEnv *env, WarpRowState *s, int ni, int c)
{
	warp_int64	v = 0;
	bool		isnull;
	int			st = warp_row_fetch(env, c, s->row, &v, &isnull);

	if (st != WARP_OK)
		return st;
	if (isnull)
		WRS_ST(s, ni) = 2;
	else
	{
		WRS_ST(s, ni) = 1;
		WRS_V(s, ni) = v;
	}
	return WARP_OK;
}

/* ----------------------------------------------------------- evaluation */

#define WARP_ROW_ISFLOAT(p, n) WARP_TYPE_IS_FLOAT((p)->nodes[(n)].type)

/*
 * Child x must be evaluated before the current node can go on.  A column
 * child is loaded right here (load_child in warp_row_step, which then steps
 * the node again from the start) rather than through another round of
 * warp_row_eval's stack; constants are in the memo from warp_row_prepare
 * on.  Either way a child is evaluated exactly when its parent needs it.
 */
#define WARP_ROW_NEED_CHILD(x) \
	do { \
		if (WRS_ST(s, (x)) == 0) \
		{ \
			*need = (x); \
			if (p->nodes[(x)].op == WN_COL) \
				goto load_child; \
			return WARP_ROW_NEED; \
		} \
	} while (0)

WARP_FN void
warp_row_set_int(WarpRowState *s, int ni, warp_int64 v)
{
	WRS_ST(s, ni) = 1;
	WRS_V(s, ni) = v;
}

WARP_FN void
warp_row_set_float(WarpRowState *s, int ni, double d)
{
	WRS_ST(s, ni) = 1;
	WRS_V(s, ni) = warp_row_dbits(d);
}

WARP_FN void
warp_row_copy(WarpRowState *s, int dst, int src)
{
	WRS_ST(s, dst) = WRS_ST(s, src);
	WRS_V(s, dst) = WRS_V(s, src);
}

/* values_equal of warp_cpu.c (both non-NULL) */
WARP_FN bool
warp_row_equal(const WarpProgram *p, const WarpRowState *s, int a, int b)
{
	if (WARP_ROW_ISFLOAT(p, a))
		return warp_float8_eq(warp_row_bitsd(WRS_V(s, a)), warp_row_bitsd(WRS_V(s, b)));
	return WRS_V(s, a) == WRS_V(s, b);
}

WARP_FN int
warp_row_arith(const WarpNode *nd, WarpRowState *s, int ni)
{
	int			st = WARP_OK;

	if (WARP_TYPE_IS_FLOAT(nd->type))
	{
		double		fa = warp_row_bitsd(WRS_V(s, nd->a)),
					fb = warp_row_bitsd(WRS_V(s, nd->b));

		if (nd->type == WT_FLOAT8)
		{
			warp_float8 r = 0;

			switch (nd->sub)
			{
				case WARP_ARITH_ADD: st = warp_float8_pl(fa, fb, &r); break;
				case WARP_ARITH_SUB: st = warp_float8_mi(fa, fb, &r); break;
				case WARP_ARITH_MUL: st = warp_float8_mul(fa, fb, &r); break;
				default: st = warp_float8_div(fa, fb, &r); break;
			}
			if (st == WARP_OK)
				warp_row_set_float(s, ni, r);
		}
		else
		{
			warp_float4 r = 0,
						a4 = (warp_float4) fa,
						b4 = (warp_float4) fb;

			switch (nd->sub)
			{
				case WARP_ARITH_ADD: st = warp_float4_pl(a4, b4, &r); break;
				case WARP_ARITH_SUB: st = warp_float4_mi(a4, b4, &r); break;
				case WARP_ARITH_MUL: st = warp_float4_mul(a4, b4, &r); break;
				default: st = warp_float4_div(a4, b4, &r); break;
			}
			if (st == WARP_OK)
				warp_row_set_float(s, ni, r);
		}
		return st;
	}
	if (nd->type == WT_INT8)
	{
		warp_int64	a = WRS_V(s, nd->a),
					b = WRS_V(s, nd->b),
					r = 0;

		switch (nd->sub)
		{
			case WARP_ARITH_ADD: st = warp_int8_pl(a, b, &r); break;
			case WARP_ARITH_SUB: st = warp_int8_mi(a, b, &r); break;
			case WARP_ARITH_MUL: st = warp_int8_mul(a, b, &r); break;
			case WARP_ARITH_DIV: st = warp_int8_div(a, b, &r); break;
			default: st = warp_int8_mod(a, b, &r); break;
		}
		if (st == WARP_OK)
			warp_row_set_int(s, ni, r);
	}
	else if (nd->type == WT_INT4)
	{
		warp_int32	a = (warp_int32) WRS_V(s, nd->a),
					b = (warp_int32) WRS_V(s, nd->b),
					r = 0;

		switch (nd->sub)
		{
			case WARP_ARITH_ADD: st = warp_int4_pl(a, b, &r); break;
			case WARP_ARITH_SUB: st = warp_int4_mi(a, b, &r); break;
			case WARP_ARITH_MUL: st = warp_int4_mul(a, b, &r); break;
			case WARP_ARITH_DIV: st = warp_int4_div(a, b, &r); break;
			default: st = warp_int4_mod(a, b, &r); break;
		}
		if (st == WARP_OK)
			warp_row_set_int(s, ni, r);
	}
	else
	{
		warp_int16	a = (warp_int16) WRS_V(s, nd->a),
					b = (warp_int16) WRS_V(s, nd->b),
					r = 0;

		switch (nd->sub)
		{
			case WARP_ARITH_ADD: st = warp_int2_pl(a, b, &r); break;
			case WARP_ARITH_SUB: st = warp_int2_mi(a, b, &r); break;
			case WARP_ARITH_MUL: st = warp_int2_mul(a, b, &r); break;
			case WARP_ARITH_DIV: st = warp_int2_div(a, b, &r); break;
			default: st = warp_int2_mod(a, b, &r); break;
		}
		if (st == WARP_OK)
			warp_row_set_int(s, ni, r);
	}
	return st;
}

/*
 * date_trunc, extract (as an int8 group key: numeric nodes are refused) and
 * date_part of a date, timestamp or timestamptz (in the program's zone),
 * and the date/time conversions, with the CPU driver's functions.
 * date_part's float8 is the decimal value rounded once; beyond 2^53 the
 * CPU driver rounds through the decimal string, so such a row goes back.
 */
WARP_FN_OUTLINE int
warp_row_datetime(const WarpProgram *p, const WarpNode *nd, WarpRowState *s, int ni)
{
	const WarpTz *tz = &p->tz;
	warp_int64	v = WRS_V(s, nd->a),
				r = 0;
	WarpDtField field = (WarpDtField) nd->sub;
	bool		is_ts = p->nodes[nd->a].type == WT_TIMESTAMP;
	bool		in_zone = (nd->flags & WARP_DT_TZ) != 0;
	bool		sat = (nd->flags & WARP_DT_SATURATE) != 0;
	WarpNumeric num;
	WarpStatus	st;
	int			scale;

	if (nd->flags & WARP_DT_ARITH)
	{
		st = warp_dt_arith(tz, nd, v, WRS_V(s, nd->b), &r);
		if (st == WARP_OK)
			warp_row_set_int(s, ni, r);
		return st;
	}
	if (nd->flags & WARP_DT_CAST)
	{
		switch ((WarpDtCast) nd->sub)
		{
			case WARP_DTC_DATE_TIMESTAMP:
				st = warp_date_to_timestamp_sat((warp_int32) v, sat, &r);
				break;
			case WARP_DTC_TIMESTAMPTZ_TIMESTAMP:
				st = warp_timestamptz_to_timestamp(tz, v, &r);
				break;
			case WARP_DTC_TIMESTAMP_DATE:
				st = warp_timestamp_to_date(v, &r);
				break;
			case WARP_DTC_TIMESTAMPTZ_DATE:
				st = warp_timestamptz_to_date(tz, v, &r);
				break;
			case WARP_DTC_TIMESTAMP_TIMESTAMPTZ:
				st = warp_timestamp_to_timestamptz_sat(tz, v, sat, &r);
				break;
			default:
				st = warp_date_to_timestamptz_sat(tz, v, sat, &r);
				break;
		}
		if (st == WARP_OK)
			warp_row_set_int(s, ni, r);
		return st;
	}
	if (nd->flags & WARP_DT_TRUNC)
	{
		st = in_zone ? warp_timestamptz_trunc(tz, field, v, &r) : warp_timestamp_trunc(field, v, &r);
		if (st == WARP_OK)
			warp_row_set_int(s, ni, r);
		return st;
	}
	st = in_zone ? warp_timestamptz_extract(tz, field, v, &num)
		: is_ts ? warp_timestamp_extract(field, v, &num)
		: warp_date_extract(field, (warp_int32) v, &num);
	if (st != WARP_OK)
		return st;
	scale = warp_dt_extract_scale(field, is_ts);
	if (num.scale != scale || num.value > WARP_INT64_MAX || num.value < WARP_INT64_MIN)
		return WARP_ERR_NUMERIC_OVERFLOW;
	r = (warp_int64) num.value;
	if (nd->flags & WARP_DT_PART)
	{
		const double p10[] = {1, 10, 100, 1000, 1e4, 1e5, 1e6};
		warp_uint64 mag = r < 0 ? -(warp_uint64) r : (warp_uint64) r;

		if (scale > 6)
			return WARP_ROW_BAD;
		if (scale > 0 && mag >= ((warp_uint64) 1 << 53))
			return WARP_ROW_BAD;
		/* exact operands: one correctly rounded division */
		warp_row_set_float(s, ni, scale == 0 ? (double) r : (double) r / p10[scale]);
		return WARP_OK;
	}
	warp_row_set_int(s, ni, r);
	return WARP_OK;
}

WARP_FN_OUTLINE int
warp_row_cast(const WarpProgram *p, const WarpNode *nd, WarpRowState *s, int ni)
{
	int			st = WARP_OK;

	if (WARP_ROW_ISFLOAT(p, nd->a))
	{
		double		v = warp_row_bitsd(WRS_V(s, nd->a));

		switch (nd->type)
		{
			case WT_FLOAT8:
				warp_row_set_float(s, ni, v);
				break;
			case WT_FLOAT4:
				{
					warp_float4 r = 0;

					if ((st = warp_float8_to_float4(v, &r)) == WARP_OK)
						warp_row_set_float(s, ni, r);
					break;
				}
			case WT_INT2:
				{
					warp_int16	r = 0;

					if ((st = warp_float8_to_int2(v, &r)) == WARP_OK)
						warp_row_set_int(s, ni, r);
					break;
				}
			case WT_INT4:
				{
					warp_int32	r = 0;

					if ((st = warp_float8_to_int4(v, &r)) == WARP_OK)
						warp_row_set_int(s, ni, r);
					break;
				}
			default:
				{
					warp_int64	r = 0;

					if ((st = warp_float8_to_int8(v, &r)) == WARP_OK)
						warp_row_set_int(s, ni, r);
					break;
				}
		}
	}
	else
	{
		warp_int64	v = WRS_V(s, nd->a);

		switch (nd->type)
		{
			case WT_FLOAT8:
				warp_row_set_float(s, ni, warp_int8_to_float8(v));
				break;
			case WT_FLOAT4:
				warp_row_set_float(s, ni, warp_int8_to_float4(v));
				break;
			case WT_INT2:
				{
					warp_int16	r = 0;

					if ((st = warp_int2_check(v, &r)) == WARP_OK)
						warp_row_set_int(s, ni, r);
					break;
				}
			case WT_INT4:
				{
					warp_int32	r = 0;

					if ((st = warp_int4_check(v, &r)) == WARP_OK)
						warp_row_set_int(s, ni, r);
					break;
				}
			default:
				warp_row_set_int(s, ni, v);
				break;
		}
	}
	return st;
}

/*
 * One step of node ni: WARP_OK once its value is in the memo, WARP_ROW_NEED
 * with *need = the child to evaluate first, or an error.  Re-entrant: after
 * the child is done the node is stepped again from the start; children
 * already evaluated are read from the memo, so lazy n-ary nodes simply
 * rescan their arguments (never evaluating one past the deciding one).
 */
WARP_FN int
warp_row_step(const WarpRowEnv *env, WarpRowState *s, int ni, int *need)
{
	const WarpProgram *p = env->p;
	const WarpNode *nd = &p->nodes[ni];
	int			j,
				lst;

restart:
	switch ((WarpOp) nd->op)
	{
		case WN_COL:
			return warp_row_load(env, s, ni, nd->a);
		case WN_CONST:
			if (nd->flags & WARP_NODE_NULL)
				WRS_ST(s, ni) = 2;
			else if (WARP_TYPE_IS_FLOAT(nd->type))
				warp_row_set_float(s, ni, nd->fval);
			else
				warp_row_set_int(s, ni, nd->ival);
			return WARP_OK;
		case WN_ARITH:
			WARP_ROW_NEED_CHILD(nd->a);
			WARP_ROW_NEED_CHILD(nd->b);
			if (WRS_ST(s, nd->a) == 2 || WRS_ST(s, nd->b) == 2)
			{
				WRS_ST(s, ni) = 2;
				return WARP_OK;
			}
			return warp_row_arith(nd, s, ni);
		case WN_NEG:
			WARP_ROW_NEED_CHILD(nd->a);
			if (WRS_ST(s, nd->a) == 2)
			{
				WRS_ST(s, ni) = 2;
				return WARP_OK;
			}
			if (WARP_TYPE_IS_FLOAT(nd->type))
			{
				warp_row_set_float(s, ni, -warp_row_bitsd(WRS_V(s, nd->a)));
				return WARP_OK;
			}
			else
			{
				warp_int64	v = WRS_V(s, nd->a);
				int			st;

				if (nd->type == WT_INT8)
				{
					warp_int64	r = 0;

					if ((st = warp_int8_um(v, &r)) != WARP_OK)
						return st;
					warp_row_set_int(s, ni, r);
				}
				else if (nd->type == WT_INT4)
				{
					warp_int32	r = 0;

					if ((st = warp_int4_um((warp_int32) v, &r)) != WARP_OK)
						return st;
					warp_row_set_int(s, ni, r);
				}
				else
				{
					warp_int16	r = 0;

					if ((st = warp_int2_um((warp_int16) v, &r)) != WARP_OK)
						return st;
					warp_row_set_int(s, ni, r);
				}
				return WARP_OK;
			}
		case WN_CMP:
			WARP_ROW_NEED_CHILD(nd->a);
			WARP_ROW_NEED_CHILD(nd->b);
			if (WRS_ST(s, nd->a) == 2 || WRS_ST(s, nd->b) == 2)
			{
				WRS_ST(s, ni) = 2;
				return WARP_OK;
			}
			{
				int			c;

				if (WARP_ROW_ISFLOAT(p, nd->a))
					c = warp_float8_cmp(warp_row_bitsd(WRS_V(s, nd->a)),
										warp_row_bitsd(WRS_V(s, nd->b)));
				else
					c = (WRS_V(s, nd->a) > WRS_V(s, nd->b)) - (WRS_V(s, nd->a) < WRS_V(s, nd->b));
				switch (nd->sub)
				{
					case WARP_CMP_EQ: c = c == 0; break;
					case WARP_CMP_NE: c = c != 0; break;
					case WARP_CMP_LT: c = c < 0; break;
					case WARP_CMP_LE: c = c <= 0; break;
					case WARP_CMP_GT: c = c > 0; break;
					default: c = c >= 0; break;
				}
				warp_row_set_int(s, ni, c);
			}
			return WARP_OK;
		case WN_AND:
		case WN_OR:
			{
				bool		is_and = nd->op == WN_AND;
				bool		sawnull = false;

				for (j = 0; j < nd->nargs; j++)
				{
					int			arg = p->args[nd->args_off + j];

					WARP_ROW_NEED_CHILD(arg);
					if (WRS_ST(s, arg) == 2)
						sawnull = true;
					else if ((WRS_V(s, arg) != 0) != is_and)
					{
						/* AND met false / OR met true: decided */
						warp_row_set_int(s, ni, !is_and);
						return WARP_OK;
					}
				}
				if (sawnull)
					WRS_ST(s, ni) = 2;
				else
					warp_row_set_int(s, ni, is_and);
				return WARP_OK;
			}
		case WN_NOT:
			WARP_ROW_NEED_CHILD(nd->a);
			if (WRS_ST(s, nd->a) == 2)
				WRS_ST(s, ni) = 2;
			else
				warp_row_set_int(s, ni, !WRS_V(s, nd->a));
			return WARP_OK;
		case WN_IS_NULL:
		case WN_IS_NOT_NULL:
			WARP_ROW_NEED_CHILD(nd->a);
			warp_row_set_int(s, ni, (WRS_ST(s, nd->a) == 2) == (nd->op == WN_IS_NULL));
			return WARP_OK;
		case WN_CAST:
			WARP_ROW_NEED_CHILD(nd->a);
			if (WRS_ST(s, nd->a) == 2)
			{
				WRS_ST(s, ni) = 2;
				return WARP_OK;
			}
			return warp_row_cast(p, nd, s, ni);
		case WN_DISTINCT:
			WARP_ROW_NEED_CHILD(nd->a);
			WARP_ROW_NEED_CHILD(nd->b);
			{
				bool		an = WRS_ST(s, nd->a) == 2,
							bn = WRS_ST(s, nd->b) == 2;
				bool		d = (an || bn) ? an != bn : !warp_row_equal(p, s, nd->a, nd->b);

				warp_row_set_int(s, ni, nd->sub ? !d : d);
			}
			return WARP_OK;
		case WN_IN_SET:
			WARP_ROW_NEED_CHILD(nd->a);
			if (WRS_ST(s, nd->a) == 2)
			{
				WRS_ST(s, ni) = 2;
				return WARP_OK;
			}
			{
				int			r = warp_in_set_test(p->setvals + nd->args_off, nd->nargs,
												 WRS_V(s, nd->a), (nd->flags & WARP_IN_NOT) != 0,
												 (nd->flags & WARP_IN_HAS_NULL) != 0);

				if (r < 0)
					WRS_ST(s, ni) = 2;
				else
					warp_row_set_int(s, ni, r);
			}
			return WARP_OK;
		case WN_DATETIME:
			WARP_ROW_NEED_CHILD(nd->a);
			if (nd->flags & WARP_DT_ARITH)
				WARP_ROW_NEED_CHILD(nd->b);
			if (WRS_ST(s, nd->a) == 2 || ((nd->flags & WARP_DT_ARITH) && WRS_ST(s, nd->b) == 2))
			{
				WRS_ST(s, ni) = 2;
				return WARP_OK;
			}
			return warp_row_datetime(p, nd, s, ni);
		case WN_NULLIF:
			WARP_ROW_NEED_CHILD(nd->a);
			WARP_ROW_NEED_CHILD(nd->b);
			warp_row_copy(s, ni, nd->a);
			if (WRS_ST(s, nd->a) == 1 && WRS_ST(s, nd->b) == 1 &&
				warp_row_equal(p, s, nd->a, nd->b))
				WRS_ST(s, ni) = 2;
			return WARP_OK;
		case WN_COALESCE:
			for (j = 0; j < nd->nargs; j++)
			{
				int			arg = p->args[nd->args_off + j];

				WARP_ROW_NEED_CHILD(arg);
				if (WRS_ST(s, arg) == 1)
				{
					warp_row_copy(s, ni, arg);
					return WARP_OK;
				}
			}
			WRS_ST(s, ni) = 2;
			return WARP_OK;
		case WN_CASE:
			{
				const warp_int32 *args = p->args + nd->args_off;
				int			npairs = nd->nargs / 2;

				for (j = 0; j < npairs; j++)
				{
					int			w = args[2 * j],
								t = args[2 * j + 1];

					WARP_ROW_NEED_CHILD(w);
					if (WRS_ST(s, w) == 1 && WRS_V(s, w) != 0)
					{
						WARP_ROW_NEED_CHILD(t);
						warp_row_copy(s, ni, t);
						return WARP_OK;
					}
				}
				if (nd->flags & WARP_CASE_HAS_ELSE)
				{
					int			e = args[nd->nargs - 1];

					WARP_ROW_NEED_CHILD(e);
					warp_row_copy(s, ni, e);
					return WARP_OK;
				}
				WRS_ST(s, ni) = 2;
				return WARP_OK;
			}
	}
	return WARP_ROW_BAD;

load_child:
	/* *need is a column node (WARP_ROW_NEED_CHILD): one load site */
	if ((lst = warp_row_load(env, s, *need, p->nodes[*need].a)) != WARP_OK)
		return lst;
	goto restart;
}

/* Evaluate node root for the current row (memoized). */
WARP_FN_OUTLINE int
warp_row_eval(const WarpRowEnv *env, WarpRowState *s, int root)
{
	int			sp = 0;

	if (WRS_ST(s, root) != 0)
		return WARP_OK;
	s->stack[sp++] = root;
	while (sp > 0)
	{
		int			ni = s->stack[sp - 1];
		int			need = -1;
		int			st = warp_row_step(env, s, ni, &need);

		if (st == WARP_OK)
			sp--;
		else if (st == WARP_ROW_NEED)
		{
			if (sp >= WARP_ROW_MAX_DEPTH)
				return WARP_ROW_BAD;
			s->stack[sp++] = need;
		}
		else
			return st;
	}
	return WARP_OK;
}

/* ------------------------------------------------------------- joining */

/* probes use warp_join_lookup() (warp_join.h) on the device's copy */

/* ------------------------------------------------------------ aggregates */

/* float min/max: an unsigned key ordered as PostgreSQL orders float8 */
#define WARP_ROW_SIGN UINT64_C(0x8000000000000000)

WARP_FN warp_uint64
warp_row_fkey(double d)
{
	warp_uint64 b = (d != d) ? UINT64_C(0x7ff8000000000000)
		: (warp_uint64) warp_row_dbits(d);

	return (b & WARP_ROW_SIGN) ? ~b : (b | WARP_ROW_SIGN);
}

WARP_FN double
warp_row_funkey(warp_uint64 k)
{
	warp_uint64 b = (k & WARP_ROW_SIGN) ? (k & ~WARP_ROW_SIGN) : ~k;

	return warp_row_bitsd((warp_int64) b);
}

/* largest inputs to sum(float8) / avg(float) that cannot overflow in any order */
#define WARP_ROW_SUM_LIMIT	8.0e288		/* < 2^960 */
#define WARP_ROW_AVG_LIMIT	2.0e120		/* < 2^400 */

/*
 * Initial accumulating state of aggregate a: the identity of its update.
 * min/max keep their running value in ival (float: as warp_row_fkey);
 * sum(float8) starts from -0, the identity of addition (so a sum of -0s
 * stays -0, as the CPU driver's first-value assignment gives).
 */
WARP_FN void
warp_row_agg_init(const WarpAggSpec *ag, WarpAggState *s)
{
	bool		isfloat = WARP_TYPE_IS_FLOAT(ag->type);

	s->count = 0;
	s->ival = 0;
	s->fval = 0.0;
	s->fsxx = 0.0;
	s->wide_lo = 0;
	s->wide_hi = 0;
	s->wide_top = 0;
	if (ag->kind == WA_MIN)
		s->ival = isfloat ? (warp_int64) ~UINT64_C(0) : WARP_INT64_MAX;
	else if (ag->kind == WA_MAX)
		s->ival = isfloat ? 0 : WARP_INT64_MIN;
	else if (ag->kind == WA_SUM_FLOAT)
		s->fval = -0.0;
}

/* Add one input (iv or fv by the argument's kind) to an accumulating state. */
WARP_FN int
warp_row_agg_update(const WarpAggSpec *ag, WarpAggState *s, warp_int64 iv, double fv)
{
	switch ((WarpAggKind) ag->kind)
	{
		case WA_COUNT_STAR:
		case WA_COUNT:
			warp_row_add_u64((warp_uint64 *) &s->count, 1);
			return WARP_OK;
		case WA_SUM_INT:
		case WA_AVG_INT:
			warp_row_add_u64((warp_uint64 *) &s->count, 1);
			warp_row_add_u64((warp_uint64 *) &s->ival, (warp_uint64) iv);
			return WARP_OK;
		case WA_SUM_INT8:
			{
				/* 128-bit add: low word, then its carry and the sign into high */
				warp_uint64 old = warp_row_fetch_add_u64(&s->wide_lo, (warp_uint64) iv);
				warp_uint64 hi = (iv < 0 ? ~UINT64_C(0) : 0) +
					(old + (warp_uint64) iv < old ? 1 : 0);

				if (hi != 0)
					warp_row_add_u64((warp_uint64 *) &s->wide_hi, hi);
				warp_row_add_u64((warp_uint64 *) &s->count, 1);
				return WARP_OK;
			}
		case WA_MIN:
		case WA_MAX:
			if (WARP_TYPE_IS_FLOAT(ag->type))
			{
				if (fv == 0.0 && warp_row_dbits(fv) != 0)
					return WARP_ROW_BAD;	/* -0: order-dependent result */
				if (ag->kind == WA_MIN)
					warp_row_min_u64((warp_uint64 *) &s->ival, warp_row_fkey(fv));
				else
					warp_row_max_u64((warp_uint64 *) &s->ival, warp_row_fkey(fv));
			}
			else if (ag->kind == WA_MIN)
				warp_row_min_i64(&s->ival, iv);
			else
				warp_row_max_i64(&s->ival, iv);
			warp_row_add_u64((warp_uint64 *) &s->count, 1);
			return WARP_OK;
		case WA_SUM_FLOAT:
			if (ag->type != WT_FLOAT8 || !(fv < WARP_ROW_SUM_LIMIT && fv > -WARP_ROW_SUM_LIMIT))
				return WARP_ROW_BAD;
			warp_row_add_f64(&s->fval, fv);
			warp_row_add_u64((warp_uint64 *) &s->count, 1);
			return WARP_OK;
		case WA_AVG_FLOAT:
			if (!(fv < WARP_ROW_AVG_LIMIT && fv > -WARP_ROW_AVG_LIMIT))
				return WARP_ROW_BAD;
			warp_row_add_f64(&s->fval, fv);
			warp_row_add_f64(&s->fsxx, WARP_F8_MUL(fv, fv));
			warp_row_add_u64((warp_uint64 *) &s->count, 1);
			return WARP_OK;
		case WA_SUM_NUMERIC:
			return WARP_ROW_BAD;	/* CPU driver only (warp_row_check) */
	}
	return WARP_ROW_BAD;
}

/*
 * An accumulating state in the CPU driver's form (what warp_cpu_group_agg
 * returns), except that avg(float)'s fsxx is still Σx² (warp_row_agg_final
 * converts it).  Fields an empty state never set are zero, as in the CPU
 * driver's.
 */
WARP_FN void
warp_row_agg_export(const WarpAggSpec *ag, WarpAggState *s)
{
	switch ((WarpAggKind) ag->kind)
	{
		case WA_MIN:
		case WA_MAX:
			if (s->count == 0)
			{
				s->ival = 0;
				s->fval = 0.0;
			}
			else if (WARP_TYPE_IS_FLOAT(ag->type))
			{
				s->fval = warp_row_funkey((warp_uint64) s->ival);
				s->ival = 0;
			}
			break;
		case WA_SUM_FLOAT:
			if (s->count == 0)
				s->fval = 0.0;
			break;
		default:
			break;
	}
}

/* Combine exported state b into exported state a (same aggregate). */
WARP_FN void
warp_row_agg_merge(const WarpAggSpec *ag, WarpAggState *a, const WarpAggState *b)
{
	if (b->count == 0)
		return;
	if (a->count == 0)
	{
		*a = *b;
		return;
	}
	switch ((WarpAggKind) ag->kind)
	{
		case WA_COUNT_STAR:
		case WA_COUNT:
			break;
		case WA_SUM_INT:
		case WA_AVG_INT:
			a->ival = (warp_int64) ((warp_uint64) a->ival + (warp_uint64) b->ival);
			break;
		case WA_SUM_INT8:
			{
				warp_uint64 lo = a->wide_lo + b->wide_lo;

				a->wide_hi = (warp_int64) ((warp_uint64) a->wide_hi + (warp_uint64) b->wide_hi +
										   (lo < a->wide_lo ? 1 : 0));
				a->wide_lo = lo;
				break;
			}
		case WA_MIN:
		case WA_MAX:
			if (WARP_TYPE_IS_FLOAT(ag->type))
			{
				int			c = warp_float8_cmp(b->fval, a->fval);

				if (ag->kind == WA_MIN ? c < 0 : c > 0)
					a->fval = b->fval;
			}
			else if (ag->kind == WA_MIN ? b->ival < a->ival : b->ival > a->ival)
				a->ival = b->ival;
			break;
		case WA_SUM_FLOAT:
			a->fval = WARP_F8_ADD(a->fval, b->fval);
			break;
		case WA_AVG_FLOAT:
			a->fval = WARP_F8_ADD(a->fval, b->fval);
			a->fsxx = WARP_F8_ADD(a->fsxx, b->fsxx);
			break;
		case WA_SUM_NUMERIC:
			break;				/* CPU driver only (warp_row_check) */
	}
	a->count += b->count;
}

/*
 * Last step once all partial states are merged: avg(float)'s Σx² becomes
 * Sxx = Σx² - Sx²/N (clamped at 0), the Youngs-Cramer sum of squared
 * deviations up to rounding.  avg's final function reads only N and Sx.
 */
WARP_FN void
warp_row_agg_final(const WarpAggSpec *ag, WarpAggState *s)
{
	if (ag->kind == WA_AVG_FLOAT)
	{
		double		sxx = 0.0;

		if (s->count > 1)
		{
			sxx = s->fsxx - s->fval * s->fval / (double) s->count;
			if (!(sxx > 0.0))
				sxx = 0.0;
		}
		s->fsxx = sxx;
	}
}

/* ------------------------------------------------------------- grouping */

WARP_FN warp_uint64
warp_row_key_hash(const warp_int64 *kv, const warp_uint8 *kn, int nkeys)
{
	warp_uint64 h = UINT64_C(0x9e3779b97f4a7c15);
	int			k;

	for (k = 0; k < nkeys; k++)
		h = warp_hash_int64((warp_int64) (h ^ (kn[k] ? UINT64_C(0x5bd1e995) : (warp_uint64) kv[k])) + k);
	return h;
}

/* Slot of the group with these keys, created if new; -1 if the table is full. */
WARP_FN warp_int64
warp_row_group(const WarpRowGroups *g, const warp_int64 *kv, const warp_uint8 *kn, warp_int64 code)
{
	int			nkeys = g->nkeys;
	int			k;
	warp_uint64 i,
				probes;

	if (g->direct)
	{
		if (warp_row_load_u32(&g->state[code]) != 2)
		{
			/*
			 * Every row of this group writes the same keys, so racing
			 * writers are harmless (nobody reads keys until the kernel is
			 * over); the compare-and-swap only makes the count exact.
			 */
			for (k = 0; k < nkeys; k++)
			{
				g->keys[code * nkeys + k] = kv[k];
				g->knull[code * nkeys + k] = kn[k];
			}
			if (warp_row_cas_u32(&g->state[code], 0, 2) == 0)
				warp_row_add_u64((warp_uint64 *) g->nused, 1);
		}
		return code;
	}
	i = warp_row_key_hash(kv, kn, nkeys) & g->mask;
	for (probes = 0; probes <= g->mask; probes++, i = (i + 1) & g->mask)
	{
		warp_uint32 st = warp_row_load_u32(&g->state[i]);
		const volatile warp_int64 *sk;
		const volatile warp_uint8 *sn;

		if (st == 0)
		{
			st = warp_row_cas_u32(&g->state[i], 0, 1);
			if (st == 0)
			{
				/*
				 * Claimed: fill in the keys, then publish (always, so that
				 * nobody spins on this slot forever), then count it.  Over
				 * the limit, the row is reported instead of aggregated.
				 */
				for (k = 0; k < nkeys; k++)
				{
					g->keys[i * nkeys + k] = kv[k];
					g->knull[i * nkeys + k] = kn[k];
				}
				warp_row_publish_u32(&g->state[i], 2);
				if (warp_row_fetch_add_u64((warp_uint64 *) g->nused, 1) >= g->max_used)
					return -1;
				return (warp_int64) i;
			}
		}
		while (st == 1)			/* another thread is filling it in */
			st = warp_row_load_u32(&g->state[i]);
#ifdef __CUDA_ARCH__
		__threadfence();
#endif
		sk = g->keys + i * nkeys;
		sn = g->knull + i * nkeys;
		for (k = 0; k < nkeys; k++)
			if (sk[k] != kv[k] || sn[k] != kn[k])
				break;
		if (k == nkeys)
			return (warp_int64) i;
	}
	return -1;
}

/* ----------------------------------------------------------------- a row */

/*
 * A row goes through the program in steps, so that the GPU kernel can
 * regroup the rows still alive between them (warp_gpu.cu): begin, quals,
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


/* ------------------------------------------------------ host-side setup */

/*
 * Whether the row evaluator computes an aggregate exactly whatever the
 * order of the rows: not sum(float4), whose float4 rounding (and overflow)
 * depends on the order of the additions.  The planner asks too, so such a
 * query keeps a CPU plan.
 */
WARP_FN bool
warp_row_agg_exact(int kind, int type)
{
	return !(kind == WA_SUM_FLOAT && type != WT_FLOAT8);
}

/*
 * Whether the row evaluator can run prog exactly (NULL), or why not.  Run
 * after warp_program_validate().  tables[i] is the table of join i's
 * .table, as warp_cpu_create takes them.
 */
static inline const char *
warp_row_check(const WarpProgram *p, WarpJoinTable *const *tables)
{
	int			depth[WARP_ROW_MAX_NODES];
	int			i,
				j;

	if (p->emit_rows)
		return "row mode is the vector driver's";
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
	/* arguments precede their node (validated): depth in one pass */
	for (i = 0; i < p->nnodes; i++)
	{
		const WarpNode *nd = &p->nodes[i];
		int			d = 0;

		switch ((WarpOp) nd->op)
		{
			case WN_COL:
			case WN_CONST:
				break;
			case WN_ARITH:
			case WN_CMP:
			case WN_DISTINCT:
			case WN_NULLIF:
				d = depth[nd->a] > depth[nd->b] ? depth[nd->a] : depth[nd->b];
				break;
			case WN_NEG:
			case WN_NOT:
			case WN_IS_NULL:
			case WN_IS_NOT_NULL:
			case WN_CAST:
			case WN_IN_SET:		/* args_off indexes setvals */
				d = depth[nd->a];
				break;
			case WN_DATETIME:
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
			return "expression too deep for the row evaluator";
	}
	for (i = 0; i < p->naggs; i++)
		if (!warp_row_agg_exact(p->aggs[i].kind, p->aggs[i].type))
			return "sum(float4) depends on the order of the rows";
	for (i = 0; i < p->njoins; i++)
	{
		const WarpJoinTable *t = tables[p->joins[i].table];
		warp_int64	r,
					n;

		if (t == NULL || t->nrows < 0 || t->nrows >= WARP_INT32_MAX || t->npayloads < 0)
			return "malformed join table";
		for (r = 0; r < t->nrows; r++)
			if (t->payload[r] < 0 || t->payload[r] >= t->npayloads ||
				t->next[r] < -1 || t->next[r] >= t->nrows ||
				(t->next[r] >= 0 && t->next[r] <= r))
				return "malformed join table";
		if (t->direct)
		{
			if (t->nrows > 0 && (t->max < t->min || (warp_uint64) (t->max - t->min) >= (warp_uint64) 1 << 31))
				return "malformed join table";
			n = t->nrows > 0 ? t->max - t->min + 1 : 0;
			for (r = 0; r < n; r++)
				if (t->first[r] < -1 || t->first[r] >= t->nrows)
					return "malformed join table";
		}
		else if (t->nrows > 0)
		{
			bool		empty = false;

			if (t->mask == 0 || ((t->mask + 1) & t->mask) != 0)
				return "malformed join table";
			for (r = 0; r <= (warp_int64) t->mask; r++)
			{
				if (t->slot_row[r] < -1 || t->slot_row[r] >= t->nrows)
					return "malformed join table";
				if (t->slot_row[r] < 0)
					empty = true;
			}
			if (!empty)
				return "malformed join table";
		}
	}
	return NULL;
}

/*
 * env->pre for program p: its leading quals "column op constant" (either
 * side; =, <, <=, >, >=; neither side a float), up to the first qual of
 * another shape or WARP_ROW_MAX_PRE ranges.  Every such comparison is the
 * interpreter's integer comparison of the column's loaded value with the
 * constant, so a range over that value decides it exactly; a NULL constant
 * (or an empty range) rejects every row after the load.
 */
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

/* ------------------------------------------------- host-side result table */

/*
 * The merged result on the host: every group once, states in the CPU
 * driver's form.  Partial states (a flushed device table, a slice of a
 * batch) are merged in with warp_row_result_merge(); groups keep the order
 * in which they were first merged.
 */
typedef struct WarpRowResult
{
	int			nkeys;
	int			naggs;
	warp_int64	n;				/* groups */
	warp_int64	cap;
	warp_int64 *keys;			/* cap * nkeys */
	warp_uint8 *knull;			/* cap * nkeys */
	WarpAggState *aggs;			/* cap * naggs */
	warp_uint64 hmask;			/* slots of group indexes, -1 = empty */
	warp_int64 *hslot;
	bool		unindexed;		/* groups appended that hslot lacks */
	bool		finalized;
} WarpRowResult;

static inline void
warp_row_result_free(WarpRowResult *r)
{
	free(r->keys);
	free(r->knull);
	free(r->aggs);
	free(r->hslot);
	memset(r, 0, sizeof(*r));
}

/* false if out of memory */
static inline bool
warp_row_result_init(WarpRowResult *r, int nkeys, int naggs)
{
	memset(r, 0, sizeof(*r));
	r->nkeys = nkeys;
	r->naggs = naggs;
	r->hmask = 1023;
	r->hslot = (warp_int64 *) malloc(sizeof(warp_int64) * (r->hmask + 1));
	if (r->hslot == NULL)
		return false;
	memset(r->hslot, 0xff, sizeof(warp_int64) * (r->hmask + 1));
	return true;
}

static inline bool
warp_row_result_grow(WarpRowResult *r)
{
	warp_int64	cap = r->cap ? r->cap * 2 : 64;
	warp_int64 *k = (warp_int64 *) realloc(r->keys, sizeof(warp_int64) * cap * (r->nkeys + 1));
	warp_uint8 *kn;
	WarpAggState *a;

	if (k == NULL)
		return false;
	r->keys = k;
	kn = (warp_uint8 *) realloc(r->knull, (size_t) cap * (r->nkeys + 1));
	if (kn == NULL)
		return false;
	r->knull = kn;
	a = (WarpAggState *) realloc(r->aggs, sizeof(WarpAggState) * cap * (r->naggs + 1));
	if (a == NULL)
		return false;
	r->aggs = a;
	r->cap = cap;
	return true;
}

/*
 * The host index's hash of a key: warp_row_key_hash with its halves
 * swapped.  The device table places a group at (hash & its mask), so a
 * flushed table arrives in the order of the hash's low bits; indexing it
 * by the same low bits with linear probing piles the groups into long
 * runs (a flush of 600K groups took 0.3 to 5.7 s, by the order the
 * device's inserts happened to take).  The high half does not follow
 * that order.
 */
static inline warp_uint64
warp_row_result_hash(const warp_int64 *kv, const warp_uint8 *kn, int nkeys)
{
	warp_uint64 h = warp_row_key_hash(kv, kn, nkeys);

	return (h >> 32) | (h << 32);
}

static inline bool
warp_row_result_rehash(WarpRowResult *r)
{
	warp_uint64 cap = (r->hmask + 1) * 2;
	warp_int64 *slots;
	warp_int64	gi;

	/* at most half full (groups appended unindexed may need more) */
	while (cap < (warp_uint64) r->n * 2 + 2)
		cap *= 2;
	slots = (warp_int64 *) malloc(sizeof(warp_int64) * cap);
	if (slots == NULL)
		return false;
	memset(slots, 0xff, sizeof(warp_int64) * cap);
	for (gi = 0; gi < r->n; gi++)
	{
		warp_uint64 h = warp_row_result_hash(r->keys + gi * r->nkeys,
											 r->knull + gi * r->nkeys, r->nkeys) & (cap - 1);

		while (slots[h] >= 0)
			h = (h + 1) & (cap - 1);
		slots[h] = gi;
	}
	free(r->hslot);
	r->hslot = slots;
	r->hmask = cap - 1;
	return true;
}

/*
 * Append a group the result does not have (the first flush of a table of
 * distinct groups): no lookup; the index is rebuilt by the next
 * warp_row_result_merge.  false if out of memory.
 */
static inline bool
warp_row_result_append(WarpRowResult *r, const warp_int64 *kv, const warp_uint8 *kn,
					   const WarpAggState *states)
{
	warp_int64	gi;

	if (r->n >= r->cap && !warp_row_result_grow(r))
		return false;
	gi = r->n++;
	if (r->nkeys > 0)
	{
		memcpy(r->keys + gi * r->nkeys, kv, sizeof(warp_int64) * r->nkeys);
		memcpy(r->knull + gi * r->nkeys, kn, r->nkeys);
	}
	if (r->naggs > 0)
		memcpy(r->aggs + gi * r->naggs, states, sizeof(WarpAggState) * r->naggs);
	r->unindexed = true;
	return true;
}

/*
 * Merge one group's exported states (naggs of them) into r.  false if out
 * of memory.
 */
static inline bool
warp_row_result_merge(WarpRowResult *r, const WarpProgram *p, const warp_int64 *kv,
					  const warp_uint8 *kn, const WarpAggState *states)
{
	int			nkeys = r->nkeys;
	warp_uint64 h;
	warp_int64	gi;
	int			a;

	if (r->unindexed)
	{
		/* groups appended without an index: index them all */
		if (!warp_row_result_rehash(r))
			return false;
		r->unindexed = false;
	}
	h = warp_row_result_hash(kv, kn, nkeys) & r->hmask;

	for (;;)
	{
		gi = r->hslot[h];
		if (gi < 0)
			break;
		if (memcmp(r->keys + gi * nkeys, kv, sizeof(warp_int64) * nkeys) == 0 &&
			memcmp(r->knull + gi * nkeys, kn, nkeys) == 0)
		{
			for (a = 0; a < r->naggs; a++)
				warp_row_agg_merge(&p->aggs[a], &r->aggs[gi * r->naggs + a], &states[a]);
			return true;
		}
		h = (h + 1) & r->hmask;
	}
	if (r->n >= r->cap && !warp_row_result_grow(r))
		return false;
	gi = r->n++;
	if (nkeys > 0)
	{
		memcpy(r->keys + gi * nkeys, kv, sizeof(warp_int64) * nkeys);
		memcpy(r->knull + gi * nkeys, kn, nkeys);
	}
	if (r->naggs > 0)
		memcpy(r->aggs + gi * r->naggs, states, sizeof(WarpAggState) * r->naggs);
	r->hslot[h] = gi;
	if ((warp_uint64) r->n * 2 > r->hmask && !warp_row_result_rehash(r))
		return false;
	return true;
}

/* after the last merge: warp_row_agg_final on every state (once) */
static inline void
warp_row_result_final(WarpRowResult *r, const WarpProgram *p)
{
	warp_int64	gi;
	int			a;

	if (r->finalized)
		return;
	for (gi = 0; gi < r->n; gi++)
		for (a = 0; a < r->naggs; a++)
			warp_row_agg_final(&p->aggs[a], &r->aggs[gi * r->naggs + a]);
	r->finalized = true;
}

#endif							/* WARP_ROW_H */
