"""SDCA with and without prefetching the row a few visits ahead (``cdlab.solvers._kernels.PREFETCH_AHEAD``).

A third variant prefetches only that row's first lines where X exceeds the cache (where the kernels prefetch
all of it); on the shipped data sets, all in the cache, it runs as "with" does: it measures on ``text`` cases.

    python benchmarks/prefetch_bench.py [--repeats 7] [CASE ...]

A CASE is NAME:LOSS:LAMBDA_FACTOR:SHRINKING, e.g. ``a9a:logistic:1:0`` or
``text:hinge:0.01:1`` (``text``: the race's text-like problem at 1e7 nonzeros).
The variants run in this one process, interleaved: "with" is cdlab as
shipped; "without" is the same code with the prefetches switched off (the
random-order kernel's ``ahead`` argument 0, the shrinking kernel compiled again
with its PREFETCH_MIN_NNZ out of reach); "first lines" prefetches the row's
first lines (``prefetch_row``) where the shipped kernels prefetch all of its
lines (``prefetch_whole_row``: both kernels compiled again with it replaced). Each run is a whole ``cdlab.solve``
call to a certified relative gap of 1e-6 (the race's protocol: rows scaled by
the mean norm, λ = factor/n, one thread), JIT compilation before the timing.
Printed: the median seconds of each, the median of the ratios without ÷ with
and first lines ÷ with (each over the runs of one round) and their range, and
the passes (equal in all: a prefetch changes no value, tests/test_kernels.py).
"""
from __future__ import annotations

import argparse
import time
import types

import numpy as np
from numba import njit

import cdlab
import cdlab.solvers._shrinking as shrinking
import cdlab.solvers.dual_cd as dual_cd
from cdlab.solvers._kernels import prefetch_row
from race import certified_p_star, make_problem, real, text_like, warm_up

CASES = ["a9a:logistic:1:0", "ijcnn1:logistic:1:0", "w8a:logistic:1:0", "phishing:logistic:1:0",
         "reuters_moneyfx:logistic:1:0", "a9a:hinge:1:1", "a9a:hinge:0.01:1", "w8a:hinge:1:1", "w8a:hinge:0.01:1",
         "ijcnn1:hinge:1:1"]


def recompiled(kernel, boundscheck=False, **constants):
    """``kernel`` compiled again from its source with some of its module's constants replaced (and, with
    ``boundscheck``, numba's bounds checks on): the same kernel with another compile-time setting."""
    f = kernel.py_func
    return njit(nogil=True, boundscheck=boundscheck)(types.FunctionType(
        f.__code__, dict(f.__globals__, **constants), f.__name__, f.__defaults__, f.__closure__))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="*", default=CASES)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args(argv)
    first_lines = njit(inline="always")(lambda indptr, indices, data, i, with_indices: prefetch_row(
        indptr, indices, data, i))
    shipped = (dual_cd.prefetch_ahead, dual_cd.dual_cd_chunk, shrinking.shrinking_chunk)
    variants = {"without": (lambda problem: 0, shipped[1], recompiled(shrinking.shrinking_chunk,
                                                                      PREFETCH_MIN_NNZ=2 ** 62)),
                "first lines": (shipped[0], recompiled(dual_cd.dual_cd_chunk, prefetch_whole_row=first_lines),
                                recompiled(shrinking.shrinking_chunk, prefetch_whole_row=first_lines)),
                "with": shipped}

    def use(name):
        dual_cd.prefetch_ahead, dual_cd.dual_cd_chunk, shrinking.shrinking_chunk = variants[name]

    warm_up()
    try:
        run(args, variants, use)
    finally:
        use("with")


def run(args, variants, use):
    print(f"{'case':<30} {'without s':>10} {'first s':>10} {'with s':>10} {'w/o÷with':>8} {'range':>12} "
          f"{'first÷with':>10} {'range':>12} {'passes':>7}")
    for case in args.cases:
        name, loss, factor, shrink = case.split(":")
        X, y = text_like(1e7) if name == "text" else real(name)
        problem = make_problem(X, y, loss, float(factor))
        kwargs = dict(method="sdca", sampling="permutation", tol=1e-6 * abs(certified_p_star(problem)), seed=0,
                      max_passes=5000, shrinking=shrink == "1")
        seconds, passes = {v: [] for v in variants}, {v: set() for v in variants}
        for v in variants:  # compile each
            use(v)
            cdlab.solve(problem, **kwargs)
        for _ in range(args.repeats):
            for v in variants:
                use(v)
                t0 = time.perf_counter()
                result = cdlab.solve(problem, **kwargs)
                seconds[v].append(time.perf_counter() - t0)
                passes[v].add(float(result.trace.passes.iloc[-1]))
        if len(set.union(*passes.values())) != 1:
            raise AssertionError(f"{case}: passes differ between the prefetch variants: {passes}")
        without, first, with_ = (np.array(seconds[v]) for v in ("without", "first lines", "with"))
        spans = [(np.median(r), f"[{r.min():.2f}, {r.max():.2f}]") for r in (without / with_, first / with_)]
        print(f"{case:<30} {np.median(without):>10.4f} {np.median(first):>10.4f} {np.median(with_):>10.4f} "
              f"{spans[0][0]:>8.2f} {spans[0][1]:>12} {spans[1][0]:>10.2f} {spans[1][1]:>12} "
              f"{result.trace.passes.iloc[-1]:>7.1f}", flush=True)


if __name__ == "__main__":
    main()
