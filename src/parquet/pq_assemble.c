/*
 * pq_assemble.c — Arrow arrays from a row group's decoded column chunks.
 *
 * Each Arrow field is built from the levels of the leftmost leaf under it
 * (every leaf under a field repeats the field's structure).  An entry
 * (rep r, def d) of that leaf's level stream creates a slot of a field with
 * s list ancestors iff r <= s and d reaches the entry level of the
 * innermost of them; the slot is not null iff d reaches the field's own
 * level.  A list's offsets count the slots its child gets between its own
 * slots.  Leaves take one value from the dense value stream for each slot
 * whose d is the maximum definition level.
 */
#include <inttypes.h>
#include <stdio.h>

#include "pq_internal.h"

#define JULIAN_EPOCH 2440588	/* Julian day of 1970-01-01 */

typedef struct AsmCx
{
	const PqFile *pf;
	const PqLeafData *ld;		/* indexed by leaf - base */
	int			base;
	ArrowArena *arena;
	ArrowError *err;
	char		name[600];
} AsmCx;

/* The slots of field (info) in leaf data L: count, and a byte per slot
 * (1 = not null) unless every slot is valid (*valid NULL). */
static int
scan_slots(AsmCx *cx, const PqNode *info, const PqLeafData *L, int64_t *n_slots,
		   uint8_t **valid, int64_t *nulls)
{
	int64_t		n = 0,
				nn = 0;
	uint8_t    *v = NULL;

	*valid = NULL;
	if (L->rep == NULL && (L->def == NULL || info->slot_def == 0))
		n = L->n_levels;
	else
		for (int64_t i = 0; i < L->n_levels; i++)
			n += (L->rep == NULL || L->rep[i] <= info->seg) &&
				(L->def == NULL || L->def[i] >= info->slot_def);
	if (L->def != NULL && info->nonnull_def > info->slot_def)
	{
		int64_t		k = 0;

		if ((v = arrow_arena_alloc_uninit(cx->arena, (size_t) n + 1, cx->err)) == NULL)
			return -1;
		for (int64_t i = 0; i < L->n_levels; i++)
		{
			if ((L->rep != NULL && L->rep[i] > info->seg) || L->def[i] < info->slot_def)
				continue;
			v[k] = L->def[i] >= info->nonnull_def;
			nn += !v[k];
			k++;
		}
		if (nn == 0)
			v = NULL;
	}
	*n_slots = n;
	*valid = v;
	*nulls = nn;
	return 0;
}

static int
make_validity(AsmCx *cx, ArrowArray *out, const uint8_t *valid, int64_t n, int64_t nulls)
{
	uint8_t    *bm;

	out->null_count = nulls;
	if (valid == NULL)
		return 0;
	if ((bm = arrow_arena_alloc(cx->arena, (size_t) (n + 7) / 8 + 1, cx->err)) == NULL)
		return -1;
	for (int64_t i = 0; i < n; i++)
		bm[i >> 3] |= (uint8_t) (valid[i] << (i & 7));
	out->validity = bm;
	return 0;
}

static int
asm_fail(AsmCx *cx, const char *fmt,...) __attribute__((format(printf, 2, 3)));

static int
asm_fail(AsmCx *cx, const char *fmt,...)
{
	char		detail[512];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	return arrow_error(cx->err, ARROW_ERR_CORRUPT, -1, "%s: %s", cx->name, detail);
}

static int
out_width(const PqLeaf *leaf)
{
	switch (leaf->conv)
	{
		case PQ_CONV_I8:
		case PQ_CONV_U8:
			return 1;
		case PQ_CONV_I16:
		case PQ_CONV_U16:
		case PQ_CONV_HALF:
			return 2;
		case PQ_CONV_COPY4:
			return 4;
		case PQ_CONV_COPY8:
		case PQ_CONV_INT96:
			return 8;
		case PQ_CONV_DEC32:
		case PQ_CONV_DEC64:
		case PQ_CONV_DECBYTES:
		case PQ_CONV_INTERVAL:
			return 16;
		case PQ_CONV_FLBA:
			return leaf->type_length;
		default:
			return 0;
	}
}

/* big-endian two's complement bytes into a little-endian int128 */
static int
dec_bytes(AsmCx *cx, const uint8_t *b, int64_t len, uint8_t *dst)
{
	unsigned __int128 v;
	uint8_t		sign;

	if (len <= 0)
		return asm_fail(cx, "empty decimal value");
	sign = (b[0] & 0x80) ? 0xff : 0;
	for (int64_t i = 0; i + 16 < len; i++)
		if (b[i] != sign)
			return asm_fail(cx, "decimal value wider than 128 bits");
	if (len > 16 && ((b[len - 16] ^ sign) & 0x80))
		return asm_fail(cx, "decimal value wider than 128 bits");
	v = sign ? ~(unsigned __int128) 0 : 0;
	for (int64_t i = len > 16 ? len - 16 : 0; i < len; i++)
		v = (v << 8) | b[i];
	memcpy(dst, &v, 16);
	return 0;
}

/* one fixed-width physical value into its Arrow form */
static int
convert_fixed(AsmCx *cx, const PqLeaf *leaf, const uint8_t *s, uint8_t *d)
{
	int32_t		i32;
	int64_t		i64;

	switch (leaf->conv)
	{
		case PQ_CONV_I8:
		case PQ_CONV_U8:
		case PQ_CONV_I16:
		case PQ_CONV_U16:
			memcpy(&i32, s, 4);
			if ((leaf->conv == PQ_CONV_I8 && (i32 < INT8_MIN || i32 > INT8_MAX)) ||
				(leaf->conv == PQ_CONV_U8 && (i32 < 0 || i32 > UINT8_MAX)) ||
				(leaf->conv == PQ_CONV_I16 && (i32 < INT16_MIN || i32 > INT16_MAX)) ||
				(leaf->conv == PQ_CONV_U16 && (i32 < 0 || i32 > UINT16_MAX)))
				return asm_fail(cx, "value %d out of range of its integer type", i32);
			if (leaf->conv == PQ_CONV_I8 || leaf->conv == PQ_CONV_U8)
				*d = (uint8_t) i32;
			else
			{
				uint16_t	u = (uint16_t) i32;

				memcpy(d, &u, 2);
			}
			return 0;
		case PQ_CONV_INT96:
			{
				int64_t		nanos;
				int32_t		jd;
				int64_t		days_ns;

				memcpy(&nanos, s, 8);
				memcpy(&jd, s + 8, 4);
				if (__builtin_mul_overflow((int64_t) jd - JULIAN_EPOCH, (int64_t) 86400000000000,
										   &days_ns) ||
					__builtin_add_overflow(days_ns, nanos, &i64))
					return asm_fail(cx, "INT96 timestamp out of range");
				memcpy(d, &i64, 8);
				return 0;
			}
		case PQ_CONV_DEC32:
		case PQ_CONV_DEC64:
			{
				__int128	v;

				if (leaf->conv == PQ_CONV_DEC32)
				{
					memcpy(&i32, s, 4);
					v = i32;
				}
				else
				{
					memcpy(&i64, s, 8);
					v = i64;
				}
				memcpy(d, &v, 16);
				return 0;
			}
		case PQ_CONV_DECBYTES:
			return dec_bytes(cx, s, leaf->type_length, d);
		case PQ_CONV_INTERVAL:
			{
				uint32_t	m,
							dd,
							ms;
				int64_t		ns;

				memcpy(&m, s, 4);
				memcpy(&dd, s + 4, 4);
				memcpy(&ms, s + 8, 4);
				i32 = (int32_t) m;
				memcpy(d, &i32, 4);
				i32 = (int32_t) dd;
				memcpy(d + 4, &i32, 4);
				ns = (int64_t) ms * 1000000;
				memcpy(d + 8, &ns, 8);
				return 0;
			}
		default:
			memcpy(d, s, (size_t) out_width(leaf));
			return 0;
	}
}

static int
leaf_bytes(AsmCx *cx, const PqLeaf *leaf, const PqLeafData *L, const uint8_t *valid,
		   int64_t n, ArrowArray *out)
{
	const int64_t *offs = (const int64_t *) L->vals.offs.p;
	int64_t		total = L->vals.data.len;
	int32_t    *o;
	uint8_t    *data;
	int64_t		k = 0,
				pos = 0;

	if (total > INT32_MAX)
		return arrow_error(cx->err, ARROW_ERR_UNSUPPORTED, -1,
						   "%s: more than 2 GiB of values in one row group", cx->name);
	o = arrow_arena_alloc_uninit(cx->arena, sizeof(int32_t) * ((size_t) n + 1), cx->err);
	data = arrow_arena_alloc_uninit(cx->arena, (size_t) total + 1, cx->err);
	if (o == NULL || data == NULL)
		return -1;
	if (total > 0)
		memcpy(data, L->vals.data.p, (size_t) total);
	o[0] = 0;
	for (int64_t i = 0; i < n; i++)
	{
		if (valid == NULL || valid[i])
		{
			if (k >= L->vals.n)
				return asm_fail(cx, "fewer values than non-null levels");
			pos = offs[k++];
		}
		o[i + 1] = (int32_t) pos;
	}
	if (k != L->vals.n)
		return asm_fail(cx, "%" PRId64 " values for %" PRId64 " non-null levels", L->vals.n, k);
	out->offsets = (const uint8_t *) o;
	out->data = data;
	out->data_len = total;
	return 0;
}

static int
leaf_decimal_bytes(AsmCx *cx, const PqLeafData *L, const uint8_t *valid, int64_t n,
				   uint8_t *dst)
{
	const int64_t *offs = (const int64_t *) L->vals.offs.p;
	int64_t		k = 0;

	for (int64_t i = 0; i < n; i++)
	{
		int64_t		start,
					len;

		if (valid != NULL && !valid[i])
			continue;
		if (k >= L->vals.n)
			return asm_fail(cx, "fewer values than non-null levels");
		start = k == 0 ? 0 : offs[k - 1];
		len = offs[k] - start;
		k++;
		if (dec_bytes(cx, L->vals.data.p + start, len, dst + i * 16) < 0)
			return -1;
	}
	return k == L->vals.n ? 0 : asm_fail(cx, "more values than non-null levels");
}

static int
build_leaf(AsmCx *cx, const PqLeaf *leaf, const PqLeafData *L, const uint8_t *valid,
		   int64_t n, ArrowArray *out)
{
	int			w = out_width(leaf),
				pw = L->vals.width;
	uint8_t    *dst;
	int64_t		k = 0;

	if (leaf->conv == PQ_CONV_NULL)
	{
		out->null_count = n;
		return 0;
	}
	if (leaf->conv == PQ_CONV_BYTES)
		return leaf_bytes(cx, leaf, L, valid, n, out);
	if (leaf->conv == PQ_CONV_BOOL)
	{
		if ((dst = arrow_arena_alloc(cx->arena, (size_t) (n + 7) / 8 + 1, cx->err)) == NULL)
			return -1;
		for (int64_t i = 0; i < n; i++)
			if (valid == NULL || valid[i])
			{
				if (k >= L->vals.n)
					return asm_fail(cx, "fewer values than non-null levels");
				dst[i >> 3] |= (uint8_t) ((L->vals.fixed.p[k++] & 1) << (i & 7));
			}
		out->values = dst;
		out->values_len = (n + 7) / 8;
		return k == L->vals.n ? 0 : asm_fail(cx, "more values than non-null levels");
	}
	if ((dst = arrow_arena_alloc(cx->arena, (size_t) n * w + 1, cx->err)) == NULL)
		return -1;
	out->values = dst;
	out->values_len = n * w;
	if (leaf->type == PQ_BYTE_ARRAY)	/* decimal in a BYTE_ARRAY */
		return leaf_decimal_bytes(cx, L, valid, n, dst);
	if (valid == NULL && (leaf->conv == PQ_CONV_COPY4 || leaf->conv == PQ_CONV_COPY8 ||
						  leaf->conv == PQ_CONV_FLBA || leaf->conv == PQ_CONV_HALF))
	{
		if (L->vals.n != n)
			return asm_fail(cx, "%" PRId64 " values for %" PRId64 " rows", L->vals.n, n);
		if (n > 0)
			memcpy(dst, L->vals.fixed.p, (size_t) n * w);
		return 0;
	}
	if (leaf->conv == PQ_CONV_COPY4 || leaf->conv == PQ_CONV_COPY8)
	{
		/* scatter past the nulls (left zero) */
		for (int64_t i = 0; i < n; i++)
			if (valid[i])
			{
				if (k >= L->vals.n)
					return asm_fail(cx, "fewer values than non-null levels");
				if (w == 4)
					memcpy(dst + i * 4, L->vals.fixed.p + k * 4, 4);
				else
					memcpy(dst + i * 8, L->vals.fixed.p + k * 8, 8);
				k++;
			}
		return k == L->vals.n ? 0 : asm_fail(cx, "more values than non-null levels");
	}
	for (int64_t i = 0; i < n; i++)
	{
		if (valid != NULL && !valid[i])
			continue;
		if (k >= L->vals.n)
			return asm_fail(cx, "fewer values than non-null levels");
		if (convert_fixed(cx, leaf, L->vals.fixed.p + k * pw, dst + i * w) < 0)
			return -1;
		k++;
	}
	return k == L->vals.n ? 0 : asm_fail(cx, "more values than non-null levels");
}

static int	build(AsmCx *cx, const ArrowField *f, ArrowArray *out, int64_t expect);

static int
build_list(AsmCx *cx, const ArrowField *f, const PqNode *info, const PqLeafData *L,
		   int64_t n, ArrowArray *out)
{
	int32_t    *o;
	int64_t		k = 0,
				child = 0;
	int			cseg = info->seg + 1;

	if ((o = arrow_arena_alloc_uninit(cx->arena, sizeof(int32_t) * ((size_t) n + 1), cx->err)) == NULL)
		return -1;
	for (int64_t i = 0; i < L->n_levels; i++)
	{
		int			r = L->rep ? L->rep[i] : 0;
		int			d = L->def ? L->def[i] : 0;

		if (r <= info->seg && d >= info->slot_def)
		{
			if (k >= n)
				return asm_fail(cx, "list slots disagree with the levels");
			o[k++] = (int32_t) child;
		}
		if (r <= cseg && d >= info->entry_def)
		{
			if (++child > INT32_MAX)
				return arrow_error(cx->err, ARROW_ERR_UNSUPPORTED, -1,
								   "%s: more than 2^31 list elements in one row group", cx->name);
		}
	}
	if (k != n)
		return asm_fail(cx, "list slots disagree with the levels");
	o[n] = (int32_t) child;
	out->offsets = (const uint8_t *) o;
	out->n_children = 1;
	if ((out->children = arrow_arena_alloc(cx->arena, sizeof(ArrowArray), cx->err)) == NULL)
		return -1;
	return build(cx, &f->children[0], &out->children[0], child);
}

static int
build(AsmCx *cx, const ArrowField *f, ArrowArray *out, int64_t expect)
{
	const PqNode *info = &cx->pf->nodes[f->node_index];
	const PqLeafData *L = &cx->ld[info->leaf - cx->base];
	const PqLeaf *leaf = &cx->pf->leaves[info->leaf];
	int64_t		n,
				nulls;
	uint8_t    *valid;

	memset(out, 0, sizeof(*out));
	out->field = f;
	if (scan_slots(cx, info, L, &n, &valid, &nulls) < 0)
		return -1;
	if (n != expect)
		return asm_fail(cx, "field \"%s\" has %" PRId64 " values, %" PRId64 " expected",
						f->name, n, expect);
	out->length = n;
	if (make_validity(cx, out, valid, n, nulls) < 0)
		return -1;
	switch (f->type.id)
	{
		case ARROW_TYPE_STRUCT:
			out->n_children = f->n_children;
			out->children = arrow_arena_alloc(cx->arena, sizeof(ArrowArray) * ((size_t) f->n_children + 1),
											  cx->err);
			if (out->children == NULL)
				return -1;
			for (int i = 0; i < f->n_children; i++)
				if (build(cx, &f->children[i], &out->children[i], n) < 0)
					return -1;
			return 0;
		case ARROW_TYPE_LIST:
		case ARROW_TYPE_MAP:
			return build_list(cx, f, info, L, n, out);
		default:
			if (leaf->field != f)
				return asm_fail(cx, "schema mismatch at \"%s\"", f->name);
			return build_leaf(cx, leaf, L, valid, n, out);
	}
}

int
pq_assemble(const ArrowFile *file, const PqFile *pf, int rg, int col, const PqLeafData *leaves,
			int64_t rows, ArrowArena *arena, ArrowArray *out, ArrowError *err)
{
	AsmCx		cx;

	cx.pf = pf;
	cx.ld = leaves;
	cx.base = pf->first_leaf[col];
	cx.arena = arena;
	cx.err = err;
	snprintf(cx.name, sizeof(cx.name), "%s: row group %d, column \"%s\"", file->src.name, rg,
			 file->schema.fields[col].name);
	return build(&cx, &file->schema.fields[col], out, rows);
}
