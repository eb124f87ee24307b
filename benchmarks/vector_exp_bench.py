"""e^{−|t|} over an array: numpy's ufunc (``losses.logistic_tails``' way) against a numba loop that LLVM vectorises
(Cody–Waite reduction, a degree-12 polynomial, 2^k from the exponent's bits in a second loop), and numba's scalar
``math.exp``: a probe for the logistic loss's exps on machines whose numpy has no SIMD exp for float64 (numpy
vectorises it with AVX-512 only: elsewhere each entry calls libm).

    python benchmarks/vector_exp_bench.py [--size 50000] [--repeats 300]

Prints numpy's SIMD extensions, each way's median ms, numpy ÷ each, and the polynomial's largest error in ulps
against numpy's value. Nothing of cdlab ships this exp: a lead, not a feature.
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np
from numba import njit

LN2_HI, LN2_LO, INV_LN2 = 6.93147180369123816490e-01, 1.90821492927058770002e-10, 1.4426950408889634
# e^x for x below this is subnormal or 0: the polynomial's 2^k would leave the exponent's range
EXP_FLOOR = -708.0


@njit(cache=True, fastmath={"contract"})
def polynomial_exp_neg(t, out, scale_bits):
    """out = e^{−|t|}: x = k ln2 + r with |r| ≤ ln2/2 (ln2 split in two for an exact product), e^r by its Taylor
    polynomial of degree 12 in Horner form, times 2^k written as bits into ``scale_bits`` (int64, as long as t)."""
    n = t.shape[0]
    for i in range(n):
        x = max(-abs(t[i]), EXP_FLOOR)
        k = math.floor(x * INV_LN2 + 0.5)
        r = (x - k * LN2_HI) - k * LN2_LO
        p = 1.0 / 479001600.0
        for c in (39916800.0, 3628800.0, 362880.0, 40320.0, 5040.0, 720.0, 120.0, 24.0, 6.0, 2.0, 1.0, 1.0):
            p = p * r + 1.0 / c
        out[i] = p
        scale_bits[i] = (np.int64(k) + 1023) << 52
    scale = scale_bits.view(np.float64)
    for i in range(n):
        out[i] *= scale[i]


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
    polynomial_exp_neg(t, out, bits)
    scalar_exp_neg(t, scalar)
    simd = np.lib.introspect.opt_func_info("^exp$", "float64") if hasattr(np.lib, "introspect") else "unknown"
    print(f"numpy {np.__version__}; its exp for float64 dispatches to: {simd}")
    numpy_ms = median_ms(lambda: np.exp(-np.abs(t)), args.repeats)
    rows = [("numpy", numpy_ms), ("numba polynomial", median_ms(lambda: polynomial_exp_neg(t, out, bits), args.repeats)),
            ("numba math.exp", median_ms(lambda: scalar_exp_neg(t, scalar), args.repeats))]
    for name, ms in rows:
        print(f"{name:<18} {ms:8.3f} ms   numpy ÷ this {numpy_ms / ms:5.2f}")
    reference = np.exp(-np.abs(t))
    print(f"polynomial: largest error {np.max(np.abs(out - reference) / np.spacing(reference)):.1f} ulps of numpy's")


if __name__ == "__main__":
    main()
