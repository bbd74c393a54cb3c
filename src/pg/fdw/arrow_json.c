/*
 * arrow_json.c — nested Arrow values (List, LargeList, FixedSizeList,
 * Struct, Map, of any depth) read as json or jsonb.
 *
 * A column declared json/jsonb over a nested field gets the JSON a user
 * would expect from pyarrow's to_pylist(): lists as arrays (ragged lists of
 * lists included, which a PostgreSQL array cannot hold), structs as
 * objects, maps as arrays of [key, value] pairs.  Scalars inside are first
 * converted to the PostgreSQL type IMPORT FOREIGN SCHEMA would give them
 * (arrow_datum.c's conversions, so their checks and errors apply), then
 * written as PostgreSQL's to_json writes that type: numbers bare (NaN and
 * infinities as strings), booleans, dates and timestamps in ISO 8601
 * (JsonEncodeDateTime), everything else as its text output in a string.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/jsonapi.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/json.h"
#include "utils/lsyscache.h"

#include "fdw/arrow_fdw.h"

struct ArrowJsonPlan
{
	const ArrowField *field;
	int			nchildren;
	struct ArrowJsonPlan *children;
	/* a scalar: its conversion, PostgreSQL type and output function */
	ArrowDatumConv *leaf;
	Oid			typid;
	FmgrInfo	out;
};

/*
 * The PostgreSQL type a scalar inside is converted through: arrow_types.c's
 * mapping, except that every integer goes through bigint (numeric for
 * UInt64) and every float through double precision, whose outputs are the
 * same JSON numbers as the narrower types' would be (a Float32 is written
 * as its exact double value, as pyarrow's to_pylist() gives it).
 */
static Oid
leaf_type(const ArrowType *t)
{
	switch (t->id)
	{
		case ARROW_TYPE_INT:
			return (!t->is_signed && t->bit_width == 64) ? NUMERICOID : INT8OID;
		case ARROW_TYPE_FLOAT:
			return FLOAT8OID;
		case ARROW_TYPE_DECIMAL:
			return NUMERICOID;
		case ARROW_TYPE_BOOL:
			return BOOLOID;
		case ARROW_TYPE_DATE:
			return DATEOID;
		case ARROW_TYPE_TIME:
			return TIMEOID;
		case ARROW_TYPE_TIMESTAMP:
			return t->timezone ? TIMESTAMPTZOID : TIMESTAMPOID;
		case ARROW_TYPE_INTERVAL:
		case ARROW_TYPE_DURATION:
			return INTERVALOID;
		case ARROW_TYPE_UTF8:
		case ARROW_TYPE_LARGE_UTF8:
		case ARROW_TYPE_NULL:
			return TEXTOID;
		case ARROW_TYPE_BINARY:
		case ARROW_TYPE_LARGE_BINARY:
		case ARROW_TYPE_FIXED_SIZE_BINARY:
			return BYTEAOID;
		default:
			return InvalidOid;
	}
}

bool
arrow_json_nested(const ArrowField *field)
{
	switch (field->type.id)
	{
		case ARROW_TYPE_LIST:
		case ARROW_TYPE_LARGE_LIST:
		case ARROW_TYPE_FIXED_SIZE_LIST:
		case ARROW_TYPE_STRUCT:
		case ARROW_TYPE_MAP:
			return true;
		default:
			return false;
	}
}

static const char *
plan_node(ArrowJsonPlan *jp, const ArrowField *field, const char *colname, bool check_only)
{
	int			c;

	jp->field = field;
	if (arrow_json_nested(field))
	{
		if (field->type.id != ARROW_TYPE_STRUCT && field->n_children != 1)
			return "malformed list or map type";
		if (field->type.id == ARROW_TYPE_MAP && field->children[0].n_children != 2)
			return "malformed map type";
		jp->nchildren = field->n_children;
		jp->children = palloc0(sizeof(ArrowJsonPlan) * (field->n_children + 1));
		for (c = 0; c < field->n_children; c++)
		{
			const char *why = plan_node(&jp->children[c], &field->children[c], colname,
										check_only);

			if (why)
				return why;
		}
		return NULL;
	}
	jp->typid = leaf_type(&field->type);
	if (!OidIsValid(jp->typid))
		return "a value inside has no PostgreSQL equivalent";
	if (!check_only)
	{
		Oid			outfn;
		bool		varlena;

		jp->leaf = arrow_datum_conv_create(field, jp->typid, -1, colname);
		getTypeOutputInfo(jp->typid, &outfn, &varlena);
		fmgr_info(outfn, &jp->out);
	}
	return NULL;
}

const char *
arrow_json_check(const ArrowField *field)
{
	ArrowJsonPlan jp;

	memset(&jp, 0, sizeof(jp));
	return plan_node(&jp, field, "", true);
}

ArrowJsonPlan *
arrow_json_plan(const ArrowField *field, const char *colname)
{
	ArrowJsonPlan *jp = palloc0(sizeof(ArrowJsonPlan));
	const char *why = plan_node(jp, field, colname, false);

	if (why)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
				 errmsg("column \"%s\" cannot read Arrow field \"%s\" as JSON", colname,
						field->name),
				 errdetail("%s", why)));
	return jp;
}

/* a scalar as to_json writes its PostgreSQL type */
static void
render_leaf(ArrowJsonPlan *jp, const ArrowArray *a, int64 i, StringInfo out)
{
	bool		isnull;
	Datum		d = arrow_datum_get(jp->leaf, a, i, &isnull);
	char	   *s;

	if (isnull)
	{
		appendStringInfoString(out, "null");
		return;
	}
	switch (jp->typid)
	{
		case BOOLOID:
			appendStringInfoString(out, DatumGetBool(d) ? "true" : "false");
			return;
		case DATEOID:
		case TIMEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			{
				char		buf[MAXDATELEN + 1];

				JsonEncodeDateTime(buf, d, jp->typid, NULL);
				appendStringInfoChar(out, '"');
				appendStringInfoString(out, buf);
				appendStringInfoChar(out, '"');
				return;
			}
		default:
			break;
	}
	s = OutputFunctionCall(&jp->out, d);
	if ((jp->typid == INT8OID || jp->typid == NUMERICOID || jp->typid == FLOAT8OID) &&
		IsValidJsonNumber(s, strlen(s)))
		appendStringInfoString(out, s);
	else
		escape_json(out, s);
	pfree(s);
}

static void
render(ArrowJsonPlan *jp, const ArrowArray *a, int64 i, StringInfo out)
{
	int64		j = a->offset + i;
	int64		k,
				s,
				e;
	int			c;

	check_stack_depth();
	if (arrow_is_null(a, i))
	{
		appendStringInfoString(out, "null");
		return;
	}
	if (a->dictionary)
	{
		render(jp, a->dictionary, arrow_get_dict_index(a, i), out);
		return;
	}
	switch (jp->field->type.id)
	{
		case ARROW_TYPE_LIST:
		case ARROW_TYPE_LARGE_LIST:
			s = arrow_offset_at(a, i);
			e = arrow_offset_at(a, i + 1);
			appendStringInfoChar(out, '[');
			for (k = s; k < e; k++)
			{
				if (k > s)
					appendStringInfoString(out, ", ");
				render(&jp->children[0], &a->children[0], k, out);
			}
			appendStringInfoChar(out, ']');
			return;
		case ARROW_TYPE_FIXED_SIZE_LIST:
			e = jp->field->type.fixed_size;
			appendStringInfoChar(out, '[');
			for (k = 0; k < e; k++)
			{
				if (k > 0)
					appendStringInfoString(out, ", ");
				render(&jp->children[0], &a->children[0], j * e + k, out);
			}
			appendStringInfoChar(out, ']');
			return;
		case ARROW_TYPE_STRUCT:
			appendStringInfoChar(out, '{');
			for (c = 0; c < jp->nchildren; c++)
			{
				if (c > 0)
					appendStringInfoString(out, ", ");
				escape_json(out, jp->field->children[c].name);
				appendStringInfoString(out, ": ");
				render(&jp->children[c], &a->children[c], j, out);
			}
			appendStringInfoChar(out, '}');
			return;
		case ARROW_TYPE_MAP:
			{
				const ArrowArray *entries = &a->children[0];
				ArrowJsonPlan *ep = &jp->children[0];

				s = arrow_offset_at(a, i);
				e = arrow_offset_at(a, i + 1);
				appendStringInfoChar(out, '[');
				for (k = s; k < e; k++)
				{
					int64		ek = entries->offset + k;

					if (k > s)
						appendStringInfoString(out, ", ");
					appendStringInfoChar(out, '[');
					render(&ep->children[0], &entries->children[0], ek, out);
					appendStringInfoString(out, ", ");
					render(&ep->children[1], &entries->children[1], ek, out);
					appendStringInfoChar(out, ']');
				}
				appendStringInfoChar(out, ']');
				return;
			}
		default:
			render_leaf(jp, a, i, out);
			return;
	}
}

Datum
arrow_json_get(ArrowJsonPlan *jp, const ArrowArray *a, int64 i, Oid typid)
{
	StringInfoData out;
	Datum		d;

	initStringInfo(&out);
	render(jp, a, i, &out);
	if (typid == JSONBOID)
		d = DirectFunctionCall1(jsonb_in, CStringGetDatum(out.data));
	else
		d = PointerGetDatum(cstring_to_text_with_len(out.data, out.len));
	pfree(out.data);
	return d;
}
