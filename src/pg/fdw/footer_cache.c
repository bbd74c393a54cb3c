/*
 * footer_cache.c — a shared-memory cache of Arrow file metadata.
 *
 * Planning a query over a table of many files needs each file's row and
 * batch counts, and opening a file for a scan needs its footer.  Both are
 * kept here, keyed by the file's identity, so that planning over a
 * 1,000-file `dir` costs 1,000 stat() calls instead of 1,000 footer reads
 * (plus one read of every record batch header, for the row counts).
 *
 *   key:   device, inode, size, mtime (ns) and the readable length.  A
 *          writable file's committed prefix never changes in place (appends
 *          go after it; a new file is a new inode), so such files are keyed by
 *          device, inode and committed length alone.
 *   entry: total rows, batches, and the footer bytes (the file's first 6
 *          bytes and the range from the footer to the readable end), when
 *          the footer is at most FOOTER_MAX bytes (larger ones are not kept).
 *
 * Entries are fixed-size slots in one shared hash table (size from
 * pg_warp.footer_cache_entries), replaced least-recently-used first.  The
 * cache exists only when pg_warp is in shared_preload_libraries; without it
 * every lookup misses.  Stale entries cannot be returned: a changed file has
 * another key.
 */
#include "postgres.h"

#include <sys/stat.h>

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/hsearch.h"

#include "pg_warp.h"
#include "fdw/arrow_pg.h"

#define FOOTER_MAX	(8192 - 64)

typedef struct FooterKey
{
	uint64		dev;
	uint64		ino;
	int64		size;
	int64		mtime_ns;
	int64		limit;
} FooterKey;

typedef struct FooterEntry
{
	FooterKey	key;
	uint64		last_used;
	int64		total_rows;
	int32		n_batches;
	int32		tail_len;		/* 0: footer not kept */
	int64		tail_off;
	uint8		head[6];
	uint8		tail[FOOTER_MAX];
} FooterEntry;

typedef struct FooterCacheShared
{
	LWLock	   *lock;
	uint64		tick;
	uint64		hits;
	uint64		misses;
} FooterCacheShared;

int			pgwarp_footer_cache_entries = 2048;

static FooterCacheShared *fc_shared;
static HTAB *fc_hash;
static shmem_request_hook_type prev_shmem_request_hook;
static shmem_startup_hook_type prev_shmem_startup_hook;

static void
fc_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(FooterCacheShared)) +
						   hash_estimate_size(pgwarp_footer_cache_entries, sizeof(FooterEntry)));
	RequestNamedLWLockTranche("pg_warp_footer_cache", 1);
}

static void
fc_shmem_startup(void)
{
	HASHCTL		info;
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	fc_shared = ShmemInitStruct("pg_warp footer cache", sizeof(FooterCacheShared), &found);
	if (!found)
	{
		memset(fc_shared, 0, sizeof(*fc_shared));
		fc_shared->lock = &(GetNamedLWLockTranche("pg_warp_footer_cache"))->lock;
	}
	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(FooterKey);
	info.entrysize = sizeof(FooterEntry);
	fc_hash = ShmemInitHash("pg_warp footer cache hash", pgwarp_footer_cache_entries,
							pgwarp_footer_cache_entries, &info, HASH_ELEM | HASH_BLOBS);
	LWLockRelease(AddinShmemInitLock);
}

/* Called from _PG_init while shared_preload_libraries are loaded. */
void
pgwarp_footer_cache_preload(void)
{
	DefineCustomIntVariable("pg_warp.footer_cache_entries",
							"Arrow files whose metadata is cached in shared memory.",
							"Each entry takes about 8 kB.",
							&pgwarp_footer_cache_entries,
							2048, 16, 1024 * 1024,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = fc_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = fc_shmem_startup;
}

static void
make_key(FooterKey *key, const struct stat *st, int64 limit)
{
	memset(key, 0, sizeof(*key));
	key->dev = (uint64) st->st_dev;
	key->ino = (uint64) st->st_ino;
	key->limit = limit;
	if (limit < 0)
	{
		key->size = st->st_size;
		key->mtime_ns = (int64) st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
	}
}

/*
 * Look up the file; on a hit fill the counts and, if the footer is kept,
 * copy it into *footer (palloc'd, with its offset) and return true.
 */
bool
pgwarp_footer_cache_get(const struct stat *st, int64 limit, PgWarpFileSummary *sum)
{
	FooterKey	key;
	FooterEntry *e;

	if (fc_hash == NULL)
		return false;
	make_key(&key, st, limit);
	LWLockAcquire(fc_shared->lock, LW_SHARED);
	e = hash_search(fc_hash, &key, HASH_FIND, NULL);
	if (e)
	{
		sum->total_rows = e->total_rows;
		sum->n_batches = e->n_batches;
		sum->tail_len = e->tail_len;
		sum->tail_off = e->tail_off;
		sum->tail = NULL;
		if (e->tail_len > 0)
		{
			sum->tail = palloc(e->tail_len);
			memcpy(sum->tail, e->tail, e->tail_len);
			memcpy(sum->head, e->head, sizeof(sum->head));
		}
		e->last_used = ++fc_shared->tick;	/* a benign race under LW_SHARED */
		fc_shared->hits++;
	}
	else
		fc_shared->misses++;
	LWLockRelease(fc_shared->lock);
	return e != NULL;
}

/* Remember a file's summary (and footer, when tail is not NULL). */
void
pgwarp_footer_cache_put(const struct stat *st, int64 limit, const PgWarpFileSummary *sum)
{
	FooterKey	key;
	FooterEntry *e;
	bool		found;

	if (fc_hash == NULL)
		return;
	make_key(&key, st, limit);
	LWLockAcquire(fc_shared->lock, LW_EXCLUSIVE);
	e = hash_search(fc_hash, &key, HASH_ENTER_NULL, &found);
	if (e == NULL)
	{
		/* full: evict the least recently used entry */
		HASH_SEQ_STATUS seq;
		FooterEntry *it;
		FooterEntry *victim = NULL;

		hash_seq_init(&seq, fc_hash);
		while ((it = hash_seq_search(&seq)) != NULL)
			if (victim == NULL || it->last_used < victim->last_used)
				victim = it;
		if (victim)
			hash_search(fc_hash, &victim->key, HASH_REMOVE, NULL);
		e = hash_search(fc_hash, &key, HASH_ENTER_NULL, &found);
	}
	if (e)
	{
		e->total_rows = sum->total_rows;
		e->n_batches = sum->n_batches;
		e->tail_len = 0;
		if (sum->tail && sum->tail_len > 0 && sum->tail_len <= FOOTER_MAX)
		{
			e->tail_len = sum->tail_len;
			e->tail_off = sum->tail_off;
			memcpy(e->tail, sum->tail, sum->tail_len);
			memcpy(e->head, sum->head, sizeof(e->head));
		}
		e->last_used = ++fc_shared->tick;
	}
	LWLockRelease(fc_shared->lock);
}

/* hits, misses (for tests and EXPLAIN) */
void
pgwarp_footer_cache_stats(int64 *hits, int64 *misses)
{
	*hits = *misses = 0;
	if (fc_hash == NULL)
		return;
	LWLockAcquire(fc_shared->lock, LW_SHARED);
	*hits = fc_shared->hits;
	*misses = fc_shared->misses;
	LWLockRelease(fc_shared->lock);
}

int
pgwarp_footer_cache_max(void)
{
	return FOOTER_MAX;
}
