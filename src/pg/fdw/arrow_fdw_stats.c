/*
 * arrow_fdw_stats.c — column statistics for the planner from the Arrow
 * files' footers, for arrow_fdw tables that ANALYZE has not sampled.
 *
 * A database-wide ANALYZE (and autovacuum) skips foreign tables, so an
 * arrow_fdw table has no pg_statistic rows until it is analyzed by name.
 * Its row count never needs them (arrow_fdw.c takes the footers' exact
 * counts); its columns' value ranges are in the footers too, as per-batch
 * min_values/max_values (docs/arrow_fdw.md, "Per-batch statistics").
 * When a column has no pg_statistic row, get_relation_stats_hook hands the planner one made from
 * those: an equi-depth histogram of the batches' ranges, each batch's
 * non-null rows (its header's row and null counts) taken as spread evenly
 * between its min and max, and the null fraction from the same counts, so
 * range clauses (<, <=, >, >=, BETWEEN), IS NULL and the column's extremes
 * are estimated from the data instead of PostgreSQL's defaults.  Nothing
 * else is made up: no distinct count or most common values (equality and
 * join estimates stay PostgreSQL's defaults until ANALYZE samples rows).  Integer, float, date,
 * timestamp and numeric columns; text, dictionaries and columns without
 * statistics get nothing.  A row ANALYZE wrote is always used instead.
 */
#include "postgres.h"

#include <math.h>
#include <unistd.h>

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_class.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/selfuncs.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

#include "fdw/arrow_fdw.h"
#include "fdw/arrow_skip.h"
#include "pg_warp.h"
#include "warp.h"

/* histogram bounds made, as ANALYZE makes at default_statistics_target 100 */
#define FOOTER_HIST_BOUNDS	101

static get_relation_stats_hook_type prev_get_relation_stats_hook = NULL;

/* one batch's range and its rows' weight */
typedef struct BatchRange
{
	double		lo;
	double		hi;
	double		rows;
} BatchRange;

/* a point of the cumulative row count: rows at or below x */
typedef struct CdfPoint
{
	double		x;
	double		rows;
} CdfPoint;

/* an event of the sweep: density change at x, or a batch of one value */
typedef struct RangeEvent
{
	double		x;
	double		density;		/* added at x (rows per unit of x) */
	double		mass;			/* rows exactly at x */
} RangeEvent;

static int
cmp_event(const void *a, const void *b)
{
	double		x = ((const RangeEvent *) a)->x;
	double		y = ((const RangeEvent *) b)->x;

	return x < y ? -1 : x > y ? 1 : 0;
}

/*
 * The cumulative row count of the batches' ranges, each batch's rows
 * spread evenly over [lo, hi]: points in x order, *npoints of them.
 */
static CdfPoint *
ranges_cdf(const BatchRange *r, int n, int *npoints)
{
	RangeEvent *ev = palloc(sizeof(RangeEvent) * 2 * n);
	CdfPoint   *pt = palloc(sizeof(CdfPoint) * (2 * n + 1));
	int			ne = 0,
				np = 0,
				i;
	double		density = 0,
				cum = 0;

	for (i = 0; i < n; i++)
	{
		if (r[i].hi > r[i].lo)
		{
			double		d = r[i].rows / (r[i].hi - r[i].lo);

			ev[ne++] = (RangeEvent) {r[i].lo, d, 0};
			ev[ne++] = (RangeEvent) {r[i].hi, -d, 0};
		}
		else
			ev[ne++] = (RangeEvent) {r[i].lo, 0, r[i].rows};
	}
	qsort(ev, ne, sizeof(RangeEvent), cmp_event);
	for (i = 0; i < ne; i++)
	{
		if (np > 0)
			cum += density * (ev[i].x - pt[np - 1].x);
		density += ev[i].density;
		cum += ev[i].mass;
		if (np > 0 && pt[np - 1].x == ev[i].x)
			pt[np - 1].rows = cum;
		else
			pt[np++] = (CdfPoint) {ev[i].x, cum};
	}
	pfree(ev);
	*npoints = np;
	return pt;
}

/* The x below which a fraction q of the rows lie (linear between points). */
static double
cdf_quantile(const CdfPoint *pt, int np, double q)
{
	double		target = q * pt[np - 1].rows;
	int			k;

	for (k = 0; k < np - 1 && pt[k].rows < target; k++)
		;
	if (k == 0 || pt[k].rows <= pt[k - 1].rows)
		return pt[k].x;
	return pt[k - 1].x + (target - pt[k - 1].rows) / (pt[k].rows - pt[k - 1].rows) *
		(pt[k].x - pt[k - 1].x);
}

/* x as a Datum of typid, rounded for the integral types; false if it cannot be one */
static bool
double_datum(double x, Oid typid, Datum *d)
{
	switch (typid)
	{
		case INT2OID:
			if (x < PG_INT16_MIN || x > PG_INT16_MAX)
				return false;
			*d = Int16GetDatum((int16) rint(x));
			return true;
		case INT4OID:
		case DATEOID:
			if (x < PG_INT32_MIN || x > PG_INT32_MAX)
				return false;
			*d = Int32GetDatum((int32) rint(x));
			return true;
		case INT8OID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			if (x < -9.2e18 || x > 9.2e18)
				return false;
			*d = Int64GetDatum((int64) rint(x));
			return true;
		case FLOAT4OID:
			*d = Float4GetDatum((float4) x);
			return true;
		case FLOAT8OID:
			*d = Float8GetDatum(x);
			return true;
		case NUMERICOID:
			*d = DirectFunctionCall1(float8_numeric, Float8GetDatum(x));
			return true;
	}
	return false;
}

/*
 * The batches' ranges of column attnum over rel's files (arrow_fdw.c's
 * list, committed lengths for a writable table): *n of them, NULL if no
 * file has usable statistics for it; *rows and *nulls over the batches of
 * the files that have.
 */
static BatchRange *
column_ranges(RelOptInfo *rel, Oid relid, AttrNumber attnum, Oid typid, int *n,
			  double *rows, double *nulls)
{
	const ArrowFdwOptions *opts = arrow_fdw_rel_options(rel, NULL);
	char	   *name = get_attname(relid, attnum, false);
	BatchRange *r = NULL;
	int			cap = 0;
	ListCell   *lc;

	*n = 0;
	*rows = *nulls = 0;
	foreach(lc, opts->files)
	{
		const char *path = lfirst(lc);
		int64		limit = -1;
		bool		recover;
		ArrowFile	f;
		ArrowArena	arena;
		int			fd,
					fi,
					b;
		double	   *lo,
				   *hi;
		bool	   *present;

		if (opts->writable)
		{
			limit = arrow_committed_length(path);
			if (limit == 0 || access(path, F_OK) != 0)
				continue;
		}
		recover = opts->writable && limit < 0;
		pgwarp_arrow_open_file_ext(&f, path, limit, recover, &fd);
		for (fi = 0; fi < f.schema.n_fields; fi++)
			if (strcmp(f.schema.fields[fi].name, name) == 0)
				break;
		lo = palloc(sizeof(double) * f.n_batches);
		hi = palloc(sizeof(double) * f.n_batches);
		present = palloc(sizeof(bool) * f.n_batches);
		arrow_arena_init(&arena, pgwarp_arrow_allocator());
		if (fi < f.schema.n_fields &&
			arrow_skip_stats_as_double(&f, fi, typid, &arena, lo, hi, present))
		{
			if (cap < *n + f.n_batches)
			{
				cap = Max(cap * 2, *n + f.n_batches);
				r = r ? repalloc(r, sizeof(BatchRange) * cap) : palloc(sizeof(BatchRange) * cap);
			}
			for (b = 0; b < f.n_batches; b++)
			{
				ArrowBatchMeta meta;
				ArrowError	err;
				double		nn;

				CHECK_FOR_INTERRUPTS();
				if (arrow_read_batch_meta(&f, b, &arena, &meta, &err) != 0)
					pgwarp_report_arrow_error(ERROR, &err);
				nn = (double) meta.nodes[f.schema.fields[fi].node_index].null_count;
				if (nn < 0)		/* unknown (a Parquet file without them) */
					nn = 0;
				*rows += (double) meta.length;
				*nulls += nn;
				if (present[b] && isfinite(lo[b]) && isfinite(hi[b]) && lo[b] <= hi[b])
					r[(*n)++] = (BatchRange) {lo[b], hi[b], (double) meta.length - nn};
			}
		}
		arrow_arena_free_all(&arena);
		pgwarp_arrow_close_file(&f, fd);
	}
	return *n > 0 ? r : NULL;
}

/*
 * A pg_statistic row for column attnum of rel holding only a histogram
 * made from the footers; NULL when there are no usable statistics.
 */
static HeapTuple
footer_stats_tuple(RelOptInfo *rel, Oid relid, AttrNumber attnum)
{
	Oid			typid;
	int32		typmod;
	Oid			collid;
	TypeCacheEntry *tc;
	BatchRange *r;
	CdfPoint   *pt;
	int			n,
				np,
				i;
	double		rows,
				nullrows;
	Datum		bounds[FOOTER_HIST_BOUNDS];
	Datum		values[Natts_pg_statistic];
	bool		nulls[Natts_pg_statistic];
	Relation	sd;
	HeapTuple	tuple;

	get_atttypetypmodcoll(relid, attnum, &typid, &typmod, &collid);
	tc = lookup_type_cache(typid, TYPECACHE_LT_OPR);
	if (!OidIsValid(tc->lt_opr) || (r = column_ranges(rel, relid, attnum, typid, &n, &rows, &nullrows)) == NULL)
		return NULL;
	pt = ranges_cdf(r, n, &np);
	if (np == 0 || pt[np - 1].rows <= 0)
		return NULL;
	for (i = 0; i < FOOTER_HIST_BOUNDS; i++)
		if (!double_datum(i == 0 ? pt[0].x : i == FOOTER_HIST_BOUNDS - 1 ? pt[np - 1].x :
						  cdf_quantile(pt, np, (double) i / (FOOTER_HIST_BOUNDS - 1)),
						  typid, &bounds[i]))
			return NULL;

	memset(nulls, true, sizeof(nulls));
	values[Anum_pg_statistic_starelid - 1] = ObjectIdGetDatum(relid);
	values[Anum_pg_statistic_staattnum - 1] = Int16GetDatum(attnum);
	values[Anum_pg_statistic_stainherit - 1] = BoolGetDatum(false);
	values[Anum_pg_statistic_stanullfrac - 1] = Float4GetDatum(rows > 0 ? nullrows / rows : 0);
	values[Anum_pg_statistic_stawidth - 1] = Int32GetDatum(get_typavgwidth(typid, typmod));
	values[Anum_pg_statistic_stadistinct - 1] = Float4GetDatum(0);	/* unknown */
	for (i = Anum_pg_statistic_starelid - 1; i < Anum_pg_statistic_stakind1 - 1; i++)
		nulls[i] = false;
	for (i = 0; i < STATISTIC_NUM_SLOTS; i++)
	{
		values[Anum_pg_statistic_stakind1 - 1 + i] = Int16GetDatum(i == 0 ? STATISTIC_KIND_HISTOGRAM : 0);
		values[Anum_pg_statistic_staop1 - 1 + i] = ObjectIdGetDatum(i == 0 ? tc->lt_opr : InvalidOid);
		values[Anum_pg_statistic_stacoll1 - 1 + i] = ObjectIdGetDatum(i == 0 ? collid : InvalidOid);
		nulls[Anum_pg_statistic_stakind1 - 1 + i] = false;
		nulls[Anum_pg_statistic_staop1 - 1 + i] = false;
		nulls[Anum_pg_statistic_stacoll1 - 1 + i] = false;
	}
	values[Anum_pg_statistic_stavalues1 - 1] =
		PointerGetDatum(construct_array(bounds, FOOTER_HIST_BOUNDS, typid, tc->typlen,
										tc->typbyval, tc->typalign));
	nulls[Anum_pg_statistic_stavalues1 - 1] = false;

	sd = table_open(StatisticRelationId, AccessShareLock);
	tuple = heap_form_tuple(RelationGetDescr(sd), values, nulls);
	table_close(sd, AccessShareLock);
	return tuple;
}

/* the rows made here live as long as the planning: nothing to release */
static void
keep_stats_tuple(HeapTuple tuple)
{
}

static bool
arrow_relation_stats(PlannerInfo *root, RangeTblEntry *rte, AttrNumber attnum,
					 VariableStatData *vardata)
{
	List	  **cache;
	ListCell   *lc;
	ArrowFooterStats *fs = NULL;
	Oid			userid;

	if (prev_get_relation_stats_hook &&
		prev_get_relation_stats_hook(root, rte, attnum, vardata))
		return true;
	if (rte->rtekind != RTE_RELATION || rte->relkind != RELKIND_FOREIGN_TABLE ||
		rte->inh || attnum <= 0 || vardata->rel == NULL ||
		vardata->rel->relid == 0 || planner_rt_fetch(vardata->rel->relid, root) != rte ||
		!arrow_fdw_is_arrow_rel(vardata->rel))
		return false;
	/* ANALYZE's row, when it wrote one, as PostgreSQL would find it */
	if (SearchSysCacheExists3(STATRELATTINH, ObjectIdGetDatum(rte->relid),
							  Int16GetDatum(attnum), BoolGetDatum(false)))
		return false;

	arrow_fdw_rel_options(vardata->rel, &cache);
	foreach(lc, *cache)
		if (((ArrowFooterStats *) lfirst(lc))->attnum == attnum)
			fs = lfirst(lc);
	if (fs == NULL)
	{
		fs = palloc(sizeof(ArrowFooterStats));
		fs->attnum = attnum;
		fs->tuple = footer_stats_tuple(vardata->rel, rte->relid, attnum);
		*cache = lappend(*cache, fs);
	}
	if (fs->tuple == NULL)
		return false;
	vardata->statsTuple = fs->tuple;
	vardata->freefunc = keep_stats_tuple;
	/* the statistics show values: only to those who may read the column */
	userid = OidIsValid(rte->checkAsUser) ? rte->checkAsUser : GetUserId();
	vardata->acl_ok = rte->securityQuals == NIL &&
		(pg_class_aclcheck(rte->relid, userid, ACL_SELECT) == ACLCHECK_OK ||
		 pg_attribute_aclcheck(rte->relid, attnum, userid, ACL_SELECT) == ACLCHECK_OK);
	return true;
}

void
pgwarp_arrow_stats_init(void)
{
	prev_get_relation_stats_hook = get_relation_stats_hook;
	get_relation_stats_hook = arrow_relation_stats;
}
