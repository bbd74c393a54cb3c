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
#include "utils/date.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "exec/warp_exec_internal.h"

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
			iv[n] = 0;
			continue;
		}
		valid[c][n >> 3] |= 1 << (n & 7);
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

/* The batch's rows through the CPU driver; the batch is empty again. */
static void
heap_batch_run(WarpScanState *ws, HeapBatch *hb)
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
	if (st != WARP_OK)
		warp_exec_report_status(st);
	if (ls != WARP_LOAD_OK)
		elog(ERROR, "pg_warp: the engine could not read column %d of heap table \"%s\"",
			 bad_col, RelationGetRelationName(rel));
	hb->n = 0;
	MemoryContextReset(hb->batch_cxt);
	CHECK_FOR_INTERRUPTS();
}

void
warp_exec_run_cpu_heap(WarpScanState *ws)
{
	MemoryContext old = MemoryContextSwitchTo(ws->engine_cxt);
	EState	   *estate = ws->css.ss.ps.state;
	Relation	rel = ws->fact_rel;
	HeapBatch	hb;
	WarpJoinTable **tables;
	TableScanDesc scan;
	TupleTableSlot *slot;

	tables = warp_exec_build_join_tables(ws);
	ws->cpu = warp_cpu_create(&ws->prog, tables, &ws->alloc);
	if (ws->cpu == NULL)
		warp_exec_report_status(WARP_ERR_OUT_OF_MEMORY);
	heap_batch_init(ws, &hb);
	slot = table_slot_create(rel, NULL);
	if (ws->heap_pscan)
		scan = table_beginscan_parallel(rel, ws->heap_pscan);
	else
		scan = table_beginscan(rel, estate->es_snapshot, 0, NULL);
	/* detoasted text values live until their batch has run */
	hb.batch_cxt = AllocSetContextCreate(ws->engine_cxt, "pg_warp heap batch",
										 ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(old);

	for (;;)
	{
		bool		more = table_scan_getnextslot(scan, ForwardScanDirection, slot);

		if (more)
		{
			slot_getsomeattrs(slot, hb.maxatt);
			heap_batch_add_row(ws, &hb, slot);
		}
		if (hb.n == WARP_HEAP_BATCH || (!more && hb.n > 0))
			heap_batch_run(ws, &hb);
		if (!more)
			break;
	}
	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	warp_cpu_counters(ws->cpu, &ws->counters);
	ws->groups = warp_cpu_ngroups(ws->cpu);
}
