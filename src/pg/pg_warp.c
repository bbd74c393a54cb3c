/*
 * pg_warp.c — module entry point.
 *
 * pg_warp works without being preloaded (CPU only); preloading it
 * (shared_preload_libraries) registers the background worker that runs the
 * GPU daemon, pg_warp_gpud (gpud_supervisor.c).
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"

#include "gpud_client.h"
#include "heap_changes.h"
#include "pg_warp.h"
#include "fdw/arrow_pg.h"
#include "exec/warp_dimcache.h"
#include "vector/vector.h"
#include "vector/vec_scan.h"
#include "tcache/tcache.h"
#include "warp.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	pgwarp_define_gucs();
	pgwarp_planner_init();
	pgwarp_exec_init();
	pgwarp_merge_init();
	pgwarp_arrow_stats_init();
	pgwarp_ivf_init();
	pgwarp_vec_scan_init();
	pgwarp_vec_scan_exec_init();
	if (process_shared_preload_libraries_in_progress)
	{
		pgwarp_footer_cache_preload();
		pgwarp_heap_changes_preload();
		pgwarp_tcache_preload();
		pgwarp_dimcache_preload();
		pgwarp_gpud_register_supervisor();
	}
}
