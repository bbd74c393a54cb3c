/*
 * test_group_merge.c — merging drivers' partial groups
 * (src/engine/warp_group_merge.c) against aggregating every row at once.
 *
 * Rows with two keys (an integer with NULLs and a small one, optionally a
 * text key whose ids each source numbers in its own order of first
 * appearance) and values for every aggregate kind are dealt at random to
 * several sources; each source aggregates its rows as a driver would (one
 * group per key), one source twice (duplicates within a source, as the
 * daemon's concatenated lanes have).  The merge must give every key once,
 * with the states of aggregating all its rows in one place: exact for
 * counts, integer, 128- and 192-bit sums, min/max and float sums of
 * exactly representable values; avg(float)'s Sxx within rounding.  Also:
 * any number of threads and partitions, combinations PostgreSQL's combine
 * functions would raise an error for abandon the merge, and the combine
 * rules for floats (NaN is the largest) and wide sums (carries).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "warp_cpu.h"
#include "warp_group_merge.h"
#include "warp_program.h"

enum
{
	N_X,						/* int4 */
	N_F,						/* float8 */
	N_I8,						/* int8 */
	N_NUM,						/* numeric (128-bit unscaled) */
	N_F4,						/* float4 */
	NNODES
};

enum
{
	A_COUNT_STAR, A_SUM_INT, A_MIN_INT, A_MAX_FLOAT, A_AVG_FLOAT, A_SUM_INT8,
	A_SUM_NUMERIC, A_MIN_NUMERIC, A_SUM_FLOAT, A_AVG_INT, A_COUNT, A_MAX_INT,
	NAGGS
};

static WarpNode nodes[NNODES];
static WarpAggSpec aggs[NAGGS];
static WarpProgram prog;

static void
make_prog(void)
{
	static const struct
	{
		int			kind;
		int			arg;
	}			spec[NAGGS] = {
		{WA_COUNT_STAR, -1}, {WA_SUM_INT, N_X}, {WA_MIN, N_X}, {WA_MAX, N_F},
		{WA_AVG_FLOAT, N_F}, {WA_SUM_INT8, N_I8}, {WA_SUM_NUMERIC, N_NUM},
		{WA_MIN, N_NUM}, {WA_SUM_FLOAT, N_F}, {WA_AVG_INT, N_X}, {WA_COUNT, N_F},
		{WA_MAX, N_X}
	};
	int			a;

	memset(nodes, 0, sizeof(nodes));
	memset(aggs, 0, sizeof(aggs));
	memset(&prog, 0, sizeof(prog));
	nodes[N_X].type = WT_INT4;
	nodes[N_F].type = WT_FLOAT8;
	nodes[N_I8].type = WT_INT8;
	nodes[N_NUM].type = WT_NUMERIC;
	nodes[N_F4].type = WT_FLOAT4;
	for (a = 0; a < NAGGS; a++)
	{
		aggs[a].kind = spec[a].kind;
		aggs[a].arg = spec[a].arg;
		aggs[a].type = spec[a].arg >= 0 ? nodes[spec[a].arg].type : WT_INT8;
		aggs[a].filter = -1;
	}
	prog.nnodes = NNODES;
	prog.nodes = nodes;
	prog.nkeys = 2;
	prog.naggs = NAGGS;
	prog.aggs = aggs;
}

#define rnd unit_rnd

/* ----------------------------------------------------------- the rows */

#define K2 40

typedef struct Row
{
	int			k1;				/* -1: NULL */
	int			k2;
	int32_t		x;
	double		f;				/* multiples of 1/4: sums are exact */
	int64_t		i8;
	warp_int128 num;
} Row;

static int
code_of(const Row *r, int k1s)
{
	return (r->k1 < 0 ? k1s : r->k1) * K2 + r->k2;
}

static void
add192(WarpAggState *s, warp_int128 v)
{
	warp_uint128 lo = ((warp_uint128) (warp_uint64) s->wide_hi << 64) | s->wide_lo;
	warp_uint128 sum = lo + (warp_uint128) v;

	s->wide_top += (v < 0 ? -1 : 0) + (sum < lo ? 1 : 0);
	s->wide_lo = (warp_uint64) sum;
	s->wide_hi = (warp_int64) (warp_uint64) (sum >> 64);
}

/* one row into the states of its group, as the CPU driver accumulates */
static void
accumulate(WarpAggState *st, const Row *r)
{
	WarpAggState *s;
	int			first;

	st[A_COUNT_STAR].count++;
	s = &st[A_SUM_INT];
	s->ival += r->x;
	s->count++;
	s = &st[A_MIN_INT];
	if (s->count == 0 || r->x < s->ival)
		s->ival = r->x;
	s->count++;
	s = &st[A_MAX_INT];
	if (s->count == 0 || r->x > s->ival)
		s->ival = r->x;
	s->count++;
	s = &st[A_MAX_FLOAT];
	if (s->count == 0 || r->f > s->fval)
		s->fval = r->f;
	s->count++;
	s = &st[A_AVG_FLOAT];
	first = s->count == 0;
	{
		double		N = (double) s->count + 1.0,
					Sx = s->fval + r->f;

		if (!first)
		{
			double		tmp = r->f * N - Sx;

			s->fsxx += tmp * tmp / (N * (double) s->count);
		}
		s->fval = Sx;
		s->count++;
	}
	s = &st[A_SUM_INT8];
	warp_agg_set_wide(s, warp_agg_wide(s) + r->i8);
	s->count++;
	add192(&st[A_SUM_NUMERIC], r->num);
	st[A_SUM_NUMERIC].count++;
	s = &st[A_MIN_NUMERIC];
	if (s->count == 0 || r->num < warp_agg_wide(s))
		warp_agg_set_wide(s, r->num);
	s->count++;
	s = &st[A_SUM_FLOAT];
	s->fval = s->count == 0 ? r->f : s->fval + r->f;
	s->count++;
	s = &st[A_AVG_INT];
	s->ival += r->x;
	s->count++;
	st[A_COUNT].count++;
}

/* the groups of a set of rows, as one driver keeps them */
typedef struct Table
{
	int64_t		n;
	int64_t		cap;
	warp_int64 *keys;
	warp_uint8 *nulls;
	WarpAggState *states[NAGGS];
	const WarpAggState *cstates[NAGGS];
	int		   *slot;			/* code -> group, -1 */
	/* text: this source's ids of k2's strings, by first appearance */
	int			id_of[K2];
	int			k2_of[K2];
	int			nids;
} Table;

static void
table_init(Table *t, int ncodes, int64_t cap)
{
	int			a;

	memset(t, 0, sizeof(*t));
	t->cap = cap;
	t->keys = calloc(cap * 2, sizeof(warp_int64));
	t->nulls = calloc(cap * 2, 1);
	for (a = 0; a < NAGGS; a++)
	{
		t->states[a] = calloc(cap, sizeof(WarpAggState));
		t->cstates[a] = t->states[a];
	}
	t->slot = malloc(sizeof(int) * ncodes);
	memset(t->slot, 0xff, sizeof(int) * ncodes);
	memset(t->id_of, 0xff, sizeof(t->id_of));
}

/* a fresh slot map (a second aggregation into the same arrays) */
static void
table_restart(Table *t, int ncodes)
{
	memset(t->slot, 0xff, sizeof(int) * ncodes);
}

static void
table_add(Table *t, const Row *r, int k1s, bool text)
{
	int			code = code_of(r, k1s);
	int			g = t->slot[code],
				a;
	WarpAggState st[NAGGS];

	if (g < 0)
	{
		g = t->slot[code] = (int) t->n++;
		t->nulls[g * 2] = r->k1 < 0;
		t->keys[g * 2] = r->k1 < 0 ? 0 : r->k1;
		if (text)
		{
			if (t->id_of[r->k2] < 0)
			{
				t->k2_of[t->nids] = r->k2;
				t->id_of[r->k2] = t->nids++;
			}
			t->keys[g * 2 + 1] = t->id_of[r->k2];
		}
		else
			t->keys[g * 2 + 1] = r->k2;
	}
	for (a = 0; a < NAGGS; a++)
		st[a] = t->states[a][g];
	accumulate(st, r);
	for (a = 0; a < NAGGS; a++)
		t->states[a][g] = st[a];
}

static void
table_free(Table *t)
{
	int			a;

	free(t->keys);
	free(t->nulls);
	for (a = 0; a < NAGGS; a++)
		free(t->states[a]);
	free(t->slot);
}

static const warp_uint8 *
text_of(void *ctx, int k, warp_int64 id, warp_int64 *len)
{
	Table	   *t = ctx;
	static __thread char buf[4][32];
	static __thread int next;
	char	   *b;

	if (k != 1 || id < 0 || id >= t->nids)
		return NULL;
	b = buf[next++ & 3];
	/* strings of different lengths, one of them empty */
	if (t->k2_of[id] == 0)
		snprintf(b, 32, "%s", "");
	else
		snprintf(b, 32, "s%0*d", 1 + t->k2_of[id] % 5, t->k2_of[id]);
	*len = (warp_int64) strlen(b);
	return (const warp_uint8 *) b;
}

/* the k2 a merged group's text key names (its string parsed back) */
static int
k2_of_text(const warp_uint8 *p, warp_int64 len)
{
	if (len == 0)
		return 0;
	return atoi((const char *) p + 1);
}

/* --------------------------------------------------------- the check */

static bool
same_state(int a, const WarpAggState *got, const WarpAggState *want)
{
	if (got->count != want->count)
		return false;
	switch (a)
	{
		case A_COUNT_STAR:
		case A_COUNT:
			return true;
		case A_SUM_INT:
		case A_MIN_INT:
		case A_MAX_INT:
		case A_AVG_INT:
			return got->ival == want->ival;
		case A_MAX_FLOAT:
		case A_SUM_FLOAT:
			return got->fval == want->fval;
		case A_AVG_FLOAT:
			return got->fval == want->fval &&
				fabs(got->fsxx - want->fsxx) <= 1e-9 * (fabs(want->fsxx) + 1.0);
		case A_SUM_INT8:
		case A_MIN_NUMERIC:
			return warp_agg_wide(got) == warp_agg_wide(want);
		case A_SUM_NUMERIC:
			return got->wide_lo == want->wide_lo && got->wide_hi == want->wide_hi &&
				got->wide_top == want->wide_top;
	}
	return false;
}

/*
 * nrows rows with k1 in [0, k1s) (or NULL) over nsrc sources; source 0
 * holds two aggregations of its rows one after the other.
 */
static void
check_merge(int nrows, int k1s, int nsrc, int nthreads, bool text)
{
	int			ncodes = (k1s + 1) * K2;
	Row		   *rows = malloc(sizeof(Row) * nrows);
	WarpAggState *want = calloc((size_t) ncodes * NAGGS, sizeof(WarpAggState));
	bool	   *seen = calloc(ncodes, 1);
	bool	   *present = calloc(ncodes, 1);
	Table	   *tabs = calloc(nsrc, sizeof(Table));
	WarpGroupSource *src = calloc(nsrc, sizeof(WarpGroupSource));
	bool		is_text[2] = {false, text};
	WarpGroupMerge *m;
	const char *why = NULL;
	int64_t		g,
				ng,
				distinct = 0;
	int			i,
				s,
				a;

	for (i = 0; i < nrows; i++)
	{
		Row		   *r = &rows[i];

		r->k1 = rnd() % 20 == 0 ? -1 : (int) (rnd() % k1s);
		r->k2 = (int) (rnd() % K2);
		r->x = (int32_t) (rnd() % 2001) - 1000;
		r->f = (double) ((int64_t) (rnd() % 4001) - 2000) / 4.0;
		r->i8 = (int64_t) (rnd() >> 1) * (rnd() & 1 ? 1 : -1);
		r->num = ((warp_int128) (int64_t) rnd() << 56) * (rnd() & 1 ? 1 : -1);
		accumulate(&want[(size_t) code_of(r, k1s) * NAGGS], r);
		if (!present[code_of(r, k1s)])
			distinct++;
		present[code_of(r, k1s)] = true;
	}
	for (s = 0; s < nsrc; s++)
		table_init(&tabs[s], ncodes, nrows + 1);
	for (i = 0; i < nrows; i++)
	{
		s = (int) (rnd() % nsrc);
		if (s == 0 && i == nrows / 2)
			table_restart(&tabs[0], ncodes);	/* duplicates from here on */
		table_add(&tabs[s], &rows[i], k1s, text);
	}
	for (s = 0; s < nsrc; s++)
	{
		src[s].n = tabs[s].n;
		src[s].keys = tabs[s].keys;
		src[s].nulls = tabs[s].nulls;
		src[s].aggs = tabs[s].cstates;
		src[s].stride = 1;
		src[s].text = text ? text_of : NULL;
		src[s].text_ctx = &tabs[s];
	}

	m = warp_group_merge(&prog, text ? is_text : NULL, src, nsrc, 1.0, nthreads, NULL, NULL, &why);
	CHECK_MSG(m != NULL, why ? why : "");
	if (m == NULL)
		goto done;
	ng = warp_group_merge_ngroups(m);
	CHECK(ng == distinct);
	for (g = 0; g < ng; g++)
	{
		bool		n1,
					n2;
		int64_t		k1 = warp_group_merge_key(m, g, 0, &n1);
		int64_t		k2 = warp_group_merge_key(m, g, 1, &n2);
		int			code;
		Row			r;

		CHECK(!n2);
		if (text)
		{
			warp_int64	len = -1;
			const warp_uint8 *p = warp_group_merge_text(m, g, 1, &len);

			CHECK(p != NULL && len >= 0);
			if (p == NULL)
				continue;
			k2 = k2_of_text(p, len);
		}
		CHECK(k2 >= 0 && k2 < K2 && (n1 || (k1 >= 0 && k1 < k1s)));
		if (!(k2 >= 0 && k2 < K2 && (n1 || (k1 >= 0 && k1 < k1s))))
			continue;
		r.k1 = n1 ? -1 : (int) k1;
		r.k2 = (int) k2;
		code = code_of(&r, k1s);
		CHECK(!seen[code]);		/* every key once */
		seen[code] = true;
		for (a = 0; a < NAGGS; a++)
			CHECK_MSG(same_state(a, warp_group_merge_agg(m, g, a), &want[(size_t) code * NAGGS + a]),
					  "aggregate state differs");
	}
	warp_group_merge_free(m);
done:
	for (s = 0; s < nsrc; s++)
		table_free(&tabs[s]);
	free(tabs);
	free(src);
	free(rows);
	free(want);
	free(seen);
	free(present);
}

/* ------------------------------------------------------------- tests */

TEST(merge_equals_one_aggregation)
{
	static const int threads[] = {1, 2, 5, 16};
	int			t;

	make_prog();
	/* small: one partition */
	check_merge(3000, 10, 3, 4, false);
	/* large: many partitions, many chunks per source */
	for (t = 0; t < 4; t++)
		check_merge(400000, 3000, 6, threads[t], false);
	/* one source (the daemon's lanes, concatenated) */
	check_merge(200000, 2000, 1, 4, false);
}

TEST(merge_text_keys_by_string)
{
	make_prog();
	check_merge(5000, 7, 4, 2, true);
	check_merge(300000, 1000, 5, 8, true);
}

TEST(merge_nothing)
{
	WarpGroupMerge *m;
	const char *why = NULL;
	WarpGroupSource none;

	make_prog();
	m = warp_group_merge(&prog, NULL, NULL, 0, 1.0, 4, NULL, NULL, &why);
	CHECK(m != NULL && warp_group_merge_ngroups(m) == 0);
	warp_group_merge_free(m);
	memset(&none, 0, sizeof(none));
	m = warp_group_merge(&prog, NULL, &none, 1, 1.0, 4, NULL, NULL, &why);
	CHECK(m != NULL && warp_group_merge_ngroups(m) == 0);
	warp_group_merge_free(m);
}

/* two sources of one group each, same key, states a and b of aggregate ag */
static WarpGroupMerge *
merge_two(int ag, const WarpAggState *sa, const WarpAggState *sb, const char **why)
{
	static warp_int64 keys[2] = {5, 0};
	static warp_uint8 nulls[2] = {0, 0};
	static WarpAggState st[2][NAGGS];
	static const WarpAggState *ptr[2][NAGGS];
	WarpGroupSource src[2];
	int			s,
				a;

	memset(st, 0, sizeof(st));
	st[0][ag] = *sa;
	st[1][ag] = *sb;
	memset(src, 0, sizeof(src));
	for (s = 0; s < 2; s++)
	{
		for (a = 0; a < NAGGS; a++)
			ptr[s][a] = &st[s][a];
		src[s].n = 1;
		src[s].keys = keys;
		src[s].nulls = nulls;
		src[s].aggs = ptr[s];
		src[s].stride = 1;
	}
	prog.nkeys = 2;
	return warp_group_merge(&prog, NULL, src, 2, 1.0, 2, NULL, NULL, why);
}

TEST(overflow_abandons_the_merge)
{
	WarpAggState a,
				b;
	WarpGroupMerge *m;
	const char *why = NULL;

	make_prog();
	/* float8pl: finite + finite = inf is PostgreSQL's overflow error */
	memset(&a, 0, sizeof(a));
	a.count = 1;
	a.fval = 1.5e308;
	b = a;
	m = merge_two(A_SUM_FLOAT, &a, &b, &why);
	CHECK(m == NULL && why != NULL && strstr(why, "overflow") != NULL);
	/* ... but inf + finite is inf, no error */
	a.fval = INFINITY;
	m = merge_two(A_SUM_FLOAT, &a, &b, &why);
	CHECK(m != NULL && isinf(warp_group_merge_agg(m, 0, A_SUM_FLOAT)->fval));
	warp_group_merge_free(m);
	/* avg(float8): Sx overflows */
	a.fval = 1.5e308;
	a.fsxx = 0;
	b = a;
	m = merge_two(A_AVG_FLOAT, &a, &b, &why);
	CHECK(m == NULL);
	/* sum(int4)'s combine is int8pl: "bigint out of range" */
	memset(&a, 0, sizeof(a));
	a.count = 1;
	a.ival = INT64_MAX - 5;
	b = a;
	b.ival = 6;
	m = merge_two(A_SUM_INT, &a, &b, &why);
	CHECK(m == NULL);
	b.ival = 5;
	m = merge_two(A_SUM_INT, &a, &b, &why);
	CHECK(m != NULL && warp_group_merge_agg(m, 0, A_SUM_INT)->ival == INT64_MAX &&
		  warp_group_merge_agg(m, 0, A_SUM_INT)->count == 2);
	warp_group_merge_free(m);
	/* avg(int4)'s int4_avg_combine adds without a check */
	b.ival = 6;
	m = merge_two(A_AVG_INT, &a, &b, &why);
	CHECK(m != NULL && warp_group_merge_agg(m, 0, A_AVG_INT)->ival == INT64_MIN);
	warp_group_merge_free(m);
}

TEST(combine_rules)
{
	WarpAggState a,
				b,
				r;

	make_prog();
	/* NaN is larger than every other float8 (float8_cmp_internal) */
	memset(&a, 0, sizeof(a));
	a.count = 1;
	a.fval = NAN;
	b = a;
	b.fval = 1e300;
	r = a;
	CHECK(warp_agg_combine(&prog, &aggs[A_MAX_FLOAT], &r, &b) && isnan(r.fval) && r.count == 2);
	r = b;
	CHECK(warp_agg_combine(&prog, &aggs[A_MAX_FLOAT], &r, &a) && isnan(r.fval));
	aggs[A_MAX_FLOAT].kind = WA_MIN;
	r = a;
	CHECK(warp_agg_combine(&prog, &aggs[A_MAX_FLOAT], &r, &b) && r.fval == 1e300);
	aggs[A_MAX_FLOAT].kind = WA_MAX;
	/* a state of no input leaves the other as it is */
	memset(&b, 0, sizeof(b));
	r = a;
	CHECK(warp_agg_combine(&prog, &aggs[A_MAX_FLOAT], &r, &b) && isnan(r.fval) && r.count == 1);
	r = b;
	CHECK(warp_agg_combine(&prog, &aggs[A_MAX_FLOAT], &r, &a) && isnan(r.fval) && r.count == 1);
	/* 192-bit sum: carry out of the low 128 bits, and back */
	memset(&a, 0, sizeof(a));
	a.count = 1;
	a.wide_lo = UINT64_MAX;
	a.wide_hi = -1;				/* low 128 bits all ones: -1 */
	a.wide_top = 0;				/* ... as a 192-bit number: 2^128 - 1 */
	b = a;
	b.wide_lo = 1;
	b.wide_hi = 0;
	r = a;
	CHECK(warp_agg_combine(&prog, &aggs[A_SUM_NUMERIC], &r, &b));
	CHECK(r.wide_lo == 0 && r.wide_hi == 0 && r.wide_top == 1 && r.count == 2);
	/* -1 (192-bit) + 1 = 0 */
	a.wide_top = -1;
	r = a;
	CHECK(warp_agg_combine(&prog, &aggs[A_SUM_NUMERIC], &r, &b));
	CHECK(r.wide_lo == 0 && r.wide_hi == 0 && r.wide_top == 0);
	/* float4 sums round to float4 and overflow at FLT_MAX */
	aggs[A_SUM_FLOAT].arg = N_F4;
	memset(&a, 0, sizeof(a));
	a.count = 1;
	a.fval = 3.0e38;
	b = a;
	r = a;
	CHECK(!warp_agg_combine(&prog, &aggs[A_SUM_FLOAT], &r, &b));
	a.fval = 1.0;
	b.fval = 1e-8;
	r = a;
	CHECK(warp_agg_combine(&prog, &aggs[A_SUM_FLOAT], &r, &b) && r.fval == 1.0);
	aggs[A_SUM_FLOAT].arg = N_F;
	/* avg(float8): float8_combine's Sxx */
	memset(&a, 0, sizeof(a));
	a.count = 2;				/* {1, 3} */
	a.fval = 4;
	a.fsxx = 2;
	memset(&b, 0, sizeof(b));
	b.count = 1;				/* {8} */
	b.fval = 8;
	r = a;
	CHECK(warp_agg_combine(&prog, &aggs[A_AVG_FLOAT], &r, &b));
	/* {1, 3, 8}: mean 4, squared deviations 9 + 1 + 16 = 26 */
	CHECK(r.count == 3 && r.fval == 12 && fabs(r.fsxx - 26.0) < 1e-12);
}

/* sources whose keys are disjoint, or all the same keys */
static WarpGroupMerge *
merge_sample(bool disjoint, double max_kept, const char **why)
{
	enum
	{
		NS = 4, NG = 20000
	};
	static warp_int64 keys[NS][NG * 2];
	static warp_uint8 nulls[NS][NG * 2];
	static WarpAggState st[NS][NG];
	static const WarpAggState *ptr[NS][NAGGS];
	WarpGroupSource src[NS];
	int			s,
				i,
				a;

	memset(src, 0, sizeof(src));
	for (s = 0; s < NS; s++)
	{
		for (i = 0; i < NG; i++)
		{
			keys[s][i * 2] = disjoint ? s * NG + i : i;
			keys[s][i * 2 + 1] = 7;
			st[s][i].count = 1;
		}
		for (a = 0; a < NAGGS; a++)
			ptr[s][a] = st[s];	/* every aggregate reads count(*)'s states */
		src[s].n = NG;
		src[s].keys = keys[s];
		src[s].nulls = nulls[s];
		src[s].aggs = ptr[s];
		src[s].stride = 1;
	}
	return warp_group_merge(&prog, NULL, src, NS, max_kept, 3, NULL, NULL, why);
}

TEST(sample_abandons_a_merge_that_saves_nothing)
{
	WarpGroupMerge *m;
	const char *why = NULL;
	int			a;

	make_prog();
	for (a = 0; a < NAGGS; a++)
	{
		aggs[a].kind = WA_COUNT_STAR;
		aggs[a].arg = -1;
	}
	m = merge_sample(true, 0.9, &why);
	CHECK(m == NULL && why != NULL && strstr(why, "repeat") != NULL);
	m = merge_sample(true, 1.0, &why);
	CHECK(m != NULL && warp_group_merge_ngroups(m) == 4 * 20000);
	warp_group_merge_free(m);
	m = merge_sample(false, 0.9, &why);
	CHECK(m != NULL && warp_group_merge_ngroups(m) == 20000);
	if (m)
		CHECK(warp_group_merge_agg(m, 0, 0)->count == 4 &&
			  warp_group_merge_agg(m, 19999, 3)->count == 4);
	warp_group_merge_free(m);
}

/*
 * count(DISTINCT x) per k: sources of (k, x) groups (x NULL sometimes),
 * merged, then regrouped by k; each k's rows must add up to its number of
 * distinct non-NULL x, and to its row count and sum.
 */
TEST(regroup_counts_distinct)
{
	enum
	{
		NS = 5, NK = 300, NX = 700, PER = 60000
	};
	static warp_int64 keys[NS][PER * 2];
	static warp_uint8 nulls[NS][PER * 2];
	static WarpAggState st[NS][3][PER];
	static bool seen[NK][NX + 1];
	static int64_t rowsk[NK],
				sumk[NK],
				distinctk[NK];
	static int64_t got_rows[NK],
				got_sum[NK],
				got_distinct[NK];
	const WarpAggState *ptr[NS][3];
	WarpGroupSource src[NS];
	WarpAggSpec ag[3];
	WarpNode nd[1];
	WarpProgram p;
	WarpGroupMerge *m;
	const char *why = NULL;
	int			s,
				k;
	int64_t		g;

	memset(seen, 0, sizeof(seen));
	memset(rowsk, 0, sizeof(rowsk));
	memset(sumk, 0, sizeof(sumk));
	memset(distinctk, 0, sizeof(distinctk));
	memset(got_rows, 0, sizeof(got_rows));
	memset(got_sum, 0, sizeof(got_sum));
	memset(got_distinct, 0, sizeof(got_distinct));
	memset(nd, 0, sizeof(nd));
	nd[0].type = WT_INT4;
	memset(ag, 0, sizeof(ag));
	ag[0].kind = WA_COUNT_STAR;
	ag[0].arg = -1;
	ag[1].kind = WA_COUNT;		/* count(x): the DISTINCT one */
	ag[1].arg = 0;
	ag[2].kind = WA_SUM_INT;
	ag[2].arg = 0;
	memset(&p, 0, sizeof(p));
	p.nnodes = 1;
	p.nodes = nd;
	p.nkeys = 2;
	p.naggs = 3;
	p.aggs = ag;
	memset(src, 0, sizeof(src));
	for (s = 0; s < NS; s++)
	{
		int			n = 0;
		static int	slot[NK][NX + 1];

		memset(slot, 0xff, sizeof(slot));
		memset(st[s], 0, sizeof(st[s]));
		for (g = 0; g < PER; g++)
		{
			int			kk = (int) (rnd() % NK);
			int			x = (int) (rnd() % (NX + 1));	/* NX: NULL */
			int			v = (int) (rnd() % 100);
			int			gi = slot[kk][x];

			if (gi < 0)
			{
				gi = slot[kk][x] = n++;
				keys[s][gi * 2] = kk;
				keys[s][gi * 2 + 1] = x == NX ? 0 : x;
				nulls[s][gi * 2] = 0;
				nulls[s][gi * 2 + 1] = x == NX;
			}
			st[s][0][gi].count++;
			if (x != NX)
			{
				st[s][1][gi].count++;
				st[s][2][gi].count++;
				st[s][2][gi].ival += v;
				sumk[kk] += v;
				if (!seen[kk][x])
					distinctk[kk]++;
				seen[kk][x] = true;
			}
			rowsk[kk]++;
		}
		for (k = 0; k < 3; k++)
			ptr[s][k] = st[s][k];
		src[s].n = n;
		src[s].keys = keys[s];
		src[s].nulls = nulls[s];
		src[s].aggs = ptr[s];
		src[s].stride = 1;
	}
	m = warp_group_merge(&p, NULL, src, NS, 1.0, 4, NULL, NULL, &why);
	CHECK_MSG(m != NULL, why ? why : "");
	if (m == NULL)
		return;
	CHECK(warp_group_merge_regroup(m, 1, 1, 4, NULL, NULL, &why));
	for (g = 0; g < warp_group_merge_ngroups(m); g++)
	{
		bool		isnull;
		int64_t		kk = warp_group_merge_key(m, g, 0, &isnull);

		CHECK(!isnull && kk >= 0 && kk < NK);
		if (isnull || kk < 0 || kk >= NK)
			continue;
		got_rows[kk] += warp_group_merge_agg(m, g, 0)->count;
		got_distinct[kk] += warp_group_merge_agg(m, g, 1)->count;
		got_sum[kk] += warp_group_merge_agg(m, g, 2)->ival;
	}
	/* more rows than keys: one key's groups came from several partitions */
	CHECK(warp_group_merge_ngroups(m) > NK);
	CHECK(memcmp(got_rows, rowsk, sizeof(rowsk)) == 0);
	CHECK(memcmp(got_sum, sumk, sizeof(sumk)) == 0);
	CHECK(memcmp(got_distinct, distinctk, sizeof(distinctk)) == 0);
	warp_group_merge_free(m);
}

int
main(void)
{
	RUN(merge_equals_one_aggregation);
	RUN(merge_text_keys_by_string);
	RUN(merge_nothing);
	RUN(overflow_abandons_the_merge);
	RUN(combine_rules);
	RUN(sample_abandons_a_merge_that_saves_nothing);
	RUN(regroup_counts_distinct);
	UNIT_EXIT();
}
