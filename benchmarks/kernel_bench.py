"""Seconds per checkpoint interval of every numba kernel, without certificates: the kernels' own speed.

    python benchmarks/kernel_bench.py [--quick] [--repeat 5] [--only sdca spdc ...]

For each (data set, method, options) a fresh state (seed 0) runs one warm-up
interval (JIT compilation, caches), then ``--passes`` intervals are timed
around ``state.run``, an interval being the state's ``steps_per_pass`` steps
(about one pass over the data; one outer iteration, several gradient passes,
for agd); this is repeated ``--repeat`` times and the min and median
seconds per interval are printed with the spread (max − min)/median, beside a
fingerprint of the final iterate (the first 12 hex digits of a hash of w's
bytes) so that two versions of a kernel can be checked for bit-identical
results. Data are scaled by the mean example norm, λ = 1/n, one thread.
"""
from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # before numba is imported

import argparse  # noqa: E402
import hashlib  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import cdlab  # noqa: E402
from cdlab.solvers.base import get_method  # noqa: E402
from _peers import real  # noqa: E402

# (method, loss, sampling, options)
CASES = [
    ("sdca", "logistic", "uniform", {}),
    ("sdca", "hinge", "uniform", {}),
    ("sdca", "squared", "uniform", {}),
    ("dual_cd", "logistic", "uniform", {}),
    ("primal_cd", "logistic", "uniform", {}),
    ("svrg", "logistic", "uniform", {}),
    ("sag", "logistic", "uniform", {}),
    ("saga", "logistic", "uniform", {}),
    ("sgd", "logistic", "uniform", {}),
    ("spdc", "logistic", "uniform", {}),
    ("spdc", "logistic", "uniform", {"batch_size": 8}),
    ("asdca", "logistic", "uniform", {}),
    ("asdca", "logistic", "uniform", {"batch_size": 8}),
    ("agd", "logistic", "uniform", {}),
    ("appa", "logistic", "uniform", {}),
]


def fingerprint(w):
    return hashlib.sha1(np.ascontiguousarray(w, dtype=np.float64).tobytes()).hexdigest()[:12]


def time_case(problem, method, sampling, options, passes, repeat):
    spec = get_method(method)
    times, fp = [], None
    for _ in range(repeat):
        state = spec.make(problem, sampling, np.random.default_rng(0), **options)
        state.run(state.steps_per_pass)  # warm-up: compilation and caches
        n_steps = passes * state.steps_per_pass
        t0 = time.perf_counter()
        state.run(n_steps)
        times.append((time.perf_counter() - t0) / passes)
        fp = fingerprint(state.iterate()[0])
    return np.array(times), fp


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one data set, 3 repeats")
    ap.add_argument("--repeat", type=int, default=None)
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--only", nargs="*", default=None, help="methods to run (default: all)")
    ap.add_argument("--data", nargs="*", default=None, help="data sets (default: rcv1_small a9a)")
    args = ap.parse_args()
    repeat = args.repeat or (3 if args.quick else 5)
    names = args.data or (["rcv1_small"] if args.quick else ["rcv1_small", "a9a"])
    print(f"{'data':<11} {'method':<8} {'loss':<9} {'options':<15} {'min ms/int':>11} {'median':>8} "
          f"{'spread':>7}  fingerprint")
    for name in names:
        X, y = real(name)
        for method, loss, sampling, options in CASES:
            if args.only and method not in args.only:
                continue
            problem = cdlab.Problem(X, y, loss=loss, lam=1.0 / X.shape[0])
            t, fp = time_case(problem, method, sampling, options, args.passes, repeat)
            med = float(np.median(t))
            opts = ",".join(f"{k}={v}" for k, v in options.items()) or "-"
            print(f"{name:<11} {method:<8} {loss:<9} {opts:<15} {1e3 * t.min():>11.3f} {1e3 * med:>8.3f} "
                  f"{(t.max() - t.min()) / med:>7.1%}  {fp}", flush=True)


if __name__ == "__main__":
    main()
