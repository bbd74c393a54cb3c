/*
 * warp_mapguard.c — touching memory-mapped Arrow files on the engine's
 * threads without dying when a file shrinks under its mapping.
 *
 * A page of a shared file mapping that lies wholly past the end of the
 * file raises SIGBUS when it is touched.  The engine maps a query's Arrow
 * files for its threads (warp_cpu_pool.c), and a file truncated in place
 * while a query runs must end that query with an error, not the backend
 * with a core dump (and the postmaster's crash restart of every session).
 * So each thread arms a guard around the loads and the program over one
 * unit of work; the SIGBUS handler, installed once per process, jumps back
 * to the faulting thread's armed guard when the faulting address lies in
 * one of the guard's mapped ranges.  Any other SIGBUS is not ours: the
 * handler puts the previous disposition back and returns, so the fault
 * repeats under it (by default a core dump, as without this file).
 *
 * SIGBUS for a faulting access goes to the thread that made it, and must
 * not be blocked there (the kernel would kill the process): the pool's
 * threads block every signal but the synchronous ones.
 */
#include <signal.h>
#include <string.h>

#include "warp_mapguard.h"

static __thread WarpMapGuard *armed;
static struct sigaction previous;
static bool installed;

static void
bus_handler(int signo, siginfo_t *info, void *uctx)
{
	WarpMapGuard *g = armed;

	(void) signo;
	(void) uctx;
	if (g != NULL && info != NULL)
	{
		const uint8_t *a = info->si_addr;
		int			i;

		for (i = 0; i < g->nranges; i++)
			if (a >= g->ranges[i].lo && a < g->ranges[i].lo + g->ranges[i].len)
			{
				armed = NULL;
				siglongjmp(g->jb, 1);
			}
	}
	/* not a guarded mapping: the fault repeats under the old disposition */
	sigaction(SIGBUS, &previous, NULL);
}

bool
warp_mapguard_install(void)
{
	struct sigaction sa;

	if (installed)
		return true;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = bus_handler;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &previous) != 0)
		return false;
	installed = true;
	return true;
}

void
warp_mapguard_arm(WarpMapGuard *g)
{
	armed = g;
}

void
warp_mapguard_disarm(void)
{
	armed = NULL;
}
