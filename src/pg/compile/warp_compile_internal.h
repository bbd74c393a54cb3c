/*
 * warp_compile_internal.h — declarations shared by the expression
 * compiler's source files (src/pg/compile): the builder primitives
 * (warp_compile_builder.c), and the compilers of each concern that the
 * others call: numeric (warp_compile_numeric.c), date/time
 * (warp_compile_datetime.c), text (warp_compile_text.c) and the
 * expression core (warp_compile.c).  Not part of warp.h's interface.
 *
 * The compilers return a node index, or -1 with b->why_not set
 * (warp_refuse); the ones that say so return -2 when the expression is
 * not of their shape and the caller compiles it the usual way.
 */
#ifndef WARP_COMPILE_INTERNAL_H
#define WARP_COMPILE_INTERNAL_H

#include "postgres.h"

#include "catalog/pg_type.h"
#include "nodes/primnodes.h"

#include "warp.h"

/* shared between this layer's files only: not exported from the module */
#pragma GCC visibility push(hidden)

/* one constant of a text column: its index k among the column's strings */
typedef struct WarpTextConst
{
	int			col;
	int			k;
	int			len;
	char	   *bytes;
} WarpTextConst;

static inline bool
is_int_type(WarpType t)
{
	return t == WT_INT2 || t == WT_INT4 || t == WT_INT8;
}

/* date 0, timestamp 1, timestamptz 2, other types -1 */
static inline int
datetime_rank(Oid t)
{
	return t == DATEOID ? 0 : t == TIMESTAMPOID ? 1 : t == TIMESTAMPTZOID ? 2 : -1;
}

/* warp_compile_builder.c: the program's nodes, arguments, columns, strings */
extern int	warp_refuse(WarpBuilder *b, const char *why);
extern int	warp_add_node(WarpBuilder *b, WarpOp op, WarpType type);
extern void warp_add_arg(WarpBuilder *b, int node);
extern int	warp_new_column(WarpBuilder *b, AttrNumber attno, WarpType t);
extern int	warp_column_index(WarpBuilder *b, AttrNumber attno, WarpType t);
extern int	warp_const_node(WarpBuilder *b, Oid typid, Datum value, bool isnull);
extern int	warp_text_const_index(WarpBuilder *b, int col, const char *bytes, int len);

/* warp_compile.c: the expression core */
extern Const *warp_scan_value(WarpBuilder *b, Expr *e);
extern Expr *warp_case_when_expr(Expr *arg, Expr *when);

/* warp_compile_numeric.c */
extern int	warp_compile_numeric(WarpBuilder *b, Expr *expr, int *intd);
extern int	warp_compile_numeric_cmp(WarpBuilder *b, OpExpr *op);

/* warp_compile_datetime.c */
extern int	warp_datetime_field(Const *c);
extern int	warp_compile_datetime(WarpBuilder *b, FuncExpr *fe);
extern int	warp_compile_datetime_cast(WarpBuilder *b, FuncExpr *fe);
extern int	warp_compile_datetime_cross_cmp(WarpBuilder *b, int k, bool distinct,
											Expr *l, Expr *r);
extern int	warp_compile_interval_arith(WarpBuilder *b, Oid ltype, bool minus,
										Expr *l, Expr *r);

/* warp_compile_text.c */
extern bool warp_fact_text_column(WarpBuilder *b, Var *v, Oid collation, bool order);
extern int	warp_text_eq_column(WarpBuilder *b, Var *v, Oid collation, int *ci);
extern int	warp_text_const_for(WarpBuilder *b, int ci, Var *v, Datum d);
extern int	warp_compile_text_null_arg(WarpBuilder *b, Expr *arg);
extern int	warp_compile_text_cmp(WarpBuilder *b, OpExpr *op);
extern int	warp_compile_text_like(WarpBuilder *b, OpExpr *op);
extern int	warp_compile_text_key(WarpBuilder *b, Var *v, Oid collation);

#pragma GCC visibility pop

#endif							/* WARP_COMPILE_INTERNAL_H */
