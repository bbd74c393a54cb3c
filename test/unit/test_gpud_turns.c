/*
 * test_gpud_turns.c — pg_warp_gpud's turns on the GPU (src/gpud/gpud_turns.h):
 * one holder at a time, first come first served, and a query arriving
 * while long ones run has at most one batch of each ahead of it.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <unistd.h>

#include "gpud_turns.h"
#include "unit.h"

static GpudTurns turns;

/* ---- mutual exclusion */

static volatile int inside;
static volatile int overlaps;
static long counter;

static void *
worker(void *arg)
{
	int			i;

	for (i = 0; i < 2000; i++)
	{
		gpud_turn_enter(&turns);
		if (inside)
			overlaps++;
		inside = 1;
		counter++;
		if ((i & 63) == 0)
			sched_yield();
		inside = 0;
		gpud_turn_leave(&turns);
	}
	return NULL;
}

TEST(one_holder_at_a_time)
{
	pthread_t	th[6];
	int			i;

	gpud_turns_init(&turns);
	counter = 0;
	overlaps = 0;
	for (i = 0; i < 6; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (i = 0; i < 6; i++)
		pthread_join(th[i], NULL);
	CHECK(overlaps == 0);
	CHECK(counter == 6 * 2000);
	CHECK(turns.next_ticket == turns.now_serving);
}

/* ---- first come, first served */

static int order[8];
static int norder;
static pthread_mutex_t order_mutex = PTHREAD_MUTEX_INITIALIZER;

static void *
arrive(void *arg)
{
	int			id = (int) (intptr_t) arg;

	gpud_turn_enter(&turns);
	pthread_mutex_lock(&order_mutex);
	order[norder++] = id;
	pthread_mutex_unlock(&order_mutex);
	gpud_turn_leave(&turns);
	return NULL;
}

static uint64_t
tickets_taken(void)
{
	uint64_t	n;

	pthread_mutex_lock(&turns.mutex);
	n = turns.next_ticket;
	pthread_mutex_unlock(&turns.mutex);
	return n;
}

TEST(first_come_first_served)
{
	pthread_t	th[5];
	int			i;

	gpud_turns_init(&turns);
	norder = 0;
	gpud_turn_enter(&turns);	/* hold the GPU while the others arrive */
	for (i = 0; i < 5; i++)
	{
		pthread_create(&th[i], NULL, arrive, (void *) (intptr_t) i);
		/* the next one arrives only once this one has its ticket */
		while (tickets_taken() < (uint64_t) i + 2)
			usleep(100);
	}
	gpud_turn_leave(&turns);
	for (i = 0; i < 5; i++)
		pthread_join(th[i], NULL);
	CHECK(norder == 5);
	for (i = 0; i < 5; i++)
		CHECK(order[i] == i);
}

/* ---- a short query is not starved by a long one */

static volatile int big_turns;
static volatile int stop_big;

static void *
big_query(void *arg)
{
	while (!stop_big)
	{
		gpud_turn_enter(&turns);
		big_turns++;
		usleep(200);			/* a batch */
		gpud_turn_leave(&turns);
	}
	return NULL;
}

TEST(short_query_waits_for_one_batch_of_a_long_one)
{
	pthread_t	big[3];
	int			round,
				i;
	uint64_t	worst = 0;

	gpud_turns_init(&turns);
	stop_big = 0;
	big_turns = 0;
	for (i = 0; i < 3; i++)
		pthread_create(&big[i], NULL, big_query, NULL);
	for (round = 0; round < 50; round++)
	{
		uint64_t	ahead;

		usleep(300);
		ahead = gpud_turn_enter(&turns);
		gpud_turn_leave(&turns);
		if (ahead > worst)
			worst = ahead;
	}
	stop_big = 1;
	for (i = 0; i < 3; i++)
		pthread_join(big[i], NULL);
	/* three long queries hold at most one turn each (running or queued):
	 * a new arrival never has more than one batch of each ahead of it */
	CHECK(worst <= 3);
	CHECK(big_turns > 50);
}

int
main(void)
{
	RUN(one_holder_at_a_time);
	RUN(first_come_first_served);
	RUN(short_query_waits_for_one_batch_of_a_long_one);
	UNIT_EXIT();
}
