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

/*
 * Row by row instead, reading only the columns wanted: advance to the next
 * row that passes (false at the end), then read output column k of it as
 * a Datum (valid until the next row), as an integer where it is a plain
 * integer column its SQL type holds as it is, or as raw bytes (an
 * integer's value as 8 bytes, text as its UTF-8 bytes; _text: only a text
 * column's): identical bytes convert to identical Datums, so the bytes can
 * stand for the Datum in a lookup.  The last three return false where the
 * column (in this batch's file) does not read that way.
 */
extern bool warp_dim_arrow_next_row(WarpDimArrow *r);
extern Datum warp_dim_arrow_datum(WarpDimArrow *r, int k, bool *isnull);
extern bool warp_dim_arrow_int(WarpDimArrow *r, int k, int64 *v, bool *isnull);
extern bool warp_dim_arrow_raw(WarpDimArrow *r, int k, const uint8 **p, int64 *len,
							   int64 *ibuf, bool *isnull);
extern bool warp_dim_arrow_text(WarpDimArrow *r, int k, const uint8 **p, int64 *len,
								bool *isnull);

/* rows returned; the scan is left finished (a rescan restarts it) */
extern int64 warp_dim_arrow_end(WarpDimArrow *r);

#endif							/* WARP_DIM_ARROW_H */
