/*
 * fuzz_parquet.c — libFuzzer target for the Parquet reader (src/parquet).
 *
 * Parquet files are opened through arrow_open, so this is the Arrow
 * reader's target (fuzz_reader.c: mapped and read through the callback,
 * every column of every row group loaded, every value touched, statistics
 * read, allocation limits, a leak check) restricted to inputs that start
 * with the Parquet magic, seeded with small pyarrow- and DuckDB-written
 * files (test/fuzz/make_parquet_corpus.py).
 *
 *   make build/fuzz/fuzz_parquet
 *   build/fuzz/fuzz_parquet -max_total_time=600 -rss_limit_mb=2048 \
 *       test/fuzz/work_parquet test/fuzz/corpus_parquet
 */
#define FUZZ_ENTRY fuzz_reader_one_input
#include "fuzz_reader.c"

/* replay.c links every target into one program under other names */
#ifndef FUZZ_PARQUET_ENTRY
#define FUZZ_PARQUET_ENTRY LLVMFuzzerTestOneInput
#endif
int			FUZZ_PARQUET_ENTRY(const uint8_t *data, size_t size);

int
FUZZ_PARQUET_ENTRY(const uint8_t *data, size_t size)
{
	if (size < 4 || memcmp(data, "PAR1", 4) != 0)
		return 0;
	return fuzz_reader_one_input(data, size);
}
