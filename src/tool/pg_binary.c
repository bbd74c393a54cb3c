/*
 * pg_binary.c — decoding PostgreSQL's binary wire formats for pgwarp dump.
 */
#include "pg_binary.h"

const uint8_t pgb_copy_signature[11] = {
	'P', 'G', 'C', 'O', 'P', 'Y', '\n', 0377, '\r', '\n', '\0'
};

int64_t
pgb_copy_header(const uint8_t *buf, size_t len, const char **why)
{
	uint32_t	flags;
	uint32_t	extlen;

	if (len < 19)
	{
		if (memcmp(buf, pgb_copy_signature, len < 11 ? len : 11) != 0)
		{
			*why = "bad binary COPY signature";
			return -1;
		}
		return 0;
	}
	if (memcmp(buf, pgb_copy_signature, 11) != 0)
	{
		*why = "bad binary COPY signature";
		return -1;
	}
	flags = pgb_u32(buf + 11);
	if (flags & 0xFFFF0000u & ~(1u << 16))
	{
		*why = "unknown critical flags in binary COPY header";
		return -1;
	}
	if (flags & (1u << 16))
	{
		*why = "binary COPY with OIDs is not supported";
		return -1;
	}
	extlen = pgb_u32(buf + 15);
	if (extlen > (1u << 30))
	{
		*why = "bad binary COPY header extension length";
		return -1;
	}
	if (len < 19 + (size_t) extlen)
		return 0;
	return 19 + (int64_t) extlen;
}

int64_t
pgb_tuple_length(const uint8_t *buf, size_t len, int expected_fields,
				 bool *is_trailer)
{
	int16_t		nf;
	size_t		pos = 2;

	*is_trailer = false;
	if (len < 2)
		return 0;
	nf = pgb_i16(buf);
	if (nf == -1)
	{
		*is_trailer = true;
		return 2;
	}
	if (nf != expected_fields)
		return -1;
	for (int i = 0; i < nf; i++)
	{
		int32_t		flen;

		if (len - pos < 4)
			return 0;
		flen = pgb_i32(buf + pos);
		pos += 4;
		if (flen == -1)
			continue;
		if (flen < 0)
			return -1;
		if (len - pos < (size_t) flen)
			return 0;
		pos += flen;
	}
	return (int64_t) pos;
}

static const unsigned __int128 *
pow10_table(void)
{
	static unsigned __int128 t[39];
	static bool done = false;

	if (!done)
	{
		t[0] = 1;
		for (int i = 1; i <= 38; i++)
			t[i] = t[i - 1] * 10;
		done = true;
	}
	return t;
}

PgbNumericResult
pgb_numeric_to_int128(const uint8_t *p, size_t len, int precision, int scale,
					  __int128 *out)
{
	const unsigned __int128 *p10 = pow10_table();
	int			ndigits;
	int			weight;
	uint16_t	sign;
	unsigned __int128 acc = 0;

	if (len < 8)
		return PGB_NUM_MALFORMED;
	ndigits = pgb_i16(p);
	weight = pgb_i16(p + 2);
	sign = pgb_u16(p + 4);
	if (sign == PGB_NUMERIC_NAN)
		return PGB_NUM_NAN;
	if (sign == PGB_NUMERIC_PINF)
		return PGB_NUM_PINF;
	if (sign == PGB_NUMERIC_NINF)
		return PGB_NUM_NINF;
	if ((sign != PGB_NUMERIC_POS && sign != PGB_NUMERIC_NEG) ||
		ndigits < 0 || len != 8 + 2 * (size_t) ndigits)
		return PGB_NUM_MALFORMED;
	if (precision < 1 || precision > 38)
		precision = 38;

	for (int k = 0; k < ndigits; k++)
	{
		int			d = pgb_i16(p + 8 + 2 * k);
		int			e = 4 * (weight - k) + scale;

		if (d < 0 || d >= 10000)
			return PGB_NUM_MALFORMED;
		if (d == 0)
			continue;
		if (e >= 0)
		{
			unsigned __int128 term;

			if (e > 38)
				return PGB_NUM_OVERFLOW;
			if (__builtin_mul_overflow((unsigned __int128) d, p10[e], &term) ||
				__builtin_add_overflow(acc, term, &acc))
				return PGB_NUM_OVERFLOW;
		}
		else
		{
			int			drop = -e;

			if (drop >= 4 || d % (int) p10[drop] != 0)
				return PGB_NUM_INEXACT;
			if (__builtin_add_overflow(acc, (unsigned __int128) ((unsigned) d / (unsigned) p10[drop]), &acc))
				return PGB_NUM_OVERFLOW;
		}
	}
	if (acc >= p10[precision])
		return PGB_NUM_OVERFLOW;
	*out = sign == PGB_NUMERIC_NEG ? -(__int128) acc : (__int128) acc;
	return PGB_NUM_OK;
}

const char *
pgb_numeric_result_str(PgbNumericResult r)
{
	switch (r)
	{
		case PGB_NUM_OK:
			return "ok";
		case PGB_NUM_NAN:
			return "NaN";
		case PGB_NUM_PINF:
			return "Infinity";
		case PGB_NUM_NINF:
			return "-Infinity";
		case PGB_NUM_OVERFLOW:
			return "too many digits";
		case PGB_NUM_INEXACT:
			return "more fractional digits than the scale";
		default:
			return "malformed numeric";
	}
}

bool
pgb_numeric_typmod(int32_t typmod, int *precision, int *scale)
{
	int32_t		t;

	if (typmod < 4)
		return false;
	t = typmod - 4;
	*precision = (t >> 16) & 0xFFFF;
	*scale = ((t & 0x7FF) ^ 1024) - 1024;
	return true;
}
