/*
 * warp.h — the engine inside PostgreSQL: planner paths, program building
 * and the CustomScan that runs programs (src/pg/plan, src/pg/exec,
 * src/pg/compile).
 */
#ifndef WARP_H
#define WARP_H

#include "postgres.h"

#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "nodes/extensible.h"
#include "nodes/pathnodes.h"
#include "optimizer/cost.h"

#include "warp_program.h"

/* GUCs (guc.c) */
extern bool pgwarp_enable_preagg;
extern bool pgwarp_enable_join;
extern bool pgwarp_enable_scan;
extern int	pgwarp_heap_min_rows;
extern bool pgwarp_heap_row_joins;
extern int	pgwarp_inner_hash_mem;	/* kB */
extern int	pgwarp_dim_cache_mem;	/* kB, per backend */
extern int	pgwarp_dim_cache_total_mem; /* kB, all backends (preloaded) */
extern int	pgwarp_cpu_threads;		/* -1 = max_parallel_workers_per_gather + 1 */

/* threads the CPU driver runs on in a backend (pg_warp.cpu_threads) */
static inline int
pgwarp_cpu_thread_count(void)
{
	int			n = pgwarp_cpu_threads > 0 ? pgwarp_cpu_threads :
		max_parallel_workers_per_gather + 1;

	return n < 1 ? 1 : (n > 64 ? 64 : n);
}
/*
 * Polled by the calling thread of the engine's threads between units of
 * work (warp_cpu_pool.h, warp_threads.h): true only for what makes
 * ProcessInterrupts raise an error (a cancel, a statement timeout, a
 * terminate, a lost client).  InterruptPending alone is not enough: it is
 * also set for work that does not end the query (messages from parallel
 * workers, catch-up and notify signals), which CHECK_FOR_INTERRUPTS
 * handles after the threads.
 */
static inline bool
pgwarp_threads_interrupted(void *arg)
{
	if (InterruptHoldoffCount != 0 || CritSectionCount != 0)
		return false;
	return ProcDiePending || ClientConnectionLost ||
		(QueryCancelPending && QueryCancelHoldoffCount == 0);
}

extern bool pgwarp_explain_stable;
extern bool pgwarp_merge_groups;

/* warp_plan.c */
extern void pgwarp_planner_init(void);

/* warp_merge_scan.c: DISTINCT aggregates beside plain ones */
extern Oid	warp_merge_aggregate(void);
extern void warp_add_merge_path(PlannerInfo *root, RelOptInfo *output_rel, Path *in,
								Node *having, List *plain, List *partial, Oid merge_fn,
								double ngroups);
extern void pgwarp_merge_init(void);

/* warp_exec.c */
extern CustomScanMethods warp_preagg_scan_methods;
extern CustomScanMethods warp_join_scan_methods;	/* row mode: WarpJoin */
extern CustomScanMethods warp_scan_scan_methods;	/* row mode, one table: WarpScan */
extern void pgwarp_exec_init(void);

/* arrow_fdw.c: planner facts about an arrow_fdw base relation */
extern bool arrow_fdw_is_arrow_rel(RelOptInfo *rel);
extern void arrow_fdw_rel_estimates(RelOptInfo *rel, double *rows, double *batches,
									double *column_bytes);

/*
 * warp_compile.c: PostgreSQL expressions of one relation -> program nodes.
 *
 * In check mode (econtext NULL) only decides whether an expression can be
 * offloaded, and why not; in build mode it emits nodes, evaluating
 * parameters through econtext.
 */
typedef struct WarpBuilder
{
	Index		relid;			/* Vars must belong to this relation */
	ExprContext *econtext;		/* NULL: check only */
	const char *why_not;		/* set when an expression is refused */
	/* folding stable expressions (see warp_compile_qual) */
	int			depth;			/* of the expression being compiled */
	bool		qual_root;		/* compiling a qual: its root is depth 1 */
	bool		fold_operands;	/* depth-2 operands of a qual's operator */
	bool		native_columns;	/* a heap fact table: every column native */
	bool		numeric_root;	/* compiling a group key: extract() may be
								 * its root (warp_compile_group_key) */
	List	   *text_consts;	/* WarpTextConst: strings of text columns */
	int64	   *setvals;		/* WN_IN_SET members (WarpProgram.setvals) */
	int			nsetvals;
	int			setvals_cap;
	Bitmapset  *join_key_cols;	/* columns of text join keys */
	bool		uses_tz;		/* a node reads the session's TimeZone */
	/* numeric CASE/COALESCE whose values' display scales differ: their
	 * nodes (the value at the largest scale; the row's own display scale is
	 * warp_compile_scale_of's), and the rescaling products inside them */
	Bitmapset  *dyn_scale;
	Bitmapset  *rescaled;
	/* the program being built */
	WarpNode   *nodes;
	int			nnodes;
	int			nodes_cap;
	int32	   *args;
	int			nargs;
	int			args_cap;
	/* columns: attno of program column c, and its type */
	AttrNumber *col_attno;
	WarpColumnSpec *cols;
	int			ncols;
	int			cols_cap;
} WarpBuilder;

extern void warp_builder_init(WarpBuilder *b, Index relid, ExprContext *econtext);
/* node index, or -1 with b->why_not set */
extern int	warp_compile_expr(WarpBuilder *b, Expr *expr);
/* the same for a qual (a WHERE condition), whose operator's operands may
 * be stable expressions folded at executor start */
extern int	warp_compile_qual(WarpBuilder *b, Expr *expr);

/*
 * A planner-level aggregate kind beside WarpAggKind (WarpPlanAgg.kind):
 * var_samp, var_pop, stddev(_samp, _pop) and variance of int2/int4.  The program
 * gets WA_SUM_INT8 of x and a hidden WA_SUM_INT8 of x::int8 * x::int8
 * (exact: |x| < 2^31); the node emits the two as numeric_poly_serialize's
 * state (N, sumX, sumX2), which int2/int4_accum keeps in 128 bits too.
 */
#define WARP_AGG_VAR_INT 100

/* an expression over no column that the backend evaluates once per scan */
extern bool warp_compile_scan_constant(Expr *expr);
/* the program's string table (text columns' constants) and, when a node
 * needs it, the session's time zone, into p */
extern void warp_builder_finish(WarpBuilder *b, WarpProgram *p);
/* warp_tz.c: the session's TimeZone as the engine's table, or NULL with
 * *why; warp_program_set_tz copies it into p (ERROR if unusable) */
extern const WarpTz *warp_session_tz(const char **why);
/* date/time functions and conversions the engine computes (CPU driver) */
extern bool warp_is_extract_func(Oid funcid);
extern bool warp_is_datetime_func(Oid funcid);
extern bool warp_is_datetime_cast(Oid funcid);
extern void warp_program_set_tz(WarpProgram *p);
/* a group key expression: as warp_compile_expr, but extract() (numeric)
 * may be its root; warp_group_key_numeric_scale gives that numeric's scale */
extern int	warp_compile_group_key(WarpBuilder *b, Expr *expr);
extern int	warp_group_key_numeric_scale(Expr *expr);
extern int	warp_group_key_text_column(const WarpProgram *p, int node);
/* a numeric(p <= 18, s) column as an aggregate argument (unscaled int8) */
extern int	warp_compile_numeric_arg(WarpBuilder *b, Expr *expr, int *scale);
/* text, varchar or character(n): the string types the engine reads as text */
extern bool warp_is_text_type(Oid type);
extern int	warp_compile_text_join_key(WarpBuilder *b, Expr *expr, int n,
									   const char *const *strs, const int *lens, int *map);
extern int	warp_compile_decimal_arg(WarpBuilder *b, Expr *expr, int *scale);
/* sum/avg/min/max/count's numeric argument: one of the two above */
extern int	warp_compile_numeric_agg_arg(WarpBuilder *b, Expr *expr, int *scale);
/* whether numeric node n's display scale varies by row (a CASE/COALESCE of
 * values of different scales), and an int4 node giving it per row */
extern bool warp_node_dynamic_scale(WarpBuilder *b, int n);
extern int	warp_compile_scale_of(WarpBuilder *b, int n);
/* engine type of a PostgreSQL type; false if the engine has none */
extern bool warp_type_of(Oid typid, WarpType *t);
/* value of a Datum of an engine type: *ival or *fval as the type is */
extern void warp_datum_value(Datum d, Oid typid, int64 *ival, double *fval);

#endif							/* WARP_H */
