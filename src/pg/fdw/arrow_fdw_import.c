/*
 * arrow_fdw_import.c — IMPORT FOREIGN SCHEMA for arrow_fdw.
 *
 *   IMPORT FOREIGN SCHEMA name FROM SERVER arrow_fdw INTO schema
 *       OPTIONS (file '...' | files '...' | dir '...' [, other table options])
 *
 * creates one foreign table called `name` with the file's columns.  Types
 * follow DESIGN.md's mapping; a field's "pg_type" metadata (written by
 * pgwarp dump and INSERT) is used instead when it parses and can read the
 * field (varchar(n), json, uuid, ...).  GeoArrow point and WKB fields
 * become PostGIS geometry (with the SRID of their CRS) where PostGIS is
 * installed.  Struct fields need composite types,
 * and ImportForeignSchema may only return CREATE FOREIGN TABLE statements,
 * so the composite types are created here (or reused when one of the same
 * name exists in the target schema and can read the field): "<table>_<column>"
 * for a struct, "<table>_<column>_entry" (key, value) for a map's entries.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_foreign_table.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "commands/typecmds.h"
#include "foreign/fdwapi.h"
#include "foreign/foreign.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "parser/parse_type.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/resowner.h"
#include "utils/syscache.h"

#include "fdw/arrow_fdw.h"
#include "pg_warp.h"

static Oid	field_type(const ArrowField *field, const char *schema,
					   const char *typname, int32 *typmod);

/* Parse a type name from file metadata; InvalidOid if it does not parse. */
static Oid
parse_type_metadata(const char *s, int32 *typmod)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	Oid			typid = InvalidOid;
	const char *p;

	/* a type name, not arbitrary SQL */
	for (p = s; *p; p++)
		if (!(isalnum((unsigned char) *p) || strchr(" _(),.\"[]", *p)))
			return InvalidOid;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		parseTypeString(s, &typid, typmod, true);
		ReleaseCurrentSubTransaction();
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(cxt);
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		typid = InvalidOid;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(cxt);
	CurrentResourceOwner = owner;
	return typid;
}

/* Create (or reuse) the composite type `typname` for a Struct field. */
static Oid
composite_for(const ArrowField *field, const char *schema, const char *typname)
{
	Oid			nsp = LookupCreationNamespace(schema);
	Oid			typid = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
										CStringGetDatum(typname), ObjectIdGetDatum(nsp));
	List	   *cols = NIL;
	int			i;

	if (OidIsValid(typid))
	{
		const char *why = arrow_datum_check_type(field, typid, -1);

		if (why)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_OBJECT),
					 errmsg("type \"%s.%s\" already exists and cannot read Arrow field \"%s\"",
							schema, typname, field->name),
					 errdetail("%s", why)));
		return typid;
	}
	for (i = 0; i < field->n_children; i++)
	{
		const ArrowField *c = &field->children[i];
		int32		typmod;
		Oid			ctype;

		ctype = field_type(c, schema, psprintf("%s_%s", typname, c->name), &typmod);
		cols = lappend(cols, makeColumnDef(c->name, ctype, typmod, get_typcollation(ctype)));
	}
	DefineCompositeType(makeRangeVar(pstrdup(schema), pstrdup(typname), -1), cols);
	CommandCounterIncrement();
	return GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
						   CStringGetDatum(typname), ObjectIdGetDatum(nsp));
}

/* PostgreSQL type for a field; composite types are created as needed. */
static Oid
field_type(const ArrowField *field, const char *schema, const char *typname, int32 *typmod)
{
	const char *meta = arrow_field_metadata(field, "pg_type");
	char		buf[512];
	const char *why_not;
	Oid			typid;

	*typmod = -1;
	if (meta)
	{
		typid = parse_type_metadata(meta, typmod);
		if (OidIsValid(typid) && arrow_datum_check_type(field, typid, *typmod) == NULL)
			return typid;
		*typmod = -1;
	}
	if (arrow_geo_pg_type_name(field, buf, sizeof(buf)))
	{
		parseTypeString(buf, &typid, typmod, false);
		return typid;
	}
	switch (field->type.id)
	{
		case ARROW_TYPE_STRUCT:
			return composite_for(field, schema, typname);
		case ARROW_TYPE_MAP:
			{
				Oid			entry = composite_for(&field->children[0], schema,
												  psprintf("%s_entry", typname));
				Oid			arr = get_array_type(entry);

				if (!OidIsValid(arr))
					elog(ERROR, "composite type %u has no array type", entry);
				return arr;
			}
		case ARROW_TYPE_LIST:
		case ARROW_TYPE_LARGE_LIST:
		case ARROW_TYPE_FIXED_SIZE_LIST:
			if (field->n_children == 1 &&
				(field->children[0].type.id == ARROW_TYPE_STRUCT ||
				 field->children[0].type.id == ARROW_TYPE_MAP))
			{
				int32		etm;
				Oid			elem = field_type(&field->children[0], schema, typname, &etm);
				Oid			arr = get_array_type(elem);

				if (OidIsValid(arr))
					return arr;
			}
			break;
		default:
			break;
	}
	if (!pgwarp_arrow_pg_type_name(field, buf, sizeof(buf), &why_not))
	{
		char		tbuf[256];

		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
				 errmsg("Arrow column \"%s\" has type %s, which PostgreSQL cannot represent",
						field->name, arrow_type_string(field, tbuf, sizeof(tbuf))),
				 errdetail("%s", why_not)));
	}
	parseTypeString(buf, &typid, typmod, false);
	return typid;
}

List *
arrowImportForeignSchema(ImportForeignSchemaStmt *stmt, Oid serverOid)
{
	ForeignServer *server = GetForeignServer(serverOid);
	ArrowFdwOptions opts;
	ArrowFile	file;
	int			fd;
	StringInfoData sql;
	ListCell   *lc;
	int			i;
	bool		first;

	/* same validation as CREATE FOREIGN TABLE, files checked */
	DirectFunctionCall2(arrow_fdw_validator,
						PointerGetDatum(transformGenericOptions(ForeignTableRelationId,
																(Datum) 0, stmt->options,
																InvalidOid)),
						ObjectIdGetDatum(ForeignTableRelationId));
	arrow_fdw_parse_options(stmt->options, &opts);
	if (opts.files == NIL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_SCHEMA_NOT_FOUND),
				 errmsg("no Arrow files to import from")));
	pgwarp_arrow_open_file(&file, (char *) linitial(opts.files), &fd);

	initStringInfo(&sql);
	appendStringInfo(&sql, "CREATE FOREIGN TABLE %s (", quote_identifier(stmt->remote_schema));
	for (i = 0; i < file.schema.n_fields; i++)
	{
		const ArrowField *f = &file.schema.fields[i];
		int32		typmod;
		Oid			typid;

		typid = field_type(f, stmt->local_schema,
						   psprintf("%s_%s", stmt->remote_schema, f->name), &typmod);
		appendStringInfo(&sql, "%s\n  %s %s", i ? "," : "", quote_identifier(f->name),
						 format_type_extended(typid, typmod,
											  FORMAT_TYPE_TYPEMOD_GIVEN | FORMAT_TYPE_FORCE_QUALIFY));
	}
	appendStringInfo(&sql, "\n) SERVER %s OPTIONS (", quote_identifier(server->servername));
	first = true;
	foreach(lc, stmt->options)
	{
		DefElem    *def = lfirst_node(DefElem, lc);

		appendStringInfo(&sql, "%s%s %s", first ? "" : ", ", quote_identifier(def->defname),
						 quote_literal_cstr(defGetString(def)));
		first = false;
	}
	appendStringInfoString(&sql, ")");
	pgwarp_arrow_close_file(&file, fd);
	return list_make1(sql.data);
}
