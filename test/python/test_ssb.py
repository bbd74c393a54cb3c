"""pgwarp ssb gen / load: the Star Schema Benchmark data kit.

Generator: determinism across thread counts and batch sizes, cardinalities
(SF 0.01 and 0.1), key integrity, column domains and formulas (computed with
pyarrow/numpy from the files), .tbl and .arrow holding the same rows,
--cluster-by-date.  Loader: our .tbl files, dbgen-style files (trailing '|',
CRLF, a last line without newline, backslashes), arrow_fdw tables, errors.
Selectivity: each of the 13 queries in bench/ssb/queries, run as a count(*)
over its FROM/WHERE in PostgreSQL against the heap tables loaded at SF 0.1,
must select the fraction of lineorder that the SSB paper states.
"""
import datetime
import glob
import math
import os
import re
import shutil
import stat
import subprocess
import tempfile

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.ipc as ipc
import pytest

from pwhelpers import REPO, check_error_message, run_pgwarp

TABLES = ["lineorder", "customer", "supplier", "part", "date"]
QUERY_DIR = os.path.join(REPO, "bench", "ssb", "queries")

NATIONS = ["ALGERIA", "ARGENTINA", "BRAZIL", "CANADA", "EGYPT", "ETHIOPIA", "FRANCE",
           "GERMANY", "INDIA", "INDONESIA", "IRAN", "IRAQ", "JAPAN", "JORDAN", "KENYA",
           "MOROCCO", "MOZAMBIQUE", "PERU", "CHINA", "ROMANIA", "SAUDI ARABIA", "VIETNAM",
           "RUSSIA", "UNITED KINGDOM", "UNITED STATES"]
REGION_OF = dict(zip(NATIONS, ["AFRICA", "AMERICA", "AMERICA", "AMERICA", "MIDDLE EAST",
                               "AFRICA", "EUROPE", "EUROPE", "ASIA", "ASIA", "MIDDLE EAST",
                               "MIDDLE EAST", "ASIA", "MIDDLE EAST", "AFRICA", "AFRICA",
                               "AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST", "ASIA",
                               "EUROPE", "EUROPE", "AMERICA"]))

# varchar lengths of the schema (pg_type metadata and heap DDL)
STR_LEN = {
    "lo_orderpriority": 15, "lo_shipmode": 10,
    "c_name": 25, "c_address": 40, "c_city": 10, "c_nation": 15, "c_region": 12,
    "c_phone": 15, "c_mktsegment": 10,
    "s_name": 25, "s_address": 40, "s_city": 10, "s_nation": 15, "s_region": 12,
    "s_phone": 15,
    "p_name": 22, "p_mfgr": 6, "p_category": 7, "p_brand1": 9, "p_color": 11,
    "p_type": 25, "p_container": 10,
    "d_date": 18, "d_dayofweek": 9, "d_month": 9, "d_yearmonth": 7, "d_sellingseason": 12,
}


def counts_for(sf):
    part = 200000 * math.floor(1 + math.log2(sf)) if sf >= 1 else round(200000 * sf)
    return {"orders": round(1500000 * sf), "customer": round(30000 * sf),
            "supplier": round(2000 * sf), "part": part, "date": 2557}


def gen(out, sf, fmt="arrow", *extra, threads=2):
    r = run_pgwarp("ssb", "gen", "--sf", sf, "--format", fmt, "--out", out,
                   "--threads", threads, "--quiet", *extra, timeout=300)
    assert r.rc == 0, r.describe()
    return out


def read_arrow(d, t):
    with ipc.open_file(os.path.join(d, t + ".arrow")) as f:
        return f.read_all()


def read_tbl(d, t, schema):
    """A .tbl file through pyarrow's CSV reader (the trailing '|' makes one
    more, empty, column)."""
    names = schema.names + ["_trailing"]
    types = {f.name: f.type for f in schema}
    types["_trailing"] = pa.string()
    tab = pacsv.read_csv(
        os.path.join(d, t + ".tbl"),
        read_options=pacsv.ReadOptions(column_names=names),
        parse_options=pacsv.ParseOptions(delimiter="|", quote_char=False, escape_char=False),
        convert_options=pacsv.ConvertOptions(column_types=types, strings_can_be_null=False,
                                             quoted_strings_can_be_null=False))
    assert pc.all(pc.equal(tab["_trailing"], "")).as_py()
    return tab.drop_columns(["_trailing"])


def scratch_root():
    root = os.environ.get("PGWARP_TEST_DIR")
    if not root:
        root = os.path.join(tempfile.gettempdir(), "pgwarp-pytest-%d" % os.getuid())
        os.makedirs(root, exist_ok=True)
    return root


@pytest.fixture(scope="module")
def sf01():
    """SF 0.1, seed 0, both formats, in a directory the server can read."""
    d = tempfile.mkdtemp(prefix="ssb_sf01.", dir=scratch_root())
    os.chmod(d, 0o755)
    gen(d, 0.1, "arrow")
    gen(d, 0.1, "tbl")
    tabs = {t: read_arrow(d, t) for t in TABLES}
    yield d, tabs
    shutil.rmtree(d, ignore_errors=True)


# ------------------------------------------------------------ determinism

def test_deterministic_across_threads(scratch):
    dirs = []
    for t in (1, 2, 4):
        d = os.path.join(scratch, "t%d" % t)
        gen(d, 0.01, "arrow", threads=t)
        gen(d, 0.01, "tbl", threads=t)
        dirs.append(d)
    for t in TABLES:
        for ext in ("arrow", "tbl"):
            blobs = [open(os.path.join(d, "%s.%s" % (t, ext)), "rb").read() for d in dirs]
            assert blobs[0] == blobs[1] == blobs[2], "%s.%s differs across --threads" % (t, ext)
    # other batch sizes: the same rows, in more batches
    d = os.path.join(scratch, "b")
    gen(d, 0.01, "arrow", "--batch-rows", "10000", threads=3)
    with ipc.open_file(os.path.join(d, "lineorder.arrow")) as f:
        assert f.num_record_batches == math.ceil(f.read_all().num_rows / 10000)
        assert all(f.get_batch(i).num_rows == 10000 for i in range(f.num_record_batches - 1))
    for t in TABLES:
        assert read_arrow(d, t).equals(read_arrow(dirs[0], t))
    # another seed: other rows; the same seed again: the same
    d2 = os.path.join(scratch, "s7")
    gen(d2, 0.01, "arrow", "--seed", "7")
    assert not read_arrow(d2, "lineorder").equals(read_arrow(dirs[0], "lineorder"))
    assert read_arrow(d2, "date").equals(read_arrow(dirs[0], "date"))
    d3 = os.path.join(scratch, "s0")
    gen(d3, 0.01, "arrow", "--seed", "0", threads=1)
    assert open(os.path.join(d3, "lineorder.arrow"), "rb").read() == \
        open(os.path.join(dirs[0], "lineorder.arrow"), "rb").read()


# ----------------------------------------------------------- cardinalities

def check_cardinalities(tabs, sf):
    n = counts_for(sf)
    assert tabs["date"].num_rows == 2557
    for t in ("customer", "supplier", "part"):
        assert tabs[t].num_rows == n[t], t
    lo = tabs["lineorder"]
    ok = lo["lo_orderkey"].to_numpy()
    ln = lo["lo_linenumber"].to_numpy()
    # every order 1..N present, with lines 1..k (1 <= k <= 7)
    assert len(np.unique(ok)) == n["orders"]
    assert ok.min() == 1 and ok.max() == n["orders"]
    lines = np.bincount(ok)[1:]
    assert lines.min() >= 1 and lines.max() == 7
    order_start = np.concatenate([[True], ok[1:] != ok[:-1]])
    assert (ln[order_start] == 1).all()
    assert (ln[~order_start] == ln[np.flatnonzero(~order_start) - 1] + 1).all()
    # about 4 lines per order: 6,000,000 x SF rows (sd of the total 2 sqrt(N))
    expect = 4 * n["orders"]
    assert abs(lo.num_rows - expect) < 5 * 2 * math.sqrt(n["orders"]), (lo.num_rows, expect)


def test_cardinalities_sf001(scratch):
    gen(scratch, 0.01)
    check_cardinalities({t: read_arrow(scratch, t) for t in TABLES}, 0.01)


def test_cardinalities_sf01(sf01):
    check_cardinalities(sf01[1], 0.1)


# ------------------------------------------------------------- integrity

def test_key_integrity(sf01):
    _, tabs = sf01
    lo = tabs["lineorder"]
    for col, t, key in (("lo_custkey", "customer", "c_custkey"),
                        ("lo_partkey", "part", "p_partkey"),
                        ("lo_suppkey", "supplier", "s_suppkey"),
                        ("lo_orderdate", "date", "d_datekey")):
        keys = tabs[t][key]
        assert pc.count_distinct(keys).as_py() == len(keys), "%s not unique" % key
        missing = pc.sum(pc.invert(pc.is_in(lo[col], value_set=keys))).as_py()
        assert missing == 0, "%d values of %s have no %s row" % (missing, col, t)
    for t, key in (("customer", "c_custkey"), ("supplier", "s_suppkey"), ("part", "p_partkey")):
        assert tabs[t][key].to_pylist() == list(range(1, tabs[t].num_rows + 1))
    # every customer, supplier and part is referenced at SF 0.1? (not required;
    # but every date has orders: dates are spread evenly)
    assert pc.count_distinct(lo["lo_orderdate"]).as_py() == 2557


# --------------------------------------------------------------- domains

def all_days(n_extra=100):
    d0 = datetime.date(1992, 1, 1)
    return [d0 + datetime.timedelta(days=i) for i in range(2557 + n_extra)]


def key_of(d):
    return d.year * 10000 + d.month * 100 + d.day


def test_schema_and_string_lengths(sf01):
    _, tabs = sf01
    for t, tab in tabs.items():
        for f in tab.schema:
            md = {k.decode(): v.decode() for k, v in (f.metadata or {}).items()}
            if f.name in STR_LEN:
                assert f.type == pa.string(), f.name
                assert md["pg_type"] == "character varying(%d)" % STR_LEN[f.name]
                assert pc.max(pc.utf8_length(tab[f.name])).as_py() <= STR_LEN[f.name], f.name
            else:
                assert f.type == pa.int32(), f.name
                assert md["pg_type"] == "integer"
            assert tab[f.name].null_count == 0
    # batch statistics are written (min_values/max_values in the footer)
    with ipc.open_file(os.path.join(sf01[0], "lineorder.arrow")) as f:
        md = f.schema.field("lo_orderdate").metadata
    assert md[b"min_values"] == b"19920101" and md[b"max_values"] == b"19981231"


def test_lineorder_domains(sf01):
    _, tabs = sf01
    lo = {c: tabs["lineorder"][c].to_numpy(zero_copy_only=False)
          for c in tabs["lineorder"].column_names}
    n = len(lo["lo_orderkey"])
    for c, lo_v, hi_v in (("lo_quantity", 1, 50), ("lo_discount", 0, 10), ("lo_tax", 0, 8),
                          ("lo_linenumber", 1, 7), ("lo_shippriority", 0, 0)):
        assert lo[c].min() == lo_v and lo[c].max() == hi_v, c
        if hi_v > lo_v and c != "lo_linenumber":
            # uniform: every value about n/(hi-lo+1) times
            cnt = np.bincount(lo[c] - lo_v)
            assert len(cnt) == hi_v - lo_v + 1
            e = n / len(cnt)
            assert (np.abs(cnt - e) < 6 * math.sqrt(e)).all(), (c, cnt)
    assert set(np.unique(lo["lo_orderpriority"])) == {
        "1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"}
    assert set(np.unique(lo["lo_shipmode"])) == {
        "REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"}
    # prices (cents): TPC-H retail price of the part
    pk = lo["lo_partkey"].astype(np.int64)
    retail = 90000 + (pk // 10) % 20001 + 100 * (pk % 1000)
    ext = lo["lo_quantity"] * retail
    assert (lo["lo_extendedprice"] == ext).all()
    assert (lo["lo_revenue"] == ext * (100 - lo["lo_discount"]) // 100).all()
    assert (lo["lo_supplycost"] == 6 * retail // 10).all()
    per_line = ext * (100 + lo["lo_tax"]) * (100 - lo["lo_discount"]) // 10000
    totals = np.bincount(lo["lo_orderkey"], weights=per_line).astype(np.int64)
    assert (lo["lo_ordtotalprice"] == totals[lo["lo_orderkey"]]).all()
    # an order's lines share customer, date and priority
    ok = lo["lo_orderkey"]
    first = np.concatenate([[0], np.flatnonzero(ok[1:] != ok[:-1]) + 1])
    idx = np.repeat(first, np.diff(np.concatenate([first, [n]])))
    for c in ("lo_custkey", "lo_orderdate", "lo_orderpriority"):
        assert (lo[c] == lo[c][idx]).all(), c
    # commit date 30..90 days after the order date
    days = all_days()
    keys = np.array([key_of(d) for d in days])
    od = np.searchsorted(keys, lo["lo_orderdate"])
    cd = np.searchsorted(keys, lo["lo_commitdate"])
    assert (keys[cd] == lo["lo_commitdate"]).all()
    assert (cd - od).min() == 30 and (cd - od).max() == 90
    # orders spread evenly over the 2557 days
    orders_per_day = np.bincount(od[first], minlength=2557)
    assert orders_per_day.max() - orders_per_day.min() <= 1


def test_dimension_domains(sf01):
    _, tabs = sf01
    for t, p in (("customer", "c_"), ("supplier", "s_")):
        tab = tabs[t].to_pydict()
        nrows = tabs[t].num_rows
        for i in range(nrows):
            nat = tab[p + "nation"][i]
            city = tab[p + "city"][i]
            assert nat in REGION_OF
            assert tab[p + "region"][i] == REGION_OF[nat]
            assert city[:9] == nat[:9].ljust(9) and city[9].isdigit() and len(city) == 10
            assert re.fullmatch(r"%d-\d{3}-\d{3}-\d{4}" % (NATIONS.index(nat) + 10),
                                tab[p + "phone"][i])
            assert re.fullmatch(r"[A-Za-z0-9,.]{10,40}", tab[p + "address"][i])
        assert tab[p + "name"][:2] == ["%s#%09d" % (t.capitalize(), k) for k in (1, 2)]
        # balanced hierarchy: each nation 1/25 of the rows (+-1), each city of
        # a nation +-1 of the others
        nat_counts = np.unique(tab[p + "nation"], return_counts=True)[1]
        assert len(nat_counts) == 25 and nat_counts.max() - nat_counts.min() <= 1
        cities, ccount = np.unique(tab[p + "city"], return_counts=True)
        if nrows >= 250:
            assert len(cities) == 250 and ccount.max() - ccount.min() <= 1
    assert set(tabs["customer"]["c_mktsegment"].to_pylist()) == {
        "AUTOMOBILE", "BUILDING", "FURNITURE", "HOUSEHOLD", "MACHINERY"}
    part = tabs["part"].to_pydict()
    for i in range(tabs["part"].num_rows):
        m, c, b = part["p_mfgr"][i], part["p_category"][i], part["p_brand1"][i]
        assert re.fullmatch(r"MFGR#[1-5]", m)
        assert re.fullmatch(r"MFGR#[1-5][1-5]", c) and c.startswith(m)
        assert re.fullmatch(r"MFGR#[1-5][1-5](0[1-9]|[1-3][0-9]|40)", b) and b.startswith(c)
        assert 1 <= part["p_size"][i] <= 50
        assert len(part["p_name"][i].split(" ")) == 2
        assert len(part["p_type"][i].split(" ")) == 3
    brands, bcount = np.unique(part["p_brand1"], return_counts=True)
    assert len(brands) == 1000 and bcount.min() == bcount.max() == 20


def test_date_table(sf01):
    _, tabs = sf01
    d = tabs["date"].to_pydict()
    days = all_days(0)
    assert d["d_datekey"] == [key_of(x) for x in days]
    for i, x in enumerate(days):
        doy = x.timetuple().tm_yday
        assert d["d_date"][i] == "%s %d, %d" % (x.strftime("%B"), x.day, x.year)
        assert d["d_dayofweek"][i] == x.strftime("%A")
        assert d["d_month"][i] == x.strftime("%B")
        assert d["d_year"][i] == x.year
        assert d["d_yearmonthnum"][i] == x.year * 100 + x.month
        assert d["d_yearmonth"][i] == x.strftime("%b") + str(x.year)
        assert d["d_daynuminweek"][i] == (x.isoweekday() % 7) + 1   # Sunday = 1
        assert d["d_daynuminmonth"][i] == x.day
        assert d["d_daynuminyear"][i] == doy
        assert d["d_monthnuminyear"][i] == x.month
        assert d["d_weeknuminyear"][i] == (doy - 1) // 7 + 1
        last = (x + datetime.timedelta(days=1)).month != x.month
        assert d["d_lastdayinmonthfl"][i] == int(last)
        assert d["d_lastdayinweekfl"][i] == int(x.isoweekday() == 6)
        assert d["d_weekdayfl"][i] == int(x.isoweekday() <= 5)
        assert d["d_holidayfl"][i] in (0, 1)
        assert d["d_sellingseason"][i] in ("Christmas", "Winter", "Spring", "Summer", "Fall")


def test_tbl_and_arrow_same_rows(sf01):
    d, tabs = sf01
    for t in TABLES:
        text = read_tbl(d, t, tabs[t].schema)
        assert text.column_names == tabs[t].column_names
        for c in text.column_names:
            assert text[c].equals(tabs[t][c]), (t, c)
    # dbgen's text shape: every line ends with '|'
    with open(os.path.join(d, "supplier.tbl")) as f:
        lines = f.read().split("\n")
    assert lines[-1] == "" and all(l.endswith("|") and l.count("|") == 7 for l in lines[:-1])


def test_cluster_by_date(scratch, sf01):
    gen(scratch, 0.1, "arrow", "--cluster-by-date", "--batch-rows", "100000")
    c = read_arrow(scratch, "lineorder")
    od = c["lo_orderdate"].to_numpy()
    assert (np.diff(od) >= 0).all()
    # the same rows as the unclustered file
    s = c.sort_by([("lo_orderkey", "ascending"), ("lo_linenumber", "ascending")])
    assert s.equals(sf01[1]["lineorder"])
    for t in ("date", "customer", "supplier", "part"):
        assert read_arrow(scratch, t).equals(sf01[1][t])
    # batches cover disjoint, increasing date ranges
    with ipc.open_file(os.path.join(scratch, "lineorder.arrow")) as f:
        ranges = [(pc.min(f.get_batch(i)["lo_orderdate"]).as_py(),
                   pc.max(f.get_batch(i)["lo_orderdate"]).as_py())
                  for i in range(f.num_record_batches)]
    assert len(ranges) == 6
    assert all(ranges[i][1] <= ranges[i + 1][0] for i in range(len(ranges) - 1))


def test_gen_usage_errors(scratch):
    for args, what in ((["--format", "arrow", "--out", scratch], "--sf"),
                       (["--sf", "0.1", "--out", scratch], "--format"),
                       (["--sf", "0.1", "--format", "csv", "--out", scratch], "format"),
                       (["--sf", "0", "--format", "arrow", "--out", scratch], "scale"),
                       (["--sf", "abc", "--format", "arrow", "--out", scratch], "scale"),
                       (["--sf", "5000", "--format", "arrow", "--out", scratch], "too large"),
                       (["--sf", "0.00001", "--format", "arrow", "--out", scratch], "too small"),
                       (["--sf", "0.1", "--format", "arrow"], "--out"),
                       (["--sf", "0.1", "--format", "arrow", "--out", scratch, "--threads", "0"],
                        "thread"),
                       (["--sf", "0.1", "--format", "arrow", "--out", scratch, "--bogus"],
                        "--bogus")):
        r = run_pgwarp("ssb", "gen", *args)
        assert r.rc == 2, r.describe()
        assert r.err.startswith("pgwarp: ") and what in r.err and r.err.count("\n") == 1, \
            r.describe()
    r = run_pgwarp("ssb", "frobnicate")
    assert r.rc == 2
    r = run_pgwarp("ssb", "gen", "--help")
    assert r.rc == 0 and "--cluster-by-date" in r.out
    # output directory that cannot be created: one-line error, exit 1
    f = os.path.join(scratch, "file")
    open(f, "w").close()
    r = run_pgwarp("ssb", "gen", "--sf", "0.01", "--format", "tbl", "--out", os.path.join(f, "x"))
    check_error_message(r)
    assert os.listdir(scratch) == ["file"]


# ------------------------------------------------------------------ load

def load(dsn, d, schema, *extra):
    return run_pgwarp("ssb", "load", "-d", dsn, "--from", d, "--schema", schema, *extra,
                      timeout=300)


def count_form(sql):
    """SELECT count(*) over a query's FROM and WHERE clauses."""
    sql = re.sub(r"--[^\n]*", "", sql)
    m = re.search(r"\bfrom\b(.*?)(\bgroup\s+by\b|;|$)", sql, re.S | re.I)
    return "select count(*) from" + m.group(1)


# The paper's selectivities (filter factor on lineorder), and the exact ones
# of our domains (uniform over 2,557 days, 1-50 quantities, 0-10 discounts;
# 1992-1997 is 2,192 days, 1997-1998 730, January 1994 31, week 6 of 1994 7).
D = 2557.0
SELECTIVITY = {
    "q1.1": (0.019, 365 / D * 3 / 11 * 24 / 50),
    "q1.2": (0.00065, 31 / D * 3 / 11 * 10 / 50),
    "q1.3": (0.000075, 7 / D * 3 / 11 * 5 / 50),
    "q2.1": (0.008, 1 / 25 * 1 / 5),
    "q2.2": (0.0016, 8 / 1000 * 1 / 5),
    "q2.3": (0.0002, 1 / 1000 * 1 / 5),
    "q3.1": (0.034, 1 / 5 * 1 / 5 * 2192 / D),
    "q3.2": (0.0014, 1 / 25 * 1 / 25 * 2192 / D),
    "q3.3": (0.000055, (2 / 250) ** 2 * 2192 / D),
    "q3.4": (0.00000076, (2 / 250) ** 2 * 31 / D),
    "q4.1": (0.016, 1 / 5 * 1 / 5 * 2 / 5),
    "q4.2": (0.0046, 1 / 5 * 1 / 5 * 2 / 5 * 730 / D),
    "q4.3": (0.000091, 1 / 5 * 1 / 25 * 1 / 25 * 730 / D),
}


def test_load_and_selectivity(sf01, db, dsn):
    d, tabs = sf01
    schema = "ssb_t%d" % os.getpid()
    db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % schema)
    try:
        r = load(dsn, d, schema)
        assert r.rc == 0, r.describe()
        for t in TABLES:
            n = db.execute("SELECT count(*) FROM %s.%s" % (schema, t)).fetchone()[0]
            assert n == tabs[t].num_rows, t
            n = db.execute("SELECT count(*) FROM %s.%s_arrow" % (schema, t)).fetchone()[0]
            assert n == tabs[t].num_rows, t
            # primary key, statistics
            assert db.execute("SELECT count(*) FROM pg_constraint WHERE contype = 'p' AND "
                              "conrelid = '%s.%s'::regclass" % (schema, t)).fetchone()[0] == 1
            assert db.execute("SELECT reltuples FROM pg_class WHERE oid = '%s.%s'::regclass"
                              % (schema, t)).fetchone()[0] > 0
        # the same values through COPY and through arrow_fdw
        row = db.execute("SELECT sum(lo_revenue::bigint), sum(lo_ordtotalprice::bigint), "
                         "string_agg(DISTINCT lo_shipmode, ',') FROM %s.lineorder" % schema).fetchone()
        row2 = db.execute("SELECT sum(lo_revenue::bigint), sum(lo_ordtotalprice::bigint), "
                          "string_agg(DISTINCT lo_shipmode, ',') FROM %s.lineorder_arrow"
                          % schema).fetchone()
        assert row == row2
        assert row[0] == pc.sum(pc.cast(tabs["lineorder"]["lo_revenue"], pa.int64())).as_py()

        # selectivities of the 13 queries against the heap tables
        db.execute("SET search_path = %s" % schema)
        n = tabs["lineorder"].num_rows
        files = sorted(glob.glob(os.path.join(QUERY_DIR, "q*.sql")))
        assert [os.path.basename(f)[:-4] for f in files] == sorted(SELECTIVITY)
        report = []
        for f in files:
            q = os.path.basename(f)[:-4]
            paper, exact = SELECTIVITY[q]
            # the query text matches the paper's figure (catches a wrong constant)
            assert abs(exact / paper - 1) < 0.1, (q, exact, paper)
            got = db.execute(count_form(open(f).read())).fetchone()[0]
            mu = exact * n
            tol = 4 * math.sqrt(mu) + 0.03 * mu + 2
            report.append("%s: %d rows (%.5f%%), expected %.1f (%.5f%%, paper %.5f%%)"
                          % (q, got, 100 * got / n, mu, 100 * exact, 100 * paper))
            assert abs(got - mu) <= tol, "\n".join(report)
        # and the queries themselves run unchanged
        for f in files:
            db.execute(open(f).read()).fetchall()
    finally:
        db.execute("RESET search_path")
        db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % schema)


DBGEN_ROWS = {
    # lines as dbgen writes them (trailing '|'); CRLF on one, no newline at the end
    "supplier": ["1|Supplier#000000001|N kD4on9OM Ipw3,gf0J|PERU     0|PERU|AMERICA|27-989-741-2988|",
                 "2|Supplier#000000002|89eJ5ksX3Im\\dx|ETHIOPIA 1|ETHIOPIA|AFRICA|15-768-687-3665|"],
    "date": ["19920101|January 1, 1992|Wednesday|January|1992|199201|Jan1992|4|1|1|1|1|Winter|0|0|1|1|",
             "19920102|January 2, 1992|Thursday|January|1992|199201|Jan1992|5|2|2|1|1|Winter|0|0|0|1|"],
    "lineorder": ["1|1|7381|155190|828|19960102|5-LOW|0|17|2116823|17366547|4|2032150|74711|2|19960212|TRUCK|",
                  "1|2|7381|67310|163|19960102|5-LOW|0|36|4598316|17366547|9|4184467|76638|6|19960228|MAIL|"],
}


def test_load_dbgen_files(scratch, db, dsn):
    d = os.path.join(scratch, "dbgen")
    os.makedirs(d)
    with open(os.path.join(d, "supplier.tbl"), "wb") as f:
        f.write((DBGEN_ROWS["supplier"][0] + "\r\n" + DBGEN_ROWS["supplier"][1] + "\n").encode())
    with open(os.path.join(d, "date.tbl"), "wb") as f:
        f.write(("\n".join(DBGEN_ROWS["date"])).encode())          # no final newline
    with open(os.path.join(d, "lineorder.tbl"), "wb") as f:
        f.write(("\n".join(DBGEN_ROWS["lineorder"]) + "\n\n").encode())   # an empty line
    schema = "ssb_dbgen%d" % os.getpid()
    db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % schema)
    try:
        r = load(dsn, d, schema)
        assert r.rc == 0, r.describe()
        for t, lines in DBGEN_ROWS.items():
            got = db.execute("SELECT * FROM %s.%s ORDER BY 1, 2" % (schema, t)).fetchall()
            want = [l[:-1].split("|") for l in lines]
            assert [[str(v) for v in g] for g in got] == want, t
        # the backslash arrived as a backslash
        assert db.execute("SELECT s_address FROM %s.supplier WHERE s_suppkey = 2" % schema
                          ).fetchone()[0] == "89eJ5ksX3Im\\dx"
        # only the tables with files were created
        names = {r[0] for r in db.execute(
            "SELECT relname FROM pg_class c JOIN pg_namespace n ON n.oid = relnamespace "
            "WHERE nspname = %s AND relkind IN ('r', 'f')", (schema,)).fetchall()}
        assert names == {"supplier", "date", "lineorder"}
        # loading again: refused without --replace (and says so), fine with it
        r = load(dsn, d, schema)
        check_error_message(r, names=["--replace"])
        r = load(dsn, d, schema, "--replace")
        assert r.rc == 0, r.describe()
        # a malformed file: an error naming the file and line, and no table left
        with open(os.path.join(d, "date.tbl"), "w") as f:
            f.write(DBGEN_ROWS["date"][0] + "\n19920102|January 2, 1992|\n")
        os.remove(os.path.join(d, "lineorder.tbl"))
        os.remove(os.path.join(d, "supplier.tbl"))
        db.execute("DROP TABLE %s.date" % schema)
        r = load(dsn, d, schema)
        check_error_message(r, path="date.tbl", names=["line 2"])
        assert db.execute("SELECT to_regclass('%s.date')" % schema).fetchone()[0] is None
    finally:
        db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % schema)


def test_load_errors(scratch, dsn):
    r = run_pgwarp("ssb", "load", "-d", dsn, "--from", os.path.join(scratch, "nope"))
    check_error_message(r, path="nope")
    r = run_pgwarp("ssb", "load", "-d", dsn, "--from", scratch)
    check_error_message(r, names=["no SSB files"])
    r = run_pgwarp("ssb", "load", "-d", dsn)
    assert r.rc == 2 and "--from" in r.err
    open(os.path.join(scratch, "date.tbl"), "w").close()
    r = run_pgwarp("ssb", "load", "-d", "host=/nonexistent-socket-dir", "--from", scratch)
    check_error_message(r, names=["connect"])


def server_user_differs():
    return os.getuid() == 0       # scripts/cluster.sh runs the server as postgres when root


@pytest.mark.skipif(not server_user_differs(), reason="the server runs as this user")
def test_load_unreadable_dir(scratch, db, dsn):
    d = os.path.join(scratch, "private")
    gen(d, 0.01, "arrow")
    os.chmod(d, 0o700)
    schema = "ssb_priv%d" % os.getpid()
    try:
        r = load(dsn, d, schema)
        check_error_message(r, path="date.arrow", names=["cannot read", "operating system user"])
    finally:
        db.execute("DROP SCHEMA IF EXISTS %s CASCADE" % schema)
