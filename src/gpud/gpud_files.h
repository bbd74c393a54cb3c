/*-------------------------------------------------------------------------
 *
 * gpud_files.h
 *	  pg_warp_gpud's cache of registered file windows: read-only mappings
 *	  of Arrow files, registered with the GPU so that column buffers are
 *	  DMA'd straight from the page cache at link speed, with no CPU copy.
 *
 * Registering costs about as much as one copy (DESIGN.md: 13-36 GB/s from
 * the page cache) and pins the pages, so windows are kept across queries,
 * least recently used first out, within a byte budget
 * (pg_warp.max_registered_memory).  A window is the file's readable range
 * (its committed length for a writable table) and is keyed by the file's
 * identity (device, inode, size, mtime) and that length: a changed file is
 * a new window, and the stale one ages out.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUD_FILES_H
#define GPUD_FILES_H

#include <stdint.h>
#include <sys/stat.h>

typedef struct GpudWindow GpudWindow;

/* budget in bytes; 0 disables the cache (jobs then read with pread) */
extern void gpud_windows_init(uint64_t budget);

/*
 * The window of [0, len) of the file open on fd (whose fstat is st), mapped
 * and registered, with a reference held; NULL when it cannot be (larger
 * than the budget, registration refused): the caller reads with pread.
 * *base is the mapping.
 */
extern GpudWindow *gpud_window_acquire(int fd, const struct stat *st, uint64_t len,
									   const uint8_t **base);
extern void gpud_window_release(GpudWindow *w);

/* bytes registered now, for the log */
extern uint64_t gpud_windows_bytes(void);

#endif							/* GPUD_FILES_H */
