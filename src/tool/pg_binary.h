/*
 * pg_binary.h — decoding PostgreSQL's binary wire formats (binary COPY and
 * the types' send functions) for pgwarp dump.  No libpq dependency.
 */
#ifndef PGWARP_PG_BINARY_H
#define PGWARP_PG_BINARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* microseconds / days between 1970-01-01 and 2000-01-01 */
#define PGB_EPOCH_DIFF_DAYS		10957
#define PGB_EPOCH_DIFF_USECS	INT64_C(946684800000000)

static inline uint16_t
pgb_u16(const uint8_t *p)
{
	return (uint16_t) ((p[0] << 8) | p[1]);
}

static inline int16_t
pgb_i16(const uint8_t *p)
{
	return (int16_t) pgb_u16(p);
}

static inline uint32_t
pgb_u32(const uint8_t *p)
{
	return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) |
		((uint32_t) p[2] << 8) | (uint32_t) p[3];
}

static inline int32_t
pgb_i32(const uint8_t *p)
{
	return (int32_t) pgb_u32(p);
}

static inline uint64_t
pgb_u64(const uint8_t *p)
{
	return ((uint64_t) pgb_u32(p) << 32) | pgb_u32(p + 4);
}

static inline int64_t
pgb_i64(const uint8_t *p)
{
	return (int64_t) pgb_u64(p);
}

static inline float
pgb_float4(const uint8_t *p)
{
	uint32_t	u = pgb_u32(p);
	float		f;

	memcpy(&f, &u, 4);
	return f;
}

static inline double
pgb_float8(const uint8_t *p)
{
	uint64_t	u = pgb_u64(p);
	double		d;

	memcpy(&d, &u, 8);
	return d;
}

/* The 11-byte signature of binary COPY. */
extern const uint8_t pgb_copy_signature[11];

/*
 * Parse the binary COPY header at the start of buf.  Returns the header
 * length, 0 if more bytes are needed, or -1 if it is not a valid header
 * (*why set).
 */
int64_t		pgb_copy_header(const uint8_t *buf, size_t len, const char **why);

/*
 * Length of the complete tuple at buf (field count, then length-prefixed
 * fields), 0 if more bytes are needed, -1 if malformed.  The trailer (field
 * count -1) has length 2 and *is_trailer set.
 */
int64_t		pgb_tuple_length(const uint8_t *buf, size_t len, int expected_fields,
							 bool *is_trailer);

/* numeric's sign field */
#define PGB_NUMERIC_POS		0x0000
#define PGB_NUMERIC_NEG		0x4000
#define PGB_NUMERIC_NAN		0xC000
#define PGB_NUMERIC_PINF	0xD000
#define PGB_NUMERIC_NINF	0xF000

typedef enum PgbNumericResult
{
	PGB_NUM_OK = 0,
	PGB_NUM_NAN,
	PGB_NUM_PINF,
	PGB_NUM_NINF,
	PGB_NUM_OVERFLOW,			/* more digits than precision allows */
	PGB_NUM_INEXACT,			/* nonzero digits beyond the scale */
	PGB_NUM_MALFORMED
} PgbNumericResult;

/*
 * Decode numeric's binary format (ndigits, weight, sign, dscale, base-10000
 * digits) into the unscaled integer value * 10^scale, exactly, checking that
 * |result| < 10^precision (precision <= 38).
 */
PgbNumericResult pgb_numeric_to_int128(const uint8_t *p, size_t len,
									   int precision, int scale, __int128 *out);
const char *pgb_numeric_result_str(PgbNumericResult r);

/* numeric typmod -> precision/scale (PostgreSQL 15: scale may be negative);
 * false for typmod -1 (unconstrained) */
bool		pgb_numeric_typmod(int32_t typmod, int *precision, int *scale);

#endif							/* PGWARP_PG_BINARY_H */
