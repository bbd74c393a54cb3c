/*-------------------------------------------------------------------------
 *
 * warp_gpu_groups.cu
 *	  The GPU driver's device group table (see warp_gpu.cu): its sizing
 *	  (direct or hash, also for warp_gpu_estimate), allocation and
 *	  clearing, growing in place of a flush, flushing its groups into the
 *	  host result, and the accessors of that result; in row mode (append
 *	  form) a batch's rows taken to the host, and a Top-N's candidates
 *	  compacted there.  The kernels it
 *	  launches are in warp_gpu_kernels.cu.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "gpud_clock.h"
#include "warp_gpu_internal.h"

/* --------------------------------------------------------- the table */

/* clear the device group table (on the stream) */
static bool
clear_groups(WarpGpu *g, char *why, size_t whylen)
{
	warp_gpu_clear<<<grid_for(g, g->nslots), BLOCK_THREADS, 0, g->stream>>>(g->grp, g->nslots, g->d_aggs);
	if (!CUDA_OK(cudaGetLastError()))
		return false;
	if (!CUDA_OK(cudaMemsetAsync(&g->d_res->nused, 0, sizeof(unsigned long long), g->stream)))
		return false;
	g->used = 0;
	return true;
}

/* bytes of one slot of the group table, as allocated */
static size_t
group_slot_bytes(const WarpProgram *p)
{
	return sizeof(warp_uint32) + (sizeof(warp_int64) + 1) * (p->nkeys ? p->nkeys : 1) +
		sizeof(WarpAggState) * (p->naggs ? p->naggs : 1);
}

/*
 * Double a hash group table in place of a flush, while it stays within
 * HASH_BYTES_GROW_MAX and the query's share of device memory has room:
 * a flush downloads the groups and merges them on the host, so a query of
 * millions of groups (GROUP BY a customer key) would flush before nearly
 * every batch.  The new table is filled on the device from the old one.
 * 1: grown; 0: cannot grow (nothing changed); -1: a CUDA error (why).
 */
int
grow_groups(WarpGpu *g, char *why, size_t whylen)
{
	const WarpProgram *p = g->prog;
	warp_int64	nslots = g->nslots * 2;
	size_t		nk = p->nkeys ? p->nkeys : 1;
	size_t		na = p->naggs ? p->naggs : 1;
	WarpRowGroups to = g->grp;
	WarpRowGroups from = g->grp;
	char		nomem[256];

	if (g->grp.direct || context_poisoned ||
		(size_t) nslots * group_slot_bytes(p) > HASH_BYTES_GROW_MAX)
		return 0;
	to.state = NULL;
	to.keys = NULL;
	to.knull = NULL;
	to.aggs = NULL;
	/* (out of memory or over the share: just no growth, so its own why) */
	if (!dev_malloc(g, (void **) &to.state, sizeof(warp_uint32) * nslots, nomem, sizeof(nomem)) ||
		!dev_malloc(g, (void **) &to.keys, sizeof(warp_int64) * nslots * nk, nomem, sizeof(nomem)) ||
		!dev_malloc(g, (void **) &to.knull, (size_t) nslots * nk, nomem, sizeof(nomem)) ||
		!dev_malloc(g, (void **) &to.aggs, sizeof(WarpAggState) * nslots * na, nomem, sizeof(nomem)))
	{
		dev_free(g, to.state, to.state ? sizeof(warp_uint32) * nslots : 0);
		dev_free(g, to.keys, to.keys ? sizeof(warp_int64) * nslots * nk : 0);
		dev_free(g, to.knull, to.knull ? (size_t) nslots * nk : 0);
		dev_free(g, to.aggs, to.aggs ? sizeof(WarpAggState) * nslots * na : 0);
		return context_poisoned ? -1 : 0;
	}
	to.mask = (warp_uint64) nslots - 1;
	to.max_used = (warp_uint64) (nslots / 2);
	warp_gpu_clear<<<grid_for(g, nslots), BLOCK_THREADS, 0, g->stream>>>(to, nslots, g->d_aggs);
	if (!CUDA_OK(cudaGetLastError()) ||
		!CUDA_OK(cudaMemsetAsync(&g->d_res->nused, 0, sizeof(unsigned long long), g->stream)))
		goto fail;
	warp_gpu_regroup<<<grid_for(g, g->nslots), BLOCK_THREADS, 0, g->stream>>>(from, g->nslots, to);
	if (!CUDA_OK(cudaGetLastError()) || !CUDA_OK(cudaStreamSynchronize(g->stream)))
		goto fail;
	dev_free(g, from.state, sizeof(warp_uint32) * g->nslots);
	dev_free(g, from.keys, sizeof(warp_int64) * g->nslots * nk);
	dev_free(g, from.knull, (size_t) g->nslots * nk);
	dev_free(g, from.aggs, sizeof(WarpAggState) * g->nslots * na);
	g->grp = to;
	g->nslots = nslots;
	g->max_fill = nslots / 2;
	g->grows++;
	return 1;

fail:
	/* the job fails (and re-runs on the CPU driver); the old table stays
	 * the driver's, to be freed with it */
	dev_free(g, to.state, sizeof(warp_uint32) * nslots);
	dev_free(g, to.keys, sizeof(warp_int64) * nslots * nk);
	dev_free(g, to.knull, (size_t) nslots * nk);
	dev_free(g, to.aggs, sizeof(WarpAggState) * nslots * na);
	return -1;
}

/* size the group table (no CUDA: warp_gpu_estimate uses it too) */
static bool
size_groups(WarpGpu *g, const WarpProgram *p, WarpJoinTable *const *tables,
			char *why, size_t whylen)
{
	size_t		slot_bytes = sizeof(warp_uint32) + (size_t) p->nkeys * 9 +
		(size_t) p->naggs * sizeof(WarpAggState);
	warp_int64	product = 1;
	bool		all_dim = true;
	bool		seen[WARP_ROW_MAX_JOINS];
	int			k;

	memset(seen, 0, sizeof(seen));
	memset(&g->grp, 0, sizeof(g->grp));
	g->grp.nkeys = p->nkeys;
	g->grp.naggs = p->naggs;
	g->fan = 1;
	if (p->emit_rows)
	{
		/* append form: every joined row a slot, up to fan per fact row
		 * (a left join's miss is one row too) */
		g->grp.append = 1;
		all_dim = false;
		if (p->topn_limit > 0)
			g->grp.topn = warp_topn_order(p);
		for (k = 0; k < p->njoins; k++)
			if (p->joins[k].kind == WARP_JOIN_INNER || p->joins[k].kind == WARP_JOIN_LEFT)
			{
				warp_int64	chain = warp_row_max_chain(tables[p->joins[k].table]);

				g->fan *= chain > 1 ? chain : 1;
				if (g->fan > HASH_SLOTS_WANT)
					g->fan = HASH_SLOTS_WANT + 1;
			}
	}
	for (k = p->emit_rows ? -1 : p->nkeys - 1; k >= 0; k--)
	{
		const WarpGroupKey *gk = &p->keys[k];

		if (gk->kind != WG_DIM)
		{
			all_dim = false;
			continue;
		}
		if (!seen[gk->join])
		{
			/* distinct payloads one key finds <= its longest chain */
			seen[gk->join] = true;
			warp_int64	chain = warp_row_max_chain(tables[p->joins[gk->join].table]);

			/* a left join's miss is one row too */
			g->fan *= chain > 1 ? chain : 1;
			if (g->fan > HASH_SLOTS_WANT)
				g->fan = HASH_SLOTS_WANT + 1;
		}
		if (product <= DIRECT_SLOTS_MAX)
		{
			g->grp.stride[k] = product;
			product *= (warp_int64) tables[p->joins[gk->join].table]->npayloads + 1;
		}
	}
	if (g->fan < 1)
		g->fan = 1;
	if (all_dim && product <= DIRECT_SLOTS_MAX && (size_t) product * slot_bytes <= DIRECT_BYTES_MAX)
	{
		g->grp.direct = 1;
		g->nslots = product;
		g->max_fill = product;
	}
	else
	{
		warp_int64	want = HASH_SLOTS_WANT;

		if (all_dim && product < want / 2)
			want = product * 2;
		while ((size_t) want * slot_bytes > HASH_BYTES_MAX && want > HASH_SLOTS_MIN)
			want /= 2;
		for (g->nslots = HASH_SLOTS_MIN; g->nslots < want; g->nslots *= 2)
			;
		g->max_fill = g->nslots / 2;
		g->grp.mask = (warp_uint64) g->nslots - 1;
		g->grp.max_used = (warp_uint64) g->max_fill;
		if (g->fan > g->max_fill)
		{
			set_why(why, whylen, "duplicate join keys fan out beyond the device %s",
					p->emit_rows ? "row buffer" : "group table");
			return false;
		}
	}
	return true;
}

/* size and allocate the group table */
bool
setup_groups(WarpGpu *g, const WarpProgram *p, WarpJoinTable *const *tables,
			 char *why, size_t whylen)
{
	if (!size_groups(g, p, tables, why, whylen))
		return false;
	if (!dev_malloc(g, (void **) &g->grp.state, sizeof(warp_uint32) * g->nslots, why, whylen) ||
		!dev_malloc(g, (void **) &g->grp.keys, sizeof(warp_int64) * g->nslots * (p->nkeys ? p->nkeys : 1), why, whylen) ||
		!dev_malloc(g, (void **) &g->grp.knull, (size_t) g->nslots * (p->nkeys ? p->nkeys : 1), why, whylen) ||
		!dev_malloc(g, (void **) &g->grp.aggs, sizeof(WarpAggState) * g->nslots * (p->naggs ? p->naggs : 1), why, whylen) ||
		!dev_malloc(g, (void **) &g->d_res, sizeof(DevResult), why, whylen) ||
		!CUDA_OK(cudaMallocHost(&g->h_res, sizeof(DevResult))))
		return false;
	g->grp.nused = &g->d_res->nused;
	if (!CUDA_OK(cudaMemsetAsync(g->d_res, 0, sizeof(DevResult), g->stream)))
		return false;
	return clear_groups(g, why, whylen);
}

extern "C" warp_uint64
warp_gpu_estimate(const WarpProgram *p, WarpJoinTable *const *tables, warp_uint64 stage_bytes)
{
	WarpGpu		tmp;
	warp_uint64 n = (warp_uint64) 16 << 20;	/* program, descriptors, rounding */
	int			j;

	memset(&tmp, 0, sizeof(tmp));
	if (warp_row_check(p, tables) != NULL ||
		!size_groups(&tmp, p, tables, NULL, 0))
		return n;				/* create will refuse it anyway */
	/* the table, and the buffer its groups are flushed through */
	n += 2 * (warp_uint64) tmp.nslots * group_slot_bytes(p);
	for (j = 0; j < p->njoins; j++)
	{
		const WarpJoinTable *t = tables[p->joins[j].table];

		n += sizeof(warp_int32) * 2 * (warp_uint64) t->nrows;
		if (t->direct && t->nrows > 0)
			n += sizeof(warp_int32) * (warp_uint64) (t->max - t->min + 1);
		else if (t->nrows > 0)
			n += (sizeof(warp_int64) + sizeof(warp_int32)) * ((warp_uint64) t->mask + 1);
	}
	return n + NBATCH_SLOTS * stage_bytes;
}

/* ---------------------------------------------------------- flushing */

/*
 * Bring the device group table's groups to the host result and clear it.
 * The stream must be idle (synchronized) and g->used current.
 */
bool
flush_groups(WarpGpu *g, char *why, size_t whylen)
{
	const WarpProgram *p = g->prog;
	warp_int64	n = g->used;
	size_t		kbytes = sizeof(warp_int64) * n * p->nkeys;
	size_t		nbytes = align_up((size_t) n * p->nkeys, 16);
	size_t		abytes = sizeof(WarpAggState) * n * p->naggs;
	size_t		need = align_up(kbytes, 16) + nbytes + abytes + 16;
	warp_uint8 *ho;
	warp_int64	i;
	int			a;
	unsigned long long got;
	WarpAggState st[WARP_ROW_MAX_AGGS];
	double		t0,
				t1;
	bool		first = g->result.n == 0;

	if (n == 0)
		return true;
	t0 = gpud_now_ms();
	if (need > g->d_out_size)
	{
		dev_free(g, g->d_out, g->d_out_size);
		g->d_out = NULL;
		g->d_out_size = 0;
		if (!dev_malloc(g, &g->d_out, need, why, whylen))
			return false;
		g->d_out_size = need;
	}
	if (need > g->h_out_size)
	{
		free(g->h_out);
		g->h_out = malloc(need);
		g->h_out_size = g->h_out ? need : 0;
		if (g->h_out == NULL)
		{
			set_why(why, whylen, "out of memory");
			return false;
		}
	}
	{
		warp_uint8 *d = (warp_uint8 *) g->d_out;
		unsigned long long *counter = (unsigned long long *) (d + need - 16);

		if (!CUDA_OK(cudaMemsetAsync(counter, 0, sizeof(*counter), g->stream)))
			return false;
		warp_gpu_compact<<<grid_for(g, g->nslots), BLOCK_THREADS, 0, g->stream>>>(
			g->grp, g->nslots, (warp_int64 *) d, d + align_up(kbytes, 16),
			(WarpAggState *) (d + align_up(kbytes, 16) + nbytes), counter,
			(unsigned long long) n);
		if (!CUDA_OK(cudaGetLastError()) ||
			!CUDA_OK(cudaMemcpyAsync(g->h_out, g->d_out, need, cudaMemcpyDeviceToHost, g->stream)) ||
			!clear_groups(g, why, whylen) ||
			!CUDA_OK(cudaStreamSynchronize(g->stream)))
			return false;
	}
	ho = (warp_uint8 *) g->h_out;
	t1 = gpud_now_ms();
	g->flush_copy_ms += t1 - t0;
	memcpy(&got, ho + need - 16, sizeof(got));
	if ((warp_int64) got != n)
	{
		set_why(why, whylen, "device group table holds %llu groups, expected %lld",
				got, (long long) n);
		return false;
	}
	for (i = 0; i < n; i++)
	{
		const warp_int64 *kv = (const warp_int64 *) ho + i * p->nkeys;
		const warp_uint8 *kn = ho + align_up(kbytes, 16) + i * p->nkeys;
		const WarpAggState *as = (const WarpAggState *) (ho + align_up(kbytes, 16) + nbytes) +
			i * p->naggs;

		for (a = 0; a < p->naggs; a++)
		{
			st[a] = as[a];
			warp_row_agg_export(&p->aggs[a], &st[a]);
		}
		/* the device table's groups are distinct: the first flush only
		 * appends them (the index is built if another flush comes); rows
		 * (append form) are only ever appended */
		if (first || g->grp.append ? !warp_row_result_append(&g->result, kv, kn, st)
			: !warp_row_result_merge(&g->result, p, kv, kn, st))
		{
			set_why(why, whylen, "out of memory");
			return false;
		}
	}
	g->flush_host_ms += gpud_now_ms() - t1;
	return true;
}

/* ------------------------------------------------------------ row mode */

/*
 * Row mode under a Top-N: the candidates on the host are twice the limit:
 * keep those not after the limit-th best first ORDER BY key, which becomes
 * the threshold the kernel drops later rows by (warp_topn_order.h).
 */
static bool
compact_topn(WarpGpu *g, char *why, size_t whylen)
{
	const WarpProgram *p = g->prog;
	WarpRowResult *r = &g->result;
	warp_int32 *idx;
	warp_int64	floor = warp_topn_compact_floor(p);

	if (r->n < (g->topn_compact_at > floor ? g->topn_compact_at : floor))
		return true;
	idx = (warp_int32 *) malloc(sizeof(warp_int32) * r->n);
	if (idx == NULL)
	{
		set_why(why, whylen, "out of memory");
		return false;
	}
	r->n = warp_topn_compact_rows(p, r->keys, r->knull, r->n, idx, &g->grp.topn_val,
								  &g->grp.topn_null);
	free(idx);
	g->grp.topn_have = 1;
	/* many rows equal to the threshold: compact again only at twice them */
	g->topn_compact_at = r->n * 2;
	return true;
}

extern "C" int
warp_gpu_take_rows(WarpGpu *g, char *why, size_t whylen)
{
	if (!g->grp.append || g->finished)
	{
		set_why(why, whylen, "the GPU driver is not in row mode");
		return -1;
	}
	if (warp_gpu_wait(g, why, whylen) != 0)
	{
		g->failed = true;
		return -1;
	}
	if (!flush_groups(g, why, whylen) ||
		(g->prog->topn_limit > 0 && !compact_topn(g, why, whylen)))
	{
		g->failed = true;
		return -1;
	}
	return 0;
}

extern "C" warp_int64
warp_gpu_nrows(const WarpGpu *g)
{
	return g->result.n;
}

extern "C" void
warp_gpu_forget_rows(WarpGpu *g)
{
	g->result.n = 0;
}

/* ------------------------------------------------------------ results */

extern "C" warp_int64
warp_gpu_ngroups(const WarpGpu *g)
{
	return g->finished ? g->result.n : 0;
}

extern "C" warp_int64
warp_gpu_group_key(const WarpGpu *g, warp_int64 grp, int k, bool *isnull)
{
	*isnull = g->result.knull[grp * g->result.nkeys + k] != 0;
	return g->result.keys[grp * g->result.nkeys + k];
}

extern "C" const WarpAggState *
warp_gpu_group_agg(const WarpGpu *g, warp_int64 grp, int a)
{
	return &g->result.aggs[grp * g->result.naggs + a];
}
