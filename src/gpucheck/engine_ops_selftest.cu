/*
 * engine_ops_selftest.cu — runs the engine's scalar operations
 * (src/engine/warp_ops_*.h) on the GPU and on the host and compares.
 *
 * The operation semantics are written once for both compilers; this checks
 * that nvcc compiles every header and that the device gets the same bits
 * as the CPU, including status codes, float rounding (the headers use the
 * _rn intrinsics so no multiply-add is fused), 128-bit numeric arithmetic,
 * the calendar code and LIKE.  It compiles everywhere (CI has nvcc but no
 * GPU) and runs where a GPU is present.  Output: one "PASS: name" or
 * "FAIL: name ..." line per case; exit status 1 on any failure, 2 if no GPU
 * could be used.
 */
#include <cstdio>
#include <cstring>
#include <cmath>
#include <cuda_runtime.h>

#include "engine/warp_ops_int.h"
#include "engine/warp_ops_float.h"
#include "engine/warp_ops_numeric.h"
#include "engine/warp_ops_datetime.h"
#include "engine/warp_ops_text.h"

/* each case yields a status and two 64-bit result words */
struct CaseResult
{
	int			status;
	unsigned long long r0;
	unsigned long long r1;
};

#define NCASES 28

static const char *const case_names[NCASES] = {
	"int4_div_overflow", "int4_mod_min", "int8_mul", "int24_pl", "int8_abs_min",
	"float8_mul_underflow", "float8_div", "float4_pl", "float8_sum_fma",
	"float8_cmp_nan", "float8_to_int4_rint", "float8_to_float4",
	"numeric_add_scales", "numeric_mul", "numeric_round", "numeric_cmp_overflowing",
	"numeric_to_int8", "date_extract_doy", "date_pli_range", "timestamp_extract_epoch",
	"timestamp_trunc_week", "timestamp_trunc_millennium_range", "text_like_utf8",
	"text_like_escape_error", "hash_int", "hash_float_negzero", "hash_numeric_scale",
	"hash_bytes"
};

__host__ __device__ static CaseResult
run_case(int i)
{
	CaseResult	c = {0, 0, 0};

	switch (i)
	{
		case 0:
			{
				warp_int32	r = 0;

				c.status = warp_int4_div(WARP_INT32_MIN, -1, &r);
				c.r0 = (unsigned long long) r;
				break;
			}
		case 1:
			{
				warp_int32	r = 7;

				c.status = warp_int4_mod(WARP_INT32_MIN, -1, &r);
				c.r0 = (unsigned long long) r;
				break;
			}
		case 2:
			{
				warp_int64	r = 0;

				c.status = warp_int8_mul(INT64_C(3037000499), INT64_C(3037000499), &r);
				c.r0 = (unsigned long long) r;
				break;
			}
		case 3:
			{
				warp_int32	r = 0;

				c.status = warp_int24_pl(32767, 1, &r);
				c.r0 = (unsigned long long) r;
				break;
			}
		case 4:
			{
				warp_int64	r = 0;

				c.status = warp_int8_abs(WARP_INT64_MIN, &r);
				c.r0 = (unsigned long long) r;
				break;
			}
		case 5:
			{
				warp_float8 r = 0;

				c.status = warp_float8_mul(1e-200, 1e-200, &r);
				memcpy(&c.r0, &r, 8);
				break;
			}
		case 6:
			{
				warp_float8 r = 0;

				c.status = warp_float8_div(1.0, 3.0, &r);
				memcpy(&c.r0, &r, 8);
				break;
			}
		case 7:
			{
				warp_float4 r = 0;

				c.status = warp_float4_pl(0.1f, 0.2f, &r);
				memcpy(&c.r0, &r, 4);
				break;
			}
		case 8:
			{
				/* a*b+c: fused it would round once and differ */
				warp_float8 p = 0,
							s = 0;
				warp_float8 a = 1.0 + 1e-15;

				c.status = warp_float8_mul(a, a, &p);
				if (c.status == WARP_OK)
					c.status = warp_float8_pl(p, -1.0, &s);
				memcpy(&c.r0, &s, 8);
				break;
			}
		case 9:
			c.r0 = (unsigned long long) (warp_float8_cmp(NAN, INFINITY) + 10 * warp_float8_cmp(-0.0, 0.0));
			c.r1 = warp_float8_eq(NAN, NAN);
			break;
		case 10:
			{
				warp_int32	r = 0;

				c.status = warp_float8_to_int4(-2.5, &r);
				c.r0 = (unsigned long long) r;
				break;
			}
		case 11:
			{
				warp_float4 r = 0;

				c.status = warp_float8_to_float4(1e-40, &r);
				memcpy(&c.r0, &r, 4);
				break;
			}
		case 12:
			{
				WarpNumeric r = {0, 0};

				c.status = warp_numeric_add(warp_numeric_make(15, 1), warp_numeric_make(-225, 2), &r);
				c.r0 = (unsigned long long) (warp_int64) r.value;
				c.r1 = (unsigned long long) r.scale;
				break;
			}
		case 13:
			{
				WarpNumeric r = {0, 0};
				warp_int128 big = warp_pow10_128(18) + 7;

				c.status = warp_numeric_mul(warp_numeric_make(big, 2), warp_numeric_make(-big, 3), &r);
				c.r0 = (unsigned long long) (warp_uint128) r.value;
				c.r1 = (unsigned long long) ((warp_uint128) r.value >> 64);
				break;
			}
		case 14:
			{
				WarpNumeric r = {0, 0};

				c.status = warp_numeric_round(warp_numeric_make(-9995, 2), 1, &r);
				c.r0 = (unsigned long long) (warp_int64) r.value;
				c.r1 = (unsigned long long) r.scale;
				break;
			}
		case 15:
			c.r0 = (unsigned long long) warp_numeric_cmp(warp_numeric_make(warp_numeric_max_value(), 0),
														 warp_numeric_make(5, 1));
			break;
		case 16:
			{
				warp_int64	r = 0;

				c.status = warp_numeric_to_int8(warp_numeric_make(-25, 1), &r);
				c.r0 = (unsigned long long) r;
				break;
			}
		case 17:
			{
				WarpNumeric r = {0, 0};

				c.status = warp_date_extract(WARP_DT_DOY,
											 warp_date2j(2024, 12, 31) - WARP_POSTGRES_EPOCH_JDATE, &r);
				c.r0 = (unsigned long long) (warp_int64) r.value;
				break;
			}
		case 18:
			{
				warp_int32	r = 0;

				c.status = warp_date_pli(WARP_DATE_END_JULIAN - WARP_POSTGRES_EPOCH_JDATE - 1, 1, &r);
				c.r0 = (unsigned long long) r;
				break;
			}
		case 19:
			{
				WarpNumeric r = {0, 0};

				c.status = warp_timestamp_extract(WARP_DT_EPOCH, WARP_END_TIMESTAMP - 1, &r);
				c.r0 = (unsigned long long) (warp_uint128) r.value;
				c.r1 = (unsigned long long) ((warp_uint128) r.value >> 64);
				break;
			}
		case 20:
			{
				warp_int64	r = 0;

				c.status = warp_timestamp_trunc(WARP_DT_WEEK, INT64_C(662817907500123), &r);
				c.r0 = (unsigned long long) r;
				break;
			}
		case 21:
			{
				warp_int64	r = 0;

				c.status = warp_timestamp_trunc(WARP_DT_MILLENNIUM, WARP_MIN_TIMESTAMP, &r);
				c.r0 = (unsigned long long) r;
				break;
			}
		case 22:
			{
				const char *t = "a\xf0\x9f\x98\x80" "b\xc3\xa9z";
				const char *p = "%_b_%";
				bool		m = false;

				c.status = warp_text_like((const warp_uint8 *) t, 9, (const warp_uint8 *) p, 5, &m);
				c.r0 = m;
				break;
			}
		case 23:
			{
				bool		m = false;

				c.status = warp_text_like((const warp_uint8 *) "abc", 3,
										  (const warp_uint8 *) "a%\\", 3, &m);
				c.r0 = m;
				break;
			}
		case 24:
			c.r0 = warp_hash_int64((warp_int16) -42);
			c.r1 = warp_hash_int64(INT64_C(-42));
			break;
		case 25:
			c.r0 = warp_hash_float8(-0.0);
			c.r1 = warp_hash_float8(0.0);
			break;
		case 26:
			c.r0 = warp_hash_numeric(warp_numeric_make(1500, 3));
			c.r1 = warp_hash_numeric(warp_numeric_make(15, 1));
			break;
		case 27:
			c.r0 = warp_hash_bytes((const warp_uint8 *) "hello, world: a longer key", 26);
			c.r1 = warp_hash_bytes((const warp_uint8 *) "", 0);
			break;
	}
	return c;
}

__global__ static void
selftest_kernel(CaseResult *out)
{
	int			i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < NCASES)
		out[i] = run_case(i);
}

int
main(void)
{
	CaseResult	host[NCASES],
				dev[NCASES];
	CaseResult *d_out = NULL;
	cudaError_t err;
	int			failed = 0;

	for (int i = 0; i < NCASES; i++)
		host[i] = run_case(i);

	err = cudaMalloc((void **) &d_out, sizeof(dev));
	if (err != cudaSuccess)
	{
		printf("FAIL: engine_ops_selftest: no usable GPU (%s)\n", cudaGetErrorString(err));
		return 2;
	}
	selftest_kernel<<<1, 32>>>(d_out);
	err = cudaGetLastError();
	if (err == cudaSuccess)
		err = cudaMemcpy(dev, d_out, sizeof(dev), cudaMemcpyDeviceToHost);
	cudaFree(d_out);
	if (err != cudaSuccess)
	{
		printf("FAIL: engine_ops_selftest: kernel failed (%s)\n", cudaGetErrorString(err));
		return 2;
	}

	for (int i = 0; i < NCASES; i++)
	{
		if (host[i].status == dev[i].status && host[i].r0 == dev[i].r0 &&
			host[i].r1 == dev[i].r1)
			printf("PASS: %s\n", case_names[i]);
		else
		{
			printf("FAIL: %s: host status %d %016llx %016llx, device status %d %016llx %016llx\n",
				   case_names[i], host[i].status, host[i].r0, host[i].r1,
				   dev[i].status, dev[i].r0, dev[i].r1);
			failed++;
		}
	}
	printf("%d passed, %d failed\n", NCASES - failed, failed);
	return failed ? 1 : 0;
}
