/*
 * test_visibility.c — the GPU table cache's visibility rule
 * (src/engine/warp_visibility.h) against HeapTupleSatisfiesMVCC's decision
 * tree, transcribed branch by branch from heapam_visibility.c for a version
 * whose inserter and deleter are each: the query's own transaction (at a
 * command before, at or after the snapshot's), running or committed after
 * the snapshot was taken (in the snapshot), committed before it, aborted,
 * frozen, or (deleter) none.  Every combination is checked, through the
 * classes the backend computes and the dictionary the daemon keeps.
 */
#include "unit.h"
#include "warp_visibility.h"

enum
{
	X_NONE,						/* no deleter (or lock-only xmax) */
	X_FROZEN,
	X_OWN,						/* TransactionIdIsCurrentTransactionId */
	X_IN_SNAPSHOT,				/* running, or committed after the snapshot */
	X_COMMITTED,				/* committed before the snapshot */
	X_ABORTED,
	X_STATES
};

/* HeapTupleSatisfiesMVCC's branches, with the hint bits' shortcuts left out */
static bool
oracle(int xmin, unsigned cmin, int xmax, unsigned cmax, unsigned curcid)
{
	if (xmin == X_NONE || xmin == X_ABORTED)
		return false;			/* invalid or aborted inserter */
	if (xmin == X_OWN)
	{
		if (cmin >= curcid)
			return false;		/* inserted after scan started */
		if (xmax == X_NONE)
			return true;
		if (xmax != X_OWN)
			return true;		/* deleting subtransaction must have aborted */
		return cmax >= curcid;	/* deleted after scan started */
	}
	if (xmin == X_IN_SNAPSHOT)
		return false;
	/* xmin committed (or frozen) and visible */
	if (xmax == X_NONE || xmax == X_ABORTED)
		return true;
	if (xmax == X_OWN)
		return cmax >= curcid;
	if (xmax == X_IN_SNAPSHOT)
		return true;
	return false;				/* deleter committed before the snapshot */
}

/* the backend's class of a state (tcache_query.c classify) */
static warp_uint8
class_of(int st)
{
	switch (st)
	{
		case X_OWN:
			return WARP_XID_CURRENT;
		case X_COMMITTED:
		case X_FROZEN:
			return WARP_XID_COMMITTED;
		default:
			return WARP_XID_INVISIBLE;
	}
}

/* the daemon's dictionary entry of a state: frozen and none are fixed */
static warp_uint32
entry_of(int st)
{
	if (st == X_FROZEN)
		return WARP_XIDX_FROZEN;
	if (st == X_NONE)
		return WARP_XIDX_NONE;
	return WARP_XIDX_FIRST + (warp_uint32) st;
}

TEST(every_combination_is_heap_tuple_satisfies_mvcc)
{
	warp_uint8	classes[WARP_XIDX_FIRST + X_STATES];
	int			a,
				b;
	unsigned	cmin,
				cmax;
	const unsigned curcid = 5;

	classes[WARP_XIDX_FROZEN] = WARP_XID_COMMITTED;
	classes[WARP_XIDX_NONE] = WARP_XID_INVISIBLE;
	for (a = 0; a < X_STATES; a++)
		classes[WARP_XIDX_FIRST + a] = class_of(a);
	for (a = 0; a < X_STATES; a++)
		for (b = 0; b < X_STATES; b++)
			for (cmin = 3; cmin <= 7; cmin++)
				for (cmax = 3; cmax <= 7; cmax++)
				{
					bool		want,
								got;

					if (a == X_NONE || (a == X_OWN && b == X_OWN && cmax < cmin))
						continue;	/* no such version */
					/* no other transaction can have deleted (committed)
					 * a version the own one inserted and has not committed:
					 * HeapTupleSatisfiesMVCC takes such a deleter for an
					 * aborted subtransaction of its own without looking */
					if (a == X_OWN && (b == X_FROZEN || b == X_COMMITTED))
						continue;
					want = oracle(a, cmin, b, cmax, curcid);
					got = warp_version_visible(classes, WARP_XIDX_FIRST + X_STATES,
											   entry_of(a), cmin, entry_of(b), cmax, curcid);
					if (got != want)
						printf("  xmin state %d cmin %u, xmax state %d cmax %u: %d, want %d\n",
							   a, cmin, b, cmax, got, want);
					CHECK(got == want);
				}
}

TEST(entries_added_after_classifying_are_invisible)
{
	warp_uint8	classes[3] = {WARP_XID_COMMITTED, WARP_XID_INVISIBLE, WARP_XID_COMMITTED};

	/* inserter unknown to the classification: not seen */
	CHECK(!warp_version_visible(classes, 3, 7, 0, WARP_XIDX_NONE, 0, 1));
	/* deleter unknown: the version is still seen */
	CHECK(warp_version_visible(classes, 3, 2, 0, 9, 0, 1));
	CHECK(!warp_version_visible(classes, 3, 2, 0, 2, 0, 1));
	/* settled bits do not change the class */
	classes[2] = WARP_XID_COMMITTED | WARP_XID_ALL_COMMITTED;
	CHECK(warp_version_visible(classes, 3, 2, 0, WARP_XIDX_NONE, 0, 1));
}

int
main(void)
{
	RUN(every_combination_is_heap_tuple_satisfies_mvcc);
	RUN(entries_added_after_classifying_are_invisible);
	UNIT_EXIT();
}
