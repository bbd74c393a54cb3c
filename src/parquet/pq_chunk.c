/*
 * pq_chunk.c — the pages of one column chunk: page headers, decompression,
 * the dictionary page, repetition and definition levels (RLE) and the
 * values of data pages v1 and v2, into one PqLeafData.
 */
#include <inttypes.h>
#include <stdio.h>

#include "pq_internal.h"
#include "arrow_read_internal.h"

typedef struct ChunkCx
{
	ArrowFile  *file;
	const PqLeaf *leaf;
	const PqChunk *chunk;
	const uint8_t *bytes;		/* the chunk */
	int64_t		len;
	ArrowArena *scratch;
	ArrowError *err;
	char		name[700];		/* "file: column \"a.b\"" */
	PqValues	dict;
	bool		has_dict;
} ChunkCx;

static int
physical_width(const PqLeaf *leaf)
{
	switch (leaf->type)
	{
		case PQ_BOOLEAN:
			return 1;
		case PQ_INT32:
		case PQ_FLOAT:
			return 4;
		case PQ_INT64:
		case PQ_DOUBLE:
			return 8;
		case PQ_INT96:
			return 12;
		case PQ_FIXED_LEN_BYTE_ARRAY:
			return leaf->type_length;
		default:
			return 0;
	}
}

/* the page body, decompressed (or in place when stored plain) */
static int
page_body(ChunkCx *cx, const uint8_t *src, int32_t src_len, int32_t raw_len, bool compressed,
		  int64_t page_off, const uint8_t **out)
{
	uint8_t    *dst;

	if (!compressed || cx->chunk->codec == 0)
	{
		if (src_len != raw_len)
			return pq_corrupt(cx->err, cx->name, page_off,
							  "uncompressed page of %d bytes declares %d", src_len, raw_len);
		*out = src;
		return 0;
	}
	if ((dst = arrow_arena_alloc_uninit(cx->scratch, (size_t) raw_len + 1, cx->err)) == NULL)
		return -1;
	if (pq_decompress(cx->chunk->codec, src, (size_t) src_len, dst, (size_t) raw_len, cx->err) < 0)
	{
		char		where[800];

		snprintf(where, sizeof(where), "%s: page at offset %" PRId64, cx->name, page_off);
		if (cx->err)
			cx->err->offset = page_off;
		arrow_error_prefix(cx->err, where);
		return -1;
	}
	*out = dst;
	return 0;
}

static int
decode_levels(ChunkCx *cx, const uint8_t *p, size_t len, int max, int64_t n, uint8_t *out,
			  int64_t off)
{
	if (pq_rle_decode(p, len, pq_bit_width((uint32_t) max), n, out, NULL, off, cx->name,
					  cx->err) < 0)
		return -1;
	for (int64_t i = 0; i < n; i++)
		if (out[i] > max)
			return pq_corrupt(cx->err, cx->name, off, "level %d above the maximum %d",
							  out[i], max);
	return 0;
}

/* v1 levels: 4-byte length, then RLE; advances p and len */
static int
levels_v1(ChunkCx *cx, const uint8_t **p, size_t *len, int enc, int max, int64_t n,
		  uint8_t *out, int64_t page_off)
{
	uint32_t	l;

	if (enc != PQ_ENC_RLE)
		return arrow_error(cx->err, ARROW_ERR_UNSUPPORTED, page_off,
						   "%s: level encoding %d is not supported (page at offset %" PRId64 ")",
						   cx->name, enc, page_off);
	if (*len < 4)
		return pq_corrupt(cx->err, cx->name, page_off, "level length missing in the page");
	memcpy(&l, *p, 4);
	if (l > *len - 4)
		return pq_corrupt(cx->err, cx->name, page_off, "levels of %u bytes past the page end", l);
	if (decode_levels(cx, *p + 4, l, max, n, out, -1) < 0)
		return -1;
	*p += 4 + l;
	*len -= 4 + l;
	return 0;
}

static int
dictionary_page(ChunkCx *cx, const PqPageHeader *h, const uint8_t *body, int64_t page_off,
				int64_t got)
{
	const uint8_t *page;
	PqDecodeCtx dc = {cx->leaf, cx->file->src.name, -1, page_off, cx->scratch, cx->err, NULL};

	if (cx->has_dict || got > 0)
		return pq_corrupt(cx->err, cx->name, page_off, "dictionary page after other pages");
	if (h->encoding != PQ_ENC_PLAIN && h->encoding != PQ_ENC_PLAIN_DICTIONARY)
		return pq_corrupt(cx->err, cx->name, page_off, "dictionary page encoding %d", h->encoding);
	if (page_body(cx, body, h->compressed_size, h->uncompressed_size, true, page_off, &page) < 0)
		return -1;
	memset(&cx->dict, 0, sizeof(cx->dict));
	cx->dict.width = physical_width(cx->leaf);
	if (pq_decode_values(&dc, PQ_ENC_PLAIN, page, (size_t) h->uncompressed_size,
						 h->num_values, &cx->dict) < 0)
		return -1;
	cx->has_dict = true;
	return 0;
}

static int
data_page(ChunkCx *cx, const PqPageHeader *h, const uint8_t *body, int64_t page_off,
		  PqLeafData *out, int64_t got)
{
	const PqLeaf *leaf = cx->leaf;
	int64_t		n = h->num_values,
				nn = n;
	const uint8_t *vals;
	size_t		vlen;
	uint8_t    *def = out->def ? out->def + got : NULL;
	uint8_t    *rep = out->rep ? out->rep + got : NULL;
	PqDecodeCtx dc = {leaf, cx->file->src.name, -1, page_off, cx->scratch, cx->err,
	cx->has_dict ? &cx->dict : NULL};

	if (h->type == PQ_PAGE_DATA)
	{
		if (page_body(cx, body, h->compressed_size, h->uncompressed_size, true, page_off, &vals) < 0)
			return -1;
		vlen = (size_t) h->uncompressed_size;
		if (rep && levels_v1(cx, &vals, &vlen, h->rep_encoding, leaf->max_rep, n, rep, page_off) < 0)
			return -1;
		if (def && levels_v1(cx, &vals, &vlen, h->def_encoding, leaf->max_def, n, def, page_off) < 0)
			return -1;
	}
	else
	{
		int32_t		lv = h->rep_len + h->def_len;

		if (rep && decode_levels(cx, body, (size_t) h->rep_len, leaf->max_rep, n, rep,
								 page_off) < 0)
			return -1;
		if (def && decode_levels(cx, body + h->rep_len, (size_t) h->def_len, leaf->max_def, n,
								 def, page_off) < 0)
			return -1;
		if (page_body(cx, body + lv, h->compressed_size - lv, h->uncompressed_size - lv,
					  h->is_compressed, page_off, &vals) < 0)
			return -1;
		vlen = (size_t) (h->uncompressed_size - lv);
	}
	if (def)
	{
		nn = 0;
		for (int64_t i = 0; i < n; i++)
			nn += def[i] == leaf->max_def;
	}
	if (leaf->conv == PQ_CONV_NULL)
		return nn == 0 ? 0 : pq_corrupt(cx->err, cx->name, page_off,
										"a column of the null type has values");
	return pq_decode_values(&dc, h->encoding, vals, vlen, nn, &out->vals);
}

static int
chunk_bytes(ChunkCx *cx)
{
	const ArrowSource *src = &cx->file->src;
	uint8_t    *buf;
	int			e;

	if (src->map != NULL)
	{
		cx->bytes = src->map + cx->chunk->start;
		arrow_src_count_mapped(src, (uint64_t) cx->len);
		return 0;
	}
	if ((buf = arrow_arena_alloc_uninit(cx->scratch, (size_t) cx->len + 1, cx->err)) == NULL)
		return -1;
	if ((e = src->read(src->ctx, buf, (size_t) cx->len, (uint64_t) cx->chunk->start)) != 0)
	{
		arrow_error(cx->err, ARROW_ERR_IO, cx->chunk->start, "%s: could not read %" PRId64
					" bytes at offset %" PRId64 ": %s", cx->name, cx->len, cx->chunk->start,
					strerror(e));
		if (cx->err)
			cx->err->errno_saved = e;
		return -1;
	}
	cx->bytes = buf;
	return 0;
}

int
pq_read_chunk(ArrowFile *file, const PqFile *pf, int rg, int li, ArrowArena *scratch,
			  PqLeafData *out, ArrowError *err)
{
	ChunkCx		cx;
	const PqChunk *c = &pf->footer.row_groups[rg].chunks[li];
	int64_t		total = c->num_values,
				got = 0,
				pos = 0;

	memset(&cx, 0, sizeof(cx));
	memset(out, 0, sizeof(*out));
	cx.file = file;
	cx.leaf = &pf->leaves[li];
	cx.chunk = c;
	cx.len = c->total_compressed;
	cx.scratch = scratch;
	cx.err = err;
	snprintf(cx.name, sizeof(cx.name), "%s: row group %d, column \"%s\"", file->src.name, rg,
			 cx.leaf->path);
	out->vals.width = physical_width(cx.leaf);
	if (cx.leaf->max_def > 0 && (out->def = arrow_arena_alloc_uninit(scratch, (size_t) total + 1, err)) == NULL)
		return -1;
	if (cx.leaf->max_rep > 0 && (out->rep = arrow_arena_alloc_uninit(scratch, (size_t) total + 1, err)) == NULL)
		return -1;
	if (chunk_bytes(&cx) < 0)
		return -1;
	while (got < total)
	{
		PqPageHeader h;
		size_t		hl;
		int64_t		page_off = c->start + pos;
		const uint8_t *body;

		if (pos >= cx.len)
			return pq_corrupt(err, cx.name, page_off, "column chunk ends after %" PRId64
							  " of its %" PRId64 " values", got, total);
		if (pq_parse_page_header(cx.bytes + pos, (size_t) (cx.len - pos), page_off, cx.name,
								 &h, &hl, err) < 0)
			return -1;
		if (h.compressed_size > cx.len - pos - (int64_t) hl)
			return pq_corrupt(err, cx.name, page_off, "page of %d bytes past the chunk end",
							  h.compressed_size);
		body = cx.bytes + pos + hl;
		if (h.type == PQ_PAGE_DICTIONARY)
		{
			if (dictionary_page(&cx, &h, body, page_off, got) < 0)
				return -1;
		}
		else if (h.type == PQ_PAGE_DATA || h.type == PQ_PAGE_DATA_V2)
		{
			if (h.num_values > total - got)
				return pq_corrupt(err, cx.name, page_off, "page of %d values, the chunk has %"
								  PRId64 " left", h.num_values, total - got);
			if (data_page(&cx, &h, body, page_off, out, got) < 0)
				return -1;
			got += h.num_values;
		}
		pos += (int64_t) hl + h.compressed_size;
	}
	out->n_levels = total;
	return 0;
}
