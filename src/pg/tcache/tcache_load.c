/*
 * tcache_load.c — loading a GPU table cache replica from a heap table's
 * pages.
 *
 * The daemon is told first (LOAD_BEGIN): from then on it holds the row
 * changes backends ship for the table.  Then every page is read under its
 * share lock, every version on it that some snapshot may still see sent
 * with its header's transactions (tcache_version_rec), in requests of a
 * few megabytes.  LOAD_END applies the held changes over the scan: a
 * change the scan already saw sets again what the scan set, and any later
 * one follows it (gpud_tcache_store.c explains why that is exact).  The
 * page count is read after LOAD_BEGIN, so a page added later only holds
 * versions whose records are held.
 *
 * Loading needs only AccessShareLock: writers go on meanwhile, and
 * queries of other sessions fall back to PostgreSQL's plans until the
 * replica is ready.
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/transam.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/procarray.h"
#include "utils/rel.h"

#include "tcache/tcache.h"

#define LOAD_BYTES	(8 << 20)

/* send the rows in buf (nrecs of them) or end the load; false with *why */
static bool
load_send(Relation rel, const TcacheLayout *lay, const GpudCacheKey *key, uint64 token,
		  int op, StringInfo buf, int64 nrecs, char *why, size_t whylen)
{
	GpudCacheReq req;
	GpudCacheResp *resp;
	uint64		rlen;

	tcache_fill_request(&req, op, rel, lay, key);
	req.load_token = token;
	req.nrecs = nrecs;
	resp = pgwarp_gpud_cache_request(&req, NULL, buf ? buf->data : NULL, buf ? buf->len : 0,
									 &rlen, why, whylen);
	if (buf)
		resetStringInfo(buf);
	if (resp == NULL)
		return false;
	if (resp->state != (op == GPUD_CACHE_LOAD_END ? GPUD_CACHE_READY : GPUD_CACHE_LOADING))
	{
		resp->why[sizeof(resp->why) - 1] = '\0';
		snprintf(why, whylen, "%s", resp->why[0] ? resp->why : "loading failed");
		return false;
	}
	return true;
}

bool
tcache_load(Relation rel, const TcacheLayout *lay, const GpudCacheKey *key,
			char *why, size_t whylen)
{
	GpudCacheReq req;
	GpudCacheResp *resp;
	uint64		rlen,
				token;
	BlockNumber nblocks,
				blk;
	BufferAccessStrategy strategy = GetAccessStrategy(BAS_BULKREAD);
	TransactionId horizon;
	TupleDesc	desc = RelationGetDescr(rel);
	Datum	   *values = palloc(sizeof(Datum) * Max(desc->natts, 1));
	bool	   *isnull = palloc(sizeof(bool) * Max(desc->natts, 1));
	StringInfoData buf;
	int64		nrecs = 0;

	tcache_fill_request(&req, GPUD_CACHE_LOAD_BEGIN, rel, lay, key);
	resp = pgwarp_gpud_cache_request(&req, lay->kinds, NULL, 0, &rlen, why, whylen);
	if (resp == NULL)
		return false;
	if (resp->state != GPUD_CACHE_LOADING)
	{
		resp->why[sizeof(resp->why) - 1] = '\0';
		snprintf(why, whylen, "%s", resp->why);
		return false;
	}
	token = resp->load_token;

	horizon = GetOldestNonRemovableTransactionId(rel);
	nblocks = RelationGetNumberOfBlocks(rel);
	initStringInfo(&buf);
	for (blk = 0; blk < nblocks; blk++)
	{
		Buffer		b;
		Page		page;
		OffsetNumber off,
					maxoff;

		CHECK_FOR_INTERRUPTS();
		b = ReadBufferExtended(rel, MAIN_FORKNUM, blk, RBM_NORMAL, strategy);
		LockBuffer(b, BUFFER_LOCK_SHARE);
		page = BufferGetPage(b);
		maxoff = PageGetMaxOffsetNumber(page);
		for (off = FirstOffsetNumber; off <= maxoff; off++)
		{
			ItemId		id = PageGetItemId(page, off);
			HeapTupleData tup;
			GpudCacheRec rec;

			if (!ItemIdIsNormal(id))
				continue;
			tup.t_data = (HeapTupleHeader) PageGetItem(page, id);
			tup.t_len = ItemIdGetLength(id);
			tup.t_tableOid = RelationGetRelid(rel);
			ItemPointerSet(&tup.t_self, blk, off);
			if (!tcache_version_rec(tup.t_data, horizon, &rec))
				continue;
			rec.block = blk;
			rec.offset = off;
			tcache_append_insert(&buf, &rec, lay, desc, &tup, values, isnull);
			nrecs++;
		}
		UnlockReleaseBuffer(b);
		if (buf.len >= LOAD_BYTES)
		{
			if (!load_send(rel, lay, key, token, GPUD_CACHE_LOAD_ROWS, &buf, nrecs, why, whylen))
				return false;
			nrecs = 0;
		}
	}
	if (nrecs > 0 &&
		!load_send(rel, lay, key, token, GPUD_CACHE_LOAD_ROWS, &buf, nrecs, why, whylen))
		return false;
	FreeAccessStrategy(strategy);
	return load_send(rel, lay, key, token, GPUD_CACHE_LOAD_END, NULL, 0, why, whylen);
}
