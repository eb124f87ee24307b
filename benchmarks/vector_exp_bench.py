"""e^{−|t|} over an array: numpy's ufunc against ``losses.exp_neg_abs``, whose loops LLVM vectorises (Cody–Waite
reduction, a degree-12 polynomial, 2^k from the exponent's bits), and numba's scalar ``math.exp``: numpy vectorises
its float64 exp with AVX-512 only (elsewhere each entry calls libm), and ``losses.logistic_tails`` takes
``exp_neg_abs`` there (``losses.NUMPY_SIMD_EXP``).

    python benchmarks/vector_exp_bench.py [--size 50000] [--repeats 300]

Prints numpy's dispatch for its exp, each way's median ms, numpy ÷ each, and the polynomial's largest error in ulps
against numpy's value.
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np
from numba import njit

from cdlab.losses import exp_neg_abs


@njit(cache=True)
def scalar_exp_neg(t, out):
    """out = e^{−|t|} by ``math.exp`` per entry (libm)."""
    for i in range(t.shape[0]):
        out[i] = math.exp(-abs(t[i]))


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
    out, bits, scalar = np.empty_like(t), np.empty(t.shape[0], np.int64), np.empty_like(t)
    exp_neg_abs(t, out, bits)
    scalar_exp_neg(t, scalar)
    simd = np.lib.introspect.opt_func_info("^exp$", "float64") if hasattr(np.lib, "introspect") else "unknown"
    print(f"numpy {np.__version__}; its exp for float64 dispatches to: {simd}")
    numpy_ms = median_ms(lambda: np.exp(-np.abs(t)), args.repeats)
    rows = [("numpy", numpy_ms), ("numba polynomial", median_ms(lambda: exp_neg_abs(t, out, bits), args.repeats)),
            ("numba math.exp", median_ms(lambda: scalar_exp_neg(t, scalar), args.repeats))]
    for name, ms in rows:
        print(f"{name:<18} {ms:8.3f} ms   numpy ÷ this {numpy_ms / ms:5.2f}")
    reference = np.exp(-np.abs(t))
    print(f"polynomial: largest error {np.max(np.abs(out - reference) / np.spacing(reference)):.1f} ulps of numpy's")


if __name__ == "__main__":
    main()
