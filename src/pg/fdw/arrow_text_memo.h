/*
 * arrow_text_memo.h — "text_column OP value" decided from a row's raw UTF-8
 * bytes by PostgreSQL's own operator, once per distinct value.
 *
 * Ordering comparisons of text (<, <=, >, >=) under a collation other than
 * C call strcoll or ICU per row: about 140 ns each under en_US.UTF-8, which
 * made a 200k-row dimension's "p_brand1 BETWEEN ..." take 55 ms.  Dimension
 * columns repeat few values (p_brand1: 1,000 in 200,000 rows), so the
 * operator's answer is kept per value, keyed by its bytes: the operator's
 * function itself (text_ge, ...) with the clause's collation, so the answer
 * is PostgreSQL's whatever the collation.  At most TEXT_MEMO_MAX values are
 * kept; past that the operator is called per row.  A value that is not
 * valid UTF-8 is always kept (the executor's conversion reports it).
 */
#ifndef ARROW_TEXT_MEMO_H
#define ARROW_TEXT_MEMO_H

#include "postgres.h"

#define TEXT_MEMO_MAX 65536

typedef struct TextMemo TextMemo;

/* for operator function opfunc under collation collid, the column on the
 * left (var_left) or right; memory in cxt */
extern TextMemo *text_memo_create(MemoryContext cxt, Oid opfunc, Oid collid, bool var_left);

/* the value compared with (forgets every answer kept) */
extern void text_memo_set_value(TextMemo *m, const char *bytes, int len);

/* may a row holding these bytes pass the clause? */
extern bool text_memo_passes(TextMemo *m, const uint8 *bytes, int64 len);

/* values kept, and operator calls made (for tests and EXPLAIN) */
extern void text_memo_counts(const TextMemo *m, int64 *values, int64 *calls);

#endif
