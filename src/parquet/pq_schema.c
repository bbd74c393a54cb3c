/*
 * pq_schema.c — a Parquet schema (the flattened tree of schema elements)
 * as an Arrow schema, with what column assembly needs: per leaf its
 * physical type, maximum definition and repetition levels and how its
 * values convert; per Arrow field the levels at which it has a slot, is
 * not null and (lists) has an entry.
 *
 * Mapping (logical type first, then the legacy converted type):
 *   BOOLEAN -> bool; INT32 -> int8/16/32, uint8/16/32, date32, time32[ms],
 *   decimal128; INT64 -> int64, uint64, time64[us|ns], timestamp[ms|us|ns]
 *   (tz "UTC" when isAdjustedToUTC, as the legacy TIMESTAMP_* types are),
 *   decimal128; INT96 -> timestamp[ns]; FLOAT/DOUBLE -> float32/64;
 *   BYTE_ARRAY -> utf8 (STRING, ENUM, JSON), decimal128, binary;
 *   FIXED_LEN_BYTE_ARRAY -> decimal128, float16, interval (INTERVAL),
 *   fixed_size_binary (UUID with pg_type metadata "uuid").
 *   Groups: LIST (3-level and the legacy 2-level forms) -> list, MAP ->
 *   map, others -> struct; a repeated field outside a LIST is a list of
 *   non-null elements.
 */
#include <inttypes.h>
#include <stdio.h>

#include "pq_internal.h"

#define PQ_MAX_DEPTH 48			/* levels must fit in a byte */

typedef struct Lvl
{
	int			def;			/* definition level reached so far */
	int			rep;
	int			seg;			/* list ancestors */
	int			slot_def;		/* entry level of the innermost list */
} Lvl;

typedef struct SchemaCx
{
	PqFile	   *pf;
	const PqFooter *ft;
	ArrowArena *arena;
	const char *name;
	ArrowError *err;
	int			next;			/* next schema element */
	int			top;			/* current top-level field */
	PqNode	   *infos;			/* in creation (pre-order) order */
	ArrowField **info_fields;
	int			n_infos;
	int			cap_infos;
	char		path[1024];
} SchemaCx;

static int
schema_fail(SchemaCx *cx, ArrowErrorCode code, const char *fmt,...)
	__attribute__((format(printf, 3, 4)));

static int
schema_fail(SchemaCx *cx, ArrowErrorCode code, const char *fmt,...)
{
	char		detail[512];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	return arrow_error(cx->err, code, -1, "%s: Parquet schema, column \"%s\": %s",
					   cx->name, cx->path, detail);
}

static int
add_info(SchemaCx *cx, ArrowField *f, Lvl slot, int nonnull_def, int entry_def)
{
	PqNode	   *n;

	if (cx->n_infos >= cx->cap_infos)
		return schema_fail(cx, ARROW_ERR_CORRUPT, "too many fields");
	n = &cx->infos[cx->n_infos];
	n->leaf = cx->pf->n_leaves;
	n->seg = slot.seg;
	n->slot_def = slot.slot_def;
	n->nonnull_def = nonnull_def;
	n->entry_def = entry_def;
	n->nullable = f->nullable;
	cx->info_fields[cx->n_infos++] = f;
	return 0;
}

static int
set_decimal(SchemaCx *cx, ArrowType *t, int32_t precision, int32_t scale)
{
	if (precision < 1 || precision > 38)
		return schema_fail(cx, ARROW_ERR_UNSUPPORTED,
						   "decimal precision %d is not supported (1 to 38)", precision);
	if (scale < 0 || scale > precision)
		return schema_fail(cx, ARROW_ERR_CORRUPT, "decimal(%d, %d) is invalid",
						   precision, scale);
	t->id = ARROW_TYPE_DECIMAL;
	t->bit_width = 128;
	t->dec_precision = precision;
	t->dec_scale = scale;
	return 0;
}

static int
set_int(SchemaCx *cx, ArrowType *t, PqLeaf *leaf, int bits, bool is_signed, int phys)
{
	if ((phys == PQ_INT32 && bits != 8 && bits != 16 && bits != 32) ||
		(phys == PQ_INT64 && bits != 64))
		return schema_fail(cx, ARROW_ERR_CORRUPT, "integer of %d bits stored in %s",
						   bits, phys == PQ_INT32 ? "INT32" : "INT64");
	t->id = ARROW_TYPE_INT;
	t->bit_width = bits;
	t->is_signed = is_signed;
	leaf->unsigned_int = !is_signed;
	if (bits == 8)
		leaf->conv = is_signed ? PQ_CONV_I8 : PQ_CONV_U8;
	else if (bits == 16)
		leaf->conv = is_signed ? PQ_CONV_I16 : PQ_CONV_U16;
	else
		leaf->conv = bits == 32 ? PQ_CONV_COPY4 : PQ_CONV_COPY8;
	return 0;
}

static int
time_unit(SchemaCx *cx, int unit)
{
	if (unit == 1)
		return ARROW_TIME_MILLISECOND;
	if (unit == 2)
		return ARROW_TIME_MICROSECOND;
	if (unit == 3)
		return ARROW_TIME_NANOSECOND;
	return schema_fail(cx, ARROW_ERR_CORRUPT, "unknown time unit %d", unit);
}

/* whether the integer logical / converted type is set; its width/sign */
static bool
int_annotation(const PqSchemaElem *e, int *bits, bool *is_signed)
{
	if (e->logical.kind == PQ_LT_INTEGER)
	{
		*bits = e->logical.bit_width;
		*is_signed = e->logical.is_signed;
		return true;
	}
	if (e->converted >= PQ_CT_UINT_8 && e->converted <= PQ_CT_INT_64)
	{
		static const int widths[] = {8, 16, 32, 64};

		*bits = widths[(e->converted - PQ_CT_UINT_8) % 4];
		*is_signed = e->converted >= PQ_CT_INT_8;
		return true;
	}
	return false;
}

static bool
is_decimal(const PqSchemaElem *e, int32_t *p, int32_t *s)
{
	if (e->logical.kind == PQ_LT_DECIMAL)
	{
		*p = e->logical.precision;
		*s = e->logical.scale;
		return true;
	}
	if (e->converted == PQ_CT_DECIMAL)
	{
		*p = e->precision;
		*s = e->scale;
		return true;
	}
	return false;
}

static int
map_int32(SchemaCx *cx, const PqSchemaElem *e, ArrowType *t, PqLeaf *leaf)
{
	int			bits;
	bool		sg;
	int32_t		p,
				s;

	leaf->conv = PQ_CONV_COPY4;
	if (int_annotation(e, &bits, &sg))
		return set_int(cx, t, leaf, bits, sg, PQ_INT32);
	if (is_decimal(e, &p, &s))
	{
		leaf->conv = PQ_CONV_DEC32;
		return set_decimal(cx, t, p, s);
	}
	if (e->logical.kind == PQ_LT_DATE || e->converted == PQ_CT_DATE)
	{
		t->id = ARROW_TYPE_DATE;
		t->unit = ARROW_DATE_DAY;
		return 0;
	}
	if ((e->logical.kind == PQ_LT_TIME && e->logical.unit == 1) ||
		e->converted == PQ_CT_TIME_MILLIS)
	{
		t->id = ARROW_TYPE_TIME;
		t->unit = ARROW_TIME_MILLISECOND;
		t->bit_width = 32;
		return 0;
	}
	if (e->logical.kind == PQ_LT_UNKNOWN)
	{
		t->id = ARROW_TYPE_NULL;
		leaf->conv = PQ_CONV_NULL;
		return 0;
	}
	if (e->logical.kind != PQ_LT_NONE)
		return schema_fail(cx, ARROW_ERR_UNSUPPORTED, "logical type %d on INT32",
						   e->logical.kind);
	return set_int(cx, t, leaf, 32, true, PQ_INT32);
}

static int
map_int64(SchemaCx *cx, const PqSchemaElem *e, ArrowType *t, PqLeaf *leaf)
{
	int			bits,
				unit;
	bool		sg;
	int32_t		p,
				s;

	leaf->conv = PQ_CONV_COPY8;
	if (int_annotation(e, &bits, &sg))
		return set_int(cx, t, leaf, bits, sg, PQ_INT64);
	if (is_decimal(e, &p, &s))
	{
		leaf->conv = PQ_CONV_DEC64;
		return set_decimal(cx, t, p, s);
	}
	if (e->logical.kind == PQ_LT_TIMESTAMP || e->converted == PQ_CT_TIMESTAMP_MILLIS ||
		e->converted == PQ_CT_TIMESTAMP_MICROS)
	{
		bool		utc = true;

		if (e->logical.kind == PQ_LT_TIMESTAMP)
		{
			unit = time_unit(cx, e->logical.unit);
			utc = e->logical.utc;
		}
		else
			unit = e->converted == PQ_CT_TIMESTAMP_MILLIS ? ARROW_TIME_MILLISECOND :
				ARROW_TIME_MICROSECOND;
		if (unit < 0)
			return -1;
		t->id = ARROW_TYPE_TIMESTAMP;
		t->unit = unit;
		if (utc && (t->timezone = arrow_arena_strdup(cx->arena, "UTC", cx->err)) == NULL)
			return -1;
		return 0;
	}
	if (e->logical.kind == PQ_LT_TIME || e->converted == PQ_CT_TIME_MICROS)
	{
		unit = e->logical.kind == PQ_LT_TIME ? time_unit(cx, e->logical.unit) :
			ARROW_TIME_MICROSECOND;
		if (unit < 0)
			return -1;
		if (unit == ARROW_TIME_MILLISECOND)
			return schema_fail(cx, ARROW_ERR_CORRUPT, "TIME(MILLIS) stored in INT64");
		t->id = ARROW_TYPE_TIME;
		t->unit = unit;
		t->bit_width = 64;
		return 0;
	}
	if (e->logical.kind != PQ_LT_NONE)
		return schema_fail(cx, ARROW_ERR_UNSUPPORTED, "logical type %d on INT64",
						   e->logical.kind);
	return set_int(cx, t, leaf, 64, true, PQ_INT64);
}

static int
set_metadata(SchemaCx *cx, ArrowField *f, const char *key, const char *value)
{
	f->metadata = arrow_arena_alloc(cx->arena, sizeof(ArrowKeyValue), cx->err);
	if (f->metadata == NULL ||
		(f->metadata->key = arrow_arena_strdup(cx->arena, key, cx->err)) == NULL ||
		(f->metadata->value = arrow_arena_strdup(cx->arena, value, cx->err)) == NULL)
		return -1;
	f->n_metadata = 1;
	return 0;
}

static int
map_bytes(SchemaCx *cx, const PqSchemaElem *e, ArrowField *f, PqLeaf *leaf)
{
	ArrowType  *t = &f->type;
	int32_t		p,
				s;
	bool		fixed = e->type == PQ_FIXED_LEN_BYTE_ARRAY;
	int			lk = e->logical.kind;

	if (fixed && (e->type_length < 1 || e->type_length > (1 << 20)))
		return schema_fail(cx, ARROW_ERR_CORRUPT, "FIXED_LEN_BYTE_ARRAY of %d bytes",
						   e->type_length);
	leaf->conv = fixed ? PQ_CONV_FLBA : PQ_CONV_BYTES;
	if (is_decimal(e, &p, &s))
	{
		leaf->conv = PQ_CONV_DECBYTES;
		return set_decimal(cx, t, p, s);
	}
	if (fixed && lk == PQ_LT_FLOAT16)
	{
		if (e->type_length != 2)
			return schema_fail(cx, ARROW_ERR_CORRUPT, "FLOAT16 of %d bytes", e->type_length);
		t->id = ARROW_TYPE_FLOAT;
		t->precision = ARROW_PRECISION_HALF;
		leaf->conv = PQ_CONV_HALF;
		return 0;
	}
	if (fixed && e->converted == PQ_CT_INTERVAL && lk == PQ_LT_NONE)
	{
		if (e->type_length != 12)
			return schema_fail(cx, ARROW_ERR_CORRUPT, "INTERVAL of %d bytes", e->type_length);
		t->id = ARROW_TYPE_INTERVAL;
		t->unit = ARROW_INTERVAL_MONTH_DAY_NANO;
		leaf->conv = PQ_CONV_INTERVAL;
		return 0;
	}
	if (fixed)
	{
		t->id = ARROW_TYPE_FIXED_SIZE_BINARY;
		t->fixed_size = e->type_length;
		if (lk == PQ_LT_UUID)
		{
			if (e->type_length != 16)
				return schema_fail(cx, ARROW_ERR_CORRUPT, "UUID of %d bytes", e->type_length);
			return set_metadata(cx, f, "pg_type", "uuid");
		}
		return 0;
	}
	if (lk == PQ_LT_STRING || lk == PQ_LT_ENUM || lk == PQ_LT_JSON ||
		e->converted == PQ_CT_UTF8 || e->converted == PQ_CT_ENUM ||
		e->converted == PQ_CT_JSON)
	{
		t->id = ARROW_TYPE_UTF8;
		if (lk == PQ_LT_JSON || e->converted == PQ_CT_JSON)
			return set_metadata(cx, f, "pg_type", "jsonb");
		return 0;
	}
	t->id = ARROW_TYPE_BINARY;
	return 0;
}

static int
map_primitive(SchemaCx *cx, const PqSchemaElem *e, ArrowField *f, PqLeaf *leaf)
{
	ArrowType  *t = &f->type;

	leaf->type = e->type;
	leaf->type_length = e->type_length;
	switch (e->type)
	{
		case PQ_BOOLEAN:
			t->id = ARROW_TYPE_BOOL;
			leaf->conv = PQ_CONV_BOOL;
			return 0;
		case PQ_INT32:
			return map_int32(cx, e, t, leaf);
		case PQ_INT64:
			return map_int64(cx, e, t, leaf);
		case PQ_INT96:
			t->id = ARROW_TYPE_TIMESTAMP;
			t->unit = ARROW_TIME_NANOSECOND;
			leaf->conv = PQ_CONV_INT96;
			leaf->type_length = 12;
			return 0;
		case PQ_FLOAT:
		case PQ_DOUBLE:
			t->id = ARROW_TYPE_FLOAT;
			t->precision = e->type == PQ_FLOAT ? ARROW_PRECISION_SINGLE : ARROW_PRECISION_DOUBLE;
			leaf->conv = e->type == PQ_FLOAT ? PQ_CONV_COPY4 : PQ_CONV_COPY8;
			return 0;
		case PQ_BYTE_ARRAY:
		case PQ_FIXED_LEN_BYTE_ARRAY:
			return map_bytes(cx, e, f, leaf);
		default:
			return schema_fail(cx, ARROW_ERR_CORRUPT, "unknown physical type %d", e->type);
	}
}

static int	convert_field(SchemaCx *cx, ArrowField *out, Lvl lv, int depth);
static int	convert_value(SchemaCx *cx, ArrowField *out, Lvl slot, int def, int depth);

static const PqSchemaElem *
next_elem(SchemaCx *cx)
{
	if (cx->next >= cx->ft->n_elems)
	{
		schema_fail(cx, ARROW_ERR_CORRUPT, "schema ends inside a group");
		return NULL;
	}
	return &cx->ft->elems[cx->next];
}

static ArrowField *
new_children(SchemaCx *cx, ArrowField *parent, int n)
{
	parent->children = arrow_arena_alloc(cx->arena, sizeof(ArrowField) * (size_t) n, cx->err);
	parent->n_children = parent->children ? n : 0;
	return parent->children;
}

static int
check_depth(SchemaCx *cx, int depth, Lvl lv)
{
	if (depth > PQ_MAX_DEPTH || lv.def > 250 || lv.rep > 250)
		return schema_fail(cx, ARROW_ERR_UNSUPPORTED, "nested too deeply");
	return 0;
}

/* the path for error messages: parent path + "." + name */
static size_t
push_path(SchemaCx *cx, const char *name)
{
	size_t		len = strlen(cx->path);

	snprintf(cx->path + len, sizeof(cx->path) - len, "%s%s", len ? "." : "", name);
	return len;
}

/* A primitive leaf */
static int
convert_leaf(SchemaCx *cx, const PqSchemaElem *e, ArrowField *out, Lvl slot, int def)
{
	PqFile	   *pf = cx->pf;
	PqLeaf	   *leaf;

	if (pf->n_leaves >= cx->ft->n_elems)
		return schema_fail(cx, ARROW_ERR_CORRUPT, "too many leaves");
	if (add_info(cx, out, slot, def, -1) < 0)
		return -1;
	leaf = &pf->leaves[pf->n_leaves];
	memset(leaf, 0, sizeof(*leaf));
	if (map_primitive(cx, e, out, leaf) < 0)
		return -1;
	leaf->max_def = def;
	leaf->max_rep = slot.rep;
	leaf->field = out;
	leaf->top = cx->top;
	if ((leaf->path = arrow_arena_strdup(cx->arena, cx->path, cx->err)) == NULL)
		return -1;
	pf->n_leaves++;
	return 0;
}

/* A LIST-annotated group (consumed up to its repeated child) */
static int
convert_list(SchemaCx *cx, const PqSchemaElem *g, ArrowField *out, Lvl slot, int def,
			 int depth)
{
	const PqSchemaElem *r;
	ArrowField *child;
	Lvl			in = {def + 1, slot.rep + 1, slot.seg + 1, def + 1};
	bool		three;
	char		tuple[600];

	if (g->num_children != 1)
		return schema_fail(cx, ARROW_ERR_CORRUPT, "LIST group with %d children",
						   g->num_children);
	if ((r = next_elem(cx)) == NULL)
		return -1;
	if (r->repetition != PQ_REPEATED)
		return schema_fail(cx, ARROW_ERR_CORRUPT, "LIST group whose child is not repeated");
	out->type.id = ARROW_TYPE_LIST;
	if (add_info(cx, out, slot, def, def + 1) < 0 || (child = new_children(cx, out, 1)) == NULL)
		return -1;
	snprintf(tuple, sizeof(tuple), "%s_tuple", g->name);
	three = r->num_children == 1 && strcmp(r->name, "array") != 0 &&
		strcmp(r->name, tuple) != 0;
	if (!three)					/* the repeated field is the element */
		return convert_value(cx, child, in, in.def, depth + 1);
	cx->next++;					/* the repeated group; its child is the element */
	return convert_field(cx, child, in, depth + 1);
}

/* A MAP-annotated group */
static int
convert_map(SchemaCx *cx, const PqSchemaElem *g, ArrowField *out, Lvl slot, int def,
			int depth)
{
	const PqSchemaElem *r;
	ArrowField *entries,
			   *kv;
	Lvl			in = {def + 1, slot.rep + 1, slot.seg + 1, def + 1};

	if (g->num_children != 1)
		return schema_fail(cx, ARROW_ERR_CORRUPT, "MAP group with %d children", g->num_children);
	if ((r = next_elem(cx)) == NULL)
		return -1;
	if (r->repetition != PQ_REPEATED || r->num_children != 2)
		return schema_fail(cx, ARROW_ERR_CORRUPT,
						   "MAP group whose child is not a repeated key/value group");
	cx->next++;
	out->type.id = ARROW_TYPE_MAP;
	if (add_info(cx, out, slot, def, def + 1) < 0 ||
		(entries = new_children(cx, out, 1)) == NULL)
		return -1;
	entries->name = r->name;
	entries->type.id = ARROW_TYPE_STRUCT;
	if (add_info(cx, entries, in, in.def, -1) < 0 || (kv = new_children(cx, entries, 2)) == NULL)
		return -1;
	if (convert_field(cx, &kv[0], in, depth + 2) < 0 ||
		convert_field(cx, &kv[1], in, depth + 2) < 0)
		return -1;
	kv[0].nullable = false;		/* Arrow map keys are never null */
	return 0;
}

/* The value of element cx->next with its slot at `slot`, not null at `def` */
static int
convert_value(SchemaCx *cx, ArrowField *out, Lvl slot, int def, int depth)
{
	const PqSchemaElem *e;
	size_t		saved;
	int			rc = 0;
	Lvl			in = {def, slot.rep, slot.seg, slot.slot_def};

	if ((e = next_elem(cx)) == NULL || check_depth(cx, depth, in) < 0)
		return -1;
	cx->next++;
	if (e->num_children > cx->ft->n_elems - cx->next)
		return schema_fail(cx, ARROW_ERR_CORRUPT, "group of %d children, %d elements left",
						   e->num_children, cx->ft->n_elems - cx->next);
	out->name = e->name;
	saved = push_path(cx, e->name);
	if (e->num_children == 0)
	{
		if (e->type < 0)
			rc = schema_fail(cx, ARROW_ERR_CORRUPT, "group without children");
		else
			rc = convert_leaf(cx, e, out, slot, def);
	}
	else if (e->logical.kind == PQ_LT_LIST || e->converted == PQ_CT_LIST)
		rc = convert_list(cx, e, out, slot, def, depth);
	else if (e->logical.kind == PQ_LT_MAP || e->converted == PQ_CT_MAP ||
			 e->converted == PQ_CT_MAP_KEY_VALUE)
		rc = convert_map(cx, e, out, slot, def, depth);
	else
	{
		ArrowField *ch;

		out->type.id = ARROW_TYPE_STRUCT;
		if (add_info(cx, out, slot, def, -1) < 0 ||
			(ch = new_children(cx, out, e->num_children)) == NULL)
			return -1;
		for (int i = 0; rc == 0 && i < e->num_children; i++)
			rc = convert_field(cx, &ch[i], in, depth + 1);
	}
	cx->path[saved] = '\0';
	return rc;
}

/* Element cx->next with its own repetition, its slot at lv */
static int
convert_field(SchemaCx *cx, ArrowField *out, Lvl lv, int depth)
{
	const PqSchemaElem *e;

	if ((e = next_elem(cx)) == NULL || check_depth(cx, depth, lv) < 0)
		return -1;
	if (e->repetition == PQ_REPEATED)
	{
		Lvl			in = {lv.def + 1, lv.rep + 1, lv.seg + 1, lv.def + 1};
		ArrowField *child;

		out->name = e->name;
		out->nullable = false;
		out->type.id = ARROW_TYPE_LIST;
		if (add_info(cx, out, lv, lv.def, lv.def + 1) < 0 ||
			(child = new_children(cx, out, 1)) == NULL)
			return -1;
		child->nullable = false;
		return convert_value(cx, child, in, in.def, depth + 1);
	}
	out->nullable = e->repetition == PQ_OPTIONAL;
	return convert_value(cx, out, lv, lv.def + (out->nullable ? 1 : 0), depth);
}

int
pq_build_schema(PqFile *pf, ArrowArena *arena, ArrowSchema *schema, const char *name,
				ArrowError *err)
{
	SchemaCx	cx;
	const PqFooter *ft = &pf->footer;
	const PqSchemaElem *root = &ft->elems[0];
	int			i;

	for (i = 0; i < ft->n_elems; i++)
		if (ft->elems[i].name && !arrow_utf8_valid(ft->elems[i].name, strlen(ft->elems[i].name)))
			return arrow_error(err, ARROW_ERR_CORRUPT, pf->data_end,
							   "%s: Parquet schema element %d: the name is not valid UTF-8 "
							   "(footer at offset %" PRId64 ")", name, i, pf->data_end);
	memset(&cx, 0, sizeof(cx));
	memset(schema, 0, sizeof(*schema));
	cx.pf = pf;
	cx.ft = ft;
	cx.arena = arena;
	cx.name = name;
	cx.err = err;
	cx.next = 1;
	cx.cap_infos = 2 * ft->n_elems + 2;
	cx.infos = arrow_arena_alloc(arena, sizeof(PqNode) * (size_t) cx.cap_infos, err);
	cx.info_fields = arrow_arena_alloc(arena, sizeof(ArrowField *) * (size_t) cx.cap_infos, err);
	pf->leaves = arrow_arena_alloc(arena, sizeof(PqLeaf) * (size_t) ft->n_elems, err);
	if (root->num_children > ft->n_elems - 1)
		return schema_fail(&cx, ARROW_ERR_CORRUPT, "root has %d children, the schema %d elements",
						   root->num_children, ft->n_elems);
	schema->n_fields = root->num_children;
	schema->fields = arrow_arena_alloc(arena, sizeof(ArrowField) * ((size_t) schema->n_fields + 1), err);
	pf->first_leaf = arrow_arena_alloc(arena, sizeof(int) * ((size_t) schema->n_fields + 1), err);
	pf->n_leaf = arrow_arena_alloc(arena, sizeof(int) * ((size_t) schema->n_fields + 1), err);
	if (!cx.infos || !cx.info_fields || !pf->leaves || !schema->fields || !pf->first_leaf ||
		!pf->n_leaf)
		return -1;
	for (i = 0; i < schema->n_fields; i++)
	{
		Lvl			top = {0, 0, 0, 0};

		cx.top = i;
		cx.path[0] = '\0';
		pf->first_leaf[i] = pf->n_leaves;
		if (convert_field(&cx, &schema->fields[i], top, 1) < 0)
			return -1;
		pf->n_leaf[i] = pf->n_leaves - pf->first_leaf[i];
	}
	if (cx.next != ft->n_elems)
		return arrow_error(err, ARROW_ERR_CORRUPT, -1,
						   "%s: Parquet schema has %d elements, its groups account for %d",
						   name, ft->n_elems, cx.next);
	if (arrow_schema_layout(schema, err) < 0)
		return -1;
	if (schema->n_nodes != cx.n_infos)
		return arrow_error(err, ARROW_ERR_CORRUPT, -1, "%s: Parquet schema layout mismatch", name);
	pf->nodes = arrow_arena_alloc(arena, sizeof(PqNode) * ((size_t) cx.n_infos + 1), err);
	if (pf->nodes == NULL)
		return -1;
	for (i = 0; i < cx.n_infos; i++)
	{
		int			k = cx.info_fields[i]->node_index;

		if (k < 0 || k >= cx.n_infos)
			return arrow_error(err, ARROW_ERR_CORRUPT, -1, "%s: Parquet schema layout mismatch",
							   name);
		pf->nodes[k] = cx.infos[i];
	}
	return 0;
}
