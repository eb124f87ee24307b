"""Newton's start checkpoint with its sums taken from its inner solver's first read of X (on the Cholesky path
``newton.CHOLESKY_START_FUSED``, on the squared loss's CG ``newton.CG_START_FUSED``, as shipped), against the
driver's own certificate sweep there.

    python benchmarks/cholesky_start_bench.py [NAME:LOSS:FACTOR ...] [--repeats 7] [--solver cholesky|cg]

For each problem of benchmarks/race.py (data scaled by the mean example norm, λ = FACTOR/n), ``newton`` with
that solver (default "cholesky") to a certified relative gap of 1e-6 (P* from ``race.certified_p_star``): whole
``cdlab.solve`` calls, certificate included, in interleaved pairs in this one process
(``full_row_prefetch_bench.interleaved``, which compiles both before the timing), one thread. Prints
``setting_pairs.pair_line``: median ms of each, the median of the pairs' ratios (sweep ÷ fused: > 1, the fused
start faster) and their range, the passes of each and the largest relative difference of the certified P.
"""
from __future__ import annotations

import argparse

import race  # noqa: F401  first: it sets numba's thread count
from cdlab.solvers import newton
from setting_pairs import attribute_main

# the race's problems whose fastest fixed method is Newton on its Cholesky path (squared loss, few features), and
# logistic ones on too few rows to sample H (``newton.sample_size``: a run that samples takes the Jacobi sweep there)
CHOLESKY_DEFAULT = ("ijcnn1:squared:1", "ijcnn1:squared:0.01", "a9a:squared:1", "w8a:squared:1",
                    "phishing:squared:0.01", "mushrooms:squared:1", "madelon:logistic:0.01",
                    "heart_scale:logistic:0.01")
# the race's squared-loss problems whose CG runs on the normal equations (not the dual system: d < 2n)
CG_DEFAULT = ("dense 1e5×500:squared:1", "dense 1e5×500:squared:0.01", "text 1e7 nnz:squared:0.01",
              "reuters_moneyfx:squared:1")
# each solver's switch and default problems
SWITCHES = {"cholesky": ("CHOLESKY_START_FUSED", CHOLESKY_DEFAULT), "cg": ("CG_START_FUSED", CG_DEFAULT)}
LABELS = ("fused", "sweep")


def main(argv=None):
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--solver", choices=sorted(SWITCHES), default="cholesky")
    known, rest = ap.parse_known_args(argv)
    switch, default = SWITCHES[known.solver]
    attribute_main(rest, __doc__.splitlines()[0], newton, switch, False, LABELS, default, method="newton",
                   solver=known.solver)


if __name__ == "__main__":
    main()
