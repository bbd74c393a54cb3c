"""Spatial joins over PostGIS geometry (WarpSpatialJoin) against PostGIS.

Every query runs twice: with pg_warp.enabled = off (PostgreSQL and PostGIS
alone: the oracle) and on (WarpSpatialJoin, whose plan is checked), and the
rows must be identical.  The data is adversarial: points exactly on shared
edges, on vertices, on hole boundaries and inside holes, multipolygons,
Voronoi cells (edges at arbitrary angles, so points near them are within
rounding distance), NULLs, EMPTY geometries, a line among the polygons, 3-D
points, and a point of another SRID.
"""
import os
import random

import pytest

import psycopg
from pwhelpers import pg_dsn

DBNAME = "pgwarp_gis_%d" % os.getpid()

PREDICATES = [
    ("contains", "ST_Contains(z.geom, p.geom)"),
    ("within", "ST_Within(p.geom, z.geom)"),
    ("covers", "ST_Covers(z.geom, p.geom)"),
    ("coveredby", "ST_CoveredBy(p.geom, z.geom)"),
    ("intersects", "ST_Intersects(z.geom, p.geom)"),
    ("intersects_rev", "ST_Intersects(p.geom, z.geom)"),
    ("dwithin", "ST_DWithin(z.geom, p.geom, 0.25)"),
    ("dwithin_zero", "ST_DWithin(p.geom, z.geom, 0)"),
    ("overlaps_box", "z.geom && p.geom"),
]


def _dsn(dbname):
    return pg_dsn() + " dbname=" + dbname


def postgis_available(conn):
    return conn.execute(
        "SELECT count(*) FROM pg_available_extensions WHERE name = 'postgis'").fetchone()[0] > 0


@pytest.fixture(scope="module")
def gis():
    admin = psycopg.connect(pg_dsn(), autocommit=True)
    if not postgis_available(admin):
        admin.close()
        pytest.skip("PostGIS is not installed in this PostgreSQL (postgresql-15-postgis-3); "
                    "the spatial join needs it")
    admin.execute("DROP DATABASE IF EXISTS %s" % DBNAME)
    admin.execute("CREATE DATABASE %s" % DBNAME)
    conn = psycopg.connect(_dsn(DBNAME), autocommit=True)
    conn.execute("CREATE EXTENSION postgis")
    conn.execute("CREATE EXTENSION pg_warp")
    make_data(conn)
    yield conn
    conn.close()
    admin.execute("DROP DATABASE IF EXISTS %s" % DBNAME)
    admin.close()


def make_data(conn):
    rnd = random.Random(35)
    conn.execute("SET pg_warp.enabled = off")
    conn.execute("CREATE TABLE zones (id int PRIMARY KEY, name text, geom geometry)")
    conn.execute("CREATE TABLE pts (id int PRIMARY KEY, v float8, geom geometry)")
    # unit squares on an 8 x 8 integer grid; every third one with a square
    # hole [x+0.25, x+0.75]^2; pairs of far squares as multipolygons
    zid = 0
    for i in range(8):
        for j in range(8):
            zid += 1
            sq = "(%d %d,%d %d,%d %d,%d %d,%d %d)" % (i, j, i + 1, j, i + 1, j + 1, i, j + 1, i, j)
            if zid % 3 == 0:
                hole = "(%g %g,%g %g,%g %g,%g %g,%g %g)" % (
                    i + .25, j + .25, i + .25, j + .75, i + .75, j + .75, i + .75, j + .25,
                    i + .25, j + .25)
                wkt = "POLYGON(%s,%s)" % (sq, hole)
            elif zid % 7 == 0:
                wkt = "MULTIPOLYGON((%s),((%d %d,%d %d,%d %d,%d %d)))" % (
                    sq, i + 20, j, i + 21, j, i + 20, j + 1, i + 20, j)
            else:
                wkt = "POLYGON(%s)" % sq
            conn.execute("INSERT INTO zones VALUES (%s, %s, ST_GeomFromText(%s))",
                         (zid, "z%d" % zid, wkt))
    # Voronoi cells of random sites: edges at arbitrary angles
    sites = ",".join("%r %r" % (rnd.uniform(30, 40), rnd.uniform(0, 10)) for _ in range(40))
    conn.execute("""
        INSERT INTO zones
        SELECT 1000 + row_number() OVER (), 'v', g FROM (
            SELECT (ST_Dump(ST_VoronoiPolygons(ST_GeomFromText('MULTIPOINT(%s)'), 0,
                ST_MakeEnvelope(30, 0, 40, 10)))).geom AS g) d""" % sites)
    conn.execute("""UPDATE zones SET geom = ST_Intersection(geom, ST_MakeEnvelope(30, 0, 40, 10))
                    WHERE name = 'v'""")
    # awkward build rows: NULL, EMPTY, a line, an invalid bow-tie
    conn.execute("INSERT INTO zones VALUES (2001, 'null', NULL)")
    conn.execute("INSERT INTO zones VALUES (2002, 'empty', 'POLYGON EMPTY'::geometry)")
    conn.execute("INSERT INTO zones VALUES (2003, 'line', 'LINESTRING(0 0, 8 8)'::geometry)")
    conn.execute("INSERT INTO zones VALUES (2004, 'bowtie', "
                 "'POLYGON((10 0, 12 2, 12 0, 10 2, 10 0))'::geometry)")
    pid = 0
    rows = []

    def add(x, y):
        nonlocal pid
        pid += 1
        rows.append((pid, rnd.uniform(-5, 5), "POINT(%r %r)" % (x, y)))
    for _ in range(3000):
        add(rnd.uniform(-1, 9), rnd.uniform(-1, 9))
    for _ in range(1500):
        add(rnd.uniform(29, 41), rnd.uniform(-1, 11))
    for _ in range(300):               # near the bow-tie and the multipolygons' parts
        add(rnd.uniform(9.5, 12.5), rnd.uniform(-0.5, 2.5))
        add(rnd.uniform(19, 30), rnd.uniform(-1, 9))
    for i in range(9):                 # vertices, edge midpoints, hole corners and edges
        for j in range(9):
            add(i, j)
            add(i + 0.5, j)
            add(i, j + 0.5)
            add(i + 0.25, j + 0.25)
            add(i + 0.25, j + 0.5)
            add(i + 0.5, j + 0.5)       # hole centres
    with conn.cursor() as cur:
        cur.executemany("INSERT INTO pts VALUES (%s, %s, ST_GeomFromText(%s))", rows)
    # Voronoi vertices and edge points (on the cells' edges, up to rounding)
    conn.execute("""
        INSERT INTO pts
        SELECT 100000 + row_number() OVER (), 0, g FROM (
            SELECT DISTINCT (ST_DumpPoints(geom)).geom AS g FROM zones WHERE name = 'v'
            UNION ALL
            SELECT ST_LineInterpolatePoint(ST_MakeLine(a, b), f) FROM (
                SELECT d.geom AS a, lead(d.geom) OVER (PARTITION BY z.id ORDER BY d.path) AS b
                FROM zones z, LATERAL ST_DumpPoints(ST_ExteriorRing(z.geom)) d
                WHERE z.name = 'v') e, (VALUES (0.5), (0.25), (0.1)) f(f) WHERE b IS NOT NULL) s""")
    conn.execute("INSERT INTO pts VALUES (200001, 1, NULL)")
    conn.execute("INSERT INTO pts VALUES (200002, 1, 'POINT EMPTY'::geometry)")
    conn.execute("INSERT INTO pts VALUES (200003, 1, 'POINT Z (0.5 0.5 3)'::geometry)")
    conn.execute("INSERT INTO pts VALUES (200004, 1, 'LINESTRING(0.5 0.5, 1.5 0.5)'::geometry)")
    conn.execute("INSERT INTO pts VALUES (200005, 1, 'MULTIPOINT(0.5 0.5, 3 3)'::geometry)")
    conn.execute("ANALYZE zones")
    conn.execute("ANALYZE pts")
    conn.execute("RESET pg_warp.enabled")


def both(conn, sql):
    """(rows with pg_warp off, rows with it on, EXPLAIN with it on)"""
    conn.execute("SET pg_warp.enabled = off")
    want = conn.execute(sql).fetchall()
    conn.execute("SET pg_warp.enabled = on")
    plan = "\n".join(r[0] for r in conn.execute("EXPLAIN (VERBOSE) " + sql).fetchall())
    got = conn.execute(sql).fetchall()
    return want, got, plan


@pytest.mark.parametrize("name,pred", PREDICATES, ids=[p[0] for p in PREDICATES])
def test_join_pairs_equal_postgis(gis, name, pred):
    sql = "SELECT p.id, z.id FROM pts p JOIN zones z ON %s ORDER BY 1, 2" % pred
    want, got, plan = both(gis, sql)
    assert "WarpSpatialJoin" in plan, plan
    assert len(want) > 100
    assert got == want


@pytest.mark.parametrize("name,pred", PREDICATES[:3], ids=[p[0] for p in PREDICATES[:3]])
def test_count_per_polygon(gis, name, pred):
    sql = ("SELECT z.name, count(*), sum(p.v) FROM pts p JOIN zones z ON %s "
           "GROUP BY z.name ORDER BY 1" % pred)
    want, got, plan = both(gis, sql)
    assert "WarpSpatialJoin" in plan, plan
    assert [r[:2] for r in got] == [r[:2] for r in want]
    for g, w in zip(got, want):
        assert g[2] == pytest.approx(w[2], rel=1e-9, abs=1e-9)


def test_boundary_points_go_to_postgis(gis):
    """Points exactly on edges and vertices are decided by PostGIS: its
    calls are counted, and the boundary rule differs between predicates."""
    gis.execute("SET pg_warp.enabled = on")
    plan = "\n".join(r[0] for r in gis.execute(
        "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT count(*) FROM pts p "
        "JOIN zones z ON ST_Contains(z.geom, p.geom) WHERE z.id < 2000").fetchall())
    checks = [int(line.split(":")[1]) for line in plan.splitlines()
              if "Pairs Checked By PostGIS" in line]
    assert checks and checks[0] > 0, plan
    probe = [int(line.split(":")[1]) for line in plan.splitlines() if "Probe Rows:" in line]
    assert checks[0] < probe[0], plan
    n_contains = gis.execute("SELECT count(*) FROM pts p JOIN zones z "
                             "ON ST_Contains(z.geom, p.geom)").fetchone()[0]
    n_covers = gis.execute("SELECT count(*) FROM pts p JOIN zones z "
                           "ON ST_Covers(z.geom, p.geom)").fetchone()[0]
    assert n_covers > n_contains


def test_other_join_quals_and_filters(gis):
    sql = ("SELECT p.id, z.id FROM pts p JOIN zones z ON ST_Intersects(z.geom, p.geom) "
           "AND p.v > z.id / 100.0 - 3 WHERE z.id < 1000 AND p.id % 2 = 0 ORDER BY 1, 2")
    want, got, plan = both(gis, sql)
    assert "WarpSpatialJoin" in plan, plan
    assert got == want


def test_dwithin_parameter(gis):
    gis.execute("SET pg_warp.enabled = off")
    sql = ("SELECT p.id, z.id FROM pts p JOIN zones z ON ST_DWithin(z.geom, p.geom, %s) "
           "ORDER BY 1, 2")
    for r in (0.0, 0.1, 1.5, -1.0, float("nan")):
        gis.execute("SET pg_warp.enabled = off")
        try:
            want = gis.execute(sql, (r,)).fetchall()
        except psycopg.Error as e:
            want = ("error", e.sqlstate, str(e).splitlines()[0])
        gis.execute("SET pg_warp.enabled = on")
        try:
            got = gis.execute(sql, (r,)).fetchall()
        except psycopg.Error as e:
            got = ("error", e.sqlstate, str(e).splitlines()[0])
        assert got == want, r


def test_mixed_srid_is_postgis_error(gis):
    gis.execute("CREATE TEMP TABLE srid_pts AS SELECT * FROM pts WHERE id < 50")
    gis.execute("INSERT INTO srid_pts VALUES (99999, 0, 'SRID=4326;POINT(0.5 0.5)')")
    gis.execute("ANALYZE srid_pts")
    sql = "SELECT count(*) FROM srid_pts p JOIN zones z ON ST_Contains(z.geom, p.geom)"
    res = []
    for on in ("off", "on"):
        gis.execute("SET pg_warp.enabled = %s" % on)
        with pytest.raises(psycopg.Error) as ei:
            gis.execute(sql).fetchall()
        res.append((ei.value.sqlstate, str(ei.value).splitlines()[0]))
    assert res[0] == res[1]


def test_geography_stays_on_postgresql(gis):
    sql = ("SELECT count(*) FROM pts p JOIN zones z ON "
           "ST_DWithin(z.geom::geography, p.geom::geography, 1000) "
           "WHERE z.id < 3 AND p.id < 200")
    want, got, plan = both(gis, sql)
    assert "WarpSpatialJoin" not in plan
    assert got == want


def test_gpu_mode_refuses_with_reason(gis):
    gis.execute("SET pg_warp.mode = gpu")
    try:
        plan = "\n".join(r[0] for r in gis.execute(
            "EXPLAIN (VERBOSE) SELECT count(*) FROM pts p JOIN zones z "
            "ON ST_Contains(z.geom, p.geom)").fetchall())
    finally:
        gis.execute("RESET pg_warp.mode")
    assert "WarpSpatialJoin" not in plan
    assert "spatial joins run on the CPU" in plan


def test_without_postgis(gis):
    """A database without PostGIS: pg_warp works, nothing is recognised,
    and a user function that merely shares a PostGIS name is left alone."""
    admin = psycopg.connect(pg_dsn(), autocommit=True)
    name = DBNAME + "_plain"
    admin.execute("DROP DATABASE IF EXISTS %s" % name)
    admin.execute("CREATE DATABASE %s" % name)
    try:
        with psycopg.connect(_dsn(name), autocommit=True) as c:
            c.execute("CREATE EXTENSION pg_warp")
            c.execute("CREATE FUNCTION st_contains(a int, b int) RETURNS bool "
                      "LANGUAGE sql IMMUTABLE AS 'SELECT a > b'")
            c.execute("CREATE TABLE a AS SELECT g AS x FROM generate_series(1, 200) g")
            c.execute("CREATE TABLE b AS SELECT g AS y FROM generate_series(1, 100) g")
            sql = "SELECT count(*) FROM a JOIN b ON st_contains(a.x, b.y)"
            c.execute("SET pg_warp.enabled = off")
            want = c.execute(sql).fetchall()
            c.execute("SET pg_warp.enabled = on")
            plan = "\n".join(r[0] for r in c.execute("EXPLAIN " + sql).fetchall())
            assert "WarpSpatialJoin" not in plan
            assert c.execute(sql).fetchall() == want
    finally:
        admin.execute("DROP DATABASE IF EXISTS %s" % name)
        admin.close()


FILTERS = [
    ("dwithin_point", "ST_DWithin(p.geom, ST_MakePoint(%s, %s), 1.0)" % (3.5, 3.5)),
    ("dwithin_vertex", "ST_DWithin(ST_MakePoint(4, 4), p.geom, 0.5)"),
    ("contains_const", "ST_Contains('POLYGON((0 0, 4 0, 4 4, 0 4, 0 0),"
                       "(1 1, 1 2, 2 2, 2 1, 1 1))'::geometry, p.geom)"),
    ("covers_const", "ST_Covers('POLYGON((0 0, 4 0, 4 4, 0 4, 0 0))'::geometry, p.geom)"),
    ("within_const", "ST_Within(p.geom, (SELECT geom FROM zones WHERE id = 1004))"),
    ("intersects_multi", "ST_Intersects(p.geom, 'MULTIPOLYGON(((0 0, 2 0, 0 2, 0 0)),"
                         "((5 5, 7 5, 7 7, 5 5)))'::geometry)"),
    ("box", "p.geom && ST_MakeEnvelope(1, 1, 3.5, 2.5)"),
]


@pytest.mark.parametrize("name,pred", FILTERS, ids=[f[0] for f in FILTERS])
def test_filter_rows_equal_postgis(gis, name, pred):
    sql = "SELECT p.id, p.v FROM pts p WHERE %s AND p.id %% 5 <> 1 ORDER BY 1" % pred
    want, got, plan = both(gis, sql)
    assert len(want) > 20
    assert got == want
    # a subquery is PostgreSQL's to run; && costs PostgreSQL one operator
    # per row, no more than the node's probe, so the planner keeps its scan
    if name not in ("within_const", "box"):
        assert "WarpSpatialFilter" in plan, plan


def test_filter_count_with_parameter(gis):
    sql = "SELECT count(*) FROM pts WHERE ST_DWithin(geom, ST_MakePoint(%s, %s), %s)"
    for args in ((1.0, 1.0, 0.5), (33.3, 5.5, 2.0), (1.0, 1.0, 0.0), (0.5, 0.5, -1.0)):
        res = []
        for on in ("off", "on"):
            gis.execute("SET pg_warp.enabled = %s" % on)
            try:
                res.append(gis.execute(sql, args).fetchall())
            except psycopg.Error as e:
                res.append(("error", e.sqlstate, str(e).splitlines()[0]))
        assert res[0] == res[1], args
