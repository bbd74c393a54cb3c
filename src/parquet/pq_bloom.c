/*
 * pq_bloom.c — Parquet Bloom filters: the split-block filter of the
 * Parquet format (blocks of eight 32-bit words, one bit set per word by a
 * salted multiply of the hash's low half, the block chosen by its high
 * half), over XXH64 (seed 0) of a value's PLAIN encoding without a length
 * prefix.  Used to skip row groups (and their parts) for "column = value".
 *
 * The filter of the (row group, column) asked last is kept in the file's
 * arena: a scan asks about a row group's parts in a row, so each filter is
 * read once per scan.
 */
#include <inttypes.h>
#include <stdio.h>

#include "pq_internal.h"

/* ------------------------------------------------------------ XXH64 */

#define P1 0x9E3779B185EBCA87ULL
#define P2 0xC2B2AE3D27D4EB4FULL
#define P3 0x165667B19E3779F9ULL
#define P4 0x85EBCA77C2B2AE63ULL
#define P5 0x27D4EB2F165667C5ULL

static inline uint64_t
rotl64(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

static inline uint64_t
rd64(const uint8_t *p)
{
	uint64_t	v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static inline uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 |
		(uint32_t) p[3] << 24;
}

static inline uint64_t
xxh_round(uint64_t acc, uint64_t input)
{
	acc += input * P2;
	acc = rotl64(acc, 31);
	return acc * P1;
}

static inline uint64_t
xxh_merge(uint64_t acc, uint64_t v)
{
	acc ^= xxh_round(0, v);
	return acc * P1 + P4;
}

uint64_t
pq_xxhash64(const void *data, size_t len, uint64_t seed)
{
	const uint8_t *p = data;
	const uint8_t *end = p + len;
	uint64_t	h;

	if (len >= 32)
	{
		uint64_t	v1 = seed + P1 + P2,
					v2 = seed + P2,
					v3 = seed,
					v4 = seed - P1;

		for (; end - p >= 32; p += 32)
		{
			v1 = xxh_round(v1, rd64(p));
			v2 = xxh_round(v2, rd64(p + 8));
			v3 = xxh_round(v3, rd64(p + 16));
			v4 = xxh_round(v4, rd64(p + 24));
		}
		h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18);
		h = xxh_merge(h, v1);
		h = xxh_merge(h, v2);
		h = xxh_merge(h, v3);
		h = xxh_merge(h, v4);
	}
	else
		h = seed + P5;
	h += (uint64_t) len;
	for (; end - p >= 8; p += 8)
	{
		h ^= xxh_round(0, rd64(p));
		h = rotl64(h, 27) * P1 + P4;
	}
	if (end - p >= 4)
	{
		h ^= (uint64_t) rd32(p) * P1;
		h = rotl64(h, 23) * P2 + P3;
		p += 4;
	}
	for (; p < end; p++)
	{
		h ^= (uint64_t) *p * P5;
		h = rotl64(h, 11) * P1;
	}
	h ^= h >> 33;
	h *= P2;
	h ^= h >> 29;
	h *= P3;
	h ^= h >> 32;
	return h;
}

/* ------------------------------------------------------------ the filter */

static const uint32_t salt[8] = {
	0x47b6137bU, 0x44974d91U, 0x8824ad5bU, 0xa2b7289dU,
	0x705495c7U, 0x2df1424bU, 0x9efc4947U, 0x5c6bfb31U
};

int
pq_bloom_check(const uint8_t *bits, uint32_t bytes, uint64_t h)
{
	uint64_t	n_blocks = bytes / 32;
	uint64_t	block = ((h >> 32) * n_blocks) >> 32;
	uint32_t	key = (uint32_t) h;
	const uint8_t *b = bits + block * 32;

	for (int i = 0; i < 8; i++)
	{
		uint32_t	mask = 1U << ((key * salt[i]) >> 27);

		if ((rd32(b + 4 * i) & mask) == 0)
			return 0;
	}
	return 1;
}

/* BloomFilterHeader: numBytes (1); algorithm (2), hash (3) and compression
 * (4) are unions whose member 1 (BLOCK, XXHASH, UNCOMPRESSED) we read */
typedef struct BloomHeader
{
	int32_t		bytes;
	int			known;			/* bits: the unions' members 1 seen */
	int			other;			/* bits: other members seen */
} BloomHeader;

static int
union_member(PqThrift *t, int16_t id, int type, void *arg)
{
	int		   *got = arg;

	*got |= id == 1 ? 1 : 2;
	return 1;
}

static int
bloom_header_field(PqThrift *t, int16_t id, int type, void *arg)
{
	BloomHeader *h = arg;
	int			got = 0;

	if (id == 1)
		return pq_thrift_i32(t, type, &h->bytes);
	if (id < 2 || id > 4)
		return 1;
	if (pq_thrift_struct(t, type, union_member, &got) < 0)
		return -1;
	if (got & 1)
		h->known |= 1 << id;
	if (got & 2)
		h->other |= 1 << id;
	return 0;
}

/* read the filter of chunk (rg, li) into pf's cache */
static int
load_filter(ArrowFile *file, PqFile *pf, int rg, int li, ArrowError *err)
{
	const PqChunk *c = &pf->footer.row_groups[rg].chunks[li];
	char		name[700];
	uint8_t		head[256];
	int64_t		avail = pf->data_end - c->bloom_offset;
	size_t		hl = avail < (int64_t) sizeof(head) ? (size_t) avail : sizeof(head);
	BloomHeader h = {-1, 0, 0};
	PqThrift	t;
	int			e;

	snprintf(name, sizeof(name), "%s: row group %d, column \"%s\": Bloom filter",
			 file->src.name, rg, pf->leaves[li].path);
	if (c->bloom_offset < PARQUET_MAGIC_LEN || avail <= 0)
		return pq_corrupt(err, name, c->bloom_offset, "offset %" PRId64 " outside the data",
						  c->bloom_offset);
	if ((e = file->src.read(file->src.ctx, head, hl, (uint64_t) c->bloom_offset)) != 0)
		return arrow_error(err, ARROW_ERR_IO, c->bloom_offset, "%s: could not read at offset %"
						   PRId64 ": %s", name, c->bloom_offset, strerror(e));
	pq_thrift_init(&t, head, hl, c->bloom_offset, name, "Bloom filter header", err);
	if (pq_thrift_struct(&t, PQ_T_STRUCT, bloom_header_field, &h) < 0)
		return -1;
	if (h.other != 0 || h.known != (1 << 2 | 1 << 3 | 1 << 4))
		return arrow_error(err, ARROW_ERR_UNSUPPORTED, c->bloom_offset, "%s: algorithm, hash or "
						   "compression other than split-block, XXH64, uncompressed", name);
	hl = (size_t) (t.p - head);
	if (h.bytes <= 0 || h.bytes % 32 != 0 || h.bytes > avail - (int64_t) hl ||
		(c->bloom_length > 0 && (int64_t) hl + h.bytes != c->bloom_length))
		return pq_corrupt(err, name, c->bloom_offset, "bitset of %d bytes (%" PRId64
						  " bytes to the footer, length %d)", h.bytes, avail, c->bloom_length);
	if (pf->bloom_bits == NULL || pf->bloom_bytes < (uint32_t) h.bytes)
	{
		pf->bloom_rg = -1;
		if ((pf->bloom_bits = arrow_arena_alloc_uninit(&file->arena, (size_t) h.bytes, err)) == NULL)
			return -1;
	}
	pf->bloom_rg = -1;
	if ((e = file->src.read(file->src.ctx, pf->bloom_bits, (size_t) h.bytes,
							(uint64_t) c->bloom_offset + hl)) != 0)
		return arrow_error(err, ARROW_ERR_IO, c->bloom_offset, "%s: could not read %d bytes: %s",
						   name, h.bytes, strerror(e));
	pf->bloom_bytes = (uint32_t) h.bytes;
	pf->bloom_rg = rg;
	pf->bloom_leaf = li;
	return 0;
}

/* the PLAIN bytes of integer v for leaf (false: no plain form to test) */
static bool
plain_int(const PqLeaf *leaf, __int128 v, uint8_t *buf, size_t *len)
{
	switch (leaf->conv)
	{
		case PQ_CONV_COPY4:
		case PQ_CONV_I8:
		case PQ_CONV_I16:
		case PQ_CONV_U8:
		case PQ_CONV_U16:
			if (leaf->type != PQ_INT32 ||
				v < (leaf->unsigned_int ? 0 : INT32_MIN) ||
				v > (leaf->unsigned_int ? (__int128) UINT32_MAX : INT32_MAX))
				return false;
			{
				uint32_t	u = (uint32_t) (int64_t) v;

				memcpy(buf, &u, 4);
			}
			*len = 4;
			return true;
		case PQ_CONV_COPY8:
			if (leaf->type != PQ_INT64 ||
				v < (leaf->unsigned_int ? 0 : INT64_MIN) ||
				v > (leaf->unsigned_int ? (__int128) UINT64_MAX : INT64_MAX))
				return false;
			{
				uint64_t	u = (uint64_t) v;

				memcpy(buf, &u, 8);
			}
			*len = 8;
			return true;
		default:
			return false;
	}
}

int
parquet_may_contain(ArrowFile *file, int batch, int col, bool is_int, __int128 v,
					const void *bytes, size_t len, ArrowError *err)
{
	PqFile	   *pf = file->parquet;
	const PqLeaf *leaf;
	const PqChunk *c;
	uint8_t		buf[8];
	int			rg,
				li;

	if (pf == NULL || batch < 0 || batch >= file->n_batches || col < 0 ||
		col >= file->schema.n_fields || pf->n_leaf[col] != 1)
		return 1;
	li = pf->first_leaf[col];
	leaf = &pf->leaves[li];
	rg = pf->batch_rg[batch];
	c = &pf->footer.row_groups[rg].chunks[li];
	if (leaf->field != &file->schema.fields[col] || c->bloom_offset < 0 || c->num_values == 0)
		return 1;
	if (is_int)
	{
		if (!plain_int(leaf, v, buf, &len))
			return 1;
		bytes = buf;
	}
	else if (leaf->conv != PQ_CONV_BYTES)
		return 1;
	if ((pf->bloom_rg != rg || pf->bloom_leaf != li) && load_filter(file, pf, rg, li, err) < 0)
		return -1;
	return pq_bloom_check(pf->bloom_bits, pf->bloom_bytes, pq_xxhash64(bytes, len, 0));
}
