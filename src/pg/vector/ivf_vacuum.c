/*
 * ivf_vacuum.c — VACUUM of a warp_ivf index (entries of dead rows removed
 * page by page through generic WAL), the cleanup statistics, and
 * pg_warp_ivf_check(index), a consistency check of the whole index.
 */
#include "postgres.h"

#include "access/relscan.h"
#include "catalog/index.h"
#include "commands/vacuum.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/builtins.h"
#include "utils/rel.h"

#include "ivf.h"

PG_FUNCTION_INFO_V1(pg_warp_ivf_check);

/* remove the entries `callback` reports dead from one page */
static BlockNumber
vacuum_page(Relation index, BlockNumber blk, IndexBulkDeleteResult *stats,
			IndexBulkDeleteCallback callback, void *cstate)
{
	Buffer		buf = ReadBuffer(index, blk);
	GenericXLogState *xs;
	Page		page;
	OffsetNumber dead[MaxOffsetNumber];
	int			ndead = 0;
	BlockNumber next;

	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	pgwarp_ivf_check_page(index, BufferGetPage(buf), blk, IVF_PAGE_ENTRY);
	xs = GenericXLogStart(index);
	page = GenericXLogRegisterBuffer(xs, buf, 0);
	for (OffsetNumber off = FirstOffsetNumber; off <= PageGetMaxOffsetNumber(page); off++)
	{
		ItemId		iid = PageGetItemId(page, off);
		IvfEntry   *e;

		if (!ItemIdIsNormal(iid))
			continue;
		e = (IvfEntry *) PageGetItem(page, iid);
		if (callback(&e->tid, cstate))
		{
			dead[ndead++] = off;
			stats->tuples_removed++;
		}
		else
			stats->num_index_tuples++;
	}
	next = IvfPageGetOpaque(page)->next;
	if (ndead > 0)
	{
		PageIndexMultiDelete(page, dead, ndead);
		GenericXLogFinish(xs);
	}
	else
		GenericXLogAbort(xs);
	UnlockReleaseBuffer(buf);
	return next;
}

IndexBulkDeleteResult *
pgwarp_ivf_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
					  IndexBulkDeleteCallback callback, void *callback_state)
{
	Relation	index = info->index;
	IvfMeta		meta;
	IvfCentroids cent;

	if (stats == NULL)
		stats = palloc0(sizeof(IndexBulkDeleteResult));
	stats->num_index_tuples = 0;
	pgwarp_ivf_read_meta(index, &meta);
	pgwarp_ivf_read_centroids(index, &meta, &cent);
	for (int l = 0; l < cent.nlists; l++)
	{
		BlockNumber blk = cent.head[l];

		while (blk != InvalidBlockNumber)
		{
			vacuum_delay_point();
			blk = vacuum_page(index, blk, stats, callback, callback_state);
		}
	}
	stats->num_pages = RelationGetNumberOfBlocks(index);
	return stats;
}

/* entries and pages counted by walking every list; *pages_out the entry
 * pages met.  Raises index_corrupted for a page met twice or foreign. */
static int64
walk_lists(Relation index, const IvfMeta *meta, int64 *pages_out)
{
	IvfCentroids cent;
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	bool	   *seen = palloc0(Max(1, nblocks));
	int64		n = 0,
				pages = 0;

	pgwarp_ivf_read_centroids(index, meta, &cent);
	for (int l = 0; l < cent.nlists; l++)
	{
		BlockNumber blk = cent.head[l];

		while (blk != InvalidBlockNumber)
		{
			Buffer		buf;
			Page		page;

			CHECK_FOR_INTERRUPTS();
			if (blk >= nblocks || blk <= IVF_FIRST_LIST_BLKNO - 1 || seen[blk])
				ereport(ERROR,
						(errcode(ERRCODE_INDEX_CORRUPTED),
						 errmsg("warp_ivf index \"%s\": list %d reaches block %u twice or out of range",
								RelationGetRelationName(index), l, blk)));
			seen[blk] = true;
			buf = ReadBuffer(index, blk);
			LockBuffer(buf, BUFFER_LOCK_SHARE);
			page = BufferGetPage(buf);
			pgwarp_ivf_check_page(index, page, blk, IVF_PAGE_ENTRY);
			for (OffsetNumber off = FirstOffsetNumber; off <= PageGetMaxOffsetNumber(page); off++)
			{
				ItemId		iid = PageGetItemId(page, off);

				if (!ItemIdIsNormal(iid))
					continue;
				if (ItemIdGetLength(iid) != IVF_ENTRY_SIZE(meta->dims))
					ereport(ERROR,
							(errcode(ERRCODE_INDEX_CORRUPTED),
							 errmsg("warp_ivf index \"%s\": entry of %u bytes at block %u, expected %zu",
									RelationGetRelationName(index), ItemIdGetLength(iid),
									blk, IVF_ENTRY_SIZE(meta->dims))));
				if (!ItemPointerIsValid(&((IvfEntry *) PageGetItem(page, iid))->tid))
					ereport(ERROR,
							(errcode(ERRCODE_INDEX_CORRUPTED),
							 errmsg("warp_ivf index \"%s\": invalid heap TID at block %u",
									RelationGetRelationName(index), blk)));
				n++;
			}
			blk = IvfPageGetOpaque(page)->next;
			UnlockReleaseBuffer(buf);
			pages++;
		}
	}
	pfree(seen);
	*pages_out = pages;
	return n;
}

IndexBulkDeleteResult *
pgwarp_ivf_vacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	IvfMeta		meta;
	int64		pages;

	if (info->analyze_only)
		return stats;
	if (stats == NULL)
	{
		stats = palloc0(sizeof(IndexBulkDeleteResult));
		pgwarp_ivf_read_meta(info->index, &meta);
		stats->num_index_tuples = walk_lists(info->index, &meta, &pages);
	}
	stats->num_pages = RelationGetNumberOfBlocks(info->index);
	stats->estimated_count = false;
	return stats;
}

/* pg_warp_ivf_check(index regclass, OUT lists, OUT dims, OUT pages, OUT entries) */
Datum
pg_warp_ivf_check(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	index;
	IvfMeta		meta;
	int64		pages,
				n;
	TupleDesc	tupdesc;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	index = index_open(relid, AccessShareLock);
	if (index->rd_indam == NULL || index->rd_indam->ambuild != pgwarp_ivf_build)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a warp_ivf index", RelationGetRelationName(index))));
	pgwarp_ivf_read_meta(index, &meta);
	if (meta.kind != pgwarp_ivf_kind(index))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("warp_ivf index \"%s\": metapage distance kind %d does not match its operator class",
						RelationGetRelationName(index), meta.kind)));
	n = walk_lists(index, &meta, &pages);
	index_close(index, AccessShareLock);
	values[0] = Int32GetDatum(meta.nlists);
	values[1] = Int32GetDatum(meta.dims);
	values[2] = Int64GetDatum(pages);
	values[3] = Int64GetDatum(n);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
