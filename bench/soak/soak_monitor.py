"""Memory of every server process over time (the postmaster, its children,
pg_warp_gpud), the daemon's restarts, and the growth check.

Every --mem-interval seconds the sampler walks the postmaster's descendants
in /proc and records each process's VmRSS and RssAnon (private memory: what
leaks; VmRSS also counts the shared buffers a backend has touched).  Growth:
for each process alive at least --mem-min-life seconds of soak, the median
RssAnon of its last quarter minus that of its second quarter (the first
quarter is warm-up: caches filling to their limits); growth above
--mem-growth-mb and above half of the earlier figure is reported.
"""
import os
import statistics
import threading
import time

from soak_faults import gpud_pid


def _children_map():
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
            ppid = int(st[st.rindex(")") + 2:].split()[1])
            kids.setdefault(ppid, []).append(int(d))
        except (OSError, ValueError):
            pass
    return kids


def _descendants(root):
    kids = _children_map()
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def _proc_info(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            st = f.read()
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return None
    vals = {}
    for line in st.splitlines():
        k, _, v = line.partition(":")
        if k in ("Name", "VmRSS", "RssAnon"):
            vals[k] = v.strip()
    rss = int(vals.get("VmRSS", "0 kB").split()[0])
    anon = int(vals.get("RssAnon", "0 kB").split()[0])
    name = vals.get("Name", "?")
    if name.startswith("pg_warp_gpud") or "pg_warp_gpud" in cmd.split(" ")[0]:
        role = "gpud"
    elif cmd.startswith("postgres: "):
        title = cmd[len("postgres: "):]
        role = "backend" if "[local]" in title or "pg_warp_soak" in title else \
            title.split(" ")[0].rstrip(":")
    else:
        role = "postmaster" if name in ("postgres", "postmaster") else name
    return role, rss, anon, cmd[:80]


class Monitor(threading.Thread):
    def __init__(self, ctx, interval):
        super().__init__(name="monitor", daemon=True)
        self.ctx, self.interval = ctx, interval
        self.stop = threading.Event()
        self.samples = []           # (t, phase, pid, role, rss_kb, anon_kb, cmd)
        self.gpud_pids = []         # every distinct daemon pid seen, in order
        self.loads = []             # (phase, 1-minute load average of the machine)

    def run(self):
        while not self.stop.is_set():
            self.sample()
            self.stop.wait(self.interval)

    def sample(self):
        ctx = self.ctx
        pm = ctx.server.postmaster_pid()
        t = time.time() - ctx.stats.t0
        g = gpud_pid(ctx.server.data) if ctx.server.preloaded else None
        if g and (not self.gpud_pids or self.gpud_pids[-1] != g):
            self.gpud_pids.append(g)
        self.loads.append((ctx.phase, os.getloadavg()[0]))
        if not pm:
            return
        for pid in _descendants(pm):
            info = _proc_info(pid)
            if info:
                if pid == pm:
                    info = ("postmaster",) + info[1:]
                self.samples.append((round(t, 1), ctx.phase, pid) + info)

    def write_csv(self, path):
        with open(path, "w") as f:
            f.write("t_s,phase,pid,role,rss_kb,rss_anon_kb\n")
            for s in self.samples:
                f.write("%s,%s,%d,%s,%d,%d\n" % s[:6])

    def growth(self, min_life, limit_mb):
        """[(pid, role, life_s, early_mb, late_mb, grown)] for long-lived
        processes in soak phases"""
        series = {}
        for t, phase, pid, role, rss, anon, cmd in self.samples:
            if phase.startswith("soak"):
                series.setdefault((pid, role), []).append((t, anon))
        out = []
        for (pid, role), pts in series.items():
            if len(pts) < 8 or pts[-1][0] - pts[0][0] < min_life:
                continue
            q = len(pts) // 4
            early = statistics.median(a for _, a in pts[q:2 * q]) / 1024.0
            late = statistics.median(a for _, a in pts[-q:]) / 1024.0
            grown = late - early > limit_mb and late > 1.5 * early
            out.append((pid, role, round(pts[-1][0] - pts[0][0]), round(early, 1),
                        round(late, 1), grown))
        return out

    def load_summary(self):
        """{'measure'|'soak': {mean, max}} of the machine's load average"""
        out = {}
        for kind in ("measure", "soak"):
            v = [x for ph, x in self.loads if ph.startswith(kind)]
            if v:
                out[kind] = dict(mean=round(statistics.mean(v), 2), max=round(max(v), 2))
        return out

    def role_timeline(self):
        """{role: [(t, total rss_anon MB)]} summed per sample instant"""
        tl = {}
        for t, phase, pid, role, rss, anon, cmd in self.samples:
            tl.setdefault(role, {}).setdefault(t, 0)
            tl[role][t] += anon / 1024.0
        return {r: sorted(v.items()) for r, v in tl.items()}
