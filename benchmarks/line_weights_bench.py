"""Newton's line search writing the next iteration's loss weights from its accepted trial's exps
(``newton.LINE_SEARCH_WEIGHTS``, as shipped), against ``loss_weights`` recomputed at the start of each iteration.

    python benchmarks/line_weights_bench.py [NAME:LOSS:FACTOR ...] [--repeats 7]

For each problem of benchmarks/race.py (data scaled by the mean example norm, λ = FACTOR/n), ``newton`` (its inner
solver as "auto" picks it) to a certified relative gap of 1e-6 (P* from ``race.certified_p_star``): whole
``cdlab.solve`` calls, certificate included, in interleaved pairs in this one process
(``full_row_prefetch_bench.interleaved``, which compiles both before the timing), one thread. Prints
``setting_pairs.pair_line``: median ms of each, the median of the pairs' ratios (recomputed ÷ written: > 1, the
shipped rule faster) and their range, the passes of each and the largest relative difference of the certified P.
"""
from __future__ import annotations

import race  # noqa: F401  first: it sets numba's thread count
from cdlab.solvers import newton
from setting_pairs import attribute_main

# the race's logistic problems whose fastest fixed method is Newton (both inner solvers)
DEFAULT = ("ijcnn1:logistic:1", "ijcnn1:logistic:0.01", "a9a:logistic:1", "a9a:logistic:0.01", "w8a:logistic:1",
           "w8a:logistic:0.01", "phishing:logistic:0.01", "mushrooms:logistic:0.01", "madelon:logistic:0.01",
           "reuters_moneyfx:logistic:0.01")
LABELS = ("written", "recomputed")


def main(argv=None):
    attribute_main(argv, __doc__.splitlines()[0], newton, "LINE_SEARCH_WEIGHTS", False, LABELS, DEFAULT,
                   method="newton")


if __name__ == "__main__":
    main()
