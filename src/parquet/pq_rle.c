/*
 * pq_rle.c — the RLE/bit-packed hybrid encoding (levels, dictionary
 * indices, RLE booleans), LSB-first bit unpacking, and the growable
 * buffers the decoders append to.
 */
#include <inttypes.h>
#include <stdio.h>

#include "pq_internal.h"

int
pq_corrupt(ArrowError *err, const char *name, int64_t offset, const char *fmt,...)
{
	char		detail[600];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	if (offset >= 0)
		return arrow_error(err, ARROW_ERR_CORRUPT, offset, "%s: %s at offset %" PRId64,
						   name, detail, offset);
	return arrow_error(err, ARROW_ERR_CORRUPT, -1, "%s: %s", name, detail);
}

int
pq_grow(PqGrow *g, ArrowArena *arena, int64_t need, ArrowError *err)
{
	int64_t		cap;
	uint8_t    *p;

	if (need < 0 || need > INT64_MAX / 2 - g->len)
		return arrow_error(err, ARROW_ERR_NOMEM, -1, "Parquet buffer too large");
	if (g->p != NULL && g->len + need <= g->cap)
		return 0;				/* (allocated even for 0 bytes: p is never NULL after) */
	cap = g->cap ? g->cap : 256;
	while (cap < g->len + need)
		cap *= 2;
	if ((p = arrow_arena_alloc_uninit(arena, (size_t) cap, err)) == NULL)
		return -1;
	if (g->len > 0)
		memcpy(p, g->p, (size_t) g->len);
	g->p = p;
	g->cap = cap;
	return 0;
}

void
pq_unpack_bits(const uint8_t *p, int bw, int64_t n, uint64_t *out)
{
	uint64_t	mask = bw == 64 ? ~(uint64_t) 0 : (((uint64_t) 1 << bw) - 1);
	int64_t		bit = 0;

	if (bw == 0)
	{
		memset(out, 0, sizeof(uint64_t) * (size_t) n);
		return;
	}
	for (int64_t i = 0; i < n; i++, bit += bw)
	{
		int64_t		byte = bit >> 3;
		int			shift = (int) (bit & 7);
		int			nbytes = (shift + bw + 7) >> 3;
		unsigned __int128 w = 0;

		for (int k = 0; k < nbytes; k++)
			w |= (unsigned __int128) p[byte + k] << (8 * k);
		out[i] = (uint64_t) (w >> shift) & mask;
	}
}

/* unpack bw-bit values (bw <= 32) of a bit-packed run of avail bytes */
static void
unpack32(const uint8_t *p, int64_t avail, int bw, int64_t n, uint8_t *out8, uint32_t *out32)
{
	uint32_t	mask = bw == 32 ? 0xffffffffu : ((1u << bw) - 1);
	int64_t		bit = 0;

	for (int64_t i = 0; i < n; i++, bit += bw)
	{
		int64_t		byte = bit >> 3;
		int			shift = (int) (bit & 7);
		int			nbytes = (shift + bw + 7) >> 3;
		uint64_t	w = 0;
		uint32_t	v;

		if (byte + 8 <= avail)
			memcpy(&w, p + byte, 8);	/* little-endian hosts only (x86-64, arm64) */
		else
			for (int k = 0; k < nbytes; k++)
				w |= (uint64_t) p[byte + k] << (8 * k);
		v = (uint32_t) (w >> shift) & mask;
		if (out8)
			out8[i] = (uint8_t) v;
		else
			out32[i] = v;
	}
}

int
pq_rle_decode(const uint8_t *p, size_t len, int bw, int64_t n, uint8_t *out8,
			  uint32_t *out32, int64_t file_off, const char *name, ArrowError *err)
{
	const uint8_t *s = p,
			   *end = p + len;
	int64_t		got = 0;
	int			vbytes = (bw + 7) / 8;

	if (bw < 0 || bw > 32 || (out8 && bw > 8))
		return pq_corrupt(err, name, file_off, "RLE bit width %d out of range", bw);
	while (got < n)
	{
		uint64_t	h;
		int64_t		at = file_off < 0 ? -1 : file_off + (int64_t) (s - p);

		if (pq_uvarint(&s, end, &h) < 0)
			return pq_corrupt(err, name, at, "RLE run header missing or malformed");
		if (h & 1)
		{
			uint64_t	groups = h >> 1;
			uint64_t	bytes,
						vals;
			int64_t		take;

			if (groups == 0 || groups > (uint64_t) (end - s) || groups > ((uint64_t) 1 << 40))
				return pq_corrupt(err, name, at, "bit-packed run of %" PRIu64 " groups past the end",
								  groups);
			bytes = groups * (uint64_t) bw;
			vals = groups * 8;
			if (bytes > (uint64_t) (end - s))
				return pq_corrupt(err, name, at, "bit-packed run of %" PRIu64 " bytes past the end",
								  bytes);
			take = (int64_t) vals < n - got ? (int64_t) vals : n - got;
			unpack32(s, (int64_t) bytes, bw, take, out8 ? out8 + got : NULL,
					 out32 ? out32 + got : NULL);
			got += take;
			s += bytes;
		}
		else
		{
			uint64_t	count = h >> 1;
			uint32_t	v = 0;
			int64_t		take;

			if ((int64_t) vbytes > end - s)
				return pq_corrupt(err, name, at, "RLE run value past the end");
			for (int k = 0; k < vbytes; k++)
				v |= (uint32_t) s[k] << (8 * k);
			s += vbytes;
			if (bw < 32 && (v >> bw) != 0)
				return pq_corrupt(err, name, at, "RLE value %u wider than %d bits", v, bw);
			if (count == 0)
				return pq_corrupt(err, name, at, "empty RLE run");
			take = count < (uint64_t) (n - got) ? (int64_t) count : n - got;
			if (out8)
				memset(out8 + got, (int) v, (size_t) take);
			else
				for (int64_t i = 0; i < take; i++)
					out32[got + i] = v;
			got += take;
		}
	}
	return 0;
}
