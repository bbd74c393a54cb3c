/*
 * test_gpud_files.c — pg_warp_gpud's registered file windows
 * (src/gpud/gpud_files.c), with registration done by a fake that checks
 * what the CUDA driver would refuse (a page registered twice, an
 * unregistration of something never registered): column ranges are
 * coalesced into page-aligned, disjoint units of at least 4 MB where
 * neighbours allow; a job's units are registered within the budget and
 * found again by the next job; windows of other files are evicted oldest
 * first, never one in use; a unit overlapping unused windows replaces
 * them, one overlapping a window in use stays unregistered; a changed file
 * drops its old windows; threads covering and releasing at once leave the
 * registrations consistent.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpud_files.h"
#include "unit.h"

#define MB ((uint64_t) 1 << 20)
#define FILE_MB 256

static char dir[] = "/tmp/pgwarp-files-XXXXXX";
static char path_a[256];
static char path_b[256];

/* ------------------------------------------------------- fake driver */

#define MAX_LIVE 4096
static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
static struct
{
	uint8_t    *p;
	size_t		len;
}			live[MAX_LIVE];
static int	nlive;
static int	violations;
static int	registrations;

static int
fake_reg(void *p, size_t len, char *why, size_t whylen)
{
	uint8_t    *q = p;
	int			i;
	int			rc = 0;

	pthread_mutex_lock(&fake_lock);
	for (i = 0; i < nlive; i++)
		if (q < live[i].p + live[i].len && live[i].p < q + len)
		{
			violations++;
			rc = -1;
		}
	if (rc == 0 && nlive < MAX_LIVE)
	{
		live[nlive].p = q;
		live[nlive].len = len;
		nlive++;
		registrations++;
	}
	pthread_mutex_unlock(&fake_lock);
	if (rc)
		snprintf(why, whylen, "already registered");
	return rc;
}

static void
fake_unreg(void *p)
{
	int			i;

	pthread_mutex_lock(&fake_lock);
	for (i = 0; i < nlive; i++)
		if (live[i].p == p)
			break;
	if (i == nlive)
		violations++;
	else
		live[i] = live[--nlive];
	pthread_mutex_unlock(&fake_lock);
}

static uint64_t
live_bytes(void)
{
	uint64_t	b = 0;
	int			i;

	pthread_mutex_lock(&fake_lock);
	for (i = 0; i < nlive; i++)
		b += live[i].len;
	pthread_mutex_unlock(&fake_lock);
	return b;
}

static const GpudRegisterOps fake_ops = {fake_reg, fake_unreg};

/* ------------------------------------------------------------ helpers */

typedef struct Opened
{
	int			fd;
	struct stat st;
	GpudWindow *w;
	const uint8_t *base;
} Opened;

static bool
open_window(Opened *o, const char *path)
{
	o->w = NULL;
	o->fd = open(path, O_RDONLY);
	if (o->fd < 0 || fstat(o->fd, &o->st) != 0)
		return false;
	o->w = gpud_window_open(o->fd, &o->st, (uint64_t) o->st.st_size, &o->base);
	return o->w != NULL;
}

static void
close_window(Opened *o)
{
	gpud_window_release(o->w);
	if (o->fd >= 0)
		close(o->fd);
}

/* "column" c of "batch" b: 4 MB buffers, 8 columns a batch, back to back */
static GpudRange
col(int b, int c)
{
	GpudRange	r = {(uint64_t) (b * 8 + c) * 4 * MB + 64, 4 * MB - 128};

	return r;
}

/* evict everything: a new budget with nothing held */
static void
reset(uint64_t budget)
{
	gpud_windows_init(0, &fake_ops);
	gpud_windows_init(budget, &fake_ops);
}

/* -------------------------------------------------------------- tests */

TEST(plan_coalesces_into_aligned_disjoint_units)
{
	GpudRange	r[8];
	int			n,
				i;

	/* small neighbours within 4 MB become one unit; overlapping merge;
	 * unsorted input; a range past the limit is clipped, one beyond
	 * dropped */
	r[0] = (GpudRange) {10 * MB + 100, 1000};
	r[1] = (GpudRange) {0, 4096};
	r[2] = (GpudRange) {5000, 3 * MB};
	r[3] = (GpudRange) {2 * MB, MB};	/* overlaps r[2] */
	r[4] = (GpudRange) {60 * MB, 8 * MB};
	r[5] = (GpudRange) {63 * MB, 100};	/* inside r[4] */
	r[6] = (GpudRange) {200 * MB, MB};	/* beyond the limit */
	r[7] = (GpudRange) {99 * MB, 4 * MB};	/* clipped */
	n = gpud_window_plan(r, 8, 4096, 100 * MB);
	CHECK(n == 4);
	/* [0, 3 MB + 8 KB): the next, 7 MB away, is too far even for a unit
	 * smaller than 4 MB */
	CHECK(r[0].off == 0 && r[0].len == 3 * MB + 8192);
	CHECK(r[1].off == 10 * MB && r[1].len == 4096);
	CHECK(r[2].off == 60 * MB && r[2].len == 8 * MB);
	CHECK(r[3].off == 99 * MB && r[3].len == MB);
	/* a small unit takes a neighbour closer than 4 MB */
	r[0] = (GpudRange) {0, MB};
	r[1] = (GpudRange) {3 * MB, MB};
	r[2] = (GpudRange) {20 * MB, 4 * MB};
	r[3] = (GpudRange) {25 * MB, MB};	/* 1 MB from a 4 MB unit: apart */
	n = gpud_window_plan(r, 4, 4096, 100 * MB);
	CHECK(n == 3);
	CHECK(r[0].off == 0 && r[0].len == 4 * MB);
	CHECK(r[1].off == 20 * MB && r[1].len == 4 * MB);
	CHECK(r[2].off == 25 * MB);
	for (i = 1; i < n; i++)
		CHECK(r[i].off >= r[i - 1].off + r[i - 1].len);
}

TEST(plan_keeps_big_units_apart_and_bounded)
{
	GpudRange	r[64];
	int			n,
				i;
	uint64_t	prev_end = 0;

	/* 4 MB buffers 2 MB apart stay separate; 100 KB buffers 100 KB apart
	 * coalesce up to GPUD_WINDOW_MAX */
	for (i = 0; i < 4; i++)
		r[i] = (GpudRange) {(uint64_t) i * 6 * MB, 4 * MB};
	n = gpud_window_plan(r, 4, 4096, 1024 * MB);
	CHECK(n == 4);
	for (i = 0; i < 64; i++)
		r[i] = (GpudRange) {(uint64_t) i * 200 * 1024, 100 * 1024};
	n = gpud_window_plan(r, 64, 4096, 1024 * MB);
	CHECK(n == 1 && r[0].off == 0);
	for (i = 0; i < 64; i++)
		r[i] = (GpudRange) {(uint64_t) i * 20 * MB, 512 * 1024};
	n = gpud_window_plan(r, 64, 4096, 2048 * MB);
	/* 512 KB units 19.5 MB apart: nothing to join */
	CHECK(n == 64);
	for (i = 0; i < n; i++)
	{
		CHECK(r[i].off % 4096 == 0 && r[i].len % 4096 == 0);
		CHECK(r[i].off >= prev_end);
		CHECK(r[i].len <= GPUD_WINDOW_MAX);
		prev_end = r[i].off + r[i].len;
	}
	/* 8 MB buffers a page apart: units no bigger than the cap */
	for (i = 0; i < 64; i++)
		r[i] = (GpudRange) {(uint64_t) i * 8 * MB, 8 * MB - 4096};
	n = gpud_window_plan(r, 64, 4096, 1024 * MB);
	CHECK(n >= 2);
	for (i = 0; i < n; i++)
		CHECK(r[i].len <= GPUD_WINDOW_MAX);
}

TEST(off_without_a_budget)
{
	Opened		o;

	reset(0);
	CHECK(!open_window(&o, path_a));
	close_window(&o);
}

TEST(columns_registered_and_found_again)
{
	Opened		o,
				o2;
	GpudRange	r[8];
	int			b,
				n = 0,
				before;
	uint64_t	bytes;

	reset(1024 * MB);
	CHECK(open_window(&o, path_a));
	if (unit_current_failed)
		return;
	/* columns 1 and 5 of batches 0-3: 8 buffers, 4 MB units each */
	for (b = 0; b < 4; b++)
	{
		r[n++] = col(b, 1);
		r[n++] = col(b, 5);
	}
	bytes = gpud_window_cover(o.w, r, n);
	CHECK(bytes == 8 * 4 * MB);
	CHECK(gpud_windows_bytes() == bytes && live_bytes() == bytes);
	CHECK(gpud_windows_count() == 8);
	for (b = 0; b < 4; b++)
	{
		GpudRange	c1 = col(b, 1),
					c5 = col(b, 5),
					c2 = col(b, 2);

		CHECK(gpud_window_covers(o.w, c1.off, c1.len));
		CHECK(gpud_window_covers(o.w, c5.off, c5.len));
		CHECK(!gpud_window_covers(o.w, c2.off, c2.len));
	}
	/* a second job over the same columns registers nothing */
	before = registrations;
	CHECK(open_window(&o2, path_a));
	n = 0;
	for (b = 0; b < 4; b++)
	{
		r[n++] = col(b, 1);
		r[n++] = col(b, 5);
	}
	CHECK(gpud_window_cover(o2.w, r, n) == bytes);
	CHECK(registrations == before);
	close_window(&o2);
	close_window(&o);
	/* released, not dropped: still registered for the next query */
	CHECK(gpud_windows_bytes() == bytes);
	CHECK(violations == 0);
}

TEST(budget_evicts_oldest_unused)
{
	Opened		a,
				b;
	GpudRange	r[4];
	GpudRange	c;

	reset(12 * MB);
	CHECK(open_window(&a, path_a));
	if (unit_current_failed)
		return;
	r[0] = col(0, 0);
	r[1] = col(1, 0);
	r[2] = col(2, 0);
	r[3] = col(3, 0);
	/* three of four fit */
	CHECK(gpud_window_cover(a.w, r, 4) == 12 * MB);
	CHECK(gpud_windows_bytes() == 12 * MB);
	/* held: another file's job gets nothing */
	CHECK(open_window(&b, path_b));
	r[0] = col(0, 3);
	CHECK(gpud_window_cover(b.w, r, 1) == 0);
	c = col(0, 3);
	CHECK(!gpud_window_covers(b.w, c.off, c.len));
	close_window(&b);
	close_window(&a);
	/* released: the oldest makes room */
	CHECK(open_window(&b, path_b));
	r[0] = col(0, 3);
	r[1] = col(1, 3);
	CHECK(gpud_window_cover(b.w, r, 2) == 8 * MB);
	CHECK(gpud_windows_bytes() <= 12 * MB && live_bytes() == gpud_windows_bytes());
	close_window(&b);
	CHECK(violations == 0);
}

TEST(overlapping_units_replace_unused_windows_only)
{
	Opened		a,
				b;
	GpudRange	r[2];
	GpudRange	big = {col(0, 0).off, 3 * 4 * MB};
	int			before;

	reset(1024 * MB);
	CHECK(open_window(&a, path_a));
	if (unit_current_failed)
		return;
	r[0] = col(0, 0);
	r[1] = col(0, 2);
	CHECK(gpud_window_cover(a.w, r, 2) == 8 * MB);
	/* a unit over columns 0-2 while a holds them: left unregistered */
	CHECK(open_window(&b, path_a));
	r[0] = big;
	CHECK(gpud_window_cover(b.w, r, 1) == 0);
	CHECK(!gpud_window_covers(b.w, big.off, big.len));
	close_window(&b);
	close_window(&a);
	/* unused now: replaced by their union */
	before = gpud_windows_count();
	CHECK(open_window(&b, path_a));
	r[0] = big;
	CHECK(gpud_window_cover(b.w, r, 1) >= big.len);
	CHECK(gpud_window_covers(b.w, big.off, big.len));
	CHECK(gpud_windows_count() == before - 1);
	close_window(&b);
	CHECK(violations == 0 && live_bytes() == gpud_windows_bytes());
}

TEST(changed_file_drops_old_windows)
{
	Opened		a;
	GpudRange	r[1];
	int			fd;

	reset(1024 * MB);
	CHECK(open_window(&a, path_b));
	if (unit_current_failed)
		return;
	r[0] = col(2, 2);
	CHECK(gpud_window_cover(a.w, r, 1) == 4 * MB);
	close_window(&a);
	CHECK(gpud_windows_count() == 1);
	/* the file grows: a new identity */
	fd = open(path_b, O_WRONLY);
	CHECK(fd >= 0 && ftruncate(fd, (off_t) (FILE_MB + 1) * MB) == 0);
	close(fd);
	CHECK(open_window(&a, path_b));
	CHECK(gpud_windows_count() == 0 && gpud_windows_bytes() == 0);
	close_window(&a);
	CHECK(violations == 0 && nlive == 0);
}

static void *
worker(void *arg)
{
	uint64_t	seed = (uint64_t) (uintptr_t) arg * 7919 + 1;
	int			it;

	for (it = 0; it < 200; it++)
	{
		Opened		o;
		GpudRange	r[8];
		int			n = 0,
					k;

		if (!open_window(&o, (seed >> 3) % 2 ? path_a : path_b))
		{
			close_window(&o);
			continue;
		}
		for (k = 0; k < 8; k++)
		{
			seed ^= seed << 13;
			seed ^= seed >> 7;
			seed ^= seed << 17;
			if (seed % 3 == 0)
				r[n++] = col((int) (seed % 8), (int) ((seed >> 8) % 8));
		}
		gpud_window_cover(o.w, r, n);
		close_window(&o);
	}
	return NULL;
}

TEST(threads_keep_registrations_consistent)
{
	pthread_t	th[4];
	int			i;

	reset(40 * MB);
	for (i = 0; i < 4; i++)
		CHECK(pthread_create(&th[i], NULL, worker, (void *) (uintptr_t) i) == 0);
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	CHECK(violations == 0);
	CHECK(gpud_windows_bytes() <= 40 * MB);
	CHECK(live_bytes() == gpud_windows_bytes());
	reset(0);
	CHECK(nlive == 0 && gpud_windows_bytes() == 0);
}

static bool
make_file(const char *path)
{
	int			fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	bool		ok = fd >= 0 && ftruncate(fd, (off_t) FILE_MB * MB) == 0;

	if (fd >= 0)
		close(fd);
	return ok;
}

int
main(void)
{
	if (mkdtemp(dir) == NULL)
		return 1;
	snprintf(path_a, sizeof(path_a), "%s/a.arrow", dir);
	snprintf(path_b, sizeof(path_b), "%s/b.arrow", dir);
	if (!make_file(path_a) || !make_file(path_b))
	{
		printf("FAIL: setup: could not write the test files\n");
		return 1;
	}
	gpud_windows_init(0, &fake_ops);
	RUN(plan_coalesces_into_aligned_disjoint_units);
	RUN(plan_keeps_big_units_apart_and_bounded);
	RUN(off_without_a_budget);
	RUN(columns_registered_and_found_again);
	RUN(budget_evicts_oldest_unused);
	RUN(overlapping_units_replace_unused_windows_only);
	RUN(changed_file_drops_old_windows);
	RUN(threads_keep_registrations_consistent);
	unlink(path_a);
	unlink(path_b);
	rmdir(dir);
	UNIT_EXIT();
}
