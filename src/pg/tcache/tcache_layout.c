/*
 * tcache_layout.c — what a GPU table cache replica holds of a heap table
 * and how a row version travels to pg_warp_gpud.
 *
 * A replica holds every column whose type the engine reads as a native
 * value (bool, int2, int4, int8, date, timestamp, timestamptz: int64;
 * float4, float8: double), in PostgreSQL's own domain, as the heap fact
 * driver (warp_exec_heap.c) deforms them.  Its identity (GpudCacheKey)
 * is the table, its relfilenode (TRUNCATE and rewrites make a new one), a
 * hash of those columns' numbers and types (ALTER TABLE), and the capture
 * epoch (a change that could not be shipped makes every replica stale).
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xact.h"
#include "catalog/pg_type_d.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "utils/date.h"
#include "utils/timestamp.h"

#include "tcache/tcache.h"

static uint8
kind_of_type(Oid typid)
{
	switch (typid)
	{
		case BOOLOID:
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case DATEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return GPUD_CACHE_COL_INT64;
		case FLOAT4OID:
		case FLOAT8OID:
			return GPUD_CACHE_COL_DOUBLE;
		default:
			return 0;
	}
}

void
tcache_layout(TupleDesc desc, TcacheLayout *lay)
{
	int			a;
	uint32		h = 0x9e3779b9;

	lay->natts = desc->natts;
	lay->ncols = 0;
	lay->attnos = palloc(sizeof(AttrNumber) * Max(desc->natts, 1));
	lay->kinds = palloc(Max(desc->natts, 1));
	lay->types = palloc(sizeof(Oid) * Max(desc->natts, 1));
	lay->col_of_att = palloc(sizeof(int) * (desc->natts + 1));
	lay->col_of_att[0] = -1;
	for (a = 0; a < desc->natts; a++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, a);
		uint8		k = att->attisdropped ? 0 : kind_of_type(att->atttypid);
		uint32		part[2];

		lay->col_of_att[a + 1] = -1;
		if (k == 0)
			continue;
		lay->col_of_att[a + 1] = lay->ncols;
		lay->attnos[lay->ncols] = att->attnum;
		lay->kinds[lay->ncols] = k;
		lay->types[lay->ncols] = att->atttypid;
		lay->ncols++;
		part[0] = att->attnum;
		part[1] = att->atttypid;
		h = hash_combine(h, hash_bytes((const unsigned char *) part, sizeof(part)));
	}
	lay->hash = hash_combine(h, (uint32) lay->ncols);
}

void
tcache_make_key(Relation rel, const TcacheLayout *lay, GpudCacheKey *key)
{
	memset(key, 0, sizeof(*key));
	key->db = MyDatabaseId;
	key->rel = RelationGetRelid(rel);
	key->relfilenode = rel->rd_node.relNode;
	key->layout = lay->hash;
	key->epoch = tcache_epoch();
}

void
tcache_fill_request(GpudCacheReq *req, int op, Relation rel, const TcacheLayout *lay,
					const GpudCacheKey *key)
{
	memset(req, 0, sizeof(*req));
	req->op = op;
	req->ncols = lay ? lay->ncols : 0;
	if (key)
		req->key = *key;
	req->mem_limit = (uint64) pgwarp_gpu_table_cache_memory << 20;
	req->log_limit = (uint64) pgwarp_gpu_table_cache_log << 20;
	if (rel)
		strlcpy(req->name, RelationGetRelationName(rel), sizeof(req->name));
}

/*
 * The record of a version from its header (a loaded page's, or the
 * capture trigger's tuple): inserter and updater as HeapTupleSatisfiesMVCC
 * reads them.  A lock-only xmax (SELECT FOR UPDATE/SHARE, foreign-key
 * checks, multixacts of lockers only) is no deleter; a multixact with an
 * update gives its updater.  With a valid horizon (loading), transactions
 * before it are settled for every snapshot: a committed inserter becomes
 * frozen, an aborted deleter none, and a version whose inserter aborted or
 * whose deleter committed is not kept.  Command ids count only for the
 * backend's own transaction, the only one whose combo command ids it can
 * read.
 */
bool
tcache_version_rec(HeapTupleHeader htup, TransactionId horizon, GpudCacheRec *rec)
{
	TransactionId xmin = HeapTupleHeaderGetRawXmin(htup);
	TransactionId xmax = InvalidTransactionId;
	uint16		infomask = htup->t_infomask;

	memset(rec, 0, sizeof(*rec));
	rec->op = GPUD_REC_INSERT;
	rec->raw_xmin = xmin;
	if (HeapTupleHeaderIsSpeculative(htup))
		return false;			/* confirmed later, and then captured */
	if (HeapTupleHeaderXminFrozen(htup))
		xmin = FrozenTransactionId;
	else if (HeapTupleHeaderXminInvalid(htup) || xmin == InvalidTransactionId)
		return false;			/* aborted inserter */
	if (!(infomask & HEAP_XMAX_INVALID) && !HEAP_XMAX_IS_LOCKED_ONLY(infomask))
		xmax = HeapTupleHeaderGetUpdateXid(htup);

	if (TransactionIdIsValid(horizon))
	{
		if (TransactionIdIsNormal(xmin) && TransactionIdPrecedes(xmin, horizon))
		{
			if (!HeapTupleHeaderXminCommitted(htup) && !TransactionIdDidCommit(xmin))
				return false;
			xmin = FrozenTransactionId;
		}
		if (TransactionIdIsNormal(xmax) && TransactionIdPrecedes(xmax, horizon))
		{
			if (TransactionIdDidCommit(xmax))
				return false;
			xmax = InvalidTransactionId;
		}
	}
	rec->xmin = xmin;
	rec->xmax = xmax;
	if (TransactionIdIsNormal(xmin) && TransactionIdIsCurrentTransactionId(xmin))
		rec->cmin = HeapTupleHeaderGetCmin(htup);
	if (TransactionIdIsNormal(xmax) && TransactionIdIsCurrentTransactionId(xmax))
		rec->cmax = HeapTupleHeaderGetCmax(htup);
	return true;
}

void
tcache_append_insert(StringInfo buf, const GpudCacheRec *rec, const TcacheLayout *lay,
					 TupleDesc desc, HeapTuple tup, Datum *values, bool *isnull)
{
	int			nbytes = ((lay->ncols + 63) / 64) * 8;
	int			start,
				c;
	uint8	   *nulls;
	uint64	   *vals;

	appendBinaryStringInfo(buf, (const char *) rec, sizeof(*rec));
	start = buf->len;
	enlargeStringInfo(buf, nbytes + 8 * lay->ncols);
	nulls = (uint8 *) buf->data + start;
	vals = (uint64 *) (buf->data + start + nbytes);
	memset(nulls, 0, nbytes);
	heap_deform_tuple(tup, desc, values, isnull);
	for (c = 0; c < lay->ncols; c++)
	{
		int			a = lay->attnos[c] - 1;
		Datum		d = values[a];
		int64		iv = 0;
		double		fv = 0;

		if (isnull[a])
		{
			nulls[c >> 3] |= 1 << (c & 7);
			vals[c] = 0;
			continue;
		}
		switch (lay->types[c])
		{
			case BOOLOID:
				iv = DatumGetBool(d) ? 1 : 0;
				break;
			case INT2OID:
				iv = DatumGetInt16(d);
				break;
			case INT4OID:
				iv = DatumGetInt32(d);
				break;
			case DATEOID:
				iv = DatumGetDateADT(d);
				break;
			case FLOAT4OID:
				fv = DatumGetFloat4(d);
				break;
			case FLOAT8OID:
				fv = DatumGetFloat8(d);
				break;
			default:			/* int8, timestamp, timestamptz */
				iv = DatumGetInt64(d);
				break;
		}
		if (lay->kinds[c] == GPUD_CACHE_COL_DOUBLE)
			memcpy(&vals[c], &fv, 8);
		else
			memcpy(&vals[c], &iv, 8);
	}
	buf->len = start + nbytes + 8 * lay->ncols;
	buf->data[buf->len] = '\0';
}
