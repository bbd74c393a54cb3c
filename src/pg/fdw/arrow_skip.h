/*
 * arrow_skip.h — skipping record batches with min/max statistics.
 */
#ifndef ARROW_SKIP_H
#define ARROW_SKIP_H

#include "postgres.h"

#include "access/tupdesc.h"
#include "nodes/execnodes.h"

#include "arrow.h"

typedef struct ArrowSkipQuals ArrowSkipQuals;
typedef struct ArrowSkipStats ArrowSkipStats;

/* Quals "column OP constant-or-parameter" usable for skipping; NULL if none. */
extern ArrowSkipQuals *arrow_skip_quals_build(List *quals, Index scanrelid,
											  TupleDesc tupdesc, PlanState *ps);
/* How many of the quals (a leading run of them) sq decides: the rest are
 * the executor's alone. */
extern int	arrow_skip_quals_count(const ArrowSkipQuals *sq);
/* Parameters may change on rescan. */
extern void arrow_skip_quals_rescan(ArrowSkipQuals *sq);
/* e.g. "lo_quantity < 25, lo_orderdate >= $1" */
extern const char *arrow_skip_quals_describe(ArrowSkipQuals *sq, TupleDesc tupdesc);
/* Whether sq holds every one of quals (so none of them can raise an error). */
extern bool arrow_skip_quals_all(const ArrowSkipQuals *sq, List *quals);

/*
 * Join ranges: "column BETWEEN lo AND hi" over an integer, date (DateADT)
 * or timestamp (microseconds) column of type typid, known at run time (the
 * keys an inner join's dimension holds, warp_exec.c), after the quals;
 * *sqp is created if NULL; false for another type.  The files' statistics
 * must be loaded again after adding (arrow_scan_reload_stats).  Not
 * counted by arrow_skip_quals_count.
 */
extern void arrow_skip_join_ranges_clear(ArrowSkipQuals *sq);
extern bool arrow_skip_join_range_add(ArrowSkipQuals **sqp, int attno, Oid typid,
									  int64 lo, int64 hi);
extern const char *arrow_skip_join_ranges_describe(ArrowSkipQuals *sq, TupleDesc tupdesc);

/* A file's statistics for the columns the quals use, in PostgreSQL's value
 * domain; NULL if the file has none usable.  field_of_attr maps attno-1 to
 * field index. */
extern ArrowSkipStats *arrow_skip_stats_load(ArrowFile *file, ArrowSkipQuals *sq,
											 const int *field_of_attr);

/* Field f's per-batch min/max for a column of type typid, as doubles in
 * PostgreSQL's value domain (the planner's statistics, arrow_fdw_stats.c). */
extern bool arrow_skip_stats_as_double(ArrowFile *file, int f, Oid typid, ArrowArena *arena,
									   double *lo, double *hi, bool *present);

/* True if no row of the batch can satisfy all the quals. */
extern bool arrow_skip_batch(ArrowSkipQuals *sq, ArrowSkipStats *st, int batch,
							 ExprContext *econtext);

/* True if the batch's null counts rule out an IS [NOT] NULL clause. */
extern bool arrow_skip_batch_nulls(ArrowSkipQuals *sq, const ArrowFile *file,
								   const ArrowBatchMeta *meta, const int *field_of_attr);

/* its IS [NOT] NULL clauses (palloc'd arrays): attribute numbers - 1, kinds */
extern int	arrow_skip_null_quals(const ArrowSkipQuals *sq, int **attnos, bool **is_null);

/* Rows of a loaded batch that can pass the clauses (keep[] per row). */
extern int64 arrow_skip_filter_rows(ArrowSkipQuals *sq, const int *field_of_attr,
									const ArrowArray *cols, int64 nrows, bool *keep,
									ExprContext *econtext);

#endif							/* ARROW_SKIP_H */
