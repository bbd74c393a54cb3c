/*-------------------------------------------------------------------------
 *
 * gpud_tcache_ring.c
 *	  pg_warp_gpud's side of the GPU table cache's change log
 *	  (gpud_tcache_ring.h): the ring the postmaster created, mapped from
 *	  the descriptor the supervisor passed (--ring-fd), and applied in
 *	  position order to the replicas (gpud_tcache_store.c) -- continuously
 *	  by a thread of its own, and up to a query's position before its
 *	  XIDS answer.
 *
 * One drain at a time (drain_lock), so chunks are applied in position
 * order, which is each tid's order of events.  The ring outlives daemons
 * (it is the postmaster's): a new daemon goes on from the tail the last
 * one left; it has no replica yet, so those chunks change nothing.
 *
 * Pure C; no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpud_clock.h"
#include "gpud_tcache.h"
#include "gpud_tcache_ring.h"

static TcacheRingHeader *ring;
static pthread_mutex_t drain_lock = PTHREAD_MUTEX_INITIALIZER;

static void
sleep_us(long us)
{
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000};

	nanosleep(&ts, NULL);
}

static void
beat(void)
{
	__atomic_store_n(&ring->daemon_beat_ms, (uint64_t) gpud_now_ms(), __ATOMIC_RELEASE);
}

uint64_t
gpud_tcache_ring_head(void)
{
	return ring ? __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE) : 0;
}

bool
gpud_tcache_ring_active(void)
{
	return ring != NULL;
}

/*
 * Apply the complete chunks from tail on, until tail reaches upto; an
 * incomplete chunk (its appender still copying) is waited for up to
 * wait_ms.  True when tail >= upto.
 */
bool
gpud_tcache_ring_drain(uint64_t upto, double wait_ms)
{
	double		t0 = gpud_now_ms();
	uint64_t	tail;
	bool		ok = true;

	if (ring == NULL)
		return false;
	pthread_mutex_lock(&drain_lock);
	tail = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
	while (tail < upto)
	{
		const TcacheRingChunk *c = tcache_ring_chunk_at(ring, tail);
		uint64_t	off = tail % ring->size;

		if (c == NULL)
		{
			if (tail >= __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE) ||
				gpud_now_ms() - t0 >= wait_ms)
			{
				ok = false;
				break;
			}
			pthread_mutex_unlock(&drain_lock);
			sleep_us(50);
			pthread_mutex_lock(&drain_lock);
			tail = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
			continue;
		}
		if (c->len < sizeof(TcacheRingChunk) || c->len % TCACHE_RING_ALIGN != 0 ||
			c->len > ring->size - off)
		{
			/* cannot be (appenders write whole chunks): stop reading */
			fprintf(stderr, "pg_warp_gpud: GPU table cache change log damaged at %llu\n",
					(unsigned long long) tail);
			gpud_tcache_break_all("the change log was damaged");
			tail = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);
			__atomic_store_n(&ring->tail, tail, __ATOMIC_RELEASE);
			ok = false;
			break;
		}
		if (c->kind == TCACHE_CHUNK_DATA && c->ncols >= 0 && c->ncols <= GPUD_CACHE_MAX_COLS)
			gpud_tcache_apply_logged(&c->key, c->ncols, (const uint8_t *) (c + 1),
									 c->len - sizeof(TcacheRingChunk), c->nrecs, tail);
		tail += c->len;
		__atomic_store_n(&ring->tail, tail, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&drain_lock);
	return ok || tail >= upto;
}

/* the reader thread: keeps the ring from filling between queries */
static void *
reader(void *arg)
{
	(void) arg;
	for (;;)
	{
		bool		busy = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE) !=
			__atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);

		beat();
		if (busy)
			(void) gpud_tcache_ring_drain(gpud_tcache_ring_head(), 0);
		sleep_us(busy ? 200 : 2000);
	}
	return NULL;
}

bool
gpud_tcache_ring_open(int fd, char *why, size_t whylen)
{
	struct stat st;
	TcacheRingHeader *h;
	pthread_t	th;
	pthread_attr_t attr;

	if (fstat(fd, &st) != 0 || st.st_size < TCACHE_RING_DATA_OFF + TCACHE_RING_ALIGN)
	{
		snprintf(why, whylen, "the change log descriptor is not a ring");
		return false;
	}
	h = mmap(NULL, (size_t) st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED)
	{
		snprintf(why, whylen, "could not map the change log");
		return false;
	}
	if (h->magic != TCACHE_RING_MAGIC || h->version != TCACHE_RING_VERSION ||
		h->size == 0 || h->size % TCACHE_RING_ALIGN != 0 ||
		h->size > (uint64_t) st.st_size - TCACHE_RING_DATA_OFF)
	{
		munmap(h, (size_t) st.st_size);
		snprintf(why, whylen, "the change log has a wrong header");
		return false;
	}
	ring = h;
	__atomic_store_n(&ring->daemon_pid, (uint64_t) getpid(), __ATOMIC_RELEASE);
	beat();
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &attr, reader, NULL) != 0)
	{
		pthread_attr_destroy(&attr);
		ring = NULL;
		snprintf(why, whylen, "could not start the change log reader");
		return false;
	}
	pthread_attr_destroy(&attr);
	return true;
}
