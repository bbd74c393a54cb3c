/*
 * test_gpud_sizing.c — pg_warp_gpud's budgets sized from the machine
 * (src/gpud/gpud_sizing.h): automatic values on the machines the project
 * runs on (a 128 GB host with an 80 GB H100, a 141 GB H200, a small
 * development box), explicit values kept within their caps, and a device
 * with too little memory left for a cache gets none.
 */
#include "gpud_sizing.h"
#include "unit.h"

#define GB GPUD_GB
#define MB GPUD_MB

TEST(registered_windows)
{
	/* automatic: a quarter of memory */
	CHECK(gpud_size_registered(128 * GB, -1) == 32 * GB);
	CHECK(gpud_size_registered(8 * GB, -1) == 2 * GB);
	/* explicit: as asked, at most half of memory; 0 is off */
	CHECK(gpud_size_registered(128 * GB, 16384) == 16 * GB);
	CHECK(gpud_size_registered(128 * GB, 100 * 1024) == 64 * GB);
	CHECK(gpud_size_registered(128 * GB, 0) == 0);
}

TEST(column_cache)
{
	/* an 80 GB H100 with 79 GB free: 4 GB margin, a third for jobs */
	uint64_t	avail = gpud_size_device_avail(79 * GB, 80 * GB);
	uint64_t	cache = gpud_size_cache(avail, -1);

	CHECK(avail == 75 * GB);
	CHECK(cache == avail - avail / 3);
	/* SSB SF=100's fact columns (21.6 GB) fit, with room to spare */
	CHECK(cache == 50 * GB);
	/* a 141 GB H200 */
	avail = gpud_size_device_avail(139 * GB, 141 * GB);
	CHECK(gpud_size_cache(avail, -1) > 85 * GB);
	/* a small GPU: jobs keep at least 4 GB */
	avail = gpud_size_device_avail(7 * GB, 8 * GB);
	CHECK(avail == 6 * GB);
	CHECK(gpud_size_cache(avail, -1) == 2 * GB);
	/* too small for a cache at all */
	avail = gpud_size_device_avail(4 * GB, 4 * GB);
	CHECK(gpud_size_cache(avail, -1) == 0);
	CHECK(gpud_size_device_avail(512 * MB, 4 * GB) == 0);
	/* explicit: as asked, held to avail less an eighth (at least 2 GB) */
	avail = 75 * GB;
	CHECK(gpud_size_cache(avail, 20 * 1024) == 20 * GB);
	CHECK(gpud_size_cache(avail, 80 * 1024) == avail - avail / 8);
	CHECK(gpud_size_cache(avail, 0) == 0);
	CHECK(gpud_size_cache(GB, 512) == 0);
}

TEST(staging)
{
	CHECK(gpud_size_staging(128 * GB, -1) == 512 * MB);
	CHECK(gpud_size_staging(64 * GB, -1) == 256 * MB);
	CHECK(gpud_size_staging(4 * GB, -1) == 64 * MB);
	CHECK(gpud_size_staging(128 * GB, 100) == 100 * MB);
	CHECK(gpud_size_staging(128 * GB, 0) == 0);
}

int
main(void)
{
	RUN(registered_windows);
	RUN(column_cache);
	RUN(staging);
	UNIT_EXIT();
}
