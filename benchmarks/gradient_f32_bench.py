"""The CG path's gradient sweeps over the products' float32 rows against X's float64 ones
(``newton.GRADIENT_ON_PRODUCT_ROWS``).

    python benchmarks/gradient_f32_bench.py [--repeats 7] [--n-jobs 1 2]

The race's dense 1e5 × 500 problem (logistic, λ = 1/n and 0.01/n, Newton–CG): whole ``cdlab.solve`` calls to a
certified relative gap of 1e-6, certificate included, in interleaved pairs in this one process: "f32" is cdlab as
shipped (a step that starts from no checkpoint sums ∇P and diag(H) over ``Data.X_dense_f32``, the rows its
Hessian-vector products read), "f64" sums them over ``Data.X_dense``. The certificates read the float64 rows in
both. JIT compilation and the float32 copy (``Problem`` keeps it) happen before the timing. Printed: median
milliseconds of each, the median of the pairs' ratios (f64 ÷ f32) and their range, the passes of each, and the
largest relative difference of the certified P between them.
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
    args = ap.parse_args(argv)
    X, y = dense(100_000, 500, 0)
    labels = ("f32", "f64")
    print(pair_header(43, labels))
    put = lambda value: setattr(newton, "GRADIENT_ON_PRODUCT_ROWS", value)  # noqa: E731
    for factor in (1.0, 0.01):
        problem = make_problem(X, y, "logistic", factor)
        assert newton.product_rows(problem) is problem.data.X_dense_f32
        tol = 1e-6 * abs(certified_p_star(problem))
        for n_jobs in args.n_jobs:
            timed, seen = setting_pairs(put, True, False, labels, problem, method="newton", solver="cg", tol=tol,
                                        max_passes=3000, n_jobs=n_jobs)
            for timing in interleaved(timed, args.repeats).values():
                print(pair_line(f"dense 1e5×500 logistic λ={factor:g}/n n_jobs={n_jobs}", 43, timing, seen, labels),
                      flush=True)


if __name__ == "__main__":
    main()
