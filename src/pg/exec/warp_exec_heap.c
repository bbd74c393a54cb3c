/*
 * warp_exec_heap.c — the CPU driver over a heap fact table (WarpPreAgg,
 * WarpJoin or WarpScan on a PostgreSQL table): the table access method
 * reads the tuples, which are deformed into column vectors of engine
 * values for the driver.
 *
 * The Arrow fact tables' drivers are warp_exec_run.c, which calls this one.
 */
#include "postgres.h"

#include "access/tableam.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "exec/warp_exec_internal.h"
#include "pg_warp.h"

/*
 * A heap fact table: PostgreSQL's table AM reads the tuples (a parallel
 * scan's share of the pages under Gather) in this process, and they are
 * deformed into column vectors of engine values -- int64 in PostgreSQL's
 * own domain (infinite dates included), or double -- that the CPU driver
 * reads as native columns, WARP_HEAP_BATCH rows at a time.
 */
#define WARP_HEAP_BATCH 16384

/* A batch of the heap table's rows as column vectors for the CPU driver. */
typedef struct HeapBatch
{
	ArrowField *fields;
	ArrowArray *cols;
	uint8	  **valid;
	int		   *nnull;
	StringInfoData *tdata;		/* text columns: the batch's bytes */
	MemoryContext batch_cxt;	/* detoasted text values, until the batch ran */
	int			n;				/* rows in it */
	int			maxatt;			/* the last attribute the columns read */
	TableScanDesc scan;			/* the table AM's scan, and its slot */
	TupleTableSlot *slot;
	bool		done;			/* no row left */
} HeapBatch;

/* The batch's column vectors for the program's columns (in engine_cxt). */
static void
heap_batch_init(WarpScanState *ws, HeapBatch *hb)
{
	int			ncols = ws->prog.ncols;
	ArrowField *fields;
	ArrowArray *cols;
	uint8	  **valid;
	int		   *nnull;
	StringInfoData *tdata;
	int			maxatt = 0,
				c;

	fields = palloc0(sizeof(ArrowField) * Max(ncols, 1));
	cols = palloc0(sizeof(ArrowArray) * Max(ncols, 1));
	valid = palloc0(sizeof(uint8 *) * Max(ncols, 1));
	nnull = palloc0(sizeof(int) * Max(ncols, 1));
	tdata = palloc0(sizeof(StringInfoData) * Max(ncols, 1));
	for (c = 0; c < ncols; c++)
	{
		const WarpColumnSpec *cs = &ws->prog.cols[c];

		if (cs->text)
		{
			/* text: a LargeUtf8 array of the batch's bytes (the database is
			 * UTF8, as the planner requires for the engine's text) */
			fields[c].type.id = ARROW_TYPE_LARGE_UTF8;
			cols[c].field = &fields[c];
			cols[c].offsets = palloc(sizeof(int64) * (WARP_HEAP_BATCH + 1));
			initStringInfo(&tdata[c]);
			valid[c] = palloc(WARP_HEAP_BATCH / 8);
			maxatt = Max(maxatt, ws->col_attno[c]);
			continue;
		}
		if (cs->decimal)
		{
			/*
			 * numeric(p <= 38, s): a Decimal128(p, s) array of the unscaled
			 * values, which the driver loads as it loads an Arrow file's
			 * decimal column (warp_cpu_load.c)
			 */
			Assert(!cs->native);
			fields[c].type.id = ARROW_TYPE_DECIMAL;
			fields[c].type.bit_width = 128;
			fields[c].type.dec_precision = cs->precision > 0 ? cs->precision : 38;
			fields[c].type.dec_scale = cs->scale;
			cols[c].field = &fields[c];
			cols[c].values = palloc(16 * WARP_HEAP_BATCH);
			cols[c].values_len = 16 * WARP_HEAP_BATCH;
			valid[c] = palloc(WARP_HEAP_BATCH / 8);
			maxatt = Max(maxatt, ws->col_attno[c]);
			continue;
		}
		Assert(cs->native);
		if (WARP_TYPE_IS_FLOAT(cs->type))
		{
			fields[c].type.id = ARROW_TYPE_FLOAT;
			fields[c].type.precision = ARROW_PRECISION_DOUBLE;
		}
		else
		{
			fields[c].type.id = ARROW_TYPE_INT;
			fields[c].type.bit_width = 64;
			fields[c].type.is_signed = true;
		}
		cols[c].field = &fields[c];
		cols[c].values = palloc(sizeof(int64) * WARP_HEAP_BATCH);
		cols[c].values_len = sizeof(int64) * WARP_HEAP_BATCH;
		valid[c] = palloc(WARP_HEAP_BATCH / 8);
		maxatt = Max(maxatt, ws->col_attno[c]);
	}
	hb->fields = fields;
	hb->cols = cols;
	hb->valid = valid;
	hb->nnull = nnull;
	hb->tdata = tdata;
	hb->n = 0;
	hb->maxatt = maxatt;
}

/*
 * A numeric value of program column c as a Decimal128 value at the
 * column's scale (little-endian, as Arrow stores it).  NaN, which a
 * numeric(p, s) column may hold and Decimal128 cannot, is an error: the
 * planner leaves columns whose statistics show NaN to PostgreSQL
 * (warp_plan_admit.c), so this is a NaN that ANALYZE did not sample.
 */
static void
heap_numeric_value(WarpScanState *ws, int c, Datum d, uint8 *out)
{
	__int128	v;
	uint64		lo;
	int64		hi;

	if (!pgwarp_numeric_unscaled(d, ws->prog.cols[c].scale, &v))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("pg_warp's engine cannot compute with the value %s of column \"%s\" of table \"%s\"",
						DatumGetCString(DirectFunctionCall1(numeric_out, d)),
						get_attname(ws->fact_oid, ws->col_attno[c], false),
						RelationGetRelationName(ws->fact_rel)),
				 errdetail("The engine's numeric values are 128-bit fixed point, without NaN."),
				 errhint("Run ANALYZE on the table (pg_warp then leaves the column to PostgreSQL), "
						 "or set pg_warp.enabled = off for this query.")));
	lo = (uint64) v;
	hi = (int64) (v >> 64);
	memcpy(out, &lo, 8);
	memcpy(out + 8, &hi, 8);
}

/* The slot's row (its attributes up to maxatt deformed) into the batch. */
static void
heap_batch_add_row(WarpScanState *ws, HeapBatch *hb, TupleTableSlot *slot)
{
	int			ncols = ws->prog.ncols;
	ArrowArray *cols = hb->cols;
	uint8	  **valid = hb->valid;
	int		   *nnull = hb->nnull;
	StringInfoData *tdata = hb->tdata;
	MemoryContext batch_cxt = hb->batch_cxt;
	int			n = hb->n;
	int			c;

	for (c = 0; c < ncols; c++)
	{
		int			att = ws->col_attno[c] - 1;
		Datum		d = slot->tts_values[att];
		int64	   *iv = (int64 *) cols[c].values;

		if (ws->prog.cols[c].text)
		{
			int64	   *off = (int64 *) cols[c].offsets;

			if (n == 0)
			{
				resetStringInfo(&tdata[c]);
				off[0] = 0;
			}
			if (slot->tts_isnull[att])
			{
				valid[c][n >> 3] &= ~(1 << (n & 7));
				nnull[c]++;
			}
			else
			{
				MemoryContext oc = MemoryContextSwitchTo(batch_cxt);
				text	   *t = DatumGetTextPP(d);

				MemoryContextSwitchTo(oc);
				valid[c][n >> 3] |= 1 << (n & 7);
				appendBinaryStringInfo(&tdata[c], VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
			}
			off[n + 1] = tdata[c].len;
			continue;
		}
		if (slot->tts_isnull[att])
		{
			valid[c][n >> 3] &= ~(1 << (n & 7));
			nnull[c]++;
			if (ws->prog.cols[c].decimal)
				memset((uint8 *) cols[c].values + 16 * n, 0, 16);
			else
				iv[n] = 0;
			continue;
		}
		valid[c][n >> 3] |= 1 << (n & 7);
		if (ws->prog.cols[c].decimal)
		{
			heap_numeric_value(ws, c, d, (uint8 *) cols[c].values + 16 * n);
			continue;
		}
		switch ((WarpType) ws->prog.cols[c].type)
		{
			case WT_BOOL:
				iv[n] = DatumGetBool(d) ? 1 : 0;
				break;
			case WT_INT2:
				iv[n] = DatumGetInt16(d);
				break;
			case WT_INT4:
				iv[n] = DatumGetInt32(d);
				break;
			case WT_DATE:
				iv[n] = DatumGetDateADT(d);
				break;
			case WT_FLOAT4:
				((double *) iv)[n] = DatumGetFloat4(d);
				break;
			case WT_FLOAT8:
				((double *) iv)[n] = DatumGetFloat8(d);
				break;
			default:	/* int8, timestamp, timestamptz */
				iv[n] = DatumGetInt64(d);
				break;
		}
	}
	hb->n = n + 1;
}

/*
 * A value the engine cannot compute where PostgreSQL would not fail: the
 * fields of an infinite date or timestamp (extract() and date_part() give
 * +-Infinity or NULL there), which a heap table may hold and an Arrow file
 * cannot.  The planner leaves columns whose statistics show infinities to
 * PostgreSQL (warp_plan_admit.c), so this is one ANALYZE did not sample.
 */
static void
heap_report_fallback(WarpScanState *ws, WarpStatus st)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("pg_warp's engine cannot compute a value of table \"%s\": %s",
					RelationGetRelationName(ws->fact_rel), warp_status_message(st)),
			 errhint("Run ANALYZE on the table (pg_warp then leaves such columns to PostgreSQL), "
					 "or set pg_warp.enabled = off for this query.")));
}

/*
 * The batch's rows through the CPU driver; the batch is empty again.
 * Row mode (keep_error) keeps the driver's error in rows_status for
 * warp_exec_heap_raise_pending: the rows before the failing one go up
 * first, as from PostgreSQL's own scan.
 */
static void
heap_batch_run(WarpScanState *ws, HeapBatch *hb, bool keep_error)
{
	Relation	rel = ws->fact_rel;
	WarpLoadStatus ls;
	int			bad_col = 0;
	int64		bad_row = 0;
	WarpStatus	st;
	int			c;

	for (c = 0; c < ws->prog.ncols; c++)
	{
		hb->cols[c].length = hb->n;
		hb->cols[c].null_count = hb->nnull[c];
		hb->cols[c].validity = hb->nnull[c] > 0 ? hb->valid[c] : NULL;
		hb->nnull[c] = 0;
		if (ws->prog.cols[c].text)
		{
			hb->cols[c].data = (const uint8 *) hb->tdata[c].data;
			hb->cols[c].data_len = hb->tdata[c].len;
		}
	}
	st = warp_cpu_run_batch(ws->cpu, hb->cols, hb->n, NULL, &ls, &bad_col, &bad_row);
	hb->n = 0;
	MemoryContextReset(hb->batch_cxt);
	if (keep_error)
	{
		ws->rows_status = st;
		ws->rows_load = ls;
		ws->rows_bad_col = bad_col;
		return;
	}
	if (warp_status_is_fallback(st))
		heap_report_fallback(ws, st);
	if (st != WARP_OK)
		warp_exec_report_status(st);
	if (ls != WARP_LOAD_OK)
		elog(ERROR, "pg_warp: the engine could not read column %d of heap table \"%s\"",
			 bad_col, RelationGetRelationName(rel));
	CHECK_FOR_INTERRUPTS();
}

/* The scan of the table and the batch's vectors (in engine_cxt). */
static HeapBatch *
heap_begin(WarpScanState *ws)
{
	MemoryContext old = MemoryContextSwitchTo(ws->engine_cxt);
	EState	   *estate = ws->css.ss.ps.state;
	Relation	rel = ws->fact_rel;
	HeapBatch  *hb = palloc0(sizeof(HeapBatch));

	heap_batch_init(ws, hb);
	hb->slot = table_slot_create(rel, NULL);
	if (ws->heap_pscan)
		hb->scan = table_beginscan_parallel(rel, ws->heap_pscan);
	else
		hb->scan = table_beginscan(rel, estate->es_snapshot, 0, NULL);
	/* detoasted text values live until their batch has run */
	hb->batch_cxt = AllocSetContextCreate(ws->engine_cxt, "pg_warp heap batch",
										  ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(old);
	return hb;
}

/* The next rows of the table into the batch; false when none was left. */
static bool
heap_fill(WarpScanState *ws, HeapBatch *hb)
{
	while (!hb->done && hb->n < WARP_HEAP_BATCH)
	{
		if (!table_scan_getnextslot(hb->scan, ForwardScanDirection, hb->slot))
		{
			hb->done = true;
			break;
		}
		slot_getsomeattrs(hb->slot, hb->maxatt);
		heap_batch_add_row(ws, hb, hb->slot);
	}
	return hb->n > 0;
}

static void
heap_end(HeapBatch *hb)
{
	if (hb->scan)
		table_endscan(hb->scan);
	if (hb->slot)
		ExecDropSingleTupleTableSlot(hb->slot);
	hb->scan = NULL;
	hb->slot = NULL;
}

void
warp_exec_run_cpu_heap(WarpScanState *ws)
{
	MemoryContext old = MemoryContextSwitchTo(ws->engine_cxt);
	WarpJoinTable **tables;
	HeapBatch  *hb;

	tables = warp_exec_build_join_tables(ws);
	ws->cpu = warp_cpu_create(&ws->prog, tables, &ws->alloc);
	if (ws->cpu == NULL)
		warp_exec_report_status(WARP_ERR_OUT_OF_MEMORY);
	MemoryContextSwitchTo(old);
	hb = heap_begin(ws);
	while (heap_fill(ws, hb))
		heap_batch_run(ws, hb, false);
	heap_end(hb);
	warp_cpu_counters(ws->cpu, &ws->counters);
	ws->groups = warp_cpu_ngroups(ws->cpu);
}

/*
 * Row mode (WarpJoin, WarpScan) over a heap fact table: the next batch of
 * the table's rows through the driver (warp_exec_rows_start made it), its
 * joined rows left in the driver's table; false when no row is left.
 */
bool
warp_exec_heap_rows_next(WarpScanState *ws)
{
	HeapBatch  *hb = (HeapBatch *) ws->heap_rows;

	if (hb == NULL)
		ws->heap_rows = hb = heap_begin(ws);
	warp_cpu_reset_groups(ws->cpu);
	ws->groups = 0;
	ws->next_group = 0;
	if (!heap_fill(ws, hb))
	{
		heap_end(hb);
		return false;
	}
	heap_batch_run(ws, hb, true);
	ws->groups = warp_cpu_ngroups(ws->cpu);
	warp_cpu_counters(ws->cpu, &ws->counters);
	return true;
}

/* Row mode: the error kept until the batch's rows before it went up. */
void
warp_exec_heap_raise_pending(WarpScanState *ws)
{
	if (warp_status_is_fallback(ws->rows_status))
		heap_report_fallback(ws, ws->rows_status);
	if (ws->rows_status != WARP_OK)
		warp_exec_report_status(ws->rows_status);
	if (ws->rows_load != WARP_LOAD_OK)
		elog(ERROR, "pg_warp: the engine could not read column %d of heap table \"%s\"",
			 ws->rows_bad_col, RelationGetRelationName(ws->fact_rel));
}

/* Row mode: the scan ended early (a rescan, the node's end). */
void
warp_exec_heap_rows_end(WarpScanState *ws)
{
	if (ws->heap_rows)
		heap_end((HeapBatch *) ws->heap_rows);
	ws->heap_rows = NULL;
}
