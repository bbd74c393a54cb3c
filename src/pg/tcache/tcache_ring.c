/*
 * tcache_ring.c — the backends' side of the GPU table cache's change log
 * (src/gpud/gpud_tcache_ring.h): a ring in a memfd the postmaster creates
 * at shared memory initialization (again after a crash restart), which
 * every backend inherits mapped and pg_warp_gpud maps from the descriptor
 * the supervisor passes it.
 *
 * A committing transaction appends its records as one chunk per table:
 * a compare-and-swap on the head, a copy, a release store of the stamp.
 * No system call, no lock, no wait for the daemon.  When the ring is full
 * and the daemon reads it, the appender waits (briefly) for room; when no
 * daemon reads it, or the wait runs out, the chunk is not appended and the
 * caller moves the capture epoch (every replica is then loaded again), as
 * with a buffer that could not be shipped.
 */
#include "postgres.h"

#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "miscadmin.h"

#include "tcache/tcache.h"
#include "gpud_tcache_ring.h"

int			pgwarp_gpu_table_cache_ring = 64;	/* MB; 0 = no ring */

static TcacheRingHeader *ring;
static int	ring_fd = -1;
static Size ring_bytes;

#define RING_WAIT_MS	2000

static uint64
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* (postmaster) a new ring; the previous one (before a crash restart) goes */
void
tcache_ring_create(void)
{
	uint64		size = (uint64) pgwarp_gpu_table_cache_ring << 20;
	void	   *p;
	int			fd;

	if (ring)
	{
		munmap(ring, ring_bytes);
		ring = NULL;
	}
	if (ring_fd >= 0)
		close(ring_fd);
	ring_fd = -1;
	if (size == 0 || IsUnderPostmaster)
		return;
	size = Max(size, (uint64) 32 << 20);	/* a 4 MB buffer is at most a quarter */
	/* not close-on-exec: the supervisor hands it to the daemon it execs */
	fd = memfd_create("pg_warp_tcache_ring", 0);
	if (fd < 0)
	{
		ereport(LOG, (errmsg("pg_warp: no GPU table cache change log: memfd_create: %m")));
		return;
	}
	ring_bytes = TCACHE_RING_DATA_OFF + size;
	if (ftruncate(fd, (off_t) ring_bytes) != 0 ||
		(p = mmap(NULL, ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED)
	{
		ereport(LOG, (errmsg("pg_warp: no GPU table cache change log: %m")));
		close(fd);
		return;
	}
	ring = p;
	ring_fd = fd;
	memset(ring, 0, sizeof(TcacheRingHeader));
	ring->magic = TCACHE_RING_MAGIC;
	ring->version = TCACHE_RING_VERSION;
	ring->size = size;
	if (!pg_strong_random(&ring->nonce, sizeof(ring->nonce)))
		ring->nonce = (uint64) getpid() * 0x9e3779b97f4a7c15ULL ^ now_ms();
}

int
tcache_ring_fd(void)
{
	return ring ? ring_fd : -1;
}

bool
tcache_ring_enabled(void)
{
	return ring != NULL;
}

uint64
tcache_ring_head(void)
{
	return ring ? __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE) : 0;
}

/* is a daemon reading the ring (its beat recent)? */
static bool
daemon_reading(void)
{
	uint64		beat = __atomic_load_n(&ring->daemon_beat_ms, __ATOMIC_ACQUIRE);

	return __atomic_load_n(&ring->daemon_pid, __ATOMIC_ACQUIRE) != 0 &&
		now_ms() < beat + 1000;
}

bool
tcache_ring_append(const GpudCacheKey *key, int ncols, const char *data, uint32 len,
				   int64 nrecs)
{
	uint64		total = TYPEALIGN(TCACHE_RING_ALIGN, sizeof(TcacheRingChunk) + (uint64) len);
	uint64		pos,
				skip_pos,
				skip_len;
	uint64		waited = 0;
	TcacheRingChunk *c;

	if (ring == NULL || total > ring->size / 4)
		return false;
	while (!tcache_ring_reserve(ring, (uint32) total, &pos, &skip_pos, &skip_len))
	{
		if (!daemon_reading() || waited >= RING_WAIT_MS)
		{
			__atomic_fetch_add(&ring->lost, 1, __ATOMIC_RELAXED);
			return false;
		}
		pg_usleep(1000L);
		waited++;
	}
	/* from here to the stamps nothing may fail: the daemon waits for them */
	if (skip_len > 0)
	{
		c = (TcacheRingChunk *) (tcache_ring_data(ring) + skip_pos % ring->size);
		memset(c, 0, sizeof(TcacheRingChunk));
		c->len = (uint32) skip_len;
		c->kind = TCACHE_CHUNK_SKIP;
		tcache_ring_publish(ring, skip_pos);
	}
	c = (TcacheRingChunk *) (tcache_ring_data(ring) + pos % ring->size);
	c->len = (uint32) total;
	c->kind = TCACHE_CHUNK_DATA;
	c->key = *key;
	c->ncols = ncols;
	c->pad = 0;
	c->nrecs = nrecs;
	memcpy(c + 1, data, len);
	tcache_ring_publish(ring, pos);
	return true;
}
