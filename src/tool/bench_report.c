/*
 * bench_report.c — the outputs of `pgwarp bench ssb`: results.csv (every
 * figure), results.md (a table per query and mode with ratios, the machine
 * and the command) and chart.svg (grouped bars on a log time axis, written
 * directly, no dependencies).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "pgwarp.h"
#include "bench.h"

/* --------------------------------------------------------------- outputs */



void
machine_info(RunInfo *ri)
{
	FILE	   *f;
	char		line[512];
	struct utsname u;
	time_t		now = time(NULL);
	struct tm	tm;

	gmtime_r(&now, &tm);
	strftime(ri->date, sizeof(ri->date), "%Y-%m-%d %H:%M UTC", &tm);
	if (gethostname(ri->host, sizeof(ri->host)) != 0)
		strcpy(ri->host, "?");
	ri->host[sizeof(ri->host) - 1] = '\0';
	strcpy(ri->cpu, "?");
	if ((f = fopen("/proc/cpuinfo", "r")) != NULL)
	{
		while (fgets(line, sizeof(line), f))
		{
			char	   *colon = strchr(line, ':');

			if (strncmp(line, "model name", 10) == 0 && colon)
			{
				snprintf(ri->cpu, sizeof(ri->cpu), "%s", colon + 2);
				ri->cpu[strcspn(ri->cpu, "\n")] = '\0';
				break;
			}
		}
		fclose(f);
	}
	ri->ncpu = (int) sysconf(_SC_NPROCESSORS_ONLN);
	ri->mem_mb = 0;
	if ((f = fopen("/proc/meminfo", "r")) != NULL)
	{
		long		kb;

		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "MemTotal: %ld kB", &kb) == 1)
				ri->mem_mb = kb / 1024;
		fclose(f);
	}
	if (uname(&u) == 0)
		snprintf(ri->kernel, sizeof(ri->kernel), "%s %s %s", u.sysname, u.release,
				 u.machine);
	else
		strcpy(ri->kernel, "?");
}

/* the command line, shell-quoted, with passwords in the DSN hidden */
char *
command_line(int argc, char **argv)
{
	Buf			b = {0};

	buf_puts(&b, "pgwarp");
	for (int i = 0; i < argc; i++)
	{
		char	   *a = xstrdup(argv[i]);
		char	   *p;
		bool		plain = true;

		if ((p = strstr(a, "password=")) != NULL)
		{
			char	   *e = p + 9;

			while (*e && *e != ' ' && *e != '&')
				e++;
			memmove(p + 12, e, strlen(e) + 1);
			memcpy(p + 9, "***", 3);
		}
		if ((p = strstr(a, "://")) != NULL)
		{
			char	   *at = strchr(p + 3, '@');
			char	   *colon = strchr(p + 3, ':');

			if (at && colon && colon < at)
			{
				memmove(colon + 4, at, strlen(at) + 1);
				memcpy(colon + 1, "***", 3);
			}
		}
		for (p = a; *p; p++)
			if (!(isalnum((unsigned char) *p) || strchr("-_./=,:@%+", *p)))
				plain = false;
		buf_puts(&b, " ");
		if (plain && *a)
			buf_puts(&b, a);
		else
		{
			buf_puts(&b, "'");
			for (p = a; *p; p++)
			{
				if (*p == '\'')
					buf_puts(&b, "'\\''");
				else
					buf_putn(&b, p, 1);
			}
			buf_puts(&b, "'");
		}
		free(a);
	}
	return b.s;
}

static void
csv_field(FILE *f, const char *s)
{
	if (strpbrk(s, ",\"\n\r") == NULL)
	{
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++)
	{
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

int
write_csv(const char *path, Query **qs, int nq, const RunInfo *ri)
{
	FILE	   *f = fopen(path, "w");

	if (f == NULL)
		return pgw_error("could not create \"%s\": %s", path, strerror(errno));
	fputs("query,mode,median_s,min_s,max_s,runs,rows,status,note\n", f);
	for (int i = 0; i < nq; i++)
		for (int m = 0; m < ri->nmodes; m++)
		{
			const Cell *c = &qs[i]->cells[m];
			bool		timed = c->status == ST_OK || c->status == ST_MISMATCH;

			csv_field(f, qs[i]->name);
			fputc(',', f);
			csv_field(f, ri->modes[m]->name);
			if (timed)
				fprintf(f, ",%.6f,%.6f,%.6f,%d,%ld,", c->median, c->min, c->max,
						c->nruns, c->rows);
			else
				fprintf(f, ",,,,%d,,", c->nruns);
			fputs(status_names[c->status], f);
			fputc(',', f);
			csv_field(f, c->note ? c->note : "");
			fputc('\n', f);
		}
	if (fclose(f) != 0)
		return pgw_error("could not write \"%s\": %s", path, strerror(errno));
	return 0;
}

static void
md_escape(FILE *f, const char *s)
{
	for (; *s; s++)
	{
		if (*s == '|')
			fputs("\\|", f);
		else
			fputc(*s, f);
	}
}

/* seconds with 3 significant digits at least, never "0.000" */
static void
fmt_secs(FILE *f, double v)
{
	if (v >= 10)
		fprintf(f, "%.1f", v);
	else if (v >= 0.01)
		fprintf(f, "%.3f", v);
	else
		fprintf(f, "%.5f", v);
}

int
write_md(const char *path, Query **qs, int nq, const RunInfo *ri)
{
	FILE	   *f = fopen(path, "w");
	double		total[MAX_MODES] = {0};
	bool		total_ok[MAX_MODES];
	double		logsum[MAX_MODES] = {0};
	int			nratio[MAX_MODES] = {0};
	const char *first = ri->modes[0]->name;

	if (f == NULL)
		return pgw_error("could not create \"%s\": %s", path, strerror(errno));
	fprintf(f, "# Star Schema Benchmark: pgwarp bench ssb\n\n");
	fprintf(f, "- date: %s\n", ri->date);
	fprintf(f, "- client machine: %s; %s; %d CPUs; %ld MB; %s\n", ri->host, ri->cpu,
			ri->ncpu, ri->mem_mb, ri->kernel);
	fprintf(f, "- server: %s\n", ri->server_version);
	fprintf(f, "- server settings: %s\n", ri->settings);
	fprintf(f, "- command: `%s`\n", ri->command);
	fprintf(f, "- method: per query and mode, one warm-up run, then %d timed run%s "
			"(wall time at the client, result transfer included); the cells are "
			"median seconds; (N.NNx) = %s median / this median, higher is faster. "
			"Every mode's answers were compared with those of the first mode.\n\n",
			ri->runs, ri->runs == 1 ? "" : "s", first);

	fputs("| query |", f);
	for (int m = 0; m < ri->nmodes; m++)
		fprintf(f, " %s (s) |", ri->modes[m]->name);
	fputs(" rows |\n|---|", f);
	for (int m = 0; m < ri->nmodes; m++)
		fputs("---:|", f);
	fputs("---:|\n", f);
	for (int m = 0; m < ri->nmodes; m++)
		total_ok[m] = true;
	for (int i = 0; i < nq; i++)
	{
		const Cell *ref = &qs[i]->cells[0];
		long		rows = -1;

		fprintf(f, "| %s |", qs[i]->name);
		for (int m = 0; m < ri->nmodes; m++)
		{
			const Cell *c = &qs[i]->cells[m];

			if (c->status == ST_OK || c->status == ST_MISMATCH)
			{
				fputc(' ', f);
				fmt_secs(f, c->median);
				if (m > 0 && ref->status == ST_OK && c->median > 0)
				{
					fprintf(f, " (%.2fx)", ref->median / c->median);
					logsum[m] += log(ref->median / c->median);
					nratio[m]++;
				}
				if (c->status == ST_MISMATCH)
					fputs(" **WRONG ANSWER**", f);
				total[m] += c->median;
				if (rows < 0)
					rows = c->rows;
			}
			else
			{
				fprintf(f, " %s", c->status == ST_SKIPPED ? "skipped" :
						c->status == ST_TIMEOUT ? "timeout" : "**error**");
				total_ok[m] = false;
			}
			fputs(" |", f);
		}
		if (rows >= 0)
			fprintf(f, " %ld |\n", rows);
		else
			fputs(" |\n", f);
	}
	fputs("| **total** |", f);
	for (int m = 0; m < ri->nmodes; m++)
	{
		if (total_ok[m])
		{
			fputc(' ', f);
			fmt_secs(f, total[m]);
		}
		else
			fputs(" –", f);
		if (m > 0 && nratio[m] > 0)
			fprintf(f, " (geomean %.2fx)", exp(logsum[m] / nratio[m]));
		fputs(" |", f);
	}
	fputs(" |\n\n", f);

	/* notes: skipped / failed cells, grouped by mode and reason */
	{
		bool		any = false;

		for (int m = 0; m < ri->nmodes; m++)
		{
			for (int i = 0; i < nq; i++)
			{
				const Cell *c = &qs[i]->cells[m];
				bool		seen = false;
				Buf			names = {0};

				if (c->status == ST_OK || c->note == NULL)
					continue;
				for (int j = 0; j < i; j++)
				{
					const Cell *o = &qs[j]->cells[m];

					if (o->status == c->status && o->note && strcmp(o->note, c->note) == 0)
						seen = true;
				}
				if (seen)
					continue;
				for (int j = i; j < nq; j++)
				{
					const Cell *o = &qs[j]->cells[m];

					if (o->status == c->status && o->note && strcmp(o->note, c->note) == 0)
					{
						if (names.len)
							buf_puts(&names, ", ");
						buf_puts(&names, qs[j]->name);
					}
				}
				if (!any)
					fputs("Notes:\n\n", f);
				any = true;
				fprintf(f, "- %s %s (%s): ", ri->modes[m]->name, status_names[c->status],
						names.s);
				md_escape(f, c->note);
				fputs("\n", f);
				free(names.s);
			}
		}
		if (any)
			fputs("\n", f);
	}
	fputs("Files: results.csv (every figure), chart.svg (the chart).\n", f);
	if (fclose(f) != 0)
		return pgw_error("could not write \"%s\": %s", path, strerror(errno));
	return 0;
}

static void
xml_escape(FILE *f, const char *s)
{
	for (; *s; s++)
	{
		switch (*s)
		{
			case '<':
				fputs("&lt;", f);
				break;
			case '>':
				fputs("&gt;", f);
				break;
			case '&':
				fputs("&amp;", f);
				break;
			case '"':
				fputs("&quot;", f);
				break;
			default:
				fputc(*s, f);
		}
	}
}

static const char *const palette[] = {
	"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2"
};

static void
time_label(char *buf, size_t len, double v)
{
	if (v >= 1)
		snprintf(buf, len, "%g s", v);
	else if (v >= 1e-3)
		snprintf(buf, len, "%g ms", v * 1e3);
	else
		snprintf(buf, len, "%g µs", v * 1e6);
}

/* The chart's layout: margins, bar sizes and the decades of the y axis. */
typedef struct SvgPlot
{
	int			bar_w,
				gap,
				left,
				right,
				top,
				plot_h,
				bottom;
	int			group_w;
	int			width;
	int			height;
	int			y0;				/* the x axis */
	int			dlo,
				dhi;			/* decades at the bottom and the top */
} SvgPlot;

/* y of a time on the log scale */
static double
svg_y(const SvgPlot *p, double v)
{
	return p->y0 - (log10(fmax((v), 1e-6)) - p->dlo) / (double) (p->dhi - p->dlo) * p->plot_h;
}

/* grid and y labels: decades, with 2 and 5 between; the axes and their titles */
static void
svg_grid(FILE *f, const SvgPlot *p)
{
	int			dlo = p->dlo,
				dhi = p->dhi;

	for (int d = dlo; d <= dhi; d++)
	{
		for (int k = 1; k <= 5; k += (k == 1 ? 1 : 3))
		{
			double		v = k * pow(10, d);
			double		y = svg_y(p, v);
			char		lab[32];

			if (d == dhi && k > 1)
				break;
			fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" "
					"stroke=\"%s\" stroke-width=\"1\"/>\n", p->left, p->width - p->right, y, y,
					k == 1 ? "#bbb" : "#eee");
			time_label(lab, sizeof(lab), v);
			if (k == 1 || dhi - dlo <= 3)
				fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"%s\">%s</text>\n",
						p->left - 6, y + 4, k == 1 ? "#000" : "#777", lab);
		}
	}
	fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#000\"/>\n",
			p->left, p->width - p->right, p->y0, p->y0);
	fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#000\"/>\n",
			p->left, p->left, p->top, p->y0);
	fprintf(f, "<text transform=\"translate(18,%d) rotate(-90)\" text-anchor=\"middle\">"
			"median time (seconds, log scale)</text>\n", p->top + p->plot_h / 2);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">query</text>\n",
			p->left + (p->width - p->left - p->right) / 2, p->height - 12);
}

/* one group of bars per query, a bar (median, min-max whisker) per mode */
static void
svg_bars(FILE *f, const SvgPlot *p, Query **qs, int nq, const RunInfo *ri)
{
	int			bar_w = p->bar_w,
				y0 = p->y0;

	for (int i = 0; i < nq; i++)
	{
		int			gx = p->left + p->gap / 2 + i * p->group_w;

		for (int m = 0; m < ri->nmodes; m++)
		{
			const Cell *c = &qs[i]->cells[m];
			int			x = gx + m * bar_w;
			const char *color = palette[m % 6];

			if (c->status == ST_OK || c->status == ST_MISMATCH)
			{
				double		y = svg_y(p, c->median);

				fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" "
						"fill=\"%s\"%s><title>%s %s: median %.4f s (min %.4f, max %.4f, "
						"%d runs)%s</title></rect>\n",
						x, y, bar_w - 2, y0 - y, color,
						c->status == ST_MISMATCH ? " stroke=\"red\" stroke-width=\"2\"" : "",
						qs[i]->name, ri->modes[m]->name, c->median, c->min, c->max,
						c->nruns, c->status == ST_MISMATCH ? ", WRONG ANSWER" : "");
				fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
						"stroke=\"#333\"/>\n", x + (bar_w - 2) / 2.0, x + (bar_w - 2) / 2.0,
						svg_y(p, c->min), svg_y(p, c->max));
			}
			else
			{
				/* a mark at the base: skipped / timeout / error */
				fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"9\" fill=\"#999\" "
						"transform=\"rotate(-90 %d %d)\">%s<title>%s %s: %s</title></text>\n",
						x + bar_w / 2 + 2, y0 - 4, x + bar_w / 2 + 2, y0 - 4,
						c->status == ST_SKIPPED ? "skipped" :
						c->status == ST_TIMEOUT ? "timeout" : "error",
						qs[i]->name, ri->modes[m]->name, status_names[c->status]);
			}
		}
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">",
				gx + ri->nmodes * bar_w / 2, y0 + 18);
		xml_escape(f, qs[i]->name);
		fputs("</text>\n", f);
	}
}

/* legend, one line above the plot */
static void
svg_legend(FILE *f, const SvgPlot *p, Query **qs, int nq, const RunInfo *ri)
{
	int			lx = p->left;

	for (int m = 0; m < ri->nmodes; m++)
	{
		bool		any = false;

		for (int i = 0; i < nq; i++)
			if (qs[i]->cells[m].status == ST_OK || qs[i]->cells[m].status == ST_MISMATCH)
				any = true;
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>\n",
				lx, 50, palette[m % 6]);
		fprintf(f, "<text x=\"%d\" y=\"%d\">%s%s</text>\n", lx + 16, 61,
				ri->modes[m]->name, any ? "" : " (skipped)");
		lx += 16 + 8 * (int) strlen(ri->modes[m]->name) + (any ? 0 : 62) + 24;
	}
}

int
write_svg(const char *path, Query **qs, int nq, const RunInfo *ri)
{
	FILE	   *f = fopen(path, "w");
	double		vmin = INFINITY,
				vmax = 0;
	SvgPlot		p = {
		.bar_w = 14,
		.gap = 18,
		.left = 80,
		.right = 30,
		.top = 70,
		.plot_h = 340,
		.bottom = 70
	};

	p.group_w = ri->nmodes * p.bar_w + p.gap;
	p.width = p.left + nq * p.group_w + p.right;
	p.y0 = p.top + p.plot_h;
	if (p.width < 560)
		p.width = 560;
	p.height = p.top + p.plot_h + p.bottom;
	if (f == NULL)
		return pgw_error("could not create \"%s\": %s", path, strerror(errno));
	for (int i = 0; i < nq; i++)
		for (int m = 0; m < ri->nmodes; m++)
		{
			const Cell *c = &qs[i]->cells[m];

			if (c->status != ST_OK && c->status != ST_MISMATCH)
				continue;
			vmin = fmin(vmin, fmax(c->min, 1e-6));
			vmax = fmax(vmax, fmax(c->max, 1e-6));
		}
	if (!isfinite(vmin))
	{
		vmin = 0.1;
		vmax = 1;
	}
	p.dlo = (int) floor(log10(vmin));
	p.dhi = (int) ceil(log10(vmax));
	if (p.dhi <= p.dlo)
		p.dhi = p.dlo + 1;

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
			"viewBox=\"0 0 %d %d\" font-family=\"Helvetica, Arial, sans-serif\" "
			"font-size=\"12\">\n", p.width, p.height, p.width, p.height);
	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", p.width, p.height);
	fprintf(f, "<text x=\"%d\" y=\"22\" font-size=\"16\" font-weight=\"bold\">"
			"Star Schema Benchmark: median time per query (log scale, lower is "
			"better)</text>\n", p.left);
	fprintf(f, "<text x=\"%d\" y=\"40\" fill=\"#555\">", p.left);
	xml_escape(f, ri->host);
	fprintf(f, ", %s, %d timed run%s after a warm-up; whiskers: min-max</text>\n",
			ri->date, ri->runs, ri->runs == 1 ? "" : "s");

	svg_grid(f, &p);
	svg_bars(f, &p, qs, nq, ri);
	svg_legend(f, &p, qs, nq, ri);
	fputs("</svg>\n", f);
	if (fclose(f) != 0)
		return pgw_error("could not write \"%s\": %s", path, strerror(errno));
	return 0;
}

int
make_dir(const char *path)
{
	char		tmp[PATH_MAX];

	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int) sizeof(tmp))
		return pgw_error("path too long: %s", path);
	for (char *p = tmp + 1; *p; p++)
	{
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
			return pgw_error("could not create directory \"%s\": %s", tmp, strerror(errno));
		*p = '/';
	}
	if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
		return pgw_error("could not create directory \"%s\": %s", tmp, strerror(errno));
	return 0;
}

