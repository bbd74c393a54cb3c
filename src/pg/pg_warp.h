/*
 * pg_warp.h — declarations shared by the PostgreSQL-facing code (src/pg).
 */
#ifndef PG_WARP_H
#define PG_WARP_H

#include "postgres.h"

#include "arrow.h"

/* GUCs (guc.c) */
typedef enum PgWarpMode
{
	PGWARP_MODE_AUTO,
	PGWARP_MODE_GPU,
	PGWARP_MODE_CPU
} PgWarpMode;

extern bool pgwarp_enabled;
extern bool pgwarp_enable_scan_filter;
extern bool pgwarp_enable_dim_scan;
extern bool pgwarp_cache_heap_dimensions;
extern bool pgwarp_cpu_mmap;
extern bool pgwarp_enable_join_ranges;
extern int	pgwarp_mode;

extern void pgwarp_define_gucs(void);

/* precision and scale of a numeric typmod (scale may be negative since
 * PostgreSQL 15); false for an unconstrained numeric (typmod -1) */
static inline bool
pgwarp_numeric_typmod(int32 typmod, int *precision, int *scale)
{
	if (typmod < (int32) VARHDRSZ)
		return false;
	*precision = ((typmod - VARHDRSZ) >> 16) & 0xffff;
	*scale = (((typmod - VARHDRSZ) & 0x7ff) ^ 1024) - 1024;
	return true;
}

/* arrow_datum.c: v * 10^-scale as a numeric of display scale `scale` */
extern Datum pgwarp_int128_to_numeric(__int128 v, int scale);

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

/* arrow_committed.c: pg_warp's schema, or InvalidOid if missing_ok and
 * the extension is not created in this database */
extern Oid	pgwarp_extension_schema(bool missing_ok);

/* arrow_types.c: Arrow → PostgreSQL type mapping (DESIGN.md, read side) */
extern bool pgwarp_arrow_pg_type_name(const ArrowField *field, char *buf, size_t len,
									  const char **why_not);

#endif							/* PG_WARP_H */
