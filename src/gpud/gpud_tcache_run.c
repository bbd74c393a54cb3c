/*-------------------------------------------------------------------------
 *
 * gpud_tcache_run.c
 *	  A job's program over a GPU table cache replica: slice by slice, the
 *	  versions visible to the query's snapshot (warp_version_visible, the
 *	  same function the GPU kernel evaluates) are the rows kept, and the
 *	  replica's columns are handed to the driver as native engine columns.
 *
 * Pure C; no PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpud_job_internal.h"
#include "gpud_tcache.h"
#include "warp_visibility.h"

/* the native column c of the program over replica column rc, rows [start, start + n) */
static void
slice_column(const Replica *rep, int rc, const WarpColumnSpec *cs, ArrowField *f,
			 ArrowArray *a, int64_t start, int64_t n)
{
	memset(f, 0, sizeof(*f));
	memset(a, 0, sizeof(*a));
	if (WARP_TYPE_IS_FLOAT(cs->type))
	{
		f->type.id = ARROW_TYPE_FLOAT;
		f->type.precision = ARROW_PRECISION_DOUBLE;
	}
	else
	{
		f->type.id = ARROW_TYPE_INT;
		f->type.bit_width = 64;
		f->type.is_signed = true;
	}
	a->field = f;
	a->length = n;
	a->values = (const uint8_t *) (rep->vals[rc] + start);
	a->values_len = (uint64_t) n * 8;
	if (rep->nnull[rc] > 0)
	{
		const uint8_t *v = rep->valid[rc] + start / 8;
		int64_t		valid = 0,
					i;

		for (i = 0; i < n / 8; i++)
			valid += __builtin_popcount(v[i]);
		for (i = n / 8 * 8; i < n; i++)
			valid += (v[i >> 3] >> (i & 7)) & 1;
		a->validity = v;
		a->null_count = n - valid;
	}
}

int
gpud_tcache_run(Part *p, char *why, size_t whylen)
{
	Run		   *r = p->run;
	GpudJob    *job = r->job;
	const uint8_t *classes = r->arena + job->off_cache_classes;
	const int32_t *cmap = (const int32_t *) (r->arena + job->off_cache_cols);
	int			ncols = r->prog.ncols;
	Replica    *rep;
	ArrowField *fields;
	ArrowArray *cols;
	bool	   *keep;
	int64_t		start;
	int			c,
				rc = 0;

	rep = gpud_tcache_acquire(&job->cache_key, job->cache_dict_epoch, why, whylen);
	if (rep == NULL)
		return -3;
	for (c = 0; c < ncols; c++)
	{
		int			k = cmap[c];
		bool		isfloat = WARP_TYPE_IS_FLOAT(r->prog.cols[c].type);

		if (k < 0 || k >= rep->ncols ||
			rep->kinds[k] != (isfloat ? GPUD_CACHE_COL_DOUBLE : GPUD_CACHE_COL_INT64))
		{
			gpud_tcache_release(rep);
			snprintf(why, whylen, "a column the replica does not hold as the program reads it");
			return -3;
		}
	}
	fields = calloc(ncols + 1, sizeof(ArrowField));
	cols = calloc(ncols + 1, sizeof(ArrowArray));
	keep = malloc(TCACHE_SLICE);
	if (fields == NULL || cols == NULL || keep == NULL)
	{
		p->res.status = WARP_ERR_OUT_OF_MEMORY;
		rc = 1;
	}
	for (start = 0; rc == 0 && start < rep->n; start += TCACHE_SLICE)
	{
		int64_t		n = rep->n - start < TCACHE_SLICE ? rep->n - start : TCACHE_SLICE;
		int64_t		i,
					kept = 0;
		WarpLoadStatus ls = WARP_LOAD_OK;
		int			bad_col = 0;
		warp_int64	bad_row = 0;
		WarpStatus	st;

		if (should_stop(r->hdr, r->sock))
		{
			rc = -2;
			break;
		}
		for (i = 0; i < n; i++)
		{
			int64_t		j = start + i;

			keep[i] = !rep->gone[j] &&
				warp_version_visible(classes, job->cache_nclasses, rep->xmin[j], rep->cmin[j],
									 rep->xmax[j], rep->cmax[j], job->cache_curcid);
			kept += keep[i];
		}
		p->res.batches++;
		if (kept == 0)
			continue;
		for (c = 0; c < ncols; c++)
			slice_column(rep, cmap[c], &r->prog.cols[c], &fields[c], &cols[c], start, n);
		st = warp_cpu_run_batch(r->cpu, cols, n, keep, &ls, &bad_col, &bad_row);
		if (st != WARP_OK)
		{
			p->res.status = st;
			rc = 1;
		}
		else if (ls != WARP_LOAD_OK)
		{
			p->res.load_status = ls;
			p->res.bad_col = bad_col;
			p->res.bad_row = bad_row;
			rc = 1;
		}
	}
	gpud_tcache_release(rep);
	free(fields);
	free(cols);
	free(keep);
	if (rc == 0)
		gpud_tcache_compact(&job->cache_key, job->cache_dict_epoch, classes,
							job->cache_nclasses);
	return rc;
}
