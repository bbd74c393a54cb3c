/*
 * warp_plan_cost.c — the dimension plans and the cost of a star's scan.
 *
 * dim_path picks the plan each dimension runs as; star_costs prices the
 * engine's scan of the fact table (per row, column and probe, with the
 * constants of warp_plan_internal.h) and the dimensions, serial and under
 * a Gather.  The paths built from these costs live in warp_plan.c
 * (WarpPreAgg) and warp_plan_rows.c (WarpJoin, WarpScan).
 */

#include "postgres.h"

#include "optimizer/optimizer.h"

#include "pg_warp.h"
#include "warp.h"
#include "plan/warp_device_model.h"
#include "plan/warp_plan_internal.h"

/* whether the engine computes every qual of the base relation d */
static bool
dim_quals_compile(RelOptInfo *d)
{
	ListCell   *lc;

	foreach(lc, d->baserestrictinfo)
	{
		RestrictInfo *ri = lfirst(lc);
		WarpBuilder b;

		if (ri->pseudoconstant)
			continue;			/* a gating Result's, not the scan's */
		warp_builder_init(&b, d->relid, NULL);
		if (warp_compile_qual(&b, ri->clause) < 0)
			return false;
	}
	return true;
}

/*
 * The path a dimension runs as: its cheapest one, except where that is a
 * parallel plan (a Gather) of an Arrow table the engine reads itself when
 * it builds the join table (warp_dim_arrow.c: a plain arrow_fdw scan whose
 * quals it computes).  There the serial scan is taken: the engine reads
 * its batches directly, where a Gather would start workers to hand it
 * tuples (SSB SF=20 q2.1: part's 1M rows through a Gather of one worker,
 * 48 ms, which the engine's read does not even use).
 */
Path *
dim_path(RelOptInfo *d)
{
	Path	   *best = d->cheapest_total_path;
	Path	   *serial = NULL;
	ListCell   *lc;

	if (!pgwarp_enable_dim_scan || IsA(best, ForeignPath) ||
		d->reloptkind != RELOPT_BASEREL || !arrow_fdw_is_arrow_rel(d))
		return best;
	foreach(lc, d->pathlist)
	{
		Path	   *p = lfirst(lc);

		if (IsA(p, ForeignPath) && !p->parallel_aware && p->param_info == NULL &&
			equal(p->pathtarget->exprs, best->pathtarget->exprs) &&
			(serial == NULL || p->total_cost < serial->total_cost))
			serial = p;
	}
	if (serial == NULL || !dim_quals_compile(d))
		return best;
	return serial;
}

/* the cheapest parallel-safe path of rel, or NULL */
static Path *
cheapest_parallel_safe_path(RelOptInfo *rel)
{
	Path	   *best = NULL;
	ListCell   *lc;

	foreach(lc, rel->pathlist)
	{
		Path	   *p = lfirst(lc);

		if (p->parallel_safe && p->param_info == NULL &&
			(best == NULL || p->total_cost < best->total_cost))
			best = p;
	}
	return best;
}

/* cost: a fixed start, per fact row and column, per probe, the dims */
void
star_costs(StarInfo *si, StarCost *sc)
{
	Bitmapset  *attrs = NULL;
	ListCell   *lc;
	int			k;

	memset(sc, 0, sizeof(*sc));
	sc->dims_safe = true;
	if (si->heap)
	{
		/* every page read; tuples fetched and deformed by the table AM */
		sc->fact_rows = si->fact->tuples;
		sc->fact_bytes = (double) si->fact->pages * BLCKSZ;
		sc->fact_batches = Max(1.0, sc->fact_rows / WARP_HEAP_BATCH_ROWS);
	}
	else
		arrow_fdw_rel_estimates(si->fact, &sc->fact_rows, &sc->fact_batches, &sc->fact_bytes);
	pull_varattnos((Node *) si->quals, si->fact->relid, &attrs);
	pull_varattnos((Node *) si->fact_keys, si->fact->relid, &attrs);
	pull_varattnos((Node *) si->fact_exprs, si->fact->relid, &attrs);
	k = -1;
	while ((k = bms_next_member(attrs, k)) >= 0)
		sc->fact_attrs = lappend_int(sc->fact_attrs, k + FirstLowInvalidHeapAttributeNumber);
	sc->fact_cost = sc->fact_rows * (WARP_ROW_COST + WARP_COLUMN_COST * list_length(sc->fact_attrs) +
									 WARP_PROBE_COST * list_length(si->dims)) +
		seq_page_cost * sc->fact_bytes / BLCKSZ;
	if (si->heap)
		sc->fact_cost += sc->fact_rows * (WARP_HEAP_TUPLE_COST +
										  WARP_HEAP_COLUMN_COST * list_length(sc->fact_attrs));
	foreach(lc, si->dims)
	{
		RelOptInfo *d = lfirst(lc);
		Path	   *sp = cheapest_parallel_safe_path(d);

		sc->dims_cost += dim_path(d)->total_cost + WARP_BUILD_COST * d->rows;
		if (sp == NULL ||
			!equal(sp->pathtarget->exprs, d->cheapest_total_path->pathtarget->exprs))
			sc->dims_safe = false;
		else
		{
			sc->par_dims_cost += sp->total_cost + WARP_BUILD_COST * d->rows;
			sc->par_dim_paths = lappend(sc->par_dim_paths, sp);
		}
	}
}

/*
 * GPU or CPU driver for a star scan the GPU could run (warp_device_model.h):
 * true for the GPU, always when forced (pg_warp.mode = gpu).  Sets
 * sc->device_choice, the reason EXPLAIN shows.  A daemon that does not
 * report its budgets keeps the GPU.
 */
bool
device_choice(const GpudStatus *st, StarCost *sc, int cpu_threads, bool forced)
{
	WarpDeviceInputs in;
	WarpDeviceChoice c;
	const double gb = 1e9;

	if (st->lanes_per_gpu <= 0)
		return true;
	in.column_bytes = sc->fact_bytes;
	in.cache_bytes = (double) st->cache_mb * (1 << 20) * Max(st->ngpus, 1);
	in.registered_bytes = (double) st->registered_mb * (1 << 20);
	in.cpu_threads = cpu_threads;
	c = warp_device_choose(&in);
	if (c.fits_cache)
		sc->device_choice = psprintf("GPU: %.1f GB of fact columns fit the GPU column cache (%.1f GB)",
									 in.column_bytes / gb, in.cache_bytes / gb);
	else
		sc->device_choice = psprintf("%s: %.1f GB of fact columns exceed the GPU column cache "
									 "(%.1f GB); over the link about %.0f ms, on %d CPU "
									 "thread%s about %.0f ms",
									 c.gpu ? "GPU" : forced ? "GPU (pg_warp.mode = gpu)" : "CPU",
									 in.column_bytes / gb, in.cache_bytes / gb, c.link_ms,
									 cpu_threads, cpu_threads > 1 ? "s" : "", c.cpu_ms);
	return c.gpu || forced;
}
