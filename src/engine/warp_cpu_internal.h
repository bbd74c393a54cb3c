/*-------------------------------------------------------------------------
 *
 * warp_cpu_internal.h
 *	  The CPU driver's state (struct WarpCpu) and what its files share:
 *	  warp_cpu_create.c (setup), warp_cpu_load.c (columns),
 *	  warp_cpu_eval.c (expressions), warp_cpu_filter.c (qual fast paths),
 *	  warp_cpu_join.c (probes), warp_cpu_group.c (groups, aggregates) and
 *	  warp_cpu.c (the batch loop and the interface of warp_cpu.h).  Not
 *	  part of the engine's interface.
 *
 * Pure C; no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_CPU_INTERNAL_H
#define WARP_CPU_INTERNAL_H

#include <math.h>
#include <string.h>

#include "warp_cpu.h"
#include "warp_topn_order.h"

/* shared between this layer's files only: not exported from the module */
#pragma GCC visibility push(hidden)

/* direct-address group table when the product of payload counts is small */
#define DIRECT_GROUPS_MAX (1 << 22)

/*
 * A text group-key column's distinct strings, numbered in order of first
 * appearance: string id is bytes [off[id], off[id + 1]) of bytes; slot is
 * an open-addressing table of ids by hash.  Ids are this driver's own (each
 * thread has its own), which is why its groups go back to PostgreSQL with
 * their strings (warp_cpu_key_text), never with ids.
 */
typedef struct WarpIntern
{
	warp_uint8 *bytes;
	warp_int64	nbytes,
				bcap;
	warp_int64 *off;
	warp_int64	n,
				ncap;
	warp_int32 *slot;
	warp_uint64 mask;
} WarpIntern;

struct WarpCpu
{
	const WarpProgram *p;
	WarpJoinTable **tables;
	WarpAlloc	alloc;

	/* per node: result vectors (int or float by type), NULL flags, two
	 * scratch selection vectors */
	warp_int64 **iv;
	double	  **fv;
	warp_uint8 **nv;
	warp_int128 **qv;			/* numeric nodes: unscaled values */
	warp_int128 **cq;			/* wide numeric columns: unscaled values */
	warp_uint16 **selA;
	warp_uint16 **selB;

	/* the batch's columns and the current vector within it */
	const ArrowArray *bcols;
	warp_int64	vstart;
	int			vn;
	WarpLoadStatus load_status;	/* set with WARP_STATUS_LOAD */
	int			bad_col;
	warp_int64	bad_row;

	/* per column: loaded values of the current vector */
	warp_int64 **ci;
	double	  **cf;
	warp_uint8 **cn;
	/* text columns (WarpColumnSpec.text): the dictionary last matched
	 * against the program's strings, and its entries' matches */
	const ArrowArray **tdict;
	warp_int32 **tmap;
	warp_int64 *tcap;
	/*
	 * per column, distinct strings by hash (WarpIntern): a text group key's
	 * (filled as rows come), or a WARP_TEXT_EQ column's program strings when
	 * it has more than 8 (a text join key's dimension keys, long IN lists;
	 * filled at create, so ids are the strings' indexes)
	 */
	WarpIntern *intern;

	/* main selection and joined rows */
	warp_uint16 *sel;
	bool		all_unique;
	int		   *order;			/* joins in probe order, most selective first */
	warp_int64	ecap;
	warp_uint16 *epos,
			   *tpos;
	warp_int32 **ebrow,
			  **tbrow;
	warp_int64 *egroup;
	/* float sum/avg aggregates, and their states before the current vector
	 * (fsnap[f * ecap + e]: aggregate float_aggs[f], joined row e) */
	int			nfloat;
	int		   *float_aggs;
	WarpAggState *fsnap;
	warp_uint16 *usel;
	warp_int32 *hidx;			/* probe scratch: joined rows found ... */
	warp_int32 *hrow;			/* ... and their build rows */
	warp_uint8 *mark;
	warp_uint8 *ok;

	/* groups */
	warp_int64	ngroups;
	warp_int64	gcap;
	warp_int64 *gkey;			/* ngroups * nkeys */
	warp_uint8 *gnull;			/* ngroups * nkeys */
	WarpAggState **gagg;		/* per agg: gcap states */
	bool		direct;
	warp_int64 *stride;			/* direct: per key */
	warp_int32 *dgroup;			/* direct: code -> group, -1 */
	warp_uint64 hmask;			/* hash: slots of group ids, -1 empty */
	warp_int32 *hslot;
	warp_int64 *kbuf;			/* key values of one row */
	warp_uint8 *knull;

	WarpCpuCounters counters;

	/* a float sum or average saw a value so large that the order of the
	 * additions decides whether it overflows (warp_cpu_set_order_check) */
	bool		order_check;
	bool		order_risk;

	/* row mode under ORDER BY ... LIMIT (WarpProgram.topn_limit): rows
	 * whose first ORDER BY key sorts after topn_val are dropped */
	bool		topn_have;
	WarpTopnOrder topn_order;	/* how the first ORDER BY key compares */
	warp_int64	topn_val;		/* (float bits for floats) */
	warp_uint8	topn_null;
	warp_int64	topn_compact_at;	/* rows at which to compact next */
	warp_int32 *topn_idx;		/* compaction scratch */
	warp_int64	topn_idx_cap;
};

static inline void *
xalloc(WarpCpu *x, size_t size)
{
	return x->alloc.alloc(x->alloc.ctx, size ? size : 1);
}

static inline void *
xalloc0(WarpCpu *x, size_t size)
{
	void	   *p = xalloc(x, size);

	if (p)
		memset(p, 0, size ? size : 1);
	return p;
}

/* internal status: a column could not be loaded (x->load_status says why) */
#define WARP_STATUS_LOAD ((WarpStatus) (WARP_STATUS_COUNT + 1))

#define IS_FLOAT_NODE(x, ni) WARP_TYPE_IS_FLOAT((x)->p->nodes[(ni)].type)

/* whether a three-way comparison result c (-1, 0, 1) satisfies WARP_CMP_* op */
static inline bool
cmp_holds(int op, int c)
{
	switch (op)
	{
		case WARP_CMP_EQ: return c == 0;
		case WARP_CMP_NE: return c != 0;
		case WARP_CMP_LT: return c < 0;
		case WARP_CMP_LE: return c <= 0;
		case WARP_CMP_GT: return c > 0;
		default: return c >= 0;
	}
}

static inline int
valid_bit(const warp_uint8 *validity, warp_int64 j)
{
	return (validity[j >> 3] >> (j & 7)) & 1;
}

/* ---------------------------------------------- shared by the driver files */

/* warp_cpu_create.c */
extern bool cpu_grow_joined(WarpCpu *x, warp_int64 need, warp_int64 n_e, warp_int64 n_t);
extern bool cpu_groups_reserve(WarpCpu *x, warp_int64 need);

/* warp_cpu_load.c */
extern WarpLoadStatus cpu_load_column(WarpCpu *x, int c, const warp_uint16 *sel, int n, int *bad);
extern bool cpu_eq_strings_intern(WarpCpu *x, int c);

/* warp_cpu_eval.c */
extern WarpStatus cpu_eval(WarpCpu *x, int ni, const warp_uint16 *sel, int n);

/* warp_cpu_filter.c */
extern const ArrowArray *cpu_plain_int_column(WarpCpu *x, int ni);
extern int	cpu_filter_col_const(WarpCpu *x, int qn, warp_uint16 *sel, int m);
extern int	cpu_filter_col_range(WarpCpu *x, int qa, int qb, warp_uint16 *sel, int m);

/* warp_cpu_group.c */
extern warp_int64 cpu_topn_compact_floor(const WarpProgram *p);
extern WarpStatus cpu_group_rows(WarpCpu *x, warp_int64 ne, int nu);
extern WarpStatus cpu_aggregate_rows(WarpCpu *x, warp_int64 ne, int nu);

/* warp_cpu_join.c */
extern WarpStatus cpu_probe(WarpCpu *x, int step, warp_int64 *ne_io);

#pragma GCC visibility pop

#endif							/* WARP_CPU_INTERNAL_H */
