/*-------------------------------------------------------------------------
 *
 * gpud_pinpool.c
 *	  A thread-safe first-fit allocator over a region of pinned host memory
 *	  (see gpud_pinpool.h).
 *
 *-------------------------------------------------------------------------
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "gpud_pinpool.h"

#define HDR 64					/* keeps blocks 64-byte aligned */
#define MAGIC 0x504e4950u		/* "PINP" */

typedef struct BlockHeader
{
	uint32_t	magic;
	uint32_t	pad;
	size_t		len;			/* carved bytes, header included */
} BlockHeader;

static void *
pool_alloc_cb(void *ctx, size_t size)
{
	return gpud_pinpool_alloc((GpudPinPool *) ctx, size);
}

static void
pool_free_cb(void *ctx, void *p)
{
	gpud_pinpool_free((GpudPinPool *) ctx, p);
}

bool
gpud_pinpool_init(GpudPinPool *pool, void *base, size_t size)
{
	memset(pool, 0, sizeof(*pool));
	/* every carved block is at least GPUD_PINPOOL_MIN: this many holes */
	pool->maxfree = (int) (size / GPUD_PINPOOL_MIN) + 2;
	pool->free = malloc(sizeof(GpudPinExtent) * pool->maxfree);
	if (pool->free == NULL)
		return false;
	pthread_mutex_init(&pool->lock, NULL);
	/* the region itself starts 64-byte aligned */
	{
		uintptr_t	b = (uintptr_t) base;
		uintptr_t	a = (b + HDR - 1) & ~(uintptr_t) (HDR - 1);

		pool->base = (uint8_t *) a;
		pool->size = size > (size_t) (a - b) ? (size - (size_t) (a - b)) & ~(size_t) (HDR - 1) : 0;
	}
	if (pool->size > 0)
	{
		pool->free[0].off = 0;
		pool->free[0].len = pool->size;
		pool->nfree = 1;
	}
	pool->alloc.alloc = pool_alloc_cb;
	pool->alloc.free = pool_free_cb;
	pool->alloc.ctx = pool;
	pool->alloc.max_alloc = 0;
	return true;
}

void
gpud_pinpool_destroy(GpudPinPool *pool)
{
	if (pool->free == NULL)
		return;
	pthread_mutex_destroy(&pool->lock);
	free(pool->free);
	pool->free = NULL;
}

bool
gpud_pinpool_owns(const GpudPinPool *pool, const void *p)
{
	const uint8_t *q = p;

	return pool->size > 0 && q >= pool->base && q < pool->base + pool->size;
}

void *
gpud_pinpool_alloc(GpudPinPool *pool, size_t size)
{
	size_t		need;
	int			i;
	BlockHeader *h = NULL;

	if (size < GPUD_PINPOOL_MIN || size > pool->size)
		return malloc(size);
	need = ((size + HDR - 1) & ~(size_t) (HDR - 1)) + HDR;
	pthread_mutex_lock(&pool->lock);
	for (i = 0; i < pool->nfree; i++)
	{
		GpudPinExtent *e = &pool->free[i];

		if (e->len < need)
			continue;
		h = (BlockHeader *) (pool->base + e->off);
		e->off += need;
		e->len -= need;
		if (e->len == 0)
		{
			memmove(e, e + 1, sizeof(*e) * (pool->nfree - i - 1));
			pool->nfree--;
		}
		pool->used += need;
		break;
	}
	pthread_mutex_unlock(&pool->lock);
	if (h == NULL)
		return malloc(size);
	h->magic = MAGIC;
	h->len = need;
	return (uint8_t *) h + HDR;
}

void
gpud_pinpool_free(GpudPinPool *pool, void *p)
{
	BlockHeader *h;
	size_t		off,
				len;
	int			lo,
				hi;

	if (p == NULL)
		return;
	if (!gpud_pinpool_owns(pool, p))
	{
		free(p);
		return;
	}
	h = (BlockHeader *) ((uint8_t *) p - HDR);
	if (h->magic != MAGIC)
		abort();				/* not a block of ours: memory is corrupt */
	h->magic = 0;
	off = (size_t) ((uint8_t *) h - pool->base);
	len = h->len;
	pthread_mutex_lock(&pool->lock);
	pool->used -= len;
	/* the first free extent after the block */
	lo = 0;
	hi = pool->nfree;
	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;

		if (pool->free[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	{
		bool		with_prev = lo > 0 &&
			pool->free[lo - 1].off + pool->free[lo - 1].len == off;
		bool		with_next = lo < pool->nfree && off + len == pool->free[lo].off;

		if (with_prev && with_next)
		{
			pool->free[lo - 1].len += len + pool->free[lo].len;
			memmove(&pool->free[lo], &pool->free[lo + 1],
					sizeof(GpudPinExtent) * (pool->nfree - lo - 1));
			pool->nfree--;
		}
		else if (with_prev)
			pool->free[lo - 1].len += len;
		else if (with_next)
		{
			pool->free[lo].off = off;
			pool->free[lo].len += len;
		}
		else
		{
			/* cannot overflow: holes never outnumber live blocks + 1 */
			memmove(&pool->free[lo + 1], &pool->free[lo],
					sizeof(GpudPinExtent) * (pool->nfree - lo));
			pool->free[lo].off = off;
			pool->free[lo].len = len;
			pool->nfree++;
		}
	}
	pthread_mutex_unlock(&pool->lock);
}
