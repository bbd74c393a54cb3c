/*
 * cmd_inspect.c — pgwarp inspect FILE [--json]
 *
 * Shows an Arrow file's layout: format, schema (field tree, types,
 * nullability, dictionaries, custom metadata), every record batch (offset,
 * rows, body bytes, codec, per-column bytes, null counts, min/max statistics)
 * and totals.  A file that ends with an interrupted append is shown up to its
 * last complete footer, and the tail is reported.
 */
#include <getopt.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "parquet.h"
#include "pgwarp.h"

static const char *inspect_usage =
"Usage: pgwarp inspect FILE [--json]\n"
"\n"
"Show the schema, record batches and statistics of an Arrow file (IPC file or\n"
"stream format).\n"
"\n"
"Options:\n"
"  --json       print one JSON object instead of the human-readable layout\n"
"  --help       show this help\n";

typedef struct ColumnInfo
{
	int64_t		bytes;
	int64_t		null_count;
} ColumnInfo;

typedef struct BatchInfo
{
	int64_t		offset;
	int64_t		rows;
	int64_t		body_bytes;
	ArrowCodec	codec;
	ColumnInfo *columns;
} BatchInfo;

/* the i-th comma-separated entry of s into buf; false if absent */
static bool
csv_entry(const char *s, int i, char *buf, size_t len)
{
	const char *p = s;
	const char *e;
	size_t		n;

	if (s == NULL)
		return false;
	for (int k = 0; k < i; k++)
	{
		p = strchr(p, ',');
		if (p == NULL)
			return false;
		p++;
	}
	e = strchr(p, ',');
	n = e ? (size_t) (e - p) : strlen(p);
	if (n == 0 || n >= len)
		return false;
	memcpy(buf, p, n);
	buf[n] = '\0';
	return true;
}

static void
index_type_string(const ArrowType *t, char *buf, size_t len)
{
	snprintf(buf, len, "%sint%d", t->is_signed ? "" : "u",
			 t->bit_width ? t->bit_width : 32);
}

static int64_t
floor_div(int64_t a, int64_t b)
{
	int64_t		q = a / b;

	if ((a % b != 0) && ((a < 0) != (b < 0)))
		q--;
	return q;
}

/* A human rendering of a statistics value (raw = the stored text). */
static void
format_stat(const ArrowField *f, const ArrowStatValue *v, const char *raw,
			char *buf, size_t len)
{
	const ArrowType *t = &f->type;

	if (v == NULL || !v->present)
	{
		snprintf(buf, len, "%s", raw);
		return;
	}
	if (t->id == ARROW_TYPE_DECIMAL && !v->is_float)
	{
		char		tmp[200];

		pgw_decimal_str(v->i, t->dec_scale, tmp, sizeof(tmp));
		snprintf(buf, len, "%s", tmp);
	}
	else if ((t->id == ARROW_TYPE_DATE || t->id == ARROW_TYPE_TIMESTAMP) &&
			 !v->is_float && v->i > INT64_MIN / 2 && v->i < INT64_MAX / 2)
	{
		int64_t		x = (int64_t) v->i;
		int64_t		per_sec = 1;
		int64_t		days,
					secs,
					frac,
					y;
		int			m,
					d;

		if (t->id == ARROW_TYPE_DATE && t->unit == ARROW_DATE_DAY)
		{
			pgw_civil_from_days(x, &y, &m, &d);
			snprintf(buf, len, "%04" PRId64 "-%02d-%02d", y, m, d);
			return;
		}
		if (t->id == ARROW_TYPE_DATE)
			per_sec = 1000;
		else
			for (int u = 0; u < t->unit; u++)
				per_sec *= 1000;
		secs = floor_div(x, per_sec);
		frac = x - secs * per_sec;
		days = floor_div(secs, 86400);
		secs -= days * 86400;
		pgw_civil_from_days(days, &y, &m, &d);
		if (t->id == ARROW_TYPE_DATE)
			snprintf(buf, len, "%04" PRId64 "-%02d-%02d", y, m, d);
		else
		{
			int			n = snprintf(buf, len, "%04" PRId64 "-%02d-%02d %02d:%02d:%02d",
									 y, m, d, (int) (secs / 3600),
									 (int) (secs / 60 % 60), (int) (secs % 60));

			if (frac != 0 && n > 0 && (size_t) n < len)
				n += snprintf(buf + n, len - n, ".%0*" PRId64,
							  t->unit == ARROW_TIME_MILLISECOND ? 3 :
							  t->unit == ARROW_TIME_MICROSECOND ? 6 : 9, frac);
			if (t->timezone && n > 0 && (size_t) n < len)
				snprintf(buf + n, len - n, "%s",
						 strcmp(t->timezone, "UTC") == 0 ? "Z" : "");
		}
	}
	else
		snprintf(buf, len, "%s", raw);
}

/* ------------------------------------------------------------ checking */

/*
 * inspect reads no column data, so it checks what the batch headers claim
 * against the schema and the buffer sizes (uncompressed sizes from the
 * 8-byte prefix of compressed buffers): a corrupt file is an error, not a
 * plausible-looking report.
 */
typedef struct CheckCtx
{
	ArrowFile  *file;
	const ArrowBatchMeta *meta;
	int			batch;
	const char *col;
	ArrowError *err;
} CheckCtx;

static int
check_fail(CheckCtx *cx, const char *what)
{
	return arrow_error(cx->err, ARROW_ERR_CORRUPT, -1,
					   "%s: record batch %d, column \"%s\": %s",
					   cx->file->src.name, cx->batch, cx->col, what);
}

/* bytes available in buffer k once decompressed; -1 on error (err set) */
static int64_t
buffer_size(CheckCtx *cx, int k)
{
	const ArrowBufferRef *b = &cx->meta->buffers[k];
	uint8_t		pre[8];
	int64_t		n;
	int			e;

	if (cx->meta->codec == ARROW_CODEC_NONE || b->length == 0)
		return b->length;
	if (b->length < 8)
		return check_fail(cx, "compressed buffer shorter than its length prefix");
	if (cx->file->src.map)
		memcpy(pre, cx->file->src.map + b->offset, 8);
	else if ((e = cx->file->src.read(cx->file->src.ctx, pre, 8, (uint64_t) b->offset)) != 0)
		return arrow_error(cx->err, ARROW_ERR_IO, b->offset, "%s: could not read: %s",
						   cx->file->src.name, strerror(e));
	memcpy(&n, pre, 8);
	if (n == -1)
		return b->length - 8;
	if (n < 0)
		return check_fail(cx, "negative uncompressed buffer length");
	return n;
}

static bool
mul_ok(int64_t a, int64_t b, int64_t *out)
{
	return !__builtin_mul_overflow(a, b, out);
}

/* expected < 0: the length is not implied by the parent (list children) */
static int
check_field(CheckCtx *cx, const ArrowField *f, int64_t expected)
{
	const ArrowFieldNode *node;
	const ArrowType *t = &f->type;
	int64_t		len;
	int64_t		need;
	int64_t		have;
	int			b = f->buffer_index;

	if (f->node_index >= cx->meta->n_nodes ||
		f->buffer_index + f->n_buffers > cx->meta->n_buffers)
		return check_fail(cx, "fewer field nodes or buffers than the schema needs");
	node = &cx->meta->nodes[f->node_index];
	len = node->length;
	if (len < 0 || (expected >= 0 && len != expected))
		return check_fail(cx, "field node length does not match its parent");
	if (node->null_count < 0 || node->null_count > len)
		return check_fail(cx, "null count out of range");
	if (t->id == ARROW_TYPE_DECIMAL && (t->dec_scale > 1000 || t->dec_scale < -1000))
		return check_fail(cx, "decimal scale out of range");
	if (t->id == ARROW_TYPE_NULL)
		return 0;
	/* validity bitmap */
	if (node->null_count > 0 && f->n_buffers > 0)
	{
		if ((have = buffer_size(cx, b)) < 0)
			return -1;
		if (have < (len + 7) / 8)
			return check_fail(cx, "validity bitmap shorter than the length");
	}
	if (f->has_dict || arrow_type_byte_width(t) > 0 || t->id == ARROW_TYPE_BOOL)
	{
		int			w = f->has_dict ? (f->dict.index_type.bit_width > 0 ?
									   f->dict.index_type.bit_width / 8 : 4) :
			arrow_type_byte_width(t);

		if (f->has_dict && w <= 0)
			return check_fail(cx, "bad dictionary index width");
		if (t->id == ARROW_TYPE_BOOL && !f->has_dict)
			need = (len + 7) / 8;
		else if (!mul_ok(len, w, &need))
			return check_fail(cx, "values buffer size overflows");
		if ((have = buffer_size(cx, b + 1)) < 0)
			return -1;
		if (have < need)
			return check_fail(cx, "values buffer shorter than the length");
		if (f->has_dict)
			return 0;
	}
	else if (t->id == ARROW_TYPE_UTF8 || t->id == ARROW_TYPE_BINARY ||
			 t->id == ARROW_TYPE_LARGE_UTF8 || t->id == ARROW_TYPE_LARGE_BINARY ||
			 t->id == ARROW_TYPE_LIST || t->id == ARROW_TYPE_LARGE_LIST ||
			 t->id == ARROW_TYPE_MAP)
	{
		int			w = (t->id == ARROW_TYPE_LARGE_UTF8 || t->id == ARROW_TYPE_LARGE_BINARY ||
						 t->id == ARROW_TYPE_LARGE_LIST) ? 8 : 4;

		if (len > 0)
		{
			if (!mul_ok(len + 1, w, &need))
				return check_fail(cx, "offsets buffer size overflows");
			if ((have = buffer_size(cx, b + 1)) < 0)
				return -1;
			if (have < need)
				return check_fail(cx, "offsets buffer shorter than the length");
		}
	}
	for (int i = 0; i < f->n_children; i++)
	{
		int64_t		child_len = -1;

		if (t->id == ARROW_TYPE_STRUCT)
			child_len = len;
		else if (t->id == ARROW_TYPE_FIXED_SIZE_LIST &&
				 !mul_ok(len, t->fixed_size, &child_len))
			return check_fail(cx, "fixed size list length overflows");
		if (check_field(cx, &f->children[i], child_len) != 0)
			return -1;
	}
	return 0;
}

static int
check_batch(ArrowFile *file, int batch, const ArrowBatchMeta *meta, ArrowError *err)
{
	CheckCtx	cx = {file, meta, batch, "", err};

	if (meta->length < 0)
		return arrow_error(err, ARROW_ERR_CORRUPT, -1, "%s: record batch %d: negative length",
						   file->src.name, batch);
	for (int col = 0; col < file->schema.n_fields; col++)
	{
		cx.col = file->schema.fields[col].name;
		if (check_field(&cx, &file->schema.fields[col], meta->length) != 0)
			return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ JSON */

static void
json_metadata(FILE *f, int n, const ArrowKeyValue *kv)
{
	putc('{', f);
	for (int i = 0; i < n; i++)
	{
		if (i > 0)
			fputs(", ", f);
		pgw_json_cstring(f, kv[i].key ? kv[i].key : "");
		fputs(": ", f);
		pgw_json_cstring(f, kv[i].value ? kv[i].value : "");
	}
	putc('}', f);
}

static void
json_field(FILE *f, const ArrowField *field)
{
	char		tbuf[1024];

	fputs("{\"name\": ", f);
	pgw_json_cstring(f, field->name);
	fputs(", \"type\": ", f);
	pgw_json_cstring(f, arrow_type_string(field, tbuf, sizeof(tbuf)));
	fprintf(f, ", \"nullable\": %s, \"dictionary\": ",
			field->nullable ? "true" : "false");
	if (field->has_dict)
	{
		index_type_string(&field->dict.index_type, tbuf, sizeof(tbuf));
		fprintf(f, "{\"id\": %" PRId64 ", \"index_type\": \"%s\", \"ordered\": %s}",
				field->dict.id, tbuf, field->dict.ordered ? "true" : "false");
	}
	else
		fputs("null", f);
	fputs(", \"metadata\": ", f);
	json_metadata(f, field->n_metadata, field->metadata);
	fputs(", \"children\": [", f);
	for (int i = 0; i < field->n_children; i++)
	{
		if (i > 0)
			fputs(", ", f);
		json_field(f, &field->children[i]);
	}
	fputs("]}", f);
}

/* ----------------------------------------------------------------- human */

static void
human_field(FILE *f, const ArrowField *field, int depth)
{
	char		tbuf[1024];

	fprintf(f, "%*s%s: %s%s", 2 + depth * 2, "",
			field->name[0] ? field->name : "\"\"",
			arrow_type_string(field, tbuf, sizeof(tbuf)),
			field->nullable ? "" : " not null");
	if (field->has_dict)
	{
		index_type_string(&field->dict.index_type, tbuf, sizeof(tbuf));
		fprintf(f, "  [dictionary id %" PRId64 ", indices %s%s]",
				field->dict.id, tbuf, field->dict.ordered ? ", ordered" : "");
	}
	for (int i = 0; i < field->n_metadata; i++)
	{
		const char *k = field->metadata[i].key;

		if (k && (strcmp(k, "min_values") == 0 || strcmp(k, "max_values") == 0))
			continue;
		fprintf(f, "  %s=%s", k ? k : "", field->metadata[i].value ?
				field->metadata[i].value : "");
	}
	if (arrow_field_metadata(field, "min_values"))
		fputs("  (min/max statistics)", f);
	putc('\n', f);
	for (int i = 0; i < field->n_children; i++)
		human_field(f, &field->children[i], depth + 1);
}

/* ------------------------------------------------------------ report */

/* What inspect reports of a file, gathered before anything is printed. */
typedef struct FileReport
{
	const char *path;
	PgwInput   *in;
	const ArrowSchema *schema;
	int			nb;
	int			nf;
	BatchInfo  *batches;
	ArrowStatValue **mins;
	ArrowStatValue **maxs;
	bool	   *has_stats;
	int64_t		total_rows;
	int64_t		total_body;
} FileReport;

/*
 * Read every batch's metadata (checked) and the statistics into r, in
 * arena memory.  Returns 0, or -1 with err set.
 */
static int
gather_report(FileReport *r, ArrowArena *arena, ArrowError *err)
{
	PgwInput   *in = r->in;
	const ArrowSchema *schema = r->schema;
	int			nb = r->nb;
	int			nf = r->nf;
	ArrowArena	batch_arena;

	r->batches = arrow_arena_alloc(arena, sizeof(BatchInfo) * (nb + 1), err);
	r->mins = arrow_arena_alloc(arena, sizeof(ArrowStatValue *) * (nf + 1), err);
	r->maxs = arrow_arena_alloc(arena, sizeof(ArrowStatValue *) * (nf + 1), err);
	r->has_stats = arrow_arena_alloc(arena, sizeof(bool) * (nf + 1), err);
	if (!r->batches || !r->mins || !r->maxs || !r->has_stats)
		return -1;
	for (int col = 0; col < nf; col++)
		r->has_stats[col] = arrow_field_stats(&in->file, col, arena, &r->mins[col],
											  &r->maxs[col]);
	for (int b = 0; b < nb; b++)
	{
		ArrowBatchMeta meta;
		BatchInfo  *bi = &r->batches[b];

		arrow_arena_init(&batch_arena, NULL);
		if (arrow_read_batch_meta(&in->file, b, &batch_arena, &meta, err) != 0)
		{
			arrow_arena_free_all(&batch_arena);
			return -1;
		}
		/* Arrow buffers are checked here; Parquet pages when decoded */
		if (in->file.format != ARROW_FORMAT_PARQUET && check_batch(&in->file, b, &meta, err) != 0)
		{
			arrow_arena_free_all(&batch_arena);
			return -1;
		}
		bi->offset = in->file.batches[b].offset;
		bi->rows = meta.length;
		bi->body_bytes = meta.body_len;
		bi->codec = meta.codec;
		bi->columns = arrow_arena_alloc(arena, sizeof(ColumnInfo) * (nf + 1), err);
		if (bi->columns == NULL)
		{
			arrow_arena_free_all(&batch_arena);
			return -1;
		}
		for (int col = 0; col < nf; col++)
		{
			const ArrowField *fld = &schema->fields[col];
			int64_t		bytes = 0;

			for (int k = fld->buffer_index;
				 k < fld->buffer_index + fld->n_buffers_total && k < meta.n_buffers; k++)
			{
				bytes += meta.buffers[k].length;
				if (in->file.format == ARROW_FORMAT_PARQUET)
					break;		/* every buffer names the (first) column chunk */
			}
			bi->columns[col].bytes = bytes;
			bi->columns[col].null_count =
				fld->node_index < meta.n_nodes ? meta.nodes[fld->node_index].null_count : 0;
		}
		r->total_rows += meta.length;
		r->total_body += meta.body_len;
		arrow_arena_free_all(&batch_arena);
	}
	return 0;
}

/* --json: the report as one JSON object */
static void
print_json(FILE *f, const FileReport *r)
{
	PgwInput   *in = r->in;
	const ArrowSchema *schema = r->schema;
	int			nb = r->nb;
	int			nf = r->nf;

	fputs("{\"file\": ", f);
	pgw_json_cstring(f, r->path);
	fprintf(f, ", \"format\": \"%s\", \"size\": %" PRId64 ", \"schema\": {\"fields\": [",
			in->file.format == ARROW_FORMAT_FILE ? "file" :
			in->file.format == ARROW_FORMAT_PARQUET ? "parquet" : "stream", in->size);
	for (int col = 0; col < nf; col++)
	{
		if (col > 0)
			fputs(", ", f);
		json_field(f, &schema->fields[col]);
	}
	fputs("], \"metadata\": ", f);
	json_metadata(f, schema->n_metadata, schema->metadata);
	fputs("}, \"batches\": [", f);
	for (int b = 0; b < nb; b++)
	{
		BatchInfo  *bi = &r->batches[b];

		if (b > 0)
			fputs(", ", f);
		fprintf(f, "{\"index\": %d, \"offset\": %" PRId64 ", \"rows\": %" PRId64
				", \"body_bytes\": %" PRId64 ", \"compression\": \"%s\", \"columns\": [",
				b, bi->offset, bi->rows, bi->body_bytes, arrow_codec_name(bi->codec));
		for (int col = 0; col < nf; col++)
		{
			const ArrowField *fld = &schema->fields[col];
			char		sbuf[256];

			if (col > 0)
				fputs(", ", f);
			fputs("{\"name\": ", f);
			pgw_json_cstring(f, fld->name);
			fprintf(f, ", \"bytes\": %" PRId64 ", \"null_count\": %" PRId64 ", \"min\": ",
					bi->columns[col].bytes, bi->columns[col].null_count);
			if (r->has_stats[col] && r->mins[col][b].present &&
				csv_entry(arrow_field_metadata(fld, "min_values"), b, sbuf, sizeof(sbuf)))
				pgw_json_cstring(f, sbuf);
			else
				fputs("null", f);
			fputs(", \"max\": ", f);
			if (r->has_stats[col] && r->maxs[col][b].present &&
				csv_entry(arrow_field_metadata(fld, "max_values"), b, sbuf, sizeof(sbuf)))
				pgw_json_cstring(f, sbuf);
			else
				fputs("null", f);
			putc('}', f);
		}
		fputs("]}", f);
	}
	fprintf(f, "], \"rows\": %" PRId64 ", \"incomplete_tail\": ", r->total_rows);
	if (in->incomplete_tail)
		fprintf(f, "{\"valid_length\": %" PRId64 ", \"tail_bytes\": %" PRId64 "}",
				in->valid_length, in->size - in->valid_length);
	else
		fputs("null", f);
	fputs("}\n", f);
}

/* one line per column of batch b: bytes, nulls, min and max */
static void
print_human_batch(FILE *f, const FileReport *r, int b)
{
	const ArrowSchema *schema = r->schema;
	int			nf = r->nf;
	BatchInfo  *bi = &r->batches[b];
	int			w = 4;

	for (int col = 0; col < nf; col++)
	{
		int			l = (int) strlen(schema->fields[col].name);

		if (l > w)
			w = l < 40 ? l : 40;
	}
	fprintf(f, "  batch %d: offset %" PRId64 ", %" PRId64 " rows, body %" PRId64
			" bytes, compression %s\n",
			b, bi->offset, bi->rows, bi->body_bytes, arrow_codec_name(bi->codec));
	for (int col = 0; col < nf; col++)
	{
		const ArrowField *fld = &schema->fields[col];
		char		raw[256],
					h[256];

		fprintf(f, "    %-*s %12" PRId64 " bytes  nulls %" PRId64, w,
				fld->name, bi->columns[col].bytes, bi->columns[col].null_count);
		if (r->has_stats[col] && r->mins[col][b].present &&
			csv_entry(arrow_field_metadata(fld, "min_values"), b, raw, sizeof(raw)))
		{
			format_stat(fld, &r->mins[col][b], raw, h, sizeof(h));
			fprintf(f, "  min %s", h);
		}
		if (r->has_stats[col] && r->maxs[col][b].present &&
			csv_entry(arrow_field_metadata(fld, "max_values"), b, raw, sizeof(raw)))
		{
			format_stat(fld, &r->maxs[col][b], raw, h, sizeof(h));
			fprintf(f, "  max %s", h);
		}
		putc('\n', f);
	}
}

/* the human-readable layout */
static void
print_human(FILE *f, const FileReport *r)
{
	PgwInput   *in = r->in;
	const ArrowSchema *schema = r->schema;
	int			nb = r->nb;
	int			nf = r->nf;

	fprintf(f, "file: %s\n", r->path);
	if (in->file.format == ARROW_FORMAT_PARQUET &&
		parquet_row_groups(&in->file) != in->file.n_batches)
		fprintf(f, "format: parquet (%d row groups as %d batches cut at page boundaries), %"
				PRId64 " bytes\n", parquet_row_groups(&in->file), in->file.n_batches, in->size);
	else
		fprintf(f, "format: %s, %" PRId64 " bytes\n",
				in->file.format == ARROW_FORMAT_FILE ? "file (Arrow IPC file)" :
				in->file.format == ARROW_FORMAT_PARQUET ? "parquet (row groups as batches)" :
				"stream (Arrow IPC stream)", in->size);
	if (in->incomplete_tail)
		fprintf(f, "incomplete tail: %" PRId64 " bytes after offset %" PRId64
				" (interrupted append)\n",
				in->size - in->valid_length, in->valid_length);
	fprintf(f, "schema: %d field%s\n", nf, nf == 1 ? "" : "s");
	for (int col = 0; col < nf; col++)
		human_field(f, &schema->fields[col], 0);
	if (schema->n_metadata > 0)
	{
		fputs("schema metadata:\n", f);
		for (int i = 0; i < schema->n_metadata; i++)
			fprintf(f, "  %s=%s\n", schema->metadata[i].key ? schema->metadata[i].key : "",
					schema->metadata[i].value ? schema->metadata[i].value : "");
	}
	fprintf(f, "record batches: %d\n", nb);
	for (int b = 0; b < nb; b++)
		print_human_batch(f, r, b);
	fprintf(f, "total: %" PRId64 " rows in %d batch%s, %" PRId64 " body bytes\n",
			r->total_rows, nb, nb == 1 ? "" : "es", r->total_body);
}

/* --------------------------------------------------------------- main */

int
cmd_inspect(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}
	};
	bool		json = false;
	const char *path;
	PgwInput	in;
	ArrowArena	arena;
	ArrowError	err;
	FileReport	r;
	int			c;
	FILE	   *f = stdout;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1)
	{
		switch (c)
		{
			case 'j':
				json = true;
				break;
			case 'h':
				fputs(inspect_usage, stdout);
				return 0;
			default:
				return pgw_usage_error("inspect", "unknown option \"%s\"",
									   argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return pgw_usage_error("inspect", "missing FILE");
	if (optind + 1 < argc)
		return pgw_usage_error("inspect", "unexpected argument \"%s\"",
							   argv[optind + 1]);
	path = argv[optind];

	if (pgw_open_input(&in, path, true) != 0)
		return 1;
	memset(&r, 0, sizeof(r));
	r.path = path;
	r.in = &in;
	r.schema = &in.file.schema;
	r.nb = in.file.n_batches;
	r.nf = r.schema->n_fields;

	/* gather everything first, so that an error prints nothing else */
	arrow_arena_init(&arena, NULL);
	memset(&err, 0, sizeof(err));
	if (gather_report(&r, &arena, &err) != 0)
	{
		arrow_arena_free_all(&arena);
		pgw_close_input(&in);
		return pgw_error("%s", err.msg);
	}

	if (json)
		print_json(f, &r);
	else
		print_human(f, &r);
	arrow_arena_free_all(&arena);
	pgw_close_input(&in);
	return 0;
}
