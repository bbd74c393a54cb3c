/*
 * warp_memlist.h — engine memory outside PostgreSQL: every block of a
 * driver's allocations (WarpAlloc) in one list, freed together when the
 * job or the thread is done, on every path.  Used by pg_warp_gpud's jobs
 * and by the CPU driver's threads in a backend (warp_cpu_pool.c).
 */
#ifndef WARP_MEMLIST_H
#define WARP_MEMLIST_H

#include <stdint.h>
#include <stdlib.h>

typedef struct WarpMemBlock
{
	struct WarpMemBlock *next;
	uint64_t	pad;			/* keeps the user pointer 16-byte aligned */
} WarpMemBlock;

typedef struct WarpMemList
{
	WarpMemBlock *head;
} WarpMemList;

/* a WarpAlloc's alloc with ctx = the WarpMemList; NULL on failure */
static inline void *
warp_memlist_alloc(void *ctx, size_t size)
{
	WarpMemList *ml = (WarpMemList *) ctx;
	WarpMemBlock *b;

	if (size > SIZE_MAX - sizeof(WarpMemBlock))
		return NULL;
	b = (WarpMemBlock *) malloc(sizeof(WarpMemBlock) + size);
	if (b == NULL)
		return NULL;
	b->next = ml->head;
	ml->head = b;
	return b + 1;
}

static inline void
warp_memlist_free_all(WarpMemList *ml)
{
	while (ml->head)
	{
		WarpMemBlock *n = ml->head->next;

		free(ml->head);
		ml->head = n;
	}
}

#endif							/* WARP_MEMLIST_H */
