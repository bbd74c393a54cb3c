/*
 * pq_codec.c — decompression of Parquet pages: SNAPPY (libsnappy), GZIP
 * (zlib), ZSTD, LZ4_RAW and the deprecated Hadoop-framed LZ4 (liblz4),
 * BROTLI (libbrotlidec).  The output must be exactly the page's declared
 * uncompressed size; anything else is CORRUPT.  LZO is not supported.
 */
#include <inttypes.h>
#include <stdio.h>

#include <brotli/decode.h>
#include <lz4.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include "pq_internal.h"

enum
{
	PQ_UNCOMPRESSED = 0, PQ_SNAPPY = 1, PQ_GZIP = 2, PQ_LZO = 3, PQ_BROTLI = 4,
	PQ_LZ4 = 5, PQ_ZSTD = 6, PQ_LZ4_RAW = 7
};

const char *
pq_codec_name(int codec)
{
	static const char *const names[] = {
		"none", "snappy", "gzip", "lzo", "brotli", "lz4", "zstd", "lz4_raw"
	};

	return codec >= 0 && codec <= PQ_LZ4_RAW ? names[codec] : "unknown";
}

static int
gzip_inflate(const uint8_t *src, size_t src_len, uint8_t *dst, size_t dst_len)
{
	z_stream	zs;
	int			rc;
	size_t		done = 0;

	memset(&zs, 0, sizeof(zs));
	/* 32 + 15: gzip or zlib header, detected */
	if (inflateInit2(&zs, 32 + 15) != Z_OK)
		return -1;
	zs.next_in = (Bytef *) src;
	zs.avail_in = (uInt) src_len;
	for (;;)
	{
		zs.next_out = dst + done;
		zs.avail_out = (uInt) (dst_len - done);
		rc = inflate(&zs, Z_FINISH);
		done = dst_len - zs.avail_out;
		/* concatenated gzip members */
		if (rc == Z_STREAM_END && zs.avail_in > 0 && done < dst_len)
		{
			if (inflateReset(&zs) != Z_OK)
				break;
			continue;
		}
		break;
	}
	inflateEnd(&zs);
	if (rc != Z_STREAM_END || done != dst_len)
		return -1;
	return 0;
}

/* Hadoop's LZ4 framing: blocks of (BE u32 raw size, BE u32 size, data) */
static int
hadoop_lz4(const uint8_t *src, size_t src_len, uint8_t *dst, size_t dst_len)
{
	size_t		in = 0,
				out = 0;

	while (in < src_len)
	{
		uint32_t	raw,
					clen;
		int			n;

		if (src_len - in < 8)
			return -1;
		raw = (uint32_t) src[in] << 24 | (uint32_t) src[in + 1] << 16 |
			(uint32_t) src[in + 2] << 8 | src[in + 3];
		clen = (uint32_t) src[in + 4] << 24 | (uint32_t) src[in + 5] << 16 |
			(uint32_t) src[in + 6] << 8 | src[in + 7];
		in += 8;
		if (clen > src_len - in || raw > dst_len - out || clen > INT32_MAX || raw > INT32_MAX)
			return -1;
		n = LZ4_decompress_safe((const char *) src + in, (char *) dst + out, (int) clen, (int) raw);
		if (n < 0 || (uint32_t) n != raw)
			return -1;
		in += clen;
		out += raw;
	}
	return out == dst_len ? 0 : -1;
}

static int
lz4_raw(const uint8_t *src, size_t src_len, uint8_t *dst, size_t dst_len)
{
	int			n;

	if (src_len > INT32_MAX || dst_len > INT32_MAX)
		return -1;
	n = LZ4_decompress_safe((const char *) src, (char *) dst, (int) src_len, (int) dst_len);
	return n >= 0 && (size_t) n == dst_len ? 0 : -1;
}

int
pq_decompress(int codec, const uint8_t *src, size_t src_len, uint8_t *dst, size_t dst_len,
			  ArrowError *err)
{
	int			rc = -1;

	switch (codec)
	{
		case PQ_UNCOMPRESSED:
			if (src_len != dst_len)
				break;
			memcpy(dst, src, dst_len);
			rc = 0;
			break;
		case PQ_SNAPPY:
			{
				size_t		n;

				if (snappy_uncompressed_length((const char *) src, src_len, &n) != SNAPPY_OK ||
					n != dst_len)
					break;
				rc = snappy_uncompress((const char *) src, src_len, (char *) dst, &n) == SNAPPY_OK &&
					n == dst_len ? 0 : -1;
				break;
			}
		case PQ_GZIP:
			rc = gzip_inflate(src, src_len, dst, dst_len);
			break;
		case PQ_ZSTD:
			{
				size_t		n = ZSTD_decompress(dst, dst_len, src, src_len);

				rc = !ZSTD_isError(n) && n == dst_len ? 0 : -1;
				break;
			}
		case PQ_LZ4_RAW:
			rc = lz4_raw(src, src_len, dst, dst_len);
			break;
		case PQ_LZ4:
			rc = hadoop_lz4(src, src_len, dst, dst_len);
			if (rc < 0)
				rc = lz4_raw(src, src_len, dst, dst_len);
			break;
		case PQ_BROTLI:
			{
				size_t		n = dst_len;

				rc = BrotliDecoderDecompress(src_len, src, &n, dst) == BROTLI_DECODER_RESULT_SUCCESS &&
					n == dst_len ? 0 : -1;
				break;
			}
		default:
			return arrow_error(err, ARROW_ERR_UNSUPPORTED, -1,
							   "compression codec %s (%d) is not supported",
							   pq_codec_name(codec), codec);
	}
	if (rc < 0)
		return arrow_error(err, ARROW_ERR_CORRUPT, -1,
						   "%s data does not decompress to the %zu bytes the page declares",
						   pq_codec_name(codec), dst_len);
	return 0;
}
