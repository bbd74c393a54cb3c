/*
 * warp_visibility.h — whether a row version of a cached heap table is
 * visible to a query's snapshot: PostgreSQL's HeapTupleSatisfiesMVCC,
 * written once for the CPU driver and the GPU kernel.
 *
 * A cached version carries its inserting and deleting transaction ids as
 * indexes into the cache's transaction dictionary, and the command ids it
 * was inserted and deleted at (meaningful only for the backend's own
 * transaction).  The backend resolves each dictionary entry under the
 * query's snapshot into one class, in HeapTupleSatisfiesMVCC's order:
 *
 *   TransactionIdIsCurrentTransactionId(xid)      -> WARP_XID_CURRENT
 *   XidInMVCCSnapshot(xid, snapshot)              -> WARP_XID_INVISIBLE
 *   TransactionIdDidCommit(xid)                   -> WARP_XID_COMMITTED
 *   otherwise (aborted, or crashed)               -> WARP_XID_INVISIBLE
 *
 * Entry 0 is a transaction every snapshot sees committed (frozen, or
 * committed before the oldest snapshot); entry 1 is no transaction (no
 * deleter; a lock-only xmax is recorded as none) or one every snapshot
 * sees aborted.  A version is then visible when its inserter is effective
 * and its deleter is not:
 *
 *   effective(cls, cid) = cls == COMMITTED || (cls == CURRENT && cid < curcid)
 *
 * which is HeapTupleSatisfiesMVCC's result for every case it has: the own
 * transaction's inserts and deletes by command id (a version inserted and
 * deleted by it: visible between the two commands), an aborted
 * subtransaction (not current, not committed: its inserts invisible, its
 * deletes undone), an inserter or deleter still running or committed
 * after the snapshot was taken (in the snapshot: invisible / not deleted).
 *
 * Pure C; no PostgreSQL headers.
 */
#ifndef WARP_VISIBILITY_H
#define WARP_VISIBILITY_H

#include "warp_defs.h"

#define WARP_XID_INVISIBLE	0	/* not (yet) effective for this snapshot */
#define WARP_XID_COMMITTED	1	/* committed, and seen so by the snapshot */
#define WARP_XID_CURRENT	2	/* the query's own transaction */
#define WARP_XID_CLASS_MASK	3
/* the backend's verdict for every snapshot, now and later (compaction) */
#define WARP_XID_ALL_COMMITTED	4
#define WARP_XID_ALL_ABORTED	8

/* dictionary entries with a fixed meaning */
#define WARP_XIDX_FROZEN	0
#define WARP_XIDX_NONE		1
#define WARP_XIDX_FIRST		2	/* the first entry that is a transaction id */

/* did the transaction of class cls act before command curcid? */
WARP_FN bool
warp_xid_effective(warp_uint8 cls, warp_uint32 cid, warp_uint32 curcid)
{
	cls &= WARP_XID_CLASS_MASK;
	return cls == WARP_XID_COMMITTED || (cls == WARP_XID_CURRENT && cid < curcid);
}

/*
 * Is the version inserted by dictionary entry xmin at command cmin and
 * deleted by entry xmax at command cmax visible?  classes[] holds the
 * classes of entries 0 .. nclasses-1; an entry beyond it was added after
 * the backend resolved the dictionary, by a transaction that had not
 * committed then, so after the snapshot was taken: invisible.
 */
WARP_FN bool
warp_version_visible(const warp_uint8 *classes, warp_uint32 nclasses,
					 warp_uint32 xmin, warp_uint32 cmin, warp_uint32 xmax, warp_uint32 cmax,
					 warp_uint32 curcid)
{
	warp_uint8	cmin_cls = xmin < nclasses ? classes[xmin] : WARP_XID_INVISIBLE;
	warp_uint8	cmax_cls = xmax < nclasses ? classes[xmax] : WARP_XID_INVISIBLE;

	if (xmin == WARP_XIDX_FROZEN)
		cmin_cls = WARP_XID_COMMITTED;
	if (xmax == WARP_XIDX_NONE)
		cmax_cls = WARP_XID_INVISIBLE;
	return warp_xid_effective(cmin_cls, cmin, curcid) &&
		!warp_xid_effective(cmax_cls, cmax, curcid);
}

#endif							/* WARP_VISIBILITY_H */
