/*
 * dump.h — pgwarp dump internals: the PostgreSQL type tree of each result
 * column and its Arrow mapping (dump_schema.c), used by the COPY decoder
 * (cmd_dump.c).
 */
#ifndef PGWARP_DUMP_H
#define PGWARP_DUMP_H

#include <libpq-fe.h>

#include "pgwarp.h"

typedef enum PgKind
{
	PGK_UNSUPPORTED = 0,		/* not decoded: the column goes through ::text */
	PGK_BOOL,
	PGK_INT2,
	PGK_INT4,
	PGK_INT8,
	PGK_OID,
	PGK_FLOAT4,
	PGK_FLOAT8,
	PGK_NUMERIC,
	PGK_TEXT,					/* text, varchar, bpchar, name, json, enum, ... */
	PGK_JSONB,					/* version byte, then text */
	PGK_BYTEA,
	PGK_UUID,
	PGK_DATE,
	PGK_TIME,
	PGK_TIMESTAMP,
	PGK_TIMESTAMPTZ,
	PGK_INTERVAL,
	PGK_ARRAY,					/* one child: the element */
	PGK_COMPOSITE,				/* children: the attributes */
	PGK_GEOM_WKB,				/* PostGIS geometry, fetched as ST_AsBinary:
								 * geoarrow.wkb */
	PGK_GEOM_POINT				/* geometry(Point), fetched as ST_AsBinary:
								 * geoarrow.point Struct<x, y> (children) */
} PgKind;

typedef struct PgNode
{
	PgKind		kind;
	Oid			oid;			/* as declared (a domain stays a domain) */
	Oid			base_oid;		/* after domains */
	int32_t		typmod;
	char	   *pg_type;		/* format_type(oid, typmod) */
	char	   *name;			/* attribute name (composites) or "item" */
	/* numeric */
	int			precision;
	int			scale;
	bool		scale_from_data;	/* unconstrained or p > 38: pre-pass */
	/* PGK_GEOM_*: PostGIS's schema (quoted), the SRID (-1: from the data),
	 * the GeoArrow extension metadata (dump_geo.c) */
	char	   *geo_schema;
	int32_t		geo_srid;
	char	   *geo_meta;
	int			n_children;
	struct PgNode *children;
	ArrowBuilder *builder;		/* set once the writer exists */
} PgNode;

typedef struct DumpColumn
{
	char	   *name;
	Oid			oid;
	int32_t		typmod;
	bool		as_text;		/* re-issued as ::text, written as Utf8 */
	PgNode		node;
} DumpColumn;

typedef struct DumpSchema
{
	int			n_columns;
	DumpColumn *columns;
} DumpSchema;

/*
 * Describe `query` (PQprepare + PQdescribePrepared), resolve every type
 * through the catalog, decide the mapping (numeric_as_text: unconstrained
 * numeric columns become text), format_type every node, and run the scale
 * pre-pass for unconstrained numerics.  0, or prints the error and returns 1.
 */
int			dump_describe(PGconn *conn, const char *query, bool numeric_as_text,
						  DumpSchema *ds);

/* SELECT that the COPY runs: the query itself, or a wrapper casting the
 * as_text columns to text.  malloc'd. */
char	   *dump_copy_query(const char *query, const DumpSchema *ds);

/* Build the Arrow schema (fields with pg_type metadata) in arena. */
int			dump_arrow_schema(const DumpSchema *ds, ArrowArena *arena,
							  ArrowSchema *schema, ArrowError *err);

/* Attach the writer's builders to the nodes. */
void		dump_attach_builders(DumpSchema *ds, ArrowWriter *w);

/*
 * dump_geo.c: the SRID of geometry columns whose type does not fix it (one
 * pass of the query; several SRIDs in one column are an error, since
 * GeoArrow gives a column one CRS) and each one's GeoArrow metadata.
 */
int			dump_geo_prepass(PGconn *conn, const char *query, DumpSchema *ds);

/* x, y of a 2-D WKB point (NaN, NaN when empty); false if p is not one */
bool		dump_geo_wkb_point(const uint8_t *p, int32_t len, double *x, double *y);

/* print a libpq failure ("<what>: <server message>") and return 1 */
int			dump_pg_error(PGconn *conn, const PGresult *res, const char *what);

#endif							/* PGWARP_DUMP_H */
