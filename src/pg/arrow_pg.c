/*
 * arrow_pg.c — running the pure-C Arrow library inside a backend.
 *
 * The library allocates through an ArrowAllocator: here palloc in the
 * memory context current when the allocator is used, so everything it
 * allocates goes away with that context even if an ERROR interrupts it.
 * Library errors become ereports with a SQLSTATE matching their class.
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "catalog/pg_authid.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/acl.h"
#include "utils/memutils.h"

#include "pg_warp.h"

static void *
pg_arrow_alloc(void *ctx, size_t size)
{
	return palloc_extended(size, MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
}

static void
pg_arrow_free(void *ctx, void *ptr)
{
	pfree(ptr);
}

static const ArrowAllocator pg_allocator = {
	pg_arrow_alloc, pg_arrow_free, NULL, MaxAllocHugeSize
};

const ArrowAllocator *
pgwarp_arrow_allocator(void)
{
	return &pg_allocator;
}

void
pgwarp_report_arrow_error(int elevel, const ArrowError *err)
{
	int			code;

	switch (err->code)
	{
		case ARROW_ERR_IO:
			errno = err->errno_saved;
			code = errcode_for_file_access();
			break;
		case ARROW_ERR_UNSUPPORTED:
			code = ERRCODE_FEATURE_NOT_SUPPORTED;
			break;
		case ARROW_ERR_NOMEM:
			code = ERRCODE_OUT_OF_MEMORY;
			break;
		case ARROW_ERR_INVALID:
			code = ERRCODE_INVALID_PARAMETER_VALUE;
			break;
		case ARROW_ERR_CORRUPT:
		case ARROW_ERR_INCOMPLETE:
		default:
			code = ERRCODE_DATA_CORRUPTED;
			break;
	}
	ereport(elevel, (errcode(code), errmsg("%s", err->msg)));
	pg_unreachable();
}

/*
 * Reading server files is reserved to superusers and members of
 * pg_read_server_files, as for COPY FROM a file and file_fdw.
 */
void
pgwarp_check_file_read_privilege(void)
{
	if (!has_privs_of_role(GetUserId(), ROLE_PG_READ_SERVER_FILES))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to read Arrow files"),
				 errhint("Only superusers and members of pg_read_server_files may read files on the server.")));
}

/*
 * Open an Arrow file through pread (never mmap: a file truncated under a
 * mapping raises SIGBUS, which would restart the whole cluster).  The fd is
 * a transient file of the current resource owner, so it is closed on error.
 */
void
pgwarp_arrow_open_file(ArrowFile *file, const char *path, int *fd_out)
{
	pgwarp_arrow_open_file_ext(file, path, -1, false, fd_out);
}

/*
 * The same, reading only [0, length) when length >= 0 (a committed length),
 * and with recover_tail ignoring an interrupted append's tail.
 */
void
pgwarp_arrow_open_file_ext(ArrowFile *file, const char *path, int64 length,
						   bool recover_tail, int *fd_out)
{
	ArrowSource src;
	ArrowOpenOptions opts = {0};
	ArrowError	err;
	int			fd;

	fd = OpenTransientFile(path, O_RDONLY | PG_BINARY);
	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open Arrow file \"%s\": %m", path)));
	opts.recover_tail = recover_tail;
	if (arrow_source_fd(&src, fd, path, length, &err) != 0 ||
		(opts.allocator = pgwarp_arrow_allocator(),
		 arrow_open(file, &src, &opts, &err) != 0))
	{
		CloseTransientFile(fd);
		pgwarp_report_arrow_error(ERROR, &err);
	}
	*fd_out = fd;
}

void
pgwarp_arrow_close_file(ArrowFile *file, int fd)
{
	arrow_close(file);
	CloseTransientFile(fd);
}
