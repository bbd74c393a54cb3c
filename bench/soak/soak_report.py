"""The soak's results: summary.md (for people), summary.json, errors.csv
(every error with its attribution), memory.csv (every sample), wrong.txt
(every wrong answer), and the final line."""
import json
import math
import os
import platform
import statistics
import subprocess


def _machine():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2 ** 30
    gpu = ""
    try:
        gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                             timeout=10).stdout.strip().replace("\n", ", ")
    except (OSError, subprocess.SubprocessError):
        pass
    return "%s, %d CPUs, %.0f GiB%s" % (cpu, os.cpu_count() or 0, mem,
                                         (", GPU " + gpu) if gpu else ", no GPU")


def _mean(xs):
    xs = [x for x in xs if x is not None and not math.isnan(x)]
    return statistics.mean(xs) if xs else float("nan")


# two-sided 95 % quantiles of Student's t, by degrees of freedom
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
        2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
        2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def t975(df):
    return T975[df - 1] if df <= len(T975) else 1.96 + 2.4 / df


def paired_ratio(windows, key, num="warp", den="plain"):
    """warp/plain for `key` from paired windows: per pair the ratio of the
    two windows run back to back, then the geometric mean of the pairs'
    ratios with its 95 % confidence interval (Student's t on the log
    ratios: a pair's ratio is what the noise of the machine, which moves
    both windows of a pair alike, disturbs least)."""
    by_pair = {}
    for w in windows:
        v = w.get(key)
        if v is not None and not math.isnan(v) and v > 0:
            by_pair.setdefault(w.get("pair", w["round"]), {})[w["cfg"]] = v
    logs = [math.log(d[num] / d[den]) for _, d in sorted(by_pair.items())
            if num in d and den in d]
    out = dict(n=len(logs), per_pair=[round(math.exp(x), 3) for x in logs],
               ratio=None, lo=None, hi=None)
    if logs:
        m = statistics.mean(logs)
        out["ratio"] = math.exp(m)
        if len(logs) > 1:
            h = t975(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
            out["lo"], out["hi"] = math.exp(m - h), math.exp(m + h)
    return out


def verdict(pr, bound, higher_is_better):
    """'met', 'missed' or 'not resolved' for a target on a paired ratio:
    met only when the whole confidence interval is on the right side."""
    if pr["lo"] is None:
        return "not resolved (fewer than 2 pairs)"
    if higher_is_better:
        return "met" if pr["lo"] >= bound else "missed" if pr["hi"] < bound else \
            "not resolved (the interval contains %.2f)" % bound
    return "met" if pr["hi"] <= bound else "missed" if pr["lo"] > bound else \
        "not resolved (the interval contains %.2f)" % bound


def oltp_summary(windows):
    out = {}
    for cfg in ("plain", "loaded", "warp"):
        w = [x for x in windows if x["cfg"] == cfg]
        out[cfg] = dict(n=len(w), tps=_mean([x["tps"] for x in w]),
                        p50=_mean([x["p50"] for x in w]), p99=_mean([x["p99"] for x in w]),
                        cpu=_mean([x.get("cpu_us_per_tx") for x in w]),
                        runs=[round(x["tps"], 1) for x in w])
    tps, p99, cpu = (paired_ratio(windows, k) for k in ("tps", "p99", "cpu_us_per_tx"))
    out["tps_paired"], out["p99_paired"], out["cpu_paired"] = tps, p99, cpu
    out["ratio"], out["p99_ratio"], out["cpu_ratio"] = tps["ratio"], p99["ratio"], cpu["ratio"]
    if out["loaded"]["n"]:
        # the hooks alone, and the analytic work through pg_warp alone
        out["loaded_tps_paired"] = paired_ratio(windows, "tps", "loaded", "plain")
        out["loaded_cpu_paired"] = paired_ratio(windows, "cpu_us_per_tx", "loaded", "plain")
        out["warp_vs_loaded_tps_paired"] = paired_ratio(windows, "tps", "warp", "loaded")
    out["tps_target"] = verdict(tps, 0.99, True)
    out["p99_target"] = verdict(p99, 1.10, False)
    loads = [x["load1"] for x in windows if x.get("load1") is not None]
    out["load1"] = dict(mean=_mean(loads), max=max(loads) if loads else None)
    return out


def write_report(ctx, mon, out, argv, started, duration, windows, soak_oltp, log_tail):
    os.makedirs(out, exist_ok=True)
    s, f, a = ctx.stats, ctx.faults, ctx.args
    unexpected = s.unexpected()
    wrong = len(s.wrong)
    queries = s.c["queries"]
    oltp = oltp_summary(windows)
    growth = mon.growth(a.mem_min_life, a.mem_growth_mb) if mon else []
    grown = [g for g in growth if g[5]]
    ratio = oltp["ratio"]
    final_line = "soak: %d queries, %d wrong answers, %d unexpected errors, %d lost rows, " \
                 "OLTP TPS ratio %s" % (queries, wrong, unexpected, ctx.lost_rows,
                                        "%.3f" % ratio if ratio is not None else "n/a")
    ok = wrong == 0 and unexpected == 0 and ctx.lost_rows == 0 and ctx.phantom_rows == 0 \
        and not grown and queries > 0
    soak_tx = sum(r["tx"] for r in soak_oltp)
    soak_time = sum(r["t1"] - r["t0"] for r in soak_oltp)
    gpud_restarts = max(0, len(mon.gpud_pids) - 1) if mon else 0
    rs = sorted(f.gpud_restart_s)
    gpud = dict(kills=f.counts.get("gpud_kill", 0), restarted=len(rs),
                not_restarted=f.gpud_not_restarted,
                restart_s_median=round(statistics.median(rs), 2) if rs else None,
                restart_s_max=round(rs[-1], 2) if rs else None,
                pids_seen=len(mon.gpud_pids) if mon else 0)
    errors = sorted(([role, st, fault, n, s.examples[(role, st, fault)]]
                     for (role, st, fault), n in s.errors.items()), key=lambda e: (e[2] != "UNEXPECTED", e[2], -e[3]))
    summary = dict(final_line=final_line, pass_=ok, started_utc=started.isoformat() + "Z",
                   duration_s=round(duration, 1), command="bench/soak/run.sh " + " ".join(argv),
                   machine=_machine(), host=platform.node(), args=vars(a), counters=dict(s.c),
                   wrong_answers=wrong, unexpected_errors=unexpected, lost_rows=ctx.lost_rows,
                   phantom_rows=ctx.phantom_rows, faults=dict(f.counts),
                   crash_restarts=f.crash_restarts,
                   recovery_s=[round(x, 2) for x in f.recovery_s], gpud_restarts=gpud_restarts,
                   gpud=gpud, load1=mon.load_summary() if mon else None,
                   gpud_pids_seen=len(mon.gpud_pids) if mon else 0,
                   errors=errors, oltp=oltp, oltp_windows=windows,
                   soak_oltp_tps=soak_tx / soak_time if soak_time else None,
                   writable_checks=ctx.checks, memory_growth=growth, notes=f.notes)
    summary["pass"] = ok
    with open(os.path.join(out, "summary.json"), "w") as fh:
        json.dump(summary, fh, indent=1, default=str)
    with open(os.path.join(out, "errors.csv"), "w") as fh:
        fh.write("t_s,role,sqlstate,fault,message\n")
        for t, role, st, fault, msg in s.error_log:
            fh.write('%s,%s,%s,%s,"%s"\n' % (t, role, st, fault, msg.replace('"', "'")))
    with open(os.path.join(out, "wrong.txt"), "w") as fh:
        fh.write("\n".join(s.wrong + ctx.lost_detail) + ("\n" if s.wrong or ctx.lost_detail else ""))
    if mon:
        mon.write_csv(os.path.join(out, "memory.csv"))
    if log_tail and (unexpected or wrong):
        with open(os.path.join(out, "postgres-log-tail.txt"), "w") as fh:
            fh.write(log_tail)
    with open(os.path.join(out, "summary.md"), "w") as fh:
        fh.write(_markdown(summary, ctx, mon))
    return summary


def _fmt(x, spec="%.1f"):
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else spec % x


def _markdown(sm, ctx, mon):
    a, s = ctx.args, ctx.stats
    o = sm["oltp"]
    L = ["# pg_warp soak: %s" % sm["started_utc"][:16].replace("T", " "), "",
         "- machine: %s" % sm["machine"],
         "- command: `%s`" % sm["command"],
         "- duration: %.0f s of soak and comparison windows (data loading not counted)"
         % sm["duration_s"],
         "- data (synthetic): SSB sf %s (`pgwarp ssb gen`, %d-row Arrow batches), "
         "pgbench scale %d" % (a.sf, a.batch_rows, a.pgbench_scale),
         "- clients: %d OLTP (pgbench -j %d), %d analytic, %d writable-table writers, "
         "%d dimension writers" % (a.oltp_clients, a.oltp_threads, a.olap_clients, a.writers,
                                   a.dim_writers),
         "- result: **%s**" % ("PASS" if sm["pass"] else "FAIL"), "",
         "```", sm["final_line"], "```", "",
         "## Analytic answers", "",
         "%d queries through pg_warp, %d answers checked against PostgreSQL (pg_warp.enabled = "
         "off, heap fact table, same REPEATABLE READ snapshot): %d wrong."
         % (s.c["queries"], s.c["checked"], sm["wrong_answers"]), "",
         "| fact table | checked |", "|---|---|"]
    for v in ("arrow", "heap", "swap", "trunc", "writable"):
        L.append("| %s | %d |" % (v, s.c["checked_%s" % v]))
    L += ["", "pg_warp.mode: " + ", ".join("%s %d" % (m, s.c["mode_" + m]) for m in ("auto", "cpu", "gpu")),
          "", "## Faults", "", "| fault | injected | queries that still answered right |", "|---|---|---|"]
    for k, n in sorted(sm["faults"].items()):
        okn = sum(v for kk, v in s.c.items() if kk.startswith("armed_ok_") and
                  (kk[9:] == k or (k.startswith("gpud_") and kk[9:] == k)))
        L.append("| %s | %d | %s |" % (k, n, okn if okn else ""))
    L += ["", "Cluster crash restarts (kill -9 of a backend): %d, recovery %s s; "
          "recovery checks passed: %d." % (sm["crash_restarts"],
                                           ", ".join("%.1f" % x for x in sm["recovery_s"]) or "-",
                                           s.c["recovery_checks"]),
          "pg_warp_gpud processes seen: %d (%d restarts: kill -9, gpud_fault=crash, crash restarts)."
          % (sm["gpud_pids_seen"], sm["gpud_restarts"]),
          "Daemon killed with kill -9: %d times; a new daemon came up %d times (median %s s, "
          "max %s s after the kill), %d times not within 30 s."
          % (sm["gpud"]["kills"], sm["gpud"]["restarted"], _fmt(sm["gpud"]["restart_s_median"], "%.2f"),
             _fmt(sm["gpud"]["restart_s_max"], "%.2f"), sm["gpud"]["not_restarted"]), "",
          "## Errors by SQLSTATE", "", "| client | SQLSTATE | attributed to | count | example |",
          "|---|---|---|---|---|"]
    for role, st, fault, n, ex in sm["errors"]:
        L.append("| %s | %s | %s | %d | %s |" % (role, st, fault, n, ex.replace("|", "/")[:160]))
    L += ["", "## Writable Arrow table", "",
          "%d commits (%d rows), %d rollbacks; checks after each crash restart and at the end: "
          "%d lost committed rows, %d rows present that did not commit."
          % (s.c["writer_commits"], s.c["writer_rows"], s.c["writer_rollbacks"], sm["lost_rows"],
             sm["phantom_rows"]), "",
          "## OLTP cost (comparison windows, interleaved)", "",
          "Each window: %d pgbench clients (bench/pgbench mix, prepared) for %.0f s after a %.0f s "
          "warm-up, beside %d analytic clients running one query every %.1f s each and the "
          "dimension writers; `plain`: pg_warp not in shared_preload_libraries, the analytic "
          "queries on the heap tables; `loaded` (when compared): pg_warp preloaded, the same "
          "queries with pg_warp.enabled = off; `warp`: pg_warp preloaded, the analytic queries "
          "through pg_warp. No faults in these windows."
          % (a.oltp_clients, a.measure_seconds, a.warmup_seconds, a.olap_clients, a.olap_period), "",
          "| configuration | windows | TPS (mean) | p50 ms | p99 ms | backend CPU µs per transaction | TPS per window |",
          "|---|---|---|---|---|---|---|"]
    for cfg in ("plain", "loaded", "warp"):
        c = o[cfg]
        if not c["n"]:
            continue
        L.append("| %s | %d | %s | %s | %s | %s | %s |" % (cfg, c["n"], _fmt(c["tps"]), _fmt(c["p50"], "%.3f"),
                                                           _fmt(c["p99"], "%.3f"), _fmt(c["cpu"]),
                                                           ", ".join(map(str, c["runs"]))))
    tp, pp, cp = o["tps_paired"], o["p99_paired"], o["cpu_paired"]

    def ci(pr):
        return "%s [%s, %s]" % (_fmt(pr["ratio"], "%.3f"), _fmt(pr["lo"], "%.3f"), _fmt(pr["hi"], "%.3f"))
    L += ["", "Paired comparison: %d groups of windows run back to back (%s, the order "
          "reversed every other group); per group the ratio of two configurations, then their "
          "geometric mean with a 95 %% confidence interval (Student's t on the log ratios). "
          "Machine load (1-minute load average at the end of each window, every tenant of the "
          "machine counted): mean %s, max %s on %d CPUs."
          % (tp["n"], "-".join(a.configs), _fmt(o["load1"]["mean"], "%.1f"),
             _fmt(o["load1"]["max"], "%.1f"), os.cpu_count() or 0), "",
          "| measure | warp/plain [95 % CI] | per pair | target | verdict |", "|---|---|---|---|---|",
          "| TPS | %s | %s | >= 0.99 | %s |" % (ci(tp), ", ".join(map(str, tp["per_pair"])),
                                                o["tps_target"]),
          "| p99 latency | %s | %s | <= 1.10 | %s |" % (ci(pp), ", ".join(map(str, pp["per_pair"])),
                                                       o["p99_target"]),
          "| backend CPU per transaction | %s | %s | | |" % (ci(cp), ", ".join(map(str, cp["per_pair"])))]
    for key, label in (("loaded_tps_paired", "TPS, loaded/plain (the hooks alone)"),
                       ("loaded_cpu_paired", "CPU per transaction, loaded/plain"),
                       ("warp_vs_loaded_tps_paired", "TPS, warp/loaded (the analytics through pg_warp)")):
        if key in o:
            L.append("| %s | %s | %s | | |" % (label, ci(o[key]), ", ".join(map(str, o[key]["per_pair"]))))
    L += ["", "A target is met only when the whole interval is on its side; on a machine "
          "shared with other work the interval is wide, and 'not resolved' says that this run "
          "cannot tell. OLTP TPS during the soak windows (faults, checked analytics, writers; "
          "crash restarts included): %s." % _fmt(sm["soak_oltp_tps"]),
          "", "## Memory (RssAnon, private memory)", ""]
    if mon:
        tl = mon.role_timeline()
        L += ["| process kind | first sample MB | max MB | last sample MB |", "|---|---|---|---|"]
        for role, pts in sorted(tl.items()):
            L.append("| %s | %.1f | %.1f | %.1f |" % (role, pts[0][1], max(p[1] for p in pts), pts[-1][1]))
        g = sm["memory_growth"]
        grown = [x for x in g if x[5]]
        kinds = {}
        for x in g:
            kinds[x[1]] = kinds.get(x[1], 0) + 1
        L += ["", "Samples every %.1f s of every process under the postmaster (%d samples). "
              "Growth check over %d processes that lived at least %.0f s of soak (%s): %s."
              % (a.mem_interval, len(mon.samples), len(g), a.mem_min_life,
                 ", ".join("%s %d" % kv for kv in sorted(kinds.items())) or "none",
                 "none grew" if not grown else
                 "; ".join("pid %d (%s) %.1f -> %.1f MB" % (x[0], x[1], x[3], x[4]) for x in grown))]
        ld = sm.get("load1") or {}
        L += ["", "Machine load (1-minute load average, every tenant counted) on %d CPUs: %s."
              % (os.cpu_count() or 0, "; ".join("%s windows mean %.1f, max %.1f" % (k, v["mean"], v["max"])
                                                for k, v in sorted(ld.items())) or "n/a")]
    if sm["notes"]:
        L += ["", "## Notes", ""] + ["- " + n for n in sm["notes"][:20]]
    return "\n".join(L) + "\n"
