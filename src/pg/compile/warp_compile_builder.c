/*
 * warp_compile_builder.c — the program builder's primitives, which every
 * compiler in src/pg/compile uses (warp_compile_internal.h): the engine
 * type of a PostgreSQL type and a Datum's value as the engine holds it,
 * adding nodes, arguments and columns, refusing with a reason, constant
 * nodes, the text columns' string constants, and finishing the program
 * (its string table and the session's time zone, warp_tz.c).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/date.h"

#include "compile/warp_compile_internal.h"

bool
warp_type_of(Oid typid, WarpType *t)
{
	switch (typid)
	{
		case BOOLOID:
			*t = WT_BOOL;
			return true;
		case INT2OID:
			*t = WT_INT2;
			return true;
		case INT4OID:
			*t = WT_INT4;
			return true;
		case INT8OID:
			*t = WT_INT8;
			return true;
		case DATEOID:
			*t = WT_DATE;
			return true;
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			*t = WT_TIMESTAMP;
			return true;
		case FLOAT4OID:
			*t = WT_FLOAT4;
			return true;
		case FLOAT8OID:
			*t = WT_FLOAT8;
			return true;
	}
	return false;
}

/*
 * A Datum of an engine type as the engine holds it: integer-like types as
 * int64 in PostgreSQL's own domain (DateADT days, Timestamp microseconds),
 * floats as double.  Sets the one that applies.
 */
void
warp_datum_value(Datum d, Oid typid, int64 *ival, double *fval)
{
	switch (typid)
	{
		case BOOLOID:
			*ival = DatumGetBool(d);
			break;
		case INT2OID:
			*ival = DatumGetInt16(d);
			break;
		case INT4OID:
			*ival = DatumGetInt32(d);
			break;
		case DATEOID:
			*ival = DatumGetDateADT(d);
			break;
		case FLOAT4OID:
			*fval = DatumGetFloat4(d);
			break;
		case FLOAT8OID:
			*fval = DatumGetFloat8(d);
			break;
		default:				/* int8, timestamp, timestamptz */
			*ival = DatumGetInt64(d);
			break;
	}
}

void
warp_builder_init(WarpBuilder *b, Index relid, ExprContext *econtext)
{
	memset(b, 0, sizeof(*b));
	b->relid = relid;
	b->econtext = econtext;
	b->nodes_cap = 32;
	b->nodes = palloc0(sizeof(WarpNode) * b->nodes_cap);
	b->args_cap = 32;
	b->args = palloc0(sizeof(int32) * b->args_cap);
	b->cols_cap = 16;
	b->col_attno = palloc0(sizeof(AttrNumber) * b->cols_cap);
	b->cols = palloc0(sizeof(WarpColumnSpec) * b->cols_cap);
}

int
warp_refuse(WarpBuilder *b, const char *why)
{
	if (b->why_not == NULL)
		b->why_not = why;
	return -1;
}

int
warp_add_node(WarpBuilder *b, WarpOp op, WarpType type)
{
	WarpNode   *n;

	if (b->nnodes == b->nodes_cap)
	{
		b->nodes_cap *= 2;
		b->nodes = repalloc(b->nodes, sizeof(WarpNode) * b->nodes_cap);
	}
	n = &b->nodes[b->nnodes];
	memset(n, 0, sizeof(*n));
	n->op = op;
	n->type = type;
	n->a = n->b = -1;
	return b->nnodes++;
}

void
warp_add_arg(WarpBuilder *b, int node)
{
	if (b->nargs == b->args_cap)
	{
		b->args_cap *= 2;
		b->args = repalloc(b->args, sizeof(int32) * b->args_cap);
	}
	b->args[b->nargs++] = node;
}

int
warp_new_column(WarpBuilder *b, AttrNumber attno, WarpType t)
{
	if (b->ncols == b->cols_cap)
	{
		b->cols_cap *= 2;
		b->col_attno = repalloc(b->col_attno, sizeof(AttrNumber) * b->cols_cap);
		b->cols = repalloc(b->cols, sizeof(WarpColumnSpec) * b->cols_cap);
	}
	b->col_attno[b->ncols] = attno;
	memset(&b->cols[b->ncols], 0, sizeof(WarpColumnSpec));
	b->cols[b->ncols].native = b->native_columns ? 1 : 0;
	b->cols[b->ncols].type = t;
	b->cols[b->ncols].field = -1;
	return b->ncols++;
}

/*
 * The program's column for attribute attno (one per attribute, whatever
 * reads it), created on first use.  LIKE columns (one per attribute and
 * pattern, warp_compile_text_like) and text group-key columns (warp_compile_text_key)
 * are not found here.
 */
int
warp_column_index(WarpBuilder *b, AttrNumber attno, WarpType t)
{
	int			c;

	for (c = 0; c < b->ncols; c++)
		if (b->col_attno[c] == attno && b->cols[c].text != WARP_TEXT_LIKE &&
			b->cols[c].text != WARP_TEXT_KEY && b->cols[c].text != WARP_TEXT_CMP &&
			!bms_is_member(c, b->join_key_cols))
			return c;
	return warp_new_column(b, attno, t);
}

/* a constant node holding a Datum of type typid */
int
warp_const_node(WarpBuilder *b, Oid typid, Datum value, bool isnull)
{
	WarpType	t;
	int			n;
	WarpNode   *nd;

	if (!warp_type_of(typid, &t))
		return warp_refuse(b, "constant of a type the engine does not compute");
	n = warp_add_node(b, WN_CONST, t);
	nd = &b->nodes[n];
	if (isnull)
	{
		nd->flags |= WARP_NODE_NULL;
		return n;
	}
	warp_datum_value(value, typid, &nd->ival, &nd->fval);
	return n;
}

int
warp_text_const_index(WarpBuilder *b, int col, const char *bytes, int len)
{
	ListCell   *lc;
	int			k = 0;
	WarpTextConst *tc;

	foreach(lc, b->text_consts)
	{
		tc = lfirst(lc);
		if (tc->col != col)
			continue;
		if (tc->len == len && memcmp(tc->bytes, bytes, len) == 0)
			return tc->k;
		k++;
	}
	tc = palloc(sizeof(WarpTextConst));
	tc->col = col;
	tc->k = k;
	tc->len = len;
	tc->bytes = palloc(Max(len, 1));
	memcpy(tc->bytes, bytes, len);
	b->text_consts = lappend(b->text_consts, tc);
	return k;
}

static void
builder_strings(WarpBuilder *b, WarpProgram *p)
{
	ListCell   *lc;
	int			n = list_length(b->text_consts),
				c,
				i;
	int		   *first = palloc0(sizeof(int) * (b->ncols + 1));
	int		   *len;
	int64		bytes = 0;

	/* each column's strings together, in the order of their indexes k */
	foreach(lc, b->text_consts)
		first[((WarpTextConst *) lfirst(lc))->col + 1]++;
	for (c = 0; c < b->ncols; c++)
	{
		b->cols[c].str_count = first[c + 1];
		first[c + 1] += first[c];
		b->cols[c].str_first = first[c];
	}
	p->nstrings = n;
	p->strings = palloc0(sizeof(WarpString) * Max(n, 1));
	len = palloc0(sizeof(int) * Max(n, 1));
	foreach(lc, b->text_consts)
	{
		WarpTextConst *tc = lfirst(lc);

		Assert(tc->k < b->cols[tc->col].str_count);
		len[first[tc->col] + tc->k] = tc->len;
	}
	for (i = 0; i < n; i++)
	{
		p->strings[i].off = (int32) bytes;
		p->strings[i].len = len[i];
		bytes += len[i];
		if (bytes > PG_INT32_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("pg_warp: the query's strings exceed 2 GB")));
	}
	p->nstrbytes = (int32) bytes;
	p->strbytes = palloc(Max(bytes, 1));
	foreach(lc, b->text_consts)
	{
		WarpTextConst *tc = lfirst(lc);

		memcpy(p->strbytes + p->strings[first[tc->col] + tc->k].off, tc->bytes, tc->len);
	}
}

void
warp_builder_finish(WarpBuilder *b, WarpProgram *p)
{
	builder_strings(b, p);
	p->nsetvals = b->nsetvals;
	p->setvals = b->setvals;
	memset(&p->tz, 0, sizeof(p->tz));
	if (b->uses_tz)
		warp_program_set_tz(p);
}
