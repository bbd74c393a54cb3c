/*
 * test_device_model.c — the planner's GPU-or-CPU rule
 * (src/pg/plan/warp_device_model.h): columns that fit the GPU column
 * cache go to the GPU however many CPU threads there are; columns that do
 * not fit go where the scan is faster: over registered windows the GPU
 * beats 16 threads, through pread alone (no registration budget) the CPU
 * driver wins -- the case of SSB SF=100 with a cache too small; a single
 * CPU thread loses to the link either way.
 */
#include "pg/plan/warp_device_model.h"
#include "unit.h"

#define GB 1e9

TEST(resident_columns_go_to_the_gpu)
{
	WarpDeviceInputs in = {9.6 * GB, 56 * GB, 32 * GB, 64};
	WarpDeviceChoice c = warp_device_choose(&in);

	CHECK(c.gpu && c.fits_cache);
	/* even where the link alone would lose */
	in.registered_bytes = 0;
	c = warp_device_choose(&in);
	CHECK(c.gpu && c.fits_cache && c.link_ms > c.cpu_ms);
}

TEST(columns_over_the_link)
{
	/* no cache: 9.6 GB each query */
	WarpDeviceInputs in = {9.6 * GB, 0, 32 * GB, 16};
	WarpDeviceChoice c = warp_device_choose(&in);

	CHECK(!c.fits_cache && c.gpu);
	CHECK(c.link_ms > 190 && c.link_ms < 200);	/* 9.6 GB at 50 GB/s */
	CHECK(c.cpu_ms > 350 && c.cpu_ms < 360);	/* 16 x 1.7 GB/s */
	/* nothing registered: pread at 12 GB/s loses to 16 threads */
	in.registered_bytes = 0;
	c = warp_device_choose(&in);
	CHECK(!c.gpu && c.link_ms > 800);
	/* part registered: the rest at the pread rate */
	in.registered_bytes = 4.8 * GB;
	c = warp_device_choose(&in);
	CHECK(c.link_ms > 1 + 96 + 400 - 1 && c.link_ms < 1 + 96 + 400 + 1);
	/* one CPU thread: the GPU, whatever the link */
	in.registered_bytes = 0;
	in.cpu_threads = 1;
	c = warp_device_choose(&in);
	CHECK(c.gpu);
	/* a cache too small for this query */
	in.cache_bytes = 5 * GB;
	in.cpu_threads = 32;
	c = warp_device_choose(&in);
	CHECK(!c.fits_cache && !c.gpu);
}

int
main(void)
{
	RUN(resident_columns_go_to_the_gpu);
	RUN(columns_over_the_link);
	UNIT_EXIT();
}
