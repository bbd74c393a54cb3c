/*
 * vec_scan.h — WarpVecScan: exact k-nearest-neighbour search over an
 * Arrow foreign table, `SELECT ... FROM t [WHERE ...] ORDER BY v <op> q
 * LIMIT k`, scoring the vectors straight from the Arrow column buffers.
 *
 *   vec_scan_plan.c   the path (set_rel_pathlist_hook) and plan
 *   vec_scan_exec.c   execution and EXPLAIN
 *   vec_scan_load.c   reading the vector column (streamed in row chunks)
 */
#ifndef PGWARP_VEC_SCAN_H
#define PGWARP_VEC_SCAN_H

#include "postgres.h"

#include "nodes/extensible.h"

#include "arrow.h"
#include "warp_vector.h"

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

/*
 * The vector column of the current record batch (vec_scan_load.c): either
 * streamed (direct: FixedSizeList<Float32 | Float16>, uncompressed, no
 * NULL elements), or loaded whole into col by arrow_load_column.
 */
typedef struct VecColumn
{
	MemoryContext cxt;			/* the chunk buffer */
	MemoryContext batch_cxt;	/* reset per batch: the validity bitmap */
	bool		absent;			/* the file has no such column: all NULL */
	bool		direct;
	ArrowArray	col;			/* !direct: the whole column */
	/* direct: */
	int			dims;
	bool		half;			/* Float16 elements, widened per row */
	int64		values_off;		/* file offset of the child values */
	uint8	   *validity;		/* the list's bitmap, or NULL: none NULL */
	int64		first_row;		/* batch row of the scan's row 0 */
	int64		nrows;
	uint8	   *chunk;			/* rows chunk_lo .. + chunk_n */
	int64		chunk_cap;		/* bytes */
	int64		chunk_rows;
	int64		chunk_lo;
	int64		chunk_n;
	float	   *widened;		/* a Float16 row as floats */
	int			widened_cap;
} VecColumn;

struct ArrowScanState;
struct ScanFile;
extern void pgwarp_vec_column_init(VecColumn *vc, MemoryContext parent);
extern void pgwarp_vec_column_batch(VecColumn *vc, struct ArrowScanState *ss,
									struct ScanFile *sf, int a);
extern bool pgwarp_vec_column_row(VecColumn *vc, struct ScanFile *sf, int64 i,
								  const float **x, int *dims);
extern void pgwarp_vec_column_score(VecColumn *vc, struct ScanFile *sf, const float *query,
									WarpVecKind kind, double qnorm2, int nthreads,
									double *dist);

extern void pgwarp_vec_scan_init(void);	/* vec_scan_plan.c */
extern void pgwarp_vec_scan_exec_init(void);	/* vec_scan_exec.c */

#endif							/* PGWARP_VEC_SCAN_H */
