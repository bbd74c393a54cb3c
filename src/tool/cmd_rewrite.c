/*
 * cmd_rewrite.c — pgwarp rewrite IN OUT [--batch-rows N] [--compress lz4|zstd]
 *                 [--append]
 *
 * Reads IN with our reader and writes OUT with our writer, re-batching into
 * large record batches and adding min/max statistics: the fix for files with
 * small batches from other writers.  A new OUT is written under a temporary
 * name and renamed when complete (replacing an existing OUT); with --append the batches are appended to
 * an existing OUT (schemas must match) and an error cuts it back.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pgwarp.h"

static const char *rewrite_usage =
"Usage: pgwarp rewrite IN OUT [--batch-rows N] [--compress lz4|zstd] [--append]\n"
"\n"
"Copy the Arrow file IN (IPC file or stream format, or a Parquet file) to the\n"
"Arrow file OUT, re-batched into large record batches, with min/max\n"
"statistics.\n"
"\n"
"Options:\n"
"  --batch-rows N     rows per record batch (default 1048576; a batch also ends\n"
"                     when a fixed-width buffer reaches 8 MB)\n"
"  --compress CODEC   compress buffers with lz4 or zstd (default: none)\n"
"  --append           append to an existing OUT (its schema must match IN's)\n"
"  --help             show this help\n";

/* Drop min_values/max_values from a field tree (the writer computes new ones). */
static void
strip_stats(ArrowField *f)
{
	int			n = 0;

	for (int i = 0; i < f->n_metadata; i++)
	{
		const char *k = f->metadata[i].key;

		if (k && (strcmp(k, "min_values") == 0 || strcmp(k, "max_values") == 0))
			continue;
		f->metadata[n++] = f->metadata[i];
	}
	f->n_metadata = n;
	for (int i = 0; i < f->n_children; i++)
		strip_stats(&f->children[i]);
}

int
cmd_rewrite(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"batch-rows", required_argument, NULL, 'r'},
		{"compress", required_argument, NULL, 'z'},
		{"append", no_argument, NULL, 'a'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}
	};
	ArrowWriterOptions wopts;
	bool		append = false;
	const char *inpath;
	const char *outpath;
	char	   *temp = NULL;
	PgwInput	in;
	ArrowArena	arena;
	ArrowArena	batch_arena;
	ArrowSchema schema;
	ArrowWriter *w = NULL;
	ArrowError	err;
	int64_t		old_length = -1;
	int			c;

	memset(&wopts, 0, sizeof(wopts));
	wopts.codec = ARROW_CODEC_NONE;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1)
	{
		switch (c)
		{
			case 'r':
				if (!pgw_parse_count(optarg, &wopts.batch_rows))
					return pgw_usage_error("rewrite", "invalid --batch-rows value \"%s\"",
										   optarg);
				break;
			case 'z':
				if (!pgw_parse_codec(optarg, &wopts.codec))
					return pgw_usage_error("rewrite", "unknown codec \"%s\" (lz4 or zstd)",
										   optarg);
				break;
			case 'a':
				append = true;
				break;
			case 'h':
				fputs(rewrite_usage, stdout);
				return 0;
			case ':':
				return pgw_usage_error("rewrite", "option %s needs a value",
									   argv[optind - 1]);
			default:
				return pgw_usage_error("rewrite", "unknown option \"%s\"",
									   argv[optind - 1]);
		}
	}
	if (argc - optind < 2)
		return pgw_usage_error("rewrite", "need IN and OUT");
	if (argc - optind > 2)
		return pgw_usage_error("rewrite", "unexpected argument \"%s\"",
							   argv[optind + 2]);
	inpath = argv[optind];
	outpath = argv[optind + 1];

	if (pgw_open_input(&in, inpath, true) != 0)
		return 1;
	if (in.incomplete_tail)
		pgw_warning("%s: ignoring %lld bytes after offset %lld (interrupted append)",
					inpath, (long long) (in.size - in.valid_length),
					(long long) in.valid_length);

	memset(&err, 0, sizeof(err));
	arrow_arena_init(&arena, NULL);
	if (arrow_schema_copy(&arena, &schema, &in.file.schema, &err) != 0)
		goto fail;
	for (int i = 0; i < schema.n_fields; i++)
		strip_stats(&schema.fields[i]);

	pgw_install_signal_cleanup();
	if (append && access(outpath, F_OK) == 0)
	{
		if (strcmp(inpath, outpath) == 0)
		{
			arrow_arena_free_all(&arena);
			pgw_close_input(&in);
			return pgw_error("cannot append \"%s\" to itself", inpath);
		}
		if (arrow_writer_append(&w, outpath, &schema, -1, &wopts, &old_length,
								&err) != 0)
			goto fail;
		pgw_cleanup_set_truncate(outpath, old_length);
	}
	else
	{
		temp = pgw_temp_path(outpath);
		if (temp == NULL)
		{
			arrow_error(&err, ARROW_ERR_NOMEM, -1, "out of memory");
			goto fail;
		}
		pgw_cleanup_set_unlink(temp);
		if (arrow_writer_create(&w, outpath, &schema, true, &wopts, &err) != 0)
		{
			pgw_cleanup_clear();
			goto fail;
		}
	}

	for (int b = 0; b < in.file.n_batches; b++)
	{
		ArrowRecordBatch rb;

		arrow_arena_init(&batch_arena, NULL);
		if (arrow_load_batch(&in.file, b, &batch_arena, &rb, &err) != 0 ||
			arrow_writer_append_batch(w, &rb, 0, rb.length, &err) != 0)
		{
			arrow_arena_free_all(&batch_arena);
			goto fail;
		}
		/* the writer copies what it needs before returning */
		arrow_arena_free_all(&batch_arena);
	}
	/* close: on failure it removes the temporary file / cuts the append */
	pgw_block_signals(true);
	if (arrow_writer_close(w, &err) != 0)
	{
		w = NULL;
		pgw_block_signals(false);
		goto fail;
	}
	w = NULL;
	pgw_cleanup_clear();
	pgw_block_signals(false);
	free(temp);
	arrow_arena_free_all(&arena);
	pgw_close_input(&in);
	return 0;

fail:
	if (w)
		arrow_writer_abort(w);
	pgw_cleanup_clear();
	free(temp);
	arrow_arena_free_all(&arena);
	pgw_close_input(&in);
	return pgw_error("%s", err.msg);
}
