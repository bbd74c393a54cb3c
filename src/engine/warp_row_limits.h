/*-------------------------------------------------------------------------
 *
 * warp_row_limits.h
 *	  The row evaluator's limits (per-thread memory on the GPU): what
 *	  warp_gpu_can_run (warp_row_check.h) refuses and the kernel's data
 *	  structures (warp_row_types.h) are sized by.  A header of its own so
 *	  that the planner can read them without the kernel.
 *
 * Pure C (also valid C++ for nvcc); no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_ROW_LIMITS_H
#define WARP_ROW_LIMITS_H

/* limits of the row evaluator (per-thread memory on the GPU) */
#define WARP_ROW_MAX_NODES	128
#define WARP_ROW_MAX_DEPTH	32		/* longest argument chain */
#define WARP_ROW_MAX_JOINS	16
#define WARP_ROW_MAX_KEYS	16
#define WARP_ROW_MAX_AGGS	64

#endif							/* WARP_ROW_LIMITS_H */
