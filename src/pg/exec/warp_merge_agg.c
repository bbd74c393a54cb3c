/*-------------------------------------------------------------------------
 *
 * warp_merge_agg.c
 *	  pg_warp_merge(partial, aggregate, result witness): the aggregate that
 *	  finishes another aggregate from its partial states inside an ordinary
 *	  (non-combining) Agg node.
 *
 * A query with DISTINCT aggregates beside plain ones (`count(DISTINCT a),
 * sum(b)`) is computed in two levels: the engine groups by the group keys
 * and the DISTINCT arguments and keeps a partial state of every plain
 * aggregate per such group; an Agg above counts the distinct arguments per
 * group key with PostgreSQL's own DISTINCT machinery and combines the
 * plain aggregates' partial states.  One Agg node cannot do both with
 * PostgreSQL's aggregates (its split mode, combine or not, is the node's),
 * so the plain ones become pg_warp_merge(partial state, sum(int4), NULL::
 * int8): its transition function runs the named aggregate's deserialize
 * and combine functions, exactly as a Finalize Aggregate node would, and
 * its final function runs the named aggregate's final function.  So the
 * result is the one PostgreSQL's partial aggregation gives.
 *
 * The partial states come from pg_warp's WarpPreAgg node, which writes
 * them in PostgreSQL's serial formats; deserialize functions trust their
 * input, so pg_warp_merge refuses to run anywhere but in an Agg directly
 * above a WarpPreAgg (through Sort or Gather), which only pg_warp's planner
 * builds, and checks every argument type against the named aggregate.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "nodes/extensible.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/syscache.h"

#include "warp.h"

PG_FUNCTION_INFO_V1(pg_warp_merge_trans);
PG_FUNCTION_INFO_V1(pg_warp_merge_final);

/* What one call site needs of the named aggregate (in fn_extra). */
typedef struct MergeInfo
{
	Oid			aggfn;
	Oid			transtype;
	int16		translen;
	bool		transbyval;
	bool		initval_null;
	Datum		initval;
	FmgrInfo	combine;
	bool		has_deserial;
	FmgrInfo	deserial;
	bool		has_final;
	FmgrInfo	final;
} MergeInfo;

/* One group's state of the named aggregate (in the aggregate context). */
typedef struct MergeState
{
	MergeInfo  *mi;				/* the transition's call site's (the final
								 * function gets NULL for the arguments) */
	Datum		value;
	bool		isnull;
	bool		no_value;		/* strict combine: no input taken yet */
} MergeState;

/* Whether ps is a WarpPreAgg, possibly under Sort, Gather or Material. */
static bool
fed_by_preagg(PlanState *ps)
{
	while (ps != NULL && (IsA(ps, SortState) || IsA(ps, IncrementalSortState) ||
						  IsA(ps, GatherState) || IsA(ps, GatherMergeState) ||
						  IsA(ps, MaterialState)))
		ps = outerPlanState(ps);
	return ps != NULL && IsA(ps, CustomScanState) &&
		((CustomScan *) ps->plan)->methods == &warp_preagg_scan_methods;
}

static MergeInfo *
merge_info(FunctionCallInfo fcinfo, Oid aggfn)
{
	MergeInfo  *mi = (MergeInfo *) fcinfo->flinfo->fn_extra;
	HeapTuple	tup;
	Form_pg_aggregate agg;
	Oid			want_partial;
	Oid			rettype;
	Datum		initval_text;
	bool		isnull;
	AclResult	aclresult;

	if (mi != NULL)
	{
		if (mi->aggfn != aggfn)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("pg_warp_merge's aggregate must be the same in every row")));
		return mi;
	}

	if (fcinfo->context == NULL || !IsA(fcinfo->context, AggState) ||
		!fed_by_preagg(outerPlanState((AggState *) fcinfo->context)))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("pg_warp_merge can only run in plans that pg_warp builds")));

	tup = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggfn));
	if (!HeapTupleIsValid(tup))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("function %u is not an aggregate", aggfn)));
	agg = (Form_pg_aggregate) GETSTRUCT(tup);
	rettype = get_func_rettype(aggfn);
	if (agg->aggkind != AGGKIND_NORMAL || !OidIsValid(agg->aggcombinefn) ||
		agg->aggfinalextra || IsPolymorphicType(agg->aggtranstype) ||
		IsPolymorphicType(rettype) ||
		(agg->aggtranstype == INTERNALOID && !OidIsValid(agg->aggdeserialfn)))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("pg_warp_merge cannot finish aggregate %s",
						format_procedure(aggfn))));
	want_partial = OidIsValid(agg->aggdeserialfn) ? BYTEAOID : agg->aggtranstype;
	if (get_fn_expr_argtype(fcinfo->flinfo, 1) != want_partial ||
		get_fn_expr_argtype(fcinfo->flinfo, 3) != rettype)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("pg_warp_merge's arguments do not match aggregate %s",
						format_procedure(aggfn))));
	aclresult = pg_proc_aclcheck(aggfn, GetUserId(), ACL_EXECUTE);
	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, OBJECT_AGGREGATE, get_func_name(aggfn));

	mi = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(MergeInfo));
	mi->aggfn = aggfn;
	mi->transtype = agg->aggtranstype;
	get_typlenbyval(mi->transtype, &mi->translen, &mi->transbyval);
	fmgr_info_cxt(agg->aggcombinefn, &mi->combine, fcinfo->flinfo->fn_mcxt);
	mi->has_deserial = OidIsValid(agg->aggdeserialfn);
	if (mi->has_deserial)
		fmgr_info_cxt(agg->aggdeserialfn, &mi->deserial, fcinfo->flinfo->fn_mcxt);
	mi->has_final = OidIsValid(agg->aggfinalfn);
	if (mi->has_final)
		fmgr_info_cxt(agg->aggfinalfn, &mi->final, fcinfo->flinfo->fn_mcxt);
	initval_text = SysCacheGetAttr(AGGFNOID, tup, Anum_pg_aggregate_agginitval, &isnull);
	mi->initval_null = isnull;
	if (!isnull)
	{
		Oid			typinput;
		Oid			typioparam;
		char	   *s = TextDatumGetCString(initval_text);
		MemoryContext old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);

		getTypeInputInfo(mi->transtype, &typinput, &typioparam);
		mi->initval = OidInputFunctionCall(typinput, s, typioparam, -1);
		MemoryContextSwitchTo(old);
	}
	ReleaseSysCache(tup);
	fcinfo->flinfo->fn_extra = mi;
	return mi;
}

/*
 * pg_warp_merge_trans(state internal, partial "any", aggregate regprocedure,
 * witness anyelement): combine one partial state into the group's state,
 * as advance_transition_function does with a combine function.
 */
Datum
pg_warp_merge_trans(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt;
	MergeInfo  *mi;
	MergeState *st;
	Datum		input;
	bool		input_null;
	Datum		newval;
	bool		newnull;

	if (!AggCheckCallContext(fcinfo, &aggcxt))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("pg_warp_merge can only run in plans that pg_warp builds")));
	if (PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("pg_warp_merge needs an aggregate")));
	mi = merge_info(fcinfo, PG_GETARG_OID(2));
	if (PG_ARGISNULL(0))
	{
		st = MemoryContextAllocZero(aggcxt, sizeof(MergeState));
		st->mi = mi;
		st->isnull = st->no_value = mi->initval_null;
		if (!mi->initval_null)
		{
			MemoryContext old = MemoryContextSwitchTo(aggcxt);

			st->value = datumCopy(mi->initval, mi->transbyval, mi->translen);
			MemoryContextSwitchTo(old);
		}
	}
	else
		st = (MergeState *) PG_GETARG_POINTER(0);

	input = PG_GETARG_DATUM(1);
	input_null = PG_ARGISNULL(1);
	/* deserialize functions are strict: a NULL partial stays NULL */
	if (mi->has_deserial && !input_null)
	{
		LOCAL_FCINFO(dfc, 2);

		InitFunctionCallInfoData(*dfc, &mi->deserial, 2, InvalidOid, fcinfo->context, NULL);
		dfc->args[0].value = input;
		dfc->args[0].isnull = false;
		dfc->args[1].value = (Datum) 0;
		dfc->args[1].isnull = false;
		input = FunctionCallInvoke(dfc);
		input_null = dfc->isnull;
	}

	if (mi->combine.fn_strict)
	{
		if (input_null)
			PG_RETURN_POINTER(st);
		if (st->no_value)
		{
			/* the first input becomes the state, as with a NULL initval */
			MemoryContext old = MemoryContextSwitchTo(aggcxt);

			st->value = datumCopy(input, mi->transbyval, mi->translen);
			MemoryContextSwitchTo(old);
			st->isnull = st->no_value = false;
			PG_RETURN_POINTER(st);
		}
		if (st->isnull)
			PG_RETURN_POINTER(st);	/* a strict combine returned NULL once */
	}
	{
		LOCAL_FCINFO(cfc, 2);

		InitFunctionCallInfoData(*cfc, &mi->combine, 2, PG_GET_COLLATION(),
								 fcinfo->context, NULL);
		cfc->args[0].value = st->value;
		cfc->args[0].isnull = st->isnull;
		cfc->args[1].value = input;
		cfc->args[1].isnull = input_null;
		newval = FunctionCallInvoke(cfc);
		newnull = cfc->isnull;
	}
	if (!mi->transbyval && !newnull && DatumGetPointer(newval) != DatumGetPointer(st->value))
	{
		MemoryContext old = MemoryContextSwitchTo(aggcxt);

		newval = datumCopy(newval, mi->transbyval, mi->translen);
		MemoryContextSwitchTo(old);
		if (!st->isnull)
			pfree(DatumGetPointer(st->value));
	}
	st->value = newval;
	st->isnull = newnull;
	st->no_value = false;
	PG_RETURN_POINTER(st);
}

/*
 * pg_warp_merge_final(state internal, partial "any", aggregate regprocedure,
 * witness anyelement): the named aggregate's final function over the group's
 * state (its initial value when no partial state came).
 */
Datum
pg_warp_merge_final(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt;
	MergeInfo  *mi;
	Datum		value;
	bool		isnull;

	if (!AggCheckCallContext(fcinfo, &aggcxt))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("pg_warp_merge can only run in plans that pg_warp builds")));
	if (PG_ARGISNULL(0))
	{
		/* no input at all: the aggregate is named by the Aggref */
		Aggref	   *aggref = AggGetAggref(fcinfo);
		Node	   *fn = aggref && list_length(aggref->args) == 3 ?
			(Node *) ((TargetEntry *) lsecond(aggref->args))->expr : NULL;

		if (fn == NULL || !IsA(fn, Const) || ((Const *) fn)->constisnull)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("pg_warp_merge needs an aggregate")));
		mi = merge_info(fcinfo, DatumGetObjectId(((Const *) fn)->constvalue));
		value = mi->initval;
		isnull = mi->initval_null;
	}
	else
	{
		MergeState *st = (MergeState *) PG_GETARG_POINTER(0);

		mi = st->mi;
		value = st->value;
		isnull = st->isnull;
	}
	if (mi->has_final)
	{
		LOCAL_FCINFO(ffc, 1);

		if (mi->final.fn_strict && isnull)
			PG_RETURN_NULL();
		InitFunctionCallInfoData(*ffc, &mi->final, 1, PG_GET_COLLATION(),
								 fcinfo->context, NULL);
		ffc->args[0].value = value;
		ffc->args[0].isnull = isnull;
		value = FunctionCallInvoke(ffc);
		isnull = ffc->isnull;
	}
	if (isnull)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(value);
}
