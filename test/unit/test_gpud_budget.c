/*
 * test_gpud_budget.c — pg_warp_gpud's device memory admission
 * (src/gpud/gpud_budget.h): reservations never exceed the budget, waiting
 * ones are served first come first served, a cancelled wait leaves the
 * queue, and a job's account enforces its quota and takes more only when
 * it is free.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <unistd.h>

#include "gpud_budget.h"
#include "unit.h"

static GpudBudget budget;

/* ---- never over the budget, under contention */

static volatile int over;
static pthread_mutex_t seen_mutex = PTHREAD_MUTEX_INITIALIZER;

static void *
churn(void *arg)
{
	uint64_t	n = (uint64_t) (intptr_t) arg;
	int			i;

	for (i = 0; i < 300; i++)
	{
		if (gpud_budget_reserve(&budget, n, NULL, NULL) != 0)
		{
			over = 1;			/* every size fits the budget: must not fail */
			continue;
		}
		pthread_mutex_lock(&budget.mutex);
		if (budget.used > budget.total)
			over = 1;
		pthread_mutex_unlock(&budget.mutex);
		if ((i & 7) == 0)
			sched_yield();
		gpud_budget_release(&budget, n);
	}
	return NULL;
}

TEST(never_over_the_budget)
{
	pthread_t	th[6];
	int			i;

	gpud_budget_init(&budget, 100);
	over = 0;
	for (i = 0; i < 6; i++)
		pthread_create(&th[i], NULL, churn, (void *) (intptr_t) (20 + 15 * i));
	for (i = 0; i < 6; i++)
		pthread_join(th[i], NULL);
	CHECK(over == 0);
	CHECK(budget.used == 0);
	CHECK(budget.head == NULL);
}

TEST(too_big_never_waits)
{
	gpud_budget_init(&budget, 100);
	CHECK(gpud_budget_reserve(&budget, 101, NULL, NULL) == -1);
	CHECK(budget.used == 0);
	CHECK(gpud_budget_reserve(&budget, 100, NULL, NULL) == 0);
	CHECK(!gpud_budget_try(&budget, 1));
	gpud_budget_release(&budget, 100);
	CHECK(gpud_budget_try(&budget, 1));
	gpud_budget_release(&budget, 1);
	CHECK(budget.used == 0);
}

/* ---- first come, first served: a big reservation is not overtaken */

static int order[8];
static int norder;

static int
queued(void)
{
	int			n = 0;
	GpudBudgetWaiter *w;

	pthread_mutex_lock(&budget.mutex);
	for (w = budget.head; w; w = w->next)
		n++;
	pthread_mutex_unlock(&budget.mutex);
	return n;
}

typedef struct Arrival
{
	int			id;
	uint64_t	bytes;
} Arrival;

static void *
arrive(void *arg)
{
	Arrival    *a = arg;

	if (gpud_budget_reserve(&budget, a->bytes, NULL, NULL) == 0)
	{
		pthread_mutex_lock(&seen_mutex);
		order[norder++] = a->id;
		pthread_mutex_unlock(&seen_mutex);
		gpud_budget_release(&budget, a->bytes);
	}
	return NULL;
}

TEST(first_come_first_served)
{
	/* a big one (80) queues first, then small ones (30) that would fit
	 * beside the holder's 50 at once: they must wait behind the big one.
	 * (They do not fit beside the big one either, so the big one is also
	 * the first to record itself: with 10s, a small one granted right after
	 * the big one could record first on a loaded machine, which made this
	 * test fail now and then although the grant order was right.) */
	Arrival		a[4] = {{0, 80}, {1, 30}, {2, 30}, {3, 30}};
	pthread_t	th[4];
	int			i;

	gpud_budget_init(&budget, 100);
	norder = 0;
	CHECK(gpud_budget_reserve(&budget, 50, NULL, NULL) == 0);
	for (i = 0; i < 4; i++)
	{
		pthread_create(&th[i], NULL, arrive, &a[i]);
		while (queued() < i + 1)
			usleep(100);
	}
	usleep(30 * 1000);
	pthread_mutex_lock(&seen_mutex);
	CHECK(norder == 0);			/* nobody overtook the big one */
	pthread_mutex_unlock(&seen_mutex);
	gpud_budget_release(&budget, 50);
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	CHECK(norder == 4);
	CHECK(order[0] == 0);
	CHECK(budget.used == 0);
}

/* ---- a cancelled wait leaves the queue, and the next one goes */

static volatile int cancel_now;

static bool
cancelled(void *arg)
{
	return cancel_now != 0;
}

static volatile int waited_rc = 99;

static void *
wait_cancellable(void *arg)
{
	waited_rc = gpud_budget_reserve(&budget, 90, cancelled, NULL);
	return NULL;
}

TEST(cancelled_wait_leaves_the_queue)
{
	pthread_t	th;
	Arrival		small = {7, 10};
	pthread_t	th2;

	gpud_budget_init(&budget, 100);
	cancel_now = 0;
	norder = 0;
	CHECK(gpud_budget_reserve(&budget, 50, NULL, NULL) == 0);
	pthread_create(&th, NULL, wait_cancellable, NULL);
	while (queued() < 1)
		usleep(100);
	pthread_create(&th2, NULL, arrive, &small);
	while (queued() < 2)
		usleep(100);
	cancel_now = 1;
	pthread_join(th, NULL);
	CHECK(waited_rc == -1);
	/* the small one, now first, fits beside the holder */
	pthread_join(th2, NULL);
	CHECK(norder == 1 && order[0] == 7);
	gpud_budget_release(&budget, 50);
	CHECK(budget.used == 0);
	CHECK(budget.head == NULL);
}

/* ---- a job's account */

TEST(account_quota_and_growth)
{
	GpudAccount a;

	gpud_budget_init(&budget, 100);
	memset(&a, 0, sizeof(a));
	a.budget = &budget;
	a.quota = 60;
	CHECK(gpud_budget_reserve(&budget, 30, NULL, NULL) == 0);
	a.reserved = 30;
	CHECK(gpud_account_grow(&a, 20));	/* within the reservation */
	CHECK(budget.used == 30);
	CHECK(gpud_account_grow(&a, 30));	/* 20 -> 50: 20 more from the budget */
	CHECK(a.reserved == 50 && budget.used == 50);
	CHECK(!gpud_account_grow(&a, 11));	/* 61: over the quota */
	CHECK(a.over_quota);
	gpud_account_shrink(&a, 30);
	a.over_quota = false;
	/* another job holds the rest: growing past the reservation fails */
	CHECK(gpud_budget_try(&budget, 50));
	CHECK(gpud_account_grow(&a, 20));	/* 20 + 20 <= reserved 50 */
	CHECK(!gpud_account_grow(&a, 15));	/* 55: 5 more, none free */
	CHECK(!a.over_quota);
	gpud_account_close(&a);
	CHECK(budget.used == 50);
	gpud_budget_release(&budget, 50);
	CHECK(budget.used == 0);
}

int
main(void)
{
	RUN(never_over_the_budget);
	RUN(too_big_never_waits);
	RUN(first_come_first_served);
	RUN(cancelled_wait_leaves_the_queue);
	RUN(account_quota_and_growth);
	UNIT_EXIT();
}
