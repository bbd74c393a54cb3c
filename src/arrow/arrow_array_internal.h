/*
 * arrow_array_internal.h — internals shared by the column loaders:
 * arrow_array.c (buffers, offsets, whole columns and batches),
 * arrow_array_listview.c (list views as lists),
 * arrow_array_dict.c (dictionaries), arrow_array_range.c (row ranges and
 * batch parts) and arrow_array_access.c (value accessors).  Not part of the
 * public API.
 */
#ifndef PGWARP_ARROW_ARRAY_INTERNAL_H
#define PGWARP_ARROW_ARRAY_INTERNAL_H

#include <string.h>

#include "arrow_read_internal.h"

/* shared between this layer's files only: not exported from the module */
#pragma GCC visibility push(hidden)

/* Zeros standing in for empty buffers (e.g. the offsets of an empty array,
 * which writers may omit). */
extern const int64_t zero_buffer[8];

typedef struct LoadCtx
{
	ArrowFile  *file;
	const ArrowBatchMeta *meta;
	ArrowArena *arena;
	const char *name;			/* source name */
	char		label[96];		/* "record batch 3" / "dictionary batch 2" */
	int			batch;			/* record batch index (for dictionaries) */
	bool		in_dict;		/* loading dictionary values */
	ArrowError *err;
} LoadCtx;

/* a CORRUPT error naming the source and the batch; returns -1 */
int			lc_corrupt(LoadCtx *lc, int64_t offset, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));

/* a * b into *out, false on overflow (both non-negative) */
static inline bool
mul_ok(int64_t a, int64_t b, int64_t *out)
{
	if (a < 0 || b < 0)
		return false;
	if (a != 0 && b > INT64_MAX / a)
		return false;
	*out = a * b;
	return true;
}

/* Bytes of a bitmap of len bits (no overflow for any len >= 0). */
static inline int64_t
bitmap_bytes(int64_t len)
{
	return len / 8 + ((len & 7) != 0);
}

static inline bool
is_large(ArrowTypeId t)
{
	return t == ARROW_TYPE_LARGE_UTF8 || t == ARROW_TYPE_LARGE_BINARY ||
		t == ARROW_TYPE_LARGE_LIST;
}

/* offset i of an offsets buffer of w-byte (4 or 8) entries */
static inline int64_t
offset_entry(const uint8_t *p, int64_t i, int w)
{
	if (w == 4)
	{
		int32_t		v32;

		memcpy(&v32, p + i * 4, 4);
		return v32;
	}
	else
	{
		int64_t		v;

		memcpy(&v, p + i * 8, 8);
		return v;
	}
}

/* ---- arrow_array.c ---- */
/* uncompressed bytes [off, off+len) of which `need` are used */
int			plain_buffer(LoadCtx *lc, int64_t off, int64_t len, int64_t need,
						 const uint8_t **ptr, int64_t *avail);
/* buffer idx of the batch, of which the array needs `need` bytes */
int			load_buffer(LoadCtx *lc, int idx, int64_t need, const uint8_t **ptr,
						int64_t *avail);
int			load_buffer_ref(LoadCtx *lc, int idx, const ArrowBufferRef *ref, int64_t need,
							const uint8_t **ptr, int64_t *avail);
/* the offsets buffer idx of an array of length len, checked; *last = the
 * final offset */
int			load_offsets(LoadCtx *lc, const ArrowField *f, int idx, int64_t len,
						 ArrowArray *out, int64_t *last);
int			load_field(LoadCtx *lc, const ArrowField *f, int depth,
					   ArrowArray *out);
int			load_children(LoadCtx *lc, const ArrowField *f, int depth, ArrowArray *out);
/* ---- arrow_array_listview.c ---- */
/* a ListView/LargeListView field (ArrowType.list_view) as a List/LargeList */
int			load_list_views(LoadCtx *lc, const ArrowField *f, int bi, int depth,
							ArrowArray *out);
/* the load context of one column of a batch */
void		batch_load_ctx(LoadCtx *lc, ArrowFile *file, int batch,
						   const ArrowBatchMeta *meta, ArrowArena *arena,
						   ArrowError *err);
/* INVALID unless the file has record batch `batch` and column `col` */
int			check_batch_column(const ArrowFile *file, int batch, int col,
							   ArrowError *err);
/* a failed column load, the error given file, batch and column; -1 */
int			column_load_failed(const LoadCtx *lc, const ArrowField *f,
							   ArrowError *err);
/* ---- arrow_array_dict.c ---- */
/* the indices of a loaded dictionary-encoded array, within dict_len */
int			check_indices(LoadCtx *lc, const ArrowField *f, const ArrowArray *a,
						  int64_t dict_len);
/* the dictionary of field f as of record batch lc->batch (cached) */
int			get_dictionary(LoadCtx *lc, const ArrowField *f, ArrowArray **res);

#pragma GCC visibility pop

#endif							/* PGWARP_ARROW_ARRAY_INTERNAL_H */
