/*
 * warp_compile_text.c — text, varchar and character(n) expressions compiled
 * into program columns: equality and ordering with a constant, LIKE, IS
 * NULL, group keys and the fact side of text join keys, and the collation
 * and encoding checks that decide where the engine's byte comparisons are
 * PostgreSQL's.  character(n) (bpchar) columns are marked so (.bpchar):
 * the engine ignores their trailing blanks where bpchar's operators do
 * (equality, ordering, grouping) and the constants compared with them are
 * stored without theirs; its LIKE sees the padded value, as bpcharlike
 * (textlike) does.
 * The strings themselves go into the program's string table
 * (warp_compile_builder.c); text IN lists are warp_compile.c's
 * (compile_in_set).
 */
#include "postgres.h"

#include <locale.h>
#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/pg_locale.h"
#include "utils/syscache.h"

#include "compile/warp_compile_internal.h"

/*
 * Whether a collation orders text as its bytes compare (memcmp, the
 * shorter string first on a tie), so the engine's C comparison is
 * PostgreSQL's: C and POSIX, and libc's C.UTF-8 in a UTF-8 database when
 * glibc is 2.35 or later, whose C.UTF-8 collates by code point with
 * strcmp (the code point order of UTF-8 is its byte order; older
 * distributions' C.UTF-8 put unassigned code points last).  ICU
 * collations never.
 */
static bool
collation_orders_bytes(Oid collation)
{
	bool		bytes = false;
#ifdef __GLIBC__
	const char *v = gnu_get_libc_version();
	int			major = 0,
				minor = 0;
#endif

	if (!OidIsValid(collation))
		return false;
	if (lc_collate_is_c(collation))
		return true;
#ifdef __GLIBC__
	if (GetDatabaseEncoding() != PG_UTF8 || sscanf(v, "%d.%d", &major, &minor) != 2 ||
		major < 2 || (major == 2 && minor < 35))
		return false;
	if (collation == DEFAULT_COLLATION_OID)
	{
		const char *name;

		if (pg_newlocale_from_collation(collation) != 0)
			return false;		/* the database's ICU locale */
		name = setlocale(LC_COLLATE, NULL);
		bytes = name && (strcmp(name, "C.UTF-8") == 0 || strcmp(name, "C.utf8") == 0);
	}
	else
	{
		HeapTuple	tp = SearchSysCache1(COLLOID, ObjectIdGetDatum(collation));

		if (HeapTupleIsValid(tp))
		{
			Form_pg_collation form = (Form_pg_collation) GETSTRUCT(tp);
			bool		isnull;
			Datum		d = SysCacheGetAttr(COLLOID, tp, Anum_pg_collation_collcollate, &isnull);

			if (form->collprovider == COLLPROVIDER_LIBC && form->collisdeterministic && !isnull)
			{
				char	   *name = TextDatumGetCString(d);

				bytes = strcmp(name, "C.UTF-8") == 0 || strcmp(name, "C.utf8") == 0;
			}
			ReleaseSysCache(tp);
		}
	}
#endif
	return bytes;
}

/*
 * Why a text ordering under collation stays PostgreSQL's, naming the
 * collation (for the database default, its locale) and what would offload
 * it: a Debian cluster takes the system's locale (often en_US.UTF-8), so
 * this is the reason a new user meets first.
 */
static const char *
text_order_refusal(Oid collation)
{
	const char *name;

	if (!OidIsValid(collation))
		name = "none";
	else if (collation == DEFAULT_COLLATION_OID)
	{
		pg_locale_t loc = pg_newlocale_from_collation(collation);
		const char *locale = NULL;

#ifdef USE_ICU
		if (loc && loc->provider == COLLPROVIDER_ICU)
			locale = loc->info.icu.locale;
#endif
		if (locale == NULL && !loc)
			locale = setlocale(LC_COLLATE, NULL);
		name = psprintf("default, %s", locale ? locale : "?");
	}
	else
		name = get_collation_name(collation);
	return psprintf("text ordering under collation \"%s\": offloaded only under C, POSIX "
					"or C.UTF-8 (COLLATE \"C\", or a database created with LOCALE 'C.UTF-8')",
					name ? name : "?");
}

/*
 * Whether the engine can take text column v of the fact table under
 * collation: byte equality (a deterministic collation) or, with order, byte
 * order (the C collation), over the files' UTF-8 bytes (a UTF8 database:
 * the constants are in its encoding).  false with why_not otherwise.
 */
bool
warp_fact_text_column(WarpBuilder *b, Var *v, Oid collation, bool order)
{
	const char *why = NULL;

	if (v->varno != b->relid || v->varlevelsup != 0 || v->varattno <= 0)
		why = "column of another relation or a system column";
	else if (!OidIsValid(collation) ||
			 !(order ? collation_orders_bytes(collation) : get_collation_isdeterministic(collation)))
		why = order ? text_order_refusal(collation) :
			"text under a nondeterministic collation";
	else if (GetDatabaseEncoding() != PG_UTF8)
		why = "text in a database whose encoding is not UTF8";
	if (why)
		warp_refuse(b, why);
	return why == NULL;
}

/* whether type is one of the string types the engine reads as text */
bool
warp_is_text_type(Oid type)
{
	return type == TEXTOID || type == VARCHAROID || type == BPCHAROID;
}

/*
 * A constant's bytes as the engine compares them with column v: without
 * trailing blanks for a character(n) column (bcTruelen), as they are for
 * text and varchar.
 */
static void
text_const_bytes(Var *v, Datum d, const char **bytes, int *len)
{
	text	   *t = DatumGetTextPP(d);

	*bytes = VARDATA_ANY(t);
	*len = VARSIZE_ANY_EXHDR(t);
	if (v->vartype == BPCHAROID)
		while (*len > 0 && (*bytes)[*len - 1] == ' ')
			(*len)--;
}

/* text_const_bytes, into column ci's constants: its index there */
int
warp_text_const_for(WarpBuilder *b, int ci, Var *v, Datum d)
{
	const char *bytes;
	int			len;

	text_const_bytes(v, d, &bytes, &len);
	return warp_text_const_index(b, ci, bytes, len);
}

/*
 * Text column v of the fact table under collation (warp_fact_text_column),
 * read as which of its constants the row equals (WARP_TEXT_EQ): a WN_COL
 * node over it, or -1 with why_not.  *ci: its program column, where the
 * constants go (warp_text_const_index).
 */
int
warp_text_eq_column(WarpBuilder *b, Var *v, Oid collation, int *ci)
{
	int			x;

	if (!warp_fact_text_column(b, v, collation, false))
		return -1;
	*ci = warp_column_index(b, v->varattno, WT_INT8);
	b->cols[*ci].text = WARP_TEXT_EQ;
	b->cols[*ci].bpchar = v->vartype == BPCHAROID;
	x = warp_add_node(b, WN_COL, WT_INT8);
	b->nodes[x].a = *ci;
	return x;
}

/*
 * The argument of `text_column IS [NOT] NULL`: the column read as a text
 * column matched against none of its strings (WARP_TEXT_EQ), whose NULLs
 * are the column's; no collation or encoding matters to a null test.
 * -2 when the argument is not a text column of the fact table.
 */
int
warp_compile_text_null_arg(WarpBuilder *b, Expr *arg)
{
	Var		   *v;
	int			ci;
	int			x;

	while (IsA(arg, RelabelType))
		arg = ((RelabelType *) arg)->arg;
	if (!IsA(arg, Var))
		return -2;
	v = (Var *) arg;
	if ((v->vartype != TEXTOID && v->vartype != VARCHAROID && v->vartype != BPCHAROID) ||
		v->varno != b->relid || v->varlevelsup != 0 || v->varattno <= 0)
		return -2;
	ci = warp_column_index(b, v->varattno, WT_INT8);
	/* (a heap table's text column is marked native until the executor
	 * reads it as a Utf8 array: warp_exec_build_program) */
	if (b->cols[ci].type != WT_INT8 ||
		(b->cols[ci].text != WARP_TEXT_EQ && b->cols[ci].text != 0))
		return -2;
	b->cols[ci].text = WARP_TEXT_EQ;
	x = warp_add_node(b, WN_COL, WT_INT8);
	b->nodes[x].a = ci;
	return x;
}

/*
 * A two-argument operator of a column and a value of the whole scan
 * (warp_scan_value), either way round (relabelings stripped): the column, the
 * value and whether the value came first.  False for any other shape.
 */
static bool
column_and_value(WarpBuilder *b, OpExpr *op, Var **v, Const **c, bool *swapped)
{
	Expr	   *l = linitial(op->args);
	Expr	   *r = lsecond(op->args);

	while (IsA(l, RelabelType))
		l = ((RelabelType *) l)->arg;
	while (IsA(r, RelabelType))
		r = ((RelabelType *) r)->arg;
	*swapped = !IsA(l, Var);
	*v = (Var *) (*swapped ? r : l);
	if (!IsA(*v, Var))
		return false;
	*c = warp_scan_value(b, *swapped ? l : r);
	return *c != NULL;
}

/*
 * The boolean program column of a text predicate with one constant string
 * (WARP_TEXT_LIKE: the pattern; WARP_TEXT_CMP: comparison cmp with the
 * string), one per attribute, predicate and string: a WN_COL node over it.
 */
static int
text_predicate_column(WarpBuilder *b, AttrNumber attno, int mode, int cmp, bool bpchar,
					  const char *bytes, int len)
{
	int			ci,
				n;

	for (ci = 0; ci < b->ncols; ci++)
	{
		ListCell   *lc;

		if (b->col_attno[ci] != attno || b->cols[ci].text != mode || b->cols[ci].cmp != cmp ||
			b->cols[ci].bpchar != bpchar)
			continue;
		foreach(lc, b->text_consts)
		{
			WarpTextConst *tc = lfirst(lc);

			if (tc->col == ci && tc->len == len && memcmp(tc->bytes, bytes, len) == 0)
				break;
		}
		if (lc != NULL)
			break;
	}
	if (ci == b->ncols)
	{
		ci = warp_new_column(b, attno, WT_BOOL);
		b->cols[ci].text = (uint8) mode;
		b->cols[ci].cmp = (uint8) cmp;
		b->cols[ci].bpchar = bpchar;
		(void) warp_text_const_index(b, ci, bytes, len);
	}
	n = warp_add_node(b, WN_COL, WT_BOOL);
	b->nodes[n].a = ci;
	return n;
}

/*
 * text < <= > >= constant on a text or varchar column of the fact table
 * under the C collation, where PostgreSQL compares bytes (varstr_cmp:
 * memcmp, the shorter string first on a tie): a boolean column of its own
 * (WARP_TEXT_CMP, one per attribute, comparison and constant).  Other
 * collations order by the locale and stay PostgreSQL's.  The same for
 * character(n) (bpcharlt ...: bpcharcmp, varstr_cmp of both values
 * without trailing blanks).
 */
static int
compile_text_order(WarpBuilder *b, OpExpr *op, Oid fn)
{
	Const	   *c;
	Var		   *v;
	const char *bytes;
	int			len;
	int			sub,
				n;
	bool		swapped;
	bool		bpchar = fn == F_BPCHARLT || fn == F_BPCHARLE || fn == F_BPCHARGT ||
		fn == F_BPCHARGE;

	if (list_length(op->args) != 2)
		return -2;
	if (!column_and_value(b, op, &v, &c, &swapped))
		return warp_refuse(b, "text ordering other than a column with a constant or parameter");
	if (bpchar ? v->vartype != BPCHAROID : (v->vartype != TEXTOID && v->vartype != VARCHAROID))
		return warp_refuse(b, "text ordering on another type");
	if (!warp_fact_text_column(b, v, op->inputcollid, true))
		return -1;
	sub = (fn == F_TEXT_LT || fn == F_BPCHARLT) ? WARP_CMP_LT :
		(fn == F_TEXT_LE || fn == F_BPCHARLE) ? WARP_CMP_LE :
		(fn == F_TEXT_GT || fn == F_BPCHARGT) ? WARP_CMP_GT : WARP_CMP_GE;
	if (swapped)				/* c op X == X op' c */
		sub = sub == WARP_CMP_LT ? WARP_CMP_GT : sub == WARP_CMP_LE ? WARP_CMP_GE :
			sub == WARP_CMP_GT ? WARP_CMP_LT : WARP_CMP_LE;
	if (c->constisnull)
	{
		n = warp_add_node(b, WN_CONST, WT_BOOL);
		b->nodes[n].flags |= WARP_NODE_NULL;
		return n;
	}
	text_const_bytes(v, c->constvalue, &bytes, &len);
	return text_predicate_column(b, v->varattno, WARP_TEXT_CMP, sub, bpchar, bytes, len);
}

/*
 * The fact side of a join on text keys (texteq under a deterministic
 * collation): a text column of its own whose value is which of the
 * dimension's n distinct key strings it equals (their order: map[k] = k),
 * so the join probes with that number.  The strings are the dimension's,
 * known once its plan ran.
 */
int
warp_compile_text_join_key(WarpBuilder *b, Expr *expr, int n, const char *const *strs,
						   const int *lens, int *map)
{
	Var		   *v;
	int			ci,
				k,
				node;

	while (IsA(expr, RelabelType))
		expr = ((RelabelType *) expr)->arg;
	v = (Var *) expr;
	if (!IsA(expr, Var) || (v->vartype != TEXTOID && v->vartype != VARCHAROID))
		return warp_refuse(b, "text join key that is not a text column");
	if (v->varno != b->relid || v->varlevelsup != 0 || v->varattno <= 0)
		return warp_refuse(b, "column of another relation or a system column");
	if (GetDatabaseEncoding() != PG_UTF8)
		return warp_refuse(b, "text in a database whose encoding is not UTF8");
	/* a column of its own: not shared with comparisons with constants */
	ci = warp_new_column(b, v->varattno, WT_INT8);
	b->cols[ci].text = WARP_TEXT_EQ;
	b->join_key_cols = bms_add_member(b->join_key_cols, ci);
	for (k = 0; k < n; k++)
	{
		WarpTextConst *tc = palloc(sizeof(WarpTextConst));

		tc->col = ci;
		tc->k = k;
		tc->len = lens[k];
		tc->bytes = (char *) strs[k];
		b->text_consts = lappend(b->text_consts, tc);
		map[k] = k;
	}
	node = warp_add_node(b, WN_COL, WT_INT8);
	b->nodes[node].a = ci;
	return node;
}

/*
 * text = constant and text <> constant (IN lists arrive here one element
 * at a time, from compile_saop) on a text or varchar column of the fact
 * table, under a deterministic collation, where equality is byte
 * equality: the column's value becomes which of its constants the row
 * equals (warp_cpu.c, load_text_column), compared with the constant's
 * index.  Returns -2 when the expression is not of this shape, -1 when
 * refused.
 */
int
warp_compile_text_cmp(WarpBuilder *b, OpExpr *op)
{
	Oid			fn = OidIsValid(op->opfuncid) ? op->opfuncid : get_opcode(op->opno);
	Const	   *c;
	Var		   *v;
	int			sub,
				ci,
				x,
				k,
				n;
	bool		swapped;

	if (fn == F_TEXTEQ || fn == F_BPCHAREQ)
		sub = WARP_CMP_EQ;
	else if (fn == F_TEXTNE || fn == F_BPCHARNE)
		sub = WARP_CMP_NE;
	else if (fn == F_TEXT_LT || fn == F_TEXT_LE || fn == F_TEXT_GT || fn == F_TEXT_GE ||
			 fn == F_BPCHARLT || fn == F_BPCHARLE || fn == F_BPCHARGT || fn == F_BPCHARGE)
		return compile_text_order(b, op, fn);
	else
		return -2;
	if (list_length(op->args) != 2)
		return -2;
	if (!column_and_value(b, op, &v, &c, &swapped))
		return -2;
	if ((fn == F_BPCHAREQ || fn == F_BPCHARNE) ? v->vartype != BPCHAROID :
		(v->vartype != TEXTOID && v->vartype != VARCHAROID))
		return -2;
	if ((x = warp_text_eq_column(b, v, op->inputcollid, &ci)) < 0)
		return -1;
	k = warp_add_node(b, WN_CONST, WT_INT8);
	if (c->constisnull)
		b->nodes[k].flags |= WARP_NODE_NULL;
	else
		b->nodes[k].ival = warp_text_const_for(b, ci, v, c->constvalue);
	n = warp_add_node(b, WN_CMP, WT_BOOL);
	b->nodes[n].sub = (uint8) sub;
	b->nodes[n].a = x;
	b->nodes[n].b = k;
	return n;
}

/*
 * text LIKE pattern and NOT LIKE on a text or varchar column of the fact
 * table, the pattern a constant or a parameter (warp_scan_value), in a UTF-8
 * database under a deterministic collation (where PostgreSQL's LIKE
 * compares bytes and '_' takes one character): the column is read as a
 * boolean column of its own, whether the row matches the pattern
 * (warp_cpu.c, load_text_column, with warp_text_like).  A pattern that
 * ends in an unpaired escape character fails on the rows whose match gets
 * that far, PostgreSQL's error (22025) for the first of them.  The same
 * for character(n) (bpcharlike is textlike: the padded value matches).
 * Returns -2 when the expression is not of this shape, -1 when refused.
 */
int
warp_compile_text_like(WarpBuilder *b, OpExpr *op)
{
	Oid			fn = OidIsValid(op->opfuncid) ? op->opfuncid : get_opcode(op->opno);
	Expr	   *col,
			   *pat;
	Const	   *c;
	Var		   *v;
	text	   *t;
	const char *pb;
	int			plen,
				n;

	if ((fn != F_TEXTLIKE && fn != F_TEXTNLIKE && fn != F_BPCHARLIKE && fn != F_BPCHARNLIKE) ||
		list_length(op->args) != 2)
		return -2;
	col = linitial(op->args);
	pat = lsecond(op->args);
	while (IsA(col, RelabelType))
		col = ((RelabelType *) col)->arg;
	if (!IsA(col, Var) || (c = warp_scan_value(b, pat)) == NULL)
		return warp_refuse(b, "LIKE other than a column with a constant or parameter pattern");
	v = (Var *) col;
	if ((fn == F_BPCHARLIKE || fn == F_BPCHARNLIKE) ? v->vartype != BPCHAROID :
		(v->vartype != TEXTOID && v->vartype != VARCHAROID))
		return warp_refuse(b, "LIKE on a type other than text, varchar or character(n)");
	/*
	 * a character(n) column of an Arrow file: PostgreSQL's LIKE sees the
	 * value bpcharin padded to n, the engine the file's bytes, which only
	 * writers like pgwarp dump pad; a heap table's values are the padded
	 * ones themselves
	 */
	if (v->vartype == BPCHAROID && !b->native_columns)
		return warp_refuse(b, "LIKE on a character(n) column of an Arrow file");
	if (!warp_fact_text_column(b, v, op->inputcollid, false))
		return -1;
	if (c->constisnull)
	{
		n = warp_add_node(b, WN_CONST, WT_BOOL);
		b->nodes[n].flags |= WARP_NODE_NULL;
		return n;
	}
	t = DatumGetTextPP(c->constvalue);
	pb = VARDATA_ANY(t);
	plen = VARSIZE_ANY_EXHDR(t);
	n = text_predicate_column(b, v->varattno, WARP_TEXT_LIKE, 0, false, pb, plen);
	if (fn == F_TEXTNLIKE || fn == F_BPCHARNLIKE)
	{
		int			x = warp_add_node(b, WN_NOT, WT_BOOL);

		b->nodes[x].a = n;
		n = x;
	}
	return n;
}

/*
 * A text, varchar or character(n) column of the fact table as a group key,
 * grouped under a deterministic collation (byte equality; for character(n)
 * without trailing blanks, as bpchar's equality and hashing): a
 * WARP_TEXT_KEY column, whose value is the string's id in the driver (one
 * column per attribute).  A character(n) key's string comes back without
 * its blanks and is padded to n again (warp_exec_groups.c); a character
 * without a length has no one padding, and is refused.
 */
int
warp_compile_text_key(WarpBuilder *b, Var *v, Oid collation)
{
	int			ci,
				n;

	if (v->vartype == BPCHAROID && v->vartypmod < 0)
		return warp_refuse(b, "a character group key without a length");
	if (!warp_fact_text_column(b, v, collation, false))
		return -1;
	for (ci = 0; ci < b->ncols; ci++)
		if (b->col_attno[ci] == v->varattno && b->cols[ci].text == WARP_TEXT_KEY)
			break;
	if (ci == b->ncols)
	{
		ci = warp_new_column(b, v->varattno, WT_INT8);
		b->cols[ci].text = WARP_TEXT_KEY;
		b->cols[ci].bpchar = v->vartype == BPCHAROID;
	}
	n = warp_add_node(b, WN_COL, WT_INT8);
	b->nodes[n].a = ci;
	return n;
}

/* the column a text group key reads (warp_cpu_key_text), or -1 */
int
warp_group_key_text_column(const WarpProgram *p, int node)
{
	const WarpNode *nd;

	if (node < 0 || node >= p->nnodes)
		return -1;
	nd = &p->nodes[node];
	if (nd->op != WN_COL || p->cols[nd->a].text != WARP_TEXT_KEY)
		return -1;
	return nd->a;
}
