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
#include <sys/stat.h>
#include <unistd.h>

#include "catalog/pg_authid.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/acl.h"
#include "utils/memutils.h"

#include "pg_warp.h"
#include "fdw/arrow_pg.h"

/*
 * An allocator bound to a memory context.  Arenas and files outlive the
 * calls that allocate for them (a file's dictionary cache is filled while a
 * batch context is current), so the context is fixed when the allocator is
 * made, not taken from CurrentMemoryContext at each allocation.
 */
static void *
pg_arrow_alloc(void *ctx, size_t size)
{
	return MemoryContextAllocExtended((MemoryContext) ctx, size,
									  MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
}

static void
pg_arrow_free(void *ctx, void *ptr)
{
	pfree(ptr);
}

/* An allocator for arenas and files that live in CurrentMemoryContext. */
const ArrowAllocator *
pgwarp_arrow_allocator(void)
{
	ArrowAllocator *a = palloc(sizeof(ArrowAllocator));

	a->alloc = pg_arrow_alloc;
	a->free = pg_arrow_free;
	a->ctx = CurrentMemoryContext;
	a->max_alloc = MaxAllocHugeSize;
	return a;
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
/* A source whose head and footer bytes come from the footer cache. */
typedef struct CachedSource
{
	int			(*inner_read) (void *ctx, void *dst, size_t len, uint64_t off);
	void	   *inner_ctx;
	PgWarpFileSummary sum;
} CachedSource;

static int
cached_read(void *ctx, void *dst, size_t len, uint64_t off)
{
	CachedSource *cs = ctx;

	if (off + len <= sizeof(cs->sum.head))
	{
		memcpy(dst, cs->sum.head + off, len);
		return 0;
	}
	if (off >= (uint64_t) cs->sum.tail_off &&
		off + len <= (uint64_t) cs->sum.tail_off + cs->sum.tail_len)
	{
		memcpy(dst, cs->sum.tail + (off - cs->sum.tail_off), len);
		return 0;
	}
	return cs->inner_read(cs->inner_ctx, dst, len, off);
}

void
pgwarp_arrow_open_file_ext(ArrowFile *file, const char *path, int64 length,
						   bool recover_tail, int *fd_out)
{
	ArrowSource src;
	ArrowOpenOptions opts = {0};
	ArrowError	err;
	int			fd;
	struct stat st;
	PgWarpFileSummary sum;

	fd = OpenTransientFile(path, O_RDONLY | PG_BINARY);
	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open Arrow file \"%s\": %m", path)));
	opts.recover_tail = recover_tail;
	opts.allocator = pgwarp_arrow_allocator();
	if (arrow_source_fd(&src, fd, path, length, &err) != 0)
	{
		CloseTransientFile(fd);
		pgwarp_report_arrow_error(ERROR, &err);
	}
	if (!recover_tail && fstat(fd, &st) == 0 &&
		pgwarp_footer_cache_get(&st, length, &sum) && sum.tail_len > 0)
	{
		CachedSource *cs = palloc(sizeof(CachedSource));

		cs->inner_read = src.read;
		cs->inner_ctx = src.ctx;
		cs->sum = sum;
		src.read = cached_read;
		src.ctx = cs;
	}
	if (arrow_open(file, &src, &opts, &err) != 0)
	{
		CloseTransientFile(fd);
		pgwarp_report_arrow_error(ERROR, &err);
	}
	*fd_out = fd;
}

/*
 * Rows and batches of a file for the planner: from the footer cache, or by
 * reading the footer and every batch header once and caching the result.
 * *bytes gets the readable length.
 */
void
pgwarp_arrow_file_summary(const char *path, int64 length, bool recover_tail,
						  PgWarpFileSummary *sum, int64 *bytes)
{
	struct stat st;
	ArrowFile	f;
	int			fd;
	ArrowArena	arena;
	int			b;

	if (stat(path, &st) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not stat Arrow file \"%s\": %m", path)));
	*bytes = length >= 0 ? length : st.st_size;
	if (!recover_tail && pgwarp_footer_cache_get(&st, length, sum))
		return;

	pgwarp_arrow_open_file_ext(&f, path, length, recover_tail, &fd);
	memset(sum, 0, sizeof(*sum));
	sum->n_batches = f.n_batches;
	arrow_arena_init(&arena, pgwarp_arrow_allocator());
	for (b = 0; b < f.n_batches; b++)
	{
		ArrowBatchMeta meta;
		ArrowError	err;

		CHECK_FOR_INTERRUPTS();
		if (arrow_read_batch_meta(&f, b, &arena, &meta, &err) != 0)
			pgwarp_report_arrow_error(ERROR, &err);
		sum->total_rows += meta.length;
		arrow_arena_free_all(&arena);
	}
	/* keep the footer too, when small; the identity must be the one read */
	if ((f.format == ARROW_FORMAT_FILE || f.format == ARROW_FORMAT_PARQUET) && !recover_tail &&
		(int64) f.src.size - f.data_end <= pgwarp_footer_cache_max())
	{
		struct stat st2;

		sum->tail_off = f.data_end;
		sum->tail_len = (int32) ((int64) f.src.size - f.data_end);
		sum->tail = palloc(sum->tail_len);
		if (f.src.read(f.src.ctx, sum->tail, sum->tail_len, sum->tail_off) != 0 ||
			f.src.read(f.src.ctx, sum->head, sizeof(sum->head), 0) != 0 ||
			fstat(fd, &st2) != 0 || st2.st_ino != st.st_ino || st2.st_size != st.st_size ||
			st2.st_mtim.tv_nsec != st.st_mtim.tv_nsec || st2.st_mtim.tv_sec != st.st_mtim.tv_sec)
			sum->tail_len = 0;
	}
	if (!recover_tail)
		pgwarp_footer_cache_put(&st, length, sum);
	pgwarp_arrow_close_file(&f, fd);
}

void
pgwarp_arrow_close_file(ArrowFile *file, int fd)
{
	arrow_close(file);
	CloseTransientFile(fd);
}
