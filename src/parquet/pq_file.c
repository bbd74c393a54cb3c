/*
 * pq_file.c — a Parquet file behind the ArrowFile interface: opening (the
 * trailer, the footer, the schema, checks of every row group and column
 * chunk position), row groups as record batch headers, column loads and
 * row-group statistics as per-batch statistics.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "pq_internal.h"

const uint8_t parquet_magic[PARQUET_MAGIC_LEN] = {'P', 'A', 'R', '1'};

static int
read_at(ArrowFile *file, void *dst, size_t len, uint64_t off, ArrowError *err)
{
	int			e = file->src.read(file->src.ctx, dst, len, off);

	if (e != 0)
	{
		arrow_error(err, ARROW_ERR_IO, (int64_t) off, "%s: could not read %zu bytes at offset %"
					PRIu64 ": %s", file->src.name, len, off, strerror(e));
		if (err)
			err->errno_saved = e;
		return -1;
	}
	return 0;
}

static int
check_row_group(ArrowFile *file, PqFile *pf, int rg, ArrowError *err)
{
	PqRowGroup *g = &pf->footer.row_groups[rg];
	const char *name = file->src.name;
	int64_t		lo = INT64_MAX,
				bytes = 0;

	if (g->num_rows < 0)
		return pq_corrupt(err, name, -1, "row group %d has %" PRId64 " rows", rg, g->num_rows);
	for (int li = 0; li < pf->n_leaves; li++)
	{
		PqChunk    *c = &g->chunks[li];
		const PqLeaf *leaf = &pf->leaves[li];

		if (c->external)
			return arrow_error(err, ARROW_ERR_UNSUPPORTED, -1, "%s: row group %d, column \"%s\" "
							   "is stored in another file", name, rg, leaf->path);
		if (c->type != leaf->type)
			return pq_corrupt(err, name, -1, "row group %d, column \"%s\": physical type %d, "
							  "the schema says %d", rg, leaf->path, c->type, leaf->type);
		/*
		 * A chunk has a value (or a null, or an empty list) per row: none
		 * for rows is a row count no column has, which a scan that loads
		 * no column (count(*)) would take as its row count.
		 */
		if (c->num_values == 0 && g->num_rows != 0)
			return pq_corrupt(err, name, pf->data_end, "row group %d, column \"%s\" has no "
							  "values for %" PRId64 " rows", rg, leaf->path, g->num_rows);
		if (leaf->max_rep > 0 && c->num_values < g->num_rows)
			return pq_corrupt(err, name, pf->data_end, "row group %d, column \"%s\" has %"
							  PRId64 " values for %" PRId64 " rows", rg, leaf->path,
							  c->num_values, g->num_rows);
		if (c->num_values == 0)
		{
			/* an empty chunk (empty row group): nothing is read from it */
			c->start = PARQUET_MAGIC_LEN;
			c->total_compressed = 0;
			continue;
		}
		if (c->num_values < 0 || c->total_compressed < 0 || c->data_page_offset < PARQUET_MAGIC_LEN)
			return pq_corrupt(err, name, -1, "row group %d, column \"%s\": bad chunk metadata",
							  rg, leaf->path);
		if (leaf->max_rep == 0 && c->num_values != g->num_rows)
			return pq_corrupt(err, name, pf->data_end, "row group %d, column \"%s\" has %" PRId64
							  " values for %" PRId64 " rows", rg, leaf->path, c->num_values,
							  g->num_rows);
		c->start = c->data_page_offset;
		if (c->dict_page_offset >= PARQUET_MAGIC_LEN && c->dict_page_offset < c->start)
			c->start = c->dict_page_offset;
		if (c->start > pf->data_end || c->total_compressed > pf->data_end - c->start)
			return pq_corrupt(err, name, c->start, "row group %d, column \"%s\": chunk of %"
							  PRId64 " bytes past the footer", rg, leaf->path,
							  c->total_compressed);
		if (c->start < lo)
			lo = c->start;
		bytes += c->total_compressed;
	}
	g->start = lo != INT64_MAX ? lo : PARQUET_MAGIC_LEN;
	g->bytes = bytes;
	return 0;
}

/*
 * Where batch b's bytes are: its row group's chunks, or for a part the
 * pages of each chunk that hold its rows (*off the lowest, *len their sum).
 */
static void
part_extent(const PqFile *pf, int b, int64_t *off, int64_t *len)
{
	const PqRowGroup *g = &pf->footer.row_groups[pf->batch_rg[b]];
	int			k = pf->batch_part[b];
	int64_t		lo = INT64_MAX,
				n = 0;

	if (g->n_parts == 1)
	{
		*off = g->start;
		*len = g->bytes;
		return;
	}
	for (int li = 0; li < pf->n_leaves; li++)
	{
		const PqChunk *c = &g->chunks[li];
		int			p_lo,
					p_hi;

		pq_pages_for_rows(c, g->num_rows, g->part_rows[k], g->part_rows[k + 1], &p_lo, &p_hi);
		if (c->pages[p_lo].offset < lo)
			lo = c->pages[p_lo].offset;
		n += c->pages[p_hi].offset + c->pages[p_hi].size - c->pages[p_lo].offset;
	}
	*off = lo;
	*len = n;
}

int
parquet_open(ArrowFile *file, const ArrowOpenOptions *opts, ArrowError *err)
{
	const char *name = file->src.name;
	uint64_t	size = file->src.size;
	uint8_t		tail[8];
	uint32_t	flen;
	int64_t		foff;
	uint8_t    *footer;
	PqFile	   *pf;

	if (size < 12)
		return pq_corrupt(err, name, 0, "Parquet file of %" PRIu64 " bytes is too short", size);
	if (read_at(file, tail, 8, size - 8, err) < 0)
		return -1;
	if (memcmp(tail + 4, "PARE", 4) == 0)
		return arrow_error(err, ARROW_ERR_UNSUPPORTED, (int64_t) size - 4,
						   "%s: encrypted Parquet files are not supported", name);
	if (memcmp(tail + 4, parquet_magic, 4) != 0)
		return pq_corrupt(err, name, (int64_t) size - 4, "no Parquet magic at the end "
						  "(truncated file?)");
	memcpy(&flen, tail, 4);
	if ((uint64_t) flen > size - 12)
		return pq_corrupt(err, name, (int64_t) size - 8, "footer length %u exceeds the file", flen);
	foff = (int64_t) (size - 8 - flen);
	pf = arrow_arena_alloc(&file->arena, sizeof(PqFile), err);
	footer = arrow_arena_alloc_uninit(&file->arena, (size_t) flen + 1, err);
	if (pf == NULL || footer == NULL || read_at(file, footer, flen, (uint64_t) foff, err) < 0)
		return -1;
	pf->data_end = foff;
	if (pq_parse_footer(footer, flen, foff, name, &file->arena, &pf->footer, err) < 0 ||
		pq_build_schema(pf, &file->arena, &file->schema, name, err) < 0)
		return -1;
	if (pf->footer.n_row_groups > 0 && pf->footer.n_chunks_per_rg != pf->n_leaves)
		return pq_corrupt(err, name, foff, "row groups have %d columns, the schema %d leaves",
						  pf->footer.n_chunks_per_rg, pf->n_leaves);
	for (int rg = 0; rg < pf->footer.n_row_groups; rg++)
		if (check_row_group(file, pf, rg, err) < 0)
			return -1;
	pf->bloom_rg = -1;
	pf->part_rows = opts && opts->parquet_part_rows > 0 ? opts->parquet_part_rows : PQ_PART_ROWS;
	if (pq_plan_parts(file, pf, err) < 0)
		return -1;
	file->batches = arrow_arena_alloc(&file->arena,
									  sizeof(ArrowBlock) * ((size_t) file->n_batches + 1), err);
	if (file->batches == NULL)
		return -1;
	for (int b = 0; b < file->n_batches; b++)
		part_extent(pf, b, &file->batches[b].offset, &file->batches[b].body_len);
	file->data_end = foff;
	file->footer_len = (int64_t) flen + 8;
	file->parquet = pf;
	file->format = ARROW_FORMAT_PARQUET;
	return 0;
}

/*
 * A column's key for caches keyed by byte position (the daemon's decoded
 * column cache): the chunk, or for a part the first page of it and the
 * bytes to its last page, plus the rows of that page before the part (so
 * that two parts inside one page differ).
 */
static void
part_buffer_key(const PqRowGroup *g, const PqChunk *c, int k, int64_t *off, int64_t *len)
{
	int			p_lo,
				p_hi;

	if (g->n_parts == 1)
	{
		*off = c->start;
		*len = c->total_compressed;
		return;
	}
	pq_pages_for_rows(c, g->num_rows, g->part_rows[k], g->part_rows[k + 1], &p_lo, &p_hi);
	*off = c->pages[p_lo].offset;
	*len = c->pages[p_hi].offset + c->pages[p_hi].size - c->pages[p_lo].offset +
		(g->part_rows[k] - c->pages[p_lo].first_row);
}

int
parquet_batch_meta(ArrowFile *file, int batch, ArrowArena *arena, ArrowBatchMeta *meta,
				   ArrowError *err)
{
	const PqFile *pf = file->parquet;
	const PqRowGroup *g;
	const ArrowSchema *s = &file->schema;
	int			k;

	memset(meta, 0, sizeof(*meta));
	if (pf == NULL || batch < 0 || batch >= file->n_batches)
		return arrow_error(err, ARROW_ERR_INVALID, -1, "%s: row group %d does not exist",
						   file->src.name, batch);
	g = &pf->footer.row_groups[pf->batch_rg[batch]];
	k = pf->batch_part[batch];
	meta->length = g->part_rows[k + 1] - g->part_rows[k];
	meta->n_nodes = s->n_nodes;
	meta->n_buffers = s->n_buffers;
	meta->nodes = arrow_arena_alloc(arena, sizeof(ArrowFieldNode) * ((size_t) s->n_nodes + 1), err);
	meta->buffers = arrow_arena_alloc(arena, sizeof(ArrowBufferRef) * ((size_t) s->n_buffers + 1), err);
	if (meta->nodes == NULL || meta->buffers == NULL)
		return -1;
	for (int i = 0; i < s->n_nodes; i++)
		meta->nodes[i].length = meta->nodes[i].null_count = -1;
	for (int c = 0; c < s->n_fields; c++)
	{
		const ArrowField *f = &s->fields[c];
		int			li = pf->first_leaf[c];
		const PqChunk *ch = &g->chunks[li];
		ArrowFieldNode *node = &meta->nodes[f->node_index];
		int64_t		off,
					len;

		node->length = meta->length;
		/* the row group's null count: only when the batch is all of it */
		if (g->n_parts == 1 && pf->n_leaf[c] == 1 && pf->leaves[li].field == f &&
			ch->stats.null_count >= 0 && ch->stats.null_count <= g->num_rows)
			node->null_count = ch->stats.null_count;
		part_buffer_key(g, ch, k, &off, &len);
		for (int b = 0; b < f->n_buffers_total; b++)
		{
			meta->buffers[f->buffer_index + b].offset = off + b;
			meta->buffers[f->buffer_index + b].length = len;
		}
	}
	meta->codec = ARROW_CODEC_PARQUET;
	meta->body_offset = file->batches[batch].offset;
	meta->body_len = file->batches[batch].body_len;
	return 0;
}

int
parquet_load_column(ArrowFile *file, int batch, int col, ArrowArena *arena, ArrowArray *out,
					ArrowError *err)
{
	const PqFile *pf = file->parquet;
	const PqRowGroup *g;
	ArrowArena	scratch;
	PqLeafData *ld;
	int			rc = -1,
				rg,
				first,
				n;
	int64_t		lo,
				hi;

	memset(out, 0, sizeof(*out));
	if (pf == NULL || batch < 0 || batch >= file->n_batches || col < 0 ||
		col >= file->schema.n_fields)
		return arrow_error(err, ARROW_ERR_INVALID, -1, "%s: row group %d, column %d does not exist",
						   file->src.name, batch, col);
	rg = pf->batch_rg[batch];
	g = &pf->footer.row_groups[rg];
	lo = g->part_rows[pf->batch_part[batch]];
	hi = g->part_rows[pf->batch_part[batch] + 1];
	first = pf->first_leaf[col];
	n = pf->n_leaf[col];
	arrow_arena_init(&scratch, arena->allocator);
	ld = arrow_arena_alloc(&scratch, sizeof(PqLeafData) * ((size_t) n + 1), err);
	if (ld == NULL)
		goto done;
	for (int i = 0; i < n; i++)
	{
		int64_t		row0;

		if (pq_read_chunk_rows(file, pf, rg, first + i, lo, hi, &scratch, &ld[i], &row0, err) < 0)
			goto done;
		if (g->n_parts > 1)
		{
			char		name[700];

			snprintf(name, sizeof(name), "%s: row group %d, column \"%s\"", file->src.name, rg,
					 pf->leaves[first + i].path);
			if (pq_trim_rows(&ld[i], &pf->leaves[first + i], lo - row0, hi - lo, &scratch, name,
							 err) < 0)
				goto done;
		}
	}
	if (pq_assemble(file, pf, rg, col, ld, hi - lo, arena, out, err) < 0)
		goto done;
	/* the statistics' null count must agree: batch metadata hands it out */
	if (n == 1 && g->n_parts == 1 && pf->leaves[first].field == &file->schema.fields[col])
	{
		int64_t		nc = g->chunks[first].stats.null_count;

		if (nc >= 0 && nc <= out->length && nc != out->null_count)
		{
			pq_corrupt(err, file->src.name, g->chunks[first].start,
					   "row group %d, column \"%s\": statistics say %" PRId64 " nulls, the data "
					   "has %" PRId64, rg, pf->leaves[first].path, nc, out->null_count);
			goto done;
		}
	}
	rc = 0;
done:
	arrow_arena_free_all(&scratch);
	if (rc < 0)
	{
		memset(out, 0, sizeof(*out));
		/* allocation errors come from the arena, which knows no file */
		if (err != NULL && strstr(err->msg, file->src.name) == NULL)
		{
			char		msg[sizeof(err->msg)];
			int64_t		at = pf->footer.row_groups[batch].chunks[first].start;

			memcpy(msg, err->msg, sizeof(msg));
			msg[sizeof(msg) - 1] = '\0';
			arrow_error(err, err->code, at, "%s: row group %d, column \"%s\" (chunk at offset %"
						PRId64 "): %s", file->src.name, batch, file->schema.fields[col].name,
						at, msg);
		}
	}
	return rc;
}

/* a statistics value of leaf as the storage integer (or double) */
bool
pq_stat_value(const PqLeaf *leaf, const uint8_t *p, uint32_t len, ArrowStatValue *v)
{
	int32_t		i32;
	int64_t		i64;

	memset(v, 0, sizeof(*v));
	switch (leaf->type)
	{
		case PQ_INT32:
			if (len != 4)
				return false;
			memcpy(&i32, p, 4);
			v->i = leaf->unsigned_int ? (__int128) (uint32_t) i32 : (__int128) i32;
			break;
		case PQ_INT64:
			if (len != 8)
				return false;
			memcpy(&i64, p, 8);
			v->i = leaf->unsigned_int ? (__int128) (uint64_t) i64 : (__int128) i64;
			break;
		case PQ_FLOAT:
			{
				float		f;

				if (len != 4)
					return false;
				memcpy(&f, p, 4);
				v->d = f;
				v->is_float = true;
				break;
			}
		case PQ_DOUBLE:
			if (len != 8)
				return false;
			memcpy(&v->d, p, 8);
			v->is_float = true;
			break;
		case PQ_BYTE_ARRAY:
		case PQ_FIXED_LEN_BYTE_ARRAY:
			{
				unsigned __int128 u;
				uint8_t		sign;

				if (leaf->conv != PQ_CONV_DECBYTES || len < 1 || len > 16)
					return false;
				sign = (p[0] & 0x80) ? 0xff : 0;
				u = sign ? ~(unsigned __int128) 0 : 0;
				for (uint32_t k = 0; k < len; k++)
					u = (u << 8) | p[k];
				v->i = (__int128) u;
				break;
			}
		default:
			return false;
	}
	if (v->is_float && isnan(v->d))
		return false;
	v->present = true;
	return true;
}

static bool
stats_usable(const PqLeaf *leaf)
{
	switch (leaf->conv)
	{
		case PQ_CONV_COPY4:
		case PQ_CONV_COPY8:
		case PQ_CONV_I8:
		case PQ_CONV_I16:
		case PQ_CONV_U8:
		case PQ_CONV_U16:
		case PQ_CONV_DEC32:
		case PQ_CONV_DEC64:
		case PQ_CONV_DECBYTES:
			return true;
		default:
			return false;
	}
}

bool
parquet_field_stats(const ArrowFile *file, int col, ArrowArena *arena, ArrowStatValue **mins,
					ArrowStatValue **maxs)
{
	const PqFile *pf = file->parquet;
	const PqLeaf *leaf;
	size_t		sz;

	*mins = *maxs = NULL;
	if (pf == NULL || col < 0 || col >= file->schema.n_fields || pf->n_leaf[col] != 1)
		return false;
	leaf = &pf->leaves[pf->first_leaf[col]];
	if (leaf->field != &file->schema.fields[col] || !stats_usable(leaf))
		return false;
	sz = sizeof(ArrowStatValue) * ((size_t) file->n_batches + 1);
	*mins = arrow_arena_alloc(arena, sz, NULL);
	*maxs = arrow_arena_alloc(arena, sz, NULL);
	if (*mins == NULL || *maxs == NULL)
		return false;
	for (int b = 0; b < file->n_batches; b++)
	{
		const PqStats *st = &pf->footer.row_groups[pf->batch_rg[b]].chunks[pf->first_leaf[col]].stats;
		ArrowStatValue lo,
					hi;

		if (!st->has_min || !st->has_max)
			continue;
		/* the deprecated fields compare signed: not for unsigned or bytes */
		if (st->legacy && (leaf->unsigned_int || leaf->type == PQ_BYTE_ARRAY ||
						   leaf->type == PQ_FIXED_LEN_BYTE_ARRAY))
			continue;
		if (!pq_stat_value(leaf, st->min, st->min_len, &lo) ||
			!pq_stat_value(leaf, st->max, st->max_len, &hi))
			continue;
		if (lo.is_float && lo.d == 0)
			lo.d = -0.0;
		if (hi.is_float && hi.d == 0)
			hi.d = 0.0;
		(*mins)[b] = lo;
		(*maxs)[b] = hi;
	}
	/* parts of a row group: their pages' min/max from the ColumnIndex */
	for (int rg = 0; rg < pf->footer.n_row_groups; rg++)
		if (pf->footer.row_groups[rg].n_parts > 1)
			pq_part_stats(file, pf, rg, pf->first_leaf[col], arena, *mins, *maxs);
	return true;
}

const char *
parquet_file_codec(const ArrowFile *file)
{
	const PqFile *pf = file->parquet;

	if (pf == NULL || pf->footer.n_row_groups == 0 || pf->n_leaves == 0)
		return "none";
	return pq_codec_name(pf->footer.row_groups[0].chunks[0].codec);
}

int
parquet_row_groups(const ArrowFile *file)
{
	const PqFile *pf = file->parquet;

	return pf ? pf->footer.n_row_groups : 0;
}
