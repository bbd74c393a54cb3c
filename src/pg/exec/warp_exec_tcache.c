/*
 * warp_exec_tcache.c — a WarpPreAgg over a heap fact table attached to
 * the GPU table cache: the program runs in pg_warp_gpud over the table's
 * replica, under this query's snapshot (src/pg/tcache/tcache_query.c
 * sends the classes of the replica's transactions).  When the cache
 * cannot answer exactly, the caller reads the heap through PostgreSQL's
 * table AM (warp_exec_heap.c), and EXPLAIN ANALYZE says why.
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "exec/warp_exec_internal.h"
#include "pg_warp.h"
#include "tcache/tcache.h"

bool
warp_exec_run_tcache(WarpScanState *ws)
{
	MemoryContext old = MemoryContextSwitchTo(ws->engine_cxt);
	EState	   *estate = ws->css.ss.ps.state;
	int			ncols = ws->prog.ncols;
	bool	   *isfloat = palloc0(sizeof(bool) * Max(ncols, 1));
	GpudClientTable *tables = warp_exec_daemon_tables(ws);
	GpudClientCached cached;
	GpudResult *res = NULL;
	int			attempt,
				c;

	ws->tcache = 2;
	ws->tcache_loaded = false;
	for (c = 0; c < ncols; c++)
	{
		if (!ws->prog.cols[c].native || ws->prog.cols[c].text)
		{
			snprintf(ws->tcache_why, sizeof(ws->tcache_why),
					 "the query reads a text or numeric column, which the cache does not hold");
			MemoryContextSwitchTo(old);
			return false;
		}
		isfloat[c] = WARP_TYPE_IS_FLOAT(ws->prog.cols[c].type);
	}
	/* a dictionary renumbered between reading and running it: read again */
	for (attempt = 0; attempt < 3 && res == NULL; attempt++)
	{
		if (!tcache_prepare(ws->fact_rel, estate->es_snapshot, ncols, ws->col_attno, isfloat,
							&cached, &ws->tcache_loaded, ws->tcache_why,
							sizeof(ws->tcache_why)))
		{
			MemoryContextSwitchTo(old);
			return false;
		}
		res = pgwarp_gpud_run_job(&ws->prog, ws->ndims, tables, 0, NULL, &cached,
								  &ws->handoff, ws->tcache_why, sizeof(ws->tcache_why));
		if (res == NULL && strstr(ws->tcache_why, "dictionary changed") == NULL)
			break;
	}
	MemoryContextSwitchTo(old);
	if (res == NULL)
		return false;
	ws->tcache = 1;
	ws->tcache_why[0] = '\0';
	warp_exec_take_daemon_result(ws, res);
	return true;
}

void
warp_exec_tcache_not_planned(WarpScanState *ws)
{
	if (!pgwarp_gpu_table_cache || !tcache_preloaded() || !tcache_attached(ws->fact_rel))
		return;
	ws->tcache = 2;
	snprintf(ws->tcache_why, sizeof(ws->tcache_why), "%s",
			 pgwarp_mode == PGWARP_MODE_CPU ? "pg_warp.mode = cpu" :
			 pgwarp_gpud_device == PGWARP_GPUD_OFF ? "pg_warp.gpud_device = off" :
			 "pg_warp_gpud was not serving when the query was planned");
}
