/*
 * ivf_pages.c — warp_ivf page helpers: new pages, the metapage, the list
 * pages read into memory, page sanity checks, and index values as vectors.
 */
#include "postgres.h"

#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/rel.h"

#include "ivf.h"
#include "warp_kmeans.h"

void
pgwarp_ivf_init_page(Page page, uint16 flags)
{
	IvfPageOpaque *op;

	PageInit(page, BLCKSZ, sizeof(IvfPageOpaque));
	op = IvfPageGetOpaque(page);
	op->next = InvalidBlockNumber;
	op->flags = flags;
	op->page_id = IVF_PAGE_ID;
}

/* a new page at the end of the fork, pinned and exclusively locked */
Buffer
pgwarp_ivf_new_buffer(Relation index, ForkNumber fork)
{
	Buffer		buf;
	bool		needLock = !RELATION_IS_LOCAL(index);

	if (needLock)
		LockRelationForExtension(index, ExclusiveLock);
	buf = ReadBufferExtended(index, fork, P_NEW, RBM_NORMAL, NULL);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	if (needLock)
		UnlockRelationForExtension(index, ExclusiveLock);
	return buf;
}

/* raise index_corrupted unless `page` is one of ours of kind `flags` */
void
pgwarp_ivf_check_page(Relation index, Page page, BlockNumber blk, uint16 flags)
{
	IvfPageOpaque *op;

	if (PageIsNew(page) || PageGetSpecialSize(page) != MAXALIGN(sizeof(IvfPageOpaque)))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("warp_ivf index \"%s\" has a bad page at block %u",
						RelationGetRelationName(index), blk)));
	op = IvfPageGetOpaque(page);
	if (op->page_id != IVF_PAGE_ID || (op->flags & flags) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("warp_ivf index \"%s\" has a page of the wrong kind at block %u",
						RelationGetRelationName(index), blk)));
}

void
pgwarp_ivf_read_meta(Relation index, IvfMeta *meta)
{
	Buffer		buf = ReadBuffer(index, IVF_METAPAGE_BLKNO);
	Page		page;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	pgwarp_ivf_check_page(index, page, IVF_METAPAGE_BLKNO, IVF_PAGE_META);
	*meta = *IvfPageGetMeta(page);
	UnlockReleaseBuffer(buf);
	if (meta->magic != IVF_MAGIC || meta->version != IVF_VERSION ||
		meta->nlists < 1 || meta->lists_per_page < 1 ||
		meta->dims < 0 || meta->dims > IVF_MAX_DIMS)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("warp_ivf index \"%s\" has a bad metapage",
						RelationGetRelationName(index))));
}

/* every list's centroid and head, read under share locks */
void
pgwarp_ivf_read_centroids(Relation index, const IvfMeta *meta, IvfCentroids *out)
{
	int			i = 0;

	out->nlists = meta->nlists;
	out->dims = meta->dims;
	out->kind = (WarpVecKind) meta->kind;
	out->c = palloc(sizeof(float) * Max(1, (Size) meta->nlists * meta->dims));
	out->head = palloc(sizeof(BlockNumber) * meta->nlists);
	while (i < meta->nlists)
	{
		BlockNumber blk = IvfListBlock(meta, i);
		Buffer		buf = ReadBuffer(index, blk);
		Page		page;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		pgwarp_ivf_check_page(index, page, blk, IVF_PAGE_LIST);
		for (; i < meta->nlists && IvfListBlock(meta, i) == blk; i++)
		{
			OffsetNumber off = IvfListOffset(meta, i);
			IvfList    *l;

			if (off > PageGetMaxOffsetNumber(page))
				ereport(ERROR,
						(errcode(ERRCODE_INDEX_CORRUPTED),
						 errmsg("warp_ivf index \"%s\" lacks list %d",
								RelationGetRelationName(index), i)));
			l = (IvfList *) PageGetItem(page, PageGetItemId(page, off));
			out->head[i] = l->head;
			memcpy(out->c + (size_t) i * meta->dims, l->centroid,
				   sizeof(float) * meta->dims);
		}
		UnlockReleaseBuffer(buf);
	}
}

int
pgwarp_ivf_nearest_list(const IvfCentroids *c, const float *v)
{
	if (c->nlists == 1 || c->dims == 0)
		return 0;
	return warp_kmeans_nearest(c->c, NULL, c->nlists, c->dims, c->kind, v);
}

/*
 * An indexed value as a vector (detoasted; *tofree is what to pfree, or
 * NULL), checked against the index's dimensions when those are known.
 */
void
pgwarp_ivf_vector(Relation index, Datum value, int dims_expected,
				  WarpVecArg *out, void **tofree)
{
	struct varlena *raw = (struct varlena *) DatumGetPointer(value);
	ArrayType  *a = DatumGetArrayTypeP(value);

	*tofree = (Pointer) a != (Pointer) raw ? a : NULL;
	pgwarp_vec_from_array(a, out);
	if (out->dims > IVF_MAX_DIMS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("warp_ivf indexes vectors of at most %d dimensions, not %d",
						IVF_MAX_DIMS, out->dims)));
	if (dims_expected > 0)
		pgwarp_vec_check_dims(dims_expected, out->dims);
}
