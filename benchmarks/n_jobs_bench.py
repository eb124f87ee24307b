"""Seconds to a certified gap with n_jobs = 1 and 2 (PASSCoDe-Wild SDCA), side by side.

    python benchmarks/n_jobs_bench.py [--repeats 5] [--tol 1e-6] [--nnz 5e6]

Per problem (rows scaled by the mean example norm, λ = 1/n; a9a and a text-like
synthetic problem with power-law column counts, as benchmarks/race.py builds
it), SDCA with a random permutation per epoch is timed around the whole
``cdlab.solve`` call (kernel and certificates) to duality gap ≤ tol, the two
settings alternating run by run so that both see the same machine load. It
prints the median seconds (and the trace's solver seconds: the steps alone,
without the checkpoints), the spread (max − min)/median, the passes and the
final gap of each, and the ratio of the medians. JIT compilation happens on a
toy problem first. numba's thread count is its default (the cores).
"""
from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("NUMBA_NUM_THREADS", str(os.cpu_count()))  # before race.py's default of 1

import numba  # noqa: E402
import numpy as np  # noqa: E402

import cdlab  # noqa: E402
from _peers import real  # noqa: E402
from race import text_like  # noqa: E402


def one(problem, n_jobs, tol):
    t0 = time.perf_counter()
    res = cdlab.solve(problem, method="sdca", sampling="permutation", tol=tol, max_passes=2000, seed=0,
                      n_jobs=n_jobs)
    seconds = time.perf_counter() - t0
    last = res.trace.iloc[-1]
    if not res.converged:
        raise RuntimeError(f"n_jobs={n_jobs}: {res!r}")
    return seconds, last.time, last.passes, last.gap


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--nnz", type=float, default=5e6, help="nonzeros of the synthetic problem")
    ap.add_argument("--losses", nargs="*", default=["logistic", "hinge", "squared"])
    args = ap.parse_args(argv)
    X, y = real("heart_scale")
    for loss in args.losses:
        for n_jobs in (1, 2):
            cdlab.solve(cdlab.Problem(X, y, loss=loss, lam=1.0), method="sdca", max_passes=2, n_jobs=n_jobs)
    data = {"a9a": real("a9a"), f"text {args.nnz:.0e} nnz": text_like(args.nnz)}
    print(f"whole solve() call to gap ≤ {args.tol:g}, SDCA (permutation), λ = 1/n; median of {args.repeats}, "
          f"spread = (max − min)/median; numba threads {numba.config.NUMBA_NUM_THREADS}, layer "
          f"{numba.threading_layer()}")
    for name, (X, y) in data.items():
        for loss in args.losses:
            problem = cdlab.Problem(X, y, loss=loss, lam=1.0 / X.shape[0])
            runs = {1: [], 2: []}
            for _ in range(args.repeats):
                for n_jobs in (1, 2):
                    runs[n_jobs].append(one(problem, n_jobs, args.tol))
            med = {}
            for n_jobs, rows in runs.items():
                secs, steps_s, passes, gaps = np.array(rows).T
                med[n_jobs] = np.median(secs)
                print(f"{name:>14} {loss:>8} n_jobs={n_jobs}: {med[n_jobs]:7.3f} s (steps alone "
                      f"{np.median(steps_s):.3f} s), spread {np.ptp(secs) / med[n_jobs]:4.2f}, passes "
                      f"{np.median(passes):5.1f}, gap ≤ {gaps.max():.2e}; all: {' '.join(f'{t:.2f}' for t in secs)}")
            print(f"{name:>14} {loss:>8} n_jobs=1 ÷ n_jobs=2: {med[1] / med[2]:.2f}")


if __name__ == "__main__":
    main()
