/*
 * warp_group_merge.c — merge the partial groups of several drivers
 * (warp_group_merge.h).
 *
 * Three steps, the first and last on several threads:
 *	1. per chunk of a source's groups: hash each group, count the groups of
 *	   each partition (the hash's top bits);
 *	2. (serial) turn the counts into positions, so that within a partition
 *	   the groups stay in source and chunk order; then per chunk again:
 *	   write each group's index at its partition's next position;
 *	3. per partition: an open-addressing table of that partition's merged
 *	   groups (keys, NULL flags, combined states), grown by doubling.
 * Partitions are independent, so step 3 needs no lock; a group's states
 * are combined in source order (the order PostgreSQL's Finalize step
 * would see them in does not exist either: workers finish in any order).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "warp_group_merge.h"
#include "warp_threads.h"
#include "warp_ops_float.h"
#include "warp_ops_text.h"

/* groups per step-1 task */
#define MERGE_CHUNK 65536
/* below this many groups in all, one partition (no threads) */
#define MERGE_SMALL 16384
/* the sample partition decides only from this many groups on */
#define MERGE_SAMPLE_MIN 1024

/* why a merge was abandoned (WarpGroupMerge.failed) */
enum
{
	MERGE_OK = 0,
	MERGE_OVERFLOW,
	MERGE_NOMEM,
	MERGE_NOSTRING
};

typedef struct MergeChunk
{
	int			src;
	warp_int64	start;
	warp_int64	end;
} MergeChunk;

typedef struct MergePart
{
	warp_int64	n;				/* merged groups */
	warp_uint64 *ref;			/* n: source << 32 | group there (its first) */
	warp_uint64 *hash;			/* n */
	warp_int32 *comb;			/* n: its combined states in states[], or -1
								 * while only one source group has it */
	warp_int64	ncomb;
	warp_int64	combcap;
	WarpAggState *states;		/* combcap * naggs */
} MergePart;

struct WarpGroupMerge
{
	const WarpProgram *p;
	int			nkeys;
	int			naggs;
	bool	   *is_text;		/* nkeys, or NULL */
	WarpGroupSource *src;
	int			nsrc;
	int			bits;			/* partition = hash >> (64 - bits) */
	int			nparts;
	MergePart  *parts;
	warp_int64 *start;			/* nparts + 1: first merged group of each */
	int			cur;			/* partition of the group read last */
	int			drop_key;		/* regroup: the key left out ... */
	int			count_agg;		/* ... and the aggregate counting its values */

	/* work arrays, freed once merged */
	MergeChunk *chunks;
	int			nchunks;
	warp_uint64 **hashes;		/* per source: per group */
	warp_int64 *pos;			/* nchunks * nparts */
	warp_int64 *pstart;			/* nparts + 1: first entry of each */
	warp_uint32 *entries;		/* group indexes, by partition */
	int			failed;			/* MERGE_* (atomic) */
};

/* ------------------------------------------------------------ combining */

bool
warp_agg_combine(const WarpProgram *p, const WarpAggSpec *ag, WarpAggState *a,
				 const WarpAggState *b)
{
	WarpType	t = ag->arg >= 0 ? (WarpType) p->nodes[ag->arg].type : WT_INT8;

	if (b->count == 0)
		return true;
	if (a->count == 0)
	{
		*a = *b;
		return true;
	}
	switch ((WarpAggKind) ag->kind)
	{
		case WA_COUNT_STAR:
		case WA_COUNT:
			break;
		case WA_SUM_INT:
			/* int8pl, which raises "bigint out of range" */
			if (__builtin_add_overflow(a->ival, b->ival, &a->ival))
				return false;
			break;
		case WA_AVG_INT:
			/* int4_avg_combine: plain int64 additions */
			a->ival = (warp_int64) ((warp_uint64) a->ival + (warp_uint64) b->ival);
			break;
		case WA_SUM_INT8:
			/* int8_avg_combine: 128-bit addition */
			warp_agg_set_wide(a, (warp_int128) ((warp_uint128) warp_agg_wide(a) +
												(warp_uint128) warp_agg_wide(b)));
			break;
		case WA_SUM_NUMERIC:
			{
				/* 192-bit two's complement addition (wide_top: bits 128..191) */
				warp_uint128 la = ((warp_uint128) (warp_uint64) a->wide_hi << 64) | a->wide_lo;
				warp_uint128 lb = ((warp_uint128) (warp_uint64) b->wide_hi << 64) | b->wide_lo;
				warp_uint128 sum = la + lb;

				a->wide_top = (warp_int64) ((warp_uint64) a->wide_top + (warp_uint64) b->wide_top +
											(sum < la ? 1 : 0));
				a->wide_lo = (warp_uint64) sum;
				a->wide_hi = (warp_int64) (warp_uint64) (sum >> 64);
				break;
			}
		case WA_MIN:
		case WA_MAX:
			if (t == WT_NUMERIC)
			{
				warp_int128 va = warp_agg_wide(a),
							vb = warp_agg_wide(b);

				if (ag->kind == WA_MIN ? vb < va : vb > va)
					warp_agg_set_wide(a, vb);
			}
			else if (WARP_TYPE_IS_FLOAT(t))
			{
				/* float8smaller(a, b): a if a < b, else b (and larger) */
				bool		keep = ag->kind == WA_MIN ? warp_float8_lt(a->fval, b->fval)
					: warp_float8_gt(a->fval, b->fval);

				if (!keep)
					a->fval = b->fval;
			}
			else if (ag->kind == WA_MIN ? b->ival < a->ival : b->ival > a->ival)
				a->ival = b->ival;
			break;
		case WA_SUM_FLOAT:
			if (t == WT_FLOAT4)
			{
				warp_float4 r;

				if (warp_float4_pl((warp_float4) a->fval, (warp_float4) b->fval, &r) != WARP_OK)
					return false;
				a->fval = r;
			}
			else if (warp_float8_pl(a->fval, b->fval, &a->fval) != WARP_OK)
				return false;
			break;
		case WA_AVG_FLOAT:
			{
				/* float8_combine (Youngs-Cramer) */
				double		N1 = (double) a->count,
							N2 = (double) b->count,
							Sx1 = a->fval,
							Sx2 = b->fval,
							Sxx1 = a->fsxx,
							Sxx2 = b->fsxx,
							N = N1 + N2,
							Sx,
							tmp,
							Sxx;

				if (warp_float8_pl(Sx1, Sx2, &Sx) != WARP_OK)
					return false;
				tmp = Sx1 / N1 - Sx2 / N2;
				Sxx = Sxx1 + Sxx2 + N1 * N2 * tmp * tmp / N;
				if (isinf(Sxx) && !isinf(Sxx1) && !isinf(Sxx2))
					return false;
				a->fval = Sx;
				a->fsxx = Sxx;
				break;
			}
	}
	/* int8pl for the counts (int8inc's combine) */
	if (__builtin_add_overflow(a->count, b->count, &a->count))
		return false;
	return true;
}

/* ------------------------------------------------------------- hashing */

static void
fail(WarpGroupMerge *m, int why)
{
	__atomic_store_n(&m->failed, why, __ATOMIC_RELAXED);
}

static bool
failed(WarpGroupMerge *m)
{
	return __atomic_load_n(&m->failed, __ATOMIC_RELAXED) != MERGE_OK;
}

const char	warp_merge_no_memory[] = "out of memory";

/* why a step failed, from m->failed (MERGE_OK: NULL) */
static const char *
failure_text(const WarpGroupMerge *m)
{
	switch (m->failed)
	{
		case MERGE_OK:
			return NULL;
		case MERGE_OVERFLOW:
			return "a combined state would overflow";
		case MERGE_NOMEM:
			return warp_merge_no_memory;
	}
	return "a text key has no string";
}

static const warp_uint8 *
key_text(const WarpGroupMerge *m, int s, int k, warp_int64 id, warp_int64 *len)
{
	const WarpGroupSource *src = &m->src[s];

	if (src->text == NULL)
		return NULL;
	return src->text(src->text_ctx, k, id, len);
}

/* group i of source s: its hash, or false when a text key has no string */
static bool
group_hash(const WarpGroupMerge *m, int s, warp_int64 i, int drop, warp_uint64 *hash)
{
	const warp_int64 *kv = m->src[s].keys + i * m->nkeys;
	const warp_uint8 *kn = m->src[s].nulls + i * m->nkeys;
	warp_uint64 h = WARP_HASH_SEED;
	int			k;

	for (k = 0; k < m->nkeys; k++)
	{
		warp_uint64 v;

		if (k == drop)
			continue;
		if (kn[k])
			v = UINT64_C(0x5bd1e9955bd1e995);
		else if (m->is_text && m->is_text[k])
		{
			warp_int64	len;
			const warp_uint8 *str = key_text(m, s, k, kv[k], &len);

			if (str == NULL || len < 0 || len > WARP_INT32_MAX)
				return false;
			v = warp_hash_bytes(str, (warp_int32) len);
		}
		else
			v = warp_hash_int64(kv[k]);
		h = warp_hash_combine(h, v);
	}
	*hash = h;
	return true;
}

static inline int
part_of(const WarpGroupMerge *m, warp_uint64 h)
{
	return m->bits == 0 ? 0 : (int) (h >> (64 - m->bits));
}

/* step 1: hash a chunk's groups and count them by partition */
static void
hash_chunk(void *arg, int c)
{
	WarpGroupMerge *m = arg;
	const MergeChunk *ch = &m->chunks[c];
	warp_uint64 *hs = m->hashes[ch->src];
	warp_int64 *cnt = m->pos + (warp_int64) c * m->nparts;
	warp_int64	i;

	if (failed(m))
		return;
	for (i = ch->start; i < ch->end; i++)
	{
		if (!group_hash(m, ch->src, i, -1, &hs[i]))
		{
			fail(m, MERGE_NOSTRING);
			return;
		}
		cnt[part_of(m, hs[i])]++;
	}
}

/* step 2: write a chunk's group indexes at their partitions' positions */
static void
scatter_chunk(void *arg, int c)
{
	WarpGroupMerge *m = arg;
	const MergeChunk *ch = &m->chunks[c];
	const warp_uint64 *hs = m->hashes[ch->src];
	warp_int64 *pos = m->pos + (warp_int64) c * m->nparts;
	warp_int64	i;

	for (i = ch->start; i < ch->end; i++)
		m->entries[pos[part_of(m, hs[i])]++] = (warp_uint32) i;
}

/* ------------------------------------------------------------- merging */

#define REF_SRC(r)	((int) ((r) >> 32))
#define REF_IDX(r)	((warp_int64) ((r) & UINT32_MAX))

static bool
same_key(const WarpGroupMerge *m, warp_uint64 ref, int s, warp_int64 i, int drop)
{
	int			sa = REF_SRC(ref);
	const warp_int64 *ka = m->src[sa].keys + REF_IDX(ref) * m->nkeys;
	const warp_uint8 *na = m->src[sa].nulls + REF_IDX(ref) * m->nkeys;
	const warp_int64 *kb = m->src[s].keys + i * m->nkeys;
	const warp_uint8 *nb = m->src[s].nulls + i * m->nkeys;
	int			k;

	for (k = 0; k < m->nkeys; k++)
	{
		if (k == drop)
			continue;
		if ((na[k] != 0) != (nb[k] != 0))
			return false;
		if (na[k])
			continue;
		if (m->is_text && m->is_text[k] && sa != s)
		{
			/* ids of different sources: compare the strings */
			warp_int64	la,
						lb;
			const warp_uint8 *pa = key_text(m, sa, k, ka[k], &la);
			const warp_uint8 *pb = key_text(m, s, k, kb[k], &lb);

			if (pa == NULL || pb == NULL || la != lb || memcmp(pa, pb, (size_t) la) != 0)
				return false;
		}
		else if (ka[k] != kb[k])
			return false;
	}
	return true;
}

/* a combined-state slot for merged group g of pt, holding its first
 * source group's states; -1 on no memory */
static warp_int32
comb_slot(const WarpGroupMerge *m, MergePart *pt, warp_int64 g)
{
	int			na = m->naggs;
	const WarpGroupSource *src = &m->src[REF_SRC(pt->ref[g])];
	warp_int64	i = REF_IDX(pt->ref[g]);
	warp_int64	c;
	int			a;

	if (pt->ncomb == pt->combcap)
	{
		warp_int64	cap = pt->combcap > 0 ? pt->combcap * 2 : 256;
		WarpAggState *st;

		if (cap > WARP_INT32_MAX)
			return -1;
		st = realloc(pt->states, sizeof(WarpAggState) * (size_t) (na > 0 ? na : 1) * (size_t) cap);
		if (st == NULL)
			return -1;
		pt->states = st;
		pt->combcap = cap;
	}
	c = pt->ncomb++;
	for (a = 0; a < na; a++)
		pt->states[c * na + a] = src->aggs[a][i * src->stride];
	pt->comb[g] = (warp_int32) c;
	return (warp_int32) c;
}

/*
 * step 3: merge partition q's groups.  A merged group refers to the first
 * source group with its key; only a key met again gets states of its own
 * (comb), so groups seen once (most of them, when keys rarely repeat
 * across threads) cost no copy.
 */
static void
merge_part(void *arg, int q)
{
	WarpGroupMerge *m = arg;
	MergePart  *pt = &m->parts[q];
	warp_int64	n = m->pstart[q + 1] - m->pstart[q];
	warp_uint64 cap = 16,
				mask;
	warp_int32 *slots;
	int			na = m->naggs;
	int			c;

	if (failed(m) || n == 0)
		return;
	if (n > WARP_INT32_MAX / 2)
	{
		fail(m, MERGE_NOMEM);	/* group numbers are int32 */
		return;
	}
	while (cap < (warp_uint64) n * 2)
		cap *= 2;
	mask = cap - 1;
	slots = malloc(sizeof(warp_int32) * cap);
	pt->ref = malloc(sizeof(warp_uint64) * (size_t) n);
	pt->hash = malloc(sizeof(warp_uint64) * (size_t) n);
	pt->comb = malloc(sizeof(warp_int32) * (size_t) n);
	if (slots == NULL || pt->ref == NULL || pt->hash == NULL || pt->comb == NULL)
	{
		free(slots);
		fail(m, MERGE_NOMEM);
		return;
	}
	memset(slots, 0xff, sizeof(warp_int32) * cap);

	for (c = 0; c < m->nchunks; c++)
	{
		const MergeChunk *ch = &m->chunks[c];
		const WarpGroupSource *src = &m->src[ch->src];
		const warp_uint64 *hs = m->hashes[ch->src];
		warp_int64	first = c == 0 ? m->pstart[q] : m->pos[(warp_int64) (c - 1) * m->nparts + q];
		warp_int64	last = m->pos[(warp_int64) c * m->nparts + q];
		warp_int64	e;

		if (failed(m))
			break;
		for (e = first; e < last; e++)
		{
			warp_int64	i = m->entries[e];
			warp_uint64 h = hs[i];
			warp_uint64 s = h & mask;
			warp_int32	g,
						cs;
			int			a;

			for (;;)
			{
				g = slots[s];
				if (g < 0 || (pt->hash[g] == h && same_key(m, pt->ref[g], ch->src, i, -1)))
					break;
				s = (s + 1) & mask;
			}
			if (g < 0)
			{
				g = (warp_int32) pt->n++;
				slots[s] = g;
				pt->hash[g] = h;
				pt->ref[g] = ((warp_uint64) ch->src << 32) | (warp_uint64) i;
				pt->comb[g] = -1;
				continue;
			}
			cs = pt->comb[g] >= 0 ? pt->comb[g] : comb_slot(m, pt, g);
			if (cs < 0)
			{
				fail(m, MERGE_NOMEM);
				break;
			}
			for (a = 0; a < na; a++)
				if (!warp_agg_combine(m->p, &m->p->aggs[a], &pt->states[(warp_int64) cs * na + a],
									  &src->aggs[a][i * src->stride]))
				{
					fail(m, MERGE_OVERFLOW);
					break;
				}
			if (failed(m))
				break;
		}
	}
	free(slots);
}

static void
merge_other_part(void *arg, int q)
{
	merge_part(arg, q + 1);
}

/* ------------------------------------------------------------ regroup */

/* merged group g's state of aggregate a */
static const WarpAggState *
part_state(const WarpGroupMerge *m, const MergePart *pt, warp_int64 g, int a)
{
	const WarpGroupSource *src = &m->src[REF_SRC(pt->ref[g])];

	if (pt->comb[g] >= 0)
		return &pt->states[(warp_int64) pt->comb[g] * m->naggs + a];
	return &src->aggs[a][REF_IDX(pt->ref[g]) * src->stride];
}

/*
 * Regroup partition q's merged groups by every key but m->drop_key: their
 * states combined, aggregate m->count_agg's counting the groups whose own
 * count is not 0 (each merged group is one distinct value of the dropped
 * key).  The partition's groups are replaced; each owns its states.
 */
static void
regroup_part(void *arg, int q)
{
	WarpGroupMerge *m = arg;
	MergePart  *pt = &m->parts[q];
	warp_int64	n = pt->n,
				g,
				nn = 0;
	int			na = m->naggs;
	warp_uint64 cap = 16,
				mask;
	warp_int32 *slots;
	warp_uint64 *ref,
			   *hash;
	warp_int32 *comb;
	WarpAggState *st;

	if (failed(m) || n == 0)
		return;
	while (cap < (warp_uint64) n * 2)
		cap *= 2;
	mask = cap - 1;
	slots = malloc(sizeof(warp_int32) * cap);
	ref = malloc(sizeof(warp_uint64) * (size_t) n);
	hash = malloc(sizeof(warp_uint64) * (size_t) n);
	comb = malloc(sizeof(warp_int32) * (size_t) n);
	st = malloc(sizeof(WarpAggState) * (size_t) (na > 0 ? na : 1) * (size_t) n);
	if (!slots || !ref || !hash || !comb || !st)
		fail(m, MERGE_NOMEM);
	else
		memset(slots, 0xff, sizeof(warp_int32) * cap);
	for (g = 0; g < n && !failed(m); g++)
	{
		int			s = REF_SRC(pt->ref[g]);
		warp_int64	i = REF_IDX(pt->ref[g]);
		warp_uint64 h,
					slot;
		warp_int32	r;
		int			a;

		if (!group_hash(m, s, i, m->drop_key, &h))
		{
			fail(m, MERGE_NOSTRING);
			break;
		}
		for (slot = h & mask;; slot = (slot + 1) & mask)
		{
			r = slots[slot];
			if (r < 0 || (hash[r] == h && same_key(m, ref[r], s, i, m->drop_key)))
				break;
		}
		if (r < 0)
		{
			r = (warp_int32) nn++;
			slots[slot] = r;
			hash[r] = h;
			ref[r] = pt->ref[g];
			comb[r] = r;
			for (a = 0; a < na; a++)
			{
				WarpAggState *t = &st[(warp_int64) r * na + a];

				*t = *part_state(m, pt, g, a);
				if (a == m->count_agg)
				{
					warp_int64	c = t->count > 0 ? 1 : 0;

					memset(t, 0, sizeof(*t));
					t->count = c;
				}
			}
			continue;
		}
		for (a = 0; a < na; a++)
		{
			const WarpAggState *b = part_state(m, pt, g, a);

			if (a == m->count_agg)
				st[(warp_int64) r * na + a].count += b->count > 0 ? 1 : 0;
			else if (!warp_agg_combine(m->p, &m->p->aggs[a], &st[(warp_int64) r * na + a], b))
			{
				fail(m, MERGE_OVERFLOW);
				break;
			}
		}
	}
	free(slots);
	if (failed(m))
	{
		free(ref);
		free(hash);
		free(comb);
		free(st);
		return;
	}
	/* the regrouped groups replace the merged ones */
	free(pt->ref);
	free(pt->hash);
	free(pt->comb);
	free(pt->states);
	pt->ref = ref;
	pt->hash = hash;
	pt->comb = comb;
	pt->states = st;
	pt->n = nn;
	pt->ncomb = pt->combcap = nn;
}

bool
warp_group_merge_regroup(WarpGroupMerge *m, int drop_key, int count_agg, int nthreads,
						 bool (*interrupted) (void *iarg), void *iarg, const char **why)
{
	int			q;

	if (drop_key < 0 || drop_key >= m->nkeys || count_agg < 0 || count_agg >= m->naggs)
	{
		*why = "bad regroup";
		return false;
	}
	m->drop_key = drop_key;
	m->count_agg = count_agg;
	if (warp_run_tasks(nthreads < 1 ? 1 : nthreads, m->nparts, regroup_part, m,
					   interrupted, iarg) != 0)
	{
		*why = "interrupted";
		return false;
	}
	if ((*why = failure_text(m)) != NULL)
		return false;
	for (q = 0; q < m->nparts; q++)
		m->start[q + 1] = m->start[q] + m->parts[q].n;
	m->cur = 0;
	return true;
}

/* ---------------------------------------------------------------- API */

static void
free_work(WarpGroupMerge *m)
{
	int			s;

	if (m->hashes)
		for (s = 0; s < m->nsrc; s++)
			free(m->hashes[s]);
	free(m->hashes);
	free(m->chunks);
	free(m->pos);
	free(m->pstart);
	free(m->entries);
	m->hashes = NULL;
	m->chunks = NULL;
	m->pos = NULL;
	m->pstart = NULL;
	m->entries = NULL;
}

void
warp_group_merge_free(WarpGroupMerge *m)
{
	int			q;

	if (m == NULL)
		return;
	free_work(m);
	if (m->parts)
		for (q = 0; q < m->nparts; q++)
		{
			free(m->parts[q].ref);
			free(m->parts[q].hash);
			free(m->parts[q].comb);
			free(m->parts[q].states);
		}
	free(m->parts);
	free(m->start);
	free(m->src);
	free(m->is_text);
	free(m);
}

static WarpGroupMerge *
give_up(WarpGroupMerge *m, const char **why, const char *reason)
{
	*why = reason;
	warp_group_merge_free(m);
	return NULL;
}

WarpGroupMerge *
warp_group_merge(const WarpProgram *p, const bool *is_text, const WarpGroupSource *src,
				 int nsrc, double max_kept, int nthreads,
				 bool (*interrupted) (void *iarg), void *iarg, const char **why)
{
	WarpGroupMerge *m = calloc(1, sizeof(WarpGroupMerge));
	warp_int64	total = 0,
				at;
	int			s,
				c,
				q,
				k;

	if (m == NULL)
		return give_up(m, why, warp_merge_no_memory);
	m->p = p;
	m->nkeys = p->nkeys;
	m->naggs = p->naggs;
	m->nsrc = nsrc;
	m->src = malloc(sizeof(WarpGroupSource) * (size_t) (nsrc > 0 ? nsrc : 1));
	if (m->src == NULL)
		return give_up(m, why, warp_merge_no_memory);
	if (nsrc > 0)
		memcpy(m->src, src, sizeof(WarpGroupSource) * (size_t) nsrc);
	for (k = 0; is_text != NULL && k < p->nkeys; k++)
		if (is_text[k])
		{
			m->is_text = malloc(sizeof(bool) * (size_t) p->nkeys);
			if (m->is_text == NULL)
				return give_up(m, why, warp_merge_no_memory);
			memcpy(m->is_text, is_text, sizeof(bool) * (size_t) p->nkeys);
			break;
		}

	/* chunks of every source */
	for (s = 0; s < nsrc; s++)
	{
		if (src[s].n < 0 || src[s].n > (warp_int64) UINT32_MAX)
			return give_up(m, why, "a source has too many groups");
		total += src[s].n;
		m->nchunks += (int) ((src[s].n + MERGE_CHUNK - 1) / MERGE_CHUNK);
	}
	if (nthreads < 1)
		nthreads = 1;
	m->bits = 0;
	if (total >= MERGE_SMALL)
		while (((1 << m->bits) < nthreads * 4 || m->bits < 6) && m->bits < 8)
			m->bits++;
	m->nparts = 1 << m->bits;
	m->chunks = malloc(sizeof(MergeChunk) * (size_t) (m->nchunks > 0 ? m->nchunks : 1));
	m->hashes = calloc((size_t) (nsrc > 0 ? nsrc : 1), sizeof(warp_uint64 *));
	m->pos = calloc((size_t) (m->nchunks > 0 ? m->nchunks : 1) * (size_t) m->nparts, sizeof(warp_int64));
	m->pstart = malloc(sizeof(warp_int64) * (size_t) (m->nparts + 1));
	m->entries = malloc(sizeof(warp_uint32) * (size_t) (total > 0 ? total : 1));
	m->parts = calloc((size_t) m->nparts, sizeof(MergePart));
	m->start = malloc(sizeof(warp_int64) * (size_t) (m->nparts + 1));
	if (!m->chunks || !m->hashes || !m->pos || !m->pstart || !m->entries || !m->parts || !m->start)
		return give_up(m, why, warp_merge_no_memory);
	c = 0;
	for (s = 0; s < nsrc; s++)
	{
		warp_int64	i;

		m->hashes[s] = malloc(sizeof(warp_uint64) * (size_t) (src[s].n > 0 ? src[s].n : 1));
		if (m->hashes[s] == NULL)
			return give_up(m, why, warp_merge_no_memory);
		for (i = 0; i < src[s].n; i += MERGE_CHUNK)
		{
			m->chunks[c].src = s;
			m->chunks[c].start = i;
			m->chunks[c].end = i + MERGE_CHUNK < src[s].n ? i + MERGE_CHUNK : src[s].n;
			c++;
		}
	}

	/* step 1, then positions: partition by partition, chunk by chunk */
	if (warp_run_tasks(nthreads, m->nchunks, hash_chunk, m, interrupted, iarg) != 0)
		return give_up(m, why, "interrupted");
	if (failed(m))
		return give_up(m, why, failure_text(m));
	at = 0;
	for (q = 0; q < m->nparts; q++)
	{
		m->pstart[q] = at;
		for (c = 0; c < m->nchunks; c++)
		{
			warp_int64 *pc = &m->pos[(warp_int64) c * m->nparts + q];
			warp_int64	cnt = *pc;

			*pc = at;
			at += cnt;
		}
	}
	m->pstart[m->nparts] = at;
	if (warp_run_tasks(nthreads, m->nchunks, scatter_chunk, m, interrupted, iarg) != 0)
		return give_up(m, why, "interrupted");

	/*
	 * step 3: partition 0 first, as a sample (1/64th of the groups or less
	 * once there are enough to need threads): where keys rarely repeat
	 * across sources, merging would only cost time.
	 */
	merge_part(m, 0);
	if (m->failed == MERGE_OK && max_kept < 1.0 &&
		m->pstart[1] - m->pstart[0] >= MERGE_SAMPLE_MIN &&
		(double) m->parts[0].n > max_kept * (double) (m->pstart[1] - m->pstart[0]))
		return give_up(m, why, "few groups repeat across threads or lanes");
	if (m->nparts > 1 &&
		warp_run_tasks(nthreads, m->nparts - 1, merge_other_part, m, interrupted, iarg) != 0)
		return give_up(m, why, "interrupted");
	if (failed(m))
		return give_up(m, why, failure_text(m));
	free_work(m);
	m->start[0] = 0;
	for (q = 0; q < m->nparts; q++)
		m->start[q + 1] = m->start[q] + m->parts[q].n;
	return m;
}

warp_int64
warp_group_merge_ngroups(const WarpGroupMerge *m)
{
	return m->start[m->nparts];
}

/* the partition holding merged group g, and g's index there (groups are
 * read in order: the last partition found is tried first) */
static const MergePart *
locate(WarpGroupMerge *m, warp_int64 *g)
{
	int			lo = 0,
				hi = m->nparts - 1;

	if (*g >= m->start[m->cur] && *g < m->start[m->cur + 1])
	{
		*g -= m->start[m->cur];
		return &m->parts[m->cur];
	}
	while (lo < hi)
	{
		int			mid = (lo + hi + 1) / 2;

		if (m->start[mid] <= *g)
			lo = mid;
		else
			hi = mid - 1;
	}
	*g -= m->start[lo];
	m->cur = lo;
	return &m->parts[lo];
}

warp_int64
warp_group_merge_key(WarpGroupMerge *m, warp_int64 g, int k, bool *isnull)
{
	const MergePart *pt = locate(m, &g);
	warp_uint64 r = pt->ref[g];
	const WarpGroupSource *src = &m->src[REF_SRC(r)];

	*isnull = src->nulls[REF_IDX(r) * m->nkeys + k] != 0;
	return src->keys[REF_IDX(r) * m->nkeys + k];
}

const WarpAggState *
warp_group_merge_agg(WarpGroupMerge *m, warp_int64 g, int a)
{
	const MergePart *pt = locate(m, &g);

	return part_state(m, pt, g, a);
}

const warp_uint8 *
warp_group_merge_text(WarpGroupMerge *m, warp_int64 g, int k, warp_int64 *len)
{
	const MergePart *pt = locate(m, &g);
	warp_uint64 r = pt->ref[g];

	return key_text(m, REF_SRC(r), k, m->src[REF_SRC(r)].keys[REF_IDX(r) * m->nkeys + k], len);
}
