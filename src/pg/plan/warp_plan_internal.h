/*
 * warp_plan_internal.h — declarations shared by the planner's source files
 * (the files of src/pg/plan): what a star query is (StarInfo), what its
 * engine scan costs (StarCost), the cost constants, and the helpers one
 * file calls in another.  Not used outside src/pg/plan.
 *
 *   warp_plan.c        the hooks, WarpPreAgg's paths, the plan node
 *   warp_plan_star.c   finding the star: fact table, dimensions, join keys,
 *                      fact quals
 *   warp_plan_admit.c  which expressions the engine (and its GPU driver)
 *                      takes, and which could raise errors
 *   warp_plan_agg.c    the aggregate split: group keys and partial states
 *   warp_plan_rows.c   row-returning paths (WarpJoin, WarpScan) and Top-N
 *   warp_plan_cost.c   the dimension plans and the cost of a star's scan
 *   warp_merge_scan.c  WarpMerge (DISTINCT aggregates beside plain ones,
 *                      GROUPING SETS)
 *   warp_decorrelate.c correlated aggregate subqueries rewritten into
 *                      grouped joins (planner hook)
 *   warp_notin.c       NOT IN (subquery) rewritten into NOT EXISTS (an anti
 *                      join), NULLs kept apart
 */
#ifndef PGWARP_PLAN_INTERNAL_H
#define PGWARP_PLAN_INTERNAL_H

#include "nodes/extensible.h"
#include "nodes/pathnodes.h"

#include "gpud_client.h"
#include "warp_plan_info.h"

/* cost constants, in seq_page_cost units (see docs/ARCHITECTURE.md) */
#define WARP_STARTUP_COST	100.0	/* per query: setup, program build */
#define WARP_ROW_COST		0.0006	/* per fact row: load, vector loop */
#define WARP_COLUMN_COST	0.0002	/* per fact row and column read */
#define WARP_PROBE_COST		0.0004	/* per fact row and join probe */
#define WARP_BUILD_COST		0.002	/* per dimension row: hash insert */
/* heap fact tables (see run_cpu_heap): the table AM's tuple fetch and the
 * deforming of each column read, on top of the engine's per-row costs */
#define WARP_HEAP_TUPLE_COST	0.004
#define WARP_HEAP_COLUMN_COST	0.001
#define WARP_HEAP_BATCH_ROWS	16384.0

/*
 * The GPU (pg_warp_gpud driving one) does the per-row work of the fact scan
 * this many times cheaper than one CPU-driver participant.  Measured on the
 * H200 at SSB SF=1 (bench/results/2026-12-02-gpu-ssb-sf1-h200.md): 8 ms per
 * query on the GPU against about 50 ms for the CPU driver with 17
 * participants, i.e. about 100 times one participant; 32 keeps a margin so
 * a GPU plan is not picked where it would lose.
 */
#define WARP_GPU_FACTOR		32.0

/* Everything a star query needs, gathered while checking it. */
typedef struct StarInfo
{
	RelOptInfo *fact;
	List	   *dims;			/* RelOptInfo *, join order */
	List	   *kinds;			/* WarpJoinKind, per dim */
	List	   *fact_keys;		/* Expr (fact side), per dim */
	List	   *dim_keys;		/* Var (dim side), per dim */
	List	   *dim_keys2;		/* per dim: its second key column (Var), or
								 * NULL (see pack_keys) */
	List	   *key_display;	/* per dim: NIL, or List(fact Vars, dim Vars) */
	List	   *payload;		/* per dim: List of Var (group columns) */
	List	   *gate;			/* constant quals (no column): evaluated once */
	List	   *key_info;		/* per group key: a formed WarpPlanKey */
	List	   *agg_info;		/* per aggregate: a formed WarpPlanAgg */
	List	   *outmap;			/* per partial target column: key k or -(a+1) */
	List	   *quals;			/* fact quals, in evaluation order */
	List	   *fact_exprs;		/* fact group keys, aggregate args, filters */
	PathTarget *partial_target;
	bool		heap;			/* the fact table is a heap table (read
								 * through the table AM), not Arrow files */
	bool		rows;			/* WarpJoin/WarpScan: the "group keys" are the
								 * output columns (EXPLAIN's reasons say so) */
	bool		two_level;		/* DISTINCT aggregates: the engine groups by
								 * the keys and the arguments, PostgreSQL's
								 * Agg aggregates the distinct rows */
	/* DISTINCT aggregates beside plain ones, or GROUPING SETS
	 * (warp_merge_scan.c): the plain aggregates, their partial Aggrefs,
	 * and pg_warp_merge (InvalidOid: neither) */
	List	   *merge_plain;
	List	   *merge_partial;
	Oid			merge_fn;
	bool		has_distinct;	/* DISTINCT aggregates (not only GROUPING SETS) */
	/*
	 * count(DISTINCT x) counted by the engine (the only DISTINCT aggregate,
	 * x an integer-like fact expression): x is a group key the plan does
	 * not output (distinct_key), the Aggref a count(x) per (keys, x) group
	 * (distinct_agg) that the executor turns into distinct counts after
	 * merging (warp_group_merge_regroup); -1 when not
	 */
	Aggref	   *distinct_aggref;
	int			distinct_key;
	int			distinct_agg;
} StarInfo;

/* What a star's engine scan costs, and what its parallel version needs. */
typedef struct StarCost
{
	double		fact_rows;
	double		fact_batches;
	double		fact_bytes;
	List	   *fact_attrs;		/* fact columns read (attnos) */
	Cost		fact_cost;		/* the fact scan, on one participant */
	Cost		dims_cost;		/* the dimension plans and their tables */
	/* under Gather, each dimension runs in every participant: it needs a
	 * parallel-safe plan (a Gather of its own is not one) */
	bool		dims_safe;
	List	   *par_dim_paths;
	Cost		par_dims_cost;
	char	   *device_choice;	/* why the GPU or the CPU, for EXPLAIN */
} StarCost;

/*
 * Everything below is shared between the planner's files only: hidden, so
 * the module neither exports these names nor has its calls to them bound
 * to a same-named symbol of the server or another library.
 */
#pragma GCC visibility push(hidden)

/* GPU (true) or the CPU driver, with the reason in sc (warp_plan_cost.c) */
extern bool device_choice(const GpudStatus *st, StarCost *sc, int cpu_threads, bool forced);

/* warp_plan.c: why the last query was not offloaded (EXPLAIN VERBOSE) */
extern char last_reason[256];
extern bool not_offloaded(const char *why);
extern CustomPathMethods warp_join_path_methods;
extern CustomPathMethods warp_scan_path_methods;
extern CustomPath *serial_custom_path(RelOptInfo *parent, PathTarget *target, double rows,
									  Cost startup, Cost total);
extern bool star_joins(StarInfo *si, List **joins_out);
extern List *star_private(PlannerInfo *root, StarInfo *si, StarCost *sc, List *joins,
						  Relids relids, int where, bool rows);
extern List *warp_plan_with_order(List *priv, List *order);
extern CustomPath *star_path(RelOptInfo *parent, PathTarget *target, StarInfo *si,
							 double rows, Cost startup, Cost total);
extern CustomPath *parallel_star_path(CustomPath *cp, int workers, StarCost *sc);

/* warp_plan_star.c */
extern Var *plain_var(Expr *e);
extern bool find_star(PlannerInfo *root, RelOptInfo *input_rel, StarInfo *si);
extern int	target_position(PathTarget *pt, Var *v);
extern bool star_fact_quals(PlannerInfo *root, StarInfo *si);
extern bool star_dims_fit(StarInfo *si);

/* warp_plan_admit.c */
extern bool check_fact_expr_as(StarInfo *si, Expr *e, bool qual, const char **why);
extern bool check_fact_expr(StarInfo *si, Expr *e, const char **why);
extern bool may_fail_walker(Node *node, void *context);
extern bool error_classes_walker(Node *node, int *classes);
extern int	error_class_count(int classes);
extern bool heap_special_refused(PlannerInfo *root, StarInfo *si, Node *node);
extern bool gpu_can_run(StarInfo *si);

/* warp_plan_agg.c */
extern bool add_group_key_as(StarInfo *si, PathTarget *pt, Expr *expr, Index sgref,
							 bool output);
extern bool build_partial_target(PlannerInfo *root, RelOptInfo *output_rel,
								 GroupPathExtraData *extra, StarInfo *si);

/* warp_plan_rows.c */
extern void try_join_rows(PlannerInfo *root, RelOptInfo *rel);
extern void try_rows(PlannerInfo *root, RelOptInfo *rel);

/* warp_decorrelate.c: the planner hook rewriting correlated aggregate
 * subqueries (called by pgwarp_planner_init) */
extern void warp_decorrelate_init(void);
/* warp_notin.c: `x NOT IN (SELECT ...)` as NOT EXISTS conjuncts, or NIL */
extern List *notin_conjuncts(Query *q, Node *qual);

/* warp_plan_cost.c */
extern Path *dim_path(RelOptInfo *d);
extern void star_costs(StarInfo *si, StarCost *sc);

#pragma GCC visibility pop

#endif							/* PGWARP_PLAN_INTERNAL_H */
