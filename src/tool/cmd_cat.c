/*
 * cmd_cat.c — pgwarp cat FILE [--batch N]
 *
 * Prints every row (or the rows of one record batch) as a JSON array per
 * line, one value per top-level column, decoded by our reader.  The encoding
 * is a contract used by tests to compare our reader with pyarrow:
 *   null, true/false, integers, floats as "%.17g" (".0" appended when
 *   integral; NaN/Infinity/-Infinity as strings), Decimal128 as an exact
 *   string, dates/times/timestamps/durations as raw storage integers,
 *   intervals as integers or arrays, strings escaped, binary as lowercase
 *   hex, lists as arrays, structs as objects, maps as [[key, value], ...],
 *   dictionary-encoded values decoded.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "pgwarp.h"

static const char *cat_usage =
"Usage: pgwarp cat FILE [--batch N]\n"
"\n"
"Print the rows of an Arrow file (IPC file or stream format) as JSON arrays,\n"
"one row per line, one value per top-level column.\n"
"\n"
"Options:\n"
"  --batch N    print only record batch N (0-based)\n"
"  --help       show this help\n";

static void print_value(FILE *f, const ArrowArray *a, int64_t i);

/* a value that cannot be printed faithfully (reported after its row) */
static const char *bad_value;
static const char *bad_column;

static inline int64_t
load_le64(const uint8_t *p)
{
	int64_t		v;

	memcpy(&v, p, 8);
	return v;
}

static inline int32_t
load_le32(const uint8_t *p)
{
	int32_t		v;

	memcpy(&v, p, 4);
	return v;
}

static void
print_hex(FILE *f, const uint8_t *p, int64_t len)
{
	static const char hex[] = "0123456789abcdef";

	putc_unlocked('"', f);
	for (int64_t k = 0; k < len; k++)
	{
		putc_unlocked(hex[p[k] >> 4], f);
		putc_unlocked(hex[p[k] & 15], f);
	}
	putc_unlocked('"', f);
}

/* A Decimal128 value as a JSON string (its text). */
static void
print_decimal(FILE *f, const ArrowArray *a, int64_t j)
{
	const ArrowType *t = &a->field->type;
	const uint8_t *p = a->values + j * 16;
	uint64_t	lo;
	int64_t		hi;
	__int128	v;
	char		dbuf[2200];

	if (t->dec_scale > 1000 || t->dec_scale < -1000)
	{
		bad_value = "decimal scale out of range";
		bad_column = a->field->name;
		fputs_unlocked("null", f);
		return;
	}
	memcpy(&lo, p, 8);
	memcpy(&hi, p + 8, 8);
	v = (__int128) (((unsigned __int128) (uint64_t) hi << 64) | lo);
	pgw_decimal_str(v, t->dec_scale, dbuf, sizeof(dbuf));
	pgw_json_cstring(f, dbuf);
}

/* A List, LargeList or FixedSizeList value: [elements]. */
static void
print_list(FILE *f, const ArrowArray *a, int64_t i, int64_t j)
{
	if (a->field->type.id == ARROW_TYPE_FIXED_SIZE_LIST)
	{
		int64_t		n = a->field->type.fixed_size;

		putc_unlocked('[', f);
		for (int64_t k = 0; k < n; k++)
		{
			if (k > 0)
				fputs_unlocked(", ", f);
			print_value(f, &a->children[0], j * n + k);
		}
		putc_unlocked(']', f);
	}
	else
	{
		int64_t		s = arrow_offset_at(a, i);
		int64_t		e = arrow_offset_at(a, i + 1);

		putc_unlocked('[', f);
		for (int64_t k = s; k < e; k++)
		{
			if (k > s)
				fputs_unlocked(", ", f);
			print_value(f, &a->children[0], k);
		}
		putc_unlocked(']', f);
	}
}

/* A Map value: [[key, value], ...]. */
static void
print_map(FILE *f, const ArrowArray *a, int64_t i)
{
	int64_t		s = arrow_offset_at(a, i);
	int64_t		e = arrow_offset_at(a, i + 1);
	const ArrowArray *entries = &a->children[0];

	putc_unlocked('[', f);
	for (int64_t k = s; k < e; k++)
	{
		int64_t		ek = entries->offset + k;

		if (k > s)
			fputs_unlocked(", ", f);
		putc_unlocked('[', f);
		if (entries->n_children >= 1)
			print_value(f, &entries->children[0], ek);
		fputs_unlocked(", ", f);
		if (entries->n_children >= 2)
			print_value(f, &entries->children[1], ek);
		else
			fputs_unlocked("null", f);
		putc_unlocked(']', f);
	}
	putc_unlocked(']', f);
}

static void
print_plain(FILE *f, const ArrowArray *a, int64_t i)
{
	const ArrowType *t = &a->field->type;
	char		buf[128];
	int64_t		j = a->offset + i;

	if (arrow_is_null(a, i))
	{
		fputs_unlocked("null", f);
		return;
	}
	switch (t->id)
	{
		case ARROW_TYPE_NULL:
			fputs_unlocked("null", f);
			break;
		case ARROW_TYPE_BOOL:
			fputs_unlocked(arrow_get_bit(a->values, j) ? "true" : "false", f);
			break;
		case ARROW_TYPE_INT:
			if (!t->is_signed && t->bit_width == 64)
				fprintf(f, "%llu", (unsigned long long) arrow_get_uint64(a, i));
			else
				fprintf(f, "%lld", (long long) arrow_get_int(a, i));
			break;
		case ARROW_TYPE_DATE:
		case ARROW_TYPE_TIME:
		case ARROW_TYPE_TIMESTAMP:
		case ARROW_TYPE_DURATION:
			fprintf(f, "%lld", (long long) arrow_get_int(a, i));
			break;
		case ARROW_TYPE_FLOAT:
			{
				double		d = arrow_get_double(a, i);

				pgw_double_str(d, buf, sizeof(buf));
				if (buf[0] == 'N' || buf[0] == 'I' || buf[1] == 'I')
					pgw_json_cstring(f, buf);
				else
					fputs_unlocked(buf, f);
			}
			break;
		case ARROW_TYPE_DECIMAL:
			print_decimal(f, a, j);
			break;
		case ARROW_TYPE_INTERVAL:
			if (t->unit == ARROW_INTERVAL_YEAR_MONTH)
				fprintf(f, "%d", load_le32(a->values + j * 4));
			else if (t->unit == ARROW_INTERVAL_DAY_TIME)
				fprintf(f, "[%d, %d]", load_le32(a->values + j * 8),
						load_le32(a->values + j * 8 + 4));
			else
				fprintf(f, "[%d, %d, %lld]", load_le32(a->values + j * 16),
						load_le32(a->values + j * 16 + 4),
						(long long) load_le64(a->values + j * 16 + 8));
			break;
		case ARROW_TYPE_UTF8:
		case ARROW_TYPE_LARGE_UTF8:
			{
				int64_t		len;
				const uint8_t *p = arrow_get_bytes(a, i, &len);

				if (!pgw_utf8_valid((const char *) p, (size_t) len))
				{
					bad_value = "invalid UTF-8 in a utf8 value";
					bad_column = a->field->name;
					fputs_unlocked("null", f);
					break;
				}
				pgw_json_string(f, (const char *) p, (size_t) len);
			}
			break;
		case ARROW_TYPE_BINARY:
		case ARROW_TYPE_LARGE_BINARY:
		case ARROW_TYPE_FIXED_SIZE_BINARY:
			{
				int64_t		len;
				const uint8_t *p = arrow_get_bytes(a, i, &len);

				print_hex(f, p, len);
			}
			break;
		case ARROW_TYPE_LIST:
		case ARROW_TYPE_LARGE_LIST:
		case ARROW_TYPE_FIXED_SIZE_LIST:
			print_list(f, a, i, j);
			break;
		case ARROW_TYPE_STRUCT:
			putc_unlocked('{', f);
			for (int c = 0; c < a->n_children; c++)
			{
				if (c > 0)
					fputs_unlocked(", ", f);
				pgw_json_cstring(f, a->field->children[c].name);
				fputs_unlocked(": ", f);
				print_value(f, &a->children[c], j);
			}
			putc_unlocked('}', f);
			break;
		case ARROW_TYPE_MAP:
			print_map(f, a, i);
			break;
		default:
			fputs_unlocked("null", f);
			break;
	}
}

static void
print_value(FILE *f, const ArrowArray *a, int64_t i)
{
	if (a->dictionary != NULL)
	{
		if (arrow_is_null(a, i))
			fputs_unlocked("null", f);
		else
			print_plain(f, a->dictionary, arrow_get_dict_index(a, i));
		return;
	}
	print_plain(f, a, i);
}

int
cmd_cat(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"batch", required_argument, NULL, 'b'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}
	};
	int64_t		only_batch = -1;
	const char *path;
	PgwInput	in;
	ArrowArena	arena;
	ArrowError	err;
	int			c;
	int			rc = 0;
	static char outbuf[1 << 16];

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1)
	{
		switch (c)
		{
			case 'b':
				{
					char	   *end;
					long long	v = strtoll(optarg, &end, 10);

					if (*optarg == '\0' || *end != '\0' || v < 0)
						return pgw_usage_error("cat", "invalid --batch value \"%s\"",
											   optarg);
					only_batch = v;
				}
				break;
			case 'h':
				fputs(cat_usage, stdout);
				return 0;
			case ':':
				return pgw_usage_error("cat", "option %s needs a value",
									   argv[optind - 1]);
			default:
				return pgw_usage_error("cat", "unknown option \"%s\"",
									   argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return pgw_usage_error("cat", "missing FILE");
	if (optind + 1 < argc)
		return pgw_usage_error("cat", "unexpected argument \"%s\"", argv[optind + 1]);
	path = argv[optind];

	if (pgw_open_input(&in, path, true) != 0)
		return 1;
	if (in.incomplete_tail)
		pgw_warning("%s: ignoring %lld bytes after offset %lld (interrupted append)",
					path, (long long) (in.size - in.valid_length),
					(long long) in.valid_length);
	if (only_batch >= in.file.n_batches)
	{
		int			n = in.file.n_batches;

		pgw_close_input(&in);
		return pgw_error("%s: no batch %lld (the file has %d batch%s)", path,
						 (long long) only_batch, n, n == 1 ? "" : "es");
	}
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));

	arrow_arena_init(&arena, NULL);
	for (int b = 0; b < in.file.n_batches && rc == 0; b++)
	{
		ArrowRecordBatch rb;

		if (only_batch >= 0 && b != only_batch)
			continue;
		memset(&err, 0, sizeof(err));
		if (arrow_load_batch(&in.file, b, &arena, &rb, &err) != 0)
		{
			rc = pgw_error("%s", err.msg);
			break;
		}
		for (int64_t r = 0; r < rb.length; r++)
		{
			putc_unlocked('[', stdout);
			for (int col = 0; col < rb.n_columns; col++)
			{
				if (col > 0)
					fputs_unlocked(", ", stdout);
				print_value(stdout, &rb.columns[col], r);
			}
			fputs_unlocked("]\n", stdout);
			if (bad_value)
			{
				rc = pgw_error("%s: record batch %d, row %lld, column \"%s\": %s",
							   path, b, (long long) r, bad_column, bad_value);
				break;
			}
		}
		if (rc == 0 && ferror(stdout))
		{
			rc = pgw_error("could not write to standard output");
			break;
		}
		arrow_arena_free_all(&arena);
		arrow_arena_init(&arena, NULL);
	}
	arrow_arena_free_all(&arena);
	pgw_close_input(&in);
	return rc;
}
