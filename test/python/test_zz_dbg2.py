import test_gpu_table_cache_random as R
from test_gpu_table_cache_random import table  # noqa
import os, signal, time
def test_dbg(table):
    stats = {"rounds": 0, "mismatches": 0, "used": 0, "explained": 0}
    errors = []
    ctl = R.connect()
    def kill_daemon(conns):
        st = R.gpud_status(ctl)
        os.kill(st[2], signal.SIGKILL)
        stats["killed_at"] = stats["rounds"]
    R.run_phase(14, 3, 2, stats, errors, mid=kill_daemon, seed0=1)
    print(stats)
    print(errors[:2])
    assert not errors
