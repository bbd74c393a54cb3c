/*
 * dump_geo.c — pgwarp dump: PostGIS geometry columns as GeoArrow.
 *
 * A top-level geometry column is fetched as ST_AsBinary (ISO WKB) and
 * written as geoarrow.wkb (Binary), or, when declared geometry(Point) or
 * geometry(Point, n) (2-D), as geoarrow.point (Struct<x: double, y:
 * double>, POINT EMPTY as NaN, NaN, as GeoArrow specifies).  The field's
 * "ARROW:extension:metadata" names its CRS: {"crs": "EPSG:n"} when PostGIS's
 * spatial_ref_sys says the SRID is EPSG's code n, {"crs": "n", "crs_type":
 * "srid"} for another SRID, {} for SRID 0.  The SRID is the typmod's, or,
 * for an unconstrained column, the data's: one extra pass of the query, and
 * an error naming the column when its values have several SRIDs.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dump.h"

/* a few SQL fragments joined, malloc'd */
static char *
join(const char *a, const char *b)
{
	size_t		la = a ? strlen(a) : 0;
	char	   *s = malloc(la + strlen(b) + 1);

	if (s == NULL)
	{
		pgw_error("out of memory");
		exit(1);
	}
	if (a)
		memcpy(s, a, la);
	strcpy(s + la, b);
	return s;
}

static char *
join_free(char *a, const char *b)
{
	char	   *s = join(a, b);

	free(a);
	return s;
}

/* the SRID of every unconstrained geometry column, from the data */
static int
srid_pass(PGconn *conn, const char *query, DumpSchema *ds)
{
	char	   *sql = join(NULL, "SELECT ");
	char		tmp[128];
	int			n = 0;
	PGresult   *res;

	for (int c = 0; c < ds->n_columns; c++)
	{
		PgNode	   *g = &ds->columns[c].node;

		if (ds->columns[c].as_text || g->geo_schema == NULL || g->geo_srid >= 0)
			continue;
		for (int k = 0; k < 2; k++)
		{
			sql = join_free(sql, n++ ? ", " : "");
			sql = join_free(sql, k ? "pg_catalog.max(" : "pg_catalog.min(");
			sql = join_free(sql, g->geo_schema);
			snprintf(tmp, sizeof(tmp), ".st_srid(q.c%d))", c + 1);
			sql = join_free(sql, tmp);
		}
	}
	if (n == 0)
	{
		free(sql);
		return 0;
	}
	sql = join_free(sql, " FROM (");
	sql = join_free(sql, query);
	sql = join_free(sql, "\n) AS q(");
	for (int c = 0; c < ds->n_columns; c++)
	{
		snprintf(tmp, sizeof(tmp), c ? ", c%d" : "c%d", c + 1);
		sql = join_free(sql, tmp);
	}
	sql = join_free(sql, ")");
	res = PQexec(conn, sql);
	free(sql);
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1 || PQnfields(res) != n)
	{
		dump_pg_error(conn, res, "could not find the SRID of geometry columns");
		PQclear(res);
		return 1;
	}
	n = 0;
	for (int c = 0; c < ds->n_columns; c++)
	{
		PgNode	   *g = &ds->columns[c].node;
		int			lo,
					hi;

		if (ds->columns[c].as_text || g->geo_schema == NULL || g->geo_srid >= 0)
			continue;
		lo = PQgetisnull(res, 0, n) ? 0 : atoi(PQgetvalue(res, 0, n));
		hi = PQgetisnull(res, 0, n + 1) ? 0 : atoi(PQgetvalue(res, 0, n + 1));
		n += 2;
		if (lo != hi)
		{
			PQclear(res);
			return pgw_error("column \"%s\" has geometries of SRIDs %d and %d: a GeoArrow "
							 "column has one CRS (use ST_Transform or ST_SetSRID in the "
							 "query)", ds->columns[c].name, lo, hi);
		}
		g->geo_srid = lo;
	}
	PQclear(res);
	return 0;
}

/* the extension metadata naming the CRS of g->geo_srid */
static int
crs_metadata(PGconn *conn, PgNode *g)
{
	char		srid[32];
	char		buf[160];
	const char *params[1] = {srid};
	char	   *sql;
	PGresult   *res;

	if (g->geo_srid <= 0)
	{
		g->geo_meta = join(NULL, "{}");
		return 0;
	}
	snprintf(srid, sizeof(srid), "%d", g->geo_srid);
	sql = join(NULL, "SELECT auth_name, auth_srid FROM ");
	sql = join_free(sql, g->geo_schema);
	sql = join_free(sql, ".spatial_ref_sys WHERE srid = $1::pg_catalog.int4");
	res = PQexecParams(conn, sql, 1, NULL, params, NULL, NULL, 0);
	free(sql);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		dump_pg_error(conn, res, "could not look up the SRID in spatial_ref_sys");
		PQclear(res);
		return 1;
	}
	if (PQntuples(res) == 1 && !PQgetisnull(res, 0, 0) && !PQgetisnull(res, 0, 1) &&
		strcmp(PQgetvalue(res, 0, 0), "EPSG") == 0)
		snprintf(buf, sizeof(buf), "{\"crs\":\"EPSG:%d\"}", atoi(PQgetvalue(res, 0, 1)));
	else
		snprintf(buf, sizeof(buf), "{\"crs\":\"%d\",\"crs_type\":\"srid\"}", g->geo_srid);
	PQclear(res);
	g->geo_meta = join(NULL, buf);
	return 0;
}

int
dump_geo_prepass(PGconn *conn, const char *query, DumpSchema *ds)
{
	if (srid_pass(conn, query, ds) != 0)
		return 1;
	for (int c = 0; c < ds->n_columns; c++)
		if (!ds->columns[c].as_text && ds->columns[c].node.geo_schema &&
			crs_metadata(conn, &ds->columns[c].node) != 0)
			return 1;
	return 0;
}

static double
wkb_double(const uint8_t *p, bool little)
{
	uint8_t		b[8];
	double		v;

	for (int i = 0; i < 8; i++)
		b[i] = little ? p[i] : p[7 - i];
	memcpy(&v, b, 8);			/* the host is little-endian (checked below) */
	return v;
}

bool
dump_geo_wkb_point(const uint8_t *p, int32_t len, double *x, double *y)
{
	const uint16_t probe = 1;
	bool		little;
	uint32_t	type;

	if (len != 21 || (p[0] != 0 && p[0] != 1) || *(const uint8_t *) &probe != 1)
		return false;
	little = p[0] == 1;
	type = little ? (uint32_t) p[1] | (uint32_t) p[2] << 8 | (uint32_t) p[3] << 16 |
		(uint32_t) p[4] << 24 :
		(uint32_t) p[4] | (uint32_t) p[3] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[1] << 24;
	if (type != 1)
		return false;
	*x = wkb_double(p + 5, little);
	*y = wkb_double(p + 13, little);
	return true;
}
