/*
 * arrow_read_bench — reader throughput: sums COLUMNS of an Arrow file through
 * our reader and reports GB/s of column data touched.
 *
 *   arrow_read_bench FILE [--mode pread|mmap] [--runs N] COL [COL...]
 *
 * pread mode reads only the buffers of the named columns (what a backend
 * does); mmap mode loads them in place from a mapping (what the GPU daemon
 * does).  Columns must be Int (any width) or Float; nulls are skipped.
 * The file should be in the page cache (run once first): this measures the
 * reader, not the disk.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "arrow.h"

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
find_column(const ArrowSchema *s, const char *name)
{
	for (int i = 0; i < s->n_fields; i++)
		if (strcmp(s->fields[i].name, name) == 0)
			return i;
	return -1;
}

/* Sum one loaded column; returns the bytes of value data touched. */
static int64_t
sum_column(const ArrowArray *a, double *sum)
{
	const ArrowType *t = &a->field->type;
	int64_t		n = a->length;
	double		acc = 0;

	if (t->id == ARROW_TYPE_INT && t->bit_width == 32 && a->validity == NULL)
	{
		const int32_t *v = (const int32_t *) a->values;
		int64_t		s = 0;

		for (int64_t i = 0; i < n; i++)
			s += v[i];
		acc = (double) s;
	}
	else if (t->id == ARROW_TYPE_INT && t->bit_width == 64 && a->validity == NULL)
	{
		const int64_t *v = (const int64_t *) a->values;
		__int128	s = 0;

		for (int64_t i = 0; i < n; i++)
			s += v[i];
		acc = (double) s;
	}
	else
	{
		for (int64_t i = 0; i < n; i++)
			if (!arrow_is_null(a, i))
				acc += t->id == ARROW_TYPE_FLOAT ? arrow_get_double(a, i)
					: (double) arrow_get_int(a, i);
	}
	*sum += acc;
	return n * arrow_type_byte_width(t);
}

int
main(int argc, char **argv)
{
	const char *path = NULL;
	const char *mode = "pread";
	int			runs = 5;
	const char *cols[64];
	int			ncols = 0;
	int			fd;
	struct stat st;
	ArrowSource src;
	ArrowFile	file;
	ArrowError	err;
	void	   *map = NULL;
	int			colidx[64];

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc)
			mode = argv[++i];
		else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (!path)
			path = argv[i];
		else if (ncols < 64)
			cols[ncols++] = argv[i];
	}
	if (!path || ncols == 0)
	{
		fprintf(stderr, "usage: arrow_read_bench FILE [--mode pread|mmap] [--runs N] COL...\n");
		return 2;
	}
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) != 0)
	{
		perror(path);
		return 1;
	}
	if (strcmp(mode, "mmap") == 0)
	{
		map = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
		if (map == MAP_FAILED)
		{
			perror("mmap");
			return 1;
		}
		arrow_source_mem(&src, map, st.st_size, path);
	}
	else if (arrow_source_fd(&src, fd, path, -1, &err) != 0)
	{
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	if (arrow_open(&file, &src, NULL, &err) != 0)
	{
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	for (int c = 0; c < ncols; c++)
		if ((colidx[c] = find_column(&file.schema, cols[c])) < 0)
		{
			fprintf(stderr, "no column %s\n", cols[c]);
			return 1;
		}

	for (int r = 0; r < runs; r++)
	{
		double		t0 = now_s();
		double		sum = 0;
		int64_t		touched = 0;
		ArrowArena	arena;

		arrow_arena_init(&arena, NULL);
		for (int b = 0; b < file.n_batches; b++)
		{
			ArrowBatchMeta meta;

			if (arrow_read_batch_meta(&file, b, &arena, &meta, &err) != 0)
			{
				fprintf(stderr, "%s\n", err.msg);
				return 1;
			}
			for (int c = 0; c < ncols; c++)
			{
				ArrowArray	a;

				if (arrow_load_column(&file, b, &meta, colidx[c], &arena, &a, &err) != 0)
				{
					fprintf(stderr, "%s\n", err.msg);
					return 1;
				}
				touched += sum_column(&a, &sum);
			}
			arrow_arena_free_all(&arena);
		}
		{
			double		el = now_s() - t0;

			printf("{\"mode\":\"%s\",\"run\":%d,\"file_bytes\":%lld,\"batches\":%d,"
				   "\"column_bytes\":%lld,\"seconds\":%.4f,\"gbps\":%.2f,\"checksum\":%.6g}\n",
				   mode, r, (long long) st.st_size, file.n_batches,
				   (long long) touched, el, touched / el / 1e9, sum);
		}
	}
	arrow_close(&file);
	return 0;
}
