/*
 * warp_scan_filter.h — the engine as a row prefilter of arrow_fdw's scans
 * (see warp_scan_filter.c).
 */
#ifndef WARP_SCAN_FILTER_H
#define WARP_SCAN_FILTER_H

#include "commands/explain.h"
#include "nodes/execnodes.h"

#include "arrow.h"

typedef struct WarpScanFilter WarpScanFilter;

/* NULL when pg_warp is off or the engine computes none of the quals */
extern WarpScanFilter *warp_scan_filter_create(List *quals, Index relid, ExprContext *econtext);

/*
 * keep[i] (kept of them true) turns false for rows the engine finds
 * failing the quals; returns the rows still kept.  cols_of_attr: the
 * batch's columns by attribute number - 1.
 */
extern int64 warp_scan_filter_batch(WarpScanFilter *f, const ArrowArray *cols_of_attr,
									int64 nrows, bool *keep, int64 kept);

/*
 * The same, but false (keep[] untouched) where the engine gave the batch up
 * (an error, a value it cannot read, a column the file lacks): then
 * PostgreSQL's quals must decide its rows.
 */
extern bool warp_scan_filter_decide(WarpScanFilter *f, const ArrowArray *cols_of_attr,
									int64 nrows, bool *keep, int64 kept, int64 *kept_out);

/*
 * Filter big batches on nthreads threads (one driver each, over a range of
 * the batch's rows); the default is the calling thread alone.
 */
extern void warp_scan_filter_set_threads(WarpScanFilter *f, int nthreads);

/* how many of the quals given to create (a leading run) it computes */
extern int	warp_scan_filter_nquals(const WarpScanFilter *f);
extern void warp_scan_filter_free(WarpScanFilter *f);

extern void warp_scan_filter_explain(WarpScanFilter *f, PlanState *ps, ExplainState *es);

#endif							/* WARP_SCAN_FILTER_H */
