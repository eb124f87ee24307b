"""Newton's squared-loss hand-over from CG to Cholesky (``newton.NewtonState._hands_over``), side by side with
each inner solver alone: whole ``cdlab.solve`` calls to a certified relative gap of 1e-6 (``race.GAP_REL``),
solver="auto" (CG, handing over where its rule says so), "cg" and "cholesky", timed in rotation (each repeat
starts one later), one thread.

    python benchmarks/handover_bench.py [--repeats R]

Per problem: the steps of a CG-alone run (its products, a restart counting one), the hand-over cap
(``newton.cg_handover``: a Cholesky iteration's predicted ns in products), the product auto handed over after ("—":
it did not), the median ms of each call and auto ÷ the faster of the two alone (its range over the repeats); "n/c"
where a call did not certify. The problems: madelon (its CG residual rises and falls before a steep descent), a rank-20
matrix plus noise (a clustered spectrum: the residual oscillates all the way), and dense Gaussian rows whose
column scales span √cond, rotated so that no diagonal preconditioner undoes them (CG slow where cond is large).
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from threadpoolctl import threadpool_limits

from race import GAP_REL, certified_p_star, data_sets, make_problem  # first: it sets numba's thread count
import cdlab
from cdlab.solvers import newton

SOLVERS = ("auto", "cg", "cholesky")


def rotated_rows(cond, lam_factor, n=4000, d=300, seed=1):
    """Dense Gaussian rows, column scales spanning √cond, rotated; rows scaled by their mean norm."""
    rng = np.random.default_rng(seed)
    rotation, _ = np.linalg.qr(rng.standard_normal((d, d)))
    X = rng.standard_normal((n, d)) * np.logspace(0, -np.log10(cond) / 2, d) @ rotation.T
    X /= np.sqrt((X ** 2).sum(axis=1).mean())
    return cdlab.Problem(X, X @ rng.standard_normal(d) + 0.1 * rng.standard_normal(n), loss="squared",
                         lam=lam_factor / n)


def low_rank_rows(lam_factor, n=5000, d=500, rank=20, seed=5):
    """A rank-``rank`` matrix plus Gaussian noise of 0.05; rows scaled by their mean norm."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, rank)) @ rng.standard_normal((rank, d)) + 0.05 * rng.standard_normal((n, d))
    X /= np.sqrt((X ** 2).sum(axis=1).mean())
    return cdlab.Problem(X, X @ rng.standard_normal(d) + 0.1 * rng.standard_normal(n), loss="squared",
                         lam=lam_factor / n)


def problems():
    X, y = data_sets(False)["madelon"]()
    for factor in (1.0, 0.1, 0.01, 0.001):
        yield f"madelon λ={factor:g}/n", make_problem(X, y, "squared", factor)
    for factor in (1.0, 0.01):
        yield f"rank 20 + noise λ={factor:g}/n", low_rank_rows(factor)
    for cond in (1.0, 1e3, 1e8):
        for factor in (0.1, 0.01):
            yield f"rotated cond {cond:g} λ={factor:g}/n", rotated_rows(cond, factor)


def row(label, problem, repeats):
    """One problem's line."""
    tol = GAP_REL * abs(certified_p_star(problem))
    cap = newton.cg_handover(problem)
    seen = []
    original = newton.NewtonState._to_cholesky

    def to_cholesky(state):  # where auto's run hands over
        seen.append(len(state.product_gaps))
        original(state)

    calls = {solver: (lambda solver=solver: cdlab.solve(problem, "newton", solver=solver, tol=tol,
                                                         max_passes=100_000, seed=0))
             for solver in SOLVERS}
    newton.NewtonState._to_cholesky = to_cholesky
    try:
        results = {solver: call() for solver, call in calls.items()}  # compiled, and where auto hands over
    finally:
        newton.NewtonState._to_cholesky = original
    head = f"{label:<30} {results['cg'].trace.steps.iloc[-1]:>8} {cap:>5.1f} {seen[0] if seen else '—':>7}"
    if not all(result.converged for result in results.values()):
        return f"{head} n/c"
    seconds = {solver: [] for solver in SOLVERS}
    for k in range(repeats):
        for solver in SOLVERS[k % 3:] + SOLVERS[:k % 3]:
            start = time.perf_counter()
            calls[solver]()
            seconds[solver].append(time.perf_counter() - start)
    s = {solver: np.array(v) for solver, v in seconds.items()}
    ratios = s["auto"] / np.minimum(s["cg"], s["cholesky"])
    ms = {solver: 1e3 * np.median(v) for solver, v in s.items()}
    return (f"{head} {ms['auto']:>8.2f} {ms['cg']:>8.2f} {ms['cholesky']:>8.2f} {np.median(ratios):>11.2f} "
            f"{ratios.min():>5.2f}–{ratios.max():<5.2f}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    if args.repeats < 1:
        ap.error(f"--repeats must be at least 1, got {args.repeats}")
    print(f"{'problem':<30} {'CG steps':>8} {'cap':>5} {'handed':>7} {'auto ms':>8} {'cg ms':>8} {'chol ms':>8} "
          f"{'auto ÷ best':>11} {'range':>11}")
    with threadpool_limits(1):
        for label, problem in problems():
            if newton.cg_handover(problem):  # else auto does not start on CG: nothing to hand over
                print(row(label, problem, args.repeats), flush=True)


if __name__ == "__main__":
    main()
