/*
 * vec_scan.h — WarpVecScan: exact k-nearest-neighbour search over an
 * Arrow foreign table, `SELECT ... FROM t [WHERE ...] ORDER BY v <op> q
 * LIMIT k`, scoring the vectors straight from the Arrow column buffers.
 *
 *   vec_scan_plan.c   the path (set_rel_pathlist_hook) and plan
 *   vec_scan_exec.c   execution and EXPLAIN
 */
#ifndef PGWARP_VEC_SCAN_H
#define PGWARP_VEC_SCAN_H

#include "postgres.h"

#include "nodes/extensible.h"

/* custom_private of the plan: a list of Integers */
enum
{
	VEC_PRIV_ATTNO,				/* the vector column */
	VEC_PRIV_KIND,				/* WarpVecKind */
	VEC_PRIV_BOUND,				/* LIMIT + OFFSET */
	VEC_PRIV_VAR_FIRST,			/* 1: v <op> q, 0: q <op> v */
	VEC_PRIV_COUNT
};
/* custom_exprs: the query vector's expression, then the quals */

extern CustomScanMethods pgwarp_vec_scan_methods;

extern void pgwarp_vec_scan_init(void);	/* vec_scan_plan.c */
extern void pgwarp_vec_scan_exec_init(void);	/* vec_scan_exec.c */

#endif							/* PGWARP_VEC_SCAN_H */
