/*
 * fuzz_reader.c — libFuzzer target for the Arrow reader.
 *
 * The input is opened as an Arrow file or stream (mapped, then again through
 * the read callback with tail recovery), every column of every batch is
 * loaded, and every value is touched through the accessors, so that ASan
 * sees any read the load-time validation failed to prevent.  Memory comes
 * from an allocator with a 64 MB per-request limit and a 512 MB total.
 *
 *   make build/fuzz/fuzz_reader
 *   build/fuzz/fuzz_reader -max_total_time=600 -rss_limit_mb=2048 \
 *       test/fuzz/work test/fuzz/corpus
 */
#ifndef FUZZ_READER_C			/* included by the other targets and replay.c */
#define FUZZ_READER_C

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow.h"

#define FUZZ_MAX_ALLOC	(64u << 20)
#define FUZZ_MAX_TOTAL	((size_t) 512 << 20)
/* values touched per array: node lengths of bufferless types (Null, empty
 * structs) are unbounded, and looping over them finds nothing */
#define FUZZ_MAX_ROWS	100000

static size_t live_bytes;
static volatile uint64_t sink;

static void *
fuzz_alloc(void *ctx, size_t size)
{
	size_t	   *p;

	(void) ctx;
	if (size > FUZZ_MAX_TOTAL - live_bytes)
		return NULL;
	p = malloc(size + 16);
	if (p == NULL)
		return NULL;
	p[0] = size;
	live_bytes += size;
	return (uint8_t *) p + 16;
}

static void
fuzz_free(void *ctx, void *ptr)
{
	size_t	   *p;

	(void) ctx;
	if (ptr == NULL)
		return;
	p = (size_t *) ((uint8_t *) ptr - 16);
	live_bytes -= p[0];
	free(p);
}

static const ArrowAllocator fuzz_allocator = {
	fuzz_alloc, fuzz_free, NULL, FUZZ_MAX_ALLOC
};

static void
touch_bytes(const uint8_t *p, int64_t len)
{
	uint64_t	h = 0;
	int64_t		i;

	for (i = 0; i < len; i++)
		h = h * 31 + p[i];
	sink += h;
}

static void touch_value(const ArrowArray *a, int64_t i, int depth);

static void
touch_range(const ArrowArray *a, int64_t lo, int64_t hi, int depth)
{
	int64_t		i;

	if (hi - lo > FUZZ_MAX_ROWS)
		hi = lo + FUZZ_MAX_ROWS;
	for (i = lo; i < hi; i++)
		touch_value(a, i, depth);
}

/* Touch value i of a (and, for nested types, what it contains). */
static void
touch_value(const ArrowArray *a, int64_t i, int depth)
{
	const ArrowField *f = a->field;
	int64_t		len;
	int			c;

	if (depth > ARROW_MAX_NESTING + 2)
		abort();				/* validation should have stopped this */
	if (i < 0 || i >= a->length)
		abort();
	if (arrow_is_null(a, i))
		return;
	if (f->has_dict)
	{
		int64_t		k = arrow_get_dict_index(a, i);

		if (a->dictionary == NULL || k < 0 || k >= a->dictionary->length)
			abort();
		sink += (uint64_t) arrow_get_int(a, i);
		touch_value(a->dictionary, k, depth + 1);
		return;
	}
	switch (f->type.id)
	{
		case ARROW_TYPE_INT:
			sink += arrow_get_uint64(a, i) + (uint64_t) arrow_get_int(a, i);
			break;
		case ARROW_TYPE_FLOAT:
			{
				double		d = arrow_get_double(a, i);

				sink += (uint64_t) (d == d);
				break;
			}
		case ARROW_TYPE_BOOL:
		case ARROW_TYPE_DATE:
		case ARROW_TYPE_TIME:
		case ARROW_TYPE_TIMESTAMP:
		case ARROW_TYPE_DURATION:
			sink += (uint64_t) arrow_get_int(a, i);
			break;
		case ARROW_TYPE_UTF8:
		case ARROW_TYPE_BINARY:
		case ARROW_TYPE_LARGE_UTF8:
		case ARROW_TYPE_LARGE_BINARY:
		case ARROW_TYPE_FIXED_SIZE_BINARY:
		case ARROW_TYPE_DECIMAL:
		case ARROW_TYPE_INTERVAL:
			{
				const uint8_t *p = arrow_get_bytes(a, i, &len);

				if (len < 0)
					abort();
				touch_bytes(p, len);
				break;
			}
		case ARROW_TYPE_LIST:
		case ARROW_TYPE_LARGE_LIST:
		case ARROW_TYPE_MAP:
			{
				int64_t		lo = arrow_offset_at(a, i),
							hi = arrow_offset_at(a, i + 1);

				if (lo < 0 || hi < lo || hi > a->children[0].length)
					abort();
				touch_range(&a->children[0], lo, hi, depth + 1);
				break;
			}
		case ARROW_TYPE_FIXED_SIZE_LIST:
			{
				int64_t		n = f->type.fixed_size;
				int64_t		j = a->offset + i;

				touch_range(&a->children[0], j * n, (j + 1) * n, depth + 1);
				break;
			}
		case ARROW_TYPE_STRUCT:
			for (c = 0; c < a->n_children; c++)
				touch_value(&a->children[c], a->offset + i, depth + 1);
			break;
		default:
			break;
	}
}

static void
touch_array(const ArrowArray *a)
{
	ArrowArray	s;

	touch_range(a, 0, a->length, 1);
	if (a->length >= 2)
	{
		arrow_array_slice(a, 1, a->length - 1, &s);
		if (s.null_count < 0 || s.null_count > s.length)
			abort();
		touch_range(&s, 0, s.length, 1);
	}
}

/* Field names become column names in a catalog: they must be UTF-8. */
static void
check_names(const ArrowField *f, int depth)
{
	int			i;

	if (depth > ARROW_MAX_NESTING + 2 || !arrow_utf8_valid(f->name, strlen(f->name)))
		abort();
	for (i = 0; i < f->n_children; i++)
		check_names(&f->children[i], depth + 1);
}

/* An error must name the source (the FDW reports it to the user as is). */
static void
check_err(const ArrowError *err, const char *what)
{
	if (strstr(err->msg, "fuzz.arrow") == NULL)
	{
		fprintf(stderr, "%s: error without the source name: %s\n", what, err->msg);
		abort();
	}
}

/*
 * What a parallel scan does with a batch: the IS [NOT] NULL shortcut, the
 * split into parts, and range loads of the parts' rows (and of a few small
 * ranges at multiples of 8), each checked against the batch's row count.
 */
static void
touch_parts(ArrowFile *file, int b, const ArrowBatchMeta *meta)
{
	int			fields[64];
	int			nf = file->schema.n_fields < 64 ? file->schema.n_fields : 64;
	int			c,
				part;

	for (c = 0; c < file->schema.n_fields; c++)
	{
		const ArrowField *f = &file->schema.fields[c];

		/* a scan that loads no column takes the batch's length as its row
		 * count: metadata read without an error must agree with the columns */
		if (f->node_index < 0 || f->node_index >= meta->n_nodes ||
			meta->nodes[f->node_index].length != meta->length)
			abort();
	}
	for (c = 0; c < nf; c++)
	{
		fields[c] = c;
		sink += arrow_batch_excludes_nulltest(file, meta, c, true);
		sink += arrow_batch_excludes_nulltest(file, meta, c, false);
	}
	for (part = 0; part < 3; part++)
	{
		int64_t		first,
					nrows;
		bool		split;

		sink += arrow_part_may_have_rows(file, b, part);
		if (!arrow_batch_part(file, b, meta, fields, nf, part, 3, &first, &nrows, &split))
			continue;
		if (first < 0 || nrows < 0 || first + nrows > meta->length)
			abort();
	}
	for (c = 0; c < nf; c++)
	{
		static const int64_t offs[][2] = {{0, -1}, {8, 9}, {0, 1}, {16, -1}};
		int			k;

		if (!arrow_column_range_loadable(file, meta, c))
			continue;
		for (k = 0; k < 4; k++)
		{
			ArrowArena	arena;
			ArrowArray	arr;
			ArrowError	err;
			int64_t		off = offs[k][0],
						len = offs[k][1];

			if (off > meta->length)
				continue;
			if (len < 0 || len > meta->length - off)
				len = meta->length - off;
			arrow_arena_init(&arena, &fuzz_allocator);
			if (arrow_load_column_range(file, b, meta, c, off, len, &arena, &arr, &err) == 0)
			{
				if (arr.length != len)
					abort();
				touch_array(&arr);
			}
			else
				check_err(&err, "arrow_load_column_range");
			arrow_arena_free_all(&arena);
		}
	}
}

static void
read_all(const uint8_t *data, size_t size, bool mapped, bool recover)
{
	ArrowSource src;
	ArrowFile	file;
	ArrowOpenOptions opts;
	ArrowError	err;
	int			b,
				c;

	memset(&opts, 0, sizeof(opts));
	opts.allocator = &fuzz_allocator;
	opts.recover_tail = recover;
	opts.parquet_part_rows = 3;	/* Parquet: cut small row groups with a page index */
	arrow_source_mem(&src, data, size, "fuzz.arrow");
	if (!mapped)
		src.map = NULL;
	if (arrow_open(&file, &src, &opts, &err) < 0)
	{
		check_err(&err, "arrow_open");
		return;
	}

	for (c = 0; c < file.schema.n_fields; c++)
		check_names(&file.schema.fields[c], 1);
	for (c = 0; c < file.schema.n_fields; c++)
	{
		char		buf[512];
		ArrowArena	arena;
		ArrowStatValue *mins,
				   *maxs;

		arrow_type_string(&file.schema.fields[c], buf, sizeof(buf));
		sink += strlen(buf);
		arrow_arena_init(&arena, &fuzz_allocator);
		if (arrow_field_stats(&file, c, &arena, &mins, &maxs))
			sink += mins[0].present + maxs[0].present;
		arrow_arena_free_all(&arena);
	}
	{
		ArrowArena	arena;
		ArrowSchema copy;

		arrow_arena_init(&arena, &fuzz_allocator);
		if (arrow_schema_copy(&arena, &copy, &file.schema, &err) == 0)
			sink += copy.n_nodes;
		arrow_arena_free_all(&arena);
	}

	for (b = 0; b < file.n_batches; b++)
	{
		ArrowArena	arena;
		ArrowBatchMeta meta;

		arrow_arena_init(&arena, &fuzz_allocator);
		if (arrow_read_batch_meta(&file, b, &arena, &meta, &err) < 0)
			check_err(&err, "arrow_read_batch_meta");
		else
		{
			touch_parts(&file, b, &meta);
			for (c = 0; c < file.schema.n_fields; c++)
			{
				ArrowArena	carena;
				ArrowArray	arr;

				arrow_arena_init(&carena, &fuzz_allocator);
				if (arrow_load_column(&file, b, &meta, c, &carena, &arr, &err) == 0)
				{
					if (arr.length != meta.length)
						abort();
					touch_array(&arr);
				}
				else
					check_err(&err, "arrow_load_column");
				arrow_arena_free_all(&carena);
				/* Bloom filters (Parquet) */
				if (arrow_batch_may_contain_int(&file, b, c, b * 3, &err) < 0 ||
					arrow_batch_may_contain_bytes(&file, b, c, "s1", 2, &err) < 0)
				{
					if (strstr(err.msg, "fuzz.arrow") == NULL)
					{
						fprintf(stderr, "error without the source name: %s\n", err.msg);
						abort();
					}
				}
			}
		}
		arrow_arena_free_all(&arena);
	}
	arrow_close(&file);
}

/* fuzz_parquet.c includes this file and calls the entry under its name */
#ifndef FUZZ_ENTRY
#define FUZZ_ENTRY LLVMFuzzerTestOneInput
#endif
int			FUZZ_ENTRY(const uint8_t *data, size_t size);

int
FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	int64_t		len;
	ArrowSource src;
	ArrowError	err;

	read_all(data, size, true, false);
	read_all(data, size, false, true);
	arrow_source_mem(&src, data, size, "fuzz.arrow");
	if (arrow_find_last_footer(&src, &len, &err) == 0 &&
		(len < 0 || (uint64_t) len > size))
		abort();
	if (live_bytes != 0)
	{
		fprintf(stderr, "leak: %zu bytes still allocated\n", live_bytes);
		abort();
	}
	return 0;
}

#endif							/* FUZZ_READER_C */
