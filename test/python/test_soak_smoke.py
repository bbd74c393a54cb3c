"""The soak harness (bench/soak/run.sh, docs/soak.md) at CI size: about
40 s of mixed OLTP and checked analytics on its own throwaway cluster, with
every fault of the rotation injected, including a kill -9 of a backend (a
cluster crash restart).  It must report no wrong answer, no unexpected
error and no lost row, and its last line must keep the documented format."""
import json
import os
import re
import subprocess
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
FINAL = re.compile(r"^soak: (\d+) queries, (\d+) wrong answers, (\d+) unexpected errors, "
                   r"(\d+) lost rows, OLTP TPS ratio (\d+\.\d+|n/a)$")


def test_soak_smoke(tmp_path):
    out = str(tmp_path / "soak")
    port = int(os.environ.get("PGWARP_TEST_PORT", "54329")) + 1
    cmd = [os.path.join(REPO, "bench", "soak", "run.sh"), "--minutes", "0.65",
           "--sf", "0.005", "--pgbench-scale", "1", "--oltp-clients", "4", "--olap-clients", "3",
           "--writers", "2", "--dim-writers", "1", "--measure-seconds", "4",
           "--warmup-seconds", "1", "--fault-interval", "0.7", "--crash-interval", "12",
           "--gpud-device", "cpu", "--port", str(port), "--out", out]
    t0 = time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=240)
    took = time.time() - t0
    lines = p.stdout.strip().splitlines()
    assert lines, p.stdout
    m = FINAL.match(lines[-1])
    assert m, "last line not in the documented format:\n" + p.stdout[-3000:]
    q, wrong, unexpected, lost = (int(m.group(i)) for i in range(1, 5))
    summary = json.load(open(os.path.join(out, "summary.json")))
    detail = "\n".join(p.stdout.splitlines()[-15:]) + "\n" + \
        open(os.path.join(out, "summary.md")).read()[-4000:]
    assert wrong == 0, detail + open(os.path.join(out, "wrong.txt")).read()[:3000]
    assert unexpected == 0, detail
    assert lost == 0 and summary["phantom_rows"] == 0, detail
    assert q >= 50, detail
    assert p.returncode == 0, detail
    # the harness did what it says: comparison windows, faults, a restart
    assert m.group(5) != "n/a"
    assert summary["crash_restarts"] >= 1, detail
    assert summary["gpud_restarts"] >= 1, detail
    assert summary["counters"].get("writer_commits", 0) > 0, detail
    for kind in ("gpud_kill", "timeout", "replace", "truncate", "mempressure"):
        assert summary["faults"].get(kind, 0) >= 1, (kind, summary["faults"])
    assert took < 150, "the smoke soak took %.0f s" % took
