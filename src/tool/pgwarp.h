/*
 * pgwarp.h — shared declarations of the pgwarp command-line tool.
 *
 * Conventions: a command returns its exit status: 0 success, 1 error (one
 * line "pgwarp: <message>" on stderr), 2 usage error.
 */
#ifndef PGWARP_TOOL_H
#define PGWARP_TOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "arrow.h"

#define PGWARP_VERSION "0.1"

#define EXIT_USAGE 2

/* commands */
int			cmd_inspect(int argc, char **argv);
int			cmd_cat(int argc, char **argv);
int			cmd_rewrite(int argc, char **argv);
int			cmd_bench(int argc, char **argv);
int			cmd_dump(int argc, char **argv);
int			cmd_ssb(int argc, char **argv);

/* "pgwarp: <message>" on stderr; returns 1 */
int			pgw_error(const char *fmt,...) __attribute__((format(printf, 1, 2)));
/* "pgwarp: <cmd>: <message> (see 'pgwarp <cmd> --help')"; returns 2 */
int			pgw_usage_error(const char *cmd, const char *fmt,...)
			__attribute__((format(printf, 2, 3)));
/* "pgwarp: warning: <message>" on stderr */
void		pgw_warning(const char *fmt,...) __attribute__((format(printf, 1, 2)));

/* Connect (dsn: conninfo or URI; NULL = libpq defaults) with client_encoding
 * UTF8; on failure print the error and return NULL. */
struct pg_conn;
struct pg_conn *pgw_connect(const char *dsn, const char *application_name);

/* Parse a positive integer option value; false if malformed. */
bool		pgw_parse_count(const char *s, int64_t *out);
/* Parse "lz4" / "zstd" / "none"; false if unknown. */
bool		pgw_parse_codec(const char *s, ArrowCodec *out);

/*
 * An Arrow file opened for reading.  If the file ends with an interrupted
 * append (no trailer at EOF, but an earlier complete footer), and
 * recover_tail is set, the complete prefix is opened: valid_length < size.
 */
typedef struct PgwInput
{
	int			fd;
	ArrowFile	file;
	int64_t		size;			/* the whole file */
	int64_t		valid_length;	/* the part that was opened */
	bool		incomplete_tail;
} PgwInput;

/* Returns 0, or prints the error and returns 1. */
int			pgw_open_input(PgwInput *in, const char *path, bool recover_tail);
void		pgw_close_input(PgwInput *in);

/*
 * Output files: the writer writes a new file under a temporary name
 * (pgw_temp_path) and renames it over the output name at close; on errors
 * arrow_writer_abort removes it, or cuts an appended file back.  On
 * SIGINT/SIGTERM/SIGHUP the handler does the same before exiting.
 */
char	   *pgw_temp_path(const char *path);
void		pgw_cleanup_set_unlink(const char *path);
void		pgw_cleanup_set_truncate(const char *path, int64_t length);
void		pgw_cleanup_clear(void);
void		pgw_install_signal_cleanup(void);
/* hold off those signals around arrow_writer_close + pgw_cleanup_clear */
void		pgw_block_signals(bool block);

/* JSON output helpers (strings: invalid UTF-8 bytes become U+FFFD) */
bool		pgw_utf8_valid(const char *s, size_t len);
void		pgw_json_string(FILE *f, const char *s, size_t len);
void		pgw_json_cstring(FILE *f, const char *s);
/* Format a signed 128-bit integer in decimal; returns buf (>= 42 bytes). */
char	   *pgw_int128_str(__int128 v, char *buf);
/* Format an unscaled decimal with the given scale (see cat's contract);
 * buf >= 48 + |scale| bytes if scale < 0. */
char	   *pgw_decimal_str(__int128 v, int scale, char *buf, size_t buflen);
/* "%.17g" with ".0" appended when the text looks like an integer */
char	   *pgw_double_str(double d, char *buf, size_t len);

double		pgw_now(void);
/* days since 1970-01-01 to y-m-d (proleptic Gregorian) */
void		pgw_civil_from_days(int64_t z, int64_t *y, int *m, int *d);

#endif							/* PGWARP_TOOL_H */
