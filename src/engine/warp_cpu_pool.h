/*
 * warp_cpu_pool.h — the CPU driver over a list of record batches, on
 * several threads.
 *
 * A query's fact batches are cut into work units (a batch, or a part of a
 * big uncompressed batch: arrow_load_column_range) that threads claim from
 * a shared counter.  Each thread has its own WarpCpu (its own group table
 * of partial aggregates), its own memory and its own buffers; the join
 * tables are shared read-only.  The caller emits every thread's groups as
 * partial states: the combine step above merges them, exactly as it
 * merges the partial states of parallel workers.
 *
 * Errors keep the order of a serial scan: when a unit fails, units after
 * it are no longer started, units before it still run, and the error
 * reported is the one of the earliest failing unit (within a unit the
 * driver reports the first failing row).  The calling thread runs units
 * too and polls `interrupted` between them, so a query cancel stops the
 * pool within one unit.
 *
 * Pure C (no PostgreSQL): threads block every signal but the synchronous
 * ones, memory is malloc'd and freed by warp_cpu_pool_free.  An ArrowFile
 * is shared by the threads: reading goes through its source (which must be
 * safe to call from several threads: pread is) and the dictionary cache,
 * the one part of a file that loading changes, is used under a per-file
 * lock.  A file the caller marks mappable (with its descriptor) is mapped
 * read-only for the run, and its uncompressed buffers are used in place
 * instead of copied: a unit that touches a page the file no longer has
 * (it was truncated) fails with an I/O error (warp_mapguard.c).
 */
#ifndef WARP_CPU_POOL_H
#define WARP_CPU_POOL_H

#include <pthread.h>

#include "arrow.h"
#include "warp_cpu.h"

/* One file of the scan. */
typedef struct WarpPoolFile
{
	ArrowFile  *file;			/* open and shared by the threads, or NULL for
								 * a file no batch of the list is in */
	const int  *fields;			/* per program column: field of the file */
	/* IS [NOT] NULL clauses a batch's null counts decide (a batch they
	 * exclude is skipped, counted in batches_skipped): fields, kinds */
	int			nnull;
	const int  *null_fields;
	const bool *null_is_null;
	bool		mappable;		/* map the file (map_fd) for the run, if no
								 * field read is dictionary-encoded */
	int			map_fd;
	/* the pool's: */
	pthread_mutex_t dict_lock;
	const uint8_t *map;			/* the mapping, or NULL */
	size_t		map_len;
	int			(*inner_read) (void *ctx, void *dst, size_t len, uint64_t off);
	void	   *inner_ctx;
	struct WarpCpuPool *pool;
} WarpPoolFile;

/* One record batch to run (stats-based skipping is the caller's). */
typedef struct WarpPoolBatch
{
	int			file;
	int			batch;
} WarpPoolBatch;

typedef enum WarpPoolError
{
	WARP_POOL_OK = 0,
	WARP_POOL_STATUS,			/* the driver's error: status */
	WARP_POOL_LOAD,				/* load_status, bad_col, bad_row */
	WARP_POOL_ARROW,			/* arrow_err */
	WARP_POOL_NOMEM,			/* a thread's memory or the threads */
	WARP_POOL_INTERRUPTED		/* interrupted() said so */
} WarpPoolError;

typedef struct WarpCpuPool
{
	/* input */
	const WarpProgram *prog;
	WarpJoinTable *const *tables;
	int			nfiles;
	WarpPoolFile *files;
	int			nbatches;
	const WarpPoolBatch *batches;
	int			nthreads;		/* including the calling thread */
	int			parts;			/* units per big uncompressed batch */
	bool		(*interrupted) (void *arg);	/* polled by the calling thread */
	void	   *interrupted_arg;

	/* output */
	int			ncpus;			/* drivers with partial groups */
	WarpCpu   **cpus;
	WarpPoolError error;
	WarpStatus	status;
	WarpLoadStatus load_status;
	int			bad_col;
	int64_t		bad_row;		/* row of the record batch */
	int			bad_file;
	int			bad_batch;
	ArrowError	arrow_err;
	uint64_t	batches_read;
	uint64_t	batches_skipped;	/* by null counts (WarpPoolFile.nnull) */
	uint64_t	bytes_read;
	WarpCpuCounters counters;	/* summed over the drivers */
	bool		order_risk;		/* a float sum saw a value whose overflow
								 * depends on the order of the rows: run
								 * the query again in one thread */

	int			nmapped;		/* files read through a mapping this run */

	/* internal */
	struct WarpPoolThread *threads;
	struct WarpMapRange *map_ranges;	/* the mappings, for the guards */
	pthread_mutex_t lock;
	uint64_t	next_unit;
	uint64_t	stop_unit;		/* no unit at or after it is started */
	uint64_t	error_unit;
} WarpCpuPool;

/*
 * Run the units.  Returns 0 when every unit ran, -1 with pool->error set
 * otherwise; either way pool->cpus stay valid until warp_cpu_pool_free.
 * The files' sources are wrapped (to count bytes) for the duration.
 */
extern int	warp_cpu_pool_run(WarpCpuPool *pool);

/* Free the drivers, buffers and thread state (idempotent). */
extern void warp_cpu_pool_free(WarpCpuPool *pool);

#endif							/* WARP_CPU_POOL_H */
