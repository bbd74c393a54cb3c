/*
 * warp_dim_arrow.h — a dimension's rows read by the engine straight from
 * its Arrow batches (see warp_dim_arrow.c).
 */
#ifndef WARP_DIM_ARROW_H
#define WARP_DIM_ARROW_H

#include "nodes/execnodes.h"

typedef struct WarpDimArrow WarpDimArrow;

/*
 * A reader of ps's output rows, or NULL when ps is not an arrow_fdw scan
 * whose rows the engine can produce exactly (then run ps itself).
 */
extern WarpDimArrow *warp_dim_arrow_begin(PlanState *ps);

/*
 * The next row's output columns (ps's target list, in order) in values /
 * isnull; false at the end.  The values stay valid until the next call.
 */
extern bool warp_dim_arrow_next(WarpDimArrow *r, Datum *values, bool *isnull);

/* rows returned; the scan is left finished (a rescan restarts it) */
extern int64 warp_dim_arrow_end(WarpDimArrow *r);

#endif							/* WARP_DIM_ARROW_H */
