/*
 * heap_changes.c — which heap tables committed transactions have modified,
 * so that a dimension built from a heap table can be kept across queries
 * (warp_dimcache.c) and be known stale once anyone changes the table.
 *
 * PostgreSQL has no cheap per-table change counter: the cumulative
 * statistics reach shared memory up to a second late, and a relcache
 * invalidation is sent for DDL, not for rows.  pg_warp, preloaded, keeps
 * its own in shared memory:
 *
 *   - every backend notes, for its running transaction, the tables it
 *     writes: the result relations of each executed plan (INSERT, UPDATE,
 *     DELETE, MERGE, writable CTEs, and the SQL that triggers, foreign keys
 *     and functions run, all through ExecutorStart), COPY FROM and
 *     TRUNCATE (ProcessUtility);
 *   - just before such a transaction commits (or is prepared), each noted
 *     table's slot gets its counter increased and the transaction's full
 *     XID recorded (the last RECENT_XIDS of them; older ones leave their
 *     newest XID behind as a horizon);
 *   - every COMMIT PREPARED counts as a change of every table, and no
 *     snapshot older than it fills the cache (a prepared transaction
 *     outlives a restart, which empties the slots).
 *
 * A dimension built under snapshot S is valid for a query under snapshot Q
 * if the slot's counter is the same as at the build, and both S and Q see
 * every recorded transaction that committed (an XID before a snapshot's
 * xmin is seen by it; a recorded transaction still in progress, or
 * committed but invisible to the snapshot, makes it unusable).  A
 * transaction that modified the table but had not yet reached its commit
 * when the dimension was built was invisible to S, and its commit changes
 * the counter.  Slots are a fixed array hashed by (database, table): two
 * tables in one slot only cost each other rebuilds.
 *
 * What this cannot see, and where therefore nothing is cached: a hot
 * standby (changes arrive by WAL replay), tables a logical replication
 * subscription writes (its apply worker bypasses the executor), temporary
 * tables and partitions (ON COMMIT DELETE ROWS and tuple routing write them
 * without naming them), tables created or rewritten by the running
 * transaction, serializable transactions (a cached dimension would take no
 * predicate lock), and a server where pg_warp is not in
 * shared_preload_libraries.  Code that writes heap pages without the
 * executor or COPY (a C extension calling heap_insert itself) is not seen:
 * pg_warp.cache_heap_dimensions = off turns the caching of heap
 * dimensions off.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/table.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_class_d.h"
#include "catalog/pg_subscription_rel.h"
#include "common/hashfn.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "parser/parsetree.h"
#include "storage/ipc.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "tcop/utility.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "heap_changes.h"

#define CHANGE_SLOTS	4096	/* power of two */
#define RECENT_XIDS		8

typedef struct ChangeSlot
{
	slock_t		mutex;
	uint32		next;			/* ring position of the next XID */
	uint64		gen;			/* commits that modified a table of the slot */
	FullTransactionId horizon;	/* newest XID pushed out of the ring */
	FullTransactionId xids[RECENT_XIDS];	/* invalid where unused */
} ChangeSlot;

typedef struct HeapChangesShared
{
	/*
	 * COMMIT PREPARED: a prepared transaction's tables are lost with its
	 * backend's notes at a restart, so each such commit counts as a change
	 * of every table, and no snapshot taken while it was running may fill
	 * the cache (prepared_horizon: the next XID when it began, above the
	 * prepared transaction's).
	 */
	slock_t		mutex;
	uint64		prepared_commits;
	FullTransactionId prepared_horizon;
	ChangeSlot	slots[CHANGE_SLOTS];
} HeapChangesShared;

static HeapChangesShared *shared;
static ChangeSlot *slots;
static shmem_request_hook_type prev_shmem_request_hook;
static shmem_startup_hook_type prev_shmem_startup_hook;
static ExecutorStart_hook_type prev_executor_start_hook;
static ProcessUtility_hook_type prev_process_utility_hook;

/* the slots this backend's running transaction wrote to: a bitmap, and
 * the first few in a list, so that a typical transaction is published and
 * forgotten without scanning the bitmap */
#define NOTED_LIST	16
static uint64 noted[CHANGE_SLOTS / 64];
static uint16 noted_list[NOTED_LIST];
static int	noted_count;		/* may exceed NOTED_LIST: then scan noted */

static uint32
slot_of(Oid relid)
{
	uint32		k[2];

	k[0] = MyDatabaseId;
	k[1] = relid;
	return hash_bytes((const unsigned char *) k, sizeof(k)) & (CHANGE_SLOTS - 1);
}

static void
note_relation(Oid relid)
{
	uint32		s;

	if (!OidIsValid(relid))
		return;
	s = slot_of(relid);
	if (noted[s / 64] & (UINT64CONST(1) << (s % 64)))
		return;
	noted[s / 64] |= UINT64CONST(1) << (s % 64);
	if (noted_count < NOTED_LIST)
		noted_list[noted_count] = (uint16) s;
	noted_count++;
}

static void
hc_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(HeapChangesShared)));
}

static void
hc_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	shared = ShmemInitStruct("pg_warp heap changes", sizeof(HeapChangesShared), &found);
	slots = shared->slots;
	if (!found)
	{
		int			i;

		memset(shared, 0, sizeof(HeapChangesShared));
		SpinLockInit(&shared->mutex);
		shared->prepared_horizon = InvalidFullTransactionId;
		for (i = 0; i < CHANGE_SLOTS; i++)
		{
			int			j;

			SpinLockInit(&slots[i].mutex);
			slots[i].horizon = InvalidFullTransactionId;
			for (j = 0; j < RECENT_XIDS; j++)
				slots[i].xids[j] = InvalidFullTransactionId;
		}
	}
	LWLockRelease(AddinShmemInitLock);
}

static void
hc_executor_start(QueryDesc *queryDesc, int eflags)
{
	PlannedStmt *stmt = queryDesc->plannedstmt;
	ListCell   *lc;

	if (!(eflags & EXEC_FLAG_EXPLAIN_ONLY))
		foreach(lc, stmt->resultRelations)
			note_relation(rt_fetch(lfirst_int(lc), stmt->rtable)->relid);
	if (prev_executor_start_hook)
		prev_executor_start_hook(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
}

static void
call_process_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
					 ProcessUtilityContext context, ParamListInfo params,
					 QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	if (prev_process_utility_hook)
		prev_process_utility_hook(pstmt, queryString, readOnlyTree, context, params,
								  queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params,
								queryEnv, dest, qc);
}

static void
hc_process_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
				   ProcessUtilityContext context, ParamListInfo params,
				   QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *stmt = pstmt->utilityStmt;

	if (IsA(stmt, CopyStmt) && ((CopyStmt *) stmt)->is_from &&
		((CopyStmt *) stmt)->relation)
		note_relation(RangeVarGetRelid(((CopyStmt *) stmt)->relation, NoLock, true));
	else if (IsA(stmt, TruncateStmt))
	{
		ListCell   *lc;

		foreach(lc, ((TruncateStmt *) stmt)->relations)
			note_relation(RangeVarGetRelid(lfirst_node(RangeVar, lc), NoLock, true));
	}
	else if (IsA(stmt, TransactionStmt) &&
			 ((TransactionStmt *) stmt)->kind == TRANS_STMT_COMMIT_PREPARED && shared)
	{
		/* before the commit can be visible */
		FullTransactionId next = ReadNextFullTransactionId();

		SpinLockAcquire(&shared->mutex);
		shared->prepared_commits++;
		shared->prepared_horizon = next;
		SpinLockRelease(&shared->mutex);
	}
	call_process_utility(pstmt, queryString, readOnlyTree, context, params,
						 queryEnv, dest, qc);
}

static void
publish_slot(ChangeSlot *s, FullTransactionId fxid)
{
	FullTransactionId old;

	SpinLockAcquire(&s->mutex);
	old = s->xids[s->next];
	if (FullTransactionIdIsValid(old) &&
		(!FullTransactionIdIsValid(s->horizon) ||
		 FullTransactionIdPrecedes(s->horizon, old)))
		s->horizon = old;
	s->xids[s->next] = fxid;
	s->next = (s->next + 1) % RECENT_XIDS;
	s->gen++;
	SpinLockRelease(&s->mutex);
}

/* record this transaction in every slot it noted, before it can commit */
static void
publish_noted(void)
{
	FullTransactionId fxid = GetTopFullTransactionIdIfAny();
	int			w;

	if (!FullTransactionIdIsValid(fxid))
		return;					/* it wrote no row */
	if (noted_count <= NOTED_LIST)
	{
		for (w = 0; w < noted_count; w++)
			publish_slot(&slots[noted_list[w]], fxid);
		return;
	}
	for (w = 0; w < CHANGE_SLOTS / 64; w++)
	{
		uint64		bits = noted[w];

		while (bits)
		{
			publish_slot(&slots[w * 64 + pg_rightmost_one_pos64(bits)], fxid);
			bits &= bits - 1;
		}
	}
}

static void
forget_noted(void)
{
	int			i;

	if (noted_count <= NOTED_LIST)
		for (i = 0; i < noted_count; i++)
			noted[noted_list[i] / 64] = 0;
	else
		memset(noted, 0, sizeof(noted));
	noted_count = 0;
}

static void
hc_xact_callback(XactEvent event, void *arg)
{
	if (noted_count == 0)
		return;
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			publish_noted();
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PREPARE:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PARALLEL_ABORT:
			forget_noted();
			break;
		default:
			break;
	}
}

/* Called from _PG_init while shared_preload_libraries are loaded. */
void
pgwarp_heap_changes_preload(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = hc_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = hc_shmem_startup;
	prev_executor_start_hook = ExecutorStart_hook;
	ExecutorStart_hook = hc_executor_start;
	prev_process_utility_hook = ProcessUtility_hook;
	ProcessUtility_hook = hc_process_utility;
	RegisterXactCallback(hc_xact_callback, NULL);
}

/* xid (of a running snapshot) as a full XID, next being the next full XID */
static FullTransactionId
full_xid(TransactionId xid, FullTransactionId next)
{
	uint32		behind = XidFromFullTransactionId(next) - xid;

	return FullTransactionIdFromU64(U64FromFullTransactionId(next) - behind);
}

/* Is rel a table whose changes this file sees?  If not, *why says why. */
static bool
relation_tracked(Relation rel, const char **why)
{
	Relation	subrel;
	ScanKeyData key;
	SysScanDesc scan;
	bool		subscribed;

	if (slots == NULL)
		*why = "pg_warp is not in shared_preload_libraries";
	else if (RecoveryInProgress())
		*why = "hot standby";
	else if (rel->rd_rel->relkind != RELKIND_RELATION ||
			 rel->rd_rel->relam != HEAP_TABLE_AM_OID)
		*why = "not a heap table";
	else if (rel->rd_rel->relispartition)
		*why = "a partition";
	else if (rel->rd_rel->relpersistence == RELPERSISTENCE_TEMP)
		*why = "a temporary table";
	else if (rel->rd_createSubid != InvalidSubTransactionId ||
			 rel->rd_firstRelfilenodeSubid != InvalidSubTransactionId)
		*why = "created or rewritten in this transaction";
	else
		*why = NULL;
	if (*why)
		return false;

	/* a subscription's apply worker writes without the executor */
	subrel = table_open(SubscriptionRelRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_subscription_rel_srrelid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(RelationGetRelid(rel)));
	scan = systable_beginscan(subrel, SubscriptionRelSrrelidSrsubidIndexId, true, NULL, 1, &key);
	subscribed = HeapTupleIsValid(systable_getnext(scan));
	systable_endscan(scan);
	table_close(subrel, AccessShareLock);
	if (subscribed)
		*why = "written by a logical replication subscription";
	return !subscribed;
}

bool
heap_changes_consistent(Relation rel, Snapshot snapshot, uint64 *gen, const char **why)
{
	ChangeSlot *s;
	ChangeSlot	copy;
	uint64		prepared;
	FullTransactionId prepared_horizon;
	uint32		k;
	FullTransactionId next,
				xmin;
	int			i;

	if (!relation_tracked(rel, why))
		return false;
	if (snapshot == NULL || !IsMVCCSnapshot(snapshot))
	{
		*why = "not an MVCC snapshot";
		return false;
	}
	if (IsolationIsSerializable())
	{
		*why = "serializable transaction";
		return false;
	}
	k = slot_of(RelationGetRelid(rel));
	if (noted[k / 64] & (UINT64CONST(1) << (k % 64)))
	{
		*why = "written by this transaction";	/* (or a table of its slot) */
		return false;
	}

	SpinLockAcquire(&shared->mutex);
	prepared = shared->prepared_commits;
	prepared_horizon = shared->prepared_horizon;
	SpinLockRelease(&shared->mutex);
	s = &slots[k];
	SpinLockAcquire(&s->mutex);
	copy = *s;
	SpinLockRelease(&s->mutex);

	next = ReadNextFullTransactionId();
	xmin = full_xid(snapshot->xmin, next);
	if ((FullTransactionIdIsValid(copy.horizon) &&
		 !FullTransactionIdPrecedes(copy.horizon, xmin)) ||
		(FullTransactionIdIsValid(prepared_horizon) &&
		 FullTransactionIdPrecedes(xmin, prepared_horizon)))
	{
		*why = "the snapshot predates recent writes";
		return false;
	}
	for (i = 0; i < RECENT_XIDS; i++)
	{
		FullTransactionId x = copy.xids[i];
		TransactionId xid;

		if (!FullTransactionIdIsValid(x) || FullTransactionIdPrecedes(x, xmin))
			continue;			/* finished before the snapshot: seen */
		xid = XidFromFullTransactionId(x);
		if (XidInMVCCSnapshot(xid, snapshot) &&
			(TransactionIdIsInProgress(xid) || TransactionIdDidCommit(xid)))
		{
			*why = "a write the snapshot does not see";
			return false;
		}
	}
	/* both only grow, so their sum changes whenever either does */
	*gen = copy.gen + prepared;
	*why = NULL;
	return true;
}
