"""The soak's clients: analytic clients (every answer checked), dimension
writers (the OLTP side's writes to the heap dimensions), writers of the
writable Arrow table (with a ledger of what committed), and the OLTP load
itself (pgbench with bench/pgbench's mix).
"""
import decimal
import glob
import os
import random
import re
import subprocess
import threading
import time

import psycopg

from soak_faults import classify

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

FACTS = {"arrow": "lineorder_arrow", "heap": "lineorder", "swap": "lineorder_swap",
         "trunc": "lineorder_trunc"}
# share of the soak's analytic queries per variant
VARIANT_WEIGHTS = [("arrow", 35), ("heap", 20), ("swap", 15), ("trunc", 10), ("writable", 20)]

WRITABLE_QUERIES = [
    ("w1", "SELECT count(*), sum(v), count(DISTINCT batch), min(i), max(i) FROM {t}"),
    ("w2", "SELECT k % 10 AS g, count(*), sum(v), max(batch) FROM {t} GROUP BY 1 ORDER BY 1"),
    ("w3", "SELECT c.c_region, count(*), sum(w.v) FROM {t} w JOIN customer c "
           "ON w.k = c.c_custkey GROUP BY 1 ORDER BY 1"),
]

# (table, key column, column changed, values it takes): the queries filter
# and group on these, so the answers move while the tables keep SSB's shape
DIM_CHANGES = [
    ("customer", "c_custkey", "c_region", ["AMERICA", "ASIA", "EUROPE"]),
    ("customer", "c_custkey", "c_nation", ["UNITED STATES", "CHINA", "PERU"]),
    ("supplier", "s_suppkey", "s_region", ["AMERICA", "ASIA", "EUROPE"]),
    ("part", "p_partkey", "p_mfgr", ["MFGR#1", "MFGR#2", "MFGR#3"]),
    ("part", "p_partkey", "p_category", ["MFGR#12", "MFGR#14"]),
]


def load_queries():
    """[(name, sql)]: the 13 SSB queries and the repository's extra ones."""
    out = []
    for d, prefix in (("queries", "ssb"), ("extra", "extra")):
        path = os.path.join(REPO, "bench", "ssb", d)
        for f in sorted(os.listdir(path)):
            if f.startswith("q") and f.endswith(".sql"):
                sql = open(os.path.join(path, f)).read()
                sql = "\n".join(l for l in sql.splitlines() if not l.lstrip().startswith("--"))
                out.append(("%s/%s" % (prefix, f[:-4]), sql.strip().rstrip(";")))
    return out


def with_fact(sql, variant):
    if variant == "heap":
        return sql
    return re.sub(r"\blineorder\b(?!_)", "%s AS lineorder" % FACTS[variant], sql, count=1)


def _close(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return a == b or abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
    if isinstance(a, decimal.Decimal) and isinstance(b, decimal.Decimal):
        return a == b
    return a == b


def _rows_equal(got, want):
    return len(got) == len(want) and all(
        len(r) == len(s) and all(_close(x, y) for x, y in zip(r, s)) for r, s in zip(got, want))


def _key(row):
    return tuple((0, "") if v is None else (1, repr(round(v, 6)) if isinstance(v, float) else repr(v))
                 for v in row)


def same_answer(got, want):
    """True when the rows are equal in order, floats within rounding (the
    oracle's sums add in another order); "ties" when they are equal only as
    multisets: rows whose ORDER BY keys tie (groups with equal sums, which
    the writers' changes make common) come in either order."""
    if _rows_equal(got, want):
        return True
    if len(got) == len(want) and _rows_equal(sorted(got, key=_key), sorted(want, key=_key)):
        return "ties"
    return False


def answer_diff(got, want):
    """rows only in one of the answers (multiset difference), for reports"""
    g, w = sorted(got, key=_key), sorted(want, key=_key)
    only_g = [r for r in g if not any(_rows_equal([r], [x]) for x in w)]
    only_w = [r for r in w if not any(_rows_equal([r], [x]) for x in g)]
    return "%d vs %d rows; only pg_warp: %r; only postgres: %r" % (
        len(got), len(want), only_g[:5], only_w[:5])


def conn_sqlstate(msg):
    """the SQLSTATE of a refused connection, which libpq reports only as text"""
    if "recovery mode" in msg or "not yet accepting connections" in msg or \
            "starting up" in msg or "shutting down" in msg:
        return "57P03"
    if "terminating connection because of crash" in msg:
        return "57P02"
    return None


def conn_broken(conn):
    return conn is None or conn.closed or conn.broken


class Client(threading.Thread):
    """Common reconnect / error handling."""

    role = "client"

    def __init__(self, ctx, idx, stop):
        super().__init__(name="%s-%d" % (self.role, idx), daemon=True)
        self.ctx, self.idx, self.stop = ctx, idx, stop
        self.rnd = random.Random("%d/%s/%d" % (ctx.seed, self.role, idx))
        self.conn = None
        self.pid = None
        self.armed = set()
        self.sent = {}          # fault -> when the injector signalled this client's backend

    def connect(self):
        while not self.stop.is_set():
            t0 = time.time()
            try:
                self.conn = psycopg.connect(self.ctx.server.dsn(), autocommit=True,
                                            connect_timeout=10)
                self.pid = self.conn.info.backend_pid
                self.on_connect()
                return True
            except psycopg.Error as e:
                self.conn = None
                self.fail(e, t0, time.time(), ())
                self.stop.wait(0.5)
        return False

    def on_connect(self):
        pass

    def fail(self, e, t0, t1, armed, variant=None):
        st = getattr(e, "sqlstate", None) or conn_sqlstate(str(e))
        # a cancel or terminate sent just before this statement began (the
        # one it was aimed at had ended) lands on this one
        armed = set(armed) | {f for f, t in self.sent.items() if t0 - 2.0 <= t <= t1}
        fault = classify(self.ctx.faults, st, t0, t1, armed, variant)
        if fault is None and self.stop.is_set() and st in (None, "57P01"):
            fault = "shutdown"
        self.ctx.stats.error(self.role, st, fault, str(e))
        if not conn_broken(self.conn):
            try:
                self.conn.execute("ROLLBACK")
            except psycopg.Error:
                pass
        if conn_broken(self.conn):
            self.conn = None
            self.pid = None
        return fault

    def run(self):
        try:
            while not self.stop.is_set():
                if self.conn is None and not self.connect():
                    break
                self.step()
        finally:
            if self.conn is not None:
                try:
                    self.conn.close()
                except Exception:
                    pass


class AnalyticClient(Client):
    """mode 'soak': each query runs through pg_warp and again with
    pg_warp.enabled = off on the heap fact table, in one REPEATABLE READ
    transaction, and the answers must agree.  'plain' / 'warp': paced
    queries (one per --olap-period) for the OLTP comparison, unchecked:
    'plain' on the heap tables with pg_warp not loaded, 'loaded' the same
    with pg_warp loaded but off, 'warp' through pg_warp on the Arrow or
    heap fact table."""

    role = "olap"

    def __init__(self, ctx, idx, stop, mode):
        super().__init__(ctx, idx, stop)
        self.mode = mode
        self.in_query = False
        self.armed_next = set()
        self.next_t = time.time() + self.rnd.uniform(0, ctx.args.olap_period)

    def step(self):
        if self.mode == "soak":
            self.checked_query()
        else:
            self.paced_query()

    def paced_query(self):
        now = time.time()
        if self.next_t > now:
            self.stop.wait(self.next_t - now)
            if self.stop.is_set():
                return
        self.next_t = max(self.next_t + self.ctx.args.olap_period, time.time() - 1)
        name, sql = self.rnd.choice(self.ctx.queries)
        variant = self.rnd.choice(["arrow", "heap"])
        t0 = time.time()
        try:
            if self.mode == "plain":
                self.conn.execute(sql).fetchall()
            elif self.mode == "loaded":     # preloaded, but the same plans as plain
                self.conn.execute("BEGIN")
                self.conn.execute("SET LOCAL pg_warp.enabled = off")
                self.conn.execute(sql).fetchall()
                self.conn.execute("COMMIT")
            else:
                self.conn.execute("BEGIN")
                self.conn.execute("SET LOCAL pg_warp.heap_min_rows = 1000")
                self.conn.execute(with_fact(sql, variant)).fetchall()
                self.conn.execute("COMMIT")
            self.ctx.stats.add("paced_%s" % self.mode)
        except psycopg.Error as e:
            self.fail(e, t0, time.time(), ())

    def pick(self):
        total = sum(w for _, w in VARIANT_WEIGHTS)
        r = self.rnd.uniform(0, total)
        for variant, w in VARIANT_WEIGHTS:
            r -= w
            if r <= 0:
                break
        if variant == "writable":
            name, q = self.rnd.choice(WRITABLE_QUERIES)
            return name, variant, q.format(t="w_arrow"), q.format(t="w_heap")
        name, sql = self.rnd.choice(self.ctx.queries)
        return name, variant, with_fact(sql, variant), sql

    def settings(self, armed):
        """SET LOCAL commands for this query (its mode and armed faults)"""
        mode = self.rnd.choice(["auto", "cpu", "gpu"])
        s = ["SET LOCAL pg_warp.heap_min_rows = 1000"]
        for f in ("crash", "slow", "device_oom"):
            if "gpud_" + f in armed:
                mode = "gpu"
                s.append("SET LOCAL pg_warp.gpud_fault = %s" % f)
        s.append("SET LOCAL pg_warp.mode = %s" % mode)
        if "timeout" in armed:
            s.append("SET LOCAL statement_timeout = %d" % self.rnd.randint(5, 200))
        if "tinymem" in armed:
            s.append(self.rnd.choice(["SET LOCAL pg_warp.dim_cache_mem = '64kB'",
                                      "SET LOCAL pg_warp.inner_hash_mem = '64kB'",
                                      "SET LOCAL pg_warp.gpu_memory_per_query = '1MB'",
                                      "SET LOCAL pg_warp.dim_cache_mem = 0"]))
        return mode, s

    def checked_query(self):
        name, variant, sql, oracle = self.pick()
        self.armed = armed = self.armed_next
        self.armed_next = set()
        mode, sets = self.settings(armed)
        c = self.conn
        t0 = time.time()
        try:
            c.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
            for s in sets:
                c.execute(s)
            self.in_query = True
            try:
                got = c.execute(sql).fetchall()
            finally:
                self.in_query = False
            c.execute("SET LOCAL statement_timeout = 0")
            c.execute("SET LOCAL pg_warp.gpud_fault = none")
            c.execute("SET LOCAL pg_warp.enabled = off")
            want = c.execute(oracle).fetchall()
            c.execute("COMMIT")
        except psycopg.Error as e:
            fault = self.fail(e, t0, time.time(), armed, variant)
            self.ctx.stats.add("queries")
            self.ctx.stats.add("failed_expected" if fault else "failed_unexpected")
            return
        finally:
            self.armed = set()
        self.ctx.stats.add("queries")
        self.ctx.stats.add("checked")
        self.ctx.stats.add("checked_%s" % variant)
        self.ctx.stats.add("mode_%s" % mode)
        for a in armed:
            self.ctx.stats.add("armed_ok_%s" % a)
        same = same_answer(got, want)
        if same == "ties":
            self.ctx.stats.add("order_ties")
        elif not same:
            self.ctx.stats.add_wrong("%s over %s (mode %s, faults %s): %s"
                                     % (name, variant, mode, sorted(armed), answer_diff(got, want)))


class DimWriter(Client):
    """Updates a column the queries filter or group on, of a random
    dimension row, to another value it takes; commits 80 %, rolls back 20 %."""

    role = "dimwriter"

    def on_connect(self):
        if not hasattr(self, "counts"):
            self.counts = {t: self.conn.execute("SELECT count(*) FROM %s" % t).fetchone()[0]
                           for t in {ch[0] for ch in DIM_CHANGES}}

    def step(self):
        t, kc, col, vals = self.rnd.choice(DIM_CHANGES)
        key = self.rnd.randint(1, self.counts[t])
        t0 = time.time()
        try:
            c = self.conn
            c.execute("BEGIN")
            old = c.execute("SELECT %s FROM %s WHERE %s = %%s FOR UPDATE" % (col, t, kc),
                            (key,)).fetchone()
            if old is not None:
                with self.ctx.stats.lock:
                    self.ctx.dim_originals.setdefault((t, kc, col, key), old[0])
                c.execute("UPDATE %s SET %s = %%s WHERE %s = %%s" % (t, col, kc),
                          (self.rnd.choice(vals), key))
            if self.rnd.random() < 0.2:
                c.execute("ROLLBACK")
                self.ctx.stats.add("dim_rollbacks")
            else:
                c.execute("COMMIT")
                self.ctx.stats.add("dim_commits")
        except psycopg.Error as e:
            self.fail(e, t0, time.time(), ())
        self.stop.wait(self.rnd.uniform(0, self.ctx.args.dim_pause))


class ArrowWriter(Client):
    """Appends batches to the writable Arrow table w_arrow and the same rows
    to its heap mirror w_heap in one transaction.  The ledger (ctx.ledger:
    batch -> [rows, state]) says what committed: 'committed' when COMMIT
    returned, 'aborted' when the transaction rolled back or failed before
    COMMIT, 'indoubt' when the connection died during COMMIT."""

    role = "writer"

    def __init__(self, ctx, idx, stop):
        super().__init__(ctx, idx, stop)
        self.in_insert = False

    def step(self):
        ctx = self.ctx
        with ctx.stats.lock:
            ctx.next_batch += 1
            batch = ctx.next_batch
        big = self.rnd.random() < 0.3
        n = self.rnd.randint(20000, 80000) if big else self.rnd.randint(1, 200)
        commit = self.rnd.random() < (0.3 if big else 0.9)
        rows = ("SELECT %d, i, (%d * 31 + i * 7) %% 1000003, 1 + (i * 13 + %d) %% %d "
                "FROM generate_series(1, %d) i" % (batch, batch, batch, ctx.ncustomers, n))
        ctx.ledger[batch] = [n, "pending"]
        self.armed = set()
        c = self.conn
        t0 = time.time()
        state = "aborted"
        try:
            c.execute("BEGIN")
            self.in_insert = True
            try:
                c.execute("INSERT INTO w_arrow " + rows)
            finally:
                self.in_insert = False
            c.execute("INSERT INTO w_heap " + rows)
            if commit:
                state = "indoubt"
                c.execute("COMMIT")
                state = "committed"
                ctx.stats.add("writer_commits")
                ctx.stats.add("writer_rows", n)
            else:
                c.execute("ROLLBACK")
                ctx.stats.add("writer_rollbacks")
        except psycopg.Error as e:
            if state == "indoubt" and not conn_broken(c):
                state = "aborted"       # COMMIT reported an error: it did not commit
            self.fail(e, t0, time.time(), self.armed)
        ctx.ledger[batch][1] = state
        self.stop.wait(self.rnd.uniform(0, ctx.args.writer_pause))


# ------------------------------------------------------------------ OLTP

def pgbench_cmd(args, seconds, logprefix=None):
    w = os.path.join(REPO, "bench", "pgbench")
    cmd = ["pgbench", "-n", "-M", "prepared", "-c", str(args.oltp_clients),
           "-j", str(args.oltp_threads), "-T", str(max(1, int(seconds))),
           "-D", "naccounts=%d" % (100000 * args.pgbench_scale), "-D", "hot_pct=5",
           "-f", w + "/hot.sql@80", "-f", w + "/uniform.sql@10",
           "-f", w + "/tellers.sql@5", "-f", w + "/branches.sql@5"]
    if logprefix:
        cmd += ["--log", "--log-prefix=" + logprefix]
    return cmd


def read_latencies(logprefix):
    """per-transaction latencies (ms) from pgbench --log files, removed after"""
    lat = []
    for f in glob.glob(logprefix + ".*"):
        with open(f) as fh:
            for line in fh:
                p = line.split()
                if len(p) >= 3 and p[2].isdigit():
                    lat.append(int(p[2]) / 1000.0)
        os.unlink(f)
    return lat


def pct(values, q):
    if not values:
        return float("nan")
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))]


ABORT_RE = re.compile(r"aborted in command|connection to server.*failed|"
                      r"could not connect|server closed the connection")


def _cpu_ticks(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            st = f.read()
        fields = st[st.rindex(")") + 2:].split()
        return int(fields[11]) + int(fields[12])      # utime + stime
    except (OSError, ValueError, IndexError):
        return None


def _pgbench_backends(ctx):
    try:
        with psycopg.connect(ctx.server.dsn(), autocommit=True, connect_timeout=5) as c:
            return [r[0] for r in c.execute("SELECT pid FROM pg_stat_activity "
                                            "WHERE application_name = 'pgbench'")]
    except psycopg.Error:
        return []


def run_pgbench(ctx, seconds, tmpdir, tag, cpu=False):
    """one pgbench run; returns dict(tps, tx, lat (list, ms), aborted, ...).
    cpu: also the CPU time its backends used (sampled from /proc every
    0.2 s until they exit), which the other tenants of a shared machine
    disturb far less than the TPS"""
    prefix = os.path.join(tmpdir, "pgbench_%s" % tag)
    t0 = time.time()
    proc = subprocess.Popen(pgbench_cmd(ctx.args, seconds, prefix), env=ctx.server.env(),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            cwd=tmpdir)
    ticks, pids = {}, []
    if cpu:
        time.sleep(min(1.0, seconds / 4))
        pids = _pgbench_backends(ctx)
        while proc.poll() is None:
            for pid in pids:
                v = _cpu_ticks(pid)
                if v is not None:
                    ticks[pid] = v
            time.sleep(0.2)
    out = proc.communicate()[0]
    t1 = time.time()
    rc = proc.returncode
    m = re.search(r"^tps = ([0-9.]+) \(without initial connection time\)", out, re.M)
    tx = re.search(r"^number of transactions actually processed: (\d+)", out, re.M)
    lat = read_latencies(prefix)
    aborted = [l for l in out.splitlines() if ABORT_RE.search(l)]
    if rc and not aborted:
        aborted = [l for l in out.splitlines() if "error" in l.lower()][:5] or \
            ["pgbench exited with %d" % rc]
    for line in aborted:
        st = conn_sqlstate(line)
        fault = classify(ctx.faults, st, t0, t1, ())
        ctx.stats.error("oltp", st, fault, line)
    ntx = int(tx.group(1)) if tx else len(lat)
    cpu_us = (sum(ticks.values()) * 1e6 / os.sysconf("SC_CLK_TCK") / ntx
              if cpu and ntx and len(ticks) == len(pids) == ctx.args.oltp_clients else None)
    return dict(tps=float(m.group(1)) if m else 0.0, tx=ntx, lat=lat, aborted=len(aborted),
                t0=t0, t1=t1, rc=rc, cpu_us_per_tx=cpu_us)


def oltp_soak(ctx, stop, until, tmpdir, results):
    """pgbench in runs of at most 20 s until `until` (a crash restart ends a
    run: the next one starts once the server is back)"""
    k = 0
    while not stop.is_set():
        left = until - time.time()
        if left < 2:
            break
        if ctx.faults.crash_active():
            stop.wait(0.5)
            continue
        k += 1
        results.append(run_pgbench(ctx, min(20, left), tmpdir, "soak%d" % k))
