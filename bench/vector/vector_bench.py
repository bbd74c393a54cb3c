#!/usr/bin/env python3
"""k-NN benchmark over SYNTHETIC clustered float32 vectors (a mixture of
anisotropic Gaussians; no real embeddings): exact search in vanilla
PostgreSQL (heap, pg_warp.enabled = off), pg_warp's WarpVecScan over an
Arrow foreign table (CPU, in the backend), warp_ivf at several probes, and
hnswlib / faiss-cpu (HNSW, IVF-Flat, flat) on the same machine and data.

Ground truth: vanilla PostgreSQL's exact answer (heap, no index).  One
client, one query at a time; latencies are wall-clock per query as the
client sees it.  Writes a Markdown report (and the raw JSON beside it).

  python3 bench/vector/vector_bench.py --rows 100000 --dims 128 \\
      --out bench/results/2026-12-07-vector-100k-devbox.md
Needs: a running PostgreSQL with pg_warp (PG* environment variables), the
server able to read --dir, numpy, pyarrow, psycopg, hnswlib, faiss-cpu.
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


def mixture(n, dims, clusters, seed, spread):
    """n vectors of a Gaussian mixture (same centres for data and queries);
    per-cluster, per-dimension deviations uniform in spread * [0.05, 0.4]"""
    rng = np.random.default_rng(seed)
    centres = rng.normal(0, 1, (clusters, dims))
    scales = rng.uniform(0.05, 0.4, (clusters, dims)) * spread
    which = rng.integers(0, clusters, n)
    return (centres[which] + rng.normal(0, 1, (n, dims)) * scales[which]).astype(np.float32)


def timed(fn, reps):
    lat = []
    out = []
    for r in range(reps):
        t = time.perf_counter()
        out.append(fn(r))
        lat.append(time.perf_counter() - t)
    return lat, out


def summary(lat):
    lat = sorted(lat)
    p99 = lat[min(len(lat) - 1, int(round(0.99 * (len(lat) - 1))))]
    return {"p50_ms": 1000 * statistics.median(lat), "p99_ms": 1000 * p99,
            "qps": len(lat) / sum(lat)}


def recall(got, truth, k):
    return sum(len(set(g[:k]) & set(t[:k])) for g, t in zip(got, truth)) / float(k * len(truth))


def load(conn, x, arrow_path):
    conn.execute("DROP TABLE IF EXISTS vb_heap")
    conn.execute("DROP FOREIGN TABLE IF EXISTS vb_arrow")
    conn.execute("CREATE TABLE vb_heap (id int, v real[])")
    t = time.perf_counter()
    with conn.cursor() as cur:
        with cur.copy("COPY vb_heap FROM STDIN") as cp:
            for i, v in enumerate(x):
                cp.write_row([i, literal(v)])
    conn.execute("VACUUM ANALYZE vb_heap")
    load_s = time.perf_counter() - t
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
    return load_s


def sql_topk(conn, table, queries, k, settings):
    for s in settings:
        conn.execute(s)
    sql = "SELECT id FROM %s ORDER BY v <-> %%s::real[] LIMIT %d" % (table, k)
    lits = [literal(q) for q in queries]
    conn.execute(sql, (lits[0],)).fetchall()      # warm
    lat, out = timed(lambda r: [row[0] for row in conn.execute(sql, (lits[r],))], len(lits))
    plan = "\n".join(r[0] for r in conn.execute("EXPLAIN " + sql, (lits[0],)))
    conn.execute("RESET ALL")
    return lat, out, plan


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
    ap.add_argument("--dir", default=os.environ.get("PGWARP_TEST_DIR", "/tmp"))
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    lists = a.lists or int(round(a.rows ** 0.5))
    probes = [int(p) for p in a.probes.split(",")]
    allx = mixture(a.rows + a.queries, a.dims, a.clusters, seed=20261207, spread=a.spread)
    x, queries = allx[:a.rows], allx[a.rows:]
    res = {"rows": a.rows, "dims": a.dims, "clusters": a.clusters, "queries": a.queries,
           "spread": a.spread,
           "k": a.k, "lists": lists, "runs": []}
    res["loadavg_start"] = os.getloadavg()[0]
    conn = psycopg.connect(autocommit=True)
    conn.execute("CREATE EXTENSION IF NOT EXISTS pg_warp")
    res["server"] = conn.execute("SELECT version()").fetchone()[0]
    res["load_s"] = load(conn, x, os.path.join(a.dir, "vector_bench.arrow"))
    res["heap_mb"] = conn.execute("SELECT pg_total_relation_size('vb_heap')").fetchone()[0] / 2**20

    def add(name, lat, out, truth, build_s=None, size_mb=None, note=""):
        r = dict(summary(lat), name=name, recall=recall(out, truth, a.k) if truth else 1.0,
                 build_s=build_s, size_mb=size_mb, note=note)
        res["runs"].append(r)
        print(json.dumps(r), flush=True)

    off = ["SET pg_warp.enabled = off", "SET max_parallel_workers_per_gather = 0"]
    lat, truth, plan = sql_topk(conn, "vb_heap", queries, a.k, off)
    assert "Seq Scan" in plan, plan
    add("PostgreSQL exact, heap seq scan + top-N sort (pg_warp off)", lat, truth, None)
    lat, out, plan = sql_topk(conn, "vb_arrow", queries, a.k, off)
    add("PostgreSQL exact, Arrow foreign scan + top-N sort (pg_warp off)", lat, out, truth)
    lat, out, plan = sql_topk(conn, "vb_arrow", queries, a.k,
                              ["SET max_parallel_workers_per_gather = 0"])
    assert "WarpVecScan" in plan, plan
    add("pg_warp exact, WarpVecScan over Arrow (CPU, backend)", lat, out, truth)

    t = time.perf_counter()
    conn.execute("CREATE INDEX vb_ivf ON vb_heap USING warp_ivf (v real_l2_ops) "
                 "WITH (lists = %d)" % lists)
    build = time.perf_counter() - t
    size = conn.execute("SELECT pg_relation_size('vb_ivf')").fetchone()[0] / 2**20
    for p in probes:
        lat, out, plan = sql_topk(conn, "vb_heap", queries, a.k,
                                  ["SET pg_warp.ivf_probes = %d" % p])
        assert "vb_ivf" in plan, plan
        add("pg_warp warp_ivf, probes %d of %d lists" % (p, lists), lat, out, truth,
            build_s=build, size_mb=size)

    import faiss
    import hnswlib
    faiss.omp_set_num_threads(1)
    q = queries
    t = time.perf_counter()
    flat = faiss.IndexFlatL2(a.dims)
    flat.add(x)
    fb = time.perf_counter() - t
    lat, out = timed(lambda r: list(flat.search(q[r:r + 1], a.k)[1][0]), len(q))
    add("faiss-cpu IndexFlatL2 (exact, 1 thread)", lat, out, truth, build_s=fb)
    t = time.perf_counter()
    quant = faiss.IndexFlatL2(a.dims)
    ivf = faiss.IndexIVFFlat(quant, a.dims, lists)
    ivf.train(x)
    ivf.add(x)
    ib = time.perf_counter() - t
    for p in probes:
        ivf.nprobe = p
        lat, out = timed(lambda r: list(ivf.search(q[r:r + 1], a.k)[1][0]), len(q))
        add("faiss-cpu IndexIVFFlat nprobe %d of %d (1 thread)" % (p, lists), lat, out, truth,
            build_s=ib)
    t = time.perf_counter()
    h = hnswlib.Index(space="l2", dim=a.dims)
    h.init_index(max_elements=a.rows, M=16, ef_construction=200)
    h.set_num_threads(2)
    h.add_items(x, np.arange(a.rows))
    hb = time.perf_counter() - t
    h.set_num_threads(1)
    for ef in (16, 32, 64, 128):
        h.set_ef(max(ef, a.k))
        lat, out = timed(lambda r: list(h.knn_query(q[r:r + 1], k=a.k)[0][0]), len(q))
        add("hnswlib HNSW M=16 ef=%d (1 thread)" % ef, lat, out, truth, build_s=hb,
            note="built on 2 threads")

    conn.execute("DROP TABLE vb_heap")
    conn.execute("DROP FOREIGN TABLE vb_arrow")
    res["loadavg_end"] = os.getloadavg()[0]
    res["machine"] = "%s, %d CPUs (%s)" % (platform.node() and "devbox", os.cpu_count(),
                                          platform.processor() or platform.machine())
    with open(a.out.replace(".md", ".json"), "w") as f:
        json.dump(res, f, indent=1)
    write_md(a, res)


def write_md(a, res):
    L = []
    L.append("# k-NN benchmark — synthetic clustered vectors, %d x %d" % (res["rows"], res["dims"]))
    L.append("")
    L.append("Machine: %s; %s." % (res["machine"], res["server"].split(" on ")[0]))
    L.append("Command: `python3 bench/vector/vector_bench.py --rows %d --dims %d --queries %d "
             "--spread %g --out %s`." % (res["rows"], res["dims"], res["queries"], res["spread"],
                                          a.out))
    L.append("Data: SYNTHETIC — %d float32 vectors of %d dimensions from a mixture of %d "
             "anisotropic Gaussians (centres N(0,1), deviations %g x U(0.05, 0.4) per cluster and "
             "dimension), %d query vectors drawn from the same mixture; heap table "
             "%.0f MB (loaded with COPY in %.0f s); the same vectors in an Arrow file "
             "(FixedSizeList<Float32>, 65,536-row batches) as a foreign table."
             % (res["rows"], res["dims"], res["clusters"], res["spread"], res["queries"],
                res["heap_mb"],
                res["load_s"]))
    L.append("Query: `SELECT id FROM t ORDER BY v <-> $1 LIMIT %d`, one client, one query at a "
             "time, parallel workers off; recall@%d against vanilla PostgreSQL's exact answer "
             "(first row). Everything in this table was measured in the same run; the machine's "
             "2 cores are shared with other work (1-minute load average %.0f at the start, %.0f "
             "at the end), so absolute figures are slower and noisier than on an idle machine."
             % (res["k"], res["k"], res["loadavg_start"], res["loadavg_end"]))
    L.append("")
    L.append("| method | recall@%d | p50 ms | p99 ms | QPS | build s | index MB |" % res["k"])
    L.append("|---|---|---|---|---|---|---|")
    for r in res["runs"]:
        L.append("| %s | %.3f | %.2f | %.2f | %.1f | %s | %s |" % (
            r["name"], r["recall"], r["p50_ms"], r["p99_ms"], r["qps"],
            "%.1f" % r["build_s"] if r["build_s"] is not None else "-",
            "%.1f" % r["size_mb"] if r["size_mb"] is not None else "-"))
    L.append("")
    L.append("hnswlib was built on 2 threads (the others on 1); faiss and hnswlib search in "
             "process memory, without SQL, a client round trip or visibility checks, so they "
             "are the reference for what the algorithms cost, not like-for-like.")
    with open(a.out, "w") as f:
        f.write("\n".join(L) + "\n")


if __name__ == "__main__":
    main()
