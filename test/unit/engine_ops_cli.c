/*
 * engine_ops_cli.c — a line-oriented driver for the engine's scalar
 * operations, so that test/python/test_engine_ops.py can check them against
 * PostgreSQL.  One operation per input line, one result per output line:
 *
 *   int  <wa> <wb> <op> <a> <b>    wa, wb in 2|4|8; op pl mi mul div mod um abs cmp
 *   icast <from> <to> <a>          from, to in 2|4|8
 *   flt  <wa> <wb> <op> <a> <b>    wa, wb in 4|8; op pl mi mul div cmp eq lt le
 *   fcast <from> <to> <a>          from, to in i2 i4 i8 f4 f8
 *   num  <op> <a> <b>              op add sub mul cmp round toi2 toi4 toi8 neg abs
 *   date <op> <a> <b>              days since 2000-01-01; op pli mii mi cmp tots
 *   date ext <field> <a>
 *   ts   ext|trunc <field> <a>     microseconds since 2000-01-01
 *   like <text-hex> <pattern-hex>  (- for the empty string)
 *
 * Results: integers in decimal, floats as C99 hex floats (%a, exact),
 * numerics as PostgreSQL prints them, "ERR <sqlstate>" for an error and
 * "FALLBACK" for a value the engine hands back to PostgreSQL.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/warp_ops_int.h"
#include "engine/warp_ops_float.h"
#include "engine/warp_ops_numeric.h"
#include "engine/warp_ops_datetime.h"
#include "engine/warp_ops_text.h"

static const char *const field_names[WARP_DT_FIELD_COUNT] = {
	"microseconds", "milliseconds", "second", "minute", "hour", "day", "week",
	"month", "quarter", "year", "decade", "century", "millennium", "dow",
	"isodow", "doy", "isoyear", "epoch", "julian"
};

static int
parse_field(const char *s)
{
	for (int i = 0; i < WARP_DT_FIELD_COUNT; i++)
		if (strcmp(s, field_names[i]) == 0)
			return i;
	return -1;
}

static WarpNumeric
parse_numeric(const char *s)
{
	WarpNumeric n = {0, 0};
	bool		neg = false,
				frac = false;

	if (*s == '-' || *s == '+')
		neg = (*s++ == '-');
	for (; *s; s++)
	{
		if (*s == '.')
			frac = true;
		else
		{
			n.value = n.value * 10 + (*s - '0');
			if (frac)
				n.scale++;
		}
	}
	if (neg)
		n.value = -n.value;
	return n;
}

static void
print_numeric(WarpNumeric n)
{
	char		digits[64];
	int			len = 0;
	warp_uint128 u = (warp_uint128) (n.value < 0 ? -n.value : n.value);

	do
	{
		digits[len++] = '0' + (int) (u % 10);
		u /= 10;
	} while (u != 0);
	while (len <= n.scale)
		digits[len++] = '0';
	if (n.value < 0)
		putchar('-');
	for (int i = len - 1; i >= 0; i--)
	{
		putchar(digits[i]);
		if (i == n.scale && i > 0)
			putchar('.');
	}
	putchar('\n');
}

static int
unhex(const char *s, warp_uint8 *out)
{
	int			n = 0;

	if (strcmp(s, "-") == 0)
		return 0;
	for (; s[0] && s[1]; s += 2)
	{
		unsigned int b;

		sscanf(s, "%2x", &b);
		out[n++] = (warp_uint8) b;
	}
	return n;
}

static bool
status_out(WarpStatus st)
{
	if (st == WARP_OK)
		return false;
	if (warp_status_is_fallback(st))
		printf("FALLBACK\n");
	else
		printf("ERR %s\n", warp_status_sqlstate(st));
	return true;
}

static void
int_op(int wa, int wb, const char *op, warp_int64 a, warp_int64 b)
{
	int			w = wa > wb ? wa : wb;
	WarpStatus	st = WARP_OK;
	warp_int64	r = 0;

	if (strcmp(op, "cmp") == 0)
	{
		printf("%d\n", warp_int_cmp(a, b));
		return;
	}
	if (w == 2)
	{
		warp_int16	r2 = 0;

		if (!strcmp(op, "pl")) st = warp_int2_pl(a, b, &r2);
		else if (!strcmp(op, "mi")) st = warp_int2_mi(a, b, &r2);
		else if (!strcmp(op, "mul")) st = warp_int2_mul(a, b, &r2);
		else if (!strcmp(op, "div")) st = warp_int2_div(a, b, &r2);
		else if (!strcmp(op, "mod")) st = warp_int2_mod(a, b, &r2);
		else if (!strcmp(op, "um")) st = warp_int2_um(a, &r2);
		else if (!strcmp(op, "abs")) st = warp_int2_abs(a, &r2);
		r = r2;
	}
	else if (w == 4)
	{
		warp_int32	r4 = 0;

		/* the cross-type entry points, to exercise them too */
		if (wa == 2 && !strcmp(op, "pl")) st = warp_int24_pl(a, b, &r4);
		else if (wb == 2 && !strcmp(op, "pl")) st = warp_int42_pl(a, b, &r4);
		else if (wa == 2 && !strcmp(op, "div")) st = warp_int24_div(a, b, &r4);
		else if (wb == 2 && !strcmp(op, "div")) st = warp_int42_div(a, b, &r4);
		else if (!strcmp(op, "pl")) st = warp_int4_pl(a, b, &r4);
		else if (!strcmp(op, "mi")) st = warp_int4_mi(a, b, &r4);
		else if (!strcmp(op, "mul")) st = warp_int4_mul(a, b, &r4);
		else if (!strcmp(op, "div")) st = warp_int4_div(a, b, &r4);
		else if (!strcmp(op, "mod")) st = warp_int4_mod(a, b, &r4);
		else if (!strcmp(op, "um")) st = warp_int4_um(a, &r4);
		else if (!strcmp(op, "abs")) st = warp_int4_abs(a, &r4);
		r = r4;
	}
	else
	{
		if (wa == 4 && !strcmp(op, "mul")) st = warp_int48_mul(a, b, &r);
		else if (wb == 4 && !strcmp(op, "mul")) st = warp_int84_mul(a, b, &r);
		else if (wa == 2 && !strcmp(op, "mi")) st = warp_int28_mi(a, b, &r);
		else if (wb == 2 && !strcmp(op, "mi")) st = warp_int82_mi(a, b, &r);
		else if (!strcmp(op, "pl")) st = warp_int8_pl(a, b, &r);
		else if (!strcmp(op, "mi")) st = warp_int8_mi(a, b, &r);
		else if (!strcmp(op, "mul")) st = warp_int8_mul(a, b, &r);
		else if (!strcmp(op, "div")) st = warp_int8_div(a, b, &r);
		else if (!strcmp(op, "mod")) st = warp_int8_mod(a, b, &r);
		else if (!strcmp(op, "um")) st = warp_int8_um(a, &r);
		else if (!strcmp(op, "abs")) st = warp_int8_abs(a, &r);
	}
	if (!status_out(st))
		printf("%lld\n", (long long) r);
}

static void
icast(int from, int to, warp_int64 a)
{
	WarpStatus	st = WARP_OK;
	warp_int64	r = a;

	if (to == 4 && from == 8)
	{
		warp_int32	r4 = 0;

		st = warp_int8_to_int4(a, &r4);
		r = r4;
	}
	else if (to == 2 && from != 2)
	{
		warp_int16	r2 = 0;

		st = from == 8 ? warp_int8_to_int2(a, &r2) : warp_int4_to_int2(a, &r2);
		r = r2;
	}
	if (!status_out(st))
		printf("%lld\n", (long long) r);
}

static void
flt_op(int wa, int wb, const char *op, double a, double b)
{
	WarpStatus	st = WARP_OK;
	double		r = 0;

	if (!strcmp(op, "cmp")) { printf("%d\n", warp_float8_cmp(a, b)); return; }
	if (!strcmp(op, "eq")) { printf("%d\n", warp_float8_eq(a, b)); return; }
	if (!strcmp(op, "lt")) { printf("%d\n", warp_float8_lt(a, b)); return; }
	if (!strcmp(op, "le")) { printf("%d\n", warp_float8_le(a, b)); return; }
	if (wa == 4 && wb == 4)
	{
		float		r4 = 0,
					fa = (float) a,
					fb = (float) b;

		if (!strcmp(op, "pl")) st = warp_float4_pl(fa, fb, &r4);
		else if (!strcmp(op, "mi")) st = warp_float4_mi(fa, fb, &r4);
		else if (!strcmp(op, "mul")) st = warp_float4_mul(fa, fb, &r4);
		else if (!strcmp(op, "div")) st = warp_float4_div(fa, fb, &r4);
		r = r4;
	}
	else if (wa == 4)
	{
		float		fa = (float) a;

		if (!strcmp(op, "pl")) st = warp_float48_pl(fa, b, &r);
		else if (!strcmp(op, "mi")) st = warp_float48_mi(fa, b, &r);
		else if (!strcmp(op, "mul")) st = warp_float48_mul(fa, b, &r);
		else if (!strcmp(op, "div")) st = warp_float48_div(fa, b, &r);
	}
	else if (wb == 4)
	{
		float		fb = (float) b;

		if (!strcmp(op, "pl")) st = warp_float84_pl(a, fb, &r);
		else if (!strcmp(op, "mi")) st = warp_float84_mi(a, fb, &r);
		else if (!strcmp(op, "mul")) st = warp_float84_mul(a, fb, &r);
		else if (!strcmp(op, "div")) st = warp_float84_div(a, fb, &r);
	}
	else
	{
		if (!strcmp(op, "pl")) st = warp_float8_pl(a, b, &r);
		else if (!strcmp(op, "mi")) st = warp_float8_mi(a, b, &r);
		else if (!strcmp(op, "mul")) st = warp_float8_mul(a, b, &r);
		else if (!strcmp(op, "div")) st = warp_float8_div(a, b, &r);
	}
	if (!status_out(st))
		printf("%a\n", r);
}

static void
fcast(const char *from, const char *to, const char *arg)
{
	WarpStatus	st = WARP_OK;
	bool		isint = from[0] == 'i';
	warp_int64	ia = isint ? strtoll(arg, NULL, 10) : 0;
	double		fa = isint ? 0 : strtod(arg, NULL);

	if (!strcmp(from, "f4"))
		fa = (float) fa;
	if (to[0] == 'f')
	{
		double		r;

		if (isint)
			r = !strcmp(to, "f4") ?
				(double) (from[1] == '8' ? warp_int8_to_float4(ia) : warp_int4_to_float4(ia)) :
				(from[1] == '8' ? warp_int8_to_float8(ia) : warp_int4_to_float8(ia));
		else if (!strcmp(to, "f4") && !strcmp(from, "f8"))
		{
			float		r4 = 0;

			st = warp_float8_to_float4(fa, &r4);
			r = r4;
		}
		else
			r = warp_float4_to_float8((float) fa);	/* f4 -> f8 */
		if (!status_out(st))
			printf("%a\n", r);
		return;
	}
	else
	{
		warp_int64	r = 0;

		if (!strcmp(to, "i2"))
		{
			warp_int16	r2 = 0;

			st = !strcmp(from, "f4") ? warp_float4_to_int2((float) fa, &r2) : warp_float8_to_int2(fa, &r2);
			r = r2;
		}
		else if (!strcmp(to, "i4"))
		{
			warp_int32	r4 = 0;

			st = !strcmp(from, "f4") ? warp_float4_to_int4((float) fa, &r4) : warp_float8_to_int4(fa, &r4);
			r = r4;
		}
		else
			st = !strcmp(from, "f4") ? warp_float4_to_int8((float) fa, &r) : warp_float8_to_int8(fa, &r);
		if (!status_out(st))
			printf("%lld\n", (long long) r);
	}
}

static void
num_op(const char *op, const char *sa, const char *sb)
{
	WarpNumeric a = parse_numeric(sa);
	WarpNumeric b = parse_numeric(sb);
	WarpNumeric r = {0, 0};
	WarpStatus	st = WARP_OK;

	if (!strcmp(op, "cmp")) { printf("%d\n", warp_numeric_cmp(a, b)); return; }
	if (!strcmp(op, "toi2") || !strcmp(op, "toi4") || !strcmp(op, "toi8"))
	{
		warp_int64	v = 0;

		if (op[3] == '2')
		{
			warp_int16	v2 = 0;

			st = warp_numeric_to_int2(a, &v2);
			v = v2;
		}
		else if (op[3] == '4')
		{
			warp_int32	v4 = 0;

			st = warp_numeric_to_int4(a, &v4);
			v = v4;
		}
		else
			st = warp_numeric_to_int8(a, &v);
		if (!status_out(st))
			printf("%lld\n", (long long) v);
		return;
	}
	if (!strcmp(op, "add")) st = warp_numeric_add(a, b, &r);
	else if (!strcmp(op, "sub")) st = warp_numeric_sub(a, b, &r);
	else if (!strcmp(op, "mul")) st = warp_numeric_mul(a, b, &r);
	else if (!strcmp(op, "round")) st = warp_numeric_round(a, atoi(sb), &r);
	else if (!strcmp(op, "neg")) r = warp_numeric_neg(a);
	else if (!strcmp(op, "abs")) r = warp_numeric_abs(a);
	if (!status_out(st))
		print_numeric(r);
}

static void
date_op(const char *op, const char *sa, const char *sb)
{
	WarpStatus	st = WARP_OK;

	if (!strcmp(op, "ext"))
	{
		WarpNumeric n = {0, 0};

		st = warp_date_extract((WarpDtField) parse_field(sa), (warp_int32) atol(sb), &n);
		if (!status_out(st))
			print_numeric(n);
		return;
	}
	else
	{
		warp_int32	a = (warp_int32) atol(sa);
		warp_int32	b = (warp_int32) atol(sb);
		warp_int32	r = 0;
		warp_int64	t = 0;

		if (!strcmp(op, "cmp")) { printf("%d\n", warp_date_cmp(a, b)); return; }
		if (!strcmp(op, "tots"))
		{
			st = warp_date_to_timestamp(a, &t);
			if (!status_out(st))
				printf("%lld\n", (long long) t);
			return;
		}
		if (!strcmp(op, "pli")) st = warp_date_pli(a, b, &r);
		else if (!strcmp(op, "mii")) st = warp_date_mii(a, b, &r);
		else if (!strcmp(op, "mi")) st = warp_date_mi(a, b, &r);
		if (!status_out(st))
			printf("%d\n", r);
	}
}

static void
ts_op(const char *op, const char *sf, const char *sa)
{
	warp_int64	a = strtoll(sa, NULL, 10);
	WarpStatus	st;

	if (!strcmp(op, "cmp"))
	{
		printf("%d\n", warp_timestamp_cmp(strtoll(sf, NULL, 10), a));
		return;
	}
	if (!strcmp(op, "ext"))
	{
		WarpNumeric n = {0, 0};

		st = warp_timestamp_extract((WarpDtField) parse_field(sf), a, &n);
		if (!status_out(st))
			print_numeric(n);
	}
	else
	{
		warp_int64	r = 0;

		st = warp_timestamp_trunc((WarpDtField) parse_field(sf), a, &r);
		if (!status_out(st))
			printf("%lld\n", (long long) r);
	}
}

int
main(void)
{
	static char line[1 << 16];
	static warp_uint8 tbuf[1 << 15],
				pbuf[1 << 15];

	while (fgets(line, sizeof(line), stdin))
	{
		char	   *w[8] = {0};
		int			n = 0;
		char	   *save = NULL;

		for (char *tok = strtok_r(line, " \t\r\n", &save); tok && n < 8;
			 tok = strtok_r(NULL, " \t\r\n", &save))
			w[n++] = tok;
		if (n == 0)
			continue;
		if (!strcmp(w[0], "int") && n == 6)
			int_op(atoi(w[1]), atoi(w[2]), w[3], strtoll(w[4], NULL, 10), strtoll(w[5], NULL, 10));
		else if (!strcmp(w[0], "icast") && n == 4)
			icast(atoi(w[1]), atoi(w[2]), strtoll(w[3], NULL, 10));
		else if (!strcmp(w[0], "flt") && n == 6)
			flt_op(atoi(w[1]), atoi(w[2]), w[3], strtod(w[4], NULL), strtod(w[5], NULL));
		else if (!strcmp(w[0], "fcast") && n == 4)
			fcast(w[1], w[2], w[3]);
		else if (!strcmp(w[0], "num") && n == 4)
			num_op(w[1], w[2], w[3]);
		else if (!strcmp(w[0], "date") && n == 4)
			date_op(w[1], w[2], w[3]);
		else if (!strcmp(w[0], "ts") && n == 4)
			ts_op(w[1], w[2], w[3]);
		else if (!strcmp(w[0], "like") && n == 3)
		{
			int			tl = unhex(w[1], tbuf);
			int			pl = unhex(w[2], pbuf);
			bool		m = false;

			if (!status_out(warp_text_like(tbuf, tl, pbuf, pl, &m)))
				printf("%d\n", m ? 1 : 0);
		}
		else
			printf("BAD INPUT\n");
	}
	return 0;
}
