"""The CG path's Hessian-vector products over float32 rows against float64 ones (``newton.product_rows``).

    python benchmarks/hessian_f32_bench.py [--repeats 7] [--n-jobs 1 2] [--losses logistic squared]

The race's dense 1e5 × 500 problem (λ = 1/n and 0.01/n), logistic (Newton–CG) and squared (CG on the normal
equations, refined on float64 rows where its solution does not certify): whole
``cdlab.solve`` calls of Newton's CG path to a certified relative gap of 1e-6,
certificate included, in interleaved pairs in this one process: "f64" reads X's
float64 dense rows in every product (``newton.product_rows`` replaced by
``Data.X_dense``), "f32" is cdlab as shipped (``Data.X_dense_f32``, built
before the timing as ``Problem`` keeps it). JIT compilation happens before the
timing. Printed: median milliseconds of each, the median of the pairs' ratios
(f64 ÷ f32) and their range, the passes of each, and the largest relative
difference of the certified P between them.
"""
from __future__ import annotations

import argparse

from race import certified_p_star, dense, make_problem  # first: it sets numba's thread count
import cdlab.solvers.newton as newton
from full_row_prefetch_bench import interleaved
from setting_pairs import pair_header, pair_line, setting_pairs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--n-jobs", type=int, nargs="*", default=[1, 2])
    ap.add_argument("--losses", nargs="*", default=["logistic", "squared"], choices=["logistic", "squared"])
    args = ap.parse_args(argv)
    X, y = dense(100_000, 500, 0)
    labels = ("f32", "f64")
    print(pair_header(43, labels))
    put = lambda rows: setattr(newton, "product_rows", rows)  # noqa: E731
    for loss in args.losses:
        for factor in (1.0, 0.01):
            problem = make_problem(X, y, loss, factor)
            assert newton.product_rows(problem) is problem.data.X_dense_f32
            tol = 1e-6 * abs(certified_p_star(problem))
            for n_jobs in args.n_jobs:
                timed, seen = setting_pairs(put, newton.product_rows, lambda p: p.data.X_dense, labels, problem,
                                            method="newton", solver="cg", tol=tol, max_passes=3000, n_jobs=n_jobs)
                for timing in interleaved(timed, args.repeats).values():
                    print(pair_line(f"dense 1e5×500 {loss} λ={factor:g}/n n_jobs={n_jobs}", 43, timing, seen,
                                    labels), flush=True)


if __name__ == "__main__":
    main()
