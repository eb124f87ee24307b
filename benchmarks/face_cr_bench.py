"""Conjugate residuals on the polished face (``_face_cr.face_cr``, shipped) against conjugate gradients (``face_cg``
below, the kernel cdlab shipped before it, on the same helpers).

    python benchmarks/face_cr_bench.py [NAME:FACTOR ...] [--repeats 3] [--seeds 8]

Each problem of benchmarks/race.py (data scaled by the mean example norm, hinge loss, λ = FACTOR/n) is solved
by SDCA with shrinking (the race's hinge method) to a certified relative gap of 1e-6 (P* from
``race.certified_p_star``): whole ``cdlab.solve`` calls, certificate included, in interleaved pairs in this
one process, "CR" as shipped, "CG" with ``_face_cr.face_cr`` replaced by ``face_cg``. Each timed call runs the
seeds 0 … SEEDS − 1 one after the other: a polish changes the random path that follows. JIT compilation happens
before the timing. Printed: median milliseconds of each call, the median of the pairs' ratios (CG ÷ CR: > 1, CR
faster) and their range, the passes of each (median and range over the runs), and the largest relative difference
of the certified P between them.
"""
from __future__ import annotations

import race  # noqa: F401  first: it sets numba's thread count
import numpy as np
from numba import njit

from cdlab.solvers import _face_cr
from cdlab.solvers._box_newton import group_box, group_heads, share_out
from cdlab.solvers._face_cr import FACE_CR_RTOL, box_reach, face_product, face_start, fix_at_bounds
from setting_pairs import switch_main

DEFAULT = ("reuters_moneyfx:1", "reuters_moneyfx:0.01", "madelon:0.01", "colon-cancer:0.01")


@njit(cache=True, nogil=True)
def face_cg(indptr, indices, data, y, code, s, lam_n, row_sq, alpha, v, group_ptr, members, budget):
    """Preconditioned CG on f over the examples ``members`` in groups (``_face_cr``'s module docstring and
    ``face_cr``'s), in place on α and v, reading at most ``budget`` nonzeros of X; returns the nonzeros read."""
    face = group_heads(group_ptr, members)
    m = face.shape[0]
    d = v.shape[0]
    live_nnz = 0  # the nonzeros of the live examples' rows: a product reads them twice
    for k in range(m):
        live_nnz += indptr[face[k] + 1] - indptr[face[k]]
    if 3 * live_nnz > budget:  # room for the first residual and at least one product, or nothing is read
        return 0
    t, r, diag, sigma, c, low = face_start(indptr, indices, data, y, code, s, lam_n, row_sq, alpha, v, face)
    lower, upper = group_box(t, sigma, low, alpha, group_ptr, members)
    limit = np.empty(m)  # each live example's step to its bound along p
    live = np.ones(m, np.bool_)
    read = live_nnz
    p = np.zeros(m)
    q = np.zeros(m)
    u = np.empty(d)
    first = -1.0
    done = False
    while not done and read + 2 * live_nnz <= budget:
        # (re)start: steepest descent in the preconditioner's metric over the live examples
        rs = 0.0
        for k in range(m):
            p[k] = r[k] / diag[k] if live[k] else 0.0
            rs += r[k] * p[k]
        if first < 0.0:
            first = rs
        if rs <= FACE_CR_RTOL * FACE_CR_RTOL * first:
            break
        while read + 2 * live_nnz <= budget:
            pq = face_product(indptr, indices, data, face, sigma, live, c, lam_n, p, u, q)
            read += 2 * live_nnz
            reach = box_reach(t, p, lower, upper, limit)
            step = rs / pq if pq > 0.0 else np.inf
            cut = step >= reach
            if cut:
                step = reach
            if not np.isfinite(step):  # p = 0 on every live example
                done = True
                break
            for k in range(m):
                t[k] = min(max(t[k] + step * p[k], lower[k]), upper[k])
                r[k] -= step * q[k]
            for j in range(d):
                v[j] += step * u[j]
            if cut:  # CG restarts on the rest of the face
                live_nnz -= fix_at_bounds(t, p, lower, upper, limit, reach, live, face, indptr)
                break
            rs_new = 0.0
            for k in range(m):
                if live[k]:
                    rs_new += r[k] * r[k] / diag[k]
            if rs_new <= FACE_CR_RTOL * FACE_CR_RTOL * first:
                done = True
                break
            beta = rs_new / rs
            for k in range(m):
                p[k] = (r[k] / diag[k] + beta * p[k]) if live[k] else 0.0
            rs = rs_new
    share_out(alpha, sigma, t, upper, group_ptr, members)
    return read


def main(argv=None):
    switch_main(argv, __doc__.splitlines()[0], _face_cr, "face_cr", face_cg, ("CR", "CG"), DEFAULT, repeats=3,
                seeds=8)


if __name__ == "__main__":
    main()
