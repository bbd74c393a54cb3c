/*-------------------------------------------------------------------------
 *
 * gpud_turns.h
 *	  Turns on the GPU for pg_warp_gpud's job threads: first come, first
 *	  served (a ticket lock), one turn per batch (or per create, finish or
 *	  destroy of a job's device state).  Jobs so interleave batch by batch:
 *	  a small query waits for at most one batch of a big one, not for all of
 *	  it, and no job can be overtaken forever.
 *
 * Header-only so the unit test (test/unit/test_gpud_turns.c) checks the
 * very code the daemon runs.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUD_TURNS_H
#define GPUD_TURNS_H

#include <pthread.h>
#include <stdint.h>

typedef struct GpudTurns
{
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	uint64_t	next_ticket;	/* handed to the next arrival */
	uint64_t	now_serving;	/* the ticket whose turn it is */
} GpudTurns;

static inline void
gpud_turns_init(GpudTurns *t)
{
	pthread_mutex_init(&t->mutex, NULL);
	pthread_cond_init(&t->cond, NULL);
	t->next_ticket = 0;
	t->now_serving = 0;
}

/* wait for this thread's turn; returns how many turns were ahead of it */
static inline uint64_t
gpud_turn_enter(GpudTurns *t)
{
	uint64_t	ticket,
				ahead;

	pthread_mutex_lock(&t->mutex);
	ticket = t->next_ticket++;
	ahead = ticket - t->now_serving;
	while (t->now_serving != ticket)
		pthread_cond_wait(&t->cond, &t->mutex);
	pthread_mutex_unlock(&t->mutex);
	return ahead;
}

/* end this thread's turn; the next ticket's holder goes */
static inline void
gpud_turn_leave(GpudTurns *t)
{
	pthread_mutex_lock(&t->mutex);
	t->now_serving++;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->mutex);
}

#endif							/* GPUD_TURNS_H */
