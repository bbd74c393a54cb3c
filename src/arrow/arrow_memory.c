/*
 * arrow_memory.c — error reporting and arena allocation for the Arrow
 * library.
 *
 * An arena hands out 64-byte aligned, zero-filled blocks carved from chunks
 * obtained through an ArrowAllocator; everything is released at once by
 * arrow_arena_free_all().  Requests larger than the allocator's max_alloc
 * fail with ARROW_ERR_NOMEM before anything is allocated, so a lying length
 * in a file can never make us ask the system for absurd amounts of memory.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arrow.h"

#define ARENA_ALIGN			64
#define ARENA_CHUNK_SIZE	(64 * 1024)
/* requests at least this large get a chunk of their own */
#define ARENA_BIG_ALLOC		(ARENA_CHUNK_SIZE / 4)

struct ArrowArenaChunk
{
	ArrowArenaChunk *next;
	void	   *raw;			/* what the allocator returned */
	uint8_t    *base;			/* first aligned byte */
	size_t		size;			/* usable bytes from base */
	size_t		used;
};

int
arrow_error(ArrowError *err, ArrowErrorCode code, int64_t offset,
			const char *fmt,...)
{
	va_list		ap;

	if (err == NULL)
		return -1;
	err->code = code;
	err->offset = offset;
	if (code != ARROW_ERR_IO)
		err->errno_saved = 0;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

static void *
malloc_alloc(void *ctx, size_t size)
{
	(void) ctx;
	return malloc(size);
}

static void
malloc_free(void *ctx, void *ptr)
{
	(void) ctx;
	free(ptr);
}

const ArrowAllocator arrow_malloc_allocator = {
	malloc_alloc, malloc_free, NULL, 0
};

/* ------------------------------------------------------------- recycler */

typedef struct RecycledBlock
{
	struct RecycledBlock *next_free;
	struct RecycledBlock *next_all;
	size_t		size;			/* usable bytes after the header */
	char		pad[40];		/* keep the payload 64-byte aligned */
} RecycledBlock;

static void *
recycler_alloc(void *ctx, size_t size)
{
	ArrowRecycler *r = ctx;
	RecycledBlock **pp,
			  **best = NULL;
	RecycledBlock *b;

	for (pp = (RecycledBlock **) &r->free_blocks; *pp; pp = &(*pp)->next_free)
		if ((*pp)->size >= size && (*pp)->size / 2 <= size &&
			(best == NULL || (*pp)->size < (*best)->size))
			best = pp;
	if (best)
	{
		b = *best;
		*best = b->next_free;
		return b + 1;
	}
	if (size > SIZE_MAX - sizeof(RecycledBlock))
		return NULL;
	b = r->base->alloc(r->base->ctx, sizeof(RecycledBlock) + size);
	if (b == NULL)
		return NULL;
	b->size = size;
	b->next_all = r->all_blocks;
	r->all_blocks = b;
	return b + 1;
}

static void
recycler_free(void *ctx, void *ptr)
{
	ArrowRecycler *r = ctx;
	RecycledBlock *b = (RecycledBlock *) ptr - 1;

	b->next_free = r->free_blocks;
	r->free_blocks = b;
}

void
arrow_recycler_init(ArrowRecycler *r, const ArrowAllocator *base)
{
	r->base = base ? base : &arrow_malloc_allocator;
	r->alloc.alloc = recycler_alloc;
	r->alloc.free = recycler_free;
	r->alloc.ctx = r;
	r->alloc.max_alloc = r->base->max_alloc;
	r->free_blocks = NULL;
	r->all_blocks = NULL;
}

void
arrow_recycler_release(ArrowRecycler *r)
{
	RecycledBlock *b = r->all_blocks;

	while (b)
	{
		RecycledBlock *next = b->next_all;

		if (r->base->free)
			r->base->free(r->base->ctx, b);
		b = next;
	}
	r->free_blocks = NULL;
	r->all_blocks = NULL;
}

/* ---------------------------------------------------------------- arenas */

void
arrow_arena_init(ArrowArena *arena, const ArrowAllocator *allocator)
{
	arena->allocator = allocator ? allocator : &arrow_malloc_allocator;
	arena->chunks = NULL;
	arena->total = 0;
}

/*
 * Get a new chunk able to hold `size` bytes after alignment.  The chunk
 * header lives at the start of the raw block; the usable area starts at the
 * next 64-byte boundary after it.
 */
static ArrowArenaChunk *
arena_new_chunk(ArrowArena *arena, size_t size, ArrowError *err)
{
	const ArrowAllocator *a = arena->allocator;
	size_t		raw_size;
	void	   *raw;
	ArrowArenaChunk *c;
	uintptr_t	p;

	if (size > SIZE_MAX - sizeof(ArrowArenaChunk) - 2 * ARENA_ALIGN)
		return arrow_error(err, ARROW_ERR_NOMEM, -1,
						   "cannot allocate %zu bytes", size), NULL;
	raw_size = sizeof(ArrowArenaChunk) + ARENA_ALIGN + size;
	if (a->max_alloc != 0 && size > a->max_alloc)
		return arrow_error(err, ARROW_ERR_NOMEM, -1,
						   "allocation of %zu bytes exceeds the limit of %zu bytes",
						   size, a->max_alloc), NULL;
	raw = a->alloc(a->ctx, raw_size);
	if (raw == NULL)
		return arrow_error(err, ARROW_ERR_NOMEM, -1,
						   "out of memory allocating %zu bytes", size), NULL;
	c = (ArrowArenaChunk *) raw;
	c->raw = raw;
	p = (uintptr_t) raw + sizeof(ArrowArenaChunk);
	p = (p + ARENA_ALIGN - 1) & ~(uintptr_t) (ARENA_ALIGN - 1);
	c->base = (uint8_t *) p;
	c->size = raw_size - (size_t) (c->base - (uint8_t *) raw);
	c->used = 0;
	arena->total += raw_size;
	return c;
}

static void *
arena_alloc(ArrowArena *arena, size_t size, bool zero, ArrowError *err)
{
	ArrowArenaChunk *c = arena->chunks;
	size_t		start;
	void	   *ptr;

	if (size == 0)
		size = 1;				/* callers get a distinct, usable pointer */
	if (arena->allocator->max_alloc != 0 && size > arena->allocator->max_alloc)
		return arrow_error(err, ARROW_ERR_NOMEM, -1,
						   "allocation of %zu bytes exceeds the limit of %zu bytes",
						   size, arena->allocator->max_alloc), NULL;

	if (size >= ARENA_BIG_ALLOC)
	{
		/* own chunk, linked behind the current one so its space stays usable */
		ArrowArenaChunk *big = arena_new_chunk(arena, size, err);

		if (big == NULL)
			return NULL;
		big->used = big->size;
		if (c != NULL)
		{
			big->next = c->next;
			c->next = big;
		}
		else
		{
			big->next = NULL;
			arena->chunks = big;
		}
		if (zero)
			memset(big->base, 0, size);
		return big->base;
	}

	if (c != NULL)
	{
		start = (c->used + ARENA_ALIGN - 1) & ~(size_t) (ARENA_ALIGN - 1);
		if (start <= c->size && c->size - start >= size)
		{
			c->used = start + size;
			ptr = c->base + start;
			memset(ptr, 0, size);
			return ptr;
		}
	}
	{
		/* a small limit shrinks the chunks too (size <= max_alloc here) */
		size_t		csize = ARENA_CHUNK_SIZE;

		if (arena->allocator->max_alloc != 0 &&
			csize > arena->allocator->max_alloc)
			csize = arena->allocator->max_alloc;
		c = arena_new_chunk(arena, csize, err);
	}
	if (c == NULL)
		return NULL;
	c->next = arena->chunks;
	arena->chunks = c;
	c->used = size;
	memset(c->base, 0, size);
	return c->base;
}

/* Zeroed memory from the arena (NULL and err set on failure). */
void *
arrow_arena_alloc(ArrowArena *arena, size_t size, ArrowError *err)
{
	return arena_alloc(arena, size, true, err);
}

/* Memory the caller overwrites entirely (a buffer read from a file). */
void *
arrow_arena_alloc_uninit(ArrowArena *arena, size_t size, ArrowError *err)
{
	return arena_alloc(arena, size, false, err);
}

char *
arrow_arena_strdup(ArrowArena *arena, const char *s, ArrowError *err)
{
	size_t		len = strlen(s);
	char	   *p = arrow_arena_alloc(arena, len + 1, err);

	if (p != NULL)
		memcpy(p, s, len + 1);
	return p;
}

void
arrow_arena_free_all(ArrowArena *arena)
{
	ArrowArenaChunk *c = arena->chunks;

	while (c != NULL)
	{
		ArrowArenaChunk *next = c->next;

		arena->allocator->free(arena->allocator->ctx, c->raw);
		c = next;
	}
	arena->chunks = NULL;
	arena->total = 0;
}
