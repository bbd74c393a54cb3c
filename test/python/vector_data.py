"""Synthetic clustered float32 vectors for the vector tests and benchmark,
and loading them into heap tables through COPY text (so no pg_warp decoder
touches the oracle's copy)."""
import numpy as np


def clustered(n, dims, clusters, seed, normalise=False):
    """n vectors around `clusters` random centres (anisotropic Gaussian
    spread), float32.  Synthetic."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(0, 1, (clusters, dims))
    scales = rng.uniform(0.05, 0.4, (clusters, dims))
    which = rng.integers(0, clusters, n)
    x = centres[which] + rng.normal(0, 1, (n, dims)) * scales[which]
    x = x.astype(np.float32)
    if normalise:
        x /= np.linalg.norm(x, axis=1, keepdims=True).astype(np.float32)
    return x


def literal(v):
    """a real[] literal that parses back to exactly these float32 values"""
    if v is None:
        return None
    return "{" + ",".join(np.format_float_positional(np.float32(e), unique=True,
                                                      trim="-") for e in v) + "}"


def load(conn, table, vectors, extra=None):
    """COPY (id, v[, extra...]) rows into `table`; vectors[i] may be None"""
    with conn.cursor() as cur:
        with cur.copy("COPY %s FROM STDIN" % table) as cp:
            for i, v in enumerate(vectors):
                row = [i, literal(v)]
                if extra is not None:
                    row += list(extra[i])
                cp.write_row(row)


def exact_order(kind, x, q):
    """row order by distance in float64 (numpy), for tie-free data"""
    x64 = x.astype(np.float64)
    q64 = np.asarray(q, dtype=np.float64)
    if kind == "<->":
        d = np.sqrt(((x64 - q64) ** 2).sum(axis=1))
    elif kind == "<#>":
        d = -(x64 @ q64)
    else:
        d = 1 - (x64 @ q64) / np.sqrt((x64 * x64).sum(axis=1) * (q64 @ q64))
    return d, np.argsort(d, kind="stable")
