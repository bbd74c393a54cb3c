/*
 * ivf_build.c — CREATE INDEX ... USING warp_ivf: sample the table, run
 * k-means (pure C, on the CPU threads of warp_threads.h; the threads see
 * only the sample array), write the metapage and list pages, then assign
 * every row to its nearest list (in groups, by k-means's search on the
 * threads), filling one in-memory page per list and writing pages as they
 * fill.  Memory: the sample and the page buffers
 * each stay within half of maintenance_work_mem.
 */
#include "postgres.h"

#include "access/tableam.h"
#include "catalog/index.h"
#include "common/pg_prng.h"
#include "miscadmin.h"
#include "storage/smgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "ivf.h"
#include "warp.h"
#include "warp_kmeans.h"

/*
 * Training: up to 256 sampled rows per list (faiss's IVF default) and 20
 * Lloyd iterations.  Measured on synthetic overlapping clusters (100k x
 * 128, 316 lists), recall@10 at 1 probe: 50 rows per list and 10
 * iterations 0.55, 256 and 10 0.74, 256 and 25 0.81; the sample size is
 * the main lever.  The sample is capped by maintenance_work_mem (a NOTICE
 * says when that made it smaller).
 */
#define IVF_SAMPLES_PER_LIST	256
#define IVF_MIN_SAMPLES			10000
#define IVF_KMEANS_ITERATIONS	20

typedef struct IvfBuildState
{
	Relation	index;
	WarpVecKind kind;
	int			dims;
	int			lists;			/* requested */
	/* sampling */
	float	   *sample;
	int64		nsample;
	int64		maxsample;
	int64		seen;
	/* second scan: rows waiting for their list */
	float	   *pend_x;
	ItemPointerData *pend_tid;
	int32	   *pend_list;
	int			npend;
	int			maxpend;
	pg_prng_state prng;
	/* assignment */
	IvfCentroids cent;
	Page	   *pages;			/* per list: the page being filled, or NULL */
	int			pages_held;
	int			max_pages_held;
	double		indtuples;
	MemoryContext tmpctx;
} IvfBuildState;

/* the metapage image */
static void
fill_meta(Page page, int dims, WarpVecKind kind, int nlists)
{
	IvfMeta    *m;

	pgwarp_ivf_init_page(page, IVF_PAGE_META);
	m = IvfPageGetMeta(page);
	m->magic = IVF_MAGIC;
	m->version = IVF_VERSION;
	m->dims = dims;
	m->kind = kind;
	m->nlists = nlists;
	m->lists_per_page = (int) ((BLCKSZ - SizeOfPageHeaderData - MAXALIGN(sizeof(IvfPageOpaque))) /
							   (IVF_LIST_SIZE(dims) + sizeof(ItemIdData)));
	((PageHeader) page)->pd_lower = ((char *) m + sizeof(IvfMeta)) - (char *) page;
}

/* a list page image holding lists first.. of meta; returns the next list */
static int
fill_list_page(Page page, const IvfMeta *meta, int first, const float *c,
			   const BlockNumber *heads)
{
	Size		sz = IVF_LIST_SIZE(meta->dims);
	IvfList    *l = palloc0(sz);
	int			i;

	pgwarp_ivf_init_page(page, IVF_PAGE_LIST);
	for (i = first; i < meta->nlists && i < first + meta->lists_per_page; i++)
	{
		l->head = heads ? heads[i] : InvalidBlockNumber;
		if (meta->dims > 0)
			memcpy(l->centroid, c + (size_t) i * meta->dims, sizeof(float) * meta->dims);
		if (PageAddItem(page, (Item) l, sz, InvalidOffsetNumber, false, false) == InvalidOffsetNumber)
			elog(ERROR, "warp_ivf: list entry does not fit its page");
	}
	pfree(l);
	return i;
}

/* write `image` over buffer `buf` (exclusively locked) through generic WAL */
static void
write_image(Relation index, Buffer buf, Page image)
{
	GenericXLogState *xs = GenericXLogStart(index);
	Page		page = GenericXLogRegisterBuffer(xs, buf, GENERIC_XLOG_FULL_IMAGE);

	memcpy(page, image, BLCKSZ);
	GenericXLogFinish(xs);
}

/* the metapage and list pages; heads NULL: all lists empty */
static void
write_meta_and_lists(Relation index, const IvfMeta *meta, const float *c,
					 const BlockNumber *heads, bool extend)
{
	Page		image = palloc(BLCKSZ);
	int			i = 0;
	BlockNumber blk = IVF_FIRST_LIST_BLKNO;
	Buffer		buf;

	if (extend)
	{
		fill_meta(image, meta->dims, (WarpVecKind) meta->kind, meta->nlists);
		buf = pgwarp_ivf_new_buffer(index, MAIN_FORKNUM);
		Assert(BufferGetBlockNumber(buf) == IVF_METAPAGE_BLKNO);
		write_image(index, buf, image);
		UnlockReleaseBuffer(buf);
	}
	while (i < meta->nlists)
	{
		i = fill_list_page(image, meta, i, c, heads);
		if (extend)
			buf = pgwarp_ivf_new_buffer(index, MAIN_FORKNUM);
		else
		{
			buf = ReadBuffer(index, blk);
			LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		}
		Assert(BufferGetBlockNumber(buf) == blk);
		write_image(index, buf, image);
		UnlockReleaseBuffer(buf);
		blk++;
	}
	pfree(image);
}

static void
sample_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
				bool alive, void *arg)
{
	IvfBuildState *bs = (IvfBuildState *) arg;
	WarpVecArg	v;
	void	   *tofree;
	int64		slot;
	MemoryContext old;

	if (isnull[0])
		return;
	old = MemoryContextSwitchTo(bs->tmpctx);
	pgwarp_ivf_vector(index, values[0], bs->dims, &v, &tofree);
	MemoryContextSwitchTo(old);
	if (bs->dims == 0)
	{
		bs->dims = v.dims;
		bs->maxsample = Min(bs->maxsample,
							(int64) maintenance_work_mem * 1024L / 2 / ((int64) v.dims * sizeof(float)));
		bs->maxsample = Max(bs->maxsample, 1);
		bs->sample = MemoryContextAllocHuge(CurrentMemoryContext,
											(Size) bs->maxsample * v.dims * sizeof(float));
	}
	if (bs->kind == WARP_VEC_COSINE && !(warp_vec_norm_squared(v.x, v.dims) > 0))
		slot = -1;				/* zero vectors do not shape spherical clusters */
	else if (bs->nsample < bs->maxsample)
		slot = bs->nsample++;
	else
	{
		/* reservoir sampling: keep each of the `seen` rows with equal chance */
		slot = (int64) pg_prng_uint64_range(&bs->prng, 0, bs->seen);
		if (slot >= bs->maxsample)
			slot = -1;
	}
	if (slot >= 0)
	{
		float	   *dst = bs->sample + (size_t) slot * bs->dims;

		memcpy(dst, v.x, sizeof(float) * bs->dims);
		if (bs->kind == WARP_VEC_COSINE)
		{
			double		n = sqrt(warp_vec_norm_squared(dst, bs->dims));

			for (int d = 0; d < bs->dims; d++)
				dst[d] = (float) (dst[d] / n);
		}
	}
	bs->seen++;
	MemoryContextReset(bs->tmpctx);
}

/* write list l's in-memory page as the list's new head */
static void
flush_page(IvfBuildState *bs, int l)
{
	Page		image = bs->pages[l];
	Buffer		buf = pgwarp_ivf_new_buffer(bs->index, MAIN_FORKNUM);

	IvfPageGetOpaque(image)->next = bs->cent.head[l];
	bs->cent.head[l] = BufferGetBlockNumber(buf);
	write_image(bs->index, buf, image);
	UnlockReleaseBuffer(buf);
	pfree(image);
	bs->pages[l] = NULL;
	bs->pages_held--;
}

/* entry e (the row's TID and vector) into list l's page being filled */
static void
add_entry(IvfBuildState *bs, int l, IvfEntry *e)
{
	Size		sz = IVF_ENTRY_SIZE(bs->dims);

	if (bs->pages[l] && PageGetFreeSpace(bs->pages[l]) < sz)
		flush_page(bs, l);
	if (!bs->pages[l])
	{
		bs->pages[l] = palloc(BLCKSZ);
		pgwarp_ivf_init_page(bs->pages[l], IVF_PAGE_ENTRY);
		bs->pages_held++;
	}
	if (PageAddItem(bs->pages[l], (Item) e, sz, InvalidOffsetNumber, false, false) == InvalidOffsetNumber)
		elog(ERROR, "warp_ivf: entry does not fit an empty page");
	/* over the memory budget: this list's page goes out part-filled */
	if (bs->pages_held > bs->max_pages_held)
		flush_page(bs, l);
	bs->indtuples++;
}

/* the pending rows to their lists (k-means's search, on the CPU threads),
 * then into the pages in scan order */
static void
assign_pending(IvfBuildState *bs)
{
	Size		sz = IVF_ENTRY_SIZE(bs->dims);
	IvfEntry   *e = palloc0(sz);
	int			rc;

	if (bs->npend == 0)
		return;
	if (bs->cent.nlists == 1)
		memset(bs->pend_list, 0, sizeof(int32) * bs->npend);
	else
	{
		rc = warp_kmeans_assign(bs->pend_x, bs->npend, bs->dims, bs->cent.c, bs->cent.nlists,
								bs->kind, pgwarp_cpu_thread_count(),
								pgwarp_threads_interrupted, NULL, bs->pend_list);
		CHECK_FOR_INTERRUPTS();
		if (rc != 0)
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory assigning rows to warp_ivf lists")));
	}
	for (int i = 0; i < bs->npend; i++)
	{
		e->tid = bs->pend_tid[i];
		memcpy(e->vec, bs->pend_x + (size_t) i * bs->dims, sizeof(float) * bs->dims);
		add_entry(bs, bs->pend_list[i], e);
	}
	pfree(e);
	bs->npend = 0;
}

static void
assign_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
				bool alive, void *arg)
{
	IvfBuildState *bs = (IvfBuildState *) arg;
	WarpVecArg	v;
	void	   *tofree;
	MemoryContext old;

	if (isnull[0])
		return;
	CHECK_FOR_INTERRUPTS();
	old = MemoryContextSwitchTo(bs->tmpctx);
	pgwarp_ivf_vector(index, values[0], bs->dims, &v, &tofree);
	MemoryContextSwitchTo(old);
	memcpy(bs->pend_x + (size_t) bs->npend * bs->dims, v.x, sizeof(float) * bs->dims);
	bs->pend_tid[bs->npend++] = *tid;
	MemoryContextReset(bs->tmpctx);
	if (bs->npend == bs->maxpend)
		assign_pending(bs);
}

/* k-means over the sample: the centroids, or fewer lists for small tables */
static void
compute_centroids(IvfBuildState *bs)
{
	int			k = (int) Min((int64) bs->lists, bs->nsample);
	int			rc;

	if (k < 1)
		k = 1;
	if (k < bs->lists)
		ereport(NOTICE,
				(errmsg("warp_ivf index \"%s\" has %d lists, not %d: the table has too few rows",
						RelationGetRelationName(bs->index), k, bs->lists),
				 errhint("Recreate the index once the table holds its data.")));
	bs->cent.nlists = k;
	bs->cent.dims = bs->dims;
	bs->cent.kind = bs->kind;
	bs->cent.c = palloc0(sizeof(float) * Max(1, (Size) k * bs->dims));
	bs->cent.head = palloc(sizeof(BlockNumber) * k);
	for (int i = 0; i < k; i++)
		bs->cent.head[i] = InvalidBlockNumber;
	if (bs->nsample == 0)
		return;
	if (bs->seen > bs->nsample && bs->nsample < (int64) k * IVF_SAMPLES_PER_LIST)
		ereport(NOTICE,
				(errmsg("warp_ivf index \"%s\" trains its %d lists on %lld sampled rows, not %lld",
						RelationGetRelationName(bs->index), k, (long long) bs->nsample,
						(long long) Min((int64) k * IVF_SAMPLES_PER_LIST, (int64) bs->seen)),
				 errhint("Raise maintenance_work_mem for better lists (the sample takes at most half of it).")));
	rc = warp_kmeans(bs->sample, bs->nsample, bs->dims, k, bs->kind,
					 IVF_KMEANS_ITERATIONS, pgwarp_cpu_thread_count(), 0x5eed,
					 pgwarp_threads_interrupted, NULL, bs->cent.c);
	CHECK_FOR_INTERRUPTS();
	if (rc == -2)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory clustering %lld vectors for warp_ivf",
						(long long) bs->nsample)));
	if (rc != 0)
		elog(ERROR, "warp_ivf: k-means was interrupted");
}

IndexBuildResult *
pgwarp_ivf_build(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IvfBuildState bs;
	IvfMeta		meta;
	IndexBuildResult *res;
	double		reltuples;

	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data", RelationGetRelationName(index));
	MemSet(&bs, 0, sizeof(bs));
	bs.index = index;
	bs.kind = pgwarp_ivf_kind(index);
	bs.lists = pgwarp_ivf_lists_option(index);
	bs.maxsample = Max((int64) bs.lists * IVF_SAMPLES_PER_LIST, IVF_MIN_SAMPLES);
	bs.tmpctx = AllocSetContextCreate(CurrentMemoryContext, "warp_ivf build",
									  ALLOCSET_DEFAULT_SIZES);
	pg_prng_seed(&bs.prng, 0x1f5eedULL);

	reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
									   sample_callback, &bs, NULL);
	compute_centroids(&bs);
	if (bs.sample)
		pfree(bs.sample);

	meta.dims = bs.dims;
	meta.kind = bs.kind;
	meta.nlists = bs.cent.nlists;
	{
		Page		tmp = palloc(BLCKSZ);

		fill_meta(tmp, bs.dims, bs.kind, bs.cent.nlists);
		meta = *IvfPageGetMeta(tmp);
		pfree(tmp);
	}
	write_meta_and_lists(index, &meta, bs.cent.c, NULL, true);

	if (bs.dims > 0)
	{
		bs.pages = palloc0(sizeof(Page) * bs.cent.nlists);
		bs.max_pages_held = Max(1, (int) ((int64) maintenance_work_mem * 1024L / 2 / BLCKSZ));
		/* rows are assigned in groups of up to 1 MB of vectors */
		bs.maxpend = Max(64, (1024 * 1024) / (bs.dims * (int) sizeof(float)));
		bs.pend_x = palloc(sizeof(float) * (Size) bs.maxpend * bs.dims);
		bs.pend_tid = palloc(sizeof(ItemPointerData) * bs.maxpend);
		bs.pend_list = palloc(sizeof(int32) * bs.maxpend);
		table_index_build_scan(heap, index, indexInfo, true, true,
							   assign_callback, &bs, NULL);
		assign_pending(&bs);
		for (int l = 0; l < bs.cent.nlists; l++)
			if (bs.pages[l])
				flush_page(&bs, l);
		write_meta_and_lists(index, &meta, bs.cent.c, bs.cent.head, false);
	}

	res = palloc(sizeof(IndexBuildResult));
	res->heap_tuples = reltuples;
	res->index_tuples = bs.indtuples;
	MemoryContextDelete(bs.tmpctx);
	return res;
}

/* the init fork of an unlogged index: an empty index of one list */
void
pgwarp_ivf_buildempty(Relation index)
{
	Page		page = palloc(BLCKSZ);
	IvfMeta		meta;
	BlockNumber blk;

	fill_meta(page, 0, pgwarp_ivf_kind(index), 1);
	meta = *IvfPageGetMeta(page);
	for (blk = 0; blk <= IVF_FIRST_LIST_BLKNO; blk++)
	{
		if (blk == IVF_FIRST_LIST_BLKNO)
			fill_list_page(page, &meta, 0, NULL, NULL);
		PageSetChecksumInplace(page, blk);
		smgrwrite(RelationGetSmgr(index), INIT_FORKNUM, blk, (char *) page, true);
		log_newpage(&(RelationGetSmgr(index))->smgr_rnode.node, INIT_FORKNUM, blk,
					page, true);
	}
	smgrimmedsync(RelationGetSmgr(index), INIT_FORKNUM);
	pfree(page);
}
