"""Passes and seconds to a certified gap, for the two schedules session 12 changed (issue 16).

    python benchmarks/solver_passes.py [--data a9a w8a ...] [--lam-factors 1 0.01] [--repeats 3]

Per shipped data set (rows scaled by the mean norm, the race's protocol) and λ = F/n, one whole
``cdlab.solve`` call each, to a certified gap ≤ 1e-6·|P*| (P* from ``cdlab.reference_optimum``,
cached), seed 0, one thread:

* hinge, SDCA with shrinking: the left-out examples brought back by the checkpoints' margins
  (``_shrinking.READMIT``, the default) and the active set restored by the ratio rule alone (READMIT off);
* logistic and squared, Newton with the CG inner solver: passes, Newton iterations (steps) and seconds.
  Its preconditioner has no switch: to compare with plain CG, run this file under an older tree,
  ``git worktree add /tmp/plain 6f6b6c7`` and ``PYTHONPATH=/tmp/plain python benchmarks/solver_passes.py``.

Passes are deterministic; seconds are the median of ``--repeats`` with the spread (max − min)/median,
timed as ``race.timed`` times the race, after one untimed call (JIT compilation outside the timing).
"""
from __future__ import annotations

import argparse

import cdlab
from cdlab.solvers import _shrinking
from race import GAP_REL, SHIPPED, certified_p_star, make_problem, real, timed


def measured(call, repeats):
    """(result, median seconds, spread) of ``repeats`` timed calls after one that compiles what the run reaches."""
    call()
    seconds, spread, result, _ = timed(call, repeats)
    return result, seconds, spread


def row(label, result, seconds, spread):
    last = result.trace.iloc[-1]
    return (f"  {label:34s} {last.passes:8.1f} passes {int(last.steps):>10d} steps {seconds * 1e3:9.1f} ms "
            f"(spread {spread:.0%})  {result.status}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="*", default=list(SHIPPED))
    ap.add_argument("--lam-factors", nargs="*", type=float, default=[1.0, 0.01])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    default_readmit = _shrinking.READMIT
    for name in args.data:
        X, y = real(name)
        for factor in args.lam_factors:
            for loss in ("hinge", "logistic", "squared"):
                problem = make_problem(X, y, loss, factor)
                eps = GAP_REL * abs(certified_p_star(problem))
                print(f"{name} {loss} λ={factor:g}/n (tol {eps:.3g})", flush=True)
                if loss == "hinge":
                    for readmit, label in ((default_readmit, "sdca shrinking, checkpoints readmit"),
                                           (False, "sdca shrinking, ratio rule alone")):
                        _shrinking.READMIT = readmit
                        out = measured(lambda: cdlab.solve(problem, "sdca", sampling="permutation", shrinking=True,
                                                           tol=eps, max_passes=5000, seed=0), args.repeats)
                        print(row(label, *out), flush=True)
                    _shrinking.READMIT = default_readmit
                else:
                    out = measured(lambda: cdlab.solve(problem, "newton", solver="cg", tol=eps, max_passes=5000),
                                   args.repeats)
                    print(row("newton, CG inner solver", *out), flush=True)


if __name__ == "__main__":
    main()
