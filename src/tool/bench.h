/*
 * bench.h — declarations shared by the files of `pgwarp bench ssb`:
 * cmd_bench.c (options, running the queries, answer checks), bench_sql.c
 * (reading and rewriting the query text) and bench_report.c (results.csv,
 * results.md, chart.svg).
 */
#ifndef PGWARP_BENCH_H
#define PGWARP_BENCH_H

#include <stdbool.h>
#include <stddef.h>

#include <libpq-fe.h>

#define MAX_MODES 7

typedef struct ModeDef
{
	const char *name;
	bool		arrow;			/* *_arrow tables */
	bool		fact_only;		/* ... lineorder_arrow only, heap dimensions */
	const char *settings;		/* run before the mode's queries */
	bool		warp;			/* needs a pg_warp plan node */
	bool		gpu;			/* ... that runs on the GPU */
} ModeDef;

typedef enum CellStatus
{
	ST_OK,
	ST_SKIPPED,
	ST_MISMATCH,
	ST_ERROR,
	ST_TIMEOUT
} CellStatus;

extern const char *const status_names[];

/* one query in one mode */
typedef struct Cell
{
	CellStatus	status;
	char	   *note;			/* skip reason, error message, mismatch */
	double	   *times;			/* timed runs */
	int			nruns;
	double		median,
				min,
				max;
	long		rows;
	PGresult   *result;			/* warm-up result, for the comparison */
} Cell;

typedef struct Query
{
	char	   *name;			/* file name without .sql */
	char	   *path;
	char	   *text;			/* as written (trailing ';' removed) */
	Cell		cells[MAX_MODES];
} Query;

/* growable string */
typedef struct Buf
{
	char	   *s;
	size_t		len,
				cap;
} Buf;

typedef struct RunInfo
{
	const ModeDef *modes[MAX_MODES];
	int			nmodes;
	int			runs;
	double		timeout;
	char		date[64];
	char		host[256];
	char		cpu[256];
	int			ncpu;
	long		mem_mb;
	char		kernel[256];
	char	   *server_version;
	char	   *settings;		/* jit, workers, shared_buffers, ... */
	char	   *command;
} RunInfo;

/* small utilities (exit on out of memory) */
void	   *xmalloc(size_t n);
void	   *xrealloc(void *p, size_t n);
char	   *xstrdup(const char *s);
void		buf_putn(Buf *b, const char *s, size_t n);
void		buf_puts(Buf *b, const char *s);
char	   *one_line(const char *msg);
char	   *xasprintf(const char *fmt,...) __attribute__((format(printf, 1, 2)));

/* bench_sql.c */
char	   *clean_sql(char *text);
char	   *rewrite_to_arrow(const char *sql, bool fact_only);
int			order_by_keys(const char *sql, const PGresult *res, int **keys, int *nkeys);

/* bench_report.c */
void		machine_info(RunInfo *ri);
char	   *command_line(int argc, char **argv);
int			write_csv(const char *path, Query **qs, int nq, const RunInfo *ri);
int			write_md(const char *path, Query **qs, int nq, const RunInfo *ri);
int			write_svg(const char *path, Query **qs, int nq, const RunInfo *ri);
int			make_dir(const char *path);

#endif							/* PGWARP_BENCH_H */
