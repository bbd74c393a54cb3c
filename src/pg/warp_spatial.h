/*
 * warp_spatial.h — PostGIS predicates pg_warp recognises, and the spatial
 * join's plan handoff (WarpSpatialPlan, formed by the planner in
 * plan/warp_plan_spatial.c, deformed by the executor in
 * exec/warp_spatial_exec.c).
 *
 * PostGIS is never linked: its functions are recognised by their C symbol
 * in a library named postgis-*, and called through the fmgr by the OID
 * the query names, so pg_warp loads and works where PostGIS is absent.
 */
#ifndef WARP_SPATIAL_H
#define WARP_SPATIAL_H

#include "postgres.h"

#include "nodes/extensible.h"
#include "nodes/pathnodes.h"
#include "nodes/pg_list.h"
#include "nodes/primnodes.h"

#include "warp_geom_set.h"

/* what a PostGIS function means to the engine */
typedef struct WarpSpatialFunc
{
	WarpGeomOp	op;
	int			container_arg;	/* 0 or 1: the polygon side of CONTAINS and
								 * COVERS; -1 for symmetric predicates */
	int			nargs;			/* 2, or 3 for ST_DWithin */
	const char *name;			/* for EXPLAIN: ST_Contains, && ... */
} WarpSpatialFunc;

/*
 * true if funcid is one of PostGIS's geometry predicates the engine
 * evaluates (ST_Contains, ST_Within, ST_Covers, ST_CoveredBy, ST_Intersects,
 * ST_DWithin, the && operator's function).  Otherwise *why says why not
 * when the function is a PostGIS one (geography, another predicate), and
 * is NULL for anything else.
 */
extern bool warp_spatial_func(Oid funcid, WarpSpatialFunc *out, const char **why);

/* funcid is the C function `symbol` of PostGIS's library */
extern bool warp_postgis_function(Oid funcid, const char *symbol);

/* the plan of one spatial join (custom_private of WarpSpatialJoin) */
typedef struct WarpSpatialPlan
{
	Oid			funcid;			/* PostGIS's function, called for UNSURE
								 * rows */
	Oid			inputcollid;
	bool		filter;			/* a filter (one child; the build side is the
								 * clause's constant argument), not a join */
	int			build_arg;		/* which argument (0/1) is the build side's */
	int			build_child;	/* which child plan (0/1) is the build side */
	/* per custom_scan_tlist entry: its child plan (0/1) and resno there */
	List	   *src_child;		/* IntList */
	List	   *src_resno;		/* IntList */
	int			arg_slot[2];	/* custom_scan_tlist position (0-based) of
								 * the two geometry arguments; -1 for a
								 * filter's constant */
} WarpSpatialPlan;

/*
 * custom_exprs of the node: List(the clause), deparsed by EXPLAIN, whose
 * third argument (ST_DWithin's distance) the executor evaluates once.
 */
extern List *warp_spatial_plan_form(const WarpSpatialPlan *p);
extern void warp_spatial_plan_deform(List *private, WarpSpatialPlan *p);

/* the clause's function and arguments (FuncExpr or OpExpr) */
extern bool warp_spatial_clause_parts(Expr *clause, Oid *funcid, Oid *collid, List **args);

/* GUC pg_warp.enable_spatial (guc.c) */
extern bool pgwarp_enable_spatial;

/* planner: the join hook's part (plan/warp_plan_spatial.c) */
extern void warp_spatial_join_paths(PlannerInfo *root, RelOptInfo *joinrel,
									RelOptInfo *outerrel, RelOptInfo *innerrel,
									JoinType jointype, JoinPathExtraData *extra);
extern void warp_spatial_rel_paths(PlannerInfo *root, RelOptInfo *rel, RangeTblEntry *rte);
extern void warp_spatial_planner_init(void);

/* executor (exec/warp_spatial_exec.c) */
extern CustomScanMethods warp_spatial_scan_methods;
extern CustomScanMethods warp_spatial_filter_scan_methods;
extern void warp_spatial_exec_init(void);

#endif							/* WARP_SPATIAL_H */
