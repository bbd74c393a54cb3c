/*
 * test_gpud_colcache.c — the GPU column cache's index (src/gpud/gpud_colcache.c)
 * with malloc standing in for device memory: hits and misses by key (file
 * identity and byte range), the budget, least-recently-used eviction of
 * unreferenced entries only, entries being filled are not handed out, an
 * abandoned fill leaves nothing behind, and threads hammering it keep
 * every invariant.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpud_colcache.h"
#include "unit.h"

static int	nalloc;
static int	nfree;
static pthread_mutex_t count_mutex = PTHREAD_MUTEX_INITIALIZER;

static void *
fake_alloc(void *ctx, uint64_t len)
{
	pthread_mutex_lock(&count_mutex);
	nalloc++;
	pthread_mutex_unlock(&count_mutex);
	return malloc(len);
}

static void
fake_free(void *ctx, void *ptr, void *ready)
{
	pthread_mutex_lock(&count_mutex);
	nfree++;
	pthread_mutex_unlock(&count_mutex);
	free(ptr);
}

static const GpudColCacheOps ops = {fake_alloc, fake_free, NULL};
static int	ready_token;

static GpudColKey
key(uint64_t ino, uint64_t off, uint64_t len)
{
	GpudColKey	k;

	memset(&k, 0, sizeof(k));
	k.dev = 1;
	k.ino = ino;
	k.size = 1 << 20;
	k.mtime_sec = 100;
	k.off = off;
	k.len = len;
	return k;
}

/* get, fill if new, release; returns whether it was a hit */
static int
use(GpudColCache *c, GpudColKey k)
{
	bool		fill;
	GpudColEntry *e = gpud_colcache_get(c, &k, &ops, &fill);

	if (e == NULL)
		return -1;
	if (fill)
		gpud_colcache_filled(c, e, &ready_token);
	gpud_colcache_release(c, e);
	return fill ? 0 : 1;
}

TEST(hit_after_miss_by_key)
{
	GpudColCache c;
	GpudColKey	k = key(7, 0, 100);
	GpudColKey	other;

	CHECK(gpud_colcache_init(&c, 1000));
	CHECK(use(&c, k) == 0);
	CHECK(use(&c, k) == 1);
	/* any part of the key differs: a different entry */
	other = k;
	other.mtime_nsec = 1;
	CHECK(use(&c, other) == 0);
	other = k;
	other.off = 4;
	CHECK(use(&c, other) == 0);
	other = k;
	other.size += 1;			/* the file grew */
	CHECK(use(&c, other) == 0);
	CHECK(c.hits == 1 && c.misses == 4);
	CHECK(c.used == 400 && c.nentries == 4);
}

TEST(budget_and_lru_eviction)
{
	GpudColCache c;

	nalloc = nfree = 0;
	CHECK(gpud_colcache_init(&c, 300));
	CHECK(use(&c, key(1, 0, 100)) == 0);	/* A */
	CHECK(use(&c, key(1, 100, 100)) == 0);	/* B */
	CHECK(use(&c, key(1, 200, 100)) == 0);	/* C */
	CHECK(use(&c, key(1, 0, 100)) == 1);	/* A is now the most recent */
	CHECK(use(&c, key(1, 300, 100)) == 0);	/* D evicts B, the oldest */
	CHECK(c.used == 300 && c.evictions == 1 && nfree == 1);
	CHECK(use(&c, key(1, 0, 100)) == 1);	/* A stayed */
	CHECK(use(&c, key(1, 200, 100)) == 1);	/* C stayed */
	CHECK(use(&c, key(1, 100, 100)) == 0);	/* B is back: D went */
	CHECK(use(&c, key(1, 300, 100)) == 0);
	/* bigger than the whole budget: never cached */
	CHECK(use(&c, key(2, 0, 301)) == -1);
	CHECK(c.used <= c.budget);
	CHECK(nalloc - nfree == (int) c.nentries);
}

TEST(referenced_entries_are_not_evicted)
{
	GpudColCache c;
	bool		fill;
	GpudColKey	ka = key(3, 0, 200);
	GpudColKey	kb = key(3, 200, 200);
	GpudColEntry *a;

	CHECK(gpud_colcache_init(&c, 300));
	a = gpud_colcache_get(&c, &ka, &ops, &fill);
	CHECK(a != NULL && fill);
	gpud_colcache_filled(&c, a, &ready_token);
	/* a is in use: b does not fit and nothing may be evicted */
	CHECK(gpud_colcache_get(&c, &kb, &ops, &fill) == NULL);
	gpud_colcache_release(&c, a);
	CHECK(use(&c, kb) == 0);	/* now a is evicted for it */
	CHECK(c.nentries == 1 && c.evictions == 1);
}

TEST(entry_being_filled_is_not_handed_out)
{
	GpudColCache c;
	bool		fill,
				fill2;
	GpudColKey	k = key(4, 0, 50);
	GpudColEntry *e,
			   *e2;

	nalloc = nfree = 0;
	CHECK(gpud_colcache_init(&c, 1000));
	e = gpud_colcache_get(&c, &k, &ops, &fill);
	CHECK(e && fill);
	CHECK(gpud_colcache_get(&c, &k, &ops, &fill2) == NULL);
	/* the filler gives up: nothing stays behind */
	gpud_colcache_abandon(&c, e, &ops);
	CHECK(c.nentries == 0 && c.used == 0 && nfree == 1);
	e2 = gpud_colcache_get(&c, &k, &ops, &fill2);
	CHECK(e2 && fill2);
	gpud_colcache_filled(&c, e2, &ready_token);
	gpud_colcache_release(&c, e2);
	e = gpud_colcache_get(&c, &k, &ops, &fill);
	CHECK(e == e2 && !fill && e->ready == &ready_token);
	gpud_colcache_release(&c, e);
}

/* ---- threads */

static GpudColCache shared;
static volatile int broken;

static void *
hammer(void *arg)
{
	unsigned int seed = (unsigned int) (uintptr_t) arg;
	int			i;

	for (i = 0; i < 20000; i++)
	{
		GpudColKey	k = key(1 + rand_r(&seed) % 3, (uint64_t) (rand_r(&seed) % 40) * 64, 64);
		bool		fill;
		GpudColEntry *e = gpud_colcache_get(&shared, &k, &ops, &fill);

		if (e == NULL)
			continue;
		if (fill)
		{
			/* "copy": stamp the bytes with the key */
			memset(e->ptr, (int) (k.ino * 41 + k.off / 64) & 0xff, k.len);
			gpud_colcache_filled(&shared, e, &ready_token);
		}
		else if (((unsigned char *) e->ptr)[k.len - 1] != ((k.ino * 41 + k.off / 64) & 0xff))
			broken = 1;			/* an entry holding another key's bytes */
		gpud_colcache_release(&shared, e);
	}
	return NULL;
}

TEST(threads_keep_the_invariants)
{
	pthread_t	th[6];
	int			i;
	GpudColEntry *e;
	uint64_t	sum = 0,
				n = 0;

	nalloc = nfree = 0;
	broken = 0;
	CHECK(gpud_colcache_init(&shared, 64 * 50));	/* 50 of the 120 keys */
	for (i = 0; i < 6; i++)
		pthread_create(&th[i], NULL, hammer, (void *) (uintptr_t) (i + 1));
	for (i = 0; i < 6; i++)
		pthread_join(th[i], NULL);
	CHECK(broken == 0);
	CHECK(shared.used <= shared.budget);
	for (e = shared.lru.next; e != &shared.lru; e = e->next)
	{
		sum += e->key.len;
		n++;
		CHECK(e->refs == 0);
	}
	CHECK(sum == shared.used && n == shared.nentries);
	CHECK(nalloc - nfree == (int) shared.nentries);
	CHECK(shared.hits > 0 && shared.evictions > 0);
}

/*
 * Decoded entries: their own size counts against the budget, the same
 * range's raw bytes are another entry, find never creates nor hands out
 * an entry being filled, and ref adds a reference release takes back.
 */
TEST(decoded_entries_find_and_ref)
{
	GpudColCache c;
	GpudColKey	raw = key(5, 4096, 100);
	GpudColKey	dec = raw;
	GpudColEntry *e;
	GpudColEntry *f;
	bool		fill;

	dec.kind = GPUD_COL_DECODED;
	CHECK(gpud_colcache_init(&c, 1000));
	CHECK(gpud_colcache_find(&c, &dec) == NULL);
	CHECK(c.nentries == 0 && c.misses == 0);
	e = gpud_colcache_get_sized(&c, &dec, 800, &ops, &fill);
	CHECK(e != NULL && fill && e->size == 800 && c.used == 800);
	if (e == NULL)
		return;
	CHECK(gpud_colcache_find(&c, &dec) == NULL);	/* being filled */
	gpud_colcache_filled(&c, e, &ready_token);
	/* the raw range needs 100 more bytes: the decoded entry is referenced */
	CHECK(use(&c, raw) == 0);
	CHECK(c.used == 900 && c.nentries == 2);
	f = gpud_colcache_find(&c, &dec);
	CHECK(f == e && e->refs == 2);
	gpud_colcache_ref(&c, e);
	CHECK(e->refs == 3);
	gpud_colcache_release(&c, e);
	gpud_colcache_release(&c, e);
	gpud_colcache_release(&c, e);
	CHECK(e->refs == 0);
	/* a 200-byte range needs 100 bytes evicted: find made the decoded
	 * entry the most recently used, so the raw one goes */
	CHECK(use(&c, key(6, 0, 200)) == 0);
	CHECK(c.used == 1000 && c.nentries == 2);
	CHECK(gpud_colcache_find(&c, &raw) == NULL);
	f = gpud_colcache_find(&c, &dec);
	CHECK(f == e);
	if (f)
		gpud_colcache_release(&c, f);
}

int
main(void)
{
	RUN(hit_after_miss_by_key);
	RUN(budget_and_lru_eviction);
	RUN(referenced_entries_are_not_evicted);
	RUN(entry_being_filled_is_not_handed_out);
	RUN(threads_keep_the_invariants);
	RUN(decoded_entries_find_and_ref);
	UNIT_EXIT();
}
