/*
 * warp_threads.h — run numbered tasks on several threads.
 *
 * A small parallel-for for work that needs no shared state beyond what the
 * caller hands each task (the group merge, warp_group_merge.h).  The
 * calling thread runs tasks too and polls `interrupted` between them; once
 * it says so, no further task is started and the call returns -1.  The
 * other threads block every signal (the calling process handles them).
 * Threads that cannot be created are simply not used.
 *
 * Pure C (no PostgreSQL).
 */
#ifndef WARP_THREADS_H
#define WARP_THREADS_H

#include <stdbool.h>

typedef void (*WarpTaskFn) (void *arg, int task);

/* Run task(arg, 0 .. ntasks-1) on up to nthreads threads (the caller's
 * included).  Returns 0, or -1 when interrupted. */
extern int	warp_run_tasks(int nthreads, int ntasks, WarpTaskFn task, void *arg,
						   bool (*interrupted) (void *iarg), void *iarg);

#endif							/* WARP_THREADS_H */
