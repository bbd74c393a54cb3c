/*
 * test_parquet_decode.c — the Parquet reader's decoders on hand-built input:
 * the RLE/bit-packed hybrid, DELTA_BINARY_PACKED (int32 wrap-around, int64
 * extremes, short last miniblocks), DELTA_BYTE_ARRAY, BYTE_STREAM_SPLIT,
 * dictionary indices, Thrift skipping limits and every codec against its
 * library's compressor; malformed input must fail with CORRUPT.
 */
#include <brotli/encode.h>
#include <lz4.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include "unit.h"
#include "pq_internal.h"

typedef struct Buf
{
	uint8_t		b[1 << 16];
	size_t		n;
} Buf;

static void
put_uvarint(Buf *o, uint64_t v)
{
	while (v >= 0x80)
	{
		o->b[o->n++] = (uint8_t) (v | 0x80);
		v >>= 7;
	}
	o->b[o->n++] = (uint8_t) v;
}

static void
put_zigzag(Buf *o, int64_t v)
{
	put_uvarint(o, ((uint64_t) v << 1) ^ (uint64_t) (v >> 63));
}

/* LSB-first bit packing of n values of width bw */
static void
put_bits(Buf *o, const uint64_t *v, int n, int bw)
{
	size_t		bytes = ((size_t) n * bw + 7) / 8;
	uint64_t	bit = 0;

	memset(o->b + o->n, 0, bytes);
	for (int i = 0; i < n; i++)
		for (int k = 0; k < bw; k++, bit++)
			if ((v[i] >> k) & 1)
				o->b[o->n + bit / 8] |= (uint8_t) (1 << (bit % 8));
	o->n += bytes;
}

static int
width_of(uint64_t v)
{
	int			w = 0;

	while (v)
	{
		w++;
		v >>= 1;
	}
	return w;
}

/* DELTA_BINARY_PACKED: block 128, 4 miniblocks of 32 */
static void
put_dbp(Buf *o, const int64_t *v, int n)
{
	put_uvarint(o, 128);
	put_uvarint(o, 4);
	put_uvarint(o, (uint64_t) n);
	put_zigzag(o, n > 0 ? v[0] : 0);
	for (int s = 1; s < n; s += 128)
	{
		int			cnt = n - s < 128 ? n - s : 128;
		uint64_t	d[128];
		int64_t		min = INT64_MAX;
		int			w[4] = {0, 0, 0, 0};

		for (int i = 0; i < cnt; i++)
		{
			int64_t		dd = (int64_t) ((uint64_t) v[s + i] - (uint64_t) v[s + i - 1]);

			min = dd < min ? dd : min;
			d[i] = (uint64_t) dd;
		}
		for (int i = 0; i < cnt; i++)
		{
			d[i] -= (uint64_t) min;
			if (width_of(d[i]) > w[i / 32])
				w[i / 32] = width_of(d[i]);
		}
		for (int i = cnt; i < 128; i++)
			d[i] = 0;
		put_zigzag(o, min);
		for (int m = 0; m < 4; m++)
			o->b[o->n++] = (uint8_t) w[m];
		for (int m = 0; m < 4 && m * 32 < cnt; m++)
			put_bits(o, d + m * 32, 32, w[m]);
	}
}

static PqLeaf test_leaf = {"x", PQ_INT64, 0, 0, 0, PQ_CONV_COPY8, NULL, 0, false};

static int
decode(int type, int width, int enc, const uint8_t *p, size_t len, int64_t n, PqValues *out,
	   ArrowArena *arena, ArrowError *err, const PqValues *dict)
{
	PqDecodeCtx cx;

	test_leaf.type = type;
	test_leaf.type_length = type == PQ_FIXED_LEN_BYTE_ARRAY ? width : 0;
	memset(out, 0, sizeof(*out));
	out->width = width;
	cx.leaf = &test_leaf;
	cx.name = "test.parquet";
	cx.file_off = 100;
	cx.page_off = 90;
	cx.scratch = arena;
	cx.err = err;
	cx.dict = dict;
	return pq_decode_values(&cx, enc, p, len, n, out);
}

TEST(rle_hybrid)
{
	Buf			o = {.n = 0};
	uint8_t		out[64];
	uint32_t	out32[64];
	uint64_t	vals[16];
	ArrowError	err;

	/* RLE run of 10 x 5 (bw 3), bit-packed run of 16 values */
	put_uvarint(&o, 10 << 1);
	o.b[o.n++] = 5;
	for (int i = 0; i < 16; i++)
		vals[i] = (uint64_t) (i * 3) % 8;
	put_uvarint(&o, (2 << 1) | 1);
	put_bits(&o, vals, 16, 3);
	CHECK_MSG(pq_rle_decode(o.b, o.n, 3, 26, out, NULL, 0, "t", &err) == 0, err.msg);
	for (int i = 0; i < 10; i++)
		CHECK(out[i] == 5);
	for (int i = 0; i < 16; i++)
		CHECK(out[10 + i] == vals[i]);
	CHECK(pq_rle_decode(o.b, o.n, 3, 26, NULL, out32, 0, "t", &err) == 0);
	CHECK(out32[25] == vals[15]);
	/* more values than encoded, truncated runs, values wider than bw */
	CHECK(pq_rle_decode(o.b, o.n, 3, 27, out, NULL, 0, "t", &err) < 0 &&
		  err.code == ARROW_ERR_CORRUPT);
	CHECK(pq_rle_decode(o.b, o.n - 1, 3, 26, out, NULL, 0, "t", &err) < 0);
	CHECK(pq_rle_decode(o.b, 1, 3, 10, out, NULL, 0, "t", &err) < 0);
	o.b[1] = 9;
	CHECK(pq_rle_decode(o.b, o.n, 3, 10, out, NULL, 0, "t", &err) < 0);
	CHECK(pq_rle_decode(o.b, o.n, 40, 10, NULL, out32, 0, "t", &err) < 0);
}

static void
check_dbp(const int64_t *v, int n, int type)
{
	static Buf	o;
	ArrowArena	arena;
	ArrowError	err;
	PqValues	out;
	int			w = type == PQ_INT32 ? 4 : 8;

	o.n = 0;
	put_dbp(&o, v, n);
	arrow_arena_init(&arena, &arrow_malloc_allocator);
	CHECK_MSG(decode(type, w, PQ_ENC_DELTA_BINARY_PACKED, o.b, o.n, n, &out, &arena, &err,
					 NULL) == 0, err.msg);
	CHECK(out.n == n);
	for (int i = 0; i < n && out.n == n; i++)
	{
		if (w == 8)
			CHECK(((int64_t *) out.fixed.p)[i] == v[i]);
		else
			CHECK(((int32_t *) out.fixed.p)[i] == (int32_t) v[i]);
	}
	/* truncated anywhere: an error, never a read past the end */
	for (size_t cut = 0; cut + 1 < o.n; cut += 1 + o.n / 50)
		if (decode(type, w, PQ_ENC_DELTA_BINARY_PACKED, o.b, cut, n, &out, &arena, &err, NULL) == 0)
			CHECK(n <= 1 || cut > 4);
	arrow_arena_free_all(&arena);
}

TEST(delta_binary_packed)
{
	int64_t		v[1000];

	for (int i = 0; i < 1000; i++)
		v[i] = (int64_t) unit_rnd();
	v[3] = INT64_MIN;
	v[4] = INT64_MAX;
	check_dbp(v, 1000, PQ_INT64);
	for (int i = 0; i < 300; i++)
		v[i] = 1000 + i * 7 - (i % 5);
	check_dbp(v, 1, PQ_INT64);
	check_dbp(v, 33, PQ_INT64);
	check_dbp(v, 300, PQ_INT64);
	for (int i = 0; i < 500; i++)
		v[i] = (int32_t) unit_rnd();
	v[7] = INT32_MIN;
	v[8] = INT32_MAX;
	check_dbp(v, 500, PQ_INT32);
}

TEST(delta_byte_array)
{
	static const char *words[] = {"apple", "applesauce", "apply", "", "b", "banana", "band"};
	int			n = 7;
	int64_t		pre[7],
				len[7];
	Buf			o = {.n = 0};
	ArrowArena	arena;
	ArrowError	err;
	PqValues	out;

	for (int i = 0; i < n; i++)
	{
		int			p = 0;

		if (i > 0)
			while (words[i][p] && words[i - 1][p] == words[i][p])
				p++;
		pre[i] = p;
		len[i] = (int64_t) strlen(words[i]) - p;
	}
	put_dbp(&o, pre, n);
	put_dbp(&o, len, n);
	for (int i = 0; i < n; i++)
	{
		memcpy(o.b + o.n, words[i] + pre[i], (size_t) len[i]);
		o.n += (size_t) len[i];
	}
	arrow_arena_init(&arena, &arrow_malloc_allocator);
	CHECK_MSG(decode(PQ_BYTE_ARRAY, 0, PQ_ENC_DELTA_BYTE_ARRAY, o.b, o.n, n, &out, &arena, &err,
					 NULL) == 0, err.msg);
	CHECK(out.n == n);
	for (int i = 0, start = 0; i < n && out.n == n; i++)
	{
		int64_t		end = ((int64_t *) out.offs.p)[i];

		CHECK(end - start == (int64_t) strlen(words[i]));
		CHECK(memcmp(out.data.p + start, words[i], (size_t) (end - start)) == 0);
		start = (int) end;
	}
	/* a prefix longer than the previous value */
	pre[1] = 50;
	o.n = 0;
	put_dbp(&o, pre, n);
	put_dbp(&o, len, n);
	CHECK(decode(PQ_BYTE_ARRAY, 0, PQ_ENC_DELTA_BYTE_ARRAY, o.b, o.n + 40, n, &out, &arena, &err,
				 NULL) < 0 && err.code == ARROW_ERR_CORRUPT);
	arrow_arena_free_all(&arena);
}

TEST(byte_stream_split_and_dictionary)
{
	double		v[10];
	uint8_t		enc[80];
	uint8_t		idx[16];
	ArrowArena	arena;
	ArrowError	err;
	PqValues	out,
				dict;

	for (int i = 0; i < 10; i++)
		v[i] = i * 1.25 - 3;
	for (int k = 0; k < 8; k++)
		for (int i = 0; i < 10; i++)
			enc[k * 10 + i] = ((uint8_t *) &v[i])[k];
	arrow_arena_init(&arena, &arrow_malloc_allocator);
	CHECK_MSG(decode(PQ_DOUBLE, 8, PQ_ENC_BYTE_STREAM_SPLIT, enc, 80, 10, &out, &arena, &err,
					 NULL) == 0, err.msg);
	CHECK(memcmp(out.fixed.p, v, 80) == 0);
	CHECK(decode(PQ_DOUBLE, 8, PQ_ENC_BYTE_STREAM_SPLIT, enc, 79, 10, &out, &arena, &err,
				 NULL) < 0);
	/* dictionary of the 10 doubles, indices 9, 0, 3 (bit width 4, bit-packed) */
	CHECK(decode(PQ_DOUBLE, 8, PQ_ENC_PLAIN, (const uint8_t *) v, 80, 10, &dict, &arena, &err,
				 NULL) == 0);
	idx[0] = 4;
	idx[1] = (1 << 1) | 1;
	idx[2] = 0x09;				/* 9, 0 */
	idx[3] = 0x03;				/* 3, 0 */
	idx[4] = 0;
	idx[5] = 0;
	CHECK_MSG(decode(PQ_DOUBLE, 8, PQ_ENC_RLE_DICTIONARY, idx, 6, 3, &out, &arena, &err, &dict) == 0,
			  err.msg);
	CHECK(((double *) out.fixed.p)[0] == v[9] && ((double *) out.fixed.p)[1] == v[0] &&
		  ((double *) out.fixed.p)[2] == v[3]);
	idx[2] = 0x0b;				/* index 11: out of range */
	CHECK(decode(PQ_DOUBLE, 8, PQ_ENC_RLE_DICTIONARY, idx, 6, 3, &out, &arena, &err, &dict) < 0 &&
		  err.code == ARROW_ERR_CORRUPT);
	CHECK(decode(PQ_DOUBLE, 8, PQ_ENC_RLE_DICTIONARY, idx, 6, 3, &out, &arena, &err, NULL) < 0);
	arrow_arena_free_all(&arena);
}

TEST(thrift_limits)
{
	uint8_t		deep[200];
	PqThrift	t;
	ArrowError	err;
	uint8_t		list[] = {0x19, 0xfc, 0x7f};	/* field 1: list of 2^?? structs */
	PqPageHeader h;
	size_t		hl;

	/* field 1 struct, nested 100 deep: the skip must stop at the limit */
	for (int i = 0; i < 100; i++)
		deep[i] = 0x1c;
	memset(deep + 100, 0, 100);
	pq_thrift_init(&t, deep, sizeof(deep), 0, "t", "test", &err);
	CHECK(pq_thrift_skip(&t, PQ_T_STRUCT) < 0 && err.code == ARROW_ERR_CORRUPT);
	pq_thrift_init(&t, list + 1, 2, 0, "t", "test", &err);
	CHECK(pq_thrift_skip(&t, PQ_T_LIST) < 0);
	/* a page header without sizes; one cut short */
	CHECK(pq_parse_page_header((const uint8_t *) "\x15\x00\x00", 3, 10, "t", &h, &hl, &err) < 0);
	CHECK(strstr(err.msg, "offset") != NULL);
	CHECK(pq_parse_page_header((const uint8_t *) "\x15\x00\x15", 3, 10, "t", &h, &hl, &err) < 0);
}

TEST(codecs)
{
	static uint8_t raw[5000],
				comp[8000],
				back[5000];
	ArrowError	err;
	size_t		n;

	for (int i = 0; i < 5000; i++)
		raw[i] = (uint8_t) ((i * 7) % 13 + (i % 100 == 0 ? unit_rnd() : 0));
	/* SNAPPY */
	n = sizeof(comp);
	CHECK(snappy_compress((const char *) raw, 5000, (char *) comp, &n) == SNAPPY_OK);
	CHECK_MSG(pq_decompress(1, comp, n, back, 5000, &err) == 0, err.msg);
	CHECK(memcmp(raw, back, 5000) == 0);
	CHECK(pq_decompress(1, comp, n, back, 4999, &err) < 0 && err.code == ARROW_ERR_CORRUPT);
	CHECK(pq_decompress(1, comp, n / 2, back, 5000, &err) < 0);
	/* GZIP */
	{
		z_stream	zs;

		memset(&zs, 0, sizeof(zs));
		CHECK(deflateInit2(&zs, 6, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY) == Z_OK);
		zs.next_in = raw;
		zs.avail_in = 5000;
		zs.next_out = comp;
		zs.avail_out = sizeof(comp);
		CHECK(deflate(&zs, Z_FINISH) == Z_STREAM_END);
		n = zs.total_out;
		deflateEnd(&zs);
		CHECK_MSG(pq_decompress(2, comp, n, back, 5000, &err) == 0, err.msg);
		CHECK(memcmp(raw, back, 5000) == 0);
		CHECK(pq_decompress(2, comp, n - 3, back, 5000, &err) < 0);
	}
	/* ZSTD */
	n = ZSTD_compress(comp, sizeof(comp), raw, 5000, 3);
	CHECK(pq_decompress(6, comp, n, back, 5000, &err) == 0 && memcmp(raw, back, 5000) == 0);
	CHECK(pq_decompress(6, comp, n, back, 4000, &err) < 0);
	/* LZ4_RAW */
	n = (size_t) LZ4_compress_default((const char *) raw, (char *) comp, 5000, sizeof(comp));
	CHECK(pq_decompress(7, comp, n, back, 5000, &err) == 0 && memcmp(raw, back, 5000) == 0);
	CHECK(pq_decompress(7, comp, n - 1, back, 5000, &err) < 0);
	/* BROTLI */
	n = sizeof(comp);
	CHECK(BrotliEncoderCompress(5, 22, BROTLI_MODE_GENERIC, 5000, raw, &n, comp));
	CHECK(pq_decompress(4, comp, n, back, 5000, &err) == 0 && memcmp(raw, back, 5000) == 0);
	CHECK(pq_decompress(4, comp, n, back, 5001, &err) < 0);
	/* LZO: unsupported, not corrupt */
	CHECK(pq_decompress(3, comp, n, back, 5000, &err) < 0 && err.code == ARROW_ERR_UNSUPPORTED);
}

int
main(void)
{
	RUN(rle_hybrid);
	RUN(delta_binary_packed);
	RUN(delta_byte_array);
	RUN(byte_stream_split_and_dictionary);
	RUN(thrift_limits);
	RUN(codecs);
	UNIT_EXIT();
}
