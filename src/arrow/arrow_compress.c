/*
 * arrow_compress.c — LZ4 frame and Zstandard codecs for Arrow IPC buffer
 * compression (BodyCompression method BUFFER).
 *
 * Decompression must produce exactly the number of bytes the buffer's
 * length prefix claimed: anything else (short output, trailing data, a frame
 * that wants to produce more) is reported as CORRUPT.
 */
#include <inttypes.h>
#include <string.h>

#include <lz4frame.h>
#include <zstd.h>

#include "arrow_read_internal.h"

static int
lz4_decompress(const uint8_t *src, size_t src_len, uint8_t *dst,
			   size_t dst_len, ArrowError *err)
{
	LZ4F_dctx  *dctx;
	LZ4F_errorCode_t e;
	size_t		in = 0,
				out = 0,
				ret = 1;
	uint8_t		dummy;

	e = LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION);
	if (LZ4F_isError(e))
		return arrow_error(err, ARROW_ERR_NOMEM, -1,
						   "could not create an LZ4 decompression context: %s",
						   LZ4F_getErrorName(e));
	while (in < src_len)
	{
		size_t		dsize = dst_len - out;
		size_t		ssize = src_len - in;

		ret = LZ4F_decompress(dctx, dst_len > 0 ? dst + out : &dummy, &dsize,
							  src + in, &ssize, NULL);
		if (LZ4F_isError(ret))
		{
			LZ4F_freeDecompressionContext(dctx);
			return arrow_error(err, ARROW_ERR_CORRUPT, -1,
							   "LZ4 decompression failed: %s",
							   LZ4F_getErrorName(ret));
		}
		out += dsize;
		in += ssize;
		if (ret == 0)
			break;				/* frame complete */
		if (dsize == 0 && ssize == 0)
			break;				/* no progress: output full */
	}
	LZ4F_freeDecompressionContext(dctx);
	if (ret != 0)
		return arrow_error(err, ARROW_ERR_CORRUPT, -1,
						   "LZ4 frame is truncated or holds more than the %zu bytes claimed",
						   dst_len);
	if (out != dst_len)
		return arrow_error(err, ARROW_ERR_CORRUPT, -1,
						   "LZ4 frame holds %zu bytes, %zu were claimed",
						   out, dst_len);
	if (in != src_len)
		return arrow_error(err, ARROW_ERR_CORRUPT, -1,
						   "%zu bytes of trailing data after the LZ4 frame",
						   src_len - in);
	return 0;
}

static int
zstd_decompress(const uint8_t *src, size_t src_len, uint8_t *dst,
				size_t dst_len, ArrowError *err)
{
	uint8_t		dummy;
	size_t		n = ZSTD_decompress(dst_len > 0 ? dst : &dummy, dst_len, src, src_len);

	if (ZSTD_isError(n))
		return arrow_error(err, ARROW_ERR_CORRUPT, -1,
						   "ZSTD decompression failed: %s", ZSTD_getErrorName(n));
	if (n != dst_len)
		return arrow_error(err, ARROW_ERR_CORRUPT, -1,
						   "ZSTD data holds %zu bytes, %zu were claimed",
						   n, dst_len);
	return 0;
}

/*
 * Prefix decompression: the first dst_len bytes of a buffer whose claimed
 * uncompressed size (claimed) is larger.  Writers (pyarrow among them) store
 * the whole underlying buffer of a sliced array, so a buffer may hold more
 * than the array uses; decompressing only what is used bounds the memory by
 * the array's needs, whatever the length prefix says.  A frame that declares
 * its content size must agree with the claim.
 */
static int
lz4_decompress_prefix(const uint8_t *src, size_t src_len, uint8_t *dst,
					  size_t dst_len, uint64_t claimed, ArrowError *err)
{
	LZ4F_dctx  *dctx;
	LZ4F_errorCode_t e;
	LZ4F_frameInfo_t info;
	size_t		in = 0,
				out = 0,
				n;
	uint8_t		dummy;

	e = LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION);
	if (LZ4F_isError(e))
		return arrow_error(err, ARROW_ERR_NOMEM, -1,
						   "could not create an LZ4 decompression context: %s",
						   LZ4F_getErrorName(e));
	n = src_len;
	memset(&info, 0, sizeof(info));
	e = LZ4F_getFrameInfo(dctx, &info, src, &n);
	if (LZ4F_isError(e))
	{
		LZ4F_freeDecompressionContext(dctx);
		return arrow_error(err, ARROW_ERR_CORRUPT, -1,
						   "bad LZ4 frame header: %s", LZ4F_getErrorName(e));
	}
	in = n;
	if (info.contentSize != 0 && info.contentSize != claimed)
	{
		LZ4F_freeDecompressionContext(dctx);
		return arrow_error(err, ARROW_ERR_CORRUPT, -1,
						   "LZ4 frame holds %llu bytes, %llu were claimed",
						   (unsigned long long) info.contentSize,
						   (unsigned long long) claimed);
	}
	while (out < dst_len && in < src_len)
	{
		size_t		dsize = dst_len - out;
		size_t		ssize = src_len - in;
		size_t		ret;

		ret = LZ4F_decompress(dctx, dst_len > 0 ? dst + out : &dummy, &dsize,
							  src + in, &ssize, NULL);
		if (LZ4F_isError(ret))
		{
			LZ4F_freeDecompressionContext(dctx);
			return arrow_error(err, ARROW_ERR_CORRUPT, -1,
							   "LZ4 decompression failed: %s",
							   LZ4F_getErrorName(ret));
		}
		out += dsize;
		in += ssize;
		if (ret == 0 || (dsize == 0 && ssize == 0))
			break;
	}
	LZ4F_freeDecompressionContext(dctx);
	if (out != dst_len)
		return arrow_error(err, ARROW_ERR_CORRUPT, -1,
						   "LZ4 frame holds fewer than the %zu bytes needed",
						   dst_len);
	return 0;
}

static int
zstd_decompress_prefix(const uint8_t *src, size_t src_len, uint8_t *dst,
					   size_t dst_len, uint64_t claimed, ArrowError *err)
{
	ZSTD_DStream *ds;
	ZSTD_inBuffer in;
	ZSTD_outBuffer out;
	unsigned long long csize = ZSTD_getFrameContentSize(src, src_len);
	size_t		fsize = ZSTD_findFrameCompressedSize(src, src_len);
	int			rc = 0;

	/* a single frame that states its size must state the claimed one */
	if (!ZSTD_isError(fsize) && fsize == src_len &&
		csize != ZSTD_CONTENTSIZE_UNKNOWN && csize != ZSTD_CONTENTSIZE_ERROR &&
		csize != claimed)
		return arrow_error(err, ARROW_ERR_CORRUPT, -1,
						   "ZSTD frame holds %llu bytes, %llu were claimed",
						   csize, (unsigned long long) claimed);
	ds = ZSTD_createDStream();
	if (ds == NULL)
		return arrow_error(err, ARROW_ERR_NOMEM, -1,
						   "could not create a ZSTD decompression context");
	in.src = src;
	in.size = src_len;
	in.pos = 0;
	out.dst = dst;
	out.size = dst_len;
	out.pos = 0;
	while (out.pos < out.size)
	{
		size_t		before_in = in.pos,
					before_out = out.pos;
		size_t		r = ZSTD_decompressStream(ds, &out, &in);

		if (ZSTD_isError(r))
		{
			rc = arrow_error(err, ARROW_ERR_CORRUPT, -1,
							 "ZSTD decompression failed: %s", ZSTD_getErrorName(r));
			break;
		}
		if (in.pos == before_in && out.pos == before_out)
			break;				/* input exhausted */
	}
	ZSTD_freeDStream(ds);
	if (rc == 0 && out.pos != dst_len)
		rc = arrow_error(err, ARROW_ERR_CORRUPT, -1,
						 "ZSTD data holds fewer than the %zu bytes needed",
						 dst_len);
	return rc;
}

/*
 * Largest expansion of one compressed byte: a Zstandard RLE block turns 4
 * bytes into up to 128 KB (32768x); LZ4 sequences grow by at most 255 bytes
 * per byte of match length.  Rounded up generously: this only stops claims
 * no data could back, before anything is allocated for them.
 */
#define ZSTD_MAX_RATIO	65536
#define LZ4_MAX_RATIO	1024
#define CLAIM_SLACK		(1 << 20)

int
arrow_check_claim(ArrowCodec codec, const uint8_t *src, size_t src_len,
				  uint64_t claimed, ArrowError *err)
{
	uint64_t	ratio = codec == ARROW_CODEC_ZSTD ? ZSTD_MAX_RATIO : LZ4_MAX_RATIO;

	if (codec == ARROW_CODEC_NONE)
		return claimed == src_len ? 0 :
			arrow_error(err, ARROW_ERR_CORRUPT, -1,
						"%zu stored bytes, %llu claimed", src_len,
						(unsigned long long) claimed);
	if (src_len < (UINT64_MAX - CLAIM_SLACK) / ratio &&
		claimed > (uint64_t) src_len * ratio + CLAIM_SLACK)
		return arrow_error(err, ARROW_ERR_CORRUPT, -1,
						   "%zu compressed bytes cannot hold the %llu bytes claimed",
						   src_len, (unsigned long long) claimed);
	if (codec == ARROW_CODEC_ZSTD)
	{
		unsigned long long csize = ZSTD_getFrameContentSize(src, src_len);
		size_t		fsize = ZSTD_findFrameCompressedSize(src, src_len);

		if (!ZSTD_isError(fsize) && fsize == src_len &&
			csize != ZSTD_CONTENTSIZE_UNKNOWN && csize != ZSTD_CONTENTSIZE_ERROR &&
			csize != claimed)
			return arrow_error(err, ARROW_ERR_CORRUPT, -1,
							   "ZSTD frame holds %llu bytes, %llu were claimed",
							   csize, (unsigned long long) claimed);
	}
	else if (codec == ARROW_CODEC_LZ4_FRAME)
	{
		LZ4F_dctx  *dctx;
		LZ4F_frameInfo_t info;
		size_t		n = src_len;
		LZ4F_errorCode_t e;

		if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION)))
			return arrow_error(err, ARROW_ERR_NOMEM, -1,
							   "could not create an LZ4 decompression context");
		memset(&info, 0, sizeof(info));
		e = LZ4F_getFrameInfo(dctx, &info, src, &n);
		LZ4F_freeDecompressionContext(dctx);
		if (LZ4F_isError(e))
			return arrow_error(err, ARROW_ERR_CORRUPT, -1,
							   "bad LZ4 frame header: %s", LZ4F_getErrorName(e));
		if (info.contentSize != 0 && info.contentSize != claimed)
			return arrow_error(err, ARROW_ERR_CORRUPT, -1,
							   "LZ4 frame holds %llu bytes, %llu were claimed",
							   (unsigned long long) info.contentSize,
							   (unsigned long long) claimed);
	}
	return 0;
}

int
arrow_decompress_prefix(ArrowCodec codec, const uint8_t *src, size_t src_len,
						uint8_t *dst, size_t dst_len, uint64_t claimed,
						ArrowError *err)
{
	switch (codec)
	{
		case ARROW_CODEC_LZ4_FRAME:
			return lz4_decompress_prefix(src, src_len, dst, dst_len, claimed, err);
		case ARROW_CODEC_ZSTD:
			return zstd_decompress_prefix(src, src_len, dst, dst_len, claimed, err);
		default:
			return arrow_decompress(codec, src, dst_len <= src_len ? dst_len : src_len,
									dst, dst_len, err);
	}
}

int
arrow_decompress(ArrowCodec codec, const uint8_t *src, size_t src_len,
				 uint8_t *dst, size_t dst_len, ArrowError *err)
{
	switch (codec)
	{
		case ARROW_CODEC_LZ4_FRAME:
			return lz4_decompress(src, src_len, dst, dst_len, err);
		case ARROW_CODEC_ZSTD:
			return zstd_decompress(src, src_len, dst, dst_len, err);
		case ARROW_CODEC_NONE:
			if (src_len != dst_len)
				return arrow_error(err, ARROW_ERR_CORRUPT, -1,
								   "uncompressed buffer of %zu bytes, %zu expected",
								   src_len, dst_len);
			if (dst_len > 0)
				memcpy(dst, src, dst_len);
			return 0;
		case ARROW_CODEC_PARQUET:
			break;				/* pages are decoded by src/parquet */
	}
	return arrow_error(err, ARROW_ERR_INVALID, -1, "unknown codec %d", (int) codec);
}

size_t
arrow_compress_bound(ArrowCodec codec, size_t src_len)
{
	switch (codec)
	{
		case ARROW_CODEC_LZ4_FRAME:
			return LZ4F_compressFrameBound(src_len, NULL);
		case ARROW_CODEC_ZSTD:
			return ZSTD_compressBound(src_len);
		default:
			return src_len;
	}
}

int
arrow_compress(ArrowCodec codec, int level, const uint8_t *src,
			   size_t src_len, uint8_t *dst, size_t *out_len, ArrowError *err)
{
	size_t		n;

	switch (codec)
	{
		case ARROW_CODEC_LZ4_FRAME:
			{
				LZ4F_preferences_t prefs;

				memset(&prefs, 0, sizeof(prefs));
				prefs.compressionLevel = level;
				prefs.frameInfo.contentSize = src_len;
				n = LZ4F_compressFrame(dst, LZ4F_compressFrameBound(src_len, NULL),
									   src, src_len, &prefs);
				if (LZ4F_isError(n))
					return arrow_error(err, ARROW_ERR_INVALID, -1,
									   "LZ4 compression failed: %s",
									   LZ4F_getErrorName(n));
				*out_len = n;
				return 0;
			}
		case ARROW_CODEC_ZSTD:
			n = ZSTD_compress(dst, ZSTD_compressBound(src_len), src, src_len,
							  level);
			if (ZSTD_isError(n))
				return arrow_error(err, ARROW_ERR_INVALID, -1,
								   "ZSTD compression failed: %s",
								   ZSTD_getErrorName(n));
			*out_len = n;
			return 0;
		case ARROW_CODEC_NONE:
			if (src_len > 0)
				memcpy(dst, src, src_len);
			*out_len = src_len;
			return 0;
		case ARROW_CODEC_PARQUET:
			break;				/* not a codec Arrow writes */
	}
	return arrow_error(err, ARROW_ERR_INVALID, -1, "unknown codec %d", (int) codec);
}

const char *
arrow_codec_name(ArrowCodec codec)
{
	switch (codec)
	{
		case ARROW_CODEC_LZ4_FRAME:
			return "lz4_frame";
		case ARROW_CODEC_ZSTD:
			return "zstd";
		case ARROW_CODEC_PARQUET:
			return "parquet";
		default:
			return "none";
	}
}
