/*
 * warp_topn.c — the best N rows of a stream by PostgreSQL's own ordering:
 * WarpScan's and WarpJoin's ORDER BY ... LIMIT inside the node.
 *
 * A bounded max-heap of copied rows (the root is the last row kept), as
 * PostgreSQL's bounded sort keeps its top-N, compared through the ordering
 * operators' sort support functions, so the order is exactly PostgreSQL's
 * for every type and collation (NULLS FIRST/LAST, NaN after every other
 * float, text by its collation).  The caller asks warp_topn_wanted with a
 * row's ORDER BY columns alone before building the whole row, so most rows
 * of a large input cost one comparison.  Rows that compare equal on every
 * key may be kept or dropped either way, as in PostgreSQL's top-N sort.
 *
 * Backend code: called by the executor in the process, never from the
 * engine's threads.
 */
#include "postgres.h"

#include "executor/tuptable.h"
#include "utils/datum.h"
#include "utils/memutils.h"
#include "utils/sortsupport.h"

#include "exec/warp_topn.h"

typedef struct TopRow
{
	Datum	   *values;
	bool	   *isnull;
} TopRow;

struct WarpTopN
{
	MemoryContext cxt;			/* the rows kept */
	TupleDesc	desc;
	int			nkeys;
	int		   *cols;
	SortSupportData *ssup;
	int64		bound;
	TopRow	  **rows;			/* heap: rows[0] sorts last */
	int64		n;
	int64		next;			/* after warp_topn_sort */
};

/* keys[] against row r: < 0 when keys sort before it */
static int
compare_keys(WarpTopN *t, const Datum *keys, const bool *nulls, const TopRow *r)
{
	int			k;

	for (k = 0; k < t->nkeys; k++)
	{
		int			c = ApplySortComparator(keys[k], nulls[k], r->values[t->cols[k]],
											r->isnull[t->cols[k]], &t->ssup[k]);

		if (c != 0)
			return c;
	}
	return 0;
}

static int
compare_rows(WarpTopN *t, const TopRow *a, const TopRow *b)
{
	int			k;

	for (k = 0; k < t->nkeys; k++)
	{
		int			c = ApplySortComparator(a->values[t->cols[k]], a->isnull[t->cols[k]],
											b->values[t->cols[k]], b->isnull[t->cols[k]],
											&t->ssup[k]);

		if (c != 0)
			return c;
	}
	return 0;
}

WarpTopN *
warp_topn_create(TupleDesc desc, int nkeys, const WarpTopNKey *keys, int64 bound,
				 MemoryContext parent)
{
	WarpTopN   *t = MemoryContextAllocZero(parent, sizeof(WarpTopN));
	int			k;

	Assert(bound > 0 && nkeys > 0);
	t->cxt = AllocSetContextCreate(parent, "pg_warp top-N rows", ALLOCSET_DEFAULT_SIZES);
	t->desc = desc;
	t->nkeys = nkeys;
	t->bound = bound;
	t->cols = MemoryContextAlloc(parent, sizeof(int) * nkeys);
	t->ssup = MemoryContextAllocZero(parent, sizeof(SortSupportData) * nkeys);
	for (k = 0; k < nkeys; k++)
	{
		SortSupport s = &t->ssup[k];

		if (keys[k].col < 0 || keys[k].col >= desc->natts)
			elog(ERROR, "pg_warp: top-N key column %d out of range", keys[k].col);
		t->cols[k] = keys[k].col;
		s->ssup_cxt = parent;
		s->ssup_collation = keys[k].collation;
		s->ssup_nulls_first = keys[k].nulls_first;
		s->abbreviate = false;
		PrepareSortSupportFromOrderingOp(keys[k].sortop, s);
	}
	t->rows = MemoryContextAllocHuge(parent, sizeof(TopRow *) * bound);
	return t;
}

bool
warp_topn_wanted(WarpTopN *t, const Datum *keys, const bool *nulls)
{
	return t->n < t->bound || compare_keys(t, keys, nulls, t->rows[0]) < 0;
}

static void
free_row(WarpTopN *t, TopRow *r)
{
	int			i;

	for (i = 0; i < t->desc->natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(t->desc, i);

		if (!r->isnull[i] && !a->attbyval)
			pfree(DatumGetPointer(r->values[i]));
	}
	pfree(r);
}

static TopRow *
copy_row(WarpTopN *t, TupleTableSlot *slot)
{
	int			natts = t->desc->natts;
	MemoryContext old = MemoryContextSwitchTo(t->cxt);
	TopRow	   *r;
	int			i;

	slot_getallattrs(slot);
	r = palloc(MAXALIGN(sizeof(TopRow)) + MAXALIGN(sizeof(Datum) * natts) + natts);
	r->values = (Datum *) ((char *) r + MAXALIGN(sizeof(TopRow)));
	r->isnull = (bool *) ((char *) r->values + MAXALIGN(sizeof(Datum) * natts));
	for (i = 0; i < natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(t->desc, i);

		r->isnull[i] = slot->tts_isnull[i];
		r->values[i] = r->isnull[i] ? (Datum) 0 :
			datumCopy(slot->tts_values[i], a->attbyval, a->attlen);
	}
	MemoryContextSwitchTo(old);
	return r;
}

/* the heap's order: a parent never sorts before its children */
static void
sift_down(WarpTopN *t, int64 i)
{
	for (;;)
	{
		int64		l = 2 * i + 1,
					m = i;

		if (l < t->n && compare_rows(t, t->rows[l], t->rows[m]) > 0)
			m = l;
		if (l + 1 < t->n && compare_rows(t, t->rows[l + 1], t->rows[m]) > 0)
			m = l + 1;
		if (m == i)
			return;
		{
			TopRow	   *x = t->rows[i];

			t->rows[i] = t->rows[m];
			t->rows[m] = x;
		}
		i = m;
	}
}

void
warp_topn_add(WarpTopN *t, TupleTableSlot *slot)
{
	TopRow	   *r = copy_row(t, slot);

	if (t->n < t->bound)
	{
		int64		i = t->n++;

		t->rows[i] = r;
		while (i > 0 && compare_rows(t, t->rows[(i - 1) / 2], t->rows[i]) < 0)
		{
			TopRow	   *x = t->rows[i];

			t->rows[i] = t->rows[(i - 1) / 2];
			t->rows[(i - 1) / 2] = x;
			i = (i - 1) / 2;
		}
		return;
	}
	free_row(t, t->rows[0]);
	t->rows[0] = r;
	sift_down(t, 0);
}

static int
qsort_cmp(const void *a, const void *b, void *arg)
{
	return compare_rows((WarpTopN *) arg, *(TopRow *const *) a, *(TopRow *const *) b);
}

void
warp_topn_sort(WarpTopN *t)
{
	qsort_arg(t->rows, t->n, sizeof(TopRow *), qsort_cmp, t);
	t->next = 0;
}

/* the next row in order into the (virtual) slot; false at the end */
bool
warp_topn_next(WarpTopN *t, TupleTableSlot *slot)
{
	TopRow	   *r;

	ExecClearTuple(slot);
	if (t->next >= t->n)
		return false;
	r = t->rows[t->next++];
	memcpy(slot->tts_values, r->values, sizeof(Datum) * t->desc->natts);
	memcpy(slot->tts_isnull, r->isnull, sizeof(bool) * t->desc->natts);
	ExecStoreVirtualTuple(slot);
	return true;
}

void
warp_topn_reset(WarpTopN *t)
{
	MemoryContextReset(t->cxt);
	t->n = 0;
	t->next = 0;
}
