"""pg_warp_gpud: the daemon, its protocol and its failures.

The test cluster runs the daemon (scripts/test.sh starts it with
pg_warp.gpud_device = cpu, so CI exercises the daemon, the arena, cancel and
crash recovery without a GPU; on the GPU machine it drives the GPU).  Each
query runs with pg_warp.mode = gpu, i.e. on the daemon, and its answer is
compared with vanilla PostgreSQL's (pg_warp.enabled = off) over the same
data in a heap table filled from pyarrow's CSV.

Faults are injected with the developer GUC pg_warp.gpud_fault:
  crash       the daemon is killed (SIGKILL) after the job's first batch
  slow        the daemon sleeps 50 ms per batch (for cancellation)
  device_oom  the device driver reports out of memory (GPU daemons only)
"""
import os
import signal
import socket
import time

import psycopg
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.ipc as ipc
import pytest

from pwhelpers import gpud_status, pg_dsn

SCHEMA = "gpud_t"
NROWS = 200_000
BATCH = 5_000                   # 40 batches: a slow job takes 2 s

QUERY = ("SELECT d.name, count(*), sum(f.v), avg(f.x), min(f.v), max(f.x) "
         "FROM {f} f JOIN {s}.dim d ON f.k = d.k WHERE f.v % 7 <> 3 GROUP BY 1 ORDER BY 1")


@pytest.fixture(scope="module")
def star(db, scratch_module):
    st = gpud_status(db)
    if st is None:
        if os.environ.get("PGWARP_EXPECT_GPUD"):
            pytest.fail("pg_warp_gpud does not serve the test cluster (see the server log)")
        pytest.skip("no pg_warp_gpud serves this cluster")
    k = pa.array([(i * 7919) % 50 for i in range(NROWS)], pa.int32())
    v = pa.array([None if i % 97 == 0 else (i * 31) % 100_003 - 50_000 for i in range(NROWS)],
                 pa.int64())
    x = pa.array([None if i % 89 == 0 else ((i * 13) % 1000) / 8.0 for i in range(NROWS)],
                 pa.float64())
    table = pa.table({"k": k, "v": v, "x": x})
    path = os.path.join(scratch_module, "fact.arrow")
    with ipc.new_file(path, table.schema) as w:
        for b in table.to_batches(max_chunksize=BATCH):
            w.write_batch(b)
    csv = os.path.join(scratch_module, "fact.csv")
    pacsv.write_csv(table, csv)
    for p in (path, csv):
        os.chmod(p, 0o644)
    db.execute("CREATE EXTENSION IF NOT EXISTS pg_warp")
    db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % SCHEMA)
    db.execute("CREATE SCHEMA %s" % SCHEMA)
    db.execute("CREATE FOREIGN TABLE %s.fact (k int, v bigint, x float8) SERVER arrow_fdw "
               "OPTIONS (file '%s')" % (SCHEMA, path))
    db.execute("CREATE TABLE %s.fact_heap (k int, v bigint, x float8)" % SCHEMA)
    db.execute("COPY %s.fact_heap FROM '%s' WITH (FORMAT csv, HEADER true)" % (SCHEMA, csv))
    db.execute("CREATE TABLE %s.dim AS SELECT g AS k, 'name' || (g %% 9) AS name "
               "FROM generate_series(0, 45) g" % SCHEMA)
    for t in ("fact", "fact_heap", "dim"):
        db.execute("ANALYZE %s.%s" % (SCHEMA, t))
    yield db
    db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % SCHEMA)


@pytest.fixture(scope="module")
def scratch_module(tmp_path_factory):
    root = os.environ.get("PGWARP_TEST_DIR") or str(tmp_path_factory.mktemp("gpud"))
    d = os.path.join(root, "gpud_%d" % os.getpid())
    os.makedirs(d, exist_ok=True)
    os.chmod(d, 0o777)
    return d


def oracle(conn):
    conn.execute("SET pg_warp.enabled = off")
    rows = conn.execute(QUERY.format(f=SCHEMA + ".fact_heap", s=SCHEMA)).fetchall()
    conn.execute("RESET pg_warp.enabled")
    return rows


def on_daemon(conn, fault="none", analyze=False):
    """(rows, EXPLAIN ANALYZE text or None) of the query with mode gpu"""
    conn.execute("SET pg_warp.mode = gpu")
    conn.execute("SET pg_warp.gpud_fault = %s" % fault)
    try:
        sql = QUERY.format(f=SCHEMA + ".fact", s=SCHEMA)
        if analyze:
            text = "\n".join(r[0] for r in conn.execute("EXPLAIN (ANALYZE) " + sql).fetchall())
            return None, text
        return conn.execute(sql).fetchall(), None
    finally:
        conn.execute("RESET pg_warp.gpud_fault")
        conn.execute("RESET pg_warp.mode")


def close(a, b):
    """rows equal, the float average within rounding"""
    if len(a) != len(b):
        return False
    for ra, rb in zip(a, b):
        if ra[:3] != rb[:3] or ra[4:] != rb[4:]:
            return False
        if (ra[3] is None) != (rb[3] is None):
            return False
        if ra[3] is not None and abs(ra[3] - rb[3]) > 1e-9 * max(1.0, abs(rb[3])):
            return False
    return True


def wait_for_new_daemon(conn, old_pid, timeout=15):
    deadline = time.time() + timeout
    while time.time() < deadline:
        st = gpud_status(conn)
        if st and st[2] != old_pid:
            try:
                os.kill(st[2], 0)
            except PermissionError:
                pass
            except ProcessLookupError:
                time.sleep(0.1)
                continue
            return st
        time.sleep(0.1)
    pytest.fail("the supervisor did not restart pg_warp_gpud within %d s" % timeout)


def test_daemon_answers_match_postgres(star):
    rows, _ = on_daemon(star)
    assert len(rows) == 9
    assert close(rows, oracle(star))
    _, text = on_daemon(star, analyze=True)
    assert "(pg_warp_gpud)" in text, text
    assert "Ran On: " in text and "Fallback" not in text, text
    assert "Batches Read: 40" in text, text


def test_crash_mid_query_reruns_on_cpu_and_daemon_restarts(star):
    old = gpud_status(star)
    _, text = on_daemon(star, fault="crash", analyze=True)
    assert "Fallback: pg_warp_gpud died while running the query" in text, text
    assert "Ran On: CPU" in text, text
    rows, _ = on_daemon(star, fault="crash")       # the answer is still right
    assert close(rows, oracle(star))
    new = wait_for_new_daemon(star, old[2])
    assert new[0] == old[0]
    _, text = on_daemon(star, analyze=True)
    assert "Fallback" not in text, text


def test_cancel_stops_the_daemon_job_promptly(star):
    st = gpud_status(star)
    conn = psycopg.connect(pg_dsn(), autocommit=True)
    try:
        conn.execute("SET statement_timeout = '300ms'")
        t0 = time.time()
        with pytest.raises(psycopg.errors.QueryCanceled):
            on_daemon(conn, fault="slow")
        elapsed = time.time() - t0
    finally:
        conn.close()
    # the slow job would take 2 s; cancel must not wait for it
    assert elapsed < 1.5, "cancel took %.2f s" % elapsed
    assert gpud_status(star)[2] == st[2], "the daemon restarted after a cancel"
    rows, _ = on_daemon(star)
    assert close(rows, oracle(star))


def test_kill_idle_daemon_is_restarted(star):
    st = gpud_status(star)
    try:
        os.kill(st[2], signal.SIGKILL)
    except PermissionError:
        pytest.skip("the test user cannot signal the server's processes")
    # meanwhile queries still get right answers (not offloaded, or CPU fallback)
    rows, _ = on_daemon(star)
    assert close(rows, oracle(star))
    wait_for_new_daemon(star, st[2])
    _, text = on_daemon(star, analyze=True)
    assert "(pg_warp_gpud)" in text and "Fallback" not in text, text


def test_killed_daemons_status_file_goes_with_it(star):
    """The supervisor removes the status file of a daemon that died without
    SIGTERM, so nothing takes a dead daemon's file for a serving one; the
    next daemon writes it again once ready."""
    st = gpud_status(star)
    try:
        os.kill(st[2], signal.SIGKILL)
    except PermissionError:
        pytest.skip("the test user cannot signal the server's processes")
    seen = []
    deadline = time.time() + 10
    while time.time() < deadline:
        raw = star.execute(
            "SELECT pg_read_file('pg_warp_gpud.status', 0, 256, true)").fetchone()[0]
        pid = int(raw.strip().split("\t")[3]) if raw else None
        if not seen or seen[-1] != pid:
            seen.append(pid)
        if pid not in (None, st[2]):
            break
        time.sleep(0.005)
    # the dead daemon's file (maybe), then none (the restart waits at least
    # 100 ms), then the new daemon's
    assert None in seen, seen
    assert seen[-1] not in (None, st[2]), seen
    assert seen.index(None) > (seen.index(st[2]) if st[2] in seen else -1), seen
    wait_for_new_daemon(star, st[2])


def test_other_users_are_refused(star):
    datadir = star.execute("SHOW data_directory").fetchone()[0]
    path = os.path.join(datadir, "pg_warp_gpud.sock")
    try:
        owner = os.stat(path).st_uid
    except PermissionError:
        pytest.skip("cannot see the data directory")
    if owner == os.geteuid():
        pytest.skip("the test runs as the server's user")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    try:
        s.connect(path)
    except PermissionError:
        return                  # the socket's mode (0600) already refuses us
    assert s.recv(128) == b"", "pg_warp_gpud talked to a peer of another user"
    s.close()


def test_device_oom_falls_back_to_cpu(star):
    if gpud_status(star)[0] != "gpu":
        pytest.skip("the daemon drives no GPU here")
    _, text = on_daemon(star, fault="device_oom", analyze=True)
    assert "Fallback: device out of memory" in text, text
    rows, _ = on_daemon(star, fault="device_oom")
    assert close(rows, oracle(star))


def test_supervisor_passes_the_daemon_settings(star):
    """pg_warp.gpu_lanes, pg_warp.gpu_cache_memory,
    pg_warp.max_registered_memory and pg_warp.gpud_split_gpus reach the
    daemon's command line."""
    st = gpud_status(star)
    try:
        with open("/proc/%d/cmdline" % st[2], "rb") as f:
            args = f.read().decode().split("\0")
    except (FileNotFoundError, PermissionError):
        pytest.skip("the daemon's command line cannot be read here")
    want = {
        "--lanes-per-gpu": star.execute("SHOW pg_warp.gpu_lanes").fetchone()[0],
        "--split-gpus": star.execute("SHOW pg_warp.gpud_split_gpus").fetchone()[0],
        "--cache-mb": str(star.execute(
            "SELECT setting FROM pg_settings WHERE name = 'pg_warp.gpu_cache_memory'").fetchone()[0]),
        "--max-registered-mb": str(star.execute(
            "SELECT setting FROM pg_settings WHERE name = 'pg_warp.max_registered_memory'"
        ).fetchone()[0]),
    }
    got = dict(a.split("=", 1) for a in args if a.startswith("--") and "=" in a)
    for opt, val in want.items():
        assert got.get(opt) == val, (opt, args)


def test_settings_report_the_budgets_in_effect(star):
    """pg_warp_gpud_settings() gives the daemon's device and the budgets it
    uses: for automatic settings (-1) sized from the machine
    (gpud_sizing.h), an explicit registration budget held to half of
    physical memory; a CPU daemon has none."""
    st = gpud_status(star)
    rows = star.execute("SELECT device, gpus, name, lanes_per_gpu, max_registered_memory_mb, "
                        "gpu_cache_memory_mb, staging_memory_mb "
                        "FROM pg_warp_gpud_settings()").fetchall()
    assert len(rows) == 1, rows
    dev, gpus, name, lanes, reg, cache, staging = rows[0]
    assert (dev, name) == (st[0], st[1])
    if dev == "cpu":
        assert (gpus, lanes, reg, cache, staging) == (0, 0, 0, 0, 0)
        return
    with open("/proc/meminfo") as f:
        phys_mb = int(f.readline().split()[1]) // 1024
    setting = int(star.execute("SELECT setting FROM pg_settings "
                               "WHERE name = 'pg_warp.max_registered_memory'").fetchone()[0])
    if setting < 0:
        assert abs(reg - phys_mb // 4) <= 1, (reg, phys_mb)
    else:
        assert reg == min(setting, phys_mb // 2)
    assert gpus >= 1 and lanes == int(star.execute("SHOW pg_warp.gpu_lanes").fetchone()[0])
    cache_setting = int(star.execute("SELECT setting FROM pg_settings "
                                     "WHERE name = 'pg_warp.gpu_cache_memory'").fetchone()[0])
    if cache_setting == 0:
        assert cache == 0
    elif cache_setting > 0:
        assert 0 < cache <= cache_setting
    assert 64 <= staging <= 512


def test_explain_analyze_breaks_down_the_hand_off(star):
    """EXPLAIN ANALYZE of a daemon query says where the fixed cost went:
    connecting, writing the job, waiting (which holds the daemon's own time,
    of it its set-up), taking the result."""
    import re
    _, text = on_daemon(star, analyze=True)
    m = re.search(r"Hand-off: connect ([\d.]+), job ([\d.]+), wait ([\d.]+) "
                  r"\(daemon ([\d.]+), of it set-up ([\d.]+)\), result ([\d.]+) ms", text)
    assert m, text
    connect, job, wait, daemon, setup, result = (float(x) for x in m.groups())
    assert min(connect, job, wait, daemon, setup, result) >= 0
    assert setup <= daemon + 1e-3
    # the backend waits at least as long as the daemon works (other clock)
    assert wait + 0.05 >= daemon, (wait, daemon)
    scan = float(re.search(r"Scan Time: ([\d.]+) ms", text).group(1))
    assert connect + job + wait + result <= scan + 0.05, text


CHOICE_QUERY = ("SELECT d.name, count(*), sum(f.v) FROM {s}.fact f JOIN {s}.dim d ON f.k = d.k "
                "GROUP BY 1")


def fake_gpu_status(conn, cache_mb, registered_mb):
    """make the planner believe the running daemon drives a GPU with these
    budgets (the status file it reads, rewritten); returns the original"""
    datadir = conn.execute("SHOW data_directory").fetchone()[0]
    path = os.path.join(datadir, "pg_warp_gpud.status")
    orig = conn.execute("SELECT pg_read_file('pg_warp_gpud.status')").fetchone()[0]
    pid = orig.split("\t")[3].strip()
    line = "gpu\t1\tFake GPU\t%s\t%d\t%d\t512\t2" % (pid, registered_mb, cache_mb)
    conn.execute("COPY (SELECT %s) TO %s WITH (FORMAT csv)" % (
        psycopg.sql.quote(line), psycopg.sql.quote(path)))
    return path, orig


def test_planner_says_when_the_cpu_driver_wins(star):
    """pg_warp.mode = auto with a GPU daemon: fact columns that fit the
    GPU column cache go to the GPU; columns that exceed it, when pread over
    the link is slower than the CPU driver's threads, stay on the CPU
    driver; EXPLAIN says which and why, and mode gpu keeps the GPU."""
    import psycopg.sql  # noqa: F401
    sql = "EXPLAIN " + CHOICE_QUERY.format(s=SCHEMA)
    path, orig = fake_gpu_status(star, cache_mb=4096, registered_mb=1024)
    try:
        text = "\n".join(r[0] for r in star.execute(sql).fetchall())
        assert "Engine: GPU (pg_warp_gpud)" in text, text
        assert "Device Choice: GPU: 0.0 GB of fact columns fit the GPU column cache (4.3 GB)" \
            in text, text
        # no cache, nothing registered, 64 threads: the link loses
        fake_gpu_status(star, cache_mb=0, registered_mb=0)
        star.execute("SET pg_warp.cpu_threads = 64")
        text = "\n".join(r[0] for r in star.execute(sql).fetchall())
        assert "Engine: CPU" in text, text
        assert "Device Choice: CPU: 0.0 GB of fact columns exceed the GPU column cache " \
            "(0.0 GB); over the link about 1 ms, on 64 CPU threads about 0 ms" in text, text
        star.execute("SET pg_warp.mode = gpu")
        text = "\n".join(r[0] for r in star.execute(sql).fetchall())
        assert "Engine: GPU (pg_warp_gpud)" in text, text
        assert "Device Choice: GPU (pg_warp.mode = gpu): " in text, text
        # one thread: the GPU, link or not
        star.execute("SET pg_warp.mode = auto")
        star.execute("SET pg_warp.cpu_threads = 1")
        text = "\n".join(r[0] for r in star.execute(sql).fetchall())
        assert "Engine: GPU (pg_warp_gpud)" in text, text
    finally:
        star.execute("COPY (SELECT %s) TO %s WITH (FORMAT csv)" % (
            psycopg.sql.quote(orig.rstrip("\n")), psycopg.sql.quote(path)))
        star.execute("RESET pg_warp.cpu_threads")
        star.execute("RESET pg_warp.mode")
    assert gpud_status(star) is not None


# compressed fact files: the daemon loads a part's batches ahead on helper
# threads (gpud_prefetch.c); answers and errors must be a serial read's

MAGIC = {"lz4": bytes.fromhex("04224d18"), "zstd": bytes.fromhex("28b52ffd")}


def compressed_copy(star, scratch, codec, name):
    """fact's rows in a file with `codec` bodies, and a foreign table on it"""
    src = ipc.open_file(os.path.join(scratch, "fact.arrow"))
    path = os.path.join(scratch, "%s.arrow" % name)
    opts = ipc.IpcWriteOptions(compression=codec)
    with ipc.new_file(path, src.schema, options=opts) as w:
        for i in range(src.num_record_batches):
            w.write_batch(src.get_batch(i))
    os.chmod(path, 0o644)
    star.execute("DROP FOREIGN TABLE IF EXISTS %s.%s" % (SCHEMA, name))
    star.execute("CREATE FOREIGN TABLE %s.%s (k int, v bigint, x float8) SERVER arrow_fdw "
                 "OPTIONS (file '%s')" % (SCHEMA, name, path))
    star.execute("ANALYZE %s.%s" % (SCHEMA, name))
    return path


def query_on(conn, table, mode):
    conn.execute("SET pg_warp.mode = %s" % mode)
    try:
        sql = QUERY.format(f="%s.%s" % (SCHEMA, table), s=SCHEMA)
        plan = "\n".join(r[0] for r in conn.execute("EXPLAIN (ANALYZE) " + sql).fetchall())
        return conn.execute(sql).fetchall(), plan
    finally:
        conn.execute("RESET pg_warp.mode")


@pytest.mark.parametrize("codec", ["lz4", "zstd"])
def test_compressed_files_on_the_daemon(star, scratch_module, codec):
    compressed_copy(star, scratch_module, codec, "fact_" + codec)
    rows, plan = query_on(star, "fact_" + codec, "gpu")
    assert "pg_warp_gpud" in plan or "Ran On: GPU" in plan, plan
    assert "Fallback" not in plan, plan
    # 40 batches: all but what the single-batch parts take loaded ahead
    assert "Batches Loaded Ahead: " in plan, plan
    assert close(rows, oracle(star))
    _, plain = query_on(star, "fact", "gpu")
    assert "Batches Loaded Ahead" not in plain, plain


@pytest.mark.parametrize("codec", ["lz4", "zstd"])
def test_compressed_bad_batches_fail_in_scan_order(star, scratch_module, codec):
    """Two batches' frames are damaged: the daemon, which loads batches
    ahead on several threads, reports the earlier one, with the message
    the engine in the backend gives (a serial read)."""
    name = "fact_bad_" + codec
    path = compressed_copy(star, scratch_module, codec, name)
    blocks = star.execute("SELECT batch, \"offset\", body_bytes FROM pg_warp_arrow_batches(%s) "
                          "ORDER BY batch", (path,)).fetchall()
    data = bytearray(open(path, "rb").read())
    damaged = []
    for bi in (11, 27):
        # the body ends where the next block begins
        end = blocks[bi + 1][1]
        start = end - blocks[bi][2]
        at = data.find(MAGIC[codec], start, end)
        assert at >= 0, (bi, start, end)
        data[at:at + 4] = b"\0\0\0\0"
        damaged.append(at)
    with open(path, "wb") as f:
        f.write(data)
    errors = {}
    for mode in ("cpu", "gpu"):
        with pytest.raises(psycopg.Error) as ei:
            query_on(star, name, mode)
        errors[mode] = ei.value
        star.rollback() if star.info.transaction_status != 0 else None
    assert errors["gpu"].sqlstate == errors["cpu"].sqlstate, (errors["gpu"], errors["cpu"])
    assert str(errors["gpu"]) == str(errors["cpu"]), (str(errors["gpu"]), str(errors["cpu"]))
    # the earlier batch's buffer is the one named
    msg = str(errors["gpu"])
    assert "offset %d" % (damaged[0] - 8) in msg, (msg, damaged)
