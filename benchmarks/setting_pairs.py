"""Whole ``cdlab.solve`` calls under cdlab's shipped value of one setting and under another, for the A/B
benchmarks (forcing_bench.py, hessian_f32_bench.py, box_newton_bench.py, readmit_bench.py, face_cr_bench.py,
cholesky_start_bench.py, sampled_hessian_bench.py, line_weights_bench.py, logistic_tails_bench.py): the calls, and
the line each prints after ``full_row_prefetch_bench.interleaved`` has timed them in pairs; ``print_pairs``, both over a list of the
race's problems, and ``attribute_main``, that over one module attribute; ``hinge_main``, the whole program of the
benchmarks of SDCA with shrinking on the hinge loss, and ``switch_main``, the same over one module attribute."""
from __future__ import annotations

import argparse

import numpy as np

import cdlab


def setting_pairs(put, shipped, other, labels, problem, seeds=None, **solve_kwargs):
    """({"solve": (shipped call, other call)}, seen): each call runs ``cdlab.solve(problem, **solve_kwargs)``
    (once for each of ``seeds``, as its seed, where given) after ``put(value)`` (``put(shipped)`` again after
    it), asserts that each run converged and appends its (passes, certified P) to seen[label]; ``labels`` name
    the shipped value and the other."""
    seen = {}

    def run(label, value):
        def call():
            put(value)
            try:
                results = [cdlab.solve(problem, **solve_kwargs, **({} if seed is None else {"seed": seed}))
                           for seed in ([None] if seeds is None else seeds)]
            finally:
                put(shipped)
            for result in results:
                trace = result.trace
                assert result.converged
                seen.setdefault(label, []).append((float(trace["passes"].iloc[-1]), float(trace["primal"].iloc[-1])))
        return call

    return {"solve": (run(labels[0], shipped), run(labels[1], other))}, seen


def pair_header(width, labels):
    """The header of ``pair_line``'s columns."""
    first, second = labels
    return (f"{'problem':<{width}} {first + ' ms':>9} {second + ' ms':>9} {'ratio':>6} {'range':>11}  passes {first} | "
            f"{second}, max |ΔP|/P")


def pair_line(label, width, timing, seen, labels):
    """One problem's line: label, median ms of each, median ratio (other ÷ shipped) and its range, the
    passes of each (their median and range where the runs differ), and the largest relative difference of
    the certified P between all the runs."""
    shipped_ms, other_ms, ratio, low, high = timing
    passes = " | ".join(_passes([s[0] for s in seen[k]]) for k in labels)
    primal = np.array([s[1] for k in labels for s in seen[k]])
    return (f"{label:<{width}} {shipped_ms:>9.1f} {other_ms:>9.1f} {ratio:>6.2f} {low:>5.2f}–{high:<5.2f}  {passes}, "
            f"{np.ptp(primal) / abs(primal.mean()):.1e}")


def _passes(values):
    distinct = sorted(set(values))
    if len(distinct) == 1:
        return f"{distinct[0]:.0f}"
    return f"{np.median(values):.0f} ({distinct[0]:.0f}–{distinct[-1]:.0f})"


def switch_main(argv, description, module, name, other, labels, default, repeats, seeds):
    """``hinge_main`` over one attribute of a module: ``module.name`` as shipped against ``other``."""
    hinge_main(argv, description, lambda value: setattr(module, name, value), (getattr(module, name), other), labels,
               default, repeats, seeds)


def attribute_main(argv, description, module, name, other, labels, default, repeats=7, collect=False, **solve_kwargs):
    """Parse ``argv`` (problems NAME:LOSS:FACTOR, --repeats), then ``print_pairs`` of ``cdlab.solve(...,
    **solve_kwargs)`` under ``module.name`` as shipped and under ``other``, BLAS on one thread (``collect``: as
    ``print_pairs``'s)."""
    from threadpoolctl import threadpool_limits

    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("problems", nargs="*", default=list(default), metavar="NAME:LOSS:FACTOR")
    ap.add_argument("--repeats", type=int, default=repeats)
    args = ap.parse_args(argv)
    with threadpool_limits(1):
        print_pairs(args.problems, lambda value: setattr(module, name, value), (getattr(module, name), other), labels,
                    args.repeats, collect=collect, **solve_kwargs)


def hinge_main(argv, description, put, values, labels, default, repeats, seeds):
    """Parse ``argv`` (problems NAME:FACTOR, --repeats, --seeds), then time, for each problem of benchmarks/race.py
    (data scaled by the mean example norm, hinge loss, λ = FACTOR/n), SDCA with shrinking (the race's hinge method)
    to a certified relative gap of 1e-6 (P* from ``race.certified_p_star``) under ``put(values[0])`` (shipped) and
    ``put(values[1])``: whole ``cdlab.solve`` calls, certificate included, in interleaved pairs in this one process
    (``full_row_prefetch_bench.interleaved``, which compiles both before the timing), each call running seeds
    0 … SEEDS − 1 one after the other; and print ``pair_line``: median milliseconds of each, the median of the pairs'
    ratios (values[1]'s ÷ the shipped one's: > 1, the shipped value faster) and their range, the passes of each
    (median and range over the runs), and the largest relative difference of the certified P between them."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("problems", nargs="*", default=list(default), metavar="NAME:FACTOR",
                    help="a data set of benchmarks/race.py and its λ·n, e.g. phishing:0.01")
    ap.add_argument("--repeats", type=int, default=repeats)
    ap.add_argument("--seeds", type=int, default=seeds)
    args = ap.parse_args(argv)
    if args.seeds < 1:
        ap.error(f"--seeds must be at least 1, got {args.seeds}")
    print_pairs([f"{spec.rsplit(':', 1)[0]}:hinge:{spec.rsplit(':', 1)[1]}" for spec in args.problems], put, values,
                labels, args.repeats, seeds=range(args.seeds), method="sdca", sampling="permutation", shrinking=True)


def print_pairs(specs, put, values, labels, repeats, seeds=None, collect=False, **solve_kwargs):
    """For each NAME:LOSS:FACTOR of ``specs`` (a data set of benchmarks/race.py, rows scaled by the mean example norm,
    λ = FACTOR/n): whole calls ``cdlab.solve(problem, tol=1e-6·|P*|, max_passes=5000, **solve_kwargs)`` (P* from
    ``race.certified_p_star``; once for each of ``seeds`` where given) under ``put(values[0])`` and
    ``put(values[1])``, timed in interleaved pairs (``full_row_prefetch_bench.interleaved``, which compiles both
    before the timing; ``collect``: ``gc.collect()`` before each timed call, as benchmarks/race.py does), and
    ``pair_line`` printed under ``pair_header``."""
    from full_row_prefetch_bench import interleaved
    from race import certified_p_star, data_sets, make_problem

    sets = data_sets(False)
    print(pair_header(30, labels))
    for spec in specs:
        name, loss, factor = spec.rsplit(":", 2)
        X, y = sets[name]()
        problem = make_problem(X, y, loss, float(factor))
        tol = 1e-6 * abs(certified_p_star(problem))
        timed, seen = setting_pairs(put, *values, labels, problem, seeds=seeds, tol=tol, max_passes=5000,
                                    **solve_kwargs)
        for timing in interleaved(timed, repeats, collect).values():
            print(pair_line(f"{name} {loss} λ={float(factor):g}/n", 30, timing, seen, labels), flush=True)
