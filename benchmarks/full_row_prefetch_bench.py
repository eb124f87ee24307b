"""Row-order sweeps over full rows with and without prefetching the row ahead (``_kernels.FULL_ROW_AHEAD``).

    python benchmarks/full_row_prefetch_bench.py [--repeats 9] [DATA ...]

DATA: ``dense`` (the race's dense 1e5 × 500 problem), or a shipped data set
whose rows are full (madelon, colon-cancer). Both variants run in this one
process, in interleaved pairs, one thread: "with" is cdlab as shipped;
"without" is the same kernels compiled again with the prefetch helpers
replaced by no-ops (``prefetch_full_row_ahead``, ``prefetch_dense_row_ahead``).
Timed: the kernels (the checkpoint's ``certificate_sweep``, Newton–CG's
``hessian_product`` and ``jacobi`` on dense rows, and for reference numpy's
BLAS gemv X @ v), then whole ``cdlab.solve`` calls of Newton (logistic,
λ = 1/n and 0.01/n, to a certified relative gap of 1e-6), whose CG path reads X
through ``newton_cg_direction`` and ``certified_jacobi_sweep`` (both swapped for the
"without" run). JIT compilation happens before the timing. Printed: the median
milliseconds of each, the median of the pairs' ratios (without ÷ with) and
their range; the passes of each Newton call (equal: a prefetch changes no
value, tests/test_kernels.py).
"""
from __future__ import annotations

import argparse
import gc
import time

import numpy as np
from numba import njit
from threadpoolctl import threadpool_limits

import cdlab
import cdlab.solvers._kernels as K
import cdlab.solvers._newton_cg as NC
import cdlab.solvers.newton as newton
from prefetch_bench import recompiled
from race import certified_p_star, dense, make_problem, real

NOOPS = {"prefetch_full_row_ahead": njit(lambda indptr, data, i, hi, d: None),
         "prefetch_dense_row_ahead": njit(lambda flat, i, n, d: None)}


def bare(kernel, **more):
    """``kernel`` compiled again with the prefetch helpers (and ``more`` of its globals) replaced."""
    return recompiled(kernel, **NOOPS, **more)


def bare_sweeps():
    """{name: the Newton–CG kernel without prefetches}: each compiled again over its bare row sweep."""
    out = {"hessian_product": bare(NC.hessian_product, hessian_rows=bare(NC.hessian_rows)),
           "jacobi": bare(NC.jacobi, jacobi_rows=bare(NC.jacobi_rows))}
    out["certified_jacobi_sweep"] = bare(NC.certified_jacobi_sweep, certified_jacobi=bare(
        NC.certified_jacobi, certified_rows=bare(NC.certified_rows)))
    out["newton_cg_direction"] = bare(
        NC.newton_cg_direction,
        hessian_vector_product=bare(NC.hessian_vector_product, hessian_product=out["hessian_product"]),
        jacobi_sweep=bare(NC.jacobi_sweep, jacobi=out["jacobi"]))
    return out


def interleaved(pairs, repeats, collect=False):
    """{name: (median ms with, median ms without, median ratio, min ratio, max ratio)} over interleaved runs;
    ``collect``: ``gc.collect()`` before each timed run, as benchmarks/race.py does (the caches then as cold as
    there)."""
    out = {}
    for name, (with_fn, without_fn) in pairs.items():
        with_fn(), without_fn()  # compile
        ws, wos = [], []
        for _ in range(repeats):
            for fn, acc in ((with_fn, ws), (without_fn, wos)):
                if collect:
                    gc.collect()
                t = time.perf_counter()
                fn()
                acc.append(time.perf_counter() - t)
        ratios = np.array(wos) / np.array(ws)
        out[name] = (1e3 * np.median(ws), 1e3 * np.median(wos), np.median(ratios), ratios.min(), ratios.max())
    return out


def kernel_pairs(problem):
    n, d = problem.n_samples, problem.n_features
    indptr, indices, data = problem.csr_arrays
    full = problem.data.X_dense
    rng = np.random.default_rng(0)
    v, w = rng.standard_normal(d), 0.01 * rng.standard_normal(d)
    curv, deriv, alpha = rng.random(n) / n, rng.standard_normal(n) / n, rng.standard_normal(n)
    xv, q, grad, minv, z, xt = np.empty(n), np.empty(d), np.empty(d), np.empty(d), np.empty(n), np.empty(d)
    cols = NC.nonempty_columns(problem)
    rows = K.full_rows(problem)
    y, code, s = problem.y, problem.loss_code, problem.s

    def sweep(k):
        return lambda: (xt.fill(0.0), k(indptr, indices, data, y, code, s, w, alpha, False, z, xt, rows))

    pairs = {"certificate_sweep": (sweep(K.certificate_sweep),
                                   sweep(recompiled(K.certificate_sweep, certificate_rows=bare(K.certificate_rows))))}
    if full is not None:
        sweeps = bare_sweeps()
        pairs["hessian_product"] = tuple(
            (lambda k: lambda: k(indptr, indices, data, cols, full, curv, v, xv, q))(k)
            for k in (NC.hessian_product, sweeps["hessian_product"]))
        pairs["jacobi"] = tuple((lambda k: lambda: k(indptr, indices, data, full, deriv, curv, 1e-5, w, grad, minv))(k)
                                for k in (NC.jacobi, sweeps["jacobi"]))
        pairs["numpy gemv (reference)"] = (lambda: full @ v, lambda: full @ v)
    return pairs


def newton_pairs(problem, tol):
    shipped = (newton.newton_cg_direction, newton.certified_jacobi_sweep)
    sweeps = bare_sweeps()
    without = (sweeps["newton_cg_direction"], sweeps["certified_jacobi_sweep"])
    passes = {}

    def run(variant, label):
        def call():
            newton.newton_cg_direction, newton.certified_jacobi_sweep = variant
            try:
                result = cdlab.solve(problem, method="newton", solver="cg", tol=tol, max_passes=3000)
            finally:
                newton.newton_cg_direction, newton.certified_jacobi_sweep = shipped
            passes.setdefault(label, set()).add(float(result.trace["passes"].iloc[-1]))
        return call

    return {"newton cg solve": (run(shipped, "with"), run(without, "without"))}, passes


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="*", default=["dense", "madelon"])
    ap.add_argument("--repeats", type=int, default=9)
    args = ap.parse_args(argv)
    print(f"{'data':<14} {'timed':<26} {'with ms':>9} {'without ms':>11} {'ratio':>6} {'range':>12}")
    with threadpool_limits(1):
        for name in args.data:
            X, y = dense(100_000, 500, 0) if name == "dense" else real(name)
            rows = list(interleaved(kernel_pairs(make_problem(X, y, "logistic", 1.0)), args.repeats).items())
            for factor in (1.0, 0.01):
                problem = make_problem(X, y, "logistic", factor)
                pairs, passes = newton_pairs(problem, 1e-6 * abs(certified_p_star(problem)))
                result = interleaved(pairs, args.repeats)
                rows += [(f"{label} λ={factor:g}/n, passes {sorted(passes['with'])}/{sorted(passes['without'])}",
                          value) for label, value in result.items()]
            for label, (w_ms, wo_ms, ratio, lo, hi) in rows:
                print(f"{name:<14} {label:<26} {w_ms:9.2f} {wo_ms:11.2f} {ratio:6.2f} {lo:5.2f}–{hi:5.2f}")


if __name__ == "__main__":
    main()
