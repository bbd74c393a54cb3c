/*
 * arrow_pg.h — the pure-C Arrow library inside a backend: opening files with
 * PostgreSQL's allocator and errors, the shared-memory footer cache, the
 * planner's statistics from the footers, and the Arrow -> PostgreSQL type
 * names (arrow_pg.c, footer_cache.c, arrow_fdw_stats.c, arrow_types.c).
 */
#ifndef PGWARP_ARROW_PG_H
#define PGWARP_ARROW_PG_H

#include "postgres.h"

#include "arrow.h"

/* arrow_pg.c: the Arrow library inside a backend */
extern const ArrowAllocator *pgwarp_arrow_allocator(void);
extern void pgwarp_arrow_open_file(ArrowFile *file, const char *path, int *fd_out);
extern void pgwarp_arrow_open_file_ext(ArrowFile *file, const char *path, int64 length,
									   bool recover_tail, int *fd_out);
extern void pgwarp_arrow_close_file(ArrowFile *file, int fd);
extern void pgwarp_report_arrow_error(int elevel, const ArrowError *err) pg_attribute_noreturn();
extern void pgwarp_check_file_read_privilege(void);

/* footer_cache.c: file metadata cached in shared memory */
typedef struct PgWarpFileSummary
{
	int64		total_rows;
	int32		n_batches;
	int32		tail_len;		/* footer bytes kept, 0 if none */
	int64		tail_off;		/* file offset of tail */
	uint8		head[6];
	uint8	   *tail;
} PgWarpFileSummary;

struct stat;
extern void pgwarp_footer_cache_preload(void);
extern bool pgwarp_footer_cache_get(const struct stat *st, int64 limit, PgWarpFileSummary *sum);
extern void pgwarp_footer_cache_put(const struct stat *st, int64 limit, const PgWarpFileSummary *sum);
extern void pgwarp_footer_cache_stats(int64 *hits, int64 *misses);
extern int	pgwarp_footer_cache_max(void);

/* arrow_fdw_stats.c: the planner's statistics from the Arrow footers */
extern void pgwarp_arrow_stats_init(void);

/* arrow_pg.c: row and batch counts of a file, through the cache */
extern void pgwarp_arrow_file_summary(const char *path, int64 length, bool recover_tail,
									  PgWarpFileSummary *sum, int64 *bytes);

/* arrow_types.c: Arrow → PostgreSQL type mapping (DESIGN.md, read side) */
extern bool pgwarp_arrow_pg_type_name(const ArrowField *field, char *buf, size_t len,
									  const char **why_not);

#endif							/* PGWARP_ARROW_PG_H */
