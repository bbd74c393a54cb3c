/*
 * tcache_sql.c — pg_warp_gpu_cache_attach, pg_warp_gpu_cache_detach and
 * pg_warp_gpu_cache_stats.
 *
 * Attaching creates the capture trigger (AFTER INSERT OR UPDATE OR DELETE
 * FOR EACH ROW, enabled ALWAYS so that replication roles fire it too)
 * and loads the replica; the trigger is what "attached" means, so the
 * state is transactional and goes with the table (DROP TABLE, dumps).
 * CREATE TRIGGER's lock (SHARE ROW EXCLUSIVE) waits for running writers
 * and holds new ones off until the attaching transaction ends, so the
 * first load sees a quiet table.  Both functions need the table's
 * ownership, as ALTER TABLE does.
 */
#include "postgres.h"

#include "access/table.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_class_d.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "pg_warp.h"
#include "tcache/tcache.h"

PG_FUNCTION_INFO_V1(pg_warp_gpu_cache_attach);
PG_FUNCTION_INFO_V1(pg_warp_gpu_cache_detach);
PG_FUNCTION_INFO_V1(pg_warp_gpu_cache_stats);

static void
check_owner(Relation rel)
{
	if (!pg_class_ownercheck(RelationGetRelid(rel), GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, get_relkind_objtype(rel->rd_rel->relkind),
					   RelationGetRelationName(rel));
}

static void
run_sql(const char *sql)
{
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute(sql, false, 0) < 0)
		elog(ERROR, "pg_warp: could not run: %s", sql);
	SPI_finish();
}

static char *
qualified_name(Relation rel)
{
	return quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
									  RelationGetRelationName(rel));
}

Datum
pg_warp_gpu_cache_attach(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	rel;
	TcacheLayout lay;
	GpudCacheKey key;
	char		why[256];
	int			kind;

	if (!tcache_preloaded())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the GPU table cache needs pg_warp in shared_preload_libraries")));
	if (pgwarp_gpud_device == PGWARP_GPUD_OFF || !pgwarp_gpud_serving(&kind))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the GPU table cache needs pg_warp_gpud, which is not running")));
	rel = table_open(relid, ShareRowExclusiveLock);
	check_owner(rel);
	if (rel->rd_rel->relkind != RELKIND_RELATION || rel->rd_rel->relam != HEAP_TABLE_AM_OID ||
		rel->rd_rel->relispartition || rel->rd_rel->relpersistence == RELPERSISTENCE_TEMP)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("\"%s\" is not a plain heap table; only those can be attached to the GPU table cache",
						RelationGetRelationName(rel))));
	tcache_layout(RelationGetDescr(rel), &lay);
	if (lay.ncols == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("table \"%s\" has no column the GPU table cache holds",
						RelationGetRelationName(rel)),
				 errdetail("It holds bool, int2, int4, int8, float4, float8, date, timestamp and timestamptz columns.")));
	if (!tcache_attached(rel))
	{
		char	   *name = qualified_name(rel);
		char	   *nsp = get_namespace_name(pgwarp_extension_schema(false));

		/* (ALTER TABLE refuses a table this statement holds open) */
		table_close(rel, NoLock);
		run_sql(psprintf("DROP TRIGGER IF EXISTS %s ON %s", TCACHE_TRIGGER_NAME, name));
		run_sql(psprintf("CREATE TRIGGER %s AFTER INSERT OR UPDATE OR DELETE ON %s "
						 "FOR EACH ROW EXECUTE FUNCTION %s.pg_warp_gpu_cache_capture()",
						 TCACHE_TRIGGER_NAME, name, quote_identifier(nsp)));
		run_sql(psprintf("ALTER TABLE %s ENABLE ALWAYS TRIGGER %s", name, TCACHE_TRIGGER_NAME));
		CommandCounterIncrement();
		rel = table_open(relid, NoLock);
		tcache_layout(RelationGetDescr(rel), &lay);
	}
	tcache_make_key(rel, &lay, &key);
	if (!tcache_load(rel, &lay, &key, why, sizeof(why)))
		ereport(ERROR,
				(errcode(strstr(why, "does not fit") ? ERRCODE_PROGRAM_LIMIT_EXCEEDED :
						 ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("could not load table \"%s\" into the GPU table cache: %s",
						RelationGetRelationName(rel), why)));
	table_close(rel, NoLock);
	PG_RETURN_VOID();
}

Datum
pg_warp_gpu_cache_detach(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	rel = table_open(relid, ShareRowExclusiveLock);
	GpudCacheReq req;
	GpudCacheKey key;
	uint64		rlen;
	char		why[256];
	char	   *name;

	check_owner(rel);
	name = qualified_name(rel);
	table_close(rel, NoLock);
	run_sql(psprintf("DROP TRIGGER IF EXISTS %s ON %s", TCACHE_TRIGGER_NAME, name));
	CommandCounterIncrement();
	rel = table_open(relid, NoLock);
	memset(&key, 0, sizeof(key));
	key.db = MyDatabaseId;
	key.rel = relid;
	tcache_fill_request(&req, GPUD_CACHE_DROP, rel, NULL, &key);
	(void) pgwarp_gpud_cache_request(&req, NULL, NULL, 0, &rlen, why, sizeof(why));
	table_close(rel, NoLock);
	PG_RETURN_VOID();
}

static const char *
state_name(int state)
{
	switch (state)
	{
		case GPUD_CACHE_LOADING:
			return "loading";
		case GPUD_CACHE_READY:
			return "ready";
		case GPUD_CACHE_BROKEN:
			return "reload needed";
		default:
			return "absent";
	}
}

Datum
pg_warp_gpu_cache_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	GpudCacheReq req;
	GpudCacheResp *resp;
	uint64		rlen;
	char		why[256];
	int			kind,
				i;

	InitMaterializedSRF(fcinfo, 0);
	if (pgwarp_gpud_device == PGWARP_GPUD_OFF || !pgwarp_gpud_serving(&kind))
		PG_RETURN_VOID();
	tcache_fill_request(&req, GPUD_CACHE_STATS, NULL, NULL, NULL);
	resp = pgwarp_gpud_cache_request(&req, NULL, NULL, 0, &rlen, why, sizeof(why));
	if (resp == NULL)
		PG_RETURN_VOID();
	if (resp->nstats < 0 || resp->off_stats > rlen ||
		(uint64) resp->nstats * sizeof(GpudCacheStat) > rlen - resp->off_stats)
		elog(ERROR, "pg_warp_gpud sent malformed cache statistics");
	for (i = 0; i < resp->nstats; i++)
	{
		GpudCacheStat *st = (GpudCacheStat *) ((char *) resp + resp->off_stats) + i;
		Datum		values[6];
		bool		nulls[6] = {false, false, false, false, false, false};

		if (st->key.db != MyDatabaseId)
			continue;
		if (get_rel_name(st->key.rel) == NULL)
		{
			/* the table was dropped: so goes its replica */
			tcache_fill_request(&req, GPUD_CACHE_DROP, NULL, NULL, &st->key);
			(void) pgwarp_gpud_cache_request(&req, NULL, NULL, 0, &rlen, why, sizeof(why));
			continue;
		}
		st->why[sizeof(st->why) - 1] = '\0';
		values[0] = ObjectIdGetDatum(st->key.rel);
		values[1] = Int64GetDatum(st->rows);
		values[2] = Int64GetDatum(st->bytes);
		values[3] = Int64GetDatum(st->pending);
		values[4] = CStringGetTextDatum(state_name(st->state));
		if (st->why[0])
			values[5] = CStringGetTextDatum(st->why);
		else
			nulls[5] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_VOID();
}
