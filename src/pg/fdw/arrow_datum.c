/*
 * arrow_datum.c — Arrow values to PostgreSQL Datums, for the declared type
 * of a foreign table column.
 *
 * A conversion is planned once per scan and column (arrow_datum_conv_create)
 * and applied per value (arrow_datum_get).  What may be declared for an
 * Arrow type (arrow_datum_check_type) follows DESIGN.md's mapping, widened
 * where no value can be lost (Int32 into bigint or numeric, Float32 into
 * float8; every Int into numeric(p, s) with p - s digits enough for the
 * type, UInt64 into numeric(20, 0); Duration into bigint, its count of the
 * unit), plus: Utf8 into any type with a text input function (json, uuid,
 * varchar(n), enums...: the type's own input function checks each value),
 * nested values (lists, structs, maps of any depth) into json or jsonb
 * (arrow_json.c), GeoArrow point and WKB fields into PostGIS geometry
 * (arrow_geo.c), and the Null type into anything.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/transam.h"
#include "catalog/pg_type.h"
#include "datatype/timestamp.h"
#include "fmgr.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"
#include "utils/typcache.h"
#include "utils/uuid.h"

#include "fdw/arrow_fdw.h"
#include "pg_warp.h"

typedef enum ConvOp
{
	CONV_NULL,					/* Arrow Null type: always NULL */
	CONV_INT2,
	CONV_INT4,
	CONV_INT8,
	CONV_INT_NUMERIC,			/* any Int (incl. uint64) to numeric */
	CONV_FLOAT4,
	CONV_FLOAT8,
	CONV_DECIMAL,
	CONV_BOOL,
	CONV_DATE,
	CONV_TIME,
	CONV_TIMESTAMP,				/* also timestamptz: same representation */
	CONV_INTERVAL,
	CONV_DURATION,
	CONV_TEXT,					/* Utf8 to text/varchar without typmod */
	CONV_TEXT_INPUT,			/* Utf8 through the type's input function */
	CONV_BYTEA,
	CONV_UUID,
	CONV_ARRAY,
	CONV_COMPOSITE,
	CONV_MAP,					/* Map: array of (key, value) composites */
	CONV_JSON,					/* a nested value as json or jsonb (arrow_json.c) */
	CONV_GEOMETRY				/* GeoArrow as PostGIS geometry (arrow_geo.c) */
} ConvOp;

struct ArrowDatumConv
{
	ConvOp		op;
	const ArrowField *field;
	Oid			typid;
	int32		typmod;
	const char *colname;
	/* CONV_TEXT_INPUT */
	FmgrInfo	infunc;
	Oid			ioparam;
	/* CONV_ARRAY / CONV_MAP: element type and conversion */
	Oid			elemtype;
	int16		elemlen;
	bool		elembyval;
	char		elemalign;
	struct ArrowDatumConv *elem;
	/* CONV_COMPOSITE: tuple descriptor and per-attribute child index/conv;
	 * map entries match (key, value) by position, structs by name */
	bool		by_position;
	TupleDesc	tupdesc;
	int		   *child_of_attr;
	struct ArrowDatumConv **attrs;
	/* CONV_JSON */
	ArrowJsonPlan *json;
	/* CONV_GEOMETRY */
	ArrowGeoConv *geo;
};

static const char *plan_conv(ArrowDatumConv *conv, const ArrowField *field,
							 Oid typid, int32 typmod);

static bool
int_fits(const ArrowType *t, int bits)
{
	/* signed Int(w) fits in signed bits >= w; unsigned Int(w) needs bits > w */
	return t->is_signed ? t->bit_width <= bits : t->bit_width < bits;
}

/* numeric, or numeric(p, s) with room for the type's every value: p - s
 * digits before the point (a uint64 needs 20, an int64 19) */
static bool
int_fits_numeric(const ArrowType *t, int32 typmod)
{
	int			p,
				s,
				digits;

	if (!pgwarp_numeric_typmod(typmod, &p, &s))
		return true;
	switch (t->bit_width)
	{
		case 8: digits = 3; break;
		case 16: digits = 5; break;
		case 32: digits = 10; break;
		default: digits = t->is_signed ? 19 : 20; break;
	}
	return p - s >= digits;
}

static const char *
plan_scalar(ArrowDatumConv *conv, const ArrowType *t, Oid typid, int32 typmod)
{
	switch (t->id)
	{
		case ARROW_TYPE_NULL:
			conv->op = CONV_NULL;
			return NULL;
		case ARROW_TYPE_INT:
			if (typid == INT2OID && int_fits(t, 16))
				conv->op = CONV_INT2;
			else if (typid == INT4OID && int_fits(t, 32))
				conv->op = CONV_INT4;
			else if (typid == INT8OID && int_fits(t, 64))
				conv->op = CONV_INT8;
			else if (typid == NUMERICOID && int_fits_numeric(t, typmod))
				conv->op = CONV_INT_NUMERIC;
			else
				return "the declared type cannot hold every value of this integer type";
			return NULL;
		case ARROW_TYPE_FLOAT:
			if (typid == FLOAT8OID)
				conv->op = CONV_FLOAT8;
			else if (typid == FLOAT4OID && t->precision != ARROW_PRECISION_DOUBLE)
				conv->op = CONV_FLOAT4;
			else
				return "the declared type cannot hold every value of this floating-point type";
			return NULL;
		case ARROW_TYPE_DECIMAL:
			if (t->bit_width != 128)
				return "only 128-bit decimals are supported";
			if (typid != NUMERICOID)
				return "decimals map to numeric";
			{
				int			p,
							s;

				if (pgwarp_numeric_typmod(typmod, &p, &s) &&
					(s != t->dec_scale || p - s < t->dec_precision - t->dec_scale))
					return "the declared numeric precision or scale cannot hold the file's decimal values exactly";
			}
			conv->op = CONV_DECIMAL;
			return NULL;
		case ARROW_TYPE_BOOL:
			if (typid != BOOLOID)
				return "Bool maps to boolean";
			conv->op = CONV_BOOL;
			return NULL;
		case ARROW_TYPE_DATE:
			if (typid != DATEOID)
				return "Date maps to date";
			conv->op = CONV_DATE;
			return NULL;
		case ARROW_TYPE_TIME:
			if (typid != TIMEOID)
				return "Time maps to time";
			conv->op = CONV_TIME;
			return NULL;
		case ARROW_TYPE_TIMESTAMP:
			if (typid != (t->timezone ? TIMESTAMPTZOID : TIMESTAMPOID))
				return t->timezone ? "a Timestamp with a time zone maps to timestamptz"
					: "a Timestamp without time zone maps to timestamp";
			conv->op = CONV_TIMESTAMP;
			return NULL;
		case ARROW_TYPE_DURATION:
			if (typid == INT8OID)
			{
				/* the count of the Duration's unit */
				conv->op = CONV_INT8;
				return NULL;
			}
			/* FALLTHROUGH */
		case ARROW_TYPE_INTERVAL:
			if (typid != INTERVALOID)
				return t->id == ARROW_TYPE_INTERVAL ? "Interval maps to interval"
					: "Duration maps to interval or bigint (its count of the unit)";
			conv->op = t->id == ARROW_TYPE_INTERVAL ? CONV_INTERVAL : CONV_DURATION;
			return NULL;
		case ARROW_TYPE_UTF8:
		case ARROW_TYPE_LARGE_UTF8:
			if ((typid == TEXTOID || typid == VARCHAROID) && typmod < 0)
				conv->op = CONV_TEXT;
			else
			{
				Oid			infunc;

				getTypeInputInfo(typid, &infunc, &conv->ioparam);
				fmgr_info(infunc, &conv->infunc);
				conv->op = CONV_TEXT_INPUT;
			}
			return NULL;
		case ARROW_TYPE_BINARY:
		case ARROW_TYPE_LARGE_BINARY:
		case ARROW_TYPE_FIXED_SIZE_BINARY:
			if (typid == BYTEAOID)
				conv->op = CONV_BYTEA;
			else if (typid == UUIDOID && t->id == ARROW_TYPE_FIXED_SIZE_BINARY &&
					 t->fixed_size == UUID_LEN)
				conv->op = CONV_UUID;
			else
				return "binary types map to bytea (FixedSizeBinary(16) also to uuid)";
			return NULL;
		default:
			return "this Arrow type has no PostgreSQL equivalent";
	}
}

static const char *
plan_array(ArrowDatumConv *conv, const ArrowField *field, Oid typid)
{
	Oid			elemtype = get_element_type(typid);

	if (!OidIsValid(elemtype))
		return "a list maps to an array type";
	if (field->n_children != 1)
		return "malformed list type";
	conv->elemtype = elemtype;
	get_typlenbyvalalign(elemtype, &conv->elemlen, &conv->elembyval, &conv->elemalign);
	conv->elem = palloc0(sizeof(ArrowDatumConv));
	conv->elem->colname = conv->colname;
	conv->op = field->type.id == ARROW_TYPE_MAP ? CONV_MAP : CONV_ARRAY;
	conv->elem->by_position = field->type.id == ARROW_TYPE_MAP;
	/* a Map's child is the entries struct, which maps to the composite */
	return plan_conv(conv->elem, &field->children[0], elemtype, -1);
}

static const char *
plan_composite(ArrowDatumConv *conv, const ArrowField *field, Oid typid, int32 typmod)
{
	TupleDesc	td;
	int			a;

	if (get_typtype(typid) != TYPTYPE_COMPOSITE)
		return "a struct maps to a composite type";
	td = lookup_rowtype_tupdesc_copy(typid, typmod);
	conv->tupdesc = BlessTupleDesc(td);
	conv->child_of_attr = palloc(sizeof(int) * td->natts);
	conv->attrs = palloc0(sizeof(ArrowDatumConv *) * td->natts);
	for (a = 0; a < td->natts; a++)
	{
		Form_pg_attribute att = TupleDescAttr(td, a);
		int			c;
		const char *why;

		conv->child_of_attr[a] = -1;
		if (att->attisdropped)
			continue;
		for (c = 0; c < field->n_children; c++)
			if (strcmp(field->children[c].name, NameStr(att->attname)) == 0)
				break;
		/* Map entries are matched by position (key, value) */
		if (c == field->n_children && conv->by_position && field->n_children == td->natts)
			c = a;
		if (c == field->n_children)
			return psprintf("the struct has no field \"%s\"", NameStr(att->attname));
		conv->child_of_attr[a] = c;
		conv->attrs[a] = palloc0(sizeof(ArrowDatumConv));
		conv->attrs[a]->colname = conv->colname;
		why = plan_conv(conv->attrs[a], &field->children[c], att->atttypid, att->atttypmod);
		if (why)
			return psprintf("field \"%s\": %s", field->children[c].name, why);
	}
	conv->op = CONV_COMPOSITE;
	return NULL;
}

static const char *
plan_conv(ArrowDatumConv *conv, const ArrowField *field, Oid typid, int32 typmod)
{
	Oid			base = getBaseTypeAndTypmod(typid, &typmod);

	conv->field = field;
	conv->typid = base;
	conv->typmod = typmod;
	if ((base == JSONOID || base == JSONBOID) && arrow_json_nested(field))
	{
		const char *why = arrow_json_check(field);

		if (why)
			return why;
		conv->json = arrow_json_plan(field, conv->colname ? conv->colname : field->name);
		conv->op = CONV_JSON;
		return NULL;
	}
	if (base >= FirstNormalObjectId && arrow_geo_is_geometry(base))
	{
		conv->op = CONV_GEOMETRY;
		return arrow_geo_plan(field, base, typmod, conv->colname ? conv->colname : field->name,
							  &conv->geo);
	}
	switch (field->type.id)
	{
		case ARROW_TYPE_LIST:
		case ARROW_TYPE_LARGE_LIST:
		case ARROW_TYPE_FIXED_SIZE_LIST:
		case ARROW_TYPE_MAP:
			return plan_array(conv, field, base);
		case ARROW_TYPE_STRUCT:
			return plan_composite(conv, field, base, typmod);
		default:
			return plan_scalar(conv, &field->type, base, typmod);
	}
}

const char *
arrow_datum_check_type(const ArrowField *field, Oid typid, int32 typmod)
{
	ArrowDatumConv conv = {0};

	return plan_conv(&conv, field, typid, typmod);
}

ArrowDatumConv *
arrow_datum_conv_create(const ArrowField *field, Oid typid, int32 typmod,
						const char *colname)
{
	ArrowDatumConv *conv = palloc0(sizeof(ArrowDatumConv));
	const char *why;

	conv->colname = colname;
	why = plan_conv(conv, field, typid, typmod);
	if (why)
	{
		char		tbuf[256];

		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
				 errmsg("column \"%s\" of type %s cannot read Arrow field \"%s\" of type %s",
						colname, format_type_with_typemod(typid, typmod),
						field->name, arrow_type_string(field, tbuf, sizeof(tbuf))),
				 errdetail("%s", why)));
	}
	return conv;
}

/* ------------------------------------------------------------ conversion */

/* v * 10^-scale as a numeric of display scale `scale` (>= 0) */
Datum
pgwarp_int128_to_numeric(__int128 v, int scale)
{
	char		buf[64];
	char	   *p = buf + sizeof(buf);
	bool		neg = v < 0;
	unsigned __int128 u = neg ? -(unsigned __int128) v : (unsigned __int128) v;
	int			digits = 0;

	*--p = '\0';
	do
	{
		*--p = '0' + (int) (u % 10);
		u /= 10;
		digits++;
		if (digits == scale)
			*--p = '.';
	} while (u != 0 || digits < scale);
	if (*p == '.')
		*--p = '0';
	if (neg)
		*--p = '-';
	if (scale < 0)
	{
		/* negative scale: value * 10^-scale */
		char	   *s = psprintf("%se%d", p, -scale);

		return DirectFunctionCall3(numeric_in, CStringGetDatum(s),
								   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
	}
	return DirectFunctionCall3(numeric_in, CStringGetDatum(p),
							   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
}

/*
 * A numeric Datum as its unscaled integer at `scale` (value * 10^scale,
 * 0 <= scale <= 38), read straight from numeric's stored form (the
 * on-disk format numeric.c documents: a short or long header, base-10000
 * digits, most significant first): the inverse of pgwarp_int128_to_numeric
 * without a text round trip, for the engine's readers of heap tables.
 * False for NaN and +-Infinity, a value with nonzero digits beyond `scale`,
 * and one beyond 128 bits.
 */
bool
pgwarp_numeric_unscaled(Datum d, int scale, __int128 *out)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(d);
	const uint8 *p;
	int			len;
	uint16		header;
	int			weight,
				ndigits,
				hdr,
				e,
				i;
	bool		neg;
	int64		acc64 = 0;		/* the value while it is below 2^63 / 10^4 */
	__int128	acc;
	bool		wide = false;

	if (VARATT_IS_EXTERNAL(v) || VARATT_IS_COMPRESSED(v))
		v = pg_detoast_datum_packed(v);
	p = (const uint8 *) VARDATA_ANY(v);
	len = VARSIZE_ANY_EXHDR(v);
	if (len < 2 || scale < 0 || scale > 38)
		return false;
	memcpy(&header, p, 2);
	if ((header & 0xC000) == 0xC000)
		return false;			/* NaN, Infinity, -Infinity */
	if (header & 0x8000)
	{
		/* short: sign 0x2000, weight 7 bits (sign 0x0040) */
		hdr = 2;
		neg = (header & 0x2000) != 0;
		weight = (header & 0x0040 ? ~0x003F : 0) | (header & 0x003F);
	}
	else
	{
		int16		w;

		if (len < 4)
			return false;
		hdr = 4;
		neg = (header & 0xC000) == 0x4000;
		memcpy(&w, p + 2, 2);
		weight = w;
	}
	ndigits = (len - hdr) / 2;
	acc = 0;
	/* digit i stands for 10000^(weight - i), i.e. 10^e units of 10^-scale */
	for (i = 0; i < ndigits; i++)
	{
		int16		dg;
		int64		pow = 10000;	/* the digit's units over the last one's */

		memcpy(&dg, p + hdr + 2 * i, 2);
		e = 4 * (weight - i) + scale;
		if (e <= -4)
		{
			if (dg != 0)
				return false;
			continue;
		}
		if (e < 0)
		{
			/* straddles 10^-scale: its digits below it must be zeros
			 * (constant divisors: no division instruction) */
			int			low = e == -1 ? dg % 10 : e == -2 ? dg % 100 : dg % 1000;

			if (low != 0)
				return false;
			dg = e == -1 ? dg / 10 : e == -2 ? dg / 100 : dg / 1000;
			pow = e == -1 ? 1000 : e == -2 ? 100 : 10;
		}
		if (!wide && acc64 < INT64CONST(900000000000000))
		{
			acc64 = acc64 * pow + dg;
			continue;
		}
		if (!wide)
		{
			acc = acc64;
			wide = true;
		}
		if (__builtin_mul_overflow(acc, (__int128) pow, &acc))
			return false;
		acc += dg;
	}
	/* the units of the last digit read, up to 10^-scale */
	e = ndigits > 0 ? 4 * (weight - ndigits + 1) + scale : 0;
	if (!wide && e <= 14)
	{
		static const int64 pow10[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
			100000000, 1000000000, INT64CONST(10000000000), INT64CONST(100000000000),
		INT64CONST(1000000000000), INT64CONST(10000000000000), INT64CONST(100000000000000)};
		int64		m = pow10[Max(e, 0)];

		/* (the common case without a division: below 9 * 10^14, times
		 * 10^e fits for e <= 3) */
		if ((e <= 3 && acc64 < INT64CONST(900000000000000)) || acc64 <= PG_INT64_MAX / m)
		{
			*out = neg ? -(__int128) (acc64 * m) : (__int128) (acc64 * m);
			return true;
		}
	}
	if (!wide)
		acc = acc64;
	for (; e > 0; e--)
		if (__builtin_mul_overflow(acc, (__int128) 10, &acc))
			return false;
	*out = neg ? -acc : acc;
	return true;
}

/* value in `unit` (0 s, 1 ms, 2 us, 3 ns) to microseconds, or false on overflow */
static bool
to_usec(int64 v, int unit, int64 *out)
{
	switch (unit)
	{
		case ARROW_TIME_SECOND:
			return !__builtin_mul_overflow(v, (int64) 1000000, out);
		case ARROW_TIME_MILLISECOND:
			return !__builtin_mul_overflow(v, (int64) 1000, out);
		case ARROW_TIME_MICROSECOND:
			*out = v;
			return true;
		default:
			{
				/* nanoseconds: round half away from zero, like PostgreSQL's
				 * input; written without v + 500, which overflows near the
				 * limits */
				int64		q = v / 1000;
				int64		r = v % 1000;

				if (r >= 500)
					q++;
				else if (r <= -500)
					q--;
				*out = q;
				return true;
			}
	}
}

static void
out_of_range(ArrowDatumConv *conv, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
			 errmsg("%s out of range in column \"%s\"", what, conv->colname)));
}

static Datum
convert_value(ArrowDatumConv *conv, const ArrowArray *a, int64 i, bool *isnull);

static Datum
convert_array(ArrowDatumConv *conv, const ArrowArray *a, int64 i)
{
	const ArrowArray *child = &a->children[0];
	int64		start;
	int64		end;
	int			n;
	Datum	   *elems;
	bool	   *nulls;
	int			dims[1];
	int			lbs[1] = {1};
	int64		k;

	if (a->field->type.id == ARROW_TYPE_FIXED_SIZE_LIST)
	{
		start = (a->offset + i) * (int64) a->field->type.fixed_size;
		end = start + a->field->type.fixed_size;
	}
	else
	{
		start = arrow_offset_at(a, i);
		end = arrow_offset_at(a, i + 1);
	}
	if (end - start > (int64) MaxArraySize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("list in column \"%s\" has too many elements for an array", conv->colname)));
	n = (int) (end - start);
	if (n == 0)
		return PointerGetDatum(construct_empty_array(conv->elemtype));
	elems = palloc(sizeof(Datum) * n);
	nulls = palloc(sizeof(bool) * n);
	for (k = 0; k < n; k++)
		elems[k] = convert_value(conv->elem, child, start + k, &nulls[k]);
	dims[0] = n;
	return PointerGetDatum(construct_md_array(elems, nulls, 1, dims, lbs, conv->elemtype,
											  conv->elemlen, conv->elembyval,
											  conv->elemalign));
}

static Datum
convert_composite(ArrowDatumConv *conv, const ArrowArray *a, int64 i)
{
	TupleDesc	td = conv->tupdesc;
	Datum	   *values = palloc(sizeof(Datum) * td->natts);
	bool	   *nulls = palloc(sizeof(bool) * td->natts);
	int			k;

	for (k = 0; k < td->natts; k++)
	{
		int			c = conv->child_of_attr[k];

		if (c < 0)
		{
			nulls[k] = true;
			values[k] = (Datum) 0;
			continue;
		}
		values[k] = convert_value(conv->attrs[k], &a->children[c], a->offset + i, &nulls[k]);
	}
	return HeapTupleGetDatum(heap_form_tuple(td, values, nulls));
}

/* Date32 days or Date64 milliseconds since 1970 as a date */
static Datum
convert_date(ArrowDatumConv *conv, const ArrowArray *a, int64 i)
{
	const ArrowType *t = &conv->field->type;
	int64		days = arrow_get_int(a, i);

	if (t->unit == ARROW_DATE_MILLISECOND)
		days = days >= 0 ? days / 86400000 : -((-(days + 1)) / 86400000) - 1;
	days -= POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE;
	if (days < (int64) (DATETIME_MIN_JULIAN - POSTGRES_EPOCH_JDATE) ||
		days >= (int64) (DATE_END_JULIAN - POSTGRES_EPOCH_JDATE))
		out_of_range(conv, "date");
	return DateADTGetDatum((DateADT) days);
}

/* an Interval of any unit as an interval */
static Datum
convert_interval(ArrowDatumConv *conv, const ArrowArray *a, int64 i)
{
	const ArrowType *t = &conv->field->type;
	Interval   *iv = palloc(sizeof(Interval));
	const uint8 *p = a->values;
	int64		k = a->offset + i;

	switch (t->unit)
	{
		case ARROW_INTERVAL_YEAR_MONTH:
			iv->month = ((const int32 *) p)[k];
			iv->day = 0;
			iv->time = 0;
			break;
		case ARROW_INTERVAL_DAY_TIME:
			iv->month = 0;
			iv->day = ((const int32 *) p)[2 * k];
			iv->time = (int64) ((const int32 *) p)[2 * k + 1] * 1000;
			break;
		default:
			{
				int64		ns;

				memcpy(&iv->month, p + 16 * k, 4);
				memcpy(&iv->day, p + 16 * k + 4, 4);
				memcpy(&ns, p + 16 * k + 8, 8);
				to_usec(ns, ARROW_TIME_NANOSECOND, &iv->time);
			}
			break;
	}
	return IntervalPGetDatum(iv);
}

/* a UTF-8 string as text, or through the type's input function */
static Datum
convert_text(ArrowDatumConv *conv, const ArrowArray *a, int64 i)
{
	int64		len;
	const char *p = (const char *) arrow_get_bytes(a, i, &len);

	if (len >= (int64) MaxAllocSize - VARHDRSZ)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("string in column \"%s\" is too long (%lld bytes)",
						conv->colname, (long long) len)));
	/* Arrow strings are UTF-8: check them, convert if the
	 * database uses another encoding */
	if (GetDatabaseEncoding() == PG_UTF8)
		pg_verify_mbstr(PG_UTF8, p, (int) len, false);
	else
	{
		char	   *c = pg_any_to_server(p, (int) len, PG_UTF8);

		if (c != p)
		{
			p = c;
			len = strlen(c);
		}
	}
	if (conv->op == CONV_TEXT)
		return PointerGetDatum(cstring_to_text_with_len(p, (int) len));
	return InputFunctionCall(&conv->infunc, pnstrdup(p, len), conv->ioparam,
							 conv->typmod);
}

/* binary as bytea */
static Datum
convert_bytea(ArrowDatumConv *conv, const ArrowArray *a, int64 i)
{
	int64		len;
	const uint8 *p = arrow_get_bytes(a, i, &len);
	bytea	   *b;

	if (len >= (int64) MaxAllocSize - VARHDRSZ)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("binary value in column \"%s\" is too long", conv->colname)));
	b = palloc(VARHDRSZ + len);
	SET_VARSIZE(b, VARHDRSZ + len);
	memcpy(VARDATA(b), p, len);
	return PointerGetDatum(b);
}

static Datum
convert_value(ArrowDatumConv *conv, const ArrowArray *a, int64 i, bool *isnull)
{
	const ArrowType *t = &conv->field->type;

	if (conv->op == CONV_NULL || arrow_is_null(a, i))
	{
		*isnull = true;
		return (Datum) 0;
	}
	*isnull = false;
	if (a->dictionary)
	{
		int64		j = arrow_get_dict_index(a, i);

		return convert_value(conv, a->dictionary, j, isnull);
	}
	switch (conv->op)
	{
		case CONV_INT2:
			return Int16GetDatum((int16) arrow_get_int(a, i));
		case CONV_INT4:
			return Int32GetDatum((int32) arrow_get_int(a, i));
		case CONV_INT8:
			return Int64GetDatum(arrow_get_int(a, i));
		case CONV_INT_NUMERIC:
			if (!t->is_signed && t->bit_width == 64)
				return pgwarp_int128_to_numeric((__int128) arrow_get_uint64(a, i), 0);
			return pgwarp_int128_to_numeric((__int128) arrow_get_int(a, i), 0);
		case CONV_FLOAT4:
			return Float4GetDatum((float4) arrow_get_double(a, i));
		case CONV_FLOAT8:
			return Float8GetDatum(arrow_get_double(a, i));
		case CONV_DECIMAL:
			{
				int64		len;
				const uint8 *p = arrow_get_bytes(a, i, &len);
				__int128	v;

				memcpy(&v, p, sizeof(v));
				return pgwarp_int128_to_numeric(v, t->dec_scale);
			}
		case CONV_BOOL:
			return BoolGetDatum(arrow_get_bit(a->values, a->offset + i));
		case CONV_DATE:
			return convert_date(conv, a, i);
		case CONV_TIME:
			{
				int64		us;

				if (!to_usec(arrow_get_int(a, i), t->unit, &us) || us < 0 || us > USECS_PER_DAY)
					out_of_range(conv, "time");
				return TimeADTGetDatum(us);
			}
		case CONV_TIMESTAMP:
			{
				int64		us;

				if (!to_usec(arrow_get_int(a, i), t->unit, &us) ||
					__builtin_sub_overflow(us, (int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY, &us) ||
					!IS_VALID_TIMESTAMP(us))
					out_of_range(conv, "timestamp");
				return TimestampGetDatum(us);
			}
		case CONV_INTERVAL:
			return convert_interval(conv, a, i);
		case CONV_DURATION:
			{
				Interval   *iv = palloc0(sizeof(Interval));

				if (!to_usec(arrow_get_int(a, i), t->unit, &iv->time))
					out_of_range(conv, "interval");
				return IntervalPGetDatum(iv);
			}
		case CONV_TEXT:
		case CONV_TEXT_INPUT:
			return convert_text(conv, a, i);
		case CONV_BYTEA:
			return convert_bytea(conv, a, i);
		case CONV_UUID:
			{
				int64		len;
				const uint8 *p = arrow_get_bytes(a, i, &len);
				pg_uuid_t  *u = palloc(sizeof(pg_uuid_t));

				memcpy(u->data, p, UUID_LEN);
				return UUIDPGetDatum(u);
			}
		case CONV_ARRAY:
		case CONV_MAP:
			return convert_array(conv, a, i);
		case CONV_COMPOSITE:
			return convert_composite(conv, a, i);
		case CONV_JSON:
			return arrow_json_get(conv->json, a, i, conv->typid);
		case CONV_GEOMETRY:
			return arrow_geo_get(conv->geo, a, i);
		case CONV_NULL:
			break;
	}
	*isnull = true;
	return (Datum) 0;
}

Datum
arrow_datum_get(ArrowDatumConv *conv, const ArrowArray *a, int64 i, bool *isnull)
{
	return convert_value(conv, a, i, isnull);
}
