/*
 * warp_spatial.c — which PostGIS functions the spatial join evaluates, and
 * its plan handoff (see warp_spatial.h).
 *
 * A function is PostGIS's when it is a C function whose library file is
 * named postgis-<major>; which predicate it is follows from its C symbol
 * (pg_proc.prosrc), so a renamed or re-schemed PostGIS is still recognised
 * and nothing that merely shares a name is.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "warp_spatial.h"

bool		pgwarp_enable_spatial = true;

typedef struct KnownFunc
{
	const char *symbol;			/* prosrc */
	WarpGeomOp	op;
	int			container_arg;
	int			nargs;
	const char *name;
} KnownFunc;

static const KnownFunc known[] = {
	{"contains", WARP_GEOM_OP_CONTAINS, 0, 2, "ST_Contains"},
	{"within", WARP_GEOM_OP_CONTAINS, 1, 2, "ST_Within"},
	{"covers", WARP_GEOM_OP_COVERS, 0, 2, "ST_Covers"},
	{"coveredby", WARP_GEOM_OP_COVERS, 1, 2, "ST_CoveredBy"},
	{"ST_Intersects", WARP_GEOM_OP_COVERS, -1, 2, "ST_Intersects"},
	{"LWGEOM_dwithin", WARP_GEOM_OP_DWITHIN, -1, 3, "ST_DWithin"},
	{"gserialized_overlaps_2d", WARP_GEOM_OP_OVERLAPS, -1, 2, "&&"},
};

/* the library file's base name starts with "postgis-" */
static bool
is_postgis_library(const char *probin)
{
	const char *base = strrchr(probin, '/');

	base = base ? base + 1 : probin;
	return strncmp(base, "postgis-", 8) == 0;
}

bool
warp_postgis_function(Oid funcid, const char *symbol)
{
	HeapTuple	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcid));
	Datum		d;
	bool		isnull;
	bool		ok = false;

	if (!HeapTupleIsValid(tup))
		return false;
	if (((Form_pg_proc) GETSTRUCT(tup))->prolang == ClanguageId)
	{
		d = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_probin, &isnull);
		if (!isnull && is_postgis_library(TextDatumGetCString(d)))
		{
			d = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_prosrc, &isnull);
			ok = !isnull && strcmp(TextDatumGetCString(d), symbol) == 0;
		}
	}
	ReleaseSysCache(tup);
	return ok;
}

bool
warp_spatial_func(Oid funcid, WarpSpatialFunc *out, const char **why)
{
	HeapTuple	tup;
	Form_pg_proc proc;
	Datum		d;
	bool		isnull;
	char	   *probin,
			   *prosrc;
	bool		found = false;
	int			i;

	*why = NULL;
	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcid));
	if (!HeapTupleIsValid(tup))
		return false;
	proc = (Form_pg_proc) GETSTRUCT(tup);
	if (proc->prolang != ClanguageId)
	{
		ReleaseSysCache(tup);
		return false;
	}
	d = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_probin, &isnull);
	if (isnull)
	{
		ReleaseSysCache(tup);
		return false;
	}
	probin = TextDatumGetCString(d);
	if (!is_postgis_library(probin))
	{
		ReleaseSysCache(tup);
		return false;
	}
	prosrc = TextDatumGetCString(SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_prosrc, &isnull));
	for (i = 0; i < lengthof(known); i++)
		if (strcmp(prosrc, known[i].symbol) == 0 && proc->pronargs == known[i].nargs)
		{
			out->op = known[i].op;
			out->container_arg = known[i].container_arg;
			out->nargs = known[i].nargs;
			out->name = known[i].name;
			found = true;
			break;
		}
	if (!found)
	{
		if (strncmp(prosrc, "geography", 9) == 0)
			*why = "geography predicates stay on PostgreSQL (the engine's predicates are planar)";
		else
			*why = psprintf("PostGIS function %s is not one the engine evaluates",
							NameStr(proc->proname));
	}
	ReleaseSysCache(tup);
	return found;
}

bool
warp_spatial_clause_parts(Expr *clause, Oid *funcid, Oid *collid, List **args)
{
	if (IsA(clause, FuncExpr))
	{
		FuncExpr   *f = (FuncExpr *) clause;

		*funcid = f->funcid;
		*collid = f->inputcollid;
		*args = f->args;
		return true;
	}
	if (IsA(clause, OpExpr))
	{
		OpExpr	   *o = (OpExpr *) clause;

		*funcid = get_opcode(o->opno);
		*collid = o->inputcollid;
		*args = o->args;
		return OidIsValid(*funcid);
	}
	return false;
}

/* ---------------------------------------------------------- handoff */

#define SPATIAL_PLAN_VERSION 2

List *
warp_spatial_plan_form(const WarpSpatialPlan *p)
{
	return list_make4(lappend(list_make5(makeInteger(SPATIAL_PLAN_VERSION),
										 makeInteger((int) p->funcid),
										 makeInteger((int) p->inputcollid),
										 makeInteger(p->build_arg),
										 makeInteger(p->build_child)),
							  makeBoolean(p->filter)),
					  list_make2(makeInteger(p->arg_slot[0]), makeInteger(p->arg_slot[1])),
					  list_copy(p->src_child),
					  list_copy(p->src_resno));
}

void
warp_spatial_plan_deform(List *private, WarpSpatialPlan *p)
{
	List	   *head;

	if (list_length(private) != 4)
		elog(ERROR, "pg_warp: WarpSpatialJoin plan of another layout");
	head = linitial(private);
	if (list_length(head) != 6 || intVal(linitial(head)) != SPATIAL_PLAN_VERSION)
		elog(ERROR, "pg_warp: WarpSpatialJoin plan of another version");
	p->funcid = (Oid) intVal(lsecond(head));
	p->inputcollid = (Oid) intVal(lthird(head));
	p->build_arg = intVal(lfourth(head));
	p->build_child = intVal(list_nth(head, 4));
	p->filter = boolVal(list_nth(head, 5));
	p->arg_slot[0] = intVal(linitial((List *) lsecond(private)));
	p->arg_slot[1] = intVal(lsecond((List *) lsecond(private)));
	p->src_child = lthird(private);
	p->src_resno = lfourth(private);
}
