/*-------------------------------------------------------------------------
 *
 * warp_scan_filter.c
 *	  The engine as a row prefilter of arrow_fdw's own scans.
 *
 * Where pg_warp's WarpPreAgg does not take a query (no aggregation, or one
 * the engine does not compute), arrow_fdw still scans the file batch by
 * batch.  The scan's quals that the engine computes exactly are compiled
 * into a program of quals only; each batch's column vectors go through it
 * (warp_cpu_filter_batch) before any row becomes a tuple, so rows failing
 * them cost no tuple at all.  PostgreSQL still evaluates every qual on the
 * rows kept: the prefilter can only save work.  Where the engine meets an
 * error on a batch (a division by zero, a value it cannot read), it keeps
 * all of that batch's rows and PostgreSQL raises its own error, if its
 * scan gets that far (a LIMIT may stop it first).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"

#include "pg_warp.h"
#include "warp.h"
#include "warp_cpu.h"
#include "warp_memlist.h"
#include "exec/warp_scan_filter.h"
#include "warp_threads.h"

/*
 * A driver of the filter's program for one range of a batch's rows, on a
 * thread of its own (warp_scan_filter_set_threads): engine memory from
 * malloc (warp_memlist.h), never palloc, since any thread may run it.
 */
typedef struct FilterPart
{
	WarpMemList mem;
	WarpAlloc	alloc;
	WarpCpu    *cpu;
	/* this batch's task */
	bool		ok;
	warp_int64	kept;
} FilterPart;

/* rows below which a batch is filtered on the calling thread alone */
#define FILTER_PARALLEL_MIN_ROWS (16 * WARP_VEC)

struct WarpScanFilter
{
	WarpProgram prog;
	WarpCpu    *cpu;
	AttrNumber *col_attno;
	ArrowArray *cols;
	bool	   *scratch;
	int64		scratch_len;
	List	   *quals;			/* the quals it evaluates (for EXPLAIN) */
	MemoryContext cxt;
	WarpAlloc	alloc;
	int64		rows_removed;
	int64		batches_given_up;
	/* warp_scan_filter_set_threads */
	int			want_parts;
	int			nparts;
	FilterPart *parts;
	/* the batch the parts run over */
	const ArrowArray *task_cols;
	int64		task_rows;
	int64		task_chunk;
	bool	   *task_keep;
};

static void *
filter_alloc(void *ctx, size_t size)
{
	return MemoryContextAllocExtended((MemoryContext) ctx, size,
									  MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
}

WarpScanFilter *
warp_scan_filter_create(List *quals, Index relid, ExprContext *econtext)
{
	MemoryContext cxt;
	MemoryContext old;
	WarpScanFilter *f;
	WarpBuilder b;
	List	   *nodes = NIL;
	ListCell   *lc;
	int			i;

	if (!pgwarp_enabled || !pgwarp_enable_scan_filter || quals == NIL)
		return NULL;
	cxt = AllocSetContextCreate(CurrentMemoryContext, "pg_warp scan filter",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	f = palloc0(sizeof(WarpScanFilter));
	f->cxt = cxt;
	warp_builder_init(&b, relid, econtext);
	/*
	 * The quals in PostgreSQL's order, up to the first the engine does not
	 * compute: a row may only be dropped for failing qual j when every qual
	 * PostgreSQL evaluates before j was evaluated too, so that their errors
	 * are met (and the batch left to PostgreSQL) exactly where PostgreSQL
	 * would meet them.
	 */
	foreach(lc, quals)
	{
		int			n = warp_compile_qual(&b, (Expr *) lfirst(lc));

		if (n < 0)
			break;
		nodes = lappend_int(nodes, n);
		f->quals = lappend(f->quals, lfirst(lc));
	}
	if (nodes == NIL)
	{
		MemoryContextSwitchTo(old);
		MemoryContextDelete(cxt);
		return NULL;
	}
	f->prog.version = WARP_PROGRAM_VERSION;
	f->prog.nquals = list_length(nodes);
	f->prog.quals = palloc(sizeof(int32) * f->prog.nquals);
	i = 0;
	foreach(lc, nodes)
		f->prog.quals[i++] = lfirst_int(lc);
	f->prog.nnodes = b.nnodes;
	f->prog.nodes = b.nodes;
	f->prog.nargs = b.nargs;
	f->prog.args = b.args;
	warp_builder_finish(&b, &f->prog);
	f->prog.ncols = b.ncols;
	f->prog.cols = b.cols;
	f->col_attno = b.col_attno;
	if (warp_program_validate(&f->prog) != NULL)
	{
		/* cannot happen: leave the scan to PostgreSQL's quals */
		MemoryContextSwitchTo(old);
		MemoryContextDelete(cxt);
		return NULL;
	}
	f->alloc.alloc = filter_alloc;
	f->alloc.ctx = cxt;
	f->cpu = warp_cpu_create(&f->prog, NULL, &f->alloc);
	f->cols = palloc0(sizeof(ArrowArray) * Max(f->prog.ncols, 1));
	MemoryContextSwitchTo(old);
	if (f->cpu == NULL)
	{
		MemoryContextDelete(cxt);
		return NULL;
	}
	return f;
}

int64
warp_scan_filter_batch(WarpScanFilter *f, const ArrowArray *cols_of_attr, int64 nrows,
					   bool *keep, int64 before)
{
	int64		kept;

	if (!warp_scan_filter_decide(f, cols_of_attr, nrows, keep, before, &kept))
		return before;			/* PostgreSQL's quals decide every row */
	return kept;
}

int
warp_scan_filter_nquals(const WarpScanFilter *f)
{
	return list_length(f->quals);
}

void
warp_scan_filter_free(WarpScanFilter *f)
{
	MemoryContextDelete(f->cxt);
}

/* free the parts' malloc'd memory with the filter's context, on error too */
static void
free_parts(void *arg)
{
	WarpScanFilter *f = arg;
	int			i;

	for (i = 0; i < f->nparts; i++)
		warp_memlist_free_all(&f->parts[i].mem);
	f->nparts = 0;
}

void
warp_scan_filter_set_threads(WarpScanFilter *f, int nthreads)
{
	f->want_parts = nthreads;
}

/* the parts' drivers, made at the first big batch (small tables never
 * pay for them) */
static void
make_parts(WarpScanFilter *f)
{
	MemoryContextCallback *cb;
	int			nthreads = f->want_parts;
	int			i;

	f->want_parts = 0;			/* once */
	f->parts = MemoryContextAllocZero(f->cxt, sizeof(FilterPart) * nthreads);
	cb = MemoryContextAlloc(f->cxt, sizeof(MemoryContextCallback));
	cb->func = free_parts;
	cb->arg = f;
	MemoryContextRegisterResetCallback(f->cxt, cb);
	for (i = 0; i < nthreads; i++)
	{
		FilterPart *fp = &f->parts[i];

		fp->alloc.alloc = warp_memlist_alloc;
		fp->alloc.ctx = &fp->mem;
		f->nparts = i + 1;
		fp->cpu = warp_cpu_create(&f->prog, NULL, &fp->alloc);
		if (fp->cpu == NULL)
		{
			/* no memory for it: filter on the calling thread */
			free_parts(f);
			return;
		}
	}
}

/* one part's rows of the batch (any thread: no PostgreSQL) */
static void
filter_part(void *arg, int task)
{
	WarpScanFilter *f = arg;
	FilterPart *fp = &f->parts[task];
	int64		first = task * f->task_chunk;
	int64		end = Min(first + f->task_chunk, f->task_rows);
	WarpLoadStatus ls;

	fp->kept = 0;
	fp->ok = true;
	if (first >= end)
		return;
	fp->ok = warp_cpu_filter_rows(fp->cpu, f->task_cols, first, end, f->task_keep,
								  &fp->kept, &ls) == WARP_OK && ls == WARP_LOAD_OK;
}

/* the batch over the parts' threads; false if any part failed */
static bool
filter_parallel(WarpScanFilter *f, int64 nrows, bool *scratch, int64 *kept)
{
	int			ntasks;
	int			i;

	f->task_cols = f->cols;
	f->task_rows = nrows;
	f->task_keep = scratch;
	/* whole vectors per part, so each part's vectors are the serial ones */
	f->task_chunk = ((nrows + f->nparts - 1) / f->nparts + WARP_VEC - 1) / WARP_VEC * WARP_VEC;
	ntasks = (int) ((nrows + f->task_chunk - 1) / f->task_chunk);
	if (warp_run_tasks(f->nparts, ntasks, filter_part, f, pgwarp_threads_interrupted, NULL) != 0)
	{
		CHECK_FOR_INTERRUPTS();
		return false;			/* an interrupt CHECK_FOR_INTERRUPTS let pass */
	}
	*kept = 0;
	for (i = 0; i < ntasks; i++)
	{
		if (!f->parts[i].ok)
			return false;
		*kept += f->parts[i].kept;
	}
	return true;
}

bool
warp_scan_filter_decide(WarpScanFilter *f, const ArrowArray *cols_of_attr, int64 nrows,
						bool *keep, int64 before, int64 *kept_out)
{
	WarpLoadStatus ls;
	int64		kept;
	int			c;

	if (nrows > f->scratch_len)
	{
		f->scratch = MemoryContextAllocHuge(f->cxt, sizeof(bool) * nrows);
		f->scratch_len = nrows;
	}
	memcpy(f->scratch, keep, sizeof(bool) * nrows);
	for (c = 0; c < f->prog.ncols; c++)
	{
		f->cols[c] = cols_of_attr[f->col_attno[c] - 1];
		if (f->cols[c].field == NULL)
		{
			/* a column this file does not have (NULL to PostgreSQL) */
			f->batches_given_up++;
			return false;
		}
	}
	if (f->want_parts > 1 && nrows >= FILTER_PARALLEL_MIN_ROWS)
		make_parts(f);
	if (f->nparts > 1 && nrows >= FILTER_PARALLEL_MIN_ROWS)
	{
		if (!filter_parallel(f, nrows, f->scratch, &kept))
		{
			f->batches_given_up++;
			return false;
		}
	}
	else if (warp_cpu_filter_batch(f->cpu, f->cols, nrows, f->scratch, &kept, &ls) != WARP_OK ||
			 ls != WARP_LOAD_OK)
	{
		f->batches_given_up++;
		return false;
	}
	memcpy(keep, f->scratch, sizeof(bool) * nrows);
	f->rows_removed += before - kept;
	*kept_out = kept;
	return true;
}

void
warp_scan_filter_explain(WarpScanFilter *f, PlanState *ps, ExplainState *es)
{
	List	   *context = set_deparse_context_plan(es->deparse_cxt, ps->plan, NIL);
	Node	   *expr = (Node *) make_ands_explicit(f->quals);

	ExplainPropertyText("Engine Prefilter", deparse_expression(expr, context, false, false), es);
	if (es->analyze)
	{
		ExplainPropertyInteger("Rows Removed by Engine", NULL, f->rows_removed, es);
		if (f->batches_given_up > 0)
			ExplainPropertyInteger("Batches Left to PostgreSQL", NULL, f->batches_given_up, es);
	}
}
