/*-------------------------------------------------------------------------
 *
 * warp_cpu_load.c
 *	  The CPU driver's column loading: a vector's values of a program column
 *	  at the positions of a selection vector (plain, dictionary-encoded,
 *	  decimal, text matched against the program's strings, text keys
 *	  interned), with the range checks of the declared type; the same
 *	  date/timestamp conversions as the row evaluator (warp_row_conv.h).
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "warp_cpu_internal.h"
#include "warp_row_conv.h"
#include "warp_ops_float.h"
#include "warp_ops_int.h"
#include "warp_ops_datetime.h"
#include "warp_ops_tz.h"
#include "warp_ops_text.h"

/* ------------------------------------------------------------- loading */

bool
warp_cpu_can_load(const ArrowField *f, WarpType type)
{
	const ArrowType *t = &f->type;	/* the value type, also for dictionaries */

	switch (type)
	{
		case WT_BOOL:
			return t->id == ARROW_TYPE_BOOL;
		case WT_INT2:
		case WT_INT4:
		case WT_INT8:
			{
				int			max_bits = type == WT_INT2 ? 16 : type == WT_INT4 ? 32 : 64;

				/* a Duration declared bigint: its count of the unit */
				if (t->id == ARROW_TYPE_DURATION)
					return type == WT_INT8;
				if (t->id != ARROW_TYPE_INT)
					return false;
				/* the reading side's mapping: UInt8->int2, UInt16->int4,
				 * UInt32->int8; a narrower Arrow type into a wider column */
				if (t->is_signed)
					return t->bit_width <= max_bits;
				return t->bit_width < max_bits;
			}
		case WT_DATE:
			return t->id == ARROW_TYPE_DATE;
		case WT_TIMESTAMP:
			return t->id == ARROW_TYPE_TIMESTAMP;
		case WT_FLOAT4:
			return t->id == ARROW_TYPE_FLOAT && t->precision != ARROW_PRECISION_DOUBLE;
		case WT_FLOAT8:
			return t->id == ARROW_TYPE_FLOAT;
		case WT_NUMERIC:
			return false;		/* decimal columns load as WT_INT8 */
	}
	return false;
}

/*
 * Date32/Date64 and timestamp raw values to PostgreSQL's domains: the
 * conversion of the row evaluator (warp_row_conv.h), which the GPU kernel runs
 * too, so both drivers accept and reject exactly the same values.
 */
static inline bool
conv_date(warp_int64 d, int unit, warp_int64 *out)
{
	return warp_row_convert(unit == ARROW_DATE_MILLISECOND ? WRC_DATE_MS : WRC_DATE_DAY, d, out);
}

static inline bool
conv_timestamp(warp_int64 v, int unit, warp_int64 *out)
{
	return warp_row_convert(unit == ARROW_TIME_SECOND ? WRC_TS_S :
							unit == ARROW_TIME_MILLISECOND ? WRC_TS_MS :
							unit == ARROW_TIME_MICROSECOND ? WRC_TS_US : WRC_TS_NS, v, out);
}

/*
 * A dictionary-encoded column: each selected row's index is looked up in
 * the dictionary (indices were checked against its length at load time).
 */
static WarpLoadStatus
load_dict_column(WarpCpu *x, int c, const warp_uint16 *sel, int n, int *bad)
{
	const ArrowArray *a = &x->bcols[c];
	const ArrowArray *dict = a->dictionary;
	const ArrowType *t = &a->field->type;
	bool		isfloat = WARP_TYPE_IS_FLOAT(x->p->cols[c].type);
	warp_uint8 *nul = x->cn[c];
	int			k;

	if (dict == NULL)
		return WARP_LOAD_UNSUPPORTED;
	for (k = 0; k < n; k++)
	{
		int			i = sel[k];
		warp_int64	row = x->vstart + i;
		warp_int64	idx;

		nul[i] = arrow_is_null(a, row);
		if (nul[i])
			continue;
		idx = arrow_get_dict_index(a, row);
		if (arrow_is_null(dict, idx))
		{
			nul[i] = 1;
			continue;
		}
		if (isfloat)
			x->cf[c][i] = arrow_get_double(dict, idx);
		else if (t->id == ARROW_TYPE_DATE)
		{
			if (!conv_date(arrow_get_int(dict, idx), t->unit, &x->ci[c][i]))
			{
				*bad = i;
				return WARP_LOAD_RANGE;
			}
		}
		else if (t->id == ARROW_TYPE_TIMESTAMP)
		{
			if (!conv_timestamp(arrow_get_int(dict, idx), t->unit, &x->ci[c][i]))
			{
				*bad = i;
				return WARP_LOAD_RANGE;
			}
		}
		else
			x->ci[c][i] = arrow_get_int(dict, idx);
	}
	return WARP_LOAD_OK;
}

/*
 * A numeric(p <= 18, s) column (WarpColumnSpec.decimal): Decimal128 values
 * of scale s as their unscaled int64, or integers times 10^s.  A value
 * beyond int64 (a file holding more digits than its declared precision)
 * cannot be read as declared.
 */
static WarpLoadStatus
load_decimal_column(WarpCpu *x, int c, const warp_uint16 *sel, int n, int *bad)
{
	const WarpColumnSpec *cs = &x->p->cols[c];
	const ArrowArray *a = &x->bcols[c];
	const ArrowType *t = &a->field->type;
	warp_uint8 *nul = x->cn[c];
	warp_int64 *out = x->ci[c];
	warp_int64	mult = 1;
	warp_int64	limit = 0;		/* 10^precision, or 0: unchecked */
	int			k;

	if (a->field->has_dict || cs->type != WT_INT8 || cs->scale > 18 || cs->precision > 18)
		return WARP_LOAD_UNSUPPORTED;
	if (cs->precision > 0)
	{
		limit = 1;
		for (k = 0; k < cs->precision; k++)
			limit *= 10;
	}
	if (t->id == ARROW_TYPE_DECIMAL)
	{
		if (t->bit_width != 128 || t->dec_scale != cs->scale || a->values == NULL)
			return WARP_LOAD_UNSUPPORTED;
	}
	else if (t->id == ARROW_TYPE_INT && (t->is_signed || t->bit_width < 64))
	{
		for (k = 0; k < cs->scale; k++)
			mult *= 10;
	}
	else
		return WARP_LOAD_UNSUPPORTED;
	for (k = 0; k < n; k++)
	{
		int			i = sel[k];

		nul[i] = arrow_is_null(a, x->vstart + i);
		if (nul[i])
			continue;
		if (t->id == ARROW_TYPE_DECIMAL)
		{
			const warp_uint8 *p = a->values + (a->offset + x->vstart + i) * 16;
			warp_uint64 lo;
			warp_int64	hi;

			memcpy(&lo, p, 8);
			memcpy(&hi, p + 8, 8);
			if (hi != ((warp_int64) lo < 0 ? -1 : 0))
			{
				*bad = i;
				return WARP_LOAD_UNSUPPORTED;
			}
			out[i] = (warp_int64) lo;
		}
		else if (__builtin_mul_overflow(arrow_get_int(a, x->vstart + i), mult, &out[i]))
		{
			*bad = i;
			return WARP_LOAD_UNSUPPORTED;
		}
		/* more digits than declared: numeric expressions' bounds rest on it */
		if (limit && (out[i] >= limit || out[i] <= -limit))
		{
			*bad = i;
			return WARP_LOAD_PRECISION;
		}
	}
	return WARP_LOAD_OK;
}

/*
 * A numeric(19 <= p <= 38, s) column (WARP_DECIMAL_WIDE): Decimal128 values
 * of scale s as 128-bit unscaled integers, or integers (UInt64 included)
 * times 10^s, each checked against the declared precision (numeric
 * expressions' bounds rest on it).
 */
static WarpLoadStatus
load_wide_decimal_column(WarpCpu *x, int c, const warp_uint16 *sel, int n, int *bad)
{
	const WarpColumnSpec *cs = &x->p->cols[c];
	const ArrowArray *a = &x->bcols[c];
	const ArrowType *t = &a->field->type;
	warp_uint8 *nul = x->cn[c];
	warp_int128 *out = x->cq[c];
	warp_int128 limit = 1;		/* 10^precision */
	int			k;

	warp_int128 mult = 1;
	bool		isint = t->id == ARROW_TYPE_INT;

	if (a->field->has_dict || a->values == NULL || cs->precision > 38 ||
		(!isint && (t->id != ARROW_TYPE_DECIMAL || t->bit_width != 128 ||
					t->dec_scale != cs->scale)) ||
		(isint && cs->scale > 18))
		return WARP_LOAD_UNSUPPORTED;
	for (k = 0; k < cs->precision; k++)
		limit *= 10;
	for (k = 0; isint && k < cs->scale; k++)
		mult *= 10;
	for (k = 0; k < n; k++)
	{
		int			i = sel[k];
		const warp_uint8 *p;
		warp_uint64 lo;
		warp_int64	hi;

		nul[i] = arrow_is_null(a, x->vstart + i);
		if (nul[i])
			continue;
		if (isint)
		{
			/* at most 2^64 * 10^18 in magnitude: no overflow */
			if (!t->is_signed && t->bit_width == 64)
				out[i] = (warp_int128) arrow_get_uint64(a, x->vstart + i) * mult;
			else
				out[i] = (warp_int128) arrow_get_int(a, x->vstart + i) * mult;
		}
		else
		{
			p = a->values + (a->offset + x->vstart + i) * 16;
			memcpy(&lo, p, 8);
			memcpy(&hi, p + 8, 8);
			out[i] = (warp_int128) (((warp_uint128) (warp_uint64) hi << 64) | lo);
		}
		if (out[i] >= limit || out[i] <= -limit)
		{
			*bad = i;
			return WARP_LOAD_PRECISION;
		}
	}
	return WARP_LOAD_OK;
}

/*
 * The intern table's own hash (ids never leave the driver, so it need match
 * nothing else): 8-byte loads, one multiply-xorshift per word.
 */
static inline warp_uint64
intern_hash(const warp_uint8 *p, warp_int32 len)
{
	warp_uint64 h = UINT64_C(0x9E3779B97F4A7C15) ^ ((warp_uint64) len * UINT64_C(0xff51afd7ed558ccd));

	while (len >= 8)
	{
		warp_uint64 w;

		memcpy(&w, p, 8);
		h = (h ^ w) * UINT64_C(0xc4ceb9fe1a85ec53);
		h ^= h >> 29;
		p += 8;
		len -= 8;
	}
	if (len > 0)
	{
		warp_uint64 w = 0;

		memcpy(&w, p, (size_t) len);
		h = (h ^ w) * UINT64_C(0xc4ceb9fe1a85ec53);
	}
	h ^= h >> 32;
	h *= UINT64_C(0xff51afd7ed558ccd);
	return h ^ (h >> 29);
}

static bool
intern_rehash(WarpCpu *x, WarpIntern *t)
{
	warp_uint64 cap = t->slot ? (t->mask + 1) * 2 : 256;
	warp_int32 *slot = xalloc(x, sizeof(warp_int32) * cap);
	warp_int64	id;

	if (slot == NULL)
		return false;
	memset(slot, 0xff, sizeof(warp_int32) * cap);
	for (id = 0; id < t->n; id++)
	{
		warp_uint64 h = intern_hash(t->bytes + t->off[id],
									(warp_int32) (t->off[id + 1] - t->off[id])) & (cap - 1);

		while (slot[h] >= 0)
			h = (h + 1) & (cap - 1);
		slot[h] = (warp_int32) id;
	}
	t->slot = slot;
	t->mask = cap - 1;
	return true;
}

/* the id of bytes [p, p + len) among t's strings, or -1 (*slot: where it would go) */
static inline warp_int64
intern_find(const WarpIntern *t, const warp_uint8 *p, warp_int32 len, warp_uint64 *slot)
{
	warp_uint64 h = intern_hash(p, len) & t->mask;

	for (;;)
	{
		warp_int32	id = t->slot[h];

		if (id < 0)
			break;
		if (t->off[id + 1] - t->off[id] == len &&
			(len == 0 || memcmp(t->bytes + t->off[id], p, (size_t) len) == 0))
			return id;
		h = (h + 1) & t->mask;
	}
	*slot = h;
	return -1;
}

/* the id of bytes [p, p + len) in column c's strings, added if new; -1: no memory */
static warp_int64
intern_id(WarpCpu *x, int c, const warp_uint8 *p, warp_int32 len)
{
	WarpIntern *t = &x->intern[c];
	warp_uint64 h;

	if (t->slot == NULL)
	{
		t->ncap = 64;
		t->off = xalloc(x, sizeof(warp_int64) * (t->ncap + 1));
		if (t->off == NULL || !intern_rehash(x, t))
			return -1;
		t->off[0] = 0;
	}
	{
		warp_int64	id = intern_find(t, p, len, &h);

		if (id >= 0)
			return id;
	}
	if (t->n >= WARP_INT32_MAX - 2)
		return -1;
	if (t->n == t->ncap)
	{
		warp_int64 *off = xalloc(x, sizeof(warp_int64) * (t->ncap * 2 + 1));

		if (off == NULL)
			return -1;
		memcpy(off, t->off, sizeof(warp_int64) * (t->n + 1));
		t->off = off;
		t->ncap *= 2;
	}
	if (t->nbytes + len > t->bcap)
	{
		warp_int64	cap = t->bcap ? t->bcap : 4096;
		warp_uint8 *b;

		while (cap < t->nbytes + len)
			cap *= 2;
		b = xalloc(x, (size_t) cap);
		if (b == NULL)
			return -1;
		if (t->nbytes)
			memcpy(b, t->bytes, (size_t) t->nbytes);
		t->bytes = b;
		t->bcap = cap;
	}
	if (len)
		memcpy(t->bytes + t->nbytes, p, (size_t) len);
	t->nbytes += len;
	t->slot[h] = (warp_int32) t->n;
	t->n++;
	t->off[t->n] = t->nbytes;
	if ((warp_uint64) t->n * 2 > t->mask && !intern_rehash(x, t))
		return -1;
	return t->n - 1;
}

/*
 * A WARP_TEXT_EQ column's program strings into its intern table, in order:
 * their ids are their indexes (the builder gives a column distinct
 * strings).  false: no memory.
 */
bool
cpu_eq_strings_intern(WarpCpu *x, int c)
{
	const WarpColumnSpec *cs = &x->p->cols[c];
	warp_int32	k;

	for (k = 0; k < cs->str_count; k++)
	{
		const WarpString *s = &x->p->strings[cs->str_first + k];

		if (intern_id(x, c, x->p->strbytes + s->off, s->len) != k)
			return false;
	}
	return true;
}

/*
 * A text column's value for bytes [p, p + len): which of its strings they
 * equal, or -1 (WARP_TEXT_EQ); whether they match its LIKE pattern
 * (WARP_TEXT_LIKE), or TEXT_LIKE_ESCAPE where the match reached an
 * unpaired escape character at the pattern's end (PostgreSQL's error).
 */
#define TEXT_LIKE_ESCAPE (-3)

static inline warp_int64
text_match(WarpCpu *x, const WarpColumnSpec *cs, const warp_uint8 *p, warp_int64 len)
{
	int			k;

	if (cs->bpchar)
		len = warp_bpchar_len(p, len);
	if (cs->text == WARP_TEXT_LIKE)
	{
		const WarpString *s = &x->p->strings[cs->str_first];
		bool		m = false;

		if (warp_text_like(p, (warp_int32) len, x->p->strbytes + s->off, s->len, &m) != WARP_OK)
			return TEXT_LIKE_ESCAPE;
		return m ? 1 : 0;
	}
	if (cs->text == WARP_TEXT_KEY)
		return intern_id(x, (int) (cs - x->p->cols), p, (warp_int32) len);
	if (cs->text == WARP_TEXT_EQ && x->intern[cs - x->p->cols].slot)
	{
		warp_uint64 unused;

		return intern_find(&x->intern[cs - x->p->cols], p, (warp_int32) len, &unused);
	}
	if (cs->text == WARP_TEXT_CMP)
	{
		const WarpString *s = &x->p->strings[cs->str_first];

		return cmp_holds(cs->cmp, warp_text_cmp_c(p, (warp_int32) len,
												   x->p->strbytes + s->off, s->len));
	}

	for (k = 0; k < cs->str_count; k++)
	{
		const WarpString *s = &x->p->strings[cs->str_first + k];

		if (s->len == len && (len == 0 || memcmp(x->p->strbytes + s->off, p, (size_t) len) == 0))
			return k;
	}
	return -1;
}

/*
 * a == b for len bytes, reading only those bytes: 4..16 bytes as two
 * overlapping words each (first and last), fewer byte by byte, more by
 * memcmp.  Codes that share a prefix (MFGR#1, MFGR#2) differ in the last
 * word, which is compared with the first.
 */
static inline bool
bytes_equal(const warp_uint8 *a, const warp_uint8 *b, warp_int32 len)
{
	warp_uint64 a1,
				a2,
				b1,
				b2;
	warp_uint32 c1,
				c2,
				d1,
				d2;
	warp_int32	i;

	if (len > 16)
		return memcmp(a, b, (size_t) len) == 0;
	if (len >= 8)
	{
		memcpy(&a1, a, 8);
		memcpy(&b1, b, 8);
		memcpy(&a2, a + len - 8, 8);
		memcpy(&b2, b + len - 8, 8);
		return ((a1 ^ b1) | (a2 ^ b2)) == 0;
	}
	if (len >= 4)
	{
		memcpy(&c1, a, 4);
		memcpy(&d1, b, 4);
		memcpy(&c2, a + len - 4, 4);
		memcpy(&d2, b + len - 4, 4);
		return ((c1 ^ d1) | (c2 ^ d2)) == 0;
	}
	for (i = 0; i < len; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

static inline bool
is_utf8_type(const ArrowType *t)
{
	return t->id == ARROW_TYPE_UTF8 || t->id == ARROW_TYPE_LARGE_UTF8;
}

/*
 * A text column (WarpColumnSpec.text): each row's value is which of the
 * program's strings for the column it equals byte for byte, or -1.  A
 * dictionary's entries are matched once per dictionary, rows then look
 * their index up.
 */
static WarpLoadStatus
load_text_column(WarpCpu *x, int c, const warp_uint16 *sel, int n, int *bad)
{
	const WarpColumnSpec *cs = &x->p->cols[c];
	const ArrowArray *a = &x->bcols[c];
	warp_uint8 *nul = x->cn[c];
	warp_int64 *out = x->ci[c];
	int			k;

	if (cs->type != ((cs->text == WARP_TEXT_LIKE || cs->text == WARP_TEXT_CMP) ? WT_BOOL : WT_INT8) ||
		!is_utf8_type(&a->field->type))
		return WARP_LOAD_UNSUPPORTED;
	if (a->field->has_dict)
	{
		const ArrowArray *d = a->dictionary;
		warp_int32 *map;

		if (d == NULL)
			return WARP_LOAD_UNSUPPORTED;
		if (x->tdict[c] != d || x->tcap[c] < d->length)
		{
			warp_int64	e;

			if (x->tcap[c] < d->length)
			{
				x->tmap[c] = xalloc(x, sizeof(warp_int32) * (d->length > 0 ? d->length : 1));
				if (x->tmap[c] == NULL)
					return WARP_LOAD_UNSUPPORTED;
				x->tcap[c] = d->length;
			}
			for (e = 0; e < d->length; e++)
			{
				warp_int64	len;
				const warp_uint8 *p;

				if (arrow_is_null(d, e))
				{
					x->tmap[c][e] = -2;	/* a NULL entry: the row is NULL */
					continue;
				}
				p = arrow_get_bytes(d, e, &len);
				if (len > WARP_INT32_MAX)
					return WARP_LOAD_UNSUPPORTED;
				x->tmap[c][e] = (warp_int32) text_match(x, cs, p, len);
				if (x->tmap[c][e] < 0 && cs->text == WARP_TEXT_KEY)
					return WARP_LOAD_NO_MEMORY;
			}
			x->tdict[c] = d;
		}
		map = x->tmap[c];
		for (k = 0; k < n; k++)
		{
			int			i = sel[k];
			warp_int64	row = x->vstart + i;
			warp_int32	m;

			nul[i] = arrow_is_null(a, row);
			if (nul[i])
				continue;
			m = map[arrow_get_dict_index(a, row)];
			if (m == TEXT_LIKE_ESCAPE)
			{
				*bad = i;
				return WARP_LOAD_LIKE_ESCAPE;
			}
			nul[i] = m == -2;
			out[i] = m;
		}
		return WARP_LOAD_OK;
	}
	if (cs->text == WARP_TEXT_EQ && x->intern[c].slot == NULL &&
		a->field->type.id == ARROW_TYPE_UTF8 && cs->str_count <= 8)
	{
		/*
		 * `col = 'x'`, `col IN (a few)`: the offsets read in place and the
		 * bytes compared inline, the program's strings by length first (no
		 * call per row: this loop is most of a text filter's time)
		 */
		const warp_int32 *offs = (const warp_int32 *) a->offsets + a->offset;
		const warp_uint8 *sp[8];
		warp_int32	sl[8];
		int			ns = cs->str_count;
		int			q;

		for (q = 0; q < ns; q++)
		{
			const WarpString *ws = &x->p->strings[cs->str_first + q];

			sp[q] = x->p->strbytes + ws->off;
			sl[q] = ws->len;
		}
		for (k = 0; k < n; k++)
		{
			int			i = sel[k];
			warp_int64	row = x->vstart + i;
			warp_int32	len;
			const warp_uint8 *p;
			warp_int64	m = -1;

			nul[i] = arrow_is_null(a, row);
			if (nul[i])
				continue;
			p = a->data + offs[row];
			len = offs[row + 1] - offs[row];
			if (cs->bpchar)
				len = (warp_int32) warp_bpchar_len(p, len);
			for (q = 0; q < ns; q++)
				if (sl[q] == len && bytes_equal(sp[q], p, len))
				{
					m = q;
					break;
				}
			out[i] = m;
		}
		return WARP_LOAD_OK;
	}
	for (k = 0; k < n; k++)
	{
		int			i = sel[k];
		warp_int64	row = x->vstart + i;
		warp_int64	len;
		const warp_uint8 *p;

		nul[i] = arrow_is_null(a, row);
		if (nul[i])
			continue;
		p = arrow_get_bytes(a, row, &len);
		if (len > WARP_INT32_MAX)
		{
			*bad = i;
			return WARP_LOAD_UNSUPPORTED;
		}
		out[i] = text_match(x, cs, p, len);
		if (out[i] < 0 && cs->text == WARP_TEXT_KEY)
			return WARP_LOAD_NO_MEMORY;
		if (out[i] == TEXT_LIKE_ESCAPE && cs->text == WARP_TEXT_LIKE)
		{
			*bad = i;
			return WARP_LOAD_LIKE_ESCAPE;
		}
	}
	return WARP_LOAD_OK;
}

/*
 * A native column (WarpColumnSpec.native): int64 or double engine values
 * as they are, and the validity bitmap.
 */
static WarpLoadStatus
load_native_column(WarpCpu *x, int c, const warp_uint16 *sel, int n)
{
	const WarpColumnSpec *cs = &x->p->cols[c];
	const ArrowArray *a = &x->bcols[c];
	const ArrowType *t = &a->field->type;
	bool		isfloat = WARP_TYPE_IS_FLOAT(cs->type);
	warp_uint8 *nul = x->cn[c];
	int			k;

	if (a->field->has_dict || a->values == NULL || a->offset != 0 ||
		(isfloat ? t->id != ARROW_TYPE_FLOAT || t->precision != ARROW_PRECISION_DOUBLE :
		 t->id != ARROW_TYPE_INT || t->bit_width != 64 || !t->is_signed) ||
		a->values_len < (x->vstart + x->vn) * 8)
		return WARP_LOAD_UNSUPPORTED;
	for (k = 0; k < n; k++)
	{
		int			i = sel[k];

		nul[i] = arrow_is_null(a, x->vstart + i);
		if (isfloat)
			x->cf[c][i] = ((const double *) a->values)[x->vstart + i];
		else
			x->ci[c][i] = ((const warp_int64 *) a->values)[x->vstart + i];
	}
	return WARP_LOAD_OK;
}

/*
 * Load column c of the current vector at the positions of sel (late
 * materialization: a column is read only for the rows an expression needs,
 * so an aggregate argument is read for the rows that survived the quals and
 * the joins, not for the whole batch).  *bad is the position of a value out
 * of the declared type's range.
 */
WarpLoadStatus
cpu_load_column(WarpCpu *x, int c, const warp_uint16 *sel, int n, int *bad)
{
	const WarpColumnSpec *cs = &x->p->cols[c];
	const ArrowArray *a = &x->bcols[c];
	const ArrowType *t = &a->field->type;
	warp_int64	base = a->offset + x->vstart;
	warp_uint8 *nul = x->cn[c];
	bool		dense = n == x->vn;	/* sel is 0 .. vn-1 */
	int			k;

	if (cs->native)
		return load_native_column(x, c, sel, n);
	if (cs->decimal == WARP_DECIMAL_WIDE)
		return load_wide_decimal_column(x, c, sel, n, bad);
	if (cs->decimal)
		return load_decimal_column(x, c, sel, n, bad);
	if (cs->text)
		return load_text_column(x, c, sel, n, bad);
	if (!warp_cpu_can_load(a->field, (WarpType) cs->type))
		return WARP_LOAD_UNSUPPORTED;
	if (a->field->has_dict)
		return load_dict_column(x, c, sel, n, bad);
	if (a->validity == NULL)
	{
		if (dense)
			memset(nul, 0, n);
		else
			for (k = 0; k < n; k++)
				nul[sel[k]] = 0;
	}
	else
		for (k = 0; k < n; k++)
			nul[sel[k]] = arrow_is_null(a, x->vstart + sel[k]);

	if (WARP_TYPE_IS_FLOAT(cs->type))
	{
		double	   *out = x->cf[c];

		if (t->precision == ARROW_PRECISION_DOUBLE)
		{
			const double *in = (const double *) a->values + base;

			if (dense)
				memcpy(out, in, sizeof(double) * n);
			else
				for (k = 0; k < n; k++)
					out[sel[k]] = in[sel[k]];
		}
		else if (t->precision == ARROW_PRECISION_SINGLE)
		{
			const float *in = (const float *) a->values + base;

			for (k = 0; k < n; k++)
				out[sel[k]] = in[sel[k]];
		}
		else
			for (k = 0; k < n; k++)
				out[sel[k]] = arrow_get_double(a, x->vstart + sel[k]);
		return WARP_LOAD_OK;
	}
	else
	{
		warp_int64 *out = x->ci[c];

		if (t->id == ARROW_TYPE_INT && t->bit_width == 32 && t->is_signed)
		{
			const warp_int32 *in = (const warp_int32 *) a->values + base;

			if (dense)
				for (k = 0; k < n; k++)
					out[k] = in[k];
			else
				for (k = 0; k < n; k++)
					out[sel[k]] = in[sel[k]];
		}
		else if ((t->id == ARROW_TYPE_INT && t->bit_width == 64 && t->is_signed) ||
				 t->id == ARROW_TYPE_DURATION)
		{
			const warp_int64 *in = (const warp_int64 *) a->values + base;

			for (k = 0; k < n; k++)
				out[sel[k]] = in[sel[k]];
		}
		else if (t->id == ARROW_TYPE_BOOL)
		{
			for (k = 0; k < n; k++)
				out[sel[k]] = arrow_get_bit(a->values, base + sel[k]);
		}
		else if (t->id == ARROW_TYPE_DATE)
		{
			for (k = 0; k < n; k++)
			{
				int			i = sel[k];

				if (!nul[i] && !conv_date(arrow_get_int(a, x->vstart + i), t->unit, &out[i]))
				{
					*bad = i;
					return WARP_LOAD_RANGE;
				}
			}
		}
		else if (t->id == ARROW_TYPE_TIMESTAMP)
		{
			for (k = 0; k < n; k++)
			{
				int			i = sel[k];

				if (!nul[i] && !conv_timestamp(arrow_get_int(a, x->vstart + i), t->unit, &out[i]))
				{
					*bad = i;
					return WARP_LOAD_RANGE;
				}
			}
		}
		else
			for (k = 0; k < n; k++)
				out[sel[k]] = arrow_get_int(a, x->vstart + sel[k]);
	}
	return WARP_LOAD_OK;
}
