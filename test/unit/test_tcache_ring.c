/*
 * test_tcache_ring.c — the GPU table cache's change log ring
 * (src/gpud/gpud_tcache_ring.h): reservations in order, padding at the
 * end of the ring, a full ring refused, and a chunk readable only once
 * its stamp is published (an earlier lap's bytes, or a stamp of another
 * position, never pass for it).
 */
#include "unit.h"
#include "gpud_tcache_ring.h"

#define DATA_BYTES	(64 * 64)

static uint64_t ring_mem[(TCACHE_RING_DATA_OFF + DATA_BYTES) / 8];

static TcacheRingHeader *
new_ring(void)
{
	TcacheRingHeader *h = (TcacheRingHeader *) ring_mem;

	memset(ring_mem, 0, sizeof(ring_mem));
	h->magic = TCACHE_RING_MAGIC;
	h->version = TCACHE_RING_VERSION;
	h->size = DATA_BYTES;
	h->nonce = 0x1234567890abcdefULL;
	return h;
}

/* append a chunk of len bytes the way a backend does */
static bool
append(TcacheRingHeader *h, uint32_t len, uint64_t *pos_out)
{
	uint64_t	pos,
				skip_pos,
				skip_len;
	TcacheRingChunk *c;

	if (!tcache_ring_reserve(h, len, &pos, &skip_pos, &skip_len))
		return false;
	if (skip_len)
	{
		c = (TcacheRingChunk *) (tcache_ring_data(h) + skip_pos % h->size);
		memset(c, 0, sizeof(*c));
		c->len = (uint32_t) skip_len;
		c->kind = TCACHE_CHUNK_SKIP;
		tcache_ring_publish(h, skip_pos);
	}
	c = (TcacheRingChunk *) (tcache_ring_data(h) + pos % h->size);
	c->len = len;
	c->kind = TCACHE_CHUNK_DATA;
	*pos_out = pos;
	return true;
}

/* consume one chunk at tail the way the daemon does; its kind, 0 if none */
static int
consume(TcacheRingHeader *h)
{
	const TcacheRingChunk *c = tcache_ring_chunk_at(h, h->tail);
	int			kind;

	if (c == NULL)
		return 0;
	kind = (int) c->kind;
	h->tail += c->len;
	return kind;
}

TEST(test_reserve_publish_read)
{
	TcacheRingHeader *h = new_ring();
	uint64_t	p1,
				p2;

	CHECK(append(h, 128, &p1) && p1 == 0);
	CHECK(append(h, 64, &p2) && p2 == 128);
	CHECK(consume(h) == 0);		/* not published yet */
	tcache_ring_publish(h, p2);
	CHECK(consume(h) == 0);		/* the first still copying: order kept */
	tcache_ring_publish(h, p1);
	CHECK(consume(h) == TCACHE_CHUNK_DATA && h->tail == 128);
	CHECK(consume(h) == TCACHE_CHUNK_DATA && h->tail == 192);
	CHECK(consume(h) == 0);
}

TEST(test_full_and_wrap)
{
	TcacheRingHeader *h = new_ring();
	uint64_t	p;
	int			i;

	for (i = 0; i < 3; i++)
	{
		CHECK(append(h, 1024, &p));
		tcache_ring_publish(h, p);
	}
	/* 3072 of 4096 used: 1024 more fit, 1088 do not */
	CHECK(!append(h, 1088, &p));
	CHECK(consume(h) == TCACHE_CHUNK_DATA);
	CHECK(!append(h, 1088, &p));	/* the padding counts */
	CHECK(consume(h) == TCACHE_CHUNK_DATA);
	/* a chunk that does not fit before the end pads to it */
	CHECK(append(h, 1088, &p));
	CHECK(p == 4096);			/* the next lap's start */
	tcache_ring_publish(h, p);
	CHECK(consume(h) == TCACHE_CHUNK_DATA);
	CHECK(consume(h) == TCACHE_CHUNK_SKIP && h->tail == 4096);
	CHECK(consume(h) == TCACHE_CHUNK_DATA && h->tail == 4096 + 1088);
	CHECK(h->tail == h->head);
}

TEST(test_stale_lap_is_not_a_chunk)
{
	TcacheRingHeader *h = new_ring();
	uint64_t	p;
	int			i;

	/* fill and drain one lap of 64-byte chunks: every offset has a stamp */
	for (i = 0; i < DATA_BYTES / 64; i++)
	{
		CHECK(append(h, 64, &p));
		tcache_ring_publish(h, p);
		CHECK(consume(h) == TCACHE_CHUNK_DATA);
	}
	/* reserved in the next lap but not published: the old stamp is refused */
	CHECK(append(h, 64, &p) && p == DATA_BYTES);
	CHECK(consume(h) == 0);
	/* a stamp of another position is refused too */
	((TcacheRingChunk *) tcache_ring_data(h))->stamp = tcache_ring_stamp(h, 0);
	CHECK(consume(h) == 0);
	tcache_ring_publish(h, p);
	CHECK(consume(h) == TCACHE_CHUNK_DATA);
}

int
main(void)
{
	RUN(test_reserve_publish_read);
	RUN(test_full_and_wrap);
	RUN(test_stale_lap_is_not_a_chunk);
	UNIT_EXIT();
}
