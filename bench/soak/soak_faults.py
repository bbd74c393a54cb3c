"""Faults injected on a schedule, the record of when each was active, and
the attribution of every error to the fault that explains it (or to none:
an unexpected error).

Faults (one every --fault-interval seconds, in a shuffled rotation; the two
that restart the cluster at most once per --crash-interval):
  gpud_kill     kill -9 of pg_warp_gpud (its supervisor restarts it; queries
                in flight re-run on the CPU engine: no error is expected)
  gpud_fault    an analytic client's next query runs with pg_warp.mode = gpu
                and pg_warp.gpud_fault = crash | slow | device_oom
                (answer still checked; no error expected)
  timeout       an analytic client's next query runs under a statement_timeout
                of 5-200 ms (57014 expected)
  cancel        pg_cancel of an analytic client's running query (57014)
  replace       the Arrow file of lineorder_swap replaced by rename with the
                same rows in another order (55000 for a scan that spans it)
  truncate      the Arrow file of lineorder_trunc cut short in place for about
                a second, then restored by rename (scans that see it: 55000,
                XX001 or a file-access error; never a crash, never a wrong answer)
  mempressure   pg_warp.dim_cache_total_mem at 1MB (ALTER SYSTEM + reload) for
                a while, and clients' dim_cache_mem / inner_hash_mem /
                gpu_memory_per_query set tiny (no error expected)
  writer_term   pg_terminate_backend of a writable-table writer mid-INSERT (57P01)
  backend_kill  kill -9 of an analytic backend: the postmaster restarts the
                cluster (every client's connection ends; counted, recovery verified)
  writer_kill   kill -9 of a writable-table writer mid-INSERT (a cluster restart too)
"""
import collections
import os
import random
import shutil
import signal
import threading
import time

import psycopg

from soak_cluster import replace_file, wait_for_server

# SQLSTATEs of a connection ended by a crash restart (None: the socket closed)
CRASH_STATES = {None, "57P01", "57P02", "57P03", "08000", "08001", "08003", "08006"}
# what a scan of a file replaced or truncated under it may raise
FILE_STATES = {"55000", "XX001", "58030", "58P01", "22023"}
CANCEL_STATES = {"57014"}
CRASH_GRACE = 3.0           # seconds after recovery that errors still count as the crash's


class Stats:
    """Counters and errors shared by every thread."""

    def __init__(self):
        self.lock = threading.Lock()
        self.c = collections.Counter()
        self.errors = collections.Counter()     # (role, sqlstate, fault or "UNEXPECTED")
        self.examples = {}
        self.error_log = []                     # (t, role, sqlstate, fault, message)
        self.wrong = []                         # descriptions of wrong answers
        self.t0 = time.time()

    def add(self, key, n=1):
        with self.lock:
            self.c[key] += n

    def error(self, role, sqlstate, fault, msg):
        key = (role, sqlstate or "conn", fault or "UNEXPECTED")
        with self.lock:
            self.errors[key] += 1
            self.examples.setdefault(key, msg.strip().splitlines()[0][:300] if msg else "")
            self.error_log.append((round(time.time() - self.t0, 3), role, sqlstate or "conn",
                                   fault or "UNEXPECTED", (msg or "").strip().replace("\n", " | ")[:500]))
        if not fault:
            print("[%7.1fs] UNEXPECTED %s error %s: %s" % (time.time() - self.t0, role, sqlstate,
                                                          (msg or "").strip()[:1000]), flush=True)

    def add_wrong(self, desc):
        with self.lock:
            self.wrong.append(desc)
        print("[%7.1fs] WRONG: %s" % (time.time() - self.t0, desc[:2000]), flush=True)

    def unexpected(self):
        with self.lock:
            return sum(n for k, n in self.errors.items() if k[2] == "UNEXPECTED")


class FaultLog:
    """When each fault was active: intervals (kind, t0, t1); t1 None while open."""

    def __init__(self):
        self.lock = threading.Lock()
        self.intervals = []
        self.counts = collections.Counter()
        self.crash_restarts = 0
        self.recovery_s = []
        self.gpud_restart_s = []    # kill -9 of the daemon to its successor's pid
        self.gpud_not_restarted = 0
        self.notes = []

    def open(self, kind):
        with self.lock:
            iv = [kind, time.time(), None]
            self.intervals.append(iv)
            self.counts[kind] += 1
            return iv

    def close(self, iv, grace=0.0):
        with self.lock:
            iv[2] = time.time() + grace

    def overlaps(self, kinds, t0, t1):
        """the kind of a fault of `kinds` active at some time in [t0, t1]"""
        now = time.time()
        with self.lock:
            for kind, a, b in reversed(self.intervals):
                if kind in kinds and a <= t1 and (b is None or b >= t0 or b > now):
                    return kind
        return None

    def crash_active(self):
        now = time.time()
        with self.lock:
            return any(k in ("backend_kill", "writer_kill") and (b is None or b > now)
                       for k, a, b in self.intervals)


def classify(faults, sqlstate, t0, t1, armed=(), variant=None):
    """The fault that explains an error seen in [t0, t1], or None."""
    crash = faults.overlaps(("backend_kill", "writer_kill"), t0, t1)
    if sqlstate in CRASH_STATES and crash:
        return crash
    if sqlstate in CANCEL_STATES:
        for a in ("cancel", "timeout"):
            if a in armed:
                return a
    if sqlstate in ("57P01", None) and "writer_term" in armed:
        return "writer_term"
    if sqlstate in FILE_STATES and variant in ("swap", "trunc"):
        kind = faults.overlaps(("replace",) if variant == "swap" else ("truncate",), t0, t1)
        if kind:
            return kind
    return None


def gpud_pid(datadir):
    """pid of the live pg_warp_gpud from its status file, or None."""
    try:
        with open(os.path.join(datadir, "pg_warp_gpud.status")) as f:
            parts = f.read(256).strip().split("\t")
        pid = int(parts[3])
        os.kill(pid, 0)
        return pid
    except (OSError, ValueError, IndexError):
        return None


class Injector(threading.Thread):
    """Runs the fault rotation during a soak phase."""

    def __init__(self, ctx, stop, interval, crash_interval, kinds, salt=1):
        super().__init__(name="faults", daemon=True)
        self.ctx, self.stop, self.interval = ctx, stop, interval
        self.crash_interval = crash_interval
        self.kinds = list(kinds)
        self.rnd = random.Random(ctx.seed * 7 + salt)
        self.last_crash = time.time() - crash_interval / 2     # the first after half of it

    def run(self):
        rotation = []
        if not self.kinds:      # --faults '': a run for the comparison alone
            return
        while not self.stop.wait(self.rnd.uniform(0.5, 1.5) * self.interval):
            if not rotation:
                rotation = list(self.kinds)
                self.rnd.shuffle(rotation)
            kind = rotation.pop()
            if kind in ("backend_kill", "writer_kill"):
                if time.time() - self.last_crash < self.crash_interval:
                    continue
                self.last_crash = time.time()
            if kind in ("cancel", "writer_term", "backend_kill", "writer_kill"):
                self.ctx.stats.add("attempts_" + kind)
            try:
                getattr(self, "f_" + kind)()
            except Exception as e:      # a fault that could not be injected
                self.ctx.faults.notes.append("%s: %s" % (kind, e))
                self.ctx.stats.error("injector", getattr(e, "sqlstate", None), None,
                                     "injecting %s: %s" % (kind, e))

    # -------------------------------------------------------------- faults
    def f_gpud_kill(self):
        ctx = self.ctx
        pid = gpud_pid(ctx.server.data)
        if pid is None:
            ctx.faults.notes.append("gpud_kill: no daemon running")
            return
        iv = ctx.faults.open("gpud_kill")
        t_kill = time.time()
        os.kill(pid, signal.SIGKILL)
        deadline = t_kill + 30
        while time.time() < deadline and not self.stop.is_set():
            p = gpud_pid(ctx.server.data)
            if p and p != pid:
                ctx.faults.gpud_restart_s.append(time.time() - t_kill)
                break
            time.sleep(0.05)
        else:
            if not self.stop.is_set() and not ctx.faults.crash_active():
                ctx.faults.gpud_not_restarted += 1
                ctx.stats.error("gpud", None, None,
                                "pg_warp_gpud was not restarted within 30 s after kill -9")
        ctx.faults.close(iv)

    def _arm(self, what, clients=None):
        clients = clients or self.ctx.olap_clients
        if clients:
            self.rnd.choice(clients).armed_next.add(what)
            self.ctx.faults.counts[what] += 1

    def f_gpud_fault(self):
        self._arm(self.rnd.choice(["gpud_crash", "gpud_slow", "gpud_device_oom"]))

    def f_timeout(self):
        self._arm("timeout")

    def f_cancel(self):
        c = self._busy_client(lambda: [c for c in self.ctx.olap_clients if c.in_query])
        if c is None:
            return
        c.armed.add("cancel")
        c.sent["cancel"] = time.time()
        self.ctx.faults.counts["cancel"] += 1
        try:
            c.conn.cancel()
        except Exception:
            pass

    def f_replace(self):
        files = self.ctx.files
        iv = self.ctx.faults.open("replace")
        src = files.swap_variants[self.ctx.faults.counts["replace"] % 2]
        replace_file(src, files.swap)
        self.ctx.faults.close(iv, grace=0.5)

    def f_truncate(self):
        files = self.ctx.files
        iv = self.ctx.faults.open("truncate")
        size = os.path.getsize(files.trunc)
        with open(files.trunc, "r+b") as f:
            f.truncate(int(size * self.rnd.uniform(0.05, 0.95)))
        self.stop.wait(self.rnd.uniform(0.5, 1.5))
        replace_file(files.trunc_orig, files.trunc)
        self.ctx.faults.close(iv, grace=0.5)

    def f_mempressure(self):
        ctx = self.ctx
        iv = ctx.faults.open("mempressure")
        for c in ctx.olap_clients:
            if self.rnd.random() < 0.5:
                c.armed_next.add("tinymem")
        if ctx.server.preloaded:
            with psycopg.connect(ctx.server.dsn(), autocommit=True) as c:
                c.execute("ALTER SYSTEM SET pg_warp.dim_cache_total_mem = '1MB'")
                c.execute("SELECT pg_reload_conf()")
            self.stop.wait(self.rnd.uniform(3, 8))
            try:
                with psycopg.connect(ctx.server.dsn(), autocommit=True) as c:
                    c.execute("ALTER SYSTEM RESET pg_warp.dim_cache_total_mem")
                    c.execute("SELECT pg_reload_conf()")
            except psycopg.Error:
                ctx.pending_reset = True    # a crash restart got in the way: redo later
        ctx.faults.close(iv)

    def _busy_client(self, pick, wait=5.0):
        """a client pick() offers (one busy in the right place), waiting for
        one up to `wait` seconds"""
        deadline = time.time() + wait
        while not self.stop.is_set():
            busy = pick()
            if busy:
                return self.rnd.choice(busy)
            if time.time() > deadline:
                return None
            time.sleep(0.02)
        return None

    def _writer_backend(self):
        return self._busy_client(lambda: [w for w in self.ctx.writers if w.in_insert and w.pid])

    def f_writer_term(self):
        w = self._writer_backend()
        if w is None:
            return
        w.armed.add("writer_term")
        w.sent["writer_term"] = time.time()
        self.ctx.faults.counts["writer_term"] += 1
        with psycopg.connect(self.ctx.server.dsn(), autocommit=True) as c:
            c.execute("SELECT pg_terminate_backend(%s)", (w.pid,))

    def f_backend_kill(self):
        c = self._busy_client(lambda: [c for c in self.ctx.olap_clients if c.in_query and c.pid])
        if c is not None:
            self._crash("backend_kill", c.pid)

    def f_writer_kill(self):
        w = self._writer_backend()
        if w is None:
            return
        self._crash("writer_kill", w.pid)

    def _crash(self, kind, pid):
        """kill -9 of a backend; waits for the crash restart and checks recovery."""
        ctx = self.ctx
        iv = ctx.faults.open(kind)
        t0 = time.time()
        os.kill(pid, signal.SIGKILL)
        time.sleep(0.5)        # the postmaster notices and terminates everyone
        try:
            wait_for_server(ctx.server.dsn(), 180)
        except RuntimeError as e:
            ctx.stats.error("recovery", None, None, str(e))
            ctx.faults.close(iv, CRASH_GRACE)
            return
        ctx.faults.recovery_s.append(time.time() - t0)
        ctx.faults.crash_restarts += 1
        ctx.verify_after_crash()
        ctx.faults.close(iv, CRASH_GRACE)
