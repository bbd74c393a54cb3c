/*-------------------------------------------------------------------------
 *
 * warp_row_types.h
 *	  The row evaluator's statuses and data structures: how a
 *	  column is read (WarpRowCol), what is constant while rows run
 *	  (WarpRowEnv), a row's memo (WarpRowState) and the group table
 *	  (WarpRowGroups).  The evaluator itself is in warp_row_eval.h, the
 *	  aggregates in warp_row_agg.h; warp_row.h includes them all.
 *
 * Pure C (also valid C++ for nvcc); no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_ROW_TYPES_H
#define WARP_ROW_TYPES_H

#include "warp_agg_state.h"
#include "warp_join.h"
#include "warp_program.h"
#include "warp_row_conv.h"
#include "warp_row_limits.h"
#include "warp_topn_order.h"

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
 *
 * Append form (row mode, WarpProgram.emit_rows): every joined row takes the
 * next slot (a counter, no lookup), so duplicates stay duplicates, as the
 * CPU driver's appended rows; under a Top-N a row whose first ORDER BY key
 * sorts after the threshold the host found (topn_have) is not kept
 * (warp_topn_order.h).
 */
typedef struct WarpRowGroups
{
	warp_int32	direct;
	warp_int32	nkeys;
	warp_int32	naggs;
	warp_int32	append;			/* append form */
	warp_uint64 mask;			/* hash, append: slots - 1 */
	warp_uint64 max_used;		/* hash, append: claim limit */
	warp_int64	stride[WARP_ROW_MAX_KEYS];	/* direct */
	warp_uint32 *state;
	warp_int64 *keys;
	warp_uint8 *knull;
	WarpAggState *aggs;
	unsigned long long *nused;	/* groups created */
	/* append form under a Top-N */
	WarpTopnOrder topn;
	warp_int32	topn_have;
	warp_uint8	topn_null;
	warp_int64	topn_val;
} WarpRowGroups;

#endif							/* WARP_ROW_TYPES_H */
