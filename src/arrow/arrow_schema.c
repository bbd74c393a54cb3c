/*
 * arrow_schema.c — decoding Arrow Schema flatbuffers into ArrowSchema,
 * computing the record batch layout of a schema, and schema utilities.
 *
 * Field ids below are the vtable slot order of the tables in Arrow's
 * format/Schema.fbs (union fields take two slots: the type byte, then the
 * table).
 */
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "arrow_read_internal.h"

/* Schema */
#define SCHEMA_ENDIANNESS		0
#define SCHEMA_FIELDS			1
#define SCHEMA_METADATA			2
/* Field */
#define FIELD_NAME				0
#define FIELD_NULLABLE			1
#define FIELD_TYPE_TYPE			2
#define FIELD_TYPE				3
#define FIELD_DICTIONARY		4
#define FIELD_CHILDREN			5
#define FIELD_METADATA			6
/* DictionaryEncoding */
#define DICT_ID					0
#define DICT_INDEX_TYPE			1
#define DICT_IS_ORDERED			2
/* KeyValue */
#define KV_KEY					0
#define KV_VALUE				1

/* ------------------------------------------------------------ decoding */

static char *
arena_strndup(ArrowArena *arena, const char *s, size_t len, ArrowError *err)
{
	char	   *p = arrow_arena_alloc(arena, len + 1, err);

	if (p != NULL)
	{
		memcpy(p, s, len);
		p[len] = '\0';
	}
	return p;
}

bool
arrow_utf8_valid(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *) str;
	size_t		i = 0;

	while (i < len)
	{
		unsigned char c = s[i];
		uint32_t	cp;
		int			n,
					k;

		if (c < 0x80)
		{
			i++;
			continue;
		}
		if (c >= 0xC2 && c <= 0xDF)
			n = 1, cp = c & 0x1F;
		else if (c >= 0xE0 && c <= 0xEF)
			n = 2, cp = c & 0x0F;
		else if (c >= 0xF0 && c <= 0xF4)
			n = 3, cp = c & 0x07;
		else
			return false;
		if (len - i <= (size_t) n)
			return false;
		for (k = 1; k <= n; k++)
		{
			if ((s[i + k] & 0xC0) != 0x80)
				return false;
			cp = (cp << 6) | (s[i + k] & 0x3F);
		}
		if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10FFFF ||
			(cp >= 0xD800 && cp <= 0xDFFF))
			return false;
		i += n + 1;
	}
	return true;
}

/* A string field copied into the arena; "" when absent. */
static int
get_string_copy(const FbrTable *t, int id, ArrowArena *arena, char **out,
				bool *present, ArrowError *err)
{
	const char *s;
	uint32_t	len;

	if (fbr_get_string(t, id, &s, &len, present) < 0)
		return -1;
	*out = arena_strndup(arena, s, len, err);
	return *out ? 0 : -1;
}

static int
decode_metadata(const FbrTable *t, int id, ArrowArena *arena,
				int *n_out, ArrowKeyValue **out, ArrowError *err)
{
	FbrVector	v;
	bool		present;
	uint32_t	i;

	*n_out = 0;
	*out = NULL;
	if (fbr_get_vector(t, id, 4, &v, &present) < 0)
		return -1;
	if (v.n == 0)
		return 0;
	*out = arrow_arena_alloc(arena, sizeof(ArrowKeyValue) * (size_t) v.n, err);
	if (*out == NULL)
		return -1;
	for (i = 0; i < v.n; i++)
	{
		FbrTable	kv;
		bool		p;

		if (fbr_vector_table(&v, i, &kv) < 0 ||
			get_string_copy(&kv, KV_KEY, arena, &(*out)[i].key, &p, err) < 0 ||
			get_string_copy(&kv, KV_VALUE, arena, &(*out)[i].value, &p, err) < 0)
			return -1;
	}
	*n_out = (int) v.n;
	return 0;
}

/* Decode an Int table (also used for dictionary index types). */
static int
decode_int(const FbrTable *t, ArrowType *type)
{
	int32_t		bw;
	bool		sign;

	if (fbr_get_i32(t, 0, 0, &bw) < 0 || fbr_get_bool(t, 1, false, &sign) < 0)
		return -1;
	type->id = ARROW_TYPE_INT;
	type->bit_width = bw;
	type->is_signed = sign;
	return 0;
}

/*
 * Decode the type table of a field; tt is the union's type byte.  A missing
 * table reads as an empty one, giving every parameter its default.
 */
static int
decode_type(const FbrTable *ft, uint8_t tt, ArrowArena *arena, ArrowType *type,
			ArrowError *err)
{
	FbrTable	t;
	bool		present;
	int16_t		s16;
	int32_t		i32;
	FbrTable	empty;

	memset(type, 0, sizeof(*type));
	type->id = (ArrowTypeId) tt;
	if (fbr_get_table(ft, FIELD_TYPE, &t, &present) < 0)
		return -1;
	if (!present)
	{
		/* a table whose vtable has no fields: every lookup gives defaults */
		memset(&empty, 0, sizeof(empty));
		empty.r = ft->r;
		empty.vt_len = 4;
		empty.t_len = 4;
		t = empty;
	}

	switch (tt)
	{
		case ARROW_TYPE_INT:
			return decode_int(&t, type);
		case ARROW_TYPE_FLOAT:
			if (fbr_get_i16(&t, 0, 0, &s16) < 0)
				return -1;
			type->precision = (ArrowPrecision) s16;
			break;
		case ARROW_TYPE_DECIMAL:
			if (fbr_get_i32(&t, 0, 0, &type->dec_precision) < 0 ||
				fbr_get_i32(&t, 1, 0, &type->dec_scale) < 0 ||
				fbr_get_i32(&t, 2, 128, &i32) < 0)
				return -1;
			type->bit_width = i32;
			break;
		case ARROW_TYPE_DATE:
			if (fbr_get_i16(&t, 0, ARROW_DATE_MILLISECOND, &s16) < 0)
				return -1;
			type->unit = s16;
			break;
		case ARROW_TYPE_TIME:
			if (fbr_get_i16(&t, 0, ARROW_TIME_MILLISECOND, &s16) < 0 ||
				fbr_get_i32(&t, 1, 32, &i32) < 0)
				return -1;
			type->unit = s16;
			type->bit_width = i32;
			break;
		case ARROW_TYPE_TIMESTAMP:
			{
				const char *tz;
				uint32_t	len;

				if (fbr_get_i16(&t, 0, ARROW_TIME_SECOND, &s16) < 0 ||
					fbr_get_string(&t, 1, &tz, &len, &present) < 0)
					return -1;
				type->unit = s16;
				/* an empty zone means "without zone", as an absent one */
				if (present && len > 0)
				{
					type->timezone = arena_strndup(arena, tz, len, err);
					if (type->timezone == NULL)
						return -1;
				}
				break;
			}
		case ARROW_TYPE_DURATION:
			if (fbr_get_i16(&t, 0, ARROW_TIME_MILLISECOND, &s16) < 0)
				return -1;
			type->unit = s16;
			break;
		case ARROW_TYPE_INTERVAL:
			if (fbr_get_i16(&t, 0, ARROW_INTERVAL_YEAR_MONTH, &s16) < 0)
				return -1;
			type->unit = s16;
			break;
		case ARROW_TYPE_FIXED_SIZE_BINARY:
		case ARROW_TYPE_FIXED_SIZE_LIST:
			if (fbr_get_i32(&t, 0, 0, &type->fixed_size) < 0)
				return -1;
			break;
		case ARROW_TYPE_MAP:
			if (fbr_get_bool(&t, 0, false, &type->keys_sorted) < 0)
				return -1;
			break;
		default:
			/* no parameters we use; unsupported ids are rejected by layout */
			break;
	}
	return 0;
}

static int
decode_field(const FbrTable *ft, int depth, const char *parent,
			 ArrowArena *arena, ArrowField *f, ArrowError *err)
{
	char		path[256];
	FbrTable	dt;
	FbrVector	cv;
	bool		present;
	uint8_t		tt;
	uint32_t	i;

	memset(f, 0, sizeof(*f));
	if (get_string_copy(ft, FIELD_NAME, arena, &f->name, &present, err) < 0 ||
		fbr_get_bool(ft, FIELD_NULLABLE, false, &f->nullable) < 0 ||
		fbr_get_u8(ft, FIELD_TYPE_TYPE, 0, &tt) < 0 ||
		decode_type(ft, tt, arena, &f->type, err) < 0)
		return -1;
	if (!arrow_utf8_valid(f->name, strlen(f->name)))
		return arrow_error(err, ARROW_ERR_CORRUPT, fbr_table_offset(ft),
						   "%s: a field name is not valid UTF-8 (field table at offset %" PRId64 ")",
						   ft->r->name, (int64_t) fbr_table_offset(ft));
	/* dotted column name for messages */
	if (parent)
		snprintf(path, sizeof(path), "%s.%s", parent, f->name);
	else
		snprintf(path, sizeof(path), "%s", f->name);

	if (fbr_get_table(ft, FIELD_DICTIONARY, &dt, &present) < 0)
		return -1;
	if (present)
	{
		FbrTable	it;
		bool		has_index;

		f->has_dict = true;
		if (fbr_get_i64(&dt, DICT_ID, 0, &f->dict.id) < 0 ||
			fbr_get_bool(&dt, DICT_IS_ORDERED, false, &f->dict.ordered) < 0 ||
			fbr_get_table(&dt, DICT_INDEX_TYPE, &it, &has_index) < 0)
			return -1;
		if (has_index)
		{
			if (decode_int(&it, &f->dict.index_type) < 0)
				return -1;
		}
		else
		{
			f->dict.index_type.id = ARROW_TYPE_INT;
			f->dict.index_type.bit_width = 32;
			f->dict.index_type.is_signed = true;
		}
	}

	if (fbr_get_vector(ft, FIELD_CHILDREN, 4, &cv, &present) < 0)
		return -1;
	if (cv.n > 0)
	{
		/* bound the recursion before following the children */
		if (depth >= ARROW_MAX_NESTING)
			return arrow_error(err, ARROW_ERR_UNSUPPORTED, fbr_table_offset(ft),
							   "%s: column \"%.200s\": fields nested more than %d levels deep",
							   ft->r->name, path, ARROW_MAX_NESTING);
		if (cv.n > INT_MAX / sizeof(ArrowField))
			return arrow_error(err, ARROW_ERR_CORRUPT, fbr_table_offset(ft),
							   "%s: column \"%.200s\": %" PRIu32 " children",
							   ft->r->name, path, cv.n);
		f->children = arrow_arena_alloc(arena, sizeof(ArrowField) * (size_t) cv.n,
										err);
		if (f->children == NULL)
			return -1;
		for (i = 0; i < cv.n; i++)
		{
			FbrTable	ct;

			if (fbr_vector_table(&cv, i, &ct) < 0 ||
				decode_field(&ct, depth + 1, path, arena, &f->children[i], err) < 0)
				return -1;
		}
		f->n_children = (int) cv.n;
	}

	return decode_metadata(ft, FIELD_METADATA, arena, &f->n_metadata,
						   &f->metadata, err);
}

int
arrow_decode_schema(const FbrTable *t, ArrowArena *arena, ArrowSchema *schema,
					ArrowError *err)
{
	int16_t		endianness;
	FbrVector	fv;
	bool		present;
	uint32_t	i;

	memset(schema, 0, sizeof(*schema));
	if (fbr_get_i16(t, SCHEMA_ENDIANNESS, 0, &endianness) < 0)
		return -1;
	if (endianness != 0)
		return arrow_error(err, ARROW_ERR_UNSUPPORTED, fbr_table_offset(t),
						   "%s: big-endian Arrow data is not supported",
						   t->r->name);
	if (fbr_get_vector(t, SCHEMA_FIELDS, 4, &fv, &present) < 0)
		return -1;
	if (fv.n > INT_MAX / sizeof(ArrowField))
		return arrow_error(err, ARROW_ERR_CORRUPT, fbr_table_offset(t),
						   "%s: schema has %" PRIu32 " fields", t->r->name, fv.n);
	if (fv.n > 0)
	{
		schema->fields = arrow_arena_alloc(arena, sizeof(ArrowField) * (size_t) fv.n,
										   err);
		if (schema->fields == NULL)
			return -1;
	}
	for (i = 0; i < fv.n; i++)
	{
		FbrTable	ft;

		if (fbr_vector_table(&fv, i, &ft) < 0 ||
			decode_field(&ft, 1, NULL, arena, &schema->fields[i], err) < 0)
			return -1;
	}
	schema->n_fields = (int) fv.n;
	return decode_metadata(t, SCHEMA_METADATA, arena, &schema->n_metadata,
						   &schema->metadata, err);
}

/* -------------------------------------------------------------- layout */

int
arrow_type_n_buffers(const ArrowType *type)
{
	switch (type->id)
	{
		case ARROW_TYPE_NULL:
			return 0;
		case ARROW_TYPE_STRUCT:
		case ARROW_TYPE_FIXED_SIZE_LIST:
			return 1;
		case ARROW_TYPE_UTF8:
		case ARROW_TYPE_BINARY:
		case ARROW_TYPE_LARGE_UTF8:
		case ARROW_TYPE_LARGE_BINARY:
			return 3;
		default:
			return 2;
	}
}

static const char *
type_id_name(ArrowTypeId id)
{
	switch (id)
	{
		case ARROW_TYPE_UNION:
			return "Union";
		case ARROW_TYPE_RUN_END_ENCODED:
			return "RunEndEncoded";
		case ARROW_TYPE_BINARY_VIEW:
			return "BinaryView";
		case ARROW_TYPE_UTF8_VIEW:
			return "Utf8View";
		case ARROW_TYPE_LIST_VIEW:
			return "ListView";
		case ARROW_TYPE_LARGE_LIST_VIEW:
			return "LargeListView";
		default:
			return NULL;
	}
}

typedef struct LayoutCtx
{
	ArrowError *err;
	char		path[256];		/* dotted name of the column, for messages */
} LayoutCtx;

static int
layout_fail(LayoutCtx *lc, ArrowErrorCode code, const char *fmt,...)
	__attribute__((format(printf, 3, 4)));

static int
layout_fail(LayoutCtx *lc, ArrowErrorCode code, const char *fmt,...)
{
	char		where[300];
	va_list		ap;
	int			rc;

	snprintf(where, sizeof(where), "column \"%s\"", lc->path);
	va_start(ap, fmt);
	rc = arrow_verror_in(lc->err, code, -1, where, fmt, ap);
	va_end(ap);
	return rc;
}

/* Check that a field's type parameters and children make sense. */
static int
check_type(LayoutCtx *lc, const ArrowField *f)
{
	const ArrowType *t = &f->type;
	int			want_children = 0;

	switch (t->id)
	{
		case ARROW_TYPE_NULL:
		case ARROW_TYPE_BINARY:
		case ARROW_TYPE_UTF8:
		case ARROW_TYPE_BOOL:
		case ARROW_TYPE_LARGE_BINARY:
		case ARROW_TYPE_LARGE_UTF8:
			break;
		case ARROW_TYPE_INT:
			if (t->bit_width != 8 && t->bit_width != 16 &&
				t->bit_width != 32 && t->bit_width != 64)
				return layout_fail(lc, ARROW_ERR_CORRUPT,
								   "integer type of %d bits", t->bit_width);
			break;
		case ARROW_TYPE_FLOAT:
			if (t->precision < ARROW_PRECISION_HALF ||
				t->precision > ARROW_PRECISION_DOUBLE)
				return layout_fail(lc, ARROW_ERR_CORRUPT,
								   "floating point precision %d", (int) t->precision);
			break;
		case ARROW_TYPE_DECIMAL:
			if (t->bit_width == 256)
				return layout_fail(lc, ARROW_ERR_UNSUPPORTED,
								   "type Decimal256 is not supported");
			if (t->bit_width != 128)
				return layout_fail(lc, ARROW_ERR_UNSUPPORTED,
								   "decimal of %d bits is not supported", t->bit_width);
			if (t->dec_precision < 1 || t->dec_precision > 38)
				return layout_fail(lc, ARROW_ERR_CORRUPT,
								   "decimal128(%d, %d) is out of range",
								   t->dec_precision, t->dec_scale);
			break;
		case ARROW_TYPE_DATE:
			if (t->unit != ARROW_DATE_DAY && t->unit != ARROW_DATE_MILLISECOND)
				return layout_fail(lc, ARROW_ERR_CORRUPT, "date unit %d", t->unit);
			break;
		case ARROW_TYPE_TIME:
			if (t->unit < ARROW_TIME_SECOND || t->unit > ARROW_TIME_NANOSECOND ||
				t->bit_width != (t->unit <= ARROW_TIME_MILLISECOND ? 32 : 64))
				return layout_fail(lc, ARROW_ERR_CORRUPT,
								   "time unit %d with %d bits", t->unit, t->bit_width);
			break;
		case ARROW_TYPE_TIMESTAMP:
		case ARROW_TYPE_DURATION:
			if (t->unit < ARROW_TIME_SECOND || t->unit > ARROW_TIME_NANOSECOND)
				return layout_fail(lc, ARROW_ERR_CORRUPT, "time unit %d", t->unit);
			break;
		case ARROW_TYPE_INTERVAL:
			if (t->unit < ARROW_INTERVAL_YEAR_MONTH ||
				t->unit > ARROW_INTERVAL_MONTH_DAY_NANO)
				return layout_fail(lc, ARROW_ERR_CORRUPT, "interval unit %d", t->unit);
			break;
		case ARROW_TYPE_FIXED_SIZE_BINARY:
			if (t->fixed_size < 0)
				return layout_fail(lc, ARROW_ERR_CORRUPT,
								   "fixed size binary of %d bytes", t->fixed_size);
			break;
		case ARROW_TYPE_FIXED_SIZE_LIST:
			if (t->fixed_size < 0)
				return layout_fail(lc, ARROW_ERR_CORRUPT,
								   "fixed size list of %d elements", t->fixed_size);
			want_children = 1;
			break;
		case ARROW_TYPE_LIST:
		case ARROW_TYPE_LARGE_LIST:
			want_children = 1;
			break;
		case ARROW_TYPE_MAP:
			want_children = 1;
			if (f->n_children == 1 &&
				(f->children[0].type.id != ARROW_TYPE_STRUCT ||
				 f->children[0].n_children != 2 || f->children[0].has_dict))
				return layout_fail(lc, ARROW_ERR_CORRUPT,
								   "map entries are not a struct of key and value");
			break;
		case ARROW_TYPE_STRUCT:
			want_children = -1;
			break;
		default:
			if (type_id_name(t->id))
				return layout_fail(lc, ARROW_ERR_UNSUPPORTED,
								   "type %s is not supported", type_id_name(t->id));
			return layout_fail(lc, ARROW_ERR_UNSUPPORTED,
							   "unknown type id %d", (int) t->id);
	}
	if (want_children >= 0 && f->n_children != want_children)
		return layout_fail(lc, ARROW_ERR_CORRUPT,
						   "type %d has %d children, expected %d",
						   (int) t->id, f->n_children, want_children);
	if (f->has_dict)
	{
		const ArrowType *it = &f->dict.index_type;

		if (it->id != ARROW_TYPE_INT ||
			(it->bit_width != 8 && it->bit_width != 16 &&
			 it->bit_width != 32 && it->bit_width != 64))
			return layout_fail(lc, ARROW_ERR_CORRUPT,
							   "dictionary index type is not an integer type");
	}
	return 0;
}

static int	layout_field(LayoutCtx *lc, ArrowField *f, int *node, int *buf,
						 int depth, bool in_dict);

/* Lay out the children of f starting at *node, *buf. */
static int
layout_children(LayoutCtx *lc, ArrowField *f, int *node, int *buf, int depth,
				bool in_dict)
{
	size_t		plen = strlen(lc->path);
	int			i;

	for (i = 0; i < f->n_children; i++)
	{
		snprintf(lc->path + plen, sizeof(lc->path) - plen, ".%s",
				 f->children[i].name);
		if (layout_field(lc, &f->children[i], node, buf, depth + 1, in_dict) < 0)
			return -1;
		lc->path[plen] = '\0';
	}
	return 0;
}

/*
 * Assign node and buffer positions to f and its descendants in pre-order.
 * A dictionary-encoded field occupies one node and two buffers (validity,
 * indices) of the record batch; its children describe the dictionary's
 * values and are laid out as they appear in a dictionary batch, whose single
 * column is the value field at node 0, buffer 0.
 */
static int
layout_field(LayoutCtx *lc, ArrowField *f, int *node, int *buf, int depth,
			 bool in_dict)
{
	int			node0 = *node;
	int			buf0 = *buf;

	if (depth > ARROW_MAX_NESTING)
		return layout_fail(lc, ARROW_ERR_UNSUPPORTED,
						   "fields nested more than %d levels deep",
						   ARROW_MAX_NESTING);
	if (f->type.id == ARROW_TYPE_UTF8_VIEW || f->type.id == ARROW_TYPE_BINARY_VIEW)
	{
		/* read as LargeUtf8/LargeBinary (ArrowType.view) */
		f->type.id = f->type.id == ARROW_TYPE_UTF8_VIEW ? ARROW_TYPE_LARGE_UTF8
			: ARROW_TYPE_LARGE_BINARY;
		f->type.view = true;
	}
	if (f->type.id == ARROW_TYPE_LIST_VIEW || f->type.id == ARROW_TYPE_LARGE_LIST_VIEW)
	{
		/* read as List/LargeList (ArrowType.list_view) */
		f->type.id = f->type.id == ARROW_TYPE_LIST_VIEW ? ARROW_TYPE_LIST
			: ARROW_TYPE_LARGE_LIST;
		f->type.list_view = true;
	}
	if (f->type.view && (in_dict || f->has_dict || f->n_children != 0))
		return layout_fail(lc, ARROW_ERR_UNSUPPORTED,
						   "dictionary-encoded string views are not supported");
	if (check_type(lc, f) < 0)
		return -1;
	/* counts are bounded by the metadata size, but stay safe regardless */
	if (*node > INT_MAX / 2 || *buf > INT_MAX / 2)
		return layout_fail(lc, ARROW_ERR_CORRUPT, "too many fields");

	f->node_index = *node;
	f->buffer_index = *buf;
	if (f->has_dict)
	{
		int			dnode = 1;
		int			dbuf = arrow_type_n_buffers(&f->type);

		if (in_dict)
			return layout_fail(lc, ARROW_ERR_UNSUPPORTED,
							   "dictionary-encoded fields within dictionary values are not supported");
		f->n_buffers = 2;
		if (layout_children(lc, f, &dnode, &dbuf, depth, true) < 0)
			return -1;
		*node += 1;
		*buf += 2;
	}
	else
	{
		/* a view field: validity and views (its data buffers are variadic) */
		f->n_buffers = f->type.view ? 2 : f->type.list_view ? 3 :
			arrow_type_n_buffers(&f->type);
		*node += 1;
		*buf += f->n_buffers;
		if (layout_children(lc, f, node, buf, depth, in_dict) < 0)
			return -1;
	}
	f->n_nodes_total = *node - node0;
	f->n_buffers_total = *buf - buf0;
	return 0;
}

/* fields of f's tree read from string views */
static int
count_views(const ArrowField *f)
{
	int			n = f->type.view ? 1 : 0,
				i;

	for (i = 0; i < f->n_children; i++)
		n += count_views(&f->children[i]);
	return n;
}

int
arrow_schema_layout(ArrowSchema *schema, ArrowError *err)
{
	LayoutCtx	lc;
	int			node = 0,
				buf = 0,
				i;

	lc.err = err;
	for (i = 0; i < schema->n_fields; i++)
	{
		snprintf(lc.path, sizeof(lc.path), "%s", schema->fields[i].name);
		if (layout_field(&lc, &schema->fields[i], &node, &buf, 1, false) < 0)
			return -1;
	}
	schema->n_nodes = node;
	schema->n_buffers = buf;
	schema->n_view_fields = 0;
	for (i = 0; i < schema->n_fields; i++)
		schema->n_view_fields += count_views(&schema->fields[i]);
	return 0;
}

void
arrow_dict_value_field(const ArrowField *field, ArrowField *out)
{
	int			i;

	*out = *field;
	out->has_dict = false;
	memset(&out->dict, 0, sizeof(out->dict));
	out->node_index = 0;
	out->buffer_index = 0;
	out->n_buffers = arrow_type_n_buffers(&field->type);
	out->n_nodes_total = 1;
	out->n_buffers_total = out->n_buffers;
	for (i = 0; i < field->n_children; i++)
	{
		out->n_nodes_total += field->children[i].n_nodes_total;
		out->n_buffers_total += field->children[i].n_buffers_total;
	}
}

/* ----------------------------------------------------------- utilities */

const char *
arrow_field_metadata(const ArrowField *field, const char *key)
{
	int			i;

	for (i = 0; i < field->n_metadata; i++)
		if (strcmp(field->metadata[i].key, key) == 0)
			return field->metadata[i].value;
	return NULL;
}

int
arrow_type_byte_width(const ArrowType *type)
{
	switch (type->id)
	{
		case ARROW_TYPE_INT:
		case ARROW_TYPE_DECIMAL:
		case ARROW_TYPE_TIME:
			return type->bit_width / 8;
		case ARROW_TYPE_FLOAT:
			return type->precision == ARROW_PRECISION_HALF ? 2 :
				type->precision == ARROW_PRECISION_SINGLE ? 4 : 8;
		case ARROW_TYPE_DATE:
			return type->unit == ARROW_DATE_DAY ? 4 : 8;
		case ARROW_TYPE_TIMESTAMP:
		case ARROW_TYPE_DURATION:
			return 8;
		case ARROW_TYPE_INTERVAL:
			return type->unit == ARROW_INTERVAL_YEAR_MONTH ? 4 :
				type->unit == ARROW_INTERVAL_DAY_TIME ? 8 : 16;
		case ARROW_TYPE_FIXED_SIZE_BINARY:
			return type->fixed_size;
		default:
			return 0;
	}
}

/* Append to a bounded string buffer, truncating silently. */
typedef struct StrBuf
{
	char	   *buf;
	size_t		len;
	size_t		used;
} StrBuf;

static void
sb_printf(StrBuf *sb, const char *fmt,...) __attribute__((format(printf, 2, 3)));

static void
sb_printf(StrBuf *sb, const char *fmt,...)
{
	va_list		ap;
	int			n;

	if (sb->used + 1 >= sb->len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(sb->buf + sb->used, sb->len - sb->used, fmt, ap);
	va_end(ap);
	if (n > 0)
		sb->used += (size_t) n;
	if (sb->used >= sb->len)
		sb->used = sb->len - 1;
}

static const char *
time_unit_name(int unit)
{
	static const char *const names[] = {"s", "ms", "us", "ns"};

	return unit >= 0 && unit <= 3 ? names[unit] : "?";
}

static void type_string(StrBuf *sb, const ArrowField *f, bool values_only,
						int depth);

static void
int_string(StrBuf *sb, const ArrowType *t)
{
	sb_printf(sb, "%sint%d", t->is_signed ? "" : "u", t->bit_width);
}

static void
child_string(StrBuf *sb, const ArrowField *c, int depth)
{
	sb_printf(sb, "%s: ", c->name);
	type_string(sb, c, false, depth + 1);
}

static void
type_string(StrBuf *sb, const ArrowField *f, bool values_only, int depth)
{
	const ArrowType *t = &f->type;
	int			i;

	if (depth > ARROW_MAX_NESTING + 1)
	{
		sb_printf(sb, "...");
		return;
	}
	if (f->has_dict && !values_only)
	{
		sb_printf(sb, "dictionary<values=");
		type_string(sb, f, true, depth);
		sb_printf(sb, ", indices=");
		int_string(sb, &f->dict.index_type);
		sb_printf(sb, "%s>", f->dict.ordered ? ", ordered" : "");
		return;
	}
	switch (t->id)
	{
		case ARROW_TYPE_NULL:
			sb_printf(sb, "null");
			break;
		case ARROW_TYPE_INT:
			int_string(sb, t);
			break;
		case ARROW_TYPE_FLOAT:
			sb_printf(sb, "%s", t->precision == ARROW_PRECISION_HALF ? "halffloat" :
					  t->precision == ARROW_PRECISION_SINGLE ? "float" : "double");
			break;
		case ARROW_TYPE_BINARY:
			sb_printf(sb, "binary");
			break;
		case ARROW_TYPE_UTF8:
			sb_printf(sb, "utf8");
			break;
		case ARROW_TYPE_LARGE_BINARY:
			sb_printf(sb, "large_binary");
			break;
		case ARROW_TYPE_LARGE_UTF8:
			sb_printf(sb, "large_utf8");
			break;
		case ARROW_TYPE_BOOL:
			sb_printf(sb, "bool");
			break;
		case ARROW_TYPE_DECIMAL:
			sb_printf(sb, "decimal%d(%d, %d)", t->bit_width, t->dec_precision,
					  t->dec_scale);
			break;
		case ARROW_TYPE_DATE:
			sb_printf(sb, "%s", t->unit == ARROW_DATE_DAY ? "date32[day]" : "date64[ms]");
			break;
		case ARROW_TYPE_TIME:
			sb_printf(sb, "time%d[%s]", t->bit_width, time_unit_name(t->unit));
			break;
		case ARROW_TYPE_TIMESTAMP:
			if (t->timezone)
				sb_printf(sb, "timestamp[%s, tz=%s]", time_unit_name(t->unit),
						  t->timezone);
			else
				sb_printf(sb, "timestamp[%s]", time_unit_name(t->unit));
			break;
		case ARROW_TYPE_DURATION:
			sb_printf(sb, "duration[%s]", time_unit_name(t->unit));
			break;
		case ARROW_TYPE_INTERVAL:
			sb_printf(sb, "%s", t->unit == ARROW_INTERVAL_YEAR_MONTH ? "month_interval" :
					  t->unit == ARROW_INTERVAL_DAY_TIME ? "day_time_interval" :
					  "month_day_nano_interval");
			break;
		case ARROW_TYPE_FIXED_SIZE_BINARY:
			sb_printf(sb, "fixed_size_binary[%d]", t->fixed_size);
			break;
		case ARROW_TYPE_LIST:
		case ARROW_TYPE_LARGE_LIST:
		case ARROW_TYPE_FIXED_SIZE_LIST:
			sb_printf(sb, "%slist<", t->id == ARROW_TYPE_LARGE_LIST ? "large_" :
					  t->id == ARROW_TYPE_FIXED_SIZE_LIST ? "fixed_size_" : "");
			if (f->n_children > 0)
				child_string(sb, &f->children[0], depth);
			sb_printf(sb, ">");
			if (t->id == ARROW_TYPE_FIXED_SIZE_LIST)
				sb_printf(sb, "[%d]", t->fixed_size);
			break;
		case ARROW_TYPE_MAP:
			sb_printf(sb, "map<");
			if (f->n_children == 1 && f->children[0].n_children == 2)
			{
				type_string(sb, &f->children[0].children[0], false, depth + 2);
				sb_printf(sb, ", ");
				type_string(sb, &f->children[0].children[1], false, depth + 2);
			}
			sb_printf(sb, "%s>", t->keys_sorted ? ", keys_sorted" : "");
			break;
		case ARROW_TYPE_STRUCT:
			sb_printf(sb, "struct<");
			for (i = 0; i < f->n_children; i++)
			{
				if (i > 0)
					sb_printf(sb, ", ");
				child_string(sb, &f->children[i], depth);
			}
			sb_printf(sb, ">");
			break;
		default:
			if (type_id_name(t->id))
				sb_printf(sb, "%s", type_id_name(t->id));
			else
				sb_printf(sb, "unknown type %d", (int) t->id);
			break;
	}
}

char *
arrow_type_string(const ArrowField *field, char *buf, size_t len)
{
	StrBuf		sb;

	if (len == 0)
		return buf;
	sb.buf = buf;
	sb.len = len;
	sb.used = 0;
	buf[0] = '\0';
	type_string(&sb, field, false, 0);
	return buf;
}

/* --------------------------------------------------------------- copying */

static int
copy_metadata(ArrowArena *arena, int n, const ArrowKeyValue *src,
			  ArrowKeyValue **dst, ArrowError *err)
{
	int			i;

	*dst = NULL;
	if (n <= 0)
		return 0;
	*dst = arrow_arena_alloc(arena, sizeof(ArrowKeyValue) * (size_t) n, err);
	if (*dst == NULL)
		return -1;
	for (i = 0; i < n; i++)
	{
		(*dst)[i].key = arrow_arena_strdup(arena, src[i].key ? src[i].key : "", err);
		(*dst)[i].value = arrow_arena_strdup(arena, src[i].value ? src[i].value : "",
											 err);
		if ((*dst)[i].key == NULL || (*dst)[i].value == NULL)
			return -1;
	}
	return 0;
}

static int
copy_field(ArrowArena *arena, ArrowField *dst, const ArrowField *src,
		   int depth, ArrowError *err)
{
	int			i;

	if (depth > ARROW_MAX_NESTING + 1)
		return arrow_error(err, ARROW_ERR_INVALID, -1,
						   "column \"%s\": fields nested too deep to copy",
						   src->name ? src->name : "");
	*dst = *src;
	dst->name = arrow_arena_strdup(arena, src->name ? src->name : "", err);
	if (dst->name == NULL)
		return -1;
	if (src->type.timezone)
	{
		dst->type.timezone = arrow_arena_strdup(arena, src->type.timezone, err);
		if (dst->type.timezone == NULL)
			return -1;
	}
	if (copy_metadata(arena, src->n_metadata, src->metadata, &dst->metadata,
					  err) < 0)
		return -1;
	dst->children = NULL;
	if (src->n_children > 0)
	{
		dst->children = arrow_arena_alloc(arena,
										  sizeof(ArrowField) * (size_t) src->n_children,
										  err);
		if (dst->children == NULL)
			return -1;
		for (i = 0; i < src->n_children; i++)
			if (copy_field(arena, &dst->children[i], &src->children[i],
						   depth + 1, err) < 0)
				return -1;
	}
	return 0;
}

int
arrow_schema_copy(ArrowArena *arena, ArrowSchema *dst, const ArrowSchema *src,
				  ArrowError *err)
{
	int			i;

	*dst = *src;
	dst->fields = NULL;
	if (src->n_fields > 0)
	{
		dst->fields = arrow_arena_alloc(arena,
										sizeof(ArrowField) * (size_t) src->n_fields,
										err);
		if (dst->fields == NULL)
			return -1;
	}
	for (i = 0; i < src->n_fields; i++)
		if (copy_field(arena, &dst->fields[i], &src->fields[i], 1, err) < 0)
			return -1;
	return copy_metadata(arena, src->n_metadata, src->metadata, &dst->metadata,
						 err);
}
