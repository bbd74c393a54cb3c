/*-------------------------------------------------------------------------
 *
 * warp_row_check.h
 *	  Whether the GPU driver runs a program exactly: the one answer to that
 *	  question (warp_gpu_can_run), what else its join tables must satisfy
 *	  (warp_row_check), and the aggregates it computes whatever the order
 *	  of the rows (warp_row_agg_exact).  Host code only (warp_row_check.c);
 *	  the planner and the daemon include this instead of the kernel's
 *	  header, warp_row.h, which includes it too.
 *
 * Pure C (also valid C++ for nvcc); no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_ROW_CHECK_H
#define WARP_ROW_CHECK_H

#include "warp_join.h"
#include "warp_program.h"
#include "warp_row_limits.h"

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
 * Whether the GPU driver (the row evaluator) can run program p exactly,
 * whatever its data: p is valid (warp_program_validate), within the row
 * evaluator's limits, reads no column and computes no node that only the
 * CPU driver reads or computes, and has no aggregate whose result depends
 * on the order of the rows.  false with *why (a static string) when not;
 * why may be NULL.  What the data can still refuse at run time (a batch's
 * column layout, a value out of range) makes the GPU driver give the query
 * back to the CPU driver.
 */
extern bool warp_gpu_can_run(const WarpProgram *p, const char **why);

/*
 * warp_gpu_can_run, and join tables the row evaluator can walk: NULL if
 * the row evaluator can run prog over them exactly, or why not.  tables[i]
 * is the table of join i's .table, as warp_cpu_create takes them.
 */
extern const char *warp_row_check(const WarpProgram *p, WarpJoinTable *const *tables);

#endif							/* WARP_ROW_CHECK_H */
