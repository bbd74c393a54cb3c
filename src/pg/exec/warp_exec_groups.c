/*
 * warp_exec_groups.c — the groups a WarpPreAgg / WarpJoin node's drivers
 * left: merged across threads or GPU lanes (warp_group_merge.h), read from
 * whichever driver ran (this process's, its threads', pg_warp_gpud's), and
 * turned into PostgreSQL values: group keys, dimension payloads, and each
 * partial aggregate's state in the form PostgreSQL's combine and
 * deserialize functions expect.
 *
 * The drivers are warp_exec_run.c and warp_exec_heap.c; the rows are
 * emitted by warp_exec_emit.c.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

#include "exec/warp_exec_internal.h"

/*
 * The group merge is abandoned when its sample partition keeps more than
 * this share of its groups: keys that rarely repeat across threads (SSB
 * SF=1 grouped by customer, priority and supplier: 5.97M partial groups,
 * 5.93M merged) cost the merge's time and save the Finalize step nothing.
 */
#define WARP_MERGE_MAX_KEPT 0.9

/* text keys of a thread's driver, for the group merge */
typedef struct MergeText
{
	WarpCpu    *cpu;
	const int  *key_col;		/* per key: its text column, or -1 */
} MergeText;

static const warp_uint8 *
merge_key_text(void *ctx, int k, warp_int64 id, warp_int64 *len)
{
	MergeText  *mt = ctx;

	return warp_cpu_key_text(mt->cpu, mt->key_col[k], id, len);
}

/* frees the merged groups' malloc'd memory with engine_cxt */
static void
merge_release(void *arg)
{
	warp_group_merge_free((WarpGroupMerge *) arg);
}

/* count(DISTINCT x) cannot be counted without the merge: fail the query */
static void
merge_failed(WarpScanState *ws)
{
	CHECK_FOR_INTERRUPTS();		/* an interrupt stopped it: its own error */
	ereport(ERROR,
			(errcode(ws->merge_skipped == warp_merge_no_memory ? ERRCODE_OUT_OF_MEMORY
					 : ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("pg_warp: could not count DISTINCT values: %s", ws->merge_skipped)));
}

/*
 * Merge the partial groups of the threads' drivers, or of the daemon's GPU
 * lanes, before they are emitted (warp_group_merge.h): a group every
 * thread saw would otherwise reach the Finalize step once per thread.
 * Where the merge is abandoned (a combination PostgreSQL's combine
 * function would raise an error for, no memory) the groups go up
 * unmerged, as before, and the Finalize step does the rest.
 */
void
warp_exec_merge_groups(WarpScanState *ws)
{
	bool		distinct = ws->distinct_agg >= 0;
	MemoryContext old = MemoryContextSwitchTo(ws->engine_cxt);
	WarpGroupSource *src;
	bool	   *is_text = NULL;
	int		   *key_col;
	int			nsrc = 0,
				i,
				k;
	WarpGroupMerge *m;
	MemoryContextCallback *cb;

	ws->merge_skipped = NULL;
	if (distinct)
	{
		/* count(DISTINCT x) is counted from merged (keys, x) groups: the
		 * merge is not optional, one source or many */
		if (ws->css.ss.ps.plan->parallel_aware)
			elog(ERROR, "pg_warp: count(DISTINCT) counted by the engine under parallel workers");
	}
	else if (!pgwarp_merge_groups || ws->prog.nkeys == 0 || ws->groups < 2 ||
			 !((ws->pool && ws->pool->ncpus > 1) || (ws->gres && ws->gres->nparts > 1)))
	{
		MemoryContextSwitchTo(old);
		return;
	}
	key_col = palloc(sizeof(int) * ws->prog.nkeys);
	for (k = 0; k < ws->prog.nkeys; k++)
	{
		key_col[k] = warp_group_key_text_column(&ws->prog, ws->prog.keys[k].node);
		if (key_col[k] >= 0)
		{
			if (is_text == NULL)
				is_text = palloc0(sizeof(bool) * ws->prog.nkeys);
			is_text[k] = true;
		}
	}
	if (ws->gres)
	{
		GpudResult *r = ws->gres;
		uint8	   *base = (uint8 *) r;
		const WarpAggState **aggs = palloc(sizeof(WarpAggState *) * Max(r->naggs, 1));

		if (is_text != NULL || r->nkeys != ws->prog.nkeys || r->naggs != ws->prog.naggs)
		{
			/* the planner keeps text keys off the daemon */
			if (distinct)
				elog(ERROR, "pg_warp: the daemon's groups cannot be merged");
			MemoryContextSwitchTo(old);
			return;
		}
		src = palloc0(sizeof(WarpGroupSource));
		for (i = 0; i < r->naggs; i++)
			aggs[i] = (const WarpAggState *) (base + r->off_states) + i;
		src->n = r->ngroups;
		src->keys = (const warp_int64 *) (base + r->off_keys);
		src->nulls = base + r->off_nulls;
		src->aggs = aggs;
		src->stride = r->naggs;
		nsrc = 1;
	}
	else
	{
		int			ncpus = ws->pool ? ws->pool->ncpus : 1;

		src = palloc0(sizeof(WarpGroupSource) * ncpus);
		for (i = 0; i < ncpus; i++)
		{
			MergeText  *mt = palloc(sizeof(MergeText));

			mt->cpu = ws->pool ? ws->pool->cpus[i] : ws->cpu;
			mt->key_col = key_col;
			warp_cpu_group_source(mt->cpu, &src[nsrc]);
			src[nsrc].text = merge_key_text;
			src[nsrc].text_ctx = mt;
			if (src[nsrc].n > 0)
				nsrc++;
		}
	}
	MemoryContextSwitchTo(old);

	m = warp_group_merge(&ws->prog, is_text, src, nsrc, distinct ? 1.0 : WARP_MERGE_MAX_KEPT,
						 Max(ws->nthreads, 1), pgwarp_threads_interrupted, NULL, &ws->merge_skipped);
	CHECK_FOR_INTERRUPTS();
	if (m == NULL && !distinct)
		return;
	if (m == NULL)
		merge_failed(ws);
	cb = MemoryContextAlloc(ws->engine_cxt, sizeof(MemoryContextCallback));
	cb->func = merge_release;
	cb->arg = m;
	MemoryContextRegisterResetCallback(ws->engine_cxt, cb);
	if (distinct &&
		!warp_group_merge_regroup(m, ws->distinct_key, ws->distinct_agg, Max(ws->nthreads, 1),
								  pgwarp_threads_interrupted, NULL, &ws->merge_skipped))
		merge_failed(ws);
	ws->merged = m;
	ws->unmerged_groups = ws->groups;
	ws->groups = warp_group_merge_ngroups(m);
}

/* the thread's driver holding group *g, whose number becomes its own there */
static WarpCpu *
pool_group(WarpScanState *ws, int64 *g)
{
	while (ws->emit_cpu > 0 && *g < ws->pool_start[ws->emit_cpu])
		ws->emit_cpu--;
	while (ws->emit_cpu < ws->pool->ncpus - 1 && *g >= ws->pool_start[ws->emit_cpu + 1])
		ws->emit_cpu++;
	*g -= ws->pool_start[ws->emit_cpu];
	return ws->pool->cpus[ws->emit_cpu];
}

/*
 * Group g's text key k, whose value is an id in the driver that made the
 * group (threads and the single driver only: the planner keeps programs
 * with text columns away from the daemon).
 */
static Datum
group_key_text(WarpScanState *ws, int64 g, const OutCol *c, int64 id)
{
	int			k = c->key;
	Datum		d;
	WarpCpu    *cpu = ws->cpu;
	int			col = warp_group_key_text_column(&ws->prog, ws->prog.keys[k].node);
	const uint8 *p = NULL;
	int64		len = 0;

	if (ws->merged)
		p = warp_group_merge_text(ws->merged, g, k, &len);
	else if (!ws->gres)
	{
		if (ws->pool)
			cpu = pool_group(ws, &g);
		p = warp_cpu_key_text(cpu, col, id, &len);
	}
	if (p == NULL)
		elog(ERROR, "pg_warp: text group key %d has no string", k);
	d = PointerGetDatum(cstring_to_text_with_len((const char *) p, (int) len));
	/*
	 * character(n): the engine grouped (and kept) the value without its
	 * trailing blanks; every value of the column was padded to n, so padding
	 * again gives the value back (the planner takes only keys with a length)
	 */
	if (c->type == BPCHAROID && c->scale >= 0)
		d = DirectFunctionCall3(bpchar, d, Int32GetDatum(c->scale), BoolGetDatum(false));
	return d;
}

/* group g's key k and aggregate a's state, from whichever driver ran */
static int64
group_key(WarpScanState *ws, int64 g, int k, bool *isnull)
{
	if (ws->merged)
		return warp_group_merge_key(ws->merged, g, k, isnull);
	if (ws->gres)
	{
		uint8	   *r = (uint8 *) ws->gres;

		*isnull = r[ws->gres->off_nulls + g * ws->gres->nkeys + k] != 0;
		return ((int64 *) (r + ws->gres->off_keys))[g * ws->gres->nkeys + k];
	}
	if (ws->pool)
	{
		WarpCpu    *cpu = pool_group(ws, &g);

		return warp_cpu_group_key(cpu, g, k, isnull);
	}
	return warp_cpu_group_key(ws->cpu, g, k, isnull);
}

static const WarpAggState *
group_agg(WarpScanState *ws, int64 g, int a)
{
	if (ws->merged)
		return warp_group_merge_agg(ws->merged, g, a);
	if (ws->gres)
		return (const WarpAggState *) ((uint8 *) ws->gres + ws->gres->off_states) +
			g * ws->gres->naggs + a;
	if (ws->pool)
	{
		WarpCpu    *cpu = pool_group(ws, &g);

		return warp_cpu_group_agg(cpu, g, a);
	}
	return warp_cpu_group_agg(ws->cpu, g, a);
}

static Datum
engine_value_datum(int64 v, Oid typid)
{
	double		f;

	switch (typid)
	{
		case BOOLOID:
			return BoolGetDatum(v != 0);
		case INT2OID:
			return Int16GetDatum((int16) v);
		case INT4OID:
			return Int32GetDatum((int32) v);
		case DATEOID:
			return DateADTGetDatum((DateADT) v);
		case FLOAT4OID:
			memcpy(&f, &v, sizeof(f));
			return Float4GetDatum((float4) f);
		case FLOAT8OID:
			memcpy(&f, &v, sizeof(f));
			return Float8GetDatum(f);
		default:				/* int8, timestamp, timestamptz */
			return Int64GetDatum(v);
	}
}

/*
 * sum(int8) and avg(int8) keep an internal state (PolyNumAggState); their
 * partial Aggref carries it serialized as PostgreSQL 15's
 * int8_avg_serialize writes it: the count (int64), then the sum as
 * numericvar_serialize writes a NumericVar — ndigits, weight, sign and
 * dscale as int32, then the base-10000 digits as int16, most significant
 * first, as int128_to_numericvar produces them.  int8_avg_deserialize on
 * the Finalize side reads it back; the regression and differential tests
 * compare the results with PostgreSQL's own.
 */
#define WARP_NUMERIC_POS 0x0000

#define WARP_NUMERIC_NEG 0x4000

static void
send_int128_numericvar(StringInfo buf, warp_int128 sum)
{
	unsigned __int128 mag = sum < 0 ? -(unsigned __int128) sum : (unsigned __int128) sum;
	int16		digits[16];
	int			nd = 0,
				i;

	while (mag != 0)
	{
		digits[nd++] = (int16) (mag % 10000);
		mag /= 10000;
	}
	pq_sendint32(buf, nd);
	pq_sendint32(buf, nd > 0 ? nd - 1 : 0);	/* weight */
	pq_sendint32(buf, sum < 0 ? WARP_NUMERIC_NEG : WARP_NUMERIC_POS);
	pq_sendint32(buf, 0);		/* dscale */
	for (i = nd - 1; i >= 0; i--)
		pq_sendint16(buf, digits[i]);
}

static Datum
int8_sum_state(int64 n, warp_int128 sum)
{
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendint64(&buf, n);
	send_int128_numericvar(&buf, sum);
	return PointerGetDatum(pq_endtypsend(&buf));
}

/*
 * var/stddev of int2/int4 keep a PolyNumAggState too (int4_accum, with
 * sumX2); numeric_poly_serialize writes N, then sumX and sumX2 as
 * numericvar_serialize does, both from int128 in PostgreSQL 15 builds with
 * int128 (numeric_poly_deserialize reads them back).
 */
static Datum
int_var_state(int64 n, warp_int128 sum, warp_int128 sumsq)
{
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendint64(&buf, n);
	send_int128_numericvar(&buf, sum);
	send_int128_numericvar(&buf, sumsq);
	return PointerGetDatum(pq_endtypsend(&buf));
}

/* divide a 192-bit magnitude (most significant word first) by 10 in
 * place; the remainder */
static int
mag192_div10(uint64 mag[3])
{
	unsigned __int128 r = 0;
	int			i;

	for (i = 0; i < 3; i++)
	{
		unsigned __int128 cur = (r << 64) | mag[i];

		mag[i] = (uint64) (cur / 10);
		r = cur % 10;
	}
	return (int) r;
}

/*
 * sum(numeric) and avg(numeric) keep an internal state (NumericAggState);
 * their partial Aggref carries it as PostgreSQL 15's numeric_avg_serialize
 * writes it: N (int64), sumX as numericvar_serialize writes a NumericVar,
 * maxScale (int32), maxScaleCount, NaNcount, pInfcount, nInfcount (int64).
 * The engine's inputs are the unscaled values of a numeric(p <= 18, s)
 * column, so the sum is the exact 128-bit integer `sum` at scale s; every
 * input has display scale s, so maxScale = s and maxScaleCount = N, as
 * numeric_avg_accum counts them (0 and 0 with no input).  A Decimal128 has
 * no NaN or infinity.
 */
static Datum
numeric_sum_state(int64 n, bool neg, const uint64 mag_in[3], int scale)
{
	uint64		mag[3] = {mag_in[0], mag_in[1], mag_in[2]};	/* most significant first */
	char		dec[128];
	int			len = 0,
				pad = (4 - scale % 4) % 4,
				ngroups,
				first,
				nd,
				i;
	int16		digits[32];
	StringInfoData buf;

	Assert(scale >= 0 && scale <= 38);
	/* decimal digits of the 192-bit magnitude (at most 58), then pad
	 * zeros so that the fraction is whole base-10000 digits */
	do
		dec[len++] = '0' + mag192_div10(mag);
	while (mag[0] != 0 || mag[1] != 0 || mag[2] != 0);
	while (len < scale + 1)
		dec[len++] = '0';		/* at least one integer digit */
	/* dec[] holds the digits least significant first; shift in the pad */
	memmove(dec + pad, dec, len);
	memset(dec, '0', pad);
	len += pad;
	/* group by 4 from the least significant end */
	ngroups = (len + 3) / 4;
	for (i = 0; i < ngroups; i++)
	{
		int			g = 0,
					k;

		for (k = 3; k >= 0; k--)
		{
			int			pos = i * 4 + k;

			g = g * 10 + (pos < len ? dec[pos] - '0' : 0);
		}
		digits[i] = (int16) g;	/* digits[0]: least significant */
	}
	/* drop leading zero groups */
	first = ngroups - 1;
	while (first > 0 && digits[first] == 0)
		first--;
	nd = (first == 0 && digits[0] == 0) ? 0 : first + 1;

	pq_begintypsend(&buf);
	pq_sendint64(&buf, n);
	/* sumX */
	pq_sendint32(&buf, nd);
	pq_sendint32(&buf, nd > 0 ? nd - 1 - (scale + pad) / 4 : 0);	/* weight */
	pq_sendint32(&buf, neg ? WARP_NUMERIC_NEG : WARP_NUMERIC_POS);
	pq_sendint32(&buf, n > 0 ? scale : 0);	/* dscale */
	for (i = nd - 1; i >= 0; i--)
		pq_sendint16(&buf, digits[i]);
	pq_sendint32(&buf, n > 0 ? scale : 0);	/* maxScale */
	pq_sendint64(&buf, n);		/* maxScaleCount */
	pq_sendint64(&buf, 0);		/* NaNcount */
	pq_sendint64(&buf, 0);		/* pInfcount */
	pq_sendint64(&buf, 0);		/* nInfcount */
	return PointerGetDatum(pq_endtypsend(&buf));
}

/* numeric_sum_state of a signed 128-bit sum */
static Datum
numeric_sum_state128(int64 n, warp_int128 sum, int scale)
{
	unsigned __int128 m = sum < 0 ? -(unsigned __int128) sum : (unsigned __int128) sum;
	uint64		mag[3] = {0, (uint64) (m >> 64), (uint64) m};

	return numeric_sum_state(n, sum < 0, mag, scale);
}

/*
 * numeric_sum_state of a 192-bit two's complement sum (WA_SUM_NUMERIC) of
 * values at scale + drop, shown at scale: its last drop digits are zero
 * (every value summed had at most `scale` decimals).
 */
static Datum
numeric_sum_state192(int64 n, const WarpAggState *s, int scale, int drop)
{
	uint64		mag[3] = {(uint64) s->wide_top, (uint64) s->wide_hi, s->wide_lo};
	bool		neg = s->wide_top < 0;
	int			k;

	if (neg)
	{
		/* negate: invert and add one */
		mag[0] = ~mag[0];
		mag[1] = ~mag[1];
		mag[2] = ~mag[2];
		if (++mag[2] == 0 && ++mag[1] == 0)
			++mag[0];
	}
	for (k = 0; k < drop; k++)
		if (mag192_div10(mag) != 0)
			elog(ERROR, "pg_warp: a numeric sum has digits beyond its display scale");
	return numeric_sum_state(n, neg, mag, scale);
}

/*
 * The display scale of numeric aggregate a's result for group g: its
 * argument's, as the program has it, or the largest among the group's
 * rows (a hidden aggregate, for a CASE/COALESCE of several scales).
 */
static int
agg_numeric_scale(WarpScanState *ws, int a, int64 g)
{
	const WarpNode *nd = &ws->prog.nodes[ws->prog.aggs[a].arg];

	if (ws->agg_scale_agg[a] >= 0)
	{
		const WarpAggState *h = group_agg(ws, g, ws->agg_scale_agg[a]);

		return h->count > 0 ? (int) h->ival : 0;
	}

	if (nd->type == WT_NUMERIC)
		return nd->scale;
	Assert(nd->op == WN_COL && ws->prog.cols[nd->a].decimal);
	return ws->prog.cols[nd->a].scale;
}

/* the transition state of aggregate a for group g */
static Datum
agg_state_datum(WarpScanState *ws, int a, int64 g, bool *isnull)
{
	const WarpAggState *s = group_agg(ws, g, a);
	WarpPlanAgg *ai = &ws->aggs[a];
	Oid			argtype = ai->argtype;
	Datum		d[3];

	*isnull = false;
	switch ((WarpAggKind) ws->prog.aggs[a].kind)
	{
		case WA_COUNT_STAR:
		case WA_COUNT:
			return Int64GetDatum(s->count);
		case WA_SUM_INT:
			*isnull = s->count == 0;
			return Int64GetDatum(s->ival);
		case WA_AVG_INT:
			/* int4_avg_accum's state: int8[2] {count, sum} */
			d[0] = Int64GetDatum(s->count);
			d[1] = Int64GetDatum(s->ival);
			return PointerGetDatum(construct_array(d, 2, INT8OID, 8, FLOAT8PASSBYVAL,
												   TYPALIGN_DOUBLE));
		case WA_MIN:
		case WA_MAX:
			*isnull = s->count == 0;
			if (argtype == FLOAT4OID)
				return Float4GetDatum((float4) s->fval);
			if (argtype == FLOAT8OID)
				return Float8GetDatum(s->fval);
			if (argtype == NUMERICOID && ws->prog.aggs[a].type == WT_NUMERIC)
				return NumericGetDatum(pgwarp_int128_to_numeric(warp_agg_wide(s), agg_numeric_scale(ws, a, g)));
			if (argtype == NUMERICOID)
				return NumericGetDatum(int64_div_fast_to_numeric(s->ival, agg_numeric_scale(ws, a, g)));
			return engine_value_datum(s->ival, argtype);
		case WA_SUM_FLOAT:
			*isnull = s->count == 0;
			return argtype == FLOAT4OID ? Float4GetDatum((float4) s->fval)
				: Float8GetDatum(s->fval);
		case WA_SUM_INT8:
			if (ws->agg_square_agg[a] >= 0)
				return int_var_state(s->count, warp_agg_wide(s),
									 warp_agg_wide(group_agg(ws, g, ws->agg_square_agg[a])));
			if (argtype == NUMERICOID)
				return numeric_sum_state128(s->count, warp_agg_wide(s), agg_numeric_scale(ws, a, g));
			return int8_sum_state(s->count, warp_agg_wide(s));
		case WA_SUM_NUMERIC:
			{
				int			sc = agg_numeric_scale(ws, a, g);

				return numeric_sum_state192(s->count, s, sc,
											ws->prog.nodes[ws->prog.aggs[a].arg].scale - sc);
			}
		case WA_AVG_FLOAT:
			/* float8_accum's state: float8[3] {N, Sx, Sxx} */
			d[0] = Float8GetDatum((float8) s->count);
			d[1] = Float8GetDatum(s->fval);
			d[2] = Float8GetDatum(s->fsxx);
			return PointerGetDatum(construct_array(d, 3, FLOAT8OID, 8, FLOAT8PASSBYVAL,
												   TYPALIGN_DOUBLE));
	}
	return (Datum) 0;
}

/*
 * Output column i of group (in row mode: row) g.  A group of this
 * process's drivers is read from its driver directly (cpu, lg: g in its
 * own numbering); merged groups and the daemon's (cpu NULL) through
 * group_key.
 */
Datum
warp_exec_group_datum(WarpScanState *ws, WarpCpu *cpu, int64 lg, int64 g, int i, bool *isnull)
{
	const OutCol *c = &ws->out_cols[i];
	int64		v;

	if (c->kind == OC_AGG)
		return agg_state_datum(ws, c->key, g, isnull);
	v = cpu ? warp_cpu_group_key(cpu, lg, c->key, isnull) : group_key(ws, g, c->key, isnull);
	if (c->kind == OC_DIM)
	{
		WarpDim    *d = c->dim;

		if (v == d->npayloads && d->kind == WARP_JOIN_LEFT)
		{
			/* a left join's row without a match */
			*isnull = true;
			return (Datum) 0;
		}
		if (v < 0 || v >= d->npayloads)
			elog(ERROR, "pg_warp: group key names no dimension row");
		*isnull = d->pnulls[v * d->npay + c->col];
		return d->pvalues[v * d->npay + c->col];
	}
	if (*isnull)
		return (Datum) 0;
	if (c->kind == OC_TEXT)
		return group_key_text(ws, g, c, v);
	if (c->kind == OC_STRINGS)
	{
		if (v < 0 || v >= c->nstrings)
			elog(ERROR, "pg_warp: group key names no string of its CASE");
		return c->strings[v];
	}
	if (c->kind == OC_NUMERIC)
		return NumericGetDatum(int64_div_fast_to_numeric(v, c->scale));
	return engine_value_datum(v, c->type);
}

/* the driver holding group g, and g in its numbering */
WarpCpu *
warp_exec_group_driver(WarpScanState *ws, int64 *lg)
{
	if (ws->merged || ws->gres)
		return NULL;
	return ws->pool ? pool_group(ws, lg) : ws->cpu;
}
