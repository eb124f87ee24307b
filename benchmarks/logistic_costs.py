"""What the logistic loss costs a whole call beyond its passes: a checkpoint, and SDCA's first pass.

    python benchmarks/logistic_costs.py [--data a9a w8a ...] [--repeat 9]

For each data set (rows scaled by the mean example norm, λ = 1/n, one thread):

* a checkpoint (``driver._checkpoint``, what every method's trace row costs): ms, and ns an example
  beyond its sweep over X (0.65 ns a nonzero and 20 µs, ``costs.CHECKPOINT_NS_PER_NNZ`` and
  ``CHECKPOINT_OVERHEAD_NS``), with a dual method's α and with a primal method's α(w), beside the
  squared loss's;
* SDCA (permutation order) from α = 0: ns a step of its first pass, where every coordinate starts at
  b = 0, and of passes 2–5.

Each number is the minimum of ``--repeat`` runs, compilation outside. To compare two versions of cdlab,
run this file under each (e.g. ``PYTHONPATH=<a git worktree>``) and read the columns side by side.
"""
from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # before numba is imported

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import cdlab  # noqa: E402
from cdlab.solvers.base import get_method  # noqa: E402
from cdlab.solvers.costs import CHECKPOINT_NS_PER_NNZ, CHECKPOINT_OVERHEAD_NS  # noqa: E402
from cdlab.solvers.driver import _checkpoint  # noqa: E402
from _peers import real  # noqa: E402

DATA = ("a9a", "w8a", "ijcnn1", "phishing", "mushrooms", "rcv1_small", "reuters_moneyfx")


def best_of(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def checkpoint_row(X, y, loss, repeat):
    """(ms, ns an example beyond the sweep) of a checkpoint with the dual's α, then with α(w)."""
    problem = cdlab.Problem(X, y, loss=loss, lam=1.0 / X.shape[0])
    res = cdlab.solve(problem, method="sdca", sampling="permutation", max_passes=3, tol=0.0, seed=0)
    out = []
    for alpha in (res.alpha, None):
        seconds = best_of(lambda: _checkpoint(problem, res.w, alpha), repeat)
        rest = (seconds * 1e9 - CHECKPOINT_NS_PER_NNZ * problem.nnz - CHECKPOINT_OVERHEAD_NS) / problem.n_samples
        out += [1e3 * seconds, rest]
    return out


def sdca_passes(X, y, repeat):
    """ns a step of SDCA's first pass from α = 0, and of passes 2–5 (logistic, permutation order)."""
    problem = cdlab.Problem(X, y, loss="logistic", lam=1.0 / X.shape[0])
    spec, n = get_method("sdca"), X.shape[0]
    spec.make(problem, "permutation", np.random.default_rng(0)).run(n)  # compilation
    first, later = [], []
    for _ in range(repeat):
        state = spec.make(problem, "permutation", np.random.default_rng(0))
        t0 = time.perf_counter()
        state.run(n)
        first.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        state.run(4 * n)
        later.append(time.perf_counter() - t0)
    return 1e9 * min(first) / n, 1e9 * min(later) / (4 * n)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="*", default=list(DATA))
    ap.add_argument("--repeat", type=int, default=9)
    args = ap.parse_args(argv)
    print(f"cdlab {cdlab.__file__}")
    print(f"{'data':16s} {'logistic checkpoint: ms, ns/example (α | α(w))':>48s} {'squared: ms (α)':>16s}"
          f" {'SDCA logistic ns/step: pass 1, 2–5':>36s}")
    for name in args.data:
        X, y = real(name)
        ms, ns, ms_w, ns_w = checkpoint_row(X, y, "logistic", args.repeat)
        sq_ms = checkpoint_row(X, y, "squared", args.repeat)[0]
        first, later = sdca_passes(X, y, args.repeat)
        print(f"{name:16s} {ms:10.3f} {ns:7.1f}   | {ms_w:10.3f} {ns_w:7.1f}      {sq_ms:12.3f}"
              f" {first:18.0f} {later:12.0f}")


if __name__ == "__main__":
    main()
