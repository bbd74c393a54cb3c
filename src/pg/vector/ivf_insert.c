/*
 * ivf_insert.c — a new row into a warp_ivf index: into the head page of
 * the list whose centroid is nearest, or into a new head page chained in
 * front of it when the head is full.
 *
 * Locking: the list page holding the list's entry is locked exclusively
 * while a new head is linked in, so two inserters cannot both extend the
 * same list; filling an existing head only locks that page.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "ivf.h"

/* the first vector of an index built empty fixes its dimensions */
static void
set_dims(Relation index, int dims)
{
	Buffer		buf = ReadBuffer(index, IVF_METAPAGE_BLKNO);
	GenericXLogState *xs;
	IvfMeta    *m;

	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	xs = GenericXLogStart(index);
	m = IvfPageGetMeta(GenericXLogRegisterBuffer(xs, buf, 0));
	if (m->dims == 0)
	{
		if (m->nlists != 1)
			elog(ERROR, "warp_ivf: index without dimensions has %d lists", m->nlists);
		m->dims = dims;
		GenericXLogFinish(xs);
	}
	else
	{
		GenericXLogAbort(xs);
		pgwarp_vec_check_dims(m->dims, dims);
	}
	UnlockReleaseBuffer(buf);
}

/* add `e` to the head page `blk` if it has room; false otherwise */
static bool
add_to_page(Relation index, BlockNumber blk, IvfEntry *e, Size sz)
{
	Buffer		buf;
	GenericXLogState *xs;
	Page		page;
	bool		done = false;

	if (blk == InvalidBlockNumber)
		return false;
	buf = ReadBuffer(index, blk);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	pgwarp_ivf_check_page(index, BufferGetPage(buf), blk, IVF_PAGE_ENTRY);
	if (PageGetFreeSpace(BufferGetPage(buf)) >= sz)
	{
		xs = GenericXLogStart(index);
		page = GenericXLogRegisterBuffer(xs, buf, 0);
		if (PageAddItem(page, (Item) e, sz, InvalidOffsetNumber, false, false) == InvalidOffsetNumber)
			elog(ERROR, "warp_ivf: failed to add an entry to block %u", blk);
		GenericXLogFinish(xs);
		done = true;
	}
	UnlockReleaseBuffer(buf);
	return done;
}

/*
 * Link a new head page holding `e` in front of list `l`, unless another
 * backend changed the head meanwhile (then false: try the new head).
 */
static bool
add_new_head(Relation index, const IvfMeta *meta, int l, BlockNumber seen_head,
			 IvfEntry *e, Size sz)
{
	BlockNumber lblk = IvfListBlock(meta, l);
	Buffer		lbuf = ReadBuffer(index, lblk);
	Buffer		nbuf;
	GenericXLogState *xs;
	Page		lpage,
				npage;
	IvfList    *list;

	LockBuffer(lbuf, BUFFER_LOCK_EXCLUSIVE);
	pgwarp_ivf_check_page(index, BufferGetPage(lbuf), lblk, IVF_PAGE_LIST);
	list = (IvfList *) PageGetItem(BufferGetPage(lbuf),
								   PageGetItemId(BufferGetPage(lbuf), IvfListOffset(meta, l)));
	if (list->head != seen_head)
	{
		UnlockReleaseBuffer(lbuf);
		return false;
	}
	nbuf = pgwarp_ivf_new_buffer(index, MAIN_FORKNUM);
	xs = GenericXLogStart(index);
	lpage = GenericXLogRegisterBuffer(xs, lbuf, 0);
	npage = GenericXLogRegisterBuffer(xs, nbuf, GENERIC_XLOG_FULL_IMAGE);
	pgwarp_ivf_init_page(npage, IVF_PAGE_ENTRY);
	IvfPageGetOpaque(npage)->next = seen_head;
	if (PageAddItem(npage, (Item) e, sz, InvalidOffsetNumber, false, false) == InvalidOffsetNumber)
		elog(ERROR, "warp_ivf: entry does not fit an empty page");
	list = (IvfList *) PageGetItem(lpage, PageGetItemId(lpage, IvfListOffset(meta, l)));
	list->head = BufferGetBlockNumber(nbuf);
	GenericXLogFinish(xs);
	UnlockReleaseBuffer(nbuf);
	UnlockReleaseBuffer(lbuf);
	return true;
}

bool
pgwarp_ivf_insert(Relation index, Datum *values, bool *isnull,
				  ItemPointer heap_tid, Relation heap,
				  IndexUniqueCheck checkUnique, bool indexUnchanged,
				  IndexInfo *indexInfo)
{
	MemoryContext ctx,
				old;
	IvfMeta		meta;
	IvfCentroids cent;
	WarpVecArg	v;
	void	   *tofree;
	IvfEntry   *e;
	Size		sz;
	int			l;

	if (isnull[0])
		return false;			/* NULL vectors are not indexed */
	ctx = AllocSetContextCreate(CurrentMemoryContext, "warp_ivf insert",
								ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(ctx);

	pgwarp_ivf_read_meta(index, &meta);
	pgwarp_ivf_vector(index, values[0], meta.dims, &v, &tofree);
	if (meta.dims == 0)
	{
		set_dims(index, v.dims);
		pgwarp_ivf_read_meta(index, &meta);
	}
	sz = IVF_ENTRY_SIZE(meta.dims);
	e = palloc0(sz);
	e->tid = *heap_tid;
	memcpy(e->vec, v.x, sizeof(float) * meta.dims);

	pgwarp_ivf_read_centroids(index, &meta, &cent);
	l = pgwarp_ivf_nearest_list(&cent, v.x);
	for (;;)
	{
		BlockNumber head;

		CHECK_FOR_INTERRUPTS();
		if (add_to_page(index, cent.head[l], e, sz))
			break;
		head = cent.head[l];
		if (add_new_head(index, &meta, l, head, e, sz))
			break;
		/* someone linked a new head: read the lists again and retry */
		pgwarp_ivf_read_centroids(index, &meta, &cent);
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(ctx);
	return false;
}
