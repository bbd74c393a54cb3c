/*
 * test_arrow_write.c — ArrowWriter and builders: every type written and read
 * back through the reader, batch thresholds, compression, statistics,
 * append (including after an interrupted append), abort, range errors,
 * copying arrays between files.
 *
 * Set PGWARP_KEEP_DIR to keep the written files there (for checking them
 * with pyarrow by hand).
 */
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/wait.h>

#include "arrow.h"
#include "unit.h"

static char dir[256];

static const char *
path_of(const char *name)
{
	static char buf[8][512];
	static int	k;
	const char *keep = getenv("PGWARP_KEEP_DIR");

	k = (k + 1) % 8;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", keep ? keep : dir, name);
	return buf[k];
}

static void
field_init(ArrowField *f, const char *name, ArrowTypeId id)
{
	memset(f, 0, sizeof(*f));
	f->name = (char *) name;
	f->nullable = true;
	f->type.id = id;
}

static void
int_field(ArrowField *f, const char *name, int bits, bool is_signed)
{
	field_init(f, name, ARROW_TYPE_INT);
	f->type.bit_width = bits;
	f->type.is_signed = is_signed;
}

/* An open file and its descriptor. */
typedef struct Opened
{
	int			fd;
	ArrowFile	file;
	bool		ok;
} Opened;

static bool
open_path(Opened *o, const char *path, int64_t limit, ArrowError *err)
{
	ArrowSource src;

	o->ok = false;
	o->fd = open(path, O_RDONLY);
	if (o->fd < 0)
	{
		snprintf(err->msg, sizeof(err->msg), "cannot open %s", path);
		return false;
	}
	if (arrow_source_fd(&src, o->fd, path, limit, err) < 0 ||
		arrow_open(&o->file, &src, NULL, err) < 0)
	{
		close(o->fd);
		return false;
	}
	o->ok = true;
	return true;
}

static void
close_opened(Opened *o)
{
	if (o->ok)
		arrow_close(&o->file);
	if (o->fd >= 0)
		close(o->fd);
	o->ok = false;
	o->fd = -1;
}

static bool
file_exists(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0;
}

static int64_t
file_size(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 ? (int64_t) st.st_size : -1;
}

/* No "<name>.tmp.*" left in the directory. */
static bool
no_tmp_files(const char *name)
{
	DIR		   *d = opendir(getenv("PGWARP_KEEP_DIR") ? getenv("PGWARP_KEEP_DIR") : dir);
	struct dirent *e;
	bool		ok = true;
	char		prefix[300];

	snprintf(prefix, sizeof(prefix), "%s.tmp.", name);
	if (d == NULL)
		return false;
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
			ok = false;
	closedir(d);
	return ok;
}

/* ------------------------------------------------------------------ all types */

enum
{
	C_I8, C_U16, C_I32, C_U64, C_F16, C_F32, C_F64, C_DEC, C_BOOL, C_D32, C_D64,
	C_T32, C_T64, C_TSU, C_TSS, C_IYM, C_IDT, C_IMDN, C_DUR, C_UTF8, C_LUTF8,
	C_BIN, C_LBIN, C_FSB, C_LIST, C_LLIST, C_FSL, C_STRUCT, C_MAP, C_NULL,
	C_DICT, C_DICTI, C_LISTDICT, N_COLS
};

static ArrowField all_fields[N_COLS];
static ArrowField all_children[16];
static ArrowField map_entries_children[2];

static void
build_all_schema(ArrowSchema *s)
{
	ArrowField *f = all_fields;
	ArrowField *c = all_children;

	memset(s, 0, sizeof(*s));
	int_field(&f[C_I8], "i8", 8, true);
	int_field(&f[C_U16], "u16", 16, false);
	int_field(&f[C_I32], "i32", 32, true);
	int_field(&f[C_U64], "u64", 64, false);
	field_init(&f[C_F16], "f16", ARROW_TYPE_FLOAT);
	f[C_F16].type.precision = ARROW_PRECISION_HALF;
	field_init(&f[C_F32], "f32", ARROW_TYPE_FLOAT);
	f[C_F32].type.precision = ARROW_PRECISION_SINGLE;
	field_init(&f[C_F64], "f64", ARROW_TYPE_FLOAT);
	f[C_F64].type.precision = ARROW_PRECISION_DOUBLE;
	field_init(&f[C_DEC], "dec", ARROW_TYPE_DECIMAL);
	f[C_DEC].type.dec_precision = 10;
	f[C_DEC].type.dec_scale = 2;
	f[C_DEC].type.bit_width = 128;
	field_init(&f[C_BOOL], "b", ARROW_TYPE_BOOL);
	field_init(&f[C_D32], "d32", ARROW_TYPE_DATE);
	f[C_D32].type.unit = ARROW_DATE_DAY;
	field_init(&f[C_D64], "d64", ARROW_TYPE_DATE);
	f[C_D64].type.unit = ARROW_DATE_MILLISECOND;
	field_init(&f[C_T32], "t32", ARROW_TYPE_TIME);
	f[C_T32].type.unit = ARROW_TIME_MILLISECOND;
	f[C_T32].type.bit_width = 32;
	field_init(&f[C_T64], "t64", ARROW_TYPE_TIME);
	f[C_T64].type.unit = ARROW_TIME_NANOSECOND;
	f[C_T64].type.bit_width = 64;
	field_init(&f[C_TSU], "tsu", ARROW_TYPE_TIMESTAMP);
	f[C_TSU].type.unit = ARROW_TIME_MICROSECOND;
	f[C_TSU].type.timezone = "UTC";
	field_init(&f[C_TSS], "tss", ARROW_TYPE_TIMESTAMP);
	f[C_TSS].type.unit = ARROW_TIME_SECOND;
	field_init(&f[C_IYM], "iym", ARROW_TYPE_INTERVAL);
	f[C_IYM].type.unit = ARROW_INTERVAL_YEAR_MONTH;
	field_init(&f[C_IDT], "idt", ARROW_TYPE_INTERVAL);
	f[C_IDT].type.unit = ARROW_INTERVAL_DAY_TIME;
	field_init(&f[C_IMDN], "imdn", ARROW_TYPE_INTERVAL);
	f[C_IMDN].type.unit = ARROW_INTERVAL_MONTH_DAY_NANO;
	field_init(&f[C_DUR], "dur", ARROW_TYPE_DURATION);
	f[C_DUR].type.unit = ARROW_TIME_MILLISECOND;
	field_init(&f[C_UTF8], "utf8", ARROW_TYPE_UTF8);
	field_init(&f[C_LUTF8], "lutf8", ARROW_TYPE_LARGE_UTF8);
	field_init(&f[C_BIN], "bin", ARROW_TYPE_BINARY);
	field_init(&f[C_LBIN], "lbin", ARROW_TYPE_LARGE_BINARY);
	field_init(&f[C_FSB], "fsb", ARROW_TYPE_FIXED_SIZE_BINARY);
	f[C_FSB].type.fixed_size = 4;

	field_init(&f[C_LIST], "list", ARROW_TYPE_LIST);
	int_field(&c[0], "item", 32, true);
	f[C_LIST].n_children = 1;
	f[C_LIST].children = &c[0];

	field_init(&f[C_LLIST], "llist", ARROW_TYPE_LARGE_LIST);
	field_init(&c[1], "item", ARROW_TYPE_UTF8);
	f[C_LLIST].n_children = 1;
	f[C_LLIST].children = &c[1];

	field_init(&f[C_FSL], "fsl", ARROW_TYPE_FIXED_SIZE_LIST);
	f[C_FSL].type.fixed_size = 2;
	field_init(&c[2], "item", ARROW_TYPE_FLOAT);
	c[2].type.precision = ARROW_PRECISION_DOUBLE;
	f[C_FSL].n_children = 1;
	f[C_FSL].children = &c[2];

	field_init(&f[C_STRUCT], "st", ARROW_TYPE_STRUCT);
	int_field(&c[3], "x", 32, true);
	field_init(&c[4], "y", ARROW_TYPE_UTF8);
	f[C_STRUCT].n_children = 2;
	f[C_STRUCT].children = &c[3];

	field_init(&f[C_MAP], "map", ARROW_TYPE_MAP);
	field_init(&c[5], "entries", ARROW_TYPE_STRUCT);
	c[5].nullable = false;
	field_init(&map_entries_children[0], "key", ARROW_TYPE_UTF8);
	map_entries_children[0].nullable = false;
	int_field(&map_entries_children[1], "value", 64, true);
	c[5].n_children = 2;
	c[5].children = map_entries_children;
	f[C_MAP].n_children = 1;
	f[C_MAP].children = &c[5];

	field_init(&f[C_NULL], "nul", ARROW_TYPE_NULL);

	field_init(&f[C_DICT], "dict", ARROW_TYPE_UTF8);
	f[C_DICT].has_dict = true;
	f[C_DICT].dict.id = 7;
	int_field((ArrowField *) &c[6], "", 8, true);
	f[C_DICT].dict.index_type = c[6].type;

	field_init(&f[C_DICTI], "dicti", ARROW_TYPE_INT);
	f[C_DICTI].type.bit_width = 32;
	f[C_DICTI].type.is_signed = true;
	f[C_DICTI].has_dict = true;
	f[C_DICTI].dict.id = 7;		/* duplicate: the writer renumbers */
	f[C_DICTI].dict.index_type.id = ARROW_TYPE_INT;
	f[C_DICTI].dict.index_type.bit_width = 16;
	f[C_DICTI].dict.index_type.is_signed = true;

	field_init(&f[C_LISTDICT], "listdict", ARROW_TYPE_LIST);
	field_init(&c[7], "item", ARROW_TYPE_UTF8);
	c[7].has_dict = true;
	c[7].dict.id = 9;
	f[C_LISTDICT].n_children = 1;
	f[C_LISTDICT].children = &c[7];

	s->n_fields = N_COLS;
	s->fields = f;
}

static bool
is_null_row(int64_t i, int col)
{
	return col != C_NULL && (i + col) % 7 == 3;
}

static const char *words[] = {"alpha", "beta", "gamma", "", "delta", "épsilon"};

#define TRY(call) do { if ((call) < 0) { CHECK_MSG(0, err.msg); return -1; } } while (0)

static int
append_all_row(ArrowWriter *w, int64_t i)
{
	ArrowError	err;
	int			col;

	for (col = 0; col < N_COLS; col++)
	{
		ArrowBuilder *b = arrow_writer_column(w, col);
		char		buf[64];
		int			k;

		if (col == C_NULL || is_null_row(i, col))
		{
			TRY(arrow_builder_append_null(b, &err));
			continue;
		}
		switch (col)
		{
			case C_I8:
				TRY(arrow_builder_append_int(b, (i % 256) - 128, &err));
				break;
			case C_U16:
				TRY(arrow_builder_append_int(b, i * 1000 % 65536, &err));
				break;
			case C_I32:
				TRY(arrow_builder_append_int(b, (int64_t) i * 100003 - 5000000, &err));
				break;
			case C_U64:
				TRY(arrow_builder_append_uint64(b, UINT64_MAX - (uint64_t) i, &err));
				break;
			case C_F16:
				TRY(arrow_builder_append_double(b, i * 0.5 - 3, &err));
				break;
			case C_F32:
			case C_F64:
				TRY(arrow_builder_append_double(b, i * 1.25 - 7, &err));
				break;
			case C_DEC:
				TRY(arrow_builder_append_decimal(b, (uint64_t) (i * 12345 - 99999), (i * 12345 - 99999) < 0 ? -1 : 0, &err));
				break;
			case C_BOOL:
				TRY(arrow_builder_append_bool(b, i % 3 == 0, &err));
				break;
			case C_D32:
				TRY(arrow_builder_append_int(b, 19000 + i, &err));
				break;
			case C_D64:
				TRY(arrow_builder_append_int(b, (19000 + i) * 86400000LL, &err));
				break;
			case C_T32:
				TRY(arrow_builder_append_int(b, i * 1000, &err));
				break;
			case C_T64:
				TRY(arrow_builder_append_int(b, i * 1000000000LL, &err));
				break;
			case C_TSU:
				TRY(arrow_builder_append_int(b, 1700000000000000LL + i, &err));
				break;
			case C_TSS:
				TRY(arrow_builder_append_int(b, -86400 * i, &err));
				break;
			case C_IYM:
				TRY(arrow_builder_append_interval(b, (int32_t) i, 0, 0, &err));
				break;
			case C_IDT:
				TRY(arrow_builder_append_interval(b, 0, (int32_t) i, i * 1000000LL, &err));
				break;
			case C_IMDN:
				TRY(arrow_builder_append_interval(b, (int32_t) i, -(int32_t) i, i * 7, &err));
				break;
			case C_DUR:
				TRY(arrow_builder_append_int(b, -i * 5, &err));
				break;
			case C_UTF8:
			case C_LUTF8:
			case C_BIN:
			case C_LBIN:
				snprintf(buf, sizeof(buf), "%s%lld", words[i % 6], (long long) i);
				TRY(arrow_builder_append_bytes(b, buf, strlen(buf), &err));
				break;
			case C_FSB:
				memcpy(buf, &i, 4);
				TRY(arrow_builder_append_bytes(b, buf, 4, &err));
				break;
			case C_LIST:
				TRY(arrow_builder_list_begin(b, &err));
				for (k = 0; k < i % 4; k++)
				{
					if (k == 2)
						TRY(arrow_builder_append_null(arrow_builder_child(b, 0), &err));
					else
						TRY(arrow_builder_append_int(arrow_builder_child(b, 0), i * 10 + k, &err));
				}
				TRY(arrow_builder_list_end(b, &err));
				break;
			case C_LLIST:
				TRY(arrow_builder_list_begin(b, &err));
				for (k = 0; k < i % 3; k++)
					TRY(arrow_builder_append_bytes(arrow_builder_child(b, 0), words[k], strlen(words[k]), &err));
				TRY(arrow_builder_list_end(b, &err));
				break;
			case C_FSL:
				TRY(arrow_builder_list_begin(b, &err));
				TRY(arrow_builder_append_double(arrow_builder_child(b, 0), (double) i, &err));
				TRY(arrow_builder_append_double(arrow_builder_child(b, 0), -(double) i, &err));
				TRY(arrow_builder_list_end(b, &err));
				break;
			case C_STRUCT:
				TRY(arrow_builder_append_int(arrow_builder_child(b, 0), i, &err));
				if (i % 5 == 0)
					TRY(arrow_builder_append_null(arrow_builder_child(b, 1), &err));
				else
					TRY(arrow_builder_append_bytes(arrow_builder_child(b, 1), words[i % 6], strlen(words[i % 6]), &err));
				TRY(arrow_builder_struct_valid(b, &err));
				break;
			case C_MAP:
				{
					ArrowBuilder *e = arrow_builder_child(b, 0);

					TRY(arrow_builder_list_begin(b, &err));
					for (k = 0; k < i % 3; k++)
					{
						snprintf(buf, sizeof(buf), "k%d", k);
						TRY(arrow_builder_append_bytes(arrow_builder_child(e, 0), buf, strlen(buf), &err));
						TRY(arrow_builder_append_int(arrow_builder_child(e, 1), i + k, &err));
						TRY(arrow_builder_struct_valid(e, &err));
					}
					TRY(arrow_builder_list_end(b, &err));
					break;
				}
			case C_DICT:
				TRY(arrow_builder_append_bytes(b, words[i % 6], strlen(words[i % 6]), &err));
				break;
			case C_DICTI:
				TRY(arrow_builder_append_int(b, (i % 5) * 1000, &err));
				break;
			case C_LISTDICT:
				TRY(arrow_builder_list_begin(b, &err));
				for (k = 0; k < 2; k++)
					TRY(arrow_builder_append_bytes(arrow_builder_child(b, 0), words[(i + k) % 4], strlen(words[(i + k) % 4]), &err));
				TRY(arrow_builder_list_end(b, &err));
				break;
		}
	}
	TRY(arrow_writer_end_row(w, &err));
	return 0;
}

/* Check row i (file row) of a loaded batch at batch row r. */
static void
check_all_row(const ArrowRecordBatch *rb, int64_t r, int64_t i)
{
	int			col;
	char		buf[64];
	int64_t		len;
	const uint8_t *p;

	for (col = 0; col < N_COLS; col++)
	{
		const ArrowArray *a = &rb->columns[col];

		if (col == C_NULL || is_null_row(i, col))
		{
			CHECK(arrow_is_null(a, r));
			continue;
		}
		CHECK(!arrow_is_null(a, r));
		if (unit_current_failed)
		{
			printf("  column %d row %lld\n", col, (long long) i);
			return;
		}
		switch (col)
		{
			case C_I8:
				CHECK(arrow_get_int(a, r) == (i % 256) - 128);
				break;
			case C_U16:
				CHECK(arrow_get_int(a, r) == i * 1000 % 65536);
				break;
			case C_I32:
				CHECK(arrow_get_int(a, r) == (int64_t) i * 100003 - 5000000);
				break;
			case C_U64:
				CHECK(arrow_get_uint64(a, r) == UINT64_MAX - (uint64_t) i);
				break;
			case C_F16:
				CHECK(arrow_get_double(a, r) == i * 0.5 - 3);
				break;
			case C_F32:
			case C_F64:
				CHECK(arrow_get_double(a, r) == i * 1.25 - 7);
				break;
			case C_DEC:
				{
					__int128	v;

					p = arrow_get_bytes(a, r, &len);
					memcpy(&v, p, 16);
					CHECK(len == 16 && v == (__int128) (i * 12345 - 99999));
					break;
				}
			case C_BOOL:
				CHECK(arrow_get_int(a, r) == (i % 3 == 0));
				break;
			case C_D32:
				CHECK(arrow_get_int(a, r) == 19000 + i);
				break;
			case C_D64:
				CHECK(arrow_get_int(a, r) == (19000 + i) * 86400000LL);
				break;
			case C_T32:
				CHECK(arrow_get_int(a, r) == i * 1000);
				break;
			case C_T64:
				CHECK(arrow_get_int(a, r) == i * 1000000000LL);
				break;
			case C_TSU:
				CHECK(arrow_get_int(a, r) == 1700000000000000LL + i);
				break;
			case C_TSS:
				CHECK(arrow_get_int(a, r) == -86400 * i);
				break;
			case C_IYM:
				CHECK(((const int32_t *) a->values)[r] == i);
				break;
			case C_IDT:
				CHECK(((const int32_t *) a->values)[2 * r] == i &&
					  ((const int32_t *) a->values)[2 * r + 1] == i);
				break;
			case C_IMDN:
				{
					int32_t		m,
								d;
					int64_t		ns;

					memcpy(&m, a->values + 16 * r, 4);
					memcpy(&d, a->values + 16 * r + 4, 4);
					memcpy(&ns, a->values + 16 * r + 8, 8);
					CHECK(m == i && d == -i && ns == i * 7);
					break;
				}
			case C_DUR:
				CHECK(arrow_get_int(a, r) == -i * 5);
				break;
			case C_UTF8:
			case C_LUTF8:
			case C_BIN:
			case C_LBIN:
				snprintf(buf, sizeof(buf), "%s%lld", words[i % 6], (long long) i);
				p = arrow_get_bytes(a, r, &len);
				CHECK(len == (int64_t) strlen(buf) && memcmp(p, buf, len) == 0);
				break;
			case C_FSB:
				p = arrow_get_bytes(a, r, &len);
				CHECK(len == 4 && memcmp(p, &i, 4) == 0);
				break;
			case C_LIST:
				{
					int64_t		o0 = arrow_offset_at(a, r);
					int64_t		o1 = arrow_offset_at(a, r + 1);
					int64_t		k;

					CHECK(o1 - o0 == i % 4);
					for (k = 0; k < o1 - o0; k++)
					{
						if (k == 2)
							CHECK(arrow_is_null(&a->children[0], o0 + k));
						else
							CHECK(arrow_get_int(&a->children[0], o0 + k) == i * 10 + k);
					}
					break;
				}
			case C_LLIST:
				{
					int64_t		o0 = arrow_offset_at(a, r);
					int64_t		o1 = arrow_offset_at(a, r + 1);
					int64_t		k;

					CHECK(o1 - o0 == i % 3);
					for (k = 0; k < o1 - o0; k++)
					{
						p = arrow_get_bytes(&a->children[0], o0 + k, &len);
						CHECK(len == (int64_t) strlen(words[k]) && memcmp(p, words[k], len) == 0);
					}
					break;
				}
			case C_FSL:
				CHECK(arrow_get_double(&a->children[0], 2 * r) == (double) i);
				CHECK(arrow_get_double(&a->children[0], 2 * r + 1) == -(double) i);
				break;
			case C_STRUCT:
				CHECK(arrow_get_int(&a->children[0], r) == i);
				if (i % 5 == 0)
					CHECK(arrow_is_null(&a->children[1], r));
				else
				{
					p = arrow_get_bytes(&a->children[1], r, &len);
					CHECK(len == (int64_t) strlen(words[i % 6]) && memcmp(p, words[i % 6], len) == 0);
				}
				break;
			case C_MAP:
				{
					int64_t		o0 = arrow_offset_at(a, r);
					int64_t		o1 = arrow_offset_at(a, r + 1);
					const ArrowArray *e = &a->children[0];
					int64_t		k;

					CHECK(o1 - o0 == i % 3);
					for (k = 0; k < o1 - o0; k++)
					{
						snprintf(buf, sizeof(buf), "k%d", (int) k);
						p = arrow_get_bytes(&e->children[0], o0 + k, &len);
						CHECK(len == (int64_t) strlen(buf) && memcmp(p, buf, len) == 0);
						CHECK(arrow_get_int(&e->children[1], o0 + k) == i + k);
					}
					break;
				}
			case C_DICT:
				{
					int64_t		di = arrow_get_dict_index(a, r);

					p = arrow_get_bytes(a->dictionary, di, &len);
					CHECK(len == (int64_t) strlen(words[i % 6]) && memcmp(p, words[i % 6], len) == 0);
					break;
				}
			case C_DICTI:
				{
					int64_t		di = arrow_get_dict_index(a, r);

					CHECK(arrow_get_int(a->dictionary, di) == (i % 5) * 1000);
					break;
				}
			case C_LISTDICT:
				{
					int64_t		o0 = arrow_offset_at(a, r);
					const ArrowArray *c = &a->children[0];
					int64_t		k;

					CHECK(arrow_offset_at(a, r + 1) - o0 == 2);
					for (k = 0; k < 2; k++)
					{
						int64_t		di = arrow_get_dict_index(c, o0 + k);
						const char *wd = words[(i + k) % 4];

						p = arrow_get_bytes(c->dictionary, di, &len);
						CHECK(len == (int64_t) strlen(wd) && memcmp(p, wd, len) == 0);
					}
					break;
				}
		}
		if (unit_current_failed)
		{
			printf("  column %d row %lld\n", col, (long long) i);
			return;
		}
	}
}

/* Read every batch of path and check rows; returns total rows. */
static int64_t
check_all_file(const char *path, int64_t first_row)
{
	Opened		o;
	ArrowError	err;
	int64_t		row = first_row;
	int			b;

	if (!open_path(&o, path, -1, &err))
	{
		CHECK_MSG(0, err.msg);
		return -1;
	}
	for (b = 0; b < o.file.n_batches && !unit_current_failed; b++)
	{
		ArrowArena	arena;
		ArrowRecordBatch rb;
		int64_t		r;

		arrow_arena_init(&arena, NULL);
		if (arrow_load_batch(&o.file, b, &arena, &rb, &err) < 0)
		{
			CHECK_MSG(0, err.msg);
			arrow_arena_free_all(&arena);
			break;
		}
		for (r = 0; r < rb.length && !unit_current_failed; r++)
			check_all_row(&rb, r, row + r);
		row += rb.length;
		arrow_arena_free_all(&arena);
	}
	close_opened(&o);
	return row - first_row;
}

static int
write_all(const char *path, int64_t n, const ArrowWriterOptions *opts)
{
	ArrowSchema s;
	ArrowWriter *w;
	ArrowError	err;
	int64_t		i;

	build_all_schema(&s);
	if (arrow_writer_create(&w, path, &s, true, opts, &err) < 0)
	{
		CHECK_MSG(0, err.msg);
		return -1;
	}
	for (i = 0; i < n; i++)
		if (append_all_row(w, i) < 0)
		{
			arrow_writer_abort(w);
			return -1;
		}
	if (arrow_writer_close(w, &err) < 0)
	{
		CHECK_MSG(0, err.msg);
		return -1;
	}
	return 0;
}

TEST(all_types_roundtrip)
{
	ArrowWriterOptions o;

	memset(&o, 0, sizeof(o));
	o.codec = ARROW_CODEC_NONE;
	o.batch_rows = 37;
	CHECK(write_all(path_of("all.arrow"), 100, &o) == 0);
	CHECK(check_all_file(path_of("all.arrow"), 0) == 100);
	CHECK(no_tmp_files("all.arrow"));
}

TEST(all_types_lz4)
{
	ArrowWriterOptions o;

	memset(&o, 0, sizeof(o));
	o.codec = ARROW_CODEC_LZ4_FRAME;
	o.batch_rows = 64;
	CHECK(write_all(path_of("all_lz4.arrow"), 200, &o) == 0);
	CHECK(check_all_file(path_of("all_lz4.arrow"), 0) == 200);
}

TEST(all_types_zstd)
{
	ArrowWriterOptions o;

	memset(&o, 0, sizeof(o));
	o.codec = ARROW_CODEC_ZSTD;
	o.compression_level = 3;
	CHECK(write_all(path_of("all_zstd.arrow"), 300, &o) == 0);
	CHECK(check_all_file(path_of("all_zstd.arrow"), 0) == 300);
}

/* ------------------------------------------------------------------ thresholds */

static int64_t
batch_len(Opened *o, int b)
{
	ArrowArena	arena;
	ArrowBatchMeta m;
	ArrowError	err;
	int64_t		n = -1;

	arrow_arena_init(&arena, NULL);
	if (arrow_read_batch_meta(&o->file, b, &arena, &m, &err) == 0)
		n = m.length;
	arrow_arena_free_all(&arena);
	return n;
}

TEST(threshold_batch_rows)
{
	ArrowSchema s;
	ArrowField f;
	ArrowWriter *w;
	ArrowError	err;
	ArrowWriterOptions o;
	Opened		op;
	int64_t		i;
	const char *p = path_of("rows.arrow");

	memset(&o, 0, sizeof(o));
	o.codec = ARROW_CODEC_NONE;
	o.batch_rows = 100;
	int_field(&f, "x", 64, true);
	memset(&s, 0, sizeof(s));
	s.n_fields = 1;
	s.fields = &f;
	CHECK_MSG(arrow_writer_create(&w, p, &s, true, &o, &err) == 0, err.msg);
	if (unit_current_failed)
		return;
	for (i = 0; i < 1050; i++)
	{
		CHECK(arrow_builder_append_int(arrow_writer_column(w, 0), i, &err) == 0);
		CHECK(arrow_writer_end_row(w, &err) == 0);
	}
	CHECK(arrow_writer_batches(w) == 10);
	CHECK(arrow_writer_rows(w) == 1000);
	CHECK_MSG(arrow_writer_close(w, &err) == 0, err.msg);
	CHECK_MSG(open_path(&op, p, -1, &err), err.msg);
	if (unit_current_failed)
		return;
	CHECK(op.file.n_batches == 11);
	CHECK(batch_len(&op, 0) == 100);
	CHECK(batch_len(&op, 10) == 50);
	close_opened(&op);
}

/* The default 8 MB cap on a fixed-width buffer: Decimal128 is 16 bytes, so
 * a batch holds 524288 rows. */
TEST(threshold_buffer_cap)
{
	ArrowSchema s;
	ArrowField f[2];
	ArrowWriter *w;
	ArrowError	err;
	Opened		op;
	int64_t		i;
	const char *p = path_of("cap.arrow");

	field_init(&f[0], "d", ARROW_TYPE_DECIMAL);
	f[0].type.dec_precision = 38;
	f[0].type.dec_scale = 0;
	int_field(&f[1], "i", 8, true);
	memset(&s, 0, sizeof(s));
	s.n_fields = 2;
	s.fields = f;
	CHECK_MSG(arrow_writer_create(&w, p, &s, true, NULL, &err) == 0, err.msg);
	if (unit_current_failed)
		return;
	for (i = 0; i < 600000 && !unit_current_failed; i++)
	{
		CHECK(arrow_builder_append_decimal(arrow_writer_column(w, 0), (uint64_t) i, 0, &err) == 0);
		CHECK(arrow_builder_append_int(arrow_writer_column(w, 1), i % 100, &err) == 0);
		CHECK(arrow_writer_end_row(w, &err) == 0);
	}
	CHECK_MSG(arrow_writer_close(w, &err) == 0, err.msg);
	CHECK_MSG(open_path(&op, p, -1, &err), err.msg);
	if (unit_current_failed)
		return;
	CHECK(op.file.n_batches == 2);
	CHECK(batch_len(&op, 0) == 524288);
	CHECK(batch_len(&op, 1) == 600000 - 524288);
	close_opened(&op);
}

/* ------------------------------------------------------------------ statistics */

TEST(statistics_strings)
{
	ArrowSchema s;
	ArrowField f[6];
	ArrowWriter *w;
	ArrowError	err;
	ArrowWriterOptions o;
	Opened		op;
	const char *p = path_of("stats.arrow");
	int			i;
	ArrowArena	arena;
	ArrowStatValue *mins,
			   *maxs;
	/* 3 batches of 3 rows */
	const double dv[9] = {1.5, NAN, -INFINITY, 0.1, 2, 3, INFINITY, NAN, -0.0};

	memset(&o, 0, sizeof(o));
	o.codec = ARROW_CODEC_NONE;
	o.batch_rows = 3;
	int_field(&f[0], "i", 32, true);
	field_init(&f[1], "f", ARROW_TYPE_FLOAT);
	f[1].type.precision = ARROW_PRECISION_DOUBLE;
	field_init(&f[2], "t", ARROW_TYPE_UTF8);
	int_field(&f[3], "u", 64, false);
	field_init(&f[4], "d", ARROW_TYPE_DECIMAL);
	f[4].type.dec_precision = 38;
	f[4].type.dec_scale = 3;
	field_init(&f[5], "ts", ARROW_TYPE_TIMESTAMP);
	f[5].type.unit = ARROW_TIME_NANOSECOND;
	/* stale statistics in the input schema are not copied */
	{
		static ArrowKeyValue kv[2] = {{"min_values", "bogus"}, {"pg_type", "int4"}};

		f[0].metadata = kv;
		f[0].n_metadata = 2;
	}
	memset(&s, 0, sizeof(s));
	s.n_fields = 6;
	s.fields = f;
	CHECK_MSG(arrow_writer_create(&w, p, &s, true, &o, &err) == 0, err.msg);
	if (unit_current_failed)
		return;
	for (i = 0; i < 9; i++)
	{
		/* batch 1 (rows 3..5) of column i is all null */
		if (i >= 3 && i < 6)
			CHECK(arrow_builder_append_null(arrow_writer_column(w, 0), &err) == 0);
		else
			CHECK(arrow_builder_append_int(arrow_writer_column(w, 0), (i * 7) % 5 - 2, &err) == 0);
		CHECK(arrow_builder_append_double(arrow_writer_column(w, 1), dv[i], &err) == 0);
		CHECK(arrow_builder_append_bytes(arrow_writer_column(w, 2), "x", 1, &err) == 0);
		CHECK(arrow_builder_append_uint64(arrow_writer_column(w, 3), UINT64_MAX - i, &err) == 0);
		if (i == 4)
			CHECK(arrow_builder_append_decimal(arrow_writer_column(w, 4), 0, INT64_MIN / 2, &err) == 0);
		else
			CHECK(arrow_builder_append_decimal(arrow_writer_column(w, 4), (uint64_t) (-(int64_t) i), i ? -1 : 0, &err) == 0);
		CHECK(arrow_builder_append_int(arrow_writer_column(w, 5), INT64_MIN + i, &err) == 0);
		CHECK_MSG(arrow_writer_end_row(w, &err) == 0, err.msg);
	}
	CHECK_MSG(arrow_writer_close(w, &err) == 0, err.msg);
	CHECK_MSG(open_path(&op, p, -1, &err), err.msg);
	if (unit_current_failed)
		return;
	/* i: rows 0,1,2 -> -2,0,2 ; 6,7,8 -> 0,2,-1 */
	CHECK(strcmp(arrow_field_metadata(&op.file.schema.fields[0], "min_values"), "-2,,-1") == 0);
	CHECK(strcmp(arrow_field_metadata(&op.file.schema.fields[0], "max_values"), "2,,2") == 0);
	CHECK(strcmp(arrow_field_metadata(&op.file.schema.fields[0], "pg_type"), "int4") == 0);
	CHECK(strcmp(arrow_field_metadata(&op.file.schema.fields[1], "min_values"), "-inf,0.10000000000000001,-0") == 0);
	CHECK(strcmp(arrow_field_metadata(&op.file.schema.fields[1], "max_values"), "nan,3,nan") == 0);
	CHECK(arrow_field_metadata(&op.file.schema.fields[2], "min_values") == NULL);
	CHECK(strcmp(arrow_field_metadata(&op.file.schema.fields[3], "min_values"),
				 "18446744073709551613,18446744073709551610,18446744073709551607") == 0);
	CHECK(strcmp(arrow_field_metadata(&op.file.schema.fields[3], "max_values"),
				 "18446744073709551615,18446744073709551612,18446744073709551609") == 0);
	CHECK(strcmp(arrow_field_metadata(&op.file.schema.fields[4], "min_values"),
				 "-2,-85070591730234615865843651857942052864,-8") == 0);
	CHECK(strcmp(arrow_field_metadata(&op.file.schema.fields[5], "min_values"),
				 "-9223372036854775808,-9223372036854775805,-9223372036854775802") == 0);

	/* the reader parses them back */
	arrow_arena_init(&arena, NULL);
	CHECK(arrow_field_stats(&op.file, 0, &arena, &mins, &maxs));
	if (!unit_current_failed)
	{
		CHECK(mins[0].present && mins[0].i == -2 && !mins[1].present && maxs[2].i == 2);
	}
	CHECK(arrow_field_stats(&op.file, 1, &arena, &mins, &maxs));
	if (!unit_current_failed)
	{
		CHECK(mins[0].is_float && isinf(mins[0].d) && mins[0].d < 0);
		CHECK(isnan(maxs[0].d) && mins[1].d == 0.1);
	}
	arrow_arena_free_all(&arena);
	close_opened(&op);
}

/* ------------------------------------------------------------------ append */

static int
write_ints(ArrowWriter *w, int64_t from, int64_t n)
{
	ArrowError	err;
	int64_t		i;
	char		buf[32];

	for (i = from; i < from + n; i++)
	{
		snprintf(buf, sizeof(buf), "w%lld", (long long) (i % 13));
		if (arrow_builder_append_int(arrow_writer_column(w, 0), i, &err) < 0 ||
			arrow_builder_append_bytes(arrow_writer_column(w, 1), buf, strlen(buf), &err) < 0 ||
			arrow_writer_end_row(w, &err) < 0)
		{
			CHECK_MSG(0, err.msg);
			return -1;
		}
	}
	return 0;
}

static void
ints_schema(ArrowSchema *s, ArrowField *f)
{
	int_field(&f[0], "id", 64, true);
	field_init(&f[1], "tag", ARROW_TYPE_UTF8);
	f[1].has_dict = true;
	f[1].dict.index_type.id = ARROW_TYPE_INT;
	f[1].dict.index_type.bit_width = 16;
	f[1].dict.index_type.is_signed = true;
	memset(s, 0, sizeof(*s));
	s->n_fields = 2;
	s->fields = f;
}

/* Check that path holds rows 0..n-1 as written by write_ints. */
static void
check_ints(const char *path, int64_t limit, int64_t n, int n_batches)
{
	Opened		o;
	ArrowError	err;
	int64_t		row = 0;
	int			b;

	if (!open_path(&o, path, limit, &err))
	{
		CHECK_MSG(0, err.msg);
		return;
	}
	CHECK(n_batches < 0 || o.file.n_batches == n_batches);
	for (b = 0; b < o.file.n_batches && !unit_current_failed; b++)
	{
		ArrowArena	arena;
		ArrowRecordBatch rb;
		int64_t		r;

		arrow_arena_init(&arena, NULL);
		if (arrow_load_batch(&o.file, b, &arena, &rb, &err) < 0)
		{
			CHECK_MSG(0, err.msg);
			arrow_arena_free_all(&arena);
			break;
		}
		for (r = 0; r < rb.length && !unit_current_failed; r++, row++)
		{
			char		buf[32];
			int64_t		len;
			const uint8_t *p;
			const ArrowArray *t = &rb.columns[1];

			CHECK(arrow_get_int(&rb.columns[0], r) == row);
			snprintf(buf, sizeof(buf), "w%lld", (long long) (row % 13));
			p = arrow_get_bytes(t->dictionary, arrow_get_dict_index(t, r), &len);
			CHECK(len == (int64_t) strlen(buf) && memcmp(p, buf, len) == 0);
		}
		arrow_arena_free_all(&arena);
	}
	CHECK(row == n);
	close_opened(&o);
}

TEST(append_basic)
{
	ArrowSchema s;
	ArrowField f[2];
	ArrowWriter *w;
	ArrowError	err;
	ArrowWriterOptions o;
	int64_t		old_len = -1;
	int64_t		len1;
	const char *p = path_of("append.arrow");
	Opened		op;

	memset(&o, 0, sizeof(o));
	o.codec = ARROW_CODEC_NONE;
	o.batch_rows = 10;
	ints_schema(&s, f);
	CHECK_MSG(arrow_writer_create(&w, p, &s, true, &o, &err) == 0, err.msg);
	if (unit_current_failed)
		return;
	/* only w0..w4 in the first part */
	{
		int64_t		i;

		for (i = 0; i < 20; i++)
		{
			char		buf[32];

			snprintf(buf, sizeof(buf), "w%lld", (long long) (i % 13));
			CHECK(arrow_builder_append_int(arrow_writer_column(w, 0), i, &err) == 0);
			CHECK(arrow_builder_append_bytes(arrow_writer_column(w, 1), buf, strlen(buf), &err) == 0);
			CHECK(arrow_writer_end_row(w, &err) == 0);
		}
	}
	CHECK_MSG(arrow_writer_close(w, &err) == 0, err.msg);
	len1 = file_size(p);
	check_ints(p, -1, 20, 2);

	/* append with the same schema; new dictionary values become a delta */
	CHECK_MSG(arrow_writer_append(&w, p, &s, -1, &o, &old_len, &err) == 0, err.msg);
	if (unit_current_failed)
		return;
	CHECK(old_len == len1);
	CHECK(write_ints(w, 20, 25) == 0);
	CHECK_MSG(arrow_writer_close(w, &err) == 0, err.msg);
	check_ints(p, -1, 45, 5);
	/* the old prefix is still a complete file */
	check_ints(p, len1, 20, 2);

	CHECK_MSG(open_path(&op, p, -1, &err), err.msg);
	if (!unit_current_failed)
	{
		CHECK(strcmp(arrow_field_metadata(&op.file.schema.fields[0], "min_values"), "0,10,20,30,40") == 0);
		CHECK(strcmp(arrow_field_metadata(&op.file.schema.fields[0], "max_values"), "9,19,29,39,44") == 0);
		CHECK(op.file.n_dicts == 2);
		close_opened(&op);
	}

	/* schema mismatch */
	f[0].name = "other";
	CHECK(arrow_writer_append(&w, p, &s, -1, &o, NULL, &err) < 0 &&
		  err.code == ARROW_ERR_INVALID && strstr(err.msg, "other") != NULL);
	f[0].name = "id";
	/* keep_length that is not the end of a footer */
	CHECK(arrow_writer_append(&w, p, &s, len1 - 3, &o, NULL, &err) < 0);
	/* keep_length cuts the file back to the first version */
	CHECK_MSG(arrow_writer_append(&w, p, &s, len1, &o, &old_len, &err) == 0, err.msg);
	if (!unit_current_failed)
	{
		CHECK(old_len == len1);
		CHECK(write_ints(w, 20, 3) == 0);
		CHECK_MSG(arrow_writer_close(w, &err) == 0, err.msg);
		check_ints(p, -1, 23, 3);
	}
}

TEST(append_after_interrupted_append)
{
	ArrowSchema s;
	ArrowField f[2];
	ArrowWriter *w;
	ArrowError	err;
	ArrowWriterOptions o;
	int64_t		old_len = -1;
	int64_t		len1;
	const char *p = path_of("interrupted.arrow");
	int			fd;
	char		garbage[1000];

	memset(&o, 0, sizeof(o));
	o.codec = ARROW_CODEC_LZ4_FRAME;
	o.batch_rows = 7;
	ints_schema(&s, f);
	CHECK_MSG(arrow_writer_create(&w, p, &s, true, &o, &err) == 0, err.msg);
	if (unit_current_failed)
		return;
	CHECK(write_ints(w, 0, 10) == 0);
	CHECK_MSG(arrow_writer_close(w, &err) == 0, err.msg);
	len1 = file_size(p);

	/* an append that wrote batches and died before its footer: a child
	 * process that exits without closing the writer */
	fflush(stdout);
	{
		pid_t		pid = fork();
		int			status = 0;

		if (pid == 0)
		{
			if (arrow_writer_append(&w, p, NULL, -1, &o, NULL, &err) < 0 ||
				write_ints(w, 10, 30) < 0 ||
				arrow_writer_flush(w, &err) < 0)
				_exit(1);
			_exit(0);
		}
		CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
			  WEXITSTATUS(status) == 0);
	}
	CHECK(file_size(p) > len1);
	/* and some garbage after that */
	fd = open(p, O_WRONLY | O_APPEND);
	memset(garbage, 0xAB, sizeof(garbage));
	CHECK(write(fd, garbage, sizeof(garbage)) == (ssize_t) sizeof(garbage));
	close(fd);
	/* readers that stop at the committed length see the old file */
	check_ints(p, len1, 10, 2);
	/* a reader of the whole file finds no trailer at the end */
	{
		Opened		op;

		CHECK(!open_path(&op, p, -1, &err));
	}
	/* the next append cuts the tail off and goes on */
	CHECK_MSG(arrow_writer_append(&w, p, &s, -1, &o, &old_len, &err) == 0, err.msg);
	if (unit_current_failed)
		return;
	CHECK(old_len == len1);
	CHECK(file_size(p) <= len1 + 8);
	CHECK(write_ints(w, 10, 5) == 0);
	CHECK_MSG(arrow_writer_close(w, &err) == 0, err.msg);
	check_ints(p, -1, 15, 3);
}

TEST(abort_leaves_nothing)
{
	ArrowSchema s;
	ArrowField f[2];
	ArrowWriter *w;
	ArrowError	err;
	const char *p = path_of("aborted.arrow");
	int64_t		len1;

	unlink(p);
	ints_schema(&s, f);
	CHECK_MSG(arrow_writer_create(&w, p, &s, false, NULL, &err) == 0, err.msg);
	if (unit_current_failed)
		return;
	CHECK(write_ints(w, 0, 100) == 0);
	CHECK(arrow_writer_flush(w, &err) == 0);
	CHECK(!file_exists(p));
	arrow_writer_abort(w);
	CHECK(!file_exists(p));
	CHECK(no_tmp_files("aborted.arrow"));

	/* no overwrite: an existing file is an error */
	CHECK(write_all(p, 3, NULL) == 0);
	CHECK(arrow_writer_create(&w, p, &s, false, NULL, &err) < 0 && err.code == ARROW_ERR_IO);
	CHECK(check_all_file(p, 0) == 3);

	/* aborting an append restores the old length */
	len1 = file_size(p);
	{
		ArrowSchema s2;

		build_all_schema(&s2);
		CHECK_MSG(arrow_writer_append(&w, p, &s2, -1, NULL, NULL, &err) == 0, err.msg);
		if (unit_current_failed)
			return;
		CHECK(append_all_row(w, 3) == 0);
		CHECK(arrow_writer_flush(w, &err) == 0);
		CHECK(file_size(p) > len1);
		arrow_writer_abort(w);
		CHECK(file_size(p) == len1);
		CHECK(check_all_file(p, 0) == 3);
	}
	/* appending to the all-types file (nested dictionaries too) */
	CHECK_MSG(arrow_writer_append(&w, p, NULL, -1, NULL, NULL, &err) == 0, err.msg);
	if (!unit_current_failed)
	{
		int64_t		i;

		for (i = 3; i < 60; i++)
			CHECK(append_all_row(w, i) == 0);
		CHECK_MSG(arrow_writer_close(w, &err) == 0, err.msg);
		CHECK(check_all_file(p, 0) == 60);
	}
}

/* ------------------------------------------------------------------ errors */

TEST(range_errors)
{
	ArrowSchema s;
	ArrowField f[6];
	ArrowWriter *w;
	ArrowError	err;
	const char *p = path_of("errors.arrow");

	int_field(&f[0], "i16", 16, true);
	int_field(&f[1], "u8", 8, false);
	field_init(&f[2], "dec", ARROW_TYPE_DECIMAL);
	f[2].type.dec_precision = 5;
	f[2].type.dec_scale = 2;
	field_init(&f[3], "fsb", ARROW_TYPE_FIXED_SIZE_BINARY);
	f[3].type.fixed_size = 3;
	int_field(&f[4], "nn", 32, true);
	f[4].nullable = false;
	field_init(&f[5], "d32", ARROW_TYPE_DATE);
	f[5].type.unit = ARROW_DATE_DAY;
	memset(&s, 0, sizeof(s));
	s.n_fields = 6;
	s.fields = f;
	CHECK_MSG(arrow_writer_create(&w, p, &s, true, NULL, &err) == 0, err.msg);
	if (unit_current_failed)
		return;
	CHECK(arrow_builder_append_int(arrow_writer_column(w, 0), 32768, &err) < 0 && err.code == ARROW_ERR_INVALID);
	CHECK(strstr(err.msg, "i16") != NULL);
	CHECK(arrow_builder_append_int(arrow_writer_column(w, 0), -32769, &err) < 0 && err.code == ARROW_ERR_INVALID);
	CHECK(arrow_builder_append_uint64(arrow_writer_column(w, 0), 40000, &err) < 0 && err.code == ARROW_ERR_INVALID);
	CHECK(arrow_builder_append_int(arrow_writer_column(w, 1), -1, &err) < 0 && err.code == ARROW_ERR_INVALID);
	CHECK(arrow_builder_append_int(arrow_writer_column(w, 1), 256, &err) < 0 && err.code == ARROW_ERR_INVALID);
	CHECK(arrow_builder_append_double(arrow_writer_column(w, 0), 1.0, &err) < 0 && err.code == ARROW_ERR_INVALID);
	CHECK(arrow_builder_append_decimal(arrow_writer_column(w, 2), 100000, 0, &err) < 0 && err.code == ARROW_ERR_INVALID);
	CHECK(arrow_builder_append_bytes(arrow_writer_column(w, 3), "ab", 2, &err) < 0 && err.code == ARROW_ERR_INVALID);
	CHECK(arrow_builder_append_null(arrow_writer_column(w, 4), &err) < 0 && err.code == ARROW_ERR_INVALID);
	CHECK(arrow_builder_append_int(arrow_writer_column(w, 5), (int64_t) INT32_MAX + 1, &err) < 0 && err.code == ARROW_ERR_INVALID);
	CHECK(arrow_builder_list_begin(arrow_writer_column(w, 0), &err) < 0 && err.code == ARROW_ERR_INVALID);

	/* a valid row after the errors: nothing half-appended */
	CHECK(arrow_builder_append_int(arrow_writer_column(w, 0), -32768, &err) == 0);
	CHECK(arrow_builder_append_int(arrow_writer_column(w, 1), 255, &err) == 0);
	CHECK(arrow_builder_append_decimal(arrow_writer_column(w, 2), (uint64_t) -99999, -1, &err) == 0);
	CHECK(arrow_builder_append_bytes(arrow_writer_column(w, 3), "abc", 3, &err) == 0);
	CHECK(arrow_builder_append_int(arrow_writer_column(w, 4), 1, &err) == 0);
	/* a missing value is caught at end of row */
	CHECK(arrow_writer_end_row(w, &err) < 0 && err.code == ARROW_ERR_INVALID);
	CHECK(arrow_builder_append_int(arrow_writer_column(w, 5), 0, &err) == 0);
	CHECK_MSG(arrow_writer_end_row(w, &err) == 0, err.msg);
	CHECK_MSG(arrow_writer_close(w, &err) == 0, err.msg);
}

TEST(float16_rounding)
{
	ArrowSchema s;
	ArrowField f;
	ArrowWriter *w;
	ArrowError	err;
	Opened		op;
	const char *p = path_of("f16.arrow");
	const double in[] = {0, -0.0, 1, 65504, 65520, 1e-8, 5.960464477539063e-08, 0.1,
	1.0009765625, 1.00048828125, 1.00146484375, -2.5, INFINITY, NAN};
	const uint16_t want[] = {0x0000, 0x8000, 0x3c00, 0x7bff, 0x7c00, 0x0000, 0x0001, 0x2e66,
	0x3c01, 0x3c00, 0x3c02, 0xc100, 0x7c00, 0x7e00};
	int			n = (int) (sizeof(in) / sizeof(in[0]));
	int			i;

	field_init(&f, "h", ARROW_TYPE_FLOAT);
	f.type.precision = ARROW_PRECISION_HALF;
	memset(&s, 0, sizeof(s));
	s.n_fields = 1;
	s.fields = &f;
	CHECK_MSG(arrow_writer_create(&w, p, &s, true, NULL, &err) == 0, err.msg);
	if (unit_current_failed)
		return;
	for (i = 0; i < n; i++)
	{
		CHECK(arrow_builder_append_double(arrow_writer_column(w, 0), in[i], &err) == 0);
		CHECK(arrow_writer_end_row(w, &err) == 0);
	}
	CHECK_MSG(arrow_writer_close(w, &err) == 0, err.msg);
	CHECK_MSG(open_path(&op, p, -1, &err), err.msg);
	if (!unit_current_failed)
	{
		ArrowArena	arena;
		ArrowRecordBatch rb;

		arrow_arena_init(&arena, NULL);
		CHECK_MSG(arrow_load_batch(&op.file, 0, &arena, &rb, &err) == 0, err.msg);
		if (!unit_current_failed)
			for (i = 0; i < n; i++)
			{
				uint16_t	h = ((const uint16_t *) rb.columns[0].values)[i];

				if (h != want[i])
					printf("  f16[%d]: %04x != %04x\n", i, h, want[i]);
				CHECK(h == want[i]);
			}
		arrow_arena_free_all(&arena);
		close_opened(&op);
	}
}

/* ------------------------------------------------------------------ copying */

/* Copy all.arrow (all types, dictionaries) into a new file through
 * arrow_writer_append_batch with different batch boundaries, then through
 * per-column arrow_builder_append_array of slices. */
TEST(copy_batches)
{
	Opened		src;
	ArrowError	err;
	ArrowWriter *w;
	ArrowWriterOptions o;
	const char *in = path_of("all_src.arrow");
	const char *out = path_of("all_copy.arrow");
	const char *out2 = path_of("all_copy2.arrow");
	int			b;

	memset(&o, 0, sizeof(o));
	o.codec = ARROW_CODEC_NONE;
	o.batch_rows = 37;
	CHECK(write_all(in, 150, &o) == 0);
	CHECK_MSG(open_path(&src, in, -1, &err), err.msg);
	if (unit_current_failed)
		return;

	o.batch_rows = 50;
	o.codec = ARROW_CODEC_ZSTD;
	CHECK_MSG(arrow_writer_create(&w, out, &src.file.schema, true, &o, &err) == 0, err.msg);
	if (unit_current_failed)
		return;
	for (b = 0; b < src.file.n_batches && !unit_current_failed; b++)
	{
		ArrowArena	arena;
		ArrowRecordBatch rb;

		arrow_arena_init(&arena, NULL);
		CHECK_MSG(arrow_load_batch(&src.file, b, &arena, &rb, &err) == 0, err.msg);
		if (!unit_current_failed)
			CHECK_MSG(arrow_writer_append_batch(w, &rb, 0, rb.length, &err) == 0, err.msg);
		arrow_arena_free_all(&arena);
	}
	CHECK_MSG(arrow_writer_close(w, &err) == 0, err.msg);
	CHECK(check_all_file(out, 0) == 150);
	{
		Opened		c;

		CHECK_MSG(open_path(&c, out, -1, &err), err.msg);
		if (!unit_current_failed)
		{
			CHECK(c.file.n_batches == 3);
			CHECK(batch_len(&c, 2) == 50);
			close_opened(&c);
		}
	}

	/* row ranges, per column, from slices: rows 10..99 */
	o.batch_rows = 1000;
	o.codec = ARROW_CODEC_NONE;
	CHECK_MSG(arrow_writer_create(&w, out2, &src.file.schema, true, &o, &err) == 0, err.msg);
	if (unit_current_failed)
		return;
	{
		int64_t		row = 0;

		for (b = 0; b < src.file.n_batches && !unit_current_failed; b++)
		{
			ArrowArena	arena;
			ArrowRecordBatch rb;
			int64_t		lo,
						hi;
			int			c;

			arrow_arena_init(&arena, NULL);
			CHECK_MSG(arrow_load_batch(&src.file, b, &arena, &rb, &err) == 0, err.msg);
			lo = row < 10 ? 10 - row : 0;
			hi = row + rb.length > 100 ? 100 - row : rb.length;
			if (!unit_current_failed && hi > lo)
			{
				for (c = 0; c < rb.n_columns; c++)
				{
					ArrowArray	sl;

					/* a slice, then a sub-range of it */
					arrow_array_slice(&rb.columns[c], lo, rb.length - lo, &sl);
					CHECK_MSG(arrow_builder_append_array(arrow_writer_column(w, c), &sl, 0, hi - lo, &err) == 0, err.msg);
				}
				CHECK_MSG(arrow_writer_end_rows(w, hi - lo, &err) == 0, err.msg);
			}
			row += rb.length;
			arrow_arena_free_all(&arena);
		}
	}
	CHECK_MSG(arrow_writer_close(w, &err) == 0, err.msg);
	CHECK(check_all_file(out2, 10) == 90);
	close_opened(&src);
}

int
main(void)
{
	const char *keep = getenv("PGWARP_KEEP_DIR");

	snprintf(dir, sizeof(dir), "/tmp/pgwarp_test_write.XXXXXX");
	if (mkdtemp(dir) == NULL)
	{
		perror("mkdtemp");
		return 1;
	}
	RUN(all_types_roundtrip);
	RUN(all_types_lz4);
	RUN(all_types_zstd);
	RUN(threshold_batch_rows);
	RUN(threshold_buffer_cap);
	RUN(statistics_strings);
	RUN(append_basic);
	RUN(append_after_interrupted_append);
	RUN(abort_leaves_nothing);
	RUN(range_errors);
	RUN(float16_rounding);
	RUN(copy_batches);
	if (!keep)
	{
		char		cmd[400];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", dir);
	}
	UNIT_EXIT();
}
