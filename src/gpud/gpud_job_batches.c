/*-------------------------------------------------------------------------
 *
 * gpud_job_batches.c
 *	  Reading a part's batches and running its driver over them, inside
 *	  pg_warp_gpud (see gpud_job.c for how a job runs).
 *
 * A part (gpud_job_internal.h) reads the listed batches of every file it
 * takes, in order: on the GPU, a batch whose column buffers lie in the
 * file's registered windows (gpud_files.h: the part registers the buffers
 * of its batches when it opens the file, as far as the budget goes) is
 * read in place; any other batch is read by pread into the lane's pinned
 * staging memory, its plain columns through the column cache
 * (gpud_decoded.h: buffers the cache holds are not read at all, the others
 * fill it); a file with compressed bodies is loaded ahead by helper
 * threads (gpud_prefetch.h).
 * Each batch goes to run_loaded, the part's driver.  Between batches the
 * part looks at the cancel word, the socket and the other parts.
 *
 * Pure C (no PostgreSQL).
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpud_clock.h"
#include "gpud_decoded.h"
#include "gpud_files.h"
#include "gpud_job_internal.h"
#include "gpud_pinpool.h"
#include "gpud_prefetch.h"
#include "gpud_turns.h"

/* ------------------------------------------------------------ memory */

/* batch buffers from the staging memory (Staging, gpud_job_internal.h) */
void *
staging_alloc(void *ctx, size_t size)
{
	Staging    *s = ctx;
	size_t		off = (s->used + 63) & ~(size_t) 63;

	if (s->base && off <= s->size && size <= s->size - off)
	{
		s->used = off + size;
		return s->base + off;
	}
	return malloc(size);
}

void
staging_free(void *ctx, void *p)
{
	Staging    *s = ctx;

	if (s->base && (uint8_t *) p >= s->base && (uint8_t *) p < s->base + s->size)
		return;
	free(p);
}

/* ------------------------------------------------------------ reading */

typedef struct CountingSource
{
	int			(*inner_read) (void *ctx, void *dst, size_t len, uint64_t off);
	void	   *inner_ctx;
	int64_t    *bytes;
	double	   *ms;
	pthread_mutex_t lock;		/* prefetch threads read at the same time */
} CountingSource;

static int
counting_read(void *ctx, void *dst, size_t len, uint64_t off)
{
	CountingSource *cs = ctx;
	double		t0 = gpud_now_ms();
	int			rc = cs->inner_read(cs->inner_ctx, dst, len, off);

	pthread_mutex_lock(&cs->lock);
	if (rc == 0)
		*cs->bytes += (int64_t) len;
	*cs->ms += gpud_now_ms() - t0;
	pthread_mutex_unlock(&cs->lock);
	return rc;
}

/* has the backend cancelled, or gone away? */
bool
should_stop(GpudArenaHeader *h, int sock)
{
	struct pollfd p;

	if (h->cancel)
		return true;
	p.fd = sock;
	p.events = POLLIN | POLLRDHUP;
	p.revents = 0;
	/* the backend sends nothing while a job runs: anything readable is
	 * end of file or a protocol violation, either way stop */
	return poll(&p, 1, 0) > 0;
}

/* ------------------------------------------------------------ running */

/*
 * Does part p run the i-th listed batch of file fi?  The CPU driver takes
 * them all, but in row mode not those whose rows a GPU part already sent
 * before it gave up (from resume_at on, in the listed order).
 */
static bool
part_takes(const Part *p, int fi, int i)
{
	const Run  *r = p->run;

	if (p->lane == NULL)
		return r->resume_at == 0 || r->file_first[fi] + i >= r->resume_at;
	return r->lane_of[r->file_first[fi] + i] == p->lane_index;
}

static bool
other_part_stopped(Part *p)
{
	return p->lane != NULL && p->run->nparts > 1 &&
		__atomic_load_n(&p->run->stop, __ATOMIC_RELAXED) != 0;
}

/*
 * Run part p's driver over one loaded batch: 0, 1 when a row failed (the
 * CPU driver's error in p->res), -1 when the GPU driver gave up
 * (p->fallback says why), -2 when the backend stopped reading rows.  In
 * row mode without a Top-N the CPU driver's rows of the batch (those
 * before a failing row included, as the backend's own driver returns
 * them) are streamed to the backend now, and the driver forgets them.
 */
static int
run_loaded(Part *p, const ArrowArray *cols, int64_t nrows, const WarpGpuFile *gfile)
{
	Run		   *r = p->run;
	WarpLoadStatus ls = WARP_LOAD_OK;
	int			bad_col = 0;
	warp_int64	bad_row = 0;
	WarpStatus	st;

	p->res.batches++;
	if (p->lane != NULL)
	{
		/* row mode: the batch's rows to the host (streamed once the turn
		 * is left, part_send_rows) */
		if (warp_gpu_run_batch(p->drv, cols, nrows, gfile, p->fallback,
							   sizeof(p->fallback)) != 0 ||
			(r->prog.emit_rows &&
			 warp_gpu_take_rows(p->drv, p->fallback, sizeof(p->fallback)) != 0))
			return -1;
		return 0;
	}
	st = warp_cpu_run_batch(r->cpu, cols, nrows, NULL, &ls, &bad_col, &bad_row);
	if (r->prog.emit_rows && r->prog.topn_limit == 0)
	{
		GpudRowSource src;

		gpud_rows_of_cpu(r->cpu, &src);
		if (gpud_rows_send(r, &src) != 0)
			return -2;
		warp_cpu_reset_groups(r->cpu);
	}
	if (st != WARP_OK)
	{
		p->res.status = st;
		return 1;
	}
	if (ls != WARP_LOAD_OK)
	{
		p->res.load_status = ls;
		p->res.bad_col = bad_col;
		p->res.bad_row = bad_row;
		return 1;
	}
	return 0;
}

/* decompressed bytes all jobs' parts may hold ahead (start_prefetch) */
static uint64_t ahead_reserved;

/* give back what start_prefetch reserved */
static void
release_ahead(uint64_t *reserved)
{
	if (*reserved > 0)
		__atomic_sub_fetch(&ahead_reserved, *reserved, __ATOMIC_RELAXED);
	*reserved = 0;
}

/*
 * Pin lane's memory for batches decompressed ahead (gpud_job.h).  At start:
 * pinning 256 MB takes about 100 ms and holds up the CUDA calls of every
 * other thread meanwhile (measured on an H100: made at a lane's first
 * compressed query, even on a thread of its own, it added 80-100 ms to
 * the queries running then).
 */
void
gpud_lane_pin_ahead(GpudLane *lane)
{
	void	   *mem = warp_gpu_host_alloc(GPUD_PREFETCH_BYTES);
	GpudPinPool *pool = mem ? malloc(sizeof(GpudPinPool)) : NULL;

	if (pool && gpud_pinpool_init(pool, mem, GPUD_PREFETCH_BYTES))
		lane->ahead = pool;
	else
	{
		free(pool);
		warp_gpu_host_free(mem);
	}
}

/*
 * For a file with compressed bodies: start loading part p's batches of file
 * fi ahead on helper threads (gpud_prefetch.h), so that their decompression
 * runs in parallel and outside the part's GPU turns.  *ahead receives the
 * batch numbers it loads: p's, in order, up to the first the file does not
 * have (the serial path reports that one).  NULL when the file is not
 * compressed, a field read is dictionary-encoded, p has fewer than two
 * batches there (one is enough with a hook, which may spare decompressing
 * it), or on any failure: the part then reads serially.  hook (NULL: none)
 * loads the columns (gpud_prefetch.h).
 * *reserved receives what it took of the daemon's GPUD_PREFETCH_TOTAL.
 */
static GpudPrefetch *
start_prefetch(Part *p, ArrowFile *file, int fi, int mine, const GpudLoadHook *hook,
			   int32_t **ahead, int *nahead, uint64_t *reserved)
{
	Run		   *r = p->run;
	GpudFile   *f = (GpudFile *) (r->arena + r->job->off_files) + fi;
	const int32_t *batches = (const int32_t *) (r->arena + f->off_batches);
	const int32_t *fields = (const int32_t *) (r->arena + f->off_fields);
	ArrowArena	scratch;
	ArrowBatchMeta meta;
	ArrowError	e;
	GpudPrefetch *pre;
	GpudPinPool *pool;
	int32_t    *list;
	int			n = 0;
	int			i;
	int			parts;
	int			nthreads;
	int			depth;
	int64_t		meta_rows = 0;
	uint64_t	row_bytes = 0;
	uint64_t	batch_bytes;
	uint64_t	taken;
	bool		want;
	/* one batch is worth it only when the hook may spare decompressing it */
	int			least = hook ? 1 : 2;

	*ahead = NULL;
	*reserved = 0;
	*nahead = 0;
#ifdef GPUD_NO_PREFETCH
	/* a build for A/B measurements (scripts/bench_gpu_ab.sh) */
	return NULL;
#endif
	if (mine < least || (list = malloc(sizeof(int32_t) * mine)) == NULL)
		return NULL;
	for (i = 0; i < f->nbatches && n < mine; i++)
	{
		if (!part_takes(p, fi, i))
			continue;
		if (batches[i] < 0 || batches[i] >= file->n_batches)
			break;
		list[n++] = batches[i];
	}
	want = n >= least;
	if (want)
	{
		arrow_arena_init(&scratch, &r->heap_alloc);
		want = arrow_read_batch_meta(file, list[0], &scratch, &meta, &e) == 0 &&
			gpud_prefetch_wanted(file, &meta, fields, r->prog.ncols);
		if (want)
			meta_rows = meta.length;
		arrow_arena_free_all(&scratch);
	}
	if (!want)
	{
		free(list);
		return NULL;
	}
	/* decompressed bytes of a batch: rows times the fields' widths */
	for (i = 0; i < r->prog.ncols; i++)
	{
		int			w = arrow_type_byte_width(&file->schema.fields[fields[i]].type);

		row_bytes += w > 0 ? w : 16;
	}
	batch_bytes = (uint64_t) (meta_rows > 0 ? meta_rows : 1) * row_bytes;
	parts = r->use_gpu && r->nparts > 0 ? r->nparts : 1;
	taken = __atomic_load_n(&ahead_reserved, __ATOMIC_RELAXED);
	gpud_prefetch_shape(sysconf(_SC_NPROCESSORS_ONLN), parts, batch_bytes,
						taken < GPUD_PREFETCH_TOTAL ? GPUD_PREFETCH_TOTAL - taken : 0,
						&nthreads, &depth);
	/* (two batches a part are always allowed: the total may be exceeded
	 * by that much) */
	*reserved = (uint64_t) depth * batch_bytes;
	__atomic_add_fetch(&ahead_reserved, *reserved, __ATOMIC_RELAXED);
	/* for the GPU, into the lane's pinned memory: copied at link speed */
	pool = p->lane ? p->lane->ahead : NULL;
	pre = gpud_prefetch_start(file, list, n, fields, r->prog.ncols,
							  pool ? &pool->alloc : &r->heap_alloc, hook, nthreads, depth);
	if (pre == NULL)
	{
		release_ahead(reserved);
		free(list);
		return NULL;
	}
	*ahead = list;
	*nahead = n;
	return pre;
}

/*
 * One file of a part's job while the part runs its batches: the open file
 * and how it is read (its registered window, or pread through a counting
 * source), the batch the GPU may still read, and the batches loaded ahead.
 */
typedef struct PartFile
{
	int			fi;				/* of the job's files */
	GpudFile   *f;
	const char *path;
	const int32_t *batches;
	const int32_t *fields;
	ArrowSource src;
	ArrowFile	file;
	CountingSource cs;
	struct stat st;
	int			fd;
	GpudWindow *win;			/* the mapping and registered windows */
	const uint8_t *wbase;
	uint64_t	readable;
	uint64_t	registered;		/* bytes of the windows the part holds */
	ArrowArena	prev;			/* the batch the GPU may still read */
	WarpGpuFile gfile;
	bool		have_prev;
	int			mine;			/* batches of the file the part takes */
	GpudPrefetch *pre;			/* compressed: batches loaded ahead */
	int32_t    *ahead;			/* the batches it loads, in order */
	int			nahead;
	uint64_t	ahead_bytes;	/* reserved of the daemon's total */
	int			taken;
	GpudLoaded *prev_l;			/* the loaded batch the GPU may still read */
	GpudDecodedSource dsrc;		/* compressed: columns the cache holds */
	GpudLoadHook hook;
	bool		use_decoded;
} PartFile;

/*
 * Append to *r the byte ranges of the buffers of the program's fields in
 * batch meta (of pf's file), when it is not compressed (compressed
 * buffers are decompressed, never read in place).  false when out of
 * memory.
 */
static bool
batch_ranges(const PartFile *pf, int ncols, const ArrowBatchMeta *meta,
			 GpudRange **r, int *n, int *cap)
{
	int			c,
				k;

	if (meta->codec != ARROW_CODEC_NONE)
		return true;
	for (c = 0; c < ncols; c++)
	{
		const ArrowField *fld;

		if (pf->fields[c] < 0 || pf->fields[c] >= pf->file.schema.n_fields)
			continue;			/* the serial read reports it */
		fld = &pf->file.schema.fields[pf->fields[c]];
		for (k = fld->buffer_index;
			 k >= 0 && k < fld->buffer_index + fld->n_buffers_total && k < meta->n_buffers; k++)
		{
			if (meta->buffers[k].length <= 0)
				continue;
			if (*n == *cap)
			{
				int			ncap = *cap ? *cap * 2 : 256;
				GpudRange  *nr = realloc(*r, sizeof(GpudRange) * ncap);

				if (nr == NULL)
					return false;
				*r = nr;
				*cap = ncap;
			}
			(*r)[*n].off = (uint64_t) meta->buffers[k].offset;
			(*r)[*n].len = (uint64_t) meta->buffers[k].length;
			(*n)++;
		}
	}
	return true;
}

/*
 * Register the column buffers of the batches part p reads of file pf
 * (coalesced into units, within the budget: gpud_files.h), so that they
 * are read in place and DMA'd at link speed.  Returns the bytes of the
 * windows the part holds.  A batch whose metadata cannot be read stops
 * the collection; the serial read reports its error.
 */
static uint64_t
register_part_batches(Part *p, PartFile *pf)
{
	Run		   *r = p->run;
	GpudRange  *ranges = NULL;
	int			n = 0,
				cap = 0,
				i;
	uint64_t	bytes = 0;

	for (i = 0; i < pf->f->nbatches; i++)
	{
		int			b = pf->batches[i];
		ArrowArena	scratch;
		ArrowBatchMeta meta;
		ArrowError	e;
		bool		ok;

		if (!part_takes(p, pf->fi, i))
			continue;
		if (b < 0 || b >= pf->file.n_batches)
			break;
		arrow_arena_init(&scratch, &r->heap_alloc);
		ok = arrow_read_batch_meta(&pf->file, b, &scratch, &meta, &e) == 0 &&
			batch_ranges(pf, r->prog.ncols, &meta, &ranges, &n, &cap);
		arrow_arena_free_all(&scratch);
		if (!ok)
			break;
	}
	if (n > 0)
		bytes = gpud_window_cover(pf->win, ranges, n);
	free(ranges);
	return bytes;
}

/*
 * Is batch b of pf read in place: does a window the part holds contain
 * every buffer of the program's fields?  (Never for a compressed batch.)
 */
static bool
batch_in_windows(Part *p, PartFile *pf, int b)
{
	Run		   *r = p->run;
	GpudRange  *ranges = NULL;
	int			n = 0,
				cap = 0,
				i;
	ArrowArena	scratch;
	ArrowBatchMeta meta;
	ArrowError	e;
	bool		in;

	if (pf->win == NULL || pf->registered == 0)
		return false;
	arrow_arena_init(&scratch, &r->heap_alloc);
	in = arrow_read_batch_meta(&pf->file, b, &scratch, &meta, &e) == 0 &&
		meta.codec == ARROW_CODEC_NONE &&
		batch_ranges(pf, r->prog.ncols, &meta, &ranges, &n, &cap);
	for (i = 0; in && i < n; i++)
		in = gpud_window_covers(pf->win, ranges[i].off, ranges[i].len);
	arrow_arena_free_all(&scratch);
	free(ranges);
	return in;
}

/*
 * Open file pf for part p: check it is the file the backend planned with,
 * read it through its window (GPU) or by pread, and open it as an Arrow
 * file.  false (the error in p->res) when that fails.
 */
static bool
open_part_file(Part *p, PartFile *pf)
{
	Run		   *r = p->run;
	bool		on_gpu = p->lane != NULL;
	GpudFile   *f = pf->f;
	const char *path = pf->path;
	ArrowError *err = &p->res.arrow_error;
	ArrowOpenOptions opts = {0};

	pf->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (pf->fd < 0)
	{
		arrow_error(err, ARROW_ERR_IO, -1, "could not open Arrow file \"%s\": %s",
					path, strerror(errno));
		err->errno_saved = errno;
		p->res.has_arrow_error = 1;
		return false;
	}
	/* the file the backend planned with: a writable table's file may
	 * only have grown past its committed length, any other must be
	 * unchanged */
	if (fstat(pf->fd, &pf->st) != 0 || (uint64_t) pf->st.st_dev != f->dev ||
		(uint64_t) pf->st.st_ino != f->ino ||
		(f->limit >= 0 ? pf->st.st_size < f->limit :
		 (pf->st.st_size != f->size || pf->st.st_mtim.tv_sec != f->mtime_sec ||
		  pf->st.st_mtim.tv_nsec != f->mtime_nsec)))
	{
		arrow_error(err, ARROW_ERR_IO, -1,
					"Arrow file \"%s\" was replaced or changed while the query ran", path);
		err->errno_saved = ESTALE;
		p->res.has_arrow_error = 1;
		close(pf->fd);
		return false;
	}
	/*
	 * For the GPU, the file's registered window: column buffers are
	 * used in place and DMA'd from the page cache.  Otherwise (or when
	 * no window can be made) pread into staging memory.
	 */
	pf->readable = (uint64_t) pf->st.st_size;
	if (f->limit >= 0 && (uint64_t) f->limit < pf->readable)
		pf->readable = (uint64_t) f->limit;
	if (on_gpu)
		pf->win = gpud_window_open(pf->fd, &pf->st, pf->readable, &pf->wbase);
	/* the column cache knows this file by its identity */
	memset(&pf->gfile, 0, sizeof(pf->gfile));
	pf->gfile.id.dev = (uint64_t) pf->st.st_dev;
	pf->gfile.id.ino = (uint64_t) pf->st.st_ino;
	pf->gfile.id.size = (uint64_t) pf->st.st_size;
	pf->gfile.id.mtime_sec = (int64_t) pf->st.st_mtim.tv_sec;
	pf->gfile.id.mtime_nsec = (int64_t) pf->st.st_mtim.tv_nsec;
	/* batches read by pread or decompressed: the GPU's cache may hold
	 * their plain columns */
	pf->use_decoded = on_gpu && r->job->use_cache && p->lane->cache != NULL;
	pf->dsrc.cache = pf->use_decoded ? p->lane->cache : NULL;
	pf->dsrc.id = pf->gfile.id;
	pf->dsrc.raw = true;
	if (arrow_source_fd(&pf->src, pf->fd, path, f->limit, err) != 0)
	{
		p->res.has_arrow_error = 1;
		gpud_window_release(pf->win);
		close(pf->fd);
		return false;
	}
	pf->cs.inner_read = pf->src.read;
	pf->cs.inner_ctx = pf->src.ctx;
	pf->cs.bytes = &p->res.bytes_read;
	pf->cs.ms = &p->res.read_ms;
	pf->src.read = counting_read;
	pf->src.ctx = &pf->cs;
	if (pf->win)
	{
		/* metadata and windowed buffers come from the mapping */
		pf->src.map = pf->wbase;
		pf->gfile.base = pf->wbase;
		pf->gfile.len = pf->readable;
	}
	opts.recover_tail = f->recover_tail != 0;
	if (arrow_open(&pf->file, &pf->src, &opts, err) != 0)
	{
		p->res.has_arrow_error = 1;
		gpud_window_release(pf->win);
		close(pf->fd);
		return false;
	}
	if (pf->win)
	{
		pf->registered = register_part_batches(p, pf);
		if (pf->registered > 0)
			p->res.windows++;
		p->res.bytes_registered += (int64_t) pf->registered;
	}
	return true;
}

/*
 * Before batch b: 0 to run it; -2 when cancelled, -1 when another part
 * gave up, 1 when the file has no such batch (the error in p->res).
 */
static int
batch_check(Part *p, PartFile *pf, int b)
{
	Run		   *r = p->run;
	ArrowError *err = &p->res.arrow_error;

	if (should_stop(r->hdr, r->sock))
		return -2;
	if (other_part_stopped(p))
	{
		p->stopped = true;
		return -1;
	}
	if (b < 0 || b >= pf->file.n_batches)
	{
		arrow_error(err, ARROW_ERR_CORRUPT, -1,
					"Arrow file \"%s\" has no record batch %d", pf->path, b);
		p->res.has_arrow_error = 1;
		return 1;
	}
	return 0;
}

/*
 * Run the next batch loaded ahead (into the lane's pinned memory or
 * malloc'd memory, kept until the next batch is queued, as a window's;
 * columns the GPU's cache holds decompressed are not loaded at all): wait
 * for it outside the turn, so decompression never holds the device.  *rc
 * as run_loaded's; false when its load failed (the error in p->res, the
 * turn left).
 */
static bool
run_ahead_batch(Part *p, PartFile *pf, bool turn, int *rc)
{
	Run		   *r = p->run;
	bool		on_gpu = p->lane != NULL;
	ArrowError *err = &p->res.arrow_error;
	GpudLoaded *l = gpud_prefetch_take(pf->pre, pf->taken++);

	p->res.batches_ahead++;
	if (turn)
		gpud_turn_enter(&p->lane->turns);
	if (l->status != 0)
	{
		*err = l->err;
		p->res.has_arrow_error = 1;
		if (turn)
			gpud_turn_leave(&p->lane->turns);
		return false;
	}
	pf->gfile.decoded = l->state;
	*rc = run_loaded(p, l->cols, l->meta.length,
					 r->job->use_cache && (pf->win || l->state) ? &pf->gfile : NULL);
	pf->gfile.decoded = NULL;
	if (pf->prev_l)
		gpud_prefetch_release(pf->pre, pf->prev_l);
	pf->prev_l = NULL;
	if (on_gpu)
		pf->prev_l = l;
	else
		gpud_prefetch_release(pf->pre, l);
	return true;
}

/*
 * Read batch b (in place from the file's windows, or into staging memory)
 * and run it.  *rc as run_loaded's; false when reading it failed (the
 * error in p->res, the turn left).
 */
static bool
run_read_batch(Part *p, PartFile *pf, int b, ArrowArray *cols, bool turn, int *rc)
{
	Run		   *r = p->run;
	bool		on_gpu = p->lane != NULL;
	ArrowError *err = &p->res.arrow_error;
	ArrowArena	arena;
	ArrowBatchMeta meta;
	WarpGpuFile gfile = pf->gfile;
	void	   *dstate = NULL;	/* pread through the column cache */
	/* (batches loaded ahead share the file's source with their threads:
	 * a file with them keeps reading from its mapping, as before) */
	bool		in_place = on_gpu && pf->win != NULL &&
		(pf->pre != NULL || batch_in_windows(p, pf, b));
	bool		via_cache = on_gpu && !in_place && pf->use_decoded;
	int			c;
	bool		failed = false;

	/* a GPU job holds the device for one batch at a time */
	if (turn)
		gpud_turn_enter(&p->lane->turns);
	p->staging.used = 0;
	if (pf->pre == NULL)
		pf->file.src.map = in_place ? pf->wbase : NULL;
	arrow_arena_init(&arena, in_place ? &r->heap_alloc : &p->batch_alloc);
	if (arrow_read_batch_meta(&pf->file, b, &arena, &meta, err) != 0)
		failed = true;
	for (c = 0; !failed && c < r->prog.ncols; c++)
	{
		if (pf->fields[c] < 0 || pf->fields[c] >= pf->file.schema.n_fields)
		{
			arrow_error(err, ARROW_ERR_INVALID, -1,
						"Arrow file \"%s\" has no field %d", pf->path, pf->fields[c]);
			failed = true;
		}
		else if (via_cache ?
				 gpud_decoded_load(&pf->dsrc, &pf->file, b, &meta, pf->fields[c], &arena,
								   &cols[c], &dstate, err) != 0 :
				 arrow_load_column(&pf->file, b, &meta, pf->fields[c], &arena, &cols[c],
								   err) != 0)
			failed = true;
	}
	if (pf->pre == NULL)
		pf->file.src.map = pf->wbase;
	if (failed)
	{
		p->res.has_arrow_error = 1;
		gpud_decoded_done(&pf->dsrc, dstate);
		arrow_arena_free_all(&arena);
		if (turn)
			gpud_turn_leave(&p->lane->turns);
		return false;
	}
	if (on_gpu)
	{
		if (!in_place)
		{
			gfile.base = NULL;
			gfile.len = 0;
			gfile.decoded = dstate;
		}
		*rc = run_loaded(p, cols, meta.length,
						 r->job->use_cache && (in_place || dstate) ? &gfile : NULL);
		if (*rc == 0 && !in_place &&
			warp_gpu_wait(p->drv, p->fallback, sizeof(p->fallback)) != 0)
			*rc = -1;			/* staging memory is free again only now */
		if (!in_place)
		{
			/* (a failed run: the device reads nothing of it any more
			 * once the driver is waited for or destroyed, and the job
			 * falls back; the entries' own references stay with it) */
			gpud_decoded_done(&pf->dsrc, dstate);
		}
		/* the batch before this one is done with its memory */
		if (pf->have_prev)
			arrow_arena_free_all(&pf->prev);
		pf->have_prev = false;
		if (in_place)
		{
			pf->prev = arena;
			pf->have_prev = true;
		}
		else
			arrow_arena_free_all(&arena);
	}
	else
	{
		*rc = run_loaded(p, cols, meta.length, NULL);
		arrow_arena_free_all(&arena);
	}
	return true;
}

/*
 * Row mode on a GPU part, without a Top-N: the rows of the listed batch i
 * of file fi, on the host since warp_gpu_take_rows, streamed to the
 * backend (outside the GPU turn: the backend reads at its own pace) and
 * forgotten; the CPU driver takes over after it if the GPU gives up
 * later.  0, or -2 when the backend stopped reading.
 */
static int
part_send_rows(Part *p, int fi, int i)
{
	Run		   *r = p->run;
	GpudRowSource src;

	gpud_rows_of_gpu(p->drv, &src);
	if (gpud_rows_send(r, &src) != 0)
		return -2;
	warp_gpu_forget_rows(p->drv);
	r->resume_at = r->file_first[fi] + i + 1;
	return 0;
}

/*
 * Run the batches of open file pf that part p takes, in the listed order:
 * 0, or what stopped them (run_batches' codes, 1: an error in p->res).
 */
static int
run_file_batches(Part *p, PartFile *pf, ArrowArray *cols)
{
	Run		   *r = p->run;
	bool		on_gpu = p->lane != NULL;
	int			rc = 0;
	int			i;

	pf->pre = start_prefetch(p, &pf->file, pf->fi, pf->mine,
							 pf->use_decoded ? &pf->hook : NULL, &pf->ahead, &pf->nahead,
							 &pf->ahead_bytes);
	for (i = 0; i < pf->f->nbatches; i++)
	{
		int			b = pf->batches[i];
		bool		turn = on_gpu;
		bool		ran;

		if (!part_takes(p, pf->fi, i))
			continue;
		rc = batch_check(p, pf, b);
		if (rc != 0)
			break;
		if (pf->pre && pf->taken < pf->nahead)
			ran = run_ahead_batch(p, pf, turn, &rc);
		else
			ran = run_read_batch(p, pf, b, cols, turn, &rc);
		if (!ran)
		{
			rc = 1;
			break;
		}
		if (rc == 1 && p->res.load_status != WARP_LOAD_OK)
			p->res.bad_file = pf->fi;
		if (turn)
			gpud_turn_leave(&p->lane->turns);
		if (rc == 0 && on_gpu && r->prog.emit_rows && r->prog.topn_limit == 0)
			rc = part_send_rows(p, pf->fi, i);
		if (r->job->fault == GPUD_FAULT_CRASH)
			raise(SIGKILL);		/* as kill -9 would */
		if (r->job->fault == GPUD_FAULT_SLOW)
			usleep(50 * 1000);
		if (rc != 0)
			break;
	}
	return rc;
}

/*
 * Close file pf, whatever happened to its batches (rc: run_file_batches'
 * result, returned, or -1 when the GPU driver fails the wait).
 */
static int
close_part_file(Part *p, PartFile *pf, int rc)
{
	bool		on_gpu = p->lane != NULL;

	/*
	 * Nothing may read this file's memory (its window, its dictionaries,
	 * the last batch's buffers) once it is closed: wait for the device,
	 * whatever happened above.
	 */
	if (on_gpu && p->drv &&
		warp_gpu_wait(p->drv, p->fallback, sizeof(p->fallback)) != 0 && rc == 0)
		rc = -1;
	if (pf->have_prev)
		arrow_arena_free_all(&pf->prev);
	pf->have_prev = false;
	if (pf->prev_l)
		gpud_prefetch_release(pf->pre, pf->prev_l);
	gpud_prefetch_stop(pf->pre);
	p->res.columns_cached += (int64_t) pf->dsrc.columns_served;
	release_ahead(&pf->ahead_bytes);
	free(pf->ahead);
	arrow_close(&pf->file);
	gpud_window_release(pf->win);
	close(pf->fd);
	return rc;
}

/*
 * Read the listed batches of every file that part p takes and run its
 * driver over them.  Returns 0 when done (p->res says whether with an
 * error), -1 when the GPU driver gave up (p->fallback says why) or another
 * part did, -2 when cancelled.
 */
int
run_batches(Part *p)
{
	Run		   *r = p->run;
	ArrowArray *cols = calloc(r->prog.ncols > 0 ? r->prog.ncols : 1, sizeof(ArrowArray));
	int			fi;
	int			rc = 0;

	if (cols == NULL)
	{
		p->res.status = WARP_ERR_OUT_OF_MEMORY;
		return 0;
	}
	for (fi = 0; fi < r->job->nfiles && rc == 0; fi++)
	{
		PartFile	pf = {.cs = {.lock = PTHREAD_MUTEX_INITIALIZER}};
		int			i;

		pf.fi = fi;
		pf.f = (GpudFile *) (r->arena + r->job->off_files) + fi;
		pf.path = (const char *) r->arena + pf.f->off_path;
		pf.batches = (const int32_t *) (r->arena + pf.f->off_batches);
		pf.fields = (const int32_t *) (r->arena + pf.f->off_fields);
		pf.hook = (GpudLoadHook) {gpud_decoded_load, gpud_decoded_done, &pf.dsrc};
		for (i = 0; i < pf.f->nbatches; i++)
			if (part_takes(p, fi, i))
				pf.mine++;
		if (pf.mine == 0)
			continue;
		if (!open_part_file(p, &pf))
			break;
		rc = run_file_batches(p, &pf, cols);
		rc = close_part_file(p, &pf, rc);
	}
	free(cols);
	return rc < 0 ? rc : 0;
}
