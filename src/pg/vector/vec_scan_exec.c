/*
 * vec_scan_exec.c — executing WarpVecScan (vec_scan.h).
 *
 * The node reads the table's record batches through arrow_scan.h, evaluates
 * the quals of each row (only the columns they use are converted), scores
 * the rows that pass straight from the vector column's buffers
 * (FixedSizeList of Float32 / Float16 streamed in row chunks by
 * vec_scan_load.c unless a qual reads the vector; otherwise List /
 * LargeList / FixedSizeList of Float32: the child buffer itself; of
 * Float16: widened into a scratch vector; any other element type through
 * the real[] the column converts to), and keeps the k best by
 * (distance, scan position) in a bounded heap (warp_vec_topk.h), forming a
 * row only when it enters the heap.  Distances are warp_vector.h's, the
 * functions behind the operators, so the order is the operator's.
 *
 * Errors are PostgreSQL's for the same rows: the first row scored checks
 * its vector before the query vector (v <op> q) as the operator does;
 * dimension mismatches, NULL elements and empty arrays raise the
 * operator's errors.  It runs in the backend on the CPU; pg_warp_gpud has
 * no vector kernel yet, which EXPLAIN says.
 */
#include "postgres.h"

#include "access/sysattr.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "utils/array.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "fdw/arrow_scan.h"
#include "vector.h"
#include "vec_scan.h"
#include "warp.h"
#include "warp_vec_topk.h"

typedef struct VecScanState
{
	CustomScanState css;
	ArrowScanState *ss;
	int			attno;
	WarpVecKind kind;
	int64		bound;
	bool		var_first;
	ExprState  *query_expr;
	ExprState  *qual;
	int		   *qual_attrs;		/* attno - 1 of the columns the quals use */
	int			nqual_attrs;
	TupleTableSlot *qual_slot;	/* virtual: the qual columns of one row */
	TupleTableSlot *out_slot;	/* the kept rows, as minimal tuples */
	/* the query vector, once evaluated */
	bool		query_ready;
	bool		query_null;
	Datum		query_datum;
	WarpVecArg	query;
	double		query_norm2;
	float	   *scratch;		/* a Float16 row widened */
	bool		streamed;		/* the vector column is read by vcol */
	int			nthreads;		/* CPU threads scoring streamed batches */
	VecColumn	vcol;
	int			scratch_len;
	/* top-k */
	WarpVecTopK topk;
	MemoryContext topk_cxt;
	bool		filled;
	int64		next_out;
	int64		seq;
	/* EXPLAIN ANALYZE */
	int64		scored;
	int64		scored_direct;
} VecScanState;

static CustomExecMethods vec_exec_methods;

static Node *
vec_create_state(CustomScan *cs)
{
	VecScanState *vs = (VecScanState *) newNode(sizeof(VecScanState), T_CustomScanState);

	vs->css.methods = &vec_exec_methods;
	return (Node *) vs;
}

static void
vec_begin(CustomScanState *node, EState *estate, int eflags)
{
	VecScanState *vs = (VecScanState *) node;
	CustomScan *cs = (CustomScan *) node->ss.ps.plan;
	Relation	rel = node->ss.ss_currentRelation;
	List	   *quals = list_copy_tail(cs->custom_exprs, 1);
	Bitmapset  *attrs = NULL,
			   *qattrs = NULL;
	int			a = -1;

	vs->attno = intVal(list_nth(cs->custom_private, VEC_PRIV_ATTNO));
	vs->kind = (WarpVecKind) intVal(list_nth(cs->custom_private, VEC_PRIV_KIND));
	vs->bound = intVal(list_nth(cs->custom_private, VEC_PRIV_BOUND));
	vs->var_first = intVal(list_nth(cs->custom_private, VEC_PRIV_VAR_FIRST)) != 0;
	vs->query_expr = ExecInitExpr(linitial(cs->custom_exprs), &node->ss.ps);
	vs->qual = ExecInitQual(quals, &node->ss.ps);
	vs->qual_slot = ExecInitExtraTupleSlot(estate, RelationGetDescr(rel), &TTSOpsVirtual);
	vs->out_slot = ExecInitExtraTupleSlot(estate, RelationGetDescr(rel), &TTSOpsMinimalTuple);

	pull_varattnos((Node *) quals, cs->scan.scanrelid, &qattrs);
	vs->qual_attrs = palloc(sizeof(int) * (bms_num_members(qattrs) + 1));
	while ((a = bms_next_member(qattrs, a)) >= 0)
		vs->qual_attrs[vs->nqual_attrs++] = a + FirstLowInvalidHeapAttributeNumber - 1;

	pull_varattnos((Node *) cs->scan.plan.targetlist, cs->scan.scanrelid, &attrs);
	attrs = bms_union(attrs, qattrs);
	attrs = bms_add_member(attrs, vs->attno - FirstLowInvalidHeapAttributeNumber);

	vs->topk_cxt = AllocSetContextCreate(estate->es_query_cxt, "WarpVecScan rows",
										 ALLOCSET_DEFAULT_SIZES);
	vs->topk.k = Max(vs->bound, 1);
	vs->topk.h = MemoryContextAllocHuge(estate->es_query_cxt,
										sizeof(WarpVecHit) * vs->topk.k);
	vs->ss = palloc0(sizeof(ArrowScanState));
	arrow_scan_begin(vs->ss, rel, attrs, quals, cs->scan.scanrelid, &node->ss.ps,
					 (eflags & EXEC_FLAG_EXPLAIN_ONLY) != 0);
	/* the vector column is streamed unless a qual reads it as a Datum */
	vs->streamed = !bms_is_member(vs->attno - FirstLowInvalidHeapAttributeNumber, qattrs);
	if (vs->streamed)
	{
		vs->ss->owner_loads = palloc0(sizeof(bool) * Max(vs->ss->natts, 1));
		vs->ss->owner_loads[vs->attno - 1] = true;
		pgwarp_vec_column_init(&vs->vcol, estate->es_query_cxt);
	}
	vs->nthreads = pgwarp_cpu_thread_count();
}

/* the loaded vector column of the current batch (not streamed rows) */
static const ArrowArray *
vector_array(VecScanState *vs)
{
	return vs->streamed ? &vs->vcol.col : &vs->ss->cur_cols[vs->attno - 1];
}

/* the real[] of row i's vector, converted as arrow_fdw converts it */
static Datum
vector_datum(VecScanState *vs, ScanFile *sf, int64 i, bool *isnull)
{
	int			a = vs->attno - 1;
	const float *x;
	int			dims;
	Datum	   *elems;

	if (!vs->streamed)
		return arrow_scan_value(vs->ss, sf, a, i, isnull);
	*isnull = true;
	if (vs->vcol.absent)
		return (Datum) 0;
	if (!vs->vcol.direct)
		return arrow_datum_get(sf->conv[a], &vs->vcol.col, i, isnull);
	if (!pgwarp_vec_column_row(&vs->vcol, sf, i, &x, &dims))
		return (Datum) 0;
	elems = palloc(sizeof(Datum) * dims);
	for (int k = 0; k < dims; k++)
		elems[k] = Float4GetDatum(x[k]);
	*isnull = false;
	return PointerGetDatum(construct_array(elems, dims, FLOAT4OID, sizeof(float4),
										   true, TYPALIGN_INT));
}

/* the query vector, checked (as the operator checks its second argument) */
static void
check_query(VecScanState *vs, ExprContext *econtext)
{
	if (!vs->query_ready)
	{
		MemoryContext old = MemoryContextSwitchTo(econtext->ecxt_per_query_memory);
		Datum		d = ExecEvalExpr(vs->query_expr, econtext, &vs->query_null);

		if (!vs->query_null)
			vs->query_datum = PointerGetDatum(PG_DETOAST_DATUM_COPY(d));
		MemoryContextSwitchTo(old);
		vs->query_ready = true;
	}
	if (!vs->query_null && vs->query.x == NULL)
	{
		pgwarp_vec_from_array(DatumGetArrayTypeP(vs->query_datum), &vs->query);
		vs->query_norm2 = warp_vec_cpu_dot(vs->query.x, vs->query.x, vs->query.dims);
	}
}

/* the elements of row i of a list column as floats, or NULL to convert */
static const float *
row_floats(VecScanState *vs, const ArrowArray *col, int64 i, int *n)
{
	const ArrowArray *child = &col->children[0];
	const ArrowType *ct = &child->field->type;
	int64		start,
				end;

	if (col->field->type.id == ARROW_TYPE_FIXED_SIZE_LIST)
	{
		start = (col->offset + i) * (int64) col->field->type.fixed_size;
		end = start + col->field->type.fixed_size;
	}
	else if (col->field->type.id == ARROW_TYPE_LIST ||
			 col->field->type.id == ARROW_TYPE_LARGE_LIST)
	{
		start = arrow_offset_at(col, i);
		end = arrow_offset_at(col, i + 1);
	}
	else
		return NULL;
	if (ct->id != ARROW_TYPE_FLOAT || ct->precision == ARROW_PRECISION_DOUBLE ||
		end - start < 1 || end - start > MaxArraySize)
		return NULL;			/* the conversion raises what must be raised */
	if (child->validity != NULL && child->null_count != 0)
		for (int64 k = start; k < end; k++)
			if (arrow_is_null(child, k))
				return NULL;
	*n = (int) (end - start);
	if (ct->precision == ARROW_PRECISION_SINGLE)
		return (const float *) child->values + child->offset + start;
	if (*n > vs->scratch_len)
	{
		vs->scratch = vs->scratch ?
			repalloc(vs->scratch, sizeof(float) * *n) :
			MemoryContextAlloc(vs->topk_cxt, sizeof(float) * *n);
		vs->scratch_len = *n;
	}
	for (int k = 0; k < *n; k++)
		vs->scratch[k] = (float) arrow_half_to_double(
			((const uint16_t *) child->values)[child->offset + start + k]);
	return vs->scratch;
}

/* the distance of row i (false: NULL) */
static bool
row_distance(VecScanState *vs, ScanFile *sf, int64 i, ExprContext *econtext, double *dist)
{
	int			a = vs->attno - 1;
	const ArrowArray *col = vector_array(vs);
	WarpVecArg	row;
	bool		isnull;

	if (vs->streamed && vs->vcol.direct)
	{
		if (!pgwarp_vec_column_row(&vs->vcol, sf, i, &row.x, &row.dims))
			return false;
		vs->scored_direct++;
	}
	else if (sf->field_of_attr[a] < 0 || arrow_is_null(col, i))
		return false;
	else if ((row.x = row_floats(vs, col, i, &row.dims)) != NULL)
		vs->scored_direct++;
	else
	{
		Datum		d = vector_datum(vs, sf, i, &isnull);

		if (isnull)
			return false;
		pgwarp_vec_from_array(DatumGetArrayTypeP(d), &row);
	}
	check_query(vs, econtext);
	if (vs->query_null)
		return false;
	if (vs->var_first)
		pgwarp_vec_check_dims(row.dims, vs->query.dims);
	else
		pgwarp_vec_check_dims(vs->query.dims, row.dims);
	vs->scored++;
	*dist = warp_vec_cpu_distance(vs->kind, row.x, vs->query.x, row.dims,
							  vs->kind == WARP_VEC_COSINE ? vs->query_norm2 : -1.0);
	return true;
}

/* whether row i passes the quals (only their columns converted) */
static bool
row_passes(VecScanState *vs, ScanFile *sf, int64 i, ExprContext *econtext)
{
	TupleTableSlot *slot = vs->qual_slot;

	if (vs->qual == NULL)
		return true;
	ExecClearTuple(slot);
	for (int a = 0; a < slot->tts_tupleDescriptor->natts; a++)
		slot->tts_isnull[a] = true;
	for (int j = 0; j < vs->nqual_attrs; j++)
	{
		int			a = vs->qual_attrs[j];

		slot->tts_values[a] = arrow_scan_value(vs->ss, sf, a, i, &slot->tts_isnull[a]);
	}
	ExecStoreVirtualTuple(slot);
	econtext->ecxt_scantuple = slot;
	return ExecQual(vs->qual, econtext);
}

/* keep row i: its whole row formed in the top-k context */
static void
keep_row(VecScanState *vs, ScanFile *sf, int64 i, double dist, bool isnull, int64 seq)
{
	TupleDesc	td = RelationGetDescr(vs->css.ss.ss_currentRelation);
	Datum	   *values = palloc(sizeof(Datum) * td->natts);
	bool	   *nulls = palloc(sizeof(bool) * td->natts);
	WarpVecHit	hit;
	MemoryContext old;
	void	   *out;

	arrow_scan_row_values(vs->ss, i, values, nulls);
	if (vs->streamed)
		values[vs->attno - 1] = vector_datum(vs, sf, i, &nulls[vs->attno - 1]);
	old = MemoryContextSwitchTo(vs->topk_cxt);
	hit.payload = heap_form_minimal_tuple(td, values, nulls);
	MemoryContextSwitchTo(old);
	hit.dist = dist;
	hit.isnull = isnull;
	hit.seq = seq;
	out = warp_vec_topk_add(&vs->topk, &hit);
	if (out)
		pfree(out);
}

/*
 * A streamed batch with no qual, on the CPU threads: the serial path's
 * checks first (the query vector at the first non-NULL row, then the
 * dimensions, in the operator's order: every row of a FixedSizeList has
 * the same), then every distance on the threads, then the top-k in scan
 * order.  The answer and the errors are the serial loop's.
 */
static void
fill_batch_threads(VecScanState *vs, ScanFile *sf, ExprContext *econtext)
{
	ArrowScanState *ss = vs->ss;
	VecColumn  *vc = &vs->vcol;
	double	   *dist = NULL;
	int64		first = 0;

	if (!vc->absent)
		while (first < ss->cur_rows && vc->validity &&
			   !arrow_get_bit(vc->validity, vc->first_row + first))
			first++;
	if (!vc->absent && first < ss->cur_rows)
	{
		check_query(vs, econtext);
		if (!vs->query_null)
		{
			if (vs->var_first)
				pgwarp_vec_check_dims(vc->dims, vs->query.dims);
			else
				pgwarp_vec_check_dims(vs->query.dims, vc->dims);
			dist = MemoryContextAllocHuge(vc->batch_cxt, sizeof(double) * ss->cur_rows);
			pgwarp_vec_column_score(vc, sf, vs->query.x, vs->kind,
									vs->kind == WARP_VEC_COSINE ? vs->query_norm2 : -1.0,
									vs->nthreads, dist);
		}
	}
	for (int64 i = 0; i < ss->cur_rows; i++)
	{
		int64		seq = vs->seq++;
		bool		isnull = dist == NULL ||
			(vc->validity && !arrow_get_bit(vc->validity, vc->first_row + i));
		double		d = isnull ? 0 : dist[i];

		if (!isnull)
		{
			vs->scored++;
			vs->scored_direct++;
		}
		if (warp_vec_topk_wanted(&vs->topk, d, isnull, seq))
		{
			MemoryContext old;

			MemoryContextReset(ss->row_cxt);
			old = MemoryContextSwitchTo(ss->row_cxt);
			keep_row(vs, sf, i, d, isnull, seq);
			MemoryContextSwitchTo(old);
		}
	}
}

static void
fill_topk(VecScanState *vs)
{
	ArrowScanState *ss = vs->ss;
	ExprContext *econtext = vs->css.ss.ps.ps_ExprContext;

	while (arrow_scan_next_batch(ss, econtext, false))
	{
		ScanFile   *sf = &ss->files[ss->cur_file];

		CHECK_FOR_INTERRUPTS();
		if (vs->streamed)
		{
			pgwarp_vec_column_batch(&vs->vcol, ss, sf, vs->attno - 1);
			if (vs->nthreads > 1 && vs->qual == NULL && (vs->vcol.direct || vs->vcol.absent))
			{
				fill_batch_threads(vs, sf, econtext);
				continue;
			}
		}
		for (int64 i = 0; i < ss->cur_rows; i++)
		{
			double		dist = 0;
			bool		isnull;
			int64		seq = vs->seq++;
			MemoryContext old;

			MemoryContextReset(ss->row_cxt);
			ResetExprContext(econtext);
			old = MemoryContextSwitchTo(ss->row_cxt);
			if (row_passes(vs, sf, i, econtext))
			{
				isnull = !row_distance(vs, sf, i, econtext, &dist);
				if (warp_vec_topk_wanted(&vs->topk, dist, isnull, seq))
					keep_row(vs, sf, i, dist, isnull, seq);
			}
			MemoryContextSwitchTo(old);
		}
	}
	warp_vec_topk_sort(&vs->topk);
	vs->filled = true;
}

static TupleTableSlot *
vec_next(ScanState *node)
{
	VecScanState *vs = (VecScanState *) node;
	TupleTableSlot *slot = node->ss_ScanTupleSlot;

	if (!vs->filled)
		fill_topk(vs);
	if (vs->next_out >= vs->topk.n)
		return ExecClearTuple(slot);
	/* the scan slot is virtual (CustomScan's, and its projection was
	 * compiled for that): the kept row is copied into it */
	ExecStoreMinimalTuple(vs->topk.h[vs->next_out++].payload, vs->out_slot, false);
	return ExecCopySlot(slot, vs->out_slot);
}

static bool
vec_recheck(ScanState *node, TupleTableSlot *slot)
{
	return true;
}

static TupleTableSlot *
vec_exec(CustomScanState *node)
{
	return ExecScan(&node->ss, vec_next, vec_recheck);
}

static void
vec_rescan(CustomScanState *node)
{
	VecScanState *vs = (VecScanState *) node;

	ExecClearTuple(vs->out_slot);
	ExecClearTuple(node->ss.ss_ScanTupleSlot);
	arrow_scan_rescan(vs->ss);
	MemoryContextReset(vs->topk_cxt);
	vs->scratch = NULL;
	vs->scratch_len = 0;
	vs->topk.n = 0;
	vs->filled = false;
	vs->next_out = vs->seq = 0;
	vs->query_ready = false;
	vs->query.x = NULL;
}

static void
vec_end(CustomScanState *node)
{
	VecScanState *vs = (VecScanState *) node;

	arrow_scan_end(vs->ss);
}

static void
vec_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	VecScanState *vs = (VecScanState *) node;
	static const char *const opname[] = {"", "<->", "<#>", "<=>"};
	TupleDesc	td = RelationGetDescr(node->ss.ss_currentRelation);
	char	   *s;

	s = psprintf("%s %s, k = %lld", NameStr(TupleDescAttr(td, vs->attno - 1)->attname),
				 opname[vs->kind], (long long) vs->bound);
	ExplainPropertyText("Vector Top-K", s, es);
	if (vs->streamed && vs->qual == NULL && vs->nthreads > 1)
		s = psprintf("CPU (backend, %d threads); pg_warp_gpud has no vector kernel yet",
					 vs->nthreads);
	else
		s = pstrdup("CPU (backend); pg_warp_gpud has no vector kernel yet");
	ExplainPropertyText("Device", s, es);
	if (es->analyze)
	{
		ExplainPropertyInteger("Vectors Scored", NULL, vs->scored, es);
		ExplainPropertyInteger("Scored From Arrow Buffers", NULL, vs->scored_direct, es);
	}
	arrow_scan_explain(vs->ss, td, es);
}

void
pgwarp_vec_scan_exec_init(void)
{
	pgwarp_vec_scan_methods.CustomName = "WarpVecScan";
	pgwarp_vec_scan_methods.CreateCustomScanState = vec_create_state;
	vec_exec_methods.CustomName = "WarpVecScan";
	vec_exec_methods.BeginCustomScan = vec_begin;
	vec_exec_methods.ExecCustomScan = vec_exec;
	vec_exec_methods.EndCustomScan = vec_end;
	vec_exec_methods.ReScanCustomScan = vec_rescan;
	vec_exec_methods.ExplainCustomScan = vec_explain;
	RegisterCustomScanMethods(&pgwarp_vec_scan_methods);
}
