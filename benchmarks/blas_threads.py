"""The whole ``cdlab.solve`` call with BLAS's threads as the user left them and limited to one, side by side.

    python benchmarks/blas_threads.py [--repeats 5] [--tol 1e-6]

Run it with OPENBLAS_NUM_THREADS (and OMP/MKL_NUM_THREADS) unset: the first
setting is then BLAS's default, a thread per core. The second runs each call
inside ``threadpoolctl.threadpool_limits(1)``. The two alternate call by call,
so both see the same machine load. Neither a checkpoint (P, D, the gap) nor a
step of SDCA, gd or agd calls BLAS, so on a busy machine the two should agree
within the noise; a BLAS call left on that path shows as a first column many
times the second where d is large (rcv1_small, d = 47 k: OpenBLAS threads a dot
product above 10 k entries). lbfgs is such a case: scipy's L-BFGS-B itself
calls BLAS on vectors of d entries in every iteration. Problems: rcv1_small (hinge, logistic), a9a
(logistic) and a dense 2000 × 2000 Gaussian problem (logistic), λ = 1/n, rows
scaled by the mean example norm; SDCA (permutation) and, on rcv1_small
logistic, gd, agd and lbfgs. Prints the median seconds, the spread (max − min)/median
and the ratio of the medians. JIT compilation happens on a toy problem first.
"""
from __future__ import annotations

import argparse
import time
from contextlib import nullcontext

import numpy as np
from threadpoolctl import threadpool_limits

import cdlab
from _peers import real, scaled


def problems():
    rcv1, a9a = real("rcv1_small"), real("a9a")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((2000, 2000))
    y = np.sign(X @ rng.standard_normal(2000) + 0.1 * rng.standard_normal(2000))
    dense = scaled(X), y
    return [("rcv1_small", "hinge", "sdca", rcv1), ("rcv1_small", "logistic", "sdca", rcv1),
            ("rcv1_small", "logistic", "gd", rcv1), ("rcv1_small", "logistic", "agd", rcv1),
            ("rcv1_small", "logistic", "lbfgs", rcv1),
            ("a9a", "logistic", "sdca", a9a), ("dense 2000x2000", "logistic", "sdca", dense)]


def one(problem, method, tol, limit):
    t0 = time.perf_counter()
    with threadpool_limits(1) if limit else nullcontext():
        res = cdlab.solve(problem, method=method, sampling="permutation" if method == "sdca" else "uniform",
                          tol=tol, max_passes=2000, seed=0)
    if not res.converged:
        raise RuntimeError(f"{method}: {res!r}")
    return time.perf_counter() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--tol", type=float, default=1e-6)
    args = ap.parse_args(argv)
    X, y = real("heart_scale")
    for method in ("sdca", "gd", "agd", "lbfgs"):
        cdlab.solve(cdlab.Problem(X, y, loss="logistic", lam=1.0), method=method, max_passes=2)
    print(f"whole solve() call to gap ≤ {args.tol:g}; median of {args.repeats} s, spread = (max − min)/median")
    print(f"{'problem':18s} {'loss':9s} {'method':6s} {'BLAS default':>20s} {'BLAS 1 thread':>20s} {'ratio':>6s}")
    for name, loss, method, (X, y) in problems():
        problem = cdlab.Problem(X, y, loss=loss, lam=1.0 / X.shape[0])
        one(problem, method, args.tol, False)  # first touch of the problem's arrays, untimed
        runs = {False: [], True: []}
        for _ in range(args.repeats):
            for limit in (False, True):
                runs[limit].append(one(problem, method, args.tol, limit))
        cells = []
        for limit in (False, True):
            t = np.array(runs[limit])
            cells.append(f"{np.median(t):8.3f} ({(t.max() - t.min()) / np.median(t):4.0%})")
        ratio = np.median(runs[False]) / np.median(runs[True])
        print(f"{name:18s} {loss:9s} {method:6s} {cells[0]:>20s} {cells[1]:>20s} {ratio:6.2f}")


if __name__ == "__main__":
    main()
