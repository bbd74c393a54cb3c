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

#include "arrow_fdw.h"
#include "arrow_skip.h"
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
} ArrowRelInfo;

/* One open file of a scan. */
typedef struct ScanFile
{
	char	   *path;
	int			fd;
	bool		opened;
	bool		empty;			/* writable file with nothing committed */
	int64		limit;			/* committed length, or -1 */
	ArrowFile	file;
	struct stat st;				/* identity at open; re-checked per batch */
	ArrowSkipStats *stats;		/* per-column statistics for skipping */
	int		   *field_of_attr;	/* attno-1 -> field index, -1 if unused */
	ArrowDatumConv **conv;		/* per attno-1 */
	/* counting source wrapper */
	int			(*inner_read) (void *ctx, void *dst, size_t len, uint64_t off);
	void	   *inner_ctx;
	pg_atomic_uint64 *bytes_counter;
	int64		bytes_local;
} ScanFile;

/* Shared state of a parallel scan (DSM). */
typedef struct ArrowSharedScan
{
	pg_atomic_uint64 next_batch;	/* global index over all files' batches */
	pg_atomic_uint64 batches_read;
	pg_atomic_uint64 batches_skipped;
	pg_atomic_uint64 bytes_read;
	pg_atomic_uint64 rows_filtered;	/* rejected from raw values */
} ArrowSharedScan;

typedef struct ArrowScanState
{
	bool		writable;
	List	   *paths;
	int			nfiles;
	ScanFile   *files;
	int64	   *batch_start;	/* nfiles+1 prefix sums of batch counts, or
								 * NULL until all files are opened */
	Bitmapset  *attrs;			/* referenced attnos (offset by
								 * FirstLowInvalidHeapAttributeNumber) */
	int			natts;
	ArrowSkipQuals *skip;		/* quals usable for batch skipping */

	/* iteration */
	ArrowSharedScan local_shared;	/* when not parallel */
	ArrowSharedScan *shared;
	MemoryContext batch_cxt;
	MemoryContext row_cxt;
	ArrowArena	arena;
	int			cur_file;
	int64		cur_rows;
	int64		cur_row;
	ArrowArray *cur_cols;		/* per attno-1, valid if attr referenced */
	bool	   *cur_keep;		/* per row: may pass the clauses */
	bool		done;
} ArrowScanState;

/* ---------------------------------------------------------------- files */

/*
 * Open a file of the table: a writable table's file is read up to its
 * committed length (arrow_committed.c).  Returns false when there is nothing
 * to read (a writable file not created, or with nothing committed yet).
 */
static bool
table_file_open(ArrowFile *file, const char *path, bool writable, int *fd, int64 *limit)
{
	*limit = -1;
	if (writable)
	{
		*limit = arrow_committed_length(path);
		if (*limit == 0 || access(path, F_OK) != 0)
			return false;
		/* no row: not recorded (created before pg_warp 0.1's trigger) */
		pgwarp_arrow_open_file_ext(file, path, *limit, *limit < 0, fd);
		return true;
	}
	pgwarp_arrow_open_file(file, path, fd);
	return true;
}

static int
counting_read(void *ctx, void *dst, size_t len, uint64_t off)
{
	ScanFile   *sf = (ScanFile *) ctx;
	int			rc = sf->inner_read(sf->inner_ctx, dst, len, off);

	if (rc == 0)
	{
		sf->bytes_local += len;
		if (sf->bytes_counter)
			pg_atomic_fetch_add_u64(sf->bytes_counter, len);
	}
	return rc;
}

static void
scan_open_file(ArrowScanState *ss, int i)
{
	ScanFile   *sf = &ss->files[i];

	if (sf->opened || sf->empty)
		return;
	if (!table_file_open(&sf->file, sf->path, ss->writable, &sf->fd, &sf->limit))
	{
		sf->empty = true;
		return;
	}
	if (fstat(sf->fd, &sf->st) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not stat Arrow file \"%s\": %m", sf->path)));
	sf->inner_read = sf->file.src.read;
	sf->inner_ctx = sf->file.src.ctx;
	sf->file.src.read = counting_read;
	sf->file.src.ctx = sf;
	sf->bytes_counter = &ss->shared->bytes_read;
	sf->opened = true;
}

/* The file must be the one we opened, unchanged: else ERROR. */
static void
scan_check_file(ScanFile *sf)
{
	struct stat st;

	if (fstat(sf->fd, &st) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not stat Arrow file \"%s\": %m", sf->path)));
	/* a writable file grows by appends past our committed length: fine */
	if (sf->limit >= 0 ? (st.st_size < sf->limit || st.st_ino != sf->st.st_ino)
		: (st.st_size != sf->st.st_size || st.st_mtime != sf->st.st_mtime ||
		   st.st_ino != sf->st.st_ino))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("Arrow file \"%s\" changed during the scan", sf->path),
				 errdetail("Size was %lld bytes, now %lld.",
						   (long long) sf->st.st_size, (long long) st.st_size)));
	{
		struct stat pst;

		/* replaced by rename: the path now names another inode */
		if (stat(sf->path, &pst) == 0 && pst.st_ino != sf->st.st_ino)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("Arrow file \"%s\" was replaced during the scan", sf->path)));
	}
}

/* Map each referenced attribute to a field of the file, by name. */
static void
scan_bind_columns(ArrowScanState *ss, ScanFile *sf, TupleDesc tupdesc)
{
	int			a;

	sf->field_of_attr = palloc(sizeof(int) * tupdesc->natts);
	sf->conv = palloc0(sizeof(ArrowDatumConv *) * tupdesc->natts);
	for (a = 0; a < tupdesc->natts; a++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, a);
		int			f;

		sf->field_of_attr[a] = -1;
		if (att->attisdropped ||
			!bms_is_member(a + 1 - FirstLowInvalidHeapAttributeNumber, ss->attrs))
			continue;
		for (f = 0; f < sf->file.schema.n_fields; f++)
			if (strcmp(sf->file.schema.fields[f].name, NameStr(att->attname)) == 0)
				break;
		if (f == sf->file.schema.n_fields)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("column \"%s\" does not exist in Arrow file \"%s\"",
							NameStr(att->attname), sf->path)));
		sf->field_of_attr[a] = f;
		sf->conv[a] = arrow_datum_conv_create(&sf->file.schema.fields[f],
											  att->atttypid, att->atttypmod,
											  NameStr(att->attname));
	}
	sf->stats = arrow_skip_stats_load(&sf->file, ss->skip, sf->field_of_attr);
}

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
	baserel->rows = clamp_row_est(info->total_rows *
								  clauselist_selectivity(root, baserel->baserestrictinfo,
														 0, JOIN_INNER, NULL));
	baserel->fdw_private = info;
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

static bool
arrowIsForeignScanParallelSafe(PlannerInfo *root, RelOptInfo *rel, RangeTblEntry *rte)
{
	return true;
}

/* -------------------------------------------------------------- executor */

static void
arrowBeginForeignScan(ForeignScanState *node, int eflags)
{
	ForeignScan *plan = (ForeignScan *) node->ss.ps.plan;
	Relation	rel = node->ss.ss_currentRelation;
	ArrowScanState *ss = palloc0(sizeof(ArrowScanState));
	ArrowFdwOptions opts;
	ListCell   *lc;
	int			i;

	node->fdw_state = ss;
	arrow_fdw_get_options(RelationGetRelid(rel), &opts);
	ss->paths = opts.files;
	ss->writable = opts.writable;
	ss->nfiles = list_length(ss->paths);
	ss->files = palloc0(sizeof(ScanFile) * Max(ss->nfiles, 1));
	i = 0;
	foreach(lc, ss->paths)
	{
		ss->files[i].path = lfirst(lc);
		ss->files[i].fd = -1;
		i++;
	}
	foreach(lc, (List *) linitial(plan->fdw_private))
		ss->attrs = bms_add_member(ss->attrs, lfirst_int(lc));
	ss->natts = RelationGetDescr(rel)->natts;
	/* a whole-row reference needs every column */
	if (bms_is_member(0 - FirstLowInvalidHeapAttributeNumber, ss->attrs))
		for (i = 1; i <= ss->natts; i++)
			ss->attrs = bms_add_member(ss->attrs, i - FirstLowInvalidHeapAttributeNumber);
	ss->cur_cols = palloc0(sizeof(ArrowArray) * Max(ss->natts, 1));
	ss->shared = &ss->local_shared;
	pg_atomic_init_u64(&ss->local_shared.next_batch, 0);
	pg_atomic_init_u64(&ss->local_shared.batches_read, 0);
	pg_atomic_init_u64(&ss->local_shared.batches_skipped, 0);
	pg_atomic_init_u64(&ss->local_shared.bytes_read, 0);
	pg_atomic_init_u64(&ss->local_shared.rows_filtered, 0);
	ss->batch_cxt = AllocSetContextCreate(node->ss.ps.state->es_query_cxt,
										  "arrow_fdw batch", ALLOCSET_DEFAULT_SIZES);
	ss->row_cxt = AllocSetContextCreate(node->ss.ps.state->es_query_cxt,
										"arrow_fdw row", ALLOCSET_DEFAULT_SIZES);
	ss->skip = arrow_skip_quals_build(plan->scan.plan.qual, plan->scan.scanrelid,
									  RelationGetDescr(rel), &node->ss.ps);
	ss->cur_file = -1;

	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;

	/* open every file now: batch numbering needs all batch counts */
	ss->batch_start = palloc(sizeof(int64) * (ss->nfiles + 1));
	ss->batch_start[0] = 0;
	for (i = 0; i < ss->nfiles; i++)
	{
		scan_open_file(ss, i);
		if (!ss->files[i].empty)
			scan_bind_columns(ss, &ss->files[i], RelationGetDescr(rel));
		ss->batch_start[i + 1] = ss->batch_start[i] +
			(ss->files[i].empty ? 0 : ss->files[i].file.n_batches);
	}
}

/* Claim the next batch that is not skipped and load it; false at the end. */
static bool
scan_next_batch(ForeignScanState *node, ArrowScanState *ss)
{
	for (;;)
	{
		uint64		g;
		int			fi;
		int64		b;
		ScanFile   *sf;
		ArrowBatchMeta meta;
		ArrowError	err;
		MemoryContext old;
		int			a;
		int64		kept;

		CHECK_FOR_INTERRUPTS();
		g = pg_atomic_fetch_add_u64(&ss->shared->next_batch, 1);
		if (g >= (uint64) ss->batch_start[ss->nfiles])
			return false;
		for (fi = 0; fi < ss->nfiles && (uint64) ss->batch_start[fi + 1] <= g; fi++)
			;
		sf = &ss->files[fi];
		b = (int64) g - ss->batch_start[fi];

		if (arrow_skip_batch(ss->skip, sf->stats, (int) b, node->ss.ps.ps_ExprContext))
		{
			pg_atomic_fetch_add_u64(&ss->shared->batches_skipped, 1);
			continue;
		}

		MemoryContextReset(ss->batch_cxt);
		old = MemoryContextSwitchTo(ss->batch_cxt);
		arrow_arena_init(&ss->arena, pgwarp_arrow_allocator());
		scan_check_file(sf);
		if (arrow_read_batch_meta(&sf->file, (int) b, &ss->arena, &meta, &err) != 0)
			pgwarp_report_arrow_error(ERROR, &err);
		if (arrow_skip_batch_nulls(ss->skip, &sf->file, &meta, sf->field_of_attr))
		{
			MemoryContextSwitchTo(old);
			pg_atomic_fetch_add_u64(&ss->shared->batches_skipped, 1);
			continue;
		}
		for (a = 0; a < ss->natts; a++)
		{
			int			f = sf->field_of_attr[a];

			if (f < 0)
				continue;
			if (arrow_load_column(&sf->file, (int) b, &meta, f, &ss->arena,
								  &ss->cur_cols[a], &err) != 0)
				pgwarp_report_arrow_error(ERROR, &err);
		}
		/* decide the simple clauses from the raw values, so that rows that
		 * fail them are never converted to Datums */
		ss->cur_keep = palloc(sizeof(bool) * Max(meta.length, 1));
		kept = arrow_skip_filter_rows(ss->skip, sf->field_of_attr, ss->cur_cols,
									  meta.length, ss->cur_keep, node->ss.ps.ps_ExprContext);
		MemoryContextSwitchTo(old);
		pg_atomic_fetch_add_u64(&ss->shared->batches_read, 1);
		if (kept < meta.length)
			pg_atomic_fetch_add_u64(&ss->shared->rows_filtered, meta.length - kept);
		ss->cur_file = fi;
		ss->cur_rows = meta.length;
		ss->cur_row = 0;
		return true;
	}
}

static TupleTableSlot *
arrowIterateForeignScan(ForeignScanState *node)
{
	ArrowScanState *ss = node->fdw_state;
	TupleTableSlot *slot = node->ss.ss_ScanTupleSlot;
	ScanFile   *sf;
	MemoryContext old;
	int			a;

	ExecClearTuple(slot);
	if (ss->done)
		return slot;
	for (;;)
	{
		while (ss->cur_file < 0 || ss->cur_row >= ss->cur_rows)
		{
			if (!scan_next_batch(node, ss))
			{
				ss->done = true;
				return slot;
			}
		}
		if (ss->cur_keep[ss->cur_row])
			break;
		ss->cur_row++;
	}
	sf = &ss->files[ss->cur_file];
	MemoryContextReset(ss->row_cxt);
	old = MemoryContextSwitchTo(ss->row_cxt);
	for (a = 0; a < ss->natts; a++)
	{
		if (sf->field_of_attr[a] < 0)
		{
			slot->tts_values[a] = (Datum) 0;
			slot->tts_isnull[a] = true;
			continue;
		}
		slot->tts_values[a] = arrow_datum_get(sf->conv[a], &ss->cur_cols[a],
											  ss->cur_row, &slot->tts_isnull[a]);
	}
	MemoryContextSwitchTo(old);
	ss->cur_row++;
	return ExecStoreVirtualTuple(slot);
}

static void
arrowReScanForeignScan(ForeignScanState *node)
{
	ArrowScanState *ss = node->fdw_state;

	/* a parallel rescan is reset by ReInitializeDSMForeignScan */
	if (ss->shared == &ss->local_shared)
		pg_atomic_write_u64(&ss->shared->next_batch, 0);
	ss->cur_file = -1;
	ss->cur_rows = ss->cur_row = 0;
	ss->done = false;
	arrow_skip_quals_rescan(ss->skip);
}

static void
arrowEndForeignScan(ForeignScanState *node)
{
	ArrowScanState *ss = node->fdw_state;
	int			i;

	if (ss == NULL)
		return;
	for (i = 0; i < ss->nfiles; i++)
		if (ss->files[i].opened)
		{
			ss->files[i].file.src.read = ss->files[i].inner_read;
			ss->files[i].file.src.ctx = ss->files[i].inner_ctx;
			pgwarp_arrow_close_file(&ss->files[i].file, ss->files[i].fd);
			ss->files[i].opened = false;
		}
}

static void
arrowExplainForeignScan(ForeignScanState *node, ExplainState *es)
{
	ArrowScanState *ss = node->fdw_state;
	Relation	rel = node->ss.ss_currentRelation;
	TupleDesc	td = RelationGetDescr(rel);
	StringInfoData cols;
	int			a;

	if (es->verbose)
	{
		ListCell   *lc;

		foreach(lc, ss->paths)
			ExplainPropertyText("Arrow File", (char *) lfirst(lc), es);
	}
	else
		ExplainPropertyInteger("Arrow Files", NULL, ss->nfiles, es);
	initStringInfo(&cols);
	for (a = 0; a < td->natts; a++)
		if (bms_is_member(a + 1 - FirstLowInvalidHeapAttributeNumber, ss->attrs))
			appendStringInfo(&cols, "%s%s", cols.len ? ", " : "",
							 quote_identifier(NameStr(TupleDescAttr(td, a)->attname)));
	ExplainPropertyText("Columns Read", cols.len ? cols.data : "(none)", es);
	if (ss->skip)
		ExplainPropertyText("Batch Skipping", arrow_skip_quals_describe(ss->skip, td), es);
	if (es->analyze)
	{
		ExplainPropertyInteger("Batches Read", NULL,
							   pg_atomic_read_u64(&ss->shared->batches_read), es);
		ExplainPropertyInteger("Batches Skipped", NULL,
							   pg_atomic_read_u64(&ss->shared->batches_skipped), es);
		ExplainPropertyInteger("Bytes Read", "bytes",
							   pg_atomic_read_u64(&ss->shared->bytes_read), es);
		if (ss->skip)
			ExplainPropertyInteger("Rows Removed by Arrow Filter", NULL,
								   pg_atomic_read_u64(&ss->shared->rows_filtered), es);
	}
}

/* -------------------------------------------------------------- parallel */

static Size
arrowEstimateDSMForeignScan(ForeignScanState *node, ParallelContext *pcxt)
{
	return sizeof(ArrowSharedScan);
}

static void
shared_init(ArrowScanState *ss, ArrowSharedScan *sh)
{
	int			i;

	ss->shared = sh;
	for (i = 0; i < ss->nfiles; i++)
		ss->files[i].bytes_counter = &sh->bytes_read;
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
	shared_init(ss, sh);
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
	shared_init(ss, &ss->local_shared);
}

static void
arrowInitializeWorkerForeignScan(ForeignScanState *node, shm_toc *toc, void *coordinate)
{
	shared_init(node->fdw_state, coordinate);
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
	ArrowFdwOptions opts;
	ListCell   *lc;
	int64		total = 0;
	int			nsample = 0;
	int			i;
	int			a;
	int64	   *batch_rows;
	bool	   *use_batch;
	int64		sel_rows;
	int			nb = 0;
	pg_prng_state prng;
	Datum	   *values = palloc(sizeof(Datum) * td->natts);
	bool	   *nulls = palloc(sizeof(bool) * td->natts);
	MemoryContext tmp = AllocSetContextCreate(CurrentMemoryContext, "arrow_fdw analyze",
											  ALLOCSET_DEFAULT_SIZES);

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
		scan_open_file(ss, i);
		if (!ss->files[i].empty)
		{
			scan_bind_columns(ss, &ss->files[i], td);
			nb += ss->files[i].file.n_batches;
		}
		i++;
	}

	/* rows per batch */
	batch_rows = palloc(sizeof(int64) * Max(nb, 1));
	nb = 0;
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
			batch_rows[nb++] = meta.length;
			total += meta.length;
			arrow_arena_free_all(&arena);
		}
	}

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
					ArrowBatchMeta meta;
					ArrowError	err;
					MemoryContext old;

					if ((double) remaining * pg_prng_double(&prng) >= needed)
						continue;
					if (!loaded)
					{
						MemoryContextReset(tmp);
						old = MemoryContextSwitchTo(tmp);
						arrow_arena_init(&arena, pgwarp_arrow_allocator());
						scan_check_file(sf);
						if (arrow_read_batch_meta(&sf->file, b, &arena, &meta, &err) != 0)
							pgwarp_report_arrow_error(ERROR, &err);
						cols = palloc0(sizeof(ArrowArray) * td->natts);
						for (a = 0; a < td->natts; a++)
							if (sf->field_of_attr[a] >= 0 &&
								arrow_load_column(&sf->file, b, &meta, sf->field_of_attr[a],
												  &arena, &cols[a], &err) != 0)
								pgwarp_report_arrow_error(ERROR, &err);
						MemoryContextSwitchTo(old);
						loaded = true;
					}
					{
						MemoryContext rowcxt = AllocSetContextCreate(tmp, "row", ALLOCSET_SMALL_SIZES);

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
						rows[nsample++] = heap_form_tuple(td, values, nulls);
						MemoryContextDelete(rowcxt);
					}
					needed--;
				}
				remaining -= n - r;
			}
		}
	}
	for (i = 0; i < ss->nfiles; i++)
		if (ss->files[i].opened)
		{
			ss->files[i].file.src.read = ss->files[i].inner_read;
			ss->files[i].file.src.ctx = ss->files[i].inner_ctx;
			pgwarp_arrow_close_file(&ss->files[i].file, ss->files[i].fd);
		}
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
