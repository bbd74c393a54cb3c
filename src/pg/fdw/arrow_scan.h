/*
 * arrow_scan.h — reading an arrow_fdw table's record batches.
 *
 * One scan walks the batches of all the table's files in order (or, under
 * a parallel plan, claims them from a shared counter), skips batches whose
 * statistics contradict the quals, re-checks every file with fstat before
 * each batch, and loads the referenced columns.  arrow_fdw turns the
 * columns into tuples; pg_warp's engine runs programs over them.
 */
#ifndef ARROW_SCAN_H
#define ARROW_SCAN_H

#include "postgres.h"

#include <sys/stat.h>

#include "commands/explain.h"
#include "nodes/execnodes.h"
#include "port/atomics.h"
#include "utils/relcache.h"

#include "arrow.h"
#include "fdw/arrow_fdw.h"
#include "fdw/arrow_skip.h"

/*
 * A row prefilter the scan runs over each loaded batch after the raw-value
 * row filter (arrow_skip.c), given by the scan's owner: arrow_fdw.c sets
 * pg_warp's engine here (warp_scan_filter.c).  filter_batch turns keep[i]
 * (kept of them true) false for rows it finds failing the quals and returns
 * the rows still kept; cols_of_attr: the batch's columns by attribute
 * number - 1.  explain adds its lines to the scan's EXPLAIN.
 */
typedef struct ArrowRowPrefilter
{
	int64		(*filter_batch) (void *state, const ArrowArray *cols_of_attr, int64 nrows,
								 bool *keep, int64 kept);
	void		(*explain) (void *state, PlanState *ps, ExplainState *es);
	void	   *state;
} ArrowRowPrefilter;

/* One open file of a scan. */
typedef struct ScanFile
{
	char	   *path;
	int			fd;
	bool		opened;
	bool		empty;			/* writable file with nothing committed */
	int64		limit;			/* committed length, or -1 */
	ArrowFile	file;
	struct stat st;				/* identity at open; re-checked per batch */
	ArrowSkipStats *stats;		/* per-column statistics for skipping */
	int		   *field_of_attr;	/* attno-1 -> field index, -1 if unused */
	ArrowDatumConv **conv;		/* per attno-1 */
	/* counting source wrapper */
	int			(*inner_read) (void *ctx, void *dst, size_t len, uint64_t off);
	void	   *inner_ctx;
	pg_atomic_uint64 *bytes_counter;
	int64		bytes_local;
} ScanFile;

/* Shared state of a parallel scan (DSM). */
typedef struct ArrowSharedScan
{
	pg_atomic_uint64 next_batch;	/* global index over all files' batches */
	pg_atomic_uint64 batches_read;
	pg_atomic_uint64 batches_skipped;
	pg_atomic_uint64 bytes_read;
	pg_atomic_uint64 rows_filtered;	/* rejected from raw values */
} ArrowSharedScan;

typedef struct ArrowScanState
{
	bool		writable;
	List	   *paths;
	int			nfiles;
	ScanFile   *files;
	int64	   *batch_start;	/* nfiles+1 prefix sums of batch counts, or
								 * NULL until all files are opened */
	Bitmapset  *attrs;			/* referenced attnos (offset by
								 * FirstLowInvalidHeapAttributeNumber) */
	int			natts;
	ArrowSkipQuals *skip;		/* quals usable for batch skipping */

	/* iteration */
	ArrowSharedScan local_shared;	/* when not parallel */
	ArrowSharedScan *shared;
	MemoryContext batch_cxt;
	MemoryContext row_cxt;
	ArrowArena	arena;
	bool		arena_live;		/* arena holds the current batch */
	/* buffers recycled from batch to batch (see recycle_alloc) */
	MemoryContext buf_cxt;
	ArrowAllocator buf_alloc;	/* blocks from buf_cxt */
	ArrowRecycler recycler;
	int			cur_file;
	int			cur_batch;		/* record batch of cur_file */
	int64		cur_first_row;	/* batch row of the loaded rows' row 0 */
	int64		cur_rows;
	int64		cur_row;
	ArrowArray *cur_cols;		/* per attno-1, valid if attr referenced */
	bool	   *cur_keep;		/* per row: may pass the clauses */
	ArrowRowPrefilter prefilter;	/* arrow_fdw's scans: pg_warp's engine
									 * as a row prefilter; filter_batch NULL
									 * when none */

	/*
	 * Work units per batch: 1 = whole batches; more splits each batch whose
	 * columns can be loaded by row range into that many parts (morsels), so
	 * parallel participants share big batches and the columns of a part
	 * stay in cache while the engine runs over them.
	 */
	int			parts_per_batch;
	/*
	 * Per attno-1, or NULL: attributes the scan's owner reads itself from
	 * each loaded batch (bound, counted in EXPLAIN and row-converted as
	 * usual, but not loaded into cur_cols: WarpVecScan streams its vector
	 * column in row chunks).
	 */
	bool	   *owner_loads;
	bool		done;
} ArrowScanState;


/* Set up a scan of rel's files reading the attributes in attrs (offset by
 * FirstLowInvalidHeapAttributeNumber); quals (of scanrelid) drive
 * skipping.  Files are opened unless explain_only. */
extern void arrow_scan_begin(ArrowScanState *ss, Relation rel, Bitmapset *attrs,
							 List *quals, Index scanrelid, PlanState *ps,
							 bool explain_only);
/* The batches statistics do not rule out, in order (arrow_scan.c). */
extern int	arrow_scan_list_batches(ArrowScanState *ss, ExprContext *econtext,
									int **files_out, int **batches_out);

/* Claim the next batch (or part of one, see parts_per_batch) that is not
 * skipped and load it; false at the end.  With row_filter, cur_keep[]
 * marks the rows that can pass the quals. */
extern bool arrow_scan_next_batch(ArrowScanState *ss, ExprContext *econtext,
								  bool row_filter);
/* Attribute a (attno - 1) of row i of the loaded batch of file sf (the
 * current one), converted in CurrentMemoryContext; NULL where not read. */
static inline Datum
arrow_scan_value(ArrowScanState *ss, ScanFile *sf, int a, int64 i, bool *isnull)
{
	if (sf->field_of_attr[a] < 0)
	{
		*isnull = true;
		return (Datum) 0;
	}
	return arrow_datum_get(sf->conv[a], &ss->cur_cols[a], i, isnull);
}
/* row i of the loaded batch: every attribute, as arrow_scan_value gives it
 * (NULL for those in owner_loads) */
extern void arrow_scan_row_values(ArrowScanState *ss, int64 i, Datum *values, bool *isnull);
extern void arrow_scan_rescan(ArrowScanState *ss);
/* arrow_fdw.c: the scan state of ps if it is an arrow_fdw scan, else NULL */
extern ArrowScanState *arrow_fdw_scan_state(PlanState *ps);
extern void arrow_scan_end(ArrowScanState *ss);
extern void arrow_scan_explain(ArrowScanState *ss, TupleDesc td, ExplainState *es);

/* pieces ANALYZE uses */
extern void arrow_scan_open_file(ArrowScanState *ss, int i);
extern void arrow_scan_counting_reads(ArrowScanState *ss, bool on);
extern void arrow_scan_check_file(ScanFile *sf);
extern void arrow_scan_bind_columns(ArrowScanState *ss, ScanFile *sf, TupleDesc tupdesc);
extern void arrow_scan_reload_stats(ArrowScanState *ss);
extern void arrow_scan_use_shared(ArrowScanState *ss, ArrowSharedScan *sh);

#endif							/* ARROW_SCAN_H */
