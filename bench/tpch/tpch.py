#!/usr/bin/env python3
"""TPC-H on pg_warp: generate, load, run side by side.

  tpch.py gen  DATADIR [--sf SF]          data + query texts (tpch_gen.py, DuckDB's dbgen)
  tpch.py load DATADIR [--arrow-dir DIR]  heap tables in schema tpch (COPY, primary keys,
                                          ANALYZE), dumped with `pgwarp dump` to DIR/<t>.arrow
                                          and imported as foreign tables in schema tpch_arrow
  tpch.py run  DATADIR [--queries 1,3-5] [--runs N] [--timeout S] [--no-duckdb]
                                         [--no-arrow] [--no-heap] [--arrow-off] [--csv F]
  tpch.py table RUN.csv [RUN2.csv ...] [--labels a,b] [--timeout S]
                                         runs side by side: pg_warp over Arrow
                                         against vanilla and arrow_fdw alone

Connection: libpq's environment (PGHOST, PGPORT, PGUSER, PGDATABASE).  `run`
prints, per query, the time of: vanilla PostgreSQL (pg_warp.enabled = off,
parallel workers as configured) over the heap tables, pg_warp's CPU driver
over the same heap tables, pg_warp's CPU driver over the Arrow tables, and
DuckDB over the same data (and with --arrow-off, the Arrow tables with
pg_warp off: arrow_fdw alone); whether each answer equals vanilla's; whether
pg_warp offloaded it (a Warp custom scan in the plan) and, when not, the
reason EXPLAIN VERBOSE gives.  The query texts are the tpch extension's
(tpch_queries()), changed only as ADAPTATIONS says.
"""
import argparse
import csv
import datetime
import decimal
import math
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TABLES = ["region", "nation", "supplier", "customer", "part", "partsupp", "orders",
          "lineitem"]

# Changes to the extension's query texts that PostgreSQL needs, as
# (query number, what, regex, replacement).  DuckDB's texts are already
# PostgreSQL syntax (CAST(... AS date), extract(year FROM ...), substring(...
# FROM ... FOR ...), WITH for q15's view); the one change is the trailing
# semicolon, which EXPLAIN cannot take inside a larger statement.
ADAPTATIONS = [
    (None, "trailing semicolon removed (the text is embedded in EXPLAIN)", r";\s*$", ""),
]


def adapt(nr, text):
    for q, _why, pat, rep in ADAPTATIONS:
        if q is None or q == nr:
            text = re.sub(pat, rep, text)
    return text


def read_queries(datadir):
    """{nr: text} from DATADIR/queries/qNN.sql, adapted for PostgreSQL"""
    qd = os.path.join(datadir, "queries")
    out = {}
    for name in sorted(os.listdir(qd)):
        m = re.match(r"q(\d+)\.sql$", name)
        if m:
            with open(os.path.join(qd, name)) as f:
                out[int(m.group(1))] = adapt(int(m.group(1)), f.read())
    return out


# ------------------------------------------------------------- generating

def find_generator_python():
    """A Python whose duckdb loads the tpch extension, or None: $PGWARP_TPCH_PYTHON,
    this one, or build/tpch-venv (see docs/tpch.md)."""
    cands = [os.environ.get("PGWARP_TPCH_PYTHON"), sys.executable,
             os.path.join(REPO, "build", "tpch-venv", "bin", "python")]
    for py in cands:
        if not py or not os.path.exists(py):
            continue
        r = subprocess.run([py, os.path.join(HERE, "tpch_gen.py"), "/nonexistent", "--check"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if r.returncode == 0:
            return py
    return None


def generate(datadir, sf):
    """DATADIR/<table>.csv and DATADIR/queries/ (tpch_gen.py)"""
    py = find_generator_python()
    if py is None:
        sys.exit("no Python with duckdb and its tpch extension: pip install duckdb==V "
                 "duckdb-extension-tpch==V (same V) into a venv and set PGWARP_TPCH_PYTHON")
    subprocess.run([py, os.path.join(HERE, "tpch_gen.py"), datadir, "--sf", str(sf)], check=True)


# ---------------------------------------------------------------- loading

def connect():
    import psycopg
    return psycopg.connect(autocommit=True)


def pgwarp_bin():
    return os.environ.get("PGWARP_BIN") or os.path.join(REPO, "build", "pgwarp")


def load_heap(conn, datadir, schema="tpch"):
    """the eight tables as heap tables of `schema`, COPYed from the CSV text"""
    with open(os.path.join(HERE, "schema.sql")) as f:
        ddl = f.read()
    conn.execute("DROP SCHEMA IF EXISTS %s CASCADE" % schema)
    conn.execute("CREATE SCHEMA %s" % schema)
    conn.execute("SET search_path = %s" % schema)
    conn.execute(ddl)
    for t in TABLES:
        with conn.cursor() as cur:
            with cur.copy("COPY %s.%s FROM STDIN (FORMAT csv, DELIMITER '|')" % (schema, t)) as cp:
                with open(os.path.join(datadir, t + ".csv"), "rb") as f:
                    while True:
                        chunk = f.read(1 << 20)
                        if not chunk:
                            break
                        cp.write(chunk)
    conn.execute("VACUUM ANALYZE")  # (visibility map: index-only scans, as a DBA would)
    conn.execute("RESET search_path")


def dump_arrow(conn, arrow_dir, heap_schema="tpch", schema="tpch_arrow", dsn=None):
    """each heap table dumped with `pgwarp dump` and imported as a foreign table"""
    os.makedirs(arrow_dir, exist_ok=True)
    os.chmod(arrow_dir, 0o755)
    for t in TABLES:
        out = os.path.join(arrow_dir, t + ".arrow")
        subprocess.run([pgwarp_bin(), "dump", "-q"] + (["-d", dsn] if dsn else []) +
                       ["-t", "%s.%s" % (heap_schema, t), "-o", out], check=True)
        os.chmod(out, 0o644)
    conn.execute("DROP SCHEMA IF EXISTS %s CASCADE" % schema)
    conn.execute("CREATE SCHEMA %s" % schema)
    for t in TABLES:
        conn.execute("IMPORT FOREIGN SCHEMA %s FROM SERVER arrow_fdw INTO %s OPTIONS (file '%s')"
                     % (t, schema, os.path.join(arrow_dir, t + ".arrow")))
        conn.execute("ANALYZE %s.%s" % (schema, t))


# ---------------------------------------------------------------- answers

def _norm(v, strip):
    if isinstance(v, decimal.Decimal):
        return float(v) if not v.is_nan() else v
    if isinstance(v, str) and strip:
        return v.rstrip()
    return v


def _close(a, b):
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return _close(float(a), float(b))
    return a == b


def answers_equal(a, b, strip=False):
    """Two answers (lists of row tuples) equal: in order, or as multisets
    (rows tied in ORDER BY may come in any order); floating values and
    numerics within a relative 1e-9 (float sums differ with their order).
    strip: compare strings without trailing blanks (DuckDB's VARCHAR
    against character(n))."""
    if len(a) != len(b):
        return False
    na = [tuple(_norm(v, strip) for v in r) for r in a]
    nb = [tuple(_norm(v, strip) for v in r) for r in b]

    def rows_eq(x, y):
        return len(x) == len(y) and all(_close(p, q) for p, q in zip(x, y))
    if all(rows_eq(x, y) for x, y in zip(na, nb)):
        return True

    def key(r):
        return tuple((0, round(v, 6)) if isinstance(v, (int, float)) else (1, str(v)) for v in r)
    return all(rows_eq(x, y) for x, y in zip(sorted(na, key=key), sorted(nb, key=key)))


# ---------------------------------------------------------------- running

CONFIGS = {
    # name: (search_path, settings)
    "vanilla": ("tpch", {"pg_warp.enabled": "off"}),
    "warp_heap": ("tpch", {"pg_warp.enabled": "on", "pg_warp.mode": "cpu"}),
    "warp_arrow": ("tpch_arrow", {"pg_warp.enabled": "on", "pg_warp.mode": "cpu"}),
    # the Arrow tables through arrow_fdw alone: what the planner chose
    # pg_warp's paths against
    "arrow_off": ("tpch_arrow", {"pg_warp.enabled": "off"}),
}


def configure(conn, name, timeout_s):
    path, sets = CONFIGS[name]
    conn.execute("SET search_path = %s" % path)
    for k, v in sets.items():
        conn.execute("SET %s = %s" % (k, v))
    conn.execute("SET statement_timeout = %d" % int(timeout_s * 1000))


def timed(conn, sql, runs):
    """(best seconds, rows) or (None, error text)"""
    import psycopg
    best, rows = None, None
    for _ in range(runs):
        t0 = time.perf_counter()
        try:
            cur = conn.execute(sql)
            rows = cur.fetchall()
        except psycopg.errors.QueryCanceled:
            return None, "timeout"
        except psycopg.Error as e:
            return None, "error: %s" % str(e).splitlines()[0]
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    return best, rows


def explain(conn, sql):
    """(offloaded, reasons): a Warp custom scan anywhere in the plan; the
    'pg_warp: ...' lines of EXPLAIN VERBOSE"""
    lines = [r[0] for r in conn.execute("EXPLAIN (VERBOSE) " + sql).fetchall()]
    offloaded = any(re.search(r"Custom Scan \(Warp", ln) for ln in lines)
    reasons = [ln.split("pg_warp:", 1)[1].strip() for ln in lines if ln.startswith("pg_warp:")]
    return offloaded, reasons


def duckdb_conn(datadir):
    import duckdb
    con = duckdb.connect()
    with open(os.path.join(HERE, "schema.sql")) as f:
        con.execute(f.read())
    for t in TABLES:
        con.execute("COPY %s FROM '%s' (FORMAT csv, DELIMITER '|', HEADER false)"
                    % (t, os.path.join(datadir, t + ".csv")))
    return con


def duckdb_timed(con, sql, runs):
    best, rows = None, None
    for _ in range(runs):
        t0 = time.perf_counter()
        rows = con.execute(sql).fetchall()
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    return best, rows


def parse_list(s):
    out = []
    for part in s.split(","):
        if "-" in part:
            a, b = part.split("-")
            out.extend(range(int(a), int(b) + 1))
        elif part:
            out.append(int(part))
    return out


def fmt_ms(t):
    return "%.0f" % (t * 1000) if isinstance(t, float) else str(t)


def run(a):
    queries = read_queries(a.datadir)
    nrs = parse_list(a.queries) if a.queries else sorted(queries)
    conn = connect()
    ver = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'pg_warp'").fetchone()
    dcon = None if a.no_duckdb else duckdb_conn(a.datadir)
    cols = ["query", "vanilla_ms", "warp_heap_ms", "warp_arrow_ms", "arrow_off_ms", "duckdb_ms",
            "heap_equal", "arrow_equal", "duckdb_equal", "heap_offloaded", "arrow_offloaded",
            "heap_reason", "arrow_reason"]
    results = []
    print("pg_warp %s; runs %d (best), timeout %d s" % (ver[0] if ver else "?", a.runs, a.timeout))
    print("%-4s %10s %10s %10s %10s %10s  %-5s %-5s %-5s  %-3s %-3s  %s" % (
        "q", "vanilla", "warp_heap", "warp_arrow", "arrow_off", "duckdb", "h=", "a=", "d=",
        "ho", "ao", "reason (heap | arrow)"))
    for nr in nrs:
        sql = queries[nr]
        r = {"query": nr}
        configure(conn, "vanilla", a.timeout)
        tv, rv = timed(conn, sql, a.runs)
        r["vanilla_ms"] = fmt_ms(tv if tv is not None else rv)
        for name, short in (("warp_heap", "heap"), ("warp_arrow", "arrow")):
            if name == "warp_arrow" and a.no_arrow:
                r.update({"warp_arrow_ms": "-", "arrow_equal": "-", "arrow_offloaded": "-",
                          "arrow_reason": ""})
                continue
            if a.no_heap and name == "warp_heap":
                r["warp_heap_ms"], r["heap_equal"], r["heap_offloaded"] = "-", "-", "-"
                r["heap_reason"] = ""
                continue
            configure(conn, name, a.timeout)
            off, reasons = explain(conn, sql)
            t, rows = timed(conn, sql, a.runs)
            r[name + "_ms"] = fmt_ms(t if t is not None else rows)
            r[short + "_equal"] = ("-" if tv is None or t is None else
                                   "yes" if answers_equal(rv, rows) else "NO")
            r[short + "_offloaded"] = "yes" if off else "no"
            r[short + "_reason"] = "; ".join(reasons)
        if a.arrow_off:
            configure(conn, "arrow_off", a.timeout)
            t, rows = timed(conn, sql, a.runs)
            r["arrow_off_ms"] = fmt_ms(t if t is not None else rows)
        else:
            r["arrow_off_ms"] = "-"
        if dcon is not None:
            td, rd = duckdb_timed(dcon, sql, a.runs)
            r["duckdb_ms"] = fmt_ms(td)
            r["duckdb_equal"] = "-" if tv is None else (
                "yes" if answers_equal(rv, rd, strip=True) else "NO")
        else:
            r["duckdb_ms"], r["duckdb_equal"] = "-", "-"
        results.append(r)
        print("q%-3d %10s %10s %10s %10s %10s  %-5s %-5s %-5s  %-3s %-3s  %s | %s" % (
            nr, r["vanilla_ms"], r["warp_heap_ms"], r["warp_arrow_ms"], r["arrow_off_ms"],
            r["duckdb_ms"],
            r["heap_equal"], r["arrow_equal"], r["duckdb_equal"], r["heap_offloaded"],
            r["arrow_offloaded"], r["heap_reason"] or "-", r["arrow_reason"] or "-"), flush=True)
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=cols)
            w.writeheader()
            w.writerows(results)
    return results


def _ms(v):
    try:
        return float(v)
    except ValueError:
        return None


def _ratio(a, b, timeout_ms):
    """a / b as text; a timeout counts as the timeout, making a bound"""
    x, y = _ms(a), _ms(b)
    if x is None and y is None:
        return "-"
    if x is None:
        return ">%.2f" % (timeout_ms / y)
    if y is None:
        return "<%.2f" % (x / timeout_ms)
    return "%.2f" % (x / y)


def table(a):
    """a markdown table of --csv files: per query, each file's pg_warp over
    Arrow against vanilla and against arrow_fdw alone, and whether offloaded"""
    runs = []
    for path in a.csv_files:
        with open(path) as f:
            runs.append({int(r["query"]): r for r in csv.DictReader(f)})
    t = a.timeout * 1000.0
    head = ["q"]
    for k in range(len(runs)):
        head += ["vanilla (%s)" % a.labels[k], "pg_warp Arrow (%s)" % a.labels[k],
                 "arrow_fdw alone (%s)" % a.labels[k], "Arrow/vanilla (%s)" % a.labels[k],
                 "Arrow/arrow_fdw (%s)" % a.labels[k], "offloaded (%s)" % a.labels[k]]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for nr in sorted(runs[0]):
        row = ["q%d" % nr]
        for run_ in runs:
            r = run_[nr]
            row += [r["vanilla_ms"], r["warp_arrow_ms"], r["arrow_off_ms"],
                    _ratio(r["warp_arrow_ms"], r["vanilla_ms"], t),
                    _ratio(r["warp_arrow_ms"], r["arrow_off_ms"], t), r["arrow_offloaded"]]
        print("| " + " | ".join(row) + " |")
    for k, run_ in enumerate(runs):
        print("\n%s: offloaded over Arrow %d of %d" % (
            a.labels[k], sum(r["arrow_offloaded"] == "yes" for r in run_.values()), len(run_)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("datadir")
    g.add_argument("--sf", type=float, default=1.0)
    ld = sub.add_parser("load")
    ld.add_argument("datadir")
    ld.add_argument("--arrow-dir", help="where the Arrow files go (default DATADIR/arrow)")
    r = sub.add_parser("run")
    r.add_argument("datadir")
    r.add_argument("--queries", help="e.g. 1,3-5 (default: all 22)")
    r.add_argument("--runs", type=int, default=1)
    r.add_argument("--timeout", type=int, default=300, help="statement timeout, seconds")
    r.add_argument("--no-duckdb", action="store_true")
    r.add_argument("--no-arrow", action="store_true",
                   help="skip pg_warp over the Arrow tables (heap against vanilla only)")
    r.add_argument("--no-heap", action="store_true",
                   help="skip pg_warp over the heap tables")
    r.add_argument("--arrow-off", action="store_true",
                   help="also time the Arrow tables with pg_warp off (arrow_fdw alone)")
    r.add_argument("--csv")
    t = sub.add_parser("table")
    t.add_argument("csv_files", nargs="+", help="--csv files of runs")
    t.add_argument("--labels", help="comma-separated, one per file")
    t.add_argument("--timeout", type=int, default=30, help="the runs' timeout, seconds")
    a = ap.parse_args()
    if a.cmd == "table":
        a.labels = a.labels.split(",") if a.labels else [str(k + 1) for k in
                                                          range(len(a.csv_files))]
        table(a)
        return
    if a.cmd == "gen":
        generate(a.datadir, a.sf)
    elif a.cmd == "load":
        conn = connect()
        t0 = time.time()
        load_heap(conn, a.datadir)
        t1 = time.time()
        dump_arrow(conn, a.arrow_dir or os.path.join(os.path.abspath(a.datadir), "arrow"))
        print("loaded in %.0f s, dumped to Arrow in %.0f s" % (t1 - t0, time.time() - t1))
    else:
        run(a)


if __name__ == "__main__":
    main()
