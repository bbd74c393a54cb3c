/*
 * fuzz_stream.c — libFuzzer target for the Arrow IPC stream format.
 *
 * The stream reader has paths the file format never takes: messages found
 * by walking the stream instead of from a footer, the legacy length prefix,
 * dictionary batches interleaved with record batches (deltas and
 * replacements, so each batch sees its own dictionary state), and the
 * end-of-stream marker.  This is the Arrow reader's target (fuzz_reader.c:
 * opened mapped and through the read callback, every column of every batch
 * loaded whole and by row range, every value touched, allocation limits, a
 * leak check, errors naming the source) restricted to inputs that are
 * neither Arrow files nor Parquet files, seeded with pyarrow-written
 * streams (test/fuzz/make_corpus.py).
 *
 *   make build/fuzz/fuzz_stream
 *   build/fuzz/fuzz_stream -max_total_time=600 -rss_limit_mb=2048 \
 *       test/fuzz/work_stream test/fuzz/corpus/fuzz_stream
 */
#define FUZZ_ENTRY fuzz_reader_one_input
#include "fuzz_reader.c"

/* replay.c links every target into one program under other names */
#ifndef FUZZ_STREAM_ENTRY
#define FUZZ_STREAM_ENTRY LLVMFuzzerTestOneInput
#endif
int			FUZZ_STREAM_ENTRY(const uint8_t *data, size_t size);

int
FUZZ_STREAM_ENTRY(const uint8_t *data, size_t size)
{
	if (size >= 6 && memcmp(data, "ARROW1", 6) == 0)
		return 0;
	if (size >= 4 && memcmp(data, "PAR1", 4) == 0)
		return 0;
	return fuzz_reader_one_input(data, size);
}
