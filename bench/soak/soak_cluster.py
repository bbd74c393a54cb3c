"""The soak's database: a throwaway PostgreSQL 15 cluster it starts itself
(restarted with and without pg_warp in shared_preload_libraries for the OLTP
comparison), or an existing server given by --dsn; and the data it runs on.

Data (database pg_warp_soak, created afresh):
  * SSB at --sf: heap lineorder (the oracle's fact table) and heap customer,
    supplier, part, date (written by the dimension writers), lineorder_arrow
    (Arrow, never changed), lineorder_swap (Arrow, its file replaced by
    rename with the same rows in another order), lineorder_trunc (Arrow, its
    file truncated in place and restored), all with small record batches so
    that a scan spans many of them;
  * w_arrow, a writable Arrow table, and w_heap, its heap mirror: each writer
    transaction inserts the same rows into both;
  * pgbench's tables (pgbench -i -s --pgbench-scale) for the OLTP clients.
"""
import os
import shutil
import subprocess
import tempfile
import time

import psycopg
import psycopg.conninfo

DBNAME = "pg_warp_soak"
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _as_server(cmd):
    """PostgreSQL refuses to run as root: run the server as `postgres` then."""
    if os.getuid() == 0:
        return ["runuser", "-u", "postgres", "--"] + cmd
    return cmd


def pg_bindir():
    return subprocess.run(["pg_config", "--bindir"], check=True, stdout=subprocess.PIPE,
                          text=True).stdout.strip()


def postmaster_pid(datadir):
    try:
        with open(os.path.join(datadir, "postmaster.pid")) as f:
            return int(f.readline())
    except (OSError, ValueError):
        return None


def pgwarp_bin():
    b = os.environ.get("PGWARP_BIN") or os.path.join(REPO, "build", "pgwarp")
    if os.path.exists(b):
        return b
    return shutil.which("pgwarp") or b


class Cluster:
    """A private cluster under a temporary directory, on a private socket
    directory (no TCP), so the port number only names the socket."""

    def __init__(self, port, gpud_device, shared_buffers, max_connections, fsync):
        self.port = port
        self.gpud_device = gpud_device
        self.root = tempfile.mkdtemp(prefix="pg_warp_soak.")
        os.chmod(self.root, 0o755)
        self.data = os.path.join(self.root, "data")
        self.sock = os.path.join(self.root, "sock")
        self.files = os.path.join(self.root, "files")
        self.log = os.path.join(self.root, "postgres.log")
        for d in (self.data, self.sock, self.files):
            os.makedirs(d)
        os.chmod(self.files, 0o1777)
        os.chmod(self.data, 0o700)
        if os.getuid() == 0:
            shutil.chown(self.data, "postgres")
            shutil.chown(self.sock, "postgres")
        open(self.log, "w").close()
        os.chmod(self.log, 0o666)
        self.bindir = pg_bindir()
        self.base_opts = ("-p %d -k %s -c listen_addresses='' -c fsync=%s "
                          "-c shared_buffers=%s -c max_connections=%d "
                          "-c max_prepared_transactions=8 -c restart_after_crash=on"
                          % (port, self.sock, "on" if fsync else "off", shared_buffers,
                             max_connections))
        self.preloaded = None
        self.own = True

    def dsn(self, db=DBNAME):
        return "host=%s port=%d user=postgres dbname=%s" % (self.sock, self.port, db)

    def env(self):
        e = dict(os.environ)
        e.update(PGHOST=self.sock, PGPORT=str(self.port), PGUSER="postgres", PGDATABASE=DBNAME)
        return e

    def initdb(self):
        r = subprocess.run(_as_server([os.path.join(self.bindir, "initdb"), "-D", self.data,
                                       "-A", "trust", "-U", "postgres", "-E", "UTF8",
                                       "--locale=C.UTF-8", "--no-sync"]),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode:
            raise RuntimeError("initdb failed:\n" + r.stdout)

    def _opts(self, preload):
        if not preload:
            return self.base_opts
        return self.base_opts + (" -c shared_preload_libraries=pg_warp"
                                 " -c pg_warp.gpud_device=%s" % self.gpud_device)

    def _ctl(self, action, preload=None):
        cmd = [os.path.join(self.bindir, "pg_ctl"), "-D", self.data, "-w", "-t", "120"]
        if action in ("start", "restart"):
            cmd += ["-o", self._opts(preload), "-l", self.log]
        if action == "stop":
            cmd += ["-m", "fast"]
        r = subprocess.run(_as_server(cmd + [action]), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if r.returncode:
            raise RuntimeError("pg_ctl %s failed:\n%s\n%s" % (action, r.stdout, self.log_tail()))

    def start(self, preload):
        self._ctl("start", preload)
        self.preloaded = preload

    def restart(self, preload):
        self._ctl("restart", preload)
        self.preloaded = preload
        wait_for_server(self.dsn("postgres"), 120)

    def stop(self, keep=False):
        try:
            subprocess.run(_as_server([os.path.join(self.bindir, "pg_ctl"), "-D", self.data,
                                       "-m", "immediate", "-w", "stop"]),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        finally:
            if not keep:
                shutil.rmtree(self.root, ignore_errors=True)

    def log_tail(self, n=40):
        try:
            with open(self.log) as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""

    def postmaster_pid(self):
        return postmaster_pid(self.data)


class ExistingServer:
    """--dsn: a server on this machine that the soak does not restart (no
    comparison without pg_warp); --workdir must be readable by its user."""

    def __init__(self, dsn, workdir):
        self.base = dsn
        self.own = False
        self.preloaded = True
        self.files = workdir
        os.makedirs(workdir, exist_ok=True)
        os.chmod(workdir, 0o1777)
        with psycopg.connect(dsn, autocommit=True) as c:
            self.data = c.execute("SHOW data_directory").fetchone()[0]
        self.log = None

    def dsn(self, db=DBNAME):
        return psycopg.conninfo.make_conninfo(self.base, dbname=db)

    def env(self):
        e = dict(os.environ)
        info = psycopg.conninfo.conninfo_to_dict(self.dsn())
        for k, v in (("host", "PGHOST"), ("port", "PGPORT"), ("user", "PGUSER"),
                     ("dbname", "PGDATABASE"), ("password", "PGPASSWORD")):
            if k in info:
                e[v] = str(info[k])
        return e

    def postmaster_pid(self):
        return postmaster_pid(self.data)

    def log_tail(self, n=40):
        return ""

    def stop(self, keep=False):
        pass


def wait_for_server(dsn, timeout):
    """Waits until `dsn` accepts a connection and answers a query (after a
    start or a crash restart); returns the seconds it took."""
    t0 = time.time()
    last = None
    while time.time() - t0 < timeout:
        try:
            with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as c:
                c.execute("SELECT 1").fetchone()
                return time.time() - t0
        except psycopg.Error as e:
            last = e
            time.sleep(0.2)
    raise RuntimeError("server did not come back within %d s: %s" % (timeout, last))


def _run(cmd, env=None, cwd=None):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       env=env, cwd=cwd)
    if r.returncode:
        raise RuntimeError("%s failed:\n%s" % (" ".join(cmd), r.stdout[-3000:]))
    return r.stdout


def _ql(s):
    return "'" + s.replace("'", "''") + "'"


class Files:
    """Paths of the Arrow files the file faults work on."""

    def __init__(self, root):
        self.root = root
        self.ssb = os.path.join(root, "ssb")
        self.swap_dir = os.path.join(root, "swap")
        self.swap = os.path.join(self.swap_dir, "lineorder_swap.arrow")
        self.swap_variants = [os.path.join(self.swap_dir, "variant_a.bin"),
                              os.path.join(self.swap_dir, "variant_b.bin")]
        self.trunc_dir = os.path.join(root, "trunc")
        self.trunc = os.path.join(self.trunc_dir, "lineorder_trunc.arrow")
        self.trunc_orig = os.path.join(self.trunc_dir, "original.bin")
        self.writable = os.path.join(root, "writable", "w.arrow")


def replace_file(src, dst):
    """Copies src next to dst and renames it over dst (atomic replace)."""
    tmp = dst + ".tmp"
    shutil.copyfile(src, tmp)
    os.chmod(tmp, 0o644)
    os.rename(tmp, dst)


def setup_data(server, sf, batch_rows, pgbench_scale, log):
    """Creates the database and loads everything (see the module doc)."""
    files = Files(os.path.join(server.files, "soak_data"))
    shutil.rmtree(files.root, ignore_errors=True)
    for d in (files.root, files.ssb, files.swap_dir, files.trunc_dir,
              os.path.dirname(files.writable)):
        os.makedirs(d)
        os.chmod(d, 0o777)
    with psycopg.connect(server.dsn("postgres"), autocommit=True) as c:
        c.execute("DROP DATABASE IF EXISTS %s WITH (FORCE)" % DBNAME)
        c.execute("CREATE DATABASE %s" % DBNAME)
    pw = pgwarp_bin()
    gen = [pw, "ssb", "gen", "--sf", str(sf), "--quiet", "--batch-rows", str(batch_rows)]
    log("generating SSB sf=%s (batches of %d rows)" % (sf, batch_rows))
    _run(gen + ["--format", "arrow", "--out", files.ssb])
    _run(gen + ["--format", "tbl", "--out", files.ssb])
    bydate = os.path.join(files.root, "bydate")
    _run(gen + ["--format", "arrow", "--cluster-by-date", "--out", bydate])
    for f in os.listdir(files.ssb):
        os.chmod(os.path.join(files.ssb, f), 0o644)
    with psycopg.connect(server.dsn(), autocommit=True) as c:
        c.execute("CREATE EXTENSION IF NOT EXISTS pg_warp")
    log("loading SSB")
    _run([pw, "ssb", "load", "-d", server.dsn(), "--from", files.ssb, "--quiet"])
    shutil.copyfile(os.path.join(files.ssb, "lineorder.arrow"), files.swap_variants[0])
    shutil.copyfile(os.path.join(bydate, "lineorder.arrow"), files.swap_variants[1])
    shutil.rmtree(bydate, ignore_errors=True)
    replace_file(files.swap_variants[0], files.swap)
    shutil.copyfile(os.path.join(files.ssb, "lineorder.arrow"), files.trunc_orig)
    replace_file(files.trunc_orig, files.trunc)
    for f in files.swap_variants + [files.trunc_orig]:
        os.chmod(f, 0o644)
    with psycopg.connect(server.dsn(), autocommit=True) as c:
        for name, path in (("lineorder_swap", files.swap), ("lineorder_trunc", files.trunc)):
            c.execute("IMPORT FOREIGN SCHEMA %s FROM SERVER arrow_fdw INTO public "
                      "OPTIONS (file %s)" % (name, _ql(path)))
        c.execute("CREATE FOREIGN TABLE w_arrow (batch bigint, i int, v bigint, k int) "
                  "SERVER arrow_fdw OPTIONS (file %s, writable 'true')" % _ql(files.writable))
        c.execute("CREATE TABLE w_heap (batch bigint, i int, v bigint, k int)")
        # the writers' ledger lives outside the database (it must survive crashes)
        for t in ("lineorder_swap", "lineorder_trunc", "w_arrow", "w_heap"):
            c.execute("ANALYZE %s" % t)
    log("pgbench -i -s %d" % pgbench_scale)
    _run(["pgbench", "-i", "-q", "-s", str(pgbench_scale), DBNAME], env=server.env())
    with psycopg.connect(server.dsn(), autocommit=True) as c:
        c.execute("VACUUM ANALYZE")
    return files
