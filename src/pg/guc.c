/*
 * guc.c — pg_warp's configuration parameters.
 *
 * Names are fixed by DESIGN.md: pg_warp.enabled switches every custom path
 * on or off; pg_warp.mode chooses where offloaded work runs.
 */
#include "postgres.h"

#include "utils/guc.h"

#include "gpud_client.h"
#include "pg_warp.h"
#include "tcache/tcache.h"
#include "warp.h"
#include "vector/vector.h"
#include "warp_spatial.h"

bool		pgwarp_enabled = true;
bool		pgwarp_enable_decorrelation = true;
bool		pgwarp_enable_preagg = true;
bool		pgwarp_enable_join = true;
bool		pgwarp_enable_scan = true;
bool		pgwarp_enable_scan_filter = true;
bool		pgwarp_enable_dim_scan = true;
bool		pgwarp_cache_heap_dimensions = true;
bool		pgwarp_cpu_mmap = true;
bool		pgwarp_enable_join_ranges = true;
int			pgwarp_heap_min_rows = 100000;
int			pgwarp_inner_hash_mem = 256 * 1024;	/* kB */
int			pgwarp_dim_cache_mem = 256 * 1024;	/* kB */
int			pgwarp_dim_cache_total_mem = 2 * 1024 * 1024;	/* kB */
int			pgwarp_cpu_threads = -1;
bool		pgwarp_explain_stable = false;
bool		pgwarp_merge_groups = true;
int			pgwarp_mode = PGWARP_MODE_AUTO;
int			pgwarp_gpud_device = PGWARP_GPUD_AUTO;
int			pgwarp_gpud_fault = GPUD_FAULT_NONE;
int			pgwarp_max_registered_memory = -1;	/* MB, -1 = a quarter of RAM */
int			pgwarp_gpu_memory_per_query = 16384;	/* MB */
bool		pgwarp_gpu_cache = true;
int			pgwarp_gpu_cache_memory = -1;	/* MB, -1 = sized from the GPU */
int			pgwarp_gpu_lanes = 2;
int			pgwarp_gpud_split_gpus = 1;

static const struct config_enum_entry gpud_device_options[] = {
	{"off", PGWARP_GPUD_OFF, false},
	{"auto", PGWARP_GPUD_AUTO, false},
	{"gpu", PGWARP_GPUD_GPU, false},
	{"cpu", PGWARP_GPUD_CPU, false},
	{NULL, 0, false}
};

static const struct config_enum_entry gpud_fault_options[] = {
	{"none", GPUD_FAULT_NONE, false},
	{"crash", GPUD_FAULT_CRASH, false},
	{"slow", GPUD_FAULT_SLOW, false},
	{"device_oom", GPUD_FAULT_DEVICE_OOM, false},
	{NULL, 0, false}
};

static const struct config_enum_entry mode_options[] = {
	{"auto", PGWARP_MODE_AUTO, false},
	{"gpu", PGWARP_MODE_GPU, false},
	{"cpu", PGWARP_MODE_CPU, false},
	{NULL, 0, false}
};

/*
 * The daemon's settings: read by the supervisor when it starts
 * pg_warp_gpud, so PGC_POSTMASTER, which PostgreSQL allows to be defined
 * only while shared_preload_libraries are loaded (a library loaded later,
 * by CREATE EXTENSION or LOAD, would end the session with FATAL); without
 * preloading there is no daemon and they keep their defaults.
 */
static void
define_daemon_gucs(void)
{
	DefineCustomEnumVariable("pg_warp.gpud_device",
							 "What the pg_warp_gpud daemon runs jobs on.",
							 "auto: every GPU if there is one (without one "
							 "the daemon serves nothing and backends use the CPU "
							 "engine); gpu: the same; cpu: the CPU engine inside "
							 "the daemon (for tests); off: no daemon.  Needs "
							 "pg_warp in shared_preload_libraries.",
							 &pgwarp_gpud_device,
							 PGWARP_GPUD_AUTO,
							 gpud_device_options,
							 PGC_POSTMASTER,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("pg_warp.max_registered_memory",
							"Most Arrow file data pg_warp_gpud keeps registered "
							"(pinned) for DMA.",
							"The column buffers GPU queries read are registered "
							"and copied to the GPU straight from the page cache; "
							"pinned pages cannot be evicted, so the daemon also "
							"keeps this under half of physical memory.  -1: a "
							"quarter of physical memory; 0: read files with pread "
							"instead.  pg_warp_gpud_settings() shows the value in "
							"effect.",
							&pgwarp_max_registered_memory,
							-1,
							-1,
							INT_MAX,
							PGC_POSTMASTER,
							GUC_UNIT_MB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("pg_warp.gpu_cache_memory",
							"GPU memory pg_warp_gpud keeps Arrow columns in across "
							"queries.",
							"Column buffers a GPU query reads stay resident in device "
							"memory (least recently used ones make room), so later "
							"queries over them copy nothing over PCIe.  -1: the GPU "
							"memory free at the daemon's start, less a margin and "
							"less what jobs keep (a third, at least 4 GB); 0: no "
							"column cache.  pg_warp_gpud_settings() shows the value "
							"in effect.",
							&pgwarp_gpu_cache_memory,
							-1,
							-1,
							INT_MAX,
							PGC_POSTMASTER,
							GUC_UNIT_MB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("pg_warp.gpu_lanes",
							"Lanes pg_warp_gpud drives each GPU through.",
							"A lane has its own turns, staging memory and share of "
							"the GPU's memory; a big query's share of a GPU runs on "
							"its lanes at the same time, which keeps the device "
							"busier than one stream of batches (small queries take "
							"one lane each).",
							&pgwarp_gpu_lanes,
							2,
							1,
							16,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("pg_warp.gpud_split_gpus",
							"Drives each GPU as this many GPUs (developer option, "
							"for tests).",
							"Each gets its own column cache, lanes and an equal "
							"share of the device's memory, so the scheduling of "
							"jobs across several GPUs runs on a machine with one.",
							&pgwarp_gpud_split_gpus,
							1,
							1,
							16,
							PGC_POSTMASTER,
							GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);
}

/* the switches of pg_warp's plans: on or off, and where they run */
static void
define_switch_gucs(void)
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

	DefineCustomBoolVariable("pg_warp.enable_join",
							 "Enables pg_warp's star join plans for queries without "
							 "aggregation (WarpJoin).",
							 "The engine filters the fact table, probes every "
							 "dimension and returns the joined rows.",
							 &pgwarp_enable_join,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("pg_warp.enable_scan",
							 "Enables pg_warp's scan plans for single-table queries "
							 "without aggregation (WarpScan).",
							 "The engine filters an Arrow table's rows on its "
							 "threads and returns the columns the query needs.",
							 &pgwarp_enable_scan,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("pg_warp.enable_scan_filter",
							 "Lets pg_warp's engine prefilter the rows of arrow_fdw "
							 "scans that no pg_warp plan takes.",
							 "The quals the engine computes exactly are evaluated "
							 "over each batch's columns first; PostgreSQL still "
							 "evaluates every qual on the rows kept.",
							 &pgwarp_enable_scan_filter,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("pg_warp.enable_dim_scan",
							 "Lets pg_warp's engine read a star query's Arrow "
							 "dimension tables itself when it builds their join "
							 "tables.",
							 "Where a dimension is a plain arrow_fdw scan whose "
							 "quals the engine computes, its rows go from the "
							 "batches' columns into the join table without "
							 "PostgreSQL's executor.",
							 &pgwarp_enable_dim_scan,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("pg_warp.cpu_mmap",
							 "Lets the CPU engine's threads read Arrow files through "
							 "a read-only memory mapping.",
							 "Uncompressed column buffers are then used in place "
							 "instead of copied with pread; a file that becomes "
							 "shorter while it is read ends the query with an error.",
							 &pgwarp_cpu_mmap,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("pg_warp.cache_heap_dimensions",
							 "Lets a backend keep the join tables it built from "
							 "heap dimension tables for later queries.",
							 "An entry is used only while no transaction that "
							 "modified the table has committed since it was built "
							 "(tracked in shared memory when pg_warp is in "
							 "shared_preload_libraries).",
							 &pgwarp_cache_heap_dimensions,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("pg_warp.enable_join_ranges",
							 "Lets pg_warp skip fact batches and rows whose join "
							 "key lies outside the keys an inner join's dimension "
							 "holds.",
							 "Once the dimensions are built, each inner or semi "
							 "join on an integer, date or timestamp column of an "
							 "Arrow fact table "
							 "adds \"column BETWEEN min AND max\" of the "
							 "dimension's keys to the batch statistics and the "
							 "raw-value row filter (only where every fact qual is "
							 "one that cannot raise an error).",
							 &pgwarp_enable_join_ranges,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
}

/* thresholds, memory and threads of the backends' engine */
static void
define_resource_gucs(void)
{
	DefineCustomIntVariable("pg_warp.heap_min_rows",
							"Smallest heap table pg_warp's engine takes as the fact "
							"table of a query that reads no Arrow table.",
							"The engine reads such a table through PostgreSQL's "
							"table access method, tuple by tuple, and runs the "
							"star join and aggregation on column vectors. -1 never "
							"offloads heap fact tables.",
							&pgwarp_heap_min_rows,
							100000,
							-1,
							INT_MAX,
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

	DefineCustomIntVariable("pg_warp.dim_cache_mem",
							"Most memory one backend keeps built dimension tables "
							"in for later queries.",
							"Least recently used dimensions make room; one larger "
							"than half of this is not kept.  0 keeps none.",
							&pgwarp_dim_cache_mem,
							256 * 1024,
							0,
							MAX_KILOBYTES,
							PGC_USERSET,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("pg_warp.dim_cache_total_mem",
							"Most memory all backends together keep built dimension "
							"tables in (with pg_warp preloaded).",
							"A backend over it evicts its own least recently used "
							"dimensions, or keeps none more.  0 keeps none.",
							&pgwarp_dim_cache_total_mem,
							2 * 1024 * 1024,
							0,
							MAX_KILOBYTES,
							PGC_SIGHUP,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("pg_warp.cpu_threads",
							"Threads of the CPU driver in one backend.",
							"-1 (the default): max_parallel_workers_per_gather + 1, "
							"as many as a parallel plan would have participants. "
							"With more than one thread pg_warp's CPU plans are not "
							"parallel plans: the backend runs the engine on its own "
							"threads (no worker start-up); 1 keeps PostgreSQL's "
							"parallel workers.",
							&pgwarp_cpu_threads,
							-1,
							-1,
							64,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);
}

/* how queries run: merging, EXPLAIN, the GPU's share, fault injection */
static void
define_execution_gucs(void)
{
	DefineCustomBoolVariable("pg_warp.merge_groups",
							 "Merges the partial groups of the CPU driver's "
							 "threads and of the GPU lanes before PostgreSQL's "
							 "Finalize step sees them.",
							 "Off: each thread (lane) hands up its own groups, "
							 "so a group seen by all of them arrives once per "
							 "thread (for comparisons; answers are the same). "
							 "A count(DISTINCT) the engine counts itself merges "
							 "regardless.",
							 &pgwarp_merge_groups,
							 true,
							 PGC_USERSET,
							 0,
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

	DefineCustomIntVariable("pg_warp.gpu_memory_per_query",
							"Most GPU memory one query may use.",
							"pg_warp_gpud reserves a query's device memory (join "
							"tables, group table, batch buffers) before it starts, "
							"queueing behind running queries when the GPU's memory "
							"is taken; a query that would need more than this "
							"runs on the CPU engine instead.",
							&pgwarp_gpu_memory_per_query,
							16384,
							1,
							INT_MAX,
							PGC_USERSET,
							GUC_UNIT_MB,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("pg_warp.gpu_cache",
							 "Whether this session's GPU queries use the GPU column "
							 "cache.",
							 "off: the columns cross PCIe on every query, and "
							 "nothing is added to the cache (for measurements).",
							 &pgwarp_gpu_cache,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomEnumVariable("pg_warp.gpud_fault",
							 "Injects a fault into this session's pg_warp_gpud jobs "
							 "(developer option, for tests).",
							 "crash: the daemon is killed after the first batch; "
							 "slow: it sleeps 50 ms per batch; device_oom: the "
							 "device driver reports out of memory.",
							 &pgwarp_gpud_fault,
							 GPUD_FAULT_NONE,
							 gpud_fault_options,
							 PGC_SUSET,
							 GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);
}

/* spatial joins over PostGIS geometry (warp_spatial.h) */
static void
define_spatial_gucs(void)
{
	DefineCustomBoolVariable("pg_warp.enable_spatial",
							 "Enables pg_warp's spatial join plans (WarpSpatialJoin) "
							 "for PostGIS predicates.",
							 "Joins on ST_Contains, ST_Within, ST_Covers, "
							 "ST_CoveredBy, ST_Intersects, ST_DWithin or && between "
							 "geometry columns; PostGIS's own function decides the "
							 "pairs within rounding distance of a boundary.",
							 &pgwarp_enable_spatial,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
}

/* vector search (src/pg/vector) */
static void
define_vector_gucs(void)
{
	DefineCustomIntVariable("pg_warp.ivf_probes",
							"Lists a warp_ivf index scan reads.",
							"More lists: higher recall, slower scans.  At the "
							"index's number of lists the scan is exact.",
							&pgwarp_ivf_probes,
							10,
							1,
							32768,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);
}

/* the GPU table cache (src/pg/tcache) */
bool		pgwarp_gpu_table_cache = true;
int			pgwarp_gpu_table_cache_memory = 4096;	/* MB */
int			pgwarp_gpu_table_cache_log = 256;	/* MB */

static void
define_table_cache_gucs(void)
{
	DefineCustomBoolVariable("pg_warp.gpu_table_cache",
							 "Lets queries over heap tables attached to the GPU "
							 "table cache read its replica in pg_warp_gpud.",
							 "Off: such tables are read through PostgreSQL's table "
							 "access method; their changes are still captured.",
							 &pgwarp_gpu_table_cache,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("pg_warp.gpu_table_cache_memory",
							"Memory all GPU table cache replicas may hold in "
							"pg_warp_gpud (device memory on a GPU).",
							"Attaching a table that does not fit fails naming it; "
							"a replica that outgrows it is dropped and queries read "
							"the heap until it is loaded again.",
							&pgwarp_gpu_table_cache_memory,
							4096, 1, INT_MAX / 2,
							PGC_SIGHUP,
							GUC_UNIT_MB,
							NULL, NULL, NULL);
	DefineCustomIntVariable("pg_warp.gpu_table_cache_log",
							"Row changes pg_warp_gpud holds for a GPU table cache "
							"replica while it loads.",
							"Beyond it the load is abandoned and the next query "
							"loads the replica again.",
							&pgwarp_gpu_table_cache_log,
							256, 1, INT_MAX / 2,
							PGC_SIGHUP,
							GUC_UNIT_MB,
							NULL, NULL, NULL);
}

/* heap fact tables in row mode (WarpJoin, WarpScan) */
bool		pgwarp_heap_row_joins = false;

static void
define_heap_fact_gucs(void)
{
	DefineCustomBoolVariable("pg_warp.heap_row_joins",
							 "Lets joins without aggregation (WarpJoin, WarpScan) "
							 "read a heap fact table.",
							 "Off by default: measured slower than PostgreSQL's own "
							 "scans and joins (TPC-H SF=1), since the tuples are "
							 "deformed into vectors and the joined rows built again.",
							 &pgwarp_heap_row_joins,
							 false,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
}

/* query rewriting before planning (plan/warp_decorrelate.c) */
static void
define_planning_gucs(void)
{
	DefineCustomBoolVariable("pg_warp.enable_decorrelation",
							 "Plans a correlated aggregate subquery as a grouped join.",
							 "A WHERE comparison with a scalar subquery of sum, avg, min "
							 "or max correlated by equalities becomes a join with the "
							 "subquery grouped by its correlation keys, unless an index "
							 "serves the correlation; x NOT IN (subquery) of NOT NULL "
							 "columns becomes an anti join.",
							 &pgwarp_enable_decorrelation,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
}

/* (preload only: a restart setting) */
static void
define_table_cache_ring_guc(void)
{
	DefineCustomIntVariable("pg_warp.gpu_table_cache_ring",
							"Size of the change log ring that committing "
							"transactions append their captured row changes to.",
							"Shared with pg_warp_gpud, which applies it; 0 ships "
							"each transaction's changes to the daemon over its "
							"socket at commit instead (a round trip per commit).",
							&pgwarp_gpu_table_cache_ring,
							64,
							0, 4096,
							PGC_POSTMASTER,
							GUC_UNIT_MB,
							NULL, NULL, NULL);
}

void
pgwarp_define_gucs(void)
{
	define_heap_fact_gucs();
	define_planning_gucs();
	define_table_cache_gucs();
	define_switch_gucs();
	define_spatial_gucs();
	define_resource_gucs();
	define_execution_gucs();
	define_vector_gucs();
	if (process_shared_preload_libraries_in_progress)
	{
		define_daemon_gucs();
		define_table_cache_ring_guc();
	}
	MarkGUCPrefixReserved("pg_warp");
}
