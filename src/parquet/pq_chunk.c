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
	int64_t		dict_end;		/* pages read by OffsetIndex: the
								 * dictionary page lies in [chunk start,
								 * dict_end), read when a page needs it */
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

static int	load_dictionary(ChunkCx *cx);

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
	PqDecodeCtx dc = {leaf, cx->file->src.name, -1, page_off, cx->scratch, cx->err, NULL};

	if (!cx->has_dict && cx->dict_end > cx->chunk->start &&
		(h->encoding == PQ_ENC_PLAIN_DICTIONARY || h->encoding == PQ_ENC_RLE_DICTIONARY) &&
		load_dictionary(cx) < 0)
		return -1;
	dc.dict = cx->has_dict ? &cx->dict : NULL;
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

/* bytes [off, off + len) of the file: in the mapping, or read into scratch */
static int
file_bytes(ChunkCx *cx, int64_t off, int64_t len, const uint8_t **out)
{
	const ArrowSource *src = &cx->file->src;
	uint8_t    *buf;
	int			e;

	if (src->map != NULL)
	{
		*out = src->map + off;
		arrow_src_count_mapped(src, (uint64_t) len);
		return 0;
	}
	if ((buf = arrow_arena_alloc_uninit(cx->scratch, (size_t) len + 1, cx->err)) == NULL)
		return -1;
	if ((e = src->read(src->ctx, buf, (size_t) len, (uint64_t) off)) != 0)
	{
		arrow_error(cx->err, ARROW_ERR_IO, off, "%s: could not read %" PRId64
					" bytes at offset %" PRId64 ": %s", cx->name, len, off, strerror(e));
		if (cx->err)
			cx->err->errno_saved = e;
		return -1;
	}
	*out = buf;
	return 0;
}

/* the dictionary page before the first data page (OffsetIndex reads) */
static int
load_dictionary(ChunkCx *cx)
{
	const uint8_t *p;
	int64_t		len = cx->dict_end - cx->chunk->start;
	PqPageHeader h;
	size_t		hl;

	if (file_bytes(cx, cx->chunk->start, len, &p) < 0 ||
		pq_parse_page_header(p, (size_t) len, cx->chunk->start, cx->name, &h, &hl, cx->err) < 0)
		return -1;
	if (h.type != PQ_PAGE_DICTIONARY)
		return pq_corrupt(cx->err, cx->name, cx->chunk->start, "a dictionary encoded page, "
						  "no dictionary page before the first data page");
	if (h.compressed_size > len - (int64_t) hl)
		return pq_corrupt(cx->err, cx->name, cx->chunk->start,
						  "dictionary page of %d bytes past the first data page", h.compressed_size);
	return dictionary_page(cx, &h, p + hl, cx->chunk->start, 0);
}

static void
chunk_cx_init(ChunkCx *cx, ArrowFile *file, const PqFile *pf, int rg, int li,
			  ArrowArena *scratch, ArrowError *err)
{
	memset(cx, 0, sizeof(*cx));
	cx->file = file;
	cx->leaf = &pf->leaves[li];
	cx->chunk = &pf->footer.row_groups[rg].chunks[li];
	cx->len = cx->chunk->total_compressed;
	cx->scratch = scratch;
	cx->err = err;
	snprintf(cx->name, sizeof(cx->name), "%s: row group %d, column \"%s\"", file->src.name, rg,
			 cx->leaf->path);
}

static int
alloc_levels(ChunkCx *cx, PqLeafData *out, int64_t n)
{
	memset(out, 0, sizeof(*out));
	out->vals.width = physical_width(cx->leaf);
	if (cx->leaf->max_def > 0 &&
		(out->def = arrow_arena_alloc_uninit(cx->scratch, (size_t) n + 1, cx->err)) == NULL)
		return -1;
	if (cx->leaf->max_rep > 0 &&
		(out->rep = arrow_arena_alloc_uninit(cx->scratch, (size_t) n + 1, cx->err)) == NULL)
		return -1;
	return 0;
}

/* every page of the chunk, in order */
static int
read_whole_chunk(ChunkCx *cx, PqLeafData *out)
{
	const PqChunk *c = cx->chunk;
	int64_t		total = c->num_values,
				got = 0,
				pos = 0;
	ArrowError *err = cx->err;

	if (alloc_levels(cx, out, total) < 0 || file_bytes(cx, c->start, cx->len, &cx->bytes) < 0)
		return -1;
	while (got < total)
	{
		PqPageHeader h;
		size_t		hl;
		int64_t		page_off = c->start + pos;
		const uint8_t *body;

		if (pos >= cx->len)
			return pq_corrupt(err, cx->name, page_off, "column chunk ends after %" PRId64
							  " of its %" PRId64 " values", got, total);
		if (pq_parse_page_header(cx->bytes + pos, (size_t) (cx->len - pos), page_off, cx->name,
								 &h, &hl, err) < 0)
			return -1;
		if (h.compressed_size > cx->len - pos - (int64_t) hl)
			return pq_corrupt(err, cx->name, page_off, "page of %d bytes past the chunk end",
							  h.compressed_size);
		body = cx->bytes + pos + hl;
		if (h.type == PQ_PAGE_DICTIONARY)
		{
			if (dictionary_page(cx, &h, body, page_off, got) < 0)
				return -1;
		}
		else if (h.type == PQ_PAGE_DATA || h.type == PQ_PAGE_DATA_V2)
		{
			if (h.num_values > total - got)
				return pq_corrupt(err, cx->name, page_off, "page of %d values, the chunk has %"
								  PRId64 " left", h.num_values, total - got);
			if (data_page(cx, &h, body, page_off, out, got) < 0)
				return -1;
			got += h.num_values;
		}
		pos += (int64_t) hl + h.compressed_size;
	}
	out->n_levels = total;
	return 0;
}

/*
 * Data pages p_lo..p_hi of the OffsetIndex, each where the index says; the
 * dictionary page is read only if one of them needs it.  A page holds the
 * levels of whole rows; without repetition its value count is its rows.
 */
static int
read_indexed_pages(ChunkCx *cx, int64_t rg_rows, int p_lo, int p_hi, PqLeafData *out)
{
	const PqChunk *c = cx->chunk;
	int64_t		span = c->pages[p_hi].offset + c->pages[p_hi].size - c->pages[p_lo].offset,
				got = 0;
	ArrowError *err = cx->err;

	cx->dict_end = c->pages[0].offset;
	if (alloc_levels(cx, out, c->num_values) < 0 ||
		file_bytes(cx, c->pages[p_lo].offset, span, &cx->bytes) < 0)
		return -1;
	for (int p = p_lo; p <= p_hi; p++)
	{
		const PqPageLoc *loc = &c->pages[p];
		const uint8_t *at = cx->bytes + (loc->offset - c->pages[p_lo].offset);
		int64_t		rows = pq_page_end_row(c, p, rg_rows) - loc->first_row;
		PqPageHeader h;
		size_t		hl;

		if (pq_parse_page_header(at, (size_t) loc->size, loc->offset, cx->name, &h, &hl, err) < 0)
			return -1;
		if (h.type != PQ_PAGE_DATA && h.type != PQ_PAGE_DATA_V2)
			return pq_corrupt(err, cx->name, loc->offset, "the OffsetIndex names a page of "
							  "type %d", h.type);
		if (h.compressed_size != loc->size - (int64_t) hl)
			return pq_corrupt(err, cx->name, loc->offset, "page of %d bytes, the OffsetIndex "
							  "says %d with its header", h.compressed_size, loc->size);
		if (h.num_values > c->num_values - got ||
			(cx->leaf->max_rep == 0 && h.num_values != rows))
			return pq_corrupt(err, cx->name, loc->offset, "page of %d values for %" PRId64
							  " rows", h.num_values, rows);
		if (data_page(cx, &h, at + hl, loc->offset, out, got) < 0)
			return -1;
		got += h.num_values;
	}
	out->n_levels = got;
	return 0;
}

int
pq_read_chunk_rows(ArrowFile *file, const PqFile *pf, int rg, int li, int64_t lo, int64_t hi,
				   ArrowArena *scratch, PqLeafData *out, int64_t *row0, ArrowError *err)
{
	ChunkCx		cx;
	int64_t		rows = pf->footer.row_groups[rg].num_rows;
	int			p_lo,
				p_hi;

	chunk_cx_init(&cx, file, pf, rg, li, scratch, err);
	*row0 = 0;
	if (cx.chunk->n_pages == 0 || (lo == 0 && hi == rows))
		return read_whole_chunk(&cx, out);
	pq_pages_for_rows(cx.chunk, rows, lo, hi, &p_lo, &p_hi);
	*row0 = cx.chunk->pages[p_lo].first_row;
	return read_indexed_pages(&cx, rows, p_lo, p_hi, out);
}

/* first level index of row `row` (rows begin at repetition level 0) */
static int64_t
level_of_row(const PqLeafData *L, int64_t row)
{
	int64_t		r = -1;

	if (L->rep == NULL)
		return row <= L->n_levels ? row : -1;
	for (int64_t i = 0; i < L->n_levels; i++)
		if (L->rep[i] == 0 && ++r == row)
			return i;
	return r + 1 == row ? L->n_levels : -1;
}

static int64_t
values_before(const PqLeafData *L, const PqLeaf *leaf, int64_t level)
{
	int64_t		n = 0;

	if (L->def == NULL)
		return level;
	for (int64_t i = 0; i < level; i++)
		n += L->def[i] == leaf->max_def;
	return n;
}

int
pq_trim_rows(PqLeafData *L, const PqLeaf *leaf, int64_t skip, int64_t keep,
			 ArrowArena *scratch, const char *name, ArrowError *err)
{
	int64_t		ls = level_of_row(L, skip),
				le = level_of_row(L, skip + keep),
				vs,
				ve;
	PqValues   *v = &L->vals;

	if (ls < 0 || le < 0 || ls > le)
		return pq_corrupt(err, name, -1, "pages hold fewer rows than the OffsetIndex says");
	if (ls == 0 && le == L->n_levels)
		return 0;
	vs = values_before(L, leaf, ls);
	ve = vs + (L->def == NULL ? le - ls : 0);
	if (L->def != NULL)
		for (int64_t i = ls; i < le; i++)
			ve += L->def[i] == leaf->max_def;
	if (ve > v->n)
		return pq_corrupt(err, name, -1, "fewer values than levels");
	if (L->def)
		L->def += ls;
	if (L->rep)
		L->rep += ls;
	L->n_levels = le - ls;
	if (v->width > 0)
	{
		v->fixed.p += vs * v->width;
		v->fixed.len = v->fixed.cap = (ve - vs) * v->width;
	}
	else if (leaf->conv != PQ_CONV_NULL && ve > vs)
	{
		const int64_t *offs = (const int64_t *) v->offs.p;
		int64_t		base = vs == 0 ? 0 : offs[vs - 1];
		int64_t    *no = arrow_arena_alloc_uninit(scratch, sizeof(int64_t) * (size_t) (ve - vs) + 1,
												  err);

		if (no == NULL)
			return -1;
		for (int64_t i = vs; i < ve; i++)
			no[i - vs] = offs[i] - base;
		v->offs.p = (uint8_t *) no;
		v->offs.len = v->offs.cap = (ve - vs) * 8;
		v->data.p += base;
		v->data.len = v->data.cap = no[ve - vs - 1];
	}
	v->n = ve - vs;
	return 0;
}
