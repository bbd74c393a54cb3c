#!/usr/bin/env python3
"""TPC-H data and query texts from DuckDB's tpch extension (dbgen inside).

Usage: tpch_gen.py OUTDIR [--sf SF]

Writes OUTDIR/<table>.csv ('|'-separated, RFC 4180 quoting, no header: what
PostgreSQL's COPY ... (FORMAT csv, DELIMITER '|') reads) for the eight
tables, and OUTDIR/queries/qNN.sql: the 22 query texts exactly as the
extension's tpch_queries() gives them.  Nothing of either is kept in the
repository.

The extension is found as the PyPI package `duckdb-extension-tpch` (whose
version must equal duckdb's: `pip install duckdb==V duckdb-extension-tpch==V`)
or, failing that, through DuckDB's own `INSTALL tpch` (which needs
extensions.duckdb.org).  Run it with the Python that has them; tpch.py finds
one by itself (see find_generator_python there).
"""
import argparse
import glob
import os
import sys

import duckdb

TABLES = ["region", "nation", "supplier", "customer", "part", "partsupp", "orders",
          "lineitem"]


def load_tpch(con):
    """LOAD the tpch extension: the PyPI package's file first, then INSTALL"""
    try:
        import duckdb_extension_tpch as pkg
        files = glob.glob(os.path.join(os.path.dirname(pkg.__file__), "extensions", "*",
                                       "tpch.duckdb_extension"))
        if files:
            con.execute("LOAD '%s'" % files[0].replace("'", "''"))
            return
    except ImportError:
        pass
    con.execute("INSTALL tpch")
    con.execute("LOAD tpch")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--sf", type=float, default=1.0)
    ap.add_argument("--check", action="store_true",
                    help="only check that the extension loads (exit 0) or not (exit 3)")
    a = ap.parse_args()
    con = duckdb.connect()
    try:
        load_tpch(con)
    except Exception as e:  # noqa: BLE001 - any failure means "no generator"
        print("tpch extension not available: %s" % e, file=sys.stderr)
        sys.exit(3)
    if a.check:
        return
    os.makedirs(os.path.join(a.outdir, "queries"), exist_ok=True)
    con.execute("CALL dbgen(sf = %r)" % a.sf)
    for t in TABLES:
        path = os.path.join(a.outdir, t + ".csv")
        con.execute("COPY %s TO '%s' (FORMAT csv, DELIMITER '|', HEADER false)"
                    % (t, path.replace("'", "''")))
    for nr, q in con.execute("SELECT query_nr, query FROM tpch_queries() ORDER BY 1").fetchall():
        with open(os.path.join(a.outdir, "queries", "q%02d.sql" % nr), "w") as f:
            f.write(q)
    print("tpch: sf=%g written to %s (duckdb %s)" % (a.sf, a.outdir, duckdb.__version__))


if __name__ == "__main__":
    main()
