/*
 * arrow_info.c — SQL functions that describe an Arrow file on the server:
 *
 *   pg_warp_arrow_schema(file text)   one row per top-level column
 *   pg_warp_arrow_batches(file text)  one row per record batch
 *
 * Both read only the file's metadata (footer, or the stream's message
 * headers), never column data.  Same privilege rule as COPY FROM a file.
 */
#include "postgres.h"

#include "fmgr.h"
#include "access/htup_details.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "pg_warp.h"
#include "fdw/arrow_pg.h"

PG_FUNCTION_INFO_V1(pg_warp_arrow_schema);
PG_FUNCTION_INFO_V1(pg_warp_arrow_batches);


Datum
pg_warp_arrow_schema(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *path = text_to_cstring(PG_GETARG_TEXT_PP(0));
	ArrowFile	file;
	int			fd;
	int			i;

	pgwarp_check_file_read_privilege();
	InitMaterializedSRF(fcinfo, 0);
	pgwarp_arrow_open_file(&file, path, &fd);

	for (i = 0; i < file.schema.n_fields; i++)
	{
		const ArrowField *f = &file.schema.fields[i];
		Datum		values[6];
		bool		nulls[6] = {0};
		char		tbuf[256];
		char		pbuf[256];
		const char *why_not;
		const char *meta;

		values[0] = Int32GetDatum(i + 1);
		values[1] = CStringGetTextDatum(f->name);
		values[2] = CStringGetTextDatum(arrow_type_string(f, tbuf, sizeof(tbuf)));
		values[3] = BoolGetDatum(f->nullable);
		if (pgwarp_arrow_pg_type_name(f, pbuf, sizeof(pbuf), &why_not))
			values[4] = CStringGetTextDatum(pbuf);
		else
			nulls[4] = true;
		meta = arrow_field_metadata(f, "pg_type");
		if (meta)
			values[5] = CStringGetTextDatum(meta);
		else
			nulls[5] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	pgwarp_arrow_close_file(&file, fd);
	return (Datum) 0;
}

Datum
pg_warp_arrow_batches(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *path = text_to_cstring(PG_GETARG_TEXT_PP(0));
	ArrowFile	file;
	ArrowArena	arena;
	ArrowError	err;
	int			fd;
	int			i;

	pgwarp_check_file_read_privilege();
	InitMaterializedSRF(fcinfo, 0);
	pgwarp_arrow_open_file(&file, path, &fd);
	arrow_arena_init(&arena, pgwarp_arrow_allocator());

	for (i = 0; i < file.n_batches; i++)
	{
		ArrowBatchMeta meta;
		Datum		values[5];
		bool		nulls[5] = {0};

		CHECK_FOR_INTERRUPTS();
		if (arrow_read_batch_meta(&file, i, &arena, &meta, &err) != 0)
			pgwarp_report_arrow_error(ERROR, &err);
		values[0] = Int32GetDatum(i);
		values[1] = Int64GetDatum(file.batches[i].offset);
		values[2] = Int64GetDatum(meta.length);
		values[3] = Int64GetDatum(meta.body_len);
		values[4] = CStringGetTextDatum(arrow_codec_name(meta.codec));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		arrow_arena_free_all(&arena);
	}
	pgwarp_arrow_close_file(&file, fd);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(pg_warp_footer_cache_stats);

/* pg_warp_footer_cache_stats(OUT hits bigint, OUT misses bigint) */
Datum
pg_warp_footer_cache_stats(PG_FUNCTION_ARGS)
{
	TupleDesc	td;
	Datum		values[2];
	bool		nulls[2] = {0};
	int64		hits;
	int64		misses;

	if (get_call_result_type(fcinfo, NULL, &td) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	pgwarp_footer_cache_stats(&hits, &misses);
	values[0] = Int64GetDatum(hits);
	values[1] = Int64GetDatum(misses);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(td), values, nulls)));
}
