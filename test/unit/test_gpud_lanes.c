/*
 * test_gpud_lanes.c — which GPU and lane run each batch of a pg_warp_gpud
 * job (src/gpud/gpud_lanes.h): a batch's GPU depends only on its file and
 * number, a GPU's share goes to lanes of that GPU only, as many lanes as
 * it has min_batches_per_lane batches for (1 .. lanes_per_gpu), dealt
 * evenly, and small shares of concurrent jobs take turns over the lanes.
 */
#include <stdlib.h>
#include <string.h>

#include "gpud_lanes.h"
#include "unit.h"

TEST(batch_gpu_is_fixed_and_spread)
{
	int			count[4] = {0};
	int			b;

	for (b = 0; b < 4000; b++)
	{
		int			g = gpud_batch_gpu(123457, b, 4);

		CHECK(g >= 0 && g < 4);
		CHECK(g == gpud_batch_gpu(123457, b, 4));
		count[g]++;
	}
	for (b = 0; b < 4; b++)
		CHECK(count[b] == 1000);
	CHECK(gpud_batch_gpu(99, 7, 1) == 0);
	/* another file's batches start on another GPU */
	CHECK(gpud_batch_gpu(1, 0, 4) != gpud_batch_gpu(2, 0, 4));
}

TEST(random_jobs_deal_within_each_gpu)
{
	int			trial;

	srand(4242);
	for (trial = 0; trial < 3000; trial++)
	{
		int			ngpus = 1 + rand() % 4;
		int			lanes = 1 + rand() % 4;
		int			minb = 1 + rand() % 8;
		int			n = rand() % 200;
		uint32_t	next[GPUD_MAX_GPUS];
		uint8_t		gpu_of[200];
		uint8_t		lane[200];
		bool		used[GPUD_MAX_LANES] = {false};
		int			per_gpu[GPUD_MAX_GPUS] = {0};
		int			per_lane[GPUD_MAX_LANES] = {0};
		int			i,
					g;

		for (g = 0; g < GPUD_MAX_GPUS; g++)
			next[g] = (uint32_t) rand();
		for (i = 0; i < n; i++)
		{
			gpu_of[i] = (uint8_t) gpud_batch_gpu((uint64_t) rand(), rand() % 1000, ngpus);
			per_gpu[gpu_of[i]]++;
		}
		gpud_deal_lanes(ngpus, lanes, minb, next, n, gpu_of, lane, used);
		for (i = 0; i < n; i++)
		{
			/* on a lane of its own GPU */
			CHECK(lane[i] / lanes == gpu_of[i]);
			CHECK(used[lane[i]]);
			per_lane[lane[i]]++;
		}
		for (g = 0; g < ngpus; g++)
		{
			int			want = per_gpu[g] / minb,
						nused = 0,
						lo = n + 1,
						hi = 0,
						l;

			if (want < 1)
				want = 1;
			if (want > lanes)
				want = lanes;
			for (l = g * lanes; l < (g + 1) * lanes; l++)
			{
				if (!used[l])
					continue;
				nused++;
				if (per_lane[l] < lo)
					lo = per_lane[l];
				if (per_lane[l] > hi)
					hi = per_lane[l];
			}
			if (per_gpu[g] == 0)
				CHECK(nused == 0);
			else
			{
				CHECK(nused == want);
				CHECK(hi - lo <= 1);	/* dealt evenly */
			}
		}
		/* no lane of a GPU that does not exist */
		for (i = ngpus * lanes; i < GPUD_MAX_LANES; i++)
			CHECK(!used[i]);
	}
}

TEST(small_jobs_take_turns_over_the_lanes)
{
	uint32_t	next[GPUD_MAX_GPUS] = {0};
	int			seen[4] = {0};
	int			job;

	for (job = 0; job < 40; job++)
	{
		uint8_t		gpu_of[3] = {0, 0, 0};
		uint8_t		lane[3];
		bool		used[GPUD_MAX_LANES] = {false};

		/* 3 batches, 4 per lane needed to split: one lane */
		gpud_deal_lanes(1, 4, 4, next, 3, gpu_of, lane, used);
		CHECK(lane[0] == lane[1] && lane[1] == lane[2]);
		seen[lane[0]]++;
	}
	CHECK(seen[0] == 10 && seen[1] == 10 && seen[2] == 10 && seen[3] == 10);
}

TEST(big_share_uses_every_lane)
{
	uint32_t	next[GPUD_MAX_GPUS] = {0};
	uint8_t		gpu_of[120];
	uint8_t		lane[120];
	bool		used[GPUD_MAX_LANES] = {false};
	int			i;

	memset(gpu_of, 0, sizeof(gpu_of));
	gpud_deal_lanes(1, 2, 4, next, 120, gpu_of, lane, used);
	CHECK(used[0] && used[1] && !used[2]);
	for (i = 0; i < 120; i++)
		CHECK(lane[i] == i % 2);
	CHECK(next[0] == 0);		/* a full split takes no turn */
}

int
main(void)
{
	RUN(batch_gpu_is_fixed_and_spread);
	RUN(random_jobs_deal_within_each_gpu);
	RUN(small_jobs_take_turns_over_the_lanes);
	RUN(big_share_uses_every_lane);
	UNIT_EXIT();
}
