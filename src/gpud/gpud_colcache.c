/*-------------------------------------------------------------------------
 *
 * gpud_colcache.c
 *	  The GPU column cache's index (see gpud_colcache.h).
 *
 * A chained hash table over the keys plus a doubly linked LRU list, both
 * under one mutex: lookups are a few per batch, so contention is nil next
 * to the copies and kernels they save.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "gpud_colcache.h"

static uint64_t
key_hash(const GpudColKey *k)
{
	uint64_t	h = 0x9e3779b97f4a7c15ULL;
	const uint64_t *w = (const uint64_t *) k;
	size_t		i;

	for (i = 0; i < sizeof(GpudColKey) / sizeof(uint64_t); i++)
	{
		h ^= w[i] + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
		h *= 0xff51afd7ed558ccdULL;
	}
	return h ^ (h >> 33);
}

static bool
key_eq(const GpudColKey *a, const GpudColKey *b)
{
	return memcmp(a, b, sizeof(GpudColKey)) == 0;
}

static void
lru_unlink(GpudColEntry *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
}

static void
lru_push_front(GpudColCache *c, GpudColEntry *e)
{
	e->next = c->lru.next;
	e->prev = &c->lru;
	c->lru.next->prev = e;
	c->lru.next = e;
}

static void
hash_unlink(GpudColCache *c, GpudColEntry *e)
{
	GpudColEntry **pp = &c->buckets[key_hash(&e->key) & (c->nbuckets - 1)];

	while (*pp && *pp != e)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = e->hnext;
}

/* remove e (unreferenced) and give its memory back; mutex held */
static void
drop(GpudColCache *c, GpudColEntry *e, const GpudColCacheOps *ops)
{
	hash_unlink(c, e);
	lru_unlink(e);
	c->used -= e->size;
	c->nentries--;
	ops->free(ops->ctx, e->ptr, e->ready);
	free(e);
}

bool
gpud_colcache_init(GpudColCache *c, uint64_t budget)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->mutex, NULL);
	c->lru.next = c->lru.prev = &c->lru;
	c->nbuckets = 1 << 16;
	c->buckets = calloc(c->nbuckets, sizeof(GpudColEntry *));
	if (c->buckets == NULL)
		return false;
	c->budget = budget;
	return true;
}

/* the entry for key, or NULL; mutex held */
static GpudColEntry *
lookup(GpudColCache *c, const GpudColKey *key, GpudColEntry ***bucket)
{
	GpudColEntry *e;

	*bucket = &c->buckets[key_hash(key) & (c->nbuckets - 1)];
	for (e = **bucket; e; e = e->hnext)
		if (key_eq(&e->key, key))
			break;
	return e;
}

GpudColEntry *
gpud_colcache_get(GpudColCache *c, const GpudColKey *key, const GpudColCacheOps *ops,
				  bool *fill)
{
	return gpud_colcache_get_sized(c, key, key->len, ops, fill);
}

GpudColEntry *
gpud_colcache_get_sized(GpudColCache *c, const GpudColKey *key, uint64_t size,
						const GpudColCacheOps *ops, bool *fill)
{
	GpudColEntry *e;
	GpudColEntry **bucket;

	*fill = false;
	if (c->budget == 0 || c->buckets == NULL || size == 0 || size > c->budget)
		return NULL;
	pthread_mutex_lock(&c->mutex);
	e = lookup(c, key, &bucket);
	if (e)
	{
		if (e->ready == NULL)
		{
			/* being filled by another job: it copies the bytes itself */
			pthread_mutex_unlock(&c->mutex);
			return NULL;
		}
		e->refs++;
		lru_unlink(e);
		lru_push_front(c, e);
		c->hits++;
		pthread_mutex_unlock(&c->mutex);
		return e;
	}
	c->misses++;

	/* make room: least recently used unreferenced entries first */
	{
		GpudColEntry *v = c->lru.prev;

		while (c->used + size > c->budget && v != &c->lru)
		{
			GpudColEntry *p = v->prev;

			if (v->refs == 0 && v->ready != NULL)
			{
				drop(c, v, ops);
				c->evictions++;
			}
			v = p;
		}
	}
	if (c->used + size > c->budget)
	{
		pthread_mutex_unlock(&c->mutex);
		return NULL;
	}
	e = calloc(1, sizeof(GpudColEntry));
	if (e == NULL)
	{
		pthread_mutex_unlock(&c->mutex);
		return NULL;
	}
	e->ptr = ops->alloc(ops->ctx, size);
	if (e->ptr == NULL)
	{
		free(e);
		pthread_mutex_unlock(&c->mutex);
		return NULL;
	}
	e->key = *key;
	e->size = size;
	e->refs = 1;
	e->hnext = *bucket;
	*bucket = e;
	lru_push_front(c, e);
	c->used += size;
	c->nentries++;
	pthread_mutex_unlock(&c->mutex);
	*fill = true;
	return e;
}

GpudColEntry *
gpud_colcache_find(GpudColCache *c, const GpudColKey *key)
{
	GpudColEntry *e;
	GpudColEntry **bucket;

	if (c->budget == 0 || c->buckets == NULL)
		return NULL;
	pthread_mutex_lock(&c->mutex);
	e = lookup(c, key, &bucket);
	if (e && e->ready != NULL)
	{
		e->refs++;
		lru_unlink(e);
		lru_push_front(c, e);
		c->hits++;
	}
	else
		e = NULL;
	pthread_mutex_unlock(&c->mutex);
	return e;
}

void
gpud_colcache_ref(GpudColCache *c, GpudColEntry *e)
{
	pthread_mutex_lock(&c->mutex);
	e->refs++;
	pthread_mutex_unlock(&c->mutex);
}

void
gpud_colcache_filled(GpudColCache *c, GpudColEntry *e, void *ready)
{
	pthread_mutex_lock(&c->mutex);
	e->ready = ready;
	pthread_mutex_unlock(&c->mutex);
}

void
gpud_colcache_abandon(GpudColCache *c, GpudColEntry *e, const GpudColCacheOps *ops)
{
	pthread_mutex_lock(&c->mutex);
	drop(c, e, ops);
	pthread_mutex_unlock(&c->mutex);
}

void
gpud_colcache_release(GpudColCache *c, GpudColEntry *e)
{
	pthread_mutex_lock(&c->mutex);
	if (e->refs > 0)
		e->refs--;
	pthread_mutex_unlock(&c->mutex);
}
