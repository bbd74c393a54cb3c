/*
 * warp_dimcache.c — built dimension tables kept across queries.
 *
 * Building a dimension means running its PostgreSQL plan (a scan with the
 * dimension's filters) and collecting each row's join key and payload id;
 * for SSB at SF=1 that is most of a GPU query's time.  A backend keeps what
 * it built, keyed by
 *
 *   - the dimension plan itself (nodeToString: its filters, constants and
 *     output columns; a plan holding an executor parameter or a function
 *     that is not immutable is never cached), the binary images of the
 *     values of the external parameters ($n) it refers to, and the
 *     relation's OID;
 *   - for a read-only arrow_fdw table, the identity of every file of the
 *     table (path, inode, size, mtime in nanoseconds), so a replaced or
 *     rewritten file is a different key;
 *   - for a heap table, its relfilenode (TRUNCATE, VACUUM FULL and table
 *     rewrites give a new one) and, beside the key, the table's change
 *     counter from heap_changes.c: an entry is used only while no
 *     transaction that modified the table has committed since, and only by
 *     a snapshot that sees the same committed changes as the one that built
 *     it (pg_warp.cache_heap_dimensions).
 *
 * A writable arrow_fdw table's visible rows depend on the snapshot and it
 * has no change counter: never cached.  Entries live in a memory context of
 * their own, least recently used first out when pg_warp.dim_cache_mem (per
 * backend) would be exceeded; an entry used by the running query is never
 * evicted (the query reads its arrays in place while it builds its join
 * tables; a rescan builds them again through get).
 *
 * With pg_warp preloaded, every backend's entries are also counted in one
 * shared total, held under pg_warp.dim_cache_total_mem: with hundreds of
 * connections the per-backend limit alone would let the caches take the
 * machine's memory.  A backend can only evict its own entries, so when the
 * others hold the total it keeps nothing more (EXPLAIN ANALYZE says so);
 * its share goes back when it evicts or exits (and the account starts from
 * zero after a crash restart, as the caches do).
 */
#include "postgres.h"

#include <sys/stat.h>

#include "access/relation.h"
#include "foreign/foreign.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "fdw/arrow_fdw.h"
#include "heap_changes.h"
#include "pg_warp.h"
#include "warp.h"
#include "exec/warp_dimcache.h"

typedef struct DimCacheEntry
{
	dlist_node	node;			/* most recently used first */
	char	   *key;
	uint64		seq;			/* query that used it last */
	uint64		gen;			/* a heap table's change counter when its rows
								 * were checked (0 otherwise) */
	Size		bytes;
	WarpDimCached dim;
} DimCacheEntry;

static MemoryContext cache_cxt;
static dlist_head entries = DLIST_STATIC_INIT(entries);
static Size cache_bytes;
static uint64 query_seq;

static void evict(struct DimCacheEntry *e);

/* ---------------------------------------------- the cluster-wide account */

typedef struct DimCacheShared
{
	pg_atomic_uint64 bytes;		/* held by all backends' entries */
} DimCacheShared;

static DimCacheShared *dc_shared;
static bool dc_exit_registered;
static shmem_request_hook_type prev_shmem_request_hook;
static shmem_startup_hook_type prev_shmem_startup_hook;

static void
dc_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(DimCacheShared)));
}

static void
dc_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	dc_shared = ShmemInitStruct("pg_warp dimension cache", sizeof(DimCacheShared), &found);
	if (!found)
		pg_atomic_init_u64(&dc_shared->bytes, 0);
	LWLockRelease(AddinShmemInitLock);
}

void
pgwarp_dimcache_preload(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = dc_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = dc_shmem_startup;
}

/* this backend's share back to the account when it exits */
static void
dc_release(int code, Datum arg)
{
	if (dc_shared && cache_bytes > 0)
		pg_atomic_sub_fetch_u64(&dc_shared->bytes, cache_bytes);
	cache_bytes = 0;
}

/* take bytes from the shared account if they fit under the total */
static bool
dc_reserve(Size bytes)
{
	uint64		limit = (uint64) pgwarp_dim_cache_total_mem * 1024;
	uint64		cur;

	if (dc_shared == NULL)
		return true;			/* not preloaded: per backend only */
	cur = pg_atomic_read_u64(&dc_shared->bytes);
	do
	{
		if (cur + bytes > limit)
			return false;
	} while (!pg_atomic_compare_exchange_u64(&dc_shared->bytes, &cur, cur + bytes));
	if (!dc_exit_registered)
	{
		before_shmem_exit(dc_release, (Datum) 0);
		dc_exit_registered = true;
	}
	return true;
}

/* would bytes more fit under the total now? */
static bool
dc_fits(Size bytes)
{
	return dc_shared == NULL ||
		pg_atomic_read_u64(&dc_shared->bytes) + bytes <= (uint64) pgwarp_dim_cache_total_mem * 1024;
}

void
warp_dimcache_begin_query(void)
{
	Size		limit = (Size) pgwarp_dim_cache_mem * 1024;

	query_seq++;
	/* pg_warp.dim_cache_mem may have been lowered: oldest out first */
	while (cache_bytes > limit && !dlist_is_empty(&entries))
		evict(dlist_container(DimCacheEntry, node, dlist_tail_node(&entries)));
}

/*
 * The external parameters ($n of a prepared statement or a function) the
 * plan being keyed refers to: their values are part of its key.
 */
static Bitmapset *key_params;

/* an executor parameter or a function that is not immutable in the plan? */
static bool
unstable_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Param))
	{
		Param	   *p = (Param *) node;

		if (p->paramkind != PARAM_EXTERN || p->paramid <= 0)
			return true;
		key_params = bms_add_member(key_params, p->paramid);
		return false;
	}
	return expression_tree_walker(node, unstable_walker, context);
}

static bool
exprs_stable(List *exprs)
{
	return !unstable_walker((Node *) exprs, NULL) &&
		!contain_mutable_functions((Node *) exprs);
}

/*
 * The values of the plan's external parameters appended to the key, as
 * their binary images (their text forms could be equal for different
 * values, e.g. floats under a low extra_float_digits); false if one has
 * no value here.
 */
static bool
append_param_values(StringInfo buf, EState *estate)
{
	ParamListInfo pli = estate->es_param_list_info;
	int			id = -1;

	while ((id = bms_next_member(key_params, id)) >= 0)
	{
		ParamExternData *prm,
					prmdata;
		int16		typlen;
		bool		typbyval;
		const uint8 *bytes;
		Size		len;
		Datum		v;
		Size		i;

		if (pli == NULL || id > pli->numParams)
			return false;
		prm = pli->paramFetch ? pli->paramFetch(pli, id, false, &prmdata) :
			&pli->params[id - 1];
		if (prm == NULL || !OidIsValid(prm->ptype))
			return false;
		appendStringInfo(buf, "\nparam %d %u ", id, prm->ptype);
		if (prm->isnull)
		{
			appendStringInfoString(buf, "null");
			continue;
		}
		get_typlenbyval(prm->ptype, &typlen, &typbyval);
		v = prm->value;
		if (typbyval)
		{
			bytes = (const uint8 *) &v;
			len = sizeof(Datum);
		}
		else if (typlen == -1)
		{
			struct varlena *d = pg_detoast_datum((struct varlena *) DatumGetPointer(v));

			bytes = (const uint8 *) VARDATA(d);
			len = VARSIZE(d) - VARHDRSZ;
		}
		else
		{
			bytes = (const uint8 *) DatumGetPointer(v);
			len = datumGetSize(v, false, typlen);
		}
		for (i = 0; i < len; i++)
			appendStringInfo(buf, "%02x", bytes[i]);
	}
	return true;
}

/*
 * The plan's text without the fields that do not change its rows: query
 * string offsets (":location": the same dimension in a query spelled
 * differently, or under EXPLAIN ANALYZE), its place in the whole plan
 * (plan_node_id, the range table index of its one relation, whose OID
 * leads the key) and the planner's estimates, which move with ANALYZE.
 */
static void
append_plan_text(StringInfo buf, const char *text)
{
	static const char *const tags[] = {
		":location ", ":plan_node_id ", ":startup_cost ", ":total_cost ",
		":plan_rows ", ":plan_width ", ":varno ", ":varnosyn ", ":scanrelid "
	};
	const char *p = text;

	while (*p)
	{
		const char *hit = strchr(p, ':');
		int			t;

		if (hit == NULL)
			break;
		for (t = 0; t < lengthof(tags); t++)
			if (strncmp(hit, tags[t], strlen(tags[t])) == 0)
				break;
		if (t == lengthof(tags))
		{
			appendBinaryStringInfo(buf, p, hit - p + 1);
			p = hit + 1;
			continue;
		}
		appendBinaryStringInfo(buf, p, hit - p + strlen(tags[t]));
		p = hit + strlen(tags[t]);
		while (*p && *p != ' ' && *p != ')' && *p != '}')
			p++;
		appendStringInfoChar(buf, '?');
	}
	appendStringInfoString(buf, p);
}

/* a heap dimension's scan: its expressions all stable? */
static bool
heap_scan_stable(Plan *scan)
{
	switch (nodeTag(scan))
	{
		case T_SeqScan:
			return scan->lefttree == NULL;
		case T_IndexScan:
			{
				IndexScan  *is = (IndexScan *) scan;

				return exprs_stable(is->indexqualorig) &&
					exprs_stable(is->indexorderbyorig);
			}
		case T_IndexOnlyScan:
			{
				IndexOnlyScan *is = (IndexOnlyScan *) scan;

				return exprs_stable(is->indexqual) && exprs_stable(is->recheckqual) &&
					exprs_stable(is->indexorderby);
			}
		default:
			return false;
	}
}

/*
 * The key of a plan scanning a heap table, with *gen the table's change
 * counter, or NULL where it cannot be cached.  The counter is taken with the
 * check that the query's snapshot sees every committed change it counts,
 * so the rows this query builds are those of any other snapshot that
 * passes the check at the same counter: get and put use it as it is.
 */
static char *
heap_dim_key(Scan *scan, EState *estate, Plan *plan, uint64 *gen, const char **why)
{
	RangeTblEntry *rte;
	Relation	rel;
	Oid			relnode;
	bool		ok;
	StringInfoData buf;

	if (scan->scanrelid == 0 || scan->plan.righttree ||
		(!IsA(scan, SeqScan) && !IsA(scan, IndexScan) && !IsA(scan, IndexOnlyScan)))
	{
		*why = "not a plain scan";
		return NULL;
	}
	if (!heap_scan_stable(&scan->plan))
	{
		*why = "a parameter or a function that is not immutable";
		return NULL;
	}
	if (!pgwarp_cache_heap_dimensions)
	{
		*why = "pg_warp.cache_heap_dimensions is off";
		return NULL;
	}
	rte = exec_rt_fetch(scan->scanrelid, estate);
	if (rte->rtekind != RTE_RELATION)
	{
		*why = "not a table";
		return NULL;
	}
	rel = relation_open(rte->relid, NoLock);
	ok = heap_changes_consistent(rel, estate->es_snapshot, gen, why);
	relnode = rel->rd_node.relNode;
	relation_close(rel, NoLock);
	if (!ok)
		return NULL;
	initStringInfo(&buf);
	appendStringInfo(&buf, "heap %u %u\n", rte->relid, relnode);
	append_plan_text(&buf, nodeToString(plan));
	if (!append_param_values(&buf, estate))
	{
		*why = "a parameter without a value";
		return NULL;
	}
	return buf.data;
}

char *
warp_dimcache_key(Plan *plan, EState *estate, uint64 *gen, const char **why)
{
	Plan	   *scan;
	ForeignScan *fs;
	ForeignServer *server;
	ForeignDataWrapper *fdw;
	RangeTblEntry *rte;
	ArrowFdwOptions opts;
	StringInfoData buf;
	ListCell   *lc;

	*gen = 0;
	*why = "not a plain scan";
	key_params = NULL;			/* collected by exprs_stable below */
	/* a big dimension is often planned as Gather -> Parallel Foreign Scan
	 * (or Parallel Seq Scan): its rows are the same, so it is cached the
	 * same way */
	if (IsA(plan, Gather))
	{
		if (plan->qual || plan->initPlan || ((Gather *) plan)->initParam ||
			!exprs_stable(plan->targetlist))
			return NULL;
		scan = outerPlan(plan);
	}
	else
		scan = plan;
	if (scan == NULL || scan->initPlan)
		return NULL;
	if (!exprs_stable(scan->qual) || !exprs_stable(scan->targetlist))
	{
		*why = "a parameter or a function that is not immutable";
		return NULL;
	}
	if (!IsA(scan, ForeignScan))
		return heap_dim_key((Scan *) scan, estate, plan, gen, why);
	if (scan->lefttree || scan->righttree)
		return NULL;
	fs = (ForeignScan *) scan;
	if (fs->scan.scanrelid == 0 || fs->fdw_scan_tlist != NIL)
		return NULL;
	server = GetForeignServer(fs->fs_server);
	fdw = GetForeignDataWrapper(server->fdwid);
	if (strcmp(fdw->fdwname, "arrow_fdw") != 0)
	{
		*why = "not an arrow_fdw table";
		return NULL;
	}
	if (!exprs_stable(fs->fdw_exprs) || !exprs_stable(fs->fdw_recheck_quals))
	{
		*why = "a parameter or a function that is not immutable";
		return NULL;
	}
	rte = exec_rt_fetch(fs->scan.scanrelid, estate);
	arrow_fdw_get_options(rte->relid, &opts);
	if (opts.writable)
	{
		*why = "a writable Arrow table";
		return NULL;
	}

	initStringInfo(&buf);
	appendStringInfo(&buf, "rel %u\n", rte->relid);
	foreach(lc, opts.files)
	{
		const char *path = lfirst(lc);
		struct stat st;

		if (stat(path, &st) != 0)
		{
			*why = "a file could not be examined";	/* the scan reports it */
			return NULL;
		}
		appendStringInfo(&buf, "%s %llu %lld %lld.%09ld\n", path,
						 (unsigned long long) st.st_ino, (long long) st.st_size,
						 (long long) st.st_mtim.tv_sec, (long) st.st_mtim.tv_nsec);
	}
	append_plan_text(&buf, nodeToString(plan));
	if (!append_param_values(&buf, estate))
	{
		*why = "a parameter without a value";
		return NULL;
	}
	*why = NULL;
	return buf.data;
}

static void
evict(struct DimCacheEntry *e)
{
	dlist_delete(&e->node);
	cache_bytes -= e->bytes;
	if (dc_shared)
		pg_atomic_sub_fetch_u64(&dc_shared->bytes, e->bytes);
	MemoryContextDelete((MemoryContext) e->dim.cxt);
}

const WarpDimCached *
warp_dimcache_get(const char *key, uint64 gen)
{
	dlist_mutable_iter it;

	dlist_foreach_modify(it, &entries)
	{
		DimCacheEntry *e = dlist_container(DimCacheEntry, node, it.cur);

		if (strcmp(e->key, key) == 0)
		{
			if (gen != e->gen)
			{
				/* its heap table changed since: stale for good */
				if (e->seq != query_seq)
					evict(e);
				return NULL;
			}
			dlist_delete(&e->node);
			dlist_push_head(&entries, &e->node);
			e->seq = query_seq;
			return &e->dim;
		}
	}
	return NULL;
}

void
warp_dimcache_put(const char *key, uint64 gen, const WarpDimCached *dim,
				  const int16 *typlen, const bool *typbyval, const char **why)
{
	Size		bytes = dim->rows * (sizeof(int64) + sizeof(int32)) +
		(Size) dim->npayloads * Max(dim->npay, 1) * (sizeof(Datum) + sizeof(bool) + 16) +
		strlen(key) + 256;
	Size		limit = (Size) pgwarp_dim_cache_mem * 1024;
	dlist_node *cur;
	MemoryContext cxt,
				old;
	DimCacheEntry *e;
	int64		i;
	dlist_mutable_iter it;

	*why = NULL;
	if (limit == 0)
	{
		*why = "pg_warp.dim_cache_mem is 0";
		return;
	}
	if (dc_shared && pgwarp_dim_cache_total_mem == 0)
	{
		*why = "pg_warp.dim_cache_total_mem is 0";
		return;
	}
	if (bytes > limit / 2)
	{
		/* would crowd out everything else */
		*why = "larger than half of pg_warp.dim_cache_mem";
		return;
	}
	/* an older copy under the same key (one stale or for other snapshots) */
	dlist_foreach_modify(it, &entries)
	{
		DimCacheEntry *o = dlist_container(DimCacheEntry, node, it.cur);

		if (o->seq != query_seq && strcmp(o->key, key) == 0)
			evict(o);
	}
	/* make room here and in the total: oldest first, never what this query uses */
	cur = dlist_is_empty(&entries) ? NULL : dlist_tail_node(&entries);
	while (cur && (cache_bytes + bytes > limit || !dc_fits(bytes)))
	{
		DimCacheEntry *o = dlist_container(DimCacheEntry, node, cur);

		cur = dlist_has_prev(&entries, cur) ? dlist_prev_node(&entries, cur) : NULL;
		if (o->seq != query_seq)
			evict(o);
	}
	if (cache_bytes + bytes > limit)
	{
		*why = "pg_warp.dim_cache_mem is taken by this query's dimensions";
		return;
	}
	if (!dc_fits(bytes))
	{
		*why = "pg_warp.dim_cache_total_mem is taken by the caches of all sessions";
		return;
	}

	if (cache_cxt == NULL)
		cache_cxt = AllocSetContextCreate(TopMemoryContext, "pg_warp dimension cache",
										  ALLOCSET_DEFAULT_SIZES);
	cxt = AllocSetContextCreate(cache_cxt, "pg_warp cached dimension", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	e = palloc0(sizeof(DimCacheEntry));
	e->key = pstrdup(key);
	e->seq = query_seq;
	e->gen = gen;
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
	/* another backend may have taken the room since dc_fits */
	if (!dc_reserve(bytes))
	{
		MemoryContextDelete(cxt);
		*why = "pg_warp.dim_cache_total_mem is taken by the caches of all sessions";
		return;
	}
	dlist_push_head(&entries, &e->node);
	cache_bytes += bytes;
}

PG_FUNCTION_INFO_V1(pg_warp_dim_cache_stats);

/*
 * pg_warp_dim_cache_stats(OUT entries integer, OUT bytes bigint,
 *						   OUT cluster_bytes bigint)
 */
Datum
pg_warp_dim_cache_stats(PG_FUNCTION_ARGS)
{
	TupleDesc	td;
	Datum		values[3];
	bool		nulls[3] = {0};
	dlist_iter	it;
	int			n = 0;

	if (get_call_result_type(fcinfo, NULL, &td) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	dlist_foreach(it, &entries)
		n++;
	values[0] = Int32GetDatum(n);
	values[1] = Int64GetDatum((int64) cache_bytes);
	if (dc_shared)
		values[2] = Int64GetDatum((int64) pg_atomic_read_u64(&dc_shared->bytes));
	else
		nulls[2] = true;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(td), values, nulls)));
}
