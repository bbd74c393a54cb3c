/*
 * warp_exec_run.c — running a WarpPreAgg / WarpJoin node's program over an
 * Arrow fact table: the CPU driver in this process over the batches
 * arrow_scan.c reads, the same on pg_warp.cpu_threads threads
 * (warp_cpu_pool.h), or the job handed to pg_warp_gpud (gpud_client.c),
 * falling back to the CPU when the daemon cannot run it; in row mode
 * (WarpJoin, WarpScan) batch by batch, or round by round on threads.  The
 * errors the engine meets are raised here as PostgreSQL's own.  The job on
 * the daemon is warp_exec_daemon.c's.
 *
 * A heap fact table has its own driver (warp_exec_heap.c); the groups the
 * drivers leave are merged and read by warp_exec_groups.c.
 */
#include "postgres.h"

#include "executor/executor.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "exec/warp_exec_internal.h"

void
warp_exec_report_status(WarpStatus st)
{
	ereport(ERROR,
			(errcode(warp_status_errcode(st)),
			 errmsg("%s", warp_status_message(st))));
}

/* A column the engine could not load: PostgreSQL's error for it. */
void
warp_exec_report_load_error(WarpScanState *ws, WarpLoadStatus ls, int bad_col, int64 bad_row,
				  const char *path)
{
	const char *col = get_attname(ws->fact_oid, ws->col_attno[bad_col], false);

	if (ls == WARP_LOAD_RANGE)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("%s out of range in column \"%s\"",
						ws->prog.cols[bad_col].type == WT_DATE ? "date" : "timestamp", col),
				 errdetail("Arrow file \"%s\", record batch %d, row %lld.",
						   path, ws->scan.cur_batch, (long long) bad_row)));
	if (ls == WARP_LOAD_PRECISION)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("value in column \"%s\" has more digits than numeric(%d,%d) allows",
						col, ws->prog.cols[bad_col].precision, ws->prog.cols[bad_col].scale),
				 errdetail("Arrow file \"%s\", record batch %d, row %lld.",
						   path, ws->scan.cur_batch, (long long) bad_row),
				 errhint("pg_warp's numeric arithmetic relies on the declared precision; "
						 "set pg_warp.enabled = off to compute with the file's values.")));
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("pg_warp's engine cannot read column \"%s\" of Arrow file \"%s\" as declared",
					col, path),
			 errhint("Set pg_warp.enabled = off for this query.")));
}

/* The dimensions' join tables for the CPU driver (in engine_cxt). */
WarpJoinTable **
warp_exec_build_join_tables(WarpScanState *ws)
{
	WarpJoinTable **tables = palloc(sizeof(WarpJoinTable *) * Max(ws->ndims, 1));
	int			i;

	for (i = 0; i < ws->ndims; i++)
	{
		WarpDim    *d = &ws->dims[i];

		if (d->table_ready && d->table)
		{
			tables[i] = d->table;
			continue;
		}
		d->table = warp_join_build(&ws->alloc, d->probe_keys ? d->probe_keys : d->keys,
								   d->pids, d->rows, d->npayloads);
		if (d->table == NULL)
			warp_exec_report_status(WARP_ERR_OUT_OF_MEMORY);
		tables[i] = d->table;
	}
	return tables;
}

/*
 * The batch (part) arrow_scan.c loaded last through this process's driver.
 * *ls: a column it could not load (only with WARP_OK), at file row
 * *bad_row.
 */
static WarpStatus
run_current_batch(WarpScanState *ws, WarpLoadStatus *ls, int *bad_col, int64 *bad_row)
{
	WarpStatus	st;
	int			c;

	for (c = 0; c < ws->prog.ncols; c++)
		ws->batch_cols[c] = ws->scan.cur_cols[ws->col_attno[c] - 1];
	st = warp_cpu_run_batch(ws->cpu, ws->batch_cols, ws->scan.cur_rows, NULL,
							ls, bad_col, bad_row);
	if (st != WARP_OK)
		*ls = WARP_LOAD_OK;
	*bad_row += ws->scan.cur_first_row;
	return st;
}

/* The CPU driver, in this process, over the batches arrow_scan.c reads. */
static void
run_cpu_serial(WarpScanState *ws)
{
	MemoryContext old = MemoryContextSwitchTo(ws->engine_cxt);
	WarpJoinTable **tables;
	ExprContext *econtext = ws->css.ss.ps.ps_ExprContext;

	tables = warp_exec_build_join_tables(ws);
	ws->cpu = warp_cpu_create(&ws->prog, tables, &ws->alloc);
	if (ws->cpu == NULL)
		warp_exec_report_status(WARP_ERR_OUT_OF_MEMORY);
	ws->batch_cols = palloc0(sizeof(ArrowArray) * Max(ws->prog.ncols, 1));
	MemoryContextSwitchTo(old);

	while (arrow_scan_next_batch(&ws->scan, econtext, false))
	{
		WarpLoadStatus ls;
		int			bad_col = 0;
		int64		bad_row = 0;
		WarpStatus	st = run_current_batch(ws, &ls, &bad_col, &bad_row);

		if (st != WARP_OK)
			warp_exec_report_status(st);
		if (ls != WARP_LOAD_OK)
			warp_exec_report_load_error(ws, ls, bad_col, bad_row,
							  ws->scan.files[ws->scan.cur_file].path);
	}
	warp_cpu_counters(ws->cpu, &ws->counters);
	ws->groups = warp_cpu_ngroups(ws->cpu);
}

/* frees the pool's malloc'd memory with engine_cxt (reset, end or abort) */
static void
pool_release(void *arg)
{
	warp_cpu_pool_free((WarpCpuPool *) arg);
}

/*
 * The CPU driver on ws->nthreads threads of this backend (warp_cpu_pool.h):
 * the threads touch no PostgreSQL state; this thread lists the batches,
 * checks the files before and after, polls for cancel between units and
 * raises whatever error the earliest failing unit met.
 *
 * A pool over the scan's files (no units yet), freed when cxt is reset.
 */
static WarpCpuPool *
pool_create(WarpScanState *ws, WarpJoinTable **tables, MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	ArrowScanState *ss = &ws->scan;
	WarpCpuPool *pool;
	MemoryContextCallback *cb;
	int			i,
				c,
				nnull;
	int		   *null_attnos;
	bool	   *null_is_null;

	nnull = arrow_skip_null_quals(ss->skip, &null_attnos, &null_is_null);
	pool = palloc0(sizeof(WarpCpuPool));
	pool->prog = &ws->prog;
	pool->tables = tables;
	pool->nfiles = ss->nfiles;
	pool->files = palloc0(sizeof(WarpPoolFile) * Max(ss->nfiles, 1));
	for (i = 0; i < ss->nfiles; i++)
	{
		ScanFile   *sf = &ss->files[i];
		int		   *fields;

		if (sf->empty || !sf->opened)
			continue;
		fields = palloc(sizeof(int) * Max(ws->prog.ncols, 1));
		for (c = 0; c < ws->prog.ncols; c++)
			fields[c] = sf->field_of_attr[ws->col_attno[c] - 1];
		pool->files[i].file = &sf->file;
		pool->files[i].fields = fields;
		pool->files[i].mappable = pgwarp_cpu_mmap;
		pool->files[i].map_fd = sf->fd;
		if (nnull > 0)
		{
			int		   *nf = palloc(sizeof(int) * nnull);

			for (c = 0; c < nnull; c++)
				nf[c] = sf->field_of_attr[null_attnos[c]];
			pool->files[i].nnull = nnull;
			pool->files[i].null_fields = nf;
			pool->files[i].null_is_null = null_is_null;
		}
	}
	pool->nthreads = ws->nthreads;
	pool->parts = WARP_SCAN_PARTS;
	pool->interrupted = pgwarp_threads_interrupted;
	cb = palloc0(sizeof(MemoryContextCallback));
	cb->func = pool_release;
	cb->arg = pool;
	MemoryContextRegisterResetCallback(cxt, cb);
	MemoryContextSwitchTo(old);
	return pool;
}

/*
 * Run the pool's units (pool->batches) on its threads, leaving any error in
 * pool->error (pool_raise raises it).  False: the float sums must be re-run
 * in row order (pool->order_risk).
 */
static bool
pool_execute(WarpScanState *ws, WarpCpuPool *pool)
{
	ArrowScanState *ss = &ws->scan;

	/* the threads read through the files' own sources (pread, or a mapping
	 * of the file: pg_warp.cpu_mmap), the pool counting bytes: the scan's
	 * counting wrapper is not for threads */
	arrow_scan_counting_reads(ss, false);
	warp_cpu_pool_run(pool);
	arrow_scan_counting_reads(ss, true);

	CHECK_FOR_INTERRUPTS();
	if (pool->order_risk)
		return false;
	pg_atomic_fetch_add_u64(&ss->shared->batches_read, pool->batches_read);
	pg_atomic_fetch_add_u64(&ss->shared->batches_skipped, pool->batches_skipped);
	pg_atomic_fetch_add_u64(&ss->shared->bytes_read, pool->bytes_read);
	return true;
}

/* Raise the error of the pool's earliest failing unit, if any. */
static void
pool_raise(WarpScanState *ws, WarpCpuPool *pool)
{
	ArrowScanState *ss = &ws->scan;
	int			i;

	/* a file that changed under the threads is the cause of what they saw */
	if (pool->error == WARP_POOL_ARROW || pool->error == WARP_POOL_LOAD)
		for (i = 0; i < ss->nfiles; i++)
			if (!ss->files[i].empty && ss->files[i].opened)
				arrow_scan_check_file(&ss->files[i]);
	switch (pool->error)
	{
		case WARP_POOL_OK:
			break;
		case WARP_POOL_STATUS:
			warp_exec_report_status(pool->status);
			break;
		case WARP_POOL_LOAD:
			ss->cur_batch = pool->bad_batch;
			warp_exec_report_load_error(ws, pool->load_status, pool->bad_col, pool->bad_row,
							  ss->files[pool->bad_file].path);
			break;
		case WARP_POOL_ARROW:
			pgwarp_report_arrow_error(ERROR, &pool->arrow_err);
			break;
		case WARP_POOL_NOMEM:
			warp_exec_report_status(WARP_ERR_OUT_OF_MEMORY);
			break;
		case WARP_POOL_INTERRUPTED:
			/* CHECK_FOR_INTERRUPTS in pool_execute raises it in every case seen */
			ereport(ERROR,
					(errcode(ERRCODE_QUERY_CANCELED),
					 errmsg("canceling statement due to user request")));
			break;
	}
	/* the files must still be the ones the threads read */
	for (i = 0; i < ss->nfiles; i++)
		if (!ss->files[i].empty && ss->files[i].opened)
			arrow_scan_check_file(&ss->files[i]);
}

/*
 * Run the pool's units and raise the error of the earliest failing one, if
 * any.  False: the float sums must be re-run in row order
 * (pool->order_risk), nothing raised.
 */
static bool
pool_run(WarpScanState *ws, WarpCpuPool *pool)
{
	if (!pool_execute(ws, pool))
		return false;
	pool_raise(ws, pool);
	return true;
}

/* where each driver's groups start in the numbering warp_next emits */
static void
pool_number_groups(WarpScanState *ws)
{
	WarpCpuPool *pool = ws->pool;
	int			i;

	ws->pool_start = MemoryContextAlloc(ws->engine_cxt, sizeof(int64) * (pool->ncpus + 1));
	ws->pool_start[0] = 0;
	for (i = 0; i < pool->ncpus; i++)
		ws->pool_start[i + 1] = ws->pool_start[i] + warp_cpu_ngroups(pool->cpus[i]);
	ws->groups = ws->pool_start[pool->ncpus];
	ws->emit_cpu = 0;
}

/* The scan's batches not skipped, as pool units (in engine_cxt). */
static WarpPoolBatch *
pool_units(WarpScanState *ws, int *n)
{
	ExprContext *econtext = ws->css.ss.ps.ps_ExprContext;
	MemoryContext old = MemoryContextSwitchTo(ws->engine_cxt);
	WarpPoolBatch *units;
	int		   *files,
			   *batches;
	int			i;

	*n = arrow_scan_list_batches(&ws->scan, econtext, &files, &batches);
	units = palloc(sizeof(WarpPoolBatch) * Max(*n, 1));
	for (i = 0; i < *n; i++)
	{
		units[i].file = files[i];
		units[i].batch = batches[i];
	}
	MemoryContextSwitchTo(old);
	return units;
}

/* The CPU driver on pg_warp.cpu_threads threads of this process. */
static void
run_cpu_threads(WarpScanState *ws)
{
	ArrowScanState *ss = &ws->scan;
	WarpCpuPool *pool;
	MemoryContext old = MemoryContextSwitchTo(ws->engine_cxt);
	WarpJoinTable **tables = warp_exec_build_join_tables(ws);

	MemoryContextSwitchTo(old);
	pool = pool_create(ws, tables, ws->engine_cxt);
	pool->batches = pool_units(ws, &pool->nbatches);
	ws->pool = pool;
	if (!pool_run(ws, pool))
	{
		/*
		 * A float sum met values so large that whether it overflows depends
		 * on the order of the additions, which the threads changed: run the
		 * query again in one thread, in PostgreSQL's row order (this
		 * includes an overflow error the threads may have raised).
		 */
		warp_cpu_pool_free(pool);
		ws->pool = NULL;
		pg_atomic_write_u64(&ss->shared->batches_skipped, 0);	/* counted again */
		strlcpy(ws->fallback, "float sums re-run in row order (values near the overflow range)",
				sizeof(ws->fallback));
		run_cpu_serial(ws);
		return;
	}
	ws->counters = pool->counters;
	pool_number_groups(ws);
}

static void
run_cpu(WarpScanState *ws)
{
	if (ws->heap)
		warp_exec_run_cpu_heap(ws);
	else if (ws->nthreads > 1)
		run_cpu_threads(ws);
	else
		run_cpu_serial(ws);
}

void
warp_exec_run_engine(WarpScanState *ws)
{
	MemoryContext old = MemoryContextSwitchTo(ws->engine_cxt);
	instr_time	t0,
				t1;

	warp_exec_build_dims(ws);
	INSTR_TIME_SET_CURRENT(t0);
	warp_exec_build_program(ws);
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	ws->build_ms += INSTR_TIME_GET_MILLISEC(t1);
	MemoryContextSwitchTo(old);

	INSTR_TIME_SET_CURRENT(t0);
	ws->gres = NULL;
	ws->merged = NULL;
	ws->fallback[0] = '\0';
	ws->tcache = 0;
	if (ws->heap && !ws->on_daemon)
		warp_exec_tcache_not_planned(ws);
	if (ws->on_daemon && (ws->heap ? warp_exec_run_tcache(ws) : warp_exec_run_on_daemon(ws)))
		;						/* ran there */
	else
	{
		if (ws->on_daemon)
			ereport(DEBUG1,
					(errmsg("pg_warp: running on the CPU in this backend: %s", ws->fallback)));
		strlcpy(ws->ran_on, "CPU", sizeof(ws->ran_on));
		run_cpu(ws);
	}
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	ws->scan_ms = INSTR_TIME_GET_MILLISEC(t1);

	INSTR_TIME_SET_CURRENT(t0);
	warp_exec_merge_groups(ws);
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	ws->merge_ms = INSTR_TIME_GET_MILLISEC(t1);
}

/* Row mode on this process's CPU driver (serial, or rounds on threads). */
static void
rows_start_cpu(WarpScanState *ws)
{
	MemoryContext old = MemoryContextSwitchTo(ws->engine_cxt);
	WarpJoinTable **tables = warp_exec_build_join_tables(ws);

	if (ws->heap)
		ws->nthreads = 1;		/* the table AM's scan feeds one driver */
	if (ws->nthreads > 1)
	{
		ws->row_tables = tables;
		ws->row_units = pool_units(ws, &ws->row_nunits);
		ws->row_next_unit = 0;
		ws->round_cxt = AllocSetContextCreate(ws->engine_cxt, "pg_warp WarpJoin round",
											  ALLOCSET_SMALL_SIZES);
	}
	else
	{
		ws->cpu = warp_cpu_create(&ws->prog, tables, &ws->alloc);
		if (ws->cpu == NULL)
			warp_exec_report_status(WARP_ERR_OUT_OF_MEMORY);
	}
	ws->batch_cols = palloc0(sizeof(ArrowArray) * Max(ws->prog.ncols, 1));
	strlcpy(ws->ran_on, "CPU", sizeof(ws->ran_on));
	MemoryContextSwitchTo(old);
}

/*
 * Row mode: the dimensions, the program, and the job started on the daemon
 * (planned there) or the driver created, before any batch.
 */
void
warp_exec_rows_start(WarpScanState *ws)
{
	MemoryContext old = MemoryContextSwitchTo(ws->engine_cxt);
	instr_time	t0,
				t1;

	warp_exec_build_dims(ws);
	INSTR_TIME_SET_CURRENT(t0);
	warp_exec_build_program(ws);
	ws->fallback[0] = '\0';
	ws->rows_status = WARP_OK;
	ws->rows_load = WARP_LOAD_OK;
	ws->daemon_done = false;
	if (ws->on_daemon && warp_exec_rows_daemon_start(ws))
		strlcpy(ws->ran_on, "pg_warp_gpud", sizeof(ws->ran_on));
	else
	{
		if (ws->on_daemon)
			ereport(DEBUG1,
					(errmsg("pg_warp: running on the CPU in this backend: %s", ws->fallback)));
		rows_start_cpu(ws);
	}
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	ws->build_ms += INSTR_TIME_GET_MILLISEC(t1);
	MemoryContextSwitchTo(old);
}

/*
 * Row mode on the daemon: its next chunk (true), or false at the end.
 * When the daemon fails before any row went up, the query runs on this
 * process's CPU driver from its first batch (*fell_back).
 */
static bool
rows_next_from_daemon(WarpScanState *ws, bool *fell_back)
{
	int			rc = warp_exec_rows_daemon_next(ws);

	*fell_back = false;
	ws->next_group = 0;
	if (rc >= 0)
	{
		ws->daemon_done = rc == 0;
		return rc == 1;
	}
	/* a Top-N's candidates so far are the daemon's: start again */
	if (ws->topn)
	{
		warp_topn_reset(ws->topn);
		ws->rows_out = 0;
		ws->topn_built = 0;
	}
	ereport(DEBUG1,
			(errmsg("pg_warp: running on the CPU in this backend: %s", ws->fallback)));
	rows_start_cpu(ws);
	*fell_back = true;
	return false;
}

/*
 * Batches per WarpJoin round on threads: enough to keep the threads busy
 * (the pool cuts big batches into parts), few enough to stream and to bound
 * the round's rows in memory: up to this many bytes of batch bodies per
 * thread (SSB SF=20: 77 MB batches of 1M rows, so 3 batches for 17 threads,
 * 1 for 2), and at most 8 batches per thread.
 */
#define WARP_ROUND_BYTES_PER_THREAD (16 * 1024 * 1024)

/*
 * Row mode on threads: the next round of units through a new pool, its
 * drivers' rows numbered for emitting; false when no unit is left.  When a
 * unit fails, the round runs again on one thread, in scan order: its rows
 * up to the failing one go up first and the error after them
 * (row_failed_pool), as from PostgreSQL's own scan and the serial plan, so
 * a LIMIT met before the failing row stops the query without the error.
 */
static bool
rows_next_round(WarpScanState *ws)
{
	WarpCpuPool *pool;
	int			n = 0;
	uint64		bytes = 0;

	while (ws->row_next_unit + n < ws->row_nunits && n < 8 * ws->nthreads &&
		   (n == 0 || bytes < (uint64) ws->nthreads * WARP_ROUND_BYTES_PER_THREAD))
	{
		const WarpPoolBatch *u = &ws->row_units[ws->row_next_unit + n];

		bytes += ws->scan.files[u->file].file.batches[u->batch].body_len;
		n++;
	}
	ws->pool = NULL;
	ws->row_failed_pool = NULL;
	ws->groups = 0;
	ws->next_group = 0;
	MemoryContextReset(ws->round_cxt);	/* frees the last round's pool */
	if (n <= 0)
		return false;
	pool = pool_create(ws, ws->row_tables, ws->round_cxt);
	pool->batches = ws->row_units + ws->row_next_unit;
	pool->nbatches = n;
	(void) pool_execute(ws, pool);	/* no float sums in row mode: no re-run */
	if (pool->error == WARP_POOL_STATUS || pool->error == WARP_POOL_LOAD ||
		pool->error == WARP_POOL_ARROW)
	{
		warp_cpu_pool_free(pool);
		pool = pool_create(ws, ws->row_tables, ws->round_cxt);
		pool->batches = ws->row_units + ws->row_next_unit;
		pool->nbatches = n;
		pool->nthreads = 1;
		(void) pool_execute(ws, pool);
		ws->row_failed_pool = pool;
	}
	else
		pool_raise(ws, pool);
	ws->row_next_unit += n;
	ws->pool = pool;
	ws->counters.rows_in += pool->counters.rows_in;
	ws->counters.rows_filtered += pool->counters.rows_filtered;
	ws->counters.rows_joined += pool->counters.rows_joined;
	pool_number_groups(ws);
	return true;
}

/*
 * Row mode: the next batch (or part) through the driver, its joined rows
 * left in the driver's table; false when no batch is left.  An error is
 * kept: the rows before the failing one (the driver stops there) go up
 * first, as PostgreSQL's scan would have returned them.
 */
bool
warp_exec_rows_next_batch(WarpScanState *ws)
{
	ExprContext *econtext = ws->css.ss.ps.ps_ExprContext;
	instr_time	t0,
				t1;
	bool		more;

	INSTR_TIME_SET_CURRENT(t0);
	if (ws->dstream)
	{
		bool		fell_back;

		more = rows_next_from_daemon(ws, &fell_back);
		INSTR_TIME_SET_CURRENT(t1);
		INSTR_TIME_SUBTRACT(t1, t0);
		ws->scan_ms += INSTR_TIME_GET_MILLISEC(t1);
		if (!fell_back)
			return more;
		INSTR_TIME_SET_CURRENT(t0);
	}
	if (ws->heap || ws->nthreads > 1)
	{
		more = ws->heap ? warp_exec_heap_rows_next(ws) : rows_next_round(ws);
		INSTR_TIME_SET_CURRENT(t1);
		INSTR_TIME_SUBTRACT(t1, t0);
		ws->scan_ms += INSTR_TIME_GET_MILLISEC(t1);
		return more;
	}
	warp_cpu_reset_groups(ws->cpu);
	ws->groups = 0;
	ws->next_group = 0;
	more = arrow_scan_next_batch(&ws->scan, econtext, false);
	if (more)
	{
		ws->rows_bad_col = 0;
		ws->rows_bad_row = 0;
		ws->rows_status = run_current_batch(ws, &ws->rows_load, &ws->rows_bad_col,
											&ws->rows_bad_row);
		ws->rows_bad_file = ws->scan.cur_file;
		ws->groups = warp_cpu_ngroups(ws->cpu);
	}
	warp_cpu_counters(ws->cpu, &ws->counters);
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	ws->scan_ms += INSTR_TIME_GET_MILLISEC(t1);
	return more;
}

/*
 * Row mode: the error kept until the rows before the failing row went up
 * (a round's, on threads, or the serial driver's), if any.
 */
void
warp_exec_rows_raise_pending(WarpScanState *ws)
{
	if (ws->heap)
	{
		warp_exec_heap_raise_pending(ws);
		return;
	}
	if (ws->row_failed_pool)
		pool_raise(ws, ws->row_failed_pool);
	if (ws->rows_status != WARP_OK)
		warp_exec_report_status(ws->rows_status);
	if (ws->rows_load != WARP_LOAD_OK)
		warp_exec_report_load_error(ws, ws->rows_load, ws->rows_bad_col, ws->rows_bad_row,
						  ws->scan.files[ws->rows_bad_file].path);
}
