/*
 * arrow_stats.c — per-record-batch min/max statistics from field custom
 * metadata "min_values" / "max_values" (the convention of PG-Strom's
 * pg2arrow): one comma-separated entry per record batch, empty where the
 * batch has no value.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arrow.h"
#include "parquet.h"

/* Types whose statistics are storage integers; false for floats/others. */
static bool
stats_type(const ArrowField *f, bool *is_float)
{
	if (f->has_dict)
		return false;
	switch (f->type.id)
	{
		case ARROW_TYPE_FLOAT:
			*is_float = true;
			return true;
		case ARROW_TYPE_INT:
		case ARROW_TYPE_DATE:
		case ARROW_TYPE_TIME:
		case ARROW_TYPE_TIMESTAMP:
		case ARROW_TYPE_DURATION:
		case ARROW_TYPE_DECIMAL:
			*is_float = false;
			return true;
		default:
			return false;
	}
}

/* A decimal integer of up to 128 bits, optionally signed; whole string. */
static bool
parse_int128(const char *s, size_t len, __int128 *out)
{
	const unsigned __int128 limit_pos = ((unsigned __int128) 1 << 127) - 1;
	unsigned __int128 v = 0;
	bool		neg = false;
	size_t		i = 0;

	if (len > 0 && (s[0] == '-' || s[0] == '+'))
	{
		neg = s[0] == '-';
		i++;
	}
	if (i == len)
		return false;
	for (; i < len; i++)
	{
		unsigned	d;

		if (s[i] < '0' || s[i] > '9')
			return false;
		d = (unsigned) (s[i] - '0');
		if (v > (limit_pos + 1 - d) / 10)
			return false;
		v = v * 10 + d;
	}
	if (!neg && v > limit_pos)
		return false;
	if (neg)
		*out = v == limit_pos + 1 ? (__int128) (-(__int128) limit_pos - 1) :
			-(__int128) v;
	else
		*out = (__int128) v;
	return true;
}

static bool
parse_double(const char *s, size_t len, double *out)
{
	char		buf[128];
	char	   *end;

	if (len == 0 || len >= sizeof(buf))
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	*out = strtod(buf, &end);
	/* ERANGE for denormals or overflow still gives a usable bound */
	return end == buf + len;
}

/* Parse one metadata string into n entries. */
static bool
parse_list(const char *s, int n, bool is_float, ArrowStatValue *vals)
{
	int			i = 0;
	const char *p = s;

	if (n == 0)
		return *s == '\0';
	for (;;)
	{
		const char *comma = strchr(p, ',');
		size_t		len = comma ? (size_t) (comma - p) : strlen(p);
		ArrowStatValue *v;

		/* tolerate spaces around entries */
		while (len > 0 && (*p == ' ' || *p == '\t'))
			p++, len--;
		while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if (i >= n)
			return false;
		v = &vals[i++];
		memset(v, 0, sizeof(*v));
		v->is_float = is_float;
		if (len > 0)
		{
			v->present = true;
			if (is_float ? !parse_double(p, len, &v->d) :
				!parse_int128(p, len, &v->i))
				return false;
		}
		if (comma == NULL)
			break;
		p = comma + 1;
	}
	return i == n;
}

bool
arrow_field_stats(const ArrowFile *file, int col, ArrowArena *arena,
				  ArrowStatValue **mins, ArrowStatValue **maxs)
{
	const ArrowField *f;
	const char *smin,
			   *smax;
	bool		is_float = false;
	size_t		sz;

	*mins = NULL;
	*maxs = NULL;
	if (col < 0 || col >= file->schema.n_fields)
		return false;
	if (file->parquet != NULL)
		return parquet_field_stats(file, col, arena, mins, maxs);
	f = &file->schema.fields[col];
	if (!stats_type(f, &is_float))
		return false;
	smin = arrow_field_metadata(f, "min_values");
	smax = arrow_field_metadata(f, "max_values");
	if (smin == NULL || smax == NULL || file->n_batches < 0)
		return false;
	sz = sizeof(ArrowStatValue) * ((size_t) file->n_batches + 1);
	*mins = arrow_arena_alloc(arena, sz, NULL);
	*maxs = arrow_arena_alloc(arena, sz, NULL);
	if (*mins == NULL || *maxs == NULL ||
		!parse_list(smin, file->n_batches, is_float, *mins) ||
		!parse_list(smax, file->n_batches, is_float, *maxs))
	{
		*mins = NULL;
		*maxs = NULL;
		return false;
	}
	return true;
}

int
arrow_batch_may_contain_int(ArrowFile *file, int batch, int col, __int128 v, ArrowError *err)
{
	if (file->parquet == NULL)
		return 1;
	return parquet_may_contain(file, batch, col, true, v, NULL, 0, err);
}

int
arrow_batch_may_contain_bytes(ArrowFile *file, int batch, int col, const void *p, size_t len,
							  ArrowError *err)
{
	if (file->parquet == NULL)
		return 1;
	return parquet_may_contain(file, batch, col, false, 0, p, len, err);
}
