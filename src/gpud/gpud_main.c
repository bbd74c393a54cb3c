/*-------------------------------------------------------------------------
 *
 * gpud_main.c
 *	  pg_warp_gpud: the daemon that owns the GPU for one PostgreSQL cluster.
 *
 * Started (and restarted) by the pg_warp supervisor background worker with
 * its working directory set to $PGDATA.  It listens on the UNIX socket
 * pg_warp_gpud.sock there, accepts only peers running as its own user
 * (SO_PEERCRED), and serves each connection in a thread: a backend keeps
 * its connection for the session and sends its jobs over it one after the
 * other, each exchanged through the connection's memfd arena
 * (gpud_wire.h).  It has no
 * PGPROC and touches no PostgreSQL state; a backend that loses its
 * connection runs the query on its own CPU driver.
 *
 * At start it picks its devices: --device=gpu or auto use every CUDA
 * device that warms up (auto without one, and cpu, run the CPU driver),
 * allocate pinned staging memory once per GPU, and write the choice to
 * pg_warp_gpud.status, which the planner reads.  CUDA_VISIBLE_DEVICES in
 * the postmaster's environment limits the GPUs it sees.
 *
 *   pg_warp_gpud [--device=auto|gpu|cpu] [--staging-mb=N|-1] [--max-registered-mb=N|-1]
 *				  [--cache-mb=N|-1] [--lanes-per-gpu=N] [--min-batches-per-lane=N]
 *				  [--split-gpus=N]
 *
 * -1 (the default) sizes a budget from the machine: physical memory and
 * the device memory free at start (gpud_sizing.h has the formulas).
 *
 * Each GPU is driven through --lanes-per-gpu lanes (default 2): a GPU's
 * share of a job with at least --min-batches-per-lane batches per lane
 * (default 4) is split over its lanes and the parts run at the same time,
 * which keeps the device busier than one stream of batches does
 * (bench/results/2026-12-04-h200-gpu-lanes-session5.md).  Small jobs take
 * one lane, round robin, so concurrent small queries overlap too.
 * --split-gpus=N (tests) drives each GPU as N, see setup_gpus.
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "gpud_files.h"
#include "gpud_job.h"
#include "gpud_prefetch.h"
#include "gpud_sizing.h"
#include "gpud_tcache.h"
#include "gpud_wire.h"
#include "warp_gpu.h"

static GpudDevice device;
static GpudColCache column_caches[GPUD_MAX_GPUS];

/* the budgets in effect (gpud_sizing.h), for the status file */
static uint64_t eff_registered;
static uint64_t eff_cache;		/* per GPU */
static uint64_t eff_staging;	/* per lane */

static void
logmsg(const char *fmt,...) __attribute__((format(printf, 1, 2)));

static void
logmsg(const char *fmt,...)
{
	va_list		ap;
	char		buf[512];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "pg_warp_gpud[%d]: %s\n", (int) getpid(), buf);
}

/* A shared arena of size bytes: the memfd and its mapping. */
static uint8_t *
make_arena(uint64_t size, int *fd_out)
{
	int			fd = memfd_create("pg_warp_arena", MFD_CLOEXEC);
	uint8_t    *p;

	if (fd < 0)
		return NULL;
	if (ftruncate(fd, (off_t) size) != 0)
	{
		close(fd);
		return NULL;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
	{
		close(fd);
		return NULL;
	}
	((GpudArenaHeader *) p)->magic = GPUD_MAGIC;
	((GpudArenaHeader *) p)->size = size;
	*fd_out = fd;
	return p;
}

/* --------------------------------------------------------- connections */

#define MAX_JOB_BYTES	((uint64_t) 64 << 30)

/*
 * One connection: jobs (RUN) and GPU table cache requests (CACHE), one
 * after the other for as long as the backend keeps it, each reusing the
 * connection's arena when it fits.  A backend keeps its connection for the
 * session, so a query pays neither a connection (a thread here, the
 * greeting) nor a new arena (memfd, mappings) unless it needs a bigger one;
 * an arena above GPUD_KEEP_ARENA is given up after its job, so an idle
 * session does not hold a big job's memory.
 */
#define GPUD_KEEP_ARENA	((uint64_t) 64 << 20)

static void *
serve(void *arg)
{
	int			sock = (int) (intptr_t) arg;
	GpudMsg		m;
	uint8_t    *arena = NULL;
	uint64_t	size = 0;
	int			afd = -1;
	void	   *result = NULL;
	uint64_t	rlen = 0;
	char		why[256];
	bool		is_cache = false;

	if (gpud_send_msg(sock, GPUD_HELLO, device.kind, device.ngpus, device.name, -1) != 0)
		goto done;
	for (;;)
	{
		uint64_t	need;

		if (gpud_recv_msg(sock, &m) != 0 || (m.type != GPUD_CACHE && m.type != GPUD_RUN))
			goto done;
		is_cache = m.type == GPUD_CACHE;
		if (m.arg0 == 0 || m.arg0 > MAX_JOB_BYTES)
		{
			gpud_send_msg(sock, GPUD_FAIL, 0, 0, "job size out of range", -1);
			goto done;
		}
		need = WARP_ARENA_JOB_OFF + m.arg0;
		if (m.type == GPUD_RUN && m.arg1 == GPUD_RUN_INLINE)
		{
			/* the job is in the connection's arena already, GO implied */
			if (arena == NULL || need > size)
			{
				gpud_send_msg(sock, GPUD_FAIL, 0, 0, "no arena for the job", -1);
				goto done;
			}
		}
		else if (arena != NULL && need <= size)
		{
			/* the same arena again: no descriptor passed */
			((GpudArenaHeader *) arena)->cancel = 0;
			if (gpud_send_msg(sock, GPUD_ARENA, size, 0, NULL, -1) != 0)
				goto done;
		}
		else
		{
			if (arena)
				munmap(arena, size);
			size = need;
			arena = make_arena(size, &afd);
			if (arena == NULL)
			{
				gpud_send_msg(sock, GPUD_FAIL, 0, 0, "could not create the shared arena", -1);
				goto done;
			}
			if (gpud_send_msg(sock, GPUD_ARENA, size, 0, NULL, afd) != 0)
				goto done;
			close(afd);
			afd = -1;
		}
		if (m.arg1 != GPUD_RUN_INLINE &&
			(gpud_recv_msg(sock, &m) != 0 || m.type != GPUD_GO))
			goto done;
		switch (is_cache ?
				gpud_tcache_request(arena, size, &result, &rlen, why, sizeof(why)) :
				gpud_run_job(&device, arena, size, sock, &result, &rlen, why, sizeof(why)))
		{
			case GPUD_JOB_CANCELLED:
				goto done;
			case GPUD_JOB_BAD:
				gpud_send_msg(sock, GPUD_FAIL, 0, 0, why, -1);
				goto done;
			case GPUD_JOB_DONE:
				break;
		}
		/* the result goes after the job if it fits, else into a new arena */
		{
			uint64_t	job_end = ((GpudJob *) (arena + WARP_ARENA_JOB_OFF))->total + WARP_ARENA_JOB_OFF;
			uint64_t	roff = (job_end + 63) & ~(uint64_t) 63;

			if (roff <= size && rlen <= size - roff)
			{
				memcpy(arena + roff, result, rlen);
				gpud_send_msg(sock, GPUD_DONE, roff, rlen, NULL, -1);
			}
			else
			{
				uint64_t	nsize = 64 + rlen;
				uint8_t    *na = make_arena(nsize, &afd);

				if (na == NULL)
				{
					gpud_send_msg(sock, GPUD_FAIL, 0, 0, "could not create the result arena", -1);
					goto done;
				}
				memcpy(na + 64, result, rlen);
				munmap(na, nsize);
				gpud_send_msg(sock, GPUD_DONE, 64, rlen, NULL, afd);
				close(afd);
				afd = -1;
			}
		}
		free(result);
		result = NULL;
		if (size > GPUD_KEEP_ARENA)
		{
			munmap(arena, size);
			arena = NULL;
			size = 0;
		}
	}

done:
	free(result);
	if (afd >= 0)
		close(afd);
	if (arena)
		munmap(arena, size);
	close(sock);
	if (warp_gpu_context_poisoned())
	{
		logmsg("exiting after a sticky CUDA error; the supervisor restarts the daemon");
		_exit(3);
	}
	return NULL;
}

/* ---------------------------------------------------------------- main */

static void
write_status(void)
{
	FILE	   *f = fopen(GPUD_STATUS_NAME ".tmp", "w");

	if (f == NULL)
	{
		logmsg("could not write %s: %s", GPUD_STATUS_NAME, strerror(errno));
		return;
	}
	/* kind, GPUs, name, pid, then the budgets in effect in MB: registered
	 * windows, column cache per GPU, pinned staging per lane, lanes */
	fprintf(f, "%s\t%d\t%s\t%d\t%llu\t%llu\t%llu\t%d\n",
			device.kind == GPUD_DEVICE_GPU ? "gpu" : "cpu",
			device.ngpus, device.name, (int) getpid(),
			(unsigned long long) (eff_registered >> 20), (unsigned long long) (eff_cache >> 20),
			(unsigned long long) (eff_staging >> 20),
			device.kind == GPUD_DEVICE_GPU ? device.lanes_per_gpu : 0);
	fclose(f);
	if (rename(GPUD_STATUS_NAME ".tmp", GPUD_STATUS_NAME) != 0)
		logmsg("could not rename %s: %s", GPUD_STATUS_NAME, strerror(errno));
}

static void
on_term(int sig)
{
	unlink(GPUD_STATUS_NAME);
	unlink(GPUD_SOCKET_NAME);
	_exit(0);
}

/*
 * Take every CUDA device that warms up (a context and every kernel loaded
 * now, not at the first query): each gets its own column cache and `lanes`
 * lanes, each with its own turns, pinned staging memory and share of the
 * device memory budget.  With none, the daemon stays on the CPU driver.
 *
 * split > 1 (--split-gpus, a test setting) drives each CUDA device as that
 * many GPUs, each with its own column cache, lanes and equal share of the
 * device's memory, so the scheduling across GPUs (which GPU runs a batch,
 * one driver per GPU, the GPUs' groups combined) runs on a one-GPU
 * machine.  It adds nothing else: the "GPUs" share the device's SMs.
 */
static void
setup_gpus(long staging_mb, long registered_mb, long cache_mb, int lanes, int split)
{
	char		why[256] = "";
	int			n = warp_gpu_device_count(why, sizeof(why));
	uint64_t	phys = (uint64_t) sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE);
	int			d;

	if (n <= 0)
	{
		if (why[0])
			logmsg("no usable GPU (%s); running the CPU driver", why);
		return;
	}
	device.ngpus = 0;
	device.lanes_per_gpu = lanes;
	for (d = 0; d < n && device.ngpus < GPUD_MAX_GPUS &&
		 (device.ngpus + 1) * lanes <= GPUD_MAX_LANES; d++)
	{
		warp_uint64 fr = 0,
					tot = 0,
					cache,
					avail;
		int			s;

		why[0] = '\0';
		if (warp_gpu_warmup(d, why, sizeof(why)) != 0)
		{
			logmsg("GPU %d is not usable (%s)", d, why);
			continue;
		}
		if (warp_gpu_memory(d, &fr, &tot) != 0)
		{
			logmsg("GPU %d is not usable (its memory cannot be queried)", d);
			continue;
		}

		/*
		 * Device memory for jobs: what is free now, less a margin for the
		 * context's own needs and other processes'; the column cache takes
		 * its share of that (gpud_sizing.h).  Both are divided among the
		 * GPUs a split device is driven as.
		 */
		avail = gpud_size_device_avail(fr, tot);
		cache = gpud_size_cache(avail, cache_mb);
		avail /= split;
		cache /= split;
		if (cache > 0)
			warp_gpu_keep_cache_pool(d);
		for (s = 0; s < split && device.ngpus < GPUD_MAX_GPUS &&
			 (device.ngpus + 1) * lanes <= GPUD_MAX_LANES; s++)
		{
			GpudColCache *cc = &column_caches[device.ngpus];
			warp_uint64 gcache = cache;
			int			l;

			if (!gpud_colcache_init(cc, gcache))
			{
				gcache = 0;
				cc = NULL;
			}
			for (l = 0; l < lanes; l++)
			{
				GpudLane   *lane = &device.lanes[device.ngpus * lanes + l];

				lane->cuda_index = d;
				lane->gpu = device.ngpus;
				lane->cache = cc;
				gpud_turns_init(&lane->turns);
				lane->staging_size = (size_t) gpud_size_staging(phys, staging_mb);
				lane->staging = lane->staging_size ? warp_gpu_host_alloc(lane->staging_size) : NULL;
				if (lane->staging == NULL)
					lane->staging_size = 0;
				gpud_lane_pin_ahead(lane);
				gpud_budget_init(&lane->budget, (avail - gcache) / lanes);
			}
			if (device.ngpus == 0)
			{
				warp_gpu_device_name(d, device.name, sizeof(device.name));
				eff_cache = gcache;
				eff_staging = device.lanes[0].staging_size;
			}
			logmsg("GPU %d (CUDA device %d, %d of %d): %llu MB for jobs in %d lane%s, "
				   "%llu MB column cache, of %llu MB; host memory pinned per lane: "
				   "%llu MB staging, %llu MB for decompressed batches",
				   device.ngpus, d, s + 1, split, (unsigned long long) ((avail - gcache) >> 20),
				   lanes, lanes > 1 ? "s" : "", (unsigned long long) (gcache >> 20),
				   (unsigned long long) (tot >> 20),
				   (unsigned long long) (device.lanes[device.ngpus * lanes].staging_size >> 20),
				   (unsigned long long) (device.lanes[device.ngpus * lanes].ahead ?
										 GPUD_PREFETCH_BYTES >> 20 : 0));
			device.ngpus++;
		}
	}
	if (device.ngpus == 0)
	{
		logmsg("no GPU is usable; running the CPU driver");
		return;
	}
	device.kind = GPUD_DEVICE_GPU;
	/* pinned page cache cannot be evicted (gpud_sizing.h) */
	{
		GpudRegisterOps ops = {warp_gpu_host_register, warp_gpu_host_unregister};

		eff_registered = gpud_size_registered(phys, registered_mb);
		gpud_windows_init(eff_registered, &ops);
		logmsg("registered file windows: up to %llu MB of %llu MB of memory%s",
			   (unsigned long long) (eff_registered >> 20), (unsigned long long) (phys >> 20),
			   registered_mb < 0 ? " (automatic: a quarter)" : "");
	}
}

int
main(int argc, char **argv)
{
	const char *want = "auto";
	long		staging_mb = -1;
	long		registered_mb = -1;
	long		cache_mb = -1;
	int			lanes = 2;
	int			min_batches = 4;
	int			split = 1;
	int			ring_fd = -1;
	int			lsock;
	struct sockaddr_un addr;
	int			i;

	for (i = 1; i < argc; i++)
	{
		if (strncmp(argv[i], "--device=", 9) == 0)
			want = argv[i] + 9;
		else if (strncmp(argv[i], "--staging-mb=", 13) == 0)
			staging_mb = atol(argv[i] + 13);
		else if (strncmp(argv[i], "--max-registered-mb=", 20) == 0)
			registered_mb = atol(argv[i] + 20);
		else if (strncmp(argv[i], "--cache-mb=", 11) == 0)
			cache_mb = atol(argv[i] + 11);
		else if (strncmp(argv[i], "--lanes-per-gpu=", 16) == 0)
			lanes = atoi(argv[i] + 16);
		else if (strncmp(argv[i], "--min-batches-per-lane=", 23) == 0)
			min_batches = atoi(argv[i] + 23);
		else if (strncmp(argv[i], "--split-gpus=", 13) == 0)
			split = atoi(argv[i] + 13);
		else if (strncmp(argv[i], "--ring-fd=", 10) == 0)
			ring_fd = atoi(argv[i] + 10);
		else
		{
			fprintf(stderr, "usage: pg_warp_gpud [--device=auto|gpu|cpu] [--staging-mb=N|-1] "
					"[--max-registered-mb=N|-1] [--cache-mb=N|-1] [--lanes-per-gpu=N] "
					"[--min-batches-per-lane=N] [--split-gpus=N] [--ring-fd=N]\n");
			return 2;
		}
	}
	if (lanes < 1 || lanes > 16 || min_batches < 1 || split < 1 || split > GPUD_MAX_GPUS)
	{
		fprintf(stderr, "pg_warp_gpud: --lanes-per-gpu must be between 1 and 16, "
				"--min-batches-per-lane at least 1, --split-gpus between 1 and %d\n",
				GPUD_MAX_GPUS);
		return 2;
	}
	if (strcmp(want, "auto") != 0 && strcmp(want, "gpu") != 0 && strcmp(want, "cpu") != 0)
	{
		fprintf(stderr, "pg_warp_gpud: --device must be auto, gpu or cpu\n");
		return 2;
	}
	/* die with the supervisor */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);

	device.kind = GPUD_DEVICE_CPU;
	device.min_batches_per_lane = min_batches;
	snprintf(device.name, sizeof(device.name), "CPU");
	if (strcmp(want, "cpu") != 0)
		setup_gpus(staging_mb, registered_mb, cache_mb, lanes, split);
	if (device.kind == GPUD_DEVICE_GPU)
		logmsg("serving on %s with %d GPU%s (%s)", GPUD_SOCKET_NAME, device.ngpus,
			   device.ngpus > 1 ? "s" : "", device.name);
	else
		logmsg("serving on %s with the CPU driver", GPUD_SOCKET_NAME);

	if (ring_fd >= 0)
	{
		char		why[128];

		if (!gpud_tcache_ring_open(ring_fd, why, sizeof(why)))
			logmsg("GPU table cache: %s; queries over attached tables read the heap", why);
		close(ring_fd);
	}

	lsock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lsock < 0)
	{
		logmsg("socket: %s", strerror(errno));
		return 1;
	}
	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", GPUD_SOCKET_NAME);
	unlink(GPUD_SOCKET_NAME);
	umask(077);
	if (bind(lsock, (struct sockaddr *) &addr, sizeof(addr)) != 0 || listen(lsock, 128) != 0)
	{
		logmsg("could not listen on %s: %s", GPUD_SOCKET_NAME, strerror(errno));
		return 1;
	}
	write_status();

	for (;;)
	{
		int			s = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
		struct ucred cred;
		socklen_t	clen = sizeof(cred);
		pthread_t	th;
		pthread_attr_t attr;

		if (s < 0)
		{
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			logmsg("accept: %s", strerror(errno));
			sleep(1);
			continue;
		}
		if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0 ||
			cred.uid != geteuid())
		{
			logmsg("refused a connection from uid %d", (int) cred.uid);
			close(s);
			continue;
		}
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&th, &attr, serve, (void *) (intptr_t) s) != 0)
		{
			logmsg("could not start a thread: %s", strerror(errno));
			close(s);
		}
		pthread_attr_destroy(&attr);
	}
	return 0;
}
