/*-------------------------------------------------------------------------
 *
 * gpud_tcache_ring.h
 *	  The GPU table cache's change log: a ring in shared memory (a memfd
 *	  the postmaster creates and pg_warp_gpud maps) into which committing
 *	  backends append the row records they captured, and from which the
 *	  daemon applies them.  A commit appends without talking to the
 *	  daemon; a query asks the daemon to have applied the ring up to the
 *	  position it read after its snapshot was taken, so every record of a
 *	  transaction its snapshot sees committed is applied before it reads.
 *
 * Positions count bytes from the ring's creation and never wrap; the byte
 * at position p lives at data[p % size].  An appender reserves [pos, pos +
 * len) by moving head with a compare-and-swap (a chunk never straddles the
 * end: a SKIP chunk pads to it), copies its chunk, and then writes the
 * chunk's stamp, a hash of its position and the ring's nonce: the daemon
 * takes a chunk at tail as complete only when its stamp is the one its
 * position should have, which bytes of an earlier lap (or values a user
 * wrote) cannot forge without the nonce.  The daemon moves tail after it
 * applied a chunk; appenders never overtake tail by more than size.
 *
 * Pure C (gcc atomics); no PostgreSQL headers: included by the backend
 * (src/pg/tcache/tcache_ring.c) and the daemon (gpud_tcache_ring.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUD_TCACHE_RING_H
#define GPUD_TCACHE_RING_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "gpud_tcache_wire.h"

#define TCACHE_RING_MAGIC	0x57524e47u	/* "WRNG" */
#define TCACHE_RING_VERSION	1
#define TCACHE_RING_DATA_OFF	4096
#define TCACHE_RING_ALIGN	64		/* chunk lengths and the size: a SKIP header always fits */

#define TCACHE_CHUNK_DATA	1		/* records of one table */
#define TCACHE_CHUNK_SKIP	2		/* padding to the ring's end */

typedef struct TcacheRingHeader
{
	uint32_t	magic;
	uint32_t	version;
	uint64_t	size;			/* bytes of data, a multiple of TCACHE_RING_ALIGN */
	uint64_t	nonce;			/* chunk stamps' secret */
	char		pad0[40];
	uint64_t	head;			/* reserved up to (appenders) */
	char		pad1[56];
	uint64_t	tail;			/* applied up to (the daemon) */
	uint64_t	daemon_pid;		/* the daemon reading it, 0 none */
	uint64_t	daemon_beat_ms; /* CLOCK_MONOTONIC ms of its last pass */
	char		pad2[40];
	uint64_t	lost;			/* chunks not appended (ring full, no reader) */
} TcacheRingHeader;

typedef struct TcacheRingChunk
{
	uint64_t	stamp;			/* written last: tcache_ring_stamp(pos) */
	uint32_t	len;			/* bytes, this header included, TCACHE_RING_ALIGN-aligned */
	uint32_t	kind;			/* TCACHE_CHUNK_* */
	GpudCacheKey key;
	int32_t		ncols;
	int32_t		pad;
	int64_t		nrecs;			/* GpudCacheRec records follow */
} TcacheRingChunk;

static inline uint64_t
tcache_ring_stamp(const TcacheRingHeader *h, uint64_t pos)
{
	uint64_t	k = pos ^ h->nonce;

	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return k | 1;				/* never 0 */
}

static inline uint8_t *
tcache_ring_data(TcacheRingHeader *h)
{
	return (uint8_t *) h + TCACHE_RING_DATA_OFF;
}

/*
 * Reserve len bytes (a multiple of TCACHE_RING_ALIGN, at most size / 4): the chunk's position in
 * *pos, after a SKIP chunk at *skip_pos of *skip_len bytes when it had to
 * pad to the end (*skip_len 0: none).  False when the ring has no room.
 */
static inline bool
tcache_ring_reserve(TcacheRingHeader *h, uint32_t len, uint64_t *pos, uint64_t *skip_pos,
					uint64_t *skip_len)
{
	uint64_t	head = __atomic_load_n(&h->head, __ATOMIC_ACQUIRE);

	for (;;)
	{
		uint64_t	tail = __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE);
		uint64_t	off = head % h->size;
		uint64_t	pad = off + len > h->size ? h->size - off : 0;

		if (head + pad + len - tail > h->size)
			return false;
		if (__atomic_compare_exchange_n(&h->head, &head, head + pad + len, false,
										__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		{
			*skip_pos = head;
			*skip_len = pad;
			*pos = head + pad;
			return true;
		}
	}
}

/* mark the chunk at pos complete (its bytes written before) */
static inline void
tcache_ring_publish(TcacheRingHeader *h, uint64_t pos)
{
	TcacheRingChunk *c = (TcacheRingChunk *) (tcache_ring_data(h) + pos % h->size);

	__atomic_store_n(&c->stamp, tcache_ring_stamp(h, pos), __ATOMIC_RELEASE);
}

/* the chunk at pos if it is complete, else NULL */
static inline const TcacheRingChunk *
tcache_ring_chunk_at(TcacheRingHeader *h, uint64_t pos)
{
	TcacheRingChunk *c = (TcacheRingChunk *) (tcache_ring_data(h) + pos % h->size);

	if (__atomic_load_n(&c->stamp, __ATOMIC_ACQUIRE) != tcache_ring_stamp(h, pos))
		return NULL;
	return c;
}

#endif							/* GPUD_TCACHE_RING_H */
