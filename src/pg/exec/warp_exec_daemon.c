/*
 * warp_exec_daemon.c — a WarpPreAgg / WarpJoin / WarpScan node's job on
 * pg_warp_gpud (gpud_client.c): the fact files' batches that batch skipping
 * keeps and the dimensions as keys and payload ids handed over; for
 * aggregation, the groups taken back at once; in row mode (WarpJoin,
 * WarpScan), the rows streamed back chunk by chunk, each chunk returned
 * before the next is asked for, so memory stays one chunk and a LIMIT
 * stops the daemon.  When the daemon cannot run the job (not running,
 * refused, died before any row went up) the caller runs it on its own CPU
 * driver (warp_exec_run.c); once rows have gone up, the daemon's death is
 * an error.  The query's own errors (a row that fails, a bad file) are
 * raised here as PostgreSQL's, after the rows before them.
 */
#include "postgres.h"

#include "executor/executor.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/memutils.h"

#include "exec/warp_exec_internal.h"

/* the dimensions as the daemon takes them: keys and payload ids */
GpudClientTable *
warp_exec_daemon_tables(WarpScanState *ws)
{
	GpudClientTable *tables = palloc0(sizeof(GpudClientTable) * Max(ws->ndims, 1));
	int			i;

	for (i = 0; i < ws->ndims; i++)
	{
		tables[i].nrows = ws->dims[i].rows;
		tables[i].npayloads = ws->dims[i].npayloads;
		tables[i].keys = ws->dims[i].probe_keys ? ws->dims[i].probe_keys : ws->dims[i].keys;
		tables[i].payload = ws->dims[i].pids;
	}
	return tables;
}

/* the daemon's groups and counts taken, the query's error raised */
void
warp_exec_take_daemon_result(WarpScanState *ws, GpudResult *res)
{
	if (res->status != WARP_OK)
		warp_exec_report_status((WarpStatus) res->status);
	res->device[sizeof(res->device) - 1] = '\0';
	res->fallback[sizeof(res->fallback) - 1] = '\0';
	ws->gres = res;
	ws->counters = res->counters;
	ws->groups = res->ngroups;
	if (res->ran_on == GPUD_DEVICE_GPU)
		snprintf(ws->ran_on, sizeof(ws->ran_on), "GPU (%s)", res->device);
	else
		snprintf(ws->ran_on, sizeof(ws->ran_on), "CPU in pg_warp_gpud");
	strlcpy(ws->fallback, res->fallback, sizeof(ws->fallback));
}

/*
 * The fact files as the daemon takes them: every batch the statistics do
 * not rule out (*skipped counts the others), each program column's field.
 */
static GpudClientFile *
daemon_files(WarpScanState *ws, int64 *skipped)
{
	ArrowScanState *ss = &ws->scan;
	ExprContext *econtext = ws->css.ss.ps.ps_ExprContext;
	GpudClientFile *files = palloc0(sizeof(GpudClientFile) * Max(ss->nfiles, 1));
	int			i;

	*skipped = 0;
	for (i = 0; i < ss->nfiles; i++)
	{
		ScanFile   *sf = &ss->files[i];
		GpudClientFile *f = &files[i];
		int64		nb = ss->batch_start[i + 1] - ss->batch_start[i];
		int64		b;
		int			c;

		f->path = sf->path;
		f->limit = sf->limit;
		f->recover_tail = ss->writable && sf->limit < 0;
		f->st = sf->st;
		f->batches = palloc(sizeof(int32) * Max(nb, 1));
		f->fields = palloc(sizeof(int32) * Max(ws->prog.ncols, 1));
		if (sf->empty)
			continue;
		for (b = 0; b < nb; b++)
		{
			CHECK_FOR_INTERRUPTS();
			if (arrow_skip_batch(ss->skip, sf->stats, (int) b, econtext))
				(*skipped)++;
			else
				f->batches[f->nbatches++] = (int32) b;
		}
		for (c = 0; c < ws->prog.ncols; c++)
			f->fields[c] = sf->field_of_attr[ws->col_attno[c] - 1];
	}
	return files;
}

/* the daemon's counts of the scan, and the errors its job met, raised */
static void
take_daemon_errors(WarpScanState *ws, GpudResult *res, int64 skipped)
{
	ArrowScanState *ss = &ws->scan;

	pg_atomic_fetch_add_u64(&ss->shared->batches_read, res->batches);
	pg_atomic_fetch_add_u64(&ss->shared->batches_skipped, skipped);
	pg_atomic_fetch_add_u64(&ss->shared->bytes_read, res->bytes_read);
	if (res->has_arrow_error)
	{
		res->arrow_error.msg[sizeof(res->arrow_error.msg) - 1] = '\0';
		pgwarp_report_arrow_error(ERROR, &res->arrow_error);
	}
	if (res->status == WARP_OK && res->load_status != WARP_LOAD_OK)
	{
		if (res->bad_col < 0 || res->bad_col >= ws->prog.ncols ||
			res->bad_file < 0 || res->bad_file >= ss->nfiles)
			elog(ERROR, "pg_warp_gpud reported a load error at an invalid position");
		warp_exec_report_load_error(ws, (WarpLoadStatus) res->load_status, res->bad_col,
									res->bad_row, ss->files[res->bad_file].path);
	}
	warp_exec_take_daemon_result(ws, res);
}

/*
 * The job on pg_warp_gpud.  False (fallback set) when the daemon could not
 * run it; errors the query itself raises are raised here.
 */
bool
warp_exec_run_on_daemon(WarpScanState *ws)
{
	MemoryContext old = MemoryContextSwitchTo(ws->engine_cxt);
	GpudClientTable *tables = warp_exec_daemon_tables(ws);
	int64		skipped;
	GpudClientFile *files = daemon_files(ws, &skipped);
	GpudResult *res;

	res = pgwarp_gpud_run(&ws->prog, ws->ndims, tables, ws->scan.nfiles, files,
						  &ws->handoff, ws->fallback, sizeof(ws->fallback));
	MemoryContextSwitchTo(old);
	if (res == NULL)
		return false;
	take_daemon_errors(ws, res, skipped);
	return true;
}

/* ------------------------------------------------------------ row mode */

/*
 * Row mode: start the job on the daemon (dimensions and program built).
 * False (ws->fallback set) when it cannot take it.
 */
bool
warp_exec_rows_daemon_start(WarpScanState *ws)
{
	MemoryContext old = MemoryContextSwitchTo(ws->engine_cxt);
	GpudClientTable *tables = warp_exec_daemon_tables(ws);
	GpudClientFile *files = daemon_files(ws, &ws->rows_skipped);

	ws->gres = NULL;
	ws->dstream = pgwarp_gpud_rows_start(&ws->prog, ws->ndims, tables, ws->scan.nfiles, files,
										 &ws->handoff, ws->fallback, sizeof(ws->fallback));
	MemoryContextSwitchTo(old);
	return ws->dstream != NULL;
}

/*
 * Row mode on the daemon: the next chunk of rows as ws->gres (true), or
 * false at the end, its errors raised (the rows before them went up).
 * -1: the daemon failed before any row went up (ws->fallback says why):
 * the caller runs the query on its own CPU driver.  Once rows have gone
 * up (or under a Top-N, whose rows go nowhere before the end) that is an
 * error.
 */
int
warp_exec_rows_daemon_next(WarpScanState *ws)
{
	GpudResult *res;
	int			rc;

	rc = pgwarp_gpud_rows_next(ws->dstream, &res, ws->fallback, sizeof(ws->fallback));
	if (rc == 1)
	{
		ws->gres = res;
		ws->groups = res->ngroups;
		return 1;
	}
	ws->dstream = NULL;
	if (rc == 0)
	{
		/* the job's result: its counts, and the error after its rows */
		ws->gres = res;
		ws->groups = 0;
		take_daemon_errors(ws, res, ws->rows_skipped);
		return 0;
	}
	ws->gres = NULL;
	ws->groups = 0;
	if (ws->rows_out > 0 && ws->topn == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_SYSTEM_ERROR),
				 errmsg("pg_warp: %s after " INT64_FORMAT " rows were returned",
						ws->fallback, ws->rows_out),
				 errhint("The query can be run again; the daemon is restarted by its supervisor.")));
	return -1;
}
