/*
 * arrow_skip.c — skipping record batches whose min/max statistics
 * (docs/arrow_fdw.md, "Per-batch statistics") show that no row can pass a
 * WHERE clause.
 *
 * Usable clauses are "column OP value" (either way round) where OP is a
 * btree comparison of the integer, float or datetime operator families and
 * value is a constant or a parameter (evaluated once per scan or rescan);
 * text equality and ordering comparisons serve the row filter only.
 * Statistics are converted into PostgreSQL's value domain per file (Date32
 * days since 1970 to DateADT, Timestamp units to microseconds since 2000,
 * ...), so one comparison serves every file.  Floats compare as PostgreSQL
 * does: NaN equals NaN and sorts above every other value.  A NULL value
 * makes a strict comparison false everywhere: every batch is skipped.
 *
 * The statistics are trusted: a file whose min_values/max_values lie gives
 * wrong answers, as with pg2arrow/PG-Strom files.
 */
#include "postgres.h"

#include <math.h>

#include "access/stratnum.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_opfamily.h"
#include "catalog/pg_type.h"
#include "datatype/timestamp.h"
#include "executor/executor.h"
#include "mb/pg_wchar.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"

#include "fdw/arrow_pg.h"
#include "fdw/arrow_skip.h"
#include "fdw/arrow_text_memo.h"
#include "pg_warp.h"
#include "warp.h"

/* btree float_ops and datetime_ops (pg_opfamily.dat gives them no macro) */
#define FLOAT_BTREE_FAM_OID		1970
#define DATETIME_BTREE_FAM_OID	434
#define NUMERIC_BTREE_FAM_OID	1988

typedef enum SkipDomain
{
	DOM_INT,
	DOM_FLOAT,
	DOM_DATE,					/* DateADT */
	DOM_TIMESTAMP,				/* microseconds since 2000-01-01 */
	DOM_NUMERIC,				/* numeric against Decimal128 statistics
								 * (batch skipping only, not the row filter) */
	DOM_TEXT,					/* text/varchar "=" under a deterministic
								 * collation: byte equality (row filter only) */
	DOM_TEXT_ORDER				/* text/varchar <, <=, >=, > under any
								 * collation: the operator, once per distinct
								 * value (row filter only, arrow_text_memo.h) */
} SkipDomain;

typedef struct SkipQual
{
	int			attno;			/* 0-based */
	int			strategy;		/* BT*StrategyNumber, for "column OP value" */
	SkipDomain	domain;
	Expr	   *value_expr;
	ExprState  *value_state;	/* for parameters */
	bool		have_value;
	bool		value_null;
	__int128	ivalue;
	double		dvalue;
	char	   *tvalue;			/* DOM_TEXT: the value's bytes, in cxt */
	TextMemo   *memo;			/* DOM_TEXT_ORDER: the operator's answers */
	Datum		nvalue;			/* DOM_NUMERIC: the value, in cxt */
	int			tlen;
	MemoryContext cxt;			/* the scan's: outlives its batches */
	const char *opname;
} SkipQual;

/* "column IS [NOT] NULL", decided from the batch's null counts */
typedef struct NullQual
{
	int			attno;			/* 0-based */
	bool		is_null;		/* IS NULL (else IS NOT NULL) */
} NullQual;

struct ArrowSkipQuals
{
	int			n;				/* the quals', then the join ranges' */
	SkipQual   *q;
	int			cap;			/* of q */
	int			nfixed;			/* from the quals (the rest: join ranges) */
	bool		all;			/* every qual given to build is in q or nq */
	int			nnull;
	NullQual   *nq;
};

typedef struct SkipColStats
{
	bool		usable;
	int			scale;			/* DOM_NUMERIC: the Decimal128's scale */
	ArrowStatValue *mins;
	ArrowStatValue *maxs;
} SkipColStats;

struct ArrowSkipStats
{
	int			nbatches;
	SkipColStats *col;			/* per qual */
	ArrowFile  *file;
	int		   *bloom_field;	/* per qual: the field whose Bloom filters
								 * an equality may consult, else -1 */
};

/*
 * The domain of a column or value of type typid: numeric, or the engine's
 * type of it (warp_type_of) but bool, integers and floats each as one.
 */
static bool
domain_of(Oid typid, SkipDomain *dom)
{
	WarpType	t;

	if (typid == NUMERICOID)
	{
		*dom = DOM_NUMERIC;
		return true;
	}
	if (!warp_type_of(typid, &t) || t == WT_BOOL)
		return false;
	*dom = WARP_TYPE_IS_FLOAT(t) ? DOM_FLOAT : t == WT_DATE ? DOM_DATE :
		t == WT_TIMESTAMP ? DOM_TIMESTAMP : DOM_INT;
	return true;
}

static int
commute_strategy(int s)
{
	switch (s)
	{
		case BTLessStrategyNumber:
			return BTGreaterStrategyNumber;
		case BTLessEqualStrategyNumber:
			return BTGreaterEqualStrategyNumber;
		case BTGreaterEqualStrategyNumber:
			return BTLessEqualStrategyNumber;
		case BTGreaterStrategyNumber:
			return BTLessStrategyNumber;
	}
	return s;
}

static const char *
strategy_name(int s)
{
	static const char *const names[] = {"?", "<", "<=", "=", ">=", ">"};

	return (s >= 1 && s <= 5) ? names[s] : "?";
}

static Expr *
strip(Expr *e)
{
	while (e && IsA(e, RelabelType))
		e = ((RelabelType *) e)->arg;
	return e;
}

/* Is opno a btree comparison of a family whose values we can compare? */
static int
btree_strategy(Oid opno, Oid var_type, SkipDomain var_dom, Oid value_type)
{
	List	   *interps = get_op_btree_interpretation(opno);
	ListCell   *lc;
	SkipDomain	vdom;

	if (!domain_of(value_type, &vdom) || vdom != var_dom)
		return 0;
	/*
	 * Datetimes compare only with their own type here: timestamp against
	 * timestamptz depends on the TimeZone setting.
	 */
	if ((var_dom == DOM_DATE || var_dom == DOM_TIMESTAMP) && value_type != var_type)
		return 0;
	foreach(lc, interps)
	{
		OpBtreeInterpretation *bi = lfirst(lc);

		if (bi->opfamily_id == INTEGER_BTREE_FAM_OID ||
			bi->opfamily_id == FLOAT_BTREE_FAM_OID ||
			bi->opfamily_id == DATETIME_BTREE_FAM_OID ||
			bi->opfamily_id == NUMERIC_BTREE_FAM_OID)
		{
			if (bi->strategy >= BTLessStrategyNumber &&
				bi->strategy <= BTGreaterStrategyNumber)
				return bi->strategy;
		}
	}
	return 0;
}

/*
 * "text_column = value" under a deterministic collation is byte equality,
 * so it can be decided from the raw UTF-8 bytes when those are what the
 * database compares: a UTF-8 database (a constant of any other encoding is
 * compared in that encoding, after conversion; see row_text_equal).
 * bpchar is excluded (its equality ignores trailing blanks).
 */
static bool
text_equality(OpExpr *op, Oid var_type, Oid value_type)
{
	Oid			coll = op->inputcollid;

	if ((var_type != TEXTOID && var_type != VARCHAROID) ||
		(value_type != TEXTOID && value_type != VARCHAROID))
		return false;
	if (op->opno != TextEqualOperator)
		return false;
	if (!OidIsValid(coll) || !get_collation_isdeterministic(coll))
		return false;
	return GetDatabaseEncoding() == PG_UTF8;
}

/*
 * "text_column OP value" with OP an ordering comparison of text's btree
 * family (<, <=, >=, >) under any collation, in a UTF-8 database: decided
 * from the raw bytes by the operator itself, once per distinct value
 * (arrow_text_memo.h), so it is PostgreSQL's answer under every collation;
 * *strategy receives OP's.  Text comparisons raise no error on valid
 * UTF-8, and invalid values are left to the executor.
 */
static bool
text_ordering(OpExpr *op, Oid var_type, Oid value_type, int *strategy)
{
	int			s;

	if ((var_type != TEXTOID && var_type != VARCHAROID) ||
		(value_type != TEXTOID && value_type != VARCHAROID))
		return false;
	if (!OidIsValid(op->inputcollid) || GetDatabaseEncoding() != PG_UTF8)
		return false;
	s = get_op_opfamily_strategy(op->opno, TEXT_BTREE_FAM_OID);
	if (s != BTLessStrategyNumber && s != BTLessEqualStrategyNumber &&
		s != BTGreaterEqualStrategyNumber && s != BTGreaterStrategyNumber)
		return false;
	*strategy = s;
	return true;
}

/*
 * Add clause to sq if it has a form decided from statistics or raw values
 * ("column OP value", "text_column = value", "column IS [NOT] NULL");
 * false if it has none of them.
 */
static bool
add_qual(ArrowSkipQuals *sq, Expr *clause, Index scanrelid, TupleDesc tupdesc, PlanState *ps)
{
	OpExpr	   *op = (OpExpr *) clause;
	Expr	   *l;
	Expr	   *r;
	Var		   *var;
	Expr	   *val;
	bool		var_left;
	Oid			vartype;
	SkipDomain	dom;
	int			strategy;
	SkipQual   *q;

	/* IS [NOT] NULL on a plain column (not a row: its IS NULL means "all
	 * fields null") */
	if (IsA(clause, NullTest))
	{
		NullTest   *nt = (NullTest *) clause;
		Var		   *v = (Var *) strip(nt->arg);

		if (nt->argisrow || !IsA(v, Var) || v->varno != scanrelid ||
			v->varlevelsup != 0 || v->varattno <= 0 || v->varattno > tupdesc->natts)
			return false;
		sq->nq[sq->nnull].attno = v->varattno - 1;
		sq->nq[sq->nnull].is_null = nt->nulltesttype == IS_NULL;
		sq->nnull++;
		return true;
	}
	if (!IsA(clause, OpExpr) || list_length(op->args) != 2)
		return false;
	l = strip(linitial(op->args));
	r = strip(lsecond(op->args));
	if (IsA(l, Var) && (IsA(r, Const) || IsA(r, Param)))
	{
		var = (Var *) l;
		val = r;
		var_left = true;
	}
	else if (IsA(r, Var) && (IsA(l, Const) || IsA(l, Param)))
	{
		var = (Var *) r;
		val = l;
		var_left = false;
	}
	else
		return false;
	if (var->varno != scanrelid || var->varlevelsup != 0 || var->varattno <= 0 ||
		var->varattno > tupdesc->natts)
		return false;
	vartype = TupleDescAttr(tupdesc, var->varattno - 1)->atttypid;
	if (text_equality(op, vartype, exprType((Node *) val)))
	{
		dom = DOM_TEXT;
		strategy = BTEqualStrategyNumber;
	}
	else if (text_ordering(op, vartype, exprType((Node *) val), &strategy))
	{
		dom = DOM_TEXT_ORDER;
		if (!var_left)
			strategy = commute_strategy(strategy);
	}
	else
	{
		if (!domain_of(vartype, &dom))
			return false;
		strategy = btree_strategy(op->opno, vartype, dom, exprType((Node *) val));
		if (strategy == 0)
			return false;
		if (!var_left)
			strategy = commute_strategy(strategy);
	}
	q = &sq->q[sq->n++];
	q->cxt = CurrentMemoryContext;
	q->attno = var->varattno - 1;
	q->strategy = strategy;
	q->domain = dom;
	q->value_expr = val;
	if (IsA(val, Param))
		q->value_state = ExecInitExpr(val, ps);
	if (dom == DOM_TEXT_ORDER)
		q->memo = text_memo_create(q->cxt, get_opcode(op->opno), op->inputcollid, var_left);
	return true;
}

int
arrow_skip_quals_count(const ArrowSkipQuals *sq)
{
	return sq ? sq->nfixed + sq->nnull : 0;
}

/* an empty set with room for n quals */
static ArrowSkipQuals *
skip_quals_alloc(int n)
{
	ArrowSkipQuals *sq = palloc0(sizeof(ArrowSkipQuals));

	sq->cap = Max(n, 1);
	sq->q = palloc0(sizeof(SkipQual) * sq->cap);
	sq->nq = palloc0(sizeof(NullQual) * sq->cap);
	sq->all = true;
	return sq;
}

ArrowSkipQuals *
arrow_skip_quals_build(List *quals, Index scanrelid, TupleDesc tupdesc, PlanState *ps)
{
	ArrowSkipQuals *sq = skip_quals_alloc(list_length(quals));
	ListCell   *lc;

	/*
	 * The executor evaluates the quals in list order, row by row.  A batch
	 * or row rejected here never reaches the quals after the one that
	 * rejected it, nor those before it: so only the leading quals of the
	 * simple forms above, which cannot raise an error, may be used, or an
	 * overflow PostgreSQL would report in an earlier qual would go
	 * unreported.
	 */
	foreach(lc, quals)
		if (!add_qual(sq, lfirst(lc), scanrelid, tupdesc, ps))
		{
			sq->all = false;
			break;
		}
	sq->nfixed = sq->n;
	if (sq->n == 0 && sq->nnull == 0)
		return NULL;
	return sq;
}

bool
arrow_skip_quals_all(const ArrowSkipQuals *sq, List *quals)
{
	return quals == NIL || (sq != NULL && sq->all);
}

void
arrow_skip_join_ranges_clear(ArrowSkipQuals *sq)
{
	if (sq)
		sq->n = sq->nfixed;
}

bool
arrow_skip_join_range_add(ArrowSkipQuals **sqp, int attno, Oid typid, int64 lo, int64 hi)
{
	ArrowSkipQuals *sq = *sqp;
	SkipDomain	dom;
	int			k;

	if (!domain_of(typid, &dom) ||
		(dom != DOM_INT && dom != DOM_DATE && dom != DOM_TIMESTAMP))
		return false;
	if (sq == NULL)
		sq = *sqp = skip_quals_alloc(2);
	if (sq->n + 2 > sq->cap)
	{
		sq->cap = (sq->n + 2) * 2;
		sq->q = repalloc(sq->q, sizeof(SkipQual) * sq->cap);	/* set below */
	}
	for (k = 0; k < 2; k++)
	{
		SkipQual   *q = &sq->q[sq->n++];

		memset(q, 0, sizeof(SkipQual));
		q->cxt = CurrentMemoryContext;
		q->attno = attno;
		q->strategy = k == 0 ? BTGreaterEqualStrategyNumber : BTLessEqualStrategyNumber;
		q->domain = dom;
		q->have_value = true;	/* no value_expr: known already */
		q->ivalue = k == 0 ? lo : hi;
	}
	return true;
}

void
arrow_skip_quals_rescan(ArrowSkipQuals *sq)
{
	int			i;

	if (sq == NULL)
		return;
	for (i = 0; i < sq->n; i++)
		if (sq->q[i].value_state)
			sq->q[i].have_value = false;
}

const char *
arrow_skip_quals_describe(ArrowSkipQuals *sq, TupleDesc tupdesc)
{
	StringInfoData buf;
	int			i;

	initStringInfo(&buf);
	for (i = 0; i < sq->nnull; i++)
		appendStringInfo(&buf, "%s%s IS %sNULL", buf.len ? ", " : "",
						 quote_identifier(NameStr(TupleDescAttr(tupdesc, sq->nq[i].attno)->attname)),
						 sq->nq[i].is_null ? "" : "NOT ");
	for (i = 0; i < sq->nfixed; i++)
	{
		SkipQual   *q = &sq->q[i];
		char	   *v;

		if (IsA(q->value_expr, Const))
		{
			Const	   *c = (Const *) q->value_expr;
			Oid			out;
			bool		varlena;

			if (c->constisnull)
				v = "NULL";
			else
			{
				getTypeOutputInfo(c->consttype, &out, &varlena);
				v = OidOutputFunctionCall(out, c->constvalue);
				if (q->domain == DOM_TEXT || q->domain == DOM_TEXT_ORDER)
					v = quote_literal_cstr(v);
			}
		}
		else
			v = psprintf("$%d", ((Param *) q->value_expr)->paramid);
		appendStringInfo(&buf, "%s%s %s %s", buf.len ? ", " : "",
						 quote_identifier(NameStr(TupleDescAttr(tupdesc, q->attno)->attname)),
						 strategy_name(q->strategy), v);
	}
	return buf.data;
}

/* the join ranges, e.g. "lo_orderdate in [19930101, 19931231]", or NULL */
const char *
arrow_skip_join_ranges_describe(ArrowSkipQuals *sq, TupleDesc tupdesc)
{
	StringInfoData buf;
	int			i;

	if (sq == NULL || sq->n == sq->nfixed)
		return NULL;
	initStringInfo(&buf);
	for (i = sq->nfixed; i + 1 < sq->n; i += 2)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, sq->q[i].attno);
		char	   *bound[2];
		int			k;

		for (k = 0; k < 2; k++)
		{
			int64		v = (int64) sq->q[i + k].ivalue;

			if (sq->q[i].domain == DOM_DATE)
				bound[k] = DatumGetCString(DirectFunctionCall1(date_out,
															   DateADTGetDatum((DateADT) v)));
			else if (sq->q[i].domain == DOM_TIMESTAMP)
				bound[k] = DatumGetCString(DirectFunctionCall1(att->atttypid == TIMESTAMPTZOID ?
															   timestamptz_out : timestamp_out,
															   Int64GetDatum(v)));
			else
				bound[k] = psprintf(INT64_FORMAT, v);
		}
		appendStringInfo(&buf, "%s%s in [%s, %s]", buf.len ? ", " : "",
						 quote_identifier(NameStr(att->attname)), bound[0], bound[1]);
	}
	return buf.data;
}

/* ------------------------------------------------------------- values */

static void
set_value(SkipQual *q, Datum d, Oid typid)
{
	if (q->domain == DOM_TEXT_ORDER)
	{
		text	   *t = DatumGetTextPP(d);

		text_memo_set_value(q->memo, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
		return;
	}
	if (q->domain == DOM_TEXT)
	{
		text	   *t = DatumGetTextPP(d);

		/*
		 * in the scan's context: the value is evaluated once, during the
		 * first batch, whose memory is reset before the next batch (a
		 * palloc here left later batches comparing with freed bytes, which
		 * dropped rows that matched)
		 */
		q->tlen = VARSIZE_ANY_EXHDR(t);
		q->tvalue = MemoryContextAlloc(q->cxt, q->tlen + 1);
		memcpy(q->tvalue, VARDATA_ANY(t), q->tlen);
		return;
	}
	if (q->domain == DOM_NUMERIC)
	{
		/* in the scan's context, for the same reason */
		MemoryContext old = MemoryContextSwitchTo(q->cxt);

		q->nvalue = datumCopy(d, false, -1);
		MemoryContextSwitchTo(old);
		return;
	}
	{
		int64		iv = 0;

		warp_datum_value(d, typid, &iv, &q->dvalue);
		q->ivalue = iv;
	}
}

static void
eval_value(SkipQual *q, ExprContext *econtext)
{
	if (q->have_value)
		return;
	if (IsA(q->value_expr, Const))
	{
		Const	   *c = (Const *) q->value_expr;

		q->value_null = c->constisnull;
		if (!c->constisnull)
			set_value(q, c->constvalue, c->consttype);
	}
	else
	{
		bool		isnull;
		Datum		d = ExecEvalExprSwitchContext(q->value_state, econtext, &isnull);

		q->value_null = isnull;
		if (!isnull)
			set_value(q, d, exprType((Node *) q->value_expr));
	}
	q->have_value = true;
}

/* ------------------------------------------------------------ statistics */

static __int128
floor_div(__int128 a, __int128 b)
{
	__int128	q = a / b;

	if ((a % b != 0) && ((a < 0) != (b < 0)))
		q--;
	return q;
}

/* Convert a file statistic to the PostgreSQL domain of the column. */
static bool
convert_stat(const ArrowType *t, SkipDomain dom, ArrowStatValue *v)
{
	if (!v->present)
		return true;
	switch (dom)
	{
		case DOM_TEXT:
		case DOM_TEXT_ORDER:
			return false;		/* no text statistics are used */
		case DOM_NUMERIC:
			/* kept unscaled; cmp_stat scales by the column's Decimal128 */
			return t->id == ARROW_TYPE_DECIMAL && !v->is_float &&
				t->dec_scale >= 0 && t->dec_scale <= NUMERIC_MAX_DISPLAY_SCALE;
		case DOM_INT:
			return t->id == ARROW_TYPE_INT && !v->is_float;
		case DOM_FLOAT:
			if (t->id == ARROW_TYPE_FLOAT)
			{
				if (!v->is_float)
				{
					v->d = (double) v->i;
					v->is_float = true;
				}
				return true;
			}
			return false;
		case DOM_DATE:
			if (t->id != ARROW_TYPE_DATE || v->is_float)
				return false;
			if (t->unit == ARROW_DATE_MILLISECOND)
				v->i = floor_div(v->i, 86400000);
			v->i -= POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE;
			return true;
		case DOM_TIMESTAMP:
			if (t->id != ARROW_TYPE_TIMESTAMP || v->is_float)
				return false;
			switch (t->unit)
			{
				case ARROW_TIME_SECOND:
					v->i *= 1000000;
					break;
				case ARROW_TIME_MILLISECOND:
					v->i *= 1000;
					break;
				case ARROW_TIME_MICROSECOND:
					break;
				default:
					/* the reader rounds half away from zero; monotonic */
					v->i = v->i >= 0 ? (v->i + 500) / 1000 : -((-v->i + 500) / 1000);
					break;
			}
			v->i -= (__int128) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY;
			return true;
	}
	return false;
}

/*
 * Whether "column = value" can ask field f's Bloom filters (Parquet files):
 * the value must have one storage form, the bytes the file hashed.
 */
static bool
bloom_usable(const ArrowFile *file, const SkipQual *q, int f)
{
	const ArrowType *t;

	if (f < 0 || file->parquet == NULL || q->strategy != BTEqualStrategyNumber ||
		file->schema.fields[f].has_dict)
		return false;
	t = &file->schema.fields[f].type;
	switch (q->domain)
	{
		case DOM_INT:
			return t->id == ARROW_TYPE_INT;
		case DOM_DATE:
			return t->id == ARROW_TYPE_DATE && t->unit == ARROW_DATE_DAY;
		case DOM_TIMESTAMP:
			return t->id == ARROW_TYPE_TIMESTAMP &&
				(t->unit == ARROW_TIME_MICROSECOND || t->unit == ARROW_TIME_MILLISECOND);
		case DOM_TEXT:
			return t->id == ARROW_TYPE_UTF8;
		default:
			return false;
	}
}

/*
 * False when field f's Bloom filter for the batch rules out q's value;
 * a malformed filter is an ERROR.
 */
static bool
bloom_may_contain(ArrowSkipStats *st, const SkipQual *q, int f, int batch)
{
	const ArrowType *t = &st->file->schema.fields[f].type;
	__int128	v = q->ivalue;
	ArrowError	err;
	int			r;

	memset(&err, 0, sizeof(err));
	if (q->domain == DOM_TEXT)
		r = arrow_batch_may_contain_bytes(st->file, batch, f, q->tvalue, (size_t) q->tlen, &err);
	else
	{
		if (q->domain == DOM_DATE)
			v += POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE;
		else if (q->domain == DOM_TIMESTAMP)
		{
			v += (__int128) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY;
			if (t->unit == ARROW_TIME_MILLISECOND)
			{
				if (v % 1000 != 0)
					return true;	/* read as whole ms: equal to no value,
									 * left to the executor */
				v /= 1000;
			}
		}
		r = arrow_batch_may_contain_int(st->file, batch, f, v, &err);
	}
	if (r < 0)
		pgwarp_report_arrow_error(ERROR, &err);
	return r != 0;
}

ArrowSkipStats *
arrow_skip_stats_load(ArrowFile *file, ArrowSkipQuals *sq, const int *field_of_attr)
{
	ArrowSkipStats *st;
	int			i;
	bool		any = false;

	if (sq == NULL || file->n_batches == 0)
		return NULL;
	st = palloc0(sizeof(ArrowSkipStats));
	st->nbatches = file->n_batches;
	st->col = palloc0(sizeof(SkipColStats) * sq->n);
	st->file = file;
	st->bloom_field = palloc(sizeof(int) * sq->n);
	for (i = 0; i < sq->n; i++)
	{
		SkipQual   *q = &sq->q[i];
		int			f = field_of_attr[q->attno];
		SkipColStats *c = &st->col[i];
		int			b;

		st->bloom_field[i] = bloom_usable(file, q, f) ? f : -1;
		any |= st->bloom_field[i] >= 0;
		if (f < 0 || file->schema.fields[f].has_dict || q->domain == DOM_TEXT ||
			q->domain == DOM_TEXT_ORDER)
			continue;
		if (!arrow_field_stats(file, f, &file->arena, &c->mins, &c->maxs))
			continue;
		c->usable = true;
		c->scale = file->schema.fields[f].type.dec_scale;
		for (b = 0; b < file->n_batches && c->usable; b++)
			if (!convert_stat(&file->schema.fields[f].type, q->domain, &c->mins[b]) ||
				!convert_stat(&file->schema.fields[f].type, q->domain, &c->maxs[b]))
				c->usable = false;
		any |= c->usable;
	}
	return any ? st : NULL;
}

/*
 * Field f's statistics for a column of type typid as doubles in
 * PostgreSQL's value domain (integers, floats, DateADT days, timestamp
 * microseconds since 2000, numeric values): lo[b] and hi[b] for each batch,
 * present[b] false where the entry is empty.  false when the field has no
 * usable statistics for that type (text, dictionaries, other types).
 */
bool
arrow_skip_stats_as_double(ArrowFile *file, int f, Oid typid, ArrowArena *arena,
						   double *lo, double *hi, bool *present)
{
	const ArrowType *t = &file->schema.fields[f].type;
	ArrowStatValue *mins,
			   *maxs;
	SkipDomain	dom;
	int			b;

	if (!domain_of(typid, &dom) || file->schema.fields[f].has_dict ||
		!arrow_field_stats(file, f, arena, &mins, &maxs))
		return false;
	if (dom == DOM_NUMERIC && (t->id != ARROW_TYPE_DECIMAL || t->dec_scale < 0))
		return false;
	for (b = 0; b < file->n_batches; b++)
	{
		ArrowStatValue *v[2] = {&mins[b], &maxs[b]};
		double		d[2];
		int			k;

		present[b] = v[0]->present && v[1]->present;
		if (!present[b])
			continue;
		for (k = 0; k < 2; k++)
		{
			if (!convert_stat(t, dom, v[k]))
				return false;
			d[k] = v[k]->is_float ? v[k]->d : (double) v[k]->i;
			if (dom == DOM_NUMERIC)
				d[k] /= pow(10.0, t->dec_scale);
		}
		lo[b] = d[0];
		hi[b] = d[1];
	}
	return true;
}

/* PostgreSQL's float order: NaN = NaN, NaN above everything else. */
static int
cmp_float(double a, double b)
{
	if (isnan(a))
		return isnan(b) ? 0 : 1;
	if (isnan(b))
		return -1;
	return a < b ? -1 : (a > b ? 1 : 0);
}

static int
cmp_stat(const SkipQual *q, const SkipColStats *c, const ArrowStatValue *v)
{
	if (q->domain == DOM_FLOAT)
		return cmp_float(v->d, q->dvalue);
	if (q->domain == DOM_NUMERIC)
	{
		/* the statistic as a numeric, against the value: numeric_cmp's
		 * order (NaN above +Infinity above every number) */
		Datum		n = pgwarp_int128_to_numeric(v->i, c->scale);
		int			r = DatumGetInt32(DirectFunctionCall2(numeric_cmp, n, q->nvalue));

		pfree(DatumGetPointer(n));
		return r;
	}
	return v->i < q->ivalue ? -1 : (v->i > q->ivalue ? 1 : 0);
}

bool
arrow_skip_batch(ArrowSkipQuals *sq, ArrowSkipStats *st, int batch, ExprContext *econtext)
{
	int			i;

	if (sq == NULL)
		return false;
	for (i = 0; i < sq->n; i++)
	{
		SkipQual   *q = &sq->q[i];
		const ArrowStatValue *mn;
		const ArrowStatValue *mx;

		eval_value(q, econtext);
		if (q->value_null)
			return true;		/* strict comparison with NULL: no row passes */
		if (st == NULL || batch >= st->nbatches)
			continue;
		if (st->bloom_field[i] >= 0 &&
			!bloom_may_contain(st, q, st->bloom_field[i], batch))
			return true;
		if (!st->col[i].usable)
			continue;
		mn = &st->col[i].mins[batch];
		mx = &st->col[i].maxs[batch];
		if (!mn->present || !mx->present)
			continue;
		switch (q->strategy)
		{
			case BTLessStrategyNumber:
				if (cmp_stat(q, &st->col[i], mn) >= 0)
					return true;
				break;
			case BTLessEqualStrategyNumber:
				if (cmp_stat(q, &st->col[i], mn) > 0)
					return true;
				break;
			case BTEqualStrategyNumber:
				if (cmp_stat(q, &st->col[i], mn) > 0 || cmp_stat(q, &st->col[i], mx) < 0)
					return true;
				break;
			case BTGreaterEqualStrategyNumber:
				if (cmp_stat(q, &st->col[i], mx) < 0)
					return true;
				break;
			case BTGreaterStrategyNumber:
				if (cmp_stat(q, &st->col[i], mx) <= 0)
					return true;
				break;
		}
	}
	return false;
}

/*
 * True if the null counts of the batch (its header, already read) show that
 * no row can satisfy an IS [NOT] NULL clause.  The reader treats a column
 * whose null count is 0 as having no nulls, so this agrees with the values.
 */
bool
arrow_skip_batch_nulls(ArrowSkipQuals *sq, const ArrowFile *file,
					   const ArrowBatchMeta *meta, const int *field_of_attr)
{
	int			i;

	if (sq == NULL)
		return false;
	for (i = 0; i < sq->nnull; i++)
		if (arrow_batch_excludes_nulltest(file, meta, field_of_attr[sq->nq[i].attno],
										  sq->nq[i].is_null))
			return true;
	return false;
}

/* The IS [NOT] NULL clauses: their attribute numbers - 1 and kinds. */
int
arrow_skip_null_quals(const ArrowSkipQuals *sq, int **attnos, bool **is_null)
{
	int			i;

	*attnos = NULL;
	*is_null = NULL;
	if (sq == NULL || sq->nnull == 0)
		return 0;
	*attnos = palloc(sizeof(int) * sq->nnull);
	*is_null = palloc(sizeof(bool) * sq->nnull);
	for (i = 0; i < sq->nnull; i++)
	{
		(*attnos)[i] = sq->nq[i].attno;
		(*is_null)[i] = sq->nq[i].is_null;
	}
	return sq->nnull;
}

/* ------------------------------------------------------- row filtering */

/*
 * Value of row i of a loaded column in the clause's domain.  Returns false
 * when the column cannot be read this way here (a dictionary, another type),
 * or the value lies outside PostgreSQL's range (its conversion will raise
 * the error, so such rows are never filtered out here).
 */
static inline bool
row_value(const SkipQual *q, const ArrowArray *a, int64 i, __int128 *iv, double *dv)
{
	const ArrowType *t = &a->field->type;
	int64		v;

	switch (q->domain)
	{
		case DOM_TEXT:
		case DOM_TEXT_ORDER:
			return false;		/* decided by row_text_rejected, the memo */
		case DOM_NUMERIC:
			return false;		/* not filterable (column_filterable) */
		case DOM_INT:
			*iv = arrow_get_int(a, i);
			return true;
		case DOM_FLOAT:
			*dv = arrow_get_double(a, i);
			return true;
		case DOM_DATE:
			v = arrow_get_int(a, i);
			if (t->unit == ARROW_DATE_MILLISECOND)
				v = (int64) floor_div(v, 86400000);
			*iv = (__int128) v - (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE);
			return *iv >= (__int128) (DATETIME_MIN_JULIAN - POSTGRES_EPOCH_JDATE) &&
				*iv < (__int128) (DATE_END_JULIAN - POSTGRES_EPOCH_JDATE);
		case DOM_TIMESTAMP:
			{
				ArrowStatValue sv = {0};

				sv.present = true;
				sv.i = arrow_get_int(a, i);
				convert_stat(t, DOM_TIMESTAMP, &sv);
				*iv = sv.i;
				return sv.i >= (__int128) MIN_TIMESTAMP && sv.i < (__int128) END_TIMESTAMP;
			}
	}
	return false;
}

/* Can the clause be decided from this column's raw values? */
static bool
column_filterable(const SkipQual *q, const ArrowArray *a)
{
	const ArrowType *t = &a->field->type;

	/* text orderings read a dictionary's entries (the memo keys bytes) */
	if (q->domain == DOM_TEXT_ORDER && a->field->has_dict)
		return a->dictionary != NULL && a->dictionary->field != NULL &&
			!a->dictionary->field->has_dict &&
			(a->dictionary->field->type.id == ARROW_TYPE_UTF8 ||
			 a->dictionary->field->type.id == ARROW_TYPE_LARGE_UTF8);
	if (a->dictionary || a->field->has_dict)
		return false;
	switch (q->domain)
	{
		case DOM_INT:
			return t->id == ARROW_TYPE_INT && !(t->bit_width == 64 && !t->is_signed);
		case DOM_FLOAT:
			return t->id == ARROW_TYPE_FLOAT;
		case DOM_DATE:
			return t->id == ARROW_TYPE_DATE;
		case DOM_TIMESTAMP:
			return t->id == ARROW_TYPE_TIMESTAMP;
		case DOM_TEXT:
		case DOM_TEXT_ORDER:
			return t->id == ARROW_TYPE_UTF8 || t->id == ARROW_TYPE_LARGE_UTF8;
		case DOM_NUMERIC:
			return false;
	}
	return false;
}

/*
 * Can row i (not NULL) be rejected by "= q->tvalue"?  Equal bytes pass; a
 * value that differs is rejected only if it is valid UTF-8, so that an
 * invalid value still reaches the conversion that reports it.
 */
static bool
row_text_rejected(const SkipQual *q, const ArrowArray *a, int64 i)
{
	int64		len;
	const uint8 *p = arrow_get_bytes(a, i, &len);

	if (len == q->tlen && memcmp(p, q->tvalue, len) == 0)
		return false;
	return pg_verify_mbstr(PG_UTF8, (const char *) p, (int) len, true);
}

static bool
passes(const SkipQual *q, int cmp)
{
	switch (q->strategy)
	{
		case BTLessStrategyNumber:
			return cmp < 0;
		case BTLessEqualStrategyNumber:
			return cmp <= 0;
		case BTEqualStrategyNumber:
			return cmp == 0;
		case BTGreaterEqualStrategyNumber:
			return cmp >= 0;
		case BTGreaterStrategyNumber:
			return cmp > 0;
	}
	return true;
}

/*
 * Mark in keep[] the rows of a loaded batch that can pass the clauses, from
 * the raw column values (cols[attno] as loaded; unreferenced columns are
 * ignored).  Rows marked false fail at least one clause; rows marked true are
 * still checked by the executor, which evaluates every clause as usual.
 * Returns the number of rows kept.
 */
int64
arrow_skip_filter_rows(ArrowSkipQuals *sq, const int *field_of_attr, const ArrowArray *cols,
					   int64 nrows, bool *keep, ExprContext *econtext)
{
	int64		i;
	int64		kept = nrows;
	int			k;

	memset(keep, true, sizeof(bool) * nrows);
	if (sq == NULL)
		return nrows;
	for (k = 0; k < sq->nnull; k++)
	{
		const ArrowArray *a = &cols[sq->nq[k].attno];

		if (field_of_attr[sq->nq[k].attno] < 0 || a->field == NULL ||
			a->field->type.id == ARROW_TYPE_NULL)
			continue;
		for (i = 0; i < nrows; i++)
			if (keep[i] && arrow_is_null(a, i) != sq->nq[k].is_null)
			{
				keep[i] = false;
				kept--;
			}
	}
	for (k = 0; k < sq->n; k++)
	{
		SkipQual   *q = &sq->q[k];
		const ArrowArray *a = &cols[q->attno];

		if (field_of_attr[q->attno] < 0 || a->field == NULL || !column_filterable(q, a))
			continue;
		eval_value(q, econtext);
		for (i = 0; i < nrows; i++)
		{
			__int128	iv = 0;
			double		dv = 0;
			int			cmp;

			if (!keep[i])
				continue;
			if (q->value_null || arrow_is_null(a, i))
			{
				keep[i] = false;	/* a strict comparison with NULL */
				kept--;
				continue;
			}
			if (q->domain == DOM_TEXT)
			{
				if (row_text_rejected(q, a, i))
				{
					keep[i] = false;
					kept--;
				}
				continue;
			}
			if (q->domain == DOM_TEXT_ORDER)
			{
				const ArrowArray *v = a;
				int64		k = i;
				int64		len;
				const uint8 *p;

				if (a->dictionary)
				{
					/* the index was checked at load; a null entry is NULL */
					k = arrow_get_dict_index(a, i);
					v = a->dictionary;
					if (arrow_is_null(v, k))
					{
						keep[i] = false;
						kept--;
						continue;
					}
				}
				p = arrow_get_bytes(v, k, &len);
				if (!text_memo_passes(q->memo, p, len))
				{
					keep[i] = false;
					kept--;
				}
				continue;
			}
			if (!row_value(q, a, i, &iv, &dv))
				continue;
			if (q->domain == DOM_FLOAT)
				cmp = cmp_float(dv, q->dvalue);
			else
				cmp = iv < q->ivalue ? -1 : (iv > q->ivalue ? 1 : 0);
			if (!passes(q, cmp))
			{
				keep[i] = false;
				kept--;
			}
		}
	}
	return kept;
}
