/*
 * warp_exec_internal.h — what the files of the WarpPreAgg / WarpJoin /
 * WarpScan CustomScan share (src/pg/exec/warp_exec*.c): the node's
 * execution state (WarpScanState) with its dimensions (WarpDim), the
 * parallel query's shared counters (WarpShared), the node's output columns
 * (OutCol), and the functions one of those files offers the others.
 *
 * Not for use outside the node: the planner hands its plan over in
 * custom_private (read by warp_scan_state_from_plan, warp_exec.c), the rest
 * of the extension reaches the node through warp.h.
 */
#ifndef WARP_EXEC_INTERNAL_H
#define WARP_EXEC_INTERNAL_H

#include "access/relscan.h"
#include "executor/nodeCustom.h"
#include "lib/stringinfo.h"
#include "port/atomics.h"

#include "fdw/arrow_scan.h"
#include "gpud_client.h"
#include "pg_warp.h"
#include "warp.h"
#include "warp_plan_info.h"
#include "warp_cpu.h"
#include "warp_cpu_pool.h"
#include "warp_group_merge.h"
#include "exec/warp_topn.h"

/* shared between this layer's files only: not exported from the module */
#pragma GCC visibility push(hidden)

/* One dimension: its plan, key column, group columns and built table. */
typedef struct WarpDim
{
	PlanState  *ps;
	Expr	   *fact_key;		/* a Var, or two int keys packed into one */
	Var		   *dim_key;
	int			kind;			/* WarpJoinKind */
	int			key_resno;
	int			key2_resno;		/* a second key column (packed with the
								 * first, see warp_plan.c pack_keys), or 0 */
	List	   *key_display;	/* NIL, or List(fact Vars, dim Vars) */
	int			npay;
	int		   *pay_resno;
	int16	   *pay_len;
	bool	   *pay_byval;
	/* distinct payload tuples */
	int			npayloads;
	int			pcap;
	Datum	   *pvalues;		/* npayloads * npay */
	bool	   *pnulls;
	uint32	   *phash;
	int32	   *pslots;			/* open addressing over payload ids */
	uint32		pmask;
	int64		rows;
	int64	   *keys;			/* per build row: key, payload id */
	int32	   *pids;
	WarpJoinTable *table;		/* built for the CPU driver */
	bool		table_ready;	/* table built before the program (by the
								 * leader for its workers) or attached to
								 * the leader's in the DSM */
	char	   *cache_key;		/* warp_dimcache key, or NULL */
	uint64		cache_gen;		/* its heap table's change counter, or 0 */
	bool		from_cache;		/* built by an earlier query */
	bool		read_by_engine; /* rows from warp_dim_arrow.c */
	/*
	 * A text key (text_key): keys[] are numbers of the distinct key strings
	 * kstr[0 .. nkstr); the program maps them to the fact column's string
	 * indexes, and probe_keys[] are the keys the join table is built from
	 */
	bool		text_key;
	int			nkstr;
	char	  **kstr;
	int		   *kstr_len;
	int64	   *probe_keys;
} WarpDim;

/* Shared state of a parallel WarpPreAgg (DSM). */
typedef struct WarpShared
{
	ArrowSharedScan scan;		/* batch claiming and scan counters */
	Size		heap_pscan_off;	/* heap fact table: its ParallelTableScanDesc,
								 * this many bytes from the start, or 0 */
	/* the engine's counters, summed over the participants */
	pg_atomic_uint64 rows_in;
	pg_atomic_uint64 rows_filtered;
	pg_atomic_uint64 rows_joined;
	pg_atomic_uint64 groups;
	/* the leader's dimensions (WarpSharedDim each, then their arrays),
	 * when dims_shared; otherwise every participant builds its own */
	bool		dims_shared;
	int			ndims;
} WarpShared;

typedef struct WarpScanState
{
	CustomScanState css;

	/* from the plan */
	Index		fact_relid;		/* the planner's range table index */
	int			rtoffset;		/* added by setrefs since */
	Oid			fact_oid;
	List	   *quals;
	List	   *fact_attrs;
	int			nkeys;			/* group keys */
	WarpPlanKey *keys;
	int			naggs;			/* aggregates (the plan's; the program may
								 * add hidden ones) */
	WarpPlanAgg *aggs;
	int		   *agg_scale_agg;	/* per aggregate: its hidden scale aggregate, or -1 */
	int		   *agg_square_agg; /* per aggregate: var of int, its hidden
								 * sum of squares, or -1 */
	List	   *outmap;

	Relation	fact_rel;
	bool		heap;			/* a heap fact table (warp_exec_run_cpu_heap), not Arrow */
	ParallelTableScanDesc heap_pscan;	/* parallel: the shared heap scan */
	void	   *heap_rows;		/* row mode: the heap scan and its batch
								 * (warp_exec_heap.c), or NULL */
	Size		heap_pscan_off;	/* leader: its offset in the DSM */
	ArrowScanState scan;
	int			ndims;
	WarpDim    *dims;

	MemoryContext engine_cxt;
	WarpAlloc	alloc;
	WarpProgram prog;
	AttrNumber *col_attno;
	ArrowArray *batch_cols;
	WarpCpu    *cpu;
	int			nthreads;		/* CPU driver threads (1: this process only) */
	WarpCpuPool *pool;			/* when it ran on threads: their drivers */
	int64	   *pool_start;		/* per driver: its first group's number */
	int			emit_cpu;		/* driver of the group emitted last */
	bool		on_daemon;		/* planned for pg_warp_gpud */
	bool		daemon_gpu;		/* ... which drove a GPU at plan time */
	const char *device_choice;	/* why the GPU or the CPU (plan time), or NULL */
	GpudResult *gres;			/* the daemon's groups, when it ran */
	GpudClientTimes handoff;	/* where the backend's wait for it went */
	WarpGroupMerge *merged;		/* the threads' or lanes' groups merged */
	int64		unmerged_groups;	/* ... from this many partial groups */
	const char *merge_skipped;	/* why they were not, or NULL */
	int			distinct_key;	/* count(DISTINCT x) counted here: x's key */
	int			distinct_agg;	/* ... and count(x)'s aggregate, or -1 */
	char		ran_on[96];		/* EXPLAIN ANALYZE: where it ran */
	char		fallback[256];	/* why not where planned, or "" */
	int			tcache;			/* heap fact table: 0 not tried, 1 its GPU
								 * table cache answered, 2 it did not */
	bool		tcache_loaded;	/* ... loaded by this query */
	char		tcache_why[256];	/* 2: why */
	int			dims_cached;	/* dimensions taken from the cache */
	int			dims_read_by_engine;	/* built from warp_dim_arrow.c */
	StringInfoData dims_not_cached; /* "name (why), ..." for EXPLAIN */
	bool		dims_ready;		/* built (or received) for this execution */
	Size		dims_shared_bytes;	/* leader: the dimensions' DSM bytes, 0 =
									 * workers build their own */
	bool		dims_from_leader;	/* worker: dimensions read from the DSM */
	bool		executed;
	/* constant quals (custom_private item 4): PostgreSQL's gating Result */
	List	   *gate_quals;
	ExprState  *gate;
	bool		gate_checked;
	bool		gate_closed;	/* not true: the node returns nothing */
	int64		next_group;

	/* row mode (WarpJoin: a join without aggregation), streaming by batch */
	bool		emit_rows;
	bool		rows_done;		/* no batch left */
	WarpStatus	rows_status;	/* the batch's error, raised once its rows
								 * before the failing one are returned */
	WarpLoadStatus rows_load;
	int			rows_bad_col;
	int64		rows_bad_row;
	int			rows_bad_file;
	int64		rows_out;
	struct OutCol *out_cols;	/* per output column (out_columns) */
	/* ... on pg_warp_gpud: the stream of chunks (each ws->gres in turn) */
	GpudRowStream *dstream;
	int64		rows_skipped;	/* batches batch skipping left out */
	bool		daemon_done;	/* its last chunk and result came */
	/* ... on threads: rounds of units, each pool freed with round_cxt */
	WarpJoinTable **row_tables;
	WarpPoolBatch *row_units;
	int			row_nunits;
	int			row_next_unit;
	MemoryContext round_cxt;
	WarpCpuPool *row_failed_pool;	/* this round's rows end in its error */
	/* ... ORDER BY ... LIMIT kept in the node (custom_private item 11) */
	WarpTopN   *topn;
	WarpTopNKey *topn_keys;
	int			topn_nkeys;
	int64		topn_bound;
	bool		topn_done;
	TupleTableSlot *topn_slot;	/* a candidate row, built */
	int64		topn_built;		/* rows built as tuples for it (EXPLAIN) */

	/* EXPLAIN ANALYZE */
	WarpCpuCounters counters;
	int64		groups;
	WarpShared *wshared;		/* parallel: where participants add theirs */
	bool		have_totals;	/* parallel: all participants' sums below */
	WarpCpuCounters total_counters;
	int64		total_groups;
	double		build_ms;
	double		scan_ms;
	double		merge_ms;
} WarpScanState;

/*
 * Work units per record batch for the CPU driver: a 1M-row batch becomes
 * parts of 128K rows (512 kB per int32 column), small enough to share
 * among parallel participants that start at different times and to stay in
 * cache between the read and the engine's passes.
 */
#define WARP_SCAN_PARTS 8

/*
 * What each output column of the node is, worked out once per execution
 * (at the end of warp_exec_build_program: text keys are known by their program
 * columns) rather than per value: a join returns millions of rows.
 */
typedef enum OutColKind
{
	OC_AGG,						/* a partial aggregate's state */
	OC_DIM,						/* a dimension column: payload value */
	OC_TEXT,					/* a fact text key: interned string */
	OC_NUMERIC,					/* a numeric column or extract(): unscaled */
	OC_STRINGS,					/* a text CASE of constants: which string */
	OC_VALUE					/* any other fact key: engine value */
} OutColKind;

typedef struct OutCol
{
	OutColKind	kind;
	int			key;			/* the program's key; OC_AGG: aggregate */
	WarpDim    *dim;			/* OC_DIM: its dimension ... */
	int			col;			/* ... and payload column; OC_TEXT: program
								 * column */
	int			scale;			/* OC_NUMERIC; OC_TEXT: the typmod */
	Oid			type;			/* OC_VALUE, OC_TEXT */
	Datum	   *strings;		/* OC_STRINGS: text values by index */
	int			nstrings;
} OutCol;

/* warp_exec_dims.c */
/* the planner computed the output position: it must exist */
extern void warp_exec_check_resno(Plan *plan, int resno);
/* Build every dimension (or take it from the cache), once per execution. */
extern void warp_exec_build_dims(WarpScanState *ws);
/* the dimensions' key ranges into the fact scan's batch skipping */
extern void warp_exec_set_join_ranges(WarpScanState *ws);

/* warp_exec_program.c: ws->prog and ws->out_cols, after the dimensions */
extern void warp_exec_build_program(WarpScanState *ws);

/* warp_exec_run.c */
extern void warp_exec_report_status(WarpStatus st);
/* The dimensions' join tables for the CPU driver (in engine_cxt). */
extern WarpJoinTable **warp_exec_build_join_tables(WarpScanState *ws);
/* dimensions, program, then the program run over every batch */
extern void warp_exec_run_engine(WarpScanState *ws);
/* row mode: before any batch; the next batch (round); its kept error */
extern void warp_exec_rows_start(WarpScanState *ws);
extern bool warp_exec_rows_next_batch(WarpScanState *ws);
extern void warp_exec_rows_raise_pending(WarpScanState *ws);

/* a column the engine could not load: PostgreSQL's error for it */
extern void warp_exec_report_load_error(WarpScanState *ws, WarpLoadStatus ls, int bad_col,
										int64 bad_row, const char *path);

/* warp_exec_daemon.c: the dimensions for pg_warp_gpud; its result taken
 * (errors raised); the job run there (false: ws->fallback says why not) */
extern GpudClientTable *warp_exec_daemon_tables(WarpScanState *ws);
extern void warp_exec_take_daemon_result(WarpScanState *ws, GpudResult *res);
extern bool warp_exec_run_on_daemon(WarpScanState *ws);
/* row mode there: start (false: the CPU driver instead), the next chunk
 * (1), the end (0, errors raised), or -1: run it on the CPU driver */
extern bool warp_exec_rows_daemon_start(WarpScanState *ws);
extern int	warp_exec_rows_daemon_next(WarpScanState *ws);

/* warp_exec_tcache.c: a heap fact table's GPU table cache in the daemon;
 * false (ws->tcache_why) when it cannot answer */
extern bool warp_exec_run_tcache(WarpScanState *ws);
/* a plan over an attached table made without the cache: why, for EXPLAIN */
extern void warp_exec_tcache_not_planned(WarpScanState *ws);

/* warp_exec_heap.c: the CPU driver over a heap fact table */
extern void warp_exec_run_cpu_heap(WarpScanState *ws);
extern bool warp_exec_heap_rows_next(WarpScanState *ws);
extern void warp_exec_heap_raise_pending(WarpScanState *ws);
extern void warp_exec_heap_rows_end(WarpScanState *ws);

/* warp_exec_groups.c */
extern void warp_exec_merge_groups(WarpScanState *ws);
/* output column i of group (row) g; cpu, lg: warp_exec_group_driver's */
extern Datum warp_exec_group_datum(WarpScanState *ws, WarpCpu *cpu, int64 lg, int64 g, int i,
								   bool *isnull);
extern WarpCpu *warp_exec_group_driver(WarpScanState *ws, int64 *lg);

/* warp_exec_emit.c */
extern bool warp_exec_gate_open(WarpScanState *ws);
extern TupleTableSlot *warp_next(ScanState *node);

/* warp_exec_explain.c */
extern void warp_explain(CustomScanState *node, List *ancestors, ExplainState *es);

/* warp_exec_parallel.c: the DSM callbacks */
extern Size warp_estimate_dsm(CustomScanState *node, ParallelContext *pcxt);
extern void warp_init_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate);
extern void warp_reinit_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate);
extern void warp_init_worker(CustomScanState *node, shm_toc *toc, void *coordinate);
extern void warp_shutdown(CustomScanState *node);

#pragma GCC visibility pop

#endif							/* WARP_EXEC_INTERNAL_H */
