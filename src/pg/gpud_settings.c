/*
 * gpud_settings.c — pg_warp_gpud_settings(): what the running daemon
 * serves on and the memory budgets in effect.
 *
 * The daemon's budgets may be automatic (-1: sized from physical memory
 * and the GPU's free memory at its start, src/gpud/gpud_sizing.h), so SHOW
 * gives the setting, not the value; the daemon writes the values it uses
 * to its status file (pg_warp_gpud.status under $PGDATA, the backend's
 * working directory), and this function reads them.  No row when no
 * daemon is running.
 */
#include "postgres.h"

#include "funcapi.h"
#include "utils/builtins.h"

#include "gpud_client.h"

PG_FUNCTION_INFO_V1(pg_warp_gpud_settings);

/*
 * pg_warp_gpud_settings(OUT device text, OUT gpus integer, OUT name text,
 *		OUT lanes_per_gpu integer, OUT max_registered_memory_mb bigint,
 *		OUT gpu_cache_memory_mb bigint, OUT staging_memory_mb bigint)
 */
Datum
pg_warp_gpud_settings(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsi = (ReturnSetInfo *) fcinfo->resultinfo;
	GpudStatus	st;
	Datum		values[7];
	bool		nulls[7] = {0};

	InitMaterializedSRF(fcinfo, 0);
	if (!pgwarp_gpud_status(&st))
		PG_RETURN_VOID();
	values[0] = CStringGetTextDatum(st.kind == GPUD_DEVICE_GPU ? "gpu" : "cpu");
	values[1] = Int32GetDatum(st.ngpus);
	values[2] = CStringGetTextDatum(st.name);
	values[3] = Int32GetDatum(st.lanes_per_gpu);
	values[4] = Int64GetDatum((int64) st.registered_mb);
	values[5] = Int64GetDatum((int64) st.cache_mb);
	values[6] = Int64GetDatum((int64) st.staging_mb);
	tuplestore_putvalues(rsi->setResult, rsi->setDesc, values, nulls);
	PG_RETURN_VOID();
}
