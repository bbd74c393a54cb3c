"""The engine's scalar operation semantics (src/engine/warp_ops_*.h) against
PostgreSQL itself.

Thousands of cases (random plus edges) per operation family are run through
build/unit/engine_ops_cli and, in one batched query per family, through the
test cluster; results must be identical, or both must fail with the same
SQLSTATE.  "FALLBACK" from the engine (a value it cannot represent, which it
hands back to PostgreSQL) is accepted only where PostgreSQL's own result is
indeed outside the engine's range.  The seed is printed on failure;
PGWARP_ENGINE_SEED reproduces a run.
"""
import os
import random
import struct
import subprocess
from decimal import Decimal

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CLI = os.path.join(REPO, "build", "unit", "engine_ops_cli")

SEED = int(os.environ.get("PGWARP_ENGINE_SEED", random.randrange(1 << 30)))

INT_BOUNDS = {2: (-(1 << 15), (1 << 15) - 1), 4: (-(1 << 31), (1 << 31) - 1),
              8: (-(1 << 63), (1 << 63) - 1)}
POSTGRES_EPOCH_JDATE = 2451545
DATE_END_JULIAN = 2147483494
MIN_DATE = -POSTGRES_EPOCH_JDATE
END_DATE = DATE_END_JULIAN - POSTGRES_EPOCH_JDATE          # exclusive
MIN_TS = -211813488000000000
END_TS = 9223371331200000000                                # exclusive
USECS_PER_DAY = 86400000000
EPOCH_SHIFT_US = 946684800 * 1000000                        # 1970 -> 2000


@pytest.fixture(scope="module")
def pg(db):
    """db with a helper that evaluates one expression, turning an error into
    'ERR <sqlstate>' so that a whole family runs in one query."""
    db.execute("""
        CREATE OR REPLACE FUNCTION pg_temp.warp_try(e text) RETURNS text
        LANGUAGE plpgsql AS $$
        DECLARE r text;
        BEGIN
            EXECUTE 'SELECT (' || e || ')::text' INTO r;
            RETURN r;
        EXCEPTION WHEN others THEN
            RETURN 'ERR ' || SQLSTATE;
        END $$""")
    return db


def pg_eval(pg, exprs):
    cur = pg.execute("SELECT pg_temp.warp_try(e) FROM unnest(%s::text[]) "
                     "WITH ORDINALITY AS u(e, n) ORDER BY n", (exprs,))
    return [r[0] for r in cur.fetchall()]


def cli_eval(lines):
    if not os.access(CLI, os.X_OK):
        pytest.fail("%s is missing: run make" % CLI)
    p = subprocess.run([CLI], input="\n".join(lines) + "\n", capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    out = p.stdout.split("\n")[:-1]
    assert len(out) == len(lines)
    return out


def check(pg, cases, same, fallback_ok=None):
    """cases: (cli line, SQL expression).  same(cli, pg) says whether two
    successful results agree; fallback_ok(pg, case) whether the engine may
    hand this one back."""
    cli = cli_eval([c[0] for c in cases])
    ref = pg_eval(pg, [c[1] for c in cases])
    bad = []
    for case, a, b in zip(cases, cli, ref):
        if a == "BAD INPUT":
            ok = False
        elif a == "FALLBACK":
            ok = fallback_ok is not None and fallback_ok(b, case)
        elif a.startswith("ERR ") or (b is not None and b.startswith("ERR ")):
            ok = a == b
        else:
            ok = b is not None and same(a, b)
        if not ok:
            bad.append("%s | %s -> engine %r, postgres %r" % (case[0], case[1], a, b))
    assert not bad, "seed %d: %d of %d differ:\n%s" % (
        SEED, len(bad), len(cases), "\n".join(bad[:25]))
    return len(cases)


def same_text(a, b):
    return a == b


def same_bool(a, b):
    return {"true": "1", "false": "0"}.get(b) == a


def same_float(a, b):
    x = float.fromhex(a)
    y = float(b)
    if x != x or y != y:
        return x != x and y != y
    return struct.pack("<d", x) == struct.pack("<d", y)


def ts_us_sql(expr):
    """a timestamp as microseconds since 2000-01-01, exactly: an interval's
    epoch is exact numeric arithmetic (a timestamp's is not near 294276 AD)"""
    return "extract(epoch from (%s - timestamp '2000-01-01'))" % expr


def same_ts(a, b):
    return int(a) == int(Decimal(b) * 1000000)


def same_date(a, b):
    return {str(-(1 << 31)): "-infinity", str((1 << 31) - 1): "infinity"}.get(a, a) == b


# ------------------------------------------------------------------ integers

def int_values(rng, w, n):
    lo, hi = INT_BOUNDS[w]
    edges = [lo, lo + 1, hi, hi - 1, -1, 0, 1, 2, -2, 7, -7, 10]
    half = 1 << (4 * w - 1)   # around sqrt(max): products near the edge
    out = []
    for _ in range(n):
        k = rng.random()
        if k < 0.25:
            out.append(rng.choice(edges))
        elif k < 0.5:
            out.append(rng.randint(-half * 2, half * 2))
        elif k < 0.7:
            out.append(rng.randint(-100, 100))
        else:
            out.append(rng.randint(lo, hi))
    return out


INT_SQL_OP = {"pl": "+", "mi": "-", "mul": "*", "div": "/", "mod": "%"}
CMP_FN = {(2, 2): "btint2cmp", (4, 4): "btint4cmp", (8, 8): "btint8cmp",
          (2, 4): "btint24cmp", (4, 2): "btint42cmp", (2, 8): "btint28cmp",
          (8, 2): "btint82cmp", (4, 8): "btint48cmp", (8, 4): "btint84cmp"}


def test_int_ops(pg):
    rng = random.Random(SEED)
    cases = []
    for (wa, wb) in CMP_FN:
        n = 400 if wa == wb else 150
        xs, ys = int_values(rng, wa, n), int_values(rng, wb, n)
        for a, b in zip(xs, ys):
            la, lb = "'%d'::int%d" % (a, wa), "'%d'::int%d" % (b, wb)
            for op, sym in INT_SQL_OP.items():
                cases.append(("int %d %d %s %d %d" % (wa, wb, op, a, b),
                              "%s %s %s" % (la, sym, lb)))
            cases.append(("int %d %d cmp %d %d" % (wa, wb, a, b),
                          "sign(%s(%s, %s))::int" % (CMP_FN[(wa, wb)], la, lb)))
            if wa == wb:
                cases.append(("int %d %d um %d 0" % (wa, wa, a), "-(%s)" % la))
                cases.append(("int %d %d abs %d 0" % (wa, wa, a), "abs(%s)" % la))
    assert check(pg, cases, same_text) > 10000


def test_int_casts(pg):
    rng = random.Random(SEED + 1)
    cases = []
    for frm, to in [(8, 4), (8, 2), (4, 2)]:
        for a in int_values(rng, frm, 300):
            cases.append(("icast %d %d %d" % (frm, to, a), "'%d'::int%d::int%d" % (a, frm, to)))
    check(pg, cases, same_text)


# ------------------------------------------------------------------ floats

F8_EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, 3.5, -2.5, 1.5, float("inf"),
            float("-inf"), float("nan"), 1e308, -1e308, 1.7976931348623157e308,
            5e-324, -5e-324, 2.2250738585072014e-308, 1e-320, 1e-200, 1e200, 1e-160,
            1e160, 2147483647.5, 2147483647.4, -2147483648.5, -2147483648.6,
            2147483648.0, 9.223372036854775807e18, -9.223372036854775808e18,
            9.2233720368547748e18, 32767.5, 32767.4, -32768.5, -32768.6, 3.0, 0.1]
F4_EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -2.5, float("inf"), float("-inf"),
            float("nan"), 3.4028234663852886e38, -3.4028234663852886e38,
            1.401298464324817e-45, 1.1754943508222875e-38, 1e-30, 1e30, 1e19, 1e-19,
            2147483648.0, -2147483648.0, 2147483520.0, 9.223372036854775807e18,
            32767.5, -32768.5, 16777217.0, 0.1]


def to_f4(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def float_values(rng, w, n):
    out = []
    for _ in range(n):
        k = rng.random()
        if k < 0.3:
            out.append(rng.choice(F4_EDGES if w == 4 else F8_EDGES))
        elif k < 0.55:
            if w == 4:
                out.append(struct.unpack("<f", struct.pack("<I", rng.getrandbits(32)))[0])
            else:
                out.append(struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0])
        elif k < 0.8:
            out.append(rng.uniform(-1e6, 1e6))
        else:
            lo, hi = (-150, 128.5) if w == 4 else (-1074, 1023.99)
            out.append(rng.choice([-1, 1]) * 2.0 ** rng.uniform(lo, hi))
        if w == 4 and out[-1] == out[-1]:
            try:
                out[-1] = to_f4(out[-1])
            except OverflowError:
                out[-1] = float("inf") if out[-1] > 0 else float("-inf")
    return out


def flit(x, w):
    if x != x:
        s = "NaN"
    elif x == float("inf"):
        s = "Infinity"
    elif x == float("-inf"):
        s = "-Infinity"
    else:
        s = repr(x)
    return "'%s'::float%d" % (s, w)


FLT_CMP_FN = {(4, 4): "btfloat4cmp", (8, 8): "btfloat8cmp", (4, 8): "btfloat48cmp",
              (8, 4): "btfloat84cmp"}


def test_float_ops(pg):
    rng = random.Random(SEED + 2)
    cases = []
    for (wa, wb), cmpfn in FLT_CMP_FN.items():
        n = 500 if wa == wb else 200
        for a, b in zip(float_values(rng, wa, n), float_values(rng, wb, n)):
            la, lb = flit(a, wa), flit(b, wb)
            for op, sym in [("pl", "+"), ("mi", "-"), ("mul", "*"), ("div", "/")]:
                # float4 results travel as float8: the widening is exact
                cases.append(("flt %d %d %s %r %r" % (wa, wb, op, a, b),
                              "(%s %s %s)::float8" % (la, sym, lb)))
            cases.append(("flt %d %d cmp %r %r" % (wa, wb, a, b), "sign(%s(%s, %s))::int" % (cmpfn, la, lb)))
    check(pg, [c for c in cases if " cmp " not in c[0]], same_float)
    check(pg, [c for c in cases if " cmp " in c[0]], same_text)
    # the boolean operators, NaN and -0 included
    bcases = []
    for a, b in zip(float_values(rng, 8, 300), float_values(rng, 8, 300)):
        if rng.random() < 0.2:
            b = a
        for op, sym in [("eq", "="), ("lt", "<"), ("le", "<=")]:
            bcases.append(("flt 8 8 %s %r %r" % (op, a, b),
                           "%s %s %s" % (flit(a, 8), sym, flit(b, 8))))
    check(pg, bcases, same_bool)


def test_float_casts(pg):
    rng = random.Random(SEED + 3)
    cases = []
    for frm in (4, 8):
        for a in float_values(rng, frm, 400):
            for to in (2, 4, 8):
                cases.append(("fcast f%d i%d %r" % (frm, to, a),
                              "%s::int%d" % (flit(a, frm), to)))
            other = 8 if frm == 4 else 4
            cases.append(("fcast f%d f%d %r" % (frm, other, a),
                          "%s::float%d::float8" % (flit(a, frm), other)))
    for w in (2, 4, 8):
        for a in int_values(rng, w, 200):
            for to in (4, 8):
                cases.append(("fcast i%d f%d %d" % (w, to, a),
                              "'%d'::int%d::float%d::float8" % (a, w, to)))
    to_float = [c for c in cases if c[0].split()[2][0] == "f"]
    to_int = [c for c in cases if c[0].split()[2][0] == "i"]
    check(pg, to_float, same_float)
    check(pg, to_int, same_text)


# ------------------------------------------------------------------ numeric

def num_text(v, scale):
    s = str(abs(v)).rjust(scale + 1, "0")
    if scale:
        s = s[:-scale] + "." + s[-scale:]
    return ("-" if v < 0 else "") + s


def numeric_values(rng, n):
    out = []
    for _ in range(n):
        k = rng.random()
        if k < 0.15:
            v, s = rng.choice([(0, 0), (0, 3), (1, 0), (-1, 0), (5, 1), (-5, 1), (15, 1),
                               (-25, 1), (10 ** 38 - 1, 0), (-(10 ** 38 - 1), 0),
                               (10 ** 38 - 1, 38), (10 ** 38 - 1, 10), (1, 38),
                               (2 ** 63, 0), (-2 ** 63, 0), (2 ** 63 - 1, 2),
                               (2147483647, 0), (21474836475, 1), (-21474836485, 1),
                               (32767, 0), (327675, 1), (99995, 2), (-99995, 2)])
        else:
            digits = rng.choice([rng.randint(1, 6), rng.randint(1, 20), rng.randint(1, 38)])
            v = rng.randint(0, 10 ** digits - 1) * rng.choice([-1, 1])
            s = rng.randint(0, min(digits + 3, 38))
        out.append((v, s))
    return out


def numeric_out_of_range(b, case):
    """the engine may hand back a result PostgreSQL computes beyond 38
    digits or scale 38"""
    if b is None or b.startswith("ERR"):
        return False
    d = Decimal(b)
    t = d.as_tuple()
    scale = max(-t.exponent, 0)
    return scale > 38 or abs(d.scaleb(scale)) >= 10 ** 38


def test_numeric_ops(pg):
    rng = random.Random(SEED + 4)
    cases = []
    xs, ys = numeric_values(rng, 1500), numeric_values(rng, 1500)
    for (va, sa), (vb, sb) in zip(xs, ys):
        k = min(3, 38 - sa)
        if rng.random() < 0.1 and abs(va) * 10 ** k < 10 ** 38:
            vb, sb = va * 10 ** k, sa + k     # equal values at different scales
        ta, tb = num_text(va, sa), num_text(vb, sb)
        la, lb = "'%s'::numeric" % ta, "'%s'::numeric" % tb
        for op, sym in [("add", "+"), ("sub", "-"), ("mul", "*")]:
            cases.append(("num %s %s %s" % (op, ta, tb), "%s %s %s" % (la, sym, lb)))
        cases.append(("num cmp %s %s" % (ta, tb), "sign(numeric_cmp(%s, %s))::int" % (la, lb)))
        r = rng.choice([rng.randint(-5, 5), rng.randint(-40, 40), sa - 1, sa + 1])
        cases.append(("num round %s %d" % (ta, r), "round(%s, %d)" % (la, r)))
        for w in (2, 4, 8):
            cases.append(("num toi%d %s 0" % (w, ta), "%s::int%d" % (la, w)))
        cases.append(("num neg %s 0" % ta, "-%s" % la))
        cases.append(("num abs %s 0" % ta, "abs(%s)" % la))
    assert check(pg, cases, same_text, numeric_out_of_range) > 10000


# ------------------------------------------------------------------ date/time

def ymd_from_days(d):
    """proleptic Gregorian calendar date of a day number relative to
    2000-01-01 (Hinnant's civil_from_days, independent of PostgreSQL's
    Julian-day formulas); astronomical year"""
    z = d + 10957 + 719468   # days since 0000-03-01
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return (y + 1 if month <= 2 else y), month, day


def date_lit(d):
    if d == -(1 << 31):
        return "'-infinity'::date"
    if d == (1 << 31) - 1:
        return "'infinity'::date"
    y, m, day = ymd_from_days(d)
    if y <= 0:
        return "'%04d-%02d-%02d BC'::date" % (1 - y, m, day)
    return "'%04d-%02d-%02d'::date" % (y, m, day)


def ts_lit(t):
    if t == -(1 << 63):
        return "'-infinity'::timestamp"
    if t == (1 << 63) - 1:
        return "'infinity'::timestamp"
    d, us = divmod(t, USECS_PER_DAY)
    y, m, day = ymd_from_days(d)
    hh, rest = divmod(us, 3600 * 1000000)
    mi, rest = divmod(rest, 60 * 1000000)
    ss, frac = divmod(rest, 1000000)
    bc = y <= 0
    return "'%04d-%02d-%02d %02d:%02d:%02d.%06d%s'::timestamp" % (
        1 - y if bc else y, m, day, hh, mi, ss, frac, " BC" if bc else "")


def date_values(rng, n):
    edges = [MIN_DATE, MIN_DATE + 1, END_DATE - 1, END_DATE - 2, 0, -1, 1, -730120,
             -730119, -730485, 7304, 7670, 8035, 8400, 9131, 3652059 - 10957,
             106741034 - 1]
    out = []
    for _ in range(n):
        k = rng.random()
        if k < 0.15:
            out.append(rng.choice(edges))
        elif k < 0.45:
            # around new year, where ISO weeks and years cross over
            y = rng.randint(-4700, 9999)
            out.append(rng.randint(-8, 8) + days_of_ymd(y, 1, 1))
        elif k < 0.75:
            out.append(rng.randint(-800000, 800000))
        else:
            out.append(rng.randint(MIN_DATE, END_DATE - 1))
    return [min(max(d, MIN_DATE), END_DATE - 1) for d in out]


def days_of_ymd(y, m, d):
    """inverse of ymd_from_days (Hinnant's days_from_civil)"""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468 - 10957


DATE_FIELDS = ["day", "week", "month", "quarter", "year", "decade", "century",
               "millennium", "dow", "isodow", "doy", "isoyear", "epoch", "julian"]
TS_EXTRACT_FIELDS = ["microseconds", "milliseconds", "second", "minute", "hour", "day",
                     "week", "month", "quarter", "year", "decade", "century",
                     "millennium", "dow", "isodow", "doy", "isoyear", "epoch"]
TRUNC_FIELDS = ["microseconds", "milliseconds", "second", "minute", "hour", "day",
                "week", "month", "quarter", "year", "decade", "century", "millennium"]


def test_date_ops(pg):
    rng = random.Random(SEED + 5)
    inf = [-(1 << 31), (1 << 31) - 1]
    cases = []
    xs = date_values(rng, 1200) + inf
    ys = date_values(rng, 1200) + inf[::-1]
    for a, b in zip(xs, ys):
        k = rng.choice([rng.randint(-1000, 1000), rng.randint(-(1 << 31), (1 << 31) - 1),
                        END_DATE - 1 - a if rng.random() < 0.5 else END_DATE - a,
                        a - MIN_DATE, a - MIN_DATE + 1])
        k = max(min(k, (1 << 31) - 1), -(1 << 31))
        la, lb = date_lit(a), date_lit(b)
        # infinite results print as such: date - date would reject them
        days = ("(SELECT CASE WHEN isfinite(r) THEN (r - %s)::text ELSE r::text END "
                "FROM (SELECT %%s AS r) s)" % date_lit(0))
        cases.append(("date pli %d %d" % (a, k), days % ("%s + %d" % (la, k))))
        cases.append(("date mii %d %d" % (a, k), days % ("%s - %d" % (la, k))))
        cases.append(("date mi %d %d" % (a, b), "%s - %s" % (la, lb)))
        cases.append(("date cmp %d %d" % (a, b), "sign(date_cmp(%s, %s))::int" % (la, lb)))
    infinite = lambda b, case: any(str(v) in case[0].split()[2:] for v in inf)
    check(pg, cases, same_date, infinite)
    # date -> timestamp (4714 BC .. 294276 AD fit, later dates fail)
    tcases = []
    for a in date_values(rng, 600):
        tcases.append(("date tots %d 0" % a, ts_us_sql("%s::timestamp" % date_lit(a))))
    check(pg, tcases, same_ts)


def test_date_extract(pg):
    rng = random.Random(SEED + 6)
    cases = []
    for a in date_values(rng, 900):
        for f in DATE_FIELDS:
            cases.append(("date ext %s %d" % (f, a), "extract(%s from %s)" % (f, date_lit(a))))
    for f in DATE_FIELDS:
        for a in (-(1 << 31), (1 << 31) - 1):
            cases.append(("date ext %s %d" % (f, a), "extract(%s from %s)" % (f, date_lit(a))))
    assert check(pg, cases, same_text, lambda b, case: "2147483" in case[0]) > 10000
    # the time-of-day fields are refused by PostgreSQL for date, and the
    # engine says it does not do them
    r = pg_eval(pg, ["extract(hour from date '2020-01-01')"])
    assert r[0].startswith("ERR ")


def ts_values(rng, n):
    edges = [MIN_TS, MIN_TS + 1, END_TS - 1, END_TS - 2, 0, -1, 1,
             -USECS_PER_DAY, EPOCH_SHIFT_US, -EPOCH_SHIFT_US,
             (106741034 - 1) * USECS_PER_DAY,      # 294276-12-31 ... close to the end
             END_TS - USECS_PER_DAY * 400]
    out = []
    for _ in range(n):
        k = rng.random()
        if k < 0.15:
            out.append(rng.choice(edges))
        elif k < 0.45:
            y = rng.randint(-4712, 9999)
            d = rng.randint(-8, 8) + days_of_ymd(y, 1, 1)
            out.append(d * USECS_PER_DAY + rng.randint(0, USECS_PER_DAY - 1))
        elif k < 0.6:
            out.append(rng.randint(-10 ** 14, 10 ** 14))
        else:
            out.append(rng.randint(MIN_TS, END_TS - 1))
    return [min(max(t, MIN_TS), END_TS - 1) for t in out]


def test_timestamp_extract(pg):
    rng = random.Random(SEED + 7)
    cases = []
    for t in ts_values(rng, 700):
        for f in TS_EXTRACT_FIELDS:
            cases.append(("ts ext %s %d" % (f, t), "extract(%s from %s)" % (f, ts_lit(t))))
    for f in TS_EXTRACT_FIELDS:
        for t in (-(1 << 63), (1 << 63) - 1):
            cases.append(("ts ext %s %d" % (f, t), "extract(%s from %s)" % (f, ts_lit(t))))
    assert check(pg, cases, same_text, lambda b, case: "922337203685477" in case[0]) > 10000


def test_timestamp_trunc_cmp(pg):
    rng = random.Random(SEED + 8)
    cases = []
    ts = ts_values(rng, 600)
    for t in ts:
        for f in TRUNC_FIELDS:
            cases.append(("ts trunc %s %d" % (f, t),
                          ts_us_sql("date_trunc('%s', %s)" % (f, ts_lit(t)))))
    check(pg, cases, same_ts)
    ccases = []
    for a, b in zip(ts, ts_values(rng, 600)):
        if rng.random() < 0.1:
            b = a
        ccases.append(("ts cmp %d %d" % (a, b), "sign(timestamp_cmp(%s, %s))::int" % (ts_lit(a), ts_lit(b))))
    check(pg, ccases, same_text)
    # infinities pass through date_trunc unchanged
    icases = [("ts trunc year %d" % t, "date_trunc('year', %s) = %s" % (ts_lit(t), ts_lit(t)))
              for t in (-(1 << 63), (1 << 63) - 1)]
    cli = cli_eval([c[0] for c in icases])
    assert cli == [str(-(1 << 63)), str((1 << 63) - 1)]
    assert pg_eval(pg, [c[1] for c in icases]) == ["true", "true"]


# ------------------------------------------------------------------ LIKE

LIKE_ALPHABET = ["a", "b", "c", "%", "_", "\\", "\u00e9", "\u20ac", "\U0001F600", "x"]


def like_string(rng, maxlen, wild):
    chars = LIKE_ALPHABET if wild else ["a", "b", "c", "\u00e9", "\u20ac", "\U0001F600",
                                        "%", "_", "\\"]
    weights = [6, 4, 2, 3 if wild else 1, 3 if wild else 1, 2 if wild else 1, 2, 2, 2, 1][:len(chars)]
    return "".join(rng.choices(chars, weights, k=rng.randint(0, maxlen)))


def test_like(pg):
    rng = random.Random(SEED + 9)
    cases = []
    for i in range(4000):
        t = like_string(rng, 10, False)
        if rng.random() < 0.5:
            # a pattern built from the text, so matches are common
            p = "".join(rng.choice(["%", "_", c, c, c, "\\" + c]) if rng.random() < 0.5 else c
                        for c in t)
            if rng.random() < 0.3:
                p = p + rng.choice(["%", "\\", "_", "%\\"])
        else:
            p = like_string(rng, 8, True)
        th = t.encode().hex() or "-"
        ph = p.encode().hex() or "-"
        cases.append(("like %s %s" % (th, ph),
                      "'%s' LIKE '%s'" % (t.replace("'", "''"), p.replace("'", "''"))))
    assert check(pg, cases, same_bool) == 4000
