"""Newton's Cholesky path with a sampled Hessian on the steps that cannot end the run (``_sampled_hessian``, as
shipped) against the exact H on every step (``newton.sample_size`` set to 0 rows).

    python benchmarks/sampled_hessian_bench.py [NAME:LOSS:FACTOR ...] [--repeats 7] [--solver cholesky]

For each problem of benchmarks/race.py (data scaled by the mean example norm, λ = FACTOR/n), ``newton`` (the inner
solver ``--solver``; "auto": as shipped) to a certified relative gap of 1e-6 (P* from ``race.certified_p_star``):
whole ``cdlab.solve`` calls, certificate included, in interleaved pairs in this one process
(``full_row_prefetch_bench.interleaved``, which compiles both before the timing), one thread, each call running
seeds 0 … SEEDS − 1 one after the other (the seed draws the sampled rows). Prints
``setting_pairs.pair_line``: median ms of each, the median of the pairs' ratios (exact ÷ sampled: > 1, sampling
faster) and their range, the passes of each and the largest relative difference of the certified P.
"""
from __future__ import annotations

import argparse

from threadpoolctl import threadpool_limits

import race  # noqa: F401  first: it sets numba's thread count
from cdlab.solvers import newton
from setting_pairs import print_pairs

# the race's logistic problems whose Cholesky path runs several iterations on n ≥ 32·d rows (so that it samples)
DEFAULT = ("ijcnn1:logistic:1", "ijcnn1:logistic:0.01", "phishing:logistic:1", "phishing:logistic:0.01",
           "a9a:logistic:1", "a9a:logistic:0.01", "mushrooms:logistic:1", "mushrooms:logistic:0.01")
LABELS = ("sampled", "exact")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("problems", nargs="*", default=list(DEFAULT), metavar="NAME:LOSS:FACTOR")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--solver", default="cholesky", choices=newton.SOLVERS)
    ap.add_argument("--seeds", type=int, default=1, help="each call runs seeds 0 … SEEDS − 1 (the rows sampled)")
    args = ap.parse_args(argv)
    if args.seeds < 1:
        ap.error(f"--seeds must be at least 1, got {args.seeds}")
    with threadpool_limits(1):
        print_pairs(args.problems, lambda value: setattr(newton, "sample_size", value),
                    (newton.sample_size, lambda problem: 0), LABELS, args.repeats, seeds=range(args.seeds),
                    method="newton", solver=args.solver)


if __name__ == "__main__":
    main()
