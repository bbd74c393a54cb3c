/*
 * unit.h — minimal C unit test support.  Each test program defines test
 * functions with TEST(name) and lists them in main() with RUN(name).  Output
 * is one line per test, "PASS: name" or "FAIL: name: file:line: expr",
 * which scripts/test.sh counts; the exit status is non-zero on any failure.
 */
#ifndef PGWARP_UNIT_H
#define PGWARP_UNIT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int	unit_failed_tests;
static int	unit_current_failed;
static const char *unit_prog = "";

#define TEST(name) static void name(void)

#define CHECK(expr) do { \
	if (!(expr)) { \
		if (!unit_current_failed) \
			printf("FAIL: %s: %s:%d: %s\n", unit_prog, __FILE__, __LINE__, #expr); \
		unit_current_failed = 1; \
	} \
} while (0)

/* CHECK with a message printed on failure (e.g. an ArrowError's msg) */
#define CHECK_MSG(expr, msg) do { \
	if (!(expr)) { \
		if (!unit_current_failed) \
			printf("FAIL: %s: %s:%d: %s (%s)\n", unit_prog, __FILE__, __LINE__, #expr, (msg)); \
		unit_current_failed = 1; \
	} \
} while (0)

#define RUN(name) do { \
	unit_current_failed = 0; unit_prog = #name; \
	name(); \
	if (!unit_current_failed) printf("PASS: %s\n", #name); \
	else unit_failed_tests++; \
	fflush(stdout); \
} while (0)

#define UNIT_EXIT() return unit_failed_tests ? 1 : 0

/* deterministic random numbers (xorshift64), the same sequence every run */
static uint64_t unit_rng_state = 88172645463325252ULL;

static inline uint64_t
unit_rnd(void)
{
	unit_rng_state ^= unit_rng_state << 13;
	unit_rng_state ^= unit_rng_state >> 7;
	unit_rng_state ^= unit_rng_state << 17;
	return unit_rng_state;
}

#endif
