/*
 * test_arrow_read.c — unit tests of the Arrow reader.
 *
 * Reads the small files in test/unit/data (written by pyarrow, see
 * make_fixtures.py) through every kind of source (pread, mapped memory,
 * memory without a mapping) and checks the values; then damages them in
 * every way we can think of and checks that each failure is a clean -1 with
 * the right code and a message naming the file.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arrow.h"
#include "unit.h"

static char data_dir[512];

static void
set_data_dir(void)
{
	const char *f = __FILE__;
	const char *slash = strrchr(f, '/');

	if (slash)
		snprintf(data_dir, sizeof(data_dir), "%.*s/data", (int) (slash - f), f);
	else
		snprintf(data_dir, sizeof(data_dir), "data");
}

static uint8_t *
slurp(const char *name, size_t *len)
{
	char		path[1024];
	FILE	   *fp;
	uint8_t    *buf;
	long		n;

	snprintf(path, sizeof(path), "%s/%s", data_dir, name);
	fp = fopen(path, "rb");
	if (fp == NULL)
		return NULL;
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	buf = malloc(n + 1);
	if (fread(buf, 1, n, fp) != (size_t) n)
	{
		free(buf);
		fclose(fp);
		return NULL;
	}
	fclose(fp);
	*len = (size_t) n;
	return buf;
}

/* How the test presents bytes to the reader. */
typedef enum
{
	SRC_MAPPED,					/* arrow_source_mem: buffers used in place */
	SRC_UNMAPPED,				/* memory read through the callback */
	SRC_FD						/* a real file with pread */
} SrcKind;

typedef struct Opened
{
	ArrowFile	file;
	ArrowSource src;
	uint8_t    *bytes;
	size_t		len;
	int			fd;
	char		path[1024];
} Opened;

static int
open_fixture(Opened *o, const char *name, SrcKind kind, ArrowError *err)
{
	memset(o, 0, sizeof(*o));
	o->fd = -1;
	snprintf(o->path, sizeof(o->path), "%s/%s", data_dir, name);
	if (kind == SRC_FD)
	{
		o->fd = open(o->path, O_RDONLY);
		if (o->fd < 0 || arrow_source_fd(&o->src, o->fd, o->path, -1, err) < 0)
			return -1;
	}
	else
	{
		o->bytes = slurp(name, &o->len);
		if (o->bytes == NULL)
			return -1;
		arrow_source_mem(&o->src, o->bytes, o->len, name);
		if (kind == SRC_UNMAPPED)
			o->src.map = NULL;
	}
	return arrow_open(&o->file, &o->src, NULL, err);
}

static void
close_fixture(Opened *o)
{
	arrow_close(&o->file);
	if (o->fd >= 0)
		close(o->fd);
	free(o->bytes);
}

static int
col_index(const ArrowFile *f, const char *name)
{
	int			i;

	for (i = 0; i < f->schema.n_fields; i++)
		if (strcmp(f->schema.fields[i].name, name) == 0)
			return i;
	return -1;
}

static const ArrowArray *
col(const ArrowFile *f, const ArrowRecordBatch *rb, const char *name)
{
	int			i = col_index(f, name);

	return i >= 0 ? &rb->columns[i] : NULL;
}

static bool
bytes_eq(const ArrowArray *a, int64_t i, const char *s)
{
	int64_t		len;
	const uint8_t *p = arrow_get_bytes(a, i, &len);

	return len == (int64_t) strlen(s) && memcmp(p, s, len) == 0;
}

/* Value i of a dictionary-encoded utf8 array equals s. */
static bool
dict_eq(const ArrowArray *a, int64_t i, const char *s)
{
	return !arrow_is_null(a, i) &&
		bytes_eq(a->dictionary, arrow_get_dict_index(a, i), s);
}

static __int128
get_i128(const ArrowArray *a, int64_t i)
{
	int64_t		len;
	const uint8_t *p = arrow_get_bytes(a, i, &len);
	__int128	v;

	memcpy(&v, p, 16);
	return v;
}

/* Check the values of batch `batch` (0 or 1) of the types fixtures. */
static void
check_types_batch(const ArrowFile *f, const ArrowRecordBatch *rb, int base)
{
	const ArrowArray *a;
	const ArrowArray *c;
	int64_t		len;
	const uint8_t *p;

	CHECK(rb->length == 3);
	CHECK(rb->n_columns == 28);

	a = col(f, rb, "i8");
	CHECK(arrow_get_int(a, 0) == 1 + base && arrow_get_int(a, 1) == -2);
	CHECK(!arrow_is_null(a, 0) && arrow_is_null(a, 2) && a->null_count == 1);

	a = col(f, rb, "u64");
	CHECK(arrow_get_uint64(a, 1) == UINT64_MAX && arrow_get_uint64(a, 2) == 5 + base);
	CHECK(a->validity == NULL);

	a = col(f, rb, "i32");
	CHECK(arrow_get_int(a, 0) == 10 + base && arrow_get_int(a, 2) == 30);

	a = col(f, rb, "f16");
	CHECK(arrow_get_double(a, 0) == 1.5 && arrow_get_double(a, 1) == -0.25 &&
		  arrow_get_double(a, 2) == 65504.0);
	a = col(f, rb, "f32");
	CHECK(arrow_get_double(a, 0) == 0.5 && arrow_is_null(a, 1) &&
		  arrow_get_double(a, 2) == -3.0);
	a = col(f, rb, "f64");
	CHECK(arrow_get_double(a, 0) == 1.25 && isnan(arrow_get_double(a, 1)) &&
		  isinf(arrow_get_double(a, 2)) && arrow_get_double(a, 2) < 0);

	a = col(f, rb, "b");
	CHECK(arrow_get_int(a, 0) == 1 && arrow_get_int(a, 1) == 0 && arrow_is_null(a, 2));

	a = col(f, rb, "s");
	CHECK(bytes_eq(a, 0, "a") && bytes_eq(a, 1, "") && bytes_eq(a, 2, "h\xc3\xa9llo"));
	a = col(f, rb, "ls");
	CHECK(bytes_eq(a, 0, "x") && arrow_is_null(a, 1) && bytes_eq(a, 2, "yz"));
	a = col(f, rb, "bin");
	p = arrow_get_bytes(a, 0, &len);
	CHECK(len == 2 && p[0] == 0 && p[1] == 1);
	CHECK(bytes_eq(a, 1, "") && arrow_is_null(a, 2));
	a = col(f, rb, "lbin");
	CHECK(bytes_eq(a, 0, "q") && bytes_eq(a, 1, "rs") && bytes_eq(a, 2, ""));
	a = col(f, rb, "fsb");
	CHECK(bytes_eq(a, 0, "abc") && arrow_is_null(a, 1) && bytes_eq(a, 2, "xyz"));

	a = col(f, rb, "dec");
	CHECK(get_i128(a, 0) == 12345 && get_i128(a, 1) == -100 && arrow_is_null(a, 2));

	a = col(f, rb, "d32");
	CHECK(arrow_get_int(a, 0) == 1 && arrow_get_int(a, 1) == 10957 && arrow_is_null(a, 2));
	a = col(f, rb, "d64");
	CHECK(arrow_get_int(a, 0) == 86400000LL && arrow_get_int(a, 2) == -86400000LL);
	a = col(f, rb, "t32");
	CHECK(arrow_get_int(a, 0) == 1 && arrow_get_int(a, 1) == 86399);
	a = col(f, rb, "t64");
	CHECK(arrow_get_int(a, 0) == 1000 && arrow_is_null(a, 1) && arrow_get_int(a, 2) == 5);
	a = col(f, rb, "ts");
	CHECK(arrow_get_int(a, 0) == 1577836800000000LL && arrow_get_int(a, 2) == 1000000);
	a = col(f, rb, "ts_naive");
	CHECK(arrow_get_int(a, 2) == -1);
	a = col(f, rb, "dur");
	CHECK(arrow_get_int(a, 0) == 5 && arrow_get_int(a, 1) == -5 && arrow_is_null(a, 2));

	a = col(f, rb, "iv");
	p = arrow_get_bytes(a, 2, &len);
	{
		int32_t		m,
					d;
		int64_t		ns;

		memcpy(&m, p, 4);
		memcpy(&d, p + 4, 4);
		memcpy(&ns, p + 8, 8);
		CHECK(len == 16 && m == -1 && d == 0 && ns == 7);
	}

	a = col(f, rb, "lst");
	CHECK(a->n_children == 1 && a->children[0].length == 2);
	CHECK(arrow_offset_at(a, 0) == 0 && arrow_offset_at(a, 1) == 2 &&
		  arrow_offset_at(a, 2) == 2 && arrow_is_null(a, 2));
	CHECK(arrow_get_int(&a->children[0], 1) == 2);

	a = col(f, rb, "llst");
	c = &a->children[0];
	CHECK(arrow_offset_at(a, 2) == 1 && arrow_offset_at(a, 3) == 3);
	CHECK(bytes_eq(c, 1, "b") && bytes_eq(c, 2, "c"));

	a = col(f, rb, "fsl");
	c = &a->children[0];
	CHECK(c->length == 6 && arrow_is_null(a, 1));
	CHECK(arrow_get_int(c, 0) == 1 && arrow_get_int(c, 5) == 6);

	a = col(f, rb, "st");
	CHECK(a->n_children == 2 && arrow_is_null(a, 1));
	CHECK(arrow_get_int(&a->children[0], 0) == 1 && arrow_is_null(&a->children[0], 2));
	CHECK(bytes_eq(&a->children[1], 2, "z"));

	a = col(f, rb, "mp");
	CHECK(a->n_children == 1 && a->children[0].n_children == 2);
	CHECK(arrow_offset_at(a, 1) == 2 && arrow_offset_at(a, 3) == 2);
	CHECK(bytes_eq(&a->children[0].children[0], 1, "k2"));
	CHECK(arrow_get_int(&a->children[0].children[1], 1) == 2);

	a = col(f, rb, "dict");
	CHECK(a->dictionary != NULL);
	CHECK(dict_eq(a, 0, "red") && dict_eq(a, 1, "green") && arrow_is_null(a, 2));
	CHECK(a->dictionary->field->has_dict == false);

	a = col(f, rb, "nul");
	CHECK(a->length == 3 && a->null_count == 3 && arrow_is_null(a, 0));
}

static void
check_types_fixture(const char *name, SrcKind kind, ArrowFormat format)
{
	Opened		o;
	ArrowError	err;
	ArrowArena	arena;
	ArrowRecordBatch rb;
	int			b,
				nb = strstr(name, "legacy") ? 1 : 2;

	memset(&err, 0, sizeof(err));
	CHECK_MSG(open_fixture(&o, name, kind, &err) == 0, err.msg);
	if (unit_current_failed)
	{
		close_fixture(&o);
		return;
	}
	CHECK(o.file.format == format);
	CHECK(o.file.n_batches == nb);
	CHECK(o.file.schema.n_fields == 28);
	for (b = 0; b < nb; b++)
	{
		arrow_arena_init(&arena, NULL);
		CHECK_MSG(arrow_load_batch(&o.file, b, &arena, &rb, &err) == 0, err.msg);
		if (!unit_current_failed)
			check_types_batch(&o.file, &rb, b);
		arrow_arena_free_all(&arena);
	}
	close_fixture(&o);
}

TEST(test_types_file)
{
	check_types_fixture("types.arrow", SRC_FD, ARROW_FORMAT_FILE);
	check_types_fixture("types.arrow", SRC_MAPPED, ARROW_FORMAT_FILE);
	check_types_fixture("types.arrow", SRC_UNMAPPED, ARROW_FORMAT_FILE);
}

TEST(test_types_stream)
{
	check_types_fixture("types.arrows", SRC_FD, ARROW_FORMAT_STREAM);
	check_types_fixture("types.arrows", SRC_MAPPED, ARROW_FORMAT_STREAM);
	check_types_fixture("types_legacy.arrows", SRC_UNMAPPED, ARROW_FORMAT_STREAM);
}

TEST(test_types_compressed)
{
	check_types_fixture("types_lz4.arrow", SRC_FD, ARROW_FORMAT_FILE);
	check_types_fixture("types_lz4.arrow", SRC_MAPPED, ARROW_FORMAT_FILE);
	check_types_fixture("types_zstd.arrow", SRC_UNMAPPED, ARROW_FORMAT_FILE);
	check_types_fixture("types_zstd.arrow", SRC_MAPPED, ARROW_FORMAT_FILE);
}

/* Batches that are slices of a bigger one, compressed (prefix decoding). */
TEST(test_sliced_compressed)
{
	static const char *const names[] = {"sliced_lz4.arrow", "sliced_zstd.arrow"};
	int			k;

	for (k = 0; k < 4; k++)
	{
		Opened		o;
		ArrowError	err;
		ArrowArena	arena;
		ArrowRecordBatch rb;
		int			b;

		CHECK_MSG(open_fixture(&o, names[k / 2], k & 1 ? SRC_MAPPED : SRC_UNMAPPED,
							   &err) == 0, err.msg);
		if (unit_current_failed)
			return;
		CHECK(o.file.n_batches == 2);
		for (b = 0; b < 2; b++)
		{
			int64_t		first = b == 0 ? 7 : 290,
						i;
			const ArrowArray *ia,
					   *sa,
					   *la;

			arrow_arena_init(&arena, NULL);
			CHECK_MSG(arrow_load_batch(&o.file, b, &arena, &rb, &err) == 0, err.msg);
			if (unit_current_failed)
				return;
			CHECK(rb.length == (b == 0 ? 100 : 10));
			ia = &rb.columns[0];
			sa = &rb.columns[1];
			la = &rb.columns[2];
			for (i = 0; i < rb.length; i++)
			{
				int64_t		v = first + i;
				char		s[32];
				int64_t		lo;

				snprintf(s, sizeof(s), "%" PRId64, v);
				CHECK(v % 5 == 0 ? arrow_is_null(ia, i) : arrow_get_int(ia, i) == v);
				CHECK(bytes_eq(sa, i, s));
				lo = arrow_offset_at(la, i);
				CHECK(arrow_offset_at(la, i + 1) == lo + 2);
				CHECK(arrow_get_int(&la->children[0], lo) == v &&
					  arrow_get_int(&la->children[0], lo + 1) == v + 1);
			}
			arrow_arena_free_all(&arena);
		}
		close_fixture(&o);
	}
}

TEST(test_schema_strings)
{
	Opened		o;
	ArrowError	err;
	char		buf[256];
	const ArrowFile *f = &o.file;
	ArrowArena	arena;
	ArrowSchema copy;

	CHECK_MSG(open_fixture(&o, "types.arrow", SRC_MAPPED, &err) == 0, err.msg);
	if (unit_current_failed)
		return;
#define TS(name, want) do { \
		arrow_type_string(&f->schema.fields[col_index(f, name)], buf, sizeof(buf)); \
		CHECK_MSG(strcmp(buf, want) == 0, buf); \
	} while (0)
	TS("i8", "int8");
	TS("u64", "uint64");
	TS("f16", "halffloat");
	TS("dec", "decimal128(10, 2)");
	TS("d32", "date32[day]");
	TS("t64", "time64[ns]");
	TS("ts", "timestamp[us, tz=UTC]");
	TS("ts_naive", "timestamp[ms]");
	TS("iv", "month_day_nano_interval");
	TS("lst", "list<item: int32>");
	TS("fsl", "fixed_size_list<item: int16>[2]");
	TS("st", "struct<a: int32, b: utf8>");
	TS("mp", "map<utf8, int32>");
	TS("dict", "dictionary<values=utf8, indices=int32>");
	TS("nul", "null");
#undef TS
	/* the buffer bound is respected */
	arrow_type_string(&f->schema.fields[col_index(f, "st")], buf, 8);
	CHECK(strlen(buf) == 7);

	CHECK(f->schema.fields[col_index(f, "mp")].children[0].children[0].nullable == false);
	CHECK(arrow_type_byte_width(&f->schema.fields[col_index(f, "dec")].type) == 16);
	CHECK(arrow_type_byte_width(&f->schema.fields[col_index(f, "fsb")].type) == 3);
	CHECK(arrow_type_byte_width(&f->schema.fields[col_index(f, "b")].type) == 0);
	CHECK(f->schema.fields[0].node_index == 0 && f->schema.fields[0].buffer_index == 0);
	CHECK(f->schema.fields[1].buffer_index == 2);

	arrow_arena_init(&arena, NULL);
	CHECK(arrow_schema_copy(&arena, &copy, &f->schema, &err) == 0);
	CHECK(copy.n_fields == 28 && copy.n_nodes == f->schema.n_nodes);
	CHECK(strcmp(copy.fields[col_index(f, "ts")].type.timezone, "UTC") == 0);
	CHECK(copy.fields[col_index(f, "ts")].type.timezone !=
		  f->schema.fields[col_index(f, "ts")].type.timezone);
	arrow_type_string(&copy.fields[col_index(f, "mp")], buf, sizeof(buf));
	CHECK(strcmp(buf, "map<utf8, int32>") == 0);
	arrow_arena_free_all(&arena);
	close_fixture(&o);
}

/* Value i of column 0 of batch b of a dictionary stream. */
static bool
dict_value(Opened *o, int b, int64_t i, const char *want)
{
	ArrowArena	arena;
	ArrowRecordBatch rb;
	ArrowError	err;
	bool		ok;

	arrow_arena_init(&arena, NULL);
	if (arrow_load_batch(&o->file, b, &arena, &rb, &err) < 0)
	{
		printf("  %s\n", err.msg);
		arrow_arena_free_all(&arena);
		return false;
	}
	if (want == NULL)
		ok = arrow_is_null(&rb.columns[0], i);
	else
		ok = dict_eq(&rb.columns[0], i, want);
	arrow_arena_free_all(&arena);
	return ok;
}

TEST(test_dictionary_delta)
{
	Opened		o;
	ArrowError	err;

	CHECK_MSG(open_fixture(&o, "dict_delta.arrows", SRC_UNMAPPED, &err) == 0, err.msg);
	if (unit_current_failed)
		return;
	CHECK(o.file.n_batches == 3);
	CHECK(o.file.n_dicts == 3);
	CHECK(o.file.batch_dict_limit[0] == 1 && o.file.batch_dict_limit[2] == 3);
	/* in reverse, so that states are built from scratch and from the cache */
	CHECK(dict_value(&o, 2, 0, "d") && dict_value(&o, 2, 1, "a"));
	CHECK(dict_value(&o, 0, 0, "a") && dict_value(&o, 0, 1, "b"));
	CHECK(dict_value(&o, 1, 0, "c") && dict_value(&o, 1, 1, NULL) &&
		  dict_value(&o, 1, 2, "b"));
	close_fixture(&o);

	CHECK_MSG(open_fixture(&o, "dict_replace.arrows", SRC_MAPPED, &err) == 0, err.msg);
	if (unit_current_failed)
		return;
	CHECK(o.file.n_batches == 2);
	CHECK(dict_value(&o, 0, 0, "b") && dict_value(&o, 0, 1, "a"));
	CHECK(dict_value(&o, 1, 0, "z") && dict_value(&o, 1, 1, "z"));
	CHECK(dict_value(&o, 0, 0, "b"));
	close_fixture(&o);
}

TEST(test_stats)
{
	Opened		o;
	ArrowError	err;
	ArrowArena	arena;
	ArrowStatValue *mins,
			   *maxs;
	__int128	min128 = -(__int128) (((unsigned __int128) 1 << 127) - 1) - 1;

	CHECK_MSG(open_fixture(&o, "stats.arrow", SRC_FD, &err) == 0, err.msg);
	if (unit_current_failed)
		return;
	arrow_arena_init(&arena, NULL);
	CHECK(o.file.n_batches == 2);
	CHECK(arrow_field_stats(&o.file, 0, &arena, &mins, &maxs));
	CHECK(mins[0].present && mins[0].i == 1 && mins[1].i == min128);
	CHECK(maxs[0].present && maxs[0].i == 10 && !maxs[1].present);
	CHECK(arrow_field_stats(&o.file, 1, &arena, &mins, &maxs));
	CHECK(mins[0].is_float && isinf(mins[0].d) && mins[0].d < 0 && mins[1].d == 0.5);
	CHECK(isnan(maxs[0].d) && maxs[1].d == 1e300);
	CHECK(!arrow_field_stats(&o.file, 2, &arena, &mins, &maxs));
	CHECK(!arrow_field_stats(&o.file, 3, &arena, &mins, &maxs));
	CHECK(strcmp(arrow_field_metadata(&o.file.schema.fields[0], "max_values"), "10,") == 0);
	CHECK(arrow_field_metadata(&o.file.schema.fields[0], "nope") == NULL);
	arrow_arena_free_all(&arena);
	close_fixture(&o);
}

TEST(test_empty_and_slice)
{
	Opened		o;
	ArrowError	err;
	ArrowArena	arena;
	ArrowRecordBatch rb;
	ArrowArray	s;
	const ArrowArray *a;

	CHECK_MSG(open_fixture(&o, "empty.arrow", SRC_MAPPED, &err) == 0, err.msg);
	if (unit_current_failed)
		return;
	arrow_arena_init(&arena, NULL);
	CHECK(o.file.n_batches == 1);
	CHECK_MSG(arrow_load_batch(&o.file, 0, &arena, &rb, &err) == 0, err.msg);
	CHECK(rb.length == 0 && rb.columns[0].length == 0);
	arrow_arena_free_all(&arena);
	close_fixture(&o);

	CHECK_MSG(open_fixture(&o, "types.arrow", SRC_MAPPED, &err) == 0, err.msg);
	CHECK_MSG(arrow_load_batch(&o.file, 0, &arena, &rb, &err) == 0, err.msg);
	if (unit_current_failed)
		return;
	a = col(&o.file, &rb, "ls");
	arrow_array_slice(a, 1, 2, &s);
	CHECK(s.length == 2 && s.null_count == 1 && arrow_is_null(&s, 0) &&
		  bytes_eq(&s, 1, "yz"));
	a = col(&o.file, &rb, "i32");
	arrow_array_slice(a, 2, 1, &s);
	CHECK(s.null_count == 0 && arrow_get_int(&s, 0) == 30);
	CHECK(arrow_load_column(&o.file, 0, &rb.meta, 99, &arena, &s, &err) == -1 &&
		  err.code == ARROW_ERR_INVALID);
	CHECK(arrow_read_batch_meta(&o.file, 2, &arena, &rb.meta, &err) == -1 &&
		  err.code == ARROW_ERR_INVALID);
	arrow_arena_free_all(&arena);
	close_fixture(&o);
}

TEST(test_unsupported)
{
	Opened		o;
	ArrowError	err;

	memset(&err, 0, sizeof(err));
	CHECK(open_fixture(&o, "deep.arrow", SRC_MAPPED, &err) == -1);
	CHECK_MSG(err.code == ARROW_ERR_UNSUPPORTED && strstr(err.msg, "deep.arrow") &&
			  strstr(err.msg, "\"deep"), err.msg);
	close_fixture(&o);

	CHECK(open_fixture(&o, "union.arrow", SRC_MAPPED, &err) == -1);
	CHECK_MSG(err.code == ARROW_ERR_UNSUPPORTED && strstr(err.msg, "union.arrow") &&
			  strstr(err.msg, "\"u\"") && strstr(err.msg, "Union"), err.msg);
	close_fixture(&o);
}

/* ------------------------------------------------------ malformed inputs */

/*
 * Open the bytes and load every column of every batch; returns 0 if all
 * worked, else -1 with err set.  Whatever happens must not crash.
 */
static int
try_read(const uint8_t *bytes, size_t len, bool mapped, bool recover,
		 ArrowError *err)
{
	ArrowSource src;
	ArrowFile	file;
	ArrowOpenOptions opts;
	int			b,
				rc = 0;

	memset(&opts, 0, sizeof(opts));
	opts.recover_tail = recover;
	arrow_source_mem(&src, bytes, len, "bad.arrow");
	if (!mapped)
		src.map = NULL;
	if (arrow_open(&file, &src, &opts, err) < 0)
		return -1;
	for (b = 0; b < file.n_batches && rc == 0; b++)
	{
		ArrowArena	arena;
		ArrowRecordBatch rb;

		arrow_arena_init(&arena, NULL);
		rc = arrow_load_batch(&file, b, &arena, &rb, err);
		arrow_arena_free_all(&arena);
	}
	arrow_close(&file);
	return rc;
}

static bool
error_ok(const ArrowError *err)
{
	return strstr(err->msg, "bad.arrow") != NULL &&
		(err->code == ARROW_ERR_CORRUPT || err->code == ARROW_ERR_INCOMPLETE ||
		 err->code == ARROW_ERR_UNSUPPORTED || err->code == ARROW_ERR_NOMEM);
}

TEST(test_truncated)
{
	static const char *const names[] = {"types.arrow", "types.arrows",
	"types_lz4.arrow", "dict_delta.arrows"};
	int			k;

	for (k = 0; k < 4; k++)
	{
		size_t		len,
					cut;
		uint8_t    *bytes = slurp(names[k], &len);
		bool		stream = strstr(names[k], ".arrows") != NULL;

		CHECK(bytes != NULL);
		if (bytes == NULL)
			return;
		for (cut = 0; cut < len; cut++)
		{
			ArrowError	err;
			uint8_t    *copy = malloc(cut + 1);
			int			rc;

			memcpy(copy, bytes, cut);
			memset(&err, 0, sizeof(err));
			rc = try_read(copy, cut, cut & 1, false, &err);
			/* a stream cut at a message boundary is a valid, shorter stream */
			if (!stream)
				CHECK_MSG(rc == -1, names[k]);
			if (rc < 0)
				CHECK_MSG(error_ok(&err), err.msg);
			if (!stream && rc < 0 && cut >= 8)
				CHECK_MSG(err.code == ARROW_ERR_INCOMPLETE ||
						  err.code == ARROW_ERR_CORRUPT, err.msg);
			free(copy);
		}
		free(bytes);
	}
}

TEST(test_bad_magic_and_trailer)
{
	size_t		len;
	uint8_t    *bytes = slurp("types.arrow", &len);
	ArrowError	err;
	int32_t		flen;

	CHECK(bytes != NULL);
	if (bytes == NULL)
		return;
	bytes[0] = 'X';
	CHECK(try_read(bytes, len, true, false, &err) == -1);
	CHECK_MSG(err.code == ARROW_ERR_CORRUPT && error_ok(&err), err.msg);
	bytes[0] = 'A';

	/* no trailer magic: INCOMPLETE */
	bytes[len - 1] = '2';
	CHECK(try_read(bytes, len, true, false, &err) == -1);
	CHECK_MSG(err.code == ARROW_ERR_INCOMPLETE && error_ok(&err), err.msg);
	bytes[len - 1] = '1';

	/* absurd footer lengths */
	memcpy(&flen, bytes + len - 10, 4);
	{
		static const int32_t bad[] = {0, -1, 0x7fffffff, 4, 7};
		int			i;

		for (i = 0; i < 5; i++)
		{
			memcpy(bytes + len - 10, &bad[i], 4);
			CHECK(try_read(bytes, len, i & 1, false, &err) == -1);
			CHECK_MSG(err.code == ARROW_ERR_CORRUPT && error_ok(&err), err.msg);
		}
	}
	memcpy(bytes + len - 10, &flen, 4);
	CHECK(try_read(bytes, len, true, false, &err) == 0);
	free(bytes);
}

/* Flip each byte of the metadata regions (and some of the body): no crash. */
TEST(test_corrupt_every_byte)
{
	static const char *const names[] = {"types.arrow", "types.arrows",
	"types_zstd.arrow", "dict_delta.arrows", "stats.arrow"};
	int			k;

	for (k = 0; k < 5; k++)
	{
		size_t		len,
					i;
		uint8_t    *bytes = slurp(names[k], &len);
		int			fails = 0;

		CHECK(bytes != NULL);
		if (bytes == NULL)
			return;
		for (i = 0; i < len; i++)
		{
			static const uint8_t xors[] = {0xff, 0x01, 0x80};
			int			x;

			for (x = 0; x < 3; x++)
			{
				ArrowError	err;

				bytes[i] ^= xors[x];
				memset(&err, 0, sizeof(err));
				if (try_read(bytes, len, (i + x) & 1, false, &err) < 0)
				{
					fails++;
					CHECK_MSG(error_ok(&err), err.msg);
				}
				bytes[i] ^= xors[x];
			}
		}
		/* plenty of damage must be noticed */
		CHECK(fails > (int) len / 4);
		free(bytes);
	}
}

/* Locate batch 0's buffers so that tests can damage them precisely. */
static int
batch0_meta(uint8_t *bytes, size_t len, ArrowFile *file, ArrowArena *arena,
			ArrowBatchMeta *meta, ArrowSource *src)
{
	ArrowError	err;

	arrow_source_mem(src, bytes, len, "bad.arrow");
	if (arrow_open(file, src, NULL, &err) < 0)
		return -1;
	return arrow_read_batch_meta(file, 0, arena, meta, &err);
}

TEST(test_damaged_buffers)
{
	size_t		len;
	uint8_t    *bytes = slurp("types.arrow", &len);
	uint8_t    *zb = NULL;
	size_t		zlen;
	ArrowFile	file;
	ArrowSource src;
	ArrowArena	arena;
	ArrowBatchMeta meta;
	ArrowError	err;
	const ArrowField *f;
	int32_t		v32;
	int64_t		off;

	CHECK(bytes != NULL);
	if (bytes == NULL)
		return;
	arrow_arena_init(&arena, NULL);
	CHECK(batch0_meta(bytes, len, &file, &arena, &meta, &src) == 0);
	if (unit_current_failed)
		return;

	/* utf8 offsets going backwards */
	f = &file.schema.fields[col_index(&file, "s")];
	off = meta.buffers[f->buffer_index + 1].offset;
	memcpy(&v32, bytes + off + 4, 4);
	{
		int32_t		bad = 1000;

		memcpy(bytes + off + 4, &bad, 4);
		CHECK(try_read(bytes, len, true, false, &err) == -1);
		CHECK_MSG(err.code == ARROW_ERR_CORRUPT && strstr(err.msg, "record batch 0") &&
				  strstr(err.msg, "\"s\""), err.msg);
		bad = -1;
		memcpy(bytes + off, &bad, 4);
		CHECK(try_read(bytes, len, false, false, &err) == -1);
		CHECK_MSG(err.code == ARROW_ERR_CORRUPT && strstr(err.msg, "negative"), err.msg);
		bad = 0;
		memcpy(bytes + off, &bad, 4);
	}
	memcpy(bytes + off + 4, &v32, 4);
	CHECK(try_read(bytes, len, true, false, &err) == 0);

	/* list offsets past the child */
	f = &file.schema.fields[col_index(&file, "lst")];
	off = meta.buffers[f->buffer_index + 1].offset;
	memcpy(&v32, bytes + off + 12, 4);
	{
		int32_t		bad = 3;

		memcpy(bytes + off + 12, &bad, 4);
		CHECK(try_read(bytes, len, true, false, &err) == -1);
		CHECK_MSG(err.code == ARROW_ERR_CORRUPT && strstr(err.msg, "child"), err.msg);
	}
	memcpy(bytes + off + 12, &v32, 4);

	/* dictionary index out of range */
	f = &file.schema.fields[col_index(&file, "dict")];
	off = meta.buffers[f->buffer_index + 1].offset;
	memcpy(&v32, bytes + off, 4);
	{
		int32_t		bad = 2;

		memcpy(bytes + off, &bad, 4);
		CHECK(try_read(bytes, len, true, false, &err) == -1);
		CHECK_MSG(err.code == ARROW_ERR_CORRUPT && strstr(err.msg, "dictionary index"),
				  err.msg);
	}
	memcpy(bytes + off, &v32, 4);
	CHECK(try_read(bytes, len, false, false, &err) == 0);
	arrow_close(&file);
	arrow_arena_free_all(&arena);

	/* a compressed buffer that claims an absurd uncompressed size */
	zb = slurp("types_zstd.arrow", &zlen);
	arrow_arena_init(&arena, NULL);
	CHECK(zb && batch0_meta(zb, zlen, &file, &arena, &meta, &src) == 0);
	if (!unit_current_failed)
	{
		int64_t		huge = INT64_C(1) << 40,
					saved;

		CHECK(meta.codec == ARROW_CODEC_ZSTD);
		f = &file.schema.fields[col_index(&file, "i32")];
		off = meta.buffers[f->buffer_index + 1].offset;
		memcpy(&saved, zb + off, 8);
		memcpy(zb + off, &huge, 8);
		CHECK(try_read(zb, zlen, true, false, &err) == -1);
		CHECK_MSG(err.code == ARROW_ERR_CORRUPT && strstr(err.msg, "claimed"), err.msg);
		huge = saved - 1;
		memcpy(zb + off, &huge, 8);
		CHECK(try_read(zb, zlen, false, false, &err) == -1);
		CHECK_MSG(err.code == ARROW_ERR_CORRUPT && strstr(err.msg, "uncompressed"), err.msg);
		huge = -2;
		memcpy(zb + off, &huge, 8);
		CHECK(try_read(zb, zlen, false, false, &err) == -1);
		CHECK_MSG(err.code == ARROW_ERR_CORRUPT, err.msg);
		memcpy(zb + off, &saved, 8);
		/* damage the compressed bytes themselves */
		zb[off + 8 + 4] ^= 0x55;
		CHECK(try_read(zb, zlen, true, false, &err) == -1);
		zb[off + 8 + 4] ^= 0x55;
		CHECK(try_read(zb, zlen, true, false, &err) == 0);
	}
	arrow_close(&file);
	arrow_arena_free_all(&arena);
	free(zb);
	free(bytes);
}

TEST(test_allocation_limit)
{
	Opened		o;
	ArrowError	err;
	ArrowAllocator limited = arrow_malloc_allocator;
	ArrowArena	arena;
	void	   *p;

	limited.max_alloc = 1000;
	arrow_arena_init(&arena, &limited);
	p = arrow_arena_alloc(&arena, 100, &err);
	CHECK(p != NULL && ((uintptr_t) p & 63) == 0);
	CHECK(arrow_arena_alloc(&arena, 1001, &err) == NULL && err.code == ARROW_ERR_NOMEM);
	p = arrow_arena_alloc(&arena, 999, &err);
	CHECK(p != NULL && ((uint8_t *) p)[998] == 0);
	CHECK(strcmp(arrow_arena_strdup(&arena, "hi", &err), "hi") == 0);
	arrow_arena_free_all(&arena);
	CHECK(arena.total == 0);

	/* the reader respects the limit too: the schema needs more */
	{
		ArrowSource src;
		ArrowOpenOptions opts;
		size_t		len;
		uint8_t    *bytes = slurp("types.arrow", &len);

		memset(&opts, 0, sizeof(opts));
		limited.max_alloc = 64;
		opts.allocator = &limited;
		arrow_source_mem(&src, bytes, len, "types.arrow");
		CHECK(arrow_open(&o.file, &src, &opts, &err) == -1 && err.code == ARROW_ERR_NOMEM);
		free(bytes);
	}
}

TEST(test_recover_tail)
{
	size_t		len;
	uint8_t    *bytes = slurp("types.arrow", &len);
	uint8_t    *big;
	ArrowError	err;
	ArrowSource src;
	ArrowFile	file;
	ArrowOpenOptions opts;
	int64_t		found;
	size_t		extra = 100000;

	CHECK(bytes != NULL);
	if (bytes == NULL)
		return;
	/* the file followed by the start of an interrupted append */
	big = malloc(len * 2 + extra);
	memcpy(big, bytes, len);
	memcpy(big + len, bytes + 8, len - 8);	/* messages and a stale footer */
	memset(big + 2 * len - 8, 0x5a, extra);
	memcpy(big + 2 * len - 8 + 500, "ARROW1", 6);	/* a false trailer */

	arrow_source_mem(&src, big, 2 * len - 8 + extra, "bad.arrow");
	CHECK(arrow_open(&file, &src, NULL, &err) == -1 && err.code == ARROW_ERR_INCOMPLETE);
	CHECK(arrow_find_last_footer(&src, &found, &err) == 0);
	/* the copied trailer at the end of the second copy is found first */
	CHECK(found == (int64_t) (2 * len - 8));

	/* with the second copy's trailer destroyed, the original prefix is found */
	memset(big + 2 * len - 14, 0, 6);
	CHECK_MSG(arrow_find_last_footer(&src, &found, &err) == 0, err.msg);
	CHECK(found == (int64_t) len);
	src.map = NULL;				/* and through reads */
	CHECK_MSG(arrow_find_last_footer(&src, &found, &err) == 0, err.msg);
	CHECK(found == (int64_t) len);
	memset(&opts, 0, sizeof(opts));
	opts.recover_tail = true;
	CHECK_MSG(arrow_open(&file, &src, &opts, &err) == 0, err.msg);
	CHECK(file.n_batches == 2 && file.src.size == len);
	arrow_close(&file);

	/* a complete file is its own answer */
	arrow_source_mem(&src, bytes, len, "bad.arrow");
	CHECK(arrow_find_last_footer(&src, &found, &err) == 0 && found == (int64_t) len);
	/* nothing to recover */
	arrow_source_mem(&src, bytes, len / 2, "bad.arrow");
	CHECK(arrow_find_last_footer(&src, &found, &err) == -1 &&
		  err.code == ARROW_ERR_INCOMPLETE && found == -1);
	CHECK(try_read(bytes, len / 2, true, true, &err) == -1 &&
		  err.code == ARROW_ERR_INCOMPLETE);
	free(big);
	free(bytes);
}

TEST(test_source_fd_limit)
{
	char		path[1024];
	int			fd;
	ArrowSource src;
	ArrowError	err;
	ArrowFile	file;

	snprintf(path, sizeof(path), "%s/types.arrow", data_dir);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	CHECK(arrow_source_fd(&src, fd, path, 100, &err) == 0 && src.size == 100);
	CHECK(arrow_open(&file, &src, NULL, &err) == -1 && err.code == ARROW_ERR_INCOMPLETE);
	CHECK_MSG(strstr(err.msg, "types.arrow") != NULL, err.msg);
	close(fd);
	CHECK(arrow_source_fd(&src, -1, "nofile", -1, &err) == -1 && err.code == ARROW_ERR_IO);
}

TEST(test_compression_roundtrip)
{
	uint8_t		in[5000],
				out[5000];
	uint8_t    *comp;
	size_t		clen;
	ArrowError	err;
	int			c,
				i;

	for (i = 0; i < 5000; i++)
		in[i] = (uint8_t) (i % 7 == 0 ? i : 3);
	for (c = 0; c < 2; c++)
	{
		ArrowCodec	codec = c == 0 ? ARROW_CODEC_LZ4_FRAME : ARROW_CODEC_ZSTD;

		comp = malloc(arrow_compress_bound(codec, sizeof(in)));
		CHECK(arrow_compress(codec, 0, in, sizeof(in), comp, &clen, &err) == 0);
		CHECK(clen < sizeof(in));
		CHECK(arrow_decompress(codec, comp, clen, out, sizeof(out), &err) == 0);
		CHECK(memcmp(in, out, sizeof(in)) == 0);
		/* a claimed size that differs, either way, is corrupt */
		CHECK(arrow_decompress(codec, comp, clen, out, sizeof(out) - 1, &err) == -1 &&
			  err.code == ARROW_ERR_CORRUPT);
		CHECK(arrow_decompress(codec, comp, clen, out, sizeof(out), &err) == 0);
		{
			uint8_t		more[5001];

			CHECK(arrow_decompress(codec, comp, clen, more, sizeof(more), &err) == -1);
		}
		CHECK(arrow_decompress(codec, comp, clen / 2, out, sizeof(out), &err) == -1);
		free(comp);
	}
}

/* Row i of a is valid (the array's offset applied). */
static bool
row_valid(const ArrowArray *a, int64_t i)
{
	return a->validity == NULL || arrow_get_bit(a->validity, a->offset + i);
}

/*
 * Rows [off, off + len) loaded by range equal the same rows of the whole
 * column: validity, null count and value bytes (bits for booleans,
 * indices and the same dictionary for dictionary columns).
 */
static bool
range_matches(const ArrowArray *whole, const ArrowArray *part, int64_t off, int64_t len)
{
	const ArrowField *f = whole->field;
	int64_t		nulls = 0,
				i;
	int			w;

	if (part->length != len || part->offset != 0 || part->field != f)
		return false;
	if (f->has_dict)
	{
		w = f->dict.index_type.bit_width / 8;
		if (part->dictionary == NULL || part->dictionary->length != whole->dictionary->length)
			return false;
	}
	else if (f->type.id == ARROW_TYPE_UTF8 || f->type.id == ARROW_TYPE_LARGE_UTF8 ||
			 f->type.id == ARROW_TYPE_BINARY || f->type.id == ARROW_TYPE_LARGE_BINARY)
		w = -1;
	else
		w = f->type.id == ARROW_TYPE_BOOL ? 0 : arrow_type_byte_width(&f->type);
	for (i = 0; i < len; i++)
	{
		bool		v = row_valid(whole, off + i);

		if (v != row_valid(part, i))
			return false;
		if (!v)
		{
			nulls++;
			continue;
		}
		if (w < 0)
		{
			int64_t		lw,
						lp;
			const uint8_t *bw = arrow_get_bytes(whole, off + i, &lw);
			const uint8_t *bp = arrow_get_bytes(part, i, &lp);

			/* the part's bytes lie within what it loaded */
			if (lw != lp || (lp > 0 && memcmp(bw, bp, lp) != 0) ||
				arrow_offset_at(part, i + 1) > part->data_len)
				return false;
		}
		else if (w == 0)
		{
			if (arrow_get_bit(whole->values, whole->offset + off + i) !=
				arrow_get_bit(part->values, i))
				return false;
		}
		else if (memcmp(whole->values + (whole->offset + off + i) * w,
						part->values + i * w, w) != 0)
			return false;
	}
	return part->null_count == nulls && (nulls > 0 || part->validity == NULL);
}

TEST(test_column_range)
{
	static const int64_t ranges[][2] = {
		{0, 1000}, {0, 0}, {0, 1}, {8, 13}, {496, 40}, {504, 64}, {992, 8},
		{1000, 0}, {128, 872}, {64, 64}
	};
	static const char *const loadable[] = {"i32", "i64", "b", "dict", "dec", "f64", "s"};
	Opened		o;
	ArrowArena	arena;
	ArrowBatchMeta meta;
	ArrowError	err;
	ArrowArray	whole,
				part;
	int			k,
				r,
				c;

	CHECK(open_fixture(&o, "range.arrow", SRC_FD, &err) == 0);
	if (unit_current_failed)
		return;
	arrow_arena_init(&arena, NULL);
	CHECK(arrow_read_batch_meta(&o.file, 0, &arena, &meta, &err) == 0);
	CHECK(meta.length == 1000);
	if (unit_current_failed)
		goto done;

	for (k = 0; k < (int) (sizeof(loadable) / sizeof(loadable[0])); k++)
	{
		c = col_index(&o.file, loadable[k]);
		CHECK_MSG(c >= 0 && arrow_column_range_loadable(&o.file, &meta, c), loadable[k]);
		CHECK(arrow_load_column(&o.file, 0, &meta, c, &arena, &whole, &err) == 0);
		for (r = 0; r < (int) (sizeof(ranges) / sizeof(ranges[0])); r++)
		{
			int			rc = arrow_load_column_range(&o.file, 0, &meta, c, ranges[r][0],
													 ranges[r][1], &arena, &part, &err);

			CHECK_MSG(rc == 0, err.msg);
			CHECK_MSG(rc == 0 && range_matches(&whole, &part, ranges[r][0], ranges[r][1]),
					  loadable[k]);
		}
	}
	/* the i32 column has nulls and a run of them: a range inside it has
	 * only nulls, one beside it none */
	c = col_index(&o.file, "i32");
	CHECK(arrow_load_column_range(&o.file, 0, &meta, c, 504, 24, &arena, &part, &err) == 0 &&
		  part.null_count == 24);
	c = col_index(&o.file, "i64");
	CHECK(arrow_load_column_range(&o.file, 0, &meta, c, 8, 100, &arena, &part, &err) == 0 &&
		  part.null_count == 0 && part.validity == NULL);

	/* misuse */
	CHECK(arrow_load_column_range(&o.file, 0, &meta, c, 4, 8, &arena, &part, &err) == -1 &&
		  err.code == ARROW_ERR_INVALID);
	CHECK(arrow_load_column_range(&o.file, 0, &meta, c, 992, 9, &arena, &part, &err) == -1 &&
		  err.code == ARROW_ERR_INVALID);
	CHECK(arrow_load_column_range(&o.file, 0, &meta, c, -8, 8, &arena, &part, &err) == -1 &&
		  err.code == ARROW_ERR_INVALID);
	CHECK(arrow_load_column_range(&o.file, 1, &meta, c, 0, 8, &arena, &part, &err) == -1 &&
		  err.code == ARROW_ERR_INVALID);
	/* a string range loads only its bytes: rows 992.. hold "992".."999" */
	c = col_index(&o.file, "s");
	CHECK(arrow_load_column_range(&o.file, 0, &meta, c, 992, 8, &arena, &part, &err) == 0 &&
		  part.data_len == 24);

	/* a values buffer shorter than the whole column needs is corrupt even
	 * when the range asked for lies inside it */
	c = col_index(&o.file, "i64");
	{
		ArrowBufferRef *ref = &meta.buffers[o.file.schema.fields[c].buffer_index + 1];
		int64_t		saved = ref->length;

		ref->length = 8 * 999;
		CHECK_MSG(arrow_load_column_range(&o.file, 0, &meta, c, 0, 8, &arena, &part, &err) == -1 &&
				  err.code == ARROW_ERR_CORRUPT && strstr(err.msg, "range.arrow") &&
				  strstr(err.msg, "shorter"), err.msg);
		ref->length = saved;
	}
	/* so is a validity bitmap */
	c = col_index(&o.file, "i32");
	{
		ArrowBufferRef *ref = &meta.buffers[o.file.schema.fields[c].buffer_index];
		int64_t		saved = ref->length;

		ref->length = 100;
		CHECK_MSG(arrow_load_column_range(&o.file, 0, &meta, c, 0, 8, &arena, &part, &err) == -1 &&
				  err.code == ARROW_ERR_CORRUPT, err.msg);
		ref->length = saved;
	}
done:
	arrow_arena_free_all(&arena);
	close_fixture(&o);

	/* compressed: not by range */
	CHECK(open_fixture(&o, "range_lz4.arrow", SRC_FD, &err) == 0);
	if (unit_current_failed)
		return;
	arrow_arena_init(&arena, NULL);
	CHECK(arrow_read_batch_meta(&o.file, 0, &arena, &meta, &err) == 0);
	c = col_index(&o.file, "i32");
	CHECK(!arrow_column_range_loadable(&o.file, &meta, c));
	CHECK_MSG(arrow_load_column_range(&o.file, 0, &meta, c, 0, 8, &arena, &part, &err) == -1 &&
			  err.code == ARROW_ERR_UNSUPPORTED && strstr(err.msg, "range_lz4.arrow"), err.msg);
	arrow_arena_free_all(&arena);
	close_fixture(&o);
}

/* A string column's offsets out of order inside the rows asked for are
 * corrupt; outside them they are not this load's business.  So is a last
 * offset beyond the data buffer. */
TEST(test_column_range_string_offsets)
{
	size_t		len;
	uint8_t    *bytes = slurp("range.arrow", &len);
	ArrowFile	file;
	ArrowSource src;
	ArrowArena	arena;
	ArrowBatchMeta meta;
	ArrowError	err;
	ArrowArray	part;
	const ArrowField *f;
	int			c;
	int64_t		off;
	int32_t		bad = 0x7fffff00;

	CHECK(bytes != NULL);
	if (bytes == NULL)
		return;
	arrow_arena_init(&arena, NULL);
	CHECK(batch0_meta(bytes, len, &file, &arena, &meta, &src) == 0);
	if (unit_current_failed)
		goto done;
	c = col_index(&file, "s");
	f = &file.schema.fields[c];
	off = meta.buffers[f->buffer_index + 1].offset;
	memcpy(bytes + off + 600 * 4, &bad, 4);
	CHECK_MSG(arrow_load_column_range(&file, 0, &meta, c, 592, 16, &arena, &part, &err) == -1 &&
			  err.code == ARROW_ERR_CORRUPT && strstr(err.msg, "smaller"), err.msg);
	CHECK_MSG(arrow_load_column_range(&file, 0, &meta, c, 0, 592, &arena, &part, &err) == 0,
			  err.msg);
	/* the range ending at row 600: its last offset passes the data buffer */
	CHECK_MSG(arrow_load_column_range(&file, 0, &meta, c, 592, 8, &arena, &part, &err) == -1 &&
			  err.code == ARROW_ERR_CORRUPT, err.msg);
	arrow_close(&file);
done:
	arrow_arena_free_all(&arena);
	free(bytes);
}

/* A dictionary index out of range inside the rows asked for is corrupt;
 * outside them it is not this load's business. */
TEST(test_column_range_dict_index)
{
	size_t		len;
	uint8_t    *bytes = slurp("range.arrow", &len);
	ArrowFile	file;
	ArrowSource src;
	ArrowArena	arena;
	ArrowBatchMeta meta;
	ArrowError	err;
	ArrowArray	part;
	const ArrowField *f;
	int			c,
				w;
	int64_t		off;

	CHECK(bytes != NULL);
	if (bytes == NULL)
		return;
	arrow_arena_init(&arena, NULL);
	CHECK(batch0_meta(bytes, len, &file, &arena, &meta, &src) == 0);
	if (unit_current_failed)
		goto done;
	c = col_index(&file, "dict");
	f = &file.schema.fields[c];
	w = f->dict.index_type.bit_width / 8;
	off = meta.buffers[f->buffer_index + 1].offset;
	memset(bytes + off + 600 * w, 0x7f, w);
	CHECK_MSG(arrow_load_column_range(&file, 0, &meta, c, 592, 16, &arena, &part, &err) == -1 &&
			  err.code == ARROW_ERR_CORRUPT, err.msg);
	CHECK_MSG(arrow_load_column_range(&file, 0, &meta, c, 0, 592, &arena, &part, &err) == 0,
			  err.msg);
	arrow_close(&file);
done:
	arrow_arena_free_all(&arena);
	free(bytes);
}

/* counting base allocator for the recycler test */
static int	base_live;

static void *
count_alloc(void *ctx, size_t size)
{
	(void) ctx;
	base_live++;
	return malloc(size);
}

static void
count_free(void *ctx, void *p)
{
	(void) ctx;
	base_live--;
	free(p);
}

TEST(recycler_reuses_and_releases)
{
	static const ArrowAllocator base = {count_alloc, count_free, NULL, 0};
	ArrowRecycler r;
	ArrowArena	arena;
	ArrowError	err;
	void	   *a,
			   *b,
			   *c;
	int			i;

	base_live = 0;
	arrow_recycler_init(&r, &base);
	a = r.alloc.alloc(r.alloc.ctx, 1000);
	CHECK(a != NULL && ((uintptr_t) a % 16) == 0 && base_live == 1);
	r.alloc.free(r.alloc.ctx, a);
	b = r.alloc.alloc(r.alloc.ctx, 900);	/* fits: the same block */
	CHECK(b == a && base_live == 1);
	c = r.alloc.alloc(r.alloc.ctx, 400);	/* b is in use */
	CHECK(c != NULL && c != b && base_live == 2);
	r.alloc.free(r.alloc.ctx, c);
	r.alloc.free(r.alloc.ctx, b);
	c = r.alloc.alloc(r.alloc.ctx, 150);	/* under half of both: a new one */
	CHECK(c != a && base_live == 3);
	r.alloc.free(r.alloc.ctx, c);
	/* arenas filled and freed again and again hold one working set */
	for (i = 0; i < 50; i++)
	{
		arrow_arena_init(&arena, &r.alloc);
		CHECK(arrow_arena_alloc(&arena, 1 << 20, &err) != NULL);
		CHECK(arrow_arena_alloc(&arena, 3 << 19, &err) != NULL);
		arrow_arena_free_all(&arena);
	}
	CHECK(base_live <= 6);
	arrow_recycler_release(&r);
	CHECK(base_live == 0);
}

int
main(void)
{
	set_data_dir();
	RUN(test_types_file);
	RUN(test_types_stream);
	RUN(test_types_compressed);
	RUN(test_sliced_compressed);
	RUN(test_schema_strings);
	RUN(test_dictionary_delta);
	RUN(test_stats);
	RUN(test_empty_and_slice);
	RUN(test_unsupported);
	RUN(test_truncated);
	RUN(test_bad_magic_and_trailer);
	RUN(test_corrupt_every_byte);
	RUN(test_damaged_buffers);
	RUN(test_allocation_limit);
	RUN(test_recover_tail);
	RUN(test_source_fd_limit);
	RUN(test_compression_roundtrip);
	RUN(test_column_range);
	RUN(test_column_range_dict_index);
	RUN(test_column_range_string_offsets);
	RUN(recycler_reuses_and_releases);
	UNIT_EXIT();
}
