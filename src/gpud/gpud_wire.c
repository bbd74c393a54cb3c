/*-------------------------------------------------------------------------
 *
 * gpud_wire.c
 *	  Writing a job into the shared arena (backend) and checking one read
 *	  from it (daemon); socket messages with a file descriptor passed
 *	  along (both), and the daemon's blocking send and receive; checking a
 *	  result (backend).  See gpud_wire.h.
 *
 * Pure C; no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "gpud_wire.h"

uint64_t
gpud_buf_put(GpudBuf *b, const void *data, uint64_t len)
{
	uint64_t	off = (b->pos + 15) & ~(uint64_t) 15;

	if (b->base && data && len > 0)
		memcpy(b->base + off, data, len);
	b->pos = off + len;
	return off;
}

void
gpud_put_program(GpudBuf *b, GpudJob *job, const WarpProgram *prog)
{
	job->prog = *prog;
	job->prog.cols = NULL;
	job->prog.nodes = NULL;
	job->prog.args = NULL;
	job->prog.quals = NULL;
	job->prog.joins = NULL;
	job->prog.keys = NULL;
	job->prog.aggs = NULL;
	job->prog.strings = NULL;
	job->prog.strbytes = NULL;
	job->prog.setvals = NULL;
	job->prog.tz.at = NULL;
	job->prog.tz.off = NULL;
	job->off_tz_at = gpud_buf_put(b, prog->tz.at, sizeof(warp_int64) * prog->tz.n);
	job->off_tz_off = gpud_buf_put(b, prog->tz.off, sizeof(warp_int32) * prog->tz.n);
	job->off_strings = gpud_buf_put(b, prog->strings, sizeof(WarpString) * prog->nstrings);
	job->off_strbytes = gpud_buf_put(b, prog->strbytes, prog->nstrbytes);
	job->off_setvals = gpud_buf_put(b, prog->setvals, sizeof(warp_int64) * prog->nsetvals);
	job->off_cols = gpud_buf_put(b, prog->cols, sizeof(WarpColumnSpec) * prog->ncols);
	job->off_nodes = gpud_buf_put(b, prog->nodes, sizeof(WarpNode) * prog->nnodes);
	job->off_args = gpud_buf_put(b, prog->args, sizeof(warp_int32) * prog->nargs);
	job->off_quals = gpud_buf_put(b, prog->quals, sizeof(warp_int32) * prog->nquals);
	job->off_joins = gpud_buf_put(b, prog->joins, sizeof(WarpJoinSpec) * prog->njoins);
	job->off_keys = gpud_buf_put(b, prog->keys, sizeof(WarpGroupKey) * prog->nkeys);
	job->off_aggs = gpud_buf_put(b, prog->aggs, sizeof(WarpAggSpec) * prog->naggs);
}

void *
gpud_at(uint8_t *arena, uint64_t arena_size, uint64_t off, uint64_t len)
{
	if (off > arena_size || len > arena_size - off)
		return NULL;
	return arena + off;
}

/* an array of n elements of size sz at off, or NULL when n is negative or
 * the array does not fit */
static void *
array_at(uint8_t *arena, uint64_t size, uint64_t off, int64_t n, uint64_t sz)
{
	if (n < 0 || (uint64_t) n > size / (sz ? sz : 1))
		return NULL;
	return gpud_at(arena, size, off, (uint64_t) n * sz);
}

const char *
gpud_job_open(uint8_t *arena, uint64_t arena_size, uint64_t job_off,
			  GpudJob **job_out, WarpProgram *prog)
{
	GpudJob    *job = gpud_at(arena, arena_size, job_off, sizeof(GpudJob));
	const char *bad;
	int			i;

	if (job == NULL)
		return "job header outside the arena";
	if (job->magic != GPUD_MAGIC || job->version != GPUD_VERSION)
		return "job has a wrong magic number or version";
	*prog = job->prog;
	if (prog->version != WARP_PROGRAM_VERSION)
		return "program format version mismatch";
#define ARR(field, off, n, type) \
	do { \
		if ((n) == 0) \
			prog->field = NULL; \
		else if ((prog->field = array_at(arena, arena_size, job->off, (n), sizeof(type))) == NULL) \
			return "program array " #field " outside the arena"; \
	} while (0)
	ARR(cols, off_cols, prog->ncols, WarpColumnSpec);
	ARR(nodes, off_nodes, prog->nnodes, WarpNode);
	ARR(args, off_args, prog->nargs, warp_int32);
	ARR(quals, off_quals, prog->nquals, warp_int32);
	ARR(joins, off_joins, prog->njoins, WarpJoinSpec);
	ARR(keys, off_keys, prog->nkeys, WarpGroupKey);
	ARR(aggs, off_aggs, prog->naggs, WarpAggSpec);
	ARR(strings, off_strings, prog->nstrings, WarpString);
	ARR(strbytes, off_strbytes, prog->nstrbytes, warp_uint8);
	ARR(setvals, off_setvals, prog->nsetvals, warp_int64);
	ARR(tz.at, off_tz_at, prog->tz.n, warp_int64);
	ARR(tz.off, off_tz_off, prog->tz.n, warp_int32);
#undef ARR
	if ((bad = warp_program_validate(prog)) != NULL)
		return bad;
	for (i = 0; i < prog->ncols; i++)
		if (prog->cols[i].text == WARP_TEXT_KEY)
			return "text group keys are computed in the backend only";	/* ids, not strings, would go back */
	if (job->nfiles < 0 ||
		array_at(arena, arena_size, job->off_files, job->nfiles, sizeof(GpudFile)) == NULL)
		return "file list outside the arena";
	if (prog->njoins > 0 &&
		array_at(arena, arena_size, job->off_tables, prog->njoins, sizeof(GpudTable)) == NULL)
		return "join tables outside the arena";
	for (i = 0; i < prog->njoins; i++)
	{
		GpudTable  *t = (GpudTable *) (arena + job->off_tables) + i;

		if (array_at(arena, arena_size, t->off_keys, t->nrows, sizeof(int64_t)) == NULL ||
			array_at(arena, arena_size, t->off_payload, t->nrows, sizeof(int32_t)) == NULL ||
			t->npayloads < 1)
			return "join table outside the arena";
	}
	for (i = 0; i < job->nfiles; i++)
	{
		GpudFile   *f = (GpudFile *) (arena + job->off_files) + i;
		const char *path = gpud_at(arena, arena_size, f->off_path, 1);

		if (path == NULL || memchr(path, 0, arena_size - f->off_path) == NULL)
			return "file path outside the arena";
		if (array_at(arena, arena_size, f->off_batches, f->nbatches, sizeof(int32_t)) == NULL ||
			array_at(arena, arena_size, f->off_fields, prog->ncols, sizeof(int32_t)) == NULL)
			return "file batch list outside the arena";
	}
	if (job->cached)
	{
		if (job->nfiles != 0 ||
			array_at(arena, arena_size, job->off_cache_classes, job->cache_nclasses, 1) == NULL ||
			array_at(arena, arena_size, job->off_cache_cols, prog->ncols, sizeof(int32_t)) == NULL)
			return "GPU table cache classes outside the arena";
		for (i = 0; i < prog->ncols; i++)
			if (!prog->cols[i].native || prog->cols[i].text)
				return "a cached table's columns are engine values";
	}
	*job_out = job;
	return NULL;
}

/* ------------------------------------------------------ socket messages */

void
gpud_msg_init(GpudMsg *m, uint32_t type, uint64_t a0, uint64_t a1)
{
	memset(m, 0, sizeof(*m));
	m->magic = GPUD_MAGIC;
	m->type = type;
	m->arg0 = a0;
	m->arg1 = a1;
}

void
gpud_sockmsg_init(GpudSockMsg *s, void *data, size_t len)
{
	memset(&s->mh, 0, sizeof(s->mh));
	s->iov.iov_base = data;
	s->iov.iov_len = len;
	s->mh.msg_iov = &s->iov;
	s->mh.msg_iovlen = 1;
}

void
gpud_sockmsg_put_fd(GpudSockMsg *s, int fd)
{
	struct cmsghdr *c;

	memset(&s->cm, 0, sizeof(s->cm));
	s->mh.msg_control = s->cm.buf;
	s->mh.msg_controllen = sizeof(s->cm.buf);
	c = CMSG_FIRSTHDR(&s->mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
}

void
gpud_sockmsg_want_fd(GpudSockMsg *s)
{
	s->mh.msg_control = s->cm.buf;
	s->mh.msg_controllen = sizeof(s->cm.buf);
}

int
gpud_sockmsg_fd(GpudSockMsg *s)
{
	struct cmsghdr *h = CMSG_FIRSTHDR(&s->mh);
	int			fd;

	if (h && h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS)
	{
		memcpy(&fd, CMSG_DATA(h), sizeof(int));
		return fd;
	}
	return -1;
}

int
gpud_send_msg(int sock, uint32_t type, uint64_t a0, uint64_t a1, const char *text, int fd)
{
	GpudMsg		m;
	GpudSockMsg sm;

	gpud_msg_init(&m, type, a0, a1);
	if (text)
	{
		strncpy(m.text, text, sizeof(m.text) - 1);
		m.text[sizeof(m.text) - 1] = '\0';
	}
	gpud_sockmsg_init(&sm, &m, sizeof(m));
	if (fd >= 0)
		gpud_sockmsg_put_fd(&sm, fd);
	for (;;)
	{
		ssize_t		n = sendmsg(sock, &sm.mh, MSG_NOSIGNAL);

		if (n == (ssize_t) sizeof(m))
			return 0;
		if (n < 0 && errno == EINTR)
			continue;
		return -1;				/* a short write of 128 bytes: peer gone */
	}
}

int
gpud_recv_msg(int sock, GpudMsg *m)
{
	size_t		got = 0;

	while (got < sizeof(*m))
	{
		ssize_t		n = recv(sock, (char *) m + got, sizeof(*m) - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += n;
	}
	return m->magic == GPUD_MAGIC ? 0 : -1;
}

GpudResult *
gpud_result_open(uint8_t *arena, uint64_t size, uint64_t off, uint64_t len, int nkeys,
				 int naggs)
{
	GpudResult *res = gpud_at(arena, size, off, sizeof(GpudResult));
	uint8_t    *r0 = (uint8_t *) res;
	uint64_t	ng;

	if (res == NULL || len < sizeof(GpudResult) || len > size - off ||
		res->magic != GPUD_MAGIC || res->ngroups < 0 ||
		res->nkeys != nkeys || res->naggs != naggs)
		return NULL;
	ng = (uint64_t) res->ngroups;
	/* (rows without keys take no bytes: any count is valid) */
	if ((nkeys > 0 || naggs > 0) && ng > len)
		return NULL;
	if (array_at(r0, len, res->off_keys, (int64_t) (ng * nkeys), sizeof(int64_t)) == NULL ||
		array_at(r0, len, res->off_nulls, (int64_t) (ng * nkeys), 1) == NULL ||
		array_at(r0, len, res->off_states, (int64_t) (ng * naggs), sizeof(WarpAggState)) == NULL)
		return NULL;
	return res;
}
