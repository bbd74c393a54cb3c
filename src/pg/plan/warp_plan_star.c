/*
 * warp_plan_star.c — finding the star of a query.
 *
 * find_star decides whether the relations of a scan/join relation form a
 * star the engine runs: the fact table (the largest arrow_fdw relation, or
 * a big heap table), the dimensions (a base relation, or a snowflake arm
 * PostgreSQL joins itself), each joined to the fact table by one equality
 * (or two int2/int4 columns packed into one int8 key), inner, left, semi
 * or anti.  star_fact_quals takes the fact table's quals in PostgreSQL's
 * order of evaluation, star_dims_fit checks the dimensions' size.  What
 * the star is made into lives in warp_plan.c (WarpPreAgg) and
 * warp_plan_rows.c (WarpJoin, WarpScan); which expressions the engine
 * takes, in warp_plan_admit.c.
 */

#include "postgres.h"

#include "catalog/pg_class.h"
#include "mb/pg_wchar.h"
#include "nodes/makefuncs.h"
#include "optimizer/pathnode.h"
#include "parser/parsetree.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"

#include "warp.h"
#include "warp_join.h"
#include "plan/warp_plan_internal.h"
#include "tcache/tcache.h"

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

Var *
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

/*
 * The fact table: the largest arrow_fdw relation, or without one the
 * largest plain table of pg_warp.heap_min_rows rows or more.  false
 * (nothing noted: not ours) if there is none, or if a larger Arrow table
 * is joined elsewhere in the query.
 */
static bool
star_fact(PlannerInfo *root, RelOptInfo *input_rel, StarInfo *si)
{
	int			rti = -1;

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
				(rel->tuples >= (double) pgwarp_heap_min_rows ||
				 tcache_plan_usable(rte->relid)) &&
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
	return true;
}

/*
 * The join kind of each dimension, by range table index (kind_by_rti,
 * zeroed: inner): the outer, semi and anti joins within input_rel, each
 * between the fact table and one dimension.  false (reason noted) if
 * another one is there.
 */
static bool
star_join_kinds(PlannerInfo *root, RelOptInfo *input_rel, StarInfo *si, int *kind_by_rti)
{
	ListCell   *lc;
	int			kind;

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
	return true;
}

/*
 * The join keys from the equivalence classes: each dimension joins the
 * fact table by exactly one equality; classes between dimensions join them
 * into one arm (arm: union-find over range table indexes).  false (reason
 * noted) if a class is no such equality.
 */
static bool
star_eclass_keys(PlannerInfo *root, RelOptInfo *input_rel, StarInfo *si, int *arm)
{
	ListCell   *lc;

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
	return true;
}

/*
 * The clauses of left and anti joins (and any other join clause): each
 * must be the one equality between the fact table and a dimension joined
 * that way.  Anything else (a condition on the fact table alone in a
 * left join's ON, a WHERE clause over the nullable side) is a join
 * clause the engine would get wrong, so the query stays PostgreSQL's.
 * false (reason noted) for such a clause.
 */
static bool
star_clause_keys(PlannerInfo *root, RelOptInfo *input_rel, StarInfo *si, List *jclauses,
				 int *kind_by_rti, int *arm)
{
	ListCell   *lc;

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
	return true;
}

/*
 * One dimension per arm, in the order the keys were found; every arm
 * joins the fact table by exactly one equality.  An arm of several
 * relations (a snowflake: supplier -> nation -> region) is the join
 * relation PostgreSQL planned for them, whose plan the engine runs as
 * the dimension; its relations must all be inner-joined.
 * The keys and dimensions in si become those of the arms.  false (reason
 * noted) if an arm does not join so.
 */
static bool
star_arms(PlannerInfo *root, StarInfo *si, int *kind_by_rti, int *arm)
{
	ListCell   *lc;
	Bitmapset  *joined = NULL;
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
	return true;
}

/*
 * Whether the relations of input_rel form a star the engine runs (see
 * warp_plan.c): si gets its fact table, its dimensions in join order with
 * their join kinds, and the keys joining each.  false (reason noted, where
 * the relations are ours) if not.
 */
bool
find_star(PlannerInfo *root, RelOptInfo *input_rel, StarInfo *si)
{
	int			rti = -1;
	int		   *kind_by_rti;
	List	   *jclauses = NIL;
	int		   *arm;			/* snowflake: dimension relations joined
								 * among themselves form one arm */

	if (!star_fact(root, input_rel, si))
		return false;

	kind_by_rti = palloc0(sizeof(int) * root->simple_rel_array_size);
	if (!star_join_kinds(root, input_rel, si, kind_by_rti))
		return false;
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

	if (!star_eclass_keys(root, input_rel, si, arm))
		return false;
	if (!star_clause_keys(root, input_rel, si, jclauses, kind_by_rti, arm))
		return false;
	return star_arms(root, si, kind_by_rti, arm);
}

/* 1-based position of column v in a path's target, or -1 */
int
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

/*
 * The fact table's quals, every one of which the engine must compute: into
 * si->quals in PostgreSQL's evaluation order.  false (reason noted) if not.
 */
bool
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
bool
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
