/*
 * pq_meta.c — Parquet's Thrift structures: FileMetaData (schema elements,
 * row groups, column chunks and their statistics, key/value metadata) and
 * PageHeader.  Field ids follow parquet.thrift; unknown fields are skipped.
 * Strings are copied into the arena; statistics point into the footer
 * bytes, which the caller keeps.
 */
#include <inttypes.h>
#include <stdio.h>

#include "pq_internal.h"

typedef struct MetaCx
{
	PqThrift	t;
	ArrowArena *arena;
} MetaCx;

static char *
copy_string(MetaCx *m, const uint8_t *p, uint32_t len)
{
	char	   *s = arrow_arena_alloc_uninit(m->arena, (size_t) len + 1, m->t.err);

	if (s == NULL)
		return NULL;
	memcpy(s, p, len);
	s[len] = '\0';
	return s;
}

static int
read_string(MetaCx *m, int type, char **out)
{
	const uint8_t *p;
	uint32_t	len;

	if (pq_thrift_binary(&m->t, type, &p, &len) < 0)
		return -1;
	*out = copy_string(m, p, len);
	return *out ? 0 : -1;
}

/* an empty struct (the members of LogicalType without fields) or a
 * TimeUnit union: returns the id of its first field, 0 if none */
static int
read_union_tag(PqThrift *t, int type, int *tag)
{
	int16_t		last = 0,
				id;
	int			ft;

	*tag = 0;
	if (pq_thrift_enter(t, type) < 0)
		return -1;
	for (;;)
	{
		if (pq_thrift_field(t, &last, &ft, &id) < 0)
			return -1;
		if (ft == PQ_T_STOP)
			break;
		if (*tag == 0)
			*tag = id;
		if (pq_thrift_skip(t, ft) < 0)
			return -1;
	}
	pq_thrift_leave(t);
	return 0;
}

/* the members of the LogicalType union that have fields */
static int
read_logical_member(PqThrift *t, int kind, int type, PqLogical *lt)
{
	int16_t		last = 0,
				id;
	int			ft;
	int32_t		v;

	if (pq_thrift_enter(t, type) < 0)
		return -1;
	for (;;)
	{
		if (pq_thrift_field(t, &last, &ft, &id) < 0)
			return -1;
		if (ft == PQ_T_STOP)
			break;
		if (kind == PQ_LT_DECIMAL && (id == 1 || id == 2))
		{
			if (pq_thrift_i32(t, ft, &v) < 0)
				return -1;
			if (id == 1)
				lt->scale = v;
			else
				lt->precision = v;
		}
		else if ((kind == PQ_LT_TIME || kind == PQ_LT_TIMESTAMP) && id == 1)
		{
			if (pq_thrift_bool(t, ft, &lt->utc) < 0)
				return -1;
		}
		else if ((kind == PQ_LT_TIME || kind == PQ_LT_TIMESTAMP) && id == 2)
		{
			if (read_union_tag(t, ft, &lt->unit) < 0)
				return -1;
		}
		else if (kind == PQ_LT_INTEGER && id == 1)
		{
			if (pq_thrift_i32(t, ft, &v) < 0)
				return -1;
			lt->bit_width = v;
		}
		else if (kind == PQ_LT_INTEGER && id == 2)
		{
			if (pq_thrift_bool(t, ft, &lt->is_signed) < 0)
				return -1;
		}
		else if (pq_thrift_skip(t, ft) < 0)
			return -1;
	}
	pq_thrift_leave(t);
	return 0;
}

static int
read_logical(PqThrift *t, int type, PqLogical *lt)
{
	int16_t		last = 0,
				id;
	int			ft;

	if (pq_thrift_enter(t, type) < 0)
		return -1;
	for (;;)
	{
		if (pq_thrift_field(t, &last, &ft, &id) < 0)
			return -1;
		if (ft == PQ_T_STOP)
			break;
		if (lt->kind == PQ_LT_NONE && id >= 1 && id <= 15 && id != 9)
		{
			lt->kind = id;
			if (read_logical_member(t, id, ft, lt) < 0)
				return -1;
		}
		else if (pq_thrift_skip(t, ft) < 0)
			return -1;
	}
	pq_thrift_leave(t);
	return 0;
}

static int
read_schema_elem(MetaCx *m, int type, PqSchemaElem *e)
{
	PqThrift   *t = &m->t;
	int16_t		last = 0,
				id;
	int			ft;

	memset(e, 0, sizeof(*e));
	e->type = -1;
	e->repetition = -1;
	e->converted = -1;
	if (pq_thrift_enter(t, type) < 0)
		return -1;
	for (;;)
	{
		int32_t		v = 0;
		int			rc = 0;

		if (pq_thrift_field(t, &last, &ft, &id) < 0)
			return -1;
		if (ft == PQ_T_STOP)
			break;
		switch (id)
		{
			case 1:
				rc = pq_thrift_i32(t, ft, &v);
				e->type = v;
				break;
			case 2:
				rc = pq_thrift_i32(t, ft, &e->type_length);
				break;
			case 3:
				rc = pq_thrift_i32(t, ft, &v);
				e->repetition = v;
				break;
			case 4:
				rc = read_string(m, ft, &e->name);
				break;
			case 5:
				rc = pq_thrift_i32(t, ft, &e->num_children);
				break;
			case 6:
				rc = pq_thrift_i32(t, ft, &v);
				e->converted = v;
				break;
			case 7:
				rc = pq_thrift_i32(t, ft, &e->scale);
				break;
			case 8:
				rc = pq_thrift_i32(t, ft, &e->precision);
				break;
			case 10:
				rc = read_logical(t, ft, &e->logical);
				break;
			default:
				rc = pq_thrift_skip(t, ft);
		}
		if (rc < 0)
			return -1;
	}
	pq_thrift_leave(t);
	if (e->name == NULL)
		return pq_thrift_fail(t, "schema element without a name");
	if (e->num_children < 0)
		return pq_thrift_fail(t, "negative child count");
	return 0;
}

static int
read_stats(MetaCx *m, int type, PqStats *s)
{
	PqThrift   *t = &m->t;
	int16_t		last = 0,
				id;
	int			ft;
	const uint8_t *lmin = NULL,
			   *lmax = NULL;
	uint32_t	lmin_len = 0,
				lmax_len = 0;

	if (pq_thrift_enter(t, type) < 0)
		return -1;
	for (;;)
	{
		int			rc = 0;

		if (pq_thrift_field(t, &last, &ft, &id) < 0)
			return -1;
		if (ft == PQ_T_STOP)
			break;
		switch (id)
		{
			case 1:
				rc = pq_thrift_binary(t, ft, &lmax, &lmax_len);
				break;
			case 2:
				rc = pq_thrift_binary(t, ft, &lmin, &lmin_len);
				break;
			case 3:
				rc = pq_thrift_i64(t, ft, &s->null_count);
				break;
			case 5:
				rc = pq_thrift_binary(t, ft, &s->max, &s->max_len);
				s->has_max = rc == 0;
				break;
			case 6:
				rc = pq_thrift_binary(t, ft, &s->min, &s->min_len);
				s->has_min = rc == 0;
				break;
			default:
				rc = pq_thrift_skip(t, ft);
		}
		if (rc < 0)
			return -1;
	}
	pq_thrift_leave(t);
	if (!s->has_min && !s->has_max && lmin && lmax)
	{
		s->legacy = true;
		s->has_min = s->has_max = true;
		s->min = lmin;
		s->min_len = lmin_len;
		s->max = lmax;
		s->max_len = lmax_len;
	}
	if (s->null_count < -1)
		s->null_count = -1;
	return 0;
}

static int
read_column_meta(MetaCx *m, int type, PqChunk *c)
{
	PqThrift   *t = &m->t;
	int16_t		last = 0,
				id;
	int			ft;
	int32_t		v;

	if (pq_thrift_enter(t, type) < 0)
		return -1;
	for (;;)
	{
		int			rc = 0;

		if (pq_thrift_field(t, &last, &ft, &id) < 0)
			return -1;
		if (ft == PQ_T_STOP)
			break;
		switch (id)
		{
			case 1:
				rc = pq_thrift_i32(t, ft, &v);
				c->type = v;
				break;
			case 4:
				rc = pq_thrift_i32(t, ft, &v);
				c->codec = v;
				break;
			case 5:
				rc = pq_thrift_i64(t, ft, &c->num_values);
				break;
			case 6:
				rc = pq_thrift_i64(t, ft, &c->total_uncompressed);
				break;
			case 7:
				rc = pq_thrift_i64(t, ft, &c->total_compressed);
				break;
			case 9:
				rc = pq_thrift_i64(t, ft, &c->data_page_offset);
				break;
			case 11:
				rc = pq_thrift_i64(t, ft, &c->dict_page_offset);
				break;
			case 12:
				rc = read_stats(m, ft, &c->stats);
				break;
			default:
				rc = pq_thrift_skip(t, ft);
		}
		if (rc < 0)
			return -1;
	}
	pq_thrift_leave(t);
	return 0;
}

static int
read_column_chunk(MetaCx *m, int type, PqChunk *c)
{
	PqThrift   *t = &m->t;
	int16_t		last = 0,
				id;
	int			ft;
	bool		has_meta = false;

	memset(c, 0, sizeof(*c));
	c->type = -1;
	c->dict_page_offset = -1;
	c->data_page_offset = -1;
	c->stats.null_count = -1;
	if (pq_thrift_enter(t, type) < 0)
		return -1;
	for (;;)
	{
		int			rc = 0;

		if (pq_thrift_field(t, &last, &ft, &id) < 0)
			return -1;
		if (ft == PQ_T_STOP)
			break;
		if (id == 1)
		{
			c->external = true;
			rc = pq_thrift_skip(t, ft);
		}
		else if (id == 3)
		{
			rc = read_column_meta(m, ft, c);
			has_meta = true;
		}
		else
			rc = pq_thrift_skip(t, ft);
		if (rc < 0)
			return -1;
	}
	pq_thrift_leave(t);
	if (!has_meta)
		return pq_thrift_fail(t, "column chunk without metadata (encrypted?)");
	return 0;
}

static int
read_row_group(MetaCx *m, int type, PqRowGroup *rg, int *n_chunks)
{
	PqThrift   *t = &m->t;
	int16_t		last = 0,
				id;
	int			ft,
				et;
	int32_t		n,
				i;

	memset(rg, 0, sizeof(*rg));
	rg->num_rows = -1;
	*n_chunks = -1;
	if (pq_thrift_enter(t, type) < 0)
		return -1;
	for (;;)
	{
		if (pq_thrift_field(t, &last, &ft, &id) < 0)
			return -1;
		if (ft == PQ_T_STOP)
			break;
		if (id == 1)
		{
			if (pq_thrift_list(t, ft, &et, &n) < 0)
				return -1;
			rg->chunks = arrow_arena_alloc(m->arena, sizeof(PqChunk) * ((size_t) n + 1), t->err);
			if (rg->chunks == NULL)
				return -1;
			for (i = 0; i < n; i++)
				if (read_column_chunk(m, et, &rg->chunks[i]) < 0)
					return -1;
			*n_chunks = n;
		}
		else if (id == 3)
		{
			if (pq_thrift_i64(t, ft, &rg->num_rows) < 0)
				return -1;
		}
		else if (pq_thrift_skip(t, ft) < 0)
			return -1;
	}
	pq_thrift_leave(t);
	if (*n_chunks < 0 || rg->num_rows < 0)
		return pq_thrift_fail(t, "row group without columns or row count");
	return 0;
}

static int
read_kv_list(MetaCx *m, int type, PqFooter *f)
{
	PqThrift   *t = &m->t;
	int			et;
	int32_t		n,
				i;

	if (pq_thrift_list(t, type, &et, &n) < 0)
		return -1;
	f->kv = arrow_arena_alloc(m->arena, sizeof(ArrowKeyValue) * ((size_t) n + 1), t->err);
	if (f->kv == NULL)
		return -1;
	for (i = 0; i < n; i++)
	{
		int16_t		last = 0,
					id;
		int			ft;
		ArrowKeyValue *kv = &f->kv[f->n_kv];

		if (pq_thrift_enter(t, et) < 0)
			return -1;
		for (;;)
		{
			if (pq_thrift_field(t, &last, &ft, &id) < 0)
				return -1;
			if (ft == PQ_T_STOP)
				break;
			if ((id == 1 || id == 2) &&
				read_string(m, ft, id == 1 ? &kv->key : &kv->value) < 0)
				return -1;
			if (id != 1 && id != 2 && pq_thrift_skip(t, ft) < 0)
				return -1;
		}
		pq_thrift_leave(t);
		if (kv->key != NULL)
			f->n_kv++;
	}
	return 0;
}

static int
read_list_of(MetaCx *m, int type, size_t elem_size, void **out, int *count)
{
	int			et;
	int32_t		n;

	if (pq_thrift_list(&m->t, type, &et, &n) < 0)
		return -1;
	if (et != PQ_T_STRUCT)
		return pq_thrift_fail(&m->t, "expected a list of structs");
	*out = arrow_arena_alloc(m->arena, elem_size * ((size_t) n + 1), m->t.err);
	*count = n;
	return *out ? 0 : -1;
}

int
pq_parse_footer(const uint8_t *buf, size_t len, int64_t file_off, const char *name,
				ArrowArena *arena, PqFooter *f, ArrowError *err)
{
	MetaCx		m;
	PqThrift   *t = &m.t;
	int16_t		last = 0,
				id;
	int			ft;
	bool		has_schema = false,
				has_rgs = false;

	memset(f, 0, sizeof(*f));
	m.arena = arena;
	pq_thrift_init(t, buf, len, file_off, name, "footer", err);
	for (;;)
	{
		int			rc = 0;
		void	   *list;

		if (pq_thrift_field(t, &last, &ft, &id) < 0)
			return -1;
		if (ft == PQ_T_STOP)
			break;
		if (id == 2)
		{
			rc = read_list_of(&m, ft, sizeof(PqSchemaElem), &list, &f->n_elems);
			f->elems = list;
			for (int i = 0; rc == 0 && i < f->n_elems; i++)
				rc = read_schema_elem(&m, PQ_T_STRUCT, &f->elems[i]);
			has_schema = true;
		}
		else if (id == 3)
			rc = pq_thrift_i64(t, ft, &f->num_rows);
		else if (id == 4)
		{
			rc = read_list_of(&m, ft, sizeof(PqRowGroup), &list, &f->n_row_groups);
			f->row_groups = list;
			for (int i = 0; rc == 0 && i < f->n_row_groups; i++)
			{
				int			nc;

				rc = read_row_group(&m, PQ_T_STRUCT, &f->row_groups[i], &nc);
				if (rc == 0 && i == 0)
					f->n_chunks_per_rg = nc;
				else if (rc == 0 && nc != f->n_chunks_per_rg)
					rc = pq_thrift_fail(t, "row group %d has %d columns, row group 0 %d",
										i, nc, f->n_chunks_per_rg);
			}
			has_rgs = true;
		}
		else if (id == 5)
			rc = read_kv_list(&m, ft, f);
		else if (id == 6)
			rc = read_string(&m, ft, &f->created_by);
		else if (id == 7)
		{
			f->type_defined_order = true;
			rc = pq_thrift_skip(t, ft);
		}
		else
			rc = pq_thrift_skip(t, ft);
		if (rc < 0)
			return -1;
	}
	if (!has_schema || f->n_elems < 1)
		return pq_thrift_fail(t, "no schema");
	if (!has_rgs)
		return pq_thrift_fail(t, "no row group list");
	return 0;
}

/* ------------------------------------------------------------ page headers */

/* DataPageHeader, DataPageHeaderV2 (v2) or DictionaryPageHeader (dict) */
static int
read_data_header(PqThrift *t, int type, PqPageHeader *h, bool v2, bool dict)
{
	int16_t		last = 0,
				id;
	int			ft;

	if (pq_thrift_enter(t, type) < 0)
		return -1;
	for (;;)
	{
		int32_t		v = 0;
		int			rc = 0;

		if (pq_thrift_field(t, &last, &ft, &id) < 0)
			return -1;
		if (ft == PQ_T_STOP)
			break;
		if (id == 1)
			rc = pq_thrift_i32(t, ft, &h->num_values);
		else if (dict && id == 2)
			rc = pq_thrift_i32(t, ft, &h->encoding);
		else if (dict)
			rc = pq_thrift_skip(t, ft);
		else if (!v2 && id >= 2 && id <= 4)
		{
			rc = pq_thrift_i32(t, ft, &v);
			if (id == 2)
				h->encoding = v;
			else if (id == 3)
				h->def_encoding = v;
			else
				h->rep_encoding = v;
		}
		else if (v2 && id >= 2 && id <= 6)
		{
			rc = pq_thrift_i32(t, ft, &v);
			if (id == 2)
				h->num_nulls = v;
			else if (id == 3)
				h->num_rows = v;
			else if (id == 4)
				h->encoding = v;
			else if (id == 5)
				h->def_len = v;
			else
				h->rep_len = v;
		}
		else if (v2 && id == 7)
			rc = pq_thrift_bool(t, ft, &h->is_compressed);
		else
			rc = pq_thrift_skip(t, ft);
		if (rc < 0)
			return -1;
	}
	pq_thrift_leave(t);
	return 0;
}

int
pq_parse_page_header(const uint8_t *p, size_t len, int64_t file_off, const char *name,
					 PqPageHeader *h, size_t *hdr_len, ArrowError *err)
{
	PqThrift	t;
	int16_t		last = 0,
				id;
	int			ft;
	bool		has_body = false;

	memset(h, 0, sizeof(*h));
	h->type = -1;
	h->is_compressed = true;
	h->uncompressed_size = h->compressed_size = -1;
	h->num_values = -1;
	pq_thrift_init(&t, p, len, file_off, name, "page header", err);
	for (;;)
	{
		int32_t		v = 0;
		int			rc = 0;

		if (pq_thrift_field(&t, &last, &ft, &id) < 0)
			return -1;
		if (ft == PQ_T_STOP)
			break;
		if (id == 1)
		{
			rc = pq_thrift_i32(&t, ft, &v);
			h->type = v;
		}
		else if (id == 2)
			rc = pq_thrift_i32(&t, ft, &h->uncompressed_size);
		else if (id == 3)
			rc = pq_thrift_i32(&t, ft, &h->compressed_size);
		else if (id == 5 || id == 8 || id == 7)
		{
			rc = read_data_header(&t, ft, h, id == 8, id == 7);
			has_body = true;
		}
		else
			rc = pq_thrift_skip(&t, ft);
		if (rc < 0)
			return -1;
	}
	if (h->uncompressed_size < 0 || h->compressed_size < 0)
		return pq_thrift_fail(&t, "page sizes missing or negative");
	if ((h->type == PQ_PAGE_DATA || h->type == PQ_PAGE_DATA_V2 ||
		 h->type == PQ_PAGE_DICTIONARY) && (!has_body || h->num_values < 0))
		return pq_thrift_fail(&t, "page of type %d without its header", h->type);
	if (h->type == PQ_PAGE_DATA_V2 &&
		(h->def_len < 0 || h->rep_len < 0 || h->num_nulls < 0 ||
		 (int64_t) h->def_len + h->rep_len > h->compressed_size ||
		 (int64_t) h->def_len + h->rep_len > h->uncompressed_size))
		return pq_thrift_fail(&t, "bad level lengths in a v2 page header");
	*hdr_len = (size_t) (t.p - t.base);
	return 0;
}
