/*-------------------------------------------------------------------------
 *
 * gpud_files.c
 *	  pg_warp_gpud's cache of registered file windows (see gpud_files.h).
 *
 * Mappings are a list searched linearly: a cluster has tens of Arrow files
 * in use, not thousands.  A mapping's windows are an array sorted by
 * offset (thousands at SF=100: 600 batches x the columns read), searched
 * by bisection; all windows are also on one recency list, which eviction
 * walks from the oldest end.  Windows in use (refs > 0) are never evicted;
 * a unit the budget cannot make room for is simply not registered and its
 * buffers are read with pread.  A mapping lives while a job holds it or it
 * has windows.
 *
 * A mapped file that is truncated under the daemon raises SIGBUS in the
 * daemon, not in PostgreSQL: the supervisor restarts the daemon, the
 * backend re-runs the query on its CPU driver, and that reports the
 * changed file.  Arrow files are only ever appended to (a writable table's
 * next writer cuts an aborted tail, which lies beyond every committed
 * length), so this happens only when someone overwrites a file in place.
 *
 *-------------------------------------------------------------------------
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gpud_files.h"

typedef struct GpudMap GpudMap;

/* one registered range of a mapping */
typedef struct Span
{
	struct Span *prev;			/* recency list, most recent first */
	struct Span *next;
	GpudMap    *map;
	uint64_t	off;			/* page-aligned, in the mapping */
	uint64_t	len;
	int			refs;
} Span;

struct GpudMap
{
	GpudMap    *next;
	dev_t		dev;
	ino_t		ino;
	off_t		size;
	struct timespec mtime;
	uint64_t	len;			/* bytes of the file mapped */
	uint64_t	maplen;			/* page multiple */
	uint8_t    *base;
	int			refs;			/* jobs' handles */
	Span	  **spans;			/* sorted by off, disjoint */
	int			nspans;
	int			cap;
};

/* a job's handle: a mapping and the windows it holds */
struct GpudWindow
{
	GpudMap    *map;
	Span	  **held;			/* sorted by off after gpud_window_cover */
	int			nheld;
	int			cap;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static GpudMap *maps;
static Span *recent;			/* most recently used first */
static Span *oldest;
static uint64_t budget;
static uint64_t used;
static int	nwindows;
static GpudRegisterOps reg_ops;

static bool make_room(uint64_t need);

void
gpud_windows_init(uint64_t b, const GpudRegisterOps *ops)
{
	pthread_mutex_lock(&lock);
	budget = b;
	if (ops)
		reg_ops = *ops;
	/* a smaller budget: unused windows beyond it go now */
	make_room(0);
	pthread_mutex_unlock(&lock);
}

uint64_t
gpud_windows_bytes(void)
{
	return __atomic_load_n(&used, __ATOMIC_RELAXED);
}

int
gpud_windows_count(void)
{
	return __atomic_load_n(&nwindows, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------ planning */

static int
range_cmp(const void *a, const void *b)
{
	const GpudRange *x = a;
	const GpudRange *y = b;

	return x->off < y->off ? -1 : x->off > y->off ? 1 : 0;
}

int
gpud_window_plan(GpudRange *r, int n, uint64_t page, uint64_t limit)
{
	int			i,
				out = 0;

	/* page-aligned and clipped (limit is a page multiple); empty ones
	 * dropped */
	for (i = 0; i < n; i++)
	{
		uint64_t	s,
					e;

		if (r[i].len == 0 || r[i].off >= limit)
			continue;
		s = r[i].off / page * page;
		e = r[i].len > limit - r[i].off ? limit : r[i].off + r[i].len;
		e = (e + page - 1) / page * page;
		if (e > limit)
			e = limit;
		r[out].off = s;
		r[out].len = e - s;
		out++;
	}
	n = out;
	if (n == 0)
		return 0;
	qsort(r, n, sizeof(GpudRange), range_cmp);
	out = 0;
	for (i = 1; i < n; i++)
	{
		GpudRange  *u = &r[out];
		uint64_t	end = u->off + u->len;
		uint64_t	nend = r[i].off + r[i].len;
		uint64_t	gap = r[i].off > end ? r[i].off - end : 0;
		uint64_t	merged = (nend > end ? nend : end) - u->off;
		bool		overlap = r[i].off <= end;
		bool		join = overlap ||
			(merged <= GPUD_WINDOW_MAX &&
			 (gap < GPUD_WINDOW_GAP || (u->len < GPUD_WINDOW_UNIT && gap < GPUD_WINDOW_UNIT)));

		if (join)
			u->len = merged;
		else
			r[++out] = r[i];
	}
	return out + 1;
}

/* ------------------------------------------------------------ windows */

static void
lru_unlink(Span *s)
{
	if (s->prev)
		s->prev->next = s->next;
	else
		recent = s->next;
	if (s->next)
		s->next->prev = s->prev;
	else
		oldest = s->prev;
	s->prev = s->next = NULL;
}

static void
lru_push(Span *s)
{
	s->prev = NULL;
	s->next = recent;
	if (recent)
		recent->prev = s;
	recent = s;
	if (oldest == NULL)
		oldest = s;
}

/* index of the first span of m ending after off */
static int
first_after(const GpudMap *m, uint64_t off)
{
	int			lo = 0,
				hi = m->nspans;

	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;

		if (m->spans[mid]->off + m->spans[mid]->len <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void
destroy_span(Span *s)
{
	GpudMap    *m = s->map;
	int			i = first_after(m, s->off);

	if (i < m->nspans && m->spans[i] == s)
	{
		memmove(&m->spans[i], &m->spans[i + 1], sizeof(Span *) * (m->nspans - i - 1));
		m->nspans--;
	}
	lru_unlink(s);
	reg_ops.unreg(m->base + s->off);
	used -= s->len;
	nwindows--;
	free(s);
}

/* unmap m if nothing holds it and it has no windows left */
static void
maybe_unmap(GpudMap *m)
{
	GpudMap   **pp;

	if (m->refs > 0 || m->nspans > 0)
		return;
	for (pp = &maps; *pp; pp = &(*pp)->next)
		if (*pp == m)
		{
			*pp = m->next;
			break;
		}
	munmap(m->base, m->maplen);
	free(m->spans);
	free(m);
}

/* evict unused windows, oldest first, until need more bytes fit */
static bool
make_room(uint64_t need)
{
	Span	   *s = oldest;

	while (used + need > budget && s)
	{
		Span	   *prev = s->prev;

		if (s->refs == 0)
		{
			GpudMap    *m = s->map;

			destroy_span(s);
			maybe_unmap(m);
		}
		s = prev;
	}
	return used + need <= budget;
}

/* room for one more in the array *v of n spans (*cap allocated) */
static bool
room_for_one(Span ***v, int n, int *cap)
{
	if (n == *cap)
	{
		int			ncap = *cap ? *cap * 2 : 64;
		Span	  **nv = realloc(*v, sizeof(Span *) * ncap);

		if (nv == NULL)
			return false;
		*v = nv;
		*cap = ncap;
	}
	return true;
}

static bool
hold(GpudWindow *w, Span *s)
{
	if (w->nheld > 0 && w->held[w->nheld - 1] == s)
		return true;
	if (!room_for_one(&w->held, w->nheld, &w->cap))
		return false;
	w->held[w->nheld++] = s;
	s->refs++;
	lru_unlink(s);
	lru_push(s);
	return true;
}

/* register [off, off + len) of m as a new window */
static Span *
new_span(GpudMap *m, uint64_t off, uint64_t len)
{
	static bool warned;
	char		why[256];
	Span	   *s;
	int			at;

	if (len > budget || !make_room(len))
		return NULL;
	/* where it goes (after make_room, which may remove windows of m) */
	at = first_after(m, off);
	if (!room_for_one(&m->spans, m->nspans, &m->cap))
		return NULL;
	if ((s = calloc(1, sizeof(Span))) == NULL)
		return NULL;
	if (reg_ops.reg(m->base + off, (size_t) len, why, sizeof(why)) != 0)
	{
		if (!warned)
			fprintf(stderr, "pg_warp_gpud: could not register a file window of %llu bytes: %s\n",
					(unsigned long long) len, why);
		warned = true;
		free(s);
		return NULL;
	}
	s->map = m;
	s->off = off;
	s->len = len;
	memmove(&m->spans[at + 1], &m->spans[at], sizeof(Span *) * (m->nspans - at));
	m->spans[at] = s;
	m->nspans++;
	lru_push(s);
	used += len;
	nwindows++;
	return s;
}

/* cover unit [off, off + len) of w's mapping: a window w holds, or none */
static void
cover_unit(GpudWindow *w, uint64_t off, uint64_t len)
{
	GpudMap    *m = w->map;
	int			i = first_after(m, off);
	int			j;
	uint64_t	lo = off,
				hi = off + len;
	Span	   *s;

	/* one window holds it already */
	if (i < m->nspans && m->spans[i]->off <= off &&
		m->spans[i]->off + m->spans[i]->len >= off + len)
	{
		hold(w, m->spans[i]);
		return;
	}
	/* windows overlapping it: replaced by the union when unused */
	for (j = i; j < m->nspans && m->spans[j]->off < off + len; j++)
	{
		if (m->spans[j]->refs > 0)
			return;
		if (m->spans[j]->off < lo)
			lo = m->spans[j]->off;
		if (m->spans[j]->off + m->spans[j]->len > hi)
			hi = m->spans[j]->off + m->spans[j]->len;
	}
	while (j-- > i)
		destroy_span(m->spans[j]);
	s = new_span(m, lo, hi - lo);
	if (s)
		hold(w, s);
}

static int
span_cmp(const void *a, const void *b)
{
	const Span *x = *(Span *const *) a;
	const Span *y = *(Span *const *) b;

	return x->off < y->off ? -1 : x->off > y->off ? 1 : 0;
}

uint64_t
gpud_window_cover(GpudWindow *w, GpudRange *r, int n)
{
	long		page = sysconf(_SC_PAGESIZE);
	uint64_t	bytes = 0;
	int			i;

	if (w == NULL)
		return 0;
	n = gpud_window_plan(r, n, (uint64_t) page, w->map->maplen);
	pthread_mutex_lock(&lock);
	for (i = 0; i < n; i++)
		cover_unit(w, r[i].off, r[i].len);
	pthread_mutex_unlock(&lock);
	/* in order for gpud_window_covers; the same window held twice (two
	 * calls) is harmless */
	qsort(w->held, w->nheld, sizeof(Span *), span_cmp);
	for (i = 0; i < w->nheld; i++)
		bytes += w->held[i]->len;
	return bytes;
}

bool
gpud_window_covers(const GpudWindow *w, uint64_t off, uint64_t len)
{
	int			lo = 0,
				hi;

	if (w == NULL)
		return false;
	hi = w->nheld;
	/* the last window starting at or before off */
	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;

		if (w->held[mid]->off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && len <= UINT64_MAX - off &&
		w->held[lo - 1]->off + w->held[lo - 1]->len >= off + len;
}

static bool
same_file(const GpudMap *m, const struct stat *st)
{
	return m->dev == st->st_dev && m->ino == st->st_ino;
}

GpudWindow *
gpud_window_open(int fd, const struct stat *st, uint64_t len, const uint8_t **base)
{
	long		page = sysconf(_SC_PAGESIZE);
	GpudWindow *w;
	GpudMap    *m;
	GpudMap    *next;

	if (len == 0 || __atomic_load_n(&budget, __ATOMIC_RELAXED) == 0 ||
		(w = calloc(1, sizeof(GpudWindow))) == NULL)
		return NULL;
	pthread_mutex_lock(&lock);
	for (m = maps; m; m = m->next)
		if (same_file(m, st) && m->size == st->st_size &&
			m->mtime.tv_sec == st->st_mtim.tv_sec &&
			m->mtime.tv_nsec == st->st_mtim.tv_nsec && m->len == len)
			break;
	if (m == NULL)
	{
		/* the windows of an older version of this file are dead weight */
		for (m = maps; m; m = next)
		{
			int			i;

			next = m->next;
			if (!same_file(m, st))
				continue;
			for (i = m->nspans - 1; i >= 0; i--)
				if (m->spans[i]->refs == 0)
					destroy_span(m->spans[i]);
			maybe_unmap(m);
		}
		m = calloc(1, sizeof(GpudMap));
		if (m == NULL)
			goto fail;
		m->maplen = (len + page - 1) / page * page;
		m->base = mmap(NULL, m->maplen, PROT_READ, MAP_SHARED, fd, 0);
		if (m->base == MAP_FAILED)
		{
			free(m);
			goto fail;
		}
		m->dev = st->st_dev;
		m->ino = st->st_ino;
		m->size = st->st_size;
		m->mtime = st->st_mtim;
		m->len = len;
		m->next = maps;
		maps = m;
	}
	m->refs++;
	w->map = m;
	*base = m->base;
	pthread_mutex_unlock(&lock);
	return w;

fail:
	pthread_mutex_unlock(&lock);
	free(w);
	return NULL;
}

void
gpud_window_release(GpudWindow *w)
{
	int			i;

	if (w == NULL)
		return;
	pthread_mutex_lock(&lock);
	for (i = 0; i < w->nheld; i++)
		w->held[i]->refs--;
	w->map->refs--;
	maybe_unmap(w->map);
	pthread_mutex_unlock(&lock);
	free(w->held);
	free(w);
}
