/*-------------------------------------------------------------------------
 *
 * gpud_wire.h
 *	  What a backend and pg_warp_gpud say to each other: socket messages,
 *	  the shared arena, and the layout of a job and of its result in it.
 *
 * Conversation (one job per connection):
 *
 *   daemon  -> HELLO   (device kind and name)
 *   backend -> RUN     arg0 = bytes the job needs
 *   daemon  -> ARENA   a memfd of that size (+ header), passed with
 *                      SCM_RIGHTS; both sides map it shared
 *   backend    writes the job at WARP_ARENA_JOB_OFF, then
 *   backend -> GO
 *   daemon     runs it; writes the result into the arena (or into a new,
 *              larger memfd passed along with DONE)
 *   daemon  -> DONE    arg0 = result offset, arg1 = result length
 *
 * The backend cancels by setting the arena header's cancel word; the
 * daemon looks at it (and at the socket: end of file means the backend is
 * gone) between batches.  Every offset in a job or result is relative to
 * the start of the arena and is checked against its size before use.
 *
 * Pure C; no PostgreSQL headers (the extension and the daemon share it).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUD_WIRE_H
#define GPUD_WIRE_H

#include <sys/socket.h>
#include <sys/uio.h>

#include "arrow.h"
#include "warp_cpu.h"
#include "warp_program.h"
#include "gpud_tcache_wire.h"

#define GPUD_MAGIC			0x44555047	/* "GPUD" */
#define GPUD_VERSION		10
#define GPUD_SOCKET_NAME	"pg_warp_gpud.sock"	/* under $PGDATA */
#define GPUD_STATUS_NAME	"pg_warp_gpud.status"

typedef enum GpudMsgType
{
	GPUD_HELLO = 1,
	GPUD_RUN,
	GPUD_ARENA,
	GPUD_GO,
	GPUD_DONE,
	GPUD_FAIL,					/* the daemon could not run the job: text */
	GPUD_CACHE					/* instead of RUN: a GPU table cache request
								 * (gpud_tcache_wire.h), arg0 = its bytes */
} GpudMsgType;

typedef enum GpudDeviceKind
{
	GPUD_DEVICE_CPU = 0,
	GPUD_DEVICE_GPU = 1
} GpudDeviceKind;

/* Every socket message has this fixed size. */
typedef struct GpudMsg
{
	uint32_t	magic;
	uint32_t	type;			/* GpudMsgType */
	uint64_t	arg0;
	uint64_t	arg1;
	char		text[104];		/* HELLO: device; FAIL: reason */
} GpudMsg;

/* m as a message of type with arguments a0 and a1, no text */
extern void gpud_msg_init(GpudMsg *m, uint32_t type, uint64_t a0, uint64_t a1);

/*
 * A socket message as sendmsg and recvmsg see it: bytes, and room for one
 * file descriptor passed along with them (SCM_RIGHTS; the daemon passes
 * the arena's memfd with ARENA, a result arena's with DONE).  Both sides
 * fill it with the functions below.
 */
typedef struct GpudSockMsg
{
	struct msghdr mh;
	struct iovec iov;
	union
	{
		char		buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	}			cm;
} GpudSockMsg;

/* len bytes at data, no descriptor */
extern void gpud_sockmsg_init(GpudSockMsg *s, void *data, size_t len);
/* pass fd along (sender) */
extern void gpud_sockmsg_put_fd(GpudSockMsg *s, int fd);
/* room for a descriptor passed along (receiver, before recvmsg) */
extern void gpud_sockmsg_want_fd(GpudSockMsg *s);
/* the descriptor received with the message, or -1 (after recvmsg) */
extern int	gpud_sockmsg_fd(GpudSockMsg *s);

/* Start of the arena. */
typedef struct GpudArenaHeader
{
	uint32_t	magic;
	volatile uint32_t cancel;	/* set by the backend */
	uint64_t	size;
} GpudArenaHeader;

#define WARP_ARENA_JOB_OFF	64

/* Developer fault injection (pg_warp.gpud_fault), for the tests. */
typedef enum GpudFault
{
	GPUD_FAULT_NONE = 0,
	GPUD_FAULT_CRASH,			/* abort() after the first batch */
	GPUD_FAULT_SLOW,			/* sleep 50 ms per batch */
	GPUD_FAULT_DEVICE_OOM		/* pretend the device ran out of memory */
} GpudFault;

/* One dimension's join table as keys and payload ids; the daemon builds it. */
typedef struct GpudTable
{
	int64_t		nrows;
	int32_t		npayloads;
	int32_t		pad;
	uint64_t	off_keys;		/* int64[nrows] */
	uint64_t	off_payload;	/* int32[nrows] */
} GpudTable;

/* One Arrow file of the fact table. */
typedef struct GpudFile
{
	uint64_t	off_path;		/* NUL-terminated */
	int64_t		limit;			/* committed length, or -1 */
	int32_t		recover_tail;
	int32_t		nbatches;		/* batches to read (the rest were skipped) */
	uint64_t	off_batches;	/* int32[nbatches] */
	uint64_t	off_fields;		/* int32[ncols]: field of each program column */
	/* identity the backend saw; the daemon refuses a different file */
	uint64_t	dev;
	uint64_t	ino;
	int64_t		size;
	int64_t		mtime_sec;
	int64_t		mtime_nsec;
} GpudFile;

typedef struct GpudJob
{
	uint32_t	magic;
	uint32_t	version;
	uint64_t	total;			/* bytes from the job's start */
	int32_t		fault;			/* GpudFault */
	int32_t		nfiles;
	uint64_t	mem_quota;		/* device memory the job may use, bytes */
	int32_t		use_cache;		/* read and fill the GPU column cache */
	int32_t		pad;
	WarpProgram prog;			/* pointers replaced by offsets (below) */
	uint64_t	off_cols,
				off_nodes,
				off_args,
				off_quals,
				off_joins,
				off_keys,
				off_aggs,
				off_strings,
				off_strbytes,
				off_setvals,
				off_tz_at,		/* prog.tz.at[prog.tz.n] */
				off_tz_off,		/* prog.tz.off[prog.tz.n] */
				off_tables,		/* GpudTable[prog.njoins] */
				off_files;		/* GpudFile[nfiles] */
	/* nfiles = 0 and cached = 1: the rows are the GPU table cache's
	 * replica of a heap table (gpud_tcache_wire.h) */
	int32_t		cached;
	uint32_t	cache_curcid;	/* the snapshot's command id */
	GpudCacheKey cache_key;
	uint64_t	cache_dict_epoch;	/* of the dictionary classified */
	uint32_t	cache_nclasses;
	uint32_t	cache_pad;
	uint64_t	off_cache_classes;	/* uint8[nclasses]: warp_visibility.h */
	uint64_t	off_cache_cols; /* int32[ncols]: replica column of each */
} GpudJob;

/* parts of a GPU job's time (GpudResult.phase_ms) */
typedef enum GpudPhase
{
	GPUD_PHASE_RESERVE,			/* waiting for device memory */
	GPUD_PHASE_CREATE,			/* the driver: tables uploaded, memory */
	GPUD_PHASE_BATCHES,			/* reads, copies and kernels */
	GPUD_PHASE_FINISH,			/* the groups brought back to the host */
	GPUD_PHASE_FLUSH_COPY,		/* ... of which: compacting and copying
								 * them (every flush, this one included) */
	GPUD_PHASE_FLUSH_HOST,		/* ... and merging them on the host */
	GPUD_PHASES
} GpudPhase;

typedef struct GpudResult
{
	uint32_t	magic;
	int32_t		status;			/* WarpStatus of the first failing row */
	int32_t		load_status;	/* WarpLoadStatus */
	int32_t		bad_col;
	int64_t		bad_row;
	int32_t		bad_file;		/* file of a load error, -1 if none */
	int32_t		has_arrow_error;
	ArrowError	arrow_error;	/* a file could not be read */
	int32_t		ran_on;			/* GpudDeviceKind */
	int32_t		nparts;			/* drivers whose groups follow, one after
								 * the other (a group may come once from each) */
	char		device[64];		/* "NVIDIA H200", "CPU" */
	char		fallback[192];	/* why a GPU job ran on the CPU, or "" */
	WarpCpuCounters counters;
	int64_t		batches;
	int64_t		batches_ahead;	/* of them, compressed ones loaded ahead on
								 * helper threads (gpud_prefetch.h) */
	int64_t		columns_cached; /* columns of compressed batches the GPU
								 * column cache held decompressed: neither
								 * read nor decompressed (gpud_decoded.h) */
	int64_t		bytes_read;		/* from files with pread */
	int64_t		windows;		/* files read through registered windows */
	int64_t		bytes_h2d;		/* host to device */
	int64_t		bytes_cached;	/* read from the GPU column cache instead */
	double		read_ms;
	double		h2d_ms;
	double		kernel_ms;		/* GPU kernels (see warp_gpu_transfer_stats) */
	double		total_ms;
	double		setup_ms;		/* of total_ms: the job decoded, its join
								 * tables built, before any driver */
	int64_t		bytes_registered;	/* of the registered windows the job's
									 * parts held */
	double		phase_ms[6];	/* GpudPhase: where total_ms went (the
								 * slowest lane's, for the lanes' phases) */
	int64_t		ngroups;
	int32_t		nkeys;
	int32_t		naggs;
	uint64_t	off_keys;		/* int64[ngroups * nkeys] */
	uint64_t	off_nulls;		/* uint8[ngroups * nkeys] */
	uint64_t	off_states;		/* WarpAggState[ngroups * naggs] */
} GpudResult;

/*
 * Building a job: the backend computes sizes with a GpudBuf of data NULL
 * (counting pass), then writes for real into the arena.
 */
typedef struct GpudBuf
{
	uint8_t    *base;			/* arena start, NULL while counting */
	uint64_t	pos;			/* next free offset (from the arena start) */
} GpudBuf;

/* reserve len bytes aligned to 16; returns the offset */
extern uint64_t gpud_buf_put(GpudBuf *b, const void *data, uint64_t len);

/* the program's arrays, appended; the job's offsets filled */
extern void gpud_put_program(GpudBuf *b, GpudJob *job, const WarpProgram *prog);

/*
 * Check a job in an arena of arena_size bytes and make prog point into the
 * arena.  NULL if valid, else what is wrong.
 */
extern const char *gpud_job_open(uint8_t *arena, uint64_t arena_size, uint64_t job_off,
								 GpudJob **job_out, WarpProgram *prog);

/* pointer to len bytes at off, or NULL if it lies outside the arena */
extern void *gpud_at(uint8_t *arena, uint64_t arena_size, uint64_t off, uint64_t len);

#endif							/* GPUD_WIRE_H */
