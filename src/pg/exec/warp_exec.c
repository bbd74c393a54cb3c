/*
 * warp_exec.c — Custom Scan (WarpPreAgg): running a star query's program on
 * the CPU driver and emitting partial aggregate states.
 *
 * On the first call the node runs every dimension plan (PostgreSQL's own,
 * children of this node) and builds one join table per dimension: the
 * join key and a payload id naming the distinct values of the dimension's
 * group-by columns.  It then builds the program from the fact quals, join
 * keys, group keys and aggregate arguments kept in the plan (parameters
 * evaluated now), reads the fact table's record batches through
 * arrow_scan.c and runs the CPU driver over each.  Finally it returns one
 * row per group: the group keys and, for each aggregate, the transition
 * state PostgreSQL's combine function expects; the Finalize Aggregate node
 * above merges and finalizes them.
 *
 * On a plan made for pg_warp_gpud (pg_warp.mode = gpu, or auto with a GPU
 * present) the same program, the dimensions' keys and payload ids and the
 * list of batches to read go to the daemon instead (gpud_client.c), which
 * reads the files and runs the program on the GPU; its groups come back in
 * the same form.  When the daemon cannot run the job (not running, died
 * mid-query, refused it) the node runs the CPU driver itself: nothing has
 * been emitted yet, so the query still returns once, exactly.
 *
 * All engine memory comes from one memory context, so an error anywhere
 * (an overflow found by the engine, a query cancel, a bad file) frees it.
 */
#include "postgres.h"

#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/executor.h"
#include "executor/nodeCustom.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "catalog/namespace.h"
#include "mb/pg_wchar.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "portability/instr_time.h"
#include "rewrite/rewriteManip.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "utils/typcache.h"

#include "fdw/arrow_scan.h"
#include "gpud_client.h"
#include "pg_warp.h"
#include "warp.h"
#include "warp_cpu.h"
#include "warp_group_merge.h"
#include "warp_cpu_pool.h"
#include "exec/warp_dim_arrow.h"
#include "exec/warp_dimcache.h"
#include "exec/warp_topn.h"

/* One dimension: its plan, key column, group columns and built table. */
typedef struct WarpDim
{
	PlanState  *ps;
	Var		   *fact_key;
	Var		   *dim_key;
	int			kind;			/* WarpJoinKind */
	int			key_resno;
	int			key2_resno;		/* a second key column (packed with the
								 * first, see warp_plan.c pack_keys), or 0 */
	List	   *key_display;	/* NIL, or List(fact Vars, dim Vars) */
	int			npay;
	int		   *pay_resno;
	int16	   *pay_len;
	bool	   *pay_byval;
	/* distinct payload tuples */
	int			npayloads;
	int			pcap;
	Datum	   *pvalues;		/* npayloads * npay */
	bool	   *pnulls;
	uint32	   *phash;
	int32	   *pslots;			/* open addressing over payload ids */
	uint32		pmask;
	int64		rows;
	int64	   *keys;			/* per build row: key, payload id */
	int32	   *pids;
	WarpJoinTable *table;		/* built for the CPU driver */
	bool		table_ready;	/* table built before the program (by the
								 * leader for its workers) or attached to
								 * the leader's in the DSM */
	char	   *cache_key;		/* warp_dimcache key, or NULL */
	uint64		cache_gen;		/* its heap table's change counter, or 0 */
	bool		from_cache;		/* built by an earlier query */
	bool		read_by_engine; /* rows from warp_dim_arrow.c */
	/*
	 * A text key (text_key): keys[] are numbers of the distinct key strings
	 * kstr[0 .. nkstr); the program maps them to the fact column's string
	 * indexes, and probe_keys[] are the keys the join table is built from
	 */
	bool		text_key;
	int			nkstr;
	char	  **kstr;
	int		   *kstr_len;
	int64	   *probe_keys;
} WarpDim;

/* Shared state of a parallel WarpPreAgg (DSM). */
typedef struct WarpShared
{
	ArrowSharedScan scan;		/* batch claiming and scan counters */
	Size		heap_pscan_off;	/* heap fact table: its ParallelTableScanDesc,
								 * this many bytes from the start, or 0 */
	/* the engine's counters, summed over the participants */
	pg_atomic_uint64 rows_in;
	pg_atomic_uint64 rows_filtered;
	pg_atomic_uint64 rows_joined;
	pg_atomic_uint64 groups;
	/* the leader's dimensions (WarpSharedDim each, then their arrays),
	 * when dims_shared; otherwise every participant builds its own */
	bool		dims_shared;
	int			ndims;
} WarpShared;

/* One dimension in the DSM, after WarpShared and the WarpSharedDim array:
 * keys (int64), payload ids (int32), then the payload values as
 * datumSerialize writes them, npayloads * npay of them. */
typedef struct WarpSharedDim
{
	int64		rows;
	int32		npayloads;
	int32		npay;
	Size		off_keys;		/* from the start of WarpShared */
	Size		off_pids;
	Size		off_pay;
	Size		pay_bytes;
	Size		off_table;		/* the join table's flat form */
	Size		table_bytes;
} WarpSharedDim;

typedef struct WarpScanState
{
	CustomScanState css;

	/* from the plan */
	Index		fact_relid;		/* the planner's range table index */
	int			rtoffset;		/* added by setrefs since */
	Oid			fact_oid;
	List	   *quals;
	List	   *fact_attrs;
	List	   *key_info;
	List	   *agg_info;
	int		   *agg_scale_agg;	/* per aggregate: its hidden scale aggregate, or -1 */
	int		   *agg_square_agg; /* per aggregate: var of int, its hidden
								 * sum of squares, or -1 */
	List	   *outmap;

	Relation	fact_rel;
	bool		heap;			/* a heap fact table (run_cpu_heap), not Arrow */
	ParallelTableScanDesc heap_pscan;	/* parallel: the shared heap scan */
	Size		heap_pscan_off;	/* leader: its offset in the DSM */
	ArrowScanState scan;
	int			ndims;
	WarpDim    *dims;

	MemoryContext engine_cxt;
	WarpAlloc	alloc;
	WarpProgram prog;
	AttrNumber *col_attno;
	ArrowArray *batch_cols;
	WarpCpu    *cpu;
	int			nthreads;		/* CPU driver threads (1: this process only) */
	WarpCpuPool *pool;			/* when it ran on threads: their drivers */
	int64	   *pool_start;		/* per driver: its first group's number */
	int			emit_cpu;		/* driver of the group emitted last */
	bool		on_daemon;		/* planned for pg_warp_gpud */
	bool		daemon_gpu;		/* ... which drove a GPU at plan time */
	GpudResult *gres;			/* the daemon's groups, when it ran */
	WarpGroupMerge *merged;		/* the threads' or lanes' groups merged */
	int64		unmerged_groups;	/* ... from this many partial groups */
	const char *merge_skipped;	/* why they were not, or NULL */
	int			distinct_key;	/* count(DISTINCT x) counted here: x's key */
	int			distinct_agg;	/* ... and count(x)'s aggregate, or -1 */
	char		ran_on[96];		/* EXPLAIN ANALYZE: where it ran */
	char		fallback[256];	/* why not where planned, or "" */
	int			dims_cached;	/* dimensions taken from the cache */
	int			dims_read_by_engine;	/* built from warp_dim_arrow.c */
	StringInfoData dims_not_cached; /* "name (why), ..." for EXPLAIN */
	bool		dims_ready;		/* built (or received) for this execution */
	Size		dims_shared_bytes;	/* leader: the dimensions' DSM bytes, 0 =
									 * workers build their own */
	bool		dims_from_leader;	/* worker: dimensions read from the DSM */
	bool		executed;
	/* constant quals (custom_private item 4): PostgreSQL's gating Result */
	ExprState  *gate;
	bool		gate_checked;
	bool		gate_closed;	/* not true: the node returns nothing */
	int64		next_group;

	/* row mode (WarpJoin: a join without aggregation), streaming by batch */
	bool		emit_rows;
	bool		rows_done;		/* no batch left */
	WarpStatus	rows_status;	/* the batch's error, raised once its rows
								 * before the failing one are returned */
	WarpLoadStatus rows_load;
	int			rows_bad_col;
	int64		rows_bad_row;
	int			rows_bad_file;
	int64		rows_out;
	struct OutCol *out_cols;	/* per output column (out_columns) */
	/* ... on threads: rounds of units, each pool freed with round_cxt */
	WarpJoinTable **row_tables;
	WarpPoolBatch *row_units;
	int			row_nunits;
	int			row_next_unit;
	MemoryContext round_cxt;
	WarpCpuPool *row_failed_pool;	/* this round's rows end in its error */
	/* ... ORDER BY ... LIMIT kept in the node (custom_private item 11) */
	WarpTopN   *topn;
	WarpTopNKey *topn_keys;
	int			topn_nkeys;
	int64		topn_bound;
	bool		topn_done;
	TupleTableSlot *topn_slot;	/* a candidate row, built */
	int64		topn_built;		/* rows built as tuples for it (EXPLAIN) */

	/* EXPLAIN ANALYZE */
	WarpCpuCounters counters;
	int64		groups;
	WarpShared *wshared;		/* parallel: where participants add theirs */
	bool		have_totals;	/* parallel: all participants' sums below */
	WarpCpuCounters total_counters;
	int64		total_groups;
	double		build_ms;
	double		scan_ms;
	double		merge_ms;
} WarpScanState;

/*
 * Work units per record batch for the CPU driver: a 1M-row batch becomes
 * parts of 128K rows (512 kB per int32 column), small enough to share
 * among parallel participants that start at different times and to stay in
 * cache between the read and the engine's passes.
 */
#define WARP_SCAN_PARTS 8

static CustomExecMethods warp_preagg_exec_methods;

static struct OutCol *out_columns(WarpScanState *ws);

/* ------------------------------------------------------------- helpers */

static void *
engine_alloc(void *ctx, size_t size)
{
	return MemoryContextAllocExtended((MemoryContext) ctx, size,
									  MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
}

static Datum
engine_value_datum(int64 v, Oid typid)
{
	double		f;

	switch (typid)
	{
		case BOOLOID:
			return BoolGetDatum(v != 0);
		case INT2OID:
			return Int16GetDatum((int16) v);
		case INT4OID:
			return Int32GetDatum((int32) v);
		case DATEOID:
			return DateADTGetDatum((DateADT) v);
		case FLOAT4OID:
			memcpy(&f, &v, sizeof(f));
			return Float4GetDatum((float4) f);
		case FLOAT8OID:
			memcpy(&f, &v, sizeof(f));
			return Float8GetDatum(f);
		default:				/* int8, timestamp, timestamptz */
			return Int64GetDatum(v);
	}
}

static void
report_status(WarpStatus st)
{
	ereport(ERROR,
			(errcode(warp_status_errcode(st)),
			 errmsg("%s", warp_status_message(st))));
}

/* ------------------------------------------------------------ dimensions */

/* the planner computed the output position: it must exist */
static void
check_resno(Plan *plan, int resno)
{
	if (resno < 1 || resno > list_length(plan->targetlist))
		elog(ERROR, "pg_warp: dimension plan has no output column %d", resno);
}

static uint32
payload_hash(WarpDim *d, Datum *v, bool *n)
{
	uint32		h = 0x9e3779b9;
	int			k;

	for (k = 0; k < d->npay; k++)
		h = hash_combine(h, n[k] ? 0x5bd1e995 :
						 datum_image_hash(v[k], d->pay_byval[k], d->pay_len[k]));
	return h;
}

static void
payload_grow(WarpDim *d)
{
	uint32		cap = d->pmask ? (d->pmask + 1) * 2 : 64;
	int			i;

	d->pslots = palloc(sizeof(int32) * cap);
	memset(d->pslots, 0xff, sizeof(int32) * cap);
	d->pmask = cap - 1;
	for (i = 0; i < d->npayloads; i++)
	{
		uint32		s = d->phash[i] & d->pmask;

		while (d->pslots[s] >= 0)
			s = (s + 1) & d->pmask;
		d->pslots[s] = i;
	}
}

/* payload id of the group-column values v/n (copied when new) */
static int32
payload_id(WarpDim *d, Datum *v, bool *n)
{
	uint32		h = payload_hash(d, v, n);
	uint32		s = h & d->pmask;
	int			k;
	int32		id;

	for (;;)
	{
		int32		cand = d->pslots[s];

		if (cand < 0)
			break;
		if (d->phash[cand] == h)
		{
			for (k = 0; k < d->npay; k++)
			{
				bool		cn = d->pnulls[cand * d->npay + k];

				if (cn != n[k] ||
					(!cn && !datum_image_eq(d->pvalues[cand * d->npay + k], v[k],
											d->pay_byval[k], d->pay_len[k])))
					break;
			}
			if (k == d->npay)
				return cand;
		}
		s = (s + 1) & d->pmask;
	}
	if (d->npayloads == d->pcap)
	{
		d->pcap *= 2;
		d->pvalues = repalloc_huge(d->pvalues, sizeof(Datum) * d->pcap * Max(d->npay, 1));
		d->pnulls = repalloc_huge(d->pnulls, sizeof(bool) * d->pcap * Max(d->npay, 1));
		d->phash = repalloc_huge(d->phash, sizeof(uint32) * d->pcap);
	}
	id = d->npayloads++;
	for (k = 0; k < d->npay; k++)
	{
		d->pnulls[id * d->npay + k] = n[k];
		d->pvalues[id * d->npay + k] = n[k] ? (Datum) 0 :
			datumCopy(v[k], d->pay_byval[k], d->pay_len[k]);
	}
	d->phash[id] = h;
	d->pslots[s] = id;
	if ((uint32) d->npayloads * 2 > d->pmask)
		payload_grow(d);
	return id;
}

/* For EXPLAIN ANALYZE: dimension d was not taken from or kept in the cache. */
static void
note_not_cached(WarpScanState *ws, WarpDim *d, const char *why)
{
	Plan	   *plan = d->ps->plan;
	const char *name = NULL;

	if (why == NULL)
		return;
	if (IsA(plan, Gather) && outerPlan(plan))
		plan = outerPlan(plan);
	switch (nodeTag(plan))
	{
		case T_SeqScan:
		case T_IndexScan:
		case T_IndexOnlyScan:
		case T_BitmapHeapScan:
		case T_ForeignScan:
			if (((Scan *) plan)->scanrelid > 0)
				name = get_rel_name(exec_rt_fetch(((Scan *) plan)->scanrelid,
												  ws->css.ss.ps.state)->relid);
			break;
		default:
			break;
	}
	appendStringInfo(&ws->dims_not_cached, "%s%s (%s)",
					 ws->dims_not_cached.len > 0 ? ", " : "",
					 name ? name : "a dimension", why);
}

/*
 * A dimension this backend built for an earlier query, if its plan and
 * files are the same (warp_dimcache.c): the key and payload-id arrays are
 * used in place (they stay valid for this execution), the payload values
 * are copied, since groups are emitted later.
 */
static bool
dim_from_cache(WarpScanState *ws, WarpDim *d)
{
	const WarpDimCached *c;
	const char *why = NULL;
	int64		i;

	d->cache_key = warp_dimcache_key(d->ps->plan, ws->css.ss.ps.state, &d->cache_gen, &why);
	if (d->cache_key == NULL)
		note_not_cached(ws, d, why);
	if (d->cache_key != NULL)
	{
		/*
		 * What the engine takes from the plan's rows: which columns are the
		 * key(s) and the payload.  The same plan can serve another query
		 * that joins on another of its columns.
		 */
		StringInfoData buf;
		int			k;

		initStringInfo(&buf);
		appendStringInfo(&buf, "%s\nkey %d %d pay", d->cache_key, d->key_resno, d->key2_resno);
		for (k = 0; k < d->npay; k++)
			appendStringInfo(&buf, " %d", d->pay_resno[k]);
		d->cache_key = buf.data;
	}
	if (d->cache_key == NULL)
		return false;
	c = warp_dimcache_get(d->cache_key, d->cache_gen);
	if (c == NULL)
		return false;
	if (c->npay != d->npay)
		return false;
	d->rows = c->rows;
	d->keys = c->keys;
	d->pids = c->pids;
	d->npayloads = c->npayloads;
	d->pcap = Max(c->npayloads, 1);
	d->pvalues = palloc(sizeof(Datum) * d->pcap * Max(d->npay, 1));
	d->pnulls = palloc(sizeof(bool) * d->pcap * Max(d->npay, 1));
	for (i = 0; i < (int64) c->npayloads * d->npay; i++)
	{
		int			k = i % d->npay;

		d->pnulls[i] = c->pnulls[i];
		d->pvalues[i] = c->pnulls[i] ? (Datum) 0 :
			datumCopy(c->pvalues[i], d->pay_byval[k], d->pay_len[k]);
	}
	d->from_cache = true;
	ws->dims_cached++;
	return true;
}

/*
 * The number of a text key's string among the dimension's distinct key
 * strings (kept in d->kstr, byte equality: deterministic collations only),
 * added if new; slots and mask: an open-addressing table over them.
 */
static int64
text_key_bytes(WarpDim *d, const char *p, int len, int32 **slots, uint32 *mask)
{
	uint32		s = hash_bytes((const unsigned char *) p, len) & *mask;
	int			id;

	for (;;)
	{
		int32		cand = (*slots)[s];

		if (cand < 0)
			break;
		if (d->kstr_len[cand] == len && memcmp(d->kstr[cand], p, len) == 0)
			return cand;
		s = (s + 1) & *mask;
	}
	if ((d->nkstr & (d->nkstr - 1)) == 0 && d->nkstr >= 64)
	{
		d->kstr = repalloc_huge(d->kstr, sizeof(char *) * d->nkstr * 2);
		d->kstr_len = repalloc_huge(d->kstr_len, sizeof(int) * d->nkstr * 2);
	}
	id = d->nkstr++;
	d->kstr[id] = palloc(Max(len, 1));
	memcpy(d->kstr[id], p, len);
	d->kstr_len[id] = len;
	(*slots)[s] = id;
	if ((uint32) d->nkstr * 2 > *mask)
	{
		uint32		cap = (*mask + 1) * 2;
		int32	   *ns = palloc(sizeof(int32) * cap);
		int			i;

		memset(ns, 0xff, sizeof(int32) * cap);
		for (i = 0; i < d->nkstr; i++)
		{
			uint32		j = hash_bytes((const unsigned char *) d->kstr[i], d->kstr_len[i]) & (cap - 1);

			while (ns[j] >= 0)
				j = (j + 1) & (cap - 1);
			ns[j] = i;
		}
		*slots = ns;
		*mask = cap - 1;
	}
	return id;
}

static int64
text_key_number(WarpDim *d, Datum key, int32 **slots, uint32 *mask)
{
	text	   *t = DatumGetTextPP(key);

	return text_key_bytes(d, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t), slots, mask);
}

/*
 * The join key of the reader's current row without a Datum (as build_dim
 * computes it from Datums): an integer; two int2/int4 columns packed as
 * a * 2^32 + (b + 2^31); or the number of a text key string (added if
 * new).  False where the row must go through its Datums (a column the
 * reader cannot give that way).
 */
static bool
raw_dim_key(WarpDim *d, WarpDimArrow *reader, int32 **kslots, uint32 *kmask, int64 *kv, bool *kn)
{
	if (d->text_key)
	{
		const uint8 *p;
		int64		len;

		if (!warp_dim_arrow_text(reader, d->key_resno - 1, &p, &len, kn) ||
			len > PG_INT32_MAX / 2)
			return false;
		if (*kn)
			return true;
		/* the check the conversion to text makes (arrow_datum.c): text
		 * join keys are offloaded in UTF-8 databases only, where the
		 * text's bytes are Arrow's */
		pg_verify_mbstr(PG_UTF8, (const char *) p, (int) len, false);
		*kv = text_key_bytes(d, (const char *) p, (int) len, kslots, kmask);
		return true;
	}
	if (!warp_dim_arrow_int(reader, d->key_resno - 1, kv, kn))
		return false;
	if (d->key2_resno > 0 && !*kn)
	{
		int64		b;
		bool		bn;

		if (!warp_dim_arrow_int(reader, d->key2_resno - 1, &b, &bn))
			return false;
		*kn = bn;
		*kv = *kv * INT64CONST(4294967296) + (b + INT64CONST(2147483648));
	}
	return true;
}

/*
 * Payload ids by the raw bytes of the payload columns (warp_dim_arrow_raw),
 * in front of payload_id: a row whose bytes were seen before gets its id
 * without any Datum; new bytes are converted once and interned as usual
 * (identical bytes convert to identical Datums, so the ids are the ones
 * payload_id would give).
 */
typedef struct RawPayloads
{
	uint32		mask;
	int32	   *slots;			/* entry, or -1 */
	int32		n;
	int32		cap;
	uint32	   *hash;			/* per entry */
	int64	   *off;			/* per entry: its bytes in buf */
	int32	   *len;
	int32	   *pid;
	StringInfoData buf;			/* entries' bytes */
	StringInfoData sig;			/* this row's */
} RawPayloads;

static void
raw_payloads_init(RawPayloads *rp)
{
	rp->mask = 255;
	rp->slots = palloc(sizeof(int32) * (rp->mask + 1));
	memset(rp->slots, 0xff, sizeof(int32) * (rp->mask + 1));
	rp->n = 0;
	rp->cap = 64;
	rp->hash = palloc(sizeof(uint32) * rp->cap);
	rp->off = palloc(sizeof(int64) * rp->cap);
	rp->len = palloc(sizeof(int32) * rp->cap);
	rp->pid = palloc(sizeof(int32) * rp->cap);
	initStringInfo(&rp->buf);
	initStringInfo(&rp->sig);
}

/*
 * The current row's payload id from its raw bytes; false (nothing done)
 * where a payload column does not read raw in this batch.
 */
static bool
raw_payload_id(WarpDim *d, RawPayloads *rp, WarpDimArrow *reader, Datum *v, bool *nl,
			   int32 *pid)
{
	uint32		h;
	uint32		s;
	int			k;

	resetStringInfo(&rp->sig);
	for (k = 0; k < d->npay; k++)
	{
		const uint8 *p;
		int64		len;
		int64		ibuf;
		bool		isnull;
		int32		len32;

		if (!warp_dim_arrow_raw(reader, d->pay_resno[k] - 1, &p, &len, &ibuf, &isnull) ||
			len > PG_INT32_MAX / 2)
			return false;
		appendStringInfoChar(&rp->sig, isnull ? 'n' : 'v');
		if (isnull)
			continue;
		len32 = (int32) len;
		appendBinaryStringInfo(&rp->sig, (const char *) &len32, sizeof(len32));
		appendBinaryStringInfo(&rp->sig, (const char *) p, (int) len);
	}
	h = hash_bytes((const unsigned char *) rp->sig.data, rp->sig.len);
	for (s = h & rp->mask; rp->slots[s] >= 0; s = (s + 1) & rp->mask)
	{
		int32		e = rp->slots[s];

		if (rp->hash[e] == h && rp->len[e] == rp->sig.len &&
			memcmp(rp->buf.data + rp->off[e], rp->sig.data, rp->sig.len) == 0)
		{
			*pid = rp->pid[e];
			return true;
		}
	}
	/* new bytes: their Datums, interned as payload_id does */
	for (k = 0; k < d->npay; k++)
		v[k] = warp_dim_arrow_datum(reader, d->pay_resno[k] - 1, &nl[k]);
	*pid = payload_id(d, v, nl);
	if (rp->n == rp->cap)
	{
		rp->cap *= 2;
		rp->hash = repalloc_huge(rp->hash, sizeof(uint32) * rp->cap);
		rp->off = repalloc_huge(rp->off, sizeof(int64) * rp->cap);
		rp->len = repalloc_huge(rp->len, sizeof(int32) * rp->cap);
		rp->pid = repalloc_huge(rp->pid, sizeof(int32) * rp->cap);
	}
	if ((Size) rp->buf.len + rp->sig.len >= MaxAllocSize / 2)
		return true;			/* the id stands; the bytes are not kept */
	rp->hash[rp->n] = h;
	rp->off[rp->n] = rp->buf.len;
	rp->len[rp->n] = rp->sig.len;
	rp->pid[rp->n] = *pid;
	appendBinaryStringInfo(&rp->buf, rp->sig.data, rp->sig.len);
	rp->slots[s] = rp->n++;
	if ((uint32) rp->n * 2 > rp->mask)
	{
		uint32		cap = (rp->mask + 1) * 2;
		int32		e;

		rp->slots = repalloc_huge(rp->slots, sizeof(int32) * cap);
		memset(rp->slots, 0xff, sizeof(int32) * cap);
		rp->mask = cap - 1;
		for (e = 0; e < rp->n; e++)
		{
			for (s = rp->hash[e] & rp->mask; rp->slots[s] >= 0; s = (s + 1) & rp->mask)
				;
			rp->slots[s] = e;
		}
	}
	return true;
}

static void
dim_too_large(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("pg_warp: dimension table is far larger than planned"),
			 errhint("Raise pg_warp.inner_hash_mem, ANALYZE the table, or set pg_warp.enabled = off.")));
}

/* Run a dimension's plan and build its join table. */
static void
build_dim(WarpScanState *ws, WarpDim *d)
{
	Oid			keytype = d->dim_key->vartype;
	int64		cap = 1024,
				n = 0;
	int64	   *keys = palloc(sizeof(int64) * cap);
	int32	   *pids = palloc(sizeof(int32) * cap);
	Datum	   *v = palloc(sizeof(Datum) * Max(d->npay, 1));
	bool	   *nl = palloc(sizeof(bool) * Max(d->npay, 1));
	int			k;
	int32	   *kslots = NULL;	/* text keys: distinct strings by hash */
	uint32		kmask = 0;
	MemoryContext query_cxt = ws->css.ss.ps.state->es_query_cxt;
	MemoryContext old;
	WarpDimArrow *reader;
	Datum	   *rowv = NULL;
	bool	   *rown = NULL;
	int			ntl;
	Oid			key2type = InvalidOid;
	bool		raw_key;
	RawPayloads rawpay;

	d->table = NULL;			/* built again from these rows */
	d->table_ready = false;
	if (d->text_key)
	{
		d->cache_key = NULL;	/* the cache keeps no strings */
		d->nkstr = 0;
		d->kstr = palloc(sizeof(char *) * 64);
		d->kstr_len = palloc(sizeof(int) * 64);
		kmask = 127;
		kslots = palloc(sizeof(int32) * (kmask + 1));
		memset(kslots, 0xff, sizeof(int32) * (kmask + 1));
	}
	else if (dim_from_cache(ws, d))
		return;
	d->npayloads = 0;
	d->pcap = 64;
	d->pvalues = palloc(sizeof(Datum) * d->pcap * Max(d->npay, 1));
	d->pnulls = palloc(sizeof(bool) * d->pcap * Max(d->npay, 1));
	d->phash = palloc(sizeof(uint32) * d->pcap);
	d->pmask = 0;
	payload_grow(d);

	/*
	 * An Arrow dimension's rows straight from its batches where the engine
	 * decides its quals (warp_dim_arrow.c), else through its plan.  Both
	 * give the plan's output columns by number.
	 */
	ntl = list_length(d->ps->plan->targetlist);
	for (k = 0; k < d->npay; k++)
		check_resno(d->ps->plan, d->pay_resno[k]);
	check_resno(d->ps->plan, d->key_resno);
	if (d->key2_resno > 0)
	{
		check_resno(d->ps->plan, d->key2_resno);
		key2type = exprType((Node *) ((TargetEntry *) list_nth(d->ps->plan->targetlist,
															   d->key2_resno - 1))->expr);
	}
	old = MemoryContextSwitchTo(query_cxt);
	reader = warp_dim_arrow_begin(d->ps);
	MemoryContextSwitchTo(old);
	d->read_by_engine = reader != NULL;
	/* keys read as they are: one integer, two int2/int4 columns, or text
	 * (a string seen before; a new one goes through its Datum once) */
	raw_key = reader != NULL &&
		((d->text_key && GetDatabaseEncoding() == PG_UTF8) ||
		 (d->key2_resno == 0 && (keytype == INT2OID || keytype == INT4OID || keytype == INT8OID)) ||
		 (d->key2_resno > 0 && (keytype == INT2OID || keytype == INT4OID) &&
		  (key2type == INT2OID || key2type == INT4OID)));
	if (raw_key && d->npay > 0)
		raw_payloads_init(&rawpay);
	if (reader)
	{
		rowv = palloc(sizeof(Datum) * Max(ntl, 1));
		rown = palloc(sizeof(bool) * Max(ntl, 1));
		if (d->ps->instrument)
			InstrStartNode(d->ps->instrument);
	}
	for (;;)
	{
		Datum		key;

		CHECK_FOR_INTERRUPTS();

		if (reader)
		{
			int			kc;

			if (!warp_dim_arrow_next_row(reader))
				break;
			if (raw_key)
			{
				/* the key and payload bytes as they are: no Datum at all,
				 * except for bytes seen for the first time */
				int64		kv;
				bool		kn;
				int32		pid = 0;

				if (raw_dim_key(d, reader, &kslots, &kmask, &kv, &kn) &&
					(kn || d->npay == 0 || raw_payload_id(d, &rawpay, reader, v, nl, &pid)))
				{
					if (kn)
						continue;	/* NULL never matches */
					if (n == cap)
					{
						cap *= 2;
						keys = repalloc_huge(keys, sizeof(int64) * cap);
						pids = repalloc_huge(pids, sizeof(int32) * cap);
					}
					keys[n] = kv;
					pids[n] = pid;
					if (d->npay == 0)
						d->npayloads = 1;
					n++;
					if ((n & 1023) == 0 &&
						(n * 24 + d->npayloads * 64) / 1024 > (int64) pgwarp_inner_hash_mem * 4)
						dim_too_large();
					continue;
				}
			}
			/* the columns build_dim reads, as Datums */
			rown[d->key_resno - 1] = true;
			rowv[d->key_resno - 1] = warp_dim_arrow_datum(reader, d->key_resno - 1,
														  &rown[d->key_resno - 1]);
			if (d->key2_resno > 0)
				rowv[d->key2_resno - 1] = warp_dim_arrow_datum(reader, d->key2_resno - 1,
															   &rown[d->key2_resno - 1]);
			for (kc = 0; kc < d->npay; kc++)
				rowv[d->pay_resno[kc] - 1] = warp_dim_arrow_datum(reader, d->pay_resno[kc] - 1,
																  &rown[d->pay_resno[kc] - 1]);
		}
		else
		{
			TupleTableSlot *slot;

			/*
			 * The child runs in the query's context: a scan it starts lazily
			 * (heap scan descriptor) must survive the reset of engine_cxt at
			 * a rescan.
			 */
			old = MemoryContextSwitchTo(query_cxt);
			slot = ExecProcNode(d->ps);
			MemoryContextSwitchTo(old);
			if (TupIsNull(slot))
				break;
			slot_getallattrs(slot);
			rowv = slot->tts_values;
			rown = slot->tts_isnull;
		}
		key = rowv[d->key_resno - 1];
		if (rown[d->key_resno - 1])
			continue;			/* NULL never matches */
		if (d->key2_resno > 0)
		{
			/* two int2/int4 key columns: a * 2^32 + (b + 2^31), as the fact
			 * side's expression computes it */
			Datum		key2 = rowv[d->key2_resno - 1];
			int64		a = keytype == INT2OID ? DatumGetInt16(key) : DatumGetInt32(key);
			int64		b;

			if (rown[d->key2_resno - 1])
				continue;
			b = key2type == INT2OID ? DatumGetInt16(key2) : DatumGetInt32(key2);
			key = Int64GetDatum(a * INT64CONST(4294967296) + (b + INT64CONST(2147483648)));
		}
		for (k = 0; k < d->npay; k++)
		{
			v[k] = rowv[d->pay_resno[k] - 1];
			nl[k] = rown[d->pay_resno[k] - 1];
		}
		if (n == cap)
		{
			cap *= 2;
			keys = repalloc_huge(keys, sizeof(int64) * cap);
			pids = repalloc_huge(pids, sizeof(int32) * cap);
		}
		if (d->text_key)
			keys[n] = text_key_number(d, key, &kslots, &kmask);
		else if (d->key2_resno > 0)
			keys[n] = DatumGetInt64(key);
		else
		{
			double		unused;

			warp_datum_value(key, keytype, &keys[n], &unused);
		}
		pids[n] = d->npay > 0 ? payload_id(d, v, nl) : 0;
		if (d->npay == 0)
			d->npayloads = 1;
		n++;
		if ((n * 24 + d->npayloads * 64) / 1024 > (int64) pgwarp_inner_hash_mem * 4)
			dim_too_large();
	}
	if (reader)
	{
		int64		rows = warp_dim_arrow_end(reader);

		if (d->ps->instrument)
			InstrStopNode(d->ps->instrument, (double) rows);
		ws->dims_read_by_engine++;
	}
	if (d->npayloads == 0 && d->npay > 0)
	{
		/* no rows: one all-NULL payload, so that id 0 names real values
		 * (the cache copies them) */
		for (k = 0; k < d->npay; k++)
		{
			v[k] = (Datum) 0;
			nl[k] = true;
		}
		(void) payload_id(d, v, nl);
	}
	if (d->npayloads == 0)
		d->npayloads = 1;
	d->rows = n;
	d->keys = keys;
	d->pids = pids;
	if (d->cache_key)
	{
		WarpDimCached c;
		const char *why;

		c.rows = n;
		c.keys = keys;
		c.pids = pids;
		c.npayloads = d->npayloads;
		c.npay = d->npay;
		c.pvalues = d->pvalues;
		c.pnulls = d->pnulls;

		warp_dimcache_put(d->cache_key, d->cache_gen, &c, d->pay_len, d->pay_byval, &why);
		note_not_cached(ws, d, why);
	}
}

/*
 * What each output column of the node is, worked out once per execution
 * (at the end of build_program: text keys are known by their program
 * columns) rather than per value: a join returns millions of rows.
 */
typedef enum OutColKind
{
	OC_AGG,						/* a partial aggregate's state */
	OC_DIM,						/* a dimension column: payload value */
	OC_TEXT,					/* a fact text key: interned string */
	OC_NUMERIC,					/* a numeric column or extract(): unscaled */
	OC_STRINGS,					/* a text CASE of constants: which string */
	OC_VALUE					/* any other fact key: engine value */
} OutColKind;

typedef struct OutCol
{
	OutColKind	kind;
	int			key;			/* the program's key; OC_AGG: aggregate */
	WarpDim    *dim;			/* OC_DIM: its dimension ... */
	int			col;			/* ... and payload column; OC_TEXT: program
								 * column */
	int			scale;			/* OC_NUMERIC */
	Oid			type;			/* OC_VALUE */
	Datum	   *strings;		/* OC_STRINGS: text values by index */
	int			nstrings;
} OutCol;

/*
 * ORDER BY ... LIMIT in the node: let the driver drop rows by the first
 * ORDER BY item too (WarpProgram.topn_limit), where that is a fact column
 * whose engine values order as PostgreSQL's operator does: integers, bool,
 * date, timestamp(tz), floats (NaN last, -0 = 0) and numeric (scaled
 * integers of one scale) under the type's default ordering.  Text (ids)
 * and dimension columns (payload ids) are left to warp_topn.c.
 */
static void
set_topn_prefilter(WarpScanState *ws, WarpProgram *p)
{
	const WarpTopNKey *k = &ws->topn_keys[0];
	const OutCol *c = &ws->out_cols[k->col];
	Oid			type = c->kind == OC_NUMERIC ? NUMERICOID : c->type;
	TypeCacheEntry *tc;

	if (c->kind != OC_VALUE && c->kind != OC_NUMERIC)
		return;
	tc = lookup_type_cache(type, TYPECACHE_LT_OPR | TYPECACHE_GT_OPR);
	if (k->sortop != tc->lt_opr && k->sortop != tc->gt_opr)
		return;
	p->topn_limit = ws->topn_bound;
	p->topn_key = c->key;
	p->topn_desc = k->sortop == tc->gt_opr ? 1 : 0;
	p->topn_nulls_first = k->nulls_first ? 1 : 0;
}

/* --------------------------------------------------------------- program */

static void
build_program(WarpScanState *ws)
{
	WarpBuilder b;
	ExprContext *econtext = ws->css.ss.ps.ps_ExprContext;
	WarpProgram *p = &ws->prog;
	ListCell   *lc;
	int			i;
	const char *bad;

#define COMPILE(dst, expr) \
	do { \
		(dst) = warp_compile_expr(&b, (Expr *) (expr)); \
		if ((dst) < 0) \
			elog(ERROR, "pg_warp: could not build the program: %s", b.why_not); \
	} while (0)

	warp_builder_init(&b, ws->fact_relid, econtext);
	b.native_columns = ws->heap;
	memset(p, 0, sizeof(*p));
	p->version = WARP_PROGRAM_VERSION;
	p->emit_rows = ws->emit_rows ? 1 : 0;
	p->nquals = list_length(ws->quals);
	p->quals = palloc(sizeof(int32) * Max(p->nquals, 1));
	i = 0;
	foreach(lc, ws->quals)
	{
		p->quals[i] = warp_compile_qual(&b, (Expr *) lfirst(lc));
		if (p->quals[i] < 0)
			elog(ERROR, "pg_warp: could not build the program: %s", b.why_not);
		i++;
	}
	p->njoins = ws->ndims;
	p->joins = palloc(sizeof(WarpJoinSpec) * Max(ws->ndims, 1));
	for (i = 0; i < ws->ndims; i++)
	{
		WarpDim    *d = &ws->dims[i];

		if (d->text_key)
		{
			/* the fact column's value: which dimension key string it equals */
			int		   *map = palloc(sizeof(int) * Max(d->nkstr, 1));
			int64		r;

			p->joins[i].key_node = warp_compile_text_join_key(&b, (Expr *) d->fact_key,
															  d->nkstr, (const char *const *) d->kstr,
															  d->kstr_len, map);
			if (p->joins[i].key_node < 0)
				elog(ERROR, "pg_warp: could not build the program: %s", b.why_not);
			d->probe_keys = palloc(sizeof(int64) * Max(d->rows, 1));
			for (r = 0; r < d->rows; r++)
				d->probe_keys[r] = map[d->keys[r]];
		}
		else
		{
			COMPILE(p->joins[i].key_node, d->fact_key);
			d->probe_keys = NULL;
		}
		p->joins[i].table = i;
		p->joins[i].kind = d->kind;
	}
	p->nkeys = list_length(ws->key_info);
	p->keys = palloc0(sizeof(WarpGroupKey) * Max(p->nkeys, 1));
	i = 0;
	foreach(lc, ws->key_info)
	{
		List	   *ki = lfirst(lc);

		p->keys[i].kind = intVal(linitial(ki));
		if (p->keys[i].kind == WG_FACT)
		{
			p->keys[i].node = warp_compile_group_key(&b, (Expr *) lsecond(ki));
			if (p->keys[i].node < 0)
				elog(ERROR, "pg_warp: could not build the program: %s", b.why_not);
		}
		else
			p->keys[i].join = intVal(lthird(ki));
		i++;
	}
	/* room for a hidden max(display scale) per sum/avg (see below) */
	p->naggs = list_length(ws->agg_info);
	p->aggs = palloc0(sizeof(WarpAggSpec) * Max(2 * p->naggs, 1));
	ws->agg_scale_agg = palloc(sizeof(int) * Max(p->naggs, 1));
	ws->agg_square_agg = palloc(sizeof(int) * Max(p->naggs, 1));
	i = 0;
	foreach(lc, ws->agg_info)
	{
		List	   *ai = lfirst(lc);
		WarpAggSpec *a = &p->aggs[i++];
		WarpType	t = WT_INT8;

		a->kind = intVal(linitial(ai));
		if (a->kind == WARP_AGG_VAR_INT)
			a->kind = WA_SUM_INT8;	/* sum of x; the squares below */
		a->arg = -1;
		a->filter = -1;
		if (lsecond(ai) && (Oid) intVal(lfourth(ai)) == NUMERICOID)
		{
			int			scale;

			a->arg = warp_compile_numeric_agg_arg(&b, (Expr *) lsecond(ai), &scale);
			if (a->arg < 0)
				elog(ERROR, "pg_warp: could not build the program: %s", b.why_not);
		}
		else if (lsecond(ai))
			COMPILE(a->arg, lsecond(ai));
		if (lthird(ai))
			COMPILE(a->filter, lthird(ai));
		if (a->kind != WA_COUNT_STAR)
			warp_type_of((Oid) intVal(lfourth(ai)), &t);
		if (a->arg >= 0 && b.nodes[a->arg].type == WT_NUMERIC)
		{
			t = WT_NUMERIC;
			if (a->kind == WA_SUM_INT8)
				a->kind = WA_SUM_NUMERIC;
		}
		a->type = t;
		ws->agg_scale_agg[i - 1] = -1;
		ws->agg_square_agg[i - 1] = -1;
	}

	/*
	 * var/stddev of int2/int4 (WARP_AGG_VAR_INT): a hidden aggregate after
	 * the real ones sums x::int8 * x::int8 under the same FILTER; the
	 * state emitted is (N, sum, sum of squares)
	 */
	i = 0;
	foreach(lc, ws->agg_info)
	{
		List	   *ai = lfirst(lc);

		if (intVal(linitial(ai)) == WARP_AGG_VAR_INT)
		{
			WarpAggSpec *h = &p->aggs[p->naggs];
			Oid			argtype = (Oid) intVal(lfourth(ai));
			Expr	   *wide = (Expr *) makeFuncExpr(argtype == INT2OID ? F_INT8_INT2 : F_INT8_INT4,
													 INT8OID, list_make1(lsecond(ai)), InvalidOid,
													 InvalidOid, COERCE_IMPLICIT_CAST);
			Oid			mul = OpernameGetOprid(list_make1(makeString("*")), INT8OID, INT8OID);
			Expr	   *sq = make_opclause(mul, INT8OID, false, wide, copyObject(wide),
										   InvalidOid, InvalidOid);

			((OpExpr *) sq)->opfuncid = get_opcode(mul);
			h->kind = WA_SUM_INT8;
			h->type = WT_INT8;
			COMPILE(h->arg, sq);
			h->filter = p->aggs[i].filter;
			ws->agg_square_agg[i] = p->naggs++;
		}
		i++;
	}

	/*
	 * sum/avg of a numeric CASE/COALESCE whose values have different
	 * display scales: PostgreSQL's result has the largest scale among the
	 * values summed, which only the rows know.  A hidden aggregate after
	 * the real ones, max() of the row's scale under the same FILTER, gives
	 * it per group (agg_numeric_scale); hidden aggregates are never
	 * emitted.
	 */
	{
		int			nreal = p->naggs;

		for (i = 0; i < nreal; i++)
		{
			WarpAggSpec *a = &p->aggs[i];

			if (a->kind == WA_SUM_NUMERIC && warp_node_dynamic_scale(&b, a->arg))
			{
				WarpAggSpec *h = &p->aggs[p->naggs];

				h->kind = WA_MAX;
				h->type = WT_INT4;
				h->arg = warp_compile_scale_of(&b, a->arg);
				h->filter = a->filter;
				ws->agg_scale_agg[i] = p->naggs++;
			}
		}
	}
#undef COMPILE
	p->nnodes = b.nnodes;
	p->nodes = b.nodes;
	p->nargs = b.nargs;
	p->args = b.args;
	warp_builder_finish(&b, p);
	p->ncols = b.ncols;
	p->cols = b.cols;
	ws->col_attno = b.col_attno;
	/* a heap fact table's text columns come as Utf8 arrays (run_cpu_heap) */
	for (i = 0; i < p->ncols; i++)
		if (p->cols[i].text)
			p->cols[i].native = 0;
	ws->out_cols = out_columns(ws);
	if (ws->topn)
		set_topn_prefilter(ws, p);
	bad = warp_program_validate(p);
	if (bad)
		elog(ERROR, "pg_warp: invalid program: %s", bad);
}

/* ------------------------------------------------------------- execution */

/* A column the engine could not load: PostgreSQL's error for it. */
static void
report_load_error(WarpScanState *ws, WarpLoadStatus ls, int bad_col, int64 bad_row,
				  const char *path)
{
	const char *col = get_attname(ws->fact_oid, ws->col_attno[bad_col], false);

	if (ls == WARP_LOAD_RANGE)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("%s out of range in column \"%s\"",
						ws->prog.cols[bad_col].type == WT_DATE ? "date" : "timestamp", col),
				 errdetail("Arrow file \"%s\", record batch %d, row %lld.",
						   path, ws->scan.cur_batch, (long long) bad_row)));
	if (ls == WARP_LOAD_PRECISION)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("value in column \"%s\" has more digits than numeric(%d,%d) allows",
						col, ws->prog.cols[bad_col].precision, ws->prog.cols[bad_col].scale),
				 errdetail("Arrow file \"%s\", record batch %d, row %lld.",
						   path, ws->scan.cur_batch, (long long) bad_row),
				 errhint("pg_warp's numeric arithmetic relies on the declared precision; "
						 "set pg_warp.enabled = off to compute with the file's values.")));
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("pg_warp's engine cannot read column \"%s\" of Arrow file \"%s\" as declared",
					col, path),
			 errhint("Set pg_warp.enabled = off for this query.")));
}

/* The dimensions' join tables for the CPU driver (in engine_cxt). */
static WarpJoinTable **
build_join_tables(WarpScanState *ws)
{
	WarpJoinTable **tables = palloc(sizeof(WarpJoinTable *) * Max(ws->ndims, 1));
	int			i;

	for (i = 0; i < ws->ndims; i++)
	{
		WarpDim    *d = &ws->dims[i];

		if (d->table_ready && d->table)
		{
			tables[i] = d->table;
			continue;
		}
		d->table = warp_join_build(&ws->alloc, d->probe_keys ? d->probe_keys : d->keys,
								   d->pids, d->rows, d->npayloads);
		if (d->table == NULL)
			report_status(WARP_ERR_OUT_OF_MEMORY);
		tables[i] = d->table;
	}
	return tables;
}

/*
 * The batch (part) arrow_scan.c loaded last through this process's driver.
 * *ls: a column it could not load (only with WARP_OK), at file row
 * *bad_row.
 */
static WarpStatus
run_current_batch(WarpScanState *ws, WarpLoadStatus *ls, int *bad_col, int64 *bad_row)
{
	WarpStatus	st;
	int			c;

	for (c = 0; c < ws->prog.ncols; c++)
		ws->batch_cols[c] = ws->scan.cur_cols[ws->col_attno[c] - 1];
	st = warp_cpu_run_batch(ws->cpu, ws->batch_cols, ws->scan.cur_rows, NULL,
							ls, bad_col, bad_row);
	if (st != WARP_OK)
		*ls = WARP_LOAD_OK;
	*bad_row += ws->scan.cur_first_row;
	return st;
}

/* The CPU driver, in this process, over the batches arrow_scan.c reads. */
static void
run_cpu_serial(WarpScanState *ws)
{
	MemoryContext old = MemoryContextSwitchTo(ws->engine_cxt);
	WarpJoinTable **tables;
	ExprContext *econtext = ws->css.ss.ps.ps_ExprContext;

	tables = build_join_tables(ws);
	ws->cpu = warp_cpu_create(&ws->prog, tables, &ws->alloc);
	if (ws->cpu == NULL)
		report_status(WARP_ERR_OUT_OF_MEMORY);
	ws->batch_cols = palloc0(sizeof(ArrowArray) * Max(ws->prog.ncols, 1));
	MemoryContextSwitchTo(old);

	while (arrow_scan_next_batch(&ws->scan, econtext, false))
	{
		WarpLoadStatus ls;
		int			bad_col = 0;
		int64		bad_row = 0;
		WarpStatus	st = run_current_batch(ws, &ls, &bad_col, &bad_row);

		if (st != WARP_OK)
			report_status(st);
		if (ls != WARP_LOAD_OK)
			report_load_error(ws, ls, bad_col, bad_row,
							  ws->scan.files[ws->scan.cur_file].path);
	}
	warp_cpu_counters(ws->cpu, &ws->counters);
	ws->groups = warp_cpu_ngroups(ws->cpu);
}

/* frees the pool's malloc'd memory with engine_cxt (reset, end or abort) */
static void
pool_release(void *arg)
{
	warp_cpu_pool_free((WarpCpuPool *) arg);
}

/*
 * The group merge is abandoned when its sample partition keeps more than
 * this share of its groups: keys that rarely repeat across threads (SSB
 * SF=1 grouped by customer, priority and supplier: 5.97M partial groups,
 * 5.93M merged) cost the merge's time and save the Finalize step nothing.
 */
#define WARP_MERGE_MAX_KEPT 0.9

/* text keys of a thread's driver, for the group merge */
typedef struct MergeText
{
	WarpCpu    *cpu;
	const int  *key_col;		/* per key: its text column, or -1 */
} MergeText;

static const warp_uint8 *
merge_key_text(void *ctx, int k, warp_int64 id, warp_int64 *len)
{
	MergeText  *mt = ctx;

	return warp_cpu_key_text(mt->cpu, mt->key_col[k], id, len);
}

/* frees the merged groups' malloc'd memory with engine_cxt */
static void
merge_release(void *arg)
{
	warp_group_merge_free((WarpGroupMerge *) arg);
}

/* count(DISTINCT x) cannot be counted without the merge: fail the query */
static void
merge_failed(WarpScanState *ws)
{
	CHECK_FOR_INTERRUPTS();		/* an interrupt stopped it: its own error */
	ereport(ERROR,
			(errcode(ws->merge_skipped == warp_merge_no_memory ? ERRCODE_OUT_OF_MEMORY
					 : ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("pg_warp: could not count DISTINCT values: %s", ws->merge_skipped)));
}

/*
 * Merge the partial groups of the threads' drivers, or of the daemon's GPU
 * lanes, before they are emitted (warp_group_merge.h): a group every
 * thread saw would otherwise reach the Finalize step once per thread.
 * Where the merge is abandoned (a combination PostgreSQL's combine
 * function would raise an error for, no memory) the groups go up
 * unmerged, as before, and the Finalize step does the rest.
 */
static void
merge_groups(WarpScanState *ws)
{
	bool		distinct = ws->distinct_agg >= 0;
	MemoryContext old = MemoryContextSwitchTo(ws->engine_cxt);
	WarpGroupSource *src;
	bool	   *is_text = NULL;
	int		   *key_col;
	int			nsrc = 0,
				i,
				k;
	WarpGroupMerge *m;
	MemoryContextCallback *cb;

	ws->merge_skipped = NULL;
	if (distinct)
	{
		/* count(DISTINCT x) is counted from merged (keys, x) groups: the
		 * merge is not optional, one source or many */
		if (ws->css.ss.ps.plan->parallel_aware)
			elog(ERROR, "pg_warp: count(DISTINCT) counted by the engine under parallel workers");
	}
	else if (!pgwarp_merge_groups || ws->prog.nkeys == 0 || ws->groups < 2 ||
			 !((ws->pool && ws->pool->ncpus > 1) || (ws->gres && ws->gres->nparts > 1)))
	{
		MemoryContextSwitchTo(old);
		return;
	}
	key_col = palloc(sizeof(int) * ws->prog.nkeys);
	for (k = 0; k < ws->prog.nkeys; k++)
	{
		key_col[k] = warp_group_key_text_column(&ws->prog, ws->prog.keys[k].node);
		if (key_col[k] >= 0)
		{
			if (is_text == NULL)
				is_text = palloc0(sizeof(bool) * ws->prog.nkeys);
			is_text[k] = true;
		}
	}
	if (ws->gres)
	{
		GpudResult *r = ws->gres;
		uint8	   *base = (uint8 *) r;
		const WarpAggState **aggs = palloc(sizeof(WarpAggState *) * Max(r->naggs, 1));

		if (is_text != NULL || r->nkeys != ws->prog.nkeys || r->naggs != ws->prog.naggs)
		{
			/* the planner keeps text keys off the daemon */
			if (distinct)
				elog(ERROR, "pg_warp: the daemon's groups cannot be merged");
			MemoryContextSwitchTo(old);
			return;
		}
		src = palloc0(sizeof(WarpGroupSource));
		for (i = 0; i < r->naggs; i++)
			aggs[i] = (const WarpAggState *) (base + r->off_states) + i;
		src->n = r->ngroups;
		src->keys = (const warp_int64 *) (base + r->off_keys);
		src->nulls = base + r->off_nulls;
		src->aggs = aggs;
		src->stride = r->naggs;
		nsrc = 1;
	}
	else
	{
		int			ncpus = ws->pool ? ws->pool->ncpus : 1;

		src = palloc0(sizeof(WarpGroupSource) * ncpus);
		for (i = 0; i < ncpus; i++)
		{
			MergeText  *mt = palloc(sizeof(MergeText));

			mt->cpu = ws->pool ? ws->pool->cpus[i] : ws->cpu;
			mt->key_col = key_col;
			warp_cpu_group_source(mt->cpu, &src[nsrc]);
			src[nsrc].text = merge_key_text;
			src[nsrc].text_ctx = mt;
			if (src[nsrc].n > 0)
				nsrc++;
		}
	}
	MemoryContextSwitchTo(old);

	m = warp_group_merge(&ws->prog, is_text, src, nsrc, distinct ? 1.0 : WARP_MERGE_MAX_KEPT,
						 Max(ws->nthreads, 1), pgwarp_threads_interrupted, NULL, &ws->merge_skipped);
	CHECK_FOR_INTERRUPTS();
	if (m == NULL && !distinct)
		return;
	if (m == NULL)
		merge_failed(ws);
	cb = MemoryContextAlloc(ws->engine_cxt, sizeof(MemoryContextCallback));
	cb->func = merge_release;
	cb->arg = m;
	MemoryContextRegisterResetCallback(ws->engine_cxt, cb);
	if (distinct &&
		!warp_group_merge_regroup(m, ws->distinct_key, ws->distinct_agg, Max(ws->nthreads, 1),
								  pgwarp_threads_interrupted, NULL, &ws->merge_skipped))
		merge_failed(ws);
	ws->merged = m;
	ws->unmerged_groups = ws->groups;
	ws->groups = warp_group_merge_ngroups(m);
}

/*
 * The CPU driver on ws->nthreads threads of this backend (warp_cpu_pool.h):
 * the threads touch no PostgreSQL state; this thread lists the batches,
 * checks the files before and after, polls for cancel between units and
 * raises whatever error the earliest failing unit met.
 *
 * A pool over the scan's files (no units yet), freed when cxt is reset.
 */
static WarpCpuPool *
pool_create(WarpScanState *ws, WarpJoinTable **tables, MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	ArrowScanState *ss = &ws->scan;
	WarpCpuPool *pool;
	MemoryContextCallback *cb;
	int			i,
				c,
				nnull;
	int		   *null_attnos;
	bool	   *null_is_null;

	nnull = arrow_skip_null_quals(ss->skip, &null_attnos, &null_is_null);
	pool = palloc0(sizeof(WarpCpuPool));
	pool->prog = &ws->prog;
	pool->tables = tables;
	pool->nfiles = ss->nfiles;
	pool->files = palloc0(sizeof(WarpPoolFile) * Max(ss->nfiles, 1));
	for (i = 0; i < ss->nfiles; i++)
	{
		ScanFile   *sf = &ss->files[i];
		int		   *fields;

		if (sf->empty || !sf->opened)
			continue;
		fields = palloc(sizeof(int) * Max(ws->prog.ncols, 1));
		for (c = 0; c < ws->prog.ncols; c++)
			fields[c] = sf->field_of_attr[ws->col_attno[c] - 1];
		pool->files[i].file = &sf->file;
		pool->files[i].fields = fields;
		pool->files[i].mappable = pgwarp_cpu_mmap;
		pool->files[i].map_fd = sf->fd;
		if (nnull > 0)
		{
			int		   *nf = palloc(sizeof(int) * nnull);

			for (c = 0; c < nnull; c++)
				nf[c] = sf->field_of_attr[null_attnos[c]];
			pool->files[i].nnull = nnull;
			pool->files[i].null_fields = nf;
			pool->files[i].null_is_null = null_is_null;
		}
	}
	pool->nthreads = ws->nthreads;
	pool->parts = WARP_SCAN_PARTS;
	pool->interrupted = pgwarp_threads_interrupted;
	cb = palloc0(sizeof(MemoryContextCallback));
	cb->func = pool_release;
	cb->arg = pool;
	MemoryContextRegisterResetCallback(cxt, cb);
	MemoryContextSwitchTo(old);
	return pool;
}

/*
 * Run the pool's units (pool->batches) on its threads, leaving any error in
 * pool->error (pool_raise raises it).  False: the float sums must be re-run
 * in row order (pool->order_risk).
 */
static bool
pool_execute(WarpScanState *ws, WarpCpuPool *pool)
{
	ArrowScanState *ss = &ws->scan;

	/* the threads read through the files' own sources (pread, or a mapping
	 * of the file: pg_warp.cpu_mmap), the pool counting bytes: the scan's
	 * counting wrapper is not for threads */
	arrow_scan_counting_reads(ss, false);
	warp_cpu_pool_run(pool);
	arrow_scan_counting_reads(ss, true);

	CHECK_FOR_INTERRUPTS();
	if (pool->order_risk)
		return false;
	pg_atomic_fetch_add_u64(&ss->shared->batches_read, pool->batches_read);
	pg_atomic_fetch_add_u64(&ss->shared->batches_skipped, pool->batches_skipped);
	pg_atomic_fetch_add_u64(&ss->shared->bytes_read, pool->bytes_read);
	return true;
}

/* Raise the error of the pool's earliest failing unit, if any. */
static void
pool_raise(WarpScanState *ws, WarpCpuPool *pool)
{
	ArrowScanState *ss = &ws->scan;
	int			i;

	/* a file that changed under the threads is the cause of what they saw */
	if (pool->error == WARP_POOL_ARROW || pool->error == WARP_POOL_LOAD)
		for (i = 0; i < ss->nfiles; i++)
			if (!ss->files[i].empty && ss->files[i].opened)
				arrow_scan_check_file(&ss->files[i]);
	switch (pool->error)
	{
		case WARP_POOL_OK:
			break;
		case WARP_POOL_STATUS:
			report_status(pool->status);
			break;
		case WARP_POOL_LOAD:
			ss->cur_batch = pool->bad_batch;
			report_load_error(ws, pool->load_status, pool->bad_col, pool->bad_row,
							  ss->files[pool->bad_file].path);
			break;
		case WARP_POOL_ARROW:
			pgwarp_report_arrow_error(ERROR, &pool->arrow_err);
			break;
		case WARP_POOL_NOMEM:
			report_status(WARP_ERR_OUT_OF_MEMORY);
			break;
		case WARP_POOL_INTERRUPTED:
			/* CHECK_FOR_INTERRUPTS in pool_execute raises it in every case seen */
			ereport(ERROR,
					(errcode(ERRCODE_QUERY_CANCELED),
					 errmsg("canceling statement due to user request")));
			break;
	}
	/* the files must still be the ones the threads read */
	for (i = 0; i < ss->nfiles; i++)
		if (!ss->files[i].empty && ss->files[i].opened)
			arrow_scan_check_file(&ss->files[i]);
}

/*
 * Run the pool's units and raise the error of the earliest failing one, if
 * any.  False: the float sums must be re-run in row order
 * (pool->order_risk), nothing raised.
 */
static bool
pool_run(WarpScanState *ws, WarpCpuPool *pool)
{
	if (!pool_execute(ws, pool))
		return false;
	pool_raise(ws, pool);
	return true;
}

/* where each driver's groups start in the numbering warp_next emits */
static void
pool_number_groups(WarpScanState *ws)
{
	WarpCpuPool *pool = ws->pool;
	int			i;

	ws->pool_start = MemoryContextAlloc(ws->engine_cxt, sizeof(int64) * (pool->ncpus + 1));
	ws->pool_start[0] = 0;
	for (i = 0; i < pool->ncpus; i++)
		ws->pool_start[i + 1] = ws->pool_start[i] + warp_cpu_ngroups(pool->cpus[i]);
	ws->groups = ws->pool_start[pool->ncpus];
	ws->emit_cpu = 0;
}

/* The scan's batches not skipped, as pool units (in engine_cxt). */
static WarpPoolBatch *
pool_units(WarpScanState *ws, int *n)
{
	ExprContext *econtext = ws->css.ss.ps.ps_ExprContext;
	MemoryContext old = MemoryContextSwitchTo(ws->engine_cxt);
	WarpPoolBatch *units;
	int		   *files,
			   *batches;
	int			i;

	*n = arrow_scan_list_batches(&ws->scan, econtext, &files, &batches);
	units = palloc(sizeof(WarpPoolBatch) * Max(*n, 1));
	for (i = 0; i < *n; i++)
	{
		units[i].file = files[i];
		units[i].batch = batches[i];
	}
	MemoryContextSwitchTo(old);
	return units;
}

/* The CPU driver on pg_warp.cpu_threads threads of this process. */
static void
run_cpu_threads(WarpScanState *ws)
{
	ArrowScanState *ss = &ws->scan;
	WarpCpuPool *pool;
	MemoryContext old = MemoryContextSwitchTo(ws->engine_cxt);
	WarpJoinTable **tables = build_join_tables(ws);

	MemoryContextSwitchTo(old);
	pool = pool_create(ws, tables, ws->engine_cxt);
	pool->batches = pool_units(ws, &pool->nbatches);
	ws->pool = pool;
	if (!pool_run(ws, pool))
	{
		/*
		 * A float sum met values so large that whether it overflows depends
		 * on the order of the additions, which the threads changed: run the
		 * query again in one thread, in PostgreSQL's row order (this
		 * includes an overflow error the threads may have raised).
		 */
		warp_cpu_pool_free(pool);
		ws->pool = NULL;
		pg_atomic_write_u64(&ss->shared->batches_skipped, 0);	/* counted again */
		strlcpy(ws->fallback, "float sums re-run in row order (values near the overflow range)",
				sizeof(ws->fallback));
		run_cpu_serial(ws);
		return;
	}
	ws->counters = pool->counters;
	pool_number_groups(ws);
}

/*
 * A heap fact table: PostgreSQL's table AM reads the tuples (a parallel
 * scan's share of the pages under Gather) in this process, and they are
 * deformed into column vectors of engine values -- int64 in PostgreSQL's
 * own domain (infinite dates included), or double -- that the CPU driver
 * reads as native columns, WARP_HEAP_BATCH rows at a time.
 */
#define WARP_HEAP_BATCH 16384

static void
run_cpu_heap(WarpScanState *ws)
{
	MemoryContext old = MemoryContextSwitchTo(ws->engine_cxt);
	EState	   *estate = ws->css.ss.ps.state;
	Relation	rel = ws->fact_rel;
	int			ncols = ws->prog.ncols;
	ArrowField *fields;
	ArrowArray *cols;
	uint8	  **valid;
	int		   *nnull;
	StringInfoData *tdata;		/* text columns: the batch's bytes */
	MemoryContext batch_cxt;
	WarpJoinTable **tables;
	TableScanDesc scan;
	TupleTableSlot *slot;
	int			maxatt = 0,
				n = 0,
				c;

	tables = build_join_tables(ws);
	ws->cpu = warp_cpu_create(&ws->prog, tables, &ws->alloc);
	if (ws->cpu == NULL)
		report_status(WARP_ERR_OUT_OF_MEMORY);
	fields = palloc0(sizeof(ArrowField) * Max(ncols, 1));
	cols = palloc0(sizeof(ArrowArray) * Max(ncols, 1));
	valid = palloc0(sizeof(uint8 *) * Max(ncols, 1));
	nnull = palloc0(sizeof(int) * Max(ncols, 1));
	tdata = palloc0(sizeof(StringInfoData) * Max(ncols, 1));
	for (c = 0; c < ncols; c++)
	{
		const WarpColumnSpec *cs = &ws->prog.cols[c];

		if (cs->text)
		{
			/* text: a LargeUtf8 array of the batch's bytes (the database is
			 * UTF8, as the planner requires for the engine's text) */
			fields[c].type.id = ARROW_TYPE_LARGE_UTF8;
			cols[c].field = &fields[c];
			cols[c].offsets = palloc(sizeof(int64) * (WARP_HEAP_BATCH + 1));
			initStringInfo(&tdata[c]);
			valid[c] = palloc(WARP_HEAP_BATCH / 8);
			maxatt = Max(maxatt, ws->col_attno[c]);
			continue;
		}
		Assert(cs->native);
		if (WARP_TYPE_IS_FLOAT(cs->type))
		{
			fields[c].type.id = ARROW_TYPE_FLOAT;
			fields[c].type.precision = ARROW_PRECISION_DOUBLE;
		}
		else
		{
			fields[c].type.id = ARROW_TYPE_INT;
			fields[c].type.bit_width = 64;
			fields[c].type.is_signed = true;
		}
		cols[c].field = &fields[c];
		cols[c].values = palloc(sizeof(int64) * WARP_HEAP_BATCH);
		cols[c].values_len = sizeof(int64) * WARP_HEAP_BATCH;
		valid[c] = palloc(WARP_HEAP_BATCH / 8);
		maxatt = Max(maxatt, ws->col_attno[c]);
	}
	slot = table_slot_create(rel, NULL);
	if (ws->heap_pscan)
		scan = table_beginscan_parallel(rel, ws->heap_pscan);
	else
		scan = table_beginscan(rel, estate->es_snapshot, 0, NULL);
	/* detoasted text values live until their batch has run */
	batch_cxt = AllocSetContextCreate(ws->engine_cxt, "pg_warp heap batch",
									  ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(old);

	for (;;)
	{
		bool		more = table_scan_getnextslot(scan, ForwardScanDirection, slot);

		if (more)
		{
			slot_getsomeattrs(slot, maxatt);
			for (c = 0; c < ncols; c++)
			{
				int			att = ws->col_attno[c] - 1;
				Datum		d = slot->tts_values[att];
				int64	   *iv = (int64 *) cols[c].values;

				if (ws->prog.cols[c].text)
				{
					int64	   *off = (int64 *) cols[c].offsets;

					if (n == 0)
					{
						resetStringInfo(&tdata[c]);
						off[0] = 0;
					}
					if (slot->tts_isnull[att])
					{
						valid[c][n >> 3] &= ~(1 << (n & 7));
						nnull[c]++;
					}
					else
					{
						MemoryContext oc = MemoryContextSwitchTo(batch_cxt);
						text	   *t = DatumGetTextPP(d);

						MemoryContextSwitchTo(oc);
						valid[c][n >> 3] |= 1 << (n & 7);
						appendBinaryStringInfo(&tdata[c], VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
					}
					off[n + 1] = tdata[c].len;
					continue;
				}
				if (slot->tts_isnull[att])
				{
					valid[c][n >> 3] &= ~(1 << (n & 7));
					nnull[c]++;
					iv[n] = 0;
					continue;
				}
				valid[c][n >> 3] |= 1 << (n & 7);
				switch ((WarpType) ws->prog.cols[c].type)
				{
					case WT_BOOL:
						iv[n] = DatumGetBool(d) ? 1 : 0;
						break;
					case WT_INT2:
						iv[n] = DatumGetInt16(d);
						break;
					case WT_INT4:
						iv[n] = DatumGetInt32(d);
						break;
					case WT_DATE:
						iv[n] = DatumGetDateADT(d);
						break;
					case WT_FLOAT4:
						((double *) iv)[n] = DatumGetFloat4(d);
						break;
					case WT_FLOAT8:
						((double *) iv)[n] = DatumGetFloat8(d);
						break;
					default:	/* int8, timestamp, timestamptz */
						iv[n] = DatumGetInt64(d);
						break;
				}
			}
			n++;
		}
		if (n == WARP_HEAP_BATCH || (!more && n > 0))
		{
			WarpLoadStatus ls;
			int			bad_col = 0;
			int64		bad_row = 0;
			WarpStatus	st;

			for (c = 0; c < ncols; c++)
			{
				cols[c].length = n;
				cols[c].null_count = nnull[c];
				cols[c].validity = nnull[c] > 0 ? valid[c] : NULL;
				nnull[c] = 0;
				if (ws->prog.cols[c].text)
				{
					cols[c].data = (const uint8 *) tdata[c].data;
					cols[c].data_len = tdata[c].len;
				}
			}
			st = warp_cpu_run_batch(ws->cpu, cols, n, NULL, &ls, &bad_col, &bad_row);
			if (st != WARP_OK)
				report_status(st);
			if (ls != WARP_LOAD_OK)
				elog(ERROR, "pg_warp: the engine could not read column %d of heap table \"%s\"",
					 bad_col, RelationGetRelationName(rel));
			n = 0;
			MemoryContextReset(batch_cxt);
			CHECK_FOR_INTERRUPTS();
		}
		if (!more)
			break;
	}
	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	warp_cpu_counters(ws->cpu, &ws->counters);
	ws->groups = warp_cpu_ngroups(ws->cpu);
}

static void
run_cpu(WarpScanState *ws)
{
	if (ws->heap)
		run_cpu_heap(ws);
	else if (ws->nthreads > 1)
		run_cpu_threads(ws);
	else
		run_cpu_serial(ws);
}

/*
 * The job on pg_warp_gpud: every batch the statistics do not rule out, the
 * dimensions as keys and payload ids.  False (fallback set) when the daemon
 * could not run it; errors the query itself raises are raised here.
 */
static bool
run_on_daemon(WarpScanState *ws)
{
	ArrowScanState *ss = &ws->scan;
	ExprContext *econtext = ws->css.ss.ps.ps_ExprContext;
	MemoryContext old = MemoryContextSwitchTo(ws->engine_cxt);
	GpudClientTable *tables = palloc0(sizeof(GpudClientTable) * Max(ws->ndims, 1));
	GpudClientFile *files = palloc0(sizeof(GpudClientFile) * Max(ss->nfiles, 1));
	int64		skipped = 0;
	GpudResult *res;
	int			i;

	for (i = 0; i < ws->ndims; i++)
	{
		tables[i].nrows = ws->dims[i].rows;
		tables[i].npayloads = ws->dims[i].npayloads;
		tables[i].keys = ws->dims[i].probe_keys ? ws->dims[i].probe_keys : ws->dims[i].keys;
		tables[i].payload = ws->dims[i].pids;
	}
	for (i = 0; i < ss->nfiles; i++)
	{
		ScanFile   *sf = &ss->files[i];
		GpudClientFile *f = &files[i];
		int64		nb = ss->batch_start[i + 1] - ss->batch_start[i];
		int64		b;
		int			c;

		f->path = sf->path;
		f->limit = sf->limit;
		f->recover_tail = ss->writable && sf->limit < 0;
		f->st = sf->st;
		f->batches = palloc(sizeof(int32) * Max(nb, 1));
		f->fields = palloc(sizeof(int32) * Max(ws->prog.ncols, 1));
		if (sf->empty)
			continue;
		for (b = 0; b < nb; b++)
		{
			CHECK_FOR_INTERRUPTS();
			if (arrow_skip_batch(ss->skip, sf->stats, (int) b, econtext))
				skipped++;
			else
				f->batches[f->nbatches++] = (int32) b;
		}
		for (c = 0; c < ws->prog.ncols; c++)
			f->fields[c] = sf->field_of_attr[ws->col_attno[c] - 1];
	}
	res = pgwarp_gpud_run(&ws->prog, ws->ndims, tables, ss->nfiles, files,
						  ws->fallback, sizeof(ws->fallback));
	MemoryContextSwitchTo(old);
	if (res == NULL)
		return false;

	pg_atomic_fetch_add_u64(&ss->shared->batches_read, res->batches);
	pg_atomic_fetch_add_u64(&ss->shared->batches_skipped, skipped);
	pg_atomic_fetch_add_u64(&ss->shared->bytes_read, res->bytes_read);
	if (res->has_arrow_error)
	{
		res->arrow_error.msg[sizeof(res->arrow_error.msg) - 1] = '\0';
		pgwarp_report_arrow_error(ERROR, &res->arrow_error);
	}
	if (res->status != WARP_OK)
		report_status((WarpStatus) res->status);
	if (res->load_status != WARP_LOAD_OK)
	{
		if (res->bad_col < 0 || res->bad_col >= ws->prog.ncols ||
			res->bad_file < 0 || res->bad_file >= ss->nfiles)
			elog(ERROR, "pg_warp_gpud reported a load error at an invalid position");
		report_load_error(ws, (WarpLoadStatus) res->load_status, res->bad_col, res->bad_row,
						  ss->files[res->bad_file].path);
	}
	res->device[sizeof(res->device) - 1] = '\0';
	res->fallback[sizeof(res->fallback) - 1] = '\0';
	ws->gres = res;
	ws->counters = res->counters;
	ws->groups = res->ngroups;
	if (res->ran_on == GPUD_DEVICE_GPU)
		snprintf(ws->ran_on, sizeof(ws->ran_on), "GPU (%s)", res->device);
	else
		snprintf(ws->ran_on, sizeof(ws->ran_on), "CPU in pg_warp_gpud");
	strlcpy(ws->fallback, res->fallback, sizeof(ws->fallback));
	return true;
}

/*
 * Join ranges: an inner or semi join on an integer, date or timestamp
 * column of an Arrow fact table (dimension keys in the same domain:
 * DateADT, microseconds) drops every fact row whose key lies outside
 * [min, max] of the dimension's keys (and NULL keys), so those bounds join
 * the scan's skip quals (arrow_skip.c), which decide the batches it reads.  A row dropped there
 * never reaches the quals, the other joins' keys or the aggregates, so
 * this is done only where all the fact quals are of the simple forms that
 * cannot raise an error (arrow_skip_quals_all) and every join key on the
 * fact side is a plain column (a Var): then what the row would have met
 * later cannot fail either, and the answer is the same.
 */
static void
set_join_ranges(WarpScanState *ws)
{
	ArrowScanState *ss = &ws->scan;
	TupleDesc	td;
	MemoryContext old;
	int			i;
	int			n = 0;

	if (ws->heap || !ws->scan.files)
		return;
	arrow_skip_join_ranges_clear(ss->skip);
	if (!pgwarp_enable_join_ranges || !arrow_skip_quals_all(ss->skip, ws->quals))
		return;
	td = RelationGetDescr(ws->fact_rel);
	for (i = 0; i < ws->ndims; i++)
		if (ws->dims[i].fact_key == NULL || !IsA(ws->dims[i].fact_key, Var))
			return;
	/* the scan's context (the quals' and statistics'), not the engine's */
	old = MemoryContextSwitchTo(GetMemoryChunkContext(ss->files));
	for (i = 0; i < ws->ndims; i++)
	{
		WarpDim    *d = &ws->dims[i];
		Var		   *v = d->fact_key;
		Oid			t;
		int64		lo = 1,
					hi = 0;		/* no keys: every row goes */
		int64		r;

		if ((d->kind != WARP_JOIN_INNER && d->kind != WARP_JOIN_SEMI) || d->text_key ||
			d->key2_resno > 0 || v->varno != ws->fact_relid || v->varattno <= 0 ||
			v->varattno > td->natts)
			continue;
		t = TupleDescAttr(td, v->varattno - 1)->atttypid;
		if (t != INT2OID && t != INT4OID && t != INT8OID && t != DATEOID && t != TIMESTAMPOID)
			continue;
		for (r = 0; r < d->rows; r++)
		{
			if (r == 0 || d->keys[r] < lo)
				lo = d->keys[r];
			if (r == 0 || d->keys[r] > hi)
				hi = d->keys[r];
		}
		if (arrow_skip_join_range_add(&ss->skip, v->varattno - 1, t, lo, hi))
			n++;
	}
	if (n > 0)
		arrow_scan_reload_stats(ss);
	MemoryContextSwitchTo(old);
}

/* Build every dimension (or take it from the cache), once per execution. */
static void
build_dims(WarpScanState *ws)
{
	MemoryContext old;
	instr_time	t0,
				t1;
	int			i;

	if (ws->dims_ready)
		return;
	old = MemoryContextSwitchTo(ws->engine_cxt);
	INSTR_TIME_SET_CURRENT(t0);
	warp_dimcache_begin_query();
	ws->dims_cached = 0;
	ws->dims_read_by_engine = 0;
	initStringInfo(&ws->dims_not_cached);
	for (i = 0; i < ws->ndims; i++)
		build_dim(ws, &ws->dims[i]);
	set_join_ranges(ws);
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	ws->build_ms = INSTR_TIME_GET_MILLISEC(t1);
	ws->dims_ready = true;
	MemoryContextSwitchTo(old);
}

static void
run_engine(WarpScanState *ws)
{
	MemoryContext old = MemoryContextSwitchTo(ws->engine_cxt);
	instr_time	t0,
				t1;

	build_dims(ws);
	INSTR_TIME_SET_CURRENT(t0);
	build_program(ws);
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	ws->build_ms += INSTR_TIME_GET_MILLISEC(t1);
	MemoryContextSwitchTo(old);

	INSTR_TIME_SET_CURRENT(t0);
	ws->gres = NULL;
	ws->merged = NULL;
	ws->fallback[0] = '\0';
	if (ws->on_daemon && run_on_daemon(ws))
		;						/* ran there */
	else
	{
		if (ws->on_daemon)
			ereport(DEBUG1,
					(errmsg("pg_warp: running on the CPU in this backend: %s", ws->fallback)));
		strlcpy(ws->ran_on, "CPU", sizeof(ws->ran_on));
		run_cpu(ws);
	}
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	ws->scan_ms = INSTR_TIME_GET_MILLISEC(t1);

	INSTR_TIME_SET_CURRENT(t0);
	merge_groups(ws);
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	ws->merge_ms = INSTR_TIME_GET_MILLISEC(t1);
}

/* the thread's driver holding group *g, whose number becomes its own there */
static WarpCpu *
pool_group(WarpScanState *ws, int64 *g)
{
	while (ws->emit_cpu > 0 && *g < ws->pool_start[ws->emit_cpu])
		ws->emit_cpu--;
	while (ws->emit_cpu < ws->pool->ncpus - 1 && *g >= ws->pool_start[ws->emit_cpu + 1])
		ws->emit_cpu++;
	*g -= ws->pool_start[ws->emit_cpu];
	return ws->pool->cpus[ws->emit_cpu];
}

/*
 * Group g's text key k, whose value is an id in the driver that made the
 * group (threads and the single driver only: the planner keeps programs
 * with text columns away from the daemon).
 */
static Datum
group_key_text(WarpScanState *ws, int64 g, int k, int64 id)
{
	WarpCpu    *cpu = ws->cpu;
	int			col = warp_group_key_text_column(&ws->prog, ws->prog.keys[k].node);
	const uint8 *p = NULL;
	int64		len = 0;

	if (ws->merged)
		p = warp_group_merge_text(ws->merged, g, k, &len);
	else if (!ws->gres)
	{
		if (ws->pool)
			cpu = pool_group(ws, &g);
		p = warp_cpu_key_text(cpu, col, id, &len);
	}
	if (p == NULL)
		elog(ERROR, "pg_warp: text group key %d has no string", k);
	return PointerGetDatum(cstring_to_text_with_len((const char *) p, (int) len));
}

/* group g's key k and aggregate a's state, from whichever driver ran */
static int64
group_key(WarpScanState *ws, int64 g, int k, bool *isnull)
{
	if (ws->merged)
		return warp_group_merge_key(ws->merged, g, k, isnull);
	if (ws->gres)
	{
		uint8	   *r = (uint8 *) ws->gres;

		*isnull = r[ws->gres->off_nulls + g * ws->gres->nkeys + k] != 0;
		return ((int64 *) (r + ws->gres->off_keys))[g * ws->gres->nkeys + k];
	}
	if (ws->pool)
	{
		WarpCpu    *cpu = pool_group(ws, &g);

		return warp_cpu_group_key(cpu, g, k, isnull);
	}
	return warp_cpu_group_key(ws->cpu, g, k, isnull);
}

static const WarpAggState *
group_agg(WarpScanState *ws, int64 g, int a)
{
	if (ws->merged)
		return warp_group_merge_agg(ws->merged, g, a);
	if (ws->gres)
		return (const WarpAggState *) ((uint8 *) ws->gres + ws->gres->off_states) +
			g * ws->gres->naggs + a;
	if (ws->pool)
	{
		WarpCpu    *cpu = pool_group(ws, &g);

		return warp_cpu_group_agg(cpu, g, a);
	}
	return warp_cpu_group_agg(ws->cpu, g, a);
}

/*
 * sum(int8) and avg(int8) keep an internal state (PolyNumAggState); their
 * partial Aggref carries it serialized as PostgreSQL 15's
 * int8_avg_serialize writes it: the count (int64), then the sum as
 * numericvar_serialize writes a NumericVar — ndigits, weight, sign and
 * dscale as int32, then the base-10000 digits as int16, most significant
 * first, as int128_to_numericvar produces them.  int8_avg_deserialize on
 * the Finalize side reads it back; the regression and differential tests
 * compare the results with PostgreSQL's own.
 */
#define WARP_NUMERIC_POS 0x0000
#define WARP_NUMERIC_NEG 0x4000
static void
send_int128_numericvar(StringInfo buf, warp_int128 sum)
{
	unsigned __int128 mag = sum < 0 ? -(unsigned __int128) sum : (unsigned __int128) sum;
	int16		digits[16];
	int			nd = 0,
				i;

	while (mag != 0)
	{
		digits[nd++] = (int16) (mag % 10000);
		mag /= 10000;
	}
	pq_sendint32(buf, nd);
	pq_sendint32(buf, nd > 0 ? nd - 1 : 0);	/* weight */
	pq_sendint32(buf, sum < 0 ? WARP_NUMERIC_NEG : WARP_NUMERIC_POS);
	pq_sendint32(buf, 0);		/* dscale */
	for (i = nd - 1; i >= 0; i--)
		pq_sendint16(buf, digits[i]);
}

static Datum
int8_sum_state(int64 n, warp_int128 sum)
{
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendint64(&buf, n);
	send_int128_numericvar(&buf, sum);
	return PointerGetDatum(pq_endtypsend(&buf));
}

/*
 * var/stddev of int2/int4 keep a PolyNumAggState too (int4_accum, with
 * sumX2); numeric_poly_serialize writes N, then sumX and sumX2 as
 * numericvar_serialize does, both from int128 in PostgreSQL 15 builds with
 * int128 (numeric_poly_deserialize reads them back).
 */
static Datum
int_var_state(int64 n, warp_int128 sum, warp_int128 sumsq)
{
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendint64(&buf, n);
	send_int128_numericvar(&buf, sum);
	send_int128_numericvar(&buf, sumsq);
	return PointerGetDatum(pq_endtypsend(&buf));
}

/* divide a 192-bit magnitude (most significant word first) by 10 in
 * place; the remainder */
static int
mag192_div10(uint64 mag[3])
{
	unsigned __int128 r = 0;
	int			i;

	for (i = 0; i < 3; i++)
	{
		unsigned __int128 cur = (r << 64) | mag[i];

		mag[i] = (uint64) (cur / 10);
		r = cur % 10;
	}
	return (int) r;
}

/*
 * sum(numeric) and avg(numeric) keep an internal state (NumericAggState);
 * their partial Aggref carries it as PostgreSQL 15's numeric_avg_serialize
 * writes it: N (int64), sumX as numericvar_serialize writes a NumericVar,
 * maxScale (int32), maxScaleCount, NaNcount, pInfcount, nInfcount (int64).
 * The engine's inputs are the unscaled values of a numeric(p <= 18, s)
 * column, so the sum is the exact 128-bit integer `sum` at scale s; every
 * input has display scale s, so maxScale = s and maxScaleCount = N, as
 * numeric_avg_accum counts them (0 and 0 with no input).  A Decimal128 has
 * no NaN or infinity.
 */
static Datum
numeric_sum_state(int64 n, bool neg, const uint64 mag_in[3], int scale)
{
	uint64		mag[3] = {mag_in[0], mag_in[1], mag_in[2]};	/* most significant first */
	char		dec[128];
	int			len = 0,
				pad = (4 - scale % 4) % 4,
				ngroups,
				first,
				nd,
				i;
	int16		digits[32];
	StringInfoData buf;

	Assert(scale >= 0 && scale <= 38);
	/* decimal digits of the 192-bit magnitude (at most 58), then pad
	 * zeros so that the fraction is whole base-10000 digits */
	do
		dec[len++] = '0' + mag192_div10(mag);
	while (mag[0] != 0 || mag[1] != 0 || mag[2] != 0);
	while (len < scale + 1)
		dec[len++] = '0';		/* at least one integer digit */
	/* dec[] holds the digits least significant first; shift in the pad */
	memmove(dec + pad, dec, len);
	memset(dec, '0', pad);
	len += pad;
	/* group by 4 from the least significant end */
	ngroups = (len + 3) / 4;
	for (i = 0; i < ngroups; i++)
	{
		int			g = 0,
					k;

		for (k = 3; k >= 0; k--)
		{
			int			pos = i * 4 + k;

			g = g * 10 + (pos < len ? dec[pos] - '0' : 0);
		}
		digits[i] = (int16) g;	/* digits[0]: least significant */
	}
	/* drop leading zero groups */
	first = ngroups - 1;
	while (first > 0 && digits[first] == 0)
		first--;
	nd = (first == 0 && digits[0] == 0) ? 0 : first + 1;

	pq_begintypsend(&buf);
	pq_sendint64(&buf, n);
	/* sumX */
	pq_sendint32(&buf, nd);
	pq_sendint32(&buf, nd > 0 ? nd - 1 - (scale + pad) / 4 : 0);	/* weight */
	pq_sendint32(&buf, neg ? WARP_NUMERIC_NEG : WARP_NUMERIC_POS);
	pq_sendint32(&buf, n > 0 ? scale : 0);	/* dscale */
	for (i = nd - 1; i >= 0; i--)
		pq_sendint16(&buf, digits[i]);
	pq_sendint32(&buf, n > 0 ? scale : 0);	/* maxScale */
	pq_sendint64(&buf, n);		/* maxScaleCount */
	pq_sendint64(&buf, 0);		/* NaNcount */
	pq_sendint64(&buf, 0);		/* pInfcount */
	pq_sendint64(&buf, 0);		/* nInfcount */
	return PointerGetDatum(pq_endtypsend(&buf));
}

/* numeric_sum_state of a signed 128-bit sum */
static Datum
numeric_sum_state128(int64 n, warp_int128 sum, int scale)
{
	unsigned __int128 m = sum < 0 ? -(unsigned __int128) sum : (unsigned __int128) sum;
	uint64		mag[3] = {0, (uint64) (m >> 64), (uint64) m};

	return numeric_sum_state(n, sum < 0, mag, scale);
}

/*
 * numeric_sum_state of a 192-bit two's complement sum (WA_SUM_NUMERIC) of
 * values at scale + drop, shown at scale: its last drop digits are zero
 * (every value summed had at most `scale` decimals).
 */
static Datum
numeric_sum_state192(int64 n, const WarpAggState *s, int scale, int drop)
{
	uint64		mag[3] = {(uint64) s->wide_top, (uint64) s->wide_hi, s->wide_lo};
	bool		neg = s->wide_top < 0;
	int			k;

	if (neg)
	{
		/* negate: invert and add one */
		mag[0] = ~mag[0];
		mag[1] = ~mag[1];
		mag[2] = ~mag[2];
		if (++mag[2] == 0 && ++mag[1] == 0)
			++mag[0];
	}
	for (k = 0; k < drop; k++)
		if (mag192_div10(mag) != 0)
			elog(ERROR, "pg_warp: a numeric sum has digits beyond its display scale");
	return numeric_sum_state(n, neg, mag, scale);
}

/*
 * The display scale of numeric aggregate a's result for group g: its
 * argument's, as the program has it, or the largest among the group's
 * rows (a hidden aggregate, for a CASE/COALESCE of several scales).
 */
static const WarpAggState *group_agg(WarpScanState *ws, int64 g, int a);

static int
agg_numeric_scale(WarpScanState *ws, int a, int64 g)
{
	const WarpNode *nd = &ws->prog.nodes[ws->prog.aggs[a].arg];

	if (ws->agg_scale_agg[a] >= 0)
	{
		const WarpAggState *h = group_agg(ws, g, ws->agg_scale_agg[a]);

		return h->count > 0 ? (int) h->ival : 0;
	}

	if (nd->type == WT_NUMERIC)
		return nd->scale;
	Assert(nd->op == WN_COL && ws->prog.cols[nd->a].decimal);
	return ws->prog.cols[nd->a].scale;
}

/* the transition state of aggregate a for group g */
static Datum
agg_state_datum(WarpScanState *ws, int a, int64 g, bool *isnull)
{
	const WarpAggState *s = group_agg(ws, g, a);
	List	   *ai = list_nth(ws->agg_info, a);
	Oid			argtype = (Oid) intVal(lfourth(ai));
	Datum		d[3];

	*isnull = false;
	switch ((WarpAggKind) ws->prog.aggs[a].kind)
	{
		case WA_COUNT_STAR:
		case WA_COUNT:
			return Int64GetDatum(s->count);
		case WA_SUM_INT:
			*isnull = s->count == 0;
			return Int64GetDatum(s->ival);
		case WA_AVG_INT:
			/* int4_avg_accum's state: int8[2] {count, sum} */
			d[0] = Int64GetDatum(s->count);
			d[1] = Int64GetDatum(s->ival);
			return PointerGetDatum(construct_array(d, 2, INT8OID, 8, FLOAT8PASSBYVAL,
												   TYPALIGN_DOUBLE));
		case WA_MIN:
		case WA_MAX:
			*isnull = s->count == 0;
			if (argtype == FLOAT4OID)
				return Float4GetDatum((float4) s->fval);
			if (argtype == FLOAT8OID)
				return Float8GetDatum(s->fval);
			if (argtype == NUMERICOID && ws->prog.aggs[a].type == WT_NUMERIC)
				return NumericGetDatum(pgwarp_int128_to_numeric(warp_agg_wide(s), agg_numeric_scale(ws, a, g)));
			if (argtype == NUMERICOID)
				return NumericGetDatum(int64_div_fast_to_numeric(s->ival, agg_numeric_scale(ws, a, g)));
			return engine_value_datum(s->ival, argtype);
		case WA_SUM_FLOAT:
			*isnull = s->count == 0;
			return argtype == FLOAT4OID ? Float4GetDatum((float4) s->fval)
				: Float8GetDatum(s->fval);
		case WA_SUM_INT8:
			if (ws->agg_square_agg[a] >= 0)
				return int_var_state(s->count, warp_agg_wide(s),
									 warp_agg_wide(group_agg(ws, g, ws->agg_square_agg[a])));
			if (argtype == NUMERICOID)
				return numeric_sum_state128(s->count, warp_agg_wide(s), agg_numeric_scale(ws, a, g));
			return int8_sum_state(s->count, warp_agg_wide(s));
		case WA_SUM_NUMERIC:
			{
				int			sc = agg_numeric_scale(ws, a, g);

				return numeric_sum_state192(s->count, s, sc,
											ws->prog.nodes[ws->prog.aggs[a].arg].scale - sc);
			}
		case WA_AVG_FLOAT:
			/* float8_accum's state: float8[3] {N, Sx, Sxx} */
			d[0] = Float8GetDatum((float8) s->count);
			d[1] = Float8GetDatum(s->fval);
			d[2] = Float8GetDatum(s->fsxx);
			return PointerGetDatum(construct_array(d, 3, FLOAT8OID, 8, FLOAT8PASSBYVAL,
												   TYPALIGN_DOUBLE));
	}
	return (Datum) 0;
}

static struct OutCol *
out_columns(WarpScanState *ws)
{
	OutCol	   *oc = palloc0(sizeof(OutCol) * Max(list_length(ws->outmap), 1));
	ListCell   *lc;

	foreach(lc, ws->outmap)
	{
		OutCol	   *c = &oc[foreach_current_index(lc)];
		int			m = lfirst_int(lc);
		List	   *ki;
		Expr	   *ke;

		if (m < 0)
		{
			c->kind = OC_AGG;
			c->key = -m - 1;
			continue;
		}
		ki = list_nth(ws->key_info, m);
		ke = lsecond(ki);
		c->key = m;
		if (intVal(linitial(ki)) == WG_DIM)
		{
			c->kind = OC_DIM;
			c->dim = &ws->dims[intVal(lthird(ki))];
			c->col = intVal(lfourth(ki));
		}
		else if (list_length(ki) > 4)
		{
			ListCell   *sc;

			c->kind = OC_STRINGS;
			c->nstrings = list_length((List *) list_nth(ki, 4));
			c->strings = palloc(sizeof(Datum) * Max(c->nstrings, 1));
			foreach(sc, (List *) list_nth(ki, 4))
				c->strings[foreach_current_index(sc)] = CStringGetTextDatum(strVal(lfirst(sc)));
		}
		else if ((c->col = warp_group_key_text_column(&ws->prog, ws->prog.keys[m].node)) >= 0)
			c->kind = OC_TEXT;
		else if (exprType((Node *) ke) == NUMERICOID)
		{
			/* a numeric column or extract(): its unscaled value at the
			 * column's (field's) scale */
			c->kind = OC_NUMERIC;
			c->scale = warp_group_key_numeric_scale(ke);
		}
		else
		{
			c->kind = OC_VALUE;
			c->type = exprType((Node *) ke);
		}
	}
	return oc;
}

/*
 * Output column i of group (in row mode: row) g.  A group of this
 * process's drivers is read from its driver directly (cpu, lg: g in its
 * own numbering); merged groups and the daemon's (cpu NULL) through
 * group_key.
 */
static Datum
group_datum(WarpScanState *ws, WarpCpu *cpu, int64 lg, int64 g, int i, bool *isnull)
{
	const OutCol *c = &ws->out_cols[i];
	int64		v;

	if (c->kind == OC_AGG)
		return agg_state_datum(ws, c->key, g, isnull);
	v = cpu ? warp_cpu_group_key(cpu, lg, c->key, isnull) : group_key(ws, g, c->key, isnull);
	if (c->kind == OC_DIM)
	{
		WarpDim    *d = c->dim;

		if (v == d->npayloads && d->kind == WARP_JOIN_LEFT)
		{
			/* a left join's row without a match */
			*isnull = true;
			return (Datum) 0;
		}
		if (v < 0 || v >= d->npayloads)
			elog(ERROR, "pg_warp: group key names no dimension row");
		*isnull = d->pnulls[v * d->npay + c->col];
		return d->pvalues[v * d->npay + c->col];
	}
	if (*isnull)
		return (Datum) 0;
	if (c->kind == OC_TEXT)
		return group_key_text(ws, g, c->key, v);
	if (c->kind == OC_STRINGS)
	{
		if (v < 0 || v >= c->nstrings)
			elog(ERROR, "pg_warp: group key names no string of its CASE");
		return c->strings[v];
	}
	if (c->kind == OC_NUMERIC)
		return NumericGetDatum(int64_div_fast_to_numeric(v, c->scale));
	return engine_value_datum(v, c->type);
}

/* the driver holding group g, and g in its numbering */
static WarpCpu *
group_driver(WarpScanState *ws, int64 *lg)
{
	if (ws->merged || ws->gres)
		return NULL;
	return ws->pool ? pool_group(ws, lg) : ws->cpu;
}

/* group (row) g into the slot's values */
static void
store_group(WarpScanState *ws, TupleTableSlot *slot, int64 g)
{
	int64		lg = g;
	WarpCpu    *cpu = group_driver(ws, &lg);
	int			n = list_length(ws->outmap);
	int			i;

	for (i = 0; i < n; i++)
		slot->tts_values[i] = group_datum(ws, cpu, lg, g, i, &slot->tts_isnull[i]);
}

/* under Gather: this participant's counts, for the leader's EXPLAIN */
static void
share_counters(WarpScanState *ws)
{
	if (ws->wshared)
	{
		pg_atomic_fetch_add_u64(&ws->wshared->rows_in, ws->counters.rows_in);
		pg_atomic_fetch_add_u64(&ws->wshared->rows_filtered, ws->counters.rows_filtered);
		pg_atomic_fetch_add_u64(&ws->wshared->rows_joined, ws->counters.rows_joined);
		pg_atomic_fetch_add_u64(&ws->wshared->groups, ws->groups);
	}
}

/* Row mode: the dimensions, the program and the driver, before any batch. */
static void
rows_start(WarpScanState *ws)
{
	MemoryContext old = MemoryContextSwitchTo(ws->engine_cxt);
	WarpJoinTable **tables;
	instr_time	t0,
				t1;

	build_dims(ws);
	INSTR_TIME_SET_CURRENT(t0);
	build_program(ws);
	tables = build_join_tables(ws);
	if (ws->nthreads > 1)
	{
		ws->row_tables = tables;
		ws->row_units = pool_units(ws, &ws->row_nunits);
		ws->row_next_unit = 0;
		ws->round_cxt = AllocSetContextCreate(ws->engine_cxt, "pg_warp WarpJoin round",
											  ALLOCSET_SMALL_SIZES);
	}
	else
	{
		ws->cpu = warp_cpu_create(&ws->prog, tables, &ws->alloc);
		if (ws->cpu == NULL)
			report_status(WARP_ERR_OUT_OF_MEMORY);
	}
	ws->batch_cols = palloc0(sizeof(ArrowArray) * Max(ws->prog.ncols, 1));
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	ws->build_ms += INSTR_TIME_GET_MILLISEC(t1);
	strlcpy(ws->ran_on, "CPU", sizeof(ws->ran_on));
	ws->fallback[0] = '\0';
	ws->rows_status = WARP_OK;
	ws->rows_load = WARP_LOAD_OK;
	MemoryContextSwitchTo(old);
}

/*
 * Batches per WarpJoin round on threads: enough to keep the threads busy
 * (the pool cuts big batches into parts), few enough to stream and to bound
 * the round's rows in memory: up to this many bytes of batch bodies per
 * thread (SSB SF=20: 77 MB batches of 1M rows, so 3 batches for 17 threads,
 * 1 for 2), and at most 8 batches per thread.
 */
#define WARP_ROUND_BYTES_PER_THREAD (16 * 1024 * 1024)

/*
 * Row mode on threads: the next round of units through a new pool, its
 * drivers' rows numbered for emitting; false when no unit is left.  When a
 * unit fails, the round runs again on one thread, in scan order: its rows
 * up to the failing one go up first and the error after them
 * (row_failed_pool), as from PostgreSQL's own scan and the serial plan, so
 * a LIMIT met before the failing row stops the query without the error.
 */
static bool
rows_next_round(WarpScanState *ws)
{
	WarpCpuPool *pool;
	int			n = 0;
	uint64		bytes = 0;

	while (ws->row_next_unit + n < ws->row_nunits && n < 8 * ws->nthreads &&
		   (n == 0 || bytes < (uint64) ws->nthreads * WARP_ROUND_BYTES_PER_THREAD))
	{
		const WarpPoolBatch *u = &ws->row_units[ws->row_next_unit + n];

		bytes += ws->scan.files[u->file].file.batches[u->batch].body_len;
		n++;
	}
	ws->pool = NULL;
	ws->row_failed_pool = NULL;
	ws->groups = 0;
	ws->next_group = 0;
	MemoryContextReset(ws->round_cxt);	/* frees the last round's pool */
	if (n <= 0)
		return false;
	pool = pool_create(ws, ws->row_tables, ws->round_cxt);
	pool->batches = ws->row_units + ws->row_next_unit;
	pool->nbatches = n;
	(void) pool_execute(ws, pool);	/* no float sums in row mode: no re-run */
	if (pool->error == WARP_POOL_STATUS || pool->error == WARP_POOL_LOAD ||
		pool->error == WARP_POOL_ARROW)
	{
		warp_cpu_pool_free(pool);
		pool = pool_create(ws, ws->row_tables, ws->round_cxt);
		pool->batches = ws->row_units + ws->row_next_unit;
		pool->nbatches = n;
		pool->nthreads = 1;
		(void) pool_execute(ws, pool);
		ws->row_failed_pool = pool;
	}
	else
		pool_raise(ws, pool);
	ws->row_next_unit += n;
	ws->pool = pool;
	ws->counters.rows_in += pool->counters.rows_in;
	ws->counters.rows_filtered += pool->counters.rows_filtered;
	ws->counters.rows_joined += pool->counters.rows_joined;
	pool_number_groups(ws);
	return true;
}

/*
 * Row mode: the next batch (or part) through the driver, its joined rows
 * left in the driver's table; false when no batch is left.  An error is
 * kept: the rows before the failing one (the driver stops there) go up
 * first, as PostgreSQL's scan would have returned them.
 */
static bool
rows_next_batch(WarpScanState *ws)
{
	ExprContext *econtext = ws->css.ss.ps.ps_ExprContext;
	instr_time	t0,
				t1;
	bool		more;

	INSTR_TIME_SET_CURRENT(t0);
	if (ws->nthreads > 1)
	{
		more = rows_next_round(ws);
		INSTR_TIME_SET_CURRENT(t1);
		INSTR_TIME_SUBTRACT(t1, t0);
		ws->scan_ms += INSTR_TIME_GET_MILLISEC(t1);
		return more;
	}
	warp_cpu_reset_groups(ws->cpu);
	ws->groups = 0;
	ws->next_group = 0;
	more = arrow_scan_next_batch(&ws->scan, econtext, false);
	if (more)
	{
		ws->rows_bad_col = 0;
		ws->rows_bad_row = 0;
		ws->rows_status = run_current_batch(ws, &ws->rows_load, &ws->rows_bad_col,
											&ws->rows_bad_row);
		ws->rows_bad_file = ws->scan.cur_file;
		ws->groups = warp_cpu_ngroups(ws->cpu);
	}
	warp_cpu_counters(ws->cpu, &ws->counters);
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	ws->scan_ms += INSTR_TIME_GET_MILLISEC(t1);
	return more;
}

/*
 * Row mode: the error kept until the rows before the failing row went up
 * (a round's, on threads, or the serial driver's), if any.
 */
static void
rows_raise_pending(WarpScanState *ws)
{
	if (ws->row_failed_pool)
		pool_raise(ws, ws->row_failed_pool);
	if (ws->rows_status != WARP_OK)
		report_status(ws->rows_status);
	if (ws->rows_load != WARP_LOAD_OK)
		report_load_error(ws, ws->rows_load, ws->rows_bad_col, ws->rows_bad_row,
						  ws->scan.files[ws->rows_bad_file].path);
}

/*
 * Row mode with ORDER BY ... LIMIT in the node: every batch (round) is
 * consumed into the top-N set before the first row goes up, as PostgreSQL's
 * Sort consumes its input (so every error is raised, as there).  A row is
 * built only when its ORDER BY columns alone say it would be kept.
 */
static void
topn_fill(WarpScanState *ws)
{
	ExprContext *econtext = ws->css.ss.ps.ps_ExprContext;
	int			nk = ws->topn_nkeys;
	Datum	   *keys = palloc(sizeof(Datum) * nk);
	bool	   *nulls = palloc(sizeof(bool) * nk);
	MemoryContext old;

	for (;;)
	{
		int64		g;

		CHECK_FOR_INTERRUPTS();
		if (!rows_next_batch(ws))
			break;
		for (g = 0; g < ws->groups; g++)
		{
			int64		lg = g;
			WarpCpu    *cpu = group_driver(ws, &lg);
			int			k;

			if ((g & 1023) == 0)
			{
				ResetExprContext(econtext);
				CHECK_FOR_INTERRUPTS();
			}
			/* text keys are built in the per-tuple memory */
			old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
			for (k = 0; k < nk; k++)
				keys[k] = group_datum(ws, cpu, lg, g, ws->topn_keys[k].col, &nulls[k]);
			if (warp_topn_wanted(ws->topn, keys, nulls))
			{
				ExecClearTuple(ws->topn_slot);
				store_group(ws, ws->topn_slot, g);
				ExecStoreVirtualTuple(ws->topn_slot);
				warp_topn_add(ws->topn, ws->topn_slot);
				ws->topn_built++;
			}
			MemoryContextSwitchTo(old);
		}
		ws->rows_out += ws->groups;
		/* the rows before a failing one are in: now its error */
		rows_raise_pending(ws);
	}
	ResetExprContext(econtext);
	ws->rows_done = true;
	ws->groups = ws->rows_out;	/* for EXPLAIN and the leader */
	ws->next_group = ws->groups;
	share_counters(ws);
	warp_topn_sort(ws->topn);
}

static TupleTableSlot *
topn_next(WarpScanState *ws, TupleTableSlot *slot)
{
	if (!ws->executed)
	{
		rows_start(ws);
		ws->executed = true;
	}
	if (!ws->topn_done)
	{
		topn_fill(ws);
		ws->topn_done = true;
	}
	warp_topn_next(ws->topn, slot);
	return slot;
}

/* Row mode: the next joined row, or an empty slot at the end. */
static TupleTableSlot *
rows_next(WarpScanState *ws, TupleTableSlot *slot)
{
	ExprContext *econtext = ws->css.ss.ps.ps_ExprContext;

	if (ws->topn)
		return topn_next(ws, slot);
	if (!ws->executed)
	{
		rows_start(ws);
		ws->executed = true;
	}
	ExecClearTuple(slot);
	for (;;)
	{
		if (ws->next_group < ws->groups)
		{
			/* text values live until the next tuple (ExecScan resets) */
			MemoryContext old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);

			store_group(ws, slot, ws->next_group++);
			MemoryContextSwitchTo(old);
			ws->rows_out++;
			return ExecStoreVirtualTuple(slot);
		}
		rows_raise_pending(ws);
		if (ws->rows_done)
			return slot;
		CHECK_FOR_INTERRUPTS();
		if (!rows_next_batch(ws))
		{
			ws->rows_done = true;
			ws->groups = ws->rows_out;	/* for EXPLAIN and the leader */
			ws->next_group = ws->groups;
			share_counters(ws);
		}
	}
}

/*
 * The constant quals (WHERE $1 > 0), evaluated once per scan before any
 * dimension is built or batch read, as PostgreSQL's gating Result does:
 * false or NULL, and the node returns nothing.
 */
static bool
gate_open(WarpScanState *ws)
{
	if (!ws->gate_checked)
	{
		ExprContext *econtext = ws->css.ss.ps.ps_ExprContext;

		ResetExprContext(econtext);
		ws->gate_closed = !ExecQual(ws->gate, econtext);
		ws->gate_checked = true;
	}
	return !ws->gate_closed;
}

static TupleTableSlot *
warp_next(ScanState *node)
{
	WarpScanState *ws = (WarpScanState *) node;
	TupleTableSlot *slot = node->ss_ScanTupleSlot;

	if (!gate_open(ws))
	{
		ws->executed = true;
		return ExecClearTuple(slot);
	}
	if (ws->emit_rows)
		return rows_next(ws, slot);
	if (!ws->executed)
	{
		run_engine(ws);
		ws->executed = true;
		ws->next_group = 0;
		share_counters(ws);
	}
	ExecClearTuple(slot);
	if (ws->next_group >= ws->groups)
		return slot;
	store_group(ws, slot, ws->next_group++);
	return ExecStoreVirtualTuple(slot);
}

static bool
warp_recheck(ScanState *node, TupleTableSlot *slot)
{
	return true;
}

/* ----------------------------------------------------- executor methods */

static Node *
warp_create_state(CustomScan *cscan)
{
	WarpScanState *ws = (WarpScanState *) newNode(sizeof(WarpScanState), T_CustomScanState);

	ws->css.methods = &warp_preagg_exec_methods;
	return (Node *) ws;
}

static void
warp_begin(CustomScanState *node, EState *estate, int eflags)
{
	WarpScanState *ws = (WarpScanState *) node;
	CustomScan *cs = (CustomScan *) node->ss.ps.plan;
	List	   *ids = linitial(cs->custom_private);
	List	   *joins = lfourth(cs->custom_private);
	List	   *misc = list_nth(cs->custom_private, 4);
	Bitmapset  *attrs = NULL;
	ListCell   *lc,
			   *pc;
	int			j;

	ws->fact_relid = intVal(linitial(ids));
	ws->rtoffset = bms_next_member(cs->custom_relids, -1) - intVal(lsecond(ids));
	ws->quals = lsecond(cs->custom_private);
	ws->fact_attrs = lthird(cs->custom_private);
	ws->key_info = linitial(misc);
	ws->agg_info = lsecond(misc);
	ws->outmap = lthird(misc);
	ws->gate = ExecInitQual(list_length(misc) > 3 ? (List *) lfourth(misc) : NIL, &node->ss.ps);
	ws->gate_checked = false;
	ws->fact_oid = linitial_oid((List *) list_nth(cs->custom_private, 5));
	ws->on_daemon = intVal(list_nth(cs->custom_private, 6)) != 0;
	ws->daemon_gpu = intVal(list_nth(cs->custom_private, 6)) == 1 + GPUD_DEVICE_GPU;

	ws->engine_cxt = AllocSetContextCreate(estate->es_query_cxt, "pg_warp engine",
										   ALLOCSET_DEFAULT_SIZES);
	ws->alloc.alloc = engine_alloc;
	ws->alloc.ctx = ws->engine_cxt;

	ws->ndims = list_length(joins);
	ws->dims = palloc0(sizeof(WarpDim) * Max(ws->ndims, 1));
	j = 0;
	forboth(lc, joins, pc, cs->custom_plans)
	{
		List	   *jn = lfirst(lc);
		WarpDim    *d = &ws->dims[j++];
		Plan	   *plan = lfirst(pc);
		List	   *presnos = lthird(jn);
		ListCell   *ac;
		int			k = 0;

		d->fact_key = linitial(jn);
		d->dim_key = lsecond(jn);
		d->text_key = d->dim_key->vartype == TEXTOID || d->dim_key->vartype == VARCHAROID;
		d->ps = ExecInitNode(plan, estate, eflags);
		node->custom_ps = lappend(node->custom_ps, d->ps);
		d->key_resno = intVal(lfourth(jn));
		d->kind = intVal(list_nth(jn, 4));
		d->key2_resno = intVal(list_nth(jn, 5));
		d->key_display = list_nth(jn, 6);
		d->npay = list_length(presnos);
		d->pay_resno = palloc(sizeof(int) * Max(d->npay, 1));
		d->pay_len = palloc(sizeof(int16) * Max(d->npay, 1));
		d->pay_byval = palloc(sizeof(bool) * Max(d->npay, 1));
		check_resno(plan, d->key_resno);
		if (d->key2_resno > 0)
			check_resno(plan, d->key2_resno);
		foreach(ac, presnos)
		{
			int			resno = lfirst_int(ac);
			TargetEntry *tle;

			check_resno(plan, resno);
			tle = list_nth(plan->targetlist, resno - 1);
			d->pay_resno[k] = resno;
			get_typlenbyval(exprType((Node *) tle->expr), &d->pay_len[k], &d->pay_byval[k]);
			k++;
		}
	}

	ws->fact_rel = table_open(ws->fact_oid, AccessShareLock);
	ws->heap = list_length(cs->custom_private) > 7 && intVal(list_nth(cs->custom_private, 7)) != 0;
	ws->distinct_key = ws->distinct_agg = -1;
	if (list_length(cs->custom_private) > 9)
	{
		ws->distinct_key = intVal(list_nth(cs->custom_private, 8));
		ws->distinct_agg = intVal(list_nth(cs->custom_private, 9));
	}
	foreach(lc, ws->fact_attrs)
		attrs = bms_add_member(attrs, lfirst_int(lc) - FirstLowInvalidHeapAttributeNumber);
	if (!ws->heap)
		arrow_scan_begin(&ws->scan, ws->fact_rel, attrs, ws->quals, ws->fact_relid,
						 &node->ss.ps, (eflags & EXEC_FLAG_EXPLAIN_ONLY) != 0);
	/* the CPU driver takes big batches in parts (arrow_scan.h) */
	ws->scan.parts_per_batch = WARP_SCAN_PARTS;
	ws->emit_rows = list_length(cs->custom_private) > 10 &&
		intVal(list_nth(cs->custom_private, 10)) != 0;
	if (list_length(cs->custom_private) > 11)
	{
		/* (columns, operators, collations, NULLS FIRST, (bound)) */
		List	   *order = list_nth(cs->custom_private, 11);
		List	   *cols = linitial(order);
		ListCell   *oc,
				   *cc,
				   *nc;
		int			k = 0;

		ws->topn_nkeys = list_length(cols);
		ws->topn_keys = palloc(sizeof(WarpTopNKey) * ws->topn_nkeys);
		ws->topn_bound = linitial_int((List *) list_nth(order, 4));
		forfour(cc, cols, oc, (List *) lsecond(order), nc, (List *) lfourth(order),
				pc, (List *) lthird(order))
		{
			ws->topn_keys[k].col = lfirst_int(cc);
			ws->topn_keys[k].sortop = lfirst_oid(oc);
			ws->topn_keys[k].nulls_first = lfirst_int(nc) != 0;
			ws->topn_keys[k].collation = lfirst_oid(pc);
			k++;
		}
		ws->topn_slot = MakeSingleTupleTableSlot(node->ss.ss_ScanTupleSlot->tts_tupleDescriptor,
												 &TTSOpsVirtual);
		ws->topn = warp_topn_create(node->ss.ss_ScanTupleSlot->tts_tupleDescriptor,
									ws->topn_nkeys, ws->topn_keys, ws->topn_bound,
									estate->es_query_cxt);
	}
	/* under Gather each participant is one thread; else pg_warp.cpu_threads */
	ws->nthreads = node->ss.ps.plan->parallel_aware ? 1 : pgwarp_cpu_thread_count();
}

static TupleTableSlot *
warp_exec(CustomScanState *node)
{
	return ExecScan(&node->ss, warp_next, warp_recheck);
}

static void
warp_end(CustomScanState *node)
{
	WarpScanState *ws = (WarpScanState *) node;
	ListCell   *lc;

	foreach(lc, node->custom_ps)
		ExecEndNode(lfirst(lc));
	if (ws->topn_slot)
		ExecDropSingleTupleTableSlot(ws->topn_slot);
	arrow_scan_end(&ws->scan);
	if (ws->fact_rel)
		table_close(ws->fact_rel, AccessShareLock);
}

static void
warp_rescan(CustomScanState *node)
{
	WarpScanState *ws = (WarpScanState *) node;
	ListCell   *lc;
	int			i;

	foreach(lc, node->custom_ps)
		ExecReScan(lfirst(lc));
	if (!ws->heap)
		arrow_scan_rescan(&ws->scan);
	MemoryContextReset(ws->engine_cxt);
	ws->cpu = NULL;
	ws->pool = NULL;
	ws->pool_start = NULL;
	ws->gres = NULL;
	ws->merged = NULL;
	ws->executed = false;
	ws->gate_checked = false;
	ws->dims_ready = false;
	ws->dims_not_cached.data = NULL;	/* was in engine_cxt */
	ws->dims_not_cached.len = 0;
	for (i = 0; i < ws->ndims; i++)
	{
		/* freed with engine_cxt: built again from the rebuilt dimension */
		ws->dims[i].table = NULL;
		ws->dims[i].table_ready = false;
	}
	ws->build_ms = 0;
	ws->groups = 0;
	ws->next_group = 0;
	ws->rows_done = false;
	ws->rows_status = WARP_OK;
	ws->rows_load = WARP_LOAD_OK;
	ws->rows_out = 0;
	ws->round_cxt = NULL;		/* was engine_cxt's child */
	ws->row_failed_pool = NULL;
	if (ws->topn)
		warp_topn_reset(ws->topn);
	ws->topn_done = false;
	ws->topn_built = 0;
	ws->out_cols = NULL;
	ws->row_tables = NULL;
	ws->row_units = NULL;
}

/* an expression of the plan, with its Vars moved by setrefs' offset */
static char *
deparse(WarpScanState *ws, List *context, Node *expr)
{
	Node	   *e = copyObject(expr);

	if (ws->rtoffset != 0)
		OffsetVarNodes(e, ws->rtoffset, 0);
	return deparse_expression(e, context, true, false);
}

static void
warp_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	WarpScanState *ws = (WarpScanState *) node;
	List	   *context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	StringInfoData buf;
	ListCell   *lc;
	int			j;

	if (!ws->on_daemon)
		ExplainPropertyText("Engine", "CPU", es);
	else if (pgwarp_explain_stable)
		ExplainPropertyText("Engine", "pg_warp_gpud", es);
	else
		ExplainPropertyText("Engine", ws->daemon_gpu ? "GPU (pg_warp_gpud)" : "CPU (pg_warp_gpud)", es);
	/* (WarpScan's node line names its table) */
	if (((CustomScan *) node->ss.ps.plan)->scan.scanrelid == 0)
		ExplainPropertyText("Fact Table", RelationGetRelationName(ws->fact_rel), es);
	if (ws->quals)
	{
		Node	   *q = (Node *) make_ands_explicit(ws->quals);

		ExplainPropertyText("Engine Filter", deparse(ws, context, q), es);
	}
	{
		List	   *misc = list_nth(((CustomScan *) node->ss.ps.plan)->custom_private, 4);

		if (list_length(misc) > 3 && lfourth(misc) != NIL)
			ExplainPropertyText("One-Time Filter",
								deparse(ws, context, (Node *) make_ands_explicit(lfourth(misc))), es);
	}
	if (ws->topn)
	{
		/* ORDER BY ... LIMIT kept here: "Top-N: 100 by a DESC, b" */
		List	   *tl = ((CustomScan *) node->ss.ps.plan)->custom_scan_tlist;
		StringInfoData tn;

		initStringInfo(&tn);
		appendStringInfo(&tn, INT64_FORMAT " by ", ws->topn_bound);
		for (j = 0; j < ws->topn_nkeys; j++)
		{
			TargetEntry *te = list_nth(tl, ws->topn_keys[j].col);
			Oid			opfamily,
						opcintype;
			int16		strategy;
			bool		desc;

			desc = get_ordering_op_properties(ws->topn_keys[j].sortop, &opfamily, &opcintype,
											  &strategy) && strategy == BTGreaterStrategyNumber;

			appendStringInfo(&tn, "%s%s%s%s", j ? ", " : "",
							 deparse_expression((Node *) te->expr, context, true, false),
							 desc ? " DESC" : "",
							 ws->topn_keys[j].nulls_first != desc ?
							 (desc ? " NULLS LAST" : " NULLS FIRST") : "");
		}
		ExplainPropertyText("Top-N", tn.data, es);
		if (es->analyze && ws->executed)
		{
			/* rows the engine returned (fewer than joined where it drops
			 * rows by the first key), and those built as tuples */
			ExplainPropertyInteger("Top-N Rows Offered", NULL, ws->rows_out, es);
			ExplainPropertyInteger("Top-N Rows Built", NULL, ws->topn_built, es);
		}
	}
	initStringInfo(&buf);
	for (j = 0; j < ws->ndims; j++)
	{
		static const char *const kinds[] = {"", " (left)", " (semi)", " (anti)"};

		if (ws->dims[j].key_display != NIL)
		{
			List	   *fv = linitial(ws->dims[j].key_display);
			List	   *dv = lsecond(ws->dims[j].key_display);

			appendStringInfo(&buf, "%s(%s, %s) = (%s, %s)%s", j ? ", " : "",
							 deparse(ws, context, linitial(fv)),
							 deparse(ws, context, lsecond(fv)),
							 deparse(ws, context, linitial(dv)),
							 deparse(ws, context, lsecond(dv)),
							 kinds[ws->dims[j].kind]);
		}
		else
			appendStringInfo(&buf, "%s%s = %s%s", j ? ", " : "",
							 deparse(ws, context, (Node *) ws->dims[j].fact_key),
							 deparse(ws, context, (Node *) ws->dims[j].dim_key),
							 kinds[ws->dims[j].kind]);
	}
	if (ws->ndims)
		ExplainPropertyText("Join Keys", buf.data, es);
	resetStringInfo(&buf);
	/* group keys are the scan tlist entries the output map marks as keys */
	foreach(lc, ws->outmap)
	{
		CustomScan *cs = (CustomScan *) node->ss.ps.plan;
		TargetEntry *tle = list_nth(cs->custom_scan_tlist, foreach_current_index(lc));

		if (lfirst_int(lc) >= 0)
			appendStringInfo(&buf, "%s%s", buf.len ? ", " : "",
							 deparse_expression((Node *) tle->expr, context, true, false));
	}
	if (buf.len && !ws->emit_rows)
		ExplainPropertyText("Group Keys", buf.data, es);
	if (ws->distinct_agg >= 0)
	{
		/* grouped by it too, merged, then counted per group key */
		List	   *ki = list_nth(ws->key_info, ws->distinct_key);

		ExplainPropertyText("Counts DISTINCT", deparse(ws, context, lsecond(ki)), es);
	}
	if (!ws->emit_rows)
		ExplainPropertyInteger("Partial Aggregates", NULL, list_length(ws->agg_info), es);
	if (ws->heap)
	{
		ExplainPropertyText("Fact Storage", "heap (PostgreSQL's table access method)", es);
	}
	else
		arrow_scan_explain(&ws->scan, RelationGetDescr(ws->fact_rel), es);
	if (es->analyze && ws->executed)
	{
		/* under Gather: every participant's, summed (groups are partial
		 * groups, as many as the node returned in all) */
		const WarpCpuCounters *c = ws->have_totals ? &ws->total_counters : &ws->counters;

		ExplainPropertyInteger("Fact Rows", NULL, c->rows_in, es);
		ExplainPropertyInteger("Rows After Filter", NULL, c->rows_filtered, es);
		ExplainPropertyInteger("Rows After Joins", NULL, c->rows_joined, es);
		/* groups emitted: with threads, merged (warp_group_merge.h) unless
		 * a combination would overflow, so left out of stable output */
		if ((!pgwarp_explain_stable || ws->pool == NULL) && !ws->emit_rows)
			ExplainPropertyInteger("Groups", NULL, ws->have_totals ? ws->total_groups : ws->groups, es);
		if (!pgwarp_explain_stable)
		{
			ExplainPropertyText("Ran On", ws->ran_on, es);
			if (ws->pool)
				ExplainPropertyInteger("CPU Threads", NULL, ws->pool->nthreads, es);
			else if (ws->emit_rows && ws->row_units != NULL)
				ExplainPropertyInteger("CPU Threads", NULL, ws->nthreads, es);
			if (ws->merged)
			{
				/* the threads' or lanes' groups, merged into Groups */
				ExplainPropertyInteger("Partial Groups Merged", NULL, ws->unmerged_groups, es);
				ExplainPropertyFloat("Merge Time", "ms", ws->merge_ms, 3, es);
			}
			else if (ws->merge_skipped)
			{
				ExplainPropertyText("Groups Not Merged", ws->merge_skipped, es);
				ExplainPropertyFloat("Merge Time", "ms", ws->merge_ms, 3, es);
			}
			if (ws->ndims > 0)
			{
				ExplainPropertyInteger("Dimensions From Cache", NULL, ws->dims_cached, es);
				ExplainPropertyInteger("Dimensions Read by Engine", NULL,
									   ws->dims_read_by_engine, es);
				if (ws->dims_not_cached.data && ws->dims_not_cached.len > 0)
					ExplainPropertyText("Dimensions Not Cached", ws->dims_not_cached.data, es);
			}
			if (ws->fallback[0])
				ExplainPropertyText("Fallback", ws->fallback, es);
			if (ws->gres && ws->gres->ran_on == GPUD_DEVICE_GPU)
			{
				double		gbs = ws->gres->h2d_ms > 0 ?
					ws->gres->bytes_h2d / (ws->gres->h2d_ms * 1e6) : 0;

				ExplainPropertyInteger("Files Via Registered Windows", NULL,
									   ws->gres->windows, es);
				ExplainPropertyInteger("Bytes To Device", NULL, ws->gres->bytes_h2d, es);
				ExplainPropertyInteger("Bytes From GPU Cache", NULL, ws->gres->bytes_cached, es);
				ExplainPropertyFloat("Copy Rate", "GB/s", gbs, 1, es);
				ExplainPropertyFloat("Copy Time", "ms", ws->gres->h2d_ms, 3, es);
				ExplainPropertyFloat("Kernel Time", "ms", ws->gres->kernel_ms, 3, es);
			}
			if (ws->gres)
				ExplainPropertyFloat("Daemon Time", "ms", ws->gres->total_ms, 3, es);
			if (ws->gres && ws->gres->batches_ahead > 0)
				ExplainPropertyInteger("Batches Loaded Ahead", NULL, ws->gres->batches_ahead, es);
			if (ws->gres && ws->gres->columns_cached > 0)
				ExplainPropertyInteger("Compressed Columns From GPU Cache", NULL,
									   ws->gres->columns_cached, es);
			if (ws->gres && ws->gres->ran_on == GPUD_DEVICE_GPU)
			{
				const double *ph = ws->gres->phase_ms;
				char	   *txt = psprintf("reserve %.1f, create %.1f, batches %.1f, finish %.1f ms; "
										   "group flushes: copy %.1f, host %.1f ms",
										   ph[GPUD_PHASE_RESERVE], ph[GPUD_PHASE_CREATE],
										   ph[GPUD_PHASE_BATCHES], ph[GPUD_PHASE_FINISH],
										   ph[GPUD_PHASE_FLUSH_COPY], ph[GPUD_PHASE_FLUSH_HOST]);

				ExplainPropertyText("Daemon Phases", txt, es);
			}
			ExplainPropertyFloat("Build Time", "ms", ws->build_ms, 3, es);
			ExplainPropertyFloat("Scan Time", "ms", ws->scan_ms, 3, es);
		}
	}
}

/* -------------------------------------------------------------- parallel */

static Size
warp_estimate_dsm(CustomScanState *node, ParallelContext *pcxt)
{
	WarpScanState *ws = (WarpScanState *) node;
	Size		bytes;
	int			i;
	bool		share;

	/*
	 * The leader builds the dimensions now, before the workers start, and
	 * hands them over in the DSM: one build per query instead of one per
	 * participant (on few cores the workers' builds ran one after another).
	 * Only when no dimension plan depends on a parameter: a rescan changes
	 * no dimension then, so the DSM copy stays right for relaunched workers.
	 * Not when the gate is closed: nothing is built then.
	 */
	ws->dims_shared_bytes = 0;
	ws->heap_pscan_off = 0;
	share = gate_open(ws);
	for (i = 0; share && i < ws->ndims; i++)
		if (!bms_is_empty(ws->dims[i].ps->plan->extParam) ||
			!bms_is_empty(ws->dims[i].ps->plan->allParam) ||
			ws->dims[i].text_key)	/* its strings are not shared */
			share = false;
	if (!share)
	{
		bytes = MAXALIGN(sizeof(WarpShared));
		if (ws->heap)
		{
			/* the heap scan's shared state after the rest */
			ws->heap_pscan_off = bytes;
			bytes = add_size(bytes, table_parallelscan_estimate(ws->fact_rel,
																ws->css.ss.ps.state->es_snapshot));
		}
		return bytes;
	}
	build_dims(ws);

	/*
	 * The join tables too: the workers attach to the leader's (in the DSM)
	 * instead of each building its own from the rows.  No text keys here
	 * (above), so the tables are built from the keys as build_program
	 * leaves them.
	 */
	{
		MemoryContext old = MemoryContextSwitchTo(ws->engine_cxt);

		(void) build_join_tables(ws);
		MemoryContextSwitchTo(old);
		for (i = 0; i < ws->ndims; i++)
			ws->dims[i].table_ready = true;
	}
	bytes = MAXALIGN(sizeof(WarpShared)) + MAXALIGN(sizeof(WarpSharedDim) * Max(ws->ndims, 1));
	for (i = 0; i < ws->ndims; i++)
	{
		WarpDim    *d = &ws->dims[i];
		int64		v;

		bytes = add_size(bytes, MAXALIGN(mul_size(sizeof(int64), d->rows)));
		bytes = add_size(bytes, MAXALIGN(mul_size(sizeof(int32), d->rows)));
		for (v = 0; v < (int64) d->npayloads * d->npay; v++)
		{
			int			k = v % d->npay;

			bytes = add_size(bytes, datumEstimateSpace(d->pvalues[v], d->pnulls[v],
													   d->pay_byval[k], d->pay_len[k]));
		}
		bytes = MAXALIGN(bytes);
		bytes = add_size(bytes, MAXALIGN((Size) warp_join_flat_size(d->table)));
	}
	ws->dims_shared_bytes = bytes;
	if (ws->heap)
	{
		ws->heap_pscan_off = bytes;
		bytes = add_size(bytes, table_parallelscan_estimate(ws->fact_rel,
															ws->css.ss.ps.state->es_snapshot));
	}
	return bytes;
}

/* the leader's dimensions into the DSM (sized by warp_estimate_dsm) */
static void
share_dims(WarpScanState *ws, WarpShared *wsh)
{
	char	   *base = (char *) wsh;
	WarpSharedDim *sd = (WarpSharedDim *) (base + MAXALIGN(sizeof(WarpShared)));
	Size		off = MAXALIGN(sizeof(WarpShared)) +
		MAXALIGN(sizeof(WarpSharedDim) * Max(ws->ndims, 1));
	int			i;

	for (i = 0; i < ws->ndims; i++)
	{
		WarpDim    *d = &ws->dims[i];
		char	   *start,
				   *ptr;
		int64		v;

		sd[i].rows = d->rows;
		sd[i].npayloads = d->npayloads;
		sd[i].npay = d->npay;
		sd[i].off_keys = off;
		if (d->rows > 0)
			memcpy(base + off, d->keys, sizeof(int64) * d->rows);
		off += MAXALIGN(sizeof(int64) * d->rows);
		sd[i].off_pids = off;
		if (d->rows > 0)
			memcpy(base + off, d->pids, sizeof(int32) * d->rows);
		off += MAXALIGN(sizeof(int32) * d->rows);
		sd[i].off_pay = off;
		start = ptr = base + off;
		for (v = 0; v < (int64) d->npayloads * d->npay; v++)
		{
			int			k = v % d->npay;

			datumSerialize(d->pvalues[v], d->pnulls[v], d->pay_byval[k], d->pay_len[k], &ptr);
		}
		sd[i].pay_bytes = ptr - start;
		off = MAXALIGN(off + sd[i].pay_bytes);
		sd[i].off_table = off;
		sd[i].table_bytes = (Size) warp_join_flat_size(d->table);
		warp_join_flatten(d->table, base + off);
		off += MAXALIGN(sd[i].table_bytes);
	}
	if (off != ws->dims_shared_bytes)
		elog(ERROR, "pg_warp: shared dimensions took %zu bytes, %zu estimated",
			 off, ws->dims_shared_bytes);
	wsh->ndims = ws->ndims;
	wsh->dims_shared = true;
}

/* a worker: the leader's dimensions, keys and payload ids used in place */
static void
receive_dims(WarpScanState *ws, WarpShared *wsh)
{
	char	   *base = (char *) wsh;
	WarpSharedDim *sd = (WarpSharedDim *) (base + MAXALIGN(sizeof(WarpShared)));
	MemoryContext old;
	int			i;

	if (wsh->ndims != ws->ndims)
		elog(ERROR, "pg_warp: the leader shared %d dimensions, the plan has %d",
			 wsh->ndims, ws->ndims);
	old = MemoryContextSwitchTo(ws->engine_cxt);
	for (i = 0; i < ws->ndims; i++)
	{
		WarpDim    *d = &ws->dims[i];
		char	   *ptr = base + sd[i].off_pay;
		int64		v,
					nv;

		if (sd[i].npay != d->npay)
			elog(ERROR, "pg_warp: shared dimension %d has %d payload columns, the plan %d",
				 i, sd[i].npay, d->npay);
		d->rows = sd[i].rows;
		d->keys = (int64 *) (base + sd[i].off_keys);
		d->pids = (int32 *) (base + sd[i].off_pids);
		d->npayloads = sd[i].npayloads;
		d->pcap = Max(d->npayloads, 1);
		nv = (int64) d->npayloads * d->npay;
		d->pvalues = palloc(sizeof(Datum) * Max(nv, 1));
		d->pnulls = palloc(sizeof(bool) * Max(nv, 1));
		for (v = 0; v < nv; v++)
			d->pvalues[v] = datumRestore(&ptr, &d->pnulls[v]);
		d->table = palloc(sizeof(WarpJoinTable));
		if (!warp_join_attach(base + sd[i].off_table, (int64) sd[i].table_bytes, d->table))
			elog(ERROR, "pg_warp: shared join table %d is malformed", i);
		d->table_ready = true;
	}
	set_join_ranges(ws);		/* the leader's keys, so the leader's ranges */
	MemoryContextSwitchTo(old);
	ws->dims_ready = true;
	ws->dims_from_leader = true;
}

static void
warp_init_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	WarpScanState *ws = (WarpScanState *) node;
	WarpShared *wsh = coordinate;
	ArrowSharedScan *sh = &wsh->scan;

	pg_atomic_init_u64(&sh->next_batch, 0);
	pg_atomic_init_u64(&sh->batches_read, 0);
	pg_atomic_init_u64(&sh->batches_skipped, 0);
	pg_atomic_init_u64(&sh->bytes_read, 0);
	pg_atomic_init_u64(&sh->rows_filtered, 0);
	pg_atomic_init_u64(&wsh->rows_in, 0);
	pg_atomic_init_u64(&wsh->rows_filtered, 0);
	pg_atomic_init_u64(&wsh->rows_joined, 0);
	pg_atomic_init_u64(&wsh->groups, 0);
	wsh->dims_shared = false;
	wsh->ndims = 0;
	if (ws->dims_shared_bytes > 0)
		share_dims(ws, wsh);
	wsh->heap_pscan_off = ws->heap_pscan_off;
	if (ws->heap)
	{
		ws->heap_pscan = (ParallelTableScanDesc) ((char *) wsh + ws->heap_pscan_off);
		table_parallelscan_initialize(ws->fact_rel, ws->heap_pscan,
									  node->ss.ps.state->es_snapshot);
	}
	else
		arrow_scan_use_shared(&ws->scan, sh);
	ws->wshared = wsh;
}

static void
warp_reinit_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	WarpScanState *ws = (WarpScanState *) node;

	pg_atomic_write_u64(&((WarpShared *) coordinate)->scan.next_batch, 0);
	if (ws->heap && ws->heap_pscan)
		table_parallelscan_reinitialize(ws->fact_rel, ws->heap_pscan);
}

static void
warp_init_worker(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	WarpScanState *ws = (WarpScanState *) node;

	WarpShared *wsh = coordinate;

	if (ws->heap)
		ws->heap_pscan = (ParallelTableScanDesc) ((char *) wsh + wsh->heap_pscan_off);
	else
		arrow_scan_use_shared(&ws->scan, &wsh->scan);
	ws->wshared = wsh;
	if (wsh->dims_shared)
		receive_dims(ws, wsh);
}

/* the DSM goes away before EXPLAIN ANALYZE prints: keep the counters */
static void
warp_shutdown(CustomScanState *node)
{
	WarpScanState *ws = (WarpScanState *) node;
	ArrowSharedScan *sh = ws->scan.shared;
	ArrowSharedScan *local = &ws->scan.local_shared;

	if (ws->wshared)
	{
		ws->total_counters.rows_in = pg_atomic_read_u64(&ws->wshared->rows_in);
		ws->total_counters.rows_filtered = pg_atomic_read_u64(&ws->wshared->rows_filtered);
		ws->total_counters.rows_joined = pg_atomic_read_u64(&ws->wshared->rows_joined);
		ws->total_groups = pg_atomic_read_u64(&ws->wshared->groups);
		ws->have_totals = true;
		ws->wshared = NULL;
	}
	if (ws->heap)
	{
		ws->heap_pscan = NULL;
		return;
	}
	if (sh == local)
		return;
	pg_atomic_write_u64(&local->batches_read, pg_atomic_read_u64(&sh->batches_read));
	pg_atomic_write_u64(&local->batches_skipped, pg_atomic_read_u64(&sh->batches_skipped));
	pg_atomic_write_u64(&local->bytes_read, pg_atomic_read_u64(&sh->bytes_read));
	pg_atomic_write_u64(&local->rows_filtered, pg_atomic_read_u64(&sh->rows_filtered));
	pg_atomic_write_u64(&local->next_batch, pg_atomic_read_u64(&sh->next_batch));
	arrow_scan_use_shared(&ws->scan, local);
}

CustomScanMethods warp_preagg_scan_methods = {
	.CustomName = "WarpPreAgg",
	.CreateCustomScanState = warp_create_state,
};

/* the same node in row mode (custom_private item 10), named for EXPLAIN */
CustomScanMethods warp_join_scan_methods = {
	.CustomName = "WarpJoin",
	.CreateCustomScanState = warp_create_state,
};

/* ... and for one table without joins (scanrelid its relation) */
CustomScanMethods warp_scan_scan_methods = {
	.CustomName = "WarpScan",
	.CreateCustomScanState = warp_create_state,
};

void
pgwarp_exec_init(void)
{
	warp_preagg_exec_methods.CustomName = "WarpPreAgg";
	warp_preagg_exec_methods.BeginCustomScan = warp_begin;
	warp_preagg_exec_methods.ExecCustomScan = warp_exec;
	warp_preagg_exec_methods.EndCustomScan = warp_end;
	warp_preagg_exec_methods.ReScanCustomScan = warp_rescan;
	warp_preagg_exec_methods.ExplainCustomScan = warp_explain;
	warp_preagg_exec_methods.EstimateDSMCustomScan = warp_estimate_dsm;
	warp_preagg_exec_methods.InitializeDSMCustomScan = warp_init_dsm;
	warp_preagg_exec_methods.ReInitializeDSMCustomScan = warp_reinit_dsm;
	warp_preagg_exec_methods.InitializeWorkerCustomScan = warp_init_worker;
	warp_preagg_exec_methods.ShutdownCustomScan = warp_shutdown;
	RegisterCustomScanMethods(&warp_preagg_scan_methods);
	RegisterCustomScanMethods(&warp_join_scan_methods);
	RegisterCustomScanMethods(&warp_scan_scan_methods);
}
