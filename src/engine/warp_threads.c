/*
 * warp_threads.c — run numbered tasks on several threads (warp_threads.h).
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

#include "warp_threads.h"

typedef struct TaskRun
{
	int			ntasks;
	WarpTaskFn	task;
	void	   *arg;
	int			next;			/* next task to claim (atomic) */
	int			stop;			/* set once interrupted (atomic) */
} TaskRun;

static void
claim_tasks(TaskRun *r, bool (*interrupted) (void *), void *iarg)
{
	for (;;)
	{
		int			t;

		if (interrupted && interrupted(iarg))
		{
			__atomic_store_n(&r->stop, 1, __ATOMIC_RELAXED);
			return;
		}
		if (__atomic_load_n(&r->stop, __ATOMIC_RELAXED))
			return;
		t = __atomic_fetch_add(&r->next, 1, __ATOMIC_RELAXED);
		if (t >= r->ntasks)
			return;
		r->task(r->arg, t);
	}
}

static void *
thread_main(void *arg)
{
	claim_tasks((TaskRun *) arg, NULL, NULL);
	return NULL;
}

int
warp_run_tasks(int nthreads, int ntasks, WarpTaskFn task, void *arg,
			   bool (*interrupted) (void *iarg), void *iarg)
{
	TaskRun		r;
	pthread_t  *tids = NULL;
	int			started = 0;
	int			i;

	r.ntasks = ntasks;
	r.task = task;
	r.arg = arg;
	r.next = 0;
	r.stop = 0;
	if (nthreads > ntasks)
		nthreads = ntasks;
	if (nthreads > 1)
		tids = malloc(sizeof(pthread_t) * (nthreads - 1));
	if (tids != NULL)
	{
		sigset_t	all,
					old;

		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		for (i = 0; i < nthreads - 1; i++)
			if (pthread_create(&tids[started], NULL, thread_main, &r) == 0)
				started++;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	claim_tasks(&r, interrupted, iarg);
	for (i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	free(tids);
	return r.stop ? -1 : 0;
}
