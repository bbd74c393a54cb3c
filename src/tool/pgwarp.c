/*
 * pgwarp.c — the pgwarp command-line tool: command dispatch and shared
 * helpers (errors, option values, opening Arrow files, output files, JSON).
 *
 *   pgwarp <command> [options]
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libpq-fe.h"

#include "pgwarp.h"

static const char *main_usage =
"pgwarp — pg_warp's Arrow file tool\n"
"\n"
"Usage: pgwarp <command> [options]\n"
"\n"
"Commands:\n"
"  dump      write the result of a query (or a table) to an Arrow file\n"
"  inspect   show the schema, record batches and statistics of an Arrow file\n"
"  cat       print the rows of an Arrow file as JSON arrays, one per line\n"
"  rewrite   copy an Arrow file into large record batches with statistics\n"
"  ssb       generate Star Schema Benchmark data (gen) and load it (load)\n"
"  bench     run the Star Schema Benchmark queries in several modes and compare\n"
"\n"
"Run 'pgwarp <command> --help' for a command's options.\n"
"Options: --help, --version\n";

struct command
{
	const char *name;
	int			(*fn) (int argc, char **argv);
};

static const struct command commands[] = {
	{"dump", cmd_dump},
	{"inspect", cmd_inspect},
	{"cat", cmd_cat},
	{"rewrite", cmd_rewrite},
	{"ssb", cmd_ssb},
	{"bench", cmd_bench},
	{NULL, NULL}
};

int
main(int argc, char **argv)
{
	const struct command *c;

	if (argc < 2)
	{
		fputs(main_usage, stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
		strcmp(argv[1], "help") == 0)
	{
		fputs(main_usage, stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0)
	{
		printf("pgwarp (pg_warp) %s\n", PGWARP_VERSION);
		return 0;
	}
	for (c = commands; c->name; c++)
	{
		if (strcmp(argv[1], c->name) == 0)
		{
			int			rc = c->fn(argc - 1, argv + 1);

			if (fflush(stdout) != 0 && rc == 0)
				rc = pgw_error("could not write to standard output: %s",
							   strerror(errno));
			return rc;
		}
	}
	if (argv[1][0] == '-')
		fprintf(stderr, "pgwarp: unknown option \"%s\" (see 'pgwarp --help')\n",
				argv[1]);
	else
		fprintf(stderr, "pgwarp: unknown command \"%s\" (see 'pgwarp --help')\n",
				argv[1]);
	return EXIT_USAGE;
}

/* ------------------------------------------------------------- messages */

int
pgw_error(const char *fmt,...)
{
	va_list		ap;
	char		buf[4096];
	size_t		n;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* one line: strip trailing newlines, fold inner ones */
	n = strlen(buf);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
	{
		size_t		j = 0;

		for (size_t i = 0; i < n; i++)
		{
			if (buf[i] == '\n' || buf[i] == '\r')
			{
				buf[j++] = ' ';
				while (i + 1 < n && (buf[i + 1] == ' ' || buf[i + 1] == '\t' ||
									 buf[i + 1] == '\n'))
					i++;
			}
			else
				buf[j++] = buf[i];
		}
		buf[j] = '\0';
	}
	fflush(stdout);
	fprintf(stderr, "pgwarp: %s\n", buf);
	return 1;
}

int
pgw_usage_error(const char *cmd, const char *fmt,...)
{
	va_list		ap;
	char		buf[2048];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "pgwarp: %s: %s (see 'pgwarp %s --help')\n", cmd, buf, cmd);
	return EXIT_USAGE;
}

void
pgw_warning(const char *fmt,...)
{
	va_list		ap;

	fflush(stdout);
	fputs("pgwarp: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

bool
pgw_parse_count(const char *s, int64_t *out)
{
	char	   *end;
	long long	v;

	if (s == NULL || *s == '\0')
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || v <= 0)
		return false;
	*out = v;
	return true;
}

bool
pgw_parse_codec(const char *s, ArrowCodec *out)
{
	if (strcmp(s, "lz4") == 0 || strcmp(s, "lz4_frame") == 0)
		*out = ARROW_CODEC_LZ4_FRAME;
	else if (strcmp(s, "zstd") == 0)
		*out = ARROW_CODEC_ZSTD;
	else if (strcmp(s, "none") == 0)
		*out = ARROW_CODEC_NONE;
	else
		return false;
	return true;
}


double
pgw_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* days since 1970-01-01 to y-m-d (proleptic Gregorian) */
void
pgw_civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	int64_t		era,
				yoe,
				doy,
				mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	yoe = z - era * 146097;
	yoe = (yoe - yoe / 1460 + yoe / 36524 - yoe / 146096) / 365;
	doy = (z - era * 146097) - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int) (doy - (153 * mp + 2) / 5 + 1);
	*m = (int) (mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

/* ---------------------------------------------------------- input files */

int
pgw_open_input(PgwInput *in, const char *path, bool recover_tail)
{
	ArrowError	err;
	ArrowSource src;
	struct stat st;

	memset(in, 0, sizeof(*in));
	in->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (in->fd < 0)
		return pgw_error("could not open \"%s\": %s", path, strerror(errno));
	if (fstat(in->fd, &st) != 0 || !S_ISREG(st.st_mode))
	{
		int			e = errno;

		close(in->fd);
		if (S_ISDIR(st.st_mode))
			return pgw_error("\"%s\" is a directory", path);
		return pgw_error("could not stat \"%s\": %s", path, strerror(e));
	}
	in->size = st.st_size;
	in->valid_length = st.st_size;
	memset(&err, 0, sizeof(err));
	if (arrow_source_fd(&src, in->fd, path, -1, &err) != 0)
	{
		close(in->fd);
		return pgw_error("%s", err.msg);
	}
	if (arrow_open(&in->file, &src, NULL, &err) == 0)
		return 0;
	/*
	 * No valid trailer at EOF (missing, or a fake/corrupt one): an
	 * interrupted append leaves the file readable up to its last complete
	 * footer.
	 */
	if ((err.code == ARROW_ERR_INCOMPLETE || err.code == ARROW_ERR_CORRUPT) &&
		recover_tail)
	{
		ArrowError	err2;
		int64_t		length = -1;

		memset(&err2, 0, sizeof(err2));
		if (arrow_find_last_footer(&src, &length, &err2) == 0 &&
			length > 0 && length < in->size &&
			arrow_source_fd(&src, in->fd, path, length, &err2) == 0 &&
			arrow_open(&in->file, &src, NULL, &err2) == 0)
		{
			in->valid_length = length;
			in->incomplete_tail = true;
			return 0;
		}
	}
	close(in->fd);
	return pgw_error("%s", err.msg);
}

void
pgw_close_input(PgwInput *in)
{
	arrow_close(&in->file);
	if (in->fd >= 0)
		close(in->fd);
	in->fd = -1;
}

/* --------------------------------------------------------- output files */

enum cleanup_mode
{
	CLEANUP_NONE,
	CLEANUP_UNLINK,
	CLEANUP_TRUNCATE
};

static char cleanup_path[PATH_MAX];
static volatile sig_atomic_t cleanup_mode = CLEANUP_NONE;
static int64_t cleanup_length;

/* The writer's temporary file in create mode (see arrow_write.c). */
char *
pgw_temp_path(const char *path)
{
	size_t		len = strlen(path) + 32;
	char	   *t = malloc(len);

	if (t == NULL)
		return NULL;
	snprintf(t, len, "%s.tmp.%ld", path, (long) getpid());
	return t;
}

void
pgw_cleanup_set_unlink(const char *path)
{
	cleanup_mode = CLEANUP_NONE;
	snprintf(cleanup_path, sizeof(cleanup_path), "%s", path);
	cleanup_mode = CLEANUP_UNLINK;
}

void
pgw_cleanup_set_truncate(const char *path, int64_t length)
{
	cleanup_mode = CLEANUP_NONE;
	snprintf(cleanup_path, sizeof(cleanup_path), "%s", path);
	cleanup_length = length;
	cleanup_mode = CLEANUP_TRUNCATE;
}

void
pgw_cleanup_clear(void)
{
	cleanup_mode = CLEANUP_NONE;
}

static void
cleanup_signal_handler(int sig)
{
	if (cleanup_mode == CLEANUP_UNLINK)
		(void) unlink(cleanup_path);
	else if (cleanup_mode == CLEANUP_TRUNCATE)
		(void) truncate(cleanup_path, (off_t) cleanup_length);
	cleanup_mode = CLEANUP_NONE;
	signal(sig, SIG_DFL);
	raise(sig);
}

void
pgw_block_signals(bool block)
{
	sigset_t	set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(block ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}

void
pgw_install_signal_cleanup(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = cleanup_signal_handler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* ---------------------------------------------------------------- JSON */

/* length of the valid UTF-8 sequence at s (RFC 3629), 0 if invalid */
static size_t
utf8_seq(const unsigned char *s, size_t avail)
{
	unsigned char c = s[0];
	size_t		n;
	unsigned char lo = 0x80,
				hi = 0xBF;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2;
	else if (c >= 0xE0 && c <= 0xEF)
	{
		n = 3;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F;
	}
	else if (c >= 0xF0 && c <= 0xF4)
	{
		n = 4;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
	}
	else
		return 0;
	if (avail < n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t k = 2; k < n; k++)
		if ((s[k] & 0xC0) != 0x80)
			return 0;
	return n;
}

bool
pgw_utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *) s;
	size_t		i = 0;

	while (i < len)
	{
		size_t		n;

		if (p[i] < 0x80)
		{
			i++;
			continue;
		}
		n = utf8_seq(p + i, len - i);
		if (n == 0)
			return false;
		i += n;
	}
	return true;
}

void
pgw_json_string(FILE *f, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *) s;
	size_t		start = 0;

	putc_unlocked('"', f);
	for (size_t i = 0; i < len; i++)
	{
		unsigned char c = u[i];

		if (c >= 0x80)
		{
			size_t		n = utf8_seq(u + i, len - i);

			if (n > 0)
			{
				i += n - 1;
				continue;
			}
			/* invalid UTF-8: U+FFFD, so that the output stays valid */
			if (i > start)
				fwrite_unlocked(s + start, 1, i - start, f);
			start = i + 1;
			fputs_unlocked("\\ufffd", f);
			continue;
		}
		if (c == '"' || c == '\\' || c < 0x20)
		{
			if (i > start)
				fwrite_unlocked(s + start, 1, i - start, f);
			start = i + 1;
			if (c == '"' || c == '\\')
			{
				putc_unlocked('\\', f);
				putc_unlocked(c, f);
			}
			else
			{
				fputs_unlocked("\\u00", f);
				putc_unlocked(hex[c >> 4], f);
				putc_unlocked(hex[c & 15], f);
			}
		}
	}
	if (len > start)
		fwrite_unlocked(s + start, 1, len - start, f);
	putc_unlocked('"', f);
}

void
pgw_json_cstring(FILE *f, const char *s)
{
	if (s == NULL)
		fputs_unlocked("null", f);
	else
		pgw_json_string(f, s, strlen(s));
}

char *
pgw_int128_str(__int128 v, char *buf)
{
	char		tmp[48];
	int			n = 0;
	unsigned __int128 u;
	char	   *p = buf;

	if (v < 0)
	{
		*p++ = '-';
		u = (unsigned __int128) 0 - (unsigned __int128) v;
	}
	else
		u = (unsigned __int128) v;
	do
	{
		tmp[n++] = '0' + (int) (u % 10);
		u /= 10;
	} while (u != 0);
	while (n > 0)
		*p++ = tmp[--n];
	*p = '\0';
	return buf;
}

char *
pgw_decimal_str(__int128 v, int scale, char *buf, size_t buflen)
{
	char		digits[48];
	char	   *d;
	size_t		nd;
	bool		neg = v < 0;
	size_t		pos = 0;

	pgw_int128_str(v, digits);
	d = neg ? digits + 1 : digits;
	nd = strlen(d);

	if (scale <= 0)
	{
		if (pos + nd + 2 > buflen)
			return strcpy(buf, "?");
		if (neg)
			buf[pos++] = '-';
		memcpy(buf + pos, d, nd);
		pos += nd;
		if (!(nd == 1 && d[0] == '0'))
		{
			for (int i = 0; i < -scale && pos + 1 < buflen; i++)
				buf[pos++] = '0';
		}
		buf[pos] = '\0';
		return buf;
	}
	if ((size_t) scale + nd + 4 > buflen)
		return strcpy(buf, "?");
	if (neg)
		buf[pos++] = '-';
	if (nd <= (size_t) scale)
	{
		buf[pos++] = '0';
		buf[pos++] = '.';
		for (size_t i = nd; i < (size_t) scale; i++)
			buf[pos++] = '0';
		memcpy(buf + pos, d, nd);
		pos += nd;
	}
	else
	{
		memcpy(buf + pos, d, nd - scale);
		pos += nd - scale;
		buf[pos++] = '.';
		memcpy(buf + pos, d + nd - scale, scale);
		pos += scale;
	}
	buf[pos] = '\0';
	return buf;
}

char *
pgw_double_str(double d, char *buf, size_t len)
{
	if (isnan(d))
		snprintf(buf, len, "NaN");
	else if (isinf(d))
		snprintf(buf, len, d > 0 ? "Infinity" : "-Infinity");
	else
	{
		snprintf(buf, len, "%.17g", d);
		if (strpbrk(buf, ".eEn") == NULL)
			strncat(buf, ".0", len - strlen(buf) - 1);
	}
	return buf;
}

PGconn *
pgw_connect(const char *dsn, const char *application_name)
{
	const char *keys[3] = {NULL, NULL, NULL};
	const char *vals[3] = {NULL, NULL, NULL};
	int			k = 0;
	PGconn	   *conn;

	if (dsn)
	{
		keys[k] = "dbname";
		vals[k++] = dsn;
	}
	keys[k] = "fallback_application_name";
	vals[k++] = application_name;
	conn = PQconnectdbParams(keys, vals, 1);
	if (conn == NULL)
	{
		pgw_error("out of memory");
		return NULL;
	}
	if (PQstatus(conn) != CONNECTION_OK)
	{
		pgw_error("could not connect: %s", PQerrorMessage(conn));
		PQfinish(conn);
		return NULL;
	}
	if (PQsetClientEncoding(conn, "UTF8") != 0)
	{
		pgw_error("could not set client_encoding to UTF8: %s", PQerrorMessage(conn));
		PQfinish(conn);
		return NULL;
	}
	return conn;
}
