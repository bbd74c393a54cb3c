/*
 * arrow_fdw.c — the arrow_fdw foreign data wrapper: planning and scanning.
 *
 * A scan walks the record batches of the table's files in order.  Only the
 * buffers of referenced columns are read (pread; never mmap, see
 * arrow_pg.c), batches whose min/max statistics contradict a WHERE clause
 * are skipped without reading them, and every file is re-checked with fstat
 * before each batch so that a file replaced or truncated during the scan
 * gives an ERROR instead of garbage.  Under Gather, participants claim
 * batches from a shared counter.
 */
#include "postgres.h"

#include <sys/stat.h>
#include <unistd.h>

#include "access/htup_details.h"
#include "access/parallel.h"
#include "access/table.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "common/pg_prng.h"
#include "commands/explain.h"
#include "commands/vacuum.h"
#include "executor/executor.h"
#include "foreign/fdwapi.h"
#include "foreign/foreign.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/planmain.h"
#include "optimizer/restrictinfo.h"
#include "port/atomics.h"
#include "storage/fd.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/sampling.h"

#include "fdw/arrow_fdw.h"
#include "fdw/arrow_scan.h"
#include "fdw/arrow_skip.h"
#include "exec/warp_scan_filter.h"
#include "warp.h"
#include "pg_warp.h"

PG_FUNCTION_INFO_V1(arrow_fdw_handler);

/* Planner-side facts about the files, kept in baserel->fdw_private. */
typedef struct ArrowRelInfo
{
	ArrowFdwOptions opts;
	int64		total_rows;
	int64		total_batches;
	int64		total_bytes;	/* file sizes */
	int64		column_bytes;	/* buffers of referenced columns (estimate) */
	List	   *stats;			/* ArrowFooterStats (arrow_fdw_stats.c) */
} ArrowRelInfo;

/* --------------------------------------------------------------- planner */

static void
collect_attrs(PlannerInfo *root, RelOptInfo *baserel, Bitmapset **attrs)
{
	ListCell   *lc;

	pull_varattnos((Node *) baserel->reltarget->exprs, baserel->relid, attrs);
	foreach(lc, baserel->baserestrictinfo)
	{
		RestrictInfo *ri = lfirst_node(RestrictInfo, lc);

		pull_varattnos((Node *) ri->clause, baserel->relid, attrs);
	}
}

static void
arrowGetForeignRelSize(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid)
{
	ArrowRelInfo *info = palloc0(sizeof(ArrowRelInfo));
	ListCell   *lc;
	Bitmapset  *attrs = NULL;
	int			nfields_used = 0;
	int			nfields = 1;

	arrow_fdw_get_options(foreigntableid, &info->opts);
	collect_attrs(root, baserel, &attrs);

	/* counts come from the footer cache: one stat() per file when warm */
	foreach(lc, info->opts.files)
	{
		const char *path = lfirst(lc);
		int64		limit = -1;
		int64		bytes;
		PgWarpFileSummary sum;

		if (info->opts.writable)
		{
			limit = arrow_committed_length(path);
			if (limit == 0 || access(path, F_OK) != 0)
				continue;		/* nothing committed yet */
		}
		pgwarp_arrow_file_summary(path, limit, info->opts.writable && limit < 0, &sum, &bytes);
		info->total_bytes += bytes;
		info->total_batches += sum.n_batches;
		info->total_rows += sum.total_rows;
	}
	nfields = Max(baserel->max_attr, 1);
	nfields_used = bms_num_members(attrs);
	info->column_bytes = info->total_bytes * Min(nfields_used, nfields) / nfields;

	baserel->tuples = info->total_rows;
	/* before the estimate: the footers' statistics need the files' list */
	baserel->fdw_private = info;
	baserel->rows = clamp_row_est(info->total_rows *
								  clauselist_selectivity(root, baserel->baserestrictinfo,
														 0, JOIN_INNER, NULL));
}

static int
arrow_parallel_workers(RelOptInfo *baserel, ArrowRelInfo *info)
{
	int			w;

	if (info->opts.parallel_workers >= 0)
		w = info->opts.parallel_workers;
	else
		w = compute_parallel_worker(baserel, info->column_bytes / BLCKSZ, -1,
									max_parallel_workers_per_gather);
	w = Min(w, (int) Min(info->total_batches, (int64) INT_MAX));
	return Min(w, max_parallel_workers_per_gather);
}

static void
arrowGetForeignPaths(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid)
{
	ArrowRelInfo *info = baserel->fdw_private;
	double		pages = (double) info->column_bytes / BLCKSZ;
	Cost		startup = 10.0 * list_length(info->opts.files);
	Cost		cpu_run = (cpu_tuple_cost + baserel->baserestrictcost.per_tuple) * baserel->tuples;
	Cost		io_run = seq_page_cost * pages;
	ForeignPath *path;

	path = create_foreignscan_path(root, baserel, NULL, baserel->rows,
								   startup, startup + io_run + cpu_run,
								   NIL, NULL, NULL, NIL);
	add_path(baserel, (Path *) path);

	if (baserel->consider_parallel)
	{
		int			w = arrow_parallel_workers(baserel, info);

		if (w > 0)
		{
			double		divisor = w + (parallel_leader_participation ? 1.0 : 0.0);

			path = create_foreignscan_path(root, baserel, NULL, baserel->rows / divisor,
										   startup, startup + io_run + cpu_run / divisor,
										   NIL, NULL, NULL, NIL);
			path->path.parallel_aware = true;
			path->path.parallel_safe = true;
			path->path.parallel_workers = w;
			add_partial_path(baserel, (Path *) path);
		}
	}
}

static ForeignScan *
arrowGetForeignPlan(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid,
					ForeignPath *best_path, List *tlist, List *scan_clauses,
					Plan *outer_plan)
{
	Bitmapset  *attrs = NULL;
	List	   *attr_list = NIL;
	int			k = -1;

	collect_attrs(root, baserel, &attrs);
	while ((k = bms_next_member(attrs, k)) >= 0)
		attr_list = lappend_int(attr_list, k);
	scan_clauses = extract_actual_clauses(scan_clauses, false);
	return make_foreignscan(tlist, scan_clauses, baserel->relid, NIL,
							list_make1(attr_list), NIL, NIL, outer_plan);
}

/* Is rel an arrow_fdw table (planned by us)? */
bool
arrow_fdw_is_arrow_rel(RelOptInfo *rel)
{
	return rel->fdwroutine != NULL &&
		rel->fdwroutine->GetForeignRelSize == arrowGetForeignRelSize &&
		rel->fdw_private != NULL;
}

void
arrow_fdw_rel_estimates(RelOptInfo *rel, double *rows, double *batches, double *column_bytes)
{
	ArrowRelInfo *info = rel->fdw_private;

	*rows = (double) info->total_rows;
	*batches = (double) info->total_batches;
	*column_bytes = (double) info->column_bytes;
}

const ArrowFdwOptions *
arrow_fdw_rel_options(RelOptInfo *rel, List ***stats)
{
	ArrowRelInfo *info = rel->fdw_private;

	if (stats)
		*stats = &info->stats;
	return &info->opts;
}

static bool
arrowIsForeignScanParallelSafe(PlannerInfo *root, RelOptInfo *rel, RangeTblEntry *rte)
{
	return true;
}

/* -------------------------------------------------------------- executor */

/* pg_warp's engine as the scan's row prefilter (arrow_scan.h) */
static int64
engine_prefilter_batch(void *state, const ArrowArray *cols_of_attr, int64 nrows, bool *keep,
					   int64 kept)
{
	return warp_scan_filter_batch((WarpScanFilter *) state, cols_of_attr, nrows, keep, kept);
}

static void
engine_prefilter_explain(void *state, PlanState *ps, ExplainState *es)
{
	warp_scan_filter_explain((WarpScanFilter *) state, ps, es);
}

static void
arrowBeginForeignScan(ForeignScanState *node, int eflags)
{
	ForeignScan *plan = (ForeignScan *) node->ss.ps.plan;
	Relation	rel = node->ss.ss_currentRelation;
	ArrowScanState *ss = palloc0(sizeof(ArrowScanState));
	Bitmapset  *attrs = NULL;
	ListCell   *lc;

	node->fdw_state = ss;
	foreach(lc, (List *) linitial(plan->fdw_private))
		attrs = bms_add_member(attrs, lfirst_int(lc));
	arrow_scan_begin(ss, rel, attrs, plan->scan.plan.qual, plan->scan.scanrelid,
					 &node->ss.ps, (eflags & EXEC_FLAG_EXPLAIN_ONLY) != 0);
	/*
	 * pg_warp's engine as a row prefilter (warp_scan_filter.c), when some
	 * qual is more than the raw-value row filter (arrow_skip.c: "column OP
	 * constant") decides
	 */
	{
		int			decided = arrow_skip_quals_count(ss->skip);
		WarpScanFilter *f = NULL;

		/*
		 * the quals after the leading ones the raw-value filter decides: it
		 * runs first and cannot fail, so the engine starting after them keeps
		 * PostgreSQL's order
		 */
		if (decided < list_length(plan->scan.plan.qual))
			f = warp_scan_filter_create(list_copy_tail(plan->scan.plan.qual, decided),
										plan->scan.scanrelid,
										node->ss.ps.ps_ExprContext);
		if (f)
		{
			ss->prefilter.filter_batch = engine_prefilter_batch;
			ss->prefilter.explain = engine_prefilter_explain;
			ss->prefilter.state = f;
		}
	}
}

static TupleTableSlot *
arrowIterateForeignScan(ForeignScanState *node)
{
	ArrowScanState *ss = node->fdw_state;
	TupleTableSlot *slot = node->ss.ss_ScanTupleSlot;
	MemoryContext old;

	ExecClearTuple(slot);
	if (ss->done)
		return slot;
	for (;;)
	{
		while (ss->cur_file < 0 || ss->cur_row >= ss->cur_rows)
		{
			if (!arrow_scan_next_batch(ss, node->ss.ps.ps_ExprContext, true))
			{
				ss->done = true;
				return slot;
			}
		}
		if (ss->cur_keep[ss->cur_row])
			break;
		ss->cur_row++;
	}
	MemoryContextReset(ss->row_cxt);
	old = MemoryContextSwitchTo(ss->row_cxt);
	arrow_scan_row_values(ss, ss->cur_row, slot->tts_values, slot->tts_isnull);
	MemoryContextSwitchTo(old);
	ss->cur_row++;
	return ExecStoreVirtualTuple(slot);
}

/* The scan state of ps if it is an arrow_fdw scan, else NULL. */
ArrowScanState *
arrow_fdw_scan_state(PlanState *ps)
{
	ForeignScanState *node = (ForeignScanState *) ps;

	if (!IsA(ps, ForeignScanState) || node->fdwroutine == NULL ||
		node->fdwroutine->IterateForeignScan != arrowIterateForeignScan)
		return NULL;
	return node->fdw_state;
}

static void
arrowReScanForeignScan(ForeignScanState *node)
{
	arrow_scan_rescan(node->fdw_state);
}

static void
arrowEndForeignScan(ForeignScanState *node)
{
	if (node->fdw_state)
		arrow_scan_end(node->fdw_state);
}

static void
arrowExplainForeignScan(ForeignScanState *node, ExplainState *es)
{
	ArrowScanState *ss = node->fdw_state;

	arrow_scan_explain(ss, RelationGetDescr(node->ss.ss_currentRelation), es);
	if (ss->prefilter.explain)
		ss->prefilter.explain(ss->prefilter.state, &node->ss.ps, es);
}

/* -------------------------------------------------------------- parallel */

static Size
arrowEstimateDSMForeignScan(ForeignScanState *node, ParallelContext *pcxt)
{
	return sizeof(ArrowSharedScan);
}

static void
arrowInitializeDSMForeignScan(ForeignScanState *node, ParallelContext *pcxt, void *coordinate)
{
	ArrowScanState *ss = node->fdw_state;
	ArrowSharedScan *sh = coordinate;

	pg_atomic_init_u64(&sh->next_batch, 0);
	pg_atomic_init_u64(&sh->batches_read, pg_atomic_read_u64(&ss->local_shared.batches_read));
	pg_atomic_init_u64(&sh->batches_skipped, pg_atomic_read_u64(&ss->local_shared.batches_skipped));
	pg_atomic_init_u64(&sh->bytes_read, pg_atomic_read_u64(&ss->local_shared.bytes_read));
	pg_atomic_init_u64(&sh->rows_filtered, pg_atomic_read_u64(&ss->local_shared.rows_filtered));
	arrow_scan_use_shared(ss, sh);
}

static void
arrowReInitializeDSMForeignScan(ForeignScanState *node, ParallelContext *pcxt, void *coordinate)
{
	ArrowSharedScan *sh = coordinate;

	pg_atomic_write_u64(&sh->next_batch, 0);
}

/*
 * The DSM goes away before EXPLAIN ANALYZE prints: keep the counters.
 */
static void
arrowShutdownForeignScan(ForeignScanState *node)
{
	ArrowScanState *ss = node->fdw_state;
	ArrowSharedScan *sh = ss->shared;

	if (sh == &ss->local_shared)
		return;
	pg_atomic_write_u64(&ss->local_shared.batches_read, pg_atomic_read_u64(&sh->batches_read));
	pg_atomic_write_u64(&ss->local_shared.batches_skipped, pg_atomic_read_u64(&sh->batches_skipped));
	pg_atomic_write_u64(&ss->local_shared.bytes_read, pg_atomic_read_u64(&sh->bytes_read));
	pg_atomic_write_u64(&ss->local_shared.rows_filtered, pg_atomic_read_u64(&sh->rows_filtered));
	pg_atomic_write_u64(&ss->local_shared.next_batch, pg_atomic_read_u64(&sh->next_batch));
	arrow_scan_use_shared(ss, &ss->local_shared);
}

static void
arrowInitializeWorkerForeignScan(ForeignScanState *node, shm_toc *toc, void *coordinate)
{
	arrow_scan_use_shared(node->fdw_state, coordinate);
}

/* -------------------------------------------------------------- ANALYZE */

static int
arrow_acquire_sample_rows(Relation rel, int elevel, HeapTuple *rows, int targrows,
						  double *totalrows, double *totaldeadrows);

#define ANALYZE_MAX_BATCHES 100

static bool
arrowAnalyzeForeignTable(Relation rel, AcquireSampleRowsFunc *func, BlockNumber *totalpages)
{
	ArrowFdwOptions opts;
	ListCell   *lc;
	int64		bytes = 0;

	arrow_fdw_get_options(RelationGetRelid(rel), &opts);
	foreach(lc, opts.files)
	{
		struct stat st;

		if (stat((char *) lfirst(lc), &st) == 0)
			bytes += st.st_size;
	}
	*totalpages = Max(1, bytes / BLCKSZ);
	*func = arrow_acquire_sample_rows;
	return true;
}

/*
 * ANALYZE's scan state over rel's files: every file opened, its fields bound
 * to the table's columns (all but the dropped ones).  Returns the number of
 * record batches of all the files.
 */
static int
analyze_open_files(ArrowScanState *ss, Relation rel, TupleDesc td)
{
	ArrowFdwOptions opts;
	ListCell   *lc;
	int			nb = 0;
	int			i;
	int			a;

	arrow_fdw_get_options(RelationGetRelid(rel), &opts);
	ss->paths = opts.files;
	ss->writable = opts.writable;
	ss->nfiles = list_length(ss->paths);
	ss->files = palloc0(sizeof(ScanFile) * Max(ss->nfiles, 1));
	ss->shared = &ss->local_shared;
	for (a = 0; a < td->natts; a++)
		if (!TupleDescAttr(td, a)->attisdropped)
			ss->attrs = bms_add_member(ss->attrs, a + 1 - FirstLowInvalidHeapAttributeNumber);
	i = 0;
	foreach(lc, ss->paths)
	{
		ss->files[i].path = lfirst(lc);
		arrow_scan_open_file(ss, i);
		if (!ss->files[i].empty)
		{
			arrow_scan_bind_columns(ss, &ss->files[i], td);
			nb += ss->files[i].file.n_batches;
		}
		i++;
	}
	return nb;
}

/* rows per batch (batch headers only), of nb batches; *total their sum */
static int64 *
analyze_batch_rows(ArrowScanState *ss, int nb, int64 *total)
{
	int64	   *batch_rows;
	int			g = 0;
	int			i;

	batch_rows = palloc(sizeof(int64) * Max(nb, 1));
	for (i = 0; i < ss->nfiles; i++)
	{
		ScanFile   *sf = &ss->files[i];
		int			b;

		for (b = 0; !sf->empty && b < sf->file.n_batches; b++)
		{
			ArrowArena	arena;
			ArrowBatchMeta meta;
			ArrowError	err;

			arrow_arena_init(&arena, pgwarp_arrow_allocator());
			if (arrow_read_batch_meta(&sf->file, b, &arena, &meta, &err) != 0)
				pgwarp_report_arrow_error(ERROR, &err);
			batch_rows[g++] = meta.length;
			*total += meta.length;
			arrow_arena_free_all(&arena);
		}
	}
	return batch_rows;
}

/*
 * The columns of batch b of sf that the table reads, loaded in tmp (reset
 * first: the previous batch's are gone).
 */
static ArrowArray *
analyze_load_batch(ScanFile *sf, int b, TupleDesc td, MemoryContext tmp, ArrowArena *arena)
{
	ArrowBatchMeta meta;
	ArrowError	err;
	MemoryContext old;
	ArrowArray *cols;
	int			a;

	MemoryContextReset(tmp);
	old = MemoryContextSwitchTo(tmp);
	arrow_arena_init(arena, pgwarp_arrow_allocator());
	arrow_scan_check_file(sf);
	if (arrow_read_batch_meta(&sf->file, b, arena, &meta, &err) != 0)
		pgwarp_report_arrow_error(ERROR, &err);
	cols = palloc0(sizeof(ArrowArray) * td->natts);
	for (a = 0; a < td->natts; a++)
		if (sf->field_of_attr[a] >= 0 &&
			arrow_load_column(&sf->file, b, &meta, sf->field_of_attr[a],
							  arena, &cols[a], &err) != 0)
			pgwarp_report_arrow_error(ERROR, &err);
	MemoryContextSwitchTo(old);
	return cols;
}

/* row r of the loaded batch cols as a heap tuple (its datums made in tmp) */
static HeapTuple
analyze_form_row(ScanFile *sf, ArrowArray *cols, int64 r, TupleDesc td,
				 MemoryContext tmp, Datum *values, bool *nulls)
{
	MemoryContext rowcxt = AllocSetContextCreate(tmp, "row", ALLOCSET_SMALL_SIZES);
	MemoryContext old;
	HeapTuple	tuple;
	int			a;

	old = MemoryContextSwitchTo(rowcxt);
	for (a = 0; a < td->natts; a++)
	{
		if (sf->field_of_attr[a] < 0)
		{
			nulls[a] = true;
			values[a] = (Datum) 0;
		}
		else
			values[a] = arrow_datum_get(sf->conv[a], &cols[a], r, &nulls[a]);
	}
	MemoryContextSwitchTo(old);
	tuple = heap_form_tuple(td, values, nulls);
	MemoryContextDelete(rowcxt);
	return tuple;
}

/*
 * Sample targrows rows uniformly: count the rows (batch headers only), pick
 * the row numbers with Knuth's selection sampling, then read only the batches
 * that hold a picked row.
 */
static int
arrow_acquire_sample_rows(Relation rel, int elevel, HeapTuple *rows, int targrows,
						  double *totalrows, double *totaldeadrows)
{
	TupleDesc	td = RelationGetDescr(rel);
	ArrowScanState *ss = palloc0(sizeof(ArrowScanState));
	int64		total = 0;
	int			nsample = 0;
	int			i;
	int64	   *batch_rows;
	bool	   *use_batch;
	int64		sel_rows;
	int			nb;
	pg_prng_state prng;
	Datum	   *values = palloc(sizeof(Datum) * td->natts);
	bool	   *nulls = palloc(sizeof(bool) * td->natts);
	MemoryContext tmp = AllocSetContextCreate(CurrentMemoryContext, "arrow_fdw analyze",
											  ALLOCSET_DEFAULT_SIZES);

	nb = analyze_open_files(ss, rel, td);
	batch_rows = analyze_batch_rows(ss, nb, &total);

	pg_prng_seed(&prng, pg_prng_uint64(&pg_global_prng_state));

	/*
	 * Two stages, like PostgreSQL's block sampling: with more than
	 * ANALYZE_MAX_BATCHES record batches, a random subset of that many is
	 * chosen first, so that ANALYZE of a file of thousands of batches does
	 * not read all of it; rows are then sampled uniformly from those.
	 */
	use_batch = palloc(sizeof(bool) * Max(nb, 1));
	sel_rows = total;
	if (nb <= ANALYZE_MAX_BATCHES)
		memset(use_batch, true, sizeof(bool) * Max(nb, 1));
	else
	{
		int			left = ANALYZE_MAX_BATCHES;

		sel_rows = 0;
		for (i = 0; i < nb; i++)
		{
			use_batch[i] = (double) (nb - i) * pg_prng_double(&prng) < left;
			if (use_batch[i])
			{
				left--;
				sel_rows += batch_rows[i];
			}
		}
	}
	{
		int64		remaining = sel_rows;
		int			needed = (int) Min((int64) targrows, sel_rows);
		int			g = 0;

		for (i = 0; i < ss->nfiles && needed > 0; i++)
		{
			ScanFile   *sf = &ss->files[i];
			int			b;

			for (b = 0; !sf->empty && b < sf->file.n_batches && needed > 0; b++, g++)
			{
				int64		n = batch_rows[g];
				int64		r;
				bool		loaded = false;
				ArrowArena	arena;
				ArrowArray *cols = NULL;

				if (!use_batch[g])
					continue;
				vacuum_delay_point();
				for (r = 0; r < n && needed > 0; r++, remaining--)
				{
					if ((double) remaining * pg_prng_double(&prng) >= needed)
						continue;
					if (!loaded)
					{
						cols = analyze_load_batch(sf, b, td, tmp, &arena);
						loaded = true;
					}
					rows[nsample++] = analyze_form_row(sf, cols, r, td, tmp, values, nulls);
					needed--;
				}
				remaining -= n - r;
			}
		}
	}
	arrow_scan_end(ss);
	MemoryContextDelete(tmp);
	*totalrows = (double) total;
	*totaldeadrows = 0;
	ereport(elevel,
			(errmsg("\"%s\": %d Arrow files, %d record batches, %lld rows; %d rows in sample from %d batches",
					RelationGetRelationName(rel), ss->nfiles, nb, (long long) total, nsample,
					Min(nb, ANALYZE_MAX_BATCHES))));
	return nsample;
}

/* --------------------------------------------------------------- handler */

Datum
arrow_fdw_handler(PG_FUNCTION_ARGS)
{
	FdwRoutine *r = makeNode(FdwRoutine);

	r->GetForeignRelSize = arrowGetForeignRelSize;
	r->GetForeignPaths = arrowGetForeignPaths;
	r->GetForeignPlan = arrowGetForeignPlan;
	r->BeginForeignScan = arrowBeginForeignScan;
	r->IterateForeignScan = arrowIterateForeignScan;
	r->ReScanForeignScan = arrowReScanForeignScan;
	r->EndForeignScan = arrowEndForeignScan;
	r->ExplainForeignScan = arrowExplainForeignScan;
	r->AnalyzeForeignTable = arrowAnalyzeForeignTable;
	r->IsForeignScanParallelSafe = arrowIsForeignScanParallelSafe;
	r->EstimateDSMForeignScan = arrowEstimateDSMForeignScan;
	r->InitializeDSMForeignScan = arrowInitializeDSMForeignScan;
	r->ReInitializeDSMForeignScan = arrowReInitializeDSMForeignScan;
	r->InitializeWorkerForeignScan = arrowInitializeWorkerForeignScan;
	r->ShutdownForeignScan = arrowShutdownForeignScan;
	arrow_fdw_write_routines(r);
	r->ImportForeignSchema = arrowImportForeignSchema;
	PG_RETURN_POINTER(r);
}
