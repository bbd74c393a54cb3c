/*-------------------------------------------------------------------------
 *
 * warp_ops_text.h
 *	  text equality, ordering under C collation, join-key hashing and LIKE.
 *
 * Under any deterministic collation PostgreSQL's text equality is byte
 * equality (texteq compares lengths, then memcmp), and LIKE compares bytes;
 * so both are exact here whatever the collation, as long as it is
 * deterministic.  Ordering is byte order only under C / C.UTF-8, and the
 * planner must only use warp_text_cmp_c there.
 *
 * Hashing is for the engine's own join and group tables, not PostgreSQL's
 * hash functions: what matters is that values equal under the join
 * operator hash equal.  Integers of every width hash their int64 value
 * (int4 = int8 joins), floats hash the float8 value with -0 folded into 0
 * and every NaN into one NaN (float48eq treats them so), numerics hash
 * their canonical form without trailing fractional zeros, text its bytes.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WARP_OPS_TEXT_H
#define WARP_OPS_TEXT_H

#include "warp_defs.h"
#include "warp_ops_numeric.h"

/* ---------- equality and ordering ---------- */

WARP_FN bool
warp_text_eq(const warp_uint8 *a, warp_int32 alen,
			 const warp_uint8 *b, warp_int32 blen)
{
	warp_int32	i;

	if (alen != blen)
		return false;
	for (i = 0; i < alen; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/*
 * Byte order, then length: varstr_cmp under the C collation (memcmp on the
 * common prefix; a proper prefix sorts first).  Returns -1, 0 or 1.
 */
WARP_FN int
warp_text_cmp_c(const warp_uint8 *a, warp_int32 alen,
				const warp_uint8 *b, warp_int32 blen)
{
	warp_int32	n = alen < blen ? alen : blen;
	warp_int32	i;

	for (i = 0; i < n; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return (alen > blen) - (alen < blen);
}

/*
 * character(n) (bpchar): the length of a value without its trailing
 * blanks, which bpchar's equality, ordering and hashing ignore
 * (PostgreSQL's bcTruelen: only the space, 0x20, is a blank).  Its LIKE
 * (bpcharlike, which is textlike) sees the padded value.
 */
WARP_FN warp_int64
warp_bpchar_len(const warp_uint8 *p, warp_int64 len)
{
	while (len > 0 && p[len - 1] == ' ')
		len--;
	return len;
}

/* ---------- hashing ---------- */

#define WARP_HASH_SEED	UINT64_C(0x9E3779B97F4A7C15)

/* a 64-bit finalizer (MurmurHash3's fmix64): every input bit affects every output bit */
WARP_FN warp_uint64
warp_hash_mix64(warp_uint64 h)
{
	h ^= h >> 33;
	h *= UINT64_C(0xff51afd7ed558ccd);
	h ^= h >> 33;
	h *= UINT64_C(0xc4ceb9fe1a85ec53);
	h ^= h >> 33;
	return h;
}

/* combine the hashes of the columns of a multi-column key */
WARP_FN warp_uint64
warp_hash_combine(warp_uint64 h, warp_uint64 next)
{
	return warp_hash_mix64(h ^ (next + WARP_HASH_SEED + (h << 6) + (h >> 2)));
}

/* int2, int4 and int8 keys: hash the widened value so int4 = int8 matches */
WARP_FN warp_uint64
warp_hash_int64(warp_int64 v)
{
	return warp_hash_mix64((warp_uint64) v ^ WARP_HASH_SEED);
}

/* float4 and float8 keys: call with the float8 value (promotion is exact) */
WARP_FN warp_uint64
warp_hash_float8(warp_float8 v)
{
	union
	{
		warp_float8 d;
		warp_uint64 u;
	}			bits;

	if (v == 0.0)
		v = 0.0;				/* -0 = 0 */
	if (v != v)
		bits.u = UINT64_C(0x7ff8000000000000);	/* all NaNs are equal */
	else
		bits.d = v;
	return warp_hash_mix64(bits.u ^ UINT64_C(0x6a09e667f3bcc908));
}

WARP_FN warp_uint64
warp_hash_numeric(WarpNumeric n)
{
	WarpNumeric c = warp_numeric_normalize(n);
	warp_uint64 lo = (warp_uint64) (warp_uint128) c.value;
	warp_uint64 hi = (warp_uint64) ((warp_uint128) c.value >> 64);

	return warp_hash_combine(warp_hash_mix64(lo ^ ((warp_uint64) c.scale << 56)),
							 warp_hash_mix64(hi ^ UINT64_C(0xbb67ae8584caa73b)));
}

/*
 * Bytes (text, bytea).  Words are assembled from single bytes, which is
 * endian-independent and safe for unaligned data on the device.
 */
WARP_FN warp_uint64
warp_hash_bytes(const warp_uint8 *p, warp_int32 len)
{
	warp_uint64 h = WARP_HASH_SEED ^ ((warp_uint64) (warp_uint32) len * UINT64_C(0x87c37b91114253d5));
	warp_int32	i = 0;

	for (; i + 8 <= len; i += 8)
	{
		warp_uint64 w = 0;
		int			k;

		for (k = 7; k >= 0; k--)
			w = (w << 8) | p[i + k];
		h = warp_hash_mix64(h ^ w) * UINT64_C(0x9fb21c651e98df25);
	}
	if (i < len)
	{
		warp_uint64 w = 0;
		warp_int32	k;

		for (k = len - 1; k >= i; k--)
			w = (w << 8) | p[k];
		h = warp_hash_mix64(h ^ w ^ UINT64_C(0x3c6ef372fe94f82b));
	}
	return warp_hash_mix64(h);
}

/* ---------- LIKE ---------- */

/*
 * text LIKE pattern with the default escape '\', for a UTF-8 database and a
 * deterministic collation: the comparison is byte-wise, '_' consumes one
 * character (a lead byte and its continuation bytes), '%' any run of
 * characters.
 *
 * PostgreSQL's matcher recurses at every '%'; but a '%' that has been
 * passed can absorb any text, so a failure after a later '%' can never be
 * cured by moving an earlier '%' -- PostgreSQL returns "abort" from the
 * inner call in that case.  Hence only the most recent '%' is ever retried,
 * and the loop below keeps just that one restart point.  It explores text
 * positions in the same order as PostgreSQL, so it reaches a malformed
 * escape at the end of the pattern (an error) in exactly the cases
 * PostgreSQL does -- and only then: a pattern ending in '\' is fine if the
 * match fails before getting there.
 *
 * Returns WARP_OK with *match set, or WARP_ERR_LIKE_ESCAPE.
 */
WARP_FN warp_int32
warp_utf8_next_char(const warp_uint8 *t, warp_int32 ti, warp_int32 tlen)
{
	/* one byte, then any continuation bytes (10xxxxxx) */
	ti++;
	while (ti < tlen && (t[ti] & 0xC0) == 0x80)
		ti++;
	return ti;
}

WARP_FN WarpStatus
warp_text_like(const warp_uint8 *t, warp_int32 tlen,
			   const warp_uint8 *p, warp_int32 plen, bool *match)
{
	warp_int32	ti = 0,
				pi = 0;
	warp_int32	star_p = -1;	/* pattern index after the last '%' run */
	warp_int32	star_t = 0;		/* text index at which that run resumes */
	warp_uint8	firstpat = 0;	/* first literal byte after that run */

	*match = false;

	/* '%' alone matches everything, whatever the bytes */
	if (plen == 1 && p[0] == '%')
	{
		*match = true;
		return WARP_OK;
	}

	for (;;)
	{
		bool		failed = false;

		while (ti < tlen && pi < plen)
		{
			if (p[pi] == '\\')
			{
				/* the next pattern byte matches literally, and must exist */
				pi++;
				if (pi >= plen)
					return WARP_ERR_LIKE_ESCAPE;
				if (p[pi] != t[ti])
				{
					failed = true;
					break;
				}
			}
			else if (p[pi] == '%')
			{
				/*
				 * Skip the wildcards after the '%': N '_' and any number of
				 * '%' match any N or more characters.
				 */
				pi++;
				while (pi < plen)
				{
					if (p[pi] == '%')
						pi++;
					else if (p[pi] == '_')
					{
						if (ti >= tlen)
							return WARP_OK; /* abort: no match */
						ti = warp_utf8_next_char(t, ti, tlen);
						pi++;
					}
					else
						break;
				}
				if (pi >= plen)
				{
					*match = true;	/* trailing '%' eats the rest */
					return WARP_OK;
				}
				if (p[pi] == '\\')
				{
					if (pi + 1 >= plen)
						return WARP_ERR_LIKE_ESCAPE;
					firstpat = p[pi + 1];
				}
				else
					firstpat = p[pi];
				/* find the first text position starting with firstpat */
				while (ti < tlen && t[ti] != firstpat)
					ti = warp_utf8_next_char(t, ti, tlen);
				if (ti >= tlen)
					return WARP_OK; /* abort: no match */
				star_p = pi;
				star_t = ti;
				continue;
			}
			else if (p[pi] == '_')
			{
				/* any single character, and there is one */
				ti = warp_utf8_next_char(t, ti, tlen);
				pi++;
				continue;
			}
			else if (p[pi] != t[ti])
			{
				failed = true;
				break;
			}

			/*
			 * Bytes matched.  Advancing by a byte is safe even inside a
			 * multi-byte character: the pattern matched its lead byte too,
			 * and no UTF-8 continuation byte looks like '%', '_' or '\'.
			 */
			ti++;
			pi++;
		}

		if (!failed)
		{
			if (ti < tlen)
				failed = true;	/* pattern used up, text is not */
			else
			{
				/* text used up: the rest of the pattern must be all '%' */
				while (pi < plen && p[pi] == '%')
					pi++;
				*match = (pi >= plen);
				return WARP_OK; /* a match, or an abort */
			}
		}

		/* a plain mismatch: retry the last '%' one character further on */
		if (star_p < 0)
			return WARP_OK;
		ti = warp_utf8_next_char(t, star_t, tlen);
		while (ti < tlen && t[ti] != firstpat)
			ti = warp_utf8_next_char(t, ti, tlen);
		if (ti >= tlen)
			return WARP_OK;
		star_t = ti;
		pi = star_p;
	}
}

#endif							/* WARP_OPS_TEXT_H */
