/*
 * warp_plan_agg.c — the aggregate split of WarpPreAgg.
 *
 * build_partial_target turns the query's grouping and aggregates into the
 * engine's part: its group keys (fact expressions, dimension columns as
 * payloads, text CASE buckets) and partial aggregate states labelled the
 * way PostgreSQL's own partial aggregation labels them, so that the
 * Finalize Aggregate above (add_final_agg, warp_plan.c) combines them.
 * DISTINCT aggregates take two-level grouping, or pg_warp_merge beside
 * plain ones and for GROUPING SETS (warp_merge_scan.c); a single
 * count(DISTINCT x) may be counted by the engine itself (engine_distinct).
 * Group keys also serve the row-returning paths (warp_plan_rows.c) as
 * their output columns.
 */

#include "postgres.h"

#include "catalog/pg_aggregate.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/planner.h"
#include "optimizer/tlist.h"
#include "utils/fmgroids.h"
#include "utils/regproc.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "warp.h"
#include "plan/warp_plan_internal.h"

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

/*
 * One engine group key for expr: a dimension column becomes that
 * dimension's payload, anything else must be a fact expression.  Adds it
 * to the partial target with sgref.  false (reason noted) if impossible.
 */
bool
add_group_key_as(StarInfo *si, PathTarget *pt, Expr *expr, Index sgref, bool output)
{
	Var		   *v = plain_var(expr);
	WarpPlanKey key = {.expr = NULL, .join = -1, .col = -1, .case_index = false, .strings = NIL};

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
		key.kind = WG_DIM;
		key.join = j;
		key.col = list_length(pl);
		list_nth_cell(si->payload, j)->ptr_value = lappend(pl, v);
	}
	else
	{
		WarpBuilder b;
		List	   *strings;
		Expr	   *ic = text_case_key(expr, &strings);

		warp_builder_init(&b, si->fact->relid, NULL);
		b.native_columns = si->heap;
		if (ic)
		{
			/* the index CASE and its strings */
			if (warp_compile_group_key(&b, ic) < 0)
				return not_offloaded(psprintf("%s: %s", si->rows ? "output column" : "group key",
											  b.why_not));
			key.kind = WG_FACT;
			key.expr = ic;
			key.case_index = true;
			key.strings = strings;
			si->fact_exprs = lappend(si->fact_exprs, ic);
		}
		else
		{
			if (warp_compile_group_key(&b, expr) < 0)
				return not_offloaded(psprintf("%s: %s", si->rows ? "output column" : "group key",
											  b.why_not));
			key.kind = WG_FACT;
			key.expr = expr;
			si->fact_exprs = lappend(si->fact_exprs, expr);
		}
	}
	if (output)
	{
		si->outmap = lappend_int(si->outmap, list_length(si->key_info));
		add_column_to_pathtarget(pt, expr, sgref);
	}
	si->key_info = lappend(si->key_info, form_warp_plan_key(&key));
	return true;
}

static bool
add_group_key(StarInfo *si, PathTarget *pt, Expr *expr, Index sgref)
{
	return add_group_key_as(si, pt, expr, sgref, true);
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
		WarpPlanKey key;
		Expr	   *e;

		deform_warp_plan_key(lfirst(lc), &key);
		e = key.expr;
		if (key.kind == WG_DIM)
		{
			if (list_nth_int(si->kinds, key.join) != WARP_JOIN_INNER)
				return NULL;
			e = list_nth(list_nth(si->payload, key.join), key.col);
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
 * The query's group keys into pt (the engine's keys, in the target's
 * order), and into *non_group_out the aggregates the rest of the target
 * and HAVING are made of.  false (reason noted) if a key is not the
 * engine's or anything else is there.
 */
static bool
partial_group_keys(PlannerInfo *root, RelOptInfo *output_rel, GroupPathExtraData *extra,
				   StarInfo *si, PathTarget *pt, List **non_group_out)
{
	Query	   *parse = root->parse;
	PathTarget *final = output_rel->reltarget;
	List	   *non_group = NIL;
	ListCell   *lc;
	int			i = 0;

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
	*non_group_out = non_group;
	return true;
}

/*
 * DISTINCT aggregates beside plain ones: the DISTINCT arguments become
 * group keys as for two-level grouping (build_partial_target), the plain
 * aggregates are computed per (keys, arguments) group as partial states,
 * and pg_warp_merge combines them per group in the Agg above
 * (warp_merge_scan.c).  Here: the DISTINCT arguments into pt as group
 * keys, those aggregates into *aggs_out; false (reason noted) if the
 * engine cannot group so.
 */
static bool
partial_distinct_keys(PlannerInfo *root, StarInfo *si, PathTarget *pt, List *non_group,
					  List **aggs_out)
{
	Query	   *parse = root->parse;
	List	   *aggs = NIL;
	ListCell   *lc;

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
	*aggs_out = aggs;
	return true;
}

/*
 * One aggregate of the query (query_agg) as the engine's partial state:
 * its kind, argument and FILTER checked and noted in si->agg_info, its
 * partial Aggref added to pt (beside DISTINCT aggregates or for GROUPING
 * SETS, to si->merge_plain and merge_partial too).  *arg_errors gathers
 * the ERRC_* of the aggregates' arguments.  false (reason noted) if the
 * engine cannot compute it.
 */
static bool
partial_aggregate(PlannerInfo *root, StarInfo *si, PathTarget *pt, Aggref *query_agg,
				  int *arg_errors)
{
	Aggref	   *agg = query_agg;
	Aggref	   *partial;
	Oid			argtype;
	int			kind;
	Expr	   *arg = NULL;
	const char *why = NULL;
	WarpPlanAgg pa;

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
			b.native_columns = si->heap;
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
	pa.kind = kind;
	pa.arg = arg;
	pa.filter = agg->aggfilter;
	pa.argtype = argtype;
	si->agg_info = lappend(si->agg_info, form_warp_plan_agg(&pa));
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
			(void) error_classes_walker((Node *) arg, arg_errors);
			(void) error_classes_walker((Node *) agg->aggfilter, arg_errors);
			if (error_class_count(*arg_errors) > 1)
				return not_offloaded("DISTINCT aggregates beside aggregate arguments that can raise different errors (which one their rows raise first depends on their order)");
		}
		si->merge_plain = lappend(si->merge_plain, query_agg);
		si->merge_partial = lappend(si->merge_partial, partial);
	}
	return true;
}

/*
 * Build the partial target (group keys + partial Aggrefs, the way
 * PostgreSQL's own partial aggregation labels them) and check that the
 * engine computes every part.
 */
bool
build_partial_target(PlannerInfo *root, RelOptInfo *output_rel, GroupPathExtraData *extra,
					 StarInfo *si)
{
	Query	   *parse = root->parse;
	PathTarget *pt = create_empty_pathtarget();
	List	   *non_group = NIL;
	List	   *aggs = NIL;
	ListCell   *lc;
	int			d;
	int			arg_errors = 0; /* ERRC_* of the aggregates' arguments */

	si->distinct_aggref = NULL;
	si->distinct_key = si->distinct_agg = -1;

	si->payload = NIL;
	for (d = 0; d < list_length(si->dims); d++)
		si->payload = lappend(si->payload, NIL);

	if (!partial_group_keys(root, output_rel, extra, si, pt, &non_group))
		return false;
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
	if (!partial_distinct_keys(root, si, pt, non_group, &aggs))
		return false;
	foreach(lc, non_group)
	{
		Node	   *n = lfirst(lc);
		Aggref	   *agg;

		if (!IsA(n, Aggref))
			return not_offloaded("a column outside the GROUP BY and aggregates");
		agg = (Aggref *) n;
		if (list_member(aggs, agg))
			continue;
		aggs = lappend(aggs, agg);
		if (!partial_aggregate(root, si, pt, agg, &arg_errors))
			return false;
	}
	si->partial_target = set_pathtarget_cost_width(root, pt);
	return true;
}
