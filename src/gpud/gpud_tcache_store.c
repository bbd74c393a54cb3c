/*-------------------------------------------------------------------------
 *
 * gpud_tcache_store.c
 *	  The GPU table cache's replicas in pg_warp_gpud and the requests that
 *	  load and change them (gpud_tcache_wire.h).
 *
 * A replica is every row version of a heap table that some snapshot may
 * still see: its values as engine values (int64 or double per column, a
 * validity bitmap), its tid, the raw xmin on the page, and the inserting
 * and deleting transactions as entries of a transaction dictionary, with
 * the command ids.  Versions are appended; a version replaced at its tid
 * (the table reused a pruned line pointer) or found dead is marked gone
 * and dropped by compaction, which also renumbers the dictionary.
 *
 * Applying a record is "last writer wins" per tid: an INSERT replaces the
 * version at its tid; a DELETE sets the deleter of the version at its tid
 * if that version's raw xmin is the record's.  Records reach the daemon in
 * each tid's order of events (a transaction ships its records before it
 * commits, and the next transaction to touch the tid waits for that
 * commit), so while a replica loads, records that arrive are held and
 * applied after the scan: one describing an event the scan already saw
 * sets what the scan set, and the tid's later events follow it.
 *
 * Memory is bounded by the backend's pg_warp.gpu_table_cache_memory (sent
 * with each request): a replica that outgrows it is broken (dropped, to be
 * loaded again), and loading one that does not fit fails naming the table.
 *
 * Pure C; no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpud_clock.h"
#include "gpud_tcache.h"
#include "gpud_wire.h"
#include "warp_visibility.h"

#define MAX_REPLICAS	256
#define LOADER_SILENT_MS	30000.0

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static Replica *replicas[MAX_REPLICAS];
static uint64_t total_bytes;	/* under registry_lock */
static uint64_t next_id;		/* under registry_lock */

/*
 * A number no replica of this or an earlier daemon had: load tokens and
 * dictionary epochs, which a backend may present to a restarted daemon
 * (a classification of another replica's dictionary would misread it).
 * The daemon's start time in nanoseconds, counted on.
 */
static uint64_t
unique_id(void)
{
	if (next_id == 0)
		next_id = (uint64_t) (gpud_now_ms() * 1e6);
	return ++next_id;
}

/* ------------------------------------------------------------ memory */

/* grow *p (elem bytes each) from old to new elements; false when out of memory */
static bool
grow(void *pp, int64_t old_n, int64_t new_n, size_t elem)
{
	void	  **p = (void **) pp;
	void	   *q = realloc(*p, (size_t) new_n * elem);

	if (q == NULL)
		return false;
	memset((uint8_t *) q + (size_t) old_n * elem, 0, (size_t) (new_n - old_n) * elem);
	*p = q;
	return true;
}

static uint64_t
row_bytes(const Replica *r)
{
	/* values, validity, five uint32, tid, gone, the tid index's share */
	return (uint64_t) r->ncols * 8 + (r->ncols + 7) / 8 + 5 * 4 + 8 + 1 + 2 * 12;
}

/* account r->bytes anew; false (r broken) when over the limit */
static bool
account(Replica *r, uint64_t limit)
{
	uint64_t	now = (uint64_t) r->cap * row_bytes(r) + (uint64_t) r->dcap * 4 * 3 +
		r->pend_cap;
	bool		ok;

	pthread_mutex_lock(&registry_lock);
	total_bytes = total_bytes - r->bytes + now;
	r->bytes = now;
	ok = limit == 0 || total_bytes <= limit;
	pthread_mutex_unlock(&registry_lock);
	return ok;
}

static void
free_rows(Replica *r)
{
	int			c;

	for (c = 0; c < r->ncols; c++)
	{
		if (r->vals)
			free(r->vals[c]);
		if (r->valid)
			free(r->valid[c]);
	}
	free(r->vals);
	free(r->valid);
	free(r->nnull);
	free(r->xmin);
	free(r->cmin);
	free(r->xmax);
	free(r->cmax);
	free(r->raw_xmin);
	free(r->tid);
	free(r->gone);
	free(r->hkeys);
	free(r->hrows);
	free(r->dict);
	free(r->dhash);
	free(r->pend);
	free(r->kinds);
	r->vals = NULL;
	r->valid = NULL;
	r->nnull = NULL;
	r->xmin = r->cmin = r->xmax = r->cmax = r->raw_xmin = NULL;
	r->tid = NULL;
	r->gone = NULL;
	r->hkeys = NULL;
	r->hrows = NULL;
	r->dict = NULL;
	r->dhash = NULL;
	r->pend = NULL;
	r->kinds = NULL;
	r->n = r->cap = r->ngone = 0;
	r->hcap = r->hcount = 0;
	r->ndict = r->dcap = r->dhcap = 0;
	r->pend_len = r->pend_cap = 0;
	r->pend_recs = 0;
	r->ncols = 0;
	account(r, 0);
}

/* r unusable until loaded again; its memory given back */
static void
break_replica(Replica *r, const char *why)
{
	snprintf(r->why, sizeof(r->why), "%s", why);
	r->state = GPUD_CACHE_BROKEN;
	free_rows(r);
}

static void
break_for_memory(Replica *r)
{
	char		why[128];

	snprintf(why, sizeof(why), "table \"%.60s\" does not fit in pg_warp.gpu_table_cache_memory",
			 r->name);
	break_replica(r, why);
}

/* ------------------------------------------------------ the tid index */

static uint64_t
mix64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return k;
}

static bool
hash_resize(Replica *r, uint64_t ncap)
{
	uint64_t   *nk = calloc(ncap, sizeof(uint64_t));
	uint32_t   *nr = calloc(ncap, sizeof(uint32_t));
	int64_t		i;

	if (nk == NULL || nr == NULL)
	{
		free(nk);
		free(nr);
		return false;
	}
	free(r->hkeys);
	free(r->hrows);
	r->hkeys = nk;
	r->hrows = nr;
	r->hcap = ncap;
	r->hcount = 0;
	for (i = 0; i < r->n; i++)
	{
		uint64_t	k = r->tid[i] + 1;
		uint64_t	h;

		if (r->gone[i])
			continue;
		h = mix64(k) & (ncap - 1);
		while (nk[h] != 0 && nk[h] != k)
			h = (h + 1) & (ncap - 1);
		if (nk[h] == 0)
			r->hcount++;
		nk[h] = k;
		nr[h] = (uint32_t) i;
	}
	return true;
}

/* slot of tid in the index (its key 0 if absent) */
static uint64_t
hash_slot(const Replica *r, uint64_t tid)
{
	uint64_t	k = tid + 1;
	uint64_t	h = mix64(k) & (r->hcap - 1);

	while (r->hkeys[h] != 0 && r->hkeys[h] != k)
		h = (h + 1) & (r->hcap - 1);
	return h;
}

/* ------------------------------------------------ the xid dictionary */

static uint32_t
dict_hash(uint32_t xid)
{
	return (uint32_t) mix64(xid);
}

static bool
dict_rehash(Replica *r, uint32_t ncap)
{
	uint32_t   *nh = calloc(ncap, sizeof(uint32_t));
	uint32_t	i;

	if (nh == NULL)
		return false;
	free(r->dhash);
	r->dhash = nh;
	r->dhcap = ncap;
	for (i = WARP_XIDX_FIRST; i < r->ndict; i++)
	{
		uint32_t	h = dict_hash(r->dict[i]) & (ncap - 1);

		while (nh[h] != 0)
			h = (h + 1) & (ncap - 1);
		nh[h] = i + 1;
	}
	return true;
}

static bool
dict_init(Replica *r)
{
	r->dcap = 1024;
	r->dict = calloc(r->dcap, sizeof(uint32_t));
	if (r->dict == NULL)
		return false;
	r->ndict = WARP_XIDX_FIRST;
	return dict_rehash(r, 2048);
}

/* the entry of xid, added if new; UINT32_MAX when out of memory */
static uint32_t
dict_entry(Replica *r, uint32_t xid)
{
	uint32_t	h;

	if (xid == 0)
		return WARP_XIDX_NONE;
	if (xid <= 2)				/* bootstrap, frozen */
		return WARP_XIDX_FROZEN;
	h = dict_hash(xid) & (r->dhcap - 1);
	while (r->dhash[h] != 0)
	{
		if (r->dict[r->dhash[h] - 1] == xid)
			return r->dhash[h] - 1;
		h = (h + 1) & (r->dhcap - 1);
	}
	if (r->ndict == r->dcap)
	{
		if (!grow(&r->dict, r->dcap, (int64_t) r->dcap * 2, sizeof(uint32_t)))
			return UINT32_MAX;
		r->dcap *= 2;
	}
	r->dict[r->ndict] = xid;
	r->dhash[h] = r->ndict + 1;
	r->ndict++;
	if ((uint64_t) r->ndict * 2 > r->dhcap && !dict_rehash(r, r->dhcap * 2))
		return UINT32_MAX;
	return r->ndict - 1;
}

/* ---------------------------------------------------------- records */

static bool
ensure_rows(Replica *r, int64_t need)
{
	int64_t		ncap;
	int			c;

	if (need <= r->cap)
		return true;
	ncap = r->cap ? r->cap : TCACHE_SLICE;
	while (ncap < need)
		ncap *= 2;
	for (c = 0; c < r->ncols; c++)
		if (!grow(&r->vals[c], r->cap, ncap, 8) ||
			!grow(&r->valid[c], r->cap / 8, ncap / 8, 1))
			return false;
	if (!grow(&r->xmin, r->cap, ncap, 4) || !grow(&r->cmin, r->cap, ncap, 4) ||
		!grow(&r->xmax, r->cap, ncap, 4) || !grow(&r->cmax, r->cap, ncap, 4) ||
		!grow(&r->raw_xmin, r->cap, ncap, 4) || !grow(&r->tid, r->cap, ncap, 8) ||
		!grow(&r->gone, r->cap, ncap, 1))
		return false;
	r->cap = ncap;
	return true;
}

/* apply one record; false when out of memory */
static bool
apply_rec(Replica *r, const GpudCacheRec *rec)
{
	uint64_t	tid = ((uint64_t) rec->block << 16) | rec->offset;
	uint64_t	h;

	if (r->hcount * 4 + 4 > r->hcap * 3 &&
		!hash_resize(r, r->hcap ? r->hcap * 2 : 1 << 16))
		return false;
	h = hash_slot(r, tid);
	if (rec->op == GPUD_REC_DELETE)
	{
		uint32_t	j,
					e;

		if (r->hkeys[h] == 0)
			return true;		/* a version no snapshot can see any more */
		j = r->hrows[h];
		if (r->gone[j] || r->raw_xmin[j] != rec->raw_xmin)
			return true;		/* an older version at the tid */
		if ((e = dict_entry(r, rec->xmax)) == UINT32_MAX)
			return false;
		r->xmax[j] = e;
		r->cmax[j] = rec->cmax;
		return true;
	}
	else
	{
		const uint8_t *nulls = (const uint8_t *) (rec + 1);
		const uint64_t *vals = (const uint64_t *) (nulls + ((r->ncols + 63) / 64) * 8);
		int64_t		i = r->n;
		uint32_t	ex,
					ey;
		int			c;

		if (!ensure_rows(r, i + 1))
			return false;
		if ((ex = dict_entry(r, rec->xmin)) == UINT32_MAX ||
			(ey = dict_entry(r, rec->xmax)) == UINT32_MAX)
			return false;
		if (r->hkeys[h] != 0 && !r->gone[r->hrows[h]])
		{
			r->gone[r->hrows[h]] = 1;
			r->ngone++;
		}
		for (c = 0; c < r->ncols; c++)
		{
			bool		isnull = (nulls[c >> 3] >> (c & 7)) & 1;

			r->vals[c][i] = isnull ? 0 : vals[c];
			if (isnull)
			{
				r->valid[c][i >> 3] &= (uint8_t) ~(1 << (i & 7));
				r->nnull[c]++;
			}
			else
				r->valid[c][i >> 3] |= (uint8_t) (1 << (i & 7));
		}
		r->xmin[i] = ex;
		r->cmin[i] = rec->cmin;
		r->xmax[i] = ey;
		r->cmax[i] = rec->cmax;
		r->raw_xmin[i] = rec->raw_xmin;
		r->tid[i] = tid;
		r->gone[i] = 0;
		if (r->hkeys[h] == 0)
			r->hcount++;
		r->hkeys[h] = tid + 1;
		r->hrows[h] = (uint32_t) i;
		r->n = i + 1;
		return true;
	}
}

/*
 * Walk the nrecs records in data[0 .. len): each checked to lie inside.
 * NULL, or what is wrong.
 */
static const char *
apply_recs(Replica *r, const uint8_t *data, uint64_t len, int64_t nrecs, bool *oom)
{
	uint64_t	pos = 0;
	int64_t		k;

	*oom = false;
	for (k = 0; k < nrecs; k++)
	{
		const GpudCacheRec *rec;
		uint64_t	sz;

		if (len - pos < sizeof(GpudCacheRec))
			return "row change record outside the request";
		rec = (const GpudCacheRec *) (data + pos);
		if (rec->op != GPUD_REC_INSERT && rec->op != GPUD_REC_DELETE)
			return "row change record of an unknown kind";
		sz = gpud_cache_rec_size(rec->op, r->ncols);
		if (len - pos < sz)
			return "row change record outside the request";
		if (!apply_rec(r, rec))
		{
			*oom = true;
			return NULL;
		}
		pos += sz;
	}
	return NULL;
}

/* --------------------------------------------------------- registry */

/* the replica slot of (db, rel), or -1; under registry_lock */
static int
find_slot(const GpudCacheKey *key)
{
	int			i;

	for (i = 0; i < MAX_REPLICAS; i++)
		if (replicas[i] && replicas[i]->key.db == key->db && replicas[i]->key.rel == key->rel)
			return i;
	return -1;
}

static bool
same_key(const GpudCacheKey *a, const GpudCacheKey *b)
{
	return a->db == b->db && a->rel == b->rel && a->relfilenode == b->relfilenode &&
		a->layout == b->layout && a->epoch == b->epoch;
}

/* the replica registered for (db, rel), taken out of the registry if remove */
static Replica *
registered(const GpudCacheKey *key, bool remove)
{
	Replica    *r = NULL;
	int			i;

	pthread_mutex_lock(&registry_lock);
	i = find_slot(key);
	if (i >= 0)
	{
		r = replicas[i];
		if (remove)
			replicas[i] = NULL;
	}
	pthread_mutex_unlock(&registry_lock);
	return r;
}

/*
 * The replica of (db, rel), write-locked, or NULL.  (A dropped replica's
 * struct is never freed, so one looked up just before its drop is still a
 * lock to take; its identity is then cleared.)
 */
static Replica *
lookup_write(const GpudCacheKey *key)
{
	Replica    *r = registered(key, false);

	if (r)
		pthread_rwlock_wrlock(&r->lock);
	return r;
}

static void
drop_replica(const GpudCacheKey *key)
{
	Replica    *r = registered(key, true);

	if (r == NULL)
		return;
	pthread_rwlock_wrlock(&r->lock);	/* wait for queries on it */
	free_rows(r);
	/*
	 * The struct itself stays (a few hundred bytes): another thread may
	 * have looked it up and be waiting for its lock; it finds no identity.
	 */
	memset(&r->key, 0, sizeof(r->key));
	r->state = GPUD_CACHE_ABSENT;
	pthread_rwlock_unlock(&r->lock);
}

/*
 * Start loading key: a new empty replica (replacing any of another
 * identity), or NULL with *why when another backend is loading it now.
 */
static Replica *
load_begin(const GpudCacheReq *req, const uint8_t *kinds, char *why, size_t whylen)
{
	Replica    *r;
	int			i,
				c;

	pthread_mutex_lock(&registry_lock);
	i = find_slot(&req->key);
	if (i >= 0 && replicas[i]->state == GPUD_CACHE_LOADING &&
		same_key(&replicas[i]->key, &req->key) &&
		gpud_now_ms() - replicas[i]->load_touched_ms < LOADER_SILENT_MS)
	{
		pthread_mutex_unlock(&registry_lock);
		snprintf(why, whylen, "loading in another session");
		return NULL;
	}
	pthread_mutex_unlock(&registry_lock);
	drop_replica(&req->key);

	r = calloc(1, sizeof(Replica));
	if (r == NULL)
		return NULL;
	pthread_rwlock_init(&r->lock, NULL);
	r->key = req->key;
	snprintf(r->name, sizeof(r->name), "%.*s", (int) sizeof(req->name) - 1, req->name);
	r->state = GPUD_CACHE_LOADING;
	r->ncols = req->ncols;
	r->kinds = malloc(req->ncols + 1);
	r->vals = calloc(req->ncols + 1, sizeof(uint64_t *));
	r->valid = calloc(req->ncols + 1, sizeof(uint8_t *));
	r->nnull = calloc(req->ncols + 1, sizeof(int64_t));
	if (r->kinds == NULL || r->vals == NULL || r->valid == NULL || r->nnull == NULL ||
		!dict_init(r) || !hash_resize(r, 1 << 16))
	{
		free_rows(r);
		free(r);
		return NULL;
	}
	for (c = 0; c < req->ncols; c++)
		r->kinds[c] = kinds[c];
	r->load_touched_ms = gpud_now_ms();
	pthread_mutex_lock(&registry_lock);
	r->load_token = unique_id();
	r->dict_epoch = unique_id();
	i = find_slot(&req->key);
	if (i < 0)
		for (i = 0; i < MAX_REPLICAS && replicas[i]; i++)
			;
	if (i >= MAX_REPLICAS || replicas[i] != NULL)
	{
		pthread_mutex_unlock(&registry_lock);
		snprintf(why, whylen, "more than %d tables attached", MAX_REPLICAS);
		free_rows(r);
		pthread_rwlock_destroy(&r->lock);
		free(r);
		return NULL;
	}
	r->mem_limit = req->mem_limit;
	r->log_limit = req->log_limit;
	/* changes logged from here on are held; earlier ones the scan sees */
	r->load_from = gpud_tcache_ring_head();
	replicas[i] = r;
	pthread_mutex_unlock(&registry_lock);
	return r;
}

/*
 * Hold nrecs records (the first len bytes of data) that arrived while r
 * loads.  Only whole records are kept: a chunk of the change log may end
 * in padding, which must not sit between held records.
 */
static bool
hold_changes(Replica *r, const uint8_t *data, uint64_t len, int64_t nrecs, uint64_t log_limit)
{
	uint64_t	used = 0;
	int64_t		k;

	for (k = 0; k < nrecs; k++)
	{
		const GpudCacheRec *rec = (const GpudCacheRec *) (data + used);

		if (len - used < sizeof(GpudCacheRec) ||
			(rec->op != GPUD_REC_INSERT && rec->op != GPUD_REC_DELETE) ||
			len - used < gpud_cache_rec_size(rec->op, r->ncols))
			return false;
		used += gpud_cache_rec_size(rec->op, r->ncols);
	}
	if (r->pend_len + used > log_limit)
		return false;
	if (r->pend_len + used > r->pend_cap)
	{
		uint64_t	ncap = r->pend_cap ? r->pend_cap : 1 << 20;

		while (ncap < r->pend_len + used)
			ncap *= 2;
		if (!grow(&r->pend, r->pend_cap, ncap, 1))
			return false;
		r->pend_cap = ncap;
	}
	memcpy(r->pend + r->pend_len, data, used);
	r->pend_len += used;
	r->pend_recs += nrecs;
	return true;
}

/* ------------------------------------------------------------ stats */

static void *
make_stats(uint64_t *len)
{
	GpudCacheResp *resp;
	GpudCacheStat *st;
	int			n = 0,
				i;
	uint64_t	total;

	pthread_mutex_lock(&registry_lock);
	for (i = 0; i < MAX_REPLICAS; i++)
		n += replicas[i] != NULL;
	total = sizeof(GpudCacheResp) + (uint64_t) n * sizeof(GpudCacheStat);
	resp = calloc(1, total);
	if (resp == NULL)
	{
		pthread_mutex_unlock(&registry_lock);
		return NULL;
	}
	resp->magic = GPUD_MAGIC;
	resp->nstats = n;
	resp->off_stats = sizeof(GpudCacheResp);
	st = (GpudCacheStat *) (resp + 1);
	for (i = 0; i < MAX_REPLICAS; i++)
	{
		Replica    *r = replicas[i];

		if (r == NULL)
			continue;
		/* numbers read without the replica's lock: a moment's view */
		st->key = r->key;
		memcpy(st->name, r->name, sizeof(st->name));
		st->state = r->state;
		st->rows = r->n - r->ngone;
		st->bytes = (int64_t) r->bytes;
		st->pending = r->pend_recs;
		st->xids = r->ndict > WARP_XIDX_FIRST ? r->ndict - WARP_XIDX_FIRST : 0;
		memcpy(st->why, r->why, sizeof(st->why));
		st++;
	}
	pthread_mutex_unlock(&registry_lock);
	*len = total;
	return resp;
}

/* the XIDS response: state, and the dictionary while ready */
static void *
make_xids(const GpudCacheKey *key, uint64_t *len)
{
	GpudCacheResp *resp;
	Replica    *r = lookup_write(key);
	uint64_t	total = sizeof(GpudCacheResp);

	if (r && r->state == GPUD_CACHE_READY && same_key(&r->key, key))
		total += (uint64_t) r->ndict * 4;
	resp = calloc(1, total);
	if (resp == NULL)
	{
		if (r)
			pthread_rwlock_unlock(&r->lock);
		return NULL;
	}
	resp->magic = GPUD_MAGIC;
	resp->state = GPUD_CACHE_ABSENT;
	if (r && same_key(&r->key, key))
	{
		resp->state = r->state;
		memcpy(resp->why, r->why, sizeof(resp->why));
		if (r->state == GPUD_CACHE_READY)
		{
			resp->dict_epoch = r->dict_epoch;
			resp->nxids = r->ndict;
			resp->off_xids = sizeof(GpudCacheResp);
			memcpy(resp + 1, r->dict, (size_t) r->ndict * 4);
		}
	}
	if (r)
		pthread_rwlock_unlock(&r->lock);
	*len = total;
	return resp;
}

/* ----------------------------------------------------------- request */

/*
 * Records into r, write-locked: applied while it is ready, held while it
 * loads (if hold).  The error of a malformed record, or NULL.
 */
static const char *
take_records(Replica *r, const uint8_t *data, uint64_t len, int64_t nrecs, bool hold,
			 uint64_t log_limit, uint64_t mem_limit)
{
	const char *err = NULL;
	bool		oom = false;

	if (r->state == GPUD_CACHE_LOADING)
	{
		if (hold && !hold_changes(r, data, len, nrecs, log_limit))
			break_replica(r, "the change log overflowed while loading");
	}
	else if (r->state == GPUD_CACHE_READY)
	{
		err = apply_recs(r, data, len, nrecs, &oom);
		if (err)
			break_replica(r, "a malformed change arrived");
		else if (oom || !account(r, mem_limit))
			break_for_memory(r);
	}
	return err;
}

/* the request's changes into its replica (held while it loads) */
static void
take_changes(const GpudCacheReq *req, const uint8_t *data, char *bad, size_t badlen)
{
	Replica    *r = lookup_write(&req->key);
	const char *err;

	bad[0] = '\0';
	if (r == NULL)
		return;					/* nothing cached: nothing to keep current */
	/* (changes of another identity: that replica reloads) */
	if (same_key(&r->key, &req->key) && r->ncols == req->ncols &&
		(err = take_records(r, data, req->len_data, req->nrecs, true, req->log_limit,
							req->mem_limit)) != NULL)
		snprintf(bad, badlen, "%s", err);
	pthread_rwlock_unlock(&r->lock);
}

void
gpud_tcache_apply_logged(const GpudCacheKey *key, int ncols, const uint8_t *data,
						 uint64_t len, int64_t nrecs, uint64_t pos)
{
	Replica    *r = lookup_write(key);

	if (r == NULL)
		return;					/* nothing cached: nothing to keep current */
	/* while loading, chunks before load_from describe what the scan sees */
	if (same_key(&r->key, key) && r->ncols == ncols)
		(void) take_records(r, data, len, nrecs, pos >= r->load_from, r->log_limit,
							r->mem_limit);
	pthread_rwlock_unlock(&r->lock);
}

void
gpud_tcache_break_all(const char *why)
{
	int			i;

	for (i = 0; i < MAX_REPLICAS; i++)
	{
		Replica    *r;

		pthread_mutex_lock(&registry_lock);
		r = replicas[i];
		pthread_mutex_unlock(&registry_lock);
		if (r == NULL)
			continue;
		pthread_rwlock_wrlock(&r->lock);
		if (r->state != GPUD_CACHE_ABSENT)
			break_replica(r, why);
		pthread_rwlock_unlock(&r->lock);
	}
}

/* LOAD_ROWS and LOAD_END of the load with req's token */
static void
take_load(const GpudCacheReq *req, const uint8_t *data, GpudCacheResp *resp)
{
	Replica    *r = lookup_write(&req->key);
	bool		oom = false;
	const char *err = NULL;

	resp->state = GPUD_CACHE_ABSENT;
	if (r == NULL)
		return;
	if (r->state != GPUD_CACHE_LOADING || r->load_token != req->load_token ||
		!same_key(&r->key, &req->key))
	{
		snprintf(resp->why, sizeof(resp->why), "another session took the load over");
		resp->state = r->state;
		pthread_rwlock_unlock(&r->lock);
		return;
	}
	r->load_touched_ms = gpud_now_ms();
	if (req->op == GPUD_CACHE_LOAD_ROWS)
		err = apply_recs(r, data, req->len_data, req->nrecs, &oom);
	else
	{
		/* the changes held while the scan ran, in arrival order */
		err = apply_recs(r, r->pend, r->pend_len, r->pend_recs, &oom);
		free(r->pend);
		r->pend = NULL;
		r->pend_len = r->pend_cap = 0;
		r->pend_recs = 0;
		if (!err && !oom)
			r->state = GPUD_CACHE_READY;
	}
	if (err)
		break_replica(r, err);
	else if (oom || !account(r, req->mem_limit))
		break_for_memory(r);
	resp->state = r->state;
	memcpy(resp->why, r->why, sizeof(resp->why));
	pthread_rwlock_unlock(&r->lock);
}

GpudJobOutcome
gpud_tcache_request(uint8_t *arena, uint64_t arena_size, void **result,
					uint64_t *result_len, char *why, size_t whylen)
{
	GpudCacheReq *req = gpud_at(arena, arena_size, WARP_ARENA_JOB_OFF, sizeof(GpudCacheReq));
	const uint8_t *data = NULL;
	const uint8_t *kinds = NULL;
	GpudCacheResp *resp;
	int			c;

#define BAD(msg) do { snprintf(why, whylen, "%s", msg); return GPUD_JOB_BAD; } while (0)
	if (req == NULL || req->magic != GPUD_MAGIC || req->version != GPUD_VERSION)
		BAD("cache request has a wrong magic number or version");
	if (req->ncols < 0 || req->ncols > GPUD_CACHE_MAX_COLS)
		BAD("cache request with a wrong number of columns");
	if (req->len_data > 0 &&
		(data = gpud_at(arena, arena_size, req->off_data, req->len_data)) == NULL)
		BAD("cache request data outside the arena");
	if (req->nrecs < 0 || (req->nrecs > 0 && data == NULL))
		BAD("cache request records outside the arena");
	if (req->op == GPUD_CACHE_LOAD_BEGIN)
	{
		if ((kinds = gpud_at(arena, arena_size, req->off_kinds, req->ncols)) == NULL)
			BAD("cache request column kinds outside the arena");
		for (c = 0; c < req->ncols; c++)
			if (kinds[c] != GPUD_CACHE_COL_INT64 && kinds[c] != GPUD_CACHE_COL_DOUBLE)
				BAD("cache request with an unknown column kind");
	}
	if (req->op == GPUD_CACHE_STATS)
	{
		*result = make_stats(result_len);
		if (*result == NULL)
			BAD("out of memory");
		return GPUD_JOB_DONE;
	}
	if (req->op == GPUD_CACHE_XIDS)
	{
		/* every change the query's snapshot may see, applied first */
		if (req->ring_upto > 0 && !gpud_tcache_ring_active())
			BAD("pg_warp_gpud does not read the GPU table cache's change log");
		if (req->ring_upto > 0 && !gpud_tcache_ring_drain(req->ring_upto, 5000.0))
			BAD("the change log was not applied in time");
		*result = make_xids(&req->key, result_len);
		if (*result == NULL)
			BAD("out of memory");
		return GPUD_JOB_DONE;
	}
	resp = calloc(1, sizeof(GpudCacheResp));
	if (resp == NULL)
		BAD("out of memory");
	resp->magic = GPUD_MAGIC;
	switch (req->op)
	{
		case GPUD_CACHE_LOAD_BEGIN:
			{
				Replica    *r = load_begin(req, kinds, resp->why, sizeof(resp->why));

				if (r == NULL)
				{
					resp->state = GPUD_CACHE_BROKEN;
					if (resp->why[0] == '\0')
						snprintf(resp->why, sizeof(resp->why), "out of memory");
					break;
				}
				resp->state = GPUD_CACHE_LOADING;
				resp->load_token = r->load_token;
				break;
			}
		case GPUD_CACHE_LOAD_ROWS:
		case GPUD_CACHE_LOAD_END:
			take_load(req, data, resp);
			break;
		case GPUD_CACHE_CHANGES:
			take_changes(req, data, resp->why, sizeof(resp->why));
			if (resp->why[0])
			{
				snprintf(why, whylen, "%s", resp->why);
				free(resp);
				return GPUD_JOB_BAD;
			}
			break;
		case GPUD_CACHE_DROP:
			drop_replica(&req->key);
			break;
		default:
			free(resp);
			BAD("unknown cache request");
	}
#undef BAD
	*result = resp;
	*result_len = sizeof(GpudCacheResp);
	return GPUD_JOB_DONE;
}

/* ------------------------------------------------------------ queries */

Replica *
gpud_tcache_acquire(const GpudCacheKey *key, uint64_t dict_epoch, char *why, size_t whylen)
{
	Replica    *r = registered(key, false);

	if (r == NULL)
	{
		snprintf(why, whylen, "not loaded");
		return NULL;
	}
	pthread_rwlock_rdlock(&r->lock);
	if (!same_key(&r->key, key) || r->state != GPUD_CACHE_READY || r->dict_epoch != dict_epoch)
	{
		snprintf(why, whylen, r->dict_epoch != dict_epoch ? "dictionary changed" : "not loaded");
		pthread_rwlock_unlock(&r->lock);
		return NULL;
	}
	return r;
}

void
gpud_tcache_release(Replica *r)
{
	pthread_rwlock_unlock(&r->lock);
}

/* drop gone versions, renumbering the tid index; under the write lock */
static void
drop_gone(Replica *r)
{
	int64_t		i,
				k = 0;
	int			c;

	for (c = 0; c < r->ncols; c++)
		r->nnull[c] = 0;
	for (i = 0; i < r->n; i++)
	{
		if (r->gone[i])
			continue;
		for (c = 0; c < r->ncols; c++)
		{
			bool		v = (r->valid[c][i >> 3] >> (i & 7)) & 1;

			r->vals[c][k] = r->vals[c][i];
			if (v)
				r->valid[c][k >> 3] |= (uint8_t) (1 << (k & 7));
			else
			{
				r->valid[c][k >> 3] &= (uint8_t) ~(1 << (k & 7));
				r->nnull[c]++;
			}
		}
		r->xmin[k] = r->xmin[i];
		r->cmin[k] = r->cmin[i];
		r->xmax[k] = r->xmax[i];
		r->cmax[k] = r->cmax[i];
		r->raw_xmin[k] = r->raw_xmin[i];
		r->tid[k] = r->tid[i];
		r->gone[k] = 0;
		k++;
	}
	r->n = k;
	r->ngone = 0;
	if (!hash_resize(r, r->hcap))
		break_replica(r, "out of memory compacting");
}

void
gpud_tcache_compact(const GpudCacheKey *key, uint64_t dict_epoch,
					const uint8_t *classes, uint32_t nclasses)
{
	Replica    *r;
	uint32_t   *map;
	uint32_t	e,
				nd = WARP_XIDX_FIRST,
				settled = 0;
	int64_t		i;

	for (e = WARP_XIDX_FIRST; e < nclasses; e++)
		settled += (classes[e] & (WARP_XID_ALL_COMMITTED | WARP_XID_ALL_ABORTED)) != 0;
	if (settled == 0)
		return;
	r = lookup_write(key);
	if (r == NULL)
		return;
	if (!same_key(&r->key, key) || r->state != GPUD_CACHE_READY ||
		r->dict_epoch != dict_epoch || nclasses > r->ndict ||
		(map = malloc(sizeof(uint32_t) * r->ndict)) == NULL)
	{
		pthread_rwlock_unlock(&r->lock);
		return;
	}
	map[WARP_XIDX_FROZEN] = WARP_XIDX_FROZEN;
	map[WARP_XIDX_NONE] = WARP_XIDX_NONE;
	for (e = WARP_XIDX_FIRST; e < r->ndict; e++)
	{
		uint8_t		cl = e < nclasses ? classes[e] : 0;

		if (cl & WARP_XID_ALL_COMMITTED)
			map[e] = WARP_XIDX_FROZEN;
		else if (cl & WARP_XID_ALL_ABORTED)
			map[e] = WARP_XIDX_NONE;
		else
		{
			r->dict[nd] = r->dict[e];
			map[e] = nd++;
		}
	}
	r->ndict = nd;
	for (i = 0; i < r->n; i++)
	{
		if (r->gone[i])
			continue;
		r->xmin[i] = map[r->xmin[i]];
		r->xmax[i] = map[r->xmax[i]];
		/* inserter aborted, or deleter committed, for every snapshot */
		if (r->xmin[i] == WARP_XIDX_NONE || r->xmax[i] == WARP_XIDX_FROZEN)
		{
			r->gone[i] = 1;
			r->ngone++;
		}
	}
	free(map);
	pthread_mutex_lock(&registry_lock);
	r->dict_epoch = unique_id();
	pthread_mutex_unlock(&registry_lock);
	if (!dict_rehash(r, r->dhcap))
		break_replica(r, "out of memory compacting");
	else if (r->ngone > 1024 && r->ngone * 4 > r->n)
		drop_gone(r);
	pthread_rwlock_unlock(&r->lock);
}
