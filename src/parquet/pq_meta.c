/*
 * pq_meta.c — Parquet's Thrift structures: FileMetaData (schema elements,
 * row groups, column chunks and their statistics, key/value metadata) and
 * PageHeader.  Field ids follow parquet.thrift; each structure is one field
 * handler for pq_thrift_struct, and unknown fields are skipped.  Strings
 * are copied into the arena; statistics point into the footer bytes, which
 * the caller keeps.
 */
#include <inttypes.h>
#include <stdio.h>

#include "pq_internal.h"

/* the footer's cursor, with the arena its strings and lists go to */
typedef struct MetaCx
{
	PqThrift	t;				/* first: handlers get &cx->t */
	ArrowArena *arena;
} MetaCx;

#define META(t) ((MetaCx *) (t))

static int
read_string(PqThrift *t, int type, char **out)
{
	const uint8_t *p;
	uint32_t	len;

	if (pq_thrift_binary(t, type, &p, &len) < 0)
		return -1;
	if ((*out = arrow_arena_alloc_uninit(META(t)->arena, (size_t) len + 1, t->err)) == NULL)
		return -1;
	memcpy(*out, p, len);
	(*out)[len] = '\0';
	return 0;
}

/* an enum or i32 field into an int */
static int
read_int(PqThrift *t, int type, int *out)
{
	int32_t		v;

	if (pq_thrift_i32(t, type, &v) < 0)
		return -1;
	*out = v;
	return 0;
}

/* TimeUnit (and any union whose members are empty): the first member's id */
static int
union_tag_field(PqThrift *t, int16_t id, int type, void *arg)
{
	int		   *tag = arg;

	if (*tag == 0)
		*tag = id;
	return 1;
}

/* the fields of the LogicalType member lt->kind */
static int
logical_member_field(PqThrift *t, int16_t id, int type, void *arg)
{
	PqLogical  *lt = arg;

	switch (lt->kind)
	{
		case PQ_LT_DECIMAL:
			if (id == 1 || id == 2)
				return pq_thrift_i32(t, type, id == 1 ? &lt->scale : &lt->precision);
			return 1;
		case PQ_LT_TIME:
		case PQ_LT_TIMESTAMP:
			if (id == 1)
				return pq_thrift_bool(t, type, &lt->utc);
			if (id == 2)
				return pq_thrift_struct(t, type, union_tag_field, &lt->unit);
			return 1;
		case PQ_LT_INTEGER:
			if (id == 1)
				return read_int(t, type, &lt->bit_width);
			if (id == 2)
				return pq_thrift_bool(t, type, &lt->is_signed);
			return 1;
		default:
			return 1;
	}
}

static int
logical_field(PqThrift *t, int16_t id, int type, void *arg)
{
	PqLogical  *lt = arg;

	if (lt->kind != PQ_LT_NONE || id < 1 || id > 15 || id == 9)
		return 1;
	lt->kind = id;
	return pq_thrift_struct(t, type, logical_member_field, lt);
}

static int
schema_elem_field(PqThrift *t, int16_t id, int type, void *arg)
{
	PqSchemaElem *e = arg;

	switch (id)
	{
		case 1:
			return read_int(t, type, &e->type);
		case 2:
			return pq_thrift_i32(t, type, &e->type_length);
		case 3:
			return read_int(t, type, &e->repetition);
		case 4:
			return read_string(t, type, &e->name);
		case 5:
			return pq_thrift_i32(t, type, &e->num_children);
		case 6:
			return read_int(t, type, &e->converted);
		case 7:
			return pq_thrift_i32(t, type, &e->scale);
		case 8:
			return pq_thrift_i32(t, type, &e->precision);
		case 10:
			return pq_thrift_struct(t, type, logical_field, &e->logical);
		default:
			return 1;
	}
}

static int
read_schema_elem(PqThrift *t, int type, PqSchemaElem *e)
{
	memset(e, 0, sizeof(*e));
	e->type = -1;
	e->repetition = -1;
	e->converted = -1;
	if (pq_thrift_struct(t, type, schema_elem_field, e) < 0)
		return -1;
	if (e->name == NULL)
		return pq_thrift_fail(t, "schema element without a name");
	if (e->num_children < 0)
		return pq_thrift_fail(t, "negative child count");
	return 0;
}

/* Statistics; the deprecated min/max go to legacy_* until the end */
typedef struct StatsArg
{
	PqStats    *s;
	PqStats		legacy;
} StatsArg;

static int
stats_field(PqThrift *t, int16_t id, int type, void *arg)
{
	StatsArg   *a = arg;
	PqStats    *s = a->s;

	switch (id)
	{
		case 1:
			return pq_thrift_binary(t, type, &a->legacy.max, &a->legacy.max_len);
		case 2:
			return pq_thrift_binary(t, type, &a->legacy.min, &a->legacy.min_len);
		case 3:
			return pq_thrift_i64(t, type, &s->null_count);
		case 5:
			s->has_max = true;
			return pq_thrift_binary(t, type, &s->max, &s->max_len);
		case 6:
			s->has_min = true;
			return pq_thrift_binary(t, type, &s->min, &s->min_len);
		default:
			return 1;
	}
}

static int
read_stats(PqThrift *t, int type, PqStats *s)
{
	StatsArg	a;

	memset(&a, 0, sizeof(a));
	a.s = s;
	if (pq_thrift_struct(t, type, stats_field, &a) < 0)
		return -1;
	if (!s->has_min && !s->has_max && a.legacy.min && a.legacy.max)
	{
		s->legacy = true;
		s->has_min = s->has_max = true;
		s->min = a.legacy.min;
		s->min_len = a.legacy.min_len;
		s->max = a.legacy.max;
		s->max_len = a.legacy.max_len;
	}
	if (s->null_count < -1)
		s->null_count = -1;
	return 0;
}

static int
column_meta_field(PqThrift *t, int16_t id, int type, void *arg)
{
	PqChunk    *c = arg;

	switch (id)
	{
		case 1:
			return read_int(t, type, &c->type);
		case 4:
			return read_int(t, type, &c->codec);
		case 5:
			return pq_thrift_i64(t, type, &c->num_values);
		case 6:
			return pq_thrift_i64(t, type, &c->total_uncompressed);
		case 7:
			return pq_thrift_i64(t, type, &c->total_compressed);
		case 9:
			return pq_thrift_i64(t, type, &c->data_page_offset);
		case 11:
			return pq_thrift_i64(t, type, &c->dict_page_offset);
		case 12:
			return read_stats(t, type, &c->stats);
		case 14:
			return pq_thrift_i64(t, type, &c->bloom_offset);
		case 15:
			return pq_thrift_i32(t, type, &c->bloom_length);
		default:
			return 1;
	}
}

/*
 * ColumnChunk: file_path (1) marks an external chunk; meta_data (3); the
 * page index: offset_index_offset/length (4, 5), column_index_offset/length
 * (6, 7)
 */
static int
column_chunk_field(PqThrift *t, int16_t id, int type, void *arg)
{
	PqChunk    *c = arg;

	switch (id)
	{
		case 1:
			c->external = true;
			return 1;
		case 3:
			c->num_values = -1; /* meta data present: fields now required */
			return pq_thrift_struct(t, type, column_meta_field, c);
		case 4:
			return pq_thrift_i64(t, type, &c->oi_offset);
		case 5:
			return pq_thrift_i32(t, type, &c->oi_length);
		case 6:
			return pq_thrift_i64(t, type, &c->ci_offset);
		case 7:
			return pq_thrift_i32(t, type, &c->ci_length);
		default:
			return 1;
	}
}

static int
read_column_chunk(PqThrift *t, int type, PqChunk *c)
{
	memset(c, 0, sizeof(*c));
	c->type = -1;
	c->dict_page_offset = -1;
	c->data_page_offset = -1;
	c->stats.null_count = -1;
	c->bloom_offset = c->oi_offset = c->ci_offset = -1;
	c->bloom_length = c->oi_length = c->ci_length = -1;
	c->num_values = INT64_MIN;	/* no meta data */
	if (pq_thrift_struct(t, type, column_chunk_field, c) < 0)
		return -1;
	if (c->num_values == INT64_MIN)
		return pq_thrift_fail(t, "column chunk without metadata (encrypted?)");
	return 0;
}

/* a list of structs into arena memory (count checked by pq_thrift_list) */
static void *
read_list_header(PqThrift *t, int type, size_t elem_size, int *count, int *elem_type)
{
	int32_t		n;
	void	   *out;

	if (pq_thrift_list(t, type, elem_type, &n) < 0)
		return NULL;
	if (*elem_type != PQ_T_STRUCT)
	{
		pq_thrift_fail(t, "expected a list of structs");
		return NULL;
	}
	out = arrow_arena_alloc(META(t)->arena, elem_size * ((size_t) n + 1), t->err);
	*count = n;
	return out;
}

typedef struct RowGroupArg
{
	PqRowGroup *rg;
	int			n_chunks;
} RowGroupArg;

static int
row_group_field(PqThrift *t, int16_t id, int type, void *arg)
{
	RowGroupArg *a = arg;
	int			et;

	if (id == 3)
		return pq_thrift_i64(t, type, &a->rg->num_rows);
	if (id != 1)
		return 1;
	if ((a->rg->chunks = read_list_header(t, type, sizeof(PqChunk), &a->n_chunks, &et)) == NULL)
		return -1;
	for (int i = 0; i < a->n_chunks; i++)
		if (read_column_chunk(t, et, &a->rg->chunks[i]) < 0)
			return -1;
	return 0;
}

static int
read_row_group(PqThrift *t, int type, PqRowGroup *rg, int *n_chunks)
{
	RowGroupArg a = {rg, -1};

	memset(rg, 0, sizeof(*rg));
	rg->num_rows = -1;
	if (pq_thrift_struct(t, type, row_group_field, &a) < 0)
		return -1;
	if (a.n_chunks < 0 || rg->num_rows < 0)
		return pq_thrift_fail(t, "row group without columns or row count");
	*n_chunks = a.n_chunks;
	return 0;
}

static int
kv_field(PqThrift *t, int16_t id, int type, void *arg)
{
	ArrowKeyValue *kv = arg;

	if (id == 1 || id == 2)
		return read_string(t, type, id == 1 ? &kv->key : &kv->value);
	return 1;
}

static int
footer_field(PqThrift *t, int16_t id, int type, void *arg)
{
	PqFooter   *f = arg;
	int			et;

	switch (id)
	{
		case 2:
			if ((f->elems = read_list_header(t, type, sizeof(PqSchemaElem), &f->n_elems, &et)) == NULL)
				return -1;
			for (int i = 0; i < f->n_elems; i++)
				if (read_schema_elem(t, et, &f->elems[i]) < 0)
					return -1;
			return 0;
		case 3:
			return pq_thrift_i64(t, type, &f->num_rows);
		case 4:
			if ((f->row_groups = read_list_header(t, type, sizeof(PqRowGroup), &f->n_row_groups,
												  &et)) == NULL)
				return -1;
			for (int i = 0; i < f->n_row_groups; i++)
			{
				int			nc = -1;

				if (read_row_group(t, et, &f->row_groups[i], &nc) < 0)
					return -1;
				if (i == 0)
					f->n_chunks_per_rg = nc;
				else if (nc != f->n_chunks_per_rg)
					return pq_thrift_fail(t, "row group %d has %d columns, row group 0 %d",
										  i, nc, f->n_chunks_per_rg);
			}
			return 0;
		case 5:
			if ((f->kv = read_list_header(t, type, sizeof(ArrowKeyValue), &f->n_kv, &et)) == NULL)
				return -1;
			for (int i = 0; i < f->n_kv; i++)
				if (pq_thrift_struct(t, et, kv_field, &f->kv[i]) < 0)
					return -1;
			return 0;
		case 6:
			return read_string(t, type, &f->created_by);
		case 7:
			f->type_defined_order = true;
			return 1;
		default:
			return 1;
	}
}

int
pq_parse_footer(const uint8_t *buf, size_t len, int64_t file_off, const char *name,
				ArrowArena *arena, PqFooter *f, ArrowError *err)
{
	MetaCx		m;

	memset(f, 0, sizeof(*f));
	f->n_elems = -1;
	f->n_row_groups = -1;
	m.arena = arena;
	pq_thrift_init(&m.t, buf, len, file_off, name, "footer", err);
	if (pq_thrift_struct(&m.t, PQ_T_STRUCT, footer_field, f) < 0)
		return -1;
	if (f->n_elems < 1)
		return pq_thrift_fail(&m.t, "no schema");
	if (f->n_row_groups < 0)
		return pq_thrift_fail(&m.t, "no row group list");
	for (int i = 0; i < f->n_kv; i++)
		if (f->kv[i].key == NULL)
			return pq_thrift_fail(&m.t, "key/value metadata without a key");
	return 0;
}

/* ------------------------------------------------------------ page headers */

/* DataPageHeader (kind 0), DataPageHeaderV2 (1), DictionaryPageHeader (2) */
typedef struct DataHeaderArg
{
	PqPageHeader *h;
	int			kind;
} DataHeaderArg;

static int
data_header_field(PqThrift *t, int16_t id, int type, void *arg)
{
	DataHeaderArg *a = arg;
	PqPageHeader *h = a->h;
	static const int v1_ids[] = {2, 3, 4};

	if (id == 1)
		return pq_thrift_i32(t, type, &h->num_values);
	if (a->kind == 2)
		return id == 2 ? read_int(t, type, &h->encoding) : 1;
	if (a->kind == 0)
	{
		int		   *dst[] = {&h->encoding, &h->def_encoding, &h->rep_encoding};

		for (int i = 0; i < 3; i++)
			if (id == v1_ids[i])
				return read_int(t, type, dst[i]);
		return 1;
	}
	switch (id)
	{
		case 2:
			return pq_thrift_i32(t, type, &h->num_nulls);
		case 3:
			return pq_thrift_i32(t, type, &h->num_rows);
		case 4:
			return read_int(t, type, &h->encoding);
		case 5:
			return pq_thrift_i32(t, type, &h->def_len);
		case 6:
			return pq_thrift_i32(t, type, &h->rep_len);
		case 7:
			return pq_thrift_bool(t, type, &h->is_compressed);
		default:
			return 1;
	}
}

typedef struct PageHeaderArg
{
	PqPageHeader *h;
	bool		has_body;
} PageHeaderArg;

static int
page_header_field(PqThrift *t, int16_t id, int type, void *arg)
{
	PageHeaderArg *a = arg;
	DataHeaderArg d = {a->h, id == 5 ? 0 : id == 8 ? 1 : 2};

	switch (id)
	{
		case 1:
			return read_int(t, type, &a->h->type);
		case 2:
			return pq_thrift_i32(t, type, &a->h->uncompressed_size);
		case 3:
			return pq_thrift_i32(t, type, &a->h->compressed_size);
		case 5:
		case 7:
		case 8:
			a->has_body = true;
			return pq_thrift_struct(t, type, data_header_field, &d);
		default:
			return 1;
	}
}

int
pq_parse_page_header(const uint8_t *p, size_t len, int64_t file_off, const char *name,
					 PqPageHeader *h, size_t *hdr_len, ArrowError *err)
{
	PqThrift	t;
	PageHeaderArg a = {h, false};

	memset(h, 0, sizeof(*h));
	h->type = -1;
	h->is_compressed = true;
	h->uncompressed_size = h->compressed_size = -1;
	h->num_values = -1;
	pq_thrift_init(&t, p, len, file_off, name, "page header", err);
	if (pq_thrift_struct(&t, PQ_T_STRUCT, page_header_field, &a) < 0)
		return -1;
	if (h->uncompressed_size < 0 || h->compressed_size < 0)
		return pq_thrift_fail(&t, "page sizes missing or negative");
	if ((h->type == PQ_PAGE_DATA || h->type == PQ_PAGE_DATA_V2 ||
		 h->type == PQ_PAGE_DICTIONARY) && (!a.has_body || h->num_values < 0))
		return pq_thrift_fail(&t, "page of type %d without its header", h->type);
	if (h->type == PQ_PAGE_DATA_V2 &&
		(h->def_len < 0 || h->rep_len < 0 || h->num_nulls < 0 ||
		 (int64_t) h->def_len + h->rep_len > h->compressed_size ||
		 (int64_t) h->def_len + h->rep_len > h->uncompressed_size))
		return pq_thrift_fail(&t, "bad level lengths in a v2 page header");
	*hdr_len = (size_t) (t.p - t.base);
	return 0;
}
