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


def oltp_summary(windows):
    out = {}
    for cfg in ("plain", "warp"):
        w = [x for x in windows if x["cfg"] == cfg]
        out[cfg] = dict(n=len(w), tps=_mean([x["tps"] for x in w]),
                        p50=_mean([x["p50"] for x in w]), p99=_mean([x["p99"] for x in w]),
                        cpu=_mean([x.get("cpu_us_per_tx") for x in w]),
                        runs=[round(x["tps"], 1) for x in w])
    p, q = out["plain"], out["warp"]
    out["ratio"] = q["tps"] / p["tps"] if p["n"] and q["n"] and p["tps"] > 0 else None
    out["p99_ratio"] = q["p99"] / p["p99"] if p["n"] and q["n"] and p["p99"] > 0 else None
    out["cpu_ratio"] = q["cpu"] / p["cpu"] if p["n"] and q["n"] and p["cpu"] > 0 else None
    tps = [(x["round"], x["cfg"], x["tps"]) for x in windows]
    rounds = sorted({r for r, _, _ in tps})
    per_round = []
    for r in rounds:
        d = {c: t for rr, c, t in tps if rr == r}
        if d.get("plain") and d.get("warp"):
            per_round.append(d["warp"] / d["plain"])
    out["round_ratios"] = [round(x, 3) for x in per_round]
    out["ratio_se"] = (statistics.stdev(per_round) / math.sqrt(len(per_round))
                       if len(per_round) > 1 else None)
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
    errors = sorted(([role, st, fault, n, s.examples[(role, st, fault)]]
                     for (role, st, fault), n in s.errors.items()), key=lambda e: (e[2] != "UNEXPECTED", e[2], -e[3]))
    summary = dict(final_line=final_line, pass_=ok, started_utc=started.isoformat() + "Z",
                   duration_s=round(duration, 1), command="bench/soak/run.sh " + " ".join(argv),
                   machine=_machine(), host=platform.node(), args=vars(a), counters=dict(s.c),
                   wrong_answers=wrong, unexpected_errors=unexpected, lost_rows=ctx.lost_rows,
                   phantom_rows=ctx.phantom_rows, faults=dict(f.counts),
                   crash_restarts=f.crash_restarts,
                   recovery_s=[round(x, 2) for x in f.recovery_s], gpud_restarts=gpud_restarts,
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
          % (sm["gpud_pids_seen"], sm["gpud_restarts"]), "",
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
          "queries on the heap tables; `warp`: pg_warp preloaded, the analytic queries through "
          "pg_warp. No faults in these windows."
          % (a.oltp_clients, a.measure_seconds, a.warmup_seconds, a.olap_clients, a.olap_period), "",
          "| configuration | windows | TPS (mean) | p50 ms | p99 ms | backend CPU µs per transaction | TPS per window |",
          "|---|---|---|---|---|---|---|"]
    for cfg in ("plain", "warp"):
        c = o[cfg]
        L.append("| %s | %d | %s | %s | %s | %s | %s |" % (cfg, c["n"], _fmt(c["tps"]), _fmt(c["p50"], "%.3f"),
                                                           _fmt(c["p99"], "%.3f"), _fmt(c["cpu"]),
                                                           ", ".join(map(str, c["runs"]))))
    L += ["", "TPS ratio warp/plain: %s (per round: %s; standard error %s); p99 ratio: %s; "
          "CPU per transaction ratio: %s (the OLTP backends' own CPU time, which other load on "
          "the machine disturbs less than TPS). OLTP TPS during the soak windows (faults, "
          "checked analytics, writers; crash restarts included): %s."
          % (_fmt(o["ratio"], "%.3f"), ", ".join(map(str, o["round_ratios"])) or "-",
             _fmt(o["ratio_se"], "%.3f"), _fmt(o["p99_ratio"], "%.3f"), _fmt(o["cpu_ratio"], "%.3f"),
             _fmt(sm["soak_oltp_tps"])),
          "", "## Memory (RssAnon, private memory)", ""]
    if mon:
        tl = mon.role_timeline()
        L += ["| process kind | first sample MB | max MB | last sample MB |", "|---|---|---|---|"]
        for role, pts in sorted(tl.items()):
            L.append("| %s | %.1f | %.1f | %.1f |" % (role, pts[0][1], max(p[1] for p in pts), pts[-1][1]))
        g = sm["memory_growth"]
        grown = [x for x in g if x[5]]
        L += ["", "Growth check over %d processes that lived at least %.0f s of soak: %s."
              % (len(g), a.mem_min_life, "none grew" if not grown else
                 "; ".join("pid %d (%s) %.1f -> %.1f MB" % (x[0], x[1], x[3], x[4]) for x in grown))]
    if sm["notes"]:
        L += ["", "## Notes", ""] + ["- " + n for n in sm["notes"][:20]]
    return "\n".join(L) + "\n"
