/*
 * test_engine_cpu.c — the engine's program validation, join tables and CPU
 * driver, on hand-built programs over in-memory Arrow columns.  Expected
 * values are computed here independently (plain loops over the same input),
 * and the error cases are the ones PostgreSQL's executor raises.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "warp_cpu.h"
#include "warp_join.h"
#include "warp_program.h"

static void *
test_alloc(void *ctx, size_t size)
{
	(void) ctx;
	return calloc(1, size);
}

static const WarpAlloc ALLOC = {test_alloc, NULL};

/* ------------------------------------------------------- building blocks */

#define MAXN 64

typedef struct Prog
{
	WarpProgram p;
	WarpNode	nodes[MAXN];
	int32_t		args[MAXN];
	WarpColumnSpec cols[8];
	int32_t		quals[8];
	WarpJoinSpec joins[4];
	WarpGroupKey keys[4];
	WarpAggSpec aggs[8];
} Prog;

static void
prog_init(Prog *g)
{
	memset(g, 0, sizeof(*g));
	g->p.version = WARP_PROGRAM_VERSION;
	g->p.nodes = g->nodes;
	g->p.args = g->args;
	g->p.cols = g->cols;
	g->p.quals = g->quals;
	g->p.joins = g->joins;
	g->p.keys = g->keys;
	g->p.aggs = g->aggs;
}

static int
node(Prog *g, WarpOp op, WarpType t, int sub, int a, int b)
{
	WarpNode   *n = &g->nodes[g->p.nnodes];

	n->op = op;
	n->type = t;
	n->sub = sub;
	n->a = a;
	n->b = b;
	return g->p.nnodes++;
}

static int
col(Prog *g, int c, WarpType t)
{
	if (c >= g->p.ncols)
	{
		g->cols[c].type = t;
		g->p.ncols = c + 1;
	}
	return node(g, WN_COL, t, 0, c, -1);
}

static int
iconst(Prog *g, WarpType t, int64_t v)
{
	int			n = node(g, WN_CONST, t, 0, -1, -1);

	g->nodes[n].ival = v;
	return n;
}

static int
nary(Prog *g, WarpOp op, WarpType t, int nargs, const int *kids, int flags)
{
	int			n = node(g, op, t, 0, -1, -1);
	int			i;

	g->nodes[n].nargs = nargs;
	g->nodes[n].args_off = g->p.nargs;
	g->nodes[n].flags = flags;
	for (i = 0; i < nargs; i++)
		g->args[g->p.nargs++] = kids[i];
	return n;
}

static void
add_agg(Prog *g, WarpAggKind kind, WarpType t, int arg, int filter)
{
	WarpAggSpec *a = &g->aggs[g->p.naggs++];

	a->kind = kind;
	a->type = t;
	a->arg = arg;
	a->filter = filter;
}

/* an Int32 column of n values; nulls[i] makes row i NULL */
static ArrowField int32_field = {.name = "i", .nullable = true,
.type = {.id = ARROW_TYPE_INT, .bit_width = 32, .is_signed = true}};
static ArrowField float64_field = {.name = "f", .nullable = true,
.type = {.id = ARROW_TYPE_FLOAT, .precision = ARROW_PRECISION_DOUBLE}};

static ArrowArray
int32_array(const int32_t *v, const uint8_t *nulls, int64_t n)
{
	ArrowArray	a;
	uint8_t    *bits = NULL;
	int64_t		i;

	memset(&a, 0, sizeof(a));
	a.field = &int32_field;
	a.length = n;
	a.values = (const uint8_t *) v;
	a.values_len = n * 4;
	if (nulls)
	{
		bits = calloc(1, (n + 7) / 8 + 1);
		for (i = 0; i < n; i++)
			if (!nulls[i])
				bits[i / 8] |= 1 << (i % 8);
			else
				a.null_count++;
		a.validity = bits;
	}
	return a;
}

static ArrowArray
float64_array(const double *v, int64_t n)
{
	ArrowArray	a;

	memset(&a, 0, sizeof(a));
	a.field = &float64_field;
	a.length = n;
	a.values = (const uint8_t *) v;
	a.values_len = n * 8;
	return a;
}

/* ----------------------------------------------------------------- tests */

TEST(validate_rejects_bad_programs)
{
	Prog		g;
	int			c,
				k;

	prog_init(&g);
	c = col(&g, 0, WT_INT4);
	k = iconst(&g, WT_INT4, 5);
	g.quals[g.p.nquals++] = node(&g, WN_CMP, WT_BOOL, WARP_CMP_LT, c, k);
	CHECK(warp_program_validate(&g.p) == NULL);

	g.nodes[2].a = 7;			/* argument after the node */
	CHECK(warp_program_validate(&g.p) != NULL);
	g.nodes[2].a = c;
	g.nodes[0].a = 3;			/* column out of range */
	CHECK(warp_program_validate(&g.p) != NULL);
	g.nodes[0].a = 0;
	g.nodes[1].type = WT_FLOAT8;	/* int compared with float */
	CHECK(warp_program_validate(&g.p) != NULL);
	g.nodes[1].type = WT_INT4;
	g.p.version = 99;
	CHECK(warp_program_validate(&g.p) != NULL);
	g.p.version = WARP_PROGRAM_VERSION;
	g.quals[0] = c;				/* a non-boolean qual */
	CHECK(warp_program_validate(&g.p) != NULL);
}

TEST(join_table_direct_hash_and_duplicates)
{
	int64_t		dense[] = {5, 6, 7, 9};
	int32_t		pay[] = {0, 1, 2, 3};
	int64_t		sparse[] = {1, 1000000000000LL, -7, 42};
	int64_t		dup[] = {3, 4, 3};
	WarpJoinTable *t;
	int32_t		r;

	t = warp_join_build(&ALLOC, dense, pay, 4, 4);
	CHECK(t && t->direct && t->unique);
	CHECK(warp_join_lookup(t, 9) == 3 && warp_join_lookup(t, 8) == -1);
	CHECK(warp_join_lookup(t, 4) == -1 && warp_join_lookup(t, 100) == -1);

	t = warp_join_build(&ALLOC, sparse, pay, 4, 4);
	CHECK(t && !t->direct && t->unique);
	CHECK(warp_join_lookup(t, 1000000000000LL) == 1);
	CHECK(warp_join_lookup(t, -7) == 2 && warp_join_lookup(t, 2) == -1);

	t = warp_join_build(&ALLOC, dup, pay, 3, 3);
	CHECK(t && !t->unique);
	r = warp_join_lookup(t, 3);
	CHECK(r == 0 && t->next[r] == 2 && t->next[2] == -1);	/* build order */

	t = warp_join_build(&ALLOC, dup, pay, 0, 1);
	CHECK(t && warp_join_lookup(t, 3) == -1);
}

/*
 * Text equality against constants (WARP_TEXT_EQ, the inline compare of
 * load_text_column): values of every length 0..24 that equal a constant,
 * or differ from one in a single byte (first, middle, last), are one byte
 * shorter or longer, with NULLs; a row's match index checked against a
 * plain memcmp for each constant.
 */
static ArrowField utf8_field = {.name = "s", .nullable = true,
.type = {.id = ARROW_TYPE_UTF8}};

TEST(text_equality_by_length)
{
	enum
	{
		N = 6000
	};
	static const char *consts[] = {"", "MF", "MFGR#1", "MFGR#2", "MFGR#123",
	"ABCDEFGHIJKL", "ABCDEFGHIJKLMNOP", "ABCDEFGHIJKLMNOPQRSTUVWX"};
	enum
	{
		NC = sizeof(consts) / sizeof(consts[0])
	};
	static char data[N * 26];
	static int32_t offs[N + 1];
	static uint8_t nulls[N];
	static uint8_t bits[N / 8 + 1];
	static WarpString strs[NC];
	static uint8_t strbytes[256];
	int			nbytes = 0;
	int			pos = 0;
	int			i,
				c;

	for (c = 0; c < NC; c++)
	{
		strs[c].off = nbytes;
		strs[c].len = (int32_t) strlen(consts[c]);
		memcpy(strbytes + nbytes, consts[c], strs[c].len);
		nbytes += strs[c].len;
	}
	for (i = 0; i < N; i++)
	{
		const char *b = consts[unit_rnd() % NC];
		int			len = (int) strlen(b);
		char		v[32];
		int			how = (int) (unit_rnd() % 6);

		memcpy(v, b, len);
		if (how == 1 && len > 0)
			v[0] ^= 1;
		else if (how == 2 && len > 0)
			v[len / 2] ^= 4;
		else if (how == 3 && len > 0)
			v[len - 1] ^= 2;
		else if (how == 4 && len > 0)
			len--;
		else if (how == 5)
			v[len++] = 'z';
		offs[i] = pos;
		memcpy(data + pos, v, len);
		pos += len;
		nulls[i] = i % 23 == 0;
		if (!nulls[i])
			bits[i / 8] |= 1 << (i % 8);
	}
	offs[N] = pos;
	for (c = 0; c < NC; c++)
	{
		Prog		g;
		int			cc,
					k;
		ArrowArray	tcol;
		WarpCpu    *cpu;
		WarpLoadStatus ls;
		static bool keep[N];
		int64_t		kept = -1,
					expect = 0;

		prog_init(&g);
		cc = col(&g, 0, WT_INT8);
		g.cols[0].text = WARP_TEXT_EQ;
		g.cols[0].str_first = 0;
		g.cols[0].str_count = NC;
		g.p.nstrings = NC;
		g.p.strings = strs;
		g.p.nstrbytes = nbytes;
		g.p.strbytes = strbytes;
		k = iconst(&g, WT_INT8, c);
		g.quals[g.p.nquals++] = node(&g, WN_CMP, WT_BOOL, WARP_CMP_EQ, cc, k);
		CHECK_MSG(warp_program_validate(&g.p) == NULL, warp_program_validate(&g.p));
		memset(&tcol, 0, sizeof(tcol));
		tcol.field = &utf8_field;
		tcol.length = N;
		tcol.offsets = (const uint8_t *) offs;
		tcol.data = (const uint8_t *) data;
		tcol.data_len = pos;
		tcol.validity = bits;
		cpu = warp_cpu_create(&g.p, NULL, &ALLOC);
		CHECK(cpu != NULL);
		if (cpu == NULL)
			continue;
		for (i = 0; i < N; i++)
		{
			int			len = offs[i + 1] - offs[i];

			keep[i] = true;
			expect += !nulls[i] && len == strs[c].len &&
				memcmp(data + offs[i], consts[c], len) == 0;
		}
		CHECK(warp_cpu_filter_batch(cpu, &tcol, N, keep, &kept, &ls) == WARP_OK);
		CHECK(ls == WARP_LOAD_OK);
		CHECK_MSG(kept == expect, consts[c]);
		for (i = 0; i < N; i++)
		{
			int			len = offs[i + 1] - offs[i];

			CHECK(keep[i] == (!nulls[i] && len == strs[c].len &&
							  memcmp(data + offs[i], consts[c], len) == 0));
		}
	}
}

/*
 * The flat form (shared memory under Gather): a direct and a hash table
 * with duplicates, flattened into a block at another address and attached,
 * answer every probe as the original, chains included; a block of the
 * wrong size is refused.
 */
TEST(join_table_flat_form)
{
	enum
	{
		N = 3000
	};
	static int64_t keys[N];
	static int32_t pay[N];
	int			form;

	for (form = 0; form < 3; form++)
	{
		WarpJoinTable *t;
		WarpJoinTable at;
		int64_t		size;
		char	   *block;
		int			i;
		int64_t		k;

		for (i = 0; i < N; i++)
		{
			/* dense keys (direct), sparse ones (hash), none (empty) */
			keys[i] = form == 0 ? 100 + i % 2500 : (int64_t) (i % 2500) * 1000003LL - 7;
			pay[i] = i % 11;
		}
		t = warp_join_build(&ALLOC, keys, pay, form == 2 ? 0 : N, 11);
		CHECK(t != NULL);
		if (t == NULL)
			continue;
		CHECK(form != 0 || t->direct);
		CHECK(form != 1 || !t->direct);
		size = warp_join_flat_size(t);
		block = calloc(1, (size_t) size + 8);
		warp_join_flatten(t, block + 8);	/* another address than t's */
		CHECK(!warp_join_attach(block + 8, size - 8, &at));
		CHECK(warp_join_attach(block + 8, size, &at));
		CHECK(at.nrows == t->nrows && at.direct == t->direct && at.unique == t->unique);
		for (i = 0; i < N + 50; i++)
		{
			int32_t		a,
						b;

			k = i < N ? keys[i] : (int64_t) i * 7919 + 1;
			a = warp_join_lookup(t, k);
			b = warp_join_lookup(&at, k);
			CHECK(a == b);
			while (a >= 0 && b >= 0)
			{
				CHECK(t->payload[a] == at.payload[b] && t->keys[a] == at.keys[b]);
				a = t->next[a];
				b = at.next[b];
				CHECK(a == b);
			}
		}
		CHECK((void *) at.keys >= (void *) block && (char *) at.next < block + size + 8);
		free(block);
	}
}

/*
 * count(*), sum(a), min(a), max(a), avg(a) grouped by b over rows with
 * a > 10; NULLs in a and b; more rows than one vector.
 */
TEST(filter_group_aggregate)
{
	enum
	{
		N = 5000
	};
	static int32_t a[N],
				b[N];
	static uint8_t an[N],
				bn[N];
	Prog		g;
	int			ca,
				cb;
	ArrowArray	cols[2];
	WarpCpu    *cpu;
	WarpLoadStatus ls;
	int			bad_col;
	int64_t		bad_row,
				grp;
	int64_t		exp_cnt[8] = {0},
				exp_sum[8] = {0},
				exp_n[8] = {0};
	int			i;

	for (i = 0; i < N; i++)
	{
		a[i] = (i * 37) % 101 - 20;
		an[i] = i % 13 == 0;
		b[i] = i % 7;
		bn[i] = i % 29 == 0;
		if (!an[i] && a[i] > 10)
		{
			int			k = bn[i] ? 7 : b[i];

			exp_cnt[k]++;
			exp_sum[k] += a[i];
			exp_n[k]++;
		}
	}
	prog_init(&g);
	ca = col(&g, 0, WT_INT4);
	cb = col(&g, 1, WT_INT4);
	g.quals[g.p.nquals++] = node(&g, WN_CMP, WT_BOOL, WARP_CMP_GT, ca, iconst(&g, WT_INT4, 10));
	g.keys[0].kind = WG_FACT;
	g.keys[0].node = cb;
	g.p.nkeys = 1;
	add_agg(&g, WA_COUNT_STAR, WT_INT8, -1, -1);
	add_agg(&g, WA_SUM_INT, WT_INT4, ca, -1);
	add_agg(&g, WA_MIN, WT_INT4, ca, -1);
	add_agg(&g, WA_AVG_INT, WT_INT4, ca, -1);
	CHECK_MSG(warp_program_validate(&g.p) == NULL, warp_program_validate(&g.p));
	cols[0] = int32_array(a, an, N);
	cols[1] = int32_array(b, bn, N);
	cpu = warp_cpu_create(&g.p, NULL, &ALLOC);
	CHECK(cpu != NULL);
	CHECK(warp_cpu_run_batch(cpu, cols, N, NULL, &ls, &bad_col, &bad_row) == WARP_OK);
	CHECK(ls == WARP_LOAD_OK);
	CHECK(warp_cpu_ngroups(cpu) == 8);
	for (grp = 0; grp < warp_cpu_ngroups(cpu); grp++)
	{
		bool		isnull;
		int64_t		key = warp_cpu_group_key(cpu, grp, 0, &isnull);
		int			k = isnull ? 7 : (int) key;
		int32_t		mn = INT32_MAX;

		for (i = 0; i < N; i++)
			if (!an[i] && a[i] > 10 && (bn[i] ? 7 : b[i]) == k && a[i] < mn)
				mn = a[i];
		CHECK(warp_cpu_group_agg(cpu, grp, 0)->count == exp_cnt[k]);
		CHECK(warp_cpu_group_agg(cpu, grp, 1)->ival == exp_sum[k]);
		CHECK(warp_cpu_group_agg(cpu, grp, 1)->count == exp_n[k]);
		CHECK(warp_cpu_group_agg(cpu, grp, 2)->ival == mn);
		CHECK(warp_cpu_group_agg(cpu, grp, 3)->count == exp_n[k]);
	}
}

/*
 * warp_cpu_filter_rows: a batch's rows cut into ranges (not vector-aligned,
 * with an empty one), each on a driver of its own, decide the same rows as
 * warp_cpu_filter_batch over the whole batch, and leave keep[] outside
 * their range alone.
 */
TEST(filter_rows_by_ranges)
{
	enum
	{
		N = 5000
	};
	static int32_t a[N];
	static uint8_t an[N];
	static bool whole[N],
				parts[N];
	static const int64_t cuts[] = {0, 1, 1000, 1000, 3333, 4097, N};
	Prog		g;
	int			ca;
	ArrowArray	cols[1];
	WarpCpu    *cpu;
	WarpLoadStatus ls;
	int64_t		kept_whole = 0,
				kept_parts = 0,
				expect = 0;
	int			i,
				r;

	for (i = 0; i < N; i++)
	{
		a[i] = (int32_t) (unit_rnd() % 200) - 100;
		an[i] = i % 17 == 0;
		whole[i] = parts[i] = i % 5 != 0;	/* rows an earlier filter dropped */
		expect += whole[i] && !an[i] && a[i] > 20;
	}
	prog_init(&g);
	ca = col(&g, 0, WT_INT4);
	g.quals[g.p.nquals++] = node(&g, WN_CMP, WT_BOOL, WARP_CMP_GT, ca, iconst(&g, WT_INT4, 20));
	CHECK_MSG(warp_program_validate(&g.p) == NULL, warp_program_validate(&g.p));
	cols[0] = int32_array(a, an, N);
	cpu = warp_cpu_create(&g.p, NULL, &ALLOC);
	CHECK(cpu != NULL);
	CHECK(warp_cpu_filter_batch(cpu, cols, N, whole, &kept_whole, &ls) == WARP_OK);
	CHECK(kept_whole == expect);
	for (r = 0; r + 1 < (int) (sizeof(cuts) / sizeof(cuts[0])); r++)
	{
		WarpCpu    *part = warp_cpu_create(&g.p, NULL, &ALLOC);
		bool		before_first = cuts[r] > 0 ? parts[cuts[r] - 1] : false;
		int64_t		k = -1;

		CHECK(part != NULL);
		CHECK(warp_cpu_filter_rows(part, cols, cuts[r], cuts[r + 1], parts, &k, &ls) == WARP_OK);
		CHECK(ls == WARP_LOAD_OK);
		if (cuts[r] > 0)
			CHECK(parts[cuts[r] - 1] == before_first);
		kept_parts += k;
	}
	CHECK(kept_parts == kept_whole);
	for (i = 0; i < N; i++)
		CHECK(parts[i] == whole[i]);
}

/* Errors arise only for rows PostgreSQL evaluates. */
TEST(errors_only_where_postgres_raises_them)
{
	int32_t		a[] = {100, 7, 2147483647, 3};
	int32_t		b[] = {0, 7, 2, 0};
	Prog		g;
	int			ca,
				cb,
				ne,
				dv,
				gt,
				and_kids[2];
	ArrowArray	cols[2];
	WarpCpu    *cpu;
	WarpLoadStatus ls;
	int			bad_col;
	int64_t		bad_row;

	/* WHERE b <> 0 AND a / b > 1: the division never sees b = 0 */
	prog_init(&g);
	ca = col(&g, 0, WT_INT4);
	cb = col(&g, 1, WT_INT4);
	ne = node(&g, WN_CMP, WT_BOOL, WARP_CMP_NE, cb, iconst(&g, WT_INT4, 0));
	dv = node(&g, WN_ARITH, WT_INT4, WARP_ARITH_DIV, ca, cb);
	gt = node(&g, WN_CMP, WT_BOOL, WARP_CMP_GT, dv, iconst(&g, WT_INT4, 1));
	and_kids[0] = ne;
	and_kids[1] = gt;
	g.quals[g.p.nquals++] = nary(&g, WN_AND, WT_BOOL, 2, and_kids, 0);
	add_agg(&g, WA_COUNT_STAR, WT_INT8, -1, -1);
	CHECK(warp_program_validate(&g.p) == NULL);
	cols[0] = int32_array(a, NULL, 4);
	cols[1] = int32_array(b, NULL, 4);
	cpu = warp_cpu_create(&g.p, NULL, &ALLOC);
	CHECK(warp_cpu_run_batch(cpu, cols, 4, NULL, &ls, &bad_col, &bad_row) == WARP_OK);
	/* 2147483647 / 2 > 1 only: 7 / 7 = 1 is not > 1 */
	CHECK(warp_cpu_ngroups(cpu) == 1 && warp_cpu_group_agg(cpu, 0, 0)->count == 1);

	/* the same division unguarded: division by zero */
	prog_init(&g);
	ca = col(&g, 0, WT_INT4);
	cb = col(&g, 1, WT_INT4);
	dv = node(&g, WN_ARITH, WT_INT4, WARP_ARITH_DIV, ca, cb);
	g.quals[g.p.nquals++] = node(&g, WN_CMP, WT_BOOL, WARP_CMP_GT, dv, iconst(&g, WT_INT4, 1));
	add_agg(&g, WA_COUNT_STAR, WT_INT8, -1, -1);
	cpu = warp_cpu_create(&g.p, NULL, &ALLOC);
	CHECK(warp_cpu_run_batch(cpu, cols, 4, NULL, &ls, &bad_col, &bad_row) == WARP_ERR_DIV_ZERO);

	/* sum(a * 2): int4 overflow, but not when the row is filtered out */
	prog_init(&g);
	ca = col(&g, 0, WT_INT4);
	g.quals[g.p.nquals++] = node(&g, WN_CMP, WT_BOOL, WARP_CMP_LT, ca, iconst(&g, WT_INT4, 1000));
	add_agg(&g, WA_SUM_INT, WT_INT4,
			node(&g, WN_ARITH, WT_INT4, WARP_ARITH_MUL, ca, iconst(&g, WT_INT4, 2)), -1);
	cpu = warp_cpu_create(&g.p, NULL, &ALLOC);
	CHECK(warp_cpu_run_batch(cpu, cols, 4, NULL, &ls, &bad_col, &bad_row) == WARP_OK);
	CHECK(warp_cpu_group_agg(cpu, 0, 0)->ival == 220);
	g.p.nquals = 0;
	cpu = warp_cpu_create(&g.p, NULL, &ALLOC);
	CHECK(warp_cpu_run_batch(cpu, cols, 4, NULL, &ls, &bad_col, &bad_row) == WARP_ERR_INT_OVERFLOW);
}

/* CASE evaluates only the branch taken; COALESCE and NULL logic. */
TEST(case_coalesce_null_logic)
{
	int32_t		a[] = {0, 5, 0, 2};
	uint8_t		an[] = {0, 0, 1, 0};
	Prog		g;
	int			ca,
				w,
				t,
				e,
				kids[3],
				cs;
	ArrowArray	cols[1];
	WarpCpu    *cpu;
	WarpLoadStatus ls;
	int			bad_col;
	int64_t		bad_row;

	/* sum(CASE WHEN a <> 0 THEN 100 / a ELSE -1 END) */
	prog_init(&g);
	ca = col(&g, 0, WT_INT4);
	w = node(&g, WN_CMP, WT_BOOL, WARP_CMP_NE, ca, iconst(&g, WT_INT4, 0));
	t = node(&g, WN_ARITH, WT_INT4, WARP_ARITH_DIV, iconst(&g, WT_INT4, 100), ca);
	e = iconst(&g, WT_INT4, -1);
	kids[0] = w;
	kids[1] = t;
	kids[2] = e;
	cs = nary(&g, WN_CASE, WT_INT4, 3, kids, WARP_CASE_HAS_ELSE);
	add_agg(&g, WA_SUM_INT, WT_INT4, cs, -1);
	/* count(COALESCE(a, 7)) counts the NULL row too */
	kids[0] = ca;
	kids[1] = iconst(&g, WT_INT4, 7);
	add_agg(&g, WA_COUNT, WT_INT4, nary(&g, WN_COALESCE, WT_INT4, 2, kids, 0), -1);
	add_agg(&g, WA_COUNT, WT_INT4, ca, -1);
	CHECK_MSG(warp_program_validate(&g.p) == NULL, warp_program_validate(&g.p));
	cols[0] = int32_array(a, an, 4);
	cpu = warp_cpu_create(&g.p, NULL, &ALLOC);
	CHECK(warp_cpu_run_batch(cpu, cols, 4, NULL, &ls, &bad_col, &bad_row) == WARP_OK);
	/* rows: 0 -> -1; 5 -> 20; NULL -> (a <> 0 is NULL) -1; 2 -> 50 */
	CHECK(warp_cpu_group_agg(cpu, 0, 0)->ival == 68);
	CHECK(warp_cpu_group_agg(cpu, 0, 1)->count == 4);
	CHECK(warp_cpu_group_agg(cpu, 0, 2)->count == 3);
}

/* A star: two dimensions, one with duplicate keys; group by payload. */
TEST(star_join_with_duplicates)
{
	int32_t		k1[] = {1, 2, 3, 4, 1, 9};
	int32_t		k2[] = {10, 10, 20, 30, 20, 10};
	int32_t		v[] = {1, 2, 4, 8, 16, 32};
	uint8_t		k2n[] = {0, 0, 0, 0, 1, 0};
	int64_t		d1keys[] = {1, 2, 3, 4};
	int32_t		d1pay[] = {0, 1, 0, 1};	/* two groups */
	int64_t		d2keys[] = {10, 20, 10};	/* 10 twice */
	int32_t		d2pay[] = {0, 0, 0};
	WarpJoinTable *tabs[2];
	Prog		g;
	ArrowArray	cols[3];
	WarpCpu    *cpu;
	WarpLoadStatus ls;
	int			bad_col;
	int64_t		bad_row,
				grp,
				sums[2] = {0},
				total = 0;

	tabs[0] = warp_join_build(&ALLOC, d1keys, d1pay, 4, 2);
	tabs[1] = warp_join_build(&ALLOC, d2keys, d2pay, 3, 1);
	prog_init(&g);
	g.joins[0].key_node = col(&g, 0, WT_INT4);
	g.joins[0].table = 0;
	g.joins[1].key_node = col(&g, 1, WT_INT4);
	g.joins[1].table = 1;
	g.p.njoins = 2;
	g.keys[0].kind = WG_DIM;
	g.keys[0].join = 0;
	g.p.nkeys = 1;
	add_agg(&g, WA_SUM_INT, WT_INT4, col(&g, 2, WT_INT4), -1);
	CHECK_MSG(warp_program_validate(&g.p) == NULL, warp_program_validate(&g.p));
	cols[0] = int32_array(k1, NULL, 6);
	cols[1] = int32_array(k2, k2n, 6);
	cols[2] = int32_array(v, NULL, 6);
	cpu = warp_cpu_create(&g.p, tabs, &ALLOC);
	CHECK(warp_cpu_run_batch(cpu, cols, 6, NULL, &ls, &bad_col, &bad_row) == WARP_OK);
	/*
	 * row 0: k1=1 (pay 0), k2=10 (2 matches) -> 2 x 1
	 * row 1: k1=2 (pay 1), k2=10 (2 matches) -> 2 x 2
	 * row 2: k1=3 (pay 0), k2=20 (1 match)   -> 4
	 * row 3: k1=4, k2=30: no match; row 4: NULL k2; row 5: k1=9: no match;
	 * 5 joined rows in all
	 */
	for (grp = 0; grp < warp_cpu_ngroups(cpu); grp++)
	{
		bool		isnull;
		int64_t		pid = warp_cpu_group_key(cpu, grp, 0, &isnull);

		sums[pid] += warp_cpu_group_agg(cpu, grp, 0)->ival;
		total += warp_cpu_group_agg(cpu, grp, 0)->count;
	}
	CHECK(sums[0] == 2 + 4 && sums[1] == 4 && total == 5);
}

/* float min/max with PostgreSQL's NaN order and float8_accum's average. */
TEST(float_aggregates)
{
	double		f[] = {1.5, NAN, -0.0, 3.25, -INFINITY};
	Prog		g;
	int			cf;
	ArrowArray	cols[1];
	WarpCpu    *cpu;
	WarpLoadStatus ls;
	int			bad_col;
	int64_t		bad_row;
	const WarpAggState *s;

	prog_init(&g);
	cf = col(&g, 0, WT_FLOAT8);
	add_agg(&g, WA_MAX, WT_FLOAT8, cf, -1);
	add_agg(&g, WA_MIN, WT_FLOAT8, cf, -1);
	add_agg(&g, WA_AVG_FLOAT, WT_FLOAT8, cf, -1);
	CHECK(warp_program_validate(&g.p) == NULL);
	cols[0] = float64_array(f, 5);
	cpu = warp_cpu_create(&g.p, NULL, &ALLOC);
	CHECK(warp_cpu_run_batch(cpu, cols, 5, NULL, &ls, &bad_col, &bad_row) == WARP_OK);
	CHECK(isnan(warp_cpu_group_agg(cpu, 0, 0)->fval));	/* NaN is the largest */
	CHECK(isinf(warp_cpu_group_agg(cpu, 0, 1)->fval) && warp_cpu_group_agg(cpu, 0, 1)->fval < 0);
	s = warp_cpu_group_agg(cpu, 0, 2);
	CHECK(s->count == 5 && isnan(s->fval) && isnan(s->fsxx));
}

int
main(void)
{
	RUN(validate_rejects_bad_programs);
	RUN(join_table_direct_hash_and_duplicates);
	RUN(join_table_flat_form);
	RUN(text_equality_by_length);
	RUN(filter_group_aggregate);
	RUN(filter_rows_by_ranges);
	RUN(errors_only_where_postgres_raises_them);
	RUN(case_coalesce_null_logic);
	RUN(star_join_with_duplicates);
	RUN(float_aggregates);
	UNIT_EXIT();
}
