/*
 * arrow_text_memo.c — a text comparison with a constant, decided once per
 * distinct value (see arrow_text_memo.h).
 *
 * An open-addressing table of the values seen, by hash_bytes of their
 * bytes, each with the operator's answer; it doubles up to twice
 * TEXT_MEMO_MAX slots.  The row's value is handed to the operator as a text
 * datum built in one reused buffer.
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "utils/memutils.h"
#include "utils/builtins.h"

#include "fdw/arrow_text_memo.h"

typedef struct MemoSlot
{
	char	   *bytes;			/* NULL: empty */
	int32		len;
	uint32		hash;
	bool		passes;
} MemoSlot;

struct TextMemo
{
	MemoryContext cxt;
	MemoryContext values_cxt;	/* the bytes of the values kept */
	FmgrInfo	fn;
	Oid			collid;
	bool		var_left;
	text	   *value;			/* the constant */
	text	   *row;			/* the row's value, reused */
	int64		row_cap;
	MemoSlot   *slots;
	uint32		mask;			/* slots - 1 */
	int64		n;
	int64		calls;
};

#define MEMO_FIRST_SLOTS 1024

TextMemo *
text_memo_create(MemoryContext cxt, Oid opfunc, Oid collid, bool var_left)
{
	TextMemo   *m = MemoryContextAllocZero(cxt, sizeof(TextMemo));

	m->cxt = cxt;
	m->values_cxt = AllocSetContextCreate(cxt, "pg_warp text memo", ALLOCSET_DEFAULT_SIZES);
	fmgr_info_cxt(opfunc, &m->fn, cxt);
	m->collid = collid;
	m->var_left = var_left;
	m->slots = MemoryContextAllocZero(cxt, sizeof(MemoSlot) * MEMO_FIRST_SLOTS);
	m->mask = MEMO_FIRST_SLOTS - 1;
	return m;
}

void
text_memo_set_value(TextMemo *m, const char *bytes, int len)
{
	if (m->value)
		pfree(m->value);
	m->value = (text *) MemoryContextAlloc(m->cxt, VARHDRSZ + len);
	SET_VARSIZE(m->value, VARHDRSZ + len);
	memcpy(VARDATA(m->value), bytes, len);
	/* another value (a parameter on rescan): every answer is stale */
	MemoryContextReset(m->values_cxt);
	memset(m->slots, 0, sizeof(MemoSlot) * (m->mask + 1));
	m->n = 0;
}

/* the operator's answer for these bytes (valid UTF-8) */
static bool
call_operator(TextMemo *m, const uint8 *bytes, int64 len)
{
	Datum		row;
	Datum		value = PointerGetDatum(m->value);

	if (len + VARHDRSZ > m->row_cap)
	{
		if (m->row)
			pfree(m->row);
		m->row_cap = Max(len + VARHDRSZ, 256);
		m->row = (text *) MemoryContextAlloc(m->cxt, m->row_cap);
	}
	SET_VARSIZE(m->row, VARHDRSZ + len);
	memcpy(VARDATA(m->row), bytes, len);
	row = PointerGetDatum(m->row);
	m->calls++;
	return DatumGetBool(FunctionCall2Coll(&m->fn, m->collid,
										  m->var_left ? row : value,
										  m->var_left ? value : row));
}

/* twice the slots, every value rehashed */
static void
grow(TextMemo *m)
{
	uint32		nslots = (m->mask + 1) * 2;
	MemoSlot   *old = m->slots;
	uint32		oldn = m->mask + 1;
	uint32		i;

	m->slots = MemoryContextAllocZero(m->cxt, sizeof(MemoSlot) * nslots);
	m->mask = nslots - 1;
	for (i = 0; i < oldn; i++)
		if (old[i].bytes)
		{
			uint32		j = old[i].hash & m->mask;

			while (m->slots[j].bytes)
				j = (j + 1) & m->mask;
			m->slots[j] = old[i];
		}
	pfree(old);
}

bool
text_memo_passes(TextMemo *m, const uint8 *bytes, int64 len)
{
	uint32		h;
	uint32		j;
	bool		passes;

	if (len > PG_INT32_MAX / 2)
		return true;			/* the executor's to decide */
	h = hash_bytes(bytes, (int) len);
	for (j = h & m->mask; m->slots[j].bytes; j = (j + 1) & m->mask)
		if (m->slots[j].hash == h && m->slots[j].len == len &&
			memcmp(m->slots[j].bytes, bytes, len) == 0)
			return m->slots[j].passes;
	passes = !pg_verify_mbstr(PG_UTF8, (const char *) bytes, (int) len, true) ||
		call_operator(m, bytes, len);
	if (m->n < TEXT_MEMO_MAX)
	{
		if ((m->n + 1) * 2 > (int64) m->mask + 1)
		{
			grow(m);
			for (j = h & m->mask; m->slots[j].bytes; j = (j + 1) & m->mask)
				;
		}
		m->slots[j].bytes = MemoryContextAlloc(m->values_cxt, Max(len, 1));
		memcpy(m->slots[j].bytes, bytes, len);
		m->slots[j].len = (int32) len;
		m->slots[j].hash = h;
		m->slots[j].passes = passes;
		m->n++;
	}
	return passes;
}

void
text_memo_counts(const TextMemo *m, int64 *values, int64 *calls)
{
	*values = m->n;
	*calls = m->calls;
}
