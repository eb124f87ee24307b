"""The logistic loss's e = e^{−|t|} and log(1 + e) over an array: numpy's ufuncs against ``losses.exp_neg_abs`` and
``losses.log1p_unit``, whose loops LLVM vectorises, and numba's scalar ``math.exp`` and ``math.log1p``: numpy
vectorises its float64 exp and log1p with AVX-512 only (elsewhere each entry calls libm), and
``losses.logistic_tails`` takes the loops there (``losses.NUMPY_SIMD_EXP``, ``NUMPY_SIMD_LOG1P``).

    python benchmarks/vector_exp_bench.py [--size 50000] [--repeats 300]

Prints numpy's dispatch for each ufunc, each way's median ms, numpy ÷ each, and the loops' largest error in ulps
against numpy's values.
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np
from numba import njit

from cdlab.losses import exp_neg_abs, log1p_unit


@njit(cache=True)
def scalar_exp_neg(t, out):
    """out = e^{−|t|} by ``math.exp`` per entry (libm)."""
    for i in range(t.shape[0]):
        out[i] = math.exp(-abs(t[i]))


@njit(cache=True)
def scalar_log1p(x, out):
    """out = log(1 + x) by ``math.log1p`` per entry (libm)."""
    for i in range(x.shape[0]):
        out[i] = math.log1p(x[i])


def median_ms(fn, repeats):
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        seconds.append(time.perf_counter() - start)
    return 1e3 * float(np.median(seconds))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=50_000)
    parser.add_argument("--repeats", type=int, default=300)
    args = parser.parse_args(argv)
    t = np.random.default_rng(0).standard_normal(args.size) * 5.0
    e = np.exp(-np.abs(t))
    out, bits = np.empty_like(t), np.empty(t.shape[0], np.int64)
    cases = {"exp": (lambda: np.exp(-np.abs(t)), lambda: exp_neg_abs(t, out, bits), lambda: scalar_exp_neg(t, out)),
             "log1p": (lambda: np.log1p(e), lambda: log1p_unit(e, out), lambda: scalar_log1p(e, out))}
    for ufunc, (numpy_way, loops, scalar) in cases.items():
        loops(), scalar()
        simd = np.lib.introspect.opt_func_info(f"^{ufunc}$", "float64") if hasattr(np.lib, "introspect") else "?"
        print(f"numpy {np.__version__}; its {ufunc} for float64 dispatches to: {simd}")
        numpy_ms = median_ms(numpy_way, args.repeats)
        for name, ms in (("numpy", numpy_ms), ("numba loops", median_ms(loops, args.repeats)),
                         (f"numba math.{ufunc}", median_ms(scalar, args.repeats))):
            print(f"  {name:<18} {ms:8.3f} ms   numpy ÷ this {numpy_ms / ms:5.2f}")
        loops()
        reference = numpy_way()
        ulps = np.max(np.abs(out - reference) / np.maximum(np.spacing(reference), 5e-324))
        print(f"  loops: largest difference from numpy's values {ulps:.1f} ulps")


if __name__ == "__main__":
    main()
