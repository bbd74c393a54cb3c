/*
 * pq_pageindex.c — the Parquet page index: OffsetIndex (where each data
 * page of a column chunk is and which row it starts at) and ColumnIndex
 * (each page's min/max and whether it is all nulls).
 *
 * A big row group is presented as several record batches ("parts") when
 * every column chunk of it has an OffsetIndex: each part is a range of rows
 * that begins where pages of as many columns as possible begin, of at least
 * PQ_PART_ROWS rows.  Loading a column of a part decodes only the pages
 * overlapping its rows (pq_chunk.c); the ColumnIndex gives each part the
 * min/max of those pages, so batch skipping skips the parts whose pages
 * exclude the quals -- page-level skipping, with every consumer of
 * ArrowFile unchanged.  Files without a page index keep one batch per row
 * group.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "pq_internal.h"

static int
read_at(const ArrowFile *file, void *dst, size_t len, int64_t off, ArrowError *err)
{
	int			e = file->src.read(file->src.ctx, dst, len, (uint64_t) off);

	if (e != 0)
	{
		arrow_error(err, ARROW_ERR_IO, off, "%s: could not read %zu bytes at offset %" PRId64
					": %s", file->src.name, len, off, strerror(e));
		if (err)
			err->errno_saved = e;
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------ OffsetIndex */

typedef struct LocArg
{
	PqPageLoc  *loc;
	bool		has_off,
				has_size,
				has_row;
} LocArg;

static int
loc_field(PqThrift *t, int16_t id, int type, void *arg)
{
	LocArg	   *a = arg;

	switch (id)
	{
		case 1:
			a->has_off = true;
			return pq_thrift_i64(t, type, &a->loc->offset);
		case 2:
			a->has_size = true;
			return pq_thrift_i32(t, type, &a->loc->size);
		case 3:
			a->has_row = true;
			return pq_thrift_i64(t, type, &a->loc->first_row);
		default:
			return 1;
	}
}

typedef struct OffsetIndexArg
{
	PqChunk    *c;
	ArrowArena *arena;
} OffsetIndexArg;

static int
offset_index_field(PqThrift *t, int16_t id, int type, void *arg)
{
	OffsetIndexArg *a = arg;
	int			et;
	int32_t		n;

	if (id != 1)
		return 1;
	if (pq_thrift_list(t, type, &et, &n) < 0)
		return -1;
	if (et != PQ_T_STRUCT || n < 1)
		return pq_thrift_fail(t, "OffsetIndex without page locations");
	a->c->pages = arrow_arena_alloc(a->arena, sizeof(PqPageLoc) * ((size_t) n + 1), t->err);
	if (a->c->pages == NULL)
		return -1;
	for (int i = 0; i < n; i++)
	{
		LocArg		la = {&a->c->pages[i], false, false, false};

		if (pq_thrift_struct(t, et, loc_field, &la) < 0)
			return -1;
		if (!la.has_off || !la.has_size || !la.has_row)
			return pq_thrift_fail(t, "page location %d incomplete", i);
	}
	a->c->n_pages = n;
	return 0;
}

/* the OffsetIndex of chunk c, whose bytes are at buf (file offset off) */
static int
parse_offset_index(ArrowFile *file, PqFile *pf, int rg, int li, const uint8_t *buf,
				   ArrowError *err)
{
	PqChunk    *c = &pf->footer.row_groups[rg].chunks[li];
	int64_t		rows = pf->footer.row_groups[rg].num_rows;
	int64_t		end = c->start + c->total_compressed;
	OffsetIndexArg a = {c, &file->arena};
	PqThrift	t;
	char		name[700];

	snprintf(name, sizeof(name), "%s: row group %d, column \"%s\": OffsetIndex",
			 file->src.name, rg, pf->leaves[li].path);
	pq_thrift_init(&t, buf, (size_t) c->oi_length, c->oi_offset, name, "OffsetIndex", err);
	c->n_pages = 0;
	if (pq_thrift_struct(&t, PQ_T_STRUCT, offset_index_field, &a) < 0)
		return -1;
	if (c->n_pages == 0)
		return pq_corrupt(err, name, c->oi_offset, "no page locations");
	for (int i = 0; i < c->n_pages; i++)
	{
		const PqPageLoc *p = &c->pages[i];
		int64_t		lo = i == 0 ? c->start : c->pages[i - 1].offset + c->pages[i - 1].size;

		if (p->size <= 0 || p->offset < lo || p->offset > end || p->size > end - p->offset)
			return pq_corrupt(err, name, c->oi_offset, "page %d at offset %" PRId64 " (%d bytes) "
							  "outside its column chunk or overlapping", i, p->offset, p->size);
		if ((i == 0 && p->first_row != 0) ||
			(i > 0 && p->first_row <= c->pages[i - 1].first_row) || p->first_row >= rows)
			return pq_corrupt(err, name, c->oi_offset, "page %d starts at row %" PRId64
							  " (row group of %" PRId64 " rows)", i, p->first_row, rows);
	}
	return 0;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a,
				y = *(const int64_t *) b;

	return x < y ? -1 : x > y;
}

/*
 * Cut row group g into parts: from each part's start, the part ends at the
 * page start in [start + part_rows, start + 2 * part_rows) shared by the
 * most columns (the earliest of equals), so that few pages are decoded by
 * two parts; the last part takes what is left when less than part_rows
 * would remain.
 */
static int
cut_row_group(PqFile *pf, PqRowGroup *g, ArrowArena *arena, ArrowError *err)
{
	int64_t		n = 0,
				k = 0,
				start = 0;
	int64_t    *starts;
	int			parts = 0;

	for (int li = 0; li < pf->n_leaves; li++)
		n += g->chunks[li].n_pages;
	starts = malloc(sizeof(int64_t) * ((size_t) n + 1));
	/* every cut is at a distinct page start: at most n + 1 parts */
	g->part_rows = arrow_arena_alloc(arena, sizeof(int64_t) * ((size_t) n + 2), err);
	if (starts == NULL || g->part_rows == NULL)
	{
		free(starts);
		return starts == NULL ? arrow_error(err, ARROW_ERR_NOMEM, -1, "out of memory") : -1;
	}
	for (int li = 0; li < pf->n_leaves; li++)
		for (int p = 0; p < g->chunks[li].n_pages; p++)
			starts[k++] = g->chunks[li].pages[p].first_row;
	qsort(starts, (size_t) n, sizeof(int64_t), cmp_i64);
	g->part_rows[parts++] = 0;
	k = 0;
	while (g->num_rows - start >= 2 * pf->part_rows)
	{
		int64_t		best = -1,
					best_count = 0;

		while (k < n && starts[k] < start + pf->part_rows)
			k++;
		for (int64_t j = k; j < n && starts[j] < start + 2 * pf->part_rows;)
		{
			int64_t		r = starts[j],
						cnt = 0;

			while (j < n && starts[j] == r)
				j++, cnt++;
			if (cnt > best_count)
				best = r, best_count = cnt;
		}
		if (best < 0)
			break;				/* no page starts there: the rest is one part */
		start = best;
		g->part_rows[parts++] = start;
	}
	g->part_rows[parts] = g->num_rows;
	g->n_parts = parts;
	free(starts);
	return 0;
}

/* whether every chunk of row group g has an OffsetIndex worth reading */
static bool
row_group_indexed(const PqFile *pf, const PqRowGroup *g)
{
	if (g->num_rows < 2 * pf->part_rows)
		return false;
	for (int li = 0; li < pf->n_leaves; li++)
	{
		const PqChunk *c = &g->chunks[li];

		if (c->num_values == 0 || c->oi_offset < PARQUET_MAGIC_LEN || c->oi_length <= 0)
			return false;
	}
	return true;
}

/* read and check the OffsetIndexes of row group rg (one read for all) */
static int
read_row_group_index(ArrowFile *file, PqFile *pf, int rg, ArrowError *err)
{
	PqRowGroup *g = &pf->footer.row_groups[rg];
	int64_t		lo = INT64_MAX,
				hi = 0;
	uint8_t    *buf;
	ArrowArena	scratch;
	int			rc = -1;

	for (int li = 0; li < pf->n_leaves; li++)
	{
		const PqChunk *c = &g->chunks[li];

		if (c->oi_offset > pf->data_end || c->oi_length > pf->data_end - c->oi_offset)
			return pq_corrupt(err, file->src.name, c->oi_offset, "row group %d, column \"%s\": "
							  "OffsetIndex of %d bytes past the footer", rg,
							  pf->leaves[li].path, c->oi_length);
		if (c->oi_offset < lo)
			lo = c->oi_offset;
		if (c->oi_offset + c->oi_length > hi)
			hi = c->oi_offset + c->oi_length;
	}
	arrow_arena_init(&scratch, file->arena.allocator);
	if (hi - lo > ((int64_t) 64 << 20))
	{
		/* scattered: read each on its own */
		for (int li = 0; li < pf->n_leaves; li++)
		{
			const PqChunk *c = &g->chunks[li];

			if ((buf = arrow_arena_alloc_uninit(&scratch, (size_t) c->oi_length + 1, err)) == NULL ||
				read_at(file, buf, (size_t) c->oi_length, c->oi_offset, err) < 0 ||
				parse_offset_index(file, pf, rg, li, buf, err) < 0)
				goto done;
		}
		rc = 0;
		goto done;
	}
	if ((buf = arrow_arena_alloc_uninit(&scratch, (size_t) (hi - lo) + 1, err)) == NULL ||
		read_at(file, buf, (size_t) (hi - lo), lo, err) < 0)
		goto done;
	for (int li = 0; li < pf->n_leaves; li++)
		if (parse_offset_index(file, pf, rg, li, buf + (g->chunks[li].oi_offset - lo), err) < 0)
			goto done;
	rc = 0;
done:
	arrow_arena_free_all(&scratch);
	return rc;
}

int
pq_plan_parts(ArrowFile *file, PqFile *pf, ArrowError *err)
{
	int			n_rg = pf->footer.n_row_groups;
	int			total = 0,
				b = 0;

	for (int rg = 0; rg < n_rg; rg++)
	{
		PqRowGroup *g = &pf->footer.row_groups[rg];

		g->n_parts = 1;
		g->part_rows = NULL;
		if (row_group_indexed(pf, g) && pf->n_page_locs < PQ_MAX_PAGE_LOCS)
		{
			if (read_row_group_index(file, pf, rg, err) < 0)
				return -1;
			for (int li = 0; li < pf->n_leaves; li++)
				pf->n_page_locs += g->chunks[li].n_pages;
			if (cut_row_group(pf, g, &file->arena, err) < 0)
				return -1;
		}
		else
		{
			for (int li = 0; li < pf->n_leaves; li++)
				g->chunks[li].n_pages = 0;
			if ((g->part_rows = arrow_arena_alloc(&file->arena, sizeof(int64_t) * 2, err)) == NULL)
				return -1;
			g->part_rows[1] = g->num_rows;
		}
		if (g->n_parts == 1)
			for (int li = 0; li < pf->n_leaves; li++)
				g->chunks[li].n_pages = 0;	/* read whole: the index is not needed */
		g->first_batch = total;
		if (total > INT32_MAX - g->n_parts)
			return pq_corrupt(err, file->src.name, -1, "too many row groups");
		total += g->n_parts;
	}
	pf->batch_rg = arrow_arena_alloc(&file->arena, sizeof(int) * ((size_t) total + 1), err);
	pf->batch_part = arrow_arena_alloc(&file->arena, sizeof(int) * ((size_t) total + 1), err);
	if (pf->batch_rg == NULL || pf->batch_part == NULL)
		return -1;
	for (int rg = 0; rg < n_rg; rg++)
		for (int k = 0; k < pf->footer.row_groups[rg].n_parts; k++, b++)
		{
			pf->batch_rg[b] = rg;
			pf->batch_part[b] = k;
		}
	file->n_batches = total;
	return 0;
}

void
pq_pages_for_rows(const PqChunk *c, int64_t rg_rows, int64_t lo, int64_t hi, int *p_lo,
				  int *p_hi)
{
	int			a = 0,
				b = c->n_pages - 1;

	/* the last page starting at or before lo */
	while (a < b)
	{
		int			m = a + (b - a + 1) / 2;

		if (c->pages[m].first_row <= lo)
			a = m;
		else
			b = m - 1;
	}
	*p_lo = a;
	b = a;
	while (pq_page_end_row(c, b, rg_rows) < hi && b + 1 < c->n_pages)
		b++;
	*p_hi = b;
}

/* ------------------------------------------------------------ ColumnIndex */

typedef struct ColumnIndexArg
{
	int			n;				/* pages */
	ArrowArena *arena;
	uint8_t    *null_page;
	const uint8_t **min,
			  **max;
	uint32_t   *min_len,
			   *max_len;
	int			got;			/* bits: lists read */
} ColumnIndexArg;

static int
read_binaries(PqThrift *t, int type, ColumnIndexArg *a, const uint8_t ***v, uint32_t **len)
{
	int			et;
	int32_t		n;

	if (pq_thrift_list(t, type, &et, &n) < 0)
		return -1;
	if (et != PQ_T_BINARY || n != a->n)
		return pq_thrift_fail(t, "ColumnIndex has %d values for %d pages", n, a->n);
	*v = arrow_arena_alloc(a->arena, sizeof(uint8_t *) * ((size_t) n + 1), t->err);
	*len = arrow_arena_alloc(a->arena, sizeof(uint32_t) * ((size_t) n + 1), t->err);
	if (*v == NULL || *len == NULL)
		return -1;
	for (int i = 0; i < n; i++)
		if (pq_thrift_binary(t, et, &(*v)[i], &(*len)[i]) < 0)
			return -1;
	return 0;
}

static int
column_index_field(PqThrift *t, int16_t id, int type, void *arg)
{
	ColumnIndexArg *a = arg;
	int			et;
	int32_t		n;

	switch (id)
	{
		case 1:
			if (pq_thrift_list(t, type, &et, &n) < 0)
				return -1;
			if ((et != PQ_T_TRUE && et != PQ_T_FALSE) || n != a->n)
				return pq_thrift_fail(t, "ColumnIndex has %d null flags for %d pages", n, a->n);
			if ((a->null_page = arrow_arena_alloc(a->arena, (size_t) n + 1, t->err)) == NULL)
				return -1;
			if (t->end - t->p < n)
				return pq_thrift_fail(t, "truncated null flags");
			for (int i = 0; i < n; i++)
				a->null_page[i] = *t->p++ == 1;
			a->got |= 1;
			return 0;
		case 2:
			a->got |= 2;
			return read_binaries(t, type, a, &a->min, &a->min_len);
		case 3:
			a->got |= 4;
			return read_binaries(t, type, a, &a->max, &a->max_len);
		default:
			return 1;
	}
}

/*
 * The ColumnIndex of leaf li in row group rg folded into its parts: part k
 * gets the least min and greatest max of the pages overlapping it that are
 * not all null.  A part whose pages are all null, or whose page values are
 * not usable, keeps no entry (it is not skipped).  The index is trusted as
 * statistics are; a malformed one only means no per-part statistics.
 */
bool
pq_part_stats(const ArrowFile *file, const PqFile *pf, int rg, int li, ArrowArena *arena,
			  ArrowStatValue *mins, ArrowStatValue *maxs)
{
	const PqRowGroup *g = &pf->footer.row_groups[rg];
	const PqChunk *c = &g->chunks[li];
	const PqLeaf *leaf = &pf->leaves[li];
	ColumnIndexArg a;
	ArrowArena	scratch;
	PqThrift	t;
	uint8_t    *buf;
	bool		ok = false;

	if (c->n_pages == 0 || c->ci_offset < PARQUET_MAGIC_LEN || c->ci_length <= 0 ||
		c->ci_offset > pf->data_end || c->ci_length > pf->data_end - c->ci_offset)
		return false;
	arrow_arena_init(&scratch, arena->allocator);
	memset(&a, 0, sizeof(a));
	a.n = c->n_pages;
	a.arena = &scratch;
	if ((buf = arrow_arena_alloc_uninit(&scratch, (size_t) c->ci_length + 1, NULL)) == NULL ||
		read_at(file, buf, (size_t) c->ci_length, c->ci_offset, NULL) < 0)
		goto done;
	pq_thrift_init(&t, buf, (size_t) c->ci_length, c->ci_offset, file->src.name, "ColumnIndex",
				   NULL);
	if (pq_thrift_struct(&t, PQ_T_STRUCT, column_index_field, &a) < 0 || a.got != 7)
		goto done;
	for (int k = 0; k < g->n_parts; k++)
	{
		int			p_lo,
					p_hi;
		ArrowStatValue lo,
					hi,
					v;
		bool		any = false,
					usable = true;

		pq_pages_for_rows(c, g->num_rows, g->part_rows[k], g->part_rows[k + 1], &p_lo, &p_hi);
		memset(&lo, 0, sizeof(lo));
		memset(&hi, 0, sizeof(hi));
		for (int p = p_lo; p <= p_hi && usable; p++)
		{
			if (a.null_page[p])
				continue;
			if (!pq_stat_value(leaf, a.min[p], a.min_len[p], &v))
			{
				usable = false;
				break;
			}
			if (!any || (v.is_float ? v.d < lo.d : v.i < lo.i))
				lo = v;
			if (!pq_stat_value(leaf, a.max[p], a.max_len[p], &v))
			{
				usable = false;
				break;
			}
			if (!any || (v.is_float ? v.d > hi.d : v.i > hi.i))
				hi = v;
			any = true;
		}
		if (!usable || !any)
			continue;
		if (lo.is_float && lo.d == 0)
			lo.d = -0.0;
		if (hi.is_float && hi.d == 0)
			hi.d = 0.0;
		mins[g->first_batch + k] = lo;
		maxs[g->first_batch + k] = hi;
	}
	ok = true;
done:
	arrow_arena_free_all(&scratch);
	return ok;
}
