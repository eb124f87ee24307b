"""Newton–CG's sweeps over X on one thread and in the n_jobs mode (row blocks, one per thread).

    python benchmarks/newton_threads_bench.py [--repeats 9] [--n-jobs 2] [DATA ...]

DATA: ``dense`` (the race's dense 1e5 × 500 problem), ``text`` (its text-like
problem at 1e7 nonzeros) or a shipped data set (rows scaled by their mean norm,
as in the race). Both variants run in this one process, in interleaved pairs:
the serial kernels (n_jobs = 1) and their parallel forms over ``--n-jobs`` row
blocks. Timed: one Hessian-vector product (``hessian_vector_product``), one gradient-and-
preconditioner sweep (``jacobi_sweep``), the checkpoint's fused sweep
(``certified_jacobi_sweep``), and whole ``cdlab.solve`` calls of Newton's CG path
(logistic, λ = 1/n and 0.01/n, to a certified relative gap of 1e-6, checkpoint
included). JIT compilation happens before the timing. Printed: the median
milliseconds of each, the median of the pairs' ratios (one thread ÷ n_jobs)
and their range, and for the whole calls the passes of each (equal or nearly:
the blocks' sums round otherwise) and the largest relative difference of P.
"""
from __future__ import annotations

import argparse

import numpy as np

from race import certified_p_star, dense, make_problem, real, text_like  # first: it sets numba's thread count
import cdlab
import cdlab.solvers._newton_cg as NC
from cdlab.solvers._kernels import full_rows
from cdlab.solvers._threads import parallel_section, row_blocks
from full_row_prefetch_bench import interleaved


def sweep_pairs(problem, n_jobs):
    n, d = problem.n_samples, problem.n_features
    indptr, indices, data = problem.csr_arrays
    sweep = (indptr, indices, data, NC.nonempty_columns(problem), problem.data.X_dense)
    rng = np.random.default_rng(0)
    v, w = rng.standard_normal(d), 0.01 * rng.standard_normal(d)
    curv, deriv = rng.random(n) / n, rng.standard_normal(n) / n
    xv, q, grad, minv, z, alpha = np.empty(n), np.empty(d), np.empty(d), np.empty(d), np.empty(n), np.empty(n)
    xt, diag = np.zeros(d), np.zeros(d)
    bounds, scratch = row_blocks(indptr, n_jobs), np.zeros((2, n_jobs, d))
    fused = (*problem.csr_arrays, problem.y, problem.loss_code, problem.s, w, False, z, alpha, xt, curv, diag,
             full_rows(problem))
    product, gradient, certified = NC.hessian_vector_product, NC.jacobi_sweep, NC.certified_jacobi_sweep

    def threaded(call):
        def run():
            with parallel_section(n_jobs):
                call()
        return run

    return {
        "hessian_vector_product": (lambda: product(*sweep, curv, v, xv, q, None, None),
                                   threaded(lambda: product(*sweep, curv, v, xv, q, bounds, scratch))),
        "jacobi_sweep": (lambda: gradient(*sweep, deriv, curv, 1e-5, w, grad, minv, None, None),
                         threaded(lambda: gradient(*sweep, deriv, curv, 1e-5, w, grad, minv, bounds, scratch))),
        "certified_jacobi_sweep": (lambda: (xt.fill(0.0), diag.fill(0.0), certified(*fused, None, None)),
                                   threaded(lambda: (xt.fill(0.0), diag.fill(0.0), certified(*fused, bounds, scratch)))),
    }


def solve_pairs(problem, tol, n_jobs):
    seen = {}

    def run(jobs):
        def call():
            result = cdlab.solve(problem, method="newton", solver="cg", tol=tol, max_passes=3000, n_jobs=jobs)
            trace = result.trace
            seen.setdefault(jobs, []).append((float(trace["passes"].iloc[-1]), float(trace["primal"].iloc[-1])))
        return call

    return {"newton cg solve": (run(1), run(n_jobs))}, seen


def speedups(pairs, repeats):
    """``interleaved``'s rows as (ms on one thread, ms in the n_jobs mode, median ratio one ÷ n_jobs, its range)."""
    for what, (one, many, ratio, low, high) in interleaved(pairs, repeats).items():
        yield what, one, many, 1.0 / ratio, 1.0 / high, 1.0 / low


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="*", default=["dense", "text"])
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--n-jobs", type=int, default=2)
    args = ap.parse_args(argv)
    print(f"{'data':<14} {'timed':<28} {'1 thread ms':>11} {f'n_jobs={args.n_jobs} ms':>12} {'ratio':>6} "
          f"{'range':>12}  passes (1 | n_jobs), max |ΔP|/P")
    for name in args.data:
        X, y = dense(100_000, 500, 0) if name == "dense" else text_like(1e7) if name == "text" else real(name)
        problem = make_problem(X, y, "logistic", 1.0)
        for what, one, many, ratio, low, high in speedups(sweep_pairs(problem, args.n_jobs), args.repeats):
            print(f"{name:<14} {what:<28} {one:>11.1f} {many:>12.1f} {ratio:>6.2f} {low:>5.2f}–{high:<5.2f}")
        for factor in (1.0, 0.01):
            problem = make_problem(X, y, "logistic", factor)
            tol = 1e-6 * abs(certified_p_star(problem))
            pairs, seen = solve_pairs(problem, tol, args.n_jobs)
            for what, one, many, ratio, low, high in speedups(pairs, args.repeats):
                passes = " | ".join(",".join(f"{p:g}" for p in sorted({s[0] for s in seen[j]}))
                                    for j in (1, args.n_jobs))
                primal = np.array([s[1] for j in seen for s in seen[j]])
                spread = np.ptp(primal) / abs(primal.mean())
                print(f"{name:<14} {what + f' λ={factor:g}/n':<28} {one:>11.1f} {many:>12.1f} {ratio:>6.2f} "
                      f"{low:>5.2f}–{high:<5.2f}  {passes}, {spread:.1e}")


if __name__ == "__main__":
    main()
