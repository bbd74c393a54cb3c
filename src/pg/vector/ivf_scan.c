/*
 * ivf_scan.c — the ordered warp_ivf index scan: ORDER BY vec <op> query.
 *
 * On the first amgettuple the query's distance to every centroid picks the
 * pg_warp.ivf_probes nearest lists; every entry of those lists is scored
 * (warp_vector.h, the same function the operator runs) and sorted by
 * (distance, the order the scan met it); rows then come out nearest first.
 * NaN distances (cosine with a zero vector) sort last, as PostgreSQL sorts
 * NaN after every number.  The distances are exact; the answer is
 * approximate only in that lists not probed are not looked at.
 */
#include "postgres.h"

#include "access/relscan.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "ivf.h"

typedef struct IvfHit
{
	double		dist;
	int64		seq;			/* scan order: ties keep it */
	ItemPointerData tid;
} IvfHit;

typedef struct IvfScanState
{
	MemoryContext ctx;			/* reset per rescan */
	bool		started;
	bool		null_query;
	float	   *query;
	int			qdims;
	IvfHit	   *hits;
	int64		nhits;
	int64		maxhits;
	int64		next;
	WarpVecKind kind;
} IvfScanState;

typedef struct ListDist
{
	double		dist;
	int			list;
} ListDist;

static int
cmp_double_nan_last(double a, double b)
{
	if (isnan(a))
		return isnan(b) ? 0 : 1;
	if (isnan(b))
		return -1;
	return a < b ? -1 : (a > b ? 1 : 0);
}

static int
cmp_listdist(const void *pa, const void *pb)
{
	const ListDist *a = pa,
			   *b = pb;
	int			c = cmp_double_nan_last(a->dist, b->dist);

	return c ? c : (a->list < b->list ? -1 : a->list > b->list);
}

static int
cmp_hit(const void *pa, const void *pb)
{
	const IvfHit *a = pa,
			   *b = pb;
	int			c = cmp_double_nan_last(a->dist, b->dist);

	return c ? c : (a->seq < b->seq ? -1 : a->seq > b->seq);
}

IndexScanDesc
pgwarp_ivf_beginscan(Relation index, int nkeys, int norderbys)
{
	IndexScanDesc scan = RelationGetIndexScan(index, nkeys, norderbys);
	IvfScanState *st = palloc0(sizeof(IvfScanState));

	st->ctx = AllocSetContextCreate(CurrentMemoryContext, "warp_ivf scan",
									ALLOCSET_DEFAULT_SIZES);
	st->kind = pgwarp_ivf_kind(index);
	scan->opaque = st;
	return scan;
}

void
pgwarp_ivf_rescan(IndexScanDesc scan, ScanKey keys, int nkeys,
				  ScanKey orderbys, int norderbys)
{
	IvfScanState *st = (IvfScanState *) scan->opaque;

	MemoryContextReset(st->ctx);
	st->started = false;
	st->hits = NULL;
	st->nhits = st->maxhits = st->next = 0;
	st->query = NULL;
	if (orderbys && scan->numberOfOrderBys > 0)
		memmove(scan->orderByData, orderbys, scan->numberOfOrderBys * sizeof(ScanKeyData));
	if (keys && scan->numberOfKeys > 0)
		memmove(scan->keyData, keys, scan->numberOfKeys * sizeof(ScanKeyData));
}

/* the query vector, copied into the scan's context */
static void
load_query(IndexScanDesc scan, IvfScanState *st, const IvfMeta *meta)
{
	ScanKey		key = &scan->orderByData[0];
	WarpVecArg	v;
	void	   *tofree;

	st->null_query = scan->numberOfOrderBys == 0 || (key->sk_flags & SK_ISNULL);
	if (st->null_query)
		return;
	pgwarp_ivf_vector(scan->indexRelation, key->sk_argument, meta->dims, &v, &tofree);
	st->qdims = v.dims;
	st->query = palloc(sizeof(float) * v.dims);
	memcpy(st->query, v.x, sizeof(float) * v.dims);
}

/* the lists to read: the probes nearest centroids (or the first ones when
 * the query is NULL: every distance is NULL then, any order is right) */
static int
choose_lists(IvfScanState *st, const IvfCentroids *cent, int *lists)
{
	int			probes = Min(pgwarp_ivf_probes, cent->nlists);
	ListDist   *ld = palloc(sizeof(ListDist) * cent->nlists);
	double		qn = -1.0;

	if (!st->null_query && st->kind == WARP_VEC_COSINE)
		qn = warp_vec_cpu_dot(st->query, st->query, cent->dims);
	for (int i = 0; i < cent->nlists; i++)
	{
		ld[i].list = i;
		ld[i].dist = st->null_query || cent->dims == 0 ? 0.0 :
			warp_vec_cpu_distance(st->kind, cent->c + (size_t) i * cent->dims,
							  st->query, cent->dims, qn);
	}
	qsort(ld, cent->nlists, sizeof(ListDist), cmp_listdist);
	for (int i = 0; i < probes; i++)
		lists[i] = ld[i].list;
	pfree(ld);
	return probes;
}

static void
add_hit(IvfScanState *st, double dist, ItemPointer tid)
{
	if (st->nhits == st->maxhits)
	{
		st->maxhits = Max(1024, st->maxhits * 2);
		st->hits = st->hits ?
			repalloc_huge(st->hits, sizeof(IvfHit) * st->maxhits) :
			MemoryContextAllocHuge(st->ctx, sizeof(IvfHit) * st->maxhits);
	}
	st->hits[st->nhits].dist = dist;
	st->hits[st->nhits].seq = st->nhits;
	st->hits[st->nhits].tid = *tid;
	st->nhits++;
}

/* score every entry of one list */
static void
score_list(Relation index, IvfScanState *st, int dims, BlockNumber blk)
{
	double		qn = -1.0;

	if (!st->null_query && st->kind == WARP_VEC_COSINE)
		qn = warp_vec_cpu_dot(st->query, st->query, dims);
	while (blk != InvalidBlockNumber)
	{
		Buffer		buf = ReadBuffer(index, blk);
		Page		page;
		OffsetNumber maxoff;

		CHECK_FOR_INTERRUPTS();
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		pgwarp_ivf_check_page(index, page, blk, IVF_PAGE_ENTRY);
		maxoff = PageGetMaxOffsetNumber(page);
		for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
		{
			ItemId		iid = PageGetItemId(page, off);
			IvfEntry   *e;

			if (!ItemIdIsNormal(iid))
				continue;
			e = (IvfEntry *) PageGetItem(page, iid);
			add_hit(st, st->null_query ? 0.0 :
					warp_vec_cpu_distance(st->kind, e->vec, st->query, dims, qn), &e->tid);
		}
		blk = IvfPageGetOpaque(page)->next;
		UnlockReleaseBuffer(buf);
	}
}

static void
run_scan(IndexScanDesc scan, IvfScanState *st)
{
	Relation	index = scan->indexRelation;
	IvfMeta		meta;
	IvfCentroids cent;
	int		   *lists;
	int			nprobe;

	pgwarp_ivf_read_meta(index, &meta);
	if (meta.dims == 0)
		return;					/* nothing indexed: the query is never looked at,
								 * as a scan of an empty table never would */
	load_query(scan, st, &meta);
	pgwarp_ivf_read_centroids(index, &meta, &cent);
	lists = palloc(sizeof(int) * meta.nlists);
	nprobe = choose_lists(st, &cent, lists);
	for (int i = 0; i < nprobe; i++)
		score_list(index, st, meta.dims, cent.head[lists[i]]);
	if (st->nhits > 1)
		qsort(st->hits, st->nhits, sizeof(IvfHit), cmp_hit);
}

bool
pgwarp_ivf_gettuple(IndexScanDesc scan, ScanDirection dir)
{
	IvfScanState *st = (IvfScanState *) scan->opaque;

	if (!ScanDirectionIsForward(dir))
		elog(ERROR, "warp_ivf scans only forward");
	if (!st->started)
	{
		MemoryContext old = MemoryContextSwitchTo(st->ctx);

		run_scan(scan, st);
		MemoryContextSwitchTo(old);
		st->started = true;
	}
	if (st->next >= st->nhits)
		return false;
	scan->xs_heaptid = st->hits[st->next++].tid;
	scan->xs_recheck = false;
	scan->xs_recheckorderby = false;
	return true;
}

void
pgwarp_ivf_endscan(IndexScanDesc scan)
{
	IvfScanState *st = (IvfScanState *) scan->opaque;

	MemoryContextDelete(st->ctx);
	pfree(st);
	scan->opaque = NULL;
}
