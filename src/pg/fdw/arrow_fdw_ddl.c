/*
 * arrow_fdw_ddl.c — an event trigger on arrow_fdw foreign tables.
 *
 * At CREATE / ALTER FOREIGN TABLE and IMPORT FOREIGN SCHEMA (ddl_command_end):
 *  - every declared column must exist in the table's first file, with a type
 *    that can read the file's (the FDW validator cannot check this: it does
 *    not see the columns);
 *  - a writable table's file gets its committed-length row (arrow_committed.c)
 *    in the creating transaction: its current complete length, or 0 when the
 *    file does not exist yet.
 * At sql_drop: rows of files no table names any more are removed, so that a
 * table created later over the same path starts from the file as it is then.
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "access/table.h"
#include "catalog/pg_foreign_table.h"
#include "commands/event_trigger.h"
#include "executor/spi.h"
#include "foreign/foreign.h"
#include "storage/fd.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "fdw/arrow_fdw.h"
#include "pg_warp.h"

PG_FUNCTION_INFO_V1(pg_warp_arrow_ddl);

static bool
is_arrow_table(Oid relid)
{
	ForeignTable *ft;
	ForeignServer *srv;
	ForeignDataWrapper *fdw;

	if (get_rel_relkind(relid) != RELKIND_FOREIGN_TABLE)
		return false;
	ft = GetForeignTable(relid);
	srv = GetForeignServer(ft->serverid);
	fdw = GetForeignDataWrapper(srv->fdwid);
	return strcmp(fdw->fdwname, "arrow_fdw") == 0;
}

/* Declared columns against the first existing file. */
static void
check_columns(Relation rel, const ArrowFdwOptions *opts)
{
	TupleDesc	td = RelationGetDescr(rel);
	ListCell   *lc;

	foreach(lc, opts->files)
	{
		const char *path = lfirst(lc);
		ArrowFile	f;
		int			fd;
		int			a;

		if (opts->writable && access(path, F_OK) != 0)
			continue;
		pgwarp_arrow_open_file(&f, path, &fd);
		for (a = 0; a < td->natts; a++)
		{
			Form_pg_attribute att = TupleDescAttr(td, a);
			int			i;
			const char *why;

			if (att->attisdropped)
				continue;
			for (i = 0; i < f.schema.n_fields; i++)
				if (strcmp(f.schema.fields[i].name, NameStr(att->attname)) == 0)
					break;
			if (i == f.schema.n_fields)
				ereport(ERROR,
						(errcode(ERRCODE_UNDEFINED_COLUMN),
						 errmsg("column \"%s\" of foreign table \"%s\" does not exist in Arrow file \"%s\"",
								NameStr(att->attname), RelationGetRelationName(rel), path)));
			why = arrow_datum_check_type(&f.schema.fields[i], att->atttypid, att->atttypmod);
			if (why)
			{
				char		tbuf[256];

				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
						 errmsg("column \"%s\" of type %s cannot read Arrow field \"%s\" of type %s in \"%s\"",
								NameStr(att->attname),
								format_type_with_typemod(att->atttypid, att->atttypmod),
								f.schema.fields[i].name,
								arrow_type_string(&f.schema.fields[i], tbuf, sizeof(tbuf)),
								path),
						 errdetail("%s", why)));
			}
		}
		pgwarp_arrow_close_file(&f, fd);
		break;					/* the validator checked that all files agree */
	}
}

/* Complete length of an existing file (after an interrupted append's tail,
 * if any, is ignored), or 0 when it does not exist. */
static int64
current_length(const char *path)
{
	int			fd = OpenTransientFile(path, O_RDONLY | PG_BINARY);
	ArrowSource src;
	ArrowError	err;
	int64_t		len;

	if (fd < 0)
	{
		if (errno == ENOENT)
			return 0;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open Arrow file \"%s\": %m", path)));
	}
	arrow_fdw_refuse_parquet(path);
	if (arrow_source_fd(&src, fd, path, -1, &err) != 0 ||
		arrow_find_last_footer(&src, &len, &err) != 0)
	{
		CloseTransientFile(fd);
		pgwarp_report_arrow_error(ERROR, &err);
	}
	CloseTransientFile(fd);
	return len;
}

static void
table_created_or_altered(Oid relid)
{
	Relation	rel;
	ArrowFdwOptions opts;

	if (!is_arrow_table(relid))
		return;
	rel = table_open(relid, AccessShareLock);
	arrow_fdw_get_options(relid, &opts);
	check_columns(rel, &opts);
	if (opts.writable)
		arrow_committed_register((char *) linitial(opts.files),
								 current_length((char *) linitial(opts.files)));
	table_close(rel, AccessShareLock);
}

Datum
pg_warp_arrow_ddl(PG_FUNCTION_ARGS)
{
	EventTriggerData *trig;
	List	   *relids = NIL;
	ListCell   *lc;
	uint64		i;
	MemoryContext cxt = CurrentMemoryContext;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		elog(ERROR, "pg_warp_arrow_ddl: not fired by an event trigger");
	trig = (EventTriggerData *) fcinfo->context;

	if (strcmp(trig->event, "sql_drop") == 0)
	{
		arrow_committed_forget_unused();
		PG_RETURN_VOID();
	}

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute("SELECT objid FROM pg_catalog.pg_event_trigger_ddl_commands() "
					"WHERE object_type = 'foreign table'", true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not list DDL commands");
	for (i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);

		if (!isnull)
		{
			/* the list must outlive SPI_finish */
			MemoryContext old = MemoryContextSwitchTo(cxt);

			relids = lappend_oid(relids, DatumGetObjectId(d));
			MemoryContextSwitchTo(old);
		}
	}
	SPI_finish();

	foreach(lc, relids)
		table_created_or_altered(lfirst_oid(lc));
	PG_RETURN_VOID();
}
