/*
 * gpud_client.c — a backend's side of the conversation with pg_warp_gpud.
 *
 * One connection per session: connect to $PGDATA/pg_warp_gpud.sock (the
 * backend's working directory is $PGDATA), ask for an arena big enough
 * for the job (before reading the daemon's HELLO, so that no reply is
 * waited for twice), map the memfd the daemon sends, write the job,
 * say GO and wait for DONE.  The connection and its arena are kept for the
 * next job (the daemon serves a connection's jobs one after the other), so
 * a query pays no connection, no daemon thread and no new arena unless it
 * needs a bigger one; a job whose result is still being read when another
 * starts (two daemon nodes in one plan) makes the other open a connection
 * of its own.  A row-mode job (WarpJoin, WarpScan) streams its rows in
 * chunks (pgwarp_gpud_rows_start / _next).  Waiting is WaitLatchOrSocket, so a query
 * cancel is seen at once: the backend sets the arena's cancel word (the
 * daemon stops within one batch) and raises the usual error.  End of file
 * on the socket means the daemon died; the caller then runs the query on
 * its own CPU driver, since nothing of the result has been used yet.
 *
 * The socket and the mappings belong to the current memory context: a
 * reset callback closes and unmaps them, so an error anywhere releases
 * them.
 */
#include "postgres.h"

#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/fd.h"
#include "storage/latch.h"
#include "utils/memutils.h"
#include "utils/wait_event.h"

#include "gpud_client.h"

typedef struct GpudConn
{
	int			sock;
	uint8	   *arena;
	uint64		arena_size;
	uint8	   *rarena;			/* a separate result arena, if sent */
	uint64		rarena_size;
	uint64		inline_need;	/* the job goes in the arena as it is:
								 * RUN(need, GPUD_RUN_INLINE) for GO */
	MemoryContextCallback cb;
} GpudConn;

static void
conn_release(void *arg)
{
	GpudConn   *c = arg;

	if (c->arena)
	{
		/* tell a daemon still working on it to stop */
		((GpudArenaHeader *) c->arena)->cancel = 1;
		munmap(c->arena, c->arena_size);
		c->arena = NULL;
	}
	if (c->rarena)
	{
		munmap(c->rarena, c->rarena_size);
		c->rarena = NULL;
	}
	if (c->sock >= 0)
	{
		close(c->sock);
		c->sock = -1;
	}
}

bool
pgwarp_gpud_status(GpudStatus *st)
{
	FILE	   *f;
	char		line[512];
	char		kindbuf[16];
	unsigned long long reg = 0,
				cache = 0,
				staging = 0;
	bool		ok = false;

	memset(st, 0, sizeof(*st));
	f = AllocateFile(GPUD_STATUS_NAME, "r");
	if (f == NULL)
		return false;
	/* kind, GPUs, name, pid, then (newer daemons) the budgets in MB */
	if (fgets(line, sizeof(line), f) &&
		sscanf(line, "%15[^\t]\t%d\t%127[^\t]\t%d\t%llu\t%llu\t%llu\t%d", kindbuf,
			   &st->ngpus, st->name, &st->pid, &reg, &cache, &staging,
			   &st->lanes_per_gpu) >= 4 &&
		st->pid > 0 && kill(st->pid, 0) == 0)
	{
		ok = true;
		st->kind = strcmp(kindbuf, "gpu") == 0 ? GPUD_DEVICE_GPU : GPUD_DEVICE_CPU;
		st->registered_mb = reg;
		st->cache_mb = cache;
		st->staging_mb = staging;
	}
	FreeFile(f);
	return ok;
}

bool
pgwarp_gpud_serving(int *kind)
{
	GpudStatus	st;

	if (!pgwarp_gpud_status(&st))
		return false;
	*kind = st.kind;
	return true;
}

/* ------------------------------------------------------------ messages */

static bool
send_msg2(GpudConn *c, uint32 type, uint64 a0, uint64 a1)
{
	GpudMsg		m;
	ssize_t		n;

	gpud_msg_init(&m, type, a0, a1);
	do
		n = send(c->sock, &m, sizeof(m), MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t) sizeof(m);
}

static bool
send_msg(GpudConn *c, uint32 type, uint64 a0)
{
	return send_msg2(c, type, a0, 0);
}

/* GO, or for a job written into the kept arena as it was, RUN inline */
static bool
send_go(GpudConn *c)
{
	if (c->inline_need == 0)
		return send_msg(c, GPUD_GO, 0);
	((GpudArenaHeader *) c->arena)->cancel = 0;
	return send_msg2(c, GPUD_RUN, c->inline_need, GPUD_RUN_INLINE);
}

/*
 * Wait for the next message (and a file descriptor passed with it).  A
 * query cancel or termination raises its error here, after setting the
 * cancel word the daemon watches.  False when the daemon is gone.
 */
static bool
recv_msg(GpudConn *c, GpudMsg *m, int *fd_out)
{
	size_t		got = 0;

	if (fd_out)
		*fd_out = -1;
	while (got < sizeof(*m))
	{
		GpudSockMsg sm;
		ssize_t		n;
		int			rc;

		rc = WaitLatchOrSocket(MyLatch,
							   WL_LATCH_SET | WL_SOCKET_READABLE | WL_EXIT_ON_PM_DEATH,
							   c->sock, -1L, PG_WAIT_EXTENSION);
		if (rc & WL_LATCH_SET)
		{
			ResetLatch(MyLatch);
			if ((QueryCancelPending || ProcDiePending) && c->arena)
				((GpudArenaHeader *) c->arena)->cancel = 1;
			CHECK_FOR_INTERRUPTS();
		}
		if (!(rc & WL_SOCKET_READABLE))
			continue;
		gpud_sockmsg_init(&sm, (char *) m + got, sizeof(*m) - got);
		gpud_sockmsg_want_fd(&sm);
		n = recvmsg(c->sock, &sm.mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
			continue;
		if (n <= 0)
			return false;
		{
			int			fd = gpud_sockmsg_fd(&sm);

			if (fd >= 0)
			{
				if (fd_out && *fd_out < 0)
					*fd_out = fd;
				else
					close(fd);
			}
		}
		got += n;
	}
	return m->magic == GPUD_MAGIC;
}

static uint8 *
map_fd(int fd, uint64 size)
{
	void	   *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

/* ------------------------------------------------------------ the job */

/* Lay the job out; with b->base NULL only counts. */
static void
write_job(GpudBuf *b, const WarpProgram *prog, int ntables, const GpudClientTable *tables,
		  int nfiles, const GpudClientFile *files, const GpudClientCached *cached)
{
	GpudJob		job;
	GpudTable  *gt = palloc0(sizeof(GpudTable) * Max(ntables, 1));
	GpudFile   *gf = palloc0(sizeof(GpudFile) * Max(nfiles, 1));
	uint64		job_off;
	int			i;

	memset(&job, 0, sizeof(job));
	job.magic = GPUD_MAGIC;
	job.version = GPUD_VERSION;
	job.fault = pgwarp_gpud_fault;
	job.mem_quota = (uint64_t) pgwarp_gpu_memory_per_query << 20;
	job.use_cache = pgwarp_gpu_cache ? 1 : 0;
	job.nfiles = nfiles;
	job_off = gpud_buf_put(b, NULL, sizeof(GpudJob));
	Assert(job_off == WARP_ARENA_JOB_OFF);
	gpud_put_program(b, &job, prog);
	for (i = 0; i < ntables; i++)
	{
		gt[i].nrows = tables[i].nrows;
		gt[i].npayloads = tables[i].npayloads;
		gt[i].off_keys = gpud_buf_put(b, tables[i].keys, sizeof(int64) * tables[i].nrows);
		gt[i].off_payload = gpud_buf_put(b, tables[i].payload, sizeof(int32) * tables[i].nrows);
	}
	job.off_tables = gpud_buf_put(b, gt, sizeof(GpudTable) * ntables);
	for (i = 0; i < nfiles; i++)
	{
		const GpudClientFile *f = &files[i];

		gf[i].off_path = gpud_buf_put(b, f->path, strlen(f->path) + 1);
		gf[i].limit = f->limit;
		gf[i].recover_tail = f->recover_tail;
		gf[i].nbatches = f->nbatches;
		gf[i].off_batches = gpud_buf_put(b, f->batches, sizeof(int32) * f->nbatches);
		gf[i].off_fields = gpud_buf_put(b, f->fields, sizeof(int32) * prog->ncols);
		gf[i].dev = f->st.st_dev;
		gf[i].ino = f->st.st_ino;
		gf[i].size = f->st.st_size;
		gf[i].mtime_sec = f->st.st_mtim.tv_sec;
		gf[i].mtime_nsec = f->st.st_mtim.tv_nsec;
	}
	job.off_files = gpud_buf_put(b, gf, sizeof(GpudFile) * nfiles);
	if (cached)
	{
		job.cached = 1;
		job.cache_key = cached->key;
		job.cache_curcid = cached->curcid;
		job.cache_dict_epoch = cached->dict_epoch;
		job.cache_nclasses = cached->nclasses;
		job.off_cache_classes = gpud_buf_put(b, cached->classes, cached->nclasses);
		job.off_cache_cols = gpud_buf_put(b, cached->cols, sizeof(int32) * prog->ncols);
	}
	job.total = b->pos - WARP_ARENA_JOB_OFF;
	if (b->base)
		memcpy(b->base + job_off, &job, sizeof(job));
	pfree(gt);
	pfree(gf);
}

/* *ms += the time since *t0, which becomes now */
static void
lap(instr_time *t0, instr_time *t1, double *ms)
{
	INSTR_TIME_SET_CURRENT(*t1);
	*ms += INSTR_TIME_GET_MILLISEC(*t1) - INSTR_TIME_GET_MILLISEC(*t0);
	*t0 = *t1;
}

/* Connect and read HELLO; false with *why. */
static bool
conn_connect(GpudConn *c, char *why, size_t whylen)
{
	struct sockaddr_un addr;
	GpudMsg		m;

#define FAIL(...) do { snprintf(why, whylen, __VA_ARGS__); conn_release(c); return false; } while (0)
	c->sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->sock < 0)
		FAIL("could not create a socket: %m");
	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	strlcpy(addr.sun_path, GPUD_SOCKET_NAME, sizeof(addr.sun_path));
	if (connect(c->sock, (struct sockaddr *) &addr, sizeof(addr)) != 0)
		FAIL("pg_warp_gpud is not running (%m)");
	if (!recv_msg(c, &m, NULL) || m.type != GPUD_HELLO)
		FAIL("pg_warp_gpud closed the connection");
	return true;
#undef FAIL
}

/*
 * Say type (GPUD_RUN or GPUD_CACHE) for need bytes and map the arena the
 * daemon sends, or keep the one mapped when it says to reuse it (a cache
 * request on a kept connection).  False with *why when it cannot.
 */
static bool
conn_arena(GpudConn *c, uint32 type, uint64 need, char *why, size_t whylen)
{
	GpudMsg		m;
	int			fd;

#define FAIL(...) do { snprintf(why, whylen, __VA_ARGS__); conn_release(c); return false; } while (0)
	if (!send_msg(c, type, need) || !recv_msg(c, &m, &fd))
		FAIL("pg_warp_gpud closed the connection");
	if (m.type == GPUD_FAIL)
	{
		m.text[sizeof(m.text) - 1] = '\0';
		FAIL("pg_warp_gpud refused the job: %s", m.text);
	}
	if (m.type == GPUD_ARENA && fd < 0 && c->arena && m.arg0 == c->arena_size &&
		m.arg0 >= WARP_ARENA_JOB_OFF + need)
		return true;			/* the same arena again */
	if (m.type != GPUD_ARENA || fd < 0 || m.arg0 < WARP_ARENA_JOB_OFF + need)
	{
		if (fd >= 0)
			close(fd);
		FAIL("pg_warp_gpud sent no arena");
	}
	if (c->arena)
		munmap(c->arena, c->arena_size);
	c->arena_size = m.arg0;
	c->arena = map_fd(fd, c->arena_size);
	if (c->arena == NULL)
		FAIL("could not map pg_warp_gpud's arena: %m");
	return true;
#undef FAIL
}

static bool conn_take_done(GpudConn *c, GpudMsg *m, int fd, uint8 **rbase, uint64 *rsize,
						   char *why, size_t whylen);

static bool
conn_start(GpudConn *c, uint32 type, uint64 need, char *why, size_t whylen)
{
	return conn_connect(c, why, whylen) && conn_arena(c, type, need, why, whylen);
}

/*
 * Say GO and wait for DONE: the result's mapping and its offset and
 * length (*m), or false with *why.
 */
static bool
conn_finish(GpudConn *c, uint8 **rbase, uint64 *rsize, GpudMsg *m, char *why, size_t whylen)
{
	int			fd;

#define FAIL(...) do { snprintf(why, whylen, __VA_ARGS__); conn_release(c); return false; } while (0)
	if (!send_go(c) || !recv_msg(c, m, &fd))
		FAIL("pg_warp_gpud died while running the query");
	if (m->type == GPUD_FAIL)
	{
		if (fd >= 0)
			close(fd);
		m->text[sizeof(m->text) - 1] = '\0';
		FAIL("pg_warp_gpud could not run the query: %s", m->text);
	}
	return conn_take_done(c, m, fd, rbase, rsize, why, whylen);
#undef FAIL
}

/*
 * m (with fd) should be DONE: the result's mapping (the arena, or the
 * result arena passed along) into *rbase and *rsize, or false with *why.
 */
static bool
conn_take_done(GpudConn *c, GpudMsg *m, int fd, uint8 **rbase, uint64 *rsize,
			   char *why, size_t whylen)
{
#define FAIL(...) do { snprintf(why, whylen, __VA_ARGS__); conn_release(c); return false; } while (0)
	if (m->type != GPUD_DONE)
	{
		if (fd >= 0)
			close(fd);
		FAIL("pg_warp_gpud sent an unexpected message");
	}
	*rbase = c->arena;
	*rsize = c->arena_size;
	if (fd >= 0)
	{
		c->rarena_size = m->arg0 + m->arg1;
		c->rarena = map_fd(fd, c->rarena_size);
		if (c->rarena == NULL)
			FAIL("could not map pg_warp_gpud's result: %m");
		*rbase = c->rarena;
		*rsize = c->rarena_size;
	}
	return true;
#undef FAIL
}

/*
 * The connection kept for the session (see the top), lent to one job at a
 * time: from pgwarp_gpud_run_job (or _rows_start) until the memory context
 * current then goes, since the result is read in place in its arena.
 * busy: an exchange started and not finished (an error, a cancel, a
 * stream not read to its end), so what the daemon sends next would be
 * that job's: the connection is closed when it comes back.  An arena above
 * KEEP_ARENA goes back too, as the daemon gives its own up.
 */
#define KEEP_ARENA	((uint64) 64 << 20)

static GpudConn kept_conn = {.sock = -1};
static bool kept_lent;
static bool kept_busy;

static void
kept_return(void *arg)
{
	if (kept_busy || kept_conn.arena_size > KEEP_ARENA)
		conn_release(&kept_conn);
	else if (kept_conn.rarena)
	{
		munmap(kept_conn.rarena, kept_conn.rarena_size);
		kept_conn.rarena = NULL;
	}
	kept_lent = false;
	kept_busy = false;
}

static GpudConn *conn_new(void);

/* the kept connection, lent until CurrentMemoryContext goes, or NULL when
 * it is lent already */
static GpudConn *
kept_lend(void)
{
	MemoryContextCallback *cb;

	if (kept_lent)
		return NULL;
	cb = MemoryContextAllocZero(CurrentMemoryContext, sizeof(MemoryContextCallback));
	cb->func = kept_return;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, cb);
	kept_lent = true;
	kept_busy = true;
	return &kept_conn;
}

/*
 * A connection with an arena of at least need bytes for a job of type
 * (GPUD_RUN): the kept one when it is free (connected again if the daemon
 * went away since: it restarted), else a new one closed with the current
 * memory context.  NULL with *why.
 */
static GpudConn *
conn_for_job(uint32 type, uint64 need, char *why, size_t whylen)
{
	GpudConn   *c = kept_lend();
	struct pollfd pfd;

	if (c == NULL)
	{
		c = conn_new();
		return conn_start(c, type, need, why, whylen) ? c : NULL;
	}
	c->inline_need = 0;
	/* the daemon sends nothing between jobs: readable is end of file (it
	 * went away, or restarted) */
	pfd.fd = c->sock;
	pfd.events = POLLIN | POLLRDHUP;
	pfd.revents = 0;
	if (c->sock >= 0 && poll(&pfd, 1, 0) != 0)
		conn_release(c);
	if (c->sock >= 0 && c->arena && WARP_ARENA_JOB_OFF + need <= c->arena_size)
	{
		/* it fits the arena: written there, and RUN inline for GO */
		c->inline_need = need;
		return c;
	}
	if (c->sock >= 0 && conn_arena(c, type, need, why, whylen))
		return c;
	/* none yet, or a stale one (conn_arena released it) */
	return conn_start(c, type, need, why, whylen) ? c : NULL;
}

/* the job on c is over and its result read: c may serve the next */
static void
conn_job_done(GpudConn *c)
{
	if (c == &kept_conn)
		kept_busy = false;
	else
	{
		close(c->sock);
		c->sock = -1;
	}
}

static GpudConn *
conn_new(void)
{
	GpudConn   *c = MemoryContextAllocZero(CurrentMemoryContext, sizeof(GpudConn));

	c->sock = -1;
	c->cb.func = conn_release;
	c->cb.arg = c;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &c->cb);
	return c;
}

/*
 * Connect (or take the kept connection) and write the job with room for
 * `extra` bytes after it (its result, or a row-mode job's chunks).  NULL
 * with *why.
 */
static GpudConn *
job_start(const WarpProgram *prog, int ntables, const GpudClientTable *tables,
		  int nfiles, const GpudClientFile *files, const GpudClientCached *cached,
		  uint64 extra, GpudClientTimes *times, char *why, size_t whylen)
{
	GpudConn   *c;
	GpudBuf		b;
	instr_time	t0,
				t1;

	memset(times, 0, sizeof(*times));
	INSTR_TIME_SET_CURRENT(t0);
	/* how big: a counting pass */
	memset(&b, 0, sizeof(b));
	b.pos = WARP_ARENA_JOB_OFF;
	write_job(&b, prog, ntables, tables, nfiles, files, cached);
	c = conn_for_job(GPUD_RUN, GPUD_RESULT_OFF(b.pos - WARP_ARENA_JOB_OFF) -
					 WARP_ARENA_JOB_OFF + extra, why, whylen);
	if (c == NULL)
		return NULL;
	lap(&t0, &t1, &times->connect_ms);

	memset(&b, 0, sizeof(b));
	b.base = c->arena;
	b.pos = WARP_ARENA_JOB_OFF;
	write_job(&b, prog, ntables, tables, nfiles, files, cached);
	lap(&t0, &t1, &times->job_ms);
	return c;
}

GpudResult *
pgwarp_gpud_run_job(const WarpProgram *prog, int ntables, const GpudClientTable *tables,
					int nfiles, const GpudClientFile *files, const GpudClientCached *cached,
					GpudClientTimes *times, char *why, size_t whylen)
{
	GpudConn   *c;
	GpudMsg		m;
	GpudResult *res;
	uint8	   *rbase;
	uint64		rsize;
	instr_time	t0,
				t1;

	/* room for a modest result */
	c = job_start(prog, ntables, tables, nfiles, files, cached, 1 << 20, times, why, whylen);
	if (c == NULL)
		return NULL;
	INSTR_TIME_SET_CURRENT(t0);
	if (!conn_finish(c, &rbase, &rsize, &m, why, whylen))
		return NULL;
	lap(&t0, &t1, &times->wait_ms);
	/* check the result's layout before trusting any of it */
	res = gpud_result_open(rbase, rsize, m.arg0, m.arg1, prog->nkeys, prog->naggs);
	if (res == NULL)
	{
		snprintf(why, whylen, "pg_warp_gpud sent a malformed result");
		conn_release(c);
		return NULL;
	}
	/* the mappings stay until the context goes */
	conn_job_done(c);
	lap(&t0, &t1, &times->result_ms);
	return res;
}

GpudResult *
pgwarp_gpud_run(const WarpProgram *prog, int ntables, const GpudClientTable *tables,
				int nfiles, const GpudClientFile *files, GpudClientTimes *times,
				char *why, size_t whylen)
{
	return pgwarp_gpud_run_job(prog, ntables, tables, nfiles, files, NULL, times, why, whylen);
}

/* ------------------------------------------------------- row mode */

struct GpudRowStream
{
	GpudConn   *c;
	int			nkeys;
	bool		owe_next;		/* a chunk was handed out: say NEXT first */
	GpudClientTimes *times;
};

GpudRowStream *
pgwarp_gpud_rows_start(const WarpProgram *prog, int ntables, const GpudClientTable *tables,
					   int nfiles, const GpudClientFile *files, GpudClientTimes *times,
					   char *why, size_t whylen)
{
	GpudConn   *c;
	GpudRowStream *s;

	Assert(prog->emit_rows && prog->naggs == 0);
	c = job_start(prog, ntables, tables, nfiles, files, NULL, GPUD_ROW_AREA, times, why, whylen);
	if (c == NULL)
		return NULL;
	if (!send_go(c))
	{
		snprintf(why, whylen, "pg_warp_gpud closed the connection");
		conn_release(c);
		return NULL;
	}
	s = palloc0(sizeof(GpudRowStream));
	s->c = c;
	s->nkeys = prog->nkeys;
	s->times = times;
	return s;
}

int
pgwarp_gpud_rows_next(GpudRowStream *s, GpudResult **out, char *why, size_t whylen)
{
	GpudConn   *c = s->c;
	GpudMsg		m;
	int			fd = -1;
	uint8	   *rbase;
	uint64		rsize;
	GpudResult *res;
	instr_time	t0,
				t1;

#define FAIL(...) do { snprintf(why, whylen, __VA_ARGS__); conn_release(c); return -1; } while (0)
	*out = NULL;
	if (c->sock < 0)
		FAIL("the connection to pg_warp_gpud is closed");
	INSTR_TIME_SET_CURRENT(t0);
	if (s->owe_next)
	{
		s->owe_next = false;
		if (!send_msg(c, GPUD_NEXT, 0))
			FAIL("pg_warp_gpud died while returning rows");
	}
	if (!recv_msg(c, &m, &fd))
		FAIL("pg_warp_gpud died while returning rows");
	lap(&t0, &t1, &s->times->wait_ms);
	if (m.type == GPUD_ROWS)
	{
		if (fd >= 0)
			close(fd);
		res = gpud_result_open(c->arena, c->arena_size, m.arg0, m.arg1, s->nkeys, 0);
		if (res == NULL)
			FAIL("pg_warp_gpud sent malformed rows");
		s->owe_next = true;
		*out = res;
		lap(&t0, &t1, &s->times->result_ms);
		return 1;
	}
	if (m.type == GPUD_FAIL)
	{
		if (fd >= 0)
			close(fd);
		m.text[sizeof(m.text) - 1] = '\0';
		FAIL("pg_warp_gpud could not run the query: %s", m.text);
	}
	if (!conn_take_done(c, &m, fd, &rbase, &rsize, why, whylen))
		return -1;
	res = gpud_result_open(rbase, rsize, m.arg0, m.arg1, s->nkeys, 0);
	if (res == NULL || res->ngroups != 0)
		FAIL("pg_warp_gpud sent a malformed result");
	conn_job_done(c);
	*out = res;
	lap(&t0, &t1, &s->times->result_ms);
	return 0;
#undef FAIL
}

/* ------------------------------------------------- GPU table cache */

/*
 * The connection cache requests go over, kept for the backend's life: a
 * writing transaction ships its row changes at every commit, and a
 * connection and an arena per commit would cost more than the request.
 * busy: a request started and not finished (an error or cancel left it),
 * so what the daemon sends next would be that request's: start afresh.
 */
static GpudConn cache_conn = {.sock = -1};
static bool cache_conn_busy;

static GpudCacheResp *
cache_request_once(GpudConn *c, GpudCacheReq *req, const uint8 *kinds, const void *data,
				   uint64 len, uint64 *resp_len, char *why, size_t whylen)
{
	GpudMsg		m;
	GpudBuf		b;
	uint64		off,
				need;
	uint8	   *rbase;
	uint64		rsize;
	GpudCacheResp *resp;

	memset(&b, 0, sizeof(b));
	b.pos = WARP_ARENA_JOB_OFF;
	gpud_buf_put(&b, NULL, sizeof(GpudCacheReq));
	if (kinds)
		gpud_buf_put(&b, NULL, req->ncols);
	gpud_buf_put(&b, NULL, len);
	need = b.pos - WARP_ARENA_JOB_OFF + 64 * 1024;
	if (c->sock < 0 && !conn_connect(c, why, whylen))
		return NULL;
	if (!conn_arena(c, GPUD_CACHE, need, why, whylen))
		return NULL;
	memset(&b, 0, sizeof(b));
	b.base = c->arena;
	b.pos = WARP_ARENA_JOB_OFF;
	off = gpud_buf_put(&b, NULL, sizeof(GpudCacheReq));
	if (kinds)
		req->off_kinds = gpud_buf_put(&b, kinds, req->ncols);
	req->off_data = gpud_buf_put(&b, data, len);
	req->len_data = len;
	req->total = b.pos - WARP_ARENA_JOB_OFF;
	memcpy(c->arena + off, req, sizeof(GpudCacheReq));
	if (!conn_finish(c, &rbase, &rsize, &m, why, whylen))
		return NULL;
	resp = gpud_at(rbase, rsize, m.arg0, sizeof(GpudCacheResp));
	if (resp == NULL || m.arg1 < sizeof(GpudCacheResp) || m.arg1 > rsize - m.arg0 ||
		resp->magic != GPUD_MAGIC)
	{
		snprintf(why, whylen, "pg_warp_gpud sent a malformed answer");
		conn_release(c);
		return NULL;
	}
	/* a copy, checked by the caller against resp_len */
	resp = (GpudCacheResp *) memcpy(palloc(m.arg1), resp, m.arg1);
	*resp_len = m.arg1;
	if (c->rarena)
	{
		munmap(c->rarena, c->rarena_size);
		c->rarena = NULL;
	}
	return resp;
}

GpudCacheResp *
pgwarp_gpud_cache_request(GpudCacheReq *req, const uint8 *kinds, const void *data,
						  uint64 len, uint64 *resp_len, char *why, size_t whylen)
{
	GpudCacheResp *resp;
	bool		kept;

	req->magic = GPUD_MAGIC;
	req->version = GPUD_VERSION;
	if (cache_conn_busy)
		conn_release(&cache_conn);
	kept = cache_conn.sock >= 0;
	cache_conn_busy = true;
	resp = cache_request_once(&cache_conn, req, kinds, data, len, resp_len, why, whylen);
	if (resp == NULL && kept)
	{
		/* the kept connection went stale (daemon restarted): a new one */
		conn_release(&cache_conn);
		resp = cache_request_once(&cache_conn, req, kinds, data, len, resp_len, why, whylen);
	}
	cache_conn_busy = false;
	return resp;
}
