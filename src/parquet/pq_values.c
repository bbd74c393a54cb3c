/*
 * pq_values.c — Parquet value decoders: PLAIN, dictionary indices
 * (PLAIN_DICTIONARY / RLE_DICTIONARY), RLE booleans, DELTA_BINARY_PACKED,
 * DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY and BYTE_STREAM_SPLIT.  Values
 * are appended to a PqValues in their physical form: fixed-width bytes
 * (booleans one byte each) or byte arrays as end offsets and data.
 */
#include <inttypes.h>
#include <stdio.h>

#include "pq_internal.h"

#define DBP_MAX_BLOCK (1 << 20)

int
pq_decode_fail(PqDecodeCtx *cx, const char *fmt,...)
{
	char		detail[512];
	char		name[800];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	snprintf(name, sizeof(name), "%s: column \"%s\"", cx->name, cx->leaf->path);
	return pq_corrupt(cx->err, name, cx->page_off, "%s, in the page", detail);
}

static int
append_fixed(PqDecodeCtx *cx, PqValues *out, const uint8_t *src, int64_t n)
{
	int64_t		bytes = n * out->width;

	if (pq_grow(&out->fixed, cx->scratch, bytes, cx->err) < 0)
		return -1;
	if (bytes > 0)
		memcpy(out->fixed.p + out->fixed.len, src, (size_t) bytes);
	out->fixed.len += bytes;
	out->n += n;
	return 0;
}

static int
append_bytes(PqDecodeCtx *cx, PqValues *out, const uint8_t *src, int64_t len)
{
	int64_t		end;

	if (pq_grow(&out->offs, cx->scratch, 8, cx->err) < 0 ||
		pq_grow(&out->data, cx->scratch, len, cx->err) < 0)
		return -1;
	if (len > 0)
		memcpy(out->data.p + out->data.len, src, (size_t) len);
	out->data.len += len;
	end = out->data.len;
	memcpy(out->offs.p + out->offs.len, &end, 8);
	out->offs.len += 8;
	out->n++;
	return 0;
}

static inline const uint8_t *
value_bytes(const PqValues *v, int64_t i, int64_t *len)
{
	const int64_t *offs = (const int64_t *) v->offs.p;
	int64_t		start = i == 0 ? 0 : offs[i - 1];

	*len = offs[i] - start;
	return v->data.p + start;
}

static int
decode_plain(PqDecodeCtx *cx, const uint8_t *p, size_t len, int64_t n, PqValues *out)
{
	int			w = out->width;

	if (cx->leaf->type == PQ_BOOLEAN)
	{
		if ((uint64_t) (n + 7) / 8 > len)
			return pq_decode_fail(cx, "%" PRId64 " PLAIN booleans need more than %zu bytes", n, len);
		if (pq_grow(&out->fixed, cx->scratch, n, cx->err) < 0)
			return -1;
		for (int64_t i = 0; i < n; i++)
			out->fixed.p[out->fixed.len + i] = (p[i >> 3] >> (i & 7)) & 1;
		out->fixed.len += n;
		out->n += n;
		return 0;
	}
	if (w > 0)
	{
		if ((uint64_t) n > len / (uint64_t) w)
			return pq_decode_fail(cx, "%" PRId64 " PLAIN values of %d bytes need more than %zu bytes",
								  n, w, len);
		return append_fixed(cx, out, p, n);
	}
	if ((uint64_t) n > len / 4)
		return pq_decode_fail(cx, "%" PRId64 " PLAIN byte arrays need more than %zu bytes", n, len);
	if (pq_grow(&out->offs, cx->scratch, n * 8, cx->err) < 0)
		return -1;
	for (int64_t i = 0; i < n; i++)
	{
		uint32_t	l;

		if (len < 4)
			return pq_decode_fail(cx, "PLAIN byte array %" PRId64 " of %" PRId64 " past the end", i, n);
		memcpy(&l, p, 4);
		p += 4;
		len -= 4;
		if (l > len)
			return pq_decode_fail(cx, "PLAIN byte array of %u bytes past the end", l);
		if (append_bytes(cx, out, p, l) < 0)
			return -1;
		p += l;
		len -= l;
	}
	return 0;
}

static int
decode_dict(PqDecodeCtx *cx, const uint8_t *p, size_t len, int64_t n, PqValues *out)
{
	const PqValues *d = cx->dict;
	uint32_t   *idx;
	int			bw;

	if (d == NULL)
		return pq_decode_fail(cx, "dictionary-encoded page without a dictionary page");
	if (n == 0)
		return 0;
	if (len < 1)
		return pq_decode_fail(cx, "dictionary indices missing");
	bw = p[0];
	idx = arrow_arena_alloc_uninit(cx->scratch, sizeof(uint32_t) * (size_t) n, cx->err);
	if (idx == NULL)
		return -1;
	if (pq_rle_decode(p + 1, len - 1, bw, n, NULL, idx, cx->file_off < 0 ? -1 : cx->file_off + 1,
					  cx->name, cx->err) < 0)
		return -1;
	for (int64_t i = 0; i < n; i++)
		if (idx[i] >= (uint64_t) d->n)
			return pq_decode_fail(cx, "dictionary index %u out of range (%" PRId64 " entries)",
								  idx[i], d->n);
	if (out->width > 0)
	{
		int			w = out->width;
		uint8_t    *dst;

		if (pq_grow(&out->fixed, cx->scratch, n * w, cx->err) < 0)
			return -1;
		dst = out->fixed.p + out->fixed.len;
		if (w == 4)
			for (int64_t i = 0; i < n; i++)
				((uint32_t *) dst)[i] = ((const uint32_t *) d->fixed.p)[idx[i]];
		else if (w == 8)
			for (int64_t i = 0; i < n; i++)
				((uint64_t *) dst)[i] = ((const uint64_t *) d->fixed.p)[idx[i]];
		else
			for (int64_t i = 0; i < n; i++)
				memcpy(dst + i * w, d->fixed.p + (int64_t) idx[i] * w, (size_t) w);
		out->fixed.len += n * w;
		out->n += n;
		return 0;
	}
	if (pq_grow(&out->offs, cx->scratch, n * 8, cx->err) < 0)
		return -1;
	for (int64_t i = 0; i < n; i++)
	{
		int64_t		l;
		const uint8_t *s = value_bytes(d, idx[i], &l);

		if (append_bytes(cx, out, s, l) < 0)
			return -1;
	}
	return 0;
}

static int
decode_rle_bool(PqDecodeCtx *cx, const uint8_t *p, size_t len, int64_t n, PqValues *out)
{
	uint32_t	l;

	if (cx->leaf->type != PQ_BOOLEAN)
		return pq_decode_fail(cx, "RLE encoding for a non-boolean column");
	if (len < 4)
		return pq_decode_fail(cx, "RLE boolean length missing");
	memcpy(&l, p, 4);
	if (l > len - 4)
		return pq_decode_fail(cx, "RLE booleans of %u bytes past the end", l);
	if (pq_grow(&out->fixed, cx->scratch, n, cx->err) < 0)
		return -1;
	if (pq_rle_decode(p + 4, l, 1, n, out->fixed.p + out->fixed.len, NULL,
					  cx->file_off < 0 ? -1 : cx->file_off + 4, cx->name, cx->err) < 0)
		return -1;
	out->fixed.len += n;
	out->n += n;
	return 0;
}

static int
zigzag(const uint8_t **p, const uint8_t *end, int64_t *v)
{
	uint64_t	u;

	if (pq_uvarint(p, end, &u) < 0)
		return -1;
	*v = (int64_t) (u >> 1) ^ -(int64_t) (u & 1);
	return 0;
}

/*
 * DELTA_BINARY_PACKED: at most max values into *vals (scratch), their
 * count in *count, bytes consumed in *used.
 */
static int
decode_dbp(PqDecodeCtx *cx, const uint8_t *p, size_t len, int64_t max, int64_t **vals,
		   int64_t *count, size_t *used)
{
	const uint8_t *s = p,
			   *end = p + len;
	uint64_t	block,
				nmb,
				total;
	int64_t		first,
				got = 0,
				per;
	uint64_t	prev;
	uint64_t   *tmp;

	if (pq_uvarint(&s, end, &block) < 0 || pq_uvarint(&s, end, &nmb) < 0 ||
		pq_uvarint(&s, end, &total) < 0 || zigzag(&s, end, &first) < 0)
		return pq_decode_fail(cx, "DELTA_BINARY_PACKED header malformed");
	if (block == 0 || block % 128 != 0 || block > DBP_MAX_BLOCK || nmb == 0 ||
		block % nmb != 0 || (block / nmb) % 32 != 0)
		return pq_decode_fail(cx, "DELTA_BINARY_PACKED block of %" PRIu64 " values in %" PRIu64
							  " miniblocks", block, nmb);
	if (total > (uint64_t) max)
		return pq_decode_fail(cx, "DELTA_BINARY_PACKED of %" PRIu64 " values, the page has %" PRId64,
							  total, max);
	per = (int64_t) (block / nmb);
	*vals = arrow_arena_alloc_uninit(cx->scratch, sizeof(int64_t) * ((size_t) total + 1), cx->err);
	tmp = arrow_arena_alloc_uninit(cx->scratch, sizeof(uint64_t) * (size_t) per, cx->err);
	if (*vals == NULL || tmp == NULL)
		return -1;
	prev = (uint64_t) first;
	if (total > 0)
		(*vals)[got++] = first;
	while ((uint64_t) got < total)
	{
		int64_t		min_delta;
		const uint8_t *widths;

		if (zigzag(&s, end, &min_delta) < 0 || (uint64_t) (end - s) < nmb)
			return pq_decode_fail(cx, "DELTA_BINARY_PACKED block header past the end");
		widths = s;
		s += nmb;
		for (uint64_t m = 0; m < nmb && (uint64_t) got < total; m++)
		{
			int			bw = widths[m];
			int64_t		take = (int64_t) total - got < per ? (int64_t) total - got : per;
			uint64_t	full = (uint64_t) per * bw / 8;
			uint64_t	need = ((uint64_t) take * bw + 7) / 8;

			if (bw > 64)
				return pq_decode_fail(cx, "DELTA_BINARY_PACKED bit width %d", bw);
			if (need > (uint64_t) (end - s))
				return pq_decode_fail(cx, "DELTA_BINARY_PACKED miniblock past the end");
			pq_unpack_bits(s, bw, take, tmp);
			s += full <= (uint64_t) (end - s) ? full : (uint64_t) (end - s);
			for (int64_t j = 0; j < take; j++)
			{
				prev = prev + (uint64_t) min_delta + tmp[j];
				(*vals)[got++] = (int64_t) prev;
			}
		}
	}
	*count = (int64_t) total;
	*used = (size_t) (s - p);
	return 0;
}

static int
decode_delta_int(PqDecodeCtx *cx, const uint8_t *p, size_t len, int64_t n, PqValues *out)
{
	int64_t    *v,
				cnt;
	size_t		used;

	if (cx->leaf->type != PQ_INT32 && cx->leaf->type != PQ_INT64)
		return pq_decode_fail(cx, "DELTA_BINARY_PACKED for a non-integer column");
	if (decode_dbp(cx, p, len, n, &v, &cnt, &used) < 0)
		return -1;
	if (cnt != n)
		return pq_decode_fail(cx, "DELTA_BINARY_PACKED has %" PRId64 " values, the page %" PRId64,
							  cnt, n);
	if (pq_grow(&out->fixed, cx->scratch, n * out->width, cx->err) < 0)
		return -1;
	if (out->width == 4)
		for (int64_t i = 0; i < n; i++)
			((int32_t *) (out->fixed.p + out->fixed.len))[i] = (int32_t) (uint32_t) v[i];
	else
		memcpy(out->fixed.p + out->fixed.len, v, (size_t) n * 8);
	out->fixed.len += n * out->width;
	out->n += n;
	return 0;
}

/* lengths then data: n byte arrays; *used gets the bytes consumed */
static int
decode_dlba(PqDecodeCtx *cx, const uint8_t *p, size_t len, int64_t n, PqValues *out,
			size_t *used)
{
	int64_t    *lens,
				cnt;
	size_t		hdr;
	const uint8_t *d;
	size_t		left;

	if (decode_dbp(cx, p, len, n, &lens, &cnt, &hdr) < 0)
		return -1;
	if (cnt != n)
		return pq_decode_fail(cx, "DELTA_LENGTH_BYTE_ARRAY has %" PRId64 " lengths, %" PRId64
							  " values expected", cnt, n);
	d = p + hdr;
	left = len - hdr;
	if (pq_grow(&out->offs, cx->scratch, n * 8, cx->err) < 0)
		return -1;
	for (int64_t i = 0; i < n; i++)
	{
		if (lens[i] < 0 || (uint64_t) lens[i] > left)
			return pq_decode_fail(cx, "byte array length %" PRId64 " out of range", lens[i]);
		if (append_bytes(cx, out, d, lens[i]) < 0)
			return -1;
		d += lens[i];
		left -= (size_t) lens[i];
	}
	*used = len - left;
	return 0;
}

static int
decode_delta_bytes(PqDecodeCtx *cx, const uint8_t *p, size_t len, int64_t n, PqValues *out)
{
	int64_t    *pre,
				cnt;
	size_t		hdr,
				used;
	PqValues	suf;
	const uint8_t *prev = NULL;
	int64_t		prev_len = 0;
	uint8_t    *buf = NULL;
	int64_t		buf_cap = 0;

	if (cx->leaf->type != PQ_BYTE_ARRAY && cx->leaf->type != PQ_FIXED_LEN_BYTE_ARRAY)
		return pq_decode_fail(cx, "DELTA_BYTE_ARRAY for a non-binary column");
	if (decode_dbp(cx, p, len, n, &pre, &cnt, &hdr) < 0)
		return -1;
	if (cnt != n)
		return pq_decode_fail(cx, "DELTA_BYTE_ARRAY has %" PRId64 " prefixes, %" PRId64
							  " values expected", cnt, n);
	memset(&suf, 0, sizeof(suf));
	if (decode_dlba(cx, p + hdr, len - hdr, n, &suf, &used) < 0)
		return -1;
	for (int64_t i = 0; i < n; i++)
	{
		int64_t		sl,
					total;
		const uint8_t *s = value_bytes(&suf, i, &sl);

		if (pre[i] < 0 || pre[i] > prev_len)
			return pq_decode_fail(cx, "DELTA_BYTE_ARRAY prefix %" PRId64 " longer than the "
								  "previous value (%" PRId64 ")", pre[i], prev_len);
		total = pre[i] + sl;
		if (total > buf_cap || buf == NULL)
		{
			uint8_t    *nb;

			buf_cap = total * 2 + 64;
			if ((nb = arrow_arena_alloc_uninit(cx->scratch, (size_t) buf_cap, cx->err)) == NULL)
				return -1;
			if (prev_len > 0)
				memcpy(nb, prev, (size_t) prev_len);
			buf = nb;
		}
		else if (prev != buf && pre[i] > 0)
			memmove(buf, prev, (size_t) pre[i]);
		if (sl > 0)
			memcpy(buf + pre[i], s, (size_t) sl);
		if (out->width > 0)
		{
			if (total != out->width)
				return pq_decode_fail(cx, "DELTA_BYTE_ARRAY value of %" PRId64 " bytes in a "
									  "FIXED_LEN_BYTE_ARRAY(%d)", total, out->width);
			if (append_fixed(cx, out, buf, 1) < 0)
				return -1;
		}
		else if (append_bytes(cx, out, buf, total) < 0)
			return -1;
		prev = buf;
		prev_len = total;
	}
	return 0;
}

static int
decode_split(PqDecodeCtx *cx, const uint8_t *p, size_t len, int64_t n, PqValues *out)
{
	int			w = out->width;
	uint8_t    *dst;

	if (w <= 0 || cx->leaf->type == PQ_BOOLEAN || cx->leaf->type == PQ_INT96)
		return pq_decode_fail(cx, "BYTE_STREAM_SPLIT for a column of this type");
	if ((uint64_t) n > len / (uint64_t) w)
		return pq_decode_fail(cx, "BYTE_STREAM_SPLIT of %" PRId64 " values past the end", n);
	if (pq_grow(&out->fixed, cx->scratch, n * w, cx->err) < 0)
		return -1;
	dst = out->fixed.p + out->fixed.len;
	/* w streams of n bytes each */
	{
		int64_t		stride = n;

		for (int k = 0; k < w; k++)
			for (int64_t i = 0; i < n; i++)
				dst[i * w + k] = p[(int64_t) k * stride + i];
	}
	out->fixed.len += n * w;
	out->n += n;
	return 0;
}

int
pq_decode_values(PqDecodeCtx *cx, int enc, const uint8_t *p, size_t len, int64_t n,
				 PqValues *out)
{
	size_t		used;

	switch (enc)
	{
		case PQ_ENC_PLAIN:
			return decode_plain(cx, p, len, n, out);
		case PQ_ENC_PLAIN_DICTIONARY:
		case PQ_ENC_RLE_DICTIONARY:
			return decode_dict(cx, p, len, n, out);
		case PQ_ENC_RLE:
			return decode_rle_bool(cx, p, len, n, out);
		case PQ_ENC_DELTA_BINARY_PACKED:
			return decode_delta_int(cx, p, len, n, out);
		case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY:
			if (cx->leaf->type != PQ_BYTE_ARRAY)
				return pq_decode_fail(cx, "DELTA_LENGTH_BYTE_ARRAY for a non-binary column");
			return decode_dlba(cx, p, len, n, out, &used);
		case PQ_ENC_DELTA_BYTE_ARRAY:
			return decode_delta_bytes(cx, p, len, n, out);
		case PQ_ENC_BYTE_STREAM_SPLIT:
			return decode_split(cx, p, len, n, out);
		default:
			return arrow_error(cx->err, ARROW_ERR_UNSUPPORTED, cx->page_off,
							   "%s: column \"%s\": Parquet encoding %d is not supported "
							   "(page at offset %" PRId64 ")", cx->name, cx->leaf->path, enc,
							   cx->page_off);
	}
}
