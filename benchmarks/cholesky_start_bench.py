"""Newton's Cholesky path with its start checkpoint's sums taken from the first iteration's read of X
(``newton.CHOLESKY_START_FUSED``, as shipped), against the driver's own certificate sweep there.

    python benchmarks/cholesky_start_bench.py [NAME:LOSS:FACTOR ...] [--repeats 7]

For each problem of benchmarks/race.py (data scaled by the mean example norm, λ = FACTOR/n), ``newton`` with
solver="cholesky" to a certified relative gap of 1e-6 (P* from ``race.certified_p_star``): whole ``cdlab.solve``
calls, certificate included, in interleaved pairs in this one process (``full_row_prefetch_bench.interleaved``,
which compiles both before the timing), one thread. Prints ``setting_pairs.pair_line``: median ms of each, the
median of the pairs' ratios (sweep ÷ fused: > 1, the fused start faster) and their range, the passes of each and
the largest relative difference of the certified P.
"""
from __future__ import annotations

import race  # noqa: F401  first: it sets numba's thread count
from cdlab.solvers import newton
from setting_pairs import attribute_main

# the race's problems whose fastest fixed method is Newton on its Cholesky path (squared loss, few features), and
# logistic ones on too few rows to sample H (``newton.sample_size``: a run that samples takes the Jacobi sweep there)
DEFAULT = ("ijcnn1:squared:1", "ijcnn1:squared:0.01", "a9a:squared:1", "w8a:squared:1", "phishing:squared:0.01",
           "mushrooms:squared:1", "madelon:logistic:0.01", "heart_scale:logistic:0.01")
LABELS = ("fused", "sweep")


def main(argv=None):
    attribute_main(argv, __doc__.splitlines()[0], newton, "CHOLESKY_START_FUSED", False, LABELS, DEFAULT,
                   method="newton", solver="cholesky")


if __name__ == "__main__":
    main()
