/*
 * arrow_write.c — ArrowWriter: the Arrow IPC file format on disk.
 *
 * Layout we write:
 *   "ARROW1\0\0"
 *   schema message (no statistics)
 *   per batch: dictionary batches with values new since the last batch
 *              (the first one per field non-delta, later ones deltas), then
 *              the record batch
 *   footer (schema with min_values/max_values, dictionary and batch blocks)
 *   int32 footer length, "ARROW1"
 * Every message is: 0xFFFFFFFF, int32 metadata length, the flatbuffer padded
 * to 8 bytes, then the body; body buffers start at 64-byte boundaries
 * (relative to the body, which itself starts 8-byte aligned).
 *
 * Create mode writes "<path>.tmp.<pid>" and renames it onto <path> at close
 * after fsync, so a failed or killed dump never leaves a half-written file
 * under the real name.  Append mode writes after the old trailer; the old
 * prefix remains a complete Arrow file until the new footer is in place (and
 * the caller, e.g. the FDW, publishes the new length).
 *
 * This file holds the file itself: the output buffer, create, append, close
 * and abort.  The messages are encoded by arrow_write_message.c, the
 * batches flushed by arrow_write_batch.c, the columns built by
 * arrow_builder*.c.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE				/* pwrite, ftruncate, O_CLOEXEC even under -std=c11 */
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arrow_write_int.h"

const ArrowAllocator *
writer_allocator(ArrowWriter *w)
{
	return w->allocator;
}

const char *
writer_path(ArrowWriter *w)
{
	return w->path ? w->path : "(arrow writer)";
}

/* ------------------------------------------------------------ output */

static int
io_error(ArrowWriter *w, const char *what, int e, ArrowError *err)
{
	w->failed = true;
	arrow_error(err, ARROW_ERR_IO, w->pos, "%s: %s: %s", writer_path(w), what,
				strerror(e));
	err->errno_saved = e;
	return -1;
}

static int
pwrite_all(ArrowWriter *w, const uint8_t *p, size_t len, int64_t off,
		   ArrowError *err)
{
	while (len > 0)
	{
		ssize_t		n = pwrite(w->fd, p, len > ((size_t) 1 << 30) ? ((size_t) 1 << 30) : len,
							   (off_t) off);

		if (n < 0)
		{
			if (errno == EINTR)
				continue;
			return io_error(w, "could not write", errno, err);
		}
		if (n == 0)
			return io_error(w, "could not write", ENOSPC, err);
		p += n;
		len -= (size_t) n;
		off += n;
	}
	return 0;
}

int
out_flush(ArrowWriter *w, ArrowError *err)
{
	if (w->out.len == 0)
		return 0;
	if (pwrite_all(w, w->out.data, w->out.len, w->pos - (int64_t) w->out.len, err) < 0)
		return -1;
	w->out.len = 0;
	return 0;
}

int
out_write(ArrowWriter *w, const void *p, size_t len, ArrowError *err)
{
	if (len == 0)
		return 0;
	if (len >= OUT_BUF_SIZE / 4)
	{
		/* big buffers go straight to the file */
		if (out_flush(w, err) < 0)
			return -1;
		if (pwrite_all(w, p, len, w->pos, err) < 0)
			return -1;
		w->pos += (int64_t) len;
		return 0;
	}
	if (w->out.len + len > OUT_BUF_SIZE && out_flush(w, err) < 0)
		return -1;
	if (w->out.cap < OUT_BUF_SIZE && wbuf_reserve(w, &w->out, OUT_BUF_SIZE - w->out.len, err) < 0)
	{
		w->failed = true;
		return -1;
	}
	memcpy(w->out.data + w->out.len, p, len);
	w->out.len += len;
	w->pos += (int64_t) len;
	return 0;
}

int
out_zeros(ArrowWriter *w, size_t n, ArrowError *err)
{
	static const uint8_t zeros[BODY_ALIGN];

	while (n > 0)
	{
		size_t		k = n > sizeof(zeros) ? sizeof(zeros) : n;

		if (out_write(w, zeros, k, err) < 0)
			return -1;
		n -= k;
	}
	return 0;
}

int
push_block(ArrowWriter *w, WBuf *list, const ArrowBlock *blk, ArrowError *err)
{
	if (list->len / sizeof(ArrowBlock) >= INT32_MAX - 1)
		return arrow_error(err, ARROW_ERR_INVALID, -1, "%s: too many batches",
						   writer_path(w));
	if (wbuf_reserve(w, list, sizeof(ArrowBlock), err) < 0)
		return -1;
	memcpy(list->data + list->len, blk, sizeof(ArrowBlock));
	list->len += sizeof(ArrowBlock);
	return 0;
}

/* ------------------------------------------------------------ create */

static void
strip_stats_metadata(ArrowField *f)
{
	int			i,
				k = 0;

	for (i = 0; i < f->n_metadata; i++)
	{
		if (strcmp(f->metadata[i].key, "min_values") == 0 ||
			strcmp(f->metadata[i].key, "max_values") == 0)
			continue;
		f->metadata[k++] = f->metadata[i];
	}
	f->n_metadata = k;
}

static int
collect_dict_fields(ArrowField *f, ArrowField **out, int n, int max)
{
	int			i;

	if (f->has_dict)
	{
		if (n < max)
			out[n] = f;
		n++;
	}
	for (i = 0; i < f->n_children; i++)
		n = collect_dict_fields(&f->children[i], out, n, max);
	return n;
}

/*
 * Fill in what callers may leave zero: a dictionary's index type (int32),
 * Time's bit width (from the unit), Decimal's bit width (128).  Applied to
 * the writer's copy and to a schema compared against a file's.
 */
static void
normalize_field(ArrowField *f)
{
	int			i;

	if (f->has_dict && (f->dict.index_type.id != ARROW_TYPE_INT ||
						f->dict.index_type.bit_width == 0))
	{
		memset(&f->dict.index_type, 0, sizeof(f->dict.index_type));
		f->dict.index_type.id = ARROW_TYPE_INT;
		f->dict.index_type.bit_width = 32;
		f->dict.index_type.is_signed = true;
	}
	if (f->type.id == ARROW_TYPE_TIME && f->type.bit_width == 0)
		f->type.bit_width = f->type.unit <= ARROW_TIME_MILLISECOND ? 32 : 64;
	if (f->type.id == ARROW_TYPE_DECIMAL && f->type.bit_width == 0)
		f->type.bit_width = 128;
	/* string views are read as (and so written as) LargeUtf8/LargeBinary */
	f->type.view = false;
	f->type.list_view = false;	/* list views: written as lists */
	for (i = 0; i < f->n_children; i++)
		normalize_field(&f->children[i]);
}

static void
normalize_schema(ArrowSchema *s)
{
	int			i;

	for (i = 0; i < s->n_fields; i++)
		normalize_field(&s->fields[i]);
}

static void
writer_free(ArrowWriter *w)
{
	const ArrowAllocator *al = w->allocator;
	int			i;

	if (w->cols)
		for (i = 0; i < w->schema.n_fields; i++)
			builder_free(w->cols[i]);
	if (w->stat_min)
		for (i = 0; i < w->schema.n_fields; i++)
		{
			wbuf_free(w, &w->stat_min[i]);
			wbuf_free(w, &w->stat_max[i]);
		}
	wbuf_free(w, &w->out);
	wbuf_free(w, &w->batch_blocks);
	wbuf_free(w, &w->dict_blocks);
	wbuf_free(w, &w->scratch);
	fb_free(&w->fb);
	if (w->fd >= 0)
		close(w->fd);
	arrow_arena_free_all(&w->arena);
	al->free(al->ctx, w);
}

/*
 * Common set-up: copy the schema, create builders and statistics state,
 * size the node/buffer arrays.
 */
static int
writer_init(ArrowWriter **wp, const char *path, const ArrowSchema *schema,
			const ArrowWriterOptions *opts, ArrowError *err)
{
	const ArrowAllocator *al = opts && opts->allocator ? opts->allocator : &arrow_malloc_allocator;
	ArrowWriter *w;
	ArrowField **dfields = NULL;
	int			n_df;
	int			i,
				j;
	int			n_nodes = 0,
				n_bufs = 0;

	*wp = NULL;
	w = al->alloc(al->ctx, sizeof(ArrowWriter));
	if (w == NULL)
		return arrow_error(err, ARROW_ERR_NOMEM, -1, "%s: out of memory", path);
	memset(w, 0, sizeof(*w));
	w->allocator = al;
	w->fd = -1;
	arrow_arena_init(&w->arena, al);
	fb_init(&w->fb, al);
	if (opts)
		w->opts = *opts;
	else
		w->opts.codec = ARROW_CODEC_NONE;
	if (w->opts.batch_rows <= 0)
		w->opts.batch_rows = ARROW_DEFAULT_BATCH_ROWS;
	if (w->opts.max_buffer_bytes <= 0)
		w->opts.max_buffer_bytes = ARROW_DEFAULT_MAX_BUFFER_BYTES;
	if (w->opts.max_buffer_bytes > INT64_MAX / 16)
		w->opts.max_buffer_bytes = INT64_MAX / 16;
	*wp = w;
	w->path = arrow_arena_strdup(&w->arena, path, err);
	if (w->path == NULL)
		return -1;
	if (w->opts.codec != ARROW_CODEC_NONE && w->opts.codec != ARROW_CODEC_LZ4_FRAME &&
		w->opts.codec != ARROW_CODEC_ZSTD)
		return arrow_error(err, ARROW_ERR_INVALID, -1, "%s: unknown compression codec %d",
						   path, (int) w->opts.codec);
	if (arrow_schema_copy(&w->arena, &w->schema, schema, err) < 0)
		return -1;

	normalize_schema(&w->schema);

	/* dictionaries: ids must be unique */
	n_df = 0;
	for (i = 0; i < w->schema.n_fields; i++)
		n_df = collect_dict_fields(&w->schema.fields[i], NULL, n_df, 0);
	if (n_df > 0)
	{
		bool		dup = false;

		dfields = arrow_arena_alloc(&w->arena, sizeof(ArrowField *) * (size_t) n_df, err);
		if (dfields == NULL)
			return -1;
		n_df = 0;
		for (i = 0; i < w->schema.n_fields; i++)
			n_df = collect_dict_fields(&w->schema.fields[i], dfields, n_df, INT32_MAX);
		for (i = 0; i < n_df; i++)
		{
			for (j = 0; j < i; j++)
				if (dfields[j]->dict.id == dfields[i]->dict.id)
					dup = true;
		}
		if (dup)
			for (i = 0; i < n_df; i++)
				dfields[i]->dict.id = i;
	}

	for (i = 0; i < w->schema.n_fields; i++)
		strip_stats_metadata(&w->schema.fields[i]);

	w->cols = arrow_arena_alloc(&w->arena, sizeof(ArrowBuilder *) * (size_t) (w->schema.n_fields + 1), err);
	if (w->cols == NULL)
		return -1;
	for (i = 0; i < w->schema.n_fields; i++)
	{
		w->cols[i] = builder_create(w, &w->schema.fields[i], i, &w->arena, err);
		if (w->cols[i] == NULL)
			return -1;
		if (w->opts.no_statistics)
			w->cols[i]->stat_kind = STAT_NONE;
		builder_count(w->cols[i], &n_nodes, &n_bufs);
	}
	/* builder_create normalised some type fields; now compute the layout */
	if (arrow_schema_layout(&w->schema, err) < 0)
		return -1;

	w->n_dicts = 0;
	for (i = 0; i < w->schema.n_fields; i++)
		w->n_dicts += builder_dicts(w->cols[i], NULL, 0);
	if (w->n_dicts)
	{
		w->dicts = arrow_arena_alloc(&w->arena, sizeof(ArrowDict *) * (size_t) w->n_dicts, err);
		if (w->dicts == NULL)
			return -1;
		j = 0;
		for (i = 0; i < w->schema.n_fields; i++)
			j += builder_dicts(w->cols[i], w->dicts + j, w->n_dicts - j);
	}
	/* a dictionary batch has one node and at most 3 buffers */
	w->max_nodes = n_nodes + 1;
	w->max_bufs = n_bufs + 3;
	w->nodes = arrow_arena_alloc(&w->arena, sizeof(ArrowFieldNode) * (size_t) w->max_nodes, err);
	w->bufs = arrow_arena_alloc(&w->arena, sizeof(BodyBuf) * (size_t) w->max_bufs, err);
	w->buf_offsets = arrow_arena_alloc(&w->arena, sizeof(int64_t) * (size_t) w->max_bufs, err);
	if (!w->nodes || !w->bufs || !w->buf_offsets)
		return -1;

	if (!w->opts.no_statistics)
	{
		w->stat_min = arrow_arena_alloc(&w->arena, sizeof(WBuf) * (size_t) (w->schema.n_fields + 1), err);
		w->stat_max = arrow_arena_alloc(&w->arena, sizeof(WBuf) * (size_t) (w->schema.n_fields + 1), err);
		if (!w->stat_min || !w->stat_max)
			return -1;
		for (i = 0; i < w->schema.n_fields; i++)
		{
			if (w->cols[i]->stat_kind == STAT_NONE)
				continue;
			if (wbuf_puts(w, &w->stat_min[i], "", err) < 0 ||
				wbuf_puts(w, &w->stat_max[i], "", err) < 0)
				return -1;
		}
	}
	return 0;
}

int
arrow_writer_create(ArrowWriter **wp, const char *path,
					const ArrowSchema *schema, bool overwrite,
					const ArrowWriterOptions *opts, ArrowError *err)
{
	ArrowWriter *w;
	struct stat st;
	size_t		tlen;
	static const uint8_t magic[8] = {'A', 'R', 'R', 'O', 'W', '1', 0, 0};

	*wp = NULL;
	if (writer_init(&w, path, schema, opts, err) < 0)
		goto fail;
	w->overwrite = overwrite;
	if (!overwrite && lstat(path, &st) == 0)
	{
		arrow_error(err, ARROW_ERR_IO, -1, "%s: file already exists", path);
		err->errno_saved = EEXIST;
		goto fail;
	}
	tlen = strlen(path) + 32;
	w->tmp_path = arrow_arena_alloc(&w->arena, tlen, err);
	if (w->tmp_path == NULL)
		goto fail;
	snprintf(w->tmp_path, tlen, "%s.tmp.%ld", path, (long) getpid());
	w->fd = open(w->tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0)
	{
		int			e = errno;

		arrow_error(err, ARROW_ERR_IO, -1, "%s: could not create %s: %s", path,
					w->tmp_path, strerror(e));
		err->errno_saved = e;
		w->tmp_path = NULL;		/* nothing to unlink */
		goto fail;
	}
	if ((!w->opts.stream && out_write(w, magic, 8, err) < 0) ||
		write_schema_message(w, err) < 0)
		goto fail;
	*wp = w;
	return 0;

fail:
	if (w)
		arrow_writer_abort(w);
	return -1;
}

/* ------------------------------------------------------------ append */

/* Seed dictionaries of builder b from the loaded array a (same field tree). */
static int
seed_dicts(ArrowBuilder *b, const ArrowArray *a, ArrowError *err)
{
	int			i;

	if (b->dict)
	{
		if (a->dictionary == NULL)
			return arrow_error(err, ARROW_ERR_CORRUPT, -1,
							   "%s: column \"%s\": no dictionary in the file",
							   writer_path(b->w), b->field->name);
		return dict_seed(b, a->dictionary, err);
	}
	for (i = 0; i < b->n_children && i < a->n_children; i++)
		if (seed_dicts(b->children[i], &a->children[i], err) < 0)
			return -1;
	return 0;
}

/*
 * Open the file at path for appending: check keep_length (the committed
 * length, or -1) against it, find the end of its last complete footer (*L)
 * and cut off anything after it.  Returns the descriptor, or -1.
 */
static int
open_for_append(const char *path, int64_t keep_length, int64_t *Lp,
				ArrowError *err)
{
	int			fd;
	struct stat st;
	ArrowSource src;
	int64_t		L;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
	{
		int			e = errno;

		arrow_error(err, ARROW_ERR_IO, -1, "%s: could not open for append: %s",
					path, strerror(e));
		err->errno_saved = e;
		return -1;
	}
	if (fstat(fd, &st) < 0)
	{
		int			e = errno;

		arrow_error(err, ARROW_ERR_IO, -1, "%s: could not stat: %s", path, strerror(e));
		err->errno_saved = e;
		close(fd);
		return -1;
	}
	if (keep_length >= 0 && keep_length > (int64_t) st.st_size)
	{
		arrow_error(err, ARROW_ERR_INVALID, -1,
					"%s: committed length %lld is beyond the end of the file (%lld bytes)",
					path, (long long) keep_length, (long long) st.st_size);
		close(fd);
		return -1;
	}
	if (arrow_source_fd(&src, fd, path, keep_length, err) < 0 ||
		arrow_find_last_footer(&src, &L, err) < 0)
	{
		close(fd);
		return -1;
	}
	if (keep_length >= 0 && L != keep_length)
	{
		arrow_error(err, ARROW_ERR_CORRUPT, keep_length,
					"%s: committed length %lld is not the end of a complete Arrow file (last footer ends at %lld)",
					path, (long long) keep_length, (long long) L);
		close(fd);
		return -1;
	}
	/* cut off the tail of an interrupted (or aborted) append */
	if (L < (int64_t) st.st_size)
	{
		if (ftruncate(fd, (off_t) L) < 0 || fsync(fd) < 0)
		{
			int			e = errno;

			arrow_error(err, ARROW_ERR_IO, L, "%s: could not truncate to %lld: %s",
						path, (long long) L, strerror(e));
			err->errno_saved = e;
			close(fd);
			return -1;
		}
	}
	*Lp = L;
	return fd;
}

/*
 * Keep the blocks of the file's batches (and, if it has any, of its
 * dictionaries) for the new footer, and seed the dictionaries from those of
 * its last batch.
 */
static int
keep_old_batches(ArrowWriter *w, ArrowFile *file, ArrowArena *tmp,
				 ArrowError *err)
{
	int			i;

	/* keep the old blocks; old dictionaries only matter with old batches */
	for (i = 0; i < file->n_batches; i++)
		if (push_block(w, &w->batch_blocks, &file->batches[i], err) < 0)
			return -1;
	if (file->n_batches > 0)
	{
		for (i = 0; i < file->n_dicts; i++)
			if (push_block(w, &w->dict_blocks, &file->dicts[i], err) < 0)
				return -1;
		if (w->n_dicts > 0)
		{
			ArrowBatchMeta meta;
			int			last = file->n_batches - 1;

			if (arrow_read_batch_meta(file, last, tmp, &meta, err) < 0)
				return -1;
			for (i = 0; i < w->schema.n_fields; i++)
			{
				ArrowArray	arr;

				if (builder_dicts(w->cols[i], NULL, 0) == 0)
					continue;
				if (arrow_load_column(file, last, &meta, i, tmp, &arr, err) < 0 ||
					seed_dicts(w->cols[i], &arr, err) < 0)
					return -1;
			}
		}
	}
	return 0;
}

static int
keep_old_stats(ArrowWriter *w, ArrowFile *file, ArrowError *err)
{
	int			i;

	/* statistics of the old batches, or empty ("unknown") entries */
	if (w->stat_min && file->n_batches > 0)
	{
		for (i = 0; i < w->schema.n_fields; i++)
		{
			const char *mn,
					   *mx;
			int64_t		k;

			if (w->cols[i]->stat_kind == STAT_NONE)
				continue;
			mn = arrow_field_metadata(&file->schema.fields[i], "min_values");
			mx = arrow_field_metadata(&file->schema.fields[i], "max_values");
			if (mn && mx && count_entries(mn) == file->n_batches &&
				count_entries(mx) == file->n_batches)
			{
				if (wbuf_puts(w, &w->stat_min[i], mn, err) < 0 ||
					wbuf_puts(w, &w->stat_max[i], mx, err) < 0)
					return -1;
			}
			else
			{
				for (k = 1; k < file->n_batches; k++)
					if (wbuf_puts(w, &w->stat_min[i], ",", err) < 0 ||
						wbuf_puts(w, &w->stat_max[i], ",", err) < 0)
						return -1;
			}
		}
	}
	return 0;
}

int
arrow_writer_append(ArrowWriter **wp, const char *path,
					const ArrowSchema *schema, int64_t keep_length,
					const ArrowWriterOptions *opts, int64_t *old_length,
					ArrowError *err)
{
	ArrowWriter *w = NULL;
	int			fd;
	ArrowSource src;
	int64_t		L;
	ArrowFile	file;
	bool		file_open = false;
	ArrowOpenOptions oo;
	ArrowArena	tmp;
	char		diff[512];

	*wp = NULL;
	if (opts && opts->stream)
	{
		arrow_error(err, ARROW_ERR_INVALID, -1,
					"%s: appending writes the Arrow file format, not a stream", path);
		return -1;
	}
	memset(&oo, 0, sizeof(oo));
	oo.allocator = opts ? opts->allocator : NULL;
	arrow_arena_init(&tmp, oo.allocator ? oo.allocator : &arrow_malloc_allocator);

	fd = open_for_append(path, keep_length, &L, err);
	if (fd < 0)
		return -1;
	if (arrow_source_fd(&src, fd, path, L, err) < 0 ||
		arrow_open(&file, &src, &oo, err) < 0)
	{
		close(fd);
		return -1;
	}
	file_open = true;
	if (file.format != ARROW_FORMAT_FILE)
	{
		arrow_error(err, ARROW_ERR_INVALID, -1,
					"%s: can only append to the Arrow file format, not a stream", path);
		goto fail;
	}
	if (schema)
	{
		ArrowSchema norm;

		if (arrow_schema_copy(&tmp, &norm, schema, err) < 0)
			goto fail;
		normalize_schema(&norm);
		if (arrow_schema_diff(&norm, &file.schema, diff, sizeof(diff)) != NULL)
		{
			arrow_error(err, ARROW_ERR_INVALID, -1,
						"%s: rows to append do not match the file: %s", path, diff);
			goto fail;
		}
	}
	if (writer_init(&w, path, &file.schema, opts, err) < 0)
		goto fail;
	w->append = true;
	w->fd = fd;
	fd = -1;
	w->start_pos = L;
	w->pos = L;
	w->rows_written = 0;

	if (keep_old_batches(w, &file, &tmp, err) < 0 ||
		keep_old_stats(w, &file, err) < 0)
		goto fail;
	w->stat_entries = file.n_batches;

	/* new messages start 8-byte aligned after the old trailer */
	if (out_zeros(w, (size_t) (align_up(L, 8) - L), err) < 0)
		goto fail;

	if (old_length)
		*old_length = L;
	arrow_close(&file);
	arrow_arena_free_all(&tmp);
	*wp = w;
	return 0;

fail:
	if (file_open)
		arrow_close(&file);
	arrow_arena_free_all(&tmp);
	if (w)
	{
		/* nothing written beyond L yet (the buffer is dropped) */
		w->out.len = 0;
		w->pos = w->start_pos;
		arrow_writer_abort(w);
	}
	if (fd >= 0)
		close(fd);
	return -1;
}

/* ------------------------------------------------------------ close */

static int
fsync_dir_of(const char *path)
{
	char	   *dir = strdup(path);
	char	   *slash;
	int			fd;
	int			rc = 0;

	if (dir == NULL)
		return 0;
	slash = strrchr(dir, '/');
	if (slash == NULL)
		strcpy(dir, ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0)
	{
		if (fsync(fd) < 0 && errno != EINVAL)
			rc = -1;
		close(fd);
	}
	free(dir);
	return rc;
}

int
arrow_writer_close(ArrowWriter *w, ArrowError *err)
{
	FbRef		schema,
				dv,
				bv,
				footer;
	const uint8_t *fbdata;
	size_t		fblen;
	int32_t		flen;
	int			n_b,
				n_d,
				i;
	uint8_t    *blocks = NULL;

	if (arrow_writer_flush(w, err) < 0)
		goto fail;
	/* every dictionary must exist for readers, even if never used */
	if (write_dictionaries(w, err) < 0)
		goto fail;
	if (w->opts.stream)
	{
		/* the stream format ends with an end-of-stream marker, no footer */
		static const uint32_t eos[2] = {0xFFFFFFFFu, 0};

		if (out_write(w, eos, sizeof(eos), err) < 0 || out_flush(w, err) < 0)
			goto fail;
		goto written;
	}

	n_b = (int) (w->batch_blocks.len / sizeof(ArrowBlock));
	n_d = (int) (w->dict_blocks.len / sizeof(ArrowBlock));
	blocks = w->allocator->alloc(w->allocator->ctx, 24 * (size_t) (n_b > n_d ? n_b : n_d) + 24);
	if (blocks == NULL)
	{
		arrow_error(err, ARROW_ERR_NOMEM, -1, "%s: out of memory", writer_path(w));
		goto fail;
	}
	fb_reset(&w->fb);
	schema = fb_schema(w, true);
	/* Block: int64 offset, int32 metaDataLength, 4 bytes padding, int64 bodyLength */
	for (i = 0; i < n_d; i++)
	{
		const ArrowBlock *b = &((const ArrowBlock *) w->dict_blocks.data)[i];
		int32_t		pad = 0;

		memcpy(blocks + 24 * i, &b->offset, 8);
		memcpy(blocks + 24 * i + 8, &b->meta_len, 4);
		memcpy(blocks + 24 * i + 12, &pad, 4);
		memcpy(blocks + 24 * i + 16, &b->body_len, 8);
	}
	dv = fb_create_struct_vector(&w->fb, blocks, 24, (size_t) n_d, 8);
	for (i = 0; i < n_b; i++)
	{
		const ArrowBlock *b = &((const ArrowBlock *) w->batch_blocks.data)[i];
		int32_t		pad = 0;

		memcpy(blocks + 24 * i, &b->offset, 8);
		memcpy(blocks + 24 * i + 8, &b->meta_len, 4);
		memcpy(blocks + 24 * i + 12, &pad, 4);
		memcpy(blocks + 24 * i + 16, &b->body_len, 8);
	}
	bv = fb_create_struct_vector(&w->fb, blocks, 24, (size_t) n_b, 8);
	w->allocator->free(w->allocator->ctx, blocks);
	blocks = NULL;
	fb_table_start(&w->fb);
	fb_add_int16(&w->fb, 0, METADATA_V5);
	fb_add_offset(&w->fb, 1, schema);
	fb_add_offset(&w->fb, 2, dv);
	fb_add_offset(&w->fb, 3, bv);
	footer = fb_table_end(&w->fb);
	if (fb_finish(&w->fb, footer, &fbdata, &fblen, err) < 0)
		goto fail;
	if (fblen > INT32_MAX)
	{
		arrow_error(err, ARROW_ERR_INVALID, -1, "%s: footer too large", writer_path(w));
		goto fail;
	}
	flen = (int32_t) fblen;
	if (out_write(w, fbdata, fblen, err) < 0 ||
		out_write(w, &flen, 4, err) < 0 ||
		out_write(w, MAGIC, 6, err) < 0 ||
		out_flush(w, err) < 0)
		goto fail;
written:
	if (!(w->opts.no_sync && !w->append) && fsync(w->fd) < 0)
	{
		io_error(w, "could not fsync", errno, err);
		goto fail;
	}
	if (close(w->fd) < 0)
	{
		w->fd = -1;
		io_error(w, "could not close", errno, err);
		goto fail;
	}
	w->fd = -1;
	if (!w->append)
	{
		if (w->overwrite)
		{
			if (rename(w->tmp_path, w->path) < 0)
			{
				io_error(w, "could not rename the temporary file into place", errno, err);
				goto fail;
			}
		}
		else
		{
			/* link() does not replace a file created meanwhile */
			if (link(w->tmp_path, w->path) < 0)
			{
				int			e = errno;

				if (e == EEXIST)
				{
					arrow_error(err, ARROW_ERR_IO, -1, "%s: file already exists", w->path);
					err->errno_saved = EEXIST;
					goto fail;
				}
				/* file systems without hard links */
				if (access(w->path, F_OK) == 0)
				{
					arrow_error(err, ARROW_ERR_IO, -1, "%s: file already exists", w->path);
					err->errno_saved = EEXIST;
					goto fail;
				}
				if (rename(w->tmp_path, w->path) < 0)
				{
					io_error(w, "could not rename the temporary file into place", errno, err);
					goto fail;
				}
			}
			else
				unlink(w->tmp_path);
		}
		w->tmp_path = NULL;
		if (!w->opts.no_sync && fsync_dir_of(w->path) < 0)
		{
			io_error(w, "could not fsync the directory", errno, err);
			writer_free(w);
			return -1;
		}
	}
	writer_free(w);
	return 0;

fail:
	if (blocks)
		w->allocator->free(w->allocator->ctx, blocks);
	arrow_writer_abort(w);
	return -1;
}

void
arrow_writer_abort(ArrowWriter *w)
{
	if (w == NULL)
		return;
	if (w->append)
	{
		int			fd = w->fd;

		if (fd < 0)
			fd = open(w->path, O_RDWR | O_CLOEXEC);
		if (fd >= 0)
		{
			/* back to the old, complete file */
			if (ftruncate(fd, (off_t) w->start_pos) == 0)
				(void) fsync(fd);
			if (fd != w->fd)
				close(fd);
		}
	}
	else if (w->tmp_path)
		unlink(w->tmp_path);
	writer_free(w);
}

/* ------------------------------------------------------------ accessors */

const ArrowSchema *
arrow_writer_schema(ArrowWriter *w)
{
	return &w->schema;
}

ArrowBuilder *
arrow_writer_column(ArrowWriter *w, int col)
{
	if (col < 0 || col >= w->schema.n_fields)
		return NULL;
	return w->cols[col];
}

int64_t
arrow_writer_rows(const ArrowWriter *w)
{
	return w->rows_written;
}

int64_t
arrow_writer_batches(const ArrowWriter *w)
{
	return w->batches_written;
}

int64_t
arrow_writer_bytes(const ArrowWriter *w)
{
	return w->pos - w->start_pos;
}
