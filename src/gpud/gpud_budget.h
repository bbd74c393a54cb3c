/*-------------------------------------------------------------------------
 *
 * gpud_budget.h
 *	  Device memory admission for pg_warp_gpud's jobs.
 *
 * The daemon owns a budget of device memory (what was free at start, less
 * a margin).  A job reserves what its driver will allocate up front (join
 * tables, group table, a first staging estimate) before it starts, waiting
 * first come first served while running jobs hold the memory, so 16
 * concurrent queries queue instead of failing with out-of-memory on the
 * device.  What a running job allocates beyond its reservation (a bigger
 * batch than estimated, flush buffers) is taken without waiting, or the
 * job falls back to the CPU driver: a job never waits while it holds
 * memory, so jobs cannot deadlock on each other.  Each job is also capped
 * by its query's quota (pg_warp.gpu_memory_per_query), so one big query
 * cannot take the whole device.
 *
 * Header-only so the unit test (test/unit/test_gpud_budget.c) checks the
 * very code the daemon runs.  Pure C with pthreads.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUD_BUDGET_H
#define GPUD_BUDGET_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* a reservation waiting for memory, in arrival order */
typedef struct GpudBudgetWaiter
{
	struct GpudBudgetWaiter *next;
	uint64_t	bytes;
} GpudBudgetWaiter;

typedef struct GpudBudget
{
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	uint64_t	total;			/* bytes jobs may hold together */
	uint64_t	used;			/* bytes held */
	GpudBudgetWaiter *head;		/* waiting reservations, oldest first */
	GpudBudgetWaiter *tail;
} GpudBudget;

static inline void
gpud_budget_init(GpudBudget *b, uint64_t total)
{
	pthread_mutex_init(&b->mutex, NULL);
	pthread_cond_init(&b->cond, NULL);
	b->total = total;
	b->used = 0;
	b->head = b->tail = NULL;
}

/* unlink w from the queue (the caller holds the mutex) */
static inline void
gpud_budget_unqueue(GpudBudget *b, GpudBudgetWaiter *w)
{
	GpudBudgetWaiter **pp = &b->head;
	GpudBudgetWaiter *prev = NULL;

	while (*pp && *pp != w)
	{
		prev = *pp;
		pp = &(*pp)->next;
	}
	if (*pp == NULL)
		return;
	*pp = w->next;
	if (b->tail == w)
		b->tail = prev;
}

/*
 * Reserve bytes, waiting behind earlier reservations until they fit.
 * stop(arg), asked every 10 ms while waiting, ends the wait (the query was
 * cancelled).  Returns 0 when reserved, -1 when the bytes can never fit
 * (more than the whole budget) or stop said so; nothing is held then.
 */
static inline int
gpud_budget_reserve(GpudBudget *b, uint64_t bytes, bool (*stop) (void *), void *arg)
{
	GpudBudgetWaiter w;
	int			rc = 0;

	if (bytes > b->total)
		return -1;
	w.next = NULL;
	w.bytes = bytes;
	pthread_mutex_lock(&b->mutex);
	if (b->tail)
		b->tail->next = &w;
	else
		b->head = &w;
	b->tail = &w;
	while (b->head != &w || b->used + bytes > b->total)
	{
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 10 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000L)
		{
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		(void) pthread_cond_timedwait(&b->cond, &b->mutex, &ts);
		if (stop && stop(arg))
		{
			rc = -1;
			break;
		}
	}
	gpud_budget_unqueue(b, &w);
	if (rc == 0)
		b->used += bytes;
	/* the next in line may fit now (or become the head) */
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->mutex);
	return rc;
}

/* take bytes now if they fit, without waiting; false if not */
static inline bool
gpud_budget_try(GpudBudget *b, uint64_t bytes)
{
	bool		ok;

	pthread_mutex_lock(&b->mutex);
	ok = b->used + bytes <= b->total && bytes <= b->total;
	if (ok)
		b->used += bytes;
	pthread_mutex_unlock(&b->mutex);
	return ok;
}

static inline void
gpud_budget_release(GpudBudget *b, uint64_t bytes)
{
	pthread_mutex_lock(&b->mutex);
	b->used = bytes > b->used ? 0 : b->used - bytes;
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->mutex);
}

/*
 * One job's account: what it reserved from the budget, what its driver
 * holds, and its quota.  The driver calls gpud_account_grow before each
 * device allocation and gpud_account_shrink after each free.
 */
typedef struct GpudAccount
{
	GpudBudget *budget;
	uint64_t	reserved;		/* taken from the budget */
	uint64_t	used;			/* allocated by the driver */
	uint64_t	quota;			/* most the job may use */
	bool		over_quota;		/* a grow failed on the quota (not the budget) */
} GpudAccount;

static inline bool
gpud_account_grow(void *ctx, uint64_t bytes)
{
	GpudAccount *a = (GpudAccount *) ctx;

	if (a->used + bytes > a->quota)
	{
		a->over_quota = true;
		return false;
	}
	if (a->used + bytes > a->reserved)
	{
		uint64_t	more = a->used + bytes - a->reserved;

		if (!gpud_budget_try(a->budget, more))
			return false;
		a->reserved += more;
	}
	a->used += bytes;
	return true;
}

static inline void
gpud_account_shrink(void *ctx, uint64_t bytes)
{
	GpudAccount *a = (GpudAccount *) ctx;

	a->used = bytes > a->used ? 0 : a->used - bytes;
}

/* give everything back to the budget */
static inline void
gpud_account_close(GpudAccount *a)
{
	if (a->budget && a->reserved)
		gpud_budget_release(a->budget, a->reserved);
	a->reserved = 0;
	a->used = 0;
}

#endif							/* GPUD_BUDGET_H */
