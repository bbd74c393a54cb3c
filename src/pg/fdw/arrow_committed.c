/*
 * arrow_committed.c — the committed length of each file of a writable
 * arrow_fdw table.
 *
 * An Arrow file's footer cannot be made atomic with a transaction's commit
 * record, so a writable file's visible content is defined by a row of
 * pg_warp_arrow_committed (path, length), updated in the same transaction
 * as the append.  Readers open the file with that length as its end (the
 * append design in src/arrow keeps every committed prefix a complete file),
 * so what an aborted or crashed append wrote is invisible, and the next
 * writer cuts it off.  Writers lock the row (FOR UPDATE), which serializes
 * concurrent appends to one file.
 *
 * The table belongs to the extension; the functions here read and write it
 * as the bootstrap superuser, so that members of pg_write_server_files can
 * insert into writable tables without privileges on it.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "catalog/pg_authid.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "fdw/arrow_fdw.h"
#include "pg_warp.h"

/*
 * pg_warp's schema (get_extension_schema is not exported before PG 16);
 * InvalidOid when the extension is not created and missing_ok.
 */
Oid
pgwarp_extension_schema(bool missing_ok)
{
	Oid			ext = get_extension_oid("pg_warp", missing_ok);
	Relation	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	Oid			nsp = InvalidOid;

	if (!OidIsValid(ext))
	{
		table_close(rel, AccessShareLock);
		return InvalidOid;
	}
	ScanKeyInit(&key, Anum_pg_extension_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(ext));
	scan = systable_beginscan(rel, ExtensionOidIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
		nsp = ((Form_pg_extension) GETSTRUCT(tup))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return nsp;
}

static const char *
committed_table(void)
{
	return quote_qualified_identifier(get_namespace_name(pgwarp_extension_schema(false)),
									  "pg_warp_arrow_committed");
}

/* Run query with one text argument (and optionally a bigint) as superuser. */
static int64
committed_query(const char *fmt, const char *path, int64 len, bool *found)
{
	Oid			save_user;
	int			save_sec;
	Oid			types[2] = {TEXTOID, INT8OID};
	Datum		values[2];
	int64		result = -1;
	char	   *sql;
	int			rc;

	GetUserIdAndSecContext(&save_user, &save_sec);
	SetUserIdAndSecContext(BOOTSTRAP_SUPERUSERID,
						   save_sec | SECURITY_LOCAL_USERID_CHANGE | SECURITY_RESTRICTED_OPERATION);
	PG_TRY();
	{
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		sql = psprintf(fmt, committed_table());
		values[0] = CStringGetTextDatum(path);
		values[1] = Int64GetDatum(len);
		rc = SPI_execute_with_args(sql, strstr(fmt, "$2") ? 2 : 1, types, values, NULL,
								   false, 1);
		if (rc < 0)
			elog(ERROR, "SPI_execute failed: %s", SPI_result_code_string(rc));
		*found = SPI_processed > 0 && SPI_tuptable != NULL;
		if (*found)
		{
			bool		isnull;
			Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

			result = isnull ? -1 : DatumGetInt64(d);
		}
		SPI_finish();
	}
	PG_FINALLY();
	{
		SetUserIdAndSecContext(save_user, save_sec);
	}
	PG_END_TRY();
	return result;
}

/* Committed length of path as the current snapshot sees it; -1 if no row. */
int64
arrow_committed_length(const char *path)
{
	bool		found;
	int64		len = committed_query("SELECT length FROM %s WHERE path = $1", path, 0, &found);

	return found ? len : -1;
}

/*
 * Lock the row of path for this transaction and return its committed length.
 * The row is made when the table is created (arrow_fdw_ddl.c): a writer that
 * made it would lose it, and with it the length, if its transaction aborted.
 */
int64
arrow_committed_lock(const char *path)
{
	bool		found;
	int64		len;

	len = committed_query("SELECT length FROM %s WHERE path = $1 FOR UPDATE", path, 0, &found);
	if (!found)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("writable Arrow file \"%s\" has no committed length", path),
				 errhint("Recreate the foreign table, or ALTER it, so that pg_warp records the file.")));
	return len;
}

/* Record path's current length unless a row exists already. */
void
arrow_committed_register(const char *path, int64 length)
{
	bool		found;

	committed_query("INSERT INTO %s (path, length) VALUES ($1, $2) ON CONFLICT (path) DO NOTHING",
					path, length, &found);
	CommandCounterIncrement();
}

/* Forget rows of files no writable arrow_fdw table names any more. */
void
arrow_committed_forget_unused(void)
{
	bool		found;

	committed_query("DELETE FROM %s c WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_foreign_table ft "
					"WHERE ('file=' || c.path) = ANY (ft.ftoptions)) AND $1 IS NOT NULL",
					"", 0, &found);
}

void
arrow_committed_set(const char *path, int64 length)
{
	bool		found;

	committed_query("UPDATE %s SET length = $2 WHERE path = $1", path, length, &found);
	CommandCounterIncrement();
}
