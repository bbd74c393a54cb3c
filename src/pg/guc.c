/*
 * guc.c — pg_warp's configuration parameters.
 *
 * Names are fixed by DESIGN.md: pg_warp.enabled switches every custom path
 * on or off; pg_warp.mode chooses where offloaded work runs.
 */
#include "postgres.h"

#include "utils/guc.h"

#include "pg_warp.h"
#include "warp.h"

bool		pgwarp_enabled = true;
bool		pgwarp_enable_preagg = true;
int			pgwarp_inner_hash_mem = 256 * 1024;	/* kB */
bool		pgwarp_explain_stable = false;
int			pgwarp_mode = PGWARP_MODE_AUTO;

static const struct config_enum_entry mode_options[] = {
	{"auto", PGWARP_MODE_AUTO, false},
	{"gpu", PGWARP_MODE_GPU, false},
	{"cpu", PGWARP_MODE_CPU, false},
	{NULL, 0, false}
};

void
pgwarp_define_gucs(void)
{
	DefineCustomBoolVariable("pg_warp.enabled",
							 "Enables pg_warp's accelerated plans.",
							 "When off, queries over Arrow tables run on "
							 "PostgreSQL's own executor.",
							 &pgwarp_enabled,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomEnumVariable("pg_warp.mode",
							 "Where pg_warp runs offloaded work.",
							 "auto: the GPU when one is available, else the "
							 "CPU engine; gpu: the GPU only; cpu: the CPU "
							 "engine only.",
							 &pgwarp_mode,
							 PGWARP_MODE_AUTO,
							 mode_options,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("pg_warp.enable_preagg",
							 "Enables pg_warp's pre-aggregation (star join and "
							 "partial aggregation) plans.",
							 NULL,
							 &pgwarp_enable_preagg,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("pg_warp.inner_hash_mem",
							"Largest total size of the dimension tables pg_warp "
							"builds for one query.",
							"A plan whose dimension sides are estimated larger "
							"is not offloaded.",
							&pgwarp_inner_hash_mem,
							256 * 1024,
							64,
							MAX_KILOBYTES,
							PGC_USERSET,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("pg_warp.explain_stable",
							 "Leaves machine-dependent lines (device, timings) "
							 "out of EXPLAIN.",
							 "For regression tests whose output must be the "
							 "same on every machine.",
							 &pgwarp_explain_stable,
							 false,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	MarkGUCPrefixReserved("pg_warp");
}
