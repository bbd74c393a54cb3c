/*-------------------------------------------------------------------------
 *
 * warp_dim_arrow.c
 *	  A dimension's rows read by the engine straight from its Arrow batches.
 *
 * A star query's dimension side is usually a plain arrow_fdw scan with a
 * qual or two (c_region = 'AMERICA').  Run through PostgreSQL's executor,
 * every row the scan's prefilter keeps becomes a tuple of every referenced
 * column, PostgreSQL evaluates the quals again on it, and a projection picks
 * the join key and the group columns: with the dimension cache cold (a new
 * connection, a changed table) that build took longer than the fact scan
 * itself (SSB q4.2: 40 ms of build against 31 ms of scan at SF=1).  Here
 * the batches come through arrow_fdw's own scan (the same files, batch
 * skipping, raw-value filter and counters), one engine program of all the
 * scan's quals decides every row exactly, and only the output columns of
 * the rows that pass become Datums.
 *
 * Taken only where that is exactly PostgreSQL's answer: an arrow_fdw scan
 * that is not parallel-aware, whose output columns are plain columns of its
 * table, and whose quals the engine computes every one of.  A batch the
 * engine gives up on (an error such as a division by zero, a value it
 * cannot read, a column the file lacks) goes through PostgreSQL's quals row
 * by row, so PostgreSQL raises its own error where its scan would.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "nodes/execnodes.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "fdw/arrow_scan.h"
#include "pg_warp.h"
#include "warp.h"
#include "exec/warp_dim_arrow.h"
#include "exec/warp_scan_filter.h"

/* how an output column of this batch's file reads without conversion */
typedef enum RawKind
{
	RAW_NONE,					/* only as a Datum */
	RAW_INT,					/* an integer the SQL type holds as it is */
	RAW_INT_BYTES,				/* an integer of another width or type:
								 * its value as bytes, not as the key */
	RAW_TEXT					/* UTF-8 bytes (dictionary entries too) */
} RawKind;

struct WarpDimArrow
{
	ForeignScanState *node;
	ArrowScanState *ss;
	WarpScanFilter *filter;		/* all the quals; NULL when there are none */
	int			nout;
	AttrNumber *out_attno;		/* per output column */
	bool	   *keep;			/* rows of the batch that pass */
	int64		keep_len;
	bool		batch_loaded;
	bool		batch_by_pg;	/* the engine gave this batch up */
	int64		row;			/* next row of the batch */
	MemoryContext batch_cxt;	/* the values of this batch's rows */
	int64		rows;
	int64		cur;			/* the current row (warp_dim_arrow_next_row) */
	Oid		   *out_type;		/* per output column: its SQL type */
	RawKind    *raw;			/* per output column, for this batch */
};

/* the attribute number of each output column, or false if one is not a
 * plain column of the scanned table */
static bool
output_attnos(ForeignScanState *node, AttrNumber *attno, int natts)
{
	Plan	   *plan = node->ss.ps.plan;
	Index		scanrelid = ((Scan *) plan)->scanrelid;
	ListCell   *lc;
	int			i = 0;

	foreach(lc, plan->targetlist)
	{
		TargetEntry *tle = lfirst(lc);
		Var		   *var = (Var *) tle->expr;

		if (!IsA(var, Var) || var->varno != scanrelid || var->varlevelsup != 0 ||
			var->varattno < 1 || var->varattno > natts)
			return false;
		attno[i++] = var->varattno;
	}
	return true;
}

WarpDimArrow *
warp_dim_arrow_begin(PlanState *ps)
{
	ArrowScanState *ss = arrow_fdw_scan_state(ps);
	ForeignScanState *node = (ForeignScanState *) ps;
	WarpDimArrow *r;
	List	   *quals;

	if (ss == NULL || !pgwarp_enable_dim_scan || ps->plan->parallel_aware ||
		ss->shared != &ss->local_shared || ss->nfiles == 0 || ss->batch_start == NULL)
		return NULL;
	r = palloc0(sizeof(WarpDimArrow));
	r->node = node;
	r->ss = ss;
	r->nout = list_length(ps->plan->targetlist);
	r->out_attno = palloc(sizeof(AttrNumber) * Max(r->nout, 1));
	if (!output_attnos(node, r->out_attno, ss->natts))
	{
		pfree(r->out_attno);
		pfree(r);
		return NULL;
	}
	r->out_type = palloc(sizeof(Oid) * Max(r->nout, 1));
	r->raw = palloc0(sizeof(RawKind) * Max(r->nout, 1));
	{
		TupleDesc	td = RelationGetDescr(node->ss.ss_currentRelation);
		int			k;

		for (k = 0; k < r->nout; k++)
			r->out_type[k] = TupleDescAttr(td, r->out_attno[k] - 1)->atttypid;
	}
	quals = ps->plan->qual;
	if (quals != NIL)
	{
		r->filter = warp_scan_filter_create(quals, ((Scan *) ps->plan)->scanrelid,
											ps->ps_ExprContext);
		if (r->filter == NULL || warp_scan_filter_nquals(r->filter) != list_length(quals))
		{
			if (r->filter)
				warp_scan_filter_free(r->filter);
			pfree(r->out_attno);
			pfree(r);
			return NULL;
		}
		/* a parallel worker is one participant of many already */
		if (!IsParallelWorker())
			warp_scan_filter_set_threads(r->filter, pgwarp_cpu_thread_count());
	}
	r->batch_cxt = AllocSetContextCreate(CurrentMemoryContext, "pg_warp dimension batch",
										 ALLOCSET_DEFAULT_SIZES);
	return r;
}

/*
 * What each output column of the loaded batch reads as without a Datum.
 * RAW_INT only where every value of the Arrow type is the same value of
 * the SQL type (a signed integer no wider, an unsigned one narrower), so
 * that it is what the conversion would give; a column that would need a
 * range check is read through arrow_fdw's conversion.
 */
static void
set_raw_kinds(WarpDimArrow *r)
{
	ArrowScanState *ss = r->ss;
	ScanFile   *sf = &ss->files[ss->cur_file];
	int			k;

	for (k = 0; k < r->nout; k++)
	{
		int			a = r->out_attno[k] - 1;
		const ArrowArray *col = &ss->cur_cols[a];
		const ArrowType *t;
		int			width;

		r->raw[k] = RAW_NONE;
		if (sf->field_of_attr[a] < 0 || col->field == NULL)
			continue;
		t = &col->field->type;
		if (t->id == ARROW_TYPE_UTF8 || t->id == ARROW_TYPE_LARGE_UTF8)
		{
			if (!col->field->has_dict || col->dictionary != NULL)
				r->raw[k] = RAW_TEXT;
			continue;
		}
		/* booleans, dates, times and timestamps: their integer is the value
		 * exactly, so equal integers convert to equal Datums (payload
		 * lookups only) */
		if ((t->id == ARROW_TYPE_DATE || t->id == ARROW_TYPE_TIME ||
			 t->id == ARROW_TYPE_TIMESTAMP || t->id == ARROW_TYPE_BOOL) &&
			!col->field->has_dict)
		{
			r->raw[k] = RAW_INT_BYTES;
			continue;
		}
		if (t->id != ARROW_TYPE_INT || col->field->has_dict ||
			(!t->is_signed && t->bit_width == 64))
			continue;
		r->raw[k] = RAW_INT_BYTES;
		width = r->out_type[k] == INT2OID ? 16 : r->out_type[k] == INT4OID ? 32 :
			r->out_type[k] == INT8OID ? 64 : 0;
		if (t->is_signed ? t->bit_width <= width : t->bit_width < width)
			r->raw[k] = RAW_INT;
	}
}

/* load the next batch and decide its rows; false at the end */
static bool
next_batch(WarpDimArrow *r)
{
	ArrowScanState *ss = r->ss;
	int64		kept = 0;
	int64		i;

	/*
	 * No row filter in the scan: the raw-value filter and arrow_fdw's engine
	 * prefilter would only run a part of the quals that r->filter runs in
	 * full (the rows it removes are counted with theirs, for EXPLAIN).
	 */
	if (!arrow_scan_next_batch(ss, r->node->ss.ps.ps_ExprContext, false))
	{
		ss->done = true;
		return false;
	}
	MemoryContextReset(r->batch_cxt);
	if (ss->cur_rows > r->keep_len)
	{
		if (r->keep)
			pfree(r->keep);
		r->keep = MemoryContextAllocHuge(GetMemoryChunkContext(r), sizeof(bool) * ss->cur_rows);
		r->keep_len = ss->cur_rows;
	}
	for (i = 0; i < ss->cur_rows; i++)
	{
		r->keep[i] = ss->cur_keep == NULL || ss->cur_keep[i];
		kept += r->keep[i];
	}
	r->batch_by_pg = false;
	if (r->filter && kept > 0)
	{
		if (warp_scan_filter_decide(r->filter, ss->cur_cols, ss->cur_rows, r->keep, kept, &kept))
			pg_atomic_fetch_add_u64(&ss->shared->rows_filtered, ss->cur_rows - kept);
		else
			r->batch_by_pg = true;
	}
	set_raw_kinds(r);
	r->row = 0;
	r->batch_loaded = true;
	return true;
}

bool
warp_dim_arrow_next_row(WarpDimArrow *r)
{
	ArrowScanState *ss = r->ss;

	for (;;)
	{
		int64		i;

		if (!r->batch_loaded || r->row >= ss->cur_rows)
		{
			if (!next_batch(r))
				return false;
			continue;
		}
		i = r->row++;
		if (!r->keep[i])
			continue;
		if (r->batch_by_pg)
		{
			/* PostgreSQL's quals on the whole row, as arrow_fdw's scan runs
			 * them */
			ExprContext *econtext = r->node->ss.ps.ps_ExprContext;
			TupleTableSlot *slot = r->node->ss.ss_ScanTupleSlot;
			MemoryContext old = MemoryContextSwitchTo(r->batch_cxt);
			bool		pass;

			ExecClearTuple(slot);
			arrow_scan_row_values(ss, i, slot->tts_values, slot->tts_isnull);
			ExecStoreVirtualTuple(slot);
			ResetExprContext(econtext);
			econtext->ecxt_scantuple = slot;
			pass = ExecQual(r->node->ss.ps.qual, econtext);
			MemoryContextSwitchTo(old);
			if (!pass)
				continue;
		}
		r->cur = i;
		r->rows++;
		return true;
	}
}

Datum
warp_dim_arrow_datum(WarpDimArrow *r, int k, bool *isnull)
{
	ArrowScanState *ss = r->ss;
	MemoryContext old;
	Datum		v;

	if (r->batch_by_pg)
	{
		TupleTableSlot *slot = r->node->ss.ss_ScanTupleSlot;

		*isnull = slot->tts_isnull[r->out_attno[k] - 1];
		return slot->tts_values[r->out_attno[k] - 1];
	}
	old = MemoryContextSwitchTo(r->batch_cxt);
	v = arrow_scan_value(ss, &ss->files[ss->cur_file], r->out_attno[k] - 1, r->cur, isnull);
	MemoryContextSwitchTo(old);
	return v;
}

bool
warp_dim_arrow_int(WarpDimArrow *r, int k, int64 *v, bool *isnull)
{
	const ArrowArray *a;

	if (r->batch_by_pg || r->raw[k] != RAW_INT)
		return false;
	a = &r->ss->cur_cols[r->out_attno[k] - 1];
	*isnull = arrow_is_null(a, r->cur);
	*v = *isnull ? 0 : arrow_get_int(a, r->cur);
	return true;
}

bool
warp_dim_arrow_text(WarpDimArrow *r, int k, const uint8 **p, int64 *len, bool *isnull)
{
	int64		unused;

	if (r->batch_by_pg || r->raw[k] != RAW_TEXT)
		return false;
	return warp_dim_arrow_raw(r, k, p, len, &unused, isnull);
}

bool
warp_dim_arrow_raw(WarpDimArrow *r, int k, const uint8 **p, int64 *len, int64 *ibuf,
				   bool *isnull)
{
	const ArrowArray *a;
	int64		i = r->cur;

	if (r->batch_by_pg || r->raw[k] == RAW_NONE)
		return false;
	a = &r->ss->cur_cols[r->out_attno[k] - 1];
	*isnull = arrow_is_null(a, i);
	*p = NULL;
	*len = 0;
	if (*isnull)
		return true;
	if (r->raw[k] != RAW_TEXT)
	{
		*ibuf = arrow_get_int(a, i);
		*p = (const uint8 *) ibuf;
		*len = sizeof(int64);
		return true;
	}
	if (a->field->has_dict)
	{
		const ArrowArray *d = a->dictionary;
		int64		e = arrow_get_dict_index(a, i);

		if (arrow_is_null(d, e))
		{
			*isnull = true;
			return true;
		}
		*p = arrow_get_bytes(d, e, len);
		return true;
	}
	*p = arrow_get_bytes(a, i, len);
	return true;
}

bool
warp_dim_arrow_next(WarpDimArrow *r, Datum *values, bool *isnull)
{
	int			k;

	if (!warp_dim_arrow_next_row(r))
		return false;
	for (k = 0; k < r->nout; k++)
		values[k] = warp_dim_arrow_datum(r, k, &isnull[k]);
	return true;
}

int64
warp_dim_arrow_end(WarpDimArrow *r)
{
	int64		rows = r->rows;

	r->ss->done = true;
	if (r->filter)
		warp_scan_filter_free(r->filter);
	MemoryContextDelete(r->batch_cxt);
	if (r->keep)
		pfree(r->keep);
	pfree(r->out_attno);
	pfree(r->out_type);
	pfree(r->raw);
	pfree(r);
	return rows;
}
