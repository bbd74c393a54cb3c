/*
 * pg_warp.h — what every part of the PostgreSQL-facing code (src/pg) shares:
 * the GUCs, numeric typmod and int128 helpers, pg_warp's schema.  The Arrow
 * library's use inside a backend (files, errors, the footer cache, type
 * names) is declared by fdw/arrow_pg.h.
 */
#ifndef PG_WARP_H
#define PG_WARP_H

#include "postgres.h"

/* GUCs (guc.c) */
typedef enum PgWarpMode
{
	PGWARP_MODE_AUTO,
	PGWARP_MODE_GPU,
	PGWARP_MODE_CPU
} PgWarpMode;

extern bool pgwarp_enabled;
extern bool pgwarp_enable_decorrelation;
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

/* arrow_datum.c: a numeric as its unscaled integer at scale, read from its
 * stored form; false for NaN, infinities, lost digits, beyond 128 bits */
extern bool pgwarp_numeric_unscaled(Datum d, int scale, __int128 *out);

/* arrow_committed.c: pg_warp's schema, or InvalidOid if missing_ok and
 * the extension is not created in this database */
extern Oid	pgwarp_extension_schema(bool missing_ok);

#endif							/* PG_WARP_H */
