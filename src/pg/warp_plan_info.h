/*-------------------------------------------------------------------------
 *
 * warp_plan_info.h
 *	  The plan a WarpPreAgg / WarpJoin / WarpScan CustomScan carries from
 *	  the planner (src/pg/plan) to the executor (src/pg/exec), as typed
 *	  structs.
 *
 * A CustomScan's custom_private must be a tree of plain nodes: plans are
 * copied (plan cache), written out and read back (parallel query), and
 * walked for PARAM_EXEC references.  So each struct here has a form
 * function, which writes it as a List with one slot per field (the slot
 * order is the enum beside it, the only place that order is written), and
 * a deform function, which reads it back.  No other code indexes these
 * Lists; the planner builds structs and forms them, the executor deforms
 * them.  The nested items (per join, per group key, per aggregate, the
 * ORDER BY ... LIMIT) are formed Lists inside the outer one and have form
 * and deform functions of their own.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_PLAN_INFO_H
#define WARP_PLAN_INFO_H

#include "postgres.h"

#include "nodes/pg_list.h"
#include "nodes/primnodes.h"

/* One join of the star: fact key to a dimension plan's output. */
typedef struct WarpPlanJoin
{
	Expr	   *fact_key;		/* fact side: a Var, or packed keys */
	Var		   *dim_key;		/* dimension side, of the dimension's plan */
	List	   *payload_resnos; /* (int) payload columns in the dim plan */
	int			key_resno;		/* the key's column in the dimension plan */
	int			kind;			/* WarpJoinKind */
	int			key2_resno;		/* second key column (0: none) */
	List	   *key_display;	/* NIL, or (fact Vars, dim Vars) for EXPLAIN */
} WarpPlanJoin;

/* One group key. */
typedef struct WarpPlanKey
{
	int			kind;			/* WG_FACT or WG_DIM */
	Expr	   *expr;			/* WG_FACT: the key expression (or index
								 * CASE, see strings) */
	int			join;			/* WG_DIM: the dimension */
	int			col;			/* WG_DIM: the payload column */
	bool		case_index;		/* WG_FACT: expr is a text CASE computed as
								 * the index of its branch, */
	List	   *strings;		/* whose outputs these are (String) */
} WarpPlanKey;

/* One aggregate computed by the node. */
typedef struct WarpPlanAgg
{
	int			kind;			/* WarpAggKind or WARP_AGG_* (warp.h) */
	Expr	   *arg;			/* NULL: count(*) */
	Expr	   *filter;			/* FILTER (WHERE ...), or NULL */
	Oid			argtype;
} WarpPlanAgg;

/* ORDER BY ... LIMIT kept in a row-mode node (Top-N). */
typedef struct WarpPlanOrder
{
	List	   *cols;			/* (int) 0-based output columns */
	List	   *sortops;		/* (Oid) ordering operators */
	List	   *collations;		/* (Oid) */
	List	   *nulls_first;	/* (int) 1: NULLS FIRST */
	int			bound;			/* LIMIT (plus OFFSET) */
} WarpPlanOrder;

/* The whole node. */
typedef struct WarpPlanInfo
{
	int			fact_relid;		/* the fact table's range table index */
	int			first_relid;	/* the path relation's first relid, as
								 * planned (setrefs' offset is taken from it) */
	List	   *quals;			/* fact quals, in evaluation order */
	List	   *fact_attrs;		/* (int) fact attnos read */
	List	   *joins;			/* per join: a formed WarpPlanJoin */
	List	   *key_info;		/* per group key: a formed WarpPlanKey */
	List	   *agg_info;		/* per aggregate: a formed WarpPlanAgg */
	List	   *outmap;			/* (int) per output column: group key
								 * index, or -(aggregate index + 1) */
	List	   *gate;			/* constant quals (PostgreSQL's gating
								 * Result, kept in the node) */
	Oid			fact_oid;
	int			where;			/* 0: this backend; 1 + GpudDeviceKind: the
								 * pg_warp_gpud daemon with that device */
	bool		heap;			/* a heap fact table */
	int			distinct_key;	/* count(DISTINCT) counted here: its key, */
	int			distinct_agg;	/* and its aggregate; -1: none */
	bool		rows;			/* row mode (WarpJoin, WarpScan) */
	List	   *order;			/* a formed WarpPlanOrder, or NIL */
	char	   *device_choice;	/* why the GPU or the CPU (EXPLAIN), or NULL */
} WarpPlanInfo;

extern List *form_warp_plan_info(const WarpPlanInfo *info);
extern void deform_warp_plan_info(List *priv, WarpPlanInfo *info);

extern List *form_warp_plan_join(const WarpPlanJoin *join);
extern void deform_warp_plan_join(List *item, WarpPlanJoin *join);

extern List *form_warp_plan_key(const WarpPlanKey *key);
extern void deform_warp_plan_key(List *item, WarpPlanKey *key);

extern List *form_warp_plan_agg(const WarpPlanAgg *agg);
extern void deform_warp_plan_agg(List *item, WarpPlanAgg *agg);

extern List *form_warp_plan_order(const WarpPlanOrder *order);
extern void deform_warp_plan_order(List *item, WarpPlanOrder *order);

#endif							/* WARP_PLAN_INFO_H */
