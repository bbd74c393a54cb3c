/*
 * arrow_geo.c — GeoArrow columns read as PostGIS geometry.
 *
 * A field is GeoArrow when its metadata "ARROW:extension:name" says so:
 *   geoarrow.point  Struct<x: double, y: double> (separated coordinates) or
 *                   FixedSizeList<double, 2> (interleaved); 2-D only
 *   geoarrow.wkb    Binary or LargeBinary holding (ISO or extended) WKB
 * and its CRS is in "ARROW:extension:metadata", a JSON object:
 *   no metadata, "{}", or no "crs"             SRID 0 (unknown)
 *   "crs": "EPSG:n" (any case)                 SRID n
 *   "crs": "OGC:CRS84"                         SRID 4326
 *   "crs": n or "n" with "crs_type": "srid"    SRID n
 *   "crs": PROJJSON whose "id" is
 *          {"authority": "EPSG", "code": n}    SRID n
 * Anything else (WKT, other authorities, "edges": "spherical") is not
 * mapped: IMPORT FOREIGN SCHEMA then gives the column its plain Arrow
 * mapping (a composite, float8[] or bytea), and declaring it geometry is an
 * error naming the column.
 *
 * The values are built as PostGIS builds them: a point (the separated and
 * interleaved encodings, and little-endian 2-D WKB points) is written
 * directly in PostGIS's serialization (GSERIALIZED version 2: 32 bytes;
 * NaN, NaN is POINT EMPTY, as PostGIS reads it from WKB); any other WKB
 * goes through the geometry type's own binary input function, so
 * PostGIS's parser, its checks and its errors apply.  The column's SRID is
 * then set; a value whose extended WKB carries another SRID is an error.  A
 * declared typmod (geometry(Point,4326)) is enforced by PostGIS's own cast
 * function whenever the field's encoding and CRS do not already imply it.
 *
 * PostGIS is never linked: its type and functions are found in the
 * catalog (warp_postgis_function checks that a function is PostGIS's).
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "catalog/pg_cast.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "common/jsonapi.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "fdw/arrow_fdw.h"
#include "pg_warp.h"
#include "warp_spatial.h"

#define SRID_MAX 999999			/* PostGIS's SRID_MAXIMUM */

struct ArrowGeoConv
{
	ArrowGeoEncoding enc;
	int32		srid;
	const char *colname;
	int			xchild,
				ychild;			/* the struct's x and y children */
	FmgrInfo	recv;			/* the geometry type's binary input */
	Oid			recv_ioparam;
	bool		enforce;		/* call PostGIS's typmod cast per value */
	FmgrInfo	enforce_fn;
	int32		typmod;
};

/* ------------------------------------------------------ field decoding */

static bool
is_double(const ArrowField *f)
{
	return f->type.id == ARROW_TYPE_FLOAT && f->type.precision == ARROW_PRECISION_DOUBLE &&
		!f->has_dict;
}

ArrowGeoEncoding
arrow_geo_encoding(const ArrowField *field)
{
	const char *ext = arrow_field_metadata(field, "ARROW:extension:name");

	if (ext == NULL)
		return ARROW_GEO_NONE;
	if (strcmp(ext, "geoarrow.point") == 0)
	{
		if (field->type.id == ARROW_TYPE_STRUCT && field->n_children == 2 &&
			is_double(&field->children[0]) && is_double(&field->children[1]) &&
			((strcmp(field->children[0].name, "x") == 0 &&
			  strcmp(field->children[1].name, "y") == 0) ||
			 (strcmp(field->children[0].name, "y") == 0 &&
			  strcmp(field->children[1].name, "x") == 0)))
			return ARROW_GEO_POINT_STRUCT;
		if (field->type.id == ARROW_TYPE_FIXED_SIZE_LIST && field->type.fixed_size == 2 &&
			field->n_children == 1 && is_double(&field->children[0]))
			return ARROW_GEO_POINT_INTERLEAVED;
		return ARROW_GEO_NONE;	/* 3-D/4-D points, other layouts */
	}
	if (strcmp(ext, "geoarrow.wkb") == 0 &&
		(field->type.id == ARROW_TYPE_BINARY || field->type.id == ARROW_TYPE_LARGE_BINARY))
		return ARROW_GEO_WKB;
	return ARROW_GEO_NONE;
}

/* the parts of the extension metadata that decide the SRID */
typedef struct CrsParse
{
	int			depth;
	char	   *names[4];		/* field name at each depth (NULL in arrays) */
	bool		top_object;
	char	   *crs;			/* "crs" as a string (or number) */
	bool		crs_is_object;
	char	   *crs_type;
	char	   *edges;
	char	   *id_authority;	/* crs.id.authority */
	char	   *id_code;		/* crs.id.code */
} CrsParse;

static bool
path_is(CrsParse *p, int depth, const char *a, const char *b, const char *c)
{
	const char *want[3] = {a, b, c};
	int			k;

	if (p->depth != depth)
		return false;
	for (k = 0; k < depth; k++)
		if (p->names[k + 1] == NULL || strcmp(p->names[k + 1], want[k]) != 0)
			return false;
	return true;
}

static void
crs_object_start(void *state)
{
	CrsParse   *p = state;

	if (p->depth == 0)
		p->top_object = true;
	if (path_is(p, 1, "crs", NULL, NULL))
		p->crs_is_object = true;
	p->depth++;
	if (p->depth < lengthof(p->names))
		p->names[p->depth] = NULL;
}

static void
crs_struct_end(void *state)
{
	((CrsParse *) state)->depth--;
}

static void
crs_array_start(void *state)
{
	CrsParse   *p = state;

	p->depth++;
	if (p->depth < lengthof(p->names))
		p->names[p->depth] = NULL;
}

static void
crs_field_start(void *state, char *fname, bool isnull)
{
	CrsParse   *p = state;

	if (p->depth < lengthof(p->names))
		p->names[p->depth] = fname;
}

static void
crs_scalar(void *state, char *token, JsonTokenType type)
{
	CrsParse   *p = state;
	bool		text = type == JSON_TOKEN_STRING || type == JSON_TOKEN_NUMBER;

	if (!text)
		return;
	if (path_is(p, 1, "crs", NULL, NULL))
		p->crs = token;
	else if (path_is(p, 1, "crs_type", NULL, NULL))
		p->crs_type = token;
	else if (path_is(p, 1, "edges", NULL, NULL))
		p->edges = token;
	else if (path_is(p, 3, "crs", "id", "authority"))
		p->id_authority = token;
	else if (path_is(p, 3, "crs", "id", "code"))
		p->id_code = token;
}

/* a decimal SRID in 1..SRID_MAX; false otherwise */
static bool
parse_srid(const char *s, int32 *srid)
{
	char	   *end;
	long		v;

	if (s == NULL || *s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < 1 || v > SRID_MAX)
		return false;
	*srid = (int32) v;
	return true;
}

bool
arrow_geo_srid(const ArrowField *field, int32 *srid, const char **why)
{
	const char *meta = arrow_field_metadata(field, "ARROW:extension:metadata");
	CrsParse	p = {0};
	JsonSemAction sem = {0};
	JsonLexContext *lex;

	*srid = 0;
	*why = NULL;
	if (meta == NULL || meta[0] == '\0')
		return true;
	sem.semstate = &p;
	sem.object_start = crs_object_start;
	sem.object_end = crs_struct_end;
	sem.array_start = crs_array_start;
	sem.array_end = crs_struct_end;
	sem.object_field_start = crs_field_start;
	sem.scalar = crs_scalar;
	lex = makeJsonLexContextCstringLen(pstrdup(meta), strlen(meta), PG_UTF8, true);
	if (pg_parse_json(lex, &sem) != JSON_SUCCESS || !p.top_object)
	{
		*why = "its GeoArrow metadata is not a JSON object";
		return false;
	}
	if (p.edges && strcmp(p.edges, "planar") != 0)
	{
		*why = psprintf("its edges are \"%s\" (geometry is planar)", p.edges);
		return false;
	}
	if (p.crs_is_object)
	{
		if (p.id_authority && pg_strcasecmp(p.id_authority, "EPSG") == 0 &&
			parse_srid(p.id_code, srid))
			return true;
		*why = "its PROJJSON CRS has no EPSG id";
		return false;
	}
	if (p.crs == NULL)
		return true;
	if (p.crs_type && strcmp(p.crs_type, "srid") == 0 && parse_srid(p.crs, srid))
		return true;
	if (pg_strncasecmp(p.crs, "EPSG:", 5) == 0 && parse_srid(p.crs + 5, srid))
		return true;
	if (pg_strcasecmp(p.crs, "OGC:CRS84") == 0)
	{
		*srid = 4326;
		return true;
	}
	*why = psprintf("its CRS \"%s\" is not one pg_warp maps to an SRID (EPSG:n, OGC:CRS84, "
					"a PROJJSON object with an EPSG id, or an SRID)", p.crs);
	return false;
}

/* ---------------------------------------------------- PostGIS's types */

bool
arrow_geo_is_geometry(Oid typid)
{
	HeapTuple	tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(typid));
	Oid			input;

	if (!HeapTupleIsValid(tup))
		return false;
	input = ((Form_pg_type) GETSTRUCT(tup))->typinput;
	ReleaseSysCache(tup);
	return warp_postgis_function(input, "LWGEOM_in");
}

/* the schema of extension ext (PostgreSQL 15 does not export its own) */
static Oid
extension_schema(Oid ext)
{
	Relation	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	Oid			nsp = InvalidOid;

	ScanKeyInit(&key, Anum_pg_extension_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(ext));
	scan = systable_beginscan(rel, ExtensionOidIndexId, true, NULL, 1, &key);
	if (HeapTupleIsValid(tup = systable_getnext(scan)))
		nsp = ((Form_pg_extension) GETSTRUCT(tup))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return nsp;
}

Oid
arrow_geo_geometry_type(void)
{
	Oid			ext = get_extension_oid("postgis", true);
	Oid			typid;

	if (!OidIsValid(ext))
		return InvalidOid;
	typid = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid, CStringGetDatum("geometry"),
							ObjectIdGetDatum(extension_schema(ext)));
	return OidIsValid(typid) && arrow_geo_is_geometry(typid) ? typid : InvalidOid;
}

bool
arrow_geo_pg_type_name(const ArrowField *field, char *buf, size_t len)
{
	ArrowGeoEncoding enc = arrow_geo_encoding(field);
	Oid			typid;
	int32		srid;
	const char *why;
	char	   *name;

	if (enc == ARROW_GEO_NONE || !OidIsValid(typid = arrow_geo_geometry_type()))
		return false;
	if (!arrow_geo_srid(field, &srid, &why))
	{
		ereport(NOTICE,
				(errmsg("GeoArrow column \"%s\" is not mapped to geometry: %s",
						field->name, why)));
		return false;
	}
	name = format_type_extended(typid, -1, FORMAT_TYPE_FORCE_QUALIFY);
	/*
	 * WKB may hold Z and M values, which no SRID-constrained typmod admits
	 * together with 2-D ones: plain geometry (the values carry the SRID)
	 */
	if (enc == ARROW_GEO_WKB)
		strlcpy(buf, name, len);
	else if (srid)
		snprintf(buf, len, "%s(Point,%d)", name, srid);
	else
		snprintf(buf, len, "%s(Point)", name);
	return true;
}

/* ------------------------------------------------------------- planning */

/* PostGIS's typmod fields (liblwgeom.h's TYPMOD_GET_*) */
#define TYPMOD_SRID(t)	((((t) & 0x0FFFFF00) - ((t) & 0x10000000)) >> 8)
#define TYPMOD_TYPE(t)	(((t) & 0x000000FC) >> 2)
#define TYPMOD_ZM(t)	((t) & 0x00000003)

const char *
arrow_geo_plan(const ArrowField *field, Oid typid, int32 typmod, const char *colname,
			   ArrowGeoConv **out)
{
	ArrowGeoConv *gc;
	const char *why;
	Oid			recv;
	HeapTuple	tup;

	*out = NULL;
	gc = palloc0(sizeof(ArrowGeoConv));
	gc->enc = arrow_geo_encoding(field);
	gc->colname = colname;
	gc->typmod = typmod;
	if (gc->enc == ARROW_GEO_NONE)
		return "geometry reads GeoArrow fields: geoarrow.point (Struct<x, y> or "
			"FixedSizeList<double, 2>) or geoarrow.wkb (Binary)";
	if (!arrow_geo_srid(field, &gc->srid, &why))
		return psprintf("the field cannot be read as geometry: %s", why);
	if (gc->enc == ARROW_GEO_POINT_STRUCT)
	{
		gc->xchild = strcmp(field->children[0].name, "x") == 0 ? 0 : 1;
		gc->ychild = 1 - gc->xchild;
	}
	getTypeBinaryInputInfo(typid, &recv, &gc->recv_ioparam);
	fmgr_info(recv, &gc->recv);
	/* a typmod the encoding and CRS already satisfy needs no check per value */
	if (typmod >= 0 &&
		!(gc->enc != ARROW_GEO_WKB && TYPMOD_ZM(typmod) == 0 &&
		  (TYPMOD_TYPE(typmod) == 0 || TYPMOD_TYPE(typmod) == 1) &&
		  (TYPMOD_SRID(typmod) == 0 || TYPMOD_SRID(typmod) == gc->srid)))
	{
		tup = SearchSysCache2(CASTSOURCETARGET, ObjectIdGetDatum(typid),
							  ObjectIdGetDatum(typid));
		if (!HeapTupleIsValid(tup))
			return "PostGIS's geometry typmod cast is missing";
		fmgr_info(((Form_pg_cast) GETSTRUCT(tup))->castfunc, &gc->enforce_fn);
		ReleaseSysCache(tup);
		if (!warp_postgis_function(gc->enforce_fn.fn_oid, "geometry_enforce_typmod"))
			return "the geometry typmod cast is not PostGIS's";
		gc->enforce = true;
	}
	*out = gc;
	return NULL;
}

/* ------------------------------------------------------------ conversion */

/* PostGIS's serialization of a 2-D point (GSERIALIZED v2, no box) */
static Datum
make_point(double x, double y, int32 srid)
{
	bool		empty = isnan(x) && isnan(y);
	Size		size = empty ? 16 : 32;
	uint8	   *v = palloc(size);
	uint32		type = 1,
				npoints = empty ? 0 : 1;

	SET_VARSIZE(v, size);
	v[4] = (uint8) ((srid >> 16) & 0x1f);
	v[5] = (uint8) (srid >> 8);
	v[6] = (uint8) srid;
	v[7] = 0x40;				/* version 2, 2-D, no box */
	memcpy(v + 8, &type, 4);
	memcpy(v + 12, &npoints, 4);
	if (!empty)
	{
		memcpy(v + 16, &x, 8);
		memcpy(v + 24, &y, 8);
	}
	return PointerGetDatum(v);
}

static void
wkb_context(void *arg)
{
	errcontext("GeoArrow WKB value of column \"%s\"", (const char *) arg);
}

/* a WKB value through PostGIS's binary input, with the column's SRID */
static Datum
from_wkb(ArrowGeoConv *gc, const uint8 *p, int64 len)
{
	StringInfoData buf;
	ErrorContextCallback cb;
	Datum		d;
	uint8	   *g;
	int32		srid;

#ifndef WORDS_BIGENDIAN
	/* a little-endian 2-D point: built as PostGIS builds it */
	if (len == 21 && p[0] == 1 && p[1] == 1 && p[2] == 0 && p[3] == 0 && p[4] == 0)
	{
		double		x,
					y;

		memcpy(&x, p + 5, 8);
		memcpy(&y, p + 13, 8);
		return make_point(x, y, gc->srid);
	}
#endif
	if (len >= (int64) MaxAllocSize - 1)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("WKB value in column \"%s\" is too long", gc->colname)));
	buf.data = palloc(len + 1);
	memcpy(buf.data, p, len);
	buf.data[len] = '\0';
	buf.len = (int) len;
	buf.maxlen = (int) len + 1;
	buf.cursor = 0;
	cb.callback = wkb_context;
	cb.arg = (void *) gc->colname;
	cb.previous = error_context_stack;
	error_context_stack = &cb;
	d = ReceiveFunctionCall(&gc->recv, &buf, gc->recv_ioparam, -1);
	error_context_stack = cb.previous;
	g = (uint8 *) DatumGetPointer(d);
	if (VARATT_IS_EXTENDED(g) || VARSIZE(g) < VARHDRSZ + 4)
		elog(ERROR, "pg_warp: PostGIS returned an unexpected geometry value");
	srid = ((int32) g[4] << 16) | ((int32) g[5] << 8) | g[6];
	srid = (int32) ((uint32) srid << 11) >> 11;
	if (gc->srid != 0)
	{
		if (srid != 0 && srid != gc->srid)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("WKB value in column \"%s\" has SRID %d, but the column's CRS is SRID %d",
							gc->colname, srid, gc->srid)));
		g[4] = (uint8) ((gc->srid >> 16) & 0x1f);
		g[5] = (uint8) (gc->srid >> 8);
		g[6] = (uint8) gc->srid;
	}
	return d;
}

Datum
arrow_geo_get(ArrowGeoConv *gc, const ArrowArray *a, int64 i)
{
	Datum		d;

	switch (gc->enc)
	{
		case ARROW_GEO_POINT_STRUCT:
			{
				const ArrowArray *xa = &a->children[gc->xchild],
						   *ya = &a->children[gc->ychild];
				int64		j = a->offset + i;

				if (arrow_is_null(xa, j) || arrow_is_null(ya, j))
					ereport(ERROR,
							(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
							 errmsg("GeoArrow point in column \"%s\" has a null coordinate",
									gc->colname)));
				d = make_point(arrow_get_double(xa, j), arrow_get_double(ya, j), gc->srid);
				break;
			}
		case ARROW_GEO_POINT_INTERLEAVED:
			{
				const ArrowArray *c = &a->children[0];
				int64		j = 2 * (a->offset + i);

				if (arrow_is_null(c, j) || arrow_is_null(c, j + 1))
					ereport(ERROR,
							(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
							 errmsg("GeoArrow point in column \"%s\" has a null coordinate",
									gc->colname)));
				d = make_point(arrow_get_double(c, j), arrow_get_double(c, j + 1), gc->srid);
				break;
			}
		default:
			{
				int64		len;
				const uint8 *p = arrow_get_bytes(a, i, &len);

				d = from_wkb(gc, p, len);
				break;
			}
	}
	if (gc->enforce)
		d = FunctionCall3(&gc->enforce_fn, d, Int32GetDatum(gc->typmod), BoolGetDatum(false));
	return d;
}
