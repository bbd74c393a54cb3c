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

#include <signal.h>

#include "access/htup_details.h"
#include "funcapi.h"
#include "storage/fd.h"
#include "utils/builtins.h"

#include "gpud_wire.h"

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
	FILE	   *f;
	char		line[512];
	char		kind[16];
	char		name[128];
	int			ngpus,
				pid,
				lanes = 0;
	unsigned long long reg = 0,
				cache = 0,
				staging = 0;
	Datum		values[7];
	bool		nulls[7] = {0};

	InitMaterializedSRF(fcinfo, 0);
	f = AllocateFile(GPUD_STATUS_NAME, "r");
	if (f == NULL)
		PG_RETURN_VOID();
	if (fgets(line, sizeof(line), f) &&
		sscanf(line, "%15[^\t]\t%d\t%127[^\t]\t%d\t%llu\t%llu\t%llu\t%d", kind, &ngpus, name,
			   &pid, &reg, &cache, &staging, &lanes) >= 4 &&
		pid > 0 && kill(pid, 0) == 0)
	{
		values[0] = CStringGetTextDatum(kind);
		values[1] = Int32GetDatum(ngpus);
		values[2] = CStringGetTextDatum(name);
		values[3] = Int32GetDatum(lanes);
		values[4] = Int64GetDatum((int64) reg);
		values[5] = Int64GetDatum((int64) cache);
		values[6] = Int64GetDatum((int64) staging);
		tuplestore_putvalues(rsi->setResult, rsi->setDesc, values, nulls);
	}
	FreeFile(f);
	PG_RETURN_VOID();
}
