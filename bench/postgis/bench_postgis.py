"""Spatial join and filter benchmark on synthetic data (bench/postgis/run.sh).

Data (synthetic, seeded): POINTS points in 100 x 100, clustered (two thirds
around 40 Gaussian centres, like pickups in a city, one third uniform);
POLYGONS polygons: the Voronoi cells of random sites clipped to the square,
every fifth one with a hole (minus a 16-gon around its centroid), every
seventh one a multipolygon (plus a small square island off its corner).

Each query runs with pg_warp.enabled = off (PostgreSQL + PostGIS, GiST index
on the polygons and on the points) and on (WarpSpatialJoin /
WarpSpatialFilter on the CPU, parallel workers as configured), over the heap
table and over the same points written by `pgwarp dump` as a GeoArrow file
(geoarrow.point, read through arrow_fdw); the answers must be equal.  shapely 2's STRtree (vectorised query) is timed on the same data as
what a Python user would write; its per-polygon counts are compared too.
Times: best of REPS runs after one warm-up, wall clock at the client.  Counts
must be equal; sums of float8 within 1e-12 relative (plans add in different
orders).
"""
import os
import platform
import subprocess
import sys
import time

import psycopg

REPS = int(os.environ.get("BENCH_REPS", "2"))


def setup(conn, npoints, npolys):
    conn.execute("SET pg_warp.enabled = off")
    conn.execute("CREATE EXTENSION IF NOT EXISTS postgis")
    conn.execute("CREATE EXTENSION IF NOT EXISTS pg_warp")
    conn.execute("DROP TABLE IF EXISTS pts, zones")
    conn.execute("SELECT setseed(0.35)")
    conn.execute("""
        CREATE TABLE zones AS
        SELECT row_number() OVER ()::int AS id, geom FROM (
            SELECT (ST_Dump(ST_VoronoiPolygons(ST_Collect(ST_MakePoint(
                       random() * 100, random() * 100)), 0, ST_MakeEnvelope(0, 0, 100, 100)))).geom
            FROM generate_series(1, %d)) d""" % npolys)
    conn.execute("UPDATE zones SET geom = ST_Intersection(geom, ST_MakeEnvelope(0, 0, 100, 100))")
    conn.execute("""UPDATE zones SET geom = ST_Difference(geom, ST_Buffer(ST_Centroid(geom),
                        sqrt(ST_Area(geom)) / 6, 4)) WHERE id % 5 = 0""")
    conn.execute("""UPDATE zones SET geom = ST_Multi(ST_Union(geom, ST_MakeEnvelope(
                        ST_XMax(geom) + 0.1, ST_YMax(geom) + 0.1,
                        ST_XMax(geom) + 0.6, ST_YMax(geom) + 0.6))) WHERE id % 7 = 0""")
    conn.execute("""
        CREATE TABLE pts AS
        SELECT g AS id, (random() * 100)::float8 AS fare,
               CASE WHEN g %% 3 = 0 THEN ST_MakePoint(random() * 100, random() * 100)
                    ELSE ST_MakePoint(
                        cx + sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) * 3,
                        cy + sqrt(-2 * ln(1 - random())) * sin(2 * pi() * random()) * 3) END
               AS geom
        FROM generate_series(1, %d) g,
             LATERAL (SELECT 10 + ((g::bigint * 7919) %% 40) * 2.0 AS cx,
                             10 + ((g::bigint * 104729) %% 37) * 2.1 AS cy OFFSET 0) c""" % npoints)
    conn.execute("CREATE INDEX ON zones USING gist (geom)")
    conn.execute("CREATE INDEX ON pts USING gist (geom)")
    conn.execute("VACUUM ANALYZE zones")
    conn.execute("VACUUM ANALYZE pts")


def setup_arrow(conn):
    """the points as a GeoArrow file (geoarrow.point) through pgwarp dump"""
    path = os.path.join(os.environ["PGWARP_TEST_DIR"], "pts.arrow")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    subprocess.run([os.environ.get("PGWARP_BIN", "build/pgwarp"), "dump", "-q", "-c",
                    "SELECT id, fare, geom::geometry(Point) AS geom FROM pts", "-o", path],
                   check=True)
    conn.execute("DROP FOREIGN TABLE IF EXISTS pts_arrow")
    conn.execute("IMPORT FOREIGN SCHEMA pts_arrow FROM SERVER arrow_fdw INTO public "
                 "OPTIONS (file '%s')" % path)
    conn.execute("ANALYZE pts_arrow")


QUERIES = [
    ("count per polygon (ST_Contains join)",
     "SELECT z.id, count(*) FROM pts p JOIN zones z ON ST_Contains(z.geom, p.geom) "
     "GROUP BY z.id ORDER BY z.id"),
    ("avg fare per polygon (ST_Intersects join)",
     "SELECT z.id, count(*), round(avg(p.fare)::numeric, 6) FROM pts p JOIN zones z "
     "ON ST_Intersects(p.geom, z.geom) GROUP BY z.id ORDER BY z.id"),
    ("ST_DWithin filter (radius 2)",
     "SELECT count(*), round(sum(fare)::numeric, 6) FROM pts "
     "WHERE ST_DWithin(geom, ST_MakePoint(50, 50), 2)"),
    ("ST_DWithin filter (radius 20)",
     "SELECT count(*), round(sum(fare)::numeric, 6) FROM pts "
     "WHERE ST_DWithin(geom, ST_MakePoint(50, 50), 20)"),
]


def same(a, b):
    """equal rows, sums of floats within 1e-12 relative (their order of
    addition differs between plans)"""
    if len(a) != len(b):
        return False
    for ra, rb in zip(a, b):
        for x, y in zip(ra, rb):
            if isinstance(x, int) or x is None or y is None:
                if x != y:
                    return False
            elif abs(float(x) - float(y)) > 1e-12 * max(abs(float(x)), abs(float(y))):
                return False
    return True


def timed(conn, sql):
    best = None
    rows = conn.execute(sql).fetchall()
    for _ in range(REPS):
        t = time.perf_counter()
        rows = conn.execute(sql).fetchall()
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    return best, rows


def explain(conn, sql):
    return "\n".join(r[0] for r in conn.execute(
        "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + sql).fetchall())


def shapely_counts(conn):
    import numpy as np
    import shapely
    zid, zwkb = zip(*conn.execute("SELECT id, ST_AsBinary(geom) FROM zones ORDER BY id"))
    pwkb = [r[0] for r in conn.execute("SELECT ST_AsBinary(geom) FROM pts")]
    polys = shapely.from_wkb(list(zwkb))
    pts = shapely.from_wkb(pwkb)
    t = time.perf_counter()
    tree = shapely.STRtree(polys)
    pi, zi = tree.query(pts, predicate="within")
    counts = np.bincount(zi, minlength=len(polys))
    dt = time.perf_counter() - t
    return dt, [(zid[i], int(c)) for i, c in enumerate(counts) if c > 0]


def main():
    npoints, npolys, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    conn = psycopg.connect(autocommit=True)
    t = time.perf_counter()
    setup(conn, npoints, npolys)
    setup_arrow(conn)
    gen = time.perf_counter() - t
    workers = conn.execute("SHOW max_parallel_workers_per_gather").fetchone()[0]
    lines = [
        "# Spatial joins and filters: PostGIS with GiST vs pg_warp (CPU, heap and "
        "GeoArrow) vs shapely",
        "",
        "- Date: %s; machine: %s (%s, %d CPUs), no GPU" % (
            time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), platform.node(),
            platform.processor() or platform.machine(), os.cpu_count()),
        "- Data (synthetic): %d clustered points x %d polygons (Voronoi cells, "
        "every 5th with a hole, every 7th a multipolygon); generated in %.0f s" % (
            npoints, npolys, gen),
        "- Command: `BENCH_REPS=%d bench/postgis/run.sh %d %d`" % (REPS, npoints, npolys),
        "- max_parallel_workers_per_gather = %s for every column.  PostGIS: GiST indexes on "
        "both geometry columns.  pg_warp: CPU (the backend and its parallel workers); "
        "heap: the same table; Arrow: the points dumped by `pgwarp dump` as geoarrow.point "
        "and read through arrow_fdw.  Times are the best of %d runs after a warm-up"
        % (workers, REPS),
        "",
        "| query | PostGIS (GiST) | pg_warp CPU, heap | speed-up | pg_warp CPU, Arrow | "
        "speed-up | answers | pairs to PostGIS |",
        "|---|---:|---:|---:|---:|---:|---|---:|",
    ]
    plans = []
    answers = {}
    for name, sql in QUERIES:
        conn.execute("SET pg_warp.enabled = off")
        t_pg, want = timed(conn, sql)
        conn.execute("SET pg_warp.enabled = on")
        t_w, got = timed(conn, sql)
        plan = explain(conn, sql)
        asql = sql.replace("FROM pts", "FROM pts_arrow")
        t_a, got_a = timed(conn, asql)
        aplan = explain(conn, asql)
        checks = [ln.split(":")[1].strip() for ln in plan.splitlines()
                  if "Pairs Checked By PostGIS" in ln]
        checks = [str(sum(int(c) for c in checks))] if checks else []
        lines.append("| %s | %.3f s | %.3f s | %.1fx | %.3f s | %.1fx | %s | %s |" % (
            name, t_pg, t_w, t_pg / t_w, t_a, t_pg / t_a,
            "equal" if same(got, want) and same(got_a, want) else "DIFFERENT",
            checks[0] if checks else "(not offloaded)"))
        plans.append((name, plan))
        plans.append((name + ", Arrow", aplan))
        answers[sql] = want
        print(lines[-1], flush=True)
        if not same(got, want) or not same(got_a, want):
            print("DIFFERENT ANSWERS for %s" % name, file=sys.stderr)
    try:
        want = answers[QUERIES[0][1]]
        t_sh, got = shapely_counts(conn)
        lines += ["", "shapely %s STRtree (build + vectorised `within` query + bincount, "
                  "data already decoded): %.3f s for the count-per-polygon join; counts %s "
                  "PostGIS's" % (__import__("shapely").__version__, t_sh,
                                 "equal to" if got == want else "DIFFERENT from")]
    except ImportError:
        lines += ["", "shapely not installed: no shapely figure"]
    lines += ["", "## Plans (pg_warp on, EXPLAIN ANALYZE)", ""]
    for name, plan in plans:
        lines += ["%s:" % name, "```", plan, "```", ""]
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote", out)


if __name__ == "__main__":
    main()
