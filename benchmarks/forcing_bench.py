"""Newton–CG's forcing term: Eisenstat & Walker's choice 2 against the √ rule (``newton.FORCING_GAMMA``).

    python benchmarks/forcing_bench.py [NAME:FACTOR ...] [--loss logistic] [--repeats 5] [--n-jobs 1]

Each problem of benchmarks/race.py (data scaled by the mean example norm, λ = FACTOR/n) is solved by
Newton's CG path to a certified relative gap of 1e-6 (P* from ``race.certified_p_star``): whole
``cdlab.solve`` calls, certificate included, in interleaved pairs in this one process, "E&W" with the loss's
shipped γ, "sqrt" with γ = 0 (min(½, √‖∇P‖) at every iteration). JIT compilation happens before the timing.
Printed: median milliseconds of each, the median of the pairs' ratios (sqrt ÷ E&W: > 1, E&W faster) and
their range, the passes of each (equal at every repeat: the runs are deterministic), and the largest
relative difference of the certified P between them.
"""
from __future__ import annotations

import argparse

from race import certified_p_star, data_sets, make_problem  # first: it sets numba's thread count
import cdlab.solvers.newton as newton
from full_row_prefetch_bench import interleaved
from setting_pairs import pair_header, pair_line, setting_pairs

DEFAULT = ("reuters_moneyfx:0.01", "reuters_moneyfx:1", "rcv1_small:0.01", "rcv1_small:1", "w8a:1",
           "madelon:0.01", "madelon:1", "colon-cancer:0.01", "a9a:1")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("problems", nargs="*", default=list(DEFAULT), metavar="NAME:FACTOR",
                    help="a data set of benchmarks/race.py and its λ·n, e.g. reuters_moneyfx:0.01")
    ap.add_argument("--loss", default="logistic", choices=sorted(newton.SMOOTH_LOSSES - {"squared"}))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--n-jobs", type=int, default=1)
    args = ap.parse_args(argv)
    if not newton.FORCING_GAMMA.get(args.loss):
        print(f"note: the {args.loss} loss ships the √ rule (no γ): both columns run it")
    sets = data_sets(False)
    labels = ("E&W", "sqrt")
    print(pair_header(36, labels))
    put = lambda gamma: newton.FORCING_GAMMA.__setitem__(args.loss, gamma)  # noqa: E731
    for spec in args.problems:
        name, factor = spec.rsplit(":", 1)
        X, y = sets[name]()
        problem = make_problem(X, y, args.loss, float(factor))
        tol = 1e-6 * abs(certified_p_star(problem))
        timed, seen = setting_pairs(put, newton.FORCING_GAMMA.get(args.loss, 0.0), 0.0, labels, problem,
                                    method="newton", solver="cg", tol=tol, max_passes=5000, n_jobs=args.n_jobs)
        for timing in interleaved(timed, args.repeats).values():
            print(pair_line(f"{name} {args.loss} λ={float(factor):g}/n", 36, timing, seen, labels), flush=True)


if __name__ == "__main__":
    main()
