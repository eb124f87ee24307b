"""Checkpoints that leave out the rows provably beyond the margin (``_margin_bounds.MARGIN_BOUNDS``) against
checkpoints that read every row: whole ``cdlab.solve(method="auto")`` calls (SDCA with shrinking at λ = 1/n, Newton
at 0.01/n on most of these), whose runs are the same bit for bit either way.

    python benchmarks/margin_bounds_bench.py [NAME:LOSS:FACTOR ...] [--repeats 7]

"bounds" as shipped, "every row" with MARGIN_BOUNDS = False; the ratio every row ÷ bounds (> 1: the bounds faster).
Each call after ``gc.collect()``, as benchmarks/race.py times them. The problems, timing and columns:
``setting_pairs.print_pairs``.
"""
from __future__ import annotations

import race  # noqa: F401  first: it sets numba's thread count
from cdlab.solvers import _margin_bounds
from setting_pairs import attribute_main

DEFAULT = (*(f"{name}:hinge:{factor}" for factor in ("1", "0.01")
             for name in ("a9a", "w8a", "ijcnn1", "reuters_moneyfx", "mushrooms", "phishing", "heart_scale",
                          "colon-cancer", "madelon")),
           "text 1e7 nnz:hinge:1", "phishing:smoothed_hinge:1", "a9a:smoothed_hinge:0.01")


def main(argv=None):
    attribute_main(argv, __doc__.splitlines()[0], _margin_bounds, "MARGIN_BOUNDS", False, ("bounds", "every row"),
                   DEFAULT, collect=True, method="auto")


if __name__ == "__main__":
    main()
