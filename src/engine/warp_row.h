/*-------------------------------------------------------------------------
 *
 * warp_row.h
 *	  A row-at-a-time evaluator of a WarpProgram, compiled by both gcc and
 *	  nvcc: the body of the GPU driver's fused kernel (src/gpud/warp_gpu_kernels.cu),
 *	  and testable on the CPU (test/unit/test_engine_row.c checks it against
 *	  the CPU driver, warp_cpu*.c, which is the reference for every detail).
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
 * The pieces, each a header of its own (this one includes them all, for
 * the GPU driver, src/gpud/warp_gpu_kernels.cu, and the unit tests):
 *	warp_row_limits.h	the evaluator's limits
 *	warp_row_types.h	statuses, columns, environment, memo, group table
 *	warp_row_atomic.h	bit casts and the atomic updates
 *	warp_row_conv.h		date/timestamp conversion (shared with the CPU driver)
 *	warp_row_load.h		reading a column's value
 *	warp_row_eval.h		the expression interpreter
 *	warp_row_agg.h		aggregate states and the group table
 *	warp_row_run.h		a row's steps: quals, join keys, probes, emit
 *	warp_row_check.h	whether the GPU driver runs a program (host code,
 *						warp_row_check.c; what the planner includes)
 *	warp_row_host.h		host-side setup: prefilter, column descriptions
 *	warp_row_result.h	the merged result on the host
 *
 * Pure C (also valid C++ for nvcc); no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_ROW_H
#define WARP_ROW_H

#include "warp_row_types.h"
#include "warp_row_atomic.h"
#include "warp_row_load.h"
#include "warp_row_eval.h"
#include "warp_row_agg.h"
#include "warp_row_run.h"
#include "warp_row_check.h"
#include "warp_row_host.h"
#include "warp_row_result.h"

#endif							/* WARP_ROW_H */
