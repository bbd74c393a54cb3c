/*
 * tcache_capture.c — the row changes of attached heap tables, captured by
 * the AFTER ROW trigger pg_warp_gpu_cache_capture (INSERT, UPDATE,
 * DELETE; COPY, functions, other triggers and foreign-key actions all
 * fire it) and shipped to pg_warp_gpud.
 *
 * Each row event becomes records in a buffer of the running transaction
 * (one per table): an UPDATE or DELETE the deleted version's tid, raw xmin
 * and updater; an INSERT or UPDATE the new version's tid, inserter,
 * updater and values, read from the version's header as it is when the
 * trigger fires (so a version a nested statement already deleted carries
 * its deleter, whatever order the events fire in).  A buffer is shipped
 * in one request when it grows past a few megabytes, before a query of
 * this backend uses the cache (its own changes must be there), and at
 * PRE_COMMIT / PRE_PREPARE, before the commit can be seen: a transaction
 * whose commit a snapshot sees has shipped all its records, so whatever
 * is visible to a snapshot is in the replica.  An aborted transaction's
 * records need not go anywhere (its versions are invisible); if some were
 * shipped, the replica's visibility check finds the transaction aborted.
 * An aborted subtransaction's records are dropped from the buffer at its
 * abort (tc_subxact_callback says why they must be).
 * No per-row system call, lock or shared counter: the write path's cost is
 * the trigger's queue (PostgreSQL's), the record, and one request per
 * writing transaction.
 *
 * A buffer that cannot be shipped (the daemon down or refusing) must not
 * leave a replica without those changes: the capture epoch in shared
 * memory moves, which is part of every replica's identity, so every
 * replica is loaded again before it is used.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_trigger.h"
#include "commands/trigger.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "parser/parse_func.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "pg_warp.h"
#include "tcache/tcache.h"

#define FLUSH_BYTES		(4 << 20)

typedef struct TcacheShared
{
	pg_atomic_uint64 epoch;
} TcacheShared;

static TcacheShared *tshared;
static shmem_request_hook_type prev_shmem_request_hook;
static shmem_startup_hook_type prev_shmem_startup_hook;

/*
 * Where a subtransaction started in a buffer: the bytes and records
 * captured for the table before it (shipped ones included).
 */
typedef struct SubMark
{
	SubTransactionId subid;
	uint64		bytes;
	int64		recs;
} SubMark;

/* one attached table's records of the running transaction */
typedef struct Pending
{
	Oid			relid;
	GpudCacheKey key;
	TupleDesc	desc;			/* the layout's descriptor */
	TcacheLayout lay;
	char		name[NAMEDATALEN];
	StringInfoData buf;
	int64		nrecs;
	uint64		shipped_bytes;	/* records already shipped, not in buf */
	int64		shipped_recs;
	SubTransactionId created_subid; /* the subtransaction that made it */
	List	   *marks;			/* of SubMark, innermost last */
	Datum	   *values;
	bool	   *isnull;
} Pending;

static List *pending;			/* of Pending, in TopTransactionContext */
static bool callback_registered;

static void
tc_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(TcacheShared)));
}

static void
tc_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	tshared = ShmemInitStruct("pg_warp gpu table cache", sizeof(TcacheShared), &found);
	if (!found)
		pg_atomic_init_u64(&tshared->epoch, 1);
	LWLockRelease(AddinShmemInitLock);
	if (!IsUnderPostmaster && pgwarp_gpud_device != PGWARP_GPUD_OFF)
		tcache_ring_create();
}

bool
tcache_preloaded(void)
{
	return tshared != NULL;
}

uint64
tcache_epoch(void)
{
	return tshared ? pg_atomic_read_u64(&tshared->epoch) : 0;
}

void
tcache_epoch_bump(void)
{
	if (tshared)
		pg_atomic_fetch_add_u64(&tshared->epoch, 1);
}

/* ship p's records; on failure every replica becomes stale */
static void
flush_one(Pending *p)
{
	GpudCacheReq req;
	char		why[256];
	uint64		rlen;

	if (p->nrecs == 0)
		return;
	if (tcache_ring_enabled())
	{
		/* the change log: no round trip (tcache_ring.c) */
		if (!tcache_ring_append(&p->key, p->lay.ncols, p->buf.data, p->buf.len, p->nrecs))
		{
			tcache_epoch_bump();
			ereport(DEBUG1, (errmsg("pg_warp: row changes of \"%s\" not logged: the change log is full and no pg_warp_gpud reads it",
									p->name)));
		}
		p->shipped_bytes += p->buf.len;
		p->shipped_recs += p->nrecs;
		resetStringInfo(&p->buf);
		p->nrecs = 0;
		return;
	}
	memset(&req, 0, sizeof(req));
	req.op = GPUD_CACHE_CHANGES;
	req.ncols = p->lay.ncols;
	req.key = p->key;
	req.nrecs = p->nrecs;
	req.mem_limit = (uint64) pgwarp_gpu_table_cache_memory << 20;
	req.log_limit = (uint64) pgwarp_gpu_table_cache_log << 20;
	strlcpy(req.name, p->name, sizeof(req.name));
	if (pgwarp_gpud_cache_request(&req, NULL, p->buf.data, p->buf.len, &rlen,
								  why, sizeof(why)) == NULL)
	{
		tcache_epoch_bump();
		ereport(DEBUG1, (errmsg("pg_warp: row changes of \"%s\" not shipped: %s", p->name, why)));
	}
	p->shipped_bytes += p->buf.len;
	p->shipped_recs += p->nrecs;
	resetStringInfo(&p->buf);
	p->nrecs = 0;
}

void
tcache_flush_all(void)
{
	ListCell   *lc;

	foreach(lc, pending)
		flush_one(lfirst(lc));
}

static void
tc_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			tcache_flush_all();
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PREPARE:
			pending = NIL;		/* (its memory goes with the transaction) */
			break;
		default:
			break;
	}
}

/*
 * A subtransaction's end.  Its records must not outlive its abort: after
 * ROLLBACK TO SAVEPOINT the rows it deleted are free again and the line
 * pointers of the versions it inserted can be pruned and reused, so other
 * transactions may change the same tids and ship their records while this
 * one goes on; shipped at this transaction's commit, the aborted
 * subtransaction's records would then arrive after theirs and, "last
 * writer wins", undo them in the replica (a deleted version live again, a
 * newer version at a reused tid replaced).  So an aborted subtransaction's
 * records still in the buffer are dropped.  Those it shipped before its
 * abort (a full buffer) arrived before any other transaction could touch
 * its tids, in order.  A committed subtransaction's records stay: its row
 * locks are held until the top-level transaction ends.
 */
static void
tc_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					SubTransactionId parentSubid, void *arg)
{
	ListCell   *lc;

	if (event == SUBXACT_EVENT_START_SUB)
	{
		MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);

		foreach(lc, pending)
		{
			Pending    *p = lfirst(lc);
			SubMark    *m = palloc(sizeof(SubMark));

			m->subid = mySubid;
			m->bytes = p->shipped_bytes + p->buf.len;
			m->recs = p->shipped_recs + p->nrecs;
			p->marks = lappend(p->marks, m);
		}
		MemoryContextSwitchTo(old);
		return;
	}
	if (event != SUBXACT_EVENT_COMMIT_SUB && event != SUBXACT_EVENT_ABORT_SUB)
		return;
	foreach(lc, pending)
	{
		Pending    *p = lfirst(lc);
		SubMark    *mark = NULL;
		uint64		keep_bytes = 0;
		int64		keep_recs = 0;

		/* the marks of this subtransaction and of its (ended) children */
		while (p->marks != NIL && ((SubMark *) llast(p->marks))->subid >= mySubid)
		{
			mark = llast(p->marks);
			p->marks = list_delete_last(p->marks);
		}
		if (event == SUBXACT_EVENT_COMMIT_SUB)
			continue;			/* the parent keeps the records */
		if (mark != NULL && mark->subid == mySubid)
		{
			keep_bytes = mark->bytes;
			keep_recs = mark->recs;
		}
		else if (p->created_subid < mySubid)
			continue;			/* (cannot be: it had a mark) */
		if (keep_bytes >= p->shipped_bytes)
		{
			p->buf.len = (int) (keep_bytes - p->shipped_bytes);
			p->buf.data[p->buf.len] = '\0';
			p->nrecs = keep_recs - p->shipped_recs;
		}
		else
		{
			resetStringInfo(&p->buf);
			p->nrecs = 0;
		}
	}
}

static void
register_callback(void)
{
	if (!callback_registered)
	{
		RegisterXactCallback(tc_xact_callback, NULL);
		RegisterSubXactCallback(tc_subxact_callback, NULL);
		callback_registered = true;
	}
}

void
pgwarp_tcache_preload(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = tc_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = tc_shmem_startup;
	register_callback();
}

/* the running transaction's buffer for rel, keyed as rel is now */
static Pending *
pending_for(Relation rel)
{
	ListCell   *lc;
	Pending    *p = NULL;
	MemoryContext old;

	foreach(lc, pending)
	{
		Pending    *q = lfirst(lc);

		if (q->relid == RelationGetRelid(rel))
		{
			p = q;
			break;
		}
	}
	if (p && p->desc == RelationGetDescr(rel) && p->key.relfilenode == rel->rd_node.relNode &&
		p->key.epoch == tcache_epoch())
		return p;
	old = MemoryContextSwitchTo(TopTransactionContext);
	if (p)
		flush_one(p);			/* records of the table's previous identity */
	else
	{
		p = palloc0(sizeof(Pending));
		p->relid = RelationGetRelid(rel);
		p->created_subid = GetCurrentSubTransactionId();
		initStringInfo(&p->buf);
		pending = lappend(pending, p);
	}
	p->desc = RelationGetDescr(rel);
	tcache_layout(p->desc, &p->lay);
	tcache_make_key(rel, &p->lay, &p->key);
	strlcpy(p->name, RelationGetRelationName(rel), sizeof(p->name));
	p->values = palloc(sizeof(Datum) * Max(p->desc->natts, 1));
	p->isnull = palloc(sizeof(bool) * Max(p->desc->natts, 1));
	MemoryContextSwitchTo(old);
	return p;
}

static void
capture_insert(Pending *p, HeapTuple tup)
{
	GpudCacheRec rec;

	if (!tcache_version_rec(tup->t_data, InvalidTransactionId, &rec))
		return;
	rec.block = ItemPointerGetBlockNumber(&tup->t_self);
	rec.offset = ItemPointerGetOffsetNumber(&tup->t_self);
	tcache_append_insert(&p->buf, &rec, &p->lay, p->desc, tup, p->values, p->isnull);
	p->nrecs++;
}

static void
capture_delete(Pending *p, HeapTuple tup)
{
	GpudCacheRec rec;
	HeapTupleHeader h = tup->t_data;

	memset(&rec, 0, sizeof(rec));
	rec.op = GPUD_REC_DELETE;
	rec.block = ItemPointerGetBlockNumber(&tup->t_self);
	rec.offset = ItemPointerGetOffsetNumber(&tup->t_self);
	rec.raw_xmin = HeapTupleHeaderGetRawXmin(h);
	if ((h->t_infomask & HEAP_XMAX_INVALID) || HEAP_XMAX_IS_LOCKED_ONLY(h->t_infomask))
		return;					/* (cannot be: the row was deleted) */
	rec.xmax = HeapTupleHeaderGetUpdateXid(h);
	if (TransactionIdIsCurrentTransactionId(rec.xmax))
		rec.cmax = HeapTupleHeaderGetCmax(h);
	appendBinaryStringInfo(&p->buf, (const char *) &rec, sizeof(rec));
	p->nrecs++;
}

PG_FUNCTION_INFO_V1(pg_warp_gpu_cache_capture);

Datum
pg_warp_gpu_cache_capture(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	Pending    *p;
	MemoryContext old;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_AFTER(td->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(td->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("pg_warp_gpu_cache_capture must be an AFTER ROW trigger "
						"(pg_warp_gpu_cache_attach creates it)")));
	register_callback();
	p = pending_for(td->tg_relation);
	old = MemoryContextSwitchTo(TopTransactionContext);
	if (TRIGGER_FIRED_BY_INSERT(td->tg_event))
		capture_insert(p, td->tg_trigtuple);
	else if (TRIGGER_FIRED_BY_UPDATE(td->tg_event))
	{
		capture_delete(p, td->tg_trigtuple);
		capture_insert(p, td->tg_newtuple);
	}
	else if (TRIGGER_FIRED_BY_DELETE(td->tg_event))
		capture_delete(p, td->tg_trigtuple);
	MemoryContextSwitchTo(old);
	if (p->buf.len >= FLUSH_BYTES)
		flush_one(p);
	return PointerGetDatum(NULL);
}

/* the capture function's OID, or InvalidOid (extension not there) */
static Oid
capture_func_oid(void)
{
	Oid			nsp = pgwarp_extension_schema(true);

	if (!OidIsValid(nsp))
		return InvalidOid;
	return LookupFuncName(list_make2(makeString(get_namespace_name(nsp)),
									 makeString("pg_warp_gpu_cache_capture")),
						  0, NULL, true);
}

bool
tcache_attached(Relation rel)
{
	TriggerDesc *td = rel->trigdesc;
	int			i;

	if (td == NULL || !td->trig_insert_after_row || !td->trig_update_after_row ||
		!td->trig_delete_after_row)
		return false;
	for (i = 0; i < td->numtriggers; i++)
	{
		Trigger    *t = &td->triggers[i];

		if (strcmp(t->tgname, TCACHE_TRIGGER_NAME) == 0)
			return t->tgenabled == TRIGGER_FIRES_ALWAYS &&
				TRIGGER_FOR_ROW(t->tgtype) && TRIGGER_FOR_AFTER(t->tgtype) &&
				TRIGGER_FOR_INSERT(t->tgtype) && TRIGGER_FOR_UPDATE(t->tgtype) &&
				TRIGGER_FOR_DELETE(t->tgtype) && t->tgnattr == 0 && t->tgqual == NULL &&
				t->tgfoid == capture_func_oid();
	}
	return false;
}
