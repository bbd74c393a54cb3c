/*
 * arrow_types.c — the Arrow → PostgreSQL type mapping of DESIGN.md (read
 * side), as PostgreSQL type names.
 *
 * This is the mapping from the Arrow type alone; a field's "pg_type"
 * metadata (written by pgwarp dump and INSERT) may name a more precise type
 * (varchar(n), json, uuid), which the FDW checks against this mapping before
 * using it.  GeoArrow fields (geoarrow.point, geoarrow.wkb) map to PostGIS's
 * geometry where PostGIS is installed in the database (arrow_geo.c), else
 * to their storage type's mapping.
 */
#include "postgres.h"

#include "pg_warp.h"
#include "fdw/arrow_fdw.h"

static const char *
int_type_name(const ArrowType *t)
{
	switch (t->bit_width)
	{
		case 8:
			return "smallint";
		case 16:
			return t->is_signed ? "smallint" : "integer";
		case 32:
			return t->is_signed ? "integer" : "bigint";
		case 64:
			return t->is_signed ? "bigint" : "numeric";
	}
	return NULL;
}

/*
 * Write the PostgreSQL type for an Arrow field into buf.  Returns false, with
 * *why_not set, when the type has no mapping.  Struct and Map fields map to
 * composite types that IMPORT FOREIGN SCHEMA creates; here they are named
 * "record" and "record[]".
 */
bool
pgwarp_arrow_pg_type_name(const ArrowField *field, char *buf, size_t len,
						  const char **why_not)
{
	const ArrowType *t = &field->type;
	const char *name = NULL;
	char		elem[NAMEDATALEN * 4];

	*why_not = NULL;
	/* GeoArrow points and WKB are geometry where PostGIS is installed */
	if (arrow_geo_pg_type_name(field, buf, len))
		return true;
	switch (t->id)
	{
		case ARROW_TYPE_INT:
			name = int_type_name(t);
			break;
		case ARROW_TYPE_FLOAT:
			name = t->precision == ARROW_PRECISION_DOUBLE ? "double precision" : "real";
			break;
		case ARROW_TYPE_DECIMAL:
			if (t->bit_width != 128)
			{
				*why_not = "only 128-bit decimals are supported";
				return false;
			}
			snprintf(buf, len, "numeric(%d,%d)", t->dec_precision, t->dec_scale);
			return true;
		case ARROW_TYPE_BOOL:
			name = "boolean";
			break;
		case ARROW_TYPE_DATE:
			name = "date";
			break;
		case ARROW_TYPE_TIME:
			name = "time without time zone";
			break;
		case ARROW_TYPE_TIMESTAMP:
			name = t->timezone ? "timestamp with time zone" : "timestamp without time zone";
			break;
		case ARROW_TYPE_INTERVAL:
		case ARROW_TYPE_DURATION:
			name = "interval";
			break;
		case ARROW_TYPE_UTF8:
		case ARROW_TYPE_LARGE_UTF8:
		case ARROW_TYPE_NULL:
			name = "text";
			break;
		case ARROW_TYPE_BINARY:
		case ARROW_TYPE_LARGE_BINARY:
		case ARROW_TYPE_FIXED_SIZE_BINARY:
			name = "bytea";
			break;
		case ARROW_TYPE_LIST:
		case ARROW_TYPE_LARGE_LIST:
		case ARROW_TYPE_FIXED_SIZE_LIST:
			if (field->n_children != 1)
			{
				*why_not = "list without an element field";
				return false;
			}
			switch (field->children[0].type.id)
			{
				case ARROW_TYPE_LIST:
				case ARROW_TYPE_LARGE_LIST:
				case ARROW_TYPE_FIXED_SIZE_LIST:
				case ARROW_TYPE_MAP:
					/* ragged, so no PostgreSQL array: the JSON of the value */
					strlcpy(buf, "jsonb", len);
					return true;
				default:
					break;
			}
			if (!pgwarp_arrow_pg_type_name(&field->children[0], elem, sizeof(elem), why_not))
				return false;
			snprintf(buf, len, "%s[]", elem);
			return true;
		case ARROW_TYPE_STRUCT:
			name = "record";
			break;
		case ARROW_TYPE_MAP:
			name = "record[]";
			break;
		default:
			*why_not = "this Arrow type has no PostgreSQL equivalent";
			return false;
	}
	if (name == NULL)
	{
		*why_not = "unsupported integer width";
		return false;
	}
	strlcpy(buf, name, len);
	return true;
}
