/*
 * gpud_client.h — a backend's side of the conversation with pg_warp_gpud
 * (see src/gpud/gpud_wire.h for the protocol).
 */
#ifndef GPUD_CLIENT_H
#define GPUD_CLIENT_H

#include "postgres.h"

#include <sys/stat.h>

#include "gpud_wire.h"

/* GUCs (guc.c) */
typedef enum PgWarpGpudDevice
{
	PGWARP_GPUD_OFF,
	PGWARP_GPUD_AUTO,
	PGWARP_GPUD_GPU,
	PGWARP_GPUD_CPU
} PgWarpGpudDevice;

extern int	pgwarp_gpud_device;
extern int	pgwarp_gpud_fault;
extern int	pgwarp_max_registered_memory;	/* MB */
extern int	pgwarp_gpu_memory_per_query;	/* MB */
extern bool pgwarp_gpu_cache;
extern int	pgwarp_gpu_cache_memory;	/* MB, -1 = auto */
extern int	pgwarp_gpu_lanes;
extern int	pgwarp_gpud_split_gpus;

/* One fact file, as the backend opened it. */
typedef struct GpudClientFile
{
	const char *path;
	int64		limit;			/* committed length, or -1 */
	bool		recover_tail;
	struct stat st;
	int			nbatches;
	int32	   *batches;
	int32	   *fields;			/* per program column */
} GpudClientFile;

/* One dimension: build rows as keys and payload ids. */
typedef struct GpudClientTable
{
	int64		nrows;
	int32		npayloads;
	const int64 *keys;
	const int32 *payload;
} GpudClientTable;

/* The rows are a GPU table cache replica (src/pg/tcache): its identity,
 * the snapshot's classes of its transaction dictionary, the replica column
 * of each program column. */
typedef struct GpudClientCached
{
	GpudCacheKey key;
	uint32		curcid;
	uint64		dict_epoch;
	uint32		nclasses;
	const uint8 *classes;
	const int32 *cols;
} GpudClientCached;

/*
 * Whether a daemon is serving now, and on what (GpudDeviceKind).  Reads
 * the daemon's status file; cheap.
 */
extern bool pgwarp_gpud_serving(int *kind);

/* what the daemon's status file says: its device and budgets in effect */
typedef struct GpudStatus
{
	int			kind;			/* GpudDeviceKind */
	int			ngpus;
	int			pid;
	int			lanes_per_gpu;	/* 0 when not written (CPU) */
	uint64		registered_mb;	/* registered-window budget */
	uint64		cache_mb;		/* column cache, per GPU */
	uint64		staging_mb;		/* pinned staging, per lane */
	char		name[128];
} GpudStatus;

/*
 * Where a daemon job's time went in the backend (EXPLAIN ANALYZE's
 * "Hand-off"): connecting until the daemon's arena is mapped (its greeting
 * and the job's size asked for), writing the job into the arena, waiting
 * from GO to DONE (the daemon's own time is in the result), mapping and
 * checking the result.
 */
typedef struct GpudClientTimes
{
	double		connect_ms;
	double		job_ms;
	double		wait_ms;
	double		result_ms;
} GpudClientTimes;

/* the running daemon's status; false when none is serving */
extern bool pgwarp_gpud_status(GpudStatus *st);

/*
 * Run a program on the daemon.  Returns the result (valid until
 * CurrentMemoryContext is reset), or NULL with *why set when the daemon
 * could not run it (not running, died, refused): the caller then runs the
 * query on its own CPU driver.  A query cancel while waiting stops the
 * daemon's work and raises the usual error.
 */
extern GpudResult *pgwarp_gpud_run(const WarpProgram *prog,
								   int ntables, const GpudClientTable *tables,
								   int nfiles, const GpudClientFile *files,
								   GpudClientTimes *times, char *why, size_t whylen);

/* the same with the rows of a cached heap table (cached not NULL) */
extern GpudResult *pgwarp_gpud_run_job(const WarpProgram *prog,
									   int ntables, const GpudClientTable *tables,
									   int nfiles, const GpudClientFile *files,
									   const GpudClientCached *cached,
									   GpudClientTimes *times, char *why, size_t whylen);

/*
 * A job in row mode (prog->emit_rows: WarpJoin, WarpScan) on the daemon,
 * its rows streamed in chunks: start it (NULL with *why when the daemon
 * cannot take it: the caller runs it on its own CPU driver), then take
 * chunks until the end.  _next gives 1 and a chunk in *out (a GpudResult
 * of ngroups rows, keys and NULL flags, valid until the next call), 0 and
 * the job's result in *out at the end (counts, errors; no rows), or -1
 * with *why when the daemon died or failed.  Stopping early is allowed:
 * the connection is closed with the current memory context (the daemon
 * then drops the job).  A query cancel while waiting raises the usual
 * error.
 */
typedef struct GpudRowStream GpudRowStream;

extern GpudRowStream *pgwarp_gpud_rows_start(const WarpProgram *prog, int ntables,
											 const GpudClientTable *tables, int nfiles,
											 const GpudClientFile *files, GpudClientTimes *times,
											 char *why, size_t whylen);
extern int	pgwarp_gpud_rows_next(GpudRowStream *s, GpudResult **out, char *why, size_t whylen);

/*
 * A GPU table cache request: req's op, key and counts (the rest filled
 * here), the column kinds (LOAD_BEGIN) and len bytes of records.  The
 * answer (palloc'd, *resp_len bytes), or NULL with *why.
 */
extern GpudCacheResp *pgwarp_gpud_cache_request(GpudCacheReq *req, const uint8 *kinds,
												const void *data, uint64 len,
												uint64 *resp_len, char *why, size_t whylen);

/* gpud_supervisor.c */
extern void pgwarp_gpud_register_supervisor(void);

#endif							/* GPUD_CLIENT_H */
