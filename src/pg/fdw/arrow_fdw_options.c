/*
 * arrow_fdw_options.c — arrow_fdw's options: validation and parsing.
 *
 * Table options (names fixed by DESIGN.md):
 *   file 'ABS_PATH' | files 'ABS1,ABS2,...' | dir 'ABS_DIR' [suffix '.arrow']
 *   parallel_workers 'N'
 *   writable 'true'|'false'
 * Naming server files is reserved to superusers and members of
 * pg_read_server_files (pg_write_server_files too for writable tables), as
 * for COPY and file_fdw.
 */
#include "postgres.h"

#include <dirent.h>
#include <sys/stat.h>

#include "access/reloptions.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_foreign_server.h"
#include "catalog/pg_foreign_table.h"
#include "catalog/pg_user_mapping.h"
#include "commands/defrem.h"
#include "foreign/foreign.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/varlena.h"

#include "fdw/arrow_fdw.h"
#include "pg_warp.h"

PG_FUNCTION_INFO_V1(arrow_fdw_validator);

typedef struct ArrowFdwOption
{
	const char *name;
	Oid			context;
} ArrowFdwOption;

static const ArrowFdwOption valid_options[] = {
	{"file", ForeignTableRelationId},
	{"files", ForeignTableRelationId},
	{"dir", ForeignTableRelationId},
	{"suffix", ForeignTableRelationId},
	{"parallel_workers", ForeignTableRelationId},
	{"writable", ForeignTableRelationId},
	{NULL, InvalidOid}
};

static void
check_absolute(const char *opt, const char *path)
{
	if (!is_absolute_path(path))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("arrow_fdw option \"%s\" must be an absolute path: \"%s\"",
						opt, path)));
}

/* Split a comma-separated list of paths; blanks around commas are trimmed. */
static List *
split_paths(const char *value)
{
	List	   *result = NIL;
	char	   *copy = pstrdup(value);
	char	   *tok;
	char	   *save = NULL;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
	{
		while (*tok == ' ' || *tok == '\t')
			tok++;
		{
			char	   *end = tok + strlen(tok);

			while (end > tok && (end[-1] == ' ' || end[-1] == '\t'))
				*--end = '\0';
		}
		if (*tok)
			result = lappend(result, pstrdup(tok));
	}
	return result;
}

static int
path_cmp(const ListCell *a, const ListCell *b)
{
	return strcmp((char *) lfirst(a), (char *) lfirst(b));
}

/* Regular files in dir whose names end in suffix, sorted by name. */
static List *
list_dir(const char *dir, const char *suffix, bool missing_ok)
{
	List	   *result = NIL;
	DIR		   *d;
	struct dirent *de;
	size_t		slen = strlen(suffix);

	d = AllocateDir(dir);
	if (d == NULL && missing_ok)
		return NIL;
	while ((de = ReadDir(d, dir)) != NULL)
	{
		size_t		nlen = strlen(de->d_name);
		char	   *path;
		struct stat st;

		if (nlen < slen || strcmp(de->d_name + nlen - slen, suffix) != 0)
			continue;
		path = psprintf("%s/%s", dir, de->d_name);
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
			result = lappend(result, path);
	}
	FreeDir(d);
	list_sort(result, path_cmp);
	return result;
}

static bool
parse_bool_option(DefElem *def)
{
	bool		b;

	if (!parse_bool(defGetString(def), &b))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("arrow_fdw option \"%s\" requires a Boolean value", def->defname)));
	return b;
}

static int
parse_workers_option(DefElem *def)
{
	char	   *s = defGetString(def);
	char	   *end;
	long		v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || end == s || v < 0 || v > 1024)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("arrow_fdw option \"parallel_workers\" must be an integer between 0 and 1024: \"%s\"", s)));
	return (int) v;
}

/*
 * Parse options into *opts.  With check_files, every named file must exist
 * and all must have the same schema (field names and types).
 */
static void
parse_options(List *options, ArrowFdwOptions *opts, bool check_files)
{
	ListCell   *lc;
	char	   *file = NULL;
	char	   *files = NULL;
	char	   *suffix = NULL;
	int			nsources = 0;

	memset(opts, 0, sizeof(*opts));
	opts->parallel_workers = -1;

	foreach(lc, options)
	{
		DefElem    *def = lfirst_node(DefElem, lc);

		if (strcmp(def->defname, "file") == 0)
		{
			file = defGetString(def);
			check_absolute("file", file);
			nsources++;
		}
		else if (strcmp(def->defname, "files") == 0)
		{
			files = defGetString(def);
			nsources++;
		}
		else if (strcmp(def->defname, "dir") == 0)
		{
			opts->dir = defGetString(def);
			check_absolute("dir", opts->dir);
			nsources++;
		}
		else if (strcmp(def->defname, "suffix") == 0)
			suffix = defGetString(def);
		else if (strcmp(def->defname, "parallel_workers") == 0)
			opts->parallel_workers = parse_workers_option(def);
		else if (strcmp(def->defname, "writable") == 0)
			opts->writable = parse_bool_option(def);
	}
	if (nsources > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("arrow_fdw options \"file\", \"files\" and \"dir\" are mutually exclusive")));
	if (suffix && !opts->dir)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("arrow_fdw option \"suffix\" requires \"dir\"")));
	if (opts->writable && (files || opts->dir))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a writable arrow_fdw table must name exactly one \"file\"")));

	if (file)
		opts->files = list_make1(pstrdup(file));
	else if (files)
	{
		opts->files = split_paths(files);
		foreach(lc, opts->files)
			check_absolute("files", (char *) lfirst(lc));
		if (opts->files == NIL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("arrow_fdw option \"files\" names no file")));
	}
	else if (opts->dir)
		opts->files = list_dir(opts->dir, suffix ? suffix : ".arrow", false);

	if (check_files)
	{
		/* a writable table's file is created by the first INSERT */
		if (!(opts->writable && file))
			arrow_fdw_check_files(opts->files);
	}
}

/*
 * Every file opens as Arrow and all have the schema of the first.  Errors
 * name both files and the first differing column.
 */
void
arrow_fdw_check_files(List *files)
{
	ListCell   *lc;
	ArrowFile	first;
	int			first_fd = -1;
	const char *first_path = NULL;

	foreach(lc, files)
	{
		const char *path = (const char *) lfirst(lc);
		ArrowFile	f;
		int			fd;

		pgwarp_arrow_open_file(&f, path, &fd);
		if (first_fd < 0)
		{
			first = f;
			first_fd = fd;
			first_path = path;
			continue;
		}
		{
			char		whybuf[512];
			const char *why = arrow_schema_diff(&first.schema, &f.schema, whybuf, sizeof(whybuf));

			if (why)
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
						 errmsg("Arrow files \"%s\" and \"%s\" have different schemas", first_path, path),
						 errdetail("%s", why)));
		}
		pgwarp_arrow_close_file(&f, fd);
	}
	if (first_fd >= 0)
		pgwarp_arrow_close_file(&first, first_fd);
}

Datum
arrow_fdw_validator(PG_FUNCTION_ARGS)
{
	List	   *options = untransformRelOptions(PG_GETARG_DATUM(0));
	Oid			catalog = PG_GETARG_OID(1);
	ListCell   *lc;
	bool		names_files = false;
	bool		writable = false;
	ArrowFdwOptions opts;

	foreach(lc, options)
	{
		DefElem    *def = lfirst_node(DefElem, lc);
		const ArrowFdwOption *o;

		for (o = valid_options; o->name; o++)
			if (o->context == catalog && strcmp(o->name, def->defname) == 0)
				break;
		if (o->name == NULL)
		{
			StringInfoData buf;

			initStringInfo(&buf);
			for (o = valid_options; o->name; o++)
				if (o->context == catalog)
					appendStringInfo(&buf, "%s%s", buf.len ? ", " : "", o->name);
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
					 errmsg("invalid arrow_fdw option \"%s\"", def->defname),
					 buf.len ? errhint("Valid options in this context are: %s", buf.data)
					 : errhint("There are no valid options in this context.")));
		}
		if (strcmp(def->defname, "file") == 0 || strcmp(def->defname, "files") == 0 ||
			strcmp(def->defname, "dir") == 0)
			names_files = true;
		if (strcmp(def->defname, "writable") == 0)
			writable = parse_bool_option(def);
	}

	if (catalog != ForeignTableRelationId)
		PG_RETURN_VOID();

	if (names_files && !has_privs_of_role(GetUserId(), ROLE_PG_READ_SERVER_FILES))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("only superuser or a member of the pg_read_server_files role may specify the file, files or dir option of an arrow_fdw foreign table")));
	if (writable && !has_privs_of_role(GetUserId(), ROLE_PG_WRITE_SERVER_FILES))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("only superuser or a member of the pg_write_server_files role may create a writable arrow_fdw foreign table")));
	if (!names_files)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
				 errmsg("an arrow_fdw foreign table needs one of the options \"file\", \"files\" or \"dir\"")));

	parse_options(options, &opts, true);
	PG_RETURN_VOID();
}

void
arrow_fdw_parse_options(List *options, ArrowFdwOptions *opts)
{
	parse_options(options, opts, false);
}

void
arrow_fdw_get_options(Oid foreigntableid, ArrowFdwOptions *opts)
{
	ForeignTable *table = GetForeignTable(foreigntableid);

	parse_options(table->options, opts, false);
}
