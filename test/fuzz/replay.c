/*
 * replay.c — the fuzz corpora as a regression test (build/unit/test_fuzz_corpus,
 * run by `make test`).
 *
 * Every input kept in test/fuzz/corpus/TARGET/ (the seeds, what the long
 * runs found that adds coverage, and every input that once crashed, leaked
 * or hung a reader, after its fix) is run once through TARGET's entry point,
 * the same function libFuzzer calls: the harness aborts on a read that load-
 * time validation should have prevented, an error that does not name the
 * source, a leak or an allocation past the limits.  Built with
 * AddressSanitizer and UndefinedBehaviorSanitizer where the compiler links
 * them (the Makefile checks), without otherwise.
 *
 *   build/unit/test_fuzz_corpus [CORPUS_ROOT]    (default test/fuzz/corpus)
 *
 * Prints PASS/FAIL per target; a crash prints FAIL with the input's path.
 */
#define FUZZ_PARQUET_ENTRY fuzz_parquet_one_input
#define FUZZ_STREAM_ENTRY fuzz_stream_one_input
#include "fuzz_parquet.c"
#include "fuzz_stream.c"

#include <dirent.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

typedef int (*FuzzEntry) (const uint8_t *data, size_t size);

static const struct
{
	const char *name;
	FuzzEntry	entry;
}			targets[] = {
	{"fuzz_reader", fuzz_reader_one_input},
	{"fuzz_stream", fuzz_stream_one_input},
	{"fuzz_parquet", fuzz_parquet_one_input},
};

static char current[4096];

/* a crash or a sanitizer report: name the input before dying */
static void
report_death(void)
{
	static const char pre[] = "FAIL: crash on ";
	ssize_t		rc;

	rc = write(2, pre, sizeof(pre) - 1);
	rc = write(2, current, strlen(current));
	rc = write(2, "\n", 1);
	(void) rc;
}

static void
on_signal(int sig)
{
	report_death();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* set when linked with a sanitizer runtime */
void		__sanitizer_set_death_callback(void (*cb) (void)) __attribute__((weak));

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/* Runs every file of dir through entry; returns the number run, -1 if none. */
static int
replay_dir(const char *dir, FuzzEntry entry, size_t *bytes)
{
	DIR		   *d = opendir(dir);
	struct dirent *de;
	char	  **names = NULL;
	int			n = 0,
				cap = 0,
				i;

	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
	{
		if (de->d_name[0] == '.')
			continue;
		if (n == cap)
		{
			cap = cap ? cap * 2 : 256;
			names = realloc(names, cap * sizeof(char *));
		}
		names[n++] = strdup(de->d_name);
	}
	closedir(d);
	if (n > 0)
		qsort(names, n, sizeof(char *), cmp_names);
	for (i = 0; i < n; i++)
	{
		FILE	   *f;
		uint8_t    *buf;
		long		len;

		snprintf(current, sizeof(current), "%s/%s", dir, names[i]);
		f = fopen(current, "rb");
		if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0)
		{
			printf("FAIL: cannot read %s\n", current);
			exit(1);
		}
		rewind(f);
		/* an exact-size copy, so that ASan sees a read past the input */
		buf = malloc(len > 0 ? len : 1);
		if (len > 0 && fread(buf, 1, len, f) != (size_t) len)
		{
			printf("FAIL: cannot read %s\n", current);
			exit(1);
		}
		fclose(f);
		entry(buf, (size_t) len);
		*bytes += len;
		free(buf);
		free(names[i]);
	}
	free(names);
	return n;
}

int
main(int argc, char **argv)
{
	const char *root = argc > 1 ? argv[1] : "test/fuzz/corpus";
	int			t,
				failed = 0;

	signal(SIGSEGV, on_signal);
	signal(SIGBUS, on_signal);
	signal(SIGFPE, on_signal);
	signal(SIGABRT, on_signal);
	if (__sanitizer_set_death_callback)
		__sanitizer_set_death_callback(report_death);
	for (t = 0; t < (int) (sizeof(targets) / sizeof(targets[0])); t++)
	{
		char		dir[4096];
		size_t		bytes = 0;
		struct timespec t0,
					t1;
		int			n;

		snprintf(dir, sizeof(dir), "%s/%s", root, targets[t].name);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		n = replay_dir(dir, targets[t].entry, &bytes);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (n <= 0)
		{
			printf("FAIL: %s: no corpus in %s\n", targets[t].name, dir);
			failed++;
			continue;
		}
		printf("PASS: %s corpus: %d inputs, %zu bytes, %.1f s%s\n", targets[t].name, n, bytes,
			   (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
			   __sanitizer_set_death_callback ? " (sanitizers on)" : "");
	}
	return failed ? 1 : 0;
}
