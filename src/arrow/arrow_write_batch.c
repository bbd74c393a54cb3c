/*
 * arrow_write_batch.c — record batches of an ArrowWriter: rows ended and
 * counted, a batch flushed when full (by rows, bytes or 32-bit offsets)
 * through the message writer (arrow_write_message.c), whole batches
 * appended, and the per-column min/max statistics of every batch collected
 * as the comma-separated text the footer carries.
 *
 * The builders (arrow_builder*.c) hold the current batch; arrow_write.c
 * owns the file around the batches.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow_write_int.h"

int
wbuf_puts(ArrowWriter *w, WBuf *b, const char *s, ArrowError *err)
{
	size_t		n = strlen(s);

	/* keep a NUL after the text so the buffer can be used as a string */
	if (wbuf_reserve(w, b, n + 1, err) < 0)
		return -1;
	memcpy(b->data + b->len, s, n + 1);
	b->len += n;
	return 0;
}

static void
int128_to_string(__int128 v, char *buf)
{
	char		tmp[48];
	int			n = 0;
	unsigned __int128 u;
	int			i = 0;

	if (v < 0)
	{
		buf[i++] = '-';
		u = (unsigned __int128) 0 - (unsigned __int128) v;
	}
	else
		u = (unsigned __int128) v;
	do
	{
		tmp[n++] = (char) ('0' + (int) (u % 10));
		u /= 10;
	} while (u);
	while (n > 0)
		buf[i++] = tmp[--n];
	buf[i] = '\0';
}

static void
format_stat(const ArrowBuilder *b, bool is_min, char *buf, size_t len)
{
	if (!b->stat_have)
		buf[0] = '\0';
	else if (b->stat_kind == STAT_FLOAT)
		snprintf(buf, len, "%.17g", is_min ? b->stat_dmin : b->stat_dmax);
	else
		int128_to_string(is_min ? b->stat_imin : b->stat_imax, buf);
}

/* Append this batch's entries to every column's statistics strings. */
static int
stats_add_batch(ArrowWriter *w, ArrowError *err)
{
	int			i;
	char		buf[64];

	if (w->stat_min == NULL)
		return 0;
	for (i = 0; i < w->schema.n_fields; i++)
	{
		ArrowBuilder *b = w->cols[i];

		if (b->stat_kind == STAT_NONE)
			continue;
		if (w->stat_entries > 0 &&
			(wbuf_puts(w, &w->stat_min[i], ",", err) < 0 ||
			 wbuf_puts(w, &w->stat_max[i], ",", err) < 0))
			return -1;
		format_stat(b, true, buf, sizeof(buf));
		if (wbuf_puts(w, &w->stat_min[i], buf, err) < 0)
			return -1;
		format_stat(b, false, buf, sizeof(buf));
		if (wbuf_puts(w, &w->stat_max[i], buf, err) < 0)
			return -1;
	}
	w->stat_entries++;
	return 0;
}

/* Number of comma-separated entries in s. */
int64_t
count_entries(const char *s)
{
	int64_t		n = 1;

	for (; *s; s++)
		if (*s == ',')
			n++;
	return n;
}

/* ------------------------------------------------------------ batches */

static int
check_rows_complete(ArrowWriter *w, int64_t expect, ArrowError *err)
{
	int			i;

	for (i = 0; i < w->schema.n_fields; i++)
	{
		ArrowBuilder *b = w->cols[i];

		if (b->length != expect || b->list_open)
			return arrow_error(err, ARROW_ERR_INVALID, -1,
							   "%s: column \"%s\" has %lld values%s where %lld were expected",
							   writer_path(w), b->field->name, (long long) b->length,
							   b->list_open ? " and an open list" : "",
							   (long long) expect);
	}
	return 0;
}

int
arrow_writer_flush(ArrowWriter *w, ArrowError *err)
{
	int			n_nodes = 0,
				n_bufs = 0;
	int64_t		body_len;
	FbRef		rb;
	ArrowBlock	blk;
	int			i;

	if (w->failed)
		return arrow_error(err, ARROW_ERR_INVALID, -1,
						   "%s: writer failed earlier; abort it", writer_path(w));
	if (check_rows_complete(w, w->rows_buffered, err) < 0)
		return -1;
	if (w->rows_buffered == 0)
		return 0;
	if (write_dictionaries(w, err) < 0)
		return -1;
	for (i = 0; i < w->schema.n_fields; i++)
		builder_collect(w->cols[i], w->nodes, &n_nodes, w->bufs, &n_bufs);
	if (prepare_body(w, w->bufs, n_bufs, w->buf_offsets, &body_len, err) < 0)
		return -1;
	fb_reset(&w->fb);
	rb = fb_record_batch(w, w->rows_buffered, w->nodes, n_nodes, w->bufs,
						 w->buf_offsets, n_bufs);
	if (write_message(w, HEADER_RECORD_BATCH, rb, body_len, w->bufs,
					  w->buf_offsets, n_bufs, &blk, err) < 0 ||
		push_block(w, &w->batch_blocks, &blk, err) < 0 ||
		stats_add_batch(w, err) < 0)
	{
		w->failed = true;
		return -1;
	}
	for (i = 0; i < w->schema.n_fields; i++)
		builder_reset(w->cols[i]);
	w->rows_written += w->rows_buffered;
	w->rows_buffered = 0;
	w->batches_written++;
	/* hand the batch to the kernel: the write buffer only coalesces the
	 * small pieces of one batch */
	return out_flush(w, err);
}

/* Bits a top-level column's fixed-width buffer takes per row (0: none). */
static int64_t
row_bits(const ArrowBuilder *b)
{
	if (b->dict || b->width)
		return (int64_t) b->width * 8;
	if (b->is_bits)
		return 1;
	return 0;
}

/* Would one more row exceed a threshold? */
static bool
batch_full(ArrowWriter *w)
{
	int			i;

	if (w->rows_buffered >= w->opts.batch_rows)
		return true;
	for (i = 0; i < w->schema.n_fields; i++)
	{
		ArrowBuilder *b = w->cols[i];
		int64_t		rb = row_bits(b);

		if (rb && (int64_t) b->values.len * 8 + rb > w->opts.max_buffer_bytes * 8)
			return true;
		if (builder_max_offset32(b) > OFFSET32_FLUSH)
			return true;
	}
	return false;
}

int
arrow_writer_end_row(ArrowWriter *w, ArrowError *err)
{
	if (w->failed)
		return arrow_error(err, ARROW_ERR_INVALID, -1,
						   "%s: writer failed earlier; abort it", writer_path(w));
	if (check_rows_complete(w, w->rows_buffered + 1, err) < 0)
		return -1;
	w->rows_buffered++;
	if (batch_full(w))
		return arrow_writer_flush(w, err);
	return 0;
}

int
arrow_writer_end_rows(ArrowWriter *w, int64_t n, ArrowError *err)
{
	if (w->failed)
		return arrow_error(err, ARROW_ERR_INVALID, -1,
						   "%s: writer failed earlier; abort it", writer_path(w));
	if (n < 0 || n > INT64_MAX - w->rows_buffered)
		return arrow_error(err, ARROW_ERR_INVALID, -1, "%s: bad row count %lld",
						   writer_path(w), (long long) n);
	if (check_rows_complete(w, w->rows_buffered + n, err) < 0)
		return -1;
	w->rows_buffered += n;
	if (n > 0 && batch_full(w))
		return arrow_writer_flush(w, err);
	return 0;
}

int
arrow_writer_append_batch(ArrowWriter *w, const ArrowRecordBatch *rb,
						  int64_t start, int64_t len, ArrowError *err)
{
	int			i;

	if (w->failed)
		return arrow_error(err, ARROW_ERR_INVALID, -1,
						   "%s: writer failed earlier; abort it", writer_path(w));
	if (rb->n_columns != w->schema.n_fields)
		return arrow_error(err, ARROW_ERR_INVALID, -1,
						   "%s: batch has %d columns, the file %d",
						   writer_path(w), rb->n_columns, w->schema.n_fields);
	if (start < 0 || len < 0 || start > rb->length || len > rb->length - start)
		return arrow_error(err, ARROW_ERR_INVALID, -1,
						   "%s: rows [%lld, +%lld) outside a batch of %lld",
						   writer_path(w), (long long) start, (long long) len,
						   (long long) rb->length);
	if (check_rows_complete(w, w->rows_buffered, err) < 0)
		return -1;
	/* type check once, on an empty range */
	for (i = 0; i < rb->n_columns; i++)
		if (arrow_builder_append_array(w->cols[i], &rb->columns[i], start, 0, err) < 0)
			return -1;

	while (len > 0)
	{
		int64_t		n = len;

		if (n > APPEND_CHUNK_ROWS)
			n = APPEND_CHUNK_ROWS;
		if (n > w->opts.batch_rows - w->rows_buffered)
			n = w->opts.batch_rows - w->rows_buffered;
		for (i = 0; i < w->schema.n_fields; i++)
		{
			ArrowBuilder *b = w->cols[i];
			int64_t		bits = row_bits(b);

			if (bits)
			{
				int64_t		room = (w->opts.max_buffer_bytes * 8 - (int64_t) b->values.len * 8) / bits;

				if (room < n)
					n = room;
			}
		}
		if (n <= 0)
		{
			if (w->rows_buffered > 0)
			{
				if (arrow_writer_flush(w, err) < 0)
					return -1;
				continue;
			}
			n = 1;				/* a single row larger than the cap */
		}
		for (i = 0; i < w->schema.n_fields; i++)
			if (arrow_builder_append_array(w->cols[i], &rb->columns[i], start, n, err) < 0)
			{
				w->failed = true;
				return -1;
			}
		w->rows_buffered += n;
		start += n;
		len -= n;
		if (batch_full(w) && arrow_writer_flush(w, err) < 0)
			return -1;
	}
	return 0;
}
