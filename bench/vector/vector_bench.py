#!/usr/bin/env python3
"""k-NN benchmark over SYNTHETIC clustered float32 vectors (a mixture of
anisotropic Gaussians; no real embeddings): exact search in vanilla
PostgreSQL (heap, pg_warp.enabled = off), pg_warp's WarpVecScan over an
Arrow foreign table (CPU, in the backend), warp_ivf at several probes, and
hnswlib / faiss-cpu (HNSW, IVF-Flat, flat) on the same machine and data.

Ground truth: vanilla PostgreSQL's exact answer (heap, no index).  One
client, one query at a time; latencies are wall-clock per query as the
client sees it.  Writes a Markdown report (and the raw JSON beside it).

  python3 bench/vector/vector_bench.py --rows 100000 --dims 768 \\
      --out bench/results/2026-12-07-vector-100k-768-devbox.md

On a GPU machine, --torch adds PyTorch brute force over the same vectors
resident in device memory (float32 / float16, one query or 64 per matrix
product): the hardware's exact reference, e.g. 1M x 1536 normalised:

  python3 bench/vector/vector_bench.py --rows 1000000 --dims 1536 \\
      --normalise --queries 20 --cpu-threads 16 --torch \\
      --skip ivf,faiss,hnsw,arrow-vanilla --machine H100 --out ...

The server's CPU time per query is read from /proc (server and benchmark
on one machine).  psycopg's automatic server-side prepare is off: a generic
plan cached under pg_warp.enabled = off would otherwise be reused by the
next run of the same SQL text.
Needs: a running PostgreSQL with pg_warp (PG* environment variables), the
server able to read --dir, numpy, pyarrow, psycopg; hnswlib, faiss-cpu and
torch for their parts.
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np
import psycopg
import pyarrow as pa

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "test", "python"))
from vector_data import literal  # noqa: E402


def mixture(n, dims, clusters, seed, spread, normalise=False, block=65536):
    """n vectors of a Gaussian mixture (same centres for data and queries);
    per-cluster, per-dimension deviations uniform in spread * [0.05, 0.4];
    optionally scaled to unit length (as embeddings usually are).  Made in
    blocks of rows, so 1M x 1536 needs little more than its own 6 GB."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(0, 1, (clusters, dims))
    scales = rng.uniform(0.05, 0.4, (clusters, dims)) * spread
    which = rng.integers(0, clusters, n)
    out = np.empty((n, dims), dtype=np.float32)
    for lo in range(0, n, block):
        w = which[lo:lo + block]
        x = centres[w] + rng.normal(0, 1, (len(w), dims)) * scales[w]
        if normalise:
            x /= np.linalg.norm(x, axis=1, keepdims=True)
        out[lo:lo + block] = x
    return out


def torch_bruteforce(x, queries, k, dtype_name, batch):
    """exact top-k on the GPU with PyTorch (the hardware's reference): the
    table resident in device memory, queries one at a time (batch 1) or
    `batch` per matrix product; per-query latency = batch latency / batch"""
    import torch
    dev = torch.device("cuda")
    dt = {"float32": torch.float32, "float16": torch.float16}[dtype_name]
    xt = torch.from_numpy(x).to(dev, dt)
    xn = (xt.float() ** 2).sum(1)
    qt = torch.from_numpy(queries).to(dev, dt)
    torch.topk(xn[None, :] - 2 * (qt[:1] @ xt.T).float(), k, dim=1, largest=False)  # warm
    torch.cuda.synchronize()
    out = []
    lat = []
    for lo in range(0, len(queries), batch):
        qb = qt[lo:lo + batch]
        torch.cuda.synchronize()
        t = time.perf_counter()
        d = xn[None, :] - 2 * (qb @ xt.T).float()     # |x|^2 - 2 q.x: same order as L2
        idx = torch.topk(d, k, dim=1, largest=False).indices.cpu().numpy()
        torch.cuda.synchronize()
        el = time.perf_counter() - t
        lat += [el / len(qb)] * len(qb)
        out += [list(r) for r in idx]
    return lat, out


def timed(fn, reps, cpu=None):
    """wall-clock latencies of fn(0..reps-1), and the CPU seconds cpu()
    (the server backend's) grew by over them, per query"""
    lat = []
    out = []
    c0 = cpu() if cpu else None
    for r in range(reps):
        t = time.perf_counter()
        out.append(fn(r))
        lat.append(time.perf_counter() - t)
    per_cpu = (cpu() - c0) / reps if cpu else None
    return lat, out, per_cpu


def process_cpu(pid=None):
    """CPU seconds (user + system) of a process on this machine"""
    def read():
        f = open("/proc/%s/stat" % (pid or "self")).read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
    return read


def summary(lat, cpu_s=None):
    lat = sorted(lat)
    p99 = lat[min(len(lat) - 1, int(round(0.99 * (len(lat) - 1))))]
    return {"p50_ms": 1000 * statistics.median(lat), "p99_ms": 1000 * p99,
            "qps": len(lat) / sum(lat),
            "cpu_ms": 1000 * cpu_s if cpu_s is not None else None}


def recall(got, truth, k):
    return sum(len(set(g[:k]) & set(t[:k])) for g, t in zip(got, truth)) / float(k * len(truth))


def load(conn, x, arrow_path):
    """the vectors into an Arrow file (a foreign table) and, through it,
    into a heap table (INSERT ... SELECT: same float4 values)"""
    conn.execute("DROP TABLE IF EXISTS vb_heap")
    conn.execute("DROP FOREIGN TABLE IF EXISTS vb_arrow")
    n, dims = x.shape
    arr = pa.FixedSizeListArray.from_arrays(pa.array(x.reshape(-1)), dims)
    tab = pa.table({"id": pa.array(np.arange(n, dtype=np.int32)), "v": arr})
    with pa.OSFile(arrow_path, "wb") as f:
        with pa.ipc.new_file(f, tab.schema) as w:
            w.write_table(tab, max_chunksize=1 << 16)
    os.chmod(arrow_path, 0o644)
    conn.execute("CREATE FOREIGN TABLE vb_arrow (id int, v real[]) SERVER arrow_fdw "
                 "OPTIONS (file '%s')" % arrow_path)
    conn.execute("ANALYZE vb_arrow")
    t = time.perf_counter()
    conn.execute("CREATE TABLE vb_heap AS SELECT id, v FROM vb_arrow")
    conn.execute("VACUUM ANALYZE vb_heap")
    return time.perf_counter() - t


def sql_topk(conn, table, queries, k, settings):
    for s in settings:
        conn.execute(s)
    sql = "SELECT id FROM %s ORDER BY v <-> %%s::real[] LIMIT %d" % (table, k)
    lits = [literal(q) for q in queries]
    conn.execute(sql, (lits[0],)).fetchall()      # warm
    pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
    lat, out, cpu = timed(lambda r: [row[0] for row in conn.execute(sql, (lits[r],))],
                          len(lits), process_cpu(pid))
    plan = "\n".join(r[0] for r in conn.execute("EXPLAIN " + sql, (lits[0],)))
    conn.execute("RESET ALL")
    return lat, out, plan, cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--dims", type=int, default=128)
    ap.add_argument("--clusters", type=int, default=1000)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--spread", type=float, default=1.0,
                    help="cluster width factor: 1 = well separated, 5 = overlapping")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--lists", type=int, default=0, help="default sqrt(rows)")
    ap.add_argument("--probes", default="1,4,10,20,40")
    ap.add_argument("--hnsw-ef-construction", type=int, default=200)
    ap.add_argument("--normalise", action="store_true", help="unit-length vectors")
    ap.add_argument("--cpu-threads", type=int, default=1,
                    help="pg_warp.cpu_threads for the WarpVecScan run (threads score batches)")
    ap.add_argument("--skip", default="",
                    help="comma list of parts to leave out: arrow-vanilla, ivf, faiss, hnsw")
    ap.add_argument("--torch", action="store_true",
                    help="add PyTorch brute force on the GPU (float32 / float16, batch 1 / 64)")
    ap.add_argument("--maintenance-work-mem", default="1GB",
                    help="for CREATE INDEX: warp_ivf's training sample takes at most half")
    ap.add_argument("--dir", default=os.environ.get("PGWARP_TEST_DIR", "/tmp"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--machine", default="devbox", help="the machine's name in the report")
    a = ap.parse_args()
    lists = a.lists or int(round(a.rows ** 0.5))
    probes = [int(p) for p in a.probes.split(",")]
    skip = set(p for p in a.skip.split(",") if p)
    allx = mixture(a.rows + a.queries, a.dims, a.clusters, seed=20261207, spread=a.spread,
                   normalise=a.normalise)
    x, queries = allx[:a.rows], allx[a.rows:]
    res = {"rows": a.rows, "dims": a.dims, "clusters": a.clusters, "queries": a.queries,
           "spread": a.spread,
           "k": a.k, "lists": lists, "runs": []}
    res["loadavg_start"] = os.getloadavg()[0]
    # no automatic server-side prepare: a generic plan cached under one
    # setting (pg_warp.enabled = off) would be reused under the next
    conn = psycopg.connect(autocommit=True, prepare_threshold=None)
    conn.execute("CREATE EXTENSION IF NOT EXISTS pg_warp")
    res["server"] = conn.execute("SELECT version()").fetchone()[0]
    res["load_s"] = load(conn, x, os.path.join(a.dir, "vector_bench.arrow"))
    res["heap_mb"] = conn.execute("SELECT pg_total_relation_size('vb_heap')").fetchone()[0] / 2**20

    def add(name, lat, out, truth, build_s=None, size_mb=None, note="", cpu=None):
        r = dict(summary(lat, cpu), name=name, recall=recall(out, truth, a.k) if truth else 1.0,
                 build_s=build_s, size_mb=size_mb, note=note)
        res["runs"].append(r)
        print(json.dumps(r), flush=True)

    off = ["SET pg_warp.enabled = off", "SET max_parallel_workers_per_gather = 0"]
    lat, truth, plan, cpu = sql_topk(conn, "vb_heap", queries, a.k, off)
    assert "Seq Scan" in plan, plan
    add("PostgreSQL exact, heap seq scan + top-N sort (pg_warp off)", lat, truth, None, cpu=cpu)
    if "arrow-vanilla" not in skip:
        lat, out, plan, cpu = sql_topk(conn, "vb_arrow", queries, a.k, off)
        add("PostgreSQL exact, Arrow foreign scan + top-N sort (pg_warp off)", lat, out, truth,
            cpu=cpu)
    lat, out, plan, cpu = sql_topk(conn, "vb_arrow", queries, a.k,
                                   ["SET max_parallel_workers_per_gather = 0",
                                    "SET pg_warp.cpu_threads = %d" % a.cpu_threads])
    assert "WarpVecScan" in plan, plan
    add("pg_warp exact, WarpVecScan over Arrow (CPU, backend, %d thread%s)"
        % (a.cpu_threads, "" if a.cpu_threads == 1 else "s"), lat, out, truth, cpu=cpu)

    if a.torch:
        for dt, b in (("float32", 1), ("float32", 64), ("float16", 1), ("float16", 64)):
            b = min(b, len(queries))
            lat, out = torch_bruteforce(allx[:a.rows], queries, a.k, dt, b)
            add("PyTorch brute force on the GPU, %s, %d quer%s per product (resident, no SQL)"
                % (dt, b, "y" if b == 1 else "ies"), lat, out, truth)
    if "ivf" not in skip:
        ivf_runs(a, conn, queries, truth, lists, probes, add)
    if "faiss" not in skip:
        faiss_runs(a, x, queries, truth, lists, probes, add)
    if "hnsw" not in skip:
        hnsw_runs(a, x, queries, truth, add)
    conn.execute("DROP TABLE vb_heap")
    conn.execute("DROP FOREIGN TABLE vb_arrow")
    res["loadavg_end"] = os.getloadavg()[0]
    res["machine"] = "%s, %d CPUs (%s)" % (a.machine, os.cpu_count(),
                                          platform.processor() or platform.machine())
    with open(a.out.replace(".md", ".json"), "w") as f:
        json.dump(res, f, indent=1)
    write_md(a, res)


def ivf_runs(a, conn, queries, truth, lists, probes, add):
    conn.execute("SET maintenance_work_mem = '%s'" % a.maintenance_work_mem)
    t = time.perf_counter()
    conn.execute("CREATE INDEX vb_ivf ON vb_heap USING warp_ivf (v real_l2_ops) "
                 "WITH (lists = %d)" % lists)
    build = time.perf_counter() - t
    conn.execute("RESET maintenance_work_mem")
    size = conn.execute("SELECT pg_relation_size('vb_ivf')").fetchone()[0] / 2**20
    for p in probes:
        # enable_seqscan off: the planner's seq scan estimate leaves out
        # TOAST fetches, so past a few probes it prefers the heap scan
        lat, out, plan, cpu = sql_topk(conn, "vb_heap", queries, a.k,
                                       ["SET pg_warp.ivf_probes = %d" % p,
                                        "SET enable_seqscan = off"])
        assert "vb_ivf" in plan, plan
        add("pg_warp warp_ivf, probes %d of %d lists" % (p, lists), lat, out, truth,
            build_s=build, size_mb=size, cpu=cpu)


def faiss_runs(a, x, q, truth, lists, probes, add):
    import faiss
    faiss.omp_set_num_threads(1)
    t = time.perf_counter()
    flat = faiss.IndexFlatL2(a.dims)
    flat.add(x)
    fb = time.perf_counter() - t
    lat, out, cpu = timed(lambda r: list(flat.search(q[r:r + 1], a.k)[1][0]), len(q),
                          process_cpu())
    add("faiss-cpu IndexFlatL2 (exact, 1 thread)", lat, out, truth, build_s=fb, cpu=cpu)
    t = time.perf_counter()
    quant = faiss.IndexFlatL2(a.dims)
    ivf = faiss.IndexIVFFlat(quant, a.dims, lists)
    ivf.train(x)
    ivf.add(x)
    ib = time.perf_counter() - t
    for p in probes:
        ivf.nprobe = p
        lat, out, cpu = timed(lambda r: list(ivf.search(q[r:r + 1], a.k)[1][0]), len(q),
                              process_cpu())
        add("faiss-cpu IndexIVFFlat nprobe %d of %d (1 thread)" % (p, lists), lat, out, truth,
            build_s=ib, cpu=cpu)


def hnsw_runs(a, x, q, truth, add):
    import hnswlib
    t = time.perf_counter()
    h = hnswlib.Index(space="l2", dim=a.dims)
    h.init_index(max_elements=a.rows, M=16, ef_construction=a.hnsw_ef_construction)
    h.set_num_threads(os.cpu_count())
    h.add_items(x, np.arange(a.rows))
    hb = time.perf_counter() - t
    h.set_num_threads(1)
    for ef in (16, 32, 64, 128):
        h.set_ef(max(ef, a.k))
        lat, out, cpu = timed(lambda r: list(h.knn_query(q[r:r + 1], k=a.k)[0][0]), len(q),
                              process_cpu())
        add("hnswlib HNSW M=16 ef_construction=%d ef=%d (1 thread)"
            % (a.hnsw_ef_construction, ef), lat, out, truth, build_s=hb,
            note="built on %d threads" % os.cpu_count(), cpu=cpu)


def write_md(a, res):
    L = []
    L.append("# k-NN benchmark — synthetic clustered vectors, %d x %d" % (res["rows"], res["dims"]))
    L.append("")
    L.append("Machine: %s; %s." % (res["machine"], res["server"].split(" on ")[0]))
    L.append("Command: `python3 %s`." % " ".join(sys.argv))
    L.append("Data: SYNTHETIC — %d float32 vectors of %d dimensions from a mixture of %d "
             "anisotropic Gaussians (centres N(0,1), deviations %g x U(0.05, 0.4) per cluster and "
             "dimension%s), %d query vectors drawn from the same mixture; an Arrow file "
             "(FixedSizeList<Float32>, 65,536-row batches) as a foreign table, and a heap "
             "table of %.0f MB copied from it (INSERT ... SELECT, %.0f s)."
             % (res["rows"], res["dims"], res["clusters"], res["spread"],
                ", scaled to unit length" if a.normalise else "", res["queries"],
                res["heap_mb"],
                res["load_s"]))
    L.append("Query: `SELECT id FROM t ORDER BY v <-> $1 LIMIT %d`, one client, one query at a "
             "time, parallel workers off; recall@%d against vanilla PostgreSQL's exact answer "
             "(first row); the warp_ivf rows run with enable_seqscan = off (see the "
             "limitations: the planner underestimates the heap scan of TOASTed vectors). "
             "Index built with maintenance_work_mem = %s. Everything in this table "
             "was measured in the same run; the machine's %d cores are shared with other work "
             "(1-minute load average %.0f at the start, %.0f at the end), so wall-clock figures "
             "are slower and noisier than on an idle machine: the CPU column (CPU time of the "
             "server backend, or of the benchmark process for faiss / hnswlib, per query, from "
             "/proc) is the steadier comparison."
             % (res["k"], res["k"], a.maintenance_work_mem, os.cpu_count(),
                res["loadavg_start"], res["loadavg_end"]))
    L.append("")
    L.append("| method | recall@%d | CPU ms/query | p50 ms | p99 ms | QPS | build s | index MB |"
             % res["k"])
    L.append("|---|---|---|---|---|---|---|---|")
    for r in res["runs"]:
        L.append("| %s | %.3f | %s | %.2f | %.2f | %.1f | %s | %s |" % (
            r["name"], r["recall"],
            "%.1f" % r["cpu_ms"] if r.get("cpu_ms") is not None else "-",
            r["p50_ms"], r["p99_ms"], r["qps"],
            "%.1f" % r["build_s"] if r["build_s"] is not None else "-",
            "%.1f" % r["size_mb"] if r["size_mb"] is not None else "-"))
    L.append("")
    L.append("hnswlib was built on all %d CPUs (the others on 1); faiss and hnswlib search in " % os.cpu_count() +
             "process memory, without SQL, a client round trip or visibility checks, so they "
             "are the reference for what the algorithms cost, not like-for-like.")
    with open(a.out, "w") as f:
        f.write("\n".join(L) + "\n")


if __name__ == "__main__":
    main()
