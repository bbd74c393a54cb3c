"""GeoArrow columns: arrow_fdw reads geoarrow.point and geoarrow.wkb as
PostGIS geometry, `pgwarp dump` writes geometry columns as GeoArrow, and the
spatial join runs over Arrow point columns.

Oracles: PostGIS itself (ST_AsBinary, ST_AsEWKB, ST_GeomFromWKB, ST_MakePoint
and every predicate with pg_warp.enabled = off on heap tables) and pyarrow
(what the files hold).  The geometry is adversarial: EMPTY, NULL, -0, huge
and tiny coordinates, polygons with holes, multipolygons, collections, Z and
M values, mixed SRIDs.
"""
import json
import math
import os
import random
import struct

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

import psycopg
from pwhelpers import pg_dsn, run_pgwarp
from test_postgis_join import postgis_available

DBNAME = "pgwarp_geoarrow_%d" % os.getpid()


def _dsn(dbname):
    return pg_dsn() + " dbname=" + dbname


@pytest.fixture(scope="module")
def gis(module_scratch):
    admin = psycopg.connect(pg_dsn(), autocommit=True)
    if not postgis_available(admin):
        admin.close()
        pytest.skip("PostGIS is not installed in this PostgreSQL (postgresql-15-postgis-3)")
    admin.execute("DROP DATABASE IF EXISTS %s" % DBNAME)
    admin.execute("CREATE DATABASE %s" % DBNAME)
    conn = psycopg.connect(_dsn(DBNAME), autocommit=True)
    conn.execute("CREATE EXTENSION postgis")
    conn.execute("CREATE EXTENSION pg_warp")
    make_heap(conn)
    conn.scratch = module_scratch
    yield conn
    conn.close()
    admin.execute("DROP DATABASE IF EXISTS %s" % DBNAME)
    admin.close()


POINTS = [(0.0, 0.0), (-0.0, 1.5), (1e300, -1e300), (5e-324, -2.2250738585072014e-308),
          (-122.4194155, 37.7749295), (1.0, 2.0), (math.nan, math.nan)]

OTHER_WKT = [
    "POLYGON((0 0, 10 0, 10 10, 0 10, 0 0), (2 2, 2 4, 4 4, 4 2, 2 2))",
    "MULTIPOLYGON(((0 0, 1 0, 1 1, 0 0)), ((5 5, 6 5, 6 6, 5 5), (5.2 5.1, 5.8 5.1, 5.8 5.5, 5.2 5.1)))",
    "LINESTRING(0 0, 1 1, 2 0)",
    "GEOMETRYCOLLECTION(POINT(1 2), LINESTRING(0 0, 3 3))",
    "POLYGON EMPTY",
    "POINT EMPTY",
    "MULTIPOINT((1 1), (2 2))",
    "POINT(3 4)",
]
ZM_WKT = ["POINT Z (1 2 3)", "POINT M (1 2 4)",
          "POLYGON ZM ((0 0 1 2, 1 0 1 2, 1 1 1 2, 0 0 1 2))"]


def make_heap(conn):
    conn.execute("CREATE TABLE hpt (id int PRIMARY KEY, g geometry(Point, 4326))")
    for i, (x, y) in enumerate(POINTS):
        if math.isnan(x):
            conn.execute("INSERT INTO hpt VALUES (%s, 'SRID=4326;POINT EMPTY')", (i,))
        else:
            conn.execute("INSERT INTO hpt VALUES (%s, ST_SetSRID(ST_MakePoint(%s, %s), 4326))",
                         (i, x, y))
    conn.execute("INSERT INTO hpt VALUES (100, NULL)")
    conn.execute("CREATE TABLE hgeo (id int PRIMARY KEY, g geometry(Geometry, 3857))")
    for i, wkt in enumerate(OTHER_WKT):
        conn.execute("INSERT INTO hgeo VALUES (%s, ST_GeomFromText(%s, 3857))", (i, wkt))
    conn.execute("INSERT INTO hgeo VALUES (100, NULL)")
    # unconstrained, one SRID in the data (2154: EPSG), and one custom SRID
    conn.execute("CREATE TABLE hfree (id int, g geometry)")
    conn.execute("INSERT INTO hfree SELECT id, ST_SetSRID(g, 2154) FROM hgeo")
    for i, wkt in enumerate(ZM_WKT):
        conn.execute("INSERT INTO hfree VALUES (%s, ST_GeomFromText(%s, 2154))", (50 + i, wkt))
    conn.execute("CREATE TABLE hmixed (id int, g geometry)")
    conn.execute("INSERT INTO hmixed VALUES (1, 'SRID=4326;POINT(1 2)'), "
                 "(2, 'SRID=3857;POINT(1 2)')")
    conn.execute("CREATE TABLE hnosrid (id int, g geometry)")
    conn.execute("INSERT INTO hnosrid VALUES (1, 'POINT(1 2)'), (2, 'LINESTRING(0 0, 1 1)')")


def dump(conn, table, path):
    res = run_pgwarp("dump", "-q", "-d", _dsn(DBNAME), "-t", table, "-o", path)
    return res


def ewkb_rows(conn, sql):
    return [(r[0], None if r[1] is None else bytes(r[1])) for r in conn.execute(sql).fetchall()]


def import_table(conn, name, path):
    conn.execute("DROP FOREIGN TABLE IF EXISTS %s" % name)
    conn.execute("IMPORT FOREIGN SCHEMA %s FROM SERVER arrow_fdw INTO public "
                 "OPTIONS (file '%s')" % (name, path))


def column_type(conn, table, col):
    return conn.execute("SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                        "WHERE attrelid = %s::regclass AND attname = %s",
                        (table, col)).fetchone()[0]


# ------------------------------------------------------------- pgwarp dump

def test_dump_points_as_geoarrow_point(gis):
    path = os.path.join(gis.scratch, "hpt.arrow")
    res = dump(gis, "hpt", path)
    assert res.rc == 0, res.err
    t = ipc.open_file(path).read_all()
    f = t.schema.field("g")
    assert f.type == pa.struct([("x", pa.float64()), ("y", pa.float64())])
    meta = {k.decode(): v.decode() for k, v in f.metadata.items()}
    assert meta["ARROW:extension:name"] == "geoarrow.point"
    assert json.loads(meta["ARROW:extension:metadata"]) == {"crs": "EPSG:4326"}
    want = gis.execute("SELECT id, ST_X(g), ST_Y(g), ST_IsEmpty(g) FROM hpt").fetchall()
    got = dict(zip(t.column("id").to_pylist(), t.column("g").to_pylist()))
    assert len(got) == len(want)
    for i, x, y, empty in want:
        if x is None and not empty:
            assert got[i] is None
        elif empty:
            assert math.isnan(got[i]["x"]) and math.isnan(got[i]["y"])
        else:
            assert struct.pack("<dd", got[i]["x"], got[i]["y"]) == struct.pack("<dd", x, y)


@pytest.mark.parametrize("table,srid,crs", [("hgeo", 3857, {"crs": "EPSG:3857"}),
                                            ("hfree", 2154, {"crs": "EPSG:2154"}),
                                            ("hnosrid", 0, {})])
def test_dump_geometry_as_wkb(gis, table, srid, crs):
    path = os.path.join(gis.scratch, table + ".arrow")
    res = dump(gis, table, path)
    assert res.rc == 0, res.err
    t = ipc.open_file(path).read_all()
    f = t.schema.field("g")
    assert f.type == pa.binary()
    meta = {k.decode(): v.decode() for k, v in f.metadata.items()}
    assert meta["ARROW:extension:name"] == "geoarrow.wkb"
    assert json.loads(meta["ARROW:extension:metadata"]) == crs
    want = dict(ewkb_rows(gis, "SELECT id, ST_AsBinary(g) FROM %s" % table))
    got = dict(zip(t.column("id").to_pylist(), t.column("g").to_pylist()))
    assert got == want


def test_dump_mixed_srid_is_an_error(gis):
    res = dump(gis, "hmixed", os.path.join(gis.scratch, "hmixed.arrow"))
    assert res.rc != 0
    assert 'column "g" has geometries of SRIDs 3857 and 4326' in res.err


# ------------------------------------------------ round trip through the FDW

@pytest.mark.parametrize("table", ["hpt", "hgeo", "hfree", "hnosrid"])
def test_round_trip_through_arrow_fdw(gis, table):
    path = os.path.join(gis.scratch, "rt_" + table + ".arrow")
    assert dump(gis, table, path).rc == 0
    import_table(gis, "rt_" + table, path)
    assert column_type(gis, "rt_" + table, "g") == column_type(gis, table, "g")
    sql = "SELECT id, ST_AsEWKB(g) FROM %s ORDER BY id"
    assert ewkb_rows(gis, sql % ("rt_" + table)) == ewkb_rows(gis, sql % table)
    # PostGIS's own equality and SRID on the values the FDW built
    n = gis.execute("SELECT count(*) FROM %s h JOIN rt_%s a USING (id) "
                    "WHERE ST_SRID(h.g) = ST_SRID(a.g) AND h.g ~= a.g "
                    "AND ST_MemSize(h.g) = ST_MemSize(a.g)" % (table, table)).fetchone()[0]
    assert n == gis.execute("SELECT count(*) FROM %s WHERE g IS NOT NULL" % table).fetchone()[0]


# ------------------------------------------------ files written by pyarrow

def geo_field(name, typ, ext, meta):
    md = {"ARROW:extension:name": ext}
    if meta is not None:
        md["ARROW:extension:metadata"] = meta if isinstance(meta, str) else json.dumps(meta)
    return pa.field(name, typ, metadata=md)


def write(path, fields, arrays):
    tbl = pa.Table.from_arrays(arrays, schema=pa.schema(fields))
    with ipc.new_file(path, tbl.schema) as w:
        w.write_table(tbl, max_chunksize=3)        # several batches


CRS_CASES = [
    ("none", None, 0),
    ("empty", {}, 0),
    ("epsg", {"crs": "EPSG:4326"}, 4326),
    ("epsg_lower", {"crs": "epsg:3857"}, 3857),
    ("crs84", {"crs": "OGC:CRS84"}, 4326),
    ("srid", {"crs": "2154", "crs_type": "srid"}, 2154),
    ("projjson", {"crs": {"type": "GeographicCRS", "name": "WGS 84",
                          "datum": {"name": "x", "ellipsoid": {"id": {"authority": "X",
                                                                      "code": 1}}},
                          "id": {"authority": "EPSG", "code": 4326}}}, 4326),
    ("planar", {"crs": "EPSG:3857", "edges": "planar"}, 3857),
]


def point_arrays(rnd, n):
    xs, ys, valid = [], [], []
    for i in range(n):
        if i % 7 == 3:
            xs.append(math.nan)
            ys.append(math.nan)
        else:
            xs.append(rnd.choice([rnd.uniform(-180, 180), -0.0, 1e-310, 1e308]))
            ys.append(rnd.uniform(-90, 90))
        valid.append(i % 5 != 2)
    return xs, ys, valid


@pytest.mark.parametrize("name,meta,srid", CRS_CASES, ids=[c[0] for c in CRS_CASES])
def test_pyarrow_points_and_wkb(gis, name, meta, srid):
    rnd = random.Random(name)
    n = 23
    xs, ys, valid = point_arrays(rnd, n)
    mask = pa.array([not v for v in valid])
    sep = pa.StructArray.from_arrays([pa.array(xs), pa.array(ys)], names=["x", "y"], mask=mask)
    flat = [c for xy in zip(xs, ys) for c in xy]
    inter = pa.FixedSizeListArray.from_arrays(pa.array(flat), 2, mask=mask)
    every = OTHER_WKT + ZM_WKT
    wkts = [every[i % len(every)] for i in range(n)]
    wkbs = [bytes(gis.execute("SELECT ST_AsBinary(ST_GeomFromText(%s))", (w,)).fetchone()[0])
            if valid[i] else None for i, w in enumerate(wkts)]
    # big-endian WKB too, for PostGIS's parser
    for i in range(0, n, 4):
        if wkbs[i] is not None:
            wkbs[i] = bytes(gis.execute("SELECT ST_AsBinary(ST_GeomFromText(%s), 'XDR')",
                                        (wkts[i],)).fetchone()[0])
    fields = [pa.field("id", pa.int32()),
              geo_field("sep", sep.type, "geoarrow.point", meta),
              geo_field("inter", inter.type, "geoarrow.point", meta),
              geo_field("wkb", pa.binary(), "geoarrow.wkb", meta)]
    path = os.path.join(gis.scratch, "py_%s.arrow" % name)
    write(path, fields, [pa.array(range(n), pa.int32()), sep, inter, pa.array(wkbs, pa.binary())])
    tname = "py_" + name
    import_table(gis, tname, path)
    pt_type = "geometry(Point,%d)" % srid if srid else "geometry(Point)"
    assert column_type(gis, tname, "sep") == pt_type
    assert column_type(gis, tname, "inter") == pt_type
    assert column_type(gis, tname, "wkb") == "geometry"
    got = gis.execute("SELECT id, ST_AsEWKB(sep), ST_AsEWKB(inter), ST_AsEWKB(wkb) FROM %s "
                      "ORDER BY id" % tname).fetchall()
    assert len(got) == n
    for i, s, it, w in got:
        if not valid[i]:
            assert s is None and it is None and w is None
            continue
        want_pt = gis.execute(
            "SELECT ST_AsEWKB(ST_SetSRID(ST_GeomFromWKB(%s), %s))",
            (struct.pack("<BIdd", 1, 1, xs[i], ys[i]), srid)).fetchone()[0]
        assert bytes(s) == bytes(want_pt)
        assert bytes(it) == bytes(want_pt)
        want_w = gis.execute("SELECT ST_AsEWKB(ST_GeomFromWKB(%s, %s))",
                             (wkbs[i], srid)).fetchone()[0]
        assert bytes(w) == bytes(want_w)


@pytest.mark.parametrize("meta", [{"crs": "PROJCS[\"x\"]", "crs_type": "wkt2:2019"},
                                  {"crs": "ESRI:102100"},
                                  {"crs": "EPSG:4326", "edges": "spherical"},
                                  "not json"],
                         ids=["wkt", "esri", "spherical", "bad_json"])
def test_unmapped_crs_stays_binary(gis, meta):
    path = os.path.join(gis.scratch, "unmapped.arrow")
    write(path, [geo_field("wkb", pa.binary(), "geoarrow.wkb", meta)],
          [pa.array([b"\x01\x01\x00\x00\x00" + struct.pack("<dd", 1, 2)])])
    import_table(gis, "unmapped", path)
    assert column_type(gis, "unmapped", "wkb") == "bytea"
    gis.execute("DROP FOREIGN TABLE unmapped")
    with pytest.raises(psycopg.Error) as e:
        gis.execute("CREATE FOREIGN TABLE unmapped (wkb geometry) SERVER arrow_fdw "
                    "OPTIONS (file '%s')" % path)
    assert e.value.sqlstate == "HV004"
    assert "cannot be read as geometry" in str(e.value.diag.message_detail)


def test_bad_wkb_is_postgis_error(gis):
    path = os.path.join(gis.scratch, "badwkb.arrow")
    write(path, [geo_field("wkb", pa.binary(), "geoarrow.wkb", {"crs": "EPSG:4326"})],
          [pa.array([b"\x01\x03\x00\x00\x00\xff\xff\xff\x7f", b"", b"\x07"])])
    import_table(gis, "badwkb", path)
    for i in range(3):
        with pytest.raises(psycopg.Error) as e:
            gis.execute("SELECT ST_AsText(wkb) FROM badwkb OFFSET %d LIMIT 1" % i).fetchall()
        assert 'GeoArrow WKB value of column "wkb"' in (e.value.diag.context or "")
    assert gis.execute("SELECT 1").fetchone() == (1,)


def test_ewkb_srid_must_match_the_crs(gis):
    path = os.path.join(gis.scratch, "ewkb.arrow")
    ewkb = bytes(gis.execute("SELECT ST_AsEWKB('SRID=3857;LINESTRING(0 0, 1 1)'::geometry)")
                 .fetchone()[0])
    write(path, [geo_field("wkb", pa.binary(), "geoarrow.wkb", {"crs": "EPSG:4326"})],
          [pa.array([ewkb])])
    import_table(gis, "ewkb", path)
    with pytest.raises(psycopg.Error) as e:
        gis.execute("SELECT * FROM ewkb").fetchall()
    assert e.value.sqlstate == "22023"
    assert "has SRID 3857, but the column's CRS is SRID 4326" in str(e.value)


def test_declared_typmod_is_enforced_by_postgis(gis):
    path = os.path.join(gis.scratch, "hgeo_typmod.arrow")
    assert dump(gis, "hgeo", path).rc == 0
    gis.execute("DROP FOREIGN TABLE IF EXISTS typmod_poly")
    gis.execute("CREATE FOREIGN TABLE typmod_poly (id int, g geometry(Polygon, 3857)) "
                "SERVER arrow_fdw OPTIONS (file '%s')" % path)
    assert gis.execute("SELECT count(*) FROM typmod_poly WHERE id = 0").fetchone() == (1,)
    with pytest.raises(psycopg.Error) as e:
        gis.execute("SELECT ST_AsText(g) FROM typmod_poly").fetchall()
    want = None
    try:
        gis.execute("SELECT ST_GeomFromText(%s, 3857)::geometry(Polygon, 3857)",
                    (OTHER_WKT[1],)).fetchall()
    except psycopg.Error as w:
        want = w
    assert want is not None and e.value.sqlstate == want.sqlstate
    assert "Geometry type (MultiPolygon) does not match column type (Polygon)" in str(e.value)


def test_without_postgis_stays_struct_and_bytea(gis):
    admin = psycopg.connect(pg_dsn(), autocommit=True)
    name = DBNAME + "_plain"
    admin.execute("DROP DATABASE IF EXISTS %s" % name)
    admin.execute("CREATE DATABASE %s" % name)
    path = os.path.join(gis.scratch, "hpt_plain.arrow")
    assert dump(gis, "hpt", path).rc == 0
    pypath = os.path.join(gis.scratch, "py_plain.arrow")
    write(pypath, [geo_field("inter", pa.list_(pa.float64(), 2), "geoarrow.point", {}),
                   geo_field("wkb", pa.binary(), "geoarrow.wkb", {})],
          [pa.array([[1.0, 2.0]], pa.list_(pa.float64(), 2)), pa.array([b"\x01"])])
    try:
        with psycopg.connect(_dsn(name), autocommit=True) as c:
            c.execute("CREATE EXTENSION pg_warp")
            import_table(c, "pts", path)
            assert column_type(c, "pts", "g") == "pts_g"
            rows = c.execute("SELECT id, (g).x, (g).y FROM pts ORDER BY id").fetchall()
            want = gis.execute("SELECT id, ST_X(g), ST_Y(g) FROM hpt ORDER BY id").fetchall()
            for (i, x, y), (wi, wx, wy) in zip(rows, want):
                assert i == wi and (x == wx or (x is not None and math.isnan(x)) or
                                    (x is None and wx is None))
            import_table(c, "py", pypath)
            assert column_type(c, "py", "inter") == "double precision[]"
            assert column_type(c, "py", "wkb") == "bytea"
            assert c.execute("SELECT inter, wkb FROM py").fetchone() == ([1.0, 2.0], b"\x01")
    finally:
        admin.execute("DROP DATABASE IF EXISTS %s" % name)
        admin.close()


# ------------------------------------- spatial join over an Arrow point column

@pytest.fixture(scope="module")
def arrow_pts(gis):
    rnd = random.Random(7)
    gis.execute("CREATE TABLE zones (id int PRIMARY KEY, geom geometry(Geometry, 4326))")
    for i in range(6):
        for j in range(6):
            sq = "(%d %d,%d %d,%d %d,%d %d,%d %d)" % (i, j, i + 1, j, i + 1, j + 1, i, j + 1, i, j)
            if (i + j) % 3 == 0:
                sq += ",(%g %g,%g %g,%g %g,%g %g,%g %g)" % (
                    i + .25, j + .25, i + .25, j + .75, i + .75, j + .75, i + .75, j + .25,
                    i + .25, j + .25)
            gis.execute("INSERT INTO zones VALUES (%s, ST_GeomFromText(%s, 4326))",
                        (i * 6 + j, "POLYGON(%s)" % sq))
    gis.execute("INSERT INTO zones VALUES (100, 'SRID=4326;POLYGON EMPTY'), (101, NULL)")
    gis.execute("CREATE TABLE apts_h (id int, v float8, g geometry(Point, 4326))")
    rows = []
    for k in range(4000):
        if k % 3 == 0:      # on grid lines, vertices and hole corners
            x = rnd.randrange(0, 25) / 4.0
            y = rnd.randrange(0, 25) / 4.0
        else:
            x, y = rnd.uniform(-0.5, 6.5), rnd.uniform(-0.5, 6.5)
        rows.append((k, rnd.uniform(0, 10), x, y))
    with gis.cursor() as cur:
        cur.executemany("INSERT INTO apts_h VALUES (%s, %s, ST_SetSRID(ST_MakePoint(%s, %s), 4326))",
                        rows)
    gis.execute("INSERT INTO apts_h VALUES (5000, 1, NULL), (5001, 1, 'SRID=4326;POINT EMPTY')")
    gis.execute("ANALYZE zones")
    path = os.path.join(gis.scratch, "apts.arrow")
    assert dump(gis, "apts_h", path).rc == 0
    import_table(gis, "apts", path)
    return gis


JOIN_PREDS = ["ST_Contains(z.geom, p.g)", "ST_Covers(z.geom, p.g)",
              "ST_Intersects(p.g, z.geom)", "ST_DWithin(z.geom, p.g, 0.1)", "z.geom && p.g"]


@pytest.mark.parametrize("pred", JOIN_PREDS)
def test_spatial_join_over_arrow_points(arrow_pts, pred):
    c = arrow_pts
    sql = ("SELECT z.id, count(*), sum(p.v) FROM apts p JOIN zones z ON %s "
           "GROUP BY z.id ORDER BY z.id" % pred)
    heap_sql = sql.replace("apts p", "apts_h p")
    c.execute("SET pg_warp.enabled = off")
    want = c.execute(heap_sql).fetchall()
    c.execute("SET pg_warp.enabled = on")
    plan = "\n".join(r[0] for r in c.execute("EXPLAIN " + sql).fetchall())
    got = c.execute(sql).fetchall()
    assert "WarpSpatialJoin" in plan, plan
    assert [(r[0], r[1]) for r in got] == [(r[0], r[1]) for r in want]
    for g, w in zip(got, want):
        assert math.isclose(g[2], w[2], rel_tol=1e-9)


@pytest.mark.parametrize("pred", ["ST_DWithin(p.g, ST_SetSRID(ST_MakePoint(3, 3), 4326), 1.0)",
                                  "ST_Contains('SRID=4326;POLYGON((1 1, 4 1, 4 4, 1 1))'::geometry, p.g)",
                                  "p.g && ST_MakeEnvelope(1, 1, 2.5, 2, 4326)"])
def test_spatial_filter_over_arrow_points(arrow_pts, pred):
    c = arrow_pts
    sql = "SELECT p.id FROM apts p WHERE %s ORDER BY 1" % pred
    c.execute("SET pg_warp.enabled = off")
    want = c.execute(sql.replace("apts p", "apts_h p")).fetchall()
    c.execute("SET pg_warp.enabled = on")
    plan = "\n".join(r[0] for r in c.execute("EXPLAIN " + sql).fetchall())
    got = c.execute(sql).fetchall()
    if "&&" not in pred:          # (PostgreSQL costs && as one operator)
        assert "WarpSpatialFilter" in plan, plan
    assert len(want) > 50
    assert got == want


def test_mixed_srid_probe_is_postgis_error(arrow_pts):
    c = arrow_pts
    path = os.path.join(c.scratch, "p3857.arrow")
    write(path, [geo_field("g", pa.struct([("x", pa.float64()), ("y", pa.float64())]),
                           "geoarrow.point", {"crs": "EPSG:3857"})],
          [pa.StructArray.from_arrays([pa.array([1.5]), pa.array([1.5])], names=["x", "y"])])
    import_table(c, "p3857", path)
    c.execute("SET pg_warp.enabled = on")
    with pytest.raises(psycopg.Error) as e:
        c.execute("SELECT count(*) FROM p3857 p JOIN zones z ON ST_Contains(z.geom, p.g)")
    assert "mixed SRID" in str(e.value)


PARALLEL = ["SET parallel_setup_cost = 0", "SET parallel_tuple_cost = 0",
            "SET min_parallel_table_scan_size = 0", "SET max_parallel_workers_per_gather = 2"]


@pytest.mark.parametrize("table", ["apts", "apts_h"])
@pytest.mark.parametrize("pred", ["ST_Contains(z.geom, p.g)", "ST_DWithin(p.g, z.geom, 0.05)"])
def test_parallel_probe(arrow_pts, table, pred):
    """Each parallel participant probes its share of the points against its
    own build side; the answer is PostGIS's."""
    c = arrow_pts
    sql = ("SELECT z.id, count(*) FROM %s p JOIN zones z ON %s GROUP BY z.id ORDER BY z.id"
           % (table, pred))
    c.execute("SET pg_warp.enabled = off")
    want = c.execute(sql.replace(table + " p", "apts_h p")).fetchall()
    c.execute("SET pg_warp.enabled = on")
    try:
        for s in PARALLEL:
            c.execute(s)
        plan = "\n".join(r[0] for r in c.execute("EXPLAIN (ANALYZE, VERBOSE) " + sql).fetchall())
        got = c.execute(sql).fetchall()
    finally:
        for s in PARALLEL:
            c.execute("RESET " + s.split()[1])
    assert "Gather" in plan and "WarpSpatialJoin" in plan, plan
    assert "each parallel participant probes its share" in plan, plan
    assert "Workers Launched: 0" not in plan, plan
    assert got == want


def test_parallel_filter(arrow_pts):
    c = arrow_pts
    sql = ("SELECT p.id FROM %s p WHERE ST_Covers('SRID=4326;POLYGON((1 1, 4 1, 4 4, 1 4, 1 1),"
           "(2 2, 2 3, 3 3, 3 2, 2 2))'::geometry, p.g) ORDER BY 1")
    c.execute("SET pg_warp.enabled = off")
    want = c.execute(sql % "apts_h").fetchall()
    c.execute("SET pg_warp.enabled = on")
    try:
        for s in PARALLEL:
            c.execute(s)
        for table in ("apts_h", "apts"):
            plan = "\n".join(r[0] for r in c.execute("EXPLAIN " + sql % table).fetchall())
            assert "Gather" in plan and "WarpSpatialFilter" in plan, plan
            assert c.execute(sql % table).fetchall() == want
    finally:
        for s in PARALLEL:
            c.execute("RESET " + s.split()[1])


def test_large_binary_dictionary_and_null_coordinate(gis):
    """LargeBinary and dictionary-encoded WKB read like Binary; a point whose
    x or y is null (inside a valid point) is an error, not a guess."""
    pt = bytes(gis.execute("SELECT ST_AsBinary('POLYGON((0 0, 1 0, 1 1, 0 0))'::geometry)")
               .fetchone()[0])
    dict_arr = pa.DictionaryArray.from_arrays(pa.array([0, 1, 0, None], pa.int32()),
                                              pa.array([pt, b"\x01\x01\x00\x00\x00" +
                                                        struct.pack("<dd", 5, 6)]))
    path = os.path.join(gis.scratch, "large.arrow")
    write(path, [geo_field("big", pa.large_binary(), "geoarrow.wkb", {"crs": "EPSG:4326"}),
                 geo_field("dict", dict_arr.type, "geoarrow.wkb", {"crs": "EPSG:4326"})],
          [pa.array([pt, None, pt, pt], pa.large_binary()), dict_arr])
    import_table(gis, "large", path)
    got = gis.execute("SELECT ST_AsEWKB(big), ST_AsEWKB(dict) FROM large").fetchall()
    want_poly = bytes(gis.execute("SELECT ST_AsEWKB(ST_GeomFromWKB(%s, 4326))", (pt,)).fetchone()[0])
    want_pt = bytes(gis.execute("SELECT ST_AsEWKB('SRID=4326;POINT(5 6)'::geometry)").fetchone()[0])
    assert [(None if a is None else bytes(a), None if b is None else bytes(b)) for a, b in got] == \
        [(want_poly, want_poly), (None, want_pt), (want_poly, want_poly), (want_poly, None)]
    path = os.path.join(gis.scratch, "nullxy.arrow")
    xs = pa.array([1.0, None])
    write(path, [geo_field("p", pa.struct([("x", pa.float64()), ("y", pa.float64())]),
                           "geoarrow.point", {})],
          [pa.StructArray.from_arrays([xs, pa.array([2.0, 3.0])], names=["x", "y"])])
    import_table(gis, "nullxy", path)
    with pytest.raises(psycopg.Error) as e:
        gis.execute("SELECT ST_AsText(p) FROM nullxy").fetchall()
    assert e.value.sqlstate == "22004"
    assert 'GeoArrow point in column "p" has a null coordinate' in str(e.value)
