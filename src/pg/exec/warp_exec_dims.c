/*
 * warp_exec_dims.c — the dimensions of a WarpPreAgg / WarpJoin node: each
 * dimension plan run (or its Arrow batches read by warp_dim_arrow.c) into
 * the rows of a join table, a join key and a payload id per row, the
 * payload ids naming the distinct values of the dimension's group-by
 * columns; dimensions kept from an earlier query taken from the dimension
 * cache (warp_dimcache.c); and the dimensions' key ranges given to the fact
 * scan's batch skipping.
 *
 * The join tables themselves are built from these rows by the drivers
 * (warp_exec_run.c), after the program (warp_exec_program.c) has mapped
 * text keys to the fact column's strings; a parallel query's leader hands
 * its dimensions to the workers (warp_exec_parallel.c).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/executor.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "portability/instr_time.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "exec/warp_dim_arrow.h"
#include "exec/warp_dimcache.h"
#include "exec/warp_exec_internal.h"

/* the planner computed the output position: it must exist */
void
warp_exec_check_resno(Plan *plan, int resno)
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

/*
 * A dimension's state before its rows are read: no join table yet, a text
 * key's string table, the payload table.  False where the dimension was
 * taken from the cache instead (nothing to read).
 */
static bool
dim_build_start(WarpScanState *ws, WarpDim *d, int32 **kslots, uint32 *kmask)
{
	d->table = NULL;			/* built again from these rows */
	d->table_ready = false;
	if (d->text_key)
	{
		d->cache_key = NULL;	/* the cache keeps no strings */
		d->nkstr = 0;
		d->kstr = palloc(sizeof(char *) * 64);
		d->kstr_len = palloc(sizeof(int) * 64);
		*kmask = 127;
		*kslots = palloc(sizeof(int32) * (*kmask + 1));
		memset(*kslots, 0xff, sizeof(int32) * (*kmask + 1));
	}
	else if (dim_from_cache(ws, d))
		return false;
	d->npayloads = 0;
	d->pcap = 64;
	d->pvalues = palloc(sizeof(Datum) * d->pcap * Max(d->npay, 1));
	d->pnulls = palloc(sizeof(bool) * d->pcap * Max(d->npay, 1));
	d->phash = palloc(sizeof(uint32) * d->pcap);
	d->pmask = 0;
	payload_grow(d);
	return true;
}

/*
 * Whether the engine's reader gives the dimension's keys as they are: one
 * integer, two int2/int4 columns, or text (a string seen before; a new one
 * goes through its Datum once).
 */
static bool
dim_raw_keys(WarpDim *d, Oid keytype, Oid key2type)
{
	return ((d->text_key && GetDatabaseEncoding() == PG_UTF8) ||
			(d->key2_resno == 0 && (keytype == INT2OID || keytype == INT4OID || keytype == INT8OID)) ||
			(d->key2_resno > 0 && (keytype == INT2OID || keytype == INT4OID) &&
			 (key2type == INT2OID || key2type == INT4OID)));
}

/* the columns build_dim reads, as Datums, from the reader's current row */
static void
dim_reader_datums(WarpDim *d, WarpDimArrow *reader, Datum *rowv, bool *rown)
{
	int			kc;

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

/*
 * The join key of a row given as Datums (rowv/rown by output column) into
 * *kv: an integer, two int2/int4 columns packed, or the number of a text
 * key string (added if new); false where it is NULL.
 */
static bool
dim_datum_key(WarpDim *d, Oid keytype, Oid key2type, Datum *rowv, bool *rown,
			  int32 **kslots, uint32 *kmask, int64 *kv)
{
	Datum		key;

	key = rowv[d->key_resno - 1];
	if (rown[d->key_resno - 1])
		return false;			/* NULL never matches */
	if (d->key2_resno > 0)
	{
		/* two int2/int4 key columns: a * 2^32 + (b + 2^31), as the fact
		 * side's expression computes it */
		Datum		key2 = rowv[d->key2_resno - 1];
		int64		a = keytype == INT2OID ? DatumGetInt16(key) : DatumGetInt32(key);
		int64		b;

		if (rown[d->key2_resno - 1])
			return false;
		b = key2type == INT2OID ? DatumGetInt16(key2) : DatumGetInt32(key2);
		key = Int64GetDatum(a * INT64CONST(4294967296) + (b + INT64CONST(2147483648)));
	}
	if (d->text_key)
		*kv = text_key_number(d, key, kslots, kmask);
	else if (d->key2_resno > 0)
		*kv = DatumGetInt64(key);
	else
	{
		double		unused;

		warp_datum_value(key, keytype, kv, &unused);
	}
	return true;
}

/*
 * After the rows (d->rows, d->keys, d->pids): at least one payload, and
 * the dimension kept in the cache where it may be.  v/nl: room for one
 * payload's values.
 */
static void
dim_build_finish(WarpScanState *ws, WarpDim *d, Datum *v, bool *nl)
{
	int			k;

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
	if (d->cache_key)
	{
		WarpDimCached c;
		const char *why;

		c.rows = d->rows;
		c.keys = d->keys;
		c.pids = d->pids;
		c.npayloads = d->npayloads;
		c.npay = d->npay;
		c.pvalues = d->pvalues;
		c.pnulls = d->pnulls;

		warp_dimcache_put(d->cache_key, d->cache_gen, &c, d->pay_len, d->pay_byval, &why);
		note_not_cached(ws, d, why);
	}
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

	if (!dim_build_start(ws, d, &kslots, &kmask))
		return;

	/*
	 * An Arrow dimension's rows straight from its batches where the engine
	 * decides its quals (warp_dim_arrow.c), else through its plan.  Both
	 * give the plan's output columns by number.
	 */
	ntl = list_length(d->ps->plan->targetlist);
	for (k = 0; k < d->npay; k++)
		warp_exec_check_resno(d->ps->plan, d->pay_resno[k]);
	warp_exec_check_resno(d->ps->plan, d->key_resno);
	if (d->key2_resno > 0)
	{
		warp_exec_check_resno(d->ps->plan, d->key2_resno);
		key2type = exprType((Node *) ((TargetEntry *) list_nth(d->ps->plan->targetlist,
															   d->key2_resno - 1))->expr);
	}
	old = MemoryContextSwitchTo(query_cxt);
	reader = warp_dim_arrow_begin(d->ps);
	MemoryContextSwitchTo(old);
	d->read_by_engine = reader != NULL;
	raw_key = reader != NULL && dim_raw_keys(d, keytype, key2type);
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
		int64		kv;

		CHECK_FOR_INTERRUPTS();

		if (reader)
		{
			if (!warp_dim_arrow_next_row(reader))
				break;
			if (raw_key)
			{
				/* the key and payload bytes as they are: no Datum at all,
				 * except for bytes seen for the first time */
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
			dim_reader_datums(d, reader, rowv, rown);
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
		if (!dim_datum_key(d, keytype, key2type, rowv, rown, &kslots, &kmask, &kv))
			continue;			/* NULL never matches */
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
		keys[n] = kv;
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
	d->rows = n;
	d->keys = keys;
	d->pids = pids;
	dim_build_finish(ws, d, v, nl);
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
void
warp_exec_set_join_ranges(WarpScanState *ws)
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
		Var		   *v = (Var *) d->fact_key;
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
void
warp_exec_build_dims(WarpScanState *ws)
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
	warp_exec_set_join_ranges(ws);
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	ws->build_ms = INSTR_TIME_GET_MILLISEC(t1);
	ws->dims_ready = true;
	MemoryContextSwitchTo(old);
}
