/*
 * ivf.h — warp_ivf, an IVF-Flat index access method over real[] columns.
 *
 * The index partitions the indexed vectors into `lists` lists by k-means;
 * a scan computes the query's distance to every list's centroid, reads the
 * pg_warp.ivf_probes nearest lists and returns their rows nearest first.
 *
 * Pages (all written through generic WAL, so the index is crash-safe and
 * replicated like any other):
 *   block 0             metapage: IvfMeta
 *   blocks 1 .. 1+P-1   list pages: IvfList items (head block + centroid)
 *   other blocks        entry pages: IvfEntry items (heap TID + vector),
 *                       chained newest first through IvfPageOpaque.next;
 *                       a list's head is its newest page, where inserts go
 *
 * Files: ivf_handler.c (handler, options, opclass kind, cost estimate),
 * ivf_build.c, ivf_insert.c, ivf_scan.c, ivf_vacuum.c (bulk delete,
 * cleanup, and pg_warp_ivf_check), ivf_pages.c (page helpers); k-means is
 * pure C in src/engine/warp_kmeans.c.
 */
#ifndef PGWARP_IVF_H
#define PGWARP_IVF_H

#include "postgres.h"

#include "access/genam.h"
#include "access/generic_xlog.h"
#include "access/reloptions.h"
#include "nodes/execnodes.h"
#include "storage/bufmgr.h"
#include "storage/itemptr.h"
#include "utils/relcache.h"

#include "vector.h"

#define IVF_MAGIC			0x57495646	/* "WIVF" */
#define IVF_VERSION			1
#define IVF_METAPAGE_BLKNO	0
#define IVF_FIRST_LIST_BLKNO 1
#define IVF_MAX_DIMS		2000
#define IVF_DEFAULT_LISTS	100
#define IVF_MAX_LISTS		32768

/* page kinds, in IvfPageOpaque.flags */
#define IVF_PAGE_META		1
#define IVF_PAGE_LIST		2
#define IVF_PAGE_ENTRY		4

typedef struct IvfPageOpaque
{
	BlockNumber next;			/* entry pages: the list's next older page */
	uint16		flags;
	uint16		page_id;		/* IVF_PAGE_ID, identifies our pages */
} IvfPageOpaque;

#define IVF_PAGE_ID			0xFF8A
#define IvfPageGetOpaque(page) ((IvfPageOpaque *) PageGetSpecialPointer(page))

typedef struct IvfMeta
{
	uint32		magic;
	uint32		version;
	int32		dims;			/* 0 until the index holds a vector */
	int32		kind;			/* WarpVecKind of the operator class */
	int32		nlists;
	int32		lists_per_page;
} IvfMeta;

#define IvfPageGetMeta(page) ((IvfMeta *) PageGetContents(page))

typedef struct IvfList
{
	BlockNumber head;			/* newest entry page, or InvalidBlockNumber */
	uint32		pad;
	float		centroid[FLEXIBLE_ARRAY_MEMBER];	/* dims floats */
} IvfList;

typedef struct IvfEntry
{
	ItemPointerData tid;		/* the heap row */
	uint16		pad;
	float		vec[FLEXIBLE_ARRAY_MEMBER]; /* dims floats */
} IvfEntry;

#define IVF_LIST_SIZE(dims)		MAXALIGN(offsetof(IvfList, centroid) + sizeof(float) * (dims))
#define IVF_ENTRY_SIZE(dims)	MAXALIGN(offsetof(IvfEntry, vec) + sizeof(float) * (dims))

typedef struct IvfOptions
{
	int32		vl_len_;		/* varlena header (do not touch directly) */
	int			lists;
} IvfOptions;

/* a list's location among the list pages */
#define IvfListBlock(meta, i)	(IVF_FIRST_LIST_BLKNO + (i) / (meta)->lists_per_page)
#define IvfListOffset(meta, i)	((OffsetNumber) ((i) % (meta)->lists_per_page + 1))

/* the centroids of an index, read into memory */
typedef struct IvfCentroids
{
	int			nlists;
	int			dims;
	WarpVecKind kind;
	float	   *c;				/* nlists * dims */
	BlockNumber *head;			/* nlists */
} IvfCentroids;

/* ivf_handler.c */
extern WarpVecKind pgwarp_ivf_kind(Relation index);
extern int	pgwarp_ivf_lists_option(Relation index);

/* ivf_pages.c */
extern void pgwarp_ivf_init_page(Page page, uint16 flags);
extern Buffer pgwarp_ivf_new_buffer(Relation index, ForkNumber fork);
extern void pgwarp_ivf_read_meta(Relation index, IvfMeta *meta);
extern void pgwarp_ivf_read_centroids(Relation index, const IvfMeta *meta,
									  IvfCentroids *out);
extern int	pgwarp_ivf_nearest_list(const IvfCentroids *c, const float *v);
extern void pgwarp_ivf_check_page(Relation index, Page page, BlockNumber blk,
								  uint16 flags);
extern void pgwarp_ivf_vector(Relation index, Datum value, int dims_expected,
							  WarpVecArg *out, void **tofree);

/* ivf_build.c */
extern IndexBuildResult *pgwarp_ivf_build(Relation heap, Relation index,
										  IndexInfo *indexInfo);
extern void pgwarp_ivf_buildempty(Relation index);

/* ivf_insert.c */
extern bool pgwarp_ivf_insert(Relation index, Datum *values, bool *isnull,
							  ItemPointer heap_tid, Relation heap,
							  IndexUniqueCheck checkUnique, bool indexUnchanged,
							  IndexInfo *indexInfo);

/* ivf_scan.c */
extern IndexScanDesc pgwarp_ivf_beginscan(Relation index, int nkeys, int norderbys);
extern void pgwarp_ivf_rescan(IndexScanDesc scan, ScanKey keys, int nkeys,
							  ScanKey orderbys, int norderbys);
extern bool pgwarp_ivf_gettuple(IndexScanDesc scan, ScanDirection dir);
extern void pgwarp_ivf_endscan(IndexScanDesc scan);

/* ivf_vacuum.c */
extern IndexBulkDeleteResult *pgwarp_ivf_bulkdelete(IndexVacuumInfo *info,
													IndexBulkDeleteResult *stats,
													IndexBulkDeleteCallback callback,
													void *callback_state);
extern IndexBulkDeleteResult *pgwarp_ivf_vacuumcleanup(IndexVacuumInfo *info,
													   IndexBulkDeleteResult *stats);

#endif							/* PGWARP_IVF_H */
