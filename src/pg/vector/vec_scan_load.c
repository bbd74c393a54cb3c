/*
 * vec_scan_load.c — WarpVecScan's reading of its vector column
 * (vec_scan.h: VecColumn).
 *
 * A FixedSizeList<Float32 | Float16> column of an uncompressed record
 * batch is streamed: its child values are read in chunks of about
 * VEC_CHUNK_BYTES with pread (through the file's counting source, so
 * EXPLAIN's Bytes Read stays right) into one buffer reused for the whole
 * scan, and scored while that chunk is in the CPU cache.  Loading the
 * whole column instead (arrow_scan's way: one buffer per batch, hundreds
 * of megabytes for embeddings) costs a fresh allocation and its page
 * faults per query plus a pass over memory before scoring starts; profiled
 * at 100k x 768 that was most of the scan.  Any other case (another list
 * type, a compressed batch, NULL elements, a metadata check that fails)
 * loads the whole column with arrow_load_column, which validates it and
 * raises arrow_fdw's errors.
 *
 * With more than one CPU thread (pg_warp.cpu_threads) and no qual, a
 * streamed batch is scored by pgwarp_vec_column_score: threads each read
 * and score a range of about 4 MB of rows into a distance array, and the
 * backend then walks it in scan order for the top-k.
 */
#include "postgres.h"

#include <errno.h>

#include "miscadmin.h"
#include "utils/array.h"
#include "utils/memutils.h"

#include "fdw/arrow_pg.h"
#include "fdw/arrow_scan.h"
#include "vec_scan.h"
#include "warp.h"
#include "warp_threads.h"
#include "warp_vector_cpu.h"

#define VEC_CHUNK_BYTES (512 * 1024)

void
pgwarp_vec_column_init(VecColumn *vc, MemoryContext parent)
{
	memset(vc, 0, sizeof(*vc));
	vc->cxt = AllocSetContextCreate(parent, "WarpVecScan vectors", ALLOCSET_DEFAULT_SIZES);
	vc->batch_cxt = AllocSetContextCreate(vc->cxt, "WarpVecScan vector batch",
										  ALLOCSET_DEFAULT_SIZES);
}

/* read [off, off + len) of the file through its (counting) source */
static void
read_bytes(ScanFile *sf, void *dst, size_t len, uint64 off)
{
	int			rc = sf->file.src.read(sf->file.src.ctx, dst, len, off);

	if (rc != 0)
	{
		ArrowError	err;

		memset(&err, 0, sizeof(err));
		err.errno_saved = rc;
		arrow_error(&err, ARROW_ERR_IO, (int64_t) off,
					"%s: could not read %zu bytes at offset %llu of a record batch",
					sf->path, len, (unsigned long long) off);
		pgwarp_report_arrow_error(ERROR, &err);
	}
}

/*
 * Whether batch meta's column f can be streamed: sets the layout and reads
 * the list's validity bitmap.  Every length and buffer is checked against
 * what the rows need; a failed check falls back to arrow_load_column.
 */
static bool
direct_layout(VecColumn *vc, ScanFile *sf, const ArrowBatchMeta *meta, int f)
{
	const ArrowField *lf = &sf->file.schema.fields[f];
	const ArrowField *cf;
	const ArrowFieldNode *ln,
			   *cn;
	int64		need,
				width;

	if (meta->codec != ARROW_CODEC_NONE || lf->type.id != ARROW_TYPE_FIXED_SIZE_LIST ||
		lf->has_dict || lf->n_children != 1 || lf->type.fixed_size < 1 ||
		lf->type.fixed_size > MaxArraySize)
		return false;
	cf = &lf->children[0];
	if (cf->type.id != ARROW_TYPE_FLOAT || cf->has_dict || cf->n_children != 0 ||
		cf->type.precision == ARROW_PRECISION_DOUBLE)
		return false;
	width = cf->type.precision == ARROW_PRECISION_SINGLE ? 4 : 2;
	if (lf->node_index < 0 || lf->node_index >= meta->n_nodes ||
		cf->node_index < 0 || cf->node_index >= meta->n_nodes ||
		lf->buffer_index < 0 || lf->buffer_index >= meta->n_buffers ||
		cf->buffer_index < 0 || cf->buffer_index + 1 >= meta->n_buffers)
		return false;
	ln = &meta->nodes[lf->node_index];
	cn = &meta->nodes[cf->node_index];
	if (ln->length != meta->length || cn->null_count != 0 ||
		meta->length > PG_INT64_MAX / lf->type.fixed_size / width)
		return false;
	need = meta->length * lf->type.fixed_size;
	if (cn->length < need || meta->buffers[cf->buffer_index + 1].length < need * width)
		return false;
	vc->validity = NULL;
	if (ln->null_count > 0)
	{
		int64		bytes = (meta->length + 7) / 8;

		if (meta->buffers[lf->buffer_index].length < bytes)
			return false;
		vc->validity = MemoryContextAllocHuge(vc->batch_cxt, Max(bytes, 1));
		read_bytes(sf, vc->validity, (size_t) bytes,
				   (uint64) meta->buffers[lf->buffer_index].offset);
	}
	vc->dims = lf->type.fixed_size;
	vc->half = width == 2;
	vc->values_off = meta->buffers[cf->buffer_index + 1].offset;
	vc->chunk_rows = Max(8, VEC_CHUNK_BYTES / (int64) (vc->dims * width));
	if (vc->chunk == NULL || vc->chunk_cap < vc->chunk_rows * vc->dims * width)
	{
		if (vc->chunk)
			pfree(vc->chunk);
		vc->chunk_cap = vc->chunk_rows * vc->dims * width;
		vc->chunk = MemoryContextAllocHuge(vc->cxt, vc->chunk_cap);
	}
	if (vc->half && vc->widened_cap < vc->dims)
	{
		if (vc->widened)
			pfree(vc->widened);
		vc->widened = MemoryContextAlloc(vc->cxt, sizeof(float) * vc->dims);
		vc->widened_cap = vc->dims;
	}
	return true;
}

/*
 * The vector column of the batch the scan just loaded (file sf, attribute
 * a): streamed when direct_layout allows, else loaded whole into the
 * scan's batch arena (vc->col).
 */
void
pgwarp_vec_column_batch(VecColumn *vc, ArrowScanState *ss, ScanFile *sf, int a)
{
	int			f = sf->field_of_attr[a];
	ArrowBatchMeta meta;
	ArrowError	err;
	pg_atomic_uint64 *counter = sf->bytes_counter;
	int			rc;

	MemoryContextReset(vc->batch_cxt);
	vc->direct = false;
	vc->absent = f < 0;
	vc->chunk_lo = vc->chunk_n = 0;
	vc->first_row = ss->cur_first_row;
	vc->nrows = ss->cur_rows;
	memset(&vc->col, 0, sizeof(vc->col));
	if (vc->absent)
		return;
	/* the scan counted this batch's metadata once already */
	sf->bytes_counter = NULL;
	rc = arrow_read_batch_meta(&sf->file, ss->cur_batch, &ss->arena, &meta, &err);
	sf->bytes_counter = counter;
	if (rc != 0)
		pgwarp_report_arrow_error(ERROR, &err);
	if (direct_layout(vc, sf, &meta, f))
	{
		vc->direct = true;
		return;
	}
	if (arrow_load_column(&sf->file, ss->cur_batch, &meta, f, &ss->arena, &vc->col, &err) != 0)
		pgwarp_report_arrow_error(ERROR, &err);
	if (vc->first_row != 0 || vc->nrows != meta.length)
		elog(ERROR, "WarpVecScan: a part of record batch %d was loaded", ss->cur_batch);
}

/*
 * Row i of a streamed batch: false if the vector is NULL, else its floats
 * (valid until the next call) and dimensions.
 */
bool
pgwarp_vec_column_row(VecColumn *vc, ScanFile *sf, int64 i, const float **x, int *dims)
{
	int64		r = vc->first_row + i;
	int			width = vc->half ? 2 : 4;

	Assert(vc->direct);
	if (vc->validity && !arrow_get_bit(vc->validity, r))
		return false;
	if (i < vc->chunk_lo || i >= vc->chunk_lo + vc->chunk_n)
	{
		vc->chunk_lo = i;
		vc->chunk_n = Min(vc->chunk_rows, vc->nrows - i);
		read_bytes(sf, vc->chunk, (size_t) (vc->chunk_n * vc->dims * width),
				   (uint64) (vc->values_off + r * vc->dims * width));
	}
	*dims = vc->dims;
	if (!vc->half)
	{
		*x = (const float *) vc->chunk + (i - vc->chunk_lo) * vc->dims;
		return true;
	}
	for (int k = 0; k < vc->dims; k++)
		vc->widened[k] = (float) arrow_half_to_double(
			((const uint16_t *) vc->chunk)[(i - vc->chunk_lo) * vc->dims + k]);
	*x = vc->widened;
	return true;
}

/* ------------------------------------------------ scoring on threads */

#define VEC_TASK_BYTES (4 * 1024 * 1024)

typedef struct VecScoreJob
{
	const VecColumn *vc;
	int			(*read) (void *ctx, void *dst, size_t len, uint64_t off);
	void	   *ctx;
	const float *query;
	WarpVecKind kind;
	double		qnorm2;
	int64		rows_per_task;
	double	   *dist;
	int		   *rc;				/* per task: 0, an errno value, or ENOMEM */
} VecScoreJob;

/* rows [task * rows_per_task, ...) of the batch: read, widen, score.
 * Runs on a worker thread: malloc and the raw source only. */
static void
score_task(void *arg, int task)
{
	VecScoreJob *job = (VecScoreJob *) arg;
	const VecColumn *vc = job->vc;
	int			width = vc->half ? 2 : 4;
	int64		lo = (int64) task * job->rows_per_task,
				n = Min(job->rows_per_task, vc->nrows - lo);
	uint8	   *buf = malloc((size_t) (n * vc->dims * width));
	float	   *wide = vc->half ? malloc(sizeof(float) * vc->dims) : NULL;
	int			rc;

	if (buf == NULL || (vc->half && wide == NULL))
	{
		job->rc[task] = ENOMEM;
		goto done;
	}
	rc = job->read(job->ctx, buf, (size_t) (n * vc->dims * width),
				   (uint64) (vc->values_off + (vc->first_row + lo) * vc->dims * width));
	if (rc != 0)
	{
		job->rc[task] = rc;
		goto done;
	}
	for (int64 i = 0; i < n; i++)
	{
		const float *x = (const float *) buf + i * vc->dims;

		if (vc->validity && !arrow_get_bit(vc->validity, vc->first_row + lo + i))
			continue;
		if (vc->half)
		{
			for (int k = 0; k < vc->dims; k++)
				wide[k] = (float) arrow_half_to_double(((const uint16_t *) buf)[i * vc->dims + k]);
			x = wide;
		}
		job->dist[lo + i] = warp_vec_cpu_distance(job->kind, x, job->query, vc->dims,
												  job->qnorm2);
	}
done:
	free(buf);
	free(wide);
}

/*
 * The distance of every non-NULL row of a streamed batch to query (of
 * vc->dims dimensions, already checked), into dist[0 .. nrows), on
 * nthreads threads that read their rows straight from the file (pread is
 * safe on threads; the bytes are counted here afterwards).
 */
void
pgwarp_vec_column_score(VecColumn *vc, ScanFile *sf, const float *query, WarpVecKind kind,
						double qnorm2, int nthreads, double *dist)
{
	VecScoreJob job;
	int			width = vc->half ? 2 : 4;
	int			ntasks;

	Assert(vc->direct);
	job.vc = vc;
	job.read = sf->inner_read ? sf->inner_read : sf->file.src.read;
	job.ctx = sf->inner_read ? sf->inner_ctx : sf->file.src.ctx;
	job.query = query;
	job.kind = kind;
	job.qnorm2 = qnorm2;
	job.rows_per_task = Max(8, VEC_TASK_BYTES / ((int64) vc->dims * width));
	job.dist = dist;
	ntasks = (int) ((vc->nrows + job.rows_per_task - 1) / job.rows_per_task);
	job.rc = palloc0(sizeof(int) * Max(ntasks, 1));
	if (warp_run_tasks(nthreads, ntasks, score_task, &job, pgwarp_threads_interrupted, NULL) != 0)
		CHECK_FOR_INTERRUPTS();
	CHECK_FOR_INTERRUPTS();
	for (int t = 0; t < ntasks; t++)
		if (job.rc[t] == ENOMEM)
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory scoring vectors of \"%s\"", sf->path)));
		else if (job.rc[t] != 0)
		{
			int64		lo = (int64) t * job.rows_per_task;

			errno = job.rc[t];
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read the vectors of rows %lld.. of a record batch of \"%s\": %m",
							(long long) (vc->first_row + lo), sf->path)));
		}
	{
		uint64		bytes = (uint64) vc->nrows * vc->dims * width;

		sf->bytes_local += bytes;
		if (sf->bytes_counter)
			pg_atomic_fetch_add_u64(sf->bytes_counter, bytes);
	}
	pfree(job.rc);
}
