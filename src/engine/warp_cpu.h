/*-------------------------------------------------------------------------
 *
 * warp_cpu.h
 *	  The CPU driver: runs a WarpProgram over record batches,
 *	  vector-at-a-time, and keeps the partial aggregate of every group.
 *
 * The caller builds the join tables (warp_join.h), creates the driver, feeds
 * it record batches (columns already loaded by the Arrow library, in the
 * program's column order), then reads the groups back.  The driver never
 * calls PostgreSQL: an error is returned as a WarpStatus and the caller
 * raises PostgreSQL's error; memory comes from the caller's allocator, so a
 * backend frees everything by resetting one memory context, even after an
 * error.
 *
 * Pure C; no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_CPU_H
#define WARP_CPU_H

#include "arrow.h"
#include "warp_agg_state.h"
#include "warp_join.h"
#include "warp_program.h"

/* rows per vector */
#define WARP_VEC 1024

typedef struct WarpCpu WarpCpu;

/* What a run did, for EXPLAIN ANALYZE. */
typedef struct WarpCpuCounters
{
	warp_int64	rows_in;		/* fact rows offered */
	warp_int64	rows_filtered;	/* passed the quals */
	warp_int64	rows_joined;	/* joined rows aggregated */
} WarpCpuCounters;

/*
 * Errors found while loading a column: a value the declared type cannot
 * hold, or a physical type the engine does not read.
 */
typedef enum WarpLoadStatus
{
	WARP_LOAD_OK = 0,
	WARP_LOAD_UNSUPPORTED,		/* Arrow type cannot be read as declared */
	WARP_LOAD_RANGE,			/* value out of range of the declared type */
	WARP_LOAD_PRECISION,		/* decimal of more digits than declared */
	WARP_LOAD_NO_MEMORY,		/* internal: reported as WARP_ERR_OUT_OF_MEMORY */
	WARP_LOAD_LIKE_ESCAPE		/* internal: reported as WARP_ERR_LIKE_ESCAPE */
} WarpLoadStatus;

/*
 * Create a driver for prog.  tables[i] is the join table of join i.  The
 * program must have passed warp_program_validate().  NULL if alloc fails.
 */
extern WarpCpu *warp_cpu_create(const WarpProgram *prog, WarpJoinTable *const *tables,
								const WarpAlloc *alloc);

/*
 * Run one record batch.  cols[c] is program column c, loaded from the
 * batch; keep (may be NULL) marks rows a cheaper prefilter already
 * rejected (false = rejected).  Returns WARP_OK or the error PostgreSQL
 * would raise; *load_status is set when a column could not be read (then
 * the return value is WARP_OK and *bad_col / *bad_row say where).
 */
extern WarpStatus warp_cpu_run_batch(WarpCpu *cpu, const ArrowArray *cols, warp_int64 nrows,
									 const bool *keep, WarpLoadStatus *load_status,
									 int *bad_col, warp_int64 *bad_row);

/*
 * Only the program's quals over a batch (no joins or aggregates): keep[i]
 * turns false for rows that fail them; *kept = rows still kept.  Not
 * WARP_OK: an error or a load problem (*load_status), keep to be ignored.
 */
extern WarpStatus warp_cpu_filter_batch(WarpCpu *cpu, const ArrowArray *cols,
										warp_int64 nrows, bool *keep, warp_int64 *kept,
										WarpLoadStatus *load_status);
/* The same over rows [first, end) of the batch only (keep[] indexed by
 * batch row; the rest untouched): drivers on other threads can take the
 * other ranges of the same batch. */
extern WarpStatus warp_cpu_filter_rows(WarpCpu *cpu, const ArrowArray *cols,
									   warp_int64 first, warp_int64 end, bool *keep,
									   warp_int64 *kept, WarpLoadStatus *load_status);

/*
 * Row mode (WarpProgram.emit_rows): forget the rows appended so far, and
 * the strings of their text keys, once the caller has emitted them (between
 * batches).  No effect on a grouping program.
 */
extern void warp_cpu_reset_groups(WarpCpu *cpu);

/* Groups found so far, and their keys and partial states. */
extern warp_int64 warp_cpu_ngroups(const WarpCpu *cpu);
/* key k of group g: value (int64 or double bits) and NULL flag */
extern warp_int64 warp_cpu_group_key(const WarpCpu *cpu, warp_int64 g, int k, bool *isnull);
extern const WarpAggState *warp_cpu_group_agg(const WarpCpu *cpu, warp_int64 g, int a);
/* the driver's groups as a source of warp_group_merge (its text keys'
 * callback left to the caller: warp_cpu_key_text wants the column) */
struct WarpGroupSource;
extern void warp_cpu_group_source(const WarpCpu *cpu, struct WarpGroupSource *src);
/*
 * The string a text group key's value id stands for (a WARP_TEXT_KEY
 * column col of this driver's program); NULL if there is no such string.
 */
extern const warp_uint8 *warp_cpu_key_text(const WarpCpu *cpu, int col, warp_int64 id,
										   warp_int64 *len);

extern void warp_cpu_counters(const WarpCpu *cpu, WarpCpuCounters *c);

/*
 * With the check on, the driver notes when a float sum or average sees a
 * finite value large enough (float4 sums >= 2^64, float8 sums >= 2^960,
 * averages >= 2^400) that whether the additions overflow depends on their
 * order.  A driver that is one of several threads, each summing part of
 * the rows, then cannot promise PostgreSQL's row-order result: the caller
 * runs the query again in one thread (warp_cpu_pool.h).
 */
extern void warp_cpu_set_order_check(WarpCpu *cpu, bool on);
extern bool warp_cpu_order_risk(const WarpCpu *cpu);

/* Whether an Arrow field can be loaded as the given engine type. */
extern bool warp_cpu_can_load(const ArrowField *field, WarpType type);

#endif							/* WARP_CPU_H */
