/*
 * arrow_scan.c — reading an arrow_fdw table's record batches (see
 * arrow_scan.h).
 *
 * Only the buffers of referenced columns are read (pread; never mmap, see
 * arrow_pg.c), batches whose min/max statistics contradict a WHERE clause
 * are skipped without reading them, and every file is re-checked with
 * fstat before each batch so that a file replaced or truncated during the
 * scan gives an ERROR instead of garbage.
 */
#include "postgres.h"

#include <unistd.h>

#include "access/sysattr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "fdw/arrow_scan.h"
#include "parquet.h"
#include "pg_warp.h"

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

/*
 * Whether the opened files read through counting_read (the default) or
 * straight through their sources, which several threads may call at once.
 */
void
arrow_scan_counting_reads(ArrowScanState *ss, bool on)
{
	int			i;

	for (i = 0; i < ss->nfiles; i++)
	{
		ScanFile   *sf = &ss->files[i];

		if (!sf->opened)
			continue;
		sf->file.src.read = on ? counting_read : sf->inner_read;
		sf->file.src.ctx = on ? (void *) sf : sf->inner_ctx;
	}
}

void
arrow_scan_open_file(ArrowScanState *ss, int i)
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
void
arrow_scan_check_file(ScanFile *sf)
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

/* Every open file's statistics again, for the quals the scan has now
 * (join ranges added after the files were opened). */
void
arrow_scan_reload_stats(ArrowScanState *ss)
{
	int			i;

	for (i = 0; i < ss->nfiles; i++)
	{
		ScanFile   *sf = &ss->files[i];

		if (sf->opened && !sf->empty && sf->field_of_attr)
			sf->stats = arrow_skip_stats_load(&sf->file, ss->skip, sf->field_of_attr);
	}
}

/* Map each referenced attribute to a field of the file, by name. */
void
arrow_scan_bind_columns(ArrowScanState *ss, ScanFile *sf, TupleDesc tupdesc)
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

/* ------------------------------------------------------ buffer recycling */

/*
 * Column buffers of consecutive batches have nearly the same sizes.  Giving
 * them back to malloc after every batch made every batch fault in (and the
 * kernel zero) fresh pages for tens of megabytes: half the time of a scan
 * on a warm page cache.  The scan's arena therefore allocates through an
 * ArrowRecycler (arrow.h) whose blocks come from buf_cxt and live until the
 * scan ends, so memory held is one batch's working set.
 */
static void *
buf_cxt_alloc(void *ctx, size_t size)
{
	return MemoryContextAllocExtended((MemoryContext) ctx, size,
									  MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
}

/* ------------------------------------------------------------ scanning */

void
arrow_scan_begin(ArrowScanState *ss, Relation rel, Bitmapset *attrs, List *quals,
				 Index scanrelid, PlanState *ps, bool explain_only)
{
	ArrowFdwOptions opts;
	ListCell   *lc;
	int			i;

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
	ss->attrs = bms_copy(attrs);
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
	ss->batch_cxt = AllocSetContextCreate(CurrentMemoryContext,
										  "arrow scan batch", ALLOCSET_DEFAULT_SIZES);
	ss->row_cxt = AllocSetContextCreate(CurrentMemoryContext,
										"arrow scan row", ALLOCSET_DEFAULT_SIZES);
	ss->buf_cxt = AllocSetContextCreate(CurrentMemoryContext,
										"arrow scan buffers", ALLOCSET_DEFAULT_SIZES);
	ss->buf_alloc.alloc = buf_cxt_alloc;
	ss->buf_alloc.free = NULL;	/* blocks go with buf_cxt */
	ss->buf_alloc.ctx = ss->buf_cxt;
	ss->buf_alloc.max_alloc = MaxAllocHugeSize;
	arrow_recycler_init(&ss->recycler, &ss->buf_alloc);
	ss->skip = arrow_skip_quals_build(quals, scanrelid, RelationGetDescr(rel), ps);
	ss->cur_file = -1;
	ss->parts_per_batch = 1;

	if (explain_only)
		return;

	/* open every file now: batch numbering needs all batch counts */
	ss->batch_start = palloc(sizeof(int64) * (ss->nfiles + 1));
	ss->batch_start[0] = 0;
	for (i = 0; i < ss->nfiles; i++)
	{
		arrow_scan_open_file(ss, i);
		if (!ss->files[i].empty)
			arrow_scan_bind_columns(ss, &ss->files[i], RelationGetDescr(rel));
		ss->batch_start[i + 1] = ss->batch_start[i] +
			(ss->files[i].empty ? 0 : ss->files[i].file.n_batches);
	}
}


/*
 * Every batch of the scan that the statistics do not rule out, in scan
 * order, for a caller that reads them itself (the CPU driver's threads):
 * files[i] / batches[i] pairs in *files_out / *batches_out.  Each file is
 * checked first; batches ruled out are counted as skipped.  Not for
 * parallel scans (the shared counter is not used).
 */
int
arrow_scan_list_batches(ArrowScanState *ss, ExprContext *econtext,
						int **files_out, int **batches_out)
{
	int64		total = ss->batch_start ? ss->batch_start[ss->nfiles] : 0;
	int		   *files = palloc(sizeof(int) * Max(total, 1));
	int		   *batches = palloc(sizeof(int) * Max(total, 1));
	int			n = 0;
	int			fi;

	for (fi = 0; fi < ss->nfiles; fi++)
	{
		ScanFile   *sf = &ss->files[fi];
		int			b;

		if (sf->empty || !sf->opened)
			continue;
		arrow_scan_check_file(sf);
		for (b = 0; b < sf->file.n_batches; b++)
		{
			CHECK_FOR_INTERRUPTS();
			if (arrow_skip_batch(ss->skip, sf->stats, b, econtext))
			{
				pg_atomic_fetch_add_u64(&ss->shared->batches_skipped, 1);
				continue;
			}
			files[n] = fi;
			batches[n] = b;
			n++;
		}
	}
	*files_out = files;
	*batches_out = batches;
	return n;
}

/*
 * Claim the next unit (a batch, or a part of one) that is not skipped and
 * load it; false at the end.  Unit g is part g % parts of batch g / parts.
 * A batch is split only when every column read can be loaded by row range
 * (uncompressed, fixed width or dictionary); otherwise its part 0 loads it
 * whole and the other parts are empty.  Batch counters count batches (at
 * part 0); skipping is decided per batch, the same for all its parts.
 */
bool
arrow_scan_next_batch(ArrowScanState *ss, ExprContext *econtext, bool row_filter)
{
	int			parts = Max(ss->parts_per_batch, 1);

	for (;;)
	{
		uint64		g;
		int			fi;
		int64		b;
		int			part;
		ScanFile   *sf;
		ArrowBatchMeta meta;
		ArrowError	err;
		MemoryContext old;
		int			a;
		int64		kept;
		int64		first = 0,
					nrows;
		bool		split;
		int			rc;

		CHECK_FOR_INTERRUPTS();
		g = pg_atomic_fetch_add_u64(&ss->shared->next_batch, 1);
		part = (int) (g % (uint64) parts);
		g /= (uint64) parts;
		if (g >= (uint64) ss->batch_start[ss->nfiles])
			return false;
		for (fi = 0; fi < ss->nfiles && (uint64) ss->batch_start[fi + 1] <= g; fi++)
			;
		sf = &ss->files[fi];
		b = (int64) g - ss->batch_start[fi];

		if (arrow_skip_batch(ss->skip, sf->stats, (int) b, econtext))
		{
			if (part == 0)
				pg_atomic_fetch_add_u64(&ss->shared->batches_skipped, 1);
			continue;
		}

		if (!arrow_part_may_have_rows(&sf->file, (int) b, part))
			continue;			/* small: loaded whole by part 0 */

		MemoryContextReset(ss->batch_cxt);
		old = MemoryContextSwitchTo(ss->batch_cxt);
		if (ss->arena_live)
			arrow_arena_free_all(&ss->arena);
		arrow_arena_init(&ss->arena, &ss->recycler.alloc);
		ss->arena_live = true;
		arrow_scan_check_file(sf);
		{
			/* a batch's metadata counts once in Bytes Read (at part 0),
			 * whichever participants read it */
			pg_atomic_uint64 *counter = sf->bytes_counter;

			if (part != 0)
				sf->bytes_counter = NULL;
			rc = arrow_read_batch_meta(&sf->file, (int) b, &ss->arena, &meta, &err);
			sf->bytes_counter = counter;
			if (rc != 0)
				pgwarp_report_arrow_error(ERROR, &err);
		}
		if (arrow_skip_batch_nulls(ss->skip, &sf->file, &meta, sf->field_of_attr))
		{
			MemoryContextSwitchTo(old);
			if (part == 0)
				pg_atomic_fetch_add_u64(&ss->shared->batches_skipped, 1);
			continue;
		}

		/* this unit's rows: none when the batch has fewer parts, or is read
		 * whole by its part 0 */
		if (!arrow_batch_part(&sf->file, (int) b, &meta, sf->field_of_attr, ss->natts,
							  part, parts, &first, &nrows, &split))
		{
			MemoryContextSwitchTo(old);
			continue;
		}

		for (a = 0; a < ss->natts; a++)
		{
			int			f = sf->field_of_attr[a];

			if (f < 0 || (ss->owner_loads && ss->owner_loads[a]))
			{
				memset(&ss->cur_cols[a], 0, sizeof(ArrowArray));
				continue;
			}
			if (split)
				rc = arrow_load_column_range(&sf->file, (int) b, &meta, f, first, nrows,
											 &ss->arena, &ss->cur_cols[a], &err);
			else
				rc = arrow_load_column(&sf->file, (int) b, &meta, f, &ss->arena,
									   &ss->cur_cols[a], &err);
			if (rc != 0)
				pgwarp_report_arrow_error(ERROR, &err);
		}
		/* decide the simple clauses from the raw values, so that rows that
		 * fail them are never converted to Datums */
		if (row_filter)
		{
			ss->cur_keep = palloc(sizeof(bool) * Max(nrows, 1));
			kept = arrow_skip_filter_rows(ss->skip, sf->field_of_attr, ss->cur_cols,
										  nrows, ss->cur_keep, econtext);
			if (ss->prefilter.filter_batch && kept > 0)
				kept = ss->prefilter.filter_batch(ss->prefilter.state, ss->cur_cols, nrows,
												  ss->cur_keep, kept);
		}
		else
		{
			ss->cur_keep = NULL;	/* every row */
			kept = nrows;
		}
		MemoryContextSwitchTo(old);
		if (part == 0)
			pg_atomic_fetch_add_u64(&ss->shared->batches_read, 1);
		if (kept < nrows)
			pg_atomic_fetch_add_u64(&ss->shared->rows_filtered, nrows - kept);
		ss->cur_file = fi;
		ss->cur_batch = (int) b;
		ss->cur_first_row = first;
		ss->cur_rows = nrows;
		ss->cur_row = 0;
		return true;
	}
}

/*
 * Row i of the loaded batch as the values of every attribute: referenced
 * ones converted (in CurrentMemoryContext), the rest NULL.
 */
void
arrow_scan_row_values(ArrowScanState *ss, int64 i, Datum *values, bool *isnull)
{
	ScanFile   *sf = &ss->files[ss->cur_file];
	int			a;

	for (a = 0; a < ss->natts; a++)
	{
		if (ss->owner_loads && ss->owner_loads[a])
		{
			values[a] = (Datum) 0;	/* the owner fills it in */
			isnull[a] = true;
			continue;
		}
		values[a] = arrow_scan_value(ss, sf, a, i, &isnull[a]);
	}
}

void
arrow_scan_rescan(ArrowScanState *ss)
{
	/* a parallel rescan is reset by ReInitializeDSMForeignScan */
	if (ss->shared == &ss->local_shared)
		pg_atomic_write_u64(&ss->shared->next_batch, 0);
	ss->cur_file = -1;
	ss->cur_rows = ss->cur_row = 0;
	ss->done = false;
	arrow_skip_quals_rescan(ss->skip);
}

void
arrow_scan_end(ArrowScanState *ss)
{
	int			i;

	for (i = 0; i < ss->nfiles; i++)
		if (ss->files[i].opened)
		{
			ss->files[i].file.src.read = ss->files[i].inner_read;
			ss->files[i].file.src.ctx = ss->files[i].inner_ctx;
			pgwarp_arrow_close_file(&ss->files[i].file, ss->files[i].fd);
			ss->files[i].opened = false;
		}
}

void
arrow_scan_use_shared(ArrowScanState *ss, ArrowSharedScan *sh)
{
	int			i;

	ss->shared = sh;
	for (i = 0; i < ss->nfiles; i++)
		ss->files[i].bytes_counter = &sh->bytes_read;
}

/*
 * "File Format: Parquet" (or "Arrow IPC, Parquet") when a file opened so
 * far is a Parquet file, whose row groups are its batches (read, skipped),
 * or, where a page index cuts them at page boundaries, their parts; nothing
 * for Arrow files alone.
 */
static void
explain_formats(ArrowScanState *ss, ExplainState *es)
{
	bool		arrow = false,
				parquet = false;
	int64		groups = 0,
				batches = 0;
	int			i;

	for (i = 0; i < ss->nfiles; i++)
	{
		if (ss->files[i].file.format == ARROW_FORMAT_PARQUET)
		{
			parquet = true;
			groups += parquet_row_groups(&ss->files[i].file);
			batches += ss->files[i].file.n_batches;
		}
		else if (ss->files[i].file.format != 0)
			arrow = true;
	}
	if (!parquet)
		return;
	if (batches == groups)
		ExplainPropertyText("File Format",
							arrow ? "Arrow IPC, Parquet (row groups as batches)" :
							"Parquet (row groups as batches)", es);
	else
	{
		char		buf[160];

		snprintf(buf, sizeof(buf), "%sParquet (" INT64_FORMAT " row groups as " INT64_FORMAT
				 " batches cut at page boundaries)", arrow ? "Arrow IPC, " : "", groups, batches);
		ExplainPropertyText("File Format", buf, es);
	}
}

void
arrow_scan_explain(ArrowScanState *ss, TupleDesc td, ExplainState *es)
{
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
	explain_formats(ss, es);
	if (ss->skip && arrow_skip_quals_count(ss->skip) > 0)
		ExplainPropertyText("Batch Skipping", arrow_skip_quals_describe(ss->skip, td), es);
	if (es->analyze)
	{
		const char *ranges = arrow_skip_join_ranges_describe(ss->skip, td);

		if (ranges)
			ExplainPropertyText("Join Key Ranges", ranges, es);
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
