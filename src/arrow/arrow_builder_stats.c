/*
 * arrow_builder_stats.c — running min/max statistics of a top-level column
 * builder within the current record batch.
 *
 * The value appenders (arrow_builder_append.c) call stat_add for each value
 * they take and the array appenders (arrow_builder_array.c) stat_range for
 * a run of values; arrow_write_batch.c reads the result when a batch is
 * flushed, into the footer's min_values/max_values.  Also the double to
 * IEEE half conversion the Float16 appender stores.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "arrow_builder_int.h"

/*
 * Double to IEEE half, rounding to nearest even, straight from the double's
 * bits (going through float would round twice).
 */
uint16_t
double_to_half(double d)
{
	uint64_t	bits;
	uint16_t	sign;
	int			exp;
	uint64_t	m;
	int			e;
	int			shift;
	uint64_t	full,
				rem,
				halfway;
	uint32_t	h;

	memcpy(&bits, &d, 8);
	sign = (uint16_t) ((bits >> 48) & 0x8000);
	exp = (int) ((bits >> 52) & 0x7ff);
	m = bits & 0xFFFFFFFFFFFFFULL;
	if (exp == 0x7ff)
		return sign | 0x7c00 | (m ? 0x200 : 0);
	if (exp == 0)
		return sign;			/* double subnormals are far below half's */
	m |= (uint64_t) 1 << 52;
	e = exp - 1023;
	if (e > 15)
		return sign | 0x7c00;
	if (e >= -14)
		shift = 42;
	else
		shift = 42 + (-14 - e);
	if (shift > 60)
		return sign;
	full = m >> shift;
	rem = m & (((uint64_t) 1 << shift) - 1);
	halfway = (uint64_t) 1 << (shift - 1);
	if (rem > halfway || (rem == halfway && (full & 1)))
		full++;
	if (e >= -14)
		h = ((uint32_t) (e + 15) << 10) + (uint32_t) (full - 0x400);	/* carry
																		 * may reach inf */
	else
		h = (uint32_t) full;	/* may round up to the smallest normal */
	if (h >= 0x7c00)
		h = 0x7c00;
	return sign | (uint16_t) h;
}

/* NaN sorts above everything, as in PostgreSQL. */
static inline bool
float_less(double a, double b)
{
	if (isnan(a))
		return false;
	if (isnan(b))
		return true;
	return a < b;
}

void
stat_add(ArrowBuilder *b, int64_t i)
{
	const uint8_t *p = b->values.data + (size_t) i * b->width;

	if (b->stat_kind == STAT_FLOAT)
	{
		double		d;

		if (b->width == 2)
		{
			uint16_t	h;

			memcpy(&h, p, 2);
			d = arrow_half_to_double(h);
		}
		else if (b->width == 4)
		{
			float		f;

			memcpy(&f, p, 4);
			d = f;
		}
		else
			memcpy(&d, p, 8);
		if (!b->stat_have)
		{
			b->stat_dmin = b->stat_dmax = d;
			b->stat_have = true;
		}
		else
		{
			if (float_less(d, b->stat_dmin))
				b->stat_dmin = d;
			if (float_less(b->stat_dmax, d))
				b->stat_dmax = d;
		}
	}
	else
	{
		__int128	v = 0;

		switch (b->width)
		{
			case 1:
				v = b->stat_kind == STAT_UINT ? (__int128) *(const uint8_t *) p : (__int128) *(const int8_t *) p;
				break;
			case 2:
				{
					int16_t		s;
					uint16_t	u;

					memcpy(&s, p, 2);
					memcpy(&u, p, 2);
					v = b->stat_kind == STAT_UINT ? (__int128) u : (__int128) s;
					break;
				}
			case 4:
				{
					int32_t		s;
					uint32_t	u;

					memcpy(&s, p, 4);
					memcpy(&u, p, 4);
					v = b->stat_kind == STAT_UINT ? (__int128) u : (__int128) s;
					break;
				}
			case 8:
				{
					int64_t		s;
					uint64_t	u;

					memcpy(&s, p, 8);
					memcpy(&u, p, 8);
					v = b->stat_kind == STAT_UINT ? (__int128) u : (__int128) s;
					break;
				}
			case 16:
				memcpy(&v, p, 16);
				break;
		}
		if (!b->stat_have)
		{
			b->stat_imin = b->stat_imax = v;
			b->stat_have = true;
		}
		else
		{
			if (v < b->stat_imin)
				b->stat_imin = v;
			if (v > b->stat_imax)
				b->stat_imax = v;
		}
	}
}

/* Statistics over slots [from, from+n) just appended. */
void
stat_range(ArrowBuilder *b, int64_t from, int64_t n)
{
	int64_t		i;

	if (b->stat_kind == STAT_NONE || n <= 0)
		return;
	/* fast path (bulk appends of int32 without nulls: pgwarp ssb gen) */
	if (b->stat_kind == STAT_INT && b->width == 4 && !b->has_validity)
	{
		const int32_t *v = (const int32_t *) (b->values.data + (size_t) from * 4);
		int32_t		lo = v[0],
					hi = v[0];

		for (i = 1; i < n; i++)
		{
			lo = v[i] < lo ? v[i] : lo;
			hi = v[i] > hi ? v[i] : hi;
		}
		if (!b->stat_have)
		{
			b->stat_imin = lo;
			b->stat_imax = hi;
			b->stat_have = true;
		}
		else
		{
			if (lo < b->stat_imin)
				b->stat_imin = lo;
			if (hi > b->stat_imax)
				b->stat_imax = hi;
		}
		return;
	}
	for (i = from; i < from + n; i++)
	{
		if (b->has_validity && !arrow_get_bit(b->validity.data, i))
			continue;
		stat_add(b, i);
	}
}
