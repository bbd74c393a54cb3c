"""Fixtures for the pgwarp interop tests.

Environment (set by scripts/test.sh):
  PGWARP_BIN        the pgwarp binary (default <repo>/build/pgwarp)
  PGHOST PGPORT PGUSER PGDATABASE   a throwaway PostgreSQL 15 cluster
  PGWARP_TEST_DIR   scratch directory shared with the server
"""
import os
import re
import shutil
import sys
import tempfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

from pwhelpers import cat_rows, cat_values, pg_dsn, run_pgwarp  # noqa: E402


@pytest.fixture(scope="session")
def pgwarp():
    """pgwarp(*args, timeout=..., env=..., mem_limit=...) -> (rc, stdout, stderr)"""
    return run_pgwarp


def _scratch_root():
    root = os.environ.get("PGWARP_TEST_DIR")
    if not root:
        root = os.path.join(tempfile.gettempdir(), "pgwarp-pytest-%d" % os.getuid())
        os.makedirs(root, exist_ok=True)
    return root


_counter = [0]


def _fresh_dir(name):
    """a new directory under PGWARP_TEST_DIR the server can read and write"""
    _counter[0] += 1
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:80]
    d = os.path.join(_scratch_root(), "%s.%d.%d" % (name, os.getpid(), _counter[0]))
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    os.chmod(d, 0o777)
    return d


@pytest.fixture
def scratch(request):
    """A fresh directory under PGWARP_TEST_DIR (readable and writable by the
    server too), removed after the test."""
    d = _fresh_dir(request.node.name)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def module_scratch(request):
    """The same for a whole test module (its tables' files), removed after
    its last test."""
    d = _fresh_dir(request.module.__name__)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="session")
def dsn():
    return pg_dsn()


@pytest.fixture(scope="module")
def db():
    """psycopg connection (autocommit) to the test cluster."""
    import psycopg
    try:
        conn = psycopg.connect(pg_dsn(), autocommit=True)
    except psycopg.OperationalError as e:
        pytest.fail("cannot connect to the test PostgreSQL cluster (%s): %s" % (pg_dsn(), e))
    yield conn
    conn.close()


@pytest.fixture(scope="session")
def cat_encoding():
    """(cat_values, cat_rows): what `pgwarp cat` prints for a pyarrow array /
    for record batches, computed from pyarrow (see pwhelpers)."""
    return cat_values, cat_rows
