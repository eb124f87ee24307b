"""Newton's start at w = 0 from data facts (``newton.SUMS_AT_ZERO``) against a read of X for the same sums.

    python benchmarks/sums_at_zero_bench.py [NAME:LOSS:FACTOR ...] [--repeats 5]

Each problem of benchmarks/race.py (λ = FACTOR/n) is solved by Newton (auto's inner solver: the CG path, or the
Cholesky path that samples H) to a certified relative gap of 1e-6: whole ``cdlab.solve`` calls, certificate
included, in interleaved pairs in this one process, "facts" as shipped (the start's checkpoint and the first
step's ∇P and diag(H) from ``Data.xty`` and the column norms: ``NewtonState._sums_at_zero``), "sweep" with
SUMS_AT_ZERO off (the same sums from one read of X). Xᵀy is a fact of the data, computed once for a Data (for
the logistic loss by the cost model that picks the inner solver, ``Data.xty_norm_sq``; else by the first start
that asks, which counts that read): the timed calls are repeats on one Problem, which has it after the first, so
this measures a run on data whose Xᵀy is known (a λ path, the race's repeats), not a first call. Printed: median
milliseconds of each, the median of the pairs' ratios (sweep ÷ facts: > 1, the facts faster) and their range,
the passes of each, and the largest relative difference of the certified P.
"""
from __future__ import annotations

import argparse

import race  # noqa: F401  first: it sets numba's thread count
from cdlab.solvers import newton
from setting_pairs import print_pairs

DEFAULT = ("dense 1e5×500:logistic:1", "dense 1e5×500:logistic:0.01", "dense 1e5×500:squared:0.01",
           "ijcnn1:logistic:1", "ijcnn1:logistic:0.01", "mushrooms:logistic:0.01", "a9a:logistic:0.01",
           "w8a:logistic:1", "reuters_moneyfx:logistic:0.01")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("problems", nargs="*", default=list(DEFAULT), metavar="NAME:LOSS:FACTOR")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    print_pairs(args.problems, lambda value: setattr(newton, "SUMS_AT_ZERO", value), (True, False),
                ("facts", "sweep"), args.repeats, method="newton")


if __name__ == "__main__":
    main()
