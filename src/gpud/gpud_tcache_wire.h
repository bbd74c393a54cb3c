/*-------------------------------------------------------------------------
 *
 * gpud_tcache_wire.h
 *	  The GPU table cache's requests between a backend and pg_warp_gpud:
 *	  loading a heap table's replica, shipping the row changes captured
 *	  at the table, reading the replica's transaction dictionary, stats.
 *	  Queries over a replica are ordinary jobs (GpudJob.cached).
 *
 * A request is one connection: HELLO, CACHE(bytes), ARENA, the request
 * written at WARP_ARENA_JOB_OFF, GO, then DONE with a GpudCacheResp (or
 * FAIL with a reason).
 *
 * Row records (LOAD_ROWS and CHANGES) are GpudCacheRec headers; an
 * INSERT's (and every loaded row's) is followed by its values: a null
 * bitmap of ceil(ncols / 8) bytes padded to 8, then ncols int64 or double
 * values (the replica's column kinds), so every record is 8-aligned and
 * its size follows from op and ncols.
 *
 * Pure C; no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUD_TCACHE_WIRE_H
#define GPUD_TCACHE_WIRE_H

#include <stdint.h>

/* Which replica: it is valid only for this exact identity. */
typedef struct GpudCacheKey
{
	uint32_t	db;
	uint32_t	rel;
	uint32_t	relfilenode;	/* TRUNCATE and rewrites give a new one */
	uint32_t	layout;			/* hash of the cached columns' (attno, type) */
	uint64_t	epoch;			/* the server's capture epoch at load */
} GpudCacheKey;

typedef enum GpudCacheOp
{
	GPUD_CACHE_LOAD_BEGIN = 1,	/* a new replica, loading; changes held */
	GPUD_CACHE_LOAD_ROWS,		/* rows scanned from the table */
	GPUD_CACHE_LOAD_END,		/* held changes applied: ready */
	GPUD_CACHE_CHANGES,			/* captured row changes */
	GPUD_CACHE_XIDS,			/* state and transaction dictionary */
	GPUD_CACHE_DROP,			/* forget the table's replica */
	GPUD_CACHE_STATS			/* every replica's numbers */
} GpudCacheOp;

#define GPUD_CACHE_COL_INT64	1
#define GPUD_CACHE_COL_DOUBLE	2
#define GPUD_CACHE_MAX_COLS		1600

typedef enum GpudCacheState
{
	GPUD_CACHE_ABSENT = 0,		/* no replica of this identity */
	GPUD_CACHE_LOADING,
	GPUD_CACHE_READY,
	GPUD_CACHE_BROKEN			/* must be loaded again: why in the text */
} GpudCacheState;

typedef struct GpudCacheReq
{
	uint32_t	magic;			/* (the same prefix as GpudJob's) */
	uint32_t	version;
	uint64_t	total;			/* bytes from the request's start */
	int32_t		op;				/* GpudCacheOp */
	int32_t		ncols;
	GpudCacheKey key;
	uint64_t	load_token;		/* LOAD_ROWS, LOAD_END: LOAD_BEGIN's */
	uint64_t	mem_limit;		/* bytes all replicas may hold */
	uint64_t	log_limit;		/* bytes of changes held while loading */
	int64_t		nrecs;			/* records at off_data */
	uint64_t	ring_upto;		/* XIDS: apply the change log up to here first
								 * (0: the backend has no change log) */
	uint64_t	off_kinds;		/* LOAD_BEGIN: uint8[ncols] */
	uint64_t	off_data;
	uint64_t	len_data;
	char		name[64];		/* the table's name, for stats and errors */
} GpudCacheReq;

typedef enum GpudCacheRecOp
{
	GPUD_REC_INSERT = 1,		/* a version (loaded or inserted), values follow */
	GPUD_REC_DELETE				/* the version at tid with raw_xmin got xmax */
} GpudCacheRecOp;

typedef struct GpudCacheRec
{
	uint32_t	block;
	uint16_t	offset;
	uint16_t	op;				/* GpudCacheRecOp */
	uint32_t	raw_xmin;		/* as on the page: what a DELETE matches */
	uint32_t	xmin;			/* for visibility: 2 = frozen (all see it) */
	uint32_t	cmin;
	uint32_t	xmax;			/* 0: none */
	uint32_t	cmax;
	uint32_t	pad;
} GpudCacheRec;

/* one record's bytes */
static inline uint64_t
gpud_cache_rec_size(int op, int ncols)
{
	if (op != GPUD_REC_INSERT)
		return sizeof(GpudCacheRec);
	return sizeof(GpudCacheRec) + (((uint64_t) ncols + 63) / 64) * 8 + 8 * (uint64_t) ncols;
}

/* One replica, as STATS shows it. */
typedef struct GpudCacheStat
{
	GpudCacheKey key;
	char		name[64];
	int32_t		state;			/* GpudCacheState */
	int32_t		pad;
	int64_t		rows;			/* versions held (live and not yet compacted) */
	int64_t		bytes;
	int64_t		pending;		/* changes held while loading */
	int64_t		xids;			/* transaction ids in its dictionary */
	char		why[128];		/* BROKEN: why */
} GpudCacheStat;

typedef struct GpudCacheResp
{
	uint32_t	magic;
	int32_t		state;			/* GpudCacheState of the key's replica */
	uint64_t	load_token;		/* LOAD_BEGIN */
	uint64_t	dict_epoch;		/* XIDS */
	uint32_t	nxids;			/* XIDS: dictionary entries */
	uint32_t	pad2;
	uint64_t	off_xids;		/* uint32[nxids], from the response's start */
	int32_t		nstats;
	int32_t		pad;
	uint64_t	off_stats;		/* GpudCacheStat[nstats] */
	char		why[128];		/* BROKEN or LOADING elsewhere: why */
} GpudCacheResp;

#endif							/* GPUD_TCACHE_WIRE_H */
