/*-------------------------------------------------------------------------
 *
 * warp_plan_info.c
 *	  Form and deform the plan a pg_warp CustomScan carries from the
 *	  planner to the executor (warp_plan_info.h).
 *
 * Each struct is written as a List with one slot per field, in the order
 * of the enum beside its functions.  Integers are Integer nodes, OIDs an
 * OID list of one (Integer would not hold every OID), expressions and
 * lists as they are.  A deform function checks the List's length, so a
 * plan formed by another version of the library is an error, not a
 * misread.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/value.h"

#include "warp_plan_info.h"

static void
check_length(List *item, int n, const char *what)
{
	if (list_length(item) != n)
		elog(ERROR, "pg_warp: plan item \"%s\" has %d fields, expected %d",
			 what, list_length(item), n);
}

/* ---------------------------------------------------------------- join */

enum WarpPlanJoinSlot
{
	PJ_FACT_KEY,
	PJ_DIM_KEY,
	PJ_PAYLOAD_RESNOS,
	PJ_KEY_RESNO,
	PJ_KIND,
	PJ_KEY2_RESNO,
	PJ_KEY_DISPLAY,
	PJ_NSLOTS
};

List *
form_warp_plan_join(const WarpPlanJoin *join)
{
	List	   *item = NIL;

	item = lappend(item, join->fact_key);
	item = lappend(item, join->dim_key);
	item = lappend(item, join->payload_resnos);
	item = lappend(item, makeInteger(join->key_resno));
	item = lappend(item, makeInteger(join->kind));
	item = lappend(item, makeInteger(join->key2_resno));
	item = lappend(item, join->key_display);
	Assert(list_length(item) == PJ_NSLOTS);
	return item;
}

void
deform_warp_plan_join(List *item, WarpPlanJoin *join)
{
	check_length(item, PJ_NSLOTS, "join");
	join->fact_key = list_nth(item, PJ_FACT_KEY);
	join->dim_key = (Var *) list_nth(item, PJ_DIM_KEY);
	join->payload_resnos = list_nth(item, PJ_PAYLOAD_RESNOS);
	join->key_resno = intVal(list_nth(item, PJ_KEY_RESNO));
	join->kind = intVal(list_nth(item, PJ_KIND));
	join->key2_resno = intVal(list_nth(item, PJ_KEY2_RESNO));
	join->key_display = list_nth(item, PJ_KEY_DISPLAY);
}

/* ----------------------------------------------------------- group key */

enum WarpPlanKeySlot
{
	PK_KIND,
	PK_EXPR,
	PK_JOIN,
	PK_COL,
	PK_CASE_INDEX,
	PK_STRINGS,
	PK_NSLOTS
};

List *
form_warp_plan_key(const WarpPlanKey *key)
{
	List	   *item = NIL;

	item = lappend(item, makeInteger(key->kind));
	item = lappend(item, key->expr);
	item = lappend(item, makeInteger(key->join));
	item = lappend(item, makeInteger(key->col));
	item = lappend(item, makeBoolean(key->case_index));
	item = lappend(item, key->strings);
	Assert(list_length(item) == PK_NSLOTS);
	return item;
}

void
deform_warp_plan_key(List *item, WarpPlanKey *key)
{
	check_length(item, PK_NSLOTS, "group key");
	key->kind = intVal(list_nth(item, PK_KIND));
	key->expr = list_nth(item, PK_EXPR);
	key->join = intVal(list_nth(item, PK_JOIN));
	key->col = intVal(list_nth(item, PK_COL));
	key->case_index = boolVal(list_nth(item, PK_CASE_INDEX));
	key->strings = list_nth(item, PK_STRINGS);
}

/* ----------------------------------------------------------- aggregate */

enum WarpPlanAggSlot
{
	PA_KIND,
	PA_ARG,
	PA_FILTER,
	PA_ARGTYPE,
	PA_NSLOTS
};

List *
form_warp_plan_agg(const WarpPlanAgg *agg)
{
	List	   *item = NIL;

	item = lappend(item, makeInteger(agg->kind));
	item = lappend(item, agg->arg);
	item = lappend(item, agg->filter);
	item = lappend(item, list_make1_oid(agg->argtype));
	Assert(list_length(item) == PA_NSLOTS);
	return item;
}

void
deform_warp_plan_agg(List *item, WarpPlanAgg *agg)
{
	check_length(item, PA_NSLOTS, "aggregate");
	agg->kind = intVal(list_nth(item, PA_KIND));
	agg->arg = list_nth(item, PA_ARG);
	agg->filter = list_nth(item, PA_FILTER);
	agg->argtype = linitial_oid((List *) list_nth(item, PA_ARGTYPE));
}

/* --------------------------------------------------- ORDER BY ... LIMIT */

enum WarpPlanOrderSlot
{
	PO_COLS,
	PO_SORTOPS,
	PO_COLLATIONS,
	PO_NULLS_FIRST,
	PO_BOUND,
	PO_NSLOTS
};

List *
form_warp_plan_order(const WarpPlanOrder *order)
{
	List	   *item = NIL;

	item = lappend(item, order->cols);
	item = lappend(item, order->sortops);
	item = lappend(item, order->collations);
	item = lappend(item, order->nulls_first);
	item = lappend(item, makeInteger(order->bound));
	Assert(list_length(item) == PO_NSLOTS);
	return item;
}

void
deform_warp_plan_order(List *item, WarpPlanOrder *order)
{
	check_length(item, PO_NSLOTS, "order");
	order->cols = list_nth(item, PO_COLS);
	order->sortops = list_nth(item, PO_SORTOPS);
	order->collations = list_nth(item, PO_COLLATIONS);
	order->nulls_first = list_nth(item, PO_NULLS_FIRST);
	order->bound = intVal(list_nth(item, PO_BOUND));
	if (list_length(order->cols) != list_length(order->sortops) ||
		list_length(order->cols) != list_length(order->collations) ||
		list_length(order->cols) != list_length(order->nulls_first))
		elog(ERROR, "pg_warp: plan item \"order\" has lists of different lengths");
}

/* ------------------------------------------------------------ the node */

enum WarpPlanInfoSlot
{
	PI_FACT_RELID,
	PI_FIRST_RELID,
	PI_QUALS,
	PI_FACT_ATTRS,
	PI_JOINS,
	PI_KEY_INFO,
	PI_AGG_INFO,
	PI_OUTMAP,
	PI_GATE,
	PI_FACT_OID,
	PI_WHERE,
	PI_HEAP,
	PI_DISTINCT_KEY,
	PI_DISTINCT_AGG,
	PI_ROWS,
	PI_ORDER,
	PI_DEVICE_CHOICE,
	PI_NSLOTS
};

List *
form_warp_plan_info(const WarpPlanInfo *info)
{
	List	   *priv = NIL;

	priv = lappend(priv, makeInteger(info->fact_relid));
	priv = lappend(priv, makeInteger(info->first_relid));
	priv = lappend(priv, info->quals);
	priv = lappend(priv, info->fact_attrs);
	priv = lappend(priv, info->joins);
	priv = lappend(priv, info->key_info);
	priv = lappend(priv, info->agg_info);
	priv = lappend(priv, info->outmap);
	priv = lappend(priv, info->gate);
	priv = lappend(priv, list_make1_oid(info->fact_oid));
	priv = lappend(priv, makeInteger(info->where));
	priv = lappend(priv, makeBoolean(info->heap));
	priv = lappend(priv, makeInteger(info->distinct_key));
	priv = lappend(priv, makeInteger(info->distinct_agg));
	priv = lappend(priv, makeBoolean(info->rows));
	priv = lappend(priv, info->order);
	priv = lappend(priv, makeString(pstrdup(info->device_choice ? info->device_choice : "")));
	Assert(list_length(priv) == PI_NSLOTS);
	return priv;
}

void
deform_warp_plan_info(List *priv, WarpPlanInfo *info)
{
	check_length(priv, PI_NSLOTS, "plan");
	info->fact_relid = intVal(list_nth(priv, PI_FACT_RELID));
	info->first_relid = intVal(list_nth(priv, PI_FIRST_RELID));
	info->quals = list_nth(priv, PI_QUALS);
	info->fact_attrs = list_nth(priv, PI_FACT_ATTRS);
	info->joins = list_nth(priv, PI_JOINS);
	info->key_info = list_nth(priv, PI_KEY_INFO);
	info->agg_info = list_nth(priv, PI_AGG_INFO);
	info->outmap = list_nth(priv, PI_OUTMAP);
	info->gate = list_nth(priv, PI_GATE);
	info->fact_oid = linitial_oid((List *) list_nth(priv, PI_FACT_OID));
	info->where = intVal(list_nth(priv, PI_WHERE));
	info->heap = boolVal(list_nth(priv, PI_HEAP));
	info->distinct_key = intVal(list_nth(priv, PI_DISTINCT_KEY));
	info->distinct_agg = intVal(list_nth(priv, PI_DISTINCT_AGG));
	info->rows = boolVal(list_nth(priv, PI_ROWS));
	info->order = list_nth(priv, PI_ORDER);
	info->device_choice = strVal(list_nth(priv, PI_DEVICE_CHOICE));
	if (info->device_choice[0] == '\0')
		info->device_choice = NULL;
}
