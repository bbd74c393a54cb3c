/*
 * arrow_array_listview.c — ListView and LargeListView columns (what recent
 * pyarrow and other writers produce) read as List and LargeList arrays.
 *
 * A list view gives each row an offset and a size into its child; a list
 * gives offsets only, each row ending where the next begins.  Views laid
 * out one after the other in row order (what a writer produces from list
 * data; null and empty rows may point anywhere) become list offsets
 * directly, and the child is used as it is.  Views out of row order or
 * overlapping would need the child's values gathered into a new child:
 * that is refused (feature_not_supported) with the row named.  Every offset
 * and size is checked against the child's length.
 */
#include <inttypes.h>

#include "arrow_array_internal.h"

static bool
row_valid(const ArrowArray *a, int64_t i)
{
	return a->validity == NULL || (a->validity[i >> 3] >> (i & 7)) & 1;
}

int
load_list_views(LoadCtx *lc, const ArrowField *f, int bi, int depth, ArrowArray *out)
{
	int			w = is_large(f->type.id) ? 8 : 4;
	int64_t		len = out->length,
				need,
				avail,
				child_len,
				end,
				at;				/* the offsets buffer's file offset */
	const uint8_t *offs,
			   *sizes;
	uint8_t    *lo;

	if (!mul_ok(len, w, &need) || len == INT64_MAX)
		return lc_corrupt(lc, -1, "column \"%s\": length %" PRId64 " is too large", f->name, len);
	if (load_buffer(lc, bi + 1, need, &offs, &avail) < 0 ||
		load_buffer(lc, bi + 2, need, &sizes, &avail) < 0 ||
		load_children(lc, f, depth, out) < 0)
		return -1;
	if (out->n_children != 1)
		return lc_corrupt(lc, -1, "column \"%s\": a list view with %d children", f->name,
						  out->n_children);
	child_len = out->children[0].length;
	at = lc->meta->body_offset + lc->meta->buffers[bi + 1].offset;
	if ((lo = arrow_arena_alloc_uninit(lc->arena, (size_t) ((len + 1) * w), lc->err)) == NULL)
		return -1;
	/* lists start where the first non-empty view does */
	end = 0;
	for (int64_t i = 0; i < len; i++)
		if (row_valid(out, i) && offset_entry(sizes, i, w) != 0)
		{
			end = offset_entry(offs, i, w);
			break;
		}
	for (int64_t i = 0; i < len; i++)
	{
		int64_t		o = offset_entry(offs, i, w),
					s = offset_entry(sizes, i, w);

		if (!row_valid(out, i) || s == 0)
			s = 0;				/* null or empty: its offset does not matter */
		else if (o < 0 || s < 0 || o > child_len || s > child_len - o)
			return lc_corrupt(lc, at, "column \"%s\": row %" PRId64 " views %" PRId64
							  " values at %" PRId64 " of a child of %" PRId64 " (offsets buffer "
							  "at offset %" PRId64 ")", f->name, i, s, o, child_len, at);
		else if (o != end)
			return arrow_error(lc->err, ARROW_ERR_UNSUPPORTED, at,
							   "%s: %s: column \"%s\": list view row %" PRId64 " starts at child "
							   "value %" PRId64 ", not where row %" PRId64 " ended (%" PRId64
							   "): list views out of row order or overlapping are not supported "
							   "(offsets buffer at offset %" PRId64 ")",
							   lc->name, lc->label, f->name, i, o, i - 1, end, at);
		/* row i is [end, end + s) */
		if (w == 4)
		{
			int32_t		v = (int32_t) end;

			memcpy(lo + i * 4, &v, 4);
		}
		else
			memcpy(lo + i * 8, &end, 8);
		end += s;
	}
	if (w == 4)
	{
		int32_t		v = (int32_t) end;

		memcpy(lo + len * 4, &v, 4);
	}
	else
		memcpy(lo + len * 8, &end, 8);
	out->offsets = lo;
	return 0;
}
