/*
 * dump_schema.c — pgwarp dump: describe the query, resolve its column types
 * through the catalog, and map them to Arrow.
 *
 *   bool -> Bool; int2/int4/int8 -> Int16/32/64; oid -> UInt32;
 *   float4/float8 -> Float32/64; numeric(p<=38,s) -> Decimal128(p,s);
 *   other numeric -> Decimal128(38, max scale in the data) (or Utf8 with
 *   --numeric-as-text); text-like types and enums -> Utf8; bytea -> Binary;
 *   uuid -> FixedSizeBinary(16); date -> Date32; time -> Time64(us);
 *   timestamp -> Timestamp(us); timestamptz -> Timestamp(us, UTC);
 *   interval -> Interval(MonthDayNano); arrays -> List; composites ->
 *   Struct; domains -> their base type; PostGIS geometry (top level) ->
 *   GeoArrow, fetched as ST_AsBinary (dump_geo.c); anything else (or a tree
 *   containing it) -> the column is cast to text by the server and written
 *   as Utf8.
 * Every field carries metadata pg_type = format_type(oid, typmod).
 */
#include <stdlib.h>
#include <string.h>

#include "dump.h"
#include "pg_binary.h"

#define MAX_TYPE_DEPTH 32

/* built-in type OIDs (pg_type.dat; stable) */
#define BOOLOID			16
#define BYTEAOID		17
#define NAMEOID			19
#define INT8OID			20
#define INT2OID			21
#define INT4OID			23
#define TEXTOID			25
#define OIDOID			26
#define JSONOID			114
#define FLOAT4OID		700
#define FLOAT8OID		701
#define UNKNOWNOID		705
#define BPCHAROID		1042
#define VARCHAROID		1043
#define DATEOID			1082
#define TIMEOID			1083
#define TIMESTAMPOID	1114
#define TIMESTAMPTZOID	1184
#define INTERVALOID		1186
#define NUMERICOID		1700
#define UUIDOID			2950
#define JSONBOID		3802
#define INETOID			869

typedef struct TypeInfo
{
	Oid			oid;
	bool		found;
	char		typtype;
	Oid			typelem;
	Oid			typbasetype;
	int32_t		typtypmod;
	Oid			typrelid;
	bool		is_array;
	bool		atts_loaded;
	int			natts;
	char	  **attnames;
	Oid		   *atttypids;
	int32_t    *atttypmods;
	bool		is_geometry;	/* PostGIS's geometry */
	char	   *nspname;		/* its schema, quoted */
} TypeInfo;

static TypeInfo *types;
static int	n_types;
static int	cap_types;

static void *
xcalloc(size_t n, size_t size)
{
	void	   *p = calloc(n ? n : 1, size ? size : 1);

	if (p == NULL)
	{
		pgw_error("out of memory");
		exit(1);
	}
	return p;
}

static char *
xstrdup(const char *s)
{
	char	   *p = strdup(s ? s : "");

	if (p == NULL)
	{
		pgw_error("out of memory");
		exit(1);
	}
	return p;
}

/* a growable string */
typedef struct Str
{
	char	   *s;
	size_t		len;
	size_t		cap;
} Str;

static void
str_add(Str *b, const char *s)
{
	size_t		n = strlen(s);

	if (b->len + n + 1 > b->cap)
	{
		size_t		cap = b->cap ? b->cap * 2 : 256;

		while (cap < b->len + n + 1)
			cap *= 2;
		b->s = realloc(b->s, cap);
		if (b->s == NULL)
		{
			pgw_error("out of memory");
			exit(1);
		}
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n + 1);
	b->len += n;
}

static void
str_addf_int(Str *b, const char *fmt, long long v)
{
	char		tmp[64];

	snprintf(tmp, sizeof(tmp), fmt, v);
	str_add(b, tmp);
}

/* "name" with embedded quotes doubled */
static void
str_add_ident(Str *b, const char *name)
{
	str_add(b, "\"");
	for (const char *p = name; *p; p++)
	{
		char		c[2] = {*p, 0};

		str_add(b, *p == '"' ? "\"\"" : c);
	}
	str_add(b, "\"");
}

int
dump_pg_error(PGconn *conn, const PGresult *res, const char *what)
{
	const char *primary = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;

	if (primary)
	{
		const char *detail = PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL);
		const char *pos = PQresultErrorField(res, PG_DIAG_STATEMENT_POSITION);

		if (detail)
			return pgw_error("%s: %s (%s)", what, primary, detail);
		if (pos)
			return pgw_error("%s: %s (at character %s)", what, primary, pos);
		return pgw_error("%s: %s", what, primary);
	}
	if (res && PQresultErrorMessage(res)[0])
		return pgw_error("%s: %s", what, PQresultErrorMessage(res));
	return pgw_error("%s: %s", what, PQerrorMessage(conn));
}

/* ------------------------------------------------------------ catalog */

static TypeInfo *
lookup_type(Oid oid)
{
	for (int i = 0; i < n_types; i++)
		if (types[i].oid == oid)
			return &types[i];
	return NULL;
}

static TypeInfo *
add_type(Oid oid)
{
	if (n_types == cap_types)
	{
		cap_types = cap_types ? cap_types * 2 : 32;
		types = realloc(types, sizeof(TypeInfo) * cap_types);
		if (types == NULL)
		{
			pgw_error("out of memory");
			exit(1);
		}
	}
	memset(&types[n_types], 0, sizeof(TypeInfo));
	types[n_types].oid = oid;
	return &types[n_types++];
}

/* OIDs to look up next */
typedef struct OidList
{
	int			n;
	int			cap;
	Oid		   *v;
} OidList;

static void
oidlist_add(OidList *l, Oid oid)
{
	if (oid == 0 || lookup_type(oid))
		return;
	for (int i = 0; i < l->n; i++)
		if (l->v[i] == oid)
			return;
	if (l->n == l->cap)
	{
		l->cap = l->cap ? l->cap * 2 : 16;
		l->v = realloc(l->v, sizeof(Oid) * l->cap);
		if (l->v == NULL)
		{
			pgw_error("out of memory");
			exit(1);
		}
	}
	l->v[l->n++] = oid;
}

static char *
oid_array_literal(const Oid *v, int n)
{
	Str			b = {0};

	str_add(&b, "{");
	for (int i = 0; i < n; i++)
	{
		if (i > 0)
			str_add(&b, ",");
		str_addf_int(&b, "%lld", (long long) v[i]);
	}
	str_add(&b, "}");
	return b.s;
}

/*
 * Resolve every type reachable from the given OIDs (domains' base types,
 * arrays' element types, composites' attribute types), a few catalog
 * queries per nesting level.
 */
static int
resolve_types(PGconn *conn, const Oid *oids, int n)
{
	OidList		todo = {0};
	int			rounds = 0;

	for (int i = 0; i < n; i++)
		oidlist_add(&todo, oids[i]);

	while (todo.n > 0)
	{
		char	   *lit = oid_array_literal(todo.v, todo.n);
		const char *params[1] = {lit};
		PGresult   *res;
		OidList		relids = {0};
		OidList		next = {0};
		int			first_new = n_types;

		if (++rounds > MAX_TYPE_DEPTH)
		{
			free(lit);
			return pgw_error("types nested too deeply");
		}
		res = PQexecParams(conn,
						   "SELECT t.oid, t.typtype, t.typelem, t.typbasetype, t.typtypmod, "
						   "t.typrelid, t.typsubscript = 'pg_catalog.array_subscript_handler'::pg_catalog.regproc, "
						   "EXISTS (SELECT FROM pg_catalog.pg_proc p WHERE p.oid = t.typinput "
						   "AND p.prosrc = 'LWGEOM_in' AND p.probin ~ '(^|/)postgis-[^/]*$'), "
						   "t.typnamespace::pg_catalog.regnamespace::pg_catalog.text "
						   "FROM pg_catalog.pg_type t WHERE t.oid = ANY ($1::pg_catalog.oid[])",
						   1, NULL, params, NULL, NULL, 0);
		free(lit);
		if (PQresultStatus(res) != PGRES_TUPLES_OK)
		{
			dump_pg_error(conn, res, "could not look up column types");
			PQclear(res);
			return 1;
		}
		for (int i = 0; i < todo.n; i++)
			add_type(todo.v[i]);
		for (int r = 0; r < PQntuples(res); r++)
		{
			TypeInfo   *t = lookup_type((Oid) strtoul(PQgetvalue(res, r, 0), NULL, 10));

			if (t == NULL)
				continue;
			t->found = true;
			t->typtype = PQgetvalue(res, r, 1)[0];
			t->typelem = (Oid) strtoul(PQgetvalue(res, r, 2), NULL, 10);
			t->typbasetype = (Oid) strtoul(PQgetvalue(res, r, 3), NULL, 10);
			t->typtypmod = atoi(PQgetvalue(res, r, 4));
			t->typrelid = (Oid) strtoul(PQgetvalue(res, r, 5), NULL, 10);
			t->is_array = PQgetvalue(res, r, 6)[0] == 't';
			t->is_geometry = PQgetvalue(res, r, 7)[0] == 't';
			t->nspname = xstrdup(PQgetvalue(res, r, 8));
		}
		PQclear(res);
		todo.n = 0;

		for (int i = first_new; i < n_types; i++)
		{
			TypeInfo   *t = &types[i];

			if (!t->found)
				continue;
			if (t->typtype == 'd')
				oidlist_add(&next, t->typbasetype);
			else if (t->is_array)
				oidlist_add(&next, t->typelem);
			else if (t->typtype == 'c' && t->typrelid != 0)
			{
				relids.v = realloc(relids.v, sizeof(Oid) * (relids.n + 1));
				relids.v[relids.n++] = t->typrelid;
			}
		}
		if (relids.n > 0)
		{
			lit = oid_array_literal(relids.v, relids.n);
			params[0] = lit;
			res = PQexecParams(conn,
							   "SELECT a.attrelid, a.attname, a.atttypid, a.atttypmod "
							   "FROM pg_catalog.pg_attribute a "
							   "WHERE a.attrelid = ANY ($1::pg_catalog.oid[]) AND a.attnum > 0 "
							   "AND NOT a.attisdropped ORDER BY a.attrelid, a.attnum",
							   1, NULL, params, NULL, NULL, 0);
			free(lit);
			if (PQresultStatus(res) != PGRES_TUPLES_OK)
			{
				dump_pg_error(conn, res, "could not look up composite types");
				PQclear(res);
				return 1;
			}
			for (int i = first_new; i < n_types; i++)
			{
				TypeInfo   *t = &types[i];
				int			k = 0;

				if (!t->found || t->typtype != 'c' || t->typrelid == 0)
					continue;
				for (int r = 0; r < PQntuples(res); r++)
					if ((Oid) strtoul(PQgetvalue(res, r, 0), NULL, 10) == t->typrelid)
						k++;
				t->natts = k;
				t->attnames = xcalloc(k, sizeof(char *));
				t->atttypids = xcalloc(k, sizeof(Oid));
				t->atttypmods = xcalloc(k, sizeof(int32_t));
				k = 0;
				for (int r = 0; r < PQntuples(res); r++)
				{
					if ((Oid) strtoul(PQgetvalue(res, r, 0), NULL, 10) != t->typrelid)
						continue;
					t->attnames[k] = xstrdup(PQgetvalue(res, r, 1));
					t->atttypids[k] = (Oid) strtoul(PQgetvalue(res, r, 2), NULL, 10);
					t->atttypmods[k] = atoi(PQgetvalue(res, r, 3));
					oidlist_add(&next, t->atttypids[k]);
					k++;
				}
				t->atts_loaded = true;
			}
			PQclear(res);
		}
		free(relids.v);
		free(todo.v);
		todo = next;
	}
	free(todo.v);
	return 0;
}

/* ------------------------------------------------------------- nodes */

/*
 * A top-level PostGIS geometry column (nested ones go through text): a
 * declared 2-D geometry(Point) becomes geoarrow.point, anything else
 * geoarrow.wkb.  The SRID comes from the typmod (PostGIS's TYPMOD_GET_*
 * fields) or, when it has none, from the data (dump_geo_prepass).
 */
static void
build_geometry_node(PgNode *n, const TypeInfo *t, int32_t tm)
{
	bool		point = tm >= 0 && ((tm & 0xFC) >> 2) == 1 && (tm & 3) == 0;
	int32_t		srid = tm >= 0 ? (((tm & 0x0FFFFF00) - (tm & 0x10000000)) >> 8) : 0;

	n->geo_schema = xstrdup(t->nspname);
	n->geo_srid = srid > 0 ? srid : -1;
	n->kind = point ? PGK_GEOM_POINT : PGK_GEOM_WKB;
	if (point)
	{
		n->n_children = 2;
		n->children = xcalloc(2, sizeof(PgNode));
		for (int i = 0; i < 2; i++)
		{
			n->children[i].kind = PGK_FLOAT8;
			n->children[i].oid = n->children[i].base_oid = FLOAT8OID;
			n->children[i].typmod = -1;
			n->children[i].name = xstrdup(i == 0 ? "x" : "y");
		}
	}
}

static void
build_node(PgNode *n, Oid oid, int32_t typmod, const char *name, int depth)
{
	TypeInfo   *t = lookup_type(oid);
	int32_t		tm = typmod;
	int			guard = 0;

	memset(n, 0, sizeof(*n));
	n->oid = oid;
	n->typmod = typmod;
	n->name = xstrdup(name);
	n->kind = PGK_UNSUPPORTED;

	while (t && t->found && t->typtype == 'd' && guard++ < MAX_TYPE_DEPTH)
	{
		if (tm < 0)
			tm = t->typtypmod;
		t = lookup_type(t->typbasetype);
	}
	if (t == NULL || !t->found || depth > MAX_TYPE_DEPTH)
		return;
	n->base_oid = t->oid;

	switch (t->oid)
	{
		case BOOLOID:
			n->kind = PGK_BOOL;
			return;
		case INT2OID:
			n->kind = PGK_INT2;
			return;
		case INT4OID:
			n->kind = PGK_INT4;
			return;
		case INT8OID:
			n->kind = PGK_INT8;
			return;
		case OIDOID:
			n->kind = PGK_OID;
			return;
		case FLOAT4OID:
			n->kind = PGK_FLOAT4;
			return;
		case FLOAT8OID:
			n->kind = PGK_FLOAT8;
			return;
		case NUMERICOID:
			n->kind = PGK_NUMERIC;
			if (pgb_numeric_typmod(tm, &n->precision, &n->scale) &&
				n->precision >= 1 && n->precision <= 38)
				return;
			n->precision = 38;
			n->scale = 0;
			n->scale_from_data = true;
			return;
		case TEXTOID:
		case VARCHAROID:
		case BPCHAROID:
		case NAMEOID:
		case JSONOID:
		case UNKNOWNOID:
			n->kind = PGK_TEXT;
			return;
		case JSONBOID:
			n->kind = PGK_JSONB;
			return;
		case BYTEAOID:
			n->kind = PGK_BYTEA;
			return;
		case UUIDOID:
			n->kind = PGK_UUID;
			return;
		case DATEOID:
			n->kind = PGK_DATE;
			return;
		case TIMEOID:
			n->kind = PGK_TIME;
			return;
		case TIMESTAMPOID:
			n->kind = PGK_TIMESTAMP;
			return;
		case TIMESTAMPTZOID:
			n->kind = PGK_TIMESTAMPTZ;
			return;
		case INTERVALOID:
			n->kind = PGK_INTERVAL;
			return;
		default:
			break;
	}
	if (t->is_geometry && depth == 0)
	{
		build_geometry_node(n, t, tm);
		return;
	}
	if (t->is_array && t->typelem != 0)
	{
		n->kind = PGK_ARRAY;
		n->n_children = 1;
		n->children = xcalloc(1, sizeof(PgNode));
		/* an array's typmod applies to its elements */
		build_node(&n->children[0], t->typelem, tm, "item", depth + 1);
	}
	else if (t->typtype == 'c' && t->atts_loaded)
	{
		n->kind = PGK_COMPOSITE;
		n->n_children = t->natts;
		n->children = xcalloc(t->natts, sizeof(PgNode));
		for (int i = 0; i < t->natts; i++)
			build_node(&n->children[i], t->atttypids[i], t->atttypmods[i],
					   t->attnames[i], depth + 1);
		if (t->natts == 0)
			n->kind = PGK_UNSUPPORTED;	/* a Struct needs children */
	}
	else if (t->typtype == 'e')
		n->kind = PGK_TEXT;
}

static bool
tree_supported(const PgNode *n)
{
	if (n->kind == PGK_UNSUPPORTED)
		return false;
	for (int i = 0; i < n->n_children; i++)
		if (!tree_supported(&n->children[i]))
			return false;
	return true;
}

static bool
tree_needs_scale(const PgNode *n)
{
	if (n->kind == PGK_NUMERIC && n->scale_from_data)
		return true;
	for (int i = 0; i < n->n_children; i++)
		if (tree_needs_scale(&n->children[i]))
			return true;
	return false;
}

typedef struct NodeList
{
	int			n;
	int			cap;
	PgNode	  **v;
	char	  **expr;			/* pre-pass: scale expression per leaf */
} NodeList;

static void
nodelist_add(NodeList *l, PgNode *node, char *expr)
{
	if (l->n == l->cap)
	{
		l->cap = l->cap ? l->cap * 2 : 32;
		l->v = realloc(l->v, sizeof(PgNode *) * l->cap);
		l->expr = realloc(l->expr, sizeof(char *) * l->cap);
		if (l->v == NULL || l->expr == NULL)
		{
			pgw_error("out of memory");
			exit(1);
		}
	}
	l->v[l->n] = node;
	l->expr[l->n] = expr;
	l->n++;
}

static void
collect_nodes(PgNode *n, NodeList *l)
{
	nodelist_add(l, n, NULL);
	for (int i = 0; i < n->n_children; i++)
		collect_nodes(&n->children[i], l);
}

/*
 * For every numeric leaf below n that takes its scale from the data, an SQL
 * expression (over the value expression x) giving the largest scale of that
 * leaf's values in one row.
 */
static void
scale_exprs(PgNode *n, const char *x, int depth, NodeList *out)
{
	Str			b = {0};

	if (n->kind == PGK_NUMERIC && n->scale_from_data)
	{
		str_add(&b, "pg_catalog.scale(");
		str_add(&b, x);
		str_add(&b, ")");
		nodelist_add(out, n, b.s);
	}
	else if (n->kind == PGK_ARRAY)
	{
		char		alias[32];
		int			start = out->n;

		snprintf(alias, sizeof(alias), "e%d", depth);
		scale_exprs(&n->children[0], alias, depth + 1, out);
		for (int i = start; i < out->n; i++)
		{
			Str			w = {0};

			str_add(&w, "(SELECT pg_catalog.max(");
			str_add(&w, out->expr[i]);
			str_add(&w, ") FROM pg_catalog.unnest(");
			str_add(&w, x);
			str_add(&w, ") AS ");
			str_add(&w, alias);
			str_add(&w, ")");
			free(out->expr[i]);
			out->expr[i] = w.s;
		}
	}
	else if (n->kind == PGK_COMPOSITE)
	{
		for (int i = 0; i < n->n_children; i++)
		{
			Str			a = {0};

			str_add(&a, "(");
			str_add(&a, x);
			str_add(&a, ").");
			str_add_ident(&a, n->children[i].name);
			scale_exprs(&n->children[i], a.s, depth, out);
			free(a.s);
		}
	}
}

static void
add_column_aliases(Str *b, const DumpSchema *ds)
{
	str_add(b, " AS q(");
	for (int i = 0; i < ds->n_columns; i++)
		str_addf_int(b, i ? ", c%lld" : "c%lld", i + 1);
	str_add(b, ")");
}

static int
scale_prepass(PGconn *conn, const char *query, DumpSchema *ds)
{
	NodeList	leaves = {0};
	Str			sql = {0};
	PGresult   *res;

	for (int c = 0; c < ds->n_columns; c++)
	{
		char		x[32];

		if (ds->columns[c].as_text)
			continue;
		snprintf(x, sizeof(x), "q.c%d", c + 1);
		scale_exprs(&ds->columns[c].node, x, 1, &leaves);
	}
	if (leaves.n == 0)
		return 0;
	str_add(&sql, "SELECT ");
	for (int i = 0; i < leaves.n; i++)
	{
		if (i > 0)
			str_add(&sql, ", ");
		str_add(&sql, "pg_catalog.max(");
		str_add(&sql, leaves.expr[i]);
		str_add(&sql, ")");
	}
	str_add(&sql, " FROM (");
	str_add(&sql, query);
	str_add(&sql, "\n)");
	add_column_aliases(&sql, ds);
	res = PQexec(conn, sql.s);
	free(sql.s);
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1 ||
		PQnfields(res) != leaves.n)
	{
		dump_pg_error(conn, res, "could not find the scale of numeric columns");
		PQclear(res);
		return 1;
	}
	for (int i = 0; i < leaves.n; i++)
	{
		int			s = PQgetisnull(res, 0, i) ? 0 : atoi(PQgetvalue(res, 0, i));

		leaves.v[i]->scale = s < 0 ? 0 : s > 38 ? 38 : s;
		free(leaves.expr[i]);
	}
	PQclear(res);
	free(leaves.v);
	free(leaves.expr);
	return 0;
}

static int
format_types(PGconn *conn, DumpSchema *ds)
{
	NodeList	all = {0};
	Str			oids = {0};
	Str			mods = {0};
	const char *params[2];
	PGresult   *res;

	for (int c = 0; c < ds->n_columns; c++)
		collect_nodes(&ds->columns[c].node, &all);
	str_add(&oids, "{");
	str_add(&mods, "{");
	for (int i = 0; i < all.n; i++)
	{
		str_addf_int(&oids, i ? ",%lld" : "%lld", (long long) all.v[i]->oid);
		str_addf_int(&mods, i ? ",%lld" : "%lld", (long long) all.v[i]->typmod);
	}
	str_add(&oids, "}");
	str_add(&mods, "}");
	params[0] = oids.s;
	params[1] = mods.s;
	res = PQexecParams(conn,
					   "SELECT pg_catalog.format_type(u.o, u.m) "
					   "FROM ROWS FROM (pg_catalog.unnest($1::pg_catalog.oid[]), "
					   "pg_catalog.unnest($2::pg_catalog.int4[])) "
					   "WITH ORDINALITY AS u(o, m, i) ORDER BY u.i",
					   2, NULL, params, NULL, NULL, 0);
	free(oids.s);
	free(mods.s);
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != all.n)
	{
		dump_pg_error(conn, res, "could not format column types");
		PQclear(res);
		return 1;
	}
	for (int i = 0; i < all.n; i++)
		all.v[i]->pg_type = xstrdup(PQgetisnull(res, i, 0) ? "" : PQgetvalue(res, i, 0));
	PQclear(res);
	free(all.v);
	free(all.expr);
	return 0;
}

int
dump_describe(PGconn *conn, const char *query, bool numeric_as_text,
			  DumpSchema *ds)
{
	PGresult   *res;
	Oid		   *oids;
	int			n;

	memset(ds, 0, sizeof(*ds));
	res = PQprepare(conn, "", query, 0, NULL);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
	{
		dump_pg_error(conn, res, "query failed");
		PQclear(res);
		return 1;
	}
	PQclear(res);
	res = PQdescribePrepared(conn, "");
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
	{
		dump_pg_error(conn, res, "could not describe the query");
		PQclear(res);
		return 1;
	}
	n = PQnfields(res);
	if (n == 0)
	{
		PQclear(res);
		return pgw_error("the query returns no columns");
	}
	ds->n_columns = n;
	ds->columns = xcalloc(n, sizeof(DumpColumn));
	oids = xcalloc(n, sizeof(Oid));
	for (int i = 0; i < n; i++)
	{
		ds->columns[i].name = xstrdup(PQfname(res, i));
		ds->columns[i].oid = PQftype(res, i);
		ds->columns[i].typmod = PQfmod(res, i);
		oids[i] = PQftype(res, i);
	}
	PQclear(res);

	if (resolve_types(conn, oids, n) != 0)
	{
		free(oids);
		return 1;
	}
	free(oids);

	for (int i = 0; i < n; i++)
	{
		DumpColumn *c = &ds->columns[i];

		build_node(&c->node, c->oid, c->typmod, c->name, 0);
		if (!tree_supported(&c->node) ||
			(numeric_as_text && tree_needs_scale(&c->node)))
			c->as_text = true;
	}
	if (format_types(conn, ds) != 0 || dump_geo_prepass(conn, query, ds) != 0)
		return 1;
	for (int i = 0; i < n; i++)
	{
		DumpColumn *c = &ds->columns[i];

		if (c->as_text)
		{
			/* keep name and pg_type; decode as text */
			c->node.kind = PGK_TEXT;
			c->node.n_children = 0;
			c->node.scale_from_data = false;
		}
	}
	return scale_prepass(conn, query, ds);
}

char *
dump_copy_query(const char *query, const DumpSchema *ds)
{
	Str			b = {0};
	bool		any = false;

	for (int i = 0; i < ds->n_columns; i++)
		any |= ds->columns[i].as_text || ds->columns[i].node.geo_schema != NULL;
	if (!any)
		return xstrdup(query);
	str_add(&b, "SELECT ");
	for (int i = 0; i < ds->n_columns; i++)
	{
		if (i > 0)
			str_add(&b, ", ");
		/* inet's text cast adds the netmask; abbrev() is its output form */
		if (ds->columns[i].as_text && ds->columns[i].node.base_oid == INETOID)
			str_add(&b, "pg_catalog.abbrev(");
		else if (!ds->columns[i].as_text && ds->columns[i].node.geo_schema)
		{
			/* ISO WKB, as GeoArrow stores it (the binary output is EWKB) */
			str_add(&b, ds->columns[i].node.geo_schema);
			str_add(&b, ".st_asbinary(");
		}
		str_addf_int(&b, "q.c%lld", i + 1);
		if (!ds->columns[i].as_text && ds->columns[i].node.geo_schema)
			str_add(&b, ")");
		if (ds->columns[i].as_text && ds->columns[i].node.base_oid == INETOID)
			str_add(&b, ")");
		else if (ds->columns[i].as_text)
			str_add(&b, "::pg_catalog.text");
	}
	str_add(&b, " FROM (");
	str_add(&b, query);
	str_add(&b, "\n)");
	add_column_aliases(&b, ds);
	return b.s;
}

/* ------------------------------------------------------- Arrow schema */

static int
make_field(const PgNode *n, const char *name, ArrowArena *arena, ArrowField *f,
		   ArrowError *err)
{
	ArrowType  *t = &f->type;

	memset(f, 0, sizeof(*f));
	f->name = arrow_arena_strdup(arena, name, err);
	f->nullable = true;
	f->n_metadata = 1;
	f->metadata = arrow_arena_alloc(arena, sizeof(ArrowKeyValue), err);
	if (f->name == NULL || f->metadata == NULL)
		return -1;
	f->metadata[0].key = arrow_arena_strdup(arena, "pg_type", err);
	f->metadata[0].value = arrow_arena_strdup(arena, n->pg_type ? n->pg_type : "", err);
	if (f->metadata[0].key == NULL || f->metadata[0].value == NULL)
		return -1;
	if (n->kind == PGK_GEOM_WKB || n->kind == PGK_GEOM_POINT)
	{
		ArrowKeyValue *m = arrow_arena_alloc(arena, 3 * sizeof(ArrowKeyValue), err);

		if (m == NULL)
			return -1;
		m[0] = f->metadata[0];
		m[1].key = arrow_arena_strdup(arena, "ARROW:extension:name", err);
		m[1].value = arrow_arena_strdup(arena, n->kind == PGK_GEOM_POINT ? "geoarrow.point" :
										"geoarrow.wkb", err);
		m[2].key = arrow_arena_strdup(arena, "ARROW:extension:metadata", err);
		m[2].value = arrow_arena_strdup(arena, n->geo_meta ? n->geo_meta : "{}", err);
		if (!m[1].key || !m[1].value || !m[2].key || !m[2].value)
			return -1;
		f->metadata = m;
		f->n_metadata = 3;
	}

	switch (n->kind)
	{
		case PGK_BOOL:
			t->id = ARROW_TYPE_BOOL;
			break;
		case PGK_INT2:
		case PGK_INT4:
		case PGK_INT8:
		case PGK_OID:
			t->id = ARROW_TYPE_INT;
			t->bit_width = n->kind == PGK_INT2 ? 16 : n->kind == PGK_INT8 ? 64 : 32;
			t->is_signed = n->kind != PGK_OID;
			break;
		case PGK_FLOAT4:
			t->id = ARROW_TYPE_FLOAT;
			t->precision = ARROW_PRECISION_SINGLE;
			break;
		case PGK_FLOAT8:
			t->id = ARROW_TYPE_FLOAT;
			t->precision = ARROW_PRECISION_DOUBLE;
			break;
		case PGK_NUMERIC:
			t->id = ARROW_TYPE_DECIMAL;
			t->bit_width = 128;
			t->dec_precision = n->precision;
			t->dec_scale = n->scale;
			break;
		case PGK_TEXT:
		case PGK_JSONB:
			t->id = ARROW_TYPE_UTF8;
			break;
		case PGK_BYTEA:
		case PGK_GEOM_WKB:
			t->id = ARROW_TYPE_BINARY;
			break;
		case PGK_UUID:
			t->id = ARROW_TYPE_FIXED_SIZE_BINARY;
			t->fixed_size = 16;
			break;
		case PGK_DATE:
			t->id = ARROW_TYPE_DATE;
			t->unit = ARROW_DATE_DAY;
			break;
		case PGK_TIME:
			t->id = ARROW_TYPE_TIME;
			t->bit_width = 64;
			t->unit = ARROW_TIME_MICROSECOND;
			break;
		case PGK_TIMESTAMP:
		case PGK_TIMESTAMPTZ:
			t->id = ARROW_TYPE_TIMESTAMP;
			t->unit = ARROW_TIME_MICROSECOND;
			if (n->kind == PGK_TIMESTAMPTZ &&
				(t->timezone = arrow_arena_strdup(arena, "UTC", err)) == NULL)
				return -1;
			break;
		case PGK_INTERVAL:
			t->id = ARROW_TYPE_INTERVAL;
			t->unit = ARROW_INTERVAL_MONTH_DAY_NANO;
			break;
		case PGK_ARRAY:
		case PGK_COMPOSITE:
		case PGK_GEOM_POINT:
			t->id = n->kind == PGK_ARRAY ? ARROW_TYPE_LIST : ARROW_TYPE_STRUCT;
			f->n_children = n->n_children;
			f->children = arrow_arena_alloc(arena, sizeof(ArrowField) * n->n_children, err);
			if (f->children == NULL)
				return -1;
			for (int i = 0; i < n->n_children; i++)
				if (make_field(&n->children[i], n->children[i].name, arena,
							   &f->children[i], err) != 0)
					return -1;
			break;
		default:
			return arrow_error(err, ARROW_ERR_UNSUPPORTED, -1,
							   "column \"%s\": unsupported type", name);
	}
	return 0;
}

int
dump_arrow_schema(const DumpSchema *ds, ArrowArena *arena, ArrowSchema *schema,
				  ArrowError *err)
{
	memset(schema, 0, sizeof(*schema));
	schema->n_fields = ds->n_columns;
	schema->fields = arrow_arena_alloc(arena, sizeof(ArrowField) * ds->n_columns, err);
	if (schema->fields == NULL)
		return -1;
	for (int i = 0; i < ds->n_columns; i++)
		if (make_field(&ds->columns[i].node, ds->columns[i].name, arena,
					   &schema->fields[i], err) != 0)
			return -1;
	return arrow_schema_layout(schema, err);
}

static void
attach(PgNode *n, ArrowBuilder *b)
{
	n->builder = b;
	for (int i = 0; i < n->n_children; i++)
		attach(&n->children[i], arrow_builder_child(b, i));
}

void
dump_attach_builders(DumpSchema *ds, ArrowWriter *w)
{
	for (int i = 0; i < ds->n_columns; i++)
		attach(&ds->columns[i].node, arrow_writer_column(w, i));
}
