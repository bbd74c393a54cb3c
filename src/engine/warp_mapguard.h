/*
 * warp_mapguard.h — touching memory-mapped Arrow files on the engine's
 * threads without dying when a file shrinks under its mapping
 * (warp_mapguard.c).
 *
 * Pure C: no PostgreSQL header.
 *
 *     WarpMapGuard g;
 *
 *     g.ranges = ranges; g.nranges = n;
 *     if (sigsetjmp(g.jb, 1) != 0)
 *         ... a mapped page past the end of its file was touched ...
 *     warp_mapguard_arm(&g);
 *     ... read the mapped ranges ...
 *     warp_mapguard_disarm();
 */
#ifndef WARP_MAPGUARD_H
#define WARP_MAPGUARD_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct WarpMapRange
{
	const uint8_t *lo;
	size_t		len;
} WarpMapRange;

typedef struct WarpMapGuard
{
	sigjmp_buf	jb;
	const WarpMapRange *ranges;
	int			nranges;
} WarpMapGuard;

/* Install the SIGBUS handler (once per process); false if that failed,
 * and then nothing may be mapped. */
extern bool warp_mapguard_install(void);

/* this thread's guard from now on / none any more */
extern void warp_mapguard_arm(WarpMapGuard *g);
extern void warp_mapguard_disarm(void);

#endif							/* WARP_MAPGUARD_H */
