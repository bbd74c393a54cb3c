/*
 * tcache_query.c — whether a query may read an attached table's GPU table
 * cache, and what it sends along: the replica's identity and the classes
 * of the replica's transactions under the query's snapshot.
 *
 * The daemon answers with its transaction dictionary (entry -> xid); each
 * entry is classified here in HeapTupleSatisfiesMVCC's order (current
 * transaction, in the snapshot, committed: warp_visibility.h), and the
 * daemon decides each version's visibility with those classes and the
 * snapshot's command id.  Entries before the horizon of every running
 * snapshot are also marked settled (committed or aborted for all), which
 * the daemon folds away after the query: the dictionary stays as small as
 * the set of recent writers.
 *
 * What cannot be answered exactly, and so runs on PostgreSQL's table AM
 * (EXPLAIN ANALYZE says why): serializable transactions (no predicate
 * lock would be taken), a hot standby, a table created or rewritten by the
 * running transaction (its relfilenode is not the replica's), a replica
 * loading in another session or broken, the daemon gone.  A missing or
 * stale replica (never loaded, daemon restarted, TRUNCATE, ALTER TABLE, a
 * change that could not be shipped) is loaded by the query that finds it.
 */
#include "postgres.h"

#include "access/table.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "storage/procarray.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"

#include "pg_warp.h"
#include "tcache/tcache.h"
#include "warp_visibility.h"

bool
tcache_plan_usable(Oid relid)
{
	Relation	rel;
	bool		ok;

	if (!pgwarp_gpu_table_cache || !tcache_preloaded() || pgwarp_gpud_device == PGWARP_GPUD_OFF)
		return false;
	rel = table_open(relid, NoLock);
	ok = tcache_attached(rel);
	table_close(rel, NoLock);
	return ok;
}

/* the daemon's state and dictionary for key; NULL with *why */
static GpudCacheResp *
fetch_xids(Relation rel, const TcacheLayout *lay, const GpudCacheKey *key, char *why,
		   size_t whylen)
{
	GpudCacheReq req;
	GpudCacheResp *resp;
	uint64		rlen;

	tcache_fill_request(&req, GPUD_CACHE_XIDS, rel, lay, key);
	/* every change our snapshot may see was logged before this position */
	req.ring_upto = tcache_ring_head();
	resp = pgwarp_gpud_cache_request(&req, NULL, NULL, 0, &rlen, why, whylen);
	if (resp == NULL)
		return NULL;
	resp->why[sizeof(resp->why) - 1] = '\0';
	if (resp->state == GPUD_CACHE_READY &&
		(resp->nxids < WARP_XIDX_FIRST || resp->off_xids > rlen ||
		 (uint64) resp->nxids * 4 > rlen - resp->off_xids))
	{
		snprintf(why, whylen, "pg_warp_gpud sent a malformed dictionary");
		return NULL;
	}
	return resp;
}

/* the classes of the dictionary's entries under snapshot */
static uint8 *
classify(Relation rel, Snapshot snapshot, const uint32 *xids, uint32 n, char *why,
		 size_t whylen)
{
	uint8	   *cls = palloc(Max(n, 1));
	TransactionId horizon = GetOldestNonRemovableTransactionId(rel);
	TransactionId oldest_clog;
	uint32		i;

	LWLockAcquire(XactTruncationLock, LW_SHARED);
	oldest_clog = ShmemVariableCache->oldestClogXid;
	LWLockRelease(XactTruncationLock);
	cls[WARP_XIDX_FROZEN] = WARP_XID_COMMITTED;
	cls[WARP_XIDX_NONE] = WARP_XID_INVISIBLE;
	for (i = WARP_XIDX_FIRST; i < n; i++)
	{
		TransactionId x = xids[i];

		if (!TransactionIdIsNormal(x) || TransactionIdPrecedes(x, oldest_clog))
		{
			snprintf(why, whylen, "the cache holds transactions older than the commit log");
			return NULL;
		}
		if (TransactionIdIsCurrentTransactionId(x))
			cls[i] = WARP_XID_CURRENT;
		else if (XidInMVCCSnapshot(x, snapshot))
			cls[i] = WARP_XID_INVISIBLE;
		else if (TransactionIdDidCommit(x))
			cls[i] = WARP_XID_COMMITTED;
		else
			cls[i] = WARP_XID_INVISIBLE;
		if (TransactionIdPrecedes(x, horizon))
		{
			/* no snapshot, now or later, sees it running */
			if (cls[i] == WARP_XID_COMMITTED)
				cls[i] |= WARP_XID_ALL_COMMITTED;
			else if (!TransactionIdIsInProgress(x))
				cls[i] |= WARP_XID_ALL_ABORTED;
		}
	}
	return cls;
}

/* ask the daemon to forget rel's replica */
static void
drop_replica(Relation rel, const GpudCacheKey *key)
{
	GpudCacheReq req;
	uint64		rlen;
	char		why[256];

	tcache_fill_request(&req, GPUD_CACHE_DROP, rel, NULL, key);
	(void) pgwarp_gpud_cache_request(&req, NULL, NULL, 0, &rlen, why, sizeof(why));
}

bool
tcache_prepare(Relation rel, Snapshot snapshot, int ncols, const AttrNumber *attnos,
			   const bool *isfloat, GpudClientCached *out, bool *loaded, char *why,
			   size_t whylen)
{
	TcacheLayout lay;
	GpudCacheKey key;
	GpudCacheResp *resp;
	int32	   *cols = palloc(sizeof(int32) * Max(ncols, 1));
	uint8	   *cls;
	int			c;

#define REFUSE(...) do { snprintf(why, whylen, __VA_ARGS__); return false; } while (0)
	if (!pgwarp_gpu_table_cache)
		REFUSE("pg_warp.gpu_table_cache is off");
	if (!tcache_preloaded())
		REFUSE("pg_warp is not in shared_preload_libraries");
	if (RecoveryInProgress())
		REFUSE("hot standby");
	if (IsolationIsSerializable())
		REFUSE("serializable transaction");
	if (snapshot == NULL || !IsMVCCSnapshot(snapshot))
		REFUSE("not an MVCC snapshot");
	if (rel->rd_createSubid != InvalidSubTransactionId ||
		rel->rd_firstRelfilenodeSubid != InvalidSubTransactionId)
		REFUSE("table created or rewritten in this transaction");
	if (!tcache_attached(rel))
		REFUSE("table not attached");
	tcache_layout(RelationGetDescr(rel), &lay);
	for (c = 0; c < ncols; c++)
	{
		int			k = attnos[c] > 0 && attnos[c] <= lay.natts ? lay.col_of_att[attnos[c]] : -1;

		if (k < 0 || (lay.kinds[k] == GPUD_CACHE_COL_DOUBLE) != isfloat[c])
			REFUSE("column \"%s\" is not cached",
				   get_attname(RelationGetRelid(rel), attnos[c], false));
		cols[c] = k;
	}

	/* this transaction's own changes first */
	tcache_flush_all();
	tcache_make_key(rel, &lay, &key);
	if ((resp = fetch_xids(rel, &lay, &key, why, whylen)) == NULL)
		return false;
	if (resp->state == GPUD_CACHE_ABSENT || resp->state == GPUD_CACHE_BROKEN)
	{
		if (!tcache_load(rel, &lay, &key, why, whylen))
			return false;
		*loaded = true;
		if ((resp = fetch_xids(rel, &lay, &key, why, whylen)) == NULL)
			return false;
	}
	if (resp->state == GPUD_CACHE_LOADING)
		REFUSE("loading in another session");
	if (resp->state != GPUD_CACHE_READY)
		REFUSE("%s", resp->why[0] ? resp->why : "not loaded");
	cls = classify(rel, snapshot, (const uint32 *) ((const char *) resp + resp->off_xids),
				   resp->nxids, why, whylen);
	if (cls == NULL)
	{
		drop_replica(rel, &key);
		return false;
	}
	out->key = key;
	out->curcid = snapshot->curcid;
	out->dict_epoch = resp->dict_epoch;
	out->nclasses = resp->nxids;
	out->classes = cls;
	out->cols = cols;
	return true;
#undef REFUSE
}
