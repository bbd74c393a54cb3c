/*
 * ivf_handler.c — the warp_ivf access method's handler: its capabilities,
 * reloptions (lists), the operator class's distance kind, the planner's
 * cost estimate and operator class validation.
 */
#include "postgres.h"

#include "access/amapi.h"
#include "access/reloptions.h"
#include "commands/vacuum.h"
#include "optimizer/optimizer.h"
#include "utils/float.h"
#include "utils/rel.h"
#include "utils/selfuncs.h"

#include "ivf.h"

PG_FUNCTION_INFO_V1(pg_warp_ivf_handler);

int			pgwarp_ivf_probes = 10;

static relopt_kind ivf_relopt_kind;

void
pgwarp_ivf_init(void)
{
	ivf_relopt_kind = add_reloption_kind();
	add_int_reloption(ivf_relopt_kind, "lists",
					  "Number of lists (k-means clusters) of a warp_ivf index",
					  IVF_DEFAULT_LISTS, 1, IVF_MAX_LISTS, AccessExclusiveLock);
}

static bytea *
ivf_options(Datum reloptions, bool validate)
{
	static const relopt_parse_elt tab[] = {
		{"lists", RELOPT_TYPE_INT, offsetof(IvfOptions, lists)},
	};

	return (bytea *) build_reloptions(reloptions, validate, ivf_relopt_kind,
									  sizeof(IvfOptions), tab, lengthof(tab));
}

int
pgwarp_ivf_lists_option(Relation index)
{
	IvfOptions *opts = (IvfOptions *) index->rd_options;

	return opts ? opts->lists : IVF_DEFAULT_LISTS;
}

/* the distance kind of the index's operator class: its support function 1
 * must be one of pg_warp's distance functions */
WarpVecKind
pgwarp_ivf_kind(Relation index)
{
	FmgrInfo   *proc = index_getprocinfo(index, 1, 1);

	if (proc->fn_addr == pg_warp_l2_distance)
		return WARP_VEC_L2;
	if (proc->fn_addr == pg_warp_negative_inner_product)
		return WARP_VEC_NEG_IP;
	if (proc->fn_addr == pg_warp_cosine_distance)
		return WARP_VEC_COSINE;
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("warp_ivf operator class of index \"%s\" has an unknown distance function",
					RelationGetRelationName(index))));
	return WARP_VEC_L2;			/* keep the compiler quiet */
}

/*
 * The scan reads probes/lists of the index and scores every vector there
 * before returning its first row, so startup cost = total cost.  Without
 * an ORDER BY distance the index is useless: a prohibitive cost.
 */
static void
ivf_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
				 Cost *startup, Cost *total, Selectivity *selectivity,
				 double *correlation, double *pages)
{
	GenericCosts costs;
	Relation	index;
	IvfMeta		meta;
	double		ratio;

	if (path->indexorderbys == NIL)
	{
		*startup = *total = 1.0e10;
		*selectivity = 0;
		*correlation = 0;
		*pages = 0;
		return;
	}
	index = index_open(path->indexinfo->indexoid, NoLock);
	pgwarp_ivf_read_meta(index, &meta);
	index_close(index, NoLock);
	ratio = Min(1.0, (double) pgwarp_ivf_probes / meta.nlists);

	MemSet(&costs, 0, sizeof(costs));
	costs.numIndexTuples = path->indexinfo->tuples * ratio;
	genericcostestimate(root, path, loop_count, &costs);
	/* scoring a vector costs about one operator per 8 dimensions, and the
	 * centroids are scored too */
	costs.indexTotalCost += (costs.numIndexTuples + meta.nlists) *
		cpu_operator_cost * Max(1, meta.dims / 8);
	*startup = costs.indexTotalCost;
	*total = costs.indexTotalCost;
	*selectivity = ratio;
	*correlation = 0;
	*pages = costs.numIndexPages;
}

static bool
ivf_validate(Oid opclassoid)
{
	return true;
}

Datum
pg_warp_ivf_handler(PG_FUNCTION_ARGS)
{
	IndexAmRoutine *am = makeNode(IndexAmRoutine);

	am->amstrategies = 0;
	am->amsupport = 1;
	am->amoptsprocnum = 0;
	am->amcanorder = false;
	am->amcanorderbyop = true;
	am->amcanbackward = false;
	am->amcanunique = false;
	am->amcanmulticol = false;
	am->amoptionalkey = true;
	am->amsearcharray = false;
	am->amsearchnulls = false;
	am->amstorage = false;
	am->amclusterable = false;
	am->ampredlocks = false;
	am->amcanparallel = false;
	am->amcaninclude = false;
	am->amusemaintenanceworkmem = false;
	am->amparallelvacuumoptions = VACUUM_OPTION_PARALLEL_BULKDEL;
	am->amkeytype = InvalidOid;

	am->ambuild = pgwarp_ivf_build;
	am->ambuildempty = pgwarp_ivf_buildempty;
	am->aminsert = pgwarp_ivf_insert;
	am->ambulkdelete = pgwarp_ivf_bulkdelete;
	am->amvacuumcleanup = pgwarp_ivf_vacuumcleanup;
	am->amcanreturn = NULL;
	am->amcostestimate = ivf_costestimate;
	am->amoptions = ivf_options;
	am->amproperty = NULL;
	am->ambuildphasename = NULL;
	am->amvalidate = ivf_validate;
	am->amadjustmembers = NULL;
	am->ambeginscan = pgwarp_ivf_beginscan;
	am->amrescan = pgwarp_ivf_rescan;
	am->amgettuple = pgwarp_ivf_gettuple;
	am->amgetbitmap = NULL;
	am->amendscan = pgwarp_ivf_endscan;
	am->ammarkpos = NULL;
	am->amrestrpos = NULL;
	am->amestimateparallelscan = NULL;
	am->aminitparallelscan = NULL;
	am->amparallelrescan = NULL;

	PG_RETURN_POINTER(am);
}
