/*-------------------------------------------------------------------------
 *
 * gpud_sizing.h
 *	  pg_warp_gpud's memory budgets, sized from the machine at start when
 *	  the settings leave them automatic (-1), so that a new cluster runs
 *	  big data sets without tuning (SSB SF=100 on a 128 GB host with an
 *	  80 GB GPU: the 21.6 GB of fact columns its 13 queries read are both
 *	  registered and resident).
 *
 *   registered file windows (pg_warp.max_registered_memory)
 *	   auto: a quarter of physical memory.  Registered pages are page cache
 *	   the kernel cannot evict, so an explicit value is still held to half
 *	   of physical memory.
 *   GPU column cache (pg_warp.gpu_cache_memory), per GPU
 *	   avail = device memory free at start less max(1 GB, 5 % of the
 *	   device) (the context's and other processes' needs);
 *	   auto: avail less what jobs keep, max(a third of avail, 4 GB);
 *	   an explicit value is held to avail less max(an eighth, 2 GB), so
 *	   jobs always have room.
 *   pinned staging memory, per lane (--staging-mb)
 *	   auto: physical memory / 256, between 64 MB and 512 MB (batches
 *	   beyond it are read into ordinary memory).
 *
 * Pure C, no state: unit-tested (test_gpud_sizing.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUD_SIZING_H
#define GPUD_SIZING_H

#include <stdint.h>

#define GPUD_MB ((uint64_t) 1 << 20)
#define GPUD_GB ((uint64_t) 1 << 30)

static inline uint64_t
gpud_max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static inline uint64_t
gpud_min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* bytes of file windows to keep registered; want_mb < 0: automatic */
static inline uint64_t
gpud_size_registered(uint64_t phys, long want_mb)
{
	if (want_mb < 0)
		return phys / 4;
	return gpud_min_u64((uint64_t) want_mb * GPUD_MB, phys / 2);
}

/* device memory usable by the daemon: free at start less the margin */
static inline uint64_t
gpud_size_device_avail(uint64_t free_bytes, uint64_t total_bytes)
{
	uint64_t	margin = gpud_max_u64(total_bytes / 20, GPUD_GB);

	return free_bytes > margin ? free_bytes - margin : 0;
}

/* bytes of a GPU's column cache out of avail; want_mb < 0: automatic */
static inline uint64_t
gpud_size_cache(uint64_t avail, long want_mb)
{
	uint64_t	keep;

	if (want_mb < 0)
		keep = gpud_max_u64(avail / 3, 4 * GPUD_GB);
	else
		keep = gpud_max_u64(avail / 8, 2 * GPUD_GB);
	if (keep >= avail)
		return 0;
	if (want_mb < 0)
		return avail - keep;
	return gpud_min_u64((uint64_t) want_mb * GPUD_MB, avail - keep);
}

/* bytes of pinned staging memory per lane; want_mb < 0: automatic */
static inline uint64_t
gpud_size_staging(uint64_t phys, long want_mb)
{
	if (want_mb >= 0)
		return (uint64_t) want_mb * GPUD_MB;
	return gpud_min_u64(gpud_max_u64(phys / 256, 64 * GPUD_MB), 512 * GPUD_MB);
}

#endif							/* GPUD_SIZING_H */
