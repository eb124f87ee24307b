"""Newton on the hinge loss (smoothing with continuation, ``cdlab.solvers._hinge_newton``) beside SDCA with
shrinking, and the smoothed hinge's exact line search beside backtracking.

    python benchmarks/hinge_newton_bench.py [NAME:FACTOR ...] [--repeats 5]
    python benchmarks/hinge_newton_bench.py --line-search [NAME:FACTOR ...] [--s 0.01] [--repeats 3]

For each problem of benchmarks/race.py (rows scaled by the mean example norm, λ = FACTOR/n): whole ``cdlab.solve``
calls to a certified relative gap of 1e-6 (P* from ``race.certified_p_star``), certificate included, in interleaved
pairs in this one process (``full_row_prefetch_bench.interleaved``, which compiles both before the timing), one
thread. Prints ``setting_pairs.pair_line``: median ms of each, the median of the pairs' ratios (the second ÷ the
first: > 1, the first faster) and their range, the passes of each and the largest relative difference of the
certified P. The default: hinge, "sdca (permutation, shrinking)" then "newton". With ``--line-search``: newton on
the smoothed hinge with s = S, the exact search (``newton.EXACT_LINE_SEARCH``, as shipped) then backtracking.
"""
from __future__ import annotations

import argparse

import race  # noqa: F401  first: it sets numba's thread count
import cdlab
from cdlab.solvers import newton
from setting_pairs import pair_header, pair_line, setting_pairs

DEFAULT = ("ijcnn1:0.01", "a9a:0.01", "phishing:0.01", "heart_scale:0.01", "w8a:0.01", "mushrooms:0.01",
           "madelon:0.01", "a9a:1", "ijcnn1:1", "phishing:1")


def method_pairs(problem, tol):
    """({"solve": (SDCA's call, Newton's call)}, seen) in ``setting_pairs``' form."""
    seen = {}

    def run(label, **kwargs):
        def call():
            result = cdlab.solve(problem, tol=tol, max_passes=5000, seed=0, **kwargs)
            assert result.converged
            seen.setdefault(label, []).append((float(result.trace["passes"].iloc[-1]),
                                               float(result.trace["primal"].iloc[-1])))
        return call

    return {"solve": (run("sdca", method="sdca", sampling="permutation", shrinking=True),
                      run("newton", method="newton"))}, seen


def main(argv=None):
    from threadpoolctl import threadpool_limits
    from full_row_prefetch_bench import interleaved

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("problems", nargs="*", default=list(DEFAULT), metavar="NAME:FACTOR")
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--line-search", action="store_true")
    ap.add_argument("--s", type=float, default=0.01)
    args = ap.parse_args(argv)
    repeats = args.repeats or (3 if args.line_search else 5)
    sets = race.data_sets(False)
    labels = ("exact", "backtracking") if args.line_search else ("sdca", "newton")
    print(pair_header(30, labels))
    with threadpool_limits(1):
        for spec in args.problems:
            name, factor = spec.rsplit(":", 1)
            X, y = sets[name]()
            if args.line_search:
                problem = cdlab.Problem(X, y, loss="smoothed_hinge", lam=float(factor) / X.shape[0], s=args.s)
            else:
                problem = race.make_problem(X, y, "hinge", float(factor))
            tol = 1e-6 * abs(race.certified_p_star(problem))
            if args.line_search:
                timed, seen = setting_pairs(lambda value: setattr(newton, "EXACT_LINE_SEARCH", value), True, False,
                                            labels, problem, method="newton", tol=tol, max_passes=5000)
            else:
                timed, seen = method_pairs(problem, tol)
            loss = f"smoothed_hinge s={args.s:g}" if args.line_search else "hinge"
            for timing in interleaved(timed, repeats).values():
                print(pair_line(f"{name} {loss} λ={float(factor):g}/n", 30, timing, seen, labels), flush=True)


if __name__ == "__main__":
    main()
