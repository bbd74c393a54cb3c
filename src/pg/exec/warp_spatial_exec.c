/*
 * warp_spatial_exec.c — WarpSpatialJoin: runs a spatial join planned by
 * plan/warp_plan_spatial.c on the CPU in the backend.
 *
 * Build: every row of the inner child is kept (a minimal tuple) with its
 * geometry, decoded from PostGIS's own serialization (warp_geom_gser.h)
 * into a grid (warp_geom_set.h).  Probe: each outer row's geometry, when it
 * is a plain point of the build side's SRID, is tested against the
 * geometries of its grid cell by warp_geom_set_test; a pair that test
 * cannot decide (a point within rounding distance of an edge or vertex,
 * an invalid or unusual geometry) is decided by calling the query's own
 * PostGIS function, so the answer is PostGIS's.  An outer row that is not
 * a plain point, or whose SRID differs, is tested by PostGIS's function
 * against every build row: its answers, and its errors (mixed SRIDs), are
 * then exactly PostGIS's.
 */
#include "postgres.h"

#include "commands/explain.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"

#include "pg_warp.h"
#include "warp_spatial.h"

typedef struct SpatialState
{
	CustomScanState css;
	WarpSpatialPlan plan;
	WarpGeomOp	op;
	ExprState  *dist_expr;		/* ST_DWithin's distance, or NULL */
	ExprState  *const_expr;		/* a filter's constant geometry */
	double		dist;
	FmgrInfo	fn;
	PlanState  *outer;
	PlanState  *inner;
	int			build_src;		/* inner child's resno of the build geometry */
	int			probe_src;		/* outer child's resno of the probe geometry */
	/* the build side */
	bool		built;
	MemoryContext build_cxt;
	int			nbuild;
	MinimalTuple *build_tuples;
	Datum	   *build_geoms;	/* detoasted copies */
	WarpGeomSet set;
	int32		build_srid;
	bool		build_mixed_srid;
	bool		all_generic;	/* a distance the grid cannot take (negative,
								 * NaN, beyond 1e300): PostGIS judges all */
	TupleTableSlot *inner_slot;
	/* the probe */
	MemoryContext probe_cxt;	/* PostGIS calls, reset per outer row */
	TupleTableSlot *outer_slot; /* the current outer row, or NULL */
	int		   *matches;
	int			nmatches,
				next_match,
				max_matches;
	/* EXPLAIN ANALYZE */
	int64		probe_rows;
	int64		candidates;
	int64		postgis_checks;
	int64		generic_rows;
} SpatialState;

static Node *spatial_create_state(CustomScan *cscan);
static void spatial_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *spatial_exec(CustomScanState *node);
static void spatial_end(CustomScanState *node);
static void spatial_rescan(CustomScanState *node);
static void spatial_explain(CustomScanState *node, List *ancestors, ExplainState *es);

CustomScanMethods warp_spatial_scan_methods = {
	"WarpSpatialJoin",
	spatial_create_state
};

CustomScanMethods warp_spatial_filter_scan_methods = {
	"WarpSpatialFilter",
	spatial_create_state
};

static CustomExecMethods spatial_exec_methods = {
	.CustomName = "WarpSpatialJoin",
	.BeginCustomScan = spatial_begin,
	.ExecCustomScan = spatial_exec,
	.EndCustomScan = spatial_end,
	.ReScanCustomScan = spatial_rescan,
	.ExplainCustomScan = spatial_explain,
};

static Node *
spatial_create_state(CustomScan *cscan)
{
	SpatialState *ss = palloc0(sizeof(SpatialState));

	NodeSetTag(ss, T_CustomScanState);
	ss->css.methods = &spatial_exec_methods;
	return (Node *) ss;
}

static void
spatial_begin(CustomScanState *node, EState *estate, int eflags)
{
	SpatialState *ss = (SpatialState *) node;
	CustomScan *cs = (CustomScan *) node->ss.ps.plan;
	Expr	   *clause = linitial(cs->custom_exprs);
	Oid			funcid,
				collid;
	List	   *fargs;
	WarpSpatialFunc fn;
	const char *why;
	int			probe_arg;

	warp_spatial_plan_deform(cs->custom_private, &ss->plan);
	if (!warp_spatial_func(ss->plan.funcid, &fn, &why))
		elog(ERROR, "pg_warp: WarpSpatialJoin: function %u is not a PostGIS predicate",
			 ss->plan.funcid);
	ss->op = fn.op;
	(void) warp_spatial_clause_parts(clause, &funcid, &collid, &fargs);
	if (fn.nargs == 3)
		ss->dist_expr = ExecInitExpr(lthird(fargs), &node->ss.ps);
	fmgr_info(ss->plan.funcid, &ss->fn);
	probe_arg = 1 - ss->plan.build_arg;
	ss->outer = ExecInitNode(linitial(cs->custom_plans), estate, eflags);
	ss->probe_src = list_nth_int(ss->plan.src_resno, ss->plan.arg_slot[probe_arg]);
	if (list_nth_int(ss->plan.src_child, ss->plan.arg_slot[probe_arg]) != 0)
		elog(ERROR, "pg_warp: WarpSpatialJoin: arguments on the wrong sides");
	if (ss->plan.filter)
	{
		ss->const_expr = ExecInitExpr(list_nth(fargs, ss->plan.build_arg), &node->ss.ps);
		node->custom_ps = list_make1(ss->outer);
	}
	else
	{
		ss->inner = ExecInitNode(lsecond(cs->custom_plans), estate, eflags);
		node->custom_ps = list_make2(ss->outer, ss->inner);
		ss->build_src = list_nth_int(ss->plan.src_resno,
									 ss->plan.arg_slot[ss->plan.build_arg]);
		if (list_nth_int(ss->plan.src_child, ss->plan.arg_slot[ss->plan.build_arg]) != 1)
			elog(ERROR, "pg_warp: WarpSpatialJoin: arguments on the wrong sides");
		ss->inner_slot = MakeSingleTupleTableSlot(ExecGetResultType(ss->inner),
												  &TTSOpsMinimalTuple);
	}
	ss->probe_cxt = AllocSetContextCreate(CurrentMemoryContext, "WarpSpatialJoin probe",
										  ALLOCSET_DEFAULT_SIZES);
}

static void *
build_alloc(void *ctx, size_t size)
{
	return MemoryContextAllocHuge((MemoryContext) ctx, size);
}

/* a geometry value's bytes after its varlena header, detoasted if needed */
static const uint8 *
geom_bytes(Datum d, size_t *len)
{
	struct varlena *v = pg_detoast_datum_packed((struct varlena *) DatumGetPointer(d));

	*len = VARSIZE_ANY_EXHDR(v);
	return (const uint8 *) VARDATA_ANY(v);
}

/* reads the build side and indexes it */
static void
spatial_build(SpatialState *ss)
{
	MemoryContext old;
	int			cap = 1024;
	int64		ncomps = 0,
				nrings = 0,
				npoints = 0;
	WarpAlloc	alloc;
	int			i;

	ss->build_cxt = AllocSetContextCreate(CurrentMemoryContext, "WarpSpatialJoin build",
										  ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(ss->build_cxt);
	ss->build_tuples = palloc(cap * sizeof(MinimalTuple));
	ss->build_geoms = palloc(cap * sizeof(Datum));
	ss->nbuild = 0;
	if (ss->plan.filter)
	{
		bool		isnull;
		Datum		d = ExecEvalExpr(ss->const_expr, ss->css.ss.ps.ps_ExprContext, &isnull);

		/* strict predicates: a NULL constant matches nothing */
		if (!isnull)
			ss->build_geoms[ss->nbuild++] = PointerGetDatum(PG_DETOAST_DATUM_COPY(d));
	}
	while (!ss->plan.filter)
	{
		TupleTableSlot *slot;
		Datum		d;
		bool		isnull;

		MemoryContextSwitchTo(old);
		slot = ExecProcNode(ss->inner);
		MemoryContextSwitchTo(ss->build_cxt);
		if (TupIsNull(slot))
			break;
		CHECK_FOR_INTERRUPTS();
		d = slot_getattr(slot, ss->build_src, &isnull);
		if (isnull)
			continue;			/* strict predicates: never a match */
		if (ss->nbuild == cap)
		{
			cap *= 2;
			ss->build_tuples = repalloc_huge(ss->build_tuples, cap * sizeof(MinimalTuple));
			ss->build_geoms = repalloc_huge(ss->build_geoms, cap * sizeof(Datum));
		}
		ss->build_geoms[ss->nbuild] = PointerGetDatum(PG_DETOAST_DATUM_COPY(d));
		ss->build_tuples[ss->nbuild] = ExecCopySlotMinimalTuple(slot);
		ss->nbuild++;
	}
	/* totals, then the set */
	for (i = 0; i < ss->nbuild; i++)
	{
		WarpGser	g;
		size_t		len;
		const uint8 *b = geom_bytes(ss->build_geoms[i], &len);

		warp_gser_read(b, len, &g);
		if (g.kind == WARP_GSER_POLYS)
		{
			ncomps += g.ncomps;
			nrings += g.nrings;
			npoints += g.npoints;
		}
		if (i == 0)
			ss->build_srid = g.srid;
		else if (g.srid != ss->build_srid)
			ss->build_mixed_srid = true;
	}
	if (npoints > PG_INT32_MAX / 2 || nrings >= PG_INT32_MAX || ncomps >= PG_INT32_MAX)
		ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						errmsg("pg_warp: the spatial join's build side has too many points")));
	alloc.alloc = build_alloc;
	alloc.ctx = ss->build_cxt;
	(void) warp_geom_set_create(&ss->set, &alloc, ss->nbuild, (int32) ncomps, (int32) nrings,
								(int32) npoints);
	for (i = 0; i < ss->nbuild; i++)
	{
		WarpGser	g;
		size_t		len;
		const uint8 *b = geom_bytes(ss->build_geoms[i], &len);

		warp_gser_read(b, len, &g);
		warp_geom_set_add(&ss->set, &g);
	}
	ss->all_generic = ss->dist_expr && !(ss->dist >= 0 && ss->dist <= 1e300);
	if (!warp_geom_set_index(&ss->set, &alloc,
							 ss->op == WARP_GEOM_OP_DWITHIN && !ss->all_generic ? ss->dist : 0))
		ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						errmsg("pg_warp: the spatial join's grid is too large")));
	ss->max_matches = Max(ss->nbuild, 1);
	ss->matches = palloc(ss->max_matches * sizeof(int));
	MemoryContextSwitchTo(old);
	ss->built = true;
}

/* PostGIS's own answer for (build item, probe value) */
static bool
postgis_says(SpatialState *ss, int item, Datum probe)
{
	Datum		a[2];
	Datum		r;

	a[ss->plan.build_arg] = ss->build_geoms[item];
	a[1 - ss->plan.build_arg] = probe;
	ss->postgis_checks++;
	if (ss->dist_expr)
		r = FunctionCall3Coll(&ss->fn, ss->plan.inputcollid, a[0], a[1],
							  Float8GetDatum(ss->dist));
	else
		r = FunctionCall2Coll(&ss->fn, ss->plan.inputcollid, a[0], a[1]);
	return DatumGetBool(r);
}

static inline void
test_item(SpatialState *ss, int item, double x, double y, Datum probe)
{
	int			res = warp_geom_set_test(&ss->set, item, ss->op, x, y, ss->dist);

	ss->candidates++;
	if (res == WARP_GEOM_IN || (res == WARP_GEOM_UNSURE && postgis_says(ss, item, probe)))
		ss->matches[ss->nmatches++] = item;
}

/* the build rows matching the current outer row */
static void
spatial_probe(SpatialState *ss, Datum probe)
{
	WarpGser	g;
	size_t		len;
	const uint8 *b;
	MemoryContext old;
	int32		start,
				end,
				k;

	ss->nmatches = 0;
	MemoryContextReset(ss->probe_cxt);
	old = MemoryContextSwitchTo(ss->probe_cxt);
	b = geom_bytes(probe, &len);
	warp_gser_read(b, len, &g);
	if (g.kind != WARP_GSER_POINT || ss->build_mixed_srid || g.srid != ss->build_srid ||
		ss->all_generic)
	{
		/* PostGIS judges every pair: its answers, its errors */
		ss->generic_rows++;
		for (k = 0; k < ss->nbuild; k++)
		{
			if ((k & 255) == 0)
				CHECK_FOR_INTERRUPTS();
			if (postgis_says(ss, k, probe))
				ss->matches[ss->nmatches++] = k;
		}
		MemoryContextSwitchTo(old);
		return;
	}
	warp_geom_set_cell(&ss->set, g.x, g.y, &start, &end);
	for (k = start; k < end; k++)
		test_item(ss, ss->set.cell_items[k], g.x, g.y, probe);
	for (k = 0; k < ss->set.nalways; k++)
		test_item(ss, ss->set.always[k], g.x, g.y, probe);
	MemoryContextSwitchTo(old);
}

/* the scan tuple of (current outer row, build row `item`) */
static TupleTableSlot *
spatial_emit(SpatialState *ss, int item)
{
	TupleTableSlot *out = ss->css.ss.ss_ScanTupleSlot;
	ListCell   *c,
			   *r;
	int			i = 0;

	ExecClearTuple(out);
	if (!ss->plan.filter)
		ExecStoreMinimalTuple(ss->build_tuples[item], ss->inner_slot, false);
	forboth(c, ss->plan.src_child, r, ss->plan.src_resno)
	{
		TupleTableSlot *src = lfirst_int(c) == 0 ? ss->outer_slot : ss->inner_slot;

		out->tts_values[i] = slot_getattr(src, lfirst_int(r), &out->tts_isnull[i]);
		i++;
	}
	return ExecStoreVirtualTuple(out);
}

static TupleTableSlot *
spatial_next(ScanState *node)
{
	SpatialState *ss = (SpatialState *) node;

	for (;;)
	{
		Datum		d;
		bool		isnull;

		if (ss->outer_slot && ss->next_match < ss->nmatches)
			return spatial_emit(ss, ss->matches[ss->next_match++]);
		CHECK_FOR_INTERRUPTS();
		ss->outer_slot = ExecProcNode(ss->outer);
		if (TupIsNull(ss->outer_slot))
		{
			ss->outer_slot = NULL;
			return ExecClearTuple(node->ss_ScanTupleSlot);
		}
		ss->probe_rows++;
		ss->nmatches = ss->next_match = 0;
		d = slot_getattr(ss->outer_slot, ss->probe_src, &isnull);
		if (!isnull)
			spatial_probe(ss, d);
	}
}

static bool
spatial_recheck(ScanState *node, TupleTableSlot *slot)
{
	return true;
}

static TupleTableSlot *
spatial_exec(CustomScanState *node)
{
	SpatialState *ss = (SpatialState *) node;

	if (!ss->built)
	{
		if (ss->dist_expr)
		{
			ExprContext *econtext = node->ss.ps.ps_ExprContext;
			bool		isnull;
			Datum		d = ExecEvalExprSwitchContext(ss->dist_expr, econtext, &isnull);

			/* strict: a NULL distance matches nothing */
			ss->dist = isnull ? NAN : DatumGetFloat8(d);
			if (isnull)
				return ExecClearTuple(node->ss.ss_ScanTupleSlot);
		}
		spatial_build(ss);
	}
	return ExecScan(&node->ss, spatial_next, spatial_recheck);
}

static void
spatial_end(CustomScanState *node)
{
	SpatialState *ss = (SpatialState *) node;

	ExecEndNode(ss->outer);
	if (ss->inner)
	{
		ExecEndNode(ss->inner);
		ExecDropSingleTupleTableSlot(ss->inner_slot);
	}
	if (ss->build_cxt)
		MemoryContextDelete(ss->build_cxt);
	MemoryContextDelete(ss->probe_cxt);
}

static void
spatial_rescan(CustomScanState *node)
{
	SpatialState *ss = (SpatialState *) node;

	ExecReScan(ss->outer);
	if (ss->inner)
		ExecReScan(ss->inner);
	if (ss->build_cxt)
		MemoryContextDelete(ss->build_cxt);
	ss->build_cxt = NULL;
	ss->built = false;
	ss->build_mixed_srid = false;
	ss->outer_slot = NULL;
	ss->nmatches = ss->next_match = 0;
}

static void
spatial_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	SpatialState *ss = (SpatialState *) node;
	CustomScan *cs = (CustomScan *) node->ss.ps.plan;
	List	   *ctx;

	ctx = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	ExplainPropertyText("Spatial Predicate",
						deparse_expression(linitial(cs->custom_exprs), ctx, true, false), es);
	ExplainPropertyText("Runs On", node->ss.ps.plan->parallel_safe ?
						"CPU (each parallel participant probes its share of the rows against "
						"its own build side); the GPU has no spatial probe yet" :
						"CPU (backend); the GPU has no spatial probe yet", es);
	ExplainPropertyText("Build Side", ss->plan.filter ? "the constant geometry" :
						"inner child: grid of its geometries", es);
	ExplainPropertyText("Exact Check",
						"PostGIS's function, for pairs within rounding distance of an edge "
						"or vertex and for geometries other than 2-D points and polygons",
						es);
	if (es->analyze && ss->built)
	{
		ExplainPropertyInteger("Build Geometries", NULL, ss->nbuild, es);
		ExplainPropertyInteger("Grid Cells", NULL, (int64) ss->set.gnx * ss->set.gny, es);
		ExplainPropertyInteger("Probe Rows", NULL, ss->probe_rows, es);
		ExplainPropertyInteger("Candidate Pairs", NULL, ss->candidates, es);
		ExplainPropertyInteger("Pairs Checked By PostGIS", NULL, ss->postgis_checks, es);
		ExplainPropertyInteger("Probe Rows Left To PostGIS", NULL, ss->generic_rows, es);
	}
}

void
warp_spatial_exec_init(void)
{
	RegisterCustomScanMethods(&warp_spatial_scan_methods);
	RegisterCustomScanMethods(&warp_spatial_filter_scan_methods);
}
