"""Projected Newton on a singular free face (``_box_newton``) against SDCA with shrinking left to itself there.

    python benchmarks/box_newton_bench.py [NAME:FACTOR ...] [--repeats 5] [--seeds 3]

Each problem of benchmarks/race.py (data scaled by the mean example norm, hinge loss, λ = FACTOR/n) is solved
by SDCA with shrinking (the race's hinge method) to a certified relative gap of 1e-6 (P* from
``race.certified_p_star``): whole ``cdlab.solve`` calls, certificate included, in interleaved pairs in this
one process, "newton" as shipped, "without" with ``_box_newton.BOX_NEWTON_MAX_EXAMPLES`` = 0 (a singular face
is not polished). Each timed call runs the seeds 0 … SEEDS − 1 one after the
other: a polish changes the random path that follows, so one seed's ratio is mostly that path's luck. JIT
compilation happens before the timing. Printed: median milliseconds of each call, the median of the pairs'
ratios (without ÷ newton: > 1, newton faster) and their range, the passes of each (median and range over
the runs), and the largest relative difference of the certified P between them.
"""
from __future__ import annotations

import argparse

from race import certified_p_star, data_sets, make_problem  # first: it sets numba's thread count
from cdlab.solvers import _box_newton
from full_row_prefetch_bench import interleaved
from setting_pairs import pair_header, pair_line, setting_pairs

DEFAULT = ("heart_scale:0.01", "phishing:0.01", "a9a:0.01", "ijcnn1:0.01", "mushrooms:0.01", "madelon:0.01",
           "colon-cancer:0.01", "heart_scale:1", "phishing:1", "a9a:1")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("problems", nargs="*", default=list(DEFAULT), metavar="NAME:FACTOR",
                    help="a data set of benchmarks/race.py and its λ·n, e.g. phishing:0.01")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args(argv)
    sets = data_sets(False)
    labels = ("newton", "without")
    if args.seeds < 1:
        ap.error(f"--seeds must be at least 1, got {args.seeds}")
    print(pair_header(30, labels))
    put = lambda value: setattr(_box_newton, "BOX_NEWTON_MAX_EXAMPLES", value)  # noqa: E731
    for spec in args.problems:
        name, factor = spec.rsplit(":", 1)
        X, y = sets[name]()
        problem = make_problem(X, y, "hinge", float(factor))
        tol = 1e-6 * abs(certified_p_star(problem))
        timed, seen = setting_pairs(put, _box_newton.BOX_NEWTON_MAX_EXAMPLES, 0, labels, problem,
                                    seeds=range(args.seeds), method="sdca", sampling="permutation", shrinking=True,
                                    tol=tol, max_passes=5000)
        for timing in interleaved(timed, args.repeats).values():
            print(pair_line(f"{name} hinge λ={float(factor):g}/n", 30, timing, seen, labels), flush=True)


if __name__ == "__main__":
    main()
