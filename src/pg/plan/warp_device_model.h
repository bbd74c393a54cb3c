/*-------------------------------------------------------------------------
 *
 * warp_device_model.h
 *	  Whether a star query's fact scan runs faster on the GPU (through
 *	  pg_warp_gpud) or on the CPU driver in the backend, from the bytes of
 *	  fact columns it reads, the daemon's budgets and the backend's
 *	  threads.  Used by the planner in pg_warp.mode = auto (warp_plan.c);
 *	  the estimates and the reason are shown by EXPLAIN ("Device Choice").
 *
 * The rule.  Columns that fit the GPU column cache go to the GPU: the
 * first query copies them over the link, later ones read them from device
 * memory, where a scan is far faster than on any CPU (choosing the CPU
 * there would also keep them from ever becoming resident).  Columns that
 * do not fit must cross the link at every query: at the registered rate
 * for what the registered-window budget holds, at the pread rate for the
 * rest; the CPU driver reads them from the page cache on all its threads.
 * The faster estimate wins.  Rates (bench/results, SSB on H100/H200 hosts):
 * registered windows 50 GB/s (PCIe Gen5 x16 measured 50-55), pread into
 * pinned staging 12 GB/s, the CPU driver 1.7 GB/s of columns per thread
 * (16 threads: SF=100 in 261 ms geometric mean).  A GPU scan over the
 * link costs about 1 ms more to start (hand-off, per-query set-up).
 *
 * Pure C (no PostgreSQL), unit-tested (test/unit/test_device_model.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_DEVICE_MODEL_H
#define WARP_DEVICE_MODEL_H

#include <stdbool.h>

#define WARP_LINK_REGISTERED_GBPS	50.0
#define WARP_LINK_PREAD_GBPS		12.0
#define WARP_CPU_THREAD_GBPS		1.7
#define WARP_GPU_START_MS			1.0

typedef struct WarpDeviceInputs
{
	double		column_bytes;	/* fact column bytes the scan reads */
	double		cache_bytes;	/* GPU column cache, all GPUs */
	double		registered_bytes;	/* registered-window budget */
	int			cpu_threads;	/* the CPU driver's threads */
} WarpDeviceInputs;

typedef struct WarpDeviceChoice
{
	bool		gpu;			/* run on the GPU */
	bool		fits_cache;		/* the columns fit the column cache */
	double		link_ms;		/* the GPU's copy over the link */
	double		cpu_ms;			/* the CPU driver's scan */
} WarpDeviceChoice;

static inline WarpDeviceChoice
warp_device_choose(const WarpDeviceInputs *in)
{
	WarpDeviceChoice c;
	double		reg = in->column_bytes < in->registered_bytes ?
		in->column_bytes : in->registered_bytes;
	double		rest = in->column_bytes - (reg > 0 ? reg : 0);
	int			threads = in->cpu_threads > 0 ? in->cpu_threads : 1;

	c.fits_cache = in->cache_bytes > 0 && in->column_bytes <= in->cache_bytes;
	c.link_ms = WARP_GPU_START_MS + (reg > 0 ? reg : 0) / (WARP_LINK_REGISTERED_GBPS * 1e6) +
		rest / (WARP_LINK_PREAD_GBPS * 1e6);
	c.cpu_ms = in->column_bytes / (WARP_CPU_THREAD_GBPS * 1e6 * threads);
	c.gpu = c.fits_cache || c.link_ms <= c.cpu_ms;
	return c;
}

#endif							/* WARP_DEVICE_MODEL_H */
