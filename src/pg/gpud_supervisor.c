/*
 * gpud_supervisor.c — the background worker that keeps pg_warp_gpud
 * running.
 *
 * Registered when pg_warp is in shared_preload_libraries and
 * pg_warp.gpud_device is not off.  It fork+execs the daemon binary (beside
 * the postgres executable) with the working directory $PGDATA and every
 * inherited descriptor closed, and restarts it when it exits — a kill -9,
 * a crash or a sticky CUDA error cost one daemon, never the cluster: the
 * daemon is not a PostgreSQL process, so the postmaster does not notice.
 * Restarts back off from 0.1 s to 10 s while the daemon keeps dying at
 * once.  On shutdown the daemon gets SIGTERM; if the supervisor itself
 * dies, the kernel sends the daemon SIGTERM (PR_SET_PDEATHSIG).
 */
#include "postgres.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "gpud_client.h"
#include "tcache/tcache.h"

PGDLLEXPORT void pgwarp_gpud_supervisor_main(Datum arg);

static volatile sig_atomic_t got_sigterm = false;

static void
supervisor_sigterm(SIGNAL_ARGS)
{
	int			save_errno = errno;

	got_sigterm = true;
	SetLatch(MyLatch);
	errno = save_errno;
}

void
pgwarp_gpud_register_supervisor(void)
{
	BackgroundWorker w;

	if (pgwarp_gpud_device == PGWARP_GPUD_OFF)
		return;
	memset(&w, 0, sizeof(w));
	snprintf(w.bgw_name, BGW_MAXLEN, "pg_warp gpud supervisor");
	snprintf(w.bgw_type, BGW_MAXLEN, "pg_warp gpud supervisor");
	w.bgw_flags = BGWORKER_SHMEM_ACCESS;
	w.bgw_start_time = BgWorkerStart_PostmasterStart;
	w.bgw_restart_time = 5;
	snprintf(w.bgw_library_name, BGW_MAXLEN, "pg_warp");
	snprintf(w.bgw_function_name, BGW_MAXLEN, "pgwarp_gpud_supervisor_main");
	RegisterBackgroundWorker(&w);
}

static pid_t
start_daemon(void)
{
	char		path[MAXPGPATH];
	char		devarg[32];
	char		regarg[48];
	char		cachearg[48];
	char		lanearg[48];
	char		splitarg[48];
	char		ringarg[48];
	int			ring = tcache_ring_fd();
	const char *dev;
	pid_t		pid;

	strlcpy(path, my_exec_path, sizeof(path));
	get_parent_directory(path);
	strlcat(path, "/pg_warp_gpud", sizeof(path));
	switch (pgwarp_gpud_device)
	{
		case PGWARP_GPUD_GPU:
			dev = "gpu";
			break;
		case PGWARP_GPUD_CPU:
			dev = "cpu";
			break;
		default:
			dev = "auto";
			break;
	}
	snprintf(devarg, sizeof(devarg), "--device=%s", dev);
	snprintf(regarg, sizeof(regarg), "--max-registered-mb=%d", pgwarp_max_registered_memory);
	snprintf(cachearg, sizeof(cachearg), "--cache-mb=%d", pgwarp_gpu_cache_memory);
	snprintf(lanearg, sizeof(lanearg), "--lanes-per-gpu=%d", pgwarp_gpu_lanes);
	snprintf(splitarg, sizeof(splitarg), "--split-gpus=%d", pgwarp_gpud_split_gpus);
	/* the GPU table cache's change log, as descriptor 3 of the daemon */
	snprintf(ringarg, sizeof(ringarg), "--ring-fd=%d", 3);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
	{
		ereport(LOG, (errmsg("pg_warp: could not fork pg_warp_gpud: %m")));
		return 0;
	}
	if (pid == 0)
	{
		char	   *argv[8];
		int			i;
		sigset_t	none;

		/* a clean process: default signals, no descriptors of ours but the ring */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		for (i = 1; i < NSIG; i++)
			signal(i, SIG_DFL);
		if (ring >= 0 && ring != 3 && dup2(ring, 3) != 3)
			ring = -1;
		for (i = ring >= 0 ? 4 : 3; i < 1024; i++)
			close(i);
		argv[0] = path;
		argv[1] = devarg;
		argv[2] = regarg;
		argv[3] = cachearg;
		argv[4] = lanearg;
		argv[5] = splitarg;
		argv[6] = ring >= 0 ? ringarg : NULL;
		argv[7] = NULL;
		execv(path, argv);
		fprintf(stderr, "pg_warp: could not execute \"%s\": %s\n", path, strerror(errno));
		_exit(127);
	}
	ereport(LOG, (errmsg("pg_warp: started pg_warp_gpud (pid %d, %s)", (int) pid, devarg)));
	return pid;
}

/*
 * Remove the daemon's status file (under $PGDATA, our working directory):
 * a daemon that dies without SIGTERM leaves it behind, and backends and
 * scripts take it to mean a daemon serves.  The next daemon writes it
 * again once it is ready.
 */
static void
discard_status(void)
{
	if (unlink(GPUD_STATUS_NAME) != 0 && errno != ENOENT)
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("pg_warp: could not remove \"%s\": %m", GPUD_STATUS_NAME)));
}

void
pgwarp_gpud_supervisor_main(Datum arg)
{
	pid_t		child = 0;
	long		delay_ms = 100;
	TimestampTz next_start = 0;
	TimestampTz started = 0;

	pqsignal(SIGTERM, supervisor_sigterm);
	BackgroundWorkerUnblockSignals();

	for (;;)
	{
		int			status;

		if (got_sigterm)
		{
			if (child > 0)
			{
				int			i;

				kill(child, SIGTERM);
				for (i = 0; i < 50 && waitpid(child, &status, WNOHANG) == 0; i++)
					pg_usleep(100 * 1000L);
				if (i == 50)
				{
					kill(child, SIGKILL);
					waitpid(child, &status, 0);
				}
			}
			proc_exit(0);
		}
		if (child > 0 && waitpid(child, &status, WNOHANG) == child)
		{
			ereport(LOG,
					(errmsg("pg_warp: pg_warp_gpud (pid %d) %s %d; restarting it",
							(int) child,
							WIFSIGNALED(status) ? "was terminated by signal" : "exited with status",
							WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status))));
			child = 0;
			/* its status file names a dead process: nobody serves now */
			discard_status();
			/* died within a minute of starting: back off */
			if (GetCurrentTimestamp() - started < 60 * USECS_PER_SEC)
				delay_ms = Min(delay_ms * 2, 10000);
			else
				delay_ms = 100;
			next_start = GetCurrentTimestamp() + delay_ms * 1000;
		}
		if (child == 0 && GetCurrentTimestamp() >= next_start)
		{
			/* (one left by an earlier server counts as no daemon too) */
			discard_status();
			started = GetCurrentTimestamp();
			child = start_daemon();
			if (child == 0)
				next_start = GetCurrentTimestamp() + 10 * USECS_PER_SEC;
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 100L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}
