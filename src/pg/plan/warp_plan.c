/*
 * warp_plan.c — offering the engine to the planner.
 *
 * In the UPPERREL_GROUP_AGG hook, a query whose FROM is a star (one
 * arrow_fdw fact table joined to dimension relations, each by one integer
 * or date equality with the fact table: inner joins, left joins with the
 * dimension on the nullable side, semi joins (EXISTS, IN) and anti joins
 * (NOT EXISTS)) and whose fact
 * quals, group keys and aggregates the engine computes exactly gets a
 * second plan:
 *
 *   Finalize Aggregate (PostgreSQL's, combine functions)
 *     -> Custom Scan (WarpPreAgg): engine scan + filter + probes +
 *        partial aggregation, emitting one partial state row per group
 *          -> dimension plans (PostgreSQL's, with their own quals)
 *
 * The dimension sides run as ordinary PostgreSQL plans, so every qual on a
 * dimension (text, LIKE, any collation or function) keeps PostgreSQL's
 * semantics; the engine builds hash tables from their output.  The final
 * Agg groups with the types' own equality, so the engine may split a group
 * (it groups by binary images) without changing results.  The path is
 * costed from per-row constants and competes with PostgreSQL's plans in
 * add_path.
 */
#include "postgres.h"

#include "catalog/pg_aggregate.h"
#include "catalog/pg_class.h"
#include "mb/pg_wchar.h"
#include "catalog/pg_type.h"
#include "commands/explain.h"
#include "executor/instrument.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/planner.h"
#include "optimizer/prep.h"
#include "optimizer/tlist.h"
#include "tcop/tcopprot.h"
#include "parser/parsetree.h"
#include "utils/fmgroids.h"
#include "utils/regproc.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"

#include "gpud_client.h"
#include "pg_warp.h"
#include "warp.h"
#include "warp_join.h"
#include "warp_row.h"

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

static create_upper_paths_hook_type prev_upper_paths_hook = NULL;
static set_join_pathlist_hook_type prev_join_pathlist_hook = NULL;
static set_rel_pathlist_hook_type prev_rel_pathlist_hook = NULL;

static CustomPathMethods warp_preagg_path_methods;
static CustomPathMethods warp_join_path_methods;
static CustomPathMethods warp_scan_path_methods;

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
	List	   *key_info;		/* per group key: List(kind, expr, join, col
								 * [, strings of a text CASE]) */
	List	   *agg_info;		/* per aggregate: List(kind, arg, filter, type) */
	List	   *outmap;			/* per partial target column: key k or -(a+1) */
	List	   *quals;			/* fact quals, in evaluation order */
	List	   *fact_exprs;		/* fact group keys, aggregate args, filters */
	PathTarget *partial_target;
	bool		heap;			/* the fact table is a heap table (read
								 * through the table AM), not Arrow files */
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

/*
 * Why the last query planned in this backend was not offloaded (empty if it
 * was, or touched no Arrow table); EXPLAIN VERBOSE prints it.
 */
static char last_reason[256];

static bool
not_offloaded(const char *why)
{
	elog(DEBUG1, "pg_warp: not offloaded: %s", why);
	strlcpy(last_reason, why, sizeof(last_reason));
	return false;
}

static ExplainOneQuery_hook_type prev_explain_hook = NULL;

/*
 * EXPLAIN as PostgreSQL does it (commands/explain.c, ExplainOneQuery), then,
 * for VERBOSE text output, one line saying why pg_warp left the query to
 * PostgreSQL.
 */
static void
warp_explain_one_query(Query *query, int cursorOptions, IntoClause *into,
					   ExplainState *es, const char *queryString,
					   ParamListInfo params, QueryEnvironment *queryEnv)
{
	last_reason[0] = '\0';
	if (prev_explain_hook)
		prev_explain_hook(query, cursorOptions, into, es, queryString, params, queryEnv);
	else
	{
		PlannedStmt *plan;
		instr_time	planstart,
					planduration;
		BufferUsage bufusage_start,
					bufusage;

		if (es->buffers)
			bufusage_start = pgBufferUsage;
		INSTR_TIME_SET_CURRENT(planstart);
		plan = pg_plan_query(query, queryString, cursorOptions, params);
		INSTR_TIME_SET_CURRENT(planduration);
		INSTR_TIME_SUBTRACT(planduration, planstart);
		if (es->buffers)
		{
			memset(&bufusage, 0, sizeof(BufferUsage));
			BufferUsageAccumDiff(&bufusage, &pgBufferUsage, &bufusage_start);
		}
		ExplainOnePlan(plan, into, es, queryString, params, queryEnv,
					   &planduration, (es->buffers ? &bufusage : NULL));
	}
	if (es->verbose && es->format == EXPLAIN_FORMAT_TEXT && last_reason[0])
		appendStringInfo(es->str, "pg_warp: not offloaded: %s\n", last_reason);
}

/* ------------------------------------------------------------ the star */

/*
 * A pseudoconstant qual of the star (no column of any table: WHERE $1 > 0,
 * WHERE current_date > '2020-01-01'): PostgreSQL evaluates it once, in a
 * gating Result above the scan or join, and runs nothing below when it is
 * not true.  Its plan for the star is the node, so the node does that
 * itself (the gate, in custom_private item 4), before building a
 * dimension or reading a batch.
 */
static bool
star_gate(StarInfo *si, RestrictInfo *ri)
{
	if (!warp_compile_scan_constant((Expr *) ri->clause))
		return not_offloaded("a constant qual the backend cannot evaluate once");
	si->gate = list_append_unique_ptr(si->gate, ri->clause);
	return true;
}

static Var *
plain_var(Expr *e)
{
	while (e && IsA(e, RelabelType))
		e = ((RelabelType *) e)->arg;
	if (e && IsA(e, Var) && ((Var *) e)->varattno > 0 && ((Var *) e)->varlevelsup == 0)
		return (Var *) e;
	return NULL;
}

static bool
join_key_types_ok(Oid a, Oid b, Oid collation)
{
	WarpType	ta,
				tb;

	/*
	 * text/varchar: byte equality under a deterministic collation (the
	 * engine numbers the dimension's key strings, CPU driver only)
	 */
	if ((a == TEXTOID || a == VARCHAROID) && (b == TEXTOID || b == VARCHAROID))
		return OidIsValid(collation) && get_collation_isdeterministic(collation) &&
			GetDatabaseEncoding() == PG_UTF8;	/* Arrow's bytes are UTF-8 */
	if (!warp_type_of(a, &ta) || !warp_type_of(b, &tb))
		return false;
	if ((ta == WT_INT2 || ta == WT_INT4 || ta == WT_INT8) &&
		(tb == WT_INT2 || tb == WT_INT4 || tb == WT_INT8))
		return true;
	return a == b && (ta == WT_DATE || ta == WT_TIMESTAMP);
}

/*
 * Two integer join columns (int2 or int4) as one int8 key, exact and
 * order-preserving for every pair: a * 2^32 + (b + 2^31).  The fact side
 * is this expression (int8 arithmetic the engine compiles like any other,
 * never overflowing for these ranges); the dimension side computes the
 * same from its two columns (warp_exec.c, build_dim).  A NULL in either
 * column gives NULL, which never matches, as (a, b) = (c, d) never does.
 */
static bool
packable(Oid t)
{
	return t == INT2OID || t == INT4OID;
}

static Expr *
pack_keys(Var *a, Var *b)
{
	Expr	   *a8 = (Expr *) makeFuncExpr(a->vartype == INT2OID ? F_INT8_INT2 : F_INT8_INT4,
										   INT8OID, list_make1(copyObject(a)), InvalidOid,
										   InvalidOid, COERCE_EXPLICIT_CAST);
	Expr	   *b8 = (Expr *) makeFuncExpr(b->vartype == INT2OID ? F_INT8_INT2 : F_INT8_INT4,
										   INT8OID, list_make1(copyObject(b)), InvalidOid,
										   InvalidOid, COERCE_EXPLICIT_CAST);
	Expr	   *hi = make_opclause(686 /* int8 * int8 */ , INT8OID, false, a8,
								   (Expr *) makeConst(INT8OID, -1, InvalidOid, 8,
													  Int64GetDatum(INT64CONST(4294967296)),
													  false, FLOAT8PASSBYVAL),
								   InvalidOid, InvalidOid);
	Expr	   *lo = make_opclause(684 /* int8 + int8 */ , INT8OID, false, b8,
								   (Expr *) makeConst(INT8OID, -1, InvalidOid, 8,
													  Int64GetDatum(INT64CONST(2147483648)),
													  false, FLOAT8PASSBYVAL),
								   InvalidOid, InvalidOid);

	((OpExpr *) hi)->opfuncid = F_INT8MUL;
	((OpExpr *) lo)->opfuncid = F_INT8PL;
	{
		Expr	   *sum = make_opclause(684, INT8OID, false, hi, lo, InvalidOid, InvalidOid);

		((OpExpr *) sum)->opfuncid = F_INT8PL;
		return sum;
	}
}

/* union-find over range table indexes: the arms of a snowflake */
static int
arm_root(int *parent, int r)
{
	while (parent[r] != r)
		r = parent[r] = parent[parent[r]];
	return r;
}

static void
arm_union(int *parent, int a, int b)
{
	a = arm_root(parent, a);
	b = arm_root(parent, b);
	if (a != b)
		parent[b] = a;
}

static bool
find_star(PlannerInfo *root, RelOptInfo *input_rel, StarInfo *si)
{
	int			rti = -1;
	ListCell   *lc;
	Bitmapset  *joined = NULL;
	int		   *kind_by_rti;
	int			kind;
	List	   *jclauses = NIL;
	int		   *arm;			/* snowflake: dimension relations joined
								 * among themselves form one arm */

	/* the fact table: the largest arrow_fdw relation */
	while ((rti = bms_next_member(input_rel->relids, rti)) >= 0)
	{
		RelOptInfo *rel = root->simple_rel_array[rti];

		if (rel == NULL || rel->reloptkind != RELOPT_BASEREL)
			return false;
		if (arrow_fdw_is_arrow_rel(rel) && (si->fact == NULL || rel->tuples > si->fact->tuples))
			si->fact = rel;
	}
	if (si->fact == NULL && pgwarp_heap_min_rows >= 0)
	{
		/*
		 * No Arrow table: the largest plain table of at least
		 * pg_warp.heap_min_rows rows, read through the table AM
		 */
		rti = -1;
		while ((rti = bms_next_member(input_rel->relids, rti)) >= 0)
		{
			RelOptInfo *rel = root->simple_rel_array[rti];
			RangeTblEntry *rte = planner_rt_fetch(rti, root);

			/* not a parent of inheritance children (its own heap holds
			 * only part of the rows), not sampled, not a catalog */
			if (rel->rtekind == RTE_RELATION && rte->relkind == RELKIND_RELATION &&
				!rte->inh && rte->tablesample == NULL && rte->relid >= FirstNormalObjectId &&
				rel->tuples >= (double) pgwarp_heap_min_rows &&
				(si->fact == NULL || rel->tuples > si->fact->tuples))
				si->fact = rel;
		}
		si->heap = si->fact != NULL;
	}
	if (si->fact == NULL)
		return false;			/* no Arrow table, no big table: not ours, say nothing */
	if (!bms_equal(input_rel->relids, root->all_baserels))
	{
		/*
		 * Part of the query's joins (WarpJoin grows the star a depth at a
		 * time): only around the query's own fact table
		 */
		rti = -1;
		while ((rti = bms_next_member(root->all_baserels, rti)) >= 0)
		{
			RelOptInfo *rel = root->simple_rel_array[rti];

			if (rel != NULL && rel->reloptkind == RELOPT_BASEREL &&
				arrow_fdw_is_arrow_rel(rel) && rel->tuples > si->fact->tuples)
				return false;
		}
	}

	kind_by_rti = palloc0(sizeof(int) * root->simple_rel_array_size);
	foreach(lc, root->join_info_list)
	{
		SpecialJoinInfo *sj = lfirst(lc);
		int			dimrti;
		Relids		sjrels = bms_union(sj->min_lefthand, sj->min_righthand);

		/*
		 * A join above this part of the query (it holds relations of one
		 * side at most): PostgreSQL's
		 */
		if (!bms_overlap(sj->min_lefthand, input_rel->relids) ||
			!bms_overlap(sj->min_righthand, input_rel->relids))
			continue;
		if (!bms_is_subset(sjrels, input_rel->relids))
			return not_offloaded("an outer, semi or anti join reaching outside the relations joined");
		switch (sj->jointype)
		{
			case JOIN_LEFT:
				kind = WARP_JOIN_LEFT;
				break;
			case JOIN_SEMI:
				kind = WARP_JOIN_SEMI;
				break;
			case JOIN_ANTI:
				kind = WARP_JOIN_ANTI;
				break;
			default:
				return not_offloaded("a full outer join");
		}
		/* fact (kind) one dimension, by clauses of those two only */
		if (!bms_get_singleton_member(sj->min_righthand, &dimrti) ||
			!bms_equal(sj->min_righthand, sj->syn_righthand) ||
			dimrti == (int) si->fact->relid ||
			!bms_equal(sj->min_lefthand, si->fact->relids) ||
			dimrti >= root->simple_rel_array_size || kind_by_rti[dimrti] != WARP_JOIN_INNER)
			return not_offloaded("an outer, semi or anti join that is not between the fact table and one dimension");
		kind_by_rti[dimrti] = kind;
	}
	if (root->placeholder_list != NIL)
		return not_offloaded("placeholder expressions");
	if (root->parse->rowMarks != NIL)
		return not_offloaded("FOR UPDATE/SHARE");

	arm = palloc(sizeof(int) * root->simple_rel_array_size);
	for (rti = 0; rti < root->simple_rel_array_size; rti++)
		arm[rti] = rti;
	rti = -1;
	while ((rti = bms_next_member(input_rel->relids, rti)) >= 0)
	{
		RelOptInfo *rel = root->simple_rel_array[rti];
		RangeTblEntry *rte = root->simple_rte_array[rti];

		if (rte->rtekind != RTE_RELATION)
			return not_offloaded("a relation in FROM is not a table");
		/* join clauses that are no equivalence: outer/anti join clauses */
		jclauses = list_concat_unique_ptr(jclauses, rel->joininfo);
		if (!bms_is_empty(rel->lateral_relids))
			return not_offloaded("LATERAL references");
		if (rel != si->fact)
		{
			if (rel->cheapest_total_path == NULL)
				return not_offloaded("a dimension has no plan");
			si->dims = lappend(si->dims, rel);
		}
	}

	/* each dimension joins the fact table by exactly one equality */
	foreach(lc, root->eq_classes)
	{
		EquivalenceClass *ec = lfirst(lc);
		Bitmapset  *rels;
		Var		   *fv = NULL,
				   *dv = NULL;
		ListCell   *mc;
		int			nmembers = 0;
		Oid			opf;

		if (ec->ec_has_volatile)
			return not_offloaded("volatile equivalence");
		if (ec->ec_has_const)
			continue;			/* restrictions only */
		rels = bms_intersect(ec->ec_relids, input_rel->relids);
		if (bms_membership(rels) != BMS_MULTIPLE)
			continue;
		if (ec->ec_broken)
			return not_offloaded("a join equality PostgreSQL could not use as such");
		if (!bms_is_member(si->fact->relid, rels))
		{
			/* between dimensions: they form one arm, which PostgreSQL joins */
			int			first = bms_next_member(rels, -1),
						r = first;

			while ((r = bms_next_member(rels, r)) >= 0)
				arm_union(arm, first, r);
			continue;
		}
		foreach(mc, ec->ec_members)
		{
			EquivalenceMember *em = lfirst(mc);
			Var		   *v;

			/* (members outside are joined above, through the class) */
			if (em->em_is_child || !bms_is_subset(em->em_relids, input_rel->relids))
				continue;
			nmembers++;
			v = plain_var(em->em_expr);
			if (v == NULL)
				return not_offloaded("join key that is not a column");
			if (v->varno == si->fact->relid)
				fv = v;
			else
				dv = v;
		}
		if (nmembers != 2 || fv == NULL || dv == NULL)
			return not_offloaded("a join that is not between the fact table and one dimension");
		foreach(mc, ec->ec_opfamilies)
		{
			opf = lfirst_oid(mc);
			if (opf >= FirstNormalObjectId)
				return not_offloaded("join equality of a user-defined operator family");
		}
		if (!join_key_types_ok(fv->vartype, dv->vartype, ec->ec_collation))
			return not_offloaded("join key type");
		si->fact_keys = lappend(si->fact_keys, fv);
		si->dim_keys = lappend(si->dim_keys, dv);
	}
	/*
	 * The clauses of left and anti joins (and any other join clause): each
	 * must be the one equality between the fact table and a dimension joined
	 * that way.  Anything else (a condition on the fact table alone in a
	 * left join's ON, a WHERE clause over the nullable side) is a join
	 * clause the engine would get wrong, so the query stays PostgreSQL's.
	 */
	foreach(lc, jclauses)
	{
		RestrictInfo *ri = lfirst(lc);
		OpExpr	   *op = (OpExpr *) ri->clause;
		Var		   *a,
				   *b,
				   *fv,
				   *dv;
		ListCell   *mc;

		/* a clause reaching a relation outside: evaluated above */
		if (!bms_is_subset(ri->required_relids, input_rel->relids))
			continue;
		if (ri->pseudoconstant)
		{
			/* WHERE $1 > 0 over a join: the node's gate */
			if (!star_gate(si, ri))
				return false;
			continue;
		}
		if (!bms_is_member(si->fact->relid, ri->clause_relids) &&
			bms_membership(ri->clause_relids) == BMS_MULTIPLE)
		{
			/* between dimensions (inner joins only): inside one arm */
			int			first = bms_next_member(ri->clause_relids, -1),
						r = -1;

			while ((r = bms_next_member(ri->clause_relids, r)) >= 0)
			{
				if (r >= root->simple_rel_array_size || kind_by_rti[r] != WARP_JOIN_INNER)
					return not_offloaded("an outer, semi or anti join between dimensions");
				arm_union(arm, first, r);
			}
			continue;
		}
		if (ri->pseudoconstant || !IsA(op, OpExpr) || list_length(op->args) != 2 ||
			ri->mergeopfamilies == NIL)
			return not_offloaded("join clauses other than equalities");
		a = plain_var(linitial(op->args));
		b = plain_var(lsecond(op->args));
		if (a == NULL || b == NULL)
			return not_offloaded("join key that is not a column");
		fv = a->varno == si->fact->relid ? a : b;
		dv = a->varno == si->fact->relid ? b : a;
		if (fv->varno != si->fact->relid || dv->varno == si->fact->relid)
			return not_offloaded("a join that is not between the fact table and one dimension");
		if (kind_by_rti[dv->varno] == WARP_JOIN_INNER)
			return not_offloaded("join clauses other than equalities");
		foreach(mc, ri->mergeopfamilies)
		{
			if (lfirst_oid(mc) >= FirstNormalObjectId)
				return not_offloaded("join equality of a user-defined operator family");
		}
		if (!join_key_types_ok(fv->vartype, dv->vartype, op->inputcollid))
			return not_offloaded("join key type");
		si->fact_keys = lappend(si->fact_keys, fv);
		si->dim_keys = lappend(si->dim_keys, dv);
	}

	/*
	 * One dimension per arm, in the order the keys were found; every arm
	 * joins the fact table by exactly one equality.  An arm of several
	 * relations (a snowflake: supplier -> nation -> region) is the join
	 * relation PostgreSQL planned for them, whose plan the engine runs as
	 * the dimension; its relations must all be inner-joined.
	 */
	{
		List	   *ordered = NIL;
		List	   *fkeys = NIL,
				   *dkeys = NIL,
				   *dkeys2 = NIL,
				   *display = NIL;
		int			narms = 0;
		ListCell   *fc;

		foreach(lc, si->dims)
		{
			RelOptInfo *rel = lfirst(lc);

			if (arm_root(arm, rel->relid) == (int) rel->relid)
				narms++;
		}
		forboth(lc, si->dim_keys, fc, si->fact_keys)
		{
			int			dvno = ((Var *) lfirst(lc))->varno;
			int			a = arm_root(arm, dvno);
			Relids		members = NULL;
			ListCell   *dc;
			RelOptInfo *drel;

			if (bms_is_member(a, joined))
			{
				/*
				 * The arm's second key column: the two pack into one int8
				 * key when all four columns are int2/int4; more columns, or
				 * others, stay PostgreSQL's
				 */
				int			k = 0;
				ListCell   *kc;

				foreach(kc, dkeys)
				{
					if (arm_root(arm, ((Var *) lfirst(kc))->varno) == a)
						break;
					k++;
				}
				if (kc == NULL || list_nth(dkeys2, k) != NULL ||
					!packable(((Var *) lfirst(kc))->vartype) ||
					!packable(((Var *) lfirst(lc))->vartype) ||
					!IsA(list_nth(fkeys, k), Var) ||
					!packable(((Var *) list_nth(fkeys, k))->vartype) ||
					!packable(((Var *) lfirst(fc))->vartype))
					return not_offloaded("a dimension joined by more than two columns, or by two that are not int2/int4");
				list_nth_cell(dkeys2, k)->ptr_value = lfirst(lc);
				list_nth_cell(display, k)->ptr_value =
					list_make2(list_make2(list_nth(fkeys, k), lfirst(fc)),
							   list_make2(list_nth(dkeys, k), lfirst(lc)));
				list_nth_cell(fkeys, k)->ptr_value = pack_keys(list_nth(fkeys, k), lfirst(fc));
				continue;
			}
			joined = bms_add_member(joined, a);
			fkeys = lappend(fkeys, lfirst(fc));
			dkeys = lappend(dkeys, lfirst(lc));
			dkeys2 = lappend(dkeys2, NULL);
			display = lappend(display, NIL);
			foreach(dc, si->dims)
				if (arm_root(arm, ((RelOptInfo *) lfirst(dc))->relid) == a)
					members = bms_add_member(members, ((RelOptInfo *) lfirst(dc))->relid);
			if (bms_membership(members) == BMS_SINGLETON)
			{
				drel = root->simple_rel_array[dvno];
				si->kinds = lappend_int(si->kinds, kind_by_rti[dvno]);
			}
			else
			{
				int			r = -1;

				while ((r = bms_next_member(members, r)) >= 0)
					if (kind_by_rti[r] != WARP_JOIN_INNER)
						return not_offloaded("an outer, semi or anti join into a snowflake arm");
				drel = find_join_rel(root, members);
				if (drel == NULL || drel->cheapest_total_path == NULL)
					return not_offloaded("a snowflake arm PostgreSQL did not plan as one join");
				si->kinds = lappend_int(si->kinds, WARP_JOIN_INNER);
			}
			ordered = lappend(ordered, drel);
		}
		if (list_length(ordered) != narms)
			return not_offloaded("a relation is not joined to the fact table (cross join)");
		si->dims = ordered;
		si->fact_keys = fkeys;
		si->dim_keys = dkeys;
		si->dim_keys2 = dkeys2;
		si->key_display = display;
	}
	return true;
}

/* 1-based position of column v in a path's target, or -1 */
static int
target_position(PathTarget *pt, Var *v)
{
	ListCell   *lc;

	foreach(lc, pt->exprs)
	{
		Var		   *e = plain_var(lfirst(lc));

		if (e && e->varno == v->varno && e->varattno == v->varattno)
			return foreach_current_index(lc) + 1;
	}
	return -1;
}

/* Fact quals in the order PostgreSQL would evaluate them (cheapest first). */
static List *
ordered_quals(PlannerInfo *root, List *rinfos)
{
	int			n = list_length(rinfos);
	RestrictInfo **arr = palloc(sizeof(RestrictInfo *) * Max(n, 1));
	Cost	   *cost = palloc(sizeof(Cost) * Max(n, 1));
	List	   *out = NIL;
	int			i,
				j;

	for (i = 0; i < n; i++)
	{
		QualCost	qc;

		arr[i] = list_nth(rinfos, i);
		cost_qual_eval_node(&qc, (Node *) arr[i]->clause, root);
		cost[i] = qc.per_tuple;
	}
	/* stable insertion sort by (security_level, cost), as createplan does */
	for (i = 1; i < n; i++)
	{
		RestrictInfo *r = arr[i];
		Cost		c = cost[i];

		for (j = i; j > 0; j--)
		{
			if (arr[j - 1]->security_level < r->security_level ||
				(arr[j - 1]->security_level == r->security_level && cost[j - 1] <= c))
				break;
			arr[j] = arr[j - 1];
			cost[j] = cost[j - 1];
		}
		arr[j] = r;
		cost[j] = c;
	}
	for (i = 0; i < n; i++)
		out = lappend(out, arr[i]->clause);
	return out;
}

/* ------------------------------------------------------- the aggregates */

static int
agg_kind(Aggref *agg, Oid *argtype)
{
	*argtype = InvalidOid;
	if (agg->aggfnoid == F_COUNT_)
		return WA_COUNT_STAR;
	if (list_length(agg->args) != 1)
		return -1;
	*argtype = exprType((Node *) ((TargetEntry *) linitial(agg->args))->expr);
	switch (agg->aggfnoid)
	{
		case F_COUNT_ANY:
			return WA_COUNT;
		case F_SUM_INT2:
		case F_SUM_INT4:
			return WA_SUM_INT;
		case F_AVG_INT2:
		case F_AVG_INT4:
			return WA_AVG_INT;
		case F_SUM_INT8:
		case F_AVG_INT8:
		case F_SUM_NUMERIC:
		case F_AVG_NUMERIC:
			/* numeric: a numeric(p <= 18, s) column's unscaled values
			 * (warp_compile_decimal_arg), summed exactly in 128 bits, or a
			 * numeric expression (a wider column too) in 192 bits */
			return WA_SUM_INT8;
		case F_SUM_FLOAT4:
		case F_SUM_FLOAT8:
			return WA_SUM_FLOAT;
		case F_AVG_FLOAT4:
		case F_AVG_FLOAT8:
			/* variance and standard deviation share avg's float8_accum
			 * state {N, Sx, Sxx} and its combine function; only the final
			 * function, PostgreSQL's, differs */
		case F_VARIANCE_FLOAT4:
		case F_VARIANCE_FLOAT8:
		case F_VAR_SAMP_FLOAT4:
		case F_VAR_SAMP_FLOAT8:
		case F_VAR_POP_FLOAT4:
		case F_VAR_POP_FLOAT8:
		case F_STDDEV_FLOAT4:
		case F_STDDEV_FLOAT8:
		case F_STDDEV_SAMP_FLOAT4:
		case F_STDDEV_SAMP_FLOAT8:
		case F_STDDEV_POP_FLOAT4:
		case F_STDDEV_POP_FLOAT8:
			return WA_AVG_FLOAT;
		case F_VARIANCE_INT2:
		case F_VARIANCE_INT4:
		case F_VAR_SAMP_INT2:
		case F_VAR_SAMP_INT4:
		case F_VAR_POP_INT2:
		case F_VAR_POP_INT4:
		case F_STDDEV_INT2:
		case F_STDDEV_INT4:
		case F_STDDEV_SAMP_INT2:
		case F_STDDEV_SAMP_INT4:
		case F_STDDEV_POP_INT2:
		case F_STDDEV_POP_INT4:
			return WARP_AGG_VAR_INT;
		case F_BOOL_AND:
		case F_EVERY:
			/* false < true: the AND of the non-NULL inputs is their min,
			 * NULL without any, as booland_statefunc (strict) leaves it */
			return WA_MIN;
		case F_BOOL_OR:
			return WA_MAX;
		case F_MIN_INT2:
		case F_MIN_INT4:
		case F_MIN_INT8:
		case F_MIN_FLOAT4:
		case F_MIN_FLOAT8:
		case F_MIN_DATE:
		case F_MIN_TIMESTAMP:
		case F_MIN_TIMESTAMPTZ:
		case F_MIN_NUMERIC:
			return WA_MIN;
		case F_MAX_INT2:
		case F_MAX_INT4:
		case F_MAX_INT8:
		case F_MAX_FLOAT4:
		case F_MAX_FLOAT8:
		case F_MAX_DATE:
		case F_MAX_TIMESTAMP:
		case F_MAX_TIMESTAMPTZ:
		case F_MAX_NUMERIC:
			return WA_MAX;
	}
	return -1;
}

static bool
check_fact_expr_as(StarInfo *si, Expr *e, bool qual, const char **why)
{
	WarpBuilder b;

	warp_builder_init(&b, si->fact->relid, NULL);
	if ((qual ? warp_compile_qual(&b, e) : warp_compile_expr(&b, e)) < 0)
	{
		*why = b.why_not;
		return false;
	}
	return true;
}

static bool
check_fact_expr(StarInfo *si, Expr *e, const char **why)
{
	return check_fact_expr_as(si, e, false, why);
}

/*
 * One engine group key for expr: a dimension column becomes that
 * dimension's payload, anything else must be a fact expression.  Adds it
 * to the partial target with sgref.  false (reason noted) if impossible.
 */
/*
 * One result of a text CASE key (text_case_key): an int4 constant, the
 * index of its string among *strings (added if new), or NULL.  NULL if the
 * result is not a text constant.
 */
static Expr *
text_case_result(Expr *r, List **strings)
{
	Const	   *c;
	char	   *str;
	ListCell   *lc;
	int			k = 0;

	while (IsA(r, RelabelType))
		r = ((RelabelType *) r)->arg;
	if (!IsA(r, Const))
		return NULL;
	c = (Const *) r;
	if (c->constisnull)
		return (Expr *) makeNullConst(INT4OID, -1, InvalidOid);
	if (c->consttype != TEXTOID && c->consttype != VARCHAROID)
		return NULL;
	str = TextDatumGetCString(c->constvalue);
	foreach(lc, *strings)
	{
		if (strcmp(strVal(lfirst(lc)), str) == 0)
			break;
		k++;
	}
	if (lc == NULL)
		*strings = lappend(*strings, makeString(str));
	return (Expr *) makeConst(INT4OID, -1, InvalidOid, 4, Int32GetDatum(k), false, true);
}

/*
 * A CASE whose results are all text constants or NULL, under a
 * deterministic collation (CASE WHEN lo_discount > 5 THEN 'high' ELSE 'low'
 * END, the usual bucketing of reports): grouped by which distinct string
 * it yields, computed as the same CASE over the strings' indexes (int4);
 * the node turns an index back into its string (OC_STRINGS).  Distinct
 * strings are distinct values under a deterministic collation, so the
 * engine's groups are PostgreSQL's.  NULL if expr is no such CASE.
 */
static Expr *
text_case_key(Expr *expr, List **strings)
{
	CaseExpr   *ce;
	CaseExpr   *ic;
	ListCell   *lc;

	*strings = NIL;
	if (!IsA(expr, CaseExpr))
		return NULL;
	ce = (CaseExpr *) expr;
	if ((ce->casetype != TEXTOID && ce->casetype != VARCHAROID) ||
		!OidIsValid(ce->casecollid) || !get_collation_isdeterministic(ce->casecollid))
		return NULL;
	ic = copyObject(ce);
	ic->casetype = INT4OID;
	ic->casecollid = InvalidOid;
	foreach(lc, ic->args)
	{
		CaseWhen   *w = lfirst(lc);

		if ((w->result = text_case_result(w->result, strings)) == NULL)
			return NULL;
	}
	if (ic->defresult == NULL ||
		(ic->defresult = text_case_result(ic->defresult, strings)) == NULL)
		return NULL;
	return (Expr *) ic;
}

static bool
add_group_key_as(StarInfo *si, PathTarget *pt, Expr *expr, Index sgref, bool output)
{
	Var		   *v = plain_var(expr);
	List	   *ki;

	if (v && v->varno != si->fact->relid)
	{
		/* a dimension column: the payload of that dimension */
		int			j = 0;
		ListCell   *dc;
		List	   *pl;

		foreach(dc, si->dims)
		{
			if (bms_is_member(v->varno, ((RelOptInfo *) lfirst(dc))->relids))
				break;
			j++;
		}
		if (j == list_length(si->dims))
			return not_offloaded("group key of an unknown relation");
		if (IsA(expr, RelabelType))
			return not_offloaded("relabeled dimension group key");
		pl = list_nth(si->payload, j);
		ki = list_make4(makeInteger(WG_DIM), NULL, makeInteger(j),
						makeInteger(list_length(pl)));
		list_nth_cell(si->payload, j)->ptr_value = lappend(pl, v);
	}
	else
	{
		WarpBuilder b;
		List	   *strings;
		Expr	   *ic = text_case_key(expr, &strings);

		warp_builder_init(&b, si->fact->relid, NULL);
		if (ic)
		{
			/* (kind, the index CASE, -1, -1, its strings) */
			if (warp_compile_group_key(&b, ic) < 0)
				return not_offloaded(psprintf("group key: %s", b.why_not));
			ki = list_make5(makeInteger(WG_FACT), ic, makeInteger(-1), makeInteger(-1), strings);
			si->fact_exprs = lappend(si->fact_exprs, ic);
		}
		else
		{
			if (warp_compile_group_key(&b, expr) < 0)
				return not_offloaded(psprintf("group key: %s", b.why_not));
			ki = list_make4(makeInteger(WG_FACT), expr, makeInteger(-1), makeInteger(-1));
			si->fact_exprs = lappend(si->fact_exprs, expr);
		}
	}
	if (output)
	{
		si->outmap = lappend_int(si->outmap, list_length(si->key_info));
		add_column_to_pathtarget(pt, expr, sgref);
	}
	si->key_info = lappend(si->key_info, ki);
	return true;
}

static bool
add_group_key(StarInfo *si, PathTarget *pt, Expr *expr, Index sgref)
{
	return add_group_key_as(si, pt, expr, sgref, true);
}

/*
 * Whether an operator or function node cannot raise an error itself (its
 * arguments aside): comparisons with built-in operators, extract/date_part
 * and the date of a timestamp(tz).
 */
static bool
node_cannot_fail(Node *node)
{
	if (IsA(node, OpExpr) || IsA(node, DistinctExpr) || IsA(node, NullIfExpr) ||
		IsA(node, ScalarArrayOpExpr))
	{
		Oid			opno = IsA(node, ScalarArrayOpExpr) ? ((ScalarArrayOpExpr *) node)->opno
			: ((OpExpr *) node)->opno;
		char	   *name = opno < FirstNormalObjectId ? get_opname(opno) : NULL;
		static const char *const cmp_names[] = {"=", "<>", "<", "<=", ">", ">="};
		int			k;

		for (k = 0; name && k < lengthof(cmp_names); k++)
			if (strcmp(name, cmp_names[k]) == 0)
				return true;
	}
	if (IsA(node, FuncExpr))
	{
		Oid			f = ((FuncExpr *) node)->funcid;

		/* fields of a date or timestamp, and the calendar day of one */
		if (warp_is_extract_func(f) || f == F_DATE_PART_TEXT_TIMESTAMP ||
			f == F_DATE_PART_TEXT_TIMESTAMPTZ || f == F_DATE_TIMESTAMP || f == F_DATE_TIMESTAMPTZ)
			return true;
	}
	return false;
}

/* nodes that raise no error themselves and only combine their arguments */
static bool
node_is_plain(Node *node)
{
	return IsA(node, Var) || IsA(node, Const) || IsA(node, Param) || IsA(node, RelabelType) ||
		IsA(node, BoolExpr) || IsA(node, NullTest) || IsA(node, BooleanTest) ||
		IsA(node, CaseExpr) || IsA(node, CaseWhen) || IsA(node, CaseTestExpr) ||
		IsA(node, CoalesceExpr) || IsA(node, List) || IsA(node, TargetEntry);
}

/*
 * Whether evaluating an expression could raise an error: anything but
 * columns, constants, parameters, comparisons with built-in operators,
 * extract/date_part and the date of a timestamp(tz), AND/OR/NOT, IS [NOT]
 * NULL, CASE and COALESCE of such.
 */
static bool
may_fail_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (node_is_plain(node) || node_cannot_fail(node))
		return expression_tree_walker(node, may_fail_walker, context);
	return true;				/* arithmetic, casts, functions: they may */
}

/*
 * The errors (SQLSTATEs) evaluating an expression could raise, as bits:
 * arithmetic and casts overflow (22003), a division also divides by zero
 * (22012), date/time arithmetic and conversions leave the calendar's range
 * (22008); anything else is a class of its own.  Which of two different
 * errors rows raise first depends on the order they are evaluated in.
 */
#define ERRC_OVERFLOW	0x01
#define ERRC_DIVZERO	0x02
#define ERRC_DATETIME	0x04
#define ERRC_OTHER		0x08

static bool
error_classes_walker(Node *node, int *classes)
{
	if (node == NULL)
		return false;
	if (node_is_plain(node) || node_cannot_fail(node))
		return expression_tree_walker(node, error_classes_walker, classes);
	if (IsA(node, OpExpr) || IsA(node, FuncExpr))
	{
		const char *name;
		Oid			rettype = exprType(node);

		name = IsA(node, OpExpr) ? get_opname(((OpExpr *) node)->opno)
			: get_func_name(((FuncExpr *) node)->funcid);
		if (name && (strcmp(name, "/") == 0 || strcmp(name, "%") == 0 ||
					 strcmp(name, "div") == 0 || strcmp(name, "mod") == 0))
			*classes |= ERRC_DIVZERO | ERRC_OVERFLOW;
		else if (rettype == DATEOID || rettype == TIMESTAMPOID ||
				 rettype == TIMESTAMPTZOID || rettype == INTERVALOID)
			*classes |= ERRC_DATETIME;
		else if ((IsA(node, FuncExpr) &&
				  ((FuncExpr *) node)->funcformat != COERCE_EXPLICIT_CALL) ||
				 (name && (strcmp(name, "+") == 0 || strcmp(name, "-") == 0 ||
						   strcmp(name, "*") == 0)))
			*classes |= ERRC_OVERFLOW;	/* a cast, or arithmetic */
		else
			*classes |= ERRC_OTHER;
		return expression_tree_walker(node, error_classes_walker, classes);
	}
	*classes |= ERRC_OTHER;		/* text input casts (22P02 too), the rest */
	return expression_tree_walker(node, error_classes_walker, classes);
}

/* how many different errors *classes stands for */
static int
error_class_count(int classes)
{
	int			n = 0;

	for (; classes; classes &= classes - 1)
		n++;
	return n;
}

/*
 * Whether two values of the type (under the collation, for text) are
 * equal exactly when the engine's images of them are: integers, date,
 * timestamps, boolean, and with text_ok text and varchar under a
 * deterministic collation (bytes).
 */
static bool
equality_is_image(Oid type, Oid coll, bool text_ok)
{
	switch (type)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case DATEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case BOOLOID:
			return true;
		case TEXTOID:
		case VARCHAROID:
			return text_ok && OidIsValid(coll) && get_collation_isdeterministic(coll);
	}
	return false;
}

/*
 * The count(DISTINCT x) the engine can count itself, or NULL: the query's
 * only DISTINCT aggregate (however often it appears), alone or beside plain ones,
 * with x a fact expression of a type whose equality is the engine's binary
 * equality (integers, date, timestamps, boolean; not floats: -0 = 0, NaN;
 * not text: collations).  Counting needs every (keys, x) group once, which
 * the executor's merge gives; parallel worker plans are not made for it.
 */
static Aggref *
engine_distinct(StarInfo *si, List *non_group)
{
	Aggref	   *found = NULL;
	ListCell   *lc;

	foreach(lc, non_group)
	{
		Aggref	   *agg = lfirst(lc);
		Expr	   *arg;
		Var		   *v;

		if (!IsA(agg, Aggref) || !agg->aggdistinct)
			continue;
		if (found != NULL)
		{
			if (equal(found, agg))
				continue;
			return NULL;		/* two different DISTINCT aggregates */
		}
		if (agg->aggfnoid != F_COUNT_ANY || list_length(agg->args) != 1 ||
			agg->aggfilter || agg->aggorder || agg->agglevelsup != 0)
			return NULL;
		arg = ((TargetEntry *) linitial(agg->args))->expr;
		v = plain_var(arg);
		if (v && v->varno != si->fact->relid)
			return NULL;		/* a dimension's column: a payload id */
		if (!equality_is_image(exprType((Node *) arg), InvalidOid, false))
			return NULL;
		found = agg;
	}
	if (found == NULL)
		return NULL;

	/*
	 * The counts of the engine's groups of one key add up to PostgreSQL's
	 * only if two engine groups never stand for one PostgreSQL group: every
	 * group key must be one whose engine identity is the type's equality.
	 * Not so for floats (-0 = 0), numeric (1.0 = 1.00), text under a
	 * nondeterministic collation, and a left join's dimension columns (the
	 * row without a match and a matched row of NULLs are both NULL;
	 * differential seed 271828 found it).
	 */
	foreach(lc, si->key_info)
	{
		List	   *ki = lfirst(lc);
		Expr	   *e = lsecond(ki);

		if (intVal(linitial(ki)) == WG_DIM)
		{
			int			j = intVal(lthird(ki));

			if (list_nth_int(si->kinds, j) != WARP_JOIN_INNER)
				return NULL;
			e = list_nth(list_nth(si->payload, j), intVal(lfourth(ki)));
		}
		if (!equality_is_image(exprType((Node *) e), exprCollation((Node *) e), true))
			return NULL;
	}
	return found;
}

/*
 * Whether the aggregates call for two-level grouping: at least one has
 * DISTINCT, and every one is either agg(DISTINCT x) of one argument or
 * min/max (which distinct rows do not change), with no FILTER or ORDER BY.
 * Then the engine emits the distinct (group keys, arguments) rows and
 * PostgreSQL's own Agg computes the aggregates over them, DISTINCT with
 * the types' equality (so rows the engine keeps apart by binary image,
 * like -0 and 0, still count once).  The arguments must be unable to
 * raise an error (columns, constants, comparisons, CASE ...): PostgreSQL
 * sorts the rows for DISTINCT aggregates, so it evaluates every row's WHERE
 * clause before any aggregate argument, while the engine works row by row;
 * with one row failing in each, they would report different errors.
 */
static bool
wants_two_level(List *aggrefs)
{
	ListCell   *lc;
	bool		any_distinct = false;

	foreach(lc, aggrefs)
	{
		Aggref	   *agg = lfirst(lc);
		Oid			argtype;
		int			kind = agg_kind(agg, &argtype);

		if (agg->aggorder || agg->aggfilter || agg->agglevelsup != 0 ||
			agg->aggkind != AGGKIND_NORMAL || agg->aggvariadic)
			return false;
		if (agg->aggdistinct)
		{
			if (list_length(agg->args) != 1 || list_length(agg->aggdistinct) != 1)
				return false;
			any_distinct = true;
		}
		else if (kind != WA_MIN && kind != WA_MAX)
			return false;
		if (may_fail_walker((Node *) agg->args, NULL))
			return false;
	}
	return any_distinct;
}

/*
 * Build the partial target (group keys + partial Aggrefs, the way
 * PostgreSQL's own partial aggregation labels them) and check that the
 * engine computes every part.
 */
static bool
build_partial_target(PlannerInfo *root, RelOptInfo *output_rel, GroupPathExtraData *extra,
					 StarInfo *si)
{
	Query	   *parse = root->parse;
	PathTarget *final = output_rel->reltarget;
	PathTarget *pt = create_empty_pathtarget();
	List	   *non_group = NIL;
	List	   *aggs = NIL;
	ListCell   *lc;
	int			i = 0;
	const char *why = NULL;
	int			d;
	int			arg_errors = 0; /* ERRC_* of the aggregates' arguments */

	si->distinct_aggref = NULL;
	si->distinct_key = si->distinct_agg = -1;

	si->payload = NIL;
	for (d = 0; d < list_length(si->dims); d++)
		si->payload = lappend(si->payload, NIL);

	foreach(lc, final->exprs)
	{
		Expr	   *expr = lfirst(lc);
		Index		sgref = get_pathtarget_sortgroupref(final, i);

		i++;
		if (sgref && parse->groupClause &&
			get_sortgroupref_clause_noerr(sgref, parse->groupClause) != NULL)
		{
			if (!add_group_key(si, pt, expr, sgref))
				return false;
		}
		else
			non_group = list_concat(non_group,
									pull_var_clause((Node *) expr,
													PVC_INCLUDE_AGGREGATES |
													PVC_RECURSE_WINDOWFUNCS |
													PVC_INCLUDE_PLACEHOLDERS));
	}
	if (extra->havingQual)
		non_group = list_concat(non_group,
								pull_var_clause(extra->havingQual,
												PVC_INCLUDE_AGGREGATES |
												PVC_RECURSE_WINDOWFUNCS |
												PVC_INCLUDE_PLACEHOLDERS));
	/*
	 * A column that is itself a group key may appear in other expressions
	 * (ORDER BY k COLLATE "C", k::text): PostgreSQL's Finalize computes
	 * them from the key's column, which the partial target carries.
	 */
	{
		List	   *rest = NIL;

		foreach(lc, non_group)
		{
			if (IsA(lfirst(lc), Var) && list_member(pt->exprs, lfirst(lc)))
				continue;
			/* GROUPING(): the grouping sets Agg computes it */
			if (IsA(lfirst(lc), GroupingFunc) && parse->groupingSets)
				continue;
			if (!IsA(lfirst(lc), Aggref))
				return not_offloaded("a column outside the GROUP BY and aggregates");
			rest = lappend(rest, lfirst(lc));
		}
		non_group = rest;
	}
	/*
	 * count(DISTINCT x) the engine can count (beside plain aggregates or
	 * alone) takes the merge plan below; it needs pg_warp_merge (0.2)
	 */
	if (!parse->groupingSets && !si->heap && OidIsValid(warp_merge_aggregate()))
		si->distinct_aggref = engine_distinct(si, non_group);
	if (!parse->groupingSets && si->distinct_aggref == NULL && wants_two_level(non_group))
	{
		/* the aggregates' arguments become more group keys */
		List	   *args = NIL;

		si->two_level = true;
		foreach(lc, non_group)
		{
			Expr	   *arg = ((TargetEntry *) linitial(((Aggref *) lfirst(lc))->args))->expr;

			if (list_member(args, arg))
				continue;
			args = lappend(args, arg);
			if (!add_group_key(si, pt, arg, 0))
				return false;
		}
		si->partial_target = set_pathtarget_cost_width(root, pt);
		return true;
	}
	/*
	 * DISTINCT aggregates beside plain ones: the DISTINCT arguments become
	 * group keys as above, the plain aggregates are computed per (keys,
	 * arguments) group as partial states, and pg_warp_merge combines them
	 * per group in the Agg above (warp_merge_scan.c).
	 */
	si->merge_fn = InvalidOid;
	si->has_distinct = false;
	if (parse->groupingSets)
	{
		/*
		 * GROUPING SETS, ROLLUP, CUBE: the engine groups by every column
		 * of every set, the grouping sets Agg above combines the partial
		 * states per set (warp_merge_scan.c)
		 */
		si->merge_fn = warp_merge_aggregate();
		if (!OidIsValid(si->merge_fn))
			return not_offloaded("GROUPING SETS need pg_warp 0.2 (ALTER EXTENSION pg_warp UPDATE)");
		si->two_level = true;
	}
	foreach(lc, non_group)
	{
		Aggref	   *agg = lfirst(lc);

		if (!agg->aggdistinct)
			continue;
		if (list_length(agg->args) != 1 || list_length(agg->aggdistinct) != 1 ||
			agg->aggorder || agg->aggfilter || agg->agglevelsup != 0 ||
			agg->aggkind != AGGKIND_NORMAL || agg->aggvariadic)
			return not_offloaded("a DISTINCT aggregate of several arguments, or with FILTER or ORDER BY");
		if (may_fail_walker((Node *) agg->args, NULL))
			return not_offloaded("a DISTINCT aggregate whose argument could raise an error");
		si->has_distinct = true;
		if (!OidIsValid(si->merge_fn))
		{
			si->merge_fn = warp_merge_aggregate();
			if (!OidIsValid(si->merge_fn))
				return not_offloaded("DISTINCT aggregates beside plain ones need pg_warp 0.2 (ALTER EXTENSION pg_warp UPDATE)");
			si->two_level = true;
		}
		if (si->distinct_aggref && equal(agg, si->distinct_aggref))
		{
			/* a key of the engine's only, counted there (see StarInfo) */
			if (si->distinct_key < 0)
			{
				si->distinct_key = list_length(si->key_info);
				if (!add_group_key_as(si, pt, ((TargetEntry *) linitial(agg->args))->expr, 0, false))
					return false;
			}
		}
		else if (!list_member(aggs, agg))
		{
			Expr	   *arg = ((TargetEntry *) linitial(agg->args))->expr;

			aggs = lappend(aggs, agg);
			if (!list_member(pt->exprs, arg) && !add_group_key(si, pt, arg, 0))
				return false;
		}
	}
	foreach(lc, non_group)
	{
		Node	   *n = lfirst(lc);
		Aggref	   *agg;
		Aggref	   *partial;
		Aggref	   *query_agg;	/* as the query has it */
		Oid			argtype;
		int			kind;
		Expr	   *arg = NULL;

		if (!IsA(n, Aggref))
			return not_offloaded("a column outside the GROUP BY and aggregates");
		agg = query_agg = (Aggref *) n;
		if (list_member(aggs, agg))
			continue;
		aggs = lappend(aggs, agg);
		if (si->distinct_aggref && equal(agg, si->distinct_aggref))
		{
			/* count(x) per (keys, x) group; its Aggref for the Agg above
			 * stays the DISTINCT one (merge_plain) */
			Aggref	   *nd = copyObject(agg);

			nd->aggdistinct = NIL;
			si->distinct_agg = list_length(si->agg_info);
			agg = nd;
		}
		if (agg->aggdistinct || agg->aggorder || agg->agglevelsup != 0 ||
			agg->aggkind != AGGKIND_NORMAL || agg->aggvariadic)
			return not_offloaded("DISTINCT, ORDER BY or ordered-set aggregate");
		kind = agg_kind(agg, &argtype);
		if (kind < 0)
			return not_offloaded(psprintf("aggregate %s", format_procedure(agg->aggfnoid)));
		if (kind != WA_COUNT_STAR)
		{
			arg = ((TargetEntry *) linitial(agg->args))->expr;
			if (argtype == NUMERICOID)
			{
				WarpBuilder b;
				int			scale;
				int			n;

				warp_builder_init(&b, si->fact->relid, NULL);
				if ((n = warp_compile_numeric_agg_arg(&b, arg, &scale)) < 0)
					return not_offloaded(psprintf("aggregate argument: %s", b.why_not));
				/* sum/avg take the rows' largest display scale (from a
				 * second aggregate); min/max would show one of two equal
				 * values of different scales, whichever came last */
				if (warp_node_dynamic_scale(&b, n) &&
					(kind == WA_MIN || kind == WA_MAX))
					return not_offloaded("min/max of a numeric CASE/COALESCE of values of different scales");
			}
			else if (!check_fact_expr(si, arg, &why))
				return not_offloaded(psprintf("aggregate argument: %s", why));
		}
		if (agg->aggfilter && !check_fact_expr(si, agg->aggfilter, &why))
			return not_offloaded(psprintf("aggregate FILTER: %s", why));
		si->fact_exprs = lappend(si->fact_exprs, arg);
		si->fact_exprs = lappend(si->fact_exprs, agg->aggfilter);
		si->agg_info = lappend(si->agg_info,
							   list_make4(makeInteger(kind), arg, agg->aggfilter,
										  makeInteger((int) argtype)));
		partial = copyObject(agg);
		mark_partial_aggref(partial, AGGSPLIT_INITIAL_SERIAL);
		si->outmap = lappend_int(si->outmap, -list_length(si->agg_info));
		add_column_to_pathtarget(pt, (Expr *) partial, 0);
		if (OidIsValid(si->merge_fn))
		{
			/*
			 * A float sum's rounding, and whether it overflows, depends on
			 * the order of the additions; split by the DISTINCT arguments,
			 * or by the columns of the finer grouping sets, the rows are
			 * added in another order than PostgreSQL's (the partial sums
			 * are added to each other above), and no rerun in one thread
			 * could restore it.  Found by the differential test (seed
			 * 31337): a CUBE's total overflowed float4 in PostgreSQL, not
			 * as a sum of the engine's finer groups.
			 */
			if (si->has_distinct && (kind == WA_SUM_FLOAT || kind == WA_AVG_FLOAT))
				return not_offloaded("DISTINCT aggregates beside a sum or average of floats");
			if (root->parse->groupingSets && (kind == WA_SUM_FLOAT || kind == WA_AVG_FLOAT))
				return not_offloaded("GROUPING SETS with a sum or average of floats");
			/*
			 * PostgreSQL sorts the rows for the DISTINCT aggregates, so with
			 * a GROUP BY it evaluates every WHERE clause before any
			 * aggregate argument; the engine goes row by row.  When both
			 * can raise an error, which one is raised could differ.
			 */
			if (si->has_distinct && root->parse->groupClause &&
				(may_fail_walker((Node *) arg, NULL) ||
				 may_fail_walker((Node *) agg->aggfilter, NULL)) &&
				may_fail_walker((Node *) si->quals, NULL))
				return not_offloaded("DISTINCT aggregates beside an aggregate whose argument, like a WHERE clause, could raise an error");
			/*
			 * ... and it evaluates the aggregate arguments in that sorted
			 * order, the engine in scan order: arguments that can raise
			 * two different errors (a division: by zero, or an overflow;
			 * an overflow in one aggregate, a timestamp out of range in
			 * another) could raise the other one first (differential seed
			 * 32: max(f4 / f8) beside count(DISTINCT ...)).  Counted over
			 * all the aggregates, below.
			 */
			if (si->has_distinct && root->parse->groupClause)
			{
				(void) error_classes_walker((Node *) arg, &arg_errors);
				(void) error_classes_walker((Node *) agg->aggfilter, &arg_errors);
				if (error_class_count(arg_errors) > 1)
					return not_offloaded("DISTINCT aggregates beside aggregate arguments that can raise different errors (which one their rows raise first depends on their order)");
			}
			si->merge_plain = lappend(si->merge_plain, query_agg);
			si->merge_partial = lappend(si->merge_partial, partial);
		}
	}
	si->partial_target = set_pathtarget_cost_width(root, pt);
	return true;
}


/*
 * The fact table's quals, every one of which the engine must compute: into
 * si->quals in PostgreSQL's evaluation order.  false (reason noted) if not.
 */
static bool
star_fact_quals(PlannerInfo *root, StarInfo *si)
{
	ListCell   *lc;
	const char *why = NULL;
	List	   *quals = NIL;

	foreach(lc, si->fact->baserestrictinfo)
	{
		RestrictInfo *ri = lfirst(lc);

		if (ri->pseudoconstant)
		{
			if (!star_gate(si, ri))
				return false;
			continue;
		}
		if (!check_fact_expr_as(si, ri->clause, true, &why))
			return not_offloaded(psprintf("fact table qual: %s", why ? why : "constant"));
		quals = lappend(quals, ri);
	}
	si->quals = ordered_quals(root, quals);
	return true;
}

/* whether the dimensions' tables fit pg_warp.inner_hash_mem */
static bool
star_dims_fit(StarInfo *si)
{
	double		inner_bytes = 0;
	ListCell   *lc;

	foreach(lc, si->dims)
	{
		RelOptInfo *d = lfirst(lc);

		inner_bytes += warp_join_estimate_bytes((int64) d->rows) +
			d->rows * d->reltarget->width;
	}
	if (inner_bytes > (double) pgwarp_inner_hash_mem * 1024.0)
		return not_offloaded("dimension tables larger than pg_warp.inner_hash_mem");
	return true;
}

/*
 * The plan's description of each join (custom_private item 3): fact key,
 * dimension key, the positions of the payload columns and of the key(s) in
 * the dimension plan's output, the join kind, and the keys for EXPLAIN.
 * false (reason noted) if a dimension plan lacks a column.
 */
static bool
star_joins(StarInfo *si, List **joins_out)
{
	List	   *joins = NIL;
	ListCell   *fk,
			   *dk,
			   *pl;
	ListCell   *dc = list_head(si->dims);

	forthree(fk, si->fact_keys, dk, si->dim_keys, pl, si->payload)
	{
		/* the dimension plan outputs its path's target, in order */
		PathTarget *dt = ((RelOptInfo *) lfirst(dc))->cheapest_total_path->pathtarget;
		List	   *presnos = NIL;
		ListCell   *vc;
		int			key_resno = target_position(dt, lfirst(dk));
		Var		   *dk2 = list_nth(si->dim_keys2, foreach_current_index(fk));
		int			key2_resno = dk2 ? target_position(dt, dk2) : 0;
		int			kind;

		if (key2_resno < 0)
			key_resno = -1;

		foreach(vc, (List *) lfirst(pl))
		{
			int			r = target_position(dt, lfirst(vc));

			if (r < 0)
				key_resno = -1;
			presnos = lappend_int(presnos, r);
		}
		if (key_resno < 0)
			return not_offloaded("a dimension plan does not output its key or group columns");
		kind = list_nth_int(si->kinds, foreach_current_index(fk));
		/* cannot happen: nothing above a semi/anti join sees its inner side */
		if (presnos != NIL && (kind == WARP_JOIN_SEMI || kind == WARP_JOIN_ANTI))
			return not_offloaded("columns of a semi- or anti-joined dimension");
		joins = lappend(joins, list_make5(lfirst(fk), lfirst(dk), presnos,
										  makeInteger(key_resno), makeInteger(kind)));
		/* 5: the second key column's position (0: none); 6: for EXPLAIN */
		llast(joins) = lappend(llast(joins), makeInteger(key2_resno));
		llast(joins) = lappend(llast(joins),
							   list_nth(si->key_display, foreach_current_index(fk)));
		dc = lnext(si->dims, dc);
	}
	*joins_out = joins;
	return true;
}

/* ---------------------------------------------------------------- hook */

/*
 * Whether the GPU driver will take the query (warp_row_check() decides for
 * sure at execution; this is what the plan already shows): sum(float4),
 * whose rounding depends on the order of the rows, and programs beyond the
 * row evaluator's limits run on the CPU driver, which under mode auto is
 * better done by a (parallel) plan in the backends than in the daemon.
 */
/* what special_walker looks for besides numeric */
typedef struct SpecialWhat
{
	bool		text;			/* text columns */
	bool		date_part;		/* date_part() too, not only extract() */
	bool		numeric;		/* every numeric column and constant, not
								 * only arithmetic and wide columns */
} SpecialWhat;

/*
 * Whether an expression holds something beyond the engine's plain paths:
 * numeric arithmetic and casts, numeric columns of more than 18 digits,
 * extract() (numeric), and what *context adds: text columns, date_part(),
 * every numeric column and constant.
 */
static bool
special_walker(Node *node, void *context)
{
	SpecialWhat *what = (SpecialWhat *) context;

	if (node == NULL)
		return false;
	if (IsA(node, Var) && (what->text && (((Var *) node)->vartype == TEXTOID ||
										  ((Var *) node)->vartype == VARCHAROID)))
		return true;
	if (IsA(node, Var) && ((Var *) node)->vartype == NUMERICOID)
	{
		int			p,
					sc;

		if (what->numeric || !pgwarp_numeric_typmod(((Var *) node)->vartypmod, &p, &sc) ||
			p > 18)
			return true;
	}
	/* numeric arithmetic, casts, CASE/COALESCE/NULLIF (constants: see above) */
	if ((IsA(node, OpExpr) || IsA(node, FuncExpr) || IsA(node, CaseExpr) ||
		 IsA(node, CoalesceExpr) || IsA(node, NullIfExpr) ||
		 (what->numeric && IsA(node, Const))) &&
		exprType(node) == NUMERICOID)
		return true;
	if (IsA(node, FuncExpr))
	{
		Oid			f = ((FuncExpr *) node)->funcid;

		if (warp_is_extract_func(f) ||
			(what->date_part && (f == F_DATE_PART_TEXT_TIMESTAMP ||
								 f == F_DATE_PART_TEXT_TIMESTAMPTZ)))
			return true;
	}
	return expression_tree_walker(node, special_walker, context);
}

/*
 * What only the CPU driver computes (warp_row_check): numeric arithmetic
 * and wide numeric columns, text and extract() (numeric even as a group
 * key, where the row evaluator could take its integer: kept simple);
 * numeric(p <= 18) columns read as their unscaled int8 (aggregates,
 * group keys, comparisons with constants), date_trunc, date_part and the
 * date/time conversions run on the GPU too.  (A comparison between two
 * numeric columns passes here but is numeric arithmetic to the engine:
 * the daemon then gives it to the CPU driver, EXPLAIN says so.)
 */
static bool
cpu_only_walker(Node *node, void *context)
{
	SpecialWhat what = {true, false, false};

	return special_walker(node, &what);
}

/*
 * What the engine does not take from a heap fact table (run_cpu_heap
 * deforms fixed-width columns and text, not numeric): numeric columns and
 * expressions, and extract() and date_part(), whose results for the
 * infinite dates and timestamps a heap may hold (Arrow files cannot) are
 * infinities or NULL the engine does not produce; date_trunc, the
 * conversions and comparisons pass infinities on as PostgreSQL does.
 */
static bool
heap_refused_walker(Node *node, void *context)
{
	SpecialWhat what = {false, true, true};

	return special_walker(node, &what);
}

static bool
gpu_can_run(StarInfo *si)
{
	ListCell   *lc;

	if (list_length(si->dims) > WARP_ROW_MAX_JOINS ||
		list_length(si->key_info) > WARP_ROW_MAX_KEYS ||
		list_length(si->agg_info) > WARP_ROW_MAX_AGGS)
		return false;
	if (cpu_only_walker((Node *) si->quals, NULL))
		return false;
	foreach(lc, si->fact_exprs)
	{
		Node	   *e = lfirst(lc);

		/* extract() at a group key's root is its int8 there (numeric_root) */
		if (e && IsA(e, FuncExpr) && warp_is_extract_func(((FuncExpr *) e)->funcid))
		{
			ListCell   *kc;

			foreach(kc, si->key_info)
				if (lsecond((List *) lfirst(kc)) == (void *) e)
				{
					e = (Node *) lsecond(((FuncExpr *) e)->args);
					break;
				}
		}
		if (cpu_only_walker(e, NULL))
			return false;
	}
	foreach(lc, si->agg_info)
	{
		List	   *ai = lfirst(lc);
		WarpType	t = WT_INT8;

		/* numeric arguments: cpu_only_walker kept expressions and wide
		 * columns back; a numeric(p <= 18) column is an int8 sum/min/max */
		if (intVal(linitial(ai)) != WA_COUNT_STAR)
			warp_type_of((Oid) intVal(lfourth(ai)), &t);
		if (!warp_row_agg_exact(intVal(linitial(ai)), t))
			return false;
	}
	return true;
}

/* whether the engine computes every qual of the base relation d */
static bool
dim_quals_compile(RelOptInfo *d)
{
	ListCell   *lc;

	foreach(lc, d->baserestrictinfo)
	{
		RestrictInfo *ri = lfirst(lc);
		WarpBuilder b;

		if (ri->pseudoconstant)
			continue;			/* a gating Result's, not the scan's */
		warp_builder_init(&b, d->relid, NULL);
		if (warp_compile_qual(&b, ri->clause) < 0)
			return false;
	}
	return true;
}

/*
 * The path a dimension runs as: its cheapest one, except where that is a
 * parallel plan (a Gather) of an Arrow table the engine reads itself when
 * it builds the join table (warp_dim_arrow.c: a plain arrow_fdw scan whose
 * quals it computes).  There the serial scan is taken: the engine reads
 * its batches directly, where a Gather would start workers to hand it
 * tuples (SSB SF=20 q2.1: part's 1M rows through a Gather of one worker,
 * 48 ms, which the engine's read does not even use).
 */
static Path *
dim_path(RelOptInfo *d)
{
	Path	   *best = d->cheapest_total_path;
	Path	   *serial = NULL;
	ListCell   *lc;

	if (!pgwarp_enable_dim_scan || IsA(best, ForeignPath) ||
		d->reloptkind != RELOPT_BASEREL || !arrow_fdw_is_arrow_rel(d))
		return best;
	foreach(lc, d->pathlist)
	{
		Path	   *p = lfirst(lc);

		if (IsA(p, ForeignPath) && !p->parallel_aware && p->param_info == NULL &&
			equal(p->pathtarget->exprs, best->pathtarget->exprs) &&
			(serial == NULL || p->total_cost < serial->total_cost))
			serial = p;
	}
	if (serial == NULL || !dim_quals_compile(d))
		return best;
	return serial;
}

/* the cheapest parallel-safe path of rel, or NULL */
static Path *
cheapest_parallel_safe_path(RelOptInfo *rel)
{
	Path	   *best = NULL;
	ListCell   *lc;

	foreach(lc, rel->pathlist)
	{
		Path	   *p = lfirst(lc);

		if (p->parallel_safe && p->param_info == NULL &&
			(best == NULL || p->total_cost < best->total_cost))
			best = p;
	}
	return best;
}

/*
 * The aggregation above the engine's path `in`: PostgreSQL's Finalize
 * Aggregate combining the partial states, or for two-level grouping a
 * plain Aggregate over the engine's distinct rows (sorted by the group
 * keys: DISTINCT aggregates cannot be hashed).
 */
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
} StarCost;

/* cost: a fixed start, per fact row and column, per probe, the dims */
static void
star_costs(StarInfo *si, StarCost *sc)
{
	Bitmapset  *attrs = NULL;
	ListCell   *lc;
	int			k;

	memset(sc, 0, sizeof(*sc));
	sc->dims_safe = true;
	if (si->heap)
	{
		/* every page read; tuples fetched and deformed by the table AM */
		sc->fact_rows = si->fact->tuples;
		sc->fact_bytes = (double) si->fact->pages * BLCKSZ;
		sc->fact_batches = Max(1.0, sc->fact_rows / WARP_HEAP_BATCH_ROWS);
	}
	else
		arrow_fdw_rel_estimates(si->fact, &sc->fact_rows, &sc->fact_batches, &sc->fact_bytes);
	pull_varattnos((Node *) si->quals, si->fact->relid, &attrs);
	pull_varattnos((Node *) si->fact_keys, si->fact->relid, &attrs);
	pull_varattnos((Node *) si->fact_exprs, si->fact->relid, &attrs);
	k = -1;
	while ((k = bms_next_member(attrs, k)) >= 0)
		sc->fact_attrs = lappend_int(sc->fact_attrs, k + FirstLowInvalidHeapAttributeNumber);
	sc->fact_cost = sc->fact_rows * (WARP_ROW_COST + WARP_COLUMN_COST * list_length(sc->fact_attrs) +
									 WARP_PROBE_COST * list_length(si->dims)) +
		seq_page_cost * sc->fact_bytes / BLCKSZ;
	if (si->heap)
		sc->fact_cost += sc->fact_rows * (WARP_HEAP_TUPLE_COST +
										  WARP_HEAP_COLUMN_COST * list_length(sc->fact_attrs));
	foreach(lc, si->dims)
	{
		RelOptInfo *d = lfirst(lc);
		Path	   *sp = cheapest_parallel_safe_path(d);

		sc->dims_cost += dim_path(d)->total_cost + WARP_BUILD_COST * d->rows;
		if (sp == NULL ||
			!equal(sp->pathtarget->exprs, d->cheapest_total_path->pathtarget->exprs))
			sc->dims_safe = false;
		else
		{
			sc->par_dims_cost += sp->total_cost + WARP_BUILD_COST * d->rows;
			sc->par_dim_paths = lappend(sc->par_dim_paths, sp);
		}
	}
}

/*
 * The serial engine path of a star: its dimension plans as children; the
 * caller sets flags, custom_private and methods.
 */
static CustomPath *
star_path(RelOptInfo *parent, PathTarget *target, StarInfo *si, double rows,
		  Cost startup, Cost total)
{
	CustomPath *cp = makeNode(CustomPath);
	ListCell   *lc;

	cp->path.pathtype = T_CustomScan;
	cp->path.parent = parent;
	cp->path.pathtarget = target;
	cp->path.param_info = NULL;
	cp->path.parallel_aware = false;
	cp->path.parallel_safe = false;
	cp->path.parallel_workers = 0;
	cp->path.rows = rows;
	cp->path.startup_cost = startup;
	cp->path.total_cost = total;
	cp->path.pathkeys = NIL;
	cp->flags = 0;
	foreach(lc, si->dims)
		cp->custom_paths = lappend(cp->custom_paths, dim_path((RelOptInfo *) lfirst(lc)));
	return cp;
}

/* whether a path has WarpJoin or WarpScan under it (through the upper
 * paths PostgreSQL puts over a scan/join relation's paths) */
static bool
has_row_join(Path *p)
{
	ListCell   *lc;

	if (p == NULL)
		return false;
	switch (nodeTag(p))
	{
		case T_CustomPath:
			if (((CustomPath *) p)->methods == &warp_join_path_methods ||
				((CustomPath *) p)->methods == &warp_scan_path_methods)
				return true;
			foreach(lc, ((CustomPath *) p)->custom_paths)
				if (has_row_join(lfirst(lc)))
					return true;
			return false;
		case T_AggPath:
			return has_row_join(((AggPath *) p)->subpath);
		case T_GroupingSetsPath:
			return has_row_join(((GroupingSetsPath *) p)->subpath);
		case T_GroupPath:
			return has_row_join(((GroupPath *) p)->subpath);
		case T_SortPath:
		case T_IncrementalSortPath:
			return has_row_join(((SortPath *) p)->subpath);
		case T_ProjectionPath:
			return has_row_join(((ProjectionPath *) p)->subpath);
		case T_GatherPath:
			return has_row_join(((GatherPath *) p)->subpath);
		case T_GatherMergePath:
			return has_row_join(((GatherMergePath *) p)->subpath);
		case T_MaterialPath:
			return has_row_join(((MaterialPath *) p)->subpath);
		case T_NestPath:
		case T_MergePath:
		case T_HashPath:
			/* WarpJoin for part of the joins, PostgreSQL's above */
			return has_row_join(((JoinPath *) p)->outerjoinpath) ||
				has_row_join(((JoinPath *) p)->innerjoinpath);
		case T_UpperUniquePath:
			return has_row_join(((UpperUniquePath *) p)->subpath);
		default:
			return false;
	}
}

/*
 * WarpPreAgg takes the query: drop the paths PostgreSQL built by
 * aggregating WarpJoin's (or WarpScan's) rows.  The cost model can rank them close (both
 * scan the fact table on the engine), but the engine aggregating is always
 * the faster of the two: it never makes a row of every joined fact row.
 */
static void
drop_row_join_paths(RelOptInfo *rel)
{
	ListCell   *lc;

	foreach(lc, rel->pathlist)
		if (has_row_join(lfirst(lc)))
			rel->pathlist = foreach_delete_current(rel->pathlist, lc);
	foreach(lc, rel->partial_pathlist)
		if (has_row_join(lfirst(lc)))
			rel->partial_pathlist = foreach_delete_current(rel->partial_pathlist, lc);
}

/*
 * The plan's custom_private (warp_exec.c warp_begin reads it):
 *   0  (fact relid, first relid of the path's relation: setrefs' offset)
 *   1  fact quals, in evaluation order     2  fact attnos read
 *   3  per join (star_joins)               4  (key_info, agg_info, outmap,
 *                                             gate: constant quals)
 *   5  (fact table OID)                    6  0: this backend; 1 +
 *      GpudDeviceKind: pg_warp_gpud        7  1: a heap fact table
 *   8, 9  count(DISTINCT) counted here: its key and aggregate, or -1
 *   10 1: row mode (WarpJoin, WarpScan)
 *   11 (row mode, optional) ORDER BY ... LIMIT kept in the node (topn_order)
 */
static List *
star_private(PlannerInfo *root, StarInfo *si, StarCost *sc, List *joins, Relids relids,
			 int where, bool rows)
{
	List	   *priv;

	priv = list_make5(list_make2(makeInteger(si->fact->relid),
								 makeInteger(bms_next_member(relids, -1))),
					  si->quals,
					  sc->fact_attrs,
					  joins,
					  list_make4(si->key_info, si->agg_info, si->outmap, si->gate));
	priv = lappend(priv, list_make1_oid(planner_rt_fetch(si->fact->relid, root)->relid));
	priv = lappend(priv, makeInteger(where));
	priv = lappend(priv, makeInteger(si->heap ? 1 : 0));
	priv = lappend(priv, makeInteger(si->distinct_key));
	priv = lappend(priv, makeInteger(si->distinct_agg));
	priv = lappend(priv, makeInteger(rows ? 1 : 0));
	return priv;
}

static void
add_final_agg(PlannerInfo *root, RelOptInfo *output_rel, GroupPathExtraData *extra,
			  StarInfo *si, Path *in, double ngroups)
{
	Query	   *parse = root->parse;
	AggClauseCosts costs;
	AggPath    *ap;

	if (OidIsValid(si->merge_fn))
	{
		warp_add_merge_path(root, output_rel, in, extra->havingQual,
							si->merge_plain, si->merge_partial, si->merge_fn, ngroups);
		return;
	}
	memset(&costs, 0, sizeof(costs));
	if (!si->two_level)
	{
		get_agg_clause_costs(root, AGGSPLIT_FINAL_DESERIAL, &costs);
		ap = create_agg_path(root, output_rel, in, output_rel->reltarget,
							 parse->groupClause ? AGG_HASHED : AGG_PLAIN,
							 AGGSPLIT_FINAL_DESERIAL, parse->groupClause,
							 (List *) extra->havingQual, &costs, ngroups);
	}
	else
	{
		get_agg_clause_costs(root, AGGSPLIT_SIMPLE, &costs);
		/* (no pathkeys: every group key is a constant, one group) */
		if (parse->groupClause && !pathkeys_contained_in(root->group_pathkeys, in->pathkeys))
			in = (Path *) create_sort_path(root, in->parent, in, root->group_pathkeys, -1.0);
		ap = create_agg_path(root, output_rel, in, output_rel->reltarget,
							 parse->groupClause ? AGG_SORTED : AGG_PLAIN,
							 AGGSPLIT_SIMPLE, parse->groupClause,
							 (List *) extra->havingQual, &costs, ngroups);
	}
	add_path(output_rel, (Path *) ap);
}

static void
try_preagg(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *output_rel,
		   GroupPathExtraData *extra)
{
	Query	   *parse = root->parse;
	StarInfo	si;
	ListCell   *lc;
	CustomPath *cp;
	StarCost	sc;
	double		ngroups;
	double		engine_rows;
	Cost		cost;
	bool		on_daemon = false;
	int			daemon_kind = GPUD_DEVICE_CPU;
	/* the CPU driver's threads in this backend (1: parallel plans instead) */
	int			cpu_threads = pgwarp_cpu_thread_count();

	memset(&si, 0, sizeof(si));
	if (!find_star(root, input_rel, &si))
		return;
	if (parse->groupClause && !grouping_is_hashable(parse->groupClause))
	{
		not_offloaded("group keys that cannot be hashed");
		return;
	}
	if (!star_fact_quals(root, &si))
		return;
	if (!build_partial_target(root, output_rel, extra, &si))
		return;
	if (si.two_level && parse->groupClause && !grouping_is_sortable(parse->groupClause))
	{
		not_offloaded("DISTINCT aggregates with group keys that cannot be sorted");
		return;
	}
	if (si.heap && (heap_refused_walker((Node *) si.quals, NULL) ||
					heap_refused_walker((Node *) si.fact_exprs, NULL) ||
					heap_refused_walker((Node *) si.fact_keys, NULL)))
	{
		not_offloaded("heap fact table: numeric and date/time functions are read from Arrow files only");
		return;
	}

	if (!star_dims_fit(&si))
		return;

	/*
	 * Where it runs: on pg_warp_gpud (mode gpu: whatever the daemon drives;
	 * auto: only a GPU), or on the CPU driver in the backend.  Daemon plans
	 * are not parallel: the daemon does the reading.
	 */
	if (pgwarp_mode != PGWARP_MODE_CPU && !si.heap)
	{
		int			kind;
		bool		serving = pgwarp_gpud_serving(&kind);

		daemon_kind = kind;

		if (pgwarp_mode == PGWARP_MODE_GPU && !serving)
		{
			not_offloaded("pg_warp.mode = gpu, and pg_warp_gpud is not running");
			return;
		}
		on_daemon = serving && (pgwarp_mode == PGWARP_MODE_GPU ||
								(kind == GPUD_DEVICE_GPU && gpu_can_run(&si)));
	}

	star_costs(&si, &sc);
	if (on_daemon && daemon_kind == GPUD_DEVICE_GPU)
		cost = WARP_STARTUP_COST + sc.fact_cost / WARP_GPU_FACTOR + sc.dims_cost;
	else
		cost = WARP_STARTUP_COST + sc.fact_cost / (on_daemon || si.heap ? 1 : cpu_threads) +
			sc.dims_cost;
	if (parse->groupClause)
		ngroups = estimate_num_groups(root,
									  get_sortgrouplist_exprs(parse->groupClause,
															  extra->targetList),
									  input_rel->rows, NULL, NULL);
	else
		ngroups = 1;
	/* the engine's rows: one per group, or per distinct (keys, arguments) */
	engine_rows = ngroups;
	if (si.two_level)
	{
		List	   *exprs = NIL;

		foreach(lc, si.partial_target->exprs)
			if (!IsA(lfirst(lc), Aggref))
				exprs = lappend(exprs, lfirst(lc));
		engine_rows = estimate_num_groups(root, exprs, input_rel->rows, NULL, NULL);
	}

	cp = star_path(fetch_upper_rel(root, UPPERREL_PARTIAL_GROUP_AGG, input_rel->relids),
				   si.partial_target, &si, engine_rows, cost, cost + engine_rows * cpu_tuple_cost);
	{
		List	   *joins;

		if (!star_joins(&si, &joins))
			return;
		/* 0: the backend's CPU driver; 1 + GpudDeviceKind: pg_warp_gpud */
		cp->custom_private = star_private(root, &si, &sc, joins, input_rel->relids,
										  on_daemon ? 1 + daemon_kind : 0, false);
	}
	cp->methods = &warp_preagg_path_methods;

	/* the engine aggregates: PostgreSQL's Agg over WarpJoin's rows goes */
	drop_row_join_paths(output_rel);
	add_final_agg(root, output_rel, extra, &si, &cp->path, ngroups);

	/*
	 * The parallel plan: Finalize Aggregate -> Gather -> WarpPreAgg, every
	 * participant claiming fact batches from a shared counter, building the
	 * (small) dimension tables itself and emitting its own partial states.
	 * Only with pg_warp.cpu_threads = 1: otherwise the serial plan above runs
	 * the engine on that many threads of the backend, which is the same
	 * split of the work without starting worker processes (about 12 ms on a
	 * small VM, more once the session has loaded llvmjit, which every worker
	 * then loads too).  A heap fact table is read by PostgreSQL's table AM,
	 * which only the process can call: its plan is parallel whatever the
	 * threads (a parallel heap scan hands out the pages).
	 */
	if (!on_daemon && (cpu_threads == 1 || si.heap) && si.distinct_agg < 0 &&
		input_rel->consider_parallel &&
		si.fact->consider_parallel && max_parallel_workers_per_gather > 0)
	{
		int			workers;
		double		divisor;
		CustomPath *pp;
		GatherPath *gp;
		double		grows;

		workers = compute_parallel_worker(si.fact, sc.fact_bytes / BLCKSZ, -1,
										  max_parallel_workers_per_gather);
		workers = Min(workers, (int) Min(sc.fact_batches, (double) INT_MAX));
		if (sc.dims_safe && workers > 0)
		{
			divisor = workers + (parallel_leader_participation ? 1.0 : 0.0);
			pp = makeNode(CustomPath);
			memcpy(pp, cp, sizeof(CustomPath));
			pp->path.parallel_aware = true;
			pp->path.parallel_safe = true;
			pp->path.parallel_workers = workers;
			pp->path.rows = engine_rows;
			/* every participant builds the dimensions; the fact is split */
			pp->custom_paths = sc.par_dim_paths;
			pp->path.startup_cost = WARP_STARTUP_COST + sc.par_dims_cost + sc.fact_cost / divisor;
			pp->path.total_cost = pp->path.startup_cost + engine_rows * cpu_tuple_cost;
			grows = engine_rows * divisor;
			gp = create_gather_path(root, cp->path.parent, &pp->path, si.partial_target,
									NULL, &grows);
			add_final_agg(root, output_rel, extra, &si, &gp->path, ngroups);
		}
	}
}

static void
warp_upper_paths(PlannerInfo *root, UpperRelationKind stage, RelOptInfo *input_rel,
				 RelOptInfo *output_rel, void *extra)
{
	if (prev_upper_paths_hook)
		prev_upper_paths_hook(root, stage, input_rel, output_rel, extra);
	if (stage != UPPERREL_GROUP_AGG || !pgwarp_enabled || !pgwarp_enable_preagg)
		return;
	if (input_rel->reloptkind != RELOPT_BASEREL && input_rel->reloptkind != RELOPT_JOINREL)
		return;
	try_preagg(root, input_rel, output_rel, (GroupPathExtraData *) extra);
}

/* ------------------------------------------------------ joins, no aggregates */

/*
 * Top-N inside the node: largest LIMIT (plus OFFSET) whose rows the node
 * keeps itself (warp_topn.c); a bigger one is PostgreSQL's sort.
 */
#define WARP_TOPN_MAX_ROWS	100000

/*
 * ORDER BY ... LIMIT of a query whose rows are rel's, as custom_private item
 * 11 (warp_exec.c reads it): (output columns, ordering operators,
 * collations, NULLS FIRST flags, (bound)), or NIL when the
 * node cannot return its rows in that order itself: every ORDER BY item
 * must be one of rel's output columns, every output a column or a
 * constant, and nothing may come between the scan/join and the LIMIT (no
 * aggregation, window, DISTINCT, set-returning function or row locking).  The ordering is the
 * operator's own (sort support), so it is PostgreSQL's for every type and
 * collation.
 */
static List *
topn_order(PlannerInfo *root, RelOptInfo *rel, PathTarget **target)
{
	Query	   *parse = root->parse;
	List	   *outputs = rel->reltarget->exprs;
	bool		exprs = false;
	List	   *cols = NIL,
			   *ops = NIL,
			   *colls = NIL,
			   *nulls_first = NIL;
	ListCell   *lc;

	if (!bms_equal(rel->relids, root->all_baserels) ||
		parse->sortClause == NIL || root->limit_tuples < 1 ||
		root->limit_tuples > WARP_TOPN_MAX_ROWS || parse->hasAggs ||
		parse->groupClause != NIL || parse->groupingSets != NIL || parse->hasWindowFuncs ||
		parse->distinctClause != NIL || parse->hasTargetSRFs || parse->setOperations != NULL ||
		parse->rowMarks != NIL || parse->limitOption == LIMIT_OPTION_WITH_TIES ||
		root->query_pathkeys == NIL ||
		compare_pathkeys(root->query_pathkeys, root->sort_pathkeys) != PATHKEYS_EQUAL)
		return NIL;

	/*
	 * PostgreSQL computes the output expressions of every row before its
	 * sort, so an error there (a + 1 overflowing in a row that is not
	 * among the first N) is raised: kept in the node after the first N
	 * rows, a projection would not see it.  So output expressions become
	 * the node's own columns, computed by the engine for every row (those
	 * it cannot compute refuse the path).  Expensive ones PostgreSQL
	 * computes after the LIMIT (make_sort_input_target): not offered.
	 */
	*target = NULL;
	foreach(lc, root->processed_tlist)
	{
		TargetEntry *te = lfirst(lc);
		Expr	   *e = te->expr;
		QualCost	qc;

		while (e && IsA(e, RelabelType))
			e = ((RelabelType *) e)->arg;
		if (e == NULL)
			return NIL;
		if (IsA(e, Var) || IsA(e, Const) || IsA(e, Param))
			continue;
		if (contain_volatile_functions((Node *) e) || expression_returns_set((Node *) e))
			return NIL;
		cost_qual_eval_node(&qc, (Node *) e, root);
		if (te->ressortgroupref == 0 && qc.per_tuple > 10 * cpu_operator_cost)
			return NIL;
		exprs = true;
	}
	if (exprs)
	{
		*target = create_empty_pathtarget();
		foreach(lc, root->processed_tlist)
		{
			Expr	   *e = ((TargetEntry *) lfirst(lc))->expr;

			if (IsA(e, Const) || IsA(e, Param) || list_member((*target)->exprs, e))
				continue;
			add_column_to_pathtarget(*target, e, 0);
		}
		set_pathtarget_cost_width(root, *target);
		outputs = (*target)->exprs;
	}
	foreach(lc, root->query_pathkeys)
	{
		PathKey    *pk = lfirst(lc);
		EquivalenceClass *ec = pk->pk_eclass;
		ListCell   *mc;
		int			col = -1;
		Oid			type = InvalidOid,
					op;

		if (ec->ec_has_volatile)
			return NIL;
		foreach(mc, ec->ec_members)
		{
			EquivalenceMember *em = lfirst(mc);
			Expr	   *e = em->em_expr;
			Expr	   *bare = e;
			ListCell   *tc;

			if (em->em_is_child)
				continue;
			while (bare && IsA(bare, RelabelType))
				bare = ((RelabelType *) bare)->arg;
			foreach(tc, outputs)
			{
				if (equal(lfirst(tc), e) || equal(lfirst(tc), bare))
				{
					col = foreach_current_index(tc);
					type = em->em_datatype;
					break;
				}
			}
			if (col >= 0)
				break;
		}
		if (col < 0)
			return NIL;
		op = get_opfamily_member(pk->pk_opfamily, type, type, pk->pk_strategy);
		if (!OidIsValid(op))
			return NIL;
		cols = lappend_int(cols, col);
		ops = lappend_oid(ops, op);
		colls = lappend_oid(colls, ec->ec_collation);
		nulls_first = lappend_int(nulls_first, pk->pk_nulls_first ? 1 : 0);
	}
	return list_make5(cols, ops, colls, nulls_first, list_make1_int((int) root->limit_tuples));
}

/*
 * A star join whose rows PostgreSQL needs: a path for the relation of the
 * whole FROM list (WarpJoin) whose engine filters the fact table, probes
 * every dimension and returns each joined row, its columns taken as "group
 * keys" of a program in row mode (WarpProgram.emit_rows: appended, never
 * merged).  PostgreSQL's own steps above it (projection, ORDER BY, LIMIT,
 * DISTINCT, window functions, and an aggregation WarpPreAgg does not take:
 * drop_row_join_paths removes the Agg-over-WarpJoin paths where it does)
 * run as usual.  The executor streams:
 * a batch's rows go up before the next batch is read, so LIMIT stops the
 * scan and memory stays one batch's rows.  The CPU driver in the backend,
 * serial, or one participant of a Gather each; never pg_warp_gpud.
 *
 * The same for the one Arrow table of a query without joins (WarpScan,
 * rel a base relation): a star without dimensions, whose engine filters
 * the rows on its threads and returns the columns PostgreSQL needs.
 */
/*
 * Whether root plans planagg.c's subquery for min(x)/max(x): ORDER BY x
 * LIMIT 1 with "x IS NOT NULL" put first among the quals (the NullTest it
 * builds, location -1; a user's has a location).  PostgreSQL then orders
 * that test among the quals by cost, so x is computed for rows the
 * query's own quals would have dropped: an x that can fail (a + b
 * overflowing) raises an error the plain aggregate, which computes x only
 * for qualifying rows, does not.  PostgreSQL takes that path only where it
 * is cheap (an index), so it rarely shows; a WarpScan would make it
 * cheap everywhere, and WarpPreAgg computes min/max as the aggregate does.
 */
static bool
minmax_subquery(PlannerInfo *root)
{
	Query	   *parse = root->parse;
	ListCell   *lc;

	if (parse->hasAggs || root->limit_tuples != 1.0 || parse->jointree == NULL ||
		parse->jointree->quals == NULL || !IsA(parse->jointree->quals, List))
		return false;
	foreach(lc, (List *) parse->jointree->quals)
	{
		NullTest   *nt = lfirst(lc);

		if (IsA(nt, NullTest) && nt->nulltesttype == IS_NOT_NULL && nt->location == -1)
			return true;
	}
	return false;
}

/*
 * The serial row-mode path of rel whose output columns are `outputs` (its
 * pathtarget `target`): plain columns, or for a Top-N target also fact
 * expressions the engine computes; NULL (reason noted) if refused.  si and
 * sc describe it for the caller.
 */
static CustomPath *
rows_path(PlannerInfo *root, RelOptInfo *rel, PathTarget *target, StarInfo *si, StarCost *sc)
{
	PathTarget *scratch = create_empty_pathtarget();
	ListCell   *lc;
	CustomPath *cp;
	List	   *joins;
	Cost		startup,
				run;
	int			d;

	memset(si, 0, sizeof(*si));
	si->distinct_key = si->distinct_agg = -1;
	if (minmax_subquery(root))
		return NULL;			/* no reason: the aggregate is offloaded */
	if (!find_star(root, rel, si))
		return NULL;
	if (si->heap)
	{
		not_offloaded("joins without aggregation over a heap fact table stay PostgreSQL's");
		return NULL;
	}
	if (pgwarp_mode == PGWARP_MODE_GPU)
	{
		not_offloaded("pg_warp.mode = gpu, and joins without aggregation run on the CPU engine only");
		return NULL;
	}
	if (!star_fact_quals(root, si))
		return NULL;
	si->payload = NIL;
	for (d = 0; d < list_length(si->dims); d++)
		si->payload = lappend(si->payload, NIL);
	/* every column the plan above needs is one output "key" */
	foreach(lc, target->exprs)
	{
		Var		   *v = lfirst(lc);

		if (IsA(v, Var) && (v->varattno <= 0 || v->varlevelsup != 0))
		{
			not_offloaded("an output that is not a user column (whole row, system column)");
			return NULL;
		}
		if (!add_group_key_as(si, scratch, (Expr *) v, 0, true))
			return NULL;
	}
	if (list_length(si->key_info) > 64)
	{
		not_offloaded("more than 64 output columns");
		return NULL;
	}
	if (!star_dims_fit(si))
		return NULL;
	star_costs(si, sc);
	if (!star_joins(si, &joins))
		return NULL;

	/* the dimensions before the first row; then the fact scan streams, on
	 * pg_warp.cpu_threads threads */
	startup = WARP_STARTUP_COST + sc->dims_cost;
	run = sc->fact_cost / pgwarp_cpu_thread_count() + rel->rows * cpu_tuple_cost;

	cp = star_path(rel, target, si, rel->rows, startup, startup + run);
	cp->flags = CUSTOMPATH_SUPPORT_PROJECTION;
	cp->custom_private = star_private(root, si, sc, joins, rel->relids, 0, true);
	cp->methods = rel->reloptkind == RELOPT_BASEREL ?
		&warp_scan_path_methods : &warp_join_path_methods;
	return cp;
}

static void
try_join_rows(PlannerInfo *root, RelOptInfo *rel)
{
	StarInfo	si;
	StarCost	sc;
	CustomPath *cp,
			   *tp = NULL;
	List	   *order;
	PathTarget *topn_target = NULL;
	double		rows = rel->rows;
	Cost		startup;

	if ((cp = rows_path(root, rel, rel->reltarget, &si, &sc)) == NULL)
		return;
	startup = cp->path.startup_cost;

	/*
	 * ORDER BY ... LIMIT: a path that keeps the best rows itself and returns
	 * them in order (pathkeys), so PostgreSQL puts only the Limit above; the
	 * same scan, a comparison per row instead of a tuple per row.  Where
	 * the query's outputs or ORDER BY items are fact expressions, its
	 * target is those: the engine computes them for every row, as
	 * PostgreSQL does before its sort (and raises their errors so).  Made
	 * before add_path(cp) like the partial paths.
	 */
	order = topn_order(root, rel, &topn_target);
	if (order != NIL)
	{
		if (topn_target == NULL)
		{
			tp = makeNode(CustomPath);
			memcpy(tp, cp, sizeof(CustomPath));
		}
		else
		{
			/* a refusal here is not the query's reason for EXPLAIN */
			char		saved[sizeof(last_reason)];
			StarInfo	si2;
			StarCost	sc2;

			strlcpy(saved, last_reason, sizeof(saved));
			tp = rows_path(root, rel, topn_target, &si2, &sc2);
			strlcpy(last_reason, saved, sizeof(last_reason));
		}
	}
	if (tp != NULL)
	{
		tp->custom_private = lappend(list_copy(tp->custom_private), order);
		tp->path.pathkeys = root->query_pathkeys;
		tp->path.rows = Min(rows, root->limit_tuples);
		tp->path.total_cost = startup + sc.fact_cost / pgwarp_cpu_thread_count() +
			rows * cpu_operator_cost * list_length(root->query_pathkeys) +
			tp->path.rows * cpu_tuple_cost;
		/* nothing comes out before the whole scan */
		tp->path.startup_cost = tp->path.total_cost;
	}

	/*
	 * The partial path: each participant claims fact batches and returns
	 * its joined rows; PostgreSQL puts the Gather above (every participant
	 * builds the dimension tables itself, as for WarpPreAgg).  Made before
	 * add_path(cp), which frees cp if another path dominates it.
	 */
	if (rel->consider_parallel && si.fact->consider_parallel &&
		max_parallel_workers_per_gather > 0 && sc.dims_safe)
	{
		int			workers;
		double		divisor;
		CustomPath *pp;

		workers = compute_parallel_worker(si.fact, sc.fact_bytes / BLCKSZ, -1,
										  max_parallel_workers_per_gather);
		/*
		 * PostgreSQL's rule grows the workers with the log of the bytes
		 * read, which the Arrow columns keep small; the engine's work grows
		 * with the rows: one more participant per million fact rows, up to
		 * the limit (H200, SSB SF=20: 6 workers by the bytes, 16 by rows)
		 */
		if (si.fact->rel_parallel_workers < 0)
			workers = Max(workers, (int) Min(sc.fact_rows / 1e6,
											 (double) max_parallel_workers_per_gather));
		workers = Min(workers, (int) Min(sc.fact_batches, (double) INT_MAX));
		if (workers > 0)
		{
			divisor = workers + (parallel_leader_participation ? 1.0 : 0.0);
			pp = makeNode(CustomPath);
			memcpy(pp, cp, sizeof(CustomPath));
			pp->path.parallel_aware = true;
			pp->path.parallel_safe = true;
			pp->path.parallel_workers = workers;
			pp->path.rows = clamp_row_est(rows / divisor);
			pp->custom_paths = sc.par_dim_paths;
			pp->path.startup_cost = WARP_STARTUP_COST + sc.par_dims_cost;
			pp->path.total_cost = pp->path.startup_cost + sc.fact_cost / divisor +
				pp->path.rows * cpu_tuple_cost;
			if (tp != NULL)
			{
				/* each participant's first rows, in order: a Gather Merge
				 * above merges them (made before add_partial_path(pp)) */
				CustomPath *tpp = makeNode(CustomPath);

				memcpy(tpp, pp, sizeof(CustomPath));
				tpp->path.pathtarget = tp->path.pathtarget;
				tpp->custom_private = tp->custom_private;
				tpp->path.pathkeys = root->query_pathkeys;
				tpp->path.rows = Min(pp->path.rows, root->limit_tuples);
				tpp->path.total_cost = pp->path.startup_cost + sc.fact_cost / divisor +
					pp->path.rows * cpu_operator_cost * list_length(root->query_pathkeys) +
					tpp->path.rows * cpu_tuple_cost;
				tpp->path.startup_cost = tpp->path.total_cost;
				add_partial_path(rel, &tpp->path);
			}
			add_partial_path(rel, &pp->path);
		}
	}
	if (tp != NULL)
		add_path(rel, &tp->path);
	add_path(rel, &cp->path);
}

/*
 * try_join_rows for a hook.  With aggregation, why WarpPreAgg did not take
 * the query is the reason EXPLAIN VERBOSE gives, not why the rows could not
 * come from the engine (a heap fact table, pg_warp.mode = gpu: WarpPreAgg
 * may well take those).
 */
static void
try_rows(PlannerInfo *root, RelOptInfo *rel)
{
	Query	   *parse = root->parse;

	if (parse->hasAggs || parse->groupClause != NIL || parse->groupingSets != NIL)
	{
		char		saved[sizeof(last_reason)];

		strlcpy(saved, last_reason, sizeof(saved));
		try_join_rows(root, rel);
		strlcpy(last_reason, saved, sizeof(saved));
	}
	else
		try_join_rows(root, rel);
}

static void
warp_join_paths(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
				RelOptInfo *innerrel, JoinType jointype, JoinPathExtraData *extra)
{
	Query	   *parse = root->parse;
	ListCell   *lc;

	if (prev_join_pathlist_hook)
		prev_join_pathlist_hook(root, joinrel, outerrel, innerrel, jointype, extra);
	if (!pgwarp_enabled || !pgwarp_enable_join)
		return;
	/* aggregation too: WarpPreAgg, if it takes the query, drops these paths */
	if (parse->commandType != CMD_SELECT)
		return;
	/* once per relation: this hook runs for every way of splitting it */
	foreach(lc, list_concat_copy(joinrel->pathlist, joinrel->partial_pathlist))
		if (IsA(lfirst(lc), CustomPath) &&
			((CustomPath *) lfirst(lc))->methods == &warp_join_path_methods)
			return;
	if (bms_equal(joinrel->relids, root->all_baserels))
		try_rows(root, joinrel);
	else
	{
		/*
		 * Part of the FROM list: the star grows a depth at a time, so a
		 * query whose other joins the engine cannot do (a table that is no
		 * dimension, a full join, a condition across tables) still has the
		 * fact table and its dimensions joined by the engine, PostgreSQL
		 * joining the rest above.  Why a part was refused is not the
		 * query's reason for EXPLAIN VERBOSE.
		 */
		char		saved[sizeof(last_reason)];
		int			rti = -1;

		/* (rows of a heap fact table are PostgreSQL's: no Arrow, nothing) */
		while ((rti = bms_next_member(joinrel->relids, rti)) >= 0)
			if (root->simple_rel_array[rti] != NULL &&
				arrow_fdw_is_arrow_rel(root->simple_rel_array[rti]))
				break;
		if (rti < 0)
			return;
		strlcpy(saved, last_reason, sizeof(saved));
		try_join_rows(root, joinrel);
		strlcpy(last_reason, saved, sizeof(last_reason));
	}
}

/*
 * set_rel_pathlist_hook: WarpScan for the one Arrow table of a query
 * without joins.  Joins are WarpJoin's (warp_join_paths); an Arrow table
 * scanned below one of PostgreSQL's joins keeps arrow_fdw's scan, with the
 * engine as its row prefilter (warp_scan_filter.c).
 */
static void
warp_rel_paths(PlannerInfo *root, RelOptInfo *rel, Index rti, RangeTblEntry *rte)
{
	if (prev_rel_pathlist_hook)
		prev_rel_pathlist_hook(root, rel, rti, rte);
	if (!pgwarp_enabled || !pgwarp_enable_scan || rel->reloptkind != RELOPT_BASEREL ||
		!bms_equal(rel->relids, root->all_baserels) ||
		root->parse->commandType != CMD_SELECT || !arrow_fdw_is_arrow_rel(rel) ||
		pgwarp_mode == PGWARP_MODE_GPU)
		return;
	try_rows(root, rel);
}

/* ---------------------------------------------------------------- plan */

static bool
exec_param_walker(Node *node, List **params)
{
	if (node == NULL)
		return false;
	if (IsA(node, Param) && ((Param *) node)->paramkind == PARAM_EXEC)
	{
		*params = list_append_unique(*params, node);
		return false;
	}
	return expression_tree_walker(node, exec_param_walker, params);
}

/*
 * The subquery values (PARAM_EXEC) anywhere in custom_private's
 * expressions, which the node evaluates when it builds its program.  They
 * become the plan's custom_exprs, the one list finalize_plan reads, so the
 * node's extParam names them and a new value (an outer query's next row)
 * rescans it.
 */
static void
collect_exec_params(Node *node, List **params)
{
	ListCell   *lc;

	if (node == NULL)
		return;
	if (IsA(node, List))
	{
		foreach(lc, (List *) node)
			collect_exec_params(lfirst(lc), params);
		return;
	}
	if (IsA(node, IntList) || IsA(node, OidList) || IsA(node, Integer) ||
		IsA(node, String) || IsA(node, Float) || IsA(node, Boolean))
		return;
	(void) exec_param_walker(node, params);
}

static Plan *
warp_plan_custom_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
					  List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cs = makeNode(CustomScan);

	cs->scan.plan.targetlist = tlist;
	cs->scan.plan.qual = NIL;
	cs->scan.scanrelid = 0;
	if (best_path->methods == &warp_scan_path_methods)
		cs->scan.scanrelid = rel->relid;	/* EXPLAIN: "on <table>" */
	if (best_path->methods == &warp_join_path_methods ||
		best_path->methods == &warp_scan_path_methods)
	{
		/*
		 * WarpJoin projects (CUSTOMPATH_SUPPORT_PROJECTION): the scan tuple
		 * is the path's own columns, in the order of the program's output
		 * map, and tlist (NIL when the caller puts the projection on later)
		 * any expressions over them, computed by ExecScan
		 */
		cs->custom_scan_tlist = make_tlist_from_pathtarget(best_path->path.pathtarget);
		if (tlist == NIL)
			cs->scan.plan.targetlist = copyObject(cs->custom_scan_tlist);
	}
	else
		cs->custom_scan_tlist = copyObject(tlist);
	cs->custom_plans = custom_plans;
	cs->custom_exprs = NIL;
	collect_exec_params((Node *) best_path->custom_private, &cs->custom_exprs);
	cs->custom_private = best_path->custom_private;
	cs->flags = best_path->flags;
	if (best_path->methods == &warp_join_path_methods)
		cs->methods = &warp_join_scan_methods;
	else if (best_path->methods == &warp_scan_path_methods)
		cs->methods = &warp_scan_scan_methods;
	else
		cs->methods = &warp_preagg_scan_methods;
	return &cs->scan.plan;
}

void
pgwarp_planner_init(void)
{
	warp_preagg_path_methods.CustomName = "WarpPreAgg";
	warp_preagg_path_methods.PlanCustomPath = warp_plan_custom_path;
	warp_join_path_methods.CustomName = "WarpJoin";
	warp_join_path_methods.PlanCustomPath = warp_plan_custom_path;
	warp_scan_path_methods.CustomName = "WarpScan";
	warp_scan_path_methods.PlanCustomPath = warp_plan_custom_path;
	prev_upper_paths_hook = create_upper_paths_hook;
	create_upper_paths_hook = warp_upper_paths;
	prev_join_pathlist_hook = set_join_pathlist_hook;
	set_join_pathlist_hook = warp_join_paths;
	prev_rel_pathlist_hook = set_rel_pathlist_hook;
	set_rel_pathlist_hook = warp_rel_paths;
	prev_explain_hook = ExplainOneQuery_hook;
	ExplainOneQuery_hook = warp_explain_one_query;
}
