/*
 * test_gpud_pinpool.c — the pinned-memory allocator of the daemon's
 * prefetch (src/gpud/gpud_pinpool.c), over a malloc'd region: blocks are
 * 64-byte aligned, never overlap (each holds its owner's pattern until
 * freed, with four threads allocating and freeing at once), small or
 * unfitting requests go to malloc, and once everything is freed the region
 * is one free extent again (neighbours merged in any order of frees).
 */
#include <pthread.h>
#include <stdbool.h>

#include "gpud_pinpool.h"
#include "unit.h"

#define REGION ((size_t) 8 << 20)

static GpudPinPool pool;

TEST(merge_in_any_order)
{
	static const int orders[][3] = {{0, 1, 2}, {1, 0, 2}, {1, 2, 0}, {2, 1, 0}, {0, 2, 1}, {2, 0, 1}};
	size_t		o;

	for (o = 0; o < sizeof(orders) / sizeof(orders[0]); o++)
	{
		void	   *b[3];
		int			i;

		for (i = 0; i < 3; i++)
		{
			b[i] = gpud_pinpool_alloc(&pool, (size_t) (i + 1) << 17);
			CHECK(gpud_pinpool_owns(&pool, b[i]));
			CHECK(((uintptr_t) b[i] & 63) == 0);
		}
		CHECK(pool.nfree == 1);
		for (i = 0; i < 3; i++)
			gpud_pinpool_free(&pool, b[orders[o][i]]);
		CHECK(pool.nfree == 1 && pool.free[0].off == 0 && pool.free[0].len == pool.size);
		CHECK(pool.used == 0);
	}
}

TEST(small_and_unfitting_go_to_malloc)
{
	void	   *small = gpud_pinpool_alloc(&pool, 1000);
	void	   *huge = gpud_pinpool_alloc(&pool, REGION * 2);
	void	   *big[64];
	int			n = 0;
	int			i;

	CHECK(small != NULL && !gpud_pinpool_owns(&pool, small));
	CHECK(huge != NULL && !gpud_pinpool_owns(&pool, huge));
	gpud_pinpool_free(&pool, small);
	gpud_pinpool_free(&pool, huge);
	/* 1 MB blocks until the region is full: the next comes from malloc */
	for (i = 0; i < 64; i++)
	{
		big[i] = gpud_pinpool_alloc(&pool, 1 << 20);
		if (gpud_pinpool_owns(&pool, big[i]))
			n++;
	}
	CHECK(n >= 6 && n <= 8);
	CHECK(!gpud_pinpool_owns(&pool, big[63]));
	for (i = 0; i < 64; i++)
		gpud_pinpool_free(&pool, big[i]);
	CHECK(pool.nfree == 1 && pool.used == 0);
}

typedef struct Worker
{
	int			id;
	int			owned;
	bool		ok;
} Worker;

static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void *
worker(void *arg)
{
	Worker	   *w = arg;
	uint64_t	s = 0x9e3779b97f4a7c15ULL * (w->id + 1);
	uint8_t    *held[16] = {0};
	size_t		len[16] = {0};
	int			k;

	w->ok = true;
	for (k = 0; k < 20000; k++)
	{
		int			i = (int) (rnd(&s) % 16);

		if (held[i])
		{
			size_t		j;

			/* sampled, and all of the last 128 bytes (where the next
			 * block's header would land) */
			for (j = 0; j < len[i]; j += 4093)
				if (held[i][j] != (uint8_t) (w->id * 16 + i))
					w->ok = false;
			for (j = len[i] > 128 ? len[i] - 128 : 0; j < len[i]; j++)
				if (held[i][j] != (uint8_t) (w->id * 16 + i))
					w->ok = false;
			gpud_pinpool_free(&pool, held[i]);
			held[i] = NULL;
		}
		else
		{
			len[i] = (rnd(&s) % 4 == 0) ? 100 + rnd(&s) % 5000 : GPUD_PINPOOL_MIN + rnd(&s) % (300 << 10);
			held[i] = gpud_pinpool_alloc(&pool, len[i]);
			if (held[i] == NULL)
			{
				w->ok = false;
				continue;
			}
			if (gpud_pinpool_owns(&pool, held[i]))
			{
				w->owned++;
				if (((uintptr_t) held[i] & 63) != 0)
					w->ok = false;
			}
			memset(held[i], w->id * 16 + i, len[i]);
		}
	}
	for (k = 0; k < 16; k++)
		gpud_pinpool_free(&pool, held[k]);
	return NULL;
}

TEST(threads_never_overlap)
{
	pthread_t	t[4];
	Worker		w[4];
	int			i;

	for (i = 0; i < 4; i++)
	{
		w[i].id = i;
		w[i].owned = 0;
		CHECK(pthread_create(&t[i], NULL, worker, &w[i]) == 0);
	}
	for (i = 0; i < 4; i++)
	{
		pthread_join(t[i], NULL);
		CHECK(w[i].ok);
		CHECK(w[i].owned > 1000);	/* the region did serve them */
	}
	CHECK(pool.nfree == 1 && pool.free[0].len == pool.size && pool.used == 0);
}

int
main(void)
{
	void	   *region = malloc(REGION + 17);

	/* a misaligned base: the pool aligns it */
	if (region == NULL || !gpud_pinpool_init(&pool, (uint8_t *) region + 17, REGION))
		return 1;
	RUN(merge_in_any_order);
	RUN(small_and_unfitting_go_to_malloc);
	RUN(threads_never_overlap);
	gpud_pinpool_destroy(&pool);
	free(region);
	UNIT_EXIT();
}
