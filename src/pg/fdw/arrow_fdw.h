/*
 * arrow_fdw.h — the arrow_fdw foreign data wrapper: shared declarations.
 */
#ifndef ARROW_FDW_H
#define ARROW_FDW_H

#include "postgres.h"

#include "fmgr.h"
#include "access/htup.h"
#include "nodes/pg_list.h"
#include "utils/relcache.h"

#include "arrow.h"
#include "fdw/arrow_pg.h"

/* Table options, parsed (arrow_fdw_options.c) */
typedef struct ArrowFdwOptions
{
	List	   *files;			/* absolute paths (char *), in scan order */
	char	   *dir;			/* the dir option, or NULL */
	int			parallel_workers;	/* -1 = not set */
	bool		writable;
} ArrowFdwOptions;

extern void arrow_fdw_get_options(Oid foreigntableid, ArrowFdwOptions *opts);
extern void arrow_fdw_check_files(List *files);
extern void arrow_fdw_parse_options(List *options, ArrowFdwOptions *opts);
extern Datum arrow_fdw_validator(PG_FUNCTION_ARGS);

/* arrow_fdw_import.c */
struct ImportForeignSchemaStmt;
extern List *arrowImportForeignSchema(struct ImportForeignSchemaStmt *stmt, Oid serverOid);

/*
 * Map a file's field to the declared column type.  Returns NULL if they are
 * compatible, else a reason ("integer cannot hold Arrow int64").
 */
extern const char *arrow_datum_check_type(const ArrowField *field, Oid typid,
										  int32 typmod);
/* Convert value i of a loaded array to a Datum of the declared type. */
typedef struct ArrowDatumConv ArrowDatumConv;

/* nested values as json/jsonb (arrow_json.c) */
typedef struct ArrowJsonPlan ArrowJsonPlan;
extern bool arrow_json_nested(const ArrowField *field);
extern const char *arrow_json_check(const ArrowField *field);
extern ArrowJsonPlan *arrow_json_plan(const ArrowField *field, const char *colname);
extern Datum arrow_json_get(ArrowJsonPlan *jp, const ArrowArray *a, int64 i, Oid typid);
extern ArrowDatumConv *arrow_datum_conv_create(const ArrowField *field,
											   Oid typid, int32 typmod,
											   const char *colname);
extern Datum arrow_datum_get(ArrowDatumConv *conv, const ArrowArray *a,
							 int64 i, bool *isnull);

/* arrow_geo.c: GeoArrow fields as PostGIS geometry */
typedef enum ArrowGeoEncoding
{
	ARROW_GEO_NONE,
	ARROW_GEO_POINT_STRUCT,		/* geoarrow.point, Struct<x, y> */
	ARROW_GEO_POINT_INTERLEAVED,	/* geoarrow.point, FixedSizeList<double, 2> */
	ARROW_GEO_WKB				/* geoarrow.wkb, Binary */
} ArrowGeoEncoding;
typedef struct ArrowGeoConv ArrowGeoConv;
extern ArrowGeoEncoding arrow_geo_encoding(const ArrowField *field);
/* the field's SRID (0: no CRS); false, with *why, for a CRS not mapped */
extern bool arrow_geo_srid(const ArrowField *field, int32 *srid, const char **why);
/* PostGIS's geometry type (InvalidOid without PostGIS), and the test for it */
extern Oid	arrow_geo_geometry_type(void);
extern bool arrow_geo_is_geometry(Oid typid);
/* "schema.geometry(Point,4326)" for a GeoArrow field when PostGIS is here */
extern bool arrow_geo_pg_type_name(const ArrowField *field, char *buf, size_t len);
extern const char *arrow_geo_plan(const ArrowField *field, Oid typid, int32 typmod,
								  const char *colname, ArrowGeoConv **out);
extern Datum arrow_geo_get(ArrowGeoConv *gc, const ArrowArray *a, int64 i);

/* arrow_committed.c */
extern int64 arrow_committed_length(const char *path);
extern int64 arrow_committed_lock(const char *path);
extern void arrow_committed_register(const char *path, int64 length);
extern void arrow_committed_forget_unused(void);
extern void arrow_committed_set(const char *path, int64 length);

/* arrow_fdw.c: a planned rel's options, and (when stats is not NULL) its
 * list of ArrowFooterStats, made as the planner asks (arrow_fdw_stats.c) */
struct RelOptInfo;
extern const ArrowFdwOptions *arrow_fdw_rel_options(struct RelOptInfo *rel, List ***stats);

/* arrow_fdw_stats.c: a column's pg_statistic row made from the footers
 * (NULL: the files have no usable statistics for it) */
typedef struct ArrowFooterStats
{
	int16		attnum;
	HeapTuple	tuple;
} ArrowFooterStats;

/* arrow_fdw_write.c */
struct FdwRoutine;
extern void arrow_fdw_write_routines(struct FdwRoutine *r);

/* arrow_fdw_write.c: ERROR (0A000) if path is a Parquet file (read-only) */
extern void arrow_fdw_refuse_parquet(const char *path);

#endif							/* ARROW_FDW_H */
