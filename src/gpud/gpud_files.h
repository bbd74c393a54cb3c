/*-------------------------------------------------------------------------
 *
 * gpud_files.h
 *	  pg_warp_gpud's cache of registered file windows: byte ranges of
 *	  read-only mappings of Arrow files, registered with the GPU so that
 *	  column buffers are DMA'd straight from the page cache at link speed,
 *	  with no CPU copy.
 *
 * Registering costs about as much as one copy (DESIGN.md: 13-36 GB/s from
 * the page cache) and pins the pages, so windows are kept across queries,
 * least recently used first out, within a byte budget
 * (pg_warp.max_registered_memory).  A file is mapped whole (address space
 * only: nothing is read or pinned by the mapping), and what is registered
 * is the column buffers the jobs read: a job hands over the byte ranges of
 * the buffers of the batches it reads, which are coalesced into units of
 * at least GPUD_WINDOW_UNIT bytes where neighbours allow (the DMA unit the
 * link needs) and at most GPUD_WINDOW_MAX, and each unit not yet
 * registered is registered if the budget has room.  So a 46 GB file whose
 * query reads 9.6 GB of columns pins 9.6 GB, not the file or nothing.
 * A mapping is keyed by the file's identity (device, inode, size, mtime)
 * and its readable length: a changed file is a new mapping, and the stale
 * one's windows are dropped.
 *
 * Windows of one mapping never overlap (the driver cannot register a page
 * twice): a unit that overlaps windows nobody uses replaces them by their
 * union; one that overlaps a window in use is left unregistered, and its
 * buffers are read with pread.  A buffer is read in place only when one
 * window the job holds contains it whole.
 *
 * Pure C (no PostgreSQL, no CUDA): registration goes through the
 * callbacks given to gpud_windows_init, so the unit tests run it without
 * a GPU.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUD_FILES_H
#define GPUD_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* coalesced registration units: at least this where neighbours allow */
#define GPUD_WINDOW_UNIT	((uint64_t) 4 << 20)
/* neighbours closer than this are one unit whatever its size */
#define GPUD_WINDOW_GAP		((uint64_t) 1 << 20)
/* and no unit grows past this by coalescing (a single buffer may) */
#define GPUD_WINDOW_MAX		((uint64_t) 256 << 20)

/* a byte range of a file */
typedef struct GpudRange
{
	uint64_t	off;
	uint64_t	len;
} GpudRange;

/* how memory is registered: 0, or -1 with a reason (warp_gpu.h's) */
typedef struct GpudRegisterOps
{
	int			(*reg) (void *p, size_t len, char *why, size_t whylen);
	void		(*unreg) (void *p);
} GpudRegisterOps;

typedef struct GpudWindow GpudWindow;

/*
 * budget in bytes; 0 disables windows (jobs then read with pread).  ops
 * are copied.  Call before any other function; may be called again when
 * no window is held (tests).
 */
extern void gpud_windows_init(uint64_t budget, const GpudRegisterOps *ops);

/*
 * Sort ranges r[0..n) and coalesce them into registration units, in
 * place: page-aligned, clipped to [0, limit), disjoint and in order.
 * Returns the number of units (<= n).
 */
extern int	gpud_window_plan(GpudRange *r, int n, uint64_t page, uint64_t limit);

/*
 * The mapping of [0, len) of the file open on fd (whose fstat is st), with
 * a reference held and no window yet; NULL when windows are off (budget 0)
 * or the file cannot be mapped: the caller reads with pread.  *base is the
 * mapping.
 */
extern GpudWindow *gpud_window_open(int fd, const struct stat *st, uint64_t len,
									const uint8_t **base);

/*
 * Register the units of ranges r[0..n) (reordered: gpud_window_plan) that
 * the budget allows, or find them registered, and hold them until
 * gpud_window_release.  Returns the bytes of w's windows.
 */
extern uint64_t gpud_window_cover(GpudWindow *w, GpudRange *r, int n);

/* does a window w holds contain [off, off + len)? */
extern bool gpud_window_covers(const GpudWindow *w, uint64_t off, uint64_t len);

/* let go of w's windows and mapping (NULL: nothing) */
extern void gpud_window_release(GpudWindow *w);

/* bytes registered now, and windows, for the log and tests */
extern uint64_t gpud_windows_bytes(void);
extern int	gpud_windows_count(void);

#endif							/* GPUD_FILES_H */
