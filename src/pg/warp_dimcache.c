/*
 * warp_dimcache.c — built dimension tables kept across queries.
 *
 * Building a dimension means running its PostgreSQL plan (an arrow_fdw
 * scan with the dimension's filters) and collecting each row's join key and
 * payload id; for SSB at SF=1 that is most of a GPU query's time.  A
 * backend keeps what it built, keyed by
 *
 *   - the dimension plan itself (nodeToString: its filters, constants and
 *     output columns; a plan holding a parameter or a function that is not
 *     immutable is never cached), and the relation's OID;
 *   - the identity of every file of the table (path, inode, size, mtime
 *     in nanoseconds), so a replaced or rewritten file is a different key.
 *
 * Only read-only arrow_fdw tables qualify: a writable table's visible rows
 * depend on the snapshot, a heap table's on its MVCC state, and neither has
 * a cheap change counter.  Entries live in a memory context of their own,
 * least recently used first out when pg_warp.inner_hash_mem would be
 * exceeded; an entry used by the running query is never evicted (the query
 * reads its arrays in place).
 */
#include "postgres.h"

#include <sys/stat.h>

#include "foreign/foreign.h"
#include "lib/stringinfo.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "utils/datum.h"
#include "utils/memutils.h"

#include "arrow_fdw.h"
#include "warp.h"
#include "warp_dimcache.h"

typedef struct DimCacheEntry
{
	dlist_node	node;			/* most recently used first */
	char	   *key;
	uint64		seq;			/* query that used it last */
	Size		bytes;
	WarpDimCached dim;
} DimCacheEntry;

static MemoryContext cache_cxt;
static dlist_head entries = DLIST_STATIC_INIT(entries);
static Size cache_bytes;
static uint64 query_seq;

void
warp_dimcache_begin_query(void)
{
	query_seq++;
}

/* a Param or a function that is not immutable anywhere in the plan? */
static bool
unstable_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Param))
		return true;
	return expression_tree_walker(node, unstable_walker, context);
}

static bool
exprs_stable(List *exprs)
{
	return !unstable_walker((Node *) exprs, NULL) &&
		!contain_mutable_functions((Node *) exprs);
}

/*
 * The plan's text without the ":location N" fields: those are offsets into
 * the query string, so the same dimension in a query spelled differently
 * (or under EXPLAIN ANALYZE) would otherwise be another key.
 */
static void
append_plan_text(StringInfo buf, const char *text)
{
	static const char tag[] = ":location ";
	const char *p = text;
	const char *hit;

	while ((hit = strstr(p, tag)) != NULL)
	{
		appendBinaryStringInfo(buf, p, hit - p + strlen(tag));
		p = hit + strlen(tag);
		if (*p == '-')
			p++;
		while (*p >= '0' && *p <= '9')
			p++;
		appendStringInfoChar(buf, '?');
	}
	appendStringInfoString(buf, p);
}

char *
warp_dimcache_key(Plan *plan, EState *estate)
{
	Plan	   *scan;
	ForeignScan *fs;
	ForeignServer *server;
	ForeignDataWrapper *fdw;
	RangeTblEntry *rte;
	ArrowFdwOptions opts;
	StringInfoData buf;
	ListCell   *lc;

	/* a big dimension is often planned as Gather -> Parallel Foreign Scan:
	 * its rows are the same, so it is cached the same way */
	if (IsA(plan, Gather))
	{
		if (plan->qual || plan->initPlan || ((Gather *) plan)->initParam ||
			!exprs_stable(plan->targetlist))
			return NULL;
		scan = outerPlan(plan);
	}
	else
		scan = plan;
	if (scan == NULL || !IsA(scan, ForeignScan) || scan->lefttree || scan->righttree ||
		scan->initPlan)
		return NULL;
	fs = (ForeignScan *) scan;
	if (fs->scan.scanrelid == 0 || fs->fdw_scan_tlist != NIL)
		return NULL;
	server = GetForeignServer(fs->fs_server);
	fdw = GetForeignDataWrapper(server->fdwid);
	if (strcmp(fdw->fdwname, "arrow_fdw") != 0)
		return NULL;
	if (!exprs_stable(scan->qual) || !exprs_stable(scan->targetlist) ||
		!exprs_stable(fs->fdw_exprs) || !exprs_stable(fs->fdw_recheck_quals))
		return NULL;
	rte = exec_rt_fetch(fs->scan.scanrelid, estate);
	arrow_fdw_get_options(rte->relid, &opts);
	if (opts.writable)
		return NULL;

	initStringInfo(&buf);
	appendStringInfo(&buf, "rel %u\n", rte->relid);
	foreach(lc, opts.files)
	{
		const char *path = lfirst(lc);
		struct stat st;

		if (stat(path, &st) != 0)
			return NULL;		/* the scan reports it */
		appendStringInfo(&buf, "%s %llu %lld %lld.%09ld\n", path,
						 (unsigned long long) st.st_ino, (long long) st.st_size,
						 (long long) st.st_mtim.tv_sec, (long) st.st_mtim.tv_nsec);
	}
	append_plan_text(&buf, nodeToString(plan));
	return buf.data;
}

const WarpDimCached *
warp_dimcache_get(const char *key)
{
	dlist_iter	it;

	dlist_foreach(it, &entries)
	{
		DimCacheEntry *e = dlist_container(DimCacheEntry, node, it.cur);

		if (strcmp(e->key, key) == 0)
		{
			dlist_delete(&e->node);
			dlist_push_head(&entries, &e->node);
			e->seq = query_seq;
			return &e->dim;
		}
	}
	return NULL;
}

static void
evict(DimCacheEntry *e)
{
	dlist_delete(&e->node);
	cache_bytes -= e->bytes;
	MemoryContextDelete((MemoryContext) e->dim.cxt);
}

void
warp_dimcache_put(const char *key, const WarpDimCached *dim, const int16 *typlen,
				  const bool *typbyval)
{
	Size		bytes = dim->rows * (sizeof(int64) + sizeof(int32)) +
		(Size) dim->npayloads * Max(dim->npay, 1) * (sizeof(Datum) + sizeof(bool) + 16) +
		strlen(key) + 256;
	Size		limit = (Size) pgwarp_inner_hash_mem * 1024;
	dlist_node *cur;
	MemoryContext cxt,
				old;
	DimCacheEntry *e;
	int64		i;

	if (bytes > limit / 2)
		return;					/* would crowd out everything else */
	/* make room: oldest first, never what this query uses */
	cur = dlist_is_empty(&entries) ? NULL : dlist_tail_node(&entries);
	while (cur && cache_bytes + bytes > limit)
	{
		DimCacheEntry *o = dlist_container(DimCacheEntry, node, cur);

		cur = dlist_has_prev(&entries, cur) ? dlist_prev_node(&entries, cur) : NULL;
		if (o->seq != query_seq)
			evict(o);
	}
	if (cache_bytes + bytes > limit)
		return;

	if (cache_cxt == NULL)
		cache_cxt = AllocSetContextCreate(TopMemoryContext, "pg_warp dimension cache",
										  ALLOCSET_DEFAULT_SIZES);
	cxt = AllocSetContextCreate(cache_cxt, "pg_warp cached dimension", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	e = palloc0(sizeof(DimCacheEntry));
	e->key = pstrdup(key);
	e->seq = query_seq;
	e->bytes = bytes;
	e->dim = *dim;
	e->dim.cxt = cxt;
	e->dim.keys = palloc_extended(sizeof(int64) * Max(dim->rows, 1), MCXT_ALLOC_HUGE);
	e->dim.pids = palloc_extended(sizeof(int32) * Max(dim->rows, 1), MCXT_ALLOC_HUGE);
	memcpy(e->dim.keys, dim->keys, sizeof(int64) * dim->rows);
	memcpy(e->dim.pids, dim->pids, sizeof(int32) * dim->rows);
	e->dim.pvalues = palloc_extended(sizeof(Datum) * Max(dim->npayloads * dim->npay, 1),
									 MCXT_ALLOC_HUGE);
	e->dim.pnulls = palloc_extended(sizeof(bool) * Max(dim->npayloads * dim->npay, 1),
									MCXT_ALLOC_HUGE);
	for (i = 0; i < (int64) dim->npayloads * dim->npay; i++)
	{
		int			k = i % dim->npay;

		e->dim.pnulls[i] = dim->pnulls[i];
		e->dim.pvalues[i] = dim->pnulls[i] ? (Datum) 0 :
			datumCopy(dim->pvalues[i], typbyval[k], typlen[k]);
	}
	MemoryContextSwitchTo(old);
	dlist_push_head(&entries, &e->node);
	cache_bytes += bytes;
}
