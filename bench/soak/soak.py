#!/usr/bin/env python3
"""Reliability under load: OLTP (pgbench) and analytic clients (SSB through
pg_warp, every answer checked), dimension writers, writers of a writable
Arrow table, and faults injected on a schedule.  See docs/soak.md.

Run through bench/soak/run.sh; the last line printed is
  soak: Q queries, W wrong answers, E unexpected errors, L lost rows, OLTP TPS ratio R
and the exit status is 0 only when W, E and L are 0 and no process grew.
"""
import argparse
import datetime
import json
import os
import shutil
import socket
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import psycopg  # noqa: E402

from soak_clients import (AnalyticClient, ArrowWriter, DimWriter, load_queries,  # noqa: E402
                          answer_diff, oltp_soak, pct, run_pgbench, same_answer,
                          with_fact)
from soak_cluster import Cluster, ExistingServer, setup_data, wait_for_server  # noqa: E402
from soak_faults import FaultLog, Injector, Stats, gpud_pid  # noqa: E402
from soak_monitor import Monitor  # noqa: E402
from soak_report import write_report  # noqa: E402

ALL_FAULTS = ["gpud_kill", "gpud_fault", "timeout", "cancel", "replace", "truncate",
              "mempressure", "writer_term", "backend_kill", "writer_kill"]


def parse_args(argv):
    ap = argparse.ArgumentParser(description="pg_warp soak: mixed OLTP + analytics + faults")
    ap.add_argument("--minutes", type=float, default=10, help="soak and comparison time")
    ap.add_argument("--oltp-clients", type=int, default=32)
    ap.add_argument("--oltp-threads", type=int, default=0, help="pgbench -j (0: min(clients, 2 x CPUs))")
    ap.add_argument("--olap-clients", type=int, default=8)
    ap.add_argument("--writers", type=int, default=2, help="writable Arrow table writers")
    ap.add_argument("--dim-writers", type=int, default=2)
    ap.add_argument("--sf", type=float, default=0.05, help="SSB scale factor")
    ap.add_argument("--batch-rows", type=int, default=16384, help="Arrow record batch rows")
    ap.add_argument("--pgbench-scale", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=0, help="rounds (0: one per 5 minutes)")
    ap.add_argument("--pairs", type=int, default=0,
                    help="comparison pairs (plain, warp) in all, spread over the rounds "
                         "(0: 3 per 5 minutes)")
    ap.add_argument("--configs", default="plain,warp",
                    help="configurations compared: plain (pg_warp not loaded), warp (preloaded, "
                         "analytics through it), loaded (preloaded, analytics with "
                         "pg_warp.enabled = off: the cost of the hooks alone)")
    ap.add_argument("--measure-seconds", type=float, default=15,
                    help="each comparison window (0: no comparison)")
    ap.add_argument("--warmup-seconds", type=float, default=3)
    ap.add_argument("--olap-period", type=float, default=2.0,
                    help="seconds between an analytic client's queries in comparison windows")
    ap.add_argument("--fault-interval", type=float, default=2.0)
    ap.add_argument("--crash-interval", type=float, default=90.0,
                    help="least seconds between the faults that restart the cluster")
    ap.add_argument("--faults", default=",".join(ALL_FAULTS))
    ap.add_argument("--gpud-kill-interval", type=float, default=0,
                    help="also kill -9 pg_warp_gpud every S seconds (randomized +-50%%) in soak "
                         "windows, besides the rotation (0: only the rotation)")
    ap.add_argument("--dim-pause", type=float, default=0.2)
    ap.add_argument("--writer-pause", type=float, default=0.5)
    ap.add_argument("--gpud-device", default="auto", help="pg_warp.gpud_device (cpu without a GPU)")
    ap.add_argument("--dsn", default="", help="an existing server (no restarts, no comparison)")
    ap.add_argument("--workdir", default="", help="with --dsn: a directory the server can read")
    ap.add_argument("--port", type=int, default=int(os.environ.get("PGWARP_TEST_PORT", 54329)) + 1)
    ap.add_argument("--shared-buffers", default="256MB")
    ap.add_argument("--fsync", action="store_true")
    ap.add_argument("--mem-interval", type=float, default=2.0)
    ap.add_argument("--mem-min-life", type=float, default=60.0)
    ap.add_argument("--mem-growth-mb", type=float, default=64.0)
    ap.add_argument("--out", default="", help="result directory (default bench/results/soak/<date>-<host>)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", action="store_true", help="keep the cluster's files")
    a = ap.parse_args(argv)
    if a.oltp_threads <= 0:
        a.oltp_threads = max(1, min(a.oltp_clients, 2 * (os.cpu_count() or 1)))
    a.configs = [c for c in a.configs.split(",") if c]
    if set(a.configs) - {"plain", "warp", "loaded"} or "plain" not in a.configs or \
            len(set(a.configs)) != len(a.configs) or len(a.configs) < 2:
        ap.error("--configs: plain and one or both of warp, loaded")
    a.fault_kinds = [f for f in a.faults.split(",") if f]
    bad = set(a.fault_kinds) - set(ALL_FAULTS)
    if bad:
        ap.error("unknown faults: %s" % ", ".join(sorted(bad)))
    return a


class Ctx:
    """What every thread shares."""

    def __init__(self, args, server):
        self.args, self.server, self.seed = args, server, args.seed
        self.stats = Stats()
        self.faults = FaultLog()
        self.phase = "setup"
        self.queries = load_queries()
        self.olap_clients = []
        self.writers = []
        self.ledger = {}
        self.next_batch = 0
        self.dim_originals = {}
        self.ncustomers = 1
        self.files = None
        self.pending_reset = False
        self.lost_rows = 0
        self.phantom_rows = 0
        self.checks = []
        self.sums = {}
        self.lost_detail = []

    def log(self, msg):
        print("[%7.1fs] %s" % (time.time() - self.stats.t0, msg), flush=True)

    def verify_after_crash(self):
        """After a crash restart: the daemon is back, an analytic query gives
        PostgreSQL's answer, the writable table holds what committed."""
        dsn = self.server.dsn()
        if self.server.preloaded and self.args.gpud_device != "off":
            deadline = time.time() + 30
            while gpud_pid(self.server.data) is None and time.time() < deadline:
                time.sleep(0.2)
            if gpud_pid(self.server.data) is None:
                self.stats.error("recovery", None, None, "pg_warp_gpud not back 30 s after a crash restart")
        try:
            with psycopg.connect(dsn, autocommit=True) as c:
                if self.pending_reset:
                    c.execute("ALTER SYSTEM RESET pg_warp.dim_cache_total_mem")
                    c.execute("SELECT pg_reload_conf()")
                    self.pending_reset = False
                name, sql = self.queries[self.faults.crash_restarts % len(self.queries)]
                c.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
                got = c.execute(with_fact(sql, "arrow")).fetchall()
                c.execute("SET LOCAL pg_warp.enabled = off")
                want = c.execute(sql).fetchall()
                c.execute("COMMIT")
                self.stats.add("recovery_checks")
                if not same_answer(got, want):
                    self.stats.add_wrong("after crash restart: %s: %s" % (name, answer_diff(got, want)))
        except psycopg.Error as e:
            self.stats.error("recovery", e.sqlstate, None, "check after restart: %s" % e)
        self.check_writable(final=False)

    def batch_sum(self, b, n):
        if b not in self.sums:
            self.sums[b] = sum((b * 31 + i * 7) % 1000003 for i in range(1, n + 1))
        return self.sums[b]

    def check_writable(self, final):
        """Every committed batch of the ledger present in w_arrow (read with
        and without pg_warp's engine) and in w_heap, whole; no batch that did
        not commit present.  Not final: batches still being written are skipped."""
        if not self.ledger and not final:
            return
        try:
            with psycopg.connect(self.server.dsn(), autocommit=True) as c:
                c.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
                snap_ledger = {b: tuple(v) for b, v in list(self.ledger.items())}
                q = "SELECT batch, count(*), sum(v) FROM %s GROUP BY batch"
                seen = {}
                if self.server.preloaded:
                    seen["w_arrow engine"] = dict((r[0], r[1:]) for r in c.execute(q % "w_arrow"))
                    c.execute("SET LOCAL pg_warp.enabled = off")
                seen["w_arrow"] = dict((r[0], r[1:]) for r in c.execute(q % "w_arrow"))
                seen["w_heap"] = dict((r[0], r[1:]) for r in c.execute(q % "w_heap"))
                c.execute("COMMIT")
        except psycopg.Error as e:
            self.stats.error("verify", e.sqlstate, None, "writable check: %s" % e)
            return
        lost = phantom = 0
        for b, (n, state) in snap_ledger.items():
            if state == "pending":
                continue
            want = (n, self.batch_sum(b, n))
            missing = 0
            for name, got in seen.items():
                have = got.get(b)
                if state == "committed":
                    if have is None or have[0] < n:
                        missing = max(missing, n - (have[0] if have else 0))
                    elif tuple(have) != want:
                        self.stats.add_wrong("writable %s: committed batch %d reads %r, wrote %r"
                                             % (name, b, have, want))
                elif state == "aborted" and have is not None:
                    phantom += have[0]
                    self.stats.add_wrong("writable %s: batch %d that did not commit is there "
                                         "(%d rows)" % (name, b, have[0]))
                elif state == "indoubt" and have is not None and tuple(have) != want:
                    self.stats.add_wrong("writable %s: in-doubt batch %d partly there: %r"
                                         % (name, b, have))
            if missing:
                lost += missing
                self.lost_detail.append("committed batch %d (%d rows) misses %d rows"
                                        % (b, n, missing))
        # a batch in the table that the ledger does not know (or only as pending)
        for name, got in seen.items():
            if got != seen["w_heap"]:
                diff = set(got.items()) ^ set(seen["w_heap"].items())
                self.stats.add_wrong("writable %s and w_heap differ: %r" % (name, sorted(diff)[:4]))
            for b in got:
                if b not in snap_ledger:
                    self.stats.add_wrong("writable %s: batch %d unknown to the ledger" % (name, b))
        self.lost_rows = max(self.lost_rows, lost)         # the worst check
        self.phantom_rows = max(self.phantom_rows, phantom)
        self.checks.append(dict(final=final, batches=len(snap_ledger), lost=lost, phantom=phantom,
                                committed_rows=sum(n for n, s in snap_ledger.values() if s == "committed")))


def restore_dims(ctx):
    with psycopg.connect(ctx.server.dsn(), autocommit=True) as c:
        for (t, kc, col, key), v in ctx.dim_originals.items():
            c.execute("UPDATE %s SET %s = %%s WHERE %s = %%s" % (t, col, kc), (v, key))
        if ctx.server.preloaded:
            c.execute("ALTER SYSTEM RESET pg_warp.dim_cache_total_mem")
            c.execute("SELECT pg_reload_conf()")


def run_threads(threads, stop, seconds):
    for t in threads:
        t.start()
    stop.wait(seconds)
    stop.set()
    for t in threads:
        t.join(120)


def measure_window(ctx, cfg, tmpdir, rnd_tag):
    """OLTP with paced analytic clients and the dimension writers, pg_warp
    preloaded ('warp') or not ('plain'); returns pgbench's result."""
    a = ctx.args
    # both configurations start alike: after a checkpoint and a restart
    with psycopg.connect(ctx.server.dsn(), autocommit=True) as c:
        c.execute("CHECKPOINT")
    ctx.server.restart(cfg != "plain")
    ctx.phase = "measure-" + cfg
    ctx.log("comparison window: %s (%d OLTP clients, %d paced analytic clients)"
            % (cfg, a.oltp_clients, a.olap_clients))
    stop = threading.Event()
    threads = [AnalyticClient(ctx, i, stop, cfg) for i in range(a.olap_clients)]
    threads += [DimWriter(ctx, i, stop) for i in range(a.dim_writers)]
    for t in threads:
        t.start()
    if a.warmup_seconds > 0:
        run_pgbench(ctx, a.warmup_seconds, tmpdir, "warm")
    r = run_pgbench(ctx, a.measure_seconds, tmpdir, rnd_tag, cpu=True)
    stop.set()
    for t in threads:
        t.join(120)
    ctx.log("  %s: %.0f TPS, p50 %.3f ms, p99 %.3f ms, %s us CPU per transaction"
            % (cfg, r["tps"], pct(r["lat"], 0.5), pct(r["lat"], 0.99),
               "%.1f" % r["cpu_us_per_tx"] if r["cpu_us_per_tx"] else "?"))
    r["p50"], r["p99"] = pct(r["lat"], 0.5), pct(r["lat"], 0.99)
    del r["lat"]
    r["cfg"] = cfg
    r["load1"] = round(os.getloadavg()[0], 2)      # the machine's load, other tenants included
    return r


def soak_window(ctx, seconds, tmpdir, k, results):
    a = ctx.args
    if not ctx.server.preloaded:
        ctx.server.restart(True)
    ctx.phase = "soak%d" % k
    ctx.log("soak window %d: %.0f s, faults %s" % (k, seconds, ",".join(a.fault_kinds)))
    stop = threading.Event()
    ctx.olap_clients = [AnalyticClient(ctx, i, stop, "soak") for i in range(a.olap_clients)]
    ctx.writers = [ArrowWriter(ctx, i, stop) for i in range(a.writers)]
    threads = ctx.olap_clients + ctx.writers + [DimWriter(ctx, i, stop) for i in range(a.dim_writers)]
    threads.append(Injector(ctx, stop, a.fault_interval, a.crash_interval, a.fault_kinds))
    if a.gpud_kill_interval > 0 and ctx.server.preloaded:
        threads.append(Injector(ctx, stop, a.gpud_kill_interval, a.crash_interval, ["gpud_kill"],
                                salt=2))
    until = time.time() + seconds
    oltp = threading.Thread(target=oltp_soak, args=(ctx, stop, until, tmpdir, results), daemon=True)
    threads.append(oltp)
    run_threads(threads, stop, seconds)
    if ctx.faults.crash_active():
        wait_for_server(ctx.server.dsn(), 180)
    ctx.olap_clients, ctx.writers = [], []
    s = ctx.stats
    ctx.log("  so far: %d queries checked, %d wrong, %d unexpected errors, %d crash restarts"
            % (s.c["checked"], len(s.wrong), s.unexpected(), ctx.faults.crash_restarts))


def main(argv):
    a = parse_args(argv)
    own = not a.dsn
    if own:
        server = Cluster(a.port, a.gpud_device, a.shared_buffers,
                         a.oltp_clients + a.olap_clients + a.writers + a.dim_writers + 40, a.fsync)
    else:
        server = ExistingServer(a.dsn, a.workdir or tempfile.mkdtemp(prefix="pg_warp_soak."))
    ctx = Ctx(a, server)
    started = datetime.datetime.utcnow()
    tmpdir = tempfile.mkdtemp(prefix="pg_warp_soak_pgbench.")
    os.chmod(tmpdir, 0o777)
    mon = None
    try:
        if own:
            server.initdb()
            server.start(preload=True)
        ctx.log("setting up (sf %s, pgbench scale %d)" % (a.sf, a.pgbench_scale))
        ctx.files = setup_data(server, a.sf, a.batch_rows, a.pgbench_scale, ctx.log)
        with psycopg.connect(server.dsn(), autocommit=True) as c:
            ctx.ncustomers = c.execute("SELECT count(*) FROM customer").fetchone()[0]
        mon = Monitor(ctx, a.mem_interval)
        mon.start()
        t_start = time.time()
        total = a.minutes * 60
        rounds = a.rounds or max(1, int(round(a.minutes / 5)))
        compare = own and a.measure_seconds > 0
        pairs = (a.pairs or max(1, int(round(3 * a.minutes / 5)))) if compare else 0
        per_round = total / rounds
        windows, soak_oltp = [], []
        pair = 0
        for r in range(rounds):
            # the pairs left, spread evenly over the rounds left
            npairs = (pairs - pair + (rounds - r) - 1) // (rounds - r)
            if npairs:
                # what the soak before left behind (dead rows, dirty pages)
                # must not weigh on whichever window comes first
                with psycopg.connect(server.dsn(), autocommit=True) as c:
                    c.execute("VACUUM ANALYZE")
            t_round = time.time()
            for _ in range(npairs):
                # ABBA: the order alternates from pair to pair, so that a
                # drift within a pair weighs on both configurations alike
                order = a.configs if pair % 2 == 0 else a.configs[::-1]
                for cfg in order:
                    windows.append(dict(measure_window(ctx, cfg, tmpdir, "p%d%s" % (pair, cfg)),
                                        round=r + 1, pair=pair + 1))
                pair += 1
            soak_s = max(10.0, per_round - (time.time() - t_round))
            if r == rounds - 1:
                soak_s = max(10.0, total - (time.time() - t_start))
            soak_window(ctx, soak_s, tmpdir, r + 1, soak_oltp)
        ctx.phase = "final"
        ctx.check_writable(final=True)
        restore_dims(ctx)
        duration = time.time() - t_start
    finally:
        if mon:
            mon.stop.set()
            mon.join(10)
        if own:
            log_tail = server.log_tail(60)
            server.stop(keep=a.keep)
        shutil.rmtree(tmpdir, ignore_errors=True)
    out = a.out or os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "results", "soak", "%s-%s" % (started.strftime("%Y-%m-%d-%H%M"),
                                                              socket.gethostname().split(".")[0]))
    summary = write_report(ctx, mon, out, argv, started, duration, windows, soak_oltp,
                           log_tail if own else "")
    print("results in %s" % out)
    print(summary["final_line"], flush=True)
    return 0 if summary["pass"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
