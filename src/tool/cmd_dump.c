/*
 * cmd_dump.c — pgwarp dump: a query or table to an Arrow file.
 *
 *   pgwarp dump -d DSN (-c 'SELECT ...' | -t TABLE) -o OUT [--batch-rows N]
 *               [--compress lz4|zstd] [--append] [--numeric-as-text] [--quiet]
 *
 * The query is described first (dump_schema.c maps its column types), then
 * its rows are streamed with COPY (query) TO STDOUT (FORMAT binary) and
 * decoded straight into the writer's column builders: memory holds only the
 * writer's current batch.  Describe, scale pre-pass and COPY run in one
 * REPEATABLE READ transaction so that they see the same data.
 *
 * A new file is written under a temporary name and renamed when complete;
 * with --append, batches go after the old footer and any failure cuts the
 * file back.  On any error (server error, lost connection, a value Arrow
 * cannot hold) nothing is left under the output name that was not there.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dump.h"
#include "pg_binary.h"

static const char *dump_usage =
"Usage: pgwarp dump [-d DSN] (-c QUERY | -t TABLE) -o OUT [options]\n"
"\n"
"Write the result of a query, or a whole table, to an Arrow IPC file.\n"
"\n"
"Options:\n"
"  -d, --dbname DSN       libpq connection string or URI (default: libpq's\n"
"                         defaults, PGHOST, PGDATABASE, ...)\n"
"  -c, --command QUERY    the SELECT to dump\n"
"  -t, --table TABLE      dump SELECT * FROM TABLE (schema.table accepted;\n"
"                         names are taken literally, double quotes allowed)\n"
"  -o, --output OUT       the Arrow file to write (replaced if it exists)\n"
"  --batch-rows N         rows per record batch (default 1048576; a batch also\n"
"                         ends when a fixed-width buffer reaches 8 MB)\n"
"  --compress CODEC       compress buffers with lz4 or zstd (default: none)\n"
"  --append               append to OUT (created if missing; the schema must\n"
"                         match)\n"
"  --format FORMAT        file (the default: the IPC file format, with\n"
"                         batch statistics in its footer) or stream (the IPC\n"
"                         stream format, which has no footer, so no statistics)\n"
"  --numeric-as-text      write unconstrained numeric (and numeric(p>38))\n"
"                         columns as text instead of Decimal128(38, s)\n"
"  -q, --quiet            no progress on stderr\n"
"  --help                 show this help\n"
"\n"
"Type mapping: bool, int2/4/8, oid (uint32), float4/8, numeric(p<=38,s) as\n"
"Decimal128(p,s), other numeric as Decimal128(38, s) with s the largest scale\n"
"in the data, text types/json/jsonb/enum as utf8, bytea as binary, uuid as\n"
"fixed_size_binary(16), date, time(us), timestamp(us), timestamptz as\n"
"timestamp(us, UTC), interval as month_day_nano, one-dimensional arrays as\n"
"lists, composites as structs, domains as their base type; other types are\n"
"cast to text by the server.  PostGIS geometry columns are GeoArrow:\n"
"geometry(Point[, srid]) as geoarrow.point (struct<x, y>), other geometry as\n"
"geoarrow.wkb (ISO WKB), with the CRS (EPSG:n) in the extension metadata; an\n"
"unconstrained geometry column costs one extra pass (to find its one SRID).\n"
"Every field records metadata pg_type.\n"
"Unconstrained numeric columns cost one extra pass of the query (to find the\n"
"largest scale).  NaN/Infinity numerics, infinite dates and timestamps and\n"
"multi-dimensional arrays are errors naming the column and row.\n";

/* ------------------------------------------------------------ decoding */

typedef struct DumpCtx
{
	const char *colname;
	int64_t		row;			/* 1-based */
	ArrowError	err;
	char		msg[1200];
} DumpCtx;

static int
fail(DumpCtx *cx, const char *fmt,...) __attribute__((format(printf, 2, 3)));

static int
fail(DumpCtx *cx, const char *fmt,...)
{
	va_list		ap;
	char		buf[1100];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	snprintf(cx->msg, sizeof(cx->msg), "column \"%s\", row %" PRId64 ": %s",
			 cx->colname, cx->row, buf);
	return -1;
}

#define CHECK_ARROW(call) \
	do { if ((call) != 0) return fail(cx, "%s", cx->err.msg); } while (0)

#define NEED_LEN(want) \
	do { if (len != (want)) \
			return fail(cx, "malformed %s value (%d bytes)", n->pg_type, (int) len); \
	} while (0)

static int	decode_value(DumpCtx *cx, const PgNode *n, const uint8_t *p, int32_t len);

static int
decode_array(DumpCtx *cx, const PgNode *n, const uint8_t *p, int32_t len)
{
	int32_t		ndim;
	int32_t		nelems;
	size_t		pos;

	if (len < 12)
		return fail(cx, "malformed array value");
	ndim = pgb_i32(p);
	if (ndim == 0)
	{
		CHECK_ARROW(arrow_builder_list_begin(n->builder, &cx->err));
		CHECK_ARROW(arrow_builder_list_end(n->builder, &cx->err));
		return 0;
	}
	if (ndim > 1)
		return fail(cx, "%d-dimensional array: only one-dimensional arrays can be "
					"written as Arrow lists (cast the column to text, or unnest it, "
					"in the query)", ndim);
	if (ndim < 0 || len < 20)
		return fail(cx, "malformed array value");
	nelems = pgb_i32(p + 12);
	if (nelems < 0)
		return fail(cx, "malformed array value");
	pos = 20;
	CHECK_ARROW(arrow_builder_list_begin(n->builder, &cx->err));
	for (int32_t k = 0; k < nelems; k++)
	{
		int32_t		el;

		if ((size_t) len - pos < 4)
			return fail(cx, "malformed array value");
		el = pgb_i32(p + pos);
		pos += 4;
		if (el < -1 || (el > 0 && (size_t) el > (size_t) len - pos))
			return fail(cx, "malformed array value");
		if (decode_value(cx, &n->children[0], el < 0 ? NULL : p + pos, el) != 0)
			return -1;
		if (el > 0)
			pos += el;
	}
	if (pos != (size_t) len)
		return fail(cx, "malformed array value");
	CHECK_ARROW(arrow_builder_list_end(n->builder, &cx->err));
	return 0;
}

static int
decode_record(DumpCtx *cx, const PgNode *n, const uint8_t *p, int32_t len)
{
	int32_t		nf;
	size_t		pos = 4;

	if (len < 4)
		return fail(cx, "malformed composite value");
	nf = pgb_i32(p);
	if (nf != n->n_children)
		return fail(cx, "composite value has %d attributes, type %s has %d",
					nf, n->pg_type, n->n_children);
	for (int i = 0; i < nf; i++)
	{
		int32_t		el;

		if ((size_t) len - pos < 8)
			return fail(cx, "malformed composite value");
		el = pgb_i32(p + pos + 4);
		pos += 8;
		if (el < -1 || (el > 0 && (size_t) el > (size_t) len - pos))
			return fail(cx, "malformed composite value");
		if (decode_value(cx, &n->children[i], el < 0 ? NULL : p + pos, el) != 0)
			return -1;
		if (el > 0)
			pos += el;
	}
	if (pos != (size_t) len)
		return fail(cx, "malformed composite value");
	CHECK_ARROW(arrow_builder_struct_valid(n->builder, &cx->err));
	return 0;
}

static int
decode_value(DumpCtx *cx, const PgNode *n, const uint8_t *p, int32_t len)
{
	ArrowBuilder *b = n->builder;

	if (len < 0)
	{
		CHECK_ARROW(arrow_builder_append_null(b, &cx->err));
		return 0;
	}
	switch (n->kind)
	{
		case PGK_BOOL:
			NEED_LEN(1);
			CHECK_ARROW(arrow_builder_append_bool(b, p[0] != 0, &cx->err));
			break;
		case PGK_INT2:
			NEED_LEN(2);
			CHECK_ARROW(arrow_builder_append_int(b, pgb_i16(p), &cx->err));
			break;
		case PGK_INT4:
			NEED_LEN(4);
			CHECK_ARROW(arrow_builder_append_int(b, pgb_i32(p), &cx->err));
			break;
		case PGK_INT8:
			NEED_LEN(8);
			CHECK_ARROW(arrow_builder_append_int(b, pgb_i64(p), &cx->err));
			break;
		case PGK_OID:
			NEED_LEN(4);
			CHECK_ARROW(arrow_builder_append_int(b, (int64_t) pgb_u32(p), &cx->err));
			break;
		case PGK_FLOAT4:
			NEED_LEN(4);
			CHECK_ARROW(arrow_builder_append_double(b, (double) pgb_float4(p), &cx->err));
			break;
		case PGK_FLOAT8:
			NEED_LEN(8);
			CHECK_ARROW(arrow_builder_append_double(b, pgb_float8(p), &cx->err));
			break;
		case PGK_NUMERIC:
			{
				__int128	v = 0;
				PgbNumericResult r = pgb_numeric_to_int128(p, len, n->precision,
														   n->scale, &v);

				if (r != PGB_NUM_OK)
				{
					if (r == PGB_NUM_NAN || r == PGB_NUM_PINF || r == PGB_NUM_NINF)
						return fail(cx, "numeric %s cannot be written as Arrow "
									"decimal128(%d, %d)%s", pgb_numeric_result_str(r),
									n->precision, n->scale,
									n->scale_from_data ? " (use --numeric-as-text)" :
									" (cast the column to text in the query)");
					if (r == PGB_NUM_MALFORMED)
						return fail(cx, "malformed numeric value");
					return fail(cx, "numeric value does not fit Arrow decimal128(%d, %d): %s%s",
								n->precision, n->scale, pgb_numeric_result_str(r),
								n->scale_from_data ? " (use --numeric-as-text)" : "");
				}
				CHECK_ARROW(arrow_builder_append_decimal(b, (uint64_t) v,
														 (int64_t) (v >> 64), &cx->err));
			}
			break;
		case PGK_TEXT:
			CHECK_ARROW(arrow_builder_append_bytes(b, p, (size_t) len, &cx->err));
			break;
		case PGK_JSONB:
			if (len < 1 || p[0] != 1)
				return fail(cx, "unknown jsonb binary format version");
			CHECK_ARROW(arrow_builder_append_bytes(b, p + 1, (size_t) len - 1, &cx->err));
			break;
		case PGK_BYTEA:
			CHECK_ARROW(arrow_builder_append_bytes(b, p, (size_t) len, &cx->err));
			break;
		case PGK_UUID:
			NEED_LEN(16);
			CHECK_ARROW(arrow_builder_append_bytes(b, p, 16, &cx->err));
			break;
		case PGK_DATE:
			{
				int32_t		d;

				NEED_LEN(4);
				d = pgb_i32(p);
				if (d == INT32_MAX || d == INT32_MIN)
					return fail(cx, "date %sinfinity cannot be written as an Arrow date32",
								d == INT32_MIN ? "-" : "");
				CHECK_ARROW(arrow_builder_append_int(b, (int64_t) d + PGB_EPOCH_DIFF_DAYS,
													 &cx->err));
			}
			break;
		case PGK_TIME:
			NEED_LEN(8);
			CHECK_ARROW(arrow_builder_append_int(b, pgb_i64(p), &cx->err));
			break;
		case PGK_TIMESTAMP:
		case PGK_TIMESTAMPTZ:
			{
				int64_t		us;
				int64_t		v;

				NEED_LEN(8);
				us = pgb_i64(p);
				if (us == INT64_MAX || us == INT64_MIN)
					return fail(cx, "%s %sinfinity cannot be written as an Arrow timestamp",
								n->pg_type, us == INT64_MIN ? "-" : "");
				if (__builtin_add_overflow(us, PGB_EPOCH_DIFF_USECS, &v))
					return fail(cx, "%s value out of the range of an Arrow timestamp",
								n->pg_type);
				CHECK_ARROW(arrow_builder_append_int(b, v, &cx->err));
			}
			break;
		case PGK_INTERVAL:
			{
				int64_t		us;
				int64_t		ns;

				NEED_LEN(16);
				us = pgb_i64(p);
				if (__builtin_mul_overflow(us, (int64_t) 1000, &ns))
					return fail(cx, "interval time part too large for nanoseconds");
				CHECK_ARROW(arrow_builder_append_interval(b, pgb_i32(p + 12),
														  pgb_i32(p + 8), ns,
														  &cx->err));
			}
			break;
		case PGK_ARRAY:
			return decode_array(cx, n, p, len);
		case PGK_COMPOSITE:
			return decode_record(cx, n, p, len);
		case PGK_GEOM_WKB:
			CHECK_ARROW(arrow_builder_append_bytes(b, p, (size_t) len, &cx->err));
			break;
		case PGK_GEOM_POINT:
			{
				double		x,
							y;

				if (!dump_geo_wkb_point(p, len, &x, &y))
					return fail(cx, "a %s value that is not a 2-D point", n->pg_type);
				CHECK_ARROW(arrow_builder_append_double(n->children[0].builder, x, &cx->err));
				CHECK_ARROW(arrow_builder_append_double(n->children[1].builder, y, &cx->err));
				CHECK_ARROW(arrow_builder_struct_valid(b, &cx->err));
				break;
			}
		default:
			return fail(cx, "unsupported type %s", n->pg_type);
	}
	return 0;
}

/* One complete tuple (field count already checked by pgb_tuple_length). */
static int
decode_tuple(DumpCtx *cx, DumpSchema *ds, const uint8_t *p)
{
	size_t		pos = 2;

	for (int c = 0; c < ds->n_columns; c++)
	{
		int32_t		len = pgb_i32(p + pos);

		pos += 4;
		cx->colname = ds->columns[c].name;
		if (decode_value(cx, &ds->columns[c].node, len < 0 ? NULL : p + pos, len) != 0)
			return -1;
		if (len > 0)
			pos += len;
	}
	return 0;
}

/* ------------------------------------------------------------ progress */

typedef struct Progress
{
	bool		enabled;
	bool		tty;
	bool		shown;
	double		start;
	double		last;
} Progress;

static void
progress_report(Progress *pr, int64_t bytes, int64_t rows, bool final)
{
	double		now = pgw_now();
	double		el = now - pr->start;
	double		rate;

	if (!pr->enabled)
		return;
	if (!final)
	{
		if (el < 1.0)
			return;
		if (pr->shown && now - pr->last < (pr->tty ? 0.25 : 5.0))
			return;
	}
	else if (!pr->shown)
		return;
	rate = el > 0 ? rows / el : 0;
	fprintf(stderr, "%spgwarp: %" PRId64 " rows, %.1f MB written, %.0f rows/s%s%s",
			pr->tty ? "\r" : "", rows, bytes / 1e6, rate,
			final ? ", done" : "", pr->tty && !final ? "\033[K" : "\n");
	fflush(stderr);
	pr->shown = true;
	pr->last = now;
}

/* ------------------------------------------------------------- helpers */

/*
 * -t NAME: "table", "schema.table"; parts in double quotes may contain dots
 * and "" for a quote.  Unquoted parts are taken literally (case kept), as
 * quote_ident would quote them.
 */
static char *
table_query(PGconn *conn, const char *name)
{
	char	   *out = malloc(strlen(name) * 2 + 64);
	char	   *part = malloc(strlen(name) + 1);
	const char *p = name;
	int			nparts = 0;

	if (out == NULL || part == NULL)
		return NULL;
	strcpy(out, "SELECT * FROM ");
	while (1)
	{
		size_t		n = 0;
		char	   *q;

		if (*p == '"')
		{
			p++;
			while (*p)
			{
				if (*p == '"' && p[1] == '"')
				{
					part[n++] = '"';
					p += 2;
				}
				else if (*p == '"')
					break;
				else
					part[n++] = *p++;
			}
			if (*p != '"')
				goto bad;
			p++;
		}
		else
		{
			while (*p && *p != '.')
				part[n++] = *p++;
		}
		part[n] = '\0';
		if (n == 0 || (*p != '\0' && *p != '.') || ++nparts > 3)
			goto bad;
		q = PQescapeIdentifier(conn, part, n);
		if (q == NULL)
			goto bad;
		if (nparts > 1)
			strcat(out, ".");
		out = realloc(out, strlen(out) + strlen(q) + strlen(p) * 2 + 8);
		strcat(out, q);
		PQfreemem(q);
		if (*p == '\0')
			break;
		p++;
	}
	free(part);
	return out;
bad:
	free(part);
	free(out);
	return NULL;
}

static char *
clean_query(const char *q)
{
	char	   *s = strdup(q);
	size_t		n;

	if (s == NULL)
		return NULL;
	n = strlen(s);
	while (n > 0 && (s[n - 1] == ';' || s[n - 1] == ' ' || s[n - 1] == '\t' ||
					 s[n - 1] == '\n' || s[n - 1] == '\r'))
		s[--n] = '\0';
	return s;
}

/* With --append: an unconstrained numeric column keeps the file's scale. */
static void
adopt_file_scales(DumpSchema *ds, const char *path)
{
	PgwInput	in;

	if (pgw_open_input(&in, path, true) != 0)
		return;					/* arrow_writer_append reports it */
	for (int i = 0; i < ds->n_columns && i < in.file.schema.n_fields; i++)
	{
		PgNode	   *n = &ds->columns[i].node;
		const ArrowField *f = &in.file.schema.fields[i];

		if (n->kind == PGK_NUMERIC && n->scale_from_data &&
			f->type.id == ARROW_TYPE_DECIMAL)
		{
			n->precision = f->type.dec_precision;
			n->scale = f->type.dec_scale;
		}
	}
	pgw_close_input(&in);
}

/* --------------------------------------------------------------- main */

typedef struct DumpOpts
{
	const char *dsn;
	const char *command;
	const char *table;
	const char *outpath;
	bool		append;
	bool		numeric_as_text;
	bool		quiet;
	ArrowWriterOptions wopts;
} DumpOpts;

/* The command line into *o.  Returns -1 to go on, else the exit code. */
static int
parse_dump_args(int argc, char **argv, DumpOpts *o)
{
	static const struct option longopts[] = {
		{"dbname", required_argument, NULL, 'd'},
		{"command", required_argument, NULL, 'c'},
		{"table", required_argument, NULL, 't'},
		{"output", required_argument, NULL, 'o'},
		{"batch-rows", required_argument, NULL, 'r'},
		{"compress", required_argument, NULL, 'z'},
		{"append", no_argument, NULL, 'a'},
		{"format", required_argument, NULL, 'f'},
		{"numeric-as-text", no_argument, NULL, 'n'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}
	};
	int			c;

	memset(o, 0, sizeof(*o));
	o->wopts.codec = ARROW_CODEC_NONE;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":d:c:t:o:qh", longopts, NULL)) != -1)
	{
		switch (c)
		{
			case 'd':
				o->dsn = optarg;
				break;
			case 'c':
				o->command = optarg;
				break;
			case 't':
				o->table = optarg;
				break;
			case 'o':
				o->outpath = optarg;
				break;
			case 'r':
				if (!pgw_parse_count(optarg, &o->wopts.batch_rows))
					return pgw_usage_error("dump", "invalid --batch-rows value \"%s\"",
										   optarg);
				break;
			case 'z':
				if (!pgw_parse_codec(optarg, &o->wopts.codec))
					return pgw_usage_error("dump", "unknown codec \"%s\" (lz4 or zstd)",
										   optarg);
				break;
			case 'a':
				o->append = true;
				break;
			case 'f':
				if (strcmp(optarg, "stream") == 0)
					o->wopts.stream = true;
				else if (strcmp(optarg, "file") != 0)
					return pgw_usage_error("dump", "unknown format \"%s\" (file or stream)",
										   optarg);
				break;
			case 'n':
				o->numeric_as_text = true;
				break;
			case 'q':
				o->quiet = true;
				break;
			case 'h':
				fputs(dump_usage, stdout);
				return 0;
			case ':':
				return pgw_usage_error("dump", "option %s needs a value",
									   argv[optind - 1]);
			default:
				return pgw_usage_error("dump", "unknown option \"%s\"",
									   argv[optind - 1]);
		}
	}
	if (optind < argc)
		return pgw_usage_error("dump", "unexpected argument \"%s\"", argv[optind]);
	if ((o->command == NULL) == (o->table == NULL))
		return pgw_usage_error("dump", "give exactly one of -c QUERY and -t TABLE");
	if (o->outpath == NULL || o->outpath[0] == '\0')
		return pgw_usage_error("dump", "missing -o OUT");
	if (o->append && o->wopts.stream)
		return pgw_usage_error("dump", "--append writes the Arrow file format, not a stream");
	return -1;
}

/*
 * Open the writer *wp: appending to the existing file (its old length in
 * *old_length) or creating it under a temporary name (*temp), with the
 * signal cleanup set for either.  Returns 0, or -1 after an error message.
 */
static int
open_output(const DumpOpts *o, ArrowSchema *schema, ArrowWriter **wp,
			int64_t *old_length, char **temp, DumpCtx *cx)
{
	const char *outpath = o->outpath;

	pgw_install_signal_cleanup();
	if (o->append && access(outpath, F_OK) == 0)
	{
		if (arrow_writer_append(wp, outpath, schema, -1, &o->wopts, old_length,
								&cx->err) != 0)
		{
			*wp = NULL;
			pgw_error("%s", cx->err.msg);
			return -1;
		}
		pgw_cleanup_set_truncate(outpath, *old_length);
	}
	else
	{
		*temp = pgw_temp_path(outpath);
		if (*temp == NULL)
		{
			pgw_error("out of memory");
			return -1;
		}
		pgw_cleanup_set_unlink(*temp);
		if (arrow_writer_create(wp, outpath, schema, true, &o->wopts, &cx->err) != 0)
		{
			*wp = NULL;
			pgw_cleanup_clear();
			pgw_error("%s", cx->err.msg);
			return -1;
		}
	}
	return 0;
}

/*
 * Start COPY (query) TO STDOUT (FORMAT binary) with the casts the schema
 * asks for; *copyq and *copysql are the caller's to free.  Returns 0, or -1
 * after an error message.
 */
static int
start_copy(PGconn *conn, const char *query, DumpSchema *ds, char **copyq,
		   char **copysql)
{
	PGresult   *res;

	*copyq = dump_copy_query(query, ds);
	*copysql = malloc(strlen(*copyq) + 64);
	if (*copysql == NULL)
	{
		pgw_error("out of memory");
		return -1;
	}
	sprintf(*copysql, "COPY (%s\n) TO STDOUT (FORMAT binary)", *copyq);
	res = PQexec(conn, *copysql);
	if (PQresultStatus(res) != PGRES_COPY_OUT)
	{
		dump_pg_error(conn, res, "query failed");
		PQclear(res);
		return -1;
	}
	PQclear(res);
	return 0;
}

/*
 * The complete tuples in data[*posp, len) decoded into the writer, *posp
 * advanced past them (an incomplete one is left).  Returns 0, or -1 after
 * an error message.
 */
static int
decode_copy_tuples(DumpCtx *cx, DumpSchema *ds, ArrowWriter *w,
				   const uint8_t *data, size_t len, size_t *posp,
				   bool *trailer, int64_t *rowsp, Progress *pr)
{
	size_t		pos = *posp;
	int64_t		rows = *rowsp;
	int			rc = 0;

	while (pos < len)
	{
		bool		is_trailer;
		int64_t		tl;

		if (*trailer)
		{
			pgw_error("unexpected COPY data after the trailer");
			rc = -1;
			break;
		}
		tl = pgb_tuple_length(data + pos, len - pos, ds->n_columns, &is_trailer);
		if (tl < 0)
		{
			pgw_error("malformed COPY data at row %" PRId64, rows + 1);
			rc = -1;
			break;
		}
		if (tl == 0)
			break;
		if (is_trailer)
		{
			*trailer = true;
			pos += tl;
			continue;
		}
		cx->row = rows + 1;
		if (decode_tuple(cx, ds, data + pos) != 0 ||
			(arrow_writer_end_row(w, &cx->err) != 0 &&
			 fail(cx, "%s", cx->err.msg) != 0))
		{
			pgw_error("%s", cx->msg);
			rc = -1;
			break;
		}
		pos += tl;
		rows++;
		if ((rows & 4095) == 0)
			progress_report(pr, arrow_writer_bytes(w), rows, false);
	}
	*posp = pos;
	*rowsp = rows;
	return rc;
}

/*
 * Read the COPY data to its end: messages may split tuples, so an
 * incomplete tail waits for the next one.  *rowsp counts the rows written.
 * Returns 0, or -1 after an error message.
 */
static int
read_copy_rows(PGconn *conn, DumpSchema *ds, ArrowWriter *w, DumpCtx *cx,
			   Progress *pr, int64_t *rowsp)
{
	PGresult   *res;
	uint8_t    *pend = NULL;
	size_t		pend_len = 0;
	size_t		pend_cap = 0;
	bool		header_done = false;
	bool		trailer = false;
	int			rc = -1;

	for (;;)
	{
		char	   *buf = NULL;
		int			n = PQgetCopyData(conn, &buf, 0);
		const uint8_t *data;
		size_t		len;
		size_t		pos = 0;

		if (n == -1)
			break;
		if (n < 0)
		{
			pgw_error("connection lost during COPY: %s", PQerrorMessage(conn));
			goto done;
		}
		if (pend_len > 0)
		{
			if (pend_len + n > pend_cap)
			{
				pend_cap = (pend_len + n) * 2;
				pend = realloc(pend, pend_cap);
				if (pend == NULL)
				{
					PQfreemem(buf);
					pgw_error("out of memory");
					goto done;
				}
			}
			memcpy(pend + pend_len, buf, n);
			pend_len += n;
			data = pend;
			len = pend_len;
		}
		else
		{
			data = (const uint8_t *) buf;
			len = n;
		}
		if (!header_done)
		{
			const char *why = NULL;
			int64_t		h = pgb_copy_header(data, len, &why);

			if (h < 0)
			{
				PQfreemem(buf);
				pgw_error("unexpected COPY data: %s", why);
				goto done;
			}
			if (h > 0)
			{
				header_done = true;
				pos = h;
			}
		}
		if (header_done &&
			decode_copy_tuples(cx, ds, w, data, len, &pos, &trailer, rowsp, pr) != 0)
		{
			PQfreemem(buf);
			goto done;
		}
		/* keep an incomplete tail for the next message */
		if (pos < len)
		{
			size_t		rest = len - pos;

			if (data == pend)
				memmove(pend, pend + pos, rest);
			else
			{
				if (rest > pend_cap)
				{
					pend_cap = rest * 2;
					free(pend);
					pend = malloc(pend_cap);
					if (pend == NULL)
					{
						PQfreemem(buf);
						pgw_error("out of memory");
						goto done;
					}
				}
				memcpy(pend, data + pos, rest);
			}
			pend_len = rest;
		}
		else
			pend_len = 0;
		PQfreemem(buf);
	}
	res = PQgetResult(conn);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
	{
		dump_pg_error(conn, res, "query failed");
		PQclear(res);
		goto done;
	}
	PQclear(res);
	while ((res = PQgetResult(conn)) != NULL)
		PQclear(res);
	if (!header_done || !trailer || pend_len != 0)
	{
		pgw_error("COPY data ended unexpectedly after %" PRId64 " rows", *rowsp);
		goto done;
	}
	rc = 0;
done:
	free(pend);
	return rc;
}

int
cmd_dump(int argc, char **argv)
{
	DumpOpts	o;
	PGconn	   *conn = NULL;
	PGresult   *res;
	char	   *query = NULL;
	char	   *copyq = NULL;
	char	   *copysql = NULL;
	char	   *temp = NULL;
	DumpSchema	ds;
	ArrowArena	arena;
	ArrowSchema schema;
	ArrowWriter *w = NULL;
	DumpCtx		cx;
	Progress	pr;
	int64_t		old_length = -1;
	int64_t		rows = 0;
	int			rc = 1;

	rc = parse_dump_args(argc, argv, &o);
	if (rc >= 0)
		return rc;
	rc = 1;

	conn = pgw_connect(o.dsn, "pgwarp");
	if (conn == NULL)
		return 1;

	if (o.table)
	{
		query = table_query(conn, o.table);
		if (query == NULL)
		{
			PQfinish(conn);
			return pgw_usage_error("dump", "invalid table name \"%s\"", o.table);
		}
	}
	else
		query = clean_query(o.command);

	res = PQexec(conn, "BEGIN ISOLATION LEVEL REPEATABLE READ");
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
	{
		dump_pg_error(conn, res, "could not begin a transaction");
		PQclear(res);
		goto done;
	}
	PQclear(res);

	if (dump_describe(conn, query, o.numeric_as_text, &ds) != 0)
		goto done;
	if (o.append && access(o.outpath, F_OK) == 0)
		adopt_file_scales(&ds, o.outpath);

	arrow_arena_init(&arena, NULL);
	memset(&cx, 0, sizeof(cx));
	if (dump_arrow_schema(&ds, &arena, &schema, &cx.err) != 0)
	{
		pgw_error("%s", cx.err.msg);
		goto done_arena;
	}

	/* open the output */
	if (open_output(&o, &schema, &w, &old_length, &temp, &cx) != 0)
		goto done_arena;
	dump_attach_builders(&ds, w);

	/* stream the rows */
	if (start_copy(conn, query, &ds, &copyq, &copysql) != 0)
		goto fail;

	memset(&pr, 0, sizeof(pr));
	pr.enabled = !o.quiet;
	pr.tty = isatty(2);
	pr.start = pgw_now();

	if (read_copy_rows(conn, &ds, w, &cx, &pr, &rows) != 0)
		goto fail;
	res = PQexec(conn, "COMMIT");
	PQclear(res);

	/* close: on failure it removes the temporary file / cuts the append */
	pgw_block_signals(true);
	rc = arrow_writer_close(w, &cx.err);
	w = NULL;
	pgw_cleanup_clear();
	pgw_block_signals(false);
	if (rc != 0)
	{
		rc = pgw_error("%s", cx.err.msg);
		goto done_arena;
	}
	{
		struct stat st;

		progress_report(&pr, stat(o.outpath, &st) == 0 ? st.st_size : 0, rows, true);
	}
	rc = 0;
	goto done_arena;

fail:
	if (w)
		arrow_writer_abort(w);
	w = NULL;
	pgw_cleanup_clear();
done_arena:
	arrow_arena_free_all(&arena);
done:
	free(copysql);
	free(copyq);
	free(temp);
	free(query);
	PQfinish(conn);
	return rc;
}
