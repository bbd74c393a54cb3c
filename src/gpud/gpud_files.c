/*-------------------------------------------------------------------------
 *
 * gpud_files.c
 *	  pg_warp_gpud's cache of registered file windows (see gpud_files.h).
 *
 * A doubly linked list in recency order, searched linearly: a cluster has
 * tens of Arrow files in use, not thousands.  Entries in use (refs > 0)
 * are never evicted; when the budget cannot be met without evicting one,
 * the new window is simply not made and the job reads with pread.
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
#include "warp_gpu.h"

struct GpudWindow
{
	struct GpudWindow *prev;
	struct GpudWindow *next;
	dev_t		dev;
	ino_t		ino;
	off_t		size;
	struct timespec mtime;
	uint64_t	len;			/* bytes of the file in the window */
	uint64_t	maplen;			/* mapped and registered (page multiple) */
	uint8_t    *base;
	int			refs;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static GpudWindow *head;		/* most recently used first */
static uint64_t budget;
static uint64_t used;

void
gpud_windows_init(uint64_t b)
{
	budget = b;
}

uint64_t
gpud_windows_bytes(void)
{
	return used;
}

static void
unlink_window(GpudWindow *w)
{
	if (w->prev)
		w->prev->next = w->next;
	else
		head = w->next;
	if (w->next)
		w->next->prev = w->prev;
	w->prev = w->next = NULL;
}

static void
push_front(GpudWindow *w)
{
	w->prev = NULL;
	w->next = head;
	if (head)
		head->prev = w;
	head = w;
}

static void
destroy(GpudWindow *w)
{
	unlink_window(w);
	warp_gpu_host_unregister(w->base);
	munmap(w->base, w->maplen);
	used -= w->maplen;
	free(w);
}

/* evict unused windows, oldest first, until need more bytes fit */
static bool
make_room(uint64_t need)
{
	GpudWindow *w = head;

	while (w && w->next)
		w = w->next;			/* the oldest */
	while (used + need > budget && w)
	{
		GpudWindow *prev = w->prev;

		if (w->refs == 0)
			destroy(w);
		w = prev;
	}
	return used + need <= budget;
}

GpudWindow *
gpud_window_acquire(int fd, const struct stat *st, uint64_t len, const uint8_t **base)
{
	GpudWindow *w;
	long		page = sysconf(_SC_PAGESIZE);
	uint64_t	maplen = (len + page - 1) / page * page;
	char		why[256];

	if (budget == 0 || len == 0)
		return NULL;
	pthread_mutex_lock(&lock);
	for (w = head; w; w = w->next)
	{
		if (w->dev == st->st_dev && w->ino == st->st_ino && w->size == st->st_size &&
			w->mtime.tv_sec == st->st_mtim.tv_sec && w->mtime.tv_nsec == st->st_mtim.tv_nsec &&
			w->len == len)
		{
			unlink_window(w);
			push_front(w);
			w->refs++;
			*base = w->base;
			pthread_mutex_unlock(&lock);
			return w;
		}
	}
	/* windows of an older version of this file are dead weight */
	for (w = head; w;)
	{
		GpudWindow *next = w->next;

		if (w->dev == st->st_dev && w->ino == st->st_ino && w->refs == 0)
			destroy(w);
		w = next;
	}
	if (maplen > budget || !make_room(maplen))
	{
		pthread_mutex_unlock(&lock);
		return NULL;
	}
	w = calloc(1, sizeof(GpudWindow));
	if (w == NULL)
	{
		pthread_mutex_unlock(&lock);
		return NULL;
	}
	w->base = mmap(NULL, maplen, PROT_READ, MAP_SHARED, fd, 0);
	if (w->base == MAP_FAILED)
	{
		free(w);
		pthread_mutex_unlock(&lock);
		return NULL;
	}
	if (warp_gpu_host_register(w->base, maplen, why, sizeof(why)) != 0)
	{
		fprintf(stderr, "pg_warp_gpud: could not register a file window of %llu bytes: %s\n",
				(unsigned long long) maplen, why);
		munmap(w->base, maplen);
		free(w);
		pthread_mutex_unlock(&lock);
		return NULL;
	}
	w->dev = st->st_dev;
	w->ino = st->st_ino;
	w->size = st->st_size;
	w->mtime = st->st_mtim;
	w->len = len;
	w->maplen = maplen;
	w->refs = 1;
	used += maplen;
	push_front(w);
	*base = w->base;
	pthread_mutex_unlock(&lock);
	return w;
}

void
gpud_window_release(GpudWindow *w)
{
	if (w == NULL)
		return;
	pthread_mutex_lock(&lock);
	w->refs--;
	pthread_mutex_unlock(&lock);
}
