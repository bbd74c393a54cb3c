/*-------------------------------------------------------------------------
 *
 * gpud_clock.h
 *	  A monotonic clock in milliseconds, for timings: the daemon's phases
 *	  and reads (gpud_job.c), the GPU driver's flushes, and the GPU probe.
 *
 * Pure C; header only.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUD_CLOCK_H
#define GPUD_CLOCK_H

#include <time.h>

static inline double
gpud_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

#endif							/* GPUD_CLOCK_H */
