"""timestamptz in the session's TimeZone through the engine (CPU driver):
date_trunc, extract and date_part of timestamptz, and the casts between
timestamptz, timestamp and date (src/engine/warp_ops_tz.h, src/pg/compile/warp_tz.c).

The engine converts with a transition table the backend builds from
PostgreSQL's own time zone code, so every case here runs in many zones,
chosen for what makes local time hard: daylight saving in both hemispheres,
half-hour and 45-minute offsets and DST steps (Lord Howe, Chatham, Tehran,
St Johns), a skipped calendar day (Apia, 2011-12-30), DST changing at
midnight (Sao Paulo), Moscow's 2011/2014 changes, Casablanca's Ramadan
transitions, Dublin's negative DST and Troll's two-hour step.  The values
sit every 15 minutes (plus odd microseconds) around transitions from 1883
to 2100, in the extrapolated future (2500, 3000, 30000), and at both ends
of the timestamp range, where conversions can fail.

As in test_engine_targeted.py, each query runs with pg_warp on over arrow_fdw
and against the oracle (heap tables loaded from pyarrow's CSV, pg_warp off);
results must be equal, or both fail with the same SQLSTATE.  Group keys use
a column with few distinct values, so that the group estimate lets the
planner offload; every-row exactness is checked through id-weighted sums
of the converted values (any one wrong row changes the sum).
"""
import datetime
import os
import random

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

from pwhelpers import gpud_status
from test_engine_targeted import Session, Star, check, plan_of, run, same_result, set_side

ZONES = ["UTC", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe",
         "Pacific/Chatham", "Asia/Kolkata", "Asia/Tehran", "America/St_Johns",
         "Pacific/Apia", "America/Sao_Paulo", "Europe/Moscow", "Africa/Casablanca",
         "Europe/Dublin", "Antarctica/Troll", "Etc/GMT+5", "Asia/Kathmandu"]

UTC = datetime.timezone.utc
US = 1000000


def _instants():
    rnd = random.Random(20261204)
    out = []
    days = [(3, 8), (3, 10), (3, 13), (3, 26), (3, 27), (3, 29), (3, 31), (4, 1), (4, 4),
            (4, 6), (9, 25), (9, 27), (10, 1), (10, 2), (10, 5), (10, 26), (10, 27),
            (10, 30), (11, 1), (11, 3), (11, 6), (11, 18), (12, 30)]
    for y in (1883, 1918, 1945, 1970, 1996, 2007, 2011, 2014, 2018, 2024, 2037,
              2050, 2100, 2500, 3000, 30000):
        for m, d in days:
            base = datetime.datetime(y, m, d, tzinfo=UTC) if y < 10000 else None
            if base is None:
                continue
            for k in range(-6, 30):
                t = base + datetime.timedelta(minutes=45 * k,
                                              microseconds=rnd.choice([0, 1, 999999, 7 * US]))
                out.append(t)
    for _ in range(1500):
        out.append(datetime.datetime(1, 1, 1, tzinfo=UTC) +
                   datetime.timedelta(microseconds=rnd.randrange(315537897600 * US)))
    return out


def _far_years():
    """values Python's datetime cannot hold, as PostgreSQL literals"""
    # Arrow's int64 microseconds since 1970 end in 294247 (PostgreSQL's
    # range, 30 years further, cannot reach the engine from a file)
    return ["30000-07-01 12:34:56.789+00", "294246-12-31 23:59:59.999999+00",
            "294246-12-31 20:00:00+00", "4713-11-24 00:00:00+00 BC",
            "4713-11-24 12:00:00+00 BC", "4713-11-25 06:00:00+00 BC", "0500-03-01 03:00:00+00 BC"]


@pytest.fixture(scope="module")
def tzstar():
    conn = Session()
    s = Star(conn, "tz")
    inst = _instants()
    rows = []
    for i, t in enumerate(inst):
        g = inst[((i % 97) * 7919) % len(inst)]     # 97 distinct values, spread
        naive = t.replace(tzinfo=None)
        rows.append((i + 1, t, g, naive, naive.date()))
    rows.append((len(rows) + 1, None, None, None, None))
    cols = [("id", "int4"), ("a", "timestamptz"), ("g", "timestamptz"),
            ("ts", "timestamp"), ("d", "date")]
    s.table("f", cols, rows, batch_rows=1000)
    # the extremes, beyond Python's datetime: the oracle's table from the
    # literals, the Arrow file from the microseconds vanilla PostgreSQL reads
    # them as
    conn.execute("SET pg_warp.enabled = off")
    conn.execute("CREATE TABLE %s.x (id int4, a timestamptz)" % s.h)
    micros = []
    for k, v in enumerate(_far_years()):
        conn.execute("INSERT INTO %s.x VALUES (%d, '%s')" % (s.h, k + 1, v))
        cur = conn.execute("SELECT ((extract(epoch FROM '%s'::timestamptz) - 946684800)"
                           " * 1000000)::int8" % v)
        micros.append(cur.fetchone()[0])
    conn.execute("RESET pg_warp.enabled")
    path = os.path.join(s.dir, "x.arrow")
    tbl = pa.table({"id": pa.array(range(1, len(micros) + 1), pa.int32()),
                    "a": pa.array([int(m) + 946684800 * US for m in micros], pa.int64())
                    .cast(pa.timestamp("us", tz="UTC"))})
    with ipc.new_file(path, tbl.schema) as w:
        w.write_table(tbl)
    os.chmod(path, 0o644)
    conn.execute("CREATE FOREIGN TABLE %s.x (id int4, a timestamptz) SERVER arrow_fdw "
                 "OPTIONS (file '%s')" % (s.w, path))
    yield s
    s.close()
    conn.close()


def weighted(expr):
    """an id-weighted numeric checksum of expr (a timestamp[tz] or date)"""
    return "sum(extract(epoch FROM %s) * id)" % expr


ROW_QUERIES = [
    "SELECT %s, %s, %s, %s FROM f" % (weighted("date_trunc('day', a)"), weighted("date_trunc('hour', a)"),
                                      weighted("date_trunc('week', a)"), weighted("date_trunc('month', a)")),
    "SELECT %s, %s, %s, %s, %s FROM f" % (weighted("date_trunc('year', a)"), weighted("date_trunc('quarter', a)"),
                                          weighted("date_trunc('minute', a)"), weighted("date_trunc('second', a)"),
                                          weighted("date_trunc('millennium', a)")),
    "SELECT %s, %s, %s FROM f" % (weighted("date_trunc('decade', a)"), weighted("date_trunc('century', a)"),
                                  weighted("date_trunc('milliseconds', a)")),
    "SELECT sum(extract(hour FROM a) * id), sum(extract(minute FROM a) * id), "
    "sum(extract(second FROM a) * id), sum(extract(day FROM a) * id), sum(extract(doy FROM a) * id) FROM f",
    "SELECT sum(extract(isodow FROM a) * id), sum(extract(week FROM a) * id), "
    "sum(extract(isoyear FROM a) * id), sum(extract(year FROM a) * id), sum(extract(epoch FROM a) * id), "
    "sum(extract(month FROM a) * id), sum(extract(quarter FROM a) * id) FROM f",
    "SELECT sum(date_part('hour', a) * id) AS sum_h, sum(date_part('day', a) * id) AS sum_d, "
    "sum(date_part('epoch', a)) AS sum_e, count(*) FROM f",
    "SELECT %s, %s, %s, %s FROM f" % (weighted("a::timestamp"), weighted("ts::timestamptz"),
                                      weighted("d::timestamptz"), weighted("d::timestamp")),
    "SELECT sum(extract(epoch FROM a::date) * id), count(a::date), min(a::date), max(a::date) FROM f",
    "SELECT sum(extract(epoch FROM ts::date) * id), min(ts::date), max(ts::date) FROM f",
    "SELECT sum(extract(year FROM d) * id), sum(date_part('month', d) * id) AS sum_m, "
    "sum(extract(epoch FROM date_trunc('month', d)) * id) FROM f",
    "SELECT count(*), min(id), max(id) FROM f WHERE date_trunc('day', a) = a",
    "SELECT count(*), sum(id) FROM f WHERE extract(hour FROM a) = 2 OR extract(minute FROM a) = 30",
    "SELECT count(*), sum(id) FROM f WHERE a::date = d",
    "SELECT count(*), sum(id) FROM f WHERE ts::timestamptz <> a",
    "SELECT count(*), sum(id) FROM f WHERE a::timestamp < ts",
    # comparisons across date, timestamp and timestamptz (converted through
    # the zone, saturating beyond the finite range as PostgreSQL does)
    "SELECT count(*), sum(id) FROM f WHERE a >= d",
    "SELECT count(*), sum(id) FROM f WHERE ts < a",
    "SELECT count(*), sum(id) FROM f WHERE d = ts OR a = ts OR d <> a",
    "SELECT count(*), sum(id) FROM f WHERE a > date '2024-03-10' AND a <= timestamp '2024-11-03 01:30'",
    "SELECT count(*), sum(id) FROM f WHERE date '2014-10-26' < a AND ts <= timestamptz '2014-10-26 02:00+04'",
    "SELECT count(*), sum(id) FROM f WHERE a IS DISTINCT FROM ts",
    "SELECT count(*) FILTER (WHERE a < date '5874897-12-31'), count(*) FILTER (WHERE d < timestamp 'infinity'),"
    " count(*) FILTER (WHERE a > date '-infinity') FROM f",
]

# date/timestamp/timestamptz +/- a constant interval: months on the local
# calendar (the day clamped to the month's end), days through the local
# date (a day is not always 24 hours), then microseconds
INTERVAL_QUERIES = [
    "SELECT %s, %s, %s, %s FROM f" % (weighted("a + interval '1 month'"), weighted("a - interval '1 month'"),
                                      weighted("a + interval '1 day'"), weighted("a + interval '24 hours'")),
    "SELECT %s, %s, %s FROM f" % (weighted("a + interval '1 year 2 mons 3 days 04:05:06.000007'"),
                                  weighted("a - interval '-13 months -40 days'"),
                                  weighted("a + interval '-1 day 23:59:59'")),
    "SELECT %s, %s, %s, %s, %s FROM f" % (weighted("ts + interval '1 month'"),
                                          weighted("ts - interval '1 mon 1 day 1 microsecond'"),
                                          weighted("ts + interval '36 hours'"),
                                          weighted("d + interval '1 month'"),
                                          weighted("d - interval '1 year 1 day'")),
    "SELECT min(ts + interval '29 days'), max(d - interval '1 mon'), min(a + interval '11 months') FROM f",
    "SELECT count(*), sum(id) FROM f WHERE a + interval '1 day' > ts + interval '1 day'",
    "SELECT count(*), sum(id) FROM f WHERE d + interval '1 mon' < a AND a - interval '2 hours' <> ts",
    "SELECT date_trunc('day', g + interval '12 hours'), count(*), sum(id) FROM f GROUP BY 1",
    "SELECT (d + interval '1 month')::date, count(*) FROM f WHERE id % 50 = 0 GROUP BY 1",
]

GROUP_QUERIES = [
    "SELECT date_trunc('day', g), count(*), sum(id) FROM f GROUP BY 1",
    "SELECT date_trunc('month', g), date_trunc('hour', g), count(*) FROM f GROUP BY 1, 2",
    "SELECT extract(hour FROM g), count(*), min(a), max(a) FROM f GROUP BY 1",
    "SELECT g::date, count(*) FROM f GROUP BY 1",
    "SELECT g::timestamp, count(*) FROM f GROUP BY 1",
    "SELECT date_part('dow', g), count(*) FROM f GROUP BY 1",
    "SELECT date_trunc('week', g) AS wk, count(*) FROM f GROUP BY 1 HAVING count(*) > 1",
]

# plain scans: the quals go through the engine's row prefilter
PREFILTER_QUERIES = [
    "SELECT id, a FROM f WHERE extract(hour FROM a) = 2 AND date_trunc('day', a) < a",
    "SELECT id FROM f WHERE a::date = date '2024-03-31' OR a::timestamp = ts",
]

# one row at a time (WHERE id = n): each either converts or fails alone
EXTREME_EXPRS = ["a::timestamp", "a::date", "date_trunc('day', a)", "date_trunc('year', a)",
                 "date_trunc('millennium', a)", "date_trunc('hour', a)",
                 "a + interval '1 month'", "a - interval '1 day'", "a + interval '1000 years'",
                 "a - interval '100000 years'", "a + interval '2147483647 days'",
                 "a + interval '-2147483648 mons'", "a + interval '2147483647 mons'",
                 "a - interval '1 hour'", "a + interval '2562047788 hours'",
                 "a::timestamp + interval '1 mon 1 day'", "a::date - interval '1 year'",
                 "extract(year FROM a)", "extract(hour FROM a)", "extract(epoch FROM a)",
                 "a::timestamp::timestamptz", "a::date::timestamptz"]
# comparisons whose conversion overflows: no error there, as in PostgreSQL
EXTREME_PREDICATES = ["a < date '4713-11-24 BC'", "a > date '5874897-12-31'", "a::date < a",
                      "a::timestamp > a", "a = a::date"]


@pytest.mark.parametrize("zone", ZONES)
def test_timestamptz_in_zone(tzstar, zone):
    conn = tzstar.conn
    conn.execute("SET TimeZone = '%s'" % zone)
    try:
        for q in ROW_QUERIES:
            check(tzstar, q)
        for q in GROUP_QUERIES + INTERVAL_QUERIES:
            check(tzstar, q)
        for q in PREFILTER_QUERIES:
            # the engine's own scan node, and arrow_fdw's prefilter without it
            check(tzstar, q, node="WarpScan")
            conn.execute("SET pg_warp.enable_scan = off")
            try:
                check(tzstar, q, offload=False)
                set_side(conn, tzstar.w, True)
                assert "Engine Prefilter" in plan_of(conn, q), plan_of(conn, q)
            finally:
                conn.execute("RESET pg_warp.enable_scan")
        for n in range(1, len(_far_years()) + 1):
            for e in EXTREME_EXPRS:
                check(tzstar, "SELECT min(%s), count(*) FROM x WHERE id = %d" % (e, n))
            for e in EXTREME_PREDICATES:
                check(tzstar, "SELECT count(*) FILTER (WHERE %s), count(*) FROM x WHERE id = %d"
                      % (e, n))
        # through pg_warp_gpud: the zone table crosses the arena; on a GPU
        # the kernel converts (extract() stays on the CPU driver)
        if gpud_status(conn) is not None:
            conn.execute("SET pg_warp.mode = gpu")
            for q in ROW_QUERIES + GROUP_QUERIES + INTERVAL_QUERIES:
                check(tzstar, q)
            set_side(conn, tzstar.w, True)
            plan = plan_of(conn, GROUP_QUERIES[0])
            assert "(pg_warp_gpud)" in plan, plan
    finally:
        conn.execute("RESET pg_warp.mode")
        conn.execute("SET TimeZone = 'UTC'")


def test_prepared_then_zone_changes(tzstar):
    """A plan made in one zone and executed in others computes in the zone
    of each execution, as PostgreSQL does (the table is taken at executor
    start)."""
    conn = tzstar.conn
    sql = ("SELECT date_trunc('day', g), count(*), sum(extract(epoch FROM a::timestamp) * id) "
           "FROM f GROUP BY 1")
    results = {}
    try:
        for warp, schema in ((True, tzstar.w), (False, tzstar.h)):
            set_side(conn, schema, warp)
            conn.execute("SET TimeZone = 'UTC'")
            conn.execute("SET plan_cache_mode = force_generic_plan")
            conn.execute("PREPARE tzq AS " + sql)
            if warp:
                plan = "\n".join(r[0] for r in conn.execute("EXPLAIN (COSTS OFF) EXECUTE tzq").fetchall())
                assert "WarpPreAgg" in plan, plan
            for zone in ("Europe/Berlin", "Pacific/Chatham", "America/Sao_Paulo"):
                conn.execute("SET TimeZone = '%s'" % zone)
                results[(warp, zone)] = run(conn, "EXECUTE tzq")
            conn.execute("DEALLOCATE tzq")
    finally:
        conn.execute("SET TimeZone = 'UTC'")
        conn.execute("SET plan_cache_mode = auto")
    for zone in ("Europe/Berlin", "Pacific/Chatham", "America/Sao_Paulo"):
        why = same_result(results[(True, zone)], results[(False, zone)], False)
        assert not why, "%s in %s: %s" % (sql, zone, why)
        assert results[(False, zone)][0] == "ok" and len(results[(False, zone)][1]) > 20
    # the zones really differ
    assert results[(False, "Europe/Berlin")][1] != results[(False, "Pacific/Chatham")][1]


def test_interval_parameter(tzstar):
    """An interval parameter of a prepared statement (generic plan): its
    value is taken when the program is built at executor start, so each
    EXECUTE adds its own interval, NULL included, as PostgreSQL does."""
    conn = tzstar.conn
    sql = ("SELECT date_trunc('day', g + $1), count(*), sum(extract(epoch FROM a - $1) * id) "
           "FROM f GROUP BY 1")
    values = ["1 month", "-1 day 02:00", "25 hours", None]
    results = {}
    try:
        conn.execute("SET TimeZone = 'America/New_York'")
        conn.execute("SET plan_cache_mode = force_generic_plan")
        for warp, schema in ((True, tzstar.w), (False, tzstar.h)):
            set_side(conn, schema, warp)
            conn.execute("PREPARE ivq(interval) AS " + sql)
            if warp:
                plan = "\n".join(r[0] for r in conn.execute(
                    "EXPLAIN (COSTS OFF) EXECUTE ivq('1 day')").fetchall())
                assert "WarpPreAgg" in plan, plan
            for v in values:
                results[(warp, v)] = run(conn, "EXECUTE ivq(%s)" % ("NULL" if v is None else "'%s'" % v))
            conn.execute("DEALLOCATE ivq")
    finally:
        conn.execute("SET TimeZone = 'UTC'")
        conn.execute("SET plan_cache_mode = auto")
    for v in values:
        why = same_result(results[(True, v)], results[(False, v)], False)
        assert not why, "%s with %r: %s" % (sql, v, why)
        assert results[(False, v)][0] == "ok" and len(results[(False, v)][1]) > 0
    assert results[(False, "1 month")][1] != results[(False, "25 hours")][1]
