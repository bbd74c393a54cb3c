/*-------------------------------------------------------------------------
 *
 * warp_agg_state.h
 *	  The per-group partial state of one aggregate (WarpAggState), the form
 *	  in which both drivers hand groups back: the CPU driver's accumulators
 *	  (warp_cpu.h) and the row evaluator's exported states (warp_row_agg.h).
 *	  A header of its own so that the row evaluator need not include the
 *	  CPU driver's interface.
 *
 * Pure C (also valid C++ for nvcc); no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_AGG_STATE_H
#define WARP_AGG_STATE_H

#include "warp_defs.h"

/* Per-group partial state of one aggregate (see WarpAggKind). */
typedef struct WarpAggState
{
	warp_int64	count;			/* inputs seen (non-NULL, FILTER passed) */
	warp_int64	ival;			/* sum (wrapping, like int4_sum), min/max */
	double		fval;			/* float sum, min/max; avg: Sx */
	double		fsxx;			/* avg(float): Sxx */
	/* sum(int8): exact 128-bit sum, as two halves (memory from palloc is
	 * only 8-byte aligned, too little for an __int128 member) */
	warp_uint64 wide_lo;
	warp_int64	wide_hi;
	/* sum of a numeric expression: bits 128..191 of a 192-bit two's
	 * complement sum whose low 128 bits are wide_hi:wide_lo (unsigned);
	 * min/max of one: the int128 value in wide_hi:wide_lo */
	warp_int64	wide_top;
} WarpAggState;

static inline warp_int128
warp_agg_wide(const WarpAggState *s)
{
	return (warp_int128) (((warp_uint128) (warp_uint64) s->wide_hi << 64) | s->wide_lo);
}

static inline void
warp_agg_set_wide(WarpAggState *s, warp_int128 v)
{
	s->wide_lo = (warp_uint64) v;
	s->wide_hi = (warp_int64) (v >> 64);
}

#endif							/* WARP_AGG_STATE_H */
